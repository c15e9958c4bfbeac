-- A real edit end to end with the graph_editor functions: bypass a
-- subgraph and reroute a tensor in a corpus model, save, reload, and find
-- the graph valid and wired as asked.
local tap = require "tap"
local corpus = tap.corpus()
if not corpus then tap.skip_all("corpus not found (set GE_CORPUS)") end

local path = corpus .. "/onnx__tensorflow-onnx/tests/models/fc-layers/frozen.pb"
local g = assert(ge.load(path))
local before = #g

-- bypass the first dropout: dense_1's MatMul reads dense's Relu directly
local view = ge.sgv(g:op("model/dropout/Identity"))
local _, phs = ge.bypass(view)
tap.is(1, #phs, "bypass made one placeholder for the detached input")
tap.is("model/dense/Relu:0", g:op("model/dense_1/MatMul").inputs[1].name,
       "bypass: the consumer reads the view's input")

-- reroute the second dropout's readers to its input (reroute_ts keeps
-- graph_editor's order: readers of ts1 now read ts0)
local n = ge.reroute_ts(g:tensor("model/dense_1/Relu"),
                        g:tensor("model/dropout_1/Identity"))
tap.is(1, n, "reroute_ts changed one input slot")

local dir = tap.tmpdir()
local out = dir .. "/edited.pb"
assert(g:save(out))
local h = assert(ge.load(out))
tap.is(before + 1, #h, "the saved graph has the placeholder more")
tap.ok(h:validate(), "the saved graph validates")
tap.is("model/dense/Relu:0", h:op("model/dense_1/MatMul").inputs[1].name,
       "after reload: bypassed wiring")
tap.is("model/dense_1/Relu:0", h:op("model/pred/MatMul").inputs[1].name,
       "after reload: rerouted wiring")
tap.is(0, #h:op("model/dropout_1/Identity"):consumers(),
       "the rerouted tensor has no reader left")
tap.is(before, #assert(ge.load(path)), "the input file is unchanged")
os.execute("rm -rf '" .. dir .. "'")
tap.done()

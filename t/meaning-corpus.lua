-- meaning-corpus.lua: copies, clones and saves that keep a model's
-- meaning (issue 27, cases 1 to 3 and 11), checked by running the cifar TF1
-- MetaGraphDef restored from its checkpoint before and after, and the
-- handtrack TensorFlow.js model saved quantized again.
local tap = require "tap"
local ok, is, same = tap.ok, tap.is, tap.same

local C = tap.corpus()
if not C then tap.skip_all("corpus not found") end
local SRC = C .. "/dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/cifar_model"
local dir = tap.tmpdir()
assert(os.execute(("cp '%s'/model.ckpt.* '%s'/"):format(SRC, dir)))
local META = dir .. "/model.ckpt.meta"

local function strings(g, name)
  local v = g:op(name):attr("value")
  local t = {}
  for i = 1, #v do t[i] = v[i] end
  return t
end
local function has(list, x)
  for _, y in ipairs(list) do if y == x then return true end end
  return false
end
local px = {}
for i = 1, 32 * 32 * 3 do px[i] = ((i * 37) % 101) / 101 end
local feeds = {Input = ge.tensor_value("float32", {1, 32, 32, 3}, px)}
local base = ge.run(assert(ge.load(META)), feeds, "Output")

-- 1. a copy into a new graph: its saver, its variables and the plan agree
local g = assert(ge.load(META))
local d = ge.graph()
ge.copy(ge.sgv(g), {dst_graph = d, dst_scope = "ns", variables = "duplicate"})
is("ns/W1", d:variable("ns/W1").key, "1: the copy's key is its new name")
ok(has(strings(d, "ns/save/RestoreV2/tensor_names"), "ns/W1") and
   not has(strings(d, "ns/save/RestoreV2/tensor_names"), "W1"),
   "1: the copied restore reads ns/W1")
ok(has(strings(d, "ns/save/SaveV2/tensor_names"), "ns/W1"), "1: the copied saver saves ns/W1")
local planned = {}
for _, e in ipairs(d:checkpoint_plan()) do planned[e.to] = e.from end
is("W1", planned["ns/W1"], "1: the plan makes ns/W1 from W1")
ok(d:save(dir .. "/copy.meta"), "1: save the copy")
local r = assert(ge.checkpoint.open(dir .. "/copy"))
ok(r:entry("ns/W1") and r:entry("ns/bconv1"), "1: its checkpoint is written beside it")
local c1 = assert(ge.load(dir .. "/copy.meta"))
ok(c1:validate(), "1: the copy validates")
local out1 = ge.run(c1, {["ns/Input"] = feeds.Input}, "ns/Output")
ok(out1 == base, "1: the restored copy computes the original's Output")
local v1 = assert(ge.verify(assert(ge.load(META)), c1, {outputs = {"Output"},
  map = {Input = "ns/Input", Output = "ns/Output"}, atol = 0, rtol = 0}))
ok(v1.ok and v1.max_abs == 0, "1: verify: bit for bit")

-- 2. a clone in the same graph: each saver saves its own variables
local h = assert(ge.load(META))
local nsave = #strings(h, "save/SaveV2/tensor_names")
ge.copy(ge.sgv(h), {dst_scope = "clone", variables = "duplicate"})
is(nsave, #strings(h, "save/SaveV2/tensor_names"), "2: the original saver saves what it saved")
ok(not has(strings(h, "save/SaveV2/tensor_names"), "clone/W1"), "2: not the clone's keys")
ok(has(strings(h, "clone/save/SaveV2/tensor_names"), "clone/W1") and
   not has(strings(h, "clone/save/SaveV2/tensor_names"), "W1"), "2: the clone's saver saves clone/W1")
ok(has(strings(h, "clone/save/RestoreV2/tensor_names"), "clone/W1"), "2: and restores it")
is("clone/W1", h:variable("clone/W1").key, "2: the clone's key")
is("W1", h:variable("W1").key, "2: the original's key")
ok(h:save(dir .. "/clone.meta"), "2: save the clone")
local c2 = assert(ge.load(dir .. "/clone.meta"))
local outs = ge.run(c2, {Input = feeds.Input, ["clone/Input"] = feeds.Input},
                    {"Output", "clone/Output"})
ok(outs[1] == base and outs[2] == base, "2: both towers compute the original's Output")

-- 3. saves carry the values
local sm = dir .. "/sm"
local okp, err = h:save(sm, {format = "savedmodel"})
ok(okp, "3: a SavedModel of the cloned MetaGraphDef saves: " .. tostring(err))
local rs = assert(ge.checkpoint.open(sm))
ok(rs:entry("clone/W1") and rs:entry("W1"), "3: variables/ holds the original and the clone")
ok(rs:read("clone/W1") == rs:read("W1"), "3: with the same value")
local s3 = assert(ge.load(sm))
local o3 = ge.run(s3, {Input = feeds.Input, ["clone/Input"] = feeds.Input},
                  {"Output", "clone/Output"})
ok(o3[1] == base and o3[2] == base, "3: the SavedModel runs as the original")
os.execute("mkdir -p '" .. dir .. "/elsewhere'")
ok(h:save(dir .. "/y.meta", {checkpoint = dir .. "/elsewhere/ckpt"}), "3: {checkpoint = prefix}")
ok(assert(ge.checkpoint.open(dir .. "/elsewhere/ckpt")):entry("clone/W1"),
   "3: the checkpoint goes where it says")
local lone = ge.graph()
ge.copy(ge.sgv(d), {dst_graph = lone, dst_scope = "again", variables = "duplicate"})
local okl = lone:save(dir .. "/again.meta")
ok(okl, "3: a copy of a copy reads the first source's checkpoint")
-- validate checks savers, variables and the checkpoint against each other
local function set_strings(g, name, f)
  local op = g:op(name)
  local v = op:attr("value")
  local t = {}
  for i = 1, #v do t[i] = f(v[i]) end
  op:set_attr("value", ge.tensor_value("string", {#t}, t))
end
local function problems(g)
  local okv, list = g:validate()
  return okv and "" or table.concat(list, "\n")
end
is("", problems(c2), "validate: the clone is valid")
local b1 = assert(ge.load(dir .. "/copy.meta"))
set_strings(b1, "ns/save/RestoreV2/tensor_names", function(s) return (s:gsub("^ns/", "")) end)
ok(problems(b1):find("variable 'ns/W1' is saved as 'ns/W1' by 'ns/save/SaveV2', but "
   .. "'ns/save/RestoreV2' restores it from 'W1'", 1, true), "validate: a restore under another key (case 1)")
local b2 = assert(ge.load(dir .. "/clone.meta"))
set_strings(b2, "clone/save/SaveV2/tensor_names", function(s) return (s:gsub("^clone/", "")) end)
ok(problems(b2):find("checkpoint key 'W1' is saved for variable 'W1' by 'save/SaveV2' and "
   .. "for variable 'clone/W1' by 'clone/save/SaveV2'", 1, true), "validate: one key for two variables (case 2)")
local b3 = assert(ge.load(dir .. "/copy.meta"))
set_strings(b3, "ns/save/SaveV2/tensor_names", function(s) return s == "ns/W1" and "ns/b1" or s end)
set_strings(b3, "ns/save/RestoreV2/tensor_names", function(s) return s == "ns/W1" and "ns/b1" or s end)
ok(problems(b3):find("does not have the shape of 'ns/b1'", 1, true), "validate: a shape the checkpoint contradicts")
local b4 = assert(ge.load(dir .. "/copy.meta"))
set_strings(b4, "ns/save/SaveV2/tensor_names", function(s) return s == "ns/W1" and "gone" or s end)
set_strings(b4, "ns/save/RestoreV2/tensor_names", function(s) return s == "ns/W1" and "gone" or s end)
ok(problems(b4):find("variable 'ns/W1': .*copy.index has no tensor 'gone'"), "validate: a key the checkpoint lacks")

-- a MetaGraphDef without a plan saved as a SavedModel carries its checkpoint
local plain = assert(ge.load(META))
ok(plain:save(dir .. "/plain", {format = "savedmodel"}), "3: the MetaGraphDef as a SavedModel")
ok(assert(ge.checkpoint.open(dir .. "/plain")):entry("W1"), "3: variables/ is its checkpoint")
ok(ge.run(assert(ge.load(dir .. "/plain")), feeds, "Output") == base,
   "3: the SavedModel runs restored as the original")

-- a plan whose source key the checkpoint lacks: the save says so
local miss = assert(ge.load(dir .. "/copy.meta"))
miss:add_checkpoint_copy("nowhere", "ns/nowhere")
local okb, eb = miss:save(dir .. "/miss.meta")
ok(not okb and eb:find("no tensor 'nowhere' to copy to 'ns/nowhere'", 1, true),
   "3: a save that would drop planned values says so: " .. tostring(eb))
local fb = io.open(dir .. "/miss.meta")
ok(not fb, "3: and writes nothing")
if fb then fb:close() end
-- a graph without any checkpoint has no values to carry
local bare = ge.graph()
bare:add_checkpoint_copy("a", "b")
ok(bare:save(dir .. "/bare.meta"), "3: a graph without a checkpoint saves as before")

-- 11. weights already quantized with the requested scheme keep their bytes
local HT = C .. "/tfjs/npm__@vladmandic__human-3.3.6/models/handtrack"
local ht = assert(ge.load(HT .. ".json"))
ok(ht:save(dir .. "/ht/model.json", {quantize = "uint8"}), "11: save handtrack with quantize = uint8")
ok(tap.slurp(dir .. "/ht/group1-shard1of1.bin") == tap.slurp(HT .. ".bin"),
   "11: its uint8 weights keep their bytes")
local v11 = assert(ge.verify(ht, assert(ge.load(dir .. "/ht/model.json")), {atol = 0, rtol = 0}))
ok(v11.ok and v11.max_abs == 0, "11: the boxes do not move")

os.execute("rm -rf '" .. dir .. "'")
tap.done()

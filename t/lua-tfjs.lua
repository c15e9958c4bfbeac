-- lua-tfjs.lua: g:save to TensorFlow.js from Lua, in a temporary
-- directory: shard_size, quantize with quantize_weights patterns, a
-- directory path with format = "tfjs", and the refusals (a bad quantize
-- raises; a graph with variables gives nil, "... freeze first").
local tap = require "tap"
local ok, is, raises = tap.ok, tap.is, tap.raises

local dir = tap.tmpdir()
local F = "float32"

local g = ge.graph()
g:add_op{type = "Placeholder", name = "x", attrs = {dtype = F}}
local vals = {}
for i = 1, 300 do vals[i] = (i - 150) / 64 end
g:add_op{type = "Const", name = "conv/w",
         attrs = {dtype = F, value = ge.tensor_value(F, {300}, vals)}}
g:add_op{type = "Const", name = "bias",
         attrs = {dtype = F, value = ge.tensor_value(F, {2}, {0.5, -0.25})}}
g:add_op{type = "Mul", name = "y", inputs = {"x", "conv/w"}, attrs = {T = F}}

local slurp = tap.slurp

ok(g:save(dir .. "/a/model.json", {shard_size = 512}),
   "save as tfjs with 512-byte shards")
ok(io.open(dir .. "/a/group1-shard3of3.bin") ~= nil,
   "  1208 bytes in 3 shards")
local h = assert(ge.load(dir .. "/a/model.json"))
is(#g, #h, "  loads back with every op")
ok(h:op("conv/w"):attr("value") == g:op("conv/w"):attr("value"),
   "  and the weight's values")

ok(g:save(dir .. "/q", {format = "tfjs", quantize = "uint8",
                        quantize_weights = {"conv/*"}}),
   "format tfjs to a directory, uint8 for conv/*")
local js = slurp(dir .. "/q/model.json")
ok(js:find('"quantization":{"dtype":"uint8"', 1, true) and
   select(2, js:gsub('"quantization"', "")) == 1,
   "  conv/w quantized, bias not")
local q = assert(ge.load(dir .. "/q/model.json"))
ok(q:op("bias"):attr("value") == g:op("bias"):attr("value"),
   "  bias exact")

raises("unknown quantize 'int3'", function()
  g:save(dir .. "/b/model.json", {quantize = "int3"})
end, "a bad quantize raises")

local v = ge.graph()
v:add_op{type = "VariableV2", name = "w", attrs = {dtype = F, shape = ge.shape{2}}}
local r, err = v:save(dir .. "/v/model.json")
ok(r == nil and err:find("freeze first", 1, true),
   "variables: nil, '... freeze first'")
ok(io.open(dir .. "/v/model.json") == nil, "  nothing written")

os.execute("rm -rf '" .. dir .. "'")
tap.done()

-- recipe-bytes-gen.lua OUT N: a graph of N Conv2D -> BiasAdd -> Relu
-- chains (some with a second reader of the conv, some in NCHW, one
-- LeakyRelu), for t/recipe-bytes-corpus.sh.  Deterministic.
local out, n = arg[1], tonumber(arg[2])
local g = ge.graph()
local f32 = "float32"
local function const(name, shape)
  local vals = {}
  local count = 1
  for _, d in ipairs(shape) do count = count * d end
  for i = 1, count do vals[i] = (i % 7) * 0.25 end
  return g:add_op{type = "Const", name = name,
                  attrs = {dtype = f32, value = ge.tensor_value(f32, shape, vals)}}
end
local x = g:add_op{type = "Placeholder", name = "input",
                   attrs = {dtype = f32}}:output(0)
for i = 1, n do
  local s = "block" .. i .. "/"
  local fmt = i % 5 == 0 and "NCHW" or "NHWC"
  local w = const(s .. "w", {1, 1, 2, 2})
  local b = const(s .. "b", {2})
  local conv = g:add_op{type = "Conv2D", name = s .. "conv",
    inputs = {x, w:output(0)}, device = i % 3 == 0 and "/device:CPU:0" or nil,
    attrs = {T = f32, strides = {1, 1, 1, 1}, padding = "SAME",
             data_format = fmt}}
  local bias = g:add_op{type = "BiasAdd", name = s .. "bias",
    inputs = {conv:output(0), b:output(0)},
    attrs = {T = f32, data_format = fmt}}
  local act = i % 11 == 0 and "LeakyRelu" or "Relu"
  local r = g:add_op{type = act, name = s .. "act", inputs = {bias:output(0)},
                     attrs = {T = f32}}
  if i % 4 == 0 then
    g:add_op{type = "Identity", name = s .. "side", inputs = {conv:output(0)},
             attrs = {T = f32}}
  end
  x = r:output(0)
end
g:add_op{type = "Identity", name = "output", inputs = {x}, attrs = {T = f32}}
assert(g:save(out, {overwrite = true}))

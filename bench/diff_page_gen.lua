-- bench/diff_page_gen.lua OUT [LAYERS]: a model of 1 + 5 * LAYERS + 1 ops
-- (default 200 layers: 1,002 ops) for bench/diff-page.sh: a Placeholder,
-- then layers block_i/{w, conv, b, bias, relu} (Conv2D 1x1 8->8), then
-- a Softmax.
local F = "float32"
local out, layers = arg[1], tonumber(arg[2] or "200")
local g = ge.graph()
g:add_op{type = "Placeholder", name = "x", attrs = {dtype = F, shape = ge.shape{1, 8, 8, 8}}}
local prev = "x"
for i = 1, layers do
  local s = "block_" .. i .. "/"
  g:add_op{type = "Const", name = s .. "w",
           attrs = {dtype = F, value = ge.tensor_value(F, {1, 1, 8, 8}, 0.125)}}
  g:add_op{type = "Conv2D", name = s .. "conv", inputs = {prev, s .. "w"},
           attrs = {T = F, strides = {1, 1, 1, 1}, padding = "SAME"}}
  g:add_op{type = "Const", name = s .. "b", attrs = {dtype = F, value = ge.tensor_value(F, {8}, 0)}}
  g:add_op{type = "BiasAdd", name = s .. "bias", inputs = {s .. "conv", s .. "b"}, attrs = {T = F}}
  g:add_op{type = "Relu", name = s .. "relu", inputs = {s .. "bias"}, attrs = {T = F}}
  prev = s .. "relu"
end
g:add_op{type = "Softmax", name = "out", inputs = {prev}, attrs = {T = F}}
assert(g:save(out))

-- weights-per-channel.lua: quantize_weights and round_weights keep the
-- numbers of a model.  The runner's Dequantize puts MIN_FIRST's minimum
-- on the quantizer's grid (as TensorFlow does), so the runner and the
-- folding evaluator agree on quantized weights; kernels get a range per
-- output channel, so one channel of large weights costs the others
-- nothing; biases stay float.
local tap = require "tap"
local ok, is = tap.ok, tap.is
local lib = require "testlib"
local F = "float32"

-- y = BiasAdd(MatMul(x, W), b): W is [64, 2], its column 0 of weights
-- below 0.01, its column 1 with one weight of -50
local function mm_model(bias_len)
  local g = ge.graph()
  g:add_op{type = "Placeholder", name = "x",
           attrs = {dtype = F, shape = ge.shape{-1, 64}}}
  local w = {}
  for i = 0, 63 do
    w[#w + 1] = 0.001 * ((i * 7) % 11 - 5)
    w[#w + 1] = i == 9 and -50 or 0.3 * ((i * 5) % 7 - 3)
  end
  g:add_op{type = "Const", name = "W",
           attrs = {dtype = F, value = ge.tensor_value(F, {64, 2}, w)}}
  g:add_op{type = "MatMul", name = "mm", inputs = {"x", "W"},
           attrs = {T = F, transpose_a = false, transpose_b = false}}
  local b = {}
  for i = 1, bias_len do b[i] = 0.37 * i - 0.2 end
  g:add_op{type = "Const", name = "b",
           attrs = {dtype = F, value = ge.tensor_value(F, {bias_len}, b)}}
  g:add_op{type = "BiasAdd", name = "y", inputs = {"mm", "b"},
           attrs = {T = F}}
  return g
end

local X = {}
for i = 1, 64 do X[i] = ((i * 3) % 5 + 1) / 5 end

-- the difference of column c of the product from the model's, relative
-- to the model's
local function col_error(a, b, c)
  local ya = ge.run(a, {x = {X}}, "mm")
  local yb = ge.run(b, {x = {X}}, "mm")
  return math.abs(yb[c] - ya[c]) / math.abs(ya[c])
end

-- 1. the runner's Dequantize (MIN_FIRST) against TensorFlow's formula
do
  local g = ge.graph()
  g:add_op{type = "Const", name = "q",
           attrs = {dtype = "quint8", value = ge.tensor_value("quint8", {3}, {0, 1, 255})}}
  g:add_op{type = "Const", name = "lo",
           attrs = {dtype = F, value = ge.tensor_value(F, {}, {-0.1})}}
  g:add_op{type = "Const", name = "hi",
           attrs = {dtype = F, value = ge.tensor_value(F, {}, {1})}}
  g:add_op{type = "Dequantize", name = "d", inputs = {"q", "lo", "hi"},
           attrs = {T = "quint8", mode = "MIN_FIRST"}}
  local got = ge.run(g, {}, "d")
  -- step 1.1 / 255; the minimum -0.1 rounded to -23 steps
  local step = 1.1 / 255
  local want = {-23 * step, -22 * step, 232 * step}
  local close = true
  for i = 1, 3 do
    if math.abs(got[i] - want[i]) > 1e-6 then close = false end
  end
  ok(close, "1: MIN_FIRST puts the minimum on the grid: " .. tostring(got))
  local folded = ge.evaluate(g:tensor("d:0"))
  local same = true
  for i = 1, 3 do
    if math.abs(folded[i] - got[i]) > 1e-6 then same = false end
  end
  ok(same, "1: the runner and the folding evaluator agree")
end

-- 2. per tensor (transform_graph's): the small column is flattened
do
  local a, b = mm_model(2), mm_model(2)
  local r = ge.quantize_weights(b, {minimum_size = 100, per_channel = false})
  is(r.folded, 1, "2: per tensor: W is quantized")
  is(b:op("W"):attr("mode"), "MIN_FIRST", "2: MIN_FIRST, one range")
  ok(col_error(a, b, 1) > 0.1,
     "2: per tensor, column 0 moves by more than 10%: " .. col_error(a, b, 1))
end

-- 3. per channel: each column its own range, and MIN_COMBINED on axis 1
do
  local a, b = mm_model(2), mm_model(2)
  local r = ge.quantize_weights(b, {minimum_size = 100, per_channel = true})
  is(r.folded, 1, "3: per channel: W is quantized")
  is(b:op("W"):attr("mode"), "MIN_COMBINED", "3: MIN_COMBINED")
  is(b:op("W"):attr("axis"), 1, "3: along the output channels")
  is(#ge.evaluate(b:tensor("W_quantized_min:0")), 2, "3: a range per channel")
  ok(col_error(a, b, 1) < 0.05,
     "3: column 0 within 5%: " .. col_error(a, b, 1))
  ok(col_error(a, b, 2) < 0.2,
     "3: column 1, the one with -50, within 20%: " .. col_error(a, b, 2))
  local folded = ge.evaluate(b:tensor("W:0"))
  local ran = ge.run(b, {}, "W")
  local same = true
  for i = 1, #folded do
    if math.abs(folded[i] - ran[i]) > 1e-6 then same = false end
  end
  ok(same, "3: the runner and the folding evaluator agree per channel")
  local good, problems = b:validate()
  ok(good, "3: validates " .. table.concat(problems or {}, "; "))
end

-- 4. round_weights per channel, and biases left alone
do
  local g = ge.graph()
  g:add_op{type = "Placeholder", name = "x",
           attrs = {dtype = F, shape = ge.shape{-1, 40}}}
  local vals = {}
  for i = 1, 40 do vals[i] = 0.37 * i - 0.2 end
  g:add_op{type = "Const", name = "b",
           attrs = {dtype = F, value = ge.tensor_value(F, {40}, vals)}}
  g:add_op{type = "BiasAdd", name = "y", inputs = {"x", "b"}, attrs = {T = F}}
  local before = g:op("b"):attr_raw("value")
  ge.round_weights(g, {minimum_size = 16, per_channel = true})
  is(g:op("b"):attr_raw("value"), before, "4: the bias is not rounded")
  ge.quantize_weights(g, {minimum_size = 16, per_channel = true})
  is(g:op("b").type, "Const", "4: nor quantized")
  ge.round_weights(g, {minimum_size = 16, per_channel = false})
  ok(g:op("b"):attr_raw("value") ~= before, "4: per tensor, it is")
  local c = mm_model(2)
  ge.round_weights(c, {minimum_size = 16, per_channel = true})
  ok(col_error(mm_model(2), c, 1) < 0.05,
     "4: per channel, column 0 within 5%: " .. col_error(mm_model(2), c, 1))
  local d = mm_model(2)
  ge.round_weights(d, {minimum_size = 16, per_channel = false})
  ok(col_error(mm_model(2), d, 1) > 0.1,
     "4: per tensor, column 0 moves by more than 10%: " .. col_error(mm_model(2), d, 1))
end

-- 5. the recipes choose per channel by default, and say how to not
do
  local b = mm_model(2)
  lib.run_recipe("quantize_weights", b, {"minimum_size=100"})
  is(b:op("W"):attr("mode"), "MIN_COMBINED", "5: quantize_weights: per channel by default")
  b = mm_model(2)
  lib.run_recipe("quantize_weights", b, {"minimum_size=100", "per_channel=false"})
  is(b:op("W"):attr("mode"), "MIN_FIRST", "5: per_channel=false: transform_graph's")
  local c = mm_model(2)
  lib.run_recipe("round_weights", c, {})
  ok(col_error(mm_model(2), c, 1) < 0.05, "5: round_weights: per channel by default")
end

tap.done()

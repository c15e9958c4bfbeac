-- lua-fold.lua: constant folding and the weight rewrites from Lua, on
-- graphs built here: a folded subgraph evaluates to the Const that
-- replaced it and keeps its name; stateful, loop and unsupported ops are
-- left as they were and reported; batch norms (fused, old, and the Mul
-- form) folded into conv and MatMul weights compute what they computed;
-- round_weights and quantize_weights keep the values within a step.
local tap = require "tap"
local lib = require "testlib"
local ok, is, same = tap.ok, tap.is, tap.same

local seed = 12345
local function rnd()
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648 - 0.5
end
local function randoms(n, lo)
  local t = {}
  for i = 1, n do t[i] = rnd() + (lo or 0) end
  return t
end
local function const(g, name, shape, values, dtype)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return g:add_op{type = "Const", name = name,
                  attrs = {dtype = dtype or "float32",
                           value = ge.tensor_value(dtype or "float32", shape,
                                                   values or randoms(n))}}
end
local function close(a, b, tol)
  if #a ~= #b then return false, "sizes " .. #a .. " and " .. #b end
  for i = 1, #a do
    local d = math.abs(a[i] - b[i])
    if d > tol * math.max(1, math.abs(a[i])) then
      return false, string.format("element %d: %g vs %g", i, a[i], b[i])
    end
  end
  return true
end

-- ---------------------------------------------------------------- fold_constants
local g = ge.graph()
local a = const(g, "a", {2, 3})
local b = const(g, "b", {3})
local F = {T = "float32"}
local sum = g:add_op{type = "AddV2", name = "sum", inputs = {a:output(0), b:output(0)}, attrs = F}
local ax = const(g, "axis", {}, {-1}, "int32")
local red = g:add_op{type = "Sum", name = "red", inputs = {sum:output(0), ax:output(0)},
                     attrs = {T = "float32", Tidx = "int32"}}
local x = g:add_op{type = "Placeholder", name = "x", attrs = {dtype = "float32",
                   shape = ge.shape{-1, 2}}}
local use = g:add_op{type = "Mul", name = "use", inputs = {x:output(0), red:output(0)}, attrs = F}
local shp = g:add_op{type = "Shape", name = "shp", inputs = {sum:output(0)}, attrs = F}
local rnd_op = g:add_op{type = "RandomUniform", name = "random", inputs = {shp:output(0)},
                        attrs = {dtype = "float32", T = "int32"}}
local after = g:add_op{type = "Neg", name = "after_random", inputs = {rnd_op:output(0)}, attrs = F}
local custom = g:add_op{type = "MyOp", name = "custom", inputs = {a:output(0)}}
local zero = const(g, "zero", {}, {0}, "int32")
local seven = const(g, "seven", {}, {7}, "int32")
local dz = g:add_op{type = "FloorDiv", name = "div_by_zero",
                    inputs = {seven:output(0), zero:output(0)}, attrs = {T = "int32"}}
local before = ge.evaluate(red:output(0))
local n0 = #g
local r = ge.fold_constants(g)
is("Const", g:op("red").type, "the subgraph's last op is a Const")
ok(g:op("red") and g:op("use"):input(1) == g:tensor("red:0"),
   "of the same name, still read by its consumer")
ok(close(before, (ge.evaluate(g:tensor("red:0"))), 1e-6),
   "whose value is what the subgraph evaluated to")
is(nil, g:op("sum"), "the ops only it needed are gone")
is(nil, g:op("a") and #g:op("a"):consumers() == 0 and g:op("a") or nil,
   "a Const still read by another op stays")
is("RandomUniform", g:op("random").type, "a stateful op is left alone")
is("Neg", g:op("after_random").type, "and what reads it")
is("Const", g:op("shp").type, "Shape of a fully known shape is folded")
is("MyOp", g:op("custom").type, "an op without a kernel is left")
is("FloorDiv", g:op("div_by_zero").type, "a division by zero is left")
local notes = table.concat(r.notes, "\n")
ok(notes:find("op 'custom' %(MyOp%) left as it was: no kernel"),
   "and the report says so")
ok(notes:find("op 'div_by_zero' %(FloorDiv%) left as it was: integer division by zero"),
   "with the reason")
is(2, r.skipped, "two ops skipped")
ok(#g < n0, "fewer ops (" .. n0 .. " -> " .. #g .. ")")
local valid, problems = g:validate()
ok(valid, "the result validates")
if not valid then tap.diag(table.concat(problems, "\n")) end

-- outputs are kept, loops are not entered
local g2 = ge.parse([[
node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
node { name: "sq" op: "Square" input: "c" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "kept" op: "Neg" input: "sq" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "more" op: "Neg" input: "kept" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "enter" op: "Enter" input: "c" attr { key: "T" value { type: DT_FLOAT } }
  attr { key: "frame_name" value { s: "loop" } } }
node { name: "inloop" op: "Neg" input: "enter" attr { key: "T" value { type: DT_FLOAT } } }
]], "pbtxt")
ge.fold_constants(g2, {outputs = {"kept"}})
is("Const", g2:op("kept").type, "an output named in outputs is kept, as a Const")
same({4}, (ge.evaluate(g2:tensor("more:0"))), "and its reader evaluates through it")
is("Enter", g2:op("enter").type, "Enter is left alone")
is("Neg", g2:op("inloop").type, "and what runs in the loop")

-- ---------------------------------------------------------------- batch norms
-- conv (NHWC) -> FusedBatchNormV3 -> Relu on a constant input
local function bn_graph(kind, conv)
  local g = ge.graph()
  local img = const(g, "img", {1, 5, 5, 2})
  local w
  local cv
  if conv == "MatMul" then
    img = const(g, "vec", {3, 4})
    w = const(g, "w", {4, 3})
    cv = g:add_op{type = "MatMul", name = "conv", inputs = {img:output(0), w:output(0)},
                  attrs = {T = "float32"}}
  elseif conv == "DepthwiseConv2dNative" then
    w = const(g, "w", {3, 3, 2, 2})
    cv = g:add_op{type = conv, name = "conv", inputs = {img:output(0), w:output(0)},
                  attrs = {T = "float32", strides = {1, 1, 1, 1}, padding = "SAME"}}
  else
    w = const(g, "w", {3, 3, 2, 3})
    cv = g:add_op{type = "Conv2D", name = "conv", inputs = {img:output(0), w:output(0)},
                  attrs = {T = "float32", strides = {1, 2, 2, 1}, padding = "SAME"}}
  end
  local C = conv == "DepthwiseConv2dNative" and 4 or 3
  local gamma, beta = const(g, "gamma", {C}), const(g, "beta", {C})
  local mean, var = const(g, "mean", {C}), const(g, "var", {C}, randoms(C, 1))
  local bn
  if kind == "old" then
    bn = g:add_op{type = "BatchNormWithGlobalNormalization", name = "bn",
                  inputs = {cv:output(0), mean:output(0), var:output(0),
                            beta:output(0), gamma:output(0)},
                  attrs = {T = "float32", variance_epsilon = 0.001,
                           scale_after_normalization = true}}
  elseif kind == "mul" then
    bn = g:add_op{type = "Mul", name = "bn", inputs = {cv:output(0), gamma:output(0)},
                  attrs = {T = "float32"}}
  else
    bn = g:add_op{type = "FusedBatchNormV3", name = "bn",
                  inputs = {cv:output(0), gamma:output(0), beta:output(0),
                            mean:output(0), var:output(0)},
                  attrs = {T = "float32", epsilon = 0.001, is_training = false,
                           U = "float32"}}
  end
  g:add_op{type = "Relu", name = "out", inputs = {bn:output(0)}, attrs = {T = "float32"}}
  return g
end
for _, case in ipairs{{"fused", "Conv2D"}, {"fused", "DepthwiseConv2dNative"},
                      {"fused", "MatMul"}, {"old", "Conv2D"}, {"mul", "Conv2D"},
                      {"mul", "MatMul"}} do
  local kind, conv = case[1], case[2]
  local g = bn_graph(kind, conv)
  local want = assert(ge.evaluate(g:tensor("out:0")))
  local r = ge.fold_batch_norms(g)
  local what = kind .. " batch norm after " .. conv
  is(1, r.folded, what .. ": folded")
  local bn = g:op("bn")
  if kind == "mul" then
    is(conv, bn and bn.type, what .. ": the conv takes the Mul's name")
  else
    is("BiasAdd", bn and bn.type, what .. ": becomes a BiasAdd of its name")
  end
  local got = assert(ge.evaluate(g:tensor("out:0")))
  local good, why = close(want, got, 1e-5)
  ok(good, what .. ": computes what it computed" .. (why and (": " .. why) or ""))
  local valid, problems = g:validate()
  ok(valid, what .. ": validates")
  if not valid then tap.diag(table.concat(problems, "\n")) end
end
-- not folded: training mode, a conv read twice
local gt = bn_graph("fused", "Conv2D")
gt:op("bn"):set_attr("is_training", true)
is(0, ge.fold_batch_norms(gt).folded, "a training batch norm is left")
local g3 = bn_graph("fused", "Conv2D")
g3:add_op{type = "Identity", name = "peek", inputs = {g3:tensor("conv:0")}}
is(0, ge.fold_batch_norms(g3).folded, "a conv read by another op is left")

-- ---------------------------------------------------------------- weights
local gw = ge.graph()
local big = const(gw, "big", {40, 40})
local small = const(gw, "small", {10})
local vals = ge.evaluate(big:output(0))
local rr = ge.round_weights(gw, {num_steps = 16})
is(2, rr.folded, "round_weights rounds both float Consts")
local rounded = ge.evaluate(gw:tensor("big:0"))
local distinct = {}
for _, v in ipairs(rounded) do distinct[v] = true end
local nd = 0
for _ in pairs(distinct) do nd = nd + 1 end
ok(nd <= 16, "at most num_steps distinct values (" .. nd .. ")")
ok(close(vals, rounded, 1 / 16), "each within a step of its value")

local gq = ge.graph()
const(gq, "big", {40, 40})
const(gq, "small", {10})
gq:add_op{type = "Identity", name = "read", inputs = {gq:tensor("big:0")},
          attrs = {T = "float32"}}
local orig = ge.evaluate(gq:tensor("big:0"))
local rq = ge.quantize_weights(gq, {minimum_size = 100})
is(1, rq.folded, "quantize_weights: only the Const of >= minimum_size elements")
is("Dequantize", gq:op("big").type, "becomes a Dequantize of its name")
is("quint8", gq:tensor("big_quantized_const:0").dtype, "over a quint8 Const")
ok(gq:op("big_quantized_min") and gq:op("big_quantized_max"), "with its range")
is("Const", gq:op("small").type, "the small Const stays")
local deq = assert(ge.evaluate(gq:tensor("read:0")))
ok(close(orig, deq, 1.0 / 255), "dequantized values within a step")
local qvalid, qproblems = gq:validate()
ok(qvalid, "validates")
if not qvalid then tap.diag(table.concat(qproblems, "\n")) end

-- recipes
local gr = bn_graph("fused", "Conv2D")
lib.run_recipe("fold_old_batch_norms", gr)
is("BiasAdd", gr:op("bn").type, "fold_old_batch_norms recipe")
local gr2 = bn_graph("fused", "Conv2D")
lib.run_recipe("fold_constants", gr2, {"outputs=out"})
is("Const", gr2:op("out").type, "fold_constants recipe folds a constant graph to its output")
tap.done()

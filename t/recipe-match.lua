-- recipe-match.lua: the recipes written with ge.match (fold_constant_mul,
-- remove_identity_chains, fuse_conv_bias_relu) on graphs built here, and
-- a rule set that never settles.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises
local recipe = require "gerewrite.recipe"
local lib = require "testlib"
local load, run = lib.recipe, lib.run_recipe

local F32 = "float32"

local function valid(g, name)
  local good, problems = g:validate()
  ok(good, name .. ": the graph validates")
  if not good then tap.diag(table.concat(problems, "\n")) end
end

local function types(g)
  local n = {}
  for _, op in ipairs(g:ops()) do n[op.type] = (n[op.type] or 0) + 1 end
  return n
end

local function ph(g, name, dims, dtype)
  return g:add_op{type = "Placeholder", name = name,
                  attrs = {dtype = dtype or F32, shape = ge.shape(dims)}}:output(0)
end

local function const(g, name, dims, vals, dtype)
  dtype = dtype or F32
  return g:add_op{type = "Const", name = name,
                  attrs = {dtype = dtype, value = ge.tensor_value(dtype, dims, vals)}}
    :output(0)
end

local function conv(g, name, x, w, extra)
  local attrs = {T = w.dtype, strides = {1, 1, 1, 1}, padding = "SAME"}
  for k, v in pairs(extra or {}) do attrs[k] = v end
  return g:add_op{type = "Conv2D", name = name, inputs = {x, w}, attrs = attrs}
    :output(0)
end

local function op(g, type, name, inputs, attrs)
  attrs = attrs or {}
  if attrs.T == nil then attrs.T = inputs[1].dtype or F32 end
  return g:add_op{type = type, name = name, inputs = inputs, attrs = attrs}:output(0)
end

local function value_of(g, name) return g:op(name):attr("value") end

-- Elements of a value as a list, for comparing.
local function elems(v) return v:totable() end

local function close(want, got, tol)
  if #want ~= #got then return false end
  for i = 1, #want do
    if math.abs(want[i] - got[i]) > (tol or 1e-6) * math.max(1, math.abs(want[i])) then
      return false
    end
  end
  return true
end

-- ================================================================ fold
local fold = load("fold_constant_mul")
ok(fold.name == "fold_constant_mul" and fold.description:find("Mul"),
   "fold_constant_mul: declared")

-- The issue's example: weights [1,2,2,2] times a per-channel [2, 3].
local function fold_graph(commuted, second_reader)
  local g = ge.graph()
  local x = ph(g, "x", {-1, 4, 4, 2})
  local w = const(g, "w", {1, 2, 2, 2}, {1, 2, 3, 4, 0.1, 0.2, 0.3, 0.4})
  local s = const(g, "s", {2}, {2, 3})
  local c = conv(g, "conv", x, w)
  local mul = commuted and op(g, "Mul", "mul", {s, c}) or op(g, "Mul", "mul", {c, s})
  op(g, "Relu", "out", {mul})
  if second_reader then op(g, "Square", "peek", {c}) end
  return g
end

do
  local g = fold_graph()
  local r = run("fold_constant_mul", g)
  is(1, r.folded, "fold: one site folded")
  local v = value_of(g, "w")
  is(ge.tensor_value(F32, {1, 2, 2, 2}, {2, 6, 6, 12, 0.2, 0.6, 0.6, 1.2}), v,
     "fold: weights [1,2,3,4,.1,.2,.3,.4] * [2,3] = [2,6,6,12,.2,.6,.6,1.2]")
  ok(close({2, 6, 6, 12, 0.2, 0.6, 0.6, 1.2}, elems(v)), "fold: ... as numbers")
  is("float32", v.dtype, "fold: dtype kept")
  same({1, 2, 2, 2}, {v.shape[1], v.shape[2], v.shape[3], v.shape[4]},
       "fold: shape kept")
  local mul = g:op("mul")
  is("Conv2D", mul and mul.type, "fold: the conv took the Mul's name")
  is(nil, g:op("conv"), "fold: ... and no op keeps the old name")
  is("mul:0", g:op("out").inputs[1].name, "fold: the reader reads the conv")
  is(nil, types(g).Mul, "fold: no Mul left")
  is("w:0", g:op("mul").inputs[2].name, "fold: the conv reads the weights")
  valid(g, "fold")
end

do
  local g = fold_graph(true)
  is(1, run("fold_constant_mul", g).folded, "fold: Mul(s, conv) folds too")
  is(ge.tensor_value(F32, {1, 2, 2, 2}, {2, 6, 6, 12, 0.2, 0.6, 0.6, 1.2}),
     value_of(g, "w"), "fold: ... with the same numbers")
end

do
  local g = fold_graph(false, true)
  local before = g:serialize()
  is(0, run("fold_constant_mul", g).folded,
     "fold: not folded when the conv has another reader")
  is(before, g:serialize(), "fold: ... and the graph is untouched")
  same({1, 2, 3, 4}, {table.unpack(elems(value_of(g, "w")), 1, 4)},
       "fold: ... weights unchanged")
end

-- scalar factor, shared weights, NCHW, chained Muls
do
  local g = ge.graph()
  local x = ph(g, "x", {-1, 4, 4, 2})
  local w = const(g, "w", {1, 1, 2, 2}, {1, 2, 3, 4})
  local c1 = conv(g, "c1", x, w)
  local c2 = conv(g, "c2", x, w)
  op(g, "Identity", "o1", {op(g, "Mul", "m1", {c1, const(g, "half", {}, 0.5)})})
  op(g, "Identity", "o2", {c2})
  local r = run("fold_constant_mul", g)
  is(1, r.folded, "fold: a scalar factor folds")
  same({1, 2, 3, 4}, elems(value_of(g, "w")), "fold: shared weights unchanged")
  is("w/folded:0", g:op("m1").inputs[2].name, "fold: ... the conv reads a copy")
  same({0.5, 1, 1.5, 2}, elems(value_of(g, "w/folded")), "fold: ... scaled")
  valid(g, "fold shared")
end

do
  local g = ge.graph()
  local x = ph(g, "x", {-1, 2, 4, 4})
  local w = const(g, "w", {1, 1, 2, 2}, {1, 2, 3, 4})
  local c = conv(g, "c", x, w, {data_format = "NCHW"})
  op(g, "Identity", "o", {op(g, "Mul", "m", {c, const(g, "s", {2, 1, 1}, {10, 100})})})
  local w2 = const(g, "w2", {1, 1, 2, 2}, {1, 2, 3, 4})
  local c2 = conv(g, "c2", ph(g, "y", {-1, 4, 4, 2}), w2)
  op(g, "Identity", "o2", {op(g, "Mul", "m2", {c2, const(g, "s2", {2, 1, 1}, {10, 100})})})
  is(1, run("fold_constant_mul", g).folded, "fold: [C,1,1] scales an NCHW conv only")
  same({10, 200, 30, 400}, elems(value_of(g, "w")), "fold: NCHW channels")
  is("Mul", g:op("m2").type, "fold: ... an NHWC conv keeps its Mul")
end

do
  local g = ge.graph()
  local x = ph(g, "x", {-1, 4, 4, 2})
  local c = conv(g, "c", x, const(g, "w", {1, 1, 2, 2}, {1, 2, 3, 4}))
  local m1 = op(g, "Mul", "m1", {c, const(g, "a", {2}, {2, 3})})
  op(g, "Relu", "out", {op(g, "Mul", "m2", {const(g, "b", {2}, {10, 100}), m1})})
  local r = run("fold_constant_mul", g)
  is(2, r.folded, "fold: Mul(Mul(conv, a), b) folds both")
  is(3, r.passes, "fold: ... in two passes and a check")
  same({20, 600, 60, 1200}, elems(value_of(g, "w")), "fold: ... a * b")
  is("Conv2D", g:op("m2").type, "fold: ... the conv is named like the last Mul")
  valid(g, "fold chain")
end

-- MatMul, with and without transpose_b; depthwise; other dtypes
do
  local g = ge.graph()
  local x = ph(g, "x", {-1, 2})
  local mm = op(g, "MatMul", "mm", {x, const(g, "w", {2, 3}, {1, 2, 3, 4, 5, 6})})
  op(g, "Identity", "o", {op(g, "Mul", "m", {mm, const(g, "s", {3}, {1, 10, 100})})})
  local mt = op(g, "MatMul", "mt", {x, const(g, "wt", {3, 2}, {1, 2, 3, 4, 5, 6})},
                {transpose_b = true})
  op(g, "Identity", "ot", {op(g, "Mul", "mtm", {mt, const(g, "st", {1, 3}, {1, 10, 100})})})
  is(2, run("fold_constant_mul", g).folded, "fold: MatMul sites")
  same({1, 20, 300, 4, 50, 600}, elems(value_of(g, "w")), "fold: MatMul columns")
  same({1, 2, 30, 40, 500, 600}, elems(value_of(g, "wt")),
       "fold: MatMul transpose_b: rows")
  valid(g, "fold MatMul")
end

do
  local g = ge.graph()
  local x = ph(g, "x", {-1, 4, 4, 2})
  -- [h, w, in = 2, mult = 2]: output channel in * 2 + j
  local dw = g:add_op{type = "DepthwiseConv2dNative", name = "dw",
    inputs = {x, const(g, "w", {1, 1, 2, 2}, {1, 1, 1, 1})},
    attrs = {T = F32, strides = {1, 1, 1, 1}, padding = "SAME"}}:output(0)
  op(g, "Identity", "o", {op(g, "Mul", "m", {dw, const(g, "s", {4}, {1, 2, 3, 4})})})
  is(1, run("fold_constant_mul", g).folded, "fold: a depthwise conv")
  same({1, 2, 3, 4}, elems(value_of(g, "w")), "fold: depthwise channels")
end

do
  local g = ge.graph()
  local x = ph(g, "x", {-1, 4, 4, 1}, "float64")
  local c = conv(g, "c", x, const(g, "w", {1, 1, 1, 2}, {0.1, 0.2}, "float64"))
  op(g, "Identity", "o", {op(g, "Mul", "m", {c, const(g, "s", {2}, {3, 3}, "float64")})})
  local h = ph(g, "h", {-1, 4, 4, 1}, "float16")
  local ch = conv(g, "ch", h, const(g, "wh", {1, 1, 1, 2}, {0.5, 1.5}, "float16"))
  op(g, "Identity", "oh", {op(g, "Mul", "mh", {ch, const(g, "sh", {}, 3, "float16")})})
  local i = ph(g, "i", {-1, 2}, "int32")
  local mi = op(g, "MatMul", "mi", {i, const(g, "wi", {2, 2}, {1, 2, 3, 4}, "int32")})
  op(g, "Identity", "oi", {op(g, "Mul", "m_int", {mi, const(g, "si", {}, 2, "int32")})})
  is(2, run("fold_constant_mul", g).folded, "fold: float64 and float16, not int32")
  local v = value_of(g, "w")
  ok(v.dtype == "float64" and v[1] == 0.1 * 3 and v[2] == 0.2 * 3,
     "fold: float64 weights stay float64, exact products")
  v = value_of(g, "wh")
  ok(v.dtype == "float16" and v[1] == 1.5 and v[2] == 4.5, "fold: float16 kept")
  is("Mul", g:op("m_int").type, "fold: integer Mul left alone")
end

-- ================================================================ identities
local function chain(n, reader)
  local g = ge.graph()
  local t = ph(g, "x", {2})
  for i = 1, n do t = op(g, "Identity", "id" .. i, {t}) end
  if reader then op(g, "Relu", "out", {t}) end
  return g
end

do
  local g = chain(3, true)
  local r = run("remove_identity_chains", g)
  is(3, r.removed, "identities: a chain of 3 goes")
  is(2, r.passes, "identities: ... in one pass and a check")
  is("x:0", g:op("out").inputs[1].name, "identities: the reader reads x")
  is(nil, types(g).Identity, "identities: none left")
  valid(g, "identities")
end

do
  local g = chain(3, false)
  is(2, run("remove_identity_chains", g).removed,
     "identities: a chain ending the graph keeps its last op")
  ok(g:op("id3") and g:op("id3").inputs[1].name == "x:0",
     "identities: ... which reads x")
  g = chain(3, false)
  is(3, run("remove_identity_chains", g, {"remove_outputs=true"}).removed,
     "identities: remove_outputs=true removes it too")
  g = chain(3, true)
  is(2, run("remove_identity_chains", g, {"keep=id2"}).removed,
     "identities: keep lists ops to keep")
  is("id2:0", g:op("out").inputs[1].name, "identities: ... out reads id2")
  is("x:0", g:op("id2").inputs[1].name, "identities: ... which reads x")
end

-- control edges
local function ctl_graph()
  local g = ge.graph()
  local x = ph(g, "x", {2})
  local a = op(g, "Relu", "a", {x})
  local gate = g:add_op{type = "NoOp", name = "gate"}
  local id = g:add_op{type = "Identity", name = "id", inputs = {a},
                      control_inputs = {gate}, attrs = {T = F32}}
  op(g, "Relu", "r1", {id:output(0)})
  local id2 = op(g, "Identity", "id2", {a})
  g:add_op{type = "NoOp", name = "after", control_inputs = {id2.op}}
  op(g, "Square", "r2", {id2})
  return g
end

do
  local g = ctl_graph()
  is(1, run("remove_identity_chains", g).removed,
     "identities: control inputs keep an Identity by default")
  ok(g:op("id") and not g:op("id2"), "identities: ... id stays, id2 goes")
  is("a", g:op("after").control_inputs[1].name,
     "identities: a control output now waits on the input's op")
  is("a:0", g:op("r2").inputs[1].name, "identities: ... and readers read a")
  valid(g, "identities control")
  g = ctl_graph()
  is(2, run("remove_identity_chains", g, {"control_inputs=move"}).removed,
     "identities: control_inputs=move removes both")
  is("gate", g:op("r1").control_inputs[1].name,
     "identities: ... the reader inherits the control input")
  valid(g, "identities move")
  g = ctl_graph()
  g:add_op{type = "Merge", name = "merge", inputs = {g:tensor("id"), g:tensor("a")},
           attrs = {T = F32, N = 2}}
  is(1, run("remove_identity_chains", g, {"control_inputs=move"}).removed,
     "identities: move keeps an Identity with control inputs read by a Merge")
end

do
  local g = ge.graph()
  local v = g:add_op{type = "VariableV2", name = "v",
                     attrs = {dtype = F32, shape = ge.shape{2}}}
  op(g, "Relu", "r", {op(g, "Identity", "v/read", {v:output(0)}, {T = F32})})
  local p = ph(g, "p", {})
  local sw = g:add_op{type = "Switch", name = "sw",
                      inputs = {ph(g, "d", {2}), g:add_op{type = "Placeholder",
                        name = "pred", attrs = {dtype = "bool"}}:output(0)},
                      attrs = {T = F32}}
  local pivot = op(g, "Identity", "pivot", {sw:output(1)}, {T = F32})
  g:add_op{type = "Const", name = "k", control_inputs = {pivot.op},
           attrs = {dtype = F32, value = ge.tensor_value(F32, {}, 1)}}
  op(g, "Relu", "r2", {pivot})
  local dev = g:add_op{type = "Identity", name = "copy", inputs = {p},
                       attrs = {T = F32}, device = "/device:GPU:0"}
  g:op("p").device = "/device:CPU:0"
  op(g, "Relu", "r3", {dev:output(0)})
  is(0, run("remove_identity_chains", g).removed,
     "identities: variable reads, Switch pivots, device copies stay")
end

do
  local g = chain(2, true)
  g:op("out"):set_attr("_class", {"loc:@id2"}, "list(string)")
  is(1, run("remove_identity_chains", g).removed,
     "identities: an Identity others are colocated with stays")
  ok(g:op("id2") and not g:op("id1"), "identities: ... id2 stays")
  valid(g, "identities colocation")
end

-- ================================================================ fuse
local function fuse_graph(act, extra)
  local g = ge.graph()
  local x = ph(g, "x", {-1, 8, 8, 3})
  local w = const(g, "w", {1, 1, 3, 2}, {1, 2, 3, 4, 5, 6})
  local b = const(g, "b", {2}, {0.5, -0.5})
  local c = conv(g, "net/conv", x, w, extra)
  g:op("net/conv").device = "/device:GPU:0"
  local ba = op(g, "BiasAdd", "net/bias", {c, b})
  local a = op(g, act or "Relu", "net/act", {ba})
  op(g, "Identity", "out", {a})
  op(g, "Square", "out2", {a})
  return g
end

do
  local g = fuse_graph()
  is(1, run("fuse_conv_bias_relu", g).fused, "fuse: one site")
  local f = g:op("net/act")
  is("_FusedConv2D", f and f.type, "fuse: the fused op has the activation's name")
  same({"x:0", "w:0", "b:0"}, {f.inputs[1].name, f.inputs[2].name, f.inputs[3].name},
       "fuse: inputs x, filter, bias")
  is("/device:GPU:0", f.device, "fuse: on the conv's device")
  is("float32", f:attr("T"), "fuse: T")
  same({1, 1, 1, 1}, f:attr("strides"), "fuse: strides")
  is("SAME", f:attr("padding"), "fuse: padding")
  same({}, f:attr("explicit_paddings"), "fuse: explicit_paddings (default)")
  same({1, 1, 1, 1}, f:attr("dilations"), "fuse: dilations (default)")
  is("NHWC", f:attr("data_format"), "fuse: data_format (default)")
  is(true, f:attr("use_cudnn_on_gpu"), "fuse: use_cudnn_on_gpu (default)")
  same({"BiasAdd", "Relu"}, f:attr("fused_ops"), "fuse: fused_ops")
  is(1, f:attr("num_args"), "fuse: num_args")
  local eps, kind = f:attr("epsilon")
  ok(eps == 0 and kind == "f", "fuse: epsilon 0.0")
  same({"float32"}, f:attr("TArgs"), "fuse: TArgs")
  is(0, f:attr("num_host_args"), "fuse: num_host_args")
  is(nil, f:attr("leakyrelu_alpha"), "fuse: no leakyrelu_alpha for Relu")
  ok(not g:op("net/conv") and not g:op("net/bias"), "fuse: conv and bias gone")
  ok(g:op("out").inputs[1].op == f and g:op("out2").inputs[1].op == f,
     "fuse: both readers read the fused op")
  same({"Const", "Identity", "Placeholder", "Square", "_FusedConv2D"},
       (function()
         local t = {}
         for k in pairs(types(g)) do t[#t + 1] = k end
         table.sort(t)
         return t
       end)(), "fuse: op types after")
  valid(g, "fuse")
end

do
  local g = fuse_graph(nil, {dilations = {1, 2, 2, 1}, padding = "VALID"})
  run("fuse_conv_bias_relu", g, {"targs=false"})
  local f = g:op("net/act")
  same({1, 2, 2, 1}, f:attr("dilations"), "fuse: the conv's own attrs are copied")
  is("VALID", f:attr("padding"), "fuse: ... padding")
  ok(f:attr("TArgs") == nil and f:attr("num_host_args") == nil,
     "fuse: targs=false leaves TArgs and num_host_args out")
end

do
  local g = fuse_graph("Relu6")
  is(0, run("fuse_conv_bias_relu", g).fused, "fuse: Relu6 not fused by default")
  is(1, run("fuse_conv_bias_relu", g, {"activations=Relu,Relu6"}).fused,
     "fuse: activations=Relu,Relu6")
  same({"BiasAdd", "Relu6"}, g:op("net/act"):attr("fused_ops"), "fuse: ... Relu6")
  g = fuse_graph("LeakyRelu")
  g:op("net/act"):set_attr("alpha", 0.25, "float")
  is(1, run("fuse_conv_bias_relu", g, {"activations=LeakyRelu"}).fused,
     "fuse: LeakyRelu")
  is(0.25, g:op("net/act"):attr("leakyrelu_alpha"), "fuse: leakyrelu_alpha = alpha")
  raises("cannot be fused", function()
    run("fuse_conv_bias_relu", fuse_graph(), {"activations=Tanh"})
  end, "fuse: an unknown activation is refused")
end

do
  local g = fuse_graph()
  op(g, "Square", "peek", {g:tensor("net/conv")})
  local before = g:serialize()
  is(0, run("fuse_conv_bias_relu", g).fused, "fuse: not when the conv has another reader")
  is(before, g:serialize(), "fuse: ... graph untouched")
  g = fuse_graph()
  g:add_op{type = "NoOp", name = "wait", control_inputs = {g:op("net/bias")}}
  is(0, run("fuse_conv_bias_relu", g).fused, "fuse: not when the bias has a control output")
  g = fuse_graph(nil, {data_format = "NCHW"})
  is(0, run("fuse_conv_bias_relu", g).fused, "fuse: NCHW not fused by default")
  is(0, run("fuse_conv_bias_relu", g, {"data_formats=NHWC,NCHW"}).fused,
     "fuse: not when conv and BiasAdd disagree on the data format")
  g:op("net/bias"):set_attr("data_format", "NCHW")
  is(1, run("fuse_conv_bias_relu", g, {"data_formats=NHWC,NCHW"}).fused,
     "fuse: data_formats=NHWC,NCHW")
  is("NCHW", g:op("net/act"):attr("data_format"), "fuse: ... NCHW kept")
end

-- ================================================================ fixpoint
-- A rule wrapping each Relu's output in an Identity, and the recipe's
-- rule removing Identities: every pass undoes the other's work.
do
  local ids = load("remove_identity_chains")
  local p = assert(recipe.params(ids, {}))
  local g = chain(0, true)
  op(g, "Square", "sq", {g:tensor("out")})
  local rules = ids.rules(p, g)
  local wrap = {name = "wrap_relu", pattern = ge.match.op("Relu"):where(function(r)
    for _, c in ipairs(r:consumers()) do
      if c.type == "Identity" then return false end
    end
    return true
  end), action = function(hit, g)
    local r = hit[1]
    local readers = r:output(0):consumers()
    local id = g:add_op{type = "Identity", inputs = {r:output(0)},
                        attrs = {T = F32}}
    for _, c in ipairs(readers) do
      for i, t in ipairs(c.inputs) do
        if t == r:output(0) then c:set_input(i - 1, id:output(0)) end
      end
    end
    return true
  end}
  table.insert(rules, 1, wrap)
  raises("no fixpoint after 5 passes: rules 'wrap_relu' (1), 'remove_identity' (1)",
         function() ge.rewrite(g, rules, {mode = "fixpoint", max_iterations = 5}) end,
         "fixpoint: a rule set that never settles stops at max_iterations, naming the rules")
  raises("max_iterations must be", function()
    ge.rewrite(g, rules, {mode = "fixpoint", max_iterations = 0})
  end, "fixpoint: max_iterations is checked")
end

tap.done()

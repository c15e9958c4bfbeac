-- lua-match.lua: ge.match from Lua: patterns and their coercion,
-- captures, iteration, explanations, and ge.rewrite.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises
local m = ge.match

local F32 = 'attr { key: "T" value { type: DT_FLOAT } } '
local function node(name, op, inputs, extra)
  local s = string.format('node { name: "%s" op: "%s" ', name, op)
  for _, i in ipairs(inputs or {}) do s = s .. string.format('input: "%s" ', i) end
  return s .. F32 .. (extra or "") .. "}\n"
end
local function ph(name, dtype, dims)
  return string.format('node { name: "%s" op: "Placeholder" ' ..
    'attr { key: "dtype" value { type: %s } } ' ..
    'attr { key: "shape" value { shape { %s } } } }\n', name,
    dtype or "DT_FLOAT", dims or "")
end
local function const(name, vals)
  local fv = {}
  for _, v in ipairs(vals or {1}) do fv[#fv + 1] = "float_val: " .. v end
  return string.format('node { name: "%s" op: "Const" ' ..
    'attr { key: "dtype" value { type: DT_FLOAT } } ' ..
    'attr { key: "value" value { tensor { dtype: DT_FLOAT ' ..
    'tensor_shape { dim { size: %d } } %s } } } }\n', name, #fv,
    table.concat(fv, " "))
end
local function conv(name, x, w, pad)
  return node(name, "Conv2D", {x, w},
    'attr { key: "strides" value { list { i: 1 i: 1 i: 1 i: 1 } } } ' ..
    'attr { key: "padding" value { s: "' .. (pad or "SAME") .. '" } } ')
end
local function names(list)
  local r = {}
  for i, x in ipairs(list) do r[i] = x.name end
  return table.concat(r, " ")
end
local function roots(g, pat, opts)
  local r = {}
  for hit in g:matches(pat, opts) do r[#r + 1] = hit[1] end
  return names(r)
end

-- ---------------------------------------------------------------- patterns
local G1 = ph("in") .. ph("other") .. const("w") .. const("b", {1, 2}) ..
  conv("c_same", "in", "w") .. conv("c_valid", "in", "w", "VALID") ..
  node("dw", "DepthwiseConv2dNative", {"in", "w"},
    'attr { key: "strides" value { list { i: 1 i: 1 i: 1 i: 1 } } } ' ..
    'attr { key: "padding" value { s: "SAME" } } ') ..
  node("ba", "BiasAdd", {"c_same", "b"}) .. node("act", "Relu", {"ba"}) ..
  node("res", "Add", {"in", "c_valid"}) ..
  node("swapped", "Add", {"dw", "in"}) ..
  node("nonres", "Add", {"other", "c_valid"})
local g = assert(ge.parse(G1, "graphdef-text"))

ok(ge.match and ge.rewrite, "ge.match and ge.rewrite exist")
local convp = m.op("Conv2D|DepthwiseConv2dNative", m.any "x", m.const "w")
is('pattern op("Conv2D|DepthwiseConv2dNative", any():as("x"), ' ..
   'const():as("w"))', tostring(convp), "tostring")
is("c_same c_valid dw", roots(g, convp), "alternation")
local named = convp:as "conv"
ok(named ~= convp and tostring(convp):find(':as("conv")', 1, true) == nil,
   ":as returns a new pattern")
is("c_same", roots(g, convp:where{padding = "SAME", T = "float32"}:name "^c_"),
   "attr table and name regex")
is("c_valid", roots(g, convp:where(function(op) return op.name:find "valid" end)),
   "a Lua predicate")
is("c_same dw", roots(g, convp:where{padding = function(v, op)
  return v == "SAME" end}), "an attr predicate")

local pat = m.op("Relu|Relu6", m.op("BiasAdd", named, m.const "b")):as "act"
local hits = {}
for hit in g:matches(pat) do hits[#hits + 1] = hit end
is(1, #hits, "one Conv2D -> BiasAdd -> Relu")
local hit = hits[1]
ok(hit.conv == g:op("c_same") and hit.act == g:op("act") and
   hit.b == g:op("b") and hit[1] == g:op("act"), "captures are ops")
ok(hit.x == g:tensor("in:0"), "any captures a tensor")

-- coercion: strings and tables
is("act", roots(g, {"Relu", {"BiasAdd", "Conv2D", "Const"}}),
   "tables and strings are patterns")
is("res swapped nonres", roots(g, "Add"), "a string alone: the op type")
raises("pattern expected, got number", function() m.op("Add", 3) end,
       "a number is not a pattern")
raises("empty alternative", function() m.op("A||B") end, "bad type list")
raises("optional needs an op pattern", function() m.optional(m.any()) end,
       "optional of any")

-- residual blocks and commute
local resid = m.op("Add", m.any "x", m.op("Conv2D", m.ref "x", m.const()))
is("res", roots(g, resid), "residual: Add(x, Conv(x))")
local either = m.commute("Add", m.any "x",
  m.op("Conv2D|DepthwiseConv2dNative", m.ref "x", m.const()))
is("res swapped", roots(g, either), "commute: both orders")

-- explanations
local text, matched = m.explain(resid, g:op("nonres"))
is('operand 0 of Conv2D "c_valid" (tensor "in:0"): is not the same as ' ..
   'capture "x" (tensor "other:0")\n  path: Add "nonres" > Conv2D "c_valid"',
   text, "explain a repeated capture")
is(false, matched, "... not matched")
is("matches", (m.explain(resid, g:op("res"))), "explain a match")
is('operand 1 of Conv2D "c_same": expected Relu, got Const "w"',
   (m.explain(m.op("Conv2D", m.any(), "Relu"), g:op("c_same"))),
   "explain a type")
ok(resid:match(g:op("res")).x == g:tensor("in"), "p:match(op)")
is(nil, m.match(resid, g:op("nonres")), "m.match: nil when no match")

-- dtype, shape, consumers, control inputs, const values
local G2 = ph("f", "DT_FLOAT", "dim { size: 1 } dim { size: 3 }") ..
  ph("i", "DT_INT32", "dim { size: 4 } dim { size: 3 }") ..
  const("k", {2, 3}) .. node("m1", "Mul", {"f", "k"}) ..
  node("m2", "Mul", {"f", "k"}, "") ..
  'node { name: "r" op: "Relu" input: "m1" input: "^k" ' .. F32 .. '}\n' ..
  node("r2", "Relu", {"m2"}) .. node("sq", "Square", {"m2"})
local g2 = assert(ge.parse(G2, "graphdef-text"))
is("f", roots(g2, m.op("Placeholder"):dtype "float32"), "dtype")
is("f i", roots(g2, m.op("Placeholder"):dtype("float32", "int32")), "dtypes")
is("i", roots(g2, m.op("Placeholder"):shape{4, -1}), "shape")
is("r", roots(g2, m.op("Relu", m.op("Mul"):single_use())), "single_use")
is("m2", roots(g2, m.op("Mul"):consumers(2)), "consumers(n)")
-- tostring spells a count the way it is built
is('pattern op("Mul"):consumers(2)', tostring(m.op("Mul"):consumers(2)),
   "tostring: consumers(n) is exactly n")
is('pattern op("Mul"):consumers(1, nil)', tostring(m.op("Mul"):consumers(1, nil)),
   "tostring: no upper bound is nil")
is('pattern op("Mul"):consumers(1, 3)', tostring(m.op("Mul"):consumers(1, 3)),
   "tostring: a range")
is("r", roots(g2, m.op("Relu"):control_inputs(true)), "control_inputs(true)")
is("r2", roots(g2, m.op("Relu"):control_inputs()), "control_inputs(): none")
is("r", roots(g2, m.op("Relu"):control_inputs(m.const "c")),
   "control_inputs(pattern)")
is("m1 m2", roots(g2, m.op("Mul", m.any(), m.const("s", function(v, op)
  return #v == 2 and v[1] == 2 and op.type == "Const" end))),
   "const with a value predicate")
is("", roots(g2, m.op("Mul", m.any(), m.const(function(v) return v[1] == 5 end))),
   "... rejecting")

-- variadic
local G3 = ph("a") .. ph("b") .. const("axis") ..
  'node { name: "cat" op: "ConcatV2" input: "a" input: "b" input: "a" ' ..
  'input: "axis" ' .. F32 .. 'attr { key: "N" value { i: 3 } } }\n'
local g3 = assert(ge.parse(G3, "graphdef-text"))
local cat = m.op("ConcatV2", m.rest(m.any()), m.const "axis")
hit = cat:match(g3:op("cat"))
ok(hit and hit.axis == g3:op("axis"), "ConcatV2: rest then the axis")
ok(m.op("ConcatV2", m.any "x", m.rest(), m.const()):match(g3:op("cat")).x ==
   g3:tensor("a"), "rest in the middle")

-- non-overlapping
local chain = ph("in")
for i = 1, 6 do
  chain = chain .. node("i" .. i, "Identity", {i == 1 and "in" or "i" .. (i - 1)})
end
chain = chain .. node("out", "Relu", {"i6"})
local gc = assert(ge.parse(chain, "graphdef-text"))
local pair = m.op("Identity", m.op("Identity", m.any "x"))
is("i2 i3 i4 i5 i6", roots(gc, pair), "all matches")
is("i2 i4 i6", roots(gc, pair, {overlap = false}), "non-overlapping")
raises("unknown option 'bogus'", function() gc:matches(pair, {bogus = 1}) end,
       "options are checked")

-- errors in callbacks come back as Lua errors
raises("boom", function()
  for _ in g:matches(m.op("Conv2D"):where(function() error("boom") end)) do end
end, "a failing predicate raises its error")

-- ---------------------------------------------------------------- rewrite
local function identity_to(x, g)
  return g:add_op{type = "Identity", inputs = {x}, attrs = {T = "float32"}}
end
-- Identity(Identity(x)) -> Identity(x): halves a chain per pass
local halve = {name = "halve", pattern = pair, action = function(hit, g)
  return {[hit[1]:output(0)] = identity_to(hit.x, g):output(0)}
end}
gc = assert(ge.parse(chain, "graphdef-text"))
local counts, passes = ge.rewrite(gc, {halve})
ok(counts.halve == 3 and counts[1] == 3 and passes == 1, "once: 3 rewrites")
gc = assert(ge.parse(chain, "graphdef-text"))
counts, passes = ge.rewrite(gc, halve, {mode = "fixpoint"})
is(5, counts.halve, "fixpoint: 3 + 1 + 1")
is(4, passes, "... in four passes")
local n = 0
for _, op in ipairs(gc:ops()) do if op.type == "Identity" then n = n + 1 end end
is(1, n, "one Identity left")
ok(gc:validate(), "the graph validates")

gc = assert(ge.parse(chain, "graphdef-text"))
raises("no fixpoint after 2 passes: rule 'halve' (1) still rewrote",
       function() ge.rewrite(gc, halve, {mode = "fixpoint", max_iterations = 2}) end,
       "max_iterations stops a rewrite with the rule's name")

-- a rule set that never settles
local gl = assert(ge.parse(ph("in") .. node("r", "Relu", {"in"}) ..
  node("out", "Identity", {"r"}), "graphdef-text"))
local function retype(to)
  return function(hit, g)
    local op = g:add_op{type = to, inputs = {hit[1]:input(0)},
                        attrs = {T = "float32"}, attr_kinds = {T = "type"}}
    return {[hit[1]] = op}
  end
end
raises("rules 'a' (1), 'b' (1) still rewrote in the last pass", function()
  ge.rewrite(gl, {{pattern = "Relu", action = retype "Relu6", name = "a"},
                  {"Relu6", retype "Relu", name = "b"}},
             {mode = "fixpoint", max_iterations = 4})
end, "a looping rule set stops at max_iterations")

-- fuse Conv2D -> BiasAdd -> Relu, refusing to drop a conv read elsewhere
local G4 = ph("in") .. const("w") .. const("b") ..
  conv("c1", "in", "w") .. node("ba1", "BiasAdd", {"c1", "b"}) ..
  node("r1", "Relu", {"ba1"}) ..
  conv("c2", "r1", "w") .. node("ba2", "BiasAdd", {"c2", "b"}) ..
  node("r2", "Relu", {"ba2"}) .. node("out", "Identity", {"r2"}) ..
  node("peek", "Identity", {"c2"})
local fuse = {name = "fuse", pattern = pat, action = function(hit, g)
  local c = hit.conv
  local attrs = {}
  for _, k in ipairs(c:attr_names()) do attrs[k] = c:attr(k) end
  attrs.fused_ops = {"BiasAdd", "Relu"}
  attrs.num_args = 1
  local f = g:add_op{type = "_FusedConv2D", name = c.name .. "/fused",
                     inputs = {c:input(0), c:input(1), hit.b:output(0)}, attrs = attrs,
                     attr_kinds = {T = "type"}}
  return {[hit.act:output(0)] = f:output(0)}
end}
local g4 = assert(ge.parse(G4, "graphdef-text"))
raises("rule 'fuse' at 'r2': the replacement would remove 'c2' (Conv2D), " ..
       "but 'peek' outside the match still reads it",
       function() ge.rewrite(g4, fuse) end, "refuses to drop a read op")
ok(g4:op("r2") and g4:op("c2/fused") == nil, "the refused site is untouched")
g4 = assert(ge.parse(G4, "graphdef-text"))
counts = ge.rewrite(g4, fuse, {allow_remove_consumed = true})
is(2, counts.fuse, "allowed: both sites fused")
ok(g4:op("c2") and not g4:op("r2") and not g4:op("ba2"), "c2 kept for peek")
is("c2/fused", g4:op("out"):input(0).op.name, "out reads the fused op")
same({"BiasAdd", "Relu"}, g4:op("c1/fused"):attr("fused_ops"), "fused_ops attr")

-- actions: edit in place, decline, fail
local g5 = assert(ge.parse(G4, "graphdef-text"))
counts = ge.rewrite(g5, {pattern = m.op("Identity", m.any "x"):name "^peek$",
  action = function(hit, g) g:remove_op(hit[1]) end})
ok(counts[1] == 1 and g5:op("peek") == nil, "an action editing the graph itself")
counts = ge.rewrite(g5, {pattern = "Relu", action = function() return false end})
is(0, counts[1], "a declining action counts nothing")
raises("rule 'bad' at 'r1': ", function()
  ge.rewrite(g5, {pattern = "Relu", name = "bad",
                  action = function() error("no way") end})
end, "an action's error names the rule and the site")
raises("bad replacement", function()
  ge.rewrite(g5, {pattern = "Relu", action = function() return {[1] = 2} end})
end, "replacements must be tensors")

-- a capture inside rest is a list: the variadic tail, one tensor per input
do
  local g6 = ge.graph()
  local F = "float32"
  for _, n in ipairs{"a", "b", "c"} do
    g6:add_op{type = "Placeholder", name = n, attrs = {dtype = F}}
  end
  g6:add_op{type = "AddN", name = "sum", inputs = {"a", "b", "c"}, attrs = {T = F, N = 3}}
  g6:add_op{type = "AddN", name = "twice", inputs = {"a", "a"}, attrs = {T = F, N = 2}}
  local hit = m.op("AddN", m.any "first", m.rest(m.any "tail")):match(g6:op("sum"))
  same({g6:tensor("b:0"), g6:tensor("c:0")}, hit.tail, "m.rest(m.any \"tail\") captures the tail as a list")
  is(g6:tensor("a:0"), hit.first, "after the operands before it")
  hit = m.op("AddN", m.rest(m.op("Placeholder"):as "ins")):match(g6:op("sum"))
  same({g6:op("a"), g6:op("b"), g6:op("c")}, hit.ins, "an op pattern's list holds ops")
  local rep = m.op("AddN", m.any "x", m.rest(m.ref "x"))
  ok(rep:match(g6:op("twice")) and not rep:match(g6:op("sum")),
     "m.ref inside rest keeps the same-value meaning")
  raises("holds a list", function()
    m.op("AddN", m.any "x", m.rest(m.any "x")):match(g6:op("sum"))
  end, "a list capture's name reused outside the rest is refused")
end

tap.done()

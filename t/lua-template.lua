-- lua-template.lua: ge.rewrite templates from Lua: replacements given as
-- data and built by the rewrite driver in C, and the one-line errors of
-- bad templates.
local tap = require "tap"
local ok, is, raises = tap.ok, tap.is, tap.raises
local m = ge.match

local F32 = 'attr { key: "T" value { type: DT_FLOAT } } '
local function node(name, op, inputs, extra)
  local s = string.format('node { name: "%s" op: "%s" ', name, op)
  for _, i in ipairs(inputs or {}) do s = s .. string.format('input: "%s" ', i) end
  return s .. F32 .. (extra or "") .. "}\n"
end
local PH = 'node { name: "in" op: "Placeholder" ' ..
  'attr { key: "dtype" value { type: DT_FLOAT } } }\n'
local function const(name)
  return string.format('node { name: "%s" op: "Const" ' ..
    'attr { key: "dtype" value { type: DT_FLOAT } } ' ..
    'attr { key: "value" value { tensor { dtype: DT_FLOAT ' ..
    'tensor_shape { dim { size: 1 } } float_val: 1 } } } }\n', name)
end
local function conv(name, x)
  return node(name, "Conv2D", {x, "w"},
    'device: "/gpu:0" ' ..
    'attr { key: "strides" value { list { i: 1 i: 1 i: 1 i: 1 } } } ' ..
    'attr { key: "padding" value { s: "SAME" } } ')
end
local G = PH .. const("w") .. const("b") ..
  conv("c1", "in") .. node("ba1", "BiasAdd", {"c1", "b"}) ..
  node("r1", "Relu", {"ba1"}) ..
  conv("c2", "r1") .. node("ba2", "BiasAdd", {"c2", "b"}) ..
  node("r2", "Relu6", {"ba2"}) .. node("out", "Identity", {"r2"})

local conv_p = m.op("Conv2D", m.any "x", m.any "w"):as "conv"
local bias_p = m.op("BiasAdd", conv_p, m.any "b"):as "bias"
local pat = m.op("Relu|Relu6", bias_p):as "act"

local function spec()
  return {
    name = "fuse",
    same = {{"conv.T", "bias.T", "act.T"}},
    no_control_outputs = {"conv", "bias", "act"},
    ops = {{as = "fused", type = "_FusedConv2D", name_from = "act",
            device_from = "conv", inputs = {"x", "w", "b"},
            attrs = {{"T", from = "conv"}, {"strides", from = "conv"},
                     {"dilations", from = "conv"},
                     {"fused_ops", {"BiasAdd", {type_of = "act"}},
                      "list(string)"},
                     {"TArgs", {{attr_of = "conv.T"}}, "list(type)"},
                     {"num_args", 1}, {"epsilon", 0.0, "float"}}}},
    replace = {act = "fused"},
  }
end

-- the same rewrite through a Lua action, to compare the bytes
local scratch = ge.graph():add_op{type = "NoOp", name = "s"}
local function enc(v, k) scratch:set_attr("v", v, k) return scratch:attr_raw("v") end
local function action(hit, g)
  local c = hit.conv
  local raw = {"T", c:attr_raw("T"), "strides", c:attr_raw("strides"),
    "dilations", enc({1, 1, 1, 1}, "list(int)"),
    "fused_ops", enc({"BiasAdd", hit.act.type}, "list(string)"),
    "TArgs", enc({"float32"}, "list(type)"),
    "num_args", enc(1, "int"), "epsilon", enc(0.0, "float")}
  local f = g:add_op{type = "_FusedConv2D", name = hit.act.name .. "/tmp",
                     inputs = {hit.x, hit.w, hit.b}, device = c.device,
                     raw_attrs = raw}
  return {[hit.act:output(0)] = f:output(0)}
end

local t = m.template(pat, spec())
is(tostring(t), "template 'fuse'", "m.template makes a template")
local g = assert(ge.parse(G, "graphdef-text"))
local counts, passes = ge.rewrite(g, {name = "fuse", template = t})
is(counts[1], 2, "both sites fused")
is(counts.fuse, 2, "... counted by name")
is(passes, 1, "one pass")
local f = g:op("r2")
is(f.type, "_FusedConv2D", "the fused op took the activation's name")
is(f.device, "/gpu:0", "... and the conv's device")
is(g:op("out").inputs[1].op, f, "the reader reads it")
ok(not g:op("c2") and not g:op("ba2"), "the matched ops are gone")
tap.same(f:attr("fused_ops"), {"BiasAdd", "Relu6"}, "fused_ops per site")
tap.same(f:attr("dilations"), {1, 1, 1, 1}, "an OpDef default")

-- byte for byte what the Lua action writes (names aside)
local g2 = assert(ge.parse(G, "graphdef-text"))
ge.rewrite(g2, {name = "fuse", pattern = pat, action = action})
for _, op in ipairs(g2:ops()) do
  if op.name:match("/tmp$") then op.name = op.name:gsub("/tmp$", "") end
end
local a, b = ge.parse(G, "graphdef-text"), nil
ge.rewrite(a, {pattern = pat, template = spec()})
b = g2
is(a:serialize("graphdef"), b:serialize("graphdef"),
   "a spec table in the rule: the bytes of the Lua action")

-- conditions: a site that fails one is left alone
local g3 = assert(ge.parse(G .. node("late", "NoOp", {}, "") ..
  "", "graphdef-text"))
ge.add_control_inputs(g3:op("late"), {g3:op("ba1")})
counts = ge.rewrite(g3, {pattern = pat, template = t})
is(counts[1], 1, "a control output leaves its site alone")
ok(g3:op("ba1") ~= nil, "... untouched")

-- a bypass: no new op, readers of the Relu read its input
local g4 = assert(ge.parse(G, "graphdef-text"))
counts = ge.rewrite(g4, {pattern = m.op("Relu6", m.any "y"):as "r",
                         template = {replace = {r = "y"}}})
is(counts[1], 1, "a bypass template")
is(g4:op("out").inputs[1].op.name, "ba2", "... the reader reads the input")

-- bad templates: one line naming the template and the entry
local function bad(s, want, name)
  raises(want, function() m.template(pat, s) end, name)
  local okc, err = pcall(m.template, pat, s)
  ok(not okc and not tostring(err):find("\n"), name .. ": one line")
end
local s = spec()
s.ops[1].inputs[2] = "y"
bad(s, "template 'fuse': ops[1].inputs[2]: unknown label 'y' (the pattern "
    .. "binds act, bias, conv, x, w, b", "unknown label")
s = spec()
s.ops[1].attrs[2] = {"strides", from = "conv.stridez"}
bad(s, "template 'fuse': ops[1].attrs[2] ('strides'): unknown attr "
    .. "'stridez' of Conv2D (the op captured as 'conv')", "unknown attr")
s = spec()
s.ops[1].attrs[6] = {"num_args", "one", "int"}
bad(s, "template 'fuse': ops[1].attrs[6] ('num_args'): attr 'num_args':",
    "a fixed value of the wrong type")
s = spec()
s.ops[2] = {type = "Identity", inputs = {"fused"}, attrs = {{"T", 1, "int"}}}
bad(s, "template 'fuse': ops[2].attrs[1] ('T'): Identity declares it type, "
    .. "not int", "a kind the OpDef contradicts")
s = spec()
s.ops[1].attrs[5] = {"TArgs", {{attr_of = "conv.padding"}}, "list(type)"}
bad(s, "ops[1].attrs[5] ('TArgs'): attr 'TArgs': attr 'padding' of Conv2D "
    .. "holds s, not type", "a list element of the wrong type")
s = spec()
s.ops[1].name_from = "x"
bad(s, "template 'fuse': ops[1]: label 'x' binds a tensor, not an op",
    "a name from a tensor")
s = spec()
s.same = {{"conv.T", "bias.Q"}}
bad(s, "template 'fuse': same[1]: unknown attr 'Q' of BiasAdd",
    "a condition on an unknown attr")
s = spec()
s.ops[1].inputz = {}
bad(s, "template 'fuse': ops[1]: unknown field 'inputz'", "a misspelt field")
s = spec()
s.ops[1].attrs[1] = {"T", frum = "conv"}
bad(s, "template 'fuse': ops[1].attrs[1]: unknown field 'frum'",
    "a misspelt attr field")
s = spec()
s.replace = {act = "nope"}
bad(s, "template 'fuse': replace['act']: unknown label 'nope'",
    "an unknown replacement")
s = spec()
s.replace = nil
bad(s, "template 'fuse': replace: a template needs replace", "no replace")
s = spec()
s.ops[1].inputs = 3
bad(s, "ops[1]: field 'inputs' must be a list, not number", "wrong field type")
-- in ge.rewrite, the rule names a template that has no name
s = spec()
s.name = nil
s.ops[1].inputs[1] = "q"
raises("template 'myrule': ops[1].inputs[1]: unknown label 'q'", function()
  ge.rewrite(ge.parse(G, "graphdef-text"),
             {name = "myrule", pattern = pat, template = s})
end, "ge.rewrite names the rule of a bad template")
raises("has an action and a template", function()
  ge.rewrite(ge.parse(G, "graphdef-text"),
             {pattern = pat, template = t, action = action})
end, "an action and a template")
-- a LeakyRelu-only attr on a Relu site is left out, not an error
local lk = m.op("Relu|LeakyRelu", bias_p):as "act"
s = spec()
s.ops[1].attrs[#s.ops[1].attrs + 1] = {"leakyrelu_alpha", from = "act.alpha"}
local g5 = assert(ge.parse(G, "graphdef-text"))
is(ge.rewrite(g5, {pattern = lk, template = s})[1], 1,
   "an attr some of the label's types have")
is(g5:op("r1"):attr("leakyrelu_alpha"), nil, "... absent on a Relu")

-- the other fields: type_from, name_suffix, a literal device, control
-- inputs, "label:k", a new op reading an earlier one
local g6 = assert(ge.parse(G, "graphdef-text"))
local split = m.template(m.op("Relu6", m.any "y"):as "r", {
  ops = {{as = "a", type_from = "r", name_from = "r", name_suffix = "/a",
          device = "/cpu:1", inputs = {"y"}, control_inputs = {"r"},
          attrs = {{"T", from = "r"}}},
         {as = "b", type = "Identity", name_from = "r", inputs = {"a:0"},
          control_inputs = {"a"}, attrs = {{"T", from = "r"}}}},
  replace = {r = "b"},
})
local okc, err = pcall(ge.rewrite, g6, {name = "split", template = split})
ok(not okc and tostring(err):find("cannot take the name 'r2': that op stays",
                                  1, true),
   "a name from an op the rewrite keeps (a new op waits on it): refused")
ok(g6:op("r2").type == "Relu6" and not g6:op("r2/a") and
   g6:op("out").inputs[1].op.name == "r2", "... before anything changed")
local g7 = assert(ge.parse(G, "graphdef-text"))
split = m.template(m.op("Relu6", m.any "y"):as "r", {
  ops = {{as = "a", type_from = "r", name_from = "r", name_suffix = "/a",
          device = "/cpu:1", inputs = {"y"}, attrs = {{"T", from = "r"}}},
         {as = "b", type = "Identity", name_from = "r", inputs = {"a:0"},
          control_inputs = {"a"}, attrs = {{"T", from = "r"}}}},
  replace = {r = "b"},
})
is(ge.rewrite(g7, {name = "split", template = split})[1], 1, "a two-op template")
local a7, b7 = g7:op("r2/a"), g7:op("r2")
ok(a7 and a7.type == "Relu6" and a7.device == "/cpu:1", "type_from, name_suffix, device")
ok(b7 and b7.type == "Identity" and b7.inputs[1].op == a7, "the second op reads the first")
is(b7.control_inputs[1], a7, "... and waits on it")
is(g7:op("out").inputs[1].op, b7, "the reader reads the second op")
-- the same template on another graph
local g8 = assert(ge.parse(G, "graphdef-text"))
is(ge.rewrite(g8, {name = "split", template = split})[1], 1, "a template is reused")

-- an absent optional leaves its site alone when the template uses it
local opt = m.op("Identity", m.optional(m.op("Relu6", m.any "y"):as "r6"))
  :as "id"
local g9 = assert(ge.parse(G .. node("id2", "Identity", {"in"}), "graphdef-text"))
counts = ge.rewrite(g9, {pattern = opt, template = {
  ops = {{as = "n", type = "Identity", inputs = {"r6:0"},
          attrs = {{"T", from = "id"}}}},
  replace = {id = "n"}}})
is(counts[1], 1, "only the site whose optional is present")

tap.done()

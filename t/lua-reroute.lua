-- lua-reroute.lua: ge.reroute from Lua, and t:replace_all_uses_with.
local tap = require "tap"
local ok, is, raises = tap.ok, tap.is, tap.raises
local ins = require("testlib").ins

local function shape(d)
  return string.format(
    ' attr { key: "_output_shapes" value { list { shape { dim { size: %d } } } } }', d)
end
local function const(name, d, dt)
  return string.format('node { name: "%s" op: "Const" ' ..
    'attr { key: "dtype" value { type: %s } }%s }\n', name, dt or "DT_FLOAT", shape(d))
end
local function op(name, t, inputs, d)
  local s = string.format('node { name: "%s" op: "%s" ', name, t)
  for _, i in ipairs(inputs) do s = s .. string.format('input: "%s" ', i) end
  return s .. 'attr { key: "T" value { type: DT_FLOAT } }' .. shape(d) .. ' }\n'
end
local FIXTURE = const("a0", 2) .. const("b0", 2) .. op("c0", "Add", {"a0", "b0"}, 2) ..
  const("a1", 2) .. const("b1", 2) .. op("c1", "Add", {"a1", "b1"}, 2) ..
  const("a2", 3) .. op("m", "Add", {"a0", "a1"}, 2) ..
  op("d0", "Identity", {"c0"}, 2) .. op("d1", "Identity", {"c1"}, 2) ..
  op("e1", "Identity", {"c1"}, 2) .. const("i", 2, "DT_INT32")

local function fresh() return assert(ge.parse(FIXTURE, "graphdef-text")) end

-- The one rule for tensor names: the message is the C API's (t/reroute.c).
do
  local g = fresh()
  raises("(no tensor 'c0:7' (op 'c0' has 1 outputs))",
         function() ge.reroute_ts("c0:7", g:tensor("a1:0")) end,
         "reroute_ts from a missing output index fails as in C")
end

local g = fresh()
is(6, ge.swap_ts({"a0:0", "b0:0"}, {g:tensor("a1:0"), g:tensor("b1:0")}),
   "swap_ts returns the slots changed")
is("a1:0,b1:0", ins(g, "c0"), "c0 reads the other pair")
is("a1:0,a0:0", ins(g, "m"), "an op reading both gets them swapped")

g = fresh()
is(2, ge.reroute_ts(g:tensor("a0:0"), g:tensor("a1:0")), "reroute_ts(t0, t1)")
is("a0:0,b1:0", ins(g, "c1"), "the consumers of t1 read t0 (decision 13)")
is(0, #g:tensor("a1:0"):consumers(), "t1 is left without consumers")
raises("incompatible shapes", function() ge.reroute_ts(g:tensor("a0:0"), g:tensor("a2:0")) end,
       "incompatible shapes are refused")
raises("incompatible dtypes", function() ge.reroute_ts(g:tensor("a0:0"), g:tensor("i:0")) end,
       "incompatible dtypes are refused")
raises("different sizes", function() ge.reroute_ts({g:tensor("a0:0")}, {}) end,
       "different lengths are refused")
raises("unknown option", function() ge.reroute_ts(g:tensor("a0:0"), g:tensor("b0:0"), {can = 1}) end,
       "options are checked")

g = fresh()
is(1, ge.reroute_ts(g:tensor("a0:0"), g:tensor("a1:0"), {can_modify = {g:op("c1")}}),
   "can_modify")
is("a0:0,a1:0", ins(g, "m"), "protects the others")
is(0, ge.reroute_ts(g:tensor("b0:0"), g:tensor("b1:0"), {cannot_modify = "c1"}),
   "cannot_modify")

g = fresh()
is(0, ge.reroute_ts(g:tensor("a0:0"), g:tensor("a1:0"), {can_modify = {}}),
   "an empty can_modify changes nothing")
is(2, ge.reroute_ts(g:tensor("a0:0"), g:tensor("a1:0"),
                    {can_modify = {g:op("m"), g:op("c1"), g:op("m")}}),
   "can_modify listing ops out of order and twice")
is("a0:0,a0:0", ins(g, "m"), "... changes them all")
g = fresh()
is(1, ge.reroute_ts(g:tensor("a0:0"), g:tensor("a1:0"),
                    {can_modify = {g:op("m"), g:op("c1")}, cannot_modify = {g:op("m")}}),
   "cannot_modify wins over can_modify")
is("a0:0,a1:0", ins(g, "m"), "... m kept a1")
-- an argument refused halfway through its conversion leaves later calls
-- right (they then convert into lists of their own)
g = fresh()
raises("tensors expected", function()
  ge.reroute_ts({g:tensor("a0:0"), g:op("c0")}, {g:tensor("a1:0"), g:tensor("b1:0")})
end, "a list with an op in it is refused")
is("a1:0,b1:0", ins(g, "c1"), "... and changes nothing")
is(1, ge.reroute_ts({g:tensor("a0:0")}, {g:tensor("a1:0")}, {cannot_modify = {g:op("m")}}),
   "the next call converts its own arguments")
is("a0:0,b1:0", ins(g, "c1"), "... and reroutes")
is(1, ge.reroute_ts(g:tensor("b0:0"), g:tensor("b1:0"), {can_modify = g:op("c1")}),
   "and so does the one after")
is("a0:0,b0:0", ins(g, "c1"), "... right")

g = fresh()
local t = g:tensor("a1:0")
is(2, t:replace_all_uses_with(g:tensor("a0:0")), "t:replace_all_uses_with(t2)")
is("a0:0,b1:0", ins(g, "c1"), "means the consumers of t read t2")

g = fresh()
local v0, v1 = ge.sgv(g:op("c0")), ge.sgv(g:op("c1"))
local r0, r1 = ge.swap_inputs(v0, v1)
ok(r0 == v0 and r1 == v1, "swap_inputs returns the views it was given")
is("a1:0,b1:0", ins(g, "c0"), "swap_inputs swaps")
is("a0:0,a1:0", ins(g, "m"), "only consumers inside the views move")
is("a1:0", v0.inputs[1].name, "the views are updated in place")

g = fresh()
local w0, w1 = ge.reroute_inputs(g:op("c0"), g:op("c1"))
is("view of 1 op (2 inputs, 1 output)", tostring(w1), "ops are turned into views")
is("a0:0,b0:0", ins(g, "c1"), "reroute_inputs")
ok(w0 ~= nil, "both views come back")

g = fresh()
ge.reroute_outputs(ge.sgv(g:op("c0")), ge.sgv(g:op("c1"), g:op("d1")):remap_outputs({1}))
is("c0:0", ins(g, "e1"), "reroute_outputs moves outside consumers")
is("c1:0", ins(g, "d1"), "not those inside a view")

g = fresh()
ge.swap_outputs(g:op("c0"), g:op("c1"))
ok(ins(g, "d0") == "c1:0" and ins(g, "d1") == "c0:0", "swap_outputs")
g = fresh()
ge.swap_ios(g:op("c0"), g:op("c1"))
ok(ins(g, "d0") == "c1:0" and ins(g, "c0") == "a1:0,b1:0", "swap_ios")
g = fresh()
ge.reroute_ios(g:op("c0"), g:op("c1"))
ok(ins(g, "e1") == "c0:0" and ins(g, "c1") == "a0:0,b0:0", "reroute_ios")
raises("different graphs", function() ge.swap_inputs(g:op("c0"), fresh():op("c1")) end,
       "views of two graphs are refused")

g = fresh()
local c0 = g:op("c0")
ge.add_control_inputs(c0, {"a1", g:op("b1")})
is(2, #c0.control_inputs, "add_control_inputs")
raises("already a control input", function() ge.add_control_inputs(c0, "a1") end,
       "adding one twice is an error")
ge.remove_control_inputs(c0, "a1")
is("b1", c0.control_inputs[1].name, "remove_control_inputs")
raises("is not a control input of 'c0'", function() ge.remove_control_inputs(c0, "a2") end,
       "removing a missing one is an error")

tap.done()

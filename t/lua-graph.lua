-- lua-graph.lua: graphs, ops and tensors from Lua: building, identity,
-- tostring, edits, removal, validation and misuse errors.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises

is(ge, require "gerewrite", "the global ge is the module")
is("string", type(ge.version), "ge.version")

-- ---------------------------------------------------------------- building
local g = ge.graph()
is(0, #g, "a new graph is empty")
is("", g.name, "a new graph has no name")
is('graph "" (0 ops)', tostring(g), "tostring of an empty graph")
is("graph", ge.type(g), "ge.type(graph)")

local x = g:add_op{type = "Placeholder", name = "x",
                   attrs = {dtype = "float32", shape = ge.shape{-1, 3}}}
is('graph "" (1 op)', tostring(g), "tostring says 1 op")
local c = g:add_op{type = "Const", name = "c",
                   attrs = {dtype = "float32",
                            value = ge.tensor_value("float32", {3}, {1, 2, 3})}}
local add = g:add_op{type = "AddV2", inputs = {x:output(0), "c"},
                     attrs = {T = "float32"}}
is("AddV2", add.name, "a missing name defaults to the type")
local add2 = g:add_op{type = "AddV2", inputs = {"AddV2", "c:0"},
                      attrs = {T = "float32"}}
is("AddV2_1", add2.name, "default names are uniquified")
is(4, #g, "#g counts ops")
raises("an op named 'x' already exists", function()
  g:add_op{type = "Identity", name = "x", inputs = {"c"}}
end, "a taken name is an error")
raises("field 'type' is required", function() g:add_op{name = "z"} end,
       "add_op needs a type")

-- ---------------------------------------------------------------- identity
ok(rawequal(g:op("x"), x), "the same op gives the same userdata")
ok(x:output(0) == g:tensor("x:0"), "op:output(0) == g:tensor('x:0')")
ok(g:tensor("x") == g:tensor("x:0"), "g:tensor('x') is output 0")
ok(x.outputs[1] == x:output(0), "op.outputs[1] is output 0")
ok(add.inputs[1] == x:output(0), "inputs are the same tensor objects")
local keys = {}
keys[g:op("c")] = "c"
collectgarbage()
collectgarbage()
is("c", keys[g:op("c")], "ops work as table keys across collections")
-- the first list of a graph's ops makes every wrapper at once (more than
-- 64 ops); each is the one g:op gives, the first op (id 0) included,
-- before and after a reorder
do
  local h = ge.graph()
  for i = 1, 100 do h:add_op{type = "NoOp", name = "n" .. i} end
  local list = h:ops()
  ok(rawequal(list[1], h:op("n1")) and rawequal(list[100], h:op("n100")),
     "the first g:ops() of 100 ops: the wrappers g:op gives")
  local again = h:ops()
  ok(rawequal(again[1], list[1]) and rawequal(again[57], list[57]),
     "a second g:ops(): the same wrappers")
  local rev = {}
  for i = 100, 1, -1 do rev[#rev + 1] = list[i] end
  h:reorder(rev)
  ok(rawequal(h:ops()[1], list[100]) and rawequal(h:op("n1"), list[1]),
     "after a reorder: the same wrappers under their new places")
end
is(nil, g:op("nope"), "g:op of a missing name is nil")
is(nil, g:tensor("nope:0"), "g:tensor of a missing op is nil")
is(nil, g:tensor("x:5"), "g:tensor of a missing output is nil")
raises("names an op, not a tensor", function() g:tensor("^x") end,
       "g:tensor('^x') is an error")

-- ---------------------------------------------------------------- properties
is("x", x.name, "op.name")
is("Placeholder", x.type, "op.type")
is("", x.device, "op.device is empty by default")
ok(x.graph == g, "op.graph")
is(0, x:output(0).index, "t.index counts from 0")
is("x:0", x:output(0).name, "t.name")
ok(x:output(0).op == x, "t.op")
is("float32", x:output(0).dtype, "t.dtype from the attrs")
same({-1, 3}, x:output(0).shape, "t.shape with an unknown dim")
same({-1, 3}, add:output(0).shape,
     "t.shape inferred where nothing is recorded ([?,3] + [3])")
local free = g:add_op{type = "Placeholder", name = "free",
                      attrs = {dtype = "float32"}}
is(nil, free:output(0).shape, "t.shape is nil for an unknown rank")
same({3}, c:output(0).shape, "t.shape of a Const")
is('op Placeholder "x"', tostring(x), "tostring(op)")
is('tensor "x:0" float32[?,3]', tostring(x:output(0)), "tostring(tensor)")
is('tensor "c:0" float32[3]', tostring(c:output(0)), "tostring(tensor), known")
is('tensor "free:0" float32[*]', tostring(free:output(0)),
   "tostring(tensor), unknown rank")
g:remove_op(free)
is("op", ge.type(x), "ge.type(op)")
is("tensor", ge.type(x:output(0)), "ge.type(tensor)")
is(nil, ge.type({}), "ge.type(table)")
raises("has no output 3", function() x:output(3) end,
       "op:output beyond the outputs is an error")
local custom = g:add_op{type = "MyCustomOp", name = "custom"}
ok(custom:output(3) ~= nil, "any output of an op without an OpDef")
is("custom:3", custom:output(3).name, "its name")
g:remove_op(custom)

x.device = "/device:CPU:0"
is("/device:CPU:0", x.device, "op.device is settable")
raises("cannot set field 'graph'", function() x.graph = ge.graph() end,
       "op.graph is read-only")
raises("an op type cannot be empty", function() x.type = "" end,
       "op.type cannot be emptied")
raises("cannot set field 'index'", function() x:output(0).index = 1 end,
       "tensor fields are read-only")

-- ---------------------------------------------------------------- edges
is(add:input(0), x:output(0), "op:input(0) is the first input")
raises("has no input 2", function() add:input(2) end,
       "op:input past the end is an error")
raises("has no input -1", function() add:input(-1) end,
       "op:input(-1) is an error")
same({add, add2}, c:consumers(), "op:consumers in node order")
same({add, add2}, c:output(0):consumers(), "t:consumers")
add2:set_input(0, "x")
same({add, add2}, x:consumers(), "set_input rewires")
local dup = g:add_op{type = "AddV2", name = "dup", inputs = {"c", "c"},
                     attrs = {T = "float32"}}
same({add, add2, dup}, c:consumers(), "an op reading twice is listed once")
same({add, add2, dup}, c:output(0):consumers(), "t:consumers unique too")

local ctl = g:add_op{type = "NoOp", name = "ctl",
                     control_inputs = {x, "c"}, inputs = {"^dup"}}
same({dup, x, c}, ctl.control_inputs, "control inputs: ^name, then the list")
same({ctl}, x:control_outputs(), "op:control_outputs")
same({}, ctl.inputs, "no data inputs")
raises("given twice", function()
  g:add_op{type = "NoOp", control_inputs = {x, "x"}}
end, "a duplicate control input is an error")

-- ---------------------------------------------------------------- renames
x.name = "input"
is(x, g:op("input"), "a renamed op is found by its new name")
is(nil, g:op("x"), "and not by its old one")
is("input:0", add.inputs[1].name, "its consumers follow")
raises("taken", function() x.name = "c" end,
       "renaming onto a taken name is an error")
is("AddV2_2", g:unique_name("AddV2"), "unique_name counts on")
is("addv2_3", g:unique_name("addv2"), "unique_name is case-insensitive")
is("fresh", g:unique_name("fresh"), "a free name is kept")
is("fresh_1", g:unique_name("fresh"), "and then marked used")

-- ---------------------------------------------------------------- atomicity
local before = #g
raises("attr 'T'", function()
  g:add_op{type = "AddV2", name = "bad", inputs = {"c", "c"},
           attrs = {T = "no-such-dtype"}}
end, "a bad attr is an error")
raises("no tensor 'missing:0'", function()
  g:add_op{type = "AddV2", name = "bad", inputs = {"missing:0"}}
end, "a missing input is an error")
is(before, #g, "failed add_op calls leave the graph unchanged")
is(nil, g:op("bad"), "and create no op")

-- ---------------------------------------------------------------- misuse
raises("bad argument #2 to 'set_input' (gerewrite.tensor or tensor name "
       .. "expected, got nil)", function() add:set_input(0, nil) end,
       "set_input(0, nil) names the argument")
raises("bad argument #1 to 'op'", function() g:op() end,
       "g:op() without a name")
raises("gerewrite.graph expected", function() ge.Graph.ops(x) end,
       "a graph method on an op")
local other = ge.graph()
local ox = other:add_op{type = "Placeholder", name = "ox",
                        attrs = {dtype = "float32"}}
raises("belongs to another graph", function()
  g:add_op{type = "Identity", inputs = {ox:output(0)}}
end, "tensors of another graph are refused")
raises("belongs to another graph", function() add:set_input(0, ox:output(0)) end,
       "set_input refuses them too")

-- ---------------------------------------------------------------- removal
raises("cannot remove 'dup'", function() g:remove_op(dup) end,
       "removing an op with consumers is an error")
is(true, g:validate(), "the graph validates")
g:remove_op(dup, {force = true})
raises("op 'dup' was removed from the graph", function() return dup.name end,
       "a removed op's wrapper raises")
raises("op 'dup' was removed from the graph", function() return dup:attr("T") end,
       "its methods raise")
is('op AddV2 "dup" (removed)', tostring(dup), "tostring still works")
same({"dup", x, c}, ctl.control_inputs,
     "a dangling control input shows its name")
local okv, problems = g:validate()
is(false, okv, "validate reports the dangling reference")
ok(type(problems) == "table" and #problems >= 1 and
   problems[1]:find("dup", 1, true) ~= nil, "the problem names the op")
local t_dup_gone = g:add_op{type = "Identity", name = "dup",
                            inputs = {"c"}, attrs = {T = "float32"}}
ok(t_dup_gone ~= dup, "a new op with the old name is a new object")
g:remove_op("ctl")
is(nil, g:op("ctl"), "remove_op by name")
is(true, (g:validate()), "valid again")

-- ---------------------------------------------------------------- text input
local text = [[
node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
node { name: "b" op: "Identity" input: "a" attr { key: "T" value { type: DT_INT32 } } }
node { name: "d" op: "AddV2" input: "b" input: "missing:1" input: "^a"
       attr { key: "T" value { type: DT_INT32 } } }
]]
local p = assert(ge.parse(text, "pbtxt"))
is(3, #p, "parsed three ops")
local names = {}
for i, op in ipairs(p:ops()) do names[i] = op.name end
same({"a", "b", "d"}, names, "g:ops() is in node order")
local d = p:op("d")
is("b:0", d.inputs[1].name, "a parsed input")
is("missing:1", d.inputs[2], "a dangling input is its name")
is("missing:1", d:input(1), "op:input of a dangling input")
same({p:op("a")}, d.control_inputs, "a parsed control input")
is("int32", p:tensor("b:0").dtype, "dtype through the OpDef")
local pv, pp = p:validate()
is(false, pv, "validate finds the dangling input")
ok(#pp >= 1 and table.concat(pp, "\n"):find("missing", 1, true),
   "and names it")
local bad, err = ge.parse("node { name: ", "pbtxt")
is(nil, bad, "ge.parse of bad text is nil")
is("string", type(err), "with a message")

-- ---------------------------------------------------------------- lifetime
local function make()
  local gg = ge.graph()
  return gg:add_op{type = "NoOp", name = "only"}
end
local orphan = make()
collectgarbage()
collectgarbage()
is('graph "" (1 op)', tostring(orphan.graph),
   "an op keeps its graph alive")
local function listed()
  local gg = ge.graph()
  for i = 1, 100 do gg:add_op{type = "NoOp", name = "m" .. i} end
  local list = gg:ops() -- the first list: every wrapper made at once
  return list[100]
end
local listed_op = listed()
collectgarbage()
collectgarbage()
ok(listed_op.name == "m100" and #listed_op.graph == 100,
   "an op of a first g:ops() keeps its graph alive")
ok(rawequal(getmetatable(listed_op), getmetatable(orphan)),
   "ops of two graphs show the same metatable")
local cl = p:clone()
is(3, #cl, "clone copies the ops")
ok(cl:op("a") ~= p:op("a"), "a clone has its own op objects")
cl:remove_op(cl:op("d"))
is(3, #p, "editing a clone leaves the original")
local a_of_p = p:op("a")
p:close()
is("graph (closed)", tostring(p), "tostring of a closed graph")
raises("graph is closed", function() return #p end, "a closed graph raises")
raises("closed", function() return a_of_p.name end,
       "ops of a closed graph raise")
p:close()
ok(true, "closing twice is harmless")
do
  local scoped <close> = ge.graph()
  scoped:add_op{type = "NoOp"}
end
ok(true, "graphs are to-be-closed variables")

-- ---------------------------------------------------------------- extension
function ge.Op:shout() return self.name:upper() end
is("INPUT", x:shout(), "ge.Op holds the op methods, open to additions")
ge.Op.shout = nil
is("function", type(ge.describe), "the Lua prelude is loaded")
ok(ge.describe(add):find('attr T (type): "float32"', 1, true),
   "ge.describe lists attrs with their kinds")

tap.done()

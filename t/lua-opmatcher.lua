-- lua-opmatcher.lua: ge.OpMatcher and ge.op_type, graph_editor's small op
-- matcher: the reference's own match test, every kind of filter, the
-- once-only setters, wrapping, consumer order, exact op types, errors.
local tap = require "tap"
local ok, is, raises = tap.ok, tap.is, tap.raises

local F = "float32"

-- graph_editor's test graph: a, foo/b, foo/c = a + foo/b, foo/d,
-- foo/bar/e = c + d, f = c + d, g = c + a, h = f + g with ^foo/c.
local function build()
  local g = ge.graph()
  local function const(name)
    return g:add_op{type = "Const", name = name,
                    attrs = {dtype = F, value = ge.tensor_value(F, {2}, {1, 1})}}
  end
  local function add(name, x, y, ctl)
    return g:add_op{type = "Add", name = name, inputs = {x, y},
                    control_inputs = ctl, attrs = {T = F}}
  end
  const("a")
  const("foo/b")
  add("foo/c", "a", "foo/b")
  const("foo/d")
  add("foo/bar/e", "foo/c", "foo/d")
  add("foo/bar/f", "foo/c", "foo/d")
  add("foo/bar/g", "foo/c", "a")
  add("foo/bar/h", "foo/bar/f", "foo/bar/g", {"foo/c"})
  return g
end

local g = build()
local a, c, d = g:op("a"), g:op("foo/c"), g:op("foo/d")
local e, f, gg, h = g:op("foo/bar/e"), g:op("foo/bar/f"), g:op("foo/bar/g"),
  g:op("foo/bar/h")
local OM, op_type = ge.OpMatcher, ge.op_type

-- ---------------------------------------------------------------- reference
-- graph_editor's tests/match_test.py, test_simple_match
ok(OM("^.*/f$")(f), "a regex matcher")
ok(OM("^.*/f$"):input_ops("^.*/c$", "^.*/d$")(f), "input_ops")
ok(OM("^.*/f$"):input_ops(true, "^.*/d$")(f), "input_ops with true")
ok(OM("^.*/f$"):input_ops(op_type("Add"), op_type("Const"))(f),
   "input_ops with op_type predicates")
ok(OM("^.*/f$"):input_ops("^.*/c$", "^.*/d$")
     :output_ops(OM("^.*/h$"):control_input_ops("^.*/c$"))(f),
   "output_ops with a control_input_ops matcher")
ok(OM("^.*/f$"):input_ops("^.*/c$", "^.*/d$")
     :output_ops(OM("^.*/h$"):control_input_ops("^.*/c$"):output_ops({}))(f),
   "output_ops({}): an output nobody reads")

-- ---------------------------------------------------------------- filters
ok(not OM("^.*/f$")(e), "a regex rejects other names")
ok(OM("bar/f")(f) and OM("f")(f), "regexes search, unanchored")
ok(OM(f)(f) and not OM(f)(e), "an op matches itself only")
local g2 = build()
ok(not OM(f)(g2:op("foo/bar/f")), "... not the op of the same id in another graph")
ok(OM(function(op) return op.type == "Add" end)(f), "a function filter")
ok(not OM(function(op) return op.type == "Add" end)(d), "... rejecting")
ok(not OM(function() return nil end)(f), "nil from a filter is false")
local seen
OM(function(op) seen = op return 1 end)(f)
ok(seen == f, "the filter gets the op wrapper itself")
local callable = setmetatable({}, {__call = function(_, op) return op == gg end})
ok(OM(callable)(gg) and not OM(callable)(f), "a callable table filter")
ok(OM(true)(a) and OM(true)(h), "true matches every op")
ok(OM(op_type("Const"))(a) and not OM(op_type("Const"))(c), "an op_type filter")
ok(OM(OM("/f$"))(f) and not OM(OM("/f$"))(e), "a matcher as a filter")
is("opmatcher", ge.type(OM(true)), "ge.type")

-- ---------------------------------------------------------------- tostring
is('opmatcher (regex "^.*/f$")', tostring(OM("^.*/f$")), "tostring of a regex matcher")
is('opmatcher (op "foo/bar/f")', tostring(OM(f)), "... an op matcher")
is('opmatcher (op_type "Add", "AddV2")', tostring(OM(op_type{"Add", "AddV2"})),
   "... an op_type matcher")
is("opmatcher (function)", tostring(OM(print)), "... a function matcher")
is("opmatcher (any)", tostring(OM(true)), "... true")
is('opmatcher (regex "a\\"b") with 2 input matchers, 1 control input matcher, 0 outputs',
   tostring(OM('a"b'):input_ops(nil, "x"):control_input_ops("y"):output_ops()),
   "... with its sub-matcher counts")

-- ---------------------------------------------------------------- setters
local m = OM("^.*/f$")
ok(rawequal(m:input_ops("c$", "d$"), m), "input_ops returns the matcher")
raises("input_ops is already set.", function() m:input_ops("c$", "d$") end,
       "input_ops can be set once")
ok(rawequal(m:control_input_ops(), m), "control_input_ops returns the matcher")
raises("control_input_ops is already set.", function() m:control_input_ops() end,
       "control_input_ops can be set once")
ok(rawequal(m:output_ops({h}), m), "output_ops returns the matcher")
raises("output_ops is already set.", function() m:output_ops({h}) end,
       "output_ops can be set once")
ok(m(f), "ops, strings and empty lists all wrapped")
raises("input_ops is already set.", function() m:input_ops(print) end,
       "a second input_ops is refused before its arguments are converted")

ok(not OM("/f$"):input_ops("/d$", "/c$")(f), "input order matters")
ok(not OM("/f$"):input_ops("/c$")(f), "the input count must be equal")
ok(OM("/f$"):input_ops(nil, "/d$")(f), "nil is a wildcard input")
ok(OM("/f$"):input_ops(OM(c), d)(f), "matchers used as given, ops wrapped")
ok(OM("/h$"):control_input_ops(c)(h), "control_input_ops")
ok(not OM("/h$"):control_input_ops("^a$")(h), "... matched")
ok(not OM("/h$"):control_input_ops()(h), "... counted")
ok(OM("/f$"):control_input_ops()(f), "no control input")

-- output_ops: consumer order, wrapping, nil
ok(OM("^foo/c$"):output_ops({e, f, gg})(c), "consumers in node order")
ok(not OM("^foo/c$"):output_ops({f, e, gg})(c), "consumer order matters")
ok(not OM("^foo/c$"):output_ops({e, f})(c), "the consumer count must be equal")
ok(OM("^foo/c$"):output_ops(table.pack(nil, "/f$", nil))(c),
   "nil consumers (with table.pack's n) are wildcards")
ok(OM("/f$"):output_ops(h)(f), "a non-list entry is a one-item list")
ok(OM("/f$"):output_ops("/h$")(f), "... a string too")
ok(not OM("^foo/c$"):output_ops("/e$")(c), "... which needs one consumer")
ok(OM("^foo/c$"):output_ops(nil)(c), "output_ops(nil): one output, skipped")
ok(not OM("^foo/c$"):output_ops(nil, nil)(c), "the output count must be equal")
ok(OM("/h$"):output_ops({})(h), "an unread output")
ok(OM("/f$"):output_ops(OM("/h$"))(f), "a matcher entry")
local yes = setmetatable({}, {__call = function() return true end})
ok(OM("/f$"):output_ops(yes)(f), "a callable table is a filter, not a list")

-- sub-matchers outlive the caller's references
do
  local sub = OM(function(op) return op.name == "foo/bar/h" end)
  m = OM("/f$"):output_ops(sub)
end
collectgarbage()
collectgarbage()
ok(m(f), "a parent keeps its sub-matchers (and their functions) alive")

-- a matcher inside a filter (nested calls)
local inner = OM(op_type("Const"))
ok(OM(function(op) return inner(op.inputs[2].op) end)(f),
   "a filter may run another matcher")

-- ---------------------------------------------------------------- op_type
ok(op_type("Add", c), "op_type(type, op)")
ok(not op_type("Add", a), "... false")
ok(op_type({"Const", "Add"}, c), "a list of types")
ok(not op_type({}, c), "an empty list matches nothing")
local addv2 = g:add_op{type = "AddV2", name = "v2", inputs = {"a", "a"}, attrs = {T = F}}
ok(not op_type("Add", addv2), "Add does not match AddV2 (decision 11)")
ok(not op_type("Ad", c), "Ad does not match Add")
ok(not op_type("dd", c), "... nor a substring")
ok(not op_type("AddV2,Add", c), "the type is not searched in the string")
ok(op_type("AddV2", addv2), "AddV2 matches AddV2")
local is_add = op_type("Add")
is("function", type(is_add), "op_type(types) is a predicate")
ok(is_add(c) and not is_add(addv2) and not is_add(a), "... exact")
ok(op_type("Add", nil)(c), "op_type(types, nil) is a predicate too")
ok(not OM(op_type("Ad"))(c), "exact in an OpMatcher as well")
is("foo/c,foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h",
   (function()
     local r = {}
     for _, op in ipairs(ge.filter_ops(g, is_add)) do r[#r + 1] = op.name end
     return table.concat(r, ",")
   end)(), "the predicate works as any filter")
local types = {"Const"}
local is_const = op_type(types)
types[1] = "Add"
ok(is_const(a), "the predicate keeps its own copy of the list")

-- ---------------------------------------------------------------- errors
raises("gerewrite.op expected, got string", function() OM(true)("foo/c") end,
       "matching a name is a type error")
raises("gerewrite.op expected, got no value", function() OM(true)() end,
       "matching nothing is a type error")
raises("gerewrite.op expected, got table", function() is_add({}) end,
       "the op_type predicate checks its argument")
raises("bad argument #2 to 'op_type' (gerewrite.op expected, got number)",
       function() op_type("Add", 3) end, "op_type(types, not an op)")
raises("bad argument #1 to 'op_type'", function() op_type(3) end,
       "op_type(not types)")
raises("item 2 of the type list is a number", function() op_type({"Add", 1}) end,
       "op_type with a bad list")
raises("cannot make an OpMatcher from the value false", function() OM(false) end,
       "OpMatcher(false)")
raises("cannot make an OpMatcher from a number", function() OM(3) end,
       "OpMatcher(number)")
raises("cannot make an OpMatcher from a table", function() OM({}) end,
       "OpMatcher(table)")
raises("value expected", function() OM() end, "OpMatcher()")
raises("cannot make an OpMatcher from a number", function() OM(true):input_ops(1) end,
       "a bad input_ops entry")
raises("regex", function() OM("(") end, "a bad regex")
raises("cannot make an OpMatcher from a number",
       function() OM(true):output_ops({"x", 2}) end, "a bad output_ops list item")

raises("boom", function() OM(function() error("boom") end)(f) end,
       "a filter's error is raised again")
raises("deep", function()
  OM("/f$"):input_ops(nil, OM(function() error("deep") end))(f)
end, "... from a sub-matcher too")
local calls = 0
local failing = OM("/f$"):input_ops(OM(function() calls = calls + 1 error("x") end),
                                    OM(function() calls = calls + 1 return true end))
pcall(failing, f)
is(1, calls, "matching stops at the first failing filter")

local loop = OM(true)
raises("cannot contain itself", function() loop:input_ops(loop) end,
       "a matcher cannot contain itself")
local p, q = OM(true), OM(true)
p:input_ops(q)
raises("cannot contain itself", function() q:output_ops(table.pack(nil, p)) end,
       "... through another")
raises("cannot contain itself", function() q:control_input_ops(p) end,
       "... whatever the setter")
ok(q:input_ops(OM(true))(a) == false, "a refused setter leaves the matcher usable")

local g3 = build()
local victim = g3:op("foo/bar/e")
local fm = OM(victim)
g3:remove_op(victim)
raises("was removed", function() fm(victim) end, "matching a removed op raises")
raises("was removed", function() OM(victim) end, "so does making a matcher of it")
ok(not fm(g3:op("foo/bar/f")), "a matcher of a removed op matches nothing")
local closer = OM(function(op) op.graph:close() return true end)
raises("closed the graph", function() OM("/f$"):input_ops(closer, nil)(g3:op("foo/bar/f")) end,
       "a filter closing the graph stops the match")

tap.done()

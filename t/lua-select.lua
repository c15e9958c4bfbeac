-- lua-select.lua: ge.util and ge.select from Lua: lists, options tables,
-- tensor seeds, callbacks, regexes, ControlOutputs.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises
local lib = require "testlib"
local names = lib.names

local FIXTURE = lib.EDITOR_GRAPH ..
  'node { name: "k" op: "NoOp" input: "^foo/bar/e" }\n'

local g = assert(ge.parse(FIXTURE, "graphdef-text"))
local a, c, e, h, k = g:op("a"), g:op("foo/c"), g:op("foo/bar/e"),
  g:op("foo/bar/h"), g:op("k")

-- ---------------------------------------------------------------- layout
ok(ge.util and ge.select and ge.subgraph and ge.reroute and ge.edit,
   "the graph_editor modules are grouped")
ok(ge.get_forward_walk_ops == ge.select.get_forward_walk_ops,
   "and flattened onto ge")
ok(ge.ph == ge.util.make_placeholder_from_dtype_and_shape, "ge.ph alias")

-- ---------------------------------------------------------------- util
is("foo/bar/", ge.scope_finalize("foo/bar"), "scope_finalize")
is("foo/bar/", ge.scope_dirname("foo/bar/op"), "scope_dirname")
is("op", ge.scope_basename("foo/bar/op"), "scope_basename")
is("foo/geph__c_0", ge.placeholder_name(c:output(0)), "placeholder_name(t)")
is("s/geph__c_0", ge.placeholder_name(c:output(0), {scope = "s"}),
   "placeholder_name with a scope")
is("geph", ge.placeholder_name(), "placeholder_name()")
is("s/geph", ge.placeholder_name(nil, {scope = "s"}), "placeholder_name(nil, {scope})")
is(9, #ge.make_list_of_op(g), "make_list_of_op(graph)")
is("foo/c,a", names(ge.make_list_of_op({c, "a"})), "make_list_of_op of ops and names")
raises("ops expected, got a tensor", function() ge.make_list_of_op({c:output(0)}) end,
       "a tensor in an op list is an error")
is("foo/c", names(ge.make_list_of_op({c, a:output(0)}, {ignore_ts = true})),
   "... unless ignore_ts")
raises("not allowed", function() ge.make_list_of_op(g, {allow_graph = false}) end,
       "allow_graph=false")
raises("unknown option 'bogus'", function() ge.make_list_of_op(g, {bogus = 1}) end,
       "unknown options are refused")
is(8, #ge.get_tensors(g), "get_tensors")
is("foo/c,foo/c", names(ge.get_generating_ops({"foo/c:0", c:output(0)})),
   "get_generating_ops keeps duplicates")
is("foo/bar/e,foo/bar/f,foo/bar/g,foo/c",
   names(ge.get_consuming_ops({c:output(0), a:output(0)})), "get_consuming_ops")
same({1, 2, 3}, ge.util.concatenate_unique({1, 2}, {2, 3}), "concatenate_unique")

local co = ge.ControlOutputs(g)
is("foo/bar/h", names(co:get(c)), "ControlOutputs:get")
ok(co:update() == co, "update returns itself")
ok(co.graph == g, "ControlOutputs.graph")
local all = co:get_all()
is("k", names(all[e]), "get_all maps ops to control outputs")
ge.add_control_inputs(h, {a})
is("foo/bar/h", names(co:get(a)), "ControlOutputs notices edits (decision 12)")
ge.remove_control_inputs(h, {a})
is(0, #co:get(a), "... both ways")

local phg = ge.graph()
local p = ge.ph(phg, "float32", {2, -1}, {scope = "in"})
is("in/geph:0", p.name, "ge.ph names the placeholder scope/geph")
is("float32", p.dtype, "with the dtype")
same({2, -1}, p.shape, "and the shape")
local p2 = ge.make_placeholder_from_tensor(c:output(0))
is("foo/geph__c_0:0", p2.name, "make_placeholder_from_tensor")
same({2}, p2.shape, "keeps the static shape")

-- ---------------------------------------------------------------- select
is("foo/c,foo/bar/e", names(ge.filter_ops({c, e}, true)), "filter_ops(true)")
is("foo/bar/e", names(ge.filter_ops(g, function(op) return op.name:find("e$") end)),
   "filter_ops with a function")
is("a:0,foo/b:0,foo/c:0,foo/d:0,foo/bar/e:0", names(ge.filter_ts({c, e}, true)),
   "filter_ts")
is("foo/bar/e,foo/bar/g", names(ge.filter_ops_from_regex(g, "bar/[eg]")),
   "filter_ops_from_regex searches")
is("foo/c:0", names(ge.filter_ts_from_regex({c, e}, "c:0")), "filter_ts_from_regex")
is("foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h", names(ge.get_name_scope_ops(g, "foo/bar/")),
   "get_name_scope_ops")
is("", names(ge.get_name_scope_ops(g, "fo.")), "scopes are literal")
is("a,foo/b,foo/bar/e,foo/bar/f,foo/bar/g", names(ge.get_ops_ios(c)), "get_ops_ios")
is("a,foo/b,foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h",
   names(ge.get_ops_ios(c, {control_outputs = co})), "get_ops_ios with control outputs")
raises("cannot both", function() ge.get_ops_ios(c, {control_outputs = co, control_ios = co}) end,
       "control_ios with control_outputs is an error")
local cin, cout, cins = ge.compute_boundary_ts({c, e, g:op("foo/bar/f")})
is("a:0,foo/b:0,foo/d:0", names(cin), "compute_boundary_ts: inputs")
is("foo/c:0,foo/bar/e:0,foo/bar/f:0", names(cout), "outputs")
is("foo/c:0", names(cins), "inside")
is("foo/c,foo/d,foo/bar/e",
   names(ge.get_within_boundary_ops(g, e, {boundary_ops = {c, "foo/d"}})),
   "get_within_boundary_ops")
raises("Boundary is intersecting", function()
  ge.get_within_boundary_ops(g, c, {boundary_ops = c}) end, "boundary meets seeds")

is("a,foo/c,foo/bar/g,foo/bar/e,foo/bar/f,foo/bar/h", names(ge.get_forward_walk_ops(a)),
   "forward walk, waves in node order")
is("foo/c,foo/bar/g,foo/bar/e,foo/bar/f,foo/bar/h",
   names(ge.get_forward_walk_ops(a:output(0))), "a tensor seed starts at its consumers")
is("foo/bar/e,foo/bar/f,foo/bar/h",
   names(ge.get_forward_walk_ops({a:output(0)}, {inclusive = false})),
   "inclusive=false drops those seeds")
is("a,foo/c,foo/bar/g,foo/bar/h",
   names(ge.get_forward_walk_ops(a, {stop_at_ts = {"foo/c:0"}})), "stop_at_ts")
is("a,foo/c,foo/bar/e", names(ge.get_forward_walk_ops(a, {within_ops = {h, e, c, a}})),
   "within_ops")
local calls = 0
is("a,foo/c,foo/bar/g,foo/bar/e,foo/bar/h",
   names(ge.get_forward_walk_ops(a, {within_ops_fn = function(op)
     calls = calls + 1
     return op.name ~= "a" and op.name ~= "foo/bar/f"
   end})), "within_ops_fn is not applied to seeds")
ok(calls > 0 and calls <= 5, "and is called once per op")
raises("boom", function()
  ge.get_forward_walk_ops(a, {within_ops_fn = function() error("boom") end})
end, "an error in within_ops_fn propagates")
is("foo/bar/e", names(ge.get_forward_walk_ops(e)), "no control outputs by default")
is("foo/bar/e,k", names(ge.get_forward_walk_ops(e, {control_outputs = co})),
   "control outputs when asked")
is("foo/bar/h,foo/bar/f,foo/bar/g,a,foo/c,foo/d,foo/b", names(ge.get_backward_walk_ops(h)),
   "backward walk")
is("foo/c,a,foo/b", names(ge.get_backward_walk_ops({c:output(0), "foo/c:0"})),
   "backward from a tensor: its producer")
raises("names need", function() ge.get_backward_walk_ops("foo/c:0") end,
       "names alone have no graph to be looked up in")
is("k,foo/bar/e,foo/c,foo/d,a,foo/b", names(ge.get_backward_walk_ops(k, {control_inputs = true})),
   "backward with control inputs")
same({}, ge.get_forward_walk_ops({}), "no seeds, no walk")
is("a,foo/c,foo/bar/g,foo/bar/f,foo/bar/h", names(ge.get_walks_intersection_ops(a, h)),
   "get_walks_intersection_ops")
is("a,foo/c,foo/bar/g,foo/bar/e,foo/bar/f,foo/bar/h,foo/d,foo/b",
   names(ge.get_walks_union_ops(a, h)), "get_walks_union_ops")

is("foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h", names(ge.select_ops("^foo/bar/", {graph = g})),
   "select_ops by regex")
is("a,foo/bar/h", names(ge.select_ops("^a$", {h, a, c:output(0)}, "(?#ts)foo", {graph = g})),
   "select_ops: unique, tensors and (?#ts) ignored")
is("foo/c", names(ge.select_ops("^foo/bar/", "(?#ops)^foo/c$",
                                {graph = g, restrict_ops_regex = true})),
   "restrict_ops_regex")
is("foo/c,foo/bar/h", names(ge.select_ops("^foo/[bc]$", {h, a},
  {graph = g, positive_filter = function(op) return op.type == "Add" end})),
   "positive_filter")
raises("graph", function() ge.select_ops("^a$") end, "a regex needs a graph")
raises("offset 3", function() ge.select_ops("a(b", {graph = g}) end,
       "a bad regex names the offset")
is("foo/bar/f:0,foo/bar/g:0,foo/bar/e:0,foo/bar/h:0",
   names(ge.select_ts("^foo/bar/", {graph = g})), "select_ts")
local sops, sts = ge.select_ops_and_ts("^foo/bar/e$", "(?#ts)^a:0$", {graph = g})
is("foo/bar/e", names(sops), "select_ops_and_ts: ops from plain regexes")
is("a:0", names(sts), "and tensors from (?#ts)")
is("foo/bar/e", names(ge.select_ops(e)), "no regex, no graph option needed")

-- colocation targets: ops named by some op's loc:@ entries
local cg = assert(ge.parse([[
node { name: "v" op: "NoOp" }
node { name: "a" op: "NoOp" attr { key: "_class" value {
  list { s: "loc:@v" s: "loc:@gone" } } } }
]], "graphdef-text"))
is("v", names(cg:colocation_targets()), "colocation_targets from the file")
cg:op("v"):set_attr("_class", {"loc:@a"}, "list(s)")
is("a,v", names(cg:colocation_targets()),
   "and from an attr set since (in node order of the naming ops)")
is(0, #g:colocation_targets(), "none in a graph without _class")

tap.done()

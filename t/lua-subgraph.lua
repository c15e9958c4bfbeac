-- lua-subgraph.lua: SubGraphView from Lua (ge.sgv, gerewrite.view).
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises
local lib = require "testlib"
local names = lib.names

local FIXTURE = lib.EDITOR_GRAPH

local g = assert(ge.parse(FIXTURE, "graphdef-text"))
local a, c, e, f, h = g:op("a"), g:op("foo/c"), g:op("foo/bar/e"),
  g:op("foo/bar/f"), g:op("foo/bar/h")

local v = ge.sgv(c, e, f)
is("view of 3 ops (3 inputs, 3 outputs)", tostring(v), "tostring is one line")
is(3, #v, "#view counts ops")
ok(v.graph == g, "view.graph")
is("foo/c,foo/bar/e,foo/bar/f", names(v.ops), "ops in the order given")
is("a:0,foo/b:0,foo/d:0", names(v.inputs), "inputs")
is("foo/c:0,foo/bar/e:0,foo/bar/f:0", names(v.outputs), "outputs")
ok(v:op(1) == c and v:op(4) == nil, "op(i) is 1-based")
is(3, v:input_index("foo/d:0"), "input_index is 1-based")
is(2, v:output_index(e:output(0)), "output_index")
raises("is not an input of the view", function() v:input_index(h:output(0)) end,
       "input_index of a missing tensor says so")
ok(v:find_op_by_name("foo/bar/e") == e, "find_op_by_name")
raises("no op named 'a'", function() v:find_op_by_name("a") end, "find_op_by_name misses")
raises("read-only", function() v.ops = {} end, "fields are read-only")

local w = v:remap_inputs({3, 1})
is("foo/d:0,a:0", names(w.inputs), "remap_inputs returns a new view")
is("a:0,foo/b:0,foo/d:0", names(v.inputs), "and leaves the original")
raises("repeated", function() v:remap_inputs({1, 1}) end, "remap_inputs refuses repeats")
raises("position 4 out of the range [1, ", function() v:remap_inputs({4}) end,
       "and bad positions, counted from 1")
is("foo/bar/e:0,foo/bar/e:0,foo/c:0", names(v:remap_outputs({2, 2, 1}).outputs),
   "remap_outputs allows repeats")
is("foo/d:0", names(v:remap_inputs({"foo/d:0"}).inputs), "remap by tensor")
local r = v:remap({2}, {3})
ok(#r.inputs == 1 and #r.outputs == 1, "remap(in, out)")
is("a:0,foo/b:0,foo/d:0", names(r:remap_default().inputs), "remap_default")
is("foo/c:0,foo/c:0,foo/c:0,foo/bar/f:0", names(v:remap_outputs_to_consumers().outputs),
   "remap_outputs_to_consumers counts data consumers")
is("foo/bar/e:0,foo/c:0", names(v:remap_outputs({2, 2, 1}):remap_outputs_make_unique().outputs),
   "remap_outputs_make_unique")
is("foo/bar/g,foo/bar/h", names(ge.sgv(c, e, f):consumers()), "consumers")

local u = ge.sgv(g:op("foo/b"), c, e, f):remap_inputs({}):remap_outputs({2})
is("foo/b,foo/c,foo/bar/e", names(u:remove_unused_ops().ops), "remove_unused_ops")
local cp = v:copy()
ok(cp ~= v and names(cp.ops) == names(v.ops), "copy")

local p = ge.sgv(e, a:output(0))
is("a:0", names(p.passthroughs), "a tensor argument is a passthrough candidate")
ok(p:is_passthrough("a:0") and not p:is_passthrough("foo/c:0"), "is_passthrough")
is("foo/c:0,foo/d:0", names(p.connected_inputs), "connected_inputs")
is("foo/bar/e:0", names(p.connected_outputs), "connected_outputs")
local dump = p:dump()
ok(dump:find('^SubGraphView %(graph="') ~= nil, "dump: the reference's header, with the graph's name")
ok(dump:find("\n** inputs[3]:\n  foo/c:0\n  foo/d:0\n  a:0 *\n", 1, true) ~= nil,
   "dump marks passthroughs")

local ev = ge.sgv()
ok(ev:is_empty() and #ev == 0 and ev.graph == nil, "an empty view")
is("empty view", tostring(ev), "says so")
is("SubGraphView: empty", ev:dump(), "and dumps as the reference")

ok(ge.sgv(v) == v, "make_view of a view is that view")
raises("Graph mismatch", function() ge.sgv(v, {graph = ge.graph()}) end,
       "make_view checks graph=")
is("foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h", names(ge.sgv("^foo/bar/", {graph = g}).ops),
   "make_view with a regex")
local tv = ge.sgv("^foo/bar/e$", "(?#ts)^a:0$", {graph = g})
is("a:0", names(tv.passthroughs), "(?#ts) gives passthroughs")
is("foo/bar/e,foo/bar/f,foo/bar/g,foo/bar/h", names(ge.sgv_scope("foo/bar", g).ops),
   "make_view_from_scope")
is("foo/bar/e,foo/bar/f", names(ge.SubGraphView({e, f}).ops), "SubGraphView")

local g2 = assert(ge.parse(FIXTURE, "graphdef-text"))
local sv = ge.sgv(g2:op("foo/bar/h"))
g2:remove_op(g2:op("foo/bar/h"))
raises("was removed from the graph", function() return sv.ops end,
       "a view notices a removed op (decision 12)")

tap.done()

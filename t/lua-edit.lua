-- lua-edit.lua: ge.edit from Lua: detach, connect, bypass.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises
local lib = require "testlib"
local const, node, ins, names = lib.const, lib.node, lib.ins, lib.names

local FIXTURE = lib.EDITOR_GRAPH .. const("x") .. const("y") .. node("z", "Add", {"x", "y"})

local function fresh() return assert(ge.parse(FIXTURE, "graphdef-text")) end

-- graph_editor's own test_detach
local g = fresh()
local v = ge.sgv(g:op("foo/c"), g:op("a"))
local v2, in_phs, out_phs = ge.detach(v, {control_ios = ge.ControlOutputs(g)})
ok(v2 == v, "detach returns the view, updated in place")
is("a:0,foo/geph__b_0:0", ins(g, "foo/c"), "foo/c reads a and a placeholder for b")
is("foo/geph__b_0:0", names(in_phs), "input placeholders are tensors")
is("foo/geph__c_0:0,geph__a_0:0", names(out_phs), "output placeholders")
is("foo/geph__c_0:0,geph__a_0:0", ins(g, "foo/bar/g"), "outside consumers detached")
is(0, #g:op("foo/bar/h").control_inputs, "control output detached")
is("foo/geph__b_0:0", names(v.inputs), "the view's inputs are the placeholders")
same({2}, in_phs[1].shape, "input placeholders carry the shape (decision 4)")
is("float32", in_phs[1].dtype, "and the dtype")

g = fresh()
v = ge.sgv(g:op("foo/bar/h"))
local _, phs = ge.detach_inputs(v, true)
is("foo/bar/geph__f_0:0,foo/bar/geph__g_0:0", names(phs), "detach_inputs, positional flag")
is(0, #g:op("foo/bar/h").control_inputs, "control inputs detached when asked")

g = fresh()
v = ge.sgv(g:op("foo/c"), g:op("a")):remap_outputs({2, 1})
local out_v, ophs = ge.detach_outputs(v)
is("geph__a_0:0,foo/geph__c_0:0", names(ophs), "detach_outputs pairs placeholders with outputs")
is("foo/geph__c_0:0,geph__a_0:0", ins(g, "foo/bar/g"), "each consumer reads the right one")
is("a:0,foo/c:0", names(out_v.outputs), "the result view")
is(1, #g:op("foo/bar/h").control_inputs, "control outputs kept by default")

g = fresh()
ge.detach_control_inputs(g:op("foo/bar/h"))
is(0, #g:op("foo/bar/h").control_inputs, "detach_control_inputs")
g = fresh()
ge.detach_control_outputs(g:op("foo/c"), ge.ControlOutputs(g))
is(0, #g:op("foo/bar/h").control_inputs, "detach_control_outputs")
raises("ControlOutputs expected", function() ge.detach_control_outputs(g:op("foo/c")) end,
       "detach_control_outputs needs a ControlOutputs")

-- graph_editor's test_connect
g = fresh()
local a, b = ge.connect(ge.sgv(g:op("x"), g:op("y"), g:op("z")),
                        ge.sgv(g:op("foo/bar/e")):remap_inputs({1}))
is("z:0,foo/d:0", ins(g, "foo/bar/e"), "connect")
is("z:0", names(b.inputs), "the second view is updated")
raises("different sizes", function() ge.connect(a, g:op("foo/bar/f")) end,
       "connect checks the counts")
ge.connect(a, ge.sgv(g:op("foo/bar/f")):remap_inputs({2}), {disconnect_first = true})
is("foo/c:0,z:0", ins(g, "foo/bar/f"), "connect with disconnect_first")
is("geph__z_0:0,foo/d:0", ins(g, "foo/bar/e"), "detaches the old consumers first")

-- graph_editor's test_bypass
g = fresh()
local bv, bphs = ge.bypass(ge.sgv(g:op("foo/bar/f")):remap_inputs({1}))
is("foo/c:0,foo/bar/g:0", ins(g, "foo/bar/h"), "bypass")
is("foo/geph__c_0:0", names(bphs), "the bypassed view is fed by placeholders")
ok(bv ~= nil, "and comes back")
raises("different sizes", function() ge.bypass(g:op("foo/c")) end,
       "bypass needs as many inputs as outputs")

tap.done()

-- lua-addop-attrs.lua: the attrs g:add_op gives a new op live with the
-- graph (not one allocation each); they read, change, grow, clone, copy,
-- reorder and save as any op's do.
local tap = require "tap"
local ok, is, same = tap.ok, tap.is, tap.same

local g = ge.graph()
local x = g:add_op{type = "Placeholder", name = "x", attrs = {dtype = "float32"}}
local ops = {}
for i = 1, 40 do
  ops[i] = g:add_op{type = "Cast", name = "c" .. i, inputs = {x:output(0)},
                    attrs = {SrcT = "float32", DstT = "int32",
                             Truncate = i % 2 == 0}}
end
local c = ops[1]
is("float32", (c:attr("SrcT")), "an attr of a new op reads back")
is("int32", (c:attr("DstT")), "and another")
is(false, (c:attr("Truncate")), "and a bool")
same({"DstT", "SrcT", "Truncate"}, c:attr_names(), "attrs in name order")

-- change one, add one (the entries move to the heap), remove one
c:set_attr("DstT", "int64")
c:set_attr("_note", "hello")
is("int64", (c:attr("DstT")), "a changed attr")
is("hello", (c:attr("_note")), "an attr added after the op's own")
is("float32", (c:attr("SrcT")), "the others stay")
c:remove_attr("Truncate")
is(nil, (c:attr("Truncate")), "a removed attr")
same({"DstT", "SrcT", "_note"}, c:attr_names(), "the names then")
for i = 1, 6 do ops[2]:set_attr("_n" .. i, i) end
is(6, (ops[2]:attr("_n6")), "six attrs added to a new op")
is(true, (ops[2]:attr("Truncate")), "its own attrs kept")

-- a clone owns copies: changing the source does not change it
local h = g:clone()
ops[3]:set_attr("SrcT", "float64")
is("float32", (h:op("c3"):attr("SrcT")), "a clone keeps its own bytes")
is("float64", (ops[3]:attr("SrcT")), "the source changed")
is("int64", (h:op("c1"):attr("DstT")), "the clone has the changes made before")
g:close()
collectgarbage()
is("int32", (h:op("c5"):attr("DstT")), "a clone outlives its source")

-- a reorder drops removed ops' storage, the rest survives
h:remove_op("c7")
local order = {}
for _, op in ipairs(h:ops()) do table.insert(order, 1, op) end
h:reorder(order)
is("int32", (h:op("c9"):attr("DstT")), "attrs after a reorder")

-- the bytes saved equal those of ops whose attrs were set one by one
local a, b = ge.graph(), ge.graph()
local pa = a:add_op{type = "Placeholder", name = "p", attrs = {dtype = "float32"}}
a:add_op{type = "Cast", name = "k", inputs = {pa:output(0)},
         attrs = {SrcT = "float32", DstT = "int32", Truncate = false}}
local pb = b:add_op{type = "Placeholder", name = "p"}
pb:set_attr("dtype", "float32")
local kb = b:add_op{type = "Cast", name = "k", inputs = {pb:output(0)}}
kb:set_attr("DstT", "int32")
kb:set_attr("SrcT", "float32")
kb:set_attr("Truncate", false)
is(b:serialize(), a:serialize(), "same GraphDef bytes as set_attr one by one")
ok(#h:serialize() > 0, "the reordered clone serializes")

-- raw_attrs: encoded bytes in the given order, after attrs
local r = ge.graph()
local s = r:add_op{type = "NoOp", name = "s"}
s:set_attr("v", 3, "int")
local three = s:attr_raw("v")
s:set_attr("v", "float32", "type")
local f32 = s:attr_raw("v")
local q = r:add_op{type = "Identity", name = "q", attrs = {T = "float32"},
                   raw_attrs = {"z", three, "b", f32}}
same({"T", "z", "b"}, q:attr_names(), "raw_attrs follow attrs, in order")
is(3, (q:attr("z")), "raw bytes read back")
is(three, q:attr_raw("z"), "byte for byte")
local q2 = r:add_op{type = "Identity", name = "q2", attrs = {T = "float32"}}
q2:set_attr_raw("z", three)
q2:set_attr_raw("b", f32)
local b1, b2 = q:attr_raw("b"), q2:attr_raw("b")
is(b2, b1, "the same bytes as set_attr_raw gives")
tap.raises("given twice", function()
  r:add_op{type = "X", name = "x1", attrs = {T = "float32"},
           raw_attrs = {"T", three}}
end, "a name in attrs and raw_attrs raises")
tap.raises("pairs", function()
  r:add_op{type = "X", name = "x2", raw_attrs = {"T"}}
end, "an odd list raises")
tap.raises("a string of bytes expected", function()
  r:add_op{type = "X", name = "x3", raw_attrs = {"T", 3}}
end, "bytes must be a string")
is(nil, r:op("x1") or r:op("x2") or r:op("x3"), "the graph is unchanged")

tap.done()

-- lua-attr.lua: attr values of every kind between AttrValue and Lua, kind
-- inference, byte-exact round trips, shapes, funcs and tensor values.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises

local g = ge.graph()
-- An op type without an OpDef: kinds come from the values alone.
local op = g:add_op{type = "AttrTest", name = "op"}

-- Sets v (with kind k, or inferred), reads it back, and checks that setting
-- what was read reproduces the same bytes.
local function check(name, v, k, want_kind, want_value, label)
  op:set_attr(name, v, k)
  local got, kind = op:attr(name)
  is(want_kind, kind, label .. ": kind")
  if want_value ~= nil then
    same(want_value, got, label .. ": value")
  end
  local bytes = op:attr_raw(name)
  op:set_attr(name, got, kind)
  is(bytes, op:attr_raw(name), label .. ": same bytes when set back")
  return got
end

-- ---------------------------------------------------------------- scalars
check("s", "hello", nil, "s", "hello", "string")
check("s0", "a\0b\255", nil, "s", "a\0b\255", "bytes with NUL")
check("s1", "", nil, "s", "", "empty string")
check("i", -5, nil, "i", -5, "negative int")
check("i0", 0, nil, "i", 0, "zero int")
check("ibig", math.maxinteger, nil, "i", math.maxinteger, "large int")
check("f", 0.5, nil, "f", 0.5, "float")
check("f0", 0.0, nil, "f", 0.0, "float zero")
check("fi", 3, "f", "f", 3.0, "integer as float with a kind")
is("float", math.type(op:attr("fi")), "f attrs read as Lua floats")
check("finf", -math.huge, nil, "f", -math.huge, "infinite float")
local nz = check("fnz", -0.0, nil, "f", nil, "negative zero")
is("-0.0", string.format("%.1f", nz), "negative zero keeps its sign")
check("b", true, nil, "b", true, "true")
check("b0", false, nil, "b", false, "false")
check("t", "float32", "type", "type", "float32", "dtype")
check("t2", "DT_INT64", "type", "type", "int64", "dtype by enum name")
check("tref", "float32_ref", "type", "type", "float32_ref", "ref dtype")
check("t33", 33, "type", "type", 33, "unnamed dtype as a number")
check("ph", "T", "placeholder", "placeholder", "T", "placeholder")
check("none", nil, "none", "none", nil, "no value set")
is(nil, (op:attr("none")), "an attr with no value reads as nil")

-- ---------------------------------------------------------------- shapes
local s = check("shape", ge.shape{2, 3}, nil, "shape", {2, 3}, "shape")
is("shape", ge.type(s), "shapes read as shape tables")
is("shape [2,3]", tostring(s), "tostring(shape)")
check("shape1", {-1, 3}, "shape", "shape", {-1, 3}, "shape from a list")
local su = check("shapeu", ge.shape(), nil, "shape", {unknown_rank = true},
                 "unknown rank")
is("shape [*]", tostring(su), "tostring of an unknown rank")
check("shape0", ge.shape{}, nil, "shape", {}, "scalar shape")
check("shapez", ge.shape{0, 5}, nil, "shape", {0, 5}, "zero dim")
check("shapen", {2, 3, names = {"batch", ""}}, "shape", "shape",
      {2, 3, names = {"batch", ""}}, "named dims")
ok(ge.shape{2, 3} == ge.shape{2, 3}, "shapes compare by value")
ok(ge.shape{2, 3} ~= ge.shape{3, 2}, "different shapes differ")
ok(ge.shape() ~= ge.shape{}, "unknown rank is not a scalar")

-- ---------------------------------------------------------------- lists
check("ls", {"a", "b"}, nil, "list(s)", {"a", "b"}, "list(s)")
check("li", {1, -2, 3}, nil, "list(i)", {1, -2, 3}, "list(i)")
check("lf", {0.5, 1.5}, nil, "list(f)", {0.5, 1.5}, "list(f)")
check("lb", {true, false}, nil, "list(b)", {true, false}, "list(b)")
check("lt", {"float32", "int32"}, "list(type)", "list(type)",
      {"float32", "int32"}, "list(type)")
check("lsh", {ge.shape{1}, ge.shape()}, nil, "list(shape)",
      {{1}, {unknown_rank = true}}, "list(shape)")
check("le", {}, nil, "list", {}, "empty list")
check("lfi", {1, 2}, "list(f)", "list(f)", {1.0, 2.0}, "ints in list(f)")
check("lint", {1, 2}, "list(int)", "list(i)", {1, 2},
      "OpDef spelling of a kind")
local v1 = ge.tensor_value("int32", {2}, {1, 2})
local lt = check("ltensor", {v1, v1}, nil, "list(tensor)", nil, "list(tensor)")
ok(lt[1] == v1 and lt[2] == v1, "list(tensor) values")
raises("element 2", function() op:set_attr("bad", {1, "x"}) end,
       "a mixed list is an error")

-- ---------------------------------------------------------------- funcs
local f = check("fn", {name = "body", attr = {T = "float32", N = 2},
                       kinds = {T = "type"}}, nil, "func", nil, "func")
is("body", f.name, "func name")
same({T = "float32", N = 2}, f.attr, "func attrs")
same({T = "type", N = "i"}, f.kinds, "func attr kinds")
is("func", ge.type(f), "funcs read as func tables")
is('func "body"', tostring(f), "tostring(func)")
check("fn2", "cond", "func", "func", nil, "func from a name")
is("cond", op:attr("fn2").name, "its name")
check("lfn", {{name = "a"}, {name = "b"}}, "list(func)", "list(func)", nil,
      "list(func)")

-- ---------------------------------------------------------------- inference
op:set_attr("keep", "float32", "type")
op:set_attr("keep", "int64")
same({"int64", "type"}, {op:attr("keep")}, "an attr keeps its kind")
op:set_attr("keep", "now a string", "s")
same({"now a string", "s"}, {op:attr("keep")}, "an explicit kind wins")
raises("attr 'keep'", function() op:set_attr("keep", 5) end,
       "a value that does not fit the attr's kind is an error")
raises("unknown kind 'bogus'", function() op:set_attr("x", 1, "bogus") end,
       "an unknown kind is an error")
raises("a value is needed", function() op:set_attr("x", nil) end,
       "nil is not a value")
raises("cannot be an attr value", function() op:set_attr("x", print) end,
       "a function is not a value")
is(true, op:remove_attr("keep"), "remove_attr")
is(nil, op:attr("keep"), "a removed attr is gone")
is(false, op:remove_attr("keep"), "removing it again says false")
-- OpDef kinds for known op types
local cast = g:add_op{type = "Cast", inputs = {}, attrs = {
  SrcT = "float32", DstT = "int32", Truncate = false}}
same({"float32", "type"}, {cast:attr("SrcT")}, "OpDef says SrcT is a type")
local conv = g:add_op{type = "Conv2D", attrs = {
  T = "float32", strides = {1, 1, 1, 1}, padding = "SAME",
  explicit_paddings = {}, data_format = "NHWC"}}
same({{1, 1, 1, 1}, "list(i)"}, {conv:attr("strides")}, "list(int) from OpDef")
same({"SAME", "s"}, {conv:attr("padding")}, "string from OpDef")
local names = conv:attr_names()
same({"T", "data_format", "explicit_paddings", "padding", "strides"}, names,
     "add_op writes attrs sorted by name")
raises("expected an integer", function()
  conv:set_attr("explicit_paddings", {"x"})
end, "an empty list attr takes its element kind from the OpDef")
op:set_attr("empty", {})
op:set_attr("empty", {"a"})
same({{"a"}, "list(s)"}, {op:attr("empty")},
     "without an OpDef, the value decides what an empty list holds")
op:remove_attr("empty")
local k = g:add_op{type = "AttrTest", attrs = {n = 3}, attr_kinds = {n = "f"}}
same({3.0, "f"}, {k:attr("n")}, "add_op attr_kinds")

-- ---------------------------------------------------------------- copy
local dst = g:add_op{type = "AttrTest", name = "dst"}
for _, name in ipairs(op:attr_names()) do
  dst:set_attr(name, op:attr(name))
end
local all_same = true
for _, name in ipairs(op:attr_names()) do
  if dst:attr_raw(name) ~= op:attr_raw(name) then
    all_same = false
    tap.diag("differs: " .. name)
  end
end
ok(all_same, "set_attr(name, op:attr(name)) copies every attr exactly")
dst:set_attr_raw("raw", op:attr_raw("lt"))
same({"float32", "int32"}, dst:attr("raw"), "set_attr_raw")

-- ---------------------------------------------------------------- text
local text = [[
node {
  name: "c"
  op: "Const"
  attr { key: "value" value { tensor {
    dtype: DT_FLOAT tensor_shape { dim { size: 3 } } float_val: 1.5 } } }
  attr { key: "dtype" value { type: DT_FLOAT } }
}
node {
  name: "d"
  op: "Const"
  attr { key: "value" value { tensor {
    dtype: DT_INT32 tensor_shape { dim { size: 2 } dim { size: 2 } }
    tensor_content: "\001\000\000\000\002\000\000\000\003\000\000\000\377\377\377\377" } } }
}
node {
  name: "e"
  op: "Const"
  attr { key: "value" value { tensor {
    dtype: DT_HALF tensor_shape { dim { size: 2 } } half_val: 15360 half_val: 14336 } } }
}
node {
  name: "s"
  op: "Const"
  attr { key: "value" value { tensor {
    dtype: DT_STRING tensor_shape { dim { size: 2 } } string_val: "ab" string_val: "\000z" } } }
}
node {
  name: "i"
  op: "Const"
  attr { key: "value" value { tensor {
    dtype: DT_INT64 tensor_shape { dim { size: 4 } } int64_val: 7 int64_val: -8 } } }
}
node {
  name: "fn"
  op: "PartitionedCall"
  attr { key: "f" value { func { name: "body"
    attr { key: "b" value { i: 1 } }
    attr { key: "a" value { type: DT_FLOAT } } } } }
}
]]
local p = assert(ge.parse(text, "pbtxt"))
local before = p:serialize()
for _, o in ipairs(p:ops()) do
  for _, name in ipairs(o:attr_names()) do o:set_attr(name, o:attr(name)) end
end
is(before, p:serialize(), "setting back every attr of a parsed graph "
   .. "leaves its bytes unchanged")
local cv = p:op("c"):attr("value")
same({1.5, 1.5, 1.5}, cv:totable(), "one float_val fills the shape")
local dv = p:op("d"):attr("value")
same({1, 2, 3, -1}, dv:totable(), "tensor_content, little-endian int32")
same({2, 2}, dv.shape, "value shape")
same({1.0, 0.5}, p:op("e"):attr("value"):totable(), "half_val bit patterns")
same({"ab", "\0z"}, p:op("s"):attr("value"):totable(), "string_val")
same({7, -8, -8, -8}, p:op("i"):attr("value"):totable(),
     "typed values repeat the last one")
local fa = p:op("fn"):attr("f")
same({a = "float32", b = 1}, fa.attr, "func attrs from text")
fa.attr.c = true
p:op("fn"):set_attr("f", fa)
local ff = p:op("fn"):attr("f")
same({a = "float32", b = 1, c = true}, ff.attr, "an edited func attr")
same({a = "type", b = "i", c = "b"}, ff.kinds, "with its kinds")

-- ---------------------------------------------------------------- values
local v = ge.tensor_value("float32", {2, 3}, {1, 2, 3, 4, 5, 6})
is("value", ge.type(v), "ge.type(value)")
is("float32", v.dtype, "v.dtype")
same({2, 3}, v.shape, "v.shape")
is(6, #v, "#v counts elements")
is(1.0, v[1], "v[1] is the first element")
is(6.0, v[6], "v[6]")
is(nil, v[7], "past the end is nil")
is(nil, v[0], "v[0] is nil")
is("value float32[2,3] {1, 2, 3, 4, 5, 6}", tostring(v), "tostring(value)")
raises("read-only", function() v[1] = 0 end, "values are read-only")
local nested = ge.tensor_value("int32", nil, {{1, 2}, {3, 4}, {5, 6}})
same({3, 2}, nested.shape, "nesting gives the shape")
same({1, 2, 3, 4, 5, 6}, nested:totable(), "v:totable() is flat")
is("integer", math.type(nested[1]), "int32 elements are integers")
local scalar = ge.tensor_value("int64", nil, 5)
same({}, scalar.shape, "a single value is a scalar")
is(5, scalar[1], "its element")
local fill = ge.tensor_value("float32", {2, 2}, 7)
same({7, 7, 7, 7}, fill:totable(), "one value fills the shape")
ok(fill == ge.tensor_value("float32", {2, 2}, {7, 7, 7, 7}),
   "values compare by content, not storage")
ok(fill ~= ge.tensor_value("float64", {2, 2}, 7), "dtype matters")
ok(fill ~= ge.tensor_value("float32", {4}, 7), "shape matters")
same({0, 0, 0}, ge.tensor_value("float32", {3}):totable(),
     "no elements means zeros")
local str = ge.tensor_value("string", {3}, {"a", "b\0c", ""})
same({"a", "b\0c", ""}, str:totable(), "string values")
is('value string[3] {"a", "b\\x00c", ""}', tostring(str),
   "tostring quotes strings")
same({true, false, true}, ge.tensor_value("bool", nil, {true, false, true})
     :totable(), "bool values")
same({-128, 127, 0}, ge.tensor_value("int8", nil, {-128, 127, 0}):totable(),
     "int8 extremes")
same({0, 65535}, ge.tensor_value("uint16", nil, {0, 65535}):totable(),
     "uint16 extremes")
raises("out of range for uint8", function()
  ge.tensor_value("uint8", nil, {1, 256})
end, "out-of-range integers are refused")
raises("expected an integer", function()
  ge.tensor_value("int32", nil, {1.5, 2})
end, "fractions are refused for integer dtypes")
raises("5 elements given for a shape of 4", function()
  ge.tensor_value("float32", {2, 2}, {1, 2, 3, 4, 5})
end, "element count must match")
raises("unknown dtype", function() ge.tensor_value("float33", {1}, 1) end,
       "unknown dtype")
raises("ragged", function() ge.tensor_value("int32", nil, {{1, 2}, {3}}) end,
       "ragged nesting")
same({0.1}, ge.tensor_value("float64", nil, {0.1}):totable(),
     "float64 is exact")
is(0.100000001490116, tonumber(string.format("%.15g",
   ge.tensor_value("float32", nil, 0.1)[1])), "float32 rounds")
-- half: nearest even, subnormals, overflow
local h = ge.tensor_value("float16", nil,
                          {1.0, 0.1, 65504, 2^-24, 1e6, -2.5, 1 + 2^-11})
same({1.0, 0.0999755859375, 65504, 2^-24, math.huge, -2.5, 1.0},
     h:totable(), "float16 conversion")
local bf = ge.tensor_value("bfloat16", nil, {1 + 2^-8, 1 + 3 * 2^-8, math.pi})
same({1.0, 1.015625, 3.140625}, bf:totable(),
     "bfloat16 rounds to nearest even")
local cx = ge.tensor_value("complex64", nil, {{1, 2}, {3, -4}, 5})
same({{1, 2}, {3, -4}, {5, 0}}, cx:totable(), "complex64 pairs")
is("value complex64[3] {(1,2), (3,-4), (5,0)}", tostring(cx),
   "tostring(complex)")
local u32 = ge.tensor_value("uint32", nil, {4294967295})
is(4294967295, u32[1], "uint32 max")

-- values survive the graph round trip
local vg = ge.graph()
local cst = vg:add_op{type = "Const", name = "k", attrs = {
  dtype = "float16", value = h}}
local back = assert(ge.parse(vg:serialize(), "graphdef"))
ok(back:op("k"):attr("value") == h, "a value survives serialization")
same({7}, {#back:op("k"):attr("value")}, "with its element count")
is("float16", back:tensor("k:0").dtype, "and the tensor dtype")
ok(cst ~= nil, "Const with a float16 value")

tap.done()

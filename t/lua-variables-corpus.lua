-- lua-variables-corpus.lua: variables, checkpoints and freezing on real
-- TensorFlow models: half_plus_two (reference variables), its resource-
-- variable twin from TF Serving, and tensorflow-onnx's regression model
-- (a checkpoint, its MetaGraphDef and the frozen.pb TensorFlow made).
local tap = require "tap"
local ok, is, same = tap.ok, tap.is, tap.same

local C = tap.corpus()
if not C then tap.skip_all("corpus not found") end
local HPT = C .. "/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/half_plus_two/00000123"
local HPT_RES = C .. "/tensorflow__serving/tensorflow_serving/servables/tensorflow/testdata/"
  .. "saved_model_half_plus_two_cpu_with_saved_model_config/00000123"
local REG = C .. "/onnx__tensorflow-onnx/tests/models/regression"

local VAROPS = {VariableV2 = true, Variable = true, VarHandleOp = true}
local function count_types(g, set)
  local n = 0
  for _, op in ipairs(g:ops()) do if set[op.type] then n = n + 1 end end
  return n
end
local function names(list)
  local t = {}
  for i, x in ipairs(list) do t[i] = x.name end
  return t
end

-- ---------------------------------------------------------------- half_plus_two
local g = assert(ge.load(HPT))
local vs = g:variables()
same({"a", "b", "c", "filename_tensor"}, names(vs), "half_plus_two: variables in node order")
same({"trainable_variables", "variables"}, vs[1].collections, "a's collections (file order)")
is(true, vs[1].trainable, "a is trainable")
is(false, vs[4].trainable, "filename_tensor is in no collection")
ok(vs[2].snapshot == g:tensor("b/read:0"), "b's snapshot from its VariableDef")
ok(vs[3].initializer == g:op("c/Assign"), "c's initializer")
is("ref", vs[1].kind, "reference variables")

local r = assert(g:checkpoint())
same({"a", "b", "c"}, r:names(), "half_plus_two's checkpoint holds a, b, c")
is(0.5, r:read("a")[1], "a = 0.5")
is(2.0, r:read("b")[1], "b = 2.0")
is(3.0, r:read("c")[1], "c = 3.0")
is("float32", r:entry("a").dtype, "a is float32")
ok(r:read("a") == ge.tensor_value("float32", {}, 0.5), "a read as a value")

local f = assert(ge.freeze(g, {outputs = {"y", "y2", "y3"}}))
is(0, count_types(f, VAROPS), "frozen half_plus_two: no variable ops")
is(0, count_types(f, {Assign = true, SaveV2 = true, RestoreV2 = true, NoOp = true}),
   "no initializers, savers or init ops")
for name, want in pairs{a = 0.5, b = 2.0, c = 3.0} do
  local op = f:op(name)
  ok(op and op.type == "Const" and op:attr("value") == ge.tensor_value("float32", {}, want),
     "frozen " .. name .. " is a Const " .. want)
end
ok(f:op("y").inputs[2] == f:tensor("b/read:0"), "y still reads b/read")
ok(f:validate(), "the frozen graph validates")
local dflt = assert(ge.freeze(g))
is(#f, #dflt, "outputs default to the signatures' (y, y2, y3)")

-- ---------------------------------------------------------------- resource variables
local gr = assert(ge.load(HPT_RES))
local rv = gr:variables()
same({"a", "b", "c", "a2", "c2", "filename_tensor"}, names(rv), "resource model: variables")
is("resource", rv[1].kind, "resource kind")
ok(rv[1].snapshot == gr:tensor("a/Read/ReadVariableOp:0"), "the read from the VariableDef")
ok(rv[1].initial_value == gr:tensor("a/Initializer/initial_value:0"), "initial value")
local fr = assert(ge.freeze(gr))
is(0, count_types(fr, VAROPS), "frozen resource model: no variable ops")
is(0, count_types(fr, {ReadVariableOp = true, AssignVariableOp = true}), "no resource ops")
for name, want in pairs{a = 0.5, b = 2.0, c = 3.0, a2 = 0.5, c2 = 3.0} do
  local op = fr:op(name)
  ok(op and op.type == "Const" and op:attr("value") == ge.tensor_value("float32", {}, want),
     "frozen " .. name .. " = " .. want)
end
is("Identity", fr:op("Mul/ReadVariableOp").type, "reads became Identity ops")
ok(fr:validate(), "the frozen resource model validates")

-- ---------------------------------------------------------------- regression
local meta = assert(ge.load(REG .. "/checkpoint/model.meta"))
local ck = assert(ge.checkpoint.open(REG .. "/checkpoint"))
is(REG .. "/checkpoint/model", ck.prefix, "the checkpoint state file gives the prefix")
local fz = assert(ge.freeze(meta, {checkpoint = ck, outputs = {"pred"}}))
for _, e in ipairs(ck:list()) do
  local op = fz:op(e.name)
  ok(op and op.type == "Const" and op:attr("value") == ck:read(e.name),
     "regression: Const " .. e.name .. " equals the checkpoint's tensor")
end
local tf = assert(ge.load(REG .. "/graphdef/frozen.pb"))
local function shape_of(g2)
  local t = {}
  for _, op in ipairs(g2:ops()) do
    local ins = {}
    for _, x in ipairs(op.inputs) do ins[#ins + 1] = x.name end
    t[#t + 1] = op.name .. " " .. op.type .. " " .. table.concat(ins, ",")
  end
  return t
end
same(shape_of(tf), shape_of(fz), "the same ops, types and inputs as TensorFlow's frozen.pb")
for _, name in ipairs{"W", "b"} do
  ok(fz:op(name):attr("value") == tf:op(name):attr("value"),
     name .. " has frozen.pb's value")
end
same(tf:op("W"):attr_names(), fz:op("W"):attr_names(), "the Const's attrs are frozen.pb's")
-- (the MetaGraphDef's ops carry _output_shapes, which freezing keeps)
local function attrs_but_shapes(op)
  local t = {}
  for _, n in ipairs(op:attr_names()) do
    if n ~= "_output_shapes" then t[#t + 1] = n end
  end
  return t
end
same(tf:op("W/read"):attr_names(), attrs_but_shapes(fz:op("W/read")), "the read keeps T and _class")
-- the SavedModel of the same model freezes the same way
local fs = assert(ge.freeze(assert(ge.load(REG .. "/saved_model")), {outputs = {"pred"}}))
same(shape_of(tf), shape_of(fs), "freezing the SavedModel gives the same graph")

tap.done()

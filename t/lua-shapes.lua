-- lua-shapes.lua: shape inference from Lua: t.shape and t.dtype where
-- nothing is recorded, ge.infer_shapes with input overrides and its
-- report, g:validate{shapes = true}, the set_input_shape and
-- add_output_shapes recipes, strip_unused_nodes giving new Placeholders
-- their inferred shapes.
local tap = require "tap"
local lib = require "testlib"
local ok, is, same = tap.ok, tap.is, tap.same

local TXT = [[
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "shape" value { shape { dim { size: -1 } dim { size: 4 } } } } }
node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT
    tensor_shape { dim { size: 4 } dim { size: 2 } } float_val: 1 } } } }
node { name: "mm" op: "MatMul" input: "x" input: "w"
  attr { key: "T" value { type: DT_FLOAT } } }
node { name: "t" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32
    tensor_shape { dim { size: 2 } } int_val: [-1, 1] } } } }
node { name: "r" op: "Reshape" input: "mm" input: "t"
  attr { key: "T" value { type: DT_FLOAT } } }
node { name: "custom" op: "MyCustomOp" input: "r" }
]]

local g = ge.parse(TXT, "pbtxt")
same({-1, 2}, g:tensor("mm:0").shape, "t.shape inferred for MatMul")
same({-1, 1}, g:tensor("r:0").shape, "and through a Reshape with -1")
local relu = g:add_op{type = "Relu6", name = "relu", inputs = {g:tensor("mm:0")}}
is("float32", relu:output(0).dtype, "an op added without T gets its dtype")
same({-1, 2}, relu:output(0).shape, "and its shape")
is('tensor "relu:0" float32[?,2]', tostring(relu:output(0)), "tostring shows it")

local unknown, why = ge.infer_shapes(g)
is(why.outputs - why.known, unknown, "infer_shapes: how many are not fully known")
is(1, why.no_shape_function, "one without a shape function")
is("MyCustomOp:1", why.types, "named by type")
ok(why.unknown_input >= 4, "the rest follow an unknown input")
is(nil, why.message, "no error")

unknown, why = ge.infer_shapes(g, {inputs = {x = {8, 4}}})
is(1, unknown, "with x = [8,4] only the custom op stays unknown")
same({16, 1}, g:tensor("r:0").shape, "the batch propagates ([8,2] into [-1,1])")
unknown, why = ge.infer_shapes(g, {inputs = {x = "3x5"}})
ok(why.message and why.message:find("op 'mm' %(MatMul%): inner dimensions differ"),
   "an impossible input shape names the op: " .. tostring(why.message))
is(1, why.error, "one output in error")
g:remove_op(relu)
local good, problems = g:validate{shapes = true}
ok(not good and problems[1]:find("'mm' %(MatMul%)"), "validate{shapes=true} reports it")
local plain, pp = g:validate()
ok(plain, "plain validate stays structural")
if not plain then tap.diag(table.concat(pp, "\n")) end
ok(not pcall(ge.infer_shapes, g, {inputs = {nope = {1}}}), "an unknown input name is an error")
local okw, errw = pcall(ge.infer_shapes, g, {inputs = {w = {1}}})
ok(not okw and tostring(errw):find("'w' is a Const, not a Placeholder"),
   "so is an input that is not a Placeholder")
ge.infer_shapes(g, {inputs = {}})
same({-1, 1}, g:tensor("r:0").shape, "inputs = {} drops the overrides")

-- recipes
local g2 = ge.parse(TXT, "pbtxt")
lib.run_recipe("set_input_shape", g2, {"batch=16"})
same({16, 4}, g2:op("x"):attr("shape"), "set_input_shape batch=16 rewrites the Placeholder")
same({32, 1}, g2:tensor("r:0").shape, "and it propagates")
local g3 = ge.parse(TXT, "pbtxt")
lib.run_recipe("set_input_shape", g3, {"shapes=x:2x4"})
same({4, 1}, g3:tensor("r:0").shape, "set_input_shape shapes=x:2x4")
local g4 = ge.parse(TXT, "pbtxt")
local okk, err = pcall(lib.run_recipe, "set_input_shape", g4, {"shapes=x:2x5"})
ok(not okk and tostring(err):find("op 'mm' %(MatMul%)"),
   "an impossible shape fails the recipe naming the op: " .. tostring(err))
okk, err = pcall(lib.run_recipe, "set_input_shape", g4, {"shapes=w:2x5"})
ok(not okk and tostring(err):find("not a Placeholder"), "only Placeholders")

local g5 = ge.parse(TXT, "pbtxt")
lib.run_recipe("add_output_shapes", g5)
local s = g5:op("r"):attr("_output_shapes")
ok(s and #s == 1 and s[1][1] == -1 and s[1][2] == 1,
   "add_output_shapes records [?,1] on the Reshape")
local g6 = assert(ge.parse(g5:serialize()))
same({-1, 1}, g6:tensor("r:0").shape, "the record is read back")

-- strip_unused_nodes: the new Placeholder takes the inferred shape
local g7 = ge.parse(TXT, "pbtxt")
lib.run_recipe("strip_unused_nodes", g7, {"inputs=mm", "outputs=r"})
is("Placeholder", g7:op("mm").type, "strip_unused_nodes: mm is a Placeholder")
same({-1, 2}, g7:op("mm"):attr("shape"), "with the inferred shape [?,2]")

tap.done()

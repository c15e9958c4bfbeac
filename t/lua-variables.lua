-- lua-variables.lua: g:variables() on a graph the test builds (reference
-- and resource variables, a saver naming their checkpoint keys), and
-- ge.freeze of that graph from a checkpoint the test writes.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises

local dir = tap.tmpdir()
local F = "float32"

local function build()
  local g = ge.graph()
  g:add_op{type = "Placeholder", name = "x", attrs = {dtype = F, shape = ge.shape{-1, 2}}}
  -- a reference variable
  g:add_op{type = "Const", name = "w/initial_value",
           attrs = {dtype = F, value = ge.tensor_value(F, {2}, {0, 0})}}
  g:add_op{type = "VariableV2", name = "w",
           attrs = {dtype = F, shape = ge.shape{2}, container = "", shared_name = ""}}
  g:add_op{type = "Assign", name = "w/Assign", inputs = {"w", "w/initial_value"},
           attrs = {T = F, _class = {"loc:@w"}}}
  g:add_op{type = "Identity", name = "w/read", inputs = {"w"},
           attrs = {T = F, _class = {"loc:@w"}}}
  -- a resource variable
  g:add_op{type = "Const", name = "v/Initializer/initial_value",
           attrs = {dtype = F, value = ge.tensor_value(F, {}, 0)}}
  g:add_op{type = "VarHandleOp", name = "v",
           attrs = {dtype = F, shape = ge.shape{}, shared_name = "v", container = ""}}
  g:add_op{type = "AssignVariableOp", name = "v/Assign",
           inputs = {"v", "v/Initializer/initial_value"}, attrs = {dtype = F}}
  g:add_op{type = "ReadVariableOp", name = "v/Read/ReadVariableOp", inputs = {"v"},
           attrs = {dtype = F}}
  g:add_op{type = "ReadVariableOp", name = "add/ReadVariableOp", inputs = {"v"},
           control_inputs = {"v/Assign"}, attrs = {dtype = F, _class = {"loc:@v"}},
           device = "/device:CPU:0"}
  -- the model
  g:add_op{type = "Mul", name = "mul", inputs = {"x", "w/read"}, attrs = {T = F},
           device = "/device:GPU:0"}
  g:add_op{type = "Add", name = "y", inputs = {"mul", "add/ReadVariableOp"}, attrs = {T = F}}
  -- a variable the outputs do not need, absent from the checkpoint
  g:add_op{type = "VariableV2", name = "step", attrs = {dtype = "int64", shape = ge.shape{}}}
  g:add_op{type = "Const", name = "one", attrs = {dtype = "int64",
           value = ge.tensor_value("int64", {}, 1)}}
  g:add_op{type = "AssignAdd", name = "inc", inputs = {"step", "one"}, attrs = {T = "int64"}}
  g:add_op{type = "NoOp", name = "init", control_inputs = {"w/Assign", "v/Assign"}}
  -- a saver whose keys differ from the variable names
  g:add_op{type = "Const", name = "save/Const",
           attrs = {dtype = "string", value = ge.tensor_value("string", {}, "model")}}
  g:add_op{type = "Const", name = "save/SaveV2/tensor_names",
           attrs = {dtype = "string", value = ge.tensor_value("string", {2}, {"model/v", "model/w"})}}
  g:add_op{type = "Const", name = "save/SaveV2/shape_and_slices",
           attrs = {dtype = "string", value = ge.tensor_value("string", {2}, {"", ""})}}
  g:add_op{type = "SaveV2", name = "save/SaveV2",
           inputs = {"save/Const", "save/SaveV2/tensor_names", "save/SaveV2/shape_and_slices",
                     "v/Read/ReadVariableOp", "w"},
           attrs = {dtypes = {F, F}}}
  return g
end

-- ---------------------------------------------------------------- variables
local g = build()
local vs = g:variables()
is(3, #vs, "three variables")
same({"w", "v", "step"}, {vs[1].name, vs[2].name, vs[3].name}, "in node order")
local w, v, step = vs[1], vs[2], vs[3]
is("ref", w.kind, "w is a reference variable")
is("resource", v.kind, "v is a resource variable")
ok(w.op == g:op("w"), "w.op")
ok(w.initializer == g:op("w/Assign"), "w.initializer")
ok(w.snapshot == g:tensor("w/read:0"), "w.snapshot is the read")
ok(w.initial_value == g:tensor("w/initial_value:0"), "w.initial_value")
is("float32", w.dtype, "w.dtype is the value type")
same({2}, {w.shape[1]}, "w.shape")
is(1, #w.shape, "w has rank 1")
ok(v.initializer == g:op("v/Assign"), "v.initializer")
ok(v.snapshot == g:tensor("v/Read/ReadVariableOp:0"), "v.snapshot prefers the TF name")
ok(v.initial_value == g:tensor("v/Initializer/initial_value:0"), "v.initial_value")
is(0, #v.shape, "v is a scalar")
is(nil, w.trainable, "trainable is unknown without collections")
same({}, w.collections, "no collections")
is("model/w", w.key, "w's checkpoint key from the saver")
is("model/v", v.key, "v's key through its read")
is("step", step.key, "a variable no saver names keeps its name as key")
is(nil, step.initializer, "AssignAdd is not an initializer")
is('variable "w" float32[2] ref', tostring(w), "tostring of a variable")
ok(g:variable("v").op == g:op("v"), "g:variable(name)")
is(nil, g:variable("y"), "g:variable of a non-variable")

-- ---------------------------------------------------------------- freeze
local prefix = dir .. "/model.ckpt"
assert(ge.checkpoint.write(prefix, {
  ["model/w"] = ge.tensor_value(F, {2}, {0.5, -1.5}),
  ["model/v"] = ge.tensor_value(F, {}, 3),
}))
local before = g:serialize()
local f = assert(ge.freeze(g, {checkpoint = prefix, outputs = {"y"}}))
is(before, g:serialize(), "the source graph is unchanged")
is(7, #f, "the frozen graph keeps what y needs")
local types = {}
for _, op in ipairs(f:ops()) do types[op.name] = op.type end
same({x = "Placeholder", w = "Const", ["w/read"] = "Identity", v = "Const",
      ["add/ReadVariableOp"] = "Identity", mul = "Mul", y = "Add",
      ["v/Read/ReadVariableOp"] = nil}, types, "ops and types after freezing")
ok(f:op("w"):attr("value") == ge.tensor_value(F, {2}, {0.5, -1.5}),
   "w holds its checkpoint value")
ok(f:op("v"):attr("value") == ge.tensor_value(F, {}, 3), "v holds its value")
is("float32", f:op("w"):attr("dtype"), "the Const's dtype")
same({"dtype", "value"}, f:op("w"):attr_names(), "the Const has only dtype and value")
same({"T", "_class"}, f:op("add/ReadVariableOp"):attr_names(),
     "the resource read became an Identity keeping _class")
is(0, #f:op("add/ReadVariableOp").control_inputs, "its control inputs are dropped")
ok(f:op("mul").inputs[2] == f:tensor("w/read:0"), "consumers read the same names")
is("", f:op("mul").device, "devices are cleared by default")
is(0, #f:variables(), "no variables are left")
ok(f:validate(), "validate() is true")

local f2 = assert(ge.freeze(g, {checkpoint = prefix, outputs = {g:tensor("y:0")},
                               clear_devices = false}))
is("/device:GPU:0", f2:op("mul").device, "clear_devices = false keeps devices")
local r = assert(ge.checkpoint.open(prefix))
ok(ge.freeze(g, {checkpoint = r, outputs = {g:op("y")}}), "a reader as checkpoint")

-- failures leave no output
local missing = dir .. "/partial.ckpt"
assert(ge.checkpoint.write(missing, {["model/w"] = ge.tensor_value(F, {2}, {1, 2})}))
local nf, err = ge.freeze(g, {checkpoint = missing, outputs = {"y"}})
ok(nf == nil and err:find("no tensor 'model/v' for variable 'v'", 1, true),
   "a variable missing from the checkpoint: " .. tostring(err))
local wrong = dir .. "/wrong.ckpt"
assert(ge.checkpoint.write(wrong, {["model/w"] = ge.tensor_value(F, {3}, {1, 2, 3}),
                                   ["model/v"] = ge.tensor_value(F, {}, 1)}))
nf, err = ge.freeze(g, {checkpoint = wrong, outputs = {"y"}})
ok(nf == nil and err:find("shape", 1, true), "a value of the wrong shape: " .. tostring(err))
nf, err = ge.freeze(g, {checkpoint = prefix, outputs = {"inc"}})
ok(nf == nil and err:find("'inc'", 1, true), "outputs that write a variable: " .. tostring(err))

-- a corrupt checkpoint
local bad = dir .. "/bad.ckpt"
local slurp = tap.slurp
local function spit(p, s) local h = assert(io.open(p, "wb")) h:write(s) h:close() end
spit(bad .. ".index", slurp(prefix .. ".index"))
local data = slurp(prefix .. ".data-00000-of-00001")
spit(bad .. ".data-00000-of-00001", data:sub(1, -2) .. string.char((data:byte(-1) + 1) % 256))
nf, err = ge.freeze(g, {checkpoint = bad, outputs = {"y"}})
ok(nf == nil and err:find("checksum", 1, true) and err:find(bad .. ".data-00000-of-00001", 1, true)
   and err:find("tensor '", 1, true), "a bad checksum names the file and the tensor: " .. tostring(err))
nf, err = ge.freeze(g, {checkpoint = dir .. "/none", outputs = {"y"}})
ok(nf == nil and err:find(dir .. "/none", 1, true), "a missing checkpoint")

raises("no outputs", function() ge.freeze(g, {checkpoint = prefix}) end,
       "outputs are needed without signatures")
raises("nope", function() ge.freeze(g, {checkpoint = prefix, outputs = {"nope"}}) end,
       "an unknown output raises")

-- a missing shard and a truncated index, through freeze
local shardless = dir .. "/shardless.ckpt"
spit(shardless .. ".index", slurp(prefix .. ".index"))
nf, err = ge.freeze(g, {checkpoint = shardless, outputs = {"y"}})
ok(nf == nil and err:find(shardless .. ".data-00000-of-00001", 1, true),
   "a missing shard names the shard: " .. tostring(err))
local short = dir .. "/short.ckpt"
local idx = slurp(prefix .. ".index")
spit(short .. ".index", idx:sub(1, #idx - 9))
spit(short .. ".data-00000-of-00001", slurp(prefix .. ".data-00000-of-00001"))
nf, err = ge.freeze(g, {checkpoint = short, outputs = {"y"}})
ok(nf == nil and err:find(short .. ".index", 1, true),
   "a truncated index names the index: " .. tostring(err))

-- ---------------------------------------------------------------- plans
-- a SavedModel with a variable duplicated by hand: the checkpoint written
-- with it holds the duplicate's value
local sm = dir .. "/sm"
assert(g:save(sm, {format = "savedmodel"}))
os.execute("mkdir -p '" .. sm .. "/variables'")
assert(ge.checkpoint.write(sm .. "/variables/variables", {
  ["model/w"] = ge.tensor_value(F, {2}, {0.5, -1.5}),
  ["model/v"] = ge.tensor_value(F, {}, 3),
}))
local h = assert(ge.load(sm))
same({}, h:checkpoint_plan(), "no plan at first")
h:add_op{type = "VariableV2", name = "copy/w", attrs = {dtype = F, shape = ge.shape{2}}}
h:add_op{type = "Identity", name = "copy/w/read", inputs = {"copy/w"}, attrs = {T = F}}
h:add_op{type = "Mul", name = "copy/mul", inputs = {"x", "copy/w/read"}, attrs = {T = F}}
h:add_checkpoint_copy("model/w", "copy/w")
same({{from = "model/w", to = "copy/w"}}, h:checkpoint_plan(), "the plan")
local fc = assert(ge.freeze(h, {outputs = {"copy/mul"}}))
ok(fc:op("copy/w"):attr("value") == ge.tensor_value(F, {2}, {0.5, -1.5}),
   "freeze reads the duplicate through the plan")
local sm2 = dir .. "/sm2"
ok(h:save(sm2), "save the SavedModel")
local r2 = assert(ge.checkpoint.open(sm2))
same({"copy/w", "model/v", "model/w"}, r2:names(), "its checkpoint holds the duplicate")
ok(r2:read("copy/w") == r2:read("model/w"), "with the source's value")
local h2 = assert(ge.load(sm2))
ok(h2:op("copy/mul") ~= nil, "the saved graph has the copy")
-- saving again over it: whole directory swapped
ok(h:save(sm2), "save over an existing directory")
ok(assert(ge.checkpoint.open(sm2)):entry("copy/w"), "still complete")
local okp, perr = h:save(sm, {})
ok(not okp and perr:find("refusing", 1, true), "refuses to overwrite its source")
ok(h:save(dir .. "/plain.pb"), "other formats save as before")

-- ---------------------------------------------------------------- editing
local e = build()
e:rename_variable("w", "weights")
ok(e:op("weights") and e:op("weights/read") and e:op("weights/Assign") and
   not e:op("w"), "rename_variable renames the variable's ops")
is("model/w", e:variable("weights").key, "a key that is not the name stays")
same({}, e:checkpoint_plan(), "so the plan is empty")
e:rename_variable("step", "counter")
is("counter", e:variable("counter").key, "a key that is the name follows")
same({{from = "step", to = "counter", rename = true}}, e:checkpoint_plan(),
     "the plan renames step")
raises("no variable 'mul'", function() e:rename_variable("mul", "m") end,
       "renaming an op that is no variable raises")
raises("an op is named 'v'", function() e:rename_variable("weights", "v") end,
       "renaming onto a taken name raises")
raises("op 'mul' reads 'weights/read'", function() e:remove_variable("weights") end,
       "removing a variable something reads raises, naming the reader")
raises("op 'inc' reads 'counter'", function() e:remove_variable("counter") end,
       "an AssignAdd counts as a reader")
e:remove_op("inc")
e:remove_variable("counter")
ok(e:variable("counter") == nil and not e:op("counter"), "remove_variable")
e:op("mul"):set_input(1, "x:0")
e:remove_variable("weights")
is(1, #e:op("save/SaveV2").inputs - 3, "the saver saves one tensor")
same({"model/v"}, e:op("save/SaveV2/tensor_names"):attr("value"):totable(),
     "and names it")
same({F}, e:op("save/SaveV2"):attr("dtypes"), "with one dtype")
is(1, #e:op("init").control_inputs, "init groups one initializer")
is(1, #e:variables(), "one variable left")

os.execute("rm -rf '" .. dir .. "'")
tap.done()

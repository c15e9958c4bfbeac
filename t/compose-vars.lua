-- compose-vars.lua: ge.compose of two TF1 SavedModels with variables,
-- built here (y = w x + b, each with its own checkpoint, both with the
-- keys "w" and "b"): the second model's variables come along under the
-- prefix, the composition's checkpoint holds both models' values under
-- their new keys, one saver saves and restores them all, and the
-- composition runs to the numbers of the two models one after the other.
-- A frozen first model takes the second's saver.  ge.copy with
-- duplicated variables into a graph with a checkpoint of its own reads
-- the duplicates' values from the source's checkpoint.
local tap = require "tap"
local ok, is, same = tap.ok, tap.is, tap.same

local dir = tap.tmpdir()
local function path(n) return dir .. "/" .. n end
local F = "float32"

local function str(name, v)
  return {type = "Const", name = name,
          attrs = {dtype = "string", value = ge.tensor_value("string", {#v}, v)}}
end

-- A SavedModel computing y = w x + b, whose checkpoint holds w and b.
local function model(name, w, b)
  local g = ge.graph()
  local function add(t) g:add_op(t) end
  add{type = "Placeholder", name = "x", attrs = {dtype = F, shape = ge.shape{-1}}}
  for _, v in ipairs{"w", "b"} do
    add{type = "Const", name = v .. "/initial_value",
        attrs = {dtype = F, value = ge.tensor_value(F, {}, 0)}}
    add{type = "VariableV2", name = v, attrs = {dtype = F, shape = ge.shape{}}}
    add{type = "Assign", name = v .. "/Assign", inputs = {v, v .. "/initial_value"},
        attrs = {T = F}}
    add{type = "Identity", name = v .. "/read", inputs = {v}, attrs = {T = F}}
  end
  add{type = "Mul", name = "mul", inputs = {"x", "w/read"}, attrs = {T = F}}
  add{type = "Add", name = "y", inputs = {"mul", "b/read"}, attrs = {T = F}}
  add{type = "NoOp", name = "init", control_inputs = {"w/Assign", "b/Assign"}}
  add{type = "Const", name = "save/Const",
      attrs = {dtype = "string", value = ge.tensor_value("string", {}, "model")}}
  add(str("save/SaveV2/tensor_names", {"b", "w"}))
  add(str("save/SaveV2/shape_and_slices", {"", ""}))
  add{type = "SaveV2", name = "save/SaveV2",
      inputs = {"save/Const", "save/SaveV2/tensor_names",
                "save/SaveV2/shape_and_slices", "b", "w"}, attrs = {dtypes = {F, F}}}
  add{type = "Identity", name = "save/control_dependency", inputs = {"save/Const"},
      control_inputs = {"save/SaveV2"}, attrs = {T = "string"}}
  add(str("save/RestoreV2/tensor_names", {"b", "w"}))
  add(str("save/RestoreV2/shape_and_slices", {"", ""}))
  add{type = "RestoreV2", name = "save/RestoreV2",
      inputs = {"save/Const", "save/RestoreV2/tensor_names",
                "save/RestoreV2/shape_and_slices"}, attrs = {dtypes = {F, F}}}
  add{type = "Assign", name = "save/Assign", inputs = {"b", "save/RestoreV2"},
      attrs = {T = F}}
  add{type = "Assign", name = "save/Assign_1", inputs = {"w", "save/RestoreV2:1"},
      attrs = {T = F}}
  add{type = "NoOp", name = "save/restore_all",
      control_inputs = {"save/Assign", "save/Assign_1"}}
  g:set_signature("serving_default", {inputs = {x = "x:0"}, outputs = {y = "y:0"}})
  -- the saver: a MetaGraphDef's saver_def, through its text form
  local txt = path(name .. ".pbtxt")
  assert(g:save(txt, {format = "meta-text"}))
  local f = assert(io.open(txt, "a"))
  f:write('saver_def { filename_tensor_name: "save/Const:0" ',
          'save_tensor_name: "save/control_dependency:0" ',
          'restore_op_name: "save/restore_all" version: V2 }\n')
  f:close()
  local sm = path(name)
  assert(assert(ge.load(txt)):save(sm, {format = "savedmodel"}))
  os.execute("mkdir -p '" .. sm .. "/variables'")
  assert(ge.checkpoint.write(sm .. "/variables/variables", {
    w = ge.tensor_value(F, {}, w), b = ge.tensor_value(F, {}, b)}))
  return assert(ge.load(sm))
end

local a = model("a", 2, 1)     -- 2x + 1
local b = model("b", 10, -1)   -- 10x - 1
same({3, 5}, ge.run(a, {x = {1, 2}}, "y"):totable(), "a runs from its checkpoint")

-- ---------------------------------------------------------------- compose
local c, err = ge.compose(a, b, {map = {["y:0"] = "x"}})
ok(c, "compose two models with variables: " .. tostring(err))
local names = {}
for _, v in ipairs(c:variables()) do names[#names + 1] = v.name .. "=" .. v.key end
same({"w=w", "b=b", "b/w=b/w", "b/b=b/b"}, names,
     "b's variables under the prefix, their keys too")
local cp = c:checkpoint_plan()
is(path("b") .. "/variables/variables", cp[1].checkpoint,
   "the plan reads b's checkpoint")
ok(c:save(path("c")), "save the composition")
local r = assert(ge.checkpoint.open(path("c")))
same({"b", "b/b", "b/w", "w"}, r:names(), "its checkpoint holds both models' keys")
ok(r:read("b/w") == ge.tensor_value(F, {}, 10) and
   r:read("w") == ge.tensor_value(F, {}, 2), "with each model's values")
local cl = assert(ge.load(path("c")))
same({29, 49}, ge.run(cl, {x = {1, 2}}, "b/y"):totable(),
     "the composition runs: 10 (2x + 1) - 1")
local fc = assert(ge.freeze(c, {outputs = {"b/y"}}))
same({29, 49}, ge.run(fc, {x = {1, 2}}, "b/y"):totable(),
     "ge.freeze reads b's values from b's checkpoint, before any save")
local keys = c:op("save/SaveV2/tensor_names"):attr("value"):totable()
same({"b", "w", "b/b", "b/w"}, keys, "a's save op saves b's variables too")
is(7, #c:op("save/SaveV2").inputs, "and reads them")
ok(not c:op("b/save/SaveV2") and not c:op("b/save/Const"),
   "b's save ops are gone")
local ctl = {}
for _, o in ipairs(c:op("save/restore_all").control_inputs) do ctl[#ctl + 1] = o.name end
same({"save/Assign", "save/Assign_1", "b/save/restore_all"}, ctl,
     "a's restore op runs b's")
is("save/Const:0", c:op("b/save/RestoreV2").inputs[1].name,
   "b's restore reads a's checkpoint file")
same({"b/b", "b/w"}, c:op("b/save/RestoreV2/tensor_names"):attr("value"):totable(),
     "under the new keys")
local ic = {}
for _, o in ipairs(c:op("init").control_inputs) do ic[#ic + 1] = o.name end
same({"w/Assign", "b/Assign", "b/init"}, ic, "a's init runs b's")

-- ---------------------------------------------------------------- copies
-- ge.copy of b's ops into a graph with a checkpoint of its own (a's),
-- variables duplicated: the checkpoint saved holds a's values and the
-- duplicates' values read from b's checkpoint
local d = a:clone()
ge.copy(ge.sgv(b:op("mul"), b:op("y")),
        {dst_graph = d, dst_scope = "cp", variables = "duplicate"})
local plan = d:checkpoint_plan()
same({"w", "cp/w", "b", "cp/b"},
     {plan[1].from, plan[1].to, plan[2].from, plan[2].to}, "the plan")
ok(d:save(path("d")), "save the graph with the copy")
local rd = assert(ge.checkpoint.open(path("d")))
same({"b", "cp/b", "cp/w", "w"}, rd:names(), "its checkpoint holds both")
ok(rd:read("cp/w") == ge.tensor_value(F, {}, 10) and
   rd:read("cp/b") == ge.tensor_value(F, {}, -1),
   "the duplicates have b's values, read from b's checkpoint")
ok(rd:read("w") == ge.tensor_value(F, {}, 2), "a's own keep a's")

-- ---------------------------------------------------------------- frozen a
local fz = ge.graph()
fz:add_op{type = "Placeholder", name = "in", attrs = {dtype = F, shape = ge.shape{-1}}}
fz:add_op{type = "Neg", name = "neg", inputs = {"in"}, attrs = {T = F}}
local c2 = assert(ge.compose(fz, b, {map = {["neg:0"] = "x"}, prefix = "m"}))
ok(c2:save(path("c2"), {format = "savedmodel"}), "save a frozen graph composed with b")
same({"m/b", "m/w"}, assert(ge.checkpoint.open(path("c2"))):names(),
     "its checkpoint holds b's values under the new keys")
local c2t = path("c2.pbtxt")
assert(c2:save(c2t, {format = "meta-text"}))
ok(tap.slurp(c2t):find('restore_op_name: "m/save/restore_all"', 1, true),
   "the frozen graph takes b's saver")
same({-11, -21}, ge.run(assert(ge.load(path("c2"))), {["in"] = {1, 2}}, "m/y"):totable(),
     "and runs: 10 (-x) - 1")

tap.done()

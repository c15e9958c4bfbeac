-- recipe-interface.lua: recipes keep a model's interface and meaning.
-- A small TF1 serving graph shaped as TensorFlow's half_plus_two: a
-- Placeholder parsed into the Identity x its signature feeds, a variable
-- a with its Assign, and a string variable that only the init op reads.
-- Then a scalar model, which clone_tower refuses.
local tap = require "tap"
local ok, is = tap.ok, tap.is
local lib = require "testlib"

local function attr_t(t) return 'attr { key: "T" value { type: ' .. t .. ' } }' end
local F = 'attr { key: "dtype" value { type: DT_FLOAT } }'

local TEXT = [[
graph_def {
node { name: "tf_example" op: "Placeholder" ]] .. F .. [[
  attr { key: "shape" value { shape { dim { size: -1 } dim { size: 1 } } } } }
node { name: "parsed" op: "Identity" input: "tf_example" ]] .. attr_t("DT_FLOAT") .. [[ }
node { name: "x" op: "Identity" input: "parsed" ]] .. attr_t("DT_FLOAT") .. [[ }
node { name: "a/initial_value" op: "Const" ]] .. F .. [[
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 0.5 } } } }
node { name: "a" op: "VariableV2" ]] .. F .. [[
  attr { key: "shape" value { shape { } } } }
node { name: "a/Assign" op: "Assign" input: "a" input: "a/initial_value" ]] .. attr_t("DT_FLOAT") .. [[ }
node { name: "a/read" op: "Identity" input: "a" ]] .. attr_t("DT_FLOAT") .. [[ }
node { name: "two" op: "Const" ]] .. F .. [[
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
node { name: "Mul" op: "Mul" input: "a/read" input: "x" ]] .. attr_t("DT_FLOAT") .. [[ }
node { name: "y" op: "Add" input: "Mul" input: "two" ]] .. attr_t("DT_FLOAT") .. [[ }
node { name: "fn/initial_value" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
  attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "f" } } } }
node { name: "fn" op: "VariableV2" attr { key: "dtype" value { type: DT_STRING } }
  attr { key: "shape" value { shape { } } } }
node { name: "fn/Assign" op: "Assign" input: "fn" input: "fn/initial_value"
  ]] .. attr_t("DT_STRING") .. [[ }
node { name: "init" op: "NoOp" input: "^a/Assign" input: "^fn/Assign" }
}
collection_def { key: "legacy_init_op" value { node_list { value: "init" } } }
signature_def { key: "serving_default" value {
  inputs { key: "x" value { name: "x:0" } }
  outputs { key: "y" value { name: "y:0" } } } }
signature_def { key: "parse" value {
  inputs { key: "inputs" value { name: "tf_example:0" } }
  outputs { key: "y" value { name: "y:0" } } } }
]]

local function model() return assert(ge.parse(TEXT, "meta-text")) end

local function valid(g, what)
  local good, problems = g:validate()
  if not good then
    for i = 1, math.min(4, #problems) do tap.diag(problems[i]) end
  end
  ok(good, what .. ": validates")
end

local X = {{1}, {2}, {5}, {7}}

-- the model's own numbers: y = 0.5 x + 2, through x
-- (run as a SavedModel, whose loader runs the init op)
local dir, saves = tap.tmpdir(), 0
local function y_of(g, feeds, sig)
  saves = saves + 1
  local path = dir .. "/sm" .. saves
  local saved, err = g:save(path, {format = "savedmodel"})
  if not saved then
    tap.diag(tostring(err))
    return "-"
  end
  local ran, y = pcall(ge.run, ge.load(path), feeds, "y", {signature = sig})
  if not ran then
    tap.diag(tostring(y))
    return "-"
  end
  return tostring(y)
end

local want = y_of(model(), {x = X})
is(want, "value float32[4,1] {2.5, 3, 4.5, 5.5}", "the fixture runs")

-- 1. clone_tower keeps the interface: x is fed, y fetched
do
  local g = model()
  local ran, res = pcall(lib.run_recipe, "clone_tower", g, {})
  ok(ran, "1: clone_tower runs: " .. tostring(not ran and res or ""))
  ok(g:op("x") and g:op("x").type == "Identity", "1: x stays as it was")
  ok(g:op("x/tower_split"), "1: the towers split x, the input the signature feeds")
  ok(not g:op("tower_0/x") and not g:op("tower_0/tf_example"),
     "1: no tower copies an input")
  is(g:signature("serving_default").inputs.x.name, "x:0",
     "1: the signature still feeds x:0")
  is(y_of(g, {x = X}), want, "1: fed through x, y is the model's")
  is(y_of(g, {inputs = X}, "parse"), want, "1: fed through tf_example, too")
  is(y_of(g, {x = {{1}, {2}, {5}}}), "value float32[3,1] {2.5, 3, 4.5}",
     "1: a batch of 3 on 2 towers (2 and 1)")
  is(y_of(g, {x = {{1}}}), "value float32[1,1] {2.5}",
     "1: a batch of 1 on 2 towers (1 and 0)")
  valid(g, "1")
end

-- 2. remove_identity_chains keeps the Identity a signature feeds
do
  local g = model()
  lib.run_recipe("remove_identity_chains", g, {})
  ok(g:op("x"), "2: the Identity x the signature feeds stays")
  ok(not g:op("parsed"), "2: the other Identity goes")
  is(y_of(g, {x = X}), want, "2: fed through x, y is the model's")
  valid(g, "2")
end

-- 3. insert_logging logs what a run of the signature computes only
do
  local g = model()
  lib.run_recipe("insert_logging", g, {})
  local read_by_print = {}
  for _, op in ipairs(g:ops({"Print"})) do
    read_by_print[op.inputs[1].op.name] = true
  end
  ok(not read_by_print.a and not read_by_print.fn,
     "3: no Print between a variable and its Assign")
  is(g:op("a/Assign").inputs[1].name, "a:0", "3: a/Assign assigns a")
  ok(not read_by_print["fn/initial_value"],
     "3: nothing only the init op reads is logged")
  ok(read_by_print.Mul and read_by_print["a/read"] and read_by_print.x,
     "3: what the signature computes is logged")
  is(y_of(g, {x = X}), want, "3: y is the model's")
  valid(g, "3")
end

-- 4. a model whose one input is a scalar: refused, nothing changed
do
  local g = assert(ge.parse([[
node { name: "x" op: "Placeholder" ]] .. F .. [[
  attr { key: "shape" value { shape { } } } }
node { name: "three" op: "Const" ]] .. F .. [[
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 3 } } } }
node { name: "y" op: "Mul" input: "x" input: "three" ]] .. attr_t("DT_FLOAT") .. [[ }
]], "graphdef-text"))
  local n = #g
  local res, err = lib.run_recipe("clone_tower", g, {})
  ok(res == nil and tostring(err):find("input x:0 is a scalar", 1, true) and
     not tostring(err):find("\n"),
     "4: a scalar input is refused in one line naming it: " .. tostring(err))
  is(#g, n, "4: nothing was changed")
  res = lib.run_recipe("clone_tower", g, {"combine=mean"})
  ok(res and res.towers == 2, "4: combine=mean clones it")
  is(y_of(g, {x = 5}), "value float32[] {15}", "4: which computes the same")
end

tap.done()

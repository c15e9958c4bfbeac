-- recipe-corpus.lua: every shipped recipe on real TensorFlow models of
-- the corpus: the result validates, saves, loads back, and has the
-- structure the recipe promises.
local tap = require "tap"
local ok, is, same = tap.ok, tap.is, tap.same
local lib = require "testlib"

local corpus = tap.corpus()
if not corpus then tap.skip_all("corpus not found") end

local dir = tap.tmpdir()

local MNIST = "dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/mnist_conv_model"
local CIFAR = "dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/cifar_model/frozen_model.pb"
local CHARCNN = "SciSharp__TensorFlow.NET/graph/char_cnn_untrained.meta"
local KMEANS = "SciSharp__TensorFlow.NET/graph/kmeans.meta"
local LSTM = "SciSharp__TensorFlow.NET/graph/lstm_crf_ner.meta"
local HAND = "large/handtrack.frozen.pb"

local function load(rel)
  local g, err = ge.load(corpus .. "/" .. rel)
  if not g then error(err) end
  return g
end

local saved = 0
-- Runs a recipe; checks the result validates, saves and loads back with
-- the same number of ops.
local function run(name, rel, assign)
  local g = load(rel)
  lib.run_recipe(name, g, assign)
  local good, problems = g:validate()
  ok(good, name .. " on " .. rel .. ": the result validates")
  if not good then
    for i = 1, math.min(5, #problems) do tap.diag(problems[i]) end
  end
  saved = saved + 1
  local out = dir .. "/out" .. saved .. (rel:match("%.meta$") and ".meta" or
                                         rel:match("%.pb$") and ".pb" or "")
  local sok, serr = g:save(out)
  ok(sok, name .. ": saves") if not sok then tap.diag(serr) end
  local back = ge.load(out)
  ok(back and #back == #g, name .. ": loads back with the same ops")
  return g
end

local function count(g, pred)
  local n = 0
  for _, op in ipairs(g:ops()) do if pred(op) then n = n + 1 end end
  return n
end
local function of_type(t) return function(op) return op.type == t end end

-- ---------------------------------------------------------------- insert_noise
local function noise_checks(rel, types)
  local before = load(rel)
  local sites, readers = {}, {}
  local set = {}
  for t in types:gmatch("[^,]+") do set[t] = true end
  for _, op in ipairs(before:ops()) do
    if set[op.type] then
      sites[#sites + 1] = op.name
      local r = {}
      for _, c in ipairs(op:output(0):consumers()) do r[#r + 1] = c.name end
      readers[op.name] = r
    end
  end
  ok(#sites > 0, rel .. " has " .. types .. " ops (" .. #sites .. ")")
  local g = run("insert_noise", rel, {"types=" .. types, "stddev=0.05"})
  local blocks, rerouted, all = 0, 0, 0
  for _, name in ipairs(sites) do
    local add = g:op(name .. "/noise/add")
    if add and add.inputs[1].name == name .. ":0" and
       g:op(name .. "/noise/random") and g:op(name .. "/noise/shape") then
      blocks = blocks + 1
    end
    for _, rn in ipairs(readers[name]) do
      all = all + 1
      local c = g:op(rn)
      for _, t in ipairs(c.inputs) do
        if type(t) ~= "string" and t.op == add then
          rerouted = rerouted + 1
          break
        end
      end
    end
    -- nothing but the noise block reads the op any more
    local others = 0
    for _, c in ipairs(g:op(name):output(0):consumers()) do
      if not c.name:find(name .. "/noise/", 1, true) then others = others + 1 end
    end
    if others > 0 then tap.diag(name .. " still has " .. others .. " readers") end
  end
  is(#sites, blocks, "insert_noise on " .. rel .. ": one noise block per site")
  is(all, rerouted, "insert_noise: every former reader reads the noise")
  is(#before + 5 * #sites, #g, "insert_noise: five ops per site")
end
noise_checks(MNIST, "Conv2D")
noise_checks(CHARCNN, "Conv2D")
noise_checks(HAND, "_FusedConv2D")

-- ---------------------------------------------------------------- strip
do
  local g = run("strip_unused_nodes", MNIST,
                {"outputs=Accuracy", "inputs=Features,Label"})
  is(0, count(g, function(op) return op.name:find("^gradients/") end),
     "strip_unused_nodes: no gradient op is left")
  is(0, count(g, of_type("ApplyMomentum")), "strip_unused_nodes: no optimizer")
  ok(g:op("Accuracy") and g:op("Features") and g:op("Label"),
     "strip_unused_nodes: inputs and outputs stay")
  local g2 = run("strip_unused_nodes", CIFAR, {"outputs=Output"})
  is(13, #g2, "strip_unused_nodes: a frozen inference graph is all needed")
end

-- ---------------------------------------------------------------- remove_nodes
do
  local g = run("remove_nodes", CIFAR, {"op=Identity", "outputs=Output"})
  is(0, count(g, of_type("Identity")), "remove_nodes: no Identity left")
  is(10, #g, "remove_nodes: 3 fewer ops")
end

-- ---------------------------------------------------------------- simple ones
do
  local g = run("rename_op", CIFAR, {"old_op_name=Relu", "new_op_name=Relu6"})
  is(1, count(g, of_type("Relu6")), "rename_op: Relu6")
  is(0, count(g, of_type("Relu")), "rename_op: no Relu")
  g = run("rename_scope", MNIST, {"from=gradients", "to=grads"})
  is(0, count(g, function(op) return op.name:find("^gradients/") end),
     "rename_scope: nothing left in gradients/")
  ok(count(g, function(op) return op.name:find("^grads/") end) > 50,
     "rename_scope: all in grads/")
  g = run("set_device", KMEANS, {"device=/device:CPU:0"})
  is(#g, count(g, function(op) return op.device == "/device:CPU:0" end),
     "set_device: every op")
  g = run("remove_device", KMEANS)
  is(#g, count(g, function(op) return op.device == "" end),
     "remove_device: no op has a device")
  g = run("remove_attribute", CHARCNN, {"attribute_name=_class"})
  is(0, count(g, function(op) return op:attr_raw("_class") ~= nil end),
     "remove_attribute: no _class left")
  g = run("remove_control_dependencies", KMEANS)
  is(0, count(g, function(op) return #op.control_inputs > 0 end),
     "remove_control_dependencies: none left")
  g = run("add_default_attributes", CIFAR)
  ok(g:op("Conv2D") and g:op("Conv2D"):attr("dilations") ~= nil or
     count(g, function(op)
       return op.type == "Conv2D" and op:attr("dilations") ~= nil
     end) == 1, "add_default_attributes: Conv2D has dilations")
  g = run("insert_logging", CIFAR, {"op=Relu,MatMul", "show_op=true"})
  is(2, count(g, of_type("Print")), "insert_logging: two Print ops")
end

-- ---------------------------------------------------------------- sort
do
  local g = run("sort_by_execution_order", LSTM)
  local pos, bad = {}, 0
  for i, op in ipairs(g:ops()) do pos[op] = i end
  for i, op in ipairs(g:ops()) do
    for _, t in ipairs(op.inputs) do
      if type(t) ~= "string" and pos[t.op] > i and
         not (t.op.type == "NextIteration" and op.type:find("Merge")) then
        bad = bad + 1
      end
    end
    for _, c in ipairs(op.control_inputs) do
      if type(c) ~= "string" and pos[c] > i then bad = bad + 1 end
    end
  end
  is(0, bad, "sort_by_execution_order: every input comes first (but loops)")
end

-- ---------------------------------------------------------------- merge, names
do
  local before = #load(CHARCNN)
  local g = run("merge_duplicate_nodes", CHARCNN)
  ok(#g < before, "merge_duplicate_nodes: some ops merged (" .. before ..
     " -> " .. #g .. ")")
  local again = load(CHARCNN)
  local r = lib.recipe("merge_duplicate_nodes")
  lib.run_recipe(r, again)
  lib.run_recipe(r, again)
  is(#g, #again, "merge_duplicate_nodes: a second run changes nothing")
  g = run("obfuscate_names", KMEANS, {"inputs=Placeholder,Placeholder_1"})
  is(0, count(g, function(op)
    return #op.name > 3 and op.name ~= "Placeholder" and op.name ~= "Placeholder_1"
  end), "obfuscate_names: every other name is short")
end

-- ---------------------------------------------------------------- towers
local XOR = "SciSharp__TensorFlow.NET/graph/xor.meta"
local function tower_checks(policy)
  local before = load(XOR)
  local nvars = #before:variables()
  local g = run("clone_tower", XOR, {"towers=4", "outputs=loss",
                                     "combine=mean", "variables=" .. policy})
  local per = {}
  for _, op in ipairs(g:ops()) do
    local i = op.name:match("^tower_(%d+)/")
    if i then
      per[i] = per[i] or {n = 0, dev = true}
      per[i].n = per[i].n + 1
      if op.device ~= "/device:GPU:" .. i then per[i].dev = false end
    end
  end
  local towers, same_size, devices = 0, true, true
  for i = 0, 3 do
    local t = per[tostring(i)]
    if t then
      towers = towers + 1
      if t.n ~= per["0"].n then same_size = false end
      if not t.dev then devices = false end
    end
  end
  is(4, towers, "clone_tower " .. policy .. ": 4 copies")
  ok(same_size, "clone_tower " .. policy .. ": of the same size (" ..
     (per["0"] and per["0"].n or 0) .. " ops)")
  ok(devices, "clone_tower " .. policy .. ": tower i on /device:GPU:i")
  is("Mul", g:op("loss") and g:op("loss").type,
     "clone_tower " .. policy .. ": loss is the towers' mean")
  local mm = g:op("tower_2/MatMul")
  if policy == "share" then
    is(nvars, #g:variables(), "clone_tower share: no new variable")
    is("Variable/read:0", mm and mm.inputs[2].name,
       "clone_tower share: towers read the variable")
  else
    is(nvars + 2 * 4, #g:variables(),
       "clone_tower duplicate: each tower has both variables")
    is("tower_2/Variable/read:0", mm and mm.inputs[2].name,
       "clone_tower duplicate: a tower reads its own")
  end
  is("Placeholder/tower_split:2", mm and mm.inputs[1].name,
     "clone_tower " .. policy .. ": a tower reads its share of the batch")
end
tower_checks("share")
tower_checks("duplicate")
do
  local g = run("clone_tower", CIFAR, {"towers=4"})
  is("ConcatV2", g:op("Output") and g:op("Output").type,
     "clone_tower on a frozen graph: the output concatenates 4 towers")
  is(4, #g:op("Output").inputs - 1, "clone_tower: 4 parts")
end

-- ---------------------------------------------------------------- copy
do
  local before = load(MNIST)
  local nvars = #before:variables()
  local g = run("copy_subgraph", MNIST, {"inputs=Features,Label",
                                         "outputs=Loss", "dst_scope=copy",
                                         "variables=duplicate"})
  ok(g:op("copy/Loss") ~= nil, "copy_subgraph: the copy's Loss")
  ok(#g:variables() > nvars, "copy_subgraph duplicate: new variables (" ..
     nvars .. " -> " .. #g:variables() .. ")")
  local reads_copy = true
  for _, op in ipairs(g:ops()) do
    if op.name:find("^copy/") then
      for _, t in ipairs(op.inputs) do
        if type(t) ~= "string" and t.op.type == "VariableV2" and
           not t.op.name:find("^copy/") then
          reads_copy = false
        end
      end
    end
  end
  ok(reads_copy, "copy_subgraph duplicate: the copy reads only its variables")
  g = run("copy_subgraph", CHARCNN, {"scope=conv-maxpool-1", "dst_scope=again"})
  ok(g:op("again/conv2d/Conv2D") ~= nil or #g > #load(CHARCNN),
     "copy_subgraph: a scope copied")
end

tap.done()

-- fold-corpus.lua: constant and batch-norm folding on real models.
-- - handtrack (a frozen TF2 detector): fold_constants then
--   fold_batch_norms leave nothing foldable (a second pass finds nothing),
--   the result validates; what could not be folded is reported.  Its
--   converter already fused every batch norm into _FusedConv2D, so it has
--   no FusedBatchNorm op: the batch-norm folding is shown on InceptionV3
--   (188 FusedBatchNorm after Conv2D, parameters made constant here) and
--   on the cifar model with a batch norm inserted after its Conv2D.
-- - models with foldable subgraphs: every Const that replaced a subgraph
--   equals what the original subgraph evaluates to, the result validates
--   and has fewer ops.
-- - round_weights and quantize_weights on the cifar model: sizes, and the
--   output stays close on a constant input.
local tap = require "tap"
local ok, is = tap.ok, tap.is

local corpus = tap.corpus()
if not corpus then tap.skip_all("corpus not found") end
local dir = tap.tmpdir()

local function load(rel)
  return assert(ge.load(corpus .. "/" .. rel))
end
local function count(g, pred)
  local n = 0
  for _, op in ipairs(g:ops()) do if pred(op) then n = n + 1 end end
  return n
end
local function is_bn(op) return op.type:find("^FusedBatchNorm") ~= nil end
local function validates(g, what)
  local good, problems = g:validate()
  ok(good, what .. ": the result validates")
  if not good then tap.diag(table.concat(problems, "\n", 1, math.min(5, #problems))) end
end
local function close(a, b, tol)
  if #a ~= #b then return false end
  local worst = 0
  for i = 1, #a do
    local d = math.abs(a[i] - b[i]) / math.max(1, math.abs(a[i]))
    if d > worst then worst = d end
  end
  return worst <= tol, worst
end

-- ---------------------------------------------------------------- handtrack
do
  local HAND = "large/handtrack.frozen.pb"
  local g = load(HAND)
  local n0 = #g
  local fused = count(g, function(op)
    return op.type == "_FusedConv2D" and op.name:find("FusedBatchNorm") ~= nil
  end)
  local dw = count(g, function(op) return op.type == "FusedDepthwiseConv2dNative" end)
  tap.diag(string.format("handtrack: %d ops, %d FusedBatchNorm ops; its converter " ..
                         "folded them: %d _FusedConv2D named .../FusedBatchNormV3 " ..
                         "and %d FusedDepthwiseConv2dNative, each with a BiasAdd fused in",
                         n0, count(g, is_bn), fused, dw))
  local r1 = ge.fold_constants(g)
  local r2 = ge.fold_batch_norms(g)
  tap.diag(string.format("handtrack: fold_constants folded %d, removed %d, left %d; " ..
                         "fold_batch_norms folded %d", r1.folded, r1.removed,
                         r1.skipped, r2.folded))
  for _, n in ipairs(r1.notes) do tap.diag("  " .. n) end
  is(0, count(g, is_bn), "handtrack: no FusedBatchNorm op is left")
  validates(g, "handtrack")
  local again = ge.fold_constants(g)
  ok(again.folded == 0 and again.removed == 0,
     "handtrack: nothing foldable is left (a second pass folds nothing)")
  local kernels_only = true
  for _, n in ipairs(r1.notes) do
    if not n:find("no kernel for this op type") then kernels_only = false end
  end
  ok(kernels_only, "handtrack: what stays is only ops the evaluator has no kernel for")
end

-- ---------------------------------------------------------------- folded == evaluated
for _, rel in ipairs{
  "SciSharp__TensorFlow.NET/graph/lstm_crf_ner.meta",
  "SciSharp__TensorFlow.NET/graph/char_cnn_untrained.meta",
  "SciSharp__TensorFlow.NET/graph/word2vec.meta",
  "dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/cifar_model/model.ckpt.meta",
  "dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/mnist_conv_model",
} do
  local name = rel:match("[^/]+$")
  local g = load(rel)
  local orig = g:clone()
  local n0 = #g
  local was = {}
  for _, op in ipairs(g:ops()) do was[op.name] = op.type end
  local r = ge.fold_constants(g)
  local checked, equal = 0, 0
  for _, op in ipairs(g:ops()) do
    if op.type == "Const" and was[op.name] and was[op.name] ~= "Const" then
      checked = checked + 1
      local want = ge.evaluate(orig:tensor(op.name .. ":0"))
      local got = ge.evaluate(op:output(0))
      local same = want and got and #want == #got
      for i = 1, same and #want or 0 do
        if want[i] ~= got[i] then same = false break end
      end
      if same then equal = equal + 1 else tap.diag("differs: " .. op.name) end
    end
  end
  tap.diag(string.format("%s: %d -> %d ops, %d folded, %d removed, %d left",
                         name, n0, #g, r.folded, r.removed, r.skipped))
  ok(checked > 0 and equal == checked,
     string.format("%s: each of the %d Consts that replaced a subgraph " ..
                   "equals the subgraph evaluated", name, checked))
  ok(#g < n0, name .. ": fewer ops")
  validates(g, name)
end

-- ---------------------------------------------------------------- InceptionV3
do
  local g = load("SciSharp__TensorFlow.NET/graph/InceptionV3.meta")
  local n0, bn0 = #g, count(g, is_bn)
  -- a frozen InceptionV3: the variables the batch norms and their convs
  -- read become Consts (values made up: a variance must be positive)
  local made = 0
  for _, bn in ipairs(g:ops()) do
    if is_bn(bn) and bn.inputs[1].op.type == "Conv2D" then
      local reads = {bn.inputs[1].op.inputs[2]}
      for i = 2, 5 do reads[#reads + 1] = bn.inputs[i] end
      for _, t in ipairs(reads) do
        local op = t.op
        if op.type == "ReadVariableOp" then
          local shape, name = t.shape, op.name
          local c = g:add_op{type = "Const", name = name .. "/frozen",
                             attrs = {dtype = "float32",
                                      value = ge.tensor_value("float32", shape, 0.5)}}
          t:replace_all_uses_with(c:output(0))
          made = made + 1
        end
      end
    end
  end
  local r = ge.fold_batch_norms(g)
  tap.diag(string.format("InceptionV3: %d FusedBatchNorm, %d variable reads made " ..
                         "constant; fold_batch_norms folded %d, removed %d",
                         bn0, made, r.folded, r.removed))
  ok(bn0 == 188 and r.folded == bn0,
     "InceptionV3: every FusedBatchNorm after a Conv2D is folded (" .. r.folded .. ")")
  is(0, count(g, is_bn), "InceptionV3: no FusedBatchNorm is left")
  validates(g, "InceptionV3")
end

-- ---------------------------------------------------------------- cifar
local CIFAR = "dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/cifar_model/frozen_model.pb"
-- the cifar model on a constant input, so that the evaluator runs it
local function cifar_const_input()
  local g = load(CIFAR)
  local vals = {}
  for i = 1, 32 * 32 * 3 do vals[i] = ((i * 7919) % 255) / 255 end
  local c = g:add_op{type = "Const", name = "image",
                     attrs = {dtype = "float32",
                              value = ge.tensor_value("float32", {1, 32, 32, 3}, vals)}}
  g:tensor("Input:0"):replace_all_uses_with(c:output(0))
  return g
end
do
  local g = cifar_const_input()
  -- a batch norm after the Conv2D, with made-up parameters
  local conv = g:op("Conv2D")
  local C = conv:output(0).shape[4]
  local function param(name, v)
    local t = {}
    for i = 1, C do t[i] = v + (i % 5) / 10 end
    return g:add_op{type = "Const", name = "bn/" .. name,
                    attrs = {dtype = "float32", value = ge.tensor_value("float32", {C}, t)}}
  end
  local readers = conv:output(0):consumers()
  local bn = g:add_op{type = "FusedBatchNormV3", name = "bn",
                      inputs = {conv:output(0), param("gamma", 1):output(0),
                                param("beta", 0):output(0), param("mean", 0.1):output(0),
                                param("var", 0.5):output(0)},
                      attrs = {T = "float32", U = "float32", epsilon = 0.001,
                               is_training = false}}
  for _, op in ipairs(readers) do
    for slot, t in ipairs(op.inputs) do
      if t == conv:output(0) then op:set_input(slot - 1, bn:output(0)) end
    end
  end
  local want = assert(ge.evaluate(g:tensor("Output:0")))
  local n0 = #g
  local r = ge.fold_batch_norms(g)
  is(1, r.folded, "cifar with a batch norm after its Conv2D: folded")
  is("BiasAdd", g:op("bn").type, "cifar: the batch norm is a BiasAdd")
  local got = assert(ge.evaluate(g:tensor("Output:0")))
  local good, worst = close(want, got, 1e-4)
  ok(good, "cifar: the output is what it was (worst relative error " .. worst .. ")")
  ok(#g < n0, "cifar: fewer ops")
  validates(g, "cifar + batch norm")
end

do
  local size = {}
  local want = assert(ge.evaluate(cifar_const_input():tensor("Output:0")))
  for _, recipe in ipairs{"none", "round_weights", "quantize_weights"} do
    local g = load(CIFAR)
    if recipe == "round_weights" then ge.round_weights(g)
    elseif recipe == "quantize_weights" then ge.quantize_weights(g) end
    local out = dir .. "/" .. recipe .. ".pb"
    assert(g:save(out))
    local f = assert(io.open(out, "rb"))
    size[recipe] = f:seek("end")
    f:close()
    local back = assert(ge.load(out))
    validates(back, "cifar " .. recipe)
    if recipe ~= "none" then
      -- run it on the constant input
      local vals = {}
      for i = 1, 32 * 32 * 3 do vals[i] = ((i * 7919) % 255) / 255 end
      local c = back:add_op{type = "Const", name = "image",
                            attrs = {dtype = "float32",
                                     value = ge.tensor_value("float32", {1, 32, 32, 3}, vals)}}
      back:tensor("Input:0"):replace_all_uses_with(c:output(0))
      local got = assert(ge.evaluate(back:tensor("Output:0")))
      local good, worst = close(want, got, 0.05)
      ok(good, "cifar " .. recipe .. ": the output stays close (worst " .. worst .. ")")
    end
  end
  tap.diag(string.format("cifar frozen model: %d bytes; round_weights %d; " ..
                         "quantize_weights %d", size.none, size.round_weights,
                         size.quantize_weights))
  is(size.none, size.round_weights, "round_weights keeps the size (it helps compression)")
  ok(size.quantize_weights * 3 < size.none,
     "quantize_weights stores the weights in a quarter of the space")
end
tap.done()

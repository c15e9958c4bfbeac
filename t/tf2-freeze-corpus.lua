-- tf2-freeze-corpus.lua: `gerewrite run freeze` on TF2 SavedModels of the
-- corpus gives GraphDefs of plain ops whose Consts hold the checkpoint's
-- values, fed and fetched by the signature's keys; bert1 (no variables/)
-- fails naming its variables; a TF1 SavedModel freezes as before.
local tap = require "tap"
local ok, is, same = tap.ok, tap.is, tap.same

local C = tap.corpus()
if not C then tap.skip_all("corpus not found") end
local BIN = (os.getenv("GE_TOP_BUILDDIR") or ".") .. "/src/gerewrite"
local TFJS = C .. "/tensorflow__tfjs/tfjs-node/test_objects/saved_model/"
local HPT2 = C .. "/tensorflow__serving/tensorflow_serving/servables/tensorflow/"
  .. "testdata/saved_model_half_plus_two_tf2_cpu/00000123"
local HPT1 = C .. "/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/half_plus_two/00000123"
local BERT = C .. "/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/bert1"
local dir = tap.tmpdir()

-- runs the program; returns the exit code and stderr
local function gerewrite(args)
  local cmd = string.format("'%s' %s 2>'%s/err'", BIN, args, dir)
  local _, _, code = os.execute(cmd)
  local f = io.open(dir .. "/err")
  local err = f and f:read("a") or ""
  if f then f:close() end
  return code, err
end

local function exists(p)
  local f = io.open(p)
  if f then f:close() end
  return f ~= nil
end

-- what a graph executor without functions or resources could not run
local NOT_PLAIN = {PartitionedCall = true, StatefulPartitionedCall = true,
  VarHandleOp = true, ReadVariableOp = true, VariableV2 = true,
  AssignVariableOp = true}
local function plain(g)
  for _, op in ipairs(g:ops()) do
    if NOT_PLAIN[op.type] then return false, op.name .. " " .. op.type end
    for _, t in ipairs(op.outputs) do
      if t.dtype == "resource" then return false, op.name .. " resource" end
    end
  end
  return true
end

-- the values of the graph's Consts, sorted by their text
local function consts(g)
  local vals = {}
  for _, op in ipairs(g:ops()) do
    if op.type == "Const" then
      local v = op:attr("value")
      if #v.shape == 0 and type(v[1]) == "number" then
        vals[#vals + 1] = tostring(v[1])
      end
    end
  end
  table.sort(vals)
  return table.concat(vals, " ")
end

local function freeze(name, model, extra)
  local out = dir .. "/" .. name .. ".pb"
  local code, err = gerewrite(string.format("run freeze '%s' -o '%s' %s",
                                            model, out, extra or ""))
  is(0, code, name .. ": run freeze exits 0")
  if code ~= 0 then tap.diag(err) return nil end
  -- the values are in the Consts: no warning that they were left behind
  ok(not tostring(err):find("warning", 1, true),
     name .. ": no warning about variable values (" .. tostring(err) .. ")")
  local g = assert(ge.load(out))
  is(nil, g:signature_names()[1], name .. ": a plain GraphDef")
  local p, why = plain(g)
  ok(p, name .. ": only plain ops" .. (why and (" (" .. why .. ")") or ""))
  local valid, problems = g:validate()
  is(true, valid, name .. ": it validates")
  if not valid then tap.diag(table.concat(problems, "\n")) end
  return g
end

-- the op a tensor comes from, past Identity ops
local function source(t)
  while t.op.type == "Identity" or t.op.type == "IdentityN" do
    t = t.op:input(t.op.type == "Identity" and 0 or t.index)
  end
  return t.op
end

local function io_of(g, name)
  local op = g:op(name)
  return op and op.type or "none"
end

-- ---------------------------------------------------------------- tfjs models
local g = freeze("times_three_float", TFJS .. "times_three_float")
if g then
  is("3.0", consts(g), "times_three_float: the Const holds v = 3.0")
  is("Placeholder", io_of(g, "x"), "input x is a Placeholder named x")
  is("Identity", io_of(g, "output_0"), "output output_0 is an op named output_0")
  is("float32", g:tensor("output_0:0").dtype, "output_0 is float32")
  is("Mul", source(g:op("output_0"):input(0)).type, "it reads the Mul")
  is("x", source(g:op("output_0"):input(0)):input(0).op.name, "of x")
  ok(not g:serialize("graphdef-text"):find("library", 1, true),
     "no function library, not even an empty one")
  is(0, #g:functions(), "no functions")
end

g = freeze("times_two_int", TFJS .. "times_two_int")
if g then
  is("2", consts(g), "times_two_int: the Const holds v = 2 (int32)")
  is("int32", source(g:op("output_0"):input(0)):input(1).dtype, "by an int32")
  is("Placeholder", io_of(g, "x"), "input x")
  is("Identity", io_of(g, "output_0"), "output output_0")
end

g = freeze("model_multi_output", TFJS .. "model_multi_output")
if g then
  ok(consts(g):find("2", 1, true), "model_multi_output: the Const holds two = 2")
  is("Placeholder", io_of(g, "x"), "input x")
  is("Placeholder", io_of(g, "y"), "input y")
  is("Identity", io_of(g, "output_0"), "output output_0")
  is("Identity", io_of(g, "output_1"), "output output_1")
end

-- the signature's own tensor names kept
g = freeze("model_multi_output_tensors", TFJS .. "model_multi_output", "--param names=tensors")
if g then
  is("Placeholder", io_of(g, "serving_default_x"), "names=tensors: serving_default_x:0 feeds x")
  is("Placeholder", io_of(g, "serving_default_y"), "serving_default_y:0 feeds y")
  is("IdentityN", io_of(g, "StatefulPartitionedCall"), "an IdentityN has the call's name")
  is("int32", g:tensor("StatefulPartitionedCall:1").dtype,
     "StatefulPartitionedCall:1 is output 1 again")
  is("Mul", source(g:tensor("StatefulPartitionedCall:0")).type, "output 0: the Mul")
  is("serving_default_y", source(g:tensor("StatefulPartitionedCall:1")).name,
     "output 1: y passed on")
  is(nil, g:op("output_0"), "no op named by the keys")
end

g = freeze("half_plus_two_tf2", HPT2)
if g then
  is("0.5 2.0", consts(g), "half_plus_two tf2: a = 0.5, b = 2.0")
  is("PlaceholderWithDefault", io_of(g, "x"), "serving_default input x")
  is("Identity", io_of(g, "y"), "serving_default output y")
end
g = freeze("half_plus_two_tf2_x2y3", HPT2, "--param signature=regress_x2_to_y3")
if g then
  is("0.5 3.0", consts(g), "regress_x2_to_y3: a = 0.5, c = 3.0")
  is("Placeholder", io_of(g, "inputs"), "its input")
  is("Identity", io_of(g, "outputs"), "its output")
end

-- functional control flow stays, with the functions it calls
g = freeze("SimpleWhileLoop", C .. "/tensorflow__tensorflow/tensorflow/c/experimental/"
           .. "saved_model/internal/testdata/SimpleWhileLoop")
if g then
  local w
  for _, op in ipairs(g:ops()) do if op.type == "StatelessWhile" then w = op end end
  ok(w ~= nil, "SimpleWhileLoop: the StatelessWhile stays")
  local text = g:serialize("graphdef-text")
  local nfn = select(2, text:gsub("\n  function {", ""))
  is(2, nfn, "with its cond and body, the only functions left")
  is(2, #g:functions(), "two functions")
  ok(text:find('name: "' .. w:attr("body").name .. '"', 1, true), "its body is there")
end

-- ---------------------------------------------------------------- failures
local out = dir .. "/bert1.pb"
local code, err = gerewrite(string.format("run freeze '%s' -o '%s'", BERT, out))
is(1, code, "bert1: the freeze fails (exit 1)")
ok(err:find("variables have no value (the SavedModel has no variables)", 1, true),
   "it says the variables have no value")
ok(err:find("'cls/predictions/transform/dense/kernel'", 1, true), "and names them")
ok(not exists(out), "nothing written")
tap.diag(err)
code, err = gerewrite(string.format("run freeze '%s' -o '%s' --param signature=nope",
                                    HPT2, dir .. "/nope.pb"))
is(1, code, "an unknown signature fails")
ok(err:find("no signature 'nope' (it has: ", 1, true), "naming those there are")

-- ---------------------------------------------------------------- inline_functions
-- bert1's calls inlined from the command line: the count of ops is what
-- the bodies hold (less their _Arg and _Retval ops), nested calls
-- expanded, plus the outer ops, plus one for each call nothing read
-- (the op that keeps its name)
local bert = assert(ge.load(BERT))
local memo = {}
local function expanded(graph, top)
  local n = 0
  for _, op in ipairs(graph:ops()) do
    if not top and (op.type == "_Arg" or op.type == "_Retval") then
      -- not copied
    elseif op.type == "PartitionedCall" or op.type == "StatefulPartitionedCall" then
      local f = op:attr("f").name
      memo[f] = memo[f] or expanded(bert:func(f):graph(), false)
      n = n + memo[f]
      if #op:consumers() == 0 and #op:control_outputs() == 0 then
        n = n + 1
      end
    else
      n = n + 1
    end
  end
  return n
end
local want = expanded(bert, true)
out = dir .. "/bert1_inlined"
code, err = gerewrite(string.format("run inline_functions '%s' -o '%s' --allow-missing-variables",
                                    BERT, out))
is(0, code, "bert1: run inline_functions exits 0")
if code ~= 0 then tap.diag(err) end
local inl = ge.load(out)
ok(inl ~= nil, "the result loads")
if inl then
  local calls = 0
  for _, op in ipairs(inl:ops()) do
    if op.type == "PartitionedCall" or op.type == "StatefulPartitionedCall" then
      calls = calls + 1
    end
  end
  is(0, calls, "no PartitionedCall is left")
  is(want, #inl, "ops: the bodies' less _Arg/_Retval, plus the outer ones (" .. want .. ")")
  local valid, problems = inl:validate()
  is(true, valid, "it validates")
  if not valid then tap.diag(table.concat(problems, "\n"):sub(1, 800)) end
  is("StatefulPartitionedCall:0",
     inl:signature("serving_default").outputs.bert_pretrain_loss_and_metric_layer.name,
     "the signature names the call's tensor still")
  is("Identity", inl:op("StatefulPartitionedCall").type,
     "an Identity of the body's result, which took the unread call's name")
end

-- ---------------------------------------------------------------- TF1
g = freeze("half_plus_two_tf1", HPT1)
if g then
  ok(g:op("a") and g:op("a").type == "Const", "TF1 half_plus_two: a became a Const")
  is("0.5 2.0 3.0", consts(g),
     "TF1 freeze as before: a, b, c")
end

os.execute("rm -rf '" .. dir .. "'")
tap.done()

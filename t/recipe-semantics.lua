-- recipe-semantics.lua: rewrites keep TensorFlow's control-flow semantics.
-- Graphs with while loops and conds built as TensorFlow builds them
-- (t/cflow.lua); every shipped recipe is run on each, and the result must
-- validate with the frame checks (or the recipe must refuse with a
-- message).  Then the six failures of the control-flow issue, each a test.
local tap = require "tap"
local ok, is = tap.ok, tap.is
local lib = require "testlib"
local cflow = require "cflow"

local function problems_of(g)
  local good, problems = g:validate()
  if not good then
    for i = 1, math.min(4, #problems) do tap.diag(problems[i]) end
  end
  return good, problems or {}
end

local function has(list, pat)
  for _, s in ipairs(list) do
    if s:find(pat, 1, true) then return true end
  end
  return false
end

-- ---------------------------------------------------------------- frames
for name in cflow.names() do
  local g = cflow.graph(name)
  ok(problems_of(g), name .. ": the fixture validates")
end
do
  local g = cflow.graph("nested_loops")
  is(g:op("x").frame, "", "op.frame: root")
  is(g:op("while/add").frame, "while/while_context", "op.frame: outer body")
  is(g:op("while/while/add/y").frame, "while/while/while_context",
     "op.frame: a Const on the inner pivot")
  is(g:op("while/while/Exit").frame, "while/while/while_context",
     "op.frame: an Exit is in its loop")
  is(g:op("while/add").frame, "while/while_context",
     "op.frame: the reader of the inner Exit is in the outer frame")
  g = cflow.graph("loop_in_cond")
  is(g:op("cond/true/while/add").frame, "cond/true/while/while_context",
     "op.frame: a loop inside a cond")
  is(g:op("cond/Merge").frame, "", "op.frame: the cond's Merge")
end

-- ---------------------------------------------------------------- matrix
-- Parameters per recipe: a list of variants.
local VARIANTS = {
  add_default_attributes = {{}},
  clone_tower = {{}, {"split=none", "combine=mean"}},
  copy_subgraph = {{"dst_scope=copy", "inputs=x", "outputs=out"},
                   {"dst_scope=copy", "scope=while"}},
  fold_constant_mul = {{}},
  fuse_conv_bias_relu = {{}},
  insert_logging = {{}},
  insert_noise = {{"types=Add,Identity"}},
  merge_duplicate_nodes = {{}},
  obfuscate_names = {{}},
  remove_attribute = {{"attribute_name=_class"}},
  remove_control_dependencies = {{}},
  remove_device = {{}},
  remove_identity_chains = {{}, {"remove_outputs=true",
                                 "control_inputs=move"}},
  remove_nodes = {{"op=Identity"}},
  rename_op = {{"old_op_name=Add", "new_op_name=AddV2"}},
  rename_scope = {{"from=while", "to=loop"}},
  set_device = {{"device=/cpu:0"}},
  sort_by_execution_order = {{}},
  strip_unused_nodes = {{"outputs=out"}},
}
local names = {}
for r in pairs(VARIANTS) do names[#names + 1] = r end
table.sort(names)
for name in cflow.names() do
  for _, r in ipairs(names) do
    for _, assign in ipairs(VARIANTS[r]) do
      local g = cflow.graph(name)
      local what = string.format("%s %s on %s", r, table.concat(assign, " "),
                                 name)
      local ran, err = pcall(lib.run_recipe, r, g, assign)
      if ran then
        ok(problems_of(g), what .. ": validates")
      else
        -- a refusal is a one-line message, not a Lua runtime error
        ok(type(err) == "string" and not err:find("attempt to", 1, true) and
           not err:find("expected an integer", 1, true),
           what .. ": refused with a message: " .. tostring(err))
      end
    end
  end
end

-- ---------------------------------------------------------------- 1
-- remove_nodes op=Identity keeps the loop pivots that body constants wait
-- on; the old behaviour (their control edges moved onto the Switch) is
-- rebuilt and validate names the frame and the op.
do
  local g = cflow.graph("nested_loops")
  local res = lib.run_recipe("remove_nodes", g, {"op=Identity"}) or {}
  ok(problems_of(g), "1: remove_nodes on nested loops validates")
  ok(g:op("while/Identity") and g:op("while/while/Identity"),
     "1: the pivots stay")
  is(res.kept_pivots, 2, "1: two pivots kept, and said")
  ok(not g:op("out"), "1: other Identities still go")

  g = cflow.graph("loop_control_deps")
  local piv, sw = g:op("while/Identity"), g:op("while/Switch")
  piv:output(0):replace_all_uses_with(sw:output(1))
  for _, c in ipairs(piv:control_outputs()) do
    ge.remove_control_inputs(c, {piv})
    ge.add_control_inputs(c, {sw})
  end
  g:remove_op(piv)
  local good, probs = g:validate()
  ok(not good and has(probs, "node 'while/add/y' (Const) in frame " ..
                      "'while/while_context': waits on the loop Switch " ..
                      "'while/Switch'"),
     "1: validate names the frame and the op of the old output")
end

-- ---------------------------------------------------------------- 2
-- Copies between inputs and outputs take whole loops, each in a frame of
-- its own, and never read the original loop.
local function reads_original_loop(g, prefix)
  for _, op in ipairs(g:ops()) do
    if op.name:sub(1, #prefix) == prefix then
      for _, t in ipairs(op.inputs) do
        if type(t) ~= "string" and t.op.name:sub(1, #prefix) ~= prefix and
           t.op.frame ~= "" and t.op.type ~= "Exit" then
          return op.name .. " reads " .. t.name
        end
      end
      for _, c in ipairs(op.control_inputs) do
        if type(c) ~= "string" and c.name:sub(1, #prefix) ~= prefix and
           c.frame ~= "" then
          return op.name .. " waits on " .. c.name
        end
      end
    end
  end
end
do
  for _, fx in ipairs{"single_loop", "nested_loops", "cond_in_loop",
                      "loop_control_deps"} do
    local g = cflow.graph(fx)
    pcall(lib.run_recipe, "copy_subgraph", g, {"dst_scope=copy", "inputs=x",
                                               "outputs=out"})
    ok(problems_of(g), "2: copy_subgraph inputs/outputs on " .. fx ..
       " validates")
    is(reads_original_loop(g, "copy/"), nil,
       "2: no copied op reads the original loop (" .. fx .. ")")
    is("copy/while/while_context",
       g:op("copy/while/Merge") and g:op("copy/while/Merge").frame,
       "2: the copied loop has its own frame (" .. fx .. ")")
    g = cflow.graph(fx)
    pcall(lib.run_recipe, "clone_tower", g, {"inputs=x", "outputs=out"})
    ok(problems_of(g), "2: clone_tower inputs/outputs on " .. fx ..
       " validates")
    ok(g:op("tower_1/while/Merge"), "2: the tower has the loop (" .. fx .. ")")
    is(reads_original_loop(g, "tower_1/"), nil,
       "2: no tower op reads another loop (" .. fx .. ")")
  end
  -- a view cutting the loop is refused, naming it
  local g = cflow.graph("single_loop")
  local ops = ge.get_walks_intersection_ops(g:tensor("x"), g:op("out"))
  local done, err = pcall(ge.copy_with_input_replacements, ge.sgv(ops), {},
                          {dst_scope = "copy"})
  ok(not done and tostring(err):find("cut while loop 'while/while_context'",
                                      1, true),
     "2: a copy of part of a loop is refused, naming it: " .. tostring(err))
  is(#ge.whole_loops(ops), 12, "2: ge.whole_loops adds the rest of it")
  is(#ge.sgv(ops, {loops = "whole"}).ops, 12, "2: so does sgv loops=whole")
  local made, serr = pcall(ge.sgv, ops, {loops = "refuse"})
  ok(not made and tostring(serr):find("cut while loop 'while/while_context'",
                                       1, true),
     "2: sgv loops=refuse names the loop: " .. tostring(serr))
  is(#ge.sgv(ops).ops, #ops, "2: a plain view may cut it (reroutes)")
end

-- ---------------------------------------------------------------- 3
do
  local g = cflow.graph("loop_and_scalars")
  local ran, res = pcall(lib.run_recipe, "clone_tower", g,
                         {"inputs=x,keep_prob", "outputs=out"})
  ok(ran, "3: clone_tower runs: " .. tostring(not ran and res or ""))
  res = ran and res or {}
  ok(problems_of(g), "3: clone_tower with a scalar input validates")
  is(table.concat(res.fed_whole or {}, ","), "keep_prob:0",
     "3: the scalar is fed whole, and said")
  ok(g:op("x/tower_split") and not g:op("keep_prob/tower_split"),
     "3: only the batched input is split")
  local reads = {}
  for _, i in ipairs{0, 1} do
    local op = g:op("tower_" .. i .. "/scaled")
    reads[#reads + 1] = op and op.inputs[2].name or "-"
  end
  is(table.concat(reads, ","), "keep_prob:0,keep_prob:0",
     "3: every tower reads keep_prob whole")
end

-- ---------------------------------------------------------------- 4
do
  local g = assert(ge.parse([[
node { name: "W" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
node { name: "W/read" op: "Identity" input: "W" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "Wx" op: "Identity" input: "W/read" attr { key: "T" value { type: DT_FLOAT } } }
]], "graphdef-text"))
  pcall(lib.run_recipe, "copy_subgraph", g, {"scope=W", "dst_scope=W2"})
  ok(g:op("W2") and g:op("W2/read"), "4: scope W copies W and W/read")
  is("W2:0", g:op("W2/read") and g:op("W2/read").inputs[1].name,
     "4: the copy reads the copy")
  ok(not g:op("W2x") and not g:op("W2/x"), "4: Wx is not in scope W")
  ok(problems_of(g), "4: validates")
end

-- ---------------------------------------------------------------- 5
do
  local g = cflow.graph("loop_and_scalars")
  local done, err = pcall(lib.run_recipe, "insert_noise", g, {"types=AddV2"})
  err = tostring(err)
  ok(not done and err:find("n2:0 (AddV2) is int32", 1, true) and
     err:find("integers=cast", 1, true),
     "5: an int32 site is refused clearly: " .. tostring(err))
  ok(not tostring(err):find("expected an integer", 1, true),
     "5: not the tensor_value error")
  g = assert(ge.parse(cflow.text("loop_and_scalars") ..
    'node { name: "n3" op: "Identity" input: "n2" attr { key: "T" value { type: DT_INT32 } } }',
    "graphdef-text"))
  local cast_ok, res = pcall(lib.run_recipe, "insert_noise", g,
                              {"types=AddV2", "integers=cast"})
  res = cast_ok and res or {}
  is(res.sites, 1, "5: integers=cast adds the noise")
  is("Cast", g:op("n3").inputs[1].op.type, "5: ... cast back to int32")
  ok(problems_of(g), "5: validates")
  g = cflow.graph("single_loop")
  res = lib.run_recipe("insert_noise", g, {"types=Identity,Add"}) or {}
  is(table.concat(res.unread or {}, ","), "out",
     "5: the unread site is reported")
  ok(not g:op("out/noise/add"), "5: and gets no noise")
  ok(g:op("while/add/noise/stddev") and
     g:op("while/add/noise/stddev").frame == "while/while_context",
     "5: noise in a loop runs in its frame")
  ok(problems_of(g), "5: noise in a loop validates")
  local help = lib.recipe("insert_noise").description
  ok(help:find("nobody reads", 1, true) and help:find("integers=cast", 1, true),
     "5: the help says so")
end

-- ---------------------------------------------------------------- 6
do
  local g = cflow.graph("single_loop")
  pcall(lib.run_recipe, "remove_identity_chains", g, {"remove_outputs=true",
                                                      "outputs=out"})
  ok(g:op("out"), "6: an output named in outputs stays")
  local meta = assert(ge.parse([[
graph_def {
]] .. cflow.text("single_loop") .. [[
node { name: "y" op: "Identity" input: "out" attr { key: "T" value { type: DT_FLOAT } } }
}
signature_def { key: "serving_default" value {
  inputs { key: "x" value { name: "x:0" } }
  outputs { key: "y" value { name: "y:0" } } } }
]], "meta-text"))
  lib.run_recipe("remove_identity_chains", meta, {"remove_outputs=true"})
  ok(meta:op("y"), "6: a signature output stays")
  ok(problems_of(meta), "6: validates")
  local dir = tap.tmpdir()
  -- a .json name means a TensorFlow.js model, never GraphDef bytes
  local saved, err = g:save(dir .. "/out.json")
  ok(saved, "6: saving to .json writes a TensorFlow.js model: " .. tostring(err))
  local js = saved and ge.load(dir .. "/out.json")
  ok(js and #js == #g, "6: which loads back with every op")
  local onnx, oerr = g:save(dir .. "/out.onnx")
  ok(not onnx and tostring(oerr):find("out.onnx", 1, true),
     "6: saving to .onnx is refused: " .. tostring(oerr))
  local f = io.open(dir .. "/out.onnx")
  ok(not f, "6: and writes nothing")
  if f then f:close() end
  ok(g:save(dir .. "/out.meta"), "6: .meta saves")
  local back = ge.load(dir .. "/out.meta")
  ok(back and ge.type(back) == "graph", "6: loads back")
end

tap.done()

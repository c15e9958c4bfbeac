-- recipe-graph.lua: every shipped recipe on small graphs built here: the
-- result validates and has the structure the recipe promises.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises
local run = require("testlib").run_recipe

local function valid(g, name)
  local good, problems = g:validate()
  ok(good, name .. ": the result validates")
  if not good then tap.diag(table.concat(problems, "\n")) end
end

local function names(list)
  local t = {}
  for i, x in ipairs(list) do t[i] = type(x) == "string" and x or x.name end
  return t
end

local function opnames(g) return names(g:ops()) end

local F32 = "float32"
-- x -> conv(x, w) -> bias -> relu -> id -> conv2(id, w) -> out
--               \-> side (a second reader of conv)
local function convnet()
  local g = ge.graph()
  local x = g:add_op{type = "Placeholder", name = "x",
                     attrs = {dtype = F32, shape = ge.shape{-1, 8, 8, 3}}}
  local w = g:add_op{type = "Const", name = "w",
                     attrs = {dtype = F32, value = ge.tensor_value(F32, {1, 1, 3, 3},
                       {1, 0, 0, 0, 1, 0, 0, 0, 1})}}
  local b = g:add_op{type = "Const", name = "b",
                     attrs = {dtype = F32, value = ge.tensor_value(F32, {3}, {0, 0, 0})}}
  local conv = g:add_op{type = "Conv2D", name = "net/conv", inputs = {"x", "w"},
                        attrs = {T = F32, strides = {1, 1, 1, 1}, padding = "SAME"}}
  g:add_op{type = "BiasAdd", name = "net/bias", inputs = {"net/conv", "b"},
           attrs = {T = F32}}
  g:add_op{type = "Relu", name = "net/relu", inputs = {"net/bias"}, attrs = {T = F32}}
  g:add_op{type = "Identity", name = "net/id", inputs = {"net/relu"},
           attrs = {T = F32}}
  g:add_op{type = "Conv2D", name = "net/conv2", inputs = {"net/id", "w"},
           attrs = {T = F32, strides = {1, 1, 1, 1}, padding = "SAME"}}
  g:add_op{type = "Identity", name = "out", inputs = {"net/conv2"},
           attrs = {T = F32}}
  g:add_op{type = "Square", name = "side", inputs = {"net/conv"}, attrs = {T = F32}}
  return g, x, w, b, conv
end

-- ---------------------------------------------------------------- rename_op
do
  local g = convnet()
  run("rename_op", g, {"old_op_name=Relu", "new_op_name=Relu6"})
  is("Relu6", g:op("net/relu").type, "rename_op: the type changed")
  is("net/bias:0", g:op("net/relu").inputs[1].name, "rename_op: inputs kept")
  valid(g, "rename_op")
end

-- ---------------------------------------------------------------- rename_scope
do
  local g = convnet()
  g:add_op{type = "NoOp", name = "net"} -- the scope's own name
  g:op("side"):set_attr("_class", {"loc:@net/conv"}, "list(s)")
  run("rename_scope", g, {"from=net", "to=tower_1"})
  same({"loc:@tower_1/conv"}, g:op("side"):attr("_class"),
       "rename_scope: colocation attrs follow")
  ok(g:op("tower_1/conv") and g:op("tower_1/relu") and g:op("tower_1"),
     "rename_scope: the ops moved")
  is(nil, g:op("net/conv"), "rename_scope: old names are gone")
  is("tower_1/conv2:0", g:op("out").inputs[1].name,
     "rename_scope: readers outside follow")
  valid(g, "rename_scope")
  local g2 = convnet()
  g2:add_op{type = "NoOp", name = "other/relu"}
  raises("already is", function()
    run("rename_scope", g2, {"from=net", "to=other"})
  end, "rename_scope: a clash with an op outside is refused")
  ok(g2:op("net/relu") ~= nil, "rename_scope: and nothing moved")
  local g3 = convnet()
  run("rename_scope", g3, {"from=net/", "to="})
  ok(g3:op("conv") and g3:op("conv2"), "rename_scope: to the top level")
  valid(g3, "rename_scope to the top")
end

-- ---------------------------------------------------------------- devices
do
  local g = convnet()
  g:op("x").device = "/device:CPU:0"
  run("set_device", g, {"device=/device:GPU:1", "if_default=true"})
  is("/device:CPU:0", g:op("x").device, "set_device if_default: set ones stay")
  is("/device:GPU:1", g:op("net/conv").device, "set_device: others get it")
  run("set_device", g, {"device=/device:GPU:2", "scope=net", "op=Conv2D"})
  is("/device:GPU:2", g:op("net/conv2").device, "set_device: scope and type")
  is("/device:GPU:1", g:op("net/relu").device, "set_device: other types stay")
  is("/device:GPU:1", g:op("out").device, "set_device: other scopes stay")
  run("remove_device", g)
  local all_clear = true
  for _, op in ipairs(g:ops()) do
    if op.device ~= "" then all_clear = false end
  end
  ok(all_clear, "remove_device: no op has a device")
  valid(g, "devices")
end

-- ---------------------------------------------------------------- attrs
do
  local g = convnet()
  g:op("net/conv"):set_attr("_class", {"loc:@w"})
  g:op("side"):set_attr("_class", {"loc:@w"})
  run("remove_attribute", g, {"attribute_name=_class", "op_name=Conv2D"})
  is(nil, g:op("net/conv"):attr("_class"), "remove_attribute: from Conv2D")
  ok(g:op("side"):attr("_class") ~= nil, "remove_attribute: others keep it")
  run("remove_attribute", g, {"attribute_name=_class"})
  is(nil, g:op("side"):attr("_class"), "remove_attribute: * is every op")
  is(nil, g:op("net/conv"):attr("use_cudnn_on_gpu"), "no default attr yet")
  run("add_default_attributes", g)
  is(true, g:op("net/conv"):attr("use_cudnn_on_gpu"),
     "add_default_attributes: Conv2D's use_cudnn_on_gpu")
  same({1, 1, 1, 1}, g:op("net/conv"):attr("dilations"),
       "add_default_attributes: dilations")
  is("SAME", g:op("net/conv"):attr("padding"), "existing attrs stay")
  valid(g, "attrs")
end

-- ---------------------------------------------------------------- control
do
  local g = convnet()
  g:add_op{type = "NoOp", name = "init", control_inputs = {"w", "b"}}
  ge.add_control_inputs(g:op("out"), {g:op("init")})
  run("remove_control_dependencies", g)
  local n = 0
  for _, op in ipairs(g:ops()) do n = n + #op.control_inputs end
  is(0, n, "remove_control_dependencies: no control input left")
  valid(g, "remove_control_dependencies")
end

-- ---------------------------------------------------------------- remove_nodes
do
  local g = convnet()
  g:add_op{type = "Identity", name = "id2", inputs = {"net/id"}, attrs = {T = F32}}
  g:add_op{type = "Neg", name = "tail", inputs = {"id2"}, attrs = {T = F32}}
  g:add_op{type = "NoOp", name = "after_id", control_inputs = {"net/id"}}
  run("remove_nodes", g, {"op=Identity", "outputs=out"})
  is(nil, g:op("net/id"), "remove_nodes: the Identity is gone")
  is(nil, g:op("id2"), "remove_nodes: chains of them too")
  ok(g:op("out") ~= nil, "remove_nodes: protected outputs stay")
  is("net/relu:0", g:op("net/conv2").inputs[1].name,
     "remove_nodes: readers read the input")
  is("net/relu:0", g:op("tail").inputs[1].name, "remove_nodes: through chains")
  same({"net/relu"}, names(g:op("after_id").control_inputs),
       "remove_nodes: control edges move to the input's op")
  valid(g, "remove_nodes")
end

-- ---------------------------------------------------------------- strip_unused
do
  local g = convnet()
  g:add_op{type = "Const", name = "unused",
           attrs = {dtype = F32, value = ge.tensor_value(F32, {}, {1})}}
  run("strip_unused_nodes", g, {"outputs=out:0", "inputs=net/relu"})
  same({"w", "net/relu", "net/id", "net/conv2", "out"}, opnames(g),
       "strip_unused_nodes: only what out needs, in node order")
  local ph = g:op("net/relu")
  is("Placeholder", ph.type, "strip_unused_nodes: the input is a Placeholder")
  is("float32", ph:attr("dtype"), "strip_unused_nodes: of the input's dtype")
  same({}, ph.inputs, "strip_unused_nodes: without inputs")
  is("net/relu:0", g:op("net/id").inputs[1].name, "readers follow")
  valid(g, "strip_unused_nodes")
  local g2 = convnet()
  run("strip_unused_nodes", g2, {"outputs=side", "inputs=x", "type=int32",
                                 "shape=1,8,8,3"})
  same({"x", "w", "net/conv", "side"}, opnames(g2),
       "strip_unused_nodes: a Placeholder input stays as it is")
  local g3 = convnet()
  run("strip_unused_nodes", g3, {"outputs=side", "inputs=net/conv",
                                 "type=float16", "shape=1,-1,8,3"})
  is("float16", g3:op("net/conv"):attr("dtype"), "type= sets the dtype")
  same({1, -1, 8, 3}, g3:op("net/conv"):output(0).shape, "shape= sets the shape")
  raises("no output op named 'nope'", function()
    run("strip_unused_nodes", convnet(), {"outputs=nope"})
  end, "strip_unused_nodes: a missing output is an error")
end

-- ---------------------------------------------------------------- sort
do
  local g = ge.graph()
  local function const(name, v)
    return g:add_op{type = "Const", name = name,
                    attrs = {dtype = F32, value = ge.tensor_value(F32, {}, {v})}}
  end
  const("a", 1)
  g:add_op{type = "Neg", name = "early", inputs = {"a"}, attrs = {T = F32}}
  const("b", 2)
  g:add_op{type = "NoOp", name = "free"}
  const("late", 3)
  g:add_op{type = "AddV2", name = "sum", inputs = {"early", "b"},
           attrs = {T = F32}}
  -- early now reads late, which comes after it
  local early = g:op("early")
  early:set_input(0, "late")
  ge.add_control_inputs(g:op("b"), {g:op("sum")}) -- a cycle? no: see below
  ge.remove_control_inputs(g:op("b"), {g:op("sum")})
  ge.add_control_inputs(g:op("a"), {g:op("free")})
  run("sort_by_execution_order", g)
  same({"b", "free", "a", "late", "early", "sum"}, opnames(g),
       "sort_by_execution_order: inputs first, otherwise the old order")
  ok(g:op("early") == early, "the op objects held stay the same")
  is("late:0", early.inputs[1].name, "and keep their edges")
  valid(g, "sort_by_execution_order")
  -- a cycle that is not a while loop is an error
  local c = ge.graph()
  c:add_op{type = "Const", name = "k",
           attrs = {dtype = F32, value = ge.tensor_value(F32, {}, {1})}}
  c:add_op{type = "AddV2", name = "p", inputs = {"k", "k"}, attrs = {T = F32}}
  c:add_op{type = "Neg", name = "q", inputs = {"p"}, attrs = {T = F32}}
  c:op("p"):set_input(1, "q")
  raises("the graph has a cycle through 'p'", function()
    run("sort_by_execution_order", c)
  end, "sort_by_execution_order: a cycle is reported")
  -- a while loop's back edge does not count
  local w = ge.graph()
  w:add_op{type = "Const", name = "init",
           attrs = {dtype = F32, value = ge.tensor_value(F32, {}, {0})}}
  w:add_op{type = "Enter", name = "enter", inputs = {"init"},
           attrs = {T = F32, frame_name = "loop"}}
  w:add_op{type = "Merge", name = "merge", inputs = {"enter", "enter"},
           attrs = {T = F32, N = 2}}
  w:add_op{type = "Neg", name = "body", inputs = {"merge"}, attrs = {T = F32}}
  w:add_op{type = "NextIteration", name = "next", inputs = {"body"},
           attrs = {T = F32}}
  w:op("merge"):set_input(1, "next")
  run("sort_by_execution_order", w)
  same({"init", "enter", "merge", "body", "next"}, opnames(w),
       "sort_by_execution_order: NextIteration -> Merge is a back edge")
end

-- ---------------------------------------------------------------- merge
do
  local g = convnet()
  -- a duplicate chain: conv -> bias again
  g:add_op{type = "Conv2D", name = "dup/conv", inputs = {"x", "w"},
           attrs = {T = F32, strides = {1, 1, 1, 1}, padding = "SAME"}}
  g:add_op{type = "BiasAdd", name = "dup/bias", inputs = {"dup/conv", "b"},
           attrs = {T = F32}}
  g:add_op{type = "AddV2", name = "both", inputs = {"net/bias", "dup/bias"},
           attrs = {T = F32}}
  -- same value but another attr: stays
  g:add_op{type = "Conv2D", name = "valid/conv", inputs = {"x", "w"},
           attrs = {T = F32, strides = {1, 1, 1, 1}, padding = "VALID"}}
  -- stateful: stays
  g:add_op{type = "RandomStandardNormal", name = "r1", inputs = {"b"},
           attrs = {dtype = F32, T = F32}}
  g:add_op{type = "RandomStandardNormal", name = "r2", inputs = {"b"},
           attrs = {dtype = F32, T = F32}}
  -- two Placeholders alike: distinct inputs, stay
  g:add_op{type = "Placeholder", name = "x2",
           attrs = {dtype = F32, shape = ge.shape{-1, 8, 8, 3}}}
  -- equal Consts merge
  g:add_op{type = "Const", name = "w_copy",
           attrs = {dtype = F32, value = ge.tensor_value(F32, {1, 1, 3, 3},
             {1, 0, 0, 0, 1, 0, 0, 0, 1})}}
  g:add_op{type = "Conv2D", name = "conv_wc", inputs = {"x2", "w_copy"},
           attrs = {T = F32, strides = {1, 1, 1, 1}, padding = "SAME"}}
  g:add_op{type = "NoOp", name = "after", control_inputs = {"dup/bias"}}
  run("merge_duplicate_nodes", g)
  is(nil, g:op("dup/conv"), "merge_duplicate_nodes: the duplicate conv went")
  is(nil, g:op("dup/bias"), "merge_duplicate_nodes: and then its bias")
  same({"net/bias:0", "net/bias:0"}, names(g:op("both").inputs),
       "merge_duplicate_nodes: readers read the first")
  same({"net/bias"}, names(g:op("after").control_inputs),
       "merge_duplicate_nodes: control edges follow")
  ok(g:op("valid/conv") ~= nil, "merge_duplicate_nodes: other attrs stay")
  ok(g:op("r1") and g:op("r2"), "merge_duplicate_nodes: stateful ops stay")
  ok(g:op("x2") ~= nil, "merge_duplicate_nodes: Placeholders stay")
  is(nil, g:op("w_copy"), "merge_duplicate_nodes: equal Consts merge")
  is("w:0", g:op("conv_wc").inputs[2].name, "readers of the Const follow")
  valid(g, "merge_duplicate_nodes")
end

-- ---------------------------------------------------------------- obfuscate
do
  local g = convnet()
  local conv = g:op("net/conv")
  run("obfuscate_names", g, {"inputs=x", "outputs=out:0"})
  same({"x", "a", "b", "c", "d", "e", "f", "g", "out", "h"}, opnames(g),
       "obfuscate_names: short names in node order, inputs and outputs kept")
  is("c", conv.name, "obfuscate_names: ops are renamed, not replaced")
  is("c:0", g:op("h").inputs[1].name,
     "obfuscate_names: edges follow")
  valid(g, "obfuscate_names")
  local g2 = convnet()
  run("obfuscate_names", g2)
  local again = convnet()
  run("obfuscate_names", again)
  same(opnames(g2), opnames(again), "obfuscate_names: deterministic")
  local g4 = convnet()
  local side = g4:op("side")
  side:set_attr("_class", {"loc:@net/conv"}, "list(s)")
  run("obfuscate_names", g4)
  same({"loc:@" .. side.inputs[1].op.name}, side:attr("_class"),
       "obfuscate_names: colocation attrs follow")
  valid(g4, "obfuscate_names with colocation")
  local g3 = ge.graph()
  g3:add_op{type = "NoOp", name = "B"}
  g3:add_op{type = "NoOp", name = "other"}
  g3:add_op{type = "NoOp", name = "more"}
  run("obfuscate_names", g3, {"outputs=B"})
  same({"B", "a", "c"}, opnames(g3),
       "obfuscate_names: names that differ only in case from kept ones are skipped")
  -- every kind of placeholder is an input (PlaceholderV2 of old graphs)
  local g5 = ge.graph()
  g5:add_op{type = "PlaceholderV2", name = "in_v2",
            attrs = {dtype = F32, shape = ge.shape{2}}}
  g5:add_op{type = "Const", name = "dflt",
            attrs = {dtype = F32, value = ge.tensor_value(F32, {2}, {1, 2})}}
  g5:add_op{type = "PlaceholderWithDefault", name = "in_default", inputs = {"dflt"},
            attrs = {dtype = F32, shape = ge.shape{2}}}
  g5:add_op{type = "Add", name = "sum", inputs = {"in_v2", "in_default"},
            attrs = {T = F32}}
  run("obfuscate_names", g5)
  same({"in_v2", "a", "in_default", "sum"}, opnames(g5),
       "obfuscate_names: a PlaceholderV2 and a PlaceholderWithDefault keep their names")
end

-- ---------------------------------------------------------------- logging
do
  local g = convnet()
  run("insert_logging", g, {"op=Relu", "show_name=true", "message=relu out",
                            "first_n=5"})
  local pr = g:op("net/relu__print__")
  ok(pr ~= nil and pr.type == "Print", "insert_logging: a Print op")
  same({"net/relu:0", "net/relu:0"}, names(pr.inputs),
       "insert_logging: it reads the op twice (input and data)")
  is("net/relu__print__:0", g:op("net/id").inputs[1].name,
     "insert_logging: readers read the Print")
  is("net/relu relu out", pr:attr("message"), "insert_logging: message")
  is(5, pr:attr("first_n"), "insert_logging: first_n")
  same({"float32"}, pr:attr("U"), "insert_logging: U lists the data dtypes")
  valid(g, "insert_logging")
  local g2 = convnet()
  run("insert_logging", g2, {"prefix=net/"})
  local n = 0
  for _, op in ipairs(g2:ops()) do if op.type == "Print" then n = n + 1 end end
  is(5, n, "insert_logging: prefix selects the scope's 5 ops")
end

-- ---------------------------------------------------------------- noise
local function check_noise(g, sites, dtype, what)
  local blocks = 0
  for _, site in ipairs(sites) do
    local x = site:output(0)
    local add = g:op(site.name .. "/noise/add")
    local mul = g:op(site.name .. "/noise/mul")
    local rnd = g:op(site.name .. "/noise/random")
    local shape = g:op(site.name .. "/noise/shape")
    if add and mul and rnd and shape then
      blocks = blocks + 1
      is(x, add.inputs[1], what .. ": add reads x")
      is(mul:output(0), add.inputs[2], what .. ": add reads the scaled noise")
      is(x, shape.inputs[1], what .. ": Shape reads x")
      is("float32", rnd:attr("dtype"), what .. ": the noise is float32")
      is(dtype, add:attr("T"), what .. ": the sum is of x's dtype")
      -- x is read only by the noise block
      local readers = names(x:consumers())
      table.sort(readers)
      same({add.name, shape.name}, readers,
           what .. ": " .. site.name .. " is read only by its noise block")
    end
  end
  is(#sites, blocks, what .. ": one noise block per site")
end

do
  local g = convnet()
  local conv, conv2 = g:op("net/conv"), g:op("net/conv2")
  local side = g:op("side")
  run("insert_noise", g, {"stddev=0.5", "seed=7"})
  check_noise(g, {conv, conv2}, "float32", "insert_noise")
  is("net/conv/noise/add:0", g:op("net/bias").inputs[1].name,
     "insert_noise: the first reader reads the noisy tensor")
  is("net/conv/noise/add:0", side.inputs[1].name,
     "insert_noise: so does every other reader")
  is("net/conv2/noise/add:0", g:op("out").inputs[1].name,
     "insert_noise: the second site's reader too")
  is(0.5, g:op("net/conv/noise/stddev"):attr("value"):totable()[1],
     "insert_noise: stddev")
  is(7, g:op("net/conv/noise/random"):attr("seed"), "insert_noise: seed")
  is(1, g:op("net/conv/noise/random"):attr("seed2"), "insert_noise: seed2 1")
  is(2, g:op("net/conv2/noise/random"):attr("seed2"), "insert_noise: seed2 2")
  valid(g, "insert_noise")
  -- another dtype: a Cast
  local h = ge.graph()
  h:add_op{type = "Placeholder", name = "x", attrs = {dtype = "float16"}}
  h:add_op{type = "Relu", name = "r", inputs = {"x"}, attrs = {T = "float16"}}
  h:add_op{type = "Neg", name = "n", inputs = {"r"}, attrs = {T = "float16"}}
  local r = h:op("r")
  run("insert_noise", h, {"types=Relu,Tanh", "seed=-1"})
  check_noise(h, {r}, "float16", "insert_noise float16")
  local cast = h:op("r/noise/cast")
  ok(cast and cast:attr("DstT") == "float16" and cast:attr("SrcT") == "float32",
     "insert_noise: a Cast to float16")
  is(cast:output(0), h:op("r/noise/mul").inputs[1], "the Mul reads the Cast")
  is(0, h:op("r/noise/random"):attr("seed2"), "seed=-1: seed2 0")
  valid(h, "insert_noise float16")
end

-- ---------------------------------------------------------------- towers
-- x -> net/mm(x, w/read) -> net/relu -> out, w a variable with its
-- initializer, read and init op
local function varnet()
  local g = ge.graph()
  g:add_op{type = "Placeholder", name = "x", attrs = {dtype = F32, shape = ge.shape{-1, 4}}}
  g:add_op{type = "VariableV2", name = "w",
           attrs = {dtype = F32, shape = ge.shape{4, 2}, container = "", shared_name = ""}}
  g:add_op{type = "Const", name = "w/initial_value",
           attrs = {dtype = F32, value = ge.tensor_value(F32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}}
  g:add_op{type = "Assign", name = "w/Assign", inputs = {"w", "w/initial_value"},
           attrs = {T = F32, validate_shape = true, use_locking = true}}
  g:add_op{type = "Identity", name = "w/read", inputs = {"w"}, attrs = {T = F32}}
  g:add_op{type = "MatMul", name = "net/mm", inputs = {"x", "w/read"}, attrs = {T = F32}}
  g:add_op{type = "Relu", name = "net/relu", inputs = {"net/mm"}, attrs = {T = F32}}
  g:add_op{type = "Identity", name = "out", inputs = {"net/relu"}, attrs = {T = F32}}
  g:add_op{type = "NoOp", name = "init", control_inputs = {"w/Assign"}}
  return g
end

local function count_type(g, t)
  local n = 0
  for _, op in ipairs(g:ops()) do if op.type == t then n = n + 1 end end
  return n
end

do
  local g = varnet()
  run("clone_tower", g, {"towers=3"})
  for i = 0, 2 do
    local mm = g:op("tower_" .. i .. "/net/mm")
    ok(mm ~= nil, "clone_tower: tower " .. i .. " exists")
    is("/device:GPU:" .. i, mm and mm.device, "clone_tower: tower " .. i .. " on GPU " .. i)
    is("x/tower_split:" .. i, mm and mm.inputs[1].name,
       "clone_tower: tower " .. i .. " reads its share of the batch")
    is("w/read:0", mm and mm.inputs[2].name, "clone_tower: the variable is shared")
  end
  is(3, g:op("x/tower_split"):attr("num_split"), "clone_tower: a Split in 3")
  local out = g:op("out")
  is("ConcatV2", out.type, "clone_tower: the output concatenates the towers")
  same({"tower_0/out:0", "tower_1/out:0", "tower_2/out:0", "out/towers/axis:0"},
       names(out.inputs), "clone_tower: in tower order")
  is(nil, g:op("net/mm"), "clone_tower: the original ops are gone")
  is(1, count_type(g, "VariableV2"), "clone_tower: one variable")
  valid(g, "clone_tower")

  g = varnet()
  run("clone_tower", g, {"towers=2", "variables=duplicate", "combine=mean",
                         "devices=/job:worker/task:%d", "split=none"})
  is(3, count_type(g, "VariableV2"), "clone_tower duplicate: a variable per tower")
  is("tower_1/w/read:0", g:op("tower_1/net/mm").inputs[2].name,
     "clone_tower duplicate: each tower reads its own")
  is("x:0", g:op("tower_1/net/mm").inputs[1].name, "split=none: the whole input")
  is("/job:worker/task:1", g:op("tower_1/net/mm").device, "devices= with %d")
  local ctl = names(g:op("init").control_inputs)
  table.sort(ctl)
  same({"tower_0/w/Assign", "tower_1/w/Assign", "w/Assign"}, ctl,
       "clone_tower duplicate: init runs every initializer")
  is("Mul", g:op("out").type, "combine=mean: a scaled sum")
  is("AddN", g:op("out").inputs[1].op.type, "combine=mean: of the towers")
  is(0.5, g:op("out").inputs[2].op:attr("value"):totable()[1], "combine=mean: by 1/2")
  valid(g, "clone_tower duplicate")

  g = varnet()
  run("clone_tower", g, {"towers=2", "scope=net", "combine=none", "devices="})
  ok(g:op("tower_0/net/relu") and g:op("tower_1/net/relu"),
     "clone_tower scope: under tower_i/")
  is("", g:op("tower_1/net/relu").device, "devices= empty: no device")
  is("tower_0/net/relu:0", g:op("out").inputs[1].name,
     "combine=none: readers read tower 0")
  is("x/tower_split:1", g:op("tower_1/net/mm").inputs[1].name,
     "clone_tower scope: a Placeholder input is split")
  is(nil, g:op("w/read/tower_split"), "clone_tower scope: other inputs are not")
  valid(g, "clone_tower scope")
  local sc = varnet()
  sc:add_op{type = "Sum", name = "total", inputs = {"out", "w/initial_value"},
            attrs = {T = F32, Tidx = "int32", _output_shapes = {ge.shape{}}},
            attr_kinds = {_output_shapes = "list(shape)"}}
  raises("output total:0 is a scalar", function()
    run("clone_tower", sc, {"outputs=total"})
  end, "clone_tower: concat of a scalar output is refused")
  raises("towers must be at least 1", function()
    run("clone_tower", varnet(), {"towers=0"})
  end, "clone_tower: towers=0 is refused")
end

do
  local g = varnet()
  run("copy_subgraph", g, {"scope=net", "dst_scope=head2"})
  is("x:0", g:op("head2/mm").inputs[1].name, "copy_subgraph: reads the same input")
  is("w/read:0", g:op("head2/mm").inputs[2].name, "copy_subgraph: shares the variable")
  is("head2/mm:0", g:op("head2/relu").inputs[1].name, "copy_subgraph: inside the copy")
  ok(g:op("net/mm") ~= nil, "copy_subgraph: the original stays")
  valid(g, "copy_subgraph")
  g = varnet()
  run("copy_subgraph", g, {"inputs=x", "outputs=out", "dst_scope=copy",
                           "variables=duplicate"})
  is(2, count_type(g, "VariableV2"), "copy_subgraph duplicate: a second variable")
  is("copy/w/read:0", g:op("copy/net/mm").inputs[2].name,
     "copy_subgraph duplicate: the copy reads it")
  valid(g, "copy_subgraph duplicate")
  g = varnet()
  run("copy_subgraph", g, {"scope=net", "dst_scope=iso", "connect=placeholders"})
  is("Placeholder", g:op("iso/mm").inputs[1].op.type,
     "copy_subgraph placeholders: reads a new Placeholder")
  valid(g, "copy_subgraph placeholders")
end

do
  local g = convnet()
  run("signature", g, {"inputs=x:0", "outputs=scores=out:0,side:0"})
  local s = g:signature("serving_default")
  ok(s.inputs.x == g:tensor("x:0"), "signature: a key from the op name")
  ok(s.outputs.scores == g:tensor("out:0") and s.outputs.side == g:tensor("side:0"),
     "signature: KEY=TENSOR and TENSOR entries")
  is("tensorflow/serving/predict", s.method_name, "signature: predict by default")
  run("signature", g, {"rename=serving_default:predict", "name=predict",
                       "rename_inputs=x:images", "method_name=m"})
  is(nil, g:signature("serving_default"), "signature: renamed")
  ok(g:signature("predict").inputs.images == g:tensor("x:0"),
     "signature: an input key renamed")
  run("signature", g, {"remove=predict"})
  same({}, g:signature_names(), "signature: removed")
  local r, err = run("signature", g, {"outputs=nope:0"})
  ok(r == nil and err:find("names no tensor 'nope:0'", 1, true),
     "signature: a missing tensor refuses the model with a message")
  r, err = run("signature", g, {"outputs=a=out:0,a=side:0"})
  ok(r == nil and err:find("duplicate key 'a'", 1, true),
     "signature: a duplicate key refuses the model")
  same({}, g:signature_names(), "signature: a refusal changes nothing")
  valid(g, "signature")
end

tap.done()

-- lua-transform.lua: ge.transform from Lua: Transformer and its handlers,
-- copy, copy_with_input_replacements, graph_replace, TransformerInfo,
-- import_graph and g:export_scoped.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises
local names = require("testlib").names

-- ---------------------------------------------------------------- fixtures

local F32 = 'attr { key: "T" value { type: DT_FLOAT } } '
local DT = 'attr { key: "dtype" value { type: DT_FLOAT } } '
local function dims(...)
  local s = ""
  for _, d in ipairs{...} do s = s .. "dim { size: " .. d .. " } " end
  return s
end
local function shp(d)
  return 'attr { key: "_output_shapes" value { list { shape { ' .. d .. ' } } } } '
end
local function ph(n, d)
  return 'node { name: "' .. n .. '" op: "Placeholder" ' .. DT ..
    'attr { key: "shape" value { shape { ' .. d .. ' } } } ' .. shp(d) .. '}\n'
end
local function const(n, d)
  return 'node { name: "' .. n .. '" op: "Const" ' .. DT ..
    'attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { ' ..
    d .. ' } float_val: 0.5 } } } ' .. shp(d) .. '}\n'
end
local function op(n, type, inputs, extra)
  local s = 'node { name: "' .. n .. '" op: "' .. type .. '" '
  for _, i in ipairs(inputs) do s = s .. 'input: "' .. i .. '" ' end
  return s .. F32 .. (extra or "") .. '}\n'
end
local function var(n, d)
  local colo = 'attr { key: "_class" value { list { s: "loc:@' .. n .. '" } } } '
  return 'node { name: "' .. n .. '" op: "VariableV2" ' .. DT ..
    'attr { key: "shape" value { shape { ' .. d .. ' } } } ' .. colo .. shp(d) .. '}\n' ..
    op(n .. "/read", "Identity", {n}, colo .. shp(d))
end

-- A two-layer dense network under scope f.
local DENSE = ph("f/x", dims(-1, 4)) ..
  var("f/dense_1/kernel", dims(4, 3)) .. var("f/dense_1/bias", dims(3)) ..
  op("f/dense_1/MatMul", "MatMul", {"f/x", "f/dense_1/kernel/read"}, shp(dims(-1, 3))) ..
  op("f/dense_1/BiasAdd", "BiasAdd", {"f/dense_1/MatMul", "f/dense_1/bias/read"},
     shp(dims(-1, 3))) ..
  op("f/dense_1/Relu", "Relu", {"f/dense_1/BiasAdd"}, shp(dims(-1, 3))) ..
  var("f/dense_2/kernel", dims(3, 2)) .. var("f/dense_2/bias", dims(2)) ..
  op("f/dense_2/MatMul", "MatMul", {"f/dense_1/Relu", "f/dense_2/kernel/read"},
     shp(dims(-1, 2))) ..
  op("f/dense_2/BiasAdd", "BiasAdd", {"f/dense_2/MatMul", "f/dense_2/bias/read"},
     shp(dims(-1, 2))) ..
  ph("new_x", dims(8, 4))

local function dense() return assert(ge.parse(DENSE, "graphdef-text")) end

-- The data inputs of an op as "a:0,b:0".
local function ins(g, name)
  local o = g:op(name)
  if not o then return "(no op " .. name .. ")" end
  local r = {}
  for i, t in ipairs(o.inputs) do r[i] = t.name end
  return table.concat(r, ",")
end
local function ctrl(g, name)
  local r = {}
  for i, c in ipairs(g:op(name).control_inputs) do r[i] = c.name end
  return table.concat(r, ",")
end
local function colo(g, name)
  local v = g:op(name):attr("_class")
  return v and table.concat(v, ",") or ""
end
local function valid(g)
  local good, problems = g:validate()
  if not good then tap.diag(table.concat(problems, "\n")) end
  return good
end
-- node_list collections, read back from the MetaGraphDef text
local function collections(g)
  local r = {}
  local txt = g:serialize("meta-text")
  for key, body in txt:gmatch('collection_def {%s*key: "([^"]*)"%s*value {%s*node_list {(.-)}') do
    local vals = {}
    for v in body:gmatch('value: "([^"]*)"') do vals[#vals + 1] = v end
    r[key] = table.concat(vals, ",")
  end
  return r
end

-- ---------------------------------------------------------------- scenario 1

do
  local g = dense()
  local before = #g
  local x, new_x = g:tensor("f/x:0"), g:tensor("new_x:0")
  local y = g:tensor("f/dense_2/BiasAdd:0")
  local y_, info = ge.graph_replace(y, {[x] = new_x}, {src_scope = "f", dst_scope = "new_f"})
  is("new_f/dense_2/BiasAdd:0", y_.name, "graph_replace maps y to new_f/dense_2/BiasAdd:0")
  is(before + 5, #g, "the five ops between x and y are copied")
  is("new_x:0,f/dense_1/kernel/read:0", ins(g, "new_f/dense_1/MatMul"),
     "new_f/dense_1/MatMul reads new_x and f's kernel")
  is("new_f/dense_1/MatMul:0,f/dense_1/bias/read:0", ins(g, "new_f/dense_1/BiasAdd"),
     "new_f/dense_1/BiasAdd shares f's bias")
  is("new_f/dense_1/Relu:0,f/dense_2/kernel/read:0", ins(g, "new_f/dense_2/MatMul"),
     "the second layer reads the first and f's kernel")
  is("new_f/dense_2/MatMul:0,f/dense_2/bias/read:0", ins(g, "new_f/dense_2/BiasAdd"),
     "... and f's bias")
  ok(g:op("new_f/dense_1/kernel") == nil, "the weights are not copied")
  ok(valid(g), "the graph validates")
  is("new_f/", info.dst_scope, "graph_replace returns the info too")
  ok(info:transformed(y) == y_, "... which maps the target")

  -- the same shape of value as the targets, untouched targets unchanged
  local bias = g:tensor("f/dense_1/bias/read:0")
  local shared = {y}
  local targets = {y, bias, nested = {out = y, keep = bias, list = shared}, again = shared}
  local r = ge.graph_replace(targets, {[x] = new_x}, "again", "f")
  ok(type(r) == "table" and r ~= targets, "a table of targets gives a new table")
  is("again/dense_2/BiasAdd:0", r[1].name, "list element mapped (positional options)")
  ok(r[2] == bias, "a target that does not depend on x comes back unchanged")
  ok(r.nested.out == r[1] and r.nested.keep == bias, "nested dict-like table mapped by key")
  ok(r.nested.list == r.again and r.again[1] == r[1],
     "a subtable shared in the targets is shared in the result")
  local keys = {}
  for k in pairs(r) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  is("1,2,again,nested", table.concat(keys, ","), "the same keys")

  local setmt = setmetatable({y}, {__name = "pair"})
  ok(getmetatable(ge.graph_replace(setmt, {[x] = new_x}, {dst_scope = "mt", src_scope = "f"}))
     == getmetatable(setmt), "a table's metatable is kept")
  raises("not connected", function()
    ge.graph_replace(g:tensor("f/dense_1/Relu:0"), {[g:tensor("f/dense_2/bias/read:0")] = new_x})
  end, "unconnected targets and replacements are refused")
  raises("targets must be tensors", function() ge.graph_replace({y, 3}, {[x] = new_x}) end,
         "a target that is not a tensor is refused")
  raises("unknown option 'dst_graph'", function()
    ge.graph_replace(y, {[x] = new_x}, {dst_graph = g})
  end, "graph_replace works within one graph")
  local n0 = #g
  local y2 = ge.graph_replace(y, {["f/x:0"] = "new_x"}, {dst_scope = "byname", src_scope = "f"})
  is("byname/dense_2/BiasAdd:0", y2.name, "replacements may be given by name")
  is(n0 + 5, #g, "... with the same result")
end

-- ---------------------------------------------------------------- scenario 2

do
  local g = dense()
  local ops = {}
  for _, o in ipairs(ge.sgv_scope("f", g).ops) do
    if o.name ~= "f/x" then ops[#ops + 1] = o end
  end
  local v = ge.sgv(ops)
  is("f/x:0", names(v.inputs), "the view reads f/x")
  local copy_in = g:add_op{type = "Placeholder", name = "copy_in",
                           attrs = {dtype = "float32", shape = ge.shape{-1, 4}}}
  local x = g:tensor("f/x:0")
  local v_, info = ge.copy_with_input_replacements(v, {[x] = copy_in:output(0)},
                                                   {src_scope = "f", dst_scope = "copy"})
  is("copy_in:0", names(v_.inputs), "the result view's input is the replacement")
  is(#v.outputs, #v_.outputs, "as many outputs as the source view")
  is(#v.ops, #v_.ops, "as many ops")
  local identical, why = true, nil
  for _, o in ipairs(v.ops) do
    local c = info:transformed(o)
    if not c or c.name ~= "copy/" .. o.name:sub(3) or c.type ~= o.type or
       #c.inputs ~= #o.inputs or #c:attr_names() ~= #o:attr_names() then
      identical, why = false, o.name
    else
      for k, t in ipairs(o.inputs) do
        local want = t == x and copy_in:output(0) or info:transformed(t)
        if c.inputs[k] ~= want then identical, why = false, c.name end
      end
    end
  end
  ok(identical, "structure identical op for op under copy/")
  if why then tap.diag("mismatch at " .. why) end
  is("loc:@copy/dense_1/kernel", colo(g, "copy/dense_1/kernel/read"),
     "colocation follows the copied variable")
  ok(valid(g), "the graph validates")
  raises("a replaced tensor", function()
    ge.copy_with_input_replacements(v, {[3] = copy_in:output(0)})
  end, "a replacement key that is not a tensor is refused")
  local h = ge.graph()
  raises("belongs to another graph", function()
    ge.copy_with_input_replacements(v, {[x] = copy_in:output(0)}, {dst_graph = h})
  end, "a replacement must live in the destination graph")
end

-- ---------------------------------------------------------------- scenario 3

local TRAIN = "graph_def {\n" ..
  ph("x", dims(4, 3)) .. ph("labels", dims(4, 1)) .. var("w", dims(3, 1)) ..
  const("w/initial_value", dims(3, 1)) ..
  op("w/Assign", "Assign", {"w", "w/initial_value"},
     'attr { key: "_class" value { list { s: "loc:@w" } } } ') ..
  op("pred", "MatMul", {"x", "w/read"}) ..
  op("sub", "Sub", {"pred", "labels"}) ..
  op("sq", "Square", {"sub"}) ..
  'node { name: "axes" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } ' ..
  'attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { ' .. dims(2) ..
  ' } int_val: 0 int_val: 1 } } } }\n' ..
  op("loss", "Mean", {"sq", "axes"}) ..
  const("gradients/grad_ys", dims(4, 1)) ..
  op("gradients/mul", "Mul", {"gradients/grad_ys", "sub"}) ..
  op("gradients/pred_grad", "MatMul", {"x", "gradients/mul"},
     'attr { key: "transpose_a" value { b: true } } ') ..
  const("GradientDescent/learning_rate", "") ..
  op("GradientDescent/update_w", "ApplyGradientDescent",
     {"w", "GradientDescent/learning_rate", "gradients/pred_grad"},
     'attr { key: "_class" value { list { s: "loc:@w" } } } ') ..
  'node { name: "GradientDescent" op: "NoOp" input: "^GradientDescent/update_w" }\n' ..
  'node { name: "init" op: "NoOp" input: "^w/Assign" }\n' ..
  "}\n" ..
  'collection_def { key: "train_op" value { node_list { value: "GradientDescent" } } }\n' ..
  'collection_def { key: "losses" value { node_list { value: "loss:0" } } }\n' ..
  'collection_def { key: "my_metrics" value { node_list { value: "loss:0" ' ..
  'value: "pred:0" value: "init" } } }\n'

do
  local g = assert(ge.parse(TRAIN, "meta-text"))
  ok(valid(g), "the training graph validates")
  local d = ge.graph()
  local v_, info = ge.copy(g, {dst_graph = d, dst_scope = "CopiedOps"})
  is(#g, #d, "every op copied into the new graph")
  is(#d, #v_, "the result view holds the copies")
  ok(v_.graph == d and info.dst_graph == d and info.graph == g, "graphs of the result")
  is("CopiedOps/", info.dst_scope, "destination scope")
  is("CopiedOps/x:0,CopiedOps/w/read:0", ins(d, "CopiedOps/pred"), "data inputs follow")
  is("CopiedOps/GradientDescent/update_w", ctrl(d, "CopiedOps/GradientDescent"),
     "control inputs follow")
  is("loc:@CopiedOps/w", colo(d, "CopiedOps/GradientDescent/update_w"), "colocation follows")
  local c = collections(d)
  is("CopiedOps/GradientDescent", c.train_op, "train_op is kept by name")
  is("CopiedOps/loss:0", c.losses, "losses is kept by name")
  is("CopiedOps/pred:0,CopiedOps/loss:0,CopiedOps/init", c["CopiedOps/my_metrics"],
     "a custom collection is re-scoped")
  is(nil, c.my_metrics, "... and not kept under its old name")
  ok(valid(d), "the copy validates")
  local back = assert(ge.parse(d:serialize("meta"), "meta"))
  is("CopiedOps/GradientDescent", collections(back).train_op,
     "the copy survives a MetaGraphDef round trip")

  -- the reference's positional form, through a Transformer
  local d2 = ge.graph()
  local tr = ge.Transformer()
  local v2, info2 = tr(g, d2, "CopiedOps", "", false)
  is(#g, #v2, "Transformer(sgv, dst_graph, dst_scope, src_scope, reuse) copies all")
  is("CopiedOps/GradientDescent", collections(d2).train_op, "... with the collections")
  is("CopiedOps/", info2.scope_, "info.scope_ is the destination scope")
  is("", info2.scope, "info.scope the source scope")
end

-- ---------------------------------------------------------------- handlers

local CHAIN = const("Const", dims(10)) .. const("Const_1", dims(10)) ..
  const("Const_2", dims(10)) .. const("Input", dims(10)) ..
  op("Add", "Add", {"Const", "Input"}) ..
  op("Add_1", "Add", {"Const_1", "Add"}) ..
  op("Add_2", "Add", {"Const_2", "Add_1"})

do
  -- the reference's handler test: Add(noise, x) after every copied op
  -- whose name starts with "Add"
  local g = assert(ge.parse(CHAIN, "graphdef-text"))
  local d = ge.graph()
  local tr = ge.Transformer()
  local calls, seen_info = 0, nil
  tr.transform_op_handler = function(info, op, new_inputs)
    calls = calls + 1
    seen_info = info
    local op_, outputs_ = ge.transform.copy_op_handler(info, op, new_inputs)
    if not op.name:find("^Add") then return op_, outputs_ end
    local dg = info.graph_
    local noise = dg:add_op{type = "Const", name = dg:unique_name("Noise"),
      attrs = {dtype = "float32", value = ge.tensor_value("float32", {10}, 1.0)}}
    local t_ = dg:add_op{type = "Add", name = dg:unique_name("AddNoise"),
      inputs = {noise:output(0), op_:output(0)}, attrs = {T = "float32"}}
    return op_, {t_:output(0)}
  end
  local v_, info = tr(g, d, "", "")
  is(7, calls, "the handler ran once per op")
  ok(seen_info == info, "handlers receive the info the call returns")
  is("Noise_2:0,Add_2:0", ins(d, "AddNoise_2"), "AddNoise_2 = Add(Noise_2, Add_2)")
  is("Const_2:0,AddNoise_1:0", ins(d, "Add_2"), "Add_2 reads the noisy Add_1")
  is("Noise_1:0,Add_1:0", ins(d, "AddNoise_1"), "AddNoise_1 = Add(Noise_1, Add_1)")
  is("Const_1:0,AddNoise:0", ins(d, "Add_1"), "Add_1 reads the noisy Add")
  is("Noise:0,Add:0", ins(d, "AddNoise"), "AddNoise = Add(Noise, Add)")
  is("Const:0,Input:0", ins(d, "Add"), "Add reads Const and Input")
  is("AddNoise_1:0", info:transformed(g:tensor("Add_1:0")).name,
     "the handler's tensor stands for Add_1:0")
  ok(info:original(d:tensor("AddNoise_1:0")) == g:tensor("Add_1:0"), "... and maps back")
  is("AddNoise_2:0", names(v_.outputs), "the result view's output is the noisy one")
  ok(valid(d), "the noisy copy validates")
  is(g.name, info.graph.name, "info.graph")
end

do
  -- a handler that raises: nothing is left behind, the error comes back
  local g = assert(ge.parse(CHAIN, "graphdef-text"))
  local n0 = #g
  local tr = ge.Transformer()
  local kept
  tr.transform_op_handler = function(info, op, new_inputs)
    kept = info
    if op.name == "Add_1" then error("boom in the handler") end
    return ge.transform.copy_op_handler(info, op, new_inputs)
  end
  local good, err = pcall(tr, g, g, "x")
  ok(not good, "a handler error aborts the transform")
  ok(tostring(err):find("boom in the handler", 1, true) ~= nil,
     "the error carries the handler's message")
  ok(tostring(err):find("transform_op_handler ('Add_1')", 1, true) ~= nil,
     "... names the handler and the op")
  ok(tostring(err):find("stack traceback:", 1, true) ~= nil, "... and has the traceback")
  is(n0, #g, "the graph is unchanged afterwards")
  ok(g:op("x/Add") == nil and g:op("x/Const") == nil, "no copy is left")
  raises("failed", function() return kept:transformed(g:op("Add")) end,
         "the info of a failed transform is unusable")

  -- error objects come back as they are; bad answers are errors too
  local obj = {code = 42}
  tr.transform_op_handler = function() error(obj) end
  local good2, err2 = pcall(tr, g, g, "y")
  ok(not good2 and err2 == obj, "an error object is raised again as is")
  tr.transform_op_handler = function() return 42 end
  raises("must return an op of the destination graph", function() tr(g, g, "z") end,
         "a handler returning a non-op is refused")
  tr.transform_op_handler = function(info, op) return op end
  raises("in-place transformation not allowed", function() tr(g, g, "") end,
         "a handler returning the op itself is refused")
  is(n0, #g, "still unchanged")
  raises("must be a function", function() tr.transform_op_handler = 3 end,
         "handler fields take functions")
  tr.transform_op_handler = nil
  ok(tr.transform_op_handler == ge.transform.copy_op_handler,
     "a field set to nil reads as the stock handler")
  raises("running transform", function()
    ge.transform.copy_op_handler(kept, g:op("Add"), {})
  end, "stock handlers need the info of a running transform")
end

do
  -- input, control input and collections handlers; nodedef_fn
  local g = assert(ge.parse(
    const("a", dims(2)) .. 'node { name: "gate" op: "NoOp" }\n' ..
    op("b", "Add", {"a", "a", "^gate"}) .. op("c", "Mul", {"a", "b"}, shp(dims(2))),
    "graphdef-text"))
  local v = ge.sgv(g:op("b"), g:op("c"))
  local tr = ge.Transformer()
  local asked = {}
  tr.transform_external_input_handler = function(info, t)
    asked[#asked + 1] = t.name
    return ge.transform.replace_t_with_placeholder_handler(info, t)
  end
  tr.transform_control_input_handler = function(info, op) return nil end
  local elems = {}
  tr.assign_collections_handler = function(info, elem, elem_)
    elems[#elems + 1] = elem.name .. "=>" .. elem_.name
  end
  tr.transform_op_handler = function(info, op, new_inputs)
    ok(info:in_view(op), "info:in_view inside the handler (" .. op.name .. ")")
    is(op.name, info.transformed_ops[op] == nil and op.name,
       "transformed_ops has no entry before the copy")
    return ge.transform.copy_op_handler(info, op, new_inputs, {
      nodedef_fn = function(nd, op_)
        ok(op_.name == nd.name, "nodedef_fn gets the table and the new op")
        nd.device = "/device:CPU:0"
        nd.attr._output_shapes = nil
        nd.attr.note = "copied"
      end})
  end
  local v_, info = tr(v, {dst_scope = "k"})
  is("a:0", table.concat(asked, ","), "the input handler runs once per tensor")
  is("k/geph__a_0:0,k/geph__a_0:0", ins(g, "k/b"), "both slots read the one placeholder")
  is("", ctrl(g, "k/b"), "a control input handler returning nil drops the edge")
  is("gate", ctrl(g, "b"), "the original keeps it")
  is("b=>k/b,b:0=>k/b:0,c=>k/c,c:0=>k/c:0", table.concat(elems, ","),
     "the collections handler sees every op and output")
  is("/device:CPU:0", g:op("k/c").device, "nodedef_fn sets the device")
  is(nil, g:op("k/c"):attr("_output_shapes"), "nodedef_fn removes an attr")
  is("copied", g:op("k/c"):attr("note"), "nodedef_fn adds an attr")
  ok(g:op("c"):attr("_output_shapes") ~= nil and g:op("c").device == "",
     "the original op is untouched")
  is("k/geph__a_0:0", names(v_.inputs), "the result view's input is the placeholder")
  ok(info.transformed_ops[g:op("c")] == g:op("k/c"), "info.transformed_ops")
  ok(info.transformed_ts[g:tensor("a:0")] == g:tensor("k/geph__a_0:0"),
     "info.transformed_ts maps an input to its placeholder")
  is("k/b", info:new_name("b"), "info:new_name")

  -- a nodedef_fn returning a new table, renaming the op; copy_shape
  local tr2 = ge.Transformer()
  tr2.transform_op_handler = function(info, op, new_inputs)
    return ge.transform.copy_op_handler(info, op, new_inputs, {copy_shape = true,
      nodedef_fn = function(nd)
        return {name = nd.name .. "_renamed", op = nd.op, attr = nd.attr}
      end})
  end
  tr2.transform_external_input_handler = ge.transform.keep_t_if_possible_handler
  tr2(v, {dst_scope = "r"})
  ok(g:op("r/c_renamed") ~= nil and g:op("r/b_renamed") ~= nil,
     "nodedef_fn may return a new table (renamed ops)")
  is("a:0,r/b_renamed:0", ins(g, "r/c_renamed"), "inputs follow the renamed ops")
  is("a:0,a:0", ins(g, "r/b_renamed"), "keep_t_if_possible_handler keeps the input")
  ok(valid(g), "the graph validates")
  local n0 = #g
  tr2.transform_op_handler = function(info, op, new_inputs)
    return ge.transform.copy_op_handler(info, op, new_inputs,
      {nodedef_fn = function() error("bad nodedef") end})
  end
  raises("bad nodedef", function() tr2(v, {dst_scope = "q"}) end,
         "an error in nodedef_fn aborts the transform")
  is(n0, #g, "... leaving nothing behind")
  raises("boolean", function()
    local t3 = ge.Transformer()
    t3.transform_op_handler = function(info, op) return ge.transform.copy_op_handler(info, op, true) end
    t3(v, {dst_scope = "w"})
  end, "copy_op_handler refuses a boolean for new_inputs")

  -- copy_shape keeps _output_shapes when an input changed shape; a
  -- callable table works as a handler
  local sg = assert(ge.parse(ph("p", dims(2)) .. ph("q", dims(5)) ..
    op("m", "Mul", {"p", "p"}, shp(dims(2))), "graphdef-text"))
  local function shaped(copy_shape, scope)
    local t = ge.Transformer()
    t.transform_external_input_handler = setmetatable({}, {__call = function(_, info, x)
      return info.graph_:tensor("q:0")
    end})
    t.transform_op_handler = function(info, o, ni)
      return ge.transform.copy_op_handler(info, o, ni, {copy_shape = copy_shape})
    end
    t(sg:op("m"), {dst_scope = scope})
    return sg:tensor(scope .. "/m:0").shape
  end
  same({2}, shaped(true, "cs"), "copy_shape keeps the source's _output_shapes")
  ok(not tap.deepeq({2}, shaped(false, "ns")), "without it the stale shape is not kept")
  is("q:0,q:0", ins(sg, "ns/m"), "a callable table as the input handler")

  -- the collections handler switched off
  local tg = assert(ge.parse(TRAIN, "meta-text"))
  local tr4 = ge.Transformer()
  tr4.assign_collections_handler = false
  local d4 = ge.graph()
  tr4(tg, {dst_graph = d4, dst_scope = "N"})
  is(nil, collections(d4).train_op, "assign_collections_handler = false copies no collection")
  local tr5 = ge.Transformer()
  local listed = {}
  tr5.assign_collections_handler = function(info, elem, elem_)
    for _, name in ipairs(info:collections_of(elem)) do
      listed[#listed + 1] = name .. ":" .. elem.name
    end
    ge.transform.assign_renamed_collections_handler(info, elem, elem_)
  end
  local d5 = ge.graph()
  tr5(tg, {dst_graph = d5, dst_scope = "M"})
  table.sort(listed)
  is("losses:loss:0,my_metrics:init,my_metrics:loss:0,my_metrics:pred:0,train_op:GradientDescent",
     table.concat(listed, ","), "info:collections_of inside the handler")
  is("M/GradientDescent", collections(d5).train_op,
     "a custom handler calling the stock one")
end

-- ---------------------------------------------------------------- info

do
  local g = dense()
  local v = ge.sgv_scope("f/dense_1", g)
  local v_, info = ge.copy(v, {src_scope = "f", dst_scope = "g"})
  local round, rt, byname = true, true, true
  for _, o in ipairs(v.ops) do
    local c = info:transformed(o)
    if not c or info:original(c) ~= o then round = false end
    if info:transformed(o.name) ~= c or info:original(c.name) ~= o then byname = false end
    for _, t in ipairs(o.outputs) do
      local t_ = info:transformed(t)
      if not t_ or info:original(t_) ~= t then rt = false end
      if info:transformed(t.name) ~= t_ or info:original(t_.name) ~= t then byname = false end
    end
  end
  ok(round, "transformed/original round-trip every copied op")
  ok(rt, "... and every copied tensor")
  ok(byname, "... and so do lookups by name")
  is("g/geph__x_0:0", info:transformed("f/x:0").name, "an input maps to its placeholder")
  is(nil, info:transformed("f/dense_2/MatMul"), "an op outside the view has no counterpart")
  is(nil, info:transformed("no/such"), "nor a name that is not in the graph")
  is(nil, info:transformed(g:op("f/dense_2/MatMul")), "nor an op outside the view")
  is("f/dense_2/MatMul", info:transformed(g:op("f/dense_2/MatMul"), function(x) return x end).name,
     "missing_fn gives the answer for missing entries")
  local mm, relu = g:op("f/dense_1/MatMul"), g:tensor("f/dense_1/Relu:0")
  local tree = {mm, {relu, "f/dense_1/BiasAdd"}, layer = {op = mm, out = relu, n = 5}}
  local r = info:transformed(tree)
  is("g/dense_1/MatMul", r[1].name, "nested: list element")
  is("g/dense_1/Relu:0", r[2][1].name, "nested: inner list")
  is("g/dense_1/BiasAdd", r[2][2].name, "nested: a name gives an op")
  ok(r.layer.op == r[1] and r.layer.out == r[2][1], "nested: dict-like table, same keys")
  is(nil, r.layer.n, "nested: what is neither op, tensor nor name is missing")
  local back = info:original(r)
  ok(back[1] == mm and back[2][1] == relu and back.layer.out == relu,
     "original maps the tree back")
  is(5, info:transformed(tree, function(x) return x end).layer.n,
     "missing_fn applies inside tables")
  is("g/geph__x_0:0", names(v_.inputs), "result inputs in the source view's order")
  is("g/dense_1/Relu:0", names(v_.outputs), "result outputs")
  is('transform info: 7 ops "<string>" => "<string>", scope "f/" => "g/"', tostring(info),
     "tostring is one line")
  local s = info:dump()
  ok(s:find("Transform result info:\n", 1, true) and
     s:find("  f/dense_1/MatMul => g/dense_1/MatMul\n", 1, true) and
     s:find("Relative to source scope: f/", 1, true) and
     s:find("Within graph[", 1, true), "dump lists the mapping")
  ok(not s:find("0x", 1, true), "... without addresses")
  ok(info.graph == g and info.dst_graph == g, "info.graph, info.dst_graph")
  is("f/", info.scope, "info.scope")
  is("g/", info.dst_scope, "info.dst_scope")
  is(tostring(v), tostring(info.sgv), "info.sgv is the source view")
  raises("read-only", function() info.scope = "x" end, "info fields are read-only")
  raises("is not under the source scope", function() info:new_name("h/x") end,
         "new_name outside the source scope")
end

-- ---------------------------------------------------------------- scopes

do
  local g = assert(ge.parse(const("a", dims(2)) .. op("b", "Identity", {"a"}), "graphdef-text"))
  local _, i1 = ge.copy(g:op("b"), {dst_scope = "imported"})
  is("imported/", i1.dst_scope, "first copy under imported/")
  local _, i2 = ge.copy(g:op("b"), g, "imported")
  is("imported_1/", i2.dst_scope, "the scope is uniquified once")
  local _, i3 = ge.copy(g:op("b"), {dst_scope = "imported", reuse_dst_scope = true})
  is("imported/", i3.dst_scope, "reuse_dst_scope keeps it")
  ok(g:op("imported/b_1") ~= nil, "... and uniquifies the op name instead")
  raises("unknown option", function() ge.copy(g:op("b"), {dst_scop = "x"}) end,
         "unknown options are refused")
  raises("an empty view needs a destination graph", function() ge.copy({}) end,
         "an empty view without a destination")
end

-- ---------------------------------------------------------------- variables

do
  local g = dense()
  local v_, info = ge.copy(ge.sgv_scope("f/dense_1", g),
                           {src_scope = "f", dst_scope = "s", variables = "share"})
  is("s/geph__x_0:0,f/dense_1/kernel/read:0", ins(g, "s/dense_1/MatMul"),
     "variables = \"share\": the copy reads the original variable")
  ok(g:op("s/dense_1/kernel") == nil, "... which is not copied")
  local seen = {}
  ge.copy(ge.sgv_scope("f/dense_1", g), {src_scope = "f", dst_scope = "t",
    variables = function(var) seen[#seen + 1] = var.name return "duplicate" end})
  table.sort(seen)
  is("f/dense_1/bias,f/dense_1/kernel", table.concat(seen, ","),
     "a variables function is asked once per variable")
  ok(g:op("t/dense_1/kernel") ~= nil, "\"duplicate\" copies the variable")
  raises("oops", function()
    ge.copy(ge.sgv_scope("f/dense_1", g), {dst_scope = "u", src_scope = "f",
      variables = function() error("oops") end})
  end, "an error in the variables function is raised")
  ok(g:op("u/dense_1/MatMul") == nil, "... and nothing is copied")
  ok(valid(g), "the graph validates")
end

-- ---------------------------------------------------------------- import

do
  local src = assert(ge.parse(ph("x", dims(2)) ..
    op("y", "Identity", {"x"}, 'attr { key: "_class" value { list { s: "loc:@x" } } } ') ..
    const("c", dims(2)) .. op("z", "Add", {"y", "c", "^c"}), "graphdef-text"))
  local dst = assert(ge.parse(const("in", dims(2)) .. 'node { name: "gate" op: "NoOp" }\n' ..
    const("y", dims(2)), "graphdef-text"))
  local info = ge.import_graph(dst, src, {prefix = "imp",
    input_map = {x = dst:tensor("in:0"), ["^c"] = dst:op("gate")}})
  is("in:0", ins(dst, "imp/y"), "input_map: x reads in:0")
  ok(dst:op("imp/x") ~= nil, "the mapped op itself is imported")
  is("loc:@imp/x", colo(dst, "imp/y"), "loc:@ is prefixed")
  is("imp/y:0,imp/c:0", ins(dst, "imp/z"), "inputs remapped")
  is("gate", ctrl(dst, "imp/z"), "a control input mapped with ^c")
  is("imp/z:0", info:transformed("z:0").name, "the info maps names of src to dst")
  ok(info:transformed(src:op("z")) == dst:op("imp/z"), "... and ops")
  ok(info.graph == src and info.dst_graph == dst, "info graphs")
  ge.import_graph(dst, src, {prefix = "imp", input_map = {[src:tensor("x:0")] = "in"}})
  is("in:0", ins(dst, "imp_1/y"), "the prefix is uniquified; keys may be tensors")
  ge.import_graph(dst, src)
  ok(dst:op("y_1") ~= nil and dst:op("x") ~= nil, "an import at the root uniquifies names")
  is("y_1:0,c:0", ins(dst, "z"), "... and inputs follow")
  ok(valid(dst), "the destination validates")
  local n0 = #dst
  raises("nope", function()
    ge.import_graph(dst, src, {input_map = {["nope:0"] = dst:tensor("in:0")}})
  end, "an input_map key that names nothing is refused")
  is(n0, #dst, "... and nothing is imported")
  raises("unknown option", function() ge.import_graph(dst, src, {name = "x"}) end,
         "unknown import options are refused")

  -- a MetaGraphDef's collections are merged with names mapped
  local t = assert(ge.parse(TRAIN, "meta-text"))
  local d = ge.graph()
  ge.import_graph(d, t, {prefix = "m"})
  local c = collections(d)
  is("m/GradientDescent", c.train_op, "node_list entries are prefixed")
  is("m/loss:0,m/pred:0,m/init", c.my_metrics, "collection names are kept")
end

-- ---------------------------------------------------------------- export

do
  local g = assert(ge.parse("meta_info_def { }\ngraph_def {\n" ..
    const("outside", dims(2)) .. 'node { name: "gate" op: "NoOp" }\n' ..
    op("s/a", "Identity", {"outside", "^gate"},
       'attr { key: "_class" value { list { s: "loc:@outside" } } } ') ..
    op("s/b", "Add", {"s/a", "outside"},
       'attr { key: "_class" value { list { s: "loc:@s/a" } } } ') ..
    op("t/c", "Identity", {"s/b"}) .. "}\n" ..
    'collection_def { key: "mine" value { node_list { value: "s/b:0" value: "t/c" } } }\n',
    "meta-text"))
  local e = g:export_scoped("s")
  is("graph", ge.type(e), "export_scoped returns a new graph")
  is(3, #e, "two ops and one placeholder")
  is("geph__outside_0:0", ins(e, "a"), "an outside input becomes a placeholder")
  is("a:0,geph__outside_0:0", ins(e, "b"), "one placeholder per outside tensor")
  is("", ctrl(e, "a"), "outside control inputs are dropped")
  is("loc:@a", colo(e, "b"), "loc:@ inside the scope is stripped")
  is("b:0", collections(e).mine, "collections keep the scope's entries")
  ok(valid(e), "the export validates")
  ok(ge.export_scoped(g, "s") ~= e and #ge.export_scoped(g, "s") == 3, "ge.export_scoped")
  -- export then import: a full copy with nothing shared
  ge.import_graph(g, e, {prefix = "s2", input_map = {["geph__outside_0:0"] = g:tensor("outside:0")}})
  is("outside:0", ins(g, "s2/a"), "imported back, rebound to the original input")
  ok(valid(g), "the graph validates")
end

-- ---------------------------------------------------------------- module

ok(ge.copy == ge.transform.copy and ge.graph_replace == ge.transform.graph_replace and
   ge.Transformer == ge.transform.Transformer and ge.import_graph == ge.transform.import_graph,
   "ge.transform's functions are also on ge")
ok(ge.transform.is_predefined_collection("train_op") and
   not ge.transform.is_predefined_collection("my_metrics"), "is_predefined_collection")
is("Transformer", tostring(ge.Transformer()), "tostring of a Transformer")
ok(type(ge.TransformerInfo.transformed) == "function", "ge.TransformerInfo holds the methods")

tap.done()

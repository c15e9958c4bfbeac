-- lua-provenance.lua: what the recipes and the library write in
-- experimental_debug_info (op.origins, g:provenance(), op:add_origins), on
-- small graphs built here.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises
local run = require("testlib").run_recipe

local F32 = "float32"

local function const(g, name, dims, vals)
  return g:add_op{type = "Const", name = name,
                  attrs = {dtype = F32, value = ge.tensor_value(F32, dims, vals)}}
end

-- x -> conv(x, w) -> bias(b) -> relu -> out
local function convnet()
  local g = ge.graph()
  g:add_op{type = "Placeholder", name = "x",
           attrs = {dtype = F32, shape = ge.shape{1, 2, 2, 3}}}
  const(g, "w", {1, 1, 3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1})
  const(g, "b", {3}, {1, 2, 3})
  g:add_op{type = "Conv2D", name = "net/conv", inputs = {"x", "w"},
           attrs = {T = F32, strides = {1, 1, 1, 1}, padding = "SAME"}}
  g:add_op{type = "BiasAdd", name = "net/bias", inputs = {"net/conv", "b"},
           attrs = {T = F32}}
  g:add_op{type = "Relu", name = "net/relu", inputs = {"net/bias"},
           attrs = {T = F32}}
  g:add_op{type = "Identity", name = "out", inputs = {"net/relu"},
           attrs = {T = F32}}
  return g
end

local function nodes(g, name)
  local op = g:op(name)
  return op and table.concat(op.origins.nodes, ",") or "(no op)"
end

local function reloaded(g)
  return assert(ge.parse(g:serialize(), "graphdef"))
end

-- ---------------------------------------------------------------- the API
do
  local g = convnet()
  same({nodes = {}, funcs = {}}, g:op("out").origins,
       "an op without provenance: empty lists")
  same({}, g:provenance(), "g:provenance(): nothing to say")
  local r = g:op("out"):add_origins{nodes = {"z", g:op("net/relu"), "a"},
                                    funcs = {"f"}, rule = "test"}
  is(g:op("out"), r, "add_origins returns the op")
  same({nodes = {"a", "net/relu", "z"}, funcs = {"f"}}, g:op("out").origins,
       "add_origins: a sorted union; an op brings its name")
  g:op("net/relu"):add_origins{nodes = {g:op("out")}}
  same({nodes = {"a", "net/relu", "z"}, funcs = {"f"}},
       g:op("net/relu").origins, "an op brings its origins and functions")
  local p = g:provenance()
  same({"net/relu", "out"}, (function()
    local t = {}
    for k in pairs(p) do t[#t + 1] = k end
    table.sort(t)
    return t
  end)(), "g:provenance(): the ops with provenance")
  same(g:op("out").origins, p.out, "g:provenance(): name -> origins")
  same(g:op("out").origins, reloaded(g):op("out").origins,
       "provenance is saved and loaded")
  raises("must be a name", function() g:op("out"):add_origins{nodes = {1}} end,
         "add_origins: a number is refused")
  raises("node", function() g:op("out"):add_origins{node = {"x"}} end,
         "add_origins: an unknown field is refused")
end

-- ---------------------------------------------------------------- fold_constants
do
  local g = convnet()
  const(g, "k", {3}, {1, 1, 1})
  g:add_op{type = "Mul", name = "kb", inputs = {"b", "k"}, attrs = {T = F32}}
  g:op("net/bias"):set_input(1, "kb:0")
  run("fold_constants", g)
  is("Const", g:op("kb").type, "fold_constants: the Mul is a Const")
  is("b,k,kb", nodes(g, "kb"),
     "fold_constants: the Const lists the ops folded into it")
  is("", nodes(g, "net/bias"), "fold_constants: its reader lists nothing")
end

-- ---------------------------------------------------------------- fold_batch_norms
do
  local g = convnet()
  for _, n in ipairs{"scale", "offset", "mean", "var"} do
    const(g, "bn/" .. n, {3}, {1, 0.5, 2})
  end
  g:add_op{type = "FusedBatchNormV3", name = "bn",
           inputs = {"net/conv", "bn/scale", "bn/offset", "bn/mean", "bn/var"},
           attrs = {T = F32, U = F32, epsilon = 0.001, is_training = false}}
  g:op("net/bias"):set_input(0, "bn:0")
  local r = run("fold_batch_norms", g)
  is(1, r.folded, "fold_batch_norms: one batch norm folded")
  is("bn,net/conv", nodes(g, "net/conv"),
     "fold_batch_norms: the conv lists the batch norm it absorbed")
  is("BiasAdd", g:op("bn").type, "fold_batch_norms: the batch norm is a BiasAdd")
  is("bn", nodes(g, "bn"), "fold_batch_norms: the BiasAdd stands for it")
  is("bn,bn/mean,bn/offset,bn/scale,bn/var", nodes(g, "bn_bn_offset"),
     "fold_batch_norms: the offset Const lists the batch norm's parameters")
  is("bn,w", nodes(g, "w"), "fold_batch_norms: the scaled weights too")

  -- the form fold_constants leaves: Mul(conv, scale); the conv takes the
  -- Mul's name
  g = convnet()
  const(g, "s", {3}, {2, 2, 2})
  g:add_op{type = "Mul", name = "bn/mul", inputs = {"net/conv", "s"},
           attrs = {T = F32}}
  g:op("net/bias"):set_input(0, "bn/mul:0")
  run("fold_batch_norms", g)
  is("Conv2D", g:op("bn/mul").type, "fold_batch_norms Mul: the conv took its name")
  is("bn/mul,net/conv,s", nodes(g, "bn/mul"),
     "fold_batch_norms Mul: the conv lists the Mul, its scale and itself")
end

-- ---------------------------------------------------------------- fuse_conv_bias_relu
do
  local g = convnet()
  run("fuse_conv_bias_relu", g)
  is("_FusedConv2D", g:op("net/relu").type, "fuse_conv_bias_relu: fused")
  is("net/bias,net/conv,net/relu", nodes(g, "net/relu"),
     "fuse_conv_bias_relu: the fused op lists the matched ops")
end

-- ---------------------------------------------------------------- merge_duplicate_nodes
do
  local g = convnet()
  g:add_op{type = "Relu", name = "net/relu2", inputs = {"net/bias"},
           attrs = {T = F32}}
  g:add_op{type = "Relu", name = "net/relu3", inputs = {"net/bias"},
           attrs = {T = F32}}
  g:add_op{type = "AddN", name = "sum", inputs = {"net/relu2", "net/relu3"},
           attrs = {T = F32, N = 2}}
  run("merge_duplicate_nodes", g, {"outputs=out,sum"})
  is(nil, g:op("net/relu2"), "merge_duplicate_nodes: merged")
  is("net/relu,net/relu2,net/relu3", nodes(g, "net/relu"),
     "merge_duplicate_nodes: the survivor lists all merged")
end

-- ---------------------------------------------------------------- copies
do
  local g = convnet()
  g:op("net/relu"):add_origins{nodes = {"older"}, funcs = {"fn"}}
  ge.copy(ge.sgv_scope("net", g), {dst_scope = "copy"})
  is("net/conv", nodes(g, "copy/net/conv"), "ge.copy: a copy names its source")
  same({nodes = {"older"}, funcs = {"fn"}}, g:op("copy/net/relu").origins,
       "ge.copy: a copy of an op with origins takes them")
  is("", nodes(g, "net/conv"), "ge.copy: the source is left alone")

  g = convnet()
  local g2 = ge.graph()
  ge.copy(ge.sgv_scope("net", g), g2, "", "")
  is("net/bias", nodes(g2, "net/bias"), "ge.copy to another graph")

  g = convnet()
  run("copy_subgraph", g, {"scope=net", "dst_scope=head2"})
  is("net/conv", nodes(g, "head2/conv"), "copy_subgraph: copies name their sources")

  g = convnet()
  run("clone_tower", g, {"towers=2", "scope=net", "split=none", "combine=none"})
  local found = 0
  for name, o in pairs(g:provenance()) do
    if name:match("conv") and o.nodes[1] == "net/conv" then found = found + 1 end
  end
  is(2, found, "clone_tower: each tower's conv names the source")
end

-- ---------------------------------------------------------------- rewrite
do
  local g = convnet()
  local m = ge.match
  local pat = m.op("Relu", m.op("BiasAdd", m.any "x", m.any "b"):as "bias")
    :as "act"
  ge.rewrite(g, {{name = "relu_of_bias", pattern = pat, action = function(hit)
    local n = g:add_op{type = "Relu6", name = "new_relu",
                       inputs = {hit.bias:output(0)}, attrs = {T = F32}}
    return {[hit.act:output(0)] = n:output(0)}
  end}})
  is("net/bias,net/relu", nodes(g, "new_relu"),
     "ge.rewrite: a replacement op lists the matched ops")
end

tap.done()

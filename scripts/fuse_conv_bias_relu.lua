-- fuse_conv_bias_relu: Conv2D -> BiasAdd -> Relu into one _FusedConv2D, as
-- TensorFlow's grappler remapper writes it, using ge.match and ge.rewrite.
local m = ge.match

-- The Conv2D attrs the fused op carries over, with the OpDef's defaults
-- for a conv that leaves them out.
local CONV_ATTRS = {"T", "strides", "padding", "explicit_paddings",
                    "dilations", "data_format", "use_cudnn_on_gpu"}
local ACTIVATIONS = {Relu = true, Relu6 = true, Elu = true, LeakyRelu = true}

local function pattern(p)
  local acts = {}
  for _, a in ipairs(p.activations) do
    if not ACTIVATIONS[a] then
      error(string.format("activation '%s' cannot be fused (Relu, Relu6, "
                          .. "Elu, LeakyRelu)", a))
    end
    acts[#acts + 1] = a
  end
  if #acts == 0 then error("no activation given") end
  if #p.data_formats == 0 then error("no data format given") end
  -- one format is compared in C; several need a predicate
  local format
  if #p.data_formats == 1 then
    format = {data_format = p.data_formats[1]}
  else
    local formats = {}
    for _, f in ipairs(p.data_formats) do formats[f] = true end
    format = {data_format = function(v) return formats[v] end}
  end
  -- conv and bias feed nothing else, and no op involved has control
  -- inputs (the fused op could not keep them apart); control outputs are
  -- checked by the action
  local conv = m.op("Conv2D", m.any "x", m.any "w"):single_use()
    :control_inputs():where(format):as "conv"
  local bias = m.op("BiasAdd", conv, m.any "b"):single_use()
    :control_inputs():as "bias"
  return m.op(table.concat(acts, "|"), bias):control_inputs():as "act"
end

-- Encoded AttrValue bytes of a Lua value, through a scratch op: the
-- attrs every fused op gets the same are encoded once, not per site.
local scratch = ge.graph():add_op{type = "NoOp", name = "scratch"}
local function encode(value, kind)
  scratch:set_attr("v", value, kind)
  return scratch:attr_raw("v")
end

local function memo(f)
  local cache = {}
  return function(k)
    local v = cache[k]
    if v == nil then
      v = f(k)
      cache[k] = v
    end
    return v
  end
end

-- Builds the fused op for a match; its name is fixed after the rewrite
-- (the activation's name is still taken while the action runs).
local function fuser(p, renames)
  local defaults -- encoded OpDef defaults of the conv attrs
  local eps, nargs, nhost = encode(0.0, "float"), encode(1, "int"),
    encode(0, "int")
  local fused_ops = memo(function(act)
    return encode({"BiasAdd", act}, "list(string)")
  end)
  -- TArgs from the bytes of T
  local targs = memo(function(traw)
    scratch:set_attr_raw("T", traw)
    return encode({(scratch:attr("T"))}, "list(type)")
  end)
  local raw = {}
  return function(hit, g)
    local conv, bias, act = hit.conv, hit.bias, hit.act
    if #conv:control_outputs() > 0 or #bias:control_outputs() > 0 or
       #act:control_outputs() > 0 then
      return false
    end
    if not defaults then
      defaults = {}
      for _, a in ipairs(g:opdef("Conv2D").attrs) do
        if a.default ~= nil then defaults[a.name] = encode(a.default, a.type) end
      end
    end
    for i, name in ipairs(CONV_ATTRS) do
      raw[i] = conv:attr_raw(name) or defaults[name] or false
    end
    local t = raw[1]
    if not t or bias:attr_raw("T") ~= t or act:attr_raw("T") ~= t then
      return false
    end
    if (bias:attr_raw("data_format") or defaults.data_format) ~= raw[6] and
       (bias:attr("data_format") or "NHWC") ~= (conv:attr("data_format") or "NHWC") then
      return false
    end
    -- the attrs in this order, as bytes, in the add_op call
    local attrs, n = {}, 0
    for i, name in ipairs(CONV_ATTRS) do
      if raw[i] then
        attrs[n + 1], attrs[n + 2] = name, raw[i]
        n = n + 2
      end
    end
    if p.targs then
      attrs[n + 1], attrs[n + 2] = "TArgs", targs(t)
      attrs[n + 3], attrs[n + 4] = "num_host_args", nhost
      n = n + 4
    end
    local at = act.type
    attrs[n + 1], attrs[n + 2] = "fused_ops", fused_ops(at)
    attrs[n + 3], attrs[n + 4] = "num_args", nargs
    attrs[n + 5], attrs[n + 6] = "epsilon", eps
    local f = g:add_op{type = "_FusedConv2D",
                       name = g:unique_name(act.name .. "/fused"),
                       inputs = {hit.x, hit.w, hit.b}, device = conv.device,
                       raw_attrs = attrs}
    if at == "LeakyRelu" then
      f:set_attr("leakyrelu_alpha", act:attr("alpha") or 0.2, "float")
    end
    renames[#renames + 1] = {f, act.name}
    return {[act:output(0)] = f:output(0)}
  end
end

return {
  name = "fuse_conv_bias_relu",
  description = [[
Fuse Conv2D -> BiasAdd -> Relu into one _FusedConv2D op.

Writes what TensorFlow's grappler remapper writes for this chain: a
_FusedConv2D with inputs (x, filter, bias), the Conv2D's attrs (T,
strides, padding, explicit_paddings, dilations, data_format,
use_cudnn_on_gpu; OpDef defaults where the conv leaves them out),
fused_ops = [BiasAdd, <activation>], num_args = 1, epsilon = 0 (and
leakyrelu_alpha from a LeakyRelu's alpha), placed on the conv's device
and named like the activation, which it replaces.  TArgs = [T] and
num_host_args = 0 are written too (targs=false leaves them out, for
TensorFlow releases whose _FusedConv2D has no such attrs).

A site is fused only when the Conv2D feeds the BiasAdd alone and the
BiasAdd the activation alone, none of the three has control edges, they
agree on T and data format, and the data format is one of data_formats.
_FusedConv2D is an internal TensorFlow op: its CPU kernel takes NHWC
only, the GPU one NHWC and NCHW.]],
  params = {
    {name = "activations", type = "list", default = "Relu",
     help = "activations to fuse: Relu, Relu6, Elu, LeakyRelu"},
    {name = "data_formats", type = "list", default = "NHWC",
     help = "data formats of the convs to fuse (NHWC, NCHW)"},
    {name = "targs", type = "bool", default = true,
     help = "write the TArgs and num_host_args attrs"},
  },
  pattern = pattern,
  run = function(g, p)
    local renames = {}
    local counts = ge.rewrite(g, {
      {name = "fuse_conv_bias_relu", pattern = pattern(p),
       action = fuser(p, renames)},
    })
    for _, r in ipairs(renames) do r[1].name = r[2] end
    return {fused = counts[1]}
  end,
}

-- fuse_conv_bias_relu: Conv2D -> BiasAdd -> Relu into one _FusedConv2D, as
-- TensorFlow's grappler remapper writes it, using ge.match and a ge.rewrite
-- template.
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
  -- checked by the template
  local conv = m.op("Conv2D", m.any "x", m.any "w"):single_use()
    :control_inputs():where(format):as "conv"
  local bias = m.op("BiasAdd", conv, m.any "b"):single_use()
    :control_inputs():as "bias"
  return m.op(table.concat(acts, "|"), bias):control_inputs():as "act"
end

-- What replaces a site, as data: the rewrite driver builds each fused op
-- in C.  A site is left alone unless the three ops agree on T and data
-- format and none has control outputs.
local function template(p)
  local attrs = {}
  for _, name in ipairs(CONV_ATTRS) do
    attrs[#attrs + 1] = {name, from = "conv"} -- or the OpDef's default
  end
  if p.targs then
    attrs[#attrs + 1] = {"TArgs", {{attr_of = "conv.T"}}, "list(type)"}
    attrs[#attrs + 1] = {"num_host_args", 0, "int"}
  end
  attrs[#attrs + 1] = {"fused_ops", {"BiasAdd", {type_of = "act"}},
                       "list(string)"}
  attrs[#attrs + 1] = {"num_args", 1, "int"}
  attrs[#attrs + 1] = {"epsilon", 0.0, "float"}
  for _, a in ipairs(p.activations) do
    if a == "LeakyRelu" then
      -- written for a LeakyRelu only: no other activation has alpha
      attrs[#attrs + 1] = {"leakyrelu_alpha", from = "act.alpha"}
    end
  end
  return {
    name = "fuse_conv_bias_relu",
    same = {{"conv.T", "bias.T", "act.T"},
            {"conv.data_format", "bias.data_format"}},
    no_control_outputs = {"conv", "bias", "act"},
    ops = {{as = "fused", type = "_FusedConv2D", name_from = "act",
            device_from = "conv", inputs = {"x", "w", "b"}, attrs = attrs}},
    replace = {act = "fused"},
  }
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
     matches = "type",
     help = "activations to fuse: Relu, Relu6, Elu, LeakyRelu"},
    {name = "data_formats", type = "list", default = "NHWC",
     help = "data formats of the convs to fuse (NHWC, NCHW)"},
    {name = "targs", type = "bool", default = true,
     help = "write the TArgs and num_host_args attrs"},
  },
  pattern = pattern,
  numerics = "rounding", -- outputs equal up to float rounding (operations regrouped) (run --verify)
  run = function(g, p)
    local counts = ge.rewrite(g, {name = "fuse_conv_bias_relu",
                                  pattern = pattern(p),
                                  template = template(p)})
    return {fused = counts[1]}
  end,
}

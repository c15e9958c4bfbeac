-- quantize_weights: 8-bit weights with a Dequantize (transform_graph's
-- quantize_weights).
return {
  name = "quantize_weights",
  description = [[
Store large float32 Consts as 8 bits, with a Dequantize.

Every float32 Const of at least minimum_size elements becomes a quint8
Const NAME_quantized_const, its range NAME_quantized_min and
NAME_quantized_max, and a Dequantize (mode MIN_FIRST) named NAME, as
transform_graph writes them: the weights take a quarter of the space,
and what read NAME reads the dequantized values.

With per_channel (the default), a Const every reader takes as the
kernel of a conv or matrix product (Conv2D, DepthwiseConv2dNative,
MatMul and their fused forms) gets one range per output channel, as
TensorFlow Lite quantizes weights: its min and max are vectors and the
Dequantize is MIN_COMBINED along that channel's axis (TensorFlow has
no per-axis MIN_FIRST).  One channel of large weights then costs the
other channels no precision.  per_channel=false writes exactly what
transform_graph writes (one range per Const).]],
  params = {
    {name = "minimum_size", type = "int", default = 1024,
     help = "smaller Consts are left as they are"},
    {name = "per_channel", type = "bool", default = true,
     help = "one range per output channel of a conv or matmul kernel"},
  },
  numerics = "lossy", -- lossy, within max_error of the outputs' scale (run --verify)
  max_error = 0.05,
  run = function(g, p)
    local r = ge.quantize_weights(g, {minimum_size = p.minimum_size,
                                        per_channel = p.per_channel})
    return {consts_quantized = r.folded}
  end,
}

-- round_weights: keep num_steps distinct values per float Const
-- (transform_graph's round_weights).
return {
  name = "round_weights",
  description = [[
Round the values of every float32 Const to num_steps levels.

Each Const keeps its dtype and size; its values become the centres of
num_steps equal buckets between its min and max, so that the file
compresses far better (gzip, zip) at a small cost in accuracy.  Consts
of fewer than minimum_size elements (16, as in TensorFlow's
round_weights) are left alone: small constants tend to feed
accuracy-sensitive arithmetic (normalisation, epsilons) and rounding
them saves nothing.

With per_channel (the default), a Const every reader takes as the
kernel of a conv or matrix product (Conv2D, DepthwiseConv2dNative,
MatMul and their fused forms) keeps num_steps values per output
channel, between that channel's min and max: one channel of large
weights then costs the other channels no precision.  per_channel=false
rounds as transform_graph does (one range per Const).]],
  params = {
    {name = "num_steps", type = "int", default = 256,
     help = "distinct values per Const"},
    {name = "minimum_size", type = "int", default = 16,
     help = "leave Consts of fewer elements alone"},
    {name = "per_channel", type = "bool", default = true,
     help = "num_steps values per output channel of a conv or matmul kernel"},
  },
  numerics = "lossy", -- lossy, within max_error of the outputs' scale (run --verify)
  max_error = 0.05,
  run = function(g, p)
    local r = ge.round_weights(g, {num_steps = p.num_steps,
                                     minimum_size = p.minimum_size,
                                     per_channel = p.per_channel})
    return {consts_rounded = r.folded}
  end,
}

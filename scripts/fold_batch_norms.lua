-- fold_batch_norms: fold batch normalization into the weights before it
-- (transform_graph's fold_batch_norms).
local recipe
recipe = {
  name = "fold_batch_norms",
  description = [[
Fold batch normalization into the conv or MatMul weights before it.

FusedBatchNorm, FusedBatchNormV2/V3 (inference) and
BatchNormWithGlobalNormalization after a Conv2D, DepthwiseConv2dNative
or MatMul, with Const parameters, become a BiasAdd of the same name over
the conv with scaled weights; a Mul of such a conv by a Const scale (per
channel or scalar), the form fold_constants leaves, is folded into the
weights and the conv takes the Mul's name.  Run fold_constants first
when the parameters are computed.  fold_batch_norms and
fold_old_batch_norms do the same: both forms are folded by either.]],
  params = {},
  numerics = "rounding", -- outputs equal up to float rounding (operations regrouped) (run --verify)
  run = function(g)
    local r = ge.fold_batch_norms(g)
    -- the counts go in the program's report, the notes here
    for _, n in ipairs(r.notes) do
      io.stderr:write(recipe.name, ": ", n, "\n")
    end
    return {folded = r.folded, left_as_they_were = r.skipped}
  end,
}
return recipe

-- round_weights: keep num_steps distinct values per float Const
-- (transform_graph's round_weights).
return {
  name = "round_weights",
  description = [[
Round the values of every float32 Const to num_steps levels.

Each Const keeps its dtype and size; its values become the centres of
num_steps equal buckets between its min and max, so that the file
compresses far better (gzip, zip) at a small cost in accuracy.]],
  params = {
    {name = "num_steps", type = "int", default = 256,
     help = "distinct values per Const"},
  },
  run = function(g, p)
    local r = ge.round_weights(g, {num_steps = p.num_steps})
    return {consts_rounded = r.folded}
  end,
}

-- add_output_shapes: record inferred shapes as TensorFlow's add_shapes=True
-- does.
return {
  name = "add_output_shapes",
  description = [[
Write `_output_shapes` on every op from the inferred shapes.

What TensorFlow writes when a graph is exported with add_shapes=True:
one shape per output, -1 for an unknown dim, unknown_rank for an
unknown rank.  Existing `_output_shapes` are replaced.  A shape that
cannot hold fails the recipe, naming the op.]],
  params = {},
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g)
    for _, op in ipairs(g:ops()) do op:remove_attr("_output_shapes") end
    local _, why = ge.infer_shapes(g)
    if why.message then error(why.message, 0) end
    ge.add_output_shapes(g)
  end,
}

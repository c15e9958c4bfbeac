-- remove_attribute: drop an attr from ops (transform_graph's
-- remove_attribute), e.g. _class or _output_shapes.
return {
  name = "remove_attribute",
  description = [[
Remove an attr from every op, or from ops of one type.

Removes attr `attribute_name` from every op, or only from ops of type
`op_name`.]],
  params = {
    {name = "attribute_name", type = "string", required = true,
     help = "the attr to remove, e.g. _output_shapes"},
    {name = "op_name", type = "string", default = "*", matches = "type",
     help = "only ops of this type (* for all)"},
  },
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g, p)
    for _, op in ipairs(g:ops()) do
      if p.op_name == "*" or op.type == p.op_name then
        op:remove_attr(p.attribute_name)
      end
    end
  end,
}

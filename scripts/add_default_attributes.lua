-- add_default_attributes: write out the attrs an OpDef gives a default
-- (transform_graph's add_default_attributes).
return {
  name = "add_default_attributes",
  description = [[
Write out the attrs that OpDefs give a default.

Adds to every op the attrs its OpDef declares with a default value and
that the op lacks, so that older consumers of the graph, which do not
know the defaults of newer attrs, read the intended values.  Ops whose
type is unknown are left alone.]],
  params = {},
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g)
    g:fill_default_attrs()
  end,
}

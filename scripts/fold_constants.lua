-- fold_constants: replace constant subgraphs by Consts (transform_graph's
-- fold_constants).
return {
  name = "fold_constants",
  description = [[
Replace every constant subgraph by Consts, computed without TensorFlow.

A subgraph whose inputs are all Const (Shape, Size and Rank count as
constant where the input's shape is fully known) and that holds no
stateful or control-flow op is evaluated on the CPU with the kernels
`gerewrite eval` runs, so that the model computes the same bits after
as before; each op it feeds from reads a Const of the same name as the
op it replaces, and the ops only the folded values needed go.  An op
the evaluator cannot run (no kernel for its type or dtype, a division
by zero) stays as it was with its inputs, and the report on standard
error says which and why: a wrong Const is never written.  `outputs`
are kept even when nothing reads them.]],
  params = {
    {name = "inputs", type = "list", default = {},
     help = "the graph's inputs (accepted for transform_graph's command "
            .. "lines; Placeholders are never folded)"},
    {name = "outputs", type = "list", default = {},
     help = "ops to keep"},
  },
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g, p)
    local keep = {}
    for i, s in ipairs(p.outputs) do keep[i] = ge.op_name(s) end
    local r = ge.fold_constants(g, {outputs = keep})
    -- the counts go in the program's report, the notes here
    for _, n in ipairs(r.notes) do
      io.stderr:write("fold_constants: ", n, "\n")
    end
    return {folded = r.folded, left_as_they_were = r.skipped}
  end,
}

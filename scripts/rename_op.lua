-- rename_op: change the type of every op of one type (transform_graph's
-- rename_op), e.g. to swap a custom kernel for a stock one.
return {
  name = "rename_op",
  description = [[
Change the type of every op of one type.

Changes the type of every op whose type is old_op_name to new_op_name.
Names, inputs, attrs and devices stay as they are: the new type must
accept the same inputs and attrs.]],
  params = {
    {name = "old_op_name", type = "string", required = true,
     matches = "type",
     help = "the op type to replace, e.g. Relu6"},
    {name = "new_op_name", type = "string", required = true,
     help = "the op type to put instead, e.g. Relu"},
  },
  numerics = "changes", -- changes what the model computes, by design (run --verify)
  run = function(g, p)
    if p.new_op_name == "" then error("new_op_name cannot be empty") end
    for _, op in ipairs(g:ops()) do
      if op.type == p.old_op_name then
        op.type = p.new_op_name
      end
    end
  end,
}

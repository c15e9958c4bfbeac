-- remove_nodes: bypass and delete ops of some types (transform_graph's
-- remove_nodes), typically Identity and CheckNumerics in inference graphs.
return {
  name = "remove_nodes",
  description = [[
Bypass and delete ops of some types (e.g. Identity).

Removes the ops of the given types that have exactly one data input and
no control input, connecting their consumers to that input (control
edges from them now start at the input's op).  Ops listed in inputs or
outputs stay, and so do ops whose other outputs are used.]],
  params = {
    {name = "op", type = "list", required = true,
     help = "op types to remove, e.g. Identity,CheckNumerics"},
    {name = "inputs", type = "list", default = {},
     help = "ops to keep whatever their type"},
    {name = "outputs", type = "list", default = {},
     help = "ops to keep whatever their type"},
  },
  run = function(g, p)
    local types, protected = {}, {}
    for _, t in ipairs(p.op) do types[t] = true end
    for _, list in ipairs{p.inputs, p.outputs} do
      for _, s in ipairs(list) do
        protected[(s:gsub("^%^", ""):gsub(":%d+$", ""))] = true
      end
    end
    for _, op in ipairs(g:ops()) do
      local ins = types[op.type] and not protected[op.name] and op.inputs
      local ok = ins and #ins == 1 and type(ins[1]) ~= "string" and
                 #op.control_inputs == 0
      if ok then
        for _, t in ipairs(op.outputs) do
          if t.index > 0 and #t:consumers() > 0 then ok = false end
        end
      end
      if ok then
        local src = ins[1]
        if #op.outputs > 0 then
          op:output(0):replace_all_uses_with(src)
        end
        for _, c in ipairs(op:control_outputs()) do
          ge.remove_control_inputs(c, {op})
          local has = c == src.op
          for _, x in ipairs(c.control_inputs) do
            if x == src.op then has = true end
          end
          if not has then ge.add_control_inputs(c, {src.op}) end
        end
        g:remove_op(op)
      end
    end
  end,
}

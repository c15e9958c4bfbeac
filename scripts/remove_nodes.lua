-- remove_nodes: bypass and delete ops of some types (transform_graph's
-- remove_nodes), typically Identity and CheckNumerics in inference graphs.
return {
  name = "remove_nodes",
  description = [[
Bypass and delete ops of some types (e.g. Identity).

Removes the ops of the given types that have exactly one data input and
no control input, connecting their consumers to that input (control
edges from them now start at the input's op).  Ops listed in inputs or
outputs stay, and so do ops whose other outputs are used and ops other
ops are colocated with (loc:@name in their _class attr).

Inside a TF1 while loop an op that other ops wait on (control edges)
stays: it is the loop's pivot (the Identity of a Switch's output that
the body's constants wait on), and its control edges cannot move to the
Switch, which also fires on the iteration that leaves the loop.  Like
TensorFlow's remove_nodes, which keeps the nodes whose control outputs
it cannot re-home.  The ops kept so are counted on stderr.]],
  params = {
    {name = "op", type = "list", required = true, matches = "type",
     help = "op types to remove, e.g. Identity,CheckNumerics"},
    {name = "inputs", type = "list", default = {},
     help = "ops to keep whatever their type"},
    {name = "outputs", type = "list", default = {},
     help = "ops to keep whatever their type"},
  },
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g, p)
    local types, protected, pivots, removed = {}, {}, 0, 0
    -- ops others are colocated with: removing one leaves a dangling
    -- loc:@ reference
    for _, op in ipairs(g:colocation_targets()) do protected[op.name] = true end
    for _, t in ipairs(p.op) do types[t] = true end
    for _, list in ipairs{p.inputs, p.outputs} do
      for _, s in ipairs(list) do
        protected[ge.op_name(s)] = true
      end
    end
    -- frames before any edit (each edit would have them recomputed)
    local in_loop = {}
    for _, op in ipairs(g:ops()) do
      if types[op.type] then in_loop[op] = op.frame ~= "" end
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
      if ok and #op:control_outputs() > 0 and
         (in_loop[op] or ins[1].op.type:match("Switch$")) then
        ok = false
        pivots = pivots + 1
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
        removed = removed + 1
      end
    end
    if pivots > 0 then
      io.stderr:write(string.format("remove_nodes: kept %d op%s that "
        .. "while-loop ops wait on (loop pivots)\n", pivots,
        pivots == 1 and "" or "s"))
    end
    return {removed = removed, kept_pivots = pivots}
  end,
}

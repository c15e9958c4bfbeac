-- remove_control_dependencies: drop every control edge
-- (transform_graph's remove_control_dependencies).
return {
  name = "remove_control_dependencies",
  description = [[
Remove every control edge.

Removes every control input of every op.  Useful for inference graphs,
where control edges mostly order training-time side effects; note that
ops reachable only through control edges then run no more.

Inside TF1 while loops control edges stay: they are what puts the
body's constants in the loop's frame (they wait on the loop's pivot),
and without them TensorFlow refuses the graph.  The count of kept edges
is said on stderr.]],
  params = {},
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g)
    -- frames before any edit (each edit would have them recomputed)
    local in_loop, kept = {}, 0
    for _, op in ipairs(g:ops()) do
      if #op.control_inputs > 0 and op.frame ~= "" then
        in_loop[op] = true
        kept = kept + #op.control_inputs
      end
    end
    for _, op in ipairs(g:ops()) do
      local c = not in_loop[op] and op.control_inputs or {}
      if #c > 0 then
        local live = {}
        for _, x in ipairs(c) do
          -- a dangling control input is its name (a string)
          if type(x) ~= "string" then live[#live + 1] = x end
        end
        if #live > 0 then ge.remove_control_inputs(op, live) end
      end
    end
    if kept > 0 then
      io.stderr:write(string.format("remove_control_dependencies: kept %d "
        .. "control edge%s inside while loops\n", kept,
        kept == 1 and "" or "s"))
    end
    return {kept_in_loops = kept}
  end,
}

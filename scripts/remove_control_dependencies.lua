-- remove_control_dependencies: drop every control edge
-- (transform_graph's remove_control_dependencies).
return {
  name = "remove_control_dependencies",
  description = [[
Remove every control edge.

Removes every control input of every op.  Useful for inference graphs,
where control edges mostly order training-time side effects; note that
ops reachable only through control edges then run no more.]],
  params = {},
  run = function(g)
    for _, op in ipairs(g:ops()) do
      local c = op.control_inputs
      if #c > 0 then
        local live = {}
        for _, x in ipairs(c) do
          -- a dangling control input is its name (a string)
          if type(x) ~= "string" then live[#live + 1] = x end
        end
        if #live > 0 then ge.remove_control_inputs(op, live) end
      end
    end
  end,
}

-- sort_by_execution_order: node order that respects every edge
-- (transform_graph's sort_by_execution_order).

-- A binary min-heap of node positions.
local function heap_push(h, v)
  h[#h + 1] = v
  local i = #h
  while i > 1 do
    local parent = i // 2
    if h[parent] <= h[i] then break end
    h[parent], h[i] = h[i], h[parent]
    i = parent
  end
end

local function heap_pop(h)
  local top, last = h[1], table.remove(h)
  if #h > 0 then
    h[1] = last
    local i = 1
    while true do
      local l, r, m = 2 * i, 2 * i + 1, i
      if l <= #h and h[l] < h[m] then m = l end
      if r <= #h and h[r] < h[m] then m = r end
      if m == i then break end
      h[m], h[i] = h[i], h[m]
      i = m
    end
  end
  return top
end

return {
  name = "sort_by_execution_order",
  -- whole-graph: names ops of the top-level graph; bodies are left alone
  functions = false,
  description = [[
Reorder the ops so that each comes after its inputs.

Reorders the ops so that every op comes after the ops it reads from
(data and control inputs): a topological order, which is stable (among
ops that are ready, the earliest in the current order goes first).  The
back edges of while loops (NextIteration into Merge) are not counted.
Fails on any other cycle.]],
  params = {},
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g)
    local ops = g:ops()
    local pos, succ, indeg = {}, {}, {}
    for i, op in ipairs(ops) do
      pos[op] = i
      succ[i] = {}
      indeg[i] = 0
    end
    local function edge(from, to_i)
      if type(from) == "string" then return end -- dangling
      local ti = ops[to_i].type
      if from.type == "NextIteration" and (ti == "Merge" or ti == "RefMerge") then
        return
      end
      local fi = pos[from]
      succ[fi][#succ[fi] + 1] = to_i
      indeg[to_i] = indeg[to_i] + 1
    end
    for i, op in ipairs(ops) do
      for _, t in ipairs(op.inputs) do
        edge(type(t) == "string" and t or t.op, i)
      end
      for _, c in ipairs(op.control_inputs) do edge(c, i) end
    end
    local ready, order = {}, {}
    for i = 1, #ops do
      if indeg[i] == 0 then heap_push(ready, i) end
    end
    while #ready > 0 do
      local i = heap_pop(ready)
      order[#order + 1] = ops[i]
      for _, j in ipairs(succ[i]) do
        indeg[j] = indeg[j] - 1
        if indeg[j] == 0 then heap_push(ready, j) end
      end
    end
    if #order < #ops then
      for i = 1, #ops do
        if indeg[i] > 0 then
          error(string.format("the graph has a cycle through '%s' (%d ops "
                              .. "cannot be ordered)", ops[i].name,
                              #ops - #order))
        end
      end
    end
    g:reorder(order)
  end,
}

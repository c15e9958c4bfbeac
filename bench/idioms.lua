-- idioms.lua GRAPH.pb: the calls that hand many ops to Lua, as users write
-- them, timed per op on one loaded graph (make bench; bench/run.sh).  Each
-- figure is the best of five runs of the call over the whole graph, in
-- microseconds per op; the target is 0.2 us per op.
local path = ...
local g = assert(ge.load(path))
local n = #g
local clock = os.clock

local function best(f)
  local b = math.huge
  for _ = 1, 5 do
    collectgarbage("collect")
    local t0 = clock()
    f()
    local t = clock() - t0
    if t < b then b = t end
  end
  return b
end

-- the first g:ops() of a graph makes its op userdata: a fresh load each run
local first = math.huge
for _ = 1, 5 do
  local h = assert(ge.load(path))
  collectgarbage("collect")
  local t0 = clock()
  h:ops()
  local t = clock() - t0
  if t < first then first = t end
  h:close()
end

local ops = g:ops()
local view
local rows = {
  {"g:ops()", function() g:ops() end},
  {"g:ops() twice (the same userdata)", function() g:ops() g:ops() end, 2},
  {"ge.sgv(list of ops)", function() view = ge.sgv(ops) end},
  {"ge.sgv(g)", function() ge.sgv(g) end},
  {"view.ops", function() local _ = view.ops end},
  {"ge.sgv(g:ops())", function() ge.sgv(g:ops()) end},
  {"op.type over g:ops()", function()
    for i = 1, #ops do local _ = ops[i].type end end},
  {"op.name over g:ops()", function()
    for i = 1, #ops do local _ = ops[i].name end end},
  {"op.outputs over g:ops()", function()
    for i = 1, #ops do local _ = ops[i].outputs end end},
  {"op.inputs over g:ops()", function()
    for i = 1, #ops do local _ = ops[i].inputs end end},
  {"g:ops{\"Conv2D\"} (all ops walked)", function() g:ops({"Conv2D"}) end},
}
print(string.format("== Lua idioms over %d ops (us per op, best of 5; target 0.2)", n))
print(string.format("  %-40s %8.3f s %7.3f us/op%s", "g:ops() first (userdata made)",
                    first, first * 1e6 / n, first * 1e6 / n > 0.2 and "  (over 0.2)" or ""))
for _, r in ipairs(rows) do
  local t = best(r[2])
  local us = t * 1e6 / n / (r[3] or 1)
  print(string.format("  %-40s %8.3f s %7.3f us/op%s", r[1], t, us,
                      us > 0.2 and "  (over 0.2)" or ""))
end

-- gerewrite.lua: the part of the gerewrite module written in Lua.
--
-- It runs once, when the C module loads, with the module table as its
-- argument; what it defines joins the C functions in that table.  The
-- program carries a copy built in; GEREWRITE_LUA_DIR=src/lua makes it read
-- this file instead, to try changes without rebuilding.
local ge = ...

local concat, sort = table.concat, table.sort

-- One value on one line: strings quoted, plain tables shallowly listed,
-- objects by their tostring.
local function show(v)
  if type(v) == "string" then
    if #v > 60 then v = v:sub(1, 57) .. "..." end
    return (string.format("%q", v):gsub("\\\n", "\\n"))
  end
  if type(v) ~= "table" or getmetatable(v) then return tostring(v) end
  local parts = {}
  for i = 1, math.min(#v, 8) do parts[i] = show(v[i]) end
  if #v > 8 then parts[#parts + 1] = "..." end
  return "{" .. concat(parts, ", ") .. "}"
end

local function describe_op(op)
  local lines = {tostring(op)}
  local function add(s) lines[#lines + 1] = "  " .. s end
  if op.device ~= "" then add("device: " .. op.device) end
  for i, t in ipairs(op.inputs) do
    add(string.format("input %d: %s", i - 1, tostring(t)))
  end
  for _, c in ipairs(op.control_inputs) do
    add("control input: " .. tostring(c))
  end
  for _, name in ipairs(op:attr_names()) do
    local ok, v, kind = pcall(op.attr, op, name)
    if ok then
      add(string.format("attr %s (%s): %s", name, kind, show(v)))
    else
      add(string.format("attr %s: %s", name, tostring(v)))
    end
  end
  for _, t in ipairs(op.outputs) do
    add(string.format("output %d: %s (%d consumers)", t.index, tostring(t),
                      #t:consumers()))
  end
  local couts = op:control_outputs()
  if #couts > 0 then
    add(string.format("control outputs: %d", #couts))
  end
  return concat(lines, "\n")
end

local function describe_graph(g)
  local counts, types = {}, {}
  for _, op in ipairs(g:ops()) do
    local t = op.type
    if not counts[t] then types[#types + 1] = t end
    counts[t] = (counts[t] or 0) + 1
  end
  sort(types, function(a, b)
    if counts[a] ~= counts[b] then return counts[a] > counts[b] end
    return a < b
  end)
  local lines = {tostring(g)}
  for _, t in ipairs(types) do
    lines[#lines + 1] = string.format("  %6d %s", counts[t], t)
  end
  return concat(lines, "\n")
end

local function describe_tensor(t)
  local lines = {tostring(t)}
  for _, c in ipairs(t:consumers()) do
    lines[#lines + 1] = "  consumer: " .. tostring(c)
  end
  return concat(lines, "\n")
end

--- ge.describe(x) -> text: several lines about an op (inputs, attrs with
-- their kinds, outputs), a graph (op counts by type) or a tensor (its
-- consumers); tostring(x) for anything else.  Meant for the prompt:
-- `print(ge.describe(g:op("conv1")))`.
function ge.describe(x)
  local kind = ge.type(x)
  if kind == "op" then return describe_op(x) end
  if kind == "graph" then return describe_graph(x) end
  if kind == "tensor" then return describe_tensor(x) end
  return show(x)
end

-- gerewrite.lua: the part of the gerewrite module written in Lua.
--
-- It runs once, when the C module loads, with the module table as its
-- argument; what it defines joins the C functions in that table.  The
-- program carries a copy built in; GEREWRITE_LUA_DIR=src/lua makes it read
-- this file instead, to try changes without rebuilding.
local ge = ...

local concat, sort = table.concat, table.sort

-- Plain tables print as Lua constructors: list items first, then the
-- named fields sorted by key; short ones on one line, longer ones one
-- entry a line, indented, cut after SHOW_MAX entries; nesting deeper than
-- SHOW_DEPTH and cycles print as "{...}".  Objects print by tostring.
local SHOW_WIDTH, SHOW_MAX, SHOW_DEPTH = 72, 20, 4

local function show_key(k)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then return k end
  if type(k) == "string" then
    return "[" .. (string.format("%q", k):gsub("\\\n", "\\n")) .. "]"
  end
  return "[" .. tostring(k) .. "]"
end

local function key_order(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return ta < tb end
  if ta == "number" or ta == "string" then return a < b end
  return tostring(a) < tostring(b)
end

local show

-- The entries of a plain table as strings, at most SHOW_MAX of them, and
-- how many were left out.
local function entries(v, indent, depth, seen)
  local parts, n = {}, #v
  local total = 0
  for i = 1, n do
    total = total + 1
    if #parts < SHOW_MAX then parts[#parts + 1] = show(v[i], indent, depth, seen) end
  end
  local keys = {}
  for k in pairs(v) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then
      keys[#keys + 1] = k
    end
  end
  sort(keys, key_order)
  for _, k in ipairs(keys) do
    total = total + 1
    if #parts < SHOW_MAX then
      parts[#parts + 1] = show_key(k) .. " = " .. show(v[k], indent, depth, seen)
    end
  end
  return parts, total - #parts
end

function show(v, indent, depth, seen)
  indent, depth, seen = indent or "", depth or 0, seen or {}
  if type(v) == "string" then
    if #v > 200 then v = v:sub(1, 197) .. "..." end
    return (string.format("%q", v):gsub("\\\n", "\\n"))
  end
  if type(v) ~= "table" or getmetatable(v) then return tostring(v) end
  if next(v) == nil then return "{}" end
  if seen[v] or depth >= SHOW_DEPTH then return "{...}" end
  seen[v] = true
  local inner = indent .. "  "
  local parts, more = entries(v, inner, depth + 1, seen)
  seen[v] = nil
  local flat = "{" .. concat(parts, ", ") ..
    (more > 0 and string.format(", ... %d more", more) or "") .. "}"
  if #flat + #indent <= SHOW_WIDTH and not flat:find("\n", 1, true) then
    return flat
  end
  local lines = {"{"}
  for _, p in ipairs(parts) do lines[#lines + 1] = inner .. p .. "," end
  if more > 0 then
    lines[#lines + 1] = string.format("%s-- ... %d more", inner, more)
  end
  lines[#lines + 1] = indent .. "}"
  return concat(lines, "\n")
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

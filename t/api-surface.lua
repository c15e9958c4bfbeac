-- api-surface.lua: the public Lua API as a sorted list of names, compared
-- with the committed t/api-surface.txt, so that the API never changes by
-- accident, and checked against doc/lua-api.md, so that nothing is left
-- undocumented.
--
-- Each line of the snapshot is `PATH NAME`:
--   ge NAME, ge.util NAME, ...      the module and every table in it
--                                   (groups, method tables), and the Lua
--                                   modules gerewrite.recipe / .repl
--   meta:TYPE NAME                  the metamethods of an object's
--                                   metatable (TYPE is its __name)
--   methods:TYPE NAME               its methods (the metatable's __methods)
--   fields:TYPE NAME                the fields it answers: for userdata,
--                                   those of a fixed list that are not nil
--                                   (an __index function cannot be walked,
--                                   so a new field goes unnoticed but a
--                                   lost one does not); for tables, every
--                                   key
-- One object of each kind is made from a tiny graph built here.
--
-- After a deliberate change of the API, document it in doc/lua-api.md and
-- regenerate the snapshot (from the build directory, writing into the
-- source tree), then review the diff:
--
--   GE_API_SNAPSHOT_WRITE=1 src/gerewrite $srcdir/t/api-surface.lua \
--     > $srcdir/t/api-surface.txt
local write = os.getenv("GE_API_SNAPSHOT_WRITE") == "1"
local tap = (not write) and require "tap" or nil
local F = "float32"

local lines, seen = {}, {}
local function add(path, name)
  local l = path .. " " .. tostring(name)
  if not seen[l] then
    seen[l] = true
    lines[#lines + 1] = l
  end
end

local function keys_of(path, t)
  for k in pairs(t) do add(path, k) end
end

-- ---------------------------------------------------------------- module
keys_of("ge", ge)
for k, v in pairs(ge) do
  if type(v) == "table" then keys_of("ge." .. k, v) end
end
keys_of("gerewrite.recipe", require "gerewrite.recipe")
keys_of("gerewrite.repl", require "gerewrite.repl")

-- ---------------------------------------------------------------- objects
local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p '" .. dir .. "'"))

local g = ge.graph()
g:add_op{type = "Placeholder", name = "x", attrs = {dtype = F, shape = ge.shape{2}}}
g:add_op{type = "VariableV2", name = "w", attrs = {dtype = F, shape = ge.shape{2}}}
g:add_op{type = "Const", name = "w/initial_value",
         attrs = {dtype = F, value = ge.tensor_value(F, {2}, 0)}}
g:add_op{type = "Assign", name = "w/Assign", inputs = {"w", "w/initial_value"},
         attrs = {T = F}}
g:add_op{type = "Identity", name = "w/read", inputs = {"w"}, attrs = {T = F}}
local y = g:add_op{type = "Mul", name = "y", inputs = {"x", "w/read"}, attrs = {T = F}}
y:set_attr("f", {name = "fn", attr = {n = 1}}, "func")

local view = ge.sgv(y)
local _, info = ge.copy(view, {dst_scope = "copy"})
local pattern = ge.match.op("Mul")
local iter = g:matches(pattern)
local _, iterud = debug.getupvalue(iter, 1)
assert(ge.checkpoint.write(dir .. "/ckpt", {w = ge.tensor_value(F, {2}, {1, 2})}))
local reader = assert(ge.checkpoint.open(dir .. "/ckpt"))

-- {object, fields to probe (userdata only)}
local objects = {
  {g, {"name"}},
  {y, {"name", "type", "device", "graph", "inputs", "outputs", "control_inputs", "frame", "origins"}},
  {g:tensor("x:0"), {"op", "index", "name", "dtype", "shape", "graph"}},
  {g:op("w/initial_value"):attr("value"), {"dtype", "shape"}},
  {g:tensor("x:0").shape},
  {y:attr("f")},
  {view, {"graph", "ops", "inputs", "outputs", "passthroughs", "connected_inputs",
          "connected_outputs"}},
  {ge.ControlOutputs(g), {"graph"}},
  {ge.Transformer(), {"transform_op_handler", "transform_control_input_handler",
                      "transform_external_input_handler",
                      "transform_external_hidden_input_handler",
                      "assign_collections_handler", "copy_control_flow_contexts"}},
  {info, {"graph", "graph_", "dst_graph", "scope", "scope_", "dst_scope", "sgv",
          "transformed_ops", "transformed_ts"}},
  {pattern, {}},
  {iterud, {}},
  {reader, {"prefix", "index", "shards"}},
  {g:variables()[1]},
  {ge.OpMatcher(true), {}},
  {g:add_func{name = "fn", inputs = {{name = "a", dtype = F}}},
   {"name", "inputs", "outputs", "attrs", "parent"}},
}

for _, o in ipairs(objects) do
  local obj, fields = o[1], o[2]
  local mt = getmetatable(obj)
  assert(mt and mt.__name, "an object without a named metatable")
  local tn = mt.__name
  for k, v in pairs(mt) do
    if k ~= "__methods" and k ~= "__name" then add("meta:" .. tn, k) end
  end
  if type(mt.__methods) == "table" then keys_of("methods:" .. tn, mt.__methods) end
  if type(obj) == "table" then
    for k in pairs(obj) do
      if math.type(k) ~= "integer" then add("fields:" .. tn, k) end
    end
  else
    for _, f in ipairs(fields or {}) do
      if obj[f] ~= nil then add("fields:" .. tn, f) end
    end
  end
end

-- plain tables the API returns
keys_of("fields:checkpoint-entry", reader:entry("w"))
local od = g:opdef("Mul")
keys_of("fields:opdef", od)
keys_of("fields:opdef-arg", od.inputs[1])
keys_of("fields:opdef-attr", od.attrs[1])
for _, e in ipairs(g:checkpoint_plan()) do keys_of("fields:checkpoint-plan", e) end
g:add_checkpoint_copy("w", "w2")
keys_of("fields:checkpoint-plan", g:checkpoint_plan()[1])

reader:close()
os.remove(dir .. "/ckpt.index")
os.remove(dir .. "/ckpt.data-00000-of-00001")
os.remove(dir)

table.sort(lines)

if write then
  io.stdout:write(table.concat(lines, "\n"), "\n")
  os.exit(0)
end

-- ---------------------------------------------------------------- compare
local ok, is = tap.ok, tap.is
local path = tap.srcdir() .. "/t/api-surface.txt"
local f = io.open(path)
if not ok(f ~= nil, "the snapshot " .. path .. " is readable") then
  tap.done()
  return
end
local want, wanted = {}, {}
for l in f:lines() do
  if l ~= "" then
    want[#want + 1] = l
    wanted[l] = true
  end
end
f:close()

local added, removed = {}, {}
for _, l in ipairs(lines) do
  if not wanted[l] then added[#added + 1] = l end
end
for _, l in ipairs(want) do
  if not seen[l] then removed[#removed + 1] = l end
end
local hint = "if the change is deliberate, document it in doc/lua-api.md and " ..
             "regenerate t/api-surface.txt (see the top of t/api-surface.lua)"
if not ok(#removed == 0, "no name of the snapshot has gone") then
  tap.diag("removed from the API:\n  " .. table.concat(removed, "\n  "))
  tap.diag(hint)
end
if not ok(#added == 0, "no name is missing from the snapshot") then
  tap.diag("added to the API:\n  " .. table.concat(added, "\n  "))
  tap.diag(hint)
end
ok(#lines > 300, "the walk found the API (" .. #lines .. " names)")

-- Every public name appears in the reference, as a whole word inside
-- code (a `span` or a fenced block).
local doc = io.open(tap.srcdir() .. "/doc/lua-api.md")
if ok(doc ~= nil, "doc/lua-api.md is readable") then
  local md = doc:read("a")
  doc:close()
  local code = {}
  for block in md:gmatch("\n```[^\n]*\n(.-)\n```") do code[#code + 1] = block end
  for span in md:gsub("\n```[^\n]*\n.-\n```", ""):gmatch("`([^`]+)`") do
    code[#code + 1] = span
  end
  local text = table.concat(code, "\n")
  local missing = {}
  for _, l in ipairs(lines) do
    local p, name = l:match("^(%S+) (.+)$")
    if not p:match("^gerewrite%.repl") then
      local esc = name:gsub("%p", "%%%0")
      if not (text:find("%f[%w_]" .. esc .. "%f[^%w_]")) then
        missing[#missing + 1] = l
      end
    end
  end
  if not ok(#missing == 0, "every name is documented in doc/lua-api.md") then
    tap.diag("not in doc/lua-api.md:\n  " .. table.concat(missing, "\n  "))
  end
end
tap.done()

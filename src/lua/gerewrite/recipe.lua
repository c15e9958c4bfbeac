-- gerewrite/recipe.lua: finding, loading and checking recipes.
--
-- A recipe is a Lua file returning
--   { name = "insert_noise", description = "...",
--     params = { {name = "stddev", type = "number", default = 0.1,
--                 help = "..."}, ... },
--     run = function(graph, params) ... end,
--     functions = false,    -- optional: not run on function bodies
--     numerics = "exact" }  -- optional: what it does to the outputs:
--                           -- "exact" (default), "rounding", "lossy"
--                           -- (with max_error = bound), "changes"
--                           -- (what `run --verify` checks)
-- Parameter types: string, int, number, bool, list (comma-separated
-- strings), enum (one of `choices`).  A parameter with `required = true`
-- has no default and must be given.
--
-- The recipe file runs in an environment of its own whose reads fall
-- back to the globals; reading a global that does not exist is an error
-- (a misspelt name fails loudly instead of being nil).  Everything is
-- checked before a model is read: the declaration when the recipe
-- loads, the parameters when they are converted.
--
-- Errors are returned as nil, message, exit code: 2 for what the user
-- typed (no such recipe, a bad parameter), 3 for a recipe that does not
-- load (syntax error, error while it runs, bad declaration).
local M = {}

local concat, sort = table.concat, table.sort
local fmt = string.format

--- M.dirs: the directories searched after GEREWRITE_PATH, set by the
-- program (the installed scripts directory, and the source tree's
-- scripts/ when it runs from its build tree).
M.dirs = {}

--- M.listdir(dir) -> list of file names (set by the program; Lua alone
-- cannot read a directory).
function M.listdir(dir) return {} end

--- search_path() -> list of directories, in search order.
function M.search_path()
  local dirs = {}
  local env = os.getenv("GEREWRITE_PATH")
  if env then
    for d in env:gmatch("[^:]+") do dirs[#dirs + 1] = d end
  end
  for _, d in ipairs(M.dirs) do dirs[#dirs + 1] = d end
  return dirs
end

local function readable(path)
  local f = io.open(path, "r")
  if not f then return false end
  -- a directory opens on Linux but does not read
  local ok = f:read(0) ~= nil or f:read("a") ~= nil
  f:close()
  return ok
end

local function is_path(name)
  return name:find("/", 1, true) or name:match("%.lua$")
end

local nearest -- below
--- find(name) -> path | nil, message: a name on the search path, or a
-- path to a .lua file.
function M.find(name)
  if is_path(name) then
    if readable(name) then return name end
    return nil, fmt("%s: no such recipe file", name)
  end
  if not name:match("^[%w_%-]+$") then
    return nil, fmt("'%s' is not a recipe name", name)
  end
  local dirs = M.search_path()
  for _, d in ipairs(dirs) do
    local p = d .. "/" .. name .. ".lua"
    if readable(p) then return p end
  end
  -- a slip of the keyboard: the nearest names on the path
  local names, seen = {}, {}
  for _, d in ipairs(dirs) do
    for _, f in ipairs(M.listdir(d)) do
      local n = f:match("^([%w_%-]+)%.lua$")
      if n and not seen[n] then
        seen[n] = true
        names[#names + 1] = n
      end
    end
  end
  local near = nearest(name, names)
  return nil, fmt("no recipe named '%s'%s (searched %s)", name,
                  #near > 0 and "; did you mean " .. concat(near, " or ")
                  .. "?" or "",
                  #dirs > 0 and concat(dirs, ", ") or "no directory")
end

-- ---------------------------------------------------------------- declaring

local TYPES = {string = true, int = true, number = true, bool = true,
               list = true, enum = true}
local TYPE_NAMES = "string, int, number, bool, list, enum"

local function split_list(s)
  local out = {}
  for item in (s .. ","):gmatch("([^,]*),") do
    item = item:match("^%s*(.-)%s*$")
    if item ~= "" then out[#out + 1] = item end
  end
  return out
end

local BOOLS = {["true"] = true, yes = true, on = true, ["1"] = true,
               ["false"] = false, no = false, off = false, ["0"] = false}

-- Converts a value (a string from the command line, or a default from
-- the declaration) to the parameter's type: the value, or nil and why.
local function convert(p, v)
  local t = p.type
  if t == "string" then
    if type(v) == "string" then return v end
    if type(v) == "number" then return tostring(v) end
    return nil, "a string"
  elseif t == "int" then
    local n = math.tointeger(type(v) == "string" and tonumber(v) or v)
    if n then return n end
    return nil, "an integer"
  elseif t == "number" then
    local n = type(v) == "string" and tonumber(v) or v
    if type(n) == "number" then return n end
    return nil, "a number"
  elseif t == "bool" then
    if type(v) == "boolean" then return v end
    if type(v) == "string" and BOOLS[v:lower()] ~= nil then
      return BOOLS[v:lower()]
    end
    return nil, "true or false"
  elseif t == "list" then
    if type(v) == "string" then return split_list(v) end
    if type(v) == "table" then
      local out = {}
      for i, x in ipairs(v) do out[i] = tostring(x) end
      return out
    end
    return nil, "a comma-separated list"
  elseif t == "enum" then
    for _, c in ipairs(p.choices) do
      if v == c then return v end
    end
    return nil, "one of " .. concat(p.choices, ", ")
  end
end

-- Checks the table a recipe file returned: nil, or what is wrong.
local function check_declaration(r, path)
  if type(r) ~= "table" then
    return fmt("%s: a recipe must return a table (got %s)", path, type(r))
  end
  if r.name ~= nil and type(r.name) ~= "string" then
    return fmt("%s: field 'name' must be a string", path)
  end
  if type(r.description) ~= "string" or r.description == "" then
    return fmt("%s: field 'description' (a string) is required", path)
  end
  if type(r.run) ~= "function" then
    return fmt("%s: field 'run' (a function(graph, params)) is required",
               path)
  end
  if r.functions ~= nil and type(r.functions) ~= "boolean" then
    return fmt("%s: field 'functions' must be a boolean (false: the " ..
               "recipe runs on the top-level graph only)", path)
  end
  local kinds = {exact = true, rounding = true, lossy = true, changes = true}
  if r.numerics ~= nil and not kinds[r.numerics] then
    return fmt("%s: field 'numerics' must be \"exact\", \"rounding\", " ..
               "\"lossy\" or \"changes\" (got %s)", path, tostring(r.numerics))
  end
  if r.numerics == "lossy" and (type(r.max_error) ~= "number" or
                                not (r.max_error >= 0)) then
    return fmt("%s: a lossy recipe declares its bound: field 'max_error' " ..
               "(a number >= 0, the largest |out - in| / max |in|)", path)
  end
  if r.params == nil then r.params = {} end
  if type(r.params) ~= "table" then
    return fmt("%s: field 'params' must be a list of tables", path)
  end
  local seen = {}
  for i, p in ipairs(r.params) do
    local where = fmt("%s: params[%d]", path, i)
    if type(p) ~= "table" then return where .. ": not a table" end
    if type(p.name) ~= "string" or not p.name:match("^[%a_][%w_]*$") then
      return where .. ": 'name' must be an identifier"
    end
    where = fmt("%s: parameter '%s'", path, p.name)
    if seen[p.name] then return where .. ": declared twice" end
    seen[p.name] = true
    if not TYPES[p.type] then
      return fmt("%s: type must be one of %s (got %s)", where, TYPE_NAMES,
                 tostring(p.type))
    end
    if p.type == "enum" then
      if type(p.choices) ~= "table" or #p.choices == 0 then
        return where .. ": an enum needs a list of 'choices'"
      end
      for _, c in ipairs(p.choices) do
        if type(c) ~= "string" then
          return where .. ": choices must be strings"
        end
      end
    end
    if p.help ~= nil and type(p.help) ~= "string" then
      return where .. ": 'help' must be a string"
    end
    if p.matches ~= nil and p.matches ~= "type" and p.matches ~= "op" then
      return where .. ": 'matches' must be \"type\" or \"op\""
    end
    if p.default ~= nil then
      if p.required then
        return where .. ": a required parameter has no default"
      end
      local v, want = convert(p, p.default)
      if v == nil then
        return fmt("%s: default %s is not %s", where, tostring(p.default),
                   want)
      end
    end
  end
  for k in pairs(r.params) do
    if math.type(k) ~= "integer" or k < 1 or k > #r.params then
      return fmt("%s: 'params' must be a list", path)
    end
  end
  return nil
end

-- The environment of a recipe file: globals readable, unknown ones an
-- error, its own globals kept apart from the program's.
local function environment()
  return setmetatable({}, {
    __index = function(_, k)
      local v = _G[k]
      if v == nil then
        error(fmt("undefined global '%s'", tostring(k)), 2)
      end
      return v
    end,
  })
end

-- ---------------------------------------------------------------- names

-- Levenshtein distance of two short strings (case counts one).
local function distance(a, b)
  if a == b then return 0 end
  local la, lb = #a, #b
  local prev, cur = {}, {}
  for j = 0, lb do prev[j] = j end
  for i = 1, la do
    cur[0] = i
    local ca = a:sub(i, i)
    for j = 1, lb do
      local cost = ca == b:sub(j, j) and 0 or 1
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
    end
    prev, cur = cur, prev
  end
  return prev[lb]
end


--- nearest(want, names) -> list of the names nearest to want (at most
-- three): the same but for case first, then those within a third of
-- want's length (at least 2) of edits, closest first.
function nearest(want, names)
  local lw, found = want:lower(), {}
  local limit = math.max(2, #want // 3)
  for _, n in ipairs(names) do
    local d = n:lower() == lw and 0 or distance(lw, n:lower())
    if d <= limit then found[#found + 1] = {n, d} end
  end
  sort(found, function(x, y)
    if x[2] ~= y[2] then return x[2] < y[2] end
    return x[1] < y[1]
  end)
  local out = {}
  for i = 1, math.min(3, #found) do out[i] = found[i][1] end
  return out
end
M.nearest = nearest

--- interface(g) -> set: the model's interface, by op name: its placeholders (of the
-- three types), the ops its
-- signatures name and the ops nobody reads (fetches such as output_1);
-- in a function body, its _Arg and _Retval ops.
function M.interface(g)
  local s = {}
  for _, op in ipairs(g:ops({"Placeholder", "PlaceholderV2",
                             "PlaceholderWithDefault", "_Arg", "_Retval"})) do
    s[op.name] = true
  end
  for _, key in ipairs(g:signature_names()) do
    local sig = g:signature(key)
    for _, side in ipairs{sig and sig.inputs or {}, sig and sig.outputs or {}} do
      for _, t in pairs(side) do
        if type(t) == "string" then
          s[ge.op_name(t)] = true
        elseif ge.type(t) == "op" then
          s[t.name] = true
        elseif ge.type(t) == "tensor" then
          s[t.op.name] = true
        end
      end
    end
  end
  for _, op in ipairs(g:ops()) do
    local read = #op:control_outputs() > 0
    for _, t in ipairs(op.outputs) do
      if read then break end
      read = #t:consumers() > 0
    end
    if not read then s[op.name] = true end
  end
  return s
end

--- tensors(g, names) -> list: the tensors of g named like "x" or "x:1",
-- in the order given; a name that is not a tensor of g raises.
function M.tensors(g, names)
  local out = {}
  for _, s in ipairs(names) do
    out[#out + 1] = g:tensor(s) or error("no tensor '" .. s .. "'")
  end
  return out
end

--- variable_tensors(g) -> set: the tensors g's variables expose, their
-- outputs and the outputs of the ops reading them (a variable's read).
function M.variable_tensors(g)
  local set = {}
  for _, var in ipairs(g:variables()) do
    for _, t in ipairs(var.op.outputs) do
      set[t] = true
      for _, c in ipairs(t:consumers()) do
        for _, ct in ipairs(c.outputs) do set[ct] = true end
      end
    end
  end
  return set
end

--- run_summary(ret, delta) -> text: what one run of a recipe did, from what
-- run returned (a table of counts: {sites = 3} reads "3 sites"), the
-- ops added, removed and changed ({added=, removed=, changed=, before=,
-- after=}) and the rules that made ops from others (provenance =
-- {rule = ops}: "provenance: copy 12").
function M.run_summary(ret, d)
  local parts = {}
  if type(ret) == "table" and getmetatable(ret) == nil then
    local keys = {}
    for k, v in pairs(ret) do
      if type(k) == "string" and math.type(v) == "integer" then
        keys[#keys + 1] = k
      end
    end
    sort(keys)
    for _, k in ipairs(keys) do
      local word = k
      -- one site, one pass (a one-word plural only)
      if ret[k] == 1 and word:match("^%a+[^s]s$") then
        word = word:sub(1, -2)
      elseif ret[k] == 1 and word:match("^%a+sses$") then
        word = word:sub(1, -3)
      end
      parts[#parts + 1] = fmt("%d %s", ret[k], (word:gsub("_", " ")))
    end
  end
  local ops = {}
  if d.added > 0 then ops[#ops + 1] = fmt("%d added", d.added) end
  if d.removed > 0 then ops[#ops + 1] = fmt("%d removed", d.removed) end
  if d.changed > 0 then ops[#ops + 1] = fmt("%d changed", d.changed) end
  local counts = fmt("%d -> %d ops", d.before, d.after)
  if #ops > 0 then
    parts[#parts + 1] = fmt("ops %s (%s)", concat(ops, ", "), counts)
  elseif d.edited then
    parts[#parts + 1] = fmt("edited, no op added, removed or changed (%s)",
                            counts)
  else
    parts[#parts + 1] = fmt("no change (%d ops)", d.before)
  end
  -- the rules that made ops from others, and how many each made
  if type(d.provenance) == "table" and next(d.provenance) then
    local rules = {}
    for rule, n in pairs(d.provenance) do
      rules[#rules + 1] = fmt("%s %d", rule, n)
    end
    sort(rules)
    parts[#parts + 1] = "provenance: " .. concat(rules, ", ")
  end
  return concat(parts, "; ")
end

--- load(name) -> recipe | nil, message, code.  The recipe table gets
-- `path` (its file) and `name` (from the file name when it has none).
function M.load(name)
  local path, err = M.find(name)
  if not path then return nil, err, 2 end
  local f, oerr = io.open(path, "r")
  if not f then return nil, oerr, 2 end
  local src = f:read("a")
  f:close()
  if src:sub(1, 1) == "#" then src = "--" .. src end
  local chunk, serr = load(src, "@" .. path, "t", environment())
  if not chunk then return nil, serr, 3 end
  local ok, r = pcall(chunk)
  if not ok then return nil, tostring(r), 3 end
  local why = check_declaration(r, path)
  if why then return nil, why, 3 end
  r.path = path
  if r.name == nil then
    r.name = path:match("([^/]+)%.lua$") or path
  end
  return r
end

--- params(recipe, assignments) -> params | nil, message.  assignments is a
-- list of "key=value" strings (the --param options, in order).  A list
-- parameter given several times collects every value; others may be
-- given once.  The params table refuses reads of undeclared names.
function M.params(r, assign)
  local decl = {}
  for _, p in ipairs(r.params) do decl[p.name] = p end
  local given, out = {}, {}
  for _, a in ipairs(assign or {}) do
    local k, v = a:match("^([^=]*)=(.*)$")
    if not k then
      return nil, fmt("%s: parameter '%s' needs a value (KEY=VALUE)",
                      r.name, a)
    end
    local p = decl[k]
    if not p then
      local names = {}
      for _, q in ipairs(r.params) do names[#names + 1] = q.name end
      return nil, fmt("%s: unknown parameter '%s' (%s)", r.name, k,
                      #names > 0 and "it has " .. concat(names, ", ")
                      or "it has none")
    end
    local val, want = convert(p, v)
    if val == nil then
      return nil, fmt("%s: parameter '%s' must be %s (got '%s')", r.name, k,
                      want, v)
    end
    if given[k] then
      if p.type ~= "list" then
        return nil, fmt("%s: parameter '%s' given twice", r.name, k)
      end
      for _, x in ipairs(val) do out[k][#out[k] + 1] = x end
    else
      out[k] = val
    end
    given[k] = true
  end
  for _, p in ipairs(r.params) do
    if not given[p.name] then
      if p.required then
        return nil, fmt("%s: parameter '%s' is required (--param %s=...)",
                        r.name, p.name, p.name)
      end
      if p.default ~= nil then out[p.name] = (convert(p, p.default)) end
    end
  end
  return setmetatable(out, {
    __index = function(_, k)
      if decl[k] then return nil end
      error(fmt("recipe %s has no parameter '%s'", r.name, tostring(k)), 2)
    end,
  })
end

-- ---------------------------------------------------------------- help

local function show_default(p)
  if p.required then return "required" end
  if p.default == nil then return "no default" end
  local d = p.default
  if type(d) == "table" then d = concat(d, ",") end
  return "default " .. (d == "" and '""' or tostring(d))
end

--- help(recipe) -> text: description and parameters.
function M.help(r)
  local lines = {fmt("%s: %s", r.name, r.description:match("^%s*(.-)%s*$")),
                 "", "File: " .. r.path}
  if #r.params == 0 then
    lines[#lines + 1] = ""
    lines[#lines + 1] = "No parameters."
  else
    lines[#lines + 1] = ""
    lines[#lines + 1] = "Parameters (--param NAME=VALUE):"
    for _, p in ipairs(r.params) do
      local t = p.type
      if t == "enum" then t = concat(p.choices, "|") end
      lines[#lines + 1] = fmt("  %s (%s, %s)", p.name, t, show_default(p))
      if p.help then
        for l in (p.help .. "\n"):gmatch("([^\n]*)\n") do
          lines[#lines + 1] = "      " .. l
        end
      end
    end
  end
  return concat(lines, "\n")
end

--- summary(description) -> the first sentence of its first paragraph, on
-- one line: up to a full stop outside parentheses that ends a word other
-- than "e.g." or "i.e.", else the whole paragraph.
function M.summary(description)
  local para = (description:match("^%s*(.-)\n%s*\n") or description)
  para = para:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
  local depth = 0
  for i = 1, #para do
    local c = para:sub(i, i)
    if c == "(" then depth = depth + 1
    elseif c == ")" then depth = math.max(depth - 1, 0)
    elseif c == "." and depth == 0 and (i == #para or para:sub(i + 1, i + 1) == " ") then
      local word = para:sub(1, i):match("(%S+)$")
      if word ~= "e.g." and word ~= "i.e." then return para:sub(1, i) end
    end
  end
  return para
end

--- list() -> list of {name=, path=, summary=}: every recipe on the search
-- path (the first of a name wins), sorted by name.  A recipe that does
-- not load is listed with its error as summary.
function M.list()
  local seen, out = {}, {}
  for _, d in ipairs(M.search_path()) do
    local names = {}
    for _, f in ipairs(M.listdir(d)) do
      local n = f:match("^([%w_%-]+)%.lua$")
      if n then names[#names + 1] = n end
    end
    sort(names)
    for _, n in ipairs(names) do
      if not seen[n] then
        seen[n] = true
        local path = d .. "/" .. n .. ".lua"
        local r, err = M.load(path)
        local summary
        if r then
          summary = M.summary(r.description)
        else
          summary = "(does not load: " .. err .. ")"
        end
        out[#out + 1] = {name = n, path = path, summary = summary}
      end
    end
  end
  sort(out, function(a, b) return a.name < b.name end)
  return out
end

return M

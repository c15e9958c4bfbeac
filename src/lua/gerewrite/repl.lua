-- gerewrite/repl.lua: what the interactive prompt prints and completes.
--
-- show(n, ...) turns the values of one entry into the text printed;
-- complete(line, start, stop) lists the words that may replace
-- line:sub(start + 1, stop) when the user presses TAB; help(index, x)
-- finds x in the API reference's index.  They are called by src/repl.c;
-- none changes anything in the session but track_saves(mark), which
-- makes g:save report a success to mark.
local ge = require "gerewrite"

local M = {}

local concat, sort = table.concat, table.sort

-- ---------------------------------------------------------------- show

local LIST_MAX = 20

local function plain(v) return type(v) == "table" and getmetatable(v) == nil end

-- A plain list whose items are all ops, or all tensors: the kind, else nil.
local function object_list(v)
  if not plain(v) or #v == 0 then return nil end
  local kind = ge.type(v[1])
  if kind ~= "op" and kind ~= "tensor" then return nil end
  local n = 0
  for k, x in pairs(v) do
    if math.type(k) ~= "integer" or ge.type(x) ~= kind then return nil end
    n = n + 1
  end
  if n ~= #v then return nil end
  return kind
end

local function one_line(v)
  if type(v) == "string" then return v end
  if plain(v) then return ge.describe(v) end
  return tostring(v)
end

local function show_list(v, kind)
  local lines = {string.format("%d %s%s:", #v, kind, #v == 1 and "" or "s")}
  local width = #tostring(math.min(#v, LIST_MAX))
  for i = 1, math.min(#v, LIST_MAX) do
    lines[#lines + 1] = string.format("  %" .. width .. "d  %s", i,
                                      tostring(v[i]))
  end
  if #v > LIST_MAX then
    lines[#lines + 1] = string.format("  ... %d more", #v - LIST_MAX)
  end
  return concat(lines, "\n")
end

--- show(n, ...) -> text: one value per tab-separated field; a list of ops
-- or tensors alone becomes a short numbered table.
function M.show(n, ...)
  local vals = table.pack(...)
  if n == 1 then
    local kind = object_list(vals[1])
    if kind then return show_list(vals[1], kind) end
  end
  local parts = {}
  for i = 1, n do parts[i] = one_line(vals[i]) end
  return concat(parts, "\t")
end

-- ---------------------------------------------------------------- complete

local keywords = {
  "and", "break", "do", "else", "elseif", "end", "false", "for",
  "function", "goto", "if", "in", "local", "nil", "not", "or", "repeat",
  "return", "then", "true", "until", "while",
}

local object_fields = {
  graph = {"name"},
  op = {"name", "type", "device", "graph", "inputs", "outputs",
        "control_inputs"},
  tensor = {"op", "index", "name", "dtype", "shape"},
}
local method_tables = {graph = "Graph", op = "Op", tensor = "Tensor",
                       value = "Value"}

-- The value of a chain of names (`a.b.c`, no calls, no side effects
-- beyond __index), or nil.
local function resolve(expr)
  local v = _G
  for name in expr:gmatch("[^.]+") do
    if not name:match("^[%a_][%w_]*$") then return nil end
    local ok, x = pcall(function() return v[name] end)
    if not ok or x == nil then return nil end
    v = x
  end
  return v
end

-- Keys of a table and of its __index tables, strings only.
local function table_keys(t, out, want_fn)
  local seen = 0
  while type(t) == "table" and seen < 8 do
    for k, x in pairs(t) do
      if type(k) == "string" and (not want_fn or type(x) == "function") then
        out[#out + 1] = k
      end
    end
    local mt = getmetatable(t)
    t = type(mt) == "table" and rawget(mt, "__index") or nil
    seen = seen + 1
  end
end

local function names_of(v, sep)
  local out = {}
  local kind = ge.type(v)
  if kind then
    if sep == ":" then
      table_keys(ge[method_tables[kind] or ""] or {}, out, true)
    else
      for _, f in ipairs(object_fields[kind] or {}) do out[#out + 1] = f end
    end
  elseif type(v) == "table" then
    table_keys(v, out, sep == ":")
  elseif type(v) == "string" and sep == ":" then
    table_keys(string, out, true)
  end
  return out
end

local function finish(cands, prefix)
  local seen, out = {}, {}
  for _, c in ipairs(cands) do
    if c:sub(1, #prefix) == prefix and not seen[c] then
      seen[c] = true
      out[#out + 1] = c
    end
  end
  sort(out)
  return out
end

-- Methods whose first argument is an op or tensor name of the graph.
local takes_name = {op = true, tensor = true, remove_op = true}

--- complete(line, start, stop) -> list of words, close: candidates for
-- the word line:sub(start + 1, stop) (start and stop count bytes from 0,
-- as readline does), and what closes the call after a unique op name.
function M.complete(line, start, stop)
  local word = line:sub(start + 1, stop)
  local before = line:sub(1, start)
  -- inside g:op(" or g:tensor(' : op names of that graph
  local obj, method = before:match("([%a_][%w_%.]*)%s*:%s*([%a_][%w_]*)%s*%(%s*[\"']$")
  if obj and takes_name[method] then
    local g = resolve(obj)
    if ge.type(g) ~= "graph" then return {} end
    local names = {}
    for _, op in ipairs(g:ops()) do
      local n = op.name
      if n:sub(1, #word) == word then names[#names + 1] = n end
    end
    return finish(names, word), ")"
  end
  if before:match("[\"']$") then return {} end
  -- a.b.c or a.b:c
  local base, sep, partial = word:match("^(.-)([.:])([%w_]*)$")
  if base and base ~= "" then
    local v = resolve(base)
    if v == nil then return {} end
    local out = {}
    for _, k in ipairs(names_of(v, sep)) do
      if k:match("^[%a_][%w_]*$") then out[#out + 1] = base .. sep .. k end
    end
    return finish(out, base .. sep .. partial)
  end
  -- a global name or a keyword
  local out = {}
  for k in pairs(_G) do
    if type(k) == "string" then out[#out + 1] = k end
  end
  for _, k in ipairs(keywords) do out[#out + 1] = k end
  return finish(out, word)
end

-- ---------------------------------------------------------------- help

local INTRO = [[
help(ge.copy), help "copy", help "insert_after" or help "g:insert_after"
print the entries of the API reference (doc/lua-api.md) for a function,
a method or a field; help "pattern" lists those whose name holds the
pattern.  ge.describe(x) shows an op, a graph, a tensor or a table;
undo() takes back the last entry's edits; TAB completes names, methods
and op names; ^C clears the line; ^D leaves.]]

-- The letters the reference writes an object with, by kind: g:op, op.type.
local prefix_of = {graph = "g", op = "op", tensor = "t", value = "v",
                   view = "v", ["function"] = "fn"}

-- The name of a function of the module (ge.copy, ge.util.ph) or of a
-- method of one of its types (g:insert_after, op:attr), or nil.
local function name_of(f)
  for k, v in pairs(ge) do
    if rawequal(v, f) then return "ge." .. k end
  end
  for kind, p in pairs(prefix_of) do
    local t = ge[method_tables[kind] or ""]
    if type(t) == "table" then
      for k, v in pairs(t) do
        if rawequal(v, f) and type(k) == "string" then return p .. ":" .. k end
      end
    end
  end
  for k, t in pairs(ge) do
    if type(t) == "table" and type(k) == "string" then
      for k2, v in pairs(t) do
        if rawequal(v, f) and type(k2) == "string" then
          return "ge." .. k .. "." .. k2
        end
      end
    end
  end
  return nil
end

local function last_part(n) return n:match("[^.:]+$") or n end
-- "g:op" -> "g", "ge.util.ph" -> "ge.util", "copy" -> nil
local function qualifier(n) return n:match("^(.*)[.:][^.:]+$") end
-- the same object written differently: graph:op, Graph.op and g:op
local aliases = {graph = "g", Graph = "g", Op = "op", tensor = "t",
                 Tensor = "t", gerewrite = "ge"}
local function norm(q)
  if not q then return nil end
  return aliases[q] or q
end

local WIDTH = 76

-- The text of an entry wrapped to WIDTH columns, its paragraphs (byte 2
-- in the index) apart.
local function wrap(text)
  local out = {}
  for para in (text .. "\2"):gmatch("%s*([^\2]*)\2") do
    local line = ""
    for word in para:gmatch("%S+") do
      if #line > 0 and #line + 1 + #word > WIDTH then
        out[#out + 1] = line
        line = word
      else
        line = #line > 0 and line .. " " .. word or word
      end
    end
    if #line > 0 then out[#out + 1] = line end
    out[#out + 1] = ""
  end
  if out[#out] == "" then out[#out] = nil end
  return concat(out, "\n")
end

-- The call and the first sentence of an entry, for lists.
local function first_sentence(text)
  text = text:gsub("\2.*", "")
  return text:match("^(.-%.)%s") or text
end

--- help(index, [x]) -> text: the entries of the index (lines
-- "NAMES<TAB>SECTION<TAB>TEXT") for x, a function of the module, a
-- method, or a name (bare, "insert_after", or qualified, "g:insert_after",
-- "ge.copy"): whole entries for a name that matches, the first sentence
-- of each for a pattern that names part of several; the introduction
-- without x.
function M.help(index, x, ...)
  if x == nil and select("#", ...) == 0 then return INTRO end
  local want
  if type(x) == "function" then
    want = name_of(x)
    if not want then return "not a function of the gerewrite module" end
  elseif type(x) == "string" then
    want = x:gsub("%(.*$", ""):gsub("^%s+", ""):gsub("%s+$", "")
  else
    return "help: give a function of the module or its name (help \"copy\")"
  end
  -- the entries naming want exactly; else naming its last part on the
  -- same object; else its last part on any; else holding it
  local tiers, seen = {{}, {}, {}, {}}, {}
  local wl, wq = last_part(want), norm(qualifier(want))
  for line in index:gmatch("[^\n]+") do
    local names, section, text = line:match("^([^\t]*)\t([^\t]*)\t(.*)$")
    if names and not seen[text] then
      local best = 5
      for n in names:gmatch("%S+") do
        local t
        if n == want then t = 1
        elseif last_part(n) == wl then
          t = (wq and norm(qualifier(n) or "ge") == wq) and 2 or 3
        elseif n:find(want, 1, true) then t = 4
        else t = 5 end
        if t < best then best = t end
      end
      if best < 5 then
        seen[text] = true
        local tier = tiers[best]
        tier[#tier + 1] = {text = text, section = section}
      end
    end
  end
  for i, tier in ipairs(tiers) do
    if #tier > 0 then
      local out = {}
      for _, e in ipairs(tier) do
        if i < 4 then
          out[#out + 1] = wrap(e.text) .. "\n  [" .. e.section .. "]"
        else
          out[#out + 1] = first_sentence(e.text) .. "  [" .. e.section .. "]"
        end
      end
      return concat(out, i < 4 and "\n\n" or "\n")
    end
  end
  return "nothing in the API reference for " .. want
end

-- ---------------------------------------------------------------- saves

--- track_saves(mark, mark_clone): g:save and ge.load call mark(graph)
-- after they succeeded, g:clone() calls mark_clone(graph, copy).
function M.track_saves(mark, mark_clone)
  local mt = getmetatable(ge.graph())
  local methods = mt and rawget(mt, "__methods")
  if type(methods) ~= "table" or type(methods.save) ~= "function" then
    return
  end
  local save, clone, load = methods.save, methods.clone, ge.load
  methods.save = function(self, ...)
    local r = table.pack(save(self, ...))
    if r[1] then mark(self) end
    return table.unpack(r, 1, r.n)
  end
  methods.clone = function(self, ...)
    local copy = clone(self, ...)
    mark_clone(self, copy)
    return copy
  end
  ge.load = function(...)
    local r = table.pack(load(...))
    if r[1] then mark(r[1]) end
    return table.unpack(r, 1, r.n)
  end
end

return M

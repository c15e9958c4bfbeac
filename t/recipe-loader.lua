-- recipe-loader.lua: gerewrite.recipe: finding recipes, checking their
-- declaration, converting parameters, the recipe environment, help text;
-- and every shipped recipe loads and documents its parameters.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises
local recipe = require "gerewrite.recipe"

local dir = tap.tmpdir()
local function write(name, text)
  local f = assert(io.open(dir .. "/" .. name, "w"))
  f:write(text)
  f:close()
  return dir .. "/" .. name
end

-- ---------------------------------------------------------------- a good one
local good = write("good.lua", [[
#!/usr/bin/env gerewrite
local helper = 41
return {
  description = "A test recipe.\n\nSecond paragraph.",
  params = {
    {name = "s", type = "string", default = "x", help = "a string"},
    {name = "i", type = "int", default = 3},
    {name = "n", type = "number", default = 0.5},
    {name = "b", type = "bool", default = false},
    {name = "l", type = "list", default = "a,b"},
    {name = "e", type = "enum", choices = {"one", "two"}, default = "one"},
    {name = "r", type = "string", required = true},
    {name = "o", type = "int"},
  },
  run = function(g, p) return helper + 1 end,
}
]])
local r, err, code = recipe.load(good)
ok(r ~= nil, "a recipe loads from a path") if not r then tap.diag(err) end
is("good", r.name, "its name defaults to the file name")
is(good, r.path, "its path is kept")
is(42, r.run(), "its locals are its own")

local p, perr = recipe.params(r, {"r=req"})
ok(p ~= nil, "defaults fill in") if not p then tap.diag(perr) end
is("x", p.s, "string default")
is(3, p.i, "int default")
is(0.5, p.n, "number default")
is(false, p.b, "bool default")
same({"a", "b"}, p.l, "a list default given as a string")
is("one", p.e, "enum default")
is("req", p.r, "a required parameter given")
is(nil, p.o, "no default and not given: nil")
raises("has no parameter 'typo'", function() return p.typo end,
       "reading an undeclared parameter is an error")

p = recipe.params(r, {"r=z", "s=hello=world", "i=-7", "n=1e-3", "b=yes",
                      "l= c , d ,, e", "l=f", "e=two", "o=0x10"})
is("hello=world", p.s, "the value is everything after the first =")
is(-7, p.i, "int")
is(math.type(-7), math.type(p.i), "an integer")
is(0.001, p.n, "number")
is(true, p.b, "bool: yes")
same({"c", "d", "e", "f"}, p.l, "a list is split, trimmed, and repeats add")
is("two", p.e, "enum")
is(16, p.o, "hex ints")

local function refused(assign, want, name)
  local q, m = recipe.params(r, assign)
  ok(q == nil and m and m:find(want, 1, true), name)
  if q or not (m and m:find(want, 1, true)) then tap.diag(tostring(m)) end
end
refused({}, "parameter 'r' is required", "a missing required parameter")
refused({"r=1", "zz=1"}, "unknown parameter 'zz' (it has s, i, n, b, l, e, r, o)",
        "an unknown parameter names the known ones")
refused({"r=1", "i=1.5"}, "parameter 'i' must be an integer (got '1.5')",
        "a non-integer int")
refused({"r=1", "n=abc"}, "parameter 'n' must be a number", "a bad number")
refused({"r=1", "b=maybe"}, "parameter 'b' must be true or false",
        "a bad bool")
refused({"r=1", "e=three"}, "parameter 'e' must be one of one, two",
        "a bad enum")
refused({"r=1", "s=a", "s=b"}, "parameter 's' given twice",
        "a non-list given twice")
refused({"r"}, "parameter 'r' needs a value", "KEY without =VALUE")

local help = recipe.help(r)
ok(help:find("^good: A test recipe%.\n\nSecond paragraph%.") ~= nil,
   "help starts with the name and the description")
ok(help:find("  e (one|two, default one)", 1, true) ~= nil,
   "help shows enum choices and defaults")
ok(help:find("  r (string, required)", 1, true) ~= nil,
   "help marks required parameters")
ok(help:find("      a string", 1, true) ~= nil, "help shows the help text")

-- ---------------------------------------------------------------- refusals
local function bad(text, want, wantcode, name)
  local path = write("bad.lua", text)
  local x, m, c = recipe.load(path)
  ok(x == nil and c == wantcode and m and m:find(want, 1, true), name)
  if x or not (m and m:find(want, 1, true)) or c ~= wantcode then
    tap.diag(tostring(m) .. " (code " .. tostring(c) .. ")")
  end
end
bad("return {description = 'd', run = function() end, params = {",
    "bad.lua:1:", 3, "a syntax error: code 3 with file and line")
bad("local x = undefined_thing\nreturn {}", "bad.lua:1: undefined global "
    .. "'undefined_thing'", 3, "reading an undefined global is an error")
bad("error('at load')", "bad.lua:1: at load", 3, "an error while loading")
bad("return 5", "a recipe must return a table (got number)", 3,
    "not a table")
bad("return {run = function() end}", "field 'description' (a string) is "
    .. "required", 3, "no description")
bad("return {description = 'd'}", "field 'run'", 3, "no run")
bad("return {description = 'd', run = print, params = {{name = 'x', "
    .. "type = 'float'}}}", "type must be one of string, int, number, "
    .. "bool, list, enum (got float)", 3, "a bad parameter type")
bad("return {description = 'd', run = print, params = {{name = 'x', "
    .. "type = 'enum'}}}", "an enum needs a list of 'choices'", 3,
    "an enum without choices")
bad("return {description = 'd', run = print, params = {{name = 'x', "
    .. "type = 'int', default = 'many'}}}", "default many is not an integer",
    3, "a default of the wrong type")
bad("return {description = 'd', run = print, params = {{name = 'x', "
    .. "type = 'int'}, {name = 'x', type = 'int'}}}", "declared twice", 3,
    "a parameter declared twice")
bad("return {description = 'd', run = print, params = {{name = 'x y', "
    .. "type = 'int'}}}", "'name' must be an identifier", 3,
    "a parameter name that is not an identifier")

local x, m, c = recipe.load(dir .. "/missing.lua")
ok(x == nil and c == 2 and m:find("no such recipe file"), "a missing file: code 2")
x, m, c = recipe.load("no_such_recipe_name")
ok(x == nil and c == 2 and m:find("no recipe named 'no_such_recipe_name'"),
   "an unknown name: code 2")
x, m, c = recipe.load("../x")
ok(x == nil and c == 2, "a name with a slash is a path")

-- globals written by a recipe stay in its environment
write("globals.lua", "leaked_global = 1\nreturn {description = 'd', "
      .. "run = function() return leaked_global end}")
local gr = assert(recipe.load(dir .. "/globals.lua"))
is(nil, rawget(_G, "leaked_global"), "a recipe's globals do not leak")
is(1, gr.run(), "but the recipe sees them")

-- ---------------------------------------------------------------- search path
-- GEREWRITE_PATH comes first on the path: a value in the environment of
-- the test run would add its recipes to the lists below
do
  local getenv = os.getenv
  os.getenv = function(k)
    if k == "GEREWRITE_PATH" then return nil end
    return getenv(k)
  end
end
os.execute("mkdir -p '" .. dir .. "/p1' '" .. dir .. "/p2'")
write("p1/same.lua", "return {description = 'first', run = print}")
write("p2/same.lua", "return {description = 'second', run = print}")
write("p2/other.lua", "return {description = 'other', run = print}")
recipe.dirs = {dir .. "/p1", dir .. "/p2"}
recipe.listdir = function(d)
  local p = io.popen("ls -1 '" .. d .. "' 2>/dev/null")
  local t = {}
  for l in p:lines() do t[#t + 1] = l end
  p:close()
  return t
end
is("first", assert(recipe.load("same")).description,
   "the first directory on the path wins")
is("other", assert(recipe.load("other")).description, "later ones are searched")
local names = {}
for _, e in ipairs(recipe.list()) do names[#names + 1] = e.name .. "=" .. e.summary end
same({"other=other", "same=first"}, names, "list: sorted, first of a name")

-- ---------------------------------------------------------------- shipped
local scripts = tap.srcdir() .. "/scripts"
local shipped = {
  "add_default_attributes", "clone_tower", "copy_subgraph",
  "insert_logging", "insert_noise",
  "merge_duplicate_nodes", "obfuscate_names", "remove_attribute",
  "remove_control_dependencies", "remove_device", "remove_nodes",
  "rename_op", "rename_scope", "set_device", "sort_by_execution_order",
  "strip_unused_nodes",
}
for _, n in ipairs(shipped) do
  local sr, serr = recipe.load(scripts .. "/" .. n .. ".lua")
  ok(sr ~= nil and sr.name == n, n .. " loads and is named " .. n)
  if not sr then tap.diag(serr) else
    local documented = true
    for _, q in ipairs(sr.params) do
      if not q.help and #sr.params > 0 then documented = false end
    end
    ok(documented and sr.description:match("^[^\n]+\n\n"),
       n .. ": a summary line, and help for every parameter")
  end
end

tap.done()

-- testlib.lua: fixture helpers shared by the Lua tests run by gerewrite.
local tap = require "tap"
local M = {}

local SHAPE2 = 'attr { key: "_output_shapes" value { list { shape { dim { size: 2 } } } } }'

-- A node of type op (T float) and a float Const, each with one output
-- shaped [2].
local function node(name, op, inputs)
  local s = string.format('node { name: "%s" op: "%s" ', name, op)
  for _, i in ipairs(inputs or {}) do s = s .. string.format('input: "%s" ', i) end
  return s .. ' attr { key: "T" value { type: DT_FLOAT } } ' .. SHAPE2 .. ' }\n'
end
local function const(name)
  return string.format('node { name: "%s" op: "Const" ' ..
    'attr { key: "dtype" value { type: DT_FLOAT } } ', name) .. SHAPE2 .. ' }\n'
end

M.node, M.const = node, const

-- The graph of graph_editor's own tests (GraphDef text); the tests add
-- ops of their own.
M.EDITOR_GRAPH = const("a") .. const("foo/b") .. node("foo/c", "Add", {"a", "foo/b"}) ..
  const("foo/d") .. node("foo/bar/e", "Add", {"foo/c", "foo/d"}) ..
  node("foo/bar/f", "Add", {"foo/c", "foo/d"}) ..
  node("foo/bar/g", "Add", {"foo/c", "a"}) ..
  node("foo/bar/h", "Add", {"foo/bar/f", "foo/bar/g", "^foo/c"})

-- "a,b:0": the names of a list of ops or tensors.
function M.names(list)
  local r = {}
  for i, x in ipairs(list) do r[i] = x.name end
  return table.concat(r, ",")
end

-- "x:0,y:0": the data inputs of the named op.
function M.ins(g, name)
  local r = {}
  for k, t in ipairs(g:op(name).inputs) do r[k] = t.name end
  return table.concat(r, ",")
end

-- A recipe shipped in the source tree's scripts/, loaded.
function M.recipe(name)
  local recipe = require "gerewrite.recipe"
  return assert(recipe.load(tap.srcdir() .. "/scripts/" .. name .. ".lua"))
end

-- Runs recipe r (loaded, or the name of a shipped one) on g with the
-- "k=v" assignments; returns what the recipe returns.
function M.run_recipe(r, g, assign)
  local recipe = require "gerewrite.recipe"
  if type(r) == "string" then r = M.recipe(r) end
  return r.run(g, assert(recipe.params(r, assign or {})))
end

return M

-- lua-names.lua: the library's one tensor-name rule from Lua
-- (ge.op_name, ge.split_tensor_name), the recipes that lean on it, and
-- the tensor helpers gerewrite.recipe shares with the copying recipes.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises

-- ---------------------------------------------------------------- op_name
is("a/b", ge.op_name("a/b"), "op_name of an op name")
is("a/b", ge.op_name("a/b:1"), "op_name of a tensor name")
is("a/b", ge.op_name("^a/b"), "op_name of a control input")
is("a/b", ge.op_name("^a/b:1"), "op_name of a control input with an output")
is("a/b:x", ge.op_name("a/b:x"), "a colon not before digits is the name's")
is("a", ge.op_name("a:12"), "a two-digit index")
for _, bad in ipairs{"", "^", "a:", ":1", "^a:", "a:99999999999"} do
  raises("malformed tensor name", function() ge.op_name(bad) end,
         "op_name raises on '" .. bad .. "'")
end
raises("string expected", function() ge.op_name() end, "op_name needs a string")

-- ----------------------------------------------------------- split
same({"a/b", 1}, {ge.split_tensor_name("a/b:1")}, "split: name and index")
same({"a/b", 0}, {ge.split_tensor_name("a/b")}, "split: index 0 when omitted")
same({"a/b", -1}, {ge.split_tensor_name("^a/b")}, "split: -1 for ^name")
same({"x", 2147483647}, {ge.split_tensor_name("x:2147483647")},
     "split: the largest index")
raises("malformed tensor name",
       function() ge.split_tensor_name("x:2147483648") end, "split: an index past 2^31-1 raises")
raises("malformed tensor name", function() ge.split_tensor_name("a:") end,
       "split: a bare colon raises")

-- the rule agrees with the graph's own lookup
local g = ge.graph()
local x = g:add_op{type = "Placeholder", name = "in/x",
                   attrs = {dtype = "float32"}}
local y = g:add_op{type = "Identity", name = "y", inputs = {x:output(0)}}
for _, s in ipairs{"in/x", "in/x:0", "y:0"} do
  local name, index = ge.split_tensor_name(s)
  is(g:tensor(s), g:op(name):output(index), "g:tensor and split agree on " .. s)
end

-- ---------------------------------------------------------- recipe helpers
local R = require "gerewrite.recipe"
same({x:output(0), y:output(0)}, R.tensors(g, {"in/x", "y:0"}),
     "recipe.tensors in the order given")
raises("no tensor 'nope:0'", function() R.tensors(g, {"nope:0"}) end,
       "recipe.tensors raises naming a missing tensor")
same({}, R.variable_tensors(g), "no variables, no variable tensors")

-- every recipe names ops by the one rule: no pattern of its own
local dir = tap.srcdir()
local names = {"fold_constants", "merge_duplicate_nodes", "obfuscate_names",
               "remove_identity_chains", "remove_nodes", "strip_unused_nodes",
               "clone_tower", "copy_subgraph", "signature"}
for _, n in ipairs(names) do
  local f = io.open(dir .. "/scripts/" .. n .. ".lua")
  if f then
    local src = f:read("a")
    f:close()
    ok(not src:find('gsub("^%^"', 1, true) and
       not src:find('":%d+$"', 1, true) and
       not src:find("local function tensors", 1, true),
       n .. " uses ge.op_name and the shared helpers")
  else
    tap.skip(1, n .. ".lua not found under " .. dir)
  end
end

-- a recipe given a control input and a tensor name keeps their op
g:add_op{type = "Identity", name = "dead", inputs = {x:output(0)}}
require("testlib").run_recipe("strip_unused_nodes", g, {"outputs=^y:0"})
ok(g:op("y") ~= nil and g:op("dead") == nil,
   "strip_unused_nodes reads ^y:0 as the op y")

tap.done()

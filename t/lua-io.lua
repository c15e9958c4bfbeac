-- lua-io.lua: ge.load, g:save, g:serialize and ge.parse from Lua, in a
-- temporary directory: round trips, atomic saves, refusals, errors.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises

local dir = tap.tmpdir()

local slurp = tap.slurp

local function listdir()
  local p = assert(io.popen("ls -A '" .. dir .. "'"))
  local names = {}
  for line in p:lines() do names[#names + 1] = line end
  p:close()
  table.sort(names)
  return names
end

local function opnames(g)
  local t = {}
  for i, op in ipairs(g:ops()) do t[i] = op.name end
  return t
end

local g = ge.graph()
local x = g:add_op{type = "Placeholder", name = "x",
                   attrs = {dtype = "float32", shape = ge.shape{-1, 2}}}
local w = g:add_op{type = "Const", name = "w", attrs = {
  dtype = "float32", value = ge.tensor_value("float32", {2, 2}, {1, 2, 3, 4})}}
g:add_op{type = "MatMul", name = "y", inputs = {x:output(0), w:output(0)},
         attrs = {T = "float32", transpose_a = false, transpose_b = false}}

-- ---------------------------------------------------------------- binary
local pb = dir .. "/model.pb"
is(true, g:save(pb), "save a new graph")
local g2, err = ge.load(pb)
ok(g2, "load it back " .. tostring(err))
same(opnames(g), opnames(g2), "same ops in the same order")
is(pb, g2.name, "a loaded graph is named by its path")
is('graph "' .. pb .. '" (3 ops)', tostring(g2), "tostring of a loaded graph")
is(g:serialize(), g2:serialize(), "same bytes after the round trip")
is(slurp(pb), g2:serialize("graphdef"), "serialize gives the file's bytes")
same({"y"}, (function()
  local t = {}
  for i, op in ipairs(g2:op("x"):consumers()) do t[i] = op.name end
  return t
end)(), "edges survive")
same({1, 2, 3, 4}, g2:op("w"):attr("value"):totable(), "values survive")

-- an untouched loaded graph saves byte for byte
local copy = dir .. "/copy.pb"
is(true, g2:save(copy), "save a loaded graph elsewhere")
is(slurp(pb), slurp(copy), "byte-identical")

-- ---------------------------------------------------------------- text
local txt = dir .. "/model.pbtxt"
is(true, g:save(txt, {format = "graphdef-text"}), "save as text")
ok(slurp(txt):find('name: "x"', 1, true), "the file is text")
local g3 = assert(ge.load(txt))
same(opnames(g), opnames(g3), "text loads back (format sniffed)")
is(g:serialize(), g3:serialize("graphdef"), "same graph through text")
local g4 = assert(ge.parse(slurp(txt), "pbtxt"))
is(3, #g4, "ge.parse of text")
local g5 = assert(ge.parse(slurp(pb)))
is(3, #g5, "ge.parse sniffs binary")
ok(g:serialize("pbtxt"):find("node {", 1, true), "serialize('pbtxt')")
local g6 = assert(ge.load(pb, {format = "graphdef", tags = {"serve"}}))
is(3, #g6, "load with options")

-- ---------------------------------------------------------------- SavedModel
local sm = dir .. "/sm"
is(true, g:save(sm, {format = "savedmodel"}), "save as a SavedModel")
is(1, select("#", ge.load(sm)), "loading a directory returns one value")
local gs = ge.load(sm)
is("graph", ge.type(gs), "a SavedModel directory loads as a graph")
same(opnames(g), opnames(gs), "with the same ops")

-- ---------------------------------------------------------------- atomic
same({"copy.pb", "model.pb", "model.pbtxt", "sm"}, listdir(),
     "saves leave no temporary files")

-- ---------------------------------------------------------------- refusals
local before = slurp(pb)
g2:op("x").device = "/cpu:0"
local r, e = g2:save(pb)
is(nil, r, "saving over the loaded file is refused")
ok(type(e) == "string" and e:find("overwrite", 1, true),
   "the message says how to allow it: " .. tostring(e))
is(before, slurp(pb), "the input is untouched")
is(true, g2:save(pb, {overwrite = true}), "unless overwrite is set")
ok(slurp(pb) ~= before, "then it is replaced")
is("/cpu:0", assert(ge.load(pb)):op("x").device, "with the edit")
same({"copy.pb", "model.pb", "model.pbtxt", "sm"}, listdir(),
     "still no temporary files")

-- ---------------------------------------------------------------- errors
local m, merr = ge.load(dir .. "/missing.pb")
is(nil, m, "loading a missing file gives nil")
ok(type(merr) == "string" and merr:find("missing.pb", 1, true),
   "and a message naming it: " .. tostring(merr))
local junk = dir .. "/junk.pb"
local f = assert(io.open(junk, "wb"))
f:write("\255\255\255\255 this is not a model")
f:close()
local j, jerr = ge.load(junk)
is(nil, j, "loading garbage gives nil")
ok(type(jerr) == "string" and jerr:find("junk.pb", 1, true),
   "and a message naming the file: " .. tostring(jerr))
local s, serr = g:save(dir .. "/no/such/dir/x.pb")
is(nil, s, "saving into a missing directory gives nil")
is("string", type(serr), "and a message")
raises("unknown format 'bogus'", function() g:save(pb, {format = "bogus"}) end,
       "an unknown format is an error")
raises("unknown format 'bogus'", function() ge.load(pb, {format = "bogus"}) end,
       "for load too")
raises("bad argument #1 to 'load'", function() ge.load() end,
       "ge.load needs a path")
local pn, perr = ge.parse("garbage", "graphdef")
is(nil, pn, "ge.parse of garbage gives nil")
is("string", type(perr), "and a message")

-- ---------------------------------------------------------------- kinds
-- The third value says what failed, as io.open's third value does.
is("io", select(3, ge.load(dir .. "/missing.pb")),
   "a file that cannot be read: kind io")
is("notfound", select(3, ge.load(sm, {tags = "nosuchtag"})),
   "a SavedModel without the tag set asked for: kind notfound")
is("format", select(3, ge.load(junk)), "garbage: kind format")
is("format", select(3, ge.parse("garbage", "graphdef")),
   "ge.parse of garbage: kind format")
is("io", select(3, g:save(dir .. "/no/such/dir/x.pb")),
   "saving into a missing directory: kind io")
is("io", select(3, g2:save(pb)),
   "saving over the loaded file without overwrite: kind io")
is(3, select("#", ge.load(junk)), "a failure returns exactly three values")
is(1, select("#", ge.load(pb)), "a success returns one")
is("notfound", select(3, ge.checkpoint.open(dir .. "/nockpt")),
   "a missing checkpoint: kind notfound")

-- ---------------------------------------------------------------- options
-- Every function taking options checks their names.
raises("unknown option 'overwite'",
       function() g:save(pb, {overwite = true}) end,
       "a misspelt save option is an error")
ok(not io.open(pb .. ".tmp"), "... and nothing is written")
raises("unknown option 'tag'", function() ge.load(pb, {tag = "serve"}) end,
       "a misspelt load option is an error")
raises("unknown option 'tag'",
       function() ge.parse("", "graphdef-text", {tag = "serve"}) end,
       "for parse too")
raises("unknown option 'forced'",
       function()
         local h = ge.graph()
         h:add_op{type = "NoOp", name = "x"}
         h:remove_op("x", {forced = true})
       end,
       "remove_op checks its options")
raises("unknown option 'output'",
       function() ge.freeze(ge.graph(), {output = {"x"}}) end,
       "freeze checks its options")
raises("unknown option 'copyfrom'",
       function() ge.checkpoint.write(dir .. "/ck", {}, {copyfrom = 1}) end,
       "checkpoint.write checks its options")
is(true, g:save(pb, {overwrite = true, format = "graphdef"}),
   "the real names still work")

os.execute("rm -rf '" .. dir .. "'")
tap.done()

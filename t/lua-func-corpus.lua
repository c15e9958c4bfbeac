-- lua-func-corpus.lua: functions of a real TF2 SavedModel (bert1) from
-- Lua.  Renaming a function renames every mention of it in the saved
-- file (the library, the calls in the graph and in bodies, the
-- SavedObjectGraph); removing one that only the object graph names
-- leaves no mention; copying one and editing the copy leaves the
-- original's bytes alone.
local tap = require "tap"
local ok, is, same = tap.ok, tap.is, tap.same
local C = tap.corpus()
if not C then tap.skip_all("corpus not found (set GE_CORPUS)") end
local BERT = C .. "/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/bert1"

local dir = tap.tmpdir()
local slurp = tap.slurp
local function mentions(s, name)
  local n, i = 0, 1
  while true do
    local a, b = s:find(name, i, true)
    if not a then return n end
    -- a whole name: not followed by another name character
    if not s:sub(b + 1, b + 1):match("[%w_]") then n = n + 1 end
    i = b + 1
  end
end

local g = assert(ge.load(BERT))
is(92, #g:functions(), "bert1 has 92 functions")
local original = slurp(BERT .. "/saved_model.pb")

-- the function the serving signature's call runs
local call
for _, op in ipairs(g:ops()) do
  if op.type == "StatefulPartitionedCall" and op:attr("f").name:find("signature_wrapper") then
    call = op
  end
end
ok(call, "the serving call")
local old = call:attr("f").name
local fn = g:func(old)
same({call}, fn:callers(), "its caller is the top-level call")
local before = mentions(original, old)
ok(before >= 3, old .. " is mentioned " .. before .. " times")
fn:rename("serving_fn")
is("serving_fn", call:attr("f").name, "the call follows")
assert(g:save(dir .. "/renamed"))
local s = slurp(dir .. "/renamed/saved_model.pb")
is(0, mentions(s, old), "no mention of the old name is left")
is(before, mentions(s, "serving_fn"), "every mention has the new name")
local h = assert(ge.load(dir .. "/renamed"))
ok(h:func("serving_fn") and h:validate(), "reloaded: found and valid")

-- a function called from bodies: its callers are ops of those bodies
local inner = g:func("__inference_add_layer_call_and_return_conditional_losses_2459")
local sites = inner:callers()
is(5, #sites, "called from 5 sites")
local in_bodies = true
for _, op in ipairs(sites) do
  local owner
  for _, f in ipairs(g:functions()) do
    if f:graph() == op.graph then owner = f end
  end
  in_bodies = in_bodies and owner ~= nil and op.type:find("PartitionedCall") ~= nil
end
ok(in_bodies, "each a call op of a function body")
is(inner.name, sites[1]:attr("f").name, "whose f names it")

-- a function only the object graph names
local lonely = "__inference_bert_pretrainer_layer_call_fn_4601"
local lf = g:func(lonely)
same({}, lf:callers(), "no op calls " .. lonely)
ok(mentions(original, lonely) >= 2, "the object graph names it too")
local okr = pcall(g.remove_func, g, lonely)
ok(not okr, "refused while an object of the SavedObjectGraph stands for it")
g:remove_func(lonely, {force = true})
assert(g:save(dir .. "/removed"))
s = slurp(dir .. "/removed/saved_model.pb")
is(0, mentions(s, lonely), "removed: no mention left")
h = assert(ge.load(dir .. "/removed"))
is(91, #h:functions(), "reloaded: 91 functions")
ok(h:validate(), "and valid")

-- a copy edited; the original keeps its bytes
local g2 = assert(ge.load(BERT))
local src = g2:func("__inference_dropout_layer_call_and_return_conditional_losses_3545")
local cp = src:copy("dropout_copy")
local b = cp:graph()
b:add_op{type = "NoOp", name = "marker"}
same(src.inputs, cp.inputs, "the copy has the same signature")
is(#src:graph() + 1, #b, "and one op more")
assert(g2:save(dir .. "/copied"))
s = slurp(dir .. "/copied/saved_model.pb")
is(1, mentions(s, "marker"), "the edit is in the copy")
local h2 = assert(ge.load(dir .. "/copied"))
is(93, #h2:functions(), "reloaded: 93 functions")
ok(h2:func("dropout_copy"):graph():op("marker"), "the copy has the marker")
ok(not h2:func(src.name):graph():op("marker"), "the original does not")
ok(h2:validate(), "valid")

os.execute("rm -rf '" .. dir .. "'")
tap.done()

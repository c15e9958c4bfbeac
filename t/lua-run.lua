-- lua-run.lua: running models from Lua: ge.run with tensor values,
-- Lua lists and command-line strings as feeds, fetches by name, list or
-- the interface's outputs; ge.verify's figures and per-op result;
-- ge.load_npy and value:save_npy; the errors.
local tap = require "tap"
local ok, is, raises = tap.ok, tap.is, tap.raises
local F = "float32"

-- y = half * x + 2 with half given
local function model(half)
  local g = ge.graph()
  g:add_op{type = "Placeholder", name = "x",
           attrs = {dtype = F, shape = ge.shape{-1}}}
  g:add_op{type = "Const", name = "half",
           attrs = {dtype = F, value = ge.tensor_value(F, {}, {half})}}
  g:add_op{type = "Const", name = "two",
           attrs = {dtype = F, value = ge.tensor_value(F, {}, {2})}}
  g:add_op{type = "Mul", name = "mul", inputs = {"x", "half"}, attrs = {T = F}}
  g:add_op{type = "Add", name = "y", inputs = {"mul", "two"}, attrs = {T = F}}
  return g
end

local a, b = model(0.5), model(0.501)
local y = ge.run(a, {x = {1, 2, 5}}, "y")
is("value float32[3] {2.5, 3, 4.5}", tostring(y), "ge.run: a Lua list fed, one fetch")
is("float32", y.dtype, "the result is a tensor value: dtype")
tap.same({2.5, 3, 4.5}, y:totable(), ":totable()")
local two = ge.run(a, {x = ge.tensor_value(F, {2}, {0, 4})}, {"mul", "y:0"})
ok(#two == 2 and two[1][2] == 2 and two[2][2] == 4, "a tensor value fed, a list of fetches")
local all = ge.run(a, {x = "4:0..1"}, nil, {seed = 7})
ok(all.y and #all.y == 4, "a command-line string fed; no fetches: the outputs by key")
local again = ge.run(a, {x = "4:0..1"}, nil, {seed = 7})
ok(all.y == again.y, "the same seed, the same data")
local seeded = ge.run(a, {}, "y", {dim = 3})
is(3, #seeded, "an input not fed gets seeded data, unknown dims from dim")

raises("no input 'q'", function() ge.run(a, {q = {1}}, "y") end, "an unknown input raises")
raises("shape [2,1]", function() ge.run(a, {x = {{1}, {2}}}, "y") end,
       "a feed of the wrong shape raises")
raises("unknown option", function() ge.run(a, {}, "y", {sede = 1}) end,
       "options are checked")

-- .npy
local dir = tap.tmpdir()
ok(y:save_npy(dir .. "/y.npy"), "value:save_npy")
local back = assert(ge.load_npy(dir .. "/y.npy"))
ok(back == y, "ge.load_npy reads it back equal")
local v, err, kind = ge.load_npy(dir .. "/missing.npy")
ok(v == nil and err:find("missing.npy") and kind == "io", "a missing file: nil, message, io")
local f = io.open(dir .. "/bad.npy", "wb") f:write("not numpy") f:close()
v, err, kind = ge.load_npy(dir .. "/bad.npy")
ok(v == nil and err:find("not a .npy file") and kind == "format", "not .npy: " .. tostring(err))
local fed = ge.run(a, {x = "@" .. dir .. "/y.npy"}, "y")
is("value float32[3] {3.25, 3.5, 4.25}", tostring(fed), "a .npy file fed by its command-line string")

-- verify
local r = assert(ge.verify(a, a))
ok(r.ok and r.max_abs == 0 and r.outputs[1].name == "y", "a model against itself")
r = assert(ge.verify(a, b, {inputs = {x = {1, 2, 5}}, per_op = true}))
ok(not r.ok, "a Const changed by 1e-3 is caught")
local o = r.outputs[1]
ok(math.abs(o.max_abs - 0.005) < 1e-6 and o.outside == 3 and o.elements == 3,
   "the figures: max abs " .. o.max_abs)
ok(o.cosine > 0.9999 and o.max_rel > 0, "cosine and max rel")
is("half", r.per_op.first.op, "per op: the first op it changes")
is("Const", r.per_op.first.type, "and its type")
r = assert(ge.verify(a, b, {inputs = {x = {1, 2, 5}}, atol = 0.01}))
ok(r.ok, "within a looser atol")
local c = model(0.5)
c:op("y"):set_attr("T", F)
c:add_op{type = "Identity", name = "out", inputs = {"y"}, attrs = {T = F}}
r = assert(ge.verify(a, c, {map = {y = "out"}}))
ok(r.ok and r.outputs[1].name_b == "out", "map pairs outputs named otherwise")
v, err, kind = ge.verify(a, c, {outputs = {"nope"}})
ok(v == nil and err:find("nope") and kind == "notfound", "an output B lacks: nil, message")
is(nil, r.note, "no note when no random op is renamed")

-- a random op without a seed, renamed in B: the result's note says why
local function noisy(name)
  local g = model(0.5)
  g:add_op{type = "Const", name = "shape", attrs = {dtype = "int32",
           value = ge.tensor_value("int32", {1}, {3})}}
  g:add_op{type = "RandomUniform", name = name, inputs = {"shape"},
           attrs = {T = "int32", dtype = F}}
  g:add_op{type = "Add", name = "z", inputs = {"y", name}, attrs = {T = F}}
  return g
end
r = assert(ge.verify(noisy("noise"), noisy("a"), {inputs = {x = {1, 2, 5}}}))
ok(not r.ok and r.note and r.note:find("B's random op 'a' (RandomUniform)", 1, true),
   "a renamed unseeded random op: outside, with a note")

tap.done()

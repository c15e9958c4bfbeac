-- lua-func.lua: the function library from Lua: building a body with the
-- graph API (the three-op example), saving it as TensorFlow writes it
-- (`mul:z:0`), reloading, editing, copying, renaming and removing
-- functions with their references, callers and validation.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises
local F = "float32"

local dir = tap.tmpdir()
local slurp = tap.slurp

-- ---------------------------------------------------------------- build
local g = ge.graph()
same({}, g:functions(), "a new graph has no functions")
local fn = g:add_func{name = "times_c", inputs = {{name = "x", dtype = F}}}
is("function", ge.type(fn), "ge.type(function)")
is('function "times_c" (1 input, 0 outputs)', tostring(fn), "tostring")
is(fn, g:func("times_c"), "the same wrapper each time")
local b = fn:graph()
is("graph", ge.type(b), "the body is a graph")
is(b, fn:graph(), "the same body each time")
is("_Arg", b:op("x").type, "the input is an _Arg op")
local c = b:add_op{type = "Const", name = "c",
                   attrs = {dtype = F, value = ge.tensor_value(F, {}, {3})}}
local mul = b:add_op{type = "Mul", name = "mul",
                     inputs = {b:op("x"):output(0), c:output(0)},
                     attrs = {T = F}}
b:add_op{type = "_Retval", name = "z_RetVal", inputs = {mul:output(0)},
         attrs = {T = F, index = 0}}
same({{name = "x", dtype = F}}, fn.inputs, "inputs from the _Arg ops")
same({{name = "z", dtype = F}}, fn.outputs, "outputs from the _Retval ops")
ok(b:validate(), "the body validates")
ok(g:validate(), "the graph validates with its library")

-- a call from the top-level graph
local x = g:add_op{type = "Placeholder", name = "in",
                   attrs = {dtype = F, shape = ge.shape{2}}}
local call = g:add_op{type = "PartitionedCall", name = "call",
                      inputs = {x:output(0)},
                      attrs = {Tin = {F}, Tout = {F},
                               f = {name = "times_c"}}}
same({call}, fn:callers(), "callers lists the call op")

-- ---------------------------------------------------------------- on disk
local path = dir .. "/three.pb"
assert(g:save(path))
local bytes = slurp(path)
ok(bytes:find("mul:z:0", 1, true), "the ret map reads mul:z:0 on disk")
ok(bytes:find("c:output:0", 1, true), "mul's input reads c:output:0")
ok(not bytes:find("_Retval", 1, true), "no _Retval node is written")
ok(not bytes:find("_Arg", 1, true), "no _Arg node is written")

local g2 = assert(ge.load(path))
local f2 = assert(g2:func("times_c"))
same({{name = "x", dtype = F}}, f2.inputs, "reloaded inputs")
same({{name = "z", dtype = F}}, f2.outputs, "reloaded outputs")
local b2 = f2:graph()
local m2 = b2:op("mul")
is("x", m2.inputs[1].op.name, "mul reads the arg x")
is("c", m2.inputs[2].op.name, "and the const")
is("mul:0", b2:op("z_RetVal").inputs[1].name, "the _Retval reads mul")
-- edit: an Identity between mul and the result, and a renamed const
local id = b2:add_op{type = "Identity", name = "out", inputs = {m2:output(0)},
                     attrs = {T = F}}
b2:op("z_RetVal"):set_input(0, id:output(0))
b2:op("c").name = "three"
assert(g2:save(dir .. "/edited.pb"))
bytes = slurp(dir .. "/edited.pb")
ok(bytes:find("out:output:0", 1, true), "the ret map follows the edit")
ok(bytes:find("three:output:0", 1, true), "inputs follow a rename")
local g3 = assert(ge.load(dir .. "/edited.pb"))
local b3 = g3:func("times_c"):graph()
is("out", b3:op("z_RetVal").inputs[1].op.name, "reloaded: the edit is there")
ok(g3:validate(), "and validates")
-- an untouched function is saved as read, byte for byte
local g4 = assert(ge.load(dir .. "/edited.pb"))
local _ = g4:func("times_c"):graph()
assert(g4:save(dir .. "/same.pb"))
is(slurp(dir .. "/edited.pb"), slurp(dir .. "/same.pb"),
   "a body read but not edited is saved byte for byte")

-- ---------------------------------------------------------------- copy, rename, remove
local cp = f2:copy("times_c2")
is("times_c2", cp.name, "copy has the new name")
same(f2.inputs, cp.inputs, "with the same signature")
is(#f2:graph(), #cp:graph(), "and the same ops")
raises("already exists", function() f2:copy("times_c2") end)
g2:op("call").name = "call" -- no-op
f2:rename("scaled")
is("scaled", f2.name, "rename")
is(nil, (g2:func("times_c")), "the old name is gone")
local site = g2:op("call")
is("scaled", site:attr("f").name, "the call's f attr follows the rename")
same({site}, f2:callers(), "callers after the rename")
raises("calls it", function() g2:remove_func("scaled") end)
g2:remove_func("times_c2")
is(nil, (g2:func("times_c2")), "removed")
raises("was removed", function() return cp.name end)
g2:remove_func(f2, {force = true})
local okv, probs = g2:validate()
ok(not okv and table.concat(probs, "\n"):find("names function 'scaled', " ..
   "which is not in the library", 1, true),
   "validate reports the call to the removed function: " ..
   tostring(probs and probs[1]))

-- ---------------------------------------------------------------- validate
local h = ge.graph()
local r = h:add_func{name = "rec", inputs = {{name = "a", dtype = F}}}
local rb = r:graph()
local rc = rb:add_op{type = "PartitionedCall", name = "again",
                     inputs = {rb:op("a"):output(0)},
                     attrs = {Tin = {F}, Tout = {F}, f = {name = "rec"}}}
rb:add_op{type = "_Retval", name = "o_RetVal", inputs = {rc:output(0)},
          attrs = {T = F, index = 0}}
okv, probs = h:validate()
ok(not okv and probs[1]:find("function 'rec': node 'again' calls 'rec' " ..
   "recursively", 1, true), "recursion is reported: " .. tostring(probs[1]))
local w = h:add_func{name = "two", inputs = {{name = "a", dtype = F},
                                             {name = "b", dtype = F}}}
local p = h:add_op{type = "Placeholder", name = "p", attrs = {dtype = F}}
h:add_op{type = "PartitionedCall", name = "short", inputs = {p:output(0)},
         attrs = {Tin = {F}, Tout = {}, f = {name = "two"}}}
okv, probs = h:validate()
ok(table.concat(probs, "\n"):find("node 'short' (PartitionedCall) calls " ..
   "function 'two' with 1 input, but it takes 2", 1, true),
   "a wrong arity is reported")

-- a body can be cloned into a graph of its own, and closed and fetched
local k = ge.load(dir .. "/edited.pb")
local kb = k:func("times_c"):graph()
local copy = kb:clone()
is(#kb, #copy, "a body's clone has its ops")
is("three", copy:op("three").name, "and their names")
ok(copy:op("mul"):attr("T") == "float32", "and attrs")
kb:close()
is(#copy, #k:func("times_c"):graph(), "a closed body is fetched again")
-- g:clone() of a graph whose library was edited carries the edit
k:func("times_c"):graph():add_op{type = "NoOp", name = "extra"}
local kc = k:clone()
ok(kc:func("times_c"):graph():op("extra"), "the clone has the edited body")

-- a body problem is listed once, and not any more once fixed (the
-- library's bytes as read are not checked again)
local bad = ge.parse([[
library { function {
  signature { name: "f" input_arg { name: "x" type: DT_FLOAT }
              output_arg { name: "y" type: DT_FLOAT } }
  node_def { name: "id" op: "Identity" input: "x" }
  ret { key: "y" value: "id:output:0" } } }
]], "graphdef-text", {check = false})
okv, probs = bad:validate()
ok(not okv and #probs == 1 and probs[1]:find("function 'f': node 'id' " ..
   "(Identity): missing required attr 'T'", 1, true),
   "a body's missing attr is listed once: " .. tostring(probs and probs[1]))
bad:func("f"):graph():op("id"):set_attr("T", F)
ok(bad:validate(), "fixed in the body, the graph validates")

-- closing the root closes the bodies
local body = h:func("two"):graph()
h:close()
raises("closed", function() return #body end)

os.execute("rm -rf '" .. dir .. "'")
tap.done()

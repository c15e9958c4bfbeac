-- lua-inline.lua: ge.inline, ge.inline_all and the inline_functions
-- recipe on a graph whose functions call each other.
local tap = require "tap"
local T = require "testlib"
local ok, is, same = tap.ok, tap.is, tap.same

local FT = 'attr { key: "T" value { type: DT_FLOAT } } '
local function call(name, f, ins, ntin)
  local s = 'node { name: "' .. name .. '" op: "PartitionedCall" '
  for _, i in ipairs(ins) do s = s .. 'input: "' .. i .. '" ' end
  s = s .. 'attr { key: "f" value { func { name: "' .. f .. '" } } } '
  s = s .. 'attr { key: "Tin" value { list { ' ..
      string.rep("type: DT_FLOAT ", ntin) .. '} } } '
  return s .. 'attr { key: "Tout" value { list { type: DT_FLOAT } } } }\n'
end
local function fcall(name, f, ins, ntin)
  return (call(name, f, ins, ntin):gsub("^node ", "node_def "))
end

local LIB = [[
library {
  function {
    signature { name: "times3" input_arg { name: "a" type: DT_FLOAT }
                output_arg { name: "out" type: DT_FLOAT } }
    node_def { name: "c" op: "Const"
      attr { key: "dtype" value { type: DT_FLOAT } }
      attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 3 } } } }
    ]] .. fcall("inner", "mul2", {"a", "c:output:0"}, 2) .. [[
    ret { key: "out" value: "inner:output:0" }
  }
  function {
    signature { name: "mul2" input_arg { name: "p" type: DT_FLOAT }
                input_arg { name: "q" type: DT_FLOAT }
                output_arg { name: "z" type: DT_FLOAT } }
    node_def { name: "m" op: "Mul" input: "p" input: "q" ]] .. FT .. [[ }
    ret { key: "z" value: "m:z:0" }
  }
}
]]
-- a function that calls itself, only in the graphs of the error tests
local LOOP = [[
  function {
    signature { name: "loop" input_arg { name: "a" type: DT_FLOAT }
                output_arg { name: "o" type: DT_FLOAT } }
    ]] .. fcall("again", "loop", {"a"}, 1) .. [[
    ret { key: "o" value: "again:output:0" }
  }
}
]]

-- a function whose call of mul2 gives one input of two
local BADNEST = [[
  function {
    signature { name: "badnest" input_arg { name: "a" type: DT_FLOAT }
                output_arg { name: "o" type: DT_FLOAT } }
    ]] .. fcall("inner", "mul2", {"a"}, 1) .. [[
    ret { key: "o" value: "inner:output:0" }
  }
}
]]

local function graph(calls, extra)
  local lib = extra and LIB:gsub("}\n$", "") .. extra or LIB
  local s = 'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }\n'
    .. 'node { name: "k" op: "NoOp" }\n' .. calls
    .. 'node { name: "y" op: "Identity" input: "call" ' .. FT .. '}\n'
    .. 'node { name: "after" op: "NoOp" input: "^call" }\n' .. lib
  return assert(ge.parse(s, "graphdef-text"))
end
local CALL = call("call", "times3", {"x", "^k"}, 1)

-- ---------------------------------------------------------------- one level
local g = graph(CALL)
local added = assert(ge.inline(g:op("call")))
is("call/c,call/inner", T.names(added), "the body's ops, under the call's name")
is(nil, g:op("call"), "the call is gone")
is("call/inner", g:op("y"):input(0).op.name, "y reads what the body returns")
is("x:0", g:op("call/inner"):input(0).name, "the argument is the call's input")
is("k", T.names(g:op("call/c").control_inputs), "the call's control input on the Const")
is("", T.names(g:op("call/inner").control_inputs), "not on what reads the Const")
is("call/inner", T.names(g:op("after").control_inputs), "control consumers wait for the result")
is(6, #g, "x, k, call/c, call/inner, y, after: the call is replaced")

added = assert(ge.inline(g:op("call/inner")))
is("call/inner/m", T.names(added), "a nested call inlined by hand")
is("Mul", g:op("y"):input(0).op.type, "y reads the Mul")
local valid, problems = g:validate()
is(true, valid, "the graph validates")
if not valid then tap.diag(table.concat(problems, "\n")) end

-- ---------------------------------------------------------------- recursive
g = graph(CALL)
added = assert(ge.inline(g:op("call"), {recursive = true}))
is("call/c,call/inner/m", T.names(added), "recursive: the ops that remain")
is("x,call/c", T.names({g:op("call/inner/m"):input(0).op,
                                g:op("call/inner/m"):input(1).op}),
     "the Mul reads x and the Const")
g = graph(CALL .. call("call2", "times3", {"x"}, 1))
is(2 * 2, ge.inline_all(g), "inline_all counts nested calls")
for _, op in ipairs(g:ops()) do
  ok(op.type ~= "PartitionedCall", op.name .. " is no call")
end

-- ---------------------------------------------------------------- in a body
g = graph(CALL)
local body = g:func("times3"):graph()
added = assert(ge.inline(body:op("inner")))
is("inner/m", T.names(added), "a call inside a body, inlined into the body")
is("Mul", body:op("inner/m").type, "the Mul is in the body")
local valid, problems = g:validate()
is(true, valid, "graph and bodies validate")
if not valid then tap.diag(table.concat(problems, "\n")) end
local h = assert(ge.parse(g:serialize("graphdef"), "graphdef"))
local hb = h:func("times3"):graph()
ok(hb:op("inner/m") and hb:op("inner") == nil, "saved and parsed again, the body holds the Mul")
is("a", hb:op("inner/m"):input(0).op.name, "reading the argument")
is(true, (h:validate()), "and validates")

-- ---------------------------------------------------------------- recipe
g = graph(CALL)
T.run_recipe("inline_functions", g)
is(6, #g, "inline_functions: 5 ops, all inlined")
g = graph(CALL)
T.run_recipe("inline_functions", g, {"recursive=false"})
ok(g:op("call/inner") and g:op("call/inner").type == "PartitionedCall",
   "recursive=false keeps the nested call")

-- ---------------------------------------------------------------- errors
g = graph(call("call", "loop", {"x"}, 1), LOOP)
local n = #g
local r, err = ge.inline(g:op("call"), {recursive = true})
is(nil, r, "a function calling itself")
ok(err:find("function 'loop' calls itself (loop -> loop)", 1, true), err)
is(n, #g, "nothing changed")
g = graph(call("call", "badnest", {"x"}, 1), BADNEST)
n = #g
r, err = ge.inline(g:op("call"), {recursive = true})
ok(r == nil and err:find("op 'inner' (function 'mul2'): the call gives 1 inputs, the function takes 2", 1, true),
   "a nested call that does not match its function: " .. tostring(err))
ok(#g == n and g:op("call") ~= nil, "found before anything changed")
g = graph(call("call", "nothere", {"x"}, 1))
r, err = ge.inline(g:op("call"))
is(nil, r, "a missing function")
ok(err:find("op 'call' calls 'nothere', which is not in the function library", 1, true), err)
g = graph(call("call", "mul2", {"x"}, 1))
r, err = ge.inline(g:op("call"))
is(nil, r, "a wrong arity")
ok(err:find("op 'call' (function 'mul2'): the call gives 1 inputs, the function takes 2", 1, true), err)
tap.raises("gerewrite.op expected", function() ge.inline(g) end, "ge.inline wants an op")
tap.raises("unknown option 'recursve'", function() ge.inline(g:op("call"), {recursve = true}) end,
           "a misspelt option raises")
r, err = ge.inline(g:op("x"))
ok(r == nil and err:find("not a call", 1, true), "a Placeholder is no call")

tap.done()

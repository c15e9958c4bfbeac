-- cflow.lua: graphs with TF1 control flow, built the way tf.while_loop and
-- tf.cond build them (Enter/Merge/Switch/LoopCond/NextIteration/Exit, body
-- constants waiting on the loop's pivot), for the semantics tests.
--
--   local cflow = require "cflow"
--   local g = cflow.graph("nested")      -- a fresh graph
--   for name in cflow.names() do ... end -- every fixture, in order
local M = {}

local T = ' attr { key: "T" value { type: DT_FLOAT } }'

local function node(name, op, inputs, attrs)
  local s = {'node { name: "' .. name .. '" op: "' .. op .. '"'}
  for _, i in ipairs(inputs or {}) do s[#s + 1] = ' input: "' .. i .. '"' end
  return table.concat(s) .. (attrs or "") .. " }\n"
end

local function const(name, v, ctl)
  return node(name, "Const", ctl,
    ' attr { key: "dtype" value { type: DT_FLOAT } }' ..
    ' attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { }' ..
    ' float_val: ' .. v .. ' } } }')
end

local function placeholder(name, dims, dtype)
  local shape = {}
  for _, d in ipairs(dims) do shape[#shape + 1] = "dim { size: " .. d .. " }" end
  return node(name, "Placeholder", nil,
    ' attr { key: "dtype" value { type: ' .. (dtype or "DT_FLOAT") .. ' } }' ..
    ' attr { key: "shape" value { shape { ' .. table.concat(shape, " ") ..
    ' } } }')
end

local function merge(name, a, b)
  return node(name, "Merge", {a, b}, T .. ' attr { key: "N" value { i: 2 } }')
end

-- The default body: x + 1, the constant waiting on the pivot.
local function add_one(p, x)
  return const(p .. "add/y", 1, {"^" .. x}) ..
         node(p .. "add", "Add", {x, p .. "add/y"}, T), p .. "add"
end

-- while x < 10: x = body(x), in scope p (ending in "/"), reading tensor x.
-- body(p, pivot) returns the body's nodes and the next value's tensor.
-- Returns the nodes and the loop's Exit.
function M.loop(p, x, body)
  body = body or add_one
  local b, nxt = body(p, p .. "Identity")
  return table.concat{
    node(p .. "Enter", "Enter", {x}, T ..
         ' attr { key: "frame_name" value { s: "' .. p .. 'while_context" } }'),
    merge(p .. "Merge", p .. "Enter", p .. "NextIteration"),
    const(p .. "Less/y", 10, {"^" .. p .. "Merge"}),
    node(p .. "Less", "Less", {p .. "Merge", p .. "Less/y"}, T),
    node(p .. "LoopCond", "LoopCond", {p .. "Less"}),
    node(p .. "Switch", "Switch", {p .. "Merge", p .. "LoopCond"}, T),
    node(p .. "Identity", "Identity", {p .. "Switch:1"}, T),
    b,
    node(p .. "NextIteration", "NextIteration", {nxt}, T),
    node(p .. "Exit", "Exit", {p .. "Switch"}, T),
  }, p .. "Exit"
end

-- if pred then t(x) else f(x), in scope p; t and f as loop bodies.
function M.cond(p, x, pred, t, f)
  local tb, tv = (t or add_one)(p .. "true/", p .. "switch_t")
  local fb, fv = (f or function(_, v) return "", v end)(p .. "false/",
                                                        p .. "switch_f")
  return table.concat{
    node(p .. "Switch", "Switch", {x, pred}, T),
    node(p .. "switch_t", "Identity", {p .. "Switch:1"}, T),
    node(p .. "switch_f", "Identity", {p .. "Switch"}, T),
    tb, fb,
    merge(p .. "Merge", fv, tv),
  }, p .. "Merge"
end

local fixtures = {}
local order = {}
local function fixture(name, build)
  fixtures[name] = build
  order[#order + 1] = name
end

local INPUT = placeholder("x", {4})

fixture("single_loop", function()
  local l, exit = M.loop("while/", "x")
  return INPUT .. l .. node("out", "Identity", {exit}, T)
end)

-- the inner loop reads the outer pivot, its result feeds the outer body
fixture("nested_loops", function()
  local l, exit = M.loop("while/", "x", function(p, pivot)
    local inner, iexit = M.loop(p .. "while/", pivot)
    return inner .. const(p .. "add/y", 1, {"^" .. pivot}) ..
           node(p .. "add", "Add", {iexit, p .. "add/y"}, T), p .. "add"
  end)
  return INPUT .. l .. node("out", "Identity", {exit}, T)
end)

fixture("loop_in_cond", function()
  local c, m = M.cond("cond/", "x", "p", function(p, v)
    local l, exit = M.loop(p .. "while/", v)
    return l, exit
  end)
  return INPUT .. placeholder("p", {}, "DT_BOOL") .. c ..
         node("out", "Identity", {m}, T)
end)

fixture("cond_in_loop", function()
  local l, exit = M.loop("while/", "x", function(p, pivot)
    local pred = const(p .. "small/y", 5, {"^" .. pivot}) ..
                 node(p .. "small", "Less", {pivot, p .. "small/y"}, T)
    local c, m = M.cond(p .. "cond/", pivot, p .. "small")
    return pred .. c, m
  end)
  return INPUT .. l .. node("out", "Identity", {exit}, T)
end)

-- tf.while_loop bodies with control dependencies: a side op the next
-- value waits on (with_dependencies), constants on the pivot (as in
-- TensorFlow's nested_loop testdata)
fixture("loop_control_deps", function()
  local l, exit = M.loop("while/", "x", function(p, pivot)
    local b, v = add_one(p, pivot)
    return b ..
      node(p .. "side", "NoOp", {"^" .. pivot}) ..
      node(p .. "with_deps", "Identity", {v, "^" .. p .. "side"}, T),
      p .. "with_deps"
  end)
  return INPUT .. l .. node("out", "Identity", {exit}, T)
end)

-- a cond with no loop (TensorFlow's merge_without_loops)
fixture("merge_without_loops", function()
  local c, m = M.cond("cond/", "x", "p")
  return INPUT .. placeholder("p", {}, "DT_BOOL") .. c ..
         node("out", "Identity", {m}, T)
end)

-- a loop beside a scalar input (keep_prob) and an int32 op
fixture("loop_and_scalars", function()
  local l, exit = M.loop("while/", "x")
  return INPUT .. l .. placeholder("keep_prob", {}) ..
    node("scaled", "Mul", {exit, "keep_prob"}, T) ..
    placeholder("n", {}, "DT_INT32") ..
    node("n2", "AddV2", {"n", "n"}, ' attr { key: "T" value { type: DT_INT32 } }') ..
    node("out", "Identity", {"scaled"}, T)
end)

function M.text(name)
  return assert(fixtures[name], "no fixture " .. name)()
end

function M.graph(name)
  return assert(ge.parse(M.text(name), "graphdef-text"))
end

function M.names()
  local i = 0
  return function()
    i = i + 1
    return order[i]
  end
end

return M

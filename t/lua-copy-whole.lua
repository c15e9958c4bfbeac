-- lua-copy-whole.lua: ge.sgv(g) is the whole-graph view, made in C; the
-- clone x3 scenario of bench/clone3.lua (three ge.copy of the whole graph
-- in the same graph) gives the bytes of copies made through a Lua op
-- handler (which never takes the shared-attr road), and its copies behave
-- like any op afterwards.
local tap = require "tap"
local ok, is = tap.ok, tap.is

local dir = tap.tmpdir()
local function path(n) return dir .. "/" .. n end
local slurp = tap.slurp
-- whether graphs a and b save to the same bytes
local function same_saved(a, b)
  assert(a:save(path("a.pb"), {overwrite = true}))
  assert(b:save(path("b.pb"), {overwrite = true}))
  return slurp(path("a.pb")) == slurp(path("b.pb"))
end

local F = 'attr { key: "T" value { type: DT_FLOAT } } '
local SH = 'attr { key: "_output_shapes" value { list { shape { dim { size: 2 } } } } } '
local TXT = [[
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } ]] .. SH .. [[ }
node { name: "w" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "w/read" op: "Identity" input: "w" ]] .. F .. [[ attr { key: "_class" value { list { s: "loc:@w" } } } }
node { name: "y" op: "Mul" input: "x" input: "w/read" ]] .. F .. SH .. [[ device: "/cpu:0" }
node { name: "sp" op: "Split" input: "x" input: "y" ]] .. F .. [[ attr { key: "num_split" value { i: 2 } } }
node { name: "z" op: "AddN" input: "sp:1" input: "sp" input: "^w/read" ]] .. F .. [[ attr { key: "N" value { i: 2 } } }
]]
local f = assert(io.open(path("g.pbtxt"), "w")) f:write(TXT) f:close()
assert(assert(ge.load(path("g.pbtxt"))):save(path("g.pb")))

local g = assert(ge.load(path("g.pb")))
local whole, list = ge.sgv(g), ge.sgv(g:ops())
is(ge.type(whole), "view", "ge.sgv(g) is a view")
is(#whole.ops, #list.ops, "of every op")
for i, op in ipairs(list.ops) do
  if whole.ops[i] ~= op then ok(false, "op " .. i .. " differs") end
end
is(#whole.inputs, #list.inputs, "the same inputs (none)")
is(#whole.outputs, #list.outputs, "the same outputs")
for i, t in ipairs(list.outputs) do
  if whole.outputs[i] ~= t then ok(false, "output " .. i .. " differs") end
end

-- a Transformer; with `general` its op handler is a Lua function, which
-- takes the copy off the shared path
local function transformer(general)
  local tr = ge.Transformer()
  if general then
    tr.transform_op_handler = function(info, op, ...)
      return ge.copy_op_handler(info, op, ...)
    end
  end
  return tr
end

-- clone x3 the shared way and through a Lua op handler
local function clone3(general)
  local h = assert(ge.load(path("g.pb")))
  local v = ge.sgv(h)
  for k = 1, 3 do
    if general then
      transformer(true)(v, {dst_scope = "tower_" .. k})
    else
      ge.copy(v, {dst_scope = "tower_" .. k})
    end
  end
  return h
end
local a, b = clone3(false), clone3(true)
ok(same_saved(a, b),
   "clone x3: the bytes of copies made through a Lua op handler")
is(#a, 24, "four times the ops")
is(a:op("tower_2/z"):input(0).name, "tower_2/sp:1", "a copy reads the copies")
is(#a:op("tower_3/sp"):output(1):consumers(), 1,
   "the copies' consumers are known")
a:op("tower_1/w").name = "w1"
is(a:op("tower_1/w/read"):attr("_class")[1], "loc:@w1",
   "a copy's colocation follows a rename")
is(a:unique_name("tower_1/w"), "tower_1/w_1",
   "the renamed copy's old name stays taken")

-- The shared road again, where it could go wrong: copies of copies (whose
-- attr bytes are already shared), a copy whose attrs were edited since,
-- a source scope, and inputs whose shapes change (`_output_shapes`
-- recomputed or dropped down the chain).  Each series gives the bytes of
-- the same series through a Lua op handler.
local SH3 = 'attr { key: "_output_shapes" value { list { shape { dim { size: 3 } } } } } '
local f2 = assert(io.open(path("h.pbtxt"), "w"))
f2:write(TXT .. [[
node { name: "x3" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } ]] .. SH3 .. [[ }
node { name: "r" op: "Relu" input: "y" ]] .. F .. SH .. [[ }
node { name: "q" op: "Neg" input: "r" ]] .. F .. [[ }
node { name: "s" op: "Sigmoid" input: "r" ]] .. F .. SH .. [[ }
]])
f2:close()
assert(assert(ge.load(path("h.pbtxt"))):save(path("h.pb")))
local function series(general)
  local h = assert(ge.load(path("h.pb")))
  local function copy(v, o, input)
    if not general and not input then return ge.copy(v, o) end
    local tr = transformer(general)
    if input then
      tr.transform_external_input_handler = function() return input end
    end
    return tr(v, o)
  end
  local a = copy(ge.sgv(h), {dst_scope = "a"})
  local b = copy(a, {src_scope = "a", dst_scope = "b"})
  h:op("b/y"):set_attr("T", "float64")
  h:op("b/sp").name = "b/split"
  copy(b, {src_scope = "b", dst_scope = "c"})
  copy(ge.sgv(h), {dst_scope = "d"})
  -- r, q, s reading x3 (shape [3]) for y (shape [2])
  local chain = {}
  for _, n in ipairs{"r", "q", "s", "c/r", "c/q", "c/s"} do
    chain[#chain + 1] = h:op(n)
  end
  copy(ge.sgv(chain), {dst_scope = "e"}, h:op("x3"):output(0))
  return h
end
local sa, sb = series(false), series(true)
ok(same_saved(sa, sb),
   "copies of copies, edits, scopes, shapes: the bytes of the general road")
is(#sa, 10 + 10 + 10 + 10 + 40 + 6, "every copy made")
is(sa:op("e/r"):input(0).name, "x3:0", "the chain reads x3")
is(tostring(sa:op("e/s"):attr("_output_shapes")[1]), "shape [3]",
   "shapes follow the new input down the chain")
ok(sa:op("e/q"):attr("_output_shapes") == nil, "no shapes appear")
is(tostring(sa:op("e/c/s"):attr("_output_shapes")[1]), "shape [3]",
   "... in a copy of copies too")
is(sa:op("c/y"):attr("T"), "float64", "a copy of an edited copy keeps the edit")
ok(sa:op("c/split") ~= nil, "a copy of a renamed copy takes its name")

-- An op's control inputs are copied after the copy pass: one that a
-- handler gives it during the pass (after its inputs were read) is copied
-- too, whether the op's copy shared its attr bytes or not.
for _, general in ipairs{false, true} do
  local h = assert(ge.load(path("h.pb")))
  local tr = transformer(general)
  tr.transform_external_input_handler = function(info, t)
    if #h:op("r").control_inputs == 0 then
      ge.add_control_inputs(h:op("r"), h:op("x3"))
    end
    return t
  end
  tr(ge.sgv{h:op("r"), h:op("q")}, {dst_scope = "k"})
  local ci = h:op("k/r").control_inputs
  ok(#ci == 1 and ci[1] == h:op("x3"),
     "a control input given during the copy is copied" ..
     (general and " (general road)" or ""))
  ok(#h:op("k/q").control_inputs == 0, "... to that op alone")
end
os.execute("rm -rf '" .. dir .. "'")
tap.done()

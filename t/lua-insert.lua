-- lua-insert.lua: g:insert_after (a template of ops after many tensors)
-- and g:ops(types): the same graph, byte for byte, as add_op and
-- set_input per site; per-dtype templates; unread sites; loops; errors.
local tap = require "tap"
local ok, is, same = tap.ok, tap.is, tap.same
local F = "float32"

-- x -> c<i> (Relu) -> r<i> (Identity), c3 read by nobody, c4 float16,
-- c5 in a while loop's frame, c6 read twice by one op
local function build()
  local g = ge.graph()
  local x = g:add_op{type = "Placeholder", name = "x", attrs = {dtype = F},
                     device = "/cpu:0"}
  local h = g:add_op{type = "Placeholder", name = "h",
                     attrs = {dtype = "float16"}}
  for i = 1, 3 do
    local c = g:add_op{type = "Relu", name = "c" .. i, inputs = {x:output(0)},
                       attrs = {T = F}, device = "/gpu:" .. i}
    if i ~= 3 then
      g:add_op{type = "Identity", name = "r" .. i, inputs = {c:output(0)},
               attrs = {T = F}}
    end
  end
  g:add_op{type = "Const", name = "c1/noise/scale", attrs = {dtype = F}}
  local c4 = g:add_op{type = "Relu", name = "c4", inputs = {h:output(0)},
                      attrs = {T = "float16"}}
  g:add_op{type = "Identity", name = "r4", inputs = {c4:output(0)},
           attrs = {T = "float16"}}
  local e = g:add_op{type = "Enter", name = "enter", inputs = {x:output(0)},
                     attrs = {T = F, frame_name = "L"}}
  local c5 = g:add_op{type = "Relu", name = "c5", inputs = {e:output(0)},
                      attrs = {T = F}}
  g:add_op{type = "Identity", name = "r5", inputs = {c5:output(0)},
           attrs = {T = F}}
  local c6 = g:add_op{type = "Relu", name = "c6", inputs = {x:output(0)},
                      attrs = {T = F}}
  g:add_op{type = "Mul", name = "r6", inputs = {c6:output(0), c6:output(0)},
           attrs = {T = F}}
  return g
end

local function raises(pat, f, what)
  local okk, e = pcall(f)
  ok(not okk and tostring(e):find(pat, 1, true), what)
  if okk or not tostring(e):find(pat, 1, true) then
    tap.diag(tostring(e))
  end
end

local function template(dtype, seeds)
  return {
    {type = "Const", name = "/noise/scale", loop_anchor = true,
     attrs = {dtype = dtype, value = ge.tensor_value(dtype, {}, {0.5})}},
    {type = "Shape", name = "/noise/shape", inputs = {0},
     attrs = {T = dtype, out_type = "int32"}},
    {type = "RandomStandardNormal", name = "/noise/random", inputs = {2},
     attrs = {dtype = dtype, T = "int32", seed = 3},
     site_attrs = {seed2 = seeds}},
    {type = "Mul", name = "/noise/mul", inputs = {3, 1}, attrs = {T = dtype}},
    {type = "AddV2", name = "/noise/add", inputs = {0, 4}, attrs = {T = dtype}},
  }
end

-- the same by hand, site by site
local function by_hand(g, sites, seeds)
  local unread = {}
  for i, op in ipairs(sites) do
    local x = op:output(0)
    local readers = {}
    for _, c in ipairs(x:consumers()) do
      for slot, t in ipairs(c.inputs) do
        if t == x then readers[#readers + 1] = {c, slot - 1} end
      end
    end
    if #readers == 0 then
      unread[#unread + 1] = op
    else
      local dt = x.dtype
      local function add(spec)
        spec.name = g:unique_name(op.name .. spec.name)
        spec.device = op.device
        return g:add_op(spec)
      end
      local scale = add{type = "Const", name = "/noise/scale",
                        control_inputs = op.frame ~= "" and {op} or nil,
                        attrs = {dtype = dt,
                                 value = ge.tensor_value(dt, {}, {0.5})}}
      local shape = add{type = "Shape", name = "/noise/shape", inputs = {x},
                        attrs = {T = dt, out_type = "int32"}}
      local rnd = add{type = "RandomStandardNormal", name = "/noise/random",
                      inputs = {shape:output(0)},
                      attrs = {dtype = dt, T = "int32", seed = 3,
                               seed2 = seeds[i]}}
      local mul = add{type = "Mul", name = "/noise/mul",
                      inputs = {rnd:output(0), scale:output(0)},
                      attrs = {T = dt}}
      local out = add{type = "AddV2", name = "/noise/add",
                      inputs = {x, mul:output(0)}, attrs = {T = dt}}
      for _, r in ipairs(readers) do r[1]:set_input(r[2], out:output(0)) end
    end
  end
  return unread
end

local g, h = build(), build()
local sites = g:ops{"Relu"}
is(6, #sites, "g:ops{types}: the ops of a type")
same({"c1", "c2", "c3", "c4", "c5", "c6"},
     (function() local t = {} for i, o in ipairs(sites) do t[i] = o.name end
       return t end)(), "... in node order")
is(sites[1], g:op("c1"), "... the same wrappers as elsewhere")
is(2, #g:ops{"Enter", "Mul"}, "two types")
is(1, #g:ops("Enter"), "a type given as a string")
is(0, #g:ops{}, "no types: no ops")
local seeds = {}
for i = 1, #sites do seeds[i] = 10 * i end
local r = g:insert_after(sites, {float32 = template(F, seeds),
                                 float16 = template("float16", seeds)},
                         {skip_unread = true, outputs = true})
is(5, r.inserted, "five sites got their ops")
same({g:op("c3")}, r.skipped, "the unread site is skipped, as given")
is(false, r.outputs[3], "... and has no output")
is("c1/noise/add:0", r.outputs[1].name, "names under the site's op")
ok(g:op("c1/noise/scale_1") and g:op("c1/noise/scale_1").device == "/gpu:1",
   "made unique as unique_name does; the site op's device")
is(r.outputs[1], g:op("r1").inputs[1], "the reader reads the output")
same({r.outputs[6], r.outputs[6]}, g:op("r6").inputs,
     "both slots of a reader reading the site twice")
is(g:op("c5"), g:op("c5/noise/scale").control_inputs[1],
   "in a loop, the Const waits on the site's op")
is(0, #g:op("c2/noise/scale").control_inputs, "outside loops it does not")
is(40, (g:op("c4/noise/random"):attr("seed2")), "a per-site attr")
is("float16", (g:op("c4/noise/add"):attr("T")), "the site's dtype template")
local unread = by_hand(h, h:ops{"Relu"}, seeds)
same({h:op("c3")}, unread, "by hand: the same site unread")
ok(g:serialize() == h:serialize(),
   "the same bytes as add_op and set_input per site")

-- sites by type and seeds by position: no wrapper per op
local g5, h5 = build(), build()
r = g5:insert_after({types = "Relu"},
                    {float32 = template(F, "position"),
                     float16 = template("float16", "position")},
                    {skip_unread = true})
same({g5:op("c3")}, r.skipped, "{types = ...}: a skipped site comes as its op")
by_hand(h5, h5:ops{"Relu"}, {1, 2, 3, 4, 5, 6})
ok(g5:serialize() == h5:serialize(),
   "{types = ...} and \"position\": the same bytes as by hand")

-- per-site values of other kinds: a string per site
local g6 = build()
r = g6:insert_after({g6:op("c1"), g6:op("c2")}, {{
  type = "Print", name = "__print__", inputs = {0, 0},
  attrs = {T = F, U = {F}}, attr_kinds = {U = "list(type)"},
  site_attrs = {message = {"first", "second"}, first_n = {3, 4}},
}})
ok(r.inserted == 2 and g6:op("c2__print__"), "a suffix name without '/'")
is("second", (g6:op("c2__print__"):attr("message")), "a string per site")
is(3, (g6:op("c1__print__"):attr("first_n")), "an int per site")
raises("must be a list", function()
  g6:insert_after({g6:op("c1")}, {{type = "Print", inputs = {0, 0},
                   site_attrs = {message = "position"}}}) end,
  "\"position\" for a string attr")

-- the new ops share their attr bytes: editing one leaves the others,
-- a clone keeps them, a rename reaches their colocation attrs
local g7 = build()
g7:op("h").name = "h0" -- a rename builds the colocation index
g7:insert_after({types = "Relu"}, {float32 = {
  {type = "Identity", name = "/id", inputs = {0},
   attrs = {T = F, _class = {"loc:@x"}}}},
  float16 = {{type = "Identity", name = "/id", inputs = {0},
              attrs = {T = "float16"}}}})
local c7 = g7:clone()
ok(c7:serialize() == g7:serialize(), "a clone writes the same bytes")
g7:op("c1/id"):set_attr("T", "int32")
is("int32", (g7:op("c1/id"):attr("T")), "an attr of one new op changed")
is("float32", (g7:op("c2/id"):attr("T")), "... the others keep theirs")
is("float32", (c7:op("c1/id"):attr("T")), "... and so does the clone")
g7:op("x").name = "x2"
same({"loc:@x2"}, (g7:op("c2/id"):attr("_class")),
     "a rename updates the new ops' colocation")
local e = ge.graph()
local p0 = e:add_op{type = "Placeholder", name = "p", attrs = {dtype = F}}
e:add_op{type = "Identity", name = "q", inputs = {p0:output(0)},
         attrs = {T = F}}
e:insert_after({p0}, {{type = "Identity", name = "/id", inputs = {0},
                       attrs = {T = F}}})
ok(e:clone():serialize() == e:serialize(), "the same in a new graph")

-- names handed out stay taken when their ops go, as with unique_name
local g8, h8 = build(), build()
local t8 = {{type = "Identity", name = "/id", inputs = {0}, attrs = {T = F}}}
g8:insert_after({g8:op("c1"), g8:op("c2")}, t8)
for _, site in ipairs{h8:op("c1"), h8:op("c2")} do
  local x = site:output(0)
  local readers = x:consumers()
  local id = h8:add_op{type = "Identity", inputs = {x}, attrs = {T = F},
                       name = h8:unique_name(site.name .. "/id"),
                       device = site.device}
  for _, r in ipairs(readers) do
    for slot, t in ipairs(r.inputs) do
      if t == x then r:set_input(slot - 1, id:output(0)) end
    end
  end
end
for _, gg in ipairs{g8, h8} do
  gg:remove_op(gg:op("c1/id"), {force = true})
  gg:op("c2/id").name = "moved"
end
is(h8:unique_name("c1/id"), g8:unique_name("c1/id"),
   "a removed op's name: as after add_op")
is(h8:unique_name("c1/ID"), g8:unique_name("c1/ID"),
   "... whatever the case")
is(h8:unique_name("c2/id"), g8:unique_name("c2/id"),
   "a renamed op's old name: as after add_op")
is(h8:unique_name("c1/noise/x"), g8:unique_name("c1/noise/x"),
   "a name no op had")

-- a site with no template: nothing changes
local g2 = build()
local n = #g2
local res, msg, site, dtype = g2:insert_after(g2:ops{"Relu"},
                                              {float32 = template(F, seeds)})
is(nil, res, "a site of a dtype without template")
is("'c4:0' is float16: the template has no case for it", msg, "message")
is(g2:op("c4"), site, "the site as given")
is("float16", dtype, "its dtype")
is(n, #g2, "nothing changed")
res, msg, site = g2:insert_after({types = {"Relu"}},
                                 {float32 = template(F, seeds)})
ok(res == nil and site == g2:op("c4"), "{types = ...}: the site as its op")
local p = g2:add_op{type = "Mystery", name = "m", inputs = {"x:0"},
                    attrs = {T = "int32"}, attr_kinds = {T = "type"}}
res, msg, site, dtype = g2:insert_after({p}, {float32 = template(F, seeds)})
ok(res == nil and msg == "the dtype of 'm:0' is unknown" and dtype == nil,
   "an unknown dtype")
res, msg, site, dtype = g2:insert_after({p}, {int32 = template(F, seeds)},
                                        {dtype_attr = "T"})
ok(res and res.inserted == 1 and g2:op("m/noise/add"),
   "dtype_attr: the op's type attr decides; an unread site gets its ops "
   .. "without skip_unread")

-- misuse raises, and nothing changed
local g3 = build()
n = #g3
local c1 = g3:op("c1")
raises("given twice", function()
  g3:insert_after({c1, c1:output(0)}, template(F, seeds)) end,
  "a site given twice")
raises("not the site (0) nor an earlier op", function()
  g3:insert_after({c1}, {{type = "Identity", inputs = {2}}}) end,
  "an input naming a later op")
raises("field 'type' is required", function()
  g3:insert_after({c1}, {{name = "x"}}) end, "a spec without type")
raises("one value per site", function()
  g3:insert_after({c1, g3:op("c2")},
                  {{type = "Identity", site_attrs = {seed = {1}}}}) end,
  "a short per-site list")
raises("given twice", function()
  g3:insert_after({c1}, {{type = "Identity", attrs = {seed = 1},
                          site_attrs = {seed = {1}}}}) end,
  "an attr both fixed and per site")
raises("template output: an op of the template (1 to 1)", function()
  g3:insert_after({c1}, {{type = "Identity", inputs = {0}}, output = 2}) end,
  "an output that is no op of the template")
raises("unknown option", function()
  g3:insert_after({c1}, {{type = "Identity"}}, {skip = true}) end,
  "an unknown option")
local nop = g3:add_op{type = "NoOp", name = "nop"}
local none = g3:add_op{type = "Unpack", name = "none", inputs = {"x:0"},
                       attrs = {T = F, num = 0, axis = 0}}
n = #g3
raises("no tensor 'nop:0'", function()
  g3:insert_after({nop}, template(F, seeds)) end,
  "an op without outputs as a site")
raises("no tensor 'none:0'", function()
  g3:insert_after({c1, none}, template(F, seeds)) end,
  "an op whose OpDef gives no output for its attrs")
is(n, #g3, "nothing changed")

-- fixed tensors, {k, i} refs, control inputs and the output field
local g4 = build()
r = g4:insert_after({g4:op("c1"), g4:op("c2")}, {
  {type = "Unpack", name = "/parts", inputs = {0},
   attrs = {T = F, num = 2, axis = 0}},
  {type = "AddN", name = "/sum", inputs = {{1, 1}, "x:0"},
   control_inputs = {"enter", 0}, attrs = {T = F, N = 2}},
  {type = "NoOp", name = "/done", control_inputs = {2}, device = ""},
  output = 2,
}, {outputs = true})
is("c1/sum:0", r.outputs[1].name, "the output field")
same({g4:tensor("c1/parts:1"), g4:tensor("x:0")}, g4:op("c1/sum").inputs,
     "{k, i} and a fixed tensor")
same({g4:op("enter"), g4:op("c1")}, g4:op("c1/sum").control_inputs,
     "control inputs on an op of the graph and on the site's op")
is("", g4:op("c2/done").device, "a device given in the template")
is(g4:op("c2/sum"), g4:op("c2/done").control_inputs[1],
   "a control input on an op of the template")


-- frames: an op on a cycle that no Enter opens is in no frame (-1), and
-- the anchor waits on it as in a loop; an op read before it is listed is
-- in the root frame.  Neither graph is in node order: the frames' walk
-- decides, as it does for c5 above.
local g5 = ge.graph()
local x5 = g5:add_op{type = "Placeholder", name = "x", attrs = {dtype = F}}
local a5 = g5:add_op{type = "Relu", name = "a", inputs = {x5:output(0)},
                     attrs = {T = F}}
local b5 = g5:add_op{type = "Relu", name = "b", inputs = {a5:output(0)},
                     attrs = {T = F}}
a5:set_input(0, b5:output(0))
local d5 = g5:add_op{type = "Relu", name = "d", inputs = {x5:output(0)},
                     attrs = {T = F}}
local e5 = g5:add_op{type = "Relu", name = "e", inputs = {x5:output(0)},
                     attrs = {T = F}}
d5:set_input(0, e5:output(0))
g5:add_op{type = "Identity", name = "rd", inputs = {d5:output(0)},
          attrs = {T = F}}
r = g5:insert_after({a5, d5}, template(F, {1, 2}))
is(2, r.inserted, "sites on a cycle and out of node order")
same({a5}, g5:op("a/noise/scale").control_inputs,
     "an op on a cycle nothing enters: the anchor waits on it")
same({}, g5:op("d/noise/scale").control_inputs,
     "an op after its reader in node order: in the root frame, no anchor")
-- in node order without an Enter: no walk, no anchor
local g6 = ge.graph()
local x6 = g6:add_op{type = "Placeholder", name = "x", attrs = {dtype = F}}
local c6 = g6:add_op{type = "Relu", name = "c", inputs = {x6:output(0)},
                     attrs = {T = F}}
g6:add_op{type = "Identity", name = "r", inputs = {c6:output(0)},
          attrs = {T = F}}
g6:insert_after({c6}, template(F, {1}))
same({}, g6:op("c/noise/scale").control_inputs, "in node order: no anchor")


-- uses kept right when a template reads fixed tensors of sites: of its
-- own site's op, and of a later site (whose readers move, not the new
-- op reading it); every input is on its producer's consumers and back
local function wired(g)
  for _, o in ipairs(g:ops()) do
    for _, t in ipairs(o.inputs) do
      local found = false
      for _, c in ipairs(t:consumers()) do found = found or c == o end
      if not found then return false, o.name .. " <- " .. t.name end
    end
    for _, x in ipairs(o.outputs) do
      for _, c in ipairs(x:consumers()) do
        local found = false
        for _, t in ipairs(c.inputs) do found = found or t == x end
        if not found then return false, c.name .. " -> " .. x.name end
      end
    end
  end
  return true
end
local function build7()
  local g = ge.graph()
  local x = g:add_op{type = "Placeholder", name = "x", attrs = {dtype = F}}
  local c1 = g:add_op{type = "Relu", name = "c1", inputs = {x:output(0)},
                      attrs = {T = F}}
  local c2 = g:add_op{type = "Relu", name = "c2", inputs = {x:output(0)},
                      attrs = {T = F}}
  g:add_op{type = "Identity", name = "r1", inputs = {c1:output(0)},
           attrs = {T = F}}
  g:add_op{type = "Mul", name = "r2", inputs = {c2:output(0), c1:output(0)},
           attrs = {T = F}}
  return g
end
local g7 = build7()
g7:insert_after({g7:op("c1"), g7:op("c2")},
                {{type = "AddV2", name = "/a", inputs = {0, "c2:0"},
                  attrs = {T = F}},
                 {type = "AddV2", name = "/b", inputs = {1, "c1:0"},
                  attrs = {T = F}}})
local okw, why = wired(g7)
ok(okw, "fixed tensors of sites: inputs and consumers agree")
if not okw then tap.diag(why) end
same({g7:tensor("c2/b:0"), g7:tensor("c1/b:0")}, g7:op("r2").inputs,
     "the readers read the outputs")
same({g7:tensor("c1:0"), g7:tensor("c2:0")}, g7:op("c1/a").inputs,
     "a new op reading a later site keeps reading it")
local h7 = build7()
local rds = {}
for _, nm in ipairs{"c1", "c2"} do
  local x = h7:op(nm):output(0)
  local rd = {}
  for _, c in ipairs(x:consumers()) do
    for slot, t in ipairs(c.inputs) do
      if t == x then rd[#rd + 1] = {c, slot - 1} end
    end
  end
  rds[nm] = rd
end
for _, nm in ipairs{"c1", "c2"} do
  local x, rd = h7:op(nm):output(0), rds[nm]
  local a = h7:add_op{type = "AddV2", name = nm .. "/a",
                      inputs = {x, h7:tensor("c2:0")}, attrs = {T = F}}
  local b = h7:add_op{type = "AddV2", name = nm .. "/b",
                      inputs = {a:output(0), h7:tensor("c1:0")},
                      attrs = {T = F}}
  for _, r in ipairs(rd) do r[1]:set_input(r[2], b:output(0)) end
end
ok(g7:serialize() == h7:serialize(), "... the same bytes as by hand")

tap.done()

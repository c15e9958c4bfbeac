-- hostile-gen.lua: writes the crafted models of t/hostile.sh into the
-- directory arg[1], byte by byte (protobuf wire format by hand), so that
-- nothing but this script is committed.
local dir = assert(arg[1], "usage: hostile-gen.lua DIR")

local function varint(n)
  local t = {}
  repeat
    local b = n % 128
    n = n // 128
    if n > 0 then b = b + 128 end
    t[#t + 1] = string.char(b)
  until n == 0
  return table.concat(t)
end
local function tag(f, wt) return varint(f * 8 + wt) end
local function ld(f, s) return tag(f, 2) .. varint(#s) .. s end
local function vi(f, n) return tag(f, 0) .. varint(n) end
local function f32(f, x) return tag(f, 5) .. string.pack("<f", x) end
local function write(name, s)
  local f = assert(io.open(dir .. "/" .. name, "wb"))
  f:write(s)
  f:close()
end
local function mkdir(p) assert(os.execute("mkdir -p '" .. dir .. "/" .. p .. "'")) end

-- NodeDef{name, op, input*, attr{key, AttrValue}*}
local function attr(key, value) return ld(5, ld(1, key) .. ld(2, value)) end
local function node(name, op, inputs, attrs)
  local s = ld(1, name) .. ld(2, op)
  for _, i in ipairs(inputs or {}) do s = s .. ld(3, i) end
  return s .. (attrs or "")
end
local DT_FLOAT = 1
local function shape(dims)
  local s = ""
  for _, d in ipairs(dims) do s = s .. ld(2, vi(1, d)) end
  return s
end
-- AttrValue{type = 6}, AttrValue{tensor = 8}
local function attr_type(dt) return vi(6, dt) end
local function attr_tensor(dt, dims, vals)
  local t = vi(1, dt) .. ld(2, shape(dims))
  for _, v in ipairs(vals) do t = t .. f32(5, v) end
  return ld(8, t)
end
local function const(name, dims, vals)
  return node(name, "Const", nil,
              attr("dtype", attr_type(DT_FLOAT)) ..
              attr("value", attr_tensor(DT_FLOAT, dims, vals)))
end
local function graphdef(nodes)
  local s = ""
  for _, n in ipairs(nodes) do s = s .. ld(1, n) end
  return s .. ld(4, vi(1, 1))
end

-- a small graph: x -> Identity
local small = graphdef{
  node("x", "Placeholder", nil, attr("dtype", attr_type(DT_FLOAT))),
  const("w", {2}, {1, 2}),
  node("y", "Mul", {"x", "w"}, attr("T", attr_type(DT_FLOAT))),
}
write("small.pb", small)

-- case 1: a SavedModel whose signature_def entry has a bad length inside
local meta_info = ld(1, ld(4, "serve"))
local good_sig = ld(5, ld(1, "serving_default") .. ld(2, ld(3, "predict")))
local bad_entry = "\x0a\x40serving"          -- key claims 64 bytes, has 7
local function savedmodel(sigs)
  return vi(1, 1) .. ld(2, meta_info .. ld(2, small) .. sigs)
end
mkdir("sig_ok")
write("sig_ok/saved_model.pb", savedmodel(good_sig))
mkdir("sig_flip")
write("sig_flip/saved_model.pb", savedmodel(good_sig .. ld(5, bad_entry)))

-- case 2: AttrValue.func nested 3,000 deep
local v = attr_type(DT_FLOAT)
for _ = 1, 3000 do
  -- AttrValue{func = NameAttrList{name = "f", attr = {a = v}}}
  v = ld(10, ld(1, "f") .. ld(2, ld(1, "a") .. ld(2, v)))
end
write("deep.pb", graphdef{node("deep", "NoOp", nil, attr("f", v))})
-- nesting TensorFlow itself accepts (under 100) still loads
local v50 = attr_type(DT_FLOAT)
for _ = 1, 20 do v50 = ld(10, ld(1, "f") .. ld(2, ld(1, "a") .. ld(2, v50))) end
write("nested20.pb", graphdef{node("n20", "NoOp", nil, attr("f", v50))})

-- case 5: a Const of shape [1,1,1,5e7] with one float_val, folded
write("expand.pb", graphdef{
  node("x", "Placeholder", nil, attr("dtype", attr_type(DT_FLOAT))),
  const("w", {1, 1, 1, 50000000}, {2}),
  node("conv", "Conv2D", {"x", "w"},
       attr("T", attr_type(DT_FLOAT)) ..
       attr("strides", ld(1, vi(3, 1) .. vi(3, 1) .. vi(3, 1) .. vi(3, 1))) ..
       attr("padding", ld(2, "SAME"))),
  const("s", {}, {3}),
  node("mul", "Mul", {"conv", "s"}, attr("T", attr_type(DT_FLOAT))),
})

-- case 9: truncated binary files of the three kinds
local big = {}
for i = 1, 12 do big[#big + 1] = const("c" .. i, {4}, {1, 2, 3, 4}) end
big[#big + 1] = const("w", {8}, {1, 2, 3, 4, 5, 6, 7, 8})
local gd = graphdef(big)
local cut = #gd - 30
write("trunc_graph.pb", gd:sub(1, cut))
local meta = meta_info .. ld(2, gd)
write("trunc_meta.meta", meta:sub(1, #meta - 30))
mkdir("trunc_sm")
local sm = vi(1, 1) .. ld(2, meta)
write("trunc_sm/saved_model.pb", sm:sub(1, #sm - 30))

-- case 10: an attr entry with a bad wire type (a group start, 3)
write("badwire.pb", graphdef{
  node("x", "Placeholder", nil, attr("dtype", attr_type(DT_FLOAT))),
  node("bw", "Identity", {"x"}, ld(5, ld(1, "T") .. tag(2, 3) .. "\x00")),
})
-- the sniffer on a 4-byte input
write("four.bin", "\x20\x01\x18\x01")

-- case 3: TensorFlow.js weights outside the model
local function tfjs(name, paths, nweights)
  local p = {}
  for i = 1, #paths do p[i] = string.format("%q", paths[i]) end
  local json = string.format([[
{"format": "graph-model", "generatedBy": "t", "convertedBy": "t",
 "modelTopology": {"node": [
   {"name": "w", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"},
     "value": {"tensor": {"dtype": "DT_FLOAT",
       "tensorShape": {"dim": [{"size": "%d"}]}}}}}],
  "versions": {"producer": 1}},
 "weightsManifest": [{"paths": [%s],
   "weights": [{"name": "w", "shape": [%d], "dtype": "float32"}]}]}
]], nweights, table.concat(p, ", "), nweights)
  mkdir(name)
  write(name .. "/model.json", json)
end
tfjs("tfjs_ok", {"group1-shard1of1.bin"}, 2)
write("tfjs_ok/group1-shard1of1.bin", string.pack("<ff", 1, 2))
tfjs("tfjs_escape", {"../../../../../../../../etc/passwd"}, 2)
tfjs("tfjs_zero", {"../../../../../../../../dev/zero"}, 2)
tfjs("tfjs_abs", {"/etc/passwd"}, 2)
local many = {}
for i = 1, 3000 do many[i] = "group1-shard1of1.bin" end
tfjs("tfjs_many", many, 2)
write("tfjs_many/group1-shard1of1.bin", string.pack("<ff", 1, 2))
-- a symlink that leads out of the model
tfjs("tfjs_link", {"shard.bin"}, 2)
os.execute("ln -s /etc/passwd '" .. dir .. "/tfjs_link/shard.bin'")

-- case 10: a GraphDef field (versions) between nodes, alone and in a
-- MetaGraphDef
local n1 = ld(1, node("a", "NoOp"))
local n2 = ld(1, node("b", "NoOp"))
local mid = n1 .. ld(4, vi(1, 7)) .. n2
write("between.pb", mid)
write("between.meta", meta_info .. ld(2, mid))

-- round 3 (doc/hostile-input.md): models that make the evaluator, shape
-- inference and folding work, each a few hundred bytes
local function attr_i(n) return vi(3, n) end
local DT_INT32 = 3
local function const_i32(name, dims, vals)
  local t = vi(1, DT_INT32) .. ld(2, shape(dims))
  for _, v in ipairs(vals) do t = t .. vi(7, v) end
  return node(name, "Const", nil,
              attr("dtype", attr_type(DT_INT32)) .. attr("value", ld(8, t)))
end
local T = attr("T", attr_type(DT_FLOAT))
-- 300 Splits of a million outputs each
local sp = {const("x", {1}, {1}), const_i32("axis", {}, {0})}
for i = 1, 300 do
  sp[#sp + 1] = node("s" .. i, "Split", {"axis", "x"},
                     T .. attr("num_split", attr_i(1000000)))
end
write("r3_splits.pb", graphdef(sp))
-- a chain of 40 Adds over a splat of 2^21 floats
local ch = {const("c", {1 << 21}, {1})}
local prev = "c"
for i = 1, 40 do
  ch[#ch + 1] = node("a" .. i, "AddV2", {prev, "c"}, T)
  prev = "a" .. i
end
write("r3_chain.pb", graphdef(ch))
-- a MatMul of two 8192x8192 splats (2^39 multiply-adds)
write("r3_matmul.pb", graphdef{
  const("a", {8192, 8192}, {1}), const("b", {8192, 8192}, {2}),
  node("mm", "MatMul", {"a", "b"}, T)})
-- a Conv2D of 2.4e9 multiply-adds over 32 MB splats
write("r3_conv.pb", graphdef{
  const("x", {1, 256, 256, 64}, {1}), const("w", {3, 3, 64, 64}, {1}),
  node("conv", "Conv2D", {"x", "w"},
       T .. attr("strides", ld(1, vi(3, 1) .. vi(3, 1) .. vi(3, 1) .. vi(3, 1))) ..
       attr("padding", ld(2, "SAME")))})

-- seeds.lua: seed corpora of the fuzz targets, from the project's own
-- fixtures: doc/examples/small_cnn.pbtxt in every format, the crafted
-- models of t/hostile-gen.lua, a TensorFlow.js model and a checkpoint.
--   gerewrite fuzz/seeds.lua SRCDIR OUTDIR
local src, out = assert(arg[1]), assert(arg[2])
local function sh(c) assert(os.execute(c), c) end
local function read(p)
  local f = assert(io.open(p, "rb")); local s = f:read("a"); f:close(); return s
end
local function write(p, s)
  local f = assert(io.open(p, "wb")); f:write(s); f:close()
end
local n = 0
local function seed(target, bytes)
  n = n + 1
  write(string.format("%s/%s/seed-%03d", out, target, n), bytes)
end
local tmp = out .. "/work"
for _, t in ipairs{"binary", "text", "tfjs", "bundle", "roundtrip", "eval",
                   "work"} do
  sh("mkdir -p '" .. out .. "/" .. t .. "'")
end

-- the example model, binary and text, in the three message kinds
local g = assert(ge.load(src .. "/doc/examples/small_cnn.pbtxt"))
local kinds = {
  {"graphdef", 1, "graphdef-text"}, {"meta", 2, "meta-text"},
  {"savedmodel", 3, "savedmodel-text"},
}
for _, k in ipairs(kinds) do
  local b = assert(g:serialize(k[1]))
  seed("binary", string.char(k[2]) .. b)
  seed("roundtrip", b)
  local t = assert(g:serialize(k[3]))
  seed("text", string.char(k[2] - 1) .. t)
  seed("roundtrip", t)
end

-- the crafted models of the hostile-input tests
sh("'" .. arg[-1] .. "' '" .. src .. "/t/hostile-gen.lua' '" .. tmp .. "' >/dev/null 2>&1")
for _, f in ipairs{"small.pb", "nested20.pb", "badwire.pb", "between.pb",
                   "between.meta", "four.bin", "trunc_graph.pb",
                   "trunc_meta.meta", "sig_ok/saved_model.pb",
                   "sig_flip/saved_model.pb"} do
  local b = read(tmp .. "/" .. f)
  seed("binary", "\0" .. b)
  seed("roundtrip", b)
end
seed("tfjs", read(tmp .. "/tfjs_ok/model.json"))
seed("tfjs", read(tmp .. "/tfjs_many/model.json"))

-- a checkpoint: index length, index, data shard
local F = "float32"
assert(ge.checkpoint.write(tmp .. "/ckpt", {
  w = ge.tensor_value(F, {2, 3}, {1, 2, 3, 4, 5, 6}),
  b = ge.tensor_value(F, {3}, {0.5, 0.25, 0.125}),
  name = ge.tensor_value("string", {2}, {"a", "bc"}),
}))
local idx = read(tmp .. "/ckpt.index")
local data = read(tmp .. "/ckpt.data-00000-of-00001")
seed("bundle", string.pack("<I4", #idx) .. idx .. data)

-- the eval target reads a recipe of a graph, not a file: bytes from a
-- fixed generator, short and long
local x = 12345
for _, len in ipairs{16, 48, 96, 160, 256, 400} do
  local t = {}
  for i = 1, len do
    x = (x * 1103515245 + 12345) % 2147483648
    t[i] = string.char(x // 65536 % 256)
  end
  seed("eval", table.concat(t))
end
sh("rm -rf '" .. tmp .. "'")
print(string.format("%d seeds in %s", n, out))

-- lua-checkpoint.lua: ge.checkpoint: writing tensor bundles from values,
-- reading them back, copying with renames, g:checkpoint(), and corrupt
-- checkpoints (bad checksum, truncated index, missing shard) reported with
-- the file and the tensor and never leaving a partial output.
local tap = require "tap"
local ok, is, same, raises = tap.ok, tap.is, tap.same, tap.raises

local dir = tap.tmpdir()
local function path(p) return dir .. "/" .. p end
local function exists(p)
  local f = io.open(p, "rb")
  if f then f:close() end
  return f ~= nil
end
local slurp = tap.slurp
local function spit(p, s)
  local f = assert(io.open(p, "wb"))
  f:write(s)
  f:close()
end

-- ---------------------------------------------------------------- write
local vals = {
  w = ge.tensor_value("float32", {2, 3}, {1, 2, 3, 4, 5, 6.5}),
  s = ge.tensor_value("string", {3}, {"one", "", "th\0ree"}),
  n = ge.tensor_value("int64", {}, 1234567890123),
  i = ge.tensor_value("int32", {4}, {-1, 0, 7, -2147483648}),
  b = ge.tensor_value("bool", {2}, {true, false}),
  d = ge.tensor_value("float64", {1}, {0.1}),
  h = ge.tensor_value("float16", {2}, {1.5, -2}),
  e = ge.tensor_value("float32", {0, 3}),
}
local p1 = path("model.ckpt")
ok(ge.checkpoint.write(p1, vals), "write a checkpoint from values")
ok(exists(p1 .. ".index") and exists(p1 .. ".data-00000-of-00001"),
   "the index and one data shard exist")

local r = assert(ge.checkpoint.open(p1))
is("checkpoint", (tostring(r):match("^(%w+)")), "tostring starts with checkpoint")
is(8, #r, "#r counts the tensors")
same({"b", "d", "e", "h", "i", "n", "s", "w"}, r:names(), "names in bytewise order")
local l = r:list()
is("w", l[8].name, "list gives entries in order")
is("float32", l[8].dtype, "entry dtype")
same({2, 3}, {l[8].shape[1], l[8].shape[2]}, "entry shape")
is("string", r:entry("s").dtype, "r:entry")
is(nil, r:entry("nope"), "r:entry of a missing name is nil")
for name, v in pairs(vals) do
  ok(r:read(name) == v, "read back " .. name .. " equals what was written")
end
is(6.5, r:read("w")[6], "element access on a read value")
is("th\0ree", r:read("s")[3], "strings with NULs survive")
local v, err = r:read("nope")
ok(v == nil and err:find("no tensor 'nope'", 1, true), "reading a missing name fails")
is(p1, r.prefix, "r.prefix")
is(p1 .. ".index", r.index, "r.index")

ok(ge.checkpoint.open(p1 .. ".index"), "open by the .index path")
local nr, nerr = ge.checkpoint.open(path("nothing"))
ok(nr == nil and nerr:find(path("nothing"), 1, true), "a missing checkpoint names the path")

-- a directory with a tf.train `checkpoint` state file
os.execute("mkdir -p '" .. path("train") .. "'")
ok(ge.checkpoint.write(path("train/model-100"), {x = vals.n}), "write under train/")
spit(path("train/checkpoint"),
     'model_checkpoint_path: "model-100"\nall_model_checkpoint_paths: "model-100"\n')
local tr = ge.checkpoint.open(path("train"))
ok(tr and tr:read("x") == vals.n, "a directory with a checkpoint state file")

-- ---------------------------------------------------------------- copy
local p2 = path("copy.ckpt")
ok(ge.checkpoint.write(p2, {extra = vals.d, i = vals.n},
                       {copy_from = r, rename = {w = "layer/w", s = false}}),
   "copy with rename and drop")
local r2 = assert(ge.checkpoint.open(p2))
same({"b", "d", "e", "extra", "h", "i", "layer/w", "n"}, r2:names(),
     "renamed, dropped and added names")
ok(r2:read("layer/w") == vals.w, "a renamed tensor keeps its value")
is(r:entry("w").crc32c, r2:entry("layer/w").crc32c, "and its checksum")
ok(r2:read("i") == vals.n, "a given value wins over a copied one")
ok(r2:read("extra") == vals.d, "added values are there")

-- rewriting a bundle over itself
ok(ge.checkpoint.write(p2, {}, {copy_from = r2, rename = {extra = "more"}}),
   "rewrite a bundle over its own reader")
local r3 = assert(ge.checkpoint.open(p2))
ok(r3:entry("more") and not r3:entry("extra"), "the rewritten bundle has the new name")
ok(r2:read("layer/w") == vals.w, "the old reader still reads what it opened")

raises("no tensor 'zz'", function()
  ge.checkpoint.write(path("x"), {}, {copy_from = r, rename = {zz = "y"}})
end, "renaming a missing tensor is an error")
raises("must be a tensor value", function()
  ge.checkpoint.write(path("x"), {a = 1})
end, "values must be tensor values")
raises("needs 'copy_from'", function()
  ge.checkpoint.write(path("x"), {}, {rename = {a = "b"}})
end, "rename without copy_from")
local okw, werr = ge.checkpoint.write(path("y"), {}, {copy_from = r, rename = {b = "z", d = "z"}})
ok(not okw and werr:find("'z'", 1, true), "two tensors renamed to one name fail")
ok(not exists(path("y.index")), "and writes nothing")

-- ---------------------------------------------------------------- g:checkpoint
local g = ge.graph()
local gr, gerr = g:checkpoint()
ok(gr == nil and type(gerr) == "string", "a new graph has no checkpoint")

-- ---------------------------------------------------------------- corruption
local function copyck(from, to)
  spit(to .. ".index", slurp(from .. ".index"))
  spit(to .. ".data-00000-of-00001", slurp(from .. ".data-00000-of-00001"))
end

-- bad checksum: flip a byte of w's data
local pc = path("bad")
copyck(p1, pc)
local rc = assert(ge.checkpoint.open(pc))
local ew = rc:entry("w")
local data = slurp(pc .. ".data-00000-of-00001")
local at = ew.offset + 2
spit(pc .. ".data-00000-of-00001",
     data:sub(1, at) .. string.char((data:byte(at + 1) + 1) % 256) .. data:sub(at + 2))
rc = assert(ge.checkpoint.open(pc))
local bv, berr = rc:read("w")
ok(bv == nil and berr:find("checksum", 1, true) and berr:find("'w'", 1, true)
   and berr:find(pc .. ".data-00000-of-00001", 1, true),
   "a bad checksum names the data file and the tensor")
ok(rc:read("n") == vals.n, "other tensors still read")
local okc, cerr = ge.checkpoint.write(path("out"), {}, {copy_from = rc})
ok(not okc and cerr:find("'w'", 1, true), "copying a corrupt tensor fails")
ok(not exists(path("out.index")) and not exists(path("out.data-00000-of-00001")),
   "and leaves no partial output")

-- truncated index
local pt = path("trunc")
copyck(p1, pt)
local idx = slurp(pt .. ".index")
spit(pt .. ".index", idx:sub(1, #idx - 20))
local tr2, terr = ge.checkpoint.open(pt)
ok(tr2 == nil and terr:find(pt .. ".index", 1, true), "a truncated index names the index file")

-- missing shard
local pm = path("missing")
copyck(p1, pm)
os.remove(pm .. ".data-00000-of-00001")
local mr, merr = ge.checkpoint.open(pm)
ok(mr == nil and merr:find(pm .. ".data-00000-of-00001", 1, true),
   "a missing shard names the shard file")

-- truncated data: an entry past the end names the tensor
local pd = path("short")
copyck(p1, pd)
local dd = slurp(pd .. ".data-00000-of-00001")
spit(pd .. ".data-00000-of-00001", dd:sub(1, #dd - 4))
local sr, serr = ge.checkpoint.open(pd)
ok(sr == nil and serr:find("tensor '", 1, true) and serr:find(pd .. ".data", 1, true),
   "truncated data names the data file and a tensor")

r:close()
is("checkpoint (closed)", tostring(r), "a closed reader says so")
raises("checkpoint is closed", function() r:list() end, "a closed reader raises")

os.execute("rm -rf '" .. dir .. "'")
tap.done()

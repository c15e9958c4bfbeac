-- Collections and signatures of a MetaGraphDef from Lua.
local tap = require "tap"
local is, ok, raises = tap.is, tap.ok, tap.raises

local g = assert(ge.parse([[
meta_info_def { tags: "serve" }
graph_def {
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "y" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
}
collection_def { key: "ops" value { node_list { value: "y" value: "x:0" value: "gone" } } }
collection_def { key: "n" value { int64_list { value: 3 value: 4 } } }
collection_def { key: "f" value { float_list { value: 0.5 } } }
signature_def { key: "serving_default" value {
  inputs { key: "in" value { name: "x:0" dtype: DT_FLOAT } }
  outputs { key: "out" value { name: "y:0" dtype: DT_FLOAT } }
  method_name: "tensorflow/serving/predict" } }
]], "meta-text"))

tap.same({"ops", "n", "f"}, g:collection_names(), "collection_names in file order")
local c = g:collection("ops")
ok(c[1] == g:op("y"), "a node_list name gives the op")
ok(c[2] == g:tensor("x:0"), "a name:k gives the tensor")
is("gone", c[3], "a name of no op stays a string")
tap.same({3, 4}, g:collection("n"), "int64_list")
tap.same({0.5}, g:collection("f"), "float_list")
is(nil, g:collection("none"), "no such collection: nil")

g:add_to_collection("ops", g:op("x"))
g:add_to_collection("mine", {g:op("y"), g:tensor("y:0")})
g:add_to_collection("blobs", "\0bytes")
ok(g:collection("ops")[4] == g:op("x"), "add an op")
ok(g:collection("mine")[2] == g:tensor("y:0"), "a new collection from a list")
is("\0bytes", g:collection("blobs")[1], "strings go to a bytes_list")
raises("another kind of value", function() g:add_to_collection("n", g:op("x")) end,
       "adding a name to an int64 collection raises")
raises("string or list", function() g:add_to_collection("n", true) end,
       "a boolean is not a collection value")

-- renames follow into collections and signatures
g:op("y").name = "y2"
ok(g:collection("ops")[1] == g:op("y2"), "a rename follows into a collection")
local s = g:signature("serving_default")
is("tensorflow/serving/predict", s.method_name, "signature method")
ok(s.inputs["in"] == g:tensor("x:0"), "signature input")
ok(s.outputs.out == g:tensor("y2:0"), "a rename follows into the signature")
tap.same({"serving_default"}, g:signature_names(), "signature_names")
is(nil, g:signature("nope"), "no such signature: nil")

-- signatures you can edit
g:set_signature("both", {inputs = {a = "x:0"}, outputs = {b = g:tensor("y2:0"), c = "x"},
                         method_name = "m"})
local b = g:signature("both")
is("m", b.method_name, "set_signature: method_name")
ok(b.inputs.a == g:tensor("x:0") and b.outputs.b == g:tensor("y2:0"),
   "set_signature: tensors given as names or tensors")
ok(b.outputs.c == g:tensor("x:0"), "a bare op name is its output 0")
g:rename_signature("both", "pair", {inputs = {a = "aa"}, outputs = {c = "cc"}})
is(nil, g:signature("both"), "rename_signature: the old name is gone")
local pr = g:signature("pair")
ok(pr.inputs.aa == g:tensor("x:0") and pr.outputs.cc == g:tensor("x:0")
   and pr.outputs.b == g:tensor("y2:0"), "keys renamed, tensors kept")
is("m", pr.method_name, "a key rename keeps the method")
raises("names no tensor 'nope:0'", function()
  g:set_signature("bad", {outputs = {o = "nope:0"}}) end, "a missing tensor raises")
raises("duplicate", function()
  g:rename_signature("pair", "pair", {outputs = {b = "cc"}}) end,
  "renaming a key onto another raises")
raises("is taken", function() g:rename_signature("pair", "serving_default") end,
       "a taken name raises")
raises("unknown option", function() g:set_signature("s", {input = {}}) end,
       "an unknown field raises")
is(nil, g:signature("bad"), "nothing is left of a refused set")
g:remove_signature("pair")
is(nil, g:signature("pair"), "remove_signature")
raises("no signature 'pair'", function() g:remove_signature("pair") end,
       "removing twice raises")
local q = ge.graph()
q:add_op{type = "Placeholder", name = "in", attrs = {dtype = ge.FLOAT32}}
q:set_signature("serving_default", {inputs = {x = "in:0"}, outputs = {y = "in:0"}})
is("tensorflow/serving/predict", q:signature("serving_default").method_name,
   "a plain graph gets a signature, predict by default")

-- and they survive a save
local dir = tap.tmpdir()
assert(g:save(dir .. "/m.meta"))
local h = assert(ge.load(dir .. "/m.meta"))
ok(h:collection("mine")[1] == h:op("y2"), "collections are saved")
is(5, #h:collection_names(), "all five collections are there")
is(nil, h:signature("pair"), "a removed signature is not saved")
ok(h:signature("serving_default").outputs.out == h:tensor("y2:0"), "kept ones are")
os.execute("rm -rf '" .. dir .. "'")

-- a plain GraphDef has none, until one is added
local p = ge.graph()
local op = p:add_op{type = "NoOp", name = "n"}
tap.same({}, p:collection_names(), "a new graph has no collections")
p:add_to_collection("train_op", op)
ok(p:collection("train_op")[1] == op, "adding makes one")
tap.done()

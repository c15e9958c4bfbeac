-- lua-copies.lua: copies into a new graph and their names.  A whole
-- MetaGraphDef imported or copied into a new graph keeps its saver
-- (renamed under the prefix), meta info and the signatures that still
-- resolve; graph_replace takes the variables policy; ge.copy names its
-- placeholders with a prefix or a function.
local tap = require "tap"
local ok, is, raises = tap.ok, tap.is, tap.raises

local dir = tap.tmpdir()
local function path(n) return dir .. "/" .. n end
local slurp = tap.slurp

local F = 'attr { key: "T" value { type: DT_FLOAT } } '
local META = [[
meta_info_def { meta_graph_version: "v1" tags: "serve" }
graph_def {
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "w" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { } } } }
  node { name: "w/read" op: "Identity" input: "w" ]] .. F .. [[ }
  node { name: "y" op: "Mul" input: "x" input: "w/read" ]] .. F .. [[ }
  node { name: "save/Const" op: "Const" attr { key: "dtype" value { type: DT_STRING } } attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "model" } } } }
  node { name: "save/restore_all" op: "NoOp" }
  node { name: "save/control_dependency" op: "Identity" input: "save/Const" attr { key: "T" value { type: DT_STRING } } }
}
saver_def {
  filename_tensor_name: "save/Const:0"
  save_tensor_name: "save/control_dependency:0"
  restore_op_name: "save/restore_all"
  max_to_keep: 5
  version: V2
}
signature_def {
  key: "serving_default"
  value {
    inputs { key: "x" value { name: "x:0" dtype: DT_FLOAT } }
    outputs { key: "y" value { name: "y:0" dtype: DT_FLOAT } }
    method_name: "tensorflow/serving/predict"
  }
}
signature_def {
  key: "stale"
  value { outputs { key: "z" value { name: "nosuch:0" dtype: DT_FLOAT } } }
}
]]
local f = assert(io.open(path("src.pbtxt"), "w"))
f:write(META)
f:close()
local src = assert(ge.load(path("src.pbtxt")))

-- ---------------------------------------------------------------- import
local dst = ge.graph()
ge.import_graph(dst, src, {prefix = "ns"})
assert(dst:save(path("imported.pbtxt"), {format = "meta-text"}))
local text = slurp(path("imported.pbtxt"))
ok(text:find('filename_tensor_name: "ns/save/Const:0"', 1, true),
   "import_graph into a new graph carries the saver, renamed under the prefix")
ok(text:find('save_tensor_name: "ns/save/control_dependency:0"', 1, true) and
   text:find('restore_op_name: "ns/save/restore_all"', 1, true) and
   text:find('max_to_keep: 5', 1, true),
   "every name of the SaverDef, and its other fields")
ok(text:find('meta_graph_version: "v1"', 1, true) and text:find('tags: "serve"', 1, true),
   "the meta info def is carried")
local sig = dst:signature("serving_default")
ok(sig and sig.outputs.y == dst:tensor("ns/y:0") and sig.inputs.x == dst:tensor("ns/x:0"),
   "a signature whose tensors were copied is carried, renamed")
is(nil, dst:signature("stale"), "a signature naming a tensor that was not copied is dropped")
local again = assert(ge.load(path("imported.pbtxt")))
is("ns/save/restore_all", again:op("ns/save/restore_all").name,
   "the saved MetaGraphDef loads, its restore op present")

-- ---------------------------------------------------------------- copy
local d2 = ge.graph()
ge.copy(ge.sgv(src:ops()), {dst_graph = d2, dst_scope = "cp"})
assert(d2:save(path("copied.pbtxt"), {format = "meta-text"}))
text = slurp(path("copied.pbtxt"))
ok(text:find('restore_op_name: "cp/save/restore_all"', 1, true),
   "ge.copy of the whole graph into a new graph carries the saver too")
ok(d2:signature("serving_default").outputs.y == d2:tensor("cp/y:0"),
   "and the signatures")
local d3 = ge.graph()
ge.copy(ge.sgv(src:op("y")), {dst_graph = d3})
ok(not d3:signature("serving_default") and
   not slurp((function() assert(d3:save(path("part.pbtxt"), {format = "meta-text"})) return path("part.pbtxt") end)()):find("saver_def", 1, true),
   "a partial copy carries neither")
-- a destination with a saver of its own keeps it
local d4 = assert(ge.load(path("src.pbtxt")))
ge.import_graph(d4, src, {prefix = "other"})
assert(d4:save(path("merged.pbtxt"), {format = "meta-text"}))
text = slurp(path("merged.pbtxt"))
ok(text:find('restore_op_name: "save/restore_all"', 1, true) and
   not text:find('restore_op_name: "other/', 1, true),
   "a destination's own saver is kept")

-- ---------------------------------------------------------------- graph_replace
local function vgraph()
  local T = "float32"
  local g = ge.graph()
  g:add_op{type = "Placeholder", name = "x", attrs = {dtype = T, shape = ge.shape{2, 2}}}
  g:add_op{type = "Placeholder", name = "x2", attrs = {dtype = T, shape = ge.shape{2, 2}}}
  g:add_op{type = "Const", name = "w/initial_value", attrs = {dtype = T, value = ge.tensor_value(T, {2, 2}, 1)}}
  g:add_op{type = "VariableV2", name = "w", attrs = {dtype = T, shape = ge.shape{2, 2}}}
  g:add_op{type = "Assign", name = "w/Assign", inputs = {"w", "w/initial_value"}, attrs = {T = T}}
  g:add_op{type = "Identity", name = "w/read", inputs = {"w"}, attrs = {T = T}}
  g:add_op{type = "MatMul", name = "mm", inputs = {"x", "w/read"}, attrs = {T = T}}
  g:add_op{type = "Relu", name = "y", inputs = {"mm"}, attrs = {T = T}}
  return g
end
local g = vgraph()
local y2 = ge.graph_replace(g:tensor("y:0"), {[g:tensor("x:0")] = g:tensor("x2:0")},
                            {dst_scope = "b", variables = "duplicate"})
is("b/y:0", y2.name, "graph_replace takes variables = \"duplicate\"")
ok(g:op("b/w") and g:op("b/w").type == "VariableV2", "the copy has its own variable")
is("b/w/read:0", g:op("b/mm"):input(1).name, "which the copy reads")
g = vgraph()
ge.graph_replace(g:tensor("y:0"), {[g:tensor("x:0")] = g:tensor("x2:0")},
                 {dst_scope = "s", variables = "share"})
is("w/read:0", g:op("s/mm"):input(1).name, "variables = \"share\": the copy reads the original")
is(nil, g:op("s/w"), "and no variable is made")
g = vgraph()
local seen = {}
ge.graph_replace(g:tensor("y:0"), {[g:tensor("x:0")] = g:tensor("x2:0")},
                 {dst_scope = "f", variables = function(v) seen[#seen + 1] = v.name return "duplicate" end})
is("w", seen[1], "a policy function is called with the variable")
raises("unknown option 'variable'", function()
  ge.graph_replace(g:tensor("y:0"), {[g:tensor("x:0")] = g:tensor("x2:0")}, {variable = "share"})
end, "other unknown options are still refused")

-- ---------------------------------------------------------------- placeholders
g = vgraph()
local v = ge.copy(ge.sgv(g:op("mm")), {dst_scope = "a"})
is("a/geph__x_0:0", v.inputs[1].name, "the default placeholder name: <dst_scope>geph__<op>_<index>")
v = ge.copy(ge.sgv(g:op("mm")), {dst_scope = "p", placeholders = "feed"})
is("p/feed__x_0:0", v.inputs[1].name, "placeholders = prefix replaces geph")
is("p/feed__read_0:0", v.inputs[2].name, "for every input")
v = ge.copy(ge.sgv(g:op("mm")), {dst_scope = "q",
  placeholders = function(t) return "in_" .. t.op.name:gsub("/", "_") end})
is("q/in_x:0", v.inputs[1].name, "placeholders = function(t) names each one")
is("q/in_w_read:0", v.inputs[2].name, "under the destination scope")
is("float32", v.inputs[1].dtype, "with the tensor's dtype")
ok(v.inputs[1].shape == ge.shape{2, 2}, "and shape")
local n = #g:ops()
raises("boom", function()
  ge.copy(ge.sgv(g:op("mm")), {placeholders = function() error("boom") end})
end, "an error in the function is raised")
is(n, #g:ops(), "and the copy is undone")
raises("must return a name", function()
  ge.copy(ge.sgv(g:op("mm")), {placeholders = function() return 3 end})
end, "a function that returns no name")
raises("option of copy only", function()
  ge.copy_with_input_replacements(ge.sgv(g:op("mm")), {}, {placeholders = "x"})
end, "other transforms refuse the option")

os.execute("rm -rf '" .. dir .. "'")
tap.done()

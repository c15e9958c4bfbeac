-- copy_subgraph: a second copy of part of a model under a new scope.

-- Tensors named like "x" or "x:1", and the tensors variables expose
-- (gerewrite.recipe, shared with the other copying recipes).
local helpers = require("gerewrite.recipe")
local tensors, variable_tensors = helpers.tensors, helpers.variable_tensors

return {
  name = "copy_subgraph",
  -- whole-graph: names ops of the top-level graph; bodies are left alone
  functions = false,
  description = [[
Copy a scope, or the ops between some inputs and outputs, under a new scope.

The copy of op `scope/x` is `dst_scope/x`, and the copy of an op named
`scope` itself (a variable `W` next to `W/read`) is `dst_scope`, as
TensorFlow's scopes go (of an op x between inputs and outputs,
`dst_scope/x`).  Between inputs and outputs the copy takes the whole
TF1 while loops the ops are in, each copied loop in a frame of its own;
a scope that holds part of a loop is refused, naming the loop.  With connect=same the copy reads the tensors
the original reads from outside; with connect=placeholders it reads new
Placeholders (graph_editor's copy).  Variables in or read by the copy
are shared (the copy reads the original's) or duplicated (the copy has
its own, in the variable collections, initialized, saved and restored
under new checkpoint keys).]],
  params = {
    {name = "dst_scope", type = "string", required = true,
     help = "the scope of the copy, e.g. head_2"},
    {name = "scope", type = "string", default = "",
     help = "the name scope to copy (instead of inputs/outputs)"},
    {name = "inputs", type = "list", default = {},
     help = "tensors where the copy starts"},
    {name = "outputs", type = "list", default = {},
     help = "ops or tensors where the copy ends"},
    {name = "variables", type = "enum", choices = {"share", "duplicate"},
     default = "share", help = "share the variables, or copy them"},
    {name = "connect", type = "enum", choices = {"same", "placeholders"},
     default = "same", help = "what the copy reads from outside"},
  },
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g, p)
    if p.dst_scope == "" then error("dst_scope cannot be empty") end
    local view
    if p.scope ~= "" then
      local scope = p.scope:gsub("/+$", "")
      view = ge.sgv_scope(scope, g)
      if #view.ops == 0 then error("no op in scope '" .. p.scope .. "'") end
    else
      if #p.inputs == 0 or #p.outputs == 0 then
        error("give scope=, or inputs= and outputs=")
      end
      local outs = {}
      for _, t in ipairs(tensors(g, p.outputs)) do outs[#outs + 1] = t.op end
      local ops = ge.get_walks_intersection_ops(tensors(g, p.inputs), outs)
      if #ops == 0 then error("no op lies between the inputs and the outputs") end
      -- a copy holds whole while loops, never a part of one
      view = ge.sgv(ge.whole_loops(ops))
    end
    local opts = {dst_scope = p.dst_scope, variables = p.variables}
    if p.scope ~= "" then opts.src_scope = p.scope:gsub("/+$", "") end
    if p.connect == "placeholders" then
      ge.copy(view, opts)
      return
    end
    local varts = variable_tensors(g)
    local repl = {}
    for _, t in ipairs(view.inputs) do
      if not (varts[t] and p.variables == "duplicate") then repl[t] = t end
    end
    ge.copy_with_input_replacements(view, repl, opts)
  end,
}

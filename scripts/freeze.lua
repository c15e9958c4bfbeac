-- freeze: a frozen GraphDef (variables become constants), TF1 or TF2.
return {
  name = "freeze",
  -- whole-graph: a signature of the top-level graph; bodies are inlined
  functions = false,
  description = [[
Make a frozen GraphDef: variables become constants of their checkpoint values.

A TF2 SavedModel (computation in functions, variables captured by the
signatures' calls): the chosen signature's call is inlined, recursively,
every variable it reads becomes a Const holding its value in the
checkpoint (found through the checkpoint's object graph), what the
outputs do not need goes, and so does the function library (but for the
bodies of While and If ops, which stay as they are).  Inputs are the
signature's Placeholders renamed to its input keys, outputs Identity ops
named by its output keys: a signature {x} -> {output_0} gives a graph fed
at x:0 and fetched at output_0:0 (with names=tensors the signature's
tensor names stay valid instead: an IdentityN takes the name of the call
it replaces).  A variable without a value (a SavedModel without
variables/) fails, naming the variables.

Any other graph (a TF1 SavedModel, a MetaGraphDef with a checkpoint) is
frozen as TensorFlow's freeze_graph does, keeping what `outputs` (default:
the outputs of every signature) need.  Write the result with -o out.pb.
Every op of the result carries the attrs its OpDef gives a default (a
SavedModel strips them; TensorFlow's loader adds them back, other
executors need them written).  A graph without variables and without
outputs to keep (a frozen graph) passes unchanged, with a note on
standard error.]],
  -- the freeze names the variables that have no value itself
  checks_variables = true,
  params = {
    {name = "signature", type = "string", default = "serving_default",
     help = "TF2 SavedModels: the signature to freeze"},
    {name = "names", type = "enum", choices = {"keys", "tensors"},
     default = "keys",
     help = "TF2 SavedModels: name inputs and outputs by the signature's "
            .. "keys (x:0, output_0:0), or keep its tensor names "
            .. "(serving_default_x:0, StatefulPartitionedCall:0)"},
    {name = "outputs", type = "list", default = {},
     help = "other graphs: the ops (or tensors) to keep (default: the "
            .. "outputs of the signatures)"},
    {name = "checkpoint", type = "string", default = "",
     help = "the checkpoint (prefix, .index or directory; default: the "
            .. "model's own)"},
    {name = "clear_devices", type = "bool", default = true,
     help = "empty the device of every op, as freeze_graph does"},
  },
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g, p)
    local opts = {clear_devices = p.clear_devices}
    if p.checkpoint ~= "" then opts.checkpoint = p.checkpoint end
    if #p.outputs > 0 then
      opts.outputs = p.outputs
    else
      opts.signature = p.signature
      opts.tensor_names = p.names == "tensors"
    end
    local done, frozen, err = pcall(ge.freeze, g, opts)
    if not done then
      -- nothing names what to keep: a graph without variables is
      -- frozen already and passes unchanged
      if #p.outputs == 0 and #g:variables() == 0 then
        io.stderr:write("freeze: the graph has no variables (already "
                        .. "frozen): passed unchanged\n")
        return g
      end
      -- one line, without the position of this script
      err = tostring(frozen):gsub("^[^\n]-%.lua:%d+: ", "")
      if #p.outputs == 0 and err:find("no outputs", 1, true) then
        err = "freeze: the graph has variables but no signature outputs: "
              .. "name the outputs to keep (--param outputs=NAME,...)"
      end
      frozen = nil
    end
    -- the message names the model and the op; a script position would
    -- only be noise
    if not frozen then error(err, 0) end
    -- the attrs a SavedModel strips when they hold their default:
    -- TensorFlow's loader adds them back, other consumers need them
    frozen:fill_default_attrs()
    return frozen
  end,
}

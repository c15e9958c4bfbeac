-- inline_functions: every function call replaced by the function's body.
return {
  name = "inline_functions",
  -- whole-graph: the calls of the top-level graph, bodies followed
  -- through them
  functions = false,
  description = [[
Replace function calls by copies of the functions' bodies.

The calls are PartitionedCall and StatefulPartitionedCall ops, inlined as
TensorFlow's function inliner does.  A body's ops land under `<call name>/`; what read the call's outputs
reads what the body returns; the call's control inputs and control
outputs carry over.  A call nothing reads (an output of the model)
leaves its name to an Identity (IdentityN, NoOp) of what the body
returns, so that it is fetched by the same name.  Nested calls are inlined too.  The function library
stays (other references may need it); `strip_unused_nodes` or `freeze`
remove what is left unused.  The inlined ops carry the attrs their
OpDefs give a default (a SavedModel strips them).]],
  params = {
    {name = "ops", type = "list", default = {}, matches = "op",
     help = "the calls to inline (default: every call)"},
    {name = "recursive", type = "bool", default = true,
     help = "inline the calls inside the inlined bodies too"},
  },
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g, p)
    -- the messages name the model, the op and the function
    local function check(ok, err)
      if not ok then error(err, 0) end
    end
    if #p.ops == 0 then
      if p.recursive then
        check(ge.inline_all(g))
        -- inlined ops carry the attrs a SavedModel stripped
        g:fill_default_attrs()
        return
      end
      for _, op in ipairs(g:ops()) do
        if op.type == "PartitionedCall" or
           op.type == "StatefulPartitionedCall" then
          p.ops[#p.ops + 1] = op.name
        end
      end
    end
    for _, name in ipairs(p.ops) do
      local op = g:op(name) or error("no op named '" .. name .. "'")
      check(ge.inline(op, {recursive = p.recursive}))
    end
    -- inlined ops carry the attrs a SavedModel stripped
    g:fill_default_attrs()
  end,
}

-- strip_unused_nodes: keep only what the outputs need (transform_graph's
-- strip_unused_nodes).
return {
  name = "strip_unused_nodes",
  -- whole-graph: names ops of the top-level graph; bodies are left alone
  functions = false,
  description = [[
Keep only what the outputs need; inputs become Placeholders.

Removes every op that the outputs do not need, walking back from them
through data and control inputs.  The walk stops at the inputs: each
input that is needed becomes a Placeholder of the same name (its own
inputs go), with the dtype of its first output (or `type`) and its
static shape (or `shape`).]],
  params = {
    {name = "outputs", type = "list", required = true,
     help = "the ops (or tensors) to keep, with everything they need"},
    {name = "inputs", type = "list", default = {},
     help = "ops where the walk stops; they become Placeholders"},
    {name = "type", type = "string", default = "",
     help = "dtype of the new Placeholders (default: the input's own, "
            .. "else float32)"},
    {name = "shape", type = "list", default = {},
     help = "shape of the new Placeholders, e.g. 1,224,224,3 (-1 for an "
            .. "unknown dim; default: the input's own if known)"},
  },
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g, p)
    local stop = {}
    for _, s in ipairs(p.inputs) do
      local n = ge.op_name(s)
      if not g:op(n) then error("no input op named '" .. n .. "'") end
      stop[n] = true
    end
    local shape
    if #p.shape > 0 then
      shape = {}
      for i, d in ipairs(p.shape) do
        shape[i] = math.tointeger(tonumber(d)) or
                   error("shape: '" .. d .. "' is not an integer")
      end
    end
    -- what the outputs need
    local keep, stack = {}, {}
    for _, s in ipairs(p.outputs) do
      local op = g:op(ge.op_name(s)) or
                 error("no output op named '" .. ge.op_name(s) .. "'")
      stack[#stack + 1] = op
    end
    while #stack > 0 do
      local op = table.remove(stack)
      if not keep[op] then
        keep[op] = true
        if not stop[op.name] then
          for _, t in ipairs(op.inputs) do
            if type(t) ~= "string" then stack[#stack + 1] = t.op end
          end
          for _, c in ipairs(op.control_inputs) do
            if type(c) ~= "string" then stack[#stack + 1] = c end
          end
        end
      end
    end
    local order = g:ops()
    -- needed inputs become Placeholders, in the place of the op
    local replaced = {}
    for _, op in ipairs(order) do
      if keep[op] and stop[op.name] and op.type ~= "Placeholder" and
         op.type ~= "PlaceholderV2" then
        local out = op.outputs[1]
        for _, t in ipairs(op.outputs) do
          if t.index > 0 and #t:consumers() > 0 then
            error(string.format("input '%s' has its output %d used; only "
                                .. "output 0 can become a Placeholder",
                                op.name, t.index))
          end
        end
        local dtype = p.type ~= "" and p.type or (out and out.dtype) or
                      "float32"
        local attrs = {dtype = dtype}
        local s = shape or (out and out.shape)
        if s then attrs.shape = ge.shape(s) end
        local name = op.name
        local ph = g:add_op{type = "Placeholder",
                            name = g:unique_name(name .. "/placeholder"),
                            attrs = attrs, device = op.device}
        -- by slot, not replace_all_uses_with: a `type` the user gives
        -- may differ from the old op's dtype, on purpose
        if out then
          for _, c in ipairs(out:consumers()) do
            for slot, t in ipairs(c.inputs) do
              if t == out then c:set_input(slot - 1, ph:output(0)) end
            end
          end
        end
        for _, c in ipairs(op:control_outputs()) do
          ge.remove_control_inputs(c, {op})
          ge.add_control_inputs(c, {ph})
        end
        g:remove_op(op, {force = true})
        ph.name = name
        replaced[op] = ph
      end
    end
    -- the rest goes; consumers of what goes go too, so force is safe
    local new_order = {}
    for _, op in ipairs(order) do
      if keep[op] then
        new_order[#new_order + 1] = replaced[op] or op
      elseif not replaced[op] then
        g:remove_op(op, {force = true})
      end
    end
    g:reorder(new_order)
  end,
}

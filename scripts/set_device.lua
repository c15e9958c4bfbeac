-- set_device: place ops on a device (transform_graph's set_device).
return {
  name = "set_device",
  description = [[
Place ops (all, a scope, some types) on a device.

Sets the device of every op, or of the ops of a name scope and/or of
some op types, to `device`.  With if_default=true only ops without a
device are changed.]],
  params = {
    {name = "device", type = "string", required = true,
     help = "e.g. /device:GPU:0 (empty clears the device)"},
    {name = "scope", type = "string", default = "",
     help = "only ops of this name scope"},
    {name = "op", type = "list", default = {},
     help = "only ops of these types (comma-separated)"},
    {name = "if_default", type = "bool", default = false,
     help = "only ops that have no device yet"},
  },
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g, p)
    local scope = p.scope:gsub("/+$", "")
    local types = {}
    for _, t in ipairs(p.op) do types[t] = true end
    for _, op in ipairs(g:ops()) do
      local n = op.name
      local in_scope = scope == "" or n == scope or
                       n:sub(1, #scope + 1) == scope .. "/"
      if in_scope and (#p.op == 0 or types[op.type]) and
         (not p.if_default or op.device == "") then
        op.device = p.device
      end
    end
  end,
}

-- rename_scope: move the ops of one name scope to another.

return {
  name = "rename_scope",
  description = [[
Move the ops of one name scope to another.

Renames the ops of name scope `from` (the op named `from` and every op
whose name starts with `from/`) into scope `to`: tower_0/conv becomes
tower_1/conv.  References follow: inputs, colocation attrs, collections
and signatures.  Fails, changing nothing, if a new name is taken by an op
outside the scope.]],
  params = {
    {name = "from", type = "string", required = true,
     help = "the scope to rename, e.g. tower_0"},
    {name = "to", type = "string", required = true,
     help = "its new name, e.g. tower_1 (empty: to the top level)"},
  },
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g, p)
    local from = p.from:gsub("/+$", "")
    local to = p.to:gsub("/+$", "")
    if from == "" then error("parameter 'from' cannot be empty") end
    local moving, seen = {}, {}
    for _, op in ipairs(g:ops()) do
      local n = op.name
      local rest
      if n == from then
        rest = ""
      elseif n:sub(1, #from + 1) == from .. "/" then
        rest = n:sub(#from + 2)
      end
      if rest then
        local new
        if rest == "" then
          new = to
        elseif to == "" then
          new = rest
        else
          new = to .. "/" .. rest
        end
        if new == "" then error("op '" .. n .. "' would get an empty name") end
        moving[#moving + 1] = {op = op, old = n, new = new}
        seen[op] = true
      end
    end
    -- every new name must be free, or held by an op that moves away
    local taken = {}
    for _, m in ipairs(moving) do
      if taken[m.new] then
        error(string.format("two ops would be named '%s'", m.new))
      end
      taken[m.new] = true
      local other = g:op(m.new)
      if other and not seen[other] then
        error(string.format("'%s' would become '%s', which '%s' already is",
                            m.op.name, m.new, tostring(other)))
      end
    end
    -- two steps, so that names swapped within the scope never collide
    local tmp = {}
    for i, m in ipairs(moving) do
      tmp[i] = g:unique_name("__rename_scope_tmp")
      m.op.name = tmp[i]
    end
    for _, m in ipairs(moving) do
      m.op.name = m.new
    end
  end,
}

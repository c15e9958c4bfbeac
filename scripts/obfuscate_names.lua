-- obfuscate_names: replace op names by short meaningless ones
-- (transform_graph's obfuscate_names).

-- The k-th name (from 1) in bijective base 26: a .. z, aa .. zz, aaa ...

local function short_name(k)
  local s = ""
  repeat
    local d = (k - 1) % 26
    s = string.char(97 + d) .. s
    k = (k - 1) // 26
  until k == 0
  return s
end

-- The model's interface, by op name (recipe.interface).
local interface = require("gerewrite.recipe").interface

return {
  name = "obfuscate_names",
  description = [[
Rename every op but the inputs and outputs to short names.

Renames every op but the inputs and outputs to a short generated name
(a, b, ..., z, ba, ...), in node order, so the result is the same on
every run.  References follow (inputs, colocation, collections,
signatures).  Makes graphs smaller and hides their structure's names.
Without inputs and outputs, the model's interface keeps its names: its
Placeholders, the ops its signatures name and the ops nobody reads (in
a function body, its _Arg and _Retval ops).  inputs and outputs name
ops of the top-level graph: a function body that lacks one is fine.]],
  params = {
    {name = "inputs", type = "list", default = {},
     help = "ops that keep their names"},
    {name = "outputs", type = "list", default = {},
     help = "ops that keep their names"},
  },
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g, p)
    local keep, keep_lower = {}, {}
    local body = #g:ops({"_Arg", "_Retval"}) > 0
    if #p.inputs == 0 and #p.outputs == 0 then
      keep = interface(g)
      for n in pairs(keep) do keep_lower[n:lower()] = true end
    end
    for _, list in ipairs{p.inputs, p.outputs} do
      for _, s in ipairs(list) do
        local n = ge.op_name(s)
        -- the names are the top-level graph's: a body need not hold them
        if not g:op(n) and not body then error("no op named '" .. n .. "'", 0) end
        keep[n] = true
        keep_lower[n:lower()] = true
      end
    end
    local renamed = {}
    for _, op in ipairs(g:ops()) do
      if not keep[op.name] then renamed[#renamed + 1] = op end
    end
    -- first out of the way, then to the final names
    for _, op in ipairs(renamed) do
      op.name = g:unique_name("__obfuscate_tmp")
    end
    local k = 0
    for _, op in ipairs(renamed) do
      local n
      repeat
        k = k + 1
        n = short_name(k)
      until not keep_lower[n]
      op.name = n
    end
  end,
}

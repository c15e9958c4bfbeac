-- merge_duplicate_nodes: compute each value once (transform_graph's
-- merge_duplicate_nodes).

-- The model's interface, by op name (recipe.interface).
local interface = require("gerewrite.recipe").interface

local function protected_set(g, p)
  local s = {}
  if #p.inputs == 0 and #p.outputs == 0 then s = interface(g) end
  for _, list in ipairs{p.inputs, p.outputs} do
    for _, x in ipairs(list) do
      s[ge.op_name(x)] = true
    end
  end
  return s
end

-- What makes two ops the same value: type, device, inputs in order,
-- control inputs as a set, attrs by name and encoded value.
local function key(op)
  local parts = {op.type, op.device}
  for _, t in ipairs(op.inputs) do
    parts[#parts + 1] = type(t) == "string" and t or t.name
  end
  local ctl = {}
  for _, c in ipairs(op.control_inputs) do
    ctl[#ctl + 1] = type(c) == "string" and c or c.name
  end
  table.sort(ctl)
  parts[#parts + 1] = "^" .. table.concat(ctl, "\1")
  local names = op:attr_names()
  table.sort(names)
  for _, a in ipairs(names) do
    parts[#parts + 1] = a .. "=" .. op:attr_raw(a)
  end
  return table.concat(parts, "\0")
end

return {
  name = "merge_duplicate_nodes",
  description = [[
Compute each value once: merge ops that are the same.

Merges ops that compute the same value: same type, device, inputs,
control inputs and attrs.  The first in node order stays; the readers
of the others read it instead.  Repeats until nothing merges, so whole
duplicated chains collapse.  Stateful ops (random numbers, variables,
queues), ops of unknown type, ops with no input other than Consts
(Placeholders are distinct inputs), the ops listed in inputs or
outputs and the ops other ops are colocated with (loc:@name in their
_class attr) never merge.  Without inputs and outputs, the model's
interface keeps its names: the ops its signatures name and the ops
nobody reads (three equal output Identities stay three fetches).
The op that stays lists every op merged into it in its provenance
(experimental_debug_info).]],
  params = {
    {name = "inputs", type = "list", default = {},
     help = "ops that must not merge"},
    {name = "outputs", type = "list", default = {},
     help = "ops that must not merge"},
  },
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g, p)
    local protected = protected_set(g, p)
    -- ops others are colocated with: removing one leaves a dangling
    -- loc:@ reference
    for _, op in ipairs(g:colocation_targets()) do protected[op.name] = true end
    local mergeable_type = {}
    local function mergeable(op)
      if protected[op.name] then return false end
      local t = op.type
      if mergeable_type[t] == nil then
        local d = g:opdef(t)
        mergeable_type[t] = d ~= nil and not d.is_stateful
      end
      if not mergeable_type[t] then return false end
      return t == "Const" or #op.inputs > 0 or #op.control_inputs > 0
    end
    repeat
      local changed = false
      local first = {}
      for _, op in ipairs(g:ops()) do
        if mergeable(op) then
          local k = key(op)
          local keep = first[k]
          if not keep then
            first[k] = op
          else
            for _, t in ipairs(op.outputs) do
              if #t:consumers() > 0 then
                t:replace_all_uses_with(keep:output(t.index))
              end
            end
            for _, c in ipairs(op:control_outputs()) do
              ge.remove_control_inputs(c, {op})
              local has = c == keep
              for _, x in ipairs(c.control_inputs) do
                if x == keep then has = true end
              end
              if not has then ge.add_control_inputs(c, {keep}) end
            end
            -- the survivor stands for every op merged into it
            keep:add_origins{nodes = {keep, op},
                             rule = "merge_duplicate_nodes"}
            g:remove_op(op)
            changed = true
          end
        end
      end
    until not changed
  end,
}

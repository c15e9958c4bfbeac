-- remove_identity_chains: bypass Identity ops (and chains of them),
-- written with ge.match and the ge.rewrite fixpoint driver.
local m = ge.match

-- Producers whose Identity readers are not plain copies: a variable's
-- read snapshot (ref variables), and values arriving from another device.
local KEEP_AFTER = {Variable = true, VariableV2 = true, VarHandleOp = true,
                    _Recv = true, _HostRecv = true}

local function set_of(list)
  local s = {}
  for _, x in ipairs(list) do s[ge.op_name(x)] = true end
  return s
end

-- The ops whose outputs a signature names, on either side: what a user
-- feeds (an Identity x after the parsing of a tf.Example) and fetches.
local function signature_ops(g)
  local set = {}
  for _, name in ipairs(g:signature_names()) do
    local sig = g:signature(name)
    for _, side in ipairs{sig and sig.inputs or {}, sig and sig.outputs or {}} do
      for _, t in pairs(side) do
        if type(t) ~= "boolean" then
          local n = type(t) == "string" and t or t.name
          set[ge.op_name(n)] = true
        end
      end
    end
  end
  return set
end

-- Whether the Identity op can go, given the recipe's parameters.
local function removable(op, p, keep)
  if keep[op.name] then return false end
  local src = op.inputs[1]
  if type(src) == "string" then return false end -- a dangling input
  local from = src.op
  if KEEP_AFTER[from.type] then return false end
  -- an Identity pinned to another device is a copy between devices
  if op.device ~= "" and from.device ~= "" and op.device ~= from.device then
    return false
  end
  local readers = #op:output(0):consumers()
  if readers == 0 and not p.remove_outputs then return false end
  local ctl_in = #op.control_inputs > 0
  if ctl_in and p.control_inputs == "keep" then return false end
  local waiting = op:control_outputs()
  -- a Switch cannot stand in as a control input: its untaken branch is
  -- dead, which a control edge would not carry the same way
  if #waiting > 0 and from.type:match("Switch$") then return false end
  if ctl_in then
    -- nothing would inherit its control inputs
    if readers == 0 and #waiting == 0 then return false end
    -- a dead control input makes the Identity's output dead, but a Merge
    -- waiting on it directly would still fire: deadness would be lost
    for _, c in ipairs(op:output(0):consumers()) do
      if c.type:match("Merge$") or c.type == "_Retval" then return false end
    end
  end
  return true
end

local function add_ctl(op, list)
  local have = {[op] = true}
  for _, c in ipairs(op.control_inputs) do have[c] = true end
  local add = {}
  for _, c in ipairs(list) do
    if not have[c] then
      have[c] = true
      add[#add + 1] = c
    end
  end
  if #add > 0 then ge.add_control_inputs(op, add) end
end

-- Moves the control edges of op to its neighbours and hands its readers
-- to x: control outputs wait for x's op instead, control inputs are added
-- to every op that read or waited for op.
local function bypass(hit)
  local op, x = hit[1], hit.x
  local cin = {}
  for _, c in ipairs(op.control_inputs) do
    if type(c) ~= "string" then cin[#cin + 1] = c end
  end
  local waiting = op:control_outputs()
  for _, c in ipairs(waiting) do
    ge.remove_control_inputs(c, {op})
    add_ctl(c, {x.op})
  end
  if #cin > 0 then
    for _, c in ipairs(op:output(0):consumers()) do add_ctl(c, cin) end
    for _, c in ipairs(waiting) do add_ctl(c, cin) end
  end
  return {[op:output(0)] = x}
end

-- The rule set for graph g: a pattern matching the Identities that may
-- go, and the action bypassing them.
local function rules(p, g)
  local keep = set_of(p.keep)
  for n in pairs(set_of(p.outputs or {})) do keep[n] = true end
  for n in pairs(signature_ops(g)) do keep[n] = true end
  -- ops others are colocated with: removing one leaves a dangling
  -- loc:@ reference
  for _, op in ipairs(g:colocation_targets()) do keep[op.name] = true end
  local pat = m.op("Identity", m.any "x"):where(function(op)
    return removable(op, p, keep)
  end)
  return {{name = "remove_identity", pattern = pat, action = bypass}}
end

return {
  name = "remove_identity_chains",
  description = [[
Bypass Identity ops, chains of them included.

Every Identity whose readers can read its input directly goes: its
readers read the input instead, and ops waiting on it (control edges)
wait on the input's op.  Repeats until no Identity can go, so a chain
x -> Identity -> Identity -> Identity -> y leaves y reading x.

Kept, as TensorFlow's own optimizer keeps them:
  - Identities nothing reads (graph outputs, fetched by name), unless
    remove_outputs is set: the last Identity of a chain that ends the
    graph stays, reading the chain's input;
  - those listed in keep or in outputs, those a signature names as an
    input or output (names a user feeds or fetches stay, remove_outputs
    or not), and those
    other ops are colocated with (named in their _class attr as
    loc:@name);
  - those with control inputs, unless control_inputs=move: then the
    control inputs move to every op that read or waited on the Identity
    (an Identity with control inputs stays when nothing reads or waits
    on it, or when a Merge reads it);
  - reads of ref and resource variables (Variable, VariableV2,
    VarHandleOp) and of _Recv, copies to another device (the Identity's
    device set and not its input's), and Identities after a Switch that
    other ops wait on (a Switch cannot be a control input).]],
  params = {
    {name = "keep", type = "list", default = {},
     help = "Identity ops to keep (names)"},
    {name = "outputs", type = "list", default = {},
     help = "the graph's outputs (names a user fetches): kept"},
    {name = "remove_outputs", type = "bool", default = false,
     help = "also remove Identities that nothing reads (graph outputs)"},
    {name = "control_inputs", type = "enum", choices = {"keep", "move"},
     default = "keep",
     help = "Identities with control inputs: keep them, or move the "
            .. "control inputs to the ops reading them"},
    {name = "max_iterations", type = "int", default = 100,
     help = "passes over the graph at most"},
  },
  rules = rules,
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g, p)
    local counts, passes = ge.rewrite(g, rules(p, g),
      {mode = "fixpoint", max_iterations = p.max_iterations})
    return {removed = counts[1], passes = passes}
  end,
}

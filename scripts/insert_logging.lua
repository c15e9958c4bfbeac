-- insert_logging: print values as the graph runs (transform_graph's
-- insert_logging).
local NOT_PRINTABLE = {resource = true, variant = true}
-- A Print between these and their readers would break a TF1 loop: a
-- NextIteration must feed its Merge, a LoopCond its Switches, and an
-- Enter, Exit, Switch or Merge carries frames and deadness the Print
-- would have to pass on.
local CONTROL_FLOW = {Enter = true, RefEnter = true, Exit = true,
                      RefExit = true, NextIteration = true,
                      RefNextIteration = true, LoopCond = true,
                      Switch = true, RefSwitch = true, Merge = true,
                      RefMerge = true}

-- The ops a run of the model's signatures computes (nil when no
-- signature names a tensor): what serving runs, never the saver's
-- restore, nor what the init op reads before anything is assigned.
local function served_ops(g)
  local seeds = {}
  for _, key in ipairs(g:signature_names()) do
    local sig = g:signature(key)
    for _, t in pairs(sig and sig.outputs or {}) do
      if ge.type(t) == "tensor" then seeds[#seeds + 1] = t.op end
    end
  end
  if #seeds == 0 then return nil end
  local set = {}
  for _, op in ipairs(ge.get_backward_walk_ops(seeds, {inclusive = true})) do
    set[op] = true
  end
  return set
end

return {
  name = "insert_logging",
  description = [[
Print values of chosen ops as the graph runs.

After each selected op, inserts a Print op that passes its first output
through and logs it, and makes every reader of that output read the
Print instead.  Ops are selected by type (op), name prefix (prefix) and
names (name); with none of these, every op with a printable output.
The control-flow ops of TF1 loops and conds (Enter, Exit, Switch, Merge,
NextIteration, LoopCond) are never logged: log the ops around them.
Nor are variables (a Print after one would stand between it and its
Assign, which needs the variable itself); and in a model with
signatures only what a run of a signature computes is logged, never
the saver's restore or what the init op reads before it assigns it.]],
  params = {
    {name = "op", type = "list", default = {}, matches = "type",
     help = "op types to log"},
    {name = "prefix", type = "string", default = "",
     help = "log ops whose name starts with this"},
    {name = "name", type = "list", default = {}, matches = "op",
     help = "op names to log"},
    {name = "show_name", type = "bool", default = false,
     help = "start the message with the op's name"},
    {name = "show_op", type = "bool", default = false,
     help = "start the message with the op's type"},
    {name = "message", type = "string", default = "",
     help = "text printed before the values"},
    {name = "first_n", type = "int", default = -1,
     help = "log only the first N runs (-1: always)"},
    {name = "summarize", type = "int", default = 1024,
     help = "how many elements of each tensor to print"},
  },
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g, p)
    local types, names = {}, {}
    for _, t in ipairs(p.op) do types[t] = true end
    for _, n in ipairs(p.name) do names[n] = true end
    local any = #p.op > 0 or #p.name > 0 or p.prefix ~= ""
    local selected = {}
    -- chosen by type alone: only the ops of those types are looked at
    local candidates = (#p.name == 0 and p.prefix == "" and #p.op > 0)
                       and g:ops(p.op) or g:ops()
    local served = served_ops(g)
    local variables = {}
    for _, v in ipairs(g:variables()) do variables[v.op] = true end
    for _, op in ipairs(candidates) do
      local pick = not any or types[op.type] or names[op.name] or
                   (p.prefix ~= "" and op.name:sub(1, #p.prefix) == p.prefix)
      pick = pick and not variables[op] and (not served or served[op])
      local x = pick and op.outputs[1]
      local dt = x and x.dtype
      if dt and not dt:match("_ref$") and not NOT_PRINTABLE[dt] and
         not CONTROL_FLOW[op.type] then
        selected[#selected + 1] = op
      end
    end
    -- one Print per op, all made in one call: a template per dtype,
    -- and the message per op when it names the op
    local templates, messages = {}, nil
    if p.show_name then messages = {} end
    for i, op in ipairs(selected) do
      local dt = op:output(0).dtype
      if messages then
        local words = {}
        if p.show_op then words[#words + 1] = op.type end
        words[#words + 1] = op.name
        if p.message ~= "" then words[#words + 1] = p.message end
        messages[i] = table.concat(words, " ")
      end
      if not templates[dt] then
        local words = {}
        if p.show_op then words[#words + 1] = op.type end
        if p.message ~= "" then words[#words + 1] = p.message end
        templates[dt] = {{
          type = "Print", name = "__print__", inputs = {0, 0},
          attrs = {T = dt, U = {dt},
                   message = not messages and table.concat(words, " ")
                             or nil,
                   first_n = p.first_n, summarize = p.summarize},
          attr_kinds = {U = "list(type)"},
          site_attrs = {message = messages},
        }}
      end
    end
    if #selected > 0 then g:insert_after(selected, templates) end
  end,
}

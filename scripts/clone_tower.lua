-- clone_tower: replicate a model (or part of it) once per device, the
-- classic multi-GPU "tower" layout.

-- Tensors named like "x" or "x:1", and the tensors variables expose
-- (gerewrite.recipe, shared with the other copying recipes).
local helpers = require("gerewrite.recipe")
local tensors, variable_tensors = helpers.tensors, helpers.variable_tensors

-- The tensors the signatures name, by side (inputs, outputs), in a
-- stable order; an op a signature names (an init op) is no tensor.
local function signature_tensors(g, side)
  local out, seen = {}, {}
  for _, key in ipairs(g:signature_names()) do
    local sig = g:signature(key)
    local keys = {}
    for k in pairs(sig and sig[side] or {}) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local t = sig[side][k]
      if ge.type(t) == "tensor" and not seen[t] then
        seen[t] = true
        out[#out + 1] = t
      end
    end
  end
  return out
end

-- The model's inputs by default: the tensors its signatures feed and its
-- Placeholders, but for those another one is computed from (a serialized
-- tf.Example parsed into the x a signature feeds): the towers start
-- where the interface closest to the outputs does, so that every input
-- name stays fed.
local function default_inputs(g)
  local ins, seen = {}, {}
  local function add(t)
    if not seen[t] then seen[t] = true; ins[#ins + 1] = t end
  end
  for _, t in ipairs(signature_tensors(g, "inputs")) do add(t) end
  for _, op in ipairs(g:ops()) do
    if op.type == "Placeholder" or op.type == "PlaceholderV2" then
      add(op:output(0))
    end
  end
  local out = {}
  for _, t in ipairs(ins) do
    local upstream = false
    for _, u in ipairs(ins) do
      if u ~= t and #ge.get_walks_intersection_ops({t}, {u.op}) > 0 then
        upstream = true
        break
      end
    end
    if not upstream then out[#out + 1] = t end
  end
  return out
end

-- What to clone: the scope, or the ops on paths from the inputs to the
-- outputs (default: the model's inputs, and the tensors its signatures
-- fetch, else every op nobody reads).
local function select_view(g, p)
  if p.scope ~= "" then
    local v = ge.sgv_scope(p.scope:gsub("/+$", ""), g)
    if #v.ops == 0 then error("no op in scope '" .. p.scope .. "'") end
    return v
  end
  local ins = tensors(g, p.inputs)
  if #ins == 0 then ins = default_inputs(g) end
  local outs = {}
  for _, t in ipairs(tensors(g, p.outputs)) do outs[#outs + 1] = t.op end
  if #outs == 0 then
    for _, t in ipairs(signature_tensors(g, "outputs")) do
      outs[#outs + 1] = t.op
    end
  end
  if #outs == 0 then
    for _, op in ipairs(g:ops()) do
      if #op.outputs > 0 and #op:consumers() == 0 and
         #op:control_outputs() == 0 and op.type ~= "Const" and
         op.type ~= "Placeholder" and op.type ~= "PlaceholderV2" then
        outs[#outs + 1] = op
      end
    end
  end
  if #ins == 0 then error("no inputs: give inputs= or a scope=") end
  local ops = ge.get_walks_intersection_ops(ins, outs)
  if #ops == 0 then error("no op lies between the inputs and the outputs") end
  -- a tower holds whole while loops, never a part of one
  return ge.sgv(ge.whole_loops(ops))
end

local function const(g, name, dtype, value)
  return g:add_op{type = "Const", name = g:unique_name(name),
                  attrs = {dtype = dtype,
                           value = ge.tensor_value(dtype, {}, {value})}}
end

local function op(g, type, name, inputs, attrs)
  return g:add_op{type = type, name = g:unique_name(name), inputs = inputs,
                  attrs = attrs}:output(0)
end

-- The sizes of n parts of a batch of b (b // n, the first b % n one
-- more), computed at run time from src's shape.
local function run_time_sizes(g, base, src, n)
  local I = "int32"
  local shape = op(g, "Shape", base .. "/shape", {src},
                   {T = src.dtype, out_type = I})
  local vec = function(name, v)
    return g:add_op{type = "Const", name = g:unique_name(base .. "/" .. name),
                    attrs = {dtype = I, value = ge.tensor_value(I, {#v}, v)}}:output(0)
  end
  local b = op(g, "StridedSlice", base .. "/batch",
               {shape, vec("begin", {0}), vec("end", {1}), vec("strides", {1})},
               {T = I, Index = I, begin_mask = 0, end_mask = 0,
                ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 1})
  local nt = const(g, base .. "/towers", I, n):output(0)
  local q = op(g, "FloorDiv", base .. "/each", {b, nt}, {T = I})
  local r = op(g, "FloorMod", base .. "/rest", {b, nt}, {T = I})
  local idx = {}
  for i = 1, n do idx[i] = i - 1 end
  local more = op(g, "Less", base .. "/more", {vec("index", idx), r}, {T = I})
  local one = op(g, "Cast", base .. "/one_more", {more},
                 {SrcT = "bool", DstT = I, Truncate = false})
  return op(g, "AddV2", base .. "/sizes", {q, one}, {T = I})
end

-- Splits src along dimension 0 into n parts (dim0 its size, -1 when
-- unknown): equal parts when n divides it, else the first b % n parts
-- one larger (a batch of 3 on 2 towers: 2 and 1).
local function batch_split(g, base, src, dtype, n, dim0)
  local axis = const(g, base .. "/axis", "int32", 0)
  if dim0 >= 0 and dim0 % n == 0 then
    return g:add_op{type = "Split", name = g:unique_name(base),
                    inputs = {axis:output(0), src},
                    attrs = {T = dtype, num_split = n}}
  end
  local sizes
  if dim0 >= 0 then
    local v = {}
    for i = 1, n do v[i] = dim0 // n + (i <= dim0 % n and 1 or 0) end
    sizes = g:add_op{type = "Const", name = g:unique_name(base .. "/sizes"),
                     attrs = {dtype = "int32",
                              value = ge.tensor_value("int32", {n}, v)}}:output(0)
  else
    sizes = run_time_sizes(g, base, src, n)
  end
  return g:add_op{type = "SplitV", name = g:unique_name(base),
                  inputs = {src, sizes, axis:output(0)},
                  attrs = {T = dtype, Tlen = "int32", num_split = n}}
end

return {
  name = "clone_tower",
  -- whole-graph: names ops of the top-level graph; bodies are left alone
  functions = false,
  description = [[
Replicate a scope or a subgraph once per device ("towers").

The ops of `scope`, or those between `inputs` and `outputs`, are copied
`towers` times as tower_0 .. tower_N-1, each placed on its own device.
By default the inputs are the model's interface: the tensors its
signatures feed and its Placeholders, but for those another one is
computed from (half_plus_two parses a tf.Example into the x its
serving signature feeds: the towers read x, which stays, so that both
can still be fed); the outputs are the tensors the signatures fetch,
else every op nobody reads.  With split=batch each tower reads its
share of the batch (a Split along dimension 0 of every default input,
or of the given inputs) when the input has a batch dimension (a known rank of 1 or
more): equal shares when the towers divide the batch, else the first
ones one row more (a batch of 3 on 2 towers: 2 and 1, by a SplitV whose
sizes are computed at run time when the batch is unknown); scalars
(such as keep_prob) are fed whole to every tower, and
the recipe says which on stderr.  A model whose inputs are all scalars
has no batch to split: with combine=concat it is refused (exit 2,
nothing written), as the towers' outputs would be copies joined into a
batch the model never had.  An input of unknown rank is split at
run time: a Switch on its rank sends a scalar whole to every tower and
anything else through the Split (a Merge per tower takes what came).
With split=none every tower reads the inputs whole.  The ops between
inputs and outputs are taken with the whole TF1 while loops they are
in; a scope that holds part of a loop is refused, naming the loop.  Weights
and other tensors from outside are shared; variables are shared or
duplicated (each tower its own copy, initialized, saved and restored like
the original).  The outputs of the towers are combined: concat (along
dimension 0), mean, or none (the towers' outputs stay separate, and
readers of an output read tower 0's).  Readers of the original outputs
read the combined ones, which take the original names; the original ops
go.]],
  params = {
    {name = "towers", type = "int", default = 2, help = "how many copies"},
    {name = "scope", type = "string", default = "",
     help = "the name scope to clone (instead of inputs/outputs)"},
    {name = "inputs", type = "list", default = {},
     help = "tensors the towers read (default: the model's inputs)"},
    {name = "outputs", type = "list", default = {},
     help = "ops or tensors the towers compute (default: the "
            .. "signatures' outputs, else ops nobody reads)"},
    {name = "devices", type = "string", default = "/device:GPU:%d",
     help = "device of tower i: %d is replaced by i (empty: none)"},
    {name = "variables", type = "enum", choices = {"share", "duplicate"},
     default = "share", help = "one set of variables, or one per tower"},
    {name = "split", type = "enum", choices = {"batch", "none"},
     default = "batch", help = "split the inputs along dimension 0, or not"},
    {name = "combine", type = "enum", choices = {"concat", "mean", "none"},
     default = "concat", help = "how the towers' outputs are combined"},
  },
  numerics = "changes", -- changes what the model computes, by design (run --verify)
  run = function(g, p)
    local n = p.towers
    if n < 1 then error("towers must be at least 1") end
    local view = select_view(g, p)
    local originals = view.ops
    local inputs, outputs = view.inputs, view.outputs
    local in_view = {}
    for _, op in ipairs(originals) do in_view[op] = true end
    -- the inputs to split
    local split, whole, late = {}, {}, {}
    if p.split == "batch" then
      local chosen = {}
      for _, t in ipairs(tensors(g, p.inputs)) do chosen[t] = true end
      if #p.inputs == 0 and p.scope == "" then
        for _, t in ipairs(default_inputs(g)) do chosen[t] = true end
      end
      local wanted, scalars, nwanted = {}, {}, 0
      for _, t in ipairs(inputs) do
        if chosen[t] or (#p.inputs == 0 and t.op.type:find("^Placeholder")) then
          wanted[t] = true
          nwanted = nwanted + 1
          if t.shape and #t.shape == 0 then scalars[#scalars + 1] = t.name end
        end
      end
      -- nothing has a batch to split: concat would join copies of the
      -- same outputs into a batch the model never had
      if #scalars > 0 and #scalars == nwanted and p.combine == "concat" then
        return nil, string.format("clone_tower: input %s is a scalar: it "
          .. "has no batch dimension to split, and concat would join "
          .. "copies of the same outputs (combine=mean or none clone "
          .. "it)", table.concat(scalars, ", "))
      end
      for _, t in ipairs(inputs) do
        -- only a tensor with a batch dimension can be split along it;
        -- of unknown rank, whether it has one is known at run time
        if wanted[t] and t.shape and #t.shape == 0 then
          whole[#whole + 1] = t.name
        elseif wanted[t] then
          local dtype = t.dtype or error("the dtype of " .. t.name .. " is unknown")
          local base = t.op.name .. "/tower_split"
          local src = t
          local sw
          if not t.shape then
            local rank = g:add_op{type = "Rank", name = g:unique_name(base .. "/rank"),
                                  inputs = {t}, attrs = {T = dtype}}
            local zero = const(g, base .. "/zero", "int32", 0)
            local has = g:add_op{type = "Greater", name = g:unique_name(base .. "/has_batch"),
                                 inputs = {rank:output(0), zero:output(0)},
                                 attrs = {T = "int32"}}
            sw = g:add_op{type = "Switch", name = g:unique_name(base .. "/switch"),
                          inputs = {t, has:output(0)}, attrs = {T = dtype}}
            src = sw:output(1)
            late[#late + 1] = t.name
          end
          local s = batch_split(g, base, src, dtype, n,
                                t.shape and t.shape[1] or -1)
          split[t] = {}
          for i = 0, n - 1 do
            split[t][i] = s:output(i)
            if sw then
              split[t][i] = g:add_op{type = "Merge",
                                     name = g:unique_name(base .. "/merge_" .. i),
                                     inputs = {sw:output(0), s:output(i)},
                                     attrs = {N = 2, T = dtype}}:output(0)
            end
          end
        end
      end
    end
    if #whole > 0 then
      io.stderr:write("clone_tower: fed whole to every tower (no batch "
                      .. "dimension): " .. table.concat(whole, ", ") .. "\n")
    end
    if #late > 0 then
      io.stderr:write("clone_tower: split at run time when they have a "
                      .. "batch dimension (unknown rank): "
                      .. table.concat(late, ", ") .. "\n")
    end
    -- frames before any edit (each edit would have them recomputed)
    local inside = {}
    for k, t in ipairs(outputs) do
      inside[k] = t.op.frame ~= "" and not t.op.type:match("Exit$")
    end
    local varts = variable_tensors(g)
    -- the towers
    local tower_outputs = {}
    for i = 0, n - 1 do
      local repl = {}
      for _, t in ipairs(inputs) do
        if split[t] then
          repl[t] = split[t][i]
        elseif not (varts[t] and p.variables == "duplicate") then
          repl[t] = t
        end
      end
      local copy = ge.copy_with_input_replacements(view, repl,
        {dst_scope = "tower_" .. i, variables = p.variables})
      if p.devices ~= "" then
        local dev = p.devices:find("%d", 1, true) and
                    string.format(p.devices, i) or p.devices
        for _, op in ipairs(copy.ops) do op.device = dev end
      end
      tower_outputs[i + 1] = copy.outputs
    end
    -- combine, and read the combination instead of the originals
    local renames = {}
    local asked = {}
    for _, t in ipairs(tensors(g, p.outputs)) do asked[t.op] = true end
    for k, t in ipairs(outputs) do
      -- a tensor inside a while loop (a loop variable nobody reads out of
      -- the loop) cannot be combined outside its frame: the towers keep
      -- theirs
      if inside[k] then
        goto next_output
      end
      -- with outputs given, only those and what the rest of the graph
      -- reads are combined, not the tensors of the view nobody reads (a
      -- while loop's counter)
      if #p.outputs > 0 and not asked[t.op] then
        local read = false
        for _, c in ipairs(t:consumers()) do
          if not in_view[c] then read = true end
        end
        if not read then goto next_output end
      end
      local parts = {}
      for i = 1, n do parts[i] = tower_outputs[i][k] end
      local combined
      local base = t.op.name .. (t.index > 0 and "_" .. t.index or "")
      local dtype = t.dtype
      if p.combine == "none" or n == 1 then
        combined = parts[1]
      elseif p.combine == "concat" then
        local shape = t.shape
        if shape and #shape == 0 then
          error(string.format("output %s is a scalar: concat cannot join "
                              .. "scalars (combine=mean can)", t.name))
        end
        local axis = const(g, base .. "/towers/axis", "int32", 0)
        local values = {}
        for i = 1, n do values[i] = parts[i] end
        values[n + 1] = axis:output(0)
        combined = g:add_op{type = "ConcatV2", name = g:unique_name(base .. "/towers"),
                            inputs = values,
                            attrs = {N = n, T = dtype or error("the dtype of " ..
                                     t.name .. " is unknown"), Tidx = "int32"}}:output(0)
      else
        if not (dtype == "float16" or dtype == "bfloat16" or
                dtype == "float32" or dtype == "float64") then
          error(string.format("output %s is %s: combine=mean averages "
                              .. "floating-point outputs only (combine=concat "
                              .. "or none can)", t.name, tostring(dtype)))
        end
        local sum = g:add_op{type = "AddN", name = g:unique_name(base .. "/towers/sum"),
                             inputs = parts,
                             attrs = {N = n, T = dtype or error("the dtype of " ..
                                      t.name .. " is unknown")}}
        local scale = const(g, base .. "/towers/scale", dtype, 1 / n)
        combined = g:add_op{type = "Mul", name = g:unique_name(base .. "/towers"),
                            inputs = {sum:output(0), scale:output(0)},
                            attrs = {T = dtype}}:output(0)
      end
      t:replace_all_uses_with(combined, {cannot_modify = originals})
      if t.index == 0 and combined.op ~= parts[1].op then
        renames[#renames + 1] = {op = combined.op, name = t.op.name, orig = t.op}
      end
      ::next_output::
    end
    -- the originals nobody reads any more go, readers first
    local gone = {}
    repeat
      local changed = false
      for i = #originals, 1, -1 do
        local op = originals[i]
        if not gone[op] and #op:consumers() == 0 and
           #op:control_outputs() == 0 then
          g:remove_op(op)
          gone[op] = true
          changed = true
        end
      end
    until not changed
    for _, r in ipairs(renames) do
      if gone[r.orig] and not g:op(r.name) then r.op.name = r.name end
    end
    return {towers = n, fed_whole = whole}
  end,
}

-- fold_constant_mul: fold a Mul by a constant into the weights of the
-- Conv2D, DepthwiseConv2dNative or MatMul before it, written with ge.match.
local m = ge.match

local FLOATS = {float16 = true, bfloat16 = true, float32 = true,
                float64 = true}

-- The producers whose weights can absorb a per-output-channel factor.
-- For each: the rank of its output, the position of the channel axis in
-- that output counted from the end, and a function giving the channel of
-- weight element i (0-based, in row-major order) and the channel count.
local function layout(conv, wshape)
  local t = conv.type
  if t == "MatMul" then
    if #wshape ~= 2 then return nil end
    if conv:attr("transpose_b") then
      -- w is [N, K]: a row per output column
      local n, k = wshape[1], wshape[2]
      return {rank = 2, axis = 0, channels = n,
              channel = function(i) return i // k end}
    end
    local n = wshape[2]
    return {rank = 2, axis = 0, channels = n,
            channel = function(i) return i % n end}
  end
  if #wshape ~= 4 then return nil end
  local fmt = conv:attr("data_format") or "NHWC"
  local axis
  if fmt == "NHWC" then axis = 0
  elseif fmt == "NCHW" then axis = 2
  else return nil end
  -- Conv2D filters are [h, w, in, out]; depthwise ones [h, w, in, mult]
  -- with output channel c * mult + j, i.e. the last two dims flattened.
  local n = wshape[4]
  if t == "DepthwiseConv2dNative" then n = wshape[3] * wshape[4] end
  return {rank = 4, axis = axis, channels = n,
          channel = function(i) return i % n end}
end

-- How the scale s applies to the weights w of conv: a function from a
-- weight element's index to the scale element (0-based), or nil and why
-- the site is left alone.
local function plan(conv, w, s)
  if w.dtype ~= s.dtype then
    return nil, "weights and scale differ in dtype"
  end
  if not FLOATS[w.dtype] then
    return nil, "dtype " .. tostring(w.dtype) .. " is not a float type"
  end
  local wshape = {}
  for i = 1, #w.shape do wshape[i] = w.shape[i] end
  local lay = layout(conv, wshape)
  if not lay then return nil, "unsupported weights layout" end
  local sshape = s.shape
  -- a scale of higher rank would broadcast the result to a new shape
  if #sshape > lay.rank then return nil, "scale has too many dims" end
  if #s == 1 then return function() return 0 end end
  if #s ~= lay.channels then
    return nil, "scale is neither a scalar nor one value per channel"
  end
  -- exactly one dim is not 1: the channel axis of the output
  for d = 1, #sshape do
    local from_end = #sshape - d
    if sshape[d] ~= 1 and from_end ~= lay.axis then
      return nil, "scale does not broadcast along the channel axis"
    end
  end
  return lay.channel
end

local function fold(hit, g)
  local conv, wop, sop, mul = hit.conv, hit.w, hit.s, hit[1]
  local w, s = wop:attr("value"), sop:attr("value")
  local index = plan(conv, w, s)
  if not index then return false end
  local out, scale = {}, s:totable()
  local vals = w:totable()
  for i = 1, #vals do
    out[i] = vals[i] * scale[index(i - 1) + 1]
  end
  local shape = {}
  for i = 1, #w.shape do shape[i] = w.shape[i] end
  local nw = ge.tensor_value(w.dtype, shape, out)
  -- Weights read elsewhere (another conv) keep their value: the folded
  -- ones go to a new Const.
  local shared = #wop:consumers() > 1 or #wop:control_outputs() > 0
  if shared then
    local c = g:add_op{type = "Const", name = g:unique_name(wop.name .. "/folded"),
                       device = wop.device,
                       attrs = {dtype = w.dtype, value = nw}}
    conv:set_input(1, c:output(0))
  else
    wop:set_attr("value", nw)
  end
  -- The conv takes the Mul's place and name, so whatever fetched the
  -- Mul's output by name (a signature, an outputs list) still finds it;
  -- control edges into and out of the Mul now attach to the conv.
  mul:output(0):replace_all_uses_with(conv:output(0))
  local cin = {}
  for _, c in ipairs(mul.control_inputs) do
    if type(c) ~= "string" then cin[#cin + 1] = c end
  end
  local waiting = mul:control_outputs()
  local name = mul.name
  g:remove_op(mul, {force = true})
  if #cin > 0 then
    local have = {}
    for _, c in ipairs(conv.control_inputs) do have[c] = true end
    local add = {}
    for _, c in ipairs(cin) do
      if not have[c] then add[#add + 1] = c end
    end
    if #add > 0 then ge.add_control_inputs(conv, add) end
  end
  for _, c in ipairs(waiting) do
    local has = false
    for _, x in ipairs(c.control_inputs) do
      if x == conv then has = true end
    end
    if not has and c ~= conv then ge.add_control_inputs(c, {conv}) end
  end
  conv.name = name
  return true
end

-- Mul(conv(x, const w), const s) in either operand order, the conv read
-- by the Mul alone.
local function pattern()
  local conv = m.op("Conv2D|DepthwiseConv2dNative|MatMul", m.any "x",
                    m.const "w"):single_use():as "conv"
  return m.commute("Mul", conv, m.const "s")
end

return {
  name = "fold_constant_mul",
  description = [[
Fold a Mul by a constant into the weights of the conv or MatMul before it.

Finds Mul(op(x, Const w), Const s), the Mul's operands in either order,
where op is Conv2D, DepthwiseConv2dNative or MatMul and the Mul is the
only reader of op, and s is a scalar or one value per output channel
(shape [C], or [1, ..., C] broadcasting along the channel axis: the last
one for NHWC and MatMul, [C, 1, 1] for NCHW).  The weights become
w * s, each output channel scaled by its factor (for MatMul, each
column; each row of w when transpose_b is set; for depthwise filters
[h, w, in, mult], channel in * mult + j), in the weights' dtype (float16,
bfloat16, float32 or float64).  The op then takes the Mul's place and
name: the Mul's readers read it, the Mul's control edges move to it.
Weights that other ops also read are copied to a new Const
(<weights>/folded) instead of being changed.  Sites that do not fit
(another reader of the conv, a scale of another shape, integer dtypes)
are left as they are.  Repeats until no site is left, so
Mul(Mul(conv, a), b) folds both factors.]],
  params = {
    {name = "max_iterations", type = "int", default = 100,
     help = "passes over the graph at most (each folds one Mul per conv)"},
  },
  pattern = pattern,
  numerics = "rounding", -- outputs equal up to float rounding (operations regrouped) (run --verify)
  run = function(g, p)
    local counts, passes = ge.rewrite(g, {
      {name = "fold_constant_mul", pattern = pattern(), action = fold},
    }, {mode = "fixpoint", max_iterations = p.max_iterations})
    return {folded = counts[1], passes = passes}
  end,
}

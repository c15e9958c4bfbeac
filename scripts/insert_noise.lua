-- insert_noise: Gaussian noise after chosen ops, e.g. to test a model's
-- robustness or to regularize fine-tuning.
local FLOAT32 = "float32"
local INTEGER = {int8 = true, int16 = true, int32 = true, int64 = true,
                 uint8 = true, uint16 = true, uint32 = true, uint64 = true}
local FLOATING = {float16 = true, bfloat16 = true, float32 = true,
                  float64 = true}

return {
  name = "insert_noise",
  description = [[
Add Gaussian noise after ops of chosen types (default Conv2D).

After every op of the given types, adds x + stddev * N(0, 1) to its
first output x and makes every op that read x read the noisy value.
The noise is RandomStandardNormal(Shape(x)) in float32, cast to x's
dtype when that is another, scaled by a Const of x's dtype; its ops are
named <op>/noise/... and placed on the op's device.  Seeds: seed is the
graph-level seed and each site gets seed2 = its position (1, 2, ...), so
the sites draw different noise and runs repeat; seed=-1 asks TensorFlow
for nondeterministic noise (seed = seed2 = 0).

Integer outputs (int32, ...) are refused, naming the op, unless
integers=cast: then x is cast to float32, the noise added, the sum
rounded and cast back.  Other dtypes (bool, string, ...) are refused.
An op whose output nobody reads gets no noise (it would change
nothing): such sites are listed on stderr.  Inside a TF1 while loop the
noise runs in the loop's frame.]],
  params = {
    {name = "types", type = "list", default = "Conv2D",
     help = "op types after which noise goes (comma-separated)"},
    {name = "stddev", type = "number", default = 0.1,
     help = "standard deviation of the noise"},
    {name = "seed", type = "int", default = 0,
     help = "random seed (-1: nondeterministic)"},
    {name = "integers", type = "enum", choices = {"refuse", "cast"},
     default = "refuse",
     help = "integer outputs: refuse them, or add the noise in float32 "
            .. "and round"},
  },
  run = function(g, p)
    if p.stddev < 0 then error("stddev must not be negative") end
    local types = {}
    for _, t in ipairs(p.types) do types[t] = true end
    local sites, unread = {}, {}
    -- frames before any edit: an op in a loop anchors its Const there
    local in_loop = {}
    for _, op in ipairs(g:ops()) do
      if types[op.type] then
        sites[#sites + 1] = op
        in_loop[op] = op.frame ~= ""
      end
    end
    local done = 0
    -- the stddev tensor of each dtype, made once
    local stddevs = {}
    for i, op in ipairs(sites) do
      local x = op:output(0)
      -- ops without an OpDef (_FusedConv2D) usually say their type in T
      local dtype = x.dtype
      if not dtype then
        local t, kind = op:attr("T")
        if kind == "type" then dtype = t end
      end
      if not dtype then
        error(string.format("the dtype of %s is unknown", x.name))
      end
      local cast = false
      if INTEGER[dtype] then
        if p.integers ~= "cast" then
          error(string.format("%s (%s) is %s: noise on integers needs "
            .. "integers=cast (add in float32, round)", x.name, op.type,
            dtype))
        end
        cast = true
      elseif not FLOATING[dtype] then
        error(string.format("%s (%s) is %s: no noise can be added to it",
                            x.name, op.type, dtype))
      end
      -- who reads x, by input slot, before the noise ops read it too
      local readers = {}
      for _, c in ipairs(x:consumers()) do
        for slot, t in ipairs(c.inputs) do
          if t == x then readers[#readers + 1] = {c, slot - 1} end
        end
      end
      if #readers == 0 then
        unread[#unread + 1] = op.name
        goto continue
      end
      local scope = op.name .. "/noise/"
      local dev = op.device
      local function add(spec)
        spec.name = g:unique_name(scope .. spec.name)
        spec.device = dev
        return g:add_op(spec)
      end
      local src, sdtype = x, dtype
      if cast then
        src = add{type = "Cast", name = "to_float", inputs = {x},
                  attrs = {SrcT = dtype, DstT = FLOAT32,
                           Truncate = false}}:output(0)
        sdtype = FLOAT32
      end
      local shape = add{type = "Shape", name = "shape", inputs = {x},
                        attrs = {T = dtype, out_type = "int32"}}
      local seed, seed2 = p.seed, i
      if p.seed < 0 then seed, seed2 = 0, 0 end
      local noise = add{type = "RandomStandardNormal", name = "random",
                        inputs = {shape:output(0)},
                        attrs = {dtype = FLOAT32, T = "int32",
                                 seed = seed, seed2 = seed2}}:output(0)
      if sdtype ~= FLOAT32 then
        noise = add{type = "Cast", name = "cast", inputs = {noise},
                    attrs = {SrcT = FLOAT32, DstT = sdtype,
                             Truncate = false}}:output(0)
      end
      -- a Const has no input: in a loop it waits on the site, which puts
      -- it in the loop's frame (as tf.while_loop does with its pivot)
      local value = stddevs[sdtype]
      if not value then
        value = ge.tensor_value(sdtype, {}, {p.stddev})
        stddevs[sdtype] = value
      end
      local stddev = add{type = "Const", name = "stddev",
                         control_inputs = in_loop[op] and {op} or nil,
                         attrs = {dtype = sdtype, value = value}}
      local scaled = add{type = "Mul", name = "mul",
                         inputs = {noise, stddev:output(0)},
                         attrs = {T = sdtype}}
      local noisy = add{type = "AddV2", name = "add",
                        inputs = {src, scaled:output(0)},
                        attrs = {T = sdtype}}:output(0)
      if cast then
        local r = add{type = "Round", name = "round", inputs = {noisy},
                      attrs = {T = FLOAT32}}
        noisy = add{type = "Cast", name = "to_" .. dtype,
                    inputs = {r:output(0)},
                    attrs = {SrcT = FLOAT32, DstT = dtype,
                             Truncate = false}}:output(0)
      end
      for _, r in ipairs(readers) do
        r[1]:set_input(r[2], noisy)
      end
      done = done + 1
      ::continue::
    end
    if #unread > 0 then
      io.stderr:write("insert_noise: no noise after ops nobody reads "
                      .. "(it would change nothing): "
                      .. table.concat(unread, ", ") .. "\n")
    end
    return {sites = done, unread = unread}
  end,
}

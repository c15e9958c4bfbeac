-- insert_noise: Gaussian noise after chosen ops, e.g. to test a model's
-- robustness or to regularize fine-tuning.
local FLOAT32 = "float32"

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
for nondeterministic noise (seed = seed2 = 0).]],
  params = {
    {name = "types", type = "list", default = "Conv2D",
     help = "op types after which noise goes (comma-separated)"},
    {name = "stddev", type = "number", default = 0.1,
     help = "standard deviation of the noise"},
    {name = "seed", type = "int", default = 0,
     help = "random seed (-1: nondeterministic)"},
  },
  run = function(g, p)
    if p.stddev < 0 then error("stddev must not be negative") end
    local types = {}
    for _, t in ipairs(p.types) do types[t] = true end
    local sites = {}
    for _, op in ipairs(g:ops()) do
      if types[op.type] then sites[#sites + 1] = op end
    end
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
      -- who reads x, by input slot, before the noise ops read it too
      local readers = {}
      for _, c in ipairs(x:consumers()) do
        for slot, t in ipairs(c.inputs) do
          if t == x then readers[#readers + 1] = {c, slot - 1} end
        end
      end
      local scope = op.name .. "/noise/"
      local dev = op.device
      local function add(spec)
        spec.name = g:unique_name(scope .. spec.name)
        spec.device = dev
        return g:add_op(spec)
      end
      local shape = add{type = "Shape", name = "shape", inputs = {x},
                        attrs = {T = dtype, out_type = "int32"}}
      local seed, seed2 = p.seed, i
      if p.seed < 0 then seed, seed2 = 0, 0 end
      local noise = add{type = "RandomStandardNormal", name = "random",
                        inputs = {shape:output(0)},
                        attrs = {dtype = FLOAT32, T = "int32",
                                 seed = seed, seed2 = seed2}}:output(0)
      if dtype ~= FLOAT32 then
        noise = add{type = "Cast", name = "cast", inputs = {noise},
                    attrs = {SrcT = FLOAT32, DstT = dtype,
                             Truncate = false}}:output(0)
      end
      local stddev = add{type = "Const", name = "stddev",
                         attrs = {dtype = dtype,
                                  value = ge.tensor_value(dtype, {},
                                                          {p.stddev})}}
      local scaled = add{type = "Mul", name = "mul",
                         inputs = {noise, stddev:output(0)},
                         attrs = {T = dtype}}
      local noisy = add{type = "AddV2", name = "add",
                        inputs = {x, scaled:output(0)}, attrs = {T = dtype}}
      for _, r in ipairs(readers) do
        r[1]:set_input(r[2], noisy:output(0))
      end
    end
  end,
}

-- insert_noise: Gaussian noise after chosen ops, e.g. to test a model's
-- robustness or to regularize fine-tuning.
local FLOAT32 = "float32"
local INTEGER = {int8 = true, int16 = true, int32 = true, int64 = true,
                 uint8 = true, uint16 = true, uint32 = true, uint64 = true}
local FLOATING = {float16 = true, bfloat16 = true, float32 = true,
                  float64 = true}
-- the sites numbered so far in each model (by its graph): a model's
-- function bodies go on from its graph and the bodies run before them
local numbered = setmetatable({}, {__mode = "k"})

return {
  name = "insert_noise",
  description = [[
Add Gaussian noise after ops of chosen types (default Conv2D).

After every op of the given types, adds x + stddev * N(0, 1) to its
first output x and makes every op that read x read the noisy value.
The noise is RandomStandardNormal(Shape(x)) in float32, cast to x's
dtype when that is another, scaled by a Const of x's dtype; its ops are
named <op>/noise/... and placed on the op's device.  Seeds: seed is the
graph-level seed and each site gets seed2 = its position (1, 2, ...),
counted on through the function bodies after the graph's sites, so the
sites draw different noise and runs repeat; seed=-1 asks TensorFlow for
nondeterministic noise (seed = seed2 = 0).

Integer outputs (int32, ...) are refused, naming the op, unless
integers=cast: then x is cast to float32, the noise added, the sum
rounded and cast back.  Other dtypes (bool, string, ...) are refused.
An op whose output nobody reads gets no noise (it would change
nothing): such sites are listed on stderr.  Inside a TF1 while loop the
noise runs in the loop's frame.]],
  params = {
    {name = "types", type = "list", default = "Conv2D", matches = "type",
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
  numerics = "changes", -- changes what the model computes, by design (run --verify)
  run = function(g, p)
    if p.stddev < 0 then error("stddev must not be negative") end
    -- every op of the types, without a wrapper for each
    local sites = {types = p.types}
    -- seed2: the site's position (1, 2, ...) in the model, the graph's
    -- sites first, then each body's after those before it (a body run
    -- alone counts from 1); both 0 for seed=-1
    local fns = g:functions()
    local model = #fns > 0 and fns[1].parent or g
    local before = numbered[model] or 0
    local seed, seed2, site_attrs = p.seed, nil, {seed2 = "position"}
    if seed < 0 then
      seed, seed2, site_attrs = 0, 0, nil
    elseif before > 0 then
      local seeds = {}
      for i = 1, #g:ops(p.types) do seeds[i] = before + i end
      site_attrs = {seed2 = seeds}
    end
    -- the ops after a site of dtype `dtype`; inputs: 0 is the site, k
    -- the k-th op of the list
    local function template(dtype)
      local ops = {}
      local function add(spec)
        spec.name = "/noise/" .. spec.name
        ops[#ops + 1] = spec
        return #ops
      end
      local cast = INTEGER[dtype]
      local src, sdtype = 0, dtype
      if cast then
        src = add{type = "Cast", name = "to_float", inputs = {0},
                  attrs = {SrcT = dtype, DstT = FLOAT32, Truncate = false}}
        sdtype = FLOAT32
      end
      local shape = add{type = "Shape", name = "shape", inputs = {0},
                        attrs = {T = dtype, out_type = "int32"}}
      local noise = add{type = "RandomStandardNormal", name = "random",
                        inputs = {shape},
                        attrs = {dtype = FLOAT32, T = "int32", seed = seed,
                                 seed2 = seed2},
                        site_attrs = site_attrs}
      if sdtype ~= FLOAT32 then
        noise = add{type = "Cast", name = "cast", inputs = {noise},
                    attrs = {SrcT = FLOAT32, DstT = sdtype,
                             Truncate = false}}
      end
      -- a Const has no input: in a loop it waits on the site, which puts
      -- it in the loop's frame (as tf.while_loop does with its pivot)
      local stddev = add{type = "Const", name = "stddev", loop_anchor = true,
                         attrs = {dtype = sdtype,
                                  value = ge.tensor_value(sdtype, {},
                                                          {p.stddev})}}
      local scaled = add{type = "Mul", name = "mul",
                         inputs = {noise, stddev}, attrs = {T = sdtype}}
      local noisy = add{type = "AddV2", name = "add", inputs = {src, scaled},
                        attrs = {T = sdtype}}
      if cast then
        local r = add{type = "Round", name = "round", inputs = {noisy},
                      attrs = {T = FLOAT32}}
        add{type = "Cast", name = "to_" .. dtype, inputs = {r},
            attrs = {SrcT = FLOAT32, DstT = dtype, Truncate = false}}
      end
      return ops
    end
    local templates = {}
    for dtype in pairs(FLOATING) do templates[dtype] = template(dtype) end
    if p.integers == "cast" then
      for dtype in pairs(INTEGER) do templates[dtype] = template(dtype) end
    end
    -- ops without an OpDef (_FusedConv2D) usually say their type in T
    local r, _, op, dtype = g:insert_after(sites, templates,
                                           {skip_unread = true,
                                            dtype_attr = "T"})
    if not r then
      local x = op:output(0)
      if not dtype then
        error(string.format("the dtype of %s is unknown", x.name))
      elseif INTEGER[dtype] then
        error(string.format("%s (%s) is %s: noise on integers needs "
          .. "integers=cast (add in float32, round)", x.name, op.type,
          dtype))
      end
      error(string.format("%s (%s) is %s: no noise can be added to it",
                          x.name, op.type, dtype))
    end
    numbered[model] = before + r.inserted + #r.skipped
    local unread = {}
    for i, s in ipairs(r.skipped) do unread[i] = s.name end
    if #unread > 0 then
      io.stderr:write("insert_noise: no noise after ops nobody reads "
                      .. "(it would change nothing): "
                      .. table.concat(unread, ", ") .. "\n")
    end
    return {sites = r.inserted, unread = unread}
  end,
}

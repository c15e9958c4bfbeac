-- set_input_shape: give Placeholders a shape (or a batch size) and check
-- that it propagates through the graph.
local function parse_dims(s, where)
  if s == "" then return {} end
  local dims = {}
  for d in (s .. "x"):gmatch("([^xX,]*)[xX,]") do
    local n = d == "?" and -1 or math.tointeger(tonumber(d))
    if not n or n < -1 then
      error(string.format("%s: '%s' is not a dimension", where, d))
    end
    dims[#dims + 1] = n
  end
  return dims
end

local PLACEHOLDER = {Placeholder = true, PlaceholderV2 = true,
                     PlaceholderWithDefault = true}

return {
  name = "set_input_shape",
  -- names Placeholders of the top-level graph; bodies are left alone
  functions = false,
  description = [[
Set the shapes of Placeholders, or their batch size, and propagate.

`shapes` lists `name:1x224x224x3` entries (`?` or -1 for an unknown
dim); `batch` sets the first dim of every Placeholder whose rank is
known and at least 1.  Shape inference then runs over the whole graph:
a shape that cannot hold (a Reshape to a constant shape of another
size, a MatMul whose inner dims differ) fails the recipe, naming the
op.  `_output_shapes` attrs, where the model has them, are rewritten
from the new shapes.]],
  params = {
    {name = "shapes", type = "list", default = {},
     help = "name:1x224x224x3 entries"},
    {name = "batch", type = "int", default = 0,
     help = "batch size: the first dim of every Placeholder (0: leave)"},
  },
  numerics = "exact", -- the outputs stay bit-equal (run --verify)
  run = function(g, p)
    if #p.shapes == 0 and p.batch <= 0 then
      error("give shapes=name:DIMS,... or batch=N")
    end
    local set = 0
    for _, e in ipairs(p.shapes) do
      local name, dims = e:match("^(.-):([^:]*)$")
      if not name then
        error("shapes: '" .. e .. "' is not name:DIMS")
      end
      local op = g:op(name) or error("shapes: no op named '" .. name .. "'")
      if not PLACEHOLDER[op.type] then
        error(string.format("shapes: '%s' is a %s, not a Placeholder",
                            name, op.type))
      end
      op:set_attr("shape", ge.shape(parse_dims(dims, "shapes: " .. name)))
      set = set + 1
    end
    if p.batch > 0 then
      for _, op in ipairs(g:ops()) do
        if PLACEHOLDER[op.type] then
          local s = op:output(0).shape
          if s and #s >= 1 then
            s[1] = p.batch
            op:set_attr("shape", ge.shape(s))
            set = set + 1
          end
        end
      end
    end
    if set == 0 then error("no Placeholder with a known rank to set") end
    local recorded = false
    for _, op in ipairs(g:ops()) do
      if op:attr("_output_shapes") ~= nil then recorded = true break end
    end
    -- stale records would contradict the new shapes
    if recorded then
      for _, op in ipairs(g:ops()) do op:remove_attr("_output_shapes") end
    end
    local _, why = ge.infer_shapes(g)
    if why.message then error(why.message, 0) end
    if recorded then ge.add_output_shapes(g) end
  end,
}

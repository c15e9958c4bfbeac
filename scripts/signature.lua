-- signature: edit a model's serving interface, its SignatureDefs (and, in
-- a TF2 SavedModel, the object graph's `signatures` with them).
local function key_of(spec)
  -- "key=tensor", or a tensor whose op name is the key
  local k, t = spec:match("^([^=]+)=(.+)$")
  if k then return k, t end
  local named, op = pcall(ge.op_name, spec)
  if not named then op = spec end
  return (op:gsub("[^%w_]", "_")), spec
end

local function keys(list)
  local out = {}
  for _, spec in ipairs(list) do
    local k, t = key_of(spec)
    if out[k] then return nil, "duplicate key '" .. k .. "'" end
    out[k] = t
  end
  return out
end

local function pairs_of(list, what)
  local out = {}
  for _, s in ipairs(list) do
    local a, b = s:match("^([^:]+):(.+)$")
    if not a then
      return nil, what .. " '" .. s .. "' is not OLD:NEW"
    end
    out[#out + 1] = {a, b}
  end
  return out
end

-- Runs f, turning a raised error into nil and its message (position cut).
local function try(f, ...)
  local ok, msg = pcall(f, ...)
  if ok then return true end
  return nil, (tostring(msg):gsub("^[^\n]-:%d+: ", ""))
end

return {
  name = "signature",
  description = [[
Set, rename or remove signatures, or rename their keys.

Steps run in this order: `remove` drops signatures, `rename` renames
them (OLD:NEW), then when `inputs` or `outputs` is given the signature
`name` is set to them (made, or replaced as a whole; an entry is
KEY=TENSOR, or a TENSOR whose op name is the key: `x:0` is key `x`),
and last `rename_inputs` / `rename_outputs` (OLD:NEW) rename keys of
`name`.  Dtypes and shapes are inferred.  In a TF2 SavedModel the
object graph follows: a set makes a signature function in the library
and binds it under the root's `signatures`, as TensorFlow writes it.
A tensor that is not there, a duplicate key or a name that is taken
refuses the model (exit 2, nothing written).]],
  params = {
    {name = "name", type = "string", default = "serving_default",
     help = "the signature to set, or whose keys to rename"},
    {name = "inputs", type = "list", default = {},
     help = "KEY=TENSOR or TENSOR entries (x:0, images=input_1:0)"},
    {name = "outputs", type = "list", default = {},
     help = "KEY=TENSOR or TENSOR entries (logits:0,probs:0)"},
    {name = "method_name", type = "string", default = "",
     help = "the method name (default: the old one, or "
            .. "tensorflow/serving/predict)"},
    {name = "rename", type = "list", default = {},
     help = "OLD:NEW signature renames"},
    {name = "remove", type = "list", default = {},
     help = "signatures to remove"},
    {name = "rename_inputs", type = "list", default = {},
     help = "OLD:NEW input key renames of signature `name`"},
    {name = "rename_outputs", type = "list", default = {},
     help = "OLD:NEW output key renames of signature `name`"},
  },
  numerics = "exact",
  functions = false, -- signatures belong to the top-level graph
  run = function(g, p)
    local ok, err
    for _, name in ipairs(p.remove) do
      ok, err = try(g.remove_signature, g, name)
      if not ok then return nil, err end
    end
    local ren, bad = pairs_of(p.rename, "rename")
    if not ren then return nil, bad end
    for _, r in ipairs(ren) do
      ok, err = try(g.rename_signature, g, r[1], r[2])
      if not ok then return nil, err end
    end
    if #p.inputs > 0 or #p.outputs > 0 then
      local ins, e1 = keys(p.inputs)
      if not ins then return nil, "signature '" .. p.name .. "': " .. e1 end
      local outs, e2 = keys(p.outputs)
      if not outs then return nil, "signature '" .. p.name .. "': " .. e2 end
      ok, err = try(g.set_signature, g, p.name, {
        inputs = ins, outputs = outs,
        method_name = p.method_name ~= "" and p.method_name or nil})
      if not ok then return nil, err end
    end
    for side, list in pairs({inputs = p.rename_inputs,
                             outputs = p.rename_outputs}) do
      local rk, e = pairs_of(list, "rename_" .. side)
      if not rk then return nil, e end
      for _, r in ipairs(rk) do
        ok, err = try(g.rename_signature, g, p.name, p.name,
                      {[side] = {[r[1]] = r[2]}})
        if not ok then return nil, err end
      end
    end
  end,
}

-- obfuscate_names: replace op names by short meaningless ones
-- (transform_graph's obfuscate_names).

-- The k-th name (from 1) in bijective base 26: a .. z, aa .. zz, aaa ...
-- Colocation attrs (_class = {"loc:@name"}) name ops by their old names
-- after a rename: point them at the new ones.  (The library does not
-- follow renames there yet; once it does, nothing matches here.)
local function follow_colocation(g, renamed)
  for _, op in ipairs(g:ops()) do
    local cls, kind = op:attr("_class")
    if cls and kind == "list(s)" then
      local changed = false
      for i, s in ipairs(cls) do
        local n = s:match("^loc:@(.*)$")
        if n and renamed[n] and not g:op(n) then
          cls[i] = "loc:@" .. renamed[n]
          changed = true
        end
      end
      if changed then op:set_attr("_class", cls, "list(s)") end
    end
  end
end

local function short_name(k)
  local s = ""
  repeat
    local d = (k - 1) % 26
    s = string.char(97 + d) .. s
    k = (k - 1) // 26
  until k == 0
  return s
end

return {
  name = "obfuscate_names",
  description = [[
Rename every op but the inputs and outputs to short names.

Renames every op but the inputs and outputs to a short generated name
(a, b, ..., z, ba, ...), in node order, so the result is the same on
every run.  References follow (inputs, colocation, collections,
signatures).  Makes graphs smaller and hides their structure's names.]],
  params = {
    {name = "inputs", type = "list", default = {},
     help = "ops that keep their names"},
    {name = "outputs", type = "list", default = {},
     help = "ops that keep their names"},
  },
  run = function(g, p)
    local keep, keep_lower = {}, {}
    for _, list in ipairs{p.inputs, p.outputs} do
      for _, s in ipairs(list) do
        local n = s:gsub("^%^", ""):gsub(":%d+$", "")
        if not g:op(n) then error("no op named '" .. n .. "'") end
        keep[n] = true
        keep_lower[n:lower()] = true
      end
    end
    local renamed = {}
    for _, op in ipairs(g:ops()) do
      if not keep[op.name] then renamed[#renamed + 1] = op end
    end
    -- first out of the way, then to the final names
    local old = {}
    for i, op in ipairs(renamed) do
      old[i] = op.name
      op.name = g:unique_name("__obfuscate_tmp")
    end
    local k, map = 0, {}
    for i, op in ipairs(renamed) do
      local n
      repeat
        k = k + 1
        n = short_name(k)
      until not keep_lower[n]
      op.name = n
      map[old[i]] = n
    end
    follow_colocation(g, map)
  end,
}

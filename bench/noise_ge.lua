-- noise_ge.lua: noise after every Conv2D as a graph_editor user writes it,
-- op by op (what ../shared/peer/pypeer.py noise does): for each Conv2D of
-- g:ops(), Shape -> RandomStandardNormal -> AddV2, and the conv's readers
-- moved onto the sum (ge.reroute_ts), then a save.  The recipe
-- (gerewrite run insert_noise) does the same in one batch.
local src, dst = ...
local g = assert(ge.load(src))
local n = 0
for _, c in ipairs(g:ops()) do
  if c.type == "Conv2D" then
    local t = c:output(0)
    local readers = t:consumers()
    local sh = g:add_op{type = "Shape", name = c.name .. "/noise/shape",
                        inputs = {t}, attrs = {T = "float32"}}
    local r = g:add_op{type = "RandomStandardNormal",
                       name = c.name .. "/noise/rnd", inputs = {sh:output(0)},
                       attrs = {dtype = "float32", T = "int32"}}
    local a = g:add_op{type = "AddV2", name = c.name .. "/noise/add",
                       inputs = {t, r:output(0)}, attrs = {T = "float32"}}
    ge.reroute_ts({a:output(0)}, {t}, {can_modify = readers})
    n = n + 1
  end
end
assert(g:save(dst, {overwrite = true}))
print(string.format("noise sites=%d nodes=%d", n, #g))

-- clone3.lua: the "clone x3" scenario of bench/recipes.sh.  Three copies of
-- the whole graph under tower_1/, tower_2/, tower_3/ in the same graph, then
-- a save: what ../shared/peer/pypeer.py clone does with plain protobuf.
local src, dst, prov = ...
local g = assert(ge.load(src))
-- a third argument sets the provenance mode ("off": the copies name no
-- source); a build before the mode existed wrote no provenance anyway
if prov and g.provenance_mode then g:provenance_mode(prov) end
local whole = ge.sgv(g)
for k = 1, 3 do ge.copy(whole, {dst_scope = "tower_" .. k}) end
assert(g:save(dst, {overwrite = true}))
print(string.format("clone nodes=%d", #g))

-- clone3_ge.lua: the "clone x3" scenario of bench/recipes.sh as
-- graph_editor users write it: the view of the op list, ge.sgv(g:ops()),
-- copied three times under tower_1/ .. tower_3/, then a save (bench/clone3.lua
-- takes the view of the graph itself, ge.sgv(g)).
local src, dst, prov = ...
local g = assert(ge.load(src))
-- a third argument sets the provenance mode ("off": the copies name no
-- source); a build before the mode existed wrote no provenance anyway
if prov and g.provenance_mode then g:provenance_mode(prov) end
local whole = ge.sgv(g:ops())
for k = 1, 3 do ge.copy(whole, {dst_scope = "tower_" .. k}) end
assert(g:save(dst, {overwrite = true}))
print(string.format("clone nodes=%d", #g))

-- clone3.lua: the "clone x3" scenario of bench/recipes.sh.  Three copies of
-- the whole graph under tower_1/, tower_2/, tower_3/ in the same graph, then
-- a save: what ../shared/peer/pypeer.py clone does with plain protobuf.
local src, dst = ...
local g = assert(ge.load(src))
local whole = ge.sgv(g)
for k = 1, 3 do ge.copy(whole, {dst_scope = "tower_" .. k}) end
assert(g:save(dst, {overwrite = true}))
print(string.format("clone nodes=%d", #g))

-- fold_old_batch_norms: transform_graph's name for folding the older
-- batch-norm ops.  Here one recipe folds both the old and the new forms,
-- so this is fold_batch_norms (the file beside this one) under the other
-- name.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local r = assert(require("gerewrite.recipe").load(here .. "fold_batch_norms.lua"))
r.name = "fold_old_batch_norms"
return r

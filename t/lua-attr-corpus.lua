-- lua-attr-corpus.lua: over the corpus, every attr of every op read into
-- Lua and set back gives the same AttrValue bytes (kinds included).
local tap = require "tap"
local corpus = tap.corpus()
if not corpus then tap.skip_all("corpus not found") end

-- The models: every GraphDef, MetaGraphDef and SavedModel of the manifest,
-- except the fuzzed ones (meant to be refused) and the chunked format.
local models = {}
for line in io.lines(corpus .. "/MANIFEST.tsv") do
  local path, kind = line:match("^([^\t]+)\t([^\t]+)")
  if path and (kind == "GraphDef" or kind == "GraphDef-text" or
               kind == "MetaGraphDef" or kind == "SavedModel" or
               kind == "SavedModel-text") and
     not path:find("fuzz_generated", 1, true) and
     not path:find("^large/") then
    if kind:find("^SavedModel") then path = path:match("^(.*)/[^/]*$") end
    models[#models + 1] = path
  end
end
table.sort(models)
tap.diag(#models .. " models")

local kinds = {}
local values, dtypes_bad = 0, {}
for _, path in ipairs(models) do
  local g, err = ge.load(corpus .. "/" .. path)
  if not g then
    tap.ok(false, path .. ": " .. tostring(err))
  else
    local n, bad, first = 0, 0, nil
    for _, op in ipairs(g:ops()) do
      for _, name in ipairs(op:attr_names()) do
        local before = op:attr_raw(name)
        local okr, v, kind = pcall(op.attr, op, name)
        if not okr then
          bad = bad + 1
          first = first or (op.name .. "." .. name .. ": " .. tostring(v))
        else
          kinds[kind] = (kinds[kind] or 0) + 1
          if kind == "tensor" and #v <= 4096 then
            local okt, e = pcall(v.totable, v)
            if okt then
              values = values + 1
            else
              dtypes_bad[v.dtype] = (dtypes_bad[v.dtype] or 0) + 1
              tap.diag("  " .. op.name .. "." .. name .. ": " .. tostring(e))
            end
          end
          local oks, e = pcall(op.set_attr, op, name, v, kind)
          if not oks or op:attr_raw(name) ~= before then
            bad = bad + 1
            first = first or (op.name .. "." .. name .. " (" .. kind .. ")"
                              .. (oks and " changed" or ": " .. tostring(e)))
            op:set_attr_raw(name, before)
          end
        end
        n = n + 1
      end
    end
    tap.ok(bad == 0, string.format("%s: %d attrs round trip", path, n))
    if bad > 0 then
      tap.diag(string.format("  %d differ, first: %s", bad, first))
    end
    g:close()
  end
end

tap.diag(values .. " tensor values decoded")
local undecoded = {}
for k, c in pairs(dtypes_bad) do undecoded[#undecoded + 1] = k .. " " .. c end
table.sort(undecoded)
tap.is("", table.concat(undecoded, ", "),
       "every small tensor value decodes (dtypes that did not)")
local names = {}
for k in pairs(kinds) do names[#names + 1] = k end
table.sort(names)
for _, k in ipairs(names) do tap.diag(string.format("%-14s %d", k, kinds[k])) end
tap.done()

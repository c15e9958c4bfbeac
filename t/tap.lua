-- tap.lua: a small TAP producer for the Lua tests run by gerewrite.
local M = {}
local n, failed, planned = 0, 0, false

local function out(s) io.stdout:write(s, "\n") io.stdout:flush() end

function M.plan(k) planned = true out("1.." .. k) end
function M.skip_all(why) out("1..0 # SKIP " .. why) os.exit(0) end
function M.diag(...) out("# " .. table.concat({...}, " "):gsub("\n", "\n# ")) end

function M.ok(c, name)
  n = n + 1
  if not c then failed = failed + 1 end
  out(string.format("%sok %d - %s", c and "" or "not ", n, name or ""))
  return c
end

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

function M.is(want, got, name)
  local c = want == got
  M.ok(c, name)
  if not c then M.diag("  expected " .. show(want) .. ", got " .. show(got)) end
  return c
end

local function deepeq(a, b)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" then return false end
  for k, v in pairs(a) do if not deepeq(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end
M.deepeq = deepeq

local function dump(v, seen)
  if type(v) ~= "table" or getmetatable(v) then return show(v) end
  local parts = {}
  for i = 1, #v do parts[#parts + 1] = dump(v[i]) end
  for k, x in pairs(v) do
    if not (math.type(k) == "integer" and k >= 1 and k <= #v) then
      parts[#parts + 1] = "[" .. show(k) .. "]=" .. dump(x)
    end
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end
M.dump = dump

function M.same(want, got, name)
  local c = deepeq(want, got)
  M.ok(c, name)
  if not c then M.diag("  expected " .. dump(want) .. "\n  got      " .. dump(got)) end
  return c
end

-- Expects fn to raise an error whose message contains `pattern` (plain).
function M.raises(pattern, fn, name)
  local okc, err = pcall(fn)
  local c = not okc and string.find(tostring(err), pattern, 1, true) ~= nil
  M.ok(c, name)
  if not c then
    M.diag(okc and "  no error raised" or ("  error was: " .. tostring(err)))
  end
  return c
end

function M.skip(k, why)
  for _ = 1, k do n = n + 1 out(string.format("ok %d # SKIP %s", n, why)) end
end

function M.done()
  if not planned then out("1.." .. n) end
  if failed > 0 then os.exit(1) end
end

-- Path and file helpers for tests.
function M.srcdir() return os.getenv("GE_TOP_SRCDIR") or "." end
function M.corpus()
  local c = os.getenv("GE_CORPUS")
  if not c or c == "" then return nil end
  local f = io.open(c .. "/MANIFEST.tsv")
  if not f then return nil end
  f:close()
  return c
end
function M.slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end
function M.tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute("mkdir -p '" .. d .. "'"))
  return d
end

return M

-- recipe-matrix-corpus.lua: the corpus recipe matrix (t/recipe-matrix.txt):
-- every shipped recipe on every runnable model of the table, its output
-- verified against the model by `gerewrite run ... --verify`, which
-- holds it to the numerics the recipe declares.
local tap = require "tap"

local corpus = tap.corpus()
if not corpus then tap.skip_all("corpus not found") end
local src = tap.srcdir()
local bin = (os.getenv("GE_TOP_BUILDDIR") or ".") .. "/src/gerewrite"
local dir = tap.tmpdir()

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- The recipes `*` stands for: those without a required parameter, but
-- those the table's @star-skips names.
local star_skips = {}
local function generic()
  local list = {}
  local p = io.popen("ls " .. q(src .. "/scripts"))
  for f in p:lines() do
    local name = f:match("^(.+)%.lua$")
    if name and not star_skips[name] and not tap.slurp(src .. "/scripts/" .. f):find("required = true", 1, true) then
      list[#list + 1] = name
    end
  end
  p:close()
  table.sort(list)
  return list
end

-- One line of the table: {model=, inputs={...}, runs={{recipe=, params=,
-- bound=, todo=, refused=}, ...}} in the order given.
local function parse(line)
  local model, inputs, recipes = line:match("^([^|]+)|([^|]*)|(.*)$")
  assert(model, "bad line: " .. line)
  local m = {model = trim(model), inputs = {}, runs = {}}
  inputs = trim(inputs)
  if inputs ~= "-" then
    for e in inputs:gmatch("[^;]+") do m.inputs[#m.inputs + 1] = trim(e) end
  end
  local by, out = {}, {}
  local function add(name)
    if not by[name] then
      by[name] = {recipe = name, params = {}}
      out[#out + 1] = by[name]
    end
    return by[name]
  end
  for e in recipes:gmatch("[^;]+") do
    e = trim(e)
    if e == "*" then
      for _, r in ipairs(generic()) do add(r) end
    elseif e:sub(1, 1) == "-" then
      by[e:sub(2)] = nil
      for i = #out, 1, -1 do if out[i].recipe == e:sub(2) then table.remove(out, i) end end
    else
      local head, why = e:match("^([^!?]*)!%s*(.*)$")
      local refused
      if not head then head, refused = e:match("^([^!?]*)%?%s*(.*)$") end
      head = head or e
      local name, bound = head:match("^([^@]*)@(.*)$")
      name = name or head
      local parts = {}
      for p in name:gmatch("[^:]+") do parts[#parts + 1] = p end
      local r = add(parts[1])
      for i = 2, #parts do r.params[#r.params + 1] = parts[i] end
      r.bound = bound or r.bound
      r.todo = why or r.todo
      r.refused = refused or r.refused
    end
  end
  m.runs = out
  return m
end

local function sh(cmd)
  local okc, _, code = os.execute(cmd)
  return okc and 0 or code
end

local models = {}
for line in io.lines(src .. "/t/recipe-matrix.txt") do
  local skips = line:match("^@star%-skips%s+(.*)$")
  if skips then
    for r in skips:gmatch("%S+") do star_skips[r] = true end
  elseif not line:match("^%s*#") and line:match("%S") then
    models[#models + 1] = parse(line)
  end
end

local n = 0
for _, m in ipairs(models) do
  local path = corpus .. "/" .. m.model
  local ins = ""
  for _, i in ipairs(m.inputs) do ins = ins .. " -i " .. q(i) end
  -- runnable: the model itself evaluates
  local rc = sh(q(bin) .. " eval " .. q(path) .. ins .. " >/dev/null 2>" .. q(dir .. "/eval.err"))
  if rc ~= 0 then
    local why = trim(tap.slurp(dir .. "/eval.err"))
    for _, r in ipairs(m.runs) do
      n = n + 1
      print(string.format("ok %d - %s on %s # SKIP the model does not run yet: %s",
                          n, r.recipe, m.model, why))
    end
  else
    for _, r in ipairs(m.runs) do
      local out = dir .. "/out-" .. r.recipe
      if path:match("%.json$") then out = out .. "/model.json"
      elseif path:match("%.pb$") then out = out .. ".pb"
      elseif path:match("%.pbtxt$") then out = out .. ".pbtxt" end
      local cmd = q(bin) .. " run " .. r.recipe .. " " .. q(path) .. " -o " .. q(out) ..
                  " --verify" .. ins
      for _, p in ipairs(r.params) do cmd = cmd .. " -p " .. q(p) end
      if r.bound then cmd = cmd .. " --max-error " .. r.bound end
      rc = sh(cmd .. " >" .. q(dir .. "/run.out") .. " 2>" .. q(dir .. "/run.err"))
      n = n + 1
      if r.refused then
        -- refused by design: exit 2, one line, nothing written
        local err = trim(tap.slurp(dir .. "/run.err"))
        local wrote = sh("test -e " .. q(out)) == 0
        local good = rc == 2 and err ~= "" and not err:find("\n") and not wrote
        print(string.format("%s %d - %s on %s: refused (%s)", good and "ok" or "not ok",
                            n, r.recipe, m.model, r.refused))
        if not good then
          print(string.format("# exit %d, wrote %s, stderr:", rc, tostring(wrote)))
          for l in err:gmatch("[^\n]+") do print("# " .. l) end
        else
          print("# " .. err)
        end
        os.execute("rm -rf " .. q(dir .. "/out-" .. r.recipe) .. "*")
        goto next_run
      end
      local verdict = trim(tap.slurp(dir .. "/run.out"):match("([^\n]*verified against[^\n]*)") or "")
      local name = string.format("%s on %s: %s", r.recipe, m.model,
                                 verdict:match("seeded inputs: (.*)$") or "exit " .. rc)
      if r.todo then
        print(string.format("%s %d - %s # TODO %s", rc == 0 and "ok" or "not ok", n, name, r.todo))
      else
        print(string.format("%s %d - %s", rc == 0 and "ok" or "not ok", n, name))
      end
      if rc ~= 0 then
        for l in tap.slurp(dir .. "/run.err"):gmatch("[^\n]+") do print("# " .. l) end
      end
      os.execute("rm -rf " .. q(dir .. "/out-" .. r.recipe) .. "*")
      ::next_run::
    end
  end
end
print("1.." .. n)
os.execute("rm -rf " .. q(dir))

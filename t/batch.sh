#!/bin/sh
# batch.sh: `gerewrite batch` over a tree the test writes: good models in
# several formats (written by gerewrite itself), a corrupt one, a file
# that is not a model, a worker that dies.  Outputs mirror the tree, the
# bad models are reported and the others done, the JSON report parses,
# shards 1/2 and 2/2 cover every model once, --resume redoes nothing.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-batch.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

# ---------------------------------------------------------------- the tree
cat >"$T/mk.lua" <<'EOF'
local F = "float32"
local g = ge.graph()
g:add_op{type = "Placeholder", name = "x", attrs = {dtype = F, shape = ge.shape{-1, 4, 4, 1}}}
g:add_op{type = "Const", name = "w", attrs = {dtype = F,
         value = ge.tensor_value(F, {1, 1, 1, 1}, {2})}}
g:add_op{type = "Conv2D", name = "conv", inputs = {"x", "w"},
         attrs = {T = F, strides = {1, 1, 1, 1}, padding = "SAME"}}
g:add_op{type = "Relu", name = "relu", inputs = {"conv"}, attrs = {T = F}}
assert(g:save(arg[1]))
EOF
mkdir -p "$T/in/a/b" "$T/in/c" "$T/in/d" "$T/in/.hidden"
"$BIN" "$T/mk.lua" "$T/in/a/one.pb" &&
	cp "$T/in/a/one.pb" "$T/in/a/b/noext" &&
	"$BIN" convert "$T/in/a/one.pb" "$T/in/c/two.pbtxt" &&
	"$BIN" convert "$T/in/a/one.pb" "$T/in/c/three.meta" --format meta &&
	"$BIN" convert "$T/in/a/one.pb" "$T/in/d/saved" --format savedmodel &&
	cp "$T/in/a/one.pb" "$T/in/.hidden/skipped.pb" &&
	mkdir "$T/in/d/saved/variables" &&
	cp "$T/in/a/one.pb" "$T/in/d/saved/variables/not-a-model.pb"
ok $? "the tree is written"
head -c 40 "$T/in/a/one.pb" >"$T/in/c/corrupt.pb"
printf 'just some notes\n' >"$T/in/c/notes.txt"
MODELS="a/b/noext a/one.pb c/corrupt.pb c/three.meta c/two.pbtxt d/saved"

# a tiny strict JSON reader, to check the report without other tools
cat >"$T/json.lua" <<'EOF'
local s = io.read("a")
local i = 1
local function ws() i = s:find("[^ \t\r\n]", i) or #s + 1 end
local function fail(what) error(string.format("JSON: %s at byte %d", what, i), 0) end
local value
local function str()
  local out = {}
  i = i + 1
  while true do
    local c = s:sub(i, i)
    if c == "" then fail("unterminated string") end
    if c == '"' then i = i + 1 return table.concat(out) end
    if c:byte() < 32 then fail("control character in string") end
    if c == "\\" then
      local e = s:sub(i + 1, i + 1)
      local map = {['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b",
                   f = "\f", n = "\n", r = "\r", t = "\t"}
      if map[e] then out[#out + 1] = map[e] i = i + 2
      elseif e == "u" and s:sub(i + 2, i + 5):match("^%x%x%x%x$") then
        out[#out + 1] = utf8.char(tonumber(s:sub(i + 2, i + 5), 16)) i = i + 6
      else fail("bad escape") end
    else out[#out + 1] = c i = i + 1 end
  end
end
function value()
  ws()
  local c = s:sub(i, i)
  if c == "{" then
    local t = {} i = i + 1 ws()
    if s:sub(i, i) == "}" then i = i + 1 return t end
    while true do
      ws() if s:sub(i, i) ~= '"' then fail("key expected") end
      local k = str() ws()
      if s:sub(i, i) ~= ":" then fail("':' expected") end
      i = i + 1
      t[k] = value() ws()
      local d = s:sub(i, i) i = i + 1
      if d == "}" then return t end
      if d ~= "," then fail("',' or '}' expected") end
    end
  elseif c == "[" then
    local t = {n = 0} i = i + 1 ws()
    if s:sub(i, i) == "]" then i = i + 1 return t end
    while true do
      t.n = t.n + 1 t[t.n] = value() ws()
      local d = s:sub(i, i) i = i + 1
      if d == "]" then return t end
      if d ~= "," then fail("',' or ']' expected") end
    end
  elseif c == '"' then return str()
  elseif s:find("^-?%d", i) then
    local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", i)
    i = i + #num
    return tonumber(num) or fail("bad number")
  elseif s:sub(i, i + 3) == "true" then i = i + 4 return true
  elseif s:sub(i, i + 4) == "false" then i = i + 5 return false
  elseif s:sub(i, i + 3) == "null" then i = i + 4 return nil
  end
  fail("value expected")
end
local ok, r = pcall(value)
if ok then ws() if i <= #s then ok, r = false, "JSON: trailing bytes" end end
if not ok then io.stderr:write(r, "\n") os.exit(1) end
-- one line per model: path status before after error
local prefix = arg[1]
for k = 1, r.models.n do
  local m = r.models[k]
  print(m.model:sub(#prefix + 2), m.status, m.ops_before, m.ops_after,
        math.type(m.ms), m.error and "error" or "-")
end
print("summary", r.summary.total, r.summary.ok, r.summary.failed,
      r.summary.skipped, r.recipe, r.shard)
EOF
report() { # report FILE: the report as lines, or a failure
	"$BIN" "$T/json.lua" "$T/in" <"$1" >"$T/rep.txt" 2>"$T/rep.err"
}

# ---------------------------------------------------------------- a full run
"$BIN" batch insert_noise "$T/in" -o "$T/out" -j 2 --report "$T/r.json" \
	-p stddev=0.2 >"$T/stdout" 2>"$T/err"
rc=$?
ok `test $rc -eq 1; echo $?` "a run with a corrupt model exits 1"
has "$T/stdout" "6 models: 5 done, 1 failed, 0 skipped" "the summary counts"
has "$T/err" "gerewrite: $T/in/c/corrupt.pb: " "the corrupt model is reported"
! grep -F "`printf '\r'`" "$T/err" >/dev/null
ok $? "no progress line when stderr is not a terminal"
report "$T/r.json"
ok $? "the report is valid JSON"
diag "$T/rep.err"
cat >"$T/want" <<'EOF'
a/b/noext	ok	4	9	integer	-
a/one.pb	ok	4	9	integer	-
c/corrupt.pb	failed	nil	nil	integer	error
c/three.meta	ok	4	9	integer	-
c/two.pbtxt	ok	4	9	integer	-
d/saved	ok	4	9	integer	-
summary	6	5	1	0	insert_noise	nil
EOF
cmp -s "$T/want" "$T/rep.txt"
s=$?
ok $s "the report lists every model, sorted, with status and op counts"
if test $s -ne 0; then echo "# got:"; diag "$T/rep.txt"; fi
for m in a/b/noext a/one.pb c/three.meta c/two.pbtxt d/saved; do
	"$BIN" validate -q "$T/out/$m" >"$T/v" 2>&1
	s=$?
	ok $s "out/$m mirrors in/$m and validates"
	if test $s -ne 0; then diag "$T/v"; fi
done
test ! -e "$T/out/c/corrupt.pb" && test ! -e "$T/out/c/notes.txt" &&
	test ! -e "$T/out/.hidden"
ok $? "nothing is written for the corrupt model, the notes, hidden files"
has "$T/out/c/two.pbtxt" 'name: "conv/noise/add"' "a text model stays text"
test -f "$T/out/d/saved/saved_model.pb"
ok $? "a SavedModel stays a SavedModel directory"
"$BIN" info "$T/out/c/three.meta" >"$T/info"
has "$T/info" "format:  meta" "a MetaGraphDef stays one"
ls -A "$T/out" "$T/out/a" "$T/out/c" | grep -e '\.tmp-' >/dev/null
ok `test $? -ne 0; echo $?` "no temp files are left"

# ---------------------------------------------------------------- resume
touch "$T/marker"
sleep 1
"$BIN" batch insert_noise "$T/in" -o "$T/out" --resume --report "$T/r2.json" \
	-p stddev=0.2 >"$T/stdout" 2>"$T/err"
has "$T/stdout" "6 models: 0 done, 1 failed, 5 skipped" \
	"--resume skips the models done, retries the failed one"
test -z "`find "$T/out" -newer "$T/marker"`"
ok $? "--resume rewrites nothing"
report "$T/r2.json"
grep -c "	skipped	" "$T/rep.txt" | grep '^5$' >/dev/null
ok $? "the report says skipped"

# ---------------------------------------------------------------- shards
for i in 1 2; do
	"$BIN" batch remove_device "$T/in" -o "$T/shard" --shard $i/2 \
		--report "$T/s$i.json" >/dev/null 2>&1
	report "$T/s$i.json"
	grep -v '^summary' "$T/rep.txt" | cut -f1 >"$T/s$i.list"
done
cat "$T/s1.list" "$T/s2.list" | LC_ALL=C sort >"$T/both"
printf '%s\n' $MODELS | LC_ALL=C sort >"$T/all"
cmp -s "$T/all" "$T/both"
s=$?
ok $s "--shard 1/2 and 2/2 cover every model exactly once"
if test $s -ne 0; then diag "$T/both"; fi
test -s "$T/s1.list" && test -s "$T/s2.list"
ok $? "both shards have work"
has "$T/s1.json" '"shard": "1/2"' "the report names the shard"

# ---------------------------------------------------------------- isolation
mkdir "$T/recipes"
cat >"$T/recipes/fragile.lua" <<'EOF'
return {
  description = "Dies on some models.",
  run = function(g)
    if g.name:find("one.pb") then os.execute("kill -9 $PPID") end
    if g.name:find("two.pbtxt") then os.exit(3) end
    if g.name:find("three") then error("refused") end
  end,
}
EOF
GEREWRITE_PATH="$T/recipes" "$BIN" batch fragile "$T/in" -o "$T/frag" -j 3 \
	--report "$T/f.json" >"$T/stdout" 2>"$T/err"
rc=$?
ok `test $rc -eq 1; echo $?` "workers that die make the run exit 1"
has "$T/stdout" "6 models: 2 done, 4 failed, 0 skipped" \
	"the others are done"
has "$T/err" "one.pb: the worker died (signal 9" "a killed worker is a failed model"
has "$T/err" "two.pbtxt: the worker stopped without a result" \
	"an exiting worker too"
has "$T/err" "fragile.lua:6: refused (model $T/in/c/three.meta)" \
	"a recipe error names the recipe line and the model"
report "$T/f.json"
ok $? "the report is still valid JSON"

# ---------------------------------------------------------------- usage
"$BIN" batch insert_noise "$T/in" -o "$T/u" --shard 3/2 >/dev/null 2>"$T/err"
ok `test $? -eq 2; echo $?` "a bad --shard is a usage error"
"$BIN" batch insert_noise "$T/in" -o "$T/u" -p stddev=x >/dev/null 2>"$T/err"
ok `test $? -eq 2; echo $?` "a bad parameter is refused"
test ! -e "$T/u"
ok $? "before anything is written"
"$BIN" batch insert_noise "$T/in" >/dev/null 2>"$T/err"
ok `test $? -eq 2; echo $?` "no -o is a usage error"
"$BIN" batch insert_noise "$T/nowhere" -o "$T/u" >/dev/null 2>"$T/err"
ok `test $? -eq 2; echo $?` "a missing directory is an error"
has "$T/err" "$T/nowhere" "and is named"
"$BIN" batch insert_noise "$T/in/a/one.pb" "$T/in/c" -o "$T/multi" \
	>"$T/stdout" 2>&1
test -f "$T/multi/one.pb" && test -f "$T/multi/c/two.pbtxt"
ok $? "several inputs: a model file, and a directory under its name"

echo "1..$n"
exit $failed

#!/bin/sh
# diff-meta-corpus.sh: `gerewrite diff` of a MetaGraphDef's collections
# and signatures (cifar's model.ckpt.meta, edited from Lua): a member
# added to a node list, a signature added, then one changed; and of the
# checkpoint beside it: an entry changed in value, one in shape, one
# dropped, one added.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
C=${GE_CORPUS:-/work/shared/corpus}
M=$C/dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/cifar_model/model.ckpt.meta
if test ! -f "$M"; then
	echo "1..0 # SKIP corpus not found ($C)"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-diffmeta.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

cp "$M" "$T/a.meta"
cat >"$T/edit.lua" <<'LUA'
local g = assert(ge.load(arg[1]))
local step = arg[3]
if step == "b" then
  g:add_to_collection("losses", g:op("Placeholder_1"))
  g:set_signature("serving", {inputs = {x = "Placeholder:0"}, outputs = {y = "Placeholder_1:0"}})
else
  g:set_signature("serving", {inputs = {x = "Placeholder:0"}, outputs = {z = "Placeholder_1:0"}})
end
assert(g:save(arg[2]))
LUA
"$BIN" "$T/edit.lua" "$T/a.meta" "$T/b.meta" b && "$BIN" "$T/edit.lua" "$T/b.meta" "$T/c.meta" c
ok $? "three MetaGraphDefs written"
run "$BIN" diff "$T/a.meta" "$T/b.meta"
is_rc 1 "collections and signatures differ"
has "$T/out" "~ collection losses: +Placeholder_1" "a member added to a collection"
has "$T/out" "+ signature serving" "a signature added"
run "$BIN" diff "$T/b.meta" "$T/c.meta"
is_rc 1 "a signature changed"
has "$T/out" "~ signature serving: outputs y: Placeholder_1:0 bool -> (none); outputs z: (none) -> Placeholder_1:0 bool" \
	"its output keys, with tensor and dtype"
run "$BIN" diff --json "$T/b.meta" "$T/a.meta"
is_rc 1 "--json"
has "$T/out" '"kind": "removed"' "--json: the signature removed"
grep -A6 '"collections"' "$T/out" | grep -q '"removed": \[' 
ok $? "--json: the collection's members removed"
run "$BIN" diff "$T/a.meta" "$T/a.meta"
is_rc 0 "the same MetaGraphDef: exit 0"
if command -v "${GEREWRITE_DOT:-dot}" >/dev/null 2>&1; then
	run "$BIN" diff "$T/a.meta" "$T/b.meta" --html "$T/p.html"
	is_rc 1 "--html of the two MetaGraphDefs"
	has "$T/p.html" '"collections":[{"kind":"changed","name":"losses","removed":[],"added":["Placeholder_1"]}]' \
		"the page carries the collection changed"
	has "$T/p.html" '"signatures":[{"kind":"added","name":"serving"}]' \
		"and the signature added"
else
	for i in 1 2 3; do
		n=`expr $n + 1`
		echo "ok $n # SKIP no Graphviz"
	done
fi

# checkpoints: x.meta beside x.index
D=`dirname "$M"`
mkdir "$T/ck"
cp "$M" "$T/ck/a.meta" && cp "$M" "$T/ck/b.meta" &&
	cp "$D/model.ckpt.index" "$T/ck/a.index" &&
	cp "$D/model.ckpt.data-00000-of-00001" "$T/ck/a.data-00000-of-00001"
ok $? "a MetaGraphDef with its checkpoint, twice"
cat >"$T/ckpt.lua" <<'LUA'
-- b: the first float32 entry with 0.5 added to its first element, the
-- second float32 entry a scalar, the third dropped, "extra" added
local r = assert(ge.checkpoint.open(arg[1]))
local f = {}
for _, name in ipairs(r:names()) do
  if r:entry(name).dtype == "float32" then f[#f + 1] = name end
end
local e1 = r:entry(f[1])
local t = r:read(f[1]):totable()
t[1] = t[1] + 0.5
assert(ge.checkpoint.write(arg[2], {
  [f[1]] = ge.tensor_value("float32", e1.shape, t),
  [f[2]] = ge.tensor_value("float32", {}, {1}),
  extra = ge.tensor_value("float32", {2}, {1, 2})},
  {copy_from = r, rename = {[f[3]] = false}}))
print(f[1], f[2], f[3])
LUA
"$BIN" "$T/ckpt.lua" "$T/ck/a" "$T/ck/b" >"$T/names"
ok $? "a second checkpoint, edited"
read n1 n2 n3 <"$T/names"
run "$BIN" diff "$T/ck/a.meta" "$T/ck/b.meta"
is_rc 1 "the checkpoints differ"
grep -q "^~ checkpoint $n1 (float32\[.*\] -> float32\[.*\], largest absolute difference 0.5)$" "$T/out"
ok $? "an entry changed in value: the largest absolute difference"
grep -q "^~ checkpoint $n2 (float32\[.*\] -> float32\[\])$" "$T/out"
ok $? "an entry changed in shape: both shapes"
has "$T/out" "- checkpoint $n3 (float32[" "an entry dropped"
has "$T/out" "+ checkpoint extra (float32[2])" "an entry added"
test `grep -c "checkpoint" "$T/out"` -eq 4
ok $? "the entries not changed are not listed"
diag "$T/out"

echo "1..$n"
exit $failed

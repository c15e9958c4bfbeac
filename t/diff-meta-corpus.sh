#!/bin/sh
# diff-meta-corpus.sh: `gerewrite diff` of a MetaGraphDef's collections
# and signatures (cifar's model.ckpt.meta, edited from Lua): a member
# added to a node list, a signature added, then one changed.
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

echo "1..$n"
exit $failed

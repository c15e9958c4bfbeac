#!/bin/sh
# diff-tensors.sh: `gerewrite diff` of a changed Const shows the dtype and
# shape on both sides and the largest absolute difference of the values,
# whether they are stored packed or in the typed field.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-difft.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

cat >"$T/mk.lua" <<'LUA'
local F = "float32"
local which = arg[2]
local g = ge.graph()
local w = which == "a" and {1, 2, 3, 4} or {1, 2.25, 3, 1.5}
g:add_op{type = "Const", name = "w", attrs = {dtype = F, value = ge.tensor_value(F, {2, 2}, w)}}
-- one element: the typed field (float_val); the other side packs 3
g:add_op{type = "Const", name = "s", attrs = {dtype = F,
         value = which == "a" and ge.tensor_value(F, {3}, 7) or ge.tensor_value(F, {3}, {7, 7, 9.5})}}
g:add_op{type = "Const", name = "shape", attrs = {dtype = "int32",
         value = which == "a" and ge.tensor_value("int32", {2}, {1, 2}) or ge.tensor_value("int32", {3}, {1, 2, 3})}}
g:add_op{type = "Const", name = "kind", attrs = {dtype = which == "a" and F or "int32",
         value = which == "a" and ge.tensor_value(F, {1}, {1}) or ge.tensor_value("int32", {1}, {1})}}
g:add_op{type = "Const", name = "same", attrs = {dtype = F, value = ge.tensor_value(F, {2}, {5, 6})}}
assert(g:save(arg[1]))
LUA
"$BIN" "$T/mk.lua" "$T/a.pb" a && "$BIN" "$T/mk.lua" "$T/b.pb" b
ok $? "writing two models"
"$BIN" diff "$T/a.pb" "$T/b.pb" >"$T/out" 2>"$T/err"
rc=$?
is_rc 1 "they differ"
has "$T/out" "~ w (Const): attrs value (float32[2,2] -> float32[2,2], largest absolute difference 2.5)" \
	"a changed Const shows dtype, shape and the largest absolute difference"
has "$T/out" "~ s (Const): attrs value (float32[3] -> float32[3], largest absolute difference 2.5)" \
	"a value in the typed field compares with a packed one"
has "$T/out" "~ shape (Const): attrs value (int32[2] -> int32[3])" \
	"another shape: both shapes, no difference"
has "$T/out" "~ kind (Const): attrs dtype float32 -> int32, value (float32[1] -> int32[1])" \
	"another dtype: both dtypes"
! grep -F "same" "$T/out" >/dev/null
ok $? "an unchanged Const is not listed"

echo "1..$n"
exit $failed

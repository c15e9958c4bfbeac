#!/bin/sh
# info-ops.sh: `gerewrite info` on a training graph: likely outputs leave
# out Placeholders (an unread one is an input, never both), optimizer
# slots and their reads ("w/Adam/read") and Apply ops; `info --ops`
# lists ops with the dtype and shape of each output (inferred), narrowed
# by --scope and --type, which name the nearest scopes and types when
# they match nothing.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-infoops.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"
hasnt() { ! grep -F -e "$2" "$1" >/dev/null; ok $? "$3"; }

cat >"$T/mk.lua" <<'LUA'
local F = "float32"
local g = ge.graph()
local function op(t) return g:add_op(t) end
op{type = "Placeholder", name = "x", attrs = {dtype = F, shape = ge.shape{-1, 2}}}
op{type = "Placeholder", name = "keep_prob", attrs = {dtype = F, shape = ge.shape{}}}
op{type = "VariableV2", name = "w", attrs = {dtype = F, shape = ge.shape{2, 3}}}
op{type = "Identity", name = "w/read", inputs = {"w"}, attrs = {T = F}}
op{type = "MatMul", name = "dense/MatMul", inputs = {"x", "w/read"}, attrs = {T = F}}
op{type = "Relu", name = "dense/Relu", inputs = {"dense/MatMul"}, attrs = {T = F}}
op{type = "Softmax", name = "probs", inputs = {"dense/Relu"}, attrs = {T = F}}
-- Adam's slots, read by nobody but their Identity
for _, s in ipairs{"Adam", "Adam_1"} do
  op{type = "VariableV2", name = "w/" .. s, attrs = {dtype = F, shape = ge.shape{2, 3}}}
  op{type = "Identity", name = "w/" .. s .. "/read", inputs = {"w/" .. s}, attrs = {T = F}}
end
op{type = "Const", name = "lr", attrs = {dtype = F, value = ge.tensor_value(F, {}, 0.1)}}
op{type = "ApplyAdam", name = "Adam/update_w", inputs = {"w", "w/Adam", "w/Adam_1",
   "lr", "lr", "lr", "lr", "lr", "lr", "dense/MatMul"}, attrs = {T = F}}
assert(g:save(arg[1]))
LUA
"$BIN" "$T/mk.lua" "$T/train.pb" 2>"$T/err"
ok $? "writing a training graph"
diag "$T/err"

# ---------------------------------------------------------------- outputs
"$BIN" info "$T/train.pb" >"$T/out" 2>"$T/err"
ok $? "info"
sed -n '/^likely outputs/,/^[a-z]/p' "$T/out" >"$T/outs"
has "$T/outs" "likely outputs (1):" "one likely output"
has "$T/outs" "probs:0" "the model's output"
hasnt "$T/outs" "keep_prob" "an unread Placeholder is no output"
hasnt "$T/outs" "Adam" "nor an optimizer slot's read, nor Adam's update"
sed -n '/^likely inputs/,/^likely outputs/p' "$T/out" >"$T/ins"
has "$T/ins" "keep_prob:0" "the unread Placeholder is an input"
for t in `sed -n 's/^  \([^ ]*:0\) .*/\1/p' "$T/ins"`; do
	if grep -F "  $t " "$T/outs" >/dev/null; then
		echo "# $t is listed as input and output"
		false
	fi
done
ok $? "nothing is listed as both input and output"

# ---------------------------------------------------------------- --ops
"$BIN" info "$T/train.pb" --ops >"$T/ops" 2>"$T/err"
ok $? "info --ops"
test `grep -c . "$T/ops"` -eq 15
ok $? "a header, one line per op (13), a count"
grep -E '^dense/MatMul +MatMul +float32\[\?,3\]$' "$T/ops" >/dev/null
ok $? "each op with its type and inferred output shape"
has "$T/ops" "(13 ops)" "the count"
"$BIN" info "$T/train.pb" --ops --scope dense >"$T/sc" 2>"$T/err"
ok $? "--ops --scope dense"
test `grep -c . "$T/sc"` -eq 4
ok $? "only the 2 ops of the scope"
grep -E '^dense/Relu +Relu +float32\[\?,3\]$' "$T/sc" >/dev/null
ok $? "with their shapes"
"$BIN" info "$T/train.pb" --type Softmax,Identity >"$T/ty" 2>"$T/err"
ok $? "--type (without --ops) lists ops too"
has "$T/ty" "(4 ops of type Softmax,Identity)" "of those types"
"$BIN" info "$T/train.pb" --scope dens >/dev/null 2>"$T/err"
rc=$?
is_rc 2 "an unknown scope"
has "$T/err" "no op in scope 'dens'; nearest scopes: dense" "names the nearest"
"$BIN" info "$T/train.pb" --type relu >/dev/null 2>"$T/err"
rc=$?
is_rc 2 "an unknown type"
has "$T/err" "no op of type 'relu'; nearest types: Relu" "names the one spelt alike"

echo "1..$n"
exit $failed

#!/bin/sh
# diff-prov.sh: `gerewrite diff` pairs ops by provenance
# (NodeDef.experimental_debug_info.original_node_names): an op renamed is
# moved (>), ops folded into another are removed "-> into" it; --json
# says the same for programs; --html without Graphviz says so in one line.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-diffprov.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

# A: x * w, scaled by bn (a batch norm's multiplier), then a Relu read by
# out.  B: bn folded into w and conv, the Relu renamed, an op gone and
# another added.
F='attr { key: "T" value { type: DT_FLOAT } }'
C='attr { key: "dtype" value { type: DT_FLOAT } }'
cat >"$T/a.pbtxt" <<PB
node { name: "x" op: "Placeholder" $C }
node { name: "w" op: "Const" $C attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1 float_val: 2 } } } }
node { name: "conv" op: "Mul" input: "x" input: "w" $F }
node { name: "bn/scale" op: "Const" $C attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 3 float_val: 3 } } } }
node { name: "bn/mul" op: "Mul" input: "conv" input: "bn/scale" $F }
node { name: "old_name" op: "Relu" input: "bn/mul" $F }
node { name: "out" op: "Identity" input: "old_name" $F }
node { name: "gone" op: "NoOp" }
PB
cat >"$T/b.pbtxt" <<PB
node { name: "x" op: "Placeholder" $C }
node { name: "w" op: "Const" $C attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 3 float_val: 6 } } }
  experimental_debug_info { original_node_names: "w" original_node_names: "bn/scale" } }
node { name: "conv" op: "Mul" input: "x" input: "w" $F
  experimental_debug_info { original_node_names: "bn/mul" original_node_names: "conv" } }
node { name: "new_name" op: "Relu" input: "conv" $F
  experimental_debug_info { original_node_names: "old_name" } }
node { name: "out" op: "Identity" input: "new_name" $F }
node { name: "extra" op: "NoOp" }
PB

run "$BIN" diff "$T/a.pbtxt" "$T/b.pbtxt"
is_rc 1 "the graphs differ"
has "$T/out" "- bn/scale (Const) -> into w" "a Const folded names the Const it went into"
has "$T/out" "- bn/mul (Mul) -> into conv" "an op folded names the op it went into"
has "$T/out" "- gone (NoOp)" "an op removed"
has "$T/out" "+ extra (NoOp)" "an op added"
has "$T/out" "> old_name -> new_name (Relu): inputs bn/mul -> conv" \
	"an op renamed is moved, with what changed"
has "$T/out" "~ w (Const): attrs value (float32[2] -> float32[2], largest absolute difference 4)" \
	"the folded Const's values"
! grep -e "- old_name" -e "+ new_name" "$T/out" >/dev/null
ok $? "the renamed op is neither removed nor added"
has "$T/out" "3 removed, 1 added, 2 changed, 1 moved" "the count says moved"

run "$BIN" diff --json "$T/a.pbtxt" "$T/b.pbtxt"
is_rc 1 "--json: the same exit status"
cp "$T/out" "$T/diff.json"
cat >"$T/check.lua" <<'LUA'
local f = assert(io.open(arg[1])); local s = f:read("a"); f:close()
-- no JSON library in Lua: look for the members as Jansson writes them
local function has(x) return s:find(x, 1, true) ~= nil end
assert(has('"moved": 1'), "summary moved")
assert(has('"removed": 3'), "summary removed")
assert(has('"kind": "moved"') and has('"from": "old_name"'), "moved entry")
assert(has('"into": "conv"') and has('"into": "w"'), "into")
assert(has('"origins": [') and has('"bn/scale"'), "origins")
assert(has('"max_abs_diff": 4'), "tensor difference")
assert(has('"name": "value"') and has('"old": "float32[2]"'), "attr old and new")
print("ok")
LUA
run "$BIN" "$T/check.lua" "$T/diff.json"
is_rc 0 "--json: summary, moved, into, origins, attrs and values"
diag "$T/err"

run "$BIN" diff "$T/a.pbtxt" "$T/a.pbtxt" --json
is_rc 0 "--json of a model with itself: exit 0"

run "$BIN" dot "$T/b.pbtxt" --highlight "$T/a.pbtxt"
is_rc 0 "dot --highlight against A"
has "$T/out" "3 ops removed" "dot --highlight: the renamed op is not counted removed"
grep 'tooltip="new_name"' "$T/out" | grep -q fillcolor
ok $? "dot --highlight: the renamed op is highlighted"

# A copy: B holds A's ops and a copy of w and conv under tower/, whose
# provenance names ops B still holds: added, "a copy of", never moved.
grep -v '^node { name: "extra"' "$T/a.pbtxt" >"$T/c.pbtxt"
cat >>"$T/c.pbtxt" <<PB
node { name: "tower/w" op: "Const" $C attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } float_val: 1 float_val: 2 } } }
  experimental_debug_info { original_node_names: "w" } }
node { name: "tower/conv" op: "Mul" input: "x" input: "tower/w" $F
  experimental_debug_info { original_node_names: "conv" } }
PB
run "$BIN" diff "$T/a.pbtxt" "$T/c.pbtxt"
is_rc 1 "a copy: the graphs differ"
has "$T/out" "+ tower/w (Const), a copy of w" "a copied op is added, naming its source"
has "$T/out" "+ tower/conv (Mul), a copy of conv" "each copied op names its source"
has "$T/out" "0 removed, 2 added, 0 changed" "copies are not counted moved"
run "$BIN" diff --json "$T/a.pbtxt" "$T/c.pbtxt"
grep -q '"copy_of": "conv"' "$T/out"
ok $? "--json: copy_of names the source"

GEREWRITE_DOT=/nonexistent/dot run "$BIN" diff "$T/a.pbtxt" "$T/b.pbtxt" --html "$T/p.html"
is_rc 2 "--html without Graphviz"
test `wc -l <"$T/err"` -eq 1 && grep -q "graphviz" "$T/err" && test ! -e "$T/p.html"
ok $? "says so in one line naming graphviz, writes no page"

echo "1..$n"
exit $failed

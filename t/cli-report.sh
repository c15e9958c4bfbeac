#!/bin/sh
# cli-report.sh: every recipe says what it changed (what it counts, the
# ops added, removed and changed, a line per function body it changed);
# one that changes nothing warns, naming the nearest types or ops to
# values that match nothing, and exits 0 unless --strict (exit 3).
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-report.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"

M=$T/m.pbtxt
cp "$SRC/doc/examples/small_cnn.pbtxt" "$M"

run "$BIN" run insert_noise "$M" -o "$T/n.pbtxt"
is_rc 0 "insert_noise"
has "$T/err" "insert_noise: $M: 2 sites; ops 10 added, 2 changed (12 -> 22 ops)" \
	"says its sites and the ops added and changed"

# a type that matches nothing: a warning naming the nearest, exit 0
run "$BIN" run insert_noise "$M" -o "$T/none.pbtxt" --param types=Conv2d
is_rc 0 "a type that matches nothing is not an error"
has "$T/err" "insert_noise: $M: warning: changed nothing: no op of type Conv2d; Conv2D has 2" \
	"it warns, naming the nearest type and its count"
run "$BIN" diff "$M" "$T/none.pbtxt"
is_rc 0 "the output is the model unchanged"
run "$BIN" run insert_noise "$M" -o "$T/half.pbtxt" --param types=Conv2D,Reluu
is_rc 0 "one of two types matching"
has "$T/err" "warning: no op of type Reluu; Relu has 2" \
	"the type that matched nothing is named"

# --strict: a no-op is an error, nothing written
run "$BIN" run insert_noise "$M" -o "$T/strict.pbtxt" --param types=Conv2d \
	--strict
is_rc 3 "--strict makes a no-op an error"
has "$T/err" "gerewrite: insert_noise changed nothing in $M (--strict): no op of type Conv2d; Conv2D has 2" \
	"in one line, with the nearest type"
test ! -e "$T/strict.pbtxt"
ok $? "nothing is written"
run "$BIN" run insert_noise "$M" -o "$T/strict.pbtxt" --strict
is_rc 0 "--strict with a change"

# other recipes: a type, an op name, nothing to do
run "$BIN" run remove_nodes "$M" -o "$T/r.pbtxt" --param op=identity
has "$T/err" "no op of type identity; Identity has 1" "remove_nodes: case"
run "$BIN" run rename_op "$M" -o "$T/r.pbtxt" --param old_op_name=Relu6 \
	--param new_op_name=Relu
has "$T/err" "no op of type Relu6; Relu has 2" "rename_op: a near type"
run "$BIN" run insert_logging "$M" -o "$T/r.pbtxt" --param name=conv1/conv2d
has "$T/err" "no op named 'conv1/conv2d'; nearest: conv1/Conv2D" \
	"insert_logging: an op name"
run "$BIN" run remove_device "$M" -o "$T/r.pbtxt"
is_rc 0 "remove_device on a model without devices"
has "$T/err" "remove_device: $M: warning: changed nothing" "warns"
run "$BIN" run remove_attribute "$M" -o "$T/r.pbtxt" \
	--param attribute_name=padding
has "$T/err" "remove_attribute: $M: ops 2 changed (12 -> 12 ops)" \
	"a recipe that counts nothing itself: the ops changed"

# a recipe of the user's, returning counts
cat >"$T/mine.lua" <<'E'
return {description = "drop the Identity", run = function(g)
  local n = 0
  for _, op in ipairs(g:ops{"Identity"}) do
    op.outputs[1]:replace_all_uses_with(op.inputs[1])
    g:remove_op(op)
    n = n + 1
  end
  return {dropped = n}
end}
E
run "$BIN" run "$T/mine.lua" "$M" -o "$T/r.pbtxt"
has "$T/err" "mine: $M: 1 dropped; ops 1 removed (12 -> 11 ops)" \
	"a user's recipe: its counts and the ops removed"

# function bodies: a line for each body changed
cat >"$T/f.pbtxt" <<'E'
node { name: "in" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "c" op: "PartitionedCall" input: "in"
  attr { key: "Tin" value { list { type: DT_FLOAT } } }
  attr { key: "Tout" value { list { type: DT_FLOAT } } }
  attr { key: "f" value { func { name: "f" } } } }
library { function {
  signature { name: "f" input_arg { name: "x" type: DT_FLOAT }
              output_arg { name: "y" type: DT_FLOAT } }
  node_def { name: "r" op: "Relu" input: "x"
             attr { key: "T" value { type: DT_FLOAT } } }
  ret { key: "y" value: "r:activations:0" } } }
E
run "$BIN" run insert_noise "$T/f.pbtxt" -o "$T/fn.pbtxt" --param types=Relu
is_rc 0 "insert_noise on a body"
has "$T/err" "insert_noise: $T/f.pbtxt: 0 sites; no change (2 ops)" \
	"the graph: no change"
has "$T/err" "insert_noise: $T/f.pbtxt: function f: 1 site; ops 5 added, 1 changed (3 -> 8 ops)" \
	"the body: its own line"
! grep -F "warning" "$T/err" >/dev/null
ok $? "no warning: the type is in a body"

# the rule is documented
run "$BIN" help run
has "$T/out" "--strict" "help run names --strict"
has "$T/out" "changed nothing under --strict" "and its exit status"
grep -F -e '.B \-\-strict' "$SRC/doc/gerewrite.1" >/dev/null
ok $? "the man page names --strict"

echo "1..$n"
exit $failed

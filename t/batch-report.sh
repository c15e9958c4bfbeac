#!/bin/sh
# batch-report.sh: the batch report a person reads: each model's warnings
# (the recipe's own lines too, tied to the model), op counts with the
# function bodies, what changed, the reason of every skip, times in
# whole milliseconds.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-breport.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"

mkdir -p "$T/zoo"
cp "$SRC/doc/examples/small_cnn.pbtxt" "$T/zoo/cnn.pbtxt"
# a model whose Relu is in a function body
cat >"$T/zoo/f.pbtxt" <<'E'
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
# a model whose only Relu nobody reads: insert_noise says so on stderr
cat >"$T/zoo/unread.pbtxt" <<'E'
node { name: "in" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "r" op: "Relu" input: "in" attr { key: "T" value { type: DT_FLOAT } } }
E

run "$BIN" batch insert_noise "$T/zoo" -o "$T/res" --param types=Relu \
	--report "$T/r.json"
is_rc 0 "the batch runs"
R=$T/r.json
# the entries of one model, from its "model" line to the next
entry() { awk -v m="\"model\": \"$T/zoo/$1\"," '
	index($0, m) { on = 1 } on && /^    }/ { exit } on' "$R"; }

entry f.pbtxt > "$T/f"
has "$T/f" '"ops_before": 5,' "counts include the body's ops (2 + 3)"
has "$T/f" '"ops_after": 10,' "after too (2 + 8)"
has "$T/f" '"ops_added": 5,' "ops added, bodies included"
has "$T/f" "insert_noise: $T/zoo/f.pbtxt: function f: 1 site; ops 5 added, 1 changed (3 -> 8 ops)" \
	"what changed, per function body"

entry unread.pbtxt > "$T/u"
has "$T/u" '"changed_nothing": true' "a model left as it was says so"
has "$T/u" "\"$T/zoo/unread.pbtxt: insert_noise: no noise after ops nobody reads (it would change nothing): r\"" \
	"the recipe's own warning, in the model's entry"
has "$T/u" "insert_noise: $T/zoo/unread.pbtxt: warning: changed nothing" \
	"and the run's"
has "$T/err" "$T/zoo/unread.pbtxt: insert_noise: no noise after ops nobody reads" \
	"on the terminal, the warning names its model"
has "$T/f" '"warnings": []' "a model without warnings has none"

grep '^      "ms": ' "$R" > "$T/ms"
test "`wc -l < "$T/ms"`" -eq 3 && ! grep -v '"ms": [0-9]*,$' "$T/ms" >/dev/null
ok $? "times in whole milliseconds, for each model run"
! grep -F '"seconds"' "$R" >/dev/null
ok $? "no float seconds"

# skips: every one has its reason
run "$BIN" batch insert_noise "$T/zoo" -o "$T/res" --param types=Relu \
	--report "$T/r2.json" --resume
is_rc 0 "--resume"
test "`grep -c '"reason": "the output exists (--resume)"' "$T/r2.json"`" -eq 3
ok $? "a model skipped by --resume gives the reason"

echo "1..$n"
exit $failed

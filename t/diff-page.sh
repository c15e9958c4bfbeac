#!/bin/sh
# diff-page.sh: the page of `gerewrite diff A B --html OUT` on two small
# models: one self-contained file (nothing fetched), both pictures, the
# summary; then opened in headless Chromium (skipped when absent): its
# script runs without error, highlights exactly the ops that differ, and
# selecting an op highlights its partner on the other side.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-diffpage.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"
. "${GE_TOP_SRCDIR:-.}/t/browser.sh"
if ! command -v "${GEREWRITE_DOT:-dot}" >/dev/null 2>&1; then
	echo "1..0 # SKIP no Graphviz (apt-get install graphviz)"
	exit 0
fi

F='attr { key: "T" value { type: DT_FLOAT } }'
C='attr { key: "dtype" value { type: DT_FLOAT } }'
cat >"$T/a.pbtxt" <<PB
node { name: "x" op: "Placeholder" $C }
node { name: "s/k" op: "Const" $C attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 2 } } } }
node { name: "s/mul" op: "Mul" input: "x" input: "s/k" $F }
node { name: "s/relu" op: "Relu" input: "s/mul" $F }
node { name: "out" op: "Identity" input: "s/relu" $F }
node { name: "gone" op: "NoOp" }
PB
cat >"$T/b.pbtxt" <<PB
node { name: "x" op: "Placeholder" $C }
node { name: "s/k" op: "Const" $C attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 3 } } } }
node { name: "s/mul" op: "Mul" input: "x" input: "s/k" $F }
node { name: "t/relu" op: "Relu" input: "s/mul" $F
  experimental_debug_info { original_node_names: "s/relu" } }
node { name: "out" op: "Identity" input: "t/relu" $F }
node { name: "new" op: "NoOp" }
PB

run "$BIN" diff "$T/a.pbtxt" "$T/b.pbtxt" --html "$T/p.html"
is_rc 1 "the models differ: exit 1 as without --html"
has "$T/out" "> s/relu -> t/relu (Relu)" "the text goes to standard output still"
test -s "$T/p.html" && test `grep -c "<svg" "$T/p.html"` -eq 2
ok $? "one page with two pictures"
! grep -i -e '<link' -e ' src=' -e 'href="http' -e "url(" -e "@import" "$T/p.html" >/dev/null
ok $? "nothing fetched: no link, src, remote href, url() or @import"
has "$T/p.html" '<td id="gd-n-removed">1</td><td id="gd-n-added">1</td><td id="gd-n-changed">2</td><td id="gd-n-moved">1</td>' \
	"the summary counts removed, added, changed and moved"
run "$BIN" diff "$T/a.pbtxt" "$T/a.pbtxt" --html "$T/same.html"
is_rc 0 "a model with itself: exit 0, and a page"
test -s "$T/same.html"
ok $? "the page of no difference is written too"

run "$BIN" diff "$T/a.pbtxt" "$T/b.pbtxt" --verify
is_rc 2 "--verify without --html is a usage error"
run "$BIN" diff "$T/a.pbtxt" "$T/b.pbtxt" --html "$T/v.html" --verify
is_rc 1 "--verify: the models run, the page is written"
has "$T/v.html" 'id="gd-verify-data"' "the page carries the runner's figures"

need_browser
dump_dom "$T/p.html" "#selftest"
page_text gd-status
grep -q "^ok selftest" "$T/gd-status"
ok $? "the page's script ran without error, and its self-test passed"
diag "$T/gd-status"
page_text gd-marked
sort "$T/gd-marked" >"$T/got"
sort >"$T/want" <<'W'
a changed out
a changed s/k
a moved s/relu
a removed gone
b added new
b changed out
b changed s/k
b moved t/relu
W
cmp -s "$T/want" "$T/got"
ok $? "highlighted: exactly the ops that differ, on both sides"
diff "$T/want" "$T/got" | diag
page_text gd-pairs
grep -qx "t/relu <- s/relu" "$T/gd-pairs"
ok $? "the moved op is paired with its origin"
diag "$T/gd-pairs"

# --verify: the figures per output, and per tensor of the op selected
dump_dom "$T/v.html" "#b=out"
page_text gd-status
grep -q "^ok" "$T/gd-status"
ok $? "--verify: the page's script ran without error"
diag "$T/gd-status"
sed 's/<[^>]*>/ /g' "$T/dom" >"$T/text"
has "$T/text" "Run on seeded inputs (--verify): outputs differ" \
	"--verify: the outputs differ (the Const changed 2 -> 3)"
has "$T/text" "output 0: max abs" "--verify: the selected op shows its output's figures"

echo "1..$n"
exit $failed

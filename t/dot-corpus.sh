#!/bin/sh
# dot-corpus.sh: the picture of the handtrack PredictionTower scope (100
# ops, 4 sub-scopes of 5 towers) fits in 4,000 px: labels are relative to
# the scope, sub-scopes are clusters; --collapse 20 of the whole model
# draws about 20 boxes (the scope of 1154 ops opened), not one op in
# seven nested boxes.  Skipped without the corpus or
# without Graphviz's dot.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
C=$GE_CORPUS
if test -z "$C" || test ! -f "$C/large/handtrack.frozen.pb"; then
	echo "1..0 # SKIP corpus not found"
	exit 0
fi
if ! command -v dot >/dev/null 2>&1; then
	echo "1..0 # SKIP Graphviz's dot is not installed"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-dotc.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

M=$C/large/handtrack.frozen.pb
"$BIN" dot "$M" --scope PredictionTower >/dev/null 2>"$T/err"
S=`sed -n "s/.*nearest scopes: \([^,]*PredictionTower\).*/\1/p" "$T/err"`
test -n "$S"
ok $? "the scope's name is suggested from its last part ($S)"
"$BIN" dot "$M" --scope "$S" -o "$T/x.svg" 2>"$T/err"
ok $? "dot --scope PredictionTower -o x.svg"
diag "$T/err"
w=`sed -n 's/^<svg width="\([0-9.]*\)pt" height="\([0-9.]*\)pt".*/\1/p' "$T/x.svg" | head -1`
h=`sed -n 's/^<svg width="\([0-9.]*\)pt" height="\([0-9.]*\)pt".*/\2/p' "$T/x.svg" | head -1`
test -n "$w" && test "${w%%.*}" -le 4000
ok $? "the picture is no wider than 4,000 px (${w} x ${h})"

# --collapse N: about N boxes, not one box nested in seven
"$BIN" dot "$M" --collapse 20 -o "$T/c.dot"
ok $? "dot --collapse 20"
b=`grep -c '^ *[ns][0-9]* \[label' "$T/c.dot"`
test "$b" -ge 15 && test "$b" -le 25
ok $? "it draws about 20 boxes ($b)"
depth=`awk '/subgraph cluster_[0-9]/ { d++; if (d > m) m = d } /^ *}$/ { d-- } END { print m + 0 }' "$T/c.dot"`
test "$depth" -le 2
ok $? "boxes are nested at most 2 deep ($depth)"
grep 'label="StatefulPartitionedCall/\\n1154 ops"' "$T/c.dot" >/dev/null
test $? -ne 0
ok $? "the scope of 1154 ops is opened"
"$BIN" dot "$M" --collapse 20 -o "$T/c.png" 2>"$T/err"
ok $? "and drawn as a PNG"
diag "$T/err"

echo "1..$n"
exit $failed

#!/bin/sh
# doc-match.sh: every ```lua block of doc/match.md is a complete script;
# each runs with the gerewrite program and must exit 0 (the examples
# check their own results with assert).
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
DOC=${GE_TOP_SRCDIR:-.}/doc/match.md
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-docmatch.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT

if test ! -r "$DOC"; then
	echo "1..1"
	echo "not ok 1 - $DOC is readable"
	exit 1
fi

# One file per block, named by the line the block starts on; a fence
# opened inside a block (```) closes it.
awk -v dir="$T" '
	!inblock && /^```lua[ \t]*$/ { inblock = 1; f = sprintf("%s/%06d.lua", dir, NR + 1); next }
	inblock && /^```/ { inblock = 0; close(f); next }
	inblock { print > f }
	END { if (inblock) { print "unterminated ```lua block" > "/dev/stderr"; exit 1 } }
' "$DOC" || exit 1

n=0
failed=0
for f in "$T"/*.lua; do
	test -e "$f" || continue
	n=`expr $n + 1`
	line=`basename "$f" .lua | sed 's/^0*//'`
	if "$BIN" "$f" >"$T/out" 2>"$T/err" </dev/null; then
		echo "ok $n - doc/match.md example at line $line"
	else
		echo "not ok $n - doc/match.md example at line $line"
		sed 's/^/# /' "$T/err"
		failed=1
	fi
done
if test $n -eq 0; then
	n=1
	echo "not ok 1 - doc/match.md has lua examples"
	failed=1
fi
echo "1..$n"
exit $failed

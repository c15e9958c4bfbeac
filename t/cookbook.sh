#!/bin/sh
# cookbook.sh: runs the examples of doc/cookbook.md.  Each ```sh test```
# block runs in order in one scratch directory with the built gerewrite
# first on PATH; ```sh test exit=N``` blocks must end with status N (the
# others run under set -e and must succeed); a ```text``` block right
# after one is its exact standard output.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
DOC=${GE_TOP_SRCDIR:-.}/doc/cookbook.md
case $BIN in /*) ;; *) BIN=`pwd`/$BIN ;; esac
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-cookbook.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
mkdir "$T/bin" "$T/blocks" "$T/work"
ln -s "$BIN" "$T/bin/gerewrite"

# split the document into blocks: N.sh, N.exit and, if given, N.want
awk -v dir="$T/blocks" '
	function flush() { if (k) { close(dir "/" k ".sh") } }
	/^```sh test( exit=[0-9]+)?$/ && !inblock {
		k++; inblock = "sh"; status = 0
		if (match($0, /exit=[0-9]+/)) status = substr($0, RSTART + 5, RLENGTH - 5)
		print status > (dir "/" k ".exit"); close(dir "/" k ".exit")
		printf "" > (dir "/" k ".sh")
		expect_text = 0
		next
	}
	/^```text$/ && !inblock && expect_text {
		inblock = "text"; printf "" > (dir "/" k ".want"); next
	}
	/^```/ && inblock {
		if (inblock == "sh") expect_text = 1
		else expect_text = 0
		inblock = ""
		next
	}
	/^```/ && !inblock { expect_text = 0; skipping = !skipping; next }
	inblock == "sh" { print > (dir "/" k ".sh") }
	inblock == "text" { print > (dir "/" k ".want") }
	!inblock && !skipping && $0 != "" { expect_text = 0 }
	END { print k > (dir "/count") }
' "$DOC"
count=`cat "$T/blocks/count"`
if test -z "$count" || test "$count" -lt 1; then
	echo "1..0 # SKIP no examples found in $DOC"
	exit 0
fi

failed=0
i=1
while test $i -le $count; do
	want=`cat "$T/blocks/$i.exit"`
	first=`grep -v '^$' "$T/blocks/$i.sh" | head -1 | cut -c1-60`
	if test "$want" -eq 0; then
		(cd "$T/work" && PATH="$T/bin:$PATH" GEREWRITE_PATH= \
			sh -e "$T/blocks/$i.sh") >"$T/out" 2>"$T/err"
	else
		(cd "$T/work" && PATH="$T/bin:$PATH" GEREWRITE_PATH= \
			sh "$T/blocks/$i.sh") >"$T/out" 2>"$T/err"
	fi
	rc=$?
	what=""
	test $rc -eq "$want" || what="exit status $rc, not $want;"
	if test -f "$T/blocks/$i.want" && ! cmp -s "$T/blocks/$i.want" "$T/out"
	then
		what="$what output differs;"
	fi
	if test -z "$what"; then
		echo "ok $i - example $i: $first"
	else
		echo "not ok $i - example $i: $first"
		echo "# $what"
		if test -f "$T/blocks/$i.want"; then
			diff "$T/blocks/$i.want" "$T/out" | sed 's/^/# /'
		fi
		sed 's/^/# stderr: /' "$T/err"
		failed=1
	fi
	i=`expr $i + 1`
done
echo "1..$count"
exit $failed

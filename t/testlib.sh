# testlib.sh: TAP helpers shared by the shell tests, which source it with
#   . "${GE_TOP_SRCDIR:-.}/t/testlib.sh"
# and end with `echo "1..$n"; exit $failed`.  run, is_rc and has keep
# their files in the test's scratch directory $T.
n=0
failed=0

ok() { # ok STATUS NAME
	n=`expr $n + 1`
	if test "$1" -eq 0; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=1
	fi
}
diag() { sed 's/^/# /' "$@"; }
skip() { # skip COUNT REASON: COUNT tests skipped, visibly
	i=0
	while test $i -lt "$1"; do
		n=`expr $n + 1`
		echo "ok $n # SKIP $2"
		i=`expr $i + 1`
	done
}

# run CMD...: stdout in $T/out, stderr in $T/err, status in $rc
run() {
	"$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
}
is_rc() { # is_rc WANT NAME
	test "$rc" -eq "$1"
	s=$?
	ok $s "$2 (exit $1)"
	if test $s -ne 0; then echo "# exit status was $rc"; diag "$T/err"; fi
}
has() { # has FILE TEXT NAME
	grep -F -e "$2" "$1" >/dev/null
	s=$?
	ok $s "$3"
	if test $s -ne 0; then echo "# no '$2' in:"; diag "$1"; fi
}

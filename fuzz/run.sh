#!/bin/sh
# run.sh: `make fuzz-run`: seeds each target from the project's fixtures,
# runs it for SECONDS with a corpus kept in BUILDDIR/fuzz/corpus/<target>,
# prints the executions per target, and fails if any target found an
# input that crashes (kept in BUILDDIR/fuzz/crashes/<target>/: copy it to
# fuzz/regress/<target>/ once fixed).
#   run.sh BUILDDIR SRCDIR SECONDS TARGET...
B=$1 S=$2 SECS=$3
shift 3
seeds=$B/fuzz/seeds
rm -rf "$seeds"
"$B/src/gerewrite" "$S/fuzz/seeds.lua" "$S" "$seeds" || exit 2
status=0
for t in "$@"; do
	corpus=$B/fuzz/corpus/$t crashes=$B/fuzz/crashes/$t
	mkdir -p "$corpus" "$crashes"
	log=$B/fuzz/$t.log
	# git keeps no empty folder: a target may have no regress inputs
	regress=$S/fuzz/regress/$t
	test -d "$regress" || regress=
	"$B/fuzz/fuzz_$t" -max_total_time="$SECS" -timeout=20 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$crashes/" "$corpus" "$seeds/$t" $regress \
		>"$log" 2>&1
	rc=$?
	runs=`sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1`
	secs=`sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1`
	n=`ls "$crashes" | wc -l`
	echo "fuzz_$t: ${runs:-?} executions in $SECS s (${secs:-?}/s), corpus `ls "$corpus" | wc -l`, $n crash(es), exit $rc"
	if test $rc -ne 0 || test "$n" -ne 0; then
		status=1
		grep -E -A24 'ERROR|SUMMARY|Test unit written' "$log" | head -60
		# a crash found on another machine is kept only in this log:
		# print each input (when small) so that it can be replayed
		for c in "$crashes"/*; do
			test -f "$c" || continue
			sz=`wc -c <"$c"`
			test "$sz" -le 4096 || { echo "input $c: $sz bytes"; continue; }
			echo "input `basename "$c"` ($sz bytes, base64):"
			base64 -w 76 "$c"
		done
	fi
done
exit $status

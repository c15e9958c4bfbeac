#!/bin/sh
# Runs the benchmarks; called by `make bench` with the build directory.
# The figures are what doc/performance.md records.
set -e
b=${1:-.}
tmp=${TMPDIR:-/tmp}/gerewrite-bench
mkdir -p "$tmp"
g="$tmp/graph-1m.pb"
[ -f "$g" ] || "$b/bench/gen_graph" "$g" 1000000
gl="$tmp/graph-1m-loops.pb"
[ -f "$gl" ] || "$b/bench/gen_graph" "$gl" 1000000 loops
echo "== load + save, 1,000,000-node GraphDef ($(du -h "$g" | cut -f1))"
"$b/bench/bench_io" "$g" "$tmp/out.pb" 3
cmp "$g" "$tmp/out.pb" && echo "saved file is byte-identical"
# the baselines of the same file: a copy, and a copy made durable as a
# save is (the save's fsync); best of three
now() { date +%s.%N; }
bc= bs=
for i in 1 2 3; do
	t0=`now`; cp "$g" "$tmp/cp.pb"; t1=`now`; sync "$tmp/cp.pb"; t2=`now`
	c=`awk "BEGIN{print $t1 - $t0}"` s=`awk "BEGIN{print $t2 - $t0}"`
	if [ -z "$bc" ] || awk "BEGIN{exit !($c < $bc)}"; then bc=$c; fi
	if [ -z "$bs" ] || awk "BEGIN{exit !($s < $bs)}"; then bs=$s; fi
done
printf 'cp of the file %.3f s, cp then sync of the copy %.3f s\n' "$bc" "$bs"
rm -f "$tmp/cp.pb"
for x in "$b"/bench/bench_select "$b"/bench/bench_*; do
	case $x in */bench_io|*/bench_select.*|*/bench_func|*/bench_pbc|*/bench_kernels) continue;; esac
	case $x in */bench_frames) [ -x "$x" ] && "$x" "$gl"; continue;; esac
	[ -x "$x" ] && [ "$x" != "$b/bench/bench_io" ] && "$x" "$g"
done
# the calls that hand many ops to Lua, per op (target 0.2 us)
g100="$tmp/graph-100k.pb"
[ -f "$g100" ] || "$b/bench/gen_graph" "$g100" 100000
"$b/src/gerewrite" "$(dirname "$0")/idioms.lua" "$g100"
echo "== function library of a TF2 SavedModel (bert1)"
"$b/bench/bench_func" "${GE_CORPUS:-$b/../../shared/corpus}/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/bert1" 10
"$b/bench/bench_kernels" 10
rm -f "$tmp/out.pb"

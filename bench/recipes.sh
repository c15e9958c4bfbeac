#!/bin/sh
# bench/recipes.sh BUILDDIR: recipe-level timings through the gerewrite
# program, each printed as a ratio measured in this run (make bench-recipes).
#
#   insert_noise, 100,000 nodes      gerewrite run insert_noise  vs  the Python peer
#   clone x3, 100,000 nodes          bench/clone3.lua            vs  the Python peer
#     graph_editor style             bench/clone3_ge.lua (ge.sgv(g:ops()))  vs  the peer
#   noise, graph_editor style        bench/noise_ge.lua (op by op)          vs  the peer
#   fuse_conv_bias_relu, 1,000,000   gerewrite run               vs  the C driver (bench_match)
#   load + save, 1,000,000           bench_io  vs  cp, cp + sync  vs  protobuf-c
#                                    unpack + pack (bench_pbc)
#
# The peer (../shared/peer, python3-protobuf and protoc) runs when present.
# Each command runs REPEAT times (default 5) under bench/timeit; the best
# wall time counts, the median is printed beside it with the peak RSS of the
# best run, and each ratio is given for both.  Never part of make check.
set -eu
b=$(cd "${1:-.}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
repeat=${REPEAT:-5}
tmp=${TMPDIR:-/tmp}/gerewrite-bench-recipes
mkdir -p "$tmp"
ge="$b/src/gerewrite"
peer="${GE_PEER:-$top/../shared/peer}"
py=/usr/bin/python3
export GEREWRITE_PATH="$top/scripts"

# "BEST MEDIAN RSS" of `repeat` runs of "$@": the best and the median wall
# seconds, and the peak RSS (KB) of the best run.  bench/timeit times to the
# microsecond; the ratios use the best runs, the medians show the spread.
best() {
	: >"$tmp/walls"
	bw= brss=
	i=0
	while [ $i -lt "$repeat" ]; do
		"$b/bench/timeit" "$tmp/time" "$@" >"$tmp/out" 2>&1 ||
			{ cat "$tmp/out" >&2; echo "bench: failed: $*" >&2; exit 1; }
		read -r w _ rss <"$tmp/time"
		echo "$w" >>"$tmp/walls"
		if [ -z "$bw" ] || awk "BEGIN{exit !($w < $bw)}"; then
			bw=$w brss=$rss
		fi
		i=$((i + 1))
	done
	med=$(sort -g "$tmp/walls" | awk '{v[NR] = $1}
		END {printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
	printf '%.3f %s %s\n' "$bw" "$med" "$brss"
}
ratio() { awk "BEGIN{printf \"%.1f\", $1 / $2}"; }
# line LABEL BEST MEDIAN RSS_KB
line() {
	printf '  %-52s %7s s (median %7s s) %8s MB\n' "$1" "$2" "$3" \
		"$(awk "BEGIN{printf \"%.1f\", $4 / 1024}")"
}
# against LABEL SLOWER_BEST SLOWER_MEDIAN FASTER_BEST FASTER_MEDIAN
against() {
	echo "     $1 $(ratio "$2" "$4")x (medians: $(ratio "$3" "$5")x)"
}

have_peer=0
if [ -f "$peer/pypeer.py" ] && $py -c 'import google.protobuf' 2>/dev/null &&
   command -v protoc >/dev/null; then
	have_peer=1
	export PB_DIR="$tmp/pb"
fi

echo "== machine: $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
echo "== commit: $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)"

g100="$tmp/g100k.pb"
if [ ! -f "$g100" ]; then
	if [ $have_peer = 1 ]; then $py "$peer/gen.py" 100000 "$g100"
	else "$b/bench/gen_graph" "$g100" 100000; fi
fi
echo "== 100,000-node graph ($(du -hL "$g100" | cut -f1)), best of $repeat"
set -- $(best "$ge" convert "$g100" "$tmp/plain.pb")
plain_rss=$3
line "gerewrite convert (load + save)" "$@"
set -- $(best "$ge" run insert_noise "$g100" -o "$tmp/noise.pb")
noise_w=$1 noise_m=$2 noise_rss=$3
line "gerewrite run insert_noise" "$@"
echo "     peak RSS against load + save: $(ratio "$noise_rss" "$plain_rss")x"
set -- $(best "$ge" "$top/bench/clone3.lua" "$g100" "$tmp/clone.pb")
clone_w=$1 clone_m=$2
line "gerewrite bench/clone3.lua (three ge.copy, save)" "$@"
set -- $(best "$ge" "$top/bench/clone3_ge.lua" "$g100" "$tmp/clone_ge.pb")
clonege_w=$1 clonege_m=$2
line "gerewrite bench/clone3_ge.lua (ge.sgv(g:ops()))" "$@"
set -- $(best "$ge" "$top/bench/noise_ge.lua" "$g100" "$tmp/noise_ge.pb")
noisege_w=$1 noisege_m=$2
line "gerewrite bench/noise_ge.lua (op by op)" "$@"
if [ $have_peer = 1 ]; then
	set -- $(best $py "$peer/pypeer.py" noise "$g100" "$tmp/pnoise.pb")
	line "Python peer: noise" "$@"
	against "insert_noise: gerewrite is faster than the peer by" \
		"$1" "$2" "$noise_w" "$noise_m"
	against "noise, graph_editor style: faster than the peer by" \
		"$1" "$2" "$noisege_w" "$noisege_m"
	set -- $(best $py "$peer/pypeer.py" clone "$g100" "$tmp/pclone.pb")
	line "Python peer: clone" "$@"
	against "clone x3: gerewrite is faster than the peer by" \
		"$1" "$2" "$clone_w" "$clone_m"
	against "clone x3, graph_editor style: faster than the peer by" \
		"$1" "$2" "$clonege_w" "$clonege_m"
else
	echo "  (the Python peer is not available: no ratios against it)"
fi

g1m="$tmp/g1m.pb"
[ -f "$g1m" ] || "$b/bench/gen_graph" "$g1m" 1000000
echo "== 1,000,000-node graph ($(du -hL "$g1m" | cut -f1)), best of $repeat"
set -- $(best cp "$g1m" "$tmp/cp.pb")
cp_w=$1 cp_m=$2
line "cp of the file" "$@"
# ge_save makes its output durable (fsync before the rename): the same
# work for cp is the copy and a sync of it
set -- $(best sh -c 'cp "$1" "$2" && sync "$2"' sh "$g1m" "$tmp/cp.pb")
cps_w=$1 cps_m=$2
line "cp of the file, then sync of the copy" "$@"
set -- $(best "$b/bench/bench_io" "$g1m" "$tmp/io.pb")
io_w=$1 io_m=$2 io_rss=$3
line "bench_io (ge_load + ge_save, fsync included)" "$@"
sed 's/^/       last run: /' "$tmp/out"
echo "     peak RSS $(ratio "$io_rss" "$(($(stat -L -c %s "$g1m") / 1024))")x the file"
set -- $(best "$b/bench/bench_pbc" "$g1m" "$tmp/pbc.pb")
line "bench_pbc (protobuf-c unpack + pack)" "$@"
against "load + save: time against cp" "$io_w" "$io_m" "$cp_w" "$cp_m"
against "load + save: time against cp + sync" "$io_w" "$io_m" "$cps_w" "$cps_m"
against "load + save: faster than protobuf-c by" "$1" "$2" "$io_w" "$io_m"
set -- $(best "$ge" run fuse_conv_bias_relu "$g1m" -o "$tmp/fused.pb")
fuse_w=$1 fuse_m=$2
line "gerewrite run fuse_conv_bias_relu" "$@"
set -- $(best "$b/bench/bench_match" "$g1m")
line "bench_match (C driver: load, find, rewrite, validate)" "$@"
against "fuse_conv_bias_relu: time against the C driver (which does not save)" \
	"$fuse_w" "$fuse_m" "$1" "$2"
rm -f "$tmp"/*.pb.tmp* "$tmp/out" "$tmp/time" "$tmp/walls"

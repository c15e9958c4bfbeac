#!/bin/sh
# bench/recipes.sh BUILDDIR [BASE_BUILDDIR]: recipe-level timings through
# the gerewrite program, each printed as a ratio measured in this run
# (make bench-recipes; BENCH_BASE=DIR gives the second directory).
#
#   insert_noise, 100,000 nodes      gerewrite run insert_noise  vs  the Python peer
#   clone x3, 100,000 nodes          bench/clone3.lua            vs  the Python peer
#     graph_editor style             bench/clone3_ge.lua (ge.sgv(g:ops()))  vs  the peer
#     each with provenance off       the same scripts, g:provenance_mode("off")
#   noise, graph_editor style        bench/noise_ge.lua (op by op)          vs  the peer
#   fuse_conv_bias_relu, 1,000,000   gerewrite run               vs  the C driver (bench_match)
#   load + save, 1,000,000           bench_io  vs  cp, cp + sync  vs  protobuf-c
#                                    unpack + pack (bench_pbc)
#
# The peer (../shared/peer, python3-protobuf and protoc) runs when present.
# Each command runs REPEAT times (default 5) under bench/timeit; the best
# wall time counts, the median is printed beside it with the peak RSS of the
# best run, and each ratio is given for both.  With a base build (an older
# commit's build tree), each of the project's commands runs in both builds,
# one run of each in turn, so that a busy spell of the machine falls on
# both alike, and both are put against the same runs of the references
# (the peer, cp, protobuf-c); each build runs the recipes of its own
# source tree on the workloads of this one.  Never part of make check.
set -eu
b=$(cd "${1:-.}" && pwd)
base=
[ -z "${2:-}" ] || base=$(cd "$2" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
repeat=${REPEAT:-5}
tmp=${TMPDIR:-/tmp}/gerewrite-bench-recipes
mkdir -p "$tmp"
peer="${GE_PEER:-$top/../shared/peer}"
py=/usr/bin/python3
timeit="$b/bench/timeit"

# stale DIR: refuses a build tree whose programs are older than the
# library they link (`make bench-recipes` builds them; this script alone
# would time whatever an earlier build left)
stale() {
	for p in src/gerewrite bench/bench_io bench/bench_match; do
		if [ -n "$(find "$1/lib/libgerewrite.a" -newer "$1/$p" \
			2>/dev/null)" ]; then
			echo "bench: $1/$p is older than $1/lib/libgerewrite.a:" \
			     "build it first (make bench-recipes does)" >&2
			exit 1
		fi
	done
}
stale "$b"
[ -z "$base" ] || stale "$base"

# the source tree of a build tree (its scripts are the recipes it runs)
srcof() { sed -n 's/^abs_top_srcdir = //p' "$1/Makefile"; }
rev() { git -C "$1" rev-parse --short HEAD 2>/dev/null || echo unknown; }
[ -z "$base" ] || base_top=$(srcof "$base")

# timed FILE CMD...: one run of CMD, its "WALL RSS_KB CPU" appended to
# FILE, its output in FILE.out
timed() {
	f=$1
	shift
	"$timeit" "$tmp/time" "$@" >"$f.out" 2>&1 ||
		{ cat "$f.out" >&2; echo "bench: failed: $*" >&2; exit 1; }
	read -r w cpu rss <"$tmp/time"
	echo "$w $rss $cpu" >>"$f"
}

# summary FILE: "BEST MEDIAN RSS CPU" of its runs: the best and the
# median wall seconds, and the peak RSS (KB) and the CPU seconds (user +
# system) of the best run
summary() {
	sort -g "$1" | awk '{w[NR] = $1; r[NR] = $2; c[NR] = $3}
		END {printf "%.3f %.3f %s %.3f\n", w[1],
		     NR % 2 ? w[(NR + 1) / 2] : (w[NR / 2] + w[NR / 2 + 1]) / 2, r[1], c[1]}'
}

# best CMD...: "BEST MEDIAN RSS CPU" of REPEAT runs of a reference command
best() {
	: >"$tmp/w.ref"
	i=0
	while [ $i -lt "$repeat" ]; do
		timed "$tmp/w.ref" "$@"
		i=$((i + 1))
	done
	cp "$tmp/w.ref.out" "$tmp/out"
	summary "$tmp/w.ref"
}

ratio() { awk "BEGIN{printf \"%.1f\", $1 / $2}"; }
# line LABEL BEST MEDIAN RSS_KB CPU: the wall times, the peak RSS and
# the CPU time of the best run (what the wall time has beyond it is
# waiting: the disk, for a save's fsync and the unlink of the file it
# replaces)
line() {
	printf '  %-52s %7s s (median %7s s) %8s MB, cpu %s s\n' "$1" "$2" "$3" \
		"$(awk "BEGIN{printf \"%.1f\", $4 / 1024}")" "$5"
}

# ours LABEL PROG ARGS...: PROG (a path in the build tree) in this build,
# and in the base build in turn; prints the lines and sets cur (and old)
# to "BEST MEDIAN RSS"; the last run's output is in $tmp/out
ours() {
	label=$1 prog=$2
	shift 2
	: >"$tmp/w.cur"
	: >"$tmp/w.old"
	i=0
	while [ $i -lt "$repeat" ]; do
		timed "$tmp/w.cur" env GEREWRITE_PATH="$top/scripts" "$b/$prog" "$@"
		[ -z "$base" ] || timed "$tmp/w.old" \
			env GEREWRITE_PATH="$base_top/scripts" "$base/$prog" "$@"
		i=$((i + 1))
	done
	cp "$tmp/w.cur.out" "$tmp/out"
	cur=$(summary "$tmp/w.cur")
	line "$label" $cur
	old=
	if [ -n "$base" ]; then
		old=$(summary "$tmp/w.old")
		line "  the same, $(rev "$base_top")" $old
	fi
}

# against LABEL SLOWER FASTER: "BEST MEDIAN RSS CPU" each; the ratio of
# the best runs and of the medians
against1() {
	set -- "$1" $2 $3
	echo "     $1 $(ratio "$2" "$6")x (medians: $(ratio "$3" "$7")x)"
}
# vs LABEL REF OURS_CUR OURS_OLD, "ours" on either side: SLOWER is the
# reference when "ours" is faster (REF first), else ours
vs_faster() { # ours faster than the reference
	against1 "$1" "$2" "$3"
	[ -z "$4" ] || against1 "  $(rev "$base_top"):" "$2" "$4"
}
vs_slower() { # ours against a faster reference
	against1 "$1" "$3" "$2"
	[ -z "$4" ] || against1 "  $(rev "$base_top"):" "$4" "$2"
}

have_peer=0
if [ -f "$peer/pypeer.py" ] && $py -c 'import google.protobuf' 2>/dev/null &&
   command -v protoc >/dev/null; then
	have_peer=1
	export PB_DIR="$tmp/pb"
fi

echo "== machine: $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
echo "== commit: $(rev "$top")${base:+, against $(rev "$base_top") (runs alternating)}"

g100="$tmp/g100k.pb"
if [ ! -f "$g100" ]; then
	if [ $have_peer = 1 ]; then $py "$peer/gen.py" 100000 "$g100"
	else "$b/bench/gen_graph" "$g100" 100000; fi
fi
echo "== 100,000-node graph ($(du -hL "$g100" | cut -f1)), best of $repeat"
ours "gerewrite convert (load + save)" src/gerewrite convert "$g100" "$tmp/plain.pb"
plain_rss=$(echo $cur | cut -d' ' -f3)
ours "gerewrite run insert_noise" src/gerewrite run insert_noise "$g100" -o "$tmp/noise.pb"
noise_cur=$cur noise_old=$old
echo "     peak RSS against load + save: $(ratio "$(echo $cur | cut -d' ' -f3)" "$plain_rss")x"
ours "gerewrite bench/clone3.lua (three ge.copy, save)" src/gerewrite \
	"$top/bench/clone3.lua" "$g100" "$tmp/clone.pb"
clone_cur=$cur clone_old=$old
ours "gerewrite bench/clone3_ge.lua (ge.sgv(g:ops()))" src/gerewrite \
	"$top/bench/clone3_ge.lua" "$g100" "$tmp/clone_ge.pb"
clonege_cur=$cur clonege_old=$old
ours "gerewrite bench/clone3.lua, provenance off" src/gerewrite \
	"$top/bench/clone3.lua" "$g100" "$tmp/clone_off.pb" off
cloneoff_cur=$cur cloneoff_old=$old
ours "gerewrite bench/clone3_ge.lua, provenance off" src/gerewrite \
	"$top/bench/clone3_ge.lua" "$g100" "$tmp/clone_ge_off.pb" off
clonegeoff_cur=$cur clonegeoff_old=$old
ours "gerewrite bench/noise_ge.lua (op by op)" src/gerewrite \
	"$top/bench/noise_ge.lua" "$g100" "$tmp/noise_ge.pb"
noisege_cur=$cur noisege_old=$old
if [ $have_peer = 1 ]; then
	p=$(best $py "$peer/pypeer.py" noise "$g100" "$tmp/pnoise.pb")
	line "Python peer: noise" $p
	vs_faster "insert_noise: gerewrite is faster than the peer by" \
		"$p" "$noise_cur" "$noise_old"
	vs_faster "noise, graph_editor style: faster than the peer by" \
		"$p" "$noisege_cur" "$noisege_old"
	p=$(best $py "$peer/pypeer.py" clone "$g100" "$tmp/pclone.pb")
	line "Python peer: clone" $p
	vs_faster "clone x3: gerewrite is faster than the peer by" \
		"$p" "$clone_cur" "$clone_old"
	vs_faster "clone x3, graph_editor style: faster than the peer by" \
		"$p" "$clonege_cur" "$clonege_old"
	vs_faster "clone x3, provenance off: faster than the peer by" \
		"$p" "$cloneoff_cur" "$cloneoff_old"
	vs_faster "clone x3, graph_editor style, provenance off: by" \
		"$p" "$clonegeoff_cur" "$clonegeoff_old"
else
	echo "  (the Python peer is not available: no ratios against it)"
fi

g1m="$tmp/g1m.pb"
[ -f "$g1m" ] || "$b/bench/gen_graph" "$g1m" 1000000
echo "== 1,000,000-node graph ($(du -hL "$g1m" | cut -f1)), best of $repeat"
cp1=$(best cp "$g1m" "$tmp/cp.pb")
line "cp of the file" $cp1
# ge_save makes its output durable (fsync before the rename): the same
# work for cp is the copy and a sync of it
cps=$(best sh -c 'cp "$1" "$2" && sync "$2"' sh "$g1m" "$tmp/cp.pb")
line "cp of the file, then sync of the copy" $cps
ours "bench_io (ge_load + ge_save, fsync included)" bench/bench_io \
	"$g1m" "$tmp/io.pb"
io_cur=$cur io_old=$old
sed 's/^/       last run: /' "$tmp/out"
echo "     peak RSS $(ratio "$(echo $cur | cut -d' ' -f3)" "$(($(stat -L -c %s "$g1m") / 1024))")x the file"
pbc=$(best "$b/bench/bench_pbc" "$g1m" "$tmp/pbc.pb")
line "bench_pbc (protobuf-c unpack + pack)" $pbc
vs_slower "load + save: time against cp" "$cp1" "$io_cur" "$io_old"
vs_slower "load + save: time against cp + sync" "$cps" "$io_cur" "$io_old"
vs_faster "load + save: faster than protobuf-c by" "$pbc" "$io_cur" "$io_old"
ours "gerewrite run fuse_conv_bias_relu" src/gerewrite run fuse_conv_bias_relu \
	"$g1m" -o "$tmp/fused.pb"
fuse_cur=$cur fuse_old=$old
drv=$(best "$b/bench/bench_match" "$g1m")
line "bench_match (C driver: load, find, rewrite, validate)" $drv
vs_slower "fuse_conv_bias_relu: time against the C driver (which does not save)" \
	"$drv" "$fuse_cur" "$fuse_old"
rm -f "$tmp"/*.pb.tmp* "$tmp/out" "$tmp/time" "$tmp"/w.*

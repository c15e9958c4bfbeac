#!/bin/sh
# bench/recipes.sh BUILDDIR: recipe-level timings through the gerewrite
# program, each printed as a ratio measured in this run (make bench-recipes).
#
#   insert_noise, 100,000 nodes      gerewrite run insert_noise  vs  the Python peer
#   clone x3, 100,000 nodes          bench/clone3.lua            vs  the Python peer
#   fuse_conv_bias_relu, 1,000,000   gerewrite run               vs  the C driver (bench_match)
#   load + save, 1,000,000           bench_io  vs  cp, cp + sync  vs  protobuf-c
#                                    unpack + pack (bench_pbc)
#
# The peer (../shared/peer, python3-protobuf and protoc) runs when present.
# Each command runs REPEAT times (default 3); the best wall time counts, and
# the peak RSS of that run is printed beside it.  Never part of make check.
set -eu
b=$(cd "${1:-.}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
repeat=${REPEAT:-3}
tmp=${TMPDIR:-/tmp}/gerewrite-bench-recipes
mkdir -p "$tmp"
ge="$b/src/gerewrite"
peer="${GE_PEER:-$top/../shared/peer}"
py=/usr/bin/python3
export GEREWRITE_PATH="$top/scripts"

# best WALL SECONDS and the RSS (KB) of that run, of `repeat` runs of "$@"
best() {
	bw= brss=
	i=0
	while [ $i -lt "$repeat" ]; do
		/usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >"$tmp/out" 2>&1 ||
			{ cat "$tmp/out" >&2; echo "bench: failed: $*" >&2; exit 1; }
		read -r w rss <"$tmp/time"
		if [ -z "$bw" ] || awk "BEGIN{exit !($w < $bw)}"; then
			bw=$w brss=$rss
		fi
		i=$((i + 1))
	done
	echo "$bw $brss"
}
ratio() { awk "BEGIN{printf \"%.1f\", $1 / $2}"; }
line() { printf '  %-52s %8s s  %8s MB\n' "$1" "$2" "$(awk "BEGIN{printf \"%.1f\", $3 / 1024}")"; }

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
plain_w=$1 plain_rss=$2
line "gerewrite convert (load + save)" "$plain_w" "$plain_rss"
set -- $(best "$ge" run insert_noise "$g100" -o "$tmp/noise.pb")
noise_w=$1 noise_rss=$2
line "gerewrite run insert_noise" "$noise_w" "$noise_rss"
echo "     peak RSS against load + save: $(ratio "$noise_rss" "$plain_rss")x"
set -- $(best "$ge" "$top/bench/clone3.lua" "$g100" "$tmp/clone.pb")
clone_w=$1 clone_rss=$2
line "gerewrite bench/clone3.lua (three ge.copy, save)" "$clone_w" "$clone_rss"
if [ $have_peer = 1 ]; then
	set -- $(best $py "$peer/pypeer.py" noise "$g100" "$tmp/pnoise.pb")
	line "Python peer: noise" "$1" "$2"
	echo "     insert_noise: gerewrite is $(ratio "$1" "$noise_w")x faster than the peer"
	set -- $(best $py "$peer/pypeer.py" clone "$g100" "$tmp/pclone.pb")
	line "Python peer: clone" "$1" "$2"
	echo "     clone x3: gerewrite is $(ratio "$1" "$clone_w")x faster than the peer"
else
	echo "  (the Python peer is not available: no ratios against it)"
fi

g1m="$tmp/g1m.pb"
[ -f "$g1m" ] || "$b/bench/gen_graph" "$g1m" 1000000
echo "== 1,000,000-node graph ($(du -hL "$g1m" | cut -f1)), best of $repeat"
set -- $(best cp "$g1m" "$tmp/cp.pb")
cp_w=$1
line "cp of the file" "$1" "$2"
# ge_save makes its output durable (fsync before the rename): the same
# work for cp is the copy and a sync of it
set -- $(best sh -c 'cp "$1" "$2" && sync "$2"' sh "$g1m" "$tmp/cp.pb")
cps_w=$1
line "cp of the file, then sync of the copy" "$1" "$2"
set -- $(best "$b/bench/bench_io" "$g1m" "$tmp/io.pb")
io_w=$1 io_rss=$2
line "bench_io (ge_load + ge_save, fsync included)" "$io_w" "$io_rss"
sed 's/^/       last run: /' "$tmp/out"
echo "     peak RSS $(ratio "$io_rss" "$(($(stat -L -c %s "$g1m") / 1024))")x the file"
set -- $(best "$b/bench/bench_pbc" "$g1m" "$tmp/pbc.pb")
pbc_w=$1
line "bench_pbc (protobuf-c unpack + pack)" "$1" "$2"
echo "     load + save: $(ratio "$io_w" "$cp_w")x cp, $(ratio "$io_w" "$cps_w")x cp + sync, $(ratio "$pbc_w" "$io_w")x faster than protobuf-c"
set -- $(best "$ge" run fuse_conv_bias_relu "$g1m" -o "$tmp/fused.pb")
fuse_w=$1
line "gerewrite run fuse_conv_bias_relu" "$1" "$2"
set -- $(best "$b/bench/bench_match" "$g1m")
line "bench_match (C driver: load, find, rewrite, validate)" "$1" "$2"
echo "     fuse_conv_bias_relu: the recipe takes $(ratio "$fuse_w" "$1")x the C driver (the driver does not save)"
rm -f "$tmp"/*.pb.tmp* "$tmp/out" "$tmp/time"

#!/bin/sh
# bench/eval.sh BUILDDIR: the runner on whole models (make bench-eval).
#
#   faceres-deep 1x224x224x3 float32, handtrack 1x256x256x3 uint8
#     gerewrite eval --repeat R --stats: the best run, the session open
#       and the variables restored before the clock starts
#     TensorFlow.js's CPU backend (tfjs-core, -converter, -backend-cpu
#       4.22.0, installed here by npm into BUILDDIR/bench/node) on the same
#       model (converted to a TensorFlow.js model by gerewrite convert when
#       the corpus has it only as a frozen graph) and input shape: the best
#       of R runs after a first one that warms it up
#   and the peak RSS of the whole gerewrite process (bench/timeit) against
#   the budget the issue set: the weights plus the peak of live tensors
#   plus 64 MiB.
#
# The corpus is ../shared/corpus or $GE_CORPUS.  Without npm (or with no
# network to the npm registry) the TensorFlow.js column says so.  Never
# part of make check.
set -eu
b=$(cd "${1:-.}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
repeat=${REPEAT:-5}
corpus=${GE_CORPUS:-$top/../shared/corpus}
tmp=${TMPDIR:-/tmp}/gerewrite-bench-eval
ge="$b/src/gerewrite"
node_dir="$b/bench/node"
mkdir -p "$tmp"
test -d "$corpus/large" || { echo "bench-eval: no corpus at $corpus"; exit 0; }

tfjs=no
if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
	if test -d "$node_dir/node_modules/@tensorflow/tfjs-backend-cpu" ||
	   (mkdir -p "$node_dir" && cd "$node_dir" &&
	    { test -f package.json || npm init -y >/dev/null; } &&
	    npm install --no-audit --no-fund @tensorflow/tfjs-core@4.22.0 \
		@tensorflow/tfjs-converter@4.22.0 \
		@tensorflow/tfjs-backend-cpu@4.22.0 >npm.log 2>&1); then
		tfjs=yes
		cp "$top/bench/tfjs_eval.js" "$node_dir/tfjs_eval.js"
	fi
fi

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores"
echo "commit:  $(cd "$top" && git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "runs:    best of $repeat"
printf '%-14s %10s %10s %8s %10s %10s %10s %8s\n' model gerewrite tfjs-cpu ratio \
	"rss(MiB)" "budget" "weights" "live"

# one MODEL_PB TFJS_JSON INPUT_SPEC SHAPE
one() {
	name=$1 pb=$2 json=$3 spec=$4 shape=$5
	"$b/bench/timeit" "$tmp/time" "$ge" eval "$pb" -i "$spec" \
		--repeat "$repeat" --stats -n 0 >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/err" >&2; echo "bench-eval: $name failed" >&2; return 1; }
	run=$(sed -n 's/^eval: run \([0-9.]*\) s.*/\1/p' "$tmp/err")
	live=$(sed -n 's/.*peak of live tensors \([0-9.]*\) \([KMG]\)iB.*/\1 \2/p' "$tmp/err" |
		awk '{ m = $2 == "K" ? 1/1024 : $2 == "G" ? 1024 : 1; printf "%.1f", $1 * m }')
	read -r _ _ rss <"$tmp/time"
	rss_mib=$(awk "BEGIN{printf \"%.1f\", $rss / 1024}")
	weights=$(awk "BEGIN{printf \"%.1f\", $(stat -c %s "$pb") / 1048576}")
	budget=$(awk "BEGIN{printf \"%.1f\", $weights + $live + 64}")
	tj=- ratio=-
	if [ "$tfjs" = yes ]; then
		if [ ! -f "$json" ]; then
			rm -rf "$tmp/$name.tfjs"
			"$ge" convert "$pb" "$tmp/$name.tfjs/model.json" >/dev/null
			json="$tmp/$name.tfjs/model.json"
		fi
		tj=$(cd "$node_dir" && node tfjs_eval.js "$json" "$shape" "$repeat" 2>/dev/null |
			tail -1 | awk '{print $1}')
		ratio=$(awk "BEGIN{printf \"%.1fx\", $tj / $run}")
	fi
	printf '%-14s %9ss %9ss %8s %10s %10s %10s %8s\n' "$name" "$run" "$tj" "$ratio" \
		"$rss_mib" "$budget" "$weights" "$live"
}

one faceres-deep "$corpus/large/faceres-deep.frozen.pb" none \
	"input_1=1x224x224x3:float32:0..1" 1,224,224,3
one handtrack "$corpus/large/handtrack.frozen.pb" \
	"$corpus/tfjs/npm__@vladmandic__human-3.3.6/models/handtrack.json" \
	"input_tensor=1x256x256x3:uint8:0..255" 1,256,256,3
[ "$tfjs" = yes ] || echo "(TensorFlow.js not timed: npm or its packages are not available)"

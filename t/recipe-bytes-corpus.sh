#!/bin/sh
# recipe-bytes-corpus.sh: insert_noise, fuse_conv_bias_relu and the clone
# x3 of bench/clone3.lua write the same bytes as the program did before
# the recipe path was made fast: the SHA-256 of each output is compared
# with t/recipe-bytes.txt, written by the program of that time (the clone
# sums of charcnn and mnistconv rewritten since: each tower's copied saver
# now saves its own variables under their new keys, doc/variables.md; the
# fuse and clone sums rewritten when copies and fused ops began to name
# their sources in experimental_debug_info, doc/provenance.md: the outputs
# then, as text without that field, were those of before).
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
TOP=${GE_TOP_SRCDIR:-.}
C=$GE_CORPUS
if test -z "$C" || test ! -f "$C/MANIFEST.tsv"; then
	echo "1..0 # SKIP corpus not found"
	exit 0
fi
if ! command -v sha256sum >/dev/null; then
	echo "1..0 # SKIP no sha256sum"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-rbytes.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$TOP/t/testlib.sh"
GEREWRITE_PATH=$TOP/scripts
export GEREWRITE_PATH

run "$BIN" "$TOP/t/recipe-bytes-gen.lua" "$T/gen.pb" 60
is_rc 0 "a generated graph of 60 conv blocks"
cp "$T/gen.pb" "$T/gen-fused.pb"

# name|path of each model (the generated one is in $T)
models="gen|$T/gen.pb
cifar|$C/dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/cifar_model/frozen_model.pb
ae0|$C/onnx__tensorflow-onnx/tests/models/ae0/frozen.pb
gru|$C/onnx__tensorflow-onnx/tests/models/gru/frozen.pb
charcnn|$C/SciSharp__TensorFlow.NET/graph/char_cnn_untrained.meta
mnistconv|$C/dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/mnist_conv_model/saved_model.pb"

: >"$T/sums"
echo "$models" | while IFS='|' read -r name path; do
	ext=${path##*.}
	"$BIN" run insert_noise "$path" -o "$T/noise-$name.$ext" \
		-p types=Conv2D,MatMul -p seed=7 >/dev/null 2>&1 ||
		echo "insert_noise $name failed" >>"$T/sums"
	"$BIN" run fuse_conv_bias_relu "$path" -o "$T/fuse-$name.$ext" \
		-p activations=Relu,LeakyRelu -p data_formats=NHWC,NCHW \
		>/dev/null 2>&1 || echo "fuse_conv_bias_relu $name failed" >>"$T/sums"
	"$BIN" "$TOP/bench/clone3.lua" "$path" "$T/clone-$name.$ext" \
		>/dev/null 2>&1 || echo "clone $name failed" >>"$T/sums"
	for r in noise fuse clone; do
		set -- `sha256sum "$T/$r-$name.$ext" 2>/dev/null`
		echo "$r $name ${1:-missing}" >>"$T/sums"
	done
done
if test -n "$GE_WRITE_RECIPE_BYTES"; then
	cp "$T/sums" "$GE_WRITE_RECIPE_BYTES"
fi
while read -r r name sum; do
	want=`awk -v r="$r" -v m="$name" '$1 == r && $2 == m { print $3 }' \
		"$TOP/t/recipe-bytes.txt"`
	test "$sum" = "$want"
	ok $? "$r on $name: the same bytes as before"
done <"$T/sums"
# the generated graph really had sites for both recipes
run cmp -s "$T/gen.pb" "$T/fuse-gen.pb"
test "$rc" -ne 0
ok $? "fuse_conv_bias_relu changed the generated graph"
run cmp -s "$T/gen.pb" "$T/noise-gen.pb"
test "$rc" -ne 0
ok $? "insert_noise changed the generated graph"

echo "1..$n"
exit $failed

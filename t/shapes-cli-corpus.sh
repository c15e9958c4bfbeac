#!/bin/sh
# shapes-cli-corpus.sh: `set_input_shape batch=8` on the cifar frozen model
# propagates to its output (info shows it); a shape that cannot hold is an
# error naming the op; `dot` labels edges with inferred shapes.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
C=$GE_CORPUS
if test -z "$C" || test ! -f "$C/MANIFEST.tsv"; then
	echo "1..0 # SKIP corpus not found"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-shapes.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"
M=$C/dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/cifar_model/frozen_model.pb

run "$BIN" info "$M"
has "$T/out" "Output:0  float32[?,10]  (MatMul)" "info shows the inferred output shape"
run "$BIN" run set_input_shape "$M" -o "$T/b8.pb" --param batch=8
is_rc 0 "set_input_shape batch=8"
run "$BIN" info "$T/b8.pb"
has "$T/out" "Input:0  float32[8,32,32,3]  (Placeholder)" "the input has batch 8"
has "$T/out" "Output:0  float32[8,10]  (MatMul)" "and so has the output"
run "$BIN" validate "$T/b8.pb"
is_rc 0 "the result validates"
run "$BIN" run set_input_shape "$M" -o "$T/bad.pb" --param shapes=Input:1x30x30x3
is_rc 1 "a spatial size the Reshape cannot take fails"
has "$T/err" "op 'Reshape' (Reshape): cannot reshape [1,12,12,32] (4608 elements) into [?,5408]" \
	"naming the op and the shapes"
test ! -e "$T/bad.pb"
ok $? "and writes nothing"
run "$BIN" dot "$T/b8.pb"
has "$T/out" '[8,5408]"]' "dot labels edges with their shapes"
echo "1..$n"
exit $failed

#!/bin/sh
# verify-corpus.sh: eval and verify on models of the corpus: y = 0.5x + 2
# from the half_plus_two SavedModels (TF1 and TF2) and 3x from tfjs-node's
# times_three_float through `gerewrite eval`; on faceres-deep, verify
# against its quantize_weights output exits 1 with the error, against its
# fold_batch_norms output 0, and one Const changed by 1e-3 is caught and
# named by --per-op; a uint8 TensorFlow.js save of blazeface is caught.
# A model whose ops do not all have kernels yet is skipped, visibly.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
C=${GE_CORPUS:-../shared/corpus}
if ! test -f "$C/MANIFEST.tsv"; then
	echo "1..0 # SKIP corpus not found"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-verifyc.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

# runs MODEL ARGS: whether eval runs it (else the reason in $why)
runs() {
	"$BIN" eval "$@" >/dev/null 2>"$T/why" && return 0
	why=`head -1 "$T/why"`
	return 1
}

TF1=$C/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/half_plus_two/00000123
TF1S=$C/tensorflow__serving/tensorflow_serving/servables/tensorflow/testdata/saved_model_half_plus_two_cpu/00000123
TF2=$C/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/half_plus_two_v2/00000123
for m in "$TF1" "$TF1S" "$TF2"; do
	run "$BIN" eval "$m" -i 'x=[[1],[2],[5]]'
	is_rc 0 "eval ${m#$C/}"
	has "$T/out" 'y (y:0) float32[3,1] min 2.5 max 4.5 mean 3.33333 [2.5, 3, 4.5]' \
		"y = 0.5x + 2 for x = [1, 2, 5]"
done
run "$BIN" eval "$C/tensorflow__tfjs/tfjs-node/test_objects/saved_model/times_three_float" -i x=5
has "$T/out" 'output_0 (StatefulPartitionedCall:0) float32[] min 15 max 15' \
	"tfjs-node times_three_float: 3x (a TF2 signature)"
# a TensorFlow.js signature that names its outputs only: the inputs are
# the graph's placeholders
FB=$C/tfjs/npm__@vladmandic__human-models-3.0.4/models/faceboxes.json
run "$BIN" eval "$FB" -i image_tensor=1x64x64x3:uint8:0..255 -n 1
is_rc 0 "faceboxes: its input comes from the graph"
has "$T/out" 'boxes float32[1,200,4]' "faceboxes: boxes of its TensorArray loop"

F=$C/large/faceres-deep.frozen.pb
if runs "$F"; then
	"$BIN" run quantize_weights "$F" -o "$T/q.pb" 2>/dev/null
	"$BIN" run fold_batch_norms "$F" -o "$T/b.pb" 2>/dev/null
	run "$BIN" verify "$F" "$T/q.pb" --report "$T/q.json"
	is_rc 1 "faceres-deep against its quantize_weights output"
	has "$T/out" 'age_pred/Softmax float32[1,100]: max abs' "the error is reported"
	has "$T/out" 'OUTSIDE tolerance' "outside the default tolerance"
	run "$BIN" verify "$F" "$T/b.pb"
	is_rc 0 "faceres-deep against its fold_batch_norms output"
	# the bias of one output moved by 1e-3
	"$BIN" -e "
		local g = assert(ge.load('$F'))
		local c = assert(g:op('gender_pred/bias'), 'no such Const')
		local v = c:attr('value')
		local t = v:totable()
		t[1] = t[1] + 1e-3
		c:set_attr('value', ge.tensor_value(v.dtype, v.shape, t))
		assert(g:save('$T/c.pb'))" 2>"$T/err"
	run "$BIN" verify "$F" "$T/c.pb" --per-op
	is_rc 1 "one Const changed by 1e-3 is caught"
	has "$T/out" 'the first: gender_pred/bias (Const' \
		"--per-op names the Const it changed"
else
	skip 6 "faceres-deep does not run yet: $why"
fi

B=$C/tfjs/npm__@vladmandic__human-3.3.6/models/blazeface.json
if runs "$B"; then
	"$BIN" convert "$B" "$T/bq/model.json" --quantize uint8 >/dev/null
	run "$BIN" verify "$B" "$T/bq/model.json"
	is_rc 1 "blazeface against its uint8 TensorFlow.js save"
	has "$T/out" 'cosine' "with the figures"
else
	skip 2 "blazeface does not run yet: $why"
fi

echo "1..$n"
exit $failed

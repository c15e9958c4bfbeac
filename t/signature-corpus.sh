#!/bin/sh
# signature-corpus.sh: the `signature` recipe on half_plus_two, TF2 and
# TF1 (y = 0.5x + 2): serving_default renamed to predict, its key x to
# inputs, a signature `regress` added for y; the SavedModel written reads
# back with gerewrite and with protobuf-c's generated reader alone
# (t/sigcheck: the object graph's `signatures` and the SignatureDefs
# agree), eval --signature runs each with the right numbers; bad input is
# one line naming it, exit 2, nothing written.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
CHECK=${GE_TOP_BUILDDIR:-.}/t/sigcheck
CORPUS=${GE_CORPUS:-${GE_TOP_SRCDIR:-.}/../shared/corpus}
test -d "$CORPUS" || CORPUS=/work/shared/corpus
TF2=$CORPUS/tensorflow__serving/tensorflow_serving/servables/tensorflow/testdata/saved_model_half_plus_two_tf2_cpu/00000123
TF1=$CORPUS/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/half_plus_two/00000123
if ! test -f "$TF2/saved_model.pb" || ! test -f "$TF1/saved_model.pb"; then
	echo "1..0 # SKIP corpus not found ($CORPUS)"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-sigt.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

# ---- TF2: rename, key rename, a new signature
run "$BIN" run signature "$TF2" -o "$T/a" --param rename=serving_default:predict \
	--param name=predict --param rename_inputs=x:inputs
is_rc 0 "TF2: serving_default renamed to predict, key x to inputs"
run "$BIN" run signature "$T/a" -o "$T/b" --param name=regress \
	--param inputs=x=serving_default_x:0 \
	--param outputs=y=StatefulPartitionedCall_5:0
is_rc 0 "TF2: signature regress added for y"
run "$BIN" info "$T/b"
has "$T/out" "predict  tensorflow/serving/predict" "info: predict is there"
has "$T/out" "in   inputs -> serving_default_x:0 float32[1]" \
	"info: its input key is inputs, with dtype and shape"
has "$T/out" "regress  tensorflow/serving/predict" "info: regress is there"
grep -q "serving_default " "$T/out"
ok `test $? -ne 0; echo $?` "info: serving_default is gone"

run "$CHECK" "$T/b/saved_model.pb"
is_rc 0 "protobuf-c's reader: object graph and SignatureDefs agree"
has "$T/out" "sig predict in:inputs=serving_default_x:0 out:y=StatefulPartitionedCall_5:0" \
	"SignatureDef predict"
has "$T/out" "sig regress in:x=serving_default_x:0 out:y=StatefulPartitionedCall_5:0" \
	"SignatureDef regress"
grep "^obj predict fn:__inference_signature_wrapper_predict_[0-9]* args:inputs outs:y$" \
	"$T/out" >/dev/null
ok $? "root.signatures.predict: a new function taking inputs"
grep "^obj regress fn:__inference_signature_wrapper_regress_[0-9]* args:x outs:y$" \
	"$T/out" >/dev/null
ok $? "root.signatures.regress: a new function taking x"
grep -q "^obj serving_default" "$T/out"
ok `test $? -ne 0; echo $?` "root.signatures.serving_default is gone"
run "$CHECK" "$TF2/saved_model.pb"
is_rc 0 "the reader agrees with the original too"

run "$BIN" eval "$T/b" --signature predict --input inputs=4
is_rc 0 "eval --signature predict"
has "$T/out" "y (StatefulPartitionedCall_5:0) float32[1] min 4 max 4 mean 4 [4]" \
	"predict: 0.5 * 4 + 2 = 4"
run "$BIN" eval "$T/b" --signature regress --input x=10
is_rc 0 "eval --signature regress"
has "$T/out" "min 7 max 7 mean 7 [7]" "regress: 0.5 * 10 + 2 = 7"
run "$BIN" validate "$T/b"
is_rc 0 "the written SavedModel validates"

# remove
run "$BIN" run signature "$T/b" -o "$T/c" --param remove=regress
is_rc 0 "TF2: regress removed"
run "$CHECK" "$T/c/saved_model.pb"
is_rc 0 "reader: still consistent after the removal"
grep -q "regress " "$T/out"
ok `test $? -ne 0; echo $?` "regress is gone from both"

# ---- TF1
run "$BIN" run signature "$TF1" -o "$T/t1" --param rename=serving_default:predict \
	--param name=regress2 --param inputs=x:0 --param outputs=y:0,y2:0
is_rc 0 "TF1: rename, and a signature of two outputs added"
run "$BIN" info "$T/t1"
has "$T/out" "regress2  tensorflow/serving/predict" "TF1: regress2 is there"
has "$T/out" "out  y2 <- y2:0 float32[?,1]" "TF1: keys from op names"
run "$BIN" eval "$T/t1" --signature regress2 --input 'x=[[1],[6]]'
is_rc 0 "TF1: eval --signature regress2"
has "$T/out" "y (y:0) float32[2,1] min 2.5 max 5 mean 3.75 [2.5, 5]" \
	"TF1: y = 0.5x + 2"
has "$T/out" "y2 (y2:0) float32[2,1] min 3.5 max 6 mean 4.75 [3.5, 6]" \
	"TF1: y2 = 0.5x + 3"
run "$BIN" eval "$T/t1" --signature predict --input 'x=[[2]]'
has "$T/out" "[3]" "TF1: predict runs as serving_default did"

# ---- bad input: one line naming it, exit 2, nothing written
bad() { # bad NAME TEXT ARGS...
	name=$1; text=$2; shift 2
	run "$BIN" run signature "$TF2" -o "$T/bad" "$@"
	is_rc 2 "$name"
	has "$T/err" "$text" "$name: the message names it"
	ok `test \`wc -l <"$T/err"\` -eq 1 && ! test -e "$T/bad"; echo $?` \
		"$name: one line, nothing written"
}
bad "a missing tensor" "names no tensor 'nosuch:0'" \
	--param name=s --param inputs=x=serving_default_x:0 --param outputs=y=nosuch:0
bad "a duplicate key" "duplicate key 'x'" \
	--param name=s --param inputs=x=serving_default_x:0,x=serving_default_x:0 \
	--param outputs=y=StatefulPartitionedCall_5:0
bad "a name taken" "'classify_x_to_y' is taken" \
	--param rename=serving_default:classify_x_to_y
bad "a missing signature" "no signature 'nosuch'" --param remove=nosuch
bad "TF2: outputs of two calls" "come from different ops" \
	--param name=s --param inputs=x=serving_default_x:0 \
	--param outputs=y=StatefulPartitionedCall_5:0,z=StatefulPartitionedCall:0

echo "1..$n"
exit $failed

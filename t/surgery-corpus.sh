#!/bin/sh
# surgery-corpus.sh: `gerewrite compose` and `gerewrite extract` on corpus
# models.  model_matmul (c = a @ b) composed with itself evaluates to
# running it twice; the inner block Conv2D -> Relu of the CIFAR frozen
# model, extracted as a SavedModel and as a GraphDef, gives the values
# those tensors have in the whole model; bad input (a missing tensor,
# different dtypes, incompatible shapes, a name given twice) is one line
# naming it, exit 2, nothing written.  Compositions of SavedModels with
# variables carry both checkpoints; extract cuts TF2 SavedModels too.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
CORPUS=${GE_CORPUS:-${GE_TOP_SRCDIR:-.}/../shared/corpus}
test -d "$CORPUS" || CORPUS=/work/shared/corpus
D=$CORPUS/dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels
MM=$D/model_matmul/frozen_saved_model.pb
CF=$D/cifar_model/frozen_model.pb
TF1=$CORPUS/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/half_plus_two/00000123
H3=$CORPUS/tensorflow__serving/tensorflow_serving/servables/tensorflow/testdata/saved_model_half_plus_three/00000123
V2=$CORPUS/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/half_plus_two_v2/00000123
T3=$CORPUS/tensorflow__tfjs/tfjs-node/test_objects/saved_model/times_three_float
KS=$CORPUS/SciSharp__TensorFlow.NET/test/TensorFlowNET.Keras.UnitTest/Assets/simple_model_from_auto_compile
AD=$CORPUS/tensorflow__rust/examples/addition/model.pb
MU=$CORPUS/tensorflow__rust/tensorflow-sys/examples/assets/multiplication.pb
RG=$CORPUS/onnx__tensorflow-onnx/tests/models/regression/graphdef/frozen.pb
for f in "$MM" "$CF" "$AD" "$MU" "$RG" "$TF1/saved_model.pb" "$H3/saved_model.pb" \
	"$V2/saved_model.pb" "$T3/saved_model.pb" "$KS/saved_model.pb"; do
	if ! test -f "$f"; then
		echo "1..0 # SKIP corpus not found ($f)"
		exit 0
	fi
done
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-surgt.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

# ---- compose: (a @ b) @ b2
run "$BIN" compose "$MM" "$MM" -o "$T/c.pb" --map c:0=a --prefix second
is_rc 0 "compose model_matmul with itself"
run "$BIN" eval "$MM" --input 'a=[[[1,2],[3,4]]]' --input 'b=[[[1,0],[0,2]]]' \
	-o "$T/first"
is_rc 0 "run the first model"
run "$BIN" eval "$MM" --input "a=@$T/first/c.npy" --input 'b=[[[1,1],[0,1]]]' \
	-o "$T/second"
is_rc 0 "run the second on the first's output"
run "$BIN" eval "$T/c.pb" --input 'a=[[[1,2],[3,4]]]' --input 'b=[[[1,0],[0,2]]]' \
	--input 'second/b=[[[1,1],[0,1]]]' --output second/c -o "$T/both"
is_rc 0 "run the composition"
has "$T/out" "[1, 5, 3, 11]" "the composition computes (a @ b) @ b2"
cmp -s "$T/both/second_c.npy" "$T/second/c.npy"
ok $? "the composition gives the bytes of running one after the other"
run "$BIN" info "$T/c.pb"
grep -q "second/a" "$T/out"
ok `test $? -ne 0; echo $?` "the mapped input of the second model is gone"

# ---- compose a SavedModel with variables (half_plus_two, y = 0.5x + 2)
# and a frozen graph (the regression model): its checkpoint comes along,
# and serving_default goes from x to the regression's output
run "$BIN" compose "$TF1" "$RG" -o "$T/hr" --map y:0=X
is_rc 0 "compose a SavedModel and a frozen GraphDef"
run "$BIN" info "$T/hr"
has "$T/out" "in   x -> x:0 float32[?,1]" "serving_default takes half_plus_two's input"
has "$T/out" "out  pred <- b/pred:0" "and gives the regression's output"
run "$BIN" eval "$T/hr" --input 'x=[[2],[4]]' -o "$T/hro"
is_rc 0 "run the composition (half_plus_two's variables restored)"
run "$BIN" eval "$RG" --input 'X=[3,4]' -o "$T/rgo"
has "$T/out" "[1.69141, 1.90537]" "the regression alone on y = [3, 4]"
run "$BIN" eval "$T/hr" --input 'x=[[2],[4]]'
has "$T/out" "[1.69141, 1.90537]" "the composition gives the same values"

# ---- compose two SavedModels with variables: half_plus_two, then
# half_plus_three (y = 0.5x + 3) and half_plus_two again; the second's
# variables come along under b/, its checkpoint values with them
run "$BIN" compose "$TF1" "$H3" -o "$T/h23" --map y:0=x
is_rc 0 "compose half_plus_two and half_plus_three (both with variables)"
run "$BIN" eval "$T/h23" --input 'x=[[0],[4]]'
has "$T/out" "y (b/y:0) float32[2,1] min 4 max 5 mean 4.5 [4, 5]" \
	"the composition computes 0.5 (0.5x + 2) + 3"
run "$BIN" validate "$T/h23"
is_rc 0 "it validates: one saver saves every variable, the checkpoint holds them"
keys() { # keys INDEX: the keys an independent reader finds, on one line
	python3 "${GE_TOP_SRCDIR:-.}/t/bundle-keys.py" "$1" >"$T/keys" &&
		tr '\n' ' ' <"$T/keys" >"$T/out"
}
if command -v python3 >/dev/null 2>&1; then
	keys "$T/h23/variables/variables.index"
	has "$T/out" "a b b/a b/b b/c c " \
		"an independent reader of the index finds both models' keys"
else
	ok 0 "# SKIP python3 not found"
fi
run "$BIN" compose "$TF1" "$TF1" -o "$T/h22" --map y:0=x --prefix again
is_rc 0 "compose half_plus_two with itself"
run "$BIN" eval "$T/h22" --input 'x=[[0],[4]]'
has "$T/out" "y (again/y:0) float32[2,1] min 3 max 4 mean 3.5 [3, 4]" \
	"the composition computes 0.5 (0.5x + 2) + 2"
if command -v python3 >/dev/null 2>&1; then
	keys "$T/h22/variables/variables.index"
	has "$T/out" "a again/a again/b again/c b c " \
		"an independent reader of the index finds every key"
else
	ok 0 "# SKIP python3 not found"
fi

# ---- compose a frozen graph (y = -x) with a TF2 SavedModel
# (times_three_float: 3x): the second's signature, frozen, reads -x
run "$BIN" -e 'local g = ge.graph()
g:add_op{type = "Placeholder", name = "in", attrs = {dtype = "float32", shape = ge.shape{}}}
g:add_op{type = "Neg", name = "neg", inputs = {"in"}, attrs = {T = "float32"}}
assert(g:save(arg[1]))' - "$T/neg.pb"
run "$BIN" compose "$T/neg.pb" "$T3" -o "$T/n3.pb" --map neg:0=serving_default_x
is_rc 0 "compose a frozen graph with a TF2 SavedModel that has a variable"
run "$BIN" eval "$T/n3.pb" --input in=2 -o "$T/n3o"
has "$T/out" "min -6 max -6" "the composition computes 3 (-x)"
run "$BIN" eval "$T3" --input x=-2 -o "$T/n3w"
cmp -s "$T/n3o/b_StatefulPartitionedCall.npy" "$T/n3w/output_0.npy"
ok $? "the values of the TF2 model run on the first's output"

# ---- extract: Conv2D -> add -> Relu of the CIFAR model
run "$BIN" eval "$CF" --input Input=1x32x32x3 --output Conv2D:0 \
	--output OutputConvRelu_1:0 -o "$T/whole"
is_rc 0 "run the whole model, keeping two inner tensors"
run "$BIN" extract "$CF" --inputs Conv2D:0 --outputs OutputConvRelu_1:0 -o "$T/x"
is_rc 0 "extract the block as a SavedModel"
run "$BIN" info "$T/x"
has "$T/out" "format:  savedmodel" "a SavedModel"
has "$T/out" "in   Conv2D -> Conv2D:0 float32[?,13,13,32]" \
	"its serving_default takes the block's input"
has "$T/out" "out  OutputConvRelu_1 <- OutputConvRelu_1:0 float32[?,13,13,32]" \
	"and gives its output"
has "$T/out" "ops:     5 (5 types)" "only the ops the block needs"
run "$BIN" eval "$T/x" --input "Conv2D=@$T/whole/Conv2D_0.npy" -o "$T/xo"
is_rc 0 "run the extracted SavedModel"
cmp -s "$T/xo/OutputConvRelu_1.npy" "$T/whole/OutputConvRelu_1_0.npy"
ok $? "the extracted block gives the whole model's values"
run "$BIN" extract "$CF" --inputs Conv2D:0 --outputs OutputConvRelu_1:0 -o "$T/x.pb"
is_rc 0 "extract the block as a GraphDef"
run "$BIN" eval "$T/x.pb" --input "Conv2D=@$T/whole/Conv2D_0.npy" \
	--output OutputConvRelu_1 -o "$T/xp"
cmp -s "$T/xp/OutputConvRelu_1.npy" "$T/whole/OutputConvRelu_1_0.npy"
ok $? "the GraphDef too"
run "$BIN" extract "$CF" --outputs Output:0 -o "$T/all.pb"
is_rc 0 "extract without inputs: from the model's own"
run "$BIN" eval "$T/all.pb" --input Input=1x32x32x3 -o "$T/ao"
run "$BIN" eval "$CF" --input Input=1x32x32x3 -o "$T/ai"
cmp -s "$T/ao/Output.npy" "$T/ai/Output.npy"
ok $? "the whole model cut at its output computes the same"

# ---- extract from a TF1 SavedModel with variables a, b, c: y = a x + b
run "$BIN" extract "$TF1" --inputs x:0 --outputs y:0 -o "$T/v"
is_rc 0 "extract y from half_plus_two"
run "$BIN" eval "$T/v" --input 'x=[[2],[4]]'
has "$T/out" "y (y:0) float32[2,1] min 3 max 4 mean 3.5 [3, 4]" \
	"the servable computes y = 0.5x + 2"
run "$BIN" info "$T/v"
has "$T/out" "variables (2):" "it holds two variables"
has "$T/out" "legacy_init_op                   node_list, 1 item" \
	"the op the loader runs after the restore (a NoOp) stays"
has "$T/out" "asset_filepaths                  node_list, 1 item" \
	"and so does the asset tensor the loader feeds"
grep -q "  c:0" "$T/out"
ok `test $? -ne 0; echo $?` "c, which y does not read, is gone"
run "$BIN" -e 'print(table.concat(assert(ge.checkpoint.open(arg[1])):names(), " "))' \
	- "$T/v/variables/variables"
has "$T/out" "a b" "the checkpoint holds a and b"
grep -q "c" "$T/out"
ok `test $? -ne 0; echo $?` "and not c"
run "$BIN" validate "$T/v"
is_rc 0 "the servable validates (its saver saves a and b)"

# ---- extract from half_plus_two_v2 (its variables kept) and from TF2
# SavedModels: times_three_float (y = 3x, a variable) and a Keras model
run "$BIN" extract "$V2" --inputs x:0 --outputs y:0 -o "$T/v2"
is_rc 0 "extract y from half_plus_two_v2"
run "$BIN" eval "$T/v2" --input 'x=[[2],[4]]'
has "$T/out" "y (y:0) float32[2,1] min 3 max 4 mean 3.5 [3, 4]" \
	"the servable computes y = 0.5x + 2, as the model does"
run "$BIN" extract "$T3" --inputs serving_default_x:0 \
	--outputs StatefulPartitionedCall:0 -o "$T/t3"
is_rc 0 "extract a TF2 SavedModel's signature tensors"
run "$BIN" eval "$T3" --input x=3 -o "$T/t3w"
run "$BIN" eval "$T/t3" --input serving_default_x=3 -o "$T/t3o"
has "$T/out" "[9]" "the servable computes 3x"
cmp -s "$T/t3o/StatefulPartitionedCall.npy" "$T/t3w/output_0.npy"
ok $? "the values of the whole model"
run "$BIN" info "$T/t3"
has "$T/out" "in   serving_default_x -> serving_default_x:0 float32[]" \
	"its serving_default takes the input"
run "$BIN" extract "$T3" --inputs serving_default_x:0 \
	--outputs StatefulPartitionedCall/StatefulPartitionedCall/mul:0 -o "$T/t3.pb"
is_rc 0 "extract a tensor of a function body as a GraphDef"
run "$BIN" eval "$T/t3.pb" --input serving_default_x=3 \
	--output StatefulPartitionedCall/StatefulPartitionedCall/mul -o "$T/t3p"
cmp -s "$T/t3p/StatefulPartitionedCall_StatefulPartitionedCall_mul.npy" \
	"$T/t3w/output_0.npy"
ok $? "the body's product is the model's output"
# the Keras model cut at its hidden layer: the two halves, one after
# the other, give the whole model's bytes
R=StatefulPartitionedCall/StatefulPartitionedCall/model/dense/Relu
run "$BIN" eval "$KS" --input input_1=1x28x28x1 \
	--output serving_default_input_1:0 --output StatefulPartitionedCall:0 \
	-o "$T/kw"
is_rc 0 "run the Keras model"
run "$BIN" extract "$KS" --inputs serving_default_input_1:0 --outputs $R:0 \
	-o "$T/k1"
is_rc 0 "extract its first layer as a SavedModel"
run "$BIN" info "$T/k1"
has "$T/out" "consts:  3," "only the first layer's weights (and the flatten shape)"
run "$BIN" extract "$KS" --inputs $R:0 --outputs StatefulPartitionedCall:0 \
	-o "$T/k2.pb"
is_rc 0 "extract the rest as a GraphDef"
run "$BIN" eval "$T/k1" \
	--input "serving_default_input_1=@$T/kw/serving_default_input_1_0.npy" \
	-o "$T/k1o"
is_rc 0 "run the first part"
run "$BIN" eval "$T/k2.pb" \
	--input "$R=@$T/k1o/StatefulPartitionedCall_StatefulPartitionedCall_model_dense_Relu.npy" \
	-o "$T/k2o"
is_rc 0 "run the second part on the first's output"
cmp -s "$T/k2o/StatefulPartitionedCall.npy" "$T/kw/softmax.npy"
ok $? "the two parts give the whole model's values"

# ---- bad input
bad() { # bad NAME TEXT OUT ARGS...
	name=$1; text=$2; out=$3; shift 3
	run "$BIN" "$@"
	is_rc 2 "$name"
	has "$T/err" "$text" "$name: the message names it"
	ok `test \`wc -l <"$T/err"\` -eq 1 && ! test -e "$out"; echo $?` \
		"$name: one line, nothing written"
}
bad "compose: different dtypes" "'z:0' is int32, 'a' is float32" "$T/b1.pb" \
	compose "$AD" "$MU" -o "$T/b1.pb" --map z:0=a
bad "compose: incompatible shapes" "'c:0' has shape [?,2,2], 'a' takes []" \
	"$T/b2.pb" compose "$MM" "$MU" -o "$T/b2.pb" --map c:0=a
bad "compose: a missing tensor" "no tensor 'nope:0'" "$T/b3.pb" \
	compose "$MM" "$MU" -o "$T/b3.pb" --map nope:0=a
bad "compose: an input mapped twice" "'a' is mapped twice" "$T/b4.pb" \
	compose "$MM" "$MM" -o "$T/b4.pb" --map c:0=a --map a:0=a
bad "extract: a missing tensor" "no tensor 'nope:0'" "$T/b5" \
	extract "$CF" --inputs nope:0 --outputs Output:0 -o "$T/b5"
bad "extract: a tensor no TF2 signature holds" \
	"no tensor 'nope:0' in $T3, nor in the functions of its signatures" \
	"$T/b7" extract "$T3" --outputs nope:0 -o "$T/b7"
bad "compose: variables into a TF2 SavedModel" \
	"the second model, $TF1, has variables ('a') and the first is a TF2 SavedModel" \
	"$T/b8" compose "$T3" "$TF1" -o "$T/b8" --map StatefulPartitionedCall:0=x
bad "extract: an input given twice" "'Conv2D:0' is given twice" "$T/b6" \
	extract "$CF" --inputs Conv2D:0,Conv2D:0 --outputs Output:0 -o "$T/b6"

echo "1..$n"
exit $failed

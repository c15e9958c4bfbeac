#!/bin/sh
# cli-eval.sh: `gerewrite eval` and `gerewrite verify` on small graphs
# (Placeholder, Const, Mul, Add, Identity, a TF1 while loop): values,
# seeded inputs, .npy outputs, signatures, verify's figures, exit codes
# and report, --per-op naming the op a changed Const starts at, and bad
# input: one line naming the input or op, exit 2, nothing written.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-evalt.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

# y = 0.5 x + 2, as half_plus_two computes it
mkgraph() { # mkgraph FILE HALF
	cat >"$1" <<EOT
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: -1 } } } } }
node { name: "half" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: $2 } } } }
node { name: "two" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 2 } } } }
node { name: "scale/mul" op: "Mul" input: "x" input: "half" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "y" op: "Add" input: "scale/mul" input: "two" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "y2" op: "Identity" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
EOT
}
mkgraph "$T/a.pbtxt" 0.5
mkgraph "$T/b.pbtxt" 0.501   # one Const changed by 1e-3

run "$BIN" eval "$T/a.pbtxt" --input 'x=[1,2,5]'
is_rc 0 "eval a frozen graph"
has "$T/out" 'y2 (y2:0) float32[3] min 2.5 max 4.5 mean 3.33333 [2.5, 3, 4.5]' \
	"y = 0.5x + 2 for x = [1, 2, 5], with min, max, mean and values"

run "$BIN" eval "$T/a.pbtxt" -i x=4:0..1 --output scale/mul --output y2 -n 2
is_rc 0 "eval seeded data, two outputs named"
has "$T/out" 'scale/mul float32[4]' "an inner tensor fetched"
has "$T/out" ', ...]' "two values printed, the rest elided"
run "$BIN" eval "$T/a.pbtxt" --seed 3 --dim 5
cp "$T/out" "$T/seed3"
run "$BIN" eval "$T/a.pbtxt" --seed 3 --dim 5
cmp -s "$T/out" "$T/seed3"
ok $? "seeded inputs: the same seed gives the same outputs"
has "$T/out" 'float32[5]' "unknown dims take --dim"

run "$BIN" eval "$T/a.pbtxt" -i 'x=[1,2,5]' -o "$T/outs" --output scale/mul --output y2
is_rc 0 "eval -o DIR"
run "$BIN" -e "
local v = assert(ge.load_npy('$T/outs/y2.npy'))
assert(v.dtype == 'float32' and #v == 3 and v[3] == 4.5, tostring(v))
assert(ge.load_npy('$T/outs/scale_mul.npy'))
print('ok')"
is_rc 0 "the outputs are .npy files, names made safe (scale/mul -> scale_mul.npy)"

# a MetaGraphDef's signature: keys in, keys out
cat >"$T/sig.pbtxt" <<'EOT'
graph_def {
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "z" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "y" op: "Add" input: "x" input: "z" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "w" op: "Mul" input: "x" input: "z" attr { key: "T" value { type: DT_FLOAT } } }
}
signature_def { key: "serving_default" value {
  inputs { key: "a" value { name: "x:0" dtype: DT_FLOAT tensor_shape { dim { size: 2 } } } }
  inputs { key: "c" value { name: "z:0" dtype: DT_FLOAT tensor_shape { dim { size: 2 } } } }
  outputs { key: "sum" value { name: "y:0" dtype: DT_FLOAT tensor_shape { dim { size: 2 } } } } } }
signature_def { key: "times" value {
  inputs { key: "a" value { name: "x:0" dtype: DT_FLOAT tensor_shape { dim { size: 2 } } } }
  inputs { key: "c" value { name: "z:0" dtype: DT_FLOAT tensor_shape { dim { size: 2 } } } }
  outputs { key: "product" value { name: "w:0" dtype: DT_FLOAT tensor_shape { dim { size: 2 } } } } } }
signature_def { key: "partial" value {
  inputs { key: "a" value { name: "x:0" dtype: DT_FLOAT tensor_shape { dim { size: 2 } } } }
  outputs { key: "sum" value { name: "y:0" dtype: DT_FLOAT tensor_shape { dim { size: 2 } } } } } }
EOT
run "$BIN" eval "$T/sig.pbtxt" -i 'a=[1,2]' -i 'c=[10,20]'
has "$T/out" 'sum (y:0) float32[2] min 11 max 22' "serving_default by default, inputs by key"
run "$BIN" eval "$T/sig.pbtxt" --signature times -i 'a=[1,2]' -i 'z:0=[10,20]'
has "$T/out" 'product (w:0) float32[2] min 10 max 40' "--signature, an input by tensor name"
run "$BIN" eval "$T/sig.pbtxt" --signature nope
is_rc 2 "an unknown signature"
has "$T/err" "no signature 'nope' (signatures: serving_default, times, partial)" \
	"the message names the signatures there are"

# verify
run "$BIN" verify "$T/a.pbtxt" "$T/a.pbtxt"
is_rc 0 "verify a model against itself"
has "$T/out" 'within tolerance' "said so"
run "$BIN" verify "$T/a.pbtxt" "$T/b.pbtxt" -i 'x=[1,2,5]' --report "$T/r.json"
is_rc 1 "a Const changed by 1e-3 is caught"
has "$T/out" 'y2 float32[3]: max abs 0.005' "the largest difference (5 * 0.001)"
has "$T/out" '3 of 3 outside' "the count outside tolerance"
has "$T/out" 'OUTSIDE tolerance' "the verdict"
has "$T/r.json" '"max_abs_diff"' "--report writes the figures"
has "$T/r.json" '"ok": false' "and the verdict"
run "$BIN" verify "$T/a.pbtxt" "$T/b.pbtxt" -i 'x=[1,2,5]' --atol 0.01
is_rc 0 "within a looser --atol"
run "$BIN" verify "$T/a.pbtxt" "$T/b.pbtxt" --per-op
is_rc 1 "verify --per-op"
has "$T/out" 'the first: half (Const, half:0)' "--per-op names the Const that changed"
has "$T/out" 'per op: 6 tensors compared, 4 outside' \
	"and counts the tensors it moved"
run "$BIN" verify "$T/a.pbtxt" "$T/sig.pbtxt"
is_rc 2 "verify: outputs that do not pair"
has "$T/err" "(pair them with --map" "the message says how to pair them"
run "$BIN" verify "$T/sig.pbtxt" "$T/sig.pbtxt" --signature-b times --map sum=product
is_rc 1 "--map pairs outputs named otherwise (and a sum is not a product)"
run "$BIN" verify -q "$T/a.pbtxt" "$T/b.pbtxt"
test -s "$T/out"
ok $((! $?)) "-q prints nothing"

# a PlaceholderWithDefault is an input that may be given; not given, it
# takes its default (as in TensorFlow), not seeded data: y = x * keep
# with keep defaulting to 1, once a MetaGraphDef whose signature names
# it (as TF2's serving_default_x), once the graph frozen from it (the
# key as the op's name), once with a plain Placeholder there
pwdnodes() { # pwdnodes KEEP_NAME KEEP_OP
	cat <<EOT
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 1 } } } }
node { name: "$1" op: "$2" input: "one" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { } } } }
node { name: "y" op: "Mul" input: "x" input: "$1" attr { key: "T" value { type: DT_FLOAT } } }
EOT
}
{ echo 'graph_def {'; pwdnodes serving_default_keep PlaceholderWithDefault; echo '}'
cat <<'EOT'
signature_def { key: "serving_default" value {
  inputs { key: "x" value { name: "x:0" dtype: DT_FLOAT tensor_shape { dim { size: 2 } } } }
  inputs { key: "keep" value { name: "serving_default_keep:0" dtype: DT_FLOAT tensor_shape { } } }
  outputs { key: "y" value { name: "y:0" dtype: DT_FLOAT tensor_shape { dim { size: 2 } } } }
  method_name: "tensorflow/serving/predict" } }
EOT
} >"$T/pwd-meta.pbtxt"
pwdnodes keep PlaceholderWithDefault >"$T/pwd.pbtxt"
# the plain Placeholder reads nothing
pwdnodes keep Placeholder | sed '/name: "keep"/s/ input: "one"//' >"$T/pwd-ph.pbtxt"
run "$BIN" eval "$T/pwd.pbtxt" -i 'x=[3,4]'
is_rc 0 "a graph with a PlaceholderWithDefault"
has "$T/out" 'y (y:0) float32[2] min 3 max 4 mean 3.5 [3, 4]' \
	"not given, keep takes its default (1), not seeded data"
run "$BIN" eval "$T/pwd.pbtxt" -i 'x=[3,4]' -i keep=0.5
is_rc 0 "keep can be given"
has "$T/out" '[1.5, 2]' "and is then used"
run "$BIN" eval "$T/pwd-meta.pbtxt" -i 'x=[3,4]'
has "$T/out" '[3, 4]' "a signature's input with a default: the default too"
run "$BIN" verify "$T/pwd-meta.pbtxt" "$T/pwd.pbtxt"
is_rc 0 "verify: the frozen graph against the signature, both on keep's default"
run "$BIN" verify "$T/pwd-meta.pbtxt" "$T/pwd.pbtxt" -i keep=0.25
is_rc 0 "the same with keep given"
run "$BIN" verify "$T/pwd-meta.pbtxt" "$T/pwd-ph.pbtxt"
is_rc 0 "against a Placeholder keep: B is fed A's default"
run "$BIN" verify "$T/pwd-ph.pbtxt" "$T/pwd.pbtxt" --atol 0 --rtol 0
is_rc 0 "a Placeholder keep in A: B's default input is fed A's seeded value"

# a random op without a seed draws from --seed and its name: the same in
# a model and its rewrite while the name stays, other numbers once it is
# renamed, which verify's note says
rndgraph() { # rndgraph RANDOM_OP_NAME
	cat <<EOT
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 4 } } } } }
node { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 4 } } } }
node { name: "$1" op: "RandomUniform" input: "shape" attr { key: "T" value { type: DT_INT32 } } attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "y" op: "Add" input: "x" input: "$1" attr { key: "T" value { type: DT_FLOAT } } }
EOT
}
rndgraph noise >"$T/rnd-a.pbtxt"
rndgraph a >"$T/rnd-b.pbtxt"
run "$BIN" verify "$T/rnd-a.pbtxt" "$T/rnd-a.pbtxt" --atol 0 --rtol 0
is_rc 0 "an unseeded random op draws the same numbers in two runs"
run "$BIN" verify "$T/rnd-a.pbtxt" "$T/rnd-b.pbtxt"
is_rc 1 "renamed, it draws others"
has "$T/out" "note: B's random op 'a' (RandomUniform) has no seed and no namesake in A" \
	"and verify says why"
run "$BIN" verify "$T/rnd-a.pbtxt" "$T/rnd-b.pbtxt" --report "$T/rnd.json"
has "$T/rnd.json" '"note": "B' "the report holds the note"

# bad input: one line naming the input or op, exit 2, nothing written
bad() { # bad WANT NAME ARGS...
	want=$1; name=$2; shift 2
	rm -rf "$T/bad"
	run "$BIN" eval "$@" -o "$T/bad"
	is_rc 2 "$name"
	has "$T/err" "$want" "$name: the message names it"
	test `wc -l <"$T/err"` -eq 1 && ! test -e "$T/bad"
	ok $? "$name: one line, nothing written"
}
bad "input 'x': the value has shape [2,1], the input takes [?]" \
	"a feed of the wrong shape" "$T/a.pbtxt" -i 'x=[[1],[2]]'
bad "input 'x': the data asked for is int32, the input is float32" \
	"a feed of the wrong dtype" "$T/a.pbtxt" -i 'x=3:int32'
"$BIN" -e "assert(ge.tensor_value('int32', {3}, {1,2,3}))" >/dev/null
"$BIN" eval "$T/a.pbtxt" -i 'x=[1,2,3]' -o "$T/f32" >/dev/null
bad "input 'x': $T/f32/scale_mul.npy" "a .npy feed" "$T/a.pbtxt" \
	-i "x=@$T/f32/scale_mul.npy" -i "x=[1]"
bad "input 'x': $T/a.pbtxt: not a .npy file" "a feed file that is not .npy" \
	"$T/a.pbtxt" -i "x=@$T/a.pbtxt"
bad "no input 'q' (the inputs: x)" "an input the model does not have" \
	"$T/a.pbtxt" -i 'q=1'
bad "z (Placeholder): must be fed" "a missing feed (not in the signature)" \
	"$T/sig.pbtxt" --signature partial -i 'a=[1,2]'
cat >"$T/nok.pbtxt" <<'EOT'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 2 } } } } }
node { name: "weird" op: "FrobnicateV7" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
EOT
bad "weird (FrobnicateV7): no kernel for op type 'FrobnicateV7'" \
	"an op with no kernel" "$T/nok.pbtxt"

# a TF1 while loop: counts to 10; with a step of 0 it never ends
mkloop() { # mkloop FILE STEP
	cat >"$1" <<EOT
node { name: "i0" op: "Const" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
node { name: "w/Enter" op: "Enter" input: "i0" attr { key: "T" value { type: DT_INT32 } } attr { key: "frame_name" value { s: "w" } } attr { key: "is_constant" value { b: false } } attr { key: "parallel_iterations" value { i: 1 } } }
node { name: "w/Merge" op: "Merge" input: "w/Enter" input: "w/NextIteration" attr { key: "T" value { type: DT_INT32 } } attr { key: "N" value { i: 2 } } }
node { name: "w/limit" op: "Const" input: "^w/Merge" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 10 } } } }
node { name: "w/Less" op: "Less" input: "w/Merge" input: "w/limit" attr { key: "T" value { type: DT_INT32 } } }
node { name: "w/LoopCond" op: "LoopCond" input: "w/Less" }
node { name: "w/Switch" op: "Switch" input: "w/Merge" input: "w/LoopCond" attr { key: "T" value { type: DT_INT32 } } }
node { name: "w/Identity" op: "Identity" input: "w/Switch:1" attr { key: "T" value { type: DT_INT32 } } }
node { name: "w/step" op: "Const" input: "^w/Identity" attr { key: "dtype" value { type: DT_INT32 } } attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: $2 } } } }
node { name: "w/add" op: "Add" input: "w/Identity" input: "w/step" attr { key: "T" value { type: DT_INT32 } } }
node { name: "w/NextIteration" op: "NextIteration" input: "w/add" attr { key: "T" value { type: DT_INT32 } } }
node { name: "w/Exit" op: "Exit" input: "w/Switch" attr { key: "T" value { type: DT_INT32 } } }
node { name: "out" op: "Identity" input: "w/Exit" attr { key: "T" value { type: DT_INT32 } } }
EOT
}
mkloop "$T/loop1.pbtxt" 1
mkloop "$T/loop0.pbtxt" 0
run "$BIN" eval "$T/loop1.pbtxt"
has "$T/out" 'out (out:0) int32[] min 10 max 10 mean 10 [10]' "a while loop runs"
bad "while loop 'w': more than 100 iterations (--max-iterations)" \
	"a loop over --max-iterations" "$T/loop0.pbtxt" --max-iterations 100

# OpenBLAS is opened by the first product the runner makes, not at the
# program's start (lib/exec/blas.h): the loader's log (glibc's LD_DEBUG)
# names it for an eval with a MatMul and for no other command
cat >"$T/mm.pbtxt" <<EOT
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 1 } dim { size: 2 } } } } }
node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 1 } } float_val: 3 float_val: 4 } } } }
node { name: "y" op: "MatMul" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
EOT
LD_DEBUG=files "$BIN" eval "$T/mm.pbtxt" --input 'x=[[1,2]]' >"$T/out" 2>"$T/ld"
has "$T/out" 'y (y:0) float32[1,1] min 11 max 11 mean 11 [11]' \
	"a MatMul runs through OpenBLAS"
if grep -q 'file=' "$T/ld"; then
	has "$T/ld" 'file=libopenblas' "and the loader opened OpenBLAS for it"
	LD_DEBUG=files "$BIN" convert "$T/mm.pbtxt" "$T/mm.pb" >/dev/null 2>"$T/ld"
	grep -q 'libopenblas' "$T/ld"
	ok `test $? -ne 0; echo $?` "a convert never opens it"
	LD_DEBUG=files "$BIN" eval "$T/a.pbtxt" --input 'x=[1]' >/dev/null 2>"$T/ld"
	grep -q 'libopenblas' "$T/ld"
	ok `test $? -ne 0; echo $?` "nor an eval without a product"
else
	skip 3 "the loader writes no LD_DEBUG log here"
fi

run "$BIN" eval
is_rc 2 "eval without a model"
run "$BIN" verify "$T/a.pbtxt"
is_rc 2 "verify with one model"
run "$BIN" verify "$T/a.pbtxt" "$T/a.pbtxt" --atol x
is_rc 2 "verify --atol x"

echo "1..$n"
exit $failed

#!/bin/sh
# info-outputs.sh: `gerewrite info`'s likely outputs of a training graph
# leave out the training, saver, summary and initialization machinery and
# the integer bookkeeping, and say how many were left out; a model with
# signatures gets the signatures' outputs.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-infoout.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

cat >"$T/mk.lua" <<'LUA'
local F, I = "float32", "int32"
local g = ge.graph()
local function op(t) return g:add_op(t) end
op{type = "Placeholder", name = "x", attrs = {dtype = F, shape = ge.shape{-1, 2}}}
op{type = "VariableV2", name = "w", attrs = {dtype = F, shape = ge.shape{2, 2}}}
op{type = "Identity", name = "w/read", inputs = {"w"}, attrs = {T = F}}
op{type = "MatMul", name = "logits", inputs = {"x", "w/read"}, attrs = {T = F}}
op{type = "Softmax", name = "probs", inputs = {"logits"}, attrs = {T = F}}
-- training, saver, summaries, initialization, bookkeeping: all unread
op{type = "Const", name = "lr", attrs = {dtype = F, value = ge.tensor_value(F, {}, 0.1)}}
op{type = "Identity", name = "gradients/logits_grad/Identity", inputs = {"logits"}, attrs = {T = F}}
op{type = "Identity", name = "gradients_1/Fill", inputs = {"logits"}, attrs = {T = F}}
op{type = "ApplyGradientDescent", name = "GradientDescent/update_w",
   inputs = {"w", "lr", "gradients/logits_grad/Identity"}, attrs = {T = F}}
op{type = "Identity", name = "save/Identity", inputs = {"logits"}, attrs = {T = F}}
op{type = "Const", name = "tag", attrs = {dtype = "string", value = ge.tensor_value("string", {}, "loss")}}
op{type = "Const", name = "zero", attrs = {dtype = I, value = ge.tensor_value(I, {1}, 0)}}
op{type = "Mean", name = "mean", inputs = {"logits", "zero"}, attrs = {T = F}}
op{type = "ScalarSummary", name = "loss", inputs = {"tag", "mean"}, attrs = {T = F}}
op{type = "Assign", name = "w/Assign", inputs = {"w", "logits"}, attrs = {T = F}}
op{type = "Shape", name = "batch/shape", inputs = {"x"}, attrs = {T = F, out_type = I}}
assert(g:save(arg[1]))
LUA
"$BIN" "$T/mk.lua" "$T/train.pb" 2>"$T/err"
ok $? "writing a training graph"
diag "$T/err"
"$BIN" info "$T/train.pb" >"$T/out" 2>"$T/err"
ok $? "info"
sed -n '/^likely outputs/,/^[a-z]/p' "$T/out" >"$T/outs"
has "$T/outs" "likely outputs (1):" "one likely output"
has "$T/outs" "  probs:0  float32" "the model's output"
has "$T/outs" "(6 more unread ops left out: training, saver, summary" \
	"and how many were left out"
for name in gradients save/ GradientDescent loss w/Assign batch/shape; do
	! grep -F "  $name" "$T/outs" >/dev/null
	ok $? "$name is not listed"
done

cat >"$T/sig.pbtxt" <<'PB'
graph_def {
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "a" op: "Relu" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "b" op: "Relu" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
}
signature_def {
  key: "serving_default"
  value {
    inputs { key: "in" value { name: "x:0" dtype: DT_FLOAT } }
    outputs { key: "out" value { name: "b:0" dtype: DT_FLOAT } }
    method_name: "tensorflow/serving/predict"
  }
}
PB
"$BIN" info "$T/sig.pbtxt" >"$T/out" 2>"$T/err"
ok $? "info of a MetaGraphDef with a signature"
diag "$T/err"
sed -n '/^likely outputs/,/^[a-z]/p' "$T/out" >"$T/outs"
has "$T/outs" "likely outputs, from the signatures (1):" "the signatures' outputs are preferred"
has "$T/outs" "  b:0" "b is the output"
! grep -F "  a:0" "$T/outs" >/dev/null
ok $? "a, unread but not in the signature, is not"

echo "1..$n"
exit $failed

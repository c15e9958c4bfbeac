#!/bin/sh
# meaning-recipes-corpus.sh: recipes that keep a model's meaning (issue
# 27, cases 6, 7, 9 and 12), each checked by running the model before
# and after (gerewrite verify) where the runner can.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
C=$GE_CORPUS
if test -z "$C" || test ! -f "$C/MANIFEST.tsv"; then
	echo "1..0 # SKIP corpus not found"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-meaning.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

LEAK=$C/SciSharp__TensorFlow.NET/tools/TensorFlowNET.Benchmarks/Leak/TestModel/saved_model
LOOP=$C/tensorflow__tensorflow/tensorflow/c/experimental/saved_model/internal/testdata/SimpleWhileLoop
CIFAR=$C/dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/cifar_model
RVM=$C/tfjs/npm__@vladmandic__human-models-3.0.4/models/rvm.json

# 7. merge_duplicate_nodes keeps the fetch names: the frozen Leak model
# returns three equal Identities, output_0..2
run "$BIN" run freeze "$LEAK" -o "$T/leak.pb" --param signature=inference
is_rc 0 "7: freeze the Leak TestModel"
run "$BIN" run merge_duplicate_nodes "$T/leak.pb" -o "$T/leak-m.pb"
is_rc 0 "7: merge_duplicate_nodes with default parameters"
run "$BIN" verify "$T/leak.pb" "$T/leak-m.pb" --atol 0 --rtol 0
is_rc 0 "7: output_0, output_1 and output_2 are still fetched, bit for bit"
has "$T/out" "3 outputs" "7: all three outputs compared"

# 4. clone_tower with outputs= combines those, not the tensors of the
# view nobody reads (the frozen SimpleWhileLoop's int32 loop counter)
run "$BIN" run freeze "$LOOP" -o "$T/loop.pb"
is_rc 0 "4: freeze SimpleWhileLoop"
run "$BIN" run clone_tower "$T/loop.pb" -o "$T/loop-t.pb" --param towers=2 \
	--param combine=mean --param outputs=output_0
is_rc 0 "4: clone_tower outputs=output_0 combine=mean"
run "$BIN" verify "$T/loop.pb" "$T/loop-t.pb" --atol 0 --rtol 0
is_rc 0 "4: the mean of two towers computes the same output_0"

# 5. clone_tower splits an input of unknown rank at run time: the gru
# model's X (and its scalar keep_prob, fed whole)
GRU=$C/onnx__tensorflow-onnx/tests/models/gru/frozen.pb
run "$BIN" run clone_tower "$GRU" -o "$T/gru-t.pb" --param towers=2
is_rc 0 "5: clone_tower on gru"
has "$T/err" "split at run time" "5: says which inputs are split at run time"
run "$BIN" verify "$GRU" "$T/gru-t.pb" --input X=4x28x28 --input keep_prob=1.0
is_rc 0 "5: a batch of 4 gives the original's [4,10] output"
REG=$C/onnx__tensorflow-onnx/tests/models/regression/graphdef/frozen.pb
run "$BIN" run clone_tower "$REG" -o "$T/reg-t.pb" --param towers=2
is_rc 0 "5: clone_tower on regression"
run "$BIN" verify "$REG" "$T/reg-t.pb" --input X=4x1 --atol 0 --rtol 0
is_rc 0 "5: a batch of 4 gives the original's [4,1] output"

# 8. freeze and inline_functions outputs carry the default attrs the
# SavedModel stripped
cat >"$T/missing.lua" <<'EOT'
local g = assert(ge.load(arg[1]))
local n = 0
for _, op in ipairs(g:ops()) do
  local d = g:opdef(op.type)
  if d then
    local have = {}
    for _, a in ipairs(op:attr_names()) do have[a] = true end
    for _, a in ipairs(d.attrs) do
      if a.default ~= nil and not have[a.name] then n = n + 1 break end
    end
  end
end
print("ops missing a default attr: " .. n)
EOT
run "$BIN" "$T/missing.lua" "$T/leak.pb"
has "$T/out" "ops missing a default attr: 0" "8: the frozen TestModel has every default attr"
run "$BIN" run inline_functions "$LEAK" -o "$T/leak-i"
is_rc 0 "8: inline_functions on the TestModel"
run "$BIN" "$T/missing.lua" "$T/leak-i"
has "$T/out" "ops missing a default attr: 0" "8: the inlined ops have every default attr"
run "$BIN" verify "$LEAK" "$T/leak-i" --atol 0 --rtol 0
is_rc 0 "8: the inlined model computes the same"

# 6. obfuscate_names: a keep-list of the top-level graph on a TF2 model
# with a while loop in a function; the interface kept by default
run "$BIN" run obfuscate_names "$LOOP" -o "$T/loop-o" --param inputs=serving_default_value
is_rc 0 "6: a top-level keep-list is not looked for in function bodies"
run "$BIN" verify "$LOOP" "$T/loop-o" --atol 0 --rtol 0
is_rc 0 "6: the renamed TF2 model computes the same"
run "$BIN" run obfuscate_names "$T/leak.pb" -o "$T/leak-o.pb"
is_rc 0 "6: obfuscate_names with default parameters"
run "$BIN" verify "$T/leak.pb" "$T/leak-o.pb" --atol 0 --rtol 0
is_rc 0 "6: the inputs and outputs keep their names"
run "$BIN" run obfuscate_names "$T/leak.pb" -o "$T/leak-o2.pb" --param inputs=nothing
is_rc 1 "6: a keep-list name the graph lacks is refused"
has "$T/err" "no op named 'nothing'" "6: in one line naming it"
if grep -F ".lua:" "$T/err" >/dev/null; then s=1; else s=0; fi
ok $s "6: without the recipe's path"

# 9. round_weights leaves Consts under 16 elements alone, as TensorFlow's
run "$BIN" run round_weights "$RVM" -o "$T/rvm/model.json"
is_rc 0 "9: round_weights on rvm"
cat >"$T/small.lua" <<'EOT'
local a, b = ge.load(arg[1]), ge.load(arg[2])
local small, rounded, n = 0, 0, 0
for _, op in ipairs(a:ops("Const")) do
  local v = op:attr("value")
  if v and v.dtype == "float32" then
    local w = b:op(op.name):attr("value")
    if #v < 16 and w ~= v then small = small + 1 end
    if #v >= 16 and w ~= v then rounded = rounded + 1 end
  end
end
print("small changed " .. small .. ", large rounded " .. rounded)
EOT
run "$BIN" "$T/small.lua" "$RVM" "$T/rvm/model.json"
has "$T/out" "small changed 0," "9: no float Const under 16 elements changed"
if grep "large rounded 0$" "$T/out" >/dev/null; then s=1; else s=0; fi
ok $s "9: the large ones are rounded"

# 12. freeze on frozen graphs: passed unchanged with a note; refusals in
# one line without the recipe's path
mkdir -p "$T/mixed/a" "$T/mixed/b"
cp "$CIFAR/frozen_model.pb" "$T/mixed/a/frozen_model.pb"
cp "$T/leak.pb" "$T/mixed/b/leak.pb"
run "$BIN" batch freeze "$T/mixed" -o "$T/mixed-out"
is_rc 0 "12: batch freeze over frozen graphs"
run "$BIN" verify "$T/mixed/a/frozen_model.pb" "$T/mixed-out/a/frozen_model.pb" -q
is_rc 0 "12: the frozen graph passed unchanged"
run "$BIN" run freeze "$CIFAR/frozen_model.pb" -o "$T/f.pb"
is_rc 0 "12: run freeze on a frozen graph"
has "$T/err" "already frozen" "12: says so"
cp "$CIFAR/model.ckpt.meta" "$CIFAR/model.ckpt.index" "$CIFAR/model.ckpt.data-00000-of-00001" "$T/"
run "$BIN" run freeze "$T/model.ckpt.meta" -o "$T/f2.pb"
is_rc 1 "12: a graph with variables and no outputs is refused"
has "$T/err" "name the outputs to keep" "12: saying what to give"
if grep -F ".lua:" "$T/err" >/dev/null; then s=1; else s=0; fi
ok $s "12: without the recipe's path"
test `wc -l <"$T/err"` -eq 1
ok $? "12: in one line"
run "$BIN" run freeze "$T/model.ckpt.meta" -o "$T/f3.pb" --param outputs=Output
is_rc 0 "12: with outputs it freezes"
run "$BIN" verify "$T/model.ckpt.meta" "$T/f3.pb" --output Output --atol 0 --rtol 0
is_rc 0 "12: and the frozen graph computes the restored model's Output"

# What running every meaning-keeping recipe over the corpus under verify
# found (the cases of t/cli-eval.sh, t/inline.c, t/recipe-graph.lua and
# t/cli-bad-input.sh, on the files they came from)
HPT2=$C/tensorflow__serving/tensorflow_serving/servables/tensorflow/testdata/saved_model_half_plus_two_tf2_cpu/00000123
run "$BIN" run freeze "$HPT2" -o "$T/hpt2.pb"
is_rc 0 "sweep: freeze half_plus_two_tf2"
run "$BIN" verify "$HPT2" "$T/hpt2.pb" --atol 0 --rtol 0
is_rc 0 "sweep: its x (a PlaceholderWithDefault) takes its default in both"
run "$BIN" verify "$HPT2" "$T/hpt2.pb" -i x=0.5 --atol 0 --rtol 0
is_rc 0 "sweep: and x given is fed to both"
GRAPPLER=$C/tensorflow__tensorflow/tensorflow/core/grappler/costs/graph_properties_testdata
run "$BIN" run inline_functions "$GRAPPLER/function_switch.pbtxt" -o "$T/fs.pbtxt" --verify
is_rc 0 "sweep: inline_functions keeps the unread call's name, verified exact"
run "$BIN" run obfuscate_names "$GRAPPLER/while_loop.pbtxt" -o "$T/wl.pbtxt" --verify
is_rc 0 "sweep: obfuscate_names keeps the PlaceholderV2 input, verified exact"
LSTM=$C/onnx__tensorflow-onnx/tests/models/lstm/frozen.pb
run "$BIN" run obfuscate_names "$LSTM" -o "$T/lstm.pb"
run "$BIN" verify "$LSTM" "$T/lstm.pb"
is_rc 1 "sweep: the lstm's renamed unseeded dropout draws other numbers"
has "$T/out" "note: B's random op" "sweep: which verify says"
run "$BIN" verify "$LSTM" "$T/lstm.pb" -i keep_prob=1
is_rc 0 "sweep: with the dropout off, the outputs agree"

echo "1..$n"
exit $failed

#!/bin/sh
# info-outputs-corpus.sh: the likely outputs of the lstm_crf_ner training
# MetaGraphDef (98 unread ops before) are a few real tensors, with the
# training and bookkeeping ops counted as left out; a SavedModel's come
# from its signatures; cifar's training graph lists no Placeholder or
# optimizer slot as output.  Skipped without the corpus.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
C=$GE_CORPUS
M=$C/SciSharp__TensorFlow.NET/graph/lstm_crf_ner.meta
if test -z "$C" || test ! -f "$M"; then
	echo "1..0 # SKIP corpus not found"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-infoc.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

"$BIN" info "$M" >"$T/out" 2>"$T/err"
ok $? "info lstm_crf_ner.meta"
k=`sed -n 's/^likely outputs (\([0-9]*\)):$/\1/p' "$T/out"`
test -n "$k" && test "$k" -le 5
ok $? "a few likely outputs ($k)"
grep 'cond_1/rnn/transpose_1:0  float32\[?,?,9\]' "$T/out" >/dev/null
ok $? "among them the decoder's output"
! sed -n '/^likely outputs/,/^variables/p' "$T/out" | grep -e 'train_step/' -e '/Assign:' >/dev/null
ok $? "no training op or assignment"
grep -E '^  \([0-9]+ more unread ops left out: training, saver, summary' "$T/out" >/dev/null
ok $? "and how many were left out"
"$BIN" info "$C/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/half_plus_two/00000123" >"$T/out" 2>"$T/err"
has "$T/out" "likely outputs, from the signatures (3):" "a SavedModel's likely outputs are its signatures'"


# cifar's training MetaGraphDef: no Placeholder, no Adam slot among the
# likely outputs, nothing both input and output
M2=$C/dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/cifar_model/model.ckpt.meta
"$BIN" info "$M2" >"$T/out" 2>"$T/err"
ok $? "info cifar_model/model.ckpt.meta"
sed -n '/^likely outputs/,/^[a-z]/p' "$T/out" >"$T/outs"
! grep -e 'Placeholder' -e '/Adam' "$T/outs" >/dev/null
ok $? "no Placeholder or Adam slot among its likely outputs"
diag "$T/outs"
has "$T/outs" "Mean:0" "the loss is one"
"$BIN" info "$M2" --ops --scope Wconv1 >"$T/out" 2>"$T/err"
grep -E '^Wconv1/read +Identity +float32\[7,7,3,32\]$' "$T/out" >/dev/null
ok $? "info --ops --scope Wconv1 gives the read's shape"

echo "1..$n"
exit $failed

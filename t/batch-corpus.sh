#!/bin/sh
# batch-corpus.sh: `gerewrite batch remove_device` over the whole corpus:
# every model is done or skipped with a reason, the TensorFlow.js models
# included, except the three fuzz_generated SavedModels, which fail (and
# alone make the run exit 1).  Skipped when the corpus is absent.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
C=$GE_CORPUS
if test -z "$C" || test ! -f "$C/MANIFEST.tsv"; then
	echo "1..0 # SKIP corpus not found"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-bcorpus.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

"$BIN" batch remove_device "$C" -o "$T/out" -j 2 -q --report "$T/r.json" \
	>"$T/stdout" 2>"$T/err"
rc=$?
is_rc 1 "the corpus run exits 1 (the fuzz_generated models)"
# the report as lines: "MODEL<TAB>STATUS<TAB>REASON"
awk -F'"' '/"model": /{m = $4; r = ""} /"reason": /{r = $4}
	/"status": /{st = $4} /"error": /{print m "\t" st "\t" r}' \
	"$T/r.json" >"$T/models"
test `wc -l <"$T/models"` -gt 100
ok $? "the report lists the models (`wc -l <"$T/models"`)"
awk -F'\t' '$2 == "failed"' "$T/models" >"$T/failed"
test `wc -l <"$T/failed"` -eq 3
ok $? "three models fail"
grep -v '/fuzz_generated/' "$T/failed" >"$T/others"
test ! -s "$T/others"
s=$?
ok $s "and they are the fuzz_generated SavedModels"
if test $s -ne 0; then diag "$T/others"; fi
awk -F'\t' '$2 == "skipped" && $3 == ""' "$T/models" >"$T/noreason"
test ! -s "$T/noreason"
ok $? "every skipped model has a reason"
awk -F'\t' '$2 == "skipped"' "$T/models" | grep -F 'ops.pbtxt' |
	grep -F 'an OpList' >/dev/null
ok $? "the OpList ops.pbtxt is skipped as one"
n_tfjs=`find "$C/tfjs" -name '*.json' | while read f; do
	grep -l '"modelTopology"' "$f"; done | wc -l`
n_done=`awk -F'\t' '$1 ~ /\/tfjs\/.*\.json$/ && $2 == "ok"' "$T/models" | wc -l`
test "$n_tfjs" -gt 0 && test "$n_tfjs" -eq "$n_done"
ok $? "every TensorFlow.js model is found and done ($n_done of $n_tfjs)"
for m in tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/bert1 \
	SciSharp__TensorFlow.NET/test/TensorFlowNET.UnitTest/Utilities/models/example1; do
	awk -F'\t' -v m="$C/$m" '$1 == m && $2 == "ok"' "$T/models" | grep . >/dev/null
	ok $? "the SavedModel without variables/ $m is done"
done
has "$T/stdout" " failed, " "the summary is printed"

echo "1..$n"
exit $failed

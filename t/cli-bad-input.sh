#!/bin/sh
# cli-bad-input.sh: bad models given to `gerewrite convert` and `gerewrite
# run`: TensorFlow's fuzzed SavedModels, truncated copies of corpus files
# of each kind, random bytes, a text file with a syntax error, a
# SavedModel without its variables.  Each must give exit status 2 and
# exactly one line on stderr naming the file (and the node, or the line
# and column of a text file, where there is one), write no output, and
# leave the input as it was.  Also: a Lua script error is one line with
# the script's file and line, exit status 1.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
C=$GE_CORPUS
if test -z "$C" || test ! -f "$C/MANIFEST.tsv"; then
	echo "1..0 # SKIP corpus not found"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-bad.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

# A checksum of a file or of every file under a directory.
sum() {
	if test -d "$1"; then
		(cd "$1" && find . -type f | LC_ALL=C sort | while read f; do
			printf '%s ' "$f"; cksum <"$f"; done)
	elif test -e "$1"; then
		cksum <"$1"
	fi
}

# refused NAME INPUT [WANT] [COMMAND...]: the model INPUT is refused by
# COMMAND (default: convert to a new file) with exit status 2 and one
# line of stderr naming INPUT (and containing WANT, a grep -E pattern);
# nothing is written and INPUT is unchanged.
refused() {
	name=$1 in=$2 want=$3
	shift 3
	rm -rf "$T/out"
	mkdir "$T/out"
	before=`sum "$in"`
	if test $# -eq 0; then
		"$BIN" convert "$in" "$T/out/model.pb" >"$T/stdout" 2>"$T/err"
	else
		"$@" >"$T/stdout" 2>"$T/err"
	fi
	rc=$?
	lines=`wc -l <"$T/err"`
	what=""
	test $rc -eq 2 || what="$what exit status $rc;"
	test "$lines" -eq 1 || what="$what $lines lines on stderr;"
	grep -F -e "gerewrite: $in" "$T/err" >/dev/null ||
		what="$what the file is not named first;"
	if test -n "$want"; then
		grep -E -e "$want" "$T/err" >/dev/null ||
			what="$what no /$want/;"
	fi
	test -z "`ls -A "$T/out"`" || what="$what output written;"
	test "$before" = "`sum "$in"`" || what="$what the input changed;"
	ok `test -z "$what"; echo $?` "$name"
	if test -n "$what"; then
		echo "# $what"
		diag "$T/err"
	fi
}

FUZZ=$C/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/fuzz_generated
GRAPHDEF=$C/dotnet__machinelearning-testdata/Microsoft.ML.TensorFlow.TestModels/cifar_model/frozen_model.pb
META=$C/SciSharp__TensorFlow.NET/graph/kmeans.meta
SAVED=$C/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/half_plus_two/00000123
TEXT=$C/tensorflow__tensorflow/tensorflow/compiler/aot/test_graph_tfadd.pbtxt
TEXTMETA=$C/tensorflow__tensorflow/tensorflow/python/framework/testdata/metrics_export_meta_graph.pb

# ---------------------------------------------------------------- fuzzed
for d in "$FUZZ"/*; do
	test -d "$d" || continue
	refused "fuzzed SavedModel `basename $d`" "$d" "node '"
	refused "fuzzed SavedModel `basename $d`, by run" "$d" "node '" \
		"$BIN" run remove_device "$d" -o "$T/out/sm"
done

# ---------------------------------------------------------------- truncated
# cut FILE BYTES OUT: the first BYTES bytes of FILE
cut_file() {
	head -c "$2" "$1" >"$3"
}
for spec in "graphdef $GRAPHDEF pb" "meta $META meta" "text $TEXT pbtxt" \
	    "textmeta $TEXTMETA pb"; do
	set -- $spec
	kind=$1 file=$2 ext=$3
	size=`wc -c <"$file"`
	for frac in 1 2 3; do
		bytes=`expr $size \* $frac / 4 + 7`
		cut_file "$file" $bytes "$T/$kind-$frac.$ext"
		case $kind in
		text*) want=":[0-9]+:[0-9]+:" ;;
		*) want="" ;;
		esac
		refused "truncated $kind ($bytes of $size bytes)" \
			"$T/$kind-$frac.$ext" "$want"
	done
done
for frac in 1 2 3; do
	mkdir "$T/sm-$frac"
	cp -R "$SAVED"/* "$T/sm-$frac/"
	size=`wc -c <"$SAVED/saved_model.pb"`
	bytes=`expr $size \* $frac / 4 + 7`
	cut_file "$SAVED/saved_model.pb" $bytes "$T/sm-$frac/saved_model.pb"
	refused "truncated SavedModel ($bytes of $size bytes)" "$T/sm-$frac" ""
	refused "truncated SavedModel, by run" "$T/sm-$frac" "" \
		"$BIN" run remove_device "$T/sm-$frac" -o "$T/out/x"
done

# ---------------------------------------------------------------- other junk
"$BIN" -e 'math.randomseed(42)
  local t = {}
  for i = 1, 4096 do t[i] = string.char(math.random(0, 255)) end
  io.write(table.concat(t))' >"$T/random.pb"
refused "random bytes" "$T/random.pb" "not a TensorFlow model"
: >"$T/empty.pb"
refused "an empty file" "$T/empty.pb" ""
printf 'node {\n  name: "a"\n  op: "NoOp"\n}\nnode {\n  name: "b" op: }\n' \
	>"$T/syntax.pbtxt"
refused "a text file with a syntax error" "$T/syntax.pbtxt" "syntax.pbtxt:6:[0-9]+:"
printf 'node { name: "a" op: "NoOp" input: "b:x" }\n' >"$T/badref.pbtxt"
"$BIN" convert "$T/badref.pbtxt" "$T/out/x.pb" >/dev/null 2>"$T/err"
rc=$?
test $rc -eq 2 -o $rc -eq 0
ok $? "a malformed input reference loads or is refused, never crashes"
refused "a directory that is not a SavedModel" "$T/out" "saved_model"
refused "a file that does not exist" "$T/nonexistent.pb" ""

# ---------------------------------------------------------------- variables
mkdir "$T/novars"
cp "$SAVED/saved_model.pb" "$T/novars/"
# no values to lose: it loads and saves, without a warning
"$BIN" convert "$T/novars" "$T/novars-out" >/dev/null 2>"$T/err"
ok $? "a SavedModel whose variables/ is missing converts"
test ! -s "$T/err"
ok $? "without a warning"
test -f "$T/novars-out/saved_model.pb" && test ! -d "$T/novars-out/variables"
ok $? "and the copy has no variables either"
"$BIN" convert --allow-missing-variables "$T/novars" "$T/novars-out2" \
	>/dev/null 2>"$T/err"
ok $? "--allow-missing-variables is still accepted"
"$BIN" run remove_device "$T/novars" -o "$T/novars-run" >/dev/null 2>"$T/err"
ok $? "run takes it too"
"$BIN" convert "$SAVED" "$T/withvars.pb" >/dev/null 2>"$T/err"
grep -F "warning: the input's variable values" "$T/err" >/dev/null
ok $? "writing a SavedModel with values to one file warns that they are dropped"
"$BIN" convert "$SAVED" "$T/withvars-dir" >/dev/null 2>"$T/err"
test ! -s "$T/err" && test -f "$T/withvars-dir/variables/variables.index"
ok $? "writing it to a SavedModel directory keeps them, without a warning"
# a MetaGraphDef finds its values in the checkpoint beside it (x.meta,
# x.index): a .meta saved elsewhere without one says they stay behind
META=$C/onnx__tensorflow-onnx/tests/models/regression/checkpoint/model.meta
"$BIN" run remove_device "$META" -o "$T/reg.meta" >/dev/null 2>"$T/err"
grep -F "reg.meta: warning: the input's variable values (the checkpoint beside it) are not beside this file: copy" \
	"$T/err" >/dev/null
ok $? "a .meta saved away from its checkpoint warns that the values stay behind"
"$BIN" run remove_device "$META" -o "$T/reg.pb" >/dev/null 2>"$T/err"
grep -F "reg.pb: warning: the input's variable values (the checkpoint beside it) are not in this file" \
	"$T/err" >/dev/null
ok $? "so does a GraphDef"
# verify (and run --verify) read such a B's variables from A's checkpoint
"$BIN" run remove_device "$META" -o "$T/reg3.meta" --verify >"$T/vout" 2>"$T/err"
ok $? "run --verify of a .meta saved away from the checkpoint passes"
grep -F "(its variables read from the input's checkpoint): exact" "$T/vout" >/dev/null
ok $? "reading its variables from the input's checkpoint, as it says"
"$BIN" verify "$META" "$T/reg3.meta" >"$T/vout" 2>"$T/err"
ok $? "verify A B where B has no checkpoint of its own"
grep -F "note: B has no checkpoint of its own: its variables were read from A's" \
	"$T/vout" >/dev/null
ok $? "says so in a note"
cp "${META%.meta}.index" "$T/reg.index" &&
	cp "${META%.meta}.data-00000-of-00001" "$T/reg.data-00000-of-00001"
"$BIN" run remove_device "$META" -o "$T/reg.meta" --overwrite >/dev/null 2>"$T/err"
grep -F "warning:" "$T/err" >/dev/null
ok `test $? -ne 0; echo $?` "with a checkpoint beside the new .meta, no warning"
"$BIN" run remove_device "$META" -o "$T/reg-dir" --format savedmodel >/dev/null 2>"$T/err"
grep -F "warning:" "$T/err" >/dev/null
test $? -ne 0 && test -f "$T/reg-dir/variables/variables.index"
ok $? "a SavedModel directory takes the checkpoint along, without a warning"
"$BIN" validate "$T/novars" >"$T/stdout" 2>"$T/err"
test $? -eq 1 && grep -F "variables/variables.index" "$T/stdout" >/dev/null
ok $? "validate lists the missing variables as a problem"

# ---------------------------------------------------------------- scripts
printf 'local g = ge.graph()\n\nerror("bad thing")\n' >"$T/script.lua"
"$BIN" "$T/script.lua" >/dev/null 2>"$T/err"
rc=$?
test $rc -eq 1 && test "`cat "$T/err"`" = "gerewrite: $T/script.lua:3: bad thing"
s=$?
ok $s "a script error: exit status 1, one line with file and line"
if test $s -ne 0; then diag "$T/err"; fi

echo "1..$n"
exit $failed

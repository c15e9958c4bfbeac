#!/bin/sh
# tfjs-cli.sh: TensorFlow.js models from the command line: convert a
# GraphDef to model.json and back (by name and with --format tfjs, with
# --shard-size and --quantize), batch writing tfjs models as directories
# with their shards, and bad tfjs input: a manifest whose sizes disagree
# with the shard bytes, a shard path leaving the model's directory, an
# unknown dtype or quantization.  Each is one line naming the file, exit
# status 2, nothing written.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-tfjs.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

cat >"$T/g.pbtxt" <<'PB'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
  attr { key: "value" value { tensor { dtype: DT_FLOAT
    tensor_shape { dim { size: 1000 } } float_val: 0.5 float_val: -1.25 } } } }
node { name: "k" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32
    tensor_shape { dim { size: 2 } } int_val: 3 int_val: 4 } } } }
node { name: "y" op: "Mul" input: "x" input: "w"
  attr { key: "T" value { type: DT_FLOAT } } }
PB

# ---------------------------------------------------------------- convert
run "$BIN" convert "$T/g.pbtxt" "$T/js/model.json"
is_rc 0 "convert g.pbtxt js/model.json"
test -f "$T/js/model.json" && test -f "$T/js/group1-shard1of1.bin"
ok $? "  model.json and group1-shard1of1.bin"
run "$BIN" convert "$T/js/model.json" "$T/back.pbtxt"
is_rc 0 "convert js/model.json back.pbtxt"
# the same ops, and Consts with the same values (stored now as
# tensor_content, not float_val)
cat >"$T/same.lua" <<'LUA'
local a, b = assert(ge.load(arg[1])), assert(ge.load(arg[2]))
assert(#a == #b)
for _, op in ipairs(a:ops()) do
  local o = b:op(op.name)
  assert(o and o.type == op.type and #o.inputs == #op.inputs, op.name)
  if op.type == "Const" then
    assert(op:attr("value") == o:attr("value"), op.name)
  end
end
LUA
run "$BIN" "$T/same.lua" "$T/g.pbtxt" "$T/back.pbtxt"
is_rc 0 "  the same nodes and Const values as before"
run "$BIN" convert --format tfjs --shard-size 1000 "$T/g.pbtxt" "$T/js2"
is_rc 0 "--format tfjs --shard-size 1000 to a directory"
ls "$T/js2" | grep -c shard >"$T/n"
has "$T/n" 5 "  4008 bytes in 5 shards"
test -f "$T/js2/model.json"
ok $? "  beside js2/model.json"
run "$BIN" convert --quantize uint8 "$T/g.pbtxt" "$T/q8/model.json"
is_rc 0 "--quantize uint8"
has "$T/q8/model.json" '"dtype":"uint8"' "  the manifest says uint8"
s=`wc -c <"$T/q8/group1-shard1of1.bin"`
test "$s" -eq 1008
ok $? "  1000 bytes for w, 8 for k ($s)"
run "$BIN" convert --quantize int4 "$T/g.pbtxt" "$T/q4/model.json"
is_rc 2 "--quantize int4 is refused"
test ! -e "$T/q4"
ok $? "  nothing written"
run "$BIN" convert --quantize float16 --quantize-weights 'x*,k' \
	"$T/g.pbtxt" "$T/qn/model.json"
is_rc 0 "--quantize-weights with patterns that match no float weight"
grep -q quantization "$T/qn/model.json"
ok `test $? -ne 0; echo $?` "  nothing quantized"

# ---------------------------------------------------------------- bad input
# bad NAME WANT SED: a copy of js/ whose model.json is edited by SED (or,
# when SED is "-", whose shard gets one byte more) is refused
bad() {
	rm -rf "$T/bad" "$T/o"
	cp -r "$T/js" "$T/bad"
	mkdir "$T/o"
	if test "$3" = -; then
		printf x >>"$T/bad/group1-shard1of1.bin"
	else
		sed "$3" "$T/js/model.json" >"$T/bad/model.json"
	fi
	for out in "$T/o/m.pb" "$T/o/d/model.json"; do
		"$BIN" convert "$T/bad/model.json" "$out" >"$T/stdout" 2>"$T/err"
		rc=$?
		what=""
		test $rc -eq 2 || what="$what exit status $rc;"
		test `wc -l <"$T/err"` -eq 1 || what="$what not one line;"
		grep -F -e "gerewrite: $T/bad/" "$T/err" >/dev/null ||
			what="$what the file is not named;"
		grep -E -e "$2" "$T/err" >/dev/null || what="$what no /$2/;"
		test -z "`ls -A "$T/o"`" || what="$what output written;"
		ok `test -z "$what"; echo $?` "$1 (to `basename $out`)"
		if test -n "$what"; then echo "# $what"; diag "$T/err"; fi
	done
}
bad "a shard one byte longer than the manifest says" \
	"takes 4008 bytes but its files hold 4009" -
bad "a manifest saying more than the shard holds" "too short" \
	's/"shape":\[1000\]/"shape":[1001]/'
bad "a shard path leaving the model's directory" \
	'"../js/group1-shard1of1.bin" leaves the directory' \
	's|"group1-shard1of1.bin"|"../js/group1-shard1of1.bin"|'
bad "an unknown dtype" 'unsupported dtype "float64"' \
	's/"dtype":"float32"/"dtype":"float64"/'
bad "an unknown quantization" 'unknown quantization dtype "int4"' \
	's/"dtype":"float32"/"dtype":"float32","quantization":{"dtype":"int4"}/'

# ---------------------------------------------------------------- batch
mkdir -p "$T/in/sub" "$T/in/two"
cp "$T/g.pbtxt" "$T/in/a.pbtxt"
cp "$T/js/model.json" "$T/js/group1-shard1of1.bin" "$T/in/sub/"
"$BIN" convert "$T/g.pbtxt" "$T/in/two/m.json" >/dev/null 2>&1
run "$BIN" batch remove_device "$T/in" -o "$T/bo" -q --report "$T/r.json"
is_rc 0 "batch over a GraphDef and two tfjs models"
test -f "$T/bo/a.pbtxt" && test -f "$T/bo/sub/model.json" &&
	test -f "$T/bo/sub/group1-shard1of1.bin" &&
	test -f "$T/bo/two/m/model.json" &&
	test -f "$T/bo/two/m/group1-shard1of1.bin"
ok $? "  tfjs models mirrored as directories with their shards"
has "$T/r.json" '"summary": {' "  the report is written"
run "$BIN" batch remove_device "$T/in" -o "$T/bt" -q --format tfjs
is_rc 0 "batch --format tfjs"
test -f "$T/bt/a/model.json" && test -f "$T/bt/a/group1-shard1of1.bin"
ok $? "  a.pbtxt written as a/model.json with its shard"

cp "$T/g.pbtxt" "$T/in/two/m.pbtxt"
run "$BIN" batch remove_device "$T/in" -o "$T/bc" -q --format tfjs
is_rc 2 "two models written to one tfjs directory are refused"
has "$T/err" "two/m/model.json" "  naming the path"

echo "1..$n"
exit $failed

#!/bin/sh
# cli-func.sh: recipes reach function bodies.  insert_noise on a Keras
# SavedModel whose Conv2D is inside a function, and on one whose MatMuls
# are (--param types=MatMul): one noise block per op, inside the bodies,
# and the result validates; --functions none leaves the bodies alone; a
# recipe that says `functions = false` runs on the top-level graph only.
# info lists the functions and counts the ops of bodies, dot draws a body
# (--func), diff compares bodies.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
C=$GE_CORPUS
if test -z "$C" || test ! -f "$C/MANIFEST.tsv"; then
	echo "1..0 # SKIP corpus not found"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-func.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

CONV=$C/SciSharp__TensorFlow.NET/tools/TensorFlowNET.Benchmarks/Leak/TestModel/saved_model
MM=$C/SciSharp__TensorFlow.NET/test/TensorFlowNET.Keras.UnitTest/Assets/simple_model_from_auto_compile

# counts MODEL TYPE: "<TYPE ops in the graph> <in bodies> <noise blocks in
# bodies> <validates>"
counts() {
	M=$1 TY=$2 "$BIN" -e '
local g = assert(ge.load(os.getenv("M")))
local ty = os.getenv("TY")
local function count(h, t)
  local n = 0
  for _, op in ipairs(h:ops()) do if op.type == t then n = n + 1 end end
  return n
end
local inb, noise = 0, 0
for _, f in ipairs(g:functions()) do
  local b = f:graph()
  inb = inb + count(b, ty)
  noise = noise + count(b, "RandomStandardNormal")
end
print(count(g, ty) .. " " .. inb .. " " .. noise .. " " ..
      tostring((g:validate())))'
}

run "$BIN" run insert_noise "$CONV" -o "$T/conv"
is_rc 0 "insert_noise on a Keras SavedModel with Conv2D in a function"
c0=`counts "$CONV" Conv2D`
c1=`counts "$T/conv" Conv2D`
set -- $c0
ok `test "$1" -eq 0 && test "$2" -ge 1; echo $?` "the Conv2Ds are in bodies only ($c0)"
want="$1 $2 $2 true"
test "$c1" = "$want"
ok $? "one noise block per Conv2D, inside the bodies, and it validates ($c1)"

run "$BIN" run insert_noise "$MM" -o "$T/mm" --param types=MatMul
is_rc 0 "insert_noise types=MatMul on a Keras SavedModel"
m0=`counts "$MM" MatMul`
m1=`counts "$T/mm" MatMul`
set -- $m0
want="$1 $2 $2 true"
test "$m1" = "$want" && test "$2" -gt 1
ok $? "one noise block per MatMul inside the bodies, validates ($m0 -> $m1)"

run "$BIN" run insert_noise "$MM" -o "$T/none" --param types=MatMul \
	--functions none
is_rc 0 "--functions none"
set -- `counts "$T/none" MatMul`
test "$3" -eq 0
ok $? "--functions none leaves the bodies alone"

run "$BIN" batch insert_noise "$MM" -o "$T/batch" --param types=MatMul -q
is_rc 0 "batch reaches bodies too"
bm=`find "$T/batch" -name saved_model.pb | head -1`
b=`counts "\`dirname "$bm"\`" MatMul`
test "$b" = "$m1"
ok $? "batch gives what run gives ($b)"

cat >"$T/top_only.lua" <<'EOF'
return {
  name = "top_only", description = "counts the graphs it runs on",
  functions = false,
  run = function(g)
    g:add_op{type = "NoOp", name = "visited"}
  end,
}
EOF
run "$BIN" run "$T/top_only.lua" "$MM" -o "$T/top"
is_rc 0 "a recipe with functions = false"
M="$T/top" "$BIN" -e '
local g = assert(ge.load(os.getenv("M")))
local n = g:op("visited") and 1 or 0
for _, f in ipairs(g:functions()) do
  if f:graph():op("visited") then n = n + 1 end
end
print(n)' >"$T/n"
has "$T/n" "1" "runs on the top-level graph only"

run "$BIN" run set_input_shape "$MM" -o "$T/shape" \
	--param shapes=serving_default_input_1:2x28x28x1
is_rc 0 "a recipe naming top-level ops (set_input_shape) leaves bodies alone"

BERT=$C/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/bert1
run "$BIN" info "$BERT"
is_rc 0 "info on bert1"
has "$T/out" "functions (92, 5363 ops in their bodies):" \
	"info counts bert1's 92 functions and the 5,363 ops of their bodies"
has "$T/out" "  __inference_add_layer_call_and_return_conditional_losses_2459  3 ops, 5 callers" \
	"each function with its ops and callers"
has "$T/out" "ops by type in function bodies:" "body ops by type"

F=__inference__wrapped_model_5601
run "$BIN" dot "$T/mm" --func $F --highlight "$MM"
is_rc 0 "dot --func"
has "$T/out" "digraph" "dot --func writes DOT"
has "$T/out" 'tooltip="model/dense/MatMul/noise/add", fillcolor="#b7e4a7"' \
	"the body's new ops are highlighted against the original's body"
has "$T/out" '\n_Arg"' "with the _Arg ops"
run "$BIN" dot "$MM" --func nope
is_rc 2 "dot --func with an unknown function"
has "$T/err" "no function named 'nope'" "says so"

run "$BIN" diff "$MM" "$T/mm"
is_rc 1 "diff of bodies"
has "$T/out" "function '$F': + model/dense/MatMul/noise/add (AddV2)" \
	"diff names the body's added ops"
has "$T/out" "functions: 0 removed, 0 added, 7 changed" "and counts functions"
run "$BIN" diff "$MM" "$MM"
is_rc 0 "diff of a model with itself"

echo "1..$n"
exit $failed

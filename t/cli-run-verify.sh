#!/bin/sh
# cli-run-verify.sh: `run --verify` and `batch --verify` on small graphs:
# the output run against the input, judged by what the recipe declares
# of its numerics (exact, rounding, lossy with max_error and --max-error,
# changes); a declaration recipe.lua refuses; the batch report's figures.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-runvt.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

cat >"$T/m.pbtxt" <<'EOT'
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 4 } } } } }
node { name: "w" op: "Const" device: "/cpu:0" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 4 } } tensor_content: "\000\000\200?\000\000\000@\000\000@@\000\000\200@" } } } }
node { name: "y" op: "Mul" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
EOT
# a recipe that scales w by 1 + 1e-3 and declares what it is told
mkrecipe() { # mkrecipe FILE NUMERICS [MAX_ERROR]
	cat >"$1" <<EOT
return {
  name = "nudge", description = "Scale w by 1.001.",
  numerics = "$2", ${3:+max_error = $3,}
  run = function(g)
    local v = g:op("w"):attr("value"):totable()
    for i = 1, #v do v[i] = v[i] * 1.001 end
    g:op("w"):set_attr("value", ge.tensor_value("float32", {#v}, v))
  end,
}
EOT
}
mkrecipe "$T/exact.lua" exact
mkrecipe "$T/lossy.lua" lossy 0.01
mkrecipe "$T/changes.lua" changes

run "$BIN" run remove_device "$T/m.pbtxt" -o "$T/o1.pbtxt" --verify
is_rc 0 "run --verify: an exact recipe"
has "$T/out" "o1.pbtxt: verified against $T/m.pbtxt on seeded inputs: exact, 1 output, max abs 0, relative error 0: ok" \
	"says what it checked"
run "$BIN" run "$T/exact.lua" "$T/m.pbtxt" -o "$T/o2.pbtxt" --verify
is_rc 1 "a recipe declared exact that moves the outputs fails"
has "$T/err" "outputs differ from $T/m.pbtxt beyond what the recipe declares (exact)" \
	"the message says so"
run "$BIN" run "$T/lossy.lua" "$T/m.pbtxt" -o "$T/o3.pbtxt" --verify
is_rc 0 "lossy within its declared bound"
has "$T/out" "lossy, 1 output, max abs 0.00" "with its error"
run "$BIN" run "$T/lossy.lua" "$T/m.pbtxt" -o "$T/o3.pbtxt" --verify --max-error 1e-4
is_rc 1 "lossy past --max-error"
has "$T/err" "(lossy up to 0.0001 (--max-error))" "the message gives the bound"
run "$BIN" run "$T/changes.lua" "$T/m.pbtxt" -o "$T/o4.pbtxt" --verify
is_rc 0 "a recipe that changes the model by design: figures only"
run "$BIN" run "$T/exact.lua" "$T/m.pbtxt" -o "$T/o5.pbtxt"
is_rc 0 "without --verify nothing is checked"
mkrecipe "$T/bad.lua" approximately
run "$BIN" run "$T/bad.lua" "$T/m.pbtxt" -o "$T/o6.pbtxt" --verify
is_rc 3 "an unknown numerics kind is refused when the recipe loads"
has "$T/err" "field 'numerics' must be" "naming the field"
mkrecipe "$T/bad2.lua" lossy
run "$BIN" run "$T/bad2.lua" "$T/m.pbtxt" -o "$T/o6.pbtxt"
is_rc 3 "a lossy recipe without its bound is refused"
has "$T/err" "field 'max_error'" "naming the field"

mkdir "$T/in"
cp "$T/m.pbtxt" "$T/in/a.pbtxt"
cp "$T/m.pbtxt" "$T/in/b.pbtxt"
run "$BIN" batch "$T/lossy.lua" "$T/in" -o "$T/bout" --verify -q --report "$T/r.json"
is_rc 0 "batch --verify"
has "$T/r.json" '"numerics": "lossy"' "the report has the figures per model"
has "$T/r.json" '"max_abs_diff": 0.00' "the difference"
run "$BIN" batch "$T/exact.lua" "$T/in" -o "$T/bout2" --verify -q --report "$T/r2.json"
is_rc 1 "batch --verify: models outside what the recipe declares fail"
has "$T/r2.json" '"failed": 2' "both counted failed"

echo "1..$n"
exit $failed

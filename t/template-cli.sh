#!/bin/sh
# template-cli.sh: a recipe whose rewrite template is bad fails through
# `gerewrite run` with one line naming the recipe, the template and the
# entry, exit 1 and no output file; the shipped recipe's template runs.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
TOP=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-tmplcli.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$TOP/t/testlib.sh"

run "$BIN" convert "$TOP/doc/examples/small_cnn.pbtxt" "$T/model.pb"
is_rc 0 "the small CNN as a binary GraphDef"

# the shipped recipe, with one label, one attr and one kind broken
R=$TOP/scripts/fuse_conv_bias_relu.lua
mkdir "$T/label" "$T/attr" "$T/kind"
sed 's/inputs = {"x", "w", "b"}/inputs = {"x", "wt", "b"}/' "$R" \
	>"$T/label/fuse_conv_bias_relu.lua"
sed 's/{name, from = "conv"}/{name, from = "bias"}/' "$R" \
	>"$T/attr/fuse_conv_bias_relu.lua"
sed 's/{"num_args", 1, "int"}/{"num_args", "one", "int"}/' "$R" \
	>"$T/kind/fuse_conv_bias_relu.lua"

check() { # check DIR WANT NAME
	GEREWRITE_PATH=$T/$1 run "$BIN" run fuse_conv_bias_relu \
		"$T/model.pb" -o "$T/out-$1.pb"
	is_rc 1 "$3: the recipe fails"
	has "$T/err" "$2" "$3: one line names the template entry"
	test `wc -l <"$T/err"` -eq 1 && test ! -e "$T/out-$1.pb"
	ok $? "$3: one line, no output"
}
check label "fuse_conv_bias_relu.lua:" "unknown label"
check label "template 'fuse_conv_bias_relu': ops[1].inputs[2]: unknown label 'wt'" \
	"unknown label"
check attr "template 'fuse_conv_bias_relu': ops[1].attrs[2] ('strides'): unknown attr 'strides' of BiasAdd" \
	"unknown attr"
check kind "template 'fuse_conv_bias_relu': ops[1].attrs[11] ('num_args'): attr 'num_args':" \
	"wrong type"

GEREWRITE_PATH=$TOP/scripts run "$BIN" run fuse_conv_bias_relu \
	"$T/model.pb" -o "$T/fused.pb" -p activations=Relu
is_rc 0 "the shipped recipe runs"
run "$BIN" info "$T/fused.pb"
has "$T/out" "2  _FusedConv2D" "... and fuses both sites"

echo "1..$n"
exit $failed

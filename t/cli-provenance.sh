#!/bin/sh
# cli-provenance.sh: run writes what an op was made from in
# experimental_debug_info, says which rules made ops in its report, lists
# them with --provenance list, writes the rule attr only with --provenance
# attr, sets none with --provenance off (run, batch and g:provenance_mode),
# and leaves provenance out of a TensorFlow.js model.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-prov.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"

M=$T/m.pbtxt
cp "$SRC/doc/examples/small_cnn.pbtxt" "$M"

run "$BIN" run fuse_conv_bias_relu "$M" -o "$T/f.pbtxt"
is_rc 0 "fuse_conv_bias_relu"
has "$T/err" "(12 -> 8 ops); provenance: fuse_conv_bias_relu 2" \
	"the report names the rule and how many ops it made"
has "$T/f.pbtxt" 'original_node_names: "conv1/BiasAdd"' \
	"the fused op lists the ops it replaced"
grep -q _gerewrite_rule "$T/f.pbtxt"
ok $((! $?)) "by default no rule attr is written"
grep -q ": provenance: conv1/Relu" "$T/err"
ok $((! $?)) "nor a line per op"

run "$BIN" run fuse_conv_bias_relu "$M" -o "$T/fa.pbtxt" \
	--provenance attr --provenance list
is_rc 0 "--provenance attr --provenance list"
has "$T/err" "fuse_conv_bias_relu: $M: provenance: conv1/Relu: fuse_conv_bias_relu" \
	"list: a line per op made, with its rule"
has "$T/fa.pbtxt" 'key: "_gerewrite_rule"' "attr: the rule attr is written"
run "$BIN" -e "local g = assert(ge.load('$T/fa.pbtxt'))
print(g:op('conv2/Relu'):attr('_gerewrite_rule'))
print(table.concat(g:op('conv2/Relu').origins.nodes, ','))"
has "$T/out" "fuse_conv_bias_relu" "the attr holds the rule"
has "$T/out" "conv2/BiasAdd,conv2/Conv2D,conv2/Relu" \
	"op.origins reads the saved field"

run "$BIN" run fuse_conv_bias_relu "$M" -o "$T/x.pbtxt" --provenance nope
is_rc 2 "an unknown --provenance is a usage error"
has "$T/err" "--provenance takes field, attr, list or off" "and says what it takes"

run "$BIN" run copy_subgraph "$M" -o "$T/c.pbtxt" -p scope=conv1 \
	-p dst_scope=c2
is_rc 0 "copy_subgraph"
has "$T/err" "provenance: copy 5" "the copies are in the report"
run "$BIN" -e "local g = assert(ge.load('$T/c.pbtxt'))
print(table.concat(g:op('c2/Conv2D').origins.nodes, ','))"
has "$T/out" "conv1/Conv2D" "a copy names its source"

# off: no op gains the field, the report counts no rule
run "$BIN" run fuse_conv_bias_relu "$M" -o "$T/off.pbtxt" --provenance off
is_rc 0 "--provenance off"
grep -q "experimental_debug_info\|_gerewrite_rule" "$T/off.pbtxt"
ok $((! $?)) "off: the fused model holds no provenance"
grep -q "provenance:" "$T/err"
ok $((! $?)) "off: the report names no rule"
run "$BIN" run fuse_conv_bias_relu "$M" -o "$T/offl.pbtxt" \
	--provenance off --provenance list
has "$T/err" "provenance: conv1/Relu: fuse_conv_bias_relu" \
	"list after off turns provenance on again"
run "$BIN" run fuse_conv_bias_relu "$T/f.pbtxt" -o "$T/off2.pbtxt" \
	--provenance off
grep -c "experimental_debug_info" "$T/f.pbtxt" >"$T/n1"
grep -c "experimental_debug_info" "$T/off2.pbtxt" >"$T/n2"
cmp -s "$T/n1" "$T/n2"
ok $? "off keeps the fields the input held (`cat "$T/n1"` ops)"
mkdir "$T/in" && cp "$M" "$T/in/"
run "$BIN" batch copy_subgraph "$T/in" -o "$T/bout" -p scope=conv1 \
	-p dst_scope=c2 --provenance off
is_rc 0 "batch --provenance off"
grep -q "experimental_debug_info" "$T/bout/m.pbtxt"
ok $((! $?)) "batch off: the copies name no source"
run "$BIN" batch copy_subgraph "$T/in" -o "$T/bout2" -p scope=conv1 \
	-p dst_scope=c2 --provenance attr
is_rc 2 "batch --provenance attr is a usage error"
has "$T/err" "--provenance takes field or off" "and batch says what it takes"
run "$BIN" -e "local g = assert(ge.load('$M'))
print(g:provenance_mode(), g:provenance_mode('off'))
ge.copy(ge.sgv(g), {dst_scope = 'c'})
print(next(g:provenance()) == nil)"
has "$T/out" "field	off" "g:provenance_mode reads and sets the mode"
has "$T/out" "true" "in a script a copy under off names no source"

# TensorFlow.js: its NodeDef has no such field
run "$BIN" convert "$T/f.pbtxt" "$T/js/model.json"
is_rc 0 "the fused model converts to TensorFlow.js"
grep -q -i "debuginfo\|debug_info" "$T/js/model.json"
ok $((! $?)) "model.json holds no provenance"

echo "1..$n"
exit $failed

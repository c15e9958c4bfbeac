#!/bin/sh
# dot-picture.sh: `gerewrite dot` pictures: the format follows the
# output's extension (.dot text, .svg/.png/.pdf through Graphviz, an
# unknown one refused, Graphviz missing refused), an unknown scope is an
# error naming the nearest scopes, ops are labelled within their scope,
# sub-scopes are clusters (a scope holding one sub-scope shares its box,
# a scope of one op is the op), --collapse N draws scopes as one node
# with a count and opens the biggest until about N boxes are drawn, data
# edges carry dtype and shape, and a legend is drawn.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-dotpic.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"
hasnt() { ! grep -F -e "$2" "$1" >/dev/null; ok $? "$3"; }

cat >"$T/mk.lua" <<'LUA'
local F = "float32"
local g = ge.graph()
g:add_op{type = "Placeholder", name = "input", attrs = {dtype = F, shape = ge.shape{1, 8}}}
local prev = "input"
for b = 1, 2 do
  for l = 1, 3 do
    local s = string.format("model/tower/block%d/layer%d", b, l)
    g:add_op{type = "Const", name = s .. "/w", attrs = {dtype = F,
             value = ge.tensor_value(F, {8, 8})}}
    g:add_op{type = "MatMul", name = s .. "/mm", inputs = {prev, s .. "/w"},
             attrs = {T = F}}
    prev = s .. "/mm"
  end
end
g:add_op{type = "Split", name = "model/split", inputs = {"model/tower/block1/layer1/w", prev},
         attrs = {T = F, num_split = 2}}
g:add_op{type = "Identity", name = "out", inputs = {"model/split:1"}, attrs = {T = F},
         control_inputs = {"input"}}
for _, n in ipairs{"deep/er/still/x", "deep/er/still/y", "lonely/scope/z"} do
  g:add_op{type = "Identity", name = n, inputs = {"out"}, attrs = {T = F}}
end
assert(g:save(arg[1]))
LUA
"$BIN" "$T/mk.lua" "$T/m.pb"
ok $? "writing a model"

# ---------------------------------------------------------------- formats
"$BIN" dot "$T/m.pb" -o "$T/m.dot" 2>"$T/err"
ok $? "-o FILE.dot"
head -1 "$T/m.dot" | grep '^digraph' >/dev/null
ok $? "writes DOT text"
"$BIN" dot "$T/m.pb" -o "$T/m.gv" && head -1 "$T/m.gv" | grep '^digraph' >/dev/null
ok $? "-o FILE.gv writes DOT text too"
"$BIN" dot "$T/m.pb" -o "$T/m.jpeg" >/dev/null 2>"$T/err"
rc=$?
is_rc 2 "an extension that names no known format"
has "$T/err" "m.jpeg: cannot tell the picture format" "says so"
test ! -e "$T/m.jpeg"
ok $? "and writes nothing"
GEREWRITE_DOT=/nonexistent/dot "$BIN" dot "$T/m.pb" -o "$T/n.png" >/dev/null 2>"$T/err"
rc=$?
is_rc 2 "PNG without Graphviz"
has "$T/err" "n.png: .png needs Graphviz's '/nonexistent/dot' program" \
	"names the program needed"
test ! -e "$T/n.png"
ok $? "and writes no PNG (no DOT text in it either)"
if command -v dot >/dev/null 2>&1; then
	"$BIN" dot "$T/m.pb" -o "$T/m.png" 2>"$T/err"
	ok $? "-o FILE.png"
	od -An -c -N4 "$T/m.png" | grep 'P   N   G' >/dev/null
	ok $? "writes a PNG image"
	"$BIN" dot "$T/m.pb" -o "$T/m.pdf" && head -c 5 "$T/m.pdf" | grep '%PDF-' >/dev/null
	ok $? "-o FILE.pdf writes a PDF"
	"$BIN" dot "$T/m.pb" -o "$T/m.svg" && grep '<svg' "$T/m.svg" >/dev/null
	ok $? "-o FILE.svg writes SVG"
else
	for i in 1 2 3 4; do echo "ok # SKIP Graphviz's dot is not installed"; n=`expr $n + 1`; done
fi

# ---------------------------------------------------------------- scopes
"$BIN" dot "$T/m.pb" --scope tower >"$T/out" 2>"$T/err"
rc=$?
is_rc 2 "an unknown scope is an error"
has "$T/err" "no op in scope 'tower'; nearest scopes: model/tower" \
	"that suggests the scope ending with the name"
test ! -s "$T/out"
ok $? "and prints no digraph"
"$BIN" dot "$T/m.pb" --scope model/towr/block1 >/dev/null 2>"$T/err"
has "$T/err" "nearest scopes: model/tower/block1" "a misspelt scope gets the nearest one"
"$BIN" dot "$T/m.pb" --scope zzzzzzzzzzzz >/dev/null 2>"$T/err"
has "$T/err" "no op in scope 'zzzzzzzzzzzz'" "a scope near nothing is still named"

"$BIN" dot "$T/m.pb" --scope model/tower >"$T/s.dot"
ok $? "a scope that exists"
has "$T/s.dot" 'label="mm\nMatMul", tooltip="model/tower/block1/layer2/mm"' \
	"ops are labelled within their scope, the full name as tooltip"
hasnt "$T/s.dot" 'label="model/tower/' "no label holds the scope's path"
grep -c 'subgraph cluster_[0-9]' "$T/s.dot" | grep '^8$' >/dev/null
ok $? "sub-scopes are clusters (2 blocks, 6 layers)"
has "$T/s.dot" 'label="block1";' "a cluster is labelled with its name"
has "$T/s.dot" 'label="input", tooltip="input", shape=ellipse' \
	"an op outside the scope is a grey ellipse"
has "$T/s.dot" 'label="float32[1,8]"' "data edges carry dtype and shape"
has "$T/s.dot" 'label="float32[8,8]"' "a Const's shape comes from its value"
has "$T/s.dot" "cluster_legend" "a legend is drawn"
has "$T/s.dot" "control dependency" "it explains the dashed lines"
has "$T/s.dot" "an op outside the scope" "and the grey ellipses"
"$BIN" dot "$T/m.pb" >"$T/all.dot"
has "$T/all.dot" 'label=":1 float32' "an output other than 0 is marked :k"
has "$T/all.dot" '[style=dashed' "control edges are dashed"

# ---------------------------------------------------------------- collapse
has "$T/all.dot" 'label="deep/er/still";' \
	"a scope holding only one sub-scope shares its box (one label)"
test `grep -c "subgraph cluster_[0-9]" "$T/all.dot"` -eq 11
ok $? "so deep/ and deep/er/ are no boxes of their own (11 clusters)"
has "$T/all.dot" 'label="lonely/scope/z\nIdentity"' \
	"a scope of one op is the op, labelled with the rest of its name"

# ---------------------------------------------------------------- collapse
boxes() { grep '^ *[ns][0-9]* \[label' "$1" | grep -vc ellipse; }
"$BIN" dot "$T/m.pb" --scope model/tower --collapse 2 >"$T/c.dot"
ok $? "--collapse 2"
has "$T/c.dot" 'label="block1/\n6 ops"' "a scope not opened is one node with its count"
has "$T/c.dot" 'label="block2/\n6 ops"' "each of them"
hasnt "$T/c.dot" 'tooltip="model/tower/block1/layer1/mm"' "its ops are not drawn"
test `grep -c -e '-> s[0-9]* \[' "$T/c.dot"` -eq 2
ok $? "edges into a collapsed scope are drawn once"
has "$T/c.dot" "collapsed" "the legend explains collapsed scopes"
"$BIN" dot "$T/m.pb" --scope model/tower --collapse 4 >"$T/c4.dot"
test `boxes "$T/c4.dot"` -eq 4
ok $? "--collapse 4: the biggest scope is opened, 4 boxes (`boxes "$T/c4.dot"`)"
has "$T/c4.dot" 'label="layer1/\n2 ops", tooltip="model/tower/block1/layer1"' \
	"block1 is opened into its layers"
has "$T/c4.dot" 'label="block2/\n6 ops"' "block2 stays one node"
"$BIN" dot "$T/m.pb" --scope model/tower --collapse 100 >"$T/c100.dot"
has "$T/c100.dot" 'tooltip="model/tower/block2/layer3/mm"' \
	"--collapse bigger than the graph draws every op"
"$BIN" dot "$T/m.pb" --collapse 0 >/dev/null 2>"$T/err"
rc=$?
is_rc 2 "--collapse 0 is refused"

echo "1..$n"
exit $failed

#!/bin/sh
# cli-semantics.sh: the command line on TF1 control flow: convert picks
# the format by the output's extension and refuses what it cannot write;
# validate names the frame and the op of a broken loop; the recipes say
# what they left alone.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-sem.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

cat >"$T/mk.lua" <<'LUA'
local cflow = require "cflow"
local g = cflow.graph(arg[2])
assert(g:save(arg[1]))
LUA
LUA_PATH="${GE_TOP_SRCDIR:-.}/t/?.lua;;" "$BIN" "$T/mk.lua" "$T/loop.pb" \
	loop_and_scalars
ok $? "a model with a loop and scalars"

# failure 6: .json is a TensorFlow.js model, never GraphDef bytes; names
# of formats gerewrite does not write are refused, nothing written; .meta
# is a MetaGraphDef
run "$BIN" convert "$T/loop.pb" "$T/out.json"
is_rc 0 "convert to .json"
run "$BIN" info "$T/out.json"
has "$T/out" "format:  tfjs" "a .json output is a TensorFlow.js model"
run "$BIN" convert "$T/loop.pb" "$T/out.onnx"
is_rc 2 "convert to .onnx is refused"
has "$T/err" "cannot write .onnx files" "... saying why"
test ! -e "$T/out.onnx"
ok $? "... and writes nothing"
run "$BIN" convert "$T/loop.pb" "$T/out.meta"
is_rc 0 "convert to .meta"
run "$BIN" info "$T/out.meta"
has "$T/out" "format:  meta" "a .meta output is a MetaGraphDef"
run "$BIN" convert "$T/loop.pb" "$T/out.pbtxt"
is_rc 0 "convert to .pbtxt"
run "$BIN" info "$T/out.pbtxt"
has "$T/out" "format:  graphdef-text" "a .pbtxt output is text"

# failure 3: the scalar input is fed whole, and the recipe says so
run "$BIN" run clone_tower "$T/loop.pb" -o "$T/towers.pb" \
	--param inputs=x,keep_prob --param outputs=out
is_rc 0 "clone_tower with a scalar input"
has "$T/err" "fed whole to every tower (no batch dimension): keep_prob:0" \
	"... says it feeds keep_prob whole"
run "$BIN" validate "$T/towers.pb"
is_rc 0 "... the towers validate"

# failure 5: integers refused with a clear line, unread sites reported
run "$BIN" run insert_noise "$T/loop.pb" -o "$T/noise.pb" --param types=AddV2
is_rc 1 "insert_noise on an int32 op fails"
has "$T/err" "n2:0 (AddV2) is int32: noise on integers needs integers=cast" \
	"... naming the op and the way out"
test ! -e "$T/noise.pb"
ok $? "... and writes nothing"
run "$BIN" run insert_noise "$T/loop.pb" -o "$T/noise.pb" \
	--param types=AddV2 --param integers=cast
is_rc 0 "insert_noise integers=cast"
has "$T/err" "no noise after ops nobody reads (it would change nothing): n2" \
	"... reports the site nobody reads"
run "$BIN" help insert_noise
has "$T/out" "nobody reads" "the help says so"

# failure 1: remove_nodes keeps the pivots and says so
run "$BIN" run remove_nodes "$T/loop.pb" -o "$T/rm.pb" --param op=Identity
is_rc 0 "remove_nodes op=Identity"
has "$T/err" "kept 1 op that while-loop ops wait on (loop pivots)" \
	"... says it kept the pivot"
run "$BIN" validate "$T/rm.pb"
is_rc 0 "... the result validates"

# validate names frame and op of a loop cut by hand
cat >"$T/cut.lua" <<'LUA'
local g = assert(ge.load(arg[1]))
g:op("scaled"):set_input(0, g:op("while/add"):output(0))
assert(g:save(arg[2]))
LUA
"$BIN" "$T/cut.lua" "$T/loop.pb" "$T/cut.pb"
run "$BIN" validate "$T/cut.pb"
is_rc 1 "validate refuses a read across frames"
has "$T/out" "node 'scaled' (Mul) in frame '(root)': reads 'keep_prob' of frame '(root)' and 'while/add' of frame 'while/while_context'" \
	"... naming the op and both frames"

echo "1..$n"
exit $failed

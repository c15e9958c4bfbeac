#!/bin/sh
# cli-small.sh: the smaller things a new user trips on: run --quantize,
# a misspelt recipe name, diff's old and new attr values, validate of
# several models, a tfjs directory that cannot be written, refusals of
# the shipped recipes without their script's place.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-small.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"

M=$T/m.pbtxt
cp "$SRC/doc/examples/small_cnn.pbtxt" "$M"

# run --quantize: a quantized TensorFlow.js model in one step
run "$BIN" run insert_noise "$M" -o "$T/js/model.json" --quantize uint8
is_rc 0 "run --quantize uint8 to a tfjs model"
has "$T/js/model.json" '"uint8"' "its weights are stored as uint8"
run "$BIN" run insert_noise "$M" -o "$T/js2/model.json" --quantize int4
is_rc 2 "a bad --quantize is a usage error"
test ! -e "$T/js2"
ok $? "before anything is written"

# a misspelt recipe
run "$BIN" run insert_nois "$M" -o "$T/x.pbtxt"
is_rc 2 "an unknown recipe"
has "$T/err" "no recipe named 'insert_nois'; did you mean insert_noise?" \
	"the nearest recipe is suggested"
run "$BIN" help strip_unused_node
has "$T/err" "did you mean strip_unused_nodes?" "help too"

# diff: the old and new values of changed attrs
run "$BIN" run set_input_shape "$M" -o "$T/b8.pbtxt" --param batch=8
run "$BIN" diff "$M" "$T/b8.pbtxt"
is_rc 1 "diff of a changed shape"
has "$T/out" "~ input (Placeholder): attrs shape [1,8,8,3] -> [8,8,8,3]" \
	"shows the shape before and after"
run "$BIN" run remove_attribute "$M" -o "$T/np.pbtxt" \
	--param attribute_name=padding
run "$BIN" diff "$M" "$T/np.pbtxt"
has "$T/out" 'attrs padding "SAME" -> (none)' "a removed attr"

# validate several models
cp "$M" "$T/m2.pbtxt"
run "$BIN" validate "$M" "$T/m2.pbtxt"
is_rc 0 "validate of two models"
has "$T/out" "$T/m2.pbtxt: valid (12 ops)" "both are listed"
run "$BIN" validate "$M" "$T/missing.pb" "$T/m2.pbtxt"
is_rc 2 "one missing: exit 2"
has "$T/out" "$T/m2.pbtxt: valid" "the others are still validated"

# a tfjs model whose directory cannot be made: said plainly
run "$BIN" convert "$M" "$T/nodir/sub/model.json"
is_rc 2 "a tfjs model under a missing directory"
has "$T/err" "$T/nodir/sub/model.json: the directory $T/nodir does not exist" \
	"names the missing directory"
: > "$T/afile"
run "$BIN" convert "$M" "$T/afile/sub/model.json"
has "$T/err" "$T/afile is not a directory" "a file in the way is named"
! grep -F "beside" "$T/err" >/dev/null
ok $? "no 'cannot create a directory beside'"

# refusals of shipped recipes: no script path and line
run "$BIN" run set_input_shape "$M" -o "$T/x.pbtxt" --param shapes=nope:1
is_rc 1 "a shipped recipe refuses"
has "$T/err" "gerewrite: shapes: no op named 'nope' (model $M)" \
	"the message alone"
! grep -F ".lua:" "$T/err" >/dev/null
ok $? "without the script's path and line"
printf 'return {description = "x", run = function(g) error("mine") end}\n' \
	> "$T/mine.lua"
run "$BIN" run "$T/mine.lua" "$M" -o "$T/x.pbtxt"
has "$T/err" "mine.lua:1: mine" "a recipe of the user's keeps its line"

echo "1..$n"
exit $failed

#!/bin/sh
# cli-overwrite.sh: --overwrite on run, convert and batch rewrites a model
# in place, atomically; without it the refusal names the option.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-overwrite.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"

M=$T/m.pbtxt
cp "$SRC/doc/examples/small_cnn.pbtxt" "$M"
cp "$M" "$T/orig.pbtxt"
noise() { # noise FILE: whether the model has noise ops
	"$BIN" info "$1" | grep -F RandomStandardNormal >/dev/null
}

# run
run "$BIN" run insert_noise "$M" -o "$M"
is_rc 2 "run onto its input is refused"
has "$T/err" "(use --overwrite)" "the hint names --overwrite"
! grep -F "(use overwrite)" "$T/err" >/dev/null
ok $? "not the Lua option"
cmp -s "$M" "$T/orig.pbtxt"
ok $? "the model is untouched"
run "$BIN" run insert_noise "$M" -o "$M" --overwrite
is_rc 0 "run -o MODEL --overwrite"
noise "$M"
ok $? "the model was rewritten"
cp "$T/orig.pbtxt" "$M"
run "$BIN" run insert_noise "$M" --overwrite
is_rc 0 "run --overwrite without -o"
noise "$M"
ok $? "rewrites the model in place"
run "$BIN" run insert_noise "$M"
is_rc 2 "run without -o nor --overwrite"
has "$T/err" "--overwrite to rewrite MODEL" "says both ways"

# convert
cp "$T/orig.pbtxt" "$M"
run "$BIN" convert "$M" "$M"
is_rc 2 "convert onto its input is refused"
has "$T/err" "(use --overwrite)" "the hint names --overwrite"
run "$BIN" convert "$T/m.pbtxt" "$T/m.pbtxt" --overwrite
is_rc 0 "convert --overwrite"
run "$BIN" diff "$T/orig.pbtxt" "$M"
is_rc 0 "the same graph"

# a SavedModel directory in place
run "$BIN" convert "$T/orig.pbtxt" "$T/sm" --format savedmodel
run "$BIN" run insert_noise "$T/sm" --overwrite
is_rc 0 "run --overwrite on a SavedModel directory"
noise "$T/sm"
ok $? "rewritten in place"
ls -a "$T" | grep -e '\.tmp-' -e '\.old-' > "$T/left"
test ! -s "$T/left"
ok $? "no temp left"

# batch
mkdir -p "$T/zoo/a"
cp "$T/orig.pbtxt" "$T/zoo/a/one.pbtxt"
cp "$T/orig.pbtxt" "$T/zoo/two.pbtxt"
run "$BIN" batch insert_noise "$T/zoo" -o "$T/zoo"
is_rc 1 "batch onto its input without --overwrite fails the models"
has "$T/err" "(use --overwrite)" "the hint names --overwrite"
run "$BIN" batch insert_noise "$T/zoo" --overwrite -q
is_rc 0 "batch --overwrite without -o"
noise "$T/zoo/a/one.pbtxt" && noise "$T/zoo/two.pbtxt"
ok $? "every model rewritten in place"
test ! -e "$T/zoo/a/one.pbtxt.tmp" && test "`ls "$T/zoo" | wc -l`" -eq 2
ok $? "nothing else written"
cp "$T/orig.pbtxt" "$T/zoo/two.pbtxt"
run "$BIN" batch insert_noise "$T/zoo" -o "$T/zoo" --overwrite -q
is_rc 0 "batch -o DIR --overwrite onto the same tree"
noise "$T/zoo/two.pbtxt"
ok $? "rewritten"
run "$BIN" batch insert_noise "$T/zoo" --overwrite --resume
is_rc 2 "--resume in place is refused"

# help
for c in run convert batch; do
	run "$BIN" help $c
	has "$T/out" "--overwrite" "help $c names --overwrite"
done

echo "1..$n"
exit $failed

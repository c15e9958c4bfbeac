#!/bin/sh
# tfjs-noise-corpus.sh: insert_noise on a TensorFlow.js model of the
# corpus, saved as tfjs (a model.json and its shards), loads again in
# gerewrite with the noise ops and every original weight unchanged.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
C=$GE_CORPUS
if test -z "$C" || test ! -f "$C/MANIFEST.tsv"; then
	echo "1..0 # SKIP corpus not found"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-noise.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

M=$C/tfjs/npm__@vladmandic__human-3.3.6/models/emotion.json
run "$BIN" run insert_noise "$M" -o "$T/noisy/model.json" \
	-p types=_FusedConv2D,DepthwiseConv2dNative -p stddev=0.05
is_rc 0 "insert_noise on emotion.json, saved as tfjs"
test -f "$T/noisy/model.json" && test -f "$T/noisy/group1-shard1of1.bin"
ok $? "  model.json and its shard"
has "$T/noisy/model.json" '"RandomStandardNormal"' \
	"  the topology holds the noise ops"

cat >"$T/check.lua" <<'LUA'
local a, b = assert(ge.load(arg[1])), assert(ge.load(arg[2]))
local noise, consts = 0, 0
for _, op in ipairs(b:ops()) do
  if op.type == "RandomStandardNormal" then noise = noise + 1 end
end
assert(noise == 13, "noise sites: " .. noise)
for _, op in ipairs(a:ops()) do
  local o = assert(b:op(op.name), op.name)
  if op.type == "Const" then
    assert(op:attr("value") == o:attr("value"), "weight " .. op.name)
    consts = consts + 1
  end
end
print(#b .. " ops, " .. noise .. " noise sites, " .. consts ..
      " original Consts equal")
LUA
run "$BIN" "$T/check.lua" "$M" "$T/noisy/model.json"
is_rc 0 "  it loads again: 13 noise sites, the original weights equal"
diag "$T/out"

echo "1..$n"
exit $failed

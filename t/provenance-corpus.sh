#!/bin/sh
# provenance-corpus.sh: provenance on models of the corpus.  fold_batch_norms
# on faceres-deep: every conv that absorbed a batch norm lists it;
# inline_functions on bert1: every inlined op names its function; a copy's
# ops name their sources; the outputs still run and verify, and provenance
# written on every op of a model changes no number.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
C=${GE_CORPUS:-../shared/corpus}
if ! test -f "$C/MANIFEST.tsv"; then
	echo "1..0 # SKIP corpus not found"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-provc.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "${GE_TOP_SRCDIR:-.}/t/testlib.sh"

FACE=$C/large/faceres-deep.frozen.pb
BERT=$C/tensorflow__tensorflow/tensorflow/cc/saved_model/testdata/bert1
LEAK=$C/SciSharp__TensorFlow.NET/tools/TensorFlowNET.Benchmarks/Leak/TestModel/saved_model

# ---- fold_batch_norms on faceres-deep
run "$BIN" run fold_batch_norms "$FACE" -o "$T/f.pb" --verify
is_rc 0 "fold_batch_norms on faceres-deep, verified"
has "$T/err" "13 folded" "13 batch norms folded"
has "$T/out" "ok" "the output runs and verifies"
# the batch norms of the input: an op of a conv's output that the fold
# replaced (a Mul the conv takes the name of, or a batch norm turned into
# a BiasAdd): the conv now reading or named so must list it and itself
cat > "$T/bn.lua" <<'LUA'
local before, after = assert(ge.load(arg[1])), assert(ge.load(arg[2]))
local conv = {Conv2D = true, DepthwiseConv2dNative = true, MatMul = true}
local folded, listed = 0, 0
local function has(list, x)
  for _, y in ipairs(list) do if y == x then return true end end
end
for _, bn in ipairs(before:ops()) do
  local x = bn.inputs[1]
  if (bn.type == "Mul" or bn.type:match("^FusedBatchNorm")) and
     type(x) ~= "string" and conv[x.op.type] then
    local now = after:op(bn.name)
    local c
    if now and conv[now.type] then c = now
    elseif now and now.type == "BiasAdd" then c = after:op(x.op.name) end
    if c then
      folded = folded + 1
      local o = c.origins.nodes
      if has(o, bn.name) and has(o, x.op.name) then listed = listed + 1
      else print("not listed: " .. c.name .. " <- " .. bn.name) end
    end
  end
end
print(string.format("folded %d listed %d", folded, listed))
LUA
run "$BIN" "$T/bn.lua" "$FACE" "$T/f.pb"
has "$T/out" "folded 13 listed 13" \
	"every conv that absorbed a batch norm lists it and itself"

# ---- inline_functions on bert1
run "$BIN" run inline_functions "$BERT" -o "$T/b"
is_rc 0 "inline_functions on bert1"
cat > "$T/inl.lua" <<'LUA'
local before, after = assert(ge.load(arg[1])), assert(ge.load(arg[2]))
local fns = {}
for _, f in ipairs(before:functions()) do fns[f.name] = true end
local new, named, bad = 0, 0, 0
for _, op in ipairs(after:ops()) do
  if not before:op(op.name) then
    new = new + 1
    local o = op.origins
    local ok = #o.funcs > 0 and #o.nodes > 0
    for _, f in ipairs(o.funcs) do ok = ok and fns[f] end
    if ok then named = named + 1 elseif bad < 3 then
      bad = bad + 1
      print("not named: " .. op.name)
    end
  end
end
print(string.format("inlined %d named %d", new, named))
LUA
run "$BIN" "$T/inl.lua" "$BERT" "$T/b"
has "$T/out" "inlined 620 named 620" \
	"every inlined op names its call and its functions"

# inlining a model the runner runs: numbers unchanged
run "$BIN" run inline_functions "$LEAK" -o "$T/leak" --verify
is_rc 0 "inline_functions on the Leak TestModel, verified"
has "$T/out" "exact" "inlined with provenance: bit-equal outputs"

# ---- a copy's ops name their sources
run "$BIN" run copy_subgraph "$FACE" -o "$T/c.pb" -p scope=conv_dw_1 \
	-p dst_scope=copy
is_rc 0 "copy_subgraph on faceres-deep"
cat > "$T/copy.lua" <<'LUA'
local g = assert(ge.load(arg[1]))
local n, named = 0, 0
for _, op in ipairs(g:ops()) do
  if op.name:match("^copy/") then
    n = n + 1
    local src = op.name:gsub("^copy/", "conv_dw_1/")
    if op.origins.nodes[1] == src and #op.origins.nodes == 1 then
      named = named + 1
    end
  end
end
print(string.format("copies %d named %d", n, named))
LUA
run "$BIN" "$T/copy.lua" "$T/c.pb"
grep -q "copies \([1-9][0-9]*\) named \1$" "$T/out"
ok $? "every copy names its source"

# ---- provenance on every op changes no number
run "$BIN" -e "local g = assert(ge.load('$FACE'))
for _, op in ipairs(g:ops()) do
  op:add_origins{nodes = {op, 'elsewhere'}, funcs = {'f'}}
end
assert(g:save('$T/all.pb'))"
is_rc 0 "provenance written on every op of faceres-deep"
run "$BIN" verify "$FACE" "$T/all.pb"
is_rc 0 "it verifies against the input"
has "$T/out" "max abs 0" "with the same numbers"

echo "1..$n"
exit $failed

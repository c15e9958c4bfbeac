#!/bin/sh
# hostile-cli.sh: crafted models, written at run time by t/hostile-gen.lua,
# through the commands: each is refused with exit status 2 and one line
# naming the file and the node (or field path), within the memory budget,
# without reading outside the model, hanging, or leaving temp files.  The
# numbers are the cases listed in doc/hostile-input.md.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-hostile.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"
F=$T/fx
mkdir "$F" "$T/o"
"$BIN" "$SRC/t/hostile-gen.lua" "$F"
ok $? "the crafted models are written"
cd "$T" || exit 1
F=fx

# refused NAME WANT COMMAND...: exit status 2, one line on stderr that
# contains WANT (grep -F), no output left in o/
refused() {
	name=$1 want=$2
	shift 2
	rm -rf o && mkdir o
	"$@" >stdout 2>err </dev/null
	rc=$?
	what=""
	test $rc -eq 2 || what="$what exit status $rc;"
	test "`wc -l <err`" -eq 1 || what="$what `wc -l <err` lines on stderr;"
	grep -F -e "$want" err >/dev/null || what="$what no '$want';"
	test -z "`ls -A o`" || what="$what output written: `ls -A o`;"
	ok `test -z "$what"; echo $?` "$name"
	if test -n "$what"; then echo "# $what"; diag err; fi
}

# 1. one flipped bit in a signature_def entry: no crash in `info`
run "$BIN" info $F/sig_ok
is_rc 0 "1. info on the SavedModel with a good signature"
refused "1. info on a corrupt signature_def entry names it" \
	"signature_def[1] 'serving'" "$BIN" info $F/sig_flip
refused "1. and convert refuses it" "signature_def" \
	"$BIN" convert $F/sig_flip o/x

# 2. AttrValue.func nested 3,000 deep (50 KB): no stack overflow
refused "2. convert to text: node and attr named" \
	"node 'deep': attr 'f'" "$BIN" convert $F/deep.pb o/x.pbtxt
refused "2. info" "nested too deep" "$BIN" info $F/deep.pb
run "$BIN" -e "assert(ge.load('$F/deep.pb')):op('deep'):attr('f')"
is_rc 1 "2. a script's ge.load gets the error, no crash"
has err "node 'deep'" "2. naming the node"
run "$BIN" -e "local g = assert(ge.load('$F/nested20.pb'))
  local f = g:op('n20'):attr('f'); assert(f.name == 'f')
  assert(g:save('o/n20.pbtxt'))"
is_rc 0 "2. nesting TensorFlow accepts still loads, reads and saves"

# 3. TensorFlow.js weight paths stay inside the model
run "$BIN" convert $F/tfjs_ok/model.json o/ok.pbtxt
is_rc 0 "3. a model.json with its shard beside it converts"
refused "3. '../' out of the model" "leaves the" \
	"$BIN" convert $F/tfjs_escape/model.json o/x.pbtxt
refused "3. '../dev/zero'" "leaves the" \
	"$BIN" convert $F/tfjs_zero/model.json o/x.pbtxt
refused "3. an absolute path" "leaves the" \
	"$BIN" convert $F/tfjs_abs/model.json o/x.pbtxt
refused "3. a symlink leading out" "leads out of the model's directory" \
	"$BIN" convert $F/tfjs_link/model.json o/x.pbtxt
refused "3. one shard listed 3,000 times" "listed twice" \
	"$BIN" convert $F/tfjs_many/model.json o/x.pbtxt
grep -F "root:" o/x.pbtxt >/dev/null 2>&1
ok `test $? -ne 0; echo $?` "3. no byte of /etc/passwd in any output"

# 4. the quadratic index: see t/hostile.c; here through validate
"$BIN" convert $F/small.pb sm4 --format savedmodel >/dev/null 2>&1 &&
	mkdir -p sm4/variables && "$BIN" -e "
  local keys, k = {}, ''
  -- ge.checkpoint.write sorts by name: names each one byte longer
  for i = 1, 300 do k = k .. 'a'; keys[k] = ge.tensor_value('float32', {}, 1) end
  assert(ge.checkpoint.write('sm4/variables/variables', keys))"
ok $? "4. a SavedModel with long shared-prefix keys is written"
run "$BIN" validate sm4
is_rc 0 "4. keys of shared prefixes are fine within bounds"

# 5. a 251-byte Const of shape [1,1,1,5e7] folded: refused by the budget,
# naming the node, in little memory and time
mem() { # mem FILE: peak resident KiB of a /usr/bin/time -v log, or 0
	sed -n 's/.*Maximum resident set size (kbytes): *//p' "$1" | head -1
}
if test -x /usr/bin/time; then
	TIMEV="/usr/bin/time -v -o time.log"
else
	TIMEV=""
fi
: >time.log
$TIMEV "$BIN" run fold_constant_mul $F/expand.pb -o out5.pb >stdout 2>err
rc=$?
test $rc -eq 1
ok $? "5. fold_constant_mul on the [1,1,1,5e7] Const fails (exit 1)"
has err "node 'w'" "5. the message names the node"
has err "memory budget" "5. and the budget"
kb=`mem time.log`
test -z "$TIMEV" || test "${kb:-0}" -lt 262144
ok $? "5. peak memory under 256 MiB (${kb:-?} KiB)"
test ! -e out5.pb
ok $? "5. no output written"
GEREWRITE_MAX_MEMORY=1G "$BIN" --max-memory 16M run fold_constant_mul \
	$F/expand.pb -o out5.pb >stdout 2>err
has err "16 MiB" "5. --max-memory sets the budget, over the environment"

# 6. SavedModel assets: a FIFO is refused (no hang), a symlink to
# /dev/zero is copied as a link, never read
"$BIN" convert $F/small.pb sm6 --format savedmodel >/dev/null 2>&1 &&
	mkdir sm6/assets && mkfifo sm6/assets/fifo
ok $? "6. a SavedModel with a FIFO in assets/"
refused "6. convert refuses the FIFO, naming it" "assets/fifo" \
	"$BIN" convert sm6 o/sm
ls -A | grep -F ".tmp-" >/dev/null
ok `test $? -ne 0; echo $?` "6. no temp folder left"
rm sm6/assets/fifo && ln -s /dev/zero sm6/assets/zero
run "$BIN" convert sm6 sm6copy
is_rc 0 "6. a symlink to /dev/zero in assets/ is copied"
test -L sm6copy/assets/zero && test "`readlink sm6copy/assets/zero`" = /dev/zero
ok $? "6. as a link"
mkfifo sm6/assets/fifo
mkdir -p bin6 && cp -R sm6 bin6/a && cp $F/small.pb bin6/b.pb
run "$BIN" batch remove_device bin6 -o bout6 --report rep6.json --timeout 60
is_rc 1 "6. batch over the FIFO model goes on"
has rep6.json '"status": "failed"' "6. the report is written, the FIFO model failed"
has rep6.json '"ok": 1' "6. the other model done"

# batch limits: a hung worker and a hungry one are reported with the
# reason, the others done, the report written
mkdir -p bl && cp $F/small.pb bl/a.pb && cp $F/expand.pb bl/b.pb &&
	cp $F/small.pb bl/c.pb
cat >hang.lua <<'LUA'
return {name = "hang", description = "loops on the model of 5 ops",
  run = function(g) if #g:ops() == 5 then while true do end end end}
LUA
cat >hog.lua <<'LUA'
return {name = "hog", description = "fills memory on the model of 5 ops",
  run = function(g)
    if #g:ops() == 5 then local t = {} for i = 1, 1e9 do t[i] = i end end
  end}
LUA
run "$BIN" batch hang.lua bl -o blo1 --timeout 1 --report bl1.json
is_rc 1 "batch --timeout: the hung model fails"
has bl1.json "timed out after 1 s" "batch --timeout: the reason is in the report"
has bl1.json '"ok": 2' "batch --timeout: the others are done"
run "$BIN" batch hog.lua bl -o blo2 --max-memory 64M --report bl2.json
is_rc 1 "batch --max-memory: the hungry model fails"
has bl2.json "memory" "batch --max-memory: the reason is in the report"
has bl2.json '"ok": 2' "batch --max-memory: the others are done"

# 8. checkpoints checked: corrupt, empty, missing index, truncated shard
"$BIN" convert $F/small.pb sm8 --format savedmodel >/dev/null 2>&1 &&
	mkdir -p sm8/variables && "$BIN" -e "
  assert(ge.checkpoint.write('sm8/variables/variables',
    {big = ge.tensor_value('float32', {64}, {1}),
     small = ge.tensor_value('float32', {2}, {1, 2})}))"
ok $? "8. a SavedModel with a checkpoint"
run "$BIN" validate sm8
is_rc 0 "8. validate: the good checkpoint passes"
run "$BIN" convert sm8 out8
is_rc 0 "8. convert: the good checkpoint is copied"
cp -R sm8 bad && "$BIN" -e "
  local f = assert(io.open('bad/variables/variables.index', 'r+b'))
  f:seek('set', 3); local c = f:read(1); f:seek('set', 3)
  f:write(string.char(c:byte() ~ 0x10)); f:close()"
run "$BIN" validate bad
is_rc 1 "8. a flipped bit in the index: validate reports it"
has out "checksum" "8. the block checksum"
refused "8. convert refuses it" "variables.index" "$BIN" convert bad o/sm
run "$BIN" convert bad out8b --no-verify
is_rc 0 "8. --no-verify skips the check"
rm -rf bad && cp -R sm8 bad && : >bad/variables/variables.index
run "$BIN" validate bad
is_rc 1 "8. an empty index is reported"
rm -rf bad && cp -R sm8 bad && rm bad/variables/variables.index
run "$BIN" validate bad
is_rc 1 "8. data shards without an index are reported"
has out "without variables.index" "8. so said"
rm -rf bad && cp -R sm8 bad && d=`ls bad/variables/variables.data-*` &&
	"$BIN" -e "local f = assert(io.open('$d', 'rb')); local s = f:read('a')
  f:close(); f = assert(io.open('$d', 'wb')); f:write(s:sub(1, 100)); f:close()"
run "$BIN" validate bad
is_rc 1 "8. a truncated data shard is reported"
has out "tensor 'big'" "8. naming the entry"
refused "8. and convert refuses it" "tensor 'big'" "$BIN" convert bad o/sm

rm -rf bad && cp -R sm8 bad && d=`ls bad/variables/variables.data-*` &&
	rm "$d" && ln -s /etc/passwd "$d"
refused "3/8. a data shard linked out of the SavedModel is never read" \
	"leads out of the model's directory" "$BIN" convert bad o/sm
run "$BIN" -e "assert(assert(ge.load('bad')):checkpoint())"
is_rc 1 "3/8. nor by g:checkpoint()"
has err "leads out" "3/8. which says why"

# 9. truncations name the node where the bytes stop, whatever the format
refused "9. truncated GraphDef" "node[12] 'w'" "$BIN" info $F/trunc_graph.pb
refused "9. truncated MetaGraphDef" "graph_def.node[12] 'w'" \
	"$BIN" info $F/trunc_meta.meta
refused "9. truncated SavedModel" "meta_graphs[0].graph_def.node[12] 'w'" \
	"$BIN" info $F/trunc_sm
refused "9. and by convert" "node[12] 'w'" \
	"$BIN" convert $F/trunc_graph.pb o/x.pb

# 10. the smaller ones
refused "10. attr entry with a bad wire type: info names node and attr" \
	"node 'bw': attr 'T'" "$BIN" info $F/badwire.pb
refused "10. binary convert too" "node 'bw'" \
	"$BIN" convert $F/badwire.pb o/x.pb
refused "10. text convert too" "node 'bw'" \
	"$BIN" convert $F/badwire.pb o/x.pbtxt
refused "10. validate too" "node 'bw'" "$BIN" validate $F/badwire.pb
for f in between.pb between.meta; do
	"$BIN" -e "local g = assert(ge.load('$F/$f'))
	  g:op('a').device = '/cpu:0'; g:op('a').device = ''
	  assert(g:save('rt-$f'))" && cmp $F/$f rt-$f
	ok $? "10. $f: a field between nodes is written back byte for byte"
done
printf 'error({code = 3})\n' >tbl.lua
run "$BIN" tbl.lua
has err "tbl.lua:1: (error object is a table value)" \
	"10. a table error object names the script and line"
refused "10. a 4-byte input is sniffed and refused" "not a TensorFlow model" \
	"$BIN" info $F/four.bin
# a file of a SavedModel given in its place: the message names the
# directory to give (beside saved_model.pb, in variables/, and a relative
# path from inside variables/); a file of no SavedModel says nothing more
mkdir -p $F/sig_ok/variables && cp $F/four.bin $F/sig_ok/fingerprint.pb &&
	cp $F/four.bin $F/sig_ok/variables/variables.index
refused "10. a file beside saved_model.pb names the SavedModel's directory" \
	"fingerprint.pb: not a TensorFlow model (neither a GraphDef, MetaGraphDef nor SavedModel, in binary or text form); $F/sig_ok holds a SavedModel: give that directory to load it" \
	"$BIN" info $F/sig_ok/fingerprint.pb
refused "10. a file in its variables/ names the SavedModel's directory" \
	"; $F/sig_ok holds a SavedModel: give that directory" \
	"$BIN" run fold_constants $F/sig_ok/variables/variables.index -o o/x.pb
(cd $F/sig_ok/variables && "$BIN" convert variables.index ../../../o/x.pb) \
	>stdout 2>err
test $? -eq 2 && test "`wc -l <err`" -eq 1 &&
	grep -F "; .. holds a SavedModel: give that directory" err >/dev/null
ok $? "10. the same from inside variables/: '..'"
"$BIN" info $F/four.bin 2>err
grep -F "holds a SavedModel" err >/dev/null
ok `test $? -ne 0; echo $?` "10. a file of no SavedModel: no such hint"
"$BIN" info $F/sig_flip/saved_model.pb 2>err
grep -F "holds a SavedModel" err >/dev/null
ok `test $? -ne 0; echo $?` "10. a bad saved_model.pb itself: no such hint"
printf 'node { name: "a" op: }\n' >$F/sig_ok/frozen.pbtxt
"$BIN" info $F/sig_ok/frozen.pbtxt 2>err
grep -F "frozen.pbtxt:1:" err >/dev/null && ! grep -F "holds a SavedModel" err >/dev/null
ok $? "10. a model of its own beside it that does not parse: its error alone"

echo "1..$n"
exit $failed

#!/bin/sh
# hostile-mem.sh: peak memory of every command on every crafted model of
# t/hostile-gen.lua (all under 1 MB, one declaring a 200 MB Const, and
# those of round 3: Splits of a million outputs, a chain of 2^21-element
# splats folded, a MatMul and a Conv2D over the work budget), and on
# truncated and bit-flipped copies of a small model: at most 256 MiB plus
# the expanded size of what the command materializes (nothing here but
# the 1,000,000-element Const a recipe expands, 16 MB as Lua values), and
# never over the budget.  Peaks come from wait4(2) (t/hostile --maxrss).
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
RSS=${GE_TOP_BUILDDIR:-.}/t/hostile
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-mem.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"
cd "$T" || exit 1
case "$BIN" in /*) ;; *) BIN=$OLDPWD/$BIN ;; esac
case "$RSS" in /*) ;; *) RSS=$OLDPWD/$RSS ;; esac
case "$SRC" in /*) ;; *) SRC=$OLDPWD/$SRC ;; esac
mkdir fx && "$BIN" "$SRC/t/hostile-gen.lua" fx >/dev/null 2>&1
ok $? "the crafted models"
# a recipe that materializes a tensor: its declared size is known
cat >expand.lua <<'LUA'
return {name = "expand", description = "reads every Const value",
  run = function(g)
    local n = 0
    for _, op in ipairs(g:ops()) do
      if op.type == "Const" then n = n + #op:attr("value"):totable() end
    end
    return {elements = n}
  end}
LUA
"$BIN" -e "
  local F = 'float32'
  local g = ge.graph()
  g:add_op{type = 'Const', name = 'big', attrs = {dtype = F,
           value = ge.tensor_value(F, {1000, 1000}, {1})}}
  assert(g:save('fx/million.pb'))"
# truncated and bit-flipped copies of a small model
"$BIN" -e "
  local f = assert(io.open('fx/trunc_graph.pb', 'rb')); local s = f:read('a'); f:close()
  math.randomseed(7)
  for i = 1, 4 do
    local k = math.random(1, #s)
    local b = s:sub(1, k - 1) .. string.char(s:byte(k) ~ (1 << math.random(0, 7))) .. s:sub(k + 1)
    f = assert(io.open(string.format('fx/flip%02d.pb', i), 'wb')); f:write(b); f:close()
    f = assert(io.open(string.format('fx/cut%02d.pb', i), 'wb'))
    f:write(s:sub(1, math.random(1, #s))); f:close()
  end"
ok $? "flipped and truncated copies"

limit=262144   # KiB: 256 MiB
# Under AddressSanitizer freed memory waits in a quarantine (256 MiB by
# default) before reuse, which a peak would count as the program's: keep
# it small so that what is measured is what the program holds.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
export ASAN_OPTIONS
worst=0 worst_what= over=0 runs=0
measure() { # measure EXTRA_KIB COMMAND...
	extra=$1
	shift
	set -- `"$RSS" --maxrss "$@"` "$@"
	kb=$1
	shift 2
	runs=`expr $runs + 1`
	if test "$kb" -gt "$worst"; then worst=$kb; worst_what="$*"; fi
	if test "$kb" -gt `expr $limit + $extra`; then
		over=`expr $over + 1`
		echo "# $kb KiB: $*"
	fi
}
for m in fx/*.pb fx/*.meta fx/*.bin fx/sig_ok fx/sig_flip fx/trunc_sm \
	 fx/tfjs_*/model.json; do
	measure 0 "$BIN" info "$m"
	measure 0 "$BIN" convert "$m" "$T/o.pbtxt" --format graphdef-text
	measure 0 "$BIN" run fold_constant_mul "$m" -o "$T/f.pb" --format graphdef
	measure 16384 "$BIN" run "$T/expand.lua" "$m" -o "$T/e.pb" --format graphdef
	measure 0 "$BIN" run fold_constants "$m" -o "$T/f.pb" --format graphdef
	measure 0 "$BIN" run add_output_shapes "$m" -o "$T/f.pb" --format graphdef
	rm -rf "$T"/o.pbtxt "$T"/f.pb "$T"/d.dot "$T"/e.pb
done
echo "# $runs runs, the largest peak $worst KiB ($worst_what)"
test $over -eq 0
ok $? "every command on every input under 256 MiB plus what it expands"
# 40 chained adds of 8 MB tensors: each activation's storage goes back,
# or to the next one, as its reader is done (202 MB when aligned_alloc's
# requests grew the heap by one activation per add; 39 MB now)
set -- `"$RSS" --maxrss "$BIN" eval fx/r3_chain.pb --output a40`
test "$2" -eq 0 && test "$1" -lt 98304
ok $? "eval of 40 chained adds of 8 MB tensors: $1 KiB"
set -- `"$RSS" --maxrss "$BIN" run "$T/expand.lua" fx/million.pb -o e.pb`
test "$2" -eq 0 && test "$1" -lt `expr $limit + 16384`
ok $? "a recipe expanding a 1,000,000-element Const: $1 KiB"
set -- `"$RSS" --maxrss "$BIN" --max-memory 8M run "$T/expand.lua" fx/million.pb -o e.pb`
test "$2" -eq 1 && test "$1" -lt 65536
ok $? "over --max-memory 8M it fails, in $1 KiB"

echo "1..$n"
exit $failed

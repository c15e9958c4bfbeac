#!/bin/sh
# hostile-kill.sh: SavedModel saves killed with SIGKILL at random moments
# (case 7 of doc/hostile-input.md).  Two models, A and B, are saved
# in turn over the same destination D; each save is killed after a random
# delay, until at least 50 kills have landed mid-save (a temp directory of
# the save is there afterwards).  Half the delays are drawn from the
# program's start, half from the moment its temp directory appears, so
# that a loaded machine (a save's start varies most) still lands kills in
# every step of the save.
# After every kill D is the complete old or new directory, byte for byte;
# the next save removes what the killed ones left.  Half the runs use the
# fallback without renameat2(RENAME_EXCHANGE).  Then the same for a file
# save: no out.pb.tmp-* survives the next save.
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-kill.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"
cd "$T" || exit 1

"$BIN" "$SRC/t/hostile-gen.lua" . >/dev/null 2>&1 &&
	"$BIN" convert small.pb A --format savedmodel && mkdir A/variables &&
	"$BIN" -e "assert(ge.checkpoint.write('A/variables/variables',
	  {w = ge.tensor_value('float32', {500000}, {1})}))" &&
	"$BIN" -e "local g = assert(ge.load('A'))
	  g:add_op{type = 'NoOp', name = 'extra'}
	  assert(g:save('B'))" &&
	"$BIN" convert A RA && "$BIN" convert B RB
ok $? "two SavedModels with a 2 MB checkpoint, and what saving each gives"
cmp -s RA/saved_model.pb RB/saved_model.pb
ok `test $? -ne 0; echo $?` "their graphs differ"

same() { # same DIR REF: DIR holds exactly REF's files
	test -d "$1" || return 1
	(cd "$1" && find . -type f | LC_ALL=C sort) >l1
	(cd "$2" && find . -type f | LC_ALL=C sort) >l2
	cmp -s l1 l2 || return 1
	while read f; do cmp -s "$1/$f" "$2/$f" || return 1; done <l1
	return 0
}
ms() { date +%s%N | cut -c1-13; }

"$BIN" convert A D
# Each step of a save (a file copied or written, a swap, the fallback's
# renames) pauses 15 ms, so that kills at random moments land at each of
# them whatever the speed of the machine; the kills are drawn from the
# program's start to the end of a save.
GEREWRITE_TEST_SAVE_PAUSE_MS=15
export GEREWRITE_TEST_SAVE_PAUSE_MS
t0=`ms`
for i in 1 2 3; do "$BIN" convert B D; "$BIN" convert A D; done
t1=`ms`
for i in 1 2 3 4 5 6; do "$BIN" -e "" ; done
t2=`ms`
span=`expr \( $t1 - $t0 \) / 6`
start=`expr \( $t2 - $t1 \) / 6`
test "$start" -lt "$span" || start=`expr $span / 2`
# until_temp PID: returns once the save of PID has made its temp directory
# (or PID has ended)
until_temp() {
	while ! ls -d D.tmp-$1-* >/dev/null 2>&1; do
		kill -0 $1 2>/dev/null || return 1
	done
	return 0
}
# the length of a save from its temp directory's appearance to its removal
save=0
for src in B A B A; do
	"$BIN" convert $src D >/dev/null 2>&1 &
	pid=$!
	until_temp $pid
	ta=`ms`
	while ls -d D.tmp-$pid-* >/dev/null 2>&1; do :; done
	save=`expr $save + \`ms\` - $ta`
	wait $pid
done
save=`expr $save / 4`
test "$save" -gt 0 || save=1
awk -v s=$span -v b=$start -v w=$save 'BEGIN { srand(12);
	for (i = 0; i < 1000; i++)
		if (i % 2) printf "t %.3f\n", rand() * w / 1000
		else printf "s %.3f\n", (b + rand() * (s - b)) / 1000 }' >delays

mid=0 kills=0 bad=0 prev=RA
while read from d; do
	kills=`expr $kills + 1`
	if test `expr $kills % 2` -eq 0; then src=A ref=RA; else src=B ref=RB; fi
	if test `expr $kills % 4` -ge 2; then
		GEREWRITE_NO_RENAME_EXCHANGE=1 "$BIN" convert $src D \
			>/dev/null 2>&1 &
	else
		"$BIN" convert $src D >/dev/null 2>&1 &
	fi
	pid=$!
	test $from = s || until_temp $pid
	sleep $d
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	st=$?
	# this save's own temp (its name carries the pid) is there
	if ls -d D.tmp-$pid-* >/dev/null 2>&1 ||
	   ls -d D.old-$pid-* >/dev/null 2>&1; then
		mid=`expr $mid + 1`; test $from = t && tmid=`expr ${tmid:-0} + 1`
	fi
	# D.old-* alone means a fallback save was killed between its renames
	# (this one, or an earlier one whose old directory the next save had
	# not put back yet when it was killed):
	# the next save puts the old directory back; D itself must be whole
	# whenever it is there, and is there but in that one case
	if test -d D; then
		if same D $prev; then :
		elif same D $ref; then prev=$ref
		else bad=`expr $bad + 1`; echo "# kill $kills: D is incomplete"
		fi
	elif ! ls -d D.old-* >/dev/null 2>&1; then
		bad=`expr $bad + 1`; echo "# kill $kills: no D and no old copy"
	fi
	test $st -eq 0 && prev=$ref
	test $mid -ge 50 && break
done <delays
echo "# $kills kills, $mid mid-save; a run takes ${span} ms, the start ${start} ms, the save from its temp ${save} ms; $tmid of the mid-save kills after the temp"
test $mid -ge 50
ok $? "at least 50 kills landed mid-save ($mid of $kills)"
test $bad -eq 0
ok $? "after every kill D was a complete old or new directory"
"$BIN" convert A D
ok $? "the next save succeeds"
same D RA
ok $? "and D is the new one"
test -z "`ls -d D.tmp-* D.old-* 2>/dev/null`"
ok $? "no temp or old directory survives it"

# file saves
unset GEREWRITE_TEST_SAVE_PAUSE_MS
"$BIN" convert small.pb out.pb
left=0
for d in 0.001 0.003 0.005 0.007 0.009 0.011 0.013 0.015 0.02 0.03; do
	"$BIN" convert B/saved_model.pb out.pb >/dev/null 2>&1 &
	pid=$!
	sleep $d
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	ls out.pb.tmp-$pid-* >/dev/null 2>&1 && left=`expr $left + 1`
done
echo "# $left of 10 killed file saves left a temp file"
"$BIN" convert small.pb out.pb
ok $? "a file save after the kills"
ls out.pb.tmp-* >/dev/null 2>&1
ok `test $? -ne 0; echo $?` "no out.pb.tmp-* survives it"

echo "1..$n"
exit $failed

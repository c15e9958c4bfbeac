#!/bin/sh
# batch-cluster.sh: a batch split among the tasks of an array job, on the
# command line: the shard from an engine's variables (said on stderr; by
# default in an array task), inconsistent variables refused by name, each
# task's report in --report-dir, `report merge` giving the report of the
# whole batch run in one process (timings aside), naming a missing
# shard, and the shards stable when a model is added.  The engines'
# tables are tested in t/shard.c; a real Slurm in t/cluster-slurm.sh
# (make check-cluster).
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
SRC=${GE_TOP_SRCDIR:-.}
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-bcluster.XXXXXX"` || exit 1
trap 'rm -rf "$T"' EXIT
. "$SRC/t/testlib.sh"
# none of the engines' variables from the environment the test runs in
for v in `env | sed -n 's/^\(SLURM_[A-Z_]*\|JOB_COMPLETION_INDEX\|AWS_BATCH_[A-Z_]*\|BATCH_TASK_[A-Z_]*\|CLOUD_RUN_[A-Z_]*\|SGE_TASK_[A-Z_]*\|LSB_JOBINDEX[A-Z_]*\|GEREWRITE_SHARD_COUNT\)=.*/\1/p'`; do
	unset $v
done

# twelve models in three directories
for d in a b c; do
	mkdir -p "$T/zoo/$d"
	for i in 1 2 3 4; do
		cp "$SRC/doc/examples/small_cnn.pbtxt" "$T/zoo/$d/m$i.pbtxt"
	done
done
slurm() { # slurm INDEX COUNT CMD...: CMD as task INDEX of --array=0-(COUNT-1)
	i=$1 c=$2
	shift 2
	SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=$c \
	SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=`expr $c - 1` \
	SLURM_ARRAY_TASK_STEP=1 "$@"
}
# a report without its timings: the models' ms and the timings block
untimed() { grep -v '^      "ms": ' "$1" | sed '/^  "timings": /,$d'; }

# ---------------------------------------------------------------- one process
run "$BIN" batch remove_device "$T/zoo" -o "$T/res" --report "$T/single.json"
is_rc 0 "the batch in one process"

# ---------------------------------------------------------------- 4 tasks
rm -rf "$T/res"
all=0
for i in 0 1 2 3; do
	slurm $i 4 "$BIN" batch remove_device "$T/zoo" -o "$T/res" \
		--report-dir "$T/rd" >"$T/so$i" 2>"$T/err$i" || all=1
done
ok $all "four tasks of a Slurm array, no --shard given"
has "$T/err2" "gerewrite: batch: shard 3/4 from Slurm (SLURM_ARRAY_TASK_ID=2" \
	"stderr says the shard and where it came from"
test -f "$T/rd/report-1.json" && test -f "$T/rd/report-4.json" &&
	test `ls "$T/rd" | wc -l` -eq 4
ok $? "each task wrote report-I.json"
has "$T/rd/report-3.json" '"shard": "3/4"' "a report names its shard"

run "$BIN" report merge "$T/rd" -o "$T/all.json"
is_rc 0 "report merge"
has "$T/out" "12 models from 4 reports: 12 done, 0 failed, 0 skipped" \
	"the summary line"
untimed "$T/single.json" >"$T/single.txt"
untimed "$T/all.json" >"$T/all.txt"
cmp "$T/single.txt" "$T/all.txt" >/dev/null
s=$?
ok $s "the merged report is the one-process report, timings aside"
test $s -eq 0 || diff "$T/single.txt" "$T/all.txt" | head -20 | sed 's/^/# /'
has "$T/all.json" '"tasks": [' "the timings keep each task's"
test `grep -c '^      "path": ' "$T/all.json"` -eq 12 &&
	test -z "`grep '^      "path": ' "$T/all.json" | sort | uniq -d`"
ok $? "every model once"
busy=0
for i in 1 2 3 4; do
	grep -q '"path": ' "$T/rd/report-$i.json" && busy=`expr $busy + 1`
done
test $busy -ge 3
ok $? "the models spread over the shards ($busy of 4 have some)"

# the same array again with --resume: every model skipped, each report
# keeps the entries of the run before, so the merge is still the batch's
for i in 0 1 2 3; do
	slurm $i 4 "$BIN" batch remove_device "$T/zoo" -o "$T/res" --resume \
		--report-dir "$T/rd" >"$T/so$i" 2>/dev/null
done
has "$T/so0" "models: 0 done, 0 failed," "resubmitted with --resume, a task runs nothing"
run "$BIN" report merge "$T/rd" -o "$T/again.json"
is_rc 0 "and the reports merge"
untimed "$T/again.json" | cmp - "$T/single.txt" >/dev/null
ok $? "into the one-process report still (the earlier entries kept)"

# ---------------------------------------------------------------- missing
mv "$T/rd/report-3.json" "$T/r3"
run "$BIN" report merge "$T/rd" -o "$T/bad.json"
is_rc 2 "a missing shard is an error"
has "$T/err" "1 of 4 shards did not report (report-3.json)" "it is named"
test ! -f "$T/bad.json"
ok $? "and nothing is written"
mv "$T/r3" "$T/rd/report-3.json"
cp "$T/rd/report-2.json" "$T/rd/report-5.json"
run "$BIN" report merge "$T/rd"
is_rc 2 "a report of another shard under a name is an error"
rm "$T/rd/report-5.json"

# ---------------------------------------------------------------- stable
# the shard of each model, before and after a model is added
shards() { # shards DIR: "path shard" lines
	for i in 1 2 3 4; do
		sed -n "s/^      \"path\": \"\(.*\)\",/\1 $i/p" "$1/report-$i.json"
	done | sort
}
shards "$T/rd" >"$T/before"
cp "$SRC/doc/examples/small_cnn.pbtxt" "$T/zoo/b/added.pbtxt"
for i in 0 1 2 3; do
	slurm $i 4 "$BIN" batch remove_device "$T/zoo" -o "$T/res2" \
		--report-dir "$T/rd2" >/dev/null 2>&1
done
shards "$T/rd2" >"$T/after"
grep -v '^b/added.pbtxt ' "$T/after" | cmp - "$T/before" >/dev/null
ok $? "adding a model moves no other model's shard"
test `wc -l <"$T/after"` -eq 13
ok $? "and the new one is in one shard"
rm "$T/zoo/b/added.pbtxt"

# ---------------------------------------------------------------- resume
for i in 0 1 2 3; do
	slurm $i 4 "$BIN" batch remove_device "$T/zoo" -o "$T/res" --resume \
		--report-dir "$T/rd3" >/dev/null 2>&1
done
run "$BIN" report merge "$T/rd3" -o "$T/all3.json"
is_rc 0 "a resubmission with --resume merges"
has "$T/out" "12 models from 4 reports: 0 done, 0 failed, 12 skipped" \
	"and skipped them all"

# ---------------------------------------------------------------- killed
# a task killed in the middle of its shard (its third model kills the
# batch and fails): the models it ended are in its journal, and the
# resumed task's report has their entries, so that the merge is the one
# of a batch never killed
mkdir -p "$T/recipes"
cat >"$T/recipes/kill_third.lua" <<'E'
return {
  name = "kill_third",
  description = [[Clear the devices; the third model of KILL_COUNT kills the batch.]],
  params = {},
  run = function(g)
    local f = os.getenv("KILL_COUNT")
    if f then
      local h = io.open(f, "a") h:write("x\n") h:close()
      local n = 0
      for _ in io.lines(f) do n = n + 1 end
      if n == 3 then
        local stat = io.open("/proc/self/stat"):read("a")
        os.execute("kill -9 " .. stat:match("%) %a (%d+)"))
        error("killed with the batch")
      end
    end
    for _, op in ipairs(g:ops()) do op.device = "" end
  end,
}
E
GEREWRITE_PATH=$T/recipes "$BIN" batch kill_third "$T/zoo" -o "$T/kres" \
	--report "$T/kone.json" >/dev/null 2>&1
untimed "$T/kone.json" >"$T/kone.txt"
rm -rf "$T/kres"
export GEREWRITE_PATH
GEREWRITE_PATH=$T/recipes
KILL_COUNT=$T/count slurm 0 4 "$BIN" batch kill_third "$T/zoo" -o "$T/kres" \
	--report-dir "$T/krd" >/dev/null 2>&1
test $? -eq 137 && test ! -f "$T/krd/report-1.json" &&
	test -s "$T/krd/.report-1.journal"
ok $? "the first task killed in its third model: no report, a journal"
test `grep -c '"status":"ok"' "$T/krd/.report-1.journal"` -eq 2
ok $? "the journal holds the two models it ended"
for i in 1 2 3; do
	slurm $i 4 "$BIN" batch kill_third "$T/zoo" -o "$T/kres" \
		--report-dir "$T/krd" >/dev/null 2>&1
done
slurm 0 4 "$BIN" batch kill_third "$T/zoo" -o "$T/kres" --report-dir "$T/krd" \
	--resume >"$T/kout" 2>&1
ok $? "the killed task resumed"
has "$T/kout" "5 models: 3 done, 0 failed, 2 skipped" "it ran what was left"
test ! -f "$T/krd/.report-1.journal"
ok $? "its journal is gone once its report is written"
run "$BIN" report merge "$T/krd" -o "$T/kall.json"
is_rc 0 "the reports merge"
untimed "$T/kall.json" >"$T/kall.txt"
cmp "$T/kall.txt" "$T/kone.txt" >/dev/null
s=$?
ok $s "into the report of a batch never killed, timings aside"
test $s -eq 0 || diff "$T/kall.txt" "$T/kone.txt" | head -20 | sed 's/^/# /'
# killed again, without --resume this time: its old report goes first,
# so that the merge does not take it for this run's
KILL_COUNT=$T/count2 slurm 0 4 "$BIN" batch kill_third "$T/zoo" \
	-o "$T/kres2" --report-dir "$T/krd" >/dev/null 2>&1
test $? -eq 137 && test ! -f "$T/krd/report-1.json"
ok $? "a task killed leaves no report of an earlier run"
run "$BIN" report merge "$T/krd" -o "$T/kall2.json"
is_rc 2 "so the merge names its shard missing"
unset GEREWRITE_PATH

# ---------------------------------------------------------------- failures
printf '\377\377\377' >"$T/zoo/c/broken.pb"
for i in 0 1 2 3; do
	slurm $i 4 "$BIN" batch remove_device "$T/zoo" -o "$T/res4" \
		--report-dir "$T/rd4" >/dev/null 2>&1
done
run "$BIN" report merge "$T/rd4" -o "$T/all4.json"
is_rc 1 "a failed model makes the merge exit 1"
has "$T/all4.json" '"failures": [' "the failures are listed"
has "$T/all4.json" '      "c/broken.pb"' "by path"
rm "$T/zoo/c/broken.pb"

# ---------------------------------------------------------------- verify
# the merged summary's verify figures are the one-process run's
"$BIN" batch remove_device "$T/zoo/a" -o "$T/vres" --verify \
	--report "$T/vone.json" >/dev/null 2>&1
rm -rf "$T/vres"
for i in 0 1; do
	slurm $i 2 "$BIN" batch remove_device "$T/zoo/a" -o "$T/vres" --verify \
		--report-dir "$T/vrd" >/dev/null 2>&1
done
run "$BIN" report merge "$T/vrd" -o "$T/vall.json"
is_rc 0 "a batch with --verify merges"
sed -n '/^  "summary": /,/^  }/p' "$T/vall.json" >"$T/vsum"
has "$T/vsum" '"verify": {' "its summary has the verify figures"
has "$T/vsum" '"models": 4,' "of every model"
sed -n '/^  "summary": /,/^  }/p' "$T/vone.json" | cmp - "$T/vsum" >/dev/null
ok $? "the same summary as one process's"

# ---------------------------------------------------------------- engines
SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_MIN=0 \
	run "$BIN" batch remove_device "$T/zoo" -o "$T/o5"
is_rc 2 "an index past the count is a usage error"
has "$T/err" "SLURM_ARRAY_TASK_ID=5" "naming the index"
has "$T/err" "SLURM_ARRAY_TASK_COUNT=4" "and the count"
test ! -d "$T/o5" || test -z "`ls "$T/o5"`"
ok $? "before anything is written"
run "$BIN" batch remove_device "$T/zoo" -o "$T/o6" --shard auto
is_rc 2 "--shard auto outside an array job"
has "$T/err" "no cluster engine's array variables are set" "says so"
JOB_COMPLETION_INDEX=1 run "$BIN" batch remove_device "$T/zoo" -o "$T/o7" \
	--shard auto --shard-count 2 --report "$T/k.json"
is_rc 0 "Kubernetes, with --shard-count"
has "$T/err" "shard 2/2 from Kubernetes (JOB_COMPLETION_INDEX=1)" "stderr"
has "$T/k.json" '"shard": "2/2"' "the report names it"
JOB_COMPLETION_INDEX=1 run "$BIN" batch remove_device "$T/zoo" -o "$T/o8"
is_rc 2 "Kubernetes without a count"
has "$T/err" "--shard-count N or GEREWRITE_SHARD_COUNT=N" "says what is missing"
run "$BIN" batch remove_device "$T/zoo" -o "$T/o10" --shard-count 3
is_rc 2 "--shard-count outside an array job"
run "$BIN" batch remove_device "$T/zoo" -o "$T/o11" --report-dir "$T/rd11"
is_rc 0 "--report-dir without --shard"
test -f "$T/rd11/report-1.json"
ok $? "writes report-1.json"
run "$BIN" report merge "$T/rd11"
is_rc 0 "which merges alone"
has "$T/out" '"total": 12,' "to standard output without -o"
SGE_TASK_ID=2 SGE_TASK_FIRST=1 SGE_TASK_LAST=2 SGE_TASK_STEPSIZE=1 \
	run "$BIN" batch remove_device "$T/zoo" -o "$T/o9" --shard 1/1
is_rc 0 "--shard 1/1 in an array task runs every model"
has "$T/out" "12 models: 12 done" "all of them"

# ---------------------------------------------------------------- cookbook
# the cookbook shows the example files make check-cluster runs, verbatim
block() { # block LINE-PATTERN FENCE: the first FENCE block after the line
	awk -v pat="$1" -v fence="$2" '
		index($0, pat) { seen = 1; next }
		seen && !on && $0 == fence { on = 1; next }
		on && $0 == "```" { exit }
		on' "$SRC/doc/cookbook.md"
}
block 'A Slurm job array, `doc/examples/batch-array.sbatch`' '```sh' >"$T/sb"
cmp "$T/sb" "$SRC/doc/examples/batch-array.sbatch" >/dev/null
ok $? "the cookbook's Slurm array is doc/examples/batch-array.sbatch"
block 'A Kubernetes Indexed Job, `doc/examples/batch-indexed-job.yaml`' \
	'```yaml' >"$T/ym"
cmp "$T/ym" "$SRC/doc/examples/batch-indexed-job.yaml" >/dev/null
ok $? "the cookbook's Indexed Job is doc/examples/batch-indexed-job.yaml"

echo "1..$n"
exit $failed

#!/bin/sh
# cluster-slurm.sh (make check-cluster): the cookbook's Slurm array job
# (doc/examples/batch-array.sbatch) on a real Slurm started on this
# machine.  Installs Debian's slurm-wlm and munge when they are missing
# (as root, or through sudo), makes a munge key, starts munged, slurmctld
# and slurmd on a generated single-node configuration in a temp directory
# (proctrack/pgid, no cgroups, ports of their own), submits the array
# over a directory of models, waits (bounded), merges the reports and
# checks each model was processed exactly once; resubmits with --resume
# (all skipped, the reports still the first run's); kills a task mid-run with scancel and checks its shard
# resumes.  Every daemon it started is stopped on exit, even on failure.
# Skipped (1..0 # SKIP) where Slurm cannot be installed.  The Kubernetes
# Indexed Job example is checked for syntax (python3's yaml when there).
BIN=${GE_TOP_BUILDDIR:-.}/src/gerewrite
SRC=${GE_TOP_SRCDIR:-.}
case $BIN in /*) ;; *) BIN=`pwd`/$BIN ;; esac
case $SRC in /*) ;; *) SRC=`pwd`/$SRC ;; esac
SBATCH_FILE=$SRC/doc/examples/batch-array.sbatch
YAML_FILE=$SRC/doc/examples/batch-indexed-job.yaml
. "$SRC/t/testlib.sh"

skip() { echo "1..0 # SKIP $*"; exit 0; }

# ---------------------------------------------------------------- install
SUDO=
if test "`id -u`" != 0; then
	sudo -n true 2>/dev/null || skip "not root and no sudo: Slurm cannot be installed"
	SUDO="sudo -n"
fi
if ! test -x /usr/sbin/slurmctld || ! test -x /usr/sbin/munged ||
   ! command -v sbatch >/dev/null; then
	command -v apt-get >/dev/null || skip "no apt-get: Slurm cannot be installed"
	echo "# installing slurm-wlm and munge (apt-get)"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends slurm-wlm munge >/tmp/gerewrite-cluster-apt.$$ 2>&1 ||
	{ $SUDO apt-get update -q >/dev/null 2>&1 &&
	  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends slurm-wlm munge >/tmp/gerewrite-cluster-apt.$$ 2>&1; } ||
	{ sed 's/^/# /' /tmp/gerewrite-cluster-apt.$$ | tail -5; rm -f /tmp/gerewrite-cluster-apt.$$;
	  skip "apt-get could not install slurm-wlm and munge"; }
	rm -f /tmp/gerewrite-cluster-apt.$$
fi

W=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-slurm.XXXXXX"` || exit 1
chmod 755 "$W"
# the daemons run as root: their files are root's
stop() {
	for f in slurmd slurmctld munged; do
		test -s "$W/$f.pid" || continue
		pid=`cat "$W/$f.pid"`
		$SUDO kill "$pid" 2>/dev/null
		k=0
		while $SUDO kill -0 "$pid" 2>/dev/null && test $k -lt 50; do
			sleep 0.1; k=`expr $k + 1`
		done
		$SUDO kill -9 "$pid" 2>/dev/null
	done
	$SUDO rm -rf "$W"
}
trap stop EXIT
trap 'exit 1' INT TERM HUP

# ---------------------------------------------------------------- configure
# two free TCP ports
free_port() {
	p=$1
	while ss -ltnH 2>/dev/null | awk '{print $4}' | grep -q ":$p\$"; do
		p=`expr $p + 1`
	done
	echo $p
}
base=`expr 20000 + $$ % 20000`
CTLD_PORT=`free_port $base`
SLURMD_PORT=`free_port \`expr $CTLD_PORT + 1\``
HOST=`hostname -s`
CPUS=`nproc`
mkdir -p "$W/state" "$W/spool" "$W/logs" "$W/munge"
chmod 700 "$W/munge"
cat >"$W/slurm.conf" <<E
ClusterName=gerewrite
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$W/munge/munge.sock
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/slurmctld.pid
SlurmdPidFile=$W/slurmd.pid
SlurmctldLogFile=$W/slurmctld.log
SlurmdLogFile=$W/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
KillWait=2
NodeName=gerewrite-node NodeAddr=127.0.0.1 NodeHostname=$HOST CPUs=$CPUS State=UNKNOWN
PartitionName=batch Nodes=gerewrite-node Default=YES MaxTime=INFINITE State=UP
E
export SLURM_CONF="$W/slurm.conf"
dd if=/dev/urandom of="$W/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$W/munge/munge.key"

# ---------------------------------------------------------------- start
$SUDO /usr/sbin/munged --force --key-file="$W/munge/munge.key" \
	--socket="$W/munge/munge.sock" --pid-file="$W/munged.pid" \
	--log-file="$W/munge/munged.log" --seed-file="$W/munge/munged.seed" \
	>"$W/munged.out" 2>&1
ok $? "munged starts"
$SUDO env SLURM_CONF="$SLURM_CONF" /usr/sbin/slurmctld -c >"$W/ctld.out" 2>&1
ok $? "slurmctld starts"
$SUDO env SLURM_CONF="$SLURM_CONF" /usr/sbin/slurmd -N gerewrite-node \
	>"$W/slurmd.out" 2>&1
ok $? "slurmd starts"
# the node idle, at most 60 s
k=0
until sinfo -h -n gerewrite-node -o %t 2>/dev/null | grep -q '^idle'; do
	k=`expr $k + 1`
	test $k -gt 120 && break
	sleep 0.5
done
test $k -le 120
s=$?
ok $s "the node is idle"
if test $s -ne 0; then
	sinfo 2>&1 | diag
	tail -20 "$W/slurmctld.log" "$W/slurmd.log" "$W/munge/munged.log" 2>&1 | diag
	echo "1..$n"; exit 1
fi

# ---------------------------------------------------------------- models
# the corpus's small GraphDefs when it is there, and copies of the
# example model
C=$GE_CORPUS
mkdir -p "$W/zoo/examples"
for i in 1 2 3 4 5; do
	cp "$SRC/doc/examples/small_cnn.pbtxt" "$W/zoo/examples/cnn$i.pbtxt"
done
if test -f "$C/MANIFEST.tsv"; then
	mkdir -p "$W/zoo/corpus"
	awk -F'\t' '($2 == "GraphDef" || $2 == "GraphDef-text") && $4 < 400000 { print $1 }' \
		"$C/MANIFEST.tsv" | head -12 | while read -r p; do
		cp "$C/$p" "$W/zoo/corpus/`echo "$p" | tr / _`"
	done
fi
NMODELS=`find "$W/zoo" -type f | wc -l`
PATH=`dirname "$BIN"`:$PATH
export PATH

# submit FILE ARGS...: the job's id (sbatch --parsable)
submit() {
	sbatch --parsable --chdir="$W/logs" --output="$W/logs/%x-%A-%a.out" "$@"
}
# wait_job ID SECONDS: until no task of the job is left
wait_job() {
	k=0
	while test -n "`squeue -h -j "$1" -o %i 2>/dev/null`"; do
		k=`expr $k + 1`
		test $k -gt `expr $2 \* 2` && return 1
		sleep 0.5
	done
	return 0
}
merge() { # merge DIR OUT: the merge's status in rc, output in $W/merge.out
	"$BIN" report merge "$1" -o "$2" >"$W/merge.out" 2>"$W/merge.err"
	rc=$?
}
paths() { sed -n 's/^      "path": "\(.*\)",$/\1/p' "$1"; }

# ---------------------------------------------------------------- array
job=`submit "$SBATCH_FILE" remove_device "$W/zoo" "$W/out" 2>"$W/sbatch.err"`
ok $? "sbatch of the cookbook's array job"
wait_job "$job" 120
ok $? "the array's tasks end (at most 120 s)"
test `ls "$W/logs" | grep -c "gerewrite-batch-$job-"` -eq 4
ok $? "four tasks ran"
grep -h 'shard [0-9]/4 from Slurm' "$W/logs"/gerewrite-batch-$job-* |
	sed 's/.*shard \([0-9]\)\/4.*/\1/' | sort | tr '\n' ' ' >"$W/shards"
test "`cat "$W/shards"`" = "1 2 3 4 "
ok $? "each task took its shard from Slurm (`cat "$W/shards"`)"
merge "$W/out.reports" "$W/all.json"
test $rc -eq 0
ok $? "the reports merge (exit 0)"
test $rc -eq 0 || { diag "$W/merge.err"; cat "$W/logs"/* | diag; }
has "$W/merge.out" "$NMODELS models from 4 reports: $NMODELS done, 0 failed" \
	"every model done"
test "`paths "$W/all.json" | sort -u | wc -l`" -eq "$NMODELS" &&
	test -z "`paths "$W/all.json" | sort | uniq -d`"
ok $? "each of the $NMODELS models processed exactly once"

# ---------------------------------------------------------------- resume
job=`submit "$SBATCH_FILE" remove_device "$W/zoo" "$W/out" 2>"$W/sbatch.err"`
wait_job "$job" 120
ok $? "the resubmission ends"
test "`grep -h ' models*: 0 done, 0 failed, ' "$W/logs"/gerewrite-batch-$job-* | wc -l`" -eq 4
ok $? "with --resume its tasks skip every model"
merge "$W/out.reports" "$W/all2.json"
has "$W/merge.out" "$NMODELS models from 4 reports: $NMODELS done, 0 failed, 0 skipped" \
	"and their reports keep the first run's entries"

# ---------------------------------------------------------------- killed
# a recipe slow enough to be killed in the middle of a shard
mkdir -p "$W/recipes"
cat >"$W/recipes/slow_remove_device.lua" <<'E'
return {
  name = "slow_remove_device",
  description = [[Clear every op's device, slowly (a test of kills).]],
  params = {},
  run = function(g)
    os.execute("sleep 1")
    for _, op in ipairs(g:ops()) do op.device = "" end
  end,
}
E
GEREWRITE_PATH=$W/recipes
export GEREWRITE_PATH
job=`submit --array=0-1 "$SBATCH_FILE" slow_remove_device "$W/zoo" "$W/slow" \
	2>"$W/sbatch.err"`
# task 0 has written some of its models, not all: kill it
k=0
until test -n "`ls "$W/slow" 2>/dev/null`" || test $k -gt 120; do
	k=`expr $k + 1`; sleep 0.5
done
sleep 1
scancel "${job}_0"
wait_job "$job" 120
ok $? "task 0 killed with scancel, task 1 ends"
test ! -f "$W/slow.reports/report-1.json" && test -f "$W/slow.reports/report-2.json"
ok $? "the killed task wrote no report, the other did"
merge "$W/slow.reports" "$W/slow.json"
test $rc -eq 2 && grep -q 'report-1.json' "$W/merge.err"
ok $? "merge names the missing shard (exit 2)"
done0=`find "$W/slow" -type f ! -name '*.tmp-*' | wc -l`
for f in `find "$W/slow" -type f ! -name '*.tmp-*'`; do
	"$BIN" info "$f" >/dev/null 2>&1 || echo "$f" >>"$W/broken"
done
test ! -s "$W/broken"
ok $? "the outputs there ($done0) are whole"
# the same array again: the shard that was done skips all, the killed
# one does the rest
job=`submit --array=0-1 "$SBATCH_FILE" slow_remove_device "$W/zoo" "$W/slow" \
	2>"$W/sbatch.err"`
wait_job "$job" 120
ok $? "the array resubmitted"
merge "$W/slow.reports" "$W/slow.json"
test $rc -eq 0
ok $? "now the reports merge"
test "`paths "$W/slow.json" | sort -u | wc -l`" -eq "$NMODELS" &&
	test -z "`paths "$W/slow.json" | sort | uniq -d`"
ok $? "every model once"
test "`find "$W/slow" -type f ! -name '*.tmp-*' | wc -l`" -eq "$NMODELS"
ok $? "every output written"

# ---------------------------------------------------------------- kubernetes
if python3 -c 'import yaml' 2>/dev/null; then
	python3 - "$YAML_FILE" <<'E'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
s = d["spec"]
c = s["template"]["spec"]["containers"][0]
env = {e["name"]: e["value"] for e in c["env"]}
assert d["kind"] == "Job" and s["completionMode"] == "Indexed"
assert int(env["GEREWRITE_SHARD_COUNT"]) == s["completions"]
assert c["command"][:2] == ["gerewrite", "batch"] and "--report-dir" in c["command"]
E
	ok $? "the Kubernetes Indexed Job parses, its count is its completions"
else
	n=`expr $n + 1`
	echo "ok $n # SKIP no python3 yaml to parse the Kubernetes example"
fi

echo "1..$n"
exit $failed

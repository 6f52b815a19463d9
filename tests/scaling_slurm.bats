#!/usr/bin/env bats
# docs/scaling.md's Slurm recipe, for real: a one-node cluster started by
# the test (tests/tools/slurm-cluster: munged, slurmctld and slurmd run
# directly, a private slurm.conf, ports and state in a temporary directory),
# the page's block extracted and run unchanged (a job array over
# --list-jobs, the merge with --dependency=afterany).  The outputs equal a
# one-machine etlkit-run's byte for byte; one array task cancelled (scancel
# JOB_INDEX) makes the night partial (the merge job exits 1, the job is
# reported); the block run again completes the night from the cache.  The
# cluster is stopped in teardown_file, which runs even when a test fails.
#
# Needs root, slurm-wlm and munge: outside CI it skips without them, with
# the reason; under CI (ETLKIT_CI=1, .ci/run) it never skips, and a cluster
# that does not start fails with the daemons' log tails.  Under the ASan
# pass it skips (the tools it runs are the ones the normal pass tested, and
# the cluster would add its minute again).
load helpers
load scaling_helpers

CLUSTER_TOOL="$BATS_TEST_DIRNAME/tools/slurm-cluster"

# why this machine cannot run the cluster, or nothing
cannot_run() {
	local c
	[ "$(id -u)" -eq 0 ] || { echo "not root (the Slurm daemons run as root)"; return; }
	for c in munged slurmctld slurmd sbatch scancel scontrol sinfo; do
		command -v "$c" >/dev/null || { echo "$c is not installed (make deps: slurm-wlm munge)"; return; }
	done
}

setup_file() {
	local F=$BATS_FILE_TMPDIR why
	[ -n "$CORPUS" ] || return 0
	why=$(cannot_run)
	if asan; then
		why="the ASan pass: the cluster runs the tools the normal pass already ran"
	fi
	if [ -n "$why" ]; then
		echo "$why" >"$F/skip"
		return 0
	fi
	scaling_night "$F"
	scaling_reference "$F"
	# a short path: munge's socket path must fit a sockaddr_un
	mktemp -d /tmp/etlkit-slurm.XXXXXX >"$F/cluster-dir"
	if ! "$CLUSTER_TOOL" start "$(cat "$F/cluster-dir")" >"$F/cluster-env" 2>"$F/cluster-err"; then
		echo "the Slurm cluster did not start" >"$F/broken"
	fi
}

teardown_file() {
	local F=$BATS_FILE_TMPDIR d
	[ -s "$F/cluster-dir" ] || return 0
	d=$(cat "$F/cluster-dir")
	"$CLUSTER_TOOL" stop "$d"
	case $d in /tmp/etlkit-slurm.*) rm -rf "$d" ;; esac
}

local_setup() {
	local F=$BATS_FILE_TMPDIR
	if [ -s "$F/skip" ]; then
		if [ -n "${ETLKIT_CI:-}" ] && ! asan; then fail "under CI this never skips: $(cat "$F/skip")"; fi
		skip "$(cat "$F/skip")"
	fi
	if [ -s "$F/broken" ]; then
		fail "$(cat "$F/broken"): $(cat "$F/cluster-err")"
	fi
	export SLURM_CONF
	SLURM_CONF=$(sed -n 's/^SLURM_CONF=//p' "$F/cluster-env")
	[ -s "$SLURM_CONF" ] || fail "no slurm.conf from slurm-cluster"
}

REF() { echo "$BATS_FILE_TMPDIR/ref/out"; }

# wait_job ID: waits (at most 3 minutes) until job ID has ended; prints its state and exit code
wait_job() {
	local i s
	for i in $(seq 1 1800); do
		s=$(scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*\|ExitCode=[0-9:]*' | tr '\n' ' ')
		case $s in *PENDING*|*RUNNING*|*CONFIGURING*|*COMPLETING*|"") sleep 0.1 ;; *) echo "$s"; return 0 ;; esac
	done
	echo "job $1 did not end in 3 minutes: $s" >&2
	"$CLUSTER_TOOL" logs "$(dirname "$SLURM_CONF")" >&2
	return 1
}

# submit: runs the page's block unchanged in the night's directory; sets
# ARRAY (the array job: the block's $jid) and MERGE (the merge job)
submit() {
	{ cat "$T/slurm.sh"; echo 'echo "array=$jid"'; } | bash >"$T/submitted" 2>&1 ||
		fail "the page's slurm block failed: $(cat "$T/submitted")"
	ARRAY=$(sed -n 's/^array=//p' "$T/submitted")
	MERGE=$(grep -x '[0-9]*' "$T/submitted" | tail -1)
	[ -n "$ARRAY" ] && [ -n "$MERGE" ] && [ "$ARRAY" != "$MERGE" ] || fail "submitted: $(cat "$T/submitted")"
}

# the merge job's standard error (Slurm's slurm-JOBID.out in the night's directory)
merge_log() { cat "$T/n/slurm-$MERGE.out"; }

@test "scaling slurm: the page's recipe (job array, afterany merge) on a real cluster gives the one-machine outputs" {
	require_corpus
	doc_path
	night_in "$T/n"
	cd "$T/n"
	doc_block slurm >"$T/slurm.sh"
	submit
	st=$(wait_job "$MERGE")
	[[ "$st" == *"JobState=COMPLETED"*"ExitCode=0:0"* ]] || fail "merge job: $st: $(merge_log)"
	# every array task ran a job of the list: 8 tasks, 8 records
	[ "$(ls slurm-"$ARRAY"_*.out | wc -l)" -eq 8 ]
	[ "$(ls cache/*.rec | wc -l)" -eq 8 ]
	[[ "$(summary_of <(merge_log))" == *"8 trace jobs: 0 converted, 8 reused, 0 skipped, 0 failed,"* ]] ||
	    fail "$(merge_log)"
	same_outputs "$(REF)" "$T/n/out"
}

@test "scaling slurm: one array task cancelled makes the night partial; the recipe again completes it from the cache" {
	require_corpus
	local last
	doc_path
	night_in "$T/n"
	cd "$T/n"
	doc_block slurm >"$T/slurm.sh"
	last=$(etlkit-run --list-jobs nightly.yaml | tail -1)
	# the partition is taken down for the submission (the page's block runs
	# unchanged): no task can start, so the last index is cancelled while
	# waiting whatever the machine's speed; then the partition comes back
	part=$(scontrol show partition -o | sed -n '1s/^PartitionName=\([^ ]*\).*/\1/p')
	[ -n "$part" ] || fail "no partition: $(scontrol show partition -o)"
	scontrol update PartitionName="$part" State=DOWN || fail "partition $part not taken down"
	submit
	[[ "$(scontrol show job "$ARRAY")" == *"JobState=PENDING"* ]] || fail "not waiting: $(scontrol show job "$ARRAY")"
	scancel "${ARRAY}_8"
	scontrol update PartitionName="$part" State=UP || fail "partition $part not brought back"
	st=$(wait_job "$MERGE")
	[[ "$st" == *"ExitCode=1:0"* ]] || fail "merge job: $st: $(merge_log)"
	[[ "$(merge_log)" == *"1 not in the cache"* ]] || fail "$(merge_log)"
	[ "$(awk -F'\t' 'NR > 1 && $5 == "failed" { print $2 "\t" $3 }' out/run-report.tsv)" = "$(cut -f6,4 <<<"$last" |
	    awk -F'\t' '{ print $2 "\t" $1 }')" ] || fail "report: $(cat out/run-report.tsv)"
	[ "$(etlkit-run --list-jobs --todo nightly.yaml | cut -f1)" = 8 ]
	# the same block again: the converted jobs are reused, the cancelled one converted
	submit
	st=$(wait_job "$MERGE")
	[[ "$st" == *"JobState=COMPLETED"*"ExitCode=0:0"* ]] || fail "merge job: $st: $(merge_log)"
	[[ "$(summary_of <(merge_log))" == *"8 trace jobs: 0 converted, 8 reused, 0 skipped, 0 failed,"* ]] ||
	    fail "$(merge_log)"
	same_outputs "$(REF)" "$T/n/out"
}

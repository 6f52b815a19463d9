#!/usr/bin/env bats
# docs/scaling.md's GNU parallel recipe, for real: Debian's parallel with
# -S : (this machine as the ssh login) and two job slots standing for
# nodes, the page's block extracted and run unchanged.  The outputs equal
# a one-machine etlkit-run's byte for byte; a job killed (SIGKILL) as it starts
# leaves a partial night (merge exit 1, the job reported); the same block
# run again converts only that job and completes the night from the cache.
load helpers
load scaling_helpers

setup_file() {
	[ -n "$CORPUS" ] || return 0
	scaling_night "$BATS_FILE_TMPDIR"
	scaling_reference "$BATS_FILE_TMPDIR"
}

local_setup() {
	if ! command -v parallel >/dev/null; then
		[ -z "${ETLKIT_CI:-}" ] || fail "GNU parallel is missing (make deps installs it)"
		skip "GNU parallel is not installed (Debian: apt-get install parallel, or make deps)"
	fi
}

REF() { echo "$BATS_FILE_TMPDIR/ref/out"; }

# kill_job KEY: etlkit-run on PATH replaced by a script that SIGKILLs the
# process of job KEY as it starts (the other jobs run the real one), so the
# same job dies on every machine whatever its speed (a watcher polling for
# the process could miss a fast conversion); restore_path undoes it
kill_job() {
	rm -f "$T/path/etlkit-run"
	printf '#!/bin/sh\ncase " $* " in *" --run-job %s "*) kill -KILL $$ ;; esac\nexec "%s" "$@"\n' \
	    "$1" "$ETLKIT_BIN/etlkit-run" >"$T/path/etlkit-run"
	chmod +x "$T/path/etlkit-run"
}
restore_path() { ln -sf "$ETLKIT_BIN/etlkit-run" "$T/path/etlkit-run"; }

@test "scaling parallel: the page's recipe with GNU parallel (-S :, 2 slots) gives the one-machine outputs" {
	require_corpus
	doc_path
	night_in "$T/n"
	cd "$T/n"
	doc_block parallel >"$T/parallel.sh"
	NODES=: run bash "$T/parallel.sh"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	[[ "$(summary_of <(echo "$output"))" == *"8 trace jobs: 0 converted, 8 reused, 0 skipped, 0 failed,"* ]] ||
	    fail "$output"
	same_outputs "$(REF)" "$T/n/out"
	# the jobs ran in parallel's children, one conversion each: every record is in the cache
	[ "$(ls cache/*.rec | wc -l)" -eq 8 ]
}

@test "scaling parallel: a killed job gives a partial night; the recipe run again completes it from the cache" {
	require_corpus
	local key
	doc_path
	night_in "$T/n"
	cd "$T/n"
	doc_block parallel >"$T/parallel.sh"
	# net452's cpu job: the longest conversion of the night
	key=$(etlkit-run --list-jobs nightly.yaml | awk -F'\t' '$4 == "cpu" && $6 ~ /net452/ { print $2 }')
	[ -n "$key" ]
	kill_job "$key"
	NODES=: run bash "$T/parallel.sh"
	restore_path
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[[ "$output" == *"1 not in the cache"* ]] || fail "$output"
	[[ "$output" == *"FAILED $T/n/traces/net452.etl.zip (scenario 'night net452', step cpu): not converted yet (--merge-only)"* ]] ||
	    fail "$output"
	# the night is partial: the report says which job, the other traces are aggregated
	[ "$(awk -F'\t' 'NR > 1 && $5 == "failed" { print $2 "|" $3 }' out/run-report.tsv)" = "$T/n/traces/net452.etl.zip|cpu" ]
	cmp "$(REF)/kernel.folded" out/kernel.folded
	[ "$(grep -c '^night net452;' out/cpu.folded)" -eq 0 ]
	# the same block again: one job left to do, converted; the night complete
	[ "$(etlkit-run --list-jobs --todo nightly.yaml | cut -f2)" = "$key" ]
	NODES=: run bash "$T/parallel.sh"
	[ "$status" -eq 0 ] || fail "rerun: status $status: $output"
	[[ "$(summary_of <(echo "$output"))" == *"8 trace jobs: 0 converted, 8 reused, 0 skipped, 0 failed,"* ]] ||
	    fail "$output"
	same_outputs "$(REF)" "$T/n/out"
}

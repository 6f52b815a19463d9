#!/usr/bin/env bats
# etlkit-run and etl2evt's threads: with jobs side by side (-j 2 and more
# than one trace to convert) each etl2evt it starts reads and decodes on
# one thread (--threads=1), so N jobs take N cores, not 2N threads.  The
# flag is not in the cache key: a run one job at a time makes the same
# keys and the same results, and either run reuses the other's cache.
# What etl2evt was given is seen by a wrapper that logs its arguments:
# etlkit-run finds its tools next to itself, so it runs from a copy in a
# directory of its own, beside the wrapper and links to the other tools.
load helpers

local_setup() {
	mkdir -p "$T/bin" "$T/traces"
	cp "$ETLKIT_BIN/etlkit-run" "$T/bin/"
	ln -s "$ETLKIT_BIN/stackfold" "$ETLKIT_BIN/evtfilter" "$T/bin/"
	cat >"$T/bin/etl2evt" <<-EOF
	#!/bin/sh
	# each conversion's arguments to the log (not the --version etlkit-run asks for the key)
	[ "\$1" = --version ] || printf '%s\n' "\$*" >>"$T/etl2evt.log"
	exec "$ETLKIT_BIN/etl2evt" "\$@"
	EOF
	chmod +x "$T/bin/etl2evt"
	: >"$T/etl2evt.log"
	for i in 1 2 3; do
		etlgen --seed "$i" -o "$T/traces/t$i.etl" "$BATS_TEST_DIRNAME/scenarios/kinds.yaml" 2>/dev/null
	done
	pipeline c1 o1 >"$T/p1.yaml"
	pipeline c2 o2 >"$T/p2.yaml"
}

# pipeline CACHE OUT: CPU stacks of the traces, folded per trace
pipeline() {
	cat <<-EOF
	etlkit: 1
	cache: $1
	output: $2
	scenarios:
	  - files: traces/t*.etl
	    name: "\$1"
	steps:
	  cpu:
	    etl2evt: [-k, Sample]
	    stackfold: [--roots=comm]
	outputs:
	  - folded: cpu.folded
	    from: cpu
	EOF
}

# actions OUT ACTION: how many jobs of the run that wrote OUT had ACTION
actions() { awk -F'\t' -v a="$2" 'NR > 1 && $4 == a' "$T/$1/run-report.tsv" | wc -l; }

# keys CACHE: the cache's keys, one a line, sorted
keys() { (cd "$T/$1" && ls -- *.rec | sed 's/\.rec$//' | sort); }

@test "etlkit-run -j 2: each etl2evt runs with --threads=1, the cache keys and results as with -j 1" {
	# side by side: three conversions, each etl2evt on one thread, and the record says so
	"$T/bin/etlkit-run" -q -j 2 "$T/p2.yaml"
	[ "$(actions o2 converted)" -eq 3 ] || fail "converted: $(cat "$T/o2/run-report.tsv")"
	[ "$(wc -l <"$T/etl2evt.log")" -eq 3 ] || fail "etl2evt runs: $(cat "$T/etl2evt.log")"
	awk '$1 != "--threads=1" { print "without --threads=1: " $0; bad = 1 } END { exit bad }' "$T/etl2evt.log"
	[ "$(grep -l -- '--threads=1' "$T"/c2/*.rec | wc -l)" -eq 3 ] || fail "records without the flag"
	# one at a time: no flag, the same three keys, the same results and output
	: >"$T/etl2evt.log"
	"$T/bin/etlkit-run" -q -j 1 "$T/p1.yaml"
	[ "$(actions o1 converted)" -eq 3 ]
	[ "$(wc -l <"$T/etl2evt.log")" -eq 3 ]
	! grep -- '--threads' "$T/etl2evt.log" || fail "-j 1 passed a thread count"
	[ "$(keys c1 | wc -l)" -eq 3 ]
	textdiff <(keys c1) <(keys c2) || fail "keys differ"
	for k in $(keys c1); do
		cmp <(gzip -dc "$T/c1/$k.out.gz") <(gzip -dc "$T/c2/$k.out.gz") || fail "result $k differs"
	done
	cmp "$T/o1/cpu.folded" "$T/o2/cpu.folded"
	[ -s "$T/o1/cpu.folded" ]
	# each run reuses the other's cache: nothing converted again
	: >"$T/etl2evt.log"
	"$T/bin/etlkit-run" -q -j 2 "$T/p1.yaml"
	"$T/bin/etlkit-run" -q -j 1 "$T/p2.yaml"
	[ "$(actions o1 reused)" -eq 3 ] && [ "$(actions o2 reused)" -eq 3 ] ||
	    fail "not all reused: $(cat "$T/o1/run-report.tsv" "$T/o2/run-report.tsv")"
	[ ! -s "$T/etl2evt.log" ] || fail "converted again: $(cat "$T/etl2evt.log")"
}

@test "etlkit-run -j 2 with one trace to convert: etl2evt keeps its threads" {
	"$T/bin/etlkit-run" -q -j 2 "$T/p1.yaml"
	etlgen --seed 4 -o "$T/traces/t4.etl" "$BATS_TEST_DIRNAME/scenarios/kinds.yaml" 2>/dev/null
	: >"$T/etl2evt.log"
	"$T/bin/etlkit-run" -q -j 2 "$T/p1.yaml"
	[ "$(actions o1 converted)" -eq 1 ] && [ "$(actions o1 reused)" -eq 3 ]
	[ "$(wc -l <"$T/etl2evt.log")" -eq 1 ] || fail "etl2evt runs: $(cat "$T/etl2evt.log")"
	! grep -- '--threads' "$T/etl2evt.log" || fail "a job alone got --threads=1"
}

@test "etlkit-run pinned to one CPU (taskset): one conversion at a time by default, etl2evt keeps its default" {
	command -v taskset >/dev/null || skip "no taskset"
	taskset -c 0 "$T/bin/etlkit-run" -q "$T/p1.yaml"
	[ "$(actions o1 converted)" -eq 3 ] || fail "converted: $(cat "$T/o1/run-report.tsv")"
	[ "$(wc -l <"$T/etl2evt.log")" -eq 3 ] || fail "etl2evt runs: $(cat "$T/etl2evt.log")"
	! grep -- '--threads' "$T/etl2evt.log" || fail "one CPU, yet jobs side by side"
	# on two CPUs, the default is two at a time, each etl2evt on one thread
	[ "$(nproc)" -ge 2 ] || return 0
	: >"$T/etl2evt.log"
	taskset -c 0,1 "$T/bin/etlkit-run" -q "$T/p2.yaml"
	[ "$(grep -c -- '--threads=1' "$T/etl2evt.log")" -eq 3 ] || fail "two CPUs: $(cat "$T/etl2evt.log")"
}

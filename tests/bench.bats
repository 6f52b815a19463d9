#!/usr/bin/env bats
# make bench's mechanics (tests/bench.sh, tests/bench/sidebyside.py), not
# its numbers: nothing here is timed against a limit.  The base is a fake
# one (BENCH_BASE_BIN): the tools of this build, except an etl2evt that
# decodes its input three times, so the base's CPU is known to be about 3x
# the new build's and the ratio's direction can be checked.  BENCH_QUICK,
# one run per build, one cheap row per tool, no other benchmarks.
load helpers

# One bench run for the tests below (each checks one claim of it): the base
# and the cache in BATS_FILE_TMPDIR, the output in $F/out.
setup_file() {
	F="$BATS_FILE_TMPDIR"
	mkdir -p "$F/base" "$F/cache"
	local t
	for t in "$ETLKIT_BIN"/*; do ln -s "$t" "$F/base/$(basename "$t")"; done
	rm "$F/base/etl2evt"
	# three decodes, the last one's output kept (etlgen inputs are made with it too)
	printf '#!/bin/sh\n"%s" "$@" >/dev/null 2>&1\n"%s" "$@" >/dev/null 2>&1\nexec "%s" "$@"\n' \
	    "$ETLKIT_BIN/etl2evt" "$ETLKIT_BIN/etl2evt" "$ETLKIT_BIN/etl2evt" >"$F/base/etl2evt"
	chmod +x "$F/base/etl2evt"
	[ -z "$CORPUS" ] && return 0
	BENCH_BASE_BIN="$F/base" BENCH_CACHE="$F/cache" BENCH_QUICK=1 BENCH_RUNS=1 BENCH_OTHER=0 BENCH_MIN_SAMPLE=0.02 \
	    ETLKIT_SHARED="${ETLKIT_SHARED:-$ROOT/../shared}" \
	    BENCH_ONLY='net.4.5.2.x64 -k Sample|render flame gen_folded 8M|^diff gen_folded|^stackfold|render flame, x2|render dpcisr, incident x1 ' \
	    "$ROOT/tests/bench.sh" >"$F/out" 2>"$F/err" || true
}

local_setup() { F="$BATS_FILE_TMPDIR"; }

# row LABEL: the table row whose input column starts with LABEL
row() { grep -E "^$1" "$F/out" | head -1; }

@test "bench: a table per tool, base against new, ratios, floor, summary; QUICK said" {
	require_corpus
	[ -s "$F/out" ] || { cat "$F/err"; false; }
	for tool in etl2evt render diff stackfold end-to-end "dpc reports"; do
		grep -qx "== $tool" "$F/out" || fail "no table for $tool"
	done
	grep -q 'QUICK' "$F/out"
	grep -q '^== summary' "$F/out"
	[ "$(grep -cE '^[a-z0-9 -]{12} .*cpu [0-9.]+x.* wall [0-9.]+x' "$F/out")" -eq 6 ]
	# every row: base and new ran (no "exited"), numbers in every column
	! grep -q 'exited' "$F/out"
	[ "$(grep -cE ' [0-9.]+x +[0-9.]+ +[0-9.]+ +[0-9.]+x +[0-9.]+ MB +[0-9.]+ MB +[0-9.]+s +[0-9]+$' "$F/out")" -eq 6 ]
}

@test "bench: ratio = base time / new time (the base decodes 3 times: about 3x)" {
	require_corpus
	r=$(row 'net.4.5.2.x64 -k Sample')
	[ -n "$r" ]
	echo "$r" | awk '{
		bcpu = $(NF-11); ncpu = $(NF-10); x = $(NF-9); sub(/x$/, "", x)
		if (bcpu / ncpu < 1.5) { print "base cpu " bcpu " not above new " ncpu; exit 1 }
		# the printed ratio is the one the printed times give
		d = bcpu / ncpu - x; if (d < 0) d = -d
		if (d > 0.05 * x + 0.02) { print "ratio " x " but " bcpu "/" ncpu; exit 1 } }'
}

@test "bench: peak RSS is the tool's (time -f %M), a pipeline's the sum of its three" {
	require_corpus
	net="$F/cache/bench/inputs/net.4.5.2.x64.etl"
	etl=$(ls "$F"/cache/bench/inputs/incident-x2-*.etl)
	/usr/bin/time -f %M -o "$T/m0" "$ETLKIT_BIN/etl2evt" -k Sample -o /dev/null "$net"
	/usr/bin/time -f %M -o "$T/m1" "$ETLKIT_BIN/etl2evt" "$etl" 2>/dev/null |
	    /usr/bin/time -f %M -o "$T/m2" "$ETLKIT_BIN/stackfold" 2>/dev/null |
	    /usr/bin/time -f %M -o "$T/m3" "$ETLKIT_BIN/render" flame >/dev/null 2>&1
	one=$(tail -1 "$T/m0")
	sum=$(cat "$T/m1" "$T/m2" "$T/m3" | grep -E '^[0-9]+$' | awk '{ s += $1 } END { print s }')
	within() {	# ROW_LABEL KB: the new RSS column within 25% of KB
		row "$1" | awk -v kb="$2" '{ mb = $(NF-3); if (mb * 1024 < kb * 0.75 || mb * 1024 > kb * 1.25) {
			print "RSS " mb " MB, measured apart " kb " kB"; exit 1 } }'
	}
	within 'net.4.5.2.x64 -k Sample' "$one"
	within 'etl2evt\|stackfold\|render flame' "$sum"
	grep -q 'largest single process peak' "$F/out"
}

@test "bench: a BASE that is no commit stops with exit 2 and says why" {
	run env BASE=no-such-revision-xyz BENCH_CACHE="$T/cache" BENCH_OTHER=0 "$ROOT/tests/bench.sh"
	[ "$status" -eq 2 ]
	[[ "$output" == *"BASE=no-such-revision-xyz: not a commit"* ]]
	[ ! -e "$T/cache/bench-base-no-such-revision-xyz" ]
}

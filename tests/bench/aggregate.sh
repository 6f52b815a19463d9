#!/usr/bin/env bash
# Benchmark: aggregate over 4 scenarios of gen_folded.py stacks (25 MB each
# by default), with and without the scenario frame and the by-name table,
# the merge of two partial aggregates, and etlkit-run over the corpus's
# ETL traces (first run converts all, second run reuses all).
# Prints MB/s of folded input and seconds per run.
# Env: ETLKIT_BIN, ETLKIT_SHARED, BENCH_TMP (see tests/bench.sh);
#      AGG_BENCH_SIZE (per scenario, default 25M).
set -eu
bin=${ETLKIT_BIN:?}
. "$(dirname "$0")/common.bash"
tmp=${BENCH_TMP:-/tmp/etlkit-bench}/aggregate
size=${AGG_BENCH_SIZE:-25M}
mkdir -p "$tmp"
files=()
for seed in 1 2 3 4; do
	f="$tmp/night-$size-$seed.folded"
	folded_input "$f" "$size" "$seed"
	files+=("$f")
done
mb=$(cat "${files[@]}" | wc -c | awk '{ printf "%d", $1 / 1000000 }')

report() {
	awk -v n="$1" -v t="$2" -v mb="${3:-$mb}" \
	    'BEGIN { printf "%-34s %6d MB in %6.3f s  %8.0f MB/s\n", n, mb, t, mb / t }'
}

report "aggregate (scenario frame)" "$(best_wall "$bin/aggregate" -o /dev/null "${files[@]}")"
report "aggregate -S (summed)" "$(best_wall "$bin/aggregate" -S -o /dev/null "${files[@]}")"
report "aggregate + by-name table" "$(best_wall "$bin/aggregate" -o /dev/null -b /dev/null "${files[@]}")"
"$bin/aggregate" -o "$tmp/p1" "${files[0]}" "${files[1]}"
"$bin/aggregate" -o "$tmp/p2" "${files[2]}" "${files[3]}"
pmb=$(cat "$tmp/p1" "$tmp/p2" | wc -c | awk '{ printf "%d", $1 / 1000000 }')
report "aggregate -M (2 partials)" "$(best_wall "$bin/aggregate" -M -o /dev/null "$tmp/p1" "$tmp/p2")" "$pmb"
echo "distinct (scenario, stack) lines: $(wc -l <"$tmp/p1") + $(wc -l <"$tmp/p2")"

# etlkit-run over the corpus ETL traces: conversion in parallel, then a fully cached run
corpus=$ETLKIT_CORPUS
if [ -d "$corpus" ]; then
	w=$tmp/run
	rm -rf "$w"
	mkdir -p "$w/traces"
	for f in "$corpus"/*/*.etl "$corpus"/*/*.etl.zip; do ln -s "$f" "$w/traces/$(basename "$f")"; done
	printf 'etlkit: 1\nscenarios:\n  - files: traces/*.etl*\nsteps:\n  cpu:\n    stackfold: [--roots=comm]\noutputs:\n  - folded: cpu.folded\n  - by_name: cpu.tsv\n' >"$w/p.yaml"
	n=$(ls "$w/traces" | wc -l)
	s=$(date +%s.%N); "$bin/etlkit-run" -q "$w/p.yaml" || true; e=$(date +%s.%N)
	awk -v n="$n" -v s="$s" -v e="$e" -v j="$(nproc)" \
	    'BEGIN { printf "etlkit-run, %d corpus traces, -j %d:  %6.3f s (all converted)\n", n, j, e - s }'
	s=$(date +%s.%N); "$bin/etlkit-run" -q "$w/p.yaml" || true; e=$(date +%s.%N)
	awk -v n="$n" -v s="$s" -v e="$e" \
	    'BEGIN { printf "etlkit-run, %d corpus traces, cached: %6.3f s (none converted)\n", n, e - s }'
	echo "lean results: $(du -sk "$w/.etlkit-cache" | cut -f1) kB of cache for $(du -skL "$w/traces" | cut -f1) kB of traces"
fi

#!/usr/bin/env bash
# Benchmark: stackfold and evtfilter throughput on gen_folded.py stacks
# (STACKFOLD_BENCH_SIZE, default 100M), as folded input and as evt (one
# Sample line per folded line, the same stacks).  Prints MB/s by wall
# clock and by CPU time (user+sys: one core, unaffected by other load),
# and the peak RSS, which must stay flat as the input grows (memory is
# bounded by distinct stacks): the 4x-smaller run is shown for comparison.
# The goal (issue 4): stackfold --preset=module on evt >= 300 MB/s per core.
# Env: ETLKIT_BIN, ETLKIT_SHARED, BENCH_TMP (see tests/bench.sh).
set -eu
bin=${ETLKIT_BIN:?}
. "$(dirname "$0")/common.bash"
tmp=${BENCH_TMP:-/tmp/etlkit-bench}/stackfold
size=${STACKFOLD_BENCH_SIZE:-100M}
mkdir -p "$tmp"

# evt from folded: the count becomes the weight in ms, 8 CPUs, 16 threads
to_evt() {
	awk 'BEGIN { print "#evt\t1\tsource=gen_folded\tpointer_size=8\tduration_ms=10000" }
	{ c = $NF; s = substr($0, 1, length($0) - length(c) - 1); n++
	  printf "%d.%06d\tSample\t%d\tMyApp.exe\t4242\t%d\t%s\tip=0x7ff6a1b2c3d4\tprio=8\tkframes=2\t%s\n",
	      (n % 10000) / 1000, (n % 1000) * 1000, n % 8, 100 + n % 16, c, s }' "$1"
}

prepare() {	# prepare SIZE SEED -> sets F (folded) and E (evt)
	F="$tmp/gen-$1-$2.folded"
	E="$tmp/gen-$1-$2.evt"
	folded_input "$F" "$1" "$2"
	[ -s "$E" ] || to_evt "$F" >"$E"
}

# run NAME FILE CMD...: best of 3 (by CPU time), prints wall/CPU MB/s and peak RSS
run() {
	local name=$1 file=$2 i best="" line
	shift 2
	local mb
	mb=$(wc -c <"$file" | awk '{ printf "%.1f", $1 / 1e6 }')
	for i in 1 2 3; do
		/usr/bin/time -o "$tmp/time" -f "%e %U %S %M" "$@" >/dev/null 2>&1 || true
		line=$(tail -1 "$tmp/time")
		if [ -z "$best" ] || awk -v a="$line" -v b="$best" \
		    'BEGIN { split(a, x, " "); split(b, y, " "); exit !(x[2] + x[3] < y[2] + y[3]) }'; then
			best=$line
		fi
	done
	echo "$best" | awk -v n="$name" -v mb="$mb" '{ cpu = $2 + $3; if (cpu < 0.001) cpu = 0.001;
	    wall = $1 < 0.001 ? 0.001 : $1
	    printf "%-44s %7.1f MB  %7.0f MB/s wall  %7.0f MB/s cpu  %6.1f MB RSS\n",
	        n, mb, mb / wall, mb / cpu, $4 / 1024 }'
}

if [ ! -x /usr/bin/time ]; then echo "needs /usr/bin/time"; exit 1; fi
small=$(awk -v s="$size" 'BEGIN { n = s + 0; u = substr(s, length(s)); printf "%d%s", n / 4 < 1 ? 1 : n / 4, u ~ /[KMG]/ ? u : "" }')
prepare "$small" 1
run "stackfold --preset=module (evt, 1/4 size)" "$E" "$bin/stackfold" --preset=module -o /dev/null "$E"
# the same stacks four times: 4x the bytes, the same distinct stacks, the same RSS
[ -s "$tmp/x4.evt" ] || cat "$E" "$E" "$E" "$E" >"$tmp/x4.evt"
run "stackfold --preset=module (1/4 size x4)" "$tmp/x4.evt" "$bin/stackfold" --preset=module -o /dev/null "$tmp/x4.evt"
prepare "$size" 1
run "stackfold --preset=module (evt)" "$E" "$bin/stackfold" --preset=module -o /dev/null "$E"
run "stackfold (evt, no grouping)" "$E" "$bin/stackfold" -o /dev/null "$E"
run "stackfold --preset=perfview --roots=thread" "$E" "$bin/stackfold" --preset=perfview --roots=thread -o /dev/null "$E"
run "stackfold --by-name (evt)" "$E" "$bin/stackfold" --by-name -o /dev/null "$E"
run "stackfold --preset=module (folded)" "$F" "$bin/stackfold" --preset=module -o /dev/null "$F"
run "evtfilter -p MyApp --start 1 --end 8" "$E" "$bin/evtfilter" -p MyApp --start 1 --end 8 -o /dev/null "$E"
run "evtfilter -x 'ntdll.dll!%Tick'" "$E" "$bin/evtfilter" -x 'ntdll.dll!%Tick' -o /dev/null "$E"
if command -v inferno-collapse-perf >/dev/null 2>&1; then
	echo "(inferno-collapse-perf is installed; it reads perf script text, not folded: not comparable here)"
fi
echo "distinct stacks: $(sed 's/ [0-9.]*$//' "$F" | sort -u | wc -l) in $(wc -l <"$F") lines"

#!/usr/bin/env bash
# Benchmark: manifest events decoded with embedded / built-in schemas, and
# the PMU view.
#  - etl2evt on a synthetic WindowsPerf trace (wperfgen: 64 cores, 1500
#    periods, both providers; ~0.77 M ReadGPC events, schema embedded):
#    ETL MB/s and events/s, best of 3, wall and CPU;
#  - tdhdump -s on the same trace: lib/tdh alone (read + decode, no output);
#  - render pmu (text and --tsv) on the evt stream: evt MB/s, events/s;
#  - net.4.5.2.x64 (66,394 events decoded from embedded schemas): tdhdump -s.
# Env: ETLKIT_BIN, ETLKIT_SHARED, BENCH_TMP; SCHEMA_BENCH_PERIODS (default 1500).
set -eu
. "$(dirname "$0")/common.bash"
bin=${ETLKIT_BIN:?}
tmp=${BENCH_TMP:-/tmp/etlkit-bench}/schema
periods=${SCHEMA_BENCH_PERIODS:-1500}
mkdir -p "$tmp"
etl="$tmp/wperf-$periods.etl"
[ -s "$etl" ] || "$bin/wperfgen" -o "$etl" --cores 64 --periods "$periods"
"$bin/etl2evt" "$etl" -o "$tmp/wperf.evt"
nev=$(grep -c $'\tp.Value=' "$tmp/wperf.evt")

report() { # LABEL BYTES EVENTS "wall cpu"
	awk -v l="$1" -v b="$2" -v n="$3" -v t="$4" 'BEGIN {
		split(t, a, " "); if (a[1] <= 0) a[1] = 0.001; if (a[2] <= 0) a[2] = 0.001;
		printf "%-34s %7.1f MB %8d ev  wall %6.3f s %6.0f MB/s %9.0f ev/s   cpu %6.3f s %6.0f MB/s %9.0f ev/s\n",
		    l, b / 1e6, n, a[1], b / 1e6 / a[1], n / a[1], a[2], b / 1e6 / a[2], n / a[2] }'
}

eb=$(wc -c < "$etl")
vb=$(wc -c < "$tmp/wperf.evt")
report "etl2evt (WindowsPerf, embedded)" "$eb" "$nev" "$(best_wall_cpu "$bin/etl2evt" "$etl" -o /dev/null)"
report "tdhdump -s (lib/tdh only)" "$eb" "$nev" "$(best_wall_cpu "$bin/tdhdump" -s "$etl")"
report "render pmu" "$vb" "$nev" "$(best_wall_cpu "$bin/render" pmu "$tmp/wperf.evt")"
report "render pmu --tsv" "$vb" "$nev" "$(best_wall_cpu "$bin/render" pmu --tsv "$tmp/wperf.evt")"
net="$tmp/net.4.5.2.x64.etl"
if [ ! -s "$net" ]; then
	python3 -c 'import sys,zipfile; open(sys.argv[2],"wb").write(zipfile.ZipFile(sys.argv[1]).read("net.4.5.2.x64.etl"))' \
	    "$ETLKIT_CORPUS/perfview/net.4.5.2.x64.etl.zip" "$net"
fi
report "tdhdump -s net.4.5.2.x64" "$(wc -c < "$net")" 66394 "$(best_wall_cpu "$bin/tdhdump" -s "$net")"

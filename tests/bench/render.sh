#!/usr/bin/env bash
# Benchmark: render flame graphs from folded stacks and the DPC reports.
#  - MB/s of folded input (gen_folded.py --size 100M --seed 1, made once in
#    $BENCH_TMP/render), best of 3, by wall clock and by CPU time (the
#    machine may be shared: CPU time is the steadier number);
#  - SVG size at inferno's default min width (0.01%) and at flamegraph.pl's
#    (0.1 px); inferno-flamegraph is run on the same input when it is on
#    PATH, else its SVG size is estimated from our boxes written in
#    inferno's per-frame format (marked "estimate");
#  - render dpc / dpcstacks events per second on the synthesised incident.
# Env: ETLKIT_BIN, ETLKIT_SHARED, BENCH_TMP; RENDER_BENCH_SIZE (default 100M).
set -eu
. "$(dirname "$0")/common.bash"
bin=${ETLKIT_BIN:?}
here=$(cd "$(dirname "$0")" && pwd)
tmp=${BENCH_TMP:-/tmp/etlkit-bench}/render
size=${RENDER_BENCH_SIZE:-100M}
mkdir -p "$tmp"
in="$tmp/folded-$size-1"
folded_input "$in" "$size" 1
bytes=$(wc -c < "$in")
mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')

rate() {
	awk -v n="$1" -v t="$2" -v mb="$mb" 'BEGIN {
		split(t, a, " ");
		printf "%-40s %6.1f MB  wall %6.3f s %7.0f MB/s   cpu %6.3f s %7.0f MB/s\n",
		    n, mb, a[1], mb / (a[1] > 0 ? a[1] : 1e-9), a[2], mb / (a[2] > 0 ? a[2] : 1e-9) }'
}

echo "input: $in ($mb MB, $(wc -l < "$in") lines)"
rate "render flame (default 0.1 px)" "$(best_wall_cpu "$bin/render" "$in")"
rate "render flame --minwidth 0.01%" "$(best_wall_cpu "$bin/render" --minwidth 0.01% "$in")"
rate "render flame --flamechart" "$(best_wall_cpu "$bin/render" --flamechart "$in")"
rate "render flame --reverse" "$(best_wall_cpu "$bin/render" --reverse "$in")"
# the same stacks merged and sorted (what stackfold and diff write): no line repeats
merged="$tmp/merged-$size-1"
[ -s "$merged" ] || awk '{ c = $NF; $NF = ""; s[$0] += c } END { for (k in s) print substr(k, 1, length(k) - 1), s[k] }' "$in" | LC_ALL=C sort > "$merged"
mbm=$(awk -v b="$(wc -c < "$merged")" 'BEGIN { printf "%.1f", b / 1e6 }')
mb_all=$mb; mb=$mbm
rate "render flame (merged, sorted input)" "$(best_wall_cpu "$bin/render" "$merged")"
mb=$mb_all

"$bin/render" --minwidth 0.01% "$in" > "$tmp/ours-0.01.svg"
"$bin/render" "$in" > "$tmp/ours-0.1px.svg"
ours=$(wc -c < "$tmp/ours-0.01.svg")
printf "%-40s %10d bytes (%d boxes)\n" "svg size, render --minwidth 0.01%" "$ours" \
    "$(grep -c '^<g><title>' "$tmp/ours-0.01.svg")"
printf "%-40s %10d bytes\n" "svg size, render (0.1 px)" "$(wc -c < "$tmp/ours-0.1px.svg")"
if command -v inferno-flamegraph > /dev/null; then
	rate "inferno-flamegraph (0.01%)" "$(best_wall_cpu inferno-flamegraph "$in")"
	inferno-flamegraph "$in" > "$tmp/inferno.svg"
	printf "%-40s %10d bytes\n" "svg size, inferno-flamegraph (0.01%)" "$(wc -c < "$tmp/inferno.svg")"
else
	# inferno writes per frame: <g><title>NAME (N samples, P%)</title><rect x="X.XXXX%"
	# y="Y" width="W.WWWW%" height="15" fill="rgb(R,G,B)" fg:x="N" fg:w="N"/><text
	# x="X.XXXX%" y="Y.50">LABEL</text></g> and about 30 kB of header and script.
	est=$(python3 "$here/../render_svg.py" "$tmp/ours-0.01.svg" | awk -F'\t' '
		function commas(n,  s) { s = sprintf("%d", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9](,|$)/, ",&", s); return s }
		NR == 1 { total = $2 }
		{ x = ($3 - 10) / 11.8; w = $5 / 11.8
		  rec = sprintf("<g><title>%s (%s samples, %.2f%%)</title><rect x=\"%.4f%%\" y=\"%d\" width=\"%.4f%%\" height=\"15\" fill=\"rgb(%d,%d,%d)\" fg:x=\"%d\" fg:w=\"%d\"/><text x=\"%.4f%%\" y=\"%.2f\">%s</text></g>\n",
		      $1, commas($2), 100 * $2 / total, x, $4, w, 200, 100, 50, x * total / 100, $2, x + 0.25, $4 + 10.5, $8)
		  n += length(rec) }
		END { print n + 30000 }')
	printf "%-40s %10d bytes (estimate: inferno-flamegraph not installed)\n" \
	    "svg size, inferno format (0.01%)" "$est"
	echo "inferno-flamegraph reference: about 150 MB/s here (issue 5); target >= 450 MB/s"
fi

# DPC reports on the synthesised incident (etlgen + etl2evt)
if [ -x "$bin/etlgen" ] && [ -x "$bin/etl2evt" ]; then
	evt="$tmp/incident.evt"
	if [ ! -s "$evt" ]; then
		"$bin/etlgen" -o "$tmp/incident.etl" "$here/../scenarios/backup-incident.yaml" 2>/dev/null
		"$bin/etl2evt" "$tmp/incident.etl" > "$evt"
	fi
	ev=$(grep -vc '^#' "$evt")
	for mode in dpc dpcisr dpcstacks; do
		t=$(best_wall_cpu "$bin/render" "$mode" "$evt")
		awk -v n="render $mode (incident)" -v t="$t" -v ev="$ev" 'BEGIN { split(t, a, " ");
		    printf "%-40s %8d events  wall %6.3f s %9.0f ev/s   cpu %6.3f s %9.0f ev/s\n",
		    n, ev, a[1], ev / (a[1] > 0 ? a[1] : 1e-9), a[2], ev / (a[2] > 0 ? a[2] : 1e-9) }'
	done
fi

#!/usr/bin/env bash
# What deriving thread time (Running/Ready/Waiting lines, issue 16) adds to
# etl2evt: the synthesised CSwitch-heavy trace (16 CPUs, 64 threads taking
# turns every ~0.3 ms, each switch readied with a stack) repeated
# BENCH_TT_REPEAT times (default 83: 1.02 GB of uncompressed ETL, the size
# issue 16's budget is stated for; BENCH_QUICK: 8, 100 MB), decoded to
# /dev/null and into a pipe (to cat) with thread time and with
# --no-thread-time, the runs interleaved 5 times; medians of CPU (user+sys)
# and wall time, MB/s of ETL, peak RSS, and the CPU and wall time thread
# time adds, in percent; then each thread's CPU time with thread time
# (ETLKIT_THREAD_CPU: the caller's thread, which makes every other line,
# bounds the wall time; into a file or /dev/null the output's writing
# thread derives the thread-time lines and makes them, into a pipe the
# caller's thread does).  Into a pipe, cat copies the lines too: thread
# time more than doubles the bytes (the Waiting lines carry two stacks).
set -eu
bin=${ETLKIT_BIN:?}
tmp=${BENCH_TMP:-/tmp}
here=$(cd "$(dirname "$0")" && pwd)
f=$tmp/cswitch-heavy-bench.etl
"$bin/etlgen" -o "$f" --repeat "${BENCH_TT_REPEAT:-83}" --no-compress \
    "$here/../scenarios/cswitch-heavy.yaml" 2>/dev/null
bytes=$(stat -c %s "$f")
: >"$tmp/tt-times"
for i in 1 2 3 4 5; do
	for mode in on off; do
		flag=
		[ "$mode" = off ] && flag=--no-thread-time
		/usr/bin/time -o "$tmp/time" -f "%U %S %e %M" "$bin/etl2evt" $flag -o /dev/null "$f" 2>/dev/null
		echo "$mode-null $(tail -1 "$tmp/time")" >>"$tmp/tt-times"
		/usr/bin/time -o "$tmp/time" -f "%U %S %e %M" \
		    sh -c "'$bin/etl2evt' $flag '$f' 2>/dev/null | cat >/dev/null"
		echo "$mode-pipe $(tail -1 "$tmp/time")" >>"$tmp/tt-times"
	done
done
awk -v b="$bytes" '
	function median(a, n,   i, j, t) {	# (insertion sort: 5 values)
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return a[int((n + 1) / 2)]
	}
	{ n[$1]++; cpu[$1, n[$1]] = $2 + $3; wall[$1, n[$1]] = $4; if ($5 > rss[$1]) rss[$1] = $5 }
	END {
		for (m in n) {
			for (i = 1; i <= n[m]; i++) { c[i] = cpu[m, i]; w[i] = wall[m, i] }
			mc[m] = median(c, n[m]); mw[m] = median(w, n[m])
			if (mc[m] < 0.01) mc[m] = 0.01
			if (mw[m] < 0.01) mw[m] = 0.01
		}
		for (m in n)
			printf "etl2evt thread time %-8s %6.1f MB  cpu %.2fs = %4.0f MB/s  wall %.2fs = %4.0f MB/s  peak RSS %d MB\n",
			    m, b / 1e6, mc[m], b / 1e6 / mc[m], mw[m], b / 1e6 / mw[m], rss[m] / 1024
		for (i = 1; i <= 2; i++) {
			o = i == 1 ? "null" : "pipe"
			printf "etl2evt thread time adds %.0f%% CPU, %.0f%% wall into %s (medians of 5)\n",
			    100 * (mc["on-" o] / mc["off-" o] - 1), 100 * (mw["on-" o] / mw["off-" o] - 1),
			    o == "null" ? "/dev/null" : "a pipe"
		}
	}' "$tmp/tt-times"
ETLKIT_THREAD_CPU=1 "$bin/etl2evt" -o /dev/null "$f" 2>&1 | grep -E 'pass 2|writing thread' | sed 's/, at .*//'
rm -f "$f" "$tmp/tt-times"

#!/usr/bin/env bash
# Benchmark: peak memory of etl2evt and stackfold against input size (issue 10:
# memory must follow distinct stacks, never file size; the claim is < 256 MB).
#
#   etl2evt    on synthesised ETL: etlgen's backup-server incident (24 CPUs,
#              DPC/ISR/CSwitch/samples with stacks, 15 distinct stacks), its
#              10 s repeated N times (etlgen --repeat, ~25.7 MB a period
#              uncompressed, ~7 MB with XPRESS): more events, the same distinct
#              stacks - memory must stay flat.
#   stackfold  on gen_folded.py stacks: (a) a fixed number of distinct stacks
#              (MEMORY_DISTINCT, default 2000) at every size - memory must
#              stay flat; (b) gen_folded's default, distinct stacks = lines/5,
#              folded and the same stacks as evt - memory follows them.
#
# For each run: input MB, wall seconds, MB/s, peak RSS (exact, getrusage via
# /usr/bin/time) and its split into anonymous memory and mapped file pages
# (sampled from /proc every 50 ms).  A run whose RSS passes MEMORY_CAP_MB is
# stopped and shown as "> CAP" (the curve is clear by then, and the machine is
# shared).  Nothing is asserted: this prints the curve for docs/hardening.md.
#
# Env: ETLKIT_BIN, ETLKIT_SHARED, BENCH_TMP (tests/bench.sh);
#      MEMORY_ETL_REPEATS (default "1 4 20 80": 26 MB to 2 GB),
#      MEMORY_ETL_REPEATS_XPRESS (default "20 80 300": files of 144 MB, 575 MB
#      and 2.2 GB holding 0.5, 2 and 7.7 GB of events), MEMORY_FOLDED_SIZES
#      (default "100M 500M 1G 2G"), MEMORY_CAP_MB (default 1024).
set -eu
. "$(dirname "$0")/common.bash"
bin=${ETLKIT_BIN:?}
here=$(cd "$(dirname "$0")" && pwd)
tmp=${BENCH_TMP:-/tmp/etlkit-bench}/memory
etl_repeats=${MEMORY_ETL_REPEATS-1 4 20 80}
etl_repeats_xpress=${MEMORY_ETL_REPEATS_XPRESS-20 80 300}
folded_sizes=${MEMORY_FOLDED_SIZES-100M 500M 1G 2G}
distinct=${MEMORY_DISTINCT:-2000}
cap_mb=${MEMORY_CAP_MB:-1024}
mkdir -p "$tmp"

bytes() {	# 100M -> bytes
	awk -v s="$1" 'BEGIN { n = s + 0; u = substr(s, length(s)); m = 1
	  if (u == "K") m = 1024; if (u == "M") m = 1048576; if (u == "G") m = 1073741824
	  printf "%d", n * m }'
}

# measure NAME INPUT CMD...: one line of the table
measure() {
	local name=$1 input=$2 t0 t1 pid child peak_anon=0 peak_file=0 capped=0 a f
	shift 2
	t0=$(date +%s.%N)
	/usr/bin/time -f '%M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		child=$(pgrep -P "$pid" | head -1 || true)
		if [ -n "$child" ] && [ -r "/proc/$child/status" ]; then
			a=$(awk '/^RssAnon:/ { print $2 }' "/proc/$child/status" 2>/dev/null || echo 0)
			f=$(awk '/^RssFile:/ { print $2 }' "/proc/$child/status" 2>/dev/null || echo 0)
			[ "${a:-0}" -le "$peak_anon" ] || peak_anon=$a
			[ "${f:-0}" -le "$peak_file" ] || peak_file=$f
			if [ $(( (${a:-0} + ${f:-0}) / 1024 )) -gt "$cap_mb" ]; then
				capped=1
				kill "$child" 2>/dev/null || true
			fi
		fi
		sleep 0.05
	done
	wait "$pid" || true
	t1=$(date +%s.%N)
	awk -v n="$name" -v sz="$(stat -c %s "$input")" -v t0="$t0" -v t1="$t1" -v cap="$capped" \
	    -v capmb="$cap_mb" -v hwm="$(grep -E '^[0-9]+$' "$tmp/time" | tail -1)" \
	    -v an="$peak_anon" -v fi="$peak_file" 'BEGIN {
		mb = sz / 1048576; w = t1 - t0; if (w < 0.01) w = 0.01
		if (cap) printf "%-44s %8.0f MB %8.1f s %7s      > %d MB (stopped)  anon %6.0f  file %6.0f\n", n, mb, w, "-", capmb, an / 1024, fi / 1024
		else printf "%-44s %8.0f MB %8.1f s %7.1f MB/s  RSS %6.0f MB  anon %6.0f  file %6.0f\n", n, mb, w, mb / w, hwm / 1024, an / 1024, fi / 1024
	}'
}

# distinct FILE: "N distinct, M MB" of the stacks of a folded file
distinct() {
	awk '{ sub(/ [0-9.]+$/, ""); if (!($0 in s)) { s[$0]; n++; b += length($0) } }
	    END { printf "%d distinct, %.0f MB", n, b / 1048576 }' "$1"
}

echo "peak memory against input size (cap $cap_mb MB); RSS = anon + mapped file pages"

# ---- etl2evt ----------------------------------------------------------------
# etlgen --repeat N writes the scenario's body N times, each copy one period
# later (new timestamps, the same processes, images and stacks).
for r in $etl_repeats; do
	t="$tmp/incident-x$r.etl"
	"$bin/etlgen" -o "$t" --repeat "$r" --no-compress "$here/../scenarios/backup-incident.yaml" 2>/dev/null
	measure "etl2evt (incident x$r, 15 distinct stacks)" "$t" "$bin/etl2evt" --no-symbols "$t"
	rm -f "$t"
done
for r in $etl_repeats_xpress; do
	t="$tmp/incident-x$r-xpress.etl"
	"$bin/etlgen" -o "$t" --repeat "$r" --compress "$here/../scenarios/backup-incident.yaml" 2>/dev/null
	measure "etl2evt (incident x$r, XPRESS buffers)" "$t" "$bin/etl2evt" --no-symbols "$t"
	rm -f "$t"
done

# ---- stackfold --------------------------------------------------------------
to_evt() {
	awk 'BEGIN { print "#evt\t1\tsource=gen_folded\tpointer_size=8\tduration_ms=10000" }
	{ c = $NF; s = substr($0, 1, length($0) - length(c) - 1); n++
	  printf "%d.%06d\tSample\t%d\tMyApp.exe\t4242\t%d\t%s\tip=0x7ff6a1b2c3d4\tprio=8\t%s\n",
	      (n % 10000) / 1000, (n % 1000) * 1000, n % 8, 100 + n % 16, c, s }' "$1"
}
for s in $folded_sizes; do
	f="$tmp/gen-$s-d$distinct.folded"
	folded_input "$f" "$s" 1 --distinct "$distinct"
	measure "stackfold folded ($(distinct "$f"))" "$f" "$bin/stackfold" "$f"
	rm -f "$f"
done
for s in $folded_sizes; do
	f="$tmp/gen-$s.folded"
	folded_input "$f" "$s" 1
	measure "stackfold folded ($(distinct "$f"))" "$f" "$bin/stackfold" "$f"
	measure "stackfold --preset=module folded" "$f" "$bin/stackfold" --preset=module "$f"
	e="$tmp/gen-$s.evt"
	[ -s "$e" ] || to_evt "$f" >"$e"
	measure "stackfold evt (same stacks)" "$e" "$bin/stackfold" "$e"
	rm -f "$e"
done

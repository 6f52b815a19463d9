#!/usr/bin/env bash
# Benchmark: diff and overweight on two 50 MB folded files from
# gen_folded.py (seeds 1 and 2).  Prints MB/s of input read (both files).
# Env: ETLKIT_BIN, ETLKIT_SHARED, BENCH_TMP (see tests/bench.sh).
set -eu
bin=${ETLKIT_BIN:?}
. "$(dirname "$0")/common.bash"
tmp=${BENCH_TMP:-/tmp/etlkit-bench}
size=${DIFF_BENCH_SIZE:-50M}
mkdir -p "$tmp"
for seed in 1 2; do
	f="$tmp/diff-$size-$seed.folded"
	folded_input "$f" "$size" "$seed"
done
a="$tmp/diff-$size-1.folded" b="$tmp/diff-$size-2.folded"
mb=$(( ($(stat -c %s "$a") + $(stat -c %s "$b")) / 1000000 ))

report() {
	local name=$1 t=$2
	awk -v n="$name" -v t="$t" -v mb="$mb" \
	    'BEGIN { printf "%-28s %6d MB in %6.3f s  %8.0f MB/s\n", n, mb, t, mb / t }'
}

report "diff (stack base test)" "$(best_wall "$bin/diff" -q "$a" "$b")"
report "diff -f signed -n" "$(best_wall "$bin/diff" -q -f signed -n "$a" "$b")"
report "diff --totals" "$(best_wall "$bin/diff" -t "$a" "$b")"
report "overweight" "$(best_wall "$bin/overweight" "$a" "$b")"
report "overweight --tsv" "$(best_wall "$bin/overweight" --tsv "$a" "$b")"
report "diff --preset=module" "$(best_wall "$bin/diff" -q --preset=module "$a" "$b")"
report "overweight --preset=module" "$(best_wall "$bin/overweight" --preset=module "$a" "$b")"

# evt input (through stackfold's lib): the synthetic incident, fixed vs broken
scen="$(cd "$(dirname "$0")/.." && pwd)/scenarios"
if [ -x "$bin/etlgen" ] && [ -x "$bin/etl2evt" ] && [ -f "$scen/backup-incident.yaml" ]; then
	for s in fixed incident; do
		f="$tmp/diff-$s.evt"
		if [ ! -s "$f" ]; then
			"$bin/etlgen" -o "$tmp/diff-$s.etl" "$scen/backup-$s.yaml" 2>/dev/null
			"$bin/etl2evt" "$tmp/diff-$s.etl" >"$f"
		fi
	done
	fa="$tmp/diff-fixed.evt" fb="$tmp/diff-incident.evt"
	emb=$(( ($(stat -c %s "$fa") + $(stat -c %s "$fb")) / 1000000 ))
	ev=$(cat "$fa" "$fb" | grep -vc '^#')
	for cmd in "diff -t" "diff -t --kind=DPC,ThreadedDPC,TimerDPC,ISR" "overweight --preset=module"; do
		t=$(best_wall "$bin"/$cmd "$fa" "$fb")
		awk -v n="$cmd (evt)" -v t="$t" -v mb="$emb" -v ev="$ev" \
		    'BEGIN { printf "%-28s %6d MB in %6.3f s  %8.0f MB/s  %5.1f M events/s\n", substr(n, 1, 28), mb, t, mb / t, ev / t / 1e6 }'
	done
fi

# memory grows with distinct stacks, not input size
if [ -x /usr/bin/time ]; then
	rss=$(/usr/bin/time -f %M "$bin/diff" -q "$a" "$b" 2>&1 >/dev/null | tail -1)
	stacks=$("$bin/diff" -t "$a" "$b" | awk -F'\t' '$1 == "stacks" { print $2 }')
	echo "diff peak RSS: $rss KB for $mb MB of input, $stacks distinct stacks"
fi

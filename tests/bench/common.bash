# tests/bench/common.bash - what the benchmarks share, sourced by
# tests/bench/*.sh (not itself a benchmark: tests/bench.sh runs only *.sh):
# making gen_folded.py input once, and the best-of-3 timers.

# folded_input FILE SIZE SEED [gen_folded.py options]: gen_folded.py's
# stacks in FILE, made only when FILE is missing or empty (input is reused
# between runs: generating it costs more than the benchmark).
folded_input() {
	local f=$1 size=$2 seed=$3
	shift 3
	[ -s "$f" ] || python3 "$ETLKIT_ROOT/tests/tools/gen_folded.py" --size "$size" --seed "$seed" "$@" >"$f"
}

# best_wall CMD...: the best of 3 wall-clock runs of CMD, in seconds.
best_wall() {
	local best="" t s e i
	for i in 1 2 3; do
		s=$(date +%s.%N)
		"$@" >/dev/null 2>&1 || true
		e=$(date +%s.%N)
		t=$(awk -v s="$s" -v e="$e" 'BEGIN { print e - s }')
		if [ -z "$best" ] || awk -v t="$t" -v b="$best" 'BEGIN { exit !(t < b) }'; then best=$t; fi
	done
	echo "$best"
}

# best_wall_cpu CMD...: of 3 runs of CMD, the best wall-clock and the best
# CPU (user+sys) seconds, as "wall cpu" (the machine may be shared: CPU
# time is the steadier number).  /usr/bin/time writes to $tmp/time.  It
# counts in 10 ms steps: a command faster than 0.1 s runs several times in
# a row per measurement (as many as make about 0.2 s), shown per run.
best_wall_cpu() {
	local bw="" bc="" out w c i n
	/usr/bin/time -o "${tmp:?}/time" -f "%e" "$@" > /dev/null 2>&1 || true
	n=$(tail -1 "$tmp/time" | awk '{ n = $1 >= 0.1 ? 1 : int(0.2 / ($1 > 0.01 ? $1 : 0.01)) + 1; print n }')
	for i in 1 2 3; do
		/usr/bin/time -o "$tmp/time" -f "%e %U %S" bash -c \
		    'n=$1; shift; for ((k = 0; k < n; k++)); do "$@"; done' _ "$n" "$@" > /dev/null 2>&1 || true
		out=$(tail -1 "$tmp/time")
		w=$(echo "$out" | awk -v n="$n" '{print $1 / n}')
		c=$(echo "$out" | awk -v n="$n" '{print ($2 + $3) / n}')
		if [ -z "$bw" ] || awk -v a="$w" -v b="$bw" 'BEGIN{exit !(a < b)}'; then bw=$w; fi
		if [ -z "$bc" ] || awk -v a="$c" -v b="$bc" 'BEGIN{exit !(a < b)}'; then bc=$c; fi
	done
	echo "$bw $bc"
}

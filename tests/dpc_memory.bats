#!/usr/bin/env bats
# The DPC/ISR reports in bounded memory (issue 18): peak RSS of render dpc,
# dpcisr and dpcstacks stays flat from 100 MB to 2 GB of evt, and what
# they print stays exact -- counts, max and nearest-rank percentiles per
# module and per function, intervals between starts on a CPU -- checked
# against sort and awk over the same evt, never against the tools.
#
# The long streams are a real etl2evt stream of the synthesised incident
# (tests/scenarios/backup-incident.yaml: 75 MB, 10 s, 176,800 DPCs/ISRs,
# 240,000 samples) again and again, times shifted (tests/tools/evtrepeat),
# through a pipe: no file of that size is written.  About 5 s of CPU per
# tool for the 2 GB run; the whole file takes about a minute on 2 cores.
load helpers

COPIES=27	# 27 copies of the incident: 2.03 GB of evt

incident() {
	local c="$BATS_FILE_TMPDIR/incident.evt"

	if [ ! -s "$c" ]; then
		etlgen -o "$BATS_FILE_TMPDIR/incident.etl" \
		    "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" >/dev/null 2>&1
		etl2evt "$BATS_FILE_TMPDIR/incident.etl" >"$c" 2>/dev/null
	fi
	echo "$c"
}

# flat VIEW [OPTION]: peak RSS of render VIEW on 100 MB and on 2 GB of the
# repeated incident; fails unless the 2 GB run is within 1.3 x + 8 MB of
# the 100 MB one.  The 2 GB output is left in $T/big.
flat() {
	local inc small big
	inc=$(incident)
	small=$(evtrepeat -b 100000000 "$inc" | peak_rss_kb render "$@")
	[ "$small" -gt 0 ] || fail "render $* failed on 100 MB ($small)"
	big=$(evtrepeat -n "$COPIES" "$inc" | peak_rss_kb render "$@")
	[ "$big" -gt 0 ] || fail "render $* failed on 2 GB ($big)"
	mv "$T/out" "$T/big"
	echo "# render $*: peak RSS $small kB on 100 MB, $big kB on 2 GB" >&3
	[ "$big" -le $((small * 13 / 10 + 8192)) ] ||
	    fail "render $*: peak RSS $big kB on 2 GB against $small kB on 100 MB: it grows with the input"
}

# routines EVT: "class<TAB>module<TAB>kind<TAB>routine<TAB>cpu<TAB>start_ns<TAB>duration_us"
# per DPC/ISR line, by awk over the evt (the attributes in any order)
routines() {
	awk -F'\t' 'BEGIN { OFS = "\t" }
	$2 ~ /^(DPC|ThreadedDPC|TimerDPC|ISR)$/ {
		mod = "?"; fn = "?"; us = $7 * 1000
		for (i = 8; i < NF; i++) {
			if ($i ~ /^module=/) mod = substr($i, 8)
			else if ($i ~ /^routine=/) fn = substr($i, 9)
			else if ($i ~ /^duration_us=/) us = substr($i, 13)
		}
		t = $1; sub(/\./, "", t)	# ms with 6 decimals: integer ns (as text: awk would print 1e10 as 1e+10)
		print ($2 == "ISR" ? "ISR" : "DPC"), mod, $2, fn, $3, t, us
	}' "$1"
}

# truth_rows EVT: per module and per function, as render dpc --tsv writes
# them: "module|function TYPE MODULE [FUNCTION] count max p50 p90 p99",
# from sort and nearest rank (rank ceil(p/100 x n), as the tool documents)
truth_rows() {
	routines "$1" >"$T/routines"
	sort -t "$(printf '\t')" -k1,1 -k2,2 -k7,7g "$T/routines" | awk -F'\t' '
	function rank(p,   x, k) { x = p / 100 * n; k = int(x); if (k < x) k++; return k < 1 ? 1 : k }
	function flush() {
		if (n) printf "module\t%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\n", c, m, n, v[n], v[rank(50)], v[rank(90)], v[rank(99)]
		n = 0
	}
	$1 != c || $2 != m { flush(); c = $1; m = $2 }
	{ v[++n] = $7 }
	END { flush() }'
	sort -t "$(printf '\t')" -k3,3 -k2,2 -k4,4 -k7,7g "$T/routines" | awk -F'\t' '
	function rank(p,   x, k) { x = p / 100 * n; k = int(x); if (k < x) k++; return k < 1 ? 1 : k }
	function flush() {
		if (n) printf "function\t%s\t%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\n", kd, m, f, n, v[n], v[rank(50)], v[rank(90)], v[rank(99)]
		n = 0
	}
	$3 != kd || $2 != m || $4 != f { flush(); kd = $3; m = $2; f = $4 }
	{ v[++n] = $7 }
	END { flush() }'
}

# truth_intervals EVT: "interval TYPE MODULE count min avg max" (us): the
# intervals between successive starts of a module's routines on one CPU
truth_intervals() {
	routines "$1" | sort -t "$(printf '\t')" -k1,1 -k2,2 -k5,5n -k6,6n | awk -F'\t' '
	function flush() {
		if (cnt) {
			if (ni) printf "interval\t%s\t%s\t%d\t%.3f\t%.3f\t%.3f\n", c, m, cnt, mn / 1000, sum / 1000 / ni, mx / 1000
			else printf "interval\t%s\t%s\t%d\t-\t-\t-\n", c, m, cnt
		}
		cnt = ni = sum = 0; mn = mx = ""
	}
	$1 != c || $2 != m { flush(); c = $1; m = $2; cpu = "" }
	{
		cnt++
		if ($5 == cpu) {
			d = $6 - prev; ni++; sum += d
			if (mn == "" || d < mn) mn = d
			if (mx == "" || d > mx) mx = d
		}
		cpu = $5; prev = $6
	}
	END { flush() }'
}

# tool_rows TSV: the same columns from render dpc --tsv
tool_rows() {
	awk -F'\t' 'BEGIN { OFS = "\t" }
	$1 == "module" { print $1, $2, $3, $4, $7, $8, $9, $10 }
	$1 == "function" { print $1, $2, $3, $4, $5, $8, $9, $10, $11 }' "$1"
}
tool_intervals() {
	awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "interval" { print $1, $2, $3, $4, $6, $7, $8 }' "$1"
}

# nested_stream: ISRs of 3 modules on 4 CPUs, a third of them interrupted
# by 1 to 3 shorter ones of the same module, in log order (each line at
# its end, docs/evt-format.md 2.2), so starts go back in the log; durations
# in 100 ns ticks, 0.2 us to 3 ms, the longest ones anywhere in the stream
nested_stream() {
	printf '#evt\t1\tsource=nested\tcpus=4\tclock=qpc\tclock_freq=10000000\n'
	awk 'BEGIN {
		srand(18); OFS = "\t"
		for (cpu = 0; cpu < 4; cpu++)
			for (t = 1000 + cpu * 7; t < 20000000; ) {
				m = int(rand() * 3); d = 2 + int(rand() * rand() * 30000)
				emit(cpu, m, t, d)
				if (rand() < 0.33 && d > 40)
					for (k = 1 + int(rand() * 3); k > 0; k--)
						emit(cpu, m, t + int(d * k / 4), 1 + int(rand() * d / 5))
				t += d + 1 + int(rand() * 400)
			}
	}
	function ms(ticks) { return sprintf("%d.%06d", int(ticks / 10000), (ticks % 10000) * 100) }
	function emit(cpu, m, t, d) {
		print ms(t + d), ms(t), "ISR", cpu, "?", -1, -1, sprintf("%.4f", d / 10000),
		    "routine=mod" m ".sys!0x" (100 + m), "module=mod" m ".sys",
		    sprintf("duration_us=%d.%d", int(d / 10), d % 10), "end_ms=" ms(t + d), ""
	}' | sort -t "$(printf '\t')" -k1,1n -s | cut -f2-
}

@test "dpc memory: render dpc peak RSS is flat from 100 MB to 2 GB of evt, and its counts and percentiles hold at 2 GB" {
	asan && skip "RSS under ASan is its shadow memory"
	flat dpc --tsv
	# the truth for one copy; 27 copies have 27 x the counts and, ranks
	# scaling with them, the same max and nearest-rank percentiles
	truth_rows "$(incident)" | awk -F'\t' -v k="$COPIES" 'BEGIN { OFS = "\t" }
	    { $(NF - 4) *= k; print }' | sort >"$T/want"
	[ "$(wc -l <"$T/want")" -ge 5 ] || fail "the truth has $(wc -l <"$T/want") rows"
	tool_rows "$T/big" | sort >"$T/got"
	textdiff "$T/want" "$T/got" || fail "render dpc at 2 GB differs from sort/awk over the incident"
}

@test "dpc memory: render dpcisr peak RSS is flat from 100 MB to 2 GB of evt, and its totals hold at 2 GB" {
	asan && skip "RSS under ASan is its shadow memory"
	flat dpcisr
	routines "$(incident)" | awk -F'\t' -v k="$COPIES" '{ n[$1 " " $2]++ }
	    END { for (x in n) print x, n[x] * k }' | sort >"$T/want"
	awk '/^DPC Info$/ { c = "DPC" } /^Interrupt Info$/ { c = "ISR" }
	    /^Total = / { print c, $6, $3 }' "$T/big" | sort >"$T/got"
	[ -s "$T/want" ] || fail "no DPC/ISR in the incident"
	textdiff "$T/want" "$T/got" || fail "render dpcisr totals at 2 GB differ from awk over the incident"
}

@test "dpc memory: render dpcstacks peak RSS is flat from 100 MB to 2 GB of evt, and keeps every sample" {
	asan && skip "RSS under ASan is its shadow memory"
	flat dpcstacks
	render dpcstacks "$(incident)" >"$T/one" 2>/dev/null
	# one copy: exactly the samples the trace flags dpc=1/isr=1 (awk); in
	# the incident no unflagged sample falls inside a routine, though 150
	# are logged at exactly a routine's end, which is after it
	flagged=$(awk -F'\t' '$2 == "Sample" && /\t(dpc|isr)=1\t/ { s += $7 * 1000 } END { printf "%d", s }' "$(incident)")
	one=$(awk '{ s += $NF } END { printf "%d", s }' "$T/one")
	[ "$flagged" -gt 30000000 ] || fail "only $flagged us of flagged samples"
	[ "$one" -eq "$flagged" ] || fail "one copy: $one us in DPC/ISR stacks, $flagged us of flagged samples"
	# 27 copies: the same stacks, 27 x the weight each
	awk -v k="$COPIES" '{ n = $NF; sub(/[0-9]+$/, ""); printf "%s%d\n", $0, n * k }' "$T/one" >"$T/want"
	textdiff "$T/want" "$T/big" || fail "render dpcstacks at 2 GB is not 27 x one copy"
}

@test "dpc memory: render dpcchart peak RSS is flat from 100 MB to 2 GB of evt, and its legend counts every DPC" {
	asan && skip "RSS under ASan is its shadow memory"
	flat dpcchart -m ndis.sys
	n=$(routines "$(incident)" | awk -F'\t' -v k="$COPIES" '$1 == "DPC" && $2 == "ndis.sys" { n++ } END { print n * k }')
	[ "$n" -gt 1000000 ] || fail "only $n DPCs of ndis.sys"
	grep -q ": $n DPCs, " "$T/big" || fail "the legend does not count $n DPCs: $(grep -o ': [0-9]* DPCs' "$T/big")"
	# one polyline, at most two points per pixel column of the 1090 px plot
	pts=$(grep -o '<polyline[^>]*points="[^"]*"' "$T/big" | awk -F'points="' '{ print split($2, a, " ") - 1 }')
	[ "$pts" -gt 100 ] && [ "$pts" -le 2200 ] || fail "$pts points"
}

@test "dpc exact: counts, max, p50/p90/p99 and intervals on 100 MB (1.33 copies: not a scaled multiset) match sort/awk" {
	evtrepeat -b 100000000 "$(incident)" >"$T/in.evt"
	render dpc --tsv "$T/in.evt" >"$T/tsv"
	truth_rows "$T/in.evt" | sort >"$T/want"
	tool_rows "$T/tsv" | sort >"$T/got"
	[ "$(wc -l <"$T/want")" -ge 5 ] || fail "the truth has $(wc -l <"$T/want") rows"
	textdiff "$T/want" "$T/got" || fail "durations differ from sort/awk"
	truth_intervals "$T/in.evt" | sort >"$T/want"
	tool_intervals "$T/tsv" | sort >"$T/got"
	textdiff "$T/want" "$T/got" || fail "intervals between starts differ from sort/awk"
}

@test "dpc exact: routines interrupted by their own module (starts back in the log): intervals and percentiles match sort/awk" {
	nested_stream >"$T/in.evt"
	# the stream must have starts going back: a line starting before an
	# earlier line of its module on its CPU
	back=$(routines "$T/in.evt" | awk -F'\t' '{ k = $2 " " $5 } k in last && $6 < last[k] { n++ } { last[k] = $6 } END { print n + 0 }')
	[ "$back" -gt 1000 ] || fail "only $back starts go back in the log"
	render dpc --tsv "$T/in.evt" >"$T/tsv" 2>"$T/err"
	[ ! -s "$T/err" ] || fail "warnings: $(cat "$T/err")"
	truth_rows "$T/in.evt" | sort >"$T/want"
	tool_rows "$T/tsv" | sort >"$T/got"
	textdiff "$T/want" "$T/got" || fail "durations differ from sort/awk"
	truth_intervals "$T/in.evt" | sort >"$T/want"
	tool_intervals "$T/tsv" | sort >"$T/got"
	textdiff "$T/want" "$T/got" || fail "intervals between starts differ from sort/awk"
}

@test "dpc exact: lines far out of log order are counted and said, not silently mixed in" {
	nested_stream >"$T/in.evt"
	# the same lines backwards: every start comes late
	{ head -1 "$T/in.evt"; tail -n +2 "$T/in.evt" | tac; } >"$T/rev.evt"
	render dpc "$T/rev.evt" >"$T/out" 2>"$T/err"
	grep -q "came later in the log than the longest routine before them allows" "$T/err" ||
	    fail "no warning: $(cat "$T/err")"
	# the counts and percentiles do not depend on the order
	render dpc --tsv "$T/rev.evt" >"$T/tsv" 2>/dev/null
	truth_rows "$T/in.evt" | sort >"$T/want"
	tool_rows "$T/tsv" | sort >"$T/got"
	textdiff "$T/want" "$T/got" || fail "durations differ from sort/awk"
}

@test "dpc bad input: a CPU past 4095 is skipped and counted, a duration past any clock is clamped in the windows, nothing written past a table" {
	{
		printf '#evt\t1\tcpus=8\n'
		printf '1.000000\tDPC\t5000\t?\t-1\t-1\t0.1\troutine=a.sys!0x1\tmodule=a.sys\tduration_us=100\t\n'
		printf '2.000000\tDPC\t1\t?\t-1\t-1\t0.1\troutine=a.sys!0x1\tmodule=a.sys\tduration_us=99999999999999999999\t\n'
		printf '3.000000\tDPC\t1\t?\t-1\t-1\t0.1\troutine=a.sys!0x1\tmodule=a.sys\tduration_us=10\t\n'
		printf '3.500000\tSample\t1\tx\t1\t1\t1\tdpc=1\ta.sys!f\n'
	} >"$T/bad.evt"
	for v in dpc dpcisr dpcstacks; do
		run render "$v" "$T/bad.evt"
		[ "$status" -eq 1 ] || fail "render $v: exit $status ($output)"
		[[ "$output" == *"bad.evt:2: cpu 5000: the DPC/ISR reports count CPUs 0 to 4095, line skipped"* ]] ||
		    fail "render $v: $output"
	done
	render dpc --tsv "$T/bad.evt" >"$T/tsv" 2>/dev/null || true
	# the two lines of CPU 1 count; the one of CPU 5000 does not
	grep -q "^module	DPC	a.sys	2	" "$T/tsv" || fail "$(cat "$T/tsv")"
}

# long_dpc_stream: on CPU 0, 200 DPCs of n.sys of 20 us (1 to 21 ms), then
# the trace's first long one: big.sys, 30 to 35 ms, ten samples flagged
# dpc=1 inside it (30.1, 30.6, ... 34.6 ms), unflagged samples every ms
# elsewhere; lines in log order (a routine at its end)
long_dpc_stream() {
	printf '#evt\t1\tsource=long\tcpus=1\tclock=qpc\tclock_freq=10000000\n'
	awk 'BEGIN {
		OFS = "\t"
		for (i = 0; i < 200; i++) {
			s = 10000 + i * 1000	# 100 ns ticks
			print s + 200, line(s, 200, "n.sys")
		}
		print 350000, line(300000, 50000, "big.sys")
		for (t = 301000; t < 350000; t += 5000)
			print t, sample(t, 1)
		for (t = 10500; t < 600000; t += 10000)
			if (t < 300000 || t >= 350000)
				print t, sample(t, 0)
	}
	function ms(ticks) { return sprintf("%d.%06d", int(ticks / 10000), (ticks % 10000) * 100) }
	function line(s, d, m) {
		return ms(s) "\tDPC\t0\t?\t-1\t-1\t" (d / 10000) "\troutine=" m "!0x10\tmodule=" m \
		    "\tduration_us=" (d / 10) "\tend_ms=" ms(s + d) "\t"
	}
	function sample(t, f) { return ms(t) "\tSample\t0\tx\t1\t1\t1\t" (f ? "dpc=1\t" : "") "x.exe!f" }
	' | sort -t "$(printf '\t')" -k1,1n -s | cut -f2-
}

@test "dpc exact: the samples inside the trace's first long DPC wait for it, however long it is" {
	long_dpc_stream >"$T/in.evt"
	# the truth by awk: the samples in [30, 35) ms, and those flagged dpc=1
	inside=$(awk -F'\t' '$2 == "Sample" && $1 >= 30 && $1 < 35 { n++ } END { print n * 1000 }' "$T/in.evt")
	flagged=$(awk -F'\t' '$2 == "Sample" && /\tdpc=1\t/ { n++ } END { print n * 1000 }' "$T/in.evt")
	[ "$inside" -eq 10000 ] && [ "$flagged" -eq 10000 ] || fail "the stream: $inside us inside, $flagged flagged"
	render dpcstacks "$T/in.evt" >"$T/out" 2>"$T/err"
	[ "$(cat "$T/out")" = "[DPC] big.sys;x.exe!f $inside" ] || fail "$(cat "$T/out" "$T/err")"
	[ ! -s "$T/err" ] || fail "warnings: $(cat "$T/err")"
}

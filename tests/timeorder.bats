#!/usr/bin/env bats
# The order of an evt stream (docs/evt-format.md §2, etl2evt(1)): lines are
# in log order.  The order key is logged_ms= when a line has it (a thread's
# wait, written at the switch-in after the ReadyThread that ended it), else
# end_ms= (the intervals: DPC, ThreadedDPC, TimerDPC, ISR, Running, Ready,
# Waiting, whose time column is their start), else the time column; it
# never decreases through a stream.  Checked with awk
# (not with etlkit's reader) on every corpus trace and on the synthesised
# DPC/ISR traces in both pointer sizes, through evtfilter too; and the
# consumers that depend on order are checked under it: evtfilter's time
# range on intervals, render dpc's intervals between starts.
load helpers

# order_breaks: prints how many event lines have an order key below the
# largest one before them (0 when the promise holds); the first few to stderr.
order_breaks() {
	awk -F'\t' '
	/^#/ || $0 == "" { next }
	{
		key = $1; logged = ""
		for (i = 8; i < NF; i++) {
			if (substr($i, 1, 7) == "end_ms=") key = substr($i, 8)
			else if (substr($i, 1, 10) == "logged_ms=") logged = substr($i, 11)
		}
		if (logged != "") key = logged
		if (seen && key + 0 < max) {
			if (++bad <= 3) print "line " NR ": order key " key " after " max ": " substr($0, 1, 120) > "/dev/stderr"
		}
		if (!seen || key + 0 > max) max = key + 0
		seen = 1
	}
	END { print bad + 0 }'
}

# start_breaks: how many event lines have a time column below the largest before them
start_breaks() {
	awk -F'\t' '!/^#/ && $0 != "" { if (seen && $1 + 0 < max) bad++; if (!seen || $1 + 0 > max) max = $1 + 0; seen = 1 } END { print bad + 0 }'
}

corpus_traces() {
	find "$CORPUS" -type f \( -name '*.etl' -o -name '*.etl.zip' -o -name '*diagsession*' \) | sort
}

@test "the checker fails a stream that goes back in time (either key)" {
	printf '#evt\t1\n1.000000\tSample\t0\ta\t1\t1\t1\t\n0.500000\tSample\t0\ta\t1\t1\t1\t\n' >"$T/a.evt"
	[ "$(order_breaks <"$T/a.evt" 2>/dev/null)" = 1 ]
	# a DPC that started first but ended after the next line's time
	printf '#evt\t1\n1.000000\tSample\t0\ta\t1\t1\t1\t\n0.900000\tDPC\t0\ta\t1\t1\t0.05\tend_ms=0.950000\t\n' >"$T/b.evt"
	[ "$(order_breaks <"$T/b.evt" 2>/dev/null)" = 1 ]
	# and the same DPC ending later is in order, though its start is earlier
	printf '#evt\t1\n1.000000\tSample\t0\ta\t1\t1\t1\t\n0.900000\tDPC\t0\ta\t1\t1\t0.2\tend_ms=1.100000\t\n' >"$T/c.evt"
	[ "$(order_breaks <"$T/c.evt")" = 0 ]
	[ "$(start_breaks <"$T/c.evt")" = 1 ]
}

@test "every corpus trace: the order key never decreases, in etl2evt's output and through evtfilter" {
	require_corpus
	n=0
	while IFS= read -r f; do
		etl2evt "$f" >"$T/o.evt" 2>/dev/null || [ $? -eq 1 ]
		[ -s "$T/o.evt" ] || fail "$f: no output"
		b=$(order_breaks <"$T/o.evt") || fail "$f: awk"
		[ "$b" = 0 ] || fail "$f: $b lines go back in log order"
		evtfilter --keep-idle "$T/o.evt" 2>/dev/null >"$T/f.evt" || [ $? -eq 1 ]
		b=$(order_breaks <"$T/f.evt")
		[ "$b" = 0 ] || fail "$f through evtfilter: $b lines go back"
		# evtfilter keeps the events and their order: the same time/kind sequence
		grep -v '^#' "$T/o.evt" | cut -f1,2 >"$T/o.k"
		grep -v '^#' "$T/f.evt" | cut -f1,2 >"$T/f.k"
		textdiff -q "$T/o.k" "$T/f.k" >/dev/null || fail "$f: evtfilter --keep-idle changed the events"
		n=$((n + 1))
	done < <(corpus_traces)
	[ "$n" -ge 16 ] || fail "only $n corpus traces found"
}

@test "synthesised DPC/ISR traces (backup-incident, kinds, cswitch, nested-dpc), pointer sizes 4 and 8" {
	for s in backup-incident kinds cswitch nested-dpc; do
		for p in 4 8; do
			etlgen --pointer-size $p -o "$T/$s.$p.etl" "$BATS_TEST_DIRNAME/scenarios/$s.yaml" 2>/dev/null
			etl2evt "$T/$s.$p.etl" >"$T/o.evt" 2>/dev/null
			b=$(order_breaks <"$T/o.evt")
			[ "$b" = 0 ] || fail "$s ($p-byte pointers): $b lines go back in log order"
			evtfilter --keep-idle --start 1 "$T/o.evt" 2>/dev/null >"$T/f.evt" || [ $? -eq 1 ]
			b=$(order_breaks <"$T/f.evt")
			[ "$b" = 0 ] || fail "$s ($p) through evtfilter: $b lines go back"
		done
	done
	# not a vacuous check: these streams do go back by their start column
	etl2evt "$T/backup-incident.8.etl" 2>/dev/null | start_breaks >"$T/sb"
	[ "$(cat "$T/sb")" -gt 1000 ]
	etl2evt "$T/nested-dpc.4.etl" 2>/dev/null | start_breaks >"$T/sb"
	[ "$(cat "$T/sb")" = 2 ]
	# the timer DPC that ended before the trace's start comes before the Lost lines at 0
	etl2evt "$T/nested-dpc.8.etl" 2>/dev/null | grep -v '^#' | head -2 | cut -f1,2 >"$T/first"
	printf -- '-0.500000\tTimerDPC\n0.000000\tLost\n' | textdiff - "$T/first"
}

@test "files merged on their absolute times: each one's Lost lines come when the merge reaches its start" {
	# kinds.yaml starts 123.4567 ms after nested-dpc.yaml and lost events (its header says 5)
	etlgen -o "$T/k.etl" "$BATS_TEST_DIRNAME/scenarios/kinds.yaml" 2>/dev/null
	etlgen -o "$T/n.etl" "$BATS_TEST_DIRNAME/scenarios/nested-dpc.yaml" 2>/dev/null
	for order in "$T/n.etl $T/k.etl" "$T/k.etl $T/n.etl"; do
		etl2evt $order >"$T/m.evt" 2>/dev/null
		b=$(order_breaks <"$T/m.evt")
		[ "$b" = 0 ] || fail "etl2evt $order: $b lines go back in log order"
		# and none is missing: both files' Lost lines, 2 + 3 of them
		[ "$(grep -c -P '^[0-9.-]+\tLost\t' "$T/m.evt")" = 5 ] || { grep Lost "$T/m.evt" >&2; fail "Lost lines"; }
	done
}

@test "evtfilter: an interval straddling the range keeps its overlap, and a second pass changes nothing" {
	etlgen -o "$T/b.etl" "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" 2>/dev/null
	etl2evt -k DPC,ISR "$T/b.etl" >"$T/b.evt" 2>/dev/null
	# the overlap of each [time, end_ms] with [5000, 5010], worked out by awk
	want=$(awk -F'\t' '!/^#/ { e = ""; for (i = 8; i < NF; i++) if ($i ~ /^end_ms=/) e = substr($i, 8) + 0
		lo = ($1 + 0 > 5000) ? $1 + 0 : 5000; hi = (e < 5010) ? e : 5010; if (hi > lo) s += hi - lo }
		END { printf "%.3f", s }' "$T/b.evt")
	evtfilter --start 5000 --end 5010 "$T/b.evt" >"$T/1.evt" 2>/dev/null
	evtfilter --start 5000 --end 5010 "$T/1.evt" >"$T/2.evt" 2>/dev/null
	evtfilter --start 5004 "$T/1.evt" >"$T/3.evt" 2>/dev/null
	sum() { awk -F'\t' '!/^#/ { s += $7 } END { printf "%.3f", s }' "$1"; }
	[ "$(sum "$T/1.evt")" = "$want" ] || fail "one pass: $(sum "$T/1.evt") ms, want $want"
	[ "$(sum "$T/2.evt")" = "$want" ] || fail "second pass: $(sum "$T/2.evt") ms, want $want"
	want3=$(awk -F'\t' '!/^#/ { e = ""; for (i = 8; i < NF; i++) if ($i ~ /^end_ms=/) e = substr($i, 8) + 0
		lo = ($1 + 0 > 5004) ? $1 + 0 : 5004; hi = (e < 5010) ? e : 5010; if (hi > lo) s += hi - lo }
		END { printf "%.3f", s }' "$T/b.evt")
	[ "$(sum "$T/3.evt")" = "$want3" ] || fail "narrowed: $(sum "$T/3.evt") ms, want $want3"
}

@test "render dpc: intervals between starts come in start order though the lines come in end order" {
	etlgen -o "$T/n.etl" "$BATS_TEST_DIRNAME/scenarios/nested-dpc.yaml" 2>/dev/null
	etl2evt "$T/n.etl" >"$T/n.evt" 2>/dev/null
	# the scenario's DPC starts on CPU 1 (1.0, 2.0, 2.3, 5.0 ms): intervals
	# 1000, 300, 2700 us; CPU 0 has one DPC, so no interval
	render dpc --tsv "$T/n.evt" >"$T/r.tsv"
	run awk -F'\t' '$1 == "interval" && $2 == "DPC" && $3 == "ndis.sys" { print $6, $7, $8 }' "$T/r.tsv"
	[ "$output" = "300.000 1333.333 2700.000" ] || { cat "$T/r.tsv" >&2; fail "got $output"; }
	# and the same from awk over the evt: sort the starts per CPU
	want=$(awk -F'\t' '$2 ~ /^(DPC|ThreadedDPC|TimerDPC)$/ && /\tmodule=ndis.sys\t/ { print $3 "\t" $1 }' "$T/n.evt" | sort -k1,1n -k2,2g |
		awk -F'\t' 'NR > 1 && $1 == c { d = ($2 - t) * 1000; n++; s += d; if (!mn || d < mn) mn = d; if (d > mx) mx = d }
		{ c = $1; t = $2 } END { printf "%.3f %.3f %.3f", mn, s / n, mx }')
	[ "$output" = "$want" ]
}

@test "render speedscope: samples in start order though interval lines come in end order" {
	# a routine interrupted by another: the inner one ends first, so it is logged first
	{
		printf '#evt\t1\n'
		printf '1.000000\tDPC\t1\tSystem\t4\t8\t0.05\tend_ms=1.050000\tk!first\n'
		printf '2.300000\tDPC\t1\tSystem\t4\t8\t0.1\tend_ms=2.400000\tk!outer;k!inner\n'
		printf '2.000000\tDPC\t1\tSystem\t4\t8\t0.8\tend_ms=2.800000\tk!outer\n'
		printf '5.000000\tDPC\t1\tSystem\t4\t8\t0.05\tend_ms=5.050000\tk!later\n'
	} >"$T/i.evt"
	[ "$(order_breaks <"$T/i.evt")" = 0 ]
	render speedscope --kind DPC "$T/i.evt" >"$T/s.json"	# DPC weights: microseconds
	run python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); f = [x["name"] for x in d["shared"]["frames"]]
p = d["profiles"][0]
print(" ".join(f[s[-1]] for s in p["samples"]), " ".join(str(w) for w in p["weights"]))' "$T/s.json"
	[ "$output" = "k!first k!outer k!inner k!later 50 800 100 50" ] || fail "$output"
}

#!/usr/bin/env bats
# Thread time while its array of threads grows (issue 16): a CSwitch whose
# old thread is unknown makes that thread after it looked up the new one,
# and when the array doubles there (its 257th and 513th threads) the new
# thread's state moves.  Session 5 fixed a pointer left dangling across
# that move; tests/scenarios/thread-growth.yaml makes each of its switches
# but the first make one thread, so the doubling lands on such a switch.
# Under make check-asan (ETLKIT_BIN=bin/asan) a use of freed memory there
# aborts etl2evt; in both builds the intervals must be those worked out by
# hand in the scenario's comment, checked here with awk over the evt.
load helpers

SCEN="$BATS_TEST_DIRNAME/scenarios/thread-growth.yaml"

# times in ms with 6 decimals (or us with 3) to integer ns, attribute lookup
AWKLIB='
function ns(ms,   a) { split(ms, a, "."); return a[1] * 1000000 + substr(a[2] "000000", 1, 6) }
function us(u,   a) { split(u, a, "."); return a[1] * 1000 + substr(a[2] "000", 1, 3) }
function attr(k,   i) { for (i = 8; i < NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
'

# growth_truth EVT: the intervals of thread-growth.yaml (switch k at 0.02k
# ms, k = 1..520; new 904 for odd k, 908 for even; old 20000 + 4k), the
# trace's end being its last logged event.  Prints what differs.
growth_truth() {
	awk -F'\t' "$AWKLIB"'
	/^#/ { next }
	$2 != "Running" && $2 != "Ready" && $2 != "Waiting" { t = ns($1); if (t > t1) t1 = t; next }
	{ n[$6]++; k = $6 " " n[$6]; kind[k] = $2; s[k] = ns($1); e[k] = ns(attr("end_ms"))
	  d[k] = us(attr("duration_us")); edge[k] = attr("edge"); os[k] = attr("old_state"); cpu[k] = $3
	  if (e[k] - s[k] != d[k]) { print "tid " $6 ": end - start != duration at " $1; bad = 1 } }
	function want(tid, i, wk, ws, we, wedge,   k) {
		k = tid " " i
		if (kind[k] != wk || s[k] != ws || e[k] != we || edge[k] != wedge) {
			print "tid " tid " line " i ": " kind[k] " " s[k] ".." e[k] " edge=" edge[k] \
			    ", want " wk " " ws ".." we " edge=" wedge; bad = 1 }
	}
	END {
		step = 20000	# 0.02 ms
		# 20004: the first switch'\''s old thread, running from the start, then waiting
		if (n[20004] != 2) { print "20004: " n[20004] " lines, want 2"; bad = 1 }
		want(20004, 1, "Running", 0, step, "start")
		want(20004, 2, "Waiting", step, t1, "end")
		if (os[20004 " 2"] != "Waiting") { print "20004: old_state " os[20004 " 2"]; bad = 1 }
		# the 519 threads first seen switched out: Waiting the whole trace, from nothing known
		for (k = 2; k <= 520; k++) {
			tid = 20000 + 4 * k
			if (n[tid] != 1) { print tid ": " n[tid] " lines, want 1"; bad = 1; continue }
			want(tid, 1, "Waiting", 0, t1, "both")
			if (os[tid " 1"] != "unknown") { print tid ": old_state " os[tid " 1"]; bad = 1 }
		}
		# 904 and 908 take turns: waiting from the start to their first switch-in, then
		# running a step, waiting a step; 908 runs from the last switch to the end
		for (p = 0; p <= 1; p++) {
			tid = p ? 908 : 904; first = p ? 2 : 1; i = 0
			want(tid, ++i, "Waiting", 0, first * step, "start")
			for (k = first; k <= 520; k += 2) {
				want(tid, ++i, "Running", k * step, k == 520 ? t1 : (k + 1) * step, k == 520 ? "end" : "")
				if (k < 520)
					want(tid, ++i, "Waiting", (k + 1) * step, k + 2 <= 520 ? (k + 2) * step : t1,
					    k + 2 <= 520 ? "" : "end")
			}
			if (n[tid] != i) { print tid ": " n[tid] " lines, want " i; bad = 1 }
		}
		threads = 0
		for (t in n) threads++
		if (threads != 522) { print threads " threads with intervals, want 522"; bad = 1 }
		exit bad }' "$1"
}

# conservation EVT: CPU 0'\''s Running lines tile the trace span (start 0 to
# the last event); every thread'\''s lines tile it too (none starts or ends).
conservation() {
	awk -F'\t' "$AWKLIB"'
	/^#/ { next }
	$2 != "Running" && $2 != "Ready" && $2 != "Waiting" { t = ns($1); if (t > t1) t1 = t; next }
	$2 == "Running" { print "cpu" $3, ns($1), ns(attr("end_ms")) }
	{ print "tid" $6, ns($1), ns(attr("end_ms")) }
	END { print "end", t1 }' "$1" | sort -k1,1 -k2,2n | awk '
	$1 == "end" { t1 = $2; next }
	{ if (!($1 in last)) { if ($2 != 0) { print $1 ": begins at " $2; bad = 1 } }
	  else if (last[$1] != $2) { print $1 ": gap or overlap at " $2; bad = 1 }
	  last[$1] = $3; sum[$1] += $3 - $2 }
	END {
		if (!("cpu0" in sum)) { print "no Running line on CPU 0"; bad = 1 }
		for (x in sum) if (last[x] != t1 || sum[x] != t1) { print x ": " sum[x] " ns to " last[x] ", span " t1; bad = 1 }
		exit bad }'
}

@test "threadtime growth: a switch with an unknown old thread as the thread array doubles, 64- and 32-bit" {
	for p in 8 4; do
		etlgen -o "$T/g$p.etl" --pointer-size "$p" "$SCEN" 2>/dev/null || fail "etlgen ptr$p"
		run etl2evt -o "$T/g$p.evt" "$T/g$p.etl"
		[ "$status" -eq 0 ] || fail "ptr$p: etl2evt exit $status: $output"
		# the premise: no rundown names the old threads, so each is first met at its switch-out
		dc=$(awk -F'\t' '$2 == "ThreadDCStart" && $5 == 900 { printf "%s ", $6 }' "$T/g$p.evt")
		[ "$dc" = "904 908 " ] || fail "ptr$p: grow.exe's ThreadDCStart lines name $dc"
		conservation "$T/g$p.evt" || fail "ptr$p: conservation"
		growth_truth "$T/g$p.evt" || fail "ptr$p: the scenario's intervals"
		grep -qP '^#skipped\twhat=threadtime\tcount=519\tdetail=switch-outs of a thread not running' "$T/g$p.evt" ||
		    fail "ptr$p: switch-outs of a thread not running not counted 519 times"
		grep -qP '^#skipped\twhat=threadtime\tcount=518\tdetail=switch-ins of a waiting thread with no ReadyThread' "$T/g$p.evt" ||
		    fail "ptr$p: switch-ins without ReadyThread not counted 518 times"
	done
}

@test "threadtime growth: the checks catch a wrong stream (a line lost, a wait moved)" {
	etlgen -o "$T/g.etl" "$SCEN" 2>/dev/null
	etl2evt -o "$T/g.evt" "$T/g.etl"
	conservation "$T/g.evt" || fail "conservation"
	growth_truth "$T/g.evt" || fail "the scenario's intervals"
	# the Waiting line of a thread first seen at a switch-out, lost
	awk -F'\t' '!($2 == "Waiting" && $6 == 20400)' "$T/g.evt" >"$T/lost.evt"
	! growth_truth "$T/lost.evt" >/dev/null || fail "lost line not seen"
	# 904's second Running line a step late: a gap, and the truth differs
	awk -F'\t' -v OFS='\t' '$2 == "Running" && $6 == 904 && $1 == "0.060000" { $1 = "0.070000" } 1' "$T/g.evt" >"$T/moved.evt"
	! conservation "$T/moved.evt" >/dev/null || fail "gap not seen"
	! growth_truth "$T/moved.evt" >/dev/null || fail "moved line not seen"
}

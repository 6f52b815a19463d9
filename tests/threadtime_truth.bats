#!/usr/bin/env bats
# Thread time (issue 16) on traces with a known truth.  No corpus trace has
# context switches, so the scenarios script what each thread does
# (tests/scenarios/{lock-handoff,disk-dpc,busy-cpu,wait-chain}.yaml, "Thread
# timelines" in docs/scenario-format.md) and etlgen --truth writes, from
# the script alone, the Running/Ready/Waiting intervals of the contract
# (docs/evt-format.md).  Checked here:
#  - the truth itself conserves time (per CPU and per thread);
#  - the context switches, ReadyThreads and DPCs written for it encode
#    exactly that truth: an awk derivation of the contract over etl2evt's
#    CSwitch/ReadyThread/DPC lines gives every interval, to the 100 ns tick;
#  - etl2evt's own Running/Ready/Waiting lines are the truth, field for
#    field, and conserve time on every synthesised CSwitch trace, in both
#    pointer sizes; at volume they are the awk derivation's.
load helpers

SCEN="$BATS_TEST_DIRNAME/scenarios"
TRUTHS="lock-handoff disk-dpc busy-cpu wait-chain"

# gen NAME PSIZE: $T/NAME-PSIZE.{etl,truth,evt}
gen() {
	etlgen -o "$T/$1-$2.etl" --truth "$T/$1-$2.truth" --pointer-size "$2" "$SCEN/$1.yaml" 2>/dev/null ||
	    fail "etlgen $1 $2"
	etl2evt -o "$T/$1-$2.evt" "$T/$1-$2.etl" || fail "etl2evt $1 $2"
}

# span_ns EVT: the trace span (first to last event) from the #evt header, in ns
span_ns() {
	awk -F'\t' '/^#evt/ { for (i = 1; i <= NF; i++) if ($i ~ /^duration_ms=/) { split(substr($i, 13), p, ".");
	    printf "%d\n", p[1] * 1000000 + substr(p[2] "000000", 1, 6) } exit }' "$1"
}

# derive EVT: the contract's intervals, in the truth's columns,
# derived here from the CSwitch, ReadyThread and DPC/ISR lines of an evt
# stream (an implementation of the contract independent of etl2evt's and
# of etlgen's): the readying thread is the one the last CSwitch put on the
# ReadyThread's CPU (before its first, the one that switches out), waker_in=dpc when a DPC there covers its time, the
# waker's stack the ReadyThread line's.
derive() {
	awk -F'\t' -v OFS='\t' '
	function ns(s,   i, f) { i = index(s, "."); f = substr(substr(s, i + 1) "000000", 1, 6); return substr(s, 1, i - 1) * 1000000 + f }
	function ms(n) { return sprintf("%d.%06d", int(n / 1000000), n % 1000000) }
	function us(n) { return sprintf("%d.%03d", int(n / 1000), n % 1000) }
	function attr(k,   i) { for (i = 8; i < NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
	function leaf(stk, pseudo) { return stk == "" ? pseudo : stk ";" pseudo }
	function row(tid, state, s, e, cpu, edge, from, wr, wm, os, prio, wk, stack, wst) {
		print tid, pid[tid], pname[tid], state, ms(s), ms(e), us(e - s), cpu, edge, from, wr, wm, os, prio, wk, stack, wst
	}
	BEGIN {
		W0 = "\t\t\t\t\t\t"; pid[0] = 0; pname[0] = "Idle"
		print "#tid", "pid", "process", "state", "start_ms", "end_ms", "duration_us", "cpu", "edge", "from", "wait_reason",
		    "wait_mode", "old_state", "prio", "ready_ms", "waker_tid", "waker_pid", "waker_process", "waker_cpu",
		    "waker_in", "waker_routine", "stack", "waker_stack"
	}
	FNR == NR {
		if (/^#evt/) { for (i = 1; i <= NF; i++) if ($i ~ /^duration_ms=/) last = ns(substr($i, 13)) }
		if ($2 == "DPC" || $2 == "ThreadedDPC" || $2 == "TimerDPC" || $2 == "ISR") {
			nd++; dcpu[nd] = $3; d0[nd] = ns($1); d1[nd] = ns(attr("end_ms")); drt[nd] = attr("routine")
			din[nd] = $2 == "ISR" ? "isr" : "dpc"
		}
		if (($2 == "ThreadDCStart" || $2 == "ThreadStart") && $6 != 0) { pid[$6] = $5; pname[$6] = $4; known[$6] = $2 == "ThreadStart" ? ns($1) : 0 }
		if ($2 == "ThreadEnd") died[$6] = ns($1)
		if ($2 == "CSwitch" && !($3 in first)) first[$3] = attr("old_tid")
		next
	}
	$2 == "CSwitch" {
		t = ns($1); c = $3; nw = $6; old = attr("old_tid")
		if (old == 0)
			row(0, "Running", (c in idle) ? idle[c] : 0, t, c, (c in idle) ? "" : "start", "", "", "", "", (c in idle) ? 0 : "*", W0, "", "")
		else {
			if (!(old in st)) row(old, "Running", known[old], t, c, known[old] ? "" : "start", "", "", "", "", "*", W0, "", "")
			else if (st[old] == "run") row(old, "Running", since[old], t, c, "", "", "", "", "", inprio[old], W0, "", "")
			os = attr("old_state")
			if (os == "Terminated") st[old] = "dead"
			else if (os == "Ready" || os == "Standby" || os == "DeferredReady") { st[old] = "ready"; from[old] = "preempted" }
			else { st[old] = "wait"; wr[old] = attr("wait_reason"); wm[old] = attr("wait_mode"); ost[old] = os }
			since[old] = t; outcpu[old] = c; outprio[old] = attr("old_prio")
		}
		if (nw == 0)
			idle[c] = t
		else {
			stk = $NF
			if (!(nw in st))
				row(nw, "Waiting", known[nw], t, "*", known[nw] ? "" : "start", "", "unknown", "*", known[nw] ? "Initialized" : "unknown",
				    "*", W0, leaf(stk, "BLOCKED_TIME"), "")
			else if (st[nw] == "ready") {
				if (from[nw] == "readied")
					row(nw, "Waiting", wsince[nw], rt[nw], wcpu[nw], wedge[nw], "", wr[nw], wm[nw], ost[nw], wprio[nw], wk[nw], leaf(stk, "BLOCKED_TIME"), wst[nw])
				row(nw, "Ready", since[nw], t, c, "", from[nw], "", "", "", attr("new_prio"), W0, leaf(stk, "READIED_TIME"), "")
			}
			st[nw] = "run"; since[nw] = t; inprio[nw] = attr("new_prio"); runcpu[nw] = c
		}
		cur[c] = nw
		next
	}
	$2 == "ReadyThread" {
		t = ns($1); c = $3; r = attr("ready_tid"); w = (c in cur) ? cur[c] : (c in first) ? first[c] : "?"
		inq = "thread"; rtn = ""
		for (i = 1; i <= nd; i++) if (dcpu[i] == c && d0[i] <= t && t < d1[i]) { inq = din[i]; rtn = drt[i] }
		if (!(r in st)) { wedge[r] = known[r] ? "" : "start"; wsince[r] = known[r]; wr[r] = "unknown"; wm[r] = "*"
			ost[r] = known[r] ? "Initialized" : "unknown"; wcpu[r] = "*"; wprio[r] = "*" }
		else if (st[r] == "wait") { wedge[r] = ""; wsince[r] = since[r]; wcpu[r] = outcpu[r]; wprio[r] = outprio[r] }
		else next
		wk[r] = ms(t) OFS w OFS pid[w] OFS pname[w] OFS c OFS inq OFS rtn
		wst[r] = $NF
		st[r] = "ready"; from[r] = "readied"; since[r] = t; rt[r] = t
		next
	}
	END {
		for (th in st) {
			if (st[th] == "run") row(th, "Running", since[th], last, runcpu[th], "end", "", "", "", "", inprio[th], W0, "", "")
			if (st[th] == "wait") row(th, "Waiting", since[th], last, outcpu[th], "end", "", wr[th], wm[th], ost[th], outprio[th], W0, "*", "")
			if (st[th] == "ready") {
				if (from[th] == "readied")
					row(th, "Waiting", wsince[th], rt[th], wcpu[th], wedge[th], "", wr[th], wm[th], ost[th], wprio[th], wk[th], "*", wst[th])
				row(th, "Ready", since[th], last, "*", "end", from[th], "", "", "", "*", W0, "*", "")
			}
		}
		for (c in cur) if (cur[c] == 0) row(0, "Running", idle[c], last, c, "end", "", "", "", "", 0, W0, "", "")
		# a thread never switched in or out waits all its life, for reasons the trace cannot tell
		for (th in known) if (!(th in st))
			row(th, "Waiting", known[th], (th in died) ? died[th] : last, "*", (known[th] || (th in died)) ? "*" : "both",
			    "", "unknown", "*", "*", "*", W0, "*", "")
	}' "$1" "$1"
}

# intervals EVT: etl2evt's Running/Ready/Waiting lines in the truth's columns
intervals() {
	awk -F'\t' -v OFS='\t' '
	function attr(k,   i) { for (i = 8; i < NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
	$2 == "Running" || $2 == "Ready" || $2 == "Waiting" {
		print $6, $5, $4, $2, $1, attr("end_ms"), attr("duration_us"), $3, attr("edge"), attr("from"),
		    attr("wait_reason"), attr("wait_mode"), attr("old_state"), attr("prio"), attr("ready_ms"),
		    attr("waker_tid"), attr("waker_pid"), attr("waker_process"), attr("waker_cpu"), attr("waker_in"),
		    attr("waker_routine"), $NF, attr("waker_stack")
	}' "$1"
}

# truth_match TRUTH GOT: every interval of the truth is in GOT once (same
# tid, state, start, and CPU for Idle) with every column the truth decides
# ("*" = not decided, empty = absent) equal; GOT has no other interval.
truth_match() {
	awk -F'\t' '
	function key() { return $1 SUBSEP $4 SUBSEP $5 SUBSEP ($1 == 0 ? $8 : "") }
	function fail(m) { if (++nerr <= 12) print m > "/dev/stderr" }
	FNR == NR { if (/^#/) { split($0, name, "\t"); next } want[key()] = $0; next }
	/^#/ { next }
	{ k = key(); if (k in got) fail("twice: " $0); got[k] = $0 }
	END {
		for (k in want) {
			if (!(k in got)) { fail("missing: " want[k]); continue }
			n = split(want[k], w, "\t"); split(got[k], g, "\t")
			for (i = 1; i <= n; i++)
				if (w[i] != "*" && w[i] != g[i]) fail(name[i] ": want \"" w[i] "\" got \"" g[i] "\"\n  want: " want[k] "\n  got:  " got[k])
			matched++
		}
		for (k in got) if (!(k in want)) fail("unexpected: " got[k])
		if (nerr) { print nerr " differences, " matched + 0 " intervals compared" > "/dev/stderr"; exit 1 }
		if (!matched) { print "no intervals" > "/dev/stderr"; exit 1 }
	}' "$1" "$2"
}

# lifetimes EVT: "tid born_ns died_ns" per thread: from its ThreadStart (or
# the trace start) to its switch-out in state Terminated, or its ThreadEnd,
# or the trace's end (the contract's lifetime)
lifetimes() {
	awk -F'\t' '
	function ns(s,   i) { i = index(s, "."); return substr(s, 1, i - 1) * 1000000 + substr(substr(s, i + 1) "000000", 1, 6) }
	/^#evt/ { for (i = 1; i <= NF; i++) if ($i ~ /^duration_ms=/) span = ns(substr($i, 13)) }
	($2 == "ThreadStart" || $2 == "ThreadDCStart") && $6 != 0 { born[$6] = $2 == "ThreadStart" ? ns($1) : 0 }
	$2 == "ThreadEnd" { ended[$6] = ns($1) }
	$2 == "CSwitch" && $0 ~ /\told_state=Terminated\t/ { for (i = 8; i < NF; i++) if ($i ~ /^old_tid=/) term[substr($i, 9)] = ns($1) }
	END { for (t in born) print t, born[t], (t in term) ? term[t] : (t in ended) ? ended[t] : span }' "$1"
}

# conserve ROWS EVT: in truth columns, per CPU the Running time of all
# threads and Idle equals the trace span (EVT's duration_ms), and per thread
# running + ready + waiting its lifetime (lifetimes EVT); prints what differs.
conserve() {
	lifetimes "$2" >"$T/life"
	awk -F'\t' -v span="$(span_ns "$2")" '
	function ns(s,   i) { i = index(s, "."); return substr(s, 1, i - 1) * 1000 + substr(substr(s, i + 1) "000", 1, 3) }
	FNR == NR { split($0, f, " "); life[f[1]] = f[3] - f[2]; next }
	/^#/ { next }
	{ d = ns($7) }
	$4 == "Running" { cpu[$8] += d }
	$1 != 0 { thr[$1] += d }
	END {
		for (c in cpu) if (cpu[c] != span) { print "CPU " c ": running " cpu[c] " ns, span " span; bad = 1 }
		for (t in thr) if (thr[t] != life[t]) { print "thread " t ": " thr[t] " ns, lifetime " life[t]; bad = 1 }
		exit bad || !length(cpu)
	}' "$T/life" "$1"
}

@test "the truth of each timeline scenario conserves time: per CPU and per thread, the trace span" {
	for s in $TRUTHS; do for p in 4 8; do
		gen "$s" "$p"
		span=$(span_ns "$T/$s-$p.evt")
		[ "$span" -gt 14000000 ] || fail "$s: span $span"
		conserve "$T/$s-$p.truth" "$T/$s-$p.evt" || fail "$s ptr$p: the truth does not conserve time"
	done; done
}

@test "the truth is the scenario's, worked out by hand: lock hand-off, disk wait ended by a DPC, busy CPU, wait chain" {
	gen lock-handoff 8
	# B (6108) blocks at 2 ms on CPU 1 in RtlEnterCriticalSection, A (6104, on CPU 0) readies it at 6 ms
	# from RtlLeaveCriticalSection...KeSetEvent; B is Ready 40 us, switched in on CPU 1 at 6.04 ms
	grep -q $'^6108\t6100\tapp.exe\tWaiting\t2.000000\t6.000000\t4000.000\t1\t\t\tUserRequest\tuser\tWaiting\t8\t6.000000\t6104\t6100\tapp.exe\t0\tthread\t\t.*ntdll.dll!0x2c4a0;.*;ntoskrnl.exe!0x7c010;BLOCKED_TIME\t.*ntdll.dll!0x2b0f0;.*;ntoskrnl.exe!0x4e1a0$' "$T/lock-handoff-8.truth"
	grep -q $'^6108\t6100\tapp.exe\tReady\t6.000000\t6.040000\t40.000\t1\t\treadied\t\t\t\t8\t' "$T/lock-handoff-8.truth"
	# H (6112) lives 3 to 4.5 ms: created (Initialized) and readied by A at 3.2 ms, runs 3.3 to 4.5 on CPU 1, exits
	[ "$(awk -F'\t' '$1 == 6112 { print $4, $5, $6, $8, $9, $13 }' "$T/lock-handoff-8.truth" | tr '\n' '|')" = \
	    "Waiting 3.000000 3.200000 *  Initialized|Ready 3.200000 3.300000 1  |Running 3.300000 4.500000 1  |" ]
	gen disk-dpc 8
	# C (7104) waits 2..7.5 ms (Executive); storport's DPC on CPU 1 readies it, interrupting X (7204)
	grep -q $'^7104\t7100\treader.exe\tWaiting\t2.000000\t7.500000\t5500.000\t0\t\t\tExecutive\tkernel\tWaiting\t9\t7.500000\t7204\t7200\tcompute.exe\t1\tdpc\tstorport.sys!0x4a1c\t' "$T/disk-dpc-8.truth"
	# the second completion interrupts the idle thread on CPU 0
	grep -q $'^7104\t7100\treader.exe\tWaiting\t9.000000\t14.000000\t5000.000\t0\t.*\t14.000000\t0\t0\tIdle\t0\tdpc\tstorport.sys!0x4a1c\t' "$T/disk-dpc-8.truth"
	gen busy-cpu 8
	# D (8104): readied by E at 2 ms, Ready 4 ms while E and F hold CPU 0; preempted at 7 ms for 3 ms
	grep -q $'^8104\t8100\tbatch.exe\tReady\t2.000000\t6.000000\t4000.000\t0\t\treadied\t' "$T/busy-cpu-8.truth"
	grep -q $'^8104\t8100\tbatch.exe\tReady\t7.000000\t10.000000\t3000.000\t0\t\tpreempted\t.*;ntoskrnl.exe!0x7c010;READIED_TIME\t$' "$T/busy-cpu-8.truth"
	# D was waiting from the trace start: the trace cannot tell why
	grep -q $'^8104\t8100\tbatch.exe\tWaiting\t0.000000\t2.000000\t2000.000\t\\*\tstart\t\tunknown\t\\*\tunknown\t' "$T/busy-cpu-8.truth"
	# CPU 0 is never idle after 0.2 ms
	[ "$(awk -F'\t' '$1 == 0 && $8 == 0' "$T/busy-cpu-8.truth" | wc -l)" = 1 ]
	gen wait-chain 8
	# U (9504) waits 1.02..8.5 ms for L (9508), which waited 1.5..7.9 ms for the disk DPC on idle CPU 1
	grep -q $'^9504\t9500\tviewer.exe\tWaiting\t1.020000\t8.500000\t7480.000\t0\t\t\tUserRequest\tuser\tWaiting\t10\t8.500000\t9508\t9500\tviewer.exe\t1\tthread\t\t' "$T/wait-chain-8.truth"
	grep -q $'^9508\t9500\tviewer.exe\tWaiting\t1.500000\t7.900000\t6400.000\t1\t\t\tExecutive\tkernel\tWaiting\t8\t7.900000\t0\t0\tIdle\t1\tdpc\tstorport.sys!0x4a1c\t' "$T/wait-chain-8.truth"
	grep -q $'^9508\t9500\tviewer.exe\tRunning\t7.920000\t8.600000\t680.000\t1\t' "$T/wait-chain-8.truth"
}

@test "the context switches written for each timeline encode its truth exactly (awk derivation), pointer size 4 and 8" {
	for s in $TRUTHS; do for p in 4 8; do
		gen "$s" "$p"
		derive "$T/$s-$p.evt" >"$T/d"
		truth_match "$T/$s-$p.truth" "$T/d" || fail "$s ptr$p: the trace does not encode the truth"
	done; done
}

@test "a change of the script shows in the trace: the awk derivation disagrees with a truth that is not the trace's" {
	gen lock-handoff 8
	sed 's/to_ms: 6.04}/to_ms: 6.05}/' "$SCEN/lock-handoff.yaml" >"$T/late.yaml"
	etlgen -o "$T/late.etl" --truth "$T/late.truth" "$T/late.yaml" 2>/dev/null
	derive "$T/lock-handoff-8.evt" >"$T/d"
	run truth_match "$T/late.truth" "$T/d"
	[ "$status" -eq 1 ] && [[ "$output" == *"end_ms: want \"6.050000\" got \"6.040000\""* ]] || fail "$output"
}

@test "etl2evt's Running, Ready and Waiting lines are the truth, field for field, pointer size 4 and 8, full/split/keyed stacks" {
	# every scenario and variant is checked, so that one difference does not hide others
	bad=""
	for s in $TRUTHS; do for p in 4 8; do
		gen "$s" "$p"
		intervals "$T/$s-$p.evt" >"$T/got"
		truth_match "$T/$s-$p.truth" "$T/got" || bad="$bad $s/ptr$p"
		# the switch and ReadyThread stacks recorded in two parts, or as keys defined at the end
		for m in split keys; do
			# (its truth: keys defined at the end make the trace a tick longer)
			etlgen -o "$T/m.etl" --truth "$T/m.truth" --stacks "$m" --pointer-size "$p" "$SCEN/$s.yaml" 2>/dev/null
			etl2evt -o "$T/m.evt" "$T/m.etl"
			intervals "$T/m.evt" >"$T/got"
			truth_match "$T/m.truth" "$T/got" || bad="$bad $s/ptr$p/$m"
		done
		# and the ReadyThread lines name the readying thread, the one running on the CPU
		awk -F'\t' '$2 == "ReadyThread" && $6 < 0 { print; bad = 1 } END { exit bad }' "$T/$s-$p.evt" ||
		    bad="$bad $s/ptr$p:ReadyThread"
	done; done
	[ -z "$bad" ] || fail "etl2evt differs from the truth in:$bad"
}

@test "conservation on every synthesised CSwitch trace (etl2evt's interval lines), pointer size 4 and 8" {
	for s in $TRUTHS cswitch cswitch-heavy kinds; do for p in 4 8; do
		etlgen -o "$T/$s.etl" --pointer-size "$p" "$SCEN/$s.yaml" 2>/dev/null
		etl2evt -o "$T/$s.evt" "$T/$s.etl" || [ "$s" = kinds ] || fail "etl2evt $s"
		span=$(span_ns "$T/$s.evt")
		# per CPU: Running of all threads and Idle = the span
		awk -F'\t' -v span="$span" '
		function ns(s,   i) { i = index(s, "."); return substr(s, 1, i - 1) * 1000 + substr(substr(s, i + 1) "000", 1, 3) }
		function attr(k,   i) { for (i = 8; i < NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
		$2 == "Running" { cpu[$3] += ns(attr("duration_us")) }
		END { for (c in cpu) if (cpu[c] != span) { print "CPU " c ": " cpu[c] " ns, span " span; bad = 1 }; exit bad || !length(cpu) }' "$T/$s.evt" ||
		    fail "$s ptr$p: per-CPU running time"
		# per thread: running + ready + waiting = its lifetime
		lifetimes "$T/$s.evt" >"$T/life"
		awk -F'\t' '
		function ns(s,   i) { i = index(s, "."); return substr(s, 1, i - 1) * 1000 + substr(substr(s, i + 1) "000", 1, 3) }
		function attr(k,   i) { for (i = 8; i < NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
		FNR == NR { split($0, f, " "); life[f[1]] = f[3] - f[2]; next }
		($2 == "Running" || $2 == "Ready" || $2 == "Waiting") && $6 != 0 { sum[$6] += ns(attr("duration_us")) }
		END { for (t in sum) if (sum[t] != life[t]) { print "thread " t ": " sum[t] " ns, lifetime " life[t]; bad = 1 }
		      exit bad || !length(sum) }' "$T/life" "$T/$s.evt" || fail "$s ptr$p: per-thread time"
	done; done
}

# refused NAME YAML GLOB: etlgen refuses the timeline (exit 2, message GLOB)
refused() {
	printf '%b' "$2" >"$T/$1.yaml"
	run etlgen -o "$T/$1.etl" --truth "$T/$1.truth" "$T/$1.yaml"
	[ "$status" -eq 2 ] || fail "$1.yaml: exit $status: $output"
	# shellcheck disable=SC2053
	[[ "$output" == $3 ]] || fail "$1.yaml: $output"
}

@test "timelines a trace could not show are refused with the reason" {
	M='machine: {cpus: 2, duration_ms: 10}\nprocesses:\n  - {name: a.exe, pid: 100, threads: [{tid: 101}, {tid: 102}]}\ntimeline:\n  threads:\n'
	refused overlap "${M}    - {tid: 101, steps: [{run: 0, to_ms: 5}, {wait: WrQueue}]}\n    - {tid: 102, steps: [{run: 0, to_ms: 3}, {wait: WrQueue}]}\n" \
	    '*threads 101 and 102 both run on CPU 0*'
	refused noswitch "${M}    - {tid: 101, steps: [{wait: WrQueue, to_ms: 1}, {run: 0, to_ms: 5}, {wait: WrQueue}]}\n" \
	    '*CPU 1 has no context switch*'
	refused notrunning "${M}    - {tid: 101, steps: [{wait: WrQueue, to_ms: 1}, {run: 0, to_ms: 2}, {wait: WrQueue, to_ms: 4, by: 102}, {ready: yes, to_ms: 5}, {run: 0}]}\n    - {tid: 102, steps: [{wait: WrQueue, to_ms: 1}, {run: 1, to_ms: 3}, {wait: WrQueue}]}\n" \
	    '*thread 102 readies 101 at 4.0000 ms but is not running then*'
	refused direct "${M}    - {tid: 101, steps: [{run: 0, to_ms: 2}, {wait: WrQueue, to_ms: 4, by: 102}, {run: 0}]}\n" \
	    '*a ready step comes between wait and run*'
	refused noexit "machine: {cpus: 1, duration_ms: 10}\nprocesses:\n  - {name: a.exe, pid: 100, threads: [{tid: 101, end_ms: 4}]}\ntimeline:\n  threads:\n    - {tid: 101, steps: [{wait: WrQueue, to_ms: 1}, {run: 0, to_ms: 5}, {wait: WrQueue}]}\n" \
	    '*a thread with end_ms ends with exit: yes*'
	refused lateend "machine: {cpus: 1, duration_ms: 10}\nprocesses:\n  - {name: a.exe, pid: 100, threads: [{tid: 101, end_ms: 6}]}\ntimeline:\n  threads:\n    - {tid: 101, steps: [{wait: WrQueue, to_ms: 1}, {run: 0, to_ms: 5}, {exit: yes}]}\n" \
	    '*end_ms (its ThreadEnd) falls inside the last run step*'
	refused nowaker "${M}    - {tid: 101, steps: [{run: 0, to_ms: 2}, {wait: WrQueue, to_ms: 4}, {ready: yes, to_ms: 5}, {run: 0}]}\n" \
	    '*a wait that ends needs by:*'
	run etlgen -o "$T/x.etl" --truth "$T/x.truth" "$SCEN/kinds.yaml"
	[ "$status" -eq 2 ] && [[ "$output" == *"has no timeline"* ]] || fail "$output"
}

@test "at volume (cswitch.yaml in both pointer sizes, cswitch-heavy.yaml): etl2evt's intervals are the awk derivation's" {
	for p in 4 8; do
		etlgen -o "$T/c.etl" --pointer-size "$p" "$SCEN/cswitch.yaml" 2>/dev/null
		etl2evt -o "$T/c.evt" "$T/c.etl"
		derive "$T/c.evt" >"$T/want"
		[ "$(wc -l <"$T/want")" -gt 1400 ] || fail "only $(wc -l <"$T/want") intervals"
		intervals "$T/c.evt" >"$T/got"
		truth_match "$T/want" "$T/got" || fail "cswitch ptr$p: etl2evt differs from the derivation"
	done
	# 16 CPUs, 64 threads, ReadyThread and switch-in stacks: ~160,000 intervals
	etlgen -o "$T/h.etl" "$SCEN/cswitch-heavy.yaml" 2>/dev/null
	etl2evt -o "$T/h.evt" "$T/h.etl"
	derive "$T/h.evt" >"$T/want"
	[ "$(wc -l <"$T/want")" -gt 150000 ] || fail "only $(wc -l <"$T/want") intervals"
	intervals "$T/h.evt" >"$T/got"
	truth_match "$T/want" "$T/got" || fail "cswitch-heavy: etl2evt differs from the derivation"
}

@test "DISK_TIME: a wait as long as a disk read its thread issued is the disk's (PerfView's rule), one that is not stays BLOCKED_TIME; pointer size 4 and 8" {
	# tests/scenarios/disk-wait.yaml: disk-dpc's timeline plus the DiskRead
	# completions of C's (7104) two reads, worked by hand:
	#   wait 2 -> 7.5 ms (5,500 us), read 1 took 5,480 us: 0.996 x, DISK_TIME
	#   wait 9 -> 14 ms (5,000 us), read 2 took 500 us: 0.1 x, BLOCKED_TIME
	for p in 4 8; do
		etlgen -o "$T/dw$p.etl" --pointer-size "$p" "$SCEN/disk-wait.yaml" 2>/dev/null || fail "etlgen $p"
		etl2evt -o "$T/dw$p.evt" "$T/dw$p.etl" 2>/dev/null || fail "etl2evt $p"
		# the completions name C as the issuing thread, with their times taken
		[ "$(awk -F'\t' '$2 == "DiskRead" { print $1, $6, $7 }' "$T/dw$p.evt" | tr '\n' '|')" = \
		    "7.480000 7104 5.48|13.970000 7104 0.5|" ] || fail "ptr$p: DiskRead lines"
		# each of C's waits, its start, duration and leaf pseudo-frame
		got=$(awk -F'\t' '$2 == "Waiting" && $6 == 7104 { n = split($NF, f, ";"); print $1, $7, f[n] }' "$T/dw$p.evt" |
		    tr '\n' '|')
		[ "$got" = "0.000000 0.7 BLOCKED_TIME|2.000000 5.5 DISK_TIME|9.000000 5 BLOCKED_TIME|16.000000 4.0025 BLOCKED_TIME|" ] ||
		    fail "ptr$p: C's waits: $got"
		# the stack stays where C blocked (NtReadFile ... KiSwapThread): only the leaf says why
		grep $'\tWaiting\t.*\t7104\t5.5\t' "$T/dw$p.evt" | grep -q $'\tntdll.dll!0x7034b;reader.exe!0x1840;KernelBase.dll!0x2a3c0;ntdll.dll!0x9e0f0;.*;DISK_TIME$' ||
		    fail "ptr$p: the DISK_TIME wait's stack"
		# the thread-time view carries the disk's 5,500 us under DISK_TIME, the rest of C's waits as BLOCKED_TIME
		stackfold --thread-time --roots=tid "$T/dw$p.evt" >"$T/f$p" 2>/dev/null
		[ "$(awk '/^reader.exe-7100\/7104;/ && /;DISK_TIME / { s += $NF } END { print s + 0 }' "$T/f$p")" = 5500 ] ||
		    fail "ptr$p: DISK_TIME in the view: $(grep DISK_TIME "$T/f$p")"
		# (0.7 + 5 ms where it blocked; the last wait, to the trace end, has no switch-in stack: 4,002.5 us in whole us)
		[ "$(awk '/^reader.exe-7100\/7104;.*;BLOCKED_TIME / { s += $NF } END { print s + 0 }' "$T/f$p")" = 5700 ] ||
		    fail "ptr$p: BLOCKED_TIME in the view: $(grep '7104;.*BLOCKED_TIME' "$T/f$p")"
		grep -Eqx 'reader.exe-7100/7104;BLOCKED_TIME 400[23]' "$T/f$p" || fail "ptr$p: the last wait: $(grep '7104;BLOCKED' "$T/f$p")"
	done
}

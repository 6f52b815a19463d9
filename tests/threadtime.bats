#!/usr/bin/env bats
# Thread time (issue 16): the Running, Ready and Waiting lines etl2evt
# derives from CSwitch and ReadyThread (docs/evt-format.md §3.1), checked
# on synthesised traces in both pointer sizes with awk over the evt stream,
# never with etl2evt's own numbers:
#  - conservation: per CPU, Running (Idle included) = the trace span, to the
#    tick; per thread, its intervals tile its lifetime without gap or overlap;
#  - every CSwitch is followed by the Running line of its old thread and the
#    Ready/Waiting line of its new one, ending at it;
#  - ReadyThread names the thread running on its CPU, and the Waiting line
#    it ends carries that waker, its stack, and the DPC that readied it;
#  - exact intervals of threadtime-edges.yaml, worked out by hand;
#  - bad input is counted and conservation still holds;
#  - --no-thread-time and -k behave as for any kind.
load helpers

SCEN="$BATS_TEST_DIRNAME/scenarios"

# gen NAME YAML PSIZE: $T/NAME.etl and its evt $T/NAME.evt
gen() {
	etlgen -o "$T/$1.etl" --pointer-size "$3" "$2" 2>/dev/null || fail "etlgen $2"
	etl2evt "$T/$1.etl" >"$T/$1.evt" || fail "etl2evt $1: exit $?"
}

# The awk functions every check shares: times (ms with 6 decimals, us with
# 3) to integer ns without floating point, and attribute lookup.
AWKLIB='
function ns(ms,   neg, a) {
	neg = ms ~ /^-/; sub(/^-/, "", ms); split(ms, a, ".")
	a[2] = substr(a[2] "000000", 1, 6)
	return (neg ? -1 : 1) * (a[1] * 1000000 + a[2])
}
function us(u,   a) { split(u, a, "."); return a[1] * 1000 + substr(a[2] "000", 1, 3) }
function attr(k,   i) { for (i = 8; i < NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
function span_of(   i) { for (i = 3; i <= NF; i++) if ($i ~ /^duration_ms=/) return ns(substr($i, 13)) }
function interval(k) { return k ~ /^(Running|Ready|Waiting|DPC|ThreadedDPC|TimerDPC|ISR)$/ }
'

# cpu_conservation EVT: every CPU with context switches has Running lines
# that tile the trace span: contiguous, summing to duration_ms exactly.
cpu_conservation() {
	awk -F'\t' "$AWKLIB"'
	/^#evt/ { span = span_of(); next }
	/^#/ { next }
	$2 == "CSwitch" { cs[$3] = 1 }
	$2 == "Running" { print $3, ns($1), ns(attr("end_ms")), us(attr("duration_us")), span }
	END { for (c in cs) print c, "cswitch" }' "$1" | sort -k1,1n -k2,2n -k3,3n | awk '
	$2 == "cswitch" { cs[$1] = 1; next }
	{ if ($1 in last && last[$1] != $2) { print "cpu " $1 ": gap or overlap at " $2; bad = 1 }
	  if ($3 - $2 != $4) { print "cpu " $1 ": end - start != duration at " $2; bad = 1 }
	  last[$1] = $3; sum[$1] += $4; span = $5; n++ }
	END {
		for (c in cs) if (sum[c] != span) { print "cpu " c ": running " sum[c] " ns, span " span; bad = 1 }
		for (c in sum) if (!(c in cs)) { print "cpu " c ": Running lines without CSwitch"; bad = 1 }
		if (!n) { print "no Running line"; bad = 1 }
		exit bad }'
}

# thread_conservation EVT: every thread's Running, Ready and Waiting lines
# tile its lifetime: from its ThreadStart (else the trace start) to its
# Terminated switch-out or ThreadEnd (else the trace end).  The trace end
# is the last logged line's time; its start that minus duration_ms.
thread_conservation() {
	awk -F'\t' "$AWKLIB"'
	/^#evt/ { span = span_of(); next }
	/^#/ { next }
	!interval($2) { t = ns($1); if (!have || t > t1) t1 = t; have = 1 }
	$2 == "ThreadStart" { born[$6] = ns($1) }
	$2 == "ThreadEnd" && !($6 in died) { died[$6] = ns($1) }
	$2 == "CSwitch" && attr("old_state") == "Terminated" { died[attr("old_tid")] = ns($1) }
	$2 == "CSwitch" || $2 == "ThreadDCStart" { if ($6 != 0) seen[$6] = 1 }
	($2 == "Running" || $2 == "Ready" || $2 == "Waiting") && $6 > 0 {
		print $6, ns($1), ns(attr("end_ms")), us(attr("duration_us")) }
	END {
		t0 = t1 - span
		for (t in seen) print t, "seen"
		for (t in born) print t, "born", born[t]
		for (t in died) print t, "died", died[t]
		print "-1", "span", t0, t1 }' "$1" | sort -k1,1n -k2,2n -k3,3n | awk '
	$2 == "span" { t0 = $3; t1 = $4; next }
	$2 == "seen" { seen[$1] = 1; next }
	$2 == "born" { born[$1] = $3; next }
	$2 == "died" { died[$1] = $3; next }
	{ if ($1 in last) { if (last[$1] != $2) { print "tid " $1 ": gap or overlap at " $2; bad = 1 } }
	  else first[$1] = $2
	  if ($3 - $2 != $4) { print "tid " $1 ": end - start != duration at " $2; bad = 1 }
	  last[$1] = $3; sum[$1] += $4 }
	END {
		for (t in seen) if (!(t in sum)) { print "tid " t ": switched but no interval"; bad = 1 }
		for (t in sum) {
			s = t in born ? born[t] : t0; e = t in died ? died[t] : t1
			if (first[t] != s || last[t] != e || sum[t] != e - s) {
				print "tid " t ": intervals " first[t] ".." last[t] " sum " sum[t] ", lifetime " s ".." e; bad = 1 }
		}
		exit bad }'
}

# cswitch_followers EVT: after each CSwitch line come the Running line of
# its old thread (same CPU, ending at the switch), then, unless Idle came
# in, a Ready or Waiting line of the new thread ending at the switch (a
# Waiting ended by a ReadyThread ends at ready_ms, its Ready at the switch).
cswitch_followers() {
	awk -F'\t' "$AWKLIB"'
	/^#/ { next }
	$2 == "CSwitch" { flush(); t = ns($1); cpu = $3; old = attr("old_tid"); nw = $6; k = 0; open = 1; ncs++; next }
	open && ($2 == "Running" || $2 == "Ready" || $2 == "Waiting") {
		k++
		if (k == 1 && !($2 == "Running" && $6 == old && $3 == cpu && ns(attr("end_ms")) == t)) {
			print "CSwitch at " t " cpu " cpu ": first follower is not the Running line of " old; bad = 1 }
		if (k > 1 && $6 == nw && ($2 == "Ready" || $2 == "Waiting") && ns(attr("end_ms")) == t) got = 1
		next }
	{ flush() }
	function flush() {
		if (open && nw != 0 && !got) { print "CSwitch at " t " cpu " cpu ": no Ready/Waiting of " nw " ending there"; bad = 1 }
		if (open && k == 0) { print "CSwitch at " t " cpu " cpu ": no Running line after it"; bad = 1 }
		open = 0; got = 0 }
	END { flush(); if (!ncs) { print "no CSwitch"; bad = 1 } exit bad }' "$1"
}

# wakers EVT: each ReadyThread names the thread the last CSwitch of its CPU
# switched in (before the first, that CSwitch's old thread); the Waiting
# line it ended names it with its CPU and the ReadyThread's stack; a DPC or
# ISR of that CPU running at that time (an ISR before a DPC) is named with
# its routine, even when it was logged after the switch-in that ended the
# wait.  Prints how many waits were checked.
wakers() {
	awk -F'\t' "$AWKLIB"'
	/^#/ { next }
	$2 == "CSwitch" { if (!($3 in cur)) first_old[$3] = attr("old_tid"); cur[$3] = $6; next }
	$2 ~ /^(DPC|ThreadedDPC|TimerDPC|ISR)$/ { nd++; dcpu[nd] = $3; ds[nd] = ns($1); de[nd] = ns(attr("end_ms")); dr[nd] = attr("routine"); isr[nd] = $2 == "ISR"; next }
	$2 == "ReadyThread" { nr++; rcpu[nr] = $3; rt[nr] = ns($1); rtid[nr] = $6; rfor[nr] = attr("ready_tid"); rstack[nr] = $NF
		want = ($3 in cur) ? cur[$3] : "first"; rwant[nr] = want; next }
	$2 == "Waiting" && attr("ready_ms") != "" { nw++; wt[nw] = ns(attr("ready_ms")); wtid[nw] = $6; wk[nw] = attr("waker_tid")
		wc[nw] = attr("waker_cpu"); ws[nw] = attr("waker_stack"); win[nw] = attr("waker_in"); wr[nw] = attr("waker_routine")
		pend = nw; next }
	$2 == "Ready" && pend && $6 == wtid[pend] { sw[pend] = ns(attr("end_ms")) }
	{ pend = 0 }
	END {
		for (i = 1; i <= nr; i++) {
			w = rwant[i] == "first" ? "" : rwant[i]
			if (w != "" && rtid[i] != w) { print "ReadyThread at " rt[i] " cpu " rcpu[i] ": tid " rtid[i] ", running " w; bad = 1 }
		}
		for (j = 1; j <= nw; j++) {
			m = 0
			for (i = 1; i <= nr; i++) if (rt[i] == wt[j] && rfor[i] == wtid[j]) m = i
			if (!m) { print "Waiting of " wtid[j] " ready at " wt[j] ": no such ReadyThread"; bad = 1; continue }
			if (wk[j] != rtid[m] || wc[j] != rcpu[m] || ws[j] != rstack[m]) {
				print "Waiting of " wtid[j] " ready at " wt[j] ": waker " wk[j] "@" wc[j] " [" ws[j] "], ReadyThread " rtid[m] "@" rcpu[m] " [" rstack[m] "]"; bad = 1 }
			d = 0
			for (i = 1; i <= nd; i++) if (dcpu[i] == rcpu[m] && ds[i] <= wt[j] && wt[j] <= de[i] && (!d || isr[i])) d = i
			if ((d ? (isr[d] ? "isr" : "dpc") : "thread") != win[j] || (d && dr[d] != wr[j])) {
				print "Waiting of " wtid[j] " ready at " wt[j] ": waker_in=" win[j] " " wr[j] ", DPC " (d ? dr[d] : "none"); bad = 1 }
		}
		print nw
		exit bad }' "$1"
}

# first_olds EVT: ReadyThreads before their CPU's first CSwitch name that CSwitch's old thread.
first_olds() {
	awk -F'\t' "$AWKLIB"'
	/^#/ { next }
	$2 == "ReadyThread" && !($3 in seen) { pend[$3] = pend[$3] " " $6; next }
	$2 == "CSwitch" && !($3 in seen) { seen[$3] = 1; n = split(pend[$3], a, " ")
		for (i = 1; i <= n; i++) if (a[i] != attr("old_tid")) { print "cpu " $3 ": ReadyThread by " a[i] " before the first CSwitch, whose old thread is " attr("old_tid"); bad = 1 } }
	END { exit bad }' "$1"
}

all_checks() {
	cpu_conservation "$1" || fail "$1: per-CPU conservation"
	thread_conservation "$1" || fail "$1: per-thread conservation"
	cswitch_followers "$1" || fail "$1: CSwitch followers"
	wakers "$1" >"$T/nwaits" || fail "$1: wakers"
	# (kinds.yaml writes one ReadyThread with a full header naming its thread: that one is kept)
	case "$1" in *kinds*) ;; *) first_olds "$1" || fail "$1: wakers before the first CSwitch" ;; esac
}

@test "threadtime: conservation, followers and wakers on every synthesised CSwitch trace, 32- and 64-bit" {
	for p in 8 4; do
		for s in cswitch kinds lock-handoff threadtime-edges; do
			gen "$s$p" "$SCEN/$s.yaml" "$p"
			all_checks "$T/$s$p.evt"
			echo "$s ptr$p: $(cat "$T/nwaits") waits with a waker checked"
		done
	done
	# the traces hold what is checked: waits with wakers, a DPC waker, stacks to compare
	[ "$(wakers "$T/cswitch8.evt")" -gt 100 ] || fail "cswitch: few waits"
	grep -q 'waker_in=dpc' "$T/threadtime-edges4.evt" || fail "no DPC waker"
	grep -q 'waker_stack=' "$T/lock-handoff4.evt" || fail "no waker stack"
}

@test "threadtime: the checks catch a broken stream (a Running line lost, a waker changed)" {
	gen e "$SCEN/threadtime-edges.yaml" 8
	all_checks "$T/e.evt"
	awk -F'\t' '!($2 == "Running" && $1 == "5.050000")' "$T/e.evt" >"$T/lost.evt"
	! cpu_conservation "$T/lost.evt" >/dev/null || fail "lost Running line not seen (cpu)"
	! thread_conservation "$T/lost.evt" >/dev/null || fail "lost Running line not seen (thread)"
	! cswitch_followers "$T/lost.evt" >/dev/null || fail "lost Running line not seen (followers)"
	gen l "$SCEN/lock-handoff.yaml" 8
	sed 's/waker_tid=6104/waker_tid=6108/' "$T/l.evt" >"$T/waker.evt"
	! wakers "$T/waker.evt" >/dev/null || fail "changed waker not seen"
	sed 's/waker_in=dpc/waker_in=thread/' "$T/e.evt" >"$T/dpc.evt"
	! wakers "$T/dpc.evt" >/dev/null || fail "lost DPC waker not seen"
}

# The intervals of threadtime-edges.yaml, from its comments (not from etl2evt):
# tid kind cpu start end [attributes that must be there]; END is the trace's end.
EDGES_TRUTH='7104 Running 0 START 3 edge=start
7104 Waiting 0 3 5 wait_reason=WrQueue wait_mode=user old_state=Waiting ready_ms=5.000000 waker_cpu=1 waker_in=dpc waker_routine=storport.sys!0x4a1c
7104 Ready 0 5 5.05 from=readied
7104 Running 0 5.05 8 prio=9
7104 Ready 0 8 9 from=preempted
7104 Running 0 9 15 prio=9
7104 Ready -1 15 END from=preempted edge=end
7108 Waiting -1 START 1 wait_reason=unknown old_state=unknown edge=start
7108 Running 1 1 4 prio=8
7108 Waiting 1 4 END wait_reason=UserRequest old_state=Waiting edge=end
0 Running 0 3 5.05
0 Running 0 8 9
0 Running 0 15 END edge=end
0 Running 1 START 1 edge=start
0 Running 1 4 END edge=end'

@test "threadtime: threadtime-edges.yaml decodes to its intervals exactly, 32- and 64-bit" {
	for p in 8 4; do
		gen e$p "$SCEN/threadtime-edges.yaml" "$p"
		printf '%s\n' "$EDGES_TRUTH" >"$T/truth"
		awk -F'\t' -v OFS=' ' "$AWKLIB"'
		FNR == NR { want[FNR] = $0; nw = FNR; next }
		/^#evt/ { span = span_of(); next }
		/^#/ { next }
		!interval($2) { t = ns($1); if (t > t1) t1 = t }
		$2 == "Running" || $2 == "Ready" || $2 == "Waiting" { got[++ng] = $0 }
		END {
			t0 = t1 - span
			for (i = 1; i <= nw; i++) {
				n = split(want[i], w, " ")
				s = w[4] == "START" ? t0 : ns(w[4]); e = w[5] == "END" ? t1 : ns(w[5])
				hit = 0
				for (j = 1; j <= ng && !hit; j++) {
					split(got[j], g, "\t")
					if (g[6] != w[1] || g[2] != w[2] || g[3] != w[3] || ns(g[1]) != s) continue
					$0 = got[j]
					if (ns(attr("end_ms")) != e) continue
					ok = 1
					for (k = 6; k <= n; k++) if (index("\t" got[j] "\t", "\t" w[k] "\t") == 0) ok = 0
					hit = ok
				}
				if (!hit) { print "missing: " want[i]; bad = 1 }
			}
			if (ng != nw) { print ng " thread-time lines, " nw " expected"; bad = 1 }
			exit bad }' "$T/truth" FS='\t' "$T/e$p.evt" || fail "ptr$p"
	done
	# the stacks: the wait is charged to where it blocked, the leaf says what kind of time
	grep -P '\tWaiting\t0\tcopy.exe\t7100\t7104\t.*\tntdll.dll!0x7034b;copy.exe!0x2200;copy.exe!0x2600;ntdll.dll!0x9e0ba;ntoskrnl.exe!0x7c010;BLOCKED_TIME$' "$T/e8.evt" >/dev/null || fail "Waiting stack"
	grep -P '\tReady\t0\tcopy.exe\t7100\t7104\t1\t.*from=preempted\t.*;READIED_TIME$' "$T/e8.evt" >/dev/null || fail "Ready stack"
	grep -P '\tRunning\t.*\t$' "$T/e8.evt" >/dev/null || fail "Running lines have an empty stack"
	! grep -P '\tRunning\t.*[^\t]$' "$T/e8.evt" || fail "a Running line with a stack"
}

# A scenario of explicit events with what real traces get wrong, each once
# (worked out by hand in the comments); the CSwitch at 8 ms is moved to
# 1.5 ms in the file afterwards (patch_ts): time going back on CPU 0.
bad_yaml() {
	cat <<'EOF'
machine: {cpus: 2, duration_ms: 10, start_utc: 2021-03-02T04:00:00Z, buffer_size: 8192, seed: 3}
processes:
  - name: bad.exe
    pid: 800
    images:
      - {path: '\Device\HarddiskVolume2\bad.exe', base: 0x400000, size: 0x10000}
    threads:
      - {tid: 804, start_addr: bad.exe+0x100}
      - {tid: 808, start_addr: bad.exe+0x100}
      - {tid: 812, start_addr: bad.exe+0x100}
events:
  # CPU 0 runs 804 from the start, then Idle
  - {kind: CSwitch, t_ms: 1.0, cpu: 0, new_tid: 0, old_tid: 804, old_state: Waiting, wait_reason: UserRequest}
  # 804 switched out again with no switch-in (Idle runs on CPU 0): a switch-out anomaly
  - {kind: CSwitch, t_ms: 2.0, cpu: 0, new_tid: 808, old_tid: 804, old_state: Waiting}
  # a ReadyThread for 808, which runs: a ReadyThread anomaly
  - {kind: ReadyThread, t_ms: 2.5, cpu: 1, tid: 812, ready_tid: 808, header: full}
  # 804 switched in with no ReadyThread since it waited at 1.0: a wait without waker
  - {kind: CSwitch, t_ms: 3.0, cpu: 1, new_tid: 804, old_tid: 812, old_state: Waiting}
  # 804 switched in on CPU 0 while it runs on CPU 1: a switch-in anomaly (CPU 1's thread unknown)
  - {kind: CSwitch, t_ms: 4.0, cpu: 0, new_tid: 804, old_tid: 808, old_state: Waiting}
  - {kind: ReadyThread, t_ms: 4.5, cpu: 1, tid: 812, ready_tid: 812, header: full}
  - {kind: CSwitch, t_ms: 5.0, cpu: 1, new_tid: 812, old_tid: 804, old_state: Waiting}
  # moved to 1.5 ms: a CPU's time going back
  - {kind: CSwitch, t_ms: 8.0, cpu: 0, new_tid: 0, old_tid: 804, old_state: Waiting, header: full}
EOF
}

# patch_ts ETL OLD_TICKS NEW_TICKS: the full-header CSwitch record stamped OLD gets NEW.
patch_ts() {
	python3 -c 'import struct, sys
p, old, new = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
b = bytearray(open(p, "rb").read())
n = 0
for i in range(0, len(b) - 0x28):
    if b[i + 2] in (1, 2) and b[i + 3] == 0xC0 and b[i + 6] == 36 and b[i + 7] == 5 \
            and struct.unpack_from("<Q", b, i + 16)[0] == old:
        struct.pack_into("<Q", b, i + 16, new)
        n += 1
open(p, "wb").write(b)
sys.exit(n != 1)' "$@"
}

# header_ticks ETL: the raw timestamp of the logfile header event (time 0 of the evt stream)
header_ticks() {
	python3 -c 'import struct, sys
b = open(sys.argv[1], "rb").read()
print(struct.unpack_from("<Q", b, 0x48 + 16)[0])' "$1"
}

@test "threadtime: bad input is counted (#skipped what=threadtime), time still conserved, exit 0" {
	bad_yaml >"$T/bad.yaml"
	for p in 8 4; do
		etlgen -o "$T/bad.etl" --pointer-size "$p" "$T/bad.yaml" 2>/dev/null
		freq=$(etl2evt -k CSwitch "$T/bad.etl" | head -1 | tr '\t' '\n' | sed -n 's/^clock_freq=//p')
		base=$(header_ticks "$T/bad.etl")
		patch_ts "$T/bad.etl" $((base + freq * 8 / 1000)) $((base + freq * 15 / 10000)) ||
		    fail "ptr$p: no record to patch"
		run etl2evt -o "$T/bad.evt" "$T/bad.etl"
		[ "$status" -eq 0 ] || fail "exit $status: $output"
		grep -qP '^1\.500000\tCSwitch\t0\t' "$T/bad.evt" || fail "ptr$p: the patched CSwitch is not at 1.5 ms"
		cpu_conservation "$T/bad.evt" || fail "ptr$p: per-CPU conservation"
		thread_conservation "$T/bad.evt" || fail "ptr$p: per-thread conservation"
		for d in 'switch-outs of a thread not running' 'switch-ins of a thread already running' \
		    'ReadyThread for a thread running' 'switch-ins of a waiting thread with no ReadyThread' \
		    'thread-time events earlier'; do
			grep -P "^#skipped\twhat=threadtime\tcount=1\tdetail=$d" "$T/bad.evt" >/dev/null ||
			    fail "ptr$p: not counted once: $d ($(grep threadtime "$T/bad.evt"))"
		done
		[ "$(grep -c '^#skipped.what=threadtime' "$T/bad.evt")" -eq 5 ] || fail "ptr$p: other anomalies"
	done
}

@test "threadtime: --no-thread-time is the stream without the three kinds and their #skipped lines" {
	for s in cswitch lock-handoff; do
		gen "$s" "$SCEN/$s.yaml" 8
		etl2evt --no-thread-time "$T/$s.etl" >"$T/$s.off"
		# (#symbols lookups= counts the frames made: waker_routine= makes some too)
		grep -Pv '^[^#][^\t]*\t(Running|Ready|Waiting)\t|^#skipped\twhat=threadtime\t|^#stats\t' "$T/$s.evt" |
		    sed 's/\tlookups=[0-9]*//' >"$T/$s.want"
		grep -v '^#stats' "$T/$s.off" | sed 's/\tlookups=[0-9]*//' | textdiff "$T/$s.want" - || fail "$s"
		! grep -qP '\t(Running|Ready|Waiting)\t' "$T/$s.off" || fail "$s: thread-time lines"
	done
	etl2evt --help | grep -q -- '--no-thread-time' || fail "--help"
	grep -qF -- 'no\-thread\-time' "$ROOT/docs/etl2evt.1" || fail "man page"
}

@test "threadtime: -k selects the kinds; lines keep their stacks when CSwitch is not selected" {
	gen l "$SCEN/lock-handoff.yaml" 8
	etl2evt -k Waiting,Ready "$T/l.etl" | grep -v '^#' >"$T/k"
	grep -P '^[^#][^\t]*\t(Ready|Waiting)\t' "$T/l.evt" | textdiff - "$T/k" || fail "-k Waiting,Ready"
	grep -q 'waker_stack=' "$T/k" || fail "no waker stack without ReadyThread lines"
	etl2evt -p app.exe -k Running "$T/l.etl" | grep -v '^#' >"$T/r"
	grep -P '^[^#][^\t]*\tRunning\t[^\t]*\tapp.exe\t' "$T/l.evt" | textdiff - "$T/r" || fail "-p app.exe -k Running"
}

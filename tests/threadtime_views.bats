#!/usr/bin/env bats
# The thread-time views: stackfold/render --thread-time [--readied-by],
# render threadtime, intervals, waitchain.  Input: evt streams written by
# tests/tt_evt.py from a hand-written timeline, so every expected number
# below is worked out by hand from the timeline (and cross-checked with
# awk over the same stream); the last tests run the views on etl2evt's
# output of a synthesised CSwitch trace when etl2evt writes the kinds.
load helpers

# Span 0..100 ms, two CPUs, 1 ms samples.
#   A = app.exe (10) 101: runs 0-10 on CPU 0, waits 10-38 on a lock
#       (WrResource) until B readies it from worker.exe!Release, ready
#       38-45 (CPU 0 is C's), runs 45-100.
#   B = worker.exe (20) 202: runs 0-5 on CPU 1, waits 5-30 on a disk read
#       (DISK_TIME) until the disk DPC readies it on CPU 1 (Idle was
#       running), ready 30-32, runs 32-50, waits 50-100 (UserRequest).
#   C = app.exe (10) 303: waits 0-10 (WrQueue) until A readies it from
#       app.exe!Signal, ready 10-12, runs 12-45, waits 45-100 (WrQueue).
#   CPU 0: A 0-10, Idle 10-12, C 12-45, A 45-100.  CPU 1: B 0-5, Idle 5-32,
#   B 32-50, Idle 50-100.
#   Samples: A 3 at 1,2,3 and one of count 2 at 50 (5 ms); C 2 (2 ms);
#   B 1 (1 ms); Idle 1 (left out of thread time).
timeline() {
	cat <<-'EOF'
	span 0 100
	cpus 2
	interval 1
	thread 0 0 Idle
	thread 101 10 app.exe
	thread 202 20 worker.exe
	thread 303 10 app.exe
	101 run 0 10 0
	101 wait 10 38 0 reason=WrResource stack=app.exe!main;app.exe!Lock by=202@1 wstack=worker.exe!Work;worker.exe!Release
	101 ready 38 45 0 from=readied stack=app.exe!main;app.exe!Lock
	101 run 45 100 0
	202 run 0 5 1
	202 wait 5 30 1 reason=Executive leaf=DISK_TIME stack=worker.exe!Work;worker.exe!ReadFile by=0@1 in=dpc routine=disk.sys!DiskDpc
	202 ready 30 32 1 stack=worker.exe!Work;worker.exe!ReadFile
	202 run 32 50 1
	202 wait 50 100 1 reason=UserRequest stack=worker.exe!Idle
	303 wait 0 10 0 reason=WrQueue stack=app.exe!Worker;app.exe!Get by=101@0 wstack=app.exe!main;app.exe!Signal
	303 ready 10 12 0 stack=app.exe!Worker;app.exe!Get
	303 run 12 45 0
	303 wait 45 100 0 reason=WrQueue stack=app.exe!Worker;app.exe!Get
	101 sample 1 0 app.exe!main;app.exe!Compute
	101 sample 2 0 app.exe!main;app.exe!Compute
	101 sample 3 0 app.exe!main;app.exe!Compute
	101 sample 50 0 app.exe!main;app.exe!Compute count=2
	303 sample 20 0 app.exe!Worker
	303 sample 21 0 app.exe!Worker
	202 sample 33 1 worker.exe!Work
	0 sample 60 1 ntoskrnl.exe!KiIdleLoop
	EOF
}

local_setup() {
	timeline | python3 "$ROOT/tests/tt_evt.py" > "$T/tl.evt"
}

# folded total per "Thread (N)" frame, in the unit written
folded_per_thread() {
	awk -v OFMT=%.3f '{ n = $NF; $NF = ""; if (match($0, /Thread \([0-9]+\)/)) s[substr($0, RSTART + 8, RLENGTH - 9)] += n }
	    END { for (t in s) print t, s[t] }' "$1" | sort -n
}

@test "stackfold --thread-time: per thread, sampled CPU + ready + waiting, in us; Idle left out" {
	stackfold --thread-time "$T/tl.evt" > "$T/f"
	# by hand: A 5 + 7 + 28 ms, B 1 + 2 + 75, C 2 + 2 + 65
	[ "$(folded_per_thread "$T/f" | tr '\n' ' ')" = "101 40000 202 78000 303 69000 " ]
	# the same from awk over the stream: Sample weight + Ready + Waiting, Idle (pid 0) out
	awk -F'\t' '!/^#/ && $5 != 0 && ($2 == "Sample" || $2 == "Ready" || $2 == "Waiting") {
	    s[$6] += $7 * 1000 } END { for (t in s) print t, s[t] }' "$T/tl.evt" | sort -n > "$T/awk"
	folded_per_thread "$T/f" | textdiff - "$T/awk"
	! grep -q -e Idle -e KiIdleLoop "$T/f"
	# roots are PerfView's process and thread frames
	grep -qx 'Process64 app (10);Thread (101);app.exe!main;app.exe!Lock;BLOCKED_TIME 28000' "$T/f"
	# --roots still chooses: FlameGraph's spelling
	stackfold --thread-time --roots=tid "$T/tl.evt" | grep -qx 'app.exe-10/101;app.exe!main;app.exe!Lock;READIED_TIME 7000'
}

@test "stackfold --thread-time: CPU_TIME, READIED_TIME, BLOCKED_TIME and DISK_TIME carry exactly their kinds' totals" {
	stackfold --thread-time "$T/tl.evt" > "$T/f"
	leaf() { awk -v L="$1" '{ n = split($1 " " $0, a, ";"); split(a[n], b, " ") } b[1] == L { s += $NF } END { print s + 0 }' "$T/f"; }
	# by hand: CPU 5+2+1 ms; ready 7+2+2; blocked 28+50+10+55; disk 25
	[ "$(leaf CPU_TIME)" = 8000 ]
	[ "$(leaf READIED_TIME)" = 11000 ]
	[ "$(leaf BLOCKED_TIME)" = 143000 ]
	[ "$(leaf DISK_TIME)" = 25000 ]
	# and from awk: each leaf's total = its kind's weight (Waiting split by the stack's leaf)
	awk -F'\t' '!/^#/ && $5 != 0 { n = split($NF, f, ";")
	    if ($2 == "Sample") s["CPU_TIME"] += $7 * 1000
	    else if ($2 == "Ready" || $2 == "Waiting") s[f[n]] += $7 * 1000 }
	    END { for (k in s) print k, s[k] }' "$T/tl.evt" | sort > "$T/awk"
	for k in CPU_TIME READIED_TIME BLOCKED_TIME DISK_TIME; do echo "$k $(leaf $k)"; done | sort |
	    textdiff - "$T/awk"
	# a stream whose Ready/Waiting lines lack the pseudo-frame still gets it
	sed 's/;READIED_TIME$//; s/;BLOCKED_TIME$//' "$T/tl.evt" | stackfold --thread-time > "$T/g"
	grep -qx 'Process64 app (10);Thread (101);app.exe!main;app.exe!Lock;READIED_TIME 7000' "$T/g"
	grep -qx 'Process64 app (10);Thread (101);app.exe!main;app.exe!Lock;BLOCKED_TIME 28000' "$T/g"
}

@test "stackfold --readied-by: under each wait, (READIED_BY), the waker's process, thread and stack; a DPC's routine" {
	stackfold --readied-by "$T/tl.evt" > "$T/f"
	grep -qx 'Process64 app (10);Thread (101);app.exe!main;app.exe!Lock;BLOCKED_TIME;(READIED_BY);Process64 worker (20);Thread (202);worker.exe!Work;worker.exe!Release 28000' "$T/f"
	grep -qx 'Process64 app (10);Thread (303);app.exe!Worker;app.exe!Get;BLOCKED_TIME;(READIED_BY);Process64 app (10);Thread (101);app.exe!main;app.exe!Signal 10000' "$T/f"
	grep -qx 'Process64 worker (20);Thread (202);worker.exe!Work;worker.exe!ReadFile;DISK_TIME;(READIED_BY);Process64 Idle (0);Thread (0);disk.sys!DiskDpc 25000' "$T/f"
	# waits no ReadyThread ended keep their plain leaf
	grep -qx 'Process64 app (10);Thread (303);app.exe!Worker;app.exe!Get;BLOCKED_TIME 55000' "$T/f"
	# the totals do not move
	[ "$(awk '{ s += $NF } END { print s }' "$T/f")" = 187000 ]
	stackfold --readied-by --roots=tid "$T/tl.evt" |
	    grep -qx 'app.exe-10/101;app.exe!main;app.exe!Lock;BLOCKED_TIME;(READIED_BY);worker.exe-20/202;worker.exe!Work;worker.exe!Release 28000'
	# without the option nothing of this: Sample lines only, as before
	stackfold "$T/tl.evt" > "$T/plain"
	! grep -q -e CPU_TIME -e READIED_BY -e BLOCKED_TIME "$T/plain"
	stackfold --stats --readied-by "$T/tl.evt" 2>&1 >/dev/null |
	    grep -q 'Idle left out 1 events, 1000.000 us; waits with READIED_BY frames 3'
}

@test "render flame|tree|byname --thread-time take the same options" {
	render flame --thread-time "$T/tl.evt" > "$T/s.svg"
	grep -q 'BLOCKED_TIME' "$T/s.svg"
	grep -q 'READIED_TIME' "$T/s.svg"
	render flame --readied-by "$T/tl.evt" | grep -q 'READIED_BY'
	render tree --tsv --thread-time "$T/tl.evt" > "$T/t"
	# ROOT's inclusive = 40000 + 78000 + 69000 us
	awk -F'\t' '$NF == "ROOT" { print $2 }' "$T/t" | grep -qx 187000
	render byname --tsv --thread-time --unit=ms "$T/tl.evt" > "$T/b"
	awk -F'\t' '$NF == "DISK_TIME" { print $1 }' "$T/b" | grep -qx 25
}

@test "render threadtime: per thread running, ready, waiting, counts, top wait reasons; per CPU running + idle = span" {
	render threadtime --tsv "$T/tl.evt" > "$T/t"
	head -1 "$T/t" | grep -q $'^process\tpid\ttid\tlifetime_ms\trunning_ms\trunning_pct\tready_ms'
	# by hand (see the timeline): sorted by lifetime, then pid, tid; Idle last
	cat > "$T/want" <<-'EOF'
	app.exe	10	101	100	65	65.00	7	7.00	28	28.00	1	1	WrResource	28				
	app.exe	10	303	100	33	33.00	2	2.00	65	65.00	1	2	WrQueue	65				
	worker.exe	20	202	100	23	23.00	2	2.00	75	75.00	1	2	UserRequest	50	Executive	25		
	Idle	0	0	79	79	100.00	0	0.00	0	0.00	3	0						
	EOF
	sed -n '2,5p' "$T/t" | textdiff - "$T/want"
	# the sums from awk over the stream, per thread: running, ready, waiting
	awk -F'\t' '!/^#/ && ($2 == "Running" || $2 == "Ready" || $2 == "Waiting") { s[$6 " " $2] += $7 }
	    END { for (k in s) print k, s[k] }' "$T/tl.evt" | sort > "$T/awk"
	awk -F'\t' 'NR > 1 && NF > 10 { print $3, "Running", $5; if ($7) print $3, "Ready", $7; if ($9) print $3, "Waiting", $9 }' "$T/t" |
	    sort | textdiff - "$T/awk"
	# per CPU: running + idle = the span (0..100), by hand and by awk
	awk -F'\t' '$1 == "cpu" { on = 1; next } on' "$T/t" > "$T/cpu"
	printf '0\t98\t2\t100\t98.00\n1\t23\t77\t100\t23.00\n' | textdiff - "$T/cpu"
	awk -F'\t' '!/^#/ && $2 == "Running" { s[$3] += $7 } END { for (c in s) print c, s[c] }' "$T/tl.evt" |
	    sort -n | textdiff - <(awk '{ print $1, $2 + $3 }' "$T/cpu")
	# aligned text for people
	render threadtime "$T/tl.evt" > "$T/text"
	grep -q '^worker.exe   20  202   100.000   23.000   23.00  2.000    2.00   75.000  75.00           1      2  UserRequest 50, Executive 25$' "$T/text"
	grep -q '^  1   23.000  77.000  100.000  23.00$' "$T/text"
}

@test "render intervals: one thread's lines in the window, clipped, in start order, with wakers" {
	render intervals --tid 101 --from 5 --to 50 --tsv "$T/tl.evt" > "$T/i"
	cat > "$T/want" <<-'EOF'
	5.000	10.000	5	Running	0	-						
	10.000	38.000	28	Waiting	0	WrResource	worker.exe	20	202	thread		app.exe!main;app.exe!Lock;BLOCKED_TIME
	38.000	45.000	7	Ready	0	readied						app.exe!main;app.exe!Lock;READIED_TIME
	45.000	50.000	5	Running	0	-						
	EOF
	tail -n +2 "$T/i" | textdiff - "$T/want"
	# = the stream's lines of tid 101, clipped by awk, sorted by start
	awk -F'\t' -v F=5 -v TO=50 '!/^#/ && $6 == 101 && ($2 == "Running" || $2 == "Ready" || $2 == "Waiting") {
	    for (i = 8; i < NF; i++) if ($i ~ /^end_ms=/) e = substr($i, 8) + 0
	    s = $1 + 0; if (e <= F || s >= TO) next
	    if (s < F) s = F; if (e > TO) e = TO
	    printf "%.3f\t%.3f\t%s\n", s, e, $2 }' "$T/tl.evt" | sort -n > "$T/awk"
	tail -n +2 "$T/i" | cut -f1,2,4 | textdiff - "$T/awk"
	# the whole life with no window: the running/ready/waiting sums of the table
	render intervals --tid 202 "$T/tl.evt" > "$T/text"
	grep -q '^# in these intervals: running 23.000 ms, ready 2.000 ms, waiting 75.000 ms$' "$T/text"
	grep -q '^ 5.000   30.000    25.000  Waiting    1  Executive    DPC disk.sys!DiskDpc (in Idle (0) 0)  worker.exe!Work;worker.exe!ReadFile;DISK_TIME$' "$T/text"
}

@test "render waitchain: A waited for B, B waited for the disk DPC" {
	render waitchain --tid 101 --tsv "$T/tl.evt" > "$T/w"
	cat > "$T/want" <<-'EOF'
	0	app.exe	10	101	waiting		10.000	38.000	28	WrResource	worker.exe	20	202	thread	
	1	worker.exe	20	202	running since	32.000	5.000	30.000	25	Executive	Idle	0	0	dpc	disk.sys!DiskDpc
	EOF
	tail -n +2 "$T/w" | textdiff - "$T/want"
	render waitchain --tid 101 "$T/tl.evt" > "$T/text"
	grep -q '^# wait chain of thread 101 (app.exe, pid 10), its longest wait: 10.000..38.000 ms' "$T/text"
	grep -q 'worker.exe (20) 202 on CPU 1 at 38.000$' "$T/text"
	grep -q 'running since 32.000 .*Executive   DPC disk.sys!DiskDpc on CPU 1 at 30.000$' "$T/text"
	# --at picks the wait covering the time; C's waker A had not waited before: the chain ends there
	render waitchain --tid 303 --at 5 --tsv "$T/tl.evt" | tail -n +2 > "$T/c"
	[ "$(wc -l < "$T/c")" -eq 2 ]
	grep -q $'^0\tapp.exe\t10\t303\twaiting\t\t0.000\t10.000\t10\tWrQueue\tapp.exe\t10\t101\tthread\t$' "$T/c"
	grep -q $'^1\tapp.exe\t10\t101\trunning since\t0.000\t' "$T/c"
	# --min-us: B's 25 ms disk wait is below 30000 us, so the chain stops at B
	render waitchain --tid 101 --min-us 30000 --tsv "$T/tl.evt" | tail -n +2 > "$T/m"
	grep -q $'^1\tworker.exe\t20\t202\trunning (last wait < --min-us) since\t32.000\t\t' "$T/m"
}

@test "render waitchain: a chain longer than 8 hops stops at 8" {
	# ten threads on one CPU: thread 100+i waits 4 ms until 90-5i, readied by
	# thread 100+i+1, which runs from 85-5i (just after its own wait) to 90-5i
	python3 - > "$T/long.tl" <<-'EOF'
	print("span 0 100\ncpus 1")
	for i in range(10):
	    t, end = 100 + i, 90 - 5 * i
	    print("thread %d 5 chain.exe" % t)
	    by = "by=%d@0" % (t + 1) if i < 9 else ""
	    print("%d wait %d %d 0 reason=WrQueue %s" % (t, end - 4, end, by))
	    print("%d run %d %d 0" % (t, end, end + 5 if i else 100))
	EOF
	python3 "$ROOT/tests/tt_evt.py" < "$T/long.tl" > "$T/long.evt"
	render waitchain --tid 100 --tsv "$T/long.evt" | tail -n +2 > "$T/w"
	[ "$(wc -l < "$T/w")" -eq 9 ]
	[ "$(cut -f1 "$T/w" | tail -1)" = 8 ]
	[ "$(cut -f4 "$T/w" | tr '\n' ' ')" = "100 101 102 103 104 105 106 107 108 " ]
}

@test "thread-time views: bad lines counted (exit 1), no kinds or no evt (exit 2), --tid required" {
	{ cat "$T/tl.evt"; printf '1.0\tWaiting\t0\tapp.exe\t10\t101\tx\tend_ms=2\tBLOCKED_TIME\n'; } > "$T/bad.evt"
	run render threadtime "$T/bad.evt"
	[ "$status" -eq 1 ]
	[[ "$output" == *"bad.evt:"*"line skipped"* ]]
	printf '#evt\t1\n0.1\tSample\t0\ta.exe\t1\t2\t1\tx\n' > "$T/none.evt"
	run render threadtime "$T/none.evt"
	[ "$status" -eq 2 ]
	[[ "$output" == *"no Running, Ready or Waiting lines"* ]]
	printf 'a;b 1\n' > "$T/folded"
	run render threadtime "$T/folded"
	[ "$status" -eq 2 ]
	[[ "$output" == *"not an evt stream"* ]]
	run render intervals "$T/tl.evt"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--tid"* ]]
	run render waitchain --tid 999 "$T/tl.evt"
	[ "$status" -eq 2 ]
	[[ "$output" == *"no Waiting line of thread 999"* ]]
	run render intervals --tid 101 --from 60 --to 50 "$T/tl.evt"
	[ "$status" -eq 2 ]
}

@test "thread-time views: names from a trace are escaped in text, kept in evt escaping in TSV" {
	sed 's/app\.exe\t10\t/ev%09il\x1b[31m.exe\t10\t/' "$T/tl.evt" > "$T/esc.evt"
	render threadtime "$T/esc.evt" > "$T/text"
	! grep -q $'\x1b' "$T/text"
	grep -q 'ev\\til\\x1b\[31m.exe' "$T/text"
	render threadtime --tsv "$T/esc.evt" | grep -q $'^ev%09il.*\t10\t101\t'
}

# ---- on etl2evt's output of a synthesised CSwitch trace ----------------

# the cswitch scenario through etlgen and etl2evt (thread time on by default)
cswitch_evt() {
	etlgen -o "$T/cs.etl" "$ROOT/tests/scenarios/cswitch.yaml" >/dev/null 2>&1
	etl2evt "$T/cs.etl" > "$T/cs.evt"
	grep -q $'\tRunning\t' "$T/cs.evt" || fail "etl2evt wrote no Running lines"
}

@test "cswitch trace: render threadtime's per-thread sums and per-CPU running + idle = the header's span, against awk" {
	cswitch_evt
	render threadtime --tsv "$T/cs.evt" > "$T/t"
	# per thread: running, ready, waiting = awk's sums of the weights (to 1 ns)
	awk -F'\t' '!/^#/ && ($2 == "Running" || $2 == "Ready" || $2 == "Waiting") { s[$6 " " $2] += $7 }
	    END { for (k in s) printf "%s %.6f\n", k, s[k] }' "$T/cs.evt" | sort > "$T/awk"
	awk -F'\t' 'NR > 1 && NF > 10 { if ($5 != 0) printf "%s Running %.6f\n", $3, $5
	    if ($7 != 0) printf "%s Ready %.6f\n", $3, $7; if ($9 != 0) printf "%s Waiting %.6f\n", $3, $9 }' "$T/t" |
	    sort | textdiff - "$T/awk"
	[ "$(awk -F'\t' 'NR > 1 && NF > 10 && $1 != "Idle"' "$T/t" | wc -l)" -eq 7 ]	# System's 8, six workers
	# lifetime = running + ready + waiting, and the rows are sorted by it, Idle last
	awk -F'\t' 'NR > 1 && NF > 10 { d = $4 - $5 - $7 - $9; if (d > 1e-6 || d < -1e-6) exit 1 }' "$T/t"
	awk -F'\t' 'NR > 1 && NF > 10 && $1 != "Idle" { print $4 }' "$T/t" | sort -rn -c
	awk -F'\t' 'NR > 1 && NF > 10 { last = $1 } END { exit last != "Idle" }' "$T/t"
	# per CPU: running + idle = duration_ms of the header (the trace's first to last event)
	span=$(head -1 "$T/cs.evt" | tr '\t' '\n' | sed -n 's/^duration_ms=//p')
	awk -F'\t' -v S="$span" '$1 == "cpu" { on = 1; next } on { n++; d = $2 + $3 - S; if (d > 1e-6 || d < -1e-6) exit 1 }
	    END { exit n != 4 }' "$T/t"
	# and the running column is awk's non-Idle Running per CPU
	awk -F'\t' '!/^#/ && $2 == "Running" && $5 != 0 { s[$3] += $7 } END { for (c in s) printf "%s %.6f\n", c, s[c] }' "$T/cs.evt" |
	    sort > "$T/cpuawk"
	awk -F'\t' '$1 == "cpu" { on = 1; next } on { printf "%s %.6f\n", $1, $2 }' "$T/t" | sort | textdiff - "$T/cpuawk"
}

@test "cswitch trace: stackfold --thread-time per thread = samples + Ready + Waiting; intervals = the thread's lines clipped" {
	cswitch_evt
	stackfold --thread-time --decimals=3 "$T/cs.evt" > "$T/f"
	folded_per_thread "$T/f" | awk '{ printf "%s %.3f\n", $1, $2 }' > "$T/got"
	awk -F'\t' '!/^#/ && $5 != 0 && ($2 == "Sample" || $2 == "Ready" || $2 == "Waiting") { s[$6] += $7 * 1000 }
	    END { for (t in s) printf "%s %.3f\n", t, s[t] }' "$T/cs.evt" | sort -n > "$T/awk"
	textdiff "$T/got" "$T/awk"
	# CPU_TIME = every non-Idle sample; READIED_TIME = every Ready line
	awk '$0 ~ /;CPU_TIME / { s += $NF } END { printf "%.3f\n", s }' "$T/f" > "$T/cpu"
	awk -F'\t' '!/^#/ && $2 == "Sample" && $5 != 0 { s += $7 * 1000 } END { printf "%.3f\n", s }' "$T/cs.evt" |
	    textdiff - "$T/cpu"
	# one thread in a window: its Running/Ready/Waiting lines, clipped, by start
	render intervals --tid 5104 --from 100 --to 150 --tsv "$T/cs.evt" | tail -n +2 | cut -f1,2,4,5 > "$T/i"
	awk -F'\t' -v F=100 -v TO=150 '!/^#/ && $6 == 5104 && ($2 == "Running" || $2 == "Ready" || $2 == "Waiting") {
	    for (i = 8; i < NF; i++) if ($i ~ /^end_ms=/) e = substr($i, 8) + 0
	    s = $1 + 0; z = (e == s)
	    if (z ? (s < F || s > TO) : (e <= F || s >= TO)) next
	    if (s < F) s = F; if (e > TO) e = TO
	    printf "%.3f\t%.3f\t%s\t%s\n", s, e, $2, $3 }' "$T/cs.evt" | sort -s -t$'\t' -k1,1n > "$T/awk"
	[ -s "$T/i" ]
	textdiff "$T/i" "$T/awk"
	# the window is covered exactly once: the thread lives through it
	awk -F'\t' '{ s += $2 - $1 } END { if (s < 49.9995 || s > 50.0005) exit 1 }' "$T/i"
}

@test "diff --thread-time: a wait that grew shows on its stack (diff and overweight share the options)" {
	# the test trace: A's lock wait 10 ms longer (its weight 28 -> 38)
	awk -F'\t' 'BEGIN { OFS = "\t" } $2 == "Waiting" && $6 == 101 { $7 = 38 } 1' "$T/tl.evt" > "$T/test.evt"
	diff --thread-time "$T/tl.evt" "$T/test.evt" > "$T/d"
	grep -qx 'app;Thread;app.exe!main;app.exe!Lock;BLOCKED_TIME 28000 38000' "$T/d"
	grep -qx 'app;Thread;app.exe!main;app.exe!Compute;CPU_TIME 5000 5000' "$T/d"
	overweight --thread-time --tsv "$T/tl.evt" "$T/test.evt" > "$T/o"
	grep -q 'BLOCKED_TIME' "$T/o"
}

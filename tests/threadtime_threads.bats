#!/usr/bin/env bats
# Thread time whatever the threads and files: etl2evt reads ahead on a
# worker (-j 2) or on the caller's thread alone (-j 1), and merges several
# files of a session on their times.  Checked here: the three ways give the
# same lines, byte for byte, on synthesised context-switch traces (no
# corpus trace has context switches), with the filters too; and those
# lines conserve time, per CPU and per thread, worked out in awk from the
# evt stream itself (the trace span, and each thread's ThreadStart,
# ThreadEnd and Terminated switch-out), not from etl2evt's own numbers.
# With -j 2 into a file (-o) the thread-time lines are made from records
# on the output's writing thread; with -j 1 (and into a pipe) on the
# caller's: so every -j 1 / -j 2 comparison here checks the one against
# the other.
load helpers

SCEN="$BATS_TEST_DIRNAME/scenarios"

# side SCENARIO.yaml [PSIZE]: $T/side.etl, a second file of SCENARIO's
# session: its start, CPUs and pointer size (8 by default), inside its
# span; one process's samples, no switches.
side() {
	local start ncpu dur
	start=$(awk '$1 == "start_utc:" { print $2; exit }' "$1")
	ncpu=$(awk '$1 == "cpus:" { print $2; exit }' "$1")
	dur=$(awk '$1 == "duration_ms:" { print $2; exit }' "$1")
	[ -n "$start" ] && [ -n "$ncpu" ] && [ -n "$dur" ] || fail "$1: no start, CPUs or duration"
	cat >"$T/side.yaml" <<EOF
machine:
  cpus: $ncpu
  duration_ms: $((dur * 3 / 4))
  sample_interval_ms: 0.1
  start_utc: $start
  buffer_size: 16384
  seed: 3
processes:
  - name: side.exe
    pid: 9000
    images:
      - {path: '\Device\HarddiskVolume2\Side\side.exe', base: 0x7ff700000000, size: 0x40000}
    threads:
      - {tid: 9004, start_addr: side.exe+0x1100}
stacks:
  work: [side.exe+0x1100, side.exe+0x2200]
generate:
  - kind: Sample
    cpus: [0, $((ncpu - 1))]
    from_ms: $((dur / 8))
    to_ms: $((dur / 2))
    stacks:
      - {weight: 1, tid: 9004, stack: work}
EOF
	etlgen -o "$T/side.etl" --pointer-size "${2:-8}" "$T/side.yaml" 2>/dev/null || fail "etlgen side.yaml for $1"
}

# tt EVT: its Running, Ready and Waiting lines
tt() {
	awk -F'\t' '$2 == "Running" || $2 == "Ready" || $2 == "Waiting"' "$1"
}

# conserved EVT: per CPU, the Running lines (Idle's too) add up to the
# trace span (the header's duration_ms); per thread, its Running, Ready
# and Waiting lines add up to its lifetime: from its ThreadStart (or the
# trace start) to its switch-out as Terminated, its ThreadEnd, or the
# trace end.  In ns, from the text (duration_us= has 3 decimals).  Prints
# what differs; fails when something does, or when there is nothing.
conserved() {
	awk -F'\t' '
	function ns(s,   i) { i = index(s, "."); return substr(s, 1, i - 1) * 1000000 + substr(substr(s, i + 1) "000000", 1, 6) }
	function attr(k,   i) { for (i = 8; i < NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
	/^#evt/ { for (i = 1; i <= NF; i++) if ($i ~ /^duration_ms=/) span = ns(substr($i, 13)); next }
	/^#/ { next }
	($2 == "ThreadStart" || $2 == "ThreadDCStart") && $6 != 0 { born[$6] = $2 == "ThreadStart" ? ns($1) : 0 }
	$2 == "ThreadEnd" { ended[$6] = ns($1) }
	$2 == "CSwitch" && /\told_state=Terminated\t/ { term[attr("old_tid")] = ns($1) }
	$2 == "Running" || $2 == "Ready" || $2 == "Waiting" {
		d = ns(attr("duration_us")) / 1000
		if ($2 == "Running") cpu[$3] += d
		if ($6 != 0) thr[$6] += d
	}
	END {
		for (c in cpu) if (cpu[c] != span) { print "CPU " c ": running " cpu[c] " ns, span " span; bad = 1 }
		for (t in thr) {
			end = (t in term) ? term[t] : (t in ended) ? ended[t] : span
			if (thr[t] != end - born[t]) { print "thread " t ": " thr[t] " ns, lifetime " end - born[t]; bad = 1 }
		}
		exit bad || !length(cpu) || !length(thr)
	}' "$1"
}

# same3 NAME ETL [OPTION...]: etl2evt with -j 1 and -j 2 on ETL, and on
# ETL with $T/side.etl (side(): a two-file session, -j 1 and -j 2): the one-file
# streams are the same bytes, the two-file streams too, and the two-file
# thread-time lines are the one-file ones with thread 9004's (the second
# file's thread, waiting all its life).  Leaves $T/NAME.evt.
same3() {
	local name=$1 etl=$2
	shift 2
	etl2evt -j 1 "$@" -o "$T/$name.evt" "$etl" 2>"$T/err" || fail "$name -j 1: exit $?"
	etl2evt -j 2 "$@" -o "$T/$name.2.evt" "$etl" 2>"$T/err" || fail "$name -j 2: exit $?"
	cmp -s "$T/$name.evt" "$T/$name.2.evt" || fail "$name: -j 2 differs from -j 1"
	etl2evt -j 1 "$@" -o "$T/$name.m1.evt" "$etl" "$T/side.etl" 2>"$T/err" || fail "$name two files -j 1: exit $?"
	etl2evt -j 2 "$@" -o "$T/$name.m2.evt" "$etl" "$T/side.etl" 2>"$T/err" || fail "$name two files -j 2: exit $?"
	cmp -s "$T/$name.m1.evt" "$T/$name.m2.evt" || fail "$name: two files, -j 2 differs from -j 1"
	head -1 "$T/$name.m1.evt" | grep -q $'\tfiles=2' || fail "$name: not a two-file session"
	tt "$T/$name.evt" >"$T/one"
	tt "$T/$name.m1.evt" | awk -F'\t' '$6 != 9004' >"$T/two"
	textdiff "$T/one" "$T/two" >"$T/d" || fail "$name: two files, other thread-time lines: $(head -4 "$T/d")"
}

@test "thread time: -j 1, -j 2 and a two-file session, the same lines, and they conserve time (cswitch, disk-dpc, lock-handoff, threadtime-edges; 32- and 64-bit)" {
	for p in 8 4; do for s in cswitch disk-dpc lock-handoff threadtime-edges; do
		etlgen -o "$T/$s$p.etl" --pointer-size "$p" "$SCEN/$s.yaml" 2>/dev/null || fail "etlgen $s $p"
		side "$SCEN/$s.yaml" "$p"
		same3 "$s$p" "$T/$s$p.etl"
		conserved "$T/$s$p.evt" || fail "$s ptr$p: not conserved"
		conserved "$T/$s$p.m1.evt" || fail "$s ptr$p, two files: not conserved"
		[ "$(tt "$T/$s$p.m1.evt" | awk -F'\t' '$6 == 9004' | wc -l)" -eq 1 ] || fail "$s ptr$p: thread 9004's wait"
	done; done
	# the traces hold what is compared: many lines, wakers (a DPC's too), stacks
	[ "$(tt "$T/cswitch8.evt" | wc -l)" -gt 1400 ] || fail "cswitch: $(tt "$T/cswitch8.evt" | wc -l) lines"
	grep -q $'\tWaiting\t.*\twaker_in=dpc' "$T/disk-dpc8.evt" || fail "disk-dpc: no DPC waker"
	grep -q $'\tWaiting\t.*\twaker_stack=' "$T/lock-handoff4.evt" || fail "lock-handoff: no waker stack"
}

@test "thread time: the filters (-k, -p, -s/-e, --utc, --no-thread-time) the same three ways, and each keeps exactly its lines" {
	etlgen -o "$T/c.etl" "$SCEN/cswitch.yaml" 2>/dev/null
	side "$SCEN/cswitch.yaml"
	same3 all "$T/c.etl"
	same3 k "$T/c.etl" -k Waiting,Ready
	tt "$T/all.evt" | awk -F'\t' '$2 != "Running"' >"$T/want"
	tt "$T/k.evt" | textdiff "$T/want" - >"$T/d" || fail "-k: $(head -4 "$T/d")"
	proc=$(tt "$T/all.evt" | awk -F'\t' '$5 > 4 { print $4; exit }')
	[ -n "$proc" ] || fail "no process of its own"
	same3 p "$T/c.etl" -p "$proc"
	tt "$T/all.evt" | awk -F'\t' -v p="$proc" '$4 == p' >"$T/want"
	[ -s "$T/want" ] || fail "-p $proc: no lines to compare"
	tt "$T/p.evt" | textdiff "$T/want" - >"$T/d" || fail "-p: $(head -4 "$T/d")"
	same3 se "$T/c.etl" -s 100 -e 200
	tt "$T/all.evt" | awk -F'\t' '$1 + 0 >= 100 && $1 + 0 <= 200' >"$T/want"
	[ -s "$T/want" ] || fail "-s/-e: no lines to compare"
	tt "$T/se.evt" | textdiff "$T/want" - >"$T/d" || fail "-s/-e: $(head -4 "$T/d")"
	same3 utc "$T/c.etl" --utc
	tt "$T/utc.evt" | sed 's/\tutc=[^\t]*//' | textdiff <(tt "$T/all.evt") - >"$T/d" || fail "--utc: $(head -4 "$T/d")"
	same3 none "$T/c.etl" --no-thread-time
	[ "$(tt "$T/none.evt" | wc -l)" -eq 0 ] || fail "--no-thread-time: thread-time lines"
	grep -v $'^[^\t]*\t\\(Running\\|Ready\\|Waiting\\)\t' "$T/all.evt" | grep -v '^#' >"$T/want"
	grep -v '^#' "$T/none.evt" | textdiff "$T/want" - >"$T/d" || fail "--no-thread-time: $(head -4 "$T/d")"
}

@test "thread time at volume (cswitch-heavy.yaml): -j 1 and -j 2 the same bytes, time conserved per CPU and thread" {
	etlgen -o "$T/h.etl" "$SCEN/cswitch-heavy.yaml" 2>/dev/null
	etl2evt -j 1 -o "$T/h1.evt" "$T/h.etl" 2>/dev/null
	etl2evt -j 2 -o "$T/h2.evt" "$T/h.etl" 2>/dev/null
	cmp -s "$T/h1.evt" "$T/h2.evt" || fail "-j 2 differs from -j 1"
	[ "$(tt "$T/h1.evt" | wc -l)" -gt 100000 ] || fail "only $(tt "$T/h1.evt" | wc -l) lines"
	conserved "$T/h1.evt" || fail "not conserved"
}

@test "thread time made on the output's writing thread (a file, /dev/null) is the caller's bytes (-j 1, a pipe): every context-switch scenario, 32- and 64-bit" {
	for p in 8 4; do for s in busy-cpu cswitch disk-dpc disk-wait kinds lock-handoff thread-growth threadtime-edges tid-reuse wait-chain; do
		etlgen -o "$T/$s.etl" --pointer-size "$p" "$SCEN/$s.yaml" 2>/dev/null || fail "etlgen $s $p"
		etl2evt -j 1 "$T/$s.etl" 2>/dev/null >"$T/one.evt"
		ETLKIT_THREAD_CPU=1 etl2evt -o "$T/file.evt" "$T/$s.etl" 2>"$T/file.err"
		ETLKIT_THREAD_CPU=1 etl2evt "$T/$s.etl" 2>/dev/null | cat >"$T/pipe.evt"
		ETLKIT_THREAD_CPU=1 etl2evt -o /dev/null "$T/$s.etl" 2>"$T/null.err"
		[ "$(tt "$T/one.evt" | wc -l)" -gt 0 ] || fail "$s ptr$p: no thread-time lines"
		cmp -s "$T/one.evt" "$T/file.evt" || fail "$s ptr$p: a file's lines differ from -j 1's"
		cmp -s "$T/one.evt" "$T/pipe.evt" || fail "$s ptr$p: a pipe's lines differ from -j 1's"
		# into /dev/null there is a writing thread only to make these lines
		grep -q '^outbuf: writing thread: ' "$T/null.err" || fail "$s ptr$p: /dev/null, no writing thread"
	done; done
}

#!/usr/bin/env bats
# evtfilter: process/thread/cpu/kind/time/frame selection, process of interest,
# Idle removal, pass-through and removal reports (reference §2.4, Decisions 2-3).
load helpers

ef() { evtfilter "$@" 2>"$T/err"; }
ev() {
	local t=$1 k=$2 cpu=$3 p=$4 pid=$5 tid=$6 w=$7 s=$8; shift 8
	local a=""; for x in "$@"; do a="$a$x	"; done
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n' "$t" "$k" "$cpu" "$p" "$pid" "$tid" "$w" "$a" "$s"
}
events() { grep -v '^#' "$@" || true; }
wsum() { grep -v '^#' "$1" | awk -F'\t' '$2=="Sample"{s+=$7} END{printf "%.6f\n", s}'; }

local_setup() {
	{ printf '#evt\t1\tsource=t.etl\tduration_ms=100\tpointer_size=8\n'
	  printf '#skipped\twhat=buffer\tcount=2\tdetail=x\n'
	  ev 0.000000 ProcessStart 0 app.exe 12 -1 0 '' cmdline=app
	  ev 1.000000 Sample 0 Idle 0 0 1 'ntoskrnl.exe!KiIdleLoop'
	  ev 2.000000 Sample 1 app.exe 12 34 1 'ntdll.dll!RtlUserThreadStart;app.exe!main' ip=0x1 prio=8
	  ev 9.500000 Sample 1 app.exe 12 35 1 'ntdll.dll!RtlUserThreadStart;app.exe!work' future=attr
	  ev 9.800000 DPC 2 Idle 0 0 0.5 '' routine=ndis.sys!0x1a2b0 duration_us=500.000
	  ev 10.000000 Sample 2 other.exe 13 36 1 'other.exe!x'
	  ev 11.000000 Sample 3 other.exe 13 37 2 'other.exe!y' count=2
	  ev 12.000000 NewKind 3 other.exe 13 37 0 'other.exe!y' z=1
	  ev 20.000000 Lost -1 ? -1 -1 0 '' events=3; } >"$T/a.evt"
}

@test "no options: Idle samples removed by default and reported (#removed line and stderr)" {
	run ef "$T/a.evt"
	[ "$status" -eq 0 ]
	[ "$(events <(echo "$output") | wc -l)" -eq 8 ]
	[[ "$output" != *"KiIdleLoop"* ]]
	[[ "$output" == *"$(printf '#removed\tby=evtfilter\treason=idle\tevents=1\tweight_ms=1')"* ]]
	grep -q "removed 1 Idle samples, 1 ms" "$T/err"
	# DPCs that ran in the Idle process are not CPU samples: kept
	[[ "$output" == *"routine=ndis.sys!0x1a2b0"* ]]
	run ef --keep-idle "$T/a.evt"
	[[ "$output" == *"KiIdleLoop"* ]]
	[[ "$output" != *"reason=idle"* ]]
}

@test "pass-through: # lines, unknown kinds and attributes unchanged; header gets filtered=" {
	run ef -p app "$T/a.evt"
	[ "${lines[0]}" = "$(printf '#evt\t1\tsource=t.etl\tduration_ms=100\tpointer_size=8\tfiltered=evtfilter -p app')" ]
	[ "${lines[1]}" = "$(printf '#skipped\twhat=buffer\tcount=2\tdetail=x')" ]
	[[ "$output" == *"future=attr"* ]]
	run ef -k NewKind "$T/a.evt"
	[ "$(events <(echo "$output"))" = "$(printf '12.000000\tNewKind\t3\tother.exe\t13\t37\t0\tz=1\tother.exe!y')" ]
	evtfilter "$T/a.evt" 2>/dev/null | evtfilter -p 13 2>/dev/null | head -1 | grep -q 'filtered=evtfilter	filtered=evtfilter -p 13$'
}

@test "process by name (with or without .exe, case-insensitive) or pid, several; unattributed events pass" {
	run ef -p APP.EXE "$T/a.evt"
	[ "$(events <(echo "$output") | cut -f4 | sort -u | tr '\n' ' ')" = "? app.exe " ]
	run ef -p 13,app "$T/a.evt"
	[ "$(events <(echo "$output") | cut -f5 | sort -u | tr '\n' ' ')" = "-1 12 13 " ]
	run ef -p 12 -p 13 "$T/a.evt"
	[ "$(events <(echo "$output") | wc -l)" -eq 7 ]
	[[ "$output" == *"reason=process	events=1	weight_ms=0.5"* ]]
}

@test "thread and CPU selection (lists and ranges)" {
	run ef -t 35,37 "$T/a.evt"
	[ "$(events <(echo "$output") | cut -f6 | sort -u | tr '\n' ' ')" = "-1 35 37 " ]
	run ef -C 0-1,3 --keep-idle "$T/a.evt"
	[ "$(events <(echo "$output") | cut -f3 | sort -u | tr '\n' ' ')" = "-1 0 1 3 " ]
}

@test "kind selection with the cpu/dpc/isr aliases" {
	run ef -k dpc "$T/a.evt"
	[ "$(events <(echo "$output") | cut -f2 | sort -u)" = "DPC" ]
	run ef -k cpu,Lost "$T/a.evt"
	[ "$(events <(echo "$output") | cut -f2 | sort -u | tr '\n' ' ')" = "Lost Sample " ]
	[[ "$output" == *"reason=kind"* ]]
}

@test "time range: inclusive at both ends, straddling samples and DPCs prorated, count unchanged" {
	run ef --start 2 --end 10 "$T/a.evt"
	ev=$(events <(echo "$output"))
	[[ "$ev" == *"$(printf '2.000000\tSample\t1\tapp.exe\t12\t34\t1\t')"* ]]
	[[ "$ev" == *"$(printf '9.500000\tSample\t1\tapp.exe\t12\t35\t0.5\tfuture=attr')"* ]]
	[[ "$ev" == *"$(printf '9.800000\tDPC\t2\tIdle\t0\t0\t0.2\troutine=')"* ]]
	# starts exactly at the end: kept (inclusive), nothing of it lies inside
	[[ "$ev" == *"$(printf '10.000000\tSample\t2\tother.exe\t13\t36\t0\t')"* ]]
	[[ "$ev" != *"11.000000"* ]]
	[[ "$output" == *"reason=prorate	events=3	weight_ms=1.8"* ]]
	run ef --start 10.5 --end 12 "$T/a.evt"
	[[ "$output" == *"$(printf '10.000000\tSample\t2\tother.exe\t13\t36\t0.5\t')"* ]]
	[[ "$output" == *"$(printf '11.000000\tSample\t3\tother.exe\t13\t37\t1\tcount=2\t')"* ]]
}

@test "time range: PerfView's 0.0006 ms rounding allowance at the edges" {
	run ef --start 2.0005 --end 2 "$T/a.evt"
	[ "$status" -eq 2 ]
	run ef --start 2.0005 --end 5 "$T/a.evt"
	[[ "$output" == *"$(printf '2.000000\tSample\t1\tapp.exe\t12\t34\t1\t')"* ]]
	run ef --start 2.0007 --end 5 "$T/a.evt"
	[[ "$output" == *"$(printf '2.000000\tSample\t1\tapp.exe\t12\t34\t0.9993\t')"* ]]
}

@test "frame patterns: ExcPats any frame, IncPats every entry (AND), | is OR, @ regex, process frame" {
	run ef -x 'app.exe!work' "$T/a.evt"
	[[ "$(events <(echo "$output"))" != *"app.exe!work"* ]]
	[[ "$output" == *"reason=exclude	events=1	weight_ms=1"* ]]
	run ef -i 'ntdll.dll!;app.exe!main' "$T/a.evt"
	[ "$(events <(echo "$output") | awk -F'\t' '$NF!="" {print $2 "\t" $NF}')" = "$(printf 'Sample\tntdll.dll!RtlUserThreadStart;app.exe!main')" ]
	run ef -i 'app.exe!main|other.exe!x' "$T/a.evt"
	[ "$(events <(echo "$output") | grep -c Sample)" -eq 2 ]
	run ef -x '@!(work|x)$' "$T/a.evt"
	[ "$(events <(echo "$output") | grep -c Sample)" -eq 2 ]
	run ef -x '^Process% other' "$T/a.evt"
	[[ "$(events <(echo "$output"))" != *"other.exe!"* ]]
	# DPC routine= counts as a frame
	run ef -k dpc -i 'ndis.sys!' "$T/a.evt"
	[ "$(events <(echo "$output") | wc -l)" -eq 1 ]
}

@test "process of interest: most CPU (ties to the lower pid), reported on stderr" {
	run ef --poi=most-cpu "$T/a.evt"
	[ "$status" -eq 0 ]
	grep -q "process of interest (most CPU): other.exe (pid 13)" "$T/err"
	[ "$(events <(echo "$output") | cut -f5 | sort -u | tr '\n' ' ')" = "-1 13 " ]
}

@test "process of interest: first process started after trace start that ran half the trace; stdin works" {
	{ printf '#evt\t1\tduration_ms=100\n'
	  ev 1.0 ProcessStart 0 short.exe 20 -1 0 ''
	  ev 5.0 ProcessEnd 0 short.exe 20 -1 0 ''
	  ev 6.0 ProcessStart 0 long.exe 21 -1 0 ''
	  ev 7.0 ProcessStart 0 later.exe 22 -1 0 ''
	  ev 8.0 Sample 0 later.exe 22 1 5 'l!x'
	  ev 9.0 Sample 0 long.exe 21 2 1 'g!x'; } >"$T/p.evt"
	run ef --poi=first-long <"$T/p.evt"
	[ "$status" -eq 0 ]
	grep -q "long.exe (pid 21), started 6.000 ms, ran 94.000 of 100.000 ms" "$T/err"
	[ "$(events <(echo "$output") | cut -f5 | sort -u)" = "21" ]
	run ef --poi=first-long "$T/a.evt"
	[ "$status" -eq 2 ]
	grep -q "process of interest could not be located" "$T/err"
	run ef --poi=auto "$T/a.evt"
	[ "$status" -eq 0 ]
	grep -q "most CPU" "$T/err"
}

@test "weight is conserved: kept + removed = input, per the #removed lines" {
	python3 - "$T/big.evt" <<'PY'
import random, sys
r = random.Random(4)
with open(sys.argv[1], "w") as f:
    f.write("#evt\t1\tduration_ms=1000\n")
    for i in range(3000):
        t = r.uniform(0, 1000); p = r.choice([("Idle", 0), ("a.exe", 1), ("b.exe", 2)])
        w = r.choice([1, 0.5, 0.1221])
        f.write("%.6f\tSample\t%d\t%s\t%d\t%d\t%s\t\tm!f%d;m!g\n" % (t, r.randrange(4), p[0], p[1], r.randrange(5), w, r.randrange(9)))
PY
	in=$(wsum "$T/big.evt")
	evtfilter --start 100 --end 600.5 -p a.exe -x 'm!f3' "$T/big.evt" 2>/dev/null >"$T/out"
	out=$(wsum "$T/out")
	removed=$(grep '^#removed' "$T/out" | sed 's/.*weight_ms=//' | awk '{s+=$1} END{printf "%.6f\n", s}')
	awk -v a="$in" -v b="$out" -v c="$removed" 'BEGIN{d=a-b-c; if (d<0) d=-d; exit !(d < 0.001)}'
}

@test "bad input: malformed lines named by line number, counted, exit 1; not evt is an error" {
	printf '#evt\t1\nnot an event\n1.0\tSample\t0\ta.exe\t1\t2\t1\t\tx!y\n1.0\tSample\tzero\ta\t1\t2\t1\t\tx\n' >"$T/bad.evt"
	run ef "$T/bad.evt"
	[ "$status" -eq 1 ]
	grep -q "bad.evt:2:" "$T/err"
	grep -q "bad.evt:4:" "$T/err"
	[[ "$output" == *"x!y"* ]]
	[[ "$output" == *"#skipped"*"count=2"* ]]
	printf 'a;b 1\n' >"$T/f"
	run ef "$T/f"
	[ "$status" -eq 2 ]
	grep -q "not an evt stream" "$T/err"
	run ef --nosuch
	[ "$status" -eq 2 ]
	run evtfilter --help
	[ "$status" -eq 0 ]
}

@test "gzip input and -o FILE" {
	gzip -c "$T/a.evt" >"$T/a.evt.gz"
	evtfilter -o "$T/o" "$T/a.evt.gz" 2>/dev/null
	[ "$(events "$T/o" | wc -l)" -eq 8 ]
}

@test "process of interest: most CPU ties go to the lower pid, Idle never wins" {
	{ printf '#evt\t1\tduration_ms=10\n'
	  ev 1.0 Sample 0 Idle 0 0 50 'k!idle'
	  ev 2.0 Sample 0 b.exe 30 1 2 'b!x'
	  ev 3.0 Sample 0 a.exe 20 2 2 'a!x'; } >"$T/t.evt"
	run ef --poi=most-cpu "$T/t.evt"
	grep -q "most CPU): a.exe (pid 20), 2.000 ms of 4.000 ms" "$T/err"
	[ "$(events <(echo "$output") | cut -f5 | sort -u)" = "20" ]
}

@test "process of interest in a stream without CPU samples: reported, every process kept, exit 0" {
	{ printf '#evt\t1\tduration_ms=100\n'
	  ev 1.0 ProcessStart 0 short.exe 20 -1 0 ''
	  ev 2.0 ProcessEnd 0 short.exe 20 -1 0 ''
	  ev 3.0 DPC 1 Idle 0 0 0.5 ''
	  ev 4.0 Sample 0 Idle 0 0 1 'ntoskrnl.exe!KiIdleLoop'; } >"$T/ns.evt"
	for m in auto most-cpu first-long; do
		run ef --poi=$m "$T/ns.evt"
		[ "$status" -eq 0 ] || fail "$m: $status"
		grep -q "ns.evt: no CPU samples outside Idle, so no process of interest (--poi=$m): every process kept" "$T/err"
		# the same events as without --poi
		textdiff <(events <(evtfilter --keep-idle "$T/ns.evt")) <(events <(ef --poi=$m --keep-idle "$T/ns.evt"))
	done
}

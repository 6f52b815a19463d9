#!/usr/bin/env bats
# etlgen: synthetic .etl files (tests/scenarios/*.yaml).
#  - the independent buffer walker (etlwalk) agrees with the corpus census,
#    so its checks of the synthetic files mean something;
#  - every variant (pointer size 4/8, compressed or not, full/split/keyed
#    stacks) is structurally valid and holds what the scenario says;
#  - round trips through etl2evt reproduce every time, duration, routine
#    and stack of the scenario (etlgen --expect).
load helpers

SCEN="$BATS_TEST_DIRNAME/scenarios"

# count of records of header HDR, group G, type T in an etlwalk listing
walk_count() {
	awk -v h="$2" -v g="$3" -v t="$4" '$3 == h && $4 == "g=" g && index($5, "t=" t "(") == 1 { print $1; f = 1 } END { if (!f) print 0 }' "$1"
}

# expected lines of KIND (column 2) in an --expect file
expect_count() {
	awk -F'\t' -v k="$2" '$2 == k { n++ } END { print n + 0 }' "$1"
}

# evt_match EXPECT DECODED: every line of etlgen's --expect is in etl2evt's
# output with the same time, kind, CPU, process, pid, tid, weight, listed
# attributes and stack ("*" = any); decoded events of the kinds the
# expectation covers must all be expected.  Prints at most 15 differences.
evt_match() {
	awk -F'\t' '
	function fail(msg) { if (++nerr <= 15) print msg > "/dev/stderr" }
	function check(e, d,    ne, nd, ef, df, i, j, k, v, hit) {
		ne = split(e, ef, "\t"); nd = split(d, df, "\t")
		for (i = 1; i <= 7; i++)
			if (ef[i] != "*" && ef[i] != df[i]) { fail("column " i ": want " ef[i] " got " df[i] "\n  want: " e "\n  got:  " d); return }
		if (ef[ne] != "*" && ef[ne] != df[nd]) { fail("stack: want " ef[ne] " got " df[nd] "\n  at: " e); return }
		for (i = 8; i < ne; i++) {
			k = substr(ef[i], 1, index(ef[i], "=")); v = substr(ef[i], length(k) + 1); hit = 0
			for (j = 8; j < nd; j++)
				if (index(df[j], k) == 1 && (v == "*" || substr(df[j], length(k) + 1) == v)) hit = 1
			if (!hit) { fail("attribute " ef[i] " missing\n  want: " e "\n  got:  " d); return }
		}
	}
	FNR == NR {
		if (/^#evt/) { for (i = 3; i <= NF; i++) if ($i !~ /^source=/) hdr[$i] = 1; next }
		if (/^#/ || $0 == "") next
		kinds[$2] = 1; key = $1 SUBSEP $2 SUBSEP $3; want[key SUBSEP (++nw[key])] = $0; total++
		next
	}
	/^#evt/ { for (i = 3; i <= NF; i++) delete hdr[$i]; for (h in hdr) fail("header lacks " h); next }
	/^#/ || $0 == "" { next }
	!($2 in kinds) { next }
	{
		key = $1 SUBSEP $2 SUBSEP $3; k = key SUBSEP (++ng[key])
		if (!(k in want)) { fail("unexpected: " $0); next }
		check(want[k], $0); seen[k] = 1; matched++
	}
	END {
		for (k in want) if (!(k in seen)) fail("missing: " want[k])
		if (nerr) { print nerr " differences; " matched + 0 " of " total " expected lines matched" > "/dev/stderr"; exit 1 }
		if (!total) { print "nothing expected" > "/dev/stderr"; exit 1 }
	}' "$1" "$2"
}

# evt_canon FILE: DPC/ISR and Sample lines reduced to what the demo
# scenario decides (fast enough for 450,000 lines), sorted.
evt_canon() {
	awk -F'\t' '
	/^#/ { next }
	$2 == "DPC" || $2 == "ThreadedDPC" || $2 == "TimerDPC" || $2 == "ISR" || $2 == "Sample" {
		delete a
		for (i = 8; i < NF; i++) { j = index($i, "="); a[substr($i, 1, j - 1)] = substr($i, j + 1) }
		if ($2 == "Sample")
			print $1, $2, $3, $4, $5, $6, $7, a["ip"], a["prio"], a["count"], a["dpc"], a["isr"], $NF
		else
			print $1, $2, $3, $7, a["routine"], a["module"], a["duration_us"], a["end_ms"], a["vector"], a["msi"], a["message"], a["ret"]
	}' OFS='\t' "$1" | LC_ALL=C sort
}

@test "etlwalk agrees with the census of the real corpus files" {
	require_corpus
	unzip_member "$CORPUS/perfview/net.4.5.2.x64.etl.zip" net.4.5.2.x64.etl "$T/net.etl"
	for pair in "$T/net.etl:perfview-net.4.5.2.x64" \
	    "$CORPUS/airbus/ShutdownPerfDiagLogger.etl:airbus-ShutdownPerfDiagLogger" \
	    "$CORPUS/perfview/smallEtlFile.etl:perfview-smallEtlFile" \
	    "$CORPUS/perfview/SelfDescribingSingleEvent.etl:perfview-SelfDescribingSingleEvent" \
	    "$CORPUS/tx/HTTP_Server.etl:tx-HTTP_Server" \
	    "$CORPUS/krabsetw/powershell.etl:krabsetw-powershell"; do
		f=${pair%%:*} c="$CENSUS/${pair#*:}.txt"
		etlwalk "$f" >"$T/walk" || fail "walk failed on $f"
		want=$(sed -n 's/^events parsed: \([0-9]*\).*/\1/p' "$c")
		got=$(sed -n 's/.*events: \([0-9]*\)$/\1/p' "$T/walk")
		[ "$got" = "$want" ] || fail "$f: $got events, census $want"
		wantb=$(sed -n 's/.*  buffers: \([0-9]*\) .*/\1/p' "$c")
		gotb=$(sed -n 's/^buffers: \([0-9]*\) .*/\1/p' "$T/walk")
		[ "$gotb" = "$wantb" ] || fail "$f: $gotb buffers, census $wantb"
		wantz=$(sed -n 's/.*compressed buffers: \([0-9]*\) .*/\1/p' "$c")
		gotz=$(sed -n 's/.*compressed buffers: \([0-9]*\) .*/\1/p' "$T/walk")
		[ "$gotz" = "$wantz" ] || fail "$f: $gotz compressed buffers, census $wantz"
		# every kernel (group, type, header) count of the census
		awk '$2 == "K" { sub(/\(.*/, "", $6); print $3, $5, $6, $1 }' "$c" | sort >"$T/want"
		awk '$2 == "K" { sub(/\(.*/, "", $5); print $3, $4, $5, $1 }' "$T/walk" | sort >"$T/got"
		textdiff "$T/want" "$T/got" || fail "$f: kernel record counts differ from the census"
	done
}

@test "all 12 variants of the kinds scenario are valid files holding what the scenario says" {
	for p in 4 8; do for z in --compress --no-compress; do for s in full split keys; do
		v="$T/k$p$z$s"
		etlgen -o "$v.etl" --expect "$v.exp" --pointer-size "$p" "$z" --stacks "$s" "$SCEN/kinds.yaml" 2>/dev/null
		etlwalk "$v.etl" >"$v.walk" || fail "walk: $v.etl"
		hp=$([ "$p" = 8 ] && echo 64 || echo 32)
		# the logfile header: marker, pointer size, CPUs, events lost
		[ "$(od -An -tx4 -j72 -N4 "$v.etl" | tr -d ' ')" = "$([ "$p" = 8 ] && echo c0020002 || echo c0010002)" ] || fail "$v: header marker"
		[ "$(od -An -tu4 -j$((72 + 32 + 44)) -N4 "$v.etl" | tr -d ' ')" = "$p" ] || fail "$v: PointerSize"
		[ "$(od -An -tu4 -j$((72 + 32 + 12)) -N4 "$v.etl" | tr -d ' ')" = 4 ] || fail "$v: NumberOfProcessors"
		[ "$(od -An -tu4 -j$((72 + 32 + 48)) -N4 "$v.etl" | tr -d ' ')" = 5 ] || fail "$v: EventsLost"
		[ "$(od -An -tu4 -j$((72 + 32 + 260 + 2 * p)) -N4 "$v.etl" | tr -d ' ')" = 2 ] || fail "$v: BuffersLost"
		# one record per expected event, with the documented header kinds
		[ "$(walk_count "$v.walk" PERFINFO$hp 0x0f 0x2e)" = "$(expect_count "$v.exp" Sample)" ] || fail "$v: samples"
		[ "$(walk_count "$v.walk" PERFINFO$hp 0x0f 0x44)" = "$(expect_count "$v.exp" DPC)" ] || fail "$v: DPC"
		[ "$(walk_count "$v.walk" PERFINFO$hp 0x0f 0x42)" = 1 ] || fail "$v: ThreadedDPC"
		[ "$(walk_count "$v.walk" PERFINFO$hp 0x0f 0x45)" = 1 ] || fail "$v: TimerDPC"
		[ "$(walk_count "$v.walk" PERFINFO$hp 0x0f 0x43)" = 1 ] || fail "$v: ISR"
		[ "$(walk_count "$v.walk" PERFINFO$hp 0x0f 0x32)" = 1 ] || fail "$v: ISR-MSI"
		[ "$(walk_count "$v.walk" COMPACT$hp 0x05 0x24)" = 3 ] || fail "$v: compact CSwitch"
		[ "$(walk_count "$v.walk" SYSTEM$hp 0x05 0x24)" = 1 ] || fail "$v: full CSwitch"
		[ "$(walk_count "$v.walk" PERFINFO$hp 0x05 0x32)" = 1 ] || fail "$v: ReadyThread (PERFINFO, as real traces)"
		[ "$(walk_count "$v.walk" SYSTEM$hp 0x05 0x32)" = 1 ] || fail "$v: ReadyThread (header: full)"
		[ "$(walk_count "$v.walk" COMPACT$hp 0x05 0x32)" = 0 ] || fail "$v: compact ReadyThread"
		[ "$(walk_count "$v.walk" FULL$hp 0x00 0x24)" = 4 ] || fail "$v: DbgID_RSDS (rundown start and end)"
		case $s in
		# (two samples of the scenario have an ip and no stack; one ReadyThread has one)
		full) [ "$(walk_count "$v.walk" PERFINFO$hp 0x18 0x20)" = "$(( $(expect_count "$v.exp" Sample) - 2 + 1 ))" ] || fail "$v: one Stack per sample" ;;
		keys) [ "$(walk_count "$v.walk" PERFINFO$hp 0x18 0x25)" -gt 0 ] && [ "$(walk_count "$v.walk" PERFINFO$hp 0x18 0x26)" -gt 0 ] &&
		      [ "$(walk_count "$v.walk" PERFINFO$hp 0x18 0x24)" -gt 0 ] && [ "$(walk_count "$v.walk" PERFINFO$hp 0x18 0x20)" = 0 ] || fail "$v: stack keys" ;;
		split) [ "$(walk_count "$v.walk" PERFINFO$hp 0x18 0x20)" -gt "$(expect_count "$v.exp" Sample)" ] || fail "$v: split stacks" ;;
		esac
		if [ "$z" = --compress ]; then
			grep -q 'compressed buffers: [1-9]' "$v.walk" || fail "$v: nothing compressed"
		else
			grep -q 'compressed buffers: 0 ' "$v.walk" || fail "$v: compressed"
		fi
	done; done; done
	# compression changes the bytes, not the records
	for p in 4 8; do for s in full split keys; do
		textdiff <(tail -n +2 "$T/k$p--compress$s.walk") <(tail -n +2 "$T/k$p--no-compress$s.walk") || fail "p$p $s: records differ"
		cmp -s "$T/k$p--compress$s.exp" "$T/k$p--no-compress$s.exp" || true
	done; done
	[ "$(stat -c %s "$T/k8--compressfull.etl")" -lt "$(( $(stat -c %s "$T/k8--no-compressfull.etl") / 3 ))" ] || fail "compression gains nothing"
}

@test "output is deterministic for a seed and changes with it" {
	# (the header holds the file name: same name in two directories)
	mkdir "$T/a" "$T/b" "$T/c"
	(cd "$T/a" && etlgen -o t.etl --expect t.exp --compress "$SCEN/kinds.yaml" 2>/dev/null)
	(cd "$T/b" && etlgen -o t.etl --expect t.exp --compress "$SCEN/kinds.yaml" 2>/dev/null)
	cmp "$T/a/t.etl" "$T/b/t.etl"
	cmp "$T/a/t.exp" "$T/b/t.exp"
	(cd "$T/c" && etlgen -o t.etl --seed 99 --compress "$SCEN/kinds.yaml" 2>/dev/null)
	! cmp -s "$T/a/t.etl" "$T/c/t.etl"
}

@test "expected decode of the kinds scenario: exact times, durations, routines, stacks" {
	etlgen -o "$T/k.etl" --expect "$T/k.exp" "$SCEN/kinds.yaml" 2>/dev/null
	grep -q $'^2.900000\tDPC\t2\t\\*\t\\*\t\\*\t0.2205\troutine=ndis.sys!0x1a2b0\tmodule=ndis.sys\tduration_us=220.500\tend_ms=3.120500\t\\*$' "$T/k.exp"
	grep -q $'^6.500000\tISR\t2\t.*\t0.0028\troutine=ndis.sys!0x3100\tmodule=ndis.sys\tduration_us=2.800\tend_ms=6.502800\tvector=434\tmsi=1\tmessage=3\tret=1\t' "$T/k.exp"
	grep -q $'^7.000000\tCSwitch\t1\tBackupSvc.exe\t2212\t4104\t0\told_tid=4100\told_pid=2212\told_process=BackupSvc.exe\tnew_prio=10\told_prio=8\twait_reason=WrQueue\twait_mode=user\told_state=Waiting\twait_time=17\t$' "$T/k.exp"
	grep -q $'^3.000000\tSample\t2\tIdle\t0\t0\t1\tip=0xfffff88001604410\tprio=0\tdpc=1\tntoskrnl.exe!0x1f000;ntoskrnl.exe!0x8c210;ndis.sys!0x1a2b0;e1i65x64.sys!0x12340;tcpip.sys!0x4410$' "$T/k.exp"
	grep -q $'^2.500000\tSample\t1\tBackupSvc.exe\t2212\t4104\t3\tip=0x13f005000\tprio=12\tcount=3\t' "$T/k.exp"
	# 32-bit: kernel images folded above 2 GiB, user ones below
	etlgen -o "$T/k4.etl" --expect "$T/k4.exp" --pointer-size 4 "$SCEN/kinds.yaml" 2>/dev/null
	grep -q $'^3.000000\tSample\t2\tIdle\t0\t0\t1\tip=0x81604410\t' "$T/k4.exp"
	grep -q $'pointer_size=4\t' "$T/k4.exp"
	# the header's events_lost/buffers_lost include the scenario's Lost events
	grep -q $'\tevents_lost=5\tbuffers_lost=2\t' "$T/k.exp"
}

# refused NAME YAML GLOB: etlgen refuses the scenario YAML (printf escapes,
# written to $T/NAME.yaml) with exit 2 and a message matching GLOB.
refused() {
	printf '%b' "$2" >"$T/$1.yaml"
	run etlgen -o "$T/$1.etl" "$T/$1.yaml"
	[ "$status" -eq 2 ] || fail "$1.yaml: exit $status: $output"
	# shellcheck disable=SC2053
	[[ "$output" == $3 ]] || fail "$1.yaml: $output"
}

@test "bad scenarios: one-line errors with file and line, exit 2" {
	refused a 'machine:\n  cpus: 2\n  duration_ms: 10\n  colour: blue\n' "*a.yaml:4: unknown key 'colour'*"
	refused b 'machine: {cpus: 2, duration_ms: 10}\nevents:\n  - {kind: DPC, t_ms: 1, cpu: 5, routine: x.sys+0x10, duration_us: 3}\n' \
	    '*b.yaml:3: CPU 5, but the machine has 2 CPUs*'
	refused c 'machine: {cpus: 2, duration_ms: 10}\nevents:\n  - {kind: DPC, t_ms: 1, cpu: 1, routine: x.sys+0x10, duration_us: 3}\n' \
	    "*no image 'x.sys'*"
	refused d 'machine: {cpus: 1, duration_ms: 1}\nprocesses:\n  - {name: System, pid: 4, images: [{path: a.sys, base: 0xfffff80000000000, size: 0x1000}]}\ngenerate:\n  - {kind: DPC, routine: a.sys+0x10, count: 100, duration_us: 50}\n' \
	    '*do not fit*'
	refused e 'machine: [1\n' 'etlgen:*'
	# a ReadyThread's readying thread is the one running on its CPU (PERFINFO header)
	P='processes:\n  - {name: a.exe, pid: 100, threads: [{tid: 101}, {tid: 102}, {tid: 103}]}\n'
	refused f "machine: {cpus: 1, duration_ms: 10}\n${P}events:\n  - {kind: CSwitch, t_ms: 1, cpu: 0, new_tid: 101, old_tid: 0}\n  - {kind: ReadyThread, t_ms: 2, cpu: 0, tid: 103, ready_tid: 102}\n" \
	    '*ReadyThread at 2.0000 ms on CPU 0 names thread 103, but thread 101 runs there*'
	refused g "machine: {cpus: 1, duration_ms: 10}\n${P}events:\n  - {kind: ReadyThread, t_ms: 2, cpu: 0, ready_tid: 102, header: compact}\n" \
	    '*g.yaml:5: a ReadyThread whose header names the readying thread needs tid*'
	refused h "machine: {cpus: 1, duration_ms: 10}\n${P}events:\n  - {kind: ReadyThread, t_ms: 2, cpu: 0, ready_tid: 102, stack: [0xfffff80000001000]}\n" \
	    '*ReadyThread at 2.0000 ms on CPU 0 has a stack but no CSwitch on that CPU*'
	run etlgen --bogus
	[ "$status" -eq 2 ]
}

@test "etlwalk reports truncated and corrupted files with the byte offset" {
	etlgen -o "$T/k.etl" --no-compress "$SCEN/kinds.yaml" 2>/dev/null
	head -c 20000 "$T/k.etl" >"$T/trunc.etl"
	run etlwalk "$T/trunc.etl"
	[ "$status" -eq 1 ]
	[[ "$output" == *"trunc.etl: offset 16384: bad buffer sizes"* ]]
	# a record size pointing past the buffer's fill
	cp "$T/k.etl" "$T/flip.etl"
	printf '\xff\x7f' | dd of="$T/flip.etl" bs=1 seek=$((8192 + 72 + 4)) conv=notrunc 2>/dev/null
	run etlwalk "$T/flip.etl"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 8264: record size out of bounds"* ]]
}

@test "round trip through etl2evt: every kind, pointer size 4 and 8, plain and compressed, full/split/keyed stacks" {
	for p in 4 8; do for z in --compress --no-compress; do for s in full split keys; do
		v="$T/k$p$z$s"
		etlgen -o "$v.etl" --expect "$v.exp" --pointer-size "$p" "$z" --stacks "$s" "$SCEN/kinds.yaml" 2>/dev/null
		etl2evt -o "$v.evt" "$v.etl" || fail "etl2evt failed on $v.etl"
		evt_match "$v.exp" "$v.evt" || fail "$v: decode differs from the scenario"
	done; done; done
}

@test "round trip: DPC, ISR, CSwitch and ReadyThread attributes are the scenario's" {
	etlgen -o "$T/k.etl" "$SCEN/kinds.yaml" 2>/dev/null
	etl2evt -o "$T/k.evt" "$T/k.etl"
	line() { awk -F'\t' -v t="$1" -v k="$2" '$1 == t && $2 == k' "$T/k.evt"; }
	l=$(line 2.900000 DPC)
	[[ "$l" == *$'\t0.2205\t'* && "$l" == *$'\troutine=ndis.sys!0x1a2b0\t'* && "$l" == *$'\tmodule=ndis.sys\t'* &&
	   "$l" == *$'\tduration_us=220.500\t'* && "$l" == *$'\tend_ms=3.120500\t'* ]] || fail "DPC: $l"
	l=$(line 4.000000 ThreadedDPC)
	[[ "$l" == *$'\troutine=e1i65x64.sys!0x12340\t'* && "$l" == *$'\tduration_us=31.700\t'* ]] || fail "ThreadedDPC: $l"
	l=$(line 5.000000 TimerDPC)
	[[ "$l" == *$'\troutine=ntoskrnl.exe!0x9a010\t'* && "$l" == *$'\t0.0123\t'* ]] || fail "TimerDPC: $l"
	l=$(line 6.000000 ISR)
	[[ "$l" == *$'\tvector=145\t'* && "$l" == *$'\tret=1\t'* && "$l" != *msi=* && "$l" == *$'\tduration_us=4.200\t'* ]] || fail "ISR: $l"
	l=$(line 6.500000 ISR)
	[[ "$l" == *$'\tvector=434\t'* && "$l" == *$'\tmsi=1\t'* && "$l" == *$'\tmessage=3\t'* && "$l" == *$'\troutine=ndis.sys!0x3100\t'* ]] || fail "ISR-MSI: $l"
	l=$(line 7.000000 CSwitch)
	[[ "$l" == $'7.000000\tCSwitch\t1\tBackupSvc.exe\t2212\t4104\t0\t'* && "$l" == *$'\told_tid=4100\t'* && "$l" == *$'\told_pid=2212\t'* &&
	   "$l" == *$'\tnew_prio=10\t'* && "$l" == *$'\told_prio=8\t'* && "$l" == *$'\twait_reason=WrQueue\t'* &&
	   "$l" == *$'\twait_mode=user\t'* && "$l" == *$'\told_state=Waiting\t'* && "$l" == *$'\twait_time=17\t'* ]] || fail "CSwitch: $l"
	l=$(line 7.500000 CSwitch)	# the full-header variant
	[[ "$l" == $'7.500000\tCSwitch\t1\tIdle\t0\t0\t'* && "$l" == *$'\told_tid=4104\t'* && "$l" == *$'\twait_reason=UserRequest\t'* ]] || fail "CSwitch (full header): $l"
	l=$(line 7.900000 ReadyThread)
	[[ "$l" == $'7.900000\tReadyThread\t3\tSystem\t4\t8\t'* && "$l" == *$'\tready_tid=4100\t'* && "$l" == *$'\tready_pid=2212\t'* &&
	   "$l" == *$'\tadjust_reason=1\t'* && "$l" == *$'\tadjust_incr=-2\t'* ]] || fail "ReadyThread: $l"
	# the PERFINFO header of real traces: the readying thread is 4100, which runs on CPU 1
	# since 1.5 ms, and its StackWalk record (tid 4100) is the ReadyThread's stack
	l=$(line 6.900000 ReadyThread)
	[[ "$l" == *$'\tready_tid=4104\t'* && "$l" == *$'\tadjust_reason=2\t'* ]] || fail "ReadyThread (PERFINFO): $l"
	[[ "$l" == $'6.900000\tReadyThread\t1\tBackupSvc.exe\t2212\t4100\t'* &&
	   "$l" == *$'\tntdll.dll!0x2c541;kernel32.dll!0x1652d;BackupSvc.exe!0x3a10;ntdll.dll!0x9e2f4;ntoskrnl.exe!0x7b2c3;ntoskrnl.exe!0x4e1a0' ]] ||
	    fail "ReadyThread waker and stack: $l"
	# a DPC after a CSwitch on its CPU is charged to the thread running there
	l=$(line 3.200000 Sample)
	[[ "$l" == $'3.200000\tSample\t3\tSystem\t4\t8\t1\t'* ]] || fail "Sample of tid 8: $l"
	# lost events and buffers: the header counts and the buffer flags
	head -1 "$T/k.evt" | grep -q $'\tevents_lost=5\tbuffers_lost=2\t'
	awk -F'\t' '$2 == "Lost" && $3 == 2' "$T/k.evt" | grep -q .
	awk -F'\t' '$2 == "Lost" && $3 == 1 && /\tbuffers=[1-9]/' "$T/k.evt" | grep -q .
}

@test "rundown records and header mirrored from net.4.5.2.x64 decode exactly as the real ones" {
	require_corpus
	unzip_member "$CORPUS/perfview/net.4.5.2.x64.etl.zip" net.4.5.2.x64.etl "$T/net.etl"
	etl2evt -o "$T/real.evt" "$T/net.etl"
	etlgen -o "$T/m.etl" --expect "$T/m.exp" "$SCEN/mirror-net452.yaml" 2>/dev/null
	etl2evt -o "$T/m.evt" "$T/m.etl"
	evt_match "$T/m.exp" "$T/m.evt"
	# the same records, apart from time and CPU
	sel() {
		awk -F'\t' '($2 ~ /^ProcessDC/ && ($5 == 0 || $5 == 4 || $5 == 456)) || ($2 ~ /^ThreadDC/ && $5 == 0) ||
		    ($2 ~ /^(ImageDCStart|ImageDCEnd|ImageID|DbgID_RSDS)$/ && ($5 == 0 || $5 == 4) &&
		     $0 ~ /\tbase=0x(fffff80021489000|fffff8002141d000|77710000|7f9d02f0000)\t/) { $1 = ""; $3 = ""; print }' OFS='\t' "$1" | LC_ALL=C sort -u
	}
	sel "$T/real.evt" >"$T/real.sel"
	sel "$T/m.evt" >"$T/m.sel"
	[ "$(wc -l <"$T/real.sel")" -eq 28 ]
	textdiff "$T/real.sel" "$T/m.sel"
	# and the header fields that describe the machine and clock
	hdr() { head -1 "$1" | tr '\t' '\n' | grep -E '^(os_version|os_build|cpus|pointer_size|clock|clock_freq|start_utc|events_lost|buffers_lost|sample_interval_ms|logger)='; }
	textdiff <(hdr "$T/real.evt") <(hdr "$T/m.evt")
}

@test "corrupted synthetic files behave like corrupted real ones in etl2evt" {
	require_corpus
	etlgen -o "$T/s.etl" --no-compress "$SCEN/kinds.yaml" 2>/dev/null
	etlgen -o "$T/z.etl" --compress "$SCEN/kinds.yaml" 2>/dev/null
	real="$CORPUS/airbus/ShutdownPerfDiagLogger.etl"
	unzip_member "$CORPUS/perfview/net.4.5.2.x64.etl.zip" net.4.5.2.x64.etl "$T/net.etl"
	# truncated inside the second data buffer: plain synthetic vs plain real,
	# compressed synthetic vs compressed real
	for pair in "$T/s.etl:20000" "$real:150000" "$T/z.etl:$(( $(stat -c %s "$T/z.etl") - 100 ))" "$T/net.etl:100000"; do
		f=${pair%%:*} n=${pair#*:} b=$T/$(basename "$f").trunc
		etl2evt -o "$T/full.evt" "$f"
		head -c "$n" "$f" >"$b"
		run etl2evt -o "$T/cut.evt" "$b"
		[ "$status" -eq 1 ] || fail "$b: status $status"
		[[ "$output" == *"$b: offset "[0-9]*": "* ]] || fail "$b: no offset in: $output"
		grep -q $'^#skipped\twhat=buffer\tcount=[1-9]' "$T/cut.evt" || fail "$b: nothing counted as skipped"
		# what was decoded is what the whole file holds (nothing invented)
		# (attributes may differ: frames resolve against the images seen)
		comm -23 <(grep -v '^#' "$T/cut.evt" | cut -f1-3,5,6 | LC_ALL=C sort) \
		    <(grep -v '^#' "$T/full.evt" | cut -f1-3,5,6 | LC_ALL=C sort) >"$T/new"
		[ ! -s "$T/new" ] || { head -3 "$T/new"; fail "$b: events not in the whole file"; }
		[ "$(grep -vc '^#' "$T/cut.evt")" -gt 10 ] || fail "$b: the intact buffers were not decoded"
	done
	# garbled XPRESS data in the first data buffer, an absurd BufferSize in the second:
	# both skipped with the offset named, the rest decoded (compressed synthetic vs net.4.5.2.x64)
	for f in "$T/z.etl" "$T/net.etl"; do
		python3 - "$f" "$T/garbled.etl" "$T/hugebuf.etl" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
first = struct.unpack_from("<I", d, 0)[0]
size = struct.unpack_from("<I", d, first)[0]
g = bytearray(d)
for i in range(first + 0x48 + size // 3, first + 0x48 + size // 3 + 40):
    g[i] ^= 0x5a
open(sys.argv[2], "wb").write(g)
struct.pack_into("<I", d, first + size, 0xFFFFFFF0)
open(sys.argv[3], "wb").write(d)
PY
		read -r first second < <(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(); f=struct.unpack_from("<I",d,0)[0]; print(f, f+struct.unpack_from("<I",d,f)[0])' "$f")
		run etl2evt -o "$T/g.evt" "$T/garbled.etl"
		[ "$status" -eq 1 ] && [[ "$output" == *"garbled.etl: offset $first: compressed buffer"*"cannot be decompressed"* ]] || fail "$f garbled: $output"
		[ "$(grep -vc '^#' "$T/g.evt")" -gt 100 ] || fail "$f garbled: the rest was lost"
		run etl2evt -o "$T/h.evt" "$T/hugebuf.etl"
		[ "$status" -eq 1 ] && [[ "$output" == *"hugebuf.etl: offset $second: corrupt buffer header"* ]] || fail "$f BufferSize: $output"
		[ "$(grep -vc '^#' "$T/h.evt")" -gt 100 ] || fail "$f BufferSize: the rest was lost"
	done
	# a record size flipped to 0xfff0 (past the fill) in the first data buffer: the rest of that buffer is skipped, the file goes on
	for pair in "$T/s.etl:8192" "$real:65536"; do
		f=${pair%%:*} off=$(( ${pair#*:} + 72 + 4 )) b=$T/$(basename "$f").flip
		cp "$f" "$b"
		printf '\xf0\xff' | dd of="$b" bs=1 seek="$off" conv=notrunc 2>/dev/null
		run etl2evt -o "$T/flip.evt" "$b"
		[ "$status" -eq 1 ] || fail "$b: status $status"
		[[ "$output" == *"$b: offset $(( off - 4 )): record size"* ]] || fail "$b: $output"
		grep -q $'^#skipped\twhat=buffer' "$T/flip.evt"
		[ "$(grep -vc '^#' "$T/flip.evt")" -gt 50 ] || fail "$b: the other buffers were lost"
	done
}

@test "make demo: the pipeline diagnoses ndis.sys DPCs on CPUs 0,2,4,6 and the fix; its trace round-trips exactly" {
	ETLKIT_DEMO_OUT="$T/demo" run "$BATS_TEST_DIRNAME/demo.sh"
	[ "$status" -eq 0 ] || fail "demo.sh: $output"
	for f in incident.etl fixed.etl incident.evt fixed.evt; do [ -s "$T/demo/$f" ] || fail "no $f"; done
	# the traces hold what the scenarios say: 163,000 ndis.sys DPCs ~220 us on CPUs 0,2,4,6; ~90 us fixed
	awk -F'\t' '$2 == "DPC" && $9 == "module=ndis.sys" { n++; s += $7; c[$3]++ }
	    END { if (n != 163000 || s / n < 0.215 || s / n > 0.225) exit 1
	          for (k in c) if (k != 0 && k != 2 && k != 4 && k != 6) exit 1 }' "$T/demo/incident.expect" || fail "incident DPCs"
	awk -F'\t' '$2 == "DPC" && $9 == "module=ndis.sys" { n++; s += $7 }
	    END { exit !(n == 163000 && s / n > 0.085 && s / n < 0.095) }' "$T/demo/fixed.expect" || fail "fixed DPCs"
	etlwalk "$T/demo/incident.etl" >"$T/i.walk"
	[ "$(walk_count "$T/i.walk" PERFINFO64 0x0f 0x44)" = 172000 ] || fail "DPC records"
	[ "$(walk_count "$T/i.walk" PERFINFO64 0x0f 0x2e)" = 240000 ] || fail "1 ms samples on 24 CPUs for 10 s"
	# samples inside the DPCs carry the DPC stacks (NDIS receive path)
	awk -F'\t' '$2 == "Sample" && /\tdpc=1\t/ && $NF ~ /ndis.sys!/ { n++ } END { exit !(n > 30000) }' "$T/demo/incident.expect"
	# the culprit flagged against the 100 us guidance, with its average
	[[ "$output" == *"ndis.sys"*"163000"*"220.0"*"!"* ]] || fail "no flagged ndis.sys line"
	# the pinned CPUs, and only those, above 5% DPC/ISR time
	cpus=$(printf '%s\n' "$output" | awk '/^Share of each CPU/ { s = 1; next } s && NF == 0 { exit } s && $1 ~ /^[0-9]+$/ { printf "%s,", $1 }')
	[ "$cpus" = "0,2,4,6," ] || fail "pinned CPUs: $cpus"
	# the stacks point at the IDS filter on the NDIS receive path
	# named by the stand-in PDBs (clang-cl + lld-link, installed by make deps)
	[[ "$output" == *"PDBs in $T/demo/sym"* ]] || fail "no PDBs were built"
	[[ "$output" == *"ndis.sys!ndisInterruptDpc"*"163000"*"220.0"* ]] || fail "DPC routine not named"
	[[ "$output" == *"[DPC] ndis.sys ... > "*"idsflt64.sys!IdsMatchSignatures"* ]] || fail "no named DPC stacks"
	[[ "$output" == *"ndis.sys"*"163000"*"90.0"* ]] || fail "the fixed trace"
	# PerfView's overweight report on the DPC stacks, fixed -> incident: the IDS filter first
	first=$(printf '%s\n' "$output" | awk '/^which code inside|^== which code inside/ { on = 1 } on && /^ *[0-9]+ +[0-9]+ +\+[0-9]/ { print $NF; exit }')
	[ "$first" = "idsflt64.sys!IdsMatchSignatures" ] || fail "overweight names '$first' first"
	# and the round trip of the incident: every DPC, ISR and sample exactly, frames named
	evt_canon "$T/demo/incident.expect" >"$T/want"
	evt_canon "$T/demo/incident.evt" >"$T/got"
	[ "$(wc -l <"$T/want")" -eq 456800 ]
	grep -q 'idsflt64.sys!IdsMatchSignatures$' "$T/want"
	textdiff "$T/want" "$T/got" | head -20
	cmp -s "$T/want" "$T/got"
}

@test "round trip with clocks that are not 10 MHz (3117777 Hz, HPET 14318180 Hz, 2531250 Hz)" {
	for f in 3117777 14318180 2531250; do
		sed "s/clock_freq: 10000000/clock_freq: $f/" "$SCEN/kinds.yaml" >"$T/k$f.yaml"
		grep -q "clock_freq: $f" "$T/k$f.yaml"
		for p in 4 8; do
			etlgen -o "$T/k.etl" --expect "$T/k.exp" --pointer-size "$p" "$T/k$f.yaml" 2>/dev/null
			etl2evt -o "$T/k.evt" "$T/k.etl"
			evt_match "$T/k.exp" "$T/k.evt" || fail "clock $f Hz, pointer size $p"
		done
	done
}

@test "round trip with stack keys reused after KeyDelete (key cache of 1, 2, 3 entries)" {
	for kc in 1 2 3; do for p in 4 8; do
		etlgen -o "$T/k.etl" --expect "$T/k.exp" --stacks keys --key-cache "$kc" --pointer-size "$p" "$SCEN/kinds.yaml" 2>/dev/null
		etlwalk "$T/k.etl" >"$T/walk"
		[ "$(walk_count "$T/walk" PERFINFO$((p * 8)) 0x18 0x23)" -gt 20 ] || fail "kc $kc: too few KeyDelete"
		etl2evt -o "$T/k.evt" "$T/k.etl"
		evt_match "$T/k.exp" "$T/k.evt" || fail "key cache $kc, pointer size $p"
	done; done
}

@test "symbols: stand-in images with real PDBs name every routine after the round trip" {
	ETLKIT_BIN="$ETLKIT_BIN" "$BATS_TEST_DIRNAME/scenarios/build-symbols.sh" "$SCEN/kinds.yaml" "$T/sym"
	grep -q '^image ndis.sys ndis.pdb ' "$T/sym/symbols.map"
	grep -q '^func ntoskrnl.exe KiTimerExpiration 0x' "$T/sym/symbols.map"
	for p in 4 8; do
		etlgen -o "$T/k.etl" --expect "$T/k.exp" --pointer-size "$p" --symbols "$T/sym/symbols.map" "$SCEN/kinds.yaml" 2>/dev/null
		grep -q $'\troutine=ndis.sys!ndisInterruptDpc\t' "$T/k.exp"
		etl2evt --symbols "$T/sym" -o "$T/k.evt" "$T/k.etl" 2>"$T/err"
		evt_match "$T/k.exp" "$T/k.evt" || fail "pointer size $p"
		grep -q $'^#symbols\timage=ndis.sys\tpdb=ndis.pdb\t.*status=resolved' "$T/k.evt"
	done
	l=$(awk -F'\t' '$1 == "3.000000" && $2 == "Sample"' "$T/k.evt")
	[[ "$l" == *$'\tntoskrnl.exe!0x1f000;ntoskrnl.exe!0x8c210;ndis.sys!ndisInterruptDpc;e1i65x64.sys!e1iRxDpc;tcpip.sys!0x4410' ]] || fail "$l"
}

@test "the CSwitch generator: a thread runs on one CPU at a time, samples follow it, ReadyThread precedes each switch-in" {
	etlgen -o "$T/c.etl" --expect "$T/c.exp" "$SCEN/cswitch.yaml" 2>/dev/null
	etlwalk "$T/c.etl" >"$T/walk"
	[ "$(walk_count "$T/walk" COMPACT64 0x05 0x24)" -gt 500 ] || fail "CSwitch records"
	[ "$(walk_count "$T/walk" COMPACT64 0x05 0x24)" = "$(expect_count "$T/c.exp" CSwitch)" ]
	[ "$(walk_count "$T/walk" PERFINFO64 0x05 0x32)" = "$(expect_count "$T/c.exp" ReadyThread)" ]
	# the readying thread is the one running there: the idle thread (before a CPU's first switch too)
	awk -F'\t' '$2 == "ReadyThread" && ($6 != 0 || $4 != "Idle") { bad = 1; print } END { exit bad }' "$T/c.exp"
	# replay the switches: per CPU old_tid is what ran; no thread on two CPUs; samples see the running thread
	awk -F'\t' '
	    $2 == "CSwitch" { cpu = $3; old = substr($8, 9)
	        if ((cpu in run ? run[cpu] : 0) != old) { print "CPU " cpu " at " $1 ": old_tid " old " but " run[cpu] " ran"; bad = 1 }
	        if ($6 != 0) { if (($6 in on) && on[$6] != cpu) { print "tid " $6 " on two CPUs at " $1; bad = 1 }; on[$6] = cpu }
	        else delete on[old]
	        run[cpu] = $6; n++ }
	    $2 == "Sample" && $6 != (($3 in run) ? run[$3] : 0) { print "sample at " $1 " on tid " $6 " but " run[$3] " runs"; bad = 1 }
	    END { exit bad || n < 500 }' "$T/c.exp"
	awk -F'\t' '$2 == "ReadyThread" { r[$3, $8] = $1 } $2 == "CSwitch" && $6 != 0 && !(($3, "ready_tid=" $6) in r) { bad = 1 } END { exit bad }' "$T/c.exp"
}

@test "round trip: context switches at volume (compact CSwitch, ReadyThread, samples of the running thread) in both pointer sizes" {
	for p in 4 8; do for z in --compress --no-compress; do
		etlgen -o "$T/c.etl" --expect "$T/c.exp" --pointer-size "$p" "$z" "$SCEN/cswitch.yaml" 2>/dev/null
		etl2evt -o "$T/c.evt" "$T/c.etl"
		evt_match "$T/c.exp" "$T/c.evt" || fail "pointer size $p $z"
	done; done
}

@test "round trip at volume with switch and ReadyThread stacks (cswitch-heavy.yaml: 16 CPUs, 64 threads)" {
	etlgen -o "$T/h.etl" --expect "$T/h.exp" "$SCEN/cswitch-heavy.yaml" 2>/dev/null
	# every switch-in carries the new thread's stack, every ReadyThread the idle thread's
	awk -F'\t' '$2 == "CSwitch" && $6 != 0 && $NF == "" { bad = 1 } $2 == "ReadyThread" && ($6 != 0 || $NF !~ /;ntoskrnl.exe!0x6b910$/) { bad = 1 }
	    $2 == "CSwitch" { n++ } END { exit bad || n < 50000 }' "$T/h.exp" || fail "expected stacks"
	etl2evt -o "$T/h.evt" "$T/h.etl"
	# (idle threads of two CPUs readying at one tick: their stack records differ only by CPU)
	evt_match "$T/h.exp" "$T/h.evt" || fail "cswitch-heavy: decode differs from the scenario"
}

@test "32-bit logfile header mirrored from smallEtlFile.etl reads back as the real one" {
	require_corpus
	etlgen -o "$T/m.etl" "$SCEN/mirror-small32.yaml" 2>/dev/null
	etlwalk "$T/m.etl" | grep -q 'K SYSTEM32 g=0x00 t=0x00'
	hdr() { etl2evt "$1" | head -1 | tr '\t' '\n' | grep -v -e '^source=' -e '^duration_ms='; }
	hdr "$CORPUS/perfview/smallEtlFile.etl" >"$T/real"
	hdr "$T/m.etl" >"$T/mine"
	grep -q '^pointer_size=4$' "$T/real"
	textdiff "$T/real" "$T/mine"
	# the same fixed fields at the same offsets (BufferSize .. CpuSpeed, PerfFreq, StartTime, clock type)
	f() { od -An -tx1 -j$((72 + 32)) -N16 "$1"; od -An -tx1 -j$((72 + 32 + 44)) -N4 "$1"; od -An -tx1 -j$((72 + 32 + 52)) -N4 "$1"
	      od -An -tx1 -j$((72 + 32 + 248)) -N20 "$1"; }
	textdiff <(f "$CORPUS/perfview/smallEtlFile.etl") <(f "$T/m.etl")
}

@test "--repeat N writes the trace body N times, one period apart, in bounded memory" {
	etlgen -o "$T/one.etl" --expect "$T/one.exp" "$SCEN/kinds.yaml" 2>/dev/null
	etlgen -o "$T/three.etl" --repeat 3 "$SCEN/kinds.yaml" 2>/dev/null
	etlwalk "$T/one.etl" >"$T/w1"
	etlwalk "$T/three.etl" >"$T/w3"
	[ "$(walk_count "$T/w3" PERFINFO64 0x0f 0x44)" -eq $(( 3 * $(walk_count "$T/w1" PERFINFO64 0x0f 0x44) )) ]
	[ "$(walk_count "$T/w3" PERFINFO64 0x0f 0x2e)" -eq $(( 3 * $(walk_count "$T/w1" PERFINFO64 0x0f 0x2e) )) ]
	[ "$(walk_count "$T/w3" PERFINFO64 0x03 0x03)" -eq "$(walk_count "$T/w1" PERFINFO64 0x03 0x03)" ]
	etl2evt -o "$T/three.evt" "$T/three.etl"
	# every DPC of the scenario three times, each copy shifted by the same period
	awk -F'\t' '$2 == "DPC" && $3 == 2 { print $1, $7, $8 }' "$T/three.evt" >"$T/dpcs"
	[ "$(wc -l <"$T/dpcs")" -eq 3 ]
	awk '{ t[NR] = $1; w[NR] = $2 $3 } END { exit !(w[1] == w[2] && w[2] == w[3] && t[2] - t[1] > 40 && (t[3] - t[2]) - (t[2] - t[1]) < 1e-9 && (t[3] - t[2]) - (t[2] - t[1]) > -1e-9) }' "$T/dpcs"
	run etlgen -o "$T/x.etl" --repeat 2 --expect "$T/x.exp" "$SCEN/kinds.yaml"
	[ "$status" -eq 2 ]
}

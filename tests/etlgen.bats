#!/usr/bin/env bats
# etlgen: synthetic .etl files (tests/scenarios/*.yaml).
#  - its independent buffer walker (--walk) agrees with the corpus census,
#    so its checks of the synthetic files mean something;
#  - every variant (pointer size 4/8, compressed or not, full/split/keyed
#    stacks) is structurally valid and holds what the scenario says;
#  - round trips through etl2evt reproduce every time, duration, routine
#    and stack of the scenario (etlgen --expect).
load helpers

SCEN="$BATS_TEST_DIRNAME/scenarios"

# count of records of header HDR, group G, type T in a --walk listing
walk_count() {
	awk -v h="$2" -v g="$3" -v t="$4" '$3 == h && $4 == "g=" g && index($5, "t=" t "(") == 1 { print $1; f = 1 } END { if (!f) print 0 }' "$1"
}

# expected lines of KIND (column 2) in an --expect file
expect_count() {
	awk -F'\t' -v k="$2" '$2 == k { n++ } END { print n + 0 }' "$1"
}

@test "etlgen --walk agrees with the census of the real corpus files" {
	require_corpus
	unzip_member "$CORPUS/perfview/net.4.5.2.x64.etl.zip" net.4.5.2.x64.etl "$T/net.etl"
	for pair in "$T/net.etl:perfview-net.4.5.2.x64" \
	    "$CORPUS/airbus/ShutdownPerfDiagLogger.etl:airbus-ShutdownPerfDiagLogger" \
	    "$CORPUS/perfview/smallEtlFile.etl:perfview-smallEtlFile" \
	    "$CORPUS/perfview/SelfDescribingSingleEvent.etl:perfview-SelfDescribingSingleEvent" \
	    "$CORPUS/tx/HTTP_Server.etl:tx-HTTP_Server" \
	    "$CORPUS/krabsetw/powershell.etl:krabsetw-powershell"; do
		f=${pair%%:*} c="$CORPUS/census/${pair#*:}.txt"
		etlgen --walk "$f" >"$T/walk" || fail "walk failed on $f"
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
		etlgen --walk "$v.etl" >"$v.walk" || fail "walk: $v.etl"
		hp=$([ "$p" = 8 ] && echo 64 || echo 32)
		# the logfile header: marker, pointer size, CPUs, events lost
		[ "$(od -An -tx4 -j72 -N4 "$v.etl" | tr -d ' ')" = "$([ "$p" = 8 ] && echo c0020002 || echo c0010002)" ] || fail "$v: header marker"
		[ "$(od -An -tu4 -j$((72 + 32 + 44)) -N4 "$v.etl" | tr -d ' ')" = "$p" ] || fail "$v: PointerSize"
		[ "$(od -An -tu4 -j$((72 + 32 + 12)) -N4 "$v.etl" | tr -d ' ')" = 4 ] || fail "$v: NumberOfProcessors"
		[ "$(od -An -tu4 -j$((72 + 32 + 48)) -N4 "$v.etl" | tr -d ' ')" = 5 ] || fail "$v: EventsLost"
		# one record per expected event, with the documented header kinds
		[ "$(walk_count "$v.walk" PERFINFO$hp 0x0f 0x2e)" = "$(expect_count "$v.exp" Sample)" ] || fail "$v: samples"
		[ "$(walk_count "$v.walk" PERFINFO$hp 0x0f 0x44)" = "$(expect_count "$v.exp" DPC)" ] || fail "$v: DPC"
		[ "$(walk_count "$v.walk" PERFINFO$hp 0x0f 0x42)" = 1 ] || fail "$v: ThreadedDPC"
		[ "$(walk_count "$v.walk" PERFINFO$hp 0x0f 0x45)" = 1 ] || fail "$v: TimerDPC"
		[ "$(walk_count "$v.walk" PERFINFO$hp 0x0f 0x43)" = 1 ] || fail "$v: ISR"
		[ "$(walk_count "$v.walk" PERFINFO$hp 0x0f 0x32)" = 1 ] || fail "$v: ISR-MSI"
		[ "$(walk_count "$v.walk" COMPACT$hp 0x05 0x24)" = 2 ] || fail "$v: compact CSwitch"
		[ "$(walk_count "$v.walk" SYSTEM$hp 0x05 0x24)" = 1 ] || fail "$v: full CSwitch"
		[ "$(walk_count "$v.walk" COMPACT$hp 0x05 0x32)" = 1 ] || fail "$v: ReadyThread"
		[ "$(walk_count "$v.walk" FULL$hp 0x00 0x24)" = 2 ] || fail "$v: DbgID_RSDS"
		case $s in
		# (two samples of the scenario have an ip and no stack)
		full) [ "$(walk_count "$v.walk" PERFINFO$hp 0x18 0x20)" = "$(( $(expect_count "$v.exp" Sample) - 2 ))" ] || fail "$v: one Stack per sample" ;;
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
	(cd "$T/a" && etlgen -o t.etl --expect t.exp "$SCEN/backup-fixed.yaml" 2>/dev/null)
	(cd "$T/b" && etlgen -o t.etl --expect t.exp "$SCEN/backup-fixed.yaml" 2>/dev/null)
	cmp "$T/a/t.etl" "$T/b/t.etl"
	cmp "$T/a/t.exp" "$T/b/t.exp"
	(cd "$T/c" && etlgen -o t.etl --seed 99 "$SCEN/backup-fixed.yaml" 2>/dev/null)
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
	# the header's events_lost includes the scenario's lost events
	grep -q $'\tevents_lost=5\t' "$T/k.exp"
}

@test "the demo traces: 163,000 ndis.sys DPCs averaging ~220 us on CPUs 0,2,4,6, fixed ~90 us" {
	etlgen -o "$T/i.etl" --expect "$T/i.exp" "$SCEN/backup-incident.yaml" 2>/dev/null
	etlgen --walk "$T/i.etl" >"$T/i.walk"
	awk -F'\t' '$2 == "DPC" && $9 == "module=ndis.sys" { n++; s += $7; c[$3]++ }
	    END { if (n != 163000 || s / n < 0.215 || s / n > 0.225) exit 1
	          for (k in c) if (k != 0 && k != 2 && k != 4 && k != 6) exit 1 }' "$T/i.exp" || fail "incident DPCs"
	[ "$(walk_count "$T/i.walk" PERFINFO64 0x0f 0x44)" = 172000 ] || fail "DPC records"
	[ "$(walk_count "$T/i.walk" PERFINFO64 0x0f 0x2e)" = 240000 ] || fail "1 ms samples on 24 CPUs for 10 s"
	# samples inside the DPCs carry the DPC stacks (NDIS receive path)
	awk -F'\t' '$2 == "Sample" && /\tdpc=1\t/ && $NF ~ /ndis.sys!/ { n++ } END { exit !(n > 30000) }' "$T/i.exp"
	etlgen -o "$T/f.etl" --expect "$T/f.exp" "$SCEN/backup-fixed.yaml" 2>/dev/null
	awk -F'\t' '$2 == "DPC" && $9 == "module=ndis.sys" { n++; s += $7 }
	    END { exit !(n == 163000 && s / n > 0.085 && s / n < 0.095) }' "$T/f.exp" || fail "fixed DPCs"
}

@test "bad scenarios: one-line errors with file and line, exit 2" {
	printf 'machine:\n  cpus: 2\n  duration_ms: 10\n  colour: blue\n' >"$T/a.yaml"
	run etlgen -o "$T/a.etl" "$T/a.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" == *"a.yaml:4: unknown key 'colour'"* ]]
	printf 'machine: {cpus: 2, duration_ms: 10}\nevents:\n  - {kind: DPC, t_ms: 1, cpu: 5, routine: x.sys+0x10, duration_us: 3}\n' >"$T/b.yaml"
	run etlgen -o "$T/b.etl" "$T/b.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" == *"b.yaml:3: CPU 5, but the machine has 2 CPUs"* ]]
	printf 'machine: {cpus: 2, duration_ms: 10}\nevents:\n  - {kind: DPC, t_ms: 1, cpu: 1, routine: x.sys+0x10, duration_us: 3}\n' >"$T/c.yaml"
	run etlgen -o "$T/c.etl" "$T/c.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" == *"no image 'x.sys'"* ]]
	printf 'machine: {cpus: 1, duration_ms: 1}\nprocesses:\n  - {name: System, pid: 4, images: [{path: a.sys, base: 0xfffff80000000000, size: 0x1000}]}\ngenerate:\n  - {kind: DPC, routine: a.sys+0x10, count: 100, duration_us: 50}\n' >"$T/d.yaml"
	run etlgen -o "$T/d.etl" "$T/d.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" == *"do not fit"* ]]
	printf 'machine: [1\n' >"$T/e.yaml"
	run etlgen -o "$T/e.etl" "$T/e.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" == etlgen:* ]]
	run etlgen --bogus
	[ "$status" -eq 2 ]
}

@test "etlgen --walk reports truncated and corrupted files with the byte offset" {
	etlgen -o "$T/k.etl" --no-compress "$SCEN/kinds.yaml" 2>/dev/null
	head -c 20000 "$T/k.etl" >"$T/trunc.etl"
	run etlgen --walk "$T/trunc.etl"
	[ "$status" -eq 1 ]
	[[ "$output" == *"trunc.etl: offset 16384: bad buffer sizes"* ]]
	# a record size pointing past the buffer's fill
	cp "$T/k.etl" "$T/flip.etl"
	printf '\xff\x7f' | dd of="$T/flip.etl" bs=1 seek=$((8192 + 72 + 4)) conv=notrunc 2>/dev/null
	run etlgen --walk "$T/flip.etl"
	[ "$status" -eq 1 ]
	[[ "$output" == *"offset 8264: record size out of bounds"* ]]
}

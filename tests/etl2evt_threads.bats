#!/usr/bin/env bats
# etl2evt on two cores: the thread that reads, decompresses and parses ahead
# (lib/etl/etl.c, struct pump), and compressed buffers decompressed once and
# kept between the passes, in memory or in a temporary file (struct store).
# None of it may change a byte of the output or of the messages: each case
# compares one thread (-j 1) with two, and buffers in memory with buffers in
# the file; the counts come from the corpus census and the trace's own header.
#
# And the trace's threads: Windows reuses thread ids, so one tid can be
# several threads, one after another; each event naming it belongs to the
# life begun last by its time (tests/scenarios/tid-reuse.yaml, etlgen).
load helpers

NET=perfview/net.4.5.2.x64.etl.zip

local_setup() {
	require_corpus
}

# same_run NAME ARGS...: etl2evt ARGS with one thread, with two, with every
# decompressed buffer in the temporary file and with a 3 MiB cap (some in
# memory, the rest in the file): the same stdout, stderr and exit status.
same_run() {
	local name=$1
	shift
	etl2evt_alike "$name" "-j 2" "--buffer-memory=0" "--buffer-memory=3" "-j 1 --buffer-memory=0" -- "$@"
}

# flip SRC DST SEED N FROM [TO]: DST is SRC with N bytes between offsets FROM
# and TO (the end) set to pseudo-random values (the same for the same SEED).
flip() {
	python3 - "$@" <<'PY'
import random, sys
src, dst, seed, n, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
d = bytearray(open(src, "rb").read())
end = int(sys.argv[6]) if len(sys.argv) > 6 else len(d)
r = random.Random(seed)
for _ in range(n):
    d[r.randrange(start, end)] = r.randrange(256)
open(dst, "wb").write(bytes(d))
PY
}

@test "net.4.5.2.x64 (359 compressed buffers): one thread or two, buffers in memory or in the file, the same evt; the census' events all read" {
	unzip_member "$CORPUS/$NET" net.4.5.2.x64.etl "$T/net.etl"
	[ "$(same_run net "$T/net.etl")" = 0 ]
	# the header counts what the census counts, and the stream is whole
	census=$(sed -n 's/.*compressed buffers: \([0-9]*\) .*/\1/p' "$CENSUS/perfview-net.4.5.2.x64.txt")
	[ "$census" = 359 ]
	head -1 "$T/net.evt" | grep -q $'\tcompressed_buffers=359\t' || fail "$(head -1 "$T/net.evt")"
	# every SampledProfile of the census is a Sample line
	samples=$(awk '$2 == "K" && / g=0x0f t=0x2e\(46\)/ { print $1 }' "$CENSUS/perfview-net.4.5.2.x64.txt")
	[ "$samples" = 79528 ]
	[ "$(awk -F'\t' '$2 == "Sample"' "$T/net.evt" | wc -l)" -eq "$samples" ]
	# --census reads each buffer in file order (the first pass alone), from the file too
	want=$(sed -n 's/^events parsed: \([0-9]*\).*/\1/p' "$CENSUS/perfview-net.4.5.2.x64.txt")
	for v in "-j 1" "-j 2" "--buffer-memory=0"; do
		# shellcheck disable=SC2086
		got=$(etl2evt $v --census "$T/net.etl" | sed -n 's/^events parsed: \([0-9]*\).*/\1/p')
		[ "$got" = "$want" ] || fail "$v: $got events parsed, the census says $want"
	done
}

@test "pinned to one CPU (taskset, a cgroup cpuset, Slurm's allocation), etl2evt reads on one thread by itself; the same evt" {
	command -v taskset >/dev/null || skip "no taskset"
	unzip_member "$CORPUS/$NET" net.4.5.2.x64.etl "$T/net.etl"
	# ETLKIT_THREAD_CPU names each thread that worked, per pass
	ETLKIT_THREAD_CPU=1 taskset -c 0 "$ETLKIT_BIN/etl2evt" -o "$T/one.evt" "$T/net.etl" 2>"$T/one.err"
	grep -q "caller's thread, pass 2" "$T/one.err" || fail "no thread report: $(cat "$T/one.err")"
	! grep -E "worker|decompressing" "$T/one.err" || fail "a second thread on one CPU"
	if [ "$(nproc)" -ge 2 ]; then
		ETLKIT_THREAD_CPU=1 taskset -c 0,1 "$ETLKIT_BIN/etl2evt" -o "$T/two.evt" "$T/net.etl" 2>"$T/two.err"
		grep -q "worker thread, pass 2" "$T/two.err" || fail "two CPUs, no worker: $(cat "$T/two.err")"
		cmp -s "$T/one.evt" "$T/two.evt" || fail "one CPU and two differ"
	fi
	[ "$(awk -F'\t' '$2 == "Sample"' "$T/one.evt" | wc -l)" -eq 79528 ]
}

@test "net.4.5.2.x64: decompressed buffers beyond --buffer-memory are not kept in memory (peak RSS 15 MB lower with none kept)" {
	asan && skip "RSS under ASan says nothing"
	unzip_member "$CORPUS/$NET" net.4.5.2.x64.etl "$T/net.etl"
	# 359 buffers of up to 64 KiB (the census' BufferSize 65536): 23 MB decompressed
	kept=$(peak_rss_kb etl2evt -k Sample "$T/net.etl")
	none=$(peak_rss_kb etl2evt -k Sample --buffer-memory=0 "$T/net.etl")
	[ "$kept" -gt 0 ] && [ "$none" -gt 0 ] || fail "etl2evt failed: $kept $none"
	[ $((kept - none)) -ge 15000 ] || fail "peak RSS $kept kB with buffers kept, $none kB with none"
	# a temporary directory that cannot be written: the buffers are decompressed again, the same evt
	TMPDIR=/nonexistent etl2evt -k Sample --buffer-memory=0 "$T/net.etl" >"$T/nofile.evt"
	cmp -s "$T/out" "$T/nofile.evt" || fail "without a temporary file, another evt"
}

@test "a damaged compressed trace: the same messages, in the same order, with one thread or two" {
	unzip_member "$CORPUS/$NET" net.4.5.2.x64.etl "$T/net.etl"
	flip "$T/net.etl" "$T/bad.etl" 5 40 65536
	[ "$(same_run bad "$T/bad.etl")" = 1 ]
	# the damage was seen: buffers that do not decompress, records cut short
	[ "$(grep -c 'etl2evt: .*bad.etl: offset [0-9]*: ' "$T/bad.err")" -ge 10 ] || fail "$(cat "$T/bad.err")"
	grep -q 'cannot be decompressed' "$T/bad.err" || fail "$(cat "$T/bad.err")"
	grep -q '^#skipped	what=buffer	count=[1-9]' "$T/bad.evt"
}

@test "a damaged uncompressed trace (the incident, etlgen): the same messages and evt with one thread or two" {
	etlgen --no-compress -o "$T/u.etl" "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" 2>/dev/null
	# damage packed in 1 MiB, so that the worker, a few batches ahead, finds
	# problems after the converter's own (a timestamp outside the session),
	# which must still come after the reader's messages: their order is the test
	flip "$T/u.etl" "$T/ubad.etl" 1 300 1048576 2097152
	[ "$(same_run ubad "$T/ubad.etl")" = 1 ]
	grep -n 'ubad.etl: offset [0-9]*: ' "$T/ubad.err" >"$T/msgs"
	[ "$(wc -l <"$T/msgs")" -ge 10 ] || fail "$(cat "$T/ubad.err")"
	at=$(grep -n 'timestamp outside the session' "$T/msgs" | cut -d: -f1)
	[ -n "$at" ] && [ "$at" -gt 1 ] && [ "$at" -lt "$(wc -l <"$T/msgs")" ] || fail "$(cat "$T/ubad.err")"
	# and undamaged, compressed with XPRESS: every line of the uncompressed trace
	etlgen --compress -o "$T/c.etl" "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" 2>/dev/null
	[ "$(same_run c "$T/c.etl")" = 0 ]
	etl2evt -j 1 "$T/u.etl" >"$T/u.evt"
	textdiff <(grep -v '^#' "$T/u.evt") <(grep -v '^#' "$T/c.evt") >"$T/d" || fail "$(head -5 "$T/d")"
	[ "$(grep -vc '^#' "$T/u.evt")" -gt 400000 ]
}

@test "a .diagsession of four files merged on their times: one thread or two (a reader ahead for each file), the same evt" {
	[ "$(same_run diag "$CORPUS/perfview/diaghub-dotnetcore3.1-win-x64-diagsession.zip")" = 0 ]
	head -1 "$T/diag.evt" | grep -q $'\tfiles=4' || fail "$(head -1 "$T/diag.evt")"
}

@test "--threads and --buffer-memory refuse what they cannot use (exit 2)" {
	for bad in "-j 0" "--threads=x" "--buffer-memory=-1" "--buffer-memory=65537"; do
		# shellcheck disable=SC2086
		run etl2evt $bad "$CORPUS/perfview/smallEtlFile.etl"
		[ "$status" -eq 2 ] || fail "$bad: exit $status"
		[[ "$output" == "etl2evt: "*"try 'etl2evt --help'"* ]] || fail "$bad: $output"
	done
	etl2evt --help | grep -q -- '--buffer-memory=MB'
	etl2evt --help | grep -q -- '--threads=N'
}

@test "ctf-net45-win7.etl.zip: its PDBs inflated ahead on the second thread or not, the same evt; each of the zip's symbols\\*.pdb names frames" {
	[ "$(same_run ctf "$CORPUS/perfview/ctf-net45-win7.etl.zip")" = 0 ]
	# the zip's PDB members, as python's zipfile lists them
	python3 -c 'import sys, zipfile
for n in zipfile.ZipFile(sys.argv[1]).namelist():
    if n.lower().startswith("symbols") and n.lower().endswith(".pdb"): print(n)' \
	    "$CORPUS/perfview/ctf-net45-win7.etl.zip" | sort >"$T/members"
	[ "$(wc -l <"$T/members")" -eq 3 ]
	grep '^#symbols' "$T/ctf.evt" | grep $'\tstatus=resolved\t' | grep -v $'\tresolved=0$' |
	    sed -n 's/.*\tpath=[^\t]*\.zip:\([^\t]*\)\t.*/\1/p' | sort >"$T/resolved"
	textdiff "$T/members" "$T/resolved" || fail "PDBs of the zip that named no frame"
}

@test "evt into a pipe or a file is written by a thread of its own (none for /dev/null, -j 1 or one CPU): the same bytes" {
	unzip_member "$CORPUS/$NET" net.4.5.2.x64.etl "$T/net.etl"
	ETLKIT_THREAD_CPU=1 "$ETLKIT_BIN/etl2evt" "$T/net.etl" 2>"$T/pipe.err" | cat >"$T/pipe.evt"
	ETLKIT_THREAD_CPU=1 "$ETLKIT_BIN/etl2evt" -o "$T/file.evt" "$T/net.etl" 2>"$T/file.err"
	ETLKIT_THREAD_CPU=1 "$ETLKIT_BIN/etl2evt" -j 1 "$T/net.etl" 2>"$T/one.err" | cat >"$T/one.evt"
	ETLKIT_THREAD_CPU=1 "$ETLKIT_BIN/etl2evt" -o /dev/null "$T/net.etl" 2>"$T/null.err"
	for w in pipe file; do
		grep -q '^outbuf: writing thread: ' "$T/$w.err" || fail "$w: no writing thread: $(cat "$T/$w.err")"
	done
	if command -v taskset >/dev/null; then
		ETLKIT_THREAD_CPU=1 taskset -c 0 "$ETLKIT_BIN/etl2evt" "$T/net.etl" 2>"$T/cpu1.err" | cat >/dev/null
		! grep -q '^outbuf: writing thread' "$T/cpu1.err" || fail "one CPU: a writing thread"
	fi
	for w in one null; do
		! grep -q '^outbuf: writing thread' "$T/$w.err" || fail "$w: a writing thread"
	done
	cmp "$T/pipe.evt" "$T/one.evt" || fail "pipe and one thread differ"
	cmp "$T/file.evt" "$T/one.evt" || fail "file and one thread differ"
	# whole: every census sample, and the last line ends
	[ "$(awk -F'\t' '$2 == "Sample"' "$T/pipe.evt" | wc -l)" -eq 79528 ]
	[ "$(tail -c 1 "$T/pipe.evt" | od -An -c | tr -d ' ')" = '\n' ]
}

@test "a write error on the writing thread (a file past its size limit) is one line naming the file, exit 2" {
	unzip_member "$CORPUS/$NET" net.4.5.2.x64.etl "$T/net.etl"
	# SIGXFSZ ignored: the write past the limit fails with EFBIG instead of killing
	run bash -c "trap '' XFSZ; ulimit -f 2048; exec '$ETLKIT_BIN/etl2evt' -o '$T/big.evt' '$T/net.etl'"
	[ "$status" -eq 2 ] || fail "exit $status: $output"
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	[ "$output" = "etl2evt: $T/big.evt: write error: File too large" ] || fail "$output"
	[ "$(wc -c <"$T/big.evt")" -le $((2048 * 1024)) ]
}

# reuse_lines FILE: the lines of an evt or --expect FILE that name tid 700
# (tid, old_tid or ready_tid): time, kind, CPU, process, pid, tid, the
# other thread's ids and process, and a sample's stack; thread-time lines
# and the rest of the attributes left out
reuse_lines() {
	awk -F'\t' '$2 ~ /^(Sample|CSwitch|ReadyThread|Thread(DC)?(Start|End))$/ {
		x = ""
		for (i = 8; i < NF; i++)
			if ($i ~ /^(old_tid|old_pid|old_process|ready_tid|ready_pid)=/)
				x = x "\t" $i
		if ($6 != 700 && x !~ /_tid=700(\t|$)/)
			next
		print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 x ($2 == "Sample" ? "\t" $NF : "")
	}' "$1"
}

@test "tid-reuse: a thread id with three lives (first.exe, second.exe, third.exe): each sample, CSwitch and ReadyThread names the life alive at its time, both pointer sizes" {
	# from the scenario's text: tid 700 is pid 600 from 1 to 10 ms, pid 800
	# from 20 to 30, pid 900 from 40 to 50; the exes share a base, so a
	# sample's frames name the exe of the process it was given
	cat >"$T/want" <<-'EOF'
	1.000000	ThreadStart	0	first.exe	600	700
	5.000000	Sample	0	first.exe	600	700	first.exe!0x1000;first.exe!0x2340
	10.000000	ThreadEnd	0	first.exe	600	700
	20.000000	ThreadStart	0	second.exe	800	700
	23.500000	ReadyThread	1	Idle	0	0	ready_tid=700	ready_pid=800
	24.000000	CSwitch	1	second.exe	800	700	old_tid=0	old_pid=0	old_process=Idle
	25.000000	Sample	1	second.exe	800	700	second.exe!0x1000;second.exe!0x2340
	26.000000	CSwitch	1	Idle	0	0	old_tid=700	old_pid=800	old_process=second.exe
	30.000000	ThreadEnd	0	second.exe	800	700
	40.000000	ThreadStart	0	third.exe	900	700
	43.500000	ReadyThread	2	Idle	0	0	ready_tid=700	ready_pid=900
	44.000000	CSwitch	2	third.exe	900	700	old_tid=0	old_pid=0	old_process=Idle
	45.000000	Sample	2	third.exe	900	700	third.exe!0x1000;third.exe!0x2340
	46.000000	CSwitch	2	Idle	0	0	old_tid=700	old_pid=900	old_process=third.exe
	50.000000	ThreadEnd	0	third.exe	900	700
	EOF
	for p in 8 4; do
		etlgen -o "$T/r$p.etl" --expect "$T/r$p.exp" --pointer-size "$p" \
		    "$BATS_TEST_DIRNAME/scenarios/tid-reuse.yaml" 2>/dev/null
		etl2evt "$T/r$p.etl" >"$T/r$p.evt"
		grep -q $'\tpointer_size='"$p"$'\t' "$T/r$p.evt" || fail "ptr$p: $(head -1 "$T/r$p.evt")"
		# etl2evt's lines (a ThreadStart and a ThreadEnd per life, no rundown of tid 700)
		reuse_lines "$T/r$p.evt" >"$T/got$p"
		textdiff "$T/want" "$T/got$p" || fail "ptr$p: etl2evt's lines differ from the lives (< stated, > decoded)"
		# and etlgen's --expect, its own lookup of each event's life, says the same
		reuse_lines "$T/r$p.exp" >"$T/exp$p"
		textdiff "$T/want" "$T/exp$p" || fail "ptr$p: etlgen --expect differs from the lives (< stated, > expected)"
	done
}

@test "tid-reuse: thread time starts each life of a reused thread id afresh: its intervals tile the life, and nothing (prio) carries over from the last one" {
	# from the scenario's text: each life waits from its ThreadStart; the
	# second and third are readied 3.5 ms in, run from 4 ms to 6 ms at their
	# own prio (10, 12) and wait until their ThreadEnd.  A life's first wait
	# has no prio: the thread has not run in it yet.
	cat >"$T/want" <<-'EOF'
	1.000000	Waiting	-1	first.exe	600	700	9	-
	20.000000	Waiting	-1	second.exe	800	700	3.5	-
	23.500000	Ready	1	second.exe	800	700	0.5	prio=10
	24.000000	Running	1	second.exe	800	700	2	prio=10
	26.000000	Waiting	1	second.exe	800	700	4	prio=10
	40.000000	Waiting	-1	third.exe	900	700	3.5	-
	43.500000	Ready	2	third.exe	900	700	0.5	prio=12
	44.000000	Running	2	third.exe	900	700	2	prio=12
	46.000000	Waiting	2	third.exe	900	700	4	prio=12
	EOF
	for p in 8 4; do
		etlgen -o "$T/r$p.etl" --pointer-size "$p" "$BATS_TEST_DIRNAME/scenarios/tid-reuse.yaml" 2>/dev/null
		etl2evt "$T/r$p.etl" >"$T/r$p.evt"
		awk -F'\t' '$6 == 700 && $2 ~ /^(Running|Ready|Waiting)$/ {
			prio = "-"
			for (i = 8; i < NF; i++)
				if ($i ~ /^prio=/)
					prio = $i
			print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6 "\t" $7 "\t" prio
		}' "$T/r$p.evt" >"$T/got$p"
		textdiff "$T/want" "$T/got$p" || fail "ptr$p: thread-time lines of tid 700 differ (< stated, > decoded)"
	done
}

# reuse_refused NAME YAML GLOB: etlgen refuses the scenario YAML (printf
# escapes, written to $T/NAME.yaml) with exit 2 and one line matching GLOB.
reuse_refused() {
	printf '%b' "$2" >"$T/$1.yaml"
	run etlgen -o "$T/$1.etl" "$T/$1.yaml"
	[ "$status" -eq 2 ] || fail "$1.yaml: exit $status: $output"
	[ "${#lines[@]}" -eq 1 ] || fail "$1.yaml: $output"
	# shellcheck disable=SC2053
	[[ "$output" == $3 ]] || fail "$1.yaml: $output"
}

@test "tid-reuse: etlgen refuses a tid's overlapping lives, a second declaration without start_ms and end_ms, and an event between lives, naming the line" {
	M='machine: {cpus: 2, duration_ms: 60}\nprocesses:\n'
	A='  - {name: a.exe, pid: 600, threads: [{tid: 700, start_ms: 1, end_ms: 10}]}\n'
	reuse_refused over "$M$A  - {name: b.exe, pid: 800, threads: [{tid: 700, start_ms: 5, end_ms: 30}]}\n" \
	    '*over.yaml:4: tid 700 declared twice with overlapping lives: 5-30 ms here, 1-10 ms in a.exe (pid 600)*'
	# one life ending as the next starts: an event then would be either's
	reuse_refused touch "$M$A  - {name: b.exe, pid: 800, threads: [{tid: 700, start_ms: 10, end_ms: 30}]}\n" \
	    '*touch.yaml:4: tid 700 declared twice with overlapping lives*'
	# in one process too (block style: the line of the second declaration)
	reuse_refused same "${M}  - name: a.exe\n    pid: 600\n    threads:\n      - {tid: 700, start_ms: 1, end_ms: 10}\n      - {tid: 700, start_ms: 8, end_ms: 20}\n" \
	    '*same.yaml:7: tid 700 declared twice with overlapping lives: 8-20 ms here, 1-10 ms in a.exe*'
	reuse_refused open "$M$A  - {name: b.exe, pid: 800, threads: [{tid: 700, start_ms: 40}]}\n" \
	    '*open.yaml:4: tid 700 declared twice: a reused tid needs start_ms and end_ms in every declaration*'
	reuse_refused first "${M}  - {name: a.exe, pid: 600, threads: [{tid: 700}]}\n  - {name: b.exe, pid: 800, threads: [{tid: 700, start_ms: 20, end_ms: 30}]}\n" \
	    '*first.yaml:4: tid 700 declared twice: a reused tid needs start_ms and end_ms in every declaration (not so in a.exe, pid 600)*'
	# an event on the reused tid at a time none of its lives holds
	B='  - {name: b.exe, pid: 800, threads: [{tid: 700, start_ms: 20, end_ms: 30}]}\n'
	reuse_refused gap "$M$A${B}events:\n  - {kind: Sample, t_ms: 5, cpu: 0, tid: 700, ip: 0x400010}\n  - {kind: Sample, t_ms: 15, cpu: 1, tid: 700, ip: 0x400010}\n" \
	    '*gap.yaml:7: thread 700 is reused and none of its lives holds 15 ms*'
	reuse_refused gapcs "$M$A${B}events:\n  - {kind: CSwitch, t_ms: 31, cpu: 0, new_tid: 0, old_tid: 700}\n" \
	    '*gapcs.yaml:6: thread 700 is reused and none of its lives holds 31 ms*'
	# the same lives, events inside them: accepted
	printf '%b' "$M$A${B}events:\n  - {kind: Sample, t_ms: 10, cpu: 0, tid: 700, ip: 0x400010}\n  - {kind: Sample, t_ms: 20, cpu: 1, tid: 700, ip: 0x400010}\n" >"$T/ok.yaml"
	etlgen -o "$T/ok.etl" "$T/ok.yaml" 2>/dev/null
}

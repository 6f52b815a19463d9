#!/usr/bin/env bats
# etl2evt on two cores: the thread that reads, decompresses and parses ahead
# (lib/etl/etl.c, struct pump), and compressed buffers decompressed once and
# kept between the passes, in memory or in a temporary file (struct store).
# None of it may change a byte of the output or of the messages: each case
# compares one thread (-j 1) with two, and buffers in memory with buffers in
# the file; the counts come from the corpus census and the trace's own header.
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

#!/usr/bin/env bats
# etl2evt on hostile and huge zips (lib/etl/zip.c, filters/etl2evt.c): zip
# bombs are refused quickly with one line naming the member and the offset,
# having written at most the declared size (nothing, when the refusal
# comes first) to TMPDIR; zip64 archives over 4 GiB are read.  The zips are
# written by tests/zipbomb.py: gigabytes of zeros as repeated deflate
# blocks, stored gigabytes as holes in sparse files.
load helpers

local_setup() {
	require_corpus
	BOMB="python3 $BATS_TEST_DIRNAME/zipbomb.py"
}

# bounded KB OUT CMD...: runs CMD with TMPDIR a fresh directory ($T/tmp)
# and no file written past KB KiB (a write past it kills CMD with SIGXFSZ,
# status 153); CMD's stdout goes to OUT through a pipe, outside the bound.
bounded() {
	local kb=$1 out=$2
	shift 2
	mkdir -p "$T/tmp"
	set -o pipefail
	TMPDIR="$T/tmp" bash -c 'ulimit -f "$0" && exec "$@"' "$kb" "$@" | cat >"$out"
}

# TMPDIR holds nothing afterwards (temporary files are unlinked at once)
tmp_empty() {
	[ -z "$(ls -A "$T/tmp")" ] || fail "TMPDIR left: $(ls -A "$T/tmp")"
}

events() {
	grep -v '^#' "$1"
}

@test "overlapping members declaring 3.5 GB each: refused before anything is inflated" {
	head -c 1048576 "$CORPUS/airbus/ShutdownPerfDiagLogger.etl" >"$T/head.etl"
	$BOMB overlap "$T/ov.zip" "$T/head.etl" 3 3500000000
	[ "$(stat -c %s "$T/ov.zip")" -lt 8000000 ]
	run bounded 0 /dev/null etl2evt "$T/ov.zip"
	[ "$status" -eq 2 ] || fail "status $status: $output"
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	[[ "$output" == "etl2evt: $T/ov.zip: member m2.etl (offsets 0-"*") overlaps member m1.etl (offsets 0-"*"refusing a zip whose members share data" ]] || fail "$output"
	tmp_empty
}

@test "a member declaring 1,000 bytes that inflates to 2 GiB: stopped at 1,000 bytes, offset named" {
	$BOMB liar "$T/liar.zip" /dev/null 1000 $((2 << 30))
	[ "$(stat -c %s "$T/liar.zip")" -lt 3000000 ]
	run bounded 4 /dev/null etl2evt "$T/liar.zip"
	[ "$status" -eq 2 ] || fail "status $status: $output"
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	[[ "$output" =~ ^etl2evt:\ .*/liar.zip:\ member\ liar.etl:\ inflates\ to\ more\ than\ its\ declared\ 1000\ bytes\ \(stopped\ at\ offset\ ([0-9]+)\)$ ]] || fail "$output"
	[ "${BASH_REMATCH[1]}" -lt "$(stat -c %s "$T/liar.zip")" ]
	tmp_empty
}

@test "a trace member declaring 1 MiB that inflates to 2 GiB: at most the declared 1 MiB written" {
	head -c 1048576 "$CORPUS/airbus/ShutdownPerfDiagLogger.etl" >"$T/head.etl"
	$BOMB liar "$T/liar.zip" "$T/head.etl" 1048576 $((2 << 30))
	# the bound is the declared size exactly: one byte more kills etl2evt
	run bounded 1024 /dev/null etl2evt "$T/liar.zip"
	[ "$status" -eq 2 ] || fail "status $status: $output"
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	[[ "$output" == "etl2evt: $T/liar.zip: member liar.etl: inflates to more than its declared 1048576 bytes (stopped at offset "*")" ]] || fail "$output"
	tmp_empty
}

@test "a member that inflates to less than it declares: an error naming the member and the offset" {
	head -c 300000 "$CORPUS/airbus/ShutdownPerfDiagLogger.etl" >"$T/head.etl"
	$BOMB liar "$T/short.zip" "$T/head.etl" 1048576 300000
	run bounded 1024 /dev/null etl2evt "$T/short.zip"
	[ "$status" -eq 2 ] || fail "status $status: $output"
	[[ "$output" == "etl2evt: $T/short.zip: member liar.etl: inflates to 300000 bytes, less than its declared 1048576 (deflate data ends at offset "*")" ]] || fail "$output"
	tmp_empty
}

@test "the only .etl member is 1 GiB of zeros, not a trace: refused from its first 64 KiB, nothing written" {
	$BOMB notetl "$T/z.zip" $((1 << 30))
	run bounded 0 /dev/null etl2evt "$T/z.zip"
	[ "$status" -eq 2 ] || fail "status $status: $output"
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	[[ "$output" == "etl2evt: $T/z.zip: member a.etl is not an ETL trace (offset 0: not an ETL file"* ]] || fail "$output"
	tmp_empty
}

@test "a .etl member that is not a trace beside one that is: skipped and counted, the trace decoded" {
	etl="$CORPUS/tx/HTTP_Server.etl"
	$BOMB notetl "$T/z.zip" $((1 << 30)) "$etl"
	run bounded 1024 "$T/z.evt" etl2evt --no-symbols "$T/z.zip"
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[[ "$output" == "etl2evt: $T/z.zip: member a.etl is not an ETL trace ("*"); skipped" ]] || fail "$output"
	grep -qx $'#skipped\twhat=member\tcount=1\tdetail=.etl members of a zip that are not ETL traces' "$T/z.evt"
	etl2evt --no-symbols "$etl" >"$T/plain.evt"
	textdiff <(events "$T/plain.evt") <(events "$T/z.evt")
	evtcheck "$T/z.evt"
	tmp_empty
}

@test "members declaring more than TMPDIR's free space: refused before writing, sizes named" {
	$BOMB declare "$T/huge.zip" "$CORPUS/tx/HTTP_Server.etl" $((1 << 50))
	run bounded 0 /dev/null etl2evt "$T/huge.zip"
	[ "$status" -eq 2 ] || fail "status $status: $output"
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	[[ "$output" =~ ^etl2evt:\ .*/huge.zip:\ the\ members\ to\ inflate\ declare\ 1125899906842624\ bytes\;\ .*/tmp\ has\ only\ ([0-9]+)\ free ]] || fail "$output"
	# the free space it reports is the file system's (within 10%)
	python3 -c 'import os, sys
s = os.statvfs(sys.argv[1]); free = s.f_bavail * s.f_frsize
sys.exit(abs(int(sys.argv[2]) - free) > free / 10)' "$T/tmp" "${BASH_REMATCH[1]}"
	tmp_empty
}

@test "zip64 over 4 GiB (sparse): members past 4 GiB decode, a stored one in place with no copy" {
	etl="$CORPUS/tx/HTTP_Server.etl"
	$BOMB zip64 "$T/big.zip" "$etl" $(((4 << 30) + 12345))
	# python's zipfile reads it as a zip64 archive with members past 4 GiB
	python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1]); m = {i.filename: i for i in z.infolist()}
assert m["pad.bin"].file_size > 1 << 32 and m["stored.etl"].header_offset > 1 << 32, m
assert z.read("stored.etl") == z.read("deflated.etl") == open(sys.argv[2], "rb").read()' "$T/big.zip" "$etl"
	[ "$(du -k "$T/big.zip" | cut -f1)" -lt 10000 ]
	etl2evt --no-symbols "$etl" >"$T/plain.evt"
	# stored: read in place, nothing written to TMPDIR
	run bounded 0 "$T/s.evt" etl2evt --no-symbols --member stored.etl "$T/big.zip"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	textdiff <(events "$T/plain.evt") <(events "$T/s.evt")
	# deflated: inflated to TMPDIR, its 288 KiB and no more
	run bounded 288 "$T/d.evt" etl2evt --no-symbols --member deflated.etl "$T/big.zip"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	textdiff <(events "$T/plain.evt") <(events "$T/d.evt")
	tmp_empty
	rm -f "$T/big.zip"
}

@test "corpus zips: every .etl member decodes as python's zipfile extracts it" {
	for z in perfview/gcevents.etl.zip perfview/primitive-types.etl.zip \
	    perfview/diaghub-dotnetcore3.1-win-x64-diagsession.zip perfview/net.4.5.2.x64.etl.zip; do
		if asan && [ "$z" = perfview/net.4.5.2.x64.etl.zip ]; then continue; fi
		python3 -c 'import sys, zipfile
for n in zipfile.ZipFile(sys.argv[1]).namelist():
    if n.endswith(".etl"): print(n)' "$CORPUS/$z" >"$T/members"
		[ -s "$T/members" ]
		while read -r m; do
			unzip_member "$CORPUS/$z" "$m" "$T/m.etl"
			etl2evt --no-symbols "$T/m.etl" >"$T/plain.evt"
			etl2evt --no-symbols --member "$m" "$CORPUS/$z" >"$T/zip.evt"
			textdiff <(events "$T/plain.evt") <(events "$T/zip.evt") || fail "$z:$m"
		done <"$T/members"
	done
}

@test "zip64 extra fields of local headers (python's force_zip64): read, and sizes that differ from the central directory refused" {
	etl="$CORPUS/tx/HTTP_Server.etl"
	python3 -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    with z.open("trace.etl", "w", force_zip64=True) as f:
        f.write(open(sys.argv[2], "rb").read())' "$T/p.zip" "$etl"
	etl2evt --no-symbols "$etl" >"$T/plain.evt"
	run bounded 288 "$T/p.evt" etl2evt --no-symbols "$T/p.zip"
	[ "$status" -eq 0 ] || fail "status $status: $output"
	textdiff <(events "$T/plain.evt") <(events "$T/p.evt")
	# one more byte in the local header's zip64 uncompressed size
	python3 -c 'import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
nlen, xlen = struct.unpack_from("<HH", d, 26)
x = 30 + nlen
assert struct.unpack_from("<HH", d, x) == (1, 16) and struct.unpack_from("<I", d, 22)[0] == 0xffffffff
struct.pack_into("<Q", d, x + 4, struct.unpack_from("<Q", d, x + 4)[0] + 1)
open(sys.argv[2], "wb").write(d)' "$T/p.zip" "$T/q.zip"
	run bounded 0 /dev/null etl2evt --no-symbols "$T/q.zip"
	[ "$status" -eq 2 ] || fail "status $status: $output"
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	[[ "$output" == "etl2evt: $T/q.zip: member trace.etl: its local header at offset 0 declares other sizes than the central directory (294912 bytes, "*" compressed)" ]] || fail "$output"
	tmp_empty
}

#!/usr/bin/env bats
# etl2evt on damaged traces made from the corpus: a clear one-line error
# naming the file and the byte offset, exit 1, and the rest still decoded.
load helpers

local_setup() {
	require_corpus
}

# corrupt IN OUT PYTHON-EXPR: OUT = IN's bytes changed by the expression on d (a bytearray)
corrupt() {
	python3 - "$1" "$2" "$3" <<'PY'
import random, sys
d = bytearray(open(sys.argv[1], "rb").read())
random.seed(7)
exec(sys.argv[3])
open(sys.argv[2], "wb").write(d)
PY
}

events() {
	grep -vc '^#' "$1"
}

@test "truncated mid-buffer: error names the file and the buffer offset, earlier buffers decode" {
	corrupt "$CORPUS/tx/HTTP_Server.etl" "$T/t.etl" 'del d[len(d) - 3000:]'
	run etl2evt -o "$T/t.evt" "$T/t.etl"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "etl2evt: $T/t.etl: offset 286720: truncated buffer"* ]] || fail "$output"
	[ "$(events "$T/t.evt")" -gt 1950 ]
	grep -q '^#skipped.*what=buffer' "$T/t.evt"
	evtcheck "$T/t.evt"
}

@test "a flipped BufferSize: reported with its offset, read at the logfile's stride, nothing lost" {
	corrupt "$CORPUS/tx/HTTP_Server.etl" "$T/f.etl" 'd[5*8192:5*8192+4] = (0x7fffffff).to_bytes(4, "little")'
	run etl2evt -o "$T/f.evt" "$T/f.etl"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$T/f.etl: offset 40960: buffer 5: BufferSize 2147483647 is not the logfile's 8192"* ]] || fail "$output"
	etl2evt -o "$T/orig.evt" "$CORPUS/tx/HTTP_Server.etl"
	[ "$(events "$T/f.evt")" -eq "$(events "$T/orig.evt")" ] || fail "$(events "$T/f.evt") events"
	evtcheck "$T/f.evt"
}

@test "random bytes inside a buffer: the damaged buffer is cut, the rest decodes" {
	corrupt "$CORPUS/tx/HTTP_Server.etl" "$T/r.etl" 'o = 10*8192 + 0x100
d[o:o+300] = bytes(random.getrandbits(8) for _ in range(300))'
	run etl2evt -o "$T/r.evt" "$T/r.etl"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$T/r.etl: offset "*"rest of the buffer skipped"* ]] || fail "$output"
	off=$(printf '%s\n' "$output" | sed -n 's/.*offset \([0-9]*\): .*rest of the buffer.*/\1/p' | head -1)
	[ "$off" -ge $((10*8192)) ] && [ "$off" -lt $((11*8192)) ] || fail "offset $off outside the damaged buffer"
	[ "$(events "$T/r.evt")" -gt 1950 ]
	evtcheck "$T/r.evt"
}

@test "record sizes flipped in every buffer of a kernel trace: no crash, errors, partial output" {
	corrupt "$CORPUS/airbus/ShutdownPerfDiagLogger.etl" "$T/k.etl" 'for b in range(1, len(d) // 65536):
    o = b * 65536 + 0x48 + 8 * random.randrange(0, 200)
    d[o+4:o+6] = (0xfff0).to_bytes(2, "little")'
	run etl2evt -o "$T/k.evt" "$T/k.etl"
	[ "$status" -eq 1 ]
	[[ "$output" == *"k.etl: offset "* ]]
	[ "$(events "$T/k.evt")" -gt 1000 ]
	evtcheck "$T/k.evt"
}

@test "corrupt compressed buffers (XPRESS) are reported and skipped" {
	unzip_member "$CORPUS/perfview/net.4.5.2.x64.etl.zip" net.4.5.2.x64.etl "$T/n.etl"
	# damage the compressed stream of a few buffers: walk the buffer chain first
	corrupt "$T/n.etl" "$T/c.etl" 'off = 0; i = 0
while off + 0x48 <= len(d):
    size = int.from_bytes(d[off:off+4], "little")
    if i in (20, 100, 200):
        for k in range(off + 0x60, off + min(size, 0x400), 7): d[k] = random.getrandbits(8)
    off += size; i += 1'
	run etl2evt -k Sample -o "$T/c.evt" "$T/c.etl"
	[ "$status" -eq 1 ]
	[[ "$output" == *"c.etl: offset "* ]]
	n=$(events "$T/c.evt")
	[ "$n" -gt 70000 ] && [ "$n" -lt 79528 ] || fail "$n samples"
	evtcheck "$T/c.evt"
}

@test "garbage, empty and tiny inputs: fatal, with the file named" {
	: >"$T/empty.etl"
	run etl2evt "$T/empty.etl"
	[ "$status" -eq 2 ]
	[[ "$output" == "etl2evt: $T/empty.etl: offset 0: not an ETL file"* ]]
	head -c 100 "$CORPUS/tx/HTTP_Server.etl" >"$T/tiny.etl"
	run etl2evt "$T/tiny.etl"
	[ "$status" -eq 2 ]
	random_bytes 2 50000 >"$T/rnd.etl"
	run etl2evt "$T/rnd.etl"
	[ "$status" -eq 2 ]
	printf 'PK\003\004garbage' >"$T/bad.zip"
	run etl2evt "$T/bad.zip"
	[ "$status" -eq 2 ]
	[[ "$output" == "etl2evt: $T/bad.zip: "* ]]
}

@test "random damage anywhere never crashes (20 variants of a compressed and a plain trace)" {
	unzip_member "$CORPUS/perfview/net.4.5.2.x64.etl.zip" net.4.5.2.x64.etl "$T/n.etl"
	head -c 600000 "$T/n.etl" >"$T/n6.etl"
	for seed in $(seq 1 10); do
		for f in "$T/n6.etl" "$CORPUS/airbus/lxcore_kernel.etl"; do
			python3 - "$f" "$T/v.etl" "$seed" <<'PY'
import random, sys
d = bytearray(open(sys.argv[1], "rb").read())
random.seed(int(sys.argv[3]))
for _ in range(30):
    d[random.randrange(0x48 + 0x200, len(d))] = random.getrandbits(8)
open(sys.argv[2], "wb").write(d)
PY
			run etl2evt -o "$T/v.evt" "$T/v.etl"
			[ "$status" -le 1 ] || fail "seed $seed $f: status $status: $output"
			evtcheck "$T/v.evt" || fail "seed $seed: invalid evt"
		done
	done
}

# --- one bad BufferSize at a time ---------------------------------------
# The truth comes from etlwalk --buffers, a buffer walker of its own
# (tests/tools/etlwalk.c) run on the undamaged trace: "index offset size
# records" per buffer.

buffer_table() {
	etlwalk --buffers "$1" | awk '/^buffer /{print $2, $4, $6, $8}'
}

# set_size IN OUT OFFSET VALUE: OUT = IN with the u32 at OFFSET set to VALUE
set_size() {
	python3 -c 'import sys
d = bytearray(open(sys.argv[1], "rb").read())
o = int(sys.argv[3])
d[o:o+4] = int(sys.argv[4]).to_bytes(4, "little")
open(sys.argv[2], "wb").write(d)' "$@"
}

# one_bad_buffer FILE INDEX OFFSET RECORDS TOTAL [NAMED]: FILE has one bad
# buffer header, buffer INDEX at OFFSET (RECORDS records of TOTAL): the
# reader loses at most those records and duplicates none, etl2evt exits 1
# with an error at OFFSET (naming "buffer INDEX" when NAMED is given), and
# its #skipped buffer bytes are no more than the file has.
one_bad_buffer() {
	local f=$1 i=$2 off=$3 ev=$4 total=$5 named=${6:-} got bytes
	got=$(etl2evt --census "$f" 2>/dev/null | sed -n 's/^events parsed: //p')
	[ -n "$got" ] && [ "$got" -le "$total" ] && [ "$got" -ge $((total - ev)) ] ||
	    fail "buffer $i at $off ($ev records): $got of $total records read"
	run etl2evt --no-symbols -o "$T/one.evt" "$f"
	[ "$status" -eq 1 ] || fail "buffer $i at $off: exit $status: $output"
	printf '%s\n' "$output" | grep -q "^etl2evt: $f: offset $off: " ||
	    fail "buffer $i: no error at offset $off: $output"
	if [ -n "$named" ]; then
		printf '%s\n' "$output" | grep -q "^etl2evt: $f: offset $off: .*buffer $i[,:]" ||
		    fail "buffer $i at $off is not named: $output"
	fi
	bytes=$(sed -n 's/^#skipped	what=buffer	.*(\([0-9]*\) bytes)$/\1/p' "$T/one.evt")
	[ "${bytes:-0}" -le "$(stat -c %s "$f")" ] || fail "buffer $i: $bytes bytes skipped"
}

@test "a zeroed BufferSize in any of the 48 buffers of a plain trace loses at most that buffer" {
	f="$CORPUS/airbus/ShutdownPerfDiagLogger.etl"
	buffer_table "$f" >"$T/bufs"
	total=$(awk '{ s += $4 } END { print s }' "$T/bufs")
	n=0
	while read -r i off size ev; do
		[ "$i" -gt 0 ] || continue	# the header buffer holds the logfile header
		set_size "$f" "$T/z.etl" "$off" 0
		one_bad_buffer "$T/z.etl" "$i" "$off" "$ev" "$total" named
		n=$((n + 1))
	done <"$T/bufs"
	[ "$n" -eq 48 ] || fail "$n buffers"
}

@test "a zeroed BufferSize in 24 buffers spread over a compressed trace loses at most that buffer" {
	unzip_member "$CORPUS/perfview/net.4.5.2.x64.etl.zip" net.4.5.2.x64.etl "$T/n.etl"
	buffer_table "$T/n.etl" >"$T/bufs"
	total=$(awk '{ s += $4 } END { print s }' "$T/bufs")
	[ "$(wc -l <"$T/bufs")" -eq 360 ] || fail "$(wc -l <"$T/bufs") buffers"
	# buffers 1, 16, 31 ... 346: every 15th, from the first to the last
	awk '$1 % 15 == 1' "$T/bufs" >"$T/pick"
	[ "$(wc -l <"$T/pick")" -eq 24 ]
	while read -r i off size ev; do
		set_size "$T/n.etl" "$T/z.etl" "$off" 0
		one_bad_buffer "$T/z.etl" "$i" "$off" "$ev" "$total" named
	done <"$T/pick"
}

@test "a BufferSize past the end of the file, half or double the real one: at most that buffer is lost" {
	unzip_member "$CORPUS/perfview/net.4.5.2.x64.etl.zip" net.4.5.2.x64.etl "$T/n.etl"
	for f in "$CORPUS/airbus/ShutdownPerfDiagLogger.etl" "$T/n.etl"; do
		buffer_table "$f" >"$T/bufs"
		total=$(awk '{ s += $4 } END { print s }' "$T/bufs")
		len=$(stat -c %s "$f")
		# eight buffers spread over the file, the last one included
		awk -v n="$(wc -l <"$T/bufs")" '$1 > 0 && ($1 % int(n / 7) == 1 || $1 == n - 1)' \
		    "$T/bufs" >"$T/pick"
		[ "$(wc -l <"$T/pick")" -ge 8 ] || fail "$(wc -l <"$T/pick") picked"
		while read -r i off size ev; do
			set_size "$f" "$T/o.etl" "$off" $((len - off + 8192))
			one_bad_buffer "$T/o.etl" "$i" "$off" "$ev" "$total" named
			set_size "$f" "$T/h.etl" "$off" $((size / 2))
			one_bad_buffer "$T/h.etl" "$i" "$off" "$ev" "$total"
			set_size "$f" "$T/d.etl" "$off" $((size * 2))
			one_bad_buffer "$T/d.etl" "$i" "$off" "$ev" "$total"
		done <"$T/pick"
	done
}

@test "through stdin, a trace with a zeroed BufferSize decodes as from the file" {
	unzip_member "$CORPUS/perfview/net.4.5.2.x64.etl.zip" net.4.5.2.x64.etl "$T/n.etl"
	off=$(buffer_table "$T/n.etl" | awk '$1 == 31 { print $2 }')
	set_size "$T/n.etl" "$T/z.etl" "$off" 0
	run etl2evt --no-symbols -o "$T/file.evt" "$T/z.etl"
	[ "$status" -eq 1 ]
	run etl2evt --no-symbols -o "$T/stdin.evt" - <"$T/z.etl"
	[ "$status" -eq 1 ]
	[[ "$output" == *"etl2evt: -: offset $off: corrupt buffer header (buffer 31,"* ]] || fail "$output"
	grep -v '^#evt' "$T/file.evt" >"$T/a"
	grep -v '^#evt' "$T/stdin.evt" >"$T/b"
	textdiff "$T/a" "$T/b"
	grep -q '^#skipped	what=buffer	count=1	' "$T/b"
}

#!/usr/bin/env bats
# lib/etl/xpress.c's MS-XCA plain LZ77 decoder copies literal runs and
# matches in blocks and checks the input once per indicator word.  These
# tests hold it to the plain byte-at-a-time decoder kept in
# tests/tools/xpressdiff.c (the library's own code before the block copies)
# on real and synthesised buffers, damaged ones too, and to streams encoded
# here by hand.
load helpers

# check_all OUT: every line of xpressdiff check says all N inputs agreed
check_all() {
	awk '$2 != $4 { bad = 1; print "differ: " $0 } END { exit bad }' "$1"
}

@test "xpress: every compressed buffer of net.4.5.2.x64, SelfDescribingSingleEvent and an etlgen trace decodes as the plain decoder does, cut short, bit-flipped and at other sizes too" {
	require_corpus
	unzip_member "$CORPUS/perfview/net.4.5.2.x64.etl.zip" net.4.5.2.x64.etl "$T/net.etl"
	etlgen --compress -o "$T/gen.etl" "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" 2>/dev/null
	etls=("$T/net.etl" "$CORPUS/perfview/SelfDescribingSingleEvent.etl" "$T/gen.etl")
	# how many compressed buffers: etlwalk, a reader that shares no code with lib/
	want=0
	for f in "${etls[@]}"; do
		c=$(etlwalk "$f" | sed -n 's/.*compressed buffers: \([0-9]*\).*/\1/p')
		[ "$c" -gt 0 ] || fail "$f: no compressed buffer"
		want=$((want + c))
	done
	run xpressdiff check "${etls[@]}"
	[ "$status" -eq 0 ] || fail "$output"
	echo "$output" >"$T/check"
	check_all "$T/check" || fail "$(cat "$T/check")"
	# all of them decode, and the damaged ones were tried: cuts never decode
	grep -qx "etl-buffers $want same $want decoded $want" "$T/check" || fail "want $want: $(cat "$T/check")"
	awk '$1 == "truncated" && $2 > 10000 && $6 == 0 { ok = 1 } END { exit !ok }' "$T/check" || fail "$(cat "$T/check")"
	awk '$1 == "bit-flipped" && $2 >= 8 * '"$want"' && $6 > 0 && $6 < $2 { ok = 1 } END { exit !ok }' "$T/check" || fail "$(cat "$T/check")"
}

@test "xpress: random streams from an encoder written apart (every length form, distances 1 to 8192) decode to what was encoded; cut and flipped, both decoders fail alike" {
	run xpressdiff check --seed 7
	[ "$status" -eq 0 ] || fail "$output"
	echo "$output" >"$T/check"
	check_all "$T/check" || fail "$(cat "$T/check")"
	# 400 streams, each also asked for a shorter output: the 400 whole ones all decode
	awk '$1 == "encoded" && $2 == 800 && $6 >= 400 { ok = 1 } END { exit !ok }' "$T/check" || fail "$(cat "$T/check")"
	awk '$1 == "encoded-damaged" && $2 > 10000 { ok = 1 } END { exit !ok }' "$T/check" || fail "$(cat "$T/check")"
	awk '$1 == "random-bytes" && $2 == 3000 { ok = 1 } END { exit !ok }' "$T/check" || fail "$(cat "$T/check")"
}

@test "xpress: a hand-encoded stream long enough for the fast loop: every distance 1 to 20 with lengths 3 to 300, literal runs of 1 to 32, ending with a match at the last byte" {
	# the stream and the text it stands for, built side by side by this script
	python3 - "$T/in" "$T/want" <<'PY'
import struct, sys
buf, plain = bytearray(), bytearray()
state = {"flagpos": None, "n": 0, "flags": 0, "nib": None}
def flag(bit):
    if state["n"] == 32:
        struct.pack_into("<I", buf, state["flagpos"], state["flags"]); state["n"] = 0
    if state["n"] == 0:
        state["flagpos"] = len(buf); state["flags"] = 0; buf.extend(b"\0\0\0\0")
    state["flags"] |= bit << (31 - state["n"]); state["n"] += 1
def lit(c):
    flag(0); buf.append(c); plain.append(c)
def match(dist, length):
    flag(1)
    l = length - 3
    buf.extend(struct.pack("<H", (dist - 1) << 3 | min(l, 7)))
    if l >= 7:
        n = min(l - 7, 15)
        if state["nib"] is None:
            state["nib"] = len(buf); buf.append(n)
        else:
            buf[state["nib"]] |= n << 4; state["nib"] = None
        if n == 15:
            if l - 22 < 255: buf.append(l - 22)
            else: buf.append(255); buf.extend(struct.pack("<H", l))
    for _ in range(length):
        plain.append(plain[-dist])
for c in b"etlkit XPRESS!":
    lit(c)
run = 1
for dist in range(1, 21):
    for length in (3, 4, 7, 9, 10, 16, 17, 24, 25, 33, 64, 300):
        match(dist, length)
        for i in range(run):
            lit(0x41 + (dist * 7 + i) % 26)
        run = run % 32 + 1
match(13, 40)
struct.pack_into("<I", buf, state["flagpos"], state["flags"])
open(sys.argv[1], "wb").write(buf); open(sys.argv[2], "wb").write(plain)
PY
	size=$(stat -c %s "$T/want")
	[ "$(stat -c %s "$T/in")" -gt 1000 ] || fail "stream too short for the fast loop"
	xcadump xpress "$size" "$T/in" >"$T/got" || fail "does not decode"
	cmp "$T/want" "$T/got" || fail "decoded bytes differ"
	# one byte short of the stream: the message the plain decoder gives
	head -c $(($(stat -c %s "$T/in") - 1)) "$T/in" >"$T/cut"
	run xcadump xpress "$size" "$T/cut"
	[ "$status" -eq 1 ] && [ "$output" = "xcadump: compressed data ends early" ] || fail "$status: $output"
	# asked for one byte less: the last match runs past it
	run xcadump xpress $((size - 1)) "$T/in"
	[ "$status" -eq 1 ] && [ "$output" = "xcadump: match runs past the expected size" ] || fail "$status: $output"
}

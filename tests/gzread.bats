#!/usr/bin/env bats
# The text tools' gzip reader (lib/evt/gzread.c): zlib inflates, the
# CRC-32 and length of each member are checked outside zlib (libdeflate
# when the build has it).  These cases pin what that must not change:
# concatenated members of any size, a trailer cut in two by a read, a
# wrong CRC or length named at the byte zlib names, truncation, and a
# zlib-format member after a gzip one.  Expected bytes and offsets come
# from Python's zlib and the file's own layout, never from the tools.
load helpers

# mkfolded FILE: 40,000 folded lines (about 3 MB), a deterministic mix
mkfolded() {
	python3 - "$1" <<'EOF'
import sys, random
r = random.Random(5)
names = ["f%d_%s" % (i, "x" * r.randrange(1, 40)) for i in range(500)]
with open(sys.argv[1], "w") as o:
    for i in range(40000):
        d = r.randrange(1, 30)
        o.write(";".join(r.choice(names) for _ in range(d)) + " %d\n" % r.randrange(1, 1000))
EOF
}

# gzmembers OUT IN SIZE...: IN cut into members of the sizes given (repeated), gzip each
gzmembers() {
	python3 - "$@" <<'EOF'
import sys, zlib
out, src, sizes = sys.argv[1], open(sys.argv[2], "rb").read(), [int(x) for x in sys.argv[3:]]
parts, i, k = [], 0, 0
while i < len(src):
    n = sizes[k % len(sizes)]
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    parts.append(c.compress(src[i:i + n]) + c.flush())
    i += n
    k += 1
open(out, "wb").write(b"".join(parts))
print(len(parts))
EOF
}

@test "gzip input: concatenated members of any size (1 byte to 1 MB) read as the plain file, from a file and a pipe" {
	mkfolded "$T/p.folded"
	n=$(gzmembers "$T/m.gz" "$T/p.folded" 1 77 65536 1048576 3 250000)
	[ "$n" -gt 10 ]
	render flame "$T/p.folded" >"$T/plain.svg"
	render flame "$T/m.gz" >"$T/gz.svg"
	cmp "$T/plain.svg" "$T/gz.svg"
	render flame <"$T/m.gz" >"$T/pipe.svg"
	cmp "$T/plain.svg" "$T/pipe.svg"
	stackfold "$T/m.gz" >"$T/gz.folded"
	stackfold "$T/p.folded" >"$T/plain.folded"
	cmp "$T/plain.folded" "$T/gz.folded"
}

# stored MEMBER whose 8-byte trailer starts AT bytes into the file, then a second member;
# FLIP: none, crc (its first byte) or len (its last byte)
straddle() {
	python3 - "$@" <<'EOF'
import sys, zlib, struct
out, src, at, flip = sys.argv[1], open(sys.argv[2], "rb").read(), int(sys.argv[3]), sys.argv[4]
def member(d, level):
    c = zlib.compressobj(level, zlib.DEFLATED, 31)
    return bytearray(c.compress(d) + c.flush())
for n in range(at - 400, at + 400):
    m = member(src[:n], 0)
    if len(m) - 8 == at:
        break
else:
    sys.exit("no size fits")
if flip == "crc":
    m[-8] ^= 1
elif flip == "len":
    m[-1] ^= 1
open(out, "wb").write(bytes(m) + member(src[n:src.index(b"\n", n + 5000) + 1], 6))
EOF
}

@test "gzip input: a member trailer split across two reads (at 1 MiB) is checked whole" {
	mkfolded "$T/p.folded"
	# the reader takes 256 KiB at a time (1 MiB is a boundary): trailers that start 3 and 6 bytes before it
	for at in 1048573 1048570; do
		straddle "$T/s.gz" "$T/p.folded" $at none
		python3 -c 'import sys, zlib
d = zlib.decompressobj(31); a = d.decompress(open(sys.argv[1], "rb").read())
b = zlib.decompressobj(31).decompress(d.unused_data)
open(sys.argv[2], "wb").write(a + b)' "$T/s.gz" "$T/s.plain"
		render flame "$T/s.gz" >"$T/gz.svg"
		render flame "$T/s.plain" >"$T/plain.svg"
		cmp "$T/plain.svg" "$T/gz.svg"
		# a wrong CRC: zlib names the byte after the CRC, the trailer's fifth
		straddle "$T/c.gz" "$T/p.folded" $at crc
		run render flame -o "$T/c.svg" "$T/c.gz"
		[ "$status" -eq 1 ] || fail "crc at $at: exit $status"
		[[ "$output" == *"$T/c.gz: corrupt gzip stream at compressed byte $((at + 4))"* ]] || fail "$output"
		# a wrong length: after all 8
		straddle "$T/l.gz" "$T/p.folded" $at len
		run render flame -o "$T/l.svg" "$T/l.gz"
		[ "$status" -eq 1 ] || fail "len at $at: exit $status"
		[[ "$output" == *"$T/l.gz: corrupt gzip stream at compressed byte $((at + 8))"* ]] || fail "$output"
	done
}

@test "gzip input: the lines before a wrong CRC are kept, exactly those zlib inflates" {
	mkfolded "$T/p.folded"
	gzip -c "$T/p.folded" >"$T/g.gz"
	size=$(wc -c <"$T/g.gz")
	python3 -c 'import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[-8] ^= 0x55
open(sys.argv[2], "wb").write(bytes(b))' "$T/g.gz" "$T/bad.gz"
	# every byte was inflated before the check: all lines are kept
	run stackfold -o "$T/bad.folded" "$T/bad.gz"
	[ "$status" -eq 1 ]
	[[ "$output" == *"corrupt gzip stream at compressed byte $((size - 4))"* ]] || fail "$output"
	stackfold "$T/p.folded" >"$T/plain.folded"
	cmp "$T/plain.folded" "$T/bad.folded"
}

@test "gzip input: truncated anywhere, the complete lines inflated before the cut are read, exit 1" {
	mkfolded "$T/p.folded"
	gzip -c "$T/p.folded" >"$T/g.gz"
	size=$(wc -c <"$T/g.gz")
	for cut in 11 5000 $((size / 2)) $((size - 8)) $((size - 5)) $((size - 1)); do
		head -c $cut "$T/g.gz" >"$T/cut.gz"
		# the complete lines Python's zlib inflates from the cut file
		python3 -c 'import sys, zlib
d = zlib.decompressobj(31).decompress(open(sys.argv[1], "rb").read())
open(sys.argv[2], "wb").write(d[:d.rfind(b"\n") + 1])' "$T/cut.gz" "$T/lines.folded"
		run stackfold -o "$T/cut.folded" "$T/cut.gz"
		[ "$status" -eq 1 ] || fail "cut $cut: exit $status"
		[[ "$output" == *"$T/cut.gz: truncated gzip stream at compressed byte $cut"* ]] || fail "cut $cut: $output"
		if [ -s "$T/lines.folded" ]; then
			stackfold "$T/lines.folded" >"$T/want.folded"
			cmp "$T/want.folded" "$T/cut.folded" || fail "cut $cut: other lines"
		fi
	done
}

@test "gzip input: a zlib-format member after a gzip one is read and keeps zlib's own check" {
	mkfolded "$T/p.folded"
	python3 -c 'import sys, zlib
s = open(sys.argv[1], "rb").read(); c = zlib.compressobj(6, zlib.DEFLATED, 31)
g = c.compress(s[:100000]) + c.flush(); z = zlib.compress(s[100000:])
open(sys.argv[2], "wb").write(g + z)
open(sys.argv[3], "wb").write(g + z[:-4] + bytes(4))' "$T/p.folded" "$T/z.gz" "$T/zbad.gz"
	stackfold "$T/z.gz" >"$T/z.folded"
	stackfold "$T/p.folded" >"$T/plain.folded"
	cmp "$T/plain.folded" "$T/z.folded"
	run stackfold -o /dev/null "$T/zbad.gz"
	[ "$status" -eq 1 ]
	[[ "$output" == *"corrupt gzip stream at compressed byte $(wc -c <"$T/zbad.gz")"* ]] || fail "$output"
}

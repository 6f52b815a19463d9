#!/usr/bin/env bats
# etl2evt on synthetic traces written by etlgen (tests/tools/etlgen.c) for the
# kinds no public trace holds: DPC, ThreadedDPC, TimerDPC, ISR (MSI too),
# CSwitch, ReadyThread, sampling intervals, compact headers.  Every line etlgen
# expects must come out: same time, kind, CPU, columns, attributes and stack.
load helpers

# matches_expect EXPECT EVT: every expected line has its twin ("*" = any value,
# a trailing "*" = more attributes allowed; extra attributes such as kframes= are fine).
matches_expect() {
	python3 - "$1" "$2" <<'PY'
import sys
def rows(path):
    out = []
    for l in open(path, encoding="utf-8"):
        if l.startswith("#") or not l.strip(): continue
        out.append(l.rstrip("\n").split("\t"))
    return out
exp, got = rows(sys.argv[1]), rows(sys.argv[2])
index = {}
for f in got:
    index.setdefault((f[0], f[1], f[2]), []).append(f)
def same(e, g):
    for i in range(7):
        if e[i] != "*" and e[i] != g[i]: return False
    eattrs = [a for a in e[7:-1] if a != "*"]
    gattrs = set(g[7:-1])
    if any(a not in gattrs for a in eattrs): return False
    return e[-1] == "*" or e[-1] == g[-1]
missing = [e for e in exp if not any(same(e, g) for g in index.get((e[0], e[1], e[2]), []))]
if missing:
    for e in missing[:5]:
        print("missing:", "\t".join(e)[:300])
        print("   have:", ["\t".join(g)[:300] for g in index.get((e[0], e[1], e[2]), [])][:2])
    sys.exit(1)
print(len(exp), "lines matched")
PY
}

@test "every kind (kinds.yaml): each expected line comes out of etl2evt" {
	etlgen -o "$T/k.etl" --expect "$T/k.expect" "$BATS_TEST_DIRNAME/scenarios/kinds.yaml"
	etl2evt "$T/k.etl" >"$T/k.evt"
	evtcheck "$T/k.evt"
	matches_expect "$T/k.expect" "$T/k.evt"
	# DPC/ISR weight = duration, time = start
	grep -q $'\tDPC\t2\t.*\t0.2205\troutine=ndis.sys!0x1a2b0\tmodule=ndis.sys\tduration_us=220.500\tend_ms=3.120500' "$T/k.evt"
	grep -q $'\tISR\t2\t.*\tvector=434\tmsi=1\tmessage=3\tret=1' "$T/k.evt"
}

@test "32-bit, compressed, stack-key-cache and late-user-stack variants of every kind round-trip too" {
	for v in "--pointer-size 4" "--compress" "--pointer-size 4 --compress" "--stacks keys --key-cache 1" \
	    "--stacks keys --key-cache 2 --pointer-size 4" "--stacks split" "--lznt1" "--lznt1 --pointer-size 4" \
	    "--stacks split --user-delay 5" "--stacks split --user-delay 1500" \
	    "--stacks keys --key-cache 2 --user-delay 1500"; do
		etlgen $v -o "$T/k.etl" --expect "$T/k.expect" "$BATS_TEST_DIRNAME/scenarios/kinds.yaml" 2>/dev/null
		etl2evt "$T/k.etl" >"$T/k.evt"
		evtcheck "$T/k.evt"
		matches_expect "$T/k.expect" "$T/k.evt" || fail "variant $v"
		case "$v" in *"pointer-size 4"*) grep -q $'\tpointer_size=4\t' "$T/k.evt" || fail "$v: not 32-bit" ;; esac
		# user parts that come late (1.5 s: after a second) still join their sample
		case "$v" in *user-delay*) ! grep -q '^#skipped' "$T/k.evt" || fail "$v: $(grep '^#skipped' "$T/k.evt")" ;; esac
		case "$v" in *compress*|*lznt1*) grep -q $'\tcompressed_buffers=[1-9]' "$T/k.evt" || fail "$v: not compressed" ;; esac
	done
}

@test "LZNT1 and XPRESS: published MS-XCA vectors decompress exactly; Xpress-Huffman is refused clearly" {
	# vectors from public decoders' tests (CyberChef, the lznt1 crate, samba's lzxpress)
	printf '\x0c\xb0\x00Hello wo\x00rld' >"$T/v1"
	[ "$(xcadump lznt1 11 "$T/v1")" = "Hello world" ]
	printf '\x1a\xb0\x00compress\x00edtestda\x04ta\x07\x88alot' >"$T/v2"
	[ "$(xcadump lznt1 32 "$T/v2")" = "compressedtestdatacompressedalot" ]
	printf '\x00\x20\x00\x04this \x10\x00a test. and \x9f\x00\x04 too' >"$T/v3"
	[ "$(xcadump xpress 38 "$T/v3")" = "this is a test. and this is a test too" ]
	# a match reaching before the chunk start is an error, not a read outside it
	printf '\x03\xb0\x02a\x00\x10' >"$T/bad"
	run xcadump lznt1 8 "$T/bad"
	[ "$status" -eq 1 ] && [[ "$output" == "xcadump: LZNT1 "* ]] || fail "$status: $output"
	run xcadump huffman 8 "$T/v1"
	[ "$status" -eq 1 ] && [[ "$output" == *"Xpress-Huffman compressed buffers are not supported"* ]] || fail "$output"
}

@test "an LZNT1-compressed trace decodes to the same events as the uncompressed one (and etlwalk agrees)" {
	etlgen --lznt1 -o "$T/l.etl" "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" 2>/dev/null
	etlgen --no-compress -o "$T/u.etl" "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" 2>/dev/null
	# LZNT1 is named by the low 16 bits of the first buffer's State (2)
	[ "$(od -An -tu2 -j44 -N2 "$T/l.etl" | tr -d ' ')" = 2 ]
	etlwalk "$T/l.etl" >"$T/walk"
	grep -qE '^buffers: [0-9]+  compressed buffers: [1-9][0-9]*  events: ' "$T/walk" || fail "$(head -1 "$T/walk")"
	etl2evt "$T/l.etl" >"$T/l.evt"
	etl2evt "$T/u.etl" >"$T/u.evt"
	grep -q $'\tcompressed_buffers=[1-9]' "$T/l.evt"
	# the same lines, but for buffer offsets of Lost lines (none here) and the header
	textdiff <(grep -v '^#' "$T/u.evt") <(grep -v '^#' "$T/l.evt") >"$T/d" || fail "$(head -5 "$T/d")"
	[ "$(grep -vc '^#' "$T/l.evt")" -gt 400000 ]
}

@test "the backup-server incident: NDIS DPCs on CPUs 0,2,4,6 average 220 us" {
	etlgen -o "$T/i.etl" --expect "$T/i.expect" "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml"
	etl2evt -k DPC,ThreadedDPC,TimerDPC,ISR,Sample "$T/i.etl" >"$T/i.evt"
	evtcheck "$T/i.evt"
	grep -v '^#' "$T/i.expect" | awk -F'\t' '$2 ~ /^(DPC|ThreadedDPC|TimerDPC|ISR|Sample)$/' >"$T/i.sub"
	[ "$(grep -vc '^#' "$T/i.evt")" -eq "$(wc -l <"$T/i.sub")" ]
	# DPC/ISR lines: time, kind, CPU, weight and all attributes exactly as etlgen wrote them
	key='$2 ~ /DPC|ISR/ {s = $1 "\t" $2 "\t" $3 "\t" $7; for (i = 8; i < NF; i++) if ($i != "*") s = s "\t" $i; print s}'
	awk -F'\t' "$key" "$T/i.sub" | sort >"$T/want"
	awk -F'\t' "$key" "$T/i.evt" | sort >"$T/got"
	[ "$(wc -l <"$T/want")" -gt 200000 ]
	cmp "$T/want" "$T/got" || fail "DPC/ISR lines differ: $(textdiff "$T/want" "$T/got" | head -4)"
	# samples: same stacks, weights and flags
	key='$2 == "Sample" {s = $1 "\t" $3 "\t" $4 "\t" $7 "\t" $NF; for (i = 8; i < NF; i++) if ($i ~ /^(dpc|isr|count)=/) s = s "\t" $i; print s}'
	awk -F'\t' "$key" "$T/i.sub" | sort >"$T/want"
	awk -F'\t' "$key" "$T/i.evt" | sort >"$T/got"
	cmp "$T/want" "$T/got" || fail "Sample lines differ: $(textdiff "$T/want" "$T/got" | head -4)"
	run awk -F'\t' '$2=="DPC" && $0 ~ /module=ndis.sys/ {n++; w+=$7; c[$3]++} END{printf "%d %.0f", n, w/n*1000; for (k in c) printf " %s", k; print ""}' "$T/i.evt"
	[[ "$output" == "163000 22"[0-9]* ]] || fail "$output"
	for cpu in 0 2 4 6; do [[ " ${output#* * } " == *" $cpu "* ]] || fail "cpu $cpu: $output"; done
}

@test "WPP trace messages (raw): header fields decoded, arguments as hex" {
	# no public trace has WPP messages: splice one into a copy of lxcore_kernel.etl's
	# header buffer (flags 0x90 marker, GUID + timestamp + system info present)
	python3 - "$CORPUS/airbus/lxcore_kernel.etl" "$T/w.etl" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
bs = struct.unpack_from("<I", d, 0)[0]
head = d[:bs]
ts0 = struct.unpack_from("<Q", head, 0x48 + 16)[0]
guid = bytes.fromhex("78563412" "3412" "7856" "0102030405060708")
args = bytes(range(1, 13))
flags = 0x02 | 0x08 | 0x20
body = struct.pack("<HH", 7, flags) + guid + struct.pack("<QII", ts0 + 12345, 4242, 77) + args
rec = struct.pack("<HH", 4 + len(body), 0x9000) + body
buf = bytearray(b"\xff" * bs)
buf[:0x48] = d[bs:bs + 0x48]
struct.pack_into("<II", buf, 0, bs, 0x48 + ((len(rec) + 7) & ~7))
struct.pack_into("<I", buf, 0x30, 0x48 + ((len(rec) + 7) & ~7))
buf[0x48:0x48 + len(rec)] = rec
open(sys.argv[2], "wb").write(head + bytes(buf))
PY
	run etl2evt "$T/w.etl"
	[ "$status" -eq 0 ]
	line=$(printf '%s\n' "$output" | grep $'\tWPP\t')
	[[ "$line" == 1.234500$'\tWPP\t'*$'\t?\t77\t4242\t0\tprovider=12345678-1234-5678-0102-030405060708\tguid=12345678-1234-5678-0102-030405060708\tid=7\thex=0102030405060708090a0b0c\t' ]] || fail "$line"
	etl2evt --census "$T/w.etl" | grep -q '^ *1  W WPP id=7$'
}

@test "lost events from the logfile header are a Lost line (AMSITrace: 3)" {
	etl2evt -k Lost "$CORPUS/airbus/AMSITrace.etl" >"$T/l.evt"
	grep -q $'\tLost\t.*\tevents=3\tbuffers=0\tsource=header\t$' "$T/l.evt"
	grep -q $'\tevents_lost=3\t' "$T/l.evt"
}

@test "CSwitch stacks are the new thread's; compact headers' zero thread id matches nothing (cswitch.yaml)" {
	etlgen -o "$T/c.etl" --expect "$T/c.expect" "$BATS_TEST_DIRNAME/scenarios/cswitch.yaml" 2>/dev/null
	etl2evt "$T/c.etl" >"$T/c.evt"
	evtcheck "$T/c.evt"
	matches_expect "$T/c.expect" "$T/c.evt"
	[ "$(grep -c $'\tCSwitch\t' "$T/c.evt")" -eq 730 ]
	[ "$(grep -c $'\tReadyThread\t' "$T/c.evt")" -eq 365 ]
}

@test "-k and -p repeated add up, as one comma-separated list does" {
	etlgen --no-compress -o "$T/i.etl" "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" 2>/dev/null
	etl2evt "$T/i.etl" >"$T/all.evt"
	etl2evt -k DPC -k ISR "$T/i.etl" >"$T/two.evt"
	etl2evt -k DPC,ISR "$T/i.etl" >"$T/one.evt"
	cmp "$T/two.evt" "$T/one.evt"
	# the kept lines are exactly the full stream's DPC and ISR lines, both kinds present
	[ "$(grep -v '^#' "$T/two.evt" | cut -f2 | sort -u | tr '\n' ' ')" = "DPC ISR " ]
	[ "$(grep -vc '^#' "$T/two.evt")" -eq "$(awk -F'\t' '!/^#/ && ($2 == "DPC" || $2 == "ISR")' "$T/all.evt" | wc -l)" ]
	# the same for processes: two -p give what one list gives, with both processes in it
	etl2evt -k Sample -p System -p Idle "$T/i.etl" >"$T/p2.evt"
	etl2evt -k Sample -p System,Idle "$T/i.etl" >"$T/p1.evt"
	cmp "$T/p2.evt" "$T/p1.evt"
	[ "$(grep -v '^#' "$T/p2.evt" | cut -f4 | sort -u | tr '\n' ' ')" = "Idle System " ]
}

#!/usr/bin/env bats
# etl2evt's TcpIp (group 6) and UdpIp (group 8) lines: kind names, the
# payload's process in the pid column, bytes=, daddr=/saddr= (IPv4 dotted
# decimal; IPv6 as all eight 16-bit groups in lower-case hex without
# leading zeros, no "::"), dport=/sport= (network byte order).
#
# tests/scenarios/net-ipv4.yaml has every kind once with edge values; the
# expected lines are worked out here from the scenario's text alone
# (python's ipaddress for the IPv6 form), not from etlgen or etl2evt.  The
# corpus's few IPv4 UdpIp events are checked against PerfView's own dump
# of net.4.5.2.x64 (the .baseline.txt beside it).
load helpers

SCEN="$BATS_TEST_DIRNAME/scenarios/net-ipv4.yaml"

# net_lines P: the scenario as a P-byte-pointer trace, decoded; prints the
# TcpIp/UdpIp lines (and any generic Kernel line, which would be a decoding miss)
net_lines() {
	etlgen -o "$T/net$1.etl" --expect "$T/net$1.exp" --pointer-size "$1" "$SCEN" 2>/dev/null
	etl2evt "$T/net$1.etl" > "$T/net$1.evt"
	awk -F'\t' '!/^#/ && ($2 ~ /^(TcpIp|UdpIp)/ || $2 == "Kernel")' "$T/net$1.evt"
}

# want_lines: the lines the scenario's events: entries must decode to,
# from the YAML text (flow mappings, one per line)
want_lines() {
	python3 - "$SCEN" <<'PY'
import ipaddress, re, sys
names = {"4": "System", "1000": "browser.exe", "2108": "svchost.exe"}
def addr(s, v6):
    s = s.strip("'")
    if not v6:
        ipaddress.IPv4Address(s)      # a valid dotted quad, written as the scenario has it
        return s
    return ":".join(g.lstrip("0") or "0" for g in ipaddress.IPv6Address(s).exploded.split(":"))
for line in open(sys.argv[1]):
    m = re.match(r"\s*- \{(kind: (TcpIp|UdpIp).*)\}\s*$", line)
    if not m:
        continue
    f = dict(kv.split(": ", 1) for kv in m.group(1).split(", "))
    v6 = f["kind"].endswith("IPV6")
    print("\t".join(["%.6f" % float(f["t_ms"]), f["kind"], f["cpu"], names.get(f["pid"], "?"),
                     f["pid"], "-1", "0", "bytes=" + f["bytes"], "daddr=" + addr(f["daddr"], v6),
                     "saddr=" + addr(f["saddr"], v6), "dport=" + f["dport"], "sport=" + f["sport"], ""]))
PY
}

@test "net-ipv4: every TcpIp/UdpIp kind, IPv4 and IPv6, decodes to the line the scenario's text gives (64-bit)" {
	want_lines > "$T/want"
	[ "$(wc -l < "$T/want")" -eq 20 ]
	net_lines 8 > "$T/got"
	textdiff "$T/want" "$T/got"
}

@test "net-ipv4: the same from a 32-bit trace (pointer-wide connid after the fields read)" {
	want_lines > "$T/want"
	net_lines 4 > "$T/got"
	textdiff "$T/want" "$T/got"
	grep -qP '^#evt\t.*\tpointer_size=4\t' "$T/net4.evt"
}

@test "net-ipv4: edge values: 0.0.0.0, 255.255.255.255, ports 0 and 65535, IPv6 groups 0 and ffff" {
	net_lines 8 > "$T/got"
	grep -qP '^5\.000000\tTcpIpRetransmit\t0\tSystem\t4\t-1\t0\tbytes=1\tdaddr=0\.0\.0\.0\tsaddr=255\.255\.255\.255\tdport=0\tsport=65535\t$' "$T/got"
	grep -qP '^6\.000000\tTcpIpAccept\t1\tsvchost\.exe\t2108\t.*\tdaddr=255\.255\.255\.255\tsaddr=0\.0\.0\.0\tdport=65535\tsport=0\t$' "$T/got"
	grep -qP '\tTcpIpConnect\t.*\tdaddr=10\.0\.0\.1\tsaddr=172\.16\.254\.3\tdport=80\tsport=49152\t$' "$T/got"
	grep -qP '\tTcpIpTCPCopy\t.*\tbytes=4294967295\tdaddr=127\.0\.0\.1\tsaddr=127\.0\.0\.1\tdport=256\tsport=255\t$' "$T/got"
	grep -qP '\tUdpIpRecv\t1\tSystem\t4\t.*\tdaddr=10\.128\.3\.255\tsaddr=10\.128\.0\.55\t' "$T/got"
	grep -qP '\tTcpIpConnectIPV6\t.*\tdaddr=0:0:0:0:0:0:0:0\tsaddr=ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\tdport=0\tsport=65535\t$' "$T/got"
	grep -qP '\tTcpIpSendIPV6\t.*\tdaddr=2001:db8:0:0:0:0:0:1\tsaddr=fe80:0:0:0:a0b:c0d:e0:f\t' "$T/got"
	grep -qP '\tTcpIpAcceptIPV6\t.*\tdaddr=0:0:0:0:0:ffff:a00:1\tsaddr=abcd:ef01:2345:6789:abcd:ef01:2345:6789\t' "$T/got"
}

@test "net-ipv4: etlgen's --expect lines agree with the decoded ones" {
	net_lines 8 > "$T/got"
	awk -F'\t' '!/^#/ && $2 ~ /^(TcpIp|UdpIp)/' "$T/net8.exp" > "$T/exp"
	[ "$(wc -l < "$T/exp")" -eq 20 ]
	# the one undeclared process (pid 4321): etlgen cannot name it ("*"), etl2evt says "?"
	sed 's/^\([^\t]*\t[^\t]*\t[^\t]*\t\)\*\t/\1?\t/' "$T/exp" > "$T/exp2"
	textdiff "$T/exp2" "$T/got"
}

@test "etlgen: an address of the wrong family for the kind is a scenario error (exit 2, FILE:LINE)" {
	sed 's/daddr: 10\.0\.0\.255, saddr: 192\.168\.1\.7/daddr: "2001:db8::1", saddr: 192.168.1.7/' "$SCEN" > "$T/bad.yaml"
	! cmp -s "$SCEN" "$T/bad.yaml"
	run etlgen -o "$T/bad.etl" "$T/bad.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad.yaml:"*"not an IPv4 address"* ]]
	sed 's/dport: 443, sport: 50000}/dport: 65536, sport: 50000}/' "$SCEN" > "$T/bad2.yaml"
	run etlgen -o "$T/bad2.etl" "$T/bad2.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" == *"dport is 0..65535"* ]]
}

@test "net.4.5.2.x64: every IPv4 UdpIp event PerfView dumped decodes with its addresses, ports and size" {
	[ -n "$CORPUS" ] || skip "no corpus"
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" > "$T/n.evt"
	python3 - "$CORPUS/perfview/net.4.5.2.x64.baseline.txt" "$T/n.evt" <<'PY'
import re, sys
num = lambda s: int(s.replace(",", ""))
want = []
for l in open(sys.argv[1]):
    m = re.match(r"EVENT ([\d,.]+): Windows Kernel/UdpIp/(Recv|Send) (.*)", l)
    if not m:
        continue
    b = dict(kv.split("=", 1) for kv in m.group(3).rstrip("; \n").split("; "))
    want.append((float(m.group(1).replace(",", "")), "UdpIp" + m.group(2), b["PID"], str(num(b["size"])),
                 b["daddr"], b["saddr"], str(num(b["dport"])), str(num(b["sport"]))))
got = []
for l in open(sys.argv[2]):
    f = l.rstrip("\n").split("\t")
    if len(f) > 7 and f[1] in ("UdpIpRecv", "UdpIpSend"):
        a = dict(x.split("=", 1) for x in f[7:] if "=" in x)
        got.append((float(f[0]), f[1], f[4], a["bytes"], a["daddr"], a["saddr"], a["dport"], a["sport"]))
assert len(want) >= 6, ("the baseline has 6 IPv4 UdpIp events", len(want))
for w in want:
    assert any(abs(g[0] - w[0]) < 0.0015 and g[1:] == w[1:] for g in got), ("no match for", w)
print(len(want), "matched", file=sys.stderr)
PY
}

@test "net: a record too short for its addresses and ports is kept whole as a generic Kernel line (hex= its bytes), not misread" {
	cp "$SCEN" "$T/cut.yaml"
	cat >> "$T/cut.yaml" <<'YAML'
  - {kind: TcpIpSend, t_ms: 30, cpu: 0, pid: 1000, bytes: 1460, daddr: 10.0.0.255, saddr: 192.168.1.7, dport: 443, sport: 50000, payload_bytes: 19}
  - {kind: UdpIpRecvIPV6, t_ms: 31, cpu: 1, pid: 4, bytes: 9, daddr: '::1', saddr: 'ffff::2', dport: 1, sport: 2, payload_bytes: 43}
  - {kind: UdpIpRecv, t_ms: 32, cpu: 1, pid: 4, bytes: 9, daddr: 1.1.1.1, saddr: 2.2.2.2, dport: 1, sport: 65534, payload_bytes: 20}
  - {kind: TcpIpRecv, t_ms: 33, cpu: 1, pid: 4, bytes: 9, daddr: 1.1.1.1, saddr: 2.2.2.2, dport: 1, sport: 2, payload_bytes: 0}
YAML
	etlgen -o "$T/cut.etl" "$T/cut.yaml" 2>/dev/null
	run etl2evt -o "$T/cut.evt" "$T/cut.etl"
	[ "$status" -eq 0 ]
	# the payload's first N bytes, packed here from the YAML: PID and size
	# little-endian, the addresses, the ports big-endian
	python3 - <<'PY' > "$T/want"
import ipaddress, struct
def rec(pid, size, d, s, dp, sp, n):
    a = lambda x: ipaddress.ip_address(x).packed
    return (struct.pack("<II", pid, size) + a(d) + a(s) + struct.pack(">HH", dp, sp))[:n].hex()
print("30.000000\tKernel\t0\tclass=TcpIp\tgroup=6\ttype=10\thex=" + rec(1000, 1460, "10.0.0.255", "192.168.1.7", 443, 50000, 19))
print("31.000000\tKernel\t1\tclass=UdpIp\tgroup=8\ttype=27\thex=" + rec(4, 9, "::1", "ffff::2", 1, 2, 43))
print("32.000000\tUdpIpRecv\t1\tbytes=9\tdaddr=1.1.1.1\tsaddr=2.2.2.2\tdport=1\tsport=65534")
print("33.000000\tKernel\t1\tclass=TcpIp\tgroup=6\ttype=11\thex=")
PY
	awk -F'\t' '!/^#/ && $1 >= 30 && $1 < 40 {
		if ($2 == "Kernel") print $1 "\t" $2 "\t" $3 "\t" $8 "\t" $9 "\t" $10 "\t" $12
		else print $1 "\t" $2 "\t" $3 "\t" $8 "\t" $9 "\t" $10 "\t" $11 "\t" $12 }' "$T/cut.evt" > "$T/got"
	textdiff "$T/want" "$T/got"
	# and the 20 whole records before them are unaffected
	[ "$(awk -F'\t' '!/^#/ && $2 ~ /^(TcpIp|UdpIp)/ && $1 < 30' "$T/cut.evt" | wc -l)" -eq 20 ]
}

#!/usr/bin/env bats
# etl2evt on the real corpus: census counts, header fields, TraceEvent's
# own decode, the README's known figures, stacks, time, input forms.
load helpers

DIAG=perfview/diaghub-dotnetcore3.1-win-x64-diagsession.zip

local_setup() {
	require_corpus
}

# census_matches CENSUSFILE INPUT [MEMBER]: etl2evt --census agrees with
# tests/corpus/census (the project's expected counts) line by line (count, header kind, group/type or provider).
census_matches() {
	local norm='$2 ~ /^[KEFW]$/ && $1 ~ /^[0-9]+$/ {
		if ($2 == "K") { g=""; t=""; for (i=4;i<=NF;i++) { if ($i ~ /^g=/) g=$i; if ($i ~ /^t=/) t=$i }; print $1, $2, $3, g, t }
		else if ($2 == "F") print $1, $2, $3, $4, $5
		else print $1, $2, $3, $4 }'
	awk "$norm" "$CENSUS/$1" | sort >"$T/expected"
	[ -s "$T/expected" ] || fail "no census lines in $1"
	if [ -n "${3:-}" ]; then
		etl2evt --census --member "$3" "$CORPUS/$2" >"$T/census" || fail "etl2evt --census failed on $2"
	else
		etl2evt --census "$CORPUS/$2" >"$T/census" || fail "etl2evt --census failed on $2"
	fi
	awk "$norm" "$T/census" | sort >"$T/got"
	textdiff "$T/expected" "$T/got" || fail "census of $2 differs (< census, > etl2evt)"
}

# header_matches CENSUSFILE INPUT [MEMBER]: the #evt header agrees with the census' logfile header.
header_matches() {
	if [ -n "${3:-}" ]; then
		etl2evt -k none --member "$3" "$CORPUS/$2" >"$T/h.evt"
	else
		etl2evt -k none "$CORPUS/$2" >"$T/h.evt"
	fi
	python3 - "$CENSUS/$1" "$T/h.evt" <<'PY'
import json, sys, datetime
census = open(sys.argv[1]).read()
h = json.loads(census.split("logfile header: ", 1)[1].split("\n", 1)[0])
line = open(sys.argv[2]).readline().rstrip("\n").split("\t")
assert line[0] == "#evt" and line[1] == "1", line[:2]
kv = dict(f.split("=", 1) for f in line[2:])
ft = h["StartTime"]
start = (datetime.datetime(1601, 1, 1) + datetime.timedelta(microseconds=ft // 10)).strftime("%Y-%m-%dT%H:%M:%S.%f") + "%dZ" % (ft % 10)
clock = {1: "qpc", 2: "systime", 3: "cycles"}[h["ReservedFlags"]]
freq = {"qpc": h["PerfFreq"], "systime": 10000000, "cycles": h["CpuSpeedInMHz"] * 1000000}[clock]
want = {"os_build": h["ProviderVersion"], "cpus": h["NumberOfProcessors"], "pointer_size": h["PointerSize"],
        "os_version": h["Version"], "clock": clock, "clock_freq": freq, "start_utc": start,
        "events_lost": h["EventsLost"], "buffers_lost": h["BuffersLost"], "logger": h["LoggerName"]}
bad = [(k, kv.get(k), str(v)) for k, v in want.items() if kv.get(k) != str(v)]
assert not bad, bad
PY
}

@test "census: airbus traces (Win10 autologger, TraceLogging, lost events)" {
	census_matches airbus-AMSITrace.txt airbus/AMSITrace.etl
	census_matches airbus-ShutdownPerfDiagLogger.txt airbus/ShutdownPerfDiagLogger.etl
	census_matches airbus-lxcore_kernel.txt airbus/lxcore_kernel.etl
}

@test "census: krabsetw and tx traces (Win7 logman, odd clocks, 1 MiB buffers)" {
	census_matches krabsetw-powershell.txt krabsetw/powershell.etl
	for t in BondEtwSample CrossMachineHTTP HTTP_Server WsRm01; do
		census_matches tx-$t.txt tx/$t.etl
	done
}

@test "census: PerfView traces, .etl and .etl.zip, compressed, 32-bit" {
	census_matches perfview-SelfDescribingSingleEvent.txt perfview/SelfDescribingSingleEvent.etl
	census_matches perfview-smallEtlFile.txt perfview/smallEtlFile.etl
	census_matches perfview-net.4.5.2.x64.txt perfview/net.4.5.2.x64.etl.zip
	census_matches perfview-ctf-net45-win7.txt perfview/ctf-net45-win7.etl.zip
	census_matches perfview-gcevents.txt perfview/gcevents.etl.zip
	census_matches perfview-gcrundownevents.txt perfview/gcrundownevents.etl.zip
	census_matches perfview-primitive-types.txt perfview/primitive-types.etl.zip
}

@test "census: every .etl inside the diaghub .diagsession zip" {
	for m in diaghub.etl diaghub.kernel.1.etl diaghub.user_injected.1.etl diaghub.user_paged.1.etl; do
		census_matches perfview-diaghub-$m.txt $DIAG $m
	done
}

@test "header fields match the logfile header of every trace" {
	header_matches airbus-AMSITrace.txt airbus/AMSITrace.etl
	header_matches airbus-ShutdownPerfDiagLogger.txt airbus/ShutdownPerfDiagLogger.etl
	header_matches airbus-lxcore_kernel.txt airbus/lxcore_kernel.etl
	header_matches krabsetw-powershell.txt krabsetw/powershell.etl
	for t in BondEtwSample CrossMachineHTTP HTTP_Server WsRm01; do header_matches tx-$t.txt tx/$t.etl; done
	header_matches perfview-SelfDescribingSingleEvent.txt perfview/SelfDescribingSingleEvent.etl
	header_matches perfview-smallEtlFile.txt perfview/smallEtlFile.etl
	header_matches perfview-net.4.5.2.x64.txt perfview/net.4.5.2.x64.etl.zip
	header_matches perfview-ctf-net45-win7.txt perfview/ctf-net45-win7.etl.zip
	header_matches perfview-gcevents.txt perfview/gcevents.etl.zip
	header_matches perfview-gcrundownevents.txt perfview/gcrundownevents.etl.zip
	header_matches perfview-primitive-types.txt perfview/primitive-types.etl.zip
	header_matches perfview-diaghub-diaghub.kernel.1.etl.txt $DIAG diaghub.kernel.1.etl
}

@test "net.4.5.2.x64: evt counts per kind match the census and evtcheck accepts the stream" {
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$T/x.evt"
	evtcheck -c "$T/x.evt" >"$T/counts"
	grep -qx "$(printf 'Sample\t79528\t79528.000000')" "$T/counts" || { cat "$T/counts"; fail "samples"; }
	# kernel rundowns: perfinfo + system header variants together
	[ "$(grep -c "$(printf '\tImageDCStart\t')" "$T/x.evt")" -eq $((1622 + 141)) ]
	[ "$(grep -c "$(printf '\tThreadDCStart\t')" "$T/x.evt")" -eq 670 ]
	[ "$(grep -c "$(printf '\tProcessDCStart\t')" "$T/x.evt")" -eq 32 ]
	[ "$(grep -c "$(printf '\tDbgID_RSDS\t')" "$T/x.evt")" -eq 3534 ]
	[ "$(grep -c "$(printf '\tDiskRead\t')" "$T/x.evt")" -eq 1208 ]
	# every event of the census is a line, except the logfile header, the 12,280 stack records
	# and the 14,983 CLR stack walks (their frames join their events' lines)
	total=$(awk -F'\t' '!/^#/' "$T/x.evt" | wc -l)
	[ "$total" -eq $((179474 - 1 - 252 - 2061 - 7046 - 1909 - 1012 - 14983)) ] || fail "total $total"
}

@test "net.4.5.2.x64: the README's known figures" {
	etl2evt -k Sample "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$T/s.evt"
	run awk -F'\t' '$2=="Sample"{n++; if($6==0){idle++; if($0~/\tdpc=1|\tisr=1/) idd++; if($4!="Idle"||$5!=0) bad++} else {busy++; if($0 !~ /\tnostack=1\t/) st++}; p[$4]++}
	    END{best=""; for(k in p) if(k!="Idle" && p[k]>p[best]) best=k; print n, idle, busy, st, idd, bad+0, best, p[best]}' "$T/s.evt"
	[ "$output" = "79528 73313 6215 6214 105 0 Test.x64.exe 5129" ] || fail "got: $output"
	# TraceEvent's PerfInfo/Sample count = non-idle + idle-in-DPC/ISR
	grep -q 'COUNT .*PerfInfo/Sample:6320' "$CORPUS/perfview/net.4.5.2.x64.baseline.txt"
	# all stack keys resolved
	! grep -q '^#skipped.*what=stack_key' "$T/s.evt"
}

@test "ctf-net45-win7 (no PROC_INDEX flag, SavedOffset 0 header): the README's known figures" {
	etl2evt -k Sample "$CORPUS/perfview/ctf-net45-win7.etl.zip" >"$T/s.evt"
	run awk -F'\t' '$2=="Sample"{n++; if($6==0){idle++; if($0~/\tdpc=1|\tisr=1/) idd++} else if($0 !~ /\tnostack=1\t/) st++; else ns++}
	    END{print n, idle, idd, st, ns}' "$T/s.evt"
	[ "$output" = "16865 12201 190 4488 176" ] || fail "got: $output"
	# the samples without a stack are Test.exe in wow64cpu.dll (per the README): their stack is the IP's frame
	awk -F'\t' '$2=="Sample" && $6!=0 && /\tnostack=1\t/{print $4, $NF}' "$T/s.evt" | cut -d'!' -f1 | sort | uniq -c | sort -rn >"$T/nostack"
	head -1 "$T/nostack" | grep -qiE ' test\.exe wow64cpu\.dll$' || fail "$(head -3 "$T/nostack")"
	# 4 CPUs from the byte at 0x28
	[ "$(awk -F'\t' '$2=="Sample"{print $3}' "$T/s.evt" | sort -u | tr '\n' ' ')" = "0 1 2 3 " ]
}

@test "ctf-net45-win7: stack records that come long after their event join it, without holding the stream back" {
	# PerfView.exe's sample at 96.3174 ms gets its kernel frame at once and its
	# user part 51.8 ms later (36 records in this trace come over 1 ms late)
	rss=$(peak_rss_kb etl2evt --no-symbols "$CORPUS/perfview/ctf-net45-win7.etl.zip")
	[ "$rss" -gt 0 ] || fail "etl2evt failed ($rss)"
	line=$(awk -F'\t' '$1 == "96.317400" && $2 == "Sample"' "$T/out")
	[[ "$line" == *$'\tkframes=1\tntdll.dll!0x399d5;'*';wow64cpu.dll!'*';ntoskrnl.exe!0x7a66b' ]] || fail "$line"
	# the output waits only for stacks that can still come: 50 MB of evt in a few MB
	asan && return 0	# (RSS under ASan is its shadow memory)
	[ "$rss" -lt 32768 ] || fail "peak RSS $rss kB"
}

@test "stacks of the Win8 and Win7 traces name the modules a Windows user sees" {
	for z in net.4.5.2.x64 ctf-net45-win7; do
		etl2evt -k Sample "$CORPUS/perfview/$z.etl.zip" | awk -F'\t' '$2=="Sample" && $NF!=""{print $NF}' |
		    tr ';' '\n' | cut -d'!' -f1 | sort | uniq -c | sort -rn >"$T/mods.$z"
		for m in ntdll.dll ntoskrnl.exe clr.dll kernel32.dll mscoree.dll KernelBase.dll; do
			grep -qiE " $m\$" "$T/mods.$z" || fail "$z: no $m frames: $(head "$T/mods.$z")"
		done
		# frames are module!0xRVA (no symbols given) and RVAs fall inside images
		etl2evt -k Sample "$CORPUS/perfview/$z.etl.zip" | awk -F'\t' '$2=="Sample"{print $NF}' | tr ';' '\n' |
		    grep -v '^$' | grep -vE '^[^!]+!(0x[0-9a-f]+|.+)$' | head -3 >"$T/badframes"
		[ ! -s "$T/badframes" ] || fail "malformed frames: $(cat "$T/badframes")"
	done
	# root first: the outermost frame of user stacks is the thread start in ntdll
	etl2evt -k Sample -p Test.x64.exe "$CORPUS/perfview/net.4.5.2.x64.etl.zip" | awk -F'\t' '$2=="Sample" && $NF!=""{split($NF,f,";"); print f[1]}' |
	    cut -d'!' -f1 | sort | uniq -c | sort -rn | head -1 | grep -q 'ntdll.dll'
}

@test "net.4.5.2.x64: fields TraceEvent printed in its baseline come out the same" {
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$T/x.evt"
	python3 - "$CORPUS/perfview/net.4.5.2.x64.baseline.txt" "$T/x.evt" <<'PY'
import re, sys
base, evt = sys.argv[1], sys.argv[2]
lines = {}
for l in open(evt, encoding="utf-8"):
    if l.startswith("#"): continue
    f = l.rstrip("\n").split("\t")
    a = dict(x.split("=", 1) for x in f[7:-1])
    a = {k: re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), v) for k, v in a.items()}
    lines.setdefault(f[1], []).append((round(float(f[0]), 3), f, a))
def num(s): return int(s.replace(",", ""))
def noext(s): return s.rsplit(".", 1)[0] if s.lower().endswith((".exe", ".dll")) else s
checked = {}
for l in open(base, encoding="utf-8"):
    m = re.match(r"EVENT ([0-9.,]+): (.+?) (PID=.*)", l)
    if not m: continue
    t = float(m.group(1).replace(",", "")); name = m.group(2)
    b = dict(kv.split("=", 1) for kv in m.group(3).rstrip("; \n").split("; ") if "=" in kv)
    if name == "Windows Kernel/PerfInfo/Sample":
        kind = "Sample"
        ok = lambda f, a: (f[4] == b["PID"] and f[5] == b["TID"] and f[2] == b["ProceNum"] and noext(f[3]) == b["PName"]
                           and int(a["ip"], 16) == int(b["InstructionPointer"], 16) and a["prio"] == b["Priority"]
                           and ("dpc" in a) == (b["ExecutingDPC"] == "True") and ("isr" in a) == (b["ExecutingISR"] == "True"))
    elif name == "Windows Kernel/Process/DCStart":
        kind = "ProcessDCStart"
        ok = lambda f, a: (f[4] == b["ProcessID"] and a["parent"] == b["ParentID"] and a["image"] == b["ImageFileName"]
                           and a["session"] == b["SessionID"] and a["cmdline"].startswith(b["CommandLine"].rstrip(".")))
    elif name == "Windows Kernel/Image/DCStart":
        kind = "ImageDCStart"
        ok = lambda f, a: (f[4] == b["PID"] and int(a["base"], 16) == int(b["ImageBase"], 16) and int(a["size"], 16) == num(b["ImageSize"])
                           and int(a["checksum"], 16) == num(b["ImageChecksum"]) and a["timestamp"] == str(num(b["TimeDateStamp"])))
    elif name in ("Windows Kernel/Thread/Start", "Windows Kernel/Thread/Stop"):
        kind = "ThreadStart" if name.endswith("Start") else "ThreadEnd"
        ok = lambda f, a: f[4] == b["PID"] and f[5] == b["TID"] and noext(f[3]) == b["PName"]
    elif name == "Windows Kernel/PerfInfo/CollectionStart":
        kind = "SampleInterval"
        ok = lambda f, a: float(a["interval_ms"]) * 10000 == num(b["NewInterval"]) and f[4] == b["PID"]
    elif name == "KernelTraceControl/ImageID":
        kind = "ImageID"
        ok = lambda f, a: int(a["base"], 16) == int(b["ImageBase"], 16) and int(a["size"], 16) == num(b["ImageSize"]) and a["image"] == b["OriginalFileName"]
    elif name == "KernelTraceControl/ImageID/DbgID_RSDS":
        kind = "DbgID_RSDS"
        ok = lambda f, a: int(a["base"], 16) == int(b["ImageBase"], 16) and a["age"] == b["Age"] and a["pdb"] == b["PDBFileName"] and a["guid"].startswith(b["GuidSig"].rstrip("."))
    elif name in ("Windows Kernel/TcpIp/SendIPV6", "Windows Kernel/TcpIp/RecvIPV6", "Windows Kernel/UdpIp/Recv"):
        kind = name.split("/")[1] + name.split("/")[2]
        ok = lambda f, a: (f[4] == b["PID"] and a["bytes"] == str(num(b["size"])) and a["dport"] == str(num(b["dport"]))
                           and a["sport"] == str(num(b["sport"])) and a["daddr"].startswith(b["daddr"].rstrip("."))
                           and a["saddr"].startswith(b["saddr"].rstrip(".")))
    elif name == "Windows Kernel/DiskIO/Write":
        kind = "DiskWrite"
        ok = lambda f, a: (a["bytes"] == str(num(b["TransferSize"])) and a["offset"] == str(num(b["ByteOffset"]))
                           and a["disk"] == b["DiskNumber"] and abs(float(a["elapsed_ms"]) - float(b["ElapsedTimeMSec"])) < 0.001)
    elif name == "Microsoft-Windows-DotNETRuntime/Method/LoadVerbose":
        kind = "MethodLoad"
        ok = lambda f, a: int(a["start"], 16) == int(b["MethodStartAddress"], 16) and a["size"] == str(num(b["MethodSize"])) and f[4] == b["PID"]
    else:
        continue
    cands = [x for x in lines.get(kind, []) if abs(x[0] - t) < 0.0015]
    assert any(ok(f, a) for _, f, a in cands), ("no match for", l.strip()[:300], [c[1][:7] for c in cands][:3])
    checked[kind] = checked.get(kind, 0) + 1
need = {"TcpIpSendIPV6": 5, "TcpIpRecvIPV6": 5, "UdpIpRecv": 1, "DiskWrite": 1, "Sample": 5, "ProcessDCStart": 5, "ImageDCStart": 5, "ThreadStart": 1, "ThreadEnd": 2, "SampleInterval": 1, "ImageID": 5, "DbgID_RSDS": 5}
assert all(checked.get(k, 0) >= v for k, v in need.items()), checked
PY
}

@test "HTTP_Server: the first user event and its absolute time are exactly the known truth" {
	etl2evt --utc "$CORPUS/tx/HTTP_Server.etl" >"$T/h.evt"
	first=$(awk -F'\t' '$2=="Event"' "$T/h.evt" | head -1)
	[[ "$first" == *$'\tguid=dd5ef90a-6398-47a4-ad34-4dcecdef795f\t'* ]]
	for kv in id=21 opcode=28 task=4 level=4 keywords=0x8000000000000010; do
		[[ "$first" == *$'\t'"$kv"$'\t'* ]] || fail "no $kv in $first"
	done
	# FILETIME 129402940472257591 = 2011-01-23T22:07:27.2257591Z
	[[ "$first" == *$'\tutc=2011-01-23T22:07:27.2257591Z\t'* ]] || fail "$first"
	hex=$(printf '%s\n' "$first" | tr '\t' '\n' | sed -n 's/^hex=//p')
	[ "${#hex}" -eq 144 ]	# UserDataLength 72
	[ "$(awk -F'\t' '$2=="Event"' "$T/h.evt" | wc -l)" -eq 2041 ]
	# the time column agrees with utc - start_utc: 22:07:27.2257591 - 22:06:37.4768585 = 49748.9006 ms
	[[ "$first" == 49748.900* ]]
}

@test "TraceLogging fields are decoded from the in-event schema" {
	etl2evt "$CORPUS/perfview/SelfDescribingSingleEvent.etl" >"$T/t.evt"
	grep -q $'\tp\.' "$T/t.evt" || fail "no p.NAME fields: $(grep Event "$T/t.evt" | head -2)"
	etl2evt "$CORPUS/airbus/AMSITrace.etl" >"$T/a.evt"
	[ "$(grep -c $'\tEvent\t.*\tp\.' "$T/a.evt")" -eq 19 ]
	evtcheck "$T/t.evt"
	evtcheck "$T/a.evt"
}

@test "input: .etl.zip, stdin (plain and zip), -o, and the same bytes each way" {
	etl2evt -k Sample,ImageDCStart "$CORPUS/perfview/net.4.5.2.x64.etl.zip" | grep -v '^#' >"$T/a"
	etl2evt -k Sample,ImageDCStart - <"$CORPUS/perfview/net.4.5.2.x64.etl.zip" | grep -v '^#' >"$T/b"
	cmp "$T/a" "$T/b"
	cat "$CORPUS/tx/HTTP_Server.etl" | etl2evt -o "$T/c.evt"
	[ "$(grep -c $'\tEvent\t' "$T/c.evt")" -eq 2041 ]
	run etl2evt --census "$CORPUS/$DIAG"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--member"* ]]
}

@test "a .diagsession's four .etl files are merged: user stacks resolve through the kernel file's images" {
	etl2evt "$CORPUS/$DIAG" >"$T/d.evt"
	evtcheck "$T/d.evt"
	head -1 "$T/d.evt" | grep -q $'\tfiles=4'
	# events of every file: kernel rundown, ImageID/DbgID, user events
	for k in ProcessDCStart ImageDCEnd ImageID DbgID_RSDS Event MethodLoad; do
		grep -q $'\t'"$k"$'\t' "$T/d.evt" || fail "no $k"
	done
	# 176 user events carry stacks (census: ext type 6); their frames name modules and JIT methods
	[ "$(awk -F'\t' '$2=="Event" && $NF!=""' "$T/d.evt" | wc -l)" -eq 176 ]
	awk -F'\t' '$2=="Event" && $NF!=""{print $NF}' "$T/d.evt" | tr ';' '\n' | cut -d'!' -f1 | sort -u >"$T/mods"
	for m in ntdll.dll kernel32.dll coreclr.dll locProject.exe; do grep -qx "$m" "$T/mods" || fail "no $m"; done
	grep -q 'locProject.dll!EFTestApp.Program.Main' "$T/d.evt"
	# the user file alone has JIT methods but no native image for these frames
	etl2evt --member diaghub.user_paged.1.etl "$CORPUS/$DIAG" | awk -F'\t' '$2=="Event" && $NF!=""{print $NF}' |
	    tr ';' '\n' | grep -Ec '^(ntdll|coreclr)\.dll!' | grep -qx 0
	# the same events as the four files decoded one by one
	total=0
	for m in diaghub.etl diaghub.kernel.1.etl diaghub.user_injected.1.etl diaghub.user_paged.1.etl; do
		total=$((total + $(etl2evt --member $m "$CORPUS/$DIAG" | grep -vc '^#')))
	done
	[ "$(grep -vc '^#' "$T/d.evt")" -eq "$total" ]
	# and time-ordered across files
	awk -F'\t' '!/^#/{ if ($1 + 0 < prev - 0.0000005) bad++; prev = $1 } END{exit bad > 0}' "$T/d.evt"
}

@test "files of different pointer sizes are not one session: refused, naming both, exit 2" {
	# a 32-bit file's kernel addresses (0x8xxxxxxx) are user space in a
	# 64-bit file's process: merged, its DPC routines named nothing (?!0x...)
	etlgen -o "$T/a32.etl" --pointer-size 4 "$BATS_TEST_DIRNAME/scenarios/disk-dpc.yaml" 2>/dev/null
	etlgen -o "$T/b64.etl" --pointer-size 8 "$BATS_TEST_DIRNAME/scenarios/cswitch.yaml" 2>/dev/null
	run etl2evt -o "$T/ab.evt" "$T/a32.etl" "$T/b64.etl"
	[ "$status" -eq 2 ] || fail "exit $status"
	[ "${#lines[@]}" -eq 1 ] || fail "$output"
	[[ "$output" == "etl2evt: $T/a32.etl is 32-bit and $T/b64.etl is 64-bit: "* ]] || fail "$output"
	# each alone, and two files of one size, convert; the 32-bit file names its DPC routine
	etl2evt "$T/a32.etl" | awk -F'\t' '$2 == "DPC"' | grep -q $'\troutine=[a-z]*\.sys!' || fail "32-bit alone"
	etlgen -o "$T/c32.etl" --pointer-size 4 "$BATS_TEST_DIRNAME/scenarios/cswitch.yaml" 2>/dev/null
	etl2evt "$T/a32.etl" "$T/c32.etl" | head -1 | grep -q $'\tfiles=2' || fail "two 32-bit files"
}

@test "source filters: kinds, processes, time range" {
	z="$CORPUS/perfview/net.4.5.2.x64.etl.zip"
	etl2evt -k Sample -p Test.x64.exe "$z" >"$T/p.evt"
	[ "$(awk -F'\t' '!/^#/{print $2, $4}' "$T/p.evt" | sort -u)" = "Sample Test.x64.exe" ]
	[ "$(grep -vc '^#' "$T/p.evt")" -eq 5129 ]
	etl2evt -k Sample -p 3676 "$z" | grep -vc '^#' | grep -qx 5129
	etl2evt -k Sample -s 1000 -e 2000 "$z" >"$T/r.evt"
	awk -F'\t' '!/^#/ && ($1 < 1000 || $1 > 2000){bad++} !/^#/{n++} END{exit !(n > 1000 && bad == 0)}' "$T/r.evt"
	etl2evt -k 'FileIo*' "$z" | awk -F'\t' '!/^#/{print $2}' | sort -u | grep -vq '^FileIo' && fail "prefix filter"
	true
}

@test "usage, --version, --help, bad options" {
	run etl2evt --version
	[ "$status" -eq 0 ]
	[[ "$output" == "etl2evt (etlkit) "* ]]
	run etl2evt -h
	[ "$status" -eq 0 ]
	[[ "$output" == usage:* ]]
	run etl2evt --bogus
	[ "$status" -eq 2 ]
	run etl2evt "$T/missing.etl"
	[ "$status" -eq 2 ]
	[[ "$output" == "etl2evt: "*"missing.etl"* ]]
	printf 'not an etl file at all, just text\n%.0s' {1..10} >"$T/junk.etl"
	run etl2evt "$T/junk.etl"
	[ "$status" -eq 2 ]
	[[ "$output" == *"junk.etl"*"offset"* ]]
}

@test "symbols: the NGEN PDBs inside ctf-net45-win7.etl.zip name managed frames; --no-symbols keeps RVAs" {
	z="$CORPUS/perfview/ctf-net45-win7.etl.zip"
	etl2evt -k Sample "$z" >"$T/s.evt"
	grep -q 'mscorlib\.ni\.dll!System\.Reflection\.Assembly\.LoadFrom(System\.String)' "$T/s.evt"
	grep -q $'^#symbols\timage=mscorlib.ni.dll\t.*status=resolved' "$T/s.evt"
	evtcheck "$T/s.evt"
	etl2evt -k Sample --no-symbols "$z" >"$T/n.evt"
	! grep -q 'mscorlib\.ni\.dll![A-Za-z]' "$T/n.evt"
	grep -q 'mscorlib\.ni\.dll!0x' "$T/n.evt"
	! grep -q '^#symbols' "$T/n.evt"
	# the same samples either way
	[ "$(grep -vc '^#' "$T/s.evt")" -eq "$(grep -vc '^#' "$T/n.evt")" ]
	# an explicit --symbols directory without the PDBs: reported on stderr, still named from the zip
	run etl2evt -k Sample --symbols "$T" -o "$T/e.evt" "$z"
	[ "$status" -eq 0 ]
	grep -q 'mscorlib\.ni\.dll!System\.' "$T/e.evt"
}

@test "--full-paths: modules as DOS paths (volume mapping, system-volume paths, JIT modules), --addrs" {
	etl2evt --full-paths -k Sample,ImageLoad -p Test.x64.exe "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$T/f.evt"
	evtcheck "$T/f.evt"
	awk -F'\t' '$2=="Sample"{print $NF}' "$T/f.evt" | tr ';' '\n' | cut -d'!' -f1 | sort -u >"$T/mods"
	grep -qx 'C:\\Windows\\System32\\ntdll.dll' "$T/mods"
	grep -qx 'C:\\Windows\\System32\\kernel32.dll' "$T/mods"	# logged as \Windows\System32\kernel32.dll
	grep -qx 'C:\\Windows\\system32\\ntoskrnl.exe' "$T/mods"	# logged as \SystemRoot\system32\ntoskrnl.exe
	! grep -q '^\\' "$T/mods" || fail "NT paths left: $(grep '^\\' "$T/mods" | head -3)"
	grep -q $'\tImageLoad\t.*\tpath=C:\\\\Windows\\\\System32\\\\kernel32.dll\t' "$T/f.evt"
	# --addrs: frames outside every image keep their address
	etl2evt --addrs -k Sample "$CORPUS/perfview/net.4.5.2.x64.etl.zip" | grep -q '?!0xffffffffffd03003'
	! etl2evt -k Sample "$CORPUS/perfview/net.4.5.2.x64.etl.zip" | grep -q '?!0x'
}

@test "TraceLogging primitive types come out as TraceEvent decoded them (primitive-types baseline)" {
	etl2evt "$CORPUS/perfview/primitive-types.etl.zip" >"$T/p.evt"
	python3 - "$CORPUS/perfview/primitive-types.baseline.txt" "$T/p.evt" <<'PY'
import re, sys
got = {}
for l in open(sys.argv[2], encoding="utf-8"):
    f = l.rstrip("\n").split("\t")
    if len(f) > 7 and f[1] == "Event":
        got[round(float(f[0]), 3)] = (f, dict(x.split("=", 1) for x in f[7:-1]))
n = 0
for l in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"EVENT ([0-9.,]+): solar_system/PrimitiveTypesTest (PID=.*)", l)
    if not m: continue
    t = float(m.group(1).replace(",", ""))
    b = dict(kv.split("=", 1) for kv in m.group(2).rstrip("; \n").split("; ") if "=" in kv)
    f, a = got[t]
    assert f[4] == b["PID"] and f[5] == b["TID"] and f[2] == b["ProceNum"], (f[:7], b)
    assert a["provider"] == "solar_system"
    for k in ("string_type", "char_type", "int16_type", "int32_type", "uint16_type", "uint32_type", "uint64_type"):
        assert a["p." + k] == b[k].replace(",", ""), (k, a.get("p." + k), b[k])
    assert a["p.boolean_type"] == b["boolean_type"].lower()
    assert a["p.guid_type"].startswith(b["guid_type"].rstrip("."))
    # the writer logged int64 as TlgInUINT64: same bits
    assert int(a["p.int64_type"]) % 2**64 == int(b["int64_type"].replace(",", "")) % 2**64
    n += 1
assert n == 5, n  # COUNT solar_system/PrimitiveTypesTest:5
PY
}

@test "every corpus trace decodes cleanly (exit 0) into an evt stream evtcheck accepts" {
	for f in airbus/AMSITrace.etl airbus/ShutdownPerfDiagLogger.etl airbus/lxcore_kernel.etl krabsetw/powershell.etl \
	    tx/BondEtwSample.etl tx/CrossMachineHTTP.etl tx/HTTP_Server.etl tx/WsRm01.etl perfview/SelfDescribingSingleEvent.etl \
	    perfview/smallEtlFile.etl perfview/gcevents.etl.zip perfview/gcrundownevents.etl.zip perfview/primitive-types.etl.zip \
	    perfview/ctf-net45-win7.etl.zip "$DIAG"; do
		run etl2evt -o "$T/x.evt" "$CORPUS/$f"
		[ "$status" -eq 0 ] || fail "$f: exit $status: $output"
		# the one warning a lossy trace gets (AMSITrace lost 3 events) is no decoding problem
		output=$(grep -v ': unhealthy trace: ' <<<"$output" || true)
		[ -z "$output" ] || fail "$f: stderr: $output"
		evtcheck "$T/x.evt" || fail "$f: invalid evt"
		# nothing corrupt, no impossible timestamps, no short events
		! grep -qE '^#skipped.*what=(buffer|event)' "$T/x.evt" || fail "$f: $(grep '^#skipped' "$T/x.evt")"
	done
}

@test "manifest events decoded with the schemas the merge embedded (lib/tdh), at most 64 attributes a line" {
	etl2evt -k Event "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$T/e.evt"
	evtcheck "$T/e.evt"
	grep -q $'\tprovider=Microsoft-Windows-DNS-Client\t.*\tp\.Interface=' "$T/e.evt"
	[ "$(grep $'\tprovider=Microsoft-Windows-Kernel-File\t' "$T/e.evt" | grep -c $'\tp\.')" -eq 562 ]
	awk -F'\t' '!/^#/ && NF - 8 > 64 {bad++} END{exit bad > 0}' "$T/e.evt"
}

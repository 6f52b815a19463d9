#!/usr/bin/env bats
# Issue 9: manifest events decoded with the schemas embedded in traces
# (KernelTraceControl MetaData EventInfo/EventMapInfo, lib/tdh), WindowsPerf's
# built-in layouts (lib/wperf), and the PMU view (lib/pmu, render pmu).
load helpers

NET_ZIP() { echo "$CORPUS/perfview/net.4.5.2.x64.etl.zip"; }
BASELINE() { echo "$CORPUS/perfview/net.4.5.2.x64.baseline.txt"; }

# A plain .etl of the corpus, extracted once per file run.
corpus_etl() { # NAME ZIP MEMBER
	local f="$BATS_FILE_TMPDIR/$1"
	[ -s "$f" ] || unzip_member "$2" "$3" "$f"
	echo "$f"
}

# net_tdh: tdhdump's decode of net.4.5.2.x64 (from the schemas it embeds) in $T/net.tdh.
net_tdh() {
	require_corpus
	tdhdump "$(corpus_etl net.etl "$(NET_ZIP)" net.4.5.2.x64.etl)" >"$T/net.tdh"
}

# Compares tdhdump output with TraceEvent's baseline (EVENT lines, Name=value; fields):
# TraceEvent truncates strings to 20 characters + "...", writes numbers with thousands
# separators and times as yy/MM/dd HH:mm:ss.ff; values are compared after that formatting.
# MODE schema: events TraceEvent decoded from the same embedded schemas (names must be equal).
# MODE kernelfile: TraceEvent decodes Kernel-File with its own built-in parser (IrpPtr for Irp,
# CreateOptions split into options and disposition, DOS paths); values are mapped to it.
compare_baseline() { # BASELINE TDHDUMP MODE
	python3 - "$@" <<'PY'
import sys, re
base, ours, mode = sys.argv[1], sys.argv[2], sys.argv[3]
SCHEMA_PROVIDERS = ('Microsoft-Windows-Kernel-EventTracing', 'Microsoft-Windows-DNS-Client',
    'Microsoft-Windows-Kernel-Process', 'Microsoft-Windows-Immersive-Shell')
def te_fields(line):
    rest = line.split('; DataLen=', 1)[1]
    rest = rest.split('; ', 1)[1] if '; ' in rest else ''
    return [(f.strip().partition('=')[0], f.strip().partition('=')[2]) for f in rest.split('; ') if f.strip()]
def te_events(path, want):
    for line in open(path, encoding='utf-8'):
        m = re.match(r'EVENT ([\d,]+\.\d+): (\S+?)/(.*?) PID=', line)
        if m and m.group(2) in want:
            yield float(m.group(1).replace(',', '')), m.group(2), m.group(3), te_fields(line)
ev = {}
for line in open(ours, encoding='utf-8'):
    t, prov, name, fields = line.rstrip('\n').split('\t', 3)
    fl = [(f.partition('=')[0], f.partition('=')[2]) for f in fields.split('; ') if f]
    ev.setdefault((prov, t), []).append((name, fl))
def as_te(v):
    if re.fullmatch(r'-?\d+', v): return '{:,}'.format(int(v))
    m = re.fullmatch(r'\d\d(\d\d)-(\d\d)-(\d\d)T(\d\d:\d\d:\d\d\.\d+)Z', v)
    if m: return '%s/%s/%s %s' % m.groups()
    return v
def same(mine, te):
    if mine == te: return True
    if te.startswith('0x') and mine.startswith('0x'): return int(te, 16) == int(mine, 16)
    mine = as_te(mine)
    if te.endswith('...'): return mine.startswith(te[:-3])
    return mine.lower() == te.lower() if te in ('True', 'False') else mine == te
def kf(fields):
    d = dict(fields)
    co = int(d['CreateOptions'], 16)
    share = {1: 'Read', 2: 'Write', 3: 'ReadWrite', 4: 'Delete', 5: 'Read, Delete', 6: 'Write, Delete', 7: 'ReadWrite, Delete'}
    disp = {0: 'SUPERSEDE', 1: 'OPEN_EXISTING', 2: 'CREATE_NEW', 3: 'OPEN_ALWAYS', 4: 'OVERWRITE', 5: 'OVERWRITE_IF'}
    opts = co & 0xffffff
    name = d['FileName'].replace('\\Device\\HarddiskVolume2\\', 'C:\\').replace('\\Device\\Mup\\', '\\\\')
    return [('IrpPtr', d['Irp']), ('FileObject', d['FileObject']),
            ('CreateOptions', 'FILE_ATTRIBUTE_ARCHIVE' if opts == 0x20 else str(opts)),
            ('CreateDisposition', disp[co >> 24]), ('FileAttributes', str(int(d['CreateAttributes'], 16))),
            ('ShareAccess', share.get(int(d['ShareAccess'], 16), d['ShareAccess'])), ('FileName', name)]
def same_num(mine, te):
    # TraceEvent's CLR parser prints hex out-types in decimal and pads pointers
    try:
        a = int(mine, 16) if mine.startswith('0x') else int(mine)
        b = int(te, 16) if te.startswith('0x') else int(te.replace(',', ''))
        return a == b or (b < 0 and a == b + (1 << 32))	# HRESULTs as signed 32-bit
    except ValueError:
        return False
def same_flags(mine, te):
    # bitmaps: our "A|B" / "0" (TraceEvent's dynamic rendering) against its CLR parser's .NET
    # enums, "A, B" / "None", or the bare number when an enum lacks a bit (not comparable)
    if mine == '0' and te == 'None': return True
    if re.fullmatch(r'-?[\d,]+', te) and re.fullmatch(r'[A-Za-z_]\w*(\|\w+)*(\|0x[0-9a-f]+)?', mine): return True
    return same(mine.replace('|', ', '), te)
if mode == 'clr':
    # TraceEvent decodes the CLR with its own parser, generated from the same manifest: events
    # are matched by time and provider, and every field both name must carry the same value.
    n = bad = fields = 0
    for t, prov, name, tf in te_events(base, ('Microsoft-Windows-DotNETRuntime', 'Microsoft-Windows-DotNETRuntimePrivate')):
        cands = [c for dt in (0, -0.001, 0.001) for c in ev.get((prov, '%.3f' % (t + dt)), [])]
        te = dict(tf)
        best = max(cands, key=lambda c: len(set(k for k, _ in c[1]) & set(te)), default=None)
        common = [k for k, _ in best[1] if k in te] if best else []
        if not tf or not best or len(common) * 2 < len(tf):
            continue
        n += 1
        fields += len(common)
        mine = dict(best[1])
        wrong = [k for k in common if not (same(mine[k], te[k]) or same_num(mine[k], te[k]) or
                 same_flags(mine[k], te[k]))]
        if wrong:
            bad += 1
            print('differs: %.3f %s/%s %s\n  TraceEvent: %s\n  tdh:        %s' % (t, prov, name, wrong, tf, best[1]))
    print('compared=%d fields=%d differ=%d' % (n, fields, bad))
    sys.exit(1 if bad or n == 0 else 0)
want = SCHEMA_PROVIDERS if mode == 'schema' else ('Microsoft-Windows-Kernel-File',)
n = bad = 0
for t, prov, name, tf in te_events(base, want):
    cands = [c for dt in (0, -0.001, 0.001) for c in ev.get((prov, '%.3f' % (t + dt)), []) if c[0] == name]
    n += 1
    if not cands:
        print('missing: %.3f %s/%s' % (t, prov, name)); bad += 1; continue
    if not any([k for k, _ in fl] == [k for k, _ in tf] and all(same(a[1], b[1]) for a, b in zip(fl, tf))
               for fl in ((kf(f) if mode != 'schema' else f) for _, f in cands)):
        bad += 1
        print('differs: %.3f %s/%s\n  TraceEvent: %s\n  tdh:        %s' % (t, prov, name, tf, cands[0][1]))
print('compared=%d differ=%d' % (n, bad))
sys.exit(1 if bad else 0)
PY
}

@test "tdh: net.4.5.2.x64's 61 EventInfo and 24 EventMapInfo schemas parse, and every event with a schema decodes" {
	require_corpus
	etl=$(corpus_etl net.etl "$(NET_ZIP)" net.4.5.2.x64.etl)
	run tdhdump -s "$etl"
	[ "$status" -eq 0 ] || fail "$output"
	# the census: 44+17 MetaData type 32 and 14+10 type 33 records; repeats keep the first
	[[ "$output" == "schemas=61 maps=24 damaged=0 decoded="*" failed=0 nomatch="* ]] || fail "$output"
	decoded=$(sed 's/.*decoded=\([0-9]*\).*/\1/' <<<"$output")
	# every Kernel-File (562), Kernel-EventTracing (77), DNS-Client (4), Immersive-Shell (8) and
	# Kernel-Process (2) event of the census, plus the CLR events whose schemas the merge embedded
	[ "$decoded" -eq 66394 ] || fail "decoded=$decoded"
}

@test "tdh: field names and values equal TraceEvent's decode of the same embedded schemas (net.4.5.2.x64)" {
	net_tdh
	run compare_baseline "$(BASELINE)" "$T/net.tdh" schema
	[ "$status" -eq 0 ] || fail "$output"
	# Kernel-EventTracing ENABLE (GUID field) x15, DNS-Client (value map, sockaddr, length
	# prefix dropped) x4, Kernel-Process start/stop (FILETIMEs, 64-bit counters), Immersive-Shell x8
	[[ "$output" == "compared=29 differ=0" ]] || fail "$output"
	grep -qF $'174.754\tMicrosoft-Windows-DNS-Client\tDnsServerForInterface\tInterface=Ethernet; TotalServerCount=4; Index=1; DynamicAddress=dynamic; Address=[2001:4898::1050:1050]:0; ' "$T/net.tdh"
	grep -qF $'8202.284\tMicrosoft-Windows-Kernel-Process\tProcessStop/Stop\tProcessID=3676; CreateTime=2020-07-29T00:07:03.3564008Z; ExitTime=2020-07-29T00:07:08.8251536Z; ExitCode=0; TokenElevationType=2; HandleCount=101; CommitCharge=10559488; CommitPeak=10784768; CPUCycleCount=18544501267; ' "$T/net.tdh"
}

@test "tdh: Kernel-File Create events (schema embedded in net.4.5.2.x64) carry TraceEvent's values" {
	net_tdh
	[ "$(grep -c $'\tMicrosoft-Windows-Kernel-File\tCreate\tIrp=0x' "$T/net.tdh")" -eq 562 ]
	run compare_baseline "$(BASELINE)" "$T/net.tdh" kernelfile
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == "compared=5 differ=0" ]] || fail "$output"
	grep -qF $'169.833\tMicrosoft-Windows-Kernel-File\tCreate\tIrp=0xfffffa830393a3e8; FileObject=0xfffffa83004bda90; IssuingThreadId=3780; CreateOptions=0x1200000; CreateAttributes=0x0; ShareAccess=0x7; FileName=\\Device\\HarddiskVolume2\\Windows\\SysWOW64\\inetsrv\\iiscore.dll; ' "$T/net.tdh"
}

@test "tdh: CLR events decoded from the schemas net.4.5.2.x64 embeds carry the values TraceEvent's CLR parser prints" {
	net_tdh
	run compare_baseline "$(BASELINE)" "$T/net.tdh" clr
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" =~ compared=([0-9]+)\ fields=([0-9]+)\ differ=0$ ]] || fail "$output"
	[ "${BASH_REMATCH[1]}" -ge 100 ] || fail "$output"
	# value maps: GC reasons and types by name
	grep -qF $'3228.778\tMicrosoft-Windows-DotNETRuntime\tGarbageCollection/Start\tCount=1; Depth=0; Reason=AllocSmall; Type=NonConcurrentGC; ClrInstanceID=9; ' "$T/net.tdh"
}

@test "tdh: ctf-net45-win7 (Win7 merge: 6 schemas, 1 map) decodes its Kernel-EventTracing and DNS-Client events" {
	require_corpus
	etl=$(corpus_etl ctf.etl "$CORPUS/perfview/ctf-net45-win7.etl.zip" PerfViewData.etl)
	run tdhdump -s "$etl"
	[[ "$output" == "schemas=6 maps=1 damaged=0 decoded="*" failed=0 "* ]] || fail "$output"
	tdhdump "$etl" >"$T/ctf.tdh"
	# 95 events of the embedded schemas' providers; the CLR's decode with the built-in schemas
	[ "$(awk -F'\t' '$2 !~ /^Microsoft-Windows-DotNETRuntime/' "$T/ctf.tdh" | grep -vc '^#')" -eq 95 ]
	[ "$(grep -c $'\tMicrosoft-Windows-Kernel-EventTracing\tETW_TASK_PROVIDER/ETW_OPCODE_REGISTER\tProviderName=' "$T/ctf.tdh")" -eq 43 ]
}

@test "tdh: damaged schema records (truncated, bytes flipped) never crash, are counted, and events still decode or fall back" {
	require_corpus
	etl=$(corpus_etl ctf.etl "$CORPUS/perfview/ctf-net45-win7.etl.zip" PerfViewData.etl)
	run tdhdump -f 300 "$etl"
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" =~ ^rounds=300\ stored=([0-9]+)\ damaged=([0-9]+)\ decoded=([0-9]+)\ failed=([0-9]+)$ ]] || fail "$output"
	# some copies are rejected, some still parse and decode
	[ "${BASH_REMATCH[2]}" -gt 0 ] && [ "${BASH_REMATCH[3]}" -gt 0 ] || fail "$output"
	etl=$(corpus_etl net.etl "$(NET_ZIP)" net.4.5.2.x64.etl)
	run tdhdump -f 20 "$etl"
	[ "$status" -eq 0 ] || fail "$output"
}

@test "wperf: synthetic WindowsPerf traces decode to exactly the values written (schema embedded, after the events, or built in; 32- and 64-bit)" {
	for schema in embedded after none; do
		for ps in 4 8; do
			wperfgen -o "$T/w.etl" --schema $schema --pointer-size $ps --cores 3 --periods 5 \
			    --restart-at 3 --prototype --seed $ps --expect "$T/w.exp"
			tdhdump "$T/w.etl" | sort >"$T/got"
			sort "$T/w.exp" >"$T/want"
			textdiff "$T/want" "$T/got" || fail "schema=$schema pointer-size=$ps"
			# 3 cores x 5 periods x 4 events x (App + Driver), + 15 prototype events with a schema
			n=$(wc -l <"$T/got")
			if [ $schema = none ]; then [ "$n" -eq 120 ]; else [ "$n" -eq 135 ]; fi
		done
	done
	# field order and types per the manifests: App u64, UTF-16Z, u32, UTF-16Z, u64; Driver 8/4/4/8
	grep -qF $'WindowsPerf App\tReadGPC\tCore=2; Event=inst_spec; EventIdx=27; EventNote=g0,imix; Value=' "$T/got"
	grep -qF $'WindowsPerf Driver\tReadGPC\tCore=1; Event=4294967295; GPCIdx=31; Value=' "$T/got"
}

@test "wperf: without an embedded schema the prototype event (id 5) has none and is not decoded; with one its value map and bitmap apply" {
	wperfgen -o "$T/a.etl" --schema embedded --prototype --cores 2 --periods 4
	run tdhdump -s "$T/a.etl"
	[[ "$output" == "schemas=3 maps=2 damaged=0 decoded=72 failed=0 nomatch=0" ]] || fail "$output"
	tdhdump "$T/a.etl" >"$T/a.tdh"
	grep -qF $'10.000\tWindowsPerf Driver\tCustomEventTraceInfo\tText=dpc enter; Status=Success; Flags=Enter|Dpc; ' "$T/a.tdh"
	grep -qF $'210.010\tWindowsPerf Driver\tCustomEventTraceInfo\tText=dpc exit; Status=Retry; Flags=Exit|Dpc; ' "$T/a.tdh"
	grep -qF $'410.000\tWindowsPerf Driver\tCustomEventTraceInfo\tText=dpc enter; Status=Failure; Flags=Enter|Dpc; ' "$T/a.tdh"
	wperfgen -o "$T/b.etl" --schema none --prototype --cores 2 --periods 4
	run tdhdump -s "$T/b.etl"
	# the built-in ReadGPC layouts only: 8 events of id 5 have no schema
	[[ "$output" == "schemas=0 maps=0 damaged=0 decoded=64 failed=0 nomatch=8" ]] || fail "$output"
}

@test "etl2evt: WindowsPerf events come out as p.NAME fields, with and without an embedded schema; the prototype event falls back to hex without one" {
	for schema in embedded none; do
		wperfgen -o "$T/w.etl" --schema $schema --cores 2 --periods 3 --prototype --expect "$T/w.exp"
		etl2evt "$T/w.etl" >"$T/w.evt"
		evtcheck "$T/w.evt" >/dev/null
		# every expected event, field for field, as p.NAME=value attributes of an Event line
		python3 - "$T/w.exp" "$T/w.evt" $schema <<'PY' || fail "schema=$schema"
import sys
want = []
for line in open(sys.argv[1]):
    t, prov, name, fields = line.rstrip('\n').split('\t', 3)
    want.append((t, prov, tuple('p.' + f for f in fields.split('; ') if f)))
got = []
hexed = 0
for line in open(sys.argv[2]):
    if line.startswith('#'): continue
    c = line.rstrip('\n').split('\t')
    if c[1] != 'Event': continue
    attrs = c[7:-1]
    prov = [a[9:] for a in attrs if a.startswith('provider=')][0]
    if any(a.startswith('hex=') for a in attrs):
        hexed += prov.startswith('WindowsPerf'); continue
    got.append(('%.3f' % float(c[0]), prov, tuple(a for a in attrs if a.startswith('p.'))))
if sorted(want) != sorted(got):
    print('differ', len(want), len(got), sorted(set(want) ^ set(got))[:4]); sys.exit(1)
if hexed != (6 if sys.argv[3] == 'none' else 0):
    print('hex events', hexed); sys.exit(1)
PY
	done
	grep -q $'provider=WindowsPerf App\tguid=6afccf81-3a0c-411e-a4aa-c4cf02eb840d\tid=1\t.*\tp.Core=1\tp.Event=inst_spec\tp.EventIdx=27\tp.EventNote=g0,imix\tp.Value=' "$T/w.evt"
}

@test "etl2evt: net.4.5.2.x64's manifest events carry named fields from the embedded schemas" {
	require_corpus
	etl2evt -k Event "$(NET_ZIP)" >"$T/net.evt"
	grep -qF $'provider=Microsoft-Windows-Kernel-File\tguid=edd08927-9cc4-4e65-b970-c2560fb5c289\tid=12' "$T/net.evt"
	[ "$(grep -c 'provider=Microsoft-Windows-Kernel-File.*p.Irp=0x.*p.FileName=' "$T/net.evt")" -eq 562 ]
	grep -qF $'provider=Microsoft-Windows-DNS-Client\tguid=1c95126e-7eea-49a9-a3fe-a378b03ddb4d' "$T/net.evt"
	grep -qF 'p.Interface=Ethernet	p.TotalServerCount=4	p.Index=3	p.DynamicAddress=dynamic	p.Address=10.50.10.50:0' "$T/net.evt"
	# nothing with a schema is left as hex
	! grep -E 'provider=Microsoft-Windows-(Kernel-File|Kernel-EventTracing|DNS-Client|Kernel-Process|Immersive-Shell)	.*hex=' "$T/net.evt"
}


@test "etl2evt: damaged embedded schemas are counted (#skipped what=schema) and ignored; the events still decode" {
	wperfgen -o "$T/d.etl" --damaged-schema --schema none --cores 2 --periods 3 --expect "$T/d.exp"
	run tdhdump -s "$T/d.etl"
	[[ "$output" == "schemas=0 maps=0 damaged=3 decoded=48 failed=0 nomatch=0" ]] || fail "$output"
	etl2evt "$T/d.etl" >"$T/d.evt"
	grep -q $'^#skipped\twhat=schema\tcount=3\t' "$T/d.evt"
	[ "$(grep -c $'\tp.Core=[0-9]\t.*\tp.Value=[0-9]*\t' "$T/d.evt")" -eq 48 ]
	# with good schemas embedded too, the good ones are used and only the broken ones counted
	wperfgen -o "$T/e.etl" --damaged-schema --schema embedded --prototype --cores 2 --periods 3
	run tdhdump -s "$T/e.etl"
	[[ "$output" == "schemas=3 maps=2 damaged=3 decoded=54 failed=0 nomatch=0" ]] || fail "$output"
}
@test "render pmu: the plugin's two tables, per-period deltas, rates and IPC from running totals are exactly the model's" {
	for args in "--cores 3 --periods 6 --restart-at 3" "--providers driver --cores 5 --periods 8 --period-ms 100 --pointer-size 4" "--providers app --periods 2 --schema none"; do
		wperfgen -o "$T/w.etl" $args --expect-pmu "$T/want.pmu"
		etl2evt "$T/w.etl" | render pmu --tsv >"$T/got.pmu"
		grep -Ev '^(#|app|driver)' "$T/got.pmu" | sort >"$T/got"
		sort "$T/want.pmu" >"$T/want"
		textdiff "$T/want" "$T/got" || fail "$args"
	done
	wperfgen -o "$T/w.etl" --cores 2 --periods 3
	etl2evt "$T/w.etl" | render pmu >"$T/pmu.txt"
	grep -q '^GPC Data from App' "$T/pmu.txt"
	grep -q '^GPC Data from Driver' "$T/pmu.txt"
	grep -Eq '^0000001B +1 +1 +210\.010000 +[0-9]+$' "$T/pmu.txt"
	grep -Eq '^inst_spec +1 +0x1b +g0,imix +210\.510000 +[0-9]+$' "$T/pmu.txt"
	grep -Eq '^ +1 +driver +10\.010000 +210\.010000 +IPC +[0-9]\.[0-9]{4}$' "$T/pmu.txt"
	etl2evt "$T/w.etl" | render pmu --tsv | grep -c '^driver' | grep -qx 24
}

@test "render pmu: no WindowsPerf events says so; unusable ReadGPC lines are counted, exit 1" {
	printf '#evt\t1\n1.000000\tSample\t0\ta.exe\t1\t2\t1\tip=0x1\t\n' | render pmu >"$T/out"
	grep -q 'no WindowsPerf ReadGPC events' "$T/out"
	printf '#evt\t1\n1.000000\tEvent\t0\t?\t-1\t-1\t0\tguid=9b15b4b5-6979-4ba7-9b26-00c630a4d7b3\tid=1\tp.Core=x\t\ngarbage\n' >"$T/bad.evt"
	run render pmu "$T/bad.evt"
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[[ "$output" == *"2 line(s) skipped"* ]] || fail "$output"
}

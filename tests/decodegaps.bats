#!/usr/bin/env bats
# The decoding gaps of the first look (issue 22): no stack record is lost
# (each joins its event, or is counted as not selected or as an orphan),
# and the CLR events of a trace without a CLR manifest come out with
# named fields from the built-in schemas (lib/etl/knownschemas.c).
# The expected figures come from the census (tests/corpus/census: record
# counts by an independent walker) and from PerfView's own dump of
# gcevents (corpus perfview/gcevents.baseline.txt), never from etl2evt.
load helpers

NET=perfview/net.4.5.2.x64.etl.zip

# census_count CENSUS_FILE AWK_CONDITION: the records the census counts on matching lines
census_count() {
	awk "$2 { n += \$1 } END { print n + 0 }" "$CENSUS/$1"
}

# stat_of EVT KEY: KEY= from the #stats line
stat_of() {
	sed -n "s/^#stats\t.*\t$2=\([0-9]*\).*/\1/p" "$1"
}

# accounted EVT: stacks joined + not selected + orphans + unresolved keys + second parts
accounted() {
	awk -F'\t' '
	/^#stats/ { for (i = 2; i <= NF; i++) if ($i ~ /^stacks_joined=/) { sub(/.*=/, "", $i); n += $i } }
	/^#removed\tby=etl2evt\treason=not-selected/ { for (i = 2; i <= NF; i++) if ($i ~ /^stacks=/) { sub(/.*=/, "", $i); n += $i } }
	/^#skipped\twhat=stack/ { for (i = 2; i <= NF; i++) if ($i ~ /^count=/) { sub(/.*=/, "", $i); n += $i } }
	END { print n + 0 }' "$1"
}

@test "decodegaps: every StackWalk record of net.4.5.2.x64 reaches its event, none is called missing" {
	require_corpus
	# Stack (32), StackKeyKernel (37), StackKeyUser (38), as the census walker counts them
	want=$(census_count perfview-net.4.5.2.x64.txt '/StackWalk g=0x18 t=0x(20|25|26)/')
	[ "$want" -eq 9359 ]
	etl2evt "$CORPUS/$NET" >"$T/all.evt"
	[ "$(stat_of "$T/all.evt" stack_records)" -eq "$want" ]
	[ "$(stat_of "$T/all.evt" stacks_joined)" -eq "$want" ]
	# the events were there: no record is an orphan
	run grep -c '^#skipped	what=stack' "$T/all.evt"
	[ "$output" = 0 ]
}

@test "decodegaps: image loads and thread starts carry the stack of the thread that logged them" {
	require_corpus
	etl2evt -k ImageLoad,ThreadStart "$CORPUS/$NET" >"$T/out.evt"
	# every ImageLoad (Process group type 10 on this Windows 8 trace) and ThreadStart the census counts
	loads=$(census_count perfview-net.4.5.2.x64.txt '/SYSTEM64 +Process g=0x03 t=0x0a\(10\)/')
	starts=$(census_count perfview-net.4.5.2.x64.txt '/SYSTEM64 +Thread g=0x05 t=0x01\(1\)/')
	[ "$loads" -eq 35 ] && [ "$starts" -eq 9 ]
	run awk -F'\t' '!/^#/ && $NF != "" { n[$2]++ } END { print n["ImageLoad"] + 0, n["ThreadStart"] + 0 }' "$T/out.evt"
	[ "$output" = "$loads $starts" ]
	# Test.x64.exe's first thread is created by cmd.exe (pid 3508): its stack is cmd.exe's
	# CreateProcess, named in cmd.exe's modules, although the line is the new process's
	run awk -F'\t' '$2 == "ThreadStart" && $5 == 3676 && $6 == 3680 { print $NF }' "$T/out.evt"
	[[ "$output" == *"cmd.exe!"* ]]
	[[ "$output" == *"KernelBase.dll!"* ]]
}

@test "decodegaps: stacks of events a filter drops are counted as not selected, and all add up" {
	require_corpus
	want=$(census_count perfview-net.4.5.2.x64.txt '/StackWalk g=0x18 t=0x(20|25|26)/')
	for f in "-k Sample" "-k ImageLoad,ThreadStart" "-p Test.x64.exe" "-s 1000 -e 3000"; do
		# shellcheck disable=SC2086
		etl2evt $f "$CORPUS/$NET" >"$T/f.evt"
		[ "$(accounted "$T/f.evt")" -eq "$want" ] || fail "$f: $(accounted "$T/f.evt") of $want stack records accounted for"
		run grep -c '^#skipped	what=stack	.*not in the trace' "$T/f.evt"
		[ "$output" = 0 ] || fail "$f: stacks of filtered events called missing"
		grep -q '^#removed	by=etl2evt	reason=not-selected	stacks=[1-9]' "$T/f.evt"
	done
	# and the filter takes nothing from the lines it keeps: -k Sample gives the unfiltered
	# run's Sample lines, stacks and all
	etl2evt -k Sample "$CORPUS/$NET" >"$T/s.evt"
	etl2evt "$CORPUS/$NET" >"$T/all.evt"
	run textdiff <(grep -v '^#' "$T/s.evt") <(awk -F'\t' '!/^#/ && $2 == "Sample"' "$T/all.evt")
	[ "$status" -eq 0 ]
}

@test "decodegaps: the idle threads of two CPUs sampled in the same tick each get their own stack" {
	require_corpus
	# ctf-net45-win7: Windows 7 Stack records; thread 0 runs on every CPU
	etl2evt -k Sample "$CORPUS/perfview/ctf-net45-win7.etl.zip" >"$T/out.evt"
	want=$(census_count perfview-ctf-net45-win7.txt '/StackWalk g=0x18 t=0x20/')
	[ "$(stat_of "$T/out.evt" stack_records)" -eq "$want" ]
	run grep -c '^#skipped	what=stack' "$T/out.evt"
	[ "$output" = 0 ]
}

# baseline_fields DUMP PROVIDER: the events PerfView decoded, "NAME<TAB>field=value..." in time order
baseline_fields() {
	python3 - "$1" "$2" <<'PY'
import re, sys
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r"EVENT [\d,.]+: " + re.escape(sys.argv[2]) + r"/(\S+) (.*)", line)
    if not m:
        continue
    fields = [kv.split("=", 1) for kv in m.group(2).split("; ") if "=" in kv]
    skip = {"PID", "TID", "PName", "ProceNum", "DataLen"}
    print(m.group(1) + "\t" + "\t".join(k + "=" + v for k, v in fields if k not in skip))
PY
}

# same_fields DUMP PROVIDER EVT MIN: every field PerfView's dump and EVT both name has the same
# value, event by event (numbers without PerfView's digit groups), and at least MIN were compared
same_fields() {
	baseline_fields "$1" "$2" >"$T/base.tsv"
	awk -F'\t' '!/^#/ { ev = ""; s = ""; for (i = 8; i < NF; i++) { if ($i ~ /^event=/) ev = substr($i, 7);
	    else if ($i ~ /^p\./) s = s "\t" substr($i, 3) } if (ev != "") print ev s }' "$3" >"$T/ours.tsv"
	run python3 - "$T/base.tsv" "$T/ours.tsv" <<'PY'
import sys
def load(p):
    out = {}
    for line in open(p, encoding="utf-8"):
        parts = line.rstrip("\n").split("\t")
        out.setdefault(parts[0], []).append(dict(kv.split("=", 1) for kv in parts[1:] if "=" in kv))
    return out
def norm(v):
    v = v.replace(", ", "|").replace(",", "")   # flags as TraceEvent joins them; digit groups
    if v in ("True", "False"):
        v = v.lower()                           # .NET's booleans; evt writes true/false
    try:
        return int(v, 16) if v.lower().startswith("0x") else int(v)
    except ValueError:
        return v
base, ours = load(sys.argv[1]), load(sys.argv[2])
compared = bad = 0
for name, events in base.items():
    mine = ours.get(name)
    if mine is None:
        continue
    for b, o in zip(events, mine):
        for k, v in b.items():
            if k in o and not v.endswith("..."):
                compared += 1
                if norm(v) != norm(o[k]):
                    bad += 1
                    print("%s %s: PerfView %s, etl2evt %s" % (name, k, v, o[k]))
print("compared", compared, "differ", bad)
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "${lines[-1]}" =~ ^compared\ ([0-9]+)\ differ\ 0$ ]]
	[ "${BASH_REMATCH[1]}" -ge "$4" ]
}


@test "decodegaps: gcevents' GC events are named, with the fields and values PerfView shows" {
	require_corpus
	etl2evt "$CORPUS/perfview/gcevents.etl.zip" >"$T/out.evt"
	B="$CORPUS/perfview/gcevents.baseline.txt"
	# as many of each event as PerfView counts (its COUNT lines)
	for e in GC/Start GC/Stop GC/HeapStats GC/AllocationTick GC/CreateSegment GC/FinalizeObject \
	    GC/FinalizersStart GC/FinalizersStop GC/MarkWithType GC/PinObjectAtGCTime GC/RestartEEStart \
	    GC/RestartEEStop GC/SuspendEEStart GC/SuspendEEStop GC/Triggered Runtime/Start; do
		want=$(sed -n "s|^COUNT Microsoft-Windows-DotNETRuntime/$e:||p" "$B")
		got=$(grep -c "	event=$e	" "$T/out.evt" || true)
		[ "$got" = "$want" ] || fail "$e: $got lines, PerfView counts $want"
	done
	same_fields "$B" Microsoft-Windows-DotNETRuntime "$T/out.evt" 150
}

@test "decodegaps: GC Start's Depth and Reason stay within the runtime's documented enums" {
	require_corpus
	etl2evt "$CORPUS/perfview/gcevents.etl.zip" >"$T/out.evt"
	# GCReason's names (ClrEtwAll.man's GCReason map) and generations 0..2
	run awk -F'\t' '/\tevent=GC\/Start\t/ { d = r = ""; for (i = 8; i < NF; i++) { if ($i ~ /^p\.Depth=/) d = substr($i, 9);
	    if ($i ~ /^p\.Reason=/) r = substr($i, 10) }
	    if (d !~ /^[012]$/ || r !~ /^(AllocSmall|Induced|LowMemory|Empty|AllocLarge|OutOfSpaceSOH|OutOfSpaceLOH|InducedNotForced|Internal|InducedLowMemory|InducedCompacting|LowMemoryHost|PMFullGC|LowMemoryHostBlocking)$/) bad++; n++ }
	    END { print n + 0, bad + 0 }' "$T/out.evt"
	[ "$output" = "2 0" ]
	# nothing of the DotNETRuntime provider is left in hex on this trace but the events
	# the built-in table does not describe (GC history and fit-bucket diagnostics)
	run awk -F'\t' '/provider=Microsoft-Windows-DotNETRuntime\t/ && /\thex=/ { for (i = 8; i < NF; i++) if ($i ~ /^id=/) print substr($i, 4) }' "$T/out.evt"
	[ "$(printf '%s\n' "${lines[@]}" | sort -un | tr '\n' ' ')" = "204 205 208 209 " ]
}

@test "decodegaps: a Kernel-Process start is the new process's event, logged by its parent" {
	require_corpus
	etl2evt "$CORPUS/$NET" >"$T/out.evt"
	# the payload's ProcessID is the pid column, the header's (the parent) is logged_by_pid
	run awk -F'\t' '/provider=Microsoft-Windows-Kernel-Process\t/ && /event=ProcessStart/ {
	    for (i = 8; i < NF; i++) { if ($i ~ /^p\.ProcessID=/) p = substr($i, 13); if ($i ~ /^p\.ParentProcessID=/) pp = substr($i, 19);
	    if ($i ~ /^logged_by_pid=/) lb = substr($i, 15) } print $5, p, lb, pp }' "$T/out.evt"
	[ "$output" = "3676 3676 3508 3508" ]
}

@test "decodegaps: gcrundownevents' rundown events are named, with the fields PerfView shows" {
	require_corpus
	etl2evt "$CORPUS/perfview/gcrundownevents.etl.zip" >"$T/out.evt"
	B="$CORPUS/perfview/gcrundownevents.baseline.txt"
	for e in Runtime/Start Method/DCStopInit Method/DCStopComplete Loader/AppDomainDCStop \
	    Loader/AssemblyDCStop Loader/DomainModuleDCStop Loader/ModuleDCStop GC/SettingsRundown; do
		want=$(sed -n "s|^COUNT Microsoft-Windows-DotNETRuntimeRundown/$e:||p" "$B")
		got=$(grep -c "	event=$e	" "$T/out.evt" || true)
		[ "$got" = "$want" ] || fail "$e: $got lines, PerfView counts $want"
	done
	same_fields "$B" Microsoft-Windows-DotNETRuntimeRundown "$T/out.evt" 100
}

# count_events EVT PROVIDER_ATTR EVENT: lines of that provider (as etl2evt names it) and event
count_events() {
	awk -F'\t' -v p="provider=$2" -v e="event=$3" '{ hp = he = 0; for (i = 8; i < NF; i++) { if ($i == p) hp = 1; if ($i == e) he = 1 } if (hp && he) n++ } END { print n + 0 }' "$1"
}

@test "decodegaps: net.4.5.2.x64's EventSources are decoded from the manifests the trace carries" {
	require_corpus
	etl2evt "$CORPUS/$NET" >"$T/out.evt"
	B="$CORPUS/perfview/net.4.5.2.x64.baseline.txt"
	# each event PerfView names for the three EventSources, as many times as its COUNT lines say
	# (PerfView calls PerfViewLogger's provider "PerfView", the name in its manifest)
	n=0
	while IFS=: read -r name count; do
		prov=${name%%/*} ev=${name#*/}
		[ "$ev" = ManifestData ] && continue
		ours=$prov
		[ "$prov" = PerfView ] && ours=PerfViewLogger
		got=$(count_events "$T/out.evt" "$ours" "$ev")
		[ "$got" = "$count" ] || fail "$name: $got lines, PerfView counts $count"
		n=$((n + count))
	done < <(sed -n 's/^COUNT \(PerfView\/.*\|System.Threading.Tasks.TplEventSource\/.*\|System.Diagnostics.Eventing.FrameworkEventSource\/.*\)/\1/p' "$B")
	# all 106 of PerfViewLogger's events but its 2 ManifestData, TPL's 8 - 1 and FrameworkEventSource's 6 - 1
	[ "$n" -eq $((106 + 7 + 5)) ] || fail "$n events named"
	# the census counts the same events by provider GUID
	[ "$(census_count perfview-net.4.5.2.x64.txt '/EVENT_HEADER32 PerfViewLogger$/')" -eq 108 ]
	[ "$(census_count perfview-net.4.5.2.x64.txt '/2e5dba47-a3d2-4d16-8ee0-6671ffdcd7b5$/')" -eq 8 ]
	[ "$(census_count perfview-net.4.5.2.x64.txt '/8e9f5090-2d75-4d03-8a81-e5afbf85daf1$/')" -eq 6 ]
	# nothing of theirs is left in hex but the manifests themselves
	run awk -F'\t' '/guid=(a8a71ac1-040f-54a2-07ca-00a89b5ab761|2e5dba47-a3d2-4d16-8ee0-6671ffdcd7b5|8e9f5090-2d75-4d03-8a81-e5afbf85daf1)\t/ && /\thex=/ && !/\tid=65534\t/' "$T/out.evt"
	[ -z "$output" ]
	# the fields, value for value, where PerfView's dump shows them whole
	same_fields "$B" PerfView "$T/out.evt" 30
	same_fields "$B" System.Threading.Tasks.TplEventSource "$T/out.evt" 20
	same_fields "$B" System.Diagnostics.Eventing.FrameworkEventSource "$T/out.evt" 5
}

@test "decodegaps: the built-in schemas decode as the schemas net.4.5.2.x64 embeds for the same events" {
	require_corpus
	unzip_member "$CORPUS/$NET" net.4.5.2.x64.etl "$T/net.etl"
	tdhdump -B "$T/net.etl" >"$T/builtin.tdh"	# the built-in schemas alone
	tdhdump "$T/net.etl" >"$T/embedded.tdh"		# the trace's own (PerfView's merge)
	run python3 - "$T/builtin.tdh" "$T/embedded.tdh" <<'PY'
import collections, sys
def load(p):
    d = collections.defaultdict(list)
    for line in open(p, encoding="utf-8", errors="replace"):
        t, prov, name, rest = (line.rstrip("\n").split("\t") + [""] * 4)[:4]
        if rest.startswith("#undecoded"):
            continue
        d[(t, prov)].append(dict(kv.split("=", 1) for kv in rest.split("; ") if "=" in kv))
    return d
def norm(v):
    v = v.replace(", ", "|")
    try:
        return int(v, 16) if v.lower().startswith("0x") else int(v)
    except ValueError:
        return v
# where the two differ by design: the manifest declares ClrStackWalk's Stack with count="2"
# (TraceEvent reads FrameCount frames, as the table does); StartupFlags stay a number and
# a flags field with no flag reads None, as PerfView prints them
allowed = {"Stack", "StartupFlags"}
builtin, embedded = load(sys.argv[1]), load(sys.argv[2])
per = collections.Counter()
bad = 0
for key, b in builtin.items():
    e = embedded.get(key)
    if not e or len(b) != 1 or len(e) != 1:	# only events alone at their time: unambiguous
        continue
    for k, v in b[0].items():
        if k in allowed or k not in e[0] or (v == "None" and e[0][k] == "0"):
            continue
        per[key[1]] += 1
        if norm(v) != norm(e[0][k]):
            bad += 1
            print("%s %s %s: built in %s, embedded %s" % (key[0], key[1], k, v, e[0][k]))
for p, n in sorted(per.items()):
    print(p, n)
print("differ", bad)
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "differ 0" ]
	# the trace's 562 Kernel-File creates (7 fields each), both Kernel-Process events, the CLR's
	[[ "$output" == *"Microsoft-Windows-Kernel-File $((562 * 7))"* ]]
	[[ "$output" =~ Microsoft-Windows-Kernel-Process\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 20 ]
	[[ "$output" =~ Microsoft-Windows-DotNETRuntime\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 100000 ]
	[[ "$output" =~ Microsoft-Windows-DotNETRuntimeRundown\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 100000 ]
}

#!/usr/bin/env bats
# etl2evt's reorder window when it runs deep: lines wait for user stacks
# that come 0.9 ms after their samples (under the 1 ms past which pass 1
# keeps late records and pass 2 attaches them at once), hundreds at a
# time, so that the rings holding the waiting lines' texts and frames
# grow, wrap and move their contents while lines wait in them
# (lib/etl/convert_line.c).  The scenario (written below) samples 8 CPUs
# every 0.01 ms for 30 ms: 24,000 samples, 8 x 100 x 0.9 = 720 of them
# waiting at any time, with stacks of 1 to 304 frames (past the 256 that
# a kept stack text holds), lines of two lengths (a process named by 184
# bytes), and context switches whose thread-time lines wait with them.
load helpers

local_setup() {
	python3 - "$T/w.yaml" <<-'EOF'
	import sys
	longname = "x" * 180 + ".exe"
	depths = [3, 40, 120, 300]
	tids = [5104, 5108, 5112, 5116, 5120, 5124]
	L = ["""machine:
	  cpus: 8
	  duration_ms: 30
	  start_utc: 2021-03-02T01:00:00Z
	  sample_interval_ms: 0.01
	  buffer_size: 65536
	  seed: 5
	processes:
	  - name: System
	    pid: 4
	    images:
	      - {path: '\\SystemRoot\\system32\\ntoskrnl.exe', base: 0xfffff80002a00000, size: 0x5e0000}
	  - name: app.exe
	    pid: 5100
	    parent: 640
	    images:
	      - {path: '\\Device\\HarddiskVolume2\\App\\app.exe', base: 0x7ff6a0000000, size: 0x40000}
	      - {path: '\\Device\\HarddiskVolume2\\Windows\\System32\\ntdll.dll', base: 0x7ffb6e2a0000, size: 0x1f0000}
	    threads:"""]
	L += ["      - {tid: %d, start_addr: app.exe+0x1100, prio: 8}" % t for t in tids]
	L.append("""  - name: %s
	    pid: 6100
	    parent: 640
	    images:
	      - {path: '\\Device\\HarddiskVolume2\\App\\%s', base: 0x7ff7a0000000, size: 0x40000}
	      - {path: '\\Device\\HarddiskVolume2\\Windows\\System32\\ntdll.dll', base: 0x7ffb6e2a0000, size: 0x1f0000}
	    threads:
	      - {tid: 6104, start_addr: %s+0x1100, prio: 8}
	      - {tid: 6108, start_addr: %s+0x1100, prio: 8}""" % (longname, longname, longname, longname))
	L += ["routines:", "  RtlUserThreadStart: ntdll.dll+0x7034b", "  NtDelayExecution: ntdll.dll+0x9e0ba",
	    "  KiSystemServiceCopyEnd: ntoskrnl.exe+0x1f0c0", "  KeDelayExecutionThread: ntoskrnl.exe+0x2a000",
	    "  KiIdleLoop: ntoskrnl.exe+0x1f000"]
	for i in range(300):
	    L.append("  F%03d: app.exe+0x%x" % (i, 0x2000 + 16 * i))
	    L.append("  G%03d: %s+0x%x" % (i, longname, 0x2000 + 16 * i))
	L += ["stacks:", "  idle: [KiIdleLoop]"]
	for d in depths:
	    for p in "FG":
	        fr = ["RtlUserThreadStart"] + ["%s%03d" % (p, i) for i in range(d)] + \
	            ["NtDelayExecution", "KiSystemServiceCopyEnd", "KeDelayExecutionThread"]
	        L.append("  %s%d: [%s]" % (p, d, ", ".join(fr)))
	L.append("""generate:
	  - kind: CSwitch
	    cpus: all
	    threads: [5104, 5108, 5112, 5116, 5120, 5124, 6104, 6108]
	    quantum_ms: {mean: 3, jitter: 1.5}
	    idle_ms: {mean: 0.5, jitter: 0.2}
	    ready: yes
	    stack: F3
	  - kind: Sample
	    running: yes
	    stacks:
	      - {tid: 0, stack: idle}""")
	L += ["      - {tid: %d, stack: F%d}" % (t, depths[i % 4]) for i, t in enumerate(tids)]
	L += ["      - {tid: 6104, stack: G300}", "      - {tid: 6108, stack: G40}"]
	open(sys.argv[1], "w").write("\n".join(L).replace("\n\t", "\n") + "\n")
	EOF
}

# samples_match EXPECT EVT: every sample etlgen wrote (time, CPU, thread)
# comes out once, with the stack etlgen gave it, and no other sample does.
samples_match() {
	python3 - "$1" "$2" <<-'EOF'
	import sys
	def samples(path):
	    out = {}
	    for l in open(path, encoding="utf-8"):
	        f = l.rstrip("\n").split("\t")
	        if len(f) > 7 and f[1] == "Sample":
	            key = (f[0], f[2], f[5])
	            if key in out:
	                sys.exit("twice: %s" % (key,))
	            out[key] = f[-1]
	    return out
	exp, got = samples(sys.argv[1]), samples(sys.argv[2])
	if len(exp) != 24000:
	    sys.exit("etlgen wrote %d samples, not 8 x 3000" % len(exp))
	bad = [k for k in exp if got.get(k) != exp[k]]
	if bad or len(got) != len(exp):
	    k = bad[0] if bad else None
	    sys.exit("%d of %d samples differ, %d extra; first %s: want %.120s got %.120s" % (len(bad), len(exp),
	        len(set(got) - set(exp)), k, exp.get(k, ""), got.get(k, "")))
	EOF
}

# body EVT: the lines of the trace's first 30 ms, less those the trace's
# end closes (edge=end: a later end with delayed stacks, as it should be)
body() {
	grep -v '^#' "$1" | grep -v $'\tedge=end\t' | awk -F'\t' '$1 < 30'
}

@test "window: samples whose user stacks come 0.9 ms late get exactly their stacks, as when they come at once" {
	etlgen --stacks full -o "$T/full.etl" "$T/w.yaml" 2>/dev/null
	etl2evt "$T/full.etl" >"$T/full.evt" 2>/dev/null
	for v in "--stacks split --user-delay 0.9" "--stacks keys --user-delay 0.9" \
	    "--stacks split --user-delay 0.9 --pointer-size 4"; do
		etlgen $v -o "$T/w.etl" --expect "$T/w.expect" "$T/w.yaml" 2>/dev/null
		etl2evt "$T/w.etl" >"$T/w.evt" 2>/dev/null
		evtcheck "$T/w.evt"
		samples_match "$T/w.expect" "$T/w.evt" || fail "variant $v"
		! grep -q '^#skipped' "$T/w.evt" || fail "$v: $(grep '^#skipped' "$T/w.evt")"
		# every stack record joined its line (2 per sample, 1 per switch-in)
		grep -qE $'^#stats\tevents=[0-9]+\tstack_records=([0-9]+)\tstacks_joined=\\1$' "$T/w.evt" ||
		    fail "$v: $(grep '^#stats' "$T/w.evt")"
		[ "$v" = "--stacks split --user-delay 0.9 --pointer-size 4" ] && continue
		# the whole stream, thread-time lines too, is the one a shallow window gives
		body "$T/full.evt" >"$T/a"
		body "$T/w.evt" >"$T/b"
		[ "$(wc -l <"$T/a")" -gt 24000 ] || fail "only $(wc -l <"$T/a") lines"
		textdiff "$T/a" "$T/b" >/dev/null || fail "$v: $(textdiff "$T/a" "$T/b" | head -3 | cut -c1-300)"
	done
}

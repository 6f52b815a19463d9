#!/usr/bin/env bats
# .NET (issue 17): CLR stack walks joined to their events, allocation
# stacks weighted in bytes, exception stacks.  The expected figures come
# from sources independent of etl2evt's CLR code (lib/etl/convert_clr.c):
# tdhdump (lib/tdh alone, decoding the raw records with the schemas the
# trace embeds, or with -B the built-in ones), PerfView's own dump of
# gcevents (corpus perfview/gcevents.baseline.txt) and short awks.
load helpers

NET=perfview/net.4.5.2.x64.etl.zip

# unzipped TRACE: the .etl inside a corpus zip, for tdhdump (which reads .etl files only)
unzipped() {
	python3 -m zipfile -e "$CORPUS/$1" "$T/unz" >/dev/null
	find "$T/unz" -name '*.etl' | head -1
}

# frames_of EVT KIND: per line of KIND with clrstack=1, its stack's frame count (leaf pseudo-frames too)
frames_of() {
	awk -F'\t' -v k="$2" '$2 == k && /\tclrstack=1\t/ { print split($NF, a, ";") }' "$1"
}

@test "dotnet: every CLR stack walk of net.4.5.2.x64 joins its event, with all its frames" {
	require_corpus
	etl2evt "$CORPUS/$NET" >"$T/out.evt"
	tdhdump "$(unzipped "$NET")" >"$T/raw"
	walks=$(awk -F'\t' '$3 == "CLRStack/CLRStackWalk"' "$T/raw" | wc -l)
	[ "$walks" -eq 14983 ]		# the issue's census figure
	grep -qx "#clrstacks	walks=$walks	joined=$walks" "$T/out.evt"
	run grep -c '^#skipped	what=clrstack' "$T/out.evt"
	[ "$output" = 0 ]
	# no walk is left as a line of its own
	run grep -c '	id=82	' "$T/out.evt"
	[ "$output" = 0 ]
	# the frame counts the raw records carry (FrameCount, not the schema's 2) are the
	# stacks' depths: allocation and exception stacks have one pseudo-frame more
	sed -n 's/.*CLRStack\/CLRStackWalk\t.*FrameCount=\([0-9]*\);.*/\1/p' "$T/raw" | sort -n >"$T/want"
	{ awk -F'\t' '$2 == "Event" && /\tclrstack=1\t/ { print split($NF, a, ";") }' "$T/out.evt"
	  awk -F'\t' '($2 == "GCAllocationTick" || $2 == "Exception") && /\tclrstack=1\t/ { print split($NF, a, ";") - 1 }' "$T/out.evt"
	} | sort -n >"$T/got"
	textdiff "$T/want" "$T/got"
	[ "$(awk '{ s += $1 } END { print s }' "$T/got")" -gt 14983 ]
}

@test "dotnet: CLR stack frames are named as sample frames are: JIT methods by name" {
	require_corpus
	etl2evt "$CORPUS/$NET" >"$T/out.evt"
	# Test.x64.exe's JIT method Main (a MethodLoad line) calls everything the program does:
	# it is on every allocation stack of that process, named, and hardly a frame is in no image
	grep -q '	MethodLoad	.*	method=Test.Program.Main	' "$T/out.evt"
	run awk -F'\t' '$2 == "GCAllocationTick" && /\tclrstack=1\t/ && $4 == "Test.x64.exe" { n++; if ($NF !~ /(^|;)Test\.x64\.exe!Test\.Program\.Main(;|$)/) bad++ }
	    END { print n + 0, bad + 0 }' "$T/out.evt"
	[ "${output% *}" -gt 10000 ]
	[ "${output#* }" = 0 ]
	run awk -F'\t' '/\tclrstack=1\t/ { n = split($NF, f, ";"); for (i = 1; i <= n; i++) { total++; if (f[i] == "?!?") unknown++ } }
	    END { print (unknown * 100 < total) ? "ok" : unknown " of " total " in no image" }' "$T/out.evt"
	[ "$output" = ok ]
}

@test "dotnet: allocation weights are the AllocationTick payloads' bytes, and the leaf is the type" {
	require_corpus
	etl2evt "$CORPUS/$NET" >"$T/out.evt"
	tdhdump "$(unzipped "$NET")" >"$T/raw"
	# bytes from the raw records (AllocationAmount64, hex), and their types, in time order
	awk -F'\t' 'function hex(s,  v, i) { v = 0; s = tolower(substr(s, 3))
	        for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
	    $3 == "GarbageCollection/GCAllocationTick" { split($4, f, "; ");
	    for (i in f) { if (f[i] ~ /^AllocationAmount64=/) a = substr(f[i], 20); if (f[i] ~ /^TypeName=/) t = substr(f[i], 10) }
	    printf "%s\t%d\tType %s\n", $1, hex(a), t }' "$T/raw" | sort -t'	' -k1,1n -s | cut -f2,3 >"$T/want"
	[ "$(wc -l <"$T/want")" -eq 10382 ]
	awk -F'\t' '$2 == "GCAllocationTick" { n = split($NF, f, ";"); print $7 "\t" f[n] }' "$T/out.evt" >"$T/got"
	textdiff "$T/want" "$T/got"
	want_sum=$(awk -F'\t' '{ s += $1 } END { printf "%d", s }' "$T/want")
	[ "$want_sum" -gt 1000000000 ]
}

@test "dotnet: gcevents' allocation weights are the amounts PerfView printed" {
	require_corpus
	etl2evt "$CORPUS/perfview/gcevents.etl.zip" >"$T/out.evt"
	B="$CORPUS/perfview/gcevents.baseline.txt"
	# PerfView's lines: "EVENT 8,215.606: .../GC/AllocationTick ... AllocationAmount64=109,120; ... TypeName=System.String;"
	sed -n 's/^EVENT \([0-9,.]*\): Microsoft-Windows-DotNETRuntime\/GC\/AllocationTick .*AllocationAmount64=\([0-9,]*\);.*/\1 \2/p' "$B" |
	    tr -d , >"$T/want"
	[ "$(wc -l <"$T/want")" -ge 5 ]
	while read -r t bytes; do
		got=$(awk -F'\t' -v t="$t" '$2 == "GCAllocationTick" && sprintf("%.3f", $1) == t { print $7 }' "$T/out.evt")
		[ "$got" = "$bytes" ] || fail "tick at $t ms: weight '$got', PerfView says $bytes"
	done <"$T/want"
	want=$(sed -n 's|^COUNT Microsoft-Windows-DotNETRuntime/GC/AllocationTick:||p' "$B")
	[ "$(awk -F'\t' '$2 == "GCAllocationTick"' "$T/out.evt" | wc -l)" = "$want" ]
}

@test "dotnet: allocation bytes are conserved through stackfold, render and diff, in bytes" {
	require_corpus
	etl2evt "$CORPUS/$NET" >"$T/out.evt"
	total=$(awk -F'\t' '$2 == "GCAllocationTick" { s += $7 } END { printf "%d", s }' "$T/out.evt")
	[ "$total" -gt 0 ]
	stackfold --kind=GCAllocationTick "$T/out.evt" >"$T/f" 2>"$T/err"
	[ "$(awk '{ s += $NF } END { printf "%d", s }' "$T/f")" = "$total" ]
	# every folded stack ends with its type
	run awk '{ n = split($0, f, ";"); if (f[n] !~ /^Type /) bad++ } END { print bad + 0 }' "$T/f"
	[ "$output" = 0 ]
	stackfold --by-name --kind=GCAllocationTick "$T/out.evt" >"$T/byname"
	grep -q "^# ByName, metric in bytes; total $total," "$T/byname"
	render flame --kind=GCAllocationTick "$T/out.evt" >"$T/a.svg"
	grep -q "<g id=\"frames\" .* total=\"$total\" factor=\"1\" cname=\"bytes\"" "$T/a.svg"
	# diff and overweight: a trace against itself has the same bytes on both sides
	diff --kind=GCAllocationTick "$T/out.evt" "$T/out.evt" >"$T/d"
	[ "$(awk '{ a += $(NF - 1); b += $NF } END { printf "%d %d", a, b }' "$T/d")" = "$total $total" ]
	overweight --kind=GCAllocationTick "$T/out.evt" "$T/out.evt" >"$T/o"
	grep -q "^Base (old) .*: $total bytes$" "$T/o"
}

@test "dotnet: the exception of net.4.5.2.x64 is an Exception stack ending in its type and message" {
	require_corpus
	etl2evt "$CORPUS/$NET" >"$T/out.evt"
	tdhdump "$(unzipped "$NET")" >"$T/raw"
	want=$(awk -F'\t' '$3 == "Exception/Start" { split($4, f, "; ");
	    for (i in f) { if (f[i] ~ /^ExceptionType=/) t = substr(f[i], 15); if (f[i] ~ /^ExceptionMessage=/) m = substr(f[i], 18) }
	    print "Exception " t ": " m }' "$T/raw")
	[ -n "$want" ]
	run awk -F'\t' '$2 == "Exception" { n = split($NF, f, ";"); print $7 "\t" f[n] }' "$T/out.evt"
	[ "${#lines[@]}" -eq 1 ]
	[ "${lines[0]}" = "1	$want" ]
	# and its stack is the CLR's walk: frames above the pseudo-frame
	[ "$(frames_of "$T/out.evt" Exception)" -gt 2 ]
}

@test "dotnet: walks of events a filter drops are counted as not selected" {
	require_corpus
	etl2evt -k Sample "$CORPUS/$NET" >"$T/out.evt"
	grep -q '^#removed	by=etl2evt	reason=not-selected	clrstacks=14983	' "$T/out.evt"
	grep -qx '#clrstacks	walks=14983	joined=0' "$T/out.evt"
	# only the allocations: each tick keeps its walk
	etl2evt -k GCAllocationTick "$CORPUS/$NET" >"$T/a.evt"
	ticks=$(awk -F'\t' '$2 == "GCAllocationTick"' "$T/a.evt" | wc -l)
	joined=$(sed -n 's/^#clrstacks\twalks=14983\tjoined=\([0-9]*\)$/\1/p' "$T/a.evt")
	[ "$joined" -eq "$(grep -c '	clrstack=1	' "$T/a.evt")" ]
	[ "$joined" -gt 10000 ] && [ "$joined" -le "$ticks" ]
}

@test "dotnet: the Windows 7 trace's CLR walks all join too" {
	require_corpus
	etl2evt "$CORPUS/perfview/ctf-net45-win7.etl.zip" >"$T/out.evt"
	tdhdump "$(unzipped perfview/ctf-net45-win7.etl.zip)" >"$T/raw"
	walks=$(awk -F'\t' '$3 ~ /StackWalk$|^ClrStack\/Walk$/' "$T/raw" | wc -l)
	[ "$walks" -gt 50000 ]
	grep -qx "#clrstacks	walks=$walks	joined=$walks" "$T/out.evt"
}

# gcrow TSV PID GC: the per-GC row of gcstats --tsv for that process and GC number, '|'-separated
gcrow() {
	awk -F'\t' -v OFS='|' -v pid="$2" -v gc="$3" '/^#GCStats: per GC/ { on = 1; next } on && $1 == pid && $3 == gc { $1 = $1; print }' "$1"
}

@test "dotnet: gcstats gives each gcevents GC the generation, reason, pause and heap PerfView printed" {
	require_corpus
	etl2evt "$CORPUS/perfview/gcevents.etl.zip" | render gcstats --tsv >"$T/gc.tsv"
	B="$CORPUS/perfview/gcevents.baseline.txt"
	# from PerfView's dump: per GC its Depth and Reason, its pause (SuspendEEStart before
	# it to RestartEEStop after it, PerfView's rule) and TotalHeapSize/TotalPromoted
	awk '{ t = $2; sub(/:$/, "", t); gsub(/,/, "", t) }
	    /\/GC\/SuspendEEStart / { susp = t }
	    /\/GC\/SuspendEEStop / { suspended = t - susp }
	    /\/GC\/Start / { match($0, /Count=[0-9]+/); n = substr($0, RSTART + 6, RLENGTH - 6)
	        match($0, /Depth=[0-9]+/); d[n] = substr($0, RSTART + 6, RLENGTH - 6)
	        match($0, /Reason=[A-Za-z]+/); r[n] = substr($0, RSTART + 7, RLENGTH - 7); s[n] = susp; sd[n] = suspended; cur = n; order[++k] = n }
	    /\/GC\/HeapStats / { match($0, /TotalHeapSize=[0-9,]+/); h = substr($0, RSTART + 14, RLENGTH - 14); gsub(/,/, "", h); heap[cur] = h
	        match($0, /TotalPromoted=[0-9,]+/); p = substr($0, RSTART + 14, RLENGTH - 14); gsub(/,/, "", p); prom[cur] = p }
	    /\/GC\/RestartEEStop / { pause[cur] = t - s[cur] }
	    END { for (i = 1; i <= k; i++) { n = order[i]; printf "%s %s %s %.3f %.3f %.3f %.3f\n", n, d[n], r[n], pause[n], heap[n] / 1e6, prom[n] / 1e6, sd[n] } }' "$B" >"$T/want"
	[ "$(wc -l <"$T/want")" -eq 2 ]
	while read -r n gen reason pause heap prom susp; do
		row=$(gcrow "$T/gc.tsv" 179596 "$n")
		[ -n "$row" ] || fail "GC $n: no row"
		IFS='|' read -r _ _ _ _ g r _ p sp _ _ _ h pr <<<"$row"
		[ "$g" = "$gen" ] && [ "$r" = "$reason" ] || fail "GC $n: gen $g reason $r, PerfView: $gen $reason"
		# PerfView prints times to the microsecond: the pauses agree to 2 us
		awk -v a="$p" -v b="$pause" 'BEGIN { d = a - b; exit !(d < 0.002 && d > -0.002) }' ||
		    fail "GC $n: pause $p ms, PerfView's events say $pause"
		[ "$h" = "$heap" ] && [ "$pr" = "$prom" ] || fail "GC $n: heap $h promoted $pr, PerfView: $heap $prom"
		awk -v a="$sp" -v b="$susp" 'BEGIN { d = a - b; exit !(d < 0.002 && d > -0.002) }' ||
		    fail "GC $n: suspension $sp ms, PerfView's events say $susp"
	done <"$T/want"
}

@test "dotnet: gcstats on net.4.5.2.x64: one row per GC (V1 and V2 starts are one GC), as PerfView counts them" {
	require_corpus
	etl2evt "$CORPUS/$NET" | render gcstats --tsv >"$T/gc.tsv"
	B="$CORPUS/perfview/net.4.5.2.x64.baseline.txt"
	# PerfView counts every GC/Start record; .NET 4.5 logs each GC's start twice (V1, then V2)
	starts=$(sed -n 's|^COUNT Microsoft-Windows-DotNETRuntime/GC/Start:||p' "$B")
	[ "$starts" -eq 528 ]
	rows=$(awk -F'\t' '/^#GCStats: per GC/ { on = 1; next } on && $1 ~ /^[0-9]+$/' "$T/gc.tsv" | wc -l)
	[ "$rows" -eq $((starts / 2)) ]
	# the GCs PerfView printed: their start time and generation
	sed -n 's/^EVENT \([0-9,.]*\): Microsoft-Windows-DotNETRuntime\/GC\/Start PID=\([0-9]*\);.*DataLen=18; Count=\([0-9]*\); Reason=\([A-Za-z]*\); Depth=\([0-9]\);.*/\1 \2 \3 \4 \5/p' "$B" |
	    tr -d , >"$T/want"
	[ "$(wc -l <"$T/want")" -ge 3 ]
	while read -r t pid n reason gen; do
		IFS='|' read -r _ _ _ start g r _ <<<"$(gcrow "$T/gc.tsv" "$pid" "$n")"
		[ "$start" = "$t" ] && [ "$g" = "$gen" ] && [ "$r" = "$reason" ] ||
		    fail "GC $n of $pid: $start gen $g $r, PerfView: $t gen $gen $reason"
	done <"$T/want"
	# the summary's count, generation split and total pause are the per-GC rows' (the
	# pauses to the rows' rounding)
	awk -F'\t' '/^#GCStats: per process/ { s = 1; next } /^#GCStats: per GC/ { s = 0; g = 1; next }
	    s && $1 == 3676 { sum = $3 " " $4 " " $5 " " $6; sp = $7 }
	    g && $1 == 3676 { n++; gen[$5]++; p += $8 }
	    END { d = sp - p; printf "%s|%d %d %d %d|%s\n", sum, n, gen[0], gen[1], gen[2], (d < 0.0005 * n && d > -0.0005 * n) ? "ok" : sp " vs " p }' "$T/gc.tsv" >"$T/sum"
	IFS='|' read -r a b c <"$T/sum"
	[ "$a" = "$b" ]
	[ "$c" = ok ]
	[ "${a%% *}" -eq 263 ]
}

@test "dotnet: jitstats pairs every JIT start with its method load: sizes from the raw records" {
	require_corpus
	etl2evt "$CORPUS/$NET" | render jitstats --tsv >"$T/jit.tsv"
	tdhdump "$(unzipped "$NET")" >"$T/raw"
	# the raw records, paired by MethodID (TraceEvent's key): IL size at the start, native at the load
	awk -F'\t' 'function f(k,  i, n, a) { n = split($4, a, "; "); for (i = 1; i <= n; i++) if (index(a[i], k "=") == 1) return substr(a[i], length(k) + 2) }
	    function hex(s,  v, i) { if (s !~ /^0x/) return s + 0; v = 0; s = tolower(substr(s, 3))
	        for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
	    $3 == "CLRMethod/MethodJittingStarted" { il[f("MethodID")] = hex(f("MethodILSize")); started++ }
	    $3 == "CLRMethod/MethodLoadVerbose" && (f("MethodID") in il) { n++; IL += il[f("MethodID")]; NAT += hex(f("MethodSize")) }
	    END { print started, n, IL, NAT }' "$T/raw" >"$T/want"
	read -r started n il nat <"$T/want"
	[ "$started" -eq 290 ]
	awk -F'\t' '/^#JITStats: per process/ { on = 1; next } /^#/ { on = 0 } on && $1 ~ /^[0-9]+$/ { s += $3; m += $4; i += $6; x += $7 }
	    END { print s, m, i, x }' "$T/jit.tsv" >"$T/got"
	[ "$(cat "$T/got")" = "$started $n $il $nat" ]
	# per module and per method rows add up to the same
	awk -F'\t' '/^#JITStats: per module/ { on = 1; next } /^#/ { on = 0 } on && $1 ~ /^[0-9]+$/ { m += $4; i += $6; x += $7 } END { print m, i, x }' "$T/jit.tsv" >"$T/mod"
	[ "$(cat "$T/mod")" = "$n $il $nat" ]
	grep -q "	Test.x64.exe	Test.Program.Main$" "$T/jit.tsv"
}

@test "dotnet: jitstats' tiers are the MethodFlags tiers of the .NET Core trace's raw records" {
	require_corpus
	D=perfview/diaghub-dotnetcore3.1-win-x64-diagsession.zip
	etl2evt "$CORPUS/$D" 2>/dev/null | render jitstats --tsv >"$T/jit.tsv" 2>/dev/null
	python3 -m zipfile -e "$CORPUS/$D" "$T/dh" >/dev/null
	for f in "$T"/dh/*/*.etl; do tdhdump "$f"; done >"$T/raw"
	# MethodFlags "Jitted|0x200": the tier is bits 7-9 (TraceEvent's OptimizationTier)
	awk -F'\t' '$3 == "Method/LoadVerbose" && match($4, /MethodFlags=[^;]*Jitted[^;]*/) {
	        fl = substr($4, RSTART, RLENGTH); v = 0; if (match(fl, /0x[0-9a-f]+/)) { h = substr(fl, RSTART + 2, RLENGTH - 2)
	        for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1 }
	        t = int(v / 128) % 8; split("MinOptJitted Optimized QuickJitted OptimizedTier1 OptimizedTier1OSR QuickJittedInstrumented OptimizedTier1Instrumented", name, " ")
	        if (t) c[name[t]]++ }
	    END { for (k in c) print k, c[k] }' "$T/raw" | sort >"$T/want"
	[ -s "$T/want" ]
	awk -F'\t' '/^#JITStats: per method/ { on = 1; next } on && $1 ~ /^[0-9]+$/ && $7 != "" { c[$7]++ } END { for (k in c) print k, c[k] }' "$T/jit.tsv" | sort >"$T/got"
	textdiff "$T/want" "$T/got"
}

# The synthesised trace of tests/tools/clrgen.c: its header comment is the model, and
# every figure below is worked out from it by hand.
@test "dotnet: synthesised CLR trace: walks joined or counted by reason, both pointer sizes" {
	for ps in 8 4; do
		clrgen -o "$T/c$ps.etl" --pointer-size $ps
		run etl2evt "$T/c$ps.etl"
		[ "$status" -eq 1 ]		# walks lost: partial
		printf '%s\n' "${lines[@]}" >"$T/c$ps.evt"
		# 9 walks: 5 of thread 1001 and the truncated one of 1002 join; one has no CLR
		# event before it, one is its event's second, one's event has an ETW stack
		grep -qx '#clrstacks	walks=9	joined=6' "$T/c$ps.evt"
		grep -qx '#skipped	what=clrstack	count=1	detail=CLR stack walks with no CLR event before them on their thread' "$T/c$ps.evt"
		grep -q '^#skipped	what=clrstack	count=1	detail=CLR stack walks whose event had its walk already' "$T/c$ps.evt"
		grep -q '^#skipped	what=clrstack	count=1	detail=CLR stack walks whose FrameCount passes their payload' "$T/c$ps.evt"
		grep -q '^#skipped	what=clrstack	count=1	detail=CLR stack walks of events with an ETW stack-walk record' "$T/c$ps.evt"
		# the frames innermost first 0x10080 (in Main, jitted at 0x10000), 0x20000, 0x30000
		awk -F'\t' '$2 == "GCAllocationTick" || $2 == "Exception" { print $1, $6, $7, $NF }' "$T/c$ps.evt" | cut -c1-107 >"$T/got$ps"
		cat >"$T/want" <<-'W'
		10.000000 1001 100000 ?!?;?!?;app.dll!App.Program.Main;Type System.String
		20.000000 1001 150000 ?!?;?!?;app.dll!App.Program.Main;Type System.Byte[]
		25.000000 1002 200000 ?!?;app.dll!App.Program.Main;Type System.Object
		30.000000 1001 5000000000 ?!?;?!?;app.dll!App.Program.Main;Type App.Big
		30.005000 1002 300000 Type System.Object
		35.000000 1001 400000 app.dll!App.Program.Main;Type System.Kernel
		40.000000 1001 1 ?!?;?!?;app.dll!App.Program.Main;Exception System.InvalidOperationException: bad state%3B 
		W
		textdiff "$T/want" "$T/got$ps"
		# the 300-byte message is cut to 200 bytes: "bad state; " and 189 m's
		run awk -F'\t' '$2 == "Exception" { n = split($NF, f, ";"); m = f[n]; sub(/^Exception System\.InvalidOperationException: /, "", m)
		    gsub(/%3B/, ";", m); print length(m), gsub(/m/, "", m) }' "$T/c$ps.evt"
		[ "$output" = "200 189" ]
	done
}

@test "dotnet: synthesised CLR trace: gcstats and jitstats give the model's figures" {
	clrgen -o "$T/c.etl"
	etl2evt "$T/c.etl" 2>/dev/null >"$T/c.evt" || true
	render gcstats --tsv "$T/c.evt" >"$T/gc.tsv"
	# one gen-1 GC: pause 53.0 - 50.0 = 3 ms; duration 52.0 - 50.5; bytes allocated before
	# it: every tick (100,000 + 150,000 + 200,000 + 5,000,000,000 + 300,000 + 400,000); heap after
	# 1000 + 2000 + 3000 + 4000, promoted 100 + 200 + 300 + 400
	# threads stopped 50.0 -> 50.2
	[ "$(gcrow "$T/gc.tsv" 1000 1)" = "1000|?|1|50.500|1|AllocSmall|NonConcurrentGC|3.000|0.200|1.500|5001.150|"'|0.010|0.001' ]
	# per process: 3 ms paused of the process's 0.5 .. 53.0 ms in the trace = 5.71 %
	run awk -F'\t' '/^#GCStats: per process/ { on = 1; next } on && $1 == 1000 { print $3, $7, $8, $9, $10; exit }' "$T/gc.tsv"
	[ "$output" = "1 3.000 3.000 5.71 5001.150" ]
	run render jitstats --tsv "$T/c.evt"
	[ "$status" -eq 0 ]
	# Main: JIT 1.0 -> 3.5 ms, IL 64, native 256, QuickJitted (MethodFlags 0x188); Never: no load
	printf '%s\n' "${lines[@]}" | grep -qx '1000	?	2	1	2.500	64	256'
	printf '%s\n' "${lines[@]}" | grep -qx '1000	?	app.dll	1	2.500	64	256'
	printf '%s\n' "${lines[@]}" | grep -qx '1000	?	1.000	2.500	64	256	QuickJitted	app.dll	App.Program.Main'
	[[ "$output" == *"1 JIT compilations without their MethodLoad"* ]]
}

@test "dotnet: synthesised CLR trace: allocation bytes through stackfold, diff and aggregate" {
	clrgen -o "$T/c.etl"
	etl2evt "$T/c.etl" 2>/dev/null >"$T/c.evt" || true
	# 100,000 + 150,000 + 200,000 + 5,000,000,000 + 300,000 + 400,000
	stackfold --kind=GCAllocationTick "$T/c.evt" >"$T/f"
	[ "$(awk '{ s += $NF } END { printf "%.0f", s }' "$T/f")" = 5001150000 ]
	# (stackfold merges the two adjacent unknown frames, as PerfView's ?!? do)
	grep -qx '?!?;app.dll!App.Program.Main;Type App.Big 5000000000' "$T/f"
	stackfold --by-name --kind=GCAllocationTick "$T/c.evt" | grep -q '^# ByName, metric in bytes; total 5001150000, 6 events'
	# speedscope's profiles are in bytes
	render speedscope --kind=GCAllocationTick "$T/c.evt" | grep -q '"unit":"bytes"'
	# bytes are no duration: the 5 GB tick at 30 ms is first and last seen at 30 ms
	stackfold --by-name --kind=GCAllocationTick "$T/c.evt" | awk '/ Type App\.Big$/ { print $9, $10 }' | grep -qx '30.000 30.000'
	# aggregate sums the scenarios (the same trace twice), diff puts one on each side
	aggregate --kind=GCAllocationTick "$T/c.evt" "$T/c.evt" >"$T/agg" 2>/dev/null
	[ "$(awk '{ s += $NF } END { printf "%.0f", s }' "$T/agg")" = 10002300000 ]
	diff --kind=GCAllocationTick "$T/c.evt" "$T/c.evt" >"$T/d" 2>/dev/null
	[ "$(awk '{ a += $(NF - 1); b += $NF } END { printf "%.0f %.0f", a, b }' "$T/d")" = "5001150000 5001150000" ]
	# exceptions: one, counted 1 (a count, not a duration)
	stackfold --kind=Exception "$T/c.evt" | awk '{ s += $NF } END { exit s != 1 }'
}

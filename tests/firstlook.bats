#!/usr/bin/env bats
# The first look at a trace (issue 22): render processes, threads, images,
# events and health, and etl2evt's #health line.  Expected figures come
# from the census (tests/corpus/census), from awk over the evt stream, or
# from the scenario's own numbers, never from the code under test.
load helpers

setup_file() {
	[ -n "$CORPUS" ] || return 0
	D="$BATS_FILE_TMPDIR"
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$D/net.evt" 2>/dev/null
	etl2evt "$CORPUS/airbus/AMSITrace.etl" >"$D/amsi.evt" 2>"$D/amsi.err" || true
	python3 -c 'import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); open(sys.argv[2],"wb").write(z.read("diaghub-dotnetcore3.1-win-x64-diagsession/diaghub.user_paged.1.etl"))' \
	    "$CORPUS/perfview/diaghub-dotnetcore3.1-win-x64-diagsession.zip" "$D/user.etl"
	etl2evt "$D/user.etl" >"$D/user.evt" 2>"$D/user.err" || true
	etl2evt "$CORPUS/perfview/diaghub-dotnetcore3.1-win-x64-diagsession.zip" >"$D/merged.evt" 2>"$D/merged.err"
}

local_setup() {
	require_corpus
	D="$BATS_FILE_TMPDIR"
}

# census COUNT of provider NAME (E lines, both header sizes)
census_provider() {
	awk -v n="$2" '$2 == "E" && $4 == n { s += $1 } END { print s + 0 }' "$CENSUS/$1"
}

@test "firstlook: events --by provider counts each provider as the census does (net.4.5.2.x64)" {
	render events --by provider --tsv "$D/net.evt" >"$T/p.tsv"
	head -1 "$T/p.tsv" | grep -qx $'provider\tcount\tfirst_ms\tlast_ms'
	row() { awk -F'\t' -v p="$1" '$1 == p { print $2 }' "$T/p.tsv"; }
	c=perfview-net.4.5.2.x64.txt
	# the CLR's stack walks are no lines: their frames join their events' (#clrstacks counts them)
	walks=$(sed -n 's/^#clrstacks\twalks=\([0-9]*\)\t.*/\1/p' "$D/net.evt")
	[ "$walks" -eq 14983 ]
	[ "$(row Microsoft-Windows-DotNETRuntime)" = "$(( $(census_provider $c DotNETRuntime) - walks ))" ]
	[ "$(row Microsoft-Windows-DotNETRuntimeRundown)" = "$(census_provider $c DotNETRuntimeRundown)" ]
	[ "$(row Microsoft-Windows-DotNETRuntimePrivate)" = "$(census_provider $c DotNETRuntimePrivate)" ]
	[ "$(row Microsoft-Windows-Kernel-File)" = "$(census_provider $c Kernel-File)" ]
	[ "$(row PerfViewLogger)" = "$(census_provider $c PerfViewLogger)" ]
	# the census names the TPL EventSource by its GUID; the trace's own manifest names it
	[ "$(row System.Threading.Tasks.TplEventSource)" = "$(census_provider $c 2e5dba47-a3d2-4d16-8ee0-6671ffdcd7b5)" ]
	# KernelTraceControl's ImageId/DbgId records, every type
	kt=$(awk '$2 == "F" && $4 == "KernelTraceControl(ImageId/DbgId)" { s += $1 } END { print s }' "$CENSUS/$c")
	[ "$(row KernelTraceControl)" = "$kt" ]
	# every event line is in exactly one row
	[ "$(awk -F'\t' 'NR > 1 { s += $2 } END { print s }' "$T/p.tsv")" = "$(grep -vc '^#' "$D/net.evt")" ]
}

@test "firstlook: events by every key: ids, kinds, processes and first/last times agree with awk" {
	render events --tsv "$D/amsi.evt" >"$T/e.tsv"
	[ "$(awk -F'\t' '$1 == "AmsiTrace" { s += $7 } END { print s }' "$T/e.tsv")" = \
	    "$(census_provider airbus-AMSITrace.txt 8e805eb3-6a8f-4a1e-90fa-a831d94e54a1)" ]
	# one row per (provider, id, process): the awk of the stream gives the same rows and counts
	awk -F'\t' '$1 == "AmsiTrace" { print $4 "\t" $6 "\t" $7 }' "$T/e.tsv" | sort >"$T/got"
	awk -F'\t' '$2 == "Event" { for (i = 8; i < NF; i++) if ($i ~ /^id=/) id = substr($i, 4); n[id "\t" $4 " (" $5 ")"]++ }
	    END { for (k in n) print k "\t" n[k] }' "$D/amsi.evt" | sort >"$T/want"
	textdiff "$T/want" "$T/got"
	# first and last times of the busiest process's rows
	awk -F'\t' '$1 == "AmsiTrace" && $6 == "? (31968)" { print $8, $9 }' "$T/e.tsv" >"$T/got"
	awk -F'\t' '$2 == "Event" && $5 == 31968 { if (!f) f = $1; l = $1 } END { print f, l }' "$D/amsi.evt" >"$T/want"
	textdiff "$T/want" "$T/got"
	run render events --by provider,nonsense "$D/amsi.evt"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--by takes"* ]]
}

@test "firstlook: processes: the rundown's and started processes, their CPU and threads, from awk" {
	render processes --tsv "$D/net.evt" >"$T/p.tsv"
	head -1 "$T/p.tsv" | grep -qx $'pid\tparent\tprocess\tstart_ms\tend_ms\tcpu_ms\tthreads\tcommand_line'
	# every process of a start or start rundown is a row with its image name
	awk -F'\t' '$2 == "ProcessDCStart" || $2 == "ProcessStart" { for (i = 8; i < NF; i++) if ($i ~ /^image=/) print $5 "\t" substr($i, 7) }' \
	    "$D/net.evt" | sort -u >"$T/want"
	awk -F'\t' 'NR > 1 && $4 != "?" { print $1 "\t" $3 }' "$T/p.tsv" | sort -u >"$T/got"
	textdiff "$T/want" "$T/got"
	# Test.x64.exe: started and ended inside the trace, 5,129 samples (corpus README), its threads
	line=$(awk -F'\t' '$3 == "Test.x64.exe"' "$T/p.tsv")
	start=$(awk -F'\t' '$2 == "ProcessStart" && $5 == 3676 { print $1 }' "$D/net.evt")
	end=$(awk -F'\t' '$2 == "ProcessEnd" && $5 == 3676 { print $1 }' "$D/net.evt")
	cpu=$(awk -F'\t' '$2 == "Sample" && $5 == 3676 { s += $7 } END { print s }' "$D/net.evt")
	thr=$(awk -F'\t' '$5 == 3676 && $6 >= 0 { t[$6] } END { print length(t) }' "$D/net.evt")
	[ "$cpu" = 5129 ]
	[ "$(cut -f4 <<<"$line")" = "$start" ]
	[ "$(cut -f5 <<<"$line")" = "$end" ]
	[ "$(cut -f6 <<<"$line")" = "$cpu" ]
	[ "$(cut -f7 <<<"$line")" = "$thr" ]
	# a process from the rundown lived before and after the trace
	awk -F'\t' '$3 == "explorer.exe" { print $4 "/" $5 }' "$T/p.tsv" | grep -qx 'before trace/after trace'
	# all sampled CPU is charged to some process
	[ "$(awk -F'\t' 'NR > 1 { s += $6 } END { print s }' "$T/p.tsv")" = \
	    "$(awk -F'\t' '$2 == "Sample" { s += $7 } END { print s }' "$D/net.evt")" ]
	# text: aligned, the header first
	render processes "$D/net.evt" | head -1 | grep -q '^ *pid  parent  process'
}

@test "firstlook: threads: the threads of a process and their sampled CPU, from awk" {
	render threads --tsv "$D/net.evt" >"$T/t.tsv"
	awk -F'\t' '$2 == 3676 { print $1 }' "$T/t.tsv" | sort -n >"$T/got"
	awk -F'\t' '$5 == 3676 && $6 >= 0 { print $6 }' "$D/net.evt" | sort -nu >"$T/want"
	textdiff "$T/want" "$T/got"
	cpu=$(awk -F'\t' '$2 == "Sample" && $6 == 3680 { s += $7 } END { print s }' "$D/net.evt")
	[ "$(awk -F'\t' '$1 == 3680 { print $7 }' "$T/t.tsv")" = "$cpu" ]
	start=$(awk -F'\t' '$2 == "ThreadStart" && $6 == 3680 { print $1 }' "$D/net.evt")
	[ "$(awk -F'\t' '$1 == 3680 { print $5 }' "$T/t.tsv")" = "$start" ]
}

@test "firstlook: images: PDB identity joined by pid and base, symbol status from #symbols" {
	render images --tsv "$D/net.evt" >"$T/i.tsv"
	# every load or load rundown (pid, base) is a row
	awk -F'\t' '$2 == "ImageDCStart" || $2 == "ImageLoad" { for (i = 8; i < NF; i++) if ($i ~ /^base=/) print $5 "\t" substr($i, 6) }' \
	    "$D/net.evt" | sort -u >"$T/want"
	awk -F'\t' 'NR > 1 { print $1 "\t" $3 }' "$T/i.tsv" | sort -u >"$T/got"
	textdiff "$T/want" "$T/got"
	# the guid of each row is the DbgID_RSDS of its pid and base
	awk -F'\t' '$2 == "DbgID_RSDS" { for (i = 8; i < NF; i++) { if ($i ~ /^base=/) b = substr($i, 6); if ($i ~ /^guid=/) g = substr($i, 6) } print $5 "\t" b "\t" g }' \
	    "$D/net.evt" | sort -u >"$T/dbg"
	awk -F'\t' 'NR > 1 && $8 != "" { print $1 "\t" $3 "\t" $8 }' "$T/i.tsv" | sort -u >"$T/got"
	[ "$(comm -23 "$T/got" "$T/dbg" | wc -l)" -eq 0 ] || { comm -23 "$T/got" "$T/dbg" | head; false; }
	[ "$(wc -l <"$T/got")" -gt 1000 ]
	# ntdll.pdb's status is the one its #symbols line gives
	want=$(awk -F'\t' '$1 == "#symbols" && $2 == "image=ntdll.dll" && $4 == "key=6048FDB62DCD41C18835594844CE71432" { print substr($5, 8) }' "$D/net.evt")
	[ -n "$want" ]
	got=$(awk -F'\t' '$8 == "6048fdb6-2dcd-41c1-8835-594844ce7143" { print $10 }' "$T/i.tsv" | sort -u)
	[ "$got" = "$want" ]
}

@test "firstlook: health of AMSITrace: 3 events lost (census), no process rundown" {
	grep -q '"EventsLost": 3' "$CENSUS/airbus-AMSITrace.txt"
	render health --tsv "$D/amsi.evt" >"$T/h.tsv"
	n=$(awk -F'\t' '$1 !~ /^#/ && $2 != "Lost"' "$D/amsi.evt" | wc -l)
	grep -qx $'bad\tlost-events\t3 of '"$((n + 3))"' (.*' <(cut -f1-3 "$T/h.tsv")
	awk -F'\t' '$2 == "process-rundown" { print $1 }' "$T/h.tsv" | grep -qx bad
	# etl2evt says it too: one warning and the #health line
	grep -q 'unhealthy trace: trace lost' "$D/amsi.err"
	[ "$(grep -c '^#health' "$D/amsi.evt")" -eq 1 ]
	grep '^#health' "$D/amsi.evt" | grep -q $'\tevents_lost=3\t'
}

@test "firstlook: health: the diaghub user file alone misses its kernel rundown, the .diagsession does not" {
	render health --tsv "$D/user.evt" >"$T/u.tsv"
	render health --tsv "$D/merged.evt" >"$T/m.tsv"
	sev() { awk -F'\t' -v c="$2" '$2 == c { print $1 }' "$1"; }
	[ "$(sev "$T/u.tsv" process-rundown)" = bad ]
	[ "$(sev "$T/u.tsv" image-rundown)" = bad ]
	[ "$(sev "$T/m.tsv" process-rundown)" = ok ]
	[ "$(sev "$T/m.tsv" image-rundown)" = ok ]
	# the share of ?!? frames is the awk's
	q=$(awk -F'\t' '$1 !~ /^#/ && $NF != "" { n = split($NF, f, ";"); for (i = 1; i <= n; i++) { t++; if (f[i] ~ /^\?!/) u++ } } END { print u " of " t }' "$D/user.evt")
	awk -F'\t' '$2 == "image-rundown" { print $3 }' "$T/u.tsv" | grep -q "; $q frames"
	grep -q 'no process,image rundown' "$D/user.err"
	grep '^#health' "$D/user.evt" | grep -q $'\tmissing_rundown=process,image\t'
	! grep -q 'unhealthy' "$D/merged.err"
	! grep -q '^#health' "$D/merged.evt"
}

@test "firstlook: health of a synthesised trace: lost events and buffers, a CPU gap, a CPU never sampled" {
	etlgen -o "$T/u.etl" "$ROOT/tests/scenarios/unhealthy.yaml" >/dev/null
	etl2evt "$T/u.etl" >"$T/u.evt" 2>"$T/err"
	grep -q 'unhealthy trace: trace lost' "$T/err"
	render health --tsv "$T/u.evt" >"$T/h.tsv"
	# the scenario: 40 events and 1 buffer lost on CPU 2
	n=$(awk -F'\t' '$1 !~ /^#/ && $2 != "Lost"' "$T/u.evt" | wc -l)
	awk -F'\t' '$2 == "lost-events" { print $3 }' "$T/h.tsv" | grep -q "^40 of $((n + 40)) "
	awk -F'\t' '$2 == "lost-buffers" { print $1 "\t" $3 }' "$T/h.tsv" | grep -qx $'bad\t1 (cpu 2: 1)'
	# CPU 2 sampled up to 600 ms and from 1400 ms: a gap of about 800 ms; CPU 3 never
	cov=$(awk -F'\t' '$2 == "cpu-coverage" { print $1 "\t" $3 }' "$T/h.tsv")
	[[ "$cov" == warn$'\t'*"cpu 2: 80"*" ms from 599."* ]]
	[[ "$cov" == *"cpu 3: no samples"* ]]
	[[ "$cov" != *"cpu 0"* && "$cov" != *"cpu 1"* ]]
	s=$(awk -F'\t' '$2 == "Sample"' "$T/u.evt" | wc -l)
	awk -F'\t' '$2 == "samples" { print $3 }' "$T/h.tsv" | grep -q "^$s ($s with stacks)"
	# without the gap and the lost data the same checks are ok
	sed -e '/kind: Lost/d' -e '/^events:/d' -e 's/to_ms: 600/to_ms: 1400/' -e 's/cpus: \[0, 1\]/cpus: [0, 1, 3]/' \
	    "$ROOT/tests/scenarios/unhealthy.yaml" >"$T/ok.yaml"
	etlgen -o "$T/ok.etl" "$T/ok.yaml" >/dev/null
	etl2evt "$T/ok.etl" 2>"$T/err" | render health --tsv >"$T/ok.tsv"
	! grep -q unhealthy "$T/err"
	for c in lost-events lost-buffers cpu-coverage samples; do
		[ "$(awk -F'\t' -v c=$c '$2 == c { print $1 }' "$T/ok.tsv")" = ok ]
	done
}

@test "firstlook: health: PROFILE and CSWITCH stacks in one stream, and too few samples" {
	h=$'#evt\t1\tcpus=2\tclock=qpc\tclock_freq=10000000\tduration_ms=10\tevents_lost=0\tbuffers_lost=0\tsample_interval_ms=1'
	{
		echo "$h"
		printf '1.000000\tSample\t0\ta.exe\t10\t11\t1\tip=0x1\tkframes=0\ta.exe!main;a.exe!f\n'
		printf '2.000000\tCSwitch\t0\ta.exe\t10\t11\t0\told_tid=0\tntoskrnl.exe!KiSwapContext;ntoskrnl.exe!KiSwapThread\n'
	} >"$T/both.evt"
	render health --tsv "$T/both.evt" >"$T/h.tsv"
	awk -F'\t' '$2 == "profile-and-cswitch-stacks" { print $1 "\t" $3 }' "$T/h.tsv" | grep -qx $'warn\t1 Sample stacks, 1 CSwitch stacks'
	# 1 sample: PerfView's 1,000-sample warning, with the error of a 10% row: 1.96 * sqrt(.09) = 58.8 points
	awk -F'\t' '$2 == "samples" { print $1 "\t" $3 }' "$T/h.tsv" | grep -qx $'warn\t1 (1 with stacks); a 10% row is +-58.80 points'
	# a CSwitch without a stack is no finding
	sed '$s/\t[^\t]*$/\t/' "$T/both.evt" >"$T/one.evt"
	render health --tsv "$T/one.evt" | awk -F'\t' '$2 == "profile-and-cswitch-stacks" { print $1 }' | grep -qx ok
	# the exit status says nothing of the findings; unusable lines make it 1
	render health "$T/both.evt" >/dev/null
	printf 'garbage\n' >>"$T/both.evt"
	run render health "$T/both.evt"
	[ "$status" -eq 1 ]
}

@test "firstlook: etlkit-run's run report keeps each trace's health beside its row" {
	mkdir -p "$T/traces"
	ln -s "$CORPUS/airbus/AMSITrace.etl" "$T/traces/amsi.etl"
	ln -s "$CORPUS/perfview/smallEtlFile.etl" "$T/traces/small.etl"
	cat >"$T/p.yaml" <<-YAML
	etlkit: 1
	cache: cache
	output: out
	scenarios:
	  - files: traces/*.etl
	    name: "t \$1"
	steps:
	  cpu:
	    stackfold: [--roots=comm]
	outputs:
	  - folded: cpu.folded
	    from: cpu
	YAML
	(cd "$T" && etlkit-run -q p.yaml)
	head -1 "$T/out/run-report.tsv" | grep -q $'\terror\thealth$'
	# AMSITrace: the census's 3 lost events out of 3 + the records it parsed (no stack records)
	n=$(awk '/^events parsed:/ { print $3 }' "$CENSUS/airbus-AMSITrace.txt")
	pct=$(awk -v n="$n" 'BEGIN { printf "%.1f", 300 / (n + 3) }')
	awk -F'\t' '$1 == "t amsi" { print $8 }' "$T/out/run-report.tsv" |
	    grep -qx "trace lost ${pct}%25 of its events (3 of $((n + 3)))"
	[ -z "$(awk -F'\t' '$1 == "t small" { print $8 }' "$T/out/run-report.tsv")" ]
	# a second run reuses the cache and still knows
	(cd "$T" && etlkit-run -q p.yaml)
	awk -F'\t' '$1 == "t amsi" { print $4 "\t" $8 }' "$T/out/run-report.tsv" | grep -q $'^reused\ttrace lost '
}

@test "firstlook: --error gives tree and byname rows their sampling error (binomial, 95%), worked out by hand and by awk" {
	# 100 samples: 25 in a!f, 75 in a!g: the 25% row is +-1.96*sqrt(.25*.75/100) = 8.49 points
	{ printf '#evt\t1\n'
	  for i in $(seq 1 100); do
		if [ "$i" -le 25 ]; then s='a!main;a!f'; else s='a!main;a!g'; fi
		printf '%d.000000\tSample\t0\ta.exe\t10\t11\t1\t%s\n' "$i" "$s"
	  done; } >"$T/s.evt"
	render byname --error --tsv "$T/s.evt" >"$T/b.tsv"
	head -1 "$T/b.tsv" | grep -q $'inc%\tinc%_err95\tinc_count'
	[ "$(awk -F'\t' '$NF == "a!f" { print $6 }' "$T/b.tsv")" = 8.49 ]
	[ "$(awk -F'\t' '$NF == "a!main" { print $6 }' "$T/b.tsv")" = 0.00 ]
	render tree --error --tsv "$T/s.evt" >"$T/t.tsv"
	[ "$(awk -F'\t' '$NF == "a!g" { print $4 }' "$T/t.tsv")" = 8.49 ]
	render tree "$T/s.evt" | head -1 | grep -qv '95%'
	# every byname row of net.4.5.2.x64, recomputed by awk from its own count and the total
	render byname --error --tsv "$D/net.evt" >"$T/n.tsv"
	# (the Idle rule: Idle's samples are left out, but for those taken in a DPC or ISR)
	n=$(awk -F'\t' '!/^#/ && $2 == "Sample" { c = 1; irq = 0
		for (i = 8; i < NF; i++) { if ($i ~ /^count=/) c = substr($i, 7); if ($i == "dpc=1" || $i == "isr=1") irq = 1 }
		if ($4 != "Idle" || irq) s += c } END { print s }' "$D/net.evt")
	[ "$n" -gt 1000 ]
	bad=$(awk -F'\t' -v N="$n" 'NR > 1 { p = $7 / N; e = sprintf("%.2f", 100 * 1.96 * sqrt(p * (1 - p) / N)); if (e != $6) b++ } END { print b + 0 }' "$T/n.tsv")
	[ "$bad" = 0 ]
}

@test "firstlook: etl2evt warns once when a trace has both PROFILE and CSWITCH stacks (synthesised), and not when it has only one" {
	etlgen -o "$T/e.etl" "$ROOT/tests/scenarios/threadtime-edges.yaml" >/dev/null
	etl2evt -o "$T/e.evt" "$T/e.etl" 2>"$T/err"
	# independent of the warning: the stream itself has stacked samples and stacked context switches
	[ "$(awk -F'\t' '$2 == "Sample" && $NF != "" { s++ } END { print s + 0 }' "$T/e.evt")" -gt 0 ]
	[ "$(awk -F'\t' '$2 == "CSwitch" && $NF != "" { s++ } END { print s + 0 }' "$T/e.evt")" -gt 0 ]
	[ "$(grep -c 'PROFILE and CSWITCH stacks both' "$T/err")" -eq 1 ]
	grep -q $'^#health\tstacks=profile+cswitch' "$T/e.evt"
	# the cswitch scenario's switches have no stacks: no such warning
	etlgen -o "$T/c.etl" "$ROOT/tests/scenarios/cswitch.yaml" >/dev/null
	[ "$(etl2evt "$T/c.etl" 2>&1 >"$T/c.evt" | grep -c 'PROFILE and CSWITCH')" -eq 0 ]
	[ "$(awk -F'\t' '$2 == "CSwitch" && $NF != "" { s++ } END { print s + 0 }' "$T/c.evt")" -eq 0 ]
}

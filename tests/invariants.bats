#!/usr/bin/env bats
# Nothing is lost: counts and weights are conserved through the pipeline
# etl2evt -> evtfilter -> stackfold -> aggregate / diff, on the corpus and
# on synthesised traces, to the last sample.  Whatever a tool drops it
# reports (#removed, #skipped, --stats, "N malformed lines skipped"), and
# what it reports plus what it writes is exactly what it read.
load helpers

# census name <TAB> corpus file <TAB> zip member (- for none)
TRACES="airbus-AMSITrace	airbus/AMSITrace.etl	-
airbus-ShutdownPerfDiagLogger	airbus/ShutdownPerfDiagLogger.etl	-
airbus-lxcore_kernel	airbus/lxcore_kernel.etl	-
krabsetw-powershell	krabsetw/powershell.etl	-
perfview-SelfDescribingSingleEvent	perfview/SelfDescribingSingleEvent.etl	-
perfview-ctf-net45-win7	perfview/ctf-net45-win7.etl.zip	-
perfview-diaghub-diaghub.etl	perfview/diaghub-dotnetcore3.1-win-x64-diagsession.zip	diaghub.etl
perfview-diaghub-diaghub.kernel.1.etl	perfview/diaghub-dotnetcore3.1-win-x64-diagsession.zip	diaghub.kernel.1.etl
perfview-diaghub-diaghub.user_injected.1.etl	perfview/diaghub-dotnetcore3.1-win-x64-diagsession.zip	diaghub.user_injected.1.etl
perfview-diaghub-diaghub.user_paged.1.etl	perfview/diaghub-dotnetcore3.1-win-x64-diagsession.zip	diaghub.user_paged.1.etl
perfview-gcevents	perfview/gcevents.etl.zip	-
perfview-gcrundownevents	perfview/gcrundownevents.etl.zip	-
perfview-net.4.5.2.x64	perfview/net.4.5.2.x64.etl.zip	-
perfview-primitive-types	perfview/primitive-types.etl.zip	-
perfview-smallEtlFile	perfview/smallEtlFile.etl	-
tx-BondEtwSample	tx/BondEtwSample.etl	-
tx-CrossMachineHTTP	tx/CrossMachineHTTP.etl	-
tx-HTTP_Server	tx/HTTP_Server.etl	-
tx-WsRm01	tx/WsRm01.etl	-"

setup_file() {
	local d="$BATS_FILE_TMPDIR"
	[ -d "$CORPUS" ] || return 0	# the tests say so
	etl2evt --no-symbols "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$d/net.evt" 2>"$d/net.err" || true
	etl2evt --no-symbols "$CORPUS/perfview/ctf-net45-win7.etl.zip" >"$d/ctf.evt" 2>"$d/ctf.err" || true
}

# evtsum FILE: "EVENTS WEIGHT" of the event lines (all kinds), weight in ms.
evtsum() { awk -F'\t' '!/^#/ && NF { n++; w += $7 } END { printf "%d %.6f\n", n, w }' "$1"; }
# kindsum KIND FILE: same for one kind.
kindsum() { awk -F'\t' -v k="$1" '!/^#/ && $2 == k { n++; w += $7 } END { printf "%d %.6f\n", n, w }' "$2"; }
# removed FILE: "EVENTS WEIGHT" summed over the #removed lines.  An event
# prorated at the edge of a time range (reason=prorate) lost weight but is
# still in the output: its weight counts as removed, the event does not.
removed() {
	awk -F'\t' '/^#removed\t/ { p = ($0 ~ /\treason=prorate\t/); for (i = 2; i <= NF; i++) { split($i, a, "=");
		if (a[1] == "events" && !p) n += a[2]; if (a[1] == "weight_ms") w += a[2] } }
		END { printf "%d %.6f\n", n, w }' "$1"
}
# foldsum FILE: total of the last column of folded lines.
foldsum() { awk '{ s += $NF } END { printf "%.3f\n", s }' "$1"; }
# close A B [EPS]: two numbers equal within EPS (default 1e-6 relative).
close() { awk -v a="$1" -v b="$2" -v e="${3:-0.000001}" 'BEGIN { d = a - b; if (d < 0) d = -d; m = (a < 0 ? -a : a); exit !(d <= e * (m > 1 ? m : 1)) }'; }

@test "invariants: etl2evt writes one evt line for every event the census counts, on every corpus trace" {
	require_corpus
	local name path member bad=""
	while IFS=$'\t' read -r name path member; do
		c="$CENSUS/$name.txt"
		[ -e "$c" ] || fail "no census $c"
		parsed=$(sed -n 's/^events parsed: \([0-9]*\).*/\1/p' "$c")
		# StackWalk events become the stack column of their event, and
		# the logfile header event becomes the #evt header.
		stacks=$(awk '/ StackWalk g=0x18 / { s += $1 } END { print s + 0 }' "$c")
		hdr=$(awk '/ LogfileHeader$/ { s += $1 } END { print s + 0 }' "$c")
		samples=$(awk '/ SampledProfile$/ { s += $1 } END { print s + 0 }' "$c")
		m=(); [ "$member" = - ] || m=(--member "$member")
		rc=0; etl2evt --no-symbols "${m[@]}" "$CORPUS/$path" >"$T/out.evt" 2>"$T/err" || rc=$?
		[ "$rc" -eq 0 ] || bad="$bad $name(exit $rc: $(head -c 100 "$T/err"))"
		# Lost lines are synthesised from the header's EventsLost, not trace events
		got=$(awk -F'\t' '!/^#/ && $2 != "Lost"' "$T/out.evt" | wc -l)
		# so do the CLR's stack walks (DotNETRuntime id 82; dotnet.bats checks their number)
		clr=$(sed -n 's/^#clrstacks\twalks=\([0-9]*\).*/\1/p' "$T/out.evt")
		stacks=$((stacks + ${clr:-0}))
		[ "$got" -eq $((parsed - stacks - hdr)) ] ||
			bad="$bad $name(census $parsed - $stacks stack - $hdr header = $((parsed - stacks - hdr)), evt $got)"
		stat=$(sed -n 's/^#stats\tevents=\([0-9]*\).*/\1/p' "$T/out.evt")
		[ "$stat" = "$(grep -vc '^#' "$T/out.evt")" ] || bad="$bad $name(#stats events=$stat)"
		s=$(kindsum Sample "$T/out.evt")
		[ "${s%% *}" -eq "$samples" ] || bad="$bad $name(Sample ${s%% *}, census SampledProfile $samples)"
	done <<<"$TRACES"
	[ -z "$bad" ] || fail "bad:$bad"
}

@test "invariants: evtfilter: events and weight in = out + #removed, for every kind of filter (net.4.5.2)" {
	require_corpus
	local in out rem bad="" f
	in=$(evtsum "$BATS_FILE_TMPDIR/net.evt")
	[ "${in%% *}" -gt 150000 ] || fail "net.evt: $in"
	while read -r f; do
		# shellcheck disable=SC2086
		evtfilter $f "$BATS_FILE_TMPDIR/net.evt" >"$T/f.evt" 2>/dev/null || fail "evtfilter $f failed"
		out=$(evtsum "$T/f.evt")
		rem=$(removed "$T/f.evt")
		[ "${in%% *}" -eq $(( ${out%% *} + ${rem%% *} )) ] || bad="$bad [$f: events in ${in%% *} != out ${out%% *} + removed ${rem%% *}]"
		close "${in#* }" "$(awk -v a="${out#* }" -v b="${rem#* }" 'BEGIN { printf "%.6f", a + b }')" ||
			bad="$bad [$f: weight in ${in#* } != out ${out#* } + removed ${rem#* }]"
	done <<-'EOF'
	-k Sample
	--keep-idle
	-p Test.x64.exe
	-p Test.x64.exe --start 5000.3 --end 6000.7
	--start 1234.5678 --end 2345.0005 --keep-idle
	-C 0,2,4-6 -k cpu
	-x ntdll.dll -k Sample
	-i clr.dll -k Sample
	-t 0 --keep-idle
	EOF
	[ -z "$bad" ] || fail "bad:$bad"
}

@test "invariants: stackfold: folded total = kept weight, read = kept + Idle + what --include/--exclude removed" {
	require_corpus
	local bad="" a
	in=$(kindsum Sample "$BATS_FILE_TMPDIR/net.evt")
	while read -r a; do
		# shellcheck disable=SC2086
		stackfold -s --unit=us $a "$BATS_FILE_TMPDIR/net.evt" >"$T/f" 2>"$T/stats" || fail "stackfold $a failed"
		idle_us=$(sed -n 's/.*; Idle [0-9]* events, \([0-9.]*\) us;.*/\1/p' "$T/stats")
		[ -n "$idle_us" ] || bad="$bad [$a: no Idle in -s]"
		read_us=$(sed -n 's/.*read [0-9]* events, \([0-9.]*\) us;.*/\1/p' "$T/stats")
		kept_us=$(sed -n 's/.*kept [0-9]* events, \([0-9.]*\) us;.*/\1/p' "$T/stats")
		read_n=$(sed -n 's/.*read \([0-9]*\) events.*/\1/p' "$T/stats")
		removed_us=$(awk '/ removed [0-9]+ events, / { for (i = 1; i <= NF; i++) if ($i == "us") s += $(i-1) } END { printf "%.3f", s }' "$T/stats")
		[ "$read_n" -eq "${in%% *}" ] || bad="$bad [$a: read $read_n events, evt has ${in%% *} Samples]"
		close "$read_us" "$(awk -v w="${in#* }" 'BEGIN { printf "%.3f", w * 1000 }')" || bad="$bad [$a: read $read_us us]"
		close "$(foldsum "$T/f")" "$kept_us" || bad="$bad [$a: folded $(foldsum "$T/f") != kept $kept_us]"
		close "$read_us" "$(awk -v k="$kept_us" -v r="$removed_us" -v i="$idle_us" 'BEGIN { printf "%.3f", k + r + i }')" ||
			bad="$bad [$a: read $read_us != kept $kept_us + removed $removed_us + Idle $idle_us]"
	done <<-'EOF'
	--preset=module
	--roots=thread --fold-pct=1
	-x ntdll.dll
	-i clr.dll -x mscorlib
	--fold=ntoskrnl --keep-addrs --kernel
	EOF
	[ -z "$bad" ] || fail "bad:$bad"
}

@test "invariants: etl2evt -> evtfilter -> stackfold -> aggregate keeps every sample (two corpus scenarios)" {
	require_corpus
	local s n total=0 want=0
	for s in net ctf; do
		evtfilter -p Test.x64.exe,Test.exe --start 1000 --end 9000.25 "$BATS_FILE_TMPDIR/$s.evt" >"$T/$s.evt" 2>/dev/null
		raw=$(evtsum "$BATS_FILE_TMPDIR/$s.evt")
		rem=$(awk -F'\t' '/^#removed\t/ { for (i = 2; i <= NF; i++) { split($i, a, "="); if (a[1] == "weight_ms") w += a[2] } } END { printf "%.6f", w }' "$T/$s.evt")
		kept=$(evtsum "$T/$s.evt")
		# Samples (and the CLR's allocation ticks, in bytes) carry weight: in = kept + removed
		close "${raw#* }" "$(awk -v a="${kept#* }" -v b="$rem" 'BEGIN { printf "%.6f", a + b }')" ||
			fail "$s: evtfilter weight ${raw#* } != kept ${kept#* } + removed $rem"
		kept=$(kindsum Sample "$T/$s.evt")
		[ "${kept%% *}" -gt 100 ] || fail "$s: only ${kept%% *} samples left"
		stackfold --unit=us "$T/$s.evt" >"$T/$s.folded"
		close "$(foldsum "$T/$s.folded")" "$(awk -v w="${kept#* }" 'BEGIN { printf "%.3f", w * 1000 }')" ||
			fail "$s: stackfold total $(foldsum "$T/$s.folded") us != evt ${kept#* } ms"
		want=$(awk -v a="$want" -v b="$(foldsum "$T/$s.folded")" 'BEGIN { printf "%.3f", a + b }')
	done
	aggregate "$T/net.folded" "$T/ctf.folded" >"$T/agg.folded"
	close "$(foldsum "$T/agg.folded")" "$want" || fail "aggregate total $(foldsum "$T/agg.folded") != $want"
	# straight from evt too, and --integer keeps the exact total
	aggregate -u us "$T/net.evt" "$T/ctf.evt" >"$T/agg2.folded"
	close "$(foldsum "$T/agg2.folded")" "$want" || fail "aggregate (evt input) $(foldsum "$T/agg2.folded") != $want"
	# each scenario's share is still there under its scenario frame
	for s in net ctf; do
		close "$(awk -v s="$s" 'index($0, s ";") == 1 { t += $NF } END { printf "%.3f", t }' "$T/agg.folded")" "$(foldsum "$T/$s.folded")" ||
			fail "scenario $s lost weight in the aggregate"
	done
}

@test "invariants: diff and overweight: the two columns total exactly the two inputs" {
	require_corpus
	stackfold --preset=module "$BATS_FILE_TMPDIR/net.evt" >"$T/a.folded"
	evtfilter -p Test.x64.exe "$BATS_FILE_TMPDIR/net.evt" 2>/dev/null | stackfold --preset=module >"$T/b.folded"
	diff "$T/a.folded" "$T/b.folded" >"$T/d" 2>"$T/err"
	close "$(awk '{ s += $(NF-1) } END { printf "%.3f", s }' "$T/d")" "$(foldsum "$T/a.folded")" || fail "base column"
	close "$(awk '{ s += $NF } END { printf "%.3f", s }' "$T/d")" "$(foldsum "$T/b.folded")" || fail "test column"
	# every stack of either side is in the diff once
	n=$(cat "$T/a.folded" "$T/b.folded" | sed 's/ [0-9.]*$//' | sort -u | wc -l)
	[ "$(wc -l <"$T/d")" -eq "$n" ] || fail "diff has $(wc -l <"$T/d") stacks, the union is $n"
	# overweight's totals are the inputs' totals
	overweight --tsv "$T/a.folded" "$T/b.folded" >"$T/ow" 2>/dev/null
	close "$(sed -n 's/^#totals\tbase=\([0-9.]*\)\t.*/\1/p' "$T/ow")" "$(foldsum "$T/a.folded")" || fail "overweight base total: $(head -1 "$T/ow")"
	close "$(sed -n 's/^#totals\t.*\ttest=\([0-9.]*\)\t.*/\1/p' "$T/ow")" "$(foldsum "$T/b.folded")" || fail "overweight test total: $(head -1 "$T/ow")"
	# evt inputs straight into diff give the same totals
	diff "$BATS_FILE_TMPDIR/net.evt" "$BATS_FILE_TMPDIR/ctf.evt" >"$T/d2" 2>/dev/null
	close "$(awk '{ s += $(NF-1) } END { printf "%.3f", s }' "$T/d2")" "$(stackfold "$BATS_FILE_TMPDIR/net.evt" | awk '{ s += $NF } END { printf "%.3f", s }')" ||
		fail "diff of evt inputs: base total"
	close "$(awk '{ s += $NF } END { printf "%.3f", s }' "$T/d2")" "$(stackfold "$BATS_FILE_TMPDIR/ctf.evt" | awk '{ s += $NF } END { printf "%.3f", s }')" ||
		fail "diff of evt inputs: test total"
}

@test "invariants: malformed lines are counted and reported, the good lines' weight is all there" {
	require_corpus
	evtfilter -k Sample "$BATS_FILE_TMPDIR/net.evt" >"$T/good.evt" 2>/dev/null
	# 3 garbage lines between good ones
	awk 'NR == 20 { print "garbage"; printf "1.000000\tSample\t0\tx\n"; printf "x\tSample\t0\ta\t1\t1\t1\tA;B\n" } { print }' "$T/good.evt" >"$T/bad.evt"
	rc=0; evtfilter "$T/bad.evt" >"$T/out.evt" 2>"$T/err" || rc=$?
	[ "$rc" -eq 1 ] || fail "evtfilter exit $rc"
	grep -q "^evtfilter: .*bad.evt:20: " "$T/err" || fail "no line number: $(head -2 "$T/err")"
	[ "$(sed -n 's/^#skipped\twhat=malformed line\tcount=\([0-9]*\).*/\1/p' "$T/out.evt")" = 3 ] || fail "no #skipped count=3"
	[ "$(kindsum Sample "$T/out.evt")" = "$(kindsum Sample "$T/good.evt")" ] || fail "evtfilter lost good lines"
	rc=0; stackfold -s "$T/bad.evt" >"$T/bad.folded" 2>"$T/err" || rc=$?
	[ "$rc" -eq 1 ] || fail "stackfold exit $rc"
	grep -q 'malformed lines 3' "$T/err" || fail "stackfold: $(tail -1 "$T/err")"
	stackfold "$T/good.evt" >"$T/good.folded"
	[ "$(foldsum "$T/bad.folded")" = "$(foldsum "$T/good.folded")" ] || fail "stackfold lost good lines"
	# folded consumers
	awk 'NR == 5 { print "no count"; print "a;b -3"; print "a;b 1x" } { print }' "$T/good.folded" >"$T/bad2.folded"
	for t in aggregate diff; do
		if [ "$t" = diff ]; then args=("$T/bad2.folded" "$T/good.folded"); else args=("$T/bad2.folded"); fi
		rc=0; "$t" "${args[@]}" >"$T/$t.out" 2>"$T/err" || rc=$?
		[ "$rc" -eq 1 ] || fail "$t exit $rc"
		grep -q "^$t: .*bad2.folded: 3 " "$T/err" || fail "$t: $(cat "$T/err")"
	done
	[ "$(foldsum "$T/aggregate.out")" = "$(foldsum "$T/good.folded")" ] || fail "aggregate lost good lines"
}

@test "invariants: DPC/ISR durations survive etl2evt -> evtfilter -> stackfold (synthesised trace)" {
	[ -x "$ETLKIT_BIN/etlgen" ] || fail "etlgen not built"
	etlgen -o "$T/k.etl" "$BATS_TEST_DIRNAME/scenarios/kinds.yaml" 2>/dev/null
	etl2evt --no-symbols "$T/k.etl" >"$T/k.evt"
	local k bad="" n=0
	for k in DPC ThreadedDPC TimerDPC ISR; do
		s=$(kindsum "$k" "$T/k.evt")
		n=$((n + ${s%% *}))
	done
	[ "$n" -gt 0 ] || fail "no DPC/ISR events in the synthesised trace"
	want=$(awk -F'\t' '!/^#/ && ($2 ~ /^(DPC|ThreadedDPC|TimerDPC|ISR)$/) { w += $7 } END { printf "%.3f", w * 1000 }' "$T/k.evt")
	evtfilter -k dpcisr --keep-idle "$T/k.evt" >"$T/d.evt" 2>/dev/null
	close "$(awk -F'\t' '!/^#/ { w += $7 } END { printf "%.3f", w * 1000 }' "$T/d.evt")" "$want" || fail "evtfilter -k dpcisr"
	stackfold --kind=dpcisr --decimals=3 "$T/d.evt" >"$T/d.folded"
	close "$(foldsum "$T/d.folded")" "$want" || fail "stackfold --kind=dpcisr $(foldsum "$T/d.folded") us != $want us"
	# integer counts (the default) round each stack: off by at most 0.5 us a line
	stackfold --kind=dpcisr "$T/d.evt" >"$T/i.folded"
	close "$(foldsum "$T/i.folded")" "$want" "$(awk -v n="$(wc -l <"$T/i.folded")" -v w="$want" 'BEGIN { print 0.5 * n / w }')" ||
		fail "stackfold --kind=dpcisr (integers) $(foldsum "$T/i.folded") us != $want us"
}

@test "invariants: memory: etl2evt decodes 2 GB of XPRESS-compressed ETL in < 64 MB, stackfold 1 GB of folded stacks in < 64 MB" {
	asan && skip "RSS under ASan is its shadow memory"
	[ -x "$ETLKIT_BIN/etlgen" ] || fail "etlgen not built"
	# the backup-server incident (24 CPUs, DPC/ISR/CSwitch/stacks) repeated 80
	# times: a 575 MB file of compressed buffers that hold 2 GB of events
	etlgen -o "$T/one.etl" --compress "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" 2>/dev/null
	etlgen -o "$T/big.etl" --repeat 80 --compress "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" 2>/dev/null
	[ "$(stat -c %s "$T/big.etl")" -gt 500000000 ] || fail "the trace is smaller than planned"
	# the body (samples, DPCs, ISRs) comes 80 times, the rundown once
	count='!/^#/ { if ($2 ~ /^(Sample|DPC|TimerDPC|ISR)$/) body++; else once++ }'
	want=$(etl2evt --no-symbols "$T/one.etl" | awk -F'\t' "$count"' END { print 80 * body + once }')
	rss=$(peak_rss_kb etl2evt --no-symbols "$T/big.etl")
	[ "$rss" -gt 0 ] || fail "etl2evt failed ($rss)"
	got=$(awk -F'\t' "$count"' END { print body + once }' "$T/out")
	[ "$got" -eq "$want" ] || fail "$got events, not $want"
	rm -f "$T/big.etl" "$T/out"
	[ "$rss" -lt 65536 ] || fail "etl2evt peak RSS $rss kB on a 575 MB compressed trace"
	# 1 GB of folded stacks, 2000 distinct: memory follows the stacks
	python3 "$GEN_FOLDED" --size 1G --seed 1 --distinct 2000 >"$T/big.folded"
	want=$(foldsum "$T/big.folded")
	rss=$(peak_rss_kb stackfold "$T/big.folded")
	rm -f "$T/big.folded"
	[ "$rss" -gt 0 ] || fail "stackfold failed ($rss)"
	[ "$(foldsum "$T/out")" = "$want" ] || fail "stackfold total $(foldsum "$T/out") != $want"
	[ "$rss" -lt 65536 ] || fail "stackfold peak RSS $rss kB on 1 GB"
}

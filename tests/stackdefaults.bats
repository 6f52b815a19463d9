#!/usr/bin/env bats
# Numbers that mean what they say (issue 15): the defaults every stack
# tool shares.  A folded count of CPU samples is a sample count (what
# flamegraph.pl and inferno call it); time-weighted views count us and
# say so; the Idle process's samples are removed everywhere, as
# PerfView's CPU stacks do, and the removed weight is always reported;
# speedscope opens on the busiest process.  Expected values come from
# awk over the evt stream, the census, or the test's own numbers.
load helpers

NET_ZIP=perfview/net.4.5.2.x64.etl.zip

net_evt() {
	require_corpus
	NET="$BATS_FILE_TMPDIR/net.evt"
	[ -s "$NET" ] || etl2evt "$CORPUS/$NET_ZIP" >"$NET" 2>/dev/null
}

# samples FILE [keep]: the Sample count (count= summed, 1 without it) that
# the Idle rule keeps: the Idle process (pid 0 or process Idle) is left out
# unless the sample was taken inside a DPC or ISR; with keep, every sample.
samples() {
	awk -F'\t' -v keep="${2:-}" '$2 == "Sample" {
		c = 1; intr = 0
		for (i = 8; i < NF; i++) {
			if ($i ~ /^count=/) c = substr($i, 7) + 0
			if ($i == "dpc=1" || $i == "isr=1") intr = 1
		}
		if (keep == "" && ($5 == 0 || tolower($4) == "idle") && !intr) next
		n += c
	} END { printf "%d\n", n }' "$1"
}
# us of the Sample weights the Idle rule keeps
kept_us() {
	awk -F'\t' '$2 == "Sample" {
		intr = 0
		for (i = 8; i < NF; i++) if ($i == "dpc=1" || $i == "isr=1") intr = 1
		if (($5 == 0 || tolower($4) == "idle") && !intr) next
		w += $7
	} END { printf "%d\n", w * 1000 + 0.5 }' "$1"
}
foldsum() { awk '{ s += $NF } END { printf "%d\n", s }' "$1"; }
commas() { python3 -c 'import sys; print(f"{int(sys.argv[1]):,}")' "$1"; }
# the root box of a render flame graph and its count name
root_v() { python3 "$BATS_TEST_DIRNAME/render_svg.py" "$1" | awk -F'\t' '$1 == "all" { print $2 }'; }
cname() { python3 "$BATS_TEST_DIRNAME/render_svg.py" --meta "$1" | awk -F'\t' '$1 == "frames.cname" { print $2 }'; }

# flamegraph.pl: $ETLKIT_FLAMEGRAPH, then PATH, then where `make peers` puts it
find_flamegraph() {
	local c="${XDG_CACHE_HOME:-$HOME/.cache}/etlkit/peers/flamegraph.pl"
	FG=${ETLKIT_FLAMEGRAPH:-}
	[ -n "$FG" ] || FG=$(command -v flamegraph.pl || true)
	[ -n "$FG" ] || { [ -f "$c" ] && FG=$c; }
	[ -n "$FG" ] || skip "flamegraph.pl not found (ETLKIT_FLAMEGRAPH, PATH, or 'make peers' to fetch the pinned copy)"
	command -v perl >/dev/null || skip "perl is not installed"
}

# hdr + ev TIME KIND PROC PID TID WEIGHT STACK [ATTR...]: a synthesised evt stream
hdr() { printf '#evt\t1\tsource=t\tpointer_size=8\n'; }
ev() {
	local t=$1 k=$2 p=$3 pid=$4 tid=$5 w=$6 s=$7; shift 7
	local a=""; for x in "$@"; do a="$a$x	"; done
	printf '%s\t%s\t0\t%s\t%s\t%s\t%s\t%s%s\n' "$t" "$k" "$p" "$pid" "$tid" "$w" "$a" "$s"
}

@test "counts: README's one-liner through flamegraph.pl labels the net.4.5.2.x64 root with its sample count; --unit=us --countname=us says us" {
	net_evt
	find_flamegraph
	n=$(samples "$NET")
	[ "$n" -gt 1000 ]
	line=$(grep -m1 'stackfold --preset=module | flamegraph.pl > cpu.svg' "$ROOT/README.md" | sed 's/  *#.*$//')
	[ -n "$line" ] || fail "README has no flamegraph.pl one-liner"
	line=${line//etlkit-/}
	line=${line//trace.etl/\"$CORPUS/$NET_ZIP\"}
	line=${line//flamegraph.pl/perl \"$FG\"}
	(cd "$T" && bash -o pipefail -c "$line" 2>/dev/null)
	grep -q "<title>all ($(commas "$n") samples, 100%)</title>" "$T/cpu.svg" ||
		fail "want all ($(commas "$n") samples, 100%), got: $(grep -o '<title>all [^<]*' "$T/cpu.svg")"
	# README's example tooltip is this one
	grep -q "\"all ($(commas "$n") samples, 100%)\"" "$ROOT/README.md"
	# every box's count is samples: the root's children add up to it
	us=$(kept_us "$NET")
	stackfold --preset=module --unit=us "$NET" 2>/dev/null | perl "$FG" --countname=us >"$T/us.svg"
	grep -q "<title>all ($(commas "$us") us, 100%)</title>" "$T/us.svg" ||
		fail "want all ($(commas "$us") us, 100%), got: $(grep -o '<title>all [^<]*' "$T/us.svg")"
}

@test "counts: render's own flame graph counts samples and names them; --unit=us and DPC views count and name us" {
	net_evt
	n=$(samples "$NET")
	render "$NET" >"$T/a.svg" 2>/dev/null
	[ "$(root_v "$T/a.svg")" = "$n" ]
	[ "$(cname "$T/a.svg")" = samples ]
	stackfold "$NET" 2>/dev/null | render >"$T/b.svg"
	[ "$(root_v "$T/b.svg")" = "$n" ]
	[ "$(cname "$T/b.svg")" = samples ]
	render --unit=us "$NET" >"$T/c.svg" 2>/dev/null
	[ "$(root_v "$T/c.svg")" = "$(kept_us "$NET")" ]
	[ "$(cname "$T/c.svg")" = us ]
	# PerfView's When column means the same in samples: 100% is one CPU busy (sample_interval_ms)
	render byname --tsv "$NET" 2>/dev/null | cut -f9,10 >"$T/w1"
	render byname --tsv --unit=ms "$NET" 2>/dev/null | cut -f9,10 >"$T/w2"
	textdiff "$T/w2" "$T/w1"
	grep -q '[1-9]' "$T/w1"
	# a duration-weighted kind: us by default, in both of render's paths
	{ hdr; ev 1 DPC Idle 0 0 0.2205 '' routine=ndis.sys!x; ev 2 DPC app.exe 5 6 0.1 'a!f' routine=ndis.sys!x
	  ev 3 Sample app.exe 5 6 1 'a!f'; } >"$T/d.evt"
	render --kind=DPC "$T/d.evt" >"$T/d.svg"
	[ "$(root_v "$T/d.svg")" = 320.5 ]
	[ "$(cname "$T/d.svg")" = us ]
	render --kind=DPC --roots=comm "$T/d.evt" >"$T/e.svg"
	[ "$(root_v "$T/e.svg")" = 320.5 ]
	[ "$(cname "$T/e.svg")" = us ]
	run render speedscope --kind=DPC "$T/d.evt"
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert {p["unit"] for p in d["profiles"]} == {"microseconds"}, d' "$output"
}

@test "counts: a sample's count is its count= (not weight/interval), in every stack tool; a mix of kinds is us" {
	{ hdr; ev 1 Sample app.exe 5 6 2 'a!main;a!f' count=2
	  ev 2 Sample app.exe 5 6 0.5 'a!main;a!g' count=3
	  ev 3 Sample app.exe 5 7 1 'a!main'
	  ev 4 DPC app.exe 5 6 0.25 'a!main' routine=n.sys!d; } >"$T/a.evt"
	[ "$(stackfold "$T/a.evt" | tee "$T/f" | foldsum /dev/stdin)" = 6 ]
	grep -qx 'a!main;a!g 3' "$T/f"
	[ "$(render "$T/a.evt" >"$T/a.svg"; root_v "$T/a.svg")" = 6 ]
	[ "$(render tree --tsv "$T/a.evt" | awk -F'\t' '$NF == "ROOT" { print $2 }')" = 6 ]
	run render speedscope "$T/a.evt"
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); p=d["profiles"]
assert sum(sum(x["weights"]) for x in p) == 6 and {x["unit"] for x in p} == {"none"}, p' "$output"
	[ "$(aggregate -S "$T/a.evt" | foldsum /dev/stdin)" = 6 ]
	[ "$(diff -t "$T/a.evt" "$T/a.evt" | awk -F'\t' '$1 == "base" { print $2 }')" = 6 ]
	[ "$(overweight --tsv "$T/a.evt" "$T/a.evt" | head -1)" = "$(printf '#totals\tbase=6\ttest=6\tdelta=0\tgrowth=1.0000\tunit=samples')" ]
	# Sample and DPC together: microseconds of weight (2000 + 500 + 1000 + 250)
	[ "$(stackfold --kind=Sample,DPC "$T/a.evt" | foldsum /dev/stdin)" = 3750 ]
	[ "$(stackfold --kind=all "$T/a.evt" | foldsum /dev/stdin)" = 3750 ]
	# --unit is still the user's choice
	[ "$(stackfold --unit=ms "$T/a.evt" | foldsum /dev/stdin)" = 4 ]
	[ "$(stackfold --kind=DPC --unit=samples "$T/a.evt" | foldsum /dev/stdin)" = 1 ]
}

@test "Idle: every stack tool leaves out net.4.5.2.x64's Idle samples and agrees on the total; --keep-idle gives the census's" {
	net_evt
	n=$(samples "$NET")
	all=$(awk '$NF == "SampledProfile" { print $1 }' "$CENSUS/perfview-net.4.5.2.x64.txt")
	[ "$all" -eq "$(samples "$NET" keep)" ]
	[ "$n" -lt $((all / 5)) ]
	for keep in "" --keep-idle; do
		want=$n; [ -n "$keep" ] && want=$all
		[ "$(stackfold $keep "$NET" 2>/dev/null | foldsum /dev/stdin)" = "$want" ] || fail "stackfold $keep"
		render $keep "$NET" >"$T/f.svg" 2>/dev/null
		[ "$(root_v "$T/f.svg")" = "$want" ] || fail "render flame $keep"
		[ "$(render tree --tsv $keep "$NET" 2>/dev/null | awk -F'\t' '$NF == "ROOT" { print $2 }')" = "$want" ] || fail "render tree $keep"
		[ "$(render byname --tsv $keep "$NET" 2>/dev/null | awk -F'\t' '!/^#/ && NR > 1 { s += $1 } END { print s }')" = "$want" ] || fail "render byname $keep"
		render speedscope $keep "$NET" >"$T/s.json" 2>/dev/null
		[ "$(python3 -c 'import json,sys; print(sum(sum(p["weights"]) for p in json.load(open(sys.argv[1]))["profiles"]))' "$T/s.json")" = "$want" ] || fail "speedscope $keep"
		[ "$(diff -t $keep "$NET" "$NET" 2>/dev/null | awk -F'\t' '$1 == "base" { print $2 }')" = "$want" ] || fail "diff $keep"
		[ "$(overweight --tsv $keep "$NET" "$NET" 2>/dev/null | head -1 | cut -f2)" = "base=$want" ] || fail "overweight $keep"
		[ "$(aggregate -S $keep "$NET" 2>/dev/null | foldsum /dev/stdin)" = "$want" ] || fail "aggregate $keep"
	done
	# the issue: 92% of the trace landed on ntoskrnl.exe!? (the idle loop); now a few percent
	stackfold "$NET" 2>/dev/null | awk '$1 ~ /ntoskrnl\.exe!\?$/ { k += $NF } { t += $NF } END { exit !(k < t / 10) }'
	stackfold --keep-idle "$NET" | awk '$1 ~ /ntoskrnl\.exe!\?$/ { k += $NF } { t += $NF } END { exit !(k > t * 0.9) }'
	# evtfilter removes the same events: piping through it changes nothing
	evtfilter "$NET" 2>/dev/null | stackfold >"$T/a" 2>"$T/err"
	stackfold "$NET" >"$T/b" 2>/dev/null
	cmp "$T/a" "$T/b"
	[ ! -s "$T/err" ]	# nothing left to remove, nothing said
}

@test "Idle: the removed weight is always said, on stderr and with -s, by every tool that removed some" {
	net_evt
	idle=$(( $(samples "$NET" keep) - $(samples "$NET") ))
	pct=$(awk -v i="$idle" -v a="$(samples "$NET" keep)" 'BEGIN { printf "%.1f", 100 * i / a }')
	msg="removed Idle: $(commas "$idle") samples ($pct% of the total); --keep-idle keeps them"
	stackfold "$NET" 2>"$T/err" >/dev/null
	[ "$(cat "$T/err")" = "stackfold: $msg" ]
	for mode in flame tree byname speedscope; do
		render $mode "$NET" 2>"$T/err" >/dev/null
		[ "$(cat "$T/err")" = "render: $msg" ] || fail "render $mode: $(cat "$T/err")"
	done
	stackfold -s "$NET" 2>"$T/err" >/dev/null
	grep -q "; Idle $idle events, $idle.000 samples;" "$T/err"
	diff -t "$NET" "$NET" 2>"$T/err" >/dev/null
	[ "$(grep -c "^diff: .*net.evt: $msg" "$T/err")" -eq 2 ]
	overweight "$NET" "$NET" 2>"$T/err" >"$T/ow"
	grep -q "^overweight: .*net.evt: $msg" "$T/err"
	grep -q "net.evt: $idle Idle samples removed before the analysis (--keep-idle keeps them)." "$T/ow"
	aggregate "$NET" "$NET" 2>"$T/err" >/dev/null
	[ "$(cat "$T/err")" = "aggregate: removed Idle: $(commas $((2 * idle))) samples ($pct% of the total); --keep-idle keeps them" ]
	# time units say events and us
	stackfold --unit=us "$NET" 2>"$T/err" >/dev/null
	grep -qx "stackfold: removed Idle: $(commas "$idle") events, $(commas $((idle * 1000))) us ($pct% of the total); --keep-idle keeps them" "$T/err"
	# nothing removed, nothing said
	stackfold --keep-idle "$NET" 2>"$T/err" >/dev/null
	[ ! -s "$T/err" ]
}

@test "Idle: the rule is the Idle process's Sample and Running events; samples inside a DPC/ISR and DPC lines stay" {
	{ hdr
	  ev 1 Sample Idle 0 0 1 'ntoskrnl.exe!KiIdleLoop'
	  ev 2 Sample Idle 0 0 1 'ntoskrnl.exe!KiIdleLoop;ndis.sys!dpc' dpc=1
	  ev 3 Sample Idle 0 0 1 'ntoskrnl.exe!KiIdleLoop;ndis.sys!isr' isr=1
	  ev 4 Sample idle 7 0 1 'x!case'
	  ev 5 Sample '?' 0 0 1 'x!pid0'
	  ev 6 Sample app.exe 5 6 1 'a!main'
	  ev 7 DPC Idle 0 0 0.2 'ntoskrnl.exe!KiIdleLoop' routine=ndis.sys!dpc
	  ev 8 Running Idle 0 0 3 '' end_ms=11
	  ev 9 Running app.exe 5 6 2 '' end_ms=11
	  ev 10 Ready app.exe 5 6 4 '' end_ms=14; } >"$T/a.evt"
	stackfold "$T/a.evt" >"$T/out" 2>"$T/err"
	[ "$(cat "$T/err")" = "stackfold: removed Idle: 3 samples (50.0% of the total); --keep-idle keeps them" ]
	[ "$(cat "$T/out")" = "$(printf 'a!main 1\nntoskrnl.exe!KiIdleLoop;ndis.sys!dpc 1\nntoskrnl.exe!KiIdleLoop;ndis.sys!isr 1')" ]
	[ "$(stackfold --keep-idle "$T/a.evt" | foldsum /dev/stdin)" = 6 ]
	# DPC time with pid 0 is DPC time
	[ "$(stackfold --kind=dpc "$T/a.evt" 2>"$T/err")" = "ntoskrnl.exe!KiIdleLoop;ndis.sys!dpc 200" ]
	[ ! -s "$T/err" ]
	# thread time: the Idle thread's Running is idle CPU, others' Running and Ready stay
	[ "$(stackfold --kind=Running,Ready --roots=comm "$T/a.evt" 2>"$T/err")" = "app.exe 6000" ]
	[ "$(cat "$T/err")" = "stackfold: removed Idle: 1 events, 3,000 us (33.3% of the total); --keep-idle keeps them" ]
	# evtfilter applies the same rule
	evtfilter "$T/a.evt" 2>/dev/null | stackfold --keep-idle --kind=all >"$T/x"
	stackfold --kind=all "$T/a.evt" 2>/dev/null >"$T/y"
	cmp "$T/x" "$T/y"
}

@test "Idle: on the backup incident the default CPU view keeps the DPC samples taken on idle CPUs (all of ndis.sys's are there)" {
	etlgen -o "$T/i.etl" "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" 2>/dev/null
	etl2evt --no-symbols "$T/i.etl" >"$T/i.evt" 2>/dev/null
	n=$(samples "$T/i.evt")
	in_dpc=$(awk -F'\t' '$2 == "Sample" && $5 == 0 && /\t(dpc|isr)=1\t/ { k++ } END { print k + 0 }' "$T/i.evt")
	[ "$in_dpc" -gt 1000 ]
	stackfold --roots=process "$T/i.evt" 2>/dev/null >"$T/f"
	[ "$(foldsum "$T/f")" = "$n" ]
	[ "$(awk 'index($0, "Process64 Idle (0);") == 1 { s += $NF } END { print s + 0 }' "$T/f")" = "$in_dpc" ]
	# the NIC's DPC path (ndis.sys) is a third of the default CPU view, every one of its samples there
	want=$(awk -F'\t' '$2 == "Sample" && $NF ~ /ndis\.sys!/ { intr = ($0 ~ /\t(dpc|isr)=1\t/)
	    if (($5 == 0 || $4 == "Idle") && !intr) next; n++ } END { print n + 0 }' "$T/i.evt")
	[ "$(stackfold --preset=module "$T/i.evt" 2>/dev/null | awk '/module ndis\.sys/ { s += $NF } END { print s + 0 }')" = "$want" ]
	[ "$want" -gt $((n / 4)) ]
}

@test "speedscope: opens on the busiest process's busiest thread (awk over net.4.5.2.x64); Idle keeps only its DPC/ISR samples" {
	net_evt
	# busiest process by the Idle rule's samples, then its busiest thread
	awk -F'\t' '$2 == "Sample" {
		c = 1; intr = 0
		for (i = 8; i < NF; i++) { if ($i ~ /^count=/) c = substr($i, 7) + 0; if ($i == "dpc=1" || $i == "isr=1") intr = 1 }
		if (($5 == 0 || $4 == "Idle") && !intr) next
		p[$5] += c; t[$5 "\t" $6] += c; name[$5] = $4
	} END {
		for (k in p) if (p[k] > bp) { bp = p[k]; best = k }
		for (k in t) { split(k, a, "\t"); if (a[1] == best && t[k] > bt) { bt = t[k]; tid = a[2] } }
		printf "%s (%s)\t%s (%s) Thread (%s)\t%d\t%d\n", name[best], best, name[best], best, tid, bt, p[0]
	}' "$NET" >"$T/want"
	IFS=$'\t' read -r proc thread tw idle <"$T/want"
	render speedscope "$NET" >"$T/t.json" 2>/dev/null
	render speedscope --by process "$NET" >"$T/p.json" 2>/dev/null
	[ "$idle" -gt 0 ] && [ "$idle" -lt 1000 ]
	python3 - "$T/t.json" "$T/p.json" "$proc" "$thread" "$tw" "$idle" <<-'EOF'
	import json, sys
	t, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
	proc, thread, tw, idle = sys.argv[3], sys.argv[4], float(sys.argv[5]), float(sys.argv[6])
	for d in (t, p):
	    assert d["activeProfileIndex"] == 0
	ip = [x for x in p["profiles"] if x["name"] == "Idle (0)"]
	assert len(ip) == 1 and sum(ip[0]["weights"]) == idle, (ip, idle)
	first = t["profiles"][0]
	assert first["name"] == thread and sum(first["weights"]) == tw and first["endValue"] == tw, (first["name"], thread)
	assert p["profiles"][0]["name"] == proc, (p["profiles"][0]["name"], proc)
	tot = [sum(x["weights"]) for x in p["profiles"]]
	assert tot == sorted(tot, reverse=True), tot
	EOF
}

@test "nightly pipelines follow the same defaults, and a stackfold step may say --keep-idle --unit=us" {
	net_evt
	mkdir -p "$T/tr"
	cp "$CORPUS/$NET_ZIP" "$T/tr/net.etl.zip"
	for opts in "" "--keep-idle, --unit=us"; do
		cat >"$T/p.yaml" <<-YAML
		etlkit: 1
		scenarios:
		  - files: tr/*.etl.zip
		steps:
		  cpu:
		    etl2evt: [--no-symbols]
		    stackfold: [--roots=comm${opts:+, $opts}]
		outputs:
		  - folded: cpu.folded
		YAML
		rm -rf "$T/out" "$T/.etlkit-cache"
		run etlkit-run -q "$T/p.yaml"
		[ "$status" -eq 0 ] || fail "$opts: $output"
		want=$(samples "$NET")
		[ -n "$opts" ] && want=$(awk -F'\t' '$2 == "Sample" { w += $7 } END { printf "%d\n", w * 1000 + 0.5 }' "$NET")
		[ "$(foldsum "$T/out/p/cpu.folded")" = "$want" ] || fail "'$opts': $(foldsum "$T/out/p/cpu.folded") != $want"
	done
}

#!/usr/bin/env bats
# render dpc / dpcisr / dpcstacks / dpcchart on hand-made evt with known
# durations (tests/render_gen.py computes the expected answers itself).
load helpers

# gen KIND OUT.evt [--fixed]: the fixture (made once per file) and its expected values on stdout
gen() {
	local c="$BATS_FILE_TMPDIR/gen-$1${3:-}"
	[ -s "$c.evt" ] || python3 "$BATS_TEST_DIRNAME/render_gen.py" "$1" "$c.evt" ${3:-} > "$c.json"
	cp "$c.evt" "$2"
	cat "$c.json"
}
jq_() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

@test "dpcisr: power-of-two buckets, open below and closed above, at every edge" {
	gen edges "$T/e.evt" > "$T/e.json"
	render dpcisr --dpc "$T/e.evt" > "$T/out"
	grep -q '^DPC Info$' "$T/out"
	! grep -q '^Interrupt Info$' "$T/out"
	grep -q '^Total = 19 for module ndis.sys$' "$T/out"
	# durations 0.5 1 | 1.001 2 | 2.5 4 | 8 | 16 | 32 | 64 | 100 100.001 128 | 129 220 256 | 512 | 1024 | 1025
	grep -Eq '^Elapsed Time, > +0 usecs AND <= +1 usecs, +2, or +10\.53%$' "$T/out"
	grep -Eq '^Elapsed Time, > +1 usecs AND <= +2 usecs, +2, or +10\.53%$' "$T/out"
	grep -Eq '^Elapsed Time, > +2 usecs AND <= +4 usecs, +2, or +10\.53%$' "$T/out"
	grep -Eq '^Elapsed Time, > +4 usecs AND <= +8 usecs, +1, or +5\.26%$' "$T/out"
	grep -Eq '^Elapsed Time, > +64 usecs AND <= +128 usecs, +3, or +15\.79%$' "$T/out"
	grep -Eq '^Elapsed Time, > +128 usecs AND <= +256 usecs, +3, or +15\.79%$' "$T/out"
	grep -Eq '^Elapsed Time, > +512 usecs AND <= +1024 usecs, +1, or +5\.26%$' "$T/out"
	grep -Eq '^Elapsed Time, > +1024 usecs AND <= +2048 usecs, +1, or +5\.26%$' "$T/out"
	grep -q '^Total, 19$' "$T/out"
	# the generator's own bucket counts, bucket by bucket
	for k in $(seq 0 11); do
		want=$(jq_ "$T/e.json" "d['buckets'].get('$k', 0)")
		got=$(grep '^Elapsed Time' "$T/out" | sed -n "$((k + 1))p" | awk -F', ' '{print $3+0}')
		[ "$want" = "$got" ] || fail "bucket $k: want $want got $got"
	done
	# usage per CPU: even-indexed DPCs ran on CPU 0
	grep -Eq '^ +2029 0\.20, +1596 0\.16, ndis\.sys$' "$T/out"
	render dpcisr --isr "$T/e.evt" > "$T/isr"
	grep -q '^Interrupt Info$' "$T/isr"
	grep -q '^Total = 4 for module ndis.sys$' "$T/isr"
	grep -Eq '^Elapsed Time, > +16 usecs AND <= +32 usecs, +3, or +75\.00%$' "$T/isr"
}

@test "dpc: guidance flags at the 100 us and 25 us edges; percentiles; TSV" {
	gen edges "$T/e.evt" > /dev/null
	render dpc --tsv "$T/e.evt" > "$T/t"
	# 100 is not over, 100.001 is: 100.001 128 129 220 256 512 1024 1025
	awk -F'\t' '$1=="module" && $2=="DPC" && $3=="ndis.sys" {print $4, $11}' "$T/t" > "$T/m"
	[ "$(cat "$T/m")" = "19 8" ]
	# ISR: 24.999 and 25 are within the guidance, 25.001 and 40 over
	[ "$(awk -F'\t' '$1=="module" && $2=="ISR" {print $4, $11}' "$T/t")" = "4 2" ]
	# nearest-rank percentiles of the 19 DPCs: p50 = 10th = 64, p90 = 18th = 1024
	[ "$(awk -F'\t' '$1=="module" && $2=="DPC" {print $8, $9, $10, $7}' "$T/t")" = "64.000 1024.000 1025.000 1025.000" ]
	# total and average
	[ "$(awk -F'\t' '$1=="module" && $2=="DPC" {print $5, $6}' "$T/t")" = "3625.002 190.790" ]
	grep -q $'^flag\tDPC\tndis.sys\t100\t8\t19$' "$T/t"
	grep -q $'^flag\tISR\tndis.sys\t25\t2\t4$' "$T/t"
	# limits are options
	render dpc --tsv --dpc-limit 200 "$T/e.evt" | grep -q $'^flag\tDPC\tndis.sys\t200\t5\t19$'
}

@test "dpc: the backup-server incident -- NDIS DPCs at 220 us pin CPUs 0,2,4,6" {
	gen backup "$T/b.evt" > "$T/b.json"
	render dpc "$T/b.evt" > "$T/text"
	grep -q 'DPC/ISR duration by module, function - backup.etl' "$T/text"
	render dpc --tsv "$T/b.evt" > "$T/t"
	n=$(jq_ "$T/b.json" "d['ndis_count']")
	avg=$(jq_ "$T/b.json" "'%.3f' % d['ndis_avg']")
	[ "$avg" = "220.000" ]
	# module row: count, average, max, all over 100 us
	[ "$(awk -F'\t' '$1=="module" && $3=="ndis.sys" {print $4, $6, $7, $11}' "$T/t")" = "$n $avg 260.000 $n" ]
	# ndis.sys is the top module; two functions
	[ "$(awk -F'\t' '$1=="module" {print $3; exit}' "$T/t")" = ndis.sys ]
	[ "$(awk -F'\t' '$1=="function" && $3=="ndis.sys"' "$T/t" | wc -l)" -eq 2 ]
	# per-CPU share, as computed by the generator
	for c in 0 1 2 3 4 5 6 7; do
		want=$(jq_ "$T/b.json" "'%.2f' % d['cpu_dpc_pct']['$c']")
		got=$(awk -F'\t' -v c=$c '$1=="cpu" && $2==c {print $4}' "$T/t")
		[ "$want" = "$got" ] || fail "cpu $c: want $want got $got"
	done
	# filter by CPU: only 0 and 2 remain, ndis counts halve
	render dpc --tsv --cpu 0,2 "$T/b.evt" > "$T/c02"
	[ "$(awk -F'\t' '$1=="cpu"' "$T/c02" | wc -l)" -eq 2 ]
	! awk -F'\t' '$1=="module" && $3=="storport.sys"' "$T/c02" | grep -q .
	[ "$(awk -F'\t' '$1=="module" && $3=="ndis.sys" {print $4}' "$T/c02")" -eq $((n / 2)) ]
	render dpc --tsv --cpu 1-3 "$T/b.evt" | awk -F'\t' '$1=="cpu"{print $2}' | tr '\n' ' ' | grep -qx '1 2 3 '
	# after the fix: 60 us average, nothing flagged
	gen backup "$T/f.evt" --fixed > /dev/null
	render dpc --tsv "$T/f.evt" | awk -F'\t' '$1=="module" && $3=="ndis.sys" {print $6, $11}' | grep -qx '60.000 0'
}

@test "dpc: interval statistics (how often modules fire)" {
	gen backup "$T/b.evt" > /dev/null
	render dpc --tsv "$T/b.evt" > "$T/t"
	# 4 CPUs x one NDIS DPC per 400 us over 2 s = 10,000 per second
	rate=$(awk -F'\t' '$1=="interval" && $2=="DPC" && $3=="ndis.sys" {print $5}' "$T/t")
	awk -v r="$rate" 'BEGIN{exit !(r > 9900 && r <= 10000)}'
	# on each CPU an NDIS DPC starts every 400 us, a storport ISR every 1500 us
	[ "$(awk -F'\t' '$1=="interval" && $2=="DPC" && $3=="ndis.sys" {print $6, $7, $8}' "$T/t")" = "400.000 400.000 400.000" ]
	[ "$(awk -F'\t' '$1=="interval" && $2=="ISR" && $3=="storport.sys" {print $6, $8}' "$T/t")" = "1500.000 1500.000" ]
	# storport ISRs: one per 1.5 ms per CPU on 4 CPUs
	rate=$(awk -F'\t' '$1=="interval" && $2=="ISR" {print $5}' "$T/t")
	awk -v r="$rate" 'BEGIN{exit !(r > 2600 && r <= 2667)}'
}

@test "dpcstacks: samples inside DPCs/ISRs on the same CPU, as folded stacks by module" {
	gen backup "$T/b.evt" > "$T/b.json"
	render dpcstacks "$T/b.evt" > "$T/f"
	n=$(jq_ "$T/b.json" "d['stacks_samples']['[DPC] ndis.sys']")
	# every line is valid folded; 1 ms samples = 1000 us each
	evtcheck --folded=flamegraph "$T/f"
	[ "$(awk '$0 ~ /^\[DPC\] ndis.sys;/ {s+=$NF} END{print s}' "$T/f")" -eq $((n * 1000)) ]
	grep -q '^\[DPC\] ndis.sys;ntoskrnl.exe!KiIdleLoop;ntoskrnl.exe!KiRetireDpcList;ndis.sys!ndisInterruptDpc;NdisImPlatform.sys!implatReceive;' "$T/f"
	# no sample outside a DPC (Backup.exe) is attributed
	! grep -q 'Backup.exe' "$T/f"
	render dpcstacks --unit samples "$T/b.evt" | awk '{s+=$NF} END{exit !(s == '"$n"')}'
	# time window alone (flags removed) gives the same attribution
	sed 's/\tdpc=1//; s/\tisr=1//' "$T/b.evt" > "$T/noflag.evt"
	render dpcstacks "$T/noflag.evt" > "$T/f2"
	cmp "$T/f" "$T/f2"
	# flags alone (DPC events removed): module unknown, still counted
	grep -v $'\tDPC\t' "$T/b.evt" | grep -v $'\tISR\t' > "$T/noev.evt"
	run render dpcstacks "$T/noev.evt"
	[ "$status" -eq 0 ]
	[[ "$output" == *"had no DPC/ISR event"* ]]
	echo "$output" | grep -q '^\[DPC\] ?;ntoskrnl.exe!KiIdleLoop'
	# the stacks render as a flame graph
	render flame --countname us "$T/f" > "$T/f.svg"
	python3 "$BATS_TEST_DIRNAME/render_svg.py" "$T/f.svg" | grep -q $'^\\[DPC\\] ndis.sys\t'
}

@test "dpcchart: sorted durations of one module, traces overlaid, 100 us line" {
	gen backup "$T/b.evt" > /dev/null
	gen backup "$T/f.evt" --fixed > /dev/null
	render dpcchart -m NDIS.SYS --label before --label 'after <fix>' "$T/b.evt" "$T/f.evt" > "$T/c.svg"
	python3 - "$T/c.svg" <<-'EOF'
	import sys, xml.etree.ElementTree as ET
	ns = "{http://www.w3.org/2000/svg}"
	r = ET.parse(sys.argv[1]).getroot()
	lines = r.findall(".//" + ns + "polyline")
	assert len(lines) == 2, len(lines)
	texts = [t.text or "" for t in r.iter(ns + "text")]
	assert any("100 us guidance" in t for t in texts), texts
	assert any(t.startswith("after <fix>: 19992 DPCs, avg 60.0 us") for t in texts), texts
	assert any(t.startswith("before: 19992 DPCs, avg 220.0 us, max 260.0 us, 100.0% over") for t in texts), texts
	# sorted longest first: y (pixels) never decreases along a series
	for pl in lines:
	    ys = [float(p.split(",")[1]) for p in pl.get("points").split()]
	    assert all(a <= b for a, b in zip(ys, ys[1:])), "not sorted"
	    assert len(ys) <= 2 * 1200, len(ys)
	EOF
	run render dpcchart "$T/b.evt"
	[ "$status" -eq 2 ]
	[[ "$output" == *"needs -m MODULE"* ]]
}

@test "dpc: bad input -- not evt, garbage lines, missing file, no DPC events" {
	printf 'a;b 1\n' > "$T/folded"
	run render dpc "$T/folded"
	[ "$status" -eq 2 ]
	[[ "$output" == *"not an evt stream"* ]]
	gen edges "$T/e.evt" > /dev/null
	{ cat "$T/e.evt"; printf 'garbage\n1.0\tDPC\t0\tIdle\t0\t0\tx\t\n'; } > "$T/bad.evt"
	run render dpc --tsv "$T/bad.evt"
	[ "$status" -eq 1 ]
	[[ "$output" == *"bad.evt:25: fewer than 8"* ]]
	[[ "$output" == *"bad.evt:26: weight column"* ]]
	[[ "$output" == *"2 unusable input lines skipped"* ]]
	echo "$output" | grep -q $'^module\tDPC\tndis.sys\t19\t'
	run render dpc "$T/nope.evt"
	[ "$status" -eq 2 ]
	printf '#evt\t1\n1.0\tSample\t0\ta\t1\t1\t1\ta;b\n' > "$T/nodpc.evt"
	run render dpc "$T/nodpc.evt"
	[ "$status" -eq 0 ]
	[[ "$output" == *"no DPC/ISR events"* ]]
	run render dpc --cpu 'x' "$T/nodpc.evt"
	[ "$status" -eq 2 ]
}

# The real pipeline on the synthesised incident: etlgen writes the ETL,
# etl2evt decodes it, render makes the diagnosis.  Expected values are
# computed here with awk from the evt, independently of render.
incident() {
	local d="$BATS_FILE_TMPDIR/incident"
	if [ ! -s "$d/$1.evt" ]; then
		mkdir -p "$d"
		etlgen -o "$d/$1.etl" "$BATS_TEST_DIRNAME/scenarios/backup-$1.yaml" 2>/dev/null
		etl2evt "$d/$1.etl" > "$d/$1.evt"
	fi
	echo "$d/$1.evt"
}

@test "real pipeline: etlgen incident | etl2evt | render dpc finds NDIS pinning CPUs 0,2,4,6" {
	evt=$(incident incident)
	render dpc --tsv "$evt" > "$T/t"
	want=$(awk -F'\t' '$2=="DPC" {m=""; d=""; for (i=8;i<NF;i++) {if ($i ~ /^module=/) m=substr($i,8); if ($i ~ /^duration_us=/) d=substr($i,13)} if (m=="ndis.sys") {n++; s+=d; if (d+0 > 100) o++}} END{printf "%d %.3f %d", n, s/n, o}' "$evt")
	got=$(awk -F'\t' '$1=="module" && $2=="DPC" && $3=="ndis.sys" {print $4, $6, $11}' "$T/t")
	[ "$want" = "$got" ] || fail "want $want got $got"
	# the top module is ndis.sys, averaging about 220 us
	[ "$(awk -F'\t' '$1=="module" {print $3; exit}' "$T/t")" = ndis.sys ]
	awk -F'\t' '$1=="module" && $3=="ndis.sys" {exit !($6 > 200 && $6 < 240)}' "$T/t"
	# CPUs 0,2,4,6 spend most of their time in DPCs, the others little
	for c in 0 2 4 6; do
		awk -F'\t' -v c=$c '$1=="cpu" && $2==c {exit !($4 > 50)}' "$T/t" || fail "cpu $c not pinned"
	done
	for c in 1 3 8 23; do
		awk -F'\t' -v c=$c '$1=="cpu" && $2==c {exit !($4 < 5)}' "$T/t" || fail "cpu $c pinned"
	done
	grep -q $'^flag\tDPC\tndis.sys\t100\t' "$T/t"
	# xperf view of the same
	render dpcisr "$evt" > "$T/x"
	grep -q "^Total = $(echo "$want" | cut -d' ' -f1) for module ndis.sys$" "$T/x"
}

@test "real pipeline: DPC/ISR usage by module, stack shows the driver chain" {
	evt=$(incident incident)
	render dpcstacks --unit samples "$evt" > "$T/f"
	flagged=$(grep -c $'\tdpc=1\t' "$evt" || true)
	got=$(awk '/^\[DPC\] /{s+=$NF} END{print s}' "$T/f")
	# the window match agrees with the decoder's dpc=1 flags to within 0.5%
	awk -v a="$flagged" -v b="$got" 'BEGIN{d=a-b; if (d<0) d=-d; exit !(a > 1000 && d <= a*0.005)}' ||
	    fail "flagged $flagged, attributed $got"
	# NDIS dominates, with the teaming and filter drivers in its stacks
	top=$(awk '{split($0,a,";"); s[a[1]]+=$NF} END{for (k in s) print s[k], k}' "$T/f" | sort -rn | head -1)
	[[ "$top" == *"[DPC] ndis.sys" ]]
	grep -q '^\[DPC\] ndis.sys;.*e1i65x64.sys!.*iansw60e.sys!.*idsflt64.sys!' "$T/f"
	render dpcstacks "$evt" | render flame --colors etw --countname us > "$T/f.svg"
	python3 "$BATS_TEST_DIRNAME/render_svg.py" "$T/f.svg" | grep -q '^iansw60e.sys!'
}

@test "real pipeline: sorted-durations chart before and after the fix" {
	before=$(incident incident)
	after=$(incident fixed)
	render dpcchart -m ndis.sys --label incident --label fixed "$before" "$after" > "$T/c.svg"
	python3 - "$T/c.svg" <<-'EOF'
	import re, sys, xml.etree.ElementTree as ET
	ns = "{http://www.w3.org/2000/svg}"
	r = ET.parse(sys.argv[1]).getroot()
	texts = [t.text or "" for t in r.iter(ns + "text")]
	leg = {t.split(":")[0]: t for t in texts if re.match(r"^(incident|fixed): ", t)}
	avg = {k: float(re.search(r"avg ([0-9.]+) us", v).group(1)) for k, v in leg.items()}
	assert 200 < avg["incident"] < 240 and avg["fixed"] < 100, avg
	assert len(r.findall(".//" + ns + "polyline")) == 2
	EOF
}

@test "real pipeline: differential flame graph of DPC time, fixed vs incident" {
	before=$(incident fixed)
	after=$(incident incident)
	diff -q --kind=DPC "$before" "$after" > "$T/d"
	render --diff inclusive --countname us "$T/d" > "$T/d.svg"
	python3 "$BATS_TEST_DIRNAME/render_svg.py" "$T/d.svg" > "$T/b"
	# ndis.sys grew the most: pure red; its delta is the diff's column difference
	want=$(awk '$1 ~ /^ndis.sys/ {d += $3 - $2} END{print d}' "$T/d")
	awk -F'\t' -v w="$want" '$1 ~ /^ndis.sys/ && $6=="#ff0000" && $7==w {f=1} END{exit !f}' "$T/b"
	# --negate shows it blue
	render --diff inclusive --negate "$T/d" | python3 "$BATS_TEST_DIRNAME/render_svg.py" /dev/stdin |
	    awk -F'\t' '$1 ~ /^ndis.sys/ && $6=="#0000ff" {f=1} END{exit !f}'
}

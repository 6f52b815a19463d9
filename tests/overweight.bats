#!/usr/bin/env bats
# overweight: PerfView's Overweight report (reference-semantics §2.8).
load helpers

# The worked example of PerfView's guide: main 100->110, f 50->60,
# g 50->50, f calls x 25->35 and y 25->25.
perfview_example() {
	printf 'main;f;x 25\nmain;f;y 25\nmain;g 50\n' >"$T/base"
	printf 'main;f;x 35\nmain;f;y 25\nmain;g 50\n' >"$T/test"
}

# field NAME COLUMN from the TSV on stdin (columns: where base test delta
# resp_pct overweight_pct interest noise_pct noisy name)
col() { awk -F'\t' -v n="$1" -v c="$2" '$10 == n { print $c }'; }

@test "PerfView's worked example: f 200 %, g 0 %, x 400 %, y 0 %, exactly" {
	perfview_example
	run overweight --tsv --min-resp 0 "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	[ "$(col f 6 <<<"$output")" = 200 ]
	[ "$(col g 6 <<<"$output")" = 0 ]
	[ "$(col x 6 <<<"$output")" = 400 ]
	[ "$(col y 6 <<<"$output")" = 0 ]
	[ "$(col main 6 <<<"$output")" = 100 ]
	# responsibility: f and x carry the whole +10
	[ "$(col f 5 <<<"$output")" = 100 ]
	[ "$(col x 5 <<<"$output")" = 100 ]
	[ "$(col g 5 <<<"$output")" = 0 ]
	[ "${lines[0]}" = "$(printf '#totals\tbase=100\ttest=110\tdelta=10\tgrowth=1.1000')" ]
}

@test "PerfView's interest score and sort order (interest, overweight desc, delta asc)" {
	perfview_example
	run overweight --tsv "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	# x: |ow|>110, resp>5, resp>20, 35/110<0.95, <0.75 -> 5; f the same with a lower
	# overweight; main: resp>5, resp>20 -> 2
	[ "$(col x 7 <<<"$output")" = 5 ]
	[ "$(col f 7 <<<"$output")" = 5 ]
	[ "$(col main 7 <<<"$output")" = 2 ]
	names=$(awk -F'\t' 'NR > 2 { print $10 }' <<<"$output" | tr '\n' ' ')
	[ "$names" = "x f main " ]
}

@test "the 2 % responsibility cut hides g and y, and is configurable" {
	perfview_example
	run overweight --tsv "$T/base" "$T/test"
	[ "$(col g 6 <<<"$output")" = "" ]
	[ "$(col y 6 <<<"$output")" = "" ]
	run overweight --tsv -r 0 "$T/base" "$T/test"
	[ "$(col g 6 <<<"$output")" = 0 ]
	run overweight --tsv --all "$T/base" "$T/test"
	[ "$(col y 6 <<<"$output")" = 0 ]
	# a cut above 100 % leaves nothing
	run overweight --tsv -r 101 "$T/base" "$T/test"
	[ "${#lines[@]}" -eq 2 ]
}

@test "the text table is aligned and names both sections" {
	perfview_example
	run overweight "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Base (old)"*": 100"* ]]
	[[ "$output" == *"Delta: +10 (+10.00%), growth 1.1000"* ]]
	[[ "$output" == *"Names in both traces"* ]]
	[[ "$output" == *"Names in only one trace"* ]]
	# every data row of the first table has its Name column at the same offset
	offs=$(awk '/^Names in both/ { t = 1; next } /^$/ { t = 0 } t && /Name$/ { h = index($0, "Name") }
	    t && !/Name$/ { print (index($0, $NF) == h) }' <<<"$output" | sort -u)
	[ "$offs" = 1 ]
	[[ "$(grep -E ' x$' <<<"$output")" == *"400.0"* ]]
}

@test "a sample counted once per name even when the name recurs on the stack" {
	printf 'a;b;a;b 10\nc 10\n' >"$T/base"
	printf 'a;b;a;b 30\nc 10\n' >"$T/test"
	run overweight --tsv "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	[ "$(col a 2 <<<"$output")" = 10 ]
	[ "$(col a 3 <<<"$output")" = 30 ]
	[ "$(col b 3 <<<"$output")" = 30 ]
}

@test "--collapse: names on exactly the same stacks read as one row, caller first" {
	printf 'm;a;b;c 10\nm;z;c 10\nm;y 10\n' >"$T/base"
	printf 'm;a;b;c 30\nm;z;c 10\nm;y 10\n' >"$T/test"
	run overweight -c "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	[[ "$output" == *" a  [+1 on the same stacks: b]"* ]]
	[ -z "$(grep -E ' b$' <<<"$output")" ]
	# c is also on m;z;c: not the same stacks, its own row
	[[ "$(grep -E ' c$' <<<"$output")" == *"+20"* ]]
	run overweight "$T/base" "$T/test"
	[[ "$(grep -E ' b$' <<<"$output")" == *"+20"* ]]
}

@test "names present in only one trace are listed in their own section" {
	printf 'main;old 40\nmain;same 60\n' >"$T/base"
	printf 'main;new 50\nmain;same 60\n' >"$T/test"
	run overweight --tsv "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	[ "$(col old 1 <<<"$output")" = base_only ]
	[ "$(col old 4 <<<"$output")" = -40 ]
	[ "$(col new 1 <<<"$output")" = test_only ]
	[ "$(col new 3 <<<"$output")" = 50 ]
	# resp is relative to the total delta (+10): +500 % and -400 %
	[ "$(col new 5 <<<"$output")" = 500 ]
	[ "$(col old 5 <<<"$output")" = -400 ]
	# no overweight for them (PerfView would have dropped them)
	[ "$(col new 6 <<<"$output")" = "" ]
	run overweight "$T/base" "$T/test"
	[[ "$(sed -n '/only one trace/,$p' <<<"$output")" == *"new"*"old"* ]]
}

@test "sampling noise: a 3-sample regression is marked, a 1000-sample one is not" {
	printf 'main;small 2\nmain;big 1000\nmain;rest 10000\n' >"$T/base"
	printf 'main;small 5\nmain;big 2000\nmain;rest 10000\n' >"$T/test"
	run overweight --tsv -r 0 "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	# sqrt(2+5)/3 = 88 %, under two standard errors
	[ "$(col small 9 <<<"$output")" = 1 ]
	[[ "$(col small 8 <<<"$output")" == 88.19* ]]
	[ "$(col big 9 <<<"$output")" = 0 ]
	run overweight -r 0 "$T/base" "$T/test"
	[[ "$(grep -E ' small$' <<<"$output")" == *"88?"* ]]
	[[ "$(grep -E ' big$' <<<"$output")" != *"?"* ]]
}

@test "--per-sample: microsecond weights are converted to samples for the noise column" {
	printf 'main;small 2000\nmain;rest 100000\n' >"$T/base"
	printf 'main;small 5000\nmain;rest 100000\n' >"$T/test"
	run overweight --tsv --per-sample 1000 "$T/base" "$T/test"
	[ "$(col small 9 <<<"$output")" = 1 ]
	run overweight --tsv "$T/base" "$T/test"
	[ "$(col small 9 <<<"$output")" = 0 ]
}

@test "equal totals: no division by zero, changes ranked by size" {
	printf 'main;a 50\nmain;b 50\n' >"$T/base"
	printf 'main;a 70\nmain;b 30\n' >"$T/test"
	run overweight --tsv "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	[[ "$output" != *nan* ]]
	[ -z "$(tail -n +3 <<<"$output" | cut -f6 | tr -d '\n')" ]
	[ "$(col a 4 <<<"$output")" = 20 ]
	[ "$(col a 5 <<<"$output")" = 20 ]
	[ "$(col a 6 <<<"$output")" = "" ]
	[ "$(col b 5 <<<"$output")" = -20 ]
	run overweight "$T/base" "$T/test"
	[[ "$output" == *"Totals are equal"* ]]
}

@test "one two-count file (diff's output) gives the same report as two files" {
	perfview_example
	overweight --tsv "$T/base" "$T/test" >"$T/two"
	diff -q "$T/base" "$T/test" >"$T/d.folded"
	run overweight --tsv "$T/d.folded"
	[ "$status" -eq 0 ]
	[ "$(tail -n +2 "$T/two")" = "$(tail -n +2 <<<"$output")" ]
	run overweight --tsv - <"$T/d.folded"
	[ "$(col x 6 <<<"$output")" = 400 ]
	run overweight --preset=module "$T/d.folded"
	[ "$status" -eq 2 ]
}

@test "empty inputs, one side empty, zero totals" {
	: >"$T/empty"
	run overweight "$T/empty" "$T/empty"
	[ "$status" -eq 0 ]
	[[ "$output" == *"Totals are equal"* ]]
	printf 'main;f 10\n' >"$T/one"
	run overweight --tsv "$T/empty" "$T/one"
	[ "$status" -eq 0 ]
	[ "$(col f 1 <<<"$output")" = test_only ]
	[[ "${lines[0]}" == *"growth=-"* ]]
	run overweight --tsv "$T/one" "$T/empty"
	[ "$(col f 1 <<<"$output")" = base_only ]
	printf 'main;f 0\n' >"$T/zero"
	run overweight --tsv "$T/zero" "$T/zero"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "garbage lines are reported with file:line, counted, and the rest is used" {
	perfview_example
	printf 'main;f;x 25\nno count here\nmain;f;y 25\nmain;g -3\nmain;g 50\n' >"$T/base"
	run overweight --tsv "$T/base" "$T/test"
	[ "$status" -eq 1 ]
	[[ "$output" == *"overweight: $T/base:2: "* ]]
	[[ "$output" == *"overweight: $T/base:4: "* ]]
	[[ "$output" == *"2 unusable lines skipped"* ]]
	[ "$(col x 6 <<<"$output")" = 400 ]
}

@test "usage errors and unreadable files exit 2" {
	run overweight
	[ "$status" -eq 2 ]
	run overweight "$T/nope" "$T/nope2"
	[ "$status" -eq 2 ]
	[[ "$output" == *"nope"* ]]
	run overweight - -
	[ "$status" -eq 2 ]
	run overweight --version
	[ "$status" -eq 0 ]
	[[ "$output" == "overweight (etlkit) "* ]]
	perfview_example
	run overweight -o /dev/full "$T/base" "$T/test"
	[ "$status" -eq 2 ]
}

@test "stackfold's grouping options: overweight by module" {
	printf 'app.exe!main;ntdll.dll!Wait 50\napp.exe!main;ntdll.dll!Call;app.exe!Parse;ntdll.dll!Read 50\n' >"$T/base"
	printf 'app.exe!main;ntdll.dll!Wait 50\napp.exe!main;ntdll.dll!Call;app.exe!Parse;ntdll.dll!Read 80\n' >"$T/test"
	run overweight --tsv -r 0 --preset=module "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	# app: 100 -> 130; ntdll: 100 -> 130 (counted once per stack although it recurs)
	[ "$(col 'module app.exe' 3 <<<"$output")" = 130 ]
	[ "$(col 'module ntdll.dll' 3 <<<"$output")" = 130 ]
	[ "$(col 'module ntdll.dll' 6 <<<"$output")" = 100 ]
	[ "$(col 'app.exe!Parse' 3 <<<"$output")" = "" ]
}

@test "evt input: overweight of the Sample stacks, ids stripped" {
	{
		printf '#evt\t1\n'
		for i in 1 2 3 4; do printf '0.%d\tSample\t0\ta.exe\t1\t2\t1\tip=0x1\tapp.exe!main;app.exe!f\n' $i; done
		for i in 5 6 7 8; do printf '0.%d\tSample\t0\ta.exe\t1\t2\t1\tip=0x1\tapp.exe!main;app.exe!g\n' $i; done
	} >"$T/a.evt"
	{
		printf '#evt\t1\n'
		for i in 1 2 3 4 5 6 7 8; do printf '0.%d\tSample\t0\ta.exe\t9\t8\t1\tip=0x1\tapp.exe!main;app.exe!f\n' $i; done
		for i in 5 6 7 8; do printf '0.%d\tSample\t0\ta.exe\t9\t8\t1\tip=0x1\tapp.exe!main;app.exe!g\n' $i; done
	} >"$T/b.evt"
	run overweight --tsv --roots=thread --unit=samples "$T/a.evt" "$T/b.evt"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(printf '#totals\tbase=8\ttest=12\tdelta=4\tgrowth=1.5000\tunit=samples')" ]
	# f: 4 -> 8, expected 4 * 0.5 = 2, overweight 200 %
	[ "$(col 'app.exe!f' 6 <<<"$output")" = 200 ]
	[ "$(col 'a' 6 <<<"$output")" = 100 ]
	[ "$(col 'Thread' 6 <<<"$output")" = 100 ]
}

# The demo's incident, synthesised: backup-fixed (ndis.sys DPCs ~90 us) as
# the baseline, backup-incident (~220 us) as the test.
incident_evt() {
	local d="$BATS_FILE_TMPDIR" s
	for s in fixed incident; do
		[ -s "$d/$s.evt" ] && continue
		etlgen -o "$d/$s.etl" "$BATS_TEST_DIRNAME/scenarios/backup-$s.yaml" 2>/dev/null
		# --no-symbols: the routine stays ndis.sys!0x1a2b0 whatever PDBs the machine has
		etl2evt --no-symbols "$d/$s.etl" >"$d/$s.evt"
	done
	FIXED="$d/fixed.evt" BROKEN="$d/incident.evt"
}

# first data row of a TSV report: "where name noisy delta"
first_row() { awk -F'\t' 'NR == 3 { print $1, $10, $9, ($4 > 0) }' <<<"$output"; }

@test "DPC incident: fixed vs broken ranks ndis.sys's DPC path first" {
	incident_evt
	# the DPC/ISR view (WPA's DPC duration by module, function)
	run overweight --tsv --kind=DPC,ThreadedDPC,TimerDPC,ISR --keep-addrs "$FIXED" "$BROKEN"
	[ "$status" -eq 0 ]
	[ "$(first_row)" = "both ndis.sys!0x1a2b0 0 1" ]
	# the CPU view: the DPC routine, then what it calls (overweight is the same
	# down the path; the caller comes first), not the idle loop that lost time
	run overweight --tsv --keep-idle --keep-addrs "$FIXED" "$BROKEN"
	[ "$status" -eq 0 ]
	[ "$(first_row)" = "both ndis.sys!0x1a2b0 0 1" ]
	[ "$(awk -F'\t' 'NR == 4 { print $10 }' <<<"$output")" = 'e1i65x64.sys!0x1b5e4' ]
	run overweight --tsv --keep-idle --preset=module "$FIXED" "$BROKEN"
	[ "$(first_row)" = "both module ndis.sys 0 1" ]
	run overweight --collapse --keep-idle --keep-addrs "$FIXED" "$BROKEN"
	[[ "$(grep -m1 -E '^ +[0-9]' <<<"$output")" == *" ndis.sys!0x1a2b0  [+1 on the same stacks: e1i65x64.sys!0x1b5e4]" ]]
	# diff: the DPC time more than doubled, all of it in ndis.sys's routine
	run diff -t --kind=DPC,ThreadedDPC,TimerDPC,ISR "$FIXED" "$BROKEN"
	[ "$(awk -F'\t' '$1 == "delta_pct" { print ($2 > 100) }' <<<"$output")" = 1 ]
	run diff -q -f signed --kind=DPC,ThreadedDPC,TimerDPC,ISR --keep-addrs "$FIXED" "$BROKEN"
	[ "$(sort -k2 -g <<<"$output" | tail -1 | cut -d' ' -f1)" = 'ndis.sys!0x1a2b0' ]
}

@test "gen_folded data: every row agrees with an independent implementation of §2.8" {
	# the two halves of one file, with ndis.sys's stacks three times heavier in the second
	python3 "$GEN_FOLDED" --size 4M --seed 3 >"$T/g"
	n=$(wc -l <"$T/g")
	head -n $((n / 2)) "$T/g" >"$T/a"
	tail -n +$((n / 2 + 1)) "$T/g" | awk '/ndis.sys/ { $NF = $NF * 3 } { print }' >"$T/b"
	overweight --tsv -r 0 "$T/a" "$T/b" >"$T/got"
	[ "$(grep -c '^both' "$T/got")" -gt 1000 ]
	python3 - "$T/a" "$T/b" "$T/got" <<'PY'
import sys
def load(path):
    inc, total = {}, 0
    for line in open(path):
        stack, count = line.rstrip("\n").rsplit(" ", 1)
        count = int(count)
        total += count
        for name in set(stack.split(";")):
            inc[name] = inc.get(name, 0) + count
    return inc, total
b, B = load(sys.argv[1])
t, T = load(sys.argv[2])
g = T / B
rows = {}
for line in open(sys.argv[3]):
    f = line.rstrip("\n").split("\t")
    if f[0] in ("both", "base_only", "test_only"):
        rows[f[9]] = f
both = [n for n in b if n in t]
assert sum(1 for r in rows.values() if r[0] == "both") == len(both), "row count"
assert sum(1 for r in rows.values() if r[0] != "both") == len(set(b) ^ set(t)), "one-side count"
close = lambda x, y: abs(x - y) <= 1e-5 * max(1, abs(y))
for n in both:
    r = rows[n]
    d = t[n] - b[n]
    ow = d / (b[n] * (g - 1)) * 100
    resp = d / (T - B) * 100
    i = (abs(ow) > 110) + (abs(resp) > 5) + (abs(resp) > 20) + (abs(resp) > 100) + (t[n] / T < 0.95) + (t[n] / T < 0.75)
    assert (int(r[1]), int(r[2]), int(r[3])) == (b[n], t[n], d), n
    assert close(float(r[4]), resp) and close(float(r[5]), ow), (n, r, resp, ow)
    assert int(r[6]) == i, (n, r[6], i)
# the order: interest desc, overweight desc, delta asc
order = [r for r in rows.values() if r[0] == "both"]
got = [line.split("\t")[9].rstrip("\n") for line in open(sys.argv[3]) if line.startswith("both\t")]
key = lambda n: (-int(rows[n][6]), -float(rows[n][5]), int(rows[n][3]))
assert got == sorted(got, key=key), "order"
PY
}

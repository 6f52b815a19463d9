#!/usr/bin/env bats
# aggregate: scenario sets (PerfView SaveScenarioCPUStacks + scenarioSet),
# exact totals, Which histogram, merge of partial aggregates.
load helpers

# exact decimal sum of the last column of folded files (python Decimal)
folded_total() {
	python3 -c '
import sys, gzip, decimal
t = decimal.Decimal(0)
for p in sys.argv[1:]:
    op = gzip.open if open(p, "rb").read(2) == b"\x1f\x8b" else open
    with op(p, "rt") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                t += decimal.Decimal(line.rsplit(" ", 1)[1])
print(t.normalize() if t != t.to_integral() else int(t))' "$@"
}

# realistic folded input: gen_folded.py output with some fractional counts
make_scenarios() {
	local n=$1 size=$2 i
	for i in $(seq 1 "$n"); do
		python3 "$GEN_FOLDED" --size "$size" --seed "$i" |
			awk -v s="$i" 'NR % 7 == 0 { sub(/ [0-9]+$/, " " $NF "." s) } { print }' \
			>"$T/night-$i.folded"
	done
}

@test "scenario frame above the process, names from --match/--name, sorted output" {
	printf 'app.exe;a;b 3\napp.exe;a 2\n' >"$T/run-7.folded"
	printf 'app.exe;a;b 5\n' | gzip >"$T/run-10.folded.gz"
	run aggregate -p 'run-*.*' -n 'startup $1' "$T/run-7.folded" "$T/run-10.folded.gz"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'startup 10;app.exe;a;b 5\nstartup 7;app.exe;a 2\nstartup 7;app.exe;a;b 3')" ]
	# default name: the base name without data suffixes
	run aggregate "$T/run-10.folded.gz"
	[ "$output" = "run-10;app.exe;a;b 5" ]
	# a file the pattern does not match is reported and skipped: exit 1
	run aggregate -p 'startup-*.folded' "$T/run-7.folded"
	[ "$status" -eq 1 ]
	[[ "$output" == *"run-7.folded: file name does not match"* ]]
}

@test "sum mode conserves the total exactly over 6 realistic scenarios (fractions too)" {
	make_scenarios 6 300K
	run aggregate -o "$T/all.folded" -b "$T/bn.tsv" "$T"/night-*.folded
	[ "$status" -eq 0 ]
	want=$(folded_total "$T"/night-*.folded)
	[ "$(folded_total "$T/all.folded")" = "$want" ]
	# every scenario's own lines add up to its input file
	for i in 1 4 6; do
		got=$(grep "^night-$i;" "$T/all.folded" | sed 's/^[^;]*;//' >"$T/s$i"; folded_total "$T/s$i")
		[ "$got" = "$(folded_total "$T/night-$i.folded")" ] || fail "scenario $i: $got"
	done
	# without the scenario frame: same total, and each stack's weight is the sum over scenarios
	aggregate -S "$T"/night-*.folded >"$T/sum.folded"
	[ "$(folded_total "$T/sum.folded")" = "$want" ]
	[ "$(cut -d' ' -f1 "$T/sum.folded" | sort | uniq -d | wc -l)" -eq 0 ]
	# the by-name header carries the same total, and the ROOT-level scenario rows sum to it
	grep -q "^#byname	total=$want	scenarios=6	mode=sum$" "$T/bn.tsv"
	# output reads back as valid folded stacks for flamegraph.pl
	evtcheck --folded=flamegraph "$T/all.folded"
}

@test "mean mode divides by the scenario count; --integer keeps the rounded total" {
	printf 'p;a 3\np;b 1\n' >"$T/s1.folded"
	printf 'p;a 4\np;c 1\n' >"$T/s2.folded"
	printf 'p;a 5\n' >"$T/s3.folded"
	run aggregate -S -m mean "$T"/s?.folded
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'p;a 4\np;b 0.333333\np;c 0.333333')" ]
	run aggregate -S -m mean -i "$T"/s?.folded
	# 14/3 = 4.67 -> 5 in total: the largest remainder (first of the equal ones) gets the unit
	[ "$output" = "$(printf 'p;a 4\np;b 1')" ]
	aggregate -m mean -i "$T"/s?.folded >"$T/m.folded"
	evtcheck --folded=speedscope "$T/m.folded"
	[ "$(folded_total "$T/m.folded")" = 5 ]
}

@test "--integer on a large mean keeps the total: round(sum/N) exactly" {
	make_scenarios 3 200K
	aggregate -S -m mean -i "$T"/night-*.folded >"$T/m.folded"
	want=$(python3 -c 'import sys,decimal; print(int((decimal.Decimal(sys.argv[1])/3).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP)))' "$(folded_total "$T"/night-*.folded)")
	[ "$(folded_total "$T/m.folded")" = "$want" ]
	evtcheck --folded=inferno "$T/m.folded"
}

@test "by-name table: exclusive, inclusive once per stack (recursion), per-scenario columns, Which" {
	# scenario A: 10 in f (recursive f;g;f), scenario B: 2 in f, scenario C: nothing in f
	printf 'p;f;g;f 10\np;h 10\n' >"$T/A.folded"
	printf 'p;f 2\np;h 18\n' >"$T/B.folded"
	printf 'p;h 20\n' >"$T/C.folded"
	aggregate -S -b "$T/bn.tsv" "$T/A.folded" "$T/B.folded" "$T/C.folded" >/dev/null
	run grep -P '^f\t' "$T/bn.tsv"
	# exc 12 (leaf f in A and B), inc 12 (not 20: the recursive stack counts once)
	# Which: 100% = half the largest scenario total (20/2 = 10): A 10 -> 'A', B 2 -> '2', C none -> '_'
	[ "$output" = "$(printf 'f\t12\t20.00\t12\t20.00\tA2_\t10\t2\t0')" ]
	run grep -P '^p\t' "$T/bn.tsv"
	[ "$output" = "$(printf 'p\t0\t0.00\t60\t100.00\tKKK\t20\t20\t20')" ]
	head -4 "$T/bn.tsv" | grep -q "^#scenario	2	B	files=1	total=20$"
	# rows are sorted by exclusive weight
	[ "$(awk -F'\t' 'NR > 5 { print $1 }' "$T/bn.tsv" | head -1)" = h ]
}

@test "Which histogram packs more than 32 scenarios into 32 characters, averaging" {
	for i in $(seq -w 1 64); do
		if [ $((10#$i % 2)) -eq 0 ]; then printf 'p;x 4\n'; else printf 'p;y 4\n'; fi >"$T/s$i.folded"
	done
	aggregate -S -b "$T/bn.tsv" "$T"/s*.folded >/dev/null
	which=$(awk -F'\t' '$1 == "x" { print $6 }' "$T/bn.tsv")
	# each character averages two scenarios (one with 4, one with 0): 2 of scale 2 = 100% -> 'A'
	[ "$which" = "$(printf 'A%.0s' $(seq 32))" ]
	[ "$(awk -F'\t' '$1 == "x" { print NF }' "$T/bn.tsv")" -eq $((6 + 64)) ]
}

@test "PerfView's histogram characters at their edges" {
	printf 'p;a 1000\n' >"$T/big.folded"
	for v in 0.5 5 50 150 349 351; do printf "p;v$v $v\n"; done >"$T/small.folded"
	aggregate -S -b "$T/bn.tsv" "$T/big.folded" "$T/small.folded" >/dev/null
	# scale = 1000/2 = 500: 0.5 -> 0.1% 'o'; 5 -> 1% '0'; 50 -> 10% '1'; 150 -> 30% '3'; 349 -> 69.8% '6'
	for pair in v0.5:_o v5:_0 v50:_1 v150:_3 v349:_6 v351:_7 a:K_; do
		got=$(awk -F'\t' -v n="p" -v r="${pair%%:*}" '$1 == r { print $6 }' "$T/bn.tsv")
		[ "$got" = "${pair#*:}" ] || fail "${pair%%:*}: $got"
	done
}

@test "merge of partial aggregates is associative and equals one run over everything" {
	make_scenarios 5 150K
	aggregate -o "$T/all.folded" -b "$T/all.tsv" "$T"/night-*.folded
	aggregate -o "$T/p1.folded" "$T/night-1.folded" "$T/night-2.folded"
	aggregate -o "$T/p2.folded" "$T/night-3.folded"
	aggregate -o "$T/p3.folded" "$T/night-4.folded" "$T/night-5.folded"
	aggregate -M -o "$T/m12.folded" "$T/p1.folded" "$T/p2.folded"
	aggregate -M -o "$T/left.folded" "$T/m12.folded" "$T/p3.folded"
	aggregate -M -o "$T/m23.folded" "$T/p2.folded" "$T/p3.folded"
	aggregate -M -o "$T/right.folded" -b "$T/right.tsv" "$T/p1.folded" "$T/m23.folded"
	cmp "$T/all.folded" "$T/left.folded"
	cmp "$T/all.folded" "$T/right.folded"
	# the by-name table from merged partials equals the one from the whole run
	sed 's/files=[0-9]*//' "$T/all.tsv" >"$T/a"; sed 's/files=[0-9]*//' "$T/right.tsv" >"$T/b"
	cmp "$T/a" "$T/b"
	# a partial without scenario frames is refused line by line
	printf 'nosemicolon 3\n' >"$T/bad.folded"
	run aggregate -M "$T/bad.folded" "$T/p2.folded"
	[ "$status" -eq 1 ]
	[[ "$output" == *"bad.folded:1: merge input line has no scenario frame"* ]]
}

@test "evt input: stacks as stackfold makes them, under a process frame; DPC kinds by routine; grouping options" {
	{
		printf '#evt\t1\tsource=x.etl\tscenario=from-header\n'
		printf '0.100000\tSample\t0\tBackup.exe\t2212\t4100\t1\tip=0x1\tntdll.dll!A;B.dll!b%%3Bc\n'
		printf '0.200000\tDPC\t2\tIdle\t0\t0\t0.2205\troutine=ndis.sys!0x1a2b0\tmodule=ndis.sys\t\n'
		printf '#skipped\twhat=x\tcount=1\n'
		printf '0.300000\tSample\t1\tBackup.exe\t2212\t4100\t0.1221\tip=0x1\tntdll.dll!A\n'
		printf '0.400000\tCSwitch\t1\tBackup.exe\t2212\t4100\t0\told_tid=1\t\n'
	} >"$T/x.evt"
	run aggregate -u ms "$T/x.evt"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'from-header;Backup.exe;ntdll.dll!A 0.1221\nfrom-header;Backup.exe;ntdll.dll!A;B.dll!b:c 1')" ]
	# stacks are made by lib/stacks exactly as stackfold makes them: unknown addresses
	# grouped as module!? (PerfView) unless --keep-addrs, roots and units as stackfold's
	run aggregate -k dpc -n night "$T/x.evt"
	[ "$output" = "night;Idle;ndis.sys!? 220.5" ]
	run aggregate -k dpc --keep-addrs -n night "$T/x.evt"
	[ "$output" = "night;Idle;ndis.sys!0x1a2b0 220.5" ]
	run aggregate -k all --pid -S "$T/x.evt"
	[ "${lines[0]}" = "Backup.exe-2212;ntdll.dll!A 122.1" ]
	[ "${#lines[@]}" -eq 3 ]
	aggregate -S -i --roots=none "$T/x.evt" >"$T/a"
	stackfold --no-scenario "$T/x.evt" >"$T/b"
	cmp "$T/a" "$T/b"
	# stackfold's grouping options shape every input, evt from stdin too
	run aggregate -u us -n 'piped $1' --group='ntdll.dll!->OS' - <"$T/x.evt"
	[ "$output" = "$(printf 'piped stdin;Backup.exe;OS 122.1\npiped stdin;Backup.exe;OS;B.dll!b:c 1000')" ]
	printf 'p;ntdll.dll!X;a 3\n' >"$T/f.folded"
	run aggregate -S --group='ntdll.dll!->OS' "$T/f.folded"
	[ "$output" = "p;OS;a 3" ]
}

@test "bad input: malformed lines named by file:line, unreadable and corrupt files skipped, exit 1" {
	printf 'p;a 3\nthis line has no count\np;b 1\n' >"$T/bad.folded"
	printf 'p;a 5\n' >"$T/good.folded"
	random_bytes 1 2000 | gzip | head -c 700 >"$T/trunc.folded.gz"
	run aggregate -S "$T/bad.folded" "$T/good.folded" "$T/missing.folded" "$T/trunc.folded.gz"
	[ "$status" -eq 1 ]
	[[ "$output" == *"bad.folded:2: not a folded stack line"* ]]
	[[ "$output" == *"missing.folded: No such file or directory; skipped"* ]]
	[[ "$output" == *"trunc.folded.gz: truncated gzip stream at compressed byte 700"* ]]
	[[ "$output" == *"p;a 8"* ]]
	[[ "$output" == *"p;b 1"* ]]
	# no input at all and unknown options are usage errors
	run aggregate
	[ "$status" -eq 2 ]
	run aggregate -m median "$T/good.folded"
	[ "$status" -eq 2 ]
	# an unwritable output is fatal and leaves nothing behind
	run aggregate -o "$T/nodir/out.folded" "$T/good.folded"
	[ "$status" -eq 2 ]
}

@test "--list names scenarios explicitly; two files of one scenario are summed" {
	printf 'p;a 3\n' >"$T/1.folded"
	printf 'p;a 4\n' >"$T/2.folded"
	printf 'p;b 1\n' >"$T/3.folded"
	printf 'base\t%s\nbase\t%s\n# comment\ntest\t%s\n' "$T/1.folded" "$T/2.folded" "$T/3.folded" >"$T/list"
	run aggregate -l "$T/list" -b "$T/bn.tsv"
	[ "$output" = "$(printf 'base;p;a 7\ntest;p;b 1')" ]
	grep -q "^#scenario	1	base	files=2	total=7$" "$T/bn.tsv"
}

@test "outputs are written atomically: no temporary file left, previous output intact on failure" {
	printf 'p;a 3\n' >"$T/a.folded"
	aggregate -o "$T/out.folded" -b "$T/out.tsv" "$T/a.folded"
	[ "$(ls -A "$T" | grep -c tmp)" -eq 0 ]
	cp "$T/out.folded" "$T/before"
	run aggregate -o "$T/out.folded" -b "$T/nodir/x.tsv" "$T/a.folded"
	[ "$status" -eq 2 ]
	cmp "$T/before" "$T/out.folded"
	run aggregate -o /dev/full "$T/a.folded"
	[ "$status" -eq 2 ]
}

@test "real traces: the Sample weight of each corpus trace's decode is conserved, gzip evt read in place" {
	require_corpus
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$T/net.evt"
	etl2evt "$CORPUS/perfview/ctf-net45-win7.etl.zip" | gzip >"$T/ctf.evt.gz"
	run aggregate --keep-idle -u us -b "$T/bn.tsv" -o "$T/all.folded" "$T/net.evt" "$T/ctf.evt.gz"
	[ "$status" -eq 0 ]
	for s in net ctf; do
		f=$T/net.evt; [ $s = ctf ] && f=$T/ctf.evt.gz
		want=$(evtcheck -c "$f" | awk -F'\t' '$1 == "Sample" { printf "%d\n", $3 * 1000 + 0.5 }')
		got=$(awk -F'\t' -v s="$s" '$1 == "#scenario" && $3 == s { sub(/total=/, "", $5); print $5 }' "$T/bn.tsv")
		[ "$got" = "$want" ] || fail "$s: aggregated $got us, decoded $want us"
		[ "$(grep "^$s;" "$T/all.folded" | awk '{ s += $NF } END { printf "%d\n", s }')" = "$want" ]
	done
	# the busiest process of net.4.5.2.x64 (README: Test.x64.exe, 5,129 samples of 1 ms)
	[ "$(grep '^net;Test.x64.exe;' "$T/all.folded" | awk '{ s += $NF } END { print s }')" -eq 5129000 ]
	# Which (scenarios in name order: ctf, net): Test.x64.exe is net's only
	awk -F'\t' '$1 == "Test.x64.exe" { print $6 }' "$T/bn.tsv" | grep -q '^_[0-9A-Z]$'
	evtcheck --folded=speedscope "$T/all.folded"
}

@test "hostile name patterns: many \$ references and a backtracking glob stay bounded" {
	long=$(printf 'a%.0s' $(seq 200))
	printf 'p;x 1\n' >"$T/$long.folded"
	run aggregate -n "$(printf '$0%.0s' $(seq 100))" "$T/$long.folded"
	[ "$status" -eq 0 ]
	[ "${#output}" -eq $((200 * 100 + 6)) ]
	# a pattern that would backtrack for ages is cut off: reported as not matching, quickly
	start=$(date +%s)
	run aggregate -p "$(printf '*a%.0s' $(seq 30))*b" "$T/$long.folded"
	[ "$status" -eq 1 ]
	[[ "$output" == *"does not match"* ]]
	[ $(($(date +%s) - start)) -lt 5 ]
}

#!/usr/bin/env bats
# The evt/folded reader in lib/evt/evt.c, through the evtcheck test tool.
load helpers

@test "evtcheck accepts a well-formed evt stream and sums weight per kind" {
	printf '#evt\t1\tsource=x\n0.100000\tSample\t0\ta.exe\t1\t2\t1\tip=0x1\tA!a;B!b\n0.200000\tDPC\t1\tIdle\t0\t0\t0.22\troutine=x\t\n' >"$T/a.evt"
	run evtcheck -c "$T/a.evt"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(printf 'Sample\t1\t1.000000')" ]
	[ "${lines[1]}" = "$(printf 'DPC\t1\t0.220000')" ]
}

@test "evtcheck rejects a line without the stack column, naming the line" {
	printf '#evt\t1\n0.100000\tSample\t0\ta.exe\t1\t2\t1\n' >"$T/a.evt"
	run evtcheck "$T/a.evt"
	[ "$status" -eq 1 ]
	[[ "$output" == *"a.evt:2:"*"stack column"* ]]
}

@test "evtcheck rejects a newer evt major version" {
	printf '#evt\t2\n' >"$T/a.evt"
	run evtcheck "$T/a.evt"
	[ "$status" -eq 1 ]
	[[ "$output" == *"newer"* ]]
}

@test "folded grammars: speedscope refuses fractions and two columns, flamegraph accepts them" {
	printf 'a;b 1.5\n' >"$T/f"
	run evtcheck --folded=flamegraph "$T/f"; [ "$status" -eq 0 ]
	run evtcheck --folded=speedscope "$T/f"; [ "$status" -eq 1 ]
	printf 'a;b 1 2\n' >"$T/g"
	run evtcheck --folded=flamegraph "$T/g"; [ "$status" -eq 0 ]
	run evtcheck --folded=speedscope "$T/g"; [ "$status" -eq 1 ]
}

@test "readers take gzip input transparently, including concatenated members" {
	{ printf 'a;b 1\n' | gzip; printf 'a;c 2\n' | gzip; } >"$T/f.gz"
	run evtcheck -c --folded=inferno "$T/f.gz"
	[ "$status" -eq 0 ]
	[ "$output" = "lines 2 total 3.000000" ]
}

@test "a truncated gzip stream is an error, not a short read" {
	seq 1 20000 | sed 's/^/a;b /' | gzip >"$T/f.gz"
	head -c 5000 "$T/f.gz" >"$T/cut.gz"
	run evtcheck --folded=inferno "$T/cut.gz"
	[ "$status" -eq 2 ]
	[[ "$output" == *"cut.gz: truncated gzip stream"* ]]
}

@test "one contract: every evt reader refuses the same lines in the same words" {
	{
		printf '#evt\t1\n'
		printf '0.100000\tSample\t0\ta.exe\t1\t2\t1\tA!a\n'
		printf '0.100000\tSample\t0\ta.exe\t1\t2\n'
		printf '0.100000\tSample\t0\ta.exe\t1\t2\t1\n'
		printf '0.100000\t\t0\ta.exe\t1\t2\t1\tA!a\n'
		printf 'x\tSample\t0\ta.exe\t1\t2\t1\tA!a\n'
		printf '0.100000\tSample\t70000\ta.exe\t1\t2\t1\tA!a\n'
		printf '0.100000\tSample\t0\ta.exe\t+1\t2\t1\tA!a\n'
		printf '0.100000\tSample\t0\ta.exe\t1\t 2\t1\tA!a\n'
		printf '0.100000\tSample\t0\ta.exe\t1\t2\t1e3\tA!a\n'
		printf '0.100000\tSample\t0\ta.exe\t1\t2\t1\tnokey\tA!a\n'
		printf '1e13\tSample\t0\ta.exe\t1\t2\t1\tA!a\n'
	} >"$T/bad.evt"
	want="3: fewer than 8 tab-separated columns
4: no stack column (a line must end with a tab and the stack)
5: empty kind column
6: time column is not a decimal number within +-1e12 ms
7: cpu column is not an integer from -1 to 65535
8: pid column is not an integer
9: tid column is not an integer
10: weight column is not a decimal number within +-1e12 ms
11: attribute column without key=value"
	run stackfold "$T/bad.evt"
	[ "$status" -eq 1 ]
	[ "$(grep -o 'bad.evt:[0-9]*: .*' <<<"$output" | sed 's/^bad.evt://' | head -9)" = "$want" ]
	[[ "$output" == *"bad.evt:12: time column is not a decimal number within +-1e12 ms"* ]]
	run render flame -o "$T/f.svg" "$T/bad.evt"
	[ "$(grep -o 'bad.evt:[0-9]*: .*' <<<"$output" | sed 's/^bad.evt://; s/, line skipped$//' | head -5)" = "$(head -5 <<<"$want")" ]
	# evtfilter does not need the attributes: it passes them through as they are
	run evtfilter -o "$T/out.evt" "$T/bad.evt"
	[ "$status" -eq 1 ]
	[ "$(grep -o 'bad.evt:[0-9]*: .*' <<<"$output" | sed 's/^bad.evt://' | head -8)" = "$(head -8 <<<"$want")" ]
	[ "$(grep -c -v '^#' "$T/out.evt")" -eq 2 ]
	run evtcheck "$T/bad.evt"
	[ "$status" -eq 1 ]
	[[ "$output" == *"bad.evt:3: fewer than 8 tab-separated columns" ]]
}

@test "one folded parser: every folded reader refuses the same lines in the same words" {
	printf 'a;b 1\na;b\na;b x\n;b 1.\na;c 2\n' >"$T/f"
	run stackfold "$T/f"
	[ "$status" -eq 1 ]
	[[ "$output" == *'f:2: not a folded stack line ("frames count")'* ]]
	[[ "$output" == *'f:3: not a folded stack line ("frames count")'* ]]
	[[ "$output" == *'f:4: not a folded stack line ("frames count")'* ]]
	[[ "$output" == *"a;b 1"* && "$output" == *"a;c 2"* ]]
	run render flame -o "$T/f.svg" "$T/f"
	[[ "$output" == *'f:2: not a folded stack line ("frames count"), line skipped'* ]]
	[[ "$output" == *'f:4: not a folded stack line ("frames count"), line skipped'* ]]
	# aggregate and diff read folded files through the same parser and say the same
	run aggregate -o "$T/agg" "$T/f"
	[[ "$output" == *'f:2: not a folded stack line ("frames count")'* ]]
	printf 'a;b 1\n' >"$T/g"
	run diff "$T/f" "$T/g"
	[[ "$output" == *'f:2: not a folded stack line ("frames count")'* ]]
}

@test "a pid of 1500 digits is still an integer: stackfold's root frames keep 40 of them, whatever the roots" {
	z=$(printf '0%.0s' $(seq 1500))
	p=$(printf 'x%.0s' $(seq 1000))
	printf '#evt\t1\n0.1\tSample\t0\t%s\t%s7\t%s9\t1\tA!a\n' "$p" "$z" "$z" >"$T/a.evt"
	for r in process thread comm pid tid; do
		run stackfold --unit=us --roots=$r "$T/a.evt"
		[ "$status" -eq 0 ]
		[[ "$output" == *"A!a 1000" ]]
		[ "${#output}" -lt 1024 ]
	done
	run stackfold --unit=us --roots=thread "$T/a.evt"
	[[ "$output" == *"(${z:0:40});Thread (${z:0:40});A!a 1000" ]]
}

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

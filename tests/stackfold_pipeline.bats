#!/usr/bin/env bats
# stackfold on folded input reads in a pipeline of threads (lib/stacks:
# a line thread, a reader with its own stack cache, the caller building
# the tree).  What must hold whatever the threads do: every line counted
# once, in input order where order matters (line numbers in messages, a
# header's scenario for the lines after it), from a file, a pipe or gzip.
# The expected values come from awk over the input or from the test's
# own construction, never from stackfold.  (Evt is read on one thread; its
# case here checks the same things of that path.)
load helpers

# many_stacks N FILE: N lines over 3000 distinct 3-8 frame stacks (no frame
# twice in a row: recursion would merge stacks), with counts 1..9; about 150
# batches of records, so stacks come back in batches far from their first
local_setup() {
	many_stacks() { folded_many_stacks 7 "$1" "$2"; }
	# awk's sum per stack, sorted: the truth the tool is checked against
	sums() { awk '{ c = $NF; sub(/ [^ ]*$/, ""); s[$0] += c } END { for (k in s) print k, s[k] }' "$1" | LC_ALL=C sort; }
}

@test "pipeline: per-stack sums equal awk's, from a file, a pipe and gzip, 150,000 lines" {
	many_stacks 150000 "$T/in.folded"
	sums "$T/in.folded" >"$T/want"
	[ "$(wc -l <"$T/want")" -gt 2900 ] || fail "only $(wc -l <"$T/want") distinct stacks"
	stackfold "$T/in.folded" >"$T/file" || fail "stackfold failed"
	LC_ALL=C sort "$T/file" | textdiff "$T/want" - || fail "a file: sums differ from awk's"
	cat "$T/in.folded" | stackfold >"$T/pipe" || fail "stackfold on a pipe failed"
	cmp -s "$T/file" "$T/pipe" || fail "a pipe gives another output than the file"
	gzip -c "$T/in.folded" >"$T/in.folded.gz"
	stackfold "$T/in.folded.gz" >"$T/gz" || fail "stackfold on gzip failed"
	cmp -s "$T/file" "$T/gz" || fail "gzip gives another output than the file"
}

@test "pipeline: malformed lines far apart are named by their own line numbers, the rest counted" {
	many_stacks 9000 "$T/good"
	# bad lines before good lines 7, 2049 and 8990 (batches apart), a two-column
	# line before 5000: lines 7, 2050, 8993 and 5002 of the file
	[ "$(wc -c <"$T/good")" -gt 65536 ] || fail "input too small for the threads"
	awk 'NR == 7 { print "no count here" } NR == 2049 { print "a;b 1x" }
	     NR == 5000 { print "a;b 1 2" } NR == 8990 { print "a;b" } { print }' "$T/good" >"$T/in"
	run stackfold "$T/in"
	[ "$status" -eq 1 ] || fail "exit $status, not 1"
	stackfold "$T/in" 2>"$T/err" >"$T/out" || true
	[ "$(grep -c ':[0-9]*: ' "$T/err")" -eq 4 ] || fail "$(cat "$T/err")"
	grep -q "in:7: not a folded stack line" "$T/err" || fail "line 7: $(cat "$T/err")"
	grep -q "in:2050: not a folded stack line" "$T/err" || fail "line 2050: $(cat "$T/err")"
	grep -q "in:5002: two-column" "$T/err" || fail "line 5002: $(cat "$T/err")"
	grep -q "in:8993: not a folded stack line" "$T/err" || fail "line 8993: $(cat "$T/err")"
	sums "$T/good" >"$T/want"
	LC_ALL=C sort "$T/out" | textdiff "$T/want" - || fail "the good lines' sums differ"
}

@test "pipeline: a header line in folded input roots the lines after it in its scenario" {
	# (over 64 KB: a smaller file is read without threads)
	{
		for i in $(seq 12000); do echo "a;b 1"; done
		printf '#evt\t1\tscenario=later\n'
		for i in $(seq 12000); do echo "a;b 2"; done
		echo "a;c 5"
	} >"$T/in"
	[ "$(wc -c <"$T/in")" -gt 65536 ] || fail "input too small for the threads"
	run stackfold "$T/in"
	[ "$status" -eq 0 ] || fail "exit $status: $output"
	# 12000 x 1 before the header; 12000 x 2 and one 5 after it, under "later"
	[ "$output" = "$(printf 'a;b 12000\nlater;a;b 24000\nlater;a;c 5')" ] || fail "$output"
}

@test "pipeline: a frame name over 4096 bytes is cut and counted once per distinct stack" {
	long=$(head -c 5000 /dev/zero | tr '\0' 'x')
	# three distinct stacks with one long frame each, each 2000 times, interleaved
	for i in $(seq 2000); do
		printf 'a;%s 1\nb;%s 1\nc;%s;d 1\n' "$long" "$long" "$long"
	done >"$T/in"
	stackfold "$T/in" 2>"$T/err" >"$T/out" || fail "exit $?: $(cat "$T/err")"
	grep -q "3 frame names longer than 4096 bytes were cut" "$T/err" || fail "$(cat "$T/err")"
	[ "$(wc -l <"$T/out")" -eq 3 ] || fail "$(wc -l <"$T/out") stacks out"
	# each cut name is 4093 bytes and "..."
	awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); for (i = 1; i <= n; i++)
	    if (length(f[i]) > 1 && length(f[i]) != 4096) exit 1 }' "$T/out" || fail "a cut name is not 4096 bytes"
	[ "$(awk '{ s += $NF } END { print s }' "$T/out")" -eq 6000 ] || fail "total"
}

@test "pipeline: an empty file, a file of blank and comment lines, one line without newline" {
	: >"$T/empty"
	run stackfold "$T/empty"
	[ "$status" -eq 0 ] && [ -z "$output" ] || fail "empty: $status $output"
	printf '\n# note\n\nx;y 4\n\n# end' >"$T/blank"
	run stackfold "$T/blank"
	[ "$status" -eq 0 ] && [ "$output" = "x;y 4" ] || fail "blank: $status $output"
	printf 'x;y 4\nx;y 3' | stackfold >"$T/out"
	[ "$(cat "$T/out")" = "x;y 7" ] || fail "no newline: $(cat "$T/out")"
}

@test "evt (read on one thread): per-stack sample counts equal awk's, a bad line named, other kinds counted" {
	# 6000 lines after the header: Sample events on 50 stacks, every 7th a DPC
	# (not a Sample: not counted), and a malformed line as line 4001 of the file
	python3 -c 'import sys
out = ["#evt\t1\tsource=t\tpointer_size=8\tduration_ms=10"]
for i in range(6000):
    kind = "DPC" if i % 7 == 0 else "Sample"
    out.append("%d.000000\t%s\t0\tapp.exe\t100\t101\t1\tkframes=0\tntdll.dll!Start;app.exe!F%d;app.exe!G%d" % (i, kind, i % 50, i % 3))
out[4000] = "garbage line"
open(sys.argv[1], "w").write("\n".join(out) + "\n")' "$T/in.evt"
	awk -F'\t' 'NR > 1 && $2 == "Sample" { n[$NF]++ } END { for (k in n) print k, n[k] }' "$T/in.evt" |
	    LC_ALL=C sort >"$T/want"
	[ "$(wc -l <"$T/want")" -eq 150 ] || fail "$(wc -l <"$T/want") stacks planned"
	run stackfold "$T/in.evt"
	[ "$status" -eq 1 ] || fail "exit $status, not 1"
	stackfold "$T/in.evt" 2>"$T/err" | LC_ALL=C sort >"$T/got" || true
	textdiff "$T/want" "$T/got" || fail "per-stack counts differ from awk's"
	grep -q "in.evt:4001: " "$T/err" || fail "$(cat "$T/err")"
	[ "$(grep -c 'in.evt:[0-9]*: ' "$T/err")" -eq 1 ] || fail "$(cat "$T/err")"
	cat "$T/in.evt" | stackfold 2>/dev/null | LC_ALL=C sort | cmp -s - "$T/got" || fail "a pipe differs"
	# the DPC lines are counted as other kinds
	dpc=$(awk -F'\t' '$2 == "DPC"' "$T/in.evt" | wc -l)
	stackfold -s "$T/in.evt" 2>&1 >/dev/null | grep -q "other kinds $dpc;" ||
	    fail "other kinds not $dpc: $(stackfold -s "$T/in.evt" 2>&1 >/dev/null)"
}

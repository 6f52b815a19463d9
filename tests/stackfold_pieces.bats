#!/usr/bin/env bats
# stackfold cuts a regular folded file into one piece per thread (-j N)
# at newlines, folds each alone and merges them in file order
# (lib/stacks/stacks.c, read_pieces).  What must hold for every N: the
# per-stack sums are awk's, the output and the messages are the -j 1
# ones byte for byte (one thread, no pieces, no pipeline: another code
# path), line numbers count from the file's start whichever piece a line
# is in, and lines straddling a cut are read once.  Expected sums and
# line numbers come from awk or from the test's own construction.
load helpers

local_setup() {
	# many_stacks N FILE: N lines over 3000 distinct 3-8 frame stacks, counts 1..9
	many_stacks() { folded_many_stacks 11 "$1" "$2"; }
	sums() { awk '{ sub(/\r$/, ""); c = $NF; sub(/ [^ ]*$/, ""); s[$0] += c } END { for (k in s) print k, s[k] }' "$1" | LC_ALL=C sort; }
	# same_as_one FILE [OPTS...]: every -j gives -j 1's output, stderr and exit status
	same_as_one() {
		local f=$1 j rc
		shift
		rc=0
		stackfold -j 1 "$@" "$f" >"$T/one.out" 2>"$T/one.err" || rc=$?
		echo $rc >"$T/one.rc"
		for j in 2 3 5 16; do
			rc=0
			stackfold -j $j "$@" "$f" >"$T/j.out" 2>"$T/j.err" || rc=$?
			echo $rc >"$T/j.rc"
			cmp -s "$T/one.out" "$T/j.out" || fail "-j $j $*: output differs from -j 1"
			cmp -s "$T/one.err" "$T/j.err" || fail "-j $j $*: stderr differs: $(textdiff "$T/one.err" "$T/j.err")"
			cmp -s "$T/one.rc" "$T/j.rc" || fail "-j $j $*: exit $(cat "$T/j.rc"), -j 1 $(cat "$T/one.rc")"
		done
	}
}

@test "pieces: per-stack sums are awk's and every option's output is -j 1's, for 2 to 16 pieces" {
	many_stacks 60000 "$T/in.folded"
	sums "$T/in.folded" >"$T/want"
	stackfold -j 2 "$T/in.folded" | LC_ALL=C sort | textdiff "$T/want" - || fail "-j 2: sums differ from awk's"
	same_as_one "$T/in.folded"
	same_as_one "$T/in.folded" --preset=module -s
	same_as_one "$T/in.folded" --by-name --tsv
	same_as_one "$T/in.folded" --fold-pct=2 -g 'm1%->one' -x 'F7$' -s
	same_as_one "$T/in.folded" --include='m3.dll' -f 'm5%' -s
	# stdin as a regular file is cut too; a pipe and gzip take the pipeline
	stackfold -j 1 "$T/in.folded" >"$T/one"
	stackfold -j 2 <"$T/in.folded" | cmp -s - "$T/one" || fail "stdin redirected from the file differs"
	cat "$T/in.folded" | stackfold -j 2 | cmp -s - "$T/one" || fail "a pipe differs"
	gzip -c "$T/in.folded" >"$T/in.gz"
	stackfold -j 2 "$T/in.gz" | cmp -s - "$T/one" || fail "gzip differs"
}

@test "pieces: a line straddling every cut is read once, whatever the number of pieces" {
	# one long distinct line per 7000 bytes (frames under 4096 bytes): some line crosses any cut
	python3 -c 'import sys
out = []
for i in range(400):
    out.append("root;mid%d;%s;%s %d\n" % (i % 5, "x" * 3000, "y" * (3000 + i), 1 + i % 4))
    out.append("root;short %d\n" % (i % 3 + 1))
open(sys.argv[1], "w").write("".join(out))' "$T/in"
	sums "$T/in" >"$T/want"
	for j in 2 3 4 7 13 16; do
		stackfold -j $j "$T/in" | LC_ALL=C sort | textdiff "$T/want" - >/dev/null ||
		    fail "-j $j: sums differ from awk's"
	done
	same_as_one "$T/in"
}

@test "pieces: a last line without newline, CRLF lines, blank and comment lines" {
	many_stacks 20000 "$T/lf"
	head -c -1 "$T/lf" >"$T/nonl"
	[ "$(tail -c 1 "$T/nonl" | od -An -c | tr -d ' ')" != '\n' ] || fail "the file still ends with a newline"
	sums "$T/lf" >"$T/want"
	stackfold -j 2 "$T/nonl" | LC_ALL=C sort | textdiff "$T/want" - || fail "no newline: the last line is lost"
	same_as_one "$T/nonl"
	sed 's/$/\r/' "$T/lf" >"$T/crlf"
	stackfold -j 2 "$T/crlf" | LC_ALL=C sort | textdiff "$T/want" - || fail "CRLF: sums differ"
	stackfold -j 1 "$T/lf" >"$T/lf.out"
	stackfold -j 2 "$T/crlf" | cmp -s - "$T/lf.out" || fail "CRLF gives another output than LF"
	awk 'NR % 1000 == 0 { print ""; print "# a comment" } { print }' "$T/lf" >"$T/blank"
	stackfold -j 3 "$T/blank" | cmp -s - "$T/lf.out" || fail "blank and comment lines change the output"
	same_as_one "$T/blank"
}

@test "pieces: malformed lines in every piece are named by their line in the file, in order" {
	many_stacks 40000 "$T/good"
	# bad lines before good lines 10, 20010 (second half) and 39990, and
	# NUL bytes before 30000: file lines 10, 20011, 30002, 39993
	python3 -c 'import sys
extra = {10: "no count here", 20010: "a;b 1x", 30000: "a;b\0c 1", 39990: "a;b 1 2"}
out = []
for n, line in enumerate(open(sys.argv[1]), 1):
    if n in extra:
        out.append(extra[n] + "\n")
    out.append(line)
open(sys.argv[2], "w").write("".join(out))' "$T/good" "$T/in"
	[ "$(tr -d -c '\000' <"$T/in" | wc -c)" -eq 1 ] || fail "no NUL byte planted"
	run stackfold -j 2 "$T/in"
	[ "$status" -eq 1 ] || fail "exit $status, not 1"
	stackfold -j 2 "$T/in" 2>"$T/err" >"$T/out" || true
	[ "$(grep -c ':[0-9]*: ' "$T/err")" -eq 4 ] || fail "$(cat "$T/err")"
	grep -q "in:10: not a folded stack line" "$T/err" || fail "line 10: $(cat "$T/err")"
	grep -q "in:20011: not a folded stack line" "$T/err" || fail "line 20011: $(cat "$T/err")"
	grep -q "in:30002: NUL byte in line, line skipped" "$T/err" || fail "line 30002: $(cat "$T/err")"
	grep -q "in:39993: two-column" "$T/err" || fail "line 39993: $(cat "$T/err")"
	# in file order
	[ "$(grep -o 'in:[0-9]*' "$T/err" | tr '\n' ' ')" = "in:10 in:20011 in:30002 in:39993 " ] ||
	    fail "order: $(cat "$T/err")"
	sums "$T/good" >"$T/want"
	LC_ALL=C sort "$T/out" | textdiff "$T/want" - || fail "the good lines' sums differ"
	same_as_one "$T/in"
}

@test "pieces: more than ten malformed and skipped lines over the pieces: the first ten of each, then counts" {
	many_stacks 30000 "$T/good"
	# every 1000th line is followed by a malformed line, every 1500th by a NUL line
	python3 -c 'import sys
out = []
for n, line in enumerate(open(sys.argv[1]), 1):
    out.append(line)
    if n % 1000 == 0:
        out.append("bad%d\n" % n)
    if n % 1500 == 0:
        out.append("a\0b 1\n")
open(sys.argv[2], "w").write("".join(out))' "$T/good" "$T/in"
	bad=$(grep -c '^bad' "$T/in")
	nul=$(tr -d -c '\000' <"$T/in" | wc -c)
	[ "$bad" -eq 30 ] && [ "$nul" -eq 20 ] || fail "planned $bad bad, $nul NUL lines"
	stackfold -j 2 "$T/in" 2>"$T/err" >/dev/null || true
	[ "$(grep -c 'not a folded stack line' "$T/err")" -eq 10 ] || fail "$(cat "$T/err")"
	[ "$(grep -c 'NUL byte in line, line skipped' "$T/err")" -eq 10 ] || fail "$(cat "$T/err")"
	grep -q "more lines skipped; counting them" "$T/err" || fail "$(cat "$T/err")"
	grep -q "in: $((bad + nul)) malformed lines skipped" "$T/err" || fail "$(cat "$T/err")"
	# the first malformed line's number, from awk
	first=$(awk '/^bad/ { print NR; exit }' "$T/in")
	head -1 "$T/err" | grep -q "in:$first: " || fail "first message: $(head -1 "$T/err"), want line $first"
	same_as_one "$T/in"
}

@test "pieces: a header or a deep stack in a later piece: the rest read as one thread" {
	many_stacks 30000 "$T/good"
	# a header three quarters in: the lines after it are under its scenario
	awk 'NR == 22500 { printf "#evt\t1\tscenario=late\n" } { print }' "$T/good" >"$T/hdr"
	after=$(awk 'NR > 22500 { n++ } END { print n }' "$T/hdr")
	got=$(stackfold -j 2 "$T/hdr" | awk '/^late;/ { s += $NF } END { print s + 0 }')
	want=$(awk 'NR > 22500 { s += $NF } END { print s }' "$T/hdr")
	[ "$got" -eq "$want" ] || fail "under the scenario: $got, want $want ($after lines)"
	same_as_one "$T/hdr"
	python3 -c 'import sys
sys.stdout.write(open(sys.argv[1]).read() + ";".join("f%d" % i for i in range(5000)) + " 3\n")' "$T/good" >"$T/deep"
	stackfold -j 2 "$T/deep" 2>"$T/err" >/dev/null
	grep -q "30001" "$T/err" || fail "the deep stack's line is not named: $(cat "$T/err")"
	same_as_one "$T/deep"
}

@test "pieces: an empty file, a file under 64 KB, a file of a few KB per piece" {
	: >"$T/empty"
	run stackfold -j 2 "$T/empty"
	[ "$status" -eq 0 ] && [ -z "$output" ] || fail "empty: $status $output"
	many_stacks 300 "$T/small"
	[ "$(wc -c <"$T/small")" -lt 65536 ] || fail "small is not small"
	sums "$T/small" >"$T/want"
	stackfold -j 2 "$T/small" | LC_ALL=C sort | textdiff "$T/want" - || fail "small: sums"
	same_as_one "$T/small"
	# just over 64 KB in 16 pieces: every piece smaller than one read
	many_stacks 2000 "$T/tiny"
	[ "$(wc -c <"$T/tiny")" -gt 65536 ] || fail "tiny is under 64 KB"
	sums "$T/tiny" >"$T/want"
	stackfold -j 16 "$T/tiny" | LC_ALL=C sort | textdiff "$T/want" - || fail "16 pieces: sums"
	same_as_one "$T/tiny"
	# blank lines only
	awk 'BEGIN { for (i = 0; i < 70000; i++) print "" }' >"$T/blanks"
	run stackfold -j 2 -s "$T/blanks"
	[ "$status" -eq 0 ] || fail "blank lines: exit $status"
	same_as_one "$T/blanks" -s
}

@test "pieces: --threads takes 1 or more" {
	run stackfold -j 0 /dev/null
	[ "$status" -eq 2 ] || fail "exit $status"
	[[ "$output" == *"--threads takes 1 to 64"* ]] || fail "$output"
	stackfold --help | grep -q -- "--threads=N" || fail "not in --help"
}

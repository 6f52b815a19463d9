#!/usr/bin/env bats
# diff: a regular, uncompressed folded file is mapped and its stacks kept
# in place; stdin, pipes and gzip are read line by line and copied.  The
# two paths must be indistinguishable: same lines, same totals, same
# messages for the same bad lines, same exit status.
# Note: "diff" below is etlkit's diff; files are compared with cmp or
# textdiff (/usr/bin/diff).
load helpers

# Runs diff on BASE TEST three ways: both files mapped, the base through
# stdin, the test through a pipe.  Each run's stdout, stderr (with
# "<stdin>" written back as the file's name) and status must be the same;
# the mapped run's are left in $T/map.out, $T/map.err and $T/map.st.
same_both_ways() {
	local base="$1" test="$2"
	shift 2
	local st=0
	diff "$@" "$base" "$test" >"$T/map.out" 2>"$T/map.err" || st=$?
	echo "$st" >"$T/map.st"
	st=0
	diff "$@" - "$test" <"$base" >"$T/in.out" 2>"$T/in.err" || st=$?
	echo "$st" >"$T/in.st"
	sed "s|<stdin>|$base|g" "$T/in.err" >"$T/in.err2"
	cmp "$T/map.out" "$T/in.out" || fail "stdout differs (base through stdin)"
	textdiff "$T/map.err" "$T/in.err2" || fail "stderr differs (base through stdin)"
	cmp "$T/map.st" "$T/in.st" || fail "status differs (base through stdin)"
	st=0
	cat "$test" | diff "$@" "$base" - >"$T/pipe.out" 2>"$T/pipe.err" || st=$?
	echo "$st" >"$T/pipe.st"
	sed "s|<stdin>|$test|g" "$T/pipe.err" >"$T/pipe.err2"
	cmp "$T/map.out" "$T/pipe.out" || fail "stdout differs (test through a pipe)"
	textdiff "$T/map.err" "$T/pipe.err2" || fail "stderr differs (test through a pipe)"
	cmp "$T/map.st" "$T/pipe.st" || fail "status differs (test through a pipe)"
}

# difffolded.pl's merge, in awk: "stack base test", bytewise order.
awk_merge() {
	awk 'FNR == 1 { side++ } { c = $NF; s = $0; sub(/ [0-9]+$/, "", s); w[s, side] += c; seen[s] = 1 }
	    END { for (s in seen) printf "%s %d %d\n", s, w[s, 1], w[s, 2] }' "$1" "$2" | LC_ALL=C sort
}

corpus_folded() {
	require_corpus
	local d="$BATS_FILE_TMPDIR"
	[ -s "$d/win7.folded" ] || etl2evt "$CORPUS/perfview/ctf-net45-win7.etl.zip" |
	    stackfold --keep-idle --unit=samples --roots=pid >"$d/win7.folded"
	[ -s "$d/win8.folded" ] || etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" |
	    stackfold --keep-idle --unit=samples --roots=pid >"$d/win8.folded"
	F7="$d/win7.folded" F8="$d/win8.folded"
}

@test "mapped vs stdin: the corpus Win7 and Win8 stacks give the same diff, the census totals" {
	corpus_folded
	# corpus/README.md: 16,865 and 79,528 SampledProfile events
	[ "$(awk '{ s += $NF } END { print s }' "$F7")" -eq 16865 ]
	[ "$(awk '{ s += $NF } END { print s }' "$F8")" -eq 79528 ]
	same_both_ways "$F7" "$F8"
	[ "$(cat "$T/map.st")" -eq 0 ]
	awk_merge "$F7" "$F8" >"$T/expect"
	cmp "$T/expect" "$T/map.out"
	grep -q '^diff: base 16865, test 79528, delta +62663 ' "$T/map.err"
	same_both_ways "$F7" "$F8" -f signed -n
	awk '{ s += $NF } END { exit !(s == 0) }' "$T/map.out"	# scaled: the deltas cancel
	# --perf-ids: "MsMpEng.exe-896" loses its pid, a stack rewritten, not kept in place
	same_both_ways "$F7" "$F8" --perf-ids
	for f in "$F7" "$F8"; do
		awk '{ n = index($0, ";"); f = n ? substr($0, 1, n - 1) : $0
		    if (f !~ /!/ && f ~ /.-[0-9]+(\/[0-9]+)?( [0-9]+)?$/) { r = f; sub(/-[0-9]+(\/[0-9]+)?/, "", r)
		    $0 = r substr($0, length(f) + 1) } print }' "$f" >"$T/$(basename "$f").stripped"
	done
	grep -q '^MsMpEng.exe;' "$T/win7.folded.stripped"
	awk_merge "$T/win7.folded.stripped" "$T/win8.folded.stripped" >"$T/expect"
	cmp "$T/expect" "$T/map.out"
	# and the same for overweight, which reads through the same table
	run overweight --tsv --all "$F7" "$F8"
	[ "$status" -eq 0 ]
	echo "$output" >"$T/ow.map"
	run overweight --tsv --all - "$F8" <"$F7"
	[ "$status" -eq 0 ]
	echo "$output" >"$T/ow.in"
	cmp "$T/ow.map" "$T/ow.in"
}

@test "mapped vs stdin: CRLF line ends and no newline at the end read as LF lines" {
	printf 'Process64 app (12) Args: -x;Thread (7) CPU=3ms;m.dll!f 5\r\na;b 7\r\na;c 1' >"$T/base"
	printf 'Process64 app (99) Args: -y;Thread (8) CPU=1ms;m.dll!f 2\na;b 3\na;d 4\n' >"$T/test"
	same_both_ways "$T/base" "$T/test"
	[ "$(cat "$T/map.st")" -eq 0 ]
	# worked out by hand: the ids stripped, the \r gone, the last line counted
	printf 'a;b 7 3\na;c 1 0\na;d 0 4\napp;Thread;m.dll!f 5 2\n' >"$T/expect"
	cmp "$T/expect" "$T/map.out"
	grep -q '^diff: base 13, test 9, delta -4 ' "$T/map.err"
	# the same file with LF ends is the same input
	tr -d '\r' <"$T/base" >"$T/base.lf"
	diff "$T/base.lf" "$T/test" 2>/dev/null | cmp - "$T/map.out"
	# a lone \r line end inside a line stays part of it (only the one before \n goes)
	printf 'a;b\rx 1\n' >"$T/cr"
	same_both_ways "$T/cr" "$T/test"
	[ "$(cat "$T/map.st")" -eq 1 ]
	grep -q "cr:1: control character" "$T/map.err"
}

@test "mapped vs stdin: bad lines counted and reported the same way, the rest used" {
	# line 2 malformed, 3 a NUL, 4 a control byte, 5 a comment with a NUL,
	# 6 two counts, 7 blank, 8 a CR only (blank), 9 good, 10 NUL in the count
	printf 'a;b 5\nnonsense\na\000;c 2\na\001;d 3\n# c\000x\na;e 1 2\n\n\r\na;f 4\na;g 1\0002\n' >"$T/base"
	printf 'a;b 1\n' >"$T/test"
	same_both_ways "$T/base" "$T/test"
	[ "$(cat "$T/map.st")" -eq 1 ]
	grep -q "^diff: $T/base:2: not a folded stack line" "$T/map.err"
	grep -q "^diff: $T/base:3: NUL byte in line, line skipped" "$T/map.err"
	grep -q "^diff: $T/base:4: control character in the stack" "$T/map.err"
	grep -q "^diff: $T/base:5: NUL byte in line, line skipped" "$T/map.err"
	grep -q "^diff: $T/base:6: two counts" "$T/map.err"
	grep -q "^diff: $T/base:10: NUL byte in line, line skipped" "$T/map.err"
	# 2, 3, 4, 5, 6, 10: six lines by hand
	grep -q "^diff: $T/base: 6 unusable lines skipped" "$T/map.err"
	[ "$(cat "$T/map.out")" = "$(printf 'a;b 5 1\na;f 4 0')" ]
	# past ten, the reader's and diff's messages stop and the counts go on
	for i in $(seq 15); do printf 'x\000%d 1\nbad%d\n' "$i" "$i"; done >"$T/many"
	printf 'a;b 2\n' >>"$T/many"
	same_both_ways "$T/many" "$T/test"
	[ "$(grep -c 'NUL byte in line, line skipped' "$T/map.err")" -eq 10 ]
	[ "$(grep -c 'not a folded stack line' "$T/map.err")" -eq 10 ]
	grep -q "many: more lines skipped; counting them" "$T/map.err"
	grep -q "many: more unusable lines; counting them without a message" "$T/map.err"
	grep -q "many: 30 unusable lines skipped" "$T/map.err"
	[ "$(cat "$T/map.out")" = "a;b 2 1" ]
}

@test "mapped vs stdin: a line of 64 MiB is skipped the same way" {
	{ printf 'a;b 1\n'; head -c $((64 << 20)) /dev/zero | tr '\0' 'x'; printf ' 1\na;c 2\n'; } >"$T/long"
	printf 'a;b 1\n' >"$T/test"
	same_both_ways "$T/long" "$T/test"
	[ "$(cat "$T/map.st")" -eq 1 ]
	grep -q "long:2: line too long (64 MiB or more), line skipped" "$T/map.err"
	grep -q "long: 1 unusable line skipped" "$T/map.err"
	[ "$(cat "$T/map.out")" = "$(printf 'a;b 1 1\na;c 2 0')" ]
	rm -f "$T/long"
}

@test "gzip: a small file inflated whole reads as streamed; damaged, multi-member ones are streamed" {
	printf 'a;b 5\r\na;c 1\nbad\na;\001 3\na;d 2' >"$T/base"
	printf 'a;b 1\n' >"$T/test"
	gzip -c "$T/base" >"$T/base.gz"
	same_both_ways "$T/base.gz" "$T/test"
	[ "$(cat "$T/map.st")" -eq 1 ]
	[ "$(cat "$T/map.out")" = "$(printf 'a;b 5 1\na;c 1 0\na;d 2 0')" ]
	grep -q "base.gz:3: not a folded stack line" "$T/map.err"
	grep -q "base.gz:4: control character in the stack" "$T/map.err"
	grep -q "base.gz: 2 unusable lines skipped" "$T/map.err"
	# two members: the second's lines count too
	{ gzip -c "$T/base"; printf '\na;e 7\n' | gzip -c; } >"$T/two.gz"
	same_both_ways "$T/two.gz" "$T/test"
	grep -q '^a;e 7 0$' "$T/map.out"
	# a wrong CRC: zlib's lines before it and its message, from the streaming reader
	python3 -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read()); b[-8] ^= 0xff
open(sys.argv[2], "wb").write(b)' "$T/base.gz" "$T/crc.gz"
	same_both_ways "$T/crc.gz" "$T/test"
	[ "$(cat "$T/map.st")" -eq 1 ]
	grep -qi "crc" "$T/map.err"
	# a gzip-compressed zip given by mistake: the reader's one clear line, exit 2
	printf 'PK\003\004rest of a zip' | gzip -c >"$T/z.gz"
	run diff "$T/z.gz" "$T/test"
	[ "$status" -eq 2 ]
	[[ "$output" == *"z.gz: this is a gzip-compressed zip"* ]]
}

@test "not mapped: evt and trace files keep the line reader's handling" {
	printf 'a;b 1\n' >"$T/test"
	# a zip given by mistake: one clear line, exit 2
	printf 'PK\003\004rest of a zip' >"$T/z"
	run diff "$T/z" "$T/test"
	[ "$status" -eq 2 ]
	[[ "$output" == *"z: this is a zip: run etl2evt first"* ]]
	# evt after blank lines and a NUL line is still evt (stackfold's lib reads it)
	printf '\n\000\n#evt\t1\tclock=qpc\n' >"$T/e.evt"
	run diff "$T/e.evt" "$T/test"
	[[ "$output" != *"not a folded stack line"* ]]
}

@test "a regular file is mapped, not read; stdin is read" {
	command -v strace >/dev/null || skip "strace is not installed"
	printf 'a;b 5\na;c 1\n' >"$T/base"
	printf 'a;b 1\n' >"$T/test"
	strace -o "$T/trace" -e trace=openat,mmap,read diff -q "$T/base" - <"$T/test" >"$T/out"
	[ "$(cat "$T/out")" = "$(printf 'a;b 5 1\na;c 1 0')" ]
	# the base: opened, then mapped from its descriptor, never read
	fd=$(awk -v f="\"$T/base\"," '$1 ~ /^openat/ && $2 == f { sub(/.*= /, ""); print; exit }' "$T/trace")
	[ -n "$fd" ]
	grep -q "^mmap(NULL, $(wc -c <"$T/base"), PROT_READ, MAP_PRIVATE, $fd, 0)" "$T/trace"
	! grep -q "^read($fd, \"a;b 5" "$T/trace"
	# the test, on stdin, is read
	grep -q '^read(0, "a;b 1\\n"' "$T/trace"
}

@test "a second input of several MB, its pages handed back as read: the same lines as stdin and awk" {
	python3 "$GEN_FOLDED" --size 6M --seed 1 >"$T/a"
	python3 "$GEN_FOLDED" --size 6M --seed 2 >"$T/b"
	[ "$(wc -c <"$T/b")" -gt $((4 << 20)) ]
	same_both_ways "$T/a" "$T/b"
	[ "$(cat "$T/map.st")" -eq 0 ]
	awk_merge "$T/a" "$T/b" >"$T/expect"
	cmp "$T/expect" "$T/map.out"
	# the other way round too: the first input is kept, the second released
	same_both_ways "$T/b" "$T/a" -f signed
	awk '$2 != $3 { print $1, $2 - $3 }' "$T/expect" | LC_ALL=C sort >"$T/expect.signed"
	awk '{ print $1, $2 }' "$T/map.out" | cmp "$T/expect.signed" -
}

@test "a mapped base file cut shorter by another process mid-run: one line naming it, status 2, no crash" {
	# diff maps the base and keeps its stacks in place, then reads the
	# test file.  The test file is a FIFO: once our side of it opens,
	# diff has finished the base, so truncating it now is ordered, not
	# raced.  The merge then touches the base's vanished pages (SIGBUS).
	awk 'BEGIN { for (i = 0; i < 200000; i++) printf "main;work%d;leaf%d %d\n", i, i % 97, i % 13 + 1 }' >"$T/base.folded"
	mkfifo "$T/test.fifo"
	st=0
	diff "$T/base.folded" "$T/test.fifo" >"$T/out" 2>"$T/err" &
	pid=$!
	exec 7>"$T/test.fifo"
	: >"$T/base.folded"
	echo "main;work1;leaf1 5" >&7
	exec 7>&-
	wait "$pid" || st=$?
	[ "$st" -eq 2 ] || { cat "$T/err"; fail "status $st, expected 2"; }
	[ "$(wc -l <"$T/err")" -eq 1 ] || { cat "$T/err"; fail "expected one line on stderr"; }
	grep -q "^diff: $T/base.folded: the file became shorter while it was read" "$T/err" || { cat "$T/err"; fail "message"; }
}

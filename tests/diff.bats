#!/usr/bin/env bats
# diff: baseline vs test stacks (reference-semantics §2.7, §3.3, decision 5).
# Note: "diff" below is etlkit's diff (ETLKIT_BIN is first on PATH);
# files are compared with cmp or /usr/bin/diff.
load helpers

# value NAME from diff -t output
tot() { awk -F'\t' -v n="$1" '$1 == n { print $2 }' <<<"$output"; }

two_traces() {
	printf 'main;parse;lex 30\nmain;parse 10\nmain;render 60\n' >"$T/base"
	printf 'main;parse;lex 50\nmain;render 60\nmain;net 15\n' >"$T/test"
}

@test "FlameGraph form: union of stacks, missing side 0, sorted, totals on stderr" {
	two_traces
	run diff "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "main;net 0 15" ]
	[ "${lines[1]}" = "main;parse 10 0" ]
	[ "${lines[2]}" = "main;parse;lex 30 50" ]
	[ "${lines[3]}" = "main;render 60 60" ]
	[ "${lines[4]}" = "diff: base 100, test 125, delta +25 (+25.00%); 4 stacks, 1 only in base, 1 only in test" ]
	[ "${#lines[@]}" -eq 5 ]
	diff -q "$T/base" "$T/test" >"$T/out"
	evtcheck --folded=flamegraph "$T/out"
}

@test "the two-count output is what render's differential flame graph reads" {
	two_traces
	diff -q "$T/base" "$T/test" | render flame --title "diff" >"$T/d.svg"
	grep -q '<svg' "$T/d.svg"
	grep -q 'lex' "$T/d.svg"
	# the other way round (what disappeared), as FlameGraph recommends
	diff -q "$T/test" "$T/base" | render flame --negate >"$T/n.svg"
	grep -q 'parse' "$T/n.svg"
}

@test "PerfView's negated-baseline merge: signed test - base per stack, zeros left out" {
	two_traces
	run diff -q -f signed "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'main;net 15\nmain;parse -10\nmain;parse;lex 20')" ]
	# the signed weights sum to the regression
	[ "$(awk '{ s += $NF } END { print s }' <<<"$output")" = 25 ]
}

@test "-n scales the baseline to the test's total" {
	two_traces
	run diff -q -n "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	# factor 1.25: 10 -> 12.5, 30 -> 37.5, 60 -> 75; rounding carries the remainder
	# so the scaled baseline column sums to the test total exactly
	[ "$output" = "$(printf 'main;net 0 15\nmain;parse 13 0\nmain;parse;lex 37 50\nmain;render 75 60')" ]
	[ "$(awk '{ s += $(NF-1) } END { print s }' <<<"$output")" = 125 ]
	run diff -q -n --fractions "$T/base" "$T/test"
	[ "${lines[2]}" = "main;parse;lex 37.5 50" ]
	run diff -q -n -f signed --fractions "$T/base" "$T/test"
	[ "$(awk '{ s += $NF } END { print s }' <<<"$output")" = 0 ]
	run diff -n "$T/base" "$T/test"
	[[ "${lines[4]}" == *"base scaled to the test total"* ]]
}

@test "--totals: base, test, delta = test - base, delta %" {
	two_traces
	run diff -t "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'base\t100\ntest\t125\ndelta\t25\ndelta_pct\t25.00\nstacks\t4\nonly_base\t1\nonly_test\t1')" ]
}

@test "ids are stripped so the same path cancels: PerfView, WPA and perf frames" {
	printf '%s\n' 'Process64 my-app (1234) Args: -x;Thread (11) CPU=5ms;my-app.exe!main 10' \
	    'my-app-1234/11;do_work 5' 'svc.exe (88);ntdll.dll!Wait 7' 'my-app;a;b;f (1) 1' >"$T/base"
	printf '%s\n' 'Process64 my-app (999) Args: -y;Thread (12) CPU=9ms;my-app.exe!main 12' \
	    'my-app-999/12;do_work 6' 'svc.exe (77);ntdll.dll!Wait 7' 'my-app;a;b;f (1) 1' >"$T/test"
	run diff -q "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	# PerfView's own rule (^Process% {%}) would have cut "my-app" to "my"
	[[ "$output" == *"my-app;Thread;my-app.exe!main 10 12"* ]]
	[[ "$output" == *"svc.exe;ntdll.dll!Wait 7 7"* ]]
	# a name without an id and "(1)" past the root pseudo-frames are not touched
	[[ "$output" == *"my-app;a;b;f (1) 1 1"* ]]
	# perf's comm-PID/TID only with --perf-ids (see the scenario test below)
	[[ "$output" == *"my-app-1234/11;do_work 5 0"* ]]
	[ "${#lines[@]}" -eq 5 ]
	run diff -q --perf-ids "$T/base" "$T/test"
	[[ "$output" == *"my-app;do_work 5 6"* ]]
	[ "${#lines[@]}" -eq 4 ]
	run diff -q --keep-ids "$T/base" "$T/test"
	[ "${#lines[@]}" -eq 7 ]
	[[ "$output" == *"Process64 my-app (1234) Args: -x;Thread (11) CPU=5ms;my-app.exe!main 10 0"* ]]
}

@test "aggregate's scenario frames (nightly-17) are names, not ids: never merged" {
	printf 'nightly-17;Backup.exe;ntdll.dll!A 5\nnightly-18;Backup.exe;ntdll.dll!A 7\n' >"$T/base"
	printf 'nightly-17;Backup.exe;ntdll.dll!A 6\nnightly-18;Backup.exe;ntdll.dll!A 9\n' >"$T/test"
	run diff -q "$T/base" "$T/test"
	[ "$output" = "$(printf 'nightly-17;Backup.exe;ntdll.dll!A 5 6\nnightly-18;Backup.exe;ntdll.dll!A 7 9')" ]
	# nor are Windows' copy names: "trace (2)" is not "trace" with pid 2; "System (4)" is
	printf 'trace;a.dll!f 1\ntrace (2);a.dll!f 2\nSystem (4);a.dll!f 3\n' >"$T/w"
	run diff -q "$T/w" "$T/w"
	[ "$output" = "$(printf 'System;a.dll!f 3 3\ntrace (2);a.dll!f 2 2\ntrace;a.dll!f 1 1')" ]
	run overweight --tsv -r 0 "$T/base" "$T/test"
	[ "$(awk -F'\t' '$10 == "nightly-18" { print $4 }' <<<"$output")" = 2 ]
}

@test "--strip-hex merges addresses like difffolded.pl -s" {
	printf 'a.dll!0x1a2b;b.dll!f 3\n' >"$T/base"
	printf 'a.dll!0xFF00;b.dll!f 4\n' >"$T/test"
	run diff -q --strip-hex "$T/base" "$T/test"
	[ "$output" = "a.dll!0x...;b.dll!f 3 4" ]
}

@test "duplicate stacks are merged and frames with spaces are kept" {
	printf 'a b;c 1\na b;c 2\n' >"$T/base"
	printf 'a b;c 4\n' >"$T/test"
	run diff -q "$T/base" "$T/test"
	[ "$output" = "a b;c 3 4" ]
}

@test "empty inputs and one empty side" {
	: >"$T/empty"
	run diff "$T/empty" "$T/empty"
	[ "$status" -eq 0 ]
	[ "$output" = "diff: base 0, test 0, delta 0 (n/a); 0 stacks, 0 only in base, 0 only in test" ]
	printf 'a;b 5\n' >"$T/one"
	run diff -q "$T/empty" "$T/one"
	[ "$output" = "a;b 0 5" ]
	run diff -q "$T/one" "$T/empty"
	[ "$output" = "a;b 5 0" ]
	run diff -q -n "$T/empty" "$T/one"
	[ "$status" -eq 0 ]
	[ "$output" = "a;b 0 5" ]
}

@test "garbage lines: counted, reported with file:line, exit 1, the rest used" {
	printf 'a;b 5\nnonsense\na;c 1 2\na;d -4\n\n# comment 3\na;b 99999999999999999999999\na;e 2\n' >"$T/base"
	printf 'a;b 6\n' >"$T/test"
	run diff "$T/base" "$T/test"
	[ "$status" -eq 1 ]
	[[ "$output" == *"diff: $T/base:2: not a folded stack line"* ]]
	[[ "$output" == *"diff: $T/base:3: two counts"* ]]
	[[ "$output" == *"diff: $T/base:4: "* ]]
	[[ "$output" == *"diff: $T/base:7: "* ]]
	[[ "$output" == *"diff: $T/base: 4 unusable lines skipped"* ]]
	[[ "$output" == *"a;b 5 6"* ]]
	[[ "$output" == *"a;e 2 0"* ]]
}

@test "control bytes and NULs in a stack are garbage, not output" {
	printf 'a;b 1\na\001;c 2\na\000x;d 3\n' >"$T/base"
	printf 'a;b 1\n' >"$T/test"
	run diff -q "$T/base" "$T/test"
	[ "$status" -eq 1 ]
	[[ "$output" == *"base:2: control character"* ]]
	[[ "$output" == *"base:3: "* ]]
	[[ "$output" == *"a;b 1 1" ]]
}

@test "huge counts stay exact" {
	printf 'a 9007199254740992\nb 1\n' >"$T/base"
	printf 'a 9007199254740000\nb 1\n' >"$T/test"
	run diff -q -t "$T/base" "$T/test"
	[ "${lines[0]}" = "$(printf 'base\t9007199254740993')" ] || [ "${lines[0]}" = "$(printf 'base\t9007199254740992')" ]
	run diff -q "$T/base" "$T/test"
	[ "${lines[0]}" = "a 9007199254740992 9007199254740000" ]
	printf 'a 1000000000000\n' >"$T/t2"
	run diff -q -t "$T/t2" "$T/t2"
	[ "${lines[2]}" = "$(printf 'delta\t0')" ]
}

@test "gzip input and stdin" {
	two_traces
	gzip -c "$T/base" >"$T/base.gz"
	run diff -q "$T/base.gz" - <"$T/test"
	[ "$status" -eq 0 ]
	[ "${lines[2]}" = "main;parse;lex 30 50" ]
}

@test "usage errors, unreadable files and write errors exit 2" {
	run diff "$T/only-one"
	[ "$status" -eq 2 ]
	run diff - -
	[ "$status" -eq 2 ]
	run diff -f bogus a b
	[ "$status" -eq 2 ]
	run diff "$T/missing" "$T/missing"
	[ "$status" -eq 2 ]
	[[ "$output" == *"diff: $T/missing: No such file"* ]]
	two_traces
	run diff -o /dev/full "$T/base" "$T/test"
	[ "$status" -eq 2 ]
	run diff --help
	[ "$status" -eq 0 ]
	[[ "$output" == usage:* ]]
}

# Two small evt streams: the same code path in processes with different
# pids/tids and scenario names, plus a DPC.
two_evt() {
	printf '#evt\t1\tsource=a\tscenario=nightly-1\n' >"$T/a.evt"
	printf '%s\t%s\t0\tBackup.exe\t%s\t%s\t1\tip=0x1\t%s\n' \
	    0.1 Sample 2212 4100 'ntdll.dll!RtlUserThreadStart;Backup.exe!Copy' \
	    0.2 Sample 2212 4100 'ntdll.dll!RtlUserThreadStart;Backup.exe!Main' >>"$T/a.evt"
	printf '0.3\tDPC\t2\tIdle\t0\t0\t0.2205\troutine=ndis.sys!0x1a2b0\tmodule=ndis.sys\t\n' >>"$T/a.evt"
	printf '#evt\t1\tsource=b\tscenario=nightly-2\n' >"$T/b.evt"
	printf '%s\t%s\t0\tBackup.exe\t%s\t%s\t1\tip=0x1\t%s\n' \
	    0.1 Sample 3000 5 'ntdll.dll!RtlUserThreadStart;Backup.exe!Copy' \
	    0.2 Sample 3000 5 'ntdll.dll!RtlUserThreadStart;Backup.exe!Copy' \
	    0.3 Sample 3000 5 'ntdll.dll!RtlUserThreadStart;Backup.exe!Main' >>"$T/b.evt"
	printf '0.3\tDPC\t2\tIdle\t0\t0\t0.09\troutine=ndis.sys!0x1a2b0\tmodule=ndis.sys\t\n' >>"$T/b.evt"
}

@test "evt input: stacks built as stackfold builds them, ids and scenario names stripped" {
	two_evt
	run diff -q --unit=us --roots=thread "$T/a.evt" "$T/b.evt"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'Backup;Thread;ntdll.dll!RtlUserThreadStart;Backup.exe!Copy 1000 2000\nBackup;Thread;ntdll.dll!RtlUserThreadStart;Backup.exe!Main 1000 1000')" ]
	# FlameGraph-style roots lose their ids at the source
	run diff -q --unit=us --roots=tid "$T/a.evt" "$T/b.evt"
	[ "$output" = "$(printf 'Backup.exe;ntdll.dll!RtlUserThreadStart;Backup.exe!Copy 1000 2000\nBackup.exe;ntdll.dll!RtlUserThreadStart;Backup.exe!Main 1000 1000')" ]
	run diff -q --unit=us --roots=tid --keep-ids "$T/a.evt" "$T/b.evt"
	[[ "$output" == *"nightly-1;Backup.exe-2212/4100;ntdll.dll!RtlUserThreadStart;Backup.exe!Copy 1000 0"* ]]
	[[ "$output" == *"nightly-2;Backup.exe-3000/5;ntdll.dll!RtlUserThreadStart;Backup.exe!Copy 0 2000"* ]]
}

@test "a diff of two evt files equals the diff of their stackfold outputs" {
	two_evt
	for opts in "" "--roots=process" "--preset=module" "--unit=ms" "--kind=DPC"; do
		stackfold $opts --no-scenario "$T/a.evt" >"$T/a.folded"
		stackfold $opts --no-scenario "$T/b.evt" >"$T/b.folded"
		diff -q $opts "$T/a.evt" "$T/b.evt" >"$T/evt.out"
		diff -q "$T/a.folded" "$T/b.folded" >"$T/folded.out"
		cmp "$T/evt.out" "$T/folded.out" || fail "differs with options '$opts'"
	done
}

@test "stackfold's pattern options group and fold folded input before the diff" {
	two_traces
	run diff -q --group='parse->P;lex->P' "$T/base" "$T/test"
	[[ "$output" == *"main;P 40 50"* ]]
	run diff -q --fold=lex "$T/base" "$T/test"
	[[ "$output" == *"main;parse 40 50"* ]]
	run diff -q --exclude=render "$T/base" "$T/test"
	[[ "$output" != *render* ]]
	run diff -t --include=parse "$T/base" "$T/test"
	[ "${lines[0]}" = "$(printf 'base\t40')" ]
	# filtering changes the totals, and diff says by how much (decision 3)
	run diff -q --include=parse "$T/base" "$T/test"
	[ "$status" -eq 0 ]
	run diff --include=parse "$T/base" "$T/test"
	[[ "$output" == *"diff: $T/base: 1 lines (60) dropped by --include/--exclude"* ]]
	[[ "$output" == *"diff: $T/test: 2 lines (75) dropped by --include/--exclude"* ]]
	run diff --fold-pct=5 "$T/base" "$T/test"
	[[ "$output" == *"--fold-pct ignored"* ]]
	run diff --group='{bad' "$T/base" "$T/test"
	[ "$status" -eq 2 ]
}

@test "evt input: totals follow the unit, garbage evt lines are reported" {
	two_evt
	run diff -t --kind=DPC "$T/a.evt" "$T/b.evt"
	[ "$(tot unit)" = us ]
	[ "${lines[0]}" = "$(printf 'base\t220.5')" ]
	[ "${lines[1]}" = "$(printf 'test\t90')" ]
	[ "${lines[2]}" = "$(printf 'delta\t-130.5')" ]
	run diff --kind=DPC "$T/a.evt" "$T/b.evt"
	[[ "$output" == *"diff: base 220.5 us, test 90 us, delta -130.5 us (-59.18%)"* ]]
	printf '0.4\tSample\tx\n' >>"$T/a.evt"
	run diff -t "$T/a.evt" "$T/b.evt"
	[ "$status" -eq 1 ]
	[[ "$output" == *"diff: $T/a.evt:5: "* ]]
	run diff --kind=Bogus "$T/a.evt" "$T/b.evt"
	[[ "$output" == *"a.evt: none of its 3 events is of the kinds read"* ]]
	printf '#evt\t2\n' >"$T/new.evt"
	run diff "$T/new.evt" "$T/b.evt"
	[ "$status" -eq 2 ]
}

@test "huge fractional counts are printed exactly" {
	printf 'a 10000000000000.5\n' >"$T/h"
	run diff -q "$T/h" "$T/h"
	[ "$output" = "a 10000000000000.5 10000000000000.5" ]
}
# The Windows 7 and Windows 8 PerfView traces of the corpus, decoded once.
corpus_evt() {
	require_corpus
	local d="$BATS_FILE_TMPDIR"
	[ -s "$d/win7.evt" ] || etl2evt "$CORPUS/perfview/ctf-net45-win7.etl.zip" >"$d/win7.evt"
	[ -s "$d/win8.evt" ] || etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$d/win8.evt"
	W7="$d/win7.evt" W8="$d/win8.evt"
}


@test "corpus: Win7 vs Win8 totals are the census sample counts and delta = test - base" {
	corpus_evt
	run diff -t --keep-idle --unit=samples "$W7" "$W8"
	[ "$status" -eq 0 ]
	# corpus/README.md: 16,865 and 79,528 SampledProfile events
	[ "$(tot base)" = 16865 ]
	[ "$(tot test)" = 79528 ]
	[ "$(tot delta)" = 62663 ]
	# in us of the weight column too
	run diff -t --keep-idle --unit=us "$W7" "$W8"
	[ "$status" -eq 0 ]
	[ "$(awk -v b="$(tot base)" -v t="$(tot test)" -v d="$(tot delta)" 'BEGIN { print (t - b == d) }')" = 1 ]
	# the two-count lines add up to the totals, the signed lines to the delta
	diff -q --keep-idle --unit=us "$W7" "$W8" | awk -v b="$(tot base)" -v t="$(tot test)" \
	    '{ sb += $(NF-1); st += $NF } END { exit !(sb == b && st == t) }'
	diff -q -f signed --keep-idle --unit=us "$W7" "$W8" | awk -v d="$(tot delta)" '{ s += $NF } END { exit !(s == d) }'
	diff -q "$W7" "$W8" | evtcheck --folded=flamegraph
}

@test "corpus: two time halves of one trace add up, and a trace minus itself is empty" {
	corpus_evt
	awk -F'\t' -v a="$T/h1.evt" -v b="$T/h2.evt" '/^#/ { print > a; print > b; next }
	    { if ($1 + 0 < 6290) print > a; else print > b }' "$W8"
	run diff -t --keep-idle --unit=samples "$T/h1.evt" "$T/h2.evt"
	[ "$status" -eq 0 ]
	[ "$(tot base)" -gt 0 ] && [ "$(tot test)" -gt 0 ]
	[ $(( $(tot base) + $(tot test) )) -eq 79528 ]
	[ $(( $(tot test) - $(tot base) )) -eq "$(tot delta)" ]
	run diff -q -f signed --keep-idle --roots=thread "$W8" "$W8"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	# grouped by module, the halves still add up
	run diff -t --keep-idle --unit=samples --roots=process --preset=module "$T/h1.evt" "$T/h2.evt"
	[ $(( $(tot base) + $(tot test) )) -eq 79528 ]
}

@test "corpus: overweight by module between Win7 and Win8 agrees with diff's totals" {
	corpus_evt
	run overweight --tsv --all --keep-idle --unit=samples --roots=process --preset=module "$W7" "$W8"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(printf '#totals\tbase=16865\ttest=79528\tdelta=62663\tgrowth=4.7156\tunit=samples')" ]
	# every row: delta = test - base; resp = delta / 62663
	awk -F'\t' 'NR > 2 { if ($4 != $3 - $2) exit 1; if ($5 != "" && ($5 - $4 / 62663 * 100) ^ 2 > 1e-6) exit 1 }' <<<"$output"
	# the test's own process is new in Win8, the Win7 test process is gone
	[ "$(awk -F'\t' '$10 == "Test.x64" { print $1 }' <<<"$output")" = test_only ]
	[ "$(awk -F'\t' '$10 == "test" { print $1 }' <<<"$output")" = base_only ]
}

@test "random bytes: no crash, every unusable line counted, exit 1" {
	python3 -c '
import random, sys
r = random.Random(7)
alpha = b"ab;; !0x1234\t\r\n#evt%3B(-/)Process64 Thread ."
sys.stdout.buffer.write(bytes(r.choice(alpha) if r.random() < 0.9 else r.randrange(256) for _ in range(100000)))' >"$T/rnd"
	two_traces
	for opts in "" "--preset=module" "--keep-ids --strip-hex"; do
		run diff -q $opts "$T/rnd" "$T/test"
		[ "$status" -eq 1 ] || fail "diff $opts: status $status"
		[[ "$output" == *"unusable lines skipped"* ]]
		run overweight $opts "$T/test" "$T/rnd"
		[ "$status" -eq 1 ] || fail "overweight $opts: status $status"
	done
	{ printf '#evt\t1\n'; cat "$T/rnd"; } >"$T/rnd.evt"
	run diff -q "$T/rnd.evt" "$T/test"
	[ "$status" -eq 1 ]
	head -c 3000 "$T/rnd" | gzip >"$T/r.gz"
	head -c 40 "$T/r.gz" >"$T/cut.gz"
	run diff -q "$T/cut.gz" "$T/test"
	[ "$status" -eq 2 ]
	[[ "$output" == *"cut.gz: "* ]]
}

@test "gen_folded data: the same lines as an independent awk merge (difffolded.pl's semantics)" {
	python3 "$GEN_FOLDED" --size 2M --seed 1 >"$T/a"
	python3 "$GEN_FOLDED" --size 2M --seed 2 >"$T/b"
	awk 'FNR == 1 { side++ } { c = $NF; s = $0; sub(/ [0-9]+$/, "", s); w[s, side] += c; seen[s] = 1 }
	    END { for (s in seen) printf "%s %d %d\n", s, w[s, 1], w[s, 2] }' "$T/a" "$T/b" | LC_ALL=C sort >"$T/expect"
	diff -q "$T/a" "$T/b" >"$T/got"
	LC_ALL=C sort -c "$T/got"
	cmp "$T/expect" "$T/got"
	awk '$2 != $3 { print $1, $3 - $2 }' "$T/expect" >"$T/expect.signed"
	diff -q -f signed "$T/a" "$T/b" | awk '{ print $1, $2 }' >"$T/got.signed"
	cmp "$T/expect.signed" "$T/got.signed"
}

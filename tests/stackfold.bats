#!/usr/bin/env bats
# stackfold: PerfView grouping/folding (reference-semantics "Decisions" and §2),
# folded output (§3.1).  Each rule of the reference has its own case.
load helpers

# stackfold with stderr kept apart in $T/err (bats' run merges the two)
sf() { stackfold "$@" 2>"$T/err"; }
# sum of the counts of a folded file
total() { awk '{s += $NF} END {printf "%d\n", s}' "$1"; }
# evt header + event lines: ev TIME KIND PROC PID TID WEIGHT STACK [ATTR...]
hdr() { printf '#evt\t1\tsource=t\tpointer_size=%s\tduration_ms=%s%s\n' "${1:-8}" "${2:-10}" "${3:+	$3}"; }
ev() {
	local t=$1 k=$2 p=$3 pid=$4 tid=$5 w=$6 s=$7; shift 7
	local a=""; for x in "$@"; do a="$a$x	"; done
	printf '%s\t%s\t0\t%s\t%s\t%s\t%s\t%s%s\n' "$t" "$k" "$p" "$pid" "$tid" "$w" "$a" "$s"
}
# every output line must be read unchanged by the three consumers (§3.1)
check_folded() {
	for g in flamegraph inferno speedscope; do
		evtcheck --folded=$g "$1" || fail "not valid for $g: $(cat "$1")"
	done
}

# ---------------------------------------------------------------- basics

@test "folded input passes through, merged per stack, sorted" {
	printf 'a;b;c 3\na;b 2\na;b;c 4\n' >"$T/in"
	run sf "$T/in"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'a;b 2\na;b;c 7')" ]
}

@test "evt input: Sample events counted in samples by default (µs with --unit=us), other kinds ignored" {
	{ hdr; ev 0.100000 Sample a.exe 1 2 1 'a.exe!main;a.exe!f'
	  ev 0.200000 Sample a.exe 1 2 0.5 'a.exe!main'
	  ev 0.300000 CSwitch a.exe 1 2 0 ''
	  ev 0.400000 DPC Idle 0 0 0.22 'ndis.sys!x'; } >"$T/a.evt"
	run sf "$T/a.evt"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'a.exe!main 1\na.exe!main;a.exe!f 1')" ]
	run sf --unit=us "$T/a.evt"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'a.exe!main 500\na.exe!main;a.exe!f 1000')" ]
}

@test "weight choice: --unit=samples counts events (count= attribute), --unit=ms, --kind=dpc" {
	{ hdr; ev 0.1 Sample a.exe 1 2 2 'A!a' count=2
	  ev 0.2 Sample a.exe 1 2 1 'A!a'
	  ev 0.3 DPC Idle 0 0 0.2205 'ndis.sys!x'; } >"$T/a.evt"
	run sf --unit=samples "$T/a.evt"
	[ "$output" = "A!a 3" ]
	run sf --unit=ms "$T/a.evt"
	[ "$output" = "A!a 3" ]
	run sf --kind=dpc --unit=us --decimals=1 "$T/a.evt"
	[ "$output" = "ndis.sys!x 220.5" ]
}

@test "malformed lines are reported with file and line, counted, exit 1; the rest is used" {
	printf 'a;b 3\nno count here\na 1\n' >"$T/in"
	run sf "$T/in"
	[ "$status" -eq 1 ]
	grep -q "in:2:" "$T/err"
	[[ "$output" == *"a;b 3"* ]]
}

# ---------------------------------------------------------------- §2.1 frame naming

@test "§2.1 process and thread frames in PerfView style, Process32 for 4-byte pointers" {
	{ hdr 8; ev 0.1 Sample devenv.exe 8872 6148 1 'A!a'; } >"$T/a.evt"
	run sf --unit=us --roots=thread "$T/a.evt"
	[ "$output" = "Process64 devenv (8872);Thread (6148);A!a 1000" ]
	{ hdr 4; ev 0.1 Sample devenv.exe 8872 6148 1 'A!a'; } >"$T/b.evt"
	run sf --unit=us --roots=process "$T/b.evt"
	[ "$output" = "Process32 devenv (8872);A!a 1000" ]
}

@test "§2.1 FlameGraph-style roots: comm, comm-pid, comm-pid/tid (spaces become _)" {
	{ hdr; ev 0.1 Sample 'my app.exe' 12 34 1 'A!a'; } >"$T/a.evt"
	run sf --unit=us --roots=comm "$T/a.evt";  [ "$output" = "my_app.exe;A!a 1000" ]
	run sf --unit=us --roots=pid "$T/a.evt";   [ "$output" = "my_app.exe-12;A!a 1000" ]
	run sf --unit=us --roots=tid "$T/a.evt";   [ "$output" = "my_app.exe-12/34;A!a 1000" ]
}

@test "§2.1 scenario pseudo-frame sits above the process frame; --no-scenario drops it" {
	{ hdr 8 10 scenario=startup-17; ev 0.1 Sample a.exe 1 2 1 'A!a'; } >"$T/a.evt"
	run sf --unit=us --roots=process "$T/a.evt"
	[ "$output" = "startup-17;Process64 a (1);A!a 1000" ]
	run sf --unit=us --no-scenario "$T/a.evt"
	[ "$output" = "A!a 1000" ]
}

@test "§2.1 anchored ^ntdll.dll! does not match a full-path frame, ntdll.dll! does" {
	printf 'C:\\Windows\\System32\\ntdll.dll!Foo 1\n' >"$T/in"
	run sf -g '^ntdll.dll!->X' "$T/in"
	[ "$output" = 'C:\Windows\System32\ntdll.dll!Foo 1' ]
	run sf -g 'ntdll.dll!->X' "$T/in"
	[ "$output" = "X 1" ]
}

@test "§2.1 system32\\*! groups by path (Decision 4), the os preset too" {
	printf 'C:\\app\\app.exe!main;C:\\Windows\\System32\\kernel32.dll!CreateFileW;C:\\Windows\\System32\\ntdll.dll!NtCreateFile 1\n' >"$T/in"
	run sf -g 'system32\*!->OS' "$T/in"
	[ "$output" = 'C:\app\app.exe!main;OS 1' ]
	run sf --preset=os "$T/in"
	[ "$output" = 'C:\app\app.exe!main;OS <<kernel32.dll!CreateFileW>> 1' ]
}

@test "§2.1 unresolved frames auto-group as module!? and collapse; --keep-addrs keeps them" {
	printf 'a!main;C:\\W\\ntdll.dll!0x1a2b0;ntdll.dll!0x99;ntdll.dll!? 2\n' >"$T/in"
	run sf "$T/in"
	[ "$output" = 'a!main;ntdll.dll!? 2' ]
	run sf --keep-addrs "$T/in"
	[ "$output" = 'a!main;C:\W\ntdll.dll!0x1a2b0;ntdll.dll!0x99;ntdll.dll!? 2' ]
}

@test "§2.1 an unresolved frame matched by a GroupPats entry is not auto-grouped" {
	printf 'a!main;ntdll.dll!0x99 2\n' >"$T/in"
	run sf -g '0x99->ADDR' "$T/in"
	[ "$output" = 'a!main;ADDR 2' ]
}

# ---------------------------------------------------------------- §2.2 pattern syntax

@test "§2.2 metacharacters are literal: . ( ) + ? [ \\ \$ and space" {
	printf 'a!f(int)+0x1?[x]\\$ y 1\naXf 1\n' >"$T/in"
	run sf -g 'a!f(int)+0x1?[x]\$ y->LIT;a.f->DOT' "$T/in"
	[ "$output" = "$(printf 'LIT 1\naXf 1')" ]
}

@test "§2.2 * is any run, % is a word run that includes . and ? but stops at \\" {
	printf 'C:\\x\\ntdll!Foo 1\nmod.dll!? 1\n' >"$T/in"
	run sf -g '{%}!->[$1]' "$T/in"
	[ "$output" = "$(printf '[mod.dll] 1\n[ntdll] 1')" ]
	run sf -g '{*}!->[$1]' "$T/in"
	[ "$output" = "$(printf '[C:\\x\\ntdll] 1\n[mod.dll] 1')" ]
}

@test "§2.2 ^ anchors wherever it appears; matching is unanchored otherwise and case-insensitive" {
	printf 'Process64 devenv (1);x!Y 1\nProcess64 other (2);x!Y 1\n' >"$T/in"
	run sf -x '^Process% devenv' "$T/in"
	[ "$output" = "Process64 other (2);x!Y 1" ]
	run sf -x 'PROCESS64 OTHER' "$T/in"
	[ "$output" = "Process64 devenv (1);x!Y 1" ]
	run sf -x 'cess64 dev' "$T/in"
	[ "$output" = "Process64 other (2);x!Y 1" ]
	run sf -x 'x^Process' "$T/in"
	[ "$(echo "$output" | grep -c ' 1$')" -eq 2 ]
}

@test "§2.2 | is alternation inside one entry" {
	printf 'devenv!a 1\nmsbuild!b 1\nother!c 1\n' >"$T/in"
	run sf -i 'devenv|msbuild' "$T/in"
	[ "$output" = "$(printf 'devenv!a 1\nmsbuild!b 1')" ]
}

@test "§2.2 {} captures: \$1..\$9 and \$&; only single digits are substituted" {
	printf 'mod!Cls::Meth 1\n' >"$T/in"
	run sf -g '{%}!{%}::{%}->$3 $2 $1 [$&] $10' "$T/in"
	[ "$output" = "Meth Cls mod [mod!Cls::Meth] mod0 1" ]
}

@test "§2.2 class prefix: mscorlib!Assembly:: matches any method of the class" {
	printf 'mscorlib!Assembly::Load 1\nmscorlib!Assembly::GetType 2\nmscorlib!AssemblyName::X 4\n' >"$T/in"
	run sf -g 'mscorlib!Assembly::->ASM' "$T/in"
	[ "$output" = "$(printf 'ASM 3\nmscorlib!AssemblyName::X 4')" ]
}

@test "§2.2 @ raw regex with .NET escapes (\\d, (?:), anchored at both ends" {
	printf 'Thread (12);a 1\nThread (12) CPU=4ms;b 1\n' >"$T/in"
	run sf -g '@^Thread \(\d+\)$->T' "$T/in"
	[ "$output" = "$(printf 'T;a 1\nThread (12) CPU=4ms;b 1')" ]
	run sf -g '@(?:Th)read \((\d+)\)->id=$1' "$T/in"
	[ "$output" = "$(printf 'id=12;a 1\nid=12;b 1')" ]
}

@test "§2.2 bad patterns are usage errors naming the pattern; nested quantifiers refused" {
	run sf -g '{%' /dev/null
	[ "$status" -eq 2 ]
	grep -q "{%" "$T/err"
	run sf --fold '@a++++++++++++++++++++++++' /dev/null
	[ "$status" -eq 2 ]
	grep -q "nested quantifier" "$T/err"
}

@test "§2.2 lists split on ';', entries trimmed, empty entries skipped" {
	printf 'a!x 1\nb!y 1\nc!z 1\n' >"$T/in"
	run sf -x ' a!x ;; b!y ;' "$T/in"
	[ "$output" = "c!z 1" ]
}

# ---------------------------------------------------------------- §2.3 GroupPats

@test "Decision 1: GroupPats first matching entry wins by default" {
	printf 'x!foo 1\n' >"$T/in"
	run sf -g 'foo->bar;bar->baz' "$T/in"
	[ "$output" = "bar 1" ]
}

@test "Decision 1: --chain-groups feeds a normal group's name to later entries (PerfView code)" {
	printf 'x!foo 1\n' >"$T/in"
	run sf --chain-groups -g 'foo->bar;bar->baz' "$T/in"
	[ "$output" = "baz 1" ]
}

@test "§2.3 => is looked for before ->; no arrow means the name is the matched text" {
	printf 'a->b=>c!x 1\nmodA!f 2\n' >"$T/in"
	# the pattern of 'a->b=>G' is 'a->b' (=> first), so frame 'a->b=>c!x' is grouped into G
	run sf -g 'a->b=>G' "$T/in"
	[ "${lines[0]}" = "G <<a->b=>c!x>> 1" ]
	run sf -g '{%}!' "$T/in"
	[ "$output" = "$(printf 'c! 1\nmodA! 2')" ]
}

@test "§2.3 a leading [description] is stripped, only at the very beginning" {
	printf 'm!f 1\n' >"$T/in"
	run sf -g '[group modules] {%}!->module $1' "$T/in"
	[ "$output" = "module m 1" ]
}

@test "§2.3 the pattern part is not trimmed (space before the arrow), the name part is" {
	printf 'Thread (12);a 1\nThreadPool!b 1\n' >"$T/in"
	run sf -g 'Thread ->   AllThreads  ' "$T/in"
	[ "$output" = "$(printf 'AllThreads;a 1\nThreadPool!b 1')" ]
}

@test "§2.3 an empty name keeps the frame ungrouped and stops (exclusion group)" {
	printf 'C:\\my\\me.dll!f;C:\\os\\ntdll.dll!g 1\n' >"$T/in"
	run sf -g 'my\*!->;{%}!->module $1' "$T/in"
	[ "$output" = 'C:\my\me.dll!f;module ntdll.dll 1' ]
}

@test "§2.3 a run of normal-group members becomes one node" {
	printf 'A!a;ntdll!X;ntdll!Y;B!b 1\n' >"$T/in"
	run sf -g 'ntdll!->OS' "$T/in"
	[ "$output" = "A!a;OS;B!b 1" ]
}

@test "§2.3 entry groups: G <<entry>>, members below collapse, each entry call its own node" {
	printf 'main!a;kernel32.dll!CreateFileW;ntdll.dll!NtCreateFile;ntoskrnl.exe!x 5\nmain!a;user32.dll!GetMessageW;ntdll.dll!Y 2\n' >"$T/in"
	run sf -g 'kernel32%!=>OS;user32%!=>OS;ntdll%!=>OS;ntoskrnl%!=>OS' "$T/in"
	[ "${lines[0]}" = "main!a;OS <<kernel32.dll!CreateFileW>> 5" ]
	[ "${lines[1]}" = "main!a;OS <<user32.dll!GetMessageW>> 2" ]
}

@test "§2.3 leaving an entry group and coming back creates a new entry node; display drops the directory" {
	printf 'C:\\w\\ntdll.dll!A;app!cb;C:\\w\\ntdll.dll!B 1\n' >"$T/in"
	run sf -g 'ntdll%!=>OS' "$T/in"
	[ "$output" = "OS <<ntdll.dll!A>>;app!cb;OS <<ntdll.dll!B>> 1" ]
}

@test "§2.3 presets by name: module, module-entries, class, just-my-code, fold-threads" {
	printf 'Thread (9);app.exe!Main;mscorlib.dll!System.String.Concat(a);clr.dll!JIT_New;clr.dll!Alloc 1\n' >"$T/in"
	run sf --preset=module "$T/in"
	[ "$output" = "Thread (9);module app.exe;module mscorlib.dll;module clr.dll 1" ]
	run sf --preset=module-entries "$T/in"
	[ "$output" = "Thread (9);module app.exe <<app.exe!Main>>;module mscorlib.dll <<mscorlib.dll!System.String.Concat(a)>>;module clr.dll <<clr.dll!JIT_New>> 1" ]
	run sf --preset=class "$T/in"
	[ "$output" = "Thread (9);app.exe!Main;class mscorlib.dll!System.String;clr.dll!JIT_New;clr.dll!Alloc 1" ]
	run sf --preset=just-my-code "$T/in"
	[ "$output" = "Thread (9);app.exe!Main;OTHER <<mscorlib.dll!System.String.Concat(a)>> 1" ]
	run sf --preset=fold-threads,module "$T/in"
	[ "$output" = "AllThreads;module app.exe;module mscorlib.dll;module clr.dll 1" ]
	run sf --preset=nosuch "$T/in"
	[ "$status" -eq 2 ]
	run sf --list-presets
	[[ "$output" == *"module-entries"* ]]
}

@test "§2.3 just-my-code=PATS names my modules" {
	printf 'lib.dll!a;Mine.dll!b;lib.dll!c 1\n' >"$T/in"
	run sf --preset='just-my-code=Mine.dll!' "$T/in"
	[ "$output" = "OTHER <<lib.dll!a>>;Mine.dll!b;OTHER <<lib.dll!c>> 1" ]
}

# ---------------------------------------------------------------- §2.4 order of operations

@test "§2.4 FoldPats removes the frame and its cost lands on the caller" {
	printf 'a!main;k!KiSystemServiceCopyEnd;k!NtX 3\na!main;k!KiSystemServiceCopyEnd 2\n' >"$T/in"
	run sf -f '%ServiceCopyEnd' "$T/in"
	[ "$output" = "$(printf 'a!main 2\na!main;k!NtX 3')" ]
}

@test "§2.4 direct recursion collapses (same identity as the caller)" {
	printf 'a!f;a!f;a!f;b!g;a!f 1\n' >"$T/in"
	run sf "$T/in"
	[ "$output" = "a!f;b!g;a!f 1" ]
}

@test "§2.4 ExcPats sees the post-group name and beats fold; a folded frame still drops the sample" {
	printf 'a!main;ntdll.dll!X 3\na!main;b!y 2\n' >"$T/in"
	run sf -g '{%}!->module $1' -x '^module ntdll' "$T/in"
	[ "$output" = "module a;module b 2" ]
	run sf -x 'ntdll.dll!X' -f 'ntdll.dll!X' "$T/in"
	[ "$output" = "a!main;b!y 2" ]
	grep -q -- "--exclude removed 1 events, 3.000" "$T/err"
}

@test "§2.4 / Decision 2: IncPats is AND across entries, and folded frames do not count" {
	printf 'a!x;b!y 1\na!x;c!z 2\nb!y 4\n' >"$T/in"
	run sf -i 'a!x;b!y' "$T/in"
	[ "$output" = "a!x;b!y 1" ]
	run sf -i 'a!x|b!y' "$T/in"
	[ "$(total <(echo "$output"))" -eq 7 ]
	run sf -f 'b!y' -i 'b!y' "$T/in"
	[ "$output" = "" ]
}

@test "§2.4 IncPats naming a function inside an entry group matches only the entry" {
	printf 'a!main;ntdll!Entry;ntdll!Inner 1\n' >"$T/in"
	run sf -g 'ntdll!=>OS' -i 'ntdll!Inner' "$T/in"
	[ "$output" = "" ]
	run sf -g 'ntdll!=>OS' -i 'ntdll!Entry' "$T/in"
	[ "$output" = "a!main;OS <<ntdll!Entry>> 1" ]
}

@test "§2.4 filtering reports what it removed on stderr" {
	printf 'a!x 1\nb!y 4\n' >"$T/in"
	run sf -x 'b!y' "$T/in"
	[ "$output" = "a!x 1" ]
	grep -q -- "--exclude removed 1 events, 4.000" "$T/err"
	run sf -i 'b!y' "$T/in"
	[ "$output" = "b!y 4" ]
	grep -q -- "--include removed 1 events, 1.000" "$T/err"
}

@test "Decision 3: grouping and folding conserve the total exactly (generated 2 MB)" {
	python3 "$GEN_FOLDED" --size 2M --seed 3 >"$T/in"
	in=$(total "$T/in")
	for opts in "" "--preset=module" "--preset=module-entries" "--preset=class-entries" \
	    "--preset=perfview" "--fold-pct=5 --preset=module" "-f %Dispatcher -g {%}!=>M" ; do
		stackfold $opts "$T/in" >"$T/out"
		[ "$(total "$T/out")" -eq "$in" ] || fail "total changed with '$opts'"
	done
}

# ---------------------------------------------------------------- §2.5 Fold%

@test "§2.5 Fold% example: main(1000) -> parse(6) -> lex(5) at 1% folds into main" {
	printf 'a!main;b!parse;c!lex 5\na!main;b!parse 1\na!main 994\n' >"$T/in"
	run sf --fold-pct=1 "$T/in"
	[ "$output" = "a!main 1000" ]
	run sf --fold-pct=1 --tsv "$T/in"
	[[ "$output" == *"$(printf '1000\t100.0\t1000\t6\t6\t1000')"* ]]
}

@test "§2.5 Fold% needs both conditions: big overall is never folded, its small children can be" {
	printf 'a!main;b!parse;c!lex 5\na!main;b!parse 1\na!main;x!other;b!parse 8\na!main 986\n' >"$T/in"
	run sf --fold-pct=1 "$T/in"
	[ "$output" = "$(printf 'a!main 994\na!main;b!parse 6')" ]
}

@test "§2.5 Fold% is on the metric, not the sample count" {
	{ hdr; ev 0.1 Sample a.exe 1 2 98 'a!main'
	  ev 0.2 Sample a.exe 1 2 0.5 'a!main;b!tiny'
	  ev 0.3 Sample a.exe 1 2 0.5 'a!main;b!tiny'
	  ev 0.4 Sample a.exe 1 2 0.5 'a!main;b!tiny'
	  ev 0.5 Sample a.exe 1 2 0.5 'a!main;b!tiny'; } >"$T/a.evt"
	# 4 of 5 samples, but 2% of the metric: folded at 3%
	run sf --fold-pct=3 --unit=ms "$T/a.evt"
	[ "$output" = "a!main 100" ]
	run sf --fold-pct=3 --unit=samples "$T/a.evt"
	[ "$output" = "$(printf 'a!main 1\na!main;b!tiny 4')" ]
}

@test "§2.5 Fold% never folds BROKEN" {
	printf 'BROKEN;x!y 1\na!main 999\n' >"$T/in"
	run sf --fold-pct=1 "$T/in"
	[ "$output" = "$(printf 'BROKEN 1\na!main 999')" ]
}

# ---------------------------------------------------------------- §2.6 ByName

@test "§2.6 ByName: sorted by exclusive, inclusive counts a sample once under recursion" {
	printf 'a!A;b!B;a!A 4\na!A 1\nc!C 2\n' >"$T/in"
	run sf --tsv "$T/in"
	[ "${lines[0]}" = "$(printf 'Exc\tExc%%\tExc Ct\tFold\tFold Ct\tInc\tInc%%\tInc Ct\tFirst\tLast\tWhen\tName')" ]
	[[ "${lines[1]}" == "$(printf '5\t71.4\t5\t0\t0\t5\t71.4\t5\t')"*"a!A" ]]
	[[ "${lines[2]}" == "$(printf '2\t28.6\t2\t')"*"c!C" ]]
	[[ "${lines[3]}" == "$(printf '0\t0.0\t0\t0\t0\t4\t57.1\t4\t')"*"b!B" ]]
}

@test "§2.6 ByName First/Last are the times of the first/last inclusive sample (ms)" {
	{ hdr 8 100; ev 10.000000 Sample a.exe 1 2 1 'a!main;b!f'
	  ev 20.000000 Sample a.exe 1 2 1 'a!main'
	  ev 50.000000 Sample a.exe 1 2 1 'a!main;b!f'; } >"$T/a.evt"
	run sf --tsv "$T/a.evt"
	[[ "$output" == *"$(printf '10.000\t51.000\t')"*"b!f"* ]]
	[[ "$output" == *"$(printf '10.000\t51.000\t')"*"a!main"* ]]
}

@test "§2.6 When: 32 buckets, 100% = one CPU busy for the bucket; characters _ . o 0-9 A" {
	# 32 ms trace, 1 ms buckets: bucket 0 full (A), bucket 1 half (5), bucket 2 5% (0),
	# bucket 3 0.5% (o), bucket 4 0.05% (.), bucket 5 two CPUs (K), rest empty (_)
	{ hdr 8 32; ev 0.000000 Sample a.exe 1 2 1 'a!x'
	  ev 1.000000 Sample a.exe 1 2 0.5 'a!x'
	  ev 2.000000 Sample a.exe 1 2 0.05 'a!x'
	  ev 3.000000 Sample a.exe 1 2 0.005 'a!x'
	  ev 4.000000 Sample a.exe 1 2 0.0005 'a!x'
	  ev 5.000000 Sample a.exe 1 2 1 'a!x'
	  ev 5.000000 Sample a.exe 1 3 1 'a!x'; } >"$T/a.evt"
	run sf --tsv "$T/a.evt"
	[ "$(echo "${lines[1]}" | cut -f11)" = "A50o.K__________________________" ]
	run sf --by-name "$T/a.evt"
	[[ "${lines[0]}" == *"buckets of 1.000 ms; Metric/Interval 0.11"* ]]
	[[ "$output" == *"A50o.K__________________________  a!x"* ]]
}

@test "§2.6 When spreads an event over the buckets its interval overlaps" {
	{ hdr 8 32; ev 0.500000 DPC Idle 0 0 2 'ndis.sys!x'; } >"$T/a.evt"
	run sf --kind=dpc --tsv "$T/a.evt"
	[ "$(echo "${lines[1]}" | cut -f11)" = "5A5_____________________________" ]
}

# ---------------------------------------------------------------- §3.1 folded output

@test "§3.1 output is read unchanged by flamegraph.pl, inferno and speedscope (integer counts)" {
	{ hdr; ev 0.1 Sample 'a b.exe' 1 2 0.1221 'x.dll!f(int, char);y.dll!g a%3Bb;ntoskrnl.exe!KiX' kframes=1
	  ev 0.2 Sample 'a b.exe' 1 2 0.1221 'x.dll!f 12' ; } >"$T/a.evt"
	for opts in "" "--roots=thread" "--roots=tid" "--kernel" "--preset=module-entries" "--unit=ms"; do
		stackfold $opts "$T/a.evt" >"$T/out"
		check_folded "$T/out"
	done
}

@test "§3.1 ';' inside a frame (evt %3B) becomes ':' and _[k] marks kernel frames" {
	{ hdr; ev 0.1 Sample a.exe 1 2 1 'a!f%3Bg;ntoskrnl.exe!KiA;ntoskrnl.exe!KiB' kframes=2; } >"$T/a.evt"
	run sf --unit=us --kernel "$T/a.evt"
	[ "$output" = "a!f:g;ntoskrnl.exe!KiA_[k];ntoskrnl.exe!KiB_[k] 1000" ]
}

@test "§3.1 a frame ending in ' 123' is respelled so it is never read as a second count" {
	printf 'a;b 12 5\n' >"$T/in"
	run sf "$T/in"
	[ "$status" -eq 1 ]
	{ hdr; ev 0.1 Sample a.exe 1 2 1 'a!x;frame 12'; } >"$T/a.evt"
	stackfold --unit=us "$T/a.evt" >"$T/out"
	check_folded "$T/out"
	[ "$(cat "$T/out")" = "a!x;frame_12 1000" ]
}

@test "§3.1 integer rounding carries the remainder: the output total is the rounded input total" {
	{ hdr; for i in 1 2 3 4 5 6 7; do ev 0.$i Sample a.exe 1 2 0.1221 "a!f$i"; done; } >"$T/a.evt"
	stackfold --unit=ms "$T/a.evt" >"$T/out"
	[ "$(total "$T/out")" -eq 1 ]
	stackfold --unit=us "$T/a.evt" >"$T/out"
	[ "$(total "$T/out")" -eq 855 ]
	check_folded "$T/out"
}

@test "generated folded file: every line valid for all three consumers after module grouping" {
	python3 "$GEN_FOLDED" --size 1M --seed 5 >"$T/in"
	stackfold --preset=module-entries --roots=none "$T/in" >"$T/out"
	check_folded "$T/out"
	[ "$(wc -l <"$T/out")" -gt 10 ]
}

@test "unix manners: --help, --version, -o FILE, unknown option exits 2" {
	run sf --help;    [ "$status" -eq 0 ]; [[ "$output" == *"--group"* ]]
	run sf --version; [ "$status" -eq 0 ]; [[ "$output" == *"stackfold"* ]]
	run sf --bogus;   [ "$status" -eq 2 ]
	printf 'a 1\n' | stackfold -o "$T/o"
	[ "$(cat "$T/o")" = "a 1" ]
}

@test "DPC/ISR: the routine= attribute is the leaf frame (WPA's by Module, Function)" {
	{ hdr; ev 0.3 DPC Idle 0 0 0.2205 '' routine=ndis.sys!0x1a2b0 module=ndis.sys
	  ev 0.4 DPC Idle 0 0 0.1 'ntoskrnl.exe!KiRetireDpcList' routine=ndis.sys!Foo
	  ev 0.5 ISR Idle 0 0 0.05 'x!y;ndis.sys!Foo' routine=ndis.sys!Foo; } >"$T/a.evt"
	run sf --kind=dpcisr "$T/a.evt"
	[ "$output" = "$(printf 'ndis.sys!? 221\nntoskrnl.exe!KiRetireDpcList;ndis.sys!Foo 100\nx!y;ndis.sys!Foo 50')" ]
	run sf --kind=dpc --keep-addrs --preset=module "$T/a.evt"
	[ "$output" = "$(printf 'module ndis.sys 221\nmodule ntoskrnl.exe;module ndis.sys 100')" ]
}

@test "§2.3 an unresolved frame enters an entry group as module!? (one node per module, not per address)" {
	printf 'a!main;C:\\w\\clr.dll!0x8aff;clr.dll!0x11 1\na!main;clr.dll!0x99 2\n' >"$T/in"
	run sf -p module-entries "$T/in"
	[ "$output" = "module a <<a!main>>;module clr.dll <<clr.dll!?>> 3" ]
	run sf -p module-entries --keep-addrs "$T/in"
	[ "${lines[0]}" = "module a <<a!main>>;module clr.dll <<clr.dll!0x8aff>> 1" ]
}

# ---------------------------------------------------------------- real traces

# corpus TRACE: decode a corpus trace once per test into $T/c.evt; echo its Sample weight in ms
corpus() {
	require_corpus
	etl2evt "$CORPUS/perfview/$1" >"$T/c.evt" 2>/dev/null || fail "etl2evt $1 failed"
	evtcheck -c "$T/c.evt" | awk -F'\t' '$1=="Sample" {printf "%d\n", $3}'
}
# module rows of a by-name TSV with a positive inclusive metric
modules() { cut -f6,12 "$1" | awk -F'\t' '$1 > 0 && $2 ~ /^module / {print $2}' | sort; }

@test "corpus Win8 net.4.5.2.x64: module view a Windows user recognises; weight conserved exactly" {
	ms=$(corpus net.4.5.2.x64.etl.zip)
	[ "$ms" -gt 50000 ]
	for opts in "--preset=module" "--preset=module-entries --roots=thread" "--preset=clr-os-entries" \
	    "--preset=perfview --fold-pct=0" "--kernel --roots=tid"; do
		stackfold --keep-idle --unit=us $opts "$T/c.evt" >"$T/out"
		[ "$(total "$T/out")" -eq $((ms * 1000)) ] || fail "total changed with '$opts'"
	done
	check_folded "$T/out"
	stackfold --preset=module --tsv "$T/c.evt" >"$T/bn"
	modules "$T/bn" >"$T/mods"
	for m in ntoskrnl.exe ntdll.dll clr.dll mscorlib.dll kernel32.dll KernelBase.dll hal.dll; do
		grep -qx "module $m" "$T/mods" || fail "no 'module $m' in: $(tr '\n' ' ' <"$T/mods")"
	done
	# the Idle process is most of this trace: evtfilter removes it and says how much
	evtfilter "$T/c.evt" 2>"$T/err" | stackfold --unit=us --preset=module >"$T/out"
	idle=$(sed -n 's/.*removed \([0-9]*\) Idle samples, \([0-9.]*\) ms.*/\2/p' "$T/err")
	[ -n "$idle" ]
	[ $(( $(total "$T/out") + idle * 1000 )) -eq $((ms * 1000)) ]
}

@test "corpus Win7 ctf-net45-win7: module entries, Fold%, ByName totals and process of interest" {
	ms=$(corpus ctf-net45-win7.etl.zip)
	[ "$ms" -gt 10000 ]
	stackfold --keep-idle --unit=us --preset=module-entries --fold-pct=1 --roots=thread "$T/c.evt" >"$T/out"
	[ "$(total "$T/out")" -eq $((ms * 1000)) ]
	check_folded "$T/out"
	stackfold --keep-idle --preset=module --tsv "$T/c.evt" >"$T/bn"
	modules "$T/bn" >"$T/mods"
	for m in ntoskrnl.exe ntdll.dll clr.dll KernelBase.dll wow64.dll; do
		grep -qx "module $m" "$T/mods" || fail "no 'module $m' in: $(tr '\n' ' ' <"$T/mods")"
	done
	# ByName: exclusive sums to the total, no inclusive above it
	awk -F'\t' -v t="$ms" 'NR > 1 {e += $1; if ($6 > t) bad = 1} END {exit !(e == t && !bad)}' "$T/bn"
	# the PerfView process found by SaveScenarioCPUStacks' rule
	evtfilter --poi=first-long "$T/c.evt" 2>"$T/err" | stackfold --roots=process >"$T/out"
	grep -q "PerfView.exe (pid 3884)" "$T/err"
	[ "$(cut -d';' -f1 "$T/out" | sort -u)" = "Process64 PerfView (3884)" ]
}

@test "bad input: absurd count=/kframes=/weights are malformed lines, deep stacks and garbage do not crash" {
	{ hdr; ev 0.1 Sample a.exe 1 2 1 'A!a' count=99999999999999999999
	  ev 0.2 Sample a.exe 1 2 1 'A!a' kframes=-4
	  ev 0.3 Sample a.exe 1 2 1e3 'A!a'
	  ev 0.4 Sample a.exe 1 2 9999999999999 'A!a'
	  ev 0.5 Sample a.exe 1 2 1 'A!a' count=3; } >"$T/a.evt"
	run sf --unit=samples "$T/a.evt"
	[ "$status" -eq 1 ]
	[ "$output" = "A!a 3" ]
	[ "$(grep -c 'a.evt:[2-5]:' "$T/err")" -eq 4 ]
	python3 -c "
import random; r = random.Random(1)
print(';'.join('f%d' % i for i in range(100000)) + ' 5')
for i in range(500):
    print(bytes(r.randrange(1, 256) for _ in range(r.randrange(0, 80))).replace(b'\n', b'').decode('latin-1') + ' 1')
" >"$T/in"
	run sf --fold-pct=1 "$T/in"
	[ "$status" -le 1 ]
	run sf --by-name "$T/in"
	[ "$status" -le 1 ]
}

@test "the backup-server incident (etlgen): ndis.sys DPCs on CPUs 0,2,4,6 top the DPC ByName, ~220 us each" {
	etlgen -o "$T/i.etl" "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" 2>/dev/null
	etl2evt "$T/i.etl" 2>/dev/null | evtfilter -k dpc -C 0,2,4,6 2>"$T/ef" |
	    stackfold --kind=dpc --keep-addrs --tsv >"$T/bn"
	grep -q "removed [0-9]* events, [0-9.]* ms, by cpu" "$T/ef"
	top=$(sed -n 2p "$T/bn")
	[ "$(echo "$top" | cut -f12)" = "ndis.sys!0x1a2b0" ]
	[ "$(echo "$top" | cut -f3)" -eq 163000 ]
	# average duration = Exc ms / Exc Ct, in microseconds
	echo "$top" | awk -F'\t' '{ a = $1 / $3 * 1000; exit !(a > 200 && a < 240) }'
	# four CPUs mostly busy: the When column is beyond 340% (*) in every bucket
	[ "$(echo "$top" | cut -f11)" = "********************************" ]
}

@test "§3.1 trailing blanks and control bytes in frames of folded input are respelled; output stays valid" {
	printf 'a ;b\001c 3\n' >"$T/in"
	run sf "$T/in"
	[ "$output" = "a_;b_c 3" ]
	stackfold "$T/in" >"$T/out"
	check_folded "$T/out"
}

@test "§2.5 Fold% can fold a whole top-level node into ROOT; the total is still written" {
	printf 'a!main 999\nb!tiny 1\n' >"$T/in"
	run sf --fold-pct=1 "$T/in"
	[ "$output" = "$(printf 'ROOT 1\na!main 999')" ]
}

@test "corpus Win8 with etl2evt --full-paths: system32\\* -> OS (Decision 4), .NET modules stay modules" {
	require_corpus
	etl2evt --full-paths "$CORPUS/perfview/net.4.5.2.x64.etl.zip" 2>/dev/null | evtfilter 2>/dev/null >"$T/c.evt"
	grep -qi 'C:\\Windows\\System32\\' "$T/c.evt"
	stackfold --preset=os,module-entries --tsv "$T/c.evt" >"$T/bn"
	cut -f12 "$T/bn" >"$T/names"
	grep -qx 'OS <<ntdll.dll!?>>' "$T/names"
	grep -qx 'module clr.dll <<clr.dll!?>>' "$T/names"
	! grep -qi 'system32' "$T/names"
	stackfold --preset=os,module-entries "$T/c.evt" >"$T/out"
	check_folded "$T/out"
}

@test "bad input: a huge frame name is cut to 4096 bytes (bounded pattern matching), and said so" {
	python3 -c "print('x!' + 'a' * 200000 + '%3Bz;b!c 1')" >"$T/in"
	run sf -g '{%}{%}{%}q->X' "$T/in"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | cut -d';' -f1 | wc -c)" -eq 4097 ]
	[[ "$output" == *"aaa...;b!c 1" ]]
	grep -q "1 frame names longer than 4096 bytes were cut" "$T/err"
}

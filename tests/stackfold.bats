#!/usr/bin/env bats
# stackfold: PerfView grouping/folding (reference-semantics §2, Decisions) and folded output (§3.1).
load helpers

# sum of the counts of a folded file
total() { awk '{s += $NF} END {printf "%d\n", s}' "$1"; }

@test "folded input passes through, merged per stack" {
	printf 'a;b;c 3\na;b 2\na;b;c 4\n' >"$T/in"
	run stackfold "$T/in"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf 'a;b 2\na;b;c 7')" ]
}

@test "GroupPats: first matching entry wins by default (Decision 1)" {
	printf 'x!foo 1\n' >"$T/in"
	run stackfold -g 'foo->bar;bar->baz' "$T/in"
	[ "$output" = "bar 1" ]
}

@test "GroupPats: --chain-groups feeds a normal group's name to later entries" {
	printf 'x!foo 1\n' >"$T/in"
	run stackfold --chain-groups -g 'foo->bar;bar->baz' "$T/in"
	[ "$output" = "baz 1" ]
}

@test "entry groups: G <<entry>> with inner members collapsed, new entry per call" {
	printf 'main!a;kernel32.dll!CreateFileW;ntdll.dll!NtCreateFile;ntoskrnl.exe!x 5\nmain!a;user32.dll!GetMessageW;ntdll.dll!Y 2\n' >"$T/in"
	run stackfold -g 'kernel32%!=>OS;user32%!=>OS;ntdll%!=>OS;ntoskrnl%!=>OS' "$T/in"
	[ "${lines[0]}" = "main!a;OS <<kernel32.dll!CreateFileW>> 5" ]
	[ "${lines[1]}" = "main!a;OS <<user32.dll!GetMessageW>> 2" ]
}

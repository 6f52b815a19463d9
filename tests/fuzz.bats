#!/usr/bin/env bats
# CI smoke for the libFuzzer harnesses (tests/fuzz.sh, `make fuzz` for real
# runs): every harness builds, replays its saved crash reproducers
# (tests/regress/HARNESS/), and fuzzes a fixed number of inputs from a fixed
# seed (libFuzzer -runs and -seed) without finding anything.  Counted, not
# timed: the same commit always gives the same result, however busy the
# machine.  The harnesses are built with ASan+UBSan already, so the
# check-asan pass does not run them a second time.
load helpers

local_setup() {
	if asan; then skip "fuzz harnesses are ASan+UBSan builds already; ran in the normal pass"; fi
	command -v clang >/dev/null || fail "clang is missing (make deps installs it)"
	FUZZ_DIR="$BATS_FILE_TMPDIR/fuzz"
	FUZZ_OPT=-O0	# builds 3x faster; a smoke run does not need the speed
	export FUZZ_DIR FUZZ_OPT
}

@test "fuzz: every harness builds and its saved crash inputs pass" {
	run env FUZZ_SECONDS=0 "$BATS_TEST_DIRNAME/fuzz.sh"
	echo "$output"
	[ "$status" -eq 0 ]
	n=$(ls "$BATS_TEST_DIRNAME"/fuzz/fuzz_*.c | wc -l)
	[ "$(grep -c 'regress ok' <<<"$output")" -eq "$n" ]
}

@test "fuzz: each harness fuzzes a fixed, seeded number of inputs and finds nothing" {
	n=$(ls "$BATS_TEST_DIRNAME"/fuzz/fuzz_*.c | wc -l)
	run env FUZZ_RUNS=3000 FUZZ_SEED=1 "$BATS_TEST_DIRNAME/fuzz.sh"
	echo "$output"
	if [ "$status" -ne 0 ]; then
		# keep what was found: the bats scratch dir goes away
		keep="${TMPDIR:-/tmp}/etlkit-fuzz-found.$$"
		mkdir -p "$keep" && cp -r "$FUZZ_DIR/crashes" "$FUZZ_DIR/logs" "$keep/" 2>/dev/null
		echo "fuzz: inputs and logs kept in $keep (replay: FUZZ_DIR/bin/HARNESS INPUT)"
		grep -h -m3 -E 'ERROR|runtime error|SUMMARY' "$FUZZ_DIR"/logs/*.log
	fi
	[ "$status" -eq 0 ]
	[ "$(grep -cE '^fuzz_[a-z0-9_]+ +[0-9]+ +[0-9]+ .* ok$' <<<"$output")" -eq "$n" ]
}

@test "fuzz: the runner catches a crash, saves the input and fails; a saved reproducer fails the replay" {
	mkdir -p "$T/h" "$T/r/fuzz_boom"
	cat >"$T/h/fuzz_boom.c" <<'C'
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	volatile char *p = malloc(4);
	int r = 0;
	if (n >= 1 && d[0] == 'B')
		r = p[n + 4];	/* heap overflow */
	free((void *)p);
	return r & 0;
}
C
	run env FUZZ_HARNESSES="$T/h" FUZZ_REGRESS="$T/r" FUZZ_RUNS=1000000 FUZZ_SEED=1 "$BATS_TEST_DIRNAME/fuzz.sh"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"fuzz_boom"*"FOUND"*"AddressSanitizer"* ]]
	ls "$FUZZ_DIR"/crashes/fuzz_boom-crash-*
	printf 'BOOOOOOOOOM' >"$T/r/fuzz_boom/crash-1"
	run env FUZZ_HARNESSES="$T/h" FUZZ_REGRESS="$T/r" FUZZ_SECONDS=0 "$BATS_TEST_DIRNAME/fuzz.sh"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"fuzz_boom"*"REGRESSION"* ]]
}

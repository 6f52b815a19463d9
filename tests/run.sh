#!/usr/bin/env bash
# Runs the bats suite (all tests/*.bats, or the files given) and ends
# with one summary line "N passed, N failed, N skipped".
# Exit status: 0 when nothing failed, 1 otherwise, 2 when there is no
# corpus of real traces (tests/corpus/locate.bash).
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${ETLKIT_BIN:=$here/../bin}"
export ETLKIT_BIN
# No corpus: one line saying how to get it, not a failure per test.
. "$here/corpus/locate.bash"
if ! corpus_dir "$here/.." >/dev/null; then
	echo "tests: $CORPUS_HINT" >&2
	exit 2
fi
if [ $# -eq 0 ]; then set -- "$here"/*.bats; fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
bats --tap "$@" | tee "$log"
passed=$(grep -cE '^ok [0-9]+' "$log" | tr -d ' ')
skipped=$(grep -cE '^ok [0-9]+ .*# skip' "$log" | tr -d ' ')
failed=$(grep -cE '^not ok [0-9]+' "$log" | tr -d ' ')
planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$log" | head -1)
passed=$((passed - skipped))
ran=$((passed + failed + skipped))
if [ -n "$planned" ] && [ "$ran" -lt "$planned" ]; then
	echo "# bats stopped early: $ran of $planned tests ran"
	failed=$((failed + planned - ran))
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$ran" -gt 0 ]

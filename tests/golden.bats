#!/usr/bin/env bats
# Goldens: every tool's output on the real corpus and on synthesised traces
# is byte-identical to what the list tests/golden/SHA256SUMS records (made
# with tests/golden/outputs.sh at 979f3e7, before the code was restructured).
# An intended change of output updates the list in its own commit and says
# why; any other difference is a regression.
load helpers

@test "golden: every tool's output on the corpus and synthesised traces is unchanged" {
	require_corpus
	GOLDEN_TMP="$T" ETLKIT_CORPUS="$CORPUS" "$ROOT/tests/golden/outputs.sh" >"$T/now"
	textdiff -u "$ROOT/tests/golden/SHA256SUMS" "$T/now" || fail "outputs differ from the goldens (- recorded, + now)"
	[ "$(wc -l <"$T/now")" -eq 69 ]
}

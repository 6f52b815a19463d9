#!/usr/bin/env bats
# etl2evt's per-event formatting: what it keeps between events (the owner
# of each address, the text of each frame) must never change a line.  The
# expected values are worked out by hand from the scenarios, never taken
# from etl2evt's output.
load helpers

@test "an address names the image loaded at the time of its event, not one looked up earlier" {
	etlgen -o "$T/r.etl" "$BATS_TEST_DIRNAME/scenarios/image-reuse.yaml" 2>/dev/null
	etl2evt "$T/r.etl" >"$T/r.evt"
	evtcheck "$T/r.evt"
	# image-reuse.yaml: samples at 5 and 10 ms in first.dll, at 25 and 30 ms in second.dll,
	# all four at the same address 0x10002340, below app.exe+0x1000
	awk -F'\t' '$2 == "Sample" { print $1, $NF }' "$T/r.evt" >"$T/got"
	printf '%s\n' "5.000000 app.exe!0x1000;first.dll!0x2340" "10.000000 app.exe!0x1000;first.dll!0x2340" \
	    "25.000000 app.exe!0x1000;second.dll!0x2340" "30.000000 app.exe!0x1000;second.dll!0x2340" >"$T/want"
	textdiff "$T/want" "$T/got"
}

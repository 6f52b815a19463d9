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

@test "-k: a kept CLR allocation or exception line is the full decode's line, leaf pseudo-frame and all" {
	require_corpus
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$T/all.evt"
	etl2evt -k GCAllocationTick,Exception,Sample "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$T/k.evt"
	# the kind filter drops lines, never changes the ones it keeps
	awk -F'\t' '!/^#/ && ($2 == "GCAllocationTick" || $2 == "Exception" || $2 == "Sample")' "$T/all.evt" >"$T/want"
	awk -F'\t' '!/^#/' "$T/k.evt" >"$T/got"
	textdiff "$T/want" "$T/got"
	# and the allocation lines are there, each with its allocated type as the leaf
	n=$(awk -F'\t' '$2 == "GCAllocationTick"' "$T/got" | wc -l)
	[ "$n" -gt 1000 ] || fail "only $n allocation lines"
	bad=$(awk -F'\t' '$2 == "GCAllocationTick" && $NF !~ /(^|;)Type [^;]+$/' "$T/got" | wc -l)
	[ "$bad" -eq 0 ] || fail "$bad allocation lines without their Type leaf"
}

@test "names outside ASCII (UTF-16 in the trace, surrogate pairs too) come out as the scenario's UTF-8" {
	etlgen -o "$T/u.etl" "$BATS_TEST_DIRNAME/scenarios/unicode-names.yaml" 2>/dev/null
	etl2evt "$T/u.etl" >"$T/u.evt"
	evtcheck "$T/u.evt"
	# unicode-names.yaml: process "Café-中文-😀.exe" (pid 500), images of that name and naïve.dll
	awk -F'\t' '$2 == "Sample" { print $4 "|" $NF }' "$T/u.evt" >"$T/got"
	echo 'Café-中文-😀.exe|Café-中文-😀.exe!0x1000;naïve.dll!0x2340' >"$T/want"
	textdiff "$T/want" "$T/got"
	grep -q $'\tpath=\\\\Device\\\\HarddiskVolume2\\\\naïve.dll\t' "$T/u.evt" || fail "naïve.dll's path"
}

@test "bytes §4 escapes are escaped wherever they stand in a long name: % everywhere, ; in the stack column only" {
	etlgen -o "$T/e.etl" "$BATS_TEST_DIRNAME/scenarios/escaped-names.yaml" 2>/dev/null
	etl2evt "$T/e.etl" >"$T/e.evt"
	evtcheck "$T/e.evt"
	# escaped-names.yaml, escaped by hand: '%' -> %25, TAB -> %09, DEL -> %7F, ';' -> %3B in the stack
	awk -F'\t' '$2 == "Sample" { print $4 "|" $NF }' "$T/e.evt" >"$T/got"
	echo 'a-long-name;with%25signs%09and%7Fmore.exe|app.exe!0x1000;semi%3Bcolon%25percent-and-a-long-tail.dll!0x2340' >"$T/want"
	textdiff "$T/want" "$T/got"
	grep -q $'\timage=semi;colon%25percent-and-a-long-tail.dll\t' "$T/e.evt" || fail "the ImageID line's image="
}

#!/usr/bin/env bats
# etl2evt's line writer: the texts it keeps between lines (frames escaped
# once, each process's name escaped once) must write what escaping each
# line anew would.  Expected values are worked out by hand from the
# scenario (docs/evt-format.md §4: '%' is %25 everywhere, ';' is %3B in
# the stack column only), never taken from etl2evt's output.
load helpers

# scenarios/escaped-routine.yaml: driver "nic;fast%path.sys", its +0x1a2b0 the routine of two
# DPCs and an ISR, thread 8's start address, and the leaf of three samples' stacks
routine_lines() {
	awk -F'\t' '$2 == "DPC" || $2 == "ISR" { print $1, $2, $8, $9 }' "$1"
}

@test "a routine named in an attribute keeps its ';' while the same frame in a stack has it escaped" {
	etlgen -o "$T/r.etl" "$BATS_TEST_DIRNAME/scenarios/escaped-routine.yaml" 2>/dev/null
	for opt in "" --addrs; do
		etl2evt $opt "$T/r.etl" >"$T/r.evt"
		evtcheck "$T/r.evt"
		routine_lines "$T/r.evt" >"$T/got"
		printf '%s\n' \
		    "2.000000 DPC routine=nic;fast%25path.sys!0x1a2b0 module=nic;fast%25path.sys" \
		    "4.000000 ISR routine=nic;fast%25path.sys!0x1a2b0 module=nic;fast%25path.sys" \
		    "5.000000 DPC routine=nic;fast%25path.sys!0x1a2b0 module=nic;fast%25path.sys" >"$T/want"
		textdiff "$T/want" "$T/got"
		awk -F'\t' '$2 == "Sample" { print $1, $NF }' "$T/r.evt" >"$T/got"
		printf '%s\n' "1.000000" "3.000000" "6.000000" |
		    sed 's/$/ ntoskrnl.exe!0x4a100;nic%3Bfast%25path.sys!0x1a2b0/' >"$T/want"
		textdiff "$T/want" "$T/got"
		grep -q $'\tThreadDCStart\t0\tSystem\t4\t8\t0\tstart_addr=nic;fast%25path.sys!0x1a2b0\t' "$T/r.evt" ||
		    fail "thread 8's start_addr= ($opt)"
	done
}

@test "--full-paths: the routine's full path, escaped as an attribute, beside the stack's" {
	etlgen -o "$T/r.etl" "$BATS_TEST_DIRNAME/scenarios/escaped-routine.yaml" 2>/dev/null
	etl2evt --full-paths "$T/r.etl" >"$T/r.evt"
	evtcheck "$T/r.evt"
	# \SystemRoot\ has no volume mapping in the scenario: the NT path as it is
	p='\SystemRoot\system32\drivers\nic'
	routine_lines "$T/r.evt" | head -1 >"$T/got"
	echo "2.000000 DPC routine=$p;fast%25path.sys!0x1a2b0 module=nic;fast%25path.sys" >"$T/want"
	textdiff "$T/want" "$T/got"
	awk -F'\t' '$2 == "Sample" { n = split($NF, f, ";"); print f[n]; exit }' "$T/r.evt" >"$T/got"
	echo "${p}%3Bfast%25path.sys!0x1a2b0" >"$T/want"
	textdiff "$T/want" "$T/got"
}

@test "the process column: a name with bytes to escape, written alike on every line of its process" {
	etlgen -o "$T/e.etl" "$BATS_TEST_DIRNAME/scenarios/escaped-names.yaml" 2>/dev/null
	etl2evt "$T/e.etl" >"$T/e.evt"
	evtcheck "$T/e.evt"
	# escaped-names.yaml: pid 500 is "a-long-name;with%signs<TAB>and<DEL>more.exe"
	awk -F'\t' '!/^#/ && $5 == 500 { print $4 }' "$T/e.evt" | sort | uniq -c >"$T/got"
	n=$(awk -F'\t' '!/^#/ && $5 == 500' "$T/e.evt" | wc -l)
	[ "$n" -ge 3 ] || fail "only $n lines of pid 500"
	printf '%7d %s\n' "$n" 'a-long-name;with%25signs%09and%7Fmore.exe' >"$T/want"
	textdiff "$T/want" "$T/got"
}

#!/usr/bin/env bats
# How etl2evt's reader hands events to the converting thread (lib/etl/etl.c,
# pump_event): an event whose record stays where it is for the whole pass
# (a buffer kept decompressed in memory, a buffer used in place in the
# file's mapping) is handed over pointing there; a record in a cursor's
# scratch space (a buffer read with pread because it is not on page
# boundaries, read back from the temporary file, or decompressed again) is
# copied, because the cursor's next buffer overwrites it.  Every path must
# give the same lines; the counts come from etlwalk (tests/tools/etlwalk.c,
# a reader sharing no code with lib/) and from the scenario's own numbers.
load helpers

SCEN=backup-incident.yaml

# records PATTERN FILE: how many records etlwalk counts for "g=.. t=..(N)" PATTERN
records() {
	etlwalk "$2" | awk -v p="$1" 'index($0, p) {n += $1} END {print n + 0}'
}

# sanitized: etl2evt is a sanitizer build (ETLKIT_ASAN, or linked with
# ThreadSanitizer's runtime), whose RSS is mostly its shadow memory
sanitized() {
	asan || ldd "$(command -v etl2evt)" 2>/dev/null | grep -q libtsan
}

# lines FILE.evt: the evt without its header lines (which name the source)
lines() {
	grep -v '^#' "$1"
}

# kinds FILE.evt: "Sample DPC ISR TimerDPC" counts
kinds() {
	awk -F'\t' '!/^#/ {n[$2]++} END {print n["Sample"] + 0, n["DPC"] + 0, n["ISR"] + 0, n["TimerDPC"] + 0}' "$1"
}

@test "an uncompressed trace read in place from its mapping: every record's line, as with one thread, and its pages given back" {
	etlgen --no-compress --repeat 2 -o "$T/u.etl" "$BATS_TEST_DIRNAME/scenarios/$SCEN" 2>/dev/null
	# the scenario has 240,000 samples, 172,000 DPCs, 40,000 ISRs and 4,800
	# timer DPCs; --repeat 2 writes its body twice, and etlwalk agrees
	walked="$(records 't=0x2e(46)' "$T/u.etl") $(records 't=0x44(68)' "$T/u.etl") $(records 't=0x32(50)' "$T/u.etl") $(records 't=0x45(69)' "$T/u.etl")"
	[ "$walked" = "480000 344000 80000 9600" ] || fail "etlwalk: $walked"
	rss=$(peak_rss_kb etl2evt -j 2 "$T/u.etl")
	[ "$rss" -gt 0 ] || fail "etl2evt failed ($rss)"
	mv "$T/out" "$T/u2.evt"
	[ "$(kinds "$T/u2.evt")" = "$walked" ] || fail "evt: $(kinds "$T/u2.evt"), etlwalk: $walked"
	etl2evt -j 1 "$T/u.etl" >"$T/u1.evt"
	cmp -s "$T/u1.evt" "$T/u2.evt" || fail "two threads, another evt: $(cmp "$T/u1.evt" "$T/u2.evt")"
	# a buffer's pages are given back once the batches pointing into it came
	# back: resident memory stays a small part of the trace's 52 MB
	sanitized && return 0
	size=$(stat -c %s "$T/u.etl")
	[ "$rss" -lt $((size / 1024 / 3)) ] || fail "peak RSS $rss kB for a trace of $size bytes"
}

@test "uncompressed buffers off page boundaries (read into scratch space, so copied when handed over): the same lines" {
	etlgen --no-compress --repeat 2 -o "$T/u.etl" "$BATS_TEST_DIRNAME/scenarios/$SCEN" 2>/dev/null
	# the header buffer cut to 0x200 bytes, as relogged traces have it (it
	# holds one record, the logfile header, in its first 0x1c0 bytes): every
	# other buffer then starts 0x200 bytes past a page
	python3 -c 'import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
assert struct.unpack_from("<I", d, 0)[0] == 0x10000 and struct.unpack_from("<I", d, 4)[0] <= 0x200
struct.pack_into("<I", d, 0, 0x200)
open(sys.argv[2], "wb").write(d[:0x200] + d[0x10000:])' "$T/u.etl" "$T/s.etl"
	[ "$(etlwalk "$T/s.etl" | head -1)" = "$(etlwalk "$T/u.etl" | head -1)" ] || fail "etlwalk: $(etlwalk "$T/s.etl" | head -1)"
	etl2evt -j 2 "$T/u.etl" >"$T/u.evt"
	for j in 2 1; do
		etl2evt -j $j "$T/s.etl" >"$T/s$j.evt" 2>"$T/s$j.err" || fail "-j $j: exit $?: $(cat "$T/s$j.err")"
		[ ! -s "$T/s$j.err" ] || fail "-j $j: $(cat "$T/s$j.err")"
		textdiff <(lines "$T/u.evt") <(lines "$T/s$j.evt") >"$T/d" || fail "-j $j: $(head -5 "$T/d")"
	done
	[ "$(kinds "$T/s2.evt")" = "480000 344000 80000 9600" ] || fail "$(kinds "$T/s2.evt")"
}

@test "compressed buffers kept in memory, in the temporary file, or decompressed again: the lines of the uncompressed trace" {
	etlgen --no-compress -o "$T/u.etl" "$BATS_TEST_DIRNAME/scenarios/$SCEN" 2>/dev/null
	etlgen --compress -o "$T/c.etl" "$BATS_TEST_DIRNAME/scenarios/$SCEN" 2>/dev/null
	walked="$(records 't=0x2e(46)' "$T/c.etl") $(records 't=0x44(68)' "$T/c.etl") $(records 't=0x32(50)' "$T/c.etl") $(records 't=0x45(69)' "$T/c.etl")"
	[ "$walked" = "240000 172000 40000 4800" ] || fail "etlwalk: $walked"
	etl2evt -j 2 "$T/u.etl" >"$T/u.evt"
	# default: all in memory; 0: all in the temporary file; 1 MiB: some of
	# each; no temporary directory to write them to: decompressed again in
	# the second pass
	for v in "" "--buffer-memory=0" "--buffer-memory=1" "nodir"; do
		if [ "$v" = nodir ]; then
			TMPDIR=/nonexistent etl2evt -j 2 --buffer-memory=0 "$T/c.etl" >"$T/c.evt" || fail "$v: exit $?"
		else
			# shellcheck disable=SC2086
			etl2evt -j 2 $v "$T/c.etl" >"$T/c.evt" || fail "$v: exit $?"
		fi
		[ "$(kinds "$T/c.evt")" = "$walked" ] || fail "$v: $(kinds "$T/c.evt")"
		textdiff <(lines "$T/u.evt") <(lines "$T/c.evt") >"$T/d" || fail "$v: $(head -5 "$T/d")"
	done
}

#!/usr/bin/env bats
# Thread time's fast paths (issue 16, speed): the Running, Ready and
# Waiting lines copy their thread's "process pid tid" columns and
# waker_process= from a per-thread cache, and repeated times from a memo;
# --utc and the -p/-k/-s/-e filters take the general path.  Each check
# holds the lines of one path against the other, or against the stream's
# own columns, with awk: never against numbers etl2evt printed elsewhere.
#  - a process name with bytes §4 escapes ('%'), and ';' and a space,
#    which only the stack column escapes: the name column and
#    waker_process= are the same escaped text as the waker's own lines';
#  - --utc adds utc= and changes nothing else in these lines;
#  - -p keeps exactly the unfiltered lines of that process;
#  - -s/-e keep exactly the unfiltered lines whose time is in the range.
load helpers

SCEN="$BATS_TEST_DIRNAME/scenarios"

# The lock hand-off with its process renamed 'a%b;c d.exe': $T/esc.etl, $T/esc.evt.
local_setup() {
	sed "s/name: app.exe/name: 'a%b;c d.exe'/" "$SCEN/lock-handoff.yaml" >"$T/esc.yaml"
	grep -q "name: 'a%b;c d.exe'" "$T/esc.yaml" || fail "the scenario was not renamed"
	etlgen -o "$T/esc.etl" "$T/esc.yaml" 2>/dev/null || fail "etlgen"
	etl2evt "$T/esc.etl" >"$T/esc.evt" 2>/dev/null || fail "etl2evt: exit $?"
}

# The thread-time lines of evt file $1.
tt_lines() {
	awk -F'\t' '$2 == "Running" || $2 == "Ready" || $2 == "Waiting"' "$1"
}

@test "threadtime paths: an escaped process name is the same in the name column and waker_process=" {
	# every line of the renamed process names it escaped: '%' as %25, ';' and ' ' as they are
	run awk -F'\t' '$5 == 6100 && $4 != "a%25b;c d.exe" { print; bad++ } END { exit bad > 0 }' "$T/esc.evt"
	[ "$status" -eq 0 ] || fail "lines of pid 6100 with another name: $output"
	n=$(tt_lines "$T/esc.evt" | awk -F'\t' '$4 == "a%25b;c d.exe"' | wc -l)
	[ "$n" -ge 10 ] || fail "only $n thread-time lines of the renamed process"
	# waker_process= is the process column of the waker's own lines (CSwitch, Running), by tid
	run awk -F'\t' '
		$2 == "CSwitch" || $2 == "Running" { proc[$6] = $4 }
		$2 == "Waiting" {
			w = ""; p = ""
			for (i = 8; i <= NF; i++) {
				if ($i ~ /^waker_tid=/) w = substr($i, 11)
				if ($i ~ /^waker_process=/) p = substr($i, 15)
			}
			if (w == "") next
			checked++
			if (!(w in proc) || proc[w] != p) { print "waker " w ": " p " vs " proc[w]; bad++ }
			if (p == "a%25b;c d.exe") renamed++
		}
		END { print checked, renamed; exit bad > 0 || checked < 3 || renamed < 2 }' "$T/esc.evt"
	[ "$status" -eq 0 ] || fail "waker_process= differs from the waker's lines: $output"
}

@test "threadtime paths: --utc adds utc= to the thread-time lines and changes nothing else" {
	etl2evt --utc "$T/esc.etl" >"$T/utc.evt" 2>/dev/null || fail "etl2evt --utc: exit $?"
	tt_lines "$T/esc.evt" >"$T/plain.tt"
	tt_lines "$T/utc.evt" >"$T/utc.tt"
	[ -s "$T/plain.tt" ] || fail "no thread-time lines"
	# every line has utc= right after the fixed columns (the 20 ms trace starts at 02:00:00)
	run awk -F'\t' '$8 !~ /^utc=2021-03-02T02:00:00\.0[0-9][0-9][0-9][0-9][0-9][0-9]Z$/ { print; bad++ }
	    END { exit bad > 0 }' "$T/utc.tt"
	[ "$status" -eq 0 ] || fail "thread-time lines without utc=: $output"
	awk 'BEGIN { FS = OFS = "\t" } { for (i = 8; i < NF; i++) $i = $(i + 1); NF--; print }' \
	    "$T/utc.tt" >"$T/stripped.tt"
	textdiff "$T/plain.tt" "$T/stripped.tt" || fail "--utc changed more than utc="
}

@test "threadtime paths: -p keeps exactly the thread-time lines of that process" {
	etl2evt -p 6100 "$T/esc.etl" >"$T/p.evt" 2>/dev/null || fail "etl2evt -p: exit $?"
	tt_lines "$T/esc.evt" | awk -F'\t' '$5 == 6100' >"$T/want.tt"
	tt_lines "$T/p.evt" >"$T/got.tt"
	[ "$(wc -l <"$T/want.tt")" -ge 10 ] || fail "too few lines to compare"
	textdiff "$T/want.tt" "$T/got.tt" || fail "-p 6100 kept other thread-time lines"
	# and a filter that keeps no process of these threads keeps none of their lines
	etl2evt -p System "$T/esc.etl" >"$T/sys.evt" 2>/dev/null || fail "etl2evt -p System: exit $?"
	run awk -F'\t' '($2 == "Running" || $2 == "Ready" || $2 == "Waiting") && $5 != 4' "$T/sys.evt"
	[ -z "$output" ] || fail "-p System kept: $output"
}

@test "threadtime paths: -s/-e keep exactly the thread-time lines whose time is in the range" {
	etl2evt -s 2.5 -e 9.6 "$T/esc.etl" >"$T/r.evt" 2>/dev/null || fail "etl2evt -s -e: exit $?"
	# times have 6 decimals: compare them as integers of ns
	tt_lines "$T/esc.evt" | awk -F'\t' '{ t = $1; sub(/\./, "", t); t += 0 } t >= 2500000 && t <= 9600000' >"$T/want.tt"
	tt_lines "$T/r.evt" >"$T/got.tt"
	[ "$(wc -l <"$T/want.tt")" -ge 5 ] || fail "too few lines to compare"
	[ "$(wc -l <"$T/want.tt")" -lt "$(tt_lines "$T/esc.evt" | wc -l)" ] || fail "the range keeps everything"
	textdiff "$T/want.tt" "$T/got.tt" || fail "-s/-e kept other thread-time lines"
}

#!/usr/bin/env bats
# A filter never changes a line: `etl2evt -k KIND`, `-p PROC` and `-s/-e`
# write exactly the lines of the unfiltered stream that they select, byte
# for byte, stack column included.  A stack record names its event by
# (thread, time); two events may share that key, and a dropped event must
# keep its claim on the records as it has unfiltered (lib/etl/convert_line.c,
# take_claim), else the kept line gets the dropped event's stack.
#
# The expected lines come from the unfiltered stream and an awk over its
# columns (kind, pid, time), never from the filtered run itself.  Checked on
# the corpus traces with stack records (net.4.5.2.x64: Windows 8 stack keys;
# ctf-net45-win7: Windows 7 stack records; the census counts their StackWalk
# records; gcevents' CLR allocation ticks; the four-file .diagsession, whose
# user events' stacks join the kernel file's images and the CLR's stack
# walks) and on synthesised ones: the DPC incident and a context-switch
# scenario (tests/scenarios).
load helpers

# run_etl2evt OUT ARGS...: etl2evt ARGS into OUT; 0 (or 1: some input
# skipped, as in the unfiltered run) is fine, 2 is not
run_etl2evt() {
	local out=$1 rc=0
	shift
	etl2evt "$@" >"$out" || rc=$?
	[ "$rc" -le 1 ] || fail "etl2evt $* exited $rc"
}

# same_lines TRACE ALL COND ARGS...: etl2evt ARGS TRACE without its #
# lines is byte for byte the lines of ALL (the unfiltered stream) that the
# awk condition COND selects, and there are some
same_lines() {
	local trace=$1 all=$2 cond=$3
	shift 3
	run_etl2evt "$T/got.evt" "$@" "$trace"
	grep -v '^#' "$T/got.evt" >"$T/got" || true
	awk -F'\t' "!/^#/ && ($cond)" "$all" >"$T/want"
	[ -s "$T/want" ] || fail "no line of the unfiltered stream has $cond: nothing to compare"
	if ! cmp -s "$T/want" "$T/got"; then
		echo "etl2evt $* $(basename "$trace"): not the unfiltered stream's lines ($cond):" >&2
		textdiff "$T/want" "$T/got" | head -8 >&2
		return 1
	fi
}

# check_kinds TRACE ALL [KIND...]: -k KIND for each kind given, or for
# every kind of the unfiltered stream
check_kinds() {
	local trace=$1 all=$2 k
	shift 2
	local kinds=("$@")
	[ ${#kinds[@]} -gt 0 ] || mapfile -t kinds < <(awk -F'\t' '!/^#/ { print $2 }' "$all" | sort -u)
	[ ${#kinds[@]} -gt 0 ] || fail "no kind in $all"
	for k in "${kinds[@]}"; do
		same_lines "$trace" "$all" "\$2 == \"$k\"" -k "$k"
	done
}

# check_procs TRACE ALL: -p PID for the two processes with most lines (pid > 0)
check_procs() {
	local trace=$1 all=$2 p n=0
	for p in $(awk -F'\t' '!/^#/ && $5 > 0 { n[$5]++ } END { for (p in n) print n[p], p }' "$all" |
	    sort -k1,1nr -k2,2n | head -2 | cut -d' ' -f2); do
		same_lines "$trace" "$all" "\$5 == \"$p\"" -p "$p"
		n=$((n + 1))
	done
	[ "$n" -eq 2 ] || fail "fewer than two processes in $all"
}

# check_window TRACE ALL FROM TO: -s FROM -e TO keeps the lines whose
# time column is in [FROM, TO] (milliseconds, inclusive: etl2evt(1))
check_window() {
	same_lines "$1" "$2" "\$1 + 0 >= $3 && \$1 + 0 <= $4" -s "$3" -e "$4"
}

# duration_ms ALL: the stream's duration_ms= header value, whole milliseconds
duration_ms() {
	sed -n '1s/.*\tduration_ms=\([0-9]*\).*/\1/p' "$1"
}

# stacked_lines ALL: how many lines have a stack column
stacked_lines() {
	awk -F'\t' '!/^#/ && $NF != "" { n++ } END { print n + 0 }' "$1"
}

corpus_trace() {	# NAME: the path of perfview/NAME.etl.zip (etl2evt reads the zip)
	require_corpus
	echo "$CORPUS/perfview/$1.etl.zip"
}

@test "net.4.5.2.x64 (stack keys): -k KIND gives the unfiltered KIND lines for every kind, stacks and all" {
	tr=$(corpus_trace net.4.5.2.x64)
	run_etl2evt "$T/all.evt" "$tr"
	[ "$(stacked_lines "$T/all.evt")" -gt 1000 ]
	# the case that was wrong: a KernelTraceControl Event at 2734.149 ms shares
	# its thread and time with a dropped event, whose stack it took
	check_kinds "$tr" "$T/all.evt"
}

@test "net.4.5.2.x64: -p for the two busiest processes, -s/-e windows" {
	tr=$(corpus_trace net.4.5.2.x64)
	run_etl2evt "$T/all.evt" "$tr"
	check_procs "$tr" "$T/all.evt"
	d=$(duration_ms "$T/all.evt")
	[ "$d" -gt 1000 ]
	check_window "$tr" "$T/all.evt" $((d / 3)) $((2 * d / 3))
	# a window that starts on the tick of the shared key
	check_window "$tr" "$T/all.evt" 2734.149 2800
	# both filters at once
	same_lines "$tr" "$T/all.evt" '$2 == "Event" && $1 + 0 >= 2000 && $1 + 0 <= 4000' \
	    -k Event -s 2000 -e 4000
}

@test "ctf-net45-win7 (Windows 7 stack records): -k for every kind, -p, -s/-e" {
	tr=$(corpus_trace ctf-net45-win7)
	run_etl2evt "$T/all.evt" "$tr"
	[ "$(stacked_lines "$T/all.evt")" -gt 10 ]
	check_kinds "$tr" "$T/all.evt"
	check_procs "$tr" "$T/all.evt"
	d=$(duration_ms "$T/all.evt")
	check_window "$tr" "$T/all.evt" $((d / 4)) $((3 * d / 4))
}

@test "DPC incident (synthesised, stack keys): -k for every kind, -p, -s/-e" {
	etlgen --no-compress -o "$T/i.etl" "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" 2>/dev/null
	run_etl2evt "$T/all.evt" "$T/i.etl"
	[ "$(stacked_lines "$T/all.evt")" -gt 1000 ]
	check_kinds "$T/i.etl" "$T/all.evt"
	check_procs "$T/i.etl" "$T/all.evt"
	check_window "$T/i.etl" "$T/all.evt" 3000 3500
}

@test "context switches (synthesised): -k for every kind, -p, -s/-e" {
	etlgen -o "$T/c.etl" "$BATS_TEST_DIRNAME/scenarios/cswitch.yaml" 2>/dev/null
	run_etl2evt "$T/all.evt" "$T/c.etl"
	[ "$(stacked_lines "$T/all.evt")" -gt 100 ]
	check_kinds "$T/c.etl" "$T/all.evt"
	check_procs "$T/c.etl" "$T/all.evt"
	d=$(duration_ms "$T/all.evt")
	check_window "$T/c.etl" "$T/all.evt" $((d / 3)) $((2 * d / 3))
}

@test "gcevents (CLR allocation ticks with stacks): -k for every kind, -p, -s/-e" {
	tr=$(corpus_trace gcevents)
	run_etl2evt "$T/all.evt" "$tr"
	[ "$(awk -F'\t' '!/^#/ && $2 == "GCAllocationTick" && $NF != ""' "$T/all.evt" | wc -l)" -gt 0 ]
	check_kinds "$tr" "$T/all.evt"
	# its lines lie between 8.1 s and 8.3 s, and at the end: a window whose
	# ends are lines' own times (both kept: the window is inclusive)
	check_window "$tr" "$T/all.evt" 8185.7429 8229.5842
}

@test "a .diagsession's four files merged (user stacks through the kernel file's images, CLR stack walks joined): -k for every kind, -p, -s/-e" {
	require_corpus
	tr="$CORPUS/perfview/diaghub-dotnetcore3.1-win-x64-diagsession.zip"
	run_etl2evt "$T/all.evt" "$tr"
	head -1 "$T/all.evt" | grep -q $'\tfiles=4' || fail "not the four files merged"
	# stacks on user events whose frames come from the kernel file and the CLR's JIT methods
	[ "$(awk -F'\t' '!/^#/ && $2 == "Event" && $NF ~ /coreclr\.dll!/ && $NF ~ /locProject\.dll!/' "$T/all.evt" | wc -l)" -gt 0 ] ||
	    fail "no user event whose stack joins native and JIT frames"
	check_kinds "$tr" "$T/all.evt"
	check_procs "$tr" "$T/all.evt"
	d=$(duration_ms "$T/all.evt")
	check_window "$tr" "$T/all.evt" $((d / 3)) $((2 * d / 3))
}

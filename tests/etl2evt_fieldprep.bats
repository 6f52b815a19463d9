#!/usr/bin/env bats
# etl2evt's attributes written ahead: a user event's logged_by_pid=, header
# ids, event= label and p. fields (manifest schemas embedded, built in or
# from EventSource manifests; TraceLogging), CLR MethodLoad/Unload and
# ImageID/DbgID are decoded by the reader's worker and copied by the
# caller's thread (lib/etl/convert_emit_user.c, conv_prep_fields).  With one
# thread (-j 1) the caller's thread writes them itself, with the same
# functions: every case compares the two, with one file and a four-file
# session, and with each filter.  The counts of lines with fields come from
# the corpus census, never from etl2evt.
load helpers

NET=perfview/net.4.5.2.x64.etl.zip
CTF=perfview/ctf-net45-win7.etl.zip
DIAG=perfview/diaghub-dotnetcore3.1-win-x64-diagsession.zip

local_setup() {
	require_corpus
}

# same_both NAME ARGS...: etl2evt ARGS with one thread and with two: the
# same evt, messages and exit status (0 or 1); the evt stays in $T/NAME.evt.
same_both() {
	local name=$1 status
	shift
	status=$(etl2evt_alike "$name" "-j 2" -- "$@") || return 1
	[ "$status" -le 1 ] || fail "$name: exit $status"
}

# census_count FILE PATTERN: the census' count on the event line matching PATTERN (summed)
census_count() {
	awk -v pat="$2" '$0 ~ pat { n += $1 } END { print n + 0 }' "$CENSUS/$1"
}

# lines FILE AWK-CONDITION: evt lines (no comments) that match, their fields in $i
lines() {
	awk -F'\t' '!/^#/ && ('"$2"') { n++ } END { print n + 0 }' "$1"
}

# nostack FILE: its lines without their last column (the stack: with a filter,
# a stack record may join another line than in the whole stream)
nostack() {
	awk -F'\t' 'BEGIN { OFS = "\t" } !/^#/ { NF--; print }' "$1"
}

# has ATTR-PREFIX: an awk condition, true when a column starts with it
has() {
	echo "(index(\$0, \"\\t$1\") > 0)"
}

@test "net.4.5.2.x64: manifest fields, CLR methods, ImageID/DbgID written ahead: one thread or two, the same evt; the census' events all there" {
	unzip_member "$CORPUS/$NET" net.4.5.2.x64.etl "$T/net.etl"
	same_both net "$T/net.etl"
	c=perfview-net.4.5.2.x64.txt
	# every Kernel-File event (a built-in schema) is a line with its fields
	want=$(census_count $c ' E EVENT_HEADER64 Kernel-File$')
	[ "$want" = 562 ]
	[ "$(lines "$T/net.evt" "$(has provider=Microsoft-Windows-Kernel-File) && $(has p.)")" -eq "$want" ]
	[ "$(lines "$T/net.evt" "$(has provider=Microsoft-Windows-Kernel-File) && $(has p.FileObject=)")" -eq "$want" ]
	# every CLR rundown event: a method's (MethodLoad rundown=1) or a line with its fields
	want=$(census_count $c ' E EVENT_HEADER(32|64) DotNETRuntimeRundown$')
	[ "$want" = 33011 ]
	m=$(lines "$T/net.evt" "\$2 == \"MethodLoad\" && $(has rundown=1) && $(has method=)")
	f=$(lines "$T/net.evt" "$(has provider=Microsoft-Windows-DotNETRuntimeRundown) && $(has event=) && $(has p.)")
	[ "$m" -gt 0 ] && [ "$f" -gt 0 ]
	[ $((m + f)) -eq "$want" ] || fail "$m methods + $f lines with fields, the census has $want rundown events"
	# every ImageID and DbgID record
	[ "$(lines "$T/net.evt" "\$2 == \"ImageID\" && $(has image=)")" -eq "$(census_count $c 'ImageId/DbgId\) type=0$')" ]
	[ "$(lines "$T/net.evt" "\$2 == \"DbgID_RSDS\" && $(has pdb=)")" -eq "$(census_count $c 'ImageId/DbgId\) type=36$')" ]
	[ "$(census_count $c 'ImageId/DbgId\) type=0$')" = 3590 ]
}

@test "net.4.5.2.x64: each filter (-k, -p, -s/-e) the same evt with one thread or two; the lines it keeps have their fields" {
	unzip_member "$CORPUS/$NET" net.4.5.2.x64.etl "$T/net.etl"
	same_both all "$T/net.etl"
	same_both k -k Event,MethodLoad "$T/net.etl"
	same_both ks -k Sample "$T/net.etl"
	same_both kp -k 'GC*' -p Test.x64.exe "$T/net.etl"
	same_both se -s 2000 -e 6000 "$T/net.etl"
	# -k keeps the very lines of the whole stream that are of its kinds, fields and all
	nostack "$T/all.evt" | awk -F'\t' '$2 == "Event" || $2 == "MethodLoad"' >"$T/want"
	nostack "$T/k.evt" >"$T/got"
	cmp -s "$T/want" "$T/got" || fail "-k Event,MethodLoad: other lines than those of the whole stream"
	[ "$(lines "$T/k.evt" "$(has p.)")" -gt 20000 ]
	[ "$(lines "$T/ks.evt" "$(has p.)")" -eq 0 ]
	# -s/-e (ms): the lines of the whole stream in that range
	nostack "$T/all.evt" | awk -F'\t' '$1 >= 2000 && $1 <= 6000' >"$T/want"
	nostack "$T/se.evt" >"$T/got"
	cmp -s "$T/want" "$T/got" || fail "-s 2000 -e 6000: other lines than those of the whole stream in range"
	[ "$(lines "$T/se.evt" "$(has p.)")" -gt 0 ]
	# -k with a prefix and -p: GC lines of the process, with their fields
	[ "$(lines "$T/kp.evt" "\$2 == \"GCAllocationTick\" && \$4 == \"Test.x64.exe\" && $(has p.AllocationAmount=)")" -gt 0 ]
	[ "$(lines "$T/kp.evt" "\$4 != \"Test.x64.exe\"")" -eq 0 ]
}

@test "ctf-net45-win7: manifest fields written ahead: one thread or two, the same evt; the census' events all there" {
	unzip_member "$CORPUS/$CTF" PerfViewData.etl "$T/ctf.etl"
	same_both ctf "$T/ctf.etl"
	c=perfview-ctf-net45-win7.txt
	want=$(census_count $c ' E EVENT_HEADER64 Kernel-EventTracing$')
	[ "$want" = 91 ]
	[ "$(lines "$T/ctf.evt" "$(has provider=Microsoft-Windows-Kernel-EventTracing) && $(has event=) && $(has p.)")" -eq "$want" ]
	want=$(census_count $c ' E EVENT_HEADER(32|64) DotNETRuntimeRundown$')
	[ "$want" = 447 ]
	m=$(lines "$T/ctf.evt" "\$2 == \"MethodLoad\" && $(has rundown=1)")
	f=$(lines "$T/ctf.evt" "$(has provider=Microsoft-Windows-DotNETRuntimeRundown)")
	[ $((m + f)) -eq "$want" ] || fail "$m methods + $f lines, the census has $want rundown events"
	[ "$(lines "$T/ctf.evt" "\$2 == \"ImageID\" && $(has image=)")" -eq "$(census_count $c 'ImageId/DbgId\) type=0$')" ]
	[ "$(lines "$T/ctf.evt" "\$2 == \"DbgID_RSDS\" && $(has pdb=)")" -eq "$(census_count $c 'ImageId/DbgId\) type=36$')" ]
	# allocation ticks: every one has its fields (AllocationAmount, TypeName)
	n=$(lines "$T/ctf.evt" "\$2 == \"GCAllocationTick\"")
	[ "$n" -gt 50000 ]
	[ "$(lines "$T/ctf.evt" "\$2 == \"GCAllocationTick\" && $(has p.AllocationAmount=) && $(has p.TypeName=)")" -eq "$n" ]
}

@test "diagsession, four files in one session (a worker each): one thread or two, the same evt; EventSource manifest fields and ImageIDs all there" {
	same_both diag "$CORPUS/$DIAG"
	# the session's EventSource events (manifests carried in the trace), by the census of its files
	ds=$(cat "$CENSUS"/perfview-diaghub-*.txt | awk '/ E EVENT_HEADER64 adb401e1-5296-51f8-c125-5fda75826144$/ { n += $1 } END { print n + 0 }')
	[ "$ds" = 256 ]
	[ "$(lines "$T/diag.evt" "$(has provider=Microsoft-Diagnostics-DiagnosticSource)")" -eq "$ds" ]
	grep -q $'\tp.Message=DiagnosticSource: Enabling ' "$T/diag.evt"
	tpl=$(cat "$CENSUS"/perfview-diaghub-*.txt | awk '/ E EVENT_HEADER64 2e5dba47-a3d2-4d16-8ee0-6671ffdcd7b5$/ { n += $1 } END { print n + 0 }')
	[ "$tpl" = 20 ]
	[ "$(lines "$T/diag.evt" "$(has provider=System.Threading.Tasks.TplEventSource)")" -eq "$tpl" ]
	[ "$(lines "$T/diag.evt" "$(has provider=Microsoft-Windows-DotNETRuntime) && $(has p.)")" -gt 10000 ]
	img=$(cat "$CENSUS"/perfview-diaghub-*.txt | awk '/ImageId\/DbgId\) type=0$/ { n += $1 } END { print n + 0 }')
	[ "$(lines "$T/diag.evt" "\$2 == \"ImageID\" && $(has image=)")" -eq "$img" ]
	# and with a filter
	same_both diagk -k Event "$CORPUS/$DIAG"
	[ "$(lines "$T/diagk.evt" "$(has provider=Microsoft-Diagnostics-DiagnosticSource)")" -eq "$ds" ]
}

@test "TraceLogging fields (their schema in the event) written ahead: one thread or two, the same evt; every event with a schema has its fields" {
	for t in airbus/AMSITrace.etl:airbus-AMSITrace.txt perfview/primitive-types.etl.zip:perfview-primitive-types.txt \
	    perfview/SelfDescribingSingleEvent.etl:perfview-SelfDescribingSingleEvent.txt \
	    airbus/lxcore_kernel.etl:airbus-lxcore_kernel.txt; do
		f=${t%%:*} c=${t#*:}
		name=$(basename "$c" .txt)
		same_both "$name" "$CORPUS/$f"
		# the census counts the events with a TraceLogging schema (extended item type 11)
		want=$(sed -n 's/.*EVENT_HEADER ext types: .*11: \([0-9]*\).*/\1/p' "$CENSUS/$c")
		[ "$want" -gt 0 ]
		[ "$(lines "$T/$name.evt" "\$2 == \"Event\" && $(has p.)")" -eq "$want" ] || fail "$name: not $want lines with fields"
	done
	# the values themselves: primitive-types logs the planets by name
	grep -q $'\tp.string_type=Mercury\t' "$T/perfview-primitive-types.evt"
}

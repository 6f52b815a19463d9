#!/usr/bin/env bats
# Thread time costs as much as the rest of a context-switch trace's
# conversion (issue 16): work no written line needs is not done.
#  - -k without Running, Ready or Waiting derives nothing, so its stream is
#    --no-thread-time's to the byte (the ReadyThread stacks thread time
#    would have joined for waker_stack= count as not selected);
#  - a -k that keeps one of them (by name or by prefix) still derives them,
#    the same lines as the full stream's.
load helpers

SCEN="$BATS_TEST_DIRNAME/scenarios"

@test "threadtime cost: -k without a thread-time kind is --no-thread-time's stream, byte for byte" {
	for s in cswitch lock-handoff disk-dpc; do
		for p in 4 8; do
			etlgen -o "$T/$s.etl" --pointer-size "$p" "$SCEN/$s.yaml" 2>/dev/null || fail "etlgen $s"
			for k in CSwitch CSwitch,ReadyThread 'ReadyT*' Sample; do
				etl2evt -k "$k" "$T/$s.etl" >"$T/on" 2>"$T/on.err"
				etl2evt -k "$k" --no-thread-time "$T/$s.etl" >"$T/off" 2>"$T/off.err"
				textdiff "$T/off" "$T/on" || fail "$s ptr$p -k $k"
				textdiff "$T/off.err" "$T/on.err" || fail "$s ptr$p -k $k: stderr"
			done
			# (a prefix that names no thread-time kind: ReadyThread lines as in the full stream)
			etl2evt -k 'ReadyT*' "$T/$s.etl" | grep -v '^#' >"$T/rt"
			grep -P '^[^#][^\t]*\tReadyThread\t' <(etl2evt "$T/$s.etl") | textdiff - "$T/rt" ||
			    fail "$s ptr$p: ReadyThread lines"
		done
	done
}

@test "threadtime cost: a -k keeping one thread-time kind, by name or prefix, still derives it" {
	etlgen -o "$T/l.etl" "$SCEN/lock-handoff.yaml" 2>/dev/null || fail "etlgen"
	etl2evt "$T/l.etl" >"$T/all"
	for k in CSwitch,Waiting 'Wait*' 'R*'; do
		case $k in
		'R*')	want='(Ready|ReadyThread|Running)' ;;
		*)	want='Waiting' ;;
		esac
		etl2evt -k "$k" "$T/l.etl" >"$T/k"
		grep -P "^[^#][^\t]*\t$want\t" "$T/k" >"$T/got" || fail "-k $k: no $want line"
		grep -P "^[^#][^\t]*\t$want\t" "$T/all" | textdiff - "$T/got" || fail "-k $k"
		grep -qP '^[^#][^\t]*\t(Running|Ready|Waiting)\t' "$T/got" || fail "-k $k: no thread-time line"
	done
}

# The thread columns and waker attributes are copied from texts kept per
# thread, up to a length: process names shorter and longer than that (and
# with bytes evt escapes) are written as the decoder's own lines write them.
@test "threadtime cost: kept thread texts: any process name length, as CSwitch lines name the thread" {
	for n in 8 60 84 86 200; do
		name=$(printf 'p%.0s' $(seq 1 "$n"))
		sed "s/name: app.exe/name: \"$name;%\\\\t.exe\"/" "$SCEN/lock-handoff.yaml" >"$T/s.yaml"
		etlgen -o "$T/l.etl" "$T/s.yaml" 2>/dev/null || fail "etlgen $n"
		etl2evt "$T/l.etl" >"$T/l.evt"
		grep -qF "${name};%25%09.exe" "$T/l.evt" || fail "$n: the name is not in the stream"
		awk -F'\t' -v n="$n" '
			$2 == "CSwitch" { proc[$6] = $4; pid[$6] = $5 }
			$2 ~ /^(Running|Ready|Waiting)$/ && ($6 in proc) && $6 != 0 {
				if ($4 != proc[$6] || $5 != pid[$6]) { print n ": columns of " $6 ": " $4; bad = 1 }
			}
			$2 == "Waiting" {
				wt = ""; wp = ""; wn = ""
				for (i = 8; i <= NF; i++) {
					if ($i ~ /^waker_tid=/) wt = substr($i, 11)
					if ($i ~ /^waker_pid=/) wp = substr($i, 11)
					if ($i ~ /^waker_process=/) wn = substr($i, 15)
				}
				if (wt != "" && wt != 0 && (wt in proc)) {
					checked++
					if (wn != proc[wt] || wp != pid[wt]) { print n ": waker " wt ": " wn; bad = 1 }
				}
			}
			END { if (!checked) { print n ": no waker checked"; bad = 1 }; exit bad }' "$T/l.evt" ||
		    fail "name of $n bytes"
	done
}

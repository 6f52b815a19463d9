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

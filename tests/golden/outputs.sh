#!/usr/bin/env bash
# The goldens: a SHA-256 of every tool's output on the real corpus and on
# synthesised traces, one line each ("HASH  NAME").  A refactoring must not
# change any of them (tests/golden.bats compares with tests/golden/SHA256SUMS);
# a change that means to alter an output updates the list in the same commit,
# and says why.
#
# USAGE:  tests/golden/outputs.sh >tests/golden/SHA256SUMS
# Env:    ETLKIT_BIN (the tools, default bin/), ETLKIT_CORPUS (the corpus,
#         default tests/corpus/locate.bash), GOLDEN_TMP (scratch dir).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${ETLKIT_BIN:=$root/bin}"
. "$root/tests/corpus/locate.bash"
: "${ETLKIT_CORPUS:=$(corpus_dir "$root")}"
work=${GOLDEN_TMP:-$(mktemp -d)}
trap '[ -n "${GOLDEN_TMP:-}" ] || rm -rf "$work"' EXIT
PATH="$ETLKIT_BIN:$PATH"
cd "$work"
# the tools print the input's path: the same relative one on every machine
ln -sfn "$ETLKIT_CORPUS" corpus

# out NAME CMD...: the hash of CMD's stdout; its exit status is part of it
out() {
	local name=$1 rc=0 h
	shift
	"$@" >out.tmp 2>/dev/null || rc=$?
	h=$(sha256sum <out.tmp | cut -d' ' -f1)
	printf '%s  %s exit=%d\n' "$h" "$name" "$rc"
}

TRACES="airbus/AMSITrace.etl airbus/ShutdownPerfDiagLogger.etl airbus/lxcore_kernel.etl
krabsetw/powershell.etl perfview/SelfDescribingSingleEvent.etl perfview/ctf-net45-win7.etl.zip
perfview/gcevents.etl.zip perfview/gcrundownevents.etl.zip perfview/net.4.5.2.x64.etl.zip
perfview/primitive-types.etl.zip perfview/smallEtlFile.etl tx/BondEtwSample.etl
tx/CrossMachineHTTP.etl tx/HTTP_Server.etl tx/WsRm01.etl"
DIAG=perfview/diaghub-dotnetcore3.1-win-x64-diagsession.zip

for t in $TRACES; do
	out "etl2evt $t" etl2evt "corpus/$t"
	out "etl2evt --census $t" etl2evt --census "corpus/$t"
done
for m in diaghub.etl diaghub.kernel.1.etl diaghub.user_injected.1.etl diaghub.user_paged.1.etl; do
	out "etl2evt --member $m" etl2evt --member "$m" "corpus/$DIAG"
done
out "etl2evt diagsession (all members)" etl2evt "corpus/$DIAG"

# the stack tools on the two sampled traces
for n in net.4.5.2.x64 ctf-net45-win7; do
	etl2evt "corpus/perfview/$n.etl.zip" >"$n.evt" 2>/dev/null || true
	out "evtfilter $n" evtfilter "$n.evt"
	out "evtfilter --keep-idle -k Sample $n" evtfilter --keep-idle -k Sample "$n.evt"
	out "stackfold $n" stackfold "$n.evt"
	out "stackfold --preset=module $n" stackfold --preset=module "$n.evt"
	out "stackfold --by-name --tsv $n" stackfold --by-name --tsv "$n.evt"
	stackfold --preset=module "$n.evt" >"$n.folded" 2>/dev/null || true
	out "render flame $n" render flame "$n.folded"
	out "render tree $n" render tree "$n.folded"
	out "render byname $n" render byname "$n.folded"
	out "render speedscope $n" render speedscope "$n.evt"
done
out "diff net ctf" diff net.4.5.2.x64.folded ctf-net45-win7.folded
out "diff -f signed -n net ctf" diff -f signed -n net.4.5.2.x64.evt ctf-net45-win7.evt
out "overweight net ctf" overweight net.4.5.2.x64.evt ctf-net45-win7.evt
out "aggregate net ctf" aggregate net.4.5.2.x64.folded ctf-net45-win7.folded
diff net.4.5.2.x64.folded ctf-net45-win7.folded >d.folded 2>/dev/null || true
out "render flame diff" render flame d.folded

# synthesised: DPC/ISR, CSwitch and every kind, in both pointer sizes
for s in backup-incident cswitch kinds; do
	for p in 8 4; do
		etlgen --pointer-size "$p" -o "$s-$p.etl" "$root/tests/scenarios/$s.yaml" >/dev/null 2>&1
		out "etl2evt $s ptr$p" etl2evt "$s-$p.etl"
	done
done
etl2evt backup-incident-8.etl >incident.evt 2>/dev/null || true
for v in dpc dpcisr dpcstacks; do
	out "render $v incident" render "$v" incident.evt
done
out "render dpcchart incident" render dpcchart -m ndis.sys incident.evt
out "stackfold --kind=dpcisr incident" stackfold --kind=dpcisr incident.evt

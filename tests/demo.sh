#!/usr/bin/env bash
# make demo: the backup-server incident, synthesised and diagnosed.
#
# Writes two traces with etlgen (tests/scenarios/backup-incident.yaml and
# backup-fixed.yaml) into bin/demo/, decodes them with etl2evt, runs
# whatever of the pipeline is built (stackfold, render, diff) and prints
# where the DPC time went: per module and CPU, count / average / max
# durations against the 100 us guidance, and the stacks of the samples
# taken inside the DPCs.  Builds nothing itself (make does); downloads
# nothing.  Environment: ETLKIT_BIN (the built tools, default bin/),
# ETLKIT_DEMO_OUT (where the traces and reports go, default bin/demo/).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
: "${ETLKIT_BIN:=$root/bin}"
out=${ETLKIT_DEMO_OUT:-$root/bin/demo}
mkdir -p "$out"
PATH="$ETLKIT_BIN:$PATH"

have() { [ -x "$ETLKIT_BIN/$1" ]; }
step() { printf '\n== %s\n' "$*"; }

have etlgen || { echo "demo: $ETLKIT_BIN/etlgen is missing; run make first" >&2; exit 2; }

# Stand-in driver images with real PDBs (clang-cl + lld-link), so frames get
# their function names: ndis.sys!ndisInterruptDpc, not ndis.sys!0x1a2b0.
gen_sym=() dec_sym=()
step "building stand-in images and PDBs for the routines (tests/scenarios/build-symbols.sh)"
if "$here/scenarios/build-symbols.sh" "$here/scenarios/backup-incident.yaml" "$out/sym" 2>"$out/sym.log"; then
	gen_sym=(--symbols "$out/sym/symbols.map") dec_sym=(--symbols "$out/sym")
	echo "  $(ls "$out/sym"/*.pdb | wc -l) PDBs in $out/sym"
else
	echo "  NOTE: $(tail -1 "$out/sym.log")"
	echo "  (no clang-cl/lld-link: frames are shown as module!0xRVA)"
	mkdir -p "$out/sym"	# pipelines/demo.yaml names it: etl2evt --symbols wants it there
fi

step "synthesising the traces (tests/scenarios/backup-*.yaml)"
for v in incident fixed; do
	etlgen -o "$out/$v.etl" --expect "$out/$v.expect" ${gen_sym[@]+"${gen_sym[@]}"} "$here/scenarios/backup-$v.yaml"
done

# The evt of each trace: etl2evt's decode; before etl2evt existed, the
# decode etlgen promises (--expect), which the round-trip tests hold it to.
for v in incident fixed; do
	if have etl2evt; then
		etl2evt ${dec_sym[@]+"${dec_sym[@]}"} -o "$out/$v.evt" "$out/$v.etl" || [ $? -eq 1 ]
	else
		cp "$out/$v.expect" "$out/$v.evt"
	fi
done
if have etl2evt; then
	step "decoded: etl2evt $out/incident.etl -> $out/incident.evt ($(wc -l <"$out/incident.evt") lines)"
else
	step "etl2evt is not built yet: using etlgen's expected decode"
fi

# DPC/ISR report: render's when it has one, else a short awk summary.
dpc_summary() {
	awk -F'\t' -v title="$2" '
	function attr(k,   i) { for (i = 8; i < NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
	/^#evt/ { for (i = 3; i <= NF; i++) if ($i ~ /^cpus=/) ncpu = substr($i, 6) + 0; next }
	/^#/ { next }
	{ if ($1 + 0 > tmax) tmax = $1 + 0 }
	$2 == "DPC" || $2 == "ThreadedDPC" || $2 == "TimerDPC" || $2 == "ISR" {
		m = attr("module"); k = ($2 == "ISR" ? "ISR" : "DPC") SUBSEP m
		us = attr("duration_us") + 0
		n[k]++; tot[k] += us; if (us > max[k]) max[k] = us
		if (us > ($2 == "ISR" ? 25 : 100)) over[k]++
		cpu[m SUBSEP $3] += us; cpus[$3] = 1; mods[m] = 1
	}
	$2 == "Sample" && $0 ~ /\tdpc=1(\t|$)/ { stk[$NF]++; insamples++ }
	END {
		secs = tmax / 1000
		printf "%s: %.1f s, %d CPUs\n\n", title, secs, ncpu
		printf "%-4s %-16s %8s %9s %9s %9s  %s\n", "", "module", "count", "avg_us", "max_us", ">limit", "guidance"
		for (k in n) {
			split(k, kk, SUBSEP)
			lim = kk[1] == "ISR" ? 25 : 100
			flag = tot[k] / n[k] > lim ? "AVERAGE OVER " lim " us" : (over[k] ? "" : "ok")
			printf "%-4s %-16s %8d %9.1f %9.1f %9d  %s\n", kk[1], kk[2], n[k], tot[k] / n[k], max[k], over[k], flag | "sort -k3,3nr"
		}
		close("sort -k3,3nr")
		printf "\nDPC+ISR time per CPU (%% of the CPU), CPUs above 5%%:\n"
		for (c = 0; c < ncpu; c++) {
			line = ""; busy = 0
			for (m in mods) if ((m SUBSEP c) in cpu) {
				p = cpu[m SUBSEP c] / (secs * 1e6) * 100; busy += p
				if (p >= 1) line = line sprintf("  %s %.1f%%", m, p)
			}
			if (busy >= 5) printf "  CPU %2d %5.1f%%:%s\n", c, busy, line
		}
		printf "\nStacks of the %d samples taken inside DPCs (top 5, leaf last):\n", insamples
		for (s in stk) printf "%d\t%s\n", stk[s], s | "sort -nr | head -5 | awk -F\"\\t\" \x27{ n = split($2, f, \";\"); t = \"\"; for (i = (n > 6 ? n - 5 : 1); i <= n; i++) t = t (t == \"\" ? \"\" : \" > \") f[i]; printf \"  %6d  %s%s\\n\", $1, (n > 6 ? \"... > \" : \"\"), t }\x27"
		close("sort -nr | head -5")
	}' "$1"
}

if have render; then
	step "DPC/ISR duration by module, function (render dpc $out/incident.evt)"
	render dpc "$out/incident.evt" | awk '
	    /^Share of each CPU/ { print; getline; print; getline; print; share = 1; next }
	    share && NF == 0 { share = 0; print "  (CPUs under 5% not shown)"; print; next }
	    share { if ($6 + 0 >= 5) print; next }
	    { print }'
	step "where the DPC time went: stacks of the samples inside DPCs/ISRs (render dpcstacks, top 6, leaf last)"
	render dpcstacks "$out/incident.evt" >"$out/incident.dpcstacks.folded"
	awk '{ print $NF "\t" $0 }' "$out/incident.dpcstacks.folded" | sort -t"$(printf '\t')" -k1,1nr | cut -f2- | awk '
	    { c = $NF; sub(/ [0-9.]+$/, ""); n = split($0, f, ";"); t = ""
	      for (i = (n > 7 ? n - 5 : 2); i <= n; i++) t = t (t == "" ? "" : " > ") f[i]
	      total += c; line[NR] = sprintf("%s %s%s", f[1], (n > 7 ? "... > " : ""), t); w[NR] = c }
	    END { for (i = 1; i <= NR && i <= 6; i++) printf "  %5.1f%%  %s\n", 100 * w[i] / total, line[i] }'
	echo "  (% of the DPC/ISR time in the sampled stacks)"
	render dpcstacks "$out/incident.evt" | render flame --colors etw --title "DPC/ISR usage by module, stack: the incident" \
	    --countname us -o "$out/incident-dpc.svg" && echo "  flame graph: $out/incident-dpc.svg"
	step "after the fix (render dpc $out/fixed.evt, by module)"
	render dpc "$out/fixed.evt" | sed -n '/^By module$/,/^$/p'
	render dpcchart -m ndis.sys --label fixed --label incident "$out/fixed.evt" "$out/incident.evt" \
	    -o "$out/ndis-dpc-durations.svg" && echo "  ndis.sys DPC durations, fixed vs incident: $out/ndis-dpc-durations.svg"
else
	step "where the DPC time went (the incident)"
	dpc_summary "$out/incident.evt" "incident"
	step "after the fix"
	dpc_summary "$out/fixed.evt" "fixed"
fi

if have overweight; then
	step "what regressed from the fixed to the broken server, DPC/ISR time by routine (overweight)"
	overweight --kind=DPC,ThreadedDPC,TimerDPC,ISR --keep-addrs "$out/fixed.evt" "$out/incident.evt" | head -12
	if have render; then
		step "which code inside the DPCs got heavier (overweight of the DPC/ISR sample stacks, PerfView's report)"
		render dpcstacks "$out/fixed.evt" >"$out/fixed.dpcstacks.folded"
		overweight "$out/fixed.dpcstacks.folded" "$out/incident.dpcstacks.folded" |
		    awk '/^Names in both/ { on = 1 } on && n++ < 8 { print } /^Delta:/ { print }'
	fi
fi
if have diff; then
	step "DPC/ISR totals, fixed -> incident (diff -t)"
	diff -t --kind=DPC,ThreadedDPC,TimerDPC,ISR "$out/fixed.evt" "$out/incident.evt" 2>&1 | head -8
	if have render; then
		diff -q "$out/fixed.evt" "$out/incident.evt" | render flame --title "CPU samples: fixed -> incident" \
		    -o "$out/cpu-diff.svg" && echo "  differential flame graph: $out/cpu-diff.svg"
	fi
fi
# The nightly-pipeline form of the same diagnosis (pipelines/demo.yaml reads bin/demo/).
if have etlkit-run && [ "$out" = "$root/bin/demo" ] && [ -f "$root/pipelines/demo.yaml" ]; then
	step "the same as a two-scenario pipeline: etlkit-run pipelines/demo.yaml -> $out/pipeline/"
	if etlkit-run -q "$root/pipelines/demo.yaml"; then
		ls "$out/pipeline" | sed 's/^/  /'
	else
		echo "  (etlkit-run failed; see above)"
	fi
fi
if have stackfold; then
	stackfold "$out/incident.evt" >"$out/incident.folded" 2>/dev/null &&
	    echo "  CPU samples as folded stacks (flamegraph.pl input): $out/incident.folded"
fi
printf '\nTraces, evt and reports are in %s\n' "$out"

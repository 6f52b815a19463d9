#!/usr/bin/env bats
# etlkit-run: YAML pipelines over 20 scenarios (15 corpus traces read in
# place through symlinks + 5 synthesised by etlgen), cache, partial
# results, atomic outputs, interrupted runs, scheduler mode, YAML errors.
load helpers

# The 20 traces and the reference run are made once for the file.
setup_file() {
	local F=$BATS_FILE_TMPDIR f b i
	[ -d "$CORPUS" ] || return 1
	mkdir -p "$F/traces"
	for f in "$CORPUS"/*/*.etl "$CORPUS"/*/*.etl.zip; do
		b=$(basename "$f")
		ln -s "$f" "$F/traces/corpus-$b"
	done
	for i in 1 2 3 4 5; do
		etlgen --seed "$i" -o "$F/traces/synth-$i.etl" "$BATS_TEST_DIRNAME/scenarios/kinds.yaml" 2>/dev/null
	done
	write_pipeline "$F" >"$F/p.yaml"
	etlkit-run -q -j 2 "$F/p.yaml"
}

# The nightly pipeline of these tests: CPU stacks per process, aggregated.
write_pipeline() {
	cat <<-EOF
	# test pipeline
	etlkit: 1
	cache: cache
	output: out
	scenarios:
	  - files: traces/corpus-*.etl*
	    name: "corpus \$1"
	  - files: [traces/synth-*.etl]
	    name: "synth \$1"
	steps:
	  cpu:
	    stackfold: [--roots=comm]
	outputs:
	  - folded: cpu.folded
	    from: cpu
	  - by_name: cpu-byname.tsv
	    from: cpu
	EOF
}

# A private copy of the traces and pipeline, with the reference cache (or not).
copy_setup() {
	cp -a "$BATS_FILE_TMPDIR/traces" "$T/traces"
	cp "$BATS_FILE_TMPDIR/p.yaml" "$T/p.yaml"
	if [ "${1:-}" = cache ]; then cp -a "$BATS_FILE_TMPDIR/cache" "$T/cache"; fi
}

REF() { echo "$BATS_FILE_TMPDIR/out/$1"; }

# how many jobs of the last run had ACTION (converted/reused/failed...)
actions() { actions_in "$T/out" "$1"; }
actions_in() { awk -F'\t' -v a="$2" 'NR > 1 && $4 == a' "$1/run-report.tsv" | wc -l; }

@test "20 scenarios from corpus and synthesised traces: every total equals the trace's own decode" {
	require_corpus
	F=$BATS_FILE_TMPDIR
	[ "$(awk -F'\t' 'NR > 1' "$F/out/run-report.tsv" | wc -l)" -eq 20 ]
	[ "$(grep -c '^#scenario' "$(REF cpu-byname.tsv)")" -eq 20 ]
	awk -F'\t' 'NR > 1 && $5 != "ok" && $5 != "empty" { print; bad = 1 } END { exit bad }' "$F/out/run-report.tsv"
	# "empty" (no CPU samples) are exactly the scenarios with nothing in the by-name table
	awk -F'\t' 'NR > 1 && $5 == "empty" { print $1 }' "$F/out/run-report.tsv" | sort >"$T/empty"
	awk -F'\t' '$1 == "#scenario" && $5 == "total=0" { print $3 }' "$(REF cpu-byname.tsv)" | sort >"$T/zero"
	textdiff "$T/zero" "$T/empty"
	grep -qx "corpus AMSITrace" "$T/empty"
	[ "$(etl2evt "$CORPUS/airbus/AMSITrace.etl" | evtcheck -c | awk -F'\t' '$1 == "Sample"' | wc -l)" -eq 0 ]
	# net.4.5.2.x64: etl2evt | stackfold alone gives the same stacks as the scenario's lines
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" | stackfold --roots=comm >"$T/alone"
	grep '^corpus net.4.5.2.x64;' "$(REF cpu.folded)" | sed 's/^[^;]*;//' >"$T/scen"
	cmp "$T/alone" "$T/scen"
	# the scenario total in the by-name table is the decode's sample count (count=
	# summed) outside the Idle process, whose samples stackfold removes unless
	# they were taken inside a DPC or ISR (docs/evt-format.md)
	want=$(etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" | awk -F'\t' '$2 == "Sample" {
	    c = 1; intr = 0
	    for (i = 8; i < NF; i++) { if ($i ~ /^count=/) c = substr($i, 7); if ($i == "dpc=1" || $i == "isr=1") intr = 1 }
	    if (($5 == 0 || $4 == "Idle") && !intr) next
	    n += c } END { print n }')
	[ "$want" -gt 1000 ]
	got=$(awk -F'\t' '$1 == "#scenario" && $3 == "corpus net.4.5.2.x64" { sub(/total=/, "", $5); print $5 }' "$(REF cpu-byname.tsv)")
	[ "$got" = "$want" ] || fail "net.4.5.2.x64 total $got, decode $want"
	# the synthesised traces show up with their processes, and the whole output is valid folded
	grep -q '^synth 3;BackupSvc.exe;' "$(REF cpu.folded)"
	evtcheck --folded=inferno "$(REF cpu.folded)"
	# the cache holds compressed results next to their records
	rec=$(ls "$F"/cache/*.rec | head -1)
	grep -q '^sha256=[0-9a-f]\{64\}$' "$rec"
	grep -q '^command=etl2evt .* | stackfold --roots=comm$' "$rec"
	[ "$(head -c 2 "${rec%.rec}.out.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ]
}

@test "a second run converts nothing and writes the same outputs; touching one trace converts none" {
	require_corpus
	copy_setup cache
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 0 ]
	[ "$(actions reused)" -eq 20 ]
	[ "$(actions converted)" -eq 0 ]
	cmp "$(REF cpu.folded)" "$T/out/cpu.folded"
	cmp "$(REF cpu-byname.tsv)" "$T/out/cpu-byname.tsv"
	# a trace's identity is its content: a new mtime costs a re-hash, not a conversion
	touch "$T/traces/synth-4.etl"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 0 ]
	[ "$(actions converted)" -eq 0 ]
	cmp "$(REF cpu.folded)" "$T/out/cpu.folded"
	# a re-recorded trace (new content) is converted and its new stacks replace the old
	etlgen --seed 9 -o "$T/traces/synth-2.etl" "$BATS_TEST_DIRNAME/scenarios/kinds.yaml" 2>/dev/null
	etlkit-run -q "$T/p.yaml"
	[ "$(actions converted)" -eq 1 ]
	! cmp -s "$(REF cpu.folded)" "$T/out/cpu.folded"
	# adding a trace costs one conversion
	etlgen --seed 6 -o "$T/traces/synth-6.etl" "$BATS_TEST_DIRNAME/scenarios/kinds.yaml" 2>/dev/null
	etlkit-run -q "$T/p.yaml"
	[ "$(actions converted)" -eq 1 ]
	[ "$(actions reused)" -eq 20 ]
	grep -q '^synth 6;' "$T/out/cpu.folded"
}

@test "changed step settings convert again; --verify catches new content behind an old mtime" {
	require_corpus
	copy_setup cache
	sed -i 's/--roots=comm/--roots=pid/' "$T/p.yaml"
	etlkit-run -q "$T/p.yaml"
	[ "$(actions converted)" -eq 20 ]
	grep -q '^corpus net.4.5.2.x64;Test.x64.exe-[0-9]*;' "$T/out/cpu.folded"
	# same size and mtime, different bytes: only --verify (content hash) notices
	f=$T/traces/synth-1.etl
	cp -p "$f" "$T/orig"
	etlgen --seed 7 -o "$T/other.etl" "$BATS_TEST_DIRNAME/scenarios/kinds.yaml" 2>/dev/null
	[ "$(stat -c %s "$T/other.etl")" = "$(stat -c %s "$f")" ]
	cat "$T/other.etl" >"$f"
	touch -r "$T/orig" "$f"
	etlkit-run -q "$T/p.yaml"
	[ "$(actions converted)" -eq 0 ]
	etlkit-run -q --verify "$T/p.yaml"
	[ "$(actions converted)" -eq 1 ]
}

@test "a corrupt trace gives a partial result: reported with its error, exit 1, the others intact" {
	require_corpus
	copy_setup cache
	random_bytes 3 5000 >"$T/traces/synth-bad.etl"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"FAILED $T/traces/synth-bad.etl (scenario 'synth bad', step cpu): etl2evt: "*"not an ETL file"* ]]
	grep -q "synth-bad.etl	cpu	failed	failed	[0-9.]*	etl2evt: " "$T/out/run-report.tsv"
	# every other scenario's stacks are exactly those of the clean run
	cmp "$(REF cpu.folded)" "$T/out/cpu.folded"
	# the failure is remembered: the next run does not retry an unchanged bad trace...
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 1 ]
	[ "$(actions converted)" -eq 0 ]
	[[ "$output" == *"FAILED"*"synth-bad.etl"* ]]
	# ...unless asked to
	run etlkit-run -q --retry-failed "$T/p.yaml"
	[ "$status" -eq 1 ]
	[ "$(actions failed)" -eq 1 ]
	[ "$(actions reused)" -eq 20 ]
}

@test "a run killed mid-way and re-run gives the same output as an uninterrupted run" {
	require_corpus
	copy_setup
	# SIGKILL the runner once a few traces are done (its workers and tools die with it)
	"$ETLKIT_BIN/etlkit-run" -q -j 1 "$T/p.yaml" 2>/dev/null &
	pid=$!
	for _ in $(seq 1 2400); do	# up to 2 min: a loaded machine under ASan is slow
		[ "$(ls "$T"/cache/*.rec 2>/dev/null | wc -l)" -ge 4 ] && break
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" || true
	sleep 0.2
	[ ! -e "$T/out/cpu.folded" ]
	n=$(ls "$T"/cache/*.rec | wc -l)
	[ "$n" -ge 4 ] && [ "$n" -lt 20 ]
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 0 ]
	[ "$(actions reused)" -ge 4 ]
	cmp "$(REF cpu.folded)" "$T/out/cpu.folded"
	cmp "$(REF cpu-byname.tsv)" "$T/out/cpu-byname.tsv"
	# no temporary file survives the re-run (a dead run's scratch files included)
	: >"$T/out/.scratch.999999999.3.folded"
	: >"$T/out/.cpu.folded.tmp.999999999"
	etlkit-run -q "$T/p.yaml"
	ls -A "$T/cache" "$T/out" >"$T/ls"
	[ "$(grep -c '\.tmp\.' "$T/ls")" -eq 0 ] || fail "$(grep '\.tmp\.' "$T/ls")"
	# SIGTERM: the runner stops its workers and leaves the previous outputs untouched
	cp "$T/out/cpu.folded" "$T/before"
	rm -rf "$T/cache"
	"$ETLKIT_BIN/etlkit-run" -q -j 1 "$T/p.yaml" 2>"$T/err" &
	pid=$!
	for _ in $(seq 1 2400); do	# up to 2 min: a loaded machine under ASan is slow
		[ "$(ls "$T"/cache/*.rec 2>/dev/null | wc -l)" -ge 2 ] && break
		sleep 0.05
	done
	kill -TERM "$pid"
	st=0
	wait "$pid" || st=$?
	[ "$st" -eq 143 ]	# re-raised: the caller sees death by SIGTERM
	grep -q "interrupted" "$T/err"
	cmp "$T/before" "$T/out/cpu.folded"
}

@test "-j 4 gives the same outputs as -j 2 (the reference) and -j 1 (the interrupted-run test)" {
	require_corpus
	copy_setup
	etlkit-run -q -j 4 "$T/p.yaml"
	[ "$(actions converted)" -eq 20 ]
	cmp "$(REF cpu.folded)" "$T/out/cpu.folded"
	cmp "$(REF cpu-byname.tsv)" "$T/out/cpu-byname.tsv"
}

@test "scheduler mode: per-trace jobs run one by one, emitted partials merge to the same result" {
	require_corpus
	copy_setup
	etlkit-run --list-jobs --todo "$T/p.yaml" >"$T/jobs"
	[ "$(wc -l <"$T/jobs")" -eq 20 ]
	# as Slurm would (array index) and as GNU parallel would (key), emitting partial aggregates
	i=0
	grep -q "	etl2evt $T/traces/synth-1.etl | stackfold --roots=comm\$" "$T/jobs"
	while IFS=$'\t' read -r idx key state step scen trace cmd; do
		[ "$state" = todo ]
		i=$((i + 1))
		if [ $((i % 2)) -eq 0 ]; then id=$idx; else id=$key; fi
		etlkit-run --run-job "$id" --emit=cpu "$T/p.yaml" >"$T/part-$i.folded"
	done <"$T/jobs"
	[ "$(etlkit-run --list-jobs --todo "$T/p.yaml" | wc -l)" -eq 0 ]
	# the reducer: aggregate --merge over the partials (in two levels, any grouping)
	aggregate -M -o "$T/m1" "$T"/part-1?.folded
	aggregate -M -o "$T/m2" "$T"/part-?.folded "$T/part-20.folded"
	aggregate -M -o "$T/merged.folded" -b "$T/merged.tsv" "$T/m1" "$T/m2"
	cmp "$(REF cpu.folded)" "$T/merged.folded"
	# and --merge-only writes the outputs from the cache the jobs filled
	etlkit-run -q --merge-only "$T/p.yaml"
	[ "$(actions converted)" -eq 0 ]
	cmp "$(REF cpu.folded)" "$T/out/cpu.folded"
	cmp "$(REF cpu-byname.tsv)" "$T/out/cpu-byname.tsv"
}

@test "YAML values never reach a shell: metacharacters in names, paths and args stay literal" {
	mkdir -p "$T/tr"
	printf 'app;a 3\n' >"$T/tr/x;touch \$HOME-pwned;.folded"
	printf 'app;b 2\n' >"$T/tr/\$(touch pwned2).folded"
	cat >"$T/p.yaml" <<-'EOF'
	etlkit: 1
	scenarios:
	  - files: "tr/*.folded"
	    name: "`touch pwned3` $1"
	steps:
	  s:
	    stackfold: ["--group=$(touch pwned4)->x", "; touch pwned5"]
	outputs:
	  - folded: "out;$(touch pwned6).folded"
	EOF
	cd "$T"
	run etlkit-run -q p.yaml
	[ "$status" -eq 2 ]	# a stray operand is refused when the pipeline loads; nothing runs
	[[ "$output" == *"p.yaml:7: '; touch pwned5' is not allowed in the arguments of stackfold"* ]]
	[ "$(ls "$T" | grep -c pwned)" -eq 0 ]
	[ ! -e "$HOME-pwned" ]
	[ ! -e "$T/out" ]
	# without the bad argument the odd names go through as plain data
	sed -i 's/, "; touch pwned5"//; s/--group=\$(touch pwned4)->x/--roots=none/' p.yaml
	run etlkit-run -q p.yaml
	[ "$status" -eq 0 ]
	[ "$(ls "$T" | grep -c pwned)" -eq 0 ]
	grep -qF '`touch pwned3` $(touch pwned2);app;b 2' "$T/out/p/out;\$(touch pwned6).folded"
}

@test "flame graph, DPC report and diff outputs run render/diff as processes, atomically" {
	require_corpus
	[ -x "$ETLKIT_BIN/render" ] || skip "render is not built yet"
	copy_setup cache
	# the stored baseline: last night's stacks summed over its scenarios (as diff outputs compare)
	aggregate -M -S -i -o "$T/baseline.folded" "$(REF cpu.folded)"
	cat >>"$T/p.yaml" <<-EOF
	  - flamegraph: cpu.svg
	    from: cpu
	    args: [--title, "nightly CPU"]
	  - diff: cpu-diff.folded
	    from: cpu
	    baseline: baseline.folded
	  - dpc_report: dpc.txt
	    from: dpc
	  - overweight: overweight.txt
	    from: cpu
	    baseline: baseline.folded
	EOF
	sed -i 's/^    stackfold: \[--roots=comm\]$/&\n  dpc:\n    etl2evt: [-k, "DPC,ThreadedDPC,TimerDPC,ISR"]/' "$T/p.yaml"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 0 ]
	[ "$(actions converted)" -eq 20 ]	# the new dpc step
	head -c 200 "$T/out/cpu.svg" | grep -q '<svg\|<?xml'
	grep -q 'nightly CPU' "$T/out/cpu.svg"
	[ -s "$T/out/cpu-diff.folded" ]
	# against itself (summed over scenarios) the diff is all zero deltas, overweight finds no growth
	awk '{ if ($(NF - 1) != $NF) bad = 1 } END { exit bad }' "$T/out/cpu-diff.folded"
	grep -q '^Delta: 0 (+0.00%)' "$T/out/overweight.txt"
	grep -q 'no growth' "$T/out/overweight.txt"
	# one DPC/ISR report per scenario (each its own timeline), under its own heading
	[ "$(grep -c '^== scenario ' "$T/out/dpc.txt")" -eq 20 ]
	grep -q '^== scenario synth 3$' "$T/out/dpc.txt"
	grep -qi 'ndis' "$T/out/dpc.txt"
	[ "$(ls -A "$T/out" | grep -c 'scratch\|\.tmp\.')" -eq 0 ]
}

@test "YAML mistakes are reported with file and line, before anything runs" {
	y=$T/bad.yaml
	check() {
		run etlkit-run "$y"
		[ "$status" -eq 2 ] || fail "status $status for: $(cat "$y")"
		[[ "$output" == *"$1"* ]] || fail "expected '$1' in: $output"
		[ ! -d "$T/.etlkit-cache" ]
	}
	printf 'etlkit: 1\nscenarios:\n  - files: x\n    proces: app.exe\noutputs:\n  - folded: a\n' >"$y"
	check "bad.yaml:4: unknown key 'proces' in a scenario (known: files, exclude, name, process"
	printf 'etlkit: 1\njobs: four\nscenarios:\n  - files: x\noutputs:\n  - folded: a\n' >"$y"
	check "bad.yaml:2: 'jobs' must be a non-negative integer, not 'four'"
	printf 'etlkit: 1\nscenarios:\n  - files: x\n    start_ms: [1]\noutputs:\n  - folded: a\n' >"$y"
	check "bad.yaml:4: 'start_ms' must be a non-negative number, not a list"
	printf 'etlkit: 1\nscenarios:\n  - files: x\nsteps:\n  cpu:\n    stackfold: --roots=comm\noutputs:\n  - folded: a\n' >"$y"
	check "bad.yaml:6: 'stackfold' must be a list of strings, not a scalar"
	printf 'etlkit: 1\nscenarios:\n  - files: x\nsteps:\n  cpu:\n    stackfold: []\noutputs:\n  - folded: a\n    from: cpuu\n' >"$y"
	check "bad.yaml:8: 'from: cpuu' names no step under 'steps'"
	printf 'etlkit: 1\nscenarios:\n  - name: x\noutputs:\n  - folded: a\n  - by_name: b\n    scenario_frame: maybe\n' >"$y"
	check "bad.yaml:3: a scenario needs 'files'"
	[[ "$output" == *"bad.yaml:7: 'scenario_frame' must be true or false, not 'maybe'"* ]]
	printf 'etlkit: 1\nscenarios:\n  - files: x\n    files: y\noutputs: []\n' >"$y"
	check "bad.yaml:4: duplicate key 'files' in a scenario (first at line 3)"
	printf 'etlkit: 1\nscenarios:\n  - files: [x\noutputs:\n' >"$y"
	check "bad.yaml:4: YAML syntax error"
	printf 'scenarios: []\noutputs:\n  - diff: d.folded\n' >"$y"
	check "missing 'etlkit: 1'"
	[[ "$output" == *"bad.yaml:3: a diff output needs 'baseline'"* ]]
	printf 'etlkit: 2\nscenarios: []\noutputs: []\n' >"$y"
	check "bad.yaml:1: pipeline version 2; this etlkit-run reads version 1"
	run etlkit-run "$T/none.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" == *"none.yaml: No such file or directory"* ]]
}

@test "the shipped pipelines load, and an empty scenario is reported as partial" {
	for p in "$BATS_TEST_DIRNAME"/../pipelines/*.yaml; do
		run etlkit-run --list-jobs "$p"
		[[ "$output" != *"unknown key"* && "$output" != *"must be"* ]] || fail "$p: $output"
	done
	mkdir -p "$T/tr"
	printf 'app;a 3\n' >"$T/tr/a.folded"
	printf 'etlkit: 1\nscenarios:\n  - files: tr/*.folded\n  - files: nothing/*.etl\noutputs:\n  - folded: all.folded\n' >"$T/p.yaml"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"p.yaml:4: no trace matches $T/nothing/*.etl"* ]]
	[ "$(cat "$T/out/p/all.folded")" = "a;app;a 3" ]
}

@test "pipelines/demo.yaml diagnoses the backup-server incident: ndis.sys DPCs at ~220 us, scenario by scenario" {
	[ -x "$ETLKIT_BIN/render" ] || skip "render is not built yet"
	mkdir -p "$T/pipelines" "$T/bin/demo/sym"	# as make demo leaves it without clang-cl
	cp "$BATS_TEST_DIRNAME/../pipelines/demo.yaml" "$T/pipelines/"
	for v in incident fixed; do
		etlgen -o "$T/bin/demo/$v.etl" "$BATS_TEST_DIRNAME/scenarios/backup-$v.yaml" 2>/dev/null
	done
	run etlkit-run -q "$T/pipelines/demo.yaml"
	[ "$status" -eq 0 ]
	out=$T/bin/demo/pipeline
	# "{dir}" in an argument is the pipeline's directory, whatever the working directory
	# (--threads=1: the two traces were converted side by side, docs/etlkit-run.1)
	grep -q "^command=etl2evt \(--threads=1 \)\?-k Sample --symbols $T/pipelines/../bin/demo/sym $T/bin/demo/fixed.etl" "$T"/bin/demo/cache/*.rec
	# the DPC report of each scenario: ndis.sys, 163,000 DPCs, average 220 us (incident) vs 90 us (fixed)
	awk '/^== scenario incident/ { s = 1 } /^== scenario fixed/ { s = 0 } s && $1 == "DPC" && $2 == "ndis.sys" && NF == 12 { print $3, int($5 + 0.5) }' "$out/dpc.txt" >"$T/inc"
	[ "$(head -1 "$T/inc")" = "163000 220" ]
	awk '/^== scenario fixed/ { s = 1 } /^== scenario incident/ { s = 0 } s && $1 == "DPC" && $2 == "ndis.sys" && NF == 12 { print $3, int($5 + 0.5) }' "$out/dpc.txt" >"$T/fix"
	[ "$(head -1 "$T/fix")" = "163000 90" ]
	# both scenarios in one folded view, the scenario as the root frame
	[ "$(cut -d';' -f1 "$out/cpu.folded" | sort -u | tr '\n' ' ')" = "fixed incident " ]
	grep -q '<svg' "$out/cpu.svg"
	# "{scenario}" in an output name: one file per scenario, with that scenario's stacks only
	grep -q '<svg' "$out/cpu-incident.svg"
	grep -q '<svg' "$out/cpu-fixed.svg"
	grep -q '<title>incident</title>' "$out/cpu.svg"
	grep -q '<title>fixed</title>' "$out/cpu.svg"
	! grep -q '<title>incident</title>\|<title>fixed</title>' "$out/cpu-fixed.svg"
	grep -q '<title>BackupSvc.exe</title>' "$out/cpu-fixed.svg"
}

@test "a scenario's process and time range select at the source (etl2evt), or with evtfilter for evt traces" {
	require_corpus
	mkdir -p "$T/tr"
	ln -s "$CORPUS/perfview/net.4.5.2.x64.etl.zip" "$T/tr/net.etl.zip"
	cat >"$T/p.yaml" <<-'EOF2'
	etlkit: 1
	scenarios:
	  - files: tr/*.etl.zip
	    name: "window $1"
	    process: Test.x64.exe
	    start_ms: 1000
	    end_ms: 5000
	  - files: tr/*.etl.zip
	    name: "all $1"
	steps:
	  cpu:
	    stackfold: [--roots=comm]
	outputs:
	  - folded: cpu.folded
	EOF2
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 0 ]
	grep -q "command=etl2evt \(--threads=1 \)\?-p Test.x64.exe -s 1000.000000 -e 5000.000000 .*net.etl.zip | stackfold --roots=comm" "$T"/.etlkit-cache/p/*.rec
	# the window scenario is exactly what the same commands give by hand
	etl2evt -p Test.x64.exe -s 1000 -e 5000 "$T/tr/net.etl.zip" | stackfold --roots=comm >"$T/want"
	grep '^window net;' "$T/out/p/cpu.folded" | sed 's/^[^;]*;//' >"$T/got"
	cmp "$T/want" "$T/got"
	[ "$(cut -d';' -f1 "$T/got" | sort -u)" = Test.x64.exe ]
	w=$(awk '{ s += $NF } END { print s }' "$T/got")
	a=$(grep '^all net;Test.x64.exe;' "$T/out/p/cpu.folded" | awk '{ s += $NF } END { print s }')
	[ "$w" -gt 0 ] && [ "$w" -lt "$a" ]
	# an evt trace gets the same selection through evtfilter
	[ -x "$ETLKIT_BIN/evtfilter" ] || skip "evtfilter is not built yet"
	etl2evt "$T/tr/net.etl.zip" | gzip >"$T/tr/net.evt.gz"
	sed -i 's|tr/\*.etl.zip|tr/*.etl.zip|; 0,/files: tr\/\*.etl.zip/s//files: [tr\/*.etl.zip, tr\/*.evt.gz]/' "$T/p.yaml"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 0 ]
	grep -q "command=evtfilter -p Test.x64.exe --start 1000.000000 --end 5000.000000 .*net.evt.gz | stackfold --roots=comm" "$T"/.etlkit-cache/p/*.rec
	[ "$(grep '^window net;' "$T/out/p/cpu.folded" | cut -d';' -f2 | sort -u)" = Test.x64.exe ]
	# process: auto = PerfView's process-of-interest heuristic (evtfilter --poi): Test.x64.exe here
	printf 'etlkit: 1\nscenarios:\n  - files: tr/*.etl.zip\n    process: auto\nsteps:\n  cpu:\n    stackfold: [--roots=comm]\noutputs:\n  - folded: poi.folded\n' >"$T/poi.yaml"
	run etlkit-run -q "$T/poi.yaml"
	[ "$status" -eq 0 ]
	grep -q "command=etl2evt .*net.etl.zip | evtfilter --poi=auto | stackfold --roots=comm" "$T"/.etlkit-cache/poi/*.rec
	[ "$(cut -d';' -f2 "$T/out/poi/poi.folded" | sort -u)" = Test.x64.exe ]
}

@test "a trace over timeout_s is killed with its tools, reported, and tried again next run" {
	require_corpus
	mkdir -p "$T/tr"
	# a trace that takes etl2evt about a second of CPU (2.9 M events), fifty
	# times the limit, so that the kill never depends on the machine's speed
	etlgen --repeat 4 -o "$T/tr/net.etl" "$BATS_TEST_DIRNAME/scenarios/backup-incident.yaml" 2>/dev/null
	printf 'etlkit: 1\ntimeout_s: 0.02\nscenarios:\n  - files: tr/*.etl\nsteps:\n  cpu:\n    stackfold: []\noutputs:\n  - folded: cpu.folded\n' >"$T/p.yaml"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 2 ]	# the only trace failed: nothing to aggregate
	[[ "$output" == *"FAILED $T/tr/net.etl (scenario 'net', step cpu): timed out after 0.02 s"* ]]
	grep -q "net.etl	cpu	timeout	failed	" "$T/out/p/run-report.tsv"
	[ ! -s "$T/out/p/cpu.folded" ]
	# nothing of the killed conversion is left running
	sleep 0.2
	for p in /proc/[0-9]*; do { cat "$p/cmdline" 2>/dev/null || true; } | tr '\0' ' '; echo; done >"$T/ps"
	! grep -q "^etl2evt .*$T/tr/net.etl" "$T/ps"
	grep -q "bats" "$T/ps"	# the listing itself works
	sed -i 's/timeout_s: 0.02/timeout_s: 0/' "$T/p.yaml"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 0 ]
	[ "$(actions_in "$T/out/p" converted)" -eq 1 ]
	[ -s "$T/out/p/cpu.folded" ]
	[ "$(ls -A "$T/.etlkit-cache/p" | grep -c '\.tmp\.')" -eq 0 ]
}

@test "a partly damaged trace is used and reported as partial (the tool's exit 1), with the byte offset" {
	mkdir -p "$T/tr"
	etlgen --seed 1 -o "$T/tr/good.etl" "$BATS_TEST_DIRNAME/scenarios/kinds.yaml" 2>/dev/null
	cp "$T/tr/good.etl" "$T/tr/damaged.etl"
	printf '\377\377\377\377\377\377\377\377' | dd of="$T/tr/damaged.etl" bs=1 seek=24576 conv=notrunc 2>/dev/null
	printf 'etlkit: 1\nscenarios:\n  - files: tr/*.etl\nsteps:\n  cpu:\n    stackfold: [--roots=comm]\noutputs:\n  - folded: cpu.folded\n' >"$T/p.yaml"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 1 ]
	[[ "$output" == *"partial $T/tr/damaged.etl (scenario 'damaged', step cpu): etl2evt: "*"offset 24576: corrupt buffer header"* ]]
	grep -q "damaged.etl	cpu	converted	partial	" "$T/out/p/run-report.tsv"
	# what could be decoded is aggregated: less than the intact copy, more than nothing
	d=$(grep '^damaged;' "$T/out/p/cpu.folded" | awk '{ s += $NF } END { print s + 0 }')
	g=$(grep '^good;' "$T/out/p/cpu.folded" | awk '{ s += $NF } END { print s + 0 }')
	[ "$d" -gt 0 ] && [ "$d" -lt "$g" ]
	# a re-run reuses the partial result and still says so
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 1 ]
	[ "$(actions_in "$T/out/p" reused)" -eq 2 ]
	[[ "$output" == *"partial $T/tr/damaged.etl"* ]]
}

@test "two runs of one pipeline at once: the second stops with a clear error, the first is unharmed" {
	mkdir -p "$T/tr"
	printf 'app;a 3\n' >"$T/tr/a.folded"
	printf 'etlkit: 1\nscenarios:\n  - files: tr/*.folded\noutputs:\n  - folded: all.folded\n' >"$T/p.yaml"
	etlkit-run -q "$T/p.yaml"
	run flock "$T/.etlkit-cache/p/.run.lock" "$ETLKIT_BIN/etlkit-run" -q "$T/p.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" == *"p.yaml: another etlkit-run is using this cache"* ]]
	[ "$(cat "$T/out/p/all.folded")" = "a;app;a 3" ]
	# scheduler jobs do not take the lock: they only add to the cache
	run flock "$T/.etlkit-cache/p/.run.lock" "$ETLKIT_BIN/etlkit-run" --run-job 1 "$T/p.yaml"
	[ "$status" -eq 0 ]
}

@test "one trace in two scenarios with the same settings is converted once and counted in both" {
	mkdir -p "$T/tr"
	printf 'app;a 3\n' >"$T/tr/run1.folded"
	printf 'app;b 2\n' >"$T/tr/run2.folded"
	printf 'etlkit: 1\nscenarios:\n  - files: tr/run*.folded\n    name: "run $1"\n  - files: tr/run*.folded\n    name: all\nsteps:\n  s:\n    stackfold: []\noutputs:\n  - folded: all.folded\n' >"$T/p.yaml"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 0 ]
	[ "$(actions_in "$T/out/p" converted)" -eq 2 ]
	[ "$(actions_in "$T/out/p" reused)" -eq 2 ]
	[ "$(ls "$T"/.etlkit-cache/p/*.rec | wc -l)" -eq 2 ]
	[ "$(cat "$T/out/p/all.folded")" = "$(printf 'all;app;a 3\nall;app;b 2\nrun 1;app;a 3\nrun 2;app;b 2')" ]
}

#!/usr/bin/env bats
# etlkit-run with hostile or odd input: YAML nesting, outputs and
# arguments that would write or read outside the run, output name
# collisions, matched paths that are no traces, control bytes in file
# names, nights where everything failed, traces without samples, and
# traces whose name does not say what they are.
load helpers

KINDS() { echo "$BATS_TEST_DIRNAME/scenarios/kinds.yaml"; }

# synth SEED PATH: a small synthesised ETL trace with CPU samples
synth() { etlgen --seed "$1" -o "$2" "$(KINDS)" 2>/dev/null; }

# report_rows DIR: the data rows of DIR/run-report.tsv
report_rows() { awk 'NR > 1' "$1/run-report.tsv"; }

@test "YAML nested 100000 deep is refused at once, naming the depth limit and the line" {
	python3 -c 'import sys; sys.stdout.write("etlkit: 1\nscenarios:\n  - files: " + "[" * 100000 + "\n")' >"$T/deep.yaml"
	run etlkit-run "$T/deep.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" == *"deep.yaml:3: nested deeper than 64 levels"* ]] || fail "$output"
	[ ! -d "$T/.etlkit-cache" ]
	# block mappings count as well: 70 levels of "k:" indentation
	python3 -c '
import sys
out = ["etlkit: 1", "outputs: []", "scenarios:"]
out += ["  " * (i + 1) + "k:" for i in range(70)]
sys.stdout.write("\n".join(out) + " x\n")' >"$T/block.yaml"
	run etlkit-run "$T/block.yaml"
	[ "$status" -eq 2 ]
	# the top mapping is level 1, the first "k:" (line 4) opens level 2: level 65 is line 67
	[[ "$output" == *"block.yaml:67: nested deeper than 64 levels"* ]] || fail "$output"
	# 60 levels are not refused for their depth (only for what they say)
	python3 -c 'import sys; sys.stdout.write("etlkit: 1\nscenarios:\n  - files: " + "[" * 60 + "]" * 60 + "\noutputs: []\n")' >"$T/ok.yaml"
	run etlkit-run "$T/ok.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" != *"nested deeper"* ]] || fail "$output"
	[[ "$output" == *"ok.yaml:3: each element of 'files' must be a string, not a list"* ]] || fail "$output"
}

@test "output names stay inside 'output': no '..', absolute paths or directories, nothing written" {
	mkdir -p "$T/p/tr" "$T/elsewhere"
	printf 'app;a 3\n' >"$T/p/tr/a.folded"
	bad() {
		printf 'etlkit: 1\nscenarios:\n  - files: tr/*.folded\noutputs:\n  - folded: ok.folded\n  - %s: %s\n' "$1" "$2" >"$T/p/p.yaml"
		run etlkit-run -q "$T/p/p.yaml"
		[ "$status" -eq 2 ] || fail "$2: status $status"
		[[ "$output" == *"p.yaml:6: output file name '$2' "* ]] || fail "$2: $output"
		[ ! -e "$T/p/out" ] || fail "$2: something was written"
	}
	bad folded ../../elsewhere/x.folded
	bad by_name "$T/elsewhere/abs.tsv"
	bad flamegraph sub/cpu.svg
	bad folded ..
	bad folded .hidden
	[ -z "$(ls -A "$T/elsewhere")" ]
	printf 'etlkit: 1\nscenarios:\n  - files: tr/*.folded\noutputs:\n  - folded: run-report.tsv\n' >"$T/p/p.yaml"
	run etlkit-run -q "$T/p/p.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" == *"p.yaml:5: 'run-report.tsv' is the run's own report"* ]] || fail "$output"
}

@test "step and output arguments cannot name outputs or files: refused with the line, before anything runs" {
	mkdir -p "$T/tr"
	synth 1 "$T/tr/s1.etl"
	printf 'secret;x 1\n' >"$T/secret.folded"
	refuse() {	# refuse LINE WHAT STEPS OUTPUT-ARGS
		cat >"$T/p.yaml" <<-EOF
		etlkit: 1
		scenarios:
		  - files: tr/*.etl
		steps:
		  cpu:
		    $3
		outputs:
		  - folded: cpu.folded
		  - flamegraph: cpu.svg
		    args: $4
		EOF
		run etlkit-run -q "$T/p.yaml"
		[ "$status" -eq 2 ] || fail "$2: status $status: $output"
		[[ "$output" == *"p.yaml:$1: '$2' is not allowed in the arguments of "* ]] || fail "$2: $output"
		[ ! -e "$T/out" ] && [ ! -e "$T/.etlkit-cache" ] || fail "$2: the run started"
	}
	refuse 6 -o 'stackfold: [--roots=comm, -o, '"$T"'/stolen.folded]' '[]'
	refuse 6 --output=x 'stackfold: [--output=x]' '[]'
	refuse 6 --out=x 'stackfold: [--out=x]' '[]'	# getopt would take the prefix
	refuse 6 -no 'stackfold: [-no, x]' '[]'		# -n then -o in one cluster
	refuse 6 "$T/secret.folded" 'etl2evt: [-k, Sample, '"$T"'/secret.folded]' '[]'
	refuse 6 -- 'evtfilter: [--, x]' '[]'
	refuse 6 --help 'stackfold: [--help]' '[]'
	refuse 10 --palette-file 'stackfold: []' "[--palette-file, $T/secret.folded]"
	refuse 10 -ox 'stackfold: []' '[-ox]'
	[ ! -e "$T/stolen.folded" ]
	# allowed options, in their getopt forms, still run
	refuse_ok='stackfold: [--roots=comm, -k, --preset, module-entries]'
	cat >"$T/p.yaml" <<-EOF
	etlkit: 1
	scenarios:
	  - files: tr/*.etl
	steps:
	  cpu:
	    etl2evt: [-kSample, --no-symbols]
	    evtfilter: [-k, Sample, --keep-idle]
	    $refuse_ok
	outputs:
	  - folded: cpu.folded
	  - flamegraph: cpu.svg
	    args: [--title, "a title", --width=800, --hash]
	EOF
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 0 ] || fail "$output"
	[ -s "$T/out/p/cpu.folded" ] && [ -s "$T/out/p/cpu.svg" ]
}

@test "two scenarios whose names differ only as file names ('a/b', 'a_b') are refused, naming both" {
	mkdir -p "$T/tr"
	printf 'app;x 1\n' >"$T/tr/one.folded"
	printf 'app;y 2\n' >"$T/tr/two.folded"
	cat >"$T/p.yaml" <<-'EOF'
	etlkit: 1
	scenarios:
	  - files: tr/one.folded
	    name: a/b
	  - files: tr/two.folded
	    name: a_b
	outputs:
	  - folded: all.folded
	  - folded: "cpu-{scenario}.folded"
	EOF
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" == *"p.yaml:9: scenarios 'a/b' and 'a_b' would both write $T/out/p/cpu-a_b.folded"* ]] || fail "$output"
	[ ! -e "$T/out/p/cpu-a_b.folded" ] && [ ! -e "$T/out/p/all.folded" ]
	# a per-scenario file that is another output's file
	sed -i 's/name: a_b/name: all/; s/cpu-{scenario}/{scenario}/' "$T/p.yaml"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" == *"p.yaml:9: scenario 'all' would write $T/out/p/all.folded, the file of the output at line 8"* ]] || fail "$output"
	# distinct names run, and each file holds its own scenario
	sed -i 's/name: all/name: c/' "$T/p.yaml"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 0 ] || fail "$output"
	[ "$(cat "$T/out/p/a_b.folded")" = "a/b;app;x 1" ]
	[ "$(cat "$T/out/p/c.folded")" = "c;app;y 2" ]
}

@test "dangling symlinks and FIFOs among the traces: a failed row each, a line on stderr, a partial night" {
	mkdir -p "$T/tr"
	synth 1 "$T/tr/good.etl"
	ln -s "$T/nowhere.etl" "$T/tr/dangling.etl"
	mkfifo "$T/tr/fifo.etl"
	mkdir "$T/tr/subdir.etl"	# a directory is no trace, and not a mistake either
	printf 'etlkit: 1\nscenarios:\n  - files: tr/*.etl\nsteps:\n  cpu:\n    stackfold: [--roots=comm]\n  raw:\noutputs:\n  - folded: cpu.folded\n    from: cpu\n' >"$T/p.yaml"
	run etlkit-run -q "$T/p.yaml"	# a FIFO opened for reading would block here
	[ "$status" -eq 1 ]
	[[ "$output" == *"p.yaml:3: $T/tr/dangling.etl: skipped: dangling symbolic link"* ]] || fail "$output"
	[[ "$output" == *"p.yaml:3: $T/tr/fifo.etl: skipped: a FIFO, not a regular file"* ]] || fail "$output"
	[[ "$output" == *"FAILED $T/tr/fifo.etl (scenario 'fifo', step cpu): a FIFO"* ]] || fail "$output"
	# one row per path and step: 3 paths x 2 steps
	[ "$(report_rows "$T/out/p" | wc -l)" -eq 6 ]
	[ "$(report_rows "$T/out/p" | awk -F'\t' '$4 == "skipped" && $5 == "failed"' | wc -l)" -eq 4 ]
	report_rows "$T/out/p" | grep -q "^dangling	$T/tr/dangling.etl	raw	skipped	failed	0.000	dangling symbolic link"
	report_rows "$T/out/p" | grep -q "^good	$T/tr/good.etl	cpu	converted	ok	"
	! grep -q subdir "$T/out/p/run-report.tsv"
	# the good trace is aggregated as if alone
	etl2evt "$T/tr/good.etl" | stackfold --roots=comm | sed 's/^/good;/' >"$T/want"
	cmp "$T/want" "$T/out/p/cpu.folded"
}

@test "run-report.tsv: tabs, newlines and ESC in trace names are escaped as in evt, one row per job" {
	mkdir -p "$T/tr"
	printf 'app;a 1\n' >"$T/tr/tab	x.folded"
	printf 'app;b 2\n' >"$T/tr/nl
fake	row	cpu	converted	ok	0	.folded"
	printf 'app;c 3\n' >"$T/tr/esc$(printf '\033')[31mred%.folded"
	printf 'etlkit: 1\nscenarios:\n  - files: tr/*.folded\noutputs:\n  - folded: all.folded\n' >"$T/p.yaml"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 0 ] || fail "$output"
	r=$T/out/p/run-report.tsv
	[ "$(wc -l <"$r")" -eq 4 ]
	awk -F'\t' 'NF != 8 { exit 1 }' "$r"	# scenario, trace, step, action, status, seconds, error, health
	! grep -q "$(printf '\033')" "$r"
	# unescaping the trace column (python, not lib/evt/evt.c) gives back exactly the files on disk
	python3 - "$r" "$T/tr" <<-'EOF'
	import os, re, sys
	rows = open(sys.argv[1], "rb").read().split(b"\n")[1:-1]
	got = sorted(re.sub(rb"%([0-9A-F]{2})", lambda m: bytes([int(m.group(1), 16)]), r.split(b"\t")[1]) for r in rows)
	want = sorted(os.path.join(os.fsencode(sys.argv[2]), n) for n in os.listdir(os.fsencode(sys.argv[2])))
	assert got == want, (got, want)
	EOF
	grep -q "	$T/tr/nl%0Afake%09row%09cpu%09converted%09ok%090%09.folded	" "$r"
	grep -q "	$T/tr/esc%1B\[31mred%25.folded	" "$r"
}

@test "a night in which every trace failed exits 2; one good trace makes it partial (1)" {
	mkdir -p "$T/tr"
	random_bytes 4 5000 >"$T/tr/bad1.etl"
	random_bytes 5 7000 >"$T/tr/bad2.etl"
	printf 'etlkit: 1\nscenarios:\n  - files: tr/*.etl\nsteps:\n  cpu:\n    stackfold: [--roots=comm]\noutputs:\n  - folded: cpu.folded\n' >"$T/p.yaml"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 2 ]
	[[ "$output" == *"p.yaml: every trace job failed"* ]] || fail "$output"
	[ "$(report_rows "$T/out/p" | awk -F'\t' '$5 == "failed"' | wc -l)" -eq 2 ]
	# the same, from the cache (failures reused) and with only dangling links
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 2 ]
	rm "$T"/tr/*.etl
	ln -s "$T/gone.etl" "$T/tr/link.etl"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 2 ]
	synth 2 "$T/tr/good.etl"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 1 ]
}

@test "a trace without CPU samples is an 'empty' result, not a failure: reported with its reason, exit 0" {
	require_corpus
	mkdir -p "$T/tr"
	synth 3 "$T/tr/synth.etl"
	ln -s "$CORPUS/airbus/AMSITrace.etl" "$T/tr/nosamples.etl"
	# independently: the trace has events but not one Sample
	[ "$(etl2evt "$T/tr/nosamples.etl" | evtcheck -c | awk -F'\t' '$1 == "Sample"' | wc -l)" -eq 0 ]
	[ "$(etl2evt "$T/tr/synth.etl" | evtcheck -c | awk -F'\t' '$1 == "Sample"' | wc -l)" -eq 1 ]
	cat >"$T/p.yaml" <<-'EOF'
	etlkit: 1
	scenarios:
	  - files: tr/*.etl
	    process: auto
	steps:
	  cpu:
	    stackfold: [--roots=comm]
	outputs:
	  - folded: cpu.folded
	  - by_name: cpu.tsv
	  - flamegraph: "cpu-{scenario}.svg"
	EOF
	run etlkit-run "$T/p.yaml"
	[ "$status" -eq 0 ] || fail "$output"
	[[ "$output" == *"0 failed, 0 partial, 1 empty"* ]] || fail "$output"
	report_rows "$T/out/p" | grep -q "^nosamples	$T/tr/nosamples.etl	cpu	converted	empty	[0-9.]*	no stacks or events in the result"
	report_rows "$T/out/p" | grep -q "^synth	$T/tr/synth.etl	cpu	converted	ok	"
	# the empty scenario is in the table with nothing; no flame graph of nothing is attempted
	grep -q "^#scenario	[0-9]*	nosamples	files=1	total=0$" "$T/out/p/cpu.tsv"
	[ -s "$T/out/p/cpu-synth.svg" ] && [ ! -e "$T/out/p/cpu-nosamples.svg" ]
	# reused from the cache, it stays empty
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 0 ]
	report_rows "$T/out/p" | grep -q "^nosamples	.*	reused	empty	"
}

@test "the trace format comes from the content: .diagsession, .ETL.zip, evt named .etl, folded named .dat" {
	mkdir -p "$T/src" "$T/tr"
	synth 4 "$T/src/a.etl"
	synth 5 "$T/src/b.etl"
	python3 - "$T" <<-'EOF'
	import sys, zipfile
	t = sys.argv[1]
	with zipfile.ZipFile(t + "/tr/vs.diagsession", "w", zipfile.ZIP_DEFLATED) as z:
	    z.write(t + "/src/a.etl", "sc.user_aux.etl")
	with zipfile.ZipFile(t + "/tr/upper.ETL.zip", "w", zipfile.ZIP_DEFLATED) as z:
	    z.write(t + "/src/b.etl", "b.etl")
	EOF
	etl2evt "$T/src/a.etl" >"$T/tr/evt-named.etl"
	etl2evt "$T/src/b.etl" | gzip >"$T/tr/gz-evt.bin"
	printf 'app;f 3\napp;g 4\n' >"$T/tr/folded.dat"
	printf 'etlkit: 1\nscenarios:\n  - files: "tr/*"\nsteps:\n  cpu:\n    stackfold: [--roots=comm]\noutputs:\n  - folded: cpu.folded\n' >"$T/p.yaml"
	run etlkit-run -q "$T/p.yaml"
	[ "$status" -eq 0 ] || fail "$output"
	# every scenario's stacks are those of its source, folded on its own
	for s in vs.diagsession:a upper.ETL.zip:b evt-named.etl:a gz-evt.bin:b; do
		etl2evt "$T/src/${s#*:}.etl" | stackfold --roots=comm | sed "s/^/${s%:*};/" >"$T/want"
		grep "^${s%:*};" "$T/out/p/cpu.folded" >"$T/got" || true
		cmp "$T/want" "$T/got" || fail "$s differs"
	done
	grep -q '^folded.dat;app;f 3$' "$T/out/p/cpu.folded"
	evtcheck --folded=inferno "$T/out/p/cpu.folded"
	# the record says which tools read each trace
	grep -l 'vs.diagsession' "$T"/.etlkit-cache/p/*.rec | xargs grep -q '^command=etl2evt .*vs.diagsession | stackfold'
	grep -l 'evt-named.etl' "$T"/.etlkit-cache/p/*.rec | xargs grep -q '^command=stackfold --roots=comm .*evt-named.etl$'
}

#!/usr/bin/env bats
# --emit and the reduces of docs/scaling.md, run as the page gives them
# (its "tested=" blocks, extracted and run unchanged): the tagged stream
# split by step, and Hadoop Streaming against a local stand-in that keeps
# Hadoop's contract (OFFSET<TAB>LINE to the mapper, -files localised, sort
# between map and reduce, three reducers).  Every output equals the
# one-machine etlkit-run's byte for byte.  Also measures what the page's
# "Sizes and times" states: partial results' sizes and merge times.
load helpers
load scaling_helpers

setup_file() {
	[ -n "$CORPUS" ] || return 0
	scaling_night "$BATS_FILE_TMPDIR"
	scaling_reference "$BATS_FILE_TMPDIR"
}

REF() { echo "$BATS_FILE_TMPDIR/ref/out"; }

# total_of FOLDED...: the sum of the weights (the last field), by awk, not by etlkit
total_of() { cat "$@" | awk '{ s += $NF } END { printf "%.6f\n", s }'; }

@test "scaling emit: --emit tags each line with its step; the page's reduce gives the one-machine outputs" {
	require_corpus
	doc_path
	night_in "$T/n"
	cd "$T/n"
	doc_block emit >"$T/emit.sh"
	bash -e "$T/emit.sh" || fail "the page's emit block failed"
	# every line is STEP<TAB>SCENARIO;... with one of the two steps
	awk -F'\t' 'NF != 2 || ($1 != "cpu" && $1 != "kernel") || $2 !~ /^night [^;]*;/ { print; bad = 1 }
	    END { exit bad }' emitted.txt
	same_outputs "$(REF)" "$T/n"
	# the issue's numbers: one step's total is the samples; both steps summed together double it
	cpu=$(total_of "$(REF)/cpu.folded")
	both=$(cut -f2 emitted.txt | total_of)
	[ "$(awk -v a="$cpu" -v b="$both" 'BEGIN { print (b == 2 * a) }')" = 1 ] || fail "cpu $cpu, both $both"
	# net.4.5.2.x64: the scenario's cpu weight is its non-Idle samples counted from the decode
	want=$(etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" | awk -F'\t' '$2 == "Sample" {
	    c = 1; intr = 0
	    for (i = 8; i < NF; i++) { if ($i ~ /^count=/) c = substr($i, 7); if ($i == "dpc=1" || $i == "isr=1") intr = 1 }
	    if (($5 == 0 || $4 == "Idle") && !intr) next
	    n += c } END { printf "%.6f\n", n }')
	got=$(grep '^night net452;' cpu.folded | total_of)
	[ "$got" = "$want" ] || fail "net452: reduced $got, decode $want"
}

@test "scaling emit: --emit=STEP emits that step's jobs untagged; --run-job - takes Hadoop's OFFSET<TAB>LINE" {
	require_corpus
	night_in "$T/n"
	cd "$T/n"
	etlkit-run --list-jobs nightly.yaml >jobs
	# every job's index, fed as Hadoop's NLineInputFormat does: byte offset, tab, line
	cut -f1 jobs | awk '{ print off + 0 "\t" $0; off += length($0) + 1 }' >fed
	[ "$(head -2 fed | tr '\t\n' '| ')" = "0|1 2|2 " ]
	etlkit-run -q --run-job - --emit=kernel nightly.yaml <fed >kernel.emitted
	! grep -q '	' kernel.emitted
	aggregate -M -o kernel.folded kernel.emitted
	cmp "$(REF)/kernel.folded" kernel.folded
	# everything converted once: the cpu step's emit converts nothing more
	[ "$(etlkit-run --list-jobs --todo nightly.yaml | wc -l)" -eq 0 ]
	etlkit-run -q --run-job - --emit=cpu nightly.yaml <fed | aggregate -M -o cpu.folded -
	cmp "$(REF)/cpu.folded" cpu.folded
	# errors: an unknown step, a job that is not there (the others still run: exit 2 at the end)
	run etlkit-run --run-job 1 --emit=nosuch nightly.yaml
	[ "$status" -eq 2 ] && [[ "$output" == *"--emit=nosuch: "*"has no such step"* ]] || fail "$output"
	run bash -c 'printf "0\t99\n3\t1\n" | etlkit-run -q --run-job - --emit=cpu nightly.yaml | wc -l'
	[ "$status" -eq 0 ] && [[ "$output" == *"no job '99'"* ]] && [ "${lines[-1]}" -gt 100 ] || fail "$output"
	run etlkit-run -q --run-job - nightly.yaml </dev/null
	[[ "$output" == *"no job ID on stdin"* ]] || fail "$output"
	run etlkit-run --emit nightly.yaml
	[ "$status" -eq 2 ]
}

@test "scaling emit: the page's Hadoop Streaming recipe, on the stand-in (3 reducers), gives the one-machine outputs" {
	require_corpus
	local t
	doc_path
	night_in "$T/n"
	cd "$T/n"
	# the traces at paths every node can read: absolute
	sed -i "s|files: traces/|files: $T/n/traces/|" nightly.yaml
	for t in etlkit-run etl2evt evtfilter stackfold aggregate; do ln -s "$ETLKIT_BIN/$t" "$t"; done
	doc_block hadoop >"$T/hadoop.sh"
	bash -e "$T/hadoop.sh" 2>"$T/err" || { cat "$T/err"; fail "the page's hadoop block failed"; }
	# 4 mappers and 3 reducers per step ran; reducers saw sorted KEY<TAB> records
	[ "$(grep -c 'attempt_m_.*--emit=cpu nightly.yaml: exit 0' "$T/err")" -eq 4 ]
	[ "$(grep -c 'attempt_r_.*aggregate -M -: exit 0' "$T/err")" -eq 6 ]
	[ "$(ls night-cpu/part-* | wc -l)" -eq 3 ]
	[ "$(cat night-cpu/part-* | grep -vc '	$')" -eq 0 ]
	same_outputs "$(REF)" "$T/n"
	# the old recipe's mapper took the offset for the job: that contract is what the stand-in keeps
	rm -rf night-x
	run hadoop jar hadoop-streaming.jar -files nightly.yaml,etlkit-run,etl2evt,stackfold \
	    -input jobs-cpu.txt -output night-x -inputformat org.apache.hadoop.mapred.lib.NLineInputFormat \
	    -mapper "xargs -n1 -I{} ./etlkit-run -q --run-job {} --emit=cpu nightly.yaml" -reducer './aggregate -M -'
	[ "$status" -eq 1 ] && [[ "$output" == *"no job '0	1'"* ]] && [ ! -e night-x ] || fail "$output"
}

@test "scaling emit: sizes and times for docs/scaling.md (partial results per trace, merge of N partials)" {
	require_corpus
	if asan; then skip "sizes and times are measured on the normal build"; fi
	local F=$BATS_FILE_TMPDIR k n s
	# the partial results of the reference run, per trace and step
	while IFS=$'\t' read -r idx key state step scen trace cmd; do
		s=$(stat -c %s "$F/ref/cache/$key.out.gz")
		echo "# measured: partial result $(basename "$trace") $step: $s bytes" >&3
		[ "$s" -gt 0 ]
	done < <(etlkit-run --list-jobs "$F/ref/p.yaml")
	# merge time for N partials (net452's cpu result, N copies): grows with N, exact sums
	etlkit-run -q --run-job 3 --emit=cpu "$F/ref/p.yaml" >"$T/one.folded"
	for n in 10 100 1000; do
		mkdir -p "$T/p$n"
		for k in $(seq 1 $n); do ln -s "$T/one.folded" "$T/p$n/$k.folded"; done
		/usr/bin/time -f '%U %S %M' -o "$T/time" aggregate -M -o "$T/m$n" "$T/p$n"/*.folded
		echo "# measured: merge of $n partials ($(wc -l <"$T/one.folded") lines, $(stat -c %s "$T/one.folded") bytes each): $(awk '{ printf "%.2f s CPU, %d MB peak RSS", $1 + $2, $3 / 1024 }' "$T/time")" >&3
		# exact: every weight is N times the partial's (awk over the text, not etlkit)
		[ "$(total_of "$T/m$n")" = "$(awk -v n=$n '{ s += $NF } END { printf "%.6f\n", n * s }' "$T/one.folded")" ]
	done
}

@test "scaling docs: every command block of docs/scaling.md is a tested= block that a scaling test runs" {
	local fences names n
	# every fence opens a "sh tested=NAME" block or closes one: no untested commands on the page
	fences=$(grep -c '^```' "$ROOT/docs/scaling.md")
	names=$(sed -n 's/^```sh tested=\([a-z-]*\)$/\1/p' "$ROOT/docs/scaling.md")
	[ "$fences" -eq $((2 * $(wc -w <<<"$names"))) ] || fail "untested blocks: $(grep -n '^```.' "$ROOT/docs/scaling.md")"
	[ "$(wc -w <<<"$names")" -ge 4 ]
	# each is run by a test, through doc_block (which takes the page's text as it is)
	for n in $names; do
		grep -q "doc_block $n " "$ROOT"/tests/scaling_*.bats || fail "no test runs the block tested=$n"
	done
}

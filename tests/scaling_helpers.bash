# Shared by tests/scaling_*.bats (docs/scaling.md: a night past one machine).
#
# scaling_night DIR: a pipeline DIR/p.yaml over four traces (two corpus
# traces read through symlinks, two synthesised by etlgen) with two stack
# steps, and the outputs of both.  Two steps make the per-step bookkeeping
# of --emit matter: a reduce that mixed them would double every total.
#
# scaling_reference DIR: the one-machine run of the same night into
# DIR/ref (its own copy of the pipeline and cache): what every scheduler's
# outputs must equal byte for byte.
#
# scaling_outputs: the output files both runs write (run-report.tsv aside:
# its actions and seconds differ by design).

scaling_outputs="cpu.folded cpu-byname.tsv kernel.folded"

scaling_night() {
	local d=$1
	mkdir -p "$d/traces"
	ln -sf "$CORPUS/perfview/net.4.5.2.x64.etl.zip" "$d/traces/net452.etl.zip"
	ln -sf "$CORPUS/perfview/ctf-net45-win7.etl.zip" "$d/traces/ctf.etl.zip"
	etlgen --seed 1 -o "$d/traces/synth-1.etl" "$ROOT/tests/scenarios/busy-cpu.yaml" 2>/dev/null
	etlgen --seed 2 -o "$d/traces/synth-2.etl" "$ROOT/tests/scenarios/busy-cpu.yaml" 2>/dev/null
	cat >"$d/p.yaml" <<-'EOF'
	# a night of four traces, two stack steps (tests/scaling_helpers.bash)
	etlkit: 1
	cache: cache
	output: out
	scenarios:
	  - files: traces/*.etl*
	    name: "night $1"
	steps:
	  cpu:
	    stackfold: [--roots=comm]
	  kernel:
	    stackfold: [--roots=process, --kernel]
	outputs:
	  - folded: cpu.folded
	    from: cpu
	  - by_name: cpu-byname.tsv
	    from: cpu
	  - folded: kernel.folded
	    from: kernel
	EOF
}

scaling_reference() {
	local d=$1
	mkdir -p "$d/ref"
	cp -a "$d/traces" "$d/ref/traces"
	cp "$d/p.yaml" "$d/ref/p.yaml"
	etlkit-run -q -j 2 "$d/ref/p.yaml" || [ $? -eq 1 ]
}

# same_outputs REFDIR OUTDIR: every output file byte-identical.
same_outputs() {
	local f
	for f in $scaling_outputs; do
		[ -s "$1/$f" ] || fail "reference $1/$f missing or empty"
		cmp "$1/$f" "$2/$f" || fail "$2/$f differs from the one-machine run's"
	done
}

# summary_of STDERR_FILE: etlkit-run's last summary line
summary_of() { grep 'trace jobs:' "$1" | tail -1; }

# doc_block NAME: the commands of docs/scaling.md's fenced block "```sh tested=NAME",
# the page's text exactly (a test runs them unchanged)
doc_block() {
	local b
	b=$(awk -v want='```sh tested='"$1" '$0 == want { f = 1; next } f && $0 == "```" { exit } f' \
	    "$ROOT/docs/scaling.md")
	[ -n "$b" ] || { echo "docs/scaling.md has no block 'tested=$1'" >&2; return 1; }
	printf '%s\n' "$b"
}

# doc_path: a directory first on PATH with the tools under their installed
# names (etlkit-run, etlkit-aggregate), as the page's commands call them,
# and a HOME in which GNU parallel's citation notice is acknowledged.
doc_path() {
	mkdir -p "$T/path" "$T/home/.parallel"
	touch "$T/home/.parallel/will-cite"
	ln -sf "$ETLKIT_BIN/etlkit-run" "$T/path/etlkit-run"
	ln -sf "$ETLKIT_BIN/aggregate" "$T/path/etlkit-aggregate"
	ln -sf "$ROOT/tests/tools/hadoop-streaming-standin" "$T/path/hadoop"
	PATH="$T/path:$PATH" HOME="$T/home"
	export PATH HOME
}

# night_in DIR: the night of scaling_night as the page's nightly.yaml in DIR
# (relative paths: the commands run in DIR)
night_in() {
	mkdir -p "$1"
	cp -a "$BATS_FILE_TMPDIR/traces" "$1/traces"
	cp "$BATS_FILE_TMPDIR/p.yaml" "$1/nightly.yaml"
}

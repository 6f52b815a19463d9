#!/usr/bin/env bats
# etlkit-run's cache keys past one machine (docs/scaling.md): a key names
# the tools' version and build identity (the hash of their sources, the
# second line of --version), the step settings and the trace (its path
# under the pipeline's directory; its content by SHA-256), never where the
# tools are installed, their sizes or mtimes.  Two installs of one build
# share a cache; a build with another identity never reuses a result; a
# merge over a cache the jobs have not filled writes no empty output.
load helpers
load scaling_helpers

setup_file() {
	local F=$BATS_FILE_TMPDIR
	[ -n "$CORPUS" ] || return 0
	scaling_night "$F"
	scaling_reference "$F"
	# two installs of this build, as two nodes would have them: other
	# prefixes, other mtimes (-o all: install what is in $ETLKIT_BIN)
	for p in a b; do
		env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$ROOT" -o all BIN="$ETLKIT_BIN" \
		    install PREFIX="$F/$p" >"$F/install-$p.log" 2>&1 || { cat "$F/install-$p.log" >&2; return 1; }
	done
	find "$F/b" -type f -exec touch -d '2001-02-03 04:05:06' {} +
}

F() { echo "$BATS_FILE_TMPDIR"; }

# night_copy: a fresh night in $T (traces, pipeline, empty cache)
night_copy() {
	cp -a "$(F)/traces" "$T/traces"
	cp "$(F)/p.yaml" "$T/p.yaml"
}

@test "scaling cache: two installs of one build (other prefix, other mtimes) share a cache" {
	require_corpus
	local a b n i
	a="$(F)/a/bin/etlkit-run"; b="$(F)/b/bin/etlkit-run"
	night_copy
	# the installs really differ where the old keys looked: path, mtime
	[ "$(stat -c %Y "$(F)/a/libexec/etlkit/etl2evt")" != "$(stat -c %Y "$(F)/b/libexec/etlkit/etl2evt")" ]
	# the same build: the same keys
	"$a" --list-jobs "$T/p.yaml" | cut -f1,2,4,5 >"$T/keys-a"
	"$b" --list-jobs "$T/p.yaml" | cut -f1,2,4,5 >"$T/keys-b"
	n=$(wc -l <"$T/keys-a")
	[ "$n" -eq 8 ]	# 4 traces x 2 steps
	textdiff "$T/keys-a" "$T/keys-b"
	# the nodes (install a) run every job; the head (install b) merges
	for i in $(seq 1 "$n"); do "$a" -q --run-job "$i" "$T/p.yaml"; done
	[ "$("$b" --list-jobs --todo "$T/p.yaml" | wc -l)" -eq 0 ]
	run "$b" --merge-only "$T/p.yaml"
	[ "$status" -eq 0 ] || fail "merge-only: status $status: $output"
	[[ "$(summary_of <(echo "$output"))" == *"8 trace jobs: 0 converted, 8 reused, 0 skipped, 0 failed,"* ]] ||
	    fail "summary: $output"
	same_outputs "$(F)/ref/out" "$T/out"
	[ "$(awk -F'\t' 'NR > 1 && $4 != "reused"' "$T/out/run-report.tsv" | wc -l)" -eq 0 ]
}

@test "scaling cache: a build with another identity (make BUILD_ID=...) never reuses a result" {
	require_corpus
	if asan; then skip "a rebuild of the tools, done once in the normal pass"; fi
	local other="$T/otherbin"
	night_copy
	cp -a "$(F)/ref/cache" "$T/cache"
	# the same sources with an identity forced through the documented make
	# variable: only base/cli.o is compiled again (the objects are copied)
	mkdir -p "$other"
	(cd "$ETLKIT_BIN" && tar cf - --exclude=./asan --exclude=./posix --exclude=./musl .) | (cd "$other" && tar xf -)
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$ROOT" BIN="$other" BUILD_ID=other-build-1 all \
	    >"$T/make.log" 2>&1 || { cat "$T/make.log"; fail "make BUILD_ID=... failed"; }
	[ "$("$other/etl2evt" --version | sed -n 2p)" = "build other-build-1" ]
	[ "$("$ETLKIT_BIN/etl2evt" --version | sed -n 2p)" != "build other-build-1" ]
	# this build's cache is complete; for the other build nothing is converted
	[ "$(etlkit-run --list-jobs --todo "$T/p.yaml" | wc -l)" -eq 0 ]
	[ "$("$other/etlkit-run" --list-jobs --todo "$T/p.yaml" | wc -l)" -eq 8 ]
	# its merge finds nothing: exit 2, said so, and no output file (never a 0-byte one)
	run "$other/etlkit-run" --merge-only "$T/p.yaml"
	[ "$status" -eq 2 ] || fail "status $status: $output"
	[[ "$output" == *"8 not in the cache"* ]] || fail "$output"
	[[ "$output" == *"cpu.folded: not written: no trace of step cpu has a usable result in the cache"* ]] ||
	    fail "$output"
	[ ! -e "$T/out/cpu.folded" ] && [ ! -e "$T/out/kernel.folded" ]
	# a full run of the other build converts everything, to the same outputs
	run "$other/etlkit-run" -q "$T/p.yaml"
	[ "$status" -eq 0 ]
	[ "$(awk -F'\t' 'NR > 1 && $4 == "converted"' "$T/out/run-report.tsv" | wc -l)" -eq 8 ]
	same_outputs "$(F)/ref/out" "$T/out"
}

@test "scaling cache: --merge-only with some partials missing reports them, exits 1, merges the rest" {
	require_corpus
	local n
	night_copy
	etlkit-run -q --run-job 1 "$T/p.yaml"	# ctf, cpu
	etlkit-run -q --run-job 3 "$T/p.yaml"	# net452, cpu
	run etlkit-run --merge-only "$T/p.yaml"
	[ "$status" -eq 1 ] || fail "status $status: $output"
	[[ "$output" == *"8 trace jobs: 0 converted, 2 reused, 6 not in the cache, 0 skipped, 6 failed,"* ]] ||
	    fail "$output"
	[ "$(grep -c 'not converted yet (--merge-only)' <<<"$output")" -eq 6 ]
	# kernel has no partial at all: not written; cpu has two traces of four
	[[ "$output" == *"kernel.folded: not written"* ]] || fail "$output"
	[ ! -e "$T/out/kernel.folded" ]
	n=$(cut -d';' -f1 "$T/out/cpu.folded" | sort -u | tr '\n' ,)
	[ "$n" = "night ctf,night net452," ] || fail "scenarios in cpu.folded: $n"
	# the two traces' lines are the reference's lines of those scenarios
	grep -E '^night (ctf|net452);' "$(F)/ref/out/cpu.folded" | cmp - "$T/out/cpu.folded"
}

@test "scaling cache: a trace's identity is its content: a copy with another mtime is reused, an edit is not" {
	require_corpus
	night_copy
	cp -a "$(F)/ref/cache" "$T/cache"
	# the synthesised traces are files of the night (not links): copy one with a new mtime
	rm "$T/traces/synth-1.etl"
	cp "$(F)/traces/synth-1.etl" "$T/traces/synth-1.etl"
	touch -d '2030-01-01 00:00:00' "$T/traces/synth-1.etl"
	[ "$(etlkit-run --list-jobs --todo "$T/p.yaml" | wc -l)" -eq 0 ]
	# the same size, one byte changed (in the last buffer's padding or not: content is content)
	python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[-1] ^= 0xff; open(p, "wb").write(b)' \
	    "$T/traces/synth-1.etl"
	touch -d '2030-01-01 00:00:00' "$T/traces/synth-1.etl"
	etlkit-run --list-jobs --todo "$T/p.yaml" | cut -f4,6 >"$T/todo"
	printf 'cpu\t%s\nkernel\t%s\n' "$T/traces/synth-1.etl" "$T/traces/synth-1.etl" | textdiff - "$T/todo"
}

@test "scaling cache: the build ID is a hash of the sources: the tools' --version says it, an edit changes it" {
	local a b
	mkdir -p "$T/src"
	(cd "$ROOT" && git ls-files -co --exclude-standard -- Makefile lib filters) |
		(cd "$ROOT" && xargs tar cf -) | (cd "$T/src" && tar xf -)
	id() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u BUILD_ID make -s -C "$T/src" BIN="$T/bin" \
	    --eval 'print-build-id: ; @echo $(BUILD_ID)' print-build-id; }
	a=$(id)
	[[ "$a" =~ ^[0-9a-f]{16}$ ]] || fail "build ID '$a'"
	# the tools under test were built from these sources
	[ "$(etl2evt --version | sed -n 2p)" = "build $a" ] || fail "etl2evt: $(etl2evt --version), sources: $a"
	# not the paths or times: the same sources elsewhere, touched, give the same ID
	touch -d '2001-01-01' "$T/src/lib/run/jobs.c"
	[ "$(id)" = "$a" ]
	# a one-byte change of one source is another build
	echo "/* */" >>"$T/src/lib/run/jobs.c"
	b=$(id)
	[ "$b" != "$a" ] && [[ "$b" =~ ^[0-9a-f]{16}$ ]] || fail "after an edit: '$b' (before: '$a')"
}

#!/usr/bin/env bash
# make fuzz: builds one libFuzzer harness per parser (tests/fuzz/fuzz_*.c)
# with clang -fsanitize=fuzzer,address,undefined against the lib/*.c
# sources, replays the saved crash reproducers (tests/regress/NAME/*),
# seeds a corpus per harness from the real traces and synthesised input,
# runs each harness for FUZZ_SECONDS and prints one line per harness.
#
# Environment:
#   FUZZ_SECONDS  seconds per harness (default 60; 0 = build and replay only)
#   FUZZ_RUNS     when set, fuzz a fixed number of inputs per harness instead
#                 of a time (libFuzzer -runs), with FUZZ_SEED (default 1) and a
#                 fresh corpus dir: the same commit always gives the same
#                 result.  make check does this; make fuzz runs by time.
#   FUZZ_SEED     libFuzzer -seed with FUZZ_RUNS (default 1)
#   FUZZ_DIR      scratch dir: objects, binaries, corpora, crashes, logs
#                 (default ${TMPDIR:-/tmp}/etlkit-fuzz; never inside the repo)
#   FUZZ_ONLY     space-separated harness names to run (default: all)
#   FUZZ_JOBS     parallel compiles (default: number of cores)
#   FUZZ_OPT      optimisation (default -O1; the CI smoke uses -O0 to build faster)
#   FEATURES      feature-test macro (default -D_GNU_SOURCE, as the Makefile)
#   ETLKIT_BIN    tools used to synthesise seeds when present (etl2evt, etlgen)
#   ETLKIT_CORPUS the real traces (tests/corpus/locate.bash), for seeds
#   FUZZ_HARNESSES, FUZZ_REGRESS  where harnesses and reproducers live
#                 (default tests/fuzz, tests/regress; tests/fuzz.bats points
#                 them elsewhere to check that a crash is caught)
#
# Exit status: 0 nothing found, 1 a harness crashed, leaked, hung or ran out of
# memory (the input is saved under FUZZ_DIR/crashes/), 2 a harness would not build.
# Every run appends "date harness seconds execs result" to FUZZ_DIR/history.log.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
: "${FUZZ_SECONDS:=60}"
: "${FUZZ_RUNS:=}"
: "${FUZZ_SEED:=1}"
: "${FUZZ_DIR:=${TMPDIR:-/tmp}/etlkit-fuzz}"
: "${FUZZ_ONLY:=}"
: "${FUZZ_JOBS:=$(nproc 2>/dev/null || echo 2)}"
: "${ETLKIT_BIN:=$root/bin}"

: "${FUZZ_HARNESSES:=$here/fuzz}"
: "${FUZZ_REGRESS:=$root/tests/regress}"
CC=${FUZZ_CC:-clang}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# the feature-test macro, as the Makefile's FEATURES (make fuzz FEATURES=... passes it on)
: "${FEATURES:=-D_GNU_SOURCE}"
CFLAGS="-g ${FUZZ_OPT:--O1} -std=c11 $FEATURES -I$root/lib -I$root/tests/tools/lib $SAN"
LIBS="-lyaml -lz -lm"
. "$here/corpus/locate.bash"
corpus=$(corpus_dir "$root") || corpus=/nonexistent	# seeds from synthesised input only

case "$FUZZ_DIR" in "$root"/*) echo "fuzz: FUZZ_DIR must be outside the repository" >&2; exit 2 ;; esac
mkdir -p "$FUZZ_DIR"/{obj,bin,seeds,corpus,crashes,logs} || exit 2

# ---- build ---------------------------------------------------------------
# Every lib/*.c becomes an object (a file that does not compile yet is
# reported and left out); harnesses link against an archive of them so a
# broken file only breaks the harnesses that need it.
build_lib() {
	local c o objs=() failed=0
	for c in "$root"/lib/*/*.c; do
		[ -f "$c" ] || continue
		o="$FUZZ_DIR/obj/$(basename "$c" .c).o"
		if [ ! -e "$o" ] || [ "$c" -nt "$o" ] || [ -n "$(find "$root/lib" -name '*.h' -newer "$o" 2>/dev/null)" ]; then
			printf '%s\0%s\0' "$c" "$o"
		fi
	done | xargs -r -0 -n2 -P"$FUZZ_JOBS" sh -c '
		'"$CC"' '"$CFLAGS"' -fsanitize=fuzzer-no-link -c -o "$2.tmp" "$1" 2>"$2.err" && mv "$2.tmp" "$2" ||
		{ echo "fuzz: lib/$(basename "$1") does not compile, left out:" >&2; head -5 "$2.err" >&2; rm -f "$2"; }' sh
	for c in "$root"/lib/*/*.c; do
		o="$FUZZ_DIR/obj/$(basename "$c" .c).o"
		[ -e "$o" ] && objs+=("$o")
	done
	rm -f "$FUZZ_DIR/obj/libfuzz.a"
	ar rcs "$FUZZ_DIR/obj/libfuzz.a" "${objs[@]}"
}

build_harness() {	# NAME
	local src="$FUZZ_HARNESSES/$1.c" exe="$FUZZ_DIR/bin/$1"
	if [ ! -e "$exe" ] || [ "$src" -nt "$exe" ] || [ "$FUZZ_DIR/obj/libfuzz.a" -nt "$exe" ]; then
		$CC $CFLAGS -fsanitize=fuzzer -o "$exe.tmp" "$src" "$FUZZ_DIR/obj/libfuzz.a" $LIBS \
			2>"$FUZZ_DIR/logs/$1.build" && mv "$exe.tmp" "$exe" || {
			echo "fuzz: $1 does not build:" >&2
			head -20 "$FUZZ_DIR/logs/$1.build" >&2
			return 1
		}
	fi
}

# ---- seeds ---------------------------------------------------------------
# Each harness gets small seed files (libFuzzer mutates better from small
# inputs); seeds are regenerated every run, the corpus dir keeps growing.
synth_evt() {
	printf '#evt\t1\tsource=backup.etl\tos_build=17763\tcpus=24\tpointer_size=8\tclock=qpc\tclock_freq=10000000\tstart_utc=2021-03-02T01:00:00.0000000Z\tduration_ms=10000.000000\tevents_lost=0\tbuffers_lost=0\tsample_interval_ms=1\n'
	printf '#skipped\twhat=buffer\tcount=1\tdetail=corrupt at offset 65536\n'
	printf '#removed\tby=evtfilter\treason=idle\tevents=3\tweight_ms=3\n'
	printf '0.104200\tSample\t0\tBackup.exe\t2212\t4100\t1\tip=0x7ff6a1b2c3d4\tprio=8\tntdll.dll!RtlUserThreadStart;kernel32.dll!BaseThreadInitThunk;Backup.exe!0x1c3d4\n'
	printf '0.200000\tDPC\t2\tIdle\t0\t0\t0.2205\troutine=ndis.sys!0x1a2b0\tmodule=ndis.sys\tduration_us=220.500\tend_ms=0.420500\t\n'
	printf '1.500000\tISR\t4\tSystem\t4\t8\t0.012\troutine=storport.sys!RaidpAdapterInterruptRoutine\tmodule=storport.sys\tduration_us=12.000\tend_ms=1.512000\tvector=129\tmsi=1\t\n'
	printf '2.000000\tCSwitch\t1\tapp.exe\t10\t11\t0\told_tid=0\told_pid=0\told_process=Idle\twait_reason=WrQueue\t\n'
	printf -- '-3.250000\tImageDCStart\t-1\tSystem\t4\t-1\t0\tbase=0xfffff80000000000\tsize=0x5e0000\tpath=C:\\Windows\\system32\\ntoskrnl.exe\t\n'
	printf '5.000000\tEvent\t0\tw3wp.exe\t100\t200\t0\tprovider=dd5ef90a-6398-47a4-ad34-4dcecdef795f\tid=21\tp.Url=/a%%3Bb%%25\thex=00ff\t\n'
	printf '6.000000\tSample\t3\tx.exe\t1\t2\t2\tcount=2\tdpc=1\tkframes=1\ta.dll!f(int%%3B char);?!?;nt!KiDpc\r\n'
}
synth_folded() {
	printf 'main;foo;bar 10\nmain;foo 1.5\nmain;baz 3 7\na 1\n ;x 0\n'
	printf 'ntdll.dll!RtlUserThreadStart;kernel32.dll!BaseThreadInitThunk;app.exe!main;app.exe!work 123456\n'
	printf 'java;a::b<c, d>(e f) 99999999999999999999\n'
}
seed_dir() {	# NAME -> prints dir
	local d="$FUZZ_DIR/seeds/$1" i f
	rm -rf "$d"; mkdir -p "$d"
	case "$1" in
	fuzz_evt)
		synth_evt >"$d/synth.evt"
		synth_evt | head -3 >"$d/head.evt"
		if [ -x "$ETLKIT_BIN/etl2evt" ]; then
			i=0
			for f in "$corpus"/*/*.etl "$corpus"/*/*.etl.zip; do
				[ -e "$f" ] || continue
				i=$((i + 1))
				timeout 20 "$ETLKIT_BIN/etl2evt" "$f" 2>/dev/null | head -c 3000 >"$d/etl2evt.$i.evt"
				timeout 20 "$ETLKIT_BIN/etl2evt" "$f" 2>/dev/null | grep -m 20 -v '^#' >"$d/etl2evt.$i.body.evt"
			done
		fi ;;
	fuzz_folded)
		synth_folded >"$d/synth.folded"
		for i in 1 2 3; do
			python3 "$root/tests/tools/gen_folded.py" --size 2K --seed $i >"$d/gen.$i.folded" 2>/dev/null || true
		done ;;
	fuzz_linereader)
		synth_evt >"$d/plain.evt"
		synth_evt | gzip -c >"$d/one.gz"
		{ synth_evt | gzip -c; synth_folded | gzip -c; } >"$d/two-members.gz"
		synth_folded | gzip -c | head -c 60 >"$d/truncated.gz"
		printf 'no newline at end\r' >"$d/cr"
		printf '' >"$d/empty" ;;
	*)
		# harness-specific seeds: tests/fuzz/NAME.seeds is a shell snippet
		# run with $1 (output dir), $corpus, $ETLKIT_BIN, $ETLKIT_ROOT
		if [ -e "$FUZZ_HARNESSES/$1.seeds" ]; then
			corpus="$corpus" ETLKIT_BIN="$ETLKIT_BIN" ETLKIT_ROOT="$root" \
				bash "$FUZZ_HARNESSES/$1.seeds" "$d" >&2 || true
		fi ;;
	esac
	echo "$d"
}

max_len_for() {
	case "$1" in
	fuzz_evt|fuzz_folded) echo 4096 ;;
	fuzz_linereader) echo 16384 ;;
	*) [ -e "$FUZZ_HARNESSES/$1.maxlen" ] && cat "$FUZZ_HARNESSES/$1.maxlen" || echo 65536 ;;
	esac
}

# ---- run -----------------------------------------------------------------
names=()
for src in "$FUZZ_HARNESSES"/fuzz_*.c; do
	n=$(basename "$src" .c)
	if [ -n "$FUZZ_ONLY" ] && ! [[ " $FUZZ_ONLY " == *" $n "* || " $FUZZ_ONLY " == *" ${n#fuzz_} "* ]]; then
		continue
	fi
	names+=("$n")
done
[ ${#names[@]} -gt 0 ] || { echo "fuzz: no harness selected" >&2; exit 2; }

build_lib
status=0
printf '%-18s %6s %10s %8s %6s %7s  %s\n' harness seconds execs exec/s cov rss_mb result
for n in "${names[@]}"; do
	if ! build_harness "$n"; then
		printf '%-18s %6s %10s %8s %6s %7s  %s\n' "$n" - - - - - "BUILD FAILED"
		status=2
		continue
	fi
	exe="$FUZZ_DIR/bin/$n"
	# 1. the saved reproducers must all pass
	reg=()
	if [ -d "$FUZZ_REGRESS/$n" ]; then
		while IFS= read -r f; do reg+=("$f"); done < <(find "$FUZZ_REGRESS/$n" -type f | sort)
	fi
	if [ ${#reg[@]} -gt 0 ]; then
		if ! "$exe" -runs=1 -timeout=60 -rss_limit_mb=1024 -malloc_limit_mb=1024 "${reg[@]}" >"$FUZZ_DIR/logs/$n.regress" 2>&1; then
			printf '%-18s %6s %10s %8s %6s %7s  %s\n' "$n" 0 - - - - "REGRESSION (see $FUZZ_DIR/logs/$n.regress)"
			grep -m3 -E 'ERROR|runtime error|SUMMARY' "$FUZZ_DIR/logs/$n.regress" >&2
			status=1
			continue
		fi
	fi
	[ -n "$FUZZ_RUNS" ] || [ "$FUZZ_SECONDS" -gt 0 ] || { printf '%-18s %6s %10s %8s %6s %7s  %s\n' "$n" 0 - - - - "built, ${#reg[@]} regress ok"; continue; }
	# 2. fuzz
	seeds=$(seed_dir "$n")
	mkdir -p "$FUZZ_DIR/corpus/$n"
	# a grown corpus is re-run in full before fuzzing starts: keep it to the
	# inputs that add coverage (libFuzzer -merge) so short runs still fuzz
	if [ "$(find "$FUZZ_DIR/corpus/$n" -type f | wc -l)" -gt 200 ]; then
		rm -rf "$FUZZ_DIR/corpus/$n.merged"
		mkdir -p "$FUZZ_DIR/corpus/$n.merged"
		if "$exe" -merge=1 -timeout=10 -rss_limit_mb=1024 -max_len="$(max_len_for "$n")" \
		    "$FUZZ_DIR/corpus/$n.merged" "$FUZZ_DIR/corpus/$n" >"$FUZZ_DIR/logs/$n.merge" 2>&1; then
			rm -rf "$FUZZ_DIR/corpus/$n"
			mv "$FUZZ_DIR/corpus/$n.merged" "$FUZZ_DIR/corpus/$n"
		fi
	fi
	log="$FUZZ_DIR/logs/$n.log"
	if [ -n "$FUZZ_RUNS" ]; then
		# deterministic: a fixed count from a fixed seed, on the seeds alone
		# (a corpus grown by earlier runs would change what is tried)
		rm -rf "$FUZZ_DIR/corpus/$n"; mkdir -p "$FUZZ_DIR/corpus/$n"
		budget=(-runs="$FUZZ_RUNS" -seed="$FUZZ_SEED")
	else
		budget=(-max_total_time="$FUZZ_SECONDS")
	fi
	t0=$(date +%s)
	"$exe" "${budget[@]}" -timeout=60 -rss_limit_mb=1024 -malloc_limit_mb=1024 \
		-max_len="$(max_len_for "$n")" -print_final_stats=1 \
		-artifact_prefix="$FUZZ_DIR/crashes/$n-" \
		"$FUZZ_DIR/corpus/$n" "$seeds" >"$log" 2>&1
	rc=$?
	t1=$(date +%s)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
	if [ $rc -eq 0 ]; then
		result=ok
	else
		status=1
		art=$(grep -oE "Test unit written to [^ ]+" "$log" | tail -1 | sed 's/Test unit written to //')
		why=$(grep -m1 -oE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer): [a-zA-Z-]+|runtime error: .*' "$log" | head -1)
		result="FOUND ${why:-exit $rc} -> ${art:-$log}"
	fi
	printf '%-18s %6s %10s %8s %6s %7s  %s\n' "$n" $((t1 - t0)) "${execs:--}" "${rate:--}" "${cov:--}" "${rss:--}" "$result"
	printf '%s %s %s %s %s\n' "$(date -u +%FT%TZ)" "$n" $((t1 - t0)) "${execs:-0}" "$result" >>"$FUZZ_DIR/history.log"
done
exit $status

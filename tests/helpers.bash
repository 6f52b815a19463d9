# Loaded by every tests/*.bats file: `load helpers`.
# ETLKIT_BIN   where the tools are (bin/ or bin/asan/)
# ROOT         the project
# CORPUS       the real traces (tests/corpus/locate.bash: $ETLKIT_CORPUS,
#              ../shared/corpus, or the cache `make corpus` fills); empty
#              when there is none
# CENSUS       the project's expected counts for each corpus trace
# GEN_FOLDED   the deterministic synthetic folded-stack generator
# T            a fresh scratch directory for this test
ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
: "${ETLKIT_BIN:=$ROOT/bin}"
. "$ROOT/tests/corpus/locate.bash"
CORPUS=$(corpus_dir "$ROOT") || CORPUS=""
CENSUS="$ROOT/tests/corpus/census"
GEN_FOLDED="$ROOT/tests/tools/gen_folded.py"
PATH="$ETLKIT_BIN:$PATH"
export ETLKIT_BIN ROOT CORPUS CENSUS GEN_FOLDED PATH

setup() {
	T="$BATS_TEST_TMPDIR"
	if declare -F local_setup >/dev/null; then local_setup; fi
}

# fail MESSAGE: stop the test with a message on bats' output.
fail() {
	echo "$*" >&2
	return 1
}

# Under check-asan the tools are slower; tests that run the whole
# corpus may use this to pick a smaller input.
asan() { [ -n "${ETLKIT_ASAN:-}" ]; }

# The corpus is required: without it the suite must fail, not skip
# (tests/run.sh stops before bats with the same one line).
require_corpus() {
	[ -n "$CORPUS" ] || fail "$CORPUS_HINT"
}

# unzip_member ZIP NAME DEST: extract a member of a zip (python3 stdlib).
unzip_member() {
	python3 -c 'import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); open(sys.argv[3],"wb").write(z.read(sys.argv[2]))' "$1" "$2" "$3"
}

# Our bin/diff shadows diff(1) on PATH: compare text files with this.
textdiff() { /usr/bin/diff "$@"; }

# peak_rss_kb CMD...: runs CMD (stdout to $T/out), prints its peak RSS in kB
# (or minus its exit status when it failed)
peak_rss_kb() {
	python3 -c 'import resource, subprocess, sys
with open(sys.argv[1], "wb") as out:
    rc = subprocess.run(sys.argv[2:], stdout=out).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if rc == 0 else -rc)' "$T/out" "$@"
}

# random_bytes SEED N: N pseudo-random bytes, the same for the same SEED
# (never the system's randomness: a test must give the same result on every run).
random_bytes() {
	python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random(int(sys.argv[1])).randbytes(int(sys.argv[2])))' "$1" "$2"
}

# folded_many_stacks SEED N FILE: N folded lines over 3000 distinct stacks
# of 3-8 frames (no frame twice in a row: recursion would merge stacks),
# counts 1..9, drawn from SEED: the same file on every run.
folded_many_stacks() {
	python3 -c 'import random, sys
rng = random.Random(int(sys.argv[1]))
frames = ["m%d.dll!Ns::F%d" % (i % 13, i) for i in range(400)]
stacks = []
for _ in range(3000):
    s = [rng.choice(frames)]
    for _ in range(rng.randint(2, 7)):
        f = rng.choice(frames)
        while f == s[-1]:
            f = rng.choice(frames)
        s.append(f)
    stacks.append(";".join(s))
with open(sys.argv[3], "w") as f:
    for i in range(int(sys.argv[2])):
        f.write("%s %d\n" % (rng.choice(stacks), 1 + i % 9))' "$1" "$2" "$3"
}

# etl2evt_alike NAME VARIANT... -- ARGS...: etl2evt -j 1 ARGS, then with
# each VARIANT's options instead (e.g. "-j 2", "--buffer-memory=0"): the
# same evt, messages and exit status every time.  The first run's evt and
# messages stay in $T/NAME.evt and $T/NAME.err; its exit status is printed.
etl2evt_alike() {
	local name=$1 ref status v
	local -a variants=()
	shift
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do variants+=("$1"); shift; done
	shift
	set +e
	etl2evt -j 1 "$@" >"$T/$name.evt" 2>"$T/$name.err"
	ref=$?
	for v in "${variants[@]}"; do
		# shellcheck disable=SC2086
		etl2evt $v "$@" >"$T/$name.v.evt" 2>"$T/$name.v.err"
		status=$?
		[ "$status" -eq "$ref" ] || { set -e; fail "$name $v: exit $status, with one thread $ref"; return 1; }
		cmp -s "$T/$name.evt" "$T/$name.v.evt" ||
		    { set -e; fail "$name $v: another evt than with one thread: $(cmp "$T/$name.evt" "$T/$name.v.evt")"; return 1; }
		textdiff "$T/$name.err" "$T/$name.v.err" >"$T/d" ||
		    { set -e; fail "$name $v: other messages: $(head -4 "$T/d")"; return 1; }
	done
	set -e
	echo "$ref"
}

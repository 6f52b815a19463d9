# Loaded by every tests/*.bats file: `load helpers`.
# ETLKIT_BIN   where the tools are (bin/ or bin/asan/)
# SHARED       ../shared beside the project (corpus, docs, tools)
# CORPUS       $SHARED/corpus
# T            a fresh scratch directory for this test
: "${ETLKIT_BIN:=$BATS_TEST_DIRNAME/../bin}"
SHARED="${ETLKIT_SHARED:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)/shared}"
CORPUS="$SHARED/corpus"
PATH="$ETLKIT_BIN:$PATH"
export ETLKIT_BIN SHARED CORPUS PATH

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

# The corpus is required: without it the suite must fail, not skip.
require_corpus() {
	[ -d "$CORPUS" ] || fail "corpus not found at $CORPUS (../shared beside the project)"
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

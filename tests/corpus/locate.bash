# Sourced by tests/run.sh, tests/helpers.bash, tests/fuzz.sh and the
# benchmarks: where the real traces are.
#
# corpus_dir ROOT: prints the corpus directory and returns 0, or returns 1.
# Looked for in this order, the first that holds every file of
# tests/corpus/SOURCES.tsv wins:
#   $ETLKIT_CORPUS (when set, the only place looked at)
#   ROOT/../shared/corpus (the project's shared folder beside the clone)
#   ${XDG_CACHE_HOME:-~/.cache}/etlkit/corpus (where `make corpus` puts it)
#
# CORPUS_HINT is the one line to print when there is none.
CORPUS_HINT="no corpus of real traces: run 'make corpus' (fetches the files listed in tests/corpus/SOURCES.tsv from their public repositories and checks their SHA-256), or set ETLKIT_CORPUS=DIR"

corpus_complete() {	# DIR ROOT
	local f
	[ -d "$1" ] || return 1
	while IFS=$'\t' read -r f _; do
		[ "$f" = file ] && continue
		[ -e "$1/$f" ] || return 1
	done <"$2/tests/corpus/SOURCES.tsv"
}

corpus_dir() {	# ROOT
	local d cands
	if [ -n "${ETLKIT_CORPUS:-}" ]; then
		cands=("$ETLKIT_CORPUS")
	else
		cands=("$1/../shared/corpus" "${XDG_CACHE_HOME:-$HOME/.cache}/etlkit/corpus")
	fi
	for d in "${cands[@]}"; do
		if corpus_complete "$d" "$1"; then
			(cd "$d" && pwd)
			return 0
		fi
	done
	return 1
}

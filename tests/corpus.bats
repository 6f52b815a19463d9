#!/usr/bin/env bats
# The corpus from anywhere: `make corpus` (tests/corpus/fetch.py) fetches
# every file of tests/corpus/SOURCES.tsv, checks its SHA-256 and keeps only
# what matches; the tests find the corpus in ETLKIT_CORPUS, ../shared/corpus
# or that cache, and with none at all stop with one line saying how to get it.
# The downloads are served here by a local mirror laid out as the public
# repositories are (file://), built from the corpus the tests already use.
load helpers

# mirror DIR: SOURCES.tsv's files at REPO/COMMIT/PATH, zip members zipped.
mirror() {
	python3 - "$ROOT/tests/corpus/SOURCES.tsv" "$CORPUS" "$1" <<'PY'
import csv, os, sys, zipfile
src, corpus, out = sys.argv[1:]
for r in csv.DictReader(open(src), delimiter="\t"):
    d = os.path.join(out, r["repository"], r["commit"], r["path"])
    os.makedirs(os.path.dirname(d), exist_ok=True)
    if r["member"] == "-":
        os.symlink(os.path.join(corpus, r["file"]), d)
    else:
        with zipfile.ZipFile(d, "w") as z:
            z.write(os.path.join(corpus, r["file"]), r["member"])
PY
}

@test "corpus: make corpus fetches every listed file, checks it, and a second run keeps them" {
	require_corpus
	mirror "$T/m"
	export ETLKIT_CORPUS_URL="file://$T/m/{repo}/{commit}/{path}"
	run python3 "$ROOT/tests/corpus/fetch.py" "$T/c"
	echo "$output"
	[ "$status" -eq 0 ]
	n=$(($(wc -l <"$ROOT/tests/corpus/SOURCES.tsv") - 1))
	[[ "$output" == *"$n files in $T/c: $n fetched, 0 already there, 0 failed" ]]
	# every file is byte-identical to the SHA-256 the list gives (checked with sha256sum)
	tail -n +2 "$ROOT/tests/corpus/SOURCES.tsv" | awk -F'\t' '{ print $6 "  " $1 }' >"$T/sums"
	(cd "$T/c" && sha256sum -c --quiet "$T/sums")
	run python3 "$ROOT/tests/corpus/fetch.py" "$T/c"
	[[ "$output" == *": 0 fetched, $n already there, 0 failed" ]]
	# and the tests accept it as a corpus
	ETLKIT_CORPUS="$T/c" bash -c ". '$ROOT/tests/corpus/locate.bash'; corpus_dir '$ROOT'" >"$T/found"
	[ "$(cat "$T/found")" = "$T/c" ]
}

@test "corpus: a file whose SHA-256 differs is refused, named, and never kept" {
	require_corpus
	mirror "$T/m"
	f=$(find "$T/m" -name HTTP_Server.etl)
	rm "$f"
	{ head -c 1000 "$CORPUS/tx/HTTP_Server.etl"; printf 'X'; tail -c +1002 "$CORPUS/tx/HTTP_Server.etl"; } >"$f"
	export ETLKIT_CORPUS_URL="file://$T/m/{repo}/{commit}/{path}"
	run python3 "$ROOT/tests/corpus/fetch.py" "$T/c"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"tx/HTTP_Server.etl: SHA-256 of file://"*"not kept"* ]]
	[[ "$output" == *"1 failed" ]]
	[ ! -e "$T/c/tx/HTTP_Server.etl" ]
	[ -z "$(find "$T/c" -name '.fetch-*')" ]
	# an incomplete corpus is no corpus
	run env ETLKIT_CORPUS="$T/c" "$ROOT/tests/run.sh" "$ROOT/tests/evt.bats"
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == "tests: no corpus of real traces: run 'make corpus'"* ]]
}

@test "corpus: with no corpus anywhere, the suite stops with one line saying how to get it" {
	# a clone alone: no ../shared beside it, an empty cache
	git -C "$ROOT" ls-files tests/run.sh tests/corpus | (cd "$ROOT" && xargs tar cf -) | (mkdir -p "$T/clone/x" && cd "$T/clone/x" && tar xf -)
	run env -u ETLKIT_CORPUS XDG_CACHE_HOME="$T/cache" "$T/clone/x/tests/run.sh"
	[ "$status" -eq 2 ]
	[ "$output" = "tests: no corpus of real traces: run 'make corpus' (fetches the files listed in tests/corpus/SOURCES.tsv from their public repositories and checks their SHA-256), or set ETLKIT_CORPUS=DIR" ]
}

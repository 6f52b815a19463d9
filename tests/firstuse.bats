#!/usr/bin/env bats
# What a new user trips over first (issue 15): --help that lists every
# option, an .etl fed to a tool that reads evt, and --symbols pointing at
# nothing.  Each check uses the real thing: the man pages docs/TOOL.1 and
# the corpus traces.
load helpers

# man_long_options TOOL: every long option docs/TOOL.1 documents, one per
# line: those in its SYNOPSIS and those heading an item (the line after .TP
# or .TQ), with roff's "\-\-" unescaped.
man_long_options() {
	awk '/^\.SH/ { syn = ($2 == "SYNOPSIS") }
	    syn || item { print } { item = /^\.T[PQ]/ }' "$ROOT/docs/$1.1" |
	    grep -o '\\-\\-[a-z]\(\\-\|[a-z0-9]\)*' | tr -d '\\' | sort -u
}

# help_lists_man_options TOOL: --help exits 0 on stdout and names every
# long option of the man page.
help_lists_man_options() {
	local opt missing=""
	run "$1" --help
	[ "$status" -eq 0 ] || fail "$1 --help: exit $status"
	for opt in $(man_long_options "$1"); do
		grep -q -- "$opt\\b" <<<"$output" || missing="$missing $opt"
	done
	[ -z "$missing" ] || fail "$1 --help lacks:$missing"
	[ "$(man_long_options "$1" | wc -l)" -ge 5 ] || fail "$1.1: too few options found"
}

@test "etl2evt --help names every long option of etl2evt(1)" {
	help_lists_man_options etl2evt
}

@test "diff --help names every long option of diff(1)" {
	help_lists_man_options diff
}

@test "overweight --help names every long option of overweight(1)" {
	help_lists_man_options overweight
}

@test "stackfold, render, evtfilter, aggregate --help name every long option of their man page" {
	for t in stackfold render evtfilter aggregate; do
		help_lists_man_options "$t"
	done
}

# not_text_once TOOL ARGS...: run on a trace instead of evt, TOOL says once
# what the input is and what to do, and exits 2.
not_text_once() {
	run "$@"
	[ "$status" -eq 2 ] || fail "$*: exit $status, want 2"
	[ "${#lines[@]}" -eq 1 ] || fail "$*: ${#lines[@]} lines on stderr, want 1: $output"
}

@test "a corpus .etl fed to a tool that reads evt: one line, run etl2evt first, exit 2" {
	require_corpus
	etl="$CORPUS/perfview/smallEtlFile.etl"
	want="$etl: this is an ETL file: run etl2evt first"
	for t in stackfold render evtfilter aggregate; do
		not_text_once "$t" "$etl"
		[ "$output" = "$t: $want" ] || fail "$t said: $output"
	done
	not_text_once diff "$etl" "$etl"
	[ "$output" = "diff: $want" ] || fail "diff said: $output"
	not_text_once overweight "$etl" "$etl"
	# by content, not by name: on standard input too
	run sh -c 'stackfold <"$1" 2>&1 >/dev/null' sh "$etl"
	[ "$status" -eq 2 ] && [ "$output" = "stackfold: <stdin>: this is an ETL file: run etl2evt first" ] ||
	    fail "stdin: exit $status: $output"
}

@test "a corpus .etl.zip (and a .diagsession, a zip too) fed to a tool that reads evt: one line, exit 2" {
	require_corpus
	zip="$CORPUS/perfview/ctf-net45-win7.etl.zip"
	cp "$zip" "$T/vs.diagsession"
	for f in "$zip" "$T/vs.diagsession"; do
		for t in stackfold render evtfilter aggregate; do
			not_text_once "$t" "$f"
			[ "$output" = "$t: $f: this is a zip: run etl2evt first" ] || fail "$t said: $output"
		done
		not_text_once diff "$f" "$f"
		[ "$output" = "diff: $f: this is a zip: run etl2evt first" ] || fail "diff said: $output"
	done
}

@test "every corpus .etl is told from text by its first bytes; the evt etl2evt makes of it is not" {
	require_corpus
	n=0
	while IFS= read -r f; do
		run stackfold "$f"
		[ "$status" -eq 2 ] && [[ "$output" == *"this is an ETL file: run etl2evt first" ]] ||
		    fail "$f: exit $status: $output"
		n=$((n + 1))
	done < <(find "$CORPUS" -name '*.etl' | sort)
	[ "$n" -ge 5 ] || fail "only $n corpus .etl files"
	etl2evt "$CORPUS/perfview/smallEtlFile.etl" >"$T/small.evt"
	stackfold "$T/small.evt" >/dev/null
}

# symbols_summary EVT: the summary line etl2evt should print, from the
# #symbols lines of its output (one per image looked up).
symbols_summary() {
	local ok nf mm
	ok=$(grep -c $'^#symbols\t.*\tstatus=resolved\t' "$1")
	nf=$(grep -c $'^#symbols\t.*\tstatus=pdb-not-found\t' "$1")
	mm=$(grep -c $'^#symbols\t.*\tstatus=pdb-mismatch\t' "$1")
	dm=$(grep -c $'^#symbols\t.*\tstatus=pdb-damaged\t' "$1")
	ni=$(grep -c $'^#symbols\t.*\tstatus=no-pdb-id\t' "$1")
	s() { [ "$1" -eq 1 ] || echo s; }
	printf 'etl2evt: symbols: %s' "$ok image$(s "$ok") resolved, $nf PDB$(s "$nf") not found, $mm PDB$(s "$mm") mismatched"
	[ "$dm" -eq 0 ] || printf ', %s damaged' "$dm"
	[ "$ni" -eq 0 ] || printf ', %s' "$ni image$(s "$ni") without a PDB identity"
	echo
}

@test "etl2evt --symbols with a missing directory: one line naming it, exit 2, no output" {
	require_corpus
	z="$CORPUS/perfview/ctf-net45-win7.etl.zip"
	run etl2evt -k Sample --symbols "$T/nowhere" -o "$T/x.evt" "$z"
	[ "$status" -eq 2 ] || fail "exit $status: $output"
	[ "$output" = "etl2evt: --symbols $T/nowhere: No such file or directory" ] || fail "$output"
	[ ! -e "$T/x.evt" ]
	# one missing entry of a ';'-separated path is named too
	mkdir "$T/here"
	run etl2evt -k Sample --symbols "$T/here;$T/gone" -o "$T/x.evt" "$z"
	[ "$status" -eq 2 ] && [ "$output" = "etl2evt: --symbols $T/gone: No such file or directory" ] ||
	    fail "exit $status: $output"
}

@test "etl2evt --symbols on a corpus .etl.zip with its NGEN PDBs: one summary line of what #symbols lists" {
	require_corpus
	mkdir "$T/empty"
	etl2evt -k Sample --symbols "$T/empty" -o "$T/s.evt" "$CORPUS/perfview/ctf-net45-win7.etl.zip" 2>"$T/err"
	want=$(symbols_summary "$T/s.evt")
	[[ "$want" == "etl2evt: symbols: 3 images resolved, "[1-9]*" PDBs not found, 0 PDBs mismatched" ]] || fail "$want"
	[ "$(grep -c ': symbols: [0-9]* image' "$T/err")" -eq 1 ] || fail "$(cat "$T/err")"
	[ "$(tail -1 "$T/err")" = "$want" ] || fail "got: $(tail -1 "$T/err"), want: $want"
}

@test "etl2evt --symbols: PDBs resolved, not found and of another build are counted apart" {
	rc=0; "$BATS_TEST_DIRNAME/scenarios/build-symbols.sh" "$BATS_TEST_DIRNAME/scenarios/kinds.yaml" "$T/sym" \
	    >/dev/null 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || fail "build-symbols.sh: exit $rc (needs clang-cl and lld-link: make deps)"
	# the trace's ndis.sys is another build (age 2) than the PDB; storport.pdb
	# is not there (nor BackupSvc.pdb, which the scenario never builds)
	sed -i 's/^\(image ndis.sys ndis.pdb [0-9A-F-]*\) 1$/\1 2/' "$T/sym/symbols.map"
	grep -q '^image ndis.sys ndis.pdb [0-9A-F-]* 2$' "$T/sym/symbols.map"
	rm "$T/sym/storport.pdb"
	etlgen -o "$T/k.etl" --symbols "$T/sym/symbols.map" "$BATS_TEST_DIRNAME/scenarios/kinds.yaml" 2>/dev/null
	etl2evt --symbols "$T/sym" -o "$T/k.evt" "$T/k.etl" 2>"$T/err"
	grep -q $'^#symbols\timage=ndis.sys\t.*status=pdb-mismatch' "$T/k.evt"
	grep -q $'^#symbols\timage=storport.sys\t.*status=pdb-not-found' "$T/k.evt"
	want=$(symbols_summary "$T/k.evt")
	[[ "$want" == "etl2evt: symbols: 2 images resolved, 2 PDBs not found, 1 PDB mismatched, "[1-9]*" without a PDB identity" ]] ||
	    fail "$want"
	[ "$(tail -1 "$T/err")" = "$want" ] || fail "got: $(tail -1 "$T/err"), want: $want"
}

@test "etl2evt --symbols: one summary line, the per-image lines only with -v (the #symbols lines list them always)" {
	require_corpus
	mkdir "$T/empty"
	z="$CORPUS/perfview/ctf-net45-win7.etl.zip"
	etl2evt -k Sample --symbols "$T/empty" -o "$T/s.evt" "$z" 2>"$T/err"
	want=$(symbols_summary "$T/s.evt")
	[ "$(wc -l <"$T/err")" -eq 1 ] && [ "$(cat "$T/err")" = "$want" ] || fail "$(head -3 "$T/err")"
	# -v: one line per image that #symbols lists as not resolved, in any order, then the summary
	etl2evt -v -k Sample --symbols "$T/empty" -o "$T/v.evt" "$z" 2>"$T/verr"
	cmp "$T/s.evt" "$T/v.evt"
	awk -F'\t' '$1 == "#symbols" && $5 != "status=resolved" { sub(/^image=/, "", $2); print $2 }' "$T/s.evt" | sort >"$T/want"
	[ "$(wc -l <"$T/want")" -gt 100 ]
	sed '$d' "$T/verr" | sed -n 's/^etl2evt: symbols: \([^:]*\): pdb-[a-z-]* .*/\1/p' | sort >"$T/got"
	[ "$(sed '$d' "$T/verr" | wc -l)" -eq "$(wc -l <"$T/want")" ] || fail "$(sed '$d' "$T/verr" | wc -l) lines before the summary"
	textdiff "$T/want" "$T/got"
	[ "$(tail -1 "$T/verr")" = "$want" ]
	# a remote server in the path is named without -v too (it was not contacted)
	etl2evt -k Sample --symbols "$T/empty;srv*$T/empty*https://symbols.invalid/x" -o /dev/null "$z" 2>"$T/rerr"
	[ "$(wc -l <"$T/rerr")" -eq 2 ] && grep -q '^etl2evt: symbols: remote symbol server https://symbols.invalid/x was not contacted' "$T/rerr" ||
	    fail "$(cat "$T/rerr")"
}

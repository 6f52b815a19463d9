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

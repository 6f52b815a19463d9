#!/usr/bin/env bats
# make install PREFIX=... into a temporary prefix, that prefix first on PATH,
# as a user would have it: nothing installed shadows a system command
# (diff, sort, join stay the system's), every tool runs installed from
# another directory, directly (etlkit-TOOL) and through the front command
# (etlkit TOOL), on a real trace; the man pages, the documents they name
# and the example pipeline are installed, and the pipeline runs as installed.
load helpers

setup_file() {
	P="$BATS_FILE_TMPDIR/p"
	# -o all: install what is in $ETLKIT_BIN, never rebuild it with other flags
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$BATS_TEST_DIRNAME/.." -o all \
	    BIN="$ETLKIT_BIN" install PREFIX="$P" >"$BATS_FILE_TMPDIR/log" 2>&1 ||
		{ cat "$BATS_FILE_TMPDIR/log" >&2; return 1; }
}

local_setup() {
	P="$BATS_FILE_TMPDIR/p"
	# the installed prefix first, and never the build tree's bin/
	PATH="$P/bin:$(tr ':' '\n' <<<"$PATH" | grep -vxF "$ETLKIT_BIN" | paste -sd:)"
	export PATH
	mkdir -p "$T/elsewhere"
	cd "$T/elsewhere"
}

# The tools in the design, and the name each is installed under.
TOOLS="etl2evt evtfilter stackfold aggregate diff overweight render etlkit-run"
link_name() { case $1 in etlkit-*) echo "$1" ;; *) echo "etlkit-$1" ;; esac; }
VERSION=$(sed -n 's/^VERSION *= *//p' "$BATS_TEST_DIRNAME/../Makefile")

@test "install: PREFIX/bin holds only etlkit and etlkit-*, none of them a system command's name" {
	local f b d bad=""
	for f in "$P"/bin/*; do
		b=$(basename "$f")
		case $b in etlkit|etlkit-*) ;; *) bad="$bad $b(not etlkit-prefixed)" ;; esac
		for d in /usr/bin /bin /usr/sbin /sbin /usr/local/bin; do
			[ ! -e "$d/$b" ] || bad="$bad $b(also $d/$b)"
		done
	done
	[ -z "$bad" ] || fail "bad:$bad"
	[ "$(ls "$P/bin" | wc -l)" -eq 9 ]
}

@test "install: with the prefix first on PATH, diff, sort and join are still the system's and work" {
	local c
	for c in diff sort join; do
		[[ "$(command -v "$c")" != "$P"/* ]] || fail "$c resolves to $(command -v "$c")"
	done
	printf 'a\nb\n' >x
	printf 'a\nc\n' >y
	run diff -u x y
	[ "$status" -eq 1 ]
	[[ "$output" == *"-b"*"+c"* ]]
	[ "$(printf 'b 2\na 1\n' | sort | join - <(printf 'a x\nb y\n') | tr '\n' ' ')" = "a 1 x b 2 y " ]
}

@test "install: every tool runs from another directory, as etlkit-TOOL and as etlkit TOOL" {
	local t l bad=""
	for t in $TOOLS; do
		l=$(link_name "$t")
		[ -x "$P/libexec/etlkit/$t" ] || { bad="$bad $t(not in libexec)"; continue; }
		# a tool names itself as it was run: etlkit-diff, never diff(1)'s name
		[ "$("$l" --version | head -1)" = "$l (etlkit) $VERSION" ] || bad="$bad $l(--version: $("$l" --version 2>&1))"
		[ "$(etlkit "${t#etlkit-}" --version | head -1)" = "$l (etlkit) $VERSION" ] || bad="$bad etlkit ${t#etlkit-}"
		"$l" --help >/dev/null || bad="$bad $l(--help)"
	done
	[ "$(etlkit --version | head -1)" = "etlkit (etlkit) $VERSION" ] || bad="$bad etlkit(--version)"
	[ "$(etlkit --exec-path)" = "$P/libexec/etlkit" ] || bad="$bad etlkit(--exec-path $(etlkit --exec-path))"
	[ -z "$bad" ] || fail "bad:$bad"
	run etlkit sh -c true
	[ "$status" -eq 2 ]
	[[ "$output" == "etlkit: 'sh' is not an etlkit tool"* ]]
	# an unknown option is the tool's message, named as installed
	run etlkit-diff --no-such-option
	[ "$status" -eq 2 ]
	[[ "$output" == "etlkit-diff: "* ]]
}

@test "install: the installed tools decode, fold, render and compare a real trace" {
	require_corpus
	etlkit-etl2evt -k Sample "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >net.evt
	# 79,528 samples in the census, every one a line
	[ "$(grep -vc '^#' net.evt)" -eq 79528 ]
	etlkit evtfilter net.evt | etlkit-stackfold --preset=module >net.folded
	etlkit-render flame net.folded >net.svg
	grep -q '</svg>' net.svg
	etlkit diff net.folded net.folded >d.folded
	etlkit-overweight net.folded net.folded >ow.txt
	etlkit aggregate net.folded net.folded >agg.folded
	# the same stacks twice: twice the weight, checked with awk
	want=$(awk '{ s += $NF } END { printf "%d", 2 * s }' net.folded)
	[ "$(awk '{ s += $NF } END { printf "%d", s }' agg.folded)" = "$want" ]
}

@test "install: the example pipeline runs as installed, beside the traces" {
	require_corpus
	cp "$P/share/etlkit/pipelines/cpu.yaml" .
	ln -s "$CORPUS/perfview/net.4.5.2.x64.etl.zip" "$CORPUS/perfview/ctf-net45-win7.etl.zip" .
	run etlkit-run cpu.yaml
	echo "$output"
	[ "$status" -eq 0 ]
	[ -s etlkit-report/cpu.svg ] && [ -s etlkit-report/cpu-byname.tsv ]
	grep -q '^net.4.5.2.x64;' etlkit-report/cpu.folded
	grep -q '^ctf-net45-win7;' etlkit-report/cpu.folded
	# the same pipeline through the front command: nothing left to convert
	run etlkit run cpu.yaml
	[ "$status" -eq 0 ]
	[[ "$output" == *"0 converted"* ]]
}

@test "install: a man page per command, and every document or pipeline a page names is installed" {
	local t l m f bad=""
	for t in $TOOLS; do
		l=$(link_name "$t")
		[ -s "$P/share/man/man1/$l.1" ] || bad="$bad $l.1(missing)"
	done
	[ -s "$P/share/man/man1/etlkit.1" ] || bad="$bad etlkit.1(missing)"
	for m in "$P"/share/man/man1/*.1; do
		# every path under the prefix that a page names exists
		for f in $(grep -oE "$P/share/[A-Za-z0-9_./-]+" "$m" | sed 's/[.,)]*$//' | sort -u); do
			[ -e "$f" ] || bad="$bad $(basename "$m")->$f"
		done
		! grep -qE '(^|[^/a-z])docs/[a-z-]+\.md' "$m" || bad="$bad $(basename "$m")(names docs/ of the source tree)"
	done
	[ -z "$bad" ] || fail "bad:$bad"
	[ -s "$P/share/doc/etlkit/evt-format.md" ]
}

@test "install: make uninstall removes what make install put there" {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$ROOT" -o all BIN="$ETLKIT_BIN" \
	    install PREFIX="$T/q" >/dev/null
	[ -x "$T/q/bin/etlkit-diff" ]
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$ROOT" -o all BIN="$ETLKIT_BIN" \
	    uninstall PREFIX="$T/q" >/dev/null
	[ -z "$(find "$T/q" -type f -o -type l)" ] || fail "left: $(find "$T/q" -type f -o -type l)"
}

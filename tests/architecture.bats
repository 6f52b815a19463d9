#!/usr/bin/env bats
# The structure docs/architecture.md promises, checked on the sources
# (tests/tools/check_layers.py reads them as text): lib/ in layer folders,
# a layer includes only itself and lower layers, no include cycles, no
# export that nothing else uses, and an architecture page that names every
# file and no file that is gone.  Each check is also shown to catch a
# violation planted in a copy of the tree, so none of them can pass vacuously.
load helpers

CHECK="$ROOT/tests/tools/check_layers.py"

# copy_tree: the tracked sources into $T/src, to plant violations in.
copy_tree() {
	mkdir -p "$T/src"
	(cd "$ROOT" && git ls-files -co --exclude-standard -- lib filters tests/fuzz docs) |
		(cd "$ROOT" && xargs tar cf -) | (cd "$T/src" && tar xf -)
}

# passes CHECK: the check CHECK finds nothing wrong in the real tree.
passes() {
	run python3 "$CHECK" "$ROOT" "$1"
	[ "$status" -eq 0 ] || fail "$1: $output"
}

@test "architecture: every lib source is in a layer folder" {
	passes folders
}

@test "architecture: a layer includes only itself and the layers below it" {
	passes layers
}

@test "architecture: no include cycles between lib files" {
	passes cycles
}

@test "architecture: every function a lib header declares is used outside its file" {
	passes exports
}

@test "architecture: docs/architecture.md names every lib file, and only files that exist" {
	passes docs
}

@test "architecture: each check catches a planted violation" {
	copy_tree
	# a base file reaching up into report
	printf '#include "report/flame.h"\n' >>"$T/src/lib/base/cli.c"
	run python3 "$CHECK" "$T/src" layers
	[ "$status" -eq 1 ] && grep -q 'lib/base/cli.c (base) includes "report/flame.h"' <<<"$output" || fail "layers: $output"
	# a sibling include: stacks and etl never include each other
	printf '#include "etl/etl.h"\n' >>"$T/src/lib/stacks/pattern.c"
	run python3 "$CHECK" "$T/src" layers
	grep -q 'lib/stacks/pattern.c (stacks) includes "etl/etl.h"' <<<"$output" || fail "siblings: $output"
	# a file outside the folders
	printf 'int stray_fn(void);\n' >"$T/src/lib/stray.h"
	run python3 "$CHECK" "$T/src" folders
	[ "$status" -eq 1 ] && grep -q 'lib/stray.h' <<<"$output" || fail "folders: $output"
	# a cycle inside one layer
	printf '#include "base/cli.h"\n' >>"$T/src/lib/base/outbuf.h"
	printf '#include "base/outbuf.h"\n' >>"$T/src/lib/base/cli.h"
	run python3 "$CHECK" "$T/src" cycles
	[ "$status" -eq 1 ] && grep -q 'lib/base/cli -> lib/base/outbuf -> lib/base/cli\|lib/base/outbuf -> lib/base/cli -> lib/base/outbuf' <<<"$output" || fail "cycles: $output"
	# an export nobody else calls
	printf 'int escape_unused_helper(int x);\n' >>"$T/src/lib/base/escape.h"
	run python3 "$CHECK" "$T/src" exports
	[ "$status" -eq 1 ] && grep -q 'escape_unused_helper' <<<"$output" || fail "exports: $output"
	# a page naming a file that is gone, and a new file it does not name
	printf '\n`lib/base/gone.c`\n' >>"$T/src/docs/architecture.md"
	printf '/* new */\n' >"$T/src/lib/evt/unnamed_module.c"
	run python3 "$CHECK" "$T/src" docs
	[ "$status" -eq 1 ] && grep -q 'lib/base/gone.c, which does not exist' <<<"$output" &&
		grep -q 'lib/evt/unnamed_module.c: not named' <<<"$output" || fail "docs: $output"
}

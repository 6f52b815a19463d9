#!/usr/bin/env bats
# etl2evt's traces and the PDBs it reads are mapped through lib/base/mapfile
# (as diff's folded files are: tests/diff_mapped.bats), so:
#  - a trace cut shorter by another process while etl2evt reads it gives one
#    line naming it and exit 2, never a SIGBUS (ordered by the output pipe:
#    etl2evt is blocked writing when the trace is cut, not raced);
#  - an input that is not a regular file (a FIFO, /dev/stdin on a pipe, a
#    shell's <(...)) is copied to a temporary file as stdin is, and decodes
#    as stdin does; a directory is refused naming it;
#  - a PDB path that is a directory or a FIFO is reported and passed over
#    (pdb-damaged, frames keep module!0xRVA, exit 0 as for any PDB
#    problem), never opened, so never waited for; one cut shorter while
#    etl2evt uses it is named on one line, exit 2.
load helpers

# background jobs left by a test that ended early (a writer blocked on its
# FIFO) are killed, so that bats does not wait for them
bgs=()
teardown() { local p; for p in "${bgs[@]}"; do kill "$p" 2>/dev/null || true; done; }

# cut_while_read CUT ARGS...: etl2evt ARGS writes into a FIFO; once its
# first byte is out (it writes: its inputs are mapped and read), file CUT
# is emptied, then the rest read.  $st gets its status, $got the bytes
# that came; its one message must name CUT.
cut_while_read() {
	local cut=$1
	shift
	mkfifo "$T/out.fifo"
	st=0
	etl2evt "$@" >"$T/out.fifo" 2>"$T/err" &
	bgs+=($!)
	exec 7<"$T/out.fifo"
	head -c 1 <&7 >/dev/null
	: >"$cut"
	got=$(cat <&7 | wc -c)
	exec 7<&-
	wait "${bgs[-1]}" || st=$?
	[ "$st" -eq 2 ] || fail "status $st (135: killed by SIGBUS), $got bytes: $(cat "$T/err")"
	[ "$(cat "$T/err")" = "etl2evt: $cut: the file became shorter while it was read (another process changed it)" ] ||
	    fail "message: $(cat "$T/err")"
}

@test "a trace cut shorter while etl2evt reads it: one line naming it, exit 2, no SIGBUS" {
	# uncompressed: its buffers are read in place through the mapping
	etlgen --no-compress --repeat 20 -o "$T/big.etl" "$BATS_TEST_DIRNAME/scenarios/cswitch.yaml" 2>/dev/null
	[ "$(stat -c %s "$T/big.etl")" -gt 3000000 ]
	# its evt is four times what the pipe and etl2evt's buffers hold: blocked mid-way
	[ "$(etl2evt "$T/big.etl" 2>/dev/null | wc -c)" -gt 10000000 ]
	cut_while_read "$T/big.etl" "$T/big.etl"
	[ "$got" -lt 10000000 ] || fail "the whole output came: the cut was not seen"
}

@test "forty traces merged, the last cut shorter while read: named (the guard keeps every mapping)" {
	# 39 small ones and a large last one: its events go on long after the
	# others end, so reading ahead cannot have taken them all when it is cut
	etlgen --no-compress -o "$T/t.etl" "$BATS_TEST_DIRNAME/scenarios/cswitch.yaml" 2>/dev/null
	for i in $(seq -w 1 39); do cp "$T/t.etl" "$T/t$i.etl"; done
	etlgen --no-compress --repeat 20 -o "$T/t40.etl" "$BATS_TEST_DIRNAME/scenarios/cswitch.yaml" 2>/dev/null
	cut_while_read "$T/t40.etl" "$T"/t[0-9]*.etl
}

# same_as_stdin EVT STATUS ERR NAME: the decode of an input named NAME is
# the one of stdin: lines (but the header's source=), status and messages.
same_as_stdin() {
	cmp <(sed 1d "$T/stdin.evt") <(sed 1d "$1") || fail "$4: the lines differ from stdin's"
	[ "$2" -eq "$(cat "$T/stdin.st")" ] || fail "$4: status $2, stdin's $(cat "$T/stdin.st")"
	sed "s|^etl2evt: $4:|etl2evt: -:|" "$3" | textdiff "$T/stdin.err" - || fail "$4: messages"
	head -1 "$1" | grep -qP "\tsource=\Q$4\E\t" || fail "$4: source= is not its name"
}

@test "a FIFO, /dev/stdin on a pipe and <(...) decode as stdin does; a directory is refused" {
	etlgen -o "$T/k.etl" "$BATS_TEST_DIRNAME/scenarios/kinds.yaml" 2>/dev/null
	st=0
	etl2evt - <"$T/k.etl" >"$T/stdin.evt" 2>"$T/stdin.err" || st=$?
	echo "$st" >"$T/stdin.st"
	sed -i 's|^etl2evt: stdin:|etl2evt: -:|' "$T/stdin.err"
	# the scenario has samples and kinds enough that a lost event would show
	[ "$(grep -c $'\tSample\t' "$T/stdin.evt")" -gt 50 ]
	# a named pipe with a writer
	mkfifo "$T/in.fifo"
	cat "$T/k.etl" >"$T/in.fifo" &
	bgs+=($!)
	st=0
	timeout 60 etl2evt "$T/in.fifo" >"$T/fifo.evt" 2>"$T/fifo.err" || st=$?
	[ "$st" -ne 124 ] || fail "etl2evt on a FIFO hung"
	same_as_stdin "$T/fifo.evt" "$st" "$T/fifo.err" "$T/in.fifo"
	# /dev/stdin when stdin is a pipe (mapping it would fail; reading it at an offset too)
	st=0
	cat "$T/k.etl" | etl2evt /dev/stdin >"$T/dev.evt" 2>"$T/dev.err" || st=$?
	same_as_stdin "$T/dev.evt" "$st" "$T/dev.err" /dev/stdin
	# a process substitution: /dev/fd/N, a pipe
	st=0
	etl2evt <(cat "$T/k.etl") >"$T/sub.evt" 2>"$T/sub.err" || st=$?
	name=$(head -1 "$T/sub.evt" | tr '\t' '\n' | sed -n 's/^source=//p')
	[[ "$name" == /dev/fd/* || "$name" == /proc/self/fd/* ]] || fail "source=$name"
	same_as_stdin "$T/sub.evt" "$st" "$T/sub.err" "$name"
	# a gzip-compressed trace through a FIFO: inflated from the copy
	gzip -c "$T/k.etl" >"$T/k.etl.gz"
	mkfifo "$T/gz.fifo"
	cat "$T/k.etl.gz" >"$T/gz.fifo" &
	bgs+=($!)
	st=0
	timeout 60 etl2evt "$T/gz.fifo" >"$T/gz.evt" 2>"$T/gz.err" || st=$?
	same_as_stdin "$T/gz.evt" "$st" "$T/gz.err" "$T/gz.fifo"
	# a directory: no trace, named
	run etl2evt "$T"
	[ "$status" -eq 2 ]
	[ "$output" = "etl2evt: $T: a directory, not a trace" ]
}

CPPCON="$CORPUS/perfview/CppCon.pdb"
CPPCON_KEY=12DC0A4FBD7D4F2AA9BE263BACAEB4675

# A trace whose CppCon.exe has CppCon.pdb's identity, with a sample at the
# first byte of each of its procedures: $T/cpp.etl, and $T/want, the frames
# they must get from the PDB (pdbdump's own lookups: an independent reader
# of the same file).
cppcon_trace() {
	require_corpus
	pdbdump -S "$CPPCON" | awk '$1 ~ /PROC32/ { sub(/^rva=/, "", $3); print $3 }' | sort -u >"$T/rvas"
	[ "$(wc -l <"$T/rvas")" -ge 40 ]
	{
		printf 'machine: {cpus: 1, duration_ms: 300}\nprocesses:\n  - name: CppCon.exe\n    pid: 1000\n'
		printf "    images:\n      - {path: '\\\\Device\\\\HarddiskVolume2\\\\app\\\\CppCon.exe', base: 0x140000000,\n"
		printf "         size: 0x100000, pdb: 'C:\\\\build\\\\CppCon.pdb', guid: 12dc0a4f-bd7d-4f2a-a9be-263bacaeb467, age: 5}\n"
		printf '    threads:\n      - {tid: 1004}\nevents:\n'
		awk '{ printf "  - {kind: Sample, t_ms: %d, cpu: 0, tid: 1004, stack: [CppCon.exe+%s]}\n", NR, $1 }' "$T/rvas"
	} >"$T/cpp.yaml"
	etlgen -o "$T/cpp.etl" "$T/cpp.yaml" 2>/dev/null || fail "etlgen"
	pdbdump -r "$CPPCON" <"$T/rvas" | sed -E 's/^0x[0-9a-f]+\t/CppCon.exe!/; s/\+0x0$//' >"$T/want"
	sed 's/^0x/CppCon.exe!0x/' "$T/rvas" >"$T/want.rva"
}

# frames EVT: the sample stacks of EVT, one a line
frames() { awk -F'\t' '$2 == "Sample" { print $NF }' "$1"; }

@test "a PDB path that is a directory or a FIFO is reported and passed over, never waited for" {
	cppcon_trace
	dir="$T/sym/CppCon.pdb/$CPPCON_KEY"
	mkdir -p "$dir"
	# the real PDB there: every sample named (the trace and the path are right)
	cp "$CPPCON" "$dir/CppCon.pdb"
	etl2evt --symbols "$T/sym" -o "$T/ok.evt" "$T/cpp.etl" 2>/dev/null
	frames "$T/ok.evt" | textdiff "$T/want" - || fail "not named through the PDB"
	for kind in directory fifo; do
		rm -rf "$dir/CppCon.pdb"
		if [ "$kind" = directory ]; then mkdir "$dir/CppCon.pdb"; else mkfifo "$dir/CppCon.pdb"; fi
		st=0
		timeout 60 etl2evt --symbols "$T/sym" -o "$T/$kind.evt" "$T/cpp.etl" 2>"$T/$kind.err" || st=$?
		[ "$st" -ne 124 ] || fail "$kind: etl2evt waited on the PDB path"
		[ "$st" -eq 0 ] || fail "$kind: status $st: $(cat "$T/$kind.err")"
		frames "$T/$kind.evt" | textdiff "$T/want.rva" - || fail "$kind: frames are not CppCon.exe!0xRVA"
		why=$([ "$kind" = directory ] && echo "a directory, not a PDB file" || echo "not a regular file")
		grep -P '^#symbols\timage=CppCon.exe\t' "$T/$kind.evt" | grep -P "\tstatus=pdb-damaged\t" |
		    grep -qF "detail=$dir/CppCon.pdb: $why" || fail "$kind: #symbols: $(grep '^#symbols' "$T/$kind.evt")"
		grep -q "^etl2evt: symbols: 0 images resolved, .*1 damaged" "$T/$kind.err" ||
		    fail "$kind: summary: $(cat "$T/$kind.err")"
	done
}

# $T/dense.etl: 28000 samples of CppCon.exe, 0.01 ms apart: 20000 at one
# address (some 2.3 MB of evt), then 8000 cycling through every byte of its
# 49 procedures (3765 addresses): lookups of new addresses begin after more
# evt than etl2evt's buffers (its writing thread's too) and a pipe hold.
cppcon_dense_trace() {
	require_corpus
	pdbdump -S "$CPPCON" | awk '$1 ~ /PROC32/ { sub(/^rva=/, "", $3); sub(/^size=/, "", $4); print $3, $4 }' |
	    sort -u | python3 -c '
import sys
for l in sys.stdin:
    r, n = l.split()
    for i in range(int(n)): print("0x%x" % (int(r, 16) + i))' >"$T/addrs"
	[ "$(wc -l <"$T/addrs")" -gt 3000 ]
	{
		printf 'machine: {cpus: 1, duration_ms: 100}\nprocesses:\n  - name: CppCon.exe\n    pid: 1000\n'
		printf "    images:\n      - {path: '\\\\Device\\\\HarddiskVolume2\\\\app\\\\CppCon.exe', base: 0x140000000,\n"
		printf "         size: 0x100000, pdb: 'C:\\\\build\\\\CppCon.pdb', guid: 12dc0a4f-bd7d-4f2a-a9be-263bacaeb467, age: 5}\n"
		printf '    threads:\n      - {tid: 1004}\nevents:\n'
		awk '{ a[NR] = $1 } END { for (k = 1; k <= 28000; k++)
		    printf "  - {kind: Sample, t_ms: %.2f, cpu: 0, tid: 1004, stack: [CppCon.exe+%s]}\n", k * 0.01,
		    k <= 20000 ? a[1] : a[(k - 20001) % NR + 1] }' "$T/addrs"
	} >"$T/dense.yaml"
	etlgen -o "$T/dense.etl" "$T/dense.yaml" 2>/dev/null || fail "etlgen"
}

@test "a PDB cut shorter while etl2evt uses it: one line naming it, exit 2, no SIGBUS" {
	cppcon_dense_trace
	dir="$T/sym/CppCon.pdb/$CPPCON_KEY"
	mkdir -p "$dir"
	cp "$CPPCON" "$dir/CppCon.pdb"
	chmod u+w "$dir/CppCon.pdb"
	# whole, the PDB names every sample
	etl2evt --symbols "$T/sym" "$T/dense.etl" 2>/dev/null | frames /dev/stdin >"$T/all"
	[ "$(wc -l <"$T/all")" -eq 28000 ] && ! grep -q '!0x' "$T/all" || fail "not every sample named"
	# the first sample opens the PDB, long before etl2evt's first bytes reach
	# the pipe; it is cut while etl2evt waits to write, with new addresses to come
	cut_while_read "$dir/CppCon.pdb" --symbols "$T/sym" "$T/dense.etl"
}

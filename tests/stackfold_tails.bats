#!/usr/bin/env bats
# stackfold on evt: a Sample line whose tail (the bytes after the time,
# less ip=) was seen before replays that line's outcome instead of being
# parsed (lib/stacks/stacks.c, struct tails).  Each case runs a file as
# it is, where most tails repeat, and the same file with a unique n=
# attribute after the weight of every Sample line, which stackfold does
# not read: no tail repeats, every line is parsed.  The two must agree
# byte for byte (output and stderr), and the totals must be what an awk
# over the evt counts.
load helpers

# every Sample line gets an attribute of its own (its line number)
unique_tails() {
	awk -F'\t' -v OFS='\t' '$2 == "Sample" { $7 = $7 "\tn=" NR } { print }' "$1"
}
# Sample lines stackfold keeps: not the Idle process's, unless in a DPC or ISR
kept_samples() {
	awk -F'\t' '$2 == "Sample" && ($0 ~ /\t(dpc|isr)=1\t/ || !($5 == 0 || tolower($4) == "idle")) { n++ }
	    END { print n + 0 }' "$1"
}
total() { awk '{ s += $NF } END { printf "%d\n", s }' "$1"; }
# stackfold OPTIONS... on FILE and on its unique-tail copy: same bytes out and err
same_both_ways() {
	local f=$1; shift
	unique_tails "$f" >"$T/uniq.evt"
	stackfold "$@" "$f" >"$T/a.out" 2>"$T/a.err" || [ $? -eq 1 ]
	stackfold "$@" "$T/uniq.evt" >"$T/b.out" 2>"$T/b.err" || [ $? -eq 1 ]
	# the file names differ in messages; nothing else may
	sed -i "s#$T/uniq.evt#$f#g" "$T/b.err"
	cmp "$T/a.out" "$T/b.out" || fail "output differs with $*: $(textdiff "$T/a.out" "$T/b.out" | head -5)"
	cmp "$T/a.err" "$T/b.err" || fail "stderr differs with $*: $(textdiff "$T/a.err" "$T/b.err" | head -5)"
}

@test "corpus net.4.5.2.x64: repeated Sample tails fold as parsed ones, every option family" {
	require_corpus
	etl2evt -k Sample -o "$T/net.evt" "$CORPUS/perfview/net.4.5.2.x64.etl.zip"
	# the census's SampledProfile count: all are read
	want=$(awk '/SampledProfile/ { print $1 }' "$CENSUS/perfview-net.4.5.2.x64.txt")
	[ "$(grep -c '	Sample	' "$T/net.evt")" -eq "$want" ]
	# most tails repeat (the Idle process's): the replay is what runs
	[ "$(cut -f2- "$T/net.evt" | sed 's/	ip=[^	]*//' | sort -u | wc -l)" -lt $((want / 10)) ]
	for o in "" "--kernel --roots=thread" "--roots=pid" "--keep-idle" "--unit=us" \
	    "--by-name --tsv" "--exclude=ntoskrnl" "--preset=module-entries" "-s"; do
		# shellcheck disable=SC2086
		same_both_ways "$T/net.evt" $o
	done
	stackfold -o "$T/f" "$T/net.evt" 2>/dev/null
	[ "$(total "$T/f")" -eq "$(kept_samples "$T/net.evt")" ]
	stackfold --keep-idle -o "$T/f" "$T/net.evt" 2>/dev/null
	[ "$(total "$T/f")" -eq "$want" ]
}

@test "synthesised DPC-heavy trace: Idle and busy samples among DPC and ISR lines" {
	etlgen --no-compress tests/scenarios/backup-incident.yaml -o "$T/b.etl" >/dev/null
	etl2evt -o "$T/b.evt" "$T/b.etl"
	same_both_ways "$T/b.evt"
	same_both_ways "$T/b.evt" --kernel -s
	stackfold -o "$T/f" "$T/b.evt" 2>/dev/null
	[ "$(total "$T/f")" -eq "$(kept_samples "$T/b.evt")" ]
}

@test "a tail seen under one header is not replayed under another (scenario root, pointer size)" {
	for s in one two; do
		{ printf '#evt\t1\tsource=t\tpointer_size=%s\tscenario=%s\n' \
		    "$([ $s = one ] && echo 8 || echo 4)" $s
		  for i in 1 2 3; do
			printf '0.%d\tSample\t0\ta.exe\t7\t8\t1\tip=0x%d\tkframes=1\ta.exe!main;nt!k\n' $i $i
		  done; } >"$T/$s.evt"
	done
	stackfold --roots=process "$T/one.evt" "$T/two.evt" >"$T/f"
	printf 'one;Process64 a (7);a.exe!main;nt!k 3\ntwo;Process32 a (7);a.exe!main;nt!k 3\n' >"$T/want"
	cmp "$T/f" "$T/want" || fail "$(cat "$T/f")"
}

@test "deep stacks cut the same way, and counted once per line, when their tails repeat" {
	frames=$(awk 'BEGIN { for (i = 0; i < 5000; i++) printf "%sm!f%d", i ? ";" : "", i }')
	{ printf '#evt\t1\tsource=t\n'
	  for i in 1 2 3 4; do
		printf '0.%d\tSample\t1\ta.exe\t7\t8\t1\tip=0x1\tkframes=4990\t%s\n' $i "$frames"
	  done; } >"$T/deep.evt"
	same_both_ways "$T/deep.evt" --kernel
	# each of the four keeps 2048 + 2047 of its 5000 frames: 905 elided
	grep -q ':2: 4 stacks deeper than 4096 frames: 3620 frames elided' "$T/a.err" ||
	    fail "$(cat "$T/a.err")"
	[ "$(total "$T/a.out")" -eq 4 ]
}

@test "bad lines among repeated tails are still named: the time is checked on every line" {
	{ printf '#evt\t1\tsource=t\n'
	  printf '0.1\tSample\t1\tIdle\t0\t0\t1\tip=0x1\tnt!idle\n'
	  printf 'x.2\tSample\t1\tIdle\t0\t0\t1\tip=0x1\tnt!idle\n'
	  printf '0.3\tSample\t1\tIdle\t0\t0\t1\tip=0x1\tnt!idle\n'
	  printf '0.4\tSample\t1\ta.exe\t7\t8\t1\tip=0x1\tkframes=x\tnt!idle\n'; } >"$T/bad.evt"
	run stackfold -s "$T/bad.evt"
	[ "$status" -eq 1 ]
	[[ "$output" == *":3: time column is not a decimal number"* ]]
	[[ "$output" == *":5: kframes= is not a non-negative integer"* ]]
	[[ "$output" == *"Idle 2 events"* ]]
}

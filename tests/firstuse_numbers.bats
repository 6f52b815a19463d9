#!/usr/bin/env bats
# What a new user trips over (issue 15), numbers and exits: the progress
# line's rate, the exit status when inputs are unreadable, and the
# attributes docs/evt-format.md promises for each kind of line.
load helpers

# on_tty [--slow FILE] CMD...: runs CMD with stderr on a pseudo-terminal
# (progress is drawn only on a terminal) and stdout to /dev/null; prints
# what the terminal received, one progress update a line.  With --slow,
# FILE is fed to CMD's stdin through a pipe over about two seconds, so
# that the run lasts long enough for a rate to be measured.
on_tty() {
	python3 -c '
import os, pty, sys, time
args = sys.argv[1:]
slow = None
if args[0] == "--slow":
    slow, args = args[1], args[2:]
if slow:
    rd, wr = os.pipe()
pid, fd = pty.fork()
if pid == 0:
    if slow:
        os.dup2(rd, 0)
        os.close(wr)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.execvp(args[0], args)
if slow:
    os.close(rd)
    data = open(slow, "rb").read()
    step = len(data) // 40 + 1
    for i in range(0, len(data), step):
        os.write(wr, data[i:i + step])
        time.sleep(0.05)
    os.close(wr)
out = b""
while True:
    try:
        b = os.read(fd, 65536)
    except OSError:
        break
    if not b:
        break
    out += b
os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace").replace("\r", "\n"))' "$@"
}

# check_progress TOOL FILE: every update in FILE is "TOOL: [NN% ]X.Y MB
# [R MB/s ]" and every rate is below a generous bound; prints the rates.
check_progress() {
	python3 -c '
import re, sys
tool, path = sys.argv[1], sys.argv[2]
line_re = re.compile(r"^%s: (?:[ 0-9]{3}%% )?\d+\.\d MB (?:(\d+) MB/s )?$" % re.escape(tool))
updates = 0
for line in open(path, encoding="utf-8"):
    line = line.rstrip("\n").replace("\x1b[K", "")
    if not line.strip():
        continue
    m = line_re.match(line)
    if not m:
        sys.exit("bad progress line: %r" % line)
    updates += 1
    if m.group(1) is not None:
        rate = int(m.group(1))
        print(rate)
        if rate >= 100000:
            sys.exit("impossible rate: %r" % line)
if updates == 0:
    sys.exit("no progress line drawn")' "$@"
}

@test "progress: etl2evt's first update shows no rate from a near-zero interval" {
	require_corpus
	on_tty etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$T/tty"
	check_progress etl2evt "$T/tty"
}

@test "progress: stackfold on a slow input prints rates, each one plausible" {
	require_corpus
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" >"$T/in.evt"
	on_tty --slow "$T/in.evt" stackfold >"$T/tty"
	check_progress stackfold "$T/tty" >"$T/rates" || { cat "$T/tty"; false; }
	# the run lasts about two seconds: a rate must have been measured
	[ -s "$T/rates" ] || { cat "$T/tty"; fail "no rate printed"; }
}

# a small folded input made from a corpus trace
corpus_folded() {
	require_corpus
	etl2evt "$CORPUS/perfview/net.4.5.2.x64.etl.zip" | stackfold >"$T/a.folded"
	[ -s "$T/a.folded" ]
}

@test "exit: aggregate with every input missing exits 2, one line per missing file, no output" {
	run aggregate "$T/nope1.folded" "$T/nope2.folded" -o "$T/out"
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == *nope1.folded:*"No such file"* ]]
	[[ "${lines[1]}" == *nope2.folded:*"No such file"* ]]
	[ ! -e "$T/out" ]
	run aggregate -M "$T/nope1.folded" "$T/nope2.folded"
	[ "$status" -eq 2 ]
	[ "${#lines[@]}" -eq 2 ]
	# a directory is no readable input either
	mkdir "$T/dir"
	run aggregate "$T/dir"
	[ "$status" -eq 2 ]
}

@test "exit: aggregate with some inputs missing exits 1, the rest aggregated as if alone" {
	corpus_folded
	aggregate -m mean -b "$T/alone.tsv" "$T/a.folded" >"$T/alone"
	run aggregate -m mean -b "$T/some.tsv" "$T/a.folded" "$T/nope.folded" -o "$T/some"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == *nope.folded:*"No such file"* ]]
	[ -s "$T/some" ]
	# the missing file is no scenario of weight 0 halving the mean
	textdiff "$T/alone" "$T/some"
	textdiff "$T/alone.tsv" "$T/some.tsv"
}

@test "exit: diff, overweight, render and stackfold with every input unreadable exit 2" {
	for cmd in "diff $T/n1 $T/n2" "overweight $T/n1 $T/n2" "render $T/n1" \
	    "render flame $T/n1 $T/n2" "render tree $T/n1" "render speedscope $T/n1" \
	    "render dpc $T/n1" "render pmu $T/n1" "stackfold $T/n1"; do
		run $cmd
		[ "$status" -eq 2 ] || fail "$cmd: exit $status"
		[[ "${lines[0]}" == *n1:*"No such file"* ]] || fail "$cmd: ${lines[0]}"
	done
}

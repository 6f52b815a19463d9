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

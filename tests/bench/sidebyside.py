#!/usr/bin/env python3
"""tests/bench/sidebyside.py - make bench's main table: each tool of this
build against the base build (tests/bench/BASE, a release), on the inputs
of issue 18, with `cat` of the same input as the floor.

USAGE:  sidebyside.py --base-bin DIR --new-bin DIR --cache DIR
                      [--base-id ID] [--root DIR] [--shared DIR] [--corpus DIR]
        (tests/bench.sh runs it; `make bench` runs that.)

Env:    BENCH_RUNS   runs per build and measurement (default 5); the
                     medians are printed
        BENCH_QUICK  1: smaller inputs, for a quick look (said in the output)
        BENCH_ONLY   a regular expression: only the rows whose "tool input"
                     matches it
        BENCH_MIN_SAMPLE  seconds (default 0.2): a row whose run is shorter
                     runs several times per sample

Each measurement runs the two builds and the floor interleaved (base, new,
floor, base, new, floor, ...), so load on the shared machine falls on all
three alike; a warm-up run of each build comes first (the input into the
page cache).  CPU is user+sys of every process (wait4's rusage: microseconds,
not time(1)'s 10 ms steps), wall is the monotonic clock around the run, RSS
the peak resident set (time(1)'s %M: see TIME below).  A pipeline's CPU is the sum over its
processes, its RSS the sum of their peaks (they run at the same time, so the
sum bounds what the pipeline holds at once; the largest single peak is shown
too).  A row whose run is shorter than 0.2 s runs N times per sample (the
"xN" after its name) and is shown per run.

OUTPUT: one table per tool, then a summary with the issue's goals, e.g.

    == etl2evt
    input                        base cpu   new cpu   cpu x base wall  new wall  wall x  base RSS   new RSS    floor    MB/s
    net.4.5.2.x64 -k Sample x3      0.090     0.040   2.25x     0.091     0.041   2.22x   11.0 MB   11.2 MB   0.003s     119
    ...
    == summary (medians of 5; x = new speed / base speed)
    etl2evt      net.4.5.2.x64 -k Sample   cpu 2.25x (2.10-2.31) wall 2.22x (1.95-2.40) new: 0.041 s wall,
                 11.2 MB RSS   goal >= 2.5x: not yet

"x" is the ratio new speed / base speed (base time / new time): above 1 is
faster.  MB/s is the input's MB (decompressed, for .gz) over the new
build's wall time; floor is the wall time of cat (zcat) of the input.  A
goal's verdict is information, not a result: nothing passes or fails.

Inputs are made once, atomically (a half-written file is never reused), in
CACHE/inputs: gen_folded.py's (SHARED/tools) at the sizes and seeds of the
issue, the corpus traces unzipped, and etlgen's backup-server incident
repeated (made by the base build's etlgen and etl2evt, named by the base ID
and the scenario's hash, so a new base or scenario makes new ones).
"""
import argparse
import functools
import hashlib
import itertools
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import zipfile

QUICK = os.environ.get("BENCH_QUICK", "") not in ("", "0")
RUNS = max(1, int(os.environ.get("BENCH_RUNS", "5")))
ONLY = re.compile(os.environ.get("BENCH_ONLY", ""))

# sizes: (full, quick)
SIZES = {
    "flame": ("100M", "10M"),
    "diff": ("100M", "10M"),
    "fold": ("1G", "50M"),
    "repeat": (40, 2),
    "repeat_small": (4, 1),   # the DPC reports' RSS at this size and at "repeat"
}


def size(name):
    return SIZES[name][1 if QUICK else 0]


def say(msg):
    print(msg, flush=True)


def note(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


# ---- inputs -----------------------------------------------------------------

class Inputs:
    """Makes each input once in CACHE/inputs and returns its path."""

    def __init__(self, cache, root, shared, corpus, base_bin, base_id):
        self.dir = os.path.join(cache, "inputs")
        os.makedirs(self.dir, exist_ok=True)
        self.root, self.shared, self.corpus = root, shared, corpus
        self.base_bin, self.base_id = base_bin, base_id
        gen = os.path.join(shared, "tools", "gen_folded.py")
        if not os.path.exists(gen):
            gen = os.path.join(root, "tests", "tools", "gen_folded.py")
        self.gen_folded = gen

    def _make(self, name, write):
        """CACHE/inputs/NAME, made by write(tmp_path) when missing."""
        path = os.path.join(self.dir, name)
        if not os.path.exists(path):
            tmp = "%s.part%d" % (path, os.getpid())
            note("making input %s" % name)
            t0 = time.monotonic()
            try:
                write(tmp)
            except (OSError, subprocess.CalledProcessError, zipfile.BadZipFile, KeyError) as e:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                sys.exit("bench: cannot make the input %s: %s" % (name, e))
            os.replace(tmp, path)
            note("  %s: %.1f MB in %.1f s" % (name, os.path.getsize(path) / 1e6, time.monotonic() - t0))
        return path

    def folded(self, sz, seed, *opts):
        tag = "".join(o.replace("--", "-").replace(" ", "") for o in opts)
        name = "gen-%s-seed%d%s.folded" % (sz, seed, tag)
        return self._make(name, lambda tmp: self._run(
            [sys.executable, self.gen_folded, "--size", sz, "--seed", str(seed)] + list(opts), tmp))

    def corpus_etl(self, zipname, member, name):
        def unzip(tmp):
            with zipfile.ZipFile(os.path.join(self.corpus, "perfview", zipname)) as z, open(tmp, "wb") as f:
                f.write(z.read(member))
        return self._make(name, unzip)

    def incident_etl(self, repeat):
        scen = os.path.join(self.root, "tests", "scenarios", "backup-incident.yaml")
        name = "incident-x%d-%s.etl" % (repeat, self.incident_tag(scen))
        return self._make(name, lambda tmp: subprocess.run(
            [os.path.join(self.base_bin, "etlgen"), "--no-compress", "--repeat", str(repeat),
             "-o", tmp, scen], check=True, stderr=subprocess.DEVNULL))

    def incident_evt(self, repeat):
        etl = self.incident_etl(repeat)
        name = os.path.basename(etl)[:-len(".etl")] + ".evt"
        return self._make(name, lambda tmp: subprocess.run(
            [os.path.join(self.base_bin, "etl2evt"), "-o", tmp, etl], check=True,
            stderr=subprocess.DEVNULL))

    def incident_tag(self, scen):
        """Names what made the incident: the base's tools and the scenario's text."""
        with open(scen, "rb") as f:
            return "%s-%s" % (self.base_id, hashlib.sha256(f.read()).hexdigest()[:8])

    @staticmethod
    def _run(argv, out):
        with open(out, "wb") as f:
            subprocess.run(argv, stdout=f, check=True)


@functools.lru_cache(maxsize=None)
def data_bytes(path):
    """What a tool reads: the file's size, decompressed for .gz."""
    if not path.endswith(".gz"):
        return os.path.getsize(path)
    n = 0
    with subprocess.Popen(["zcat", path], stdout=subprocess.PIPE) as p:
        while True:
            b = p.stdout.read(1 << 20)
            if not b:
                break
            n += len(b)
    return n


# ---- running ----------------------------------------------------------------

class Sample:
    def __init__(self, cpu, wall, rss_sum, rss_max, status):
        self.cpu, self.wall, self.rss_sum, self.rss_max, self.status = cpu, wall, rss_sum, rss_max, status


# Peak RSS comes from time(1), not from our own wait4: a child forked from
# this Python process starts with Python's pages, and Linux keeps that high
# water mark across exec, so every tool would seem to need at least what
# Python does.  time(1) forks from a small process.  Its own CPU (well under
# a millisecond) is in the CPU figures of both builds alike.
TIME = shutil.which("time", path="/usr/bin:/bin")


def peak_kb(path):
    """The last line of time(1)'s -o file that is a number ("Command exited
    with non-zero status" comes before it)."""
    try:
        with open(path) as f:
            nums = [l.strip() for l in f if l.strip().isdigit()]
        return int(nums[-1]) if nums else 0
    except OSError:
        return 0


def run_pipeline(stages, inner, log, scratch):
    """Runs the pipeline of argv lists STAGES INNER times in a row; returns
    the Sample per run (CPU and wall divided by INNER, peaks of the worst run)."""
    cpu = 0.0
    rss_sum = rss_max = 0
    status = 0
    t0 = time.monotonic()
    for _ in range(inner):
        procs = []
        prev = None
        for i, argv in enumerate(stages):
            last = i == len(stages) - 1
            if TIME:
                argv = [TIME, "-f", "%M", "-o", "%s.%d" % (scratch, i)] + argv
            p = subprocess.Popen(argv, stdin=prev.stdout if prev else subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL if last else subprocess.PIPE,
                                 stderr=log)
            if prev:
                prev.stdout.close()
            procs.append(p)
            prev = p
        for p in procs:
            _, st, ru = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(st)
            cpu += ru.ru_utime + ru.ru_stime
            # 1: partial (some input skipped) still ran; 2 or a signal did not
            if p.returncode not in (0, 1) and status == 0:
                status = p.returncode
        peaks = [peak_kb("%s.%d" % (scratch, i)) for i in range(len(stages))]
        rss_sum = max(rss_sum, sum(peaks))
        rss_max = max(rss_max, max(peaks))
    wall = time.monotonic() - t0
    return Sample(cpu / inner, wall / inner, rss_sum, rss_max, status)


def floor_stages(paths):
    gz = [p for p in paths if p.endswith(".gz")]
    return [["zcat" if gz else "cat"] + list(paths)]


class Goal:
    """Issue 18's goal for a row: a speed ratio (by wall time: the goals ask
    for both cores), and limits on wall seconds and peak RSS (MB) that hold
    at the issue's input size only (not in QUICK)."""

    def __init__(self, speed=None, wall=None, rss=None, flat_from=None):
        self.speed, self.wall, self.rss = speed, wall, rss
        self.flat_from = flat_from  # a row on a smaller input: RSS must not grow (20%)

    def verdict(self, row):
        n, b = row.result["new"], row.result["base"]
        parts = []
        if self.speed:
            r = ratio(b["wall"], n["wall"])
            parts.append(">= %gx: %s" % (self.speed, "met" if r >= self.speed else "not yet"))
        for what, limit, got, unit in (("wall", self.wall, n["wall"], "s"),
                                       ("RSS", self.rss, n["rss"] / 1024, "MB")):
            if limit:
                parts.append("%s <= %g %s: %s" % (what, limit, unit, "n/a in QUICK" if QUICK
                                                  else "met" if got <= limit else "not yet"))
        if self.flat_from and self.flat_from.result:
            small, big = self.flat_from.result["new"]["rss"], n["rss"]
            parts.append("RSS flat from %s: %s -> %s: %s" % (
                self.flat_from.size_tag, fmt_mb(small).strip(), fmt_mb(big).strip(),
                "met" if big <= small * 1.2 else "not yet"))
        return "; ".join(parts)


class Row:
    """One measurement: TOOL on INPUT, the same stages for both builds
    ("{bin}" in an argument is the build's bin directory)."""

    def __init__(self, tool, label, paths, stages, goal=None):
        self.tool, self.label, self.paths, self.stages = tool, label, paths, stages
        self.goal = goal
        self.inner = 1
        self.bytes = 0
        self.result = {}

    def argv(self, bindir):
        return [[a.replace("{bin}", bindir) for a in st] for st in self.stages]


def median(samples, attr):
    return statistics.median(getattr(s, attr) for s in samples)


# a sample shorter than this is too short to time well: such a row runs
# several times per sample (and is shown per run)
MIN_SAMPLE_S = float(os.environ.get("BENCH_MIN_SAMPLE", "0.2"))


def measure(row, builds, log, scratch):
    """A warm-up run of each build (the input into the page cache, and how
    long one run takes), then RUNS interleaved runs of each build and of the
    floor; medians."""
    warm = [run_pipeline(row.argv(b), 1, log, scratch).wall for b in builds.values()]
    row.inner = max(1, min(50, int(MIN_SAMPLE_S / max(min(warm), 1e-4)) + 1)) if min(warm) < MIN_SAMPLE_S else 1
    got = {name: [] for name in list(builds) + ["floor"]}
    for _ in range(RUNS):
        for name, bindir in builds.items():
            got[name].append(run_pipeline(row.argv(bindir), row.inner, log, scratch))
        got["floor"].append(run_pipeline(floor_stages(row.paths), row.inner, log, scratch))
    # the ratio of each run's pair (base i, new i): its range shows how far
    # the machine's noise moves the median ratio
    row.spread = {}
    for attr in ("cpu", "wall"):
        pairs = [ratio(getattr(b, attr), getattr(n, attr)) for b, n in zip(got["base"], got["new"])]
        row.spread[attr] = (min(pairs), max(pairs))
    for name, samples in got.items():
        failed = [s.status for s in samples if s.status]
        row.result[name] = {
            "cpu": median(samples, "cpu"), "wall": median(samples, "wall"),
            "rss": median(samples, "rss_sum"), "rss_max": median(samples, "rss_max"),
            "status": failed[0] if failed else 0,
        }


# ---- printing ---------------------------------------------------------------

HEAD = "%-40s %9s %9s %7s %9s %9s %7s %9s %9s %8s %7s"


def ratio(base, new):
    return base / new if new > 0 else float("inf")


def fmt_ratio(r):
    return "%6.2fx" % r if r != float("inf") else "    inf"


def fmt_mb(kb):
    return "%6.1f MB" % (kb / 1024) if kb else "       -"


def print_table(tool, rows):
    say("")
    say("== %s" % tool)
    say(HEAD % ("input", "base cpu", "new cpu", "cpu x", "base wall", "new wall", "wall x",
                "base RSS", "new RSS", "floor", "MB/s"))
    for row in rows:
        b, n, f = row.result["base"], row.result["new"], row.result["floor"]
        label = row.label + (" x%d" % row.inner if row.inner > 1 else "")
        if b["status"] or n["status"]:
            say("%-40s %s" % (label, "  ".join(
                "%s exited %d" % (k, r["status"]) for k, r in (("base", b), ("new", n)) if r["status"])))
        mb = row.bytes / 1e6
        say(HEAD % (label, "%.3f" % b["cpu"], "%.3f" % n["cpu"], fmt_ratio(ratio(b["cpu"], n["cpu"])),
                    "%.3f" % b["wall"], "%.3f" % n["wall"], fmt_ratio(ratio(b["wall"], n["wall"])),
                    fmt_mb(b["rss"]), fmt_mb(n["rss"]), "%.3fs" % f["wall"],
                    "%.0f" % (mb / n["wall"]) if n["wall"] > 0 else "-"))
        if len(row.stages) > 1:
            say("%-40s largest single process peak: base %s, new %s" % (
                "", fmt_mb(b["rss_max"]).strip(), fmt_mb(n["rss_max"]).strip()))


def spread(row, attr):
    """"1.02x (0.95-1.08)": the median ratio and the range of the runs' pairs."""
    lo, hi = row.spread[attr]
    med = ratio(row.result["base"][attr], row.result["new"][attr])
    if RUNS == 1:
        return fmt_ratio(med).strip()
    return "%s (%.2f-%.2f)" % (fmt_ratio(med).strip(), lo, hi)


def print_summary(rows):
    say("")
    say("== summary (medians of %d; x = new speed / base speed, in brackets the range of the runs' pairs)%s" % (
        RUNS, "  QUICK: small inputs, not the issue's sizes" if QUICK else ""))
    for row in rows:
        b, n = row.result["base"], row.result["new"]
        line = "%-12s %-40s cpu %-18s wall %-18s new: %.3f s wall, %s RSS" % (
            row.tool, row.label, spread(row, "cpu"), spread(row, "wall"), n["wall"], fmt_mb(n["rss"]).strip())
        if row.goal:
            line += "   goal %s" % row.goal.verdict(row)
        say(line)


# ---- the measurements -------------------------------------------------------

def rows_for(inp):
    """The rows of issue 18's table, in its order.  Each is made (and its
    inputs with it) only when BENCH_ONLY keeps it."""
    rows = []

    def add(tool, label, make, goal=None):
        if not ONLY.search(tool + " " + label):
            return None
        paths, stages = make()
        missing = [p for p in paths if not os.path.exists(p)]
        if missing:
            note("%s %s: left out, no %s" % (tool, label, missing[0]))
            return None
        rows.append(Row(tool, label, paths, stages, goal))
        return rows[-1]

    def net():
        return inp.corpus_etl("net.4.5.2.x64.etl.zip", "net.4.5.2.x64.etl", "net.4.5.2.x64.etl")

    def ctf():
        return inp.corpus_etl("ctf-net45-win7.etl.zip", "PerfViewData.etl", "ctf-net45-win7.etl")

    def shared(name):
        return os.path.join(inp.shared, "bench", name)

    def one(argv, path):
        return [path], [argv + [path]]

    add("etl2evt", "net.4.5.2.x64 (full decode)",
        lambda: one(["{bin}/etl2evt", "-o", "/dev/null"], net()), goal=Goal(speed=2))
    add("etl2evt", "net.4.5.2.x64 -k Sample",
        lambda: one(["{bin}/etl2evt", "-k", "Sample", "-o", "/dev/null"], net()), goal=Goal(speed=2.5))
    add("etl2evt", "ctf-net45-win7 (full decode)",
        lambda: one(["{bin}/etl2evt", "-o", "/dev/null"], ctf()), goal=Goal(speed=2))

    flame = ["{bin}/render", "flame"]
    add("render", "flame perf.folded.gz (real perf)",
        lambda: one(flame, shared("perf.folded.gz")), goal=Goal(speed=2))
    add("render", "flame gen_folded %s seed 1" % size("flame"),
        lambda: one(flame, inp.folded(size("flame"), 1)))
    add("render", "flame gen_folded 8M seed 3 --unique",
        lambda: one(flame, inp.folded("8M", 3, "--unique")),
        goal=Goal(speed=2))

    def pair(a, b):
        return [a, b], [["{bin}/diff", "-q", a, b]]

    add("diff", "gen_folded %s seed 7 --unique, 1 vs 2" % size("diff"),
        lambda: pair(inp.folded(size("diff"), 7, "--unique", "--sample-seed", "1"),
                     inp.folded(size("diff"), 7, "--unique", "--sample-seed", "2")), goal=Goal(speed=1.7))
    add("diff", "perf-A vs perf-B .folded.gz",
        lambda: pair(shared("perf-A.folded.gz"), shared("perf-B.folded.gz")), goal=Goal(speed=1.7))

    add("stackfold", "gen_folded %s seed 1" % size("fold"),
        lambda: one(["{bin}/stackfold", "-o", "/dev/null"], inp.folded(size("fold"), 1)),
        goal=Goal(speed=2, rss=100))

    rep = size("repeat")
    add("end-to-end", "etl2evt alone, incident x%d" % rep,
        lambda: one(["{bin}/etl2evt", "-o", "/dev/null"], inp.incident_etl(rep)))

    def pipeline():
        etl = inp.incident_etl(rep)
        return [etl], [["{bin}/etl2evt", etl], ["{bin}/stackfold"], flame]

    add("end-to-end", "etl2evt|stackfold|render flame, x%d" % rep, pipeline,
        goal=Goal(wall=5, rss=256))
    # the same reports on 10 times less evt (2 times in QUICK): memory must
    # follow what they report (the same DPCs, ISRs and stacks), not the events
    small_rep = size("repeat_small")
    for mode in ("dpc", "dpcisr", "dpcstacks"):
        small = add("dpc reports", "render %s, incident x%d evt" % (mode, small_rep),
                    lambda mode=mode: one(["{bin}/render", mode], inp.incident_evt(small_rep)))
        if small:
            small.size_tag = "x%d" % small_rep
        add("dpc reports", "render %s, incident x%d evt" % (mode, rep),
            lambda mode=mode: one(["{bin}/render", mode], inp.incident_evt(rep)),
            goal=Goal(flat_from=small))
    for row in rows:
        row.bytes = sum(data_bytes(p) for p in row.paths)
    return rows


def input_sizes(rows):
    """One line per input: its name and MB (what the rows' MB/s divide)."""
    seen = {}
    for row in rows:
        for p in row.paths:
            seen.setdefault(p, data_bytes(p))
    for p, n in seen.items():
        say("  %-58s %9.1f MB%s" % (os.path.basename(p), n / 1e6,
                                    " (decompressed)" if p.endswith(".gz") else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base-bin", required=True)
    ap.add_argument("--new-bin", required=True)
    ap.add_argument("--base-id", default="base")
    ap.add_argument("--cache", required=True)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(here)))
    ap.add_argument("--shared", default=os.environ.get("ETLKIT_SHARED", ""))
    ap.add_argument("--corpus", default=os.environ.get("ETLKIT_CORPUS", ""))
    a = ap.parse_args()
    for tool in ("zcat", "cat"):
        if not shutil.which(tool):
            sys.exit("bench: %s not found" % tool)

    inp = Inputs(a.cache, a.root, a.shared, a.corpus, a.base_bin, a.base_id)
    rows = rows_for(inp)
    builds = {"base": a.base_bin, "new": a.new_bin}
    say("side by side: base %s (%s) against new (%s); medians of %d interleaved runs%s" % (
        a.base_id, a.base_bin, a.new_bin, RUNS, "; QUICK: small inputs, not the issue's sizes" if QUICK else ""))
    say("inputs:")
    input_sizes(rows)
    log_path = os.path.join(a.cache, "sidebyside.stderr")
    scratch = os.path.join(a.cache, "time.%d" % os.getpid())
    with open(log_path, "wb") as log:
        for tool, group in itertools.groupby(rows, key=lambda r: r.tool):
            group = list(group)
            for row in group:
                measure(row, builds, log, scratch)
            print_table(tool, group)
    for f in os.listdir(a.cache):
        if f.startswith("time.%d." % os.getpid()):
            os.unlink(os.path.join(a.cache, f))
    print_summary(rows)
    say("(the tools' stderr: %s)" % log_path)


if __name__ == "__main__":
    main()

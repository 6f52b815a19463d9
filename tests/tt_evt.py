#!/usr/bin/env python3
"""tt_evt.py - an evt stream with thread-time lines (Running, Ready, Waiting)
from a small hand-written timeline, for the thread-time views' tests.

The stream follows docs/evt-format.md's thread-time contract: weight =
duration, time column = interval start, end_ms= and duration_us= on every
line, edge= where an interval touches the trace's first or last event,
the waker's attributes on Waiting lines, READIED_TIME / BLOCKED_TIME
leaves, lines in log order (by end_ms, samples by time).  The Idle thread
(pid 0, tid 0) gets a Running line for every gap of every CPU, so per
CPU running + idle = the span by construction.  Every expected number of
a test is then worked out by hand from the timeline it writes.

USAGE:  tt_evt.py < TIMELINE > out.evt
TIMELINE (one statement a line, '#' comments):
  span START END                 the trace's first and last event (ms)
  cpus N
  interval MS                    sampling interval (default 1)
  thread TID PID PROCESS         declares a thread
  TID run START END CPU [prio=N]
  TID ready START END CPU [from=readied|preempted] [stack=A;B]
  TID wait START END CPU reason=R [leaf=DISK_TIME] [stack=A;B]
        [by=TID@CPU] [in=dpc|isr routine=mod!fn] [wstack=A;B]
  TID sample TIME CPU STACK [count=N]
The checker refuses a timeline where a thread's intervals overlap or two
threads run on one CPU at once: the views' tests must start from a true
timeline.
"""
import sys


def ms(x):
    return "%.6f" % x


def weight(x):
    s = ("%.6f" % x).rstrip("0").rstrip(".")
    return s if s else "0"


def main():
    span = (0.0, 100.0)
    cpus = 1
    interval = 1.0
    threads = {}
    ivs = []      # (end, start, kind, cpu, tid, attrs, stack)
    samples = []
    for raw in sys.stdin:
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        w = line.split()
        if w[0] == "span":
            span = (float(w[1]), float(w[2]))
        elif w[0] == "cpus":
            cpus = int(w[1])
        elif w[0] == "interval":
            interval = float(w[1])
        elif w[0] == "thread":
            threads[int(w[1])] = (int(w[2]), w[3])
        elif w[1] == "sample":
            kv = dict(a.split("=", 1) for a in w[5:])
            samples.append((float(w[2]), int(w[0]), int(w[3]), w[4], int(kv.get("count", 1))))
        else:
            tid, what, a, b, cpu = int(w[0]), w[1], float(w[2]), float(w[3]), int(w[4])
            kv = dict(x.split("=", 1) for x in w[5:])
            ivs.append((tid, what, a, b, cpu, kv))
    check(ivs, span)
    out = sys.stdout
    out.write("#evt\t1\tsource=tt_evt.py\tcpus=%d\tpointer_size=8\tclock=qpc\t"
              "clock_freq=10000000\tduration_ms=%s\tsample_interval_ms=%s\n"
              % (cpus, ms(span[1] - span[0]), weight(interval)))
    lines = []
    for tid, what, a, b, cpu, kv in ivs:
        lines.append((b, 1, interval_line(threads, tid, what, a, b, cpu, kv, span)))
    for cpu in range(cpus):
        for a, b in idle_gaps(ivs, cpu, span):
            lines.append((b, 1, interval_line(threads, 0, "run", a, b, cpu, {}, span)))
    for t, tid, cpu, stack, count in samples:
        pid, proc = threads[tid]
        attrs = ["ip=0x1000", "prio=8"] + (["count=%d" % count] if count != 1 else []) + ["kframes=0"]
        lines.append((t, 0, "\t".join([ms(t), "Sample", str(cpu), proc, str(pid), str(tid),
                                       weight(interval * count)] + attrs + [stack])))
    lines.sort(key=lambda x: (x[0], x[1]))
    for _, _, text in lines:
        out.write(text + "\n")


def edge(a, b, span):
    s, e = a <= span[0], b >= span[1]
    return "both" if s and e else "start" if s else "end" if e else None


def interval_line(threads, tid, what, a, b, cpu, kv, span):
    pid, proc = (0, "Idle") if tid == 0 else threads[tid]
    kind = {"run": "Running", "ready": "Ready", "wait": "Waiting"}[what]
    attrs = ["end_ms=" + ms(b), "duration_us=%.3f" % ((b - a) * 1000)]
    stack = ""
    if what == "run":
        attrs.append("prio=" + kv.get("prio", "8"))
    elif what == "ready":
        attrs += ["from=" + kv.get("from", "readied"), "prio=8"]
        stack = join(kv.get("stack", ""), "READIED_TIME")
    else:
        attrs += ["wait_reason=" + kv["reason"], "wait_mode=user",
                  "old_state=" + kv.get("state", "Waiting"), "prio=8"]
        stack = join(kv.get("stack", ""), kv.get("leaf", "BLOCKED_TIME"))
        if "by" in kv:
            wtid, wcpu = kv["by"].split("@")
            wpid, wproc = (0, "Idle") if int(wtid) == 0 else threads[int(wtid)]
            attrs += ["ready_ms=" + ms(b), "waker_tid=" + wtid, "waker_pid=%d" % wpid,
                      "waker_process=" + wproc, "waker_cpu=" + wcpu,
                      "waker_in=" + kv.get("in", "thread")]
            if "routine" in kv:
                attrs.append("waker_routine=" + kv["routine"])
            if "wstack" in kv:
                attrs.append("waker_stack=" + kv["wstack"])
    e = edge(a, b, span)
    if e:
        attrs.append("edge=" + e)
    return "\t".join([ms(a), kind, str(cpu), proc, str(pid), str(tid), weight(b - a)]
                     + attrs + [stack])


def join(stack, leaf):
    return stack + ";" + leaf if stack else leaf


def idle_gaps(ivs, cpu, span):
    runs = sorted((a, b) for tid, what, a, b, c, kv in ivs if what == "run" and c == cpu)
    t = span[0]
    for a, b in runs:
        if a > t:
            yield t, a
        t = max(t, b)
    if t < span[1]:
        yield t, span[1]


def check(ivs, span):
    per_thread, per_cpu = {}, {}
    for tid, what, a, b, cpu, kv in ivs:
        if not (span[0] <= a <= b <= span[1]):
            sys.exit("tt_evt.py: thread %d: %s %g..%g outside the span" % (tid, what, a, b))
        per_thread.setdefault(tid, []).append((a, b))
        if what == "run":
            per_cpu.setdefault(cpu, []).append((a, b))
    for key, lst in list(per_thread.items()) + list(per_cpu.items()):
        lst.sort()
        for (a1, b1), (a2, b2) in zip(lst, lst[1:]):
            if a2 < b1:
                sys.exit("tt_evt.py: %s overlaps at %g" % (key, a2))


if __name__ == "__main__":
    main()

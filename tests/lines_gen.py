#!/usr/bin/env python3
"""Streams with one bad line for tests/lines.bats, and their truth.

lines_gen.py MODE FORMAT BAD AT [LINES]
  MODE    stream: the whole stream, the bad line included
          good:   the stream without the bad line (what a tool must keep)
          sums:   "stack weight" per distinct stack of the good lines, sorted
          total:  the total weight of the good lines
  FORMAT  folded, or evt (a "#evt 1" header, then Sample events)
  BAD     long:BYTES  a line of BYTES bytes (written in pieces, never held)
          nul         "root;b 5\\0 99" (folded) or a stack with a NUL (evt)
  AT      the 1-based line number of the bad line (the header is line 1 in evt)
  LINES   how many lines in all (default 2001)

The good lines are computed here, apart from the tools under test.
"""
import sys


def good_line(fmt, i):
    """Line I (1-based, not the bad one) and its stack and weight."""
    stack = "root;%s;f%d" % ("ab"[i % 2], i % 7)
    weight = i % 5 + 1
    if fmt == "folded":
        return "%s %d" % (stack, weight), stack, weight
    return ("%d.000000\tSample\t0\tapp.exe\t10\t11\t%d\t%s" % (i, weight, stack),
            stack, weight)


def write_bad(out, fmt, bad):
    if bad == "nul":
        out.write(b"root;b 5\0 99\n" if fmt == "folded" else
                  b"7.000000\tSample\t0\tapp.exe\t10\t11\t5\troot;b\0x\n")
        return
    left = int(bad.split(":")[1])
    head = b"root;" if fmt == "folded" else b"7.000000\tSample\t0\tapp.exe\t10\t11\t5\troot;"
    tail = b" 5" if fmt == "folded" else b";leaf"
    out.write(head)
    left -= len(head) + len(tail)
    piece = b"x" * (1 << 20)
    while left > 0:
        n = min(left, len(piece))
        out.write(piece[:n])
        left -= n
    out.write(tail + b"\n")


def main():
    mode, fmt, bad, at = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    nlines = int(sys.argv[5]) if len(sys.argv) > 5 else 2001
    out = sys.stdout.buffer
    sums, total = {}, 0
    for i in range(1, nlines + 1):
        if i == at:
            if mode == "stream":
                write_bad(out, fmt, bad)
            continue
        if fmt == "evt" and i == 1:
            if mode in ("stream", "good"):
                out.write(b"#evt\t1\n")
            continue
        line, stack, weight = good_line(fmt, i)
        if mode in ("stream", "good"):
            out.write(line.encode() + b"\n")
        sums[stack] = sums.get(stack, 0) + weight
        total += weight
    if mode == "sums":
        for stack in sorted(sums):
            out.write(("%s %d\n" % (stack, sums[stack])).encode())
    elif mode == "total":
        out.write(("%d\n" % total).encode())


main()

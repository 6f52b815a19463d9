#!/usr/bin/env python3
"""
check_layers.py - checks the structure docs/architecture.md describes.

USAGE:  check_layers.py REPO [CHECK...]
CHECKS: folders   every lib source is in a layer folder
        layers    a file includes only its own layer and lower ones
        cycles    no two lib files include each other, directly or not
        exports   every function a lib header declares is used outside
                  its own file, by lib/, filters/ or a fuzz harness
                  (one used only by test tools belongs in tests/tools/lib)
        docs      docs/architecture.md names every lib file, and every
                  path it names exists
OUTPUT: one line per violation, "CHECK: FILE: why"; exit 1 if any.

Independent of the C code: it reads the sources as text.
"""
import os
import re
import sys

# base < evt < {etl, stacks} < report < run; etl and stacks are siblings.
RANK = {"base": 0, "evt": 1, "etl": 2, "stacks": 2, "report": 3, "run": 4}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A declaration in a header: "type name(" at the start of a line.
DECL = re.compile(r'^(?!typedef|static|#|struct\s+\w+\s*\{)[A-Za-z_][\w \t\*]*?\b([a-z_]\w*)\s*\(',
                  re.M)


def lib_files(repo):
    out = []
    for d, _, names in os.walk(os.path.join(repo, "lib")):
        for n in names:
            if n.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(d, n), repo))
    return sorted(out)


def read(repo, path):
    with open(os.path.join(repo, path), encoding="utf-8", errors="replace") as f:
        return f.read()


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def layer_of(path):
    parts = path.split("/")
    return parts[1] if len(parts) == 3 and parts[0] == "lib" else None


def check_folders(repo, files):
    for f in files:
        if layer_of(f) not in RANK:
            yield "folders: %s: not in a layer folder (%s)" % (f, ", ".join(RANK))


def includes(repo, f):
    return INCLUDE.findall(strip_comments(read(repo, f)))


def check_layers(repo, files):
    for f in files:
        mine = layer_of(f)
        if mine not in RANK:
            continue
        for inc in includes(repo, f):
            if "/" not in inc:
                if not os.path.exists(os.path.join(repo, os.path.dirname(f), inc)):
                    yield "layers: %s: includes \"%s\", which names no layer" % (f, inc)
                continue
            theirs = inc.split("/")[0]
            if theirs not in RANK:
                yield "layers: %s: includes \"%s\" from outside lib/" % (f, inc)
            elif theirs != mine and RANK[theirs] >= RANK[mine]:
                yield "layers: %s (%s) includes \"%s\" (%s): a lower layer never includes a higher or sibling one" % (
                    f, mine, inc, theirs)


def unit(path):
    return path[:-2]


def module(path):
    # a module is its .c, its header and its private header (X_int.h)
    u = unit(path)
    return u[:-4] if u.endswith("_int") else u


def check_cycles(repo, files):
    # graph between units (a .c and its .h are one unit)
    graph = {}
    for f in files:
        u = module(f)
        for inc in includes(repo, f):
            target = "lib/" + inc if "/" in inc else os.path.join(os.path.dirname(f), inc)
            if module(target) != u:
                graph.setdefault(u, set()).add(module(target))
    seen, stack, found = set(), [], set()

    def visit(u):
        if u in stack:
            cyc = stack[stack.index(u):] + [u]
            found.add(" -> ".join(cyc))
            return
        if u in seen:
            return
        seen.add(u)
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            visit(v)
        stack.pop()

    for u in sorted(graph):
        visit(u)
    for c in sorted(found):
        yield "cycles: %s" % c


def code_files(repo, top):
    out = []
    for d, _, names in os.walk(os.path.join(repo, top)):
        for n in names:
            if n.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(d, n), repo))
    return out


# Library functions whose only callers are test tools, and why they stay in
# lib/: each lets a test tool look inside a module from outside, the way
# tests check it.  Builders of test input do not belong here (they live in
# tests/tools/lib).
INSPECTION_API = {
    "sym_lookup": "tests/tools/symlookup.c resolves one RVA through lib/etl/symbols.c",
    "sym_image": "symlookup prints what lib/etl/symbols.c found for an image",
    "pdb_contributions": "tests/tools/pdbdump.c prints the section contributions lib/etl/pdb.c read",
    "tdh_is_metadata": "tests/tools/tdhdump.c picks out schema events the way lib/etl/tdh.c does",
    "cli_progname": "test tools name themselves in messages as the filters do",
}


def check_exports(repo, files):
    users = {}
    for f in code_files(repo, "lib") + code_files(repo, "filters") + code_files(repo, "tests/fuzz"):
        users[f] = strip_comments(read(repo, f))
    for h in (f for f in files if f.endswith(".h")):
        text = strip_comments(read(repo, h))
        own_c = unit(h) + ".c"
        for name in sorted(set(DECL.findall(text)) - set(INSPECTION_API)):
            word = re.compile(r"\b%s\b" % re.escape(name))
            # a static inline function in the header itself counts as a user
            used = len(word.findall(text)) > 1 or any(
                word.search(t) for f, t in users.items() if f not in (h, own_c))
            if not used:
                yield "exports: %s: %s is used only in its own file (make it static) or only by test tools (move it to tests/tools/lib)" % (
                    h, name)


def check_docs(repo, files):
    path = os.path.join(repo, "docs", "architecture.md")
    if not os.path.exists(path):
        yield "docs: docs/architecture.md: missing"
        return
    text = read(repo, "docs/architecture.md")
    for f in files:
        if f.endswith(".c") or not os.path.exists(os.path.join(repo, unit(f) + ".c")):
            stem = unit(f)
            if stem not in text and f not in text:
                yield "docs: %s: not named in docs/architecture.md" % f
    for p in sorted(set(re.findall(r"`((?:lib|filters|tests|docs|pipelines)/[\w./-]+)`", text))):
        p = p.rstrip(".")
        if "*" in p:
            continue
        if not (os.path.exists(os.path.join(repo, p)) or os.path.exists(os.path.join(repo, p + ".c"))):
            yield "docs: docs/architecture.md names %s, which does not exist" % p


CHECKS = {"folders": check_folders, "layers": check_layers, "cycles": check_cycles,
          "exports": check_exports, "docs": check_docs}


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: check_layers.py REPO [%s...]" % "|".join(CHECKS))
    repo = sys.argv[1]
    names = sys.argv[2:] or list(CHECKS)
    files = lib_files(repo)
    bad = 0
    for n in names:
        for msg in CHECKS[n](repo, files):
            print(msg)
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

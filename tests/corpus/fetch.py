#!/usr/bin/env python3
"""make corpus: fetch the real Windows traces the tests read.

USAGE:  tests/corpus/fetch.py [DIR]

INPUT:  tests/corpus/SOURCES.tsv, one file a line: where it lives in the
        corpus, the public repository, the commit, the path there, the zip
        member ("-" for none) and the file's SHA-256:
          tx/HTTP_Server.etl  microsoft/Tx  15dc97...  Traces/HTTP_Server.etl  -  ef7f6f...

OUTPUT: the files under DIR (default: $XDG_CACHE_HOME/etlkit/corpus, else
        ~/.cache/etlkit/corpus: outside the repository, where the tests look
        after $ETLKIT_CORPUS and ../shared/corpus).  A file already there with
        the right SHA-256 is kept; every file is checked before it is moved
        into place, so DIR never holds a wrong or half-written file.

Environment: ETLKIT_CORPUS_URL, the address of one file with {repo},
{commit} and {path} in it (default https://github.com/{repo}/raw/{commit}/{path},
which also serves files kept in Git LFS).  A file:// address reads a local
mirror, e.g. file:///srv/mirror/{repo}/{commit}/{path}.

Exit status: 0 all files present and verified, 1 some could not be fetched
or did not match (each named on stderr), 2 usage or the list is unreadable.
"""
import hashlib
import io
import os
import sys
import tempfile
import urllib.request
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_URL = "https://github.com/{repo}/raw/{commit}/{path}"


def default_dir():
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "etlkit", "corpus")


def read_sources(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        if header[:6] != ["file", "repository", "commit", "path", "member", "sha256"]:
            raise ValueError(f"{path}:1: unexpected header {header}")
        for n, line in enumerate(f, 2):
            cols = line.rstrip("\n").split("\t")
            if len(cols) != 6 or ".." in cols[0].split("/") or cols[0].startswith("/"):
                raise ValueError(f"{path}:{n}: malformed line")
            rows.append(dict(zip(header, cols)))
    return rows


def sha256_of(data):
    return hashlib.sha256(data).hexdigest()


def file_ok(path, want):
    try:
        with open(path, "rb") as f:
            return sha256_of(f.read()) == want
    except OSError:
        return False


def fetch(row, template):
    url = template.format(repo=row["repository"], commit=row["commit"], path=row["path"])
    with urllib.request.urlopen(url, timeout=120) as r:
        data = r.read()
    if row["member"] != "-":
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            data = z.read(row["member"])
    return url, data


def place(dest, data):
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(dest), prefix=".fetch-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, dest)


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print("usage: fetch.py [DIR]", file=sys.stderr)
        return 2
    dest_dir = argv[1] if len(argv) == 2 else default_dir()
    base = os.environ.get("ETLKIT_CORPUS_URL") or DEFAULT_URL
    try:
        rows = read_sources(os.path.join(HERE, "SOURCES.tsv"))
    except (OSError, ValueError) as e:
        print(f"fetch.py: {e}", file=sys.stderr)
        return 2
    bad = kept = got = 0
    for row in rows:
        dest = os.path.join(dest_dir, row["file"])
        if file_ok(dest, row["sha256"]):
            kept += 1
            continue
        try:
            url, data = fetch(row, base)
        except Exception as e:  # network, HTTP, zip: each is one bad file
            print(f"fetch.py: {row['file']}: {e}", file=sys.stderr)
            bad += 1
            continue
        if sha256_of(data) != row["sha256"]:
            print(f"fetch.py: {row['file']}: SHA-256 of {url} is {sha256_of(data)}, "
                  f"SOURCES.tsv says {row['sha256']}; not kept", file=sys.stderr)
            bad += 1
            continue
        place(dest, data)
        got += 1
    print(f"corpus: {len(rows)} files in {dest_dir}: {got} fetched, {kept} already there, "
          f"{bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

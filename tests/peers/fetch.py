#!/usr/bin/env python3
"""make peers: fetch the other tools some tests compare etlkit's output with.

USAGE:  tests/peers/fetch.py [DIR]

INPUT:  the pinned list below: a name, the public repository, the commit,
        the path there and the file's SHA-256:
          flamegraph.pl  brendangregg/FlameGraph  41fee1f9...  flamegraph.pl  088f82e6...

OUTPUT: the files under DIR (default: $XDG_CACHE_HOME/etlkit/peers, else
        ~/.cache/etlkit/peers: outside the repository, where the tests look
        after $ETLKIT_FLAMEGRAPH and PATH).  A file is kept only if its
        SHA-256 is the pinned one, and it is moved into place whole, so DIR
        never holds a wrong or half-written file.  Nothing fetched is ever
        part of the repository.

Best effort: a machine without the network keeps working; the tests that
need a peer skip and say why (tests/stackdefaults.bats).

Environment: ETLKIT_PEERS_URL, the address of one file with {repo},
{commit} and {path} in it (default https://github.com/{repo}/raw/{commit}/{path}).
A file:// address reads a local mirror.

Exit status: 0 every peer present and verified, 1 some could not be fetched
or did not match (each named on stderr), 2 usage.
"""
import hashlib
import os
import stat
import sys
import tempfile
import urllib.request

DEFAULT_URL = "https://github.com/{repo}/raw/{commit}/{path}"

# name, repository, commit, path, SHA-256
PEERS = [
    ("flamegraph.pl", "brendangregg/FlameGraph", "41fee1f99f9276008b7cd112fca19dc3ea84ac32",
     "flamegraph.pl", "088f82e6848a4f12a56e1e8e8170ee6761fccf12e5615cd64630f6b087c99ea7"),
]


def default_dir():
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "etlkit", "peers")


def sha256_of(data):
    return hashlib.sha256(data).hexdigest()


def file_ok(path, want):
    try:
        with open(path, "rb") as f:
            return sha256_of(f.read()) == want
    except OSError:
        return False


def place(dest, data):
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(dest), prefix=".fetch-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    os.replace(tmp, dest)


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print("usage: fetch.py [DIR]", file=sys.stderr)
        return 2
    dest_dir = argv[1] if len(argv) == 2 else default_dir()
    template = os.environ.get("ETLKIT_PEERS_URL") or DEFAULT_URL
    bad = kept = got = 0
    for name, repo, commit, path, want in PEERS:
        dest = os.path.join(dest_dir, name)
        if file_ok(dest, want):
            kept += 1
            continue
        url = template.format(repo=repo, commit=commit, path=path)
        try:
            with urllib.request.urlopen(url, timeout=60) as r:
                data = r.read()
        except Exception as e:  # network, HTTP: each is one missing peer
            print(f"fetch.py: {name}: {url}: {e}", file=sys.stderr)
            bad += 1
            continue
        if sha256_of(data) != want:
            print(f"fetch.py: {name}: SHA-256 of {url} is {sha256_of(data)}, "
                  f"pinned {want}; not kept", file=sys.stderr)
            bad += 1
            continue
        place(dest, data)
        got += 1
    print(f"peers: {len(PEERS)} in {dest_dir}: {got} fetched, {kept} already there, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

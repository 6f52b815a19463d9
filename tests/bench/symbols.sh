#!/usr/bin/env bash
# Benchmark: a million symbol lookups against 32 PDBs (lib/etl/symbols.c +
# lib/etl/pdb.c): the real CppCon.pdb and the three NGEN PDBs of the
# ctf-net45-win7 .etl.zip, each copied 8 times under a different GUID so
# that every copy is a separate PDB to find, map and parse.  Addresses
# are random RVAs inside each PDB's code.  Prints the CPU time lib/symbols
# needs to find and load the PDBs, then for the lookups, and ns per lookup.
# Env: ETLKIT_BIN, ETLKIT_SHARED, BENCH_TMP (see tests/bench.sh);
#      SYM_BENCH_LOOKUPS (default 1000000).
set -eu
bin=${ETLKIT_BIN:?}
corpus="$ETLKIT_CORPUS"
tmp=${BENCH_TMP:-/tmp/etlkit-bench}/symbols
n=${SYM_BENCH_LOOKUPS:-1000000}
[ -n "${SYM_BENCH_KEEP:-}" ] || rm -rf "$tmp"
mkdir -p "$tmp/cache"

# 32 PDBs in symbol-server layout + the lookup list
python3 - "$corpus/perfview" "$tmp" "$n" "$bin/pdbdump" <<'PY'
import os, random, struct, subprocess, sys, zipfile
src, tmp, n, pdbdump = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
z = zipfile.ZipFile(os.path.join(src, 'ctf-net45-win7.etl.zip'))
pdbs = [('CppCon.pdb', open(os.path.join(src, 'CppCon.pdb'), 'rb').read())]
for m in z.namelist():
    if m.lower().endswith('.pdb'):
        pdbs.append((m.split('\\')[-1], z.read(m)))

def info_stream_offset(d):
    # superblock -> block map -> directory -> stream 1's first block
    bs, mapblk = struct.unpack_from('<I', d, 32)[0], struct.unpack_from('<I', d, 52)[0]
    dirp = struct.unpack_from('<I', d, mapblk * bs)[0] * bs
    ns = struct.unpack_from('<I', d, dirp)[0]
    sizes = struct.unpack_from('<%dI' % ns, d, dirp + 4)
    blocks0 = sum((s + bs - 1) // bs for s in sizes[:1] if s != 0xffffffff)
    first = struct.unpack_from('<I', d, dirp + 4 + 4 * ns + 4 * blocks0)[0]
    return first * bs

lookups = []
r = random.Random(1)
for name, data in pdbs:
    orig = os.path.join(tmp, 'orig.pdb')
    open(orig, 'wb').write(data)
    out = subprocess.run([pdbdump, '-P', orig], capture_output=True).stdout.decode()
    # per section holding function publics: from the first to the last
    span = {}
    for l in out.splitlines():
        f = l.split(' ')
        if f[0] != 'S_PUB32' or f[3] != 'flags=function': continue
        sec, rva = f[1].split(':')[0], int(f[2][4:], 16)
        lo, hi = span.get(sec, (rva, rva))
        span[sec] = (min(lo, rva), max(hi, rva))
    ranges = [(lo, hi - lo + 1) for lo, hi in span.values()]
    for copy in range(8):
        d = bytearray(data)
        off = info_stream_offset(d)
        guid = bytes(d[off + 12:off + 28])
        guid = bytes([guid[0] ^ copy]) + guid[1:]
        d[off + 12:off + 28] = guid
        age = struct.unpack_from('<I', d, off + 8)[0]
        g = guid
        key = '%08X%04X%04X%s%X' % (struct.unpack_from('<I', g)[0], struct.unpack_from('<H', g, 4)[0],
                                    struct.unpack_from('<H', g, 6)[0], g[8:].hex().upper(), age)
        dst = os.path.join(tmp, 'cache', name, key)
        os.makedirs(dst, exist_ok=True)
        open(os.path.join(dst, name), 'wb').write(d)
        lookups.append((name.replace('.pdb', '.dll'), name, key[:32], age, ranges))
with open(os.path.join(tmp, 'lookups'), 'w') as f:
    for i in range(n):
        img, pdb, guid, age, ranges = lookups[r.randrange(len(lookups))]
        va, size = ranges[r.randrange(len(ranges))]
        f.write('%s %s %s %d %x\n' % (img, pdb, guid, age, va + r.randrange(size)))
PY
[ -s "$tmp/lookups" ] || { echo "symbols: could not build the lookup list" >&2; exit 1; }
echo "symbols: $(wc -l <"$tmp/lookups") lookups, $(find "$tmp/cache" -name '*.pdb' -type f | wc -l) PDBs ($(du -sh "$tmp/cache" | cut -f1))"
"$bin/symlookup" -q -s "$tmp/cache" "$tmp/lookups" 2>&1 | grep 'lookups (' || true
[ -n "${SYM_BENCH_KEEP:-}" ] || rm -rf "$tmp"

#!/usr/bin/env python3
"""Hostile and huge zips for tests/zip.bats, written byte by byte (python's
zipfile cannot declare sizes that lie, nor share data between members), and
kept cheap: gigabytes of zeros deflate to about 1 KB per MiB by repeating one
fully flushed block, and stored gigabytes are holes in a sparse file.

  zipbomb.py overlap OUT ETL N SIZE     N central entries sharing one member:
                                        ETL's bytes then zeros up to SIZE
  zipbomb.py liar OUT HEAD DECLARED SIZE  one member declaring DECLARED bytes
                                        that inflates to HEAD's bytes then
                                        zeros up to SIZE (HEAD may be /dev/null)
  zipbomb.py notetl OUT SIZE [ETL]      a.etl: SIZE zeros (not a trace), then
                                        b.etl: ETL's bytes if given
  zipbomb.py declare OUT ETL DECLARED   a zip64 member declaring DECLARED bytes
                                        (its data: ETL's bytes, deflated)
  zipbomb.py zip64 OUT ETL SIZE         zip64: pad.bin, SIZE zeros stored (a
                                        hole), then ETL stored (stored.etl) and
                                        deflated (deflated.etl) past it
"""
import struct
import sys
import zlib

MIB = 1 << 20


def crc_zeros(crc, n):
    """crc32 of N more zero bytes, in log(N) steps (zlib's crc32_combine)."""

    def times(mat, vec):
        s, i = 0, 0
        while vec:
            if vec & 1:
                s ^= mat[i]
            vec >>= 1
            i += 1
        return s

    def square(mat):
        return [times(mat, mat[i]) for i in range(32)]

    if n == 0:
        return crc
    odd = [0xEDB88320] + [1 << i for i in range(31)]  # one zero bit
    even = square(odd)  # two zero bits
    odd = square(even)  # four
    crc ^= 0xFFFFFFFF
    while True:
        even = square(odd)
        if n & 1:
            crc = times(even, crc)
        n >>= 1
        if not n:
            break
        odd = square(even)
        if n & 1:
            crc = times(odd, crc)
        n >>= 1
        if not n:
            break
    return crc ^ 0xFFFFFFFF


def deflate_then_zeros(head, total):
    """Raw deflate of HEAD followed by zeros up to TOTAL bytes, and its CRC."""
    co = zlib.compressobj(9, zlib.DEFLATED, -15)
    out = [co.compress(head) + co.flush(zlib.Z_FULL_FLUSH)]
    zeros = total - len(head)
    # after a full flush the compressor starts afresh: one MiB of zeros
    # always deflates to the same bytes
    block = co.compress(bytes(MIB)) + co.flush(zlib.Z_FULL_FLUSH)
    out.append(block * (zeros // MIB))
    out.append(co.compress(bytes(zeros % MIB)) + co.flush())
    crc = crc_zeros(zlib.crc32(head), zeros)
    return b"".join(out), crc


def local_header(name, method, crc, csize, usize, zip64=False):
    extra = b""
    if zip64:
        extra = struct.pack("<HHQQ", 1, 16, usize, csize)
        csize = usize = 0xFFFFFFFF
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 45 if zip64 else 20, 0, method, 0, 0,
                       crc, csize, usize, len(name), len(extra)) + name + extra


def central_entry(name, method, crc, csize, usize, offset, zip64=False):
    extra = b""
    if zip64:
        extra = struct.pack("<HHQQQ", 1, 24, usize, csize, offset)
        csize = usize = offset = 0xFFFFFFFF
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45 if zip64 else 20, 0,
                       method, 0, 0, crc, csize, usize, len(name), len(extra), 0, 0, 0, 0,
                       offset) + name + extra


def end_records(f, entries, cd_offset, cd_size, zip64=False):
    if zip64:
        end64 = f.tell()
        f.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, entries, entries,
                            cd_size, cd_offset))
        f.write(struct.pack("<IIQI", 0x07064B50, 0, end64, 1))
        entries, cd_size, cd_offset = 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF
    f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, entries, entries, cd_size, cd_offset, 0))


def write_zip(path, members, central=None, zip64=False):
    """MEMBERS: (name, method, crc, data, usize), DATA bytes or the size of
    a hole (zeros).  CENTRAL: (member index, name) entries, by default one
    per member."""
    offsets = []
    with open(path, "wb") as f:
        for name, method, crc, data, usize in members:
            offsets.append(f.tell())
            csize = data if isinstance(data, int) else len(data)
            f.write(local_header(name, method, crc, csize, usize, zip64))
            if isinstance(data, int):
                f.seek(data, 1)  # a hole of zeros: no disk used
            else:
                f.write(data)
        cd = f.tell()
        central = central or [(i, m[0]) for i, m in enumerate(members)]
        for i, name in central:
            _, method, crc, data, usize = members[i]
            csize = data if isinstance(data, int) else len(data)
            f.write(central_entry(name, method, crc, csize, usize, offsets[i], zip64))
        end_records(f, len(central), cd, f.tell() - cd, zip64)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main(argv):
    cmd, out = argv[1], argv[2]
    if cmd == "overlap":
        n, size = int(argv[4]), int(argv[5])
        data, crc = deflate_then_zeros(read(argv[3]), size)
        members = [(b"m1.etl", 8, crc, data, size)]
        write_zip(out, members, [(0, b"m%d.etl" % (i + 1)) for i in range(n)])
    elif cmd == "liar":
        declared, size = int(argv[4]), int(argv[5])
        head = read(argv[3])
        data, _ = deflate_then_zeros(head, size)
        # the CRC of the bytes it declares: only the size lies
        crc = crc_zeros(zlib.crc32(head[:declared]), max(0, declared - len(head)))
        write_zip(out, [(b"liar.etl", 8, crc, data, declared)])
    elif cmd == "notetl":
        size = int(argv[3])
        data, crc = deflate_then_zeros(b"", size)
        members = [(b"a.etl", 8, crc, data, size)]
        if len(argv) > 4:
            etl = read(argv[4])
            members.append((b"b.etl", 8, zlib.crc32(etl), zlib.compress(etl, 9)[2:-4], len(etl)))
        write_zip(out, members)
    elif cmd == "declare":
        etl = read(argv[3])
        data = zlib.compress(etl, 9)[2:-4]
        write_zip(out, [(b"huge.etl", 8, zlib.crc32(etl), data, int(argv[4]))], zip64=True)
    elif cmd == "zip64":
        etl, size = read(argv[3]), int(argv[4])
        members = [(b"pad.bin", 0, crc_zeros(0, size), size, size),
                   (b"stored.etl", 0, zlib.crc32(etl), etl, len(etl)),
                   (b"deflated.etl", 8, zlib.crc32(etl), zlib.compress(etl, 9)[2:-4], len(etl))]
        write_zip(out, members, zip64=True)
    else:
        sys.exit("zipbomb.py: unknown kind %s" % cmd)


if __name__ == "__main__":
    main(sys.argv)

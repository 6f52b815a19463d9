/*
 * zip.c - just enough of PKWARE's APPNOTE to read PerfView's .etl.zip
 * and Visual Studio's .diagsession: the end-of-central-directory record
 * (zip64 locator and record too), central directory entries with their
 * zip64 extra fields, local headers, and raw deflate through zlib.
 *
 * Archives are untrusted: the reader refuses members that overlap each
 * other or the central directory (the "overlapping members" zip bomb),
 * and a member never inflates past its declared size.
 *
 * Why not a library (measured 2026-11-24 against Debian 12's libzip 1.7.3,
 * libarchive 3.6.2 and minizip 1.1, extracting the trace of
 * ctf-net45-win7.etl.zip (26 MB) and net.4.5.2.x64.etl.zip (4.9 MB)):
 * all four inflate with zlib and take the same time (0.14-0.16 s and
 * 0.08-0.09 s, within the noise of a shared machine), but only this
 * reader refuses the three bombs of tests/zip.bats.  libzip (with
 * ZIP_CHECKCONS) refuses overlapping members but inflates past the
 * declared size; libarchive inflates past it too and silently skips
 * the overlapping entry; minizip stops at the declared size without an
 * error, extracts overlapping members, and did not find a member of
 * the zip64 test archive.  They would add: libzip4 (+ libbz2, OpenSSL's
 * libcrypto); libarchive13 (+ nettle, acl, lzma, zstd, lz4, bz2,
 * libxml2, ICU, libstdc++); libminizip1 (zlib only).
 *
 * Measured again on large members (2026-11-24, Debian 12, libarchive
 * 3.6.2's seekable zip reader against this one, each streaming every
 * member to nothing in 64 KiB reads; 2-core shared machine, median of 5):
 *   - a 1.03 GB trace deflated into a 190 MB .etl.zip: 5.98 s here,
 *     5.83 s with libarchive (the same zlib does the work; the runs spread
 *     from 4.0 to 6.4 s for both); peak RSS 1.8 MB here, 5.4 MB there;
 *   - tests/zip.bats's zip64 archive (4 GiB stored hole, then a stored
 *     and a deflated trace past 4 GiB): 5.4 s and 5.2 s (median of 3),
 *     RSS 1.7 MB and 5.5 MB; both read every member.
 * Robustness, the zipbomb.py cases of tests/zip.bats and the fuzz seeds:
 * overlapping members (3 x 3.5 GB, the 16 x 1 GiB regression seed) are
 * refused here before a byte is inflated, while libarchive lists only
 * the first member and inflates all of it (3.5 GB, 20 s); a member
 * declaring 1,000 bytes that inflates to 2 GiB stops here at 1,000
 * bytes, while libarchive hands out 2,147,221,504 bytes before it
 * reports the wrong size (a streaming consumer has written them by
 * then); members that inflate to less than declared are errors in both.
 * 300 mutated seed archives: neither crashed nor hung.  So the numbers
 * do not favour the library (no faster, three times the memory), its
 * answers to hostile archives are worse for a tool that streams to
 * disk, and it brings a dozen libraries: the hand-written reader stays,
 * fuzzed (tests/fuzz/fuzz_zip.c) and tested against python's zipfile.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zlib.h>

#include "base/cli.h"
#include "etl/zip.h"

enum {
	SIG_LOCAL = 0x04034b50,
	SIG_CENTRAL = 0x02014b50,
	SIG_END = 0x06054b50,
	SIG_END64 = 0x06064b50,
	SIG_LOCATOR64 = 0x07064b50,
	END_LEN = 22,
	END64_LEN = 56,
	LOCATOR64_LEN = 20,
	CENTRAL_LEN = 46,
	LOCAL_LEN = 30,
	CHUNK = 1 << 16,
};

static uint32_t
rd16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t
rd32(const uint8_t *p)
{
	return rd16(p) | rd16(p + 2) << 16;
}

static uint64_t
rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

int
zip_magic(const void *p, size_t n)
{
	return n >= 4 && memcmp(p, "PK\3\4", 4) == 0;
}

/* Where the central directory is, from the end record(s). */
struct directory {
	uint64_t count, size, offset;
};

/*
 * The zip64 end record, found through the locator just before the end
 * record at END: it replaces the 16- and 32-bit fields that are full.
 */
static int
read_end64(int fd, uint64_t end, struct directory *d, char *err, size_t errlen)
{
	uint8_t loc[LOCATOR64_LEN], rec[END64_LEN];

	if (end < LOCATOR64_LEN || read_full_at(fd, loc, sizeof loc, end - LOCATOR64_LEN) < 0 ||
	    rd32(loc) != SIG_LOCATOR64) {
		snprintf(err, errlen, "end record at offset %llu needs a zip64 locator, which is missing",
		    (unsigned long long)end);
		return -1;
	}
	uint64_t off = rd64(loc + 8);
	if (rd32(loc + 16) > 1) {
		snprintf(err, errlen, "multi-disk zip archives are not supported");
		return -1;
	}
	if (off > end - LOCATOR64_LEN || end - LOCATOR64_LEN - off < END64_LEN ||
	    read_full_at(fd, rec, sizeof rec, off) < 0 || rd32(rec) != SIG_END64) {
		snprintf(err, errlen, "no zip64 end-of-central-directory record at offset %llu",
		    (unsigned long long)off);
		return -1;
	}
	d->count = rd64(rec + 32);
	d->size = rd64(rec + 40);
	d->offset = rd64(rec + 48);
	return 0;
}

static int
find_directory(struct zip_archive *z, struct directory *d, char *err, size_t errlen)
{
	size_t tlen = z->size < 65535 + END_LEN ? (size_t)z->size : 65535 + END_LEN, i;
	uint8_t *tail = xmalloc(tlen);
	int ret = -1;

	if (read_full_at(z->fd, tail, tlen, z->size - tlen) < 0) {
		snprintf(err, errlen, "cannot read zip directory: %s", strerror(errno));
		goto done;
	}
	for (i = tlen - END_LEN + 1; i-- > 0;)
		if (rd32(tail + i) == SIG_END)
			break;
	if (i == (size_t)-1) {
		snprintf(err, errlen, "no zip end-of-central-directory record");
		goto done;
	}
	const uint8_t *e = tail + i;
	uint64_t end = z->size - tlen + i;
	d->count = rd16(e + 10);
	d->size = rd32(e + 12);
	d->offset = rd32(e + 16);
	if (rd16(e + 4) != 0 && rd16(e + 4) != 0xffff) {
		snprintf(err, errlen, "multi-disk zip archives are not supported");
		goto done;
	}
	if (d->count == 0xffff || d->size == 0xffffffff || d->offset == 0xffffffff) {
		if (read_end64(z->fd, end, d, err, errlen) < 0)
			goto done;
	}
	if (d->offset > z->size || d->size > z->size - d->offset) {
		snprintf(err, errlen, "central directory at offset %llu runs past the end",
		    (unsigned long long)d->offset);
		goto done;
	}
	if (d->size > ZIP_MAX_DIRECTORY || d->count > d->size / CENTRAL_LEN) {
		snprintf(err, errlen, "central directory at offset %llu: %llu entries in %llu bytes "
		    "(at most %u MiB)", (unsigned long long)d->offset, (unsigned long long)d->count,
		    (unsigned long long)d->size, ZIP_MAX_DIRECTORY >> 20);
		goto done;
	}
	ret = 0;
done:
	free(tail);
	return ret;
}

/*
 * The zip64 extra field (id 1) of a central entry holds, in this order,
 * the sizes and offset whose 32-bit fields are full.
 */
static int
read_zip64_extra(struct zip_member *m, const uint8_t *x, size_t xlen)
{
	uint64_t *want[3] = { &m->usize, &m->csize, &m->local_offset };

	while (xlen >= 4) {
		size_t id = rd16(x), len = rd16(x + 2);
		if (len > xlen - 4)
			break;
		if (id == 1) {
			size_t at = 0;
			for (size_t k = 0; k < 3; k++) {
				if (*want[k] != 0xffffffff)
					continue;
				if (at + 8 > len)
					return -1;
				*want[k] = rd64(x + 4 + at);
				at += 8;
			}
			return 0;
		}
		x += 4 + len;
		xlen -= 4 + len;
	}
	return m->usize == 0xffffffff || m->csize == 0xffffffff || m->local_offset == 0xffffffff ?
	    -1 : 0;
}

static int
read_central(struct zip_archive *z, const uint8_t *cd, const struct directory *d, char *err,
    size_t errlen)
{
	size_t p = 0;

	z->m = xcalloc(d->count ? d->count : 1, sizeof *z->m);
	for (uint64_t i = 0; i < d->count; i++) {
		uint64_t at = d->offset + p;
		if (p + CENTRAL_LEN > d->size || rd32(cd + p) != SIG_CENTRAL) {
			snprintf(err, errlen, "bad central directory entry at offset %llu",
			    (unsigned long long)at);
			return -1;
		}
		const uint8_t *e = cd + p;
		size_t nlen = rd16(e + 28), xlen = rd16(e + 30), clen = rd16(e + 32);
		if (p + CENTRAL_LEN + nlen + xlen + clen > d->size) {
			snprintf(err, errlen, "central directory entry at offset %llu is cut short",
			    (unsigned long long)at);
			return -1;
		}
		struct zip_member *m = &z->m[z->n++];
		m->method = (int)rd16(e + 10);
		m->crc = rd32(e + 16);
		m->csize = rd32(e + 20);
		m->usize = rd32(e + 24);
		m->local_offset = rd32(e + 42);
		m->name = xstrndup((const char *)e + CENTRAL_LEN, nlen);
		if (rd16(e + 8) & 1)
			m->method = -1;	/* encrypted */
		if (read_zip64_extra(m, e + CENTRAL_LEN + nlen, xlen) < 0) {
			snprintf(err, errlen, "central directory entry at offset %llu (%s): "
			    "zip64 extra field missing or short", (unsigned long long)at, m->name);
			return -1;
		}
		p += CENTRAL_LEN + nlen + xlen + clen;
	}
	return 0;
}

/*
 * The sizes a local header declares, when it declares them (no data
 * descriptor, not zero): zip64 ones from its extra field.  They must be
 * the central directory's, or two readers would see two archives.
 */
static int
local_sizes_agree(const struct zip_archive *z, const struct zip_member *m, const uint8_t *lh)
{
	struct zip_member loc = { .usize = rd32(lh + 22), .csize = rd32(lh + 18) };
	size_t nlen = rd16(lh + 26), xlen = rd16(lh + 28);

	if ((rd16(lh + 6) & 8) || (loc.usize == 0 && loc.csize == 0))
		return 1;
	if (loc.usize == 0xffffffff || loc.csize == 0xffffffff) {
		uint8_t *x = xmalloc(xlen + 1);
		int ok = read_full_at(z->fd, x, xlen, m->local_offset + LOCAL_LEN + nlen) == 0 &&
		    read_zip64_extra(&loc, x, xlen) == 0;
		free(x);
		if (!ok)
			return 0;
	}
	return loc.usize == m->usize && loc.csize == m->csize;
}

/*
 * Where each member's data starts, from its local header.  A member
 * whose local header is bad or whose data runs past the end keeps
 * data_offset 0: it is reported when someone reads it.
 */
static void
read_local_headers(struct zip_archive *z)
{
	uint8_t lh[LOCAL_LEN];

	for (size_t i = 0; i < z->n; i++) {
		struct zip_member *m = &z->m[i];
		if (z->size < LOCAL_LEN || m->local_offset > z->size - LOCAL_LEN ||
		    read_full_at(z->fd, lh, LOCAL_LEN, m->local_offset) < 0 || rd32(lh) != SIG_LOCAL)
			continue;
		uint64_t off = m->local_offset + LOCAL_LEN + rd16(lh + 26) + rd16(lh + 28);
		if (off <= z->size && m->csize <= z->size - off)
			m->data_offset = off;
		m->sizes_differ = !local_sizes_agree(z, m, lh);
	}
}

struct range {
	uint64_t start, end;
	const char *name;	/* NULL: the central directory */
};

static int
cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static void
describe(char *s, size_t len, const struct range *r)
{
	if (r->name)
		snprintf(s, len, "member %s (offsets %llu-%llu)", r->name,
		    (unsigned long long)r->start, (unsigned long long)r->end);
	else
		snprintf(s, len, "the central directory (offsets %llu-%llu)",
		    (unsigned long long)r->start, (unsigned long long)r->end);
}

/*
 * Members that share bytes let a small archive declare gigabytes (the
 * same compressed data counted again and again): no two members (local
 * header and data) nor a member and the central directory may overlap.
 */
static int
check_overlaps(const struct zip_archive *z, const struct directory *d, char *err, size_t errlen)
{
	struct range *r = xcalloc(z->n + 1, sizeof *r);
	size_t n = 0;
	int ret = 0;

	if (d->size > 0)
		r[n++] = (struct range){ d->offset, d->offset + d->size, NULL };
	for (size_t i = 0; i < z->n; i++)
		if (z->m[i].data_offset)
			r[n++] = (struct range){ z->m[i].local_offset,
				z->m[i].data_offset + z->m[i].csize, z->m[i].name };
	qsort(r, n, sizeof *r, cmp_range);
	for (size_t i = 1; i < n; i++)
		if (r[i].start < r[i - 1].end) {
			char a[200], b[200];
			describe(a, sizeof a, &r[i - 1]);
			describe(b, sizeof b, &r[i]);
			snprintf(err, errlen, "%s overlaps %s: refusing a zip whose members share data",
			    b, a);
			ret = -1;
			break;
		}
	free(r);
	return ret;
}

int
zip_open_fd(struct zip_archive *z, int fd, char *err, size_t errlen)
{
	off_t end = lseek(fd, 0, SEEK_END);
	struct directory d;
	uint8_t *cd = NULL;

	memset(z, 0, sizeof *z);
	z->fd = fd;
	if (end < END_LEN) {
		snprintf(err, errlen, "not a zip archive (too short)");
		return -1;
	}
	z->size = (uint64_t)end;
	if (find_directory(z, &d, err, errlen) < 0)
		return -1;
	cd = xmalloc(d.size + 1);
	if (read_full_at(fd, cd, d.size, d.offset) < 0) {
		snprintf(err, errlen, "cannot read central directory");
		goto fail;
	}
	if (read_central(z, cd, &d, err, errlen) < 0)
		goto fail;
	read_local_headers(z);
	if (check_overlaps(z, &d, err, errlen) < 0)
		goto fail;
	free(cd);
	return 0;
fail:
	free(cd);
	zip_close(z);
	return -1;
}

long
zip_find(const struct zip_archive *z, const char *name)
{
	for (size_t i = 0; i < z->n; i++)
		if (strcmp(z->m[i].name, name) == 0)
			return (long)i;
	return -1;
}

struct zip_stream {
	const struct zip_archive *z;
	const struct zip_member *m;
	uint64_t in_off, in_left;	/* compressed bytes not read yet */
	uint64_t out;			/* uncompressed bytes given so far */
	uLong crc;
	z_stream zs;
	int inflating, ended;
	uint8_t *in;
};

struct zip_stream *
zip_stream_open(const struct zip_archive *z, size_t i, char *err, size_t errlen)
{
	const struct zip_member *m = &z->m[i];

	if (m->method != 0 && m->method != 8) {
		snprintf(err, errlen, "member %s: unsupported compression method %d", m->name, m->method);
		return NULL;
	}
	if (!m->data_offset) {
		snprintf(err, errlen, "member %s: bad local header at offset %llu, or data past the end "
		    "of the archive", m->name, (unsigned long long)m->local_offset);
		return NULL;
	}
	if (m->sizes_differ) {
		snprintf(err, errlen, "member %s: its local header at offset %llu declares other sizes "
		    "than the central directory (%llu bytes, %llu compressed)", m->name,
		    (unsigned long long)m->local_offset, (unsigned long long)m->usize,
		    (unsigned long long)m->csize);
		return NULL;
	}
	if (m->method == 0 && m->csize != m->usize) {
		snprintf(err, errlen, "member %s at offset %llu: stored, but declares %llu bytes "
		    "compressed and %llu uncompressed", m->name, (unsigned long long)m->data_offset,
		    (unsigned long long)m->csize, (unsigned long long)m->usize);
		return NULL;
	}
	struct zip_stream *s = xcalloc(1, sizeof *s);
	s->z = z;
	s->m = m;
	s->in_off = m->data_offset;
	s->in_left = m->csize;
	s->crc = crc32(0, NULL, 0);
	if (m->method == 8) {
		if (inflateInit2(&s->zs, -15) != Z_OK) {
			snprintf(err, errlen, "zlib initialisation failed");
			free(s);
			return NULL;
		}
		s->inflating = 1;
		s->in = xmalloc(CHUNK);
	}
	return s;
}

/* The archive offset of the next compressed byte zlib will use. */
static uint64_t
stream_offset(const struct zip_stream *s)
{
	return s->in_off - s->zs.avail_in;
}

static int
refill(struct zip_stream *s, char *err, size_t errlen)
{
	size_t n = s->in_left < CHUNK ? (size_t)s->in_left : CHUNK;
	if (read_full_at(s->z->fd, s->in, n, s->in_off) < 0) {
		snprintf(err, errlen, "member %s: read error at offset %llu", s->m->name,
		    (unsigned long long)s->in_off);
		return -1;
	}
	s->in_off += n;
	s->in_left -= n;
	s->zs.next_in = s->in;
	s->zs.avail_in = (uInt)n;
	return 0;
}

/*
 * Inflates into BUF[0..N) (N > 0); stops at the end of the deflate
 * stream.  Returns the bytes produced, or -1.
 */
static ssize_t
inflate_some(struct zip_stream *s, uint8_t *buf, size_t n, char *err, size_t errlen)
{
	s->zs.next_out = buf;
	s->zs.avail_out = (uInt)n;
	while (s->zs.avail_out > 0 && !s->ended) {
		if (s->zs.avail_in == 0 && s->in_left > 0 && refill(s, err, errlen) < 0)
			return -1;
		int zr = inflate(&s->zs, Z_NO_FLUSH);
		if (zr == Z_STREAM_END)
			s->ended = 1;
		else if (zr == Z_BUF_ERROR && s->zs.avail_in == 0 && s->in_left == 0) {
			snprintf(err, errlen, "member %s: deflate data ends early at offset %llu, "
			    "after %llu of its %llu bytes", s->m->name,
			    (unsigned long long)stream_offset(s),
			    (unsigned long long)(s->out + n - s->zs.avail_out),
			    (unsigned long long)s->m->usize);
			return -1;
		} else if (zr != Z_OK && zr != Z_BUF_ERROR) {
			snprintf(err, errlen, "member %s: corrupt deflate data near offset %llu",
			    s->m->name, (unsigned long long)stream_offset(s));
			return -1;
		}
	}
	return (ssize_t)(n - s->zs.avail_out);
}

/* At the declared size: the member must end there, with its CRC. */
static int
check_end(struct zip_stream *s, char *err, size_t errlen)
{
	if (s->inflating && !s->ended) {
		uint8_t extra[64];
		ssize_t got = inflate_some(s, extra, sizeof extra, err, errlen);
		if (got < 0)
			return -1;
		if (got > 0) {
			snprintf(err, errlen, "member %s: inflates to more than its declared %llu bytes "
			    "(stopped at offset %llu)", s->m->name, (unsigned long long)s->m->usize,
			    (unsigned long long)stream_offset(s));
			return -1;
		}
	}
	if (s->crc != s->m->crc) {
		snprintf(err, errlen, "member %s at offset %llu: CRC mismatch (archive corrupt)",
		    s->m->name, (unsigned long long)s->m->data_offset);
		return -1;
	}
	return 0;
}

ssize_t
zip_stream_read(struct zip_stream *s, void *buf, size_t n, char *err, size_t errlen)
{
	uint64_t left = s->m->usize - s->out;
	ssize_t got;

	if (left == 0)
		return check_end(s, err, errlen) < 0 ? -1 : 0;
	if (n > left)
		n = (size_t)left;
	if (n > CHUNK)
		n = CHUNK;
	if (s->inflating) {
		got = inflate_some(s, buf, n, err, errlen);
		if (got < 0)
			return -1;
		if (got == 0) {
			snprintf(err, errlen, "member %s: inflates to %llu bytes, less than its "
			    "declared %llu (deflate data ends at offset %llu)", s->m->name,
			    (unsigned long long)s->out, (unsigned long long)s->m->usize,
			    (unsigned long long)stream_offset(s));
			return -1;
		}
	} else {
		if (read_full_at(s->z->fd, buf, n, s->in_off) < 0) {
			snprintf(err, errlen, "member %s: read error at offset %llu", s->m->name,
			    (unsigned long long)s->in_off);
			return -1;
		}
		s->in_off += n;
		got = (ssize_t)n;
	}
	s->crc = crc32(s->crc, buf, (uInt)got);
	s->out += (uint64_t)got;
	return got;
}

void
zip_stream_close(struct zip_stream *s)
{
	if (!s)
		return;
	if (s->inflating)
		inflateEnd(&s->zs);
	free(s->in);
	free(s);
}

uint64_t
zip_free_space(int fd)
{
	struct statvfs vfs;
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || fstatvfs(fd, &vfs) < 0 ||
	    vfs.f_blocks == 0)
		return UINT64_MAX;
	return (uint64_t)vfs.f_bavail * (vfs.f_frsize ? vfs.f_frsize : vfs.f_bsize);
}

/* ---------- members inflated ahead, on a thread of their own ---------- */

/*
 * A PerfView .etl.zip holds the PDBs of the trace's managed images
 * (symbols\NAME.pdb\KEY\NAME.pdb).  etl2evt asks for one only when its
 * second pass reaches a frame in it, and then waited for it to inflate:
 * about a tenth of decoding ctf-net45-win7, on the one busy core.  With
 * zip_inflate_ahead() a thread inflates them while the trace itself is
 * inflated and read, each into an unlinked temporary file, and
 * zip_extract_fd() copies the one asked for.  A member the thread could
 * not inflate is inflated there again, as before, for the same message.
 */
enum { AHEAD_WAITING, AHEAD_DONE, AHEAD_FAILED };

static struct {
	int on;
	dev_t dev;
	ino_t ino;
	struct zip_archive z;	/* the thread's own reading of the directory */
	struct ahead_member {
		size_t i;	/* in z */
		int fd;		/* the inflated member, once AHEAD_DONE */
		int state;
	} *m;
	size_t n;
	int stop;
	pthread_t thread;
	pthread_mutex_t mu;	/* guards state and stop */
	pthread_cond_t cv;
} ahead;

static int extract_fd(const struct zip_archive *z, size_t i, int outfd, char *err, size_t errlen);

static int
ends_with_ci(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && strcasecmp(s + a - b, suf) == 0;
}

static int
ahead_file(void)
{
	return temp_file_unlinked("etlkit-member");
}

static void *
ahead_work(void *arg)
{
	char err[512];

	(void)arg;
	for (size_t k = 0; k < ahead.n; k++) {
		pthread_mutex_lock(&ahead.mu);
		int stop = ahead.stop;
		pthread_mutex_unlock(&ahead.mu);
		int fd = stop ? -1 : ahead_file();
		int ok = fd >= 0 && extract_fd(&ahead.z, ahead.m[k].i, fd, err, sizeof err) == 0;
		if (!ok && fd >= 0)
			close(fd);
		pthread_mutex_lock(&ahead.mu);
		ahead.m[k].fd = ok ? fd : -1;
		ahead.m[k].state = ok ? AHEAD_DONE : AHEAD_FAILED;
		pthread_cond_broadcast(&ahead.cv);
		pthread_mutex_unlock(&ahead.mu);
	}
	return NULL;
}

int
zip_inflate_ahead(int fd, const char *prefix, const char *suffix)
{
	char err[512];
	struct stat st;
	uint64_t need = 0;
	int dfd;

	if (ahead.on || fstat(fd, &st) < 0 || (dfd = dup(fd)) < 0)
		return -1;
	if (zip_open_fd(&ahead.z, dfd, err, sizeof err) < 0) {
		close(dfd);
		return -1;
	}
	ahead.m = xcalloc(ahead.z.n ? ahead.z.n : 1, sizeof *ahead.m);
	for (size_t i = 0; i < ahead.z.n; i++) {
		const struct zip_member *m = &ahead.z.m[i];
		if (strncasecmp(m->name, prefix, strlen(prefix)) != 0 || !ends_with_ci(m->name, suffix) ||
		    m->method < 0)
			continue;
		ahead.m[ahead.n++].i = i;
		need = m->usize > UINT64_MAX - need ? UINT64_MAX : need + m->usize;
	}
	int probe = ahead_file();
	uint64_t room = probe >= 0 ? zip_free_space(probe) : 0;
	if (probe >= 0)
		close(probe);
	ahead.dev = st.st_dev;
	ahead.ino = st.st_ino;
	pthread_mutex_init(&ahead.mu, NULL);
	pthread_cond_init(&ahead.cv, NULL);
	if (ahead.n && need <= room && pthread_create(&ahead.thread, NULL, ahead_work, NULL) == 0) {
		ahead.on = 1;
		return 0;
	}
	pthread_mutex_destroy(&ahead.mu);
	pthread_cond_destroy(&ahead.cv);
	free(ahead.m);
	ahead.m = NULL;
	ahead.n = 0;
	zip_close(&ahead.z);
	close(dfd);
	return -1;
}

/* Member I of Z, inflated ahead: its temporary file (the caller's now), or -1. */
static int
ahead_take(const struct zip_archive *z, size_t i)
{
	struct stat st;
	int fd = -1;

	if (!ahead.on || fstat(z->fd, &st) < 0 || st.st_dev != ahead.dev || st.st_ino != ahead.ino)
		return -1;
	pthread_mutex_lock(&ahead.mu);
	for (size_t k = 0; k < ahead.n; k++) {
		if (ahead.z.m[ahead.m[k].i].local_offset != z->m[i].local_offset)
			continue;
		while (ahead.m[k].state == AHEAD_WAITING)
			pthread_cond_wait(&ahead.cv, &ahead.mu);
		if (ahead.m[k].state == AHEAD_DONE) {
			fd = ahead.m[k].fd;
			ahead.m[k].state = AHEAD_FAILED;	/* taken: a second time, inflated again */
		}
		break;
	}
	pthread_mutex_unlock(&ahead.mu);
	return fd;
}

void
zip_inflate_ahead_end(void)
{
	if (!ahead.on)
		return;
	pthread_mutex_lock(&ahead.mu);
	ahead.stop = 1;
	pthread_mutex_unlock(&ahead.mu);
	pthread_join(ahead.thread, NULL);
	for (size_t k = 0; k < ahead.n; k++)
		if (ahead.m[k].state == AHEAD_DONE)
			close(ahead.m[k].fd);
	pthread_mutex_destroy(&ahead.mu);
	pthread_cond_destroy(&ahead.cv);
	close(ahead.z.fd);
	zip_close(&ahead.z);
	free(ahead.m);
	memset(&ahead, 0, sizeof ahead);
}

/* Copies the N bytes of FROM (from its start) to OUTFD. */
static int
copy_fd(int from, uint64_t n, int outfd, char *err, size_t errlen)
{
	uint8_t *buf = xmalloc(CHUNK);
	int rc = 0;

	for (uint64_t off = 0; off < n && rc == 0;) {
		size_t k = n - off < CHUNK ? (size_t)(n - off) : CHUNK;
		if (read_full_at(from, buf, k, off) < 0) {
			snprintf(err, errlen, "temporary file: %s", strerror(errno));
			rc = -1;
		} else if (write_full(outfd, buf, k) < 0) {
			snprintf(err, errlen, "write error: %s", strerror(errno));
			rc = -1;
		}
		off += k;
	}
	free(buf);
	return rc;
}

int
zip_extract_fd(const struct zip_archive *z, size_t i, int outfd, char *err, size_t errlen)
{
	const struct zip_member *m = &z->m[i];

	if (m->usize <= zip_free_space(outfd)) {
		int fd = ahead_take(z, i);
		if (fd >= 0) {
			int rc = copy_fd(fd, m->usize, outfd, err, errlen);
			close(fd);
			return rc;
		}
	}
	return extract_fd(z, i, outfd, err, errlen);
}

static int
extract_fd(const struct zip_archive *z, size_t i, int outfd, char *err, size_t errlen)
{
	const struct zip_member *m = &z->m[i];
	uint64_t room = zip_free_space(outfd);
	struct zip_stream *s;
	uint8_t *buf;
	ssize_t got;

	if (m->usize > room) {
		snprintf(err, errlen, "member %s declares %llu bytes; the temporary file system has "
		    "only %llu free", m->name, (unsigned long long)m->usize, (unsigned long long)room);
		return -1;
	}
	if (!(s = zip_stream_open(z, i, err, errlen)))
		return -1;
	buf = xmalloc(CHUNK);
	while ((got = zip_stream_read(s, buf, CHUNK, err, errlen)) > 0)
		if (write_full(outfd, buf, (size_t)got) < 0) {
			snprintf(err, errlen, "write error: %s", strerror(errno));
			got = -1;
			break;
		}
	free(buf);
	zip_stream_close(s);
	return got < 0 ? -1 : 0;
}

void
zip_close(struct zip_archive *z)
{
	for (size_t i = 0; i < z->n; i++)
		free(z->m[i].name);
	free(z->m);
	z->m = NULL;
	z->n = 0;
}

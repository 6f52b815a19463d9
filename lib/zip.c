/*
 * zip.c - just enough of PKWARE's APPNOTE to read PerfView's .etl.zip:
 * the end-of-central-directory record, central directory entries,
 * local headers, and raw deflate through zlib.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cli.h"
#include "zip.h"

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

int
zip_magic(const void *p, size_t n)
{
	return n >= 4 && memcmp(p, "PK\3\4", 4) == 0;
}

int
zip_open_fd(struct zip_archive *z, int fd, char *err, size_t errlen)
{
	off_t end = lseek(fd, 0, SEEK_END);
	uint8_t *tail = NULL;
	size_t tlen, i;

	memset(z, 0, sizeof *z);
	z->fd = fd;
	if (end < 22) {
		snprintf(err, errlen, "not a zip archive (too short)");
		return -1;
	}
	z->size = (uint64_t)end;
	tlen = z->size < 65536 + 22 ? (size_t)z->size : 65536 + 22;
	tail = xmalloc(tlen);
	if (read_full_at(fd, tail, tlen, z->size - tlen) < 0) {
		snprintf(err, errlen, "cannot read zip directory: %s", strerror(errno));
		goto fail;
	}
	for (i = tlen - 22 + 1; i-- > 0;)
		if (rd32(tail + i) == 0x06054b50)
			break;
	if (i == (size_t)-1) {
		snprintf(err, errlen, "no zip end-of-central-directory record");
		goto fail;
	}
	uint64_t count = rd16(tail + i + 10), cdsize = rd32(tail + i + 12), cdoff = rd32(tail + i + 16);
	if (count == 0xffff || cdoff == 0xffffffff) {
		snprintf(err, errlen, "zip64 archives are not supported");
		goto fail;
	}
	if (cdoff + cdsize > z->size || cdsize > (64u << 20)) {
		snprintf(err, errlen, "central directory at offset %llu runs past the end",
		    (unsigned long long)cdoff);
		goto fail;
	}
	free(tail);
	tail = xmalloc(cdsize + 1);
	if (read_full_at(fd, tail, cdsize, cdoff) < 0) {
		snprintf(err, errlen, "cannot read central directory");
		goto fail;
	}
	z->m = xcalloc(count ? count : 1, sizeof *z->m);
	size_t p = 0;
	for (i = 0; i < count; i++) {
		if (p + 46 > cdsize || rd32(tail + p) != 0x02014b50) {
			snprintf(err, errlen, "bad central directory entry at offset %llu",
			    (unsigned long long)(cdoff + p));
			goto fail;
		}
		const uint8_t *e = tail + p;
		size_t nlen = rd16(e + 28), xlen = rd16(e + 30), clen = rd16(e + 32);
		if (p + 46 + nlen + xlen + clen > cdsize) {
			snprintf(err, errlen, "central directory entry at offset %llu is cut short",
			    (unsigned long long)(cdoff + p));
			goto fail;
		}
		struct zip_member *m = &z->m[z->n++];
		m->method = (int)rd16(e + 10);
		m->crc = rd32(e + 16);
		m->csize = rd32(e + 20);
		m->usize = rd32(e + 24);
		m->local_offset = rd32(e + 42);
		m->name = xstrndup((const char *)e + 46, nlen);
		if (rd16(e + 8) & 1)
			m->method = -1;	/* encrypted */
		p += 46 + nlen + xlen + clen;
	}
	free(tail);
	return 0;
fail:
	free(tail);
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

static int
write_all(int fd, const void *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

int
zip_extract_fd(const struct zip_archive *z, size_t i, int outfd, char *err, size_t errlen)
{
	const struct zip_member *m = &z->m[i];
	uint8_t lh[30], *in = NULL, *out = NULL;
	z_stream zs;
	int ret = -1, zinit = 0;
	uLong crc = crc32(0, NULL, 0);

	if (m->method != 0 && m->method != 8) {
		snprintf(err, errlen, "member %s: unsupported compression method %d", m->name, m->method);
		return -1;
	}
	if (read_full_at(z->fd, lh, 30, m->local_offset) < 0 || rd32(lh) != 0x04034b50) {
		snprintf(err, errlen, "member %s: bad local header at offset %llu", m->name,
		    (unsigned long long)m->local_offset);
		return -1;
	}
	uint64_t off = m->local_offset + 30 + rd16(lh + 26) + rd16(lh + 28);
	if (off + m->csize > z->size) {
		snprintf(err, errlen, "member %s: data at offset %llu runs past the end of the archive",
		    m->name, (unsigned long long)off);
		return -1;
	}
	enum { CHUNK = 1 << 16 };
	in = xmalloc(CHUNK);
	out = xmalloc(CHUNK);
	memset(&zs, 0, sizeof zs);
	if (m->method == 8) {
		if (inflateInit2(&zs, -15) != Z_OK) {
			snprintf(err, errlen, "zlib initialisation failed");
			goto done;
		}
		zinit = 1;
	}
	uint64_t left = m->csize, total = 0;
	int zr = Z_OK;
	while (left > 0 || (m->method == 8 && zr != Z_STREAM_END)) {
		size_t n = left < CHUNK ? (size_t)left : CHUNK;
		if (n > 0 && read_full_at(z->fd, in, n, off) < 0) {
			snprintf(err, errlen, "member %s: read error at offset %llu", m->name,
			    (unsigned long long)off);
			goto done;
		}
		off += n;
		left -= n;
		if (m->method == 0) {
			crc = crc32(crc, in, (uInt)n);
			total += n;
			if (write_all(outfd, in, n) < 0) {
				snprintf(err, errlen, "write error: %s", strerror(errno));
				goto done;
			}
			continue;
		}
		zs.next_in = in;
		zs.avail_in = (uInt)n;
		do {
			zs.next_out = out;
			zs.avail_out = CHUNK;
			zr = inflate(&zs, Z_NO_FLUSH);
			if (zr != Z_OK && zr != Z_STREAM_END && !(zr == Z_BUF_ERROR && n == 0 && left == 0)) {
				snprintf(err, errlen, "member %s: corrupt deflate data near offset %llu",
				    m->name, (unsigned long long)off);
				goto done;
			}
			size_t got = CHUNK - zs.avail_out;
			crc = crc32(crc, out, (uInt)got);
			total += got;
			if (write_all(outfd, out, got) < 0) {
				snprintf(err, errlen, "write error: %s", strerror(errno));
				goto done;
			}
			if (zr == Z_BUF_ERROR || zr == Z_STREAM_END)
				break;
		} while (zs.avail_out == 0 || zs.avail_in > 0);
		if (n == 0 && zr != Z_STREAM_END) {
			snprintf(err, errlen, "member %s: deflate data ends early", m->name);
			goto done;
		}
	}
	if (total != m->usize || crc != m->crc) {
		snprintf(err, errlen, "member %s: size or CRC mismatch (archive corrupt)", m->name);
		goto done;
	}
	ret = 0;
done:
	if (zinit)
		inflateEnd(&zs);
	free(in);
	free(out);
	return ret;
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

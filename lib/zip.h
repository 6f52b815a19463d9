/*
 * zip.h - reading members of a zip archive (PerfView .etl.zip, Visual
 * Studio .diagsession): list the members, extract one to a descriptor.
 * Stored and deflated members; no zip64, no encryption (clear errors).
 */
#ifndef ETLKIT_ZIP_H
#define ETLKIT_ZIP_H

#include <stddef.h>
#include <stdint.h>

struct zip_member {
	char *name;		/* as stored, '/' or '\\' separators */
	uint64_t csize, usize;	/* compressed / uncompressed bytes */
	uint64_t local_offset;	/* offset of the local file header */
	uint32_t crc;
	int method;		/* 0 stored, 8 deflate */
};

struct zip_archive {
	int fd;
	uint64_t size;
	size_t n;
	struct zip_member *m;
};

/* Nonzero if the first bytes look like a zip local header ("PK\3\4"). */
int zip_magic(const void *p, size_t n);
/*
 * Reads the central directory of the zip open on FD (which must be
 * seekable; the archive does not own it).  Returns 0, or -1 with a
 * message in ERR.
 */
int zip_open_fd(struct zip_archive *z, int fd, char *err, size_t errlen);
/* Index of the member named NAME (exact), or -1. */
long zip_find(const struct zip_archive *z, const char *name);
/*
 * Writes member I, inflated, to OUTFD and checks its CRC.  Returns 0,
 * or -1 with a message in ERR.
 */
int zip_extract_fd(const struct zip_archive *z, size_t i, int outfd, char *err, size_t errlen);
void zip_close(struct zip_archive *z);

#endif

/*
 * zip.h - reading members of a zip archive (PerfView .etl.zip, Visual
 * Studio .diagsession): list the members, read one as a stream or
 * extract it to a descriptor.  Stored and deflated members, zip64;
 * no encryption, no multi-disk archives (clear errors).
 */
#ifndef ETLKIT_ZIP_H
#define ETLKIT_ZIP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct zip_member {
	char *name;		/* as stored, '/' or '\\' separators */
	uint64_t csize, usize;	/* compressed / uncompressed bytes */
	uint64_t local_offset;	/* offset of the local file header */
	uint64_t data_offset;	/* offset of its data; 0 if the local header is bad */
	uint32_t crc;
	int method;		/* 0 stored, 8 deflate, -1 encrypted */
	int sizes_differ;	/* the local header declares other sizes */
};

struct zip_archive {
	int fd;
	uint64_t size;
	size_t n;
	struct zip_member *m;
};

/* Central directories larger than this are refused (about 700,000 members). */
#define ZIP_MAX_DIRECTORY (64u << 20)

/* Nonzero if the first bytes look like a zip local header ("PK\3\4"). */
int zip_magic(const void *p, size_t n);
/*
 * Reads the central directory of the zip open on FD (which must be
 * seekable; the archive does not own it), zip64 included, and the local
 * headers.  Refuses an archive whose members (local header and data) or
 * central directory overlap.  Returns 0, or -1 with a message in ERR.
 */
int zip_open_fd(struct zip_archive *z, int fd, char *err, size_t errlen);
/* Index of the member named NAME (exact), or -1. */
long zip_find(const struct zip_archive *z, const char *name);

/*
 * Reading member I as a stream of its uncompressed bytes.  Never more
 * than the declared uncompressed size comes out: a member whose data
 * inflates to more or less, or whose CRC differs, is an error naming
 * the member and the archive offset.
 */
struct zip_stream;
struct zip_stream *zip_stream_open(const struct zip_archive *z, size_t i, char *err, size_t errlen);
/*
 * Up to N bytes into BUF.  Returns how many (> 0), 0 at the end of the
 * member (its size and CRC checked), or -1 with a message in ERR.
 */
ssize_t zip_stream_read(struct zip_stream *s, void *buf, size_t n, char *err, size_t errlen);
void zip_stream_close(struct zip_stream *s);

/*
 * Writes member I, inflated, to OUTFD (at most its declared size) and
 * checks its CRC.  When OUTFD is a file, first checks that its file
 * system has room for the declared size.  Returns 0, or -1 with a
 * message in ERR.
 */
int zip_extract_fd(const struct zip_archive *z, size_t i, int outfd, char *err, size_t errlen);
/*
 * Starts a thread that inflates the members of the zip open on FD whose
 * names start with PREFIX and end with SUFFIX (either case) into unlinked
 * temporary files, so that zip_extract_fd() of one of them (through any
 * descriptor of the same file) is a copy.  Only when their declared sizes
 * fit the temporary file system.  One archive per process; 0 if started.
 * zip_inflate_ahead_end() stops the thread and drops what it inflated.
 */
int zip_inflate_ahead(int fd, const char *prefix, const char *suffix);
void zip_inflate_ahead_end(void);
/*
 * Free bytes on the file system holding FD, or UINT64_MAX when it
 * cannot tell (not a file system that reports blocks, e.g. a pipe).
 */
uint64_t zip_free_space(int fd);
void zip_close(struct zip_archive *z);

#endif

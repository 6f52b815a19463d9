/*
 * mapfile.h - a regular file mapped into memory, read-only, guarded.
 *
 * A reader that keeps slices of its input (diff keeps every distinct
 * stack, etl2evt reads a trace's buffers in place, the PDB reader its
 * streams) can point into a mapping instead of copying the bytes: the
 * pages belong to the page cache, are shared with every other reader of
 * the file and cost no anonymous memory.  Only regular files are mapped;
 * stdin, pipes and anything mmap refuses are read the ordinary way, so
 * a caller always has a fallback.
 *
 * Every mapping is guarded: a file cut shorter by another process while
 * it is mapped would kill the tool with SIGBUS and no word; instead one
 * line names the file ("TOOL: FILE: the file became shorter while it
 * was read ...") and the tool exits 2.
 */
#ifndef ETLKIT_MAPFILE_H
#define ETLKIT_MAPFILE_H

#include <stddef.h>
#include <stdint.h>

struct mapfile {
	const char *p;		/* the file's bytes (not NUL-terminated) */
	size_t n;
	void *map;		/* the mapping P lies in (from a page boundary: map_release) */
	size_t maplen;
};

/*
 * Maps PATH.  Returns 1, or 0 when it is not a non-empty regular file
 * that could be mapped ("-", a pipe, a directory, a missing file): then
 * M is empty and the caller reads PATH another way.  Reports nothing
 * itself (the reading path does, with its usual message); a FIFO is
 * never opened (see mapfile.c).
 */
int mapfile_open(struct mapfile *m, const char *path);

/*
 * Maps LEN bytes from byte OFFSET of the regular file open as FD (LEN 0:
 * to its end), guarded with NAME in the message.  Returns 1, or 0 with
 * errno set (ENODEV: not a regular file; EINVAL: nothing to map there;
 * EFBIG: more than the address space) and M empty.
 */
int mapfile_map_fd(struct mapfile *m, int fd, uint64_t offset, uint64_t len, const char *name);

void mapfile_close(struct mapfile *m);

#endif

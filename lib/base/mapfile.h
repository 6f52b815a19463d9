/*
 * mapfile.h - a regular file mapped into memory, read-only.
 *
 * A reader that keeps slices of its input (diff keeps every distinct
 * stack) can point into a mapping instead of copying the text: the
 * pages belong to the page cache, are shared with every other reader of
 * the file and cost no anonymous memory.  Only regular files are mapped;
 * stdin, pipes and anything mmap refuses are read the ordinary way, so
 * a caller always has a fallback and mapfile_open() never reports an
 * error itself (the reading path does, with its usual message).
 */
#ifndef ETLKIT_MAPFILE_H
#define ETLKIT_MAPFILE_H

#include <stddef.h>

struct mapfile {
	const char *p;		/* the file's bytes (not NUL-terminated) */
	size_t n;
};

/*
 * Maps PATH.  Returns 1, or 0 when it is not a non-empty regular file
 * that could be mapped ("-", a pipe, a directory, a missing file): then
 * M is empty and the caller reads PATH another way.
 */
int mapfile_open(struct mapfile *m, const char *path);
void mapfile_close(struct mapfile *m);

#endif

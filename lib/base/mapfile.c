/*
 * mapfile.c - read-only mappings of regular files (see mapfile.h).
 *
 * MAP_PRIVATE and PROT_READ: nothing is ever written through the
 * mapping, so no page is copied and a file changed by another process
 * while it is read shows its new bytes at worst (as read(2) would).
 */
#define _POSIX_C_SOURCE 200809L
#include "base/mapfile.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int
mapfile_open(struct mapfile *m, const char *path)
{
	struct stat st;
	void *p;
	int fd;

	memset(m, 0, sizeof(*m));
	if (path == NULL || strcmp(path, "-") == 0)
		return 0;
	if ((fd = open(path, O_RDONLY)) < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uintmax_t)st.st_size > SIZE_MAX) {
		close(fd);
		return 0;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 0;
	m->p = p;
	m->n = (size_t)st.st_size;
	return 1;
}

void
mapfile_close(struct mapfile *m)
{
	if (m->p != NULL)
		munmap((void *)(uintptr_t)m->p, m->n);
	memset(m, 0, sizeof(*m));
}

/*
 * fuzz.h - what several libFuzzer harnesses share: the error callback
 * of the ETL reader (every message must say something), the walk over
 * an input's lines, and the input as a file (a memfd).  Header-only
 * (static inline) because tests/fuzz.sh builds each harness from its
 * one .c file; memfd_create needs _GNU_SOURCE, which tests/fuzz.sh
 * defines for every harness.
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

/* An etl_error_fn: the reader may report damage, but never in silence. */
static inline void
fuzz_on_error(void *ctx, uint64_t offset, const char *msg)
{
	(void)ctx;
	(void)offset;
	if (msg == NULL || *msg == '\0')
		abort();
}

/*
 * Calls ONE on each line of DATA[0..SIZE), NUL-terminated in a private
 * copy (the parsers are handed writable text, as the tools hand them);
 * with STRIP_CR a line's trailing '\r' is removed first.
 */
static inline void
fuzz_each_line(const uint8_t *data, size_t size, int strip_cr,
    void (*one)(char *line, size_t len))
{
	char *buf = malloc(size + 1);
	char *p, *end, *nl;

	memcpy(buf, data, size);
	buf[size] = '\0';
	p = buf;
	end = buf + size;
	while (p < end) {
		size_t n;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		*nl = '\0';
		n = (size_t)(nl - p);
		if (strip_cr && n > 0 && p[n - 1] == '\r')
			p[--n] = '\0';
		one(p, n);
		p = nl + 1;
	}
	free(buf);
}

/* A memfd holding DATA[0..SIZE), read from its start: the input as the
 * tools get a file (read(2), pread(2), mmap(2)). */
static inline int
fuzz_memfd(const char *name, const uint8_t *data, size_t size)
{
	int fd = memfd_create(name, 0);

	if (fd < 0 || (size > 0 && write(fd, data, size) != (ssize_t)size))
		abort();
	lseek(fd, 0, SEEK_SET);
	return fd;
}

#endif

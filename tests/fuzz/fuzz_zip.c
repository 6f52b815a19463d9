/*
 * fuzz_zip - libFuzzer harness for the zip reader (lib/etl/zip.c) that opens
 * PerfView .etl.zip and Visual Studio .diagsession files.
 *
 * INPUT:  a zip archive (any bytes), handed over through a memfd.
 * CHECKS: no crash/UB/leak; a message on every failure; every member that
 *         extracts without error produced exactly its uncompressed size;
 *         zip_find finds each listed name; the members of an archive that
 *         opens (local header to end of data) lie in the file and do not
 *         overlap.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "etl/zip.h"
#include "fuzz.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Members whose local header was read lie inside the file, apart. */
static void
check_ranges(const struct zip_archive *z)
{
	for (size_t i = 0; i < z->n && i < 64; i++) {
		const struct zip_member *a = &z->m[i];
		if (!a->data_offset)
			continue;
		if (a->data_offset < a->local_offset + 30 || a->data_offset + a->csize > z->size)
			abort();
		for (size_t j = 0; j < i; j++) {
			const struct zip_member *b = &z->m[j];
			if (b->data_offset && a->local_offset < b->data_offset + b->csize &&
			    b->local_offset < a->data_offset + a->csize)
				abort();	/* two members share bytes */
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zip_archive z;
	char err[512];
	int fd = fuzz_memfd("zip", data, size), outfd;
	size_t i;

	(void)zip_magic(data, size);
	memset(&z, 0, sizeof(z));
	err[0] = '\0';
	if (zip_open_fd(&z, fd, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			abort();
		close(fd);
		return 0;
	}
	check_ranges(&z);
	outfd = memfd_create("member", 0);
	for (i = 0; i < z.n && i < 16; i++) {
		struct stat st;
		long found;

		if (z.m[i].name == NULL)
			abort();
		found = zip_find(&z, z.m[i].name);
		if (found < 0 || (size_t)found > i)
			abort();	/* the first member of that name */
		if (ftruncate(outfd, 0) != 0 || lseek(outfd, 0, SEEK_SET) != 0)
			abort();
		err[0] = '\0';
		if (zip_extract_fd(&z, i, outfd, err, sizeof(err)) == 0) {
			if (fstat(outfd, &st) != 0 || (uint64_t)st.st_size != z.m[i].usize)
				abort();	/* "ok" but a short or long member */
		} else if (err[0] == '\0')
			abort();
	}
	close(outfd);
	zip_close(&z);
	close(fd);
	return 0;
}

/*
 * atomicfile.c - temp file + rename outputs (see atomicfile.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "base/atomicfile.h"
#include "base/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *
atomicfile_tmpname(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	size_t n = strlen(path) + 48;
	char *tmp = xmalloc(n);

	snprintf(tmp, n, "%.*s.%s.tmp.%ld", (int)dirlen, path,
	    slash ? slash + 1 : path, (long)getpid());
	return tmp;
}

void
atomicfile_sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrndup(path, (size_t)(slash - path) + (slash == path)) : xstrdup(".");
	int fd = open(dir, O_RDONLY);

	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
}

void
atomicfile_open(struct atomicfile *ao, const char *path)
{
	struct stat st;

	memset(ao, 0, sizeof(*ao));
	if (path == NULL || strcmp(path, "-") == 0) {
		ob_open(&ao->ob, "-");
		return;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a device or a pipe (/dev/null, /dev/full, a fifo): write it directly */
		ob_open(&ao->ob, path);
		return;
	}
	ao->path = xstrdup(path);
	ao->tmp = atomicfile_tmpname(path);
	{
		/* an unwritable place is reported under the name the user gave */
		FILE *fp = fopen(ao->tmp, "w");

		if (fp == NULL)
			cli_fatal("%s: %s", path, strerror(errno));
		fclose(fp);
	}
	ob_open(&ao->ob, ao->tmp);
	ao->ob.name = ao->path;	/* messages name the real output */
}

void
atomicfile_commit(struct atomicfile *ao)
{
	if (ao->path == NULL) {
		ob_close(&ao->ob);
		return;
	}
	ob_flush(&ao->ob);
	if (fflush(ao->ob.fp) != 0 || fsync(fileno(ao->ob.fp)) != 0) {
		int e = errno;

		unlink(ao->tmp);
		cli_fatal("%s: write error: %s", ao->path, strerror(e));
	}
	ob_close(&ao->ob);
	if (rename(ao->tmp, ao->path) != 0) {
		int e = errno;

		unlink(ao->tmp);
		cli_fatal("%s: cannot rename into place: %s", ao->path, strerror(e));
	}
	atomicfile_sync_dir(ao->path);
	free(ao->path);
	free(ao->tmp);
	ao->path = ao->tmp = NULL;
}

void
atomicfile_abort(struct atomicfile *ao)
{
	if (ao->path == NULL)
		return;
	if (ao->ob.fp)
		fclose(ao->ob.fp);
	free(ao->ob.buf);
	unlink(ao->tmp);
	free(ao->path);
	free(ao->tmp);
	ao->path = ao->tmp = NULL;
}

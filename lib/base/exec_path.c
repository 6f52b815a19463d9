/*
 * exec_path.c - find the etlkit tools (see exec_path.h).
 */
#define _XOPEN_SOURCE 700	/* realpath */
#include "base/exec_path.h"
#include "base/cli.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static char *
join_path(const char *dir, size_t dirlen, const char *name)
{
	size_t n = dirlen + 1 + strlen(name) + 1;
	char *p = xmalloc(n);

	snprintf(p, n, "%.*s/%s", (int)dirlen, dir, name);
	return p;
}

/* ARGV0 as the shell found it: itself when it has a slash, else along $PATH. */
static char *
argv0_path(const char *argv0)
{
	const char *path = getenv("PATH");

	if (strchr(argv0, '/'))
		return xstrdup(argv0);
	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);
		char *p = join_path(n ? path : ".", n ? n : 1, argv0);

		if (access(p, X_OK) == 0)
			return p;
		free(p);
		path = colon ? colon + 1 : NULL;
	}
	return NULL;
}

char *
exec_path_self_dir(const char *argv0)
{
	char buf[PATH_MAX], *p, *slash;
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n > 0) {
		buf[n] = '\0';
	} else {
		/* no /proc (macOS, the BSDs): resolve what the shell ran */
		char *found = argv0 ? argv0_path(argv0) : NULL;
		char *real = found ? realpath(found, buf) : NULL;

		free(found);
		if (real == NULL)
			return NULL;
	}
	slash = strrchr(buf, '/');
	if (slash == NULL)
		return NULL;
	p = xstrndup(buf, (size_t)(slash - buf));
	return p;
}

/*
 * The one directory the tools are in: $ETLKIT_EXEC_PATH; else
 * SELF_DIR/../libexec/etlkit when it exists (an installed bin/etlkit);
 * else SELF_DIR itself (the build tree's bin/, or libexec/etlkit/ for a
 * tool that lives there).  Only one: an installed front command in /usr/bin
 * must never fall back to /usr/bin/diff.
 */
static char *
tool_dir(const char *self_dir)
{
	const char *env = getenv("ETLKIT_EXEC_PATH");
	char *libexec;
	struct stat st;

	if (env && *env)
		return xstrdup(env);
	if (self_dir == NULL)
		return NULL;
	libexec = join_path(self_dir, strlen(self_dir), "../libexec/etlkit");
	if (stat(libexec, &st) == 0 && S_ISDIR(st.st_mode)) {
		char *real = realpath(libexec, NULL);

		free(libexec);
		return real ? real : NULL;
	}
	free(libexec);
	return xstrdup(self_dir);
}

char *
exec_path_find(const char *self_dir, const char *name)
{
	char *dir, *p;

	if (strchr(name, '/') || strcmp(name, "..") == 0 || strcmp(name, ".") == 0)
		return NULL;
	if ((dir = tool_dir(self_dir)) == NULL)
		return NULL;
	p = join_path(dir, strlen(dir), name);
	free(dir);
	if (access(p, X_OK) == 0)
		return p;
	free(p);
	return NULL;
}

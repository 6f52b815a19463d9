/*
 * runcache.c - records of the etlkit-run cache (see runcache.h), the
 * lock that keeps one run per cache, and the removal of what dead runs
 * left behind.
 */
#define _POSIX_C_SOURCE 200809L
#include "run/runcache.h"
#include "base/atomicfile.h"
#include "base/cli.h"
#include "evt/evt.h"
#include "base/sha256.h"
#include "run/runtext.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define RUNCACHE_MAGIC "#etlkit-runcache\t1"

void
runcache_key(char key[RUNCACHE_KEYLEN + 1], const char *product, const char *trace, const char *settings)
{
	struct sha256 s;
	char hex[65];

	sha256_init(&s);
	sha256_update(&s, product, strlen(product) + 1);
	sha256_update(&s, trace, strlen(trace) + 1);
	sha256_update(&s, settings, strlen(settings));
	sha256_hex(&s, hex);
	memcpy(key, hex, RUNCACHE_KEYLEN);
	key[RUNCACHE_KEYLEN] = '\0';
}

char *
runcache_path(const char *cache, const char *key, const char *suffix)
{
	size_t n = strlen(cache) + strlen(key) + strlen(suffix) + 3;
	char *p = xmalloc(n);

	snprintf(p, n, "%s/%s.%s", cache, key, suffix);
	return p;
}

int
runcache_mkdirs(const char *path)
{
	char *p = xstrdup(path), *s;
	struct stat st;

	for (s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, 0777) != 0 && errno != EEXIST) {
				free(p);
				return -1;
			}
			*s = c;
			if (c == '\0')
				break;
		}
	}
	if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(p);
		errno = ENOTDIR;
		return -1;
	}
	free(p);
	return 0;
}

static void
put_str(struct outbuf *ob, const char *key, const char *v)
{
	size_t n;
	char *esc;

	if (v == NULL)
		return;
	n = strlen(v);
	esc = xmalloc(3 * n + 1);
	n = evt_escape(esc, v, n, 0);
	ob_printf(ob, "%s=%.*s\n", key, (int)n, esc);
	free(esc);
}

void
runcache_write(const char *path, const struct runcache_record *r)
{
	struct atomicfile ao;

	atomicfile_open(&ao, path);
	ob_puts(&ao.ob, RUNCACHE_MAGIC "\n");
	ob_printf(&ao.ob, "key=%s\n", r->key);
	put_str(&ao.ob, "product", r->product);
	put_str(&ao.ob, "scenario", r->scenario);
	put_str(&ao.ob, "trace", r->trace);
	ob_printf(&ao.ob, "size=%llu\n", (unsigned long long)r->size);
	ob_printf(&ao.ob, "mtime=%lld.%09ld\n", (long long)r->mtime_s, r->mtime_ns);
	ob_printf(&ao.ob, "sha256=%s\n", r->sha256);
	put_str(&ao.ob, "command", r->command);
	put_str(&ao.ob, "status", r->status);
	ob_printf(&ao.ob, "exit=%d\n", r->exit);
	put_str(&ao.ob, "error", r->error);
	ob_printf(&ao.ob, "result_size=%llu\n", (unsigned long long)r->result_size);
	put_str(&ao.ob, "converted_utc", r->converted_utc);
	ob_printf(&ao.ob, "seconds=%.3f\n", r->seconds);
	atomicfile_commit(&ao);
}

static char *
dup_unescaped(const char *v)
{
	char *s = xstrdup(v);

	evt_unescape(s, strlen(s));
	return s;
}

int
runcache_read(const char *path, struct runcache_record *r)
{
	struct linereader *lr = lr_open(path);
	char *line;
	size_t len;
	int ok = 0, have_key = 0;

	memset(r, 0, sizeof(*r));
	if (lr == NULL)
		return -1;
	lr_set_quiet(lr);	/* a damaged record is not used, and the job runs again */
	while ((line = lr_next(lr, &len)) != NULL) {
		char *eq;

		if (lr_lineno(lr) == 1) {
			ok = strcmp(line, RUNCACHE_MAGIC) == 0;
			if (!ok)
				break;
			continue;
		}
		eq = strchr(line, '=');
		if (eq == NULL)
			continue;
		*eq++ = '\0';
		if (!strcmp(line, "key") && strlen(eq) == RUNCACHE_KEYLEN) {
			memcpy(r->key, eq, RUNCACHE_KEYLEN + 1);
			have_key = 1;
		} else if (!strcmp(line, "product"))
			r->product = dup_unescaped(eq);
		else if (!strcmp(line, "scenario"))
			r->scenario = dup_unescaped(eq);
		else if (!strcmp(line, "trace"))
			r->trace = dup_unescaped(eq);
		else if (!strcmp(line, "size"))
			r->size = strtoull(eq, NULL, 10);
		else if (!strcmp(line, "mtime")) {
			char *dot;

			r->mtime_s = strtoll(eq, &dot, 10);
			r->mtime_ns = *dot == '.' ? strtol(dot + 1, NULL, 10) : 0;
		} else if (!strcmp(line, "sha256") && strlen(eq) == 64)
			memcpy(r->sha256, eq, 65);
		else if (!strcmp(line, "command"))
			r->command = dup_unescaped(eq);
		else if (!strcmp(line, "status"))
			r->status = dup_unescaped(eq);
		else if (!strcmp(line, "exit"))
			r->exit = atoi(eq);
		else if (!strcmp(line, "error"))
			r->error = dup_unescaped(eq);
		else if (!strcmp(line, "result_size"))
			r->result_size = strtoull(eq, NULL, 10);
		else if (!strcmp(line, "converted_utc"))
			r->converted_utc = dup_unescaped(eq);
		else if (!strcmp(line, "seconds"))
			r->seconds = strtod(eq, NULL);
	}
	if (lr_error(lr) || lr_skipped(lr))
		ok = 0;
	lr_close(lr);
	if (!ok || !have_key || r->status == NULL || r->trace == NULL) {
		runcache_free(r);
		return -1;
	}
	return 0;
}

void
runcache_free(struct runcache_record *r)
{
	free(r->product);
	free(r->scenario);
	free(r->trace);
	free(r->command);
	free(r->status);
	free(r->error);
	free(r->converted_utc);
	memset(r, 0, sizeof(*r));
}

/* Is PID gone (or a zombie nobody reaped, as under some container inits)? */
static int
process_gone(long pid)
{
	char path[64], buf[256], *paren;
	FILE *fp;
	size_t n;

	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] == 'Z';
}

/*
 * Removes what dead runs left in DIR: ".NAME.tmp.PID" (atomic writes) and
 * ".scratch.PID.*" (inputs of output tools), only when PID is gone, as
 * another run may share the directory.
 */
void
runcache_remove_stale_temps(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		const char *t = strstr(e->d_name, ".tmp.");
		long pid = 0;
		char *end = NULL;

		if (e->d_name[0] != '.')
			continue;
		if (strncmp(e->d_name, ".scratch.", 9) == 0) {
			pid = strtol(e->d_name + 9, &end, 10);
			if (*end != '.')
				continue;
		} else if (t != NULL) {
			pid = strtol(t + 5, &end, 10);
			if (*end != '\0')
				continue;
		} else
			continue;
		if (pid > 0 && process_gone(pid)) {
			char *p = runtext_printf("%s/%s", dir, e->d_name);

			unlink(p);
			free(p);
		}
	}
	closedir(d);
}

/*
 * One run per cache at a time: a cron job that overlaps the previous
 * night's would convert the same traces twice and race on the outputs.
 * (Single --run-job conversions do not lock; they only add to the cache.)
 */
void
runcache_lock(const char *cache, const char *pipeline_file)
{
	char *path = runtext_printf("%s/.run.lock", cache);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);

	if (fd < 0)
		cli_fatal("%s: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EWOULDBLOCK)
			cli_fatal("%s: another etlkit-run is using this cache (%s)", pipeline_file, path);
		cli_fatal("%s: %s", path, strerror(errno));
	}
	free(path);	/* fd stays open: the lock lasts as long as the run */
}

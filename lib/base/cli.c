/*
 * cli.c - messages, exit codes, memory and progress shared by all tools.
 */
#define _POSIX_C_SOURCE 200809L
#include "base/cli.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* set by the Makefile for this file only; a build outside it has no identity */
#ifndef ETLKIT_BUILD_ID
#define ETLKIT_BUILD_ID "unknown"
#endif

static const char *progname = "etlkit";
static int progress_drawn;
static double progress_last;
static double progress_start;

void
cli_init(const char *name)
{
	const char *slash = strrchr(name, '/');

	progname = slash ? slash + 1 : name;
	/* A tool in a pipe whose reader went away ("| head") ends quietly. */
	signal(SIGPIPE, SIG_DFL);
}

const char *
cli_progname(void)
{
	return progname;
}

void
cli_version(void)
{
	printf("%s (etlkit) %s\nbuild %s\n", progname, ETLKIT_VERSION, ETLKIT_BUILD_ID);
	exit(0);
}

static void
vmsg(const char *fmt, va_list ap)
{
	cli_progress_end();
	fprintf(stderr, "%s: ", progname);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void
cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void
cli_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	exit(EXIT_FATAL);
}

void
cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, "try '%s --help'\n", progname);
	exit(EXIT_FATAL);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		cli_fatal("out of memory (%zu bytes)", n);
	return p;
}

void *
xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);

	if (p == NULL)
		cli_fatal("out of memory (%zu x %zu bytes)", n, m);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		cli_fatal("out of memory (%zu bytes)", n);
	return p;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A rate needs a measured interval: over the first instants the elapsed
 * time is nearly zero and done/elapsed reads like "13629530000 MB/s".
 * So the rate counts the bytes since the first call, and is shown only
 * once PROGRESS_RATE_AFTER seconds have passed.
 */
#define PROGRESS_RATE_AFTER	0.5

void
cli_progress(uint64_t done, uint64_t total)
{
	static int tty = -1;
	static uint64_t done_at_start;
	double t, elapsed;

	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	if (!tty)
		return;
	t = now();
	if (progress_start == 0) {
		progress_start = t;
		done_at_start = done;
	}
	if (progress_last != 0 && t - progress_last < 0.25)
		return;
	progress_last = t;
	fprintf(stderr, "\r%s: ", progname);
	if (total > 0)
		fprintf(stderr, "%3d%% ", (int)(done * 100 / total));
	fprintf(stderr, "%.1f MB ", done / 1e6);
	elapsed = t - progress_start;
	if (elapsed >= PROGRESS_RATE_AFTER && done >= done_at_start)
		fprintf(stderr, "%.0f MB/s ",
		    (done - done_at_start) / 1e6 / elapsed);
	progress_drawn = 1;
}

void
cli_progress_end(void)
{
	if (progress_drawn) {
		fputs("\r\033[K", stderr);
		progress_drawn = 0;
	}
}

double
cli_number(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end != '\0' || v < 0 || v != v)
		cli_usage_error("%s: not a non-negative number: '%s'", opt, s);
	return v;
}

long
cli_integer(const char *opt, const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < 0)
		cli_usage_error("%s: not a non-negative integer: '%s'", opt, s);
	return v;
}

int
write_full(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int
read_full_at(int fd, void *buf, size_t n, uint64_t off)
{
	char *dst = buf;
	while (n > 0) {
		ssize_t k = pread(fd, dst, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;	/* the file ends (or shrank under us) */
			return -1;
		}
		dst += k;
		off += (uint64_t)k;
		n -= (size_t)k;
	}
	return 0;
}

/*
 * Eight bytes at a time where they hold no C: the evt reader looks back
 * over every line's stack column (a few hundred bytes) for the tab
 * before it (lib/evt/evt.c), and the stack tools over stacks for their
 * last ';' (lib/stacks/stacks.c), once per line.
 */
void *
mem_last(const void *s, int c, size_t n)
{
	const unsigned char *p = s, ch = (unsigned char)c;
	const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
	const uint64_t pattern = ones * ch;

	while (n > 0 && ((uintptr_t)(p + n) & 7))	/* to an aligned end */
		if (p[--n] == ch)
			return (void *)(p + n);
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p + n - 8, 8);
		w ^= pattern;	/* (a byte equal to C is now zero) */
		if ((w - ones) & ~w & highs)
			break;
		n -= 8;
	}
	while (n > 0)
		if (p[--n] == ch)
			return (void *)(p + n);
	return NULL;
}

void *
mem_find(const void *hay, size_t hlen, const void *needle, size_t nlen)
{
	const unsigned char *h = hay, *last;

	if (nlen == 0)
		return (void *)h;
	if (hlen < nlen)
		return NULL;
	last = h + (hlen - nlen);	/* the last place a match can start */
	for (; h <= last; h++)
		if (*h == *(const unsigned char *)needle && memcmp(h, needle, nlen) == 0)
			return (void *)h;
	return NULL;
}

void
stat_mtime(const struct stat *st, int64_t *sec, long *nsec)
{
#if defined(__APPLE__) && (!defined(_POSIX_C_SOURCE) || defined(_DARWIN_C_SOURCE))
	*sec = (int64_t)st->st_mtimespec.tv_sec;
	*nsec = (long)st->st_mtimespec.tv_nsec;
#elif defined(__APPLE__)
	/* macOS hides the timespec behind _POSIX_C_SOURCE and gives this pair */
	*sec = (int64_t)st->st_mtime;
	*nsec = (long)st->st_mtimensec;
#else
	*sec = (int64_t)st->st_mtim.tv_sec;
	*nsec = (long)st->st_mtim.tv_nsec;
#endif
}

void
map_sequential(const void *addr, size_t len)
{
	/* only advice: a failure changes speed, never the result */
	(void)posix_madvise((void *)addr, len, POSIX_MADV_SEQUENTIAL);
}

const char *
temp_dir(void)
{
	const char *dir = getenv("TMPDIR");
	return dir && *dir ? dir : "/tmp";
}

int
temp_file_unlinked(const char *name)
{
	char path[4096];
	int fd;

	if ((size_t)snprintf(path, sizeof path, "%s/%s.XXXXXX", temp_dir(), name) >= sizeof path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = mkstemp(path)) >= 0)
		unlink(path);
	return fd;
}

void
cli_thread_cpu(const char *label)
{
	/*
	 * ETLKIT_THREAD_CPU set: the calling thread's CPU time on stderr,
	 * to see which thread of a tool limits it (etl2evt(1)).
	 */
#ifdef RUSAGE_THREAD
	struct rusage ru;
	struct timespec now;

	if (!getenv("ETLKIT_THREAD_CPU") || getrusage(RUSAGE_THREAD, &ru) < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	fprintf(stderr, "%s: user %.3f s, sys %.3f s, at %.3f s\n", label,
	    (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	    (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
	    (double)(now.tv_sec % 1000) + now.tv_nsec / 1e9);
#else
	(void)label;
#endif
}

int
cli_cores(void)
{
	/*
	 * The affinity mask is what taskset, a cgroup cpuset or a batch
	 * scheduler's allocation (Slurm's --cpus-per-task) leaves this
	 * process: a second thread on a one-CPU allocation only competes.
	 * Without sched_getaffinity (a strict POSIX build), the online CPUs.
	 */
	static int n;

	if (n)
		return n;
#ifdef CPU_COUNT
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		n = CPU_COUNT(&set);
#endif
	if (n < 1) {
		long k = sysconf(_SC_NPROCESSORS_ONLN);
		n = k < 1 ? 1 : k > INT_MAX ? INT_MAX : (int)k;
	}
	return n;
}

void
map_huge_pages(void *addr, size_t len)
{
	/*
	 * Advice only, for a large anonymous mapping filled page by page: in
	 * huge pages it costs a fault per 2 MiB, not per 4 KiB.  A system
	 * without MADV_HUGEPAGE (or a strict POSIX build) keeps small pages.
	 */
#ifdef MADV_HUGEPAGE
	(void)madvise(addr, len, MADV_HUGEPAGE);
#else
	(void)addr;
	(void)len;
#endif
}

void
map_release(const void *addr, size_t len)
{
	/*
	 * The mappings are read-only, so their pages can simply be dropped
	 * and are read again from the file if touched.  glibc and musl make
	 * posix_madvise(POSIX_MADV_DONTNEED) a no-op, so madvise() is used
	 * where the system headers offer it (the default _GNU_SOURCE build);
	 * a strict POSIX build keeps the pages (more RSS, same output).
	 */
#ifdef MADV_DONTNEED
	(void)madvise((void *)addr, len, MADV_DONTNEED);
#else
	(void)posix_madvise((void *)addr, len, POSIX_MADV_DONTNEED);
#endif
}

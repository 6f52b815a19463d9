/*
 * cli.h - what every etlkit tool shares: exit codes, messages,
 * --version, progress on a terminal.
 *
 * Exit codes (all tools, documented in each man page):
 *   0  success, all input used
 *   1  finished, but some input was unusable and was skipped (counted on stderr)
 *   2  usage error or fatal error (cannot read input, cannot write output)
 */
#ifndef ETLKIT_CLI_H
#define ETLKIT_CLI_H

#include <stddef.h>
#include <stdint.h>

#ifndef ETLKIT_VERSION
#define ETLKIT_VERSION "0.1.0"
#endif

#define EXIT_PARTIAL 1
#define EXIT_FATAL 2

/* Call first in main(): sets the name used in messages, SIGPIPE default. */
void cli_init(const char *progname);
const char *cli_progname(void);
/*
 * Prints "NAME (etlkit) VERSION", then "build ID" (the hash of the sources
 * the Makefile compiled in: what etlkit-run's cache keys name), exits 0.
 */
void cli_version(void);

/* "tool: message" on stderr.  cli_fatal exits 2. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* cli_fatal for usage errors: adds "try 'tool --help'". */
void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Memory that never returns NULL (exits 2 on exhaustion). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/*
 * Makes room for one more element in ARR (N used of CAP): when full, the
 * capacity doubles (FIRST the first time), so appending is amortised O(1).
 */
#define XGROW(arr, n, cap, first) do { \
	if ((n) == (cap)) { \
		(cap) = (cap) ? (cap) * 2 : (first); \
		(arr) = xrealloc((arr), (cap) * sizeof *(arr)); \
	} \
} while (0)

/*
 * N bytes at OFF of the file FD into BUF, over short reads and EINTR:
 * 0, or -1 with errno (EIO when the file ends first).
 */
int read_full_at(int fd, void *buf, size_t n, uint64_t off);
/* All N bytes written (EINTR retried): 0, or -1 with errno */
int write_full(int fd, const void *buf, size_t n);

/*
 * Portable stand-ins for what glibc has and POSIX 2008 does not
 * (tests/portable.bats keeps the glibc-only names out of the tree).
 */
/* The last byte C in the N bytes at S (memrchr), or NULL. */
void *mem_last(const void *s, int c, size_t n);
/* The first occurrence of NEEDLE (NLEN bytes) in HAY (HLEN bytes) (memmem), or NULL. */
void *mem_find(const void *hay, size_t hlen, const void *needle, size_t nlen);
/* A file's modification time: st_mtim (POSIX 2008), st_mtimespec on macOS. */
struct stat;
void stat_mtime(const struct stat *st, int64_t *sec, long *nsec);
/*
 * Read-only file mappings: read front to back (posix_madvise), and pages
 * already used handed back so RSS stays small on large inputs.
 */
void map_sequential(const void *addr, size_t len);
/* The directory for temporary files: $TMPDIR, else /tmp. */
const char *temp_dir(void);
/*
 * A temporary file NAME.XXXXXX in temp_dir(), already unlinked (it goes
 * when the last descriptor closes, also on a crash): its descriptor, or
 * -1 with errno set.
 */
int temp_file_unlinked(const char *name);
/* large anonymous memory in huge pages where the system allows (advice) */
/* CPUs this process may run on (its affinity mask; else the online ones), at least 1 */
int cli_cores(void);
/* ETLKIT_THREAD_CPU set: LABEL and the calling thread's CPU time on stderr */
void cli_thread_cpu(const char *label);
void map_huge_pages(void *addr, size_t len);
void map_release(const void *addr, size_t len);

/*
 * Progress on stderr, only when stderr is a terminal, at most a few
 * times a second: "tool: 42% 120.3 MB 250 MB/s".  TOTAL may be 0; the
 * rate appears once half a second has been measured.
 */
void cli_progress(uint64_t done, uint64_t total);
/* Clears the progress line if one was drawn. */
void cli_progress_end(void);

/* Parses a non-negative number option or exits with a usage error. */
double cli_number(const char *opt, const char *s);
long cli_integer(const char *opt, const char *s);

#endif

/*
 * runcache.h - etlkit-run's per-trace cache: a lean result (gzip) next
 * to a record of what produced it.
 *
 * CACHE/KEY.out.gz   the product of one trace (folded stacks or evt)
 * CACHE/KEY.rec      "key=value" lines: input path, size, mtime, SHA-256,
 *                    the exact commands, tool identities, status, error
 * CACHE/KEY.log      what the tools wrote on stderr
 *
 * KEY is a hash of the product name, the trace's path (relative to the
 * pipeline's directory when under it) and the step settings: the commands
 * and each tool's identity, its --version with the build ID (a hash of
 * the sources it was built from), never its install path, size or mtime.
 * So a change of settings or of build gives a new key and converts again,
 * while two nodes with their own installs of one build share a cache.
 * The trace's content is in the record (SHA-256): a trace whose mtime
 * differs from the record's is re-hashed, not converted again, when its
 * content is the same.  A record is written
 * last and atomically; the result's size is in it, so a result that is
 * not the one the record describes is never trusted.
 */
#ifndef ETLKIT_RUNCACHE_H
#define ETLKIT_RUNCACHE_H

#include <stdint.h>

#define RUNCACHE_KEYLEN 32

struct runcache_record {
	char key[RUNCACHE_KEYLEN + 1];
	char *product;
	char *scenario;
	char *trace;
	uint64_t size;
	int64_t mtime_s;
	long mtime_ns;
	char sha256[65];
	char *command;		/* human-readable: "etl2evt ARGS TRACE | evtfilter ..." */
	char *status;		/* ok, partial, failed */
	int exit;
	char *error;		/* first lines of the tools' stderr when not ok */
	uint64_t result_size;
	char *converted_utc;
	double seconds;
};

/* KEY from the product, trace path and settings text. */
void runcache_key(char key[RUNCACHE_KEYLEN + 1], const char *product, const char *trace, const char *settings);

/* Path of a cache file: CACHE/KEY.SUFFIX (malloc'ed). */
char *runcache_path(const char *cache, const char *key, const char *suffix);

/* Reads a record; 0 on success, -1 when missing or unreadable (a record that does not parse is missing). */
int runcache_read(const char *path, struct runcache_record *r);
/* Writes a record atomically; exits 2 on failure. */
void runcache_write(const char *path, const struct runcache_record *r);
void runcache_free(struct runcache_record *r);

/* mkdir -p; 0 or -1 with errno set. */
int runcache_mkdirs(const char *path);

/*
 * One run per cache at a time: takes CACHE/.run.lock for as long as the
 * process lives, or exits 2 naming PIPELINE_FILE when another run has it.
 */
void runcache_lock(const char *cache, const char *pipeline_file);

/*
 * Removes what dead runs left in DIR (the cache or the output directory):
 * atomic writes' ".NAME.tmp.PID" and output tools' ".scratch.PID.*", only
 * when PID is gone, as another run may share the directory.
 */
void runcache_remove_stale_temps(const char *dir);

#endif

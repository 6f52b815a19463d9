/*
 * jobs.h - the jobs of one etlkit-run: every trace the scenarios' globs
 * match, once per product (step) of the pipeline, with the chain of
 * tools that converts it and its state in the cache (runcache.h).
 *
 * A job's KEY names its cache files; --list-jobs prints the jobs and
 * --run-job converts one, by its 1-based index or its key.
 */
#ifndef ETLKIT_JOBS_H
#define ETLKIT_JOBS_H

#include "run/pipeline.h"
#include "run/runcache.h"
#include "run/runcmd.h"

/* What a trace is, from its content: which tools read it. */
enum trace_type { TRACE_ETL, TRACE_EVT, TRACE_FOLDED };

/* JOB_SKIPPED: a matched path that is no trace (dangling link, FIFO...): reported, never opened */
enum job_state {
	JOB_TODO, JOB_CACHED, JOB_FAILED_CACHED, JOB_CONVERTED, JOB_FAILED, JOB_TIMEOUT, JOB_SKIPPED
};

/* The state as the run report names it ("todo", "reused", "converted"...). */
extern const char *const job_state_names[];

#define JOB_MAX_CHAIN 3
#define JOB_MAX_ARGV 256

/* One tool of a job's chain. */
struct job_command {
	const char *tool;	/* etl2evt, evtfilter, stackfold */
	char *path;		/* executable */
	char *argv[JOB_MAX_ARGV];
	int argc;
};

struct job {
	int scen;		/* pipeline scenario index */
	char *name;		/* scenario name */
	char *trace;		/* absolute path */
	char *trace_id;		/* in keys and records: relative to the pipeline's directory when under it */
	int prod;
	enum trace_type type;
	struct job_command cmd[JOB_MAX_CHAIN];
	int ncmd;
	char *settings;
	char key[RUNCACHE_KEYLEN + 1];
	int dup_of;		/* 1 + index of the job converting the same key, or 0 */
	enum job_state state;
	char *status;		/* ok, partial, failed (from the record) */
	char *error;
	double seconds;
	struct runcmd worker;	/* the process converting it, while it runs */
};

/* One run of a pipeline: its options and its jobs. */
struct run {
	struct pipeline *pl;
	char *self_dir;		/* etlkit-run's directory: the tools are found from it */
	int verify;		/* re-hash every trace, even when size and mtime match */
	int retry;		/* convert again traces whose last conversion failed */
	int quiet;		/* no progress or summary on stderr */
	int merge_only;		/* --merge-only: converts nothing */
	int side_by_side;	/* jobs converted at once: each etl2evt on one thread */
	struct job *jobs;
	int njobs;
	int *todo;		/* the jobs to convert (indexes), after jobs_check_cache() */
	int ntodo;
	char **tool_path, **tool_id;	/* each tool's --version, asked once (jobs.c) */
	int ntools;
};

/*
 * Expands the scenarios' globs into jobs (paths that are no trace are
 * reported and become skipped jobs).  Returns the number of scenarios
 * that matched nothing.
 */
int jobs_expand(struct run *r);

/*
 * Sets every job's state from the cache and lists in r->todo the jobs to
 * convert: one per key, a trace in two scenarios with the same settings
 * is converted once (the other job's dup_of names it).
 */
void jobs_check_cache(struct run *r);

/*
 * Sets one job's state from the cache, for --run-job: a worker of a job
 * array looks at its own job only (a trace whose mtime is not the
 * recorded one is hashed: every task hashing every trace would cost the
 * night N times over).
 */
void job_check(const struct run *r, struct job *j);

/*
 * After a conversion: the job's result is whatever the cache now holds
 * for the trace as it is; no record makes it failed.
 */
void job_settle(const struct run *r, struct job *j);

/* The job with 1-based index or key ID, or NULL. */
struct job *jobs_find(const struct run *r, const char *id);

/* Has J a result the outputs can use (not failed)? */
int job_usable(const struct job *j);

/* Path of J's cache file CACHE/KEY.SUFFIX (malloc'ed). */
char *job_cache_file(const struct run *r, const struct job *j, const char *suffix);

/*
 * For a job converted beside others (r->side_by_side): its etl2evt reads
 * and decodes on one thread (--threads=1).  Applied after the key was
 * made, to the converting worker's copy of the job: etl2evt's output is
 * the same with any thread count, so the key and the cached results stay
 * those of a run converting one job at a time.
 */
void job_side_by_side(struct job *j);

/* A readable command line for records and messages (never executed); malloc'ed. */
char *job_command_text(const struct job *j);

/* Frees the jobs. */
void jobs_free(struct run *r);

#endif

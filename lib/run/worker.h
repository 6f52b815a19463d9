/*
 * worker.h - converting traces into etlkit-run's cache: one job (its
 * chain of tools connected by pipes, the last one's output compressed
 * into CACHE/KEY.out.gz, then the record), or all the jobs to do, a few
 * at a time, each in a worker process of its own.
 */
#ifndef ETLKIT_WORKER_H
#define ETLKIT_WORKER_H

#include "run/jobs.h"

/* Converts job J into the cache.  Returns 0 ok (or empty), 1 partial, 2 failed. */
int worker_convert(const struct run *r, struct job *j);

/*
 * Converts the jobs of r->todo, PARALLEL at a time, each in a worker
 * process (killed after the pipeline's timeout_s).  A job's state becomes
 * converted, failed or timeout.  With more than one job at a time, each
 * etl2evt reads and decodes on one thread (job_side_by_side()).
 * Interrupted (SIGINT, SIGTERM, SIGHUP), it stops the workers and dies of
 * that signal: what was converted is in the cache, no output is written.
 */
void worker_run_all(struct run *r, int parallel);

#endif

/*
 * etlkit-run - run a pipelines/NAME.yaml nightly job: convert every trace of
 * every scenario (in parallel, cached), aggregate, write the outputs.
 *
 * USAGE:  etlkit-run [-j N] [--verify] [--retry-failed] PIPELINE.yaml
 *         etlkit-run --list-jobs [--todo] PIPELINE.yaml    (for a scheduler)
 *         etlkit-run --run-job ID|- [--emit[=STEP]] PIPELINE.yaml  (one job)
 *         etlkit-run --merge-only PIPELINE.yaml            (outputs from the cache)
 *
 * INPUT:  a pipeline (docs/pipelines.md): scenarios (globs over .etl,
 *         .etl.zip, .evt[.gz] or folded files), steps (the options of
 *         etl2evt | evtfilter | stackfold for each per-trace product),
 *         outputs.  Every trace becomes CACHE/KEY.out.gz plus a record of
 *         what produced it (path, size, mtime, SHA-256, commands); a trace
 *         whose record still matches is not converted again.
 *
 * OUTPUT: the pipeline's outputs (aggregated folded stacks, by-name
 *         tables, flame graphs, DPC reports, diff/overweight), each
 *         written to a temporary file and renamed, and OUTDIR/run-report.tsv:
 *             startup-3  /data/t3.etl  cpu  converted  ok  1.250
 *         The tools run as child processes connected by pipes; values
 *         from the YAML only ever become single argv elements, never
 *         shell text.  Exit 0: every trace converted cleanly; 1: partial
 *         (some trace failed or was only partly decoded; the others are
 *         aggregated); 2: the pipeline or an output could not be used.
 *
 * This file is the options and one function per mode; the work is in
 * lib/run: jobs.c (the jobs and their cache state), worker.c (converting
 * them), outputs.c (the outputs and the report), runcmd.c (the child
 * processes), pipeline.c (the YAML) and runcache.c (the records and the lock).
 */
#define _POSIX_C_SOURCE 200809L
#include "base/cli.h"
#include "base/exec_path.h"
#include "run/jobs.h"
#include "run/outputs.h"
#include "run/pipeline.h"
#include "run/runcache.h"
#include "run/runtext.h"
#include "run/worker.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
usage(FILE *fp)
{
	fprintf(fp, "usage: etlkit-run [-j n] [--verify] [--retry-failed] [--list-jobs [--todo]] "
	    "[--run-job id|- [--emit[=step]]] [--merge-only] pipeline.yaml\n");
}

static void
help(void)
{
	usage(stdout);
	fputs("Runs a nightly multi-scenario pipeline (docs/pipelines.md).\n"
	    "  -j, --jobs N        traces converted in parallel [pipeline 'jobs', else CPUs];\n"
	    "                      with more than one at once, each etl2evt on one thread\n"
	    "      --verify        re-hash every trace, even when size and mtime match the record\n"
	    "      --retry-failed  convert again traces whose last conversion failed\n"
	    "      --list-jobs     print the per-trace jobs (INDEX KEY STATE STEP SCENARIO TRACE COMMAND)\n"
	    "      --todo          with --list-jobs: only the jobs that need converting\n"
	    "      --run-job ID    convert one job (1-based INDEX or KEY), as a scheduler would;\n"
	    "                      ID '-': the IDs on stdin, one a line (a line's last tab-separated\n"
	    "                      field: Hadoop Streaming's OFFSET<TAB>LINE)\n"
	    "      --emit          with --run-job: print the result as folded stacks with the\n"
	    "                      scenario frame, each line tagged STEP<TAB> (docs/scaling.md)\n"
	    "      --emit=STEP     the same for the jobs of STEP only, untagged (aggregate -M input)\n"
	    "      --merge-only    convert nothing: write the outputs from the cache\n"
	    "  -q, --quiet         no summary on stderr\n"
	    "  -h, --help, --version\n"
	    "Exit: 0 all traces ok, 1 partial (failed traces reported, others aggregated), 2 fatal.\n",
	    stdout);
	exit(0);
}

struct job_counts {
	int converted, reused, missing, skipped, failed, partial, empty;
};

/* Counts job J and reports it on stderr unless it is clean. */
static void
report_job(const struct run *r, const struct job *j, struct job_counts *count)
{
	char *trace = runtext_escaped(j->trace), *name = runtext_escaped(j->name);
	const char *step = r->pl->prod[j->prod].name;

	if (j->state == JOB_CONVERTED || j->state == JOB_FAILED || j->state == JOB_TIMEOUT)
		count->converted++;
	else if (j->state == JOB_CACHED || j->state == JOB_FAILED_CACHED)
		count->reused++;
	else if (j->state == JOB_TODO)
		count->missing++;	/* --merge-only: not in the cache */
	if (j->state == JOB_SKIPPED) {
		count->skipped++;
		count->failed++;
		cli_warn("FAILED %s (scenario '%s', step %s): %s", trace, name, step, j->error);
	} else if (j->state == JOB_TODO) {
		count->failed++;	/* --merge-only: no conversion, so no log to point at */
		cli_warn("FAILED %s (scenario '%s', step %s): %s", trace, name, step, j->error);
	} else if (strcmp(j->status, "failed") == 0) {
		count->failed++;
		cli_warn("FAILED %s (scenario '%s', step %s): %s [log: %s/%s.log]", trace, name,
		    step, j->error ? j->error : "?", r->pl->cache, j->key);
	} else if (strcmp(j->status, "partial") == 0) {
		count->partial++;
		cli_warn("partial %s (scenario '%s', step %s): %s", trace, name, step,
		    j->error ? j->error : "some input skipped");
	} else if (strcmp(j->status, "empty") == 0)
		count->empty++;
	free(trace);
	free(name);
}

/*
 * The end of a run: the outputs, every job that is not clean on stderr,
 * the run report and the summary.  EMPTY scenarios matched no trace.
 * Returns the exit status.
 */
static int
write_products(struct run *r, int empty)
{
	struct job_counts count = { 0, 0, 0, 0, 0, 0, 0 };
	char missing[64] = "";
	int i, status = 0;

	if (outputs_write(r) != 0)
		status = EXIT_PARTIAL;
	for (i = 0; i < r->njobs; i++)
		report_job(r, &r->jobs[i], &count);
	outputs_write_report(r);
	if (count.missing)
		snprintf(missing, sizeof(missing), ", %d not in the cache", count.missing);
	if (!r->quiet)
		cli_warn("%d trace job%s: %d converted, %d reused%s, %d skipped, %d failed, %d partial, "
		    "%d empty; outputs in %s", r->njobs, r->njobs == 1 ? "" : "s", count.converted,
		    count.reused, missing, count.skipped, count.failed, count.partial, count.empty,
		    r->pl->outdir);
	if (count.failed || count.partial || empty)
		status = EXIT_PARTIAL;
	if (count.failed == r->njobs) {
		cli_warn("%s: every trace job failed: nothing was aggregated", r->pl->file);
		status = EXIT_FATAL;
	}
	return status;
}

/* The normal run: converts what the cache lacks, PARALLEL at a time, then writes the products. */
static int
run_all(struct run *r, int parallel, int empty)
{
	int i;

	runcache_lock(r->pl->cache, r->pl->file);
	worker_run_all(r, parallel);
	for (i = 0; i < r->njobs; i++) {
		struct job *j = &r->jobs[i];

		if (j->dup_of) {
			/* the other job converted it: reuse its result (or share its fate) */
			j->state = r->jobs[j->dup_of - 1].state == JOB_TIMEOUT ? JOB_TIMEOUT :
			    JOB_CACHED;
			job_settle(r, j);
		}
	}
	for (i = 0; i < r->njobs; i++) {
		struct job *j = &r->jobs[i];

		if (j->state == JOB_CONVERTED || j->state == JOB_FAILED || j->state == JOB_TIMEOUT)
			job_settle(r, j);
	}
	return write_products(r, empty);
}

/* --merge-only: converts nothing; what the cache lacks is reported as failed. */
static int
merge_only(struct run *r, int empty)
{
	int i;

	runcache_lock(r->pl->cache, r->pl->file);
	for (i = 0; i < r->njobs; i++)
		if (r->jobs[i].state == JOB_TODO) {
			r->jobs[i].status = xstrdup("failed");
			r->jobs[i].error = xstrdup("not converted yet (--merge-only)");
		}
	return write_products(r, empty);
}

/* --list-jobs [--todo]: one job a line, for a scheduler; reads only. */
static int
list_jobs(const struct run *r, int todo_only)
{
	int i;

	for (i = 0; i < r->njobs; i++) {
		const struct job *j = &r->jobs[i];
		char *cmd, *c, *name, *trace;

		if (todo_only && j->state != JOB_TODO)
			continue;
		cmd = job_command_text(j);
		/* one job, one line, six tabs: names are escaped as in run-report.tsv */
		name = runtext_escaped(j->name);
		trace = runtext_escaped(j->trace);
		for (c = cmd; *c; c++)
			if ((unsigned char)*c < 0x20)
				*c = '?';
		printf("%d\t%s\t%s\t%s\t%s\t%s\t%s\n", i + 1, j->key, j->state == JOB_TODO ?
		    "todo" : j->state == JOB_CACHED ? "cached" : "failed", r->pl->prod[j->prod].name,
		    name, trace, cmd);
		free(cmd);
		free(name);
		free(trace);
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		cli_fatal("write error: %s", strerror(errno));
	return 0;
}

/*
 * What --emit asks for: nothing, every job's lines tagged "STEP<TAB>"
 * (--emit), or the lines of one step's jobs, untagged (--emit=STEP).
 */
struct emit {
	int on;
	const char *step;
};

/* One job by ID, converted when the cache lacks it, emitted as asked; the exit status. */
static int
run_one_job(struct run *r, const char *id, const struct emit *emit)
{
	struct job *j = jobs_find(r, id);
	int status;

	if (j == NULL) {
		cli_warn("--run-job: no job '%s' (see --list-jobs)", id);
		return EXIT_FATAL;
	}
	job_check(r, j);
	if (j->state == JOB_TODO)
		worker_convert(r, j);
	job_settle(r, j);
	if (strcmp(j->status, "failed") == 0) {
		cli_warn("%s: failed: %s", j->trace, j->error ? j->error : "?");
		return EXIT_FATAL;
	}
	status = strcmp(j->status, "partial") == 0;
	if (emit->on && (emit->step == NULL || strcmp(emit->step, r->pl->prod[j->prod].name) == 0) &&
	    outputs_emit_job(r, j, emit->step == NULL) != 0)
		status = EXIT_PARTIAL;
	return status;
}

/*
 * --run-job -: the job IDs on stdin, one a line.  A line with tabs gives
 * its last field: Hadoop Streaming hands a mapper "OFFSET<TAB>LINE" (with
 * NLineInputFormat), and the offset is no job.  Returns the worst status.
 */
static int
run_jobs_from_stdin(struct run *r, const struct emit *emit)
{
	char *line = NULL, *id, *end;
	size_t cap = 0;
	ssize_t n;
	int status = 0, st, any = 0;

	while ((n = getline(&line, &cap, stdin)) > 0) {
		end = line + n;
		while (end > line && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
			*--end = '\0';
		id = strrchr(line, '\t');
		id = id ? id + 1 : line;
		id += strspn(id, " ");
		if (*id == '\0')
			continue;
		any = 1;
		if ((st = run_one_job(r, id, emit)) > status)
			status = st;
	}
	free(line);
	if (ferror(stdin))
		cli_fatal("--run-job -: reading stdin: %s", strerror(errno));
	if (!any)
		cli_warn("--run-job -: no job ID on stdin");
	return status;
}

/* --run-job ID|- [--emit[=STEP]]: converts jobs as a scheduler's worker would (no lock). */
static int
run_job(struct run *r, const char *id, const struct emit *emit)
{
	int i, status;

	if (emit->step) {
		for (i = 0; i < r->pl->nprod; i++)
			if (strcmp(r->pl->prod[i].name, emit->step) == 0)
				break;
		if (i == r->pl->nprod)
			cli_usage_error("--emit=%s: %s has no such step", emit->step, r->pl->file);
	}
	if (strcmp(id, "-") == 0)
		status = run_jobs_from_stdin(r, emit);
	else if (jobs_find(r, id) == NULL)
		cli_usage_error("--run-job: no job '%s' (see --list-jobs)", id);
	else
		status = run_one_job(r, id, emit);
	if (fflush(stdout) != 0 || ferror(stdout))
		cli_fatal("write error: %s", strerror(errno));
	return status;
}

/* Parallel conversions: -j, else the pipeline's jobs, else the CPUs. */
static int
parallelism(const struct run *r, int jobs_opt)
{
	if (jobs_opt > 0)
		return jobs_opt;
	if (r->pl->jobs > 0)
		return r->pl->jobs;
	return cli_cores();
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "verify", no_argument, NULL, 'v' },
		{ "retry-failed", no_argument, NULL, 'r' },
		{ "list-jobs", no_argument, NULL, 'L' },
		{ "todo", no_argument, NULL, 't' },
		{ "run-job", required_argument, NULL, 'R' },
		{ "emit", optional_argument, NULL, 'e' },
		{ "merge-only", no_argument, NULL, 'm' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct run run = { 0 };
	int jobs_opt = 0, list = 0, todo_only = 0, merge = 0, ch, empty, status;
	struct emit emit = { 0, NULL };
	const char *run_one = NULL;

	cli_init(argv[0]);
	while ((ch = getopt_long(argc, argv, "j:qhV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			jobs_opt = (int)cli_integer("--jobs", optarg);
			if (jobs_opt < 1)
				cli_usage_error("--jobs: at least 1");
			break;
		case 'v':
			run.verify = 1;
			break;
		case 'r':
			run.retry = 1;
			break;
		case 'L':
			list = 1;
			break;
		case 't':
			todo_only = 1;
			break;
		case 'R':
			run_one = optarg;
			break;
		case 'e':
			emit.on = 1;
			emit.step = optarg;
			break;
		case 'm':
			merge = run.merge_only = 1;
			break;
		case 'q':
			run.quiet = 1;
			break;
		case 'h':
			help();
			break;
		case 'V':
			cli_version();
			break;
		default:
			usage(stderr);
			exit(EXIT_FATAL);
		}
	}
	if (optind != argc - 1)
		cli_usage_error("give one pipeline file");
	if (emit.on && run_one == NULL)
		cli_usage_error("--emit goes with --run-job");
	run.self_dir = exec_path_self_dir(argv[0]);
	if ((run.pl = pipeline_load(argv[optind])) == NULL)
		exit(EXIT_FATAL);
	if (run.verify == 0)
		run.verify = run.pl->verify;

	empty = jobs_expand(&run);
	if (run.njobs == 0)
		cli_fatal("%s: no trace matches any scenario", run.pl->file);
	if (outputs_collisions(&run) > 0)
		exit(EXIT_FATAL);
	if (!list) {
		/* --list-jobs only reads: it creates and removes nothing */
		if (runcache_mkdirs(run.pl->cache) != 0)
			cli_fatal("%s: %s", run.pl->cache, strerror(errno));
		runcache_remove_stale_temps(run.pl->cache);
		runcache_remove_stale_temps(run.pl->outdir);
	}
	if (run_one == NULL)
		jobs_check_cache(&run);	/* --run-job looks at its own jobs only */

	if (list)
		status = list_jobs(&run, todo_only);
	else if (run_one)
		status = run_job(&run, run_one, &emit);
	else if (merge)
		status = merge_only(&run, empty);
	else
		status = run_all(&run, parallelism(&run, jobs_opt), empty);
	jobs_free(&run);
	free(run.self_dir);
	pipeline_free(run.pl);
	return status;
}

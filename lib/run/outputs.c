/*
 * outputs.c - etlkit-run's outputs and run report (outputs.h).  Folded
 * stacks and by-name tables are written here from the aggregated cached
 * results (report/scenagg.h); flame graphs, DPC/ISR reports, diffs and
 * overweight reports are written by render, diff and overweight, run as
 * child processes on a scratch file of the aggregate.
 */
#define _POSIX_C_SOURCE 200809L
#include "run/outputs.h"
#include "base/atomicfile.h"
#include "base/cli.h"
#include "base/exec_path.h"
#include "evt/evt.h"
#include "report/scenagg.h"
#include "run/runtext.h"
#include "stacks/stacks.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* reading the cached results                                          */

/* By scenario name, then trace; ties in the order the jobs were made. */
static int
cmp_job_order(const void *a, const void *b)
{
	const struct job *x = *(const struct job *const *)a, *y = *(const struct job *const *)b;
	int c = strcmp(x->name, y->name);

	if (c == 0)
		c = strcmp(x->trace, y->trace);
	return c ? c : (x > y) - (x < y);
}

/* The usable jobs of product PROD (and scenario SCEN unless NULL), in order; *N set. */
static struct job **
usable_jobs(const struct run *r, int prod, const char *scen, int *n)
{
	struct job **sel = xmalloc(((size_t)r->njobs + 1) * sizeof(*sel));
	int i, k = 0;

	for (i = 0; i < r->njobs; i++) {
		struct job *j = &r->jobs[i];

		if (j->prod == prod && job_usable(j) && (scen == NULL || strcmp(j->name, scen) == 0))
			sel[k++] = j;
	}
	qsort(sel, (size_t)k, sizeof(*sel), cmp_job_order);
	*n = k;
	return sel;
}

/*
 * Reads one cached result into scenario ID: folded stacks as they are,
 * evt (a product without stackfold) as stackfold would fold it, with the
 * process as the root frame.
 */
static int
read_result(struct scenagg *sa, int id, const char *path, struct scenagg_file_stats *st)
{
	struct stk_config cfg;
	int evt = scenagg_is_evt(path);

	if (evt < 0)
		return -1;
	if (!evt)
		return scenagg_read(sa, id, path, st);
	stk_config_init(&cfg);
	cfg.roots = STK_ROOTS_COMM;
	cfg.no_scenario = 1;
	return scenagg_read_stacks(sa, id, path, &cfg, st);
}

/* Aggregates product PROD over all usable traces (of scenario SCEN unless NULL). */
static struct scenagg *
aggregate_product(const struct run *r, int prod, const char *scen)
{
	struct scenagg *sa = scenagg_new();
	int n, i;
	struct job **sel = usable_jobs(r, prod, scen, &n);

	for (i = 0; i < n; i++) {
		struct job *j = sel[i];
		struct scenagg_file_stats st;
		char *res = job_cache_file(r, j, "out.gz");
		int id = scenagg_scenario(sa, j->name);

		scenagg_count_file(sa, id);
		if (read_result(sa, id, res, &st) < 0 || st.error || st.skipped) {
			cli_warn("%s: cached result of %s unusable", res, j->trace);
			free(j->status);
			j->status = xstrdup("partial");
		}
		free(res);
	}
	free(sel);
	return sa;
}

/* ------------------------------------------------------------------ */
/* files the outputs write                                             */

/*
 * Runs TOOL ARGV... with stdin from /dev/null and stdout into OUT_PATH,
 * atomically.  Returns 0, or -1 when the output was not written (reported).
 */
static int
run_output_tool(const struct run *r, const char *tool, char **argv, const char *out_path)
{
	char *path = exec_path_find(r->self_dir, tool), *tmp = atomicfile_tmpname(out_path);
	struct runcmd c = RUNCMD_INIT;
	int in, out, fsync_failed;

	if (path == NULL) {
		cli_warn("%s: %s not found (next to etlkit-run or on PATH); output not written",
		    out_path, tool);
		free(tmp);
		return -1;
	}
	in = open("/dev/null", O_RDONLY);
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (in < 0 || out < 0)
		cli_fatal("%s: %s", in < 0 ? "/dev/null" : tmp, strerror(errno));
	c.path = path;
	c.argv = argv;
	c.in = in;
	c.out = out;
	if (runcmd_run(&c) != 0)
		cli_fatal("fork: %s", strerror(errno));
	close(in);
	fsync_failed = fsync(out) != 0 && errno != EINVAL;
	close(out);
	free(path);
	if (fsync_failed || !(c.exit_status == 0 || c.exit_status == 1)) {
		/* a failed fsync has always been reported as status 255 */
		cli_warn("%s: %s failed (status %d); output not written", out_path, tool,
		    fsync_failed ? 255 : c.exit_status >= 0 ? c.exit_status : 128 + c.signal);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	if (rename(tmp, out_path) != 0)
		cli_fatal("%s: %s", out_path, strerror(errno));
	atomicfile_sync_dir(out_path);
	free(tmp);
	return 0;
}

/* Writes the aggregated folded stacks of O to a scratch file; returns its path. */
static char *
scratch_folded(const struct run *r, struct scenagg *sa, const struct pipeline_output *o,
    int scenario_frame)
{
	struct scenagg_out_opts oo = { scenario_frame, o->mean, 1 };
	struct outbuf ob;
	char *path = runtext_printf("%s/.scratch.%ld.%d.folded", r->pl->outdir, (long)getpid(),
	    o->line);

	ob_open(&ob, path);
	scenagg_write_folded(sa, &ob, &oo);
	ob_close(&ob);
	return path;
}

/*
 * Concatenates the evt results of product PROD into one stream for
 * render's DPC/ISR reports: the first header is kept, later ones dropped.
 */
static char *
scratch_evt(const struct run *r, int prod, int yaml_line, const char *scen)
{
	char *path = runtext_printf("%s/.scratch.%ld.%d.evt", r->pl->outdir, (long)getpid(),
	    yaml_line);
	int n, i, header = 0;
	struct job **sel = usable_jobs(r, prod, scen, &n);
	struct outbuf ob;

	ob_open(&ob, path);
	for (i = 0; i < n; i++) {
		char *res = job_cache_file(r, sel[i], "out.gz"), *line;
		struct linereader *lr = lr_open(res);
		size_t len;

		while (lr && (line = lr_next(lr, &len)) != NULL) {
			if (evt_classify(line, len) == EVT_HEADER) {
				if (header++)
					continue;
			}
			ob_write(&ob, line, len);
			ob_putc(&ob, '\n');
		}
		lr_close(lr);
		free(res);
	}
	ob_close(&ob);
	free(sel);
	return path;
}

/*
 * Replaces "{scenario}" in PATH (OUTDIR/NAME) by the scenario's name,
 * kept a plain file name in OUTDIR: '/' becomes '_', and so does a
 * leading '.' (hidden names are the run's temporaries).  An empty result
 * is "_".  malloc'ed.
 */
static char *
scenario_path(const char *path, const char *name)
{
	const char *at = strstr(path, "{scenario}");
	char *safe = xstrdup(name), *p, *r, *base;

	for (p = safe; *p; p++)
		if (*p == '/')
			*p = '_';
	r = runtext_printf("%.*s%s%s", (int)(at - path), path, safe, at + 10);
	free(safe);
	base = strrchr(r, '/') + 1;
	if (*base == '\0') {
		safe = r;
		r = runtext_printf("%s_", safe);
		free(safe);
	} else if (*base == '.')
		*base = '_';
	return r;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

enum name_filter { ALL_JOBS, USABLE_JOBS, JOBS_WITH_DATA };

/* The distinct scenario names of product PROD's jobs (those WHICH selects), sorted; *N set. */
static char **
scenario_names(const struct run *r, int prod, enum name_filter which, int *n)
{
	char **names = xmalloc(((size_t)r->njobs + 1) * sizeof(*names));
	int i, k = 0, m = 0;

	for (i = 0; i < r->njobs; i++) {
		const struct job *j = &r->jobs[i];

		if (j->prod == prod && (which == ALL_JOBS || (job_usable(j) &&
		    (which == USABLE_JOBS || strcmp(j->status, "empty") != 0))))
			names[k++] = j->name;
	}
	qsort(names, (size_t)k, sizeof(*names), cmp_str);
	for (i = 0; i < k; i++)
		if (m == 0 || strcmp(names[m - 1], names[i]) != 0)
			names[m++] = names[i];
	*n = m;
	return names;
}

/* ------------------------------------------------------------------ */
/* clashes between the files of outputs                                */

/* One file an output writes: for SCEN (NULL: the output over all scenarios). */
struct out_file {
	char *path;
	int out;
	const char *scen;
};

static int
cmp_out_file(const void *a, const void *b)
{
	const struct out_file *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c == 0)
		c = x->out - y->out;
	return c ? c : strcmp(x->scen ? x->scen : "", y->scen ? y->scen : "");
}

/* Every file the outputs will write, sorted by path; *N set. */
static struct out_file *
output_files(const struct run *r, size_t *np)
{
	const struct pipeline *pl = r->pl;
	struct out_file *f = NULL;
	size_t n = 0;
	int i, m, nnames;

	for (i = 0; i < pl->nout; i++) {
		const struct pipeline_output *o = &pl->out[i];
		char **names;

		if (strstr(o->path, "{scenario}") == NULL) {
			f = xrealloc(f, (n + 1) * sizeof(*f));
			f[n++] = (struct out_file){ xstrdup(o->path), i, NULL };
			continue;
		}
		names = scenario_names(r, o->product, ALL_JOBS, &nnames);
		f = xrealloc(f, (n + (size_t)nnames + 1) * sizeof(*f));
		for (m = 0; m < nnames; m++)
			f[n++] = (struct out_file){ scenario_path(o->path, names[m]), i, names[m] };
		free(names);
	}
	qsort(f, n, sizeof(*f), cmp_out_file);
	*np = n;
	return f;
}

/* Reports that files A and B (of one path) clash. */
static void
report_clash(const struct pipeline *pl, const struct out_file *a, const struct out_file *b)
{
	char *ea = runtext_escaped(a->scen ? a->scen : "");
	char *eb = runtext_escaped(b->scen ? b->scen : "");
	char *ep = runtext_escaped(b->path);

	if (a->scen && b->scen)
		cli_warn("%s:%d: scenarios '%s' and '%s' would both write %s; give them "
		    "names that differ as file names too", pl->file, pl->out[b->out].line,
		    ea, eb, ep);
	else
		cli_warn("%s:%d: scenario '%s' would write %s, the file of the output at "
		    "line %d", pl->file, pl->out[a->scen ? a->out : b->out].line,
		    a->scen ? ea : eb, ep, pl->out[a->scen ? b->out : a->out].line);
	free(ea);
	free(eb);
	free(ep);
}

/*
 * Two scenarios whose names differ only where file names cannot ('a/b'
 * and 'a_b') would write one "{scenario}" file, the second silently
 * replacing the first.  Lists every file the outputs will write and
 * reports each clash, naming both scenarios.
 */
int
outputs_collisions(const struct run *r)
{
	size_t n, k;
	struct out_file *f = output_files(r, &n);
	int clashes = 0;

	for (k = 1; k < n; k++) {
		const struct out_file *a = &f[k - 1], *b = &f[k];

		if (strcmp(a->path, b->path) != 0 || (a->scen == NULL && b->scen == NULL))
			continue;
		report_clash(r->pl, a, b);
		clashes++;
	}
	for (k = 0; k < n; k++)
		free(f[k].path);
	free(f);
	return clashes;
}

/* ------------------------------------------------------------------ */
/* writing the outputs                                                 */

/* Appends the lines of the file at PATH to AF. */
static void
append_file(struct atomicfile *af, const char *path)
{
	struct linereader *lr = lr_open(path);
	char *line;
	size_t len;

	while (lr && (line = lr_next(lr, &len)) != NULL) {
		ob_write(&af->ob, line, len);
		ob_putc(&af->ob, '\n');
	}
	lr_close(lr);
}

/*
 * DPC/ISR reports are per trace timeline: one report per scenario, either
 * into its own file ("{scenario}" in the path) or one after the other in
 * one file, each under a "== scenario NAME" line.
 */
static int
write_dpc_reports(const struct run *r, const struct pipeline_output *o)
{
	char **names, *argv[JOB_MAX_ARGV + 8];
	int nnames, i, k, rc = 0, per_file = strstr(o->path, "{scenario}") != NULL;
	struct atomicfile af;

	names = scenario_names(r, o->product, USABLE_JOBS, &nnames);
	if (!per_file)
		atomicfile_open(&af, o->path);
	for (k = 0; k < nnames; k++) {
		char *scratch = scratch_evt(r, o->product, o->line, names[k]);
		char *out = per_file ? scenario_path(o->path, names[k]) :
		    runtext_printf("%s/.scratch.%ld.%d.txt", r->pl->outdir, (long)getpid(), o->line);
		int argc = 0;

		argv[argc++] = "render";
		argv[argc++] = "dpc";
		for (i = 0; i < o->args.n && argc < JOB_MAX_ARGV; i++)
			argv[argc++] = pipeline_expand_arg(r->pl, o->args.v[i]);
		argv[argc++] = scratch;
		argv[argc] = NULL;
		if (run_output_tool(r, "render", argv, out) != 0)
			rc = -1;
		else if (!per_file) {
			ob_printf(&af.ob, "%s== scenario %s\n\n", k ? "\n" : "", names[k]);
			append_file(&af, out);
			unlink(out);
		}
		for (i = 2; i < argc - 1; i++)
			free(argv[i]);
		unlink(scratch);
		free(scratch);
		free(out);
	}
	if (!per_file) {
		if (rc == 0)
			atomicfile_commit(&af);
		else
			atomicfile_abort(&af);
	}
	free(names);
	return rc;
}

/* Writes a flame graph, diff or overweight report of SA into PATH with its tool. */
static int
write_with_tool(const struct run *r, const struct pipeline_output *o, struct scenagg *sa,
    const char *path)
{
	const char *tool = o->type == PIPELINE_OUT_DIFF ? "diff" :
	    o->type == PIPELINE_OUT_OVERWEIGHT ? "overweight" : "render";
	char *argv[JOB_MAX_ARGV + 8], *scratch;
	int argc = 0, i, rc, nexpanded;

	/* diffs compare nights: scenario names differ, so they are summed away */
	scratch = scratch_folded(r, sa, o, o->type == PIPELINE_OUT_FLAMEGRAPH ?
	    o->scenario_frame : 0);
	argv[argc++] = (char *)tool;
	if (o->type == PIPELINE_OUT_FLAMEGRAPH)
		argv[argc++] = "flame";
	for (i = 0; i < o->args.n && argc < JOB_MAX_ARGV; i++)
		argv[argc++] = pipeline_expand_arg(r->pl, o->args.v[i]);
	nexpanded = argc;
	if (o->baseline)
		argv[argc++] = o->baseline;
	argv[argc++] = scratch;
	argv[argc] = NULL;
	rc = run_output_tool(r, tool, argv, path);
	for (i = o->type == PIPELINE_OUT_FLAMEGRAPH ? 2 : 1; i < nexpanded; i++)
		free(argv[i]);
	unlink(scratch);
	free(scratch);
	return rc;
}

/* Writes output O for scenario SCEN only (NULL: all) into PATH. */
static int
write_one_output(const struct run *r, const struct pipeline_output *o, const char *scen,
    const char *path)
{
	struct scenagg *sa = aggregate_product(r, o->product, scen);
	struct atomicfile af;
	struct scenagg_out_opts oo = { o->scenario_frame, o->mean, o->integer };
	int rc = 0;

	switch (o->type) {
	case PIPELINE_OUT_FOLDED:
		atomicfile_open(&af, path);
		scenagg_write_folded(sa, &af.ob, &oo);
		atomicfile_commit(&af);
		break;
	case PIPELINE_OUT_BYNAME:
		atomicfile_open(&af, path);
		scenagg_write_byname(sa, &af.ob, &oo);
		atomicfile_commit(&af);
		break;
	case PIPELINE_OUT_FLAMEGRAPH:
	case PIPELINE_OUT_DPC_REPORT:
	case PIPELINE_OUT_DIFF:
	case PIPELINE_OUT_OVERWEIGHT:
		rc = write_with_tool(r, o, sa, path);
		break;
	default:
		break;
	}
	scenagg_free(sa);
	return rc;
}

/*
 * Writes output O: once over all scenarios, or once per scenario when
 * its file name contains "{scenario}" (a flame graph per scenario...).
 */
static int
write_output(const struct run *r, const struct pipeline_output *o)
{
	char **names;
	int nnames, k, rc = 0;

	free(usable_jobs(r, o->product, NULL, &nnames));
	if (nnames == 0) {
		/*
		 * Nothing to aggregate (every trace failed, or --merge-only on
		 * a cache the jobs have not filled): an empty file would read
		 * as a night without samples.  Not written, and said so.
		 */
		char *e = runtext_escaped(o->path);

		cli_warn("%s: not written: no trace of step %s has a usable result%s", e,
		    r->pl->prod[o->product].name, r->merge_only ? " in the cache" : "");
		free(e);
		return -1;
	}
	if (o->type == PIPELINE_OUT_DPC_REPORT)
		return write_dpc_reports(r, o);
	if (strstr(o->path, "{scenario}") == NULL)
		return write_one_output(r, o, NULL, o->path);
	/* a flame graph of no samples cannot be drawn: an empty scenario has none */
	names = scenario_names(r, o->product, o->type == PIPELINE_OUT_FLAMEGRAPH ?
	    JOBS_WITH_DATA : USABLE_JOBS, &nnames);
	for (k = 0; k < nnames; k++) {
		char *path = scenario_path(o->path, names[k]);

		if (write_one_output(r, o, names[k], path) != 0)
			rc = -1;
		free(path);
	}
	free(names);
	return rc;
}

int
outputs_write(struct run *r)
{
	int i, rc = 0;

	if (runcache_mkdirs(r->pl->outdir) != 0)
		cli_fatal("%s: %s", r->pl->outdir, strerror(errno));
	for (i = 0; i < r->pl->nout; i++)
		if (write_output(r, &r->pl->out[i]) != 0)
			rc = -1;
	return rc;
}

/* ------------------------------------------------------------------ */
/* the run report and one job's result                                 */

/*
 * The trace's health as etl2evt judged it while converting (its one
 * "unhealthy trace: ..." line in the job's log, lib/etl/convert.c), so
 * that a nightly reader sees "trace lost 12.5% of its events" on the row
 * of the numbers it skews; "" for a healthy trace or a job not converted.
 */
static char *
job_health(const struct run *r, const struct job *j)
{
	static const char tag[] = ": unhealthy trace: ", tail[] = "; see 'render health'";
	char *logp = job_cache_file(r, j, "log"), *line = NULL, *health = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *fp = fopen(logp, "r");

	while (fp && health == NULL && (n = getline(&line, &cap, fp)) > 0) {
		char *p = strstr(line, tag), *e;

		if (p == NULL || strncmp(line, "etl2evt:", 8) != 0)
			continue;
		p += sizeof tag - 1;
		e = strstr(p, tail);
		if (e == NULL)
			e = p + strcspn(p, "\n");
		*e = '\0';
		health = xstrdup(p);
	}
	if (fp)
		fclose(fp);
	free(line);
	free(logp);
	return health ? health : xstrdup("");
}

void
outputs_write_report(const struct run *r)
{
	struct atomicfile af;
	char *path = runtext_printf("%s/run-report.tsv", r->pl->outdir);
	int i;

	atomicfile_open(&af, path);
	ob_puts(&af.ob, "scenario\ttrace\tstep\taction\tstatus\tseconds\terror\thealth\n");
	for (i = 0; i < r->njobs; i++) {
		const struct job *j = &r->jobs[i];
		/* names come from file names: a tab, newline or ESC in one must not make rows */
		char *name = runtext_escaped(j->name), *trace = runtext_escaped(j->trace);
		char *err = runtext_escaped(j->error ? j->error : "");
		char *h = job_health(r, j), *health = runtext_escaped(h);

		ob_printf(&af.ob, "%s\t%s\t%s\t%s\t%s\t%.3f\t%s\t%s\n", name, trace,
		    r->pl->prod[j->prod].name, job_state_names[j->state],
		    j->status ? j->status : "failed", j->seconds, err, health);
		free(name);
		free(trace);
		free(err);
		free(h);
		free(health);
	}
	atomicfile_commit(&af);
	free(path);
}

int
outputs_emit_job(const struct run *r, const struct job *j, int tagged)
{
	struct scenagg *sa = scenagg_new();
	struct scenagg_out_opts oo = { 1, 0, 0 };
	struct scenagg_file_stats st;
	struct outbuf ob;
	char *res = job_cache_file(r, j, "out.gz");
	/* the tag is written as the start of the scenario frame: "STEP<TAB>SCENARIO;..." */
	char *name = tagged ? runtext_printf("%s\t%s", r->pl->prod[j->prod].name, j->name) :
	    xstrdup(j->name);
	int id = scenagg_scenario(sa, name), rc = 0;

	free(name);

	if (read_result(sa, id, res, &st) < 0 || st.error || st.skipped)
		rc = 1;
	ob_open(&ob, "-");
	scenagg_write_folded(sa, &ob, &oo);
	ob_close(&ob);
	scenagg_free(sa);
	free(res);
	return rc;
}

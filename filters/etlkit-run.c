/*
 * etlkit-run - run a a pipelines/NAME.yaml nightly job: convert every trace of
 * every scenario (in parallel, cached), aggregate, write the outputs.
 *
 * USAGE:  etlkit-run [-j N] [--verify] [--retry-failed] PIPELINE.yaml
 *         etlkit-run --list-jobs [--todo] PIPELINE.yaml    (for a scheduler)
 *         etlkit-run --run-job ID [--emit] PIPELINE.yaml   (one trace)
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
 */
/* XSI (POSIX 2008 + X/Open 7) for realpath(), which plain POSIX leaves out */
#define _XOPEN_SOURCE 700
#include "base/atomicfile.h"
#include "base/cli.h"
#include "base/exec_path.h"
#include "evt/evt.h"
#include "run/pipeline.h"
#include "run/runcache.h"
#include "report/scenagg.h"
#include "base/sha256.h"
#include "stacks/stacks.h"
#include "etl/zip.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

enum trace_type { T_ETL, T_EVT, T_FOLDED };
/* J_SKIPPED: a matched path that is no trace (dangling link, FIFO...): reported, never opened */
enum job_state {
	J_TODO, J_CACHED, J_FAILED_CACHED, J_CONVERTED, J_FAILED, J_TIMEOUT, J_SKIPPED
};

static const char *const state_names[] = {
	"todo", "reused", "reused", "converted", "failed", "timeout", "skipped"
};

#define MAX_CHAIN 3
#define MAX_ARGV 256

struct command {
	const char *tool;	/* etl2evt, evtfilter, stackfold */
	char *path;		/* executable */
	char *argv[MAX_ARGV];
	int argc;
};

struct job {
	int scen;		/* pipeline scenario index */
	char *name;		/* scenario name */
	char *trace;		/* absolute path */
	char *trace_id;		/* in keys and records: relative to the pipeline's directory when under it */
	int prod;
	enum trace_type type;
	struct command cmd[MAX_CHAIN];
	int ncmd;
	char *settings;
	char key[RUNCACHE_KEYLEN + 1];
	int dup_of;		/* 1 + index of the job converting the same key, or 0 */
	enum job_state state;
	char *status;		/* ok, partial, failed (from the record) */
	char *error;
	double seconds;
	pid_t pid;
	double started;
};

static struct pipeline *pl;
static struct job *jobs;
static int njobs;
static char *self_dir;
static int opt_verify, opt_retry, opt_quiet;
static volatile sig_atomic_t interrupted;

static void
usage(FILE *fp)
{
	fprintf(fp, "usage: etlkit-run [-j n] [--verify] [--retry-failed] [--list-jobs [--todo]] "
	    "[--run-job id [--emit]] [--merge-only] pipeline.yaml\n");
}

static void
help(void)
{
	usage(stdout);
	fputs("Runs a nightly multi-scenario pipeline (docs/pipelines.md).\n"
	    "  -j, --jobs N        traces converted in parallel [pipeline 'jobs', else CPUs]\n"
	    "      --verify        re-hash every trace, even when size and mtime match the record\n"
	    "      --retry-failed  convert again traces whose last conversion failed\n"
	    "      --list-jobs     print the per-trace jobs (INDEX KEY STATE STEP SCENARIO TRACE COMMAND)\n"
	    "      --todo          with --list-jobs: only the jobs that need converting\n"
	    "      --run-job ID    convert one job (1-based INDEX or KEY), as a scheduler would\n"
	    "      --emit          with --run-job: print its result as folded stacks with the\n"
	    "                      scenario frame (a mapper for aggregate --merge)\n"
	    "      --merge-only    convert nothing: write the outputs from the cache\n"
	    "  -q, --quiet         no summary on stderr\n"
	    "  -h, --help, --version\n"
	    "Exit: 0 all traces ok, 1 partial (failed traces reported, others aggregated), 2 fatal.\n",
	    stdout);
	exit(0);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *
xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* ------------------------------------------------------------------ */
/* tools                                                               */

/* The etlkit tool NAME (lib/base/exec_path.h: never $PATH's diff). */
static char *
find_tool(const char *name)
{
	return exec_path_find(self_dir, name);
}

/* ------------------------------------------------------------------ */
/* jobs                                                                */

/* A control byte that text (folded stacks, evt) never holds raw. */
static int
has_binary_byte(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t' && s[i] != '\r') || s[i] == 0x7f)
			return 1;
	return 0;
}

/*
 * What a trace is, from its content, not its name (".diagsession",
 * ".ETL.zip" and renamed files are common): a zip (PerfView .etl.zip,
 * Visual Studio .diagsession) or binary bytes go to etl2evt, which
 * reads ETL and zips and says what else it is; text (plain or gzip,
 * as the line reader sees it) is evt when it starts with an evt
 * header, else folded stacks.
 */
static enum trace_type
trace_type(const char *path)
{
	unsigned char magic[4];
	struct linereader *lr;
	char *line;
	size_t len;
	int fd = open(path, O_RDONLY | O_NONBLOCK), zip;
	enum trace_type type = T_FOLDED;

	if (fd < 0)
		return T_ETL;	/* etl2evt reports why it cannot be read */
	zip = read_full_at(fd, magic, sizeof(magic), 0) == 0 && zip_magic(magic, sizeof(magic));
	close(fd);
	if (zip)
		return T_ETL;
	if ((lr = lr_open(path)) == NULL)
		return T_ETL;
	lr_set_quiet(lr);	/* a peek: the tool that reads it reports */
	while ((line = lr_next(lr, &len)) != NULL) {
		if (len == 0)
			continue;
		if (has_binary_byte(line, len))
			type = T_ETL;
		else if (evt_classify(line, len) == EVT_HEADER)
			type = T_EVT;
		break;
	}
	/* lines the reader would not hand out (NUL bytes, 64 MiB): binary */
	if (lr_error(lr) || lr_skipped(lr) > 0)
		type = T_ETL;
	lr_close(lr);
	return type;
}

static void
cmd_arg(struct command *c, const char *s)
{
	if (c->argc >= MAX_ARGV - 1)
		cli_fatal("%s: too many arguments for %s", pl->file, c->tool);
	c->argv[c->argc++] = xstrdup(s);
	c->argv[c->argc] = NULL;
}

/*
 * A step or output argument: "{dir}" becomes the pipeline's directory,
 * so a path next to the pipeline works from any working directory.
 * Nothing else is interpreted.  Returns a malloc'ed string.
 */
static char *
expand_arg(const char *a)
{
	const char *at = strstr(a, "{dir}");
	char *r, *rest;

	if (at == NULL)
		return xstrdup(a);
	rest = expand_arg(at + 5);
	r = xasprintf("%.*s%s%s", (int)(at - a), a, pl->dir, rest);
	free(rest);
	return r;
}

/* Appends a pipeline-supplied argument, "{dir}" expanded. */
static void
cmd_user_arg(struct command *c, const char *s)
{
	char *e = expand_arg(s);

	cmd_arg(c, e);
	free(e);
}

static struct command *
cmd_new(struct job *j, const char *tool)
{
	struct command *c = &j->cmd[j->ncmd++];

	memset(c, 0, sizeof(*c));
	c->tool = tool;
	c->path = find_tool(tool);
	cmd_arg(c, tool);
	return c;
}

/*
 * The chain for one trace: etl2evt (for ETL) | evtfilter (when the step
 * or the scenario asks for it) | stackfold (when the step has it).  The
 * trace is the first tool's file argument.
 */
/* "auto", "most-cpu", "first-long": evtfilter's --poi heuristics (PerfView's process of interest) */
static int
is_heuristic(const char *p)
{
	return p && (!strcmp(p, "auto") || !strcmp(p, "most-cpu") || !strcmp(p, "first-long"));
}

static void
add_range(struct command *c, const struct pipeline_scenario *sc, const char *opt_s, const char *opt_e)
{
	char num[64];

	if (sc->has_start) {
		snprintf(num, sizeof(num), "%.6f", sc->start_ms);
		cmd_arg(c, opt_s);
		cmd_arg(c, num);
	}
	if (sc->has_end) {
		snprintf(num, sizeof(num), "%.6f", sc->end_ms);
		cmd_arg(c, opt_e);
		cmd_arg(c, num);
	}
}

/*
 * The chain for one trace: etl2evt (for ETL; the scenario's process and
 * time range are selected at the source) | evtfilter (when the step has
 * it, for the process heuristic, or for an evt trace's process/range) |
 * stackfold (when the step has it).  The trace is the first tool's file
 * argument; folded traces skip the evt tools.
 */
static void
build_chain(struct job *j)
{
	const struct pipeline_product *pr = &pl->prod[j->prod];
	const struct pipeline_scenario *sc = &pl->scen[j->scen];
	int i, first = 1;
	int named = pr->scenario_process && sc->process && strcmp(sc->process, "*") != 0 &&
	    !is_heuristic(sc->process);
	int heuristic = pr->scenario_process && is_heuristic(sc->process);
	char poi[32];
	struct command *c;

	if (j->type == T_ETL) {
		c = cmd_new(j, "etl2evt");
		if (named) {
			cmd_arg(c, "-p");
			cmd_arg(c, sc->process);
		}
		add_range(c, sc, "-s", "-e");
		for (i = 0; i < pr->args[PIPELINE_ETL2EVT].n; i++)
			cmd_user_arg(c, pr->args[PIPELINE_ETL2EVT].v[i]);
		cmd_arg(c, j->trace);
		first = 0;
	}
	if (j->type != T_FOLDED && (pr->has_step[PIPELINE_EVTFILTER] || heuristic ||
	    (j->type == T_EVT && (named || sc->has_start || sc->has_end)))) {
		c = cmd_new(j, "evtfilter");
		if (heuristic) {
			snprintf(poi, sizeof(poi), "--poi=%s", sc->process);
			cmd_arg(c, poi);
		}
		if (j->type == T_EVT) {
			if (named) {
				cmd_arg(c, "-p");
				cmd_arg(c, sc->process);
			}
			add_range(c, sc, "--start", "--end");
		}
		for (i = 0; i < pr->args[PIPELINE_EVTFILTER].n; i++)
			cmd_user_arg(c, pr->args[PIPELINE_EVTFILTER].v[i]);
		if (first)
			cmd_arg(c, j->trace);
		first = 0;
	}
	if (pr->has_step[PIPELINE_STACKFOLD]) {
		c = cmd_new(j, "stackfold");
		for (i = 0; i < pr->args[PIPELINE_STACKFOLD].n; i++)
			cmd_user_arg(c, pr->args[PIPELINE_STACKFOLD].v[i]);
		if (first)
			cmd_arg(c, j->trace);
	}
}

/* Settings text: every command with the identity of its executable. */
static void
build_settings(struct job *j)
{
	size_t cap = 256, len = 0;
	char *s = xmalloc(cap);
	int i, a;

	s[0] = '\0';
	for (i = 0; i < j->ncmd; i++) {
		struct command *c = &j->cmd[i];
		struct stat st;
		char head[PATH_MAX + 128];
		int64_t sec;
		long nsec;

		if (c->path && stat(c->path, &st) == 0) {
			stat_mtime(&st, &sec, &nsec);
			snprintf(head, sizeof(head), "%s size=%lld mtime=%lld.%09ld\n", c->path,
			    (long long)st.st_size, (long long)sec, nsec);
		} else
			snprintf(head, sizeof(head), "%s (not found)\n", c->tool);
		for (a = -1; a < c->argc; a++) {
			/* the trace itself is in the key already (as trace_id) */
			const char *t = a < 0 ? head : strcmp(c->argv[a], j->trace) == 0 ?
			    "{trace}" : c->argv[a];
			size_t n = strlen(t) + 2;

			if (len + n >= cap) {
				cap = (len + n) * 2;
				s = xrealloc(s, cap);
			}
			memcpy(s + len, t, n - 2);
			len += n - 2;
			s[len++] = a < 0 ? ' ' : '\037';
			s[len] = '\0';
		}
		s[len++] = '\n';
		s[len] = '\0';
	}
	j->settings = s;
}

/* A readable command line for records and messages (never executed). */
static char *
command_text(const struct job *j)
{
	size_t cap = 256, len = 0;
	char *s = xmalloc(cap);
	int i, a;

	s[0] = '\0';
	if (j->state == J_SKIPPED) {
		free(s);
		return xasprintf("(skipped: %s) %s", j->error, j->trace);
	}
	if (j->ncmd == 0) {
		free(s);
		return xasprintf("(copy) %s", j->trace);
	}
	for (i = 0; i < j->ncmd; i++)
		for (a = 0; a < j->cmd[i].argc; a++) {
			const char *t = j->cmd[i].argv[a];
			int quote = strpbrk(t, " \t'\"|;&$") != NULL || *t == '\0';
			size_t n = strlen(t) + 8;

			if (len + n >= cap) {
				cap = (len + n) * 2;
				s = xrealloc(s, cap);
			}
			if (a == 0 && i > 0)
				len += (size_t)sprintf(s + len, " | ");
			else if (a > 0)
				s[len++] = ' ';
			len += (size_t)sprintf(s + len, quote ? "'%s'" : "%s", t);
		}
	return s;
}

/*
 * Adds the job of product PROD for TRACE.  SKIP_WHY non-NULL: the path
 * is no trace; the job is reported as failed with that reason and
 * nothing ever opens the path.
 */
static void
add_job(int scen, const char *name, const char *trace, int prod, const char *skip_why)
{
	struct job *j;

	jobs = xrealloc(jobs, (size_t)(njobs + 1) * sizeof(*jobs));
	j = &jobs[njobs++];
	memset(j, 0, sizeof(*j));
	j->scen = scen;
	j->name = xstrdup(name);
	j->trace = xstrdup(trace);
	{
		/* a pipeline directory moved with its traces and cache keeps its cache */
		size_t n = strlen(pl->dir);

		j->trace_id = xstrdup(strncmp(trace, pl->dir, n) == 0 && trace[n] == '/' ?
		    trace + n + 1 : trace);
	}
	j->prod = prod;
	if (skip_why) {
		j->state = J_SKIPPED;
		j->status = xstrdup("failed");
		j->error = xstrdup(skip_why);
		j->settings = xstrdup("");
	} else {
		j->type = trace_type(trace);
		build_chain(j);
		build_settings(j);
	}
	runcache_key(j->key, pl->prod[prod].name, j->trace_id, j->settings);
}

/*
 * Why a matched PATH is not a trace, or NULL when it is a regular file
 * (following links).  Directories are not traces either, but a glob
 * over a folder of traces meets them normally: *IS_DIR tells the caller to
 * pass over them.
 */
static const char *
not_a_trace(const char *path, int *is_dir)
{
	struct stat st, lst;

	*is_dir = 0;
	if (stat(path, &st) != 0) {
		if (errno == ENOENT && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
			return "dangling symbolic link (its target does not exist)";
		return strerror(errno);
	}
	if (S_ISREG(st.st_mode))
		return NULL;
	if (S_ISDIR(st.st_mode)) {
		*is_dir = 1;
		return "a directory";
	}
	if (S_ISFIFO(st.st_mode))
		return "a FIFO, not a regular file (never opened: reading it could block the run)";
	if (S_ISSOCK(st.st_mode))
		return "a socket, not a regular file";
	return "a device, not a regular file";
}

/* S escaped as evt values are (docs/evt-format.md §4): one line, no raw control byte. */
static char *
escaped(const char *s)
{
	size_t n = strlen(s);
	char *e = xmalloc(3 * n + 1);

	e[evt_escape(e, s, n, 0)] = '\0';
	return e;
}

static int
excluded(const struct pipeline_scenario *sc, const char *path)
{
	int i;

	for (i = 0; i < sc->exclude.n; i++)
		if (scenagg_glob(sc->exclude.v[i], path, NULL, NULL, 0, NULL))
			return 1;
	return 0;
}

/* Expands the scenarios' globs into jobs; returns the number of empty scenarios. */
static int
expand_scenarios(void)
{
	int s, f, p, empty = 0;
	size_t k;

	for (s = 0; s < pl->nscen; s++) {
		struct pipeline_scenario *sc = &pl->scen[s];
		int found = 0;

		for (f = 0; f < sc->files.n; f++) {
			glob_t g;
			int r = glob(sc->files.v[f], 0, NULL, &g);

			if (r == GLOB_NOMATCH)
				continue;
			if (r != 0)
				cli_fatal("%s:%d: cannot expand '%s'", pl->file, sc->line, sc->files.v[f]);
			for (k = 0; k < g.gl_pathc; k++) {
				const char *path = g.gl_pathv[k], *why;
				char *name;
				int is_dir;

				if (excluded(sc, path))
					continue;
				why = not_a_trace(path, &is_dir);
				if (is_dir)
					continue;
				if (why) {
					char *e = escaped(path);

					cli_warn("%s:%d: %s: skipped: %s", pl->file, sc->line, e, why);
					free(e);
				}
				name = scenagg_name_from_path(path, sc->files.v[f], sc->name);
				if (name == NULL)
					name = scenagg_name_from_path(path, NULL, sc->name);
				found++;
				for (p = 0; p < pl->nprod; p++)
					add_job(s, name, path, p, why);
				free(name);
			}
			globfree(&g);
		}
		if (found == 0) {
			cli_warn("%s:%d: no trace matches %s%s", pl->file, sc->line, sc->files.v[0],
			    sc->files.n > 1 ? " (or the other globs)" : "");
			empty++;
		}
	}
	return empty;
}

/* ------------------------------------------------------------------ */
/* cache state                                                         */

static char *
cache_file(const struct job *j, const char *suffix)
{
	return runcache_path(pl->cache, j->key, suffix);
}

/* Is the cached result of J still the product of the trace as it is now? */
static enum job_state
check_cache(struct job *j, int retry)
{
	struct runcache_record r;
	struct stat st, rs;
	char *rec = cache_file(j, "rec"), *res = cache_file(j, "out.gz");
	enum job_state state = J_TODO;
	int64_t sec = 0;
	long nsec = 0;

	if (runcache_read(rec, &r) == 0) {
		int found = stat(j->trace, &st) == 0;

		if (found)
			stat_mtime(&st, &sec, &nsec);
		if (found && strcmp(r.trace, j->trace_id) == 0 &&
		    r.size == (uint64_t)st.st_size && r.mtime_s == sec && r.mtime_ns == nsec) {
			char hex[65];

			if (opt_verify && (sha256_file(j->trace, hex) != 0 || strcmp(hex, r.sha256) != 0))
				state = J_TODO;
			else if (strcmp(r.status, "failed") == 0)
				state = retry ? J_TODO : J_FAILED_CACHED;
			else if (stat(res, &rs) == 0 && (uint64_t)rs.st_size == r.result_size)
				state = J_CACHED;
		}
		if (state != J_TODO) {
			free(j->status);
			free(j->error);
			j->status = xstrdup(r.status);
			j->error = r.error ? xstrdup(r.error) : NULL;
			j->seconds = r.seconds;
		}
		runcache_free(&r);
	}
	free(rec);
	free(res);
	return state;
}

/* ------------------------------------------------------------------ */
/* converting one trace (in a worker process)                          */

/* A worker or tool dies with its parent: a killed run leaves nothing running. */
static void
die_with_parent(pid_t parent)
{
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	if (getppid() != parent)
		_exit(EXIT_FATAL);
}

/*
 * Copies the trace (plain or gzip) into GZ: a product with no tools.
 * Returns 0, 1 when lines were skipped or the input is damaged (what
 * was read is kept, as the tools do), or 2.
 */
static int
copy_trace(const char *path, gzFile gz, char **why)
{
	struct linereader *lr = lr_open(path);
	char *line;
	size_t len;
	int status = 0;

	if (lr == NULL) {
		*why = xasprintf("%s: %s", path, strerror(errno));
		return 2;
	}
	while ((line = lr_next(lr, &len)) != NULL) {
		line[len] = '\n';
		if (gzwrite(gz, line, (unsigned)(len + 1)) != (int)(len + 1)) {
			*why = xasprintf("cache write error");
			lr_close(lr);
			return 2;
		}
	}
	if (lr_error(lr)) {
		*why = xasprintf("%s: %s", path, lr_error(lr));
		status = 1;
	} else if (lr_skipped(lr)) {
		*why = xasprintf("%s: %lu malformed line%s skipped", path, lr_skipped(lr),
		    lr_skipped(lr) == 1 ? "" : "s");
		status = 1;
	}
	lr_close(lr);
	return status;
}

/*
 * Runs the chain with pipes between the tools, the last one's output
 * compressed into GZ.  Returns the worst status: 0, 1 (a tool skipped
 * input), 2 (a tool failed or died).
 */
static int
run_chain(struct job *j, gzFile gz, int logfd, char **why)
{
	pid_t pids[MAX_CHAIN], self = getpid();
	int in = -1, i, worst = 0, status;
	int fds[2];
	char *buf;
	ssize_t r;

	for (i = 0; i < j->ncmd; i++)
		if (j->cmd[i].path == NULL) {
			*why = xasprintf("%s not found (next to etlkit-run or on PATH)", j->cmd[i].tool);
			return 2;
		}
	in = open("/dev/null", O_RDONLY);
	if (in < 0) {
		*why = xasprintf("/dev/null: %s", strerror(errno));
		return 2;
	}
	for (i = 0; i < j->ncmd; i++) {
		if (pipe(fds) != 0) {
			*why = xasprintf("pipe: %s", strerror(errno));
			return 2;
		}
		pids[i] = fork();
		if (pids[i] < 0) {
			*why = xasprintf("fork: %s", strerror(errno));
			return 2;
		}
		if (pids[i] == 0) {
			die_with_parent(self);
			dup2(in, STDIN_FILENO);
			dup2(fds[1], STDOUT_FILENO);
			dup2(logfd, STDERR_FILENO);
			close(in);
			close(fds[0]);
			close(fds[1]);
			close(logfd);
			signal(SIGPIPE, SIG_DFL);
			execv(j->cmd[i].path, j->cmd[i].argv);
			fprintf(stderr, "etlkit-run: cannot run %s: %s\n", j->cmd[i].path, strerror(errno));
			_exit(127);
		}
		close(in);
		close(fds[1]);
		in = fds[0];
	}
	buf = xmalloc(1 << 18);
	for (;;) {
		r = read(in, buf, 1 << 18);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (gzwrite(gz, buf, (unsigned)r) != (int)r) {
			*why = xasprintf("cache write error");
			worst = 2;
			break;
		}
	}
	free(buf);
	close(in);
	for (i = 0; i < j->ncmd; i++) {
		while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR)
			;
		if (WIFSIGNALED(status)) {
			/* SIGPIPE upstream is the echo of a failure downstream */
			if (WTERMSIG(status) != SIGPIPE || worst < 2) {
				if (*why == NULL)
					*why = xasprintf("%s killed by signal %d", j->cmd[i].tool,
					    WTERMSIG(status));
				worst = 2;
			}
		} else if (WEXITSTATUS(status) != 0) {
			int e = WEXITSTATUS(status) == 1 ? 1 : 2;

			if (e == 2 && *why == NULL)
				*why = xasprintf("%s exited with status %d", j->cmd[i].tool,
				    WEXITSTATUS(status));
			if (e > worst)
				worst = e;
		}
	}
	return worst;
}

/* The first lines of the log, joined, as the error of a record. */
static char *
log_excerpt(const char *logpath, const char *fallback)
{
	FILE *fp = fopen(logpath, "r");
	char line[512], out[1024];
	size_t o = 0;
	int n = 0;

	out[0] = '\0';
	if (fp) {
		while (n < 3 && fgets(line, sizeof(line), fp)) {
			size_t k = strcspn(line, "\n");

			line[k] = '\0';
			if (k == 0)
				continue;
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s", n ? " / " : "", line);
			if (o >= sizeof(out))
				o = sizeof(out) - 1;
			n++;
		}
		fclose(fp);
	}
	if (n == 0)
		return xstrdup(fallback ? fallback : "failed");
	if (fallback && strstr(out, fallback) == NULL && o + strlen(fallback) + 4 < sizeof(out))
		snprintf(out + o, sizeof(out) - o, " / %s", fallback);
	return xstrdup(out);
}

static char *
utc_now(void)
{
	time_t t = time(NULL);
	struct tm tm;
	char buf[32];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return xstrdup(buf);
}

/* Does the result at PATH hold no stack and no event (only headers and comments)? */
static int
result_is_empty(const char *path)
{
	struct linereader *lr = lr_open(path);
	char *line;
	size_t len;
	int empty = 1;

	if (lr == NULL)
		return 0;
	while (empty && (line = lr_next(lr, &len)) != NULL)
		if (evt_classify(line, len) == EVT_EVENT)
			empty = 0;
	lr_close(lr);
	return empty;
}

/* Converts job J into the cache.  Exit status: 0 ok (or empty), 1 partial, 2 failed. */
static int
convert(struct job *j)
{
	char *res = cache_file(j, "out.gz"), *rec = cache_file(j, "rec");
	char *logp = cache_file(j, "log"), *tmp = atomicfile_tmpname(res), *why = NULL;
	struct runcache_record r;
	struct stat st;
	double t0 = now();
	int logfd, status;
	gzFile gz;

	memset(&r, 0, sizeof(r));
	memcpy(r.key, j->key, sizeof(r.key));
	r.product = pl->prod[j->prod].name;
	r.scenario = j->name;
	r.trace = j->trace_id;
	r.command = command_text(j);
	logfd = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0666);
	if (logfd < 0)
		cli_fatal("%s: %s", logp, strerror(errno));
	if (stat(j->trace, &st) != 0 || sha256_file(j->trace, r.sha256) != 0) {
		why = xasprintf("%s: %s", j->trace, strerror(errno));
		status = 2;
	} else {
		r.size = (uint64_t)st.st_size;
		stat_mtime(&st, &r.mtime_s, &r.mtime_ns);
		gz = gzopen(tmp, "wb1");	/* fast: the lean result is read back once a night */
		if (gz == NULL)
			cli_fatal("%s: %s", tmp, strerror(errno));
		status = j->ncmd == 0 ? copy_trace(j->trace, gz, &why) :
		    run_chain(j, gz, logfd, &why);
		if (gzclose(gz) != Z_OK && status < 2) {
			why = xasprintf("%s: write error", tmp);
			status = 2;
		}
	}
	close(logfd);
	if (why && j->ncmd == 0) {
		/* the copy has no tool to log for it */
		FILE *fp = fopen(logp, "a");

		if (fp) {
			fprintf(fp, "%s\n", why);
			fclose(fp);
		}
	}
	r.exit = status;
	r.status = status == 0 ? "ok" : status == 1 ? "partial" : "failed";
	r.error = status == 0 ? NULL : log_excerpt(logp, why);
	r.converted_utc = utc_now();
	r.seconds = now() - t0;
	if (status < 2) {
		int fd = open(tmp, O_RDONLY);

		if (fd >= 0) {
			(void)fsync(fd);
			close(fd);
		}
		if (rename(tmp, res) != 0)
			cli_fatal("%s: %s", res, strerror(errno));
		if (stat(res, &st) == 0)
			r.result_size = (uint64_t)st.st_size;
		if (status == 0 && result_is_empty(res)) {
			/* a trace with nothing of this kind is a result, not a failure */
			r.status = "empty";
			r.error = xstrdup("no stacks or events in the result: the trace holds nothing "
			    "this step selects (for CPU stacks: no samples)");
		}
	} else
		unlink(tmp);
	runcache_write(rec, &r);
	free(r.command);
	free(r.error);
	free(r.converted_utc);
	free(why);
	free(res);
	free(rec);
	free(logp);
	free(tmp);
	return status;
}

/* ------------------------------------------------------------------ */
/* running jobs in parallel                                            */

static void
on_signal(int sig)
{
	interrupted = sig;
}

static pid_t
start_worker(struct job *j)
{
	pid_t parent = getpid(), pid = fork();

	if (pid < 0)
		cli_fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		setpgid(0, 0);	/* the worker and its tools form one group: killable together */
		die_with_parent(parent);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		_exit(convert(j));
	}
	setpgid(pid, pid);
	j->pid = pid;
	j->started = now();
	return pid;
}

static void
progress(int done, int total)
{
	static int tty = -1;

	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	if (tty && !opt_quiet)
		fprintf(stderr, "\retlkit-run: %d/%d traces converted ", done, total);
}

static void
run_jobs(int *todo, int ntodo, int parallel)
{
	int next = 0, running = 0, done = 0, i;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while ((next < ntodo || running > 0) && !interrupted) {
		int status;
		pid_t pid;

		while (running < parallel && next < ntodo) {
			start_worker(&jobs[todo[next++]]);
			running++;
		}
		pid = waitpid(-1, &status, WNOHANG);
		if (pid == 0) {
			struct timespec ts = { 0, 20 * 1000000 };

			if (pl->timeout_s > 0)
				for (i = 0; i < njobs; i++)
					if (jobs[i].pid > 0 && now() - jobs[i].started > pl->timeout_s) {
						kill(-jobs[i].pid, SIGKILL);
						jobs[i].state = J_TIMEOUT;
					}
			nanosleep(&ts, NULL);
			continue;
		}
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < njobs; i++)
			if (jobs[i].pid == pid) {
				jobs[i].pid = 0;
				if (jobs[i].state == J_TIMEOUT)
					;	/* no record: a slow night is retried, not remembered */
				else if (WIFEXITED(status) && WEXITSTATUS(status) <= 1)
					jobs[i].state = J_CONVERTED;
				else
					jobs[i].state = J_FAILED;
				running--;
				done++;
				progress(done, ntodo);
				break;
			}
	}
	if (isatty(STDERR_FILENO) && !opt_quiet && ntodo > 0)
		fputs("\r\033[K", stderr);
	if (interrupted) {
		for (i = 0; i < njobs; i++)
			if (jobs[i].pid > 0)
				kill(-jobs[i].pid, SIGTERM);
		while (wait(NULL) > 0 || errno == EINTR)
			;
		cli_warn("interrupted: converted traces are kept in the cache; outputs not written");
		signal(interrupted, SIG_DFL);
		raise(interrupted);
		exit(EXIT_FATAL);
	}
}

/*
 * After a conversion: the job's result is whatever the cache now holds
 * for the trace as it is (a record of an older version of the trace, left
 * by a conversion that died, does not count).
 */
static void
settle(struct job *j)
{
	if (j->state == J_SKIPPED || check_cache(j, 0) != J_TODO)
		return;
	free(j->status);
	free(j->error);
	j->status = xstrdup("failed");
	j->error = j->state == J_TIMEOUT ? xasprintf("timed out after %g s", pl->timeout_s) :
	    xstrdup("the conversion left no record (killed?)");
}

/* ------------------------------------------------------------------ */
/* outputs                                                             */

static int
job_usable(const struct job *j)
{
	return j->status && strcmp(j->status, "failed") != 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int
cmp_job_order(const void *a, const void *b)
{
	const struct job *x = &jobs[*(const int *)a], *y = &jobs[*(const int *)b];
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->trace, y->trace);
}

/*
 * Reads one cached result into scenario ID: folded stacks as they are,
 * evt (a product without stackfold) as stackfold would fold it, with the
 * process as the root frame.
 */
static int
read_result(struct scenagg *sa, int id, const char *path, struct scenagg_file_stats *st)
{
	static struct stk_config cfg;
	static int cfg_ready;
	int evt = scenagg_is_evt(path);

	if (!cfg_ready) {
		stk_config_init(&cfg);
		cfg.roots = STK_ROOTS_COMM;
		cfg.no_scenario = 1;
		cfg_ready = 1;
	}
	if (evt < 0)
		return -1;
	return evt ? scenagg_read_stacks(sa, id, path, &cfg, st) : scenagg_read(sa, id, path, st);
}

/* Aggregates product PROD over all usable traces. */
static struct scenagg *
aggregate_product(int prod, const char *scen)
{
	struct scenagg *sa = scenagg_new();
	int *order = xmalloc(((size_t)njobs + 1) * sizeof(int)), n = 0, i;

	for (i = 0; i < njobs; i++)
		if (jobs[i].prod == prod && job_usable(&jobs[i]) &&
		    (scen == NULL || strcmp(jobs[i].name, scen) == 0))
			order[n++] = i;
	qsort(order, (size_t)n, sizeof(int), cmp_job_order);
	for (i = 0; i < n; i++) {
		struct job *j = &jobs[order[i]];
		struct scenagg_file_stats st;
		char *res = cache_file(j, "out.gz");
		int id = scenagg_scenario(sa, j->name);

		scenagg_count_file(sa, id);
		if (read_result(sa, id, res, &st) < 0 || st.error || st.skipped) {
			cli_warn("%s: cached result of %s unusable", res, j->trace);
			free(j->status);
			j->status = xstrdup("partial");
		}
		free(res);
	}
	free(order);
	return sa;
}

/* Runs TOOL ARGS... with stdin from IN_PATH (or /dev/null) and stdout into OUT_PATH atomically. */
static int
run_output_tool(const char *tool, char **argv, const char *in_path, const char *out_path)
{
	char *path = find_tool(tool), *tmp = atomicfile_tmpname(out_path);
	int status = 0, in, out;
	pid_t pid;

	if (path == NULL) {
		cli_warn("%s: %s not found (next to etlkit-run or on PATH); output not written",
		    out_path, tool);
		free(tmp);
		return -1;
	}
	in = open(in_path ? in_path : "/dev/null", O_RDONLY);
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (in < 0 || out < 0)
		cli_fatal("%s: %s", in < 0 ? in_path : tmp, strerror(errno));
	pid = fork();
	if (pid < 0)
		cli_fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(in, STDIN_FILENO);
		dup2(out, STDOUT_FILENO);
		close(in);
		close(out);
		execv(path, argv);
		fprintf(stderr, "etlkit-run: cannot run %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	close(in);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (fsync(out) != 0 && errno != EINVAL)
		status = -1;
	close(out);
	free(path);
	if (!(WIFEXITED(status) && WEXITSTATUS(status) <= 1)) {
		cli_warn("%s: %s failed (status %d); output not written", out_path, tool,
		    WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
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
scratch_folded(struct scenagg *sa, const struct pipeline_output *o, int scenario_frame)
{
	struct scenagg_out_opts oo = { scenario_frame, o->mean, 1 };
	struct outbuf ob;
	char *path = xasprintf("%s/.scratch.%ld.%d.folded", pl->outdir, (long)getpid(), o->line);

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
scratch_evt(int prod, int yaml_line, const char *scen)
{
	char *path = xasprintf("%s/.scratch.%ld.%d.evt", pl->outdir, (long)getpid(), yaml_line);
	int *order = xmalloc(((size_t)njobs + 1) * sizeof(int)), n = 0, i, header = 0;
	struct outbuf ob;

	for (i = 0; i < njobs; i++)
		if (jobs[i].prod == prod && job_usable(&jobs[i]) &&
		    (scen == NULL || strcmp(jobs[i].name, scen) == 0))
			order[n++] = i;
	qsort(order, (size_t)n, sizeof(int), cmp_job_order);
	ob_open(&ob, path);
	for (i = 0; i < n; i++) {
		char *res = cache_file(&jobs[order[i]], "out.gz"), *line;
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
	free(order);
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
	r = xasprintf("%.*s%s%s", (int)(at - path), path, safe, at + 10);
	free(safe);
	base = strrchr(r, '/') + 1;
	if (*base == '\0') {
		safe = r;
		r = xasprintf("%s_", safe);
		free(safe);
	} else if (*base == '.')
		*base = '_';
	return r;
}

enum name_filter { ALL_JOBS, USABLE_JOBS, JOBS_WITH_DATA };

/* The distinct scenario names of product PROD's jobs (those WHICH selects), sorted; *N set. */
static char **
scenario_names(int prod, enum name_filter which, int *n)
{
	char **names = xmalloc(((size_t)njobs + 1) * sizeof(*names));
	int i, k = 0, m = 0;

	for (i = 0; i < njobs; i++)
		if (jobs[i].prod == prod && (which == ALL_JOBS || (job_usable(&jobs[i]) &&
		    (which == USABLE_JOBS || strcmp(jobs[i].status, "empty") != 0))))
			names[k++] = jobs[i].name;
	qsort(names, (size_t)k, sizeof(*names), cmp_str);
	for (i = 0; i < k; i++)
		if (m == 0 || strcmp(names[m - 1], names[i]) != 0)
			names[m++] = names[i];
	*n = m;
	return names;
}

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

/*
 * Two scenarios whose names differ only where file names cannot ('a/b'
 * and 'a_b') would write one "{scenario}" file, the second silently
 * replacing the first.  Lists every file the outputs will write and
 * reports each clash, naming both scenarios.  Returns how many.
 */
static int
output_collisions(void)
{
	struct out_file *f = NULL;
	size_t n = 0, k;
	int i, m, nnames, clashes = 0;

	for (i = 0; i < pl->nout; i++) {
		const struct pipeline_output *o = &pl->out[i];
		char **names;

		if (strstr(o->path, "{scenario}") == NULL) {
			f = xrealloc(f, (n + 1) * sizeof(*f));
			f[n++] = (struct out_file){ xstrdup(o->path), i, NULL };
			continue;
		}
		names = scenario_names(o->product, ALL_JOBS, &nnames);
		f = xrealloc(f, (n + (size_t)nnames + 1) * sizeof(*f));
		for (m = 0; m < nnames; m++)
			f[n++] = (struct out_file){ scenario_path(o->path, names[m]), i, names[m] };
		free(names);
	}
	qsort(f, n, sizeof(*f), cmp_out_file);
	for (k = 1; k < n; k++) {
		const struct out_file *a = &f[k - 1], *b = &f[k];
		char *ea, *eb, *ep;

		if (strcmp(a->path, b->path) != 0 || (a->scen == NULL && b->scen == NULL))
			continue;
		ea = escaped(a->scen ? a->scen : "");
		eb = escaped(b->scen ? b->scen : "");
		ep = escaped(b->path);
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
		clashes++;
	}
	for (k = 0; k < n; k++)
		free(f[k].path);
	free(f);
	return clashes;
}

/*
 * DPC/ISR reports are per trace timeline: one report per scenario, either
 * into its own file ("{scenario}" in the path) or one after the other in
 * one file, each under a "== scenario NAME" line.
 */
static int
write_dpc_reports(const struct pipeline_output *o)
{
	char **names, *argv[MAX_ARGV + 8];
	int nnames, i, k, rc = 0, per_file = strstr(o->path, "{scenario}") != NULL;
	struct atomicfile ao;

	names = scenario_names(o->product, USABLE_JOBS, &nnames);
	if (!per_file)
		atomicfile_open(&ao, o->path);
	for (k = 0; k < nnames; k++) {
		char *scratch = scratch_evt(o->product, o->line, names[k]);
		char *out = per_file ? scenario_path(o->path, names[k]) :
		    xasprintf("%s/.scratch.%ld.%d.txt", pl->outdir, (long)getpid(), o->line);
		int argc = 0;

		argv[argc++] = "render";
		argv[argc++] = "dpc";
		for (i = 0; i < o->args.n && argc < MAX_ARGV; i++)
			argv[argc++] = expand_arg(o->args.v[i]);
		argv[argc++] = scratch;
		argv[argc] = NULL;
		if (run_output_tool("render", argv, NULL, out) != 0)
			rc = -1;
		else if (!per_file) {
			struct linereader *lr = lr_open(out);
			char *line;
			size_t len;

			ob_printf(&ao.ob, "%s== scenario %s\n\n", k ? "\n" : "", names[k]);
			while (lr && (line = lr_next(lr, &len)) != NULL) {
				ob_write(&ao.ob, line, len);
				ob_putc(&ao.ob, '\n');
			}
			lr_close(lr);
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
			atomicfile_commit(&ao);
		else
			atomicfile_abort(&ao);
	}
	free(names);
	return rc;
}

/* Writes output O for scenario SCEN only (NULL: all) into PATH. */
static int
write_one_output(const struct pipeline_output *o, const char *scen, const char *path)
{
	struct scenagg *sa;
	struct atomicfile ao;
	struct scenagg_out_opts oo = { o->scenario_frame, o->mean, o->integer };
	char *argv[MAX_ARGV + 8], *scratch = NULL;
	int argc = 0, i, rc = 0, nexpanded = 0;
	const char *tool = NULL;

	sa = aggregate_product(o->product, scen);
	switch (o->type) {
	case PIPELINE_OUT_FOLDED:
		atomicfile_open(&ao, path);
		scenagg_write_folded(sa, &ao.ob, &oo);
		atomicfile_commit(&ao);
		break;
	case PIPELINE_OUT_BYNAME:
		atomicfile_open(&ao, path);
		scenagg_write_byname(sa, &ao.ob, &oo);
		atomicfile_commit(&ao);
		break;
	case PIPELINE_OUT_FLAMEGRAPH:
	case PIPELINE_OUT_DPC_REPORT:
	case PIPELINE_OUT_DIFF:
	case PIPELINE_OUT_OVERWEIGHT:
		tool = o->type == PIPELINE_OUT_DIFF ? "diff" : o->type == PIPELINE_OUT_OVERWEIGHT ?
		    "overweight" : "render";
		/* diffs compare nights: scenario names differ, so they are summed away */
		scratch = scratch_folded(sa, o, o->type == PIPELINE_OUT_FLAMEGRAPH ? o->scenario_frame : 0);
		argv[argc++] = (char *)tool;
		if (o->type == PIPELINE_OUT_FLAMEGRAPH)
			argv[argc++] = "flame";
		for (i = 0; i < o->args.n && argc < MAX_ARGV; i++)
			argv[argc++] = expand_arg(o->args.v[i]);
		nexpanded = argc;
		if (o->baseline)
			argv[argc++] = o->baseline;
		argv[argc++] = scratch;
		argv[argc] = NULL;
		rc = run_output_tool(tool, argv, NULL, path);
		for (i = o->type == PIPELINE_OUT_FLAMEGRAPH ? 2 : 1; i < nexpanded; i++)
			free(argv[i]);
		unlink(scratch);
		free(scratch);
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
write_output(const struct pipeline_output *o)
{
	char **names;
	int nnames, k, rc = 0;

	if (o->type == PIPELINE_OUT_DPC_REPORT)
		return write_dpc_reports(o);
	if (strstr(o->path, "{scenario}") == NULL)
		return write_one_output(o, NULL, o->path);
	/* a flame graph of no samples cannot be drawn: an empty scenario has none */
	names = scenario_names(o->product, o->type == PIPELINE_OUT_FLAMEGRAPH ? JOBS_WITH_DATA :
	    USABLE_JOBS, &nnames);
	for (k = 0; k < nnames; k++) {
		char *path = scenario_path(o->path, names[k]);

		if (write_one_output(o, names[k], path) != 0)
			rc = -1;
		free(path);
	}
	free(names);
	return rc;
}

/* ------------------------------------------------------------------ */
/* report                                                              */

static void
write_report(void)
{
	struct atomicfile ao;
	char *path = xasprintf("%s/run-report.tsv", pl->outdir);
	int i;

	atomicfile_open(&ao, path);
	ob_puts(&ao.ob, "scenario\ttrace\tstep\taction\tstatus\tseconds\terror\n");
	for (i = 0; i < njobs; i++) {
		struct job *j = &jobs[i];
		/* names come from file names: a tab, newline or ESC in one must not make rows */
		char *name = escaped(j->name), *trace = escaped(j->trace);
		char *err = escaped(j->error ? j->error : "");

		ob_printf(&ao.ob, "%s\t%s\t%s\t%s\t%s\t%.3f\t%s\n", name, trace,
		    pl->prod[j->prod].name, state_names[j->state], j->status ? j->status : "failed",
		    j->seconds, err);
		free(name);
		free(trace);
		free(err);
	}
	atomicfile_commit(&ao);
	free(path);
}

struct job_counts {
	int converted, skipped, failed, partial, empty;
};

/* Counts job J and reports it on stderr unless it is clean. */
static void
report_job(const struct job *j, struct job_counts *count)
{
	char *trace = escaped(j->trace), *name = escaped(j->name);
	const char *step = pl->prod[j->prod].name;

	if (j->state == J_CONVERTED || j->state == J_FAILED || j->state == J_TIMEOUT)
		count->converted++;
	if (j->state == J_SKIPPED) {
		count->skipped++;
		count->failed++;
		cli_warn("FAILED %s (scenario '%s', step %s): %s", trace, name, step, j->error);
	} else if (strcmp(j->status, "failed") == 0) {
		count->failed++;
		cli_warn("FAILED %s (scenario '%s', step %s): %s [log: %s/%s.log]", trace, name,
		    step, j->error ? j->error : "?", pl->cache, j->key);
	} else if (strcmp(j->status, "partial") == 0) {
		count->partial++;
		cli_warn("partial %s (scenario '%s', step %s): %s", trace, name, step,
		    j->error ? j->error : "some input skipped");
	} else if (strcmp(j->status, "empty") == 0)
		count->empty++;
	free(trace);
	free(name);
}

/* Finds a job by 1-based index or key. */
static struct job *
find_job(const char *id)
{
	char *end;
	long n = strtol(id, &end, 10);
	int i;

	if (*end == '\0' && n >= 1 && n <= njobs)
		return &jobs[n - 1];
	for (i = 0; i < njobs; i++)
		if (strcmp(jobs[i].key, id) == 0)
			return &jobs[i];
	return NULL;
}

/* Prints job J's result as folded stacks with the scenario frame (a mapper's output). */
static int
emit_job(struct job *j)
{
	struct scenagg *sa = scenagg_new();
	struct scenagg_out_opts oo = { 1, 0, 0 };
	struct scenagg_file_stats st;
	struct outbuf ob;
	char *res = cache_file(j, "out.gz");
	int id = scenagg_scenario(sa, j->name), rc = 0;

	if (read_result(sa, id, res, &st) < 0 || st.error || st.skipped)
		rc = 1;
	ob_open(&ob, "-");
	scenagg_write_folded(sa, &ob, &oo);
	ob_close(&ob);
	scenagg_free(sa);
	free(res);
	return rc;
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
static void
remove_stale_temps(const char *dir)
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
			char *p = xasprintf("%s/%s", dir, e->d_name);

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
static void
lock_run(void)
{
	char *path = xasprintf("%s/.run.lock", pl->cache);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);

	if (fd < 0)
		cli_fatal("%s: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EWOULDBLOCK)
			cli_fatal("%s: another etlkit-run is using this cache (%s)", pl->file, path);
		cli_fatal("%s: %s", path, strerror(errno));
	}
	free(path);	/* fd stays open: the lock lasts as long as the run */
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
		{ "emit", no_argument, NULL, 'e' },
		{ "merge-only", no_argument, NULL, 'm' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int parallel = 0, list = 0, todo_only = 0, emit = 0, merge_only = 0, ch, i;
	int *todo, ntodo = 0, empty, status = 0;
	struct job_counts count = { 0, 0, 0, 0, 0 };
	const char *run_one = NULL;

	cli_init(argv[0]);
	while ((ch = getopt_long(argc, argv, "j:qhV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			parallel = (int)cli_integer("--jobs", optarg);
			if (parallel < 1)
				cli_usage_error("--jobs: at least 1");
			break;
		case 'v':
			opt_verify = 1;
			break;
		case 'r':
			opt_retry = 1;
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
			emit = 1;
			break;
		case 'm':
			merge_only = 1;
			break;
		case 'q':
			opt_quiet = 1;
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
	if (emit && run_one == NULL)
		cli_usage_error("--emit goes with --run-job");
	self_dir = exec_path_self_dir(argv[0]);
	pl = pipeline_load(argv[optind]);
	if (pl == NULL)
		exit(EXIT_FATAL);
	if (parallel == 0)
		parallel = pl->jobs;
	if (parallel == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		parallel = n > 0 ? (int)n : 1;
	}
	if (opt_verify == 0)
		opt_verify = pl->verify;

	empty = expand_scenarios();
	if (njobs == 0)
		cli_fatal("%s: no trace matches any scenario", pl->file);
	if (output_collisions() > 0)
		exit(EXIT_FATAL);
	if (!list) {
		/* --list-jobs only reads: it creates and removes nothing */
		if (runcache_mkdirs(pl->cache) != 0)
			cli_fatal("%s: %s", pl->cache, strerror(errno));
		remove_stale_temps(pl->cache);
		remove_stale_temps(pl->outdir);
	}
	todo = xmalloc(((size_t)njobs + 1) * sizeof(int));
	for (i = 0; i < njobs; i++) {
		int k;

		if (jobs[i].state == J_SKIPPED)
			continue;
		jobs[i].state = check_cache(&jobs[i], opt_retry);
		if (jobs[i].state != J_TODO)
			continue;
		/* one trace in two scenarios with the same settings: one conversion */
		for (k = 0; k < ntodo; k++)
			if (strcmp(jobs[todo[k]].key, jobs[i].key) == 0)
				break;
		if (k < ntodo)
			jobs[i].dup_of = todo[k] + 1;
		else
			todo[ntodo++] = i;
	}

	if (list) {
		for (i = 0; i < njobs; i++)
			if (!todo_only || jobs[i].state == J_TODO) {
				char *cmd = command_text(&jobs[i]), *c;
				/* one job, one line, six tabs: names are escaped as in run-report.tsv */
				char *name = escaped(jobs[i].name), *trace = escaped(jobs[i].trace);

				for (c = cmd; *c; c++)
					if ((unsigned char)*c < 0x20)
						*c = '?';
				printf("%d\t%s\t%s\t%s\t%s\t%s\t%s\n", i + 1, jobs[i].key,
				    jobs[i].state == J_TODO ? "todo" : jobs[i].state == J_CACHED ?
				    "cached" : "failed", pl->prod[jobs[i].prod].name, name, trace, cmd);
				free(cmd);
				free(name);
				free(trace);
			}
		if (fflush(stdout) != 0 || ferror(stdout))
			cli_fatal("write error: %s", strerror(errno));
		exit(0);
	}
	if (run_one) {
		struct job *j = find_job(run_one);

		if (j == NULL)
			cli_usage_error("--run-job: no job '%s' (see --list-jobs)", run_one);
		if (j->state == J_TODO)
			convert(j);
		settle(j);
		if (strcmp(j->status, "failed") == 0) {
			cli_warn("%s: failed: %s", j->trace, j->error ? j->error : "?");
			exit(EXIT_FATAL);
		}
		status = strcmp(j->status, "partial") == 0;
		if (emit && emit_job(j) != 0)
			status = EXIT_PARTIAL;
		exit(status);
	}

	lock_run();
	if (!merge_only)
		run_jobs(todo, ntodo, parallel);
	for (i = 0; i < njobs; i++)
		if (jobs[i].dup_of && !merge_only) {
			/* the other job converted it: reuse its result (or share its fate) */
			jobs[i].state = jobs[jobs[i].dup_of - 1].state == J_TIMEOUT ? J_TIMEOUT :
			    J_CACHED;
			settle(&jobs[i]);
		}
	for (i = 0; i < njobs; i++) {
		if (merge_only && jobs[i].state == J_TODO) {
			jobs[i].status = xstrdup("failed");
			jobs[i].error = xstrdup("not converted yet (--merge-only)");
			continue;
		}
		if (jobs[i].state == J_CONVERTED || jobs[i].state == J_FAILED ||
		    jobs[i].state == J_TIMEOUT)
			settle(&jobs[i]);
	}
	if (runcache_mkdirs(pl->outdir) != 0)
		cli_fatal("%s: %s", pl->outdir, strerror(errno));
	for (i = 0; i < pl->nout; i++)
		if (write_output(&pl->out[i]) != 0)
			status = EXIT_PARTIAL;
	for (i = 0; i < njobs; i++)
		report_job(&jobs[i], &count);
	write_report();
	if (!opt_quiet)
		cli_warn("%d trace job%s: %d converted, %d reused, %d skipped, %d failed, %d partial, "
		    "%d empty; outputs in %s", njobs, njobs == 1 ? "" : "s", count.converted,
		    njobs - count.converted - count.skipped, count.skipped, count.failed,
		    count.partial, count.empty, pl->outdir);
	if (count.failed || count.partial || empty)
		status = EXIT_PARTIAL;
	if (count.failed == njobs) {
		cli_warn("%s: every trace job failed: nothing was aggregated", pl->file);
		status = EXIT_FATAL;
	}
	for (i = 0; i < njobs; i++) {
		int c, a;

		for (c = 0; c < jobs[i].ncmd; c++) {
			for (a = 0; a < jobs[i].cmd[c].argc; a++)
				free(jobs[i].cmd[c].argv[a]);
			free(jobs[i].cmd[c].path);
		}
		free(jobs[i].name);
		free(jobs[i].trace);
		free(jobs[i].trace_id);
		free(jobs[i].settings);
		free(jobs[i].status);
		free(jobs[i].error);
	}
	free(jobs);
	free(todo);
	free(self_dir);
	pipeline_free(pl);
	return status;
}

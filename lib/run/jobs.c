/*
 * jobs.c - etlkit-run's jobs (jobs.h): the scenarios' globs expanded
 * into one job per trace and product, each with the chain of tools that
 * converts it, the settings text its cache key hashes, and its state in
 * the cache.
 */
#define _POSIX_C_SOURCE 200809L
#include "run/jobs.h"
#include "base/cli.h"
#include "base/exec_path.h"
#include "base/sha256.h"
#include "etl/zip.h"
#include "evt/evt.h"
#include "report/scenagg.h"
#include "run/runtext.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const job_state_names[] = {
	"todo", "reused", "reused", "converted", "failed", "timeout", "skipped"
};

/* ------------------------------------------------------------------ */
/* what a trace is                                                     */

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
	enum trace_type type = TRACE_FOLDED;

	if (fd < 0)
		return TRACE_ETL;	/* etl2evt reports why it cannot be read */
	zip = read_full_at(fd, magic, sizeof(magic), 0) == 0 && zip_magic(magic, sizeof(magic));
	close(fd);
	if (zip)
		return TRACE_ETL;
	if ((lr = lr_open(path)) == NULL)
		return TRACE_ETL;
	lr_set_quiet(lr);	/* a peek: the tool that reads it reports */
	while ((line = lr_next(lr, &len)) != NULL) {
		if (len == 0)
			continue;
		if (has_binary_byte(line, len))
			type = TRACE_ETL;
		else if (evt_classify(line, len) == EVT_HEADER)
			type = TRACE_EVT;
		break;
	}
	/* lines the reader would not hand out (NUL bytes, 64 MiB): binary */
	if (lr_error(lr) || lr_skipped(lr) > 0)
		type = TRACE_ETL;
	lr_close(lr);
	return type;
}

/* ------------------------------------------------------------------ */
/* the chain of tools                                                  */

static void
cmd_arg(const struct run *r, struct job_command *c, const char *s)
{
	if (c->argc >= JOB_MAX_ARGV - 1)
		cli_fatal("%s: too many arguments for %s", r->pl->file, c->tool);
	c->argv[c->argc++] = xstrdup(s);
	c->argv[c->argc] = NULL;
}

/* Appends a pipeline-supplied argument, "{dir}" expanded. */
static void
cmd_user_arg(const struct run *r, struct job_command *c, const char *s)
{
	char *e = pipeline_expand_arg(r->pl, s);

	cmd_arg(r, c, e);
	free(e);
}

/* The etlkit tool TOOL (lib/base/exec_path.h: never $PATH's diff) as J's next command. */
static struct job_command *
cmd_new(const struct run *r, struct job *j, const char *tool)
{
	struct job_command *c = &j->cmd[j->ncmd++];

	memset(c, 0, sizeof(*c));
	c->tool = tool;
	c->path = exec_path_find(r->self_dir, tool);
	cmd_arg(r, c, tool);
	return c;
}

/* "auto", "most-cpu", "first-long": evtfilter's --poi heuristics (PerfView's process of interest) */
static int
is_heuristic(const char *p)
{
	return p && (!strcmp(p, "auto") || !strcmp(p, "most-cpu") || !strcmp(p, "first-long"));
}

static void
add_range(const struct run *r, struct job_command *c, const struct pipeline_scenario *sc,
    const char *opt_s, const char *opt_e)
{
	char num[64];

	if (sc->has_start) {
		snprintf(num, sizeof(num), "%.6f", sc->start_ms);
		cmd_arg(r, c, opt_s);
		cmd_arg(r, c, num);
	}
	if (sc->has_end) {
		snprintf(num, sizeof(num), "%.6f", sc->end_ms);
		cmd_arg(r, c, opt_e);
		cmd_arg(r, c, num);
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
build_chain(const struct run *r, struct job *j)
{
	const struct pipeline_product *pr = &r->pl->prod[j->prod];
	const struct pipeline_scenario *sc = &r->pl->scen[j->scen];
	int i, first = 1;
	int named = pr->scenario_process && sc->process && strcmp(sc->process, "*") != 0 &&
	    !is_heuristic(sc->process);
	int heuristic = pr->scenario_process && is_heuristic(sc->process);
	char poi[32];
	struct job_command *c;

	if (j->type == TRACE_ETL) {
		c = cmd_new(r, j, "etl2evt");
		if (named) {
			cmd_arg(r, c, "-p");
			cmd_arg(r, c, sc->process);
		}
		add_range(r, c, sc, "-s", "-e");
		for (i = 0; i < pr->args[PIPELINE_ETL2EVT].n; i++)
			cmd_user_arg(r, c, pr->args[PIPELINE_ETL2EVT].v[i]);
		cmd_arg(r, c, j->trace);
		first = 0;
	}
	if (j->type != TRACE_FOLDED && (pr->has_step[PIPELINE_EVTFILTER] || heuristic ||
	    (j->type == TRACE_EVT && (named || sc->has_start || sc->has_end)))) {
		c = cmd_new(r, j, "evtfilter");
		if (heuristic) {
			snprintf(poi, sizeof(poi), "--poi=%s", sc->process);
			cmd_arg(r, c, poi);
		}
		if (j->type == TRACE_EVT) {
			if (named) {
				cmd_arg(r, c, "-p");
				cmd_arg(r, c, sc->process);
			}
			add_range(r, c, sc, "--start", "--end");
		}
		for (i = 0; i < pr->args[PIPELINE_EVTFILTER].n; i++)
			cmd_user_arg(r, c, pr->args[PIPELINE_EVTFILTER].v[i]);
		if (first)
			cmd_arg(r, c, j->trace);
		first = 0;
	}
	if (pr->has_step[PIPELINE_STACKFOLD]) {
		c = cmd_new(r, j, "stackfold");
		for (i = 0; i < pr->args[PIPELINE_STACKFOLD].n; i++)
			cmd_user_arg(r, c, pr->args[PIPELINE_STACKFOLD].v[i]);
		if (first)
			cmd_arg(r, c, j->trace);
	}
}

/*
 * What TOOL at PATH says it is: its --version ("etl2evt (etlkit) 0.1.0"
 * and "build ID", the hash of the sources it was built from), newlines
 * made spaces.  Never its path, size or mtime: two installs of one build
 * on two nodes are the same tool, and a rebuild from other sources is
 * not.  Asked once per tool and run.
 */
static const char *
tool_identity(struct run *r, const char *tool, const char *path)
{
	struct runcmd c = RUNCMD_INIT;
	char *argv[] = { (char *)tool, "--version", NULL }, buf[512], *p;
	int fd[2], devnull, i;
	size_t n = 0;
	ssize_t got;

	for (i = 0; i < r->ntools; i++)
		if (strcmp(r->tool_path[i], path) == 0)
			return r->tool_id[i];
	if (pipe(fd) != 0 || (devnull = open("/dev/null", O_RDWR)) < 0)
		cli_fatal("pipe: %s", strerror(errno));
	c.path = path;
	c.argv = argv;
	c.in = devnull;
	c.out = fd[1];
	c.err = devnull;
	if (runcmd_start(&c) != 0)
		cli_fatal("fork: %s", strerror(errno));
	close(fd[1]);
	while (n < sizeof(buf) - 1 && (got = read(fd[0], buf + n, sizeof(buf) - 1 - n)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		n += (size_t)got;
	}
	close(fd[0]);
	close(devnull);
	runcmd_finish(&c);
	buf[n] = '\0';
	for (p = buf; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
	r->tool_path = xrealloc(r->tool_path, (size_t)(r->ntools + 1) * sizeof(char *));
	r->tool_id = xrealloc(r->tool_id, (size_t)(r->ntools + 1) * sizeof(char *));
	r->tool_path[r->ntools] = xstrdup(path);
	/* a tool that cannot say what it is never matches a record */
	r->tool_id[r->ntools] = c.exit_status == 0 && n > 0 ? xstrdup(buf) :
	    runtext_printf("%s (no version: status %d)", tool, c.exit_status);
	return r->tool_id[r->ntools++];
}

/* Settings text: every command with the identity (tool_identity) of its executable. */
static void
build_settings(struct run *r, struct job *j)
{
	size_t cap = 256, len = 0;
	char *s = xmalloc(cap);
	int i, a;

	s[0] = '\0';
	for (i = 0; i < j->ncmd; i++) {
		struct job_command *c = &j->cmd[i];
		char head[600];

		if (c->path)
			snprintf(head, sizeof(head), "%s\n", tool_identity(r, c->tool, c->path));
		else
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

void
job_side_by_side(struct job *j)
{
	int i, a;

	for (i = 0; i < j->ncmd; i++) {
		struct job_command *c = &j->cmd[i];

		/* (a full argv keeps its default: a faster conversion, the same output) */
		if (strcmp(c->tool, "etl2evt") != 0 || c->argc >= JOB_MAX_ARGV - 1)
			continue;
		for (a = c->argc; a > 1; a--)
			c->argv[a] = c->argv[a - 1];
		c->argv[1] = xstrdup("--threads=1");
		c->argv[++c->argc] = NULL;
	}
}

char *
job_command_text(const struct job *j)
{
	size_t cap = 256, len = 0;
	char *s = xmalloc(cap);
	int i, a;

	s[0] = '\0';
	if (j->state == JOB_SKIPPED) {
		free(s);
		return runtext_printf("(skipped: %s) %s", j->error, j->trace);
	}
	if (j->ncmd == 0) {
		free(s);
		return runtext_printf("(copy) %s", j->trace);
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

/* ------------------------------------------------------------------ */
/* expanding the scenarios                                             */

/*
 * Adds the job of product PROD for TRACE.  SKIP_WHY non-NULL: the path
 * is no trace; the job is reported as failed with that reason and
 * nothing ever opens the path.
 */
static void
add_job(struct run *r, int scen, const char *name, const char *trace, int prod,
    const char *skip_why)
{
	/* a pipeline directory moved with its traces and cache keeps its cache */
	size_t dirlen = strlen(r->pl->dir);
	struct job *j;

	r->jobs = xrealloc(r->jobs, (size_t)(r->njobs + 1) * sizeof(*r->jobs));
	j = &r->jobs[r->njobs++];
	memset(j, 0, sizeof(*j));
	j->worker = (struct runcmd)RUNCMD_INIT;
	j->scen = scen;
	j->name = xstrdup(name);
	j->trace = xstrdup(trace);
	j->trace_id = xstrdup(strncmp(trace, r->pl->dir, dirlen) == 0 && trace[dirlen] == '/' ?
	    trace + dirlen + 1 : trace);
	j->prod = prod;
	if (skip_why) {
		j->state = JOB_SKIPPED;
		j->status = xstrdup("failed");
		j->error = xstrdup(skip_why);
		j->settings = xstrdup("");
	} else {
		j->type = trace_type(trace);
		build_chain(r, j);
		build_settings(r, j);
	}
	runcache_key(j->key, r->pl->prod[prod].name, j->trace_id, j->settings);
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

static int
excluded(const struct pipeline_scenario *sc, const char *path)
{
	int i;

	for (i = 0; i < sc->exclude.n; i++)
		if (scenagg_glob(sc->exclude.v[i], path, NULL, NULL, 0, NULL))
			return 1;
	return 0;
}

/* Adds the jobs of the paths glob pattern F of scenario S matches; returns how many traces. */
static int
expand_glob(struct run *r, int s, int f)
{
	const struct pipeline *pl = r->pl;
	const struct pipeline_scenario *sc = &pl->scen[s];
	glob_t g;
	size_t k;
	int p, found = 0, rv = glob(sc->files.v[f], 0, NULL, &g);

	if (rv == GLOB_NOMATCH)
		return 0;
	if (rv != 0)
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
			char *e = runtext_escaped(path);

			cli_warn("%s:%d: %s: skipped: %s", pl->file, sc->line, e, why);
			free(e);
		}
		name = scenagg_name_from_path(path, sc->files.v[f], sc->name);
		if (name == NULL)
			name = scenagg_name_from_path(path, NULL, sc->name);
		found++;
		for (p = 0; p < pl->nprod; p++)
			add_job(r, s, name, path, p, why);
		free(name);
	}
	globfree(&g);
	return found;
}

int
jobs_expand(struct run *r)
{
	const struct pipeline *pl = r->pl;
	int s, f, empty = 0;

	for (s = 0; s < pl->nscen; s++) {
		const struct pipeline_scenario *sc = &pl->scen[s];
		int found = 0;

		for (f = 0; f < sc->files.n; f++)
			found += expand_glob(r, s, f);
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

char *
job_cache_file(const struct run *r, const struct job *j, const char *suffix)
{
	return runcache_path(r->pl->cache, j->key, suffix);
}

/* Is the cached result of J still the product of the trace as it is now? */
static enum job_state
cache_state(const struct run *r, struct job *j, int retry)
{
	struct runcache_record rec;
	struct stat st, rs;
	char *recpath = job_cache_file(r, j, "rec"), *res = job_cache_file(r, j, "out.gz");
	enum job_state state = JOB_TODO;
	int64_t sec = 0;
	long nsec = 0;

	if (runcache_read(recpath, &rec) == 0) {
		int found = stat(j->trace, &st) == 0;

		if (found)
			stat_mtime(&st, &sec, &nsec);
		if (found && strcmp(rec.trace, j->trace_id) == 0 &&
		    rec.size == (uint64_t)st.st_size) {
			/*
			 * The trace's identity is its content: size and mtime as
			 * recorded are the fast path; another mtime (a copy on a
			 * node, a restore) costs one re-hash, and only a changed
			 * SHA-256 converts again.
			 */
			int same_time = rec.mtime_s == sec && rec.mtime_ns == nsec;
			char hex[65];

			if ((r->verify || !same_time) && (sha256_file(j->trace, hex) != 0 ||
			    strcmp(hex, rec.sha256) != 0))
				state = JOB_TODO;
			else if (strcmp(rec.status, "failed") == 0)
				state = retry ? JOB_TODO : JOB_FAILED_CACHED;
			else if (stat(res, &rs) == 0 && (uint64_t)rs.st_size == rec.result_size)
				state = JOB_CACHED;
		}
		if (state != JOB_TODO) {
			free(j->status);
			free(j->error);
			j->status = xstrdup(rec.status);
			j->error = rec.error ? xstrdup(rec.error) : NULL;
			j->seconds = rec.seconds;
		}
		runcache_free(&rec);
	}
	free(recpath);
	free(res);
	return state;
}

void
jobs_check_cache(struct run *r)
{
	int i, k;

	r->todo = xmalloc(((size_t)r->njobs + 1) * sizeof(int));
	r->ntodo = 0;
	for (i = 0; i < r->njobs; i++) {
		struct job *j = &r->jobs[i];

		if (j->state == JOB_SKIPPED)
			continue;
		j->state = cache_state(r, j, r->retry);
		if (j->state != JOB_TODO)
			continue;
		/* one trace in two scenarios with the same settings: one conversion */
		for (k = 0; k < r->ntodo; k++)
			if (strcmp(r->jobs[r->todo[k]].key, j->key) == 0)
				break;
		if (k < r->ntodo)
			j->dup_of = r->todo[k] + 1;
		else
			r->todo[r->ntodo++] = i;
	}
}

void
job_check(const struct run *r, struct job *j)
{
	if (j->state != JOB_SKIPPED)
		j->state = cache_state(r, j, r->retry);
}

void
job_settle(const struct run *r, struct job *j)
{
	if (j->state == JOB_SKIPPED || cache_state(r, j, 0) != JOB_TODO)
		return;
	/* a record of an older version of the trace, left by a conversion that died, does not count */
	free(j->status);
	free(j->error);
	j->status = xstrdup("failed");
	j->error = j->state == JOB_TIMEOUT ?
	    runtext_printf("timed out after %g s", r->pl->timeout_s) :
	    xstrdup("the conversion left no record (killed?)");
}

int
job_usable(const struct job *j)
{
	return j->status && strcmp(j->status, "failed") != 0;
}

struct job *
jobs_find(const struct run *r, const char *id)
{
	char *end;
	long n = strtol(id, &end, 10);
	int i;

	if (*end == '\0' && n >= 1 && n <= r->njobs)
		return &r->jobs[n - 1];
	for (i = 0; i < r->njobs; i++)
		if (strcmp(r->jobs[i].key, id) == 0)
			return &r->jobs[i];
	return NULL;
}

void
jobs_free(struct run *r)
{
	int i, c, a;

	for (i = 0; i < r->njobs; i++) {
		struct job *j = &r->jobs[i];

		for (c = 0; c < j->ncmd; c++) {
			for (a = 0; a < j->cmd[c].argc; a++)
				free(j->cmd[c].argv[a]);
			free(j->cmd[c].path);
		}
		free(j->name);
		free(j->trace);
		free(j->trace_id);
		free(j->settings);
		free(j->status);
		free(j->error);
	}
	for (i = 0; i < r->ntools; i++) {
		free(r->tool_path[i]);
		free(r->tool_id[i]);
	}
	free(r->tool_path);
	free(r->tool_id);
	r->tool_path = r->tool_id = NULL;
	r->ntools = 0;
	free(r->jobs);
	free(r->todo);
	r->jobs = NULL;
	r->todo = NULL;
	r->njobs = r->ntodo = 0;
}

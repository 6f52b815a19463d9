/*
 * worker.c - converting etlkit-run's jobs into the cache (worker.h): a
 * job's tools run as child processes connected by pipes (runcmd.h), the
 * last one's output is compressed into a temporary file renamed into
 * place, and the record is written last.  Many jobs run in parallel,
 * each in a worker process that forms one process group with its tools,
 * so that a timeout or an interrupt stops them all.
 */
#define _POSIX_C_SOURCE 200809L
#include "run/worker.h"
#include "base/atomicfile.h"
#include "base/cli.h"
#include "base/sha256.h"
#include "evt/evt.h"
#include "run/runtext.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/*
 * The run's only variable outside struct run: a signal handler can do
 * no more than set a flag, and it cannot be handed the run.
 */
static volatile sig_atomic_t interrupted;

/* ------------------------------------------------------------------ */
/* converting one trace                                                */

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
		*why = runtext_printf("%s: %s", path, strerror(errno));
		return 2;
	}
	while ((line = lr_next(lr, &len)) != NULL) {
		line[len] = '\n';
		if (gzwrite(gz, line, (unsigned)(len + 1)) != (int)(len + 1)) {
			*why = runtext_printf("cache write error");
			lr_close(lr);
			return 2;
		}
	}
	if (lr_error(lr)) {
		*why = runtext_printf("%s: %s", path, lr_error(lr));
		status = 1;
	} else if (lr_skipped(lr)) {
		*why = runtext_printf("%s: %lu malformed line%s skipped", path, lr_skipped(lr),
		    lr_skipped(lr) == 1 ? "" : "s");
		status = 1;
	}
	lr_close(lr);
	return status;
}

/*
 * Starts the chain's tools, each reading the previous one's stdout (the
 * first reads /dev/null), all writing their messages to LOGFD.  Returns
 * the read end of the last one's stdout, or -1 with *WHY set.
 */
static int
start_chain(const struct job *j, struct runcmd *tools, int logfd, char **why)
{
	int in, i, fds[2];

	in = open("/dev/null", O_RDONLY);
	if (in < 0) {
		*why = runtext_printf("/dev/null: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < j->ncmd; i++) {
		if (pipe(fds) != 0) {
			*why = runtext_printf("pipe: %s", strerror(errno));
			return -1;
		}
		/* the read end is the next tool's stdin (dup2 keeps that) or ours: no tool holds it */
		fcntl(fds[0], F_SETFD, FD_CLOEXEC);
		tools[i] = (struct runcmd)RUNCMD_INIT;
		tools[i].path = j->cmd[i].path;
		tools[i].argv = j->cmd[i].argv;
		tools[i].in = in;
		tools[i].out = fds[1];
		tools[i].err = logfd;
		tools[i].die_with_parent = 1;
		if (runcmd_start(&tools[i]) != 0) {
			*why = runtext_printf("fork: %s", strerror(errno));
			return -1;
		}
		close(in);
		close(fds[1]);
		in = fds[0];
	}
	return in;
}

/* Copies FD into GZ until its end.  Returns 0, or 2 with *WHY set. */
static int
compress_into(int fd, gzFile gz, char **why)
{
	char *buf = xmalloc(1 << 18);
	ssize_t n;
	int status = 0;

	for (;;) {
		n = read(fd, buf, 1 << 18);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (gzwrite(gz, buf, (unsigned)n) != (int)n) {
			*why = runtext_printf("cache write error");
			status = 2;
			break;
		}
	}
	free(buf);
	return status;
}

/*
 * Runs the chain with pipes between the tools, the last one's output
 * compressed into GZ.  Returns the worst status: 0, 1 (a tool skipped
 * input), 2 (a tool failed or died).
 */
static int
run_chain(const struct job *j, gzFile gz, int logfd, char **why)
{
	struct runcmd tools[JOB_MAX_CHAIN];
	int in, i, worst;

	for (i = 0; i < j->ncmd; i++)
		if (j->cmd[i].path == NULL) {
			*why = runtext_printf("%s not found (next to etlkit-run or on PATH)",
			    j->cmd[i].tool);
			return 2;
		}
	if ((in = start_chain(j, tools, logfd, why)) < 0)
		return 2;
	worst = compress_into(in, gz, why);
	close(in);
	for (i = 0; i < j->ncmd; i++) {
		const struct runcmd *t = &tools[i];

		runcmd_finish(&tools[i]);
		if (t->signal) {
			/* SIGPIPE upstream is the echo of a failure downstream */
			if (t->signal != SIGPIPE || worst < 2) {
				if (*why == NULL)
					*why = runtext_printf("%s killed by signal %d", j->cmd[i].tool,
					    t->signal);
				worst = 2;
			}
		} else if (t->exit_status != 0) {
			int e = t->exit_status == 1 ? 1 : 2;

			if (e == 2 && *why == NULL)
				*why = runtext_printf("%s exited with status %d", j->cmd[i].tool,
				    t->exit_status);
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

/* The copy has no tool to log for it: its reason goes to the log itself. */
static void
log_copy_error(const char *logpath, const char *why)
{
	FILE *fp = fopen(logpath, "a");

	if (fp) {
		fprintf(fp, "%s\n", why);
		fclose(fp);
	}
}

/*
 * Converts the trace into the temporary result TMP: *REC gets the
 * trace's identity.  Returns 0, 1 or 2 as worker_convert().
 */
static int
convert_into(const struct job *j, const char *tmp, int logfd, struct runcache_record *rec,
    char **why)
{
	struct stat st;
	gzFile gz;
	int status;

	if (stat(j->trace, &st) != 0 || sha256_file(j->trace, rec->sha256) != 0) {
		*why = runtext_printf("%s: %s", j->trace, strerror(errno));
		return 2;
	}
	rec->size = (uint64_t)st.st_size;
	stat_mtime(&st, &rec->mtime_s, &rec->mtime_ns);
	gz = gzopen(tmp, "wb1");	/* fast: the lean result is read back once a night */
	if (gz == NULL)
		cli_fatal("%s: %s", tmp, strerror(errno));
	status = j->ncmd == 0 ? copy_trace(j->trace, gz, why) : run_chain(j, gz, logfd, why);
	if (gzclose(gz) != Z_OK && status < 2) {
		*why = runtext_printf("%s: write error", tmp);
		status = 2;
	}
	return status;
}

/* Moves the temporary result TMP to RES and notes its size in REC (STATUS 0 or 1). */
static void
keep_result(const char *tmp, const char *res, int status, struct runcache_record *rec)
{
	struct stat st;
	int fd = open(tmp, O_RDONLY);

	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	if (rename(tmp, res) != 0)
		cli_fatal("%s: %s", res, strerror(errno));
	if (stat(res, &st) == 0)
		rec->result_size = (uint64_t)st.st_size;
	if (status == 0 && result_is_empty(res)) {
		/* a trace with nothing of this kind is a result, not a failure */
		rec->status = "empty";
		rec->error = xstrdup("no stacks or events in the result: the trace holds nothing "
		    "this step selects (for CPU stacks: no samples)");
	}
}

int
worker_convert(const struct run *r, struct job *j)
{
	char *res = job_cache_file(r, j, "out.gz"), *recpath = job_cache_file(r, j, "rec");
	char *logp = job_cache_file(r, j, "log"), *tmp = atomicfile_tmpname(res), *why = NULL;
	struct runcache_record rec;
	double t0 = runcmd_clock();
	int logfd, status;

	if (r->side_by_side)
		job_side_by_side(j);	/* (J is this worker's copy: the key is made) */
	memset(&rec, 0, sizeof(rec));
	memcpy(rec.key, j->key, sizeof(rec.key));
	rec.product = r->pl->prod[j->prod].name;
	rec.scenario = j->name;
	rec.trace = j->trace_id;
	rec.command = job_command_text(j);
	logfd = open(logp, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0666);
	if (logfd < 0)
		cli_fatal("%s: %s", logp, strerror(errno));
	status = convert_into(j, tmp, logfd, &rec, &why);
	close(logfd);
	if (why && j->ncmd == 0)
		log_copy_error(logp, why);
	rec.exit = status;
	rec.status = status == 0 ? "ok" : status == 1 ? "partial" : "failed";
	rec.error = status == 0 ? NULL : log_excerpt(logp, why);
	rec.converted_utc = utc_now();
	rec.seconds = runcmd_clock() - t0;
	if (status < 2)
		keep_result(tmp, res, status, &rec);
	else
		unlink(tmp);
	runcache_write(recpath, &rec);
	free(rec.command);
	free(rec.error);
	free(rec.converted_utc);
	free(why);
	free(res);
	free(recpath);
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

/* What a worker process is given: it runs in a forked copy of the run. */
struct conversion {
	const struct run *run;
	struct job *job;
};

static int
convert_in_worker(void *arg)
{
	struct conversion *c = arg;

	return worker_convert(c->run, c->job);
}

static void
start_worker(const struct run *r, struct job *j)
{
	struct conversion conv = { r, j };

	j->worker = (struct runcmd)RUNCMD_INIT;
	j->worker.fn = convert_in_worker;
	j->worker.arg = &conv;	/* the child runs it before runcmd_start() returns: CONV lives */
	j->worker.new_group = 1;	/* the worker and its tools: killable together */
	j->worker.die_with_parent = 1;
	j->worker.timeout_s = r->pl->timeout_s;
	if (runcmd_start(&j->worker) != 0)
		cli_fatal("fork: %s", strerror(errno));
	j->worker.arg = NULL;	/* CONV ends here */
}

/* Kills the workers past the timeout (again every round until they are reaped). */
static void
kill_timed_out(struct run *r)
{
	int i;

	for (i = 0; i < r->njobs; i++)
		if (runcmd_timed_out(&r->jobs[i].worker)) {
			runcmd_kill(&r->jobs[i].worker, SIGKILL);
			r->jobs[i].state = JOB_TIMEOUT;
		}
}

/* The job whose worker was PID, or NULL. */
static struct job *
job_of_worker(struct run *r, pid_t pid)
{
	int i;

	for (i = 0; i < r->njobs; i++)
		if (r->jobs[i].worker.pid == pid)
			return &r->jobs[i];
	return NULL;
}

/* Worker J ended with wait status WSTATUS. */
static void
worker_ended(struct job *j, int wstatus)
{
	runcmd_ended(&j->worker, wstatus);
	if (j->state == JOB_TIMEOUT)
		;	/* no record: a slow night is retried, not remembered */
	else if (j->worker.exit_status == 0 || j->worker.exit_status == 1)
		j->state = JOB_CONVERTED;
	else
		j->state = JOB_FAILED;
}

/* Stops the workers and dies of the signal that interrupted the run. */
static void
stop_interrupted(struct run *r)
{
	int i;

	for (i = 0; i < r->njobs; i++)
		runcmd_kill(&r->jobs[i].worker, SIGTERM);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	cli_warn("interrupted: converted traces are kept in the cache; outputs not written");
	signal(interrupted, SIG_DFL);
	raise(interrupted);
	exit(EXIT_FATAL);
}

void
worker_run_all(struct run *r, int parallel)
{
	int next = 0, running = 0, done = 0;
	int tty = isatty(STDERR_FILENO) && !r->quiet;
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/*
	 * Each etl2evt would take a second core for its reading thread: with
	 * jobs side by side the cores are the jobs', so one thread each.
	 */
	r->side_by_side = parallel > 1 && r->ntodo > 1;
	while ((next < r->ntodo || running > 0) && !interrupted) {
		struct job *j;
		int wstatus;
		pid_t pid;

		while (running < parallel && next < r->ntodo) {
			start_worker(r, &r->jobs[r->todo[next++]]);
			running++;
		}
		pid = waitpid(-1, &wstatus, WNOHANG);
		if (pid == 0) {
			struct timespec ts = { 0, 20 * 1000000 };

			kill_timed_out(r);
			nanosleep(&ts, NULL);
			continue;
		}
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if ((j = job_of_worker(r, pid)) == NULL)
			continue;
		worker_ended(j, wstatus);
		running--;
		done++;
		if (tty)
			fprintf(stderr, "\retlkit-run: %d/%d traces converted ", done, r->ntodo);
	}
	if (tty && r->ntodo > 0)
		fputs("\r\033[K", stderr);
	if (interrupted)
		stop_interrupted(r);
}

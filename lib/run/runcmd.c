/*
 * runcmd.c - starting, waiting for and stopping etlkit-run's child
 * processes (runcmd.h): the tools of a trace's chain, the output tools
 * and the workers that convert traces.  Programs are run with execv(2),
 * never through a shell.
 */
#define _POSIX_C_SOURCE 200809L
#include "run/runcmd.h"
#include "base/cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double
runcmd_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* In the child: die with PARENT, also when it died before we got here. */
static void
die_with_parent(pid_t parent)
{
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	if (getppid() != parent)
		_exit(EXIT_FATAL);
}

/* In the child: FD becomes standard stream TO, and the original goes. */
static void
redirect(int fd, int to)
{
	if (fd < 0 || fd == to)
		return;
	dup2(fd, to);
}

static void
close_original(int fd)
{
	if (fd > STDERR_FILENO)
		close(fd);
}

/* The child's side of runcmd_start(): never returns. */
static void
run_child(const struct runcmd *c, pid_t parent)
{
	if (c->new_group)
		setpgid(0, 0);
	if (c->die_with_parent)
		die_with_parent(parent);
	redirect(c->in, STDIN_FILENO);
	redirect(c->out, STDOUT_FILENO);
	redirect(c->err, STDERR_FILENO);
	close_original(c->in);
	close_original(c->out);
	close_original(c->err);
	if (c->fn) {
		/* a forked copy of the run: the run's signal handlers are not its own */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		_exit(c->fn(c->arg));
	}
	signal(SIGPIPE, SIG_DFL);
	execv(c->path, c->argv);
	/* the name the messages of etlkit-run have always had, whatever argv[0] is */
	fprintf(stderr, "etlkit-run: cannot run %s: %s\n", c->path, strerror(errno));
	_exit(127);
}

int
runcmd_start(struct runcmd *c)
{
	pid_t parent = getpid(), pid;

	c->exit_status = -1;
	c->signal = 0;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		run_child(c, parent);
	if (c->new_group)
		setpgid(pid, pid);	/* as the child does: whichever runs first */
	c->pid = pid;
	c->started = runcmd_clock();
	return 0;
}

void
runcmd_ended(struct runcmd *c, int wstatus)
{
	c->pid = 0;
	c->exit_status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
	c->signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
}

void
runcmd_finish(struct runcmd *c)
{
	int wstatus = 0;

	while (waitpid(c->pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	runcmd_ended(c, wstatus);
}

int
runcmd_run(struct runcmd *c)
{
	if (runcmd_start(c) != 0)
		return -1;
	runcmd_finish(c);
	return 0;
}

int
runcmd_timed_out(const struct runcmd *c)
{
	return c->pid > 0 && c->timeout_s > 0 && runcmd_clock() - c->started > c->timeout_s;
}

void
runcmd_kill(const struct runcmd *c, int sig)
{
	if (c->pid > 0)
		kill(c->new_group ? -c->pid : c->pid, sig);
}

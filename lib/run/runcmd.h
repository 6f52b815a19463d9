/*
 * runcmd.h - child processes for etlkit-run, after git's run-command: a
 * struct says what to run and with which stdin, stdout and stderr;
 * runcmd_start() forks it, runcmd_finish() waits for it and says how it
 * ended (exit status or signal).
 *
 * A child is either a program (PATH with ARGV, given to execv: never a
 * shell, so a value from a pipeline stays one argument) or a function of
 * this program run in a forked copy (a worker converting one trace).
 */
#ifndef ETLKIT_RUNCMD_H
#define ETLKIT_RUNCMD_H

#include <sys/types.h>

struct runcmd {
	/* what to run: PATH with ARGV (NULL-terminated), or FN(ARG) when FN is set */
	const char *path;
	char *const *argv;
	int (*fn)(void *arg);
	void *arg;

	/* the child's stdin, stdout and stderr; -1: the parent's */
	int in, out, err;
	int new_group;		/* its own process group: runcmd_kill() stops what it runs too */
	int die_with_parent;	/* killed when the parent dies: a killed run leaves nothing running */
	double timeout_s;	/* 0: none; see runcmd_timed_out() */

	/* set by runcmd_start() and runcmd_finish() */
	pid_t pid;		/* 0 when not running */
	double started;		/* runcmd_clock() at the start */
	int exit_status;	/* when it exited: its status, else -1 */
	int signal;		/* when a signal killed it: the signal, else 0 */
};

/* A child with the parent's streams, no group, no timeout. */
#define RUNCMD_INIT { .in = -1, .out = -1, .err = -1, .exit_status = -1 }

/*
 * Starts C.  The child gets IN, OUT and ERR as its standard streams (the
 * originals closed), SIGPIPE's default action, and runs the program or
 * the function; a program that cannot be run is reported on its stderr
 * and exits 127.  Returns 0, or -1 with errno set when fork failed.
 */
int runcmd_start(struct runcmd *c);

/* Waits for C to end and sets exit_status or signal. */
void runcmd_finish(struct runcmd *c);

/* Starts C and waits for it: runcmd_start() and runcmd_finish(). */
int runcmd_run(struct runcmd *c);

/* Records how C ended from a wait status the caller got from waitpid(2). */
void runcmd_ended(struct runcmd *c, int wstatus);

/* Has C run longer than its timeout? */
int runcmd_timed_out(const struct runcmd *c);

/* Sends SIG to C (to its whole group when it has one). */
void runcmd_kill(const struct runcmd *c, int sig);

/* Seconds on a monotonic clock, for durations. */
double runcmd_clock(void);

#endif

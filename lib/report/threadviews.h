/*
 * threadviews.h - the thread-time views over the Running, Ready and
 * Waiting lines etl2evt derives from CSwitch and ReadyThread
 * (docs/evt-format.md): where each thread's lifetime went, what one
 * thread was doing in a time window, and the chain of wakers behind a
 * long wait.  WPA's CPU Usage (Precise) questions, as text and TSV.
 *
 *	struct threadviews *tt = threadviews_new(&opts);
 *	threadviews_read(tt, path);   // per input; evt only
 *	threadviews_report(tt, &ob);
 *	threadviews_free(tt);
 */
#ifndef ETLKIT_THREADTIME_H
#define ETLKIT_THREADTIME_H

#include "base/outbuf.h"

enum threadviews_view {
	TT_VIEW_THREADS,	/* render threadtime: per thread and per CPU */
	TT_VIEW_INTERVALS,	/* render intervals --tid T: one line per interval */
	TT_VIEW_WAITCHAIN	/* render waitchain --tid T: wakers, backwards */
};

struct threadviews_opts {
	enum threadviews_view view;
	int tsv;
	long tid;		/* intervals, waitchain: the thread */
	double from, to;	/* intervals: the window in ms (-inf, +inf: all) */
	double at;		/* waitchain: the wait covering this time (NAN: the longest) */
	double min_us;		/* waitchain: a waker's wait shorter than this ends the chain */
};

struct threadviews;

void threadviews_opts_init(struct threadviews_opts *o);
struct threadviews *threadviews_new(const struct threadviews_opts *o);
/*
 * Reads one evt input (PATH "-" = stdin).  Returns 0, EXIT_PARTIAL when
 * lines were unusable (reported on stderr, counted) or EXIT_FATAL when
 * the input cannot be read or is not evt.
 */
int threadviews_read(struct threadviews *tt, const char *path);
/* Writes the view.  Returns 0, or EXIT_FATAL when there is nothing to show (said on stderr). */
int threadviews_report(struct threadviews *tt, struct outbuf *ob);
void threadviews_free(struct threadviews *tt);

#endif

/*
 * views.h - text and data views of a stack set: call tree, PerfView's
 * caller/callee views, by-name table (all on lib/stacks), and the
 * speedscope JSON export.
 */
#ifndef ETLKIT_VIEWS_H
#define ETLKIT_VIEWS_H

#include "evt/evt.h"
#include "stacks/stacks.h"

/* tree lines deeper than this keep this indentation and show "+ [depth N] " */
#define VIEW_MAX_INDENT 256

struct view_opts {
	int tsv;
	double min_percent;	/* tree: prune nodes below this % of the total */
	int max_depth;		/* tree: 0 = unlimited */
	const char *focus;	/* callers/callees: frame name or shell pattern */
	int error;		/* tree, byname: each row's sampling error (+-95%, points of inc%) */
};

/* Top-down call tree.  Returns 0, or -1 when there is nothing to show. */
int view_tree(struct stk *S, const struct view_opts *o, struct outbuf *ob);
/* Callers (CALLERS=1) or callees tree of the focus frame, after the immediate table. */
int view_caller_callee(struct stk *S, const struct view_opts *o, int callers,
    struct outbuf *ob);
int view_byname(struct stk *S, const struct view_opts *o, struct outbuf *ob);

/*
 * The one stderr line every stack tool writes when the Idle rule
 * (stk_idle_event) removed weight: "[NAME: ]removed Idle: 9,123 samples
 * (92.1% of the total); --keep-idle keeps them".  EVENTS removed, REMOVED
 * and TOTAL (Idle included) in UNIT.  Nothing when EVENTS is 0.
 */
void view_idle_note(const char *name, int64_t events, double removed, double total,
    const char *unit);
/* The same from a stack set's statistics. */
void view_idle_note_stk(const char *name, const struct stk *S);

/* ---------- speedscope ---------- */

enum speedscope_by { SS_THREAD, SS_PROCESS, SS_ALL };

struct speedscope;

struct speedscope *speedscope_new(enum speedscope_by by, int no_unescape);
/*
 * Adds one sample: STACK root first, ";"-separated (modified in place),
 * weight W; EV is the evt event (NULL for folded input).
 */
void speedscope_add(struct speedscope *ss, char *stack, size_t len, double w,
    const struct evt_event *ev);
/*
 * Writes the JSON: UNIT is lib/stacks' ("us", "ms" or "samples") for evt
 * input, NULL for folded counts (speedscope's "none", as for samples).
 * Profiles are ordered busiest first (the busiest process, and in it the
 * busiest thread), so speedscope opens on it.  -1 if empty.
 */
int speedscope_write(struct speedscope *ss, const char *name, const char *unit,
    struct outbuf *ob);
void speedscope_free(struct speedscope *ss);

#endif

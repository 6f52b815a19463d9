/*
 * tables.h - the first look at a trace as tables, from its evt stream:
 * processes, threads, images and an events summary, as xperf -a process
 * and WPA's Processes, Images and Generic Events tables show them.
 *
 * One pass over the stream collects one row per process, thread and
 * image instance (a pid or tid reused after its end is a new row) and
 * one counter per distinct event key; memory grows with those, never
 * with the number of events.  Text output is aligned for people (names
 * unescaped, then escaped for a terminal); --tsv keeps the evt escaping
 * and starts with a header line.
 *
 * The table helper (tbl_*) is shared with health.c: cells collected,
 * widths measured, rows written aligned or as TSV.
 */
#ifndef ETLKIT_TABLES_H
#define ETLKIT_TABLES_H

#include <stddef.h>

#include "base/outbuf.h"

enum tables_view { TV_PROCESSES, TV_THREADS, TV_IMAGES, TV_EVENTS };

struct tables_opts {
	int tsv;
	/*
	 * events: the keys rows are grouped by, comma-separated, out of
	 * provider,task,opcode,id,kind,process (NULL: all of them).
	 */
	const char *by;
};

struct tables;

/* NULL with a message in *why when o->by names an unknown key. */
struct tables *tables_new(enum tables_view v, const struct tables_opts *o, const char **why);
/* Reads an evt stream ("-" = stdin).  Returns 0, 1 (some lines unusable, counted) or 2. */
int tables_read(struct tables *t, const char *path);
void tables_report(struct tables *t, struct outbuf *ob);
void tables_free(struct tables *t);

/* ---------- an aligned table (or TSV) of text cells ---------- */

struct tbl {
	char **cell;		/* row-major, ncol per row; row 0 is the header */
	size_t n, cap, ncol;
	const int *right;	/* per column: right-aligned (numbers) */
	int tsv;
};

void tbl_init(struct tbl *t, size_t ncol, const int *right, int tsv);
/* One cell of plain text (numbers, words of our own). */
void tbl_cell(struct tbl *t, const char *s);
/* Writes the rows (header first) and frees the cells. */
void tbl_write(struct tbl *t, struct outbuf *ob);

#endif

/*
 * diskio.c - disk, hard fault and file I/O tables from evt (diskio.h says
 * what each view shows).
 *
 * One pass over the stream.  Each I/O is added to an accumulation row of
 * the grouping asked for (a process, a disk, a file, an operation); file
 * rows are keyed by the file key (or object) and the name it had when the
 * I/O happened, since the name may only come later (FileIoRundown is
 * written at the end of a trace): rows without a name are named at the end
 * from the last name their key got, and rows with the same name are merged
 * for the report.
 *
 * Percentiles are exact: each row keeps a histogram of its latencies with
 * one bucket per distinct value (ns), so memory grows with the distinct
 * latencies of a row, bounded by the clock's resolution times the range,
 * not with the number of I/Os.  The percentile is the nearest rank, as the
 * DPC report's (dpcstats.c).
 *
 * The stacks view keeps each start's stack (interned, with its process as
 * the root frame) by irp= instead, and sums I/O time per (stack, file).
 *
 * Pairing: DiskReadInit/WriteInit/FlushInit are remembered by irp= until
 * their completion names the same IRP; a FileIo operation is remembered by
 * irp= until its FileIoOperationEnd.  An IRP is reused by the system, so a
 * new start replaces an old one that never ended (counted as unended).
 */
#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "base/hmap.h"
#include "base/intern.h"
#include "base/outbuf.h"
#include "base/strbuf.h"
#include "report/diskio.h"
#include "report/numfmt.h"

#define NONE UINT32_MAX
#define NO_NAME UINT64_MAX	/* a file row's name before it is known */

struct row {
	uint64_t a, b;		/* the key: see row_key() */
	uint64_t other;		/* file rows: the file object, when a is the file key */
	uint64_t n, reads, writes, flushes;
	uint64_t rbytes, wbytes;
	int64_t time_ns, service_ns, max_ns;
	uint64_t timed;		/* how many have a time */
	uint32_t hist;		/* first histogram bucket, or NONE */
};

struct bucket {
	int64_t v;
	uint64_t count;
	uint32_t next;
};

/* A FileIo operation waiting for its OperationEnd. */
struct pending {
	uint32_t row;
	int64_t start_ns;
};

struct diskio {
	struct diskio_opts o;
	struct intern names;	/* process names, file names, operation names, labels */
	struct hmap rowmap;	/* (a, b) -> row */
	struct row *rows;
	uint32_t nrows, caprows;
	struct hmap histmap;	/* (row, value) -> bucket */
	struct bucket *b;
	uint32_t nb, capb;
	struct hmap filename;	/* (file object or key, 0) -> names id */
	struct hmap inits;	/* (irp, 0) -> proc of the Init */
	uint64_t *procs;	/* proc -> (pid + 1) << 32 | process names id */
	uint32_t nprocs, capprocs;
	struct hmap procmap;	/* (pid + 1, names id) -> proc */
	struct hmap lastdone;	/* (disk, 0) -> index in disks */
	struct diskuse { uint64_t disk; int64_t last_ns, service_ns; } *disks;
	uint32_t nlast, caplast;
	int64_t duration_ns;	/* the streams' duration_ms= headers, summed; 0 if none */
	struct hmap pendmap;	/* (irp, 0) -> pending */
	struct pending *pend;
	uint32_t npend, cappend, freepend;	/* freepend: a list through pend[].row */
	uint64_t ios, paired, untimed, unended, ends_unmatched, skipped;
	uint64_t names_seen;
	/* the stacks view */
	struct intern stacks;	/* "process (pid);frame;..." */
	struct hmap initstack;	/* (irp, 0) -> stacks id of the start */
	struct hmap stackrow;	/* (stacks id, file row) -> index in sw */
	struct stackw { uint32_t stack, row; int64_t ns; } *sw;
	uint32_t nsw, capsw;
	struct strbuf sb;	/* a stack being built */
};

int
diskio_parse_by(enum diskio_view view, const char *by)
{
	static const struct { const char *s; enum diskio_by by; } all[] = {
		{ "process", DISKIO_BY_PROCESS }, { "file", DISKIO_BY_FILE },
		{ "disk", DISKIO_BY_DISK }, { "operation", DISKIO_BY_OPERATION },
	};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		if (strcmp(by, all[i].s) != 0)
			continue;
		if (all[i].by == DISKIO_BY_DISK && view != DISKIO_DISK)
			return -1;
		if (all[i].by == DISKIO_BY_OPERATION && view != DISKIO_FILEIO)
			return -1;
		return (int)all[i].by;
	}
	return -1;
}

struct diskio *
diskio_new(const struct diskio_opts *o)
{
	struct diskio *d = xcalloc(1, sizeof *d);
	d->o = *o;
	if (d->o.by == DISKIO_BY_DEFAULT || o->view == DISKIO_STACKS)
		d->o.by = o->view == DISKIO_DISK ? DISKIO_BY_PROCESS : DISKIO_BY_FILE;
	intern_init(&d->stacks);
	hmap_init(&d->initstack);
	hmap_init(&d->stackrow);
	intern_init(&d->names);
	hmap_init(&d->rowmap);
	hmap_init(&d->histmap);
	hmap_init(&d->filename);
	hmap_init(&d->inits);
	hmap_init(&d->procmap);
	hmap_init(&d->lastdone);
	hmap_init(&d->pendmap);
	d->freepend = NONE;
	return d;
}

void
diskio_free(struct diskio *d)
{
	if (!d)
		return;
	intern_release(&d->names);
	hmap_free(&d->rowmap);
	hmap_free(&d->histmap);
	hmap_free(&d->filename);
	hmap_free(&d->inits);
	hmap_free(&d->procmap);
	hmap_free(&d->lastdone);
	hmap_free(&d->pendmap);
	intern_release(&d->stacks);
	hmap_free(&d->initstack);
	hmap_free(&d->stackrow);
	free(d->sw);
	strbuf_release(&d->sb);
	free(d->rows);
	free(d->b);
	free(d->procs);
	free(d->disks);
	free(d->pend);
	free(d);
}

/* ---------- reading one line ---------- */

/* What one I/O line says, as the views need it. */
struct io {
	const char *kind;	/* without "FileIo" for file operations */
	int64_t t_ns;
	long pid;
	uint32_t pname;		/* names id */
	uint64_t file, other;	/* file key (or object) and the file object; 0 if none */
	uint64_t disk, irp, bytes;
	int has_disk, has_irp;
	int64_t elapsed_ns;	/* -1 unknown */
	int write, flush;
	struct evt_span process, stack;	/* the stacks view */
};

/* An attribute's number: 0x… hex (pointers) or decimal (sizes, disks); 0 if neither. */
static uint64_t
numval(const char *p, size_t n)
{
	char buf[32];
	if (n == 0 || n >= sizeof buf)
		return 0;
	memcpy(buf, p, n);
	buf[n] = '\0';
	int hex = n > 2 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X');
	char *end;
	uint64_t v = strtoull(hex ? buf + 2 : buf, &end, hex ? 16 : 10);
	/* strtoull takes "-5" (and wraps it) and leading blanks: neither is a number here */
	if (buf[hex ? 2 : 0] < '0' || buf[hex ? 2 : 0] > 'f' || *end)
		return 0;
	return v;
}

/* Reads the attributes the views use; the escaped file name into *NAME. */
static int
read_attrs(struct evt_cols *c, struct io *io, struct evt_span *name, const char **why)
{
	char *at = c->attrs;
	struct evt_span k, v;
	int r;
	int64_t file_object = 0, file_key = 0;

	name->p = NULL;
	name->n = 0;
	while ((r = evt_next_attr(c, &at, &k, &v, why)) == 1) {
#define IS(s) (k.n == sizeof(s) - 1 && memcmp(k.p, s, k.n) == 0)
		if (IS("file_object"))
			file_object = (int64_t)numval(v.p, v.n);
		else if (IS("file_key"))
			file_key = (int64_t)numval(v.p, v.n);
		else if (IS("irp")) {
			io->irp = numval(v.p, v.n);
			io->has_irp = 1;
		} else if (IS("disk")) {
			io->disk = numval(v.p, v.n);
			io->has_disk = 1;
		} else if (IS("bytes"))
			io->bytes = numval(v.p, v.n);
		else if (IS("elapsed_ms")) {
			int64_t ns;
			if (evt_parse_millionths(v.p, v.n, &ns) == 0 && ns >= 0)
				io->elapsed_ns = ns;
		} else if (IS("file"))
			*name = v;
#undef IS
	}
	if (r < 0)
		return -1;
	/* operations name the file by its key (shared by every open) and the open's object */
	io->file = (uint64_t)(file_key ? file_key : file_object);
	io->other = file_key ? (uint64_t)file_object : 0;
	return 0;
}

/* ---------- rows and histograms ---------- */

static uint32_t
proc_of(struct diskio *d, long pid, uint32_t pname)
{
	uint64_t a = (uint64_t)(pid + 1);
	uint32_t *v = hmap_get(&d->procmap, a, pname);
	if (v)
		return *v;
	if (d->nprocs == d->capprocs) {
		d->capprocs = d->capprocs ? 2 * d->capprocs : 64;
		d->procs = xrealloc(d->procs, d->capprocs * sizeof *d->procs);
	}
	d->procs[d->nprocs] = a << 32 | pname;
	hmap_put(&d->procmap, a, pname, d->nprocs);
	return d->nprocs++;
}

static uint32_t
row_get(struct diskio *d, uint64_t a, uint64_t b, uint64_t other)
{
	uint32_t *v = hmap_get(&d->rowmap, a, b);
	if (v)
		return *v;
	if (d->nrows == d->caprows) {
		d->caprows = d->caprows ? 2 * d->caprows : 64;
		d->rows = xrealloc(d->rows, d->caprows * sizeof *d->rows);
	}
	struct row *r = &d->rows[d->nrows];
	memset(r, 0, sizeof *r);
	r->a = a;
	r->b = b;
	r->other = other;
	r->hist = NONE;
	hmap_put(&d->rowmap, a, b, d->nrows);
	return d->nrows++;
}

/* The name a file has now, or NO_NAME. */
static uint64_t
file_name_now(struct diskio *d, uint64_t file, uint64_t other)
{
	uint32_t *v = file ? hmap_get(&d->filename, file, 0) : NULL;
	if (!v && other)
		v = hmap_get(&d->filename, other, 0);
	return v ? *v : NO_NAME;
}

/*
 * The row of an I/O in the grouping asked for.  Keys: process (pid + 1,
 * process names id), disk (disk, 0), operation (kind's names id, 0), file
 * (file key or object, names id or NO_NAME).
 */
static uint32_t
row_of(struct diskio *d, const struct io *io, long pid, uint32_t pname)
{
	switch (d->o.by) {
	case DISKIO_BY_PROCESS:
		return row_get(d, (uint64_t)(pid + 1), pname, 0);
	case DISKIO_BY_DISK:
		return row_get(d, io->has_disk ? io->disk : UINT64_MAX, 0, 0);
	case DISKIO_BY_OPERATION:
		return row_get(d, intern_add(&d->names, io->kind, strlen(io->kind)), 0, 0);
	default:
		return row_get(d, io->file, file_name_now(d, io->file, io->other), io->other);
	}
}

static void
hist_add(struct diskio *d, uint32_t ri, int64_t v)
{
	uint32_t *bi = hmap_get(&d->histmap, ri, (uint64_t)v);
	if (bi) {
		d->b[*bi].count++;
		return;
	}
	if (d->nb == d->capb) {
		d->capb = d->capb ? 2 * d->capb : 256;
		d->b = xrealloc(d->b, d->capb * sizeof *d->b);
	}
	d->b[d->nb] = (struct bucket){ .v = v, .count = 1, .next = d->rows[ri].hist };
	d->rows[ri].hist = d->nb;
	hmap_put(&d->histmap, ri, (uint64_t)v, d->nb);
	d->nb++;
}

static void
row_time(struct diskio *d, uint32_t ri, int64_t ns)
{
	struct row *r = &d->rows[ri];
	r->timed++;
	r->time_ns += ns;
	if (ns > r->max_ns)
		r->max_ns = ns;
	hist_add(d, ri, ns);
}

/* ---------- the three kinds of input ---------- */

/*
 * xperf's disk service time: the part of the I/O time after the previous
 * completion on the same disk (the disk was busy with that one before).
 */
static int64_t
service_time(struct diskio *d, const struct io *io)
{
	uint64_t disk = io->has_disk ? io->disk : UINT64_MAX;
	uint32_t *v = hmap_get(&d->lastdone, disk, 0);
	int64_t since = io->elapsed_ns;
	if (!v) {
		if (d->nlast == d->caplast) {
			d->caplast = d->caplast ? 2 * d->caplast : 16;
			d->disks = xrealloc(d->disks, d->caplast * sizeof *d->disks);
		}
		d->disks[d->nlast] = (struct diskuse){ disk, INT64_MIN, 0 };
		hmap_put(&d->lastdone, disk, 0, d->nlast);
		v = hmap_get(&d->lastdone, disk, 0);
		d->nlast++;
	}
	struct diskuse *u = &d->disks[*v];
	if (u->last_ns != INT64_MIN) {
		int64_t gap = io->t_ns - u->last_ns;
		if (gap >= 0 && gap < since)
			since = gap;
	}
	u->last_ns = io->t_ns;
	u->service_ns += since;
	return since;
}

/* The stacks view's stack of a line: "process (pid)" then its frames. */
static uint32_t
stack_of(struct diskio *d, const struct io *io)
{
	struct strbuf *sb = &d->sb;
	strbuf_reset(sb);
	strbuf_add(sb, io->process.p, io->process.n);
	strbuf_addf(sb, " (%ld)", io->pid);
	if (io->stack.n) {
		strbuf_addc(sb, ';');
		strbuf_add(sb, io->stack.p, io->stack.n);
	}
	return intern_add(&d->stacks, sb->s, sb->len);
}

/* The stacks view: the completion's time on its start's stack and file. */
static void
stack_time(struct diskio *d, const struct io *io, uint32_t file_row)
{
	uint32_t *v = io->has_irp ? hmap_get(&d->initstack, io->irp, 0) : NULL;
	uint32_t st = v ? *v : stack_of(d, io);
	if (v)
		hmap_del(&d->initstack, io->irp, 0);
	uint32_t *i = hmap_get(&d->stackrow, st, file_row);
	if (!i) {
		if (d->nsw == d->capsw) {
			d->capsw = d->capsw ? 2 * d->capsw : 256;
			d->sw = xrealloc(d->sw, d->capsw * sizeof *d->sw);
		}
		d->sw[d->nsw] = (struct stackw){ st, file_row, 0 };
		hmap_put(&d->stackrow, st, file_row, d->nsw);
		i = hmap_get(&d->stackrow, st, file_row);
		d->nsw++;
	}
	d->sw[*i].ns += io->elapsed_ns;
}

static void
take_disk(struct diskio *d, struct io *io)
{
	long pid = io->pid;
	uint32_t pname = io->pname;
	if (strncmp(io->kind, "Disk", 4) == 0 && strstr(io->kind, "Init")) {
		if (d->o.view == DISKIO_STACKS && io->has_irp)
			hmap_put(&d->initstack, io->irp, 0, stack_of(d, io));
		if (io->has_irp)
			hmap_put(&d->inits, io->irp, 0, proc_of(d, io->pid, io->pname));
		return;
	}
	/* the process that issued it: its Init's, when the stream has the Init */
	uint32_t *pi = io->has_irp ? hmap_get(&d->inits, io->irp, 0) : NULL;
	if (pi) {
		pid = (long)(d->procs[*pi] >> 32) - 1;
		pname = (uint32_t)d->procs[*pi];
		hmap_del(&d->inits, io->irp, 0);
		d->paired++;
	}
	d->ios++;
	uint32_t ri = row_of(d, io, pid, pname);
	struct row *r = &d->rows[ri];
	r->n++;
	if (io->flush)
		r->flushes++;
	else if (io->write) {
		r->writes++;
		r->wbytes += io->bytes;
	} else {
		r->reads++;
		r->rbytes += io->bytes;
	}
	if (io->elapsed_ns < 0) {
		d->untimed++;
		return;
	}
	if (d->o.view == DISKIO_STACKS)
		stack_time(d, io, ri);
	d->rows[ri].service_ns += service_time(d, io);
	row_time(d, ri, io->elapsed_ns);
}

static void
take_hardfault(struct diskio *d, struct io *io)
{
	d->ios++;
	uint32_t ri = row_of(d, io, io->pid, io->pname);
	d->rows[ri].n++;
	d->rows[ri].reads++;
	d->rows[ri].rbytes += io->bytes;
	if (io->elapsed_ns < 0)
		d->untimed++;
	else
		row_time(d, ri, io->elapsed_ns);
}

static void
pend_start(struct diskio *d, uint64_t irp, uint32_t ri, int64_t t_ns)
{
	uint32_t *v = hmap_get(&d->pendmap, irp, 0);
	if (v) {		/* the IRP is reused: the old operation never ended */
		d->unended++;
		d->pend[*v] = (struct pending){ ri, t_ns };
		return;
	}
	uint32_t i;
	if (d->freepend != NONE) {
		i = d->freepend;
		d->freepend = d->pend[i].row;
	} else {
		if (d->npend == d->cappend) {
			d->cappend = d->cappend ? 2 * d->cappend : 64;
			d->pend = xrealloc(d->pend, d->cappend * sizeof *d->pend);
		}
		i = d->npend++;
	}
	d->pend[i] = (struct pending){ ri, t_ns };
	hmap_put(&d->pendmap, irp, 0, i);
}

static void
take_fileio(struct diskio *d, struct io *io)
{
	if (strcmp(io->kind, "OperationEnd") == 0) {
		uint32_t *v = io->has_irp ? hmap_get(&d->pendmap, io->irp, 0) : NULL;
		if (!v) {
			d->ends_unmatched++;
			return;
		}
		uint32_t i = *v;
		int64_t dur = io->t_ns - d->pend[i].start_ns;
		if (dur >= 0)
			row_time(d, d->pend[i].row, dur);
		hmap_del(&d->pendmap, io->irp, 0);
		d->pend[i].row = d->freepend;
		d->freepend = i;
		return;
	}
	d->ios++;
	uint32_t ri = row_of(d, io, io->pid, io->pname);
	struct row *r = &d->rows[ri];
	r->n++;
	if (strcmp(io->kind, "Read") == 0) {
		r->reads++;
		r->rbytes += io->bytes;
	} else if (strcmp(io->kind, "Write") == 0) {
		r->writes++;
		r->wbytes += io->bytes;
	}
	if (io->has_irp)
		pend_start(d, io->irp, ri, io->t_ns);
}

/* FileIo lines that name a file: remembered for the join. */
static int
is_name_kind(const char *k)
{
	return strcmp(k, "Name") == 0 || strcmp(k, "FileCreate") == 0 ||
	    strcmp(k, "FileDelete") == 0 || strcmp(k, "Rundown") == 0 || strcmp(k, "Create") == 0;
}

static int
wanted(const struct diskio *d, const char *kind)
{
	if (strncmp(kind, "FileIo", 6) == 0)
		return 1;	/* names serve every view */
	if (d->o.view == DISKIO_HARDFAULTS)
		return strcmp(kind, "PageFaultHard") == 0;
	if (d->o.view == DISKIO_DISK || d->o.view == DISKIO_STACKS)
		return strncmp(kind, "Disk", 4) == 0 && (strcmp(kind, "DiskRead") == 0 ||
		    strcmp(kind, "DiskWrite") == 0 || strcmp(kind, "DiskFlush") == 0 ||
		    strcmp(kind, "DiskReadInit") == 0 || strcmp(kind, "DiskWriteInit") == 0 ||
		    strcmp(kind, "DiskFlushInit") == 0);
	return 0;
}

static int
take_line(void *ctx, struct evt_cols *cols, const char **why)
{
	struct diskio *d = ctx;
	struct evt_cols c = *cols;
	char kind[64];
	if (c.col[EVT_KIND].n >= sizeof kind)
		return 0;
	memcpy(kind, c.col[EVT_KIND].p, c.col[EVT_KIND].n);
	kind[c.col[EVT_KIND].n] = '\0';
	if (!wanted(d, kind))
		return 0;
	struct io io = { .elapsed_ns = -1 };
	struct evt_span name;
	double ms;
	if (evt_cols_pid(&c, &io.pid, why) < 0 || evt_cols_time(&c, &ms, why) < 0 ||
	    evt_parse_millionths(c.col[EVT_TIME].p, c.col[EVT_TIME].n, &io.t_ns) < 0 ||
	    read_attrs(&c, &io, &name, why) < 0)
		return -1;
	io.pname = intern_add(&d->names, c.col[EVT_PROCESS].p, c.col[EVT_PROCESS].n);
	if (d->o.view == DISKIO_STACKS) {
		io.process = c.col[EVT_PROCESS];
		io.stack = evt_cols_stack(&c);
	}
	io.kind = kind;
	if (strncmp(kind, "FileIo", 6) == 0) {
		io.kind = kind + 6;
		if (is_name_kind(io.kind) && name.p && io.file) {
			/* Create names its file object; the others the file key (Windows 8 on) */
			uint64_t obj = strcmp(io.kind, "Create") == 0 && io.other ? io.other : io.file;
			hmap_put(&d->filename, obj, 0, intern_add(&d->names, name.p, name.n));
			d->names_seen++;
		}
		if (d->o.view == DISKIO_FILEIO && !(is_name_kind(io.kind) && strcmp(io.kind, "Create")))
			take_fileio(d, &io);
		return 0;
	}
	if (strcmp(kind, "PageFaultHard") == 0) {
		take_hardfault(d, &io);
		return 0;
	}
	io.write = strcmp(kind, "DiskWrite") == 0;
	io.flush = strcmp(kind, "DiskFlush") == 0;
	take_disk(d, &io);
	return 0;
}

/* The header for evt_each(): the trace's duration, for the disks' busy share. */
static int
take_header(void *ctx, char *line, size_t len, const char **why)
{
	struct diskio *d = ctx;
	struct evt_header h;
	const char *dur;
	int64_t ns;

	if (evt_parse_header(line, len, &h, why) < 0)
		return -2;
	if ((dur = evt_header_get(&h, "duration_ms")) &&
	    evt_parse_millionths(dur, strlen(dur), &ns) == 0 && ns > 0)
		d->duration_ns += ns;
	return 0;
}

int
diskio_read(struct diskio *d, const char *path)
{
	const struct evt_handlers eh = { .ctx = d, .header = take_header, .event = take_line };
	uint64_t bad;
	int r = evt_each(path, &eh, &bad);

	d->skipped += bad;
	return r;
}

/* ---------- the report ---------- */

/* A row of the report: the accumulation rows with the same label. */
struct disp {
	uint32_t label;		/* names id */
	uint32_t first;		/* first accumulation row; more through next[] */
	struct row sum;
	int64_t p50, p90, p99;
};

static uint32_t
label_str(struct diskio *d, const char *s)
{
	return intern_add(&d->names, s, strlen(s));
}

/* The label of accumulation row R in the grouping asked for. */
static uint32_t
label_of(struct diskio *d, const struct row *r)
{
	char buf[4200];
	switch (d->o.by) {
	case DISKIO_BY_PROCESS: {
		uint32_t n = (uint32_t)r->b;
		snprintf(buf, sizeof buf, "%.*s (%ld)", (int)intern_len(&d->names, n),
		    intern_str(&d->names, n), (long)r->a - 1);
		return label_str(d, buf);
	}
	case DISKIO_BY_DISK:
		if (r->a == UINT64_MAX)
			return label_str(d, "disk ?");
		snprintf(buf, sizeof buf, "disk %" PRIu64, r->a);
		return label_str(d, buf);
	case DISKIO_BY_OPERATION:
		return (uint32_t)r->a;
	default: {
		uint64_t n = r->b != NO_NAME ? r->b : file_name_now(d, r->a, r->other);
		if (n != NO_NAME)
			return (uint32_t)n;
		if (r->a == 0)
			return label_str(d, "? (no file: a flush, or no file object)");
		snprintf(buf, sizeof buf, "? (file 0x%" PRIx64 ", not named in the trace)", r->a);
		return label_str(d, buf);
	}
	}
}

static int
cmp_bucket(const void *a, const void *b)
{
	const struct bucket *x = a, *y = b;
	return (x->v > y->v) - (x->v < y->v);
}

/* Nearest-rank percentiles of the buckets of every row of D. */
static void
percentiles(struct diskio *dio, struct disp *d, const uint32_t *next, struct bucket **tmp,
    size_t *cap)
{
	size_t n = 0;
	for (uint32_t r = d->first; r != NONE; r = next[r])
		for (uint32_t b = dio->rows[r].hist; b != NONE; b = dio->b[b].next) {
			if (n == *cap) {
				*cap = *cap ? 2 * *cap : 256;
				*tmp = xrealloc(*tmp, *cap * sizeof **tmp);
			}
			(*tmp)[n++] = dio->b[b];
		}
	if (n == 0)
		return;
	qsort(*tmp, n, sizeof **tmp, cmp_bucket);
	const double ps[3] = { 50, 90, 99 };
	int64_t *out[3] = { &d->p50, &d->p90, &d->p99 };
	for (int i = 0; i < 3; i++) {
		/* the smallest value with at least ceil(p% of the count) at or below it */
		uint64_t rank = (uint64_t)((ps[i] * (double)d->sum.timed + 99) / 100);
		if (rank < 1)
			rank = 1;
		uint64_t seen = 0;
		for (size_t k = 0; k < n; k++) {
			seen += (*tmp)[k].count;
			if (seen >= rank) {
				*out[i] = (*tmp)[k].v;
				break;
			}
		}
	}
}

static void
add_row(struct row *s, const struct row *r)
{
	s->n += r->n;
	s->reads += r->reads;
	s->writes += r->writes;
	s->flushes += r->flushes;
	s->rbytes += r->rbytes;
	s->wbytes += r->wbytes;
	s->time_ns += r->time_ns;
	s->service_ns += r->service_ns;
	s->timed += r->timed;
	if (r->max_ns > s->max_ns)
		s->max_ns = r->max_ns;
}

static const struct diskio *sort_d;

static int
cmp_disp(const void *a, const void *b)
{
	const struct disp *x = a, *y = b;
	if (x->sum.time_ns != y->sum.time_ns)
		return x->sum.time_ns < y->sum.time_ns ? 1 : -1;
	if (x->sum.n != y->sum.n)
		return x->sum.n < y->sum.n ? 1 : -1;
	return strcmp(intern_str(&sort_d->names, x->label), intern_str(&sort_d->names, y->label));
}

/* The report's rows, merged by label, sorted by time then count. */
static struct disp *
build(struct diskio *d, uint32_t *ndisp)
{
	struct hmap bylabel;
	uint32_t *next = xcalloc(d->nrows ? d->nrows : 1, sizeof *next);
	uint32_t *last = xcalloc(d->nrows ? d->nrows : 1, sizeof *last);
	struct disp *v = xcalloc(d->nrows ? d->nrows : 1, sizeof *v);
	uint32_t n = 0;
	hmap_init(&bylabel);
	for (uint32_t r = 0; r < d->nrows; r++) {
		uint32_t label = label_of(d, &d->rows[r]);
		uint32_t *i = hmap_get(&bylabel, label, 0);
		next[r] = NONE;
		if (i) {
			next[last[*i]] = r;
			last[*i] = r;
		} else {
			v[n] = (struct disp){ .label = label, .first = r };
			last[n] = r;
			hmap_put(&bylabel, label, 0, n++);
		}
	}
	struct bucket *tmp = NULL;
	size_t cap = 0;
	for (uint32_t i = 0; i < n; i++) {
		for (uint32_t r = v[i].first; r != NONE; r = next[r])
			add_row(&v[i].sum, &d->rows[r]);
		percentiles(d, &v[i], next, &tmp, &cap);
	}
	free(tmp);
	free(next);
	free(last);
	hmap_free(&bylabel);
	sort_d = d;
	qsort(v, n, sizeof *v, cmp_disp);
	*ndisp = n;
	return v;
}

/* The columns of each view: title, and which value (see cell()). */
enum col { C_N, C_READS, C_WRITES, C_FLUSHES, C_RBYTES, C_WBYTES, C_BYTES, C_TIMED, C_TIME,
    C_SERVICE, C_P50, C_P90, C_P99, C_MAX };

static const struct { const char *text, *tsv; } col_names[] = {
	[C_N] = { "Count", "count" }, [C_READS] = { "Reads", "reads" },
	[C_WRITES] = { "Writes", "writes" }, [C_FLUSHES] = { "Flushes", "flushes" },
	[C_RBYTES] = { "Read bytes", "read_bytes" }, [C_WBYTES] = { "Write bytes", "write_bytes" },
	[C_BYTES] = { "Bytes", "bytes" }, [C_TIMED] = { "Timed", "timed" },
	[C_TIME] = { "Time ms", "time_ms" }, [C_SERVICE] = { "Service ms", "service_ms" },
	[C_P50] = { "p50 ms", "p50_ms" }, [C_P90] = { "p90 ms", "p90_ms" },
	[C_P99] = { "p99 ms", "p99_ms" }, [C_MAX] = { "Max ms", "max_ms" },
};

static const enum col disk_cols[] = { C_N, C_READS, C_WRITES, C_FLUSHES, C_RBYTES, C_WBYTES,
    C_TIME, C_SERVICE, C_P50, C_P90, C_P99, C_MAX };
static const enum col fault_cols[] = { C_N, C_BYTES, C_TIME, C_P50, C_P90, C_P99, C_MAX };
static const enum col file_cols[] = { C_N, C_READS, C_WRITES, C_RBYTES, C_WBYTES, C_TIMED,
    C_TIME, C_P50, C_P90, C_P99, C_MAX };

static int
is_ms(enum col c)
{
	return c >= C_TIME;
}

/* One cell: exact for TSV (ms from ns, shortest), grouped for people. */
static void
cell(char *out, const struct disp *d, enum col c, int tsv)
{
	const struct row *s = &d->sum;
	uint64_t u = 0;
	int64_t ns = 0;
	switch (c) {
	case C_N: u = s->n; break;
	case C_READS: u = s->reads; break;
	case C_WRITES: u = s->writes; break;
	case C_FLUSHES: u = s->flushes; break;
	case C_RBYTES: u = s->rbytes; break;
	case C_WBYTES: u = s->wbytes; break;
	case C_BYTES: u = s->rbytes + s->wbytes; break;
	case C_TIMED: u = s->timed; break;
	case C_TIME: ns = s->time_ns; break;
	case C_SERVICE: ns = s->service_ns; break;
	case C_P50: ns = d->p50; break;
	case C_P90: ns = d->p90; break;
	case C_P99: ns = d->p99; break;
	case C_MAX: ns = s->max_ns; break;
	}
	if (is_ms(c) && s->timed == 0 && c != C_TIME && c != C_SERVICE) {
		strcpy(out, tsv ? "" : "-");
		return;
	}
	if (tsv) {
		if (is_ms(c))
			evt_format_weight_ns(out, ns);
		else
			snprintf(out, 32, "%" PRIu64, u);
	} else if (is_ms(c))
		fmt_thousands(out, (double)ns / 1e6, 3);
	else
		fmt_thousands(out, (double)u, 0);
}

static const char *
by_name(enum diskio_by by)
{
	return by == DISKIO_BY_PROCESS ? "Process" : by == DISKIO_BY_DISK ? "Disk" :
	    by == DISKIO_BY_OPERATION ? "Operation" : "File";
}

static int
cmp_diskuse(const void *a, const void *b)
{
	const struct diskuse *x = a, *y = b;
	return (x->disk > y->disk) - (x->disk < y->disk);
}

/* How busy each disk was: its service time over the trace's duration (xperf's utilization). */
static void
disk_busy(struct diskio *d, struct outbuf *ob)
{
	char svc[64], dur[64], pct[64];
	if (d->nlast > 1)
		qsort(d->disks, d->nlast, sizeof *d->disks, cmp_diskuse);
	fmt_thousands(dur, (double)d->duration_ns / 1e6, 3);
	for (uint32_t i = 0; i < d->nlast; i++) {
		const struct diskuse *u = &d->disks[i];
		fmt_thousands(svc, (double)u->service_ns / 1e6, 3);
		if (u->disk == UINT64_MAX)
			ob_puts(ob, "disk ?");
		else
			ob_printf(ob, "disk %" PRIu64, u->disk);
		ob_printf(ob, ": busy %s ms", svc);
		if (d->duration_ns > 0) {
			fmt_thousands(pct, 100.0 * (double)u->service_ns / (double)d->duration_ns, 1);
			ob_printf(ob, ", %s%% of the trace's %s ms", pct, dur);
		}
		ob_puts(ob, ".\n");
	}
}

static void
footer(struct diskio *d, struct outbuf *ob)
{
	if (d->o.view == DISKIO_DISK) {
		ob_printf(ob, "\n%" PRIu64 " disk I/Os; %" PRIu64 " paired with their start by irp= "
		    "(the process is the start's); %" PRIu64 " without a time.\n",
		    d->ios, d->paired, d->untimed);
		disk_busy(d, ob);
	}
	else if (d->o.view == DISKIO_HARDFAULTS)
		ob_printf(ob, "\n%" PRIu64 " hard faults; %" PRIu64 " without a time.\n",
		    d->ios, d->untimed);
	else
		ob_printf(ob, "\n%" PRIu64 " file operations; time is from an operation to its "
		    "FileIoOperationEnd (same irp=): %" PRIu64 " ends without their operation, "
		    "%" PRIu64 " operations whose IRP was reused before an end, %" PRIu32
		    " still open at the end.\n", d->ios, d->ends_unmatched, d->unended,
		    (uint32_t)d->pendmap.n);
	ob_printf(ob, "%" PRIu64 " file names seen.  Percentiles: nearest rank, exact.\n",
	    d->names_seen);
}

/* A stack column as folded frames: "%3B" in a frame becomes ':' (evt-format.md §4). */
static void
put_folded(struct outbuf *ob, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && s[i + 1] == '3' && (s[i + 2] == 'B' || s[i + 2] == 'b')) {
			ob_putc(ob, ':');
			i += 2;
		} else
			ob_putc(ob, s[i]);
	}
}

static int
cmp_stackw(const void *a, const void *b)
{
	const struct stackw *x = a, *y = b;
	int c = strcmp(intern_str(&sort_d->stacks, x->stack), intern_str(&sort_d->stacks, y->stack));
	if (c)
		return c;
	return strcmp(intern_str(&sort_d->names, x->row), intern_str(&sort_d->names, y->row));
}

/*
 * The stacks view: "process (pid);frames...;Disk Read: FILE COUNT" per
 * (stack, file), in whole microseconds (the rounding carried so the total
 * stays exact) or, with unit_ms, milliseconds.  The file is the name the
 * report would give it (joined at the end).
 */
static void
report_stacks(struct diskio *d, struct outbuf *ob)
{
	/* rows of the same name are one leaf: turn each row index into its label */
	for (uint32_t i = 0; i < d->nsw; i++)
		d->sw[i].row = label_of(d, &d->rows[d->sw[i].row]);
	sort_d = d;
	qsort(d->sw, d->nsw, sizeof *d->sw, cmp_stackw);
	double carry = 0;
	for (uint32_t i = 0; i < d->nsw; i++) {
		int64_t ns = d->sw[i].ns;
		/* merge the entries that now have the same stack and leaf */
		while (i + 1 < d->nsw && d->sw[i + 1].stack == d->sw[i].stack &&
		    d->sw[i + 1].row == d->sw[i].row)
			ns += d->sw[++i].ns;
		char num[64];
		if (d->o.unit_ms)
			evt_format_weight_ns(num, ns);
		else {
			double us = (double)ns / 1000, r = floor(us + carry + 0.5);
			carry += us - r;
			if (r <= 0)
				continue;
			snprintf(num, sizeof num, "%.0f", r);
		}
		put_folded(ob, intern_str(&d->stacks, d->sw[i].stack),
		    intern_len(&d->stacks, d->sw[i].stack));
		ob_puts(ob, ";Disk I/O: ");
		const char *f = intern_str(&d->names, d->sw[i].row);
		put_folded(ob, f, strlen(f));
		ob_printf(ob, " %s\n", num);
	}
}

void
diskio_report(struct diskio *d, struct outbuf *ob)
{
	if (d->o.view == DISKIO_STACKS) {
		report_stacks(d, ob);
		return;
	}
	const enum col *cols = d->o.view == DISKIO_DISK ? disk_cols :
	    d->o.view == DISKIO_HARDFAULTS ? fault_cols : file_cols;
	size_t ncols = d->o.view == DISKIO_DISK ? sizeof disk_cols / sizeof *cols :
	    d->o.view == DISKIO_HARDFAULTS ? sizeof fault_cols / sizeof *cols :
	    sizeof file_cols / sizeof *cols;
	uint32_t n;
	struct disp *v = build(d, &n);
	char buf[64];
	int tsv = d->o.tsv;

	if (!tsv)
		ob_printf(ob, "%s by %s\n\n", d->o.view == DISKIO_DISK ? "Disk I/O" :
		    d->o.view == DISKIO_HARDFAULTS ? "Hard faults" : "File I/O",
		    by_name(d->o.by));
	for (size_t c = 0; c < ncols; c++) {
		if (tsv)
			ob_printf(ob, "%s\t", col_names[cols[c]].tsv);
		else
			ob_printf(ob, "%12s ", col_names[cols[c]].text);
	}
	ob_printf(ob, "%s\n", tsv ? (d->o.by == DISKIO_BY_PROCESS ? "process" :
	    d->o.by == DISKIO_BY_DISK ? "disk" : d->o.by == DISKIO_BY_OPERATION ? "operation" :
	    "file") : by_name(d->o.by));
	for (uint32_t i = 0; i < n; i++) {
		for (size_t c = 0; c < ncols; c++) {
			cell(buf, &v[i], cols[c], tsv);
			if (tsv)
				ob_printf(ob, "%s\t", buf);
			else
				ob_printf(ob, "%12s ", buf);
		}
		const char *label = intern_str(&d->names, v[i].label);
		if (tsv)
			fmt_tsv_text(ob, label);
		else
			ob_puts(ob, label);
		ob_putc(ob, '\n');
	}
	if (!tsv)
		footer(d, ob);
	free(v);
}

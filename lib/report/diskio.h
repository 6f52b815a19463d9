/*
 * diskio.h - disk and file I/O tables from evt streams, as xperf -a diskio
 * and WPA's Disk Usage and File I/O tables give them.
 *
 * Input: the lines etl2evt writes for DiskIo, PageFault HardFault and FileIo
 * (docs/evt-format.md §3).  Three views:
 *   disk        DiskRead/DiskWrite/DiskFlush by process, file or disk: count,
 *               bytes, I/O time (issue to completion), disk service time
 *               (xperf's: the part after the previous completion on the same
 *               disk), latency percentiles.  The process is the one that
 *               issued the I/O: the DiskReadInit/... with the same irp= when
 *               the stream has it, else the completion's own.
 *   hardfaults  PageFaultHard by file or process: count, bytes, wait time,
 *               percentiles.
 *   fileio      FileIo operations by file, operation or process: count,
 *               bytes, time from the operation to its FileIoOperationEnd
 *               (same irp=) where the stream has the end.
 *   stacks      "where the disk time was asked for": each disk I/O's time
 *               as folded stacks, the process, then the stack of its start
 *               (DiskReadInit...: the completion has none), then a leaf
 *               naming the operation and the file (PerfView's Disk I/O
 *               stacks), for render flame.
 * Files are named by joining a file object or file key to the names of
 * FileIoName/FileCreate/FileDelete/Rundown and FileIoCreate lines; a name
 * that comes later than the I/O (the rundown at the end) still names it.
 *
 * Memory grows with distinct processes, files, disks, IRPs in flight and
 * distinct latency values per row (the exact histograms behind the
 * percentiles), never with the number of events.
 */
#ifndef ETLKIT_DISKIO_H
#define ETLKIT_DISKIO_H

#include "evt/evt.h"

enum diskio_view { DISKIO_DISK, DISKIO_HARDFAULTS, DISKIO_FILEIO, DISKIO_STACKS };
enum diskio_by { DISKIO_BY_DEFAULT, DISKIO_BY_PROCESS, DISKIO_BY_FILE, DISKIO_BY_DISK,
    DISKIO_BY_OPERATION };

struct diskio_opts {
	enum diskio_view view;
	enum diskio_by by;	/* DEFAULT: process (disk), file (hardfaults, fileio) */
	int tsv;
	int unit_ms;		/* stacks: counts in ms (shortest decimals), not whole us */
};

/* The --by value BY for VIEW, or -1 when the view has no such grouping. */
int diskio_parse_by(enum diskio_view view, const char *by);

struct diskio;

struct diskio *diskio_new(const struct diskio_opts *o);
/* Reads one evt input ("-" = stdin).  Returns 0, 1 (lines skipped, counted) or 2. */
int diskio_read(struct diskio *d, const char *path);
void diskio_report(struct diskio *d, struct outbuf *ob);
void diskio_free(struct diskio *d);

#endif

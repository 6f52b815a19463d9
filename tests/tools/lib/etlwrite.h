/*
 * etlwrite.h - writes .etl files the way the Windows kernel logger does.
 *
 * The file is a header buffer (TRACE_LOGFILE_HEADER event) followed by
 * one stream of buffers per CPU; a buffer is written to the file when it
 * fills (so CPUs interleave in file order, as in real traces) and all
 * are flushed at close.  Records are 8-byte aligned, unused space is
 * 0xFF.  Optionally every data buffer is compressed with MS-XCA plain
 * LZ77 ("XPRESS", the EVENT_TRACE_COMPRESSED_MODE format).
 *
 * Callers append complete records (header + payload) built with the
 * etlw_rec_* helpers; per CPU, records must come in time order.
 * Layouts follow ../shared/docs/etl-format.md.
 */
#ifndef ETLKIT_ETLWRITE_H
#define ETLKIT_ETLWRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* header kinds (the byte at +2 of a record), 32-bit variant; +1 for 64-bit */
#define ETLW_SYSTEM       0x01	/* 0x01/0x02 SYSTEM_TRACE_HEADER */
#define ETLW_COMPACT      0x03	/* 0x03/0x04 compact SYSTEM_TRACE_HEADER */
#define ETLW_FULL         0x0A	/* 0x0A/0x14 EVENT_TRACE_HEADER */
#define ETLW_PERFINFO     0x10	/* 0x10/0x11 PERFINFO_TRACE_HEADER */

/* buffer flags */
#define ETLW_BUF_FLUSH_MARKER 0x01
#define ETLW_BUF_EVENTS_LOST  0x02
#define ETLW_BUF_BUFFER_LOST  0x04
#define ETLW_BUF_PROC_INDEX   0x20
#define ETLW_BUF_COMPRESSED   0x40

#define ETLW_LOGFILE_COMPRESSED 0x04000000u

struct etlw_config {
	int pointer_size;		/* 4 or 8 */
	int ncpus;
	uint32_t buffer_size;		/* logger buffer size, e.g. 65536 */
	int compress;			/* compress data buffers: 1 or 3 XPRESS, 2 LZNT1 */
	uint8_t version[4];		/* Major, Minor, Sub, SubMinor */
	uint32_t os_build;		/* ProviderVersion */
	uint32_t cpu_mhz;
	uint64_t clock_freq;		/* PerfFreq (QPC ticks per second) */
	uint64_t start_qpc;		/* timestamp of the header event */
	uint64_t start_filetime;	/* StartTime */
	uint64_t end_filetime;		/* EndTime */
	uint64_t boot_filetime;
	uint32_t log_file_mode;		/* 0 = sequential (|compressed) */
	uint32_t events_lost;		/* added to what etlw_events_lost counts */
	uint32_t buffers_lost;
	uint16_t logger_id;
	uint32_t controller_pid, controller_tid;
	int32_t tz_bias;		/* minutes */
	const char *tz_name;
	const char *logger_name;
	const char *logfile_name;
	/* Extra records for the header buffer (after the logfile header). */
};

struct etlw;

/* Creates PATH and writes a placeholder header buffer.  Exits 2 on I/O errors. */
struct etlw *etlw_open(const char *path, const struct etlw_config *cfg);
/* Appends one complete record to CPU's stream. */
void etlw_append(struct etlw *w, int cpu, const void *rec, size_t len);
/* Marks CPU's current buffer EVENTS_LOST and counts N lost events. */
void etlw_events_lost(struct etlw *w, int cpu, uint32_t n);
/*
 * N buffers of CPU were lost after its current one: that buffer gets the
 * BUFFER_LOST flag, N sequence numbers are skipped, BuffersLost counts them.
 */
void etlw_buffers_lost(struct etlw *w, int cpu, uint32_t n);
/* Flushes all buffers, rewrites the header buffer, closes.  Returns bytes written. */
uint64_t etlw_close(struct etlw *w);

/* ---------- record building ---------- */

struct etlw_rec {
	uint8_t *b;
	size_t len, cap;
	size_t hdr;			/* header length */
	int kind;			/* ETLW_* of the record */
	int psize;
};

void etlw_rec_init(struct etlw_rec *r);
void etlw_rec_free(struct etlw_rec *r);
/* Starts a kernel record: SYSTEM (full or compact) or PERFINFO header. */
void etlw_rec_kernel(struct etlw_rec *r, int kind, int psize, int group, int type,
    int version, uint32_t tid, uint32_t pid, uint64_t ts);
/* Starts an EVENT_TRACE_HEADER record (class GUID in Windows byte order). */
void etlw_rec_classic(struct etlw_rec *r, int psize, const uint8_t guid[16],
    int type, int level, int version, uint32_t tid, uint32_t pid, uint64_t ts);
void etlw_u8(struct etlw_rec *r, uint8_t v);
void etlw_u16(struct etlw_rec *r, uint16_t v);
void etlw_u32(struct etlw_rec *r, uint32_t v);
void etlw_u64(struct etlw_rec *r, uint64_t v);
void etlw_ptr(struct etlw_rec *r, uint64_t v);	/* 4 or 8 bytes by psize */
void etlw_bytes(struct etlw_rec *r, const void *p, size_t n);
void etlw_astr(struct etlw_rec *r, const char *s);	/* 8-bit, NUL-terminated */
void etlw_wstr(struct etlw_rec *r, const char *s);	/* UTF-8 -> UTF-16LE, NUL-terminated */
/* Writes the total size into the header; returns the record length. */
size_t etlw_rec_finish(struct etlw_rec *r);

#endif

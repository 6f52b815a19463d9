/*
 * etl.h - reading Windows ETW trace files (.etl): buffers, compressed
 * buffers, record headers, and a per-CPU merge into global time order.
 * See ../shared/docs/etl-format.md for the format.
 *
 * The reader works on bytes in memory (const uint8_t *, size_t) so that
 * the whole decoder can run on a mmap()ed file, a fuzzer's input or a
 * synthetic trace.  It never reads outside those bytes; corrupt parts
 * are reported through the error hook (with their file offset) and
 * skipped, and decoding goes on with the next usable buffer.
 */
#ifndef ETLKIT_ETL_H
#define ETLKIT_ETL_H

#include <stddef.h>
#include <stdint.h>

/* Record header kinds (docs §3). */
enum etl_hkind {
	ETL_HK_SYSTEM,		/* SYSTEM_TRACE_HEADER 0x01/0x02 */
	ETL_HK_COMPACT,		/* compact SYSTEM_TRACE_HEADER 0x03/0x04 */
	ETL_HK_PERFINFO,	/* PERFINFO_TRACE_HEADER 0x10/0x11 */
	ETL_HK_FULL,		/* EVENT_TRACE_HEADER 0x0A/0x14 (classic) */
	ETL_HK_INSTANCE,	/* EVENT_INSTANCE_HEADER 0x0B/0x15 */
	ETL_HK_EVENT,		/* EVENT_HEADER 0x12/0x13 (manifest, TraceLogging) */
	ETL_HK_WPP,		/* trace message (WPP), flags 0x90 */
	ETL_HK_OTHER,		/* TIMED/ERROR/WNODE headers: size only */
	ETL_HK_COUNT
};

/* Clock types of TRACE_LOGFILE_HEADER.ReservedFlags. */
enum { ETL_CLOCK_QPC = 1, ETL_CLOCK_SYSTIME = 2, ETL_CLOCK_CYCLES = 3 };

#define ETL_NO_ID 0xffffffffu

/*
 * One event.  Its fields are ordered so that it takes 128 bytes, two
 * cache lines: the worker hands every event over to the caller's
 * thread, whose reading them from the other core is a cost per line.
 * (Putting all that a kernel event's decoder reads into the first line
 * did not help: 1.02x on net.4.5.2.x64 -k Sample, the pair comes over
 * together.)
 */
struct etl_event {
	int hkind;		/* enum etl_hkind */
	int hdr64;		/* the header type is the 64-bit variant */
	int cpu;		/* from the buffer context */
	uint32_t tid, pid;	/* ETL_NO_ID when the header has none */
	uint32_t extlen;	/* bytes at ext */
	uint64_t ts;		/* raw clock value */
	int64_t ns;		/* etl_ns(ts): the reader's thread converts it, not the caller's */
	/* kernel (system/compact/perfinfo): group, type, version.
	 * classic (full/instance): type = Class.Type, version = Class.Version, level. */
	uint8_t group, type;
	uint16_t version;
	/* EVENT_HEADER */
	uint16_t id, task, eflags, eprop;
	uint8_t level, opcode, channel;
	/* WPP */
	uint16_t message_id;
	uint32_t plen;		/* bytes at payload */
	const uint8_t *guid;	/* provider/class GUID (16 bytes, Windows order) or NULL */
	uint64_t keywords;	/* EVENT_HEADER */
	const uint8_t *activity;	/* EVENT_HEADER: 16 bytes or NULL */
	const uint8_t *ext;	/* EVENT_HEADER: extended data items, or NULL */
	const uint8_t *payload;
	const uint8_t *raw;	/* the whole record */
	uint32_t rawlen;
	uint32_t rec_offset;	/* offset of the record in the (decompressed) buffer */
	uint64_t buf_offset;	/* file offset of the buffer holding it */
};

struct etl_info {
	uint32_t buffer_size;
	uint8_t version[4];
	uint32_t build;		/* ProviderVersion */
	uint32_t ncpu;
	uint64_t end_time;	/* FILETIME */
	uint32_t timer_resolution;
	uint32_t max_file_size;
	uint32_t log_file_mode;
	uint32_t buffers_written;
	uint32_t pointer_size;
	uint32_t events_lost;
	uint32_t cpu_mhz;
	int32_t tz_bias;
	uint64_t boot_time;	/* FILETIME */
	uint64_t perf_freq;
	uint64_t start_time;	/* FILETIME */
	uint32_t clock_type;
	uint32_t buffers_lost;
	char logger_name[256];
	char logfile_name[512];	/* UTF-8 */
	uint64_t ts0;		/* raw timestamp of the logfile header event */
	uint64_t clock_freq;	/* ticks per second of the event clock */
	int compression;	/* COMPRESSION_FORMAT_* for compressed buffers */
};

/* Buffer index entry. */
struct etl_buffer {
	uint64_t offset;	/* in the file */
	uint32_t size;		/* bytes in the file */
	uint32_t filled;	/* valid bytes incl. the 0x48 header, decompressed */
	uint16_t cpu;
	uint16_t flags;
	uint16_t type;
	uint16_t damaged;	/* counted in etl_damage() already */
	uint64_t seq;
};

typedef void (*etl_error_fn)(void *ctx, uint64_t offset, const char *msg);

struct etl_reader;

/*
 * Opens a trace held in DATA[0..LEN) (which must stay valid).  ERR gets
 * every problem found later, with the file offset.  Returns NULL (and
 * calls ERR) when not even the logfile header can be read.
 */
struct etl_reader *etl_open(const uint8_t *data, size_t len, etl_error_fn err, void *ctx);
/*
 * The same for DATA that is a read-only mapping of the file open on FD:
 * the index is built through the mapping (and its pages given back),
 * the buffers are then read with pread(2), so resident memory stays
 * bounded by CPUs × buffer size however large the file.
 */
struct etl_reader *etl_open_mapped(const uint8_t *data, size_t len, etl_error_fn err, void *ctx,
    int fd);
/*
 * The same for a trace that starts at byte BASE of the file open on FD
 * (a member stored uncompressed in a zip, read in place): DATA maps
 * that byte, offsets in messages count from it.
 */
struct etl_reader *etl_open_mapped_at(const uint8_t *data, size_t len, etl_error_fn err,
    void *ctx, int fd, uint64_t base);
const struct etl_info *etl_info(const struct etl_reader *r);
size_t etl_nbuffers(const struct etl_reader *r);
const struct etl_buffer *etl_buffers(const struct etl_reader *r);

/* Problems found so far: corrupt buffers/records skipped, bytes skipped. */
struct etl_damage {
	uint64_t buffers;	/* buffers (each once) that could not be (fully) decoded */
	uint64_t bytes;		/* bytes of the file not decoded: never more than it has */
	uint64_t lost_buffers;	/* buffers flagged EVENTS_LOST/BUFFER_LOST */
};
const struct etl_damage *etl_damage(const struct etl_reader *r);
/* Reports a problem found by a caller through the error hook (first pass only). */
void etl_problem(struct etl_reader *r, uint64_t off, const char *msg);

enum etl_order { ETL_FILE_ORDER, ETL_TIME_ORDER };
/* Starts (or restarts) iteration over all events. */
void etl_rewind(struct etl_reader *r, enum etl_order order);
/*
 * Next event: 1, or 0 at the end.  EV's pointers are valid until the
 * next call: they point into the trace's bytes where they stay put (the
 * mapping, buffers kept decompressed), else into the reader's copy.
 */
int etl_next(struct etl_reader *r, struct etl_event *ev);
/*
 * The same without copying the event: it stays valid (and the caller
 * may change its fields) until the next call; NULL at the end.  The
 * caller's thread is spared a copy of two cache lines per event.
 */
struct etl_event *etl_next_ref(struct etl_reader *r);
/*
 * For every reader of the process, before its first rewind.  THREADS:
 * 1 iterates on the caller's thread alone; 2 or more adds a worker that
 * reads, decompresses and parses ahead (one is all it uses); 0, the
 * default, adds it when there is more than one core.  KEEP: bytes of
 * decompressed buffers kept in memory between passes (32 MiB by
 * default); the rest go to an unlinked temporary file in TMPDIR.
 */
void etl_set_threads(int threads);
void etl_set_keep(size_t bytes);
/*
 * Work on each event that needs only the event and the events before it
 * (decoding a payload, a state machine over the stream), moved off the
 * caller's thread: FN sees every event of the passes that follow, in
 * the order the caller will get them, on the worker thread when there
 * is one (ahead of the caller), else on the caller's thread just before
 * it gets the event.  FN may add bytes for the event with
 * etl_prep_add(); the caller reads them with etl_prepared() while that
 * event is its latest.  FN must not touch what the caller's thread
 * changes meanwhile.  NULL FN: none.
 */
struct etl_prep {	/* what a prepare hook added, several events' one after another */
	uint8_t *p;
	size_t n, cap;
};
typedef void (*etl_prepare_fn)(void *ctx, const struct etl_event *ev, struct etl_prep *out);
void etl_set_prepare(struct etl_reader *r, etl_prepare_fn fn, void *ctx);
/* Appends N bytes at P to what the event being prepared gets (each event's start 8-aligned). */
void etl_prep_add(struct etl_prep *out, const void *p, size_t n);
/* What FN added for the event etl_next_ref() returned last: *N bytes (0: nothing). */
const void *etl_prepared(const struct etl_reader *r, size_t *n);
/* Whether FN runs ahead on the worker (else inline: work it moves saves nothing then). */
int etl_prep_ahead(const struct etl_reader *r);
/* Bytes of the file covered so far by the iteration (for progress). */
uint64_t etl_progress(const struct etl_reader *r);
void etl_close(struct etl_reader *r);

/* Ticks → ns since the logfile header (may be negative); FILETIME of a timestamp. */
int64_t etl_ns(const struct etl_reader *r, uint64_t ts);
uint64_t etl_filetime(const struct etl_reader *r, uint64_t ts);

/* Little helpers for payload decoding, all bounded by LEN. */
static inline uint16_t etl_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t etl_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t etl_u64(const uint8_t *p) { return etl_u32(p) | (uint64_t)etl_u32(p + 4) << 32; }

/* Formats a Windows-order GUID as 8-4-4-4-12 lowercase hex (37 bytes incl. NUL). */
void etl_guid_str(char *out, const uint8_t *g);
/*
 * Parses a GUID's text, "01234567-89ab-cdef-0123-456789abcdef" (braces and
 * dashes optional, either case), into Windows order.  0, or -1 when S is
 * not exactly 32 hex digits so written.
 */
int etl_guid_parse(const char *s, uint8_t out[16]);
/* "YYYY-MM-DDTHH:MM:SS.fffffffZ" for a FILETIME (29 bytes incl. NUL). */
void etl_filetime_str(char *out, uint64_t ft);
/*
 * UTF-16LE string at P (at most MAXB bytes, stops at NUL) → UTF-8 in
 * OUT (capacity CAP, always NUL-terminated; unpaired surrogates become
 * '?').  *CONSUMED gets the bytes used incl. the NUL.  Returns the UTF-8 length.
 */
size_t etl_wstr(const uint8_t *p, size_t maxb, char *out, size_t cap, size_t *consumed);
/* 8-bit string likewise (invalid UTF-8 bytes become '?'). */
size_t etl_astr(const uint8_t *p, size_t maxb, char *out, size_t cap, size_t *consumed);

#endif

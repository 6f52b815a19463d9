/*
 * tdh.h - manifest event schemas embedded in traces, and payload decoding
 * with them (what Windows' TDH does with an installed manifest).
 *
 * xperf, WPR and PerfView merges write KernelTraceControl "MetaData"
 * records (classic header, GUID bbccf6c1-6cd1-48c4-80ff-839482e37671):
 * type 32 EventInfo = a TRACE_EVENT_INFO blob, type 33 EventMapInfo = the
 * provider GUID followed by an EVENT_MAP_INFO blob.  A tdh_db collects
 * them (in any order relative to the events) and decodes EVENT_HEADER
 * payloads into named fields.  Providers without an embedded schema but
 * with a built-in one (lib/etl/wperf.c: WindowsPerf) decode too.
 *
 * Every offset in a blob is checked; a damaged blob is counted and
 * ignored, never trusted.  Values are formatted as the rest of etlkit
 * does (tracelogging.c): decimal integers, 0x-hex for hex out-types and
 * pointers, true/false, lowercase GUIDs, ISO-8601 UTC times, byte data
 * as hex, array elements joined by ',', value maps by their name and
 * bitmaps as names joined by '|' (TraceEvent's rendering).  Struct
 * members are named STRUCT.MEMBER (STRUCT.I.MEMBER inside arrays).
 */
#ifndef ETLKIT_TDH_H
#define ETLKIT_TDH_H

#include <stddef.h>
#include <stdint.h>

#include "etl/etl.h"

/* Called once per field with its name and its value as text (UTF-8, not escaped). */
typedef void (*tdh_field_fn)(void *ctx, const char *name, const char *value, size_t vlen);

struct tdh_db;
struct tdh_event;

struct tdh_db *tdh_new(void);
void tdh_free(struct tdh_db *db);

/* The KernelTraceControl MetaData class GUID (Windows byte order). */
int tdh_is_metadata(const uint8_t *guid);

/*
 * Offers an event: if it is a MetaData EventInfo/EventMapInfo record its
 * schema is stored (damaged ones are counted) and 1 is returned, else 0.
 */
int tdh_collect(struct tdh_db *db, const struct etl_event *ev);

/* Stores a TRACE_EVENT_INFO blob / a GUID + EVENT_MAP_INFO record.  0, or -1 if damaged. */
int tdh_add_event_info(struct tdh_db *db, const uint8_t *blob, size_t len);
int tdh_add_map_info(struct tdh_db *db, const uint8_t *rec, size_t len);

/* Schema for an EVENT_HEADER event (provider, id, version), or NULL. */
const struct tdh_event *tdh_find(const struct tdh_db *db, const uint8_t *guid, unsigned id,
    unsigned version);
/* Schema for a classic event (event class GUID, type, version) from a MOF-sourced blob, or NULL. */
const struct tdh_event *tdh_find_classic(const struct tdh_db *db, const uint8_t *guid,
    unsigned type, unsigned version);

/*
 * Decodes DATA[0..len) with schema E; pointers are PSIZE bytes.  Returns
 * 0 when every field decoded and the data was used up (trailing bytes
 * are allowed: providers append fields in later versions), -1 when the
 * data does not fit the schema (FN may have been called: the caller
 * falls back to hex).
 */
int tdh_decode(const struct tdh_db *db, const struct tdh_event *e, const uint8_t *data,
    size_t len, unsigned psize, tdh_field_fn fn, void *ctx);

/*
 * Several threads may decode with one database once it is sealed: no
 * schema or map is added after (that would be fatal), and decoding then
 * writes only the memos of its tdh_local, one per thread.  A NULL
 * tdh_local is the database's own (one thread; tdh_decode() uses it).
 */
struct tdh_local;
struct tdh_local *tdh_local_new(void);
void tdh_local_free(struct tdh_local *loc);
void tdh_seal(struct tdh_db *db);

/*
 * The whole job for etl2evt: finds EV's schema (embedded, else built in)
 * and decodes its payload.  Returns 0 decoded, -1 no schema or no fit.
 */
int tdh_decode_event(const struct tdh_db *db, struct tdh_local *loc, const struct etl_event *ev,
    tdh_field_fn fn, void *ctx);

/* The name of EV's schema (embedded, else built in), "GC/Start" style; NULL without one. */
const char *tdh_event_label(const struct tdh_db *db, struct tdh_local *loc,
    const struct etl_event *ev);

/* Names from the schemas: provider (NULL if unknown), "Task/Opcode"-style event name. */
const char *tdh_provider_name(const struct tdh_db *db, const uint8_t *guid);
const char *tdh_event_name(const struct tdh_event *e);

/* Counts: schemas and maps stored, damaged records ignored. */
struct tdh_stats {
	uint64_t events, maps, damaged;
};
const struct tdh_stats *tdh_stats(const struct tdh_db *db);

#endif

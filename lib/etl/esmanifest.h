/*
 * esmanifest.h - EventSource manifests carried in the trace.  A .NET
 * EventSource writes its manifest as ManifestData events (id 0xFFFE,
 * opcode 0xFE) in chunks, each after an 8-byte envelope: format (1 =
 * XML), major and minor version, magic 0x5B, u16 chunk count, u16 chunk
 * number.  Pass 1 reassembles the chunks per provider, parses the XML
 * (providers, tasks, opcodes, value and bit maps, templates, events, the
 * string table) and stores one schema per event in the tdh_db, so that
 * pass 2 decodes the provider's events with names and fields like any
 * schema the trace embeds.
 */
#ifndef ETLKIT_ESMANIFEST_H
#define ETLKIT_ESMANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "etl/etl.h"
#include "etl/tdh.h"

struct esm;

struct esm *esm_new(void);
void esm_free(struct esm *m);

/*
 * Offers an event: if it is a ManifestData chunk it is kept (a complete
 * manifest goes into DB) and 1 is returned, else 0.
 */
int esm_collect(struct esm *m, struct tdh_db *db, const struct etl_event *ev);

/*
 * Parses one manifest's XML (TEXT[0..len)) for provider GUID into DB.
 * Returns the number of event schemas stored, or -1 when the text is no
 * manifest.  Every length and count is bounded: hostile text is refused,
 * never trusted.
 */
int esm_parse(struct tdh_db *db, const uint8_t *guid, const char *text, size_t len);

/* Manifests stored, and chunk sequences or manifests that could not be used. */
struct esm_stats {
	uint64_t manifests, damaged;
};
const struct esm_stats *esm_stats(const struct esm *m);

#endif

/*
 * fuzz_tdh - libFuzzer harness for lib/etl/tdh.c: TRACE_EVENT_INFO and
 * EVENT_MAP_INFO blobs from untrusted traces, and payload decoding with
 * them (structs, arrays, counts and lengths from other fields, maps).
 *
 * INPUT:  u8 flags (bit 0: 8-byte pointers), u16 blob length, the
 *         TRACE_EVENT_INFO blob, u8 map count, per map u16 length and a
 *         GUID + EVENT_MAP_INFO record, then the event payload (the
 *         rest).  tdhdump -W DIR writes seeds in this layout from real
 *         traces.
 * CHECKS: no crash/UB/leak/hang; every field has a name and a value
 *         without NUL bytes; a schema that was stored is found again.
 */
#include "etl/tdh.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
field(void *ctx, const char *name, const char *value, size_t vlen)
{
	(void)ctx;
	if (name == NULL || value == NULL || memchr(value, 0, vlen) != NULL || strlen(value) != vlen)
		abort();
}

/* A copy of exactly N bytes, so that ASan sees any read past them. */
static uint8_t *
exact(const uint8_t *p, size_t n)
{
	uint8_t *c = malloc(n ? n : 1);
	if (n)
		memcpy(c, p, n);
	return c;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t at = 0;
	if (size < 3)
		return 0;
	unsigned psize = (data[0] & 1) ? 8 : 4;
	size_t blen = (size_t)(data[1] | data[2] << 8);
	at = 3;
	if (blen > size - at)
		blen = size - at;
	struct tdh_db *db = tdh_new();
	uint8_t *blob = exact(data + at, blen);
	int ok = tdh_add_event_info(db, blob, blen) == 0;
	at += blen;
	unsigned nmaps = at < size ? data[at++] : 0;
	for (unsigned i = 0; i < nmaps && at + 2 <= size; i++) {
		size_t mlen = (size_t)(data[at] | data[at + 1] << 8);
		at += 2;
		if (mlen > size - at)
			mlen = size - at;
		uint8_t *m = exact(data + at, mlen);
		tdh_add_map_info(db, m, mlen);
		free(m);
		at += mlen;
	}
	if (ok && blen >= 112) {
		/* the blob's own key: manifest (provider, id, version) or classic (event GUID, opcode) */
		const struct tdh_event *e = tdh_find(db, blob, (unsigned)(blob[32] | blob[33] << 8), blob[34]);
		if (e == NULL)
			e = tdh_find_classic(db, blob + 16, blob[37], blob[34]);
		if (e == NULL)
			abort();
		uint8_t *payload = exact(data + at, size - at);
		tdh_decode(db, e, payload, size - at, psize, field, NULL);
		(void)tdh_event_name(e);
		(void)tdh_provider_name(db, blob);
		free(payload);
	}
	free(blob);
	tdh_free(db);
	return 0;
}

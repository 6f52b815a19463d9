/*
 * fuzz_esmanifest - libFuzzer harness for lib/etl/esmanifest.c: the
 * EventSource manifests a trace carries (ManifestData chunks, the
 * manifest XML), and payload decoding with the schemas built from them.
 *
 * INPUT:  u8 mode, u8 chunks, u16 payload length P, then the manifest
 *         text, whose last P bytes are instead an event payload.  Mode
 *         bit 0 clear: the text goes to esm_parse() whole; set: it is cut
 *         into (chunks % 8) + 1 ManifestData events with their envelopes
 *         (bit 1 swaps the last two, bit 2 gives the first a bad magic) and
 *         offered to esm_collect() one by one.  Then the payload is decoded
 *         with every schema the manifest gave for event ids 0..63.
 * CHECKS: no crash/UB/leak/hang; every field has a name and a value
 *         without NUL bytes.
 */
#include "etl/esmanifest.h"
#include "etl/tdh.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t guid[16] = { 0xc1, 0x1a, 0xa7, 0xa8, 0x0f, 0x04, 0xa2, 0x54, 0x07, 0xca, 0x00, 0xa8,
	0x9b, 0x5a, 0xb7, 0x61 };

static void
field(void *ctx, const char *name, const char *value, size_t vlen)
{
	(void)ctx;
	if (name == NULL || value == NULL || memchr(value, 0, vlen) != NULL || strlen(value) != vlen)
		abort();
}

/* One ManifestData event: the envelope, then TEXT[0..n), in a buffer of exactly its size. */
static void
offer(struct esm *m, struct tdh_db *db, const uint8_t *text, size_t n, unsigned total, unsigned number,
    int bad_magic)
{
	uint8_t *p = malloc(n + 8);
	p[0] = 1;
	p[1] = 1;
	p[2] = 0;
	p[3] = bad_magic ? 0x5a : 0x5b;
	p[4] = (uint8_t)total;
	p[5] = (uint8_t)(total >> 8);
	p[6] = (uint8_t)number;
	p[7] = (uint8_t)(number >> 8);
	if (n)
		memcpy(p + 8, text, n);
	struct etl_event ev;
	memset(&ev, 0, sizeof ev);
	ev.hkind = ETL_HK_EVENT;
	ev.id = 0xfffe;
	ev.opcode = 0xfe;
	ev.guid = guid;
	ev.payload = p;
	ev.plen = (uint32_t)(n + 8);
	esm_collect(m, db, &ev);
	free(p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	unsigned mode = data[0], chunks = (data[1] % 8u) + 1;
	size_t plen = (size_t)(data[2] | data[3] << 8), n = size - 4;
	if (plen > n)
		plen = n;
	size_t tlen = n - plen;
	uint8_t *text = malloc(tlen ? tlen : 1);
	if (tlen)
		memcpy(text, data + 4, tlen);
	struct tdh_db *db = tdh_new();
	struct esm *m = esm_new();
	if (!(mode & 1))
		esm_parse(db, guid, (const char *)text, tlen);
	else {
		size_t step = tlen / chunks + 1;
		unsigned order[8];
		for (unsigned i = 0; i < chunks; i++)
			order[i] = i;
		if ((mode & 2) && chunks > 1) {
			order[chunks - 1] = chunks - 2;
			order[chunks - 2] = chunks - 1;
		}
		for (unsigned i = 0; i < chunks; i++) {
			size_t at = (size_t)order[i] * step;
			size_t len = at >= tlen ? 0 : (tlen - at < step ? tlen - at : step);
			offer(m, db, text + (at < tlen ? at : 0), len, chunks, order[i], (mode & 4) && i == 0);
		}
	}
	uint8_t *payload = malloc(plen ? plen : 1);
	if (plen)
		memcpy(payload, data + 4 + tlen, plen);
	for (unsigned id = 0; id < 64; id++) {
		const struct tdh_event *e = tdh_find(db, guid, id, 0);
		if (e) {
			tdh_decode(db, e, payload, plen, (mode & 8) ? 8 : 4, field, NULL);
			(void)tdh_event_name(e);
		}
	}
	(void)tdh_provider_name(db, guid);
	(void)esm_stats(m);
	free(payload);
	free(text);
	esm_free(m);
	tdh_free(db);
	return 0;
}

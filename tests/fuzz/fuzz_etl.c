/*
 * fuzz_etl - libFuzzer harness for the ETL buffer walker (lib/etl/etl.c):
 * logfile header, buffer index, compressed buffers, record headers of
 * every kind, and the per-CPU merge into time order.
 *
 * INPUT:  an .etl file (any bytes).
 * CHECKS: no crash/UB/leak/hang; every event's payload lies inside its
 *         record; file order and time order yield the same number of
 *         events (the merge neither drops nor duplicates); damage
 *         counters never shrink; the index's buffers lie inside the file
 *         in order without overlapping, and the bytes counted skipped
 *         are no more than the file has.
 */
#include "etl/etl.h"
#include "fuzz.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_index(const struct etl_reader *r, size_t size)
{
	uint64_t end = 0;

	for (size_t i = 0; i < etl_nbuffers(r); i++) {
		const struct etl_buffer *b = &etl_buffers(r)[i];
		if (b->offset < end || b->size > size || b->offset > size - b->size)
			abort();
		end = b->offset + b->size;
	}
}

static void
check_event(const struct etl_event *ev)
{
	char s[512];
	size_t used;

	if (ev->hkind < 0 || ev->hkind >= ETL_HK_COUNT)
		abort();
	if (ev->payload != NULL && ev->plen > 0) {
		if (ev->raw == NULL || ev->payload < ev->raw ||
		    ev->payload + ev->plen > ev->raw + ev->rawlen)
			abort();
		/* what the decoders do with payload bytes */
		(void)etl_wstr(ev->payload, ev->plen, s, sizeof(s), &used);
		if (used > ev->plen || strlen(s) >= sizeof(s))
			abort();
		(void)etl_astr(ev->payload, ev->plen, s, sizeof(s), &used);
		if (used > ev->plen)
			abort();
	}
	if (ev->ext != NULL && ev->raw != NULL &&
	    (ev->ext < ev->raw || ev->ext + ev->extlen > ev->raw + ev->rawlen))
		abort();
	if (ev->guid != NULL) {
		etl_guid_str(s, ev->guid);
		if (strlen(s) != 36)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);	/* exact size: ASan sees overreads */
	struct etl_reader *r;
	struct etl_event ev;
	unsigned long nfile = 0, ntime = 0, guard;
	uint64_t dmg_buffers;
	char ts[64];

	memcpy(copy, data, size);
	r = etl_open(copy, size, fuzz_on_error, NULL);
	if (r == NULL) {
		free(copy);
		return 0;
	}
	(void)etl_info(r);
	if (etl_nbuffers(r) > 0 && etl_buffers(r) == NULL)
		abort();
	check_index(r, size);
	etl_filetime_str(ts, etl_info(r)->start_time);
	etl_rewind(r, ETL_FILE_ORDER);
	for (guard = 0; etl_next(r, &ev); guard++) {
		if (guard > 10 * size + 1000)
			abort();	/* more events than bytes: a loop */
		check_event(&ev);
		(void)etl_ns(r, ev.ts);
		nfile++;
	}
	dmg_buffers = etl_damage(r)->buffers;
	etl_rewind(r, ETL_TIME_ORDER);
	while (etl_next(r, &ev)) {
		check_event(&ev);
		if (++ntime > nfile)
			abort();
		(void)etl_filetime(r, ev.ts);
		(void)etl_progress(r);
	}
	if (ntime != nfile)
		abort();	/* the time merge lost or invented events */
	if (etl_damage(r)->buffers < dmg_buffers)
		abort();
	if (etl_damage(r)->bytes > size)
		abort();	/* more skipped than the file holds */
	etl_close(r);
	free(copy);
	return 0;
}

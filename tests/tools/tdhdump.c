/*
 * tdhdump - test tool: decode a trace's manifest events with lib/tdh
 * alone (schemas embedded in the trace, WindowsPerf built-ins), without
 * the rest of etl2evt.  Lets tests check lib/tdh on real input directly.
 *
 * USAGE:  tdhdump [-s] FILE.etl
 * OUTPUT: one line per event that has a schema, fields as TraceEvent's
 *         baseline prints them (Name=value; ...), values as lib/tdh writes:
 *   169.833	Microsoft-Windows-Kernel-File	Create	IrpPtr=0xfffffa830393a3e8; FileObject=...;
 *         -B: the built-in schemas alone (the trace's own are not read), to
 *         check lib/etl/knownschemas.c against the schemas a trace embeds.
 *         -s: only the summary line "schemas=N maps=N damaged=N decoded=N failed=N nomatch=N".
 *         -W DIR: also write fuzz_tdh seeds (schema blob, its provider's maps,
 *         one payload) for up to 64 distinct events with a schema into DIR.
 *         -f N: robustness: N rounds of damaged copies of the trace's schema records
 *         (truncated, bytes flipped; seeded, repeatable), each decoding the events;
 *         prints "rounds=N stored=N damaged=N decoded=N failed=N" (must not crash).
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cli.h"
#include "etl/etl.h"
#include "evt/evt.h"
#include "etl/tdh.h"
#include "xorshift.h"

static struct outbuf ob, *out = &ob;

static void
err_cb(void *ctx, uint64_t off, const char *msg)
{
	(void)ctx;
	cli_warn("offset %" PRIu64 ": %s", off, msg);
}

static void
field(void *ctx, const char *name, const char *value, size_t vlen)
{
	(void)ctx;
	ob_puts(out, name);
	ob_putc(out, '=');
	ob_write(out, value, vlen);
	ob_puts(out, "; ");
}

static void
nofield(void *ctx, const char *name, const char *value, size_t vlen)
{
	(void)ctx, (void)name, (void)value, (void)vlen;
}

/* Raw MetaData records, for -W. */
static struct raw {
	int type;
	uint8_t *b;
	size_t n;
} *raws;
static size_t nraws;

static void
keep_raw(const struct etl_event *ev)
{
	raws = xrealloc(raws, (nraws + 1) * sizeof *raws);
	raws[nraws].type = ev->type;
	raws[nraws].b = xmalloc(ev->plen ? ev->plen : 1);
	memcpy(raws[nraws].b, ev->payload, ev->plen);
	raws[nraws].n = ev->plen;
	nraws++;
}

/* One fuzz_tdh seed per distinct (provider, id, version): flags, blob, maps, payload. */
static void
write_seed(const char *dir, const struct etl_event *ev)
{
	static uint8_t seen[64][20];
	static int nseen;
	uint8_t key[20];
	if (ev->hkind != ETL_HK_EVENT || nseen >= 64)
		return;
	memcpy(key, ev->guid, 16);
	key[16] = (uint8_t)ev->id;
	key[17] = (uint8_t)(ev->id >> 8);
	key[18] = (uint8_t)ev->version;
	key[19] = 0;
	for (int i = 0; i < nseen; i++)
		if (memcmp(seen[i], key, 20) == 0)
			return;
	const struct raw *info = NULL;
	for (size_t i = 0; i < nraws && !info; i++)
		if (raws[i].type == 32 && raws[i].n >= 112 && memcmp(raws[i].b, ev->guid, 16) == 0 &&
		    etl_u16(raws[i].b + 32) == ev->id && raws[i].b[34] == ev->version)
			info = &raws[i];
	if (!info)
		return;
	memcpy(seen[nseen++], key, 20);
	char path[4096];
	snprintf(path, sizeof path, "%s/tdh.%d", dir, nseen);
	FILE *f = fopen(path, "wb");
	if (!f)
		return;
	uint8_t h[3] = { (uint8_t)(ev->hdr64 ? 1 : 0), (uint8_t)info->n, (uint8_t)(info->n >> 8) };
	fwrite(h, 1, 3, f);
	fwrite(info->b, 1, info->n, f);
	unsigned nm = 0;
	for (size_t i = 0; i < nraws; i++)
		nm += raws[i].type == 33 && raws[i].n >= 16 && memcmp(raws[i].b, ev->guid, 16) == 0;
	fputc(nm > 255 ? 255 : (int)nm, f);
	nm = 0;
	for (size_t i = 0; i < nraws && nm < 255; i++)
		if (raws[i].type == 33 && raws[i].n >= 16 && memcmp(raws[i].b, ev->guid, 16) == 0) {
			uint8_t l[2] = { (uint8_t)raws[i].n, (uint8_t)(raws[i].n >> 8) };
			fwrite(l, 1, 2, f);
			fwrite(raws[i].b, 1, raws[i].n, f);
			nm++;
		}
	fwrite(ev->payload, 1, ev->plen, f);
	fclose(f);
}

static uint64_t rng = 88172645463325252ull;

static uint64_t
next_rand(void)
{
	return xorshift64(&rng);
}

/* Damaged copies of every schema record, decoding the trace's events with them. */
static int
fuzz_rounds(struct etl_reader *r, long rounds)
{
	struct etl_event ev;
	uint64_t stored = 0, damaged = 0, ok = 0, bad = 0;
	for (long k = 0; k < rounds; k++) {
		struct tdh_db *db = tdh_new();
		etl_rewind(r, ETL_FILE_ORDER);
		while (etl_next(r, &ev)) {
			if (!tdh_is_metadata(ev.guid) || ev.plen == 0)
				continue;
			uint8_t *copy = xmalloc(ev.plen);
			memcpy(copy, ev.payload, ev.plen);
			size_t len = ev.plen;
			switch (next_rand() % 4) {
			case 0:
				len = next_rand() % ev.plen;
				break;
			default:
				for (int f = 0; f < 1 + (int)(next_rand() % 8); f++) {
					size_t at = next_rand() % (len < 200 ? len : 200 + next_rand() % (len - 199));
					copy[at] = (uint8_t)next_rand();
				}
			}
			/* a tight allocation: ASan catches any read past LEN */
			uint8_t *exact = xmalloc(len ? len : 1);
			memcpy(exact, copy, len);
			free(copy);
			if (ev.type == 32)
				tdh_add_event_info(db, exact, len);
			else
				tdh_add_map_info(db, exact, len);
			free(exact);
		}
		etl_rewind(r, ETL_FILE_ORDER);
		int n = 0;
		while (etl_next(r, &ev) && n < 3000) {
			if (ev.hkind != ETL_HK_EVENT)
				continue;
			n++;
			if (tdh_decode_event(db, NULL, &ev, nofield, NULL) == 0)
				ok++;
			else
				bad++;
		}
		stored += tdh_stats(db)->events;
		damaged += tdh_stats(db)->damaged;
		tdh_free(db);
	}
	printf("rounds=%ld stored=%" PRIu64 " damaged=%" PRIu64 " decoded=%" PRIu64 " failed=%" PRIu64 "\n",
	    rounds, stored, damaged, ok, bad);
	etl_close(r);
	return 0;
}

int
main(int argc, char **argv)
{
	int summary = 0, ch;
	long fuzz = 0;
	cli_init("tdhdump");
	const char *seeddir = NULL;
	int builtin_only = 0;
	while ((ch = getopt(argc, argv, "sBf:W:")) != -1)
		if (ch == 's')
			summary = 1;
		else if (ch == 'B')
			builtin_only = 1;
		else if (ch == 'f')
			fuzz = atol(optarg);
		else if (ch == 'W')
			seeddir = optarg;
		else
			cli_usage_error("usage: tdhdump [-s] [-B] FILE.etl");
	if (optind + 1 != argc)
		cli_usage_error("usage: tdhdump [-s] FILE.etl");
	int fd = open(argv[optind], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0)
		cli_fatal("%s: cannot read", argv[optind]);
	uint8_t *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (data == MAP_FAILED)
		cli_fatal("%s: cannot map", argv[optind]);
	struct etl_reader *r = etl_open(data, (size_t)st.st_size, err_cb, NULL);
	if (!r)
		return 2;
	if (fuzz > 0)
		return fuzz_rounds(r, fuzz);
	struct tdh_db *db = tdh_new();
	struct etl_event ev;
	etl_rewind(r, ETL_FILE_ORDER);
	while (!builtin_only && etl_next(r, &ev)) {
		tdh_collect(db, &ev);
		if (seeddir && tdh_is_metadata(ev.guid) && (ev.type == 32 || ev.type == 33) && ev.plen <= 65535)
			keep_raw(&ev);
	}
	ob_open(out, NULL);
	uint64_t ok = 0, bad = 0, none = 0;
	etl_rewind(r, ETL_TIME_ORDER);
	while (etl_next(r, &ev)) {
		const struct tdh_event *e = NULL;
		if (ev.hkind == ETL_HK_EVENT)
			e = tdh_find(db, ev.guid, ev.id, ev.version);
		else if ((ev.hkind == ETL_HK_FULL || ev.hkind == ETL_HK_INSTANCE) && !tdh_is_metadata(ev.guid))
			e = tdh_find_classic(db, ev.guid, ev.type, ev.version);
		if (!e) {
			none += ev.hkind == ETL_HK_EVENT;
			continue;
		}
		if (!summary) {
			char t[64], g[40];
			snprintf(t, sizeof t, "%.3f\t", (double)etl_ns(r, ev.ts) / 1e6);
			ob_puts(out, t);
			const char *pn = tdh_provider_name(db, ev.guid);
			if (!pn) {
				etl_guid_str(g, ev.guid);
				pn = g;
			}
			ob_puts(out, pn);
			ob_putc(out, '\t');
			ob_puts(out, tdh_event_name(e));
			ob_putc(out, '\t');
		}
		if (seeddir)
			write_seed(seeddir, &ev);
		if (tdh_decode(db, e, ev.payload, ev.plen, ev.hdr64 ? 8 : 4, summary ? nofield : field, NULL) == 0)
			ok++;
		else {
			bad++;
			if (!summary)
				ob_puts(out, "#undecoded");
		}
		if (!summary)
			ob_putc(out, '\n');
	}
	const struct tdh_stats *s = tdh_stats(db);
	if (summary) {
		char line[256];
		snprintf(line, sizeof line, "schemas=%" PRIu64 " maps=%" PRIu64 " damaged=%" PRIu64
		    " decoded=%" PRIu64 " failed=%" PRIu64 " nomatch=%" PRIu64 "\n",
		    s->events, s->maps, s->damaged, ok, bad, none);
		ob_puts(out, line);
	}
	ob_close(out);
	tdh_free(db);
	etl_close(r);
	return 0;
}

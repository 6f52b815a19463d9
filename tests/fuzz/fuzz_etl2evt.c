/*
 * fuzz_etl2evt - libFuzzer harness for the event decoders: the whole
 * ETL → evt conversion (lib/etl/convert.c: kernel, CLR, TraceLogging and
 * manifest events, stacks and stack keys, images) and the --census
 * counts, on any bytes.
 *
 * INPUT:  an .etl file (any bytes).  Bit 2 of the last byte: read it the
 *         way etl2evt reads a file (a mapping plus pread(2) on its
 *         descriptor, here a memfd) instead of from memory.
 * CHECKS: no crash/UB/leak/hang, and the output is always valid evt,
 *         whatever the trace holds: a "#evt" header first, every event
 *         line parses (evt_parse) with a kind of [A-Za-z0-9_./-]+ and
 *         attribute keys of [A-Za-z0-9_.:-]+, and no raw control byte
 *         anywhere (untrusted strings are escaped).  The number of event
 *         lines is what etl2evt_convert says it wrote.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "etl/etl.h"
#include "etl/convert.h"
#include "evt/evt.h"
#include "fuzz.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
all_in(const char *s, const char *extra)
{
	if (*s == '\0')
		return 0;
	for (; *s; s++) {
		char c = *s;

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || strchr(extra, c) != NULL))
			return 0;
	}
	return 1;
}

/* Checks TEXT[0..LEN) is a valid evt stream; returns the number of events. */
static uint64_t
check_evt(char *text, size_t len)
{
	static struct evt_event ev;
	static struct evt_header h;
	char *p = text, *end = text + len, *nl;
	uint64_t events = 0;
	unsigned long lineno = 0;
	const char *why;
	int i;

	if (len > 0 && text[len - 1] != '\n')
		abort();	/* the last line is complete */
	while (p < end) {
		size_t n, k;

		nl = memchr(p, '\n', (size_t)(end - p));
		*nl = '\0';
		n = (size_t)(nl - p);
		lineno++;
		for (k = 0; k < n; k++) {
			unsigned char c = (unsigned char)p[k];

			if ((c < 0x20 && c != '\t') || c == 0x7f)
				abort();	/* unescaped control byte */
		}
		switch (evt_classify(p, n)) {
		case EVT_HEADER:
			if (lineno != 1 || evt_parse_header(p, n, &h, &why) != 0)
				abort();
			break;
		case EVT_EVENT:
			if (lineno == 1 || evt_parse(p, n, &ev, &why) != 0)
				abort();
			if (!all_in(ev.kind, "_./-"))
				abort();
			for (i = 0; i < ev.nattr; i++)
				if (!all_in(ev.attr[i].key, "_.:-"))
					abort();
			events++;
			break;
		case EVT_META:
			if (lineno == 1)
				abort();
			break;
		case EVT_BLANK:
			abort();	/* producers write no empty lines */
		}
		p = nl + 1;
	}
	if (lineno == 0)
		abort();	/* not even a header */
	return events;
}

/* An outbuf writing into *TEXT (open_memstream), as etl2evt writes a file. */
static void
memory_outbuf(struct outbuf *ob, char **text, size_t *len)
{
	memset(ob, 0, sizeof(*ob));
	ob->fp = open_memstream(text, len);
	ob->name = "<memory>";
	ob->cap = 1 << 16;
	ob->buf = malloc(ob->cap);
}

/* Frees the input's copy and, when it was read through a mapping, the
 * mapping and its memfd. */
static void
release_input(uint8_t *copy, const uint8_t *map, size_t size, int fd)
{
	if (map)
		munmap((void *)map, size);
	if (fd >= 0)
		close(fd);
	free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	struct etl_reader *r;
	struct etl2evt_opts o;
	struct etl2evt_result res;
	struct outbuf ob;
	char *text = NULL;
	size_t tlen = 0;

	const uint8_t *map = NULL;
	int fd = -1;

	memcpy(copy, data, size);
	if (size > 0 && (data[size - 1] & 4)) {
		fd = fuzz_memfd("fuzz.etl", data, size);
		map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED)
			abort();
		r = etl_open_mapped(map, size, fuzz_on_error, NULL, fd);
	} else
		r = etl_open(copy, size, fuzz_on_error, NULL);
	if (r == NULL) {
		release_input(copy, map, size, fd);
		return 0;
	}
	memset(&o, 0, sizeof(o));
	o.source = "fuzz.etl";
	o.addrs = size > 0 && (data[size - 1] & 1);
	o.full_paths = size > 0 && (data[size - 1] & 2);
	memory_outbuf(&ob, &text, &tlen);
	memset(&res, 0, sizeof(res));
	(void)etl2evt_convert(&r, 1, &o, &ob, &res);
	ob_close(&ob);		/* fclose()s the memstream */
	if (check_evt(text, tlen) != res.events)
		abort();
	free(text);

	text = NULL;
	memory_outbuf(&ob, &text, &tlen);
	etl_census(r, &ob);
	ob_close(&ob);
	free(text);

	etl_close(r);
	release_input(copy, map, size, fd);
	return 0;
}

/*
 * convert_names.c - names for what a trace only numbers: known providers
 * by GUID (long and census forms) and kernel event groups; and the
 * --census counts of events per kind (the layout of
 * ../shared/corpus/census), which are written with those names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl/convert_int.h"

/* ---------- GUIDs ---------- */

static const struct {
	const char *guid, *name, *census;
} providers[] = {
	{ "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4", "Microsoft-Windows-DotNETRuntime", "DotNETRuntime" },
	{ "a669021c-c450-4609-a035-5af59af4df18", "Microsoft-Windows-DotNETRuntimeRundown", "DotNETRuntimeRundown" },
	{ "763fd754-7086-4dfe-95eb-c01a46faf4ca", "Microsoft-Windows-DotNETRuntimePrivate", "DotNETRuntimePrivate" },
	{ "47c3ba0c-77f1-4eb0-8d4d-aef447f16a85", "Microsoft-Windows-DotNETRuntimeStress", "DotNETRuntimeStress" },
	{ "edd08927-9cc4-4e65-b970-c2560fb5c289", "Microsoft-Windows-Kernel-File", "Kernel-File" },
	{ "22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716", "Microsoft-Windows-Kernel-Process", "Kernel-Process" },
	{ "b675ec37-bdb6-4648-bc92-f3fdc74d3ca2", "Microsoft-Windows-Kernel-EventTracing", "Kernel-EventTracing" },
	{ "a8a71ac1-040f-54a2-07ca-00a89b5ab761", "PerfViewLogger", "PerfViewLogger" },
	{ "b3e675d7-2554-4f18-830b-2762732560de", "KernelTraceControl", "KernelTraceControl(ImageId/DbgId)" },
	{ "bbccf6c1-6cd1-48c4-80ff-839482e37671", "KernelTraceControl-MetaData", "KernelTraceControl:MetaData" },
	{ "9b79ee91-b5fd-41c0-a243-4248e266e9d0", "SystemConfigEx", "Kernel:SysConfig(Build/Paths/Volume)" },
	{ "ed54dff8-c409-4cf6-bf83-05e1e61a09c4", "KernelTraceControl-WinSat", "KernelTraceControl:WinSat" },
	{ "dd5ef90a-6398-47a4-ad34-4dcecdef795f", "Microsoft-Windows-HttpService", NULL },
	{ "a0c1853b-5c40-4b15-8766-3cf1c58f985a", "Microsoft-Windows-PowerShell", NULL },
	{ "9e814aad-3204-11d2-9a82-006008a86939", "NT Kernel Logger", NULL },
};
#define NPROVIDERS (sizeof providers / sizeof providers[0])
static uint8_t provider_guid[NPROVIDERS][16];
static int providers_ready;

const char *
conv_provider_name(const uint8_t *guid, int census_form)
{
	if (!providers_ready) {
		for (size_t i = 0; i < NPROVIDERS; i++)
			etl_guid_parse(providers[i].guid, provider_guid[i]);
		providers_ready = 1;
	}
	if (!guid)
		return NULL;
	for (size_t i = 0; i < NPROVIDERS; i++)
		if (memcmp(guid, provider_guid[i], 16) == 0)
			return census_form ? providers[i].census : providers[i].name;
	return NULL;
}

/* ---------- kernel names ---------- */

static const char *const group_names[] = {
	"Header", "DiskIo", "PageFault", "Process", "FileIo", "Thread", "TcpIp", "Job", "UdpIp",
	"Registry", "DbgPrint", "Config", "Spare1", "WNF", "Pool", "PerfInfo", "Heap", "Object",
	"Power", "ModBound", "Image", "Dpc", "CC", "CritSec", "StackWalk", "UMS", "ALPC", "SplitIo",
	"ThreadPool", "Hypervisor", "HypervisorX",
};

const char *
conv_group_name(unsigned g)
{
	return g < sizeof group_names / sizeof group_names[0] ? group_names[g] : "Group";
}

/* ---------- census ---------- */

struct ckey {
	char text[160];
	uint64_t count;
};

static int
cmp_ckey(const void *a, const void *b)
{
	const struct ckey *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->text, y->text);
}

void
etl_census(struct etl_reader *r, struct outbuf *ob)
{
	static const char *const hk[] = { "SYSTEM", "COMPACT", "PERFINFO", "FULL", "INSTANCE",
	    "EVENT_HEADER", "WPP", "OTHER" };
	struct ckey *k = NULL;
	size_t nk = 0, cap = 0;
	struct hmap idx;
	struct etl_event ev;
	char text[160], gs[40];
	uint64_t total = 0;

	hmap_init(&idx);
	etl_rewind(r, ETL_FILE_ORDER);
	while (etl_next(r, &ev)) {
		const char *bits = ev.hkind == ETL_HK_WPP || ev.hkind == ETL_HK_OTHER ? "" :
		    ev.hdr64 ? "64" : "32";
		char hname[32];
		snprintf(hname, sizeof hname, "%s%s", hk[ev.hkind], bits);
		switch (ev.hkind) {
		case ETL_HK_SYSTEM: case ETL_HK_COMPACT: case ETL_HK_PERFINFO:
			snprintf(text, sizeof text, "K %-10s %s g=0x%02x t=0x%02x(%u)", hname,
			    conv_group_name(ev.group), ev.group, ev.type, ev.type);
			break;
		case ETL_HK_FULL: case ETL_HK_INSTANCE: {
			const char *nm = conv_provider_name(ev.guid, 1);
			etl_guid_str(gs, ev.guid);
			snprintf(text, sizeof text, "F %s %s type=%u", hname, nm ? nm : gs, ev.type);
			break;
		}
		case ETL_HK_EVENT: {
			const char *nm = conv_provider_name(ev.guid, 1);
			etl_guid_str(gs, ev.guid);
			snprintf(text, sizeof text, "E %s %s", hname, nm ? nm : gs);
			break;
		}
		default:
			snprintf(text, sizeof text, "W %s id=%u", hname, ev.message_id);
		}
		/* index by a hash of the text */
		uint64_t h = 1469598103934665603ull;
		for (const char *s = text; *s; s++)
			h = (h ^ (uint8_t)*s) * 1099511628211ull;
		uint32_t *i = hmap_get(&idx, h, 0);
		if (!i) {
			GROW(k, nk, cap);
			snprintf(k[nk].text, sizeof k[nk].text, "%s", text);
			k[nk].count = 0;
			hmap_put(&idx, h, 0, (uint32_t)nk);
			i = hmap_get(&idx, h, 0);
			nk++;
		}
		k[*i].count++;
		total++;
	}
	if (nk)
		qsort(k, nk, sizeof *k, cmp_ckey);
	ob_printf(ob, "events parsed: %llu\n", (unsigned long long)total);
	for (size_t i = 0; i < nk; i++)
		ob_printf(ob, "%9llu  %s\n", (unsigned long long)k[i].count, k[i].text);
	free(k);
	hmap_free(&idx);
}


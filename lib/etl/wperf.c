/*
 * wperf.c - WindowsPerf ReadGPC layouts (see wperf.h): the provider GUIDs
 * and the built-in schemas lib/etl/tdh.c decodes with.
 */
#include <strings.h>

#include "etl/tdhbuild.h"
#include "etl/wperf.h"

/* {6AFCCF81-3A0C-411E-A4AA-C4CF02EB840D}, {9b15b4b5-6979-4ba7-9b26-00c630a4d7b3} in Windows order */
const uint8_t wperf_app_guid[16] = {
	0x81, 0xcf, 0xfc, 0x6a, 0x0c, 0x3a, 0x1e, 0x41, 0xa4, 0xaa, 0xc4, 0xcf, 0x02, 0xeb, 0x84, 0x0d
};
const uint8_t wperf_driver_guid[16] = {
	0xb5, 0xb4, 0x15, 0x9b, 0x79, 0x69, 0xa7, 0x4b, 0x9b, 0x26, 0x00, 0xc6, 0x30, 0xa4, 0xd7, 0xb3
};

/* TDH in-types/out-types: UInt64 → xs:unsignedLong, UInt32 → xs:unsignedInt, UnicodeString → xs:string */
enum { IN_USTR = 1, IN_U32 = 8, IN_U64 = 10, OUT_STRING = 1, OUT_UINT = 8, OUT_ULONG = 10 };

static const struct tdh_prop_def app_props[] = {
	{ "Core", IN_U64, OUT_ULONG, 0, 1, 0, NULL },
	{ "Event", IN_USTR, OUT_STRING, 0, 1, 0, NULL },
	{ "EventIdx", IN_U32, OUT_UINT, 0, 1, 0, NULL },
	{ "EventNote", IN_USTR, OUT_STRING, 0, 1, 0, NULL },
	{ "Value", IN_U64, OUT_ULONG, 0, 1, 0, NULL },
};
static const struct tdh_prop_def driver_props[] = {
	{ "Core", IN_U64, OUT_ULONG, 0, 1, 0, NULL },
	{ "Event", IN_U32, OUT_UINT, 0, 1, 0, NULL },
	{ "GPCIdx", IN_U32, OUT_UINT, 0, 1, 0, NULL },
	{ "Value", IN_U64, OUT_ULONG, 0, 1, 0, NULL },
};

/* Descriptors as mc.exe compiles the manifests (channel keyword bit 63 ORed in). */
static const struct tdh_event_def defs[] = {
	{ wperf_app_guid, 1, 0, 0x10, 0, 0, 1, 0x8000000000000005ull, "WindowsPerf App", "Counting",
	    NULL, "ReadGPC", app_props, 5, 5 },
	{ wperf_driver_guid, 1, 0, 8, 4, 0, 0, 0x8000000000000000ull, "WindowsPerf Driver", NULL,
	    NULL, "ReadGPC", driver_props, 4, 4 },
};

static uint8_t blobs[2][1024];
static size_t blob_len[2];

int
wperf_provider_str(const char *guid)
{
	if (guid && strcasecmp(guid, WPERF_APP_GUID_STR) == 0)
		return WPERF_APP;
	if (guid && strcasecmp(guid, WPERF_DRIVER_GUID_STR) == 0)
		return WPERF_DRIVER;
	return WPERF_NONE;
}

const uint8_t *
wperf_schema_blob(int i, size_t *len)
{
	if (i < 0 || i > 1)
		return NULL;
	if (!blob_len[i])
		blob_len[i] = tdh_build_event_info(&defs[i], blobs[i], sizeof blobs[i]);
	*len = blob_len[i];
	return blobs[i];
}

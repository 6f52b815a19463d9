/*
 * wperf.h - Arm WindowsPerf's two ETW providers ("WindowsPerf App"
 * {6AFCCF81-3A0C-411E-A4AA-C4CF02EB840D}, "WindowsPerf Driver"
 * {9b15b4b5-6979-4ba7-9b26-00c630a4d7b3}), event ReadGPC (id 1, version
 * 0), as their manifests define them (../shared/docs/windowsperf-etw.md):
 *   App:    Core u64, Event UTF-16Z, EventIdx u32, EventNote UTF-16Z, Value u64
 *   Driver: Core u64, Event u32, GPCIdx u32, Value u64 (a running total)
 * The layouts are built-in TRACE_EVENT_INFO schemas (lib/etl/tdh.c uses them
 * when a trace embeds none), so both paths decode the same way.
 */
#ifndef ETLKIT_WPERF_H
#define ETLKIT_WPERF_H

#include <stddef.h>
#include <stdint.h>

enum { WPERF_NONE = -1, WPERF_APP = 0, WPERF_DRIVER = 1 };

extern const uint8_t wperf_app_guid[16], wperf_driver_guid[16];
#define WPERF_APP_GUID_STR "6afccf81-3a0c-411e-a4aa-c4cf02eb840d"
#define WPERF_DRIVER_GUID_STR "9b15b4b5-6979-4ba7-9b26-00c630a4d7b3"
#define WPERF_READGPC_ID 1
#define WPERF_FIXED_CYCLE 0xffffffffu	/* event number of the fixed cycle counter */

/* WPERF_APP, WPERF_DRIVER or WPERF_NONE for a provider GUID as text. */
int wperf_provider_str(const char *guid);

/* Built-in schema I (0 app, 1 driver) as a TRACE_EVENT_INFO blob; NULL past the end. */
const uint8_t *wperf_schema_blob(int i, size_t *len);

#endif

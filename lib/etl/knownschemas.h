/*
 * knownschemas.h - built-in schemas for the manifest providers whose
 * manifests traces rarely carry: the CLR runtime and its rundown
 * (Microsoft-Windows-DotNETRuntime, -DotNETRuntimeRundown) and the kernel
 * providers Microsoft-Windows-Kernel-Process, -Kernel-File, -Kernel-Disk
 * and -Kernel-Network.  lib/etl/tdh.c loads them as built-in schemas: a
 * schema the trace embeds for the same (provider, id, version) wins.
 * Field names are TraceEvent's (ClrTraceEventParser and its kernel
 * parsers), so the fields read as PerfView shows them.
 */
#ifndef ETLKIT_KNOWNSCHEMAS_H
#define ETLKIT_KNOWNSCHEMAS_H

#include <stddef.h>
#include <stdint.h>

#include "etl/etl.h"

/*
 * Calls ADD_EVENT with every built-in TRACE_EVENT_INFO blob and ADD_MAP
 * with every value map (a provider GUID followed by an EVENT_MAP_INFO),
 * both in the layouts lib/etl/tdh.c reads.
 */
void ks_load(void *db, int (*add_event)(void *db, const uint8_t *blob, size_t len),
    int (*add_map)(void *db, const uint8_t *rec, size_t len));

/*
 * The process an event is about, when that is not the process that
 * logged it: Kernel-Process's process, thread and image events name it
 * in their payload (a parent logs its child's ProcessStart).  Returns 1
 * and sets *PID, else 0.
 */
int ks_subject_pid(const struct etl_event *ev, unsigned psize, uint32_t *pid);

#endif

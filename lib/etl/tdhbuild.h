/*
 * tdhbuild.h - writes TRACE_EVENT_INFO blobs from a description: the
 * layout lib/etl/tdh.c decodes.  The built-in schemas (lib/etl/wperf.c)
 * are written this way so that they go through the same decoder as the
 * schemas embedded in traces; synthetic traces (tests/tools) embed them.
 */
#ifndef ETLKIT_TDHBUILD_H
#define ETLKIT_TDHBUILD_H

#include <stddef.h>
#include <stdint.h>

struct tdh_prop_def {
	const char *name;
	uint16_t in, out;	/* TDH in-type/out-type; for PF_STRUCT: first member, member count */
	uint32_t flags;		/* PROPERTY_FLAGS: 1 struct, 2 param length, 4 param count, 0x10/0x20 fixed */
	uint16_t count, length;	/* or property indexes with flags 4 / 2 */
	const char *map;	/* map name or NULL */
};
struct tdh_event_def {
	const uint8_t *guid;	/* provider */
	uint16_t id;
	uint8_t version, channel, level, opcode;
	uint16_t task;
	uint64_t keyword;
	const char *provider, *task_name, *opcode_name, *event_name;
	const struct tdh_prop_def *props;
	unsigned nprops, ntop;
};

/*
 * D as a TRACE_EVENT_INFO blob (strings ASCII).  Returns the blob's size
 * and writes it to OUT only if it fits in CAP.
 */
size_t tdh_build_event_info(const struct tdh_event_def *d, uint8_t *out, size_t cap);

/*
 * A value map (or a bitmap) NAME of provider GUID as the record tdh_add_map_info()
 * reads: the GUID, then an EVENT_MAP_INFO with N entries VALUES[i] -> NAMES[i]
 * (strings ASCII).  Returns its size and writes it only if it fits in CAP.
 */
size_t tdh_build_map_info(const uint8_t *guid, const char *name, int bitmap, const uint32_t *values,
    const char *const *names, size_t n, uint8_t *out, size_t cap);

#endif

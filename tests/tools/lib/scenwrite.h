/*
 * scenwrite.h - an etlgen scenario's model written as an .etl, and the evt
 * lines etl2evt must decode from it.
 */
#ifndef ETLKIT_SCENWRITE_H
#define ETLKIT_SCENWRITE_H

#include <stdint.h>

/*
 * Adds the lifecycle events, sorts the model's events and writes them to
 * PATH; with EXPECT (or NULL) also the expected evt.  Returns the bytes
 * written.  Exits 2 on I/O errors.
 */
uint64_t scenwrite_trace(const char *path, const char *expect);

#endif

/*
 * tracelogging.h - TraceLogging (self-describing) event payloads: the field
 * names and types come from the event's EVENT_SCHEMA_TL extended item.
 */
#ifndef ETLKIT_TRACELOGGING_H
#define ETLKIT_TRACELOGGING_H

#include <stddef.h>
#include <stdint.h>

/* Called once per field with its name and its value as text (UTF-8, not escaped). */
typedef void (*tl_field_fn)(void *ctx, const char *name, const char *value, size_t vlen);

/*
 * Decodes DATA[0..dlen) with the schema SCHEMA[0..slen) (the extended
 * item's bytes).  EVNAME gets the event name.  Returns 0, or -1 if the
 * schema or the data is malformed or uses a type this decoder does not
 * know (the caller then falls back to hex; FN may have been called).
 */
int tl_decode(const uint8_t *schema, size_t slen, const uint8_t *data, size_t dlen,
    unsigned pointer_size, char *evname, size_t evcap, tl_field_fn fn, void *ctx);

#endif

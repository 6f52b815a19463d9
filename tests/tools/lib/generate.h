/*
 * generate.h - the generated events of an etlgen scenario and the
 * process/thread/image lifecycle events, added to the model (scenario.h).
 */
#ifndef ETLKIT_GENERATE_H
#define ETLKIT_GENERATE_H

#include <stdint.h>

/* The generators (generate:), after scen_parse_events. */
void generate_events(void);
/* Process, thread and image start/end events and their rundowns; END is the rundown's time. */
void generate_lifecycle(int64_t end);

#endif

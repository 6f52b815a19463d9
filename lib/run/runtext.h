/*
 * runtext.h - the strings etlkit-run builds for its messages, records
 * and file names: printf into a new string, and names or paths from the
 * file system made safe for one line of a message or a report.
 */
#ifndef ETLKIT_RUNTEXT_H
#define ETLKIT_RUNTEXT_H

/* printf into a malloc'ed string; exits 2 when out of memory. */
char *runtext_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * S escaped as evt values are (docs/evt-format.md §4): one line, no raw
 * control byte, so a tab or newline in a file name cannot make rows.
 * malloc'ed.
 */
char *runtext_escaped(const char *s);

#endif

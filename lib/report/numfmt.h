/*
 * numfmt.h - numbers as the reports print them for people: thousands
 * separators, shortest decimals.  (The evt columns have their own exact
 * formatters in evt/evt.h; these are for tables and tooltips.)
 */
#ifndef ETLKIT_NUMFMT_H
#define ETLKIT_NUMFMT_H

/* "1234567.5" -> "1,234,567.5"; V printed with DEC fraction digits (trailing zeros trimmed). */
int fmt_thousands(char *out, double v, int dec);
/* Shortest decimal for V with up to 6 fraction digits ("12", "0.25"). */
int fmt_num(char *out, double v);

#endif

/*
 * numfmt.h - values as the reports print them in their tables: numbers
 * for people (thousands separators, shortest decimals) and text for a
 * TSV cell.  (The evt columns have their own exact formatters in
 * evt/evt.h; these are for tables and tooltips.)
 */
#ifndef ETLKIT_NUMFMT_H
#define ETLKIT_NUMFMT_H

/* "1234567.5" -> "1,234,567.5"; V printed with DEC fraction digits (trailing zeros trimmed). */
int fmt_thousands(char *out, double v, int dec);
/* Shortest decimal for V with up to 6 fraction digits ("12", "0.25"). */
int fmt_num(char *out, double v);

struct outbuf;

/*
 * S as one TSV cell: names come from traces, so a tab, newline or
 * carriage return in them becomes a space rather than a new cell or row.
 */
void fmt_tsv_text(struct outbuf *ob, const char *s);

#endif

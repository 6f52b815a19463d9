/*
 * escape.h - writing untrusted text into XML (SVG), JSON and text for
 * people.
 *
 * Frame names come from traces: they may hold "<script>", quotes, "&",
 * control characters and invalid UTF-8.  Everything written into markup
 * goes through these functions, which always produce well-formed,
 * valid-UTF-8 output that displays the original bytes as text.  Also the
 * small helpers of escaped text: UTF-8 lengths and hex digits.
 */
#ifndef ETLKIT_ESCAPE_H
#define ETLKIT_ESCAPE_H

#include <stddef.h>
#include "base/outbuf.h"

/*
 * Writes S[0..N) as XML character data or attribute value: & < > " '
 * become entities; C0 controls and DEL (not allowed in XML 1.0) become
 * their Unicode "control picture" (U+2400 + c, U+2421); each byte of an
 * invalid UTF-8 sequence becomes U+FFFD.
 */
void xml_escape(struct outbuf *ob, const char *s, size_t n);
void xml_escape_str(struct outbuf *ob, const char *s);

/*
 * Writes S[0..N) as the inside of a JSON string: " \ and controls are
 * escaped (\n, \t, \u00XX), invalid UTF-8 bytes become U+FFFD, and "<",
 * ">", "&" become \u003c etc. so the JSON is also safe inside HTML.
 */
void json_escape(struct outbuf *ob, const char *s, size_t n);

/*
 * Writes S[0..N) into text meant for people (aligned tables, trees):
 * tab, newline and CR become \t \n \r, other C0 controls, DEL and each
 * byte of an invalid UTF-8 sequence \xHH, C1 controls, bidi controls
 * (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069) and U+2028-U+2029
 * \uHHHH, so one name stays on its line and cannot reorder the row or
 * drive the terminal.  Everything else (a backslash too) is written
 * as it is.  TSV and folded output keep the evt escaping instead.
 */
void text_escape(struct outbuf *ob, const char *s, size_t n);
void text_escape_str(struct outbuf *ob, const char *s);
/* The width in characters of what text_escape writes for S[0..N). */
size_t text_width(const char *s, size_t n);

/* Number of characters (code points; invalid bytes count one each). */
size_t utf8_chars(const char *s, size_t n);
/* Byte length of the first MAXCH characters of S[0..N). */
size_t utf8_prefix(const char *s, size_t n, size_t maxch);

/* The value of the hex digit C (either case), or -1: %XX escapes, GUIDs. */
static inline int
hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif

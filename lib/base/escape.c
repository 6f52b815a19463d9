/*
 * escape.c - XML/JSON/plain-text escaping of untrusted text, UTF-8 helpers.
 */
#include "base/escape.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at S (N bytes left), or 0 if invalid. */
static size_t
utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len, i;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	/* U+FFFE/U+FFFF are not XML characters */
	if (cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

static const char replacement[] = "\xef\xbf\xbd";	/* U+FFFD */

/*
 * The printable ASCII bytes XML takes as they are: 1.  A table, so the
 * common frame name (all of it plain) is one scan and one write.
 */
static const unsigned char xml_plain[256] = {
	['\x20'] = 1, ['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['('] = 1, [')'] = 1,
	['*'] = 1, ['+'] = 1, [','] = 1, ['-'] = 1, ['.'] = 1, ['/'] = 1,
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1,
	['7'] = 1, ['8'] = 1, ['9'] = 1, [':'] = 1, [';'] = 1, ['='] = 1, ['?'] = 1,
	['@'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
	['G'] = 1, ['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1,
	['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1,
	['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['['] = 1,
	['\\'] = 1, [']'] = 1, ['^'] = 1, ['_'] = 1, ['`'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1,
	['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1,
	['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1,
	['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1, ['{'] = 1, ['|'] = 1,
	['}'] = 1, ['~'] = 1,
};

void
xml_escape(struct outbuf *ob, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;

	while (i < n) {
		unsigned c;
		const char *rep = NULL;
		char pic[4];
		size_t len;

		while (i < n && xml_plain[s[i]])
			i++;
		if (i == n)
			break;
		c = s[i];
		if (c >= 0x80 && (len = utf8_seq(s + i, n - i)) > 0) {
			i += len;
			continue;
		}
		/* flush the clean run before this byte */
		if (i > run)
			ob_write(ob, s + run, i - run);
		switch (c) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default:
			if (c < 0x20 || c == 0x7f) {
				unsigned cp = c == 0x7f ? 0x2421 : 0x2400 + c;

				pic[0] = (char)(0xe0 | cp >> 12);
				pic[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
				pic[2] = (char)(0x80 | (cp & 0x3f));
				pic[3] = '\0';
				rep = pic;
			} else
				rep = replacement;
		}
		ob_puts(ob, rep);
		i++;
		run = i;
	}
	if (n > run)
		ob_write(ob, s + run, n - run);
}

void
xml_escape_str(struct outbuf *ob, const char *s)
{
	xml_escape(ob, s, strlen(s));
}

/* The code point of the valid UTF-8 sequence S[0..LEN) (utf8_seq said so). */
static unsigned
utf8_cp(const unsigned char *s, size_t len)
{
	static const unsigned char lead[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	unsigned cp = s[0] & lead[len];
	size_t i;

	for (i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/*
 * Characters a terminal or text viewer does not show as themselves:
 * C1 controls, bidi controls that reorder the rest of the line
 * (Trojan Source), and the Unicode line and paragraph separators.
 */
static int
text_invisible(unsigned cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c ||
	    cp == 0x200e || cp == 0x200f || cp == 0x2028 || cp == 0x2029 ||
	    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/*
 * text_escape and text_width in one: writes S[0..N) escaped to OB
 * (when OB is not NULL) and returns how many characters that is.
 */
static size_t
text_escape_to(struct outbuf *ob, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0, len, width = 0;
	char esc[12];
	int el;

	while (i < n) {
		unsigned c = s[i], cp;

		len = 1;
		if (c >= 0x20 && c != 0x7f && c < 0x80) {
			i++;
			width++;
			continue;
		}
		if (c >= 0x80 && (len = utf8_seq(s + i, n - i)) > 0 &&
		    !text_invisible(cp = utf8_cp(s + i, len))) {
			i += len;
			width++;
			continue;
		}
		if (c == '\t' || c == '\n' || c == '\r')
			el = snprintf(esc, sizeof(esc), "\\%c", c == '\t' ? 't' : c == '\n' ? 'n' : 'r');
		else if (len > 1)
			el = snprintf(esc, sizeof(esc), "\\u%04x", cp);
		else	/* C0, DEL, a byte of invalid UTF-8 */
			el = snprintf(esc, sizeof(esc), "\\x%02x", c);
		if (ob != NULL) {
			if (i > run)
				ob_write(ob, s + run, i - run);
			ob_write(ob, esc, (size_t)el);
		}
		width += (size_t)el;
		i += len > 1 ? len : 1;
		run = i;
	}
	if (ob != NULL && n > run)
		ob_write(ob, s + run, n - run);
	return width;
}

void
text_escape(struct outbuf *ob, const char *s, size_t n)
{
	text_escape_to(ob, s, n);
}

void
text_escape_str(struct outbuf *ob, const char *s)
{
	text_escape_to(ob, s, strlen(s));
}

size_t
text_width(const char *s, size_t n)
{
	return text_escape_to(NULL, s, n);
}

void
json_escape(struct outbuf *ob, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0, len;

	while (i < n) {
		unsigned c = s[i];
		char tmp[8];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' &&
		    c != '>' && c != '&') {
			i++;
			continue;
		}
		if (c >= 0x80 && (len = utf8_seq(s + i, n - i)) > 0) {
			i += len;
			continue;
		}
		if (i > run)
			ob_write(ob, s + run, i - run);
		if (c == '"')
			ob_puts(ob, "\\\"");
		else if (c == '\\')
			ob_puts(ob, "\\\\");
		else if (c == '\n')
			ob_puts(ob, "\\n");
		else if (c == '\t')
			ob_puts(ob, "\\t");
		else if (c < 0x80) {
			snprintf(tmp, sizeof(tmp), "\\u%04x", c);
			ob_puts(ob, tmp);
		} else
			ob_puts(ob, "\\ufffd");
		i++;
		run = i;
	}
	if (n > run)
		ob_write(ob, s + run, n - run);
}

/*
 * Walks at most MAXCH characters of S[0..N) (a byte of invalid UTF-8
 * counts as one); returns the bytes walked and sets *CHARS to the
 * characters.  utf8_chars and utf8_prefix must count alike.
 */
static size_t
utf8_walk(const char *s, size_t n, size_t maxch, size_t *chars)
{
	size_t i = 0, k = 0, len;

	while (i < n && k < maxch) {
		if ((unsigned char)s[i] < 0x80)
			len = 1;
		else if ((len = utf8_seq((const unsigned char *)s + i, n - i)) == 0)
			len = 1;
		i += len;
		k++;
	}
	*chars = k;
	return i;
}

size_t
utf8_chars(const char *s, size_t n)
{
	size_t k;

	utf8_walk(s, n, SIZE_MAX, &k);
	return k;
}

size_t
utf8_prefix(const char *s, size_t n, size_t maxch)
{
	size_t k;

	return utf8_walk(s, n, maxch, &k);
}

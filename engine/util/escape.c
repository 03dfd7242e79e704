/* SPDX-License-Identifier: MIT */
/*
 * Escaping untrusted text for display: the one function every front end uses
 * before a member name, machine name, attribute or trace string reaches a
 * terminal or a human-readable report.  Input is any bytes; output is valid,
 * printable UTF-8 plus its display width in columns.  Widths come from a
 * small built-in table (East Asian Wide/Fullwidth ranges, combining marks,
 * zero-width joiners), never from the C library's locale, so the TUI, the
 * batch commands and the golden tests agree on every machine.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct range {
	uint32_t lo, hi;
};

/* East Asian Wide (W) and Fullwidth (F), Unicode 15, merged into ranges;
 * emoji presentation blocks included (they are W in EastAsianWidth.txt). */
static const struct range wide[] = {
	{0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},
	{0x23F0, 0x23F0},   {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},
	{0x2648, 0x2653},   {0x267F, 0x267F},   {0x2693, 0x2693},   {0x26A1, 0x26A1},
	{0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},   {0x26CE, 0x26CE},
	{0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
	{0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},
	{0x2728, 0x2728},   {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},
	{0x2757, 0x2757},   {0x2795, 0x2797},   {0x27B0, 0x27B0},   {0x27BF, 0x27BF},
	{0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},   {0x2E80, 0x2E99},
	{0x2E9B, 0x2EF3},   {0x2F00, 0x2FD5},   {0x2FF0, 0x2FFB},   {0x3000, 0x3029},
	{0x302E, 0x303E},   {0x3041, 0x3096},   {0x309B, 0x30FF},   {0x3105, 0x312F},
	{0x3131, 0x318E},   {0x3190, 0x31E3},   {0x31F0, 0x321E},   {0x3220, 0x3247},
	{0x3250, 0x4DBF},   {0x4E00, 0xA48C},   {0xA490, 0xA4C6},   {0xA960, 0xA97C},
	{0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},   {0xFE30, 0xFE52},
	{0xFE54, 0xFE66},   {0xFE68, 0xFE6B},   {0xFF01, 0xFF60},   {0xFFE0, 0xFFE6},
	{0x16FE0, 0x16FE4}, {0x16FF0, 0x16FF1}, {0x17000, 0x187F7}, {0x18800, 0x18CD5},
	{0x18D00, 0x18D08}, {0x1AFF0, 0x1AFFE}, {0x1B000, 0x1B122}, {0x1B132, 0x1B132},
	{0x1B150, 0x1B152}, {0x1B155, 0x1B155}, {0x1B164, 0x1B167}, {0x1B170, 0x1B2FB},
	{0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A},
	{0x1F200, 0x1F202}, {0x1F210, 0x1F23B}, {0x1F240, 0x1F248}, {0x1F250, 0x1F251},
	{0x1F260, 0x1F265}, {0x1F300, 0x1F320}, {0x1F32D, 0x1F335}, {0x1F337, 0x1F37C},
	{0x1F37E, 0x1F393}, {0x1F3A0, 0x1F3CA}, {0x1F3CF, 0x1F3D3}, {0x1F3E0, 0x1F3F0},
	{0x1F3F4, 0x1F3F4}, {0x1F3F8, 0x1F43E}, {0x1F440, 0x1F440}, {0x1F442, 0x1F4FC},
	{0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E}, {0x1F550, 0x1F567}, {0x1F57A, 0x1F57A},
	{0x1F595, 0x1F596}, {0x1F5A4, 0x1F5A4}, {0x1F5FB, 0x1F64F}, {0x1F680, 0x1F6C5},
	{0x1F6CC, 0x1F6CC}, {0x1F6D0, 0x1F6D2}, {0x1F6D5, 0x1F6D7}, {0x1F6DC, 0x1F6DF},
	{0x1F6EB, 0x1F6EC}, {0x1F6F4, 0x1F6FC}, {0x1F7E0, 0x1F7EB}, {0x1F7F0, 0x1F7F0},
	{0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945}, {0x1F947, 0x1F9FF}, {0x1FA70, 0x1FA7C},
	{0x1FA80, 0x1FA88}, {0x1FA90, 0x1FABD}, {0x1FABF, 0x1FAC5}, {0x1FACE, 0x1FADB},
	{0x1FAE0, 0x1FAE8}, {0x1FAF0, 0x1FAF8}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

/* Zero-width: nonspacing and enclosing marks (Mn, Me) of the scripts most
 * likely in trace and machine names, Hangul medial/final jamo, ZWNJ/ZWJ and
 * variation selectors.  A coarse subset of Unicode's Mn list: a mark missing
 * here is counted as one column, which over-reserves space but never lets
 * text overflow its cell into the next one by more than that column. */
static const struct range zero[] = {
	{0x0300, 0x036F},   {0x0483, 0x0489},   {0x0591, 0x05BD},   {0x05BF, 0x05BF},
	{0x05C1, 0x05C2},   {0x05C4, 0x05C5},   {0x05C7, 0x05C7},   {0x0610, 0x061A},
	{0x064B, 0x065F},   {0x0670, 0x0670},   {0x06D6, 0x06DC},   {0x06DF, 0x06E4},
	{0x06E7, 0x06E8},   {0x06EA, 0x06ED},   {0x0711, 0x0711},   {0x0730, 0x074A},
	{0x07A6, 0x07B0},   {0x07EB, 0x07F3},   {0x0816, 0x0819},   {0x081B, 0x0823},
	{0x0825, 0x0827},   {0x0829, 0x082D},   {0x0859, 0x085B},   {0x08D3, 0x08E1},
	{0x08E3, 0x0902},   {0x093A, 0x093A},   {0x093C, 0x093C},   {0x0941, 0x0948},
	{0x094D, 0x094D},   {0x0951, 0x0957},   {0x0962, 0x0963},   {0x0981, 0x0981},
	{0x09BC, 0x09BC},   {0x09C1, 0x09C4},   {0x09CD, 0x09CD},   {0x09E2, 0x09E3},
	{0x0A01, 0x0A02},   {0x0A3C, 0x0A3C},   {0x0A41, 0x0A51},   {0x0A70, 0x0A71},
	{0x0A75, 0x0A75},   {0x0A81, 0x0A82},   {0x0ABC, 0x0ABC},   {0x0AC1, 0x0AC8},
	{0x0ACD, 0x0ACD},   {0x0AE2, 0x0AE3},   {0x0B01, 0x0B01},   {0x0B3C, 0x0B3C},
	{0x0B3F, 0x0B3F},   {0x0B41, 0x0B44},   {0x0B4D, 0x0B4D},   {0x0B82, 0x0B82},
	{0x0BC0, 0x0BC0},   {0x0BCD, 0x0BCD},   {0x0C3E, 0x0C40},   {0x0C46, 0x0C56},
	{0x0CBC, 0x0CBC},   {0x0CCC, 0x0CCD},   {0x0D41, 0x0D44},   {0x0D4D, 0x0D4D},
	{0x0DCA, 0x0DCA},   {0x0DD2, 0x0DD6},   {0x0E31, 0x0E31},   {0x0E34, 0x0E3A},
	{0x0E47, 0x0E4E},   {0x0EB1, 0x0EB1},   {0x0EB4, 0x0EBC},   {0x0EC8, 0x0ECD},
	{0x0F18, 0x0F19},   {0x0F35, 0x0F35},   {0x0F37, 0x0F37},   {0x0F39, 0x0F39},
	{0x0F71, 0x0F7E},   {0x0F80, 0x0F84},   {0x0F86, 0x0F87},   {0x0F8D, 0x0FBC},
	{0x102D, 0x1030},   {0x1032, 0x1037},   {0x1039, 0x103A},   {0x1160, 0x11FF},
	{0x135D, 0x135F},   {0x1712, 0x1714},   {0x17B4, 0x17B5},   {0x17B7, 0x17BD},
	{0x17C6, 0x17C6},   {0x17C9, 0x17D3},   {0x17DD, 0x17DD},   {0x180B, 0x180D},
	{0x18A9, 0x18A9},   {0x1920, 0x1922},   {0x1927, 0x1928},   {0x1932, 0x1932},
	{0x1939, 0x193B},   {0x1A17, 0x1A18},   {0x1AB0, 0x1AFF},   {0x1B00, 0x1B03},
	{0x1B34, 0x1B34},   {0x1B36, 0x1B3A},   {0x1B6B, 0x1B73},   {0x1DC0, 0x1DFF},
	{0x200C, 0x200D},   {0x20D0, 0x20FF},   {0x2CEF, 0x2CF1},   {0x2DE0, 0x2DFF},
	{0x302A, 0x302D},   {0x3099, 0x309A},   {0xA66F, 0xA672},   {0xA674, 0xA67D},
	{0xA69E, 0xA69F},   {0xA6F0, 0xA6F1},   {0xA8E0, 0xA8F1},   {0xFB1E, 0xFB1E},
	{0xFE00, 0xFE0F},   {0xFE20, 0xFE2F},   {0x1D167, 0x1D169}, {0x1D17B, 0x1D182},
	{0x1D185, 0x1D18B}, {0x1D1AA, 0x1D1AD}, {0x1F3FB, 0x1F3FF}, {0xE0100, 0xE01EF},
};

/* Code points that are escaped as \uXXXX: C1 controls, bidi controls (Trojan
 * Source), invisible format characters that can hide or fake text, line and
 * paragraph separators, tag characters, noncharacters and private use. */
static const struct range hidden[] = {
	{0x0080, 0x009F},   /* C1 controls (U+009B is CSI on some terminals) */
	{0x00AD, 0x00AD},   /* soft hyphen */
	{0x061C, 0x061C},   /* arabic letter mark (bidi) */
	{0x115F, 0x1160},   /* hangul fillers */
	{0x180E, 0x180E},   /* mongolian vowel separator */
	{0x200B, 0x200B},   /* zero width space */
	{0x200E, 0x200F},   /* LRM, RLM (bidi) */
	{0x2028, 0x2029},   /* line and paragraph separators */
	{0x202A, 0x202E},   /* LRE RLE PDF LRO RLO (bidi) */
	{0x2060, 0x2064},   /* word joiner, invisible operators */
	{0x2066, 0x206F},   /* LRI RLI FSI PDI (bidi), deprecated format chars */
	{0x3164, 0x3164},   /* hangul filler */
	{0xD800, 0xDFFF},   /* surrogates (never decoded; listed for completeness) */
	{0xE000, 0xF8FF},   /* private use */
	{0xFDD0, 0xFDEF},   /* noncharacters */
	{0xFEFF, 0xFEFF},   /* zero width no-break space / BOM */
	{0xFFA0, 0xFFA0},   /* halfwidth hangul filler */
	{0xFFF0, 0xFFFB},   /* unassigned specials, interlinear annotation */
	{0x1BCA0, 0x1BCA3}, /* shorthand format controls */
	{0x1D173, 0x1D17A}, /* musical format controls */
	{0xE0000, 0xE007F}, /* tag characters (hidden text) */
	{0xF0000, 0x10FFFF}, /* supplementary private use */
};

static bool
in_table(uint32_t c, const struct range *t, size_t n)
{
	size_t lo = 0, hi = n;

	if (c < t[0].lo || c > t[n - 1].hi)
		return false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c > t[mid].hi)
			lo = mid + 1;
		else if (c < t[mid].lo)
			hi = mid;
		else
			return true;
	}
	return false;
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static bool
is_hidden(uint32_t c)
{
	/* Noncharacters U+nFFFE and U+nFFFF in every plane. */
	if ((c & 0xFFFE) == 0xFFFE)
		return true;
	return in_table(c, hidden, N_OF(hidden));
}

/* Columns for a printable code point (not hidden, not a control). */
static size_t
cp_width(uint32_t c)
{
	if (c < 0x300)
		return 1;
	if (in_table(c, zero, N_OF(zero)))
		return 0;
	if (in_table(c, wide, N_OF(wide)))
		return 2;
	return 1;
}

/* Strict UTF-8 decoding: no overlongs, no surrogates, nothing above U+10FFFF.
 * Returns the sequence length (1-4) and stores the code point, or 0 when the
 * byte at p does not start a valid sequence within n bytes. */
static size_t
decode(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned char b = p[0];
	size_t len;
	uint32_t c, min;

	if (b < 0x80) {
		*cp = b;
		return 1;
	} else if (b >= 0xC2 && b <= 0xDF) {
		len = 2;
		c = b & 0x1F;
		min = 0x80;
	} else if (b >= 0xE0 && b <= 0xEF) {
		len = 3;
		c = b & 0x0F;
		min = 0x800;
	} else if (b >= 0xF0 && b <= 0xF4) {
		len = 4;
		c = b & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return len;
}

size_t
tm_utf8_len(const char *p, size_t n)
{
	uint32_t cp;
	return n ? decode((const unsigned char *)p, n, &cp) : 0;
}

struct esc_state {
	struct tm_buf *out;
	struct tm_span *spans;
	size_t max_spans;
	size_t n_spans;
	size_t cols;
	bool last_was_escape; /* a combining mark must not stack on an escape */
};

static void
add_escape(struct esc_state *st, const char *text)
{
	size_t start = st->out->len;
	size_t n = strlen(text);

	tm_buf_add(st->out, text, n);
	st->cols += n; /* escapes are ASCII: one column per byte */
	if (st->spans) {
		/* Adjacent escapes share one span. */
		if (st->n_spans > 0 && st->spans[st->n_spans - 1].end == start)
			st->spans[st->n_spans - 1].end = start + n;
		else if (st->n_spans < st->max_spans)
			st->spans[st->n_spans++] = (struct tm_span){start, start + n};
	}
	st->last_was_escape = true;
}

bool tm_escape_no_fast;

size_t
tm_escape_display(const char *s, size_t len, struct tm_buf *out, struct tm_span *spans,
		  size_t max_spans, size_t *n_spans)
{
	const unsigned char *p = (const unsigned char *)s;
	struct esc_state st = {out, spans, max_spans, 0, 0, true};
	char tmp[16];
	size_t i = 0;

	if (!out->data)
		tm_buf_add(out, "", 0); /* so out->data is a string even for "" */
	while (p && i < len) {
		/* printable ASCII but the backslash, copied as a run (one
		 * column a byte): what the loop below does a byte at a time,
		 * ~1,700 instructions a member name of a TAR's check */
		size_t k = i;
		while (!tm_escape_no_fast && k < len && p[k] >= 0x20 && p[k] < 0x7F && p[k] != '\\')
			k++;
		if (k > i) {
			tm_buf_add(out, p + i, k - i);
			st.cols += k - i;
			st.last_was_escape = false;
			i = k;
			continue;
		}
		uint32_t c;
		size_t n = decode(p + i, len - i, &c);

		if (n == 0) {
			snprintf(tmp, sizeof tmp, "\\x%02x", p[i]);
			add_escape(&st, tmp);
			i++;
			continue;
		}
		if (c == '\\') {
			add_escape(&st, "\\\\");
		} else if (c == '\t') {
			add_escape(&st, "\\t");
		} else if (c == '\n') {
			add_escape(&st, "\\n");
		} else if (c == '\r') {
			add_escape(&st, "\\r");
		} else if (c < 0x20 || c == 0x7F) {
			snprintf(tmp, sizeof tmp, "\\x%02x", (unsigned)c);
			add_escape(&st, tmp);
		} else if (is_hidden(c) || (cp_width(c) == 0 && st.last_was_escape)) {
			/* A zero-width mark with nothing printable to attach to
			 * (start of text, or right after an escape) would combine
			 * with whatever the terminal drew before it. */
			if (c <= 0xFFFF)
				snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned)c);
			else
				snprintf(tmp, sizeof tmp, "\\U%08x", (unsigned)c);
			add_escape(&st, tmp);
		} else {
			tm_buf_add(out, p + i, n);
			st.cols += cp_width(c);
			st.last_was_escape = false;
		}
		i += n;
	}
	if (n_spans)
		*n_spans = st.n_spans;
	return st.cols;
}

char *
tm_escape_str(const char *s)
{
	struct tm_buf b;

	tm_buf_init(&b);
	tm_escape_display(s, s ? strlen(s) : 0, &b, NULL, 0, NULL);
	return tm_buf_steal(&b);
}

/* JSON: always valid UTF-8 (an invalid byte becomes U+FFFD), C0, DEL and
 * every code point escaped for display above (C1 controls, bidi controls,
 * invisible format characters) written as \u escapes, so a JSON report paged
 * in a terminal is as safe as the text one while a JSON reader still gets
 * the exact code points back.  In a finished document (in_doc) ASCII is the
 * emitter's and kept; only non-ASCII inside its strings is rewritten. */
static void
json_chars(const char *s, size_t len, struct tm_buf *out, bool in_doc, bool keep_invalid)
{
	const unsigned char *p = (const unsigned char *)s;
	char tmp[16];

	for (size_t i = 0; p && i < len;) {
		uint32_t c;
		size_t n = decode(p + i, len - i, &c);

		if (n == 0) {
			if (keep_invalid)
				tm_buf_addc(out, (char)p[i]);
			else
				tm_buf_adds(out, "\\ufffd");
			i++;
			continue;
		}
		if (in_doc && c < 0x80) /* the emitter's structure and escapes */
			tm_buf_addc(out, (char)c);
		else if (c == '"')
			tm_buf_adds(out, "\\\"");
		else if (c == '\\')
			tm_buf_adds(out, "\\\\");
		else if (c == '\n')
			tm_buf_adds(out, "\\n");
		else if (c == '\r')
			tm_buf_adds(out, "\\r");
		else if (c == '\t')
			tm_buf_adds(out, "\\t");
		else if (c == '\b')
			tm_buf_adds(out, "\\b");
		else if (c == '\f')
			tm_buf_adds(out, "\\f");
		else if (c < 0x20 || c == 0x7F || (c > 0x7F && is_hidden(c))) {
			if (c <= 0xFFFF) {
				snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned)c);
			} else if (keep_invalid) {
				/* The manifest: trace_processor's JSON reader refuses
				 * \uD800-\uDFFF escapes (json_lex.c reads as it does),
				 * so a pair would make the manifest unreadable; the
				 * character goes as its own UTF-8 bytes. */
				tm_buf_add(out, p + i, n);
				i += n;
				continue;
			} else { /* UTF-16 surrogate pair */
				uint32_t v = c - 0x10000;
				snprintf(tmp, sizeof tmp, "\\u%04x\\u%04x", (unsigned)(0xD800 + (v >> 10)),
					 (unsigned)(0xDC00 + (v & 0x3FF)));
			}
			tm_buf_adds(out, tmp);
		} else {
			tm_buf_add(out, p + i, n);
		}
		i += n;
	}
}

void
tm_escape_json(const char *s, size_t len, struct tm_buf *out)
{
	tm_buf_addc(out, '"');
	json_chars(s, len, out, false, false);
	tm_buf_addc(out, '"');
}

void
tm_escape_json_raw(const char *s, size_t len, struct tm_buf *out)
{
	tm_buf_addc(out, '"');
	json_chars(s, len, out, false, true);
	tm_buf_addc(out, '"');
}

void
tm_escape_json_doc(const char *json, size_t len, struct tm_buf *out)
{
	if (!out->data)
		tm_buf_add(out, "", 0);
	json_chars(json, len, out, true, false);
}

const char *
tm_shorten(const char *s, size_t max, char *buf, size_t cap)
{
	static const char mid[] = "\xe2\x80\xa6"; /* U+2026 */
	size_t len = s ? strlen(s) : 0;

	if (!s || len <= max || cap < sizeof mid + 2)
		return s;
	if (max > cap - 1)
		max = cap - 1;
	size_t keep = max > sizeof mid + 1 ? max - (sizeof mid - 1) : 2;
	/* cut at character boundaries: the head ends before a partial
	 * sequence, the tail starts after one */
	size_t head = keep / 2, tail = len - (keep - keep / 2);
	for (size_t k = 0; k < 3 && head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80; k++)
		head--;
	if (((unsigned char)s[head] & 0xC0) == 0x80)
		head = keep / 2; /* not UTF-8 here: any cut will do */
	for (size_t k = 0; k < 3 && tail < len && ((unsigned char)s[tail] & 0xC0) == 0x80; k++)
		tail++;
	memcpy(buf, s, head);
	memcpy(buf + head, mid, sizeof mid - 1);
	memcpy(buf + head + sizeof mid - 1, s + tail, len - tail);
	buf[head + sizeof mid - 1 + len - tail] = 0;
	return buf;
}

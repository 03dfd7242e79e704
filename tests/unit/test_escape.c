/* SPDX-License-Identifier: MIT */
/* Unit tests for tm_escape_display / tm_escape_str: every class of hostile
 * byte, display widths independent of the locale, and escape spans. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "t.h"
#include "tracemerge.h"

static size_t
esc(const char *s, size_t len, char *dst, size_t dst_len)
{
	struct tm_buf b;
	size_t w;

	tm_buf_init(&b);
	w = tm_escape_display(s, len, &b, NULL, 0, NULL);
	snprintf(dst, dst_len, "%s", b.data ? b.data : "(null)");
	tm_buf_fini(&b);
	return w;
}

#define ESC_EQ(in, want, want_cols)                                                                \
	do {                                                                                       \
		char got_[8192];                                                                   \
		size_t w_ = esc((in), sizeof(in) - 1, got_, sizeof got_);                          \
		CHECK_STR(got_, (want));                                                           \
		CHECK_INT(w_, (want_cols));                                                        \
	} while (0)

static void
test_plain_ascii(void)
{
	ESC_EQ("trace.pftrace", "trace.pftrace", 13);
	ESC_EQ("", "", 0);
	ESC_EQ("a b~", "a b~", 4);
}

static void
test_c0_and_del(void)
{
	ESC_EQ("\x1b[31mred", "\\x1b[31mred", 11);
	ESC_EQ("bell\a", "bell\\x07", 8);
	ESC_EQ("a\nb", "a\\nb", 4);
	ESC_EQ("\t\r", "\\t\\r", 4);
	ESC_EQ("\x1b" "c", "\\x1bc", 5);
	ESC_EQ("x\x7f", "x\\x7f", 5);
	ESC_EQ("\x01", "\\x01", 4);
}

static void
test_nul_inside(void)
{
	char got[64];
	size_t w = esc("a\0b", 3, got, sizeof got);
	CHECK_STR(got, "a\\x00b");
	CHECK_INT(w, 6);
}

static void
test_backslash(void)
{
	ESC_EQ("C:\\x1b", "C:\\\\x1b", 7);
	ESC_EQ("\\", "\\\\", 2);
}

static void
test_c1(void)
{
	ESC_EQ("\xc2\x9b" "31m", "\\u009b31m", 9);
	ESC_EQ("\xc2\x80", "\\u0080", 6);
	ESC_EQ("\xc2\x9f", "\\u009f", 6);
	/* U+00A0 (no-break space) is printable. */
	ESC_EQ("\xc2\xa0", "\xc2\xa0", 1);
}

static void
test_bidi(void)
{
	ESC_EQ("abc\xe2\x80\xaetxt.exe", "abc\\u202etxt.exe", 16);
	ESC_EQ("\xe2\x80\xaa", "\\u202a", 6);
	ESC_EQ("\xe2\x81\xa6\xe2\x81\xa9", "\\u2066\\u2069", 12);
	ESC_EQ("\xe2\x80\x8e\xe2\x80\x8f", "\\u200e\\u200f", 12);
	ESC_EQ("\xd8\x9c", "\\u061c", 6);
}

static void
test_invisible(void)
{
	ESC_EQ("a\xe2\x80\x8b" "b", "a\\u200bb", 8);   /* ZWSP */
	ESC_EQ("\xef\xbb\xbf" "x", "\\ufeffx", 7);    /* BOM */
	ESC_EQ("\xe2\x80\xa8", "\\u2028", 6);         /* line separator */
	ESC_EQ("\xf3\xa0\x80\x81", "\\U000e0001", 10); /* tag */
	ESC_EQ("\xef\xbf\xbe", "\\ufffe", 6);         /* noncharacter */
}

static void
test_invalid_utf8(void)
{
	ESC_EQ("\xff", "\\xff", 4);
	ESC_EQ("a\xc3", "a\\xc3", 5);                    /* truncated */
	ESC_EQ("\xc0\xaf", "\\xc0\\xaf", 8);             /* overlong '/' */
	ESC_EQ("\xe0\x80\xaf", "\\xe0\\x80\\xaf", 12);   /* overlong 3-byte */
	ESC_EQ("\xed\xa0\x80", "\\xed\\xa0\\x80", 12);   /* surrogate */
	ESC_EQ("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", 16); /* > U+10FFFF */
	ESC_EQ("\xe2\x82" "x", "\\xe2\\x82x", 9);        /* cut short */
	ESC_EQ("\x80", "\\x80", 4);                      /* lone continuation */
}

static void
test_widths(void)
{
	ESC_EQ("caf\xc3\xa9", "caf\xc3\xa9", 4);                 /* precomposed */
	ESC_EQ("cafe\xcc\x81", "cafe\xcc\x81", 4);               /* combining acute */
	ESC_EQ("\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac", 4); /* CJK */
	ESC_EQ("\xea\xb0\x80", "\xea\xb0\x80", 2);               /* Hangul */
	ESC_EQ("\xef\xbc\xa1", "\xef\xbc\xa1", 2);               /* fullwidth A */
	ESC_EQ("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", 2);       /* emoji */
	ESC_EQ("\xe2\x94\x80", "\xe2\x94\x80", 1);               /* box drawing */
	ESC_EQ("\xce\xb1\xd0\xb1", "\xce\xb1\xd0\xb1", 2);       /* greek, cyrillic */
	ESC_EQ("\xf0\xa0\x80\x80", "\xf0\xa0\x80\x80", 2);       /* CJK ext B */
}

static void
test_leading_combining(void)
{
	/* A mark with nothing to attach to is shown as an escape. */
	ESC_EQ("\xcc\x81" "a", "\\u0301a", 7);
	ESC_EQ("\x1b\xcc\x81", "\\x1b\\u0301", 10);
}

static void
test_spans(void)
{
	struct tm_buf b;
	struct tm_span sp[4];
	size_t n = 99;

	tm_buf_init(&b);
	tm_buf_adds(&b, "pre:");
	tm_escape_display("a\x1b\x07z\xffq", 6, &b, sp, 4, &n);
	CHECK_STR(b.data, "pre:a\\x1b\\x07z\\xffq");
	CHECK_INT(n, 2);
	CHECK_INT(sp[0].start, 5);
	CHECK_INT(sp[0].end, 13); /* two adjacent escapes merged */
	CHECK_INT(sp[1].start, 14);
	CHECK_INT(sp[1].end, 18);
	tm_buf_fini(&b);

	/* Spans beyond max_spans are dropped, not overflowed. */
	tm_buf_init(&b);
	tm_escape_display("\x01x\x02x\x03x", 6, &b, sp, 1, &n);
	CHECK_INT(n, 1);
	CHECK_INT(sp[0].start, 0);
	CHECK_INT(sp[0].end, 4);
	tm_buf_fini(&b);
}

static void
test_long_name(void)
{
	char in[4097];
	struct tm_buf b;
	size_t w;

	memset(in, 'n', 4096);
	in[4096] = 0;
	in[100] = '\x1b';
	tm_buf_init(&b);
	w = tm_escape_display(in, 4096, &b, NULL, 0, NULL);
	CHECK_INT(b.len, 4099);
	CHECK_INT(w, 4099);
	tm_buf_fini(&b);
}

static void
test_escape_str(void)
{
	char *s = tm_escape_str("x\ny");
	CHECK_STR(s, "x\\ny");
	free(s);
	s = tm_escape_str(NULL);
	CHECK_STR(s, "");
	free(s);
}

/* Escaped output never contains a control byte, a C1 code point or a bidi
 * control, whatever the input: a small exhaustive sweep over 2-byte inputs. */
static void
test_output_is_safe(void)
{
	struct tm_buf b;
	bool ok = true;

	tm_buf_init(&b);
	for (unsigned x = 0; x < 256 && ok; x++) {
		for (unsigned y = 0; y < 256 && ok; y++) {
			char in[2] = {(char)x, (char)y};
			tm_buf_reset(&b);
			tm_escape_display(in, 2, &b, NULL, 0, NULL);
			for (size_t i = 0; i < b.len; i++) {
				unsigned char c = (unsigned char)b.data[i];
				if (c < 0x20 || c == 0x7f)
					ok = false;
				if (c == 0xc2 && i + 1 < b.len &&
				    (unsigned char)b.data[i + 1] < 0xa0)
					ok = false;
			}
		}
	}
	CHECK(ok);
	tm_buf_fini(&b);
}

static char *
json_of(const char *s, size_t len)
{
	struct tm_buf b;
	tm_buf_init(&b);
	tm_escape_json(s, len, &b);
	return tm_buf_steal(&b);
}

/* JSON: C1 (U+009B CSI), bidi controls and C0 as \u escapes; quotes and
 * backslashes escaped; invalid UTF-8 as U+FFFD; printable text as is;
 * supplementary hidden code points as surrogate pairs. */
static void
test_json(void)
{
	char *j = json_of("a\xc2\x9b" "2J\xe2\x80\xae" "b", 9);
	CHECK_STR(j, "\"a\\u009b2J\\u202eb\"");
	free(j);
	j = json_of("\x1b]52;c;x\x07\"\\\n\xff\xe2\x81\xa6\xe2\x80\x8e\xd8\x9c", 21);
	CHECK_STR(j, "\"\\u001b]52;c;x\\u0007\\\"\\\\\\n\\ufffd\\u2066\\u200e\\u061c\"");
	free(j);
	j = json_of("\xc3\xa9\xe4\xb8\xad\xf3\xa0\x80\x81", 9); /* é 中 U+E0001 */
	CHECK_STR(j, "\"\xc3\xa9\xe4\xb8\xad\\udb40\\udc01\"");
	free(j);
	j = json_of("", 0);
	CHECK_STR(j, "\"\"");
	free(j);
}

/* Shortening keeps head and tail around U+2026, never splits a character. */
static void
test_shorten(void)
{
	char buf[64];
	CHECK_STR(tm_shorten("short", 10, buf, sizeof buf), "short");
	CHECK(tm_shorten("short", 10, buf, sizeof buf) != buf);
	CHECK_STR(tm_shorten("abcdefghijklmnopqrstuvwxyz", 13, buf, sizeof buf),
		  "abcde\xe2\x80\xa6vwxyz");
	CHECK(strlen(tm_shorten("abcdefghijklmnopqrstuvwxyz", 13, buf, sizeof buf)) <= 13);
	/* "é" is 2 bytes: a cut inside it moves out of it */
	const char *s = tm_shorten("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8, buf,
				   sizeof buf);
	CHECK_STR(s, "\xc3\xa9\xe2\x80\xa6\xc3\xa9");
	char big[1000];
	memset(big, 'A', sizeof big - 1);
	big[sizeof big - 1] = 0;
	CHECK_INT(strlen(tm_shorten(big, 200, buf, sizeof buf)), 63); /* capped by cap */
}

/* tm_utf8_len: the one decoder, strict (the workbench's column counting
 * counts an invalid byte as one on top of it). */
static void
test_utf8_len(void)
{
	CHECK_INT(tm_utf8_len("a", 1), 1);
	CHECK_INT(tm_utf8_len("\xc3\xa9", 2), 2);
	CHECK_INT(tm_utf8_len("\xe2\x80\xae", 3), 3);
	CHECK_INT(tm_utf8_len("\xf0\x9f\x98\x80", 4), 4);
	CHECK_INT(tm_utf8_len("\xc3", 1), 0);             /* cut off */
	CHECK_INT(tm_utf8_len("\xe2\x80", 2), 0);         /* cut off */
	CHECK_INT(tm_utf8_len("\xc0\x80", 2), 0);         /* overlong */
	CHECK_INT(tm_utf8_len("\xed\xa0\x80", 3), 0);     /* surrogate */
	CHECK_INT(tm_utf8_len("\xf4\x90\x80\x80", 4), 0); /* above U+10FFFF */
	CHECK_INT(tm_utf8_len("\x80", 1), 0);
	CHECK_INT(tm_utf8_len("\xc3" "a", 2), 0);          /* bad continuation */
	CHECK_INT(tm_utf8_len("", 0), 0);
}

/* Differential: runs of printable ASCII copied whole give the bytes,
 * columns and spans the byte-at-a-time loop gives (tm_escape_no_fast), for
 * random strings of ASCII, backslashes, controls, combining marks, wide and
 * invisible code points and broken UTF-8. */
static void
test_ascii_runs_same(void)
{
	static const char *const parts[] = {"a", "Zz09 ~", "\\", "\t", "\x01", "\x7f", "\xcc\x81",
					    "\xe4\xb8\xad", "\xe2\x80\xae", "\xc2\xad", "\xc3",
					    "\xff", "m00001.pftrace", "/", " "};
	enum { NP = sizeof parts / sizeof parts[0] };
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int t = 0; t < 3000; t++) {
		char s[256];
		size_t n = 0;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int k = (int)(x % 12);
		for (int j = 0; j < k; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			const char *q = parts[x % NP];
			size_t m = strlen(q);
			memcpy(s + n, q, m);
			n += m;
		}
		struct tm_buf a, b;
		struct tm_span sa[4], sb[4];
		size_t na = 0, nb = 0;
		tm_buf_init(&a);
		tm_buf_init(&b);
		size_t ca = tm_escape_display(s, n, &a, sa, 4, &na);
		tm_escape_no_fast = true;
		size_t cb = tm_escape_display(s, n, &b, sb, 4, &nb);
		tm_escape_no_fast = false;
		CHECK(ca == cb && a.len == b.len && !memcmp(a.data, b.data, a.len) && na == nb &&
		      !memcmp(sa, sb, na * sizeof *sa));
		tm_buf_fini(&a);
		tm_buf_fini(&b);
	}
}

int
main(void)
{
	RUN(test_utf8_len);
	RUN(test_plain_ascii);
	RUN(test_ascii_runs_same);
	RUN(test_c0_and_del);
	RUN(test_nul_inside);
	RUN(test_backslash);
	RUN(test_c1);
	RUN(test_bidi);
	RUN(test_invisible);
	RUN(test_invalid_utf8);
	RUN(test_widths);
	RUN(test_leading_combining);
	RUN(test_spans);
	RUN(test_long_name);
	RUN(test_escape_str);
	RUN(test_output_is_safe);
	RUN(test_json);
	RUN(test_shorten);
	return 0;
}

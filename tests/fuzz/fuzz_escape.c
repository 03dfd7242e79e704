/* SPDX-License-Identifier: MIT */
/* tm_escape_display: the output is valid UTF-8 with no C0, DEL, C1 or bidi
 * control; it unescapes back to the input exactly (the escaping is
 * unambiguous); spans lie inside the output, in order; the width is at most
 * 4 columns per input byte (\xNN is the widest escape per byte) and at most
 * one column per output byte. */
#include "fuzz_common.h"

#include "tracemerge.h"

static size_t
utf8_dec(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned char b = p[0];
	size_t len;
	uint32_t c, min;
	if (b < 0x80) {
		*cp = b;
		return 1;
	} else if (b >= 0xC2 && b <= 0xDF) {
		len = 2, c = b & 0x1F, min = 0x80;
	} else if (b >= 0xE0 && b <= 0xEF) {
		len = 3, c = b & 0x0F, min = 0x800;
	} else if (b >= 0xF0 && b <= 0xF4) {
		len = 4, c = b & 0x07, min = 0x10000;
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

static int
is_bidi(uint32_t c)
{
	return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0x200E ||
	       c == 0x200F || c == 0x061C;
}

static size_t
put_utf8(uint32_t c, unsigned char *o)
{
	if (c < 0x80) {
		o[0] = (unsigned char)c;
		return 1;
	} else if (c < 0x800) {
		o[0] = (unsigned char)(0xC0 | (c >> 6));
		o[1] = (unsigned char)(0x80 | (c & 0x3F));
		return 2;
	} else if (c < 0x10000) {
		o[0] = (unsigned char)(0xE0 | (c >> 12));
		o[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
		o[2] = (unsigned char)(0x80 | (c & 0x3F));
		return 3;
	}
	o[0] = (unsigned char)(0xF0 | (c >> 18));
	o[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
	o[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
	o[3] = (unsigned char)(0x80 | (c & 0x3F));
	return 4;
}

static uint32_t
hexn(const unsigned char *p, size_t n)
{
	uint32_t v = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char h = p[i];
		uint32_t d;
		if (h >= '0' && h <= '9')
			d = (uint32_t)(h - '0');
		else if (h >= 'a' && h <= 'f')
			d = (uint32_t)(h - 'a' + 10);
		else {
			fprintf(stderr, "bad hex digit 0x%02x in escape\n", h);
			abort();
		}
		v = v << 4 | d;
	}
	return v;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tm_buf out;
	struct tm_span spans[8];
	size_t n_spans = 99;
	tm_buf_init(&out);
	size_t cols = tm_escape_display((const char *)data, size, &out, spans, 8, &n_spans);
	FUZZ_CHECK(out.data != NULL);
	FUZZ_CHECK(strlen(out.data) == out.len); /* no NUL survives */
	FUZZ_CHECK(cols <= 4 * size);
	FUZZ_CHECK(cols <= out.len);
	FUZZ_CHECK(n_spans <= 8);
	for (size_t i = 0; i < n_spans; i++) {
		FUZZ_CHECK(spans[i].start < spans[i].end && spans[i].end <= out.len);
		FUZZ_CHECK(i == 0 || spans[i - 1].end < spans[i].start);
		FUZZ_CHECK(out.data[spans[i].start] == '\\');
	}
	/* Valid UTF-8, no controls; and decode the escapes back. */
	const unsigned char *o = (const unsigned char *)out.data;
	unsigned char *back = malloc(out.len + 1);
	size_t nb = 0;
	for (size_t i = 0; i < out.len;) {
		uint32_t c;
		size_t n = utf8_dec(o + i, out.len - i, &c);
		FUZZ_CHECK(n > 0);
		FUZZ_CHECK(c >= 0x20 && c != 0x7F && !(c >= 0x80 && c <= 0x9F) && !is_bidi(c));
		if (c != '\\') {
			memcpy(back + nb, o + i, n);
			nb += n;
			i += n;
			continue;
		}
		FUZZ_CHECK(i + 1 < out.len);
		unsigned char k = o[i + 1];
		if (k == '\\' || k == 't' || k == 'n' || k == 'r') {
			back[nb++] = k == '\\' ? '\\' : k == 't' ? '\t' : k == 'n' ? '\n' : '\r';
			i += 2;
		} else if (k == 'x') {
			FUZZ_CHECK(i + 4 <= out.len);
			back[nb++] = (unsigned char)hexn(o + i + 2, 2);
			i += 4;
		} else if (k == 'u' || k == 'U') {
			size_t w = k == 'u' ? 4 : 8;
			FUZZ_CHECK(i + 2 + w <= out.len);
			nb += put_utf8(hexn(o + i + 2, w), back + nb);
			i += 2 + w;
		} else {
			fprintf(stderr, "unknown escape \\%c\n", k);
			abort();
		}
	}
	if (nb != size || (size && memcmp(back, data, size) != 0)) {
		fprintf(stderr, "escape does not round-trip\n");
		abort();
	}
	free(back);
	tm_buf_fini(&out);
	return 0;
}

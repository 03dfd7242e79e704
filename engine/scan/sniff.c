/* SPDX-License-Identifier: MIT */
/*
 * Format sniffing with trace_processor's rules (util/trace_type.cc,
 * GuessTraceType): the helpers every sniffer shares, and the sniffers of
 * the formats without a file of their own (named, not scanned).  They run
 * in the format table's order (formats.c, tm_sniff), first hit wins.
 * Most sniffers look at no more than the first 128 bytes
 * (kGuessTraceMaxLookahead); the logcat sniffer looks at up to 4096 bytes,
 * collapsed-stack at up to three lines, perf_text/strace at the first line
 * and pprof at everything it is given.  The caller passes what
 * trace_processor would pass.
 */
#include <string.h>

#include "formats.h"
#include "internal.h"
#include "proto_wire.h"

#define LOOKAHEAD TM_SNIFF_LOOKAHEAD

/* ---- helpers ---- */

static bool
is_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool
starts(const uint8_t *d, size_t n, const char *s)
{
	size_t l = strlen(s);
	return n >= l && memcmp(d, s, l) == 0;
}

bool tm_sniff_no_fast;

/* Whether s occurs in d[0..n): the candidates found by memchr on its first
 * byte (a member's sniff asked three times over 128 bytes of binary: ~770
 * instructions each a byte at a time); tm_sniff_no_fast: every offset
 * (the oracle). */
static bool
contains(const uint8_t *d, size_t n, const char *s)
{
	size_t l = strlen(s);
	if (l > n)
		return false;
	if (tm_sniff_no_fast) {
		for (size_t i = 0; i + l <= n; i++)
			if (d[i] == (uint8_t)s[0] && memcmp(d + i, s, l) == 0)
				return true;
		return false;
	}
	const uint8_t *p = d, *last = d + (n - l);
	while (p <= last && (p = memchr(p, (uint8_t)s[0], (size_t)(last - p) + 1)) != NULL) {
		if (memcmp(p, s, l) == 0)
			return true;
		p++;
	}
	return false;
}

static bool
is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

/* ---- individual sniffers ---- */

static bool
sniff_tar(const uint8_t *d, size_t n)
{
	return (n >= 257 + 6 && memcmp(d + 257, "ustar\0", 6) == 0) ||
	       (n >= 257 + 8 && memcmp(d + 257, "ustar  \0", 8) == 0);
}

/* The first 128 bytes with every whitespace byte removed, up to STRIPPED
 * of them: tm_sniff only asks whether they start with one of a few
 * prefixes, none longer than that, so the bytes past it change no answer
 * (tm_sniff_no_fast: all of them, the oracle). */
#define STRIPPED 32
static size_t
stripped(const uint8_t *d, size_t n, uint8_t *out)
{
	size_t k = 0, cap = tm_sniff_no_fast ? LOOKAHEAD : STRIPPED;
	for (size_t i = 0; i < n && i < LOOKAHEAD && k < cap; i++)
		if (!is_space(d[i]))
			out[k++] = d[i];
	return k;
}

static bool
collapsed_line(const uint8_t *p, size_t n)
{
	size_t start = 0;
	while (start < n && is_space(p[start]))
		start++;
	if (start >= n || p[start] == '#')
		return false;
	size_t end = n;
	while (end > start && is_space(p[end - 1]))
		end--;
	size_t len = end - start;
	if (len == 0)
		return false;
	const uint8_t *line = p + start;
	size_t last_space = len;
	for (size_t i = len; i > 0; i--) {
		if (line[i - 1] == ' ') {
			last_space = i - 1;
			break;
		}
	}
	if (last_space == len || last_space == 0)
		return false;
	for (size_t i = last_space + 1; i < len; i++)
		if (!is_digit(line[i]))
			return false;
	for (size_t i = 0; i < last_space; i++)
		if (line[i] == ';')
			return true;
	return false;
}

static bool
sniff_collapsed(const uint8_t *d, size_t n)
{
	size_t valid = 0, pos = 0;
	while (pos < n && valid < 3) {
		size_t nl = pos;
		while (nl < n && d[nl] != '\n')
			nl++;
		size_t start = pos;
		while (start < nl && is_space(d[start]))
			start++;
		if (start < nl && d[start] != '#') {
			if (!collapsed_line(d + pos, nl - pos))
				return false;
			valid++;
		}
		pos = nl < n ? nl + 1 : n;
	}
	return valid > 0;
}

static bool
sniff_symbols(const uint8_t *d, size_t n)
{
	const uint8_t *end = d + n, *p;
	uint64_t tag, len;
	if (!(p = get_varint(d, end, &tag)) || tag != 0x0a)
		return false;
	if (!(p = get_varint(p, end, &len)) || len == 0)
		return false;
	if (!(p = get_varint(p, end, &tag)))
		return false;
	return tag == ((61u << 3) | 2u);
}

/* pprof_trace_reader.cc IsPprofProfile over all n bytes. */
static bool
sniff_pprof(const uint8_t *d, size_t n)
{
	if (n < 10)
		return false;
	const uint8_t *p = d, *end = d + n;
	bool core = false;
	while (p < end) {
		uint64_t tag, v;
		const uint8_t *q;
		if (*p == 0x0a && !tm_sniff_no_fast) {
			/* field 1, length-delimited (a proto trace's TracePacket:
			 * all of the 1 MiB a plain file's sniff is given): what
			 * the general steps below do for it, without them */
			if (p + 1 >= end || !(q = get_varint(p + 1, end, &v)) ||
			    v > (uint64_t)(end - q))
				break;
			p = q + v;
			continue;
		}
		q = get_varint(p, end, &tag);
		if (!q)
			break;
		uint64_t id = (uint32_t)(tag >> 3);
		unsigned wt = (unsigned)(tag & 7);
		if (id == 0 || q >= end)
			break;
		if (wt == 0) {
			if (!(q = get_varint(q, end, &v)))
				break;
		} else if (wt == 2) {
			if (!(q = get_varint(q, end, &v)) || v > (uint64_t)(end - q))
				break;
			q += v;
		} else if (wt == 1) {
			if (end - q < 8)
				break;
			q += 8;
		} else if (wt == 5) {
			if (end - q < 4)
				break;
			q += 4;
		} else {
			break;
		}
		p = q;
		if (id > (1u << 29) - 1)
			continue; /* protozero skips out-of-range ids */
		switch (id) {
		case 2: case 3: case 4: case 5: case 6:
			core = true;
			__attribute__((fallthrough));
		case 1: case 11:
			if (wt != 2)
				return false;
			break;
		case 13:
			if (wt != 2 && wt != 0)
				return false;
			break;
		case 7: case 8:
			core = true;
			__attribute__((fallthrough));
		case 9: case 10: case 12: case 14:
			if (wt != 0)
				return false;
			break;
		default:
			return false;
		}
	}
	return core;
}


/* ---- the sniffers as the format table calls them (formats.c) ---- */

bool
tm_sniff_starts(const uint8_t *d, size_t n, const char *s)
{
	return starts(d, n, s);
}

bool
tm_sniff_contains(const uint8_t *d, size_t n, const char *s)
{
	return contains(d, n, s);
}

void
tm_sniff_strip(struct tm_sniff_in *in)
{
	_Static_assert(sizeof in->s == LOOKAHEAD, "tm_sniff_in.s holds the lookahead");
	if (!in->have_s) {
		in->sn = stripped(in->d, in->n, in->s);
		in->have_s = true;
	}
}

/* the first 128 bytes, or fewer */
static size_t
ahead(const struct tm_sniff_in *in)
{
	return in->n < LOOKAHEAD ? in->n : LOOKAHEAD;
}

bool
tm_sniff_tar(struct tm_sniff_in *in)
{
	return sniff_tar(in->d, in->n);
}

bool
tm_sniff_arrow(struct tm_sniff_in *in)
{
	return starts(in->d, in->n, "ARROW1");
}

bool
tm_sniff_perf(struct tm_sniff_in *in)
{
	return starts(in->d, in->n, "PERFILE2");
}

bool
tm_sniff_zip(struct tm_sniff_in *in)
{
	return in->n >= 4 && memcmp(in->d, "PK\x03\x04", 4) == 0;
}

bool
tm_sniff_gzip(struct tm_sniff_in *in)
{
	return in->n >= 2 && in->d[0] == 0x1f && in->d[1] == 0x8b;
}

bool
tm_sniff_zstd(struct tm_sniff_in *in)
{
	return in->n >= 4 && memcmp(in->d, "\x28\xb5\x2f\xfd", 4) == 0;
}

bool
tm_sniff_art_hprof(struct tm_sniff_in *in)
{
	return starts(in->d, in->n, "JAVA PROFILE");
}

bool
tm_sniff_manifest(struct tm_sniff_in *in)
{
	_Static_assert(sizeof "{\"perfetto_manifest\"" - 1 <= STRIPPED, "STRIPPED too short");
	tm_sniff_strip(in);
	return starts(in->s, in->sn, "{\"perfetto_manifest\"");
}

bool
tm_sniff_instruments_xml(struct tm_sniff_in *in)
{
	return starts(in->d, in->n, "<?xml version=\"1.0\"?>\n<trace-query-result>");
}

bool
tm_sniff_ctrace(struct tm_sniff_in *in)
{
	return contains(in->d, ahead(in), "TRACE:\n\x78\x9c");
}

bool
tm_sniff_ninja_log(struct tm_sniff_in *in)
{
	return starts(in->d, in->n, "# ninja log");
}

bool
tm_sniff_collapsed_stack(struct tm_sniff_in *in)
{
	return sniff_collapsed(in->d, in->n);
}

bool
tm_sniff_symbols(struct tm_sniff_in *in)
{
	return sniff_symbols(in->d, in->n);
}

bool
tm_sniff_pprof(struct tm_sniff_in *in)
{
	return sniff_pprof(in->d, in->n);
}


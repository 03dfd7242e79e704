/* SPDX-License-Identifier: MIT */
/*
 * Format sniffing with trace_processor's rules (util/trace_type.cc,
 * GuessTraceType): every
 * sniffer in ascending detection priority, first hit wins.  Most sniffers
 * look at no more than the first 128 bytes (kGuessTraceMaxLookahead); the
 * logcat sniffer looks at up to 4096 bytes, collapsed-stack at up to three
 * lines, perf_text/strace at the first line and pprof at everything it is
 * given.  The caller passes what trace_processor would pass.
 */
#include <string.h>

#include "internal.h"
#include "proto_wire.h"
#include "scan.h"

#define LOOKAHEAD 128
#define LOGCAT_LOOKAHEAD 4096

static const char *const format_names[] = {
#define TM_X_(id, s) s,
	TM_FORMAT_LIST(TM_X_)
#undef TM_X_
};

const char *
tm_format_name(enum tm_format f)
{
	if ((unsigned)f >= TM_FMT__COUNT)
		return "unknown";
	return format_names[f];
}

int
tm_format_priority(enum tm_format f)
{
	switch (f) {
	case TM_FMT_MANIFEST:
		return -1;
	case TM_FMT_PROTO:
		return 0;
	case TM_FMT_TAR:
	case TM_FMT_ZIP:
	case TM_FMT_GZIP:
	case TM_FMT_ZSTD:
		return 1;
	case TM_FMT_SYMBOLS:
		return 3;
	default:
		return 2;
	}
}

bool
tm_format_is_container(enum tm_format f)
{
	return f == TM_FMT_TAR || f == TM_FMT_ZIP || f == TM_FMT_GZIP || f == TM_FMT_ZSTD ||
	       f == TM_FMT_CTRACE;
}

/* TAR, ZIP, gzip and zstd: tm_sniff tests them before anything that reads
 * past byte 265 (the TAR magic's end), so a longer read cannot change them.
 * Keep it so when tm_sniff's order changes (archive.c sniffs an input's
 * first TM_SNIFF_PREFIX bytes and stops when this holds). */
bool
tm_sniff_prefix_decides(enum tm_format f)
{
	return f == TM_FMT_TAR || f == TM_FMT_ZIP || f == TM_FMT_GZIP || f == TM_FMT_ZSTD;
}

bool
tm_format_is_predicted(enum tm_format f)
{
	return f == TM_FMT_PROTO || f == TM_FMT_JSON || f == TM_FMT_SYSTRACE || f == TM_FMT_PERF_TEXT ||
	       f == TM_FMT_ANDROID_LOGCAT || f == TM_FMT_ANDROID_DUMPSTATE || f == TM_FMT_STRACE ||
	       f == TM_FMT_GECKO || f == TM_FMT_SIMPLEPERF_PROTO || f == TM_FMT_ART_METHOD;
}

bool
tm_format_has_timeline(enum tm_format f)
{
	/* collapsed_stack_trace_reader.cc, pprof_trace_reader.cc,
	 * art_hprof_parser.cc: tables written at the end of the file, no
	 * sorter, no clock (descriptor clock policy none); symbols: a proto
	 * reader with no default clock (proto_trace_reader.cc,
	 * SymbolsImporter); arrow: tables restored as exported
	 * (perfetto_export_reader.cc); ninja_log: slices written straight
	 * to storage at their own times (ninja_log_parser.cc,
	 * OnPushDataToSorter), clock policy none */
	return f != TM_FMT_COLLAPSED_STACK && f != TM_FMT_PPROF && f != TM_FMT_SYMBOLS &&
	       f != TM_FMT_ART_HPROF && f != TM_FMT_ARROW && f != TM_FMT_NINJA_LOG;
}

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

/* A token (pointer + length), as the sniffers split lines. */
struct tok {
	const uint8_t *p;
	size_t n;
};

/* base::SplitString: split on c, empty tokens dropped.  Returns the count
 * (at most max stored; the count goes on past max). */
static size_t
split(const uint8_t *p, size_t n, uint8_t c, struct tok *out, size_t max)
{
	size_t cnt = 0, i = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && p[j] != c)
			j++;
		if (j > i) {
			if (cnt < max)
				out[cnt] = (struct tok){p + i, j - i};
			cnt++;
		}
		i = j + 1;
	}
	return cnt;
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
art_v2_version(const uint8_t *d, size_t n)
{
	if (n < 6)
		return false;
	unsigned v = (unsigned)d[4] | ((unsigned)d[5] << 8);
	return v == 0x0004 || v == 0x0005 || v == 0x00f4 || v == 0x00f5;
}

/* android_log_event.cc DetectFormat on one line. */
static bool
logcat_line(const uint8_t *p, size_t n)
{
	struct tok t[6];
	size_t cnt = split(p, n, ' ', t, 6);
	if (cnt < 5)
		return false;
	bool mmdd = t[0].n == 5 && t[0].p[2] == '-';
	bool ymd = t[0].n == 10 && t[0].p[4] == '-' && t[0].p[7] == '-';
	if (!mmdd && !ymd)
		return false;
	if (t[1].n < 10 || t[1].p[2] != ':' || t[1].p[5] != ':' || t[1].p[8] != '.')
		return false;
	if (t[4].n == 1 && t[4].p[0] >= 'A' && t[4].p[0] <= 'Z')
		return true;
	return cnt > 5 && t[5].n == 1 && t[5].p[0] >= 'A' && t[5].p[0] <= 'Z';
}

static bool
sniff_logcat(const uint8_t *d, size_t n)
{
	if (n > LOGCAT_LOOKAHEAD)
		n = LOGCAT_LOOKAHEAD;
	/* Only '\n'-terminated lines count; the first one that is not a
	 * "--------- beginning of" marker decides. */
	size_t s = 0;
	for (size_t i = 0; i < n; i++) {
		if (d[i] != '\n')
			continue;
		const uint8_t *line = d + s;
		size_t len = i - s;
		s = i + 1;
		if (starts(line, len, "--------"))
			continue;
		return logcat_line(line, len);
	}
	return false;
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
sniff_perf_text(const uint8_t *d, size_t n)
{
	const uint8_t *nl = memchr(d, '\n', n);
	if (!nl)
		return false;
	return tm_perf_text_sample_line((const char *)d, (size_t)(nl - d), NULL);
}

static size_t
find_byte(const uint8_t *p, size_t n, uint8_t c)
{
	const uint8_t *q = memchr(p, c, n);
	return q ? (size_t)(q - p) : SIZE_MAX;
}

static bool
sniff_strace(const uint8_t *d, size_t n)
{
	size_t nl = find_byte(d, n, '\n');
	struct tm_strace_event ev;
	return tm_strace_parse((const char *)d, nl == SIZE_MAX ? n : nl, &ev) == TM_ST_SYSCALL;
}

static bool
sniff_systrace(const uint8_t *d, size_t n)
{
	size_t w = n < LOOKAHEAD ? n : LOOKAHEAD;
	if (contains(d, w, "# tracer"))
		return true;
	uint8_t low[16];
	size_t ln = w < sizeof low ? w : sizeof low;
	for (size_t i = 0; i < ln; i++)
		low[i] = (d[i] >= 'A' && d[i] <= 'Z') ? (uint8_t)(d[i] + 32) : d[i];
	if (starts(low, ln, "<!doctype html>") || starts(low, ln, "<html>"))
		return true;
	return contains(d, w, "TRACE:\n") || starts(d, w, "cpus=") || starts(d, w, " ");
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

enum tm_format
tm_sniff(const void *data, size_t len)
{
	const uint8_t *d = data;
	uint8_t s[LOOKAHEAD];
	size_t sn;

	if (!d || len == 0)
		return TM_FMT_UNKNOWN;
	if (sniff_tar(d, len))
		return TM_FMT_TAR;
	if (starts(d, len, "ARROW1"))
		return TM_FMT_ARROW;
	if (len >= 8 && memcmp(d, "\x10\x00\x04\x46\x78\x54\x16\x00", 8) == 0)
		return TM_FMT_FUCHSIA;
	if (starts(d, len, "PERFILE2"))
		return TM_FMT_PERF;
	if (starts(d, len, "SIMPLEPERF"))
		return TM_FMT_SIMPLEPERF_PROTO;
	if (len >= 4 && memcmp(d, "PK\x03\x04", 4) == 0)
		return TM_FMT_ZIP;
	if (len >= 2 && d[0] == 0x1f && d[1] == 0x8b)
		return TM_FMT_GZIP;
	if (len >= 4 && memcmp(d, "\x28\xb5\x2f\xfd", 4) == 0)
		return TM_FMT_ZSTD;
	if (starts(d, len, "SLOW") && art_v2_version(d, len))
		return TM_FMT_ART_METHOD_V2;
	if (starts(d, len, "SLOW") || starts(d, len < LOOKAHEAD ? len : LOOKAHEAD, "*version\n"))
		return TM_FMT_ART_METHOD;
	if (starts(d, len, "JAVA PROFILE"))
		return TM_FMT_ART_HPROF;
	sn = stripped(d, len, s);
	_Static_assert(sizeof "{\"perfetto_manifest\"" - 1 <= STRIPPED, "STRIPPED too short");
	if (starts(s, sn, "{\"perfetto_manifest\""))
		return TM_FMT_MANIFEST;
	if (starts(s, sn, "{\"meta\"") || starts(s, sn, "{\"libs\""))
		return TM_FMT_GECKO;
	if (starts(s, sn, "{\"") || starts(s, sn, "[{\""))
		return TM_FMT_JSON;
	if (starts(d, len, "<?xml version=\"1.0\"?>\n<trace-query-result>"))
		return TM_FMT_INSTRUMENTS_XML;
	if (contains(d, len < LOOKAHEAD ? len : LOOKAHEAD, "TRACE:\n\x78\x9c"))
		return TM_FMT_CTRACE;
	if (starts(d, len, "# ninja log"))
		return TM_FMT_NINJA_LOG;
	if (sniff_logcat(d, len))
		return TM_FMT_ANDROID_LOGCAT;
	if (sniff_collapsed(d, len))
		return TM_FMT_COLLAPSED_STACK;
	if (sniff_perf_text(d, len))
		return TM_FMT_PERF_TEXT;
	if (sniff_strace(d, len))
		return TM_FMT_STRACE;
	if (sniff_systrace(d, len))
		return TM_FMT_SYSTRACE;
	if (sniff_symbols(d, len))
		return TM_FMT_SYMBOLS;
	if (sniff_pprof(d, len))
		return TM_FMT_PPROF;
	if (len > 0 && d[0] == 0x0a)
		return TM_FMT_PROTO;
	if (len > 0 && d[0] == 0x09)
		return TM_FMT_PRIMES;
	if (starts(d, len, "9,0,i,vers,") ||
	    starts(d, len, "========================================================\n== dumpstate: "))
		return TM_FMT_ANDROID_DUMPSTATE;
	return TM_FMT_UNKNOWN;
}

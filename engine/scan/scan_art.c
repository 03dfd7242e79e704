/* SPDX-License-Identifier: MIT */
/*
 * art_method scanner: an ART method trace, v1 streaming ("SLOW" whose
 * version has the 0xF0 mask) or non-streaming (a "*version" text header,
 * then "SLOW" and fixed-size records), as trace_processor's
 * ArtMethodTokenizer reads it (importers/art_method/art_method_tokenizer.cc).
 *
 * Every method record is one ConvertDefaultClockToTraceTime push (the
 * descriptor's MONOTONIC) at (start + delta) * 1000: start is the data
 * header's u64 (us), delta the record's u32 after the method id (the
 * second u32 with clock=dual).  A streaming trace is read at its end, and
 * only once its summary was reached ("trace is incomplete" otherwise); a
 * non-streaming one as it comes, failing at its end unless the file ended
 * on a record boundary.  The format's errors are trace_processor's texts.
 *
 * The member is held whole (trace_processor holds a streaming one whole
 * too).  Not matched: bytes after a streaming summary (trace_processor
 * fails only when a later chunk brings them), and version 1 records of a
 * non-streaming trace (9 bytes: trace_processor reads past them).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"

#define MAX_ART (1024u * 1024u * 1024u)
#define MAGIC 0x574f4c53u
#define HDR 32u

struct art {
	struct tm_scan *sc;
	const struct tm_scan_ctl *ctl;
	struct tm_error *err;
	struct tm_buf buf;
	uint64_t total;
	enum tm_status status;
	bool dual;
	int64_t start;
	uint32_t version, rec;
	bool failed;
};

static uint16_t
u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t
u32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t
u64(const uint8_t *p)
{
	return (uint64_t)u32(p) | ((uint64_t)u32(p + 4) << 32);
}

static void fatal(struct art *a, uint64_t off, const char *fmt, ...) TM_PRINTF(3, 4);
static void
fatal(struct art *a, uint64_t off, const char *fmt, ...)
{
	if (a->failed)
		return;
	va_list ap;
	va_start(ap, fmt);
	struct tm_buf t;
	tm_buf_init(&t);
	tm_buf_vaddf(&t, fmt, ap);
	va_end(ap);
	tm_oplog_fatal(&a->sc->log, 0, t.data, off);
	tm_buf_fini(&t);
	a->sc->failed = true;
	a->failed = true;
}

/* base::SplitString on c (empty pieces dropped): the count, the first max. */
static size_t
split(const char *s, size_t n, char c, const char **p, size_t *l, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		while (i < n && s[i] == c)
			i++;
		if (i == n)
			break;
		size_t b = i;
		while (i < n && s[i] != c)
			i++;
		if (k < max) {
			p[k] = s + b;
			l[k] = i - b;
		}
		k++;
	}
	return k;
}

/* base::StringToUInt32 / ToInt32 (strtoul / strtol, the whole C string). */
static bool
to_num(const char *s, size_t n, int base, bool is_signed, long *out)
{
	char tmp[64];
	if (n == 0 || n >= sizeof tmp)
		return false;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	char *end;
	long v = is_signed ? strtol(tmp, &end, base) : (long)strtoul(tmp, &end, base);
	if (!tmp[0] || *end)
		return false;
	*out = v;
	return true;
}

/* ParseMethodLine: only its failures matter to the prediction. */
static void
method_line(struct art *a, const char *l, size_t n, uint64_t off)
{
	while (n && (l[0] == ' ' || l[0] == '\t' || l[0] == '\n'))
		l++, n--;
	while (n && (l[n - 1] == ' ' || l[n - 1] == '\t' || l[n - 1] == '\n'))
		n--;
	const char *tp[4];
	size_t tl[4];
	long id;
	size_t k = split(l, n, '\t', tp, tl, 4);
	if (k < 2)
		fatal(a, off,
		      "ART method trace: method line must have at least an id and class name (got %zu "
		      "tokens)",
		      k);
	else if (!to_num(tp[0], tl[0], 16, false, &id))
		fatal(a, off, "ART method trace: unable to parse method id as integer: %.*s",
		      (int)tl[0], tp[0]);
	else if (k == 3)
		fatal(a, off,
		      "ART method trace: method line with 3 tokens is malformed (id, class, %.*s)",
		      (int)tl[2], tp[2]);
}

/* ParseOptionLine */
static void
option_line(struct art *a, const char *l, size_t n, uint64_t off)
{
	const char *tp[3];
	size_t tl[3];
	if (split(l, n, '=', tp, tl, 3) != 2) {
		fatal(a, off, "ART method tracing: unable to parse option (line %.*s)", (int)n, l);
		return;
	}
	if (tl[0] != 5 || memcmp(tp[0], "clock", 5))
		return;
	if (tl[1] == 4 && !memcmp(tp[1], "dual", 4))
		a->dual = true;
	else if (tl[1] == 4 && !memcmp(tp[1], "wall", 4))
		a->dual = false;
	else if (tl[1] == 10 && !memcmp(tp[1], "thread-cpu", 10))
		fatal(a, off,
		      "ART method tracing: thread-cpu clock is *not* supported. Use wall or dual "
		      "clocks");
	else
		fatal(a, off, "ART method tracing: unknown clock %.*s", (int)tl[1], tp[1]);
}

/* u32 at r[k], bytes at or past end read as 0 (trace_processor reads past
 * a short record: undefined there) */
static uint32_t
u32_in(const uint8_t *r, size_t k, const uint8_t *end)
{
	uint8_t b[4] = {0, 0, 0, 0};
	for (size_t i = 0; i < 4; i++)
		if (r + k + i < end)
			b[i] = r[k + i];
	return u32(b);
}

/* ParseRecord of the bytes after the tid: one push. */
static void
record(struct art *a, const uint8_t *r, uint64_t off)
{
	const uint8_t *end = (const uint8_t *)a->buf.data + a->buf.len;
	uint32_t delta = a->dual ? u32_in(r, 8, end) : u32_in(r, 4, end);
	uint32_t action = u32_in(r, 0, end) & 3u;
	int64_t ts = (int64_t)(((uint64_t)a->start + delta) * 1000u);
	struct tm_scan *sc = a->sc;
	uint32_t detail = 0;
	if (a->ctl && a->ctl->keep_events)
		detail = tm_oplog_detail(&sc->log, "method", 6, action == 0 ? 'B' : 'E', 0, -1);
	tm_scan_note_ts(sc, ts);
	sc->n_events++;
	sc->n_packets++;
	tm_oplog_convert(&sc->log, 0, 0, 0, ts, TM_CONV_FAIL_DROP, detail, off);
}

/* The data header (streaming: version ^ 0xF0; non-streaming: it must
 * match the text header's).  False: failed. */
static bool
data_header(struct art *a, const uint8_t *h, uint64_t off, bool streaming)
{
	if (u32(h) != MAGIC) {
		fatal(a, off, "ART Method trace: expected start-header magic");
		return false;
	}
	uint32_t v = u16(h + 4);
	if (streaming)
		a->version = v ^ 0xF0u;
	else if (v != a->version) {
		fatal(a, off, "ART Method trace: trace version does not match data version");
		return false;
	}
	a->start = (int64_t)u64(h + 8);
	switch (a->version) {
	case 1:
		a->rec = 9;
		break;
	case 2:
		a->rec = 10;
		break;
	case 3:
		a->rec = u16(h + 16);
		if (a->rec < 14) {
			fatal(a, off, "ART method trace: record size %u below minimum %u for v3", a->rec,
			      14u);
			return false;
		}
		break;
	default:
		fatal(a, off, "Illegal version %u", a->version);
		return false;
	}
	return true;
}

static void
streaming(struct art *a, const uint8_t *d, size_t n)
{
	if (n < HDR) {
		fatal(a, n, "ART Method trace: trace is incomplete (ERR:tp-corrupt)");
		return;
	}
	if (!data_header(a, d, 0, true))
		return;
	/* the first pass (Parse): definitions, options, the summary */
	size_t p = HDR;
	bool done = false;
	while (!done && !a->failed) {
		if (n - p < 2)
			break;
		if (u16(d + p) != 0) {
			if (n - p < a->rec)
				break;
			p += a->rec;
			continue;
		}
		if (n - p < 3)
			break;
		uint8_t code = d[p + 2];
		size_t q = p + 3;
		if (code == 3) { /* summary */
			if (n - q < 4)
				break;
			uint32_t len = u32(d + q);
			q += 4;
			if (n - q < len)
				break;
			/* ParseSummary: skip 3 lines, options until "*threads" */
			const char *s = (const char *)d + q, *e = s + len;
			const char *ln[3];
			size_t ll[3];
			size_t k = 0;
			const char *c = s;
			/* StringSplitter on '\n': empty tokens skipped */
			while (k < 3) {
				while (c < e && *c == '\n')
					c++;
				if (c == e)
					break;
				const char *b = c;
				while (c < e && *c != '\n')
					c++;
				ln[k] = b;
				ll[k] = (size_t)(c - b);
				k++;
			}
			if (k < 3) {
				fatal(a, q, "ART method trace: unexpected format of summary section");
				break;
			}
			const char *cur = ln[2];
			size_t cl = ll[2];
			for (;;) {
				if (cl == 8 && !memcmp(cur, "*threads", 8))
					break;
				option_line(a, cur, cl, q);
				if (a->failed)
					break;
				while (c < e && *c == '\n')
					c++;
				if (c == e) {
					fatal(a, q,
					      "ART method trace: reached end of file before EOF marker");
					break;
				}
				cur = c;
				while (c < e && *c != '\n')
					c++;
				cl = (size_t)(c - cur);
			}
			done = true;
			p = q + len;
		} else if (code == 1) { /* methods */
			if (n - q < 2 || n - q - 2 < u16(d + q))
				break;
			method_line(a, (const char *)d + q + 2, u16(d + q), q);
			p = q + 2 + u16(d + q);
		} else if (code == 2) { /* threads */
			if (n - q < 4 || n - q - 4 < u16(d + q + 2))
				break;
			p = q + 4 + u16(d + q + 2);
		} else {
			fatal(a, p, "ART method trace: unknown opcode encountered %u", (unsigned)code);
		}
	}
	if (a->failed)
		return;
	if (!done) {
		fatal(a, n, "ART Method trace: trace is incomplete (ERR:tp-corrupt)");
		return;
	}
	/* OnPushDataToSorter: the records, up to the summary */
	for (p = HDR;;) {
		if (u16(d + p) == 0) {
			uint8_t code = d[p + 2];
			if (code == 3)
				break;
			if (code == 1)
				p += 3 + 2 + u16(d + p + 3);
			else
				p += 3 + 4 + u16(d + p + 5);
			continue;
		}
		record(a, d + p + 2, p);
		p += a->rec;
	}
}

/* The next '\n'-terminated line at *p, or false. */
static bool
next_line(const uint8_t *d, size_t n, size_t *p, const char **l, size_t *ll)
{
	const uint8_t *nl = memchr(d + *p, '\n', n - *p);
	if (!nl)
		return false;
	*l = (const char *)d + *p;
	*ll = (size_t)(nl - (d + *p));
	*p = (size_t)(nl - d) + 1;
	return true;
}

static void
non_streaming(struct art *a, const uint8_t *d, size_t n)
{
	enum { START, VERSION, OPTIONS, THREADS, METHODS, DATA_HDR, DATA } mode = START;
	size_t p = 0;
	const char *l;
	size_t ll;
	while (!a->failed && mode != DATA) {
		size_t at = p;
		if (mode == DATA_HDR) {
			if (n - p < HDR)
				break;
			if (!data_header(a, d + p, p, false))
				return;
			p += HDR;
			mode = DATA;
			break;
		}
		if (!next_line(d, n, &p, &l, &ll))
			break;
		/* l[0] of an empty line reads the '\n' after it */
		char first = ll ? l[0] : '\n';
		if (mode == VERSION) {
			long v;
			if (!to_num(l, ll, 10, true, &v) || v < 1 || v > 3) {
				fatal(a, at, "ART Method trace: trace version (%.*s) not supported", (int)ll, l);
				return;
			}
			a->version = (uint32_t)v;
			mode = OPTIONS;
			continue;
		}
		if (mode == START || first == '*') {
			if (ll == 8 && !memcmp(l, "*version", 8))
				mode = VERSION;
			else if (ll == 8 && !memcmp(l, "*threads", 8))
				mode = THREADS;
			else if (ll == 8 && !memcmp(l, "*methods", 8))
				mode = METHODS;
			else if (ll == 4 && !memcmp(l, "*end", 4))
				mode = DATA_HDR;
			else
				fatal(a, at,
				      "ART Method trace: unexpected line (%.*s) when expecting section "
				      "header (line starting with *)",
				      (int)ll, l);
			continue;
		}
		if (mode == OPTIONS) {
			option_line(a, l, ll, at);
		} else if (mode == THREADS) {
			const char *tp[3];
			size_t tl[3];
			long tid;
			if (split(l, ll, '\t', tp, tl, 3) != 2)
				fatal(a, at,
				      "ART method tracing: expected only one tab in thread line (context: "
				      "%.*s)",
				      (int)ll, l);
			else if (!to_num(tp[0], tl[0], 10, false, &tid))
				fatal(a, at,
				      "ART method tracing: failed parse tid in thread line (context: %.*s)",
				      (int)tl[0], tp[0]);
		} else if (mode == METHODS) {
			method_line(a, l, ll, at);
		}
	}
	if (a->failed)
		return;
	if (mode != DATA) {
		fatal(a, n, "ART Method trace: trace is incomplete (ERR:tp-corrupt)");
		return;
	}
	for (; n - p >= a->rec; p += a->rec)
		record(a, d + p + 2, p);
	if (p != n)
		fatal(a, n, "ART Method trace: trace is incomplete (ERR:tp-corrupt)");
}

static void
art_finish(void *self)
{
	struct art *a = self;
	if (a->status != TM_OK)
		return;
	const uint8_t *d = (const uint8_t *)a->buf.data;
	size_t n = a->buf.len;
	if (n < 4) {
		fatal(a, n, "ART Method trace: trace is incomplete (ERR:tp-corrupt)");
		return;
	}
	if (u32(d) == MAGIC)
		streaming(a, d, n);
	else
		non_streaming(a, d, n);
}

static void
art_feed(void *self, const char *p, size_t n)
{
	struct art *a = self;
	a->total += n;
	if (a->status != TM_OK)
		return;
	if (a->buf.len + n > MAX_ART) {
		a->status = tm_error_set(a->err, TM_ERR_LIMIT, "ART method trace larger than 1 GiB");
		return;
	}
	tm_buf_add(&a->buf, p, n);
}

static enum tm_status
scan(struct tm_stream *st, const void *mem, size_t n, size_t block, struct tm_scan *sc,
     const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	struct art a;
	memset(&a, 0, sizeof a);
	a.sc = sc;
	a.ctl = ctl;
	a.err = err;
	a.status = TM_OK;
	tm_buf_init(&a.buf);
	tm_scan_note_clock(sc, TM_CLOCK_MONOTONIC);
	struct tm_text_scanner ts = {&a, art_feed, art_finish, &a.status, &a.total};
	enum tm_status rc = st ? tm_scan_text(st, sc, ctl, err, &ts)
			       : tm_scan_text_mem(mem, n, block, sc, ctl, err, &ts);
	tm_buf_fini(&a.buf);
	return rc;
}

enum tm_status
tm_scan_art(struct tm_stream *st, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
	    struct tm_error *err)
{
	return scan(st, NULL, 0, 0, sc, ctl, err);
}

enum tm_status
tm_scan_art_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
		const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	return scan(NULL, p, n, block, sc, ctl, err);
}

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

#include "formats.h"
#include "scan.h"

#define MAGIC 0x574f4c53u
#define HDR 32u

struct art {
	struct tm_scan *sc;
	const struct tm_scan_ctl *ctl;
	const uint8_t *end; /* the member's end (it is held whole) */
	bool dual;
	int64_t start;
	uint32_t version, rec;
	bool failed;
	bool is_v2;
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

static void record_at(struct art *a, int64_t ts, uint32_t action, uint64_t off);

/* ParseRecord of the bytes after the tid: one push. */
static void
record(struct art *a, const uint8_t *r, uint64_t off)
{
	const uint8_t *end = a->end;
	uint32_t delta = a->dual ? u32_in(r, 8, end) : u32_in(r, 4, end);
	uint32_t action = u32_in(r, 0, end) & 3u;
	int64_t ts = (int64_t)(((uint64_t)a->start + delta) * 1000u);
	record_at(a, ts, action, off);
}

/* One push at ts (art_method_v2's PushRecord). */
static void
record_at(struct art *a, int64_t ts, uint32_t action, uint64_t off)
{
	struct tm_scan_event ev = {.ts = ts, .name = "method", .name_len = 6,
				   .phase = action == 0 ? 'B' : 'E', .align = -1, .dur = -1};
	a->sc->n_packets++;
	tm_scan_event(a->sc, a->ctl, &ev, off);
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

/* ---- art_method_v2 (art_method_v2_tokenizer.cc, ArtMethodV2Tokenizer) ---- */

/* DecodeSignedLeb128: the end of the value, or p itself when it is cut
 * off or longer than 10 bytes. */
static const uint8_t *
sleb(const uint8_t *p, const uint8_t *end, int64_t *v)
{
	const uint8_t *q = p;
	uint64_t r = 0;
	int shift = 0;
	uint8_t b;
	do {
		if (q >= end)
			return p;
		b = *q++;
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && shift < 70);
	if (b & 0x80)
		return p;
	if (shift < 64 && (b & 0x40))
		r |= ~(uint64_t)0 << shift;
	*v = (int64_t)r;
	return q;
}

static uint64_t
le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

struct v2thread {
	uint32_t id;
	uint64_t *stack;
	size_t n, cap;
};

static void
v2(struct art *a, const uint8_t *d, size_t n)
{
	if (n < 32) {
		fatal(a, n, "ART Method trace: trace is incomplete (ERR:tp-corrupt)");
		return;
	}
	if (u32(d) != MAGIC) {
		fatal(a, 0, "ART Method V2 trace: expected start-header magic");
		return;
	}
	uint32_t version = u16(d + 4);
	if (version != 0x05 && version != 0xf5 && version != 0x04 && version != 0xf4) {
		fatal(a, 0, "ART Method V2 trace: unsupported version %u", version);
		return;
	}
	bool dual = version == 0x05 || version == 0xf5;
	int64_t start = (int64_t)le(d + 6, 8);
	uint64_t freq = le(d + 22, 8);
	struct v2thread *th = NULL;
	size_t n_th = 0, cap_th = 0;
	size_t p = 32;
	bool complete = false;
	while (!a->failed && p < n) {
		uint8_t op = d[p];
		if (op == 0 || op == 1) {
			size_t hl = op == 1 ? 10 : 6, idb = op == 1 ? 8 : 4;
			if (n - p < 1 + hl)
				break;
			uint64_t id = le(d + p + 1, idb);
			size_t len = (size_t)le(d + p + 1 + idb, 2);
			if (n - p - 1 - hl < len)
				break;
			if (op == 0) {
				size_t k;
				for (k = 0; k < n_th && th[k].id != (uint32_t)id; k++)
					;
				if (k == n_th) {
					XGROW(th, cap_th, n_th + 1);
					th[n_th++] = (struct v2thread){(uint32_t)id, NULL, 0, 0};
				} /* (again: Insert keeps the first, its stack too) */
			}
			p += 1 + hl + len;
		} else if (op == 2) {
			if (n - p < 12)
				break;
			uint32_t tid = (uint32_t)le(d + p + 1, 4);
			uint32_t num = (uint32_t)le(d + p + 5, 3);
			uint32_t total = (uint32_t)le(d + p + 8, 4);
			if (n - p - 12 < total)
				break;
			size_t k;
			for (k = 0; k < n_th && th[k].id != tid; k++)
				;
			if (k == n_th) {
				fatal(a, p,
				      "ART Method V2 trace: trace entries encountered for unknown thread %u",
				      tid);
				break;
			}
			const uint8_t *c = d + p + 12, *e = c + total, *q;
			int64_t prev_m = 0, prev_ta = 0, diff = 0, dummy;
			for (uint32_t i = 0; i < num && c < e; i++) {
				if ((q = sleb(c, e, &diff)) == c)
					break;
				c = q;
				uint64_t ta = (uint64_t)prev_ta + (uint64_t)diff;
				prev_ta = (int64_t)ta;
				uint8_t action = (uint8_t)(ta & 3u);
				if (dual) {
					if ((q = sleb(c, e, &dummy)) == c)
						break;
					c = q;
				}
				int64_t ts = (int64_t)(ta >> 2);
				if (freq > 0)
					ts = (int64_t)((uint64_t)ts * 1000000000u) / (int64_t)freq;
				if (action == 0) {
					if (c >= e || (q = sleb(c, e, &diff)) == c)
						break;
					c = q;
					prev_m = (int64_t)((uint64_t)prev_m + (uint64_t)diff);
					XGROW(th[k].stack, th[k].cap, th[k].n + 1);
					th[k].stack[th[k].n++] = (uint64_t)prev_m;
				} else if (th[k].n) {
					th[k].n--;
				}
				record_at(a, (int64_t)((uint64_t)start + (uint64_t)ts), action, p);
			}
			p += 12 + total;
		} else if (op == 3) {
			/* the summary: the rest, complete once "*end" is in it */
			if (n - p >= 2) {
				const uint8_t *r = d + p + 2;
				for (size_t i = 0; i + 4 <= n - p - 2 && !complete; i++)
					complete = !memcmp(r + i, "*end", 4);
			}
			p = n;
		} else {
			fatal(a, p, "ART Method V2 trace: unknown opcode encountered %u", (unsigned)op);
		}
	}
	for (size_t k = 0; k < n_th; k++)
		free(th[k].stack);
	free(th);
	if (!a->failed && !complete)
		fatal(a, n, "ART Method trace: trace is incomplete (ERR:tp-corrupt)");
}

static void
art_done(void *self, const uint8_t *d, size_t n)
{
	struct art *a = self;
	a->end = d + n;
	if (n < 4 && !a->is_v2) {
		fatal(a, n, "ART Method trace: trace is incomplete (ERR:tp-corrupt)");
		return;
	}
	if (a->is_v2)
		v2(a, d, n);
	else if (u32(d) == MAGIC)
		streaming(a, d, n);
	else
		non_streaming(a, d, n);
}

/* The sniffers: art_method_v2's (ArtMethodV2Importer::Sniff) a "SLOW"
 * of version 4, 5, 0xf4 or 0xf5; after it in the table, art_method's
 * (ArtMethodImporter::Sniff) any other "SLOW", or "*version\n" within the
 * lookahead. */
static bool
v2_version(const uint8_t *d, size_t n)
{
	if (n < 6)
		return false;
	unsigned v = (unsigned)d[4] | ((unsigned)d[5] << 8);
	return v == 0x0004 || v == 0x0005 || v == 0x00f4 || v == 0x00f5;
}

bool
tm_sniff_art_method_v2(struct tm_sniff_in *in)
{
	return tm_sniff_starts(in->d, in->n, "SLOW") && v2_version(in->d, in->n);
}

bool
tm_sniff_art_method(struct tm_sniff_in *in)
{
	size_t ahead = in->n < TM_SNIFF_LOOKAHEAD ? in->n : TM_SNIFF_LOOKAHEAD;
	return tm_sniff_starts(in->d, in->n, "SLOW") || tm_sniff_starts(in->d, ahead, "*version\n");
}

enum tm_status
tm_scan_art(struct tm_stream *st, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
	    struct tm_error *err)
{
	struct art a;
	memset(&a, 0, sizeof a);
	a.is_v2 = sc->format == TM_FMT_ART_METHOD_V2;
	a.sc = sc;
	a.ctl = ctl;
	tm_scan_note_clock(sc, TM_CLOCK_MONOTONIC);
	return tm_scan_whole(st, sc, ctl, err, "ART method trace", 0, art_done, &a);
}

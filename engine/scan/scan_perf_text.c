/* SPDX-License-Identifier: MIT */
/*
 * perf_text scanner: the text `perf script` (and simpleperf's equivalent)
 * prints, as trace_processor's perf_text plugin reads it
 * (plugins/perf_text/perf_text_trace_tokenizer.cc,
 * PerfTextTraceTokenizer::Parse; perf_text_sample_line_parser.cc).
 *
 * A sample is its header line, its frame lines and an empty line.  The
 * header must parse (ParseSampleLine) or the import fails ("unable to parse
 * sample line"), so must every frame ("unable to find symbol / mapping in
 * frame").  A sample is pushed only once its empty line is read: with no
 * frame it counts perf_text_importer_sample_no_frames instead, and one cut
 * off by the end of the file is never pushed.  Its timestamp is
 * (int64)(seconds * 1000 * 1000 * 1000), converted with
 * ToTraceTime(MONOTONIC) (the descriptor's clock policy kMonotonic,
 * perf_text.cc): a failure skips the sample, a negative result is dropped by
 * the sorter.
 */
#include <stdio.h>
#include <string.h>

#include "scan.h"
#include "align_scan.h"

/* base::TrimWhitespace's set (string_utils.cc: "\t\n "). */
static bool
trim_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* isspace in the C locale (strtoul skips these). */
static bool
c_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool
dig(char c)
{
	return c >= '0' && c <= '9';
}

/* base::StringToUInt32 (strtoul, base 10, the whole C string consumed):
 * the string ends at its first NUL; leading C-locale spaces, one optional
 * sign, at least one digit, nothing after the digits.  Overflow still
 * parses (strtoul saturates; only the end pointer is checked). */
static bool
str_to_u32_ok(const char *p, size_t n)
{
	const char *z = memchr(p, '\0', n);
	if (z)
		n = (size_t)(z - p);
	if (n == 0)
		return false;
	size_t i = 0;
	while (i < n && c_space(p[i]))
		i++;
	if (i < n && (p[i] == '+' || p[i] == '-'))
		i++;
	if (i >= n || !dig(p[i]))
		return false;
	while (i < n && dig(p[i]))
		i++;
	return i == n;
}

/* FindTsAtEnd of line[0..n): the timestamp's start, or SIZE_MAX. */
static size_t
ts_at_end(const char *p, size_t n)
{
	if (n < 8)
		return SIZE_MAX;
	for (size_t i = n - 6; i < n; i++)
		if (!dig(p[i]))
			return SIZE_MAX;
	if (p[n - 7] != '.')
		return SIZE_MAX;
	size_t until = n - 7, c = SIZE_MAX;
	for (size_t i = until; i > 0; i--)
		if (p[i - 1] == ' ') {
			c = i - 1;
			break;
		}
	if (c == SIZE_MAX)
		return SIZE_MAX;
	for (size_t i = c + 1; i < until; i++)
		if (!dig(p[i]))
			return SIZE_MAX;
	return c + 1;
}

/* The pieces of before_ts (base::SplitString on ' ' after each tab became
 * two spaces: splitting on both, empty pieces dropped), from the last one
 * backwards: *k-th last piece into [*s, *e).  False when there are fewer. */
static bool
piece_from_end(const char *p, size_t n, size_t k, size_t *s, size_t *e)
{
	size_t i = n;
	for (size_t seen = 0;; seen++) {
		while (i > 0 && (p[i - 1] == ' ' || p[i - 1] == '\t'))
			i--;
		if (i == 0)
			return false;
		size_t end = i;
		while (i > 0 && p[i - 1] != ' ' && p[i - 1] != '\t')
			i--;
		if (seen == k) {
			*s = i;
			*e = end;
			return true;
		}
	}
}

/* The (int64) of a double as the x86-64 conversion gives it: out of range
 * or NaN is INT64_MIN (cvttsd2si; trace_processor's static_cast there is
 * undefined behaviour in C++ and does this on the machines it runs on). */
static int64_t
trunc_i64(double d)
{
	if (!(d > -9223372036854775808.0 && d < 9223372036854775808.0))
		return INT64_MIN;
	return (int64_t)d;
}

bool
tm_perf_text_sample_line(const char *line, size_t n, int64_t *ts)
{
	for (size_t cln = 0; cln < n; cln++) {
		if (line[cln] != ':')
			continue;
		size_t t = ts_at_end(line, cln);
		if (t == SIZE_MAX)
			continue;
		size_t s, e;
		if (!piece_from_end(line, t, 0, &s, &e))
			continue; /* no pieces */
		if (line[s] == '[' && line[e - 1] == ']') {
			/* "[cpu]": substr(1, size - 2) (a lone "[" is empty),
			 * and not the only piece (it lacks the tid then) */
			if (e - s < 2 || !str_to_u32_ok(line + s + 1, e - s - 2) ||
			    !piece_from_end(line, t, 1, &s, &e))
				continue;
		}
		/* pid/tid: SplitString on '/', 1 or 2 non-empty parts */
		size_t parts[3][2], np = 0;
		for (size_t i = s; i < e;) {
			while (i < e && line[i] == '/')
				i++;
			if (i == e)
				break;
			size_t b = i;
			while (i < e && line[i] != '/')
				i++;
			if (np < 3) {
				parts[np][0] = b;
				parts[np][1] = i;
			}
			np++;
		}
		if (np == 0 || np > 2)
			continue;
		size_t ti = np == 1 ? 0 : 1;
		if (!str_to_u32_ok(line + parts[ti][0], parts[ti][1] - parts[ti][0]))
			continue;
		if (np == 2 && !str_to_u32_ok(line + parts[0][0], parts[0][1] - parts[0][0]))
			continue;
		if (ts)
			*ts = trunc_i64(tm_dec_seconds(line + t, cln - t) * 1000 * 1000 * 1000);
		return true;
	}
	return false;
}

struct pt {
	struct tm_lines lr;
	struct tm_scan *sc;
	const struct tm_scan_ctl *ctl;
	bool in_sample;
	int64_t ts;
	uint64_t off;      /* the sample's first byte */
	uint32_t frames;
	char leaf[128];    /* the first frame's symbol (the sample's name) */
	size_t leaf_len;
};

static void
pt_fatal(struct pt *pt, const char *what, const char *ctx, size_t n, uint64_t off)
{
	struct tm_buf text;
	tm_buf_init(&text);
	tm_buf_addf(&text, "Perf text parser: %s (context: '", what);
	tm_buf_add(&text, ctx, n);
	tm_buf_adds(&text, "')");
	tm_oplog_fatal(&pt->sc->log, 0, text.data, off);
	tm_buf_fini(&text);
	pt->sc->failed = true;
	pt->lr.stop = true;
}

static void
pt_end_sample(struct pt *pt)
{
	struct tm_scan *sc = pt->sc;
	pt->in_sample = false;
	if (!pt->frames) {
		tm_oplog_stat(&sc->log, 0, TM_STAT_PERF_TEXT_NO_FRAMES, 1);
		return;
	}
	struct tm_scan_event ev = {.ts = pt->ts, .name = pt->leaf, .name_len = pt->leaf_len,
				   .phase = 'P', .align = AL_INSTANT, .dur = -1};
	tm_scan_event(sc, pt->ctl, &ev, pt->off);
}

static void
pt_line(void *self, const char *l, size_t n, uint64_t off)
{
	struct pt *pt = self;
	if (!pt->in_sample) {
		pt->sc->n_packets++;
		if (!tm_perf_text_sample_line(l, n, &pt->ts)) {
			pt_fatal(pt, "unable to parse sample line", l, n, off);
			return;
		}
		pt->in_sample = true;
		pt->off = off;
		pt->frames = 0;
		pt->leaf_len = 0;
		return;
	}
	/* a frame: TrimWhitespace, then "<addr> <symbol>[+off] (<mapping>)" */
	while (n && trim_ws(l[0])) {
		l++;
		n--;
		off++;
	}
	while (n && trim_ws(l[n - 1]))
		n--;
	if (!n) {
		pt_end_sample(pt);
		return;
	}
	const char *sp = memchr(l, ' ', n);
	if (!sp) {
		pt_fatal(pt, "unable to find symbol in frame", l, n, off);
		return;
	}
	size_t open = SIZE_MAX;
	for (size_t i = n; i > 0; i--)
		if (l[i - 1] == '(') {
			open = i - 1;
			break;
		}
	if (open == SIZE_MAX || l[n - 1] != ')') {
		pt_fatal(pt, "unable to find mapping in frame", l, n, off);
		return;
	}
	if (!pt->frames) {
		/* the symbol: between the first space and the mapping, trimmed,
		 * up to its last '+' */
		size_t a = (size_t)(sp - l), b = open > a ? open : a;
		while (a < b && trim_ws(l[a]))
			a++;
		while (b > a && trim_ws(l[b - 1]))
			b--;
		for (size_t i = b; i > a; i--)
			if (l[i - 1] == '+') {
				b = i - 1;
				break;
			}
		size_t len = b - a < sizeof pt->leaf ? b - a : sizeof pt->leaf;
		memcpy(pt->leaf, l + a, len);
		pt->leaf_len = len;
	}
	pt->frames++;
}

static enum tm_status
scan(struct tm_stream *st, const void *mem, size_t n, size_t block, struct tm_scan *sc,
     const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	struct pt pt;
	memset(&pt, 0, sizeof pt);
	tm_lines_init(&pt.lr, "perf_text", err);
	pt.lr.self = &pt;
	pt.lr.line = pt_line;
	pt.sc = sc;
	pt.ctl = ctl;
	tm_scan_note_clock(sc, TM_CLOCK_MONOTONIC);
	enum tm_status rc = tm_scan_lines(st, mem, n, block, sc, ctl, err, &pt.lr);
	tm_lines_fini(&pt.lr);
	return rc;
}

enum tm_status
tm_scan_perf_text(struct tm_stream *st, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
		  struct tm_error *err)
{
	return scan(st, NULL, 0, 0, sc, ctl, err);
}

enum tm_status
tm_scan_perf_text_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
		      const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	return scan(NULL, p, n, block, sc, ctl, err);
}

/* The format table's sniffer (util/trace_type.cc, GuessTraceType): the
 * first line is a sample's first line. */
bool
tm_sniff_perf_text(struct tm_sniff_in *in)
{
	const uint8_t *nl = memchr(in->d, '\n', in->n);
	if (!nl)
		return false;
	return tm_perf_text_sample_line((const char *)in->d, (size_t)(nl - in->d), NULL);
}

/* SPDX-License-Identifier: MIT */
/*
 * strace scanner: `strace -ttt [-f]` output as trace_processor's strace
 * plugin reads it (plugins/strace/strace_trace_tokenizer.cc,
 * StraceTraceTokenizer::Parse and ParseStraceLine).
 *
 * Each '\n'-terminated line: a line that is no syscall counts
 * strace_parse_failure (strace_unsupported_timestamp_format when its
 * timestamp has a ':', -t/-tt); a syscall line converts its timestamp
 * (seconds * 1e9 + the fraction read as a whole number of microseconds,
 * whatever its length) with ConvertDefaultClockToTraceTime, REALTIME by the
 * descriptor's clock policy; then a line without a pid is not kept
 * (strace_missing_pid, counted only when the conversion succeeded), a
 * line with one is pushed.
 */
#include <stdio.h>
#include <string.h>

#include "scan.h"
#include "align_scan.h"

/* base::TrimWhitespace's set */
static bool
trim_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static void
trim(const char **p, size_t *n)
{
	while (*n && trim_ws((*p)[0])) {
		(*p)++;
		(*n)--;
	}
	while (*n && trim_ws((*p)[*n - 1]))
		(*n)--;
}

static bool
dig(char c)
{
	return c >= '0' && c <= '9';
}

static size_t
find_c(const char *p, size_t n, char c)
{
	const char *q = memchr(p, c, n);
	return q ? (size_t)(q - p) : SIZE_MAX;
}

static size_t
find_s(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s);
	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(p + i, s, k))
			return i;
	return SIZE_MAX;
}

/* base::StringViewToInt64: one leading '+' dropped, then from_chars (an
 * optional '-', digits, all of it, in range). */
static bool
to_i64(const char *p, size_t n, int64_t *out)
{
	size_t i = 0;
	if (n && p[0] == '+')
		i++;
	bool neg = i < n && p[i] == '-';
	i += neg;
	if (i >= n)
		return false;
	uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		if (!dig(p[i]))
			return false;
		uint64_t d = (uint64_t)(p[i] - '0');
		if (v > (lim - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

/* ParseEpochTimestamp */
static bool
epoch_ts(const char *s, size_t n, int64_t *ns)
{
	if (find_c(s, n, ':') != SIZE_MAX)
		return false;
	size_t dot = find_c(s, n, '.');
	size_t wn = dot == SIZE_MAX ? n : dot;
	int64_t sec, us;
	if (!to_i64(s, wn, &sec) || sec < 0 || sec > INT64_MAX / 1000000000)
		return false;
	uint64_t v = (uint64_t)sec * 1000000000u;
	if (dot != SIZE_MAX && dot + 1 < n) {
		if (!to_i64(s + dot + 1, n - dot - 1, &us) || us < 0 || us > 999999)
			return false;
		v += (uint64_t)us * 1000u; /* (may pass INT64_MAX: wraps, as there) */
	}
	*ns = (int64_t)v;
	return true;
}

enum tm_strace_line
tm_strace_parse(const char *p, size_t n, struct tm_strace_event *ev)
{
	trim(&p, &n);
	if (n == 0 || p[0] == '-' || p[0] == '+')
		return TM_ST_NOT_SYSCALL;
	ev->has_pid = false;
	size_t sp = find_c(p, n, ' ');
	if (sp != SIZE_MAX) {
		bool all = sp > 0 && sp < 10;
		for (size_t i = 0; i < sp && all; i++)
			all = dig(p[i]);
		if (all) {
			/* fewer than 10 digits: always a uint32 */
			uint32_t pid = 0;
			for (size_t i = 0; i < sp; i++)
				pid = pid * 10u + (uint32_t)(p[i] - '0');
			ev->pid = pid;
			ev->has_pid = true;
			p += sp + 1;
			n -= sp + 1;
			trim(&p, &n);
		}
	}
	sp = find_c(p, n, ' ');
	if (sp == SIZE_MAX)
		return TM_ST_NOT_SYSCALL;
	if (!epoch_ts(p, sp, &ev->ts))
		return find_c(p, sp, ':') != SIZE_MAX ? TM_ST_UNSUPPORTED_TS : TM_ST_NOT_SYSCALL;
	p += sp + 1;
	n -= sp + 1;
	trim(&p, &n);
	if (n == 0)
		return TM_ST_NOT_SYSCALL;
	if (n >= 5 && !memcmp(p, "<... ", 5)) {
		size_t e = find_s(p + 5, n - 5, " resumed>");
		if (e == SIZE_MAX)
			return TM_ST_NOT_SYSCALL;
		ev->name = p + 5;
		ev->name_len = e;
		size_t skip = 5 + e + 9;
		p += skip;
		n -= skip;
		trim(&p, &n);
	} else {
		size_t paren = find_c(p, n, '(');
		if (paren == SIZE_MAX)
			return TM_ST_NOT_SYSCALL;
		ev->name = p;
		ev->name_len = paren;
		p += paren + 1;
		n -= paren + 1;
	}
	if (find_s(p, n, "<unfinished ...>") != SIZE_MAX)
		return TM_ST_SYSCALL;
	for (size_t i = 0; i < n; i++) {
		if (p[i] != ')')
			continue;
		size_t a = i + 1;
		while (a < n && (p[a] == ' ' || p[a] == '\t' || p[a] == '\n' || p[a] == '\v' ||
				 p[a] == '\f' || p[a] == '\r'))
			a++;
		if (a < n && p[a] == '=')
			return TM_ST_SYSCALL;
	}
	return find_c(p, n, '=') != SIZE_MAX ? TM_ST_SYSCALL : TM_ST_NOT_SYSCALL;
}

struct st {
	struct tm_lines lr;
	struct tm_scan *sc;
	const struct tm_scan_ctl *ctl;
	uint64_t n_no_pid;
};

static void
st_line(void *self, const char *l, size_t n, uint64_t off)
{
	struct st *st = self;
	struct tm_scan *sc = st->sc;
	struct tm_strace_event ev;
	sc->n_packets++;
	enum tm_strace_line what = tm_strace_parse(l, n, &ev);
	if (what != TM_ST_SYSCALL) {
		tm_oplog_stat(&sc->log, 0,
			      what == TM_ST_UNSUPPORTED_TS ? TM_STAT_STRACE_UNSUPPORTED_TS
							   : TM_STAT_STRACE_PARSE_FAILURE,
			      1);
		return;
	}
	if (!ev.has_pid) {
		/* converted (a failure counts), never pushed; its
		 * strace_missing_pid once the conversion succeeds */
		tm_scan_note_ts(sc, ev.ts); /* (tm_scan_event notes the others') */
		st->n_no_pid++;
		tm_oplog_convert(&sc->log, 0, 0, 0, ev.ts,
				 TM_CONV_FAIL_DROP | TM_CONV_NO_PUSH | TM_CONV_NO_PID, 0, off);
		return;
	}
	struct tm_scan_event e = {.ts = ev.ts, .name = ev.name, .name_len = ev.name_len, .phase = 'S',
				  .align = AL_INSTANT, .track = ev.pid, .dur = -1};
	tm_scan_event(sc, st->ctl, &e, off);
}

static void
st_eof(void *self)
{
	struct st *st = self;
	if (st->n_no_pid)
		tm_scan_warn(st->sc,
			     "%llu syscall line%s without a pid (strace without -f): trace_processor "
			     "converts their timestamps but keeps none of them (strace_missing_pid)",
			     (unsigned long long)st->n_no_pid, st->n_no_pid == 1 ? "" : "s");
}

static enum tm_status
scan(struct tm_stream *s, const void *mem, size_t n, size_t block, struct tm_scan *sc,
     const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	struct st st;
	memset(&st, 0, sizeof st);
	tm_lines_init(&st.lr, "strace", err);
	st.lr.self = &st;
	st.lr.line = st_line;
	st.lr.eof = st_eof;
	st.sc = sc;
	st.ctl = ctl;
	tm_scan_note_clock(sc, TM_CLOCK_REALTIME);
	enum tm_status rc = tm_scan_lines(s, mem, n, block, sc, ctl, err, &st.lr);
	tm_lines_fini(&st.lr);
	return rc;
}

enum tm_status
tm_scan_strace(struct tm_stream *s, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
	       struct tm_error *err)
{
	return scan(s, NULL, 0, 0, sc, ctl, err);
}

enum tm_status
tm_scan_strace_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
		   const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	return scan(NULL, p, n, block, sc, ctl, err);
}

/* The format table's sniffer (util/trace_type.cc, GuessTraceType): the
 * first line is a system call's. */
bool
tm_sniff_strace(struct tm_sniff_in *in)
{
	const uint8_t *nl = memchr(in->d, '\n', in->n);
	size_t n = nl ? (size_t)(nl - in->d) : in->n;
	struct tm_strace_event ev;
	return tm_strace_parse((const char *)in->d, n, &ev) == TM_ST_SYSCALL;
}

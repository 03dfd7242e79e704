/* SPDX-License-Identifier: MIT */
/*
 * Systrace text scanner: trace_processor's SystraceTraceParser
 * (importers/systrace/systrace_trace_parser.cc) and line tokenizer
 * (systrace_line_tokenizer.cc), streaming.  Only '\n'-terminated lines are
 * looked at (there is no EOF flush); the line regex is matched by a small
 * hand-written backtracking matcher with the regex engine's leftmost-first
 * priorities, memoised so that no line costs more than O(len^2).
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"
#include "atrace.h"
#include "json_lex.h"
#include "tracknames.h"

#define MAX_LINE (64u * 1024u * 1024u)

/* ---- the line regex ----
 * -(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*([a-zA-Z.]{3}[0-9a-f.]{1,2}\s*)?(\d+\.\d+):\s+(\S+):
 */

enum { NSTEP = 19 };

struct rx {
	const char *s;
	size_t len;
	uint16_t *failed; /* NSTEP * (len + 1): == gen when m() failed there */
	uint16_t gen;
	size_t g1s, g1e, g5s, g5e, g6s, g6e, end;
	/* group 5's two runs of digits as first_path read them (their
	 * values modulo 2^64), for tokenize: ts_ok when it set them */
	bool ts_ok;
	uint64_t ts_int, ts_frac;
	size_t ts_fn; /* the fraction's digits */
	uint64_t pid; /* group 1's value */
};

static bool
is_sp(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static bool
is_dg(char c)
{
	return c >= '0' && c <= '9';
}

static bool
is_alpha_dot(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.';
}

static bool
is_hex_dot(char c)
{
	return is_dg(c) || (c >= 'a' && c <= 'f') || c == '.';
}

static size_t
run(const struct rx *r, size_t pos, bool (*cls)(char), size_t max)
{
	size_t k = 0;
	while (pos + k < r->len && k < max && cls(r->s[pos + k]))
		k++;
	return k;
}

static bool
not_sp(char c)
{
	return !is_sp(c);
}

static bool
is_dash(char c)
{
	return c == '-';
}

static bool m(struct rx *r, int st, size_t pos);

/* Greedy quantifier: try counts from the longest down to min. */
static bool
greedy(struct rx *r, int next, size_t pos, bool (*cls)(char), size_t min, size_t max)
{
	size_t k = run(r, pos, cls, max);
	for (;; k--) {
		if (k < min)
			return false;
		if (m(r, next, pos + k))
			return true;
		if (k == 0)
			return false;
	}
}

static bool
at(const struct rx *r, size_t pos, char c)
{
	return pos < r->len && r->s[pos] == c;
}

static bool
m_(struct rx *r, int st, size_t pos)
{
	switch (st) {
	case 0:
		return at(r, pos, '-') && m(r, 1, pos + 1);
	case 1: {
		size_t k = run(r, pos, is_dg, SIZE_MAX);
		for (; k >= 1; k--) {
			r->g1s = pos;
			r->g1e = pos + k;
			if (m(r, 2, pos + k))
				return true;
		}
		return false;
	}
	case 2:
		return greedy(r, 3, pos, is_sp, 1, SIZE_MAX);
	case 3:
		return (at(r, pos, '(') && m(r, 4, pos + 1)) || m(r, 4, pos);
	case 4:
		return greedy(r, 5, pos, is_sp, 0, SIZE_MAX);
	case 5:
		/* (\d+|-+)? */
		if (greedy(r, 6, pos, is_dg, 1, SIZE_MAX))
			return true;
		if (greedy(r, 6, pos, is_dash, 1, SIZE_MAX))
			return true;
		return m(r, 6, pos);
	case 6:
		return (at(r, pos, ')') && m(r, 7, pos + 1)) || m(r, 7, pos);
	case 7:
		return (pos < r->len && is_sp(r->s[pos]) && m(r, 8, pos + 1)) || m(r, 8, pos);
	case 8:
		return at(r, pos, '[') && m(r, 9, pos + 1);
	case 9:
		return greedy(r, 10, pos, is_dg, 1, SIZE_MAX);
	case 10:
		return at(r, pos, ']') && m(r, 11, pos + 1);
	case 11:
		return greedy(r, 12, pos, is_sp, 0, SIZE_MAX);
	case 12:
		/* ([a-zA-Z.]{3}[0-9a-f.]{1,2}\s*)? */
		if (run(r, pos, is_alpha_dot, 3) == 3) {
			size_t k = run(r, pos + 3, is_hex_dot, 2);
			for (; k >= 1; k--)
				if (greedy(r, 13, pos + 3 + k, is_sp, 0, SIZE_MAX))
					return true;
		}
		return m(r, 13, pos);
	case 13: {
		size_t a = run(r, pos, is_dg, SIZE_MAX);
		if (!a || !at(r, pos + a, '.'))
			return false;
		size_t b = run(r, pos + a + 1, is_dg, SIZE_MAX);
		if (!b)
			return false;
		r->g5s = pos;
		r->g5e = pos + a + 1 + b;
		return m(r, 14, r->g5e);
	}
	case 14:
		return at(r, pos, ':') && m(r, 15, pos + 1);
	case 15:
		return greedy(r, 16, pos, is_sp, 1, SIZE_MAX);
	case 16: {
		size_t k = run(r, pos, not_sp, SIZE_MAX);
		for (; k >= 1; k--) {
			r->g6s = pos;
			r->g6e = pos + k;
			if (m(r, 17, pos + k))
				return true;
		}
		return false;
	}
	case 17:
		if (!at(r, pos, ':'))
			return false;
		r->end = pos + 1;
		return true;
	}
	return false;
}

static bool
m(struct rx *r, int st, size_t pos)
{
	uint16_t *f = &r->failed[(size_t)st * (r->len + 1) + pos];
	if (*f == r->gen)
		return false;
	if (m_(r, st, pos))
		return true;
	*f = r->gen;
	return false;
}

/* Character classes of first_path, one bit each. */
enum { C_DG = 1, C_SP = 2, C_AD = 4, C_HD = 8 };

static const uint8_t cls_tab[256] = {
	['\t'] = C_SP, ['\n'] = C_SP, ['\v'] = C_SP, ['\f'] = C_SP, ['\r'] = C_SP, [' '] = C_SP,
	['0'] = C_DG | C_HD, ['1'] = C_DG | C_HD, ['2'] = C_DG | C_HD, ['3'] = C_DG | C_HD,
	['4'] = C_DG | C_HD, ['5'] = C_DG | C_HD, ['6'] = C_DG | C_HD, ['7'] = C_DG | C_HD,
	['8'] = C_DG | C_HD, ['9'] = C_DG | C_HD, ['.'] = C_AD | C_HD,
	['a'] = C_AD | C_HD, ['b'] = C_AD | C_HD, ['c'] = C_AD | C_HD, ['d'] = C_AD | C_HD,
	['e'] = C_AD | C_HD, ['f'] = C_AD | C_HD,
	['g'] = C_AD, ['h'] = C_AD, ['i'] = C_AD, ['j'] = C_AD, ['k'] = C_AD, ['l'] = C_AD,
	['m'] = C_AD, ['n'] = C_AD, ['o'] = C_AD, ['p'] = C_AD, ['q'] = C_AD, ['r'] = C_AD,
	['s'] = C_AD, ['t'] = C_AD, ['u'] = C_AD, ['v'] = C_AD, ['w'] = C_AD, ['x'] = C_AD,
	['y'] = C_AD, ['z'] = C_AD,
	['A'] = C_AD, ['B'] = C_AD, ['C'] = C_AD, ['D'] = C_AD, ['E'] = C_AD, ['F'] = C_AD,
	['G'] = C_AD, ['H'] = C_AD, ['I'] = C_AD, ['J'] = C_AD, ['K'] = C_AD, ['L'] = C_AD,
	['M'] = C_AD, ['N'] = C_AD, ['O'] = C_AD, ['P'] = C_AD, ['Q'] = C_AD, ['R'] = C_AD,
	['S'] = C_AD, ['T'] = C_AD, ['U'] = C_AD, ['V'] = C_AD, ['W'] = C_AD, ['X'] = C_AD,
	['Y'] = C_AD, ['Z'] = C_AD,
};

/* The end of the run of class c at p (bounded by e). */
static inline const char *
span(const char *p, const char *e, unsigned c)
{
	while (p < e && (cls_tab[(unsigned char)*p] & c))
		p++;
	return p;
}

/* The end of the run of non-space bytes at q (bounded by e): 16 bytes at
 * a time while 16 are left (a space is ' ' or 9 to 13). */
static inline const char *
span_nonsp(const char *q, const char *e)
{
#ifdef __SSE2__
	while (e - q >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)q);
		__m128i t = _mm_sub_epi8(x, _mm_set1_epi8(9));
		__m128i sp = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(4)), t),
					  _mm_cmpeq_epi8(x, _mm_set1_epi8(' ')));
		unsigned m = (unsigned)_mm_movemask_epi8(sp);
		if (m)
			return q + __builtin_ctz(m);
		q += 16;
	}
#endif
	while (q < e && !(cls_tab[(unsigned char)*q] & C_SP))
		q++;
	return q;
}

/* The regex's first path in priority order from the '-' at pos: every
 * greedy quantifier at its longest, every optional part present when it
 * can be.  When that path matches, it is the match the backtracking search
 * returns (it tries that path first); when it does not, false, and the
 * caller runs the full matcher.  The one step where the first path always
 * backtracks, (\S+): with ':' after it, is solved directly: the longest
 * non-space run ending just before a ':'. */
static bool
first_path(struct rx *r, size_t pos)
{
	const char *s = r->s, *e = s + r->len, *p = s + pos + 1, *q;

	uint64_t pid, x;
	q = tm_jl_digits(p, e, &pid);
	if (q == p)
		return false;
	size_t g1s = (size_t)(p - s), g1e = (size_t)(q - s);
	p = span(q, e, C_SP);
	if (p == q)
		return false;
	p += p < e && *p == '(';
	p = span(p, e, C_SP);
	q = tm_jl_digits(p, e, &x);
	if (q == p)
		while (q < e && *q == '-')
			q++;
	p = q;
	p += p < e && *p == ')';
	p += p < e && (cls_tab[(unsigned char)*p] & C_SP);
	if (p == e || *p != '[')
		return false;
	q = tm_jl_digits(++p, e, &x);
	if (q == p || q == e || *q != ']')
		return false;
	p = span(q + 1, e, C_SP);
	if (e - p >= 4 && (cls_tab[(unsigned char)p[0]] & cls_tab[(unsigned char)p[1]] &
			   cls_tab[(unsigned char)p[2]] & C_AD) &&
	    (cls_tab[(unsigned char)p[3]] & C_HD)) {
		p += 4;
		p += p < e && (cls_tab[(unsigned char)*p] & C_HD);
		p = span(p, e, C_SP);
	}
	size_t g5s = (size_t)(p - s);
	uint64_t ts_int, ts_frac;
	q = tm_jl_digits(p, e, &ts_int);
	if (q == p || q == e || *q != '.')
		return false;
	p = tm_jl_digits(++q, e, &ts_frac);
	if (p == q || p == e || *p != ':')
		return false;
	size_t g5e = (size_t)(p - s), ts_fn = (size_t)(p - q);
	q = span(++p, e, C_SP);
	if (q == p)
		return false;
	p = q;
	q = span_nonsp(q, e);
	/* q: the end of the non-space run; back to its last ':' after p */
	while (q > p + 1 && q[-1] != ':')
		q--;
	if (q <= p + 1)
		return false;
	r->g1s = g1s;
	r->g1e = g1e;
	r->g5s = g5s;
	r->g5e = g5e;
	r->g6s = (size_t)(p - s);
	r->g6e = (size_t)(q - 1 - s);
	r->end = (size_t)(q - s);
	r->ts_ok = true;
	r->pid = pid;
	r->ts_int = ts_int;
	r->ts_frac = ts_frac;
	r->ts_fn = ts_fn;
	return true;
}

static double
to_ns(double sec)
{
	return sec * 1e9;
}

/* strtod of "digits.digits" (the regex's group 5).  With at most 15
 * digits the mantissa and the power of ten are exact doubles, so one
 * correctly rounded division gives strtod's (correctly rounded) result
 * (Clinger's fast path); longer numbers go through strtod. */
static const double dec_p10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6, 1e7,
				 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

double
tm_dec_seconds(const char *s, size_t n)
{
	const double *p10 = dec_p10;
	if (n <= 16) {
		uint64_t mant = 0;
		size_t frac = 0;
		bool dot = false;
		for (size_t i = 0; i < n; i++) {
			if (s[i] == '.') {
				dot = true;
				continue;
			}
			mant = mant * 10 + (uint64_t)(s[i] - '0');
			frac += dot;
		}
		return (double)mant / p10[frac];
	}
	char *ts = xstrndup(s, n);
	double sec = strtod(ts, NULL);
	free(ts);
	return sec;
}

/* The full search: from every '-' in turn, the memoised backtracking
 * matcher (fast says whether the first path is tried first). */
static bool
search(struct rx *r, bool fast)
{
	/* The memo of short lines is kept per thread and invalidated by a
	 * generation number instead of being cleared for every line (clearing
	 * it was a third of the scan's time). */
	static _Thread_local uint16_t memo[NSTEP * 257];
	static _Thread_local uint16_t memo_gen;
	const char *line = r->s;
	size_t clen = r->len;
	bool ok = false;
	r->failed = NULL;
	for (size_t i = 0; i < clen; i++) {
		const char *d = memchr(line + i, '-', clen - i);
		if (!d)
			break;
		i = (size_t)(d - line);
		/* -(\d+) cannot match here */
		if (i + 1 >= clen || !is_dg(line[i + 1]))
			continue;
		if (fast && first_path(r, i)) {
			ok = true;
			break;
		}
		if (!r->failed) {
			size_t need = (size_t)NSTEP * (clen + 1);
			if (need <= sizeof memo / sizeof memo[0]) {
				if (++memo_gen == 0) { /* wrapped: stale marks could match again */
					memset(memo, 0, sizeof memo);
					memo_gen = 1;
				}
				r->failed = memo;
				r->gen = memo_gen;
			} else {
				r->failed = xcalloc(need, sizeof *r->failed);
				r->gen = 1;
			}
		}
		if (m(r, 0, i)) {
			ok = true;
			break;
		}
	}
	if (r->failed != memo)
		free(r->failed);
	return ok;
}

/* strtoul of group 1 (digits only), cast to uint32_t: saturated at
 * ULONG_MAX on overflow; 64 digits or more count as an overflow. */
static uint32_t
pid_of(const char *s, size_t n)
{
	uint64_t v = 0;
	if (n >= 64)
		return UINT32_MAX;
	for (size_t i = 0; i < n; i++) {
		uint64_t d = (uint64_t)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return UINT32_MAX;
		v = v * 10 + d;
	}
	return (uint32_t)v;
}

/* clen: strnlen(line, len), the caller's when it knows it. */
static bool
tokenize(const char *line, size_t len, size_t clen, struct tm_systrace_line *out, bool fast)
{
	/* The regex sees the line as a C string: up to its first NUL.  (The
	 * rest of r is set by the matcher: zeroing all of it, a rep stos,
	 * was a tenth of a systrace line's tokenizing.) */
	struct rx r;
	r.s = line;
	r.len = clen;
	r.ts_ok = false;
	if (!search(&r, fast))
		return false;
	/* pid_of's value, where it cannot saturate (19 digits or fewer) */
	out->pid = r.ts_ok && r.g1e - r.g1s <= 19 ? (uint32_t)r.pid
						 : pid_of(line + r.g1s, r.g1e - r.g1s);
	out->task = line; /* up to its '-' (leading blanks: the reader's) */
	out->task_len = r.g1s ? r.g1s - 1 : 0;
	/* tm_dec_seconds's own arithmetic on first_path's digit values (at
	 * most 15 digits: the mantissa over the fraction's power of ten) */
	size_t g5n = r.g5e - r.g5s;
	double sec = r.ts_ok && g5n <= 16
			     ? (double)(r.ts_int * tm_jl_pow10[r.ts_fn] + r.ts_frac) / dec_p10[r.ts_fn]
			     : tm_dec_seconds(line + r.g5s, g5n);
	double ns = to_ns(sec);
	out->ts = (ns < 9223372036854775808.0 && ns >= -9223372036854775808.0) ? (int64_t)ns
										: INT64_MIN;
	out->event = line + r.g6s;
	out->event_len = r.g6e - r.g6s;
	const char *a = line + r.end, *e = line + len;
	while (a < e && isspace((unsigned char)*a))
		a++;
	while (e > a && isspace((unsigned char)e[-1]))
		e--;
	out->args = a;
	out->args_len = (size_t)(e - a);
	return true;
}

bool
tm_systrace_tokenize(const char *line, size_t len, struct tm_systrace_line *out)
{
	return tokenize(line, len, strnlen(line, len), out, true);
}

bool
tm_systrace_tokenize_ref(const char *line, size_t len, struct tm_systrace_line *out)
{
	return tokenize(line, len, strnlen(line, len), out, false);
}

static bool
field_u32(const char *s, size_t n, uint32_t *v)
{
	char buf[32];
	if (!n || n >= sizeof buf)
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	char *q;
	*v = (uint32_t)strtoul(buf, &q, 10);
	return !*q;
}

/* ---- the scanner ---- */

enum sstate { S_BEFORE, S_HTML, S_DATA, S_SYS, S_DUMP_LONG, S_DUMP_SHORT, S_CGROUP, S_END };

struct ss {
	struct tm_scan *sc;
	const struct tm_scan_ctl *ctl;
	enum sstate st;
	struct tm_buf carry; /* partial line (or the unprocessed head) */
	struct tm_buf clean; /* an atrace text without its invalid UTF-8 */
	uint64_t carry_off;
	uint64_t total;
	size_t nl_scanned; /* S_BEFORE: carry bytes known to hold no newline */
	enum tm_status status;
	struct tm_error *err;
};

#define contains(s, n, lit) contains_n(s, n, lit, sizeof lit - 1)

static bool
contains_n(const char *s, size_t n, const char *lit, size_t l)
{
	if (l > n)
		return false;
	for (size_t i = 0; i + l <= n; i++) {
		const char *p = memchr(s + i, lit[0], n - l + 1 - i);
		if (!p)
			return false;
		i = (size_t)(p - s);
		if (!memcmp(p, lit, l))
			return true;
	}
	return false;
}

static bool
starts(const char *s, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	return n >= l && !memcmp(s, lit, l);
}

/* SplitOnSpaces: tokens separated by ' ' only. */
static size_t
split_spaces(const char *s, size_t n, const char **tok, size_t *tl, size_t max)
{
	size_t nt = 0;
	for (size_t i = 0; i < n; i++) {
		while (i < n && s[i] == ' ')
			i++;
		if (i != n) {
			size_t st = i;
			while (i < n && s[i] != ' ')
				i++;
			if (nt < max) {
				tok[nt] = s + st;
				tl[nt] = i - st;
			}
			nt++;
		}
	}
	return nt;
}

static void
ss_fatal(struct ss *ss, const char *text, uint64_t off)
{
	tm_oplog_fatal(&ss->sc->log, 0, text, off);
	ss->sc->failed = true;
	ss->st = S_END;
}

static void
dump_line(struct ss *ss, const char *l, size_t n, uint64_t off)
{
	if (contains(l, n, "</script>")) {
		ss->st = S_HTML;
		return;
	}
	const char *tok[12];
	size_t tl[12];
	size_t nt = split_spaces(l, n, tok, tl, 12);
	if (nt == 4 && tl[0] == 4 && !memcmp(tok[0], "USER", 4) && tl[1] == 3 &&
	    !memcmp(tok[1], "PID", 3) && tl[2] == 3 && !memcmp(tok[2], "TID", 3) && tl[3] == 3 &&
	    !memcmp(tok[3], "CMD", 3)) {
		ss->st = S_DUMP_SHORT;
	} else if (nt > 4 && tl[0] == 4 && !memcmp(tok[0], "USER", 4) && tl[1] == 3 &&
		   !memcmp(tok[1], "PID", 3) && tl[2] == 4 && !memcmp(tok[2], "PPID", 4) &&
		   tl[3] == 3 && !memcmp(tok[3], "VSZ", 3)) {
		ss->st = S_DUMP_LONG;
	} else if ((ss->st == S_DUMP_LONG && nt >= 10) || (ss->st == S_DUMP_SHORT && nt >= 4)) {
		uint32_t a, b;
		if (!field_u32(tok[1], tl[1], &a) || !field_u32(tok[2], tl[2], &b))
			ss_fatal(ss, "Could not parse PROCESS DUMP line", off);
	}
}

/* What next_line saw in a line besides its end (one_line skips the
 * searches they make moot). */
enum { L_LT = 1, L_NUL = 2 };

static void
one_line(struct ss *ss, const char *l, size_t n, uint64_t off, unsigned seen)
{
	switch (ss->st) {
	case S_HTML:
		if (contains(l, n, "<script class=\"trace-data\" type=\"application/text\">"))
			ss->st = S_DATA;
		break;
	case S_DATA:
		if (starts(l, n, "#") && contains(l, n, "TASK-PID"))
			ss->st = S_SYS;
		else if (starts(l, n, "PROCESS DUMP"))
			ss->st = S_DUMP_LONG;
		else if (starts(l, n, "CGROUP DUMP"))
			ss->st = S_CGROUP;
		else if (contains(l, n, "</script>"))
			ss->st = S_HTML;
		break;
	case S_SYS: {
		if (n >= 9 && (seen & L_LT) && contains(l, n, "</script>")) {
			ss->st = S_END;
			break;
		}
		if (!n || l[0] == '#')
			break;
		ss->sc->n_packets++;
		struct tm_systrace_line sl;
		if (!tokenize(l, n, seen & L_NUL ? strnlen(l, n) : n, &sl, true)) {
			tm_oplog_stat(&ss->sc->log, 0, TM_STAT_SYSTRACE_PARSE_FAILURE, 1);
			break;
		}
		struct tm_atrace_event ev = {.name = sl.event, .name_len = sl.event_len};
		uint32_t flags = tm_atrace_line_scan(&sl, &ss->clean, tm_scan_align(ss->sc), &ev);
		uint32_t detail = 0;
		if (ss->ctl && ss->ctl->keep_events) {
			detail = tm_oplog_detail(&ss->sc->log, ev.name, ev.name_len, ev.phase,
						 ev.track, -1);
			tm_tn_atrace(&ss->sc->log, &ev, sl.pid, sl.task, sl.task_len);
			if (ev.phase == 'C')
				tm_detail_set_value(&ss->sc->log, detail, (double)ev.value);
		}
		tm_scan_note_ts(ss->sc, sl.ts);
		ss->sc->n_events++;
		tm_oplog_convert_i(&ss->sc->log, 0, 0, 0, sl.ts, flags, detail, off);
		break;
	}
	case S_DUMP_LONG:
	case S_DUMP_SHORT:
		dump_line(ss, l, n, off);
		break;
	case S_CGROUP:
		if (contains(l, n, "</script>"))
			ss->st = S_HTML;
		break;
	case S_BEFORE:
	case S_END:
		break;
	}
}

/* The '\n' ending the line at p[i] (false: none before n), and in *seen
 * L_LT | L_NUL when the line holds a '<' or a NUL (either: the searches
 * they make moot are exact when run): one pass, 16 bytes at a time,
 * instead of a memchr for the end, another for the '<' of "</script>"
 * and a strnlen. */
static bool
next_line(const char *p, size_t n, size_t i, size_t *e, unsigned *seen)
{
	unsigned odd = 0;
	size_t j = i;
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n'), lt = _mm_set1_epi8('<'), z = _mm_setzero_si128();
	for (; n - j >= 16; j += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(p + j));
		unsigned mn = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, nl));
		unsigned mo = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(x, lt), _mm_cmpeq_epi8(x, z)));
		if (mn) {
			odd |= mo & ((mn & -mn) - 1);
			*e = j + (size_t)__builtin_ctz(mn);
			*seen = odd ? L_LT | L_NUL : 0;
			return true;
		}
		odd |= mo;
	}
#endif
	for (; j < n; j++) {
		if (p[j] == '\n') {
			*e = j;
			*seen = odd ? L_LT | L_NUL : 0;
			return true;
		}
		odd |= p[j] == '<' || p[j] == 0;
	}
	return false;
}

/* Process every complete line of [p, p+n) at file offset off; returns the
 * bytes consumed (up to and including the last '\n'). */
static size_t
lines(struct ss *ss, const char *p, size_t n, uint64_t off)
{
	size_t i = 0, e;
	unsigned seen;
	while (i < n && ss->st != S_END) {
		if (!next_line(p, n, i, &e, &seen))
			break;
		one_line(ss, p + i, e - i, off + i, seen);
		i = e + 1;
	}
	return ss->st == S_END ? n : i;
}

static bool
is_cpus_line(const char *s, size_t n)
{
	if (n < 5 || memcmp(s, "cpus=", 5))
		return false;
	for (size_t i = 5; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* First chunk: TRACE:\n marker in the first 128 bytes, a cpus= line, HTML. */
static void
preprocess(struct ss *ss)
{
	struct tm_buf *b = &ss->carry;
	size_t look = b->len < 128 ? b->len : 128;
	for (size_t i = 0; i + 7 <= look; i++) {
		if (!memcmp(b->data + i, "TRACE:\n", 7)) {
			size_t cut = i + 7;
			memmove(b->data, b->data + cut, b->len - cut);
			b->len -= cut;
			ss->carry_off += cut;
			break;
		}
	}
	const char *nl = b->len ? memchr(b->data, '\n', b->len) : NULL;
	if (nl && is_cpus_line(b->data, (size_t)(nl - b->data))) {
		size_t cut = (size_t)(nl - b->data) + 1;
		memmove(b->data, b->data + cut, b->len - cut);
		b->len -= cut;
		ss->carry_off += cut;
	}
	ss->st = b->len && b->data[0] == '<' ? S_HTML : S_SYS;
}

/* Can preprocess() decide on b as it would on the whole member?  It needs
 * the 128 bytes searched for the marker, the first line after the marker,
 * and, when that line is a cpus= line, one byte after it (the '<' check).
 * Waiting only for "128 bytes and a newline" let the block splitting decide
 * (found by fuzz_scan_systrace: a first block ending right after "TRACE:\n"
 * skipped the HTML check). */
static bool
first_chunk_ready(const struct tm_buf *b, size_t *scanned)
{
	if (b->len < 128)
		return false;
	size_t cut = 0;
	for (size_t i = 0; i + 7 <= 128; i++) {
		if (!memcmp(b->data + i, "TRACE:\n", 7)) {
			cut = i + 7;
			break;
		}
	}
	/* The cut is fixed once 128 bytes are here; resume the newline search
	 * where the last call stopped, so a long first line costs O(n). */
	size_t from = *scanned > cut ? *scanned : cut;
	const char *nl = memchr(b->data + from, '\n', b->len - from);
	if (!nl) {
		*scanned = b->len;
		return false;
	}
	if (is_cpus_line(b->data + cut, (size_t)(nl - (b->data + cut))))
		return (size_t)(nl - b->data) + 1 < b->len;
	return true;
}

static void
ss_drain(struct ss *ss)
{
	/* Nothing carried (possibly never allocated): memmove(NULL, NULL + 0)
	 * is undefined (found by fuzz_scan_systrace on an empty member). */
	if (!ss->carry.len)
		return;
	size_t used = lines(ss, ss->carry.data, ss->carry.len, ss->carry_off);
	memmove(ss->carry.data, ss->carry.data + used, ss->carry.len - used);
	ss->carry.len -= used;
	ss->carry_off += used;
}

static void
ss_feed(struct ss *ss, const char *p, size_t n)
{
	uint64_t off = ss->total;
	ss->total += n;
	if (ss->st == S_END || ss->status != TM_OK)
		return;
	if (ss->st == S_BEFORE) {
		tm_buf_add(&ss->carry, p, n);
		/* TP sees its whole first chunk; wait until it decides as that would */
		if (!first_chunk_ready(&ss->carry, &ss->nl_scanned)) {
			/* the line cap applies here too: a member with no newline
			 * must not be buffered whole (fuzzing, hostile inputs) */
			if (ss->carry.len > MAX_LINE) {
				ss->status = tm_error_set(ss->err, TM_ERR_LIMIT,
							  "byte 0x%" PRIx64
							  ": systrace line longer than 64 MiB",
							  ss->carry_off);
				ss->st = S_END;
			}
			return;
		}
		preprocess(ss);
		ss_drain(ss);
		return;
	}
	if (ss->carry.len) {
		const char *nl = memchr(p, '\n', n);
		if (!nl) {
			tm_buf_add(&ss->carry, p, n);
		} else {
			size_t k = (size_t)(nl - p) + 1;
			tm_buf_add(&ss->carry, p, k);
			ss_drain(ss);
			p += k;
			n -= k;
			off += k;
			if (ss->carry.len == 0 && ss->st != S_END) {
				size_t used = lines(ss, p, n, off);
				if (used < n && ss->st != S_END) {
					tm_buf_add(&ss->carry, p + used, n - used);
					ss->carry_off = off + used;
				}
			}
		}
	} else {
		size_t used = lines(ss, p, n, off);
		if (used < n && ss->st != S_END) {
			tm_buf_add(&ss->carry, p + used, n - used);
			ss->carry_off = off + used;
		}
	}
	if (ss->carry.len > MAX_LINE) {
		ss->status = tm_error_set(ss->err, TM_ERR_LIMIT,
					  "byte 0x%" PRIx64 ": systrace line longer than 64 MiB",
					  ss->carry_off);
		ss->st = S_END;
	}
}

static void
ss_finish(struct ss *ss)
{
	if (ss->st == S_BEFORE) {
		preprocess(ss);
		ss_drain(ss);
	}
	/* A final line without '\n' is never tokenized. */
}

static void
ss_init(struct ss *ss, struct tm_scan *sc, const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	memset(ss, 0, sizeof *ss);
	ss->sc = sc;
	ss->ctl = ctl;
	ss->err = err;
	ss->status = TM_OK;
	tm_buf_init(&ss->carry);
	tm_buf_init(&ss->clean);
	tm_scan_note_clock(sc, TM_CLOCK_MONOTONIC);
}

static void
ss_fini(struct ss *ss)
{
	tm_buf_fini(&ss->carry);
	tm_buf_fini(&ss->clean);
}

static void
ss_feed_cb(void *self, const char *p, size_t n)
{
	ss_feed(self, p, n);
}

static void
ss_finish_cb(void *self)
{
	ss_finish(self);
}

enum tm_status
tm_scan_systrace(struct tm_stream *st, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
		 struct tm_error *err)
{
	struct ss ss;
	ss_init(&ss, sc, ctl, err);
	struct tm_text_scanner ts = { &ss, ss_feed_cb, ss_finish_cb, &ss.status, &ss.total };
	enum tm_status rc = tm_scan_text(st, sc, ctl, err, &ts);
	ss_fini(&ss);
	return rc;
}

enum tm_status
tm_scan_systrace_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
		     const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	struct ss ss;
	ss_init(&ss, sc, ctl, err);
	struct tm_text_scanner ts = { &ss, ss_feed_cb, ss_finish_cb, &ss.status, &ss.total };
	enum tm_status rc = tm_scan_text_mem(p, n, block, sc, ctl, err, &ts);
	ss_fini(&ss);
	return rc;
}

/* The format table's sniffer (util/trace_type.cc, GuessTraceType): the
 * "# tracer" header, an HTML page, "TRACE:\n", "cpus=" or a leading space
 * in the first 128 bytes. */
bool
tm_sniff_systrace(struct tm_sniff_in *in)
{
	const uint8_t *d = in->d;
	size_t w = in->n < TM_SNIFF_LOOKAHEAD ? in->n : TM_SNIFF_LOOKAHEAD;
	if (tm_sniff_contains(d, w, "# tracer"))
		return true;
	uint8_t low[16];
	size_t ln = w < sizeof low ? w : sizeof low;
	for (size_t i = 0; i < ln; i++)
		low[i] = (d[i] >= 'A' && d[i] <= 'Z') ? (uint8_t)(d[i] + 32) : d[i];
	if (tm_sniff_starts(low, ln, "<!doctype html>") || tm_sniff_starts(low, ln, "<html>"))
		return true;
	return tm_sniff_contains(d, w, "TRACE:\n") || tm_sniff_starts(d, w, "cpus=") ||
	       tm_sniff_starts(d, w, " ");
}

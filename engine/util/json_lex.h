/* SPDX-License-Identifier: MIT */
/*
 * The one JSON lexer of the engine: trace_processor's own grammar
 * (src/trace_processor/util/json_parser.h: SkipWhitespace, ScanString,
 * UnescapeString, ParseString, ScanToEndOfDelimitedBlock, StringToInt64,
 * StringToDouble, ParseNumber, ParseValue, and the key / after-value steps
 * of its Iterator), with its error texts.  Used by the manifest reader
 * (json_dom.c, which builds a tree) and the streaming Chrome JSON
 * scanner (scan_json.c, which walks event objects in a window).
 *
 * Every function works on [cur, lx->end): TM_JL_INC means the window ended
 * before the token did (the caller waits for more input or reports the
 * truncation); TM_JL_ERR leaves trace_processor's text in lx->msg.
 */
#ifndef TM_JSON_LEX_H
#define TM_JSON_LEX_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header: front ends include only tracemerge.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "internal.h"

enum tm_jl_rc { TM_JL_OK, TM_JL_ERR, TM_JL_INC };

enum tm_jl_type { TM_JL_NULL, TM_JL_BOOL, TM_JL_INT, TM_JL_DBL, TM_JL_STR, TM_JL_OBJ, TM_JL_ARR };

/* A value (json::JsonValue).  STR: s/n is the content, unescaped (into the
 * caller's buffer when it had escapes); OBJ/ARR: s/n is the raw text from
 * the opening to the closing delimiter; INT/DBL: s/n is the number token. */
struct tm_jl_value {
	enum tm_jl_type t;
	int64_t i; /* INT; BOOL: 0 or 1 */
	double d;  /* DBL */
	const char *s;
	size_t n;
};

struct tm_jl {
	const char *end;
	struct tm_buf *msg; /* error text of TM_JL_ERR */
	/* "Integer overflow parsing ..." is left in the iterator's status even
	 * when the number then parses as a double.  It goes to *sticky (and
	 * has_sticky is set) when sticky is set (it may be msg itself). */
	struct tm_buf *sticky;
	bool has_sticky;
	/* Bytes of input quoted in an error text (trace_processor quotes the
	 * rest of its buffer; we stop at this many). */
	int quote_max;
	/* Set (when not NULL) if a quote that runs to the window end was cut by
	 * the window rather than by quote_max: more input would change the
	 * text, so a streaming caller waits for it. */
	bool *quote_cut;
};

/* Fills lx->msg (which is reset first). */
void tm_jl_error(struct tm_jl *lx, const char *fmt, ...) TM_PRINTF(2, 3);

static inline bool
tm_jl_is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* SkipWhitespace: the first non-whitespace byte at or after c, or e. */
static inline const char *
tm_jl_skip_ws(const char *c, const char *e)
{
	/* every whitespace byte is <= ' ': most bytes fail the first test */
	while (c != e && (unsigned char)*c <= ' ' && tm_jl_is_ws(*c))
		c++;
	return c;
}

/* UnescapeString of the raw content s/n (s[n] is its closing quote): \uXXXX
 * becomes UTF-8 (surrogates are an error), unknown escapes are dropped. */
enum tm_jl_rc tm_jl_unescape(struct tm_jl *lx, const char *s, size_t n, struct tm_buf *out);

/*
 * The lexer proper is inline: it is the Chrome JSON scanner's inner loop.
 *
 * tm_jl_scan_string (ScanString): *cur at the opening quote; on TM_JL_OK
 *   s/n is the raw content, *esc whether it holds a backslash, *cur is past
 *   the closing quote.
 * tm_jl_string (ParseString): scan, and unescape into unesc when needed;
 *   s/n is the content (never NULL).
 * tm_jl_to_int64 (StringToInt64): false on overflow (the INT64_MIN quirk
 *   included).
 * tm_jl_to_double (StringToDouble), bit for bit (its int64 wrap-around
 *   included): false on an infinite or NaN result.
 * tm_jl_number (ParseNumber): validates the token at *cur and converts it
 *   (INT when it is integer-like and fits, else DBL); v->s/n is the token.
 * tm_jl_value (ParseValue): any value; an object or array is scanned to its
 *   end (ScanToEndOfDelimitedBlock), not parsed.  *cur is not whitespace.
 * tm_jl_key: the key step of the Iterator: whitespace, a string,
 *   whitespace, ':' and whitespace; *cur is then at the value.
 * tm_jl_after_value (OnPostValue): whitespace, then ',' (and whitespace) or
 *   the scope's closer close (left unconsumed).  key/kn name the value in
 *   the error text when kn is not 0.
 */

static inline bool
tm_jl_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline int
tm_jl_quote_len(const struct tm_jl *lx, const char *s, const char *e)
{
	size_t n = (size_t)(e - s);

	return n > (size_t)lx->quote_max ? lx->quote_max : (int)n;
}

/* quote_len of a quote that runs to the window end (see tm_jl.quote_cut). */
static inline int
tm_jl_quote_to_end(struct tm_jl *lx, const char *s)
{
	if (lx->quote_cut && (size_t)(lx->end - s) < (size_t)lx->quote_max)
		*lx->quote_cut = true;
	return tm_jl_quote_len(lx, s, lx->end);
}

static inline enum tm_jl_rc
tm_jl_scan_string(struct tm_jl *lx, const char **cur, const char **s, size_t *n, bool *esc)
{
	const char *start = *cur, *str, *q;

	if (*start != '"') {
		tm_jl_error(lx, "Expected '\"' at the start of string. Got '%c'", *start);
		return TM_JL_ERR;
	}
	str = q = start + 1;
	/* Short strings without a backslash (the common case): one pass, no
	 * call.  Anything else takes the general path from the start. */
	{
		const char *lim = lx->end - str > 32 ? str + 32 : lx->end;

		for (; q != lim; q++) {
			if (*q == '"') {
				*esc = false;
				*s = str;
				*n = (size_t)(q - str);
				*cur = q + 1;
				return TM_JL_OK;
			}
			if (*q == '\\')
				break;
		}
		if (q == lx->end)
			return TM_JL_INC;
		q = str;
	}
	for (;;) {
		size_t bs = 1;
		const char *p;

		q = memchr(q, '"', (size_t)(lx->end - q));
		if (!q)
			return TM_JL_INC;
		if (q[-1] != '\\')
			break;
		/* an even run of backslashes before the quote: it closes */
		for (p = q - 2; p >= str && *p == '\\'; p--)
			bs++;
		if ((bs & 1) == 0)
			break;
		q++;
	}
	*esc = memchr(str, '\\', (size_t)(q - str)) != NULL;
	*s = str;
	*n = (size_t)(q - str);
	*cur = q + 1;
	return TM_JL_OK;
}

static inline enum tm_jl_rc
tm_jl_string(struct tm_jl *lx, const char **cur, const char **s, size_t *n, struct tm_buf *unesc)
{
	bool esc;
	enum tm_jl_rc r = tm_jl_scan_string(lx, cur, s, n, &esc);

	if (r != TM_JL_OK || !esc)
		return r;
	if (tm_jl_unescape(lx, *s, *n, unesc) != TM_JL_OK)
		return TM_JL_ERR;
	/* An escape sequence that unescapes to nothing leaves the buffer
	 * unallocated: never hand out NULL as the string. */
	*s = unesc->data ? unesc->data : "";
	*n = unesc->len;
	return TM_JL_OK;
}

/* The first '"' or backslash in [q, end), or end. */
static inline const char *
tm_jl_quote_or_bs(const char *q, const char *end)
{
#ifdef __SSE2__
	const __m128i dq = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
	while (end - q >= 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)q);
		unsigned m = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(x, dq), _mm_cmpeq_epi8(x, bs)));
		if (m)
			return q + __builtin_ctz(m);
		q += 16;
	}
#endif
	while (q != end && *q != '"' && *q != '\\')
		q++;
	return q;
}

/* ScanToEndOfDelimitedBlock: only strings (a backslash in one takes the
 * next byte with it, ScanString's "a quote after an odd run of backslashes
 * is escaped"), open and close matter.  16 bytes at a time: the quotes of a
 * piece without a backslash give its in-string bits (a prefix XOR), and
 * only the open and close bits outside strings are visited, so a string or
 * a run of plain bytes costs no branch of its own.  Backslashes escape
 * the byte after an odd run of them; a piece with one outside strings, a
 * piece after one that escapes across, and the window's last 15 bytes go
 * a byte at a time. */
static inline enum tm_jl_rc
tm_jl_scan_block(struct tm_jl *lx, const char **pcur, char open, char close)
{
	const char *cur = *pcur + 1, *end = lx->end;
	uint32_t bal = 1;
	bool in_str = false, esc = false;

	for (;;) {
		const char *lim = end;

#ifdef __SSE2__
		if (end - cur >= 16 && esc) {
			lim = cur + 1; /* the escaped byte */
		} else if (end - cur >= 16) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)cur);
			unsigned q = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')));
			unsigned b = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('\\')));
			unsigned o = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(open)));
			unsigned c = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(close)));

			uint32_t escd = 0;
			if (b) {
				/* the byte after an odd run of backslashes is
				 * escaped (bit 16: the next piece's first); right
				 * only when every backslash is inside a string,
				 * checked below (outside one it escapes nothing) */
				uint32_t st = b & ~(b << 1), ev = 0x55555555u;
				escd = (((b + (st & ev)) & ~b) & ~ev) | (((b + (st & ~ev)) & ~b) & ev);
				q &= ~escd;
			}
			/* bit i: inside a string after byte i (an opening quote is
			 * inside, a closing one outside) */
			unsigned s = q ^ (q << 1);
			s ^= s << 2;
			s ^= s << 4;
			s ^= s << 8;
			if (in_str)
				s = ~s;
			s &= 0xffff;
			if (!(b & ~s)) {
				in_str = s >> 15;
				esc = escd >> 16 & 1;
				o &= ~s;
				c &= ~s;
				for (unsigned oc = o | c; oc; oc &= oc - 1) {
					unsigned i = (unsigned)__builtin_ctz(oc);

					if (o >> i & 1) {
						bal++;
					} else if (--bal == 0) {
						*pcur = cur + i + 1;
						return TM_JL_OK;
					}
				}
				cur += 16;
				continue;
			}
			lim = cur + 16; /* a backslash outside strings */
		}
#endif
		for (; cur != lim; cur++) {
			char ch = *cur;

			if (in_str) {
				if (esc)
					esc = false;
				else if (ch == '\\')
					esc = true;
				else if (ch == '"')
					in_str = false;
			} else if (ch == '"') {
				in_str = true;
			} else if (ch == open) {
				bal++;
			} else if (ch == close && --bal == 0) {
				*pcur = cur + 1;
				return TM_JL_OK;
			}
		}
		if (cur == end)
			return TM_JL_INC;
	}
}

static inline bool
tm_jl_to_int64(const char *s, const char *e, int64_t *out)
{
	bool neg = s != e && *s == '-';
	const char *c = s + neg;
	int64_t v = 0;
	const int64_t div10 = INT64_MAX / 10;
	const int mod10 = (int)(INT64_MAX % 10);

	for (; c != e; c++) {
		int d = *c - '0';

		/* after INT64_MIN's special case v is negative, so the test no
		 * longer fires and further digits wrap, as in trace_processor */
		if (v > div10 || (v == div10 && d > mod10)) {
			if (!(neg && v == div10 && d == mod10 + 1))
				return false;
		}
		v = wrap_add(wrap_mul(v, 10), d);
	}
	*out = neg ? wrap_sub(0, v) : v;
	return true;
}

static inline bool
tm_jl_to_double(const char *s, const char *e, double *out)
{
	bool neg = false, exp_neg = false;
	int64_t ip = 0, ep = 0;
	double frac = 0, v;

	if (s != e && *s == '-') {
		neg = true;
		s++;
	}
	for (; s != e && tm_jl_is_digit(*s); s++)
		ip = wrap_add(wrap_mul(ip, 10), *s - '0');
	if (s != e && *s == '.') {
		int64_t fi = 0;
		uint64_t div = 1;

		for (s++; s != e && tm_jl_is_digit(*s); s++) {
			fi = wrap_add(*s - '0', wrap_mul(fi, 10));
			div *= 10;
		}
		frac = (double)fi / (double)div;
	}
	if (s != e && (*s == 'e' || *s == 'E')) {
		s++;
		if (s != e && (*s == '+' || *s == '-'))
			exp_neg = *s++ == '-';
		for (; s != e && tm_jl_is_digit(*s); s++)
			ep = wrap_add(wrap_mul(ep, 10), *s - '0');
	}
	v = (double)ip + frac;
	if (exp_neg)
		v /= pow(10, (double)ep);
	else if (ep > 0)
		v *= pow(10, (double)ep);
	if (isinf(v) || isnan(v))
		return false;
	*out = neg ? -v : v;
	return true;
}

/* Powers of ten up to 10^18 (every one exact as a double too). */
static const uint64_t tm_jl_pow10[19] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull,
};

/* The number ip.fi with nf (<= 18) fraction digits, as the fast number
 * readers (tm_jl_number here, scan_json's fast_value) both compute it:
 * they must agree to the last bit. */
static inline double
tm_jl_dbl_parts(uint64_t ip, uint64_t fi, size_t nf)
{
	return (double)ip + (double)fi / (double)tm_jl_pow10[nf];
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The leading decimal digits (0 to 8) of the 8 bytes at p: their count, and
 * in *val their value (SWAR: a byte is a digit when it XOR '0' is below 10;
 * a carry of the add starts only at a byte that is already flagged, so the
 * lowest flag is exact). */
static inline __attribute__((always_inline)) unsigned
tm_jl_digits8(const char *p, uint64_t *val)
{
	uint64_t x, nd;
	unsigned n;

	memcpy(&x, p, 8);
	x ^= 0x3030303030303030ull;
	nd = ((x + 0x7676767676767676ull) | x) & 0x8080808080808080ull;
	n = nd ? (unsigned)__builtin_ctzll(nd) >> 3 : 8;
	if (!n) {
		*val = 0;
		return 0;
	}
	x <<= 8 * (8 - n); /* the digits last, as in "000ddddd" */
	x = x * 10 + (x >> 8);
	x = ((x & 0x000000FF000000FFull) * 0x000F424000000064ull +
	     ((x >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull) >> 32;
	*val = x;
	return n;
}
#endif

/* The run of decimal digits at cur: its end, and in *val its value modulo
 * 2^64 (what v = v * 10 + d gives, a byte at a time, on any length). */
static inline __attribute__((always_inline)) const char *
tm_jl_digits(const char *cur, const char *end, uint64_t *val)
{
	uint64_t v = 0;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (end - cur >= 16) {
		uint64_t a, b;
		unsigned n = tm_jl_digits8(cur, &a), m;

		if (n < 8) {
			*val = a;
			return cur + n;
		}
		m = tm_jl_digits8(cur + 8, &b);
		v = a * tm_jl_pow10[m] + b;
		cur += 8 + m;
		if (m < 8) {
			*val = v;
			return cur;
		}
	}
#endif
	for (; cur != end && tm_jl_is_digit(*cur); cur++)
		v = v * 10 + (uint64_t)(*cur - '0');
	*val = v;
	return cur;
}

static inline enum tm_jl_rc
tm_jl_number(struct tm_jl *lx, const char **pcur, struct tm_jl_value *v)
{
	const char *start = *pcur, *cur = start, *end = lx->end;
	bool int_like = true;
	/* Digits are accumulated on the way: with at most 18 of them before
	 * and after the point and no exponent, nothing wraps, and the values
	 * are tm_jl_to_int64's and tm_jl_to_double's own (same arithmetic). */
	uint64_t ip = 0, fi = 0;
	const char *ip_s, *f_s = NULL;

	cur += *cur == '-';
	ip_s = cur;
	if (cur != end && *cur == '0') {
		cur++;
		if (cur != end && tm_jl_is_digit(*cur)) {
			tm_jl_error(lx, "Invalid number: leading zero in '%.*s'",
				    tm_jl_quote_to_end(lx, start), start);
			return TM_JL_ERR;
		}
	} else if (cur != end && *cur >= '1' && *cur <= '9') {
		cur = tm_jl_digits(cur, end, &ip);
	} else if (cur != end) {
		tm_jl_error(lx, "Invalid number: expected digit in '%.*s'", tm_jl_quote_to_end(lx, start),
			    start);
		return TM_JL_ERR;
	}
	const char *ip_e = cur;
	if (cur != end && *cur == '.') {
		const char *f = ++cur;

		int_like = false;
		f_s = f;
		cur = tm_jl_digits(cur, end, &fi);
		if (cur != end && cur == f) {
			tm_jl_error(lx, "Invalid number: expected digit after '.' in '%.*s'",
				    tm_jl_quote_to_end(lx, start), start);
			return TM_JL_ERR;
		}
	}
	if (cur != end && (*cur == 'e' || *cur == 'E')) {
		const char *f;

		int_like = false;
		f_s = NULL; /* not a plain number */
		ip_s = NULL;
		cur++;
		cur += cur != end && (*cur == '+' || *cur == '-');
		f = cur;
		while (cur != end && tm_jl_is_digit(*cur))
			cur++;
		if (cur != end && cur == f) {
			tm_jl_error(lx, "Invalid number: expected digit after 'e' in '%.*s'",
				    tm_jl_quote_to_end(lx, start), start);
			return TM_JL_ERR;
		}
	}
	if (cur == end)
		return TM_JL_INC;
	v->s = start;
	v->n = (size_t)(cur - start);
	if (ip_s && ip_e - ip_s <= 18) {
		bool neg = *start == '-';

		if (int_like) {
			v->i = neg ? -(int64_t)ip : (int64_t)ip;
			v->t = TM_JL_INT;
			*pcur = cur;
			return TM_JL_OK;
		}
		if (f_s && cur - f_s <= 18) { /* cur: the end of the fraction */
			double d = tm_jl_dbl_parts(ip, fi, (size_t)(cur - f_s));

			v->d = neg ? -d : d;
			v->t = TM_JL_DBL;
			*pcur = cur;
			return TM_JL_OK;
		}
	}
	if (int_like) {
		if (tm_jl_to_int64(start, cur, &v->i)) {
			v->t = TM_JL_INT;
			*pcur = cur;
			return TM_JL_OK;
		}
		if (lx->sticky) {
			struct tm_buf *keep = lx->msg;

			lx->msg = lx->sticky;
			tm_jl_error(lx, "Integer overflow parsing '%.*s'",
				    tm_jl_quote_len(lx, start, cur), start);
			lx->msg = keep;
			lx->has_sticky = true;
		}
	}
	if (!tm_jl_to_double(start, cur, &v->d)) {
		tm_jl_error(lx, "Double overflow/underflow parsing '%.*s'",
			    tm_jl_quote_len(lx, start, cur), start);
		return TM_JL_ERR;
	}
	v->t = TM_JL_DBL;
	*pcur = cur;
	return TM_JL_OK;
}

static inline enum tm_jl_rc
tm_jl_literal(struct tm_jl *lx, const char **cur, const char *word, struct tm_jl_value *v,
	enum tm_jl_type t, bool b)
{
	size_t n = strlen(word);

	if ((size_t)(lx->end - *cur) < n)
		return TM_JL_INC;
	if (memcmp(*cur, word, n) != 0) {
		tm_jl_error(lx, "Invalid token: expected '%s' but got '%.*s'", word, (int)n, *cur);
		return TM_JL_ERR;
	}
	*cur += n;
	v->t = t;
	v->i = b;
	return TM_JL_OK;
}

static inline enum tm_jl_rc
tm_jl_value(struct tm_jl *lx, const char **cur, struct tm_jl_value *v, struct tm_buf *unesc)
{
	const char *start = *cur;
	enum tm_jl_rc r;

	switch (*start) {
	case '{':
	case '[':
		r = tm_jl_scan_block(lx, cur, *start, *start == '{' ? '}' : ']');
		v->t = *start == '{' ? TM_JL_OBJ : TM_JL_ARR;
		v->s = start;
		v->n = (size_t)(*cur - start);
		return r;
	case '"':
		v->t = TM_JL_STR;
		return tm_jl_string(lx, cur, &v->s, &v->n, unesc);
	case 't': return tm_jl_literal(lx, cur, "true", v, TM_JL_BOOL, true);
	case 'f': return tm_jl_literal(lx, cur, "false", v, TM_JL_BOOL, false);
	case 'n': return tm_jl_literal(lx, cur, "null", v, TM_JL_NULL, false);
	default: return tm_jl_number(lx, cur, v);
	}
}

static inline enum tm_jl_rc
tm_jl_key(struct tm_jl *lx, const char **pcur, const char **k, size_t *kn, struct tm_buf *ukey)
{
	const char *cur = tm_jl_skip_ws(*pcur, lx->end), *end = lx->end;
	enum tm_jl_rc r;

	if (cur == end)
		return TM_JL_INC;
	if (*cur != '"') {
		tm_jl_error(lx, "Expected '\"' at the start of key. Got '%c'", *cur);
		return TM_JL_ERR;
	}
	r = tm_jl_string(lx, &cur, k, kn, ukey);
	if (r != TM_JL_OK)
		return r;
	cur = tm_jl_skip_ws(cur, end);
	if (cur == end)
		return TM_JL_INC;
	if (*cur != ':') {
		tm_jl_error(lx, "Expected ':' after key '%.*s'. Got '%c'",
			    tm_jl_quote_len(lx, *k, *k + *kn), *k, *cur);
		return TM_JL_ERR;
	}
	cur = tm_jl_skip_ws(cur + 1, end);
	if (cur == end)
		return TM_JL_INC;
	*pcur = cur;
	return TM_JL_OK;
}

static inline enum tm_jl_rc
tm_jl_after_value(struct tm_jl *lx, const char **pcur, char close, const char *key, size_t kn)
{
	const char *cur = tm_jl_skip_ws(*pcur, lx->end), *end = lx->end;

	if (cur == end)
		return TM_JL_INC;
	if (*cur == ',') {
		cur = tm_jl_skip_ws(cur + 1, end);
		if (cur == end)
			return TM_JL_INC;
	} else if (*cur != close) {
		if (kn)
			tm_jl_error(lx, "Expected ',' or '%c' after value for key '%.*s'. Got '%c'",
				    close, tm_jl_quote_len(lx, key, key + kn), key, *cur);
		else
			tm_jl_error(lx, "Expected ',' or '%c' after value. Got '%c'", close, *cur);
		return TM_JL_ERR;
	}
	*pcur = cur;
	return TM_JL_OK;
}

#endif

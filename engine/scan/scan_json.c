/* SPDX-License-Identifier: MIT */
/*
 * Chrome JSON scanner: one streaming pass that reproduces trace_processor's
 * JsonTraceTokenizer (importers/json/json_trace_tokenizer.cc) and its field
 * iterator (util/json_parser.h) closely enough to predict every push, every
 * json_tokenizer_failure and every import-failing error.
 *
 * Top level and systemTraceEvents strings are scanned by small resumable
 * state machines; an event object is parsed whole from a contiguous window
 * (the block itself, or a carry buffer when it straddles blocks).  A window
 * that stays incomplete is retried only once it has doubled, so a huge event
 * costs O(size).  Number semantics are trace_processor's own decimal
 * conversion (not strtod), then its integer-vs-double ts rules and llround.
 *
 * TP feeds the tokenizer in chunks (1 MiB in the shell, whole members from
 * ZIP); a few of its behaviours depend on where chunks end.  We model the
 * member as delivered in one chunk: see the notes at P_STUCK and P_EOF.
 */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_lex.h"
#include "scan.h"
#include "align_scan.h"
#include "atrace.h"
#include "tracknames.h"

#define MAX_WINDOW (64u * 1024u * 1024u)
#define MAX_MSG 1000 /* bytes of input quoted in an error text */

/* ---- values (json_lex.h) ---- */

/* x86-64 semantics of static_cast<int64_t>(double) (cvttsd2si). */
static int64_t
d2i(double d)
{
	if (!(d < 9223372036854775808.0 && d >= -9223372036854775808.0))
		return INT64_MIN;
	return (int64_t)d;
}

/* One field of an object (Iterator::ParseObjectFieldWithoutRecursing).
 * TM_JL_OK with *eos: the closing '}' was consumed. */
static enum tm_jl_rc
next_field(struct tm_jl *jp, const char **pcur, char end_char, const char **key, size_t *klen,
	   struct tm_jl_value *v, bool *eos, struct tm_buf *ukey, struct tm_buf *uval)
{
	const char *cur = *pcur;
	enum tm_jl_rc r;
	*eos = false;
	if (*cur == '}') {
		*pcur = cur + 1;
		*eos = true;
		return TM_JL_OK;
	}
	if ((r = tm_jl_key(jp, &cur, key, klen, ukey)) != TM_JL_OK)
		return r;
	if ((r = tm_jl_value(jp, &cur, v, uval)) != TM_JL_OK)
		return r;
	if ((r = tm_jl_after_value(jp, &cur, end_char, *key, *klen)) != TM_JL_OK)
		return r;
	*pcur = cur;
	return TM_JL_OK;
}

/* next_field's common case in one lean pass: a key and a string value
 * without backslashes, a plain number (at most 18 digits before and after
 * the point, no exponent), a literal or a nested block, then ',' or the
 * closer.  False, with nothing changed, for anything else (the end of the
 * object, escapes, errors, the window's end): the caller then runs
 * next_field from the same place.  Whenever this succeeds next_field gives
 * the same key, value and position (tm_jl_number's own fast arithmetic). */
static inline __attribute__((always_inline)) bool fast_value(struct tm_jl *jp, const char **pcur, char end_char,
			      struct tm_jl_value *v, const char *vp);

static inline bool
fast_field(struct tm_jl *jp, const char **pcur, char end_char, const char **key, size_t *klen,
	   struct tm_jl_value *v)
{
	/* *pcur is past whitespace already (after '{', or after ',' in the
	 * field before: both passes skip it); whitespace elsewhere is skipped
	 * only where the expected byte is not there. */
	const char *end = jp->end, *cur = *pcur, *q;

	if (cur == end || *cur != '"')
		return false;
	q = tm_jl_quote_or_bs(++cur, end);
	if (q == end || *q != '"')
		return false;
	const char *k = cur;
	size_t kl = (size_t)(q - cur);
	cur = q + 1;
	if (cur == end)
		return false;
	if (*cur != ':') {
		cur = tm_jl_skip_ws(cur, end);
		if (cur == end || *cur != ':')
			return false;
	}
	if (!fast_value(jp, &cur, end_char, v, cur + 1))
		return false;
	*key = k;
	*klen = kl;
	*pcur = cur;
	return true;
}

/* fast_field after the key's ':' (at vp): the value and the ',' or closer;
 * false, with nothing changed, where fast_field gives up. */
static inline __attribute__((always_inline)) bool
fast_value(struct tm_jl *jp, const char **pcur, char end_char, struct tm_jl_value *v,
	   const char *vp)
{
	const char *end = jp->end, *cur = vp, *q;

	if (cur == end)
		return false;
	char c = *cur;
	if ((unsigned char)c <= ' ') {
		cur = tm_jl_skip_ws(cur, end);
		if (cur == end)
			return false;
		c = *cur;
	}
	if (c == '"') {
		q = tm_jl_quote_or_bs(++cur, end);
		if (q == end || *q != '"')
			return false;
		v->t = TM_JL_STR;
		v->s = cur;
		v->n = (size_t)(q - cur);
		cur = q + 1;
	} else if ((c >= '0' && c <= '9') || c == '-') {
		const char *st = cur, *ds;
		bool neg = c == '-';
		uint64_t ip = 0;

		ds = cur += neg;
		cur = tm_jl_digits(cur, end, &ip);
		size_t nd = (size_t)(cur - ds);
		if (!nd || nd > 18 || (nd > 1 && *ds == '0') || cur == end)
			return false;
		if (*cur == '.') {
			const char *fs = ++cur;
			uint64_t fi;

			cur = tm_jl_digits(cur, end, &fi);
			if (cur == fs || cur - fs > 18 || cur == end || *cur == 'e' || *cur == 'E')
				return false;
			double d = tm_jl_dbl_parts(ip, fi, (size_t)(cur - fs));
			v->t = TM_JL_DBL;
			v->d = neg ? -d : d;
		} else {
			if (*cur == 'e' || *cur == 'E')
				return false;
			v->t = TM_JL_INT;
			v->i = neg ? -(int64_t)ip : (int64_t)ip;
		}
		v->s = st;
		v->n = (size_t)(cur - st);
	} else if (c == '{' || c == '[') {
		const char *st = cur;

		if (tm_jl_scan_block(jp, &cur, c, c == '{' ? '}' : ']') != TM_JL_OK)
			return false;
		v->t = c == '{' ? TM_JL_OBJ : TM_JL_ARR;
		v->s = st;
		v->n = (size_t)(cur - st);
	} else if (c == 't' && end - cur >= 4 && !memcmp(cur, "true", 4)) {
		v->t = TM_JL_BOOL;
		v->i = 1;
		cur += 4;
	} else if (c == 'f' && end - cur >= 5 && !memcmp(cur, "false", 5)) {
		v->t = TM_JL_BOOL;
		v->i = 0;
		cur += 5;
	} else if (c == 'n' && end - cur >= 4 && !memcmp(cur, "null", 4)) {
		v->t = TM_JL_NULL;
		v->i = 0;
		cur += 4;
	} else {
		return false;
	}
	if (cur == end)
		return false;
	if (*cur != ',' && *cur != end_char) {
		cur = tm_jl_skip_ws(cur, end);
		if (cur == end)
			return false;
	}
	if (*cur == ',') {
		cur = tm_jl_skip_ws(cur + 1, end);
		if (cur == end)
			return false;
	} else if (*cur != end_char) {
		return false;
	}
	*pcur = cur;
	return true;
}

static bool
key_is(const char *k, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	return n == l && memcmp(k, lit, l) == 0;
}

/* The event keys ParseTraceEventContents reads (json_trace_tokenizer.cc). */
enum ekey {
	EK_OTHER, EK_PH, EK_PID, EK_TS, EK_TID, EK_TTS, EK_DUR, EK_NAME, EK_ID, EK_ID2,
	EK_BIND_ID, EK_FLOW_IN, EK_FLOW_OUT, EK_ARGS, EK_CAT
};

static inline enum ekey
key_class(const char *k, size_t kl)
{
	if (kl < 2 || kl > 8)
		return EK_OTHER;
	switch (k[0]) {
	case 'p':
		return key_is(k, kl, "ph") ? EK_PH : key_is(k, kl, "pid") ? EK_PID : EK_OTHER;
	case 't':
		return key_is(k, kl, "ts")     ? EK_TS
		       : key_is(k, kl, "tid")  ? EK_TID
		       : key_is(k, kl, "tts") || key_is(k, kl, "tdur") ? EK_TTS
						       : EK_OTHER;
	case 'd':
		return key_is(k, kl, "dur") ? EK_DUR : EK_OTHER;
	case 'n':
		return key_is(k, kl, "name") ? EK_NAME : EK_OTHER;
	case 'i':
		return key_is(k, kl, "id") ? EK_ID : key_is(k, kl, "id2") ? EK_ID2 : EK_OTHER;
	case 'b':
		return key_is(k, kl, "bind_id") ? EK_BIND_ID : EK_OTHER;
	case 'f':
		return key_is(k, kl, "flow_in")	   ? EK_FLOW_IN
		       : key_is(k, kl, "flow_out") ? EK_FLOW_OUT
						   : EK_OTHER;
	case 'a':
		return key_is(k, kl, "args") ? EK_ARGS : EK_OTHER;
	case 'c':
		return key_is(k, kl, "cat") ? EK_CAT : EK_OTHER;
	default:
		return EK_OTHER;
	}
}

/* Keys as fast_field read them, as the bytes '"', key, '"', ':' (at most
 * 16; len 0: none), each with the key that followed it last (next, a slot
 * number + 1; js->key_first: the first key's).  Events of one trace
 * mostly repeat their keys in order, or one of a few orders (a slice's
 * dur and tdur, an instant's s): a field whose first len bytes are the
 * guessed slot's is that key (fast_field's quote search would stop at the
 * same quote: the key holds no quote or backslash), so only its value is
 * read.  A missed guess costs fast_field's own key step, then the key is
 * learned into the slot its bytes hash to and linked after the one
 * before.  Links and slots only guess: each guess is compared in full. */
#define KEY_SLOTS 32

struct key_slot {
	uint64_t t[2], m[2];
	uint8_t len, id, next;
};

static inline bool
key_slot_match(const struct key_slot *ks, const char *cur)
{
	uint64_t a, b;
	memcpy(&a, cur, 8);
	memcpy(&b, cur + 8, 8);
	return ks->len && !(((a ^ ks->t[0]) & ks->m[0]) | ((b ^ ks->t[1]) & ks->m[1]));
}

/* The slot (number + 1) of a key fast_field read (whitespace before its
 * ':' or not), learned there unless it holds it already; 0 for a key too
 * long to keep. */
static inline unsigned
key_slot_learn(struct key_slot *slots, const char *k, size_t kl, enum ekey id)
{
	unsigned char t[16] = { 0 }, m[16] = { 0 };
	uint64_t tw[2];
	size_t n = kl + 3;
	if (n > sizeof t)
		return 0;
	t[0] = '"';
	memcpy(t + 1, k, kl);
	t[kl + 1] = '"';
	t[kl + 2] = ':';
	memcpy(tw, t, sizeof t);
	unsigned h = (unsigned)(((tw[0] ^ tw[1] * 31 ^ n) * 0x9e3779b97f4a7c15ull) >> 59), i;
	struct key_slot *ks = NULL;
	for (i = 0; i < 4; i++) { /* its slot, else a free one, else the first */
		struct key_slot *e = &slots[(h + i) % KEY_SLOTS];
		if (e->len == n && e->t[0] == tw[0] && e->t[1] == tw[1])
			return (unsigned)(e - slots) + 1;
		if (!e->len && !ks)
			ks = e;
	}
	if (!ks)
		ks = &slots[h];
	memset(m, 0xff, n);
	memcpy(ks->t, tw, sizeof tw);
	memcpy(ks->m, m, sizeof m);
	ks->len = (uint8_t)n;
	ks->id = (uint8_t)id;
	ks->next = 0;
	return (unsigned)(ks - slots) + 1;
}

/* llround, without the call where the fraction is exact: below 2^52 in
 * magnitude x - (int64_t)x is x's fraction exactly. */
static int64_t
round_half_away(double x)
{
	if (fabs(x) < 4503599627370496.0) {
		int64_t i = (int64_t)x;
		double f = x - (double)i;
		return f >= 0.5 ? i + 1 : f <= -0.5 ? i - 1 : i;
	}
	return (int64_t)llround(x);
}

/* CoerceToTs. */
static bool coerce_ts_any(const struct tm_jl_value *v, int64_t *ts);

/* A double's ts when it has a fraction and is below 2^52 (then it is
 * integral when (int64_t) keeps it): the common case, kept inline. */
static inline __attribute__((always_inline)) bool
coerce_ts_frac(double d, int64_t *ts)
{
	if (!(fabs(d) < 4503599627370496.0 && (double)(int64_t)d != d))
		return false;
	*ts = round_half_away(d * 1000.0);
	return true;
}

static inline __attribute__((always_inline)) bool
coerce_ts(const struct tm_jl_value *v, int64_t *ts)
{
	if (v->t == TM_JL_INT) {
		*ts = wrap_mul(v->i, 1000);
		return true;
	}
	if (v->t == TM_JL_DBL && coerce_ts_frac(v->d, ts))
		return true;
	return coerce_ts_any(v, ts);
}

static bool
coerce_ts_any(const struct tm_jl_value *v, int64_t *ts)
{
	switch (v->t) {
	case TM_JL_DBL:
		if (!coerce_ts_frac(v->d, ts))
			*ts = v->d == trunc(v->d) ? wrap_mul(d2i(v->d), 1000)
						  : (int64_t)llround(v->d * 1000.0);
		return true;
	case TM_JL_INT:
		*ts = wrap_mul(v->i, 1000);
		return true;
	case TM_JL_STR: {
		/* ParseValue over the contents plus the character after them (the
		 * closing quote, or the NUL of an unescaped copy). */
		char tmp[64];
		struct tm_buf big;
		tm_buf_init(&big);
		const char *p;
		if (v->n + 1 <= sizeof tmp) {
			memcpy(tmp, v->s, v->n);
			tmp[v->n] = '"';
			p = tmp;
		} else {
			tm_buf_add(&big, v->s, v->n);
			tm_buf_addc(&big, '"');
			p = big.data;
		}
		struct tm_buf m, u;
		tm_buf_init(&m);
		tm_buf_init(&u);
		struct tm_jl jp = { .end = p + v->n + 1, .msg = &m, .quote_max = MAX_MSG };
		struct tm_jl_value nv = { 0 };
		const char *cur = p;
		bool ok = false;
		if (*cur != '"' && *cur != '{' && *cur != '[' && *cur != 't' && *cur != 'f' &&
		    *cur != 'n') {
			if (tm_jl_number(&jp, &cur, &nv) == TM_JL_OK && cur == p + v->n)
				ok = coerce_ts(&nv, ts);
		}
		tm_buf_fini(&m);
		tm_buf_fini(&u);
		tm_buf_fini(&big);
		return ok;
	}
	default:
		return false;
	}
}

static uint32_t
to_u32(int64_t n)
{
	return n < 0 || n > UINT32_MAX ? 0 : (uint32_t)n;
}

/* ---- scanner state ---- */

enum pos { P_START, P_DICT, P_EVENTS, P_SKIP, P_SYS, P_STUCK, P_EOF, P_DONE };

struct v8sess {
	uint64_t id;
	uint32_t pid;
	int64_t ts;
};

struct js {
	struct tm_scan *sc;
	const struct tm_scan_ctl *ctl;
	enum pos pos;
	bool object_form;
	bool comma;          /* a ',' consumed since the last event */
	/* P_SKIP */
	bool sk_str, sk_esc, sk_meta;
	uint32_t sk_brace, sk_bracket;
	char sk_key[256];
	/* P_SYS */
	bool sy_esc;
	struct tm_buf line;
	uint64_t line_off;
	/* window */
	struct tm_buf w;
	uint64_t w_off;
	size_t last_try;
	uint64_t total;
	struct tm_buf msg, sticky, ukey, uval, name, cat, tmp, tmp2;
	uint64_t tn_last; /* the last track named (json_names) */
	struct tm_buf clean; /* an atrace line without its invalid UTF-8 */
	bool quote_cut; /* msg's quote stopped at the window end (jp.quote_cut) */
	struct v8sess *v8;
	size_t n_v8, cap_v8;
	struct key_slot keys[KEY_SLOTS]; /* parse_event's guesses */
	unsigned key_first;
	struct tm_align_samples *al;   /* js_align */
	struct al_name_cache al_cache; /* the align samples' (tm_al_name_find) */
	enum tm_status status;
	struct tm_error *err;
};

/* The scan's alignment samples, with js's name cache (until js_fini). */
static struct tm_align_samples *
js_align(struct js *js)
{
	if (!js->al) {
		js->al = tm_scan_align(js->sc);
		js->al->cache = &js->al_cache;
	}
	return js->al;
}

static void
fatal(struct js *js, const char *text, uint64_t off)
{
	tm_oplog_fatal(&js->sc->log, 0, text, off);
	js->sc->failed = true;
	js->pos = P_DONE;
}

static void
failure(struct js *js)
{
	tm_oplog_stat(&js->sc->log, 0, TM_STAT_JSON_TOKENIZER_FAILURE, 1);
}

static inline __attribute__((always_inline)) uint32_t
push_cat(struct js *js, int64_t ts, const char *name, size_t nlen, const char *cat, size_t clen,
	 char phase, uint64_t track, int64_t dur, uint64_t off, uint32_t flags)
{
	uint32_t detail = 0;
	if (js->ctl && js->ctl->keep_events)
		detail = tm_oplog_detail_cat(&js->sc->log, name, nlen, cat, clen, phase, track, dur);
	tm_scan_note_ts(js->sc, ts);
	js->sc->n_events++;
	tm_oplog_convert_i(&js->sc->log, 0, 0, 0, ts, flags, detail, off);
	return detail;
}

static inline __attribute__((always_inline)) uint32_t
push_flags(struct js *js, int64_t ts, const char *name, size_t nlen, char phase, uint64_t track,
	   int64_t dur, uint64_t off, uint32_t flags)
{
	return push_cat(js, ts, name, nlen, NULL, 0, phase, track, dur, off, flags);
}

static inline __attribute__((always_inline)) void
push(struct js *js, int64_t ts, const char *name, size_t nlen, char phase, uint64_t track,
     int64_t dur, uint64_t off)
{
	push_flags(js, ts, name, nlen, phase, track, dur, off, TM_CONV_FAIL_DROP);
}

/* id2 sub-object (ParseId2): false when malformed. */
static bool
id2_ok(struct js *js, const struct tm_jl_value *v)
{
	struct tm_jl jp = { .end = v->s + v->n, .msg = &js->tmp, .quote_max = MAX_MSG };
	const char *cur = tm_jl_skip_ws(v->s + 1, jp.end);
	if (cur == jp.end)
		return true;
	for (;;) {
		const char *k;
		size_t kl;
		bool eos;
		struct tm_jl_value fv;
		struct tm_buf uk, uv;
		tm_buf_init(&uk);
		tm_buf_init(&uv);
		enum tm_jl_rc r = next_field(&jp, &cur, '}', &k, &kl, &fv, &eos, &uk, &uv);
		tm_buf_fini(&uk);
		tm_buf_fini(&uv);
		if (r != TM_JL_OK)
			return false; /* TM_JL_INC crashes TP (PERFETTO_FATAL); count it */
		if (eos)
			return true;
	}
}

/* The fields of a complete object text in order, each handed to f (its
 * key and value; a string value unescaped, valid until the next field)
 * until f returns true. */
static void
obj_each(struct js *js, const struct tm_jl_value *obj,
	 bool (*f)(void *ctx, const char *k, size_t kl, const struct tm_jl_value *v), void *ctx)
{
	struct tm_jl jp = { .end = obj->s + obj->n, .msg = &js->tmp, .quote_max = MAX_MSG };
	const char *cur = tm_jl_skip_ws(obj->s + 1, jp.end);
	struct tm_buf uk, uv;
	tm_buf_init(&uk);
	tm_buf_init(&uv);
	while (cur != jp.end) {
		const char *k;
		size_t kl;
		bool eos;
		struct tm_jl_value fv;
		if (next_field(&jp, &cur, '}', &k, &kl, &fv, &eos, &uk, &uv) != TM_JL_OK || eos)
			break;
		if (f(ctx, k, kl, &fv))
			break;
	}
	tm_buf_fini(&uk);
	tm_buf_fini(&uv);
}

struct obj_want {
	const char *want;
	bool found;
	struct tm_jl_value v; /* obj_get: not a string (its text would not outlive the walk) */
	struct tm_buf *str;   /* obj_get_str: the string */
};

static bool
want_field(void *ctx, const char *k, size_t kl, const struct tm_jl_value *v)
{
	struct obj_want *w = ctx;
	if (!key_is(k, kl, w->want))
		return false;
	if (w->str) { /* the last of the key, as obj_get */
		w->found = v->t == TM_JL_STR;
		tm_buf_reset(w->str);
		if (w->found)
			tm_buf_add(w->str, v->s, v->n);
	} else if (v->t != TM_JL_STR) {
		w->v = *v;
		w->found = true;
	}
	return false;
}

/* Find a key's value inside a complete object text; false if absent. */
static bool
obj_get(struct js *js, const struct tm_jl_value *obj, const char *want, struct tm_jl_value *out)
{
	struct obj_want w = {want, false, {0}, NULL};
	obj_each(js, obj, want_field, &w);
	if (w.found)
		*out = w.v;
	return w.found;
}

/* A key's string value inside a complete object text, into out (its last
 * one, as obj_get); false if absent or not a string. */
static bool
obj_get_str(struct js *js, const struct tm_jl_value *obj, const char *want, struct tm_buf *out)
{
	struct obj_want w = {want, false, {0}, out};
	obj_each(js, obj, want_field, &w);
	return w.found;
}

/* The names a JSON event gives its track (keep_events): the (pid, tid)
 * thread track of its key, and an M event's process_name / thread_name
 * (json_trace_parser.cc ParseJsonPacket, case 'M': args.name).  A string
 * pid or tid is no number: none. */
static void
json_names(struct js *js, uint64_t track, bool pid_str, uint32_t pid, bool tid_str, uint32_t tid,
	   char phase, const char *name, size_t name_len, const struct tm_jl_value *args)
{
	int64_t p = pid_str ? TM_TN_NONE : pid, t = tid_str ? TM_TN_NONE : tid;
	if (track != js->tn_last) {
		tm_tn_track(&js->sc->log, track, 0, p, t, 't', NULL, 0);
		js->tn_last = track;
	}
	if (phase != 'M' || !args || !name)
		return;
	bool proc = name_len == 12 && !memcmp(name, "process_name", 12);
	bool thr = name_len == 11 && !memcmp(name, "thread_name", 11);
	if ((!proc && !thr) || !obj_get_str(js, args, "name", &js->tmp2))
		return;
	if (proc && p != TM_TN_NONE)
		tm_tn_process(&js->sc->log, p, js->tmp2.data, js->tmp2.len);
	else if (thr && t != TM_TN_NONE)
		tm_tn_thread(&js->sc->log, p, t, js->tmp2.data, js->tmp2.len);
}

struct first_num {
	bool found;
	double v;
};

static bool
first_num(void *ctx, const char *k, size_t kl, const struct tm_jl_value *v)
{
	struct first_num *o = ctx;
	(void)k;
	(void)kl;
	if (v->t != TM_JL_INT && v->t != TM_JL_DBL)
		return false;
	o->v = v->t == TM_JL_INT ? (double)v->i : v->d;
	o->found = true;
	return true;
}

/* A counter event's value (keep_events): its first numeric arg
 * (json_trace_parser.cc, case 'C': a track per arg; the list has one
 * event, drawn by its first). */
static void
json_counter(struct js *js, uint32_t detail, const struct tm_jl_value *args)
{
	struct first_num o = {false, 0};
	obj_each(js, args, first_num, &o);
	if (o.found)
		tm_detail_set_value(&js->sc->log, detail, o.v);
}

/* Numbers of a complete array text ('[' ... ']'); returns the count. */
static size_t
arr_ints(const struct tm_jl_value *arr, int64_t *vals, size_t cap)
{
	size_t n = 0;
	const char *c = arr->s + 1, *e = arr->s + arr->n - 1;
	while (c < e) {
		while (c < e && (tm_jl_is_ws(*c) || *c == ','))
			c++;
		if (c >= e)
			break;
		char *q;
		long long x = strtoll(c, &q, 10);
		if (q == c) {
			c++;
			continue;
		}
		if (n < cap)
			vals[n] = x;
		n++;
		c = q;
	}
	return n;
}

/* Phase P: legacy V8 CPU profile chunk (ParseV8SampleEvent, simplified to
 * what decides pushes: startTime, samples, timeDeltas). */
static void
v8_event(struct js *js, bool has_id, uint64_t id, uint32_t pid, const struct tm_jl_value *args,
	 uint64_t track, uint64_t off)
{
	if (!has_id || !args)
		return;
	struct tm_jl_value data, v;
	if (!obj_get(js, args, "data", &data) || data.t != TM_JL_OBJ)
		return;
	struct v8sess *s = NULL;
	for (size_t i = 0; i < js->n_v8; i++)
		if (js->v8[i].id == id && js->v8[i].pid == pid)
			s = &js->v8[i];
	if (obj_get(js, &data, "startTime", &v) && (v.t == TM_JL_INT || v.t == TM_JL_DBL)) {
		int64_t st = v.t == TM_JL_INT ? v.i : d2i(v.d);
		if (!s) {
			XGROW(js->v8, js->cap_v8, js->n_v8 + 1);
			s = &js->v8[js->n_v8++];
			s->id = id;
			s->pid = pid;
		}
		s->ts = wrap_mul(st, 1000);
		return;
	}
	struct tm_jl_value prof, samples, deltas;
	size_t ns = 0, nd = 0;
	if (obj_get(js, &data, "cpuProfile", &prof) && prof.t == TM_JL_OBJ &&
	    obj_get(js, &prof, "samples", &samples) && samples.t == TM_JL_ARR)
		ns = arr_ints(&samples, NULL, 0);
	int64_t *dv = NULL;
	if (obj_get(js, &data, "timeDeltas", &deltas) && deltas.t == TM_JL_ARR) {
		nd = arr_ints(&deltas, NULL, 0);
		dv = xcalloc(nd ? nd : 1, sizeof *dv);
		arr_ints(&deltas, dv, nd);
	}
	if (ns != nd) {
		failure(js);
	} else if (ns && !s) {
		failure(js);
	} else {
		for (size_t i = 0; i < ns; i++) {
			s->ts = wrap_add(s->ts, wrap_mul(dv[i], 1000));
			push(js, s->ts, "v8 sample", 9, 'P', track, -1, off);
		}
	}
	free(dv);
}

/* An "id" or "bind_id" value: a hex string (ParseV8SampleEvent, and
 * MaybeExtractFlowIdentifier's CStringToUInt64(str, 16)) or an integer. */
static bool
json_id(const struct tm_jl_value *v, uint64_t *out)
{
	if (v->t == TM_JL_STR) {
		char hb[32];
		size_t n = v->n < sizeof hb - 1 ? v->n : sizeof hb - 1;
		memcpy(hb, v->s, n);
		hb[n] = 0;
		char *q;
		*out = strtoull(hb, &q, 16);
		return n && !*q && n == v->n;
	}
	if (v->t == TM_JL_INT) {
		*out = (uint64_t)v->i;
		return true;
	}
	return false;
}

/* One event object at p (ParseTraceEventContents).  *stuck: a bad
 * dur/tts/tdur, after which TP never gets past this event. */
static enum tm_jl_rc
parse_event(struct js *js, const char *p, const char *end, const char **next, uint64_t off,
	    bool *stuck)
{
	struct tm_jl jp = { .end = end, .msg = &js->msg, .sticky = &js->sticky,
			 .quote_max = MAX_MSG, .quote_cut = &js->quote_cut };
	const char *cur = p;
	*stuck = false;
	if (*cur != '{' && *cur != '[') {
		tm_jl_error(&jp, "Expected '{' or '[' at the start. Got '%c'", *cur);
		return TM_JL_ERR;
	}
	char end_char = *cur == '{' ? '}' : ']';
	cur = tm_jl_skip_ws(cur + 1, end);
	if (cur == end)
		return TM_JL_INC;
	char phase = 0;
	int64_t ts = INT64_MAX, dur = -1;
	bool saw = false, pid_str = false, tid_str = false, has_id = false, has_args = false;
	uint32_t pid = 0, tid = 0;
	uint64_t pid_h = 0, tid_h = 0, id = 0, bind = 0;
	bool has_bind = false, flow_in = false, flow_out = false;
	struct tm_jl_value args = { 0 };
	bool keep = js->ctl && js->ctl->keep_events;
	bool no_fast = js->ctl && js->ctl->no_fast;
	bool want_args = false;
	bool has_name = false;
	const char *name = NULL;
	size_t name_len = 0, cat_len = 0; /* cat_len: js->cat holds the category */
	/* js->keys slots + 1; prev 0: the event's start */
	unsigned guess = js->key_first, prev = 0;
	for (;;) {
		const char *k;
		size_t kl;
		bool eos;
		struct tm_jl_value v;
		enum tm_jl_rc r = TM_JL_OK;
		eos = false;
		if (!no_fast && *cur == '}') {
			/* next_field's first test (cur < end here: every step
			 * before returned TM_JL_INC at the window's end) */
			cur++;
			break;
		}
		enum ekey ek;
		struct key_slot *ks = guess ? &js->keys[guess - 1] : NULL;
		const char *vc;
		if (!no_fast && ks && end - cur >= 16 && key_slot_match(ks, cur) &&
		    (vc = cur + ks->len, fast_value(&jp, &vc, end_char, &v, vc))) {
			ek = (enum ekey)ks->id;
			cur = vc;
			prev = guess;
			guess = ks->next;
		} else if (!no_fast && fast_field(&jp, &cur, end_char, &k, &kl, &v)) {
			ek = key_class(k, kl);
			unsigned got = key_slot_learn(js->keys, k, kl, ek);
			if (!prev)
				js->key_first = got;
			else if (prev <= KEY_SLOTS)
				js->keys[prev - 1].next = (uint8_t)got;
			prev = got;
			guess = got ? js->keys[got - 1].next : 0;
		} else {
			prev = KEY_SLOTS + 1; /* none to link the next key to */
			guess = 0;
			r = next_field(&jp, &cur, end_char, &k, &kl, &v, &eos, &js->ukey, &js->uval);
			if (r != TM_JL_OK) {
				if (r == TM_JL_ERR)
					return TM_JL_ERR;
				return TM_JL_INC;
			}
			if (eos)
				break;
			ek = key_class(k, kl);
		}
		saw = true;
		switch (ek) {
		case EK_PH:
			phase = v.t == TM_JL_STR && v.n ? v.s[0] : 0;
			break;
		case EK_PID:
			if (v.t == TM_JL_STR) {
				pid_str = true;
				pid_h = tm_fnv1a(TM_FNV_INIT, v.s, v.n);
			} else if (v.t == TM_JL_INT) {
				pid = to_u32(v.i);
			} else if (v.t == TM_JL_DBL) {
				pid = to_u32(d2i(v.d));
			}
			break;
		case EK_TS:
			coerce_ts(&v, &ts);
			break;
		case EK_TID:
			if (v.t == TM_JL_STR) {
				tid_str = true;
				tid_h = tm_fnv1a(TM_FNV_INIT, v.s, v.n);
			} else if (v.t == TM_JL_INT) {
				tid = to_u32(v.i);
			} else if (v.t == TM_JL_DBL) {
				tid = to_u32(d2i(v.d));
			}
			break;
		case EK_TTS: {
			int64_t x;
			if (!coerce_ts(&v, &x))
				goto bad;
			break;
		}
		case EK_DUR:
			if (!coerce_ts(&v, &dur))
				goto bad;
			break;
		case EK_NAME:
			/* names for alignment samples (align_scan.h) too; an
			 * unescaped one is in js->uval, which the next field
			 * reuses: that one is copied */
			has_name = v.t == TM_JL_STR && v.n;
			name = v.s;
			name_len = has_name ? v.n : 0;
			if (has_name && v.s == js->uval.data) {
				tm_buf_reset(&js->name);
				tm_buf_add(&js->name, v.s, v.n);
				name = js->name.data;
			}
			break;
		case EK_ID:
			has_id = json_id(&v, &id);
			want_args |= v.t == TM_JL_STR;
			break;
		case EK_ID2:
			if (v.t == TM_JL_OBJ && !id2_ok(js, &v))
				failure(js);
			break;
		case EK_BIND_ID:
			/* flow v2 (json_trace_tokenizer.cc: bind_id through
			 * ExtractId, a string read as hex): an alignment sample */
			has_bind = json_id(&v, &bind);
			break;
		case EK_FLOW_IN:
			if (v.t == TM_JL_BOOL)
				flow_in = v.i != 0;
			break;
		case EK_FLOW_OUT:
			if (v.t == TM_JL_BOOL)
				flow_out = v.i != 0;
			break;
		case EK_ARGS:
			if (v.t == TM_JL_OBJ) {
				args = v;
				has_args = true;
			}
			break;
		case EK_CAT:
			/* "cat" (json_trace_tokenizer.cc; "" is none): an E
			 * with one closes only a B of that category */
			cat_len = 0;
			if (keep && v.t == TM_JL_STR && v.n) {
				tm_buf_reset(&js->cat);
				tm_buf_add(&js->cat, v.s, v.n);
				cat_len = v.n;
			}
			break;
		case EK_OTHER:
			break;
		}
		continue;
	bad:
		failure(js);
		*stuck = true;
		return TM_JL_INC;
	}
	(void)want_args;
	*next = cur;
	js->sc->n_packets++;
	if (!phase) {
		if (saw)
			failure(js);
		return TM_JL_OK;
	}
	bool untimed = phase == 'M'; /* its ts is no time (TM_CONV_UNTIMED) */
	if (ts == INT64_MAX) {
		if (phase != 'M') {
			failure(js);
			return TM_JL_OK;
		}
		ts = 0;
	}
	if (tid == 0 && pid != 0 && !tid_str)
		tid = pid;
	uint64_t track = 0;
	if (keep) {
		uint64_t kk[4] = { pid_str ? pid_h : pid, tid_str ? tid_h : tid, pid_str, tid_str };
		track = tm_fnv1a(TM_FNV_INIT, kk, sizeof kk);
	}
	if (keep)
		json_names(js, track, pid_str, pid, tid_str, tid, phase, has_name ? name : NULL, name_len,
			   has_args ? &args : NULL);
	if (phase == 'P') {
		v8_event(js, has_id, id, pid, has_args ? &args : NULL, track, off);
		return TM_JL_OK;
	}
	struct tm_align_samples *al = js_align(js);
	tm_al_json(al, phase, has_name ? name : NULL, name_len, has_id, id, ts);
	if (has_bind && (flow_in || flow_out))
		tm_al_id(al, AL_FLOW, bind, ts, 0, 0,
			 (flow_out ? AL_OUT : 0) | (flow_in ? AL_IN : 0), AL_NO_OFF);
	uint32_t det = push_cat(js, ts, has_name ? name : NULL, name_len, js->cat.data, cat_len, phase,
				track, phase == 'X' ? dur : -1, off,
				TM_CONV_FAIL_DROP | (untimed ? TM_CONV_UNTIMED : 0));
	if (det && phase == 'C' && has_args)
		json_counter(js, det, &args);
	return TM_JL_OK;
}

/* systemTraceEvents line (HandleSystemTraceEvent). */
static void
sys_line(struct js *js)
{
	const char *l = js->line.data ? js->line.data : "";
	size_t n = js->line.len;
	if (n == 0 || l[0] == '#')
		return;
	js->sc->n_packets++;
	struct tm_systrace_line sl;
	if (!tm_systrace_tokenize(l, n, &sl)) {
		tm_buf_reset(&js->tmp);
		tm_buf_addf(&js->tmp, "Not a known systrace event format (line: %.*s)",
			    (int)strnlen(l, n), l);
		fatal(js, js->tmp.data, js->line_off);
		return;
	}
	struct tm_atrace_event ev = {.name = sl.event, .name_len = sl.event_len};
	uint32_t flags = tm_atrace_line_scan(&sl, &js->clean, tm_scan_align(js->sc), &ev);
	if (js->ctl && js->ctl->keep_events)
		tm_tn_atrace(&js->sc->log, &ev, sl.pid, sl.task, sl.task_len);
	uint32_t d = push_flags(js, sl.ts, ev.name, ev.name_len, ev.phase, ev.track, -1, js->line_off,
				flags);
	if (ev.phase == 'C')
		tm_detail_set_value(&js->sc->log, d, (double)ev.value);
}

/* ReadOneJsonKey.  Returns 1 found (key in js->ukey, *val at the value's
 * first char), 2 end of dictionary (*val after '}'), 0 needs more, -1
 * fatal.  *keystart: where to resume when more is needed. */
static int
read_key(struct js *js, const char *s, const char *end, const char **val, const char **keystart)
{
	int state = 0;
	bool esc = false;
	*keystart = s;
	for (; s < end; s++) {
		if (state != 1 && isspace((unsigned char)*s))
			continue;
		switch (state) {
		case 0:
			if (*s == '}') {
				*val = s + 1;
				return 2;
			}
			if (*s == ',')
				continue;
			if (*s != '"')
				return -1;
			*keystart = s;
			tm_buf_reset(&js->ukey);
			state = 1;
			esc = false;
			break;
		case 1:
			if (iscntrl((unsigned char)*s))
				return -1;
			if (*s == '"' && !esc) {
				state = 2;
				break;
			}
			if (esc) {
				switch (*s) {
				case '"': case '\\': case '/': tm_buf_addc(&js->ukey, *s); break;
				case 'b': tm_buf_addc(&js->ukey, '\b'); break;
				case 'f': tm_buf_addc(&js->ukey, '\f'); break;
				case 'n': tm_buf_addc(&js->ukey, '\n'); break;
				case 'r': tm_buf_addc(&js->ukey, '\r'); break;
				case 't': tm_buf_addc(&js->ukey, '\t'); break;
				case 'u': tm_buf_adds(&js->ukey, "\\u"); break;
				default: return -1;
				}
			} else if (*s != '\\') {
				tm_buf_addc(&js->ukey, *s);
			}
			esc = *s == '\\' && !esc;
			break;
		case 2:
			if (*s != ':')
				return -1;
			state = 3;
			break;
		case 3:
			if (*s == '[' || *s == '{' || isdigit((unsigned char)*s) || *s == '-' ||
			    *s == '"' || *s == 't' || *s == 'f' || *s == 'n') {
				*val = s;
				return 1;
			}
			return -1;
		}
	}
	return 0;
}

/* Run the state machine over [p, end) (file offset base).  Returns bytes
 * consumed; stops early when more input is needed. */
static size_t
step(struct js *js, const char *p, const char *end, uint64_t base, bool eof)
{
	const char *cur = p;
#define OFF(c) (base + (uint64_t)((c) - p))
	while (cur < end) {
		switch (js->pos) {
		case P_START:
			while (cur < end && isspace((unsigned char)*cur))
				cur++;
			if (cur == end)
				break;
			if (*cur != '{' && *cur != '[') {
				fatal(js,
				      "Failure parsing JSON: first non-whitespace character is not [ or {",
				      OFF(cur));
				break;
			}
			js->object_form = *cur == '{';
			js->pos = js->object_form ? P_DICT : P_EVENTS;
			cur++;
			break;
		case P_DICT: {
			const char *val, *ks;
			int r = read_key(js, cur, end, &val, &ks);
			if (r == 0)
				return (size_t)(ks - p);
			if (r < 0) {
				fatal(js, "Failure parsing JSON: encountered fatal error while parsing key",
				      OFF(ks));
				break;
			}
			if (r == 2) {
				js->pos = P_EOF;
				cur = val;
				break;
			}
			const char *k = js->ukey.data;
			size_t kl = js->ukey.len;
			if (key_is(k, kl, "traceEvents")) {
				if (*val != '[') {
					fatal(js, "Failure parsing JSON: traceEvents is not an array.",
					      OFF(val));
					break;
				}
				js->pos = P_EVENTS;
				js->comma = false;
				cur = val + 1;
			} else if (key_is(k, kl, "systemTraceEvents")) {
				if (*val != '"') {
					fatal(js,
					      "Failure parsing JSON: systemTraceEvents is not an string.",
					      OFF(val));
					break;
				}
				js->pos = P_SYS;
				js->sy_esc = false;
				tm_buf_reset(&js->line);
				cur = val + 1;
				js->line_off = OFF(cur);
			} else if (key_is(k, kl, "displayTimeUnit")) {
				/* ReadOneJsonString: ctl chars and bad escapes are fatal */
				if (*val != '"') {
					fatal(js, "Could not parse displayTimeUnit", OFF(val));
					break;
				}
				const char *s = val + 1;
				bool esc = false, done = false, bad = false;
				for (; s < end; s++) {
					if (iscntrl((unsigned char)*s)) {
						bad = true;
						break;
					}
					if (*s == '"' && !esc) {
						done = true;
						break;
					}
					if (esc && !strchr("\"\\/bfnrtu", *s)) {
						bad = true;
						break;
					}
					esc = *s == '\\' && !esc;
				}
				if (bad) {
					fatal(js, "Could not parse displayTimeUnit", OFF(val));
					break;
				}
				if (!done)
					return (size_t)(ks - p);
				tm_oplog_stat(&js->sc->log, 0, TM_STAT_JSON_DISPLAY_TIME_UNIT, 1);
				cur = s + 1;
			} else {
				js->sk_meta = key_is(k, kl, "metadata");
				snprintf(js->sk_key, sizeof js->sk_key, "%s", k);
				js->sk_str = js->sk_esc = false;
				js->sk_brace = js->sk_bracket = 0;
				js->pos = P_SKIP;
				cur = val;
			}
			break;
		}
		case P_SKIP:
			for (; cur < end; cur++) {
				char c = *cur;
				if (js->sk_str) {
					if (iscntrl((unsigned char)c))
						goto skip_bad;
					if (c == '"' && !js->sk_esc) {
						js->sk_str = false;
						continue;
					}
					if (js->sk_esc && !strchr("\"\\/bfnrtu", c))
						goto skip_bad;
					js->sk_esc = c == '\\' && !js->sk_esc;
					continue;
				}
				if (c == '"') {
					js->sk_str = true;
					js->sk_esc = false;
					continue;
				}
				if (js->sk_brace == 0 && js->sk_bracket == 0 && (c == ',' || c == '}')) {
					js->pos = P_DICT;
					break;
				}
				if (c == '[') {
					js->sk_bracket++;
				} else if (c == ']') {
					if (!js->sk_bracket)
						goto skip_bad;
					js->sk_bracket--;
				} else if (c == '{') {
					js->sk_brace++;
				} else if (c == '}') {
					if (!js->sk_brace)
						goto skip_bad;
					js->sk_brace--;
				}
			}
			break;
		skip_bad:
			if (js->sk_meta) {
				fatal(js, "Failure parsing JSON: error while parsing metadata", OFF(cur));
			} else {
				tm_buf_reset(&js->tmp);
				tm_buf_addf(&js->tmp,
					    "Failure parsing JSON: error while parsing value for key %s",
					    js->sk_key);
				fatal(js, js->tmp.data, OFF(cur));
			}
			break;
		case P_SYS:
			for (; cur < end && js->pos == P_SYS; cur++) {
				char c = *cur;
				if (c == '"' && !js->sy_esc) {
					js->pos = P_DICT;
					tm_buf_reset(&js->line);
					continue;
				}
				if (c == 'n' && js->sy_esc) {
					sys_line(js);
					tm_buf_reset(&js->line);
					js->sy_esc = false;
					js->line_off = OFF(cur + 1);
					continue;
				}
				if (js->sy_esc) {
					switch (c) {
					case '"': case '\\': case '/': tm_buf_addc(&js->line, c); break;
					case 'b': tm_buf_addc(&js->line, '\b'); break;
					case 'f': tm_buf_addc(&js->line, '\f'); break;
					case 'r': tm_buf_addc(&js->line, '\r'); break;
					case 't': tm_buf_addc(&js->line, '\t'); break;
					case 'u': tm_buf_adds(&js->line, "\\u"); break;
					default:
						fatal(js,
						      "Failure parsing JSON: encountered fatal error while "
						      "parsing event inside trace event string",
						      OFF(cur));
						continue;
					}
				} else if (c != '\\') {
					const char *q = cur;
					while (q < end && *q != '"' && *q != '\\')
						q++;
					tm_buf_add(&js->line, cur, (size_t)(q - cur));
					cur = q - 1;
					continue;
				}
				js->sy_esc = c == '\\' && !js->sy_esc;
				if (js->line.len > MAX_WINDOW) {
					js->status = tm_error_set(js->err, TM_ERR_LIMIT,
								  "byte 0x%" PRIx64
								  ": systemTraceEvents line longer than 64 MiB",
								  js->line_off);
					js->pos = P_DONE;
				}
			}
			break;
		case P_EVENTS: {
			cur = tm_jl_skip_ws(cur, end);
			if (cur == end)
				break;
			if (*cur == ',' && !js->comma) {
				js->comma = true;
				cur++;
				break;
			}
			if (*cur == ']') {
				js->pos = js->object_form ? P_DICT : P_EOF;
				js->comma = false;
				cur++;
				break;
			}
			const char *nx = cur;
			bool stuck;
			if (js->sticky.len)
				tm_buf_reset(&js->sticky);
			js->quote_cut = false;
			enum tm_jl_rc r = parse_event(js, cur, end, &nx, OFF(cur), &stuck);
			if (r == TM_JL_ERR && js->quote_cut && !eof)
				return (size_t)(cur - p); /* error text needs more bytes */
			if (js->sticky.len && (stuck || (r == TM_JL_INC && eof))) {
				/* the iterator's status_ was left set by an integer
				 * overflow: TP reports it when the event stops early */
				tm_buf_reset(&js->tmp);
				tm_buf_addf(&js->tmp, "Failure parsing JSON: %s", js->sticky.data);
				fatal(js, js->tmp.data, OFF(cur));
				break;
			}
			if (r == TM_JL_ERR) {
				tm_buf_reset(&js->tmp);
				tm_buf_addf(&js->tmp, "Failure parsing JSON: %s", js->msg.data);
				fatal(js, js->tmp.data, OFF(cur));
				break;
			}
			if (stuck) {
				/* TP returns "needs more data" for ever: nothing after this
				 * event is read.  It re-records the failure on every later
				 * chunk; we model one chunk (one failure). */
				js->pos = P_STUCK;
				break;
			}
			if (r == TM_JL_INC) {
				if (!eof)
					return (size_t)(cur - p);
				/* incomplete at EOF: lost; the EOF check decides */
				return (size_t)(end - p);
			}
			if (js->ctl && js->ctl->no_fast) {
				js->comma = false;
				cur = nx;
				break;
			}
			/* the next round's first steps, without the round: the
			 * separator (whitespace, ',' and whitespace) */
			cur = tm_jl_skip_ws(nx, end);
			js->comma = cur != end && *cur == ',';
			if (js->comma)
				cur++;
			break;
		}
		case P_STUCK:
		case P_EOF:
		case P_DONE:
			/* After the closing bracket TP ignores the rest of the chunk
			 * it is in (a later chunk would fail "tried to parse data
			 * after EOF"; not modelled). */
			return (size_t)(end - p);
		}
	}
#undef OFF
	return (size_t)(cur - p);
}

static void
js_init(struct js *js, struct tm_scan *sc, const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	memset(js, 0, sizeof *js);
	js->sc = sc;
	js->ctl = ctl;
	js->err = err;
	js->status = TM_OK;
	tm_al_cache_init(&js->al_cache, ctl && ctl->no_fast);
	tm_buf_init(&js->line);
	tm_buf_init(&js->w);
	tm_buf_init(&js->msg);
	tm_buf_init(&js->sticky);
	tm_buf_init(&js->ukey);
	tm_buf_init(&js->uval);
	tm_buf_init(&js->name);
	tm_buf_init(&js->cat);
	tm_buf_init(&js->tmp);
	tm_buf_init(&js->tmp2);
	tm_buf_init(&js->clean);
}

static void
js_fini(struct js *js)
{
	if (js->al)
		js->al->cache = NULL; /* it lives in js */
	tm_al_cache_fini(&js->al_cache);
	tm_buf_fini(&js->line);
	tm_buf_fini(&js->w);
	tm_buf_fini(&js->msg);
	tm_buf_fini(&js->sticky);
	tm_buf_fini(&js->ukey);
	tm_buf_fini(&js->uval);
	tm_buf_fini(&js->name);
	tm_buf_fini(&js->cat);
	tm_buf_fini(&js->tmp);
	tm_buf_fini(&js->tmp2);
	tm_buf_fini(&js->clean);
	free(js->v8);
}

static void
drop_front(struct tm_buf *b, size_t n)
{
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = 0;
}

/* Parse the carried window as far as it goes. */
static void
window_steps(struct js *js)
{
	for (;;) {
		size_t used = step(js, js->w.data, js->w.data + js->w.len, js->w_off, false);
		drop_front(&js->w, used);
		js->w_off += used;
		js->last_try = js->w.len;
		if (!used || !js->w.len || js->pos == P_DONE)
			break;
	}
}

/* One block of the member, at file offset js->total. */
static void
js_feed(struct js *js, const char *p, size_t n)
{
	uint64_t off = js->total;
	js->total += n;
	if (js->pos == P_DONE || js->status != TM_OK)
		return;
	if (js->w.len) {
		if (js->w.len + n > MAX_WINDOW) {
			js->status = tm_error_set(js->err, TM_ERR_LIMIT,
						  "byte 0x%" PRIx64
						  ": JSON token or event larger than 64 MiB",
						  js->w_off);
			js->pos = P_DONE;
			return;
		}
		if (js->w.len + n < 2 * js->last_try) {
			tm_buf_add(&js->w, p, n);
			return;
		}
		/* Complete the carried item with the front of this block, a
		 * piece at a time (each piece at least doubles the window),
		 * and go on in the block itself once the window is past its
		 * start: the block is not copied whole. */
		size_t taken = 0;
		for (;;) {
			size_t k = n - taken, want = js->w.len > 4096 ? js->w.len : 4096;
			tm_buf_add(&js->w, p + taken, k < want ? k : want);
			taken += k < want ? k : want;
			window_steps(js);
			if (js->pos == P_DONE) {
				js->w.len = 0;
				return;
			}
			if (js->w_off >= off) {
				size_t at = (size_t)(js->w_off - off);
				js->w.len = 0;
				p += at;
				n -= at;
				off += at;
				break;
			}
			if (taken == n)
				return;
		}
	}
	size_t used = step(js, p, p + n, off, false);
	if (used < n && js->pos != P_DONE) {
		tm_buf_add(&js->w, p + used, n - used);
		js->w_off = off + used;
		js->last_try = js->w.len;
	}
}

/* End of member: parse what is left, then OnPushDataToSorter's check. */
static void
js_finish(struct js *js)
{
	if (js->status != TM_OK)
		return;
	while (js->w.len && js->pos != P_DONE) {
		size_t used = step(js, js->w.data, js->w.data + js->w.len, js->w_off, true);
		drop_front(&js->w, used);
		js->w_off += used;
		if (!used)
			break;
	}
	switch (js->pos) {
	case P_START:
		fatal(js, js->total ? "Failure parsing JSON: first chunk has only whitespace"
				    : "JSON trace file is incomplete (ERR:tp-corrupt)",
		      js->total);
		break;
	case P_EVENTS:
	case P_STUCK:
		if (!js->object_form)
			break;
		__attribute__((fallthrough));
	case P_DICT:
	case P_SKIP:
	case P_SYS:
		fatal(js, "JSON trace file is incomplete (ERR:tp-corrupt)", js->total);
		break;
	case P_EOF:
	case P_DONE:
		break;
	}
}

static void
js_feed_cb(void *self, const char *p, size_t n)
{
	js_feed(self, p, n);
}

static void
js_finish_cb(void *self)
{
	js_finish(self);
}

enum tm_status
tm_scan_json(struct tm_stream *st, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
	     struct tm_error *err)
{
	struct js js;
	js_init(&js, sc, ctl, err);
	struct tm_text_scanner ts = { &js, js_feed_cb, js_finish_cb, &js.status, &js.total };
	enum tm_status rc = tm_scan_text(st, sc, ctl, err, &ts);
	js_fini(&js);
	return rc;
}

enum tm_status
tm_scan_json_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
		 const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	struct js js;
	js_init(&js, sc, ctl, err);
	struct tm_text_scanner ts = { &js, js_feed_cb, js_finish_cb, &js.status, &js.total };
	enum tm_status rc = tm_scan_text_mem(p, n, block, sc, ctl, err, &ts);
	js_fini(&js);
	return rc;
}

/* The format table's sniffer (util/trace_type.cc, GuessTraceType): the
 * first 128 bytes without whitespace start an object or an array of
 * objects (after the manifest's and Gecko's sniffers, which see the same). */
bool
tm_sniff_json(struct tm_sniff_in *in)
{
	tm_sniff_strip(in);
	return tm_sniff_starts(in->s, in->sn, "{\"") || tm_sniff_starts(in->s, in->sn, "[{\"");
}

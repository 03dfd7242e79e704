/* SPDX-License-Identifier: MIT */
/*
 * The check of a log read back from disk (tm_oplog_valid,
 * tm_oplog_valid_split): every op, run and delta within bounds and of the
 * shapes the encoder writes, before anything decodes it.
 */
#include "oplog_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- validation of a log read back from disk ---- */

struct vrd {
	const uint8_t *base, *p, *end;
	const char *bad;
	const struct tm_oplog_deltas *d; /* out-of-line deltas, or none allowed */
	uint64_t inline_deltas;         /* delta bytes of runs kept in the log */
};

static uint64_t
v_u(struct vrd *r)
{
	uint64_t v = 0;
	for (unsigned sh = 0;; sh += 7) {
		if (r->p >= r->end || sh > 63) {
			r->bad = r->p >= r->end ? "op cut off" : "varint too long";
			r->p = r->end;
			return 0;
		}
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80))
			return v;
	}
}

static uint32_t
v_u32(struct vrd *r)
{
	uint64_t v = v_u(r);
	if (v > UINT32_MAX && !r->bad)
		r->bad = "value out of range";
	return (uint32_t)v;
}

/* n items of at least min_bytes each must fit in what is left. */
static bool
v_fits(struct vrd *r, uint64_t n, size_t min_bytes)
{
	if (r->bad)
		return false;
	if (n > (uint64_t)(r->end - r->p) / min_bytes) {
		r->bad = "count larger than the log";
		return false;
	}
	return true;
}

static void
v_clocks(struct vrd *r, uint64_t n)
{
	if (!v_fits(r, n, 4))
		return;
	for (uint64_t i = 0; i < n && !r->bad; i++) {
		(void)v_u32(r);
		(void)v_u(r);
		(void)v_u(r);
		(void)v_u(r);
	}
}

/* The sum of the eight bytes of x (each below 0x80). */
static inline uint64_t
hsum8(uint64_t x)
{
	x = (x & 0x00ff00ff00ff00ffull) + (x >> 8 & 0x00ff00ff00ff00ffull);
	return (x * 0x0001000100010001ull) >> 48;
}

/* The n deltas of a run at r->p against its skip table (every block's first
 * value and offset), sorted after the first; returns the last value (v: the
 * value before the first).  This is most of the work of checking a saved
 * scan: what v_u checks, without its per-byte tests where eight bytes are
 * left before the end (one load for a varint of up to 8 bytes, varint_load8),
 * and eight bytes at a time where a whole block fits before the end and the
 * deltas are one or two bytes and not negative (a timestamp's deltas mostly
 * are). */
static int64_t
v_deltas(struct vrd *r, const uint8_t *skip, uint32_t n, int64_t v)
{
	const uint8_t *base = r->p, *p = r->p, *end = r->end;
	const uint64_t hi = 0x8080808080808080ull, lo = 0x0101010101010101ull;
	int64_t prev = INT64_MIN;
	for (uint32_t i = 0; i < n && !r->bad;) {
		int64_t sv;
		uint64_t so;
		memcpy(&sv, skip + (size_t)(i / TM_RUN_SKIP) * 16, 8);
		memcpy(&so, skip + (size_t)(i / TM_RUN_SKIP) * 16 + 8, 8);
		if (so != (uint64_t)(p - base)) {
			r->bad = "run skip table does not match its values";
			break;
		}
		uint32_t bend = n - i > TM_RUN_SKIP ? i + TM_RUN_SKIP : n;
		bool fast = (size_t)(end - p) >= BLOCK_MAX; /* no end within the block */
		for (uint32_t first = i; i < bend; i++) {
			/* Eight bytes (before end: the whole block fits, or
			 * eight bytes do) up to their last complete varint:
			 * the block's rest holds at least 8 varints (so no
			 * more than it has are taken); two-byte varints at
			 * most, first bytes even (zigzag: the delta is >= 0),
			 * no overflow. */
			while (i > first && (fast || end - p >= 8) && bend - i >= 8 &&
			       v <= INT64_MAX - (1 << 20)) {
				uint64_t w;
				memcpy(&w, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
				w = __builtin_bswap64(w); /* byte k at bits 8k.. */
#endif
				if ((w & (hi | 0x0001000100010001ull)) == 0x0080008000800080ull) {
					/* four two-byte deltas, first bytes even:
					 * their 14-bit values in 16-bit lanes */
					uint64_t y = (w & 0x007f007f007f007full) |
						     (w >> 1 & 0x3f803f803f803f80ull);
					v += (int64_t)(((y * 0x0001000100010001ull) >> 48) / 2);
					prev = v;
					i += 4;
					p += 8;
					continue;
				}
				uint64_t t = ~w & hi; /* varints' last bytes */
				if (!t)
					break;
				unsigned last = (63u - (unsigned)__builtin_clzll(t)) >> 3;
				uint64_t keep = last == 7 ? ~0ull : (1ull << (8 * (last + 1))) - 1;
				uint64_t c = w & hi & keep; /* continued */
				if (c & c << 8)
					break; /* three bytes or more */
				uint64_t second = (c >> 7) << 8 & keep, firsts = lo & keep & ~second;
				if (w & firsts)
					break; /* a negative delta: the slow way says what */
				uint64_t low = w & ~hi & keep;
				uint64_t sz = hsum8(low & firsts * 0xff) + (hsum8(low & second * 0xff) << 7);
				v += (int64_t)(sz / 2);
				prev = v;
				i += (uint32_t)hsum8(t >> 7);
				p += last + 1;
			}
			if (i >= bend)
				break;
			uint64_t z, w8, stop;
			const uint8_t *q;
			/* one varint, where eight bytes are before end */
			bool room = fast || end - p >= 8;
			if (room && *p < 0x80) {
				z = *p++;
			} else if (room && p[1] < 0x80) {
				z = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
				p += 2;
			} else if (room && (stop = varint_load8(p, &w8)) != 0 &&
				   (q = varint_squeeze(p, end, w8, stop, &z)) != NULL) {
				p = q; /* 3-8 bytes, by proto_wire.h's one-load decoder */
			} else {
				r->p = p;
				z = v_u(r);
				p = r->p;
				if (r->bad)
					break;
			}
			v = wrap_add(v, tm_ol_unzz(z));
			if (i == first && sv != v)
				r->bad = "run skip table does not match its values";
			else if (v < prev)
				r->bad = "run values not sorted";
			if (r->bad)
				break;
			prev = v;
		}
	}
	r->p = p;
	return v;
}

/* A RUN's body after its kind-specific fields: skip table and deltas (in
 * the log, or out of line: spilled). */
static void
v_run(struct vrd *r, uint32_t n, int64_t *last_ts, bool spilled)
{
	int64_t last = tm_ol_unzz(v_u(r));
	if (r->bad)
		return;
	if (n == 0) {
		r->bad = "empty run";
		return;
	}
	uint32_t n_skip = (n + TM_RUN_SKIP - 1) / TM_RUN_SKIP;
	if (!v_fits(r, n_skip, 16))
		return;
	const uint8_t *skip = r->p;
	r->p += (size_t)n_skip * 16;
	struct vrd out = {0}, *dr = r; /* where the deltas are read */
	if (spilled) {
		uint64_t off = v_u(r), len = v_u(r);
		const uint8_t *p = r->bad ? NULL : r->d->get(r->d->ctx, off, len);
		if (!p) {
			if (!r->bad)
				r->bad = "a spilled run's deltas are not where it says";
			return;
		}
		out = (struct vrd){p, p, p + len, NULL, NULL, 0};
		dr = &out;
	}
	if (!v_fits(dr, n, 1)) {
		r->bad = r->bad ? r->bad : dr->bad;
		return;
	}
	const uint8_t *base = dr->p;
	int64_t v = v_deltas(dr, skip, n, *last_ts);
	if (!dr->bad && spilled && dr->p != dr->end)
		dr->bad = "a spilled run's deltas do not end where it says";
	if (!dr->bad && v != last)
		dr->bad = "run's last value does not match";
	if (!spilled)
		r->inline_deltas += (uint64_t)(dr->p - base);
	r->bad = r->bad ? r->bad : dr->bad;
	*last_ts = v;
}

bool
tm_oplog_valid(const struct tm_oplog *l, char *why, size_t cap)
{
	return tm_oplog_valid_split(l, NULL, NULL, why, cap);
}

bool
tm_oplog_valid_split(const struct tm_oplog *l, const struct tm_oplog_deltas *d,
		     uint64_t *inline_deltas, char *why, size_t cap)
{
	/* (an empty log read back has no bytes: NULL + 0 is undefined) */
	struct vrd r = {l->bytes, l->bytes, l->bytes ? l->bytes + l->len : NULL, NULL, d, 0};
	int64_t last_ts = 0;
	if (!l->bytes && l->len)
		r.bad = "no bytes";
	while (!r.bad && r.p < r.end) {
		uint8_t kb = *r.p++;
		enum tm_op_kind kind = (enum tm_op_kind)(kb & 0x7f);
		if (kind < TM_OP_MACHINE || kind > TM_OP_TIMEZONE) {
			r.bad = "unknown op kind";
			break;
		}
		(void)v_u(&r); /* offset delta */
		bool has_clock = kind == TM_OP_PACKET || kind == TM_OP_CONVERT ||
				 kind == TM_OP_CONVERT_ARRAY || kind == TM_OP_SERVICE || kind == TM_OP_RUN;
		if (!(kb & 0x80)) {
			(void)v_u32(&r);
			if (has_clock) {
				(void)v_u32(&r);
				(void)v_u32(&r);
			}
		}
		switch (kind) {
		case TM_OP_MACHINE:
			break;
		case TM_OP_SNAPSHOT: {
			for (int k = 0; k < 3; k++)
				(void)v_u32(&r); /* seq, flags, primary */
			v_clocks(&r, v_u32(&r));
			break;
		}
		case TM_OP_PACKET:
			(void)v_u32(&r);
			last_ts = wrap_add(last_ts, tm_ol_unzz(v_u(&r)));
			(void)v_u32(&r);
			break;
		case TM_OP_PUSH:
		case TM_OP_CONVERT:
			(void)v_u32(&r);
			last_ts = wrap_add(last_ts, tm_ol_unzz(v_u(&r)));
			if (v_u32(&r) > l->x->n_details && !r.bad)
				r.bad = "detail reference out of range";
			break;
		case TM_OP_PUSH_NOTS:
			(void)v_u32(&r);
			break;
		case TM_OP_CONVERT_ARRAY: {
			(void)v_u32(&r);
			uint32_t n = v_u32(&r);
			if (v_fits(&r, n, 1))
				for (uint32_t i = 0; i < n && !r.bad; i++)
					last_ts = wrap_add(last_ts, tm_ol_unzz(v_u(&r)));
			break;
		}
		case TM_OP_SERVICE:
			(void)v_u32(&r);
			last_ts = wrap_add(last_ts, tm_ol_unzz(v_u(&r)));
			break;
		case TM_OP_REMOTE_SYNC: {
			uint32_t n = v_u32(&r);
			uint64_t total = 0;
			if (v_fits(&r, 2 * (uint64_t)n, 1))
				for (uint64_t i = 0; i < 2 * (uint64_t)n && !r.bad; i++)
					total += v_u32(&r);
			v_clocks(&r, total);
			break;
		}
		case TM_OP_TIMEZONE:
			(void)v_u(&r);
			break;
		case TM_OP_SYSINFO:
		case TM_OP_FATAL: {
			uint64_t n = v_u(&r);
			if (v_fits(&r, n, 1))
				r.p += n;
			break;
		}
		case TM_OP_STAT:
			if (v_u32(&r) >= TM_STAT__COUNT && !r.bad)
				r.bad = "unknown stat";
			(void)v_u32(&r);
			break;
		case TM_OP_RUN: {
			uint32_t flags = v_u32(&r);
			(void)v_u32(&r);
			uint32_t kinds = flags & (TM_RUN_PACKET | TM_RUN_CONVERT | TM_RUN_ARRAY);
			if (!r.bad && kinds != TM_RUN_PACKET && kinds != TM_RUN_CONVERT &&
			    kinds != TM_RUN_ARRAY)
				r.bad = "run of no single kind";
			bool spilled = flags & TM_RUN_SPILLED;
			if (!r.bad && spilled && !r.d)
				r.bad = "a spilled run (its deltas are not in the log)";
			uint32_t n_arrays = flags & TM_RUN_ARRAY ? v_u32(&r) : 1;
			uint32_t n = v_u32(&r);
			if (!r.bad && (n_arrays == 0 || n_arrays > n))
				r.bad = "run's arrays do not match its values";
			v_run(&r, n, &last_ts, spilled);
			break;
		}
		}
	}
	const struct tm_oplog_x *x = l->x;
	for (size_t i = 0; !r.bad && i < x->n_details; i++)
		if (x->details[i].name && (x->details[i].name - 1 >= x->pool.len || !x->pool.data))
			r.bad = "detail name out of range";
		else if (x->details[i].flags & ~(TM_DETAIL_CAT | TM_DETAIL_NONAME | TM_DETAIL_EOF |
						  TM_DETAIL_VALUE) ||
			 ((x->details[i].flags & TM_DETAIL_CAT) &&
			  tm_ol_cat_offset(x, &x->details[i]) == SIZE_MAX))
			r.bad = "detail category out of range";
		else if ((x->details[i].flags & TM_DETAIL_EOF) && x->details[i].dur &&
			 (x->details[i].dur < 0 || (uint64_t)x->details[i].dur - 1 >= x->pool.len ||
			  !memchr(x->pool.data + x->details[i].dur - 1, 0,
				  x->pool.len - (size_t)(x->details[i].dur - 1))))
			r.bad = "detail end-of-file name out of range";
	if (r.bad && why)
		snprintf(why, cap, "op log byte %zu: %s", (size_t)(r.p - r.base), r.bad);
	if (inline_deltas)
		*inline_deltas = r.inline_deltas;
	return !r.bad;
}

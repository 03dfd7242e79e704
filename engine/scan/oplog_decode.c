/* SPDX-License-Identifier: MIT */
/*
 * Decoding the op log (oplog.h): the iterator over its ops, its positions,
 * and a run's values (from memory or the spill file, oplog_spill.c).
 */
#include "oplog_priv.h"

#include <stdlib.h>
#include <string.h>

/* ---- decoding ---- */

void
tm_opiter_init(struct tm_opiter *it, const struct tm_oplog *log)
{
	memset(it, 0, sizeof *it);
	it->log = log;
	tm_buf_init(&it->text);
}

void
tm_opiter_fini(struct tm_opiter *it)
{
	free(it->clocks);
	free(it->counts);
	free(it->tss);
	BIG_FREE(it->run_tss, it->cap_run_tss);
	tm_buf_fini(&it->text);
}

/* The varint at *pp (one byte nearly always): the decoder of the log's
 * ops and of runs' deltas. */
static inline uint64_t
rd_u(const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint64_t v = *p++;
	if (__builtin_expect(v >= 0x80, 0)) {
		v &= 0x7f;
		for (unsigned shift = 7;; shift += 7) {
			uint8_t b = *p++;
			v |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80))
				break;
		}
	}
	*pp = p;
	return v;
}

/* The varint at the iterator's position. */
static inline uint64_t
get_u(struct tm_opiter *it)
{
	const uint8_t *p = it->log->bytes + it->pos;
	uint64_t v = rd_u(&p);
	it->pos = (size_t)(p - it->log->bytes);
	return v;
}

static inline int64_t
get_ts(struct tm_opiter *it)
{
	it->last_ts = wrap_add(it->last_ts, tm_ol_unzz(get_u(it)));
	return it->last_ts;
}

static void
get_clocks(struct tm_opiter *it, size_t n)
{
	XGROW(it->clocks, it->cap_clocks, n + 1);
	for (size_t i = 0; i < n; i++) {
		it->clocks[i].id = (uint32_t)get_u(it);
		it->clocks[i].ts = tm_ol_unzz(get_u(it));
		it->clocks[i].unit = get_u(it);
		it->clocks[i].is_incremental = get_u(it) != 0;
	}
}

static const char *
get_text(struct tm_opiter *it)
{
	size_t n = (size_t)get_u(it);
	tm_buf_reset(&it->text);
	tm_buf_add(&it->text, it->log->bytes + it->pos, n);
	it->pos += n;
	return it->text.data;
}

/* Yield the next op of an expanded run. */
static void
run_elem(struct tm_opiter *it, struct tm_op *op)
{
	const struct tm_op *r = &it->run;
	memset(op, 0, sizeof *op);
	op->machine = r->machine;
	op->clock = r->clock;
	op->offset = r->offset;
	op->ts = it->run_tss[it->run_i];
	if (r->flags & TM_RUN_ARRAY) {
		/* n_arrays arrays: all but the last of one element */
		op->kind = TM_OP_CONVERT_ARRAY;
		op->flags = r->push_flags;
		op->tss = it->run_tss + it->run_i;
		op->n = it->run_i + 1 < r->n_arrays ? 1 : r->n - it->run_i;
		it->run_i += op->n;
		return;
	}
	if (r->flags & TM_RUN_PACKET) {
		if (!it->run_push_next) {
			op->kind = TM_OP_PACKET;
			op->n = 1;
			it->run_push_next = true;
			return;
		}
		op->kind = TM_OP_PUSH;
		op->clock = 0;
		op->flags = r->push_flags;
		it->run_push_next = false;
	} else {
		op->kind = TM_OP_CONVERT;
		op->flags = r->push_flags;
	}
	it->run_i++;
}

bool
tm_opiter_next(struct tm_opiter *it, struct tm_op *op)
{
	if (it->run_i < it->run.n) {
		run_elem(it, op);
		return true;
	}
	it->run.n = 0;
	if (it->pos >= it->log->len)
		return false;
	size_t start = it->pos;
	int64_t start_ts = it->last_ts;
	uint64_t start_off = it->last_off;
	/* The header and the per-event kinds through a local cursor (a byte
	 * pointer may alias op: through it->pos every field store would
	 * reload it); the rest through it->pos. */
	const uint8_t *base = it->log->bytes, *p = base + it->pos;
	uint8_t kb = *p++;
	bool compact = kb & 0x80;
	memset(op, 0, sizeof *op);
	enum tm_op_kind kind = (enum tm_op_kind)(kb & 0x7f);
	op->kind = kind;
	uint64_t off = it->last_off + (uint64_t)tm_ol_unzz(rd_u(&p));
	it->last_off = off;
	op->offset = off;
	bool has_clock = kind == TM_OP_PACKET || kind == TM_OP_CONVERT ||
			 kind == TM_OP_CONVERT_ARRAY || kind == TM_OP_SERVICE || kind == TM_OP_RUN;
	if (!compact) {
		op->machine = (uint32_t)rd_u(&p);
		if (has_clock) {
			op->clock = (uint32_t)rd_u(&p);
			op->seq = (uint32_t)rd_u(&p);
		}
	}
	if (kind == TM_OP_PACKET || kind == TM_OP_PUSH || kind == TM_OP_CONVERT) {
		op->flags = (uint32_t)rd_u(&p);
		int64_t ts = wrap_add(it->last_ts, tm_ol_unzz(rd_u(&p)));
		it->last_ts = ts;
		op->ts = ts;
		if (kind == TM_OP_PACKET)
			op->n = (uint32_t)rd_u(&p);
		else
			op->detail = (uint32_t)rd_u(&p);
		it->pos = (size_t)(p - base);
		return true;
	}
	it->pos = (size_t)(p - base);
	switch (op->kind) {
	case TM_OP_MACHINE:
		break;
	case TM_OP_SNAPSHOT:
		op->seq = (uint32_t)get_u(it);
		op->flags = (uint32_t)get_u(it);
		op->primary = (uint32_t)get_u(it);
		op->n = (uint32_t)get_u(it);
		get_clocks(it, op->n);
		op->clocks = it->clocks;
		break;
	case TM_OP_PACKET:
		op->flags = (uint32_t)get_u(it);
		op->ts = get_ts(it);
		op->n = (uint32_t)get_u(it);
		break;
	case TM_OP_PUSH:
	case TM_OP_CONVERT:
		op->flags = (uint32_t)get_u(it);
		op->ts = get_ts(it);
		op->detail = (uint32_t)get_u(it);
		break;
	case TM_OP_PUSH_NOTS:
		op->n = (uint32_t)get_u(it);
		break;
	case TM_OP_CONVERT_ARRAY:
		op->flags = (uint32_t)get_u(it);
		op->n = (uint32_t)get_u(it);
		XGROW(it->tss, it->cap_tss, (size_t)op->n + 1);
		for (uint32_t i = 0; i < op->n; i++)
			it->tss[i] = get_ts(it);
		op->tss = it->tss;
		break;
	case TM_OP_SERVICE:
		op->flags = (uint32_t)get_u(it);
		op->ts = get_ts(it);
		break;
	case TM_OP_REMOTE_SYNC: {
		op->n = (uint32_t)get_u(it);
		XGROW(it->counts, it->cap_counts, 2 * (size_t)op->n + 1);
		size_t total = 0;
		for (uint32_t i = 0; i < 2 * op->n; i++) {
			it->counts[i] = (uint32_t)get_u(it);
			total += it->counts[i];
		}
		get_clocks(it, total);
		op->counts = it->counts;
		op->clocks = it->clocks;
		break;
	}
	case TM_OP_SYSINFO:
	case TM_OP_FATAL:
		op->text = get_text(it);
		break;
	case TM_OP_TIMEZONE:
		op->ts = tm_ol_unzz(get_u(it));
		break;
	case TM_OP_STAT:
		op->stat = (uint32_t)get_u(it);
		op->n = (uint32_t)get_u(it);
		break;
	case TM_OP_RUN: {
		it->run_flags_pos = it->pos;
		op->flags = (uint32_t)get_u(it);
		bool spilled = op->flags & TM_RUN_SPILLED;
		op->flags &= ~(uint32_t)TM_RUN_SPILLED;
		op->push_flags = (uint32_t)get_u(it);
		if (op->flags & TM_RUN_ARRAY)
			op->n_arrays = (uint32_t)get_u(it);
		op->n = (uint32_t)get_u(it);
		int64_t last = tm_ol_unzz(get_u(it));
		uint32_t n_skip = (op->n + TM_RUN_SKIP - 1) / TM_RUN_SKIP;
		op->run.skip = it->log->bytes + it->pos;
		it->pos += (size_t)n_skip * 16;
		op->run.n = op->n;
		op->run.last = last;
		if (spilled) {
			op->run.deltas = NULL;
			op->run.spill_off = get_u(it) + it->log->x->spill_base;
			op->run.spill_len = get_u(it);
		} else {
			op->run.deltas = it->log->bytes + it->pos;
			/* the end of the delta stream: after the last element */
			uint64_t off_last;
			memcpy(&off_last, op->run.skip + (size_t)(n_skip - 1) * 16 + 8, 8);
			it->pos += (size_t)off_last;
			/* skip the varints of the last block */
			for (uint32_t i = (n_skip - 1) * TM_RUN_SKIP; i < op->n; i++)
				(void)get_u(it);
		}
		it->last_ts = last;
		op->tss = NULL;
		if (!it->raw_runs) {
			BIG_XGROW(it->run_tss, it->cap_run_tss, (size_t)op->n + 1);
			tm_run_decode(&op->run, it->run_tss);
			op->tss = it->run_tss;
		}
		it->run_pos = start;
		it->run_last_ts = start_ts;
		it->run_last_off = start_off;
		if (!it->raw_runs) {
			it->run = *op;
			it->run_i = 0;
			it->run_push_next = false;
			run_elem(it, op);
		}
		break;
	}
	}
	return true;
}

static void
skip_entry(const struct tm_run *r, uint32_t k, int64_t *v, uint64_t *off)
{
	memcpy(v, r->skip + (size_t)k * 16, 8);
	memcpy(off, r->skip + (size_t)k * 16 + 8, 8);
}

/* The deltas of block k of r, from its first one (*v: that element's
 * value): in place, or read from the spill file into buf[BLOCK_MAX]. */
static const uint8_t *
run_block(const struct tm_run *r, uint32_t k, uint8_t *buf, int64_t *v)
{
	uint64_t off;
	skip_entry(r, k, v, &off);
	if (r->deltas)
		return r->deltas + off;
	uint32_t n_skip = (r->n + TM_RUN_SKIP - 1) / TM_RUN_SKIP;
	uint64_t end = r->spill_len;
	if (k + 1 < n_skip) {
		int64_t nv;
		skip_entry(r, k + 1, &nv, &end);
	}
	if (end < off || end - off > BLOCK_MAX)
		tm_oom(BLOCK_MAX); /* not what was written: lost like memory */
	tm_ol_sp_read(r->spill_off + off, buf, (size_t)(end - off));
	return buf;
}

int64_t
tm_run_at(const struct tm_run *r, uint32_t i)
{
	uint8_t buf[BLOCK_MAX];
	int64_t v;
	uint64_t off;
	if (i + 1 == r->n)
		return r->last;
	if (i % TM_RUN_SKIP == 0) {
		skip_entry(r, i / TM_RUN_SKIP, &v, &off);
		return v;
	}
	const uint8_t *p = run_block(r, i / TM_RUN_SKIP, buf, &v);
	(void)rd_u(&p); /* the skip element's own delta */
	for (uint32_t k = i - i % TM_RUN_SKIP; k < i; k++)
		v = wrap_add(v, tm_ol_unzz(rd_u(&p)));
	return v;
}

uint32_t
tm_run_lower_bound(const struct tm_run *r, uint32_t lo, uint32_t hi, int64_t x, bool strict, int64_t nb[2])
{
	if (lo >= hi)
		return hi;
	if (strict ? r->last <= x : r->last < x)
		return hi; /* none passes */
	/* last skip block whose first value does not pass x: the answer is
	 * in it or starts the next, so at most that one block is decoded
	 * (read back, when spilled), and only from its second element on */
	uint32_t bl = lo / TM_RUN_SKIP, bh = (hi - 1) / TM_RUN_SKIP + 1;
	while (bh - bl > 1) {
		uint32_t mid = (bl + bh) / 2;
		int64_t v;
		uint64_t off;
		skip_entry(r, mid, &v, &off);
		bool passes = strict ? v > x : v >= x;
		if (passes)
			bh = mid;
		else
			bl = mid;
	}
	uint8_t buf[BLOCK_MAX];
	uint32_t i = bl * TM_RUN_SKIP;
	int64_t v, prev = 0;
	uint64_t off;
	skip_entry(r, bl, &v, &off);
	const uint8_t *p = NULL; /* past element i's delta once its block is decoded */
	for (;; i++) {
		if (i >= lo && (strict ? v > x : v >= x)) {
			if (nb) {
				nb[0] = prev; /* some element before i was seen when i > lo */
				nb[1] = v;
			}
			return i;
		}
		if (i + 1 >= hi)
			return hi;
		prev = v;
		if ((i + 1) % TM_RUN_SKIP == 0) {
			skip_entry(r, (i + 1) / TM_RUN_SKIP, &v, &off);
			p = NULL;
			continue;
		}
		if (!p) {
			int64_t first;
			p = run_block(r, i / TM_RUN_SKIP, buf, &first);
			(void)rd_u(&p); /* element i's own delta */
		}
		v = wrap_add(v, tm_ol_unzz(rd_u(&p)));
	}
}

void
tm_opiter_tell(const struct tm_opiter *it, struct tm_oppos *p)
{
	if (it->run.n && it->run_i < it->run.n && !it->run_push_next) {
		p->pos = it->run_pos;
		p->last_ts = it->run_last_ts;
		p->last_off = it->run_last_off;
		p->run_i = it->run_i;
	} else {
		p->pos = it->pos;
		p->last_ts = it->last_ts;
		p->last_off = it->last_off;
		p->run_i = UINT32_MAX;
	}
}

void
tm_opiter_seek(struct tm_opiter *it, const struct tm_oppos *p)
{
	it->pos = p->pos;
	it->last_ts = p->last_ts;
	it->last_off = p->last_off;
	it->run.n = 0;
	it->run_i = 0;
	it->run_push_next = false;
	if (p->run_i == UINT32_MAX)
		return;
	/* re-decode the run, then position on element run_i */
	bool raw = it->raw_runs;
	struct tm_op op;
	it->raw_runs = true;
	(void)tm_opiter_next(it, &op);
	it->raw_runs = raw;
	BIG_XGROW(it->run_tss, it->cap_run_tss, (size_t)op.n + 1);
	tm_run_decode(&op.run, it->run_tss);
	it->run = op;
	it->run.tss = it->run_tss;
	it->run_i = p->run_i;
	it->run_push_next = false;
}

void
tm_run_decode(const struct tm_run *r, int64_t *out)
{
	if (!r->n)
		return;
	int64_t v;
	uint64_t off;
	skip_entry(r, 0, &v, &off);
	uint8_t *buf = NULL;
	const uint8_t *p = r->deltas;
	if (!p) {
		buf = xmalloc(r->spill_len + 1);
		tm_ol_sp_read(r->spill_off, buf, r->spill_len);
		p = buf;
	}
	p += off;
	(void)rd_u(&p);
	out[0] = v;
	for (uint32_t i = 1; i < r->n; i++) {
		v = wrap_add(v, tm_ol_unzz(rd_u(&p)));
		out[i] = v;
	}
	free(buf);
}


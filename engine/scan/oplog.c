/* SPDX-License-Identifier: MIT */
/*
 * The op log's byte encoding (see oplog.h).  Each op is one kind byte then
 * varints.  Bit 0x80 of the kind byte marks the common case machine = clock =
 * seq = 0, whose fields are then omitted.  Timestamps are zigzag deltas
 * against the previous timestamp written; offsets likewise.  A JSON or
 * systrace event therefore costs 3-6 bytes.
 *
 * This file: a log's lifetime, the encoding, the details.  The spill file
 * is oplog_spill.c, decoding oplog_decode.c, the runs saved oplog_save.c,
 * the check of a log read back oplog_valid.c (oplog_priv.h their face).
 */
#include "oplog_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct tm_oplog_w tm_oplog_w_none;
const struct tm_oplog_x tm_oplog_x_none;

/* tm_oplog_x_none, as the pointer a log holds (never written through). */
static struct tm_oplog_x *
x_none(void)
{
	return (struct tm_oplog_x *)(uintptr_t)&tm_oplog_x_none;
}

/* tm_oplog_w_none, as the pointer a log holds (never written through). */
static struct tm_oplog_w *
w_none(void)
{
	return (struct tm_oplog_w *)(uintptr_t)&tm_oplog_w_none;
}

void
tm_oplog_init(struct tm_oplog *l)
{
	memset(l, 0, sizeof *l);
	l->w = w_none();
	l->x = x_none();
}

struct tm_oplog_x *
tm_oplog_x_own(struct tm_oplog *l)
{
	if (l->x == x_none()) {
		l->x = xcalloc(1, sizeof *l->x);
		tm_buf_init(&l->x->pool);
	}
	return l->x;
}

/* The log's appending state, its own from the first append on. */
static struct tm_oplog_w *
own_w(struct tm_oplog *l)
{
	if (l->w == w_none())
		l->w = xcalloc(1, sizeof *l->w);
	return l->w;
}

struct tm_oplog_stage {
	struct tm_op held; /* valid while has_held */
	int64_t *sort_tmp;
	size_t cap_sort_tmp;
	struct tm_ol_sort_buf sort_buf;
	/* An ARRAY run is staged in up to TM_LANES sorted lanes (arrays are
	 * appended to the lane they extend) and flushed as one RUN per lane.
	 * The lanes are slots of one buffer, lane k at lane_buf + k * slot
	 * (lane_grow), so they share its huge pages: 8 buffers of their own
	 * faulted in ~2,000 4 KiB pages per compact_sched check, or as huge
	 * pages held 2 MiB each for ~1 MiB of values. */
	struct tm_lane {
		int64_t *v;
		uint32_t n, n_arrays;
		bool unsorted;
	} *lanes;
	uint32_t n_lanes;
	int64_t *lane_buf;
	size_t cap_lane_buf, slot;
};

static struct tm_oplog_stage *
stg(struct tm_oplog *l)
{
	if (!l->w->stage)
		l->w->stage = xcalloc(1, sizeof *l->w->stage);
	return l->w->stage;
}

/* The buffers runs are staged in (refilled if more is appended). */
static void
free_staging(struct tm_oplog *l)
{
	struct tm_oplog_w *w = l->w;
	if (w == w_none())
		return;
	BIG_FREE(w->run_ts, w->cap_run_ts);
	struct tm_oplog_stage *g = w->stage;
	if (g) {
		BIG_FREE(g->sort_tmp, g->cap_sort_tmp);
		free(g->sort_buf.st);
		BIG_FREE(g->lane_buf, g->cap_lane_buf);
		free(g->lanes);
		free(g);
	}
	free(w);
	l->w = w_none();
}

void
tm_oplog_fini(struct tm_oplog *l)
{
	BIG_FREE(l->bytes, l->cap);
	free_staging(l);
	struct tm_oplog_x *x = l->x;
	if (x != x_none()) {
		free(x->details);
		if (x->tn) {
			free(x->tn->v);
			tm_u64map_fini(&x->tn->ix);
			free(x->tn);
		}
		tm_buf_fini(&x->pool);
		for (size_t i = 0; i < x->n_spilled; i++)
			tm_ol_sp_free(x->spilled[i].off, x->spilled[i].len);
		free(x->spilled);
		free(x);
	}
	if (l->mem_run_bytes)
		tm_ol_sp_mem_add(-(int64_t)l->mem_run_bytes);
	memset(l, 0, sizeof *l);
	l->w = w_none();
	l->x = x_none();
}

void
tm_ol_note_spilled(struct tm_oplog *l, uint64_t off, uint64_t len)
{
	struct tm_oplog_x *x = tm_oplog_x_own(l);
	if (x->n_spilled && x->spilled[x->n_spilled - 1].off + x->spilled[x->n_spilled - 1].len == off) {
		x->spilled[x->n_spilled - 1].len += len;
		return;
	}
	XGROW(x->spilled, x->cap_spilled, x->n_spilled + 1);
	x->spilled[x->n_spilled++] = (struct tm_spilled){off, len};
}

static inline void
reserve(struct tm_oplog *l, size_t n)
{
	if (l->len + n > l->cap) {
		size_t nc = l->cap ? l->cap : 4096;
		while (nc < l->len + n)
			nc *= 2;
		tm_big_resize((void **)&l->bytes, &l->cap, nc, 1, TM_BIG_MIN);
	}
}

/* ~32,768 elements of two bytes: where a run's staged values (8 bytes
 * each, TM_STAGE_MIN) go to a huge mapping */
#define RUN_HUGE_AT (TM_STAGE_MIN / 4)

/* Room in l's bytes up to byte need, for a run's bytes past l->len: a log
 * growing past RUN_HUGE_AT goes to a huge mapping at once (growing through
 * the heap and 4 KiB pages up to 2 MiB touched ~500 pages, each a fault,
 * ~10 us under a hypervisor). */
static void
run_room(struct tm_oplog *l, size_t need)
{
	if (need <= l->cap)
		return;
	if (need > RUN_HUGE_AT && need < TM_BIG_MIN)
		need = TM_BIG_MIN;
	reserve(l, need - l->len);
}

static inline void
put_u(struct tm_oplog *l, uint64_t v)
{
	reserve(l, 10);
	l->len = (size_t)(tm_ol_put_varint(l->bytes + l->len, v) - l->bytes);
}


static inline void
put_ts(struct tm_oplog *l, int64_t ts)
{
	put_u(l, tm_ol_zz(wrap_sub(ts, l->last_ts)));
	l->last_ts = ts;
}

static inline void
put_head(struct tm_oplog *l, const struct tm_op *op, bool has_clock)
{
	bool compact = op->machine == 0 && (!has_clock || (op->clock == 0 && op->seq == 0));
	reserve(l, 1);
	l->bytes[l->len++] = (uint8_t)(op->kind | (compact ? 0x80 : 0));
	put_u(l, tm_ol_zz((int64_t)(op->offset - l->last_off)));
	l->last_off = op->offset;
	if (!compact) {
		put_u(l, op->machine);
		if (has_clock) {
			put_u(l, op->clock);
			put_u(l, op->seq);
		}
	}
}

static void
put_text(struct tm_oplog *l, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	put_u(l, n);
	reserve(l, n);
	memcpy(l->bytes + l->len, s ? s : "", n);
	l->len += n;
}

static void
put_clocks(struct tm_oplog *l, const struct tm_op_clock *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		put_u(l, c[i].id);
		put_u(l, tm_ol_zz(c[i].ts));
		put_u(l, c[i].unit);
		put_u(l, c[i].is_incremental);
	}
}

/* A run's deltas from *prev on, in l's bytes from skip_at: a skip entry
 * (the value, the offset of its deltas) every TM_RUN_SKIP values, then up
 * to TM_RUN_SKIP zigzag varint deltas (one or two bytes nearly always).
 * The log grows to the byte a value they take at least, then as they are
 * written, by room for the next TM_RUN_SKIP at 10 bytes each (run_room).
 * Returns the deltas' length. */
static size_t
encode_deltas(struct tm_oplog *l, const int64_t *v, uint32_t n, int64_t *prev_io, size_t skip_at)
{
	size_t d0 = skip_at + (size_t)((n + TM_RUN_SKIP - 1) / TM_RUN_SKIP) * 16, o = d0;
	int64_t prev = *prev_io;
	run_room(l, d0 + n); /* a byte a value at least */
	for (uint32_t i = 0; i < n; i += TM_RUN_SKIP) {
		uint32_t e = n - i < TM_RUN_SKIP ? n : i + TM_RUN_SKIP;
		run_room(l, o + (size_t)(e - i) * 10);
		uint8_t *skip = l->bytes + skip_at + (size_t)(i / TM_RUN_SKIP) * 16, *p = l->bytes + o;
		uint64_t rel = (uint64_t)(o - d0);
		memcpy(skip, &v[i], 8);
		memcpy(skip + 8, &rel, 8);
		for (uint32_t j = i; j < e; j++) {
			p = tm_ol_put_varint(p, tm_ol_zz(wrap_sub(v[j], prev)));
			prev = v[j];
		}
		o = (size_t)(p - l->bytes);
	}
	*prev_io = prev;
	return o - d0;
}

/* A run's head, before its skip table: RUN_HEAD_MAX bytes at most (kind,
 * offset, machine, clock, seq, flags, push_flags, n_arrays, n, last). */
#define RUN_HEAD_MAX (1 + 10 + 5 + 5 + 5 + 5 + 5 + 5 + 5 + 10)
static void
put_run_head(struct tm_oplog *l, const struct tm_op *op, bool spilled, int64_t last)
{
	put_head(l, op, true);
	put_u(l, op->flags | (spilled ? TM_RUN_SPILLED : 0));
	put_u(l, op->push_flags);
	if (op->flags & TM_RUN_ARRAY)
		put_u(l, op->n_arrays);
	put_u(l, op->n);
	put_u(l, tm_ol_zz(last));
}

/* A run's skip table and deltas were written in the log's bytes past room
 * for its head (at skip_at and d_at, from l->len on; not buffers of their
 * own: scans running side by side each held one of up to 2.6 MB): the
 * deltas go to the spill file or stay; the head is written, then the skip
 * table and the deltas (or where they are) moved down behind it.  last:
 * the run's last value. */
static void
put_run(struct tm_oplog *l, const struct tm_op *op, int64_t last, size_t skip_at, size_t d_at,
	size_t dlen)
{
	uint64_t off = 0;
	bool spilled = dlen >= 1024 && tm_ol_sp_wanted(l, dlen) && tm_ol_sp_write(l->bytes + d_at, dlen, &off);
	/* at most RUN_HEAD_MAX bytes: within what was reserved, so the
	 * bytes do not move */
	put_run_head(l, op, spilled, last);
	/* skip table (fixed 16-byte entries), then the deltas or where they
	 * are */
	size_t sk = (size_t)((op->n + TM_RUN_SKIP - 1) / TM_RUN_SKIP) * 16;
	memmove(l->bytes + l->len, l->bytes + skip_at, sk);
	l->len += sk;
	if (spilled) {
		tm_ol_note_spilled(l, off, dlen);
		put_u(l, off);
		put_u(l, dlen);
	} else {
		memmove(l->bytes + l->len, l->bytes + d_at, dlen);
		l->len += dlen;
		tm_ol_mem_keep(l, dlen);
	}
	l->last_ts = last;
}

static void
encode_op(struct tm_oplog *l, const struct tm_op *op)
{
	switch (op->kind) {
	case TM_OP_MACHINE:
		put_head(l, op, false);
		break;
	case TM_OP_SNAPSHOT:
		put_head(l, op, false);
		put_u(l, op->seq);
		put_u(l, op->flags);
		put_u(l, op->primary);
		put_u(l, op->n);
		put_clocks(l, op->clocks, op->n);
		break;
	case TM_OP_PACKET:
		put_head(l, op, true);
		put_u(l, op->flags);
		put_ts(l, op->ts);
		put_u(l, op->n);
		break;
	case TM_OP_PUSH:
		put_head(l, op, false);
		put_u(l, op->flags);
		put_ts(l, op->ts);
		put_u(l, op->detail);
		break;
	case TM_OP_PUSH_NOTS:
		put_head(l, op, false);
		put_u(l, op->n);
		break;
	case TM_OP_CONVERT:
		put_head(l, op, true);
		put_u(l, op->flags);
		put_ts(l, op->ts);
		put_u(l, op->detail);
		break;
	case TM_OP_CONVERT_ARRAY:
		put_head(l, op, true);
		put_u(l, op->flags);
		put_u(l, op->n);
		for (uint32_t i = 0; i < op->n; i++)
			put_ts(l, op->tss[i]);
		break;
	case TM_OP_SERVICE:
		put_head(l, op, true);
		put_u(l, op->flags);
		put_ts(l, op->ts);
		break;
	case TM_OP_REMOTE_SYNC: {
		put_head(l, op, false);
		put_u(l, op->n);
		size_t total = 0;
		for (uint32_t i = 0; i < 2 * op->n; i++) {
			put_u(l, op->counts[i]);
			total += op->counts[i];
		}
		put_clocks(l, op->clocks, total);
		break;
	}
	case TM_OP_SYSINFO:
	case TM_OP_FATAL:
		put_head(l, op, false);
		put_text(l, op->text);
		break;
	case TM_OP_TIMEZONE:
		put_head(l, op, false);
		put_u(l, tm_ol_zz(op->ts));
		break;
	case TM_OP_STAT:
		put_head(l, op, false);
		put_u(l, op->stat);
		put_u(l, op->n);
		break;
	case TM_OP_RUN: {
		/* values staged in l->w->run_ts (a CONVERT run, an ARRAY lane),
		 * encoded behind the head, the log grown as they are written
		 * (reserving 10 bytes a value first, the most a delta takes, took
		 * a log with one full run to a 4 MiB mapping, which util.c's
		 * parked huge pages do not serve, and judged its spill by that
		 * reservation, tm_ol_sp_wanted).  Deltas that are to leave memory (from
		 * 1024 bytes, when tm_ol_sp_wanted(l, dlen)) are moved on past room for
		 * the head, put_run's layout, and the head written anew. */
		const int64_t *v = l->w->run_ts;
		size_t h0 = l->len;
		uint64_t off0 = l->last_off;
		size_t sk = (size_t)((op->n + TM_RUN_SKIP - 1) / TM_RUN_SKIP) * 16;
		put_run_head(l, op, false, v[op->n - 1]);
		size_t at = l->len;
		int64_t prev = l->last_ts;
		size_t dlen = encode_deltas(l, v, op->n, &prev, at);
		if (dlen >= 1024 && tm_ol_sp_wanted(l, dlen)) {
			l->len = h0;
			l->last_off = off0;
			run_room(l, h0 + RUN_HEAD_MAX + sk + dlen);
			memmove(l->bytes + h0 + RUN_HEAD_MAX, l->bytes + at, sk + dlen);
			put_run(l, op, prev, h0 + RUN_HEAD_MAX, h0 + RUN_HEAD_MAX + sk, dlen);
			break;
		}
		l->len = at + sk + dlen;
		tm_ol_mem_keep(l, dlen);
		l->last_ts = prev;
		break;
	}
	}
}

/* Runs cap their length so the staging buffer stays small. */
#define RUN_MAX TM_RUN_MAX
/* ARRAY runs, over all their lanes: each lane is a run of its own.  The
 * lanes' buffer holds ARRAY_RUN_MAX values when they fill evenly (4 MiB;
 * at twice that, each of the two member scans a TAR runs at once held
 * 8 MiB, and checks ran no faster). */
#define ARRAY_RUN_MAX (2 * RUN_MAX)

/* Merge sorted x[0..nx) and y[0..ny) into out (not overlapping either). */
static void
merge2(int64_t *out, const int64_t *x, size_t nx, const int64_t *y, size_t ny)
{
	size_t i = 0, j = 0, o = 0;
	/* without a branch on which side is taken (interleaved CPUs make it
	 * a coin toss): a select and two adds */
	while (i < nx && j < ny) {
		int64_t a = x[i], b = y[j];
		size_t t = b < a;
		out[o++] = t ? b : a;
		j += t;
		i += 1 - t;
	}
	while (i < nx)
		out[o++] = x[i++];
	while (j < ny)
		out[o++] = y[j++];
}

/* Merge passes over a of n values, its ascending stretches merged pairwise
 * until one is left (in a or b: the sorted result is returned). */
static int64_t *
merge_passes(int64_t *a, int64_t *b, size_t n)
{
	for (;;) {
		size_t runs = 0, i = 0, o = 0;
		while (i < n) {
			size_t m = i + 1;
			while (m < n && a[m - 1] <= a[m])
				m++;
			size_t e = m;
			if (m < n) {
				e = m + 1;
				while (e < n && a[e - 1] <= a[e])
					e++;
			}
			merge2(b + o, a + i, m - i, a + m, e - m);
			o += e - i;
			runs++;
			i = e;
		}
		int64_t *t = a;
		a = b;
		b = t;
		if (runs <= 1)
			return a;
	}
}

/* Chains of stretches: the ascending stretches of a staged run come from
 * a few sources interleaved (ftrace CPUs, each in order across its
 * bundles), so each stretch is put after the chain it extends with the
 * highest last value (else starts a chain of its own) and the chains are
 * laid out one after another: then the merge passes merge the sources,
 * log2(chains) passes, instead of the stretches, log2(bundles).  Past
 * SORT_CHAINS sources the plain passes do it. */
#define SORT_CHAINS 64

/* Sort v[0..n) (ascending stretches, one per folded array or bundle):
 * sorted as a whole, whichever way. */
void
tm_ol_sort(int64_t *v, size_t n, int64_t *tmp, struct tm_ol_sort_buf *sb)
{
	size_t ns = 0;
	for (size_t i = 0; i < n;) {
		size_t e = i + 1;
		while (e < n && v[e - 1] <= v[e])
			e++;
		XGROW(sb->st, sb->cap_st, ns + 1);
		sb->st[ns++] = (struct tm_ol_stretch){i, e - i, UINT32_MAX};
		i = e;
	}
	uint32_t head[SORT_CHAINS], tail[SORT_CHAINS];
	int64_t last[SORT_CHAINS];
	size_t nc = 0;
	bool chained = ns > 2 && ns < UINT32_MAX;
	for (size_t k = 0; chained && k < ns; k++) {
		int64_t first = v[sb->st[k].at];
		size_t best = SIZE_MAX;
		for (size_t c = 0; c < nc; c++)
			if (last[c] <= first && (best == SIZE_MAX || last[c] > last[best]))
				best = c;
		if (best == SIZE_MAX) {
			if (nc == SORT_CHAINS) {
				chained = false;
				break;
			}
			best = nc++;
			head[best] = (uint32_t)k;
		} else {
			sb->st[tail[best]].next = (uint32_t)k;
		}
		tail[best] = (uint32_t)k;
		last[best] = v[sb->st[k].at + sb->st[k].n - 1];
	}
	int64_t *a = v, *b = tmp;
	if (chained && nc < ns) {
		/* the chains laid out in b, one after another */
		size_t o = 0;
		for (size_t c = 0; c < nc; c++)
			for (uint32_t k = head[c]; k != UINT32_MAX; k = sb->st[k].next) {
				memcpy(b + o, v + sb->st[k].at, sb->st[k].n * sizeof *v);
				o += sb->st[k].n;
			}
		a = tmp;
		b = v;
	}
	a = merge_passes(a, b, n);
	if (a != v)
		memcpy(v, a, n * sizeof *v);
}

static void
sort_staged(struct tm_oplog *l, int64_t *v, size_t n)
{
	struct tm_oplog_stage *g = stg(l);
	BIG_XGROW(g->sort_tmp, g->cap_sort_tmp, n);
	tm_ol_sort(v, n, g->sort_tmp, &g->sort_buf);
}

/* The open run's key as the TM_OP_RUN it is written as (seq 0: a run's
 * clock is never a sequence clock, run_clock_ok). */
static struct tm_op
run_op(const struct tm_run_key *r)
{
	return (struct tm_op){.kind = TM_OP_RUN,
			      .flags = r->flags,
			      .machine = r->machine,
			      .clock = r->clock,
			      .push_flags = r->push_flags,
			      .n_arrays = r->n_arrays,
			      .n = r->n,
			      .offset = r->offset};
}

/* The lanes of an ARRAY run: one RUN each (one array: a CONVERT_ARRAY). */
static void
flush_lanes(struct tm_oplog *l)
{
	int64_t *keep = l->w->run_ts;
	struct tm_oplog_stage *g = stg(l);
	for (uint32_t k = 0; k < g->n_lanes; k++) {
		struct tm_lane *ln = &g->lanes[k];
		if (!ln->n)
			continue;
		if (ln->unsorted)
			sort_staged(l, ln->v, ln->n);
		struct tm_op e = run_op(&l->w->run);
		e.n = ln->n;
		e.n_arrays = ln->n_arrays;
		l->w->run_ts = ln->v;
		if (ln->n_arrays == 1) {
			e.kind = TM_OP_CONVERT_ARRAY;
			e.flags = l->w->run.push_flags;
			e.tss = ln->v;
			encode_op(l, &e);
		} else {
			encode_op(l, &e);
			l->n_runs++;
			l->n_run_elems += ln->n;
		}
		ln->n = ln->n_arrays = 0;
		ln->unsorted = false;
	}
	l->w->run_ts = keep;
	g->n_lanes = 0;
	l->w->run.n = 0;
}

static void flush_pkt(struct tm_oplog *l);

/* A run of one element (at ts) is stored as the plain op(s) it stands for:
 * a packet and its push, or one conversion. */
static void
put_single(struct tm_oplog *l, const struct tm_run_key *r, int64_t ts)
{
	struct tm_op e = run_op(r);
	e.ts = ts;
	if (r->flags & TM_RUN_PACKET) {
		e.kind = TM_OP_PACKET;
		e.flags = 0;
		e.n = 1;
		encode_op(l, &e);
		struct tm_op pu = {.kind = TM_OP_PUSH, .machine = e.machine, .flags = r->push_flags,
				   .ts = ts, .offset = e.offset};
		encode_op(l, &pu);
	} else {
		e.kind = TM_OP_CONVERT;
		e.flags = r->push_flags;
		e.n = 0;
		encode_op(l, &e);
	}
}

static void
flush_run(struct tm_oplog *l)
{
	if (l->w->run.n == 0)
		return;
	if (l->w->run.flags & TM_RUN_ARRAY) {
		flush_lanes(l);
		return;
	}
	if (l->w->run.flags & TM_RUN_PACKET) {
		flush_pkt(l);
		return;
	}
	if (l->w->run_unsorted)
		sort_staged(l, l->w->run_ts, l->w->run.n);
	l->w->run_unsorted = false;
	if (l->w->run.n == 1) {
		put_single(l, &l->w->run, l->w->run_ts[0]);
	} else {
		struct tm_op e = run_op(&l->w->run);
		encode_op(l, &e);
		l->n_runs++;
		l->n_run_elems += l->w->run.n;
	}
	l->w->run.n = 0;
}

static bool
run_clock_ok(uint32_t clock)
{
	return !tm_clock_is_seq(clock); /* sequence clocks keep their seq */
}

/* Whether the open run (n > 0) is of kind rflags with key's machine and
 * clock and these push flags: what the three appenders below extend. */
static inline bool
run_key_is(const struct tm_run_key *r, uint32_t rflags, const struct tm_op *key, uint32_t push_flags)
{
	return r->flags == rflags && r->machine == key->machine && r->clock == key->clock &&
	       r->push_flags == push_flags;
}

/* Open a run of kind rflags at key (no element yet). */
static inline void
run_start(struct tm_run_key *r, uint32_t rflags, const struct tm_op *key, uint32_t push_flags)
{
	*r = (struct tm_run_key){.flags = rflags, .machine = key->machine, .clock = key->clock,
				 .push_flags = push_flags, .offset = key->offset};
}

/* Add one element to the open CONVERT run, or start a new one.  CONVERTs
 * are independent of each other: their run is sorted at the end (ftrace
 * bundles of several CPUs interleave). */
static void
run_add_convert(struct tm_oplog *l, const struct tm_op *key, uint32_t push_flags, int64_t ts)
{
	struct tm_run_key *r = &l->w->run;
	if (r->n && (!run_key_is(r, TM_RUN_CONVERT, key, push_flags) || r->n >= RUN_MAX))
		flush_run(l);
	else if (r->n && ts < l->w->run_ts[r->n - 1])
		l->w->run_unsorted = true;
	if (r->n == 0) {
		run_start(r, TM_RUN_CONVERT, key, push_flags);
		l->w->run_unsorted = false;
	}
	BIG_XGROW(l->w->run_ts, l->w->cap_run_ts, (size_t)r->n + 1);
	l->w->run_ts[r->n++] = ts;
}

/* ---- PACKET runs, encoded as they grow ----
 *
 * While a PACKET run is open, the log's bytes from l->len on hold room for
 * its head (RUN_HEAD_MAX), then room for its skip table (PKT_SKIP_ROOM, an
 * entry written when element 256 k is added), then its deltas up to
 * l->w->run_p: what encode_deltas would write for the values at the run's end
 * (element 0's delta against l->last_ts, which no op changes while the run
 * is open: every other append ends the run first). */
_Static_assert(RUN_MAX % TM_RUN_SKIP == 0, "a run ends where a skip entry is due");
#define PKT_SKIP_ROOM ((size_t)(RUN_MAX / TM_RUN_SKIP) * 16)
#define PKT_D0(l) ((l)->len + RUN_HEAD_MAX + PKT_SKIP_ROOM)

static void
flush_pkt(struct tm_oplog *l)
{
	struct tm_run_key *r = &l->w->run;
	l->w->pkt_lim = 0;
	if (r->n == 1) {
		put_single(l, r, l->w->run_last);
	} else {
		size_t d0 = PKT_D0(l);
		struct tm_op e = run_op(r);
		put_run(l, &e, l->w->run_last, l->len + RUN_HEAD_MAX, d0,
			(size_t)(l->w->run_p - l->bytes) - d0);
		l->n_runs++;
		l->n_run_elems += r->n;
	}
	r->n = 0;
	l->w->run_p = NULL;
}

/* Add ts to the open PACKET run (key: machine, clock, offset) or start
 * one; then the limit up to which tm_oplog_packet_push_i may go on. */
static void
pkt_add(struct tm_oplog *l, const struct tm_op *key, uint32_t push_flags, int64_t ts)
{
	struct tm_run_key *r = &l->w->run;
	if (r->n && (!run_key_is(r, TM_RUN_PACKET, key, push_flags) || r->n >= RUN_MAX ||
		     ts < l->w->run_last))
		flush_run(l);
	uint32_t n = r->n;
	int64_t prev = l->w->run_last;
	if (n == 0) {
		run_start(r, TM_RUN_PACKET, key, push_flags);
		reserve(l, RUN_HEAD_MAX + PKT_SKIP_ROOM + TM_RUN_SKIP * 10);
		l->w->run_p = l->bytes + PKT_D0(l);
		prev = l->last_ts;
	}
	/* room for this element and the next TM_RUN_SKIP - 1, 10 bytes each */
	size_t at = (size_t)(l->w->run_p - l->bytes);
	if (l->cap - at < TM_RUN_SKIP * 10) {
		run_room(l, at + TM_RUN_SKIP * 10);
		l->w->run_p = l->bytes + at;
	}
	uint8_t *p = l->w->run_p;
	if (n % TM_RUN_SKIP == 0) {
		uint64_t o = (uint64_t)(at - PKT_D0(l));
		uint8_t *e = l->bytes + l->len + RUN_HEAD_MAX + (size_t)(n / TM_RUN_SKIP) * 16;
		memcpy(e, &ts, 8);
		memcpy(e + 8, &o, 8);
	}
	l->w->run_p = tm_ol_put_varint(p, tm_ol_zz(wrap_sub(ts, prev)));
	l->w->run_last = ts;
	r->n = ++n;
	/* the inline appender: machine 0, up to the next skip entry (at most
	 * TM_RUN_SKIP - 1 more elements: in the room reserved above) or the
	 * run's end (RUN_MAX, a multiple of TM_RUN_SKIP) */
	l->w->pkt_lim = key->machine == 0 ? (n + TM_RUN_SKIP - 1) / TM_RUN_SKIP * TM_RUN_SKIP : 0;
}

/* First index in v[0..n) whose value is > x. */
static size_t
upper_bound(const int64_t *v, size_t n, int64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Lane slots of at least need values: the lanes' buffer grown by half
 * (up to the lanes' limit: slots as wide as the lanes get; huge pages from
 * TM_STAGE_MIN, so 32 K-value steps from there), each lane moved up to its
 * new slot, the highest first (lane k's new place starts past its old one
 * and only lanes above it start there). */
static void
lane_grow(struct tm_oplog_stage *g, size_t need)
{
	size_t old = g->slot, want = old + old / 2;
	if (want > tm_oplog_lane_max)
		want = tm_oplog_lane_max;
	if (want < need)
		want = need;
	tm_big_resize((void **)&g->lane_buf, &g->cap_lane_buf, want * TM_LANES, sizeof *g->lane_buf,
		      TM_STAGE_MIN);
	g->slot = g->cap_lane_buf / TM_LANES;
	for (uint32_t k = TM_LANES; k-- > 0;) {
		struct tm_lane *ln = &g->lanes[k];
		if (ln->n && k)
			memmove(g->lane_buf + k * g->slot, g->lane_buf + k * old, ln->n * sizeof *ln->v);
		ln->v = g->lane_buf + k * g->slot;
	}
}

/* Values a lane holds before its run is flushed rather than its slot grown
 * (an array larger than this still fits: into an empty lane).  At
 * ARRAY_RUN_MAX / TM_LANES, lanes that fill evenly reach it as the run
 * reaches ARRAY_RUN_MAX; uneven ones flush sooner instead of widening every
 * slot to the fullest lane's. */
size_t tm_oplog_lane_max = ARRAY_RUN_MAX / TM_LANES;

/* Fold a CONVERT_ARRAY into the open ARRAY run (whole: a run never splits
 * an array).  A sorted array goes to the lane whose last value it extends
 * (the highest such), else to a new lane: ftrace CPUs interleave, each in
 * order, so the lanes fill by appending.  With every lane taken it is
 * merged with the tail of the lane it overlaps least, when that tail is
 * short; anything else is appended and the lane sorted at flush. */
static void
add_array(struct tm_oplog *l, const struct tm_op *op)
{
	struct tm_run_key *r = &l->w->run;
	if (r->n && (!run_key_is(r, TM_RUN_ARRAY, op, op->flags) || r->n + op->n > ARRAY_RUN_MAX))
		flush_run(l);
	struct tm_oplog_stage *g = stg(l);
again:
	if (r->n == 0) {
		run_start(r, TM_RUN_ARRAY, op, op->flags);
		g->n_lanes = 0;
		if (!g->lanes)
			g->lanes = xcalloc(TM_LANES, sizeof *g->lanes);
	}
	size_t m = op->n;
	const int64_t *a = op->tss;
	bool sorted = tm_ol_sorted(a, m);
	/* the lane this array extends with the highest last value, else a new
	 * one, else the one with the lowest last value */
	int best = -1, low = -1;
	for (uint32_t k = 0; k < g->n_lanes; k++) {
		const struct tm_lane *ln = &g->lanes[k];
		int64_t last = ln->v[ln->n - 1];
		if (!ln->unsorted && last <= a[0] &&
		    (best < 0 || last > g->lanes[best].v[g->lanes[best].n - 1]))
			best = (int)k;
		if (low < 0 || last < g->lanes[low].v[g->lanes[low].n - 1])
			low = (int)k;
	}
	if (best < 0 && g->n_lanes < TM_LANES)
		best = (int)g->n_lanes++;
	struct tm_lane *ln = &g->lanes[best >= 0 ? best : low];
	size_t n0 = ln->n;
	if (n0 && n0 + m > tm_oplog_lane_max) {
		flush_run(l);
		goto again;
	}
	if (n0 + m > g->slot)
		lane_grow(g, n0 + m);
	int64_t *v = ln->v;
	size_t pos = best >= 0 || !sorted || ln->unsorted ? n0 : upper_bound(v, n0, a[0]);
	if (pos < n0 && n0 - pos <= 4 * m + 4096) {
		/* merge the overlapped tail v[pos..n0) with a[0..m) */
		size_t t = n0 - pos;
		BIG_XGROW(g->sort_tmp, g->cap_sort_tmp, t);
		memcpy(g->sort_tmp, v + pos, t * sizeof *v);
		merge2(v + pos, g->sort_tmp, t, a, m);
	} else {
		memcpy(v + n0, a, m * sizeof *v);
		if (!sorted || (n0 && v[n0 - 1] > a[0]))
			ln->unsorted = true;
	}
	ln->n = (uint32_t)(n0 + m);
	ln->n_arrays++;
	r->n += (uint32_t)m;
	r->n_arrays++;
}

static void
emit_held(struct tm_oplog *l)
{
	if (l->w->has_held) {
		l->w->has_held = false;
		flush_run(l);
		encode_op(l, &l->w->stage->held);
	}
}

void
tm_oplog_add(struct tm_oplog *l, const struct tm_op *op)
{
	l->n_ops++;
	if (!l->use_runs) {
		encode_op(l, op);
		return;
	}
	struct tm_oplog_w *w = own_w(l);
	if (w->has_held) {
		const struct tm_op *h = &w->stage->held;
		if (op->kind == TM_OP_PUSH && op->detail == 0 && op->machine == h->machine &&
		    (op->flags & ~(uint32_t)TM_PUSH_TRACK_EVENT) == 0) {
			w->has_held = false;
			pkt_add(l, h, op->flags, h->ts);
			return;
		}
		emit_held(l);
	}
	if (op->kind == TM_OP_PACKET && op->n == 1 && op->flags == 0 && run_clock_ok(op->clock)) {
		stg(l)->held = *op;
		w->has_held = true;
		w->pkt_lim = 0; /* the run may go on only after the held op */
		return;
	}
	if (op->kind == TM_OP_CONVERT && op->detail == 0 && run_clock_ok(op->clock) &&
	    (op->flags & ~(uint32_t)TM_CONV_FTRACE) == TM_CONV_FAIL_DROP) {
		run_add_convert(l, op, op->flags, op->ts);
		return;
	}
	if (op->kind == TM_OP_CONVERT_ARRAY && op->clock != 0 && run_clock_ok(op->clock) &&
	    op->n > 0 && op->n <= RUN_MAX) {
		add_array(l, op);
		return;
	}
	flush_run(l);
	encode_op(l, op);
}

void
tm_oplog_finish(struct tm_oplog *l)
{
	emit_held(l);
	flush_run(l);
	free_staging(l);
	/* The log is kept per member until the session closes: drop the
	 * bytes' growth slack too (archives of 10,000 small members held
	 * ~12 KiB each this way; a log that went to a huge mapping early, as
	 * one with runs past RUN_HUGE_AT does (run_room), but holds less would
	 * keep its huge page resident whole).  From TM_BIG_MIN a log keeps
	 * whole huge pages, a smaller one is copied to 4 KiB pages or the
	 * heap; but a log already in huge pages that fills half of one keeps
	 * it whole: copying 1-2 MiB to 4 KiB pages costs a page fault each
	 * (~330 for a 64 MiB JSON file, ~4% of its check) to save under
	 * 1 MiB.  Logs of runs stay in memory within the spill budget (8 MiB,
	 * so at most 8 such logs); a log that keeps events (the workbench
	 * under 16 MiB of input, check --events) is not bounded by it, and
	 * may hold up to 1 MiB more per member this way. */
	size_t huge_min = l->cap >= TM_BIG_MIN ? TM_BIG_MIN / 2 : TM_BIG_MIN;
	if (l->cap > l->len)
		tm_big_resize((void **)&l->bytes, &l->cap, l->len, 1, huge_min);
	struct tm_oplog_x *x = l->x; /* x_none: both caps 0 */
	if (x->cap_details > x->n_details) {
		x->details = x->n_details ? xrealloc(x->details, x->n_details * sizeof *x->details)
					  : (free(x->details), NULL);
		x->cap_details = x->n_details;
	}
	if (x->cap_spilled > x->n_spilled) {
		/* most logs that spill have one extent (XGROW makes room for 8) */
		x->spilled = x->n_spilled ? xrealloc(x->spilled, x->n_spilled * sizeof *x->spilled)
					  : (free(x->spilled), NULL);
		x->cap_spilled = x->n_spilled;
	}
}

void
tm_oplog_fold(const struct tm_oplog *src, struct tm_oplog *dst)
{
	struct tm_opiter it;
	struct tm_op op;
	tm_opiter_init(&it, src);
	while (tm_opiter_next(&it, &op)) {
		op.detail = 0;
		tm_oplog_add(dst, &op);
	}
	tm_opiter_fini(&it);
	tm_oplog_finish(dst);
}

void
tm_oplog_push(struct tm_oplog *l, uint32_t machine, int64_t ts, uint32_t flags, uint32_t detail,
	      uint64_t offset)
{
	struct tm_op op = {.kind = TM_OP_PUSH, .machine = machine, .ts = ts, .flags = flags,
			   .detail = detail, .offset = offset};
	tm_oplog_add(l, &op);
}

void
tm_oplog_convert(struct tm_oplog *l, uint32_t machine, uint32_t clock, uint32_t seq, int64_t ts,
		 uint32_t flags, uint32_t detail, uint64_t offset)
{
	struct tm_op op = {.kind = TM_OP_CONVERT, .machine = machine, .clock = clock, .seq = seq,
			   .ts = ts, .flags = flags, .detail = detail, .offset = offset};
	tm_oplog_add(l, &op);
}

void
tm_oplog_stat(struct tm_oplog *l, uint32_t machine, enum tm_stat_id stat, uint32_t n)
{
	struct tm_op op = {.kind = TM_OP_STAT, .machine = machine, .stat = stat, .n = n,
			   .offset = l->last_off};
	tm_oplog_add(l, &op);
}

void
tm_oplog_fatal(struct tm_oplog *l, uint32_t machine, const char *text, uint64_t offset)
{
	struct tm_op op = {.kind = TM_OP_FATAL, .machine = machine, .text = text, .offset = offset};
	tm_oplog_add(l, &op);
}

uint32_t
tm_oplog_detail(struct tm_oplog *l, const char *name, size_t name_len, char phase, uint64_t track,
		int64_t dur)
{
	struct tm_oplog_x *x = tm_oplog_x_own(l);
	XGROW(x->details, x->cap_details, x->n_details + 1);
	struct tm_detail *d = &x->details[x->n_details++];
	d->name = 0;
	if (name) {
		d->name = (uint32_t)x->pool.len + 1;
		tm_buf_add(&x->pool, name, name_len);
		tm_buf_addc(&x->pool, 0);
	}
	d->phase = phase;
	d->queue = 0;
	d->flags = 0;
	d->track = track;
	d->dur = dur;
	return (uint32_t)x->n_details;
}

uint32_t
tm_oplog_detail_cat(struct tm_oplog *l, const char *name, size_t name_len, const char *cat,
		    size_t cat_len, char phase, uint64_t track, int64_t dur)
{
	if (!cat_len)
		return tm_oplog_detail(l, name, name_len, phase, track, dur);
	uint32_t id = tm_oplog_detail(l, name, name ? strnlen(name, name_len) : 0, phase, track, dur);
	struct tm_oplog_x *x = l->x;
	struct tm_detail *d = &x->details[id - 1];
	if (!d->name) {
		d->name = (uint32_t)x->pool.len + 1;
		tm_buf_addc(&x->pool, 0);
		d->flags |= TM_DETAIL_NONAME;
	}
	tm_buf_add(&x->pool, cat, strnlen(cat, cat_len));
	tm_buf_addc(&x->pool, 0);
	d->flags |= TM_DETAIL_CAT;
	return id;
}

const char *
tm_oplog_detail_name(const struct tm_oplog *l, const struct tm_detail *d)
{
	return d->name && !(d->flags & TM_DETAIL_NONAME) ? l->x->pool.data + d->name - 1 : NULL;
}

const char *
tm_oplog_detail_eof_name(const struct tm_oplog *l, const struct tm_detail *d)
{
	if (!(d->flags & TM_DETAIL_EOF))
		return tm_oplog_detail_name(l, d);
	return d->dur ? l->x->pool.data + d->dur - 1 : NULL;
}

void
tm_oplog_detail_set_eof_name(struct tm_oplog *l, uint32_t id, const char *name, size_t len)
{
	struct tm_oplog_x *x = l->x;
	struct tm_detail *d = &x->details[id - 1];
	d->flags |= TM_DETAIL_EOF;
	d->dur = 0;
	if (name) {
		d->dur = (int64_t)x->pool.len + 1;
		tm_buf_add(&x->pool, name, len);
		tm_buf_addc(&x->pool, 0);
	}
}

/* Where d's category starts in the pool (past its name's NUL), or SIZE_MAX. */
size_t
tm_ol_cat_offset(const struct tm_oplog_x *x, const struct tm_detail *d)
{
	if (!(d->flags & TM_DETAIL_CAT) || !d->name || !x->pool.data || d->name - 1 >= x->pool.len)
		return SIZE_MAX;
	size_t o = d->name - 1;
	o += strnlen(x->pool.data + o, x->pool.len - o) + 1;
	if (o >= x->pool.len || !memchr(x->pool.data + o, 0, x->pool.len - o))
		return SIZE_MAX;
	return o;
}

const char *
tm_oplog_detail_cat_of(const struct tm_oplog *l, const struct tm_detail *d)
{
	size_t o = tm_ol_cat_offset(l->x, d);
	return o == SIZE_MAX ? NULL : l->x->pool.data + o;
}

void
tm_oplog_packet_push(struct tm_oplog *l, uint32_t machine, uint32_t clock, uint32_t seq, int64_t ts,
		     uint32_t push_flags, uint64_t offset)
{
	if (!l->use_runs || !run_clock_ok(clock) || (push_flags & ~(uint32_t)TM_PUSH_TRACK_EVENT)) {
		struct tm_op op = {.kind = TM_OP_PACKET, .machine = machine, .clock = clock, .seq = seq,
				   .ts = ts, .n = 1, .offset = offset};
		tm_oplog_add(l, &op);
		tm_oplog_push(l, machine, 0, push_flags, 0, offset);
		return;
	}
	l->n_ops += 2;
	if (own_w(l)->has_held)
		emit_held(l);
	struct tm_op key = {.machine = machine, .clock = clock, .offset = offset};
	pkt_add(l, &key, push_flags, ts);
}


/* Round trip of every op kind through the byte encoding. */
#define _GNU_SOURCE /* MAP_FIXED_NOREPLACE */
#include <inttypes.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "oplog.h"
#include "scan.h"
#include "t.h"

static void
roundtrip_all_kinds(void)
{
	struct tm_oplog l;
	tm_oplog_init(&l);
	struct tm_op_clock ck[3] = {{6, 1000, 1, false}, {1, -5, 10, false}, {64, 7, 1, true}};
	uint32_t counts[2] = {1, 2};
	int64_t tss[3] = {5, 4, INT64_MAX};
	struct tm_op ops[] = {
		{.kind = TM_OP_MACHINE, .machine = 7, .offset = 10},
		{.kind = TM_OP_SNAPSHOT, .machine = 7, .seq = 3, .flags = TM_SNAP_PACKET, .primary = 6,
		 .n = 3, .clocks = ck, .offset = 20},
		{.kind = TM_OP_PACKET, .clock = 6, .seq = 1, .ts = -3, .n = 1, .offset = 30},
		{.kind = TM_OP_PUSH, .flags = TM_PUSH_TRACK_EVENT, .ts = 99, .detail = 1, .offset = 30},
		{.kind = TM_OP_PUSH_NOTS, .n = 12, .offset = 40},
		{.kind = TM_OP_CONVERT, .ts = INT64_MIN, .flags = TM_CONV_FAIL_DROP, .offset = 5},
		{.kind = TM_OP_CONVERT_ARRAY, .machine = 1, .clock = 6, .n = 3, .tss = tss, .offset = 50},
		{.kind = TM_OP_SERVICE, .clock = 6, .ts = 150, .offset = 60},
		{.kind = TM_OP_REMOTE_SYNC, .machine = 7, .n = 1, .counts = counts, .clocks = ck,
		 .offset = 70},
		{.kind = TM_OP_SYSINFO, .text = "phone", .offset = 80},
		{.kind = TM_OP_STAT, .stat = TM_STAT_JSON_TOKENIZER_FAILURE, .n = 2, .offset = 80},
		{.kind = TM_OP_FATAL, .text = "boom", .offset = 90},
		{.kind = TM_OP_TIMEZONE, .ts = -3600000000000, .offset = 95},
	};
	size_t n = sizeof ops / sizeof ops[0];
	for (size_t i = 0; i < n; i++)
		tm_oplog_add(&l, &ops[i]);
	struct tm_opiter it;
	tm_opiter_init(&it, &l);
	struct tm_op op;
	for (size_t i = 0; i < n; i++) {
		CHECK(tm_opiter_next(&it, &op));
		CHECK_INT(op.kind, ops[i].kind);
		CHECK_INT(op.machine, ops[i].machine);
		CHECK_INT(op.offset, ops[i].offset);
		CHECK_INT(op.n, ops[i].n);
		switch (op.kind) {
		case TM_OP_SNAPSHOT:
			CHECK_INT(op.seq, 3);
			CHECK_INT(op.primary, 6);
			CHECK_INT(op.clocks[1].ts, -5);
			CHECK_INT(op.clocks[1].unit, 10);
			CHECK(op.clocks[2].is_incremental);
			break;
		case TM_OP_PACKET:
		case TM_OP_PUSH:
		case TM_OP_CONVERT:
		case TM_OP_SERVICE:
			CHECK_INT(op.ts, ops[i].ts);
			CHECK_INT(op.clock, ops[i].clock);
			CHECK_INT(op.flags, ops[i].flags);
			CHECK_INT(op.detail, ops[i].detail);
			break;
		case TM_OP_CONVERT_ARRAY:
			CHECK_INT(op.tss[2], INT64_MAX);
			CHECK_INT(op.tss[1], 4);
			break;
		case TM_OP_REMOTE_SYNC:
			CHECK_INT(op.counts[1], 2);
			CHECK_INT(op.clocks[2].id, 64);
			break;
		case TM_OP_SYSINFO:
		case TM_OP_FATAL:
			CHECK_STR(op.text, ops[i].text);
			break;
		case TM_OP_STAT:
			CHECK_INT(op.stat, TM_STAT_JSON_TOKENIZER_FAILURE);
			break;
		case TM_OP_TIMEZONE:
			CHECK_INT(op.ts, -3600000000000);
			break;
		default:
			break;
		}
	}
	CHECK(!tm_opiter_next(&it, &op));
	tm_opiter_fini(&it);
	tm_oplog_fini(&l);
}

static void
compact_events_are_small(void)
{
	struct tm_oplog l;
	tm_oplog_init(&l);
	for (int i = 0; i < 1000; i++)
		tm_oplog_convert(&l, 0, 0, 0, 1000000 + i * 1000, TM_CONV_FAIL_DROP, 0, (uint64_t)i * 60);
	CHECK(l.len <= 1000 * 7);
	tm_oplog_fini(&l);
}

static void
details_keep_names(void)
{
	struct tm_oplog l;
	tm_oplog_init(&l);
	uint32_t a = tm_oplog_detail(&l, "alpha", 5, 'B', 7, -1);
	uint32_t b = tm_oplog_detail(&l, NULL, 0, 'E', 7, -1);
	CHECK_INT(a, 1);
	CHECK_INT(b, 2);
	CHECK_STR(tm_oplog_detail_name(&l, &l.x->details[0]), "alpha");
	CHECK(tm_oplog_detail_name(&l, &l.x->details[1]) == NULL);
	/* categories (a JSON E with one closes only a B of that category) */
	uint32_t c = tm_oplog_detail_cat(&l, "gamma", 5, "c1", 2, 'B', 7, -1);
	uint32_t d = tm_oplog_detail_cat(&l, NULL, 0, "c2", 2, 'E', 7, -1);
	uint32_t e = tm_oplog_detail_cat(&l, "de\0lta", 6, "c3", 2, 'B', 7, -1);
	CHECK_STR(tm_oplog_detail_name(&l, &l.x->details[c - 1]), "gamma");
	CHECK_STR(tm_oplog_detail_cat_of(&l, &l.x->details[c - 1]), "c1");
	CHECK(tm_oplog_detail_name(&l, &l.x->details[d - 1]) == NULL);
	CHECK_STR(tm_oplog_detail_cat_of(&l, &l.x->details[d - 1]), "c2");
	CHECK_STR(tm_oplog_detail_name(&l, &l.x->details[e - 1]), "de");
	CHECK_STR(tm_oplog_detail_cat_of(&l, &l.x->details[e - 1]), "c3");
	CHECK(tm_oplog_detail_cat_of(&l, &l.x->details[0]) == NULL);
	char why[128];
	tm_oplog_finish(&l);
	CHECK(tm_oplog_valid(&l, why, sizeof why));
	l.x->details[c - 1].flags |= TM_DETAIL_VALUE; /* a counter's value: known */
	CHECK(tm_oplog_valid(&l, why, sizeof why));
	l.x->details[c - 1].flags |= 16; /* no such flag */
	CHECK(!tm_oplog_valid(&l, why, sizeof why));
	tm_oplog_fini(&l);
}

/* The one-call appender gives the same bytes as PACKET + PUSH appends, with
 * runs on and off; runs fold and expand back to the same ops. */
static void
packet_push_same_bytes(void)
{
	for (int runs = 0; runs < 2; runs++) {
		struct tm_oplog a, b;
		tm_oplog_init(&a);
		tm_oplog_init(&b);
		a.use_runs = b.use_runs = runs;
		int64_t ts[] = {5, 9, 9, 12, 3, 4, 100};
		uint32_t clocks[] = {0, 0, 0, 6, 6, 6, 64};
		for (int i = 0; i < 7; i++) {
			uint32_t fl = i == 2 ? 0 : TM_PUSH_TRACK_EVENT;
			struct tm_op op = {.kind = TM_OP_PACKET, .clock = clocks[i], .seq = 3,
					   .ts = ts[i], .n = 1, .offset = (uint64_t)i * 10};
			tm_oplog_add(&a, &op);
			tm_oplog_push(&a, 0, 0, fl, 0, (uint64_t)i * 10);
			tm_oplog_packet_push(&b, 0, clocks[i], 3, ts[i], fl, (uint64_t)i * 10);
		}
		tm_oplog_finish(&a);
		tm_oplog_finish(&b);
		CHECK_INT(a.len, b.len);
		CHECK(a.len == b.len && memcmp(a.bytes, b.bytes, a.len) == 0);
		/* expanded, the ops are the plain sequence again */
		struct tm_opiter it;
		struct tm_op op;
		tm_opiter_init(&it, &b);
		int n_pkt = 0, n_push = 0;
		int64_t last = -1;
		while (tm_opiter_next(&it, &op)) {
			if (op.kind == TM_OP_PACKET) {
				CHECK_INT(op.ts, ts[n_pkt]);
				CHECK_INT(op.clock, clocks[n_pkt]);
				n_pkt++;
				last = op.ts;
			} else if (op.kind == TM_OP_PUSH) {
				CHECK_INT(op.flags, n_push == 2 ? 0 : TM_PUSH_TRACK_EVENT);
				n_push++;
			}
		}
		(void)last;
		CHECK_INT(n_pkt, 7);
		CHECK_INT(n_push, 7);
		if (runs)
			CHECK(b.n_runs >= 1);
		tm_opiter_fini(&it);
		tm_oplog_fini(&a);
		tm_oplog_fini(&b);
	}
}

/* tm_oplog_convert_i (the inline extension of an open CONVERT run) against
 * tm_oplog_add of the same op: the same bytes and op count, over runs that
 * go up and down, change machine, clock, flags or detail, meet a held
 * PACKET, a STAT or a sequence clock, and pass TM_RUN_MAX. */
static void
convert_i_same_bytes(void)
{
	for (int runs = 0; runs < 2; runs++) {
		struct tm_oplog a, b;
		tm_oplog_init(&a);
		tm_oplog_init(&b);
		a.use_runs = b.use_runs = runs;
		uint64_t x = 0x2545F4914F6CDD1DULL;
		int64_t ts = 1000;
		for (uint32_t i = 0; i < TM_RUN_MAX + 40000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			unsigned r = (unsigned)(x >> 56);
			if (i < TM_RUN_MAX + 1000 && r >= 1 && r <= 7)
				r = 0; /* first one run past TM_RUN_MAX */
			ts += (int64_t)(x % 1000) - (r < 40 ? 700 : 0);
			uint32_t machine = r == 1 ? 1 : 0, clock = r == 2 ? 6 : r == 3 ? 64 : 0;
			uint32_t flags = r == 4 ? 0 : TM_CONV_FAIL_DROP, detail = r == 5 ? 1 : 0;
			if (r == 6) {
				tm_oplog_stat(&a, 0, TM_STAT_JSON_TOKENIZER_FAILURE, 1);
				tm_oplog_stat(&b, 0, TM_STAT_JSON_TOKENIZER_FAILURE, 1);
			} else if (r == 7) {
				struct tm_op op = { .kind = TM_OP_PACKET, .seq = 1, .ts = ts, .n = 1,
						    .offset = i };
				tm_oplog_add(&a, &op);
				tm_oplog_add(&b, &op);
			}
			struct tm_op op = { .kind = TM_OP_CONVERT, .machine = machine, .clock = clock,
					    .seq = 2, .ts = ts, .flags = flags, .detail = detail,
					    .offset = (uint64_t)i * 7 };
			tm_oplog_add(&a, &op);
			tm_oplog_convert_i(&b, machine, clock, 2, ts, flags, detail, (uint64_t)i * 7);
		}
		tm_oplog_finish(&a);
		tm_oplog_finish(&b);
		CHECK_INT(a.n_ops, b.n_ops);
		CHECK_INT(a.len, b.len);
		CHECK(a.len == b.len && memcmp(a.bytes, b.bytes, a.len) == 0);
		CHECK_INT(a.n_runs, b.n_runs);
		if (runs)
			CHECK(b.n_runs >= 2);
		tm_oplog_fini(&a);
		tm_oplog_fini(&b);
	}
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The runs (raw) at the iterator, up to the first op of another clock:
 * their values, in order of the ops, and the number of arrays folded. */
static size_t
collect_arrays(struct tm_opiter *it, struct tm_op *op, int64_t *out, size_t cap, size_t *arrays,
	       size_t *runs)
{
	size_t n = 0;
	*arrays = *runs = 0;
	while (tm_opiter_next(it, op) && op->clock == 6) {
		if (op->kind == TM_OP_RUN) {
			CHECK_INT(op->flags, TM_RUN_ARRAY);
			if (n + op->run.n <= cap)
				tm_run_decode(&op->run, out + n);
			for (uint32_t i = 1; i < op->run.n && n + op->run.n <= cap; i++)
				CHECK(out[n + i - 1] <= out[n + i]);
			n += op->run.n;
			*arrays += op->n_arrays;
			(*runs)++;
		} else {
			CHECK_INT(op->kind, TM_OP_CONVERT_ARRAY);
			for (uint32_t i = 0; i < op->n && n < cap; i++)
				out[n++] = op->tss[i];
			(*arrays)++;
		}
	}
	return n;
}

/* The raw runs of l up to the first op of another clock hold all[0..n)
 * (sorted) from k arrays, in min_runs..TM_LANES runs; the iterator is left
 * on that op (in *op) for the caller. */
static void
check_array_runs(struct tm_opiter *it, struct tm_op *op, const struct tm_oplog *l, int64_t *all,
		 size_t n_all, size_t k, size_t min_runs, int64_t *got)
{
	tm_opiter_init(it, l);
	it->raw_runs = true;
	size_t arrays, runs;
	size_t n = collect_arrays(it, op, got, n_all + 1, &arrays, &runs);
	CHECK_INT(n, n_all);
	CHECK_INT(arrays, k);
	CHECK(runs >= min_runs && runs <= TM_LANES);
	qsort(all, n_all, sizeof *all, cmp_i64);
	qsort(got, n, sizeof *got, cmp_i64);
	CHECK(n == n_all && !memcmp(got, all, sizeof(int64_t) * n_all));
}

/* compact_sched arrays of one clock fold into ARRAY runs (a few lanes, each
 * sorted): raw, every value once and the number of arrays; expanded, as
 * many CONVERT_ARRAYs holding the same values.  A sequence clock or another
 * op in between stays apart. */
static void
array_runs(void)
{
	struct tm_oplog l;
	tm_oplog_init(&l);
	l.use_runs = true;
	enum { K = 40, M = 300 };
	static int64_t all[K * M], tss[M], got[K * M + 1];
	size_t n_all = 0;
	for (int a = 0; a < K; a++) {
		for (int i = 0; i < M; i++)
			all[n_all++] = tss[i] = 1000 + (a % 4) * 3 + (int64_t)(a / 4) * 400000 + i * 1000;
		struct tm_op op = {.kind = TM_OP_CONVERT_ARRAY, .clock = 6, .n = M, .tss = tss,
				   .offset = (uint64_t)a * 100};
		tm_oplog_add(&l, &op);
	}
	struct tm_op seq = {.kind = TM_OP_CONVERT_ARRAY, .clock = 64, .seq = 3, .n = M, .tss = tss};
	tm_oplog_add(&l, &seq);
	tm_oplog_finish(&l);
	struct tm_opiter it;
	struct tm_op op;
	check_array_runs(&it, &op, &l, all, n_all, K, 1, got);
	CHECK_INT(op.kind, TM_OP_CONVERT_ARRAY);
	CHECK_INT(op.clock, 64);
	CHECK_INT(op.seq, 3);
	CHECK(!tm_opiter_next(&it, &op));
	tm_opiter_fini(&it);

	size_t arrays, runs;
	tm_opiter_init(&it, &l);
	size_t n = collect_arrays(&it, &op, got, K * M + 1, &arrays, &runs);
	CHECK_INT(arrays, K);
	CHECK_INT(n, n_all);
	qsort(got, n, sizeof *got, cmp_i64);
	CHECK(n == n_all && !memcmp(got, all, sizeof(int64_t) * n_all));
	tm_opiter_fini(&it);
	tm_oplog_fini(&l);
}

/* A CONVERT after ARRAYs of the same clock: the open ARRAY run (staged in
 * its lanes) is flushed, the CONVERT starts its own. */
static void
array_then_convert(void)
{
	struct tm_oplog l;
	tm_oplog_init(&l);
	l.use_runs = true;
	for (int k = 0; k < 3; k++) {
		int64_t tss[3] = {10 + 100 * k, 20 + 100 * k, 30 + 100 * k};
		struct tm_op op = {.kind = TM_OP_CONVERT_ARRAY, .clock = 6, .n = 3, .tss = tss};
		tm_oplog_add(&l, &op);
	}
	tm_oplog_convert(&l, 0, 6, 0, 5, TM_CONV_FAIL_DROP, 0, 0);
	tm_oplog_convert(&l, 0, 6, 0, 7, TM_CONV_FAIL_DROP, 0, 0);
	tm_oplog_finish(&l);
	struct tm_opiter it;
	struct tm_op op;
	tm_opiter_init(&it, &l);
	it.raw_runs = true;
	CHECK(tm_opiter_next(&it, &op));
	CHECK_INT(op.kind, TM_OP_RUN);
	CHECK_INT(op.flags, TM_RUN_ARRAY);
	CHECK_INT(op.n_arrays, 3);
	CHECK(tm_opiter_next(&it, &op));
	CHECK_INT(op.kind, TM_OP_RUN);
	CHECK_INT(op.flags, TM_RUN_CONVERT);
	CHECK_INT(op.run.n, 2);
	CHECK(!tm_opiter_next(&it, &op));
	tm_opiter_fini(&it);
	tm_oplog_fini(&l);
}

static void
put_buf(void *ctx, const void *p, size_t n)
{
	struct tm_buf *b = ctx;
	tm_buf_add(b, p, n);
}

/* Whether l written inline (tm_oplog_write_inline) is want[0..n). */
static bool
inline_is(const struct tm_oplog *l, const void *want, size_t n)
{
	struct tm_buf w;
	tm_buf_init(&w);
	tm_oplog_write_inline(l, put_buf, &w);
	bool same = w.len == n && !memcmp(w.data, want, n);
	if (!same)
		fprintf(stderr, "inline_is: %zu bytes written, %zu wanted\n", w.len, n);
	tm_buf_fini(&w);
	return same;
}

/* FNV-1a of p[0..n): the stored logs' bytes in brief. */
static uint64_t
fnv1a(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ULL;
	return h;
}

static void same_ops(const struct tm_oplog *a, const struct tm_oplog *b, bool raw, uint64_t *n_out);

/* Runs of every size around the spill threshold (deltas >= 1024 bytes):
 * with everything wanted in the spill file, PACKET runs are encoded in the
 * log's own bytes past room for the head, CONVERT runs behind their head
 * (one that spills is then moved past room for it and its head written
 * anew, at its own offset); both logs write the same bytes inline, and
 * each run's values read back as appended. */
static void
spill_thresholds(void)
{
	static const uint32_t sizes[] = {1, 2, 50, 102, 103, 104, 200, 511, 512, 513, 700, 1023,
					  1024, 5000, 70000};
	enum { NS = sizeof sizes / sizeof sizes[0] };
	struct tm_oplog a, b;
	size_t keep = tm_oplog_spill_after;
	for (int pass = 0; pass < 2; pass++) {
		struct tm_oplog *l = pass ? &b : &a;
		tm_oplog_spill_after = pass ? 0 : SIZE_MAX;
		tm_oplog_init(l);
		l->use_runs = true;
		int64_t ts = 1;
		uint64_t x = 7;
		for (int k = 0; k < NS; k++) {
			for (uint32_t i = 0; i < sizes[k]; i++) {
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				/* 1-byte deltas in even runs, 3-byte ones in odd */
				ts += k % 2 ? (int64_t)(x >> 44) : (int64_t)(x >> 59);
				tm_oplog_packet_push(l, 0, 6, 1, ts, TM_PUSH_TRACK_EVENT, (uint64_t)i);
			}
			tm_oplog_stat(l, 0, TM_STAT_NEG_DROPPED, 1); /* ends the run */
		}
		/* CONVERT runs of 1-byte deltas, and of 3-byte ones from 341 to
		 * 343 values: 1,023 and 1,026 bytes either side of the line */
		static const uint32_t conv[] = {1, 2, 341, 342, 343, 1022, 1023, 1024, 1025, 5000};
		for (int k = 0; k < (int)(sizeof conv / sizeof conv[0]); k++) {
			int64_t d = conv[k] > 300 && conv[k] < 400 ? 70000 : 1;
			for (uint32_t i = 0; i < conv[k]; i++) {
				ts += d;
				tm_oplog_convert(l, 0, 6, 0, ts, TM_CONV_FAIL_DROP, 0,
						 (uint64_t)k * 100000 + i);
			}
			tm_oplog_stat(l, 0, TM_STAT_NEG_DROPPED, 1);
		}
		tm_oplog_finish(l);
	}
	tm_oplog_spill_after = keep;
	CHECK_INT(a.x->n_spilled, 0);
	CHECK(b.x->n_spilled > 0 && b.len < a.len);
	CHECK(inline_is(&a, a.bytes, a.len));
	CHECK(inline_is(&b, a.bytes, a.len));
	/* the same ops, expanded, from both */
	uint64_t n = 0;
	same_ops(&a, &b, false, &n);
	CHECK(n > 70000);
	tm_oplog_fini(&a);
	tm_oplog_fini(&b);
}

/* A log in 4 KiB pages (below TM_BIG_MIN bytes) spills its runs past an
 * eighth of tm_oplog_spill_after, one in huge pages past all of it; each
 * reads back what its twin kept in memory holds. */
static void
spill_small_logs(void)
{
	size_t keep = tm_oplog_spill_after;
	for (int big = 0; big < 2; big++) {
		struct tm_oplog a, b;
		for (int pass = 0; pass < 2; pass++) {
			struct tm_oplog *l = pass ? &b : &a;
			tm_oplog_spill_after = pass ? 64 << 10 : SIZE_MAX;
			tm_oplog_init(l);
			l->use_runs = true;
			if (big) /* internal.h */
				tm_big_resize((void **)&l->bytes, &l->cap, TM_BIG_MIN, 1, TM_BIG_MIN);
			int64_t ts = 1;
			uint64_t x = 5;
			for (int i = 0; i < 6000; i++) { /* ~12 KB of deltas */
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				ts += (int64_t)(x >> 52);
				tm_oplog_packet_push(l, 0, 6, 1, ts, TM_PUSH_TRACK_EVENT, (uint64_t)i);
			}
			tm_oplog_finish(l);
		}
		tm_oplog_spill_after = keep;
		CHECK_INT(a.x->n_spilled, 0);
		CHECK_INT(b.x->n_spilled, big ? 0 : 1);
		CHECK(inline_is(&b, a.bytes, a.len));
		tm_oplog_fini(&a);
		tm_oplog_fini(&b);
	}
}

/* Spilled logs given back in a scrambled order (their extents then merge
 * into holes punched together, oplog_spill.c tm_ol_sp_free): every log still live
 * reads back the same bytes as its twin kept in memory, after each one
 * given back. */
static void
spill_holes(void)
{
	enum { L = 40, N = 20000, IN_ORDER = 8 };
	static struct tm_oplog mem[L], sp[L];
	size_t keep = tm_oplog_spill_after;
	for (int k = 0; k < L; k++)
		for (int pass = 0; pass < 2; pass++) {
			struct tm_oplog *l = pass ? &sp[k] : &mem[k];
			tm_oplog_spill_after = pass ? 0 : SIZE_MAX;
			tm_oplog_init(l);
			l->use_runs = true;
			uint64_t x = 1234567 + (uint64_t)k;
			int64_t ts = 1000;
			for (int i = 0; i < N; i++) {
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				ts += (int64_t)(x >> 46);
				tm_oplog_packet_push(l, 0, 6, 1, ts, TM_PUSH_TRACK_EVENT,
						     (uint64_t)i * 20);
			}
			tm_oplog_finish(l);
		}
	tm_oplog_spill_after = keep;
	bool gone[L] = {0};
	uint64_t x = 42, extents = 0, punches0 = tm_oplog_spill_punches;
	for (int step = 0; step < L; step++) {
		int k = step; /* the first IN_ORDER in the file's order */
		if (step == IN_ORDER) /* neighbours, all of them merged: */
			CHECK(tm_oplog_spill_punches - punches0 <= 1);
		if (step >= IN_ORDER)
			do {
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				k = (int)((x >> 33) % L);
			} while (gone[k]);
		CHECK(sp[k].x->n_spilled > 0);
		extents += sp[k].x->n_spilled;
		tm_oplog_fini(&sp[k]);
		gone[k] = true;
		for (int j = 0; j < L; j++) {
			if (!gone[j])
				CHECK(inline_is(&sp[j], mem[j].bytes, mem[j].len));
		}
	}
	/* holes were punched, and neighbours together: fewer than one a run */
	uint64_t punched = tm_oplog_spill_punches - punches0;
	CHECK(punched >= 1 && punched < extents);
	for (int k = 0; k < L; k++)
		tm_oplog_fini(&mem[k]);
}

/* Two logs of the same ops, one with its runs in memory, one with them in
 * the spill file: the same bytes once written inline, the same values by
 * index and by search, the same ops expanded. */
static void
spilled_runs(void)
{
	struct tm_oplog a, b;
	size_t keep = tm_oplog_spill_after;
	enum { N = 70000, M = 500, K = 30 };
	static int64_t arr[M];
	for (int pass = 0; pass < 2; pass++) {
		struct tm_oplog *l = pass ? &b : &a;
		tm_oplog_spill_after = pass ? 0 : SIZE_MAX;
		tm_oplog_init(l);
		l->use_runs = true;
		uint64_t x = 99;
		int64_t ts = 1000;
		for (int i = 0; i < N; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			ts += (int64_t)(x >> 54); /* 0..1023, repeats too */
			tm_oplog_packet_push(l, 0, 6, 1, ts, TM_PUSH_TRACK_EVENT, (uint64_t)i * 20);
		}
		tm_oplog_stat(l, 0, TM_STAT_NEG_DROPPED, 2);
		for (int k = 0; k < K; k++) {
			for (int i = 0; i < M; i++)
				arr[i] = 5000 + (k % 4) * 7 + (int64_t)(k / 4) * 900000 + i * 1800;
			struct tm_op op = {.kind = TM_OP_CONVERT_ARRAY, .clock = 6, .n = M, .tss = arr,
					   .offset = (uint64_t)k};
			tm_oplog_add(l, &op);
		}
		tm_oplog_finish(l);
	}
	tm_oplog_spill_after = keep;
	CHECK_INT(a.x->n_spilled, 0);
	CHECK(b.x->n_spilled > 0);
	CHECK(b.len * 4 < a.len);
	CHECK(inline_is(&a, a.bytes, a.len));
	CHECK(inline_is(&b, a.bytes, a.len));
	/* a log read back whole (a saved scan) spills the same way */
	struct tm_oplog c;
	tm_oplog_init(&c);
	tm_big_resize((void **)&c.bytes, &c.cap, a.len, 1, TM_BIG_MIN); /* internal.h */
	memcpy(c.bytes, a.bytes, a.len);
	c.len = a.len;
	tm_oplog_spill_after = 0;
	tm_oplog_spill_runs(&c);
	tm_oplog_spill_after = keep;
	CHECK(c.x->n_spilled > 0);
	CHECK(c.len * 4 < a.len);
	CHECK(inline_is(&c, a.bytes, a.len));
	tm_oplog_fini(&c);

	struct tm_opiter ia, ib;
	struct tm_op oa, ob;
	tm_opiter_init(&ia, &a);
	tm_opiter_init(&ib, &b);
	ia.raw_runs = ib.raw_runs = true;
	int runs = 0;
	while (tm_opiter_next(&ia, &oa)) {
		CHECK(tm_opiter_next(&ib, &ob));
		CHECK_INT(oa.kind, ob.kind);
		CHECK_INT(oa.flags, ob.flags);
		if (oa.kind != TM_OP_RUN || ob.kind != TM_OP_RUN || oa.run.n != ob.run.n)
			continue;
		runs++;
		const struct tm_run *ra = &oa.run, *rb = &ob.run;
		CHECK(ra->deltas && !rb->deltas);
		int64_t *va = malloc(sizeof *va * ra->n), *vb = malloc(sizeof *vb * rb->n);
		tm_run_decode(ra, va);
		tm_run_decode(rb, vb);
		CHECK(!memcmp(va, vb, sizeof *va * ra->n));
		uint64_t x = 7;
		for (int q = 0; q < 2000; q++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			uint32_t i = (uint32_t)(x >> 33) % ra->n, j = (uint32_t)(x >> 13) % ra->n;
			uint32_t lo = i < j ? i : j, hi = (i < j ? j : i) + 1;
			CHECK_INT(tm_run_at(rb, i), va[i]);
			int64_t probe = va[j] + (int64_t)(x % 3) - 1;
			bool strict = x & 1;
			uint32_t want = lo;
			while (want < hi && (strict ? va[want] <= probe : va[want] < probe))
				want++;
			/* the values beside the answer, and one block read at most */
			int64_t na[2] = {0, 0}, nb[2] = {0, 0};
			uint64_t r0 = tm_oplog_spill_reads;
			CHECK_INT(tm_run_lower_bound(rb, lo, hi, probe, strict, nb), want);
			CHECK(tm_oplog_spill_reads - r0 <= 1);
			CHECK_INT(tm_run_lower_bound(ra, lo, hi, probe, strict, na), want);
			CHECK_INT(tm_run_lower_bound(ra, lo, hi, probe, strict, NULL), want);
			if (want > lo && want < hi) {
				CHECK_INT(na[0], va[want - 1]);
				CHECK_INT(na[1], va[want]);
				CHECK_INT(nb[0], va[want - 1]);
				CHECK_INT(nb[1], va[want]);
			}
		}
		free(va);
		free(vb);
	}
	CHECK(!tm_opiter_next(&ib, &ob));
	CHECK(runs >= 2);
	tm_opiter_fini(&ia);
	tm_opiter_fini(&ib);

	/* expanded: the same ops one by one */
	tm_opiter_init(&ia, &a);
	tm_opiter_init(&ib, &b);
	size_t n_ops = 0;
	bool same = true;
	while (tm_opiter_next(&ia, &oa)) {
		if (!tm_opiter_next(&ib, &ob)) {
			same = false;
			break;
		}
		same &= oa.kind == ob.kind && oa.ts == ob.ts && oa.n == ob.n;
		if (oa.kind == TM_OP_CONVERT_ARRAY && same)
			same &= !memcmp(oa.tss, ob.tss, oa.n * sizeof *oa.tss);
		n_ops++;
	}
	CHECK(same);
	CHECK(!tm_opiter_next(&ib, &ob));
	CHECK(n_ops > 2 * N);
	tm_opiter_fini(&ia);
	tm_opiter_fini(&ib);
	tm_oplog_fini(&a);
	tm_oplog_fini(&b);
}

/* Arrays in more orders than there are lanes, one starting before all
 * others, one unsorted: every value lands once, each run sorted. */
static void
array_runs_overlap(void)
{
	struct tm_oplog l;
	tm_oplog_init(&l);
	l.use_runs = true;
	enum { K = 64, M = 200 };
	static int64_t all[K * M], tss[M], got[K * M + 1];
	size_t n_all = 0;
	uint64_t x = 3;
	for (int a = 0; a < K; a++) {
		int64_t start = a == 40 ? 5 : 100000 + (a % 12) * 11 + (int64_t)(a / 12) * 150000;
		for (int i = 0; i < M; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			tss[i] = start + i * 1000 + (a == 50 ? (int64_t)(x >> 50) : 0);
			all[n_all++] = tss[i];
		}
		struct tm_op op = {.kind = TM_OP_CONVERT_ARRAY, .clock = 6, .n = M, .tss = tss};
		tm_oplog_add(&l, &op);
	}
	tm_oplog_finish(&l);
	struct tm_opiter it;
	struct tm_op op;
	check_array_runs(&it, &op, &l, all, n_all, K, 2, got);
	tm_opiter_fini(&it);
	tm_oplog_fini(&l);
}

/* Runs of PACKETs whose deltas take 1, 2, 3 and up to 10 bytes (the
 * encoder's one- and two-byte shortcuts and its loop), over several skip
 * blocks and a partial one: expanded back, every timestamp in order. */
static void
run_deltas_all_sizes(void)
{
	struct tm_oplog l;
	tm_oplog_init(&l);
	l.use_runs = true;
	enum { N = 3 * TM_RUN_SKIP + 77 };
	static int64_t want[N];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int64_t ts = 5;
	for (int i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		static const uint64_t lim[] = {1, 0x40, 0x2000, 0x100000, 1ULL << 40, 1ULL << 61};
		/* wrapping: a rare huge step also runs backwards (a new run) */
		ts = (int64_t)((uint64_t)ts + x % lim[(x >> 40) % 6]);
		want[i] = ts;
		tm_oplog_packet_push_i(&l, 0, 0, 1, ts, TM_PUSH_TRACK_EVENT, (uint64_t)i);
	}
	tm_oplog_finish(&l);
	struct tm_opiter it;
	struct tm_op op;
	tm_opiter_init(&it, &l);
	int k = 0;
	bool ok = true;
	while (tm_opiter_next(&it, &op))
		if (op.kind == TM_OP_PACKET)
			ok &= k < N && op.ts == want[k++];
	CHECK(ok);
	CHECK_INT(k, N);
	CHECK(l.n_runs >= 1);
	tm_opiter_fini(&it);
	tm_oplog_fini(&l);
}

/* compact_sched-sized ARRAY runs: 8 interleaved streams fill 8 lanes of
 * ~60 K values each (mapped arrays, outside the sanitizers), some arrays
 * overlapping the lane they extend, one unsorted: every value once. */
static void
big_array_lanes(void)
{
	struct tm_oplog l;
	tm_oplog_init(&l);
	l.use_runs = true;
	enum { K = 800, M = 600 };
	static int64_t all[K * M], tss[M], got[K * M + 1];
	size_t n_all = 0;
	uint64_t x = 5;
	for (int a = 0; a < K; a++) {
		int64_t start = (a % 8) * 3 + (int64_t)(a / 8) * M * 1000 - (a % 97 == 0 ? 5000 : 0);
		for (int i = 0; i < M; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			tss[i] = start + i * 1000 + (a == 777 ? (int64_t)(x >> 44) : 0);
			all[n_all++] = tss[i];
		}
		struct tm_op op = {.kind = TM_OP_CONVERT_ARRAY, .clock = 6, .n = M, .tss = tss,
				   .offset = (uint64_t)a};
		tm_oplog_add(&l, &op);
	}
	tm_oplog_finish(&l);
	struct tm_opiter it;
	struct tm_op op;
	check_array_runs(&it, &op, &l, all, n_all, K, 8, got);
	tm_opiter_fini(&it);
	tm_oplog_fini(&l);
}

/* Uneven lanes (one stream of arrays 20x the others' values): the lane
 * that would pass tm_oplog_lane_max flushes its run rather than widening
 * every lane's slot; several runs then (6 lanes each), each sorted, every
 * value once, every array counted; growing slots move the lanes' values
 * intact.  Once at the limit's default (stream 0's lane flushes twice), once
 * with a limit of 5,000 values (every 6th round). */
static void
uneven_lanes_at(size_t lane_max, size_t min_runs)
{
	size_t keep = tm_oplog_lane_max;
	tm_oplog_lane_max = lane_max;
	struct tm_oplog l;
	tm_oplog_init(&l);
	l.use_runs = true;
	enum { K = 1200, M = 40 };
	static int64_t all[K * M * 20], tss[M * 20], got[K * M * 20];
	size_t n_all = 0;
	for (int a = 0; a < K; a++) {
		int s = a % 6; /* stream 0 carries arrays of 20 * M values */
		int m = s ? M : 20 * M;
		int64_t start = s * 5 + (int64_t)(a / 6) * 1000000;
		for (int i = 0; i < m; i++) {
			tss[i] = start + (int64_t)i * (s ? 20000 : 1000);
			all[n_all++] = tss[i];
		}
		struct tm_op op = {.kind = TM_OP_CONVERT_ARRAY, .clock = 6, .n = (uint32_t)m,
				   .tss = tss, .offset = (uint64_t)a};
		tm_oplog_add(&l, &op);
	}
	tm_oplog_finish(&l);
	tm_oplog_lane_max = keep;
	struct tm_opiter it;
	struct tm_op op;
	tm_opiter_init(&it, &l);
	it.raw_runs = true;
	size_t arrays, runs;
	size_t n = collect_arrays(&it, &op, got, sizeof got / sizeof got[0], &arrays, &runs);
	CHECK_INT(n, n_all);
	CHECK_INT(arrays, K);
	CHECK(runs >= min_runs);
	qsort(all, n_all, sizeof *all, cmp_i64);
	qsort(got, n, sizeof *got, cmp_i64);
	CHECK(n == n_all && !memcmp(got, all, sizeof(int64_t) * n_all));
	tm_opiter_fini(&it);
	tm_oplog_fini(&l);
}

static void
uneven_lanes(void)
{
	uneven_lanes_at(tm_oplog_lane_max, 12);
	uneven_lanes_at(5000, 6 * 30);
}

/* A log whose bytes and staging outgrow TM_BIG_MIN (mappings, outside the
 * sanitizers): two of the same ops, one written with every run in memory,
 * one spilled after the fact (tm_oplog_spill_runs replaces the mapped
 * bytes); both expand back to every timestamp, and both write the same
 * bytes inline. */
static void
big_log_mapped(void)
{
	size_t keep = tm_oplog_spill_after;
	tm_oplog_spill_after = SIZE_MAX;
	enum { N = 1500000 };
	struct tm_oplog l;
	tm_oplog_init(&l);
	l.use_runs = true;
	uint64_t x = 7;
	int64_t ts = 1;
	for (int i = 0; i < N; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		ts += (int64_t)(x >> 44); /* 0..1 M: two and three byte deltas */
		tm_oplog_packet_push_i(&l, 0, 0, 1, ts, TM_PUSH_TRACK_EVENT, (uint64_t)i * 9);
	}
	tm_oplog_finish(&l);
	CHECK(l.len > TM_BIG_MIN);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	CHECK(((uintptr_t)l.bytes & (TM_BIG_MIN - 1)) == 0); /* huge pages */
#endif
	struct tm_buf w0;
	tm_buf_init(&w0);
	tm_oplog_write_inline(&l, put_buf, &w0);
	CHECK(w0.len == l.len && !memcmp(w0.data, l.bytes, l.len));
	tm_oplog_spill_after = 0;
	tm_oplog_spill_runs(&l);
	tm_oplog_spill_after = keep;
	CHECK(l.x->n_spilled > 0);
	struct tm_buf w1;
	tm_buf_init(&w1);
	tm_oplog_write_inline(&l, put_buf, &w1);
	CHECK(w1.len == w0.len && !memcmp(w1.data, w0.data, w0.len));
	struct tm_opiter it;
	struct tm_op op;
	tm_opiter_init(&it, &l);
	x = 7;
	ts = 1;
	int k = 0;
	bool ok = true;
	while (tm_opiter_next(&it, &op))
		if (op.kind == TM_OP_PACKET) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			ts += (int64_t)(x >> 44);
			ok &= op.ts == ts;
			k++;
		}
	CHECK(ok);
	CHECK_INT(k, N);
	tm_opiter_fini(&it);
	tm_buf_fini(&w0);
	tm_buf_fini(&w1);
	tm_oplog_fini(&l);
}

/* The ops of two logs, expanded (as the replay's plain path sees them) or
 * raw (its fast path: runs with their values): the same sequence. */
static void
same_ops(const struct tm_oplog *a, const struct tm_oplog *b, bool raw, uint64_t *n_out)
{
	struct tm_opiter ia, ib;
	struct tm_op oa, ob;
	tm_opiter_init(&ia, a);
	tm_opiter_init(&ib, b);
	ia.raw_runs = ib.raw_runs = raw;
	uint64_t n = 0;
	for (;;) {
		bool ha = tm_opiter_next(&ia, &oa), hb = tm_opiter_next(&ib, &ob);
		CHECK(ha == hb);
		if (!ha || !hb)
			break;
		n++;
		CHECK(oa.kind == ob.kind && oa.machine == ob.machine && oa.clock == ob.clock &&
		      oa.seq == ob.seq && oa.flags == ob.flags && oa.ts == ob.ts && oa.n == ob.n &&
		      oa.push_flags == ob.push_flags && oa.offset == ob.offset &&
		      oa.detail == ob.detail);
		if (oa.kind == TM_OP_RUN && ob.kind == TM_OP_RUN && oa.run.n == ob.run.n) {
			CHECK_INT(oa.run.last, ob.run.last);
			int64_t *va = malloc(sizeof *va * oa.run.n), *vb = malloc(sizeof *vb * ob.run.n);
			tm_run_decode(&oa.run, va);
			tm_run_decode(&ob.run, vb);
			CHECK(!memcmp(va, vb, sizeof *va * oa.run.n));
			free(va);
			free(vb);
		}
		if (t_failed_)
			break;
	}
	tm_opiter_fini(&ia);
	tm_opiter_fini(&ib);
	*n_out = n;
}

/* PACKET runs encoded as they grow (pkt_add, tm_oplog_packet_push_i),
 * over runs of every length around the skip entries and TM_RUN_MAX, deltas
 * of one to ten bytes (and ones past INT64_MAX), values going down, other
 * machines, clocks, sequence clocks and push flags, held PACKETs
 * (tm_oplog_add), other ops between: the log of variant v (5: every large
 * run spilled). */
static void
pkt_log(int variant, struct tm_oplog *g)
{
	tm_oplog_init(g);
	g->use_runs = true;
	uint64_t x = 0x9E3779B97F4A7C15ULL * (uint64_t)(variant + 1);
	int64_t ts = variant == 4 ? INT64_MIN + 5000 : 1000;
	uint32_t total = variant >= 3 ? 2 * TM_RUN_MAX + 3000 : 40000;
	for (uint32_t i = 0; i < total; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned r = (unsigned)(x >> 54); /* 0..1023 */
		/* stretches of plain pushes going up (of 1,400
		 * or, from variant 3 on, 450,000: past
		 * TM_RUN_MAX), then some of everything */
		bool quiet = variant >= 3 ? (i / 30000) % 16 != 15 : (i / 700) % 3 != 2;
		if (quiet)
			r = 1023;
		int64_t d;
		switch (x % 7) {
		case 0: d = (int64_t)(x >> 58); break;          /* 1 byte */
		case 1: case 2: d = (int64_t)(x >> 51); break;  /* 2 bytes */
		case 3: d = (int64_t)(x >> 44); break;          /* 3 */
		case 4: d = variant == 2 ? (int64_t)(x >> 3) : 1000; break;
		default: d = 300 + (int64_t)(x % 1000); break;
		}
		if (r < 40 || (r < 200 && variant == 1))
			d = -(int64_t)(x % 2000);
		ts = (int64_t)((uint64_t)ts + (uint64_t)d);
		if (variant == 4 && (r == 50 || i == 100))
			ts = ts < 0 ? INT64_MAX - 100000 : INT64_MIN + 5000;
		/* up by more than INT64_MAX (the delta wraps) or down
		 * across zero */
		uint32_t machine = r == 1 ? 2 : 0;
		uint32_t clock = r == 2 ? 6 : r == 3 ? 64 + (unsigned)(x % 2) : 0;
		uint32_t pf = r == 4 ? 0 : r == 5 ? TM_CONV_NO_PUSH : TM_PUSH_TRACK_EVENT;
		uint64_t off = (uint64_t)i * 23;
		if (r == 6)
			tm_oplog_stat(g, 0, TM_STAT_NEG_DROPPED, 1);
		if (r == 7) {
			tm_oplog_convert(g, 0, 0, 0, ts, TM_CONV_FAIL_DROP, 0, off);
			continue;
		}
		if (r >= 8 && r < 16) {
			/* PACKET then PUSH through tm_oplog_add (held) */
			struct tm_op op = {.kind = TM_OP_PACKET, .machine = machine,
					   .clock = clock, .seq = 1, .ts = ts, .n = 1,
					   .offset = off};
			tm_oplog_add(g, &op);
			if (r != 8)
				tm_oplog_push(g, machine, 0, r == 9 ? 0 : pf, 0, off);
			continue;
		}
		if (r >= 16 && r < 24)
			tm_oplog_packet_push(g, machine, clock, 1, ts, pf, off);
		else
			tm_oplog_packet_push_i(g, machine, clock, 1, ts, pf, off);
	}
	tm_oplog_finish(g);
}

/* One full CONVERT run (TM_RUN_MAX values, deltas of 1-2 bytes: ~460 KB)
 * takes the log to one huge page, TM_BIG_MIN, the length util.c parks for
 * the next log (reserving 10 bytes a value took it to a 4 MiB mapping).
 * Its twin whose run spills (moved on past room for the head once its
 * deltas are written) reads back as the kept one, op by op. */
static void
full_run_reserved_exactly(void)
{
	size_t keep = tm_oplog_spill_after;
	struct tm_oplog a, b;
	for (int pass = 0; pass < 2; pass++) {
		struct tm_oplog *l = pass ? &b : &a;
		tm_oplog_spill_after = pass ? 0 : SIZE_MAX;
		tm_oplog_init(l);
		l->use_runs = true;
		int64_t ts = 1000;
		uint64_t x = 3;
		for (uint32_t i = 0; i < TM_RUN_MAX; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			ts += (int64_t)(x >> 55); /* 0..511: deltas of 1-2 bytes */
			tm_oplog_convert(l, 0, 6, 0, ts, TM_CONV_FAIL_DROP, 0, i);
		}
		tm_oplog_stat(l, 0, TM_STAT_NEG_DROPPED, 1); /* ends the run */
		CHECK(l->cap <= TM_BIG_MIN);
		CHECK_INT(l->n_runs, 1);
		tm_oplog_finish(l);
	}
	tm_oplog_spill_after = keep;
	CHECK_INT(a.x->n_spilled, 0);
	CHECK_INT(b.x->n_spilled, 1);
	CHECK(inline_is(&b, a.bytes, a.len));
	uint64_t n = 0;
	same_ops(&a, &b, false, &n);
	CHECK_INT(n, TM_RUN_MAX + 1);
	tm_oplog_fini(&a);
	tm_oplog_fini(&b);
}

/* A CONVERT run whose deltas take every varint length, 1 to 10 bytes:
 * INT64_MIN after 0 (10 bytes), then steps of 2^k (k = 0..62: zigzag
 * values of 2 to 64 bits), then steps of 1 past a skip entry: the log
 * grows as they are written (oplog.c encode_deltas), and the run reads
 * back sorted, appended in order or backwards (sorted at its flush). */
static void
convert_deltas_all_sizes(void)
{
	enum { N = 64 + TM_RUN_SKIP + 3 };
	static int64_t want[N];
	want[0] = INT64_MIN;
	for (int i = 1; i < N; i++)
		want[i] = (int64_t)((uint64_t)want[i - 1] + (i < 64 ? 1ULL << (i - 1) : 1));
	for (int backwards = 0; backwards < 2; backwards++) {
		struct tm_oplog l;
		tm_oplog_init(&l);
		l.use_runs = true;
		tm_oplog_push(&l, 0, 0, 0, 0, 0);
		for (int i = 0; i < N; i++)
			tm_oplog_convert(&l, 0, 6, 0, want[backwards ? N - 1 - i : i], TM_CONV_FAIL_DROP, 0,
					 (uint64_t)i);
		tm_oplog_finish(&l);
		CHECK_INT(l.n_runs, 1);
		struct tm_opiter it;
		struct tm_op op;
		tm_opiter_init(&it, &l);
		int k = 0;
		bool ok = true;
		while (tm_opiter_next(&it, &op))
			if (op.kind == TM_OP_CONVERT)
				ok &= k < N && op.ts == want[k++];
		tm_opiter_fini(&it);
		CHECK(ok);
		CHECK_INT(k, N);
		tm_oplog_fini(&l);
	}
}

/* tm_ol_sorted against the loop it replaced (stopping at the first
 * descent): arrays of 0 to 40 values, in order with ties and extremes,
 * then with one descent at each place, the unrolled steps' and the
 * tail's. */
static bool
sorted_ref(const int64_t *v, size_t n)
{
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++)
		sorted = v[i - 1] <= v[i];
	return sorted;
}

static void
sorted_check_same(void)
{
	int64_t v[40];
	uint64_t cases = 0, agree = 0;
	for (size_t n = 0; n <= 40; n++) {
		for (size_t i = 0; i < n; i++)
			v[i] = i == 0 ? INT64_MIN + 1 : i + 1 == n ? INT64_MAX : (int64_t)(i / 3) - 5;
		cases++;
		agree += tm_ol_sorted(v, n) == sorted_ref(v, n) && tm_ol_sorted(v, n);
		for (size_t k = 1; k < n; k++) {
			int64_t keep = v[k];
			v[k] = v[k - 1] - 1; /* the one descent, at k */
			cases++;
			agree += tm_ol_sorted(v, n) == sorted_ref(v, n) && !tm_ol_sorted(v, n);
			v[k] = keep;
		}
	}
	CHECK_INT(agree, cases);
	CHECK(cases > 800);
}

/* The logs above must be the bytes the encoding before pkt_add wrote
 * (values staged, encoded at the run's end; this test's oracle until it
 * was removed): their inline bytes' FNV-1a hash, length, ops and runs as
 * both wrote them.  A change of the encoding (TM_OPLOG_ENCODING)
 * changes them: TM_TEST_PRINT=1 prints the new ones.  The spilled variant
 * also reads back as the same log kept in memory, op by op. */
static void
pkt_runs_stored_bytes(void)
{
	static const struct {
		uint64_t hash;
		size_t len;
		uint64_t n_ops, n_runs, n_run_elems;
	} want[6] = {
		{0x2fc479354074ef92ULL, 94627, 79993, 424, 39885},
		{0xc0c35b9afc114480ULL, 144452, 79983, 2058, 39369},
		{0xe9dcad34d1b2e316ULL, 149794, 79985, 866, 39859},
		{0x66a7fe1661a59e84ULL, 1118511, 1054544, 1081, 527021},
		{0xe1edf0baf06c8bd4ULL, 1124128, 1054546, 1102, 527022},
		{0x992c0e447f4845a2ULL, 1119217, 1054554, 1098, 527035},
	};
	size_t keep = tm_oplog_spill_after;
	for (int variant = 0; variant < 6 && !t_failed_; variant++) {
		struct tm_oplog l, m;
		tm_oplog_spill_after = variant == 5 ? 0 : SIZE_MAX;
		pkt_log(variant, &l);
		tm_oplog_spill_after = SIZE_MAX;
		if (variant == 5)
			pkt_log(variant, &m);
		tm_oplog_spill_after = keep;
		struct tm_buf w;
		tm_buf_init(&w);
		tm_oplog_write_inline(&l, put_buf, &w);
		uint64_t h = fnv1a(w.data, w.len);
		if (getenv("TM_TEST_PRINT"))
			printf("\t\t{0x%016" PRIx64 "ULL, %zu, %" PRIu64 ", %" PRIu64 ", %" PRIu64 "},\n", h,
			       w.len, l.n_ops, l.n_runs, l.n_run_elems);
		CHECK(h == want[variant].hash);
		CHECK_INT(w.len, want[variant].len);
		CHECK_INT(l.n_ops, want[variant].n_ops);
		CHECK_INT(l.n_runs, want[variant].n_runs);
		CHECK_INT(l.n_run_elems, want[variant].n_run_elems);
		CHECK(variant != 5 || l.x->n_spilled > 0);
		CHECK(variant < 3 || l.n_runs >= 3);
		if (variant != 5) {
			CHECK(l.len == w.len && !memcmp(l.bytes, w.data, w.len));
		} else {
			CHECK(inline_is(&m, w.data, w.len));
			uint64_t n_raw = 0, n_exp = 0;
			same_ops(&l, &m, true, &n_raw);
			same_ops(&l, &m, false, &n_exp);
			CHECK(n_exp > n_raw);
			tm_oplog_fini(&m);
		}
		tm_buf_fini(&w);
		tm_oplog_fini(&l);
	}
}

/* A log exercising every run kind's head (PACKET, CONVERT, ARRAY, runs of
 * one, machine and clock keys, push flags, ARRAY lanes), spilling off: its
 * bytes' FNV-1a hash and length. */
static uint64_t
run_key_log(int variant, size_t *len, uint64_t *n_ops)
{
	struct tm_oplog l;
	tm_oplog_init(&l);
	l.use_runs = true;
	uint64_t x = 0x9E3779B97F4A7C15ULL * (uint64_t)(variant + 1);
	int64_t ts = 5000;
	static int64_t arr[64];
	for (uint32_t i = 0; i < 60000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned r = (unsigned)(x >> 54); /* 0..1023 */
		if ((i / 900) % 3 != 2)
			r = 1023 - (unsigned)(variant * 300 + (i / 2700) % 4 * 40) % 1024;
		ts += (int64_t)(x % 1500) - (r < 30 ? 2000 : 0);
		uint32_t machine = r % 97 == 1 ? 3 : 0;
		uint32_t clock = r % 89 == 2 ? 6 : 0;
		uint32_t pf = r % 83 == 4 ? 0 : TM_PUSH_TRACK_EVENT;
		uint64_t off = (uint64_t)i * 37;
		if (r < 300 && r % 5 == 0) {
			tm_oplog_convert(&l, machine, clock, 0, ts,
					 r % 2 ? TM_CONV_FAIL_DROP : TM_CONV_NO_PUSH, 0, off);
		} else if (r < 300 && r % 5 == 1) {
			uint32_t m = 1 + (uint32_t)(x % 60);
			for (uint32_t k = 0; k < m; k++)
				arr[k] = ts + (int64_t)k * 10 - (int64_t)(x >> 60) * (r % 3 == 0);
			struct tm_op op = {.kind = TM_OP_CONVERT_ARRAY, .machine = machine,
					   .clock = clock ? clock : 6, .n = m, .tss = arr, .offset = off,
					   .flags = r % 4 == 1 ? TM_CONV_FAIL_DROP : 0};
			tm_oplog_add(&l, &op);
		} else if (r < 300 && r % 5 == 2) {
			tm_oplog_stat(&l, machine, TM_STAT_NEG_DROPPED, 1);
		} else if (r < 600) {
			tm_oplog_packet_push(&l, machine, clock, 1, ts, pf, off);
		} else {
			tm_oplog_packet_push_i(&l, machine, clock, 1, ts, pf, off);
		}
	}
	tm_oplog_finish(&l);
	uint64_t h = fnv1a(l.bytes, l.len);
	*len = l.len;
	*n_ops = l.n_ops;
	tm_oplog_fini(&l);
	return h;
}

/* The open run's key became a struct tm_run_key (32 bytes) instead of a
 * whole struct tm_op: the bytes written must not change.  The hashes are
 * those of the logs above written by cc13fc7 (the key a struct tm_op). */
static void
run_key_same_bytes(void)
{
	static const struct {
		uint64_t hash;
		size_t len;
		uint64_t n_ops;
	} want[4] = {
		{0x0f9999fdcd808a0fULL, 253988, 116588},
		{0x8600a71df3d699b1ULL, 255051, 116507},
		{0x13948d0221edda8eULL, 259840, 116431},
		{0x70ae2fa108b053d9ULL, 339178, 116504},
	};
	size_t keep = tm_oplog_spill_after;
	tm_oplog_spill_after = SIZE_MAX;
	for (int v = 0; v < 4; v++) {
		size_t len;
		uint64_t n_ops;
		uint64_t h = run_key_log(v, &len, &n_ops);
		CHECK_INT(len, want[v].len);
		CHECK_INT(n_ops, want[v].n_ops);
		CHECK(h == want[v].hash);
	}
	tm_oplog_spill_after = keep;
}

/* struct tm_oplog is kept per member for the session (inside struct
 * tm_scan: an archive of 10,000s of members holds as many): 96 bytes on
 * LP64 since what only appending uses is a block of its own (struct
 * tm_oplog_w, freed by tm_oplog_finish) and what few logs use another
 * (struct tm_oplog_x: details, spilled extents); new fields go in its
 * holes.  A log without details or spilled runs has no side block. */
static void
oplog_struct_size(void)
{
#if UINTPTR_MAX == UINT64_MAX
	if (sizeof(struct tm_oplog) > 96)
		CHECK_INT(sizeof(struct tm_oplog), 96);
	if (sizeof(struct tm_scan) > 200)
		CHECK_INT(sizeof(struct tm_scan), 200);
#endif
	struct tm_oplog l;
	tm_oplog_init(&l);
	l.use_runs = true;
	for (int i = 0; i < 1000; i++)
		tm_oplog_packet_push(&l, 0, 6, 1, 1000 + i, 0, (uint64_t)i * 10);
	tm_oplog_stat(&l, 0, 0, 1);
	tm_oplog_finish(&l);
	CHECK(l.x == &tm_oplog_x_none);
	CHECK_INT(l.x->n_details, 0);
	tm_oplog_fini(&l);
	tm_oplog_init(&l);
	CHECK_INT(tm_oplog_detail(&l, "a", 1, 'B', 1, -1), 1);
	CHECK(l.x != &tm_oplog_x_none);
	CHECK_STR(tm_oplog_detail_name(&l, &l.x->details[0]), "a");
	tm_oplog_finish(&l);
	tm_oplog_fini(&l);
	CHECK(l.x == &tm_oplog_x_none);
}

/* A finished log holds no appending state (tm_oplog_w_none, read only),
 * and appending to it again takes a block of its own: every event is
 * there, in order. */
static void
finished_log_drops_writer(void)
{
	struct tm_oplog a;
	tm_oplog_init(&a);
	a.use_runs = true;
	CHECK(a.w == &tm_oplog_w_none);
	for (int i = 0; i < 3000; i++) {
		tm_oplog_packet_push_i(&a, 0, 0, 1, 1000 + i * 7, TM_PUSH_TRACK_EVENT, (uint64_t)i);
		if (i % 1000 == 999) {
			CHECK(a.w != &tm_oplog_w_none);
			tm_oplog_finish(&a);
			CHECK(a.w == &tm_oplog_w_none);
		}
	}
	tm_oplog_convert_i(&a, 0, 0, 0, 5, TM_CONV_FAIL_DROP, 0, 3000);
	tm_oplog_finish(&a);
	CHECK(a.w == &tm_oplog_w_none);
	CHECK_INT(a.n_ops, 6001);
	struct tm_opiter it;
	struct tm_op op;
	tm_opiter_init(&it, &a);
	int pushes = 0;
	while (tm_opiter_next(&it, &op) && !t_failed_) {
		if (op.kind == TM_OP_PUSH) {
			CHECK_INT(op.ts, 1000 + pushes * 7);
			pushes++;
		}
	}
	CHECK_INT(pushes, 3000);
	CHECK_INT(op.kind, TM_OP_CONVERT);
	tm_opiter_fini(&it);
	tm_oplog_fini(&a);
}

/* tm_ol_sort: staged values of interleaved sources (each ascending across
 * its stretches, as ftrace CPUs across their bundles), of more sources
 * than it chains, and of none in order, come out as qsort sorts them. */
static void
sort_staged_chains(void)
{
	uint64_t x = 88172645463325252ULL;
	struct tm_ol_sort_buf sb = {0};
	for (int round = 0; round < 60; round++) {
		size_t srcs = round < 20 ? 1 + (size_t)round % 9 : round < 40 ? 70 + (size_t)round : 3;
		size_t n = 1 + (size_t)(x % 20000);
		int64_t *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w), *t = malloc(n * sizeof *t);
		int64_t at[200] = {0};
		for (size_t i = 0; i < n;) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			size_t c = (size_t)(x % srcs), len = 1 + (size_t)(x >> 20) % 300;
			for (; len-- && i < n; i++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				at[c] += round >= 40 ? -(int64_t)(x % 50) : (int64_t)(x % 50);
				v[i] = w[i] = at[c];
			}
		}
		tm_ol_sort(v, n, t, &sb);
		qsort(w, n, sizeof *w, cmp_i64);
		CHECK(memcmp(v, w, n * sizeof *v) == 0);
		free(v);
		free(w);
		free(t);
	}
	free(sb.st);
}

int
main(void)
{
	RUN(roundtrip_all_kinds);
	RUN(sort_staged_chains);
	RUN(compact_events_are_small);
	RUN(details_keep_names);
	RUN(packet_push_same_bytes);
	RUN(convert_i_same_bytes);
	RUN(array_runs);
	RUN(array_runs_overlap);
	RUN(array_then_convert);
	RUN(spill_thresholds);
	RUN(spilled_runs);
	RUN(spill_holes);
	RUN(spill_small_logs);
	RUN(run_deltas_all_sizes);
	RUN(big_log_mapped);
	RUN(big_array_lanes);
	RUN(uneven_lanes);
	RUN(full_run_reserved_exactly);
	RUN(convert_deltas_all_sizes);
	RUN(sorted_check_same);
	RUN(pkt_runs_stored_bytes);
	RUN(run_key_same_bytes);
	RUN(oplog_struct_size);
	RUN(finished_log_drops_writer);
	return 0;
}

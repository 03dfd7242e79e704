/* SPDX-License-Identifier: MIT */
/*
 * The clock graph (engine/clockgraph.c) against the pairwise reference it
 * replaced (clockgraph_ref.h, trace_processor's edge set written out): the
 * same snapshot results and messages, the same conversions (paths, values,
 * failure kinds, incremental state) and the same pieces on random graphs
 * with non-monotonic clocks, failed snapshots, unit and incremental clashes
 * and series-key collisions; and bounded work on one snapshot of 16,001
 * clocks and on 1,000 snapshots of 100 clocks, which the pairwise form
 * turns into 256 M and 10 M edges.
 */
#include <stdlib.h>

#include "clockgraph.h"
#include "clockgraph_ref.h"
#include "t.h"

static uint64_t rng_state;

static uint64_t
rnd(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static uint32_t
pick(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

struct pool_clock {
	struct tm_clockid id;
	uint64_t unit;
	bool incr;
	int64_t ts;
};

static bool
same_pieces(const struct tm_piece *a, size_t na, const struct tm_piece *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].a != b[i].a || a[i].b != b[i].b || a[i].off != b[i].off)
			return false;
	return true;
}

/* One random history, applied to both graphs; returns false at the first
 * difference (described in why). */
static bool
one_run(uint64_t seed, char *why, size_t why_cap, uint64_t *n_conv_ok)
{
	rng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
	static const uint32_t clocks[] = {1, 3, 5, 6, 11, 64, 65, 200};
	struct pool_clock pool[10];
	size_t k = 3 + pick(6);
	for (size_t i = 0; i < k; i++) {
		struct tm_clockid id;
		bool dup;
		do {
			id.clock = clocks[pick(8)];
			id.seq = id.clock >= 64 && id.clock < 128 ? 1 + pick(2) : 0;
			id.tf = pick(3) == 0 ? 2 : 0;
			id.machine = pick(4) == 0 ? 1 : 0;
			dup = false;
			for (size_t j = 0; j < i; j++)
				dup |= tm_clockid_eq(pool[j].id, id);
		} while (dup);
		pool[i].id = id;
		pool[i].unit = pick(6) == 0 ? 1000 : 1;
		pool[i].incr = id.seq && pick(4) == 0;
		pool[i].ts = (int64_t)pick(5000);
	}
	struct tm_graph *g = tm_graph_new();
	struct ref_graph *r = ref_graph_new();
	struct tm_clockid tt = pool[pick((uint32_t)k)].id;
	struct tm_piece *pa = NULL, *pb = NULL;
	size_t na = 0, ca = 0, nb = 0, cb = 0;
	bool same = true;
	size_t n_snaps = 2 + pick(10);
	for (size_t s = 0; s < n_snaps && same; s++) {
		struct tm_graph_clock gc[6];
		size_t n = 1 + pick(k < 4 ? (uint32_t)k : 4), taken = 0;
		bool used[10] = {0};
		while (taken < n) {
			size_t i = pick((uint32_t)k);
			if (used[i] && pick(30) != 0)
				continue; /* rarely: the same clock twice */
			used[i] = true;
			pool[i].ts += pick(8) == 0 ? -(int64_t)pick(400) : (int64_t)pick(3000);
			gc[taken++] = (struct tm_graph_clock){
				pool[i].id, pool[i].ts, pick(40) ? pool[i].unit : 7,
				pick(40) ? pool[i].incr : !pool[i].incr};
		}
		if (pick(10) == 0)
			tt = pool[pick((uint32_t)k)].id;
		char ma[512] = "", mb[512] = "";
		bool oa, ob;
		if (pick(6) == 0) {
			uint32_t h = 1 + pick(3); /* collisions between different lists */
			oa = tm_graph_add_snapshot_hashed(g, gc, n, h, tt, ma, sizeof ma);
			ob = ref_graph_add_snapshot_hashed(r, gc, n, h, tt, mb, sizeof mb);
		} else {
			oa = tm_graph_add_snapshot(g, gc, n, tt, ma, sizeof ma);
			ob = ref_graph_add_snapshot(r, gc, n, tt, mb, sizeof mb);
		}
		if (oa != ob || (!oa && strcmp(ma, mb) != 0)) {
			snprintf(why, why_cap, "seed %" PRIu64 " snapshot %zu: %d/%d '%.200s' '%.200s'", seed, s,
				 oa, ob, ma, mb);
			same = false;
			break;
		}
		for (int c = pick(6); c > 0 && same; c--) {
			struct tm_clockid a = pool[pick((uint32_t)k)].id, b = pool[pick((uint32_t)k)].id;
			if (pick(12) == 0)
				a.clock = 4; /* never in a snapshot */
			int64_t ts = (int64_t)pick(20000) - 2000, va = 0, vb = 0;
			bool probe = pick(2);
			enum tm_conv_result ra = tm_graph_convert(g, a, ts, b, probe, &va);
			enum tm_conv_result rb = ref_graph_convert(r, a, ts, b, probe, &vb);
			if (ra != rb || (ra == TM_CONV_OK && va != vb)) {
				snprintf(why, why_cap,
					 "seed %" PRIu64 " convert %u->%u at %" PRId64 ": %d %" PRId64
					 " / %d %" PRId64,
					 seed, a.clock, b.clock, ts, ra, va, rb, vb);
				same = false;
				break;
			}
			*n_conv_ok += ra == TM_CONV_OK;
			if (tm_graph_knows(g, a) != ref_graph_knows(r, a) ||
			    tm_graph_reaches(g, a, b) != ref_graph_reaches(r, a, b)) {
				snprintf(why, why_cap, "seed %" PRIu64 " knows/reaches", seed);
				same = false;
				break;
			}
			int64_t lo = (int64_t)pick(10000) - 1000, hi = lo + (int64_t)pick(20000);
			bool pa_ok = tm_graph_pieces(g, a, b, lo, hi, &pa, &na, &ca);
			bool pb_ok = ref_graph_pieces(r, a, b, lo, hi, &pb, &nb, &cb);
			if (pa_ok != pb_ok || (pa_ok && !same_pieces(pa, na, pb, nb))) {
				snprintf(why, why_cap, "seed %" PRIu64 " pieces %u->%u [%" PRId64
					 ",%" PRId64 "]: %d/%d %zu/%zu",
					 seed, a.clock, b.clock, lo, hi, pa_ok, pb_ok, na, nb);
				same = false;
			}
		}
	}
	if (same && tm_graph_n_snapshots(g) != ref_graph_n_snapshots(r)) {
		snprintf(why, why_cap, "seed %" PRIu64 " snapshot count", seed);
		same = false;
	}
	free(pa);
	free(pb);
	tm_graph_free(g);
	ref_graph_free(r);
	return same;
}

static void
t_random_graphs_match_pairwise_reference(void)
{
	char why[1024] = "";
	uint64_t ok = 0;
	for (uint64_t seed = 1; seed <= 20000; seed++)
		if (!one_run(seed, why, sizeof why, &ok)) {
			CHECK_STR(why, "");
			return;
		}
	CHECK(ok > 20000); /* the histories do reach across the graph */
}

/* Paths of every length (1-4 hops and "none at 5") through a chain, with a
 * detour that is shorter but starts at a larger ClockId, and a tie broken by
 * ClockId then hash: the same as the reference. */
static void
t_chain_and_ties_match_reference(void)
{
	struct tm_graph *g = tm_graph_new();
	struct ref_graph *r = ref_graph_new();
	struct tm_clockid c[8];
	for (int i = 0; i < 8; i++)
		c[i] = (struct tm_clockid){(uint32_t)(1 + i), 0, 0, 0};
	char m[256];
	for (int i = 0; i + 1 < 6; i++) {
		struct tm_graph_clock gc[2] = {{c[i], 1000 * i, 1, false}, {c[i + 1], 7 * i, 1, false}};
		CHECK(tm_graph_add_snapshot(g, gc, 2, c[5], m, sizeof m));
		CHECK(ref_graph_add_snapshot(r, gc, 2, c[5], m, sizeof m));
	}
	/* two routes 1 -> 8 of equal length: via 7 and via 2 */
	struct tm_graph_clock x1[3] = {{c[0], 5, 1, false}, {c[6], 50, 1, false}, {c[7], 500, 1, false}};
	CHECK(tm_graph_add_snapshot(g, x1, 3, c[5], m, sizeof m));
	CHECK(ref_graph_add_snapshot(r, x1, 3, c[5], m, sizeof m));
	struct tm_graph_clock x2[2] = {{c[7], 9, 1, false}, {c[1], 90, 1, false}};
	CHECK(tm_graph_add_snapshot(g, x2, 2, c[5], m, sizeof m));
	CHECK(ref_graph_add_snapshot(r, x2, 2, c[5], m, sizeof m));
	for (int a = 0; a < 8; a++)
		for (int b = 0; b < 8; b++)
			for (int64_t ts = -10; ts < 6000; ts += 997) {
				int64_t va = 0, vb = 0;
				enum tm_conv_result ra = tm_graph_convert(g, c[a], ts, c[b], false, &va);
				enum tm_conv_result rb = ref_graph_convert(r, c[a], ts, c[b], false, &vb);
				CHECK_INT(ra, rb);
				CHECK_INT(va, vb);
			}
	/* five hops: no path */
	struct tm_graph *g2 = tm_graph_new();
	for (int i = 0; i + 1 < 6; i++) {
		struct tm_graph_clock gc[2] = {{c[i], 0, 1, false}, {c[i + 1], 1, 1, false}};
		CHECK(tm_graph_add_snapshot(g2, gc, 2, c[0], m, sizeof m));
	}
	int64_t v;
	CHECK_INT(tm_graph_convert(g2, c[0], 0, c[4], false, &v), TM_CONV_OK);
	CHECK_INT(v, 4);
	CHECK_INT(tm_graph_convert(g2, c[0], 0, c[5], false, &v), TM_CONV_NO_PATH);
	tm_graph_free(g2);
	tm_graph_free(g);
	ref_graph_free(r);
}

/* A hostile input: one ClockSnapshot of BOOTTIME and 16,000 clocks (64-127 on
 * sequence 1, then machine-global custom ids), clock i at 7 * i. */
static void
t_snapshot_16000_clocks_linear(void)
{
	size_t n = 16001;
	struct tm_graph_clock *gc = calloc(n, sizeof *gc);
	gc[0] = (struct tm_graph_clock){{6, 0, 0, 0}, 1000, 1, false};
	for (size_t i = 1; i < n; i++) {
		uint32_t id = (uint32_t)(63 + i);
		bool seq = id < 128;
		gc[i] = (struct tm_graph_clock){{id, seq ? 1 : 0, seq ? 1 : 0, 0}, 7 * (int64_t)(i - 1), 1,
						false};
	}
	struct tm_clockid boot = {6, 0, 0, 0};
	struct tm_graph *g = tm_graph_new();
	char m[256];
	CHECK(tm_graph_add_snapshot(g, gc, n, boot, m, sizeof m));
	int64_t v = 0;
	/* every clock one hop from BOOTTIME, and both ways */
	for (size_t i = 1; i < n; i += 97) {
		CHECK_INT(tm_graph_convert(g, gc[i].id, gc[i].ts + 5, boot, false, &v), TM_CONV_OK);
		CHECK_INT(v, 1005);
		CHECK_INT(tm_graph_convert(g, boot, 1010, gc[i].id, false, &v), TM_CONV_OK);
		CHECK_INT(v, gc[i].ts + 10);
	}
	/* between two of them: one hop */
	CHECK_INT(tm_graph_convert(g, gc[n - 1].id, gc[n - 1].ts, gc[1].id, false, &v), TM_CONV_OK);
	CHECK_INT(v, 0);
	/* a clock outside: unknown; a second island: no path, after a full
	 * search of the big group */
	struct tm_clockid lone = {7, 0, 0, 0}, lone2 = {8, 0, 0, 0};
	struct tm_graph_clock isl[2] = {{lone, 1, 1, false}, {lone2, 2, 1, false}};
	CHECK(tm_graph_add_snapshot(g, isl, 2, boot, m, sizeof m));
	CHECK_INT(tm_graph_convert(g, gc[5].id, 0, lone, false, &v), TM_CONV_NO_PATH);
	CHECK_INT(tm_graph_convert(g, lone, 0, gc[5].id, false, &v), TM_CONV_NO_PATH);
	/* the same snapshot again (a periodic ClockSnapshot): one more series
	 * entry per clock, no new edges */
	for (size_t i = 0; i < n; i++)
		gc[i].ts += 100000;
	CHECK(tm_graph_add_snapshot(g, gc, n, boot, m, sizeof m));
	CHECK_INT(tm_graph_convert(g, gc[300].id, gc[300].ts + 1, boot, false, &v), TM_CONV_OK);
	CHECK_INT(v, 101001);
	/* pairwise: 16,001 * 16,000 edges; here a small multiple of the clocks */
	CHECK(tm_graph_work(g) < 40 * n);
	tm_graph_free(g);
	free(gc);
}

/* A hostile input: 1,000 sequences, each a snapshot of BOOTTIME, its 64
 * sequence clocks and 36 custom global clocks shared by all. */
static void
t_1000_snapshots_x100_clocks_linear(void)
{
	struct tm_clockid boot = {6, 0, 0, 0};
	struct tm_graph *g = tm_graph_new();
	struct tm_graph_clock gc[101];
	char m[256];
	int64_t v = 0;
	for (uint32_t seq = 1; seq <= 1000; seq++) {
		gc[0] = (struct tm_graph_clock){boot, 999 + (int64_t)seq, 1, false};
		for (uint32_t i = 0; i < 100; i++) {
			uint32_t id = 64 + i;
			bool sq = id < 128;
			gc[1 + i] = (struct tm_graph_clock){
				{id, sq ? seq : 0, sq ? 1 : 0, 0}, (int64_t)(seq - 1 + 7 * i), 1, false};
		}
		CHECK(tm_graph_add_snapshot(g, gc, 101, boot, m, sizeof m));
		/* each sequence converts its clocks (the cache is per edge set) */
		CHECK_INT(tm_graph_convert(g, gc[3].id, gc[3].ts + 2, boot, false, &v), TM_CONV_OK);
		CHECK_INT(v, 999 + (int64_t)seq + 2);
	}
	CHECK(tm_graph_work(g) < 60 * 101 * 1000);
	tm_graph_free(g);
}

int
main(void)
{
	RUN(t_random_graphs_match_pairwise_reference);
	RUN(t_chain_and_ties_match_reference);
	RUN(t_snapshot_16000_clocks_linear);
	RUN(t_1000_snapshots_x100_clocks_linear);
	return 0;
}

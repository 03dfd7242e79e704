/* SPDX-License-Identifier: MIT */
/* align_scan.c: alignment samples are looked up by their whole identity, so
 * two different events never pair because their hashes meet. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align_scan.h"
#include "scan_helpers.h"
#include "t.h"

static uint64_t
fnv(const char *s)
{
	return tm_fnv1a(TM_FNV_INIT, s, strlen(s));
}

/* Async ids used to be keyed by hash(name) ^ id: "a" with id c and "b"
 * with id c ^ hash(a) ^ hash(b) got one key, so an async start in one file
 * paired with an unrelated end in another. */
static void
t_async_ids_by_identity(void)
{
	struct tm_align_samples *f = tm_al_new(), *r = tm_al_new();
	uint64_t c = 12345;
	tm_al_async(f, "a", 1, c, 100, 0, 0, AL_OUT);
	tm_al_async(r, "b", 1, c ^ fnv("a") ^ fnv("b"), 200, 0, 0, AL_IN);
	CHECK_INT(f->n_ids, 1);
	CHECK(tm_al_find_id(r, &f->ids[0]) == NULL);
	/* the same name and id does pair */
	tm_al_async(r, "a", 1, c, 300, 0, 0, AL_IN);
	const struct al_id *y = tm_al_find_id(r, &f->ids[0]);
	CHECK(y && (y->have & AL_IN) && y->in.ts == 300);
	/* a flow id is not an async id of the same number */
	tm_al_id(r, AL_FLOW, c, 400, 0, 0, AL_IN, AL_NO_OFF);
	tm_al_async(f, "", 0, c, 500, 0, 0, AL_OUT);
	CHECK(tm_al_find_id(r, &f->ids[1]) == NULL);
	tm_al_free(f);
	tm_al_free(r);
}

/* Names are compared as strings; the first AL_OCC occurrences are kept. */
static void
t_names(void)
{
	struct tm_align_samples *a = tm_al_new();
	for (int i = 0; i < (int)AL_OCC + 8; i++)
		tm_al_name(a, "tick", 4, i, 0, 0, AL_INSTANT);
	tm_al_name(a, "ticks", 4, 99, 0, 0, 0); /* only its first 4 bytes: "tick" */
	tm_al_name(a, "tock", 4, 7, 0, 0, 0);
	const struct al_name *x = tm_al_find_name(a, "tick", 4);
	CHECK(x && x->count == AL_OCC + 9 && x->n == AL_OCC && !x->all_instant);
	CHECK(tm_al_find_name(a, "tic", 3) == NULL);
	struct al_occ o[AL_OCC];
	CHECK(tm_al_find_name(a, "tock", 4) && tm_al_occs(tm_al_find_name(a, "tock", 4), o) == 1 &&
	      o[0].ts == 7);
	/* time order (#N): by timestamp, equal ones in file order */
	int64_t ts[] = {30, 10, 20, 10, 5};
	for (int i = 0; i < 5; i++)
		tm_al_name(a, "tap", 3, ts[i], (uint32_t)i, 0, AL_INSTANT);
	x = tm_al_find_name(a, "tap", 3);
	CHECK(x && tm_al_occs_by_time(x, o) == 5 && o[0].ts == 5 && o[1].ts == 10 && o[1].clock == 1 &&
	      o[2].ts == 10 && o[2].clock == 3 && o[3].ts == 20 && o[4].ts == 30);
	CHECK(x && tm_al_occs(x, o) == 5 && o[0].ts == 30); /* still in file order */
	CHECK_INT(a->n_names, 3);
	tm_al_free(a);
}

/* Thinning keeps the same ids in every file: a file that saw many ids and
 * one that saw few still agree on the ones both keep. */
static void
t_thinning(void)
{
	struct tm_align_samples *big = tm_al_new(), *small = tm_al_new();
	for (uint64_t i = 0; i < AL_IDS * 3ull; i++)
		tm_al_id(big, AL_FLOW, i, (int64_t)i, 0, 0, AL_OUT, AL_NO_OFF);
	for (uint64_t i = 0; i < 1000; i++)
		tm_al_id(small, AL_FLOW, i, (int64_t)i, 0, 0, AL_IN, AL_NO_OFF);
	CHECK(big->n_ids <= AL_IDS && big->id_mask != 0);
	size_t both = 0;
	for (size_t i = 0; i < small->n_ids; i++) {
		const struct al_id *y = tm_al_find_id(big, &small->ids[i]);
		if (y) {
			both++;
			CHECK(y->have == AL_OUT);
		} else {
			CHECK((small->ids[i].key >> 1) & big->id_mask);
		}
	}
	CHECK(both > 0);
	tm_al_free(big);
	tm_al_free(small);
}

/* Occurrences are kept packed (deltas as varints): every value reads
 * back as it was kept, extremes and AL_NO_OFF included, in the order kept;
 * trimming and growing again changes nothing of what was kept. */
static void
t_occ_packed(void)
{
	static const int64_t tss[] = {0, -1, INT64_MAX, INT64_MIN, 5, 5, 1000000007, -42};
	static const uint64_t offs[] = {AL_NO_OFF, 0, 17, AL_NO_OFF, UINT64_MAX - 1, 3, 1, 1u << 31};
	struct tm_align_samples *a = tm_al_new();
	struct al_occ want[AL_OCC];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (uint32_t k = 0; k < AL_OCC + 5; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int64_t ts = k < 8 ? tss[k] : (int64_t)x;
		uint32_t clock = k % 3 ? 6 : (uint32_t)(x >> 40);
		uint32_t machine = k % 5 ? 0 : UINT32_MAX - k;
		uint64_t off = k < 8 ? offs[k] : x >> (k % 64);
		if (k < AL_OCC)
			want[k] = (struct al_occ){ts, clock, machine, off};
		(void)tm_al_name_occ(a, tm_al_name_entry(a, "n", 1), ts, clock, machine, 0, off);
		if (k == 3)
			tm_al_trim(a);
	}
	tm_al_name(a, "m", 1, 9, 64, 1, AL_INSTANT);
	tm_al_trim(a);
	const struct al_name *e = tm_al_find_name(a, "n", 1);
	struct al_occ got[AL_OCC];
	CHECK(e && e->count == AL_OCC + 5 && tm_al_occs(e, got) == AL_OCC);
	CHECK(e && e->occ_len <= AL_OCC * AL_OCC_MAX);
	for (uint32_t k = 0; e && k < AL_OCC; k++)
		CHECK(got[k].ts == want[k].ts && got[k].clock == want[k].clock &&
		      got[k].machine == want[k].machine && got[k].off == want[k].off);
	e = tm_al_find_name(a, "m", 1);
	CHECK(e && tm_al_occs(e, got) == 1 && got[0].ts == 9 && got[0].clock == 64 &&
	      got[0].machine == 1 && e->all_instant);
	CHECK_INT(a->cap_names, 2);
	tm_al_free(a);
}

/* An occurrence on the previous one's clock and machine, a few us and
 * bytes after it, packs into 3 bytes (a member keeps AL_OCC of each name:
 * 5 bytes each with clock and machine written every time). */
static void
t_occ_same_clock_small(void)
{
	struct tm_align_samples *a = tm_al_new();
	struct al_name *e = tm_al_name_entry(a, "slice", 5);
	for (uint32_t k = 0; e && k < AL_OCC; k++)
		tm_al_name_keep(e, 1769999923 + 2000 * (int64_t)k, 6, 0, 24 + 40 * k);
	CHECK(e && e->n == AL_OCC && e->occ_len <= 10 + 3 * (AL_OCC - 1));
	struct al_occ got[AL_OCC];
	CHECK(e && tm_al_occs(e, got) == AL_OCC && got[AL_OCC - 1].clock == 6 &&
	      got[AL_OCC - 1].off == 24 + 40 * (AL_OCC - 1));
	tm_al_free(a);
}

/* Differential: tm_al_trim packs a file of few names in one block; keeps
 * and names added after it (moving them out again), and trims between
 * them, leave the same names, counts and packed occurrences as a twin
 * never trimmed, up to and past AL_NAMES_LINEAR names (no packing then). */
static void
t_trim_packed_same(void)
{
	struct tm_align_samples *m[2] = {tm_al_new(), tm_al_new()};
	uint64_t x = 0x853c49e6748fea9bULL;
	char name[12];
	for (uint32_t k = 0; k < 4000; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		unsigned nn = k < 1500 ? 1 : k < 2500 ? AL_NAMES_LINEAR : 3 * AL_NAMES_LINEAR;
		int nl = snprintf(name, sizeof name, "name%u", (unsigned)(x % nn));
		int64_t ts = (int64_t)(x >> 20) + k;
		uint32_t clock = k % 7 ? 6 : (uint32_t)(x >> 50);
		uint64_t off = k % 5 ? k * 40 : AL_NO_OFF;
		for (int j = 0; j < 2; j++) {
			if (k % 3)
				(void)tm_al_name_add(m[j], name, (size_t)nl, ts, clock, 0, k % 2 ? AL_INSTANT : 0, off);
			else if (tm_al_name_entry(m[j], name, (size_t)nl))
				tm_al_name_keep(tm_al_name_entry(m[j], name, (size_t)nl), ts, clock, 0, off);
		}
		if (k % 97 == 5 || x % 13 == 0)
			tm_al_trim(m[0]);
		if (k % 500 == 499) {
			tm_al_trim(m[0]);
			CHECK_INT(m[0]->names_packed, m[0]->n_names <= AL_NAMES_LINEAR);
		}
		if (k % 500 == 499 || k % 500 == 0) {
			CHECK_INT(m[0]->n_names, m[1]->n_names);
			for (size_t i = 0; i < m[0]->n_names && i < m[1]->n_names; i++) {
				const struct al_name *p = &m[0]->names[i], *q = &m[1]->names[i];
				CHECK(p->len == q->len && memcmp(p->name, q->name, p->len) == 0 &&
				      p->name[p->len] == '\0' && p->count == q->count && p->n == q->n &&
				      p->all_instant == q->all_instant && p->occ_len == q->occ_len &&
				      (!p->occ_len || memcmp(p->occ, q->occ, p->occ_len) == 0));
				CHECK(tm_al_find_name(m[0], q->name, q->len) == p);
			}
		}
	}
	tm_al_free(m[0]);
	tm_al_free(m[1]);
}

/* Differential: tm_al_name_keep_all stores the same packed bytes as
 * tm_al_name_keep of each occurrence in turn, into an empty entry, one
 * holding some, one packed by tm_al_trim, and past AL_OCC. */
static void
t_keep_all_same(void)
{
	static const int64_t tss[] = {0, -1, INT64_MAX, INT64_MIN, 5, 5, 1000000007, -42};
	uint64_t x = 0x9fb21c651e98df25ULL;
	for (int round = 0; round < 40; round++) {
		struct tm_align_samples *m[2] = {tm_al_new(), tm_al_new()};
		uint32_t before = (uint32_t)round % 7, n = (uint32_t)(round * 5) % (AL_OCC + 9);
		struct al_occ o[AL_OCC + 16]; /* before + n <= 6 + AL_OCC + 8 */
		for (uint32_t k = 0; k < before + n; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			o[k] = (struct al_occ){k % 4 == 1 ? tss[x % 8] : (int64_t)(x >> 30),
							   k % 3 ? 6 : (uint32_t)(x >> 40),
							   k % 5 ? 0 : (uint32_t)x,
							   k % 6 ? x >> (k % 64) : AL_NO_OFF};
			if (k < before)
				for (int j = 0; j < 2; j++)
					tm_al_name_keep(tm_al_name_entry(m[j], "n", 1), o[k].ts, o[k].clock,
							o[k].machine, o[k].off);
		}
		if (round % 2)
			for (int j = 0; j < 2; j++)
				tm_al_trim(m[j]);
		struct al_name *p = tm_al_name_entry(m[0], "n", 1), *q = tm_al_name_entry(m[1], "n", 1);
		tm_al_name_keep_all(p, o + before, n);
		for (uint32_t k = 0; k < n; k++)
			tm_al_name_keep(q, o[before + k].ts, o[before + k].clock, o[before + k].machine,
					o[before + k].off);
		CHECK(p->n == q->n && p->n <= AL_OCC && p->occ_len == q->occ_len &&
		      (!p->occ_len || memcmp(p->occ, q->occ, p->occ_len) == 0));
		tm_al_free(m[0]);
		tm_al_free(m[1]);
	}
}

/* Up to AL_NAMES_LINEAR names are searched in turn, more through the
 * map: every name is found before and after the switch, and only its own. */
static void
t_names_linear_then_map(void)
{
	struct tm_align_samples *a = tm_al_new();
	char nm[16];
	for (int i = 0; i < 3 * (int)AL_NAMES_LINEAR; i++) {
		snprintf(nm, sizeof nm, "ev%d", i);
		tm_al_name(a, nm, strlen(nm), i, 0, 0, 0);
		tm_al_name(a, nm, strlen(nm), i + 1, 0, 0, 0);
		CHECK_INT(a->n_names, (size_t)i + 1);
		CHECK_INT(a->name_ix.cap != 0, (size_t)i + 1 > AL_NAMES_LINEAR);
		for (int k = 0; k <= i + 1; k++) {
			snprintf(nm, sizeof nm, "ev%d", k);
			const struct al_name *e = tm_al_find_name(a, nm, strlen(nm));
			CHECK(k <= i ? e == &a->names[k] && e->count == 2 : e == NULL);
		}
	}
	CHECK(tm_al_find_name(a, "ev", 2) == NULL);
	tm_al_free(a);
}

/* New samples kept through c, set up as a scanner's (zeroed, then
 * tm_al_cache_init); c must outlive them. */
static struct tm_align_samples *
al_cached(struct al_name_cache *c, bool no_full)
{
	struct tm_align_samples *a = tm_al_new();
	memset(c, 0, sizeof *c);
	tm_al_cache_init(c, no_full);
	a->cache = c;
	return a;
}

/* Differential: samples kept through a scanner's cache (its last
 * occurrences, struct al_name_cache) hold the same packed bytes as those
 * kept with the walk (no_full: the oracle), for a few names and many,
 * keeps that bypass it (tm_al_name_keep, no cache) and extremes. */
static void
t_occ_prev_same(void)
{
	static const int64_t tss[] = {0, -1, INT64_MAX, INT64_MIN, 5, 5, 1000000007, -42};
	struct al_name_cache c[2];
	struct tm_align_samples *m[2] = {al_cached(&c[0], false), al_cached(&c[1], true)};
	uint64_t x = 0x2545f4914f6cdd1dULL;
	char name[8];
	for (uint32_t k = 0; k < 8000; k++) { /* past AL_OCC of each name */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* 3 names (no collisions), then 21 (slots shared) */
		unsigned nn = k < 600 ? 3 : 21;
		int nl = snprintf(name, sizeof name, "n%u", (unsigned)(x % nn));
		int64_t ts = k % 7 == 3 ? tss[x % 8] : (int64_t)(x >> 3);
		uint32_t clock = k % 3 ? 6 : (uint32_t)(x >> 40);
		uint32_t machine = k % 5 ? 0 : UINT32_MAX - k;
		uint64_t off = k % 11 == 0 ? AL_NO_OFF : x >> (k % 64);
		for (int j = 0; j < 2; j++) {
			if (k % 13 == 0) { /* a keep the cache does not see */
				struct al_name *e = tm_al_name_entry(m[j], name, (size_t)nl);
				if (e)
					tm_al_name_keep(e, ts, clock, machine, off);
			} else {
				(void)tm_al_name_add(m[j], name, (size_t)nl, ts, clock, machine, 0, off);
			}
		}
	}
	CHECK_INT(m[0]->n_names, m[1]->n_names);
	for (size_t i = 0; i < m[0]->n_names && i < m[1]->n_names; i++) {
		const struct al_name *p = &m[0]->names[i], *q = &m[1]->names[i];
		CHECK(p->n == AL_OCC && q->n == AL_OCC && p->occ_len == q->occ_len &&
		      memcmp(p->occ, q->occ, p->occ_len) == 0 && p->count == q->count);
	}
	for (int j = 0; j < 2; j++) {
		tm_al_free(m[j]);
		tm_al_cache_fini(&c[j]);
	}
}

/* Names interleaved (2,000 of them, as make bench's track shape), each
 * kept up to AL_OCC through a scanner's cache: the packed occurrences are
 * walked once a name (its first keep), not on every keep (with a few
 * slots shared by the names they were walked nearly every time: ~250,000
 * walks here). */
static void
t_keep_in_walks_once(void)
{
	struct al_name_cache c;
	struct tm_align_samples *a = al_cached(&c, false);
	char name[16];
	uint64_t w0 = tm_al_keep_walks;
	for (uint32_t k = 0; k < 2000 * 140; k++) {
		int nl = snprintf(name, sizeof name, "n%u", (unsigned)(k * 7919u % 2000));
		(void)tm_al_name_add(a, name, (size_t)nl, (int64_t)k * 10, 6, 0, 0, k);
	}
	uint64_t walks = tm_al_keep_walks - w0;
	CHECK_INT(a->n_names, 2000);
	CHECK(a->names[0].n == AL_OCC);
	CHECK_INT(walks, 2000);
	tm_al_free(a);
	tm_al_cache_fini(&c);
}

/* tm_al_name gives the same samples with no cache, through a scanner's
 * cache (struct al_name_cache, its full name taking the counted shortcut)
 * and through one with no_full: names repeated past their AL_OCC samples,
 * names sharing outer bytes or length, empty and NULL names, instants, and
 * enough names to fill the table (AL_NAMES). */
static void
t_name_cached_same(void)
{
	static const char *pool[] = {"a", "b", "ab", "ba", "tick", "tock", "slice_01", "slice_10",
				     "RenderFrameImpl::didCommitProvisionalLoad",
				     "RenderFrameImpl::didCommitProvisionalLoaD",
				     "RenderFrameImpX::didCommitProvisionalLoad",
				     "0123456789abcdef", "0123456789abcdeF", ""};
	const size_t np = sizeof pool / sizeof *pool;
	uint64_t x = 0x2545f4914f6cdd1dULL;
	for (int t = 0; t < 40 && !t_failed_; t++) {
		struct al_name_cache c[2];
		struct tm_align_samples *v[3] = {tm_al_new(), al_cached(&c[0], false),
						 al_cached(&c[1], true)};
		/* every fourth round also adds more distinct names than fit */
		int nev = t % 4 == 3 ? (int)AL_NAMES + 600 : 3000;
		size_t last = 0;
		bool run_start = true;
		char buf[32];
		for (int e = 0; e < nev; e++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			const char *nm;
			size_t n;
			if (t % 4 == 3 && e % 3 == 0) {
				n = (size_t)snprintf(buf, sizeof buf, "n%d", e);
				nm = buf;
			} else {
				run_start = x % 4 == 0;
				if (run_start) /* runs of one name, and changes */
					last = (size_t)(x >> 8) % np;
				nm = x % 29 == 0 ? NULL : pool[last];
				n = nm ? strlen(nm) : 0;
			}
			/* some names only instants for long after their samples,
			 * then only where a run starts (the lookup's side) */
			unsigned fl = last % 3 == 0 ? (2 * e < nev || run_start ? AL_INSTANT : 0)
				      : (x >> 20) % 3 == 0 ? AL_INSTANT : 0;
			int64_t ts = e * 10 + (int64_t)((x >> 30) % 10);
			for (int k = 0; k < 3; k++)
				tm_al_name(v[k], nm, n, ts, (uint32_t)(x >> 50) % 3, 0, fl);
		}
		CHECK(c[0].full_len != SIZE_MAX && c[1].full_len == SIZE_MAX);
		for (int k = 1; k < 3; k++)
			CHECK(same_align(v[0], v[k]));
		for (int k = 0; k < 3; k++)
			tm_al_free(v[k]);
		tm_al_cache_fini(&c[0]);
		tm_al_cache_fini(&c[1]);
	}
}

int
main(void)
{
	RUN(t_occ_packed);
	RUN(t_occ_same_clock_small);
	RUN(t_trim_packed_same);
	RUN(t_keep_all_same);
	RUN(t_occ_prev_same);
	RUN(t_keep_in_walks_once);
	RUN(t_names_linear_then_map);
	RUN(t_async_ids_by_identity);
	RUN(t_names);
	RUN(t_thinning);
	RUN(t_name_cached_same);
	return 0;
}

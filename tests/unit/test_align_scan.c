/* SPDX-License-Identifier: MIT */
/* align_scan.c: alignment samples are looked up by their whole identity, so
 * two different events never pair because their hashes meet. */
#include <stdlib.h>

#include "align_scan.h"
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
	tm_al_id(r, AL_FLOW, c, 400, 0, 0, AL_IN);
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
	for (int i = 0; i < 40; i++)
		tm_al_name(a, "tick", 4, i, 0, 0, AL_INSTANT);
	tm_al_name(a, "ticks", 4, 99, 0, 0, 0); /* only its first 4 bytes: "tick" */
	tm_al_name(a, "tock", 4, 7, 0, 0, 0);
	const struct al_name *x = tm_al_find_name(a, "tick", 4);
	CHECK(x && x->count == 41 && x->n == AL_OCC && !x->all_instant);
	CHECK(tm_al_find_name(a, "tic", 3) == NULL);
	CHECK(tm_al_find_name(a, "tock", 4) && tm_al_find_name(a, "tock", 4)->occ[0].ts == 7);
	CHECK_INT(a->n_names, 2);
	tm_al_free(a);
}

/* Thinning keeps the same ids in every file: a file that saw many ids and
 * one that saw few still agree on the ones both keep. */
static void
t_thinning(void)
{
	struct tm_align_samples *big = tm_al_new(), *small = tm_al_new();
	for (uint64_t i = 0; i < AL_IDS * 3ull; i++)
		tm_al_id(big, AL_FLOW, i, (int64_t)i, 0, 0, AL_OUT);
	for (uint64_t i = 0; i < 1000; i++)
		tm_al_id(small, AL_FLOW, i, (int64_t)i, 0, 0, AL_IN);
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

int
main(void)
{
	RUN(t_async_ids_by_identity);
	RUN(t_names);
	RUN(t_thinning);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* Big buffers (engine/internal.h): one rule says what a buffer is, from its
 * capacity (a mapping from TM_MAP_MIN bytes, else a malloc block), whichever
 * family grew it; each family is grown across every threshold (TM_MAP_MIN,
 * TM_STAGE_MIN, TM_BIG_MIN), moved, shrunk back across them and freed, its
 * bytes checked at every step and what it is checked against the rule (in
 * release builds: under a sanitizer every buffer is a malloc block). */
#define _GNU_SOURCE
#include "internal.h"
#include "t.h"

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SAN 1
#else
#define SAN 0
#endif

#define HUGE ((size_t)2 << 20)

static size_t
pg(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

/* Every page of [p, p + n) is mapped (mincore fails with ENOMEM on a hole). */
static bool
all_mapped(void *p, size_t n)
{
	static unsigned char vec[(64u << 20) / 4096];
	return n / 4096 <= sizeof vec && mincore(p, n, vec) == 0;
}

/* p, of cap items of elem bytes, is what the rule says it is: a malloc
 * block holding them, or a mapping of exactly pg(cap * elem) bytes from p
 * (huge-page aligned when huge_min says so); its bytes are pattern[0..n). */
static void
check_buf(uint8_t *p, size_t cap, size_t elem, size_t n, size_t huge_min, unsigned seed)
{
	size_t b = cap * elem;
	CHECK(cap >= n);
	bool ok = true;
	for (size_t i = 0; i < n * elem; i++)
		ok &= p[i] == (uint8_t)(i * 7 + i / 4093 + seed);
	CHECK(ok);
	if (SAN || !b)
		return;
	if (b < TM_MAP_MIN) {
		CHECK(malloc_usable_size(p) >= b);
	} else {
		CHECK(((uintptr_t)p & 4095) == 0);
		CHECK(all_mapped(p, pg(b)));
		/* the capacity is the whole mapping */
		CHECK(pg(b) - b < elem);
		if (pg(b) >= huge_min)
			CHECK(((uintptr_t)p & (HUGE - 1)) == 0 && pg(b) % HUGE == 0);
	}
}

static void
fill(uint8_t *p, size_t from, size_t to, size_t elem, unsigned seed)
{
	for (size_t i = from * elem; i < to * elem; i++)
		p[i] = (uint8_t)(i * 7 + i / 4093 + seed);
}

/* After tm_big_free: a mapping's pages are all gone (a tail left mapped
 * would be a leak; free() of a mapping would have crashed). */
static void
check_freed(void *p, size_t cap, size_t elem)
{
	if (SAN || cap * elem < TM_MAP_MIN)
		return;
	unsigned char v;
	for (size_t o = 0; o < pg(cap * elem); o += 4096)
		if (mincore((uint8_t *)p + o, 4096, &v) == 0) {
			CHECK(!"page still mapped after tm_big_free");
			return;
		}
}

/* One family (huge_min) and one element size: grown by doubling and by
 * exact resizes through every threshold up to 8 MiB, moved once (the page
 * after it taken), then shrunk back down across each, then freed. */
static void
family(size_t huge_min, size_t elem)
{
	uint8_t *p = NULL;
	size_t cap = 0, n = 0;
	const size_t sizes[] = {100,
				TM_MAP_MIN - elem,
				TM_MAP_MIN,
				TM_MAP_MIN + 1,
				TM_STAGE_MIN - 1,
				TM_STAGE_MIN + 4096,
				TM_BIG_MIN - 1,
				TM_BIG_MIN,
				TM_BIG_MIN + 1,
				(size_t)5 << 20,
				(size_t)8 << 20};
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		size_t want = sizes[k] / elem;
		void *g = MAP_FAILED;
		if (k == 9 && !SAN && cap * elem >= TM_MAP_MIN) {
			/* growth in place blocked: a page right after the mapping */
			g = mmap(p + pg(cap * elem), 4096, PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			CHECK(g == p + pg(cap * elem));
		}
		uint8_t *was = p;
		if (k % 2)
			tm_big_resize((void **)&p, &cap, want, elem, huge_min);
		else
			tm_big_grow((void **)&p, &cap, want, elem, huge_min);
		if (g != MAP_FAILED) {
			CHECK(p != was);
			munmap(g, 4096);
		}
		n = n < cap ? n : cap;
		check_buf(p, cap, elem, n, huge_min, 1);
		fill(p, n, cap, elem, 1);
		n = cap;
	}
	/* shrinking: keeps the first n items, crosses back down */
	const size_t down[] = {(size_t)6 << 20, (size_t)3 << 20, TM_BIG_MIN - 4096, TM_STAGE_MIN,
			       TM_MAP_MIN + 100, TM_MAP_MIN - 1, 5000, 1};
	for (size_t k = 0; k < sizeof down / sizeof down[0]; k++) {
		size_t want = down[k] / elem ? down[k] / elem : 1;
		uint8_t *old = p;
		size_t old_cap = cap;
		bool old_huge = !SAN && old_cap * elem >= TM_MAP_MIN && pg(old_cap * elem) >= huge_min &&
				!((uintptr_t)old & (HUGE - 1));
		tm_big_resize((void **)&p, &cap, want, elem, huge_min);
		n = want;
		check_buf(p, cap, elem, n, huge_min, 1);
		if (!SAN && old_cap * elem >= TM_MAP_MIN && cap * elem < TM_MAP_MIN)
			check_freed(old, old_cap, elem); /* the old mapping is gone */
		if (old_huge && pg(cap * elem) < huge_min) {
			/* out of huge pages: copied, not cut (a huge page cut
			 * short stays allocated whole until split); one huge
			 * page may be parked for reuse, gone once dropped */
			CHECK(p != old);
			tm_big_drop_parked();
			check_freed(old, old_cap, elem);
		}
	}
	/* grown again from the heap, then freed by the one free */
	tm_big_grow((void **)&p, &cap, ((size_t)3 << 20) / elem, elem, huge_min);
	check_buf(p, cap, elem, n, huge_min, 1);
	fill(p, 0, cap, elem, 2);
	check_buf(p, cap, elem, cap, huge_min, 2);
	tm_big_free(p, cap, elem);
	check_freed(p, cap, elem);
	/* resized to nothing: no buffer */
	p = NULL;
	cap = 0;
	tm_big_resize((void **)&p, &cap, (size_t)1 << 20, elem, huge_min);
	tm_big_resize((void **)&p, &cap, 0, elem, huge_min);
	CHECK(p == NULL && cap == 0);
}

/* the op log's bytes: huge pages from TM_BIG_MIN */
static void
log_family(void)
{
	family(TM_BIG_MIN, 1);
	family(TM_BIG_MIN, 8);
}

/* staging arrays (BIG_XGROW): huge pages from TM_STAGE_MIN */
static void
stage_family(void)
{
	family(TM_STAGE_MIN, 8);
	family(TM_STAGE_MIN, 48); /* an events list's item */
	/* the macro, item by item */
	int64_t *v = NULL;
	size_t cv = 0;
	for (size_t i = 0; i < ((size_t)3 << 20) / 8; i++) {
		BIG_XGROW(v, cv, i + 1);
		v[i] = (int64_t)i;
	}
	bool ok = true;
	for (size_t i = 0; i < ((size_t)3 << 20) / 8; i++)
		ok &= v[i] == (int64_t)i;
	CHECK(ok);
	BIG_FREE(v, cv);
}

/* 4 KiB pages only (huge_min SIZE_MAX) */
static void
map_family(void)
{
	family(SIZE_MAX, 8);
	family(SIZE_MAX, 24);
	int64_t *v = NULL;
	size_t cv = 0;
	tm_big_grow((void **)&v, &cv, (TM_MAP_MIN / 8) * 4, sizeof *v, SIZE_MAX);
	CHECK(SAN || ((uintptr_t)v & 4095) == 0);
	v[cv - 1] = 1;
	BIG_FREE(v, cv);
}

/* One buffer grown by each family in turn and freed by the one free:
 * whichever grew it last, what it is follows from its capacity. */
static void
families_mixed(void)
{
	const size_t fam[3] = {TM_BIG_MIN, TM_STAGE_MIN, SIZE_MAX};
	for (int first = 0; first < 3; first++) {
		uint8_t *p = NULL;
		size_t cap = 0, n = 0;
		for (int step = 0; step < 9; step++) {
			size_t h = fam[(first + step) % 3];
			size_t want = (size_t)4096 << step; /* 4 KiB .. 1 MiB */
			if (step == 8)
				want = (size_t)5 << 20;
			tm_big_grow((void **)&p, &cap, want / 8, 8, h);
			check_buf(p, cap, 8, n, h, 3);
			fill(p, n, cap, 8, 3);
			n = cap;
		}
		tm_big_resize((void **)&p, &cap, 1000, 8, fam[first]);
		check_buf(p, cap, 8, 1000, SIZE_MAX, 3);
		tm_big_free(p, cap, 8);
	}
}

/* An op log's shape: reserved past 2 MiB (one huge page), finished
 * smaller (tm_oplog_finish's huge_min).  The huge page let go is parked,
 * mapped whole, and the next buffer to reserve one huge page takes it,
 * with its own bytes copied in; dropped, all of it is unmapped. */
static void
parked_reused(void)
{
	tm_big_drop_parked();
	uint8_t *a = NULL, *b = NULL;
	size_t ca = 0, cb = 0;
	tm_big_resize((void **)&a, &ca, TM_BIG_MIN, 1, TM_BIG_MIN);
	fill(a, 0, ca, 1, 4);
	uint8_t *old_a = a;
	tm_big_resize((void **)&a, &ca, 272 << 10, 1, TM_BIG_MIN / 2);
	check_buf(a, ca, 1, ca, SIZE_MAX, 4);
	CHECK(SAN || (a != old_a && all_mapped(old_a, HUGE)));
	/* b from the heap to one huge page: the parked one */
	tm_big_resize((void **)&b, &cb, 8000, 1, TM_BIG_MIN);
	fill(b, 0, cb, 1, 5);
	tm_big_resize((void **)&b, &cb, TM_BIG_MIN, 1, TM_BIG_MIN);
	CHECK(SAN || b == old_a);
	check_buf(b, cb, 1, 8000, TM_BIG_MIN, 5);
	fill(b, 0, cb, 1, 6);
	check_buf(a, ca, 1, ca, SIZE_MAX, 4);
	/* a spilled log's shape: back to the heap, the huge page parked */
	uint8_t *old_b = b;
	tm_big_resize((void **)&b, &cb, 8000, 1, TM_BIG_MIN / 2);
	check_buf(b, cb, 1, 8000, SIZE_MAX, 6);
	CHECK(SAN || all_mapped(old_b, HUGE));
	tm_big_drop_parked();
	check_freed(old_b, HUGE, 1);
	tm_big_free(a, ca, 1);
	tm_big_free(b, cb, 1);
}

/* Three huge pages let go: two parked, the third unmapped; three taken:
 * the two parked ones to two owners, a fresh one to the third, each
 * holding its own bytes; freed by the one free, each of its true length. */
static void
parked_one_owner(void)
{
	tm_big_drop_parked();
	uint8_t *p[3] = {NULL}, *was[3];
	size_t c[3] = {0};
	for (int i = 0; i < 3; i++) {
		tm_big_resize((void **)&p[i], &c[i], TM_BIG_MIN, 1, TM_BIG_MIN);
		fill(p[i], 0, c[i], 1, 10 + i);
	}
	for (int i = 0; i < 3; i++) {
		was[i] = p[i];
		tm_big_resize((void **)&p[i], &c[i], 200 << 10, 1, TM_BIG_MIN / 2);
		check_buf(p[i], c[i], 1, c[i], SIZE_MAX, 10 + i);
	}
	if (!SAN) {
		CHECK(all_mapped(was[0], HUGE) && all_mapped(was[1], HUGE));
		check_freed(was[2], HUGE, 1);
	}
	uint8_t *q[3] = {NULL};
	size_t cq[3] = {0};
	for (int i = 0; i < 3; i++) {
		tm_big_resize((void **)&q[i], &cq[i], TM_BIG_MIN, 1, TM_BIG_MIN);
		fill(q[i], 0, cq[i], 1, 20 + i);
	}
	CHECK(q[0] != q[1] && q[1] != q[2] && q[0] != q[2]);
	if (!SAN) {
		CHECK((q[0] == was[0] || q[0] == was[1]) && (q[1] == was[0] || q[1] == was[1]));
		CHECK(q[2] != was[0] && q[2] != was[1]);
	}
	for (int i = 0; i < 3; i++) {
		check_buf(q[i], cq[i], 1, cq[i], TM_BIG_MIN, 20 + i);
		check_buf(p[i], c[i], 1, c[i], SIZE_MAX, 10 + i);
	}
	/* freed: the first two parked again, the third unmapped */
	for (int i = 0; i < 3; i++) {
		tm_big_free(q[i], cq[i], 1);
		tm_big_free(p[i], c[i], 1);
	}
	if (!SAN) {
		CHECK(all_mapped(q[0], HUGE) && all_mapped(q[1], HUGE));
		check_freed(q[2], HUGE, 1);
	}
	tm_big_drop_parked();
	for (int i = 0; i < 3; i++)
		check_freed(q[i], cq[i], 1);
}

/* A staging array of one huge page (BIG_XGROW), freed: parked, and the
 * next buffer to reserve one huge page (an op log's bytes) takes it with
 * its own bytes; a buffer of two huge pages, freed, is unmapped. */
static void
freed_parked(void)
{
	tm_big_drop_parked();
	int64_t *v = NULL;
	size_t cv = 0;
	BIG_XGROW(v, cv, TM_STAGE_MIN / 8 + 1);
	CHECK(SAN || cv * 8 == HUGE);
	fill((uint8_t *)v, 0, cv * 8, 1, 30);
	uint8_t *was = (uint8_t *)v;
	BIG_FREE(v, cv);
	CHECK(SAN || all_mapped(was, HUGE));
	uint8_t *b = NULL;
	size_t cb = 0;
	tm_big_resize((void **)&b, &cb, 5000, 1, TM_BIG_MIN);
	fill(b, 0, cb, 1, 31);
	tm_big_resize((void **)&b, &cb, TM_BIG_MIN, 1, TM_BIG_MIN);
	CHECK(SAN || b == was);
	check_buf(b, cb, 1, 5000, TM_BIG_MIN, 31);
	uint8_t *c = NULL;
	size_t cc = 0;
	tm_big_resize((void **)&c, &cc, 2 * TM_BIG_MIN, 1, TM_BIG_MIN);
	fill(c, 0, cc, 1, 32);
	tm_big_free(c, cc, 1);
	check_freed(c, cc, 1);
	tm_big_free(b, cb, 1);
	tm_big_drop_parked();
	check_freed(b, cb, 1);
}

/* Two threads reserving and letting go of huge pages at once: a mapping
 * handed to both would show the other's bytes. */
static void *
park_worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	bool ok = true;
	for (int it = 0; it < 200 && ok; it++) {
		uint8_t *p = NULL;
		size_t cap = 0;
		unsigned s = seed + 2 * (unsigned)it;
		tm_big_resize((void **)&p, &cap, TM_BIG_MIN, 1, TM_BIG_MIN);
		for (size_t i = 0; i < cap; i += 512)
			p[i] = (uint8_t)(i * 7 + i / 4093 + s);
		sched_yield();
		for (size_t i = 0; i < cap; i += 512)
			ok &= p[i] == (uint8_t)(i * 7 + i / 4093 + s);
		tm_big_resize((void **)&p, &cap, it % 2 ? 100000 : (size_t)(200 << 10), 1, TM_BIG_MIN / 2);
		for (size_t i = 0; i < cap; i += 512)
			ok &= p[i] == (uint8_t)(i * 7 + i / 4093 + s);
		tm_big_free(p, cap, 1);
	}
	return (void *)(uintptr_t)ok;
}

static void
parked_two_threads(void)
{
	pthread_t t[2];
	for (uintptr_t i = 0; i < 2; i++)
		CHECK(pthread_create(&t[i], NULL, park_worker, (void *)(i + 1)) == 0);
	for (int i = 0; i < 2; i++) {
		void *ok = NULL;
		CHECK(pthread_join(t[i], &ok) == 0);
		CHECK(ok == (void *)1);
	}
	tm_big_drop_parked();
}

/* A malloc block of mapping size handed to a big buffer is stopped (abort)
 * before free or resize treats it as a mapping; under a sanitizer nothing
 * is a mapping, so the same calls are plain heap calls. */
static void
malloc_block_refused(void)
{
	for (int resize = 0; resize < 2; resize++) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			size_t cap = TM_MAP_MIN * 2;
			uint8_t *p = malloc(cap);
			if (!p)
				_exit(3);
			if (resize)
				tm_big_resize((void **)&p, &cap, cap * 2, 1, TM_BIG_MIN);
			tm_big_free(p, cap, 1);
			_exit(0);
		}
		int st = 0;
		CHECK(waitpid(pid, &st, 0) == pid);
		if (SAN)
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		else
			CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	}
}

int
main(void)
{
	RUN(malloc_block_refused);
	RUN(log_family);
	RUN(stage_family);
	RUN(map_family);
	RUN(families_mixed);
	RUN(parked_reused);
	RUN(parked_one_owner);
	RUN(freed_parked);
	RUN(parked_two_threads);
	return 0;
}

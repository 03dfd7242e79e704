/* SPDX-License-Identifier: MIT */
/* Allocation, errors, buffers and status names. */
#define _GNU_SOURCE /* mremap */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>

static const char *const status_names[] = {
#define TM_X_(id, s) s,
	TM_STATUS_LIST(TM_X_)
#undef TM_X_
};

const char *
tm_status_str(enum tm_status s)
{
	if ((size_t)s < sizeof status_names / sizeof status_names[0])
		return status_names[s];
	return "unknown status";
}

/* dst = a + sep + b, truncated to cap (snprintf would warn on truncation). */
static void
join3(char *dst, size_t cap, const char *a, const char *sep, const char *b)
{
	size_t n = 0;
	const char *parts[3] = {a, sep, b};
	for (int i = 0; i < 3; i++)
		for (const char *q = parts[i]; *q && n + 1 < cap; q++)
			dst[n++] = *q;
	dst[n] = 0;
}

static void (*oom_hook)(size_t);

void
tm_set_oom_hook(void (*hook)(size_t bytes))
{
	oom_hook = hook;
}

/* The engine may not print: the front end's hook says what ran out (it may
 * only use async-signal-safe calls such as write(2)); then abort(), the
 * documented OOM policy. */
static void
oom_n(size_t bytes)
{
	if (oom_hook)
		oom_hook(bytes);
	abort();
}

void
tm_oom(size_t bytes)
{
	oom_n(bytes);
	abort();
}

unsigned long tm_zalloc_fail_nth;

static voidpf
z_alloc(voidpf opaque, uInt items, uInt size)
{
	size_t n = (size_t)items * size; /* two 32-bit factors: no overflow */
	(void)opaque;
	if (__atomic_load_n(&tm_zalloc_fail_nth, __ATOMIC_RELAXED) &&
	    __atomic_sub_fetch(&tm_zalloc_fail_nth, 1, __ATOMIC_RELAXED) == 0)
		oom_n(n);
	return xmalloc(n);
}

static void
z_free(voidpf opaque, voidpf p)
{
	(void)opaque;
	free(p);
}

void
tm_inflate_init(struct z_stream_s *z, int window_bits)
{
	memset(z, 0, sizeof *z);
	z->zalloc = z_alloc;
	z->zfree = z_free;
	/* Z_MEM_ERROR cannot come back (z_alloc does not return NULL);
	 * Z_VERSION_ERROR / Z_STREAM_ERROR are a build mistake. */
	if (inflateInit2(z, window_bits) != Z_OK)
		abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom_n(n);
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom_n(size && n > SIZE_MAX / size ? SIZE_MAX : n * size);
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom_n(n);
	return q;
}

char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *
xstrdup0(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* ---- big growable buffers (internal.h, tm_big_resize) ---- */

/* Under a sanitizer every buffer stays a malloc block: redzones and leak
 * checks see it (the code paths around it are the same either way). */
#ifdef TM_SANITIZER
#define MAP_MIN SIZE_MAX
#else
#define MAP_MIN TM_MAP_MIN
#endif

#define HUGE_PG ((size_t)2 << 20)
/* a copy into a fresh mapping of at least this many bytes is prefaulted */
#define POPULATE_MIN ((size_t)16 << 10)

/* n rounded up to a whole number of pages of size pg (a power of two) */
static size_t
round_pg(size_t n, size_t pg)
{
	return (n + pg - 1) & ~(pg - 1);
}

/* Two parked huge mappings of exactly HUGE_PG bytes for the process.  An
 * op log whose runs take it past 64 KiB goes to a huge page at once
 * (oplog.c run_room); one that finishes under 1 MiB is copied out of it
 * (tm_oplog_finish): each member of a TAR of 2-3 MiB members paid a
 * fresh mapping (mmap, munmap of the unaligned rest, madvise), a huge
 * page fault clearing 2 MiB and a munmap freeing it again.  A huge
 * mapping of one huge page let go by tm_big_resize or tm_big_free is
 * parked here, the next big_reserve of that length takes it (its bytes
 * are stale: a grower's bytes past the copy are unspecified anyway).
 * Parked by
 * tm_slot_give (else unmapped), so a mapping never has two owners. */
#define N_PARKED 2
static void *parked[N_PARKED];

void *
tm_slot_take(void **slots, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		void *p = __atomic_exchange_n(&slots[i], NULL, __ATOMIC_ACQUIRE);
		if (p)
			return p;
	}
	return NULL;
}

bool
tm_slot_give(void **slots, size_t n, void *p)
{
	for (size_t i = 0; i < n; i++) {
		void *none = NULL;
		if (__atomic_compare_exchange_n(&slots[i], &none, p, false, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			return true;
	}
	return false;
}

static uint8_t *
park_take(size_t len)
{
	return len == HUGE_PG ? tm_slot_take(parked, N_PARKED) : NULL;
}

/* Let go of the mapping [p, p + len): parked if it is one huge page of
 * big_reserve's (huge: it was reserved so), else unmapped. */
static void
unmap_big(uint8_t *p, size_t len, bool huge)
{
	if (huge && len == HUGE_PG && tm_slot_give(parked, N_PARKED, p))
		return;
	munmap(p, len);
}

void
tm_big_drop_parked(void)
{
	void *p;
	while ((p = tm_slot_take(parked, N_PARKED)))
		munmap(p, HUGE_PG);
}

/* A fresh mapping of len (a multiple of HUGE_PG) bytes at a HUGE_PG
 * boundary, with transparent huge pages asked for: one page fault then
 * maps 2 MiB, where 4 KiB pages take 512 (each a trap into the kernel,
 * dearer still under a hypervisor).  NULL if there is no room. */
static uint8_t *
big_reserve(size_t len)
{
	uint8_t *r = park_take(len);
	if (r)
		return r;
	size_t span = len + HUGE_PG;
	uint8_t *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	size_t head = (HUGE_PG - ((uintptr_t)p & (HUGE_PG - 1))) & (HUGE_PG - 1);
	if (head)
		munmap(p, head);
	munmap(p + head + len, span - head - len);
	/* advice only: without THP (never, or no huge page free) this is
	 * ordinary memory.  Before any byte is written: a 2 MiB range that
	 * already has a 4 KiB page stays in 4 KiB pages. */
	madvise(p + head, len, MADV_HUGEPAGE);
	return p + head;
}

/* The one rule: a buffer of cap items of elem bytes is a mapping of
 * round_pg(cap * elem, 4096) bytes when cap * elem >= MAP_MIN, else a malloc
 * block (every grower below keeps it true, whatever its huge_min). */
static bool
is_mapped(size_t cap, size_t elem)
{
	return cap * elem >= MAP_MIN;
}

/* A buffer the rule calls a mapping must be one: page-aligned, where a
 * malloc block of that size is not (glibc serves it 16 bytes into a page).
 * A malloc block handed to a big buffer (the crash class of a free() or
 * munmap() of the wrong kind) stops here, in every build. */
static void
must_be_mapping(const void *p)
{
	if ((uintptr_t)p & 4095)
		abort();
}

void
tm_big_free(void *p, size_t cap, size_t elem)
{
	if (is_mapped(cap, elem) && p) {
		must_be_mapping(p);
		/* one huge page is parked like tm_big_resize's (a plain file's
		 * 1 MiB sniff buffer, then its op log: two fresh huge pages
		 * cleared where one will do).  Every engine grower asks for huge
		 * pages from 2 MiB at most, so a mapping of one huge page at a
		 * huge page boundary is big_reserve's. */
		size_t len = round_pg(cap * elem, 4096);
		unmap_big(p, len, !((uintptr_t)p & (HUGE_PG - 1)));
	} else
		free(p);
}

void
tm_big_resize(void **pp, size_t *cap, size_t n, size_t elem, size_t huge_min)
{
	/* (room for rounding nb up to a huge page below) */
	if (n > (SIZE_MAX - HUGE_PG) / elem)
		oom_n(SIZE_MAX);
	uint8_t *p = *pp;
	size_t ob = *cap * elem, nb = n * elem;
	bool was_map = is_mapped(*cap, elem);
	if (was_map && p)
		must_be_mapping(p);
	size_t ol = round_pg(ob, 4096);
	bool was_huge = was_map && ol >= huge_min && !((uintptr_t)p & (HUGE_PG - 1));
	if (nb < MAP_MIN) {
		/* a malloc block (n == 0: none) */
		uint8_t *q = NULL;
		if (!was_map)
			q = nb ? xrealloc(p, nb) : (free(p), NULL);
		else {
			/* a mapping now below the threshold: its bytes to the heap */
			if (nb) {
				q = xmalloc(nb);
				memcpy(q, p, nb);
			}
			unmap_big(p, ol, was_huge);
		}
		*pp = q;
		*cap = n;
		return;
	}
	/* (huge by whole pages: a capacity is its mapping, see below) */
	bool huge = round_pg(nb, 4096) >= huge_min;
	size_t nl = round_pg(nb, huge ? HUGE_PG : 4096);
	uint8_t *q = p;
	if (was_map && nl == ol) {
		/* same pages */
	} else if (was_map && huge == was_huge) {
		/* a mapping resized where it is (shrinking: the pages past nl
		 * given back, whole huge pages of a huge one), or moved (page
		 * tables, not bytes) when the address space after it is taken:
		 * a huge one to a fresh aligned range */
		q = mremap(p, ol, nl, 0);
		if (q == MAP_FAILED && huge) {
			q = big_reserve(nl);
			if (!q || mremap(p, ol, nl, MREMAP_MAYMOVE | MREMAP_FIXED, q) == MAP_FAILED)
				oom_n(nb);
		} else if (q == MAP_FAILED) {
			q = mremap(p, ol, nl, MREMAP_MAYMOVE);
			if (q == MAP_FAILED)
				oom_n(nb);
		}
		/* (a mapping grown in place: its new part, advised like the rest) */
		if (huge && nl > ol)
			madvise(q, nl, MADV_HUGEPAGE);
	} else {
		/* a malloc block, or a mapping of 4 KiB pages turning huge, or
		 * the other way: copied into a fresh mapping (a huge one copied
		 * into, not moved into: the 2 MiB range its 4 KiB pages landed in
		 * would stay in 4 KiB pages; a huge page cut short is not freed
		 * until the kernel splits it, under memory pressure) */
		q = huge ? big_reserve(nl)
			 : mmap(NULL, nl, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (!q || q == MAP_FAILED)
			oom_n(nb);
		size_t cp = ob < nb ? ob : nb;
		/* the pages the copy writes, made present in one call rather
		 * than a page fault each (a finished op log of 272 KiB copied
		 * out of its huge page: 68 faults, ~6% of the CPU of a
		 * 100-member TAR's check).  Advice only: a kernel without it
		 * (before Linux 5.14) faults them in as before. */
#ifdef MADV_POPULATE_WRITE /* headers older than Linux 5.14 lack it */
		if (!huge && cp >= POPULATE_MIN)
			madvise(q, round_pg(cp, 4096), MADV_POPULATE_WRITE);
#endif
		if (ob)
			memcpy(q, p, cp);
		if (was_map)
			unmap_big(p, ol, was_huge);
		else
			free(p);
	}
	*pp = q;
	/* the whole mapping is the capacity: round_pg(cap * elem) == nl
	 * (elem <= 4096) */
	*cap = nl / elem;
}

/* tm_xgrow's doubling: the capacity for need items */
static size_t
doubled(size_t cap, size_t need, size_t elem)
{
	size_t nc = cap ? cap : 8;
	while (nc < need) {
		if (nc > SIZE_MAX / 2 / elem)
			oom_n(SIZE_MAX);
		nc *= 2;
	}
	return nc;
}

void
tm_big_grow(void **p, size_t *cap, size_t need, size_t elem, size_t huge_min)
{
	if (need > *cap)
		tm_big_resize(p, cap, doubled(*cap, need, elem), elem, huge_min);
}

void
xgrow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return;
	size_t nc = doubled(*cap, need, elem);
	*p = xrealloc(*p, nc * elem);
	*cap = nc;
}

void
tm_error_clear(struct tm_error *err)
{
	if (err)
		memset(err, 0, sizeof *err);
}

enum tm_status
tm_error_set(struct tm_error *err, enum tm_status code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		err->code = code;
		err->sys_errno = 0;
		err->hint[0] = 0;
		err->tp[0] = 0;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return code;
}

enum tm_status
tm_error_sys(struct tm_error *err, int errnum, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		char tmp[sizeof err->msg];
		va_start(ap, fmt);
		vsnprintf(tmp, sizeof tmp, fmt, ap);
		va_end(ap);
		err->code = TM_ERR_IO;
		err->sys_errno = errnum;
		err->hint[0] = 0;
		err->tp[0] = 0;
		join3(err->msg, sizeof err->msg, tmp, ": ", strerror(errnum));
	}
	return TM_ERR_IO;
}

void
tm_error_wrap(struct tm_error *err, const char *fmt, ...)
{
	if (!err)
		return;
	char pre[512], old[sizeof err->msg];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof pre, fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof old);
	join3(err->msg, sizeof err->msg, pre, ": ", old);
}

void
tm_error_hint(struct tm_error *err, const char *fmt, ...)
{
	if (!err)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof err->hint, fmt, ap);
	va_end(ap);
}

/* ---- tm_buf ---- */

void
tm_buf_init(struct tm_buf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
}

void
tm_buf_fini(struct tm_buf *b)
{
	free(b->data);
	tm_buf_init(b);
}

void
tm_buf_reset(struct tm_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = 0;
}

static void
buf_reserve(struct tm_buf *b, size_t extra)
{
	if (b->len + extra + 1 > b->cap) {
		size_t nc = b->cap ? b->cap : 64;
		while (nc < b->len + extra + 1)
			nc *= 2;
		b->data = xrealloc(b->data, nc);
		b->cap = nc;
	}
}

void
tm_buf_add(struct tm_buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
}

void
tm_buf_adds(struct tm_buf *b, const char *s)
{
	tm_buf_add(b, s, strlen(s));
}

void
tm_buf_addc(struct tm_buf *b, char c)
{
	tm_buf_add(b, &c, 1);
}

void
tm_buf_vaddf(struct tm_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n > 0) {
		buf_reserve(b, (size_t)n);
		vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
		b->len += (size_t)n;
	}
}

void
tm_buf_addf(struct tm_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tm_buf_vaddf(b, fmt, ap);
	va_end(ap);
}

const char *
tm_path_base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

uint64_t
tm_hash_bytes(uint64_t h, const void *p, size_t n)
{
	return tm_fnv1a(h, p, n);
}

char *
tm_buf_steal(struct tm_buf *b)
{
	char *p = b->data ? b->data : xstrdup("");
	tm_buf_init(b);
	return p;
}

int
tm_cmp_key_ix(const void *a, const void *b)
{
	const struct tm_key_ix *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* SPDX-License-Identifier: MIT */
/* The util stage's face (engine/util/, the bottom stage: it calls no other).
 * Engine-internal helpers shared by every engine module: allocation that
 * aborts on out-of-memory, error filling, checked arithmetic, small vectors;
 * beside it strmap.h, json_lex.h, json_dom.h, proto_wire.h.
 * Never included by front ends. */
#ifndef TM_INTERNAL_H
#define TM_INTERNAL_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header: front ends include only tracemerge.h"
#endif

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracemerge.h"

void *tm_xmalloc(size_t n) __attribute__((malloc, returns_nonnull));
void *tm_xcalloc(size_t n, size_t size) __attribute__((malloc, returns_nonnull));
void *tm_xrealloc(void *p, size_t n) __attribute__((returns_nonnull));
char *tm_xstrdup(const char *s) __attribute__((malloc, returns_nonnull));
char *tm_xstrndup(const char *s, size_t n) __attribute__((malloc, returns_nonnull));
/* tm_xstrdup that passes NULL through. */
char *tm_xstrdup0(const char *s);
/* Out of memory (or of the spill file that stands in for it, oplog_spill.c):
 * the front end's hook, then abort(). */
void tm_oom(size_t bytes) __attribute__((noreturn));
/* inflateInit2 with zlib allocating through the engine (tm_oom when it runs
 * out, never Z_MEM_ERROR passed off as trace_processor's "Failed to
 * decompress").  z is zeroed first.  Fails (abort) only on a zlib that does
 * not match the headers. */
/* tm_buf_addf with a va_list (the engine's vsnprintf-into-a-buffer helper:
 * no fixed-size copy, no truncation). */
void tm_buf_vaddf(struct tm_buf *b, const char *fmt, va_list ap) TM_PRINTF(2, 0);
struct z_stream_s;
void tm_inflate_init(struct z_stream_s *z, int window_bits);
/* Test hook: tm_escape_display copies printable ASCII a byte at a time
 * (the oracle of its runs). */
extern bool tm_escape_no_fast;
/* Test hook: the Nth zlib allocation from now fails (tm_oom); 0 = never. */
extern unsigned long tm_zalloc_fail_nth;
/* The capacity of a small array of n elements grown one at a time: 0 (in
 * place, or none) while n <= room, then 2 * room, doubling.  Not stored
 * by its users (clockgraph.c's nodes, series and groups, replay.c's rows
 * of a file): a size of n becoming n + 1 reallocates when the two
 * capacities differ. */
static inline uint32_t
tm_small_cap(uint32_t n, uint32_t room)
{
	if (n <= room)
		return 0;
	uint32_t c = 2 * room;
	while (c < n) {
		if (c > UINT32_MAX / 2)
			tm_oom(SIZE_MAX);
		c *= 2;
	}
	return c;
}
/* Grow *p (array of elem-size items, capacity *cap) to hold at least need items. */
void tm_xgrow(void **p, size_t *cap, size_t need, size_t elem);
/* Parking for a block kept for reuse (a spare buffer or mapping), in one
 * of n slots shared by all threads, lock-free: a taker swaps NULL in, a
 * giver fills an empty slot only, so a parked block never has two
 * owners.  tm_slot_take: a parked block or NULL; tm_slot_give: false if
 * every slot is full (p is still the caller's). */
void *tm_slot_take(void **slots, size_t n);
bool tm_slot_give(void **slots, size_t n, void *p);

/* The build's sanitizers: TM_ASAN (AddressSanitizer), TM_SANITIZER (any of
 * address, thread, memory). */
#if defined(__SANITIZE_ADDRESS__)
#define TM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TM_ASAN 1
#endif
#endif
#if defined(TM_ASAN) || defined(__SANITIZE_THREAD__)
#define TM_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define TM_SANITIZER 1
#endif
#endif
/* Lookup work, counted for the tests (TM_COUNT_WORK: the ASan variant the
 * unit tests link): each probe of a table keyed by a value the input
 * controls (a hash slot looked at, a step of a short linear search) adds
 * one, from any thread, so a test bounds a lookup's work by a count of
 * operations, never by time.  Nothing in other builds. */
#ifdef TM_COUNT_WORK
extern uint64_t tm_work_probes;
#define TM_PROBE() ((void)__atomic_fetch_add(&tm_work_probes, 1, __ATOMIC_RELAXED))
#else
#define TM_PROBE() ((void)0)
#endif
/* The probes counted so far, UINT64_MAX in a build that does not count. */
uint64_t tm_work_count(void);
/* Big buffers, for those a big input fills once per file (the op log, its
 * staging): 4 KiB page faults were most of the CPU a 64 MiB check paid
 * beyond a small one's.  One rule says what such a buffer is, whichever
 * function grew it: cap items of elem bytes are a malloc block while
 * cap * elem < TM_MAP_MIN, else an anonymous mapping of exactly
 * cap * elem bytes rounded up to 4 KiB (growing by mremap copies nothing
 * and faults in only the pages written).  So there is one free,
 * tm_big_free(p, cap, elem) (never free()), and a heap block taken over as
 * a big buffer must come through tm_big_resize (or be below TM_MAP_MIN):
 * one that does not aborts in tm_big_free/tm_big_resize (not page-aligned).
 * Growers differ only in the pages of a mapping: from huge_min bytes on,
 * transparent huge pages at a 2 MiB boundary (one fault maps 2 MiB).
 * tm_big_resize makes room for exactly n items (or more: a mapping's
 * capacity is all of it), growing or shrinking; a mapping shrunk below
 * TM_MAP_MIN goes back to the heap.  tm_big_grow doubles like tm_xgrow.
 * Under ASan/TSan every buffer stays a malloc block.  elem <= 4096. */
#define TM_MAP_MIN ((size_t)128 << 10)
void tm_big_resize(void **p, size_t *cap, size_t n, size_t elem, size_t huge_min);
void tm_big_grow(void **p, size_t *cap, size_t need, size_t elem, size_t huge_min);
void tm_big_free(void *p, size_t cap, size_t elem);
/* Unmaps the huge mappings tm_big_resize and tm_big_free parked for reuse
 * (tests; tm_replay, once the scans are done). */
void tm_big_drop_parked(void);
#define BIG_FREE(arr, cap) tm_big_free((arr), (cap), sizeof(*(arr)))
/* The op log's bytes: huge pages from TM_BIG_MIN (a log is kept per member
 * until the session closes; when finished, one in huge pages keeps them
 * from half a huge page, a smaller one is copied to 4 KiB pages or the
 * heap by tm_big_resize: tm_oplog_finish). */
#define TM_BIG_MIN ((size_t)2 << 20)
/* Staging arrays, filled and emptied while a file is read (a run's values,
 * the events list): huge pages from TM_STAGE_MIN bytes of capacity on
 * (2 MiB resident once touched, for a while), so a big run does not fault
 * its way up through the sizes below. */
#define TM_STAGE_MIN ((size_t)256 << 10)
#define BIG_XGROW(arr, cap, need)                                                           \
	((size_t)(need) > (cap) ? tm_big_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)), \
					      TM_STAGE_MIN)                                    \
				: (void)0)
/* Clock ids 64..127 are sequence-scoped: each packet sequence has its own
 * clock of that id (trace_processor's clock_tracker.h,
 * IsSequenceClock). */
static inline bool
tm_clock_is_seq(uint64_t id)
{
	return id >= 64 && id < 128;
}
/* The library exports only tm_-prefixed symbols; engine sources use the
 * short names. */
#define xmalloc tm_xmalloc
#define xcalloc tm_xcalloc
#define xrealloc tm_xrealloc
#define xstrdup tm_xstrdup
#define xstrndup tm_xstrndup
#define xstrdup0 tm_xstrdup0
#define xgrow tm_xgrow
#define XGROW(arr, cap, need) xgrow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* Fill err (NULL allowed) and return code. */
enum tm_status tm_error_set(struct tm_error *err, enum tm_status code, const char *fmt, ...)
	TM_PRINTF(3, 4);
/* Same, with errno recorded and strerror appended. */
enum tm_status tm_error_sys(struct tm_error *err, int errnum, const char *fmt, ...) TM_PRINTF(3, 4);
/* Prefix err->msg with "<context>: " (cause chains, as babeltrace does). */
void tm_error_wrap(struct tm_error *err, const char *fmt, ...) TM_PRINTF(2, 3);
void tm_error_hint(struct tm_error *err, const char *fmt, ...) TM_PRINTF(2, 3);

static inline bool
add_overflow_i64(int64_t a, int64_t b, int64_t *r)
{
	return __builtin_add_overflow(a, b, r);
}
/* Two's-complement wrapping add/sub/mul, as trace_processor's int64 math does
 * (it wraps in practice: INT64_MAX offsets wrap events negative). */
static inline int64_t
wrap_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}
static inline int64_t
wrap_sub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}
static inline int64_t
wrap_mul(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* MurmurHash3's 64-bit finalizer: a cheap, well-mixed hash of a key. */
static inline uint64_t
tm_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* tm_escape_json for the manifest we write: the same escapes, but a byte
 * that is not UTF-8 is kept as it is, so that a path names its member byte
 * for byte (trace_processor matches paths exactly), and a character above
 * U+FFFF is written as itself (trace_processor reads no surrogate escapes). */
void tm_escape_json_raw(const char *s, size_t len, struct tm_buf *out);

/* Two strings equal, NULL equal only to NULL. */
static inline bool
tm_same_str(const char *a, const char *b)
{
	return a == b || (a && b && __builtin_strcmp(a, b) == 0);
}

/* A key and an index for qsort with tm_cmp_key_ix: by key, ties by index,
 * so the sort is stable whatever qsort does. */
struct tm_key_ix {
	int64_t key;
	size_t i;
};
int tm_cmp_key_ix(const void *a, const void *b);

/* FNV-1a, 64-bit: h = tm_fnv1a(TM_FNV_INIT, p, n), chained for several
 * fields.  The engine's one string hash (mix it with tm_mix64 before using
 * its low bits as a table index). */
#define TM_FNV_INIT TM_HASH_INIT /* tm_hash_bytes is this, exported */
static inline uint64_t
tm_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ull;
	}
	return h;
}

#endif

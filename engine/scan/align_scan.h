/* SPDX-License-Identifier: MIT */
/*
 * What alignment needs from a scan, kept within a fixed budget so that an
 * estimate never reads trace bytes again (align_scan.c):
 *  - names: up to AL_NAMES distinct event names, each with its count and
 *    the timestamps of its first AL_OCC occurrences (estimates pair the
 *    first AL_MATCH; `--pair` and the pair picker name any kept one);
 *  - ids: flow and async ids with the timestamp of their first start (out)
 *    and first end (in), at most AL_IDS of them.  When the table fills,
 *    ids are thinned by a hash of the id (the same in every file), so the
 *    ids two files keep are still the same ones.
 * Timestamps are raw, with the op's clock spec (clock 0: the reader's
 * default clock), as the scanner saw them.  A proto sample also keeps the
 * byte offset of its packet: the replay converts that packet's timestamp
 * for an estimate (replay.h, struct tm_replay_probe) when its clock is not
 * the file's trace clock.
 */
#ifndef TM_ALIGN_SCAN_H
#define TM_ALIGN_SCAN_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "internal.h"
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

#define AL_NAMES 4096u
#define AL_OCC 128u
/* The occurrences of a name an estimate pairs by their rank (align.c
 * collect): the first 32, as before AL_OCC grew for --pair. */
#define AL_MATCH 32u
#define AL_IDS 32768u
#define AL_NAMES_LINEAR 8u

enum { AL_OUT = 1, AL_IN = 2, AL_INSTANT = 4 };
enum al_kind { AL_FLOW = 1, AL_ASYNC = 2 };

#define AL_NO_OFF UINT64_MAX

struct al_occ {
	int64_t ts;
	uint32_t clock, machine;
	uint64_t off; /* the proto packet's byte offset (its PACKET op), or AL_NO_OFF */
};

/* Slots [0, n) of each array are in use, in the order first seen; slots
 * [n, cap) are zero (h == 0, key == 0).  Lookups go through maps that
 * compare the whole key, never a hash alone. */
struct al_name {
	uint64_t h; /* a hash of the name, never 0 (0: unused slot) */
	char *name;
	size_t len;
	uint64_t count;
	/* The kept occurrences (n <= AL_OCC), packed: a session keeps one scan
	 * per member, and 32 struct al_occ are 768 bytes where their varints
	 * are ~3 per occurrence (10,000 members of one name each).  Each is
	 * zigzag(ts - previous ts) with a flag, then clock and machine only
	 * when the flag says they differ from the previous one's, then
	 * zigzag((off + 1) - (previous off + 1)), as varints (occ_append
	 * writes the flag and the delta's low 6 bits in one head byte), the
	 * previous of the first 0; read them with tm_al_occs. */
	uint8_t *occ;
	uint32_t n;
	uint16_t occ_len; /* bytes of occ (at most AL_OCC * AL_OCC_MAX) */
	bool all_instant;
	bool occ_in_names; /* occ lies in the names block (tm_al_trim), not in
			    * a block of its own */
};
#define AL_OCC_MAX 30u /* bytes of one packed occurrence at most */

struct al_id {
	uint64_t key; /* a hash of the identity, never 0 (0: unused slot) */
	char *ident;  /* the identity: kind, id, and for async ids the name */
	size_t ident_len;
	uint8_t have; /* AL_OUT | AL_IN */
	struct al_occ out, in;
};

/* A scanner's direct-mapped cache of name -> entry index + 1 (checked on
 * use: the whole name is compared): most events repeat a few names, and the
 * names' string map costs more than the rest of an event.  Besides, the
 * last name looked up whose AL_OCC samples are all taken (full_len
 * SIZE_MAX: none, so that no length, 0 included, matches it): its outer
 * bytes (al_key), length and index in names; its later events only count
 * (tm_al_name_counted), no lookup.  A scanner's no_fast (tests: the
 * general paths) sets no_full: then it is never set.  Zeroed, then
 * tm_al_cache_init. */
#define AL_CACHE 256u
struct al_name_cache {
	uint32_t slot[AL_CACHE];
	uint64_t full_x, full_y;
	size_t full_len, full_ix;
	bool no_full;
	/* The last occurrence kept of each name (names[ix1 - 1] in
	 * prev[ix1 - 1], grown with the names: tm_al_cache_fini frees it),
	 * valid while that name holds n of them (any keep that bypasses it
	 * changes n): the next one is written as its deltas without walking
	 * the packed ones (tm_al_name_keep_in).  Not a few slots shared by
	 * the names: with 128 kept a name (AL_OCC), a trace of 2,000 names
	 * interleaved (make bench's track) walked them on nearly every keep,
	 * a quarter of its check.  Unused under no_full: the walk is the
	 * tests' oracle. */
	struct al_prev {
		struct al_occ o;
		uint32_t ix1, n;
	} *prev;
	size_t cap_prev;
};

static inline void
tm_al_cache_init(struct al_name_cache *c, bool no_full)
{
	c->full_len = SIZE_MAX;
	c->no_full = no_full;
}

static inline void
tm_al_cache_fini(struct al_name_cache *c)
{
	free(c->prev);
	c->prev = NULL;
	c->cap_prev = 0;
}

struct tm_align_samples {
	/* the cache of the scanner filling this (NULL: none); it lives only
	 * while that scan runs */
	struct al_name_cache *cache;
	struct al_name *names;
	/* name -> index; empty (not built) while there are at most
	 * AL_NAMES_LINEAR names, which are then searched in turn (most
	 * members of an archive have a name or two: the map is 128 bytes) */
	struct tm_strmap name_ix;
	struct al_id *ids;
	struct tm_strmap id_ix;   /* identity -> index */
	uint64_t id_mask; /* keep ids with ((key >> 1) & id_mask) == 0 */
	uint64_t n_id_events;
	uint32_t n_names, cap_names; /* at most AL_NAMES */
	uint32_t n_ids, cap_ids;     /* at most AL_IDS */
	bool names_full;
	/* the names' strings lie in the names block after the entries, with
	 * the occurrences of those whose occ_in_names is set (tm_al_trim) */
	bool names_packed;
	/* (a session keeps one per member: 10,000s in an archive) */
};
_Static_assert(sizeof(void *) != 8 || sizeof(struct tm_align_samples) == 112,
	       "struct tm_align_samples grew");

struct tm_align_samples *tm_al_new(void);
void tm_al_free(struct tm_align_samples *a);
/* The entry of name[0..n) (n > 0), added when new; NULL when the table is
 * full.  Entries are never removed: an index into names stays valid. */
struct al_name *tm_al_name_entry(struct tm_align_samples *a, const char *name, size_t n);
/* names[i] (the last one added) indexed; false when its name is already
 * in names[0..i) (it is not indexed then). */
bool tm_al_name_index(struct tm_align_samples *a, size_t i);
void tm_al_name_keep(struct al_name *e, int64_t ts, uint32_t clock, uint32_t machine,
		     uint64_t off);
/* Test hook: the keeps of tm_al_name_keep_in that walked the packed
 * occurrences (their last one not in the cache). */
extern uint64_t tm_al_keep_walks;
/* tm_al_name_keep of e, an entry of a, through a->cache's last
 * occurrences when there is one (struct al_name_cache). */
void tm_al_name_keep_in(struct tm_align_samples *a, struct al_name *e, int64_t ts, uint32_t clock,
			uint32_t machine, uint64_t off);
/* tm_al_name_keep of o[0..n) in turn (a saved scan's, scancache.c), the
 * packed bytes stored at once. */
void tm_al_name_keep_all(struct al_name *e, const struct al_occ *o, uint32_t n);
/* e's kept occurrences into out[0..e->n) (room for AL_OCC); returns e->n. */
uint32_t tm_al_occs(const struct al_name *e, struct al_occ *out);
/* The same in time order (by raw timestamp; equal ones in file order): the
 * order `#N` counts in (--pair, the pair picker). */
uint32_t tm_al_occs_by_time(const struct al_name *e, struct al_occ *out);
/* The scan is over: the name and id arrays trimmed to what they hold
 * (more may still be added: they grow again).  A file of at most
 * AL_NAMES_LINEAR names (no map) gets its entries, their strings and
 * occurrences in one block (a session keeps one scan per member: 10,000s
 * of small ones); a name added or kept later moves out of it again. */
void tm_al_trim(struct tm_align_samples *a);
/* The outer bytes of a name: for names of up to 16 bytes, all of them. */
struct al_key {
	uint64_t x, y;
};
static inline __attribute__((always_inline)) struct al_key
al_key(const uint8_t *p, size_t n)
{
	struct al_key k = {0, 0};
	if (n >= 8) {
		memcpy(&k.x, p, 8);
		memcpy(&k.y, p + n - 8, 8);
	} else if (n >= 4) {
		uint32_t a, b;
		memcpy(&a, p, 4);
		memcpy(&b, p + n - 4, 4);
		k.x = a;
		k.y = b;
	} else {
		k.x = (uint64_t)p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16;
	}
	return k;
}

/* tm_al_name_entry through a->cache when there is one. */
static inline __attribute__((always_inline)) struct al_name *
tm_al_name_find(struct tm_align_samples *a, const char *name, size_t n)
{
	struct al_name_cache *c = a->cache;
	if (!c)
		return tm_al_name_entry(a, name, n);
	struct al_key k = al_key((const uint8_t *)name, n);
	uint32_t h = (uint32_t)(((k.x ^ (k.y >> 3) ^ n) * 0x9e3779b97f4a7c15ULL) >> 56) &
		     (AL_CACHE - 1);
	uint32_t ix = c->slot[h];
	struct al_name *e;
	if (ix && (e = &a->names[ix - 1])->len == n) {
		struct al_key ek = al_key((const uint8_t *)e->name, n);
		if (ek.x == k.x && ek.y == k.y && (n <= 16 || memcmp(e->name, name, n) == 0))
			return e;
	}
	e = tm_al_name_entry(a, name, n);
	if (e)
		c->slot[h] = (uint32_t)(e - a->names) + 1;
	return e;
}

/* One more occurrence of e, an entry of a, at ts (tm_al_name after the
 * lookup); true when it was kept as a sample. */
static inline bool
tm_al_name_occ(struct tm_align_samples *a, struct al_name *e, int64_t ts, uint32_t clock,
	       uint32_t machine, unsigned flags, uint64_t off)
{
	e->count++;
	e->all_instant &= (flags & AL_INSTANT) != 0;
	if (e->n >= AL_OCC)
		return false;
	tm_al_name_keep_in(a, e, ts, clock, machine, off);
	return true;
}

/* An occurrence of name[0..n) counted when it is c's full name (struct
 * al_name_cache; never when n is 0: no name is empty): what tm_al_name_occ
 * does to an entry whose samples are all taken.  a (its names) is read only
 * then: it may be NULL while c has no full name. */
static inline __attribute__((always_inline)) bool
tm_al_name_counted(const struct al_name_cache *c, struct tm_align_samples *a, const char *name,
		   size_t n, unsigned flags)
{
	if (n != c->full_len)
		return false;
	/* for up to 16 bytes the outer bytes are the whole name */
	struct al_key k = al_key((const uint8_t *)name, n);
	if (k.x != c->full_x || k.y != c->full_y)
		return false;
	struct al_name *e = &a->names[c->full_ix];
	if (n > 16 && memcmp(e->name, name, n) != 0)
		return false;
	e->count++;
	e->all_instant &= (flags & AL_INSTANT) != 0;
	return true;
}

/* tm_al_name (n > 0) of a name that tm_al_name_counted did not count,
 * through a->cache when there is one, which it may make the full name;
 * off: the proto packet's byte offset or AL_NO_OFF.  True when the
 * occurrence was kept as a sample. */
bool tm_al_name_add(struct tm_align_samples *a, const char *name, size_t n, int64_t ts,
		    uint32_t clock, uint32_t machine, unsigned flags, uint64_t off);
/* An event named name[0..n) at ts (flags: AL_INSTANT for instants/markers),
 * of no proto packet (off AL_NO_OFF; tm_al_name_add takes one). */
static inline __attribute__((always_inline)) void
tm_al_name(struct tm_align_samples *a, const char *name, size_t n, int64_t ts, uint32_t clock,
	   uint32_t machine, unsigned flags)
{
	if (name && n && !(a->cache && tm_al_name_counted(a->cache, a, name, n, flags)))
		(void)tm_al_name_add(a, name, n, ts, clock, machine, flags, AL_NO_OFF);
}
/* A flow id's start (AL_OUT) or end (AL_IN) at ts, in the proto packet at
 * byte off (AL_NO_OFF: none); true when it was kept as a sample. */
bool tm_al_id(struct tm_align_samples *a, enum al_kind kind, uint64_t id, int64_t ts,
	      uint32_t clock, uint32_t machine, unsigned dir, uint64_t off);
/* An async slice's start or end: its name and id together identify it. */
void tm_al_async(struct tm_align_samples *a, const char *name, size_t n, uint64_t id, int64_t ts,
		 uint32_t clock, uint32_t machine, unsigned dir);
const struct al_name *tm_al_find_name(const struct tm_align_samples *a, const char *name,
				      size_t n);
/* The entry of a with the same identity as x (an entry of another file). */
const struct al_id *tm_al_find_id(const struct tm_align_samples *a, const struct al_id *x);

/* tm_al_json for the phases other than instants and slices. */
void tm_al_json_ids(struct tm_align_samples *a, char phase, const char *name, size_t nl,
		    bool has_id, uint64_t id, int64_t ts);
/* A Chrome JSON event: instants (i I n R) and slices (B X) by name, flows
 * (s out, f in) by id, async events (b S out, e F in) by name and id.  A
 * scanner's call: a->cache is set. */
static inline __attribute__((always_inline)) void
tm_al_json(struct tm_align_samples *a, char phase, const char *name, size_t nl, bool has_id,
	   uint64_t id, int64_t ts)
{
	unsigned fl;
	switch (phase) {
	case 'i':
	case 'I':
	case 'n':
	case 'R':
		fl = AL_INSTANT;
		break;
	case 'B':
	case 'X':
		fl = 0;
		break;
	default:
		tm_al_json_ids(a, phase, name, nl, has_id, id, ts);
		return;
	}
	tm_al_name(a, name, nl, ts, 0, 0, fl);
}

struct tm_atrace_point;
/* An atrace point (atrace.h) at ts: B (a name), I and N (an instant by its
 * name), S/F (an async id, out/in, by name and cookie, and the name). */
void tm_al_atrace(struct tm_align_samples *a, const struct tm_atrace_point *p, int64_t ts,
		  uint32_t clock, uint32_t machine);

#endif

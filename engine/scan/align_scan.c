/* SPDX-License-Identifier: MIT */
/* Bounded alignment samples collected during the scan (align_scan.h). */
#include "align_scan.h"

#include <stdlib.h>
#include <string.h>

#include "atrace.h"

/* A hash of a key, never 0 (0 marks an unused slot). */
static uint64_t
key_hash(const void *p, size_t n)
{
	return tm_mix64(tm_fnv1a(TM_FNV_INIT, p, n)) | 1;
}

struct tm_align_samples *
tm_al_new(void)
{
	return xcalloc(1, sizeof(struct tm_align_samples));
}

void
tm_al_free(struct tm_align_samples *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n_names; i++) {
		if (!a->names_packed)
			free(a->names[i].name);
		if (!a->names[i].occ_in_names)
			free(a->names[i].occ);
	}
	free(a->names);
	tm_strmap_fini(&a->name_ix);
	for (size_t i = 0; i < a->n_ids; i++)
		free(a->ids[i].ident);
	free(a->ids);
	tm_strmap_fini(&a->id_ix);
	free(a);
}

/* Grow an array of elem-size slots to hold need, zeroing the new slots.
 * Small at first: most files have few names, and archives of 10,000 small
 * members keep 10,000 of these. */
static void
grow_zeroed(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return;
	uint32_t nc = *cap ? *cap * 2 : 2;
	while (nc < need)
		nc *= 2;
	*arr = xrealloc(*arr, nc * elem);
	memset((char *)*arr + *cap * elem, 0, (nc - *cap) * elem);
	*cap = nc;
}

/* The index of name[0..n) among names[0..lim), or SIZE_MAX. */
static size_t
name_at(const struct tm_align_samples *a, const char *name, size_t n, size_t lim)
{
	if (a->name_ix.cap) {
		const struct tm_strmap_slot *sl = tm_strmap_get(&a->name_ix, name, n);
		return sl && sl->val < lim ? sl->val : SIZE_MAX;
	}
	for (size_t i = 0; i < lim; i++)
		if (a->names[i].len == n && !memcmp(a->names[i].name, name, n))
			return i;
	return SIZE_MAX;
}

/* names[i], not in names[0..i), indexed (the map from AL_NAMES_LINEAR
 * names on). */
static void
name_put(struct tm_align_samples *a, size_t i)
{
	if (a->name_ix.cap)
		tm_strmap_put(&a->name_ix, a->names[i].name, a->names[i].len, i, NULL);
	else if (i + 1 > AL_NAMES_LINEAR)
		for (size_t k = 0; k <= i; k++)
			tm_strmap_put(&a->name_ix, a->names[k].name, a->names[k].len, k, NULL);
}

bool
tm_al_name_index(struct tm_align_samples *a, size_t i)
{
	if (name_at(a, a->names[i].name, a->names[i].len, i) != SIZE_MAX)
		return false;
	name_put(a, i);
	return true;
}

const struct al_name *
tm_al_find_name(const struct tm_align_samples *a, const char *name, size_t n)
{
	if (!a || !name)
		return NULL;
	size_t i = name_at(a, name, n, a->n_names);
	return i != SIZE_MAX ? &a->names[i] : NULL;
}

static size_t occ_room(size_t n);

/* e's occurrences out of the names block (tm_al_trim) into a block of
 * their own with room for need bytes. */
static void
occ_own(struct al_name *e, size_t need)
{
	uint8_t *o = xmalloc(occ_room(need));
	memcpy(o, e->occ, e->occ_len);
	e->occ = o;
	e->occ_in_names = false;
}

/* The names out of the block tm_al_trim packed them in: the entries in an
 * array of their own, each string and occurrences in its own block. */
static void
unpack_names(struct tm_align_samples *a)
{
	if (!a->names_packed)
		return;
	struct al_name *v = xmalloc(a->n_names * sizeof *v);
	memcpy(v, a->names, a->n_names * sizeof *v);
	for (size_t i = 0; i < a->n_names; i++) {
		struct al_name *e = &v[i];
		e->name = xstrndup(e->name, e->len);
		if (e->occ_in_names)
			occ_own(e, e->occ_len);
	}
	free(a->names);
	a->names = v;
	a->names_packed = false;
}

struct al_name *
tm_al_name_entry(struct tm_align_samples *a, const char *name, size_t n)
{
	size_t i = name_at(a, name, n, a->n_names);
	if (i != SIZE_MAX)
		return &a->names[i];
	if (a->n_names >= AL_NAMES) {
		a->names_full = true;
		return NULL;
	}
	unpack_names(a); /* (no map is built over packed names: none to fix) */
	grow_zeroed((void **)&a->names, &a->cap_names, a->n_names + 1, sizeof *a->names);
	struct al_name *e = &a->names[a->n_names];
	e->name = xstrndup(name, n);
	e->len = n;
	e->h = key_hash(name, n);
	e->all_instant = true;
	name_put(a, a->n_names); /* new: name_at missed above */
	a->n_names++;
	return e;
}

static uint8_t *
occ_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static const uint8_t *
occ_get(const uint8_t *p, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned sh = 0;; sh += 7) {
		uint8_t b = *p++;
		x |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80) || sh >= 63)
			break;
	}
	*v = x;
	return p;
}

static inline uint64_t
occ_zz(uint64_t d)
{
	return (d << 1) ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t
occ_unzz(uint64_t v)
{
	return (v >> 1) ^ (uint64_t)-(int64_t)(v & 1);
}

/* e's kept occurrences in turn, into out when not NULL; the last one
 * ({0, 0, 0, UINT64_MAX} when there is none: what the first is written
 * against). */
static struct al_occ
occ_walk(const struct al_name *e, struct al_occ *out)
{
	const uint8_t *p = e->occ;
	uint64_t v;
	struct al_occ cur = {0, 0, 0, UINT64_MAX};
	for (uint32_t k = 0; k < e->n; k++) {
		uint8_t b = *p++;
		v = (uint64_t)(b >> 1 & 0x3f);
		if (b & 0x80) {
			uint64_t hi;
			p = occ_get(p, &hi);
			v |= hi << 6;
		}
		cur.ts = (int64_t)((uint64_t)cur.ts + occ_unzz(v));
		if (b & 1) {
			p = occ_get(p, &v);
			cur.clock = (uint32_t)v;
			p = occ_get(p, &v);
			cur.machine = (uint32_t)v;
		}
		p = occ_get(p, &v);
		cur.off += occ_unzz(v); /* stored as off + 1 */
		if (out)
			out[k] = cur;
	}
	return cur;
}

uint32_t
tm_al_occs(const struct al_name *e, struct al_occ *out)
{
	occ_walk(e, out);
	return e->n;
}

uint32_t
tm_al_occs_by_time(const struct al_name *e, struct al_occ *out)
{
	occ_walk(e, out);
	/* insertion sort: stable, and n <= AL_OCC, mostly in order already */
	for (uint32_t i = 1; i < e->n; i++) {
		struct al_occ o = out[i];
		uint32_t j = i;
		for (; j > 0 && out[j - 1].ts > o.ts; j--)
			out[j] = out[j - 1];
		out[j] = o;
	}
	return e->n;
}

/* The bytes a block holding n bytes of occurrences has room for (0 for
 * none: no block). */
static size_t
occ_room(size_t n)
{
	return n == 0 ? 0 : n <= 24 ? 24 : ((n + 8 + 15) & ~(size_t)15) - 8;
}

/* Occurrence o packed at p (at most AL_OCC_MAX bytes), written against
 * prev, the one before it; returns the bytes written. */
static size_t
occ_encode(uint8_t *p, struct al_occ prev, struct al_occ o)
{
	uint8_t *p0 = p;
	/* the head byte: bit 0 set when clock and machine follow (they are
	 * not the previous one's), bits 1-6 the low bits of the ts delta,
	 * bit 7 set when its other bits follow as a varint */
	uint64_t d = occ_zz((uint64_t)o.ts - (uint64_t)prev.ts);
	bool other = o.clock != prev.clock || o.machine != prev.machine;
	*p++ = (uint8_t)((d & 0x3f) << 1 | (d >> 6 ? 0x80u : 0u) | (other ? 1u : 0u));
	if (d >> 6)
		p = occ_put(p, d >> 6);
	if (other) {
		p = occ_put(p, o.clock);
		p = occ_put(p, o.machine);
	}
	p = occ_put(p, occ_zz((o.off + 1) - (prev.off + 1)));
	return (size_t)(p - p0);
}

/* count occurrences, packed in buf[0..k), appended to e's. */
static void
occ_store(struct al_name *e, const uint8_t *buf, size_t k, uint32_t count)
{
	/* kept per member until the session closes: in blocks of the sizes
	 * malloc hands out anyway (16 n + 8 bytes, glibc), grown only when
	 * one is full, not for each occurrence (~3 bytes); out of the names
	 * block (tm_al_trim), where there is no room */
	if (e->occ_in_names)
		occ_own(e, e->occ_len + k);
	else if (e->occ_len + k > occ_room(e->occ_len)) {
		e->occ = xrealloc(e->occ, occ_room(e->occ_len + k));
	}
	memcpy(e->occ + e->occ_len, buf, k);
	e->occ_len = (uint16_t)(e->occ_len + k);
	e->n += count;
}

/* Occurrence {ts, clock, machine, off} appended to e's, written against
 * prev, e's last one (occ_walk's). */
static void
occ_append(struct al_name *e, struct al_occ prev, int64_t ts, uint32_t clock, uint32_t machine,
	   uint64_t off)
{
	uint8_t buf[AL_OCC_MAX];
	occ_store(e, buf, occ_encode(buf, prev, (struct al_occ){ts, clock, machine, off}), 1);
}

void
tm_al_name_keep_all(struct al_name *e, const struct al_occ *o, uint32_t n)
{
	uint8_t buf[AL_OCC * AL_OCC_MAX];
	struct al_occ prev = occ_walk(e, NULL);
	size_t k = 0;
	uint32_t m = 0;
	for (; m < n && e->n + m < AL_OCC; m++) {
		k += occ_encode(buf + k, prev, o[m]);
		prev = o[m];
	}
	if (m)
		occ_store(e, buf, k, m); /* one block for them all */
}

void
tm_al_name_keep(struct al_name *e, int64_t ts, uint32_t clock, uint32_t machine, uint64_t off)
{
	if (e->n >= AL_OCC)
		return;
	/* the previous occurrence, to write this one as its deltas (at most
	 * AL_OCC per name are ever kept) */
	occ_append(e, occ_walk(e, NULL), ts, clock, machine, off);
}

uint64_t tm_al_keep_walks;

void
tm_al_name_keep_in(struct tm_align_samples *a, struct al_name *e, int64_t ts, uint32_t clock,
		   uint32_t machine, uint64_t off)
{
	struct al_name_cache *c = a->cache;
	if (!c || c->no_full || e->n >= AL_OCC) {
		tm_al_name_keep(e, ts, clock, machine, off);
		return;
	}
	/* a member's name walked its kept ones once per keep: ~28 k
	 * instructions a member of 32 samples */
	uint32_t ix1 = (uint32_t)(e - a->names) + 1;
	if (ix1 > c->cap_prev) {
		size_t had = c->cap_prev;
		XGROW(c->prev, c->cap_prev, ix1);
		memset(c->prev + had, 0, (c->cap_prev - had) * sizeof *c->prev);
	}
	struct al_prev *pv = &c->prev[ix1 - 1];
	bool hit = pv->ix1 == ix1 && pv->n == e->n;
	if (!hit) /* a walk (test hook) */
		__atomic_fetch_add(&tm_al_keep_walks, 1, __ATOMIC_RELAXED);
	occ_append(e, hit ? pv->o : occ_walk(e, NULL), ts, clock, machine, off);
	*pv = (struct al_prev){{ts, clock, machine, off}, ix1, e->n};
}

/* The entries, then their strings (NUL-terminated) and occurrences, in
 * one block: ~48 bytes less than 3 blocks for a member of one name. */
static void
pack_names(struct tm_align_samples *a)
{
	size_t n = a->n_names, bytes = n * sizeof *a->names;
	for (size_t i = 0; i < n; i++)
		bytes += a->names[i].len + 1 + a->names[i].occ_len;
	struct al_name *v = xmalloc(bytes);
	memcpy(v, a->names, n * sizeof *v);
	char *p = (char *)(v + n);
	for (size_t i = 0; i < n; i++) {
		struct al_name *e = &v[i];
		memcpy(p, e->name, e->len);
		p[e->len] = '\0';
		free(e->name);
		e->name = p;
		p += e->len + 1;
		if (e->occ_len)
			memcpy(p, e->occ, e->occ_len);
		free(e->occ);
		e->occ = e->occ_len ? (uint8_t *)p : NULL;
		e->occ_in_names = e->occ_len != 0;
		p += e->occ_len;
	}
	free(a->names);
	a->names = v;
	a->cap_names = n;
	a->names_packed = true;
}

void
tm_al_trim(struct tm_align_samples *a)
{
	if (!a)
		return;
	unpack_names(a);
	if (a->n_names && !a->name_ix.cap) {
		pack_names(a);
	} else if (a->cap_names > a->n_names) {
		a->names = a->n_names ? xrealloc(a->names, a->n_names * sizeof *a->names)
				      : (free(a->names), NULL);
		a->cap_names = a->n_names;
	}
	if (a->cap_ids > a->n_ids) {
		a->ids = a->n_ids ? xrealloc(a->ids, a->n_ids * sizeof *a->ids)
				  : (free(a->ids), NULL);
		a->cap_ids = a->n_ids;
	}
}

bool
tm_al_name_add(struct tm_align_samples *a, const char *name, size_t n, int64_t ts,
	       uint32_t clock, uint32_t machine, unsigned flags, uint64_t off)
{
	struct al_name *e = tm_al_name_find(a, name, n);
	if (!e)
		return false;
	bool kept = tm_al_name_occ(a, e, ts, clock, machine, flags, off);
	struct al_name_cache *c = a->cache;
	if (e->n >= AL_OCC && c && !c->no_full) {
		struct al_key k = al_key((const uint8_t *)name, n);
		c->full_x = k.x;
		c->full_y = k.y;
		c->full_len = n;
		c->full_ix = (size_t)(e - a->names);
	}
	return kept;
}

const struct al_id *
tm_al_find_id(const struct tm_align_samples *a, const struct al_id *x)
{
	if (!a || !x || !x->ident)
		return NULL;
	const struct tm_strmap_slot *sl = tm_strmap_get(&a->id_ix, x->ident, x->ident_len);
	return sl ? &a->ids[sl->val] : NULL;
}

/* Keep only the ids whose key passes the mask (the index is rebuilt). */
static void
thin_ids(struct tm_align_samples *a)
{
	size_t k = 0;
	tm_strmap_fini(&a->id_ix);
	for (size_t i = 0; i < a->n_ids; i++) {
		if ((a->ids[i].key >> 1) & a->id_mask) {
			free(a->ids[i].ident);
			continue;
		}
		a->ids[k] = a->ids[i];
		tm_strmap_put(&a->id_ix, a->ids[k].ident, a->ids[k].ident_len, k, NULL);
		k++;
	}
	memset(a->ids + k, 0, (a->n_ids - k) * sizeof *a->ids);
	a->n_ids = k;
}

/* One start or end of the id whose identity is ident[0..n). */
static bool
id_event(struct tm_align_samples *a, const char *ident, size_t n, int64_t ts, uint32_t clock,
	 uint32_t machine, unsigned dir, uint64_t off)
{
	uint64_t key = key_hash(ident, n);
	a->n_id_events++;
	if ((key >> 1) & a->id_mask)
		return false;
	const struct tm_strmap_slot *sl = tm_strmap_get(&a->id_ix, ident, n);
	struct al_id *e;
	if (sl) {
		e = &a->ids[sl->val];
	} else {
		if (a->n_ids + 1 > AL_IDS) {
			/* thin: keep half, by the key (the same in every file) */
			a->id_mask = a->id_mask * 2 + 1;
			thin_ids(a);
			if ((key >> 1) & a->id_mask)
				return false;
		}
		grow_zeroed((void **)&a->ids, &a->cap_ids, a->n_ids + 1, sizeof *a->ids);
		e = &a->ids[a->n_ids];
		e->key = key;
		e->ident = xmalloc(n ? n : 1);
		memcpy(e->ident, ident, n);
		e->ident_len = n;
		tm_strmap_put(&a->id_ix, e->ident, n, a->n_ids, NULL);
		a->n_ids++;
	}
	struct al_occ o = {ts, clock, machine, off};
	bool kept = false;
	if ((dir & AL_OUT) && !(e->have & AL_OUT)) {
		e->out = o;
		e->have |= AL_OUT;
		kept = true;
	}
	if ((dir & AL_IN) && !(e->have & AL_IN)) {
		e->in = o;
		e->have |= AL_IN;
		kept = true;
	}
	return kept;
}

bool
tm_al_id(struct tm_align_samples *a, enum al_kind kind, uint64_t id, int64_t ts, uint32_t clock,
	 uint32_t machine, unsigned dir, uint64_t off)
{
	char ident[9];
	ident[0] = (char)kind;
	memcpy(ident + 1, &id, 8);
	return id_event(a, ident, sizeof ident, ts, clock, machine, dir, off);
}

void
tm_al_async(struct tm_align_samples *a, const char *name, size_t n, uint64_t id, int64_t ts,
	    uint32_t clock, uint32_t machine, unsigned dir)
{
	char small[256];
	size_t len = 9 + n;
	char *ident = len <= sizeof small ? small : xmalloc(len);
	ident[0] = (char)AL_ASYNC;
	memcpy(ident + 1, &id, 8);
	if (n)
		memcpy(ident + 9, name, n);
	(void)id_event(a, ident, len, ts, clock, machine, dir, AL_NO_OFF);
	if (ident != small)
		free(ident);
}

void
tm_al_atrace(struct tm_align_samples *a, const struct tm_atrace_point *p, int64_t ts, uint32_t clock,
	     uint32_t machine)
{
	switch (p->phase) {
	case 'B':
		tm_al_name(a, p->name, p->name_len, ts, clock, machine, 0);
		break;
	case 'I':
	case 'N':
		tm_al_name(a, p->name, p->name_len, ts, clock, machine, AL_INSTANT);
		break;
	case 'S':
	case 'F':
		tm_al_async(a, p->name, p->name_len, (uint64_t)p->value, ts, clock, machine,
			    p->phase == 'S' ? AL_OUT : AL_IN);
		tm_al_name(a, p->name, p->name_len, ts, clock, machine, 0);
		break;
	default:
		break;
	}
}

void
tm_al_json_ids(struct tm_align_samples *a, char phase, const char *name, size_t nl, bool has_id,
	       uint64_t id, int64_t ts)
{
	switch (phase) {
	case 's':
	case 'f':
		if (has_id)
			tm_al_id(a, AL_FLOW, id, ts, 0, 0, phase == 's' ? AL_OUT : AL_IN, AL_NO_OFF);
		break;
	case 'b':
	case 'e':
	case 'S':
	case 'F':
		if (has_id)
			tm_al_async(a, name, name ? nl : 0, id, ts, 0, 0,
				    phase == 'b' || phase == 'S' ? AL_OUT : AL_IN);
		if (phase == 'b' || phase == 'S')
			tm_al_name(a, name, nl, ts, 0, 0, 0);
		break;
	default:
		break;
	}
}

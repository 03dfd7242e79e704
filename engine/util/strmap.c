/* SPDX-License-Identifier: MIT */
/* Open-addressing hash maps (linear probing, load at most 1/2); see strmap.h. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "strmap.h"

#ifdef TM_COUNT_WORK
uint64_t tm_work_probes;
#endif

uint64_t
tm_work_count(void)
{
#ifdef TM_COUNT_WORK
	return __atomic_load_n(&tm_work_probes, __ATOMIC_RELAXED);
#else
	return UINT64_MAX;
#endif
}

static uint64_t
hash_bytes(const char *s, size_t n)
{
	return tm_mix64(tm_fnv1a(TM_FNV_INIT, s, n));
}

void
tm_strmap_fini(struct tm_strmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof *m);
}

static struct tm_strmap_slot *
str_find(const struct tm_strmap *m, const char *key, size_t len, uint64_t h)
{
	size_t mask = m->cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct tm_strmap_slot *s = &m->slots[i];

		TM_PROBE();
		if (!s->key || (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0))
			return s;
	}
}

struct tm_strmap_slot *
tm_strmap_get(const struct tm_strmap *m, const char *key, size_t len)
{
	struct tm_strmap_slot *s;

	if (!m->cap)
		return NULL;
	s = str_find(m, key, len, hash_bytes(key, len));
	return s->key ? s : NULL;
}

struct tm_strmap_slot *
tm_strmap_put(struct tm_strmap *m, const char *key, size_t len, size_t val, bool *added)
{
	uint64_t h = hash_bytes(key, len);
	struct tm_strmap_slot *s;

	if (2 * (m->n + 1) > m->cap) {
		struct tm_strmap old = *m;

		m->cap = m->cap ? 2 * m->cap : 4; /* small: a map per scan of each member */
		m->slots = xcalloc(m->cap, sizeof *m->slots);
		for (size_t i = 0; i < old.cap; i++)
			if (old.slots[i].key)
				*str_find(m, old.slots[i].key, old.slots[i].len, old.slots[i].hash) =
					old.slots[i];
		free(old.slots);
	}
	s = str_find(m, key, len, h);
	if (added)
		*added = !s->key;
	if (!s->key) {
		s->key = key;
		s->len = len;
		s->hash = h;
		s->val = val;
		m->n++;
	}
	return s;
}

void
tm_ixmap_fini(struct tm_ixmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->n = m->cap = 0;
}

/* Where key is in m (its slot holds it) or would go (the slot is 0). */
static uint64_t *
ix_find(const struct tm_ixmap *m, const char *key, size_t len, uint64_t h)
{
	size_t mask = m->cap - 1;
	uint32_t hh = (uint32_t)(h >> 32);

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		uint64_t *s = &m->slots[i];
		size_t nl;
		const char *name;

		TM_PROBE();
		if (!*s)
			return s;
		if ((uint32_t)(*s >> 32) == hh &&
		    (name = m->name_of(m->ctx, (size_t)(uint32_t)*s - 1, &nl)) && nl == len &&
		    memcmp(name, key, len) == 0)
			return s;
	}
}

bool
tm_ixmap_get(const struct tm_ixmap *m, const char *key, size_t len, size_t *ix)
{
	if (!m->cap)
		return false;
	uint64_t *s = ix_find(m, key, len, hash_bytes(key, len));
	if (!*s)
		return false;
	*ix = (size_t)(uint32_t)*s - 1;
	return true;
}

bool
tm_ixmap_put(struct tm_ixmap *m, const char *key, size_t len, size_t ix, size_t *had)
{
	if (ix >= UINT32_MAX - 1)
		abort(); /* no input has 4 G entries: the listing stops long before */
	if (2 * (m->n + 1) > m->cap) {
		uint64_t *old = m->slots;
		size_t ocap = m->cap;

		m->cap = m->cap ? 2 * m->cap : 16;
		m->slots = xcalloc(m->cap, sizeof *m->slots);
		for (size_t i = 0; i < ocap; i++) {
			if (!old[i])
				continue;
			size_t nl, k = (size_t)(uint32_t)old[i] - 1;
			const char *name = m->name_of(m->ctx, k, &nl);
			/* the names are distinct: the first empty slot from its
			 * hash is its place */
			size_t mask = m->cap - 1, j = hash_bytes(name, nl) & mask;
			while (m->slots[j])
				j = (j + 1) & mask;
			m->slots[j] = old[i];
		}
		free(old);
	}
	uint64_t h = hash_bytes(key, len);
	uint64_t *s = ix_find(m, key, len, h);
	if (*s) {
		if (had)
			*had = (size_t)(uint32_t)*s - 1;
		return false;
	}
	*s = (h >> 32) << 32 | (uint64_t)(ix + 1);
	m->n++;
	return true;
}

void
tm_u64map_fini(struct tm_u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof *m);
}

static size_t
u64_find(const struct tm_u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1;

	for (size_t i = tm_mix64(key) & mask;; i = (i + 1) & mask) {
		TM_PROBE();
		if (!m->used[i] || m->keys[i] == key)
			return i;
	}
}

bool
tm_u64map_get(const struct tm_u64map *m, uint64_t key, size_t *val)
{
	size_t i;

	if (!m->cap)
		return false;
	i = u64_find(m, key);
	if (!m->used[i])
		return false;
	*val = m->vals[i];
	return true;
}

void
tm_u64map_set(struct tm_u64map *m, uint64_t key, size_t val)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		struct tm_u64map old = *m;

		m->cap = m->cap ? 2 * m->cap : 4; /* small: a map per scan of each member */
		m->keys = xcalloc(m->cap, sizeof *m->keys);
		m->vals = xcalloc(m->cap, sizeof *m->vals);
		m->used = xcalloc(m->cap, 1);
		m->n = 0;
		for (size_t j = 0; j < old.cap; j++)
			if (old.used[j])
				tm_u64map_set(m, old.keys[j], old.vals[j]);
		tm_u64map_fini(&old);
	}
	i = u64_find(m, key);
	if (!m->used[i]) {
		m->used[i] = 1;
		m->keys[i] = key;
		m->n++;
	}
	m->vals[i] = val;
}

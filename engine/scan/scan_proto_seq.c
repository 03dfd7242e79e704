/* SPDX-License-Identifier: MIT */
/*
 * The proto scanner's sequences and interned event names
 * (scan_proto_priv.h): the tables' slow paths, a new sequence and a new or
 * stale name; the lookups that find one are inline in the header.
 */
#include <stdlib.h>
#include <string.h>

#include "scan_proto_priv.h"

/* Sequences are stored densely in first-seen order (writers usually take
 * turns in that order, so the lookups walk memory forward); seq_ix hashes a
 * key to its index + 1, and seq_cache maps a sequence id straight to its
 * index (checked on use). */
static void
seq_ix_grow(struct ps *s)
{
	size_t nc = s->cap_ix ? s->cap_ix * 2 : 64;
	uint32_t *ix = xcalloc(nc, sizeof *ix);
	for (size_t i = 0; i < s->n_seqs; i++) {
		size_t j = tm_mix64(s->seqs[i].key) & (nc - 1);
		while (ix[j])
			j = (j + 1) & (nc - 1);
		ix[j] = (uint32_t)i + 1;
	}
	free(s->seq_ix);
	s->seq_ix = ix;
	s->cap_ix = nc;
}

struct seq *
tm_ps_get_seq_slow(struct ps *s, uint64_t key)
{
	size_t i;
	if (s->n_seqs && s->seqs[s->last_seq].key == key) {
		i = s->last_seq;
		goto out;
	}
	if ((s->n_seqs + 1) * 2 > s->cap_ix)
		seq_ix_grow(s);
	size_t j = tm_mix64(key) & (s->cap_ix - 1);
	while (s->seq_ix[j]) {
		i = s->seq_ix[j] - 1;
		if (s->seqs[i].key == key)
			goto out;
		j = (j + 1) & (s->cap_ix - 1);
	}
	XGROW(s->seqs, s->cap_seqs, s->n_seqs + 1);
	i = s->n_seqs++;
	if (s->n_seqs * 2 > (size_t)s->seq_mask + 1 && s->seq_mask + 1 < SEQ_CACHE) {
		/* a bigger cache, filled again as sequences are looked up */
		uint32_t nc = (s->seq_mask + 1) * 4;
		free(s->seq_cache);
		s->seq_cache = xcalloc(nc, sizeof *s->seq_cache);
		s->seq_mask = nc - 1;
	}
	memset(&s->seqs[i], 0, sizeof s->seqs[i]);
	s->seqs[i].key = key;
	s->seqs[i].gen = ++s->n_gens;
	s->seqs[i].id = (uint32_t)i;
	s->seq_ix[j] = (uint32_t)i + 1;
out:
	s->last_seq = i;
	s->seq_cache[((uint32_t)key ^ (uint32_t)(key >> 32) * 0x9e3779b9u) & s->seq_mask] =
		(uint32_t)i;
	return &s->seqs[i];
}

/* Room for one more name: the table without its stale entries when they
 * are half of it or more, or when compact (and the pool then with the valid
 * names alone), of the size that leaves it at most half full. */
static void
names_grow(struct ps *s, bool compact)
{
	bool drop = compact || (s->n_stale && s->n_stale * 2 >= s->n_names);
	size_t live = s->n_names - (drop ? s->n_stale : 0);
	size_t nc = s->cap_names ? s->cap_names : 256;
	while ((live + 1) * 2 > nc)
		nc *= 2;
	struct iname *nn = xcalloc(nc, sizeof *nn);
	struct tm_buf pool;
	if (drop)
		tm_buf_init(&pool);
	for (size_t i = 0; i < s->cap_names; i++) {
		struct iname e = s->names[i];
		if (!e.gen)
			continue;
		const struct seq *q = &s->seqs[e.seq];
		if (drop) {
			if (e.gen != q->gen)
				continue;
			if (e.off != NAME_NULL) {
				uint32_t off = (uint32_t)pool.len;
				tm_buf_add(&pool, s->npool.data + e.off, e.len);
				e.off = off;
			}
		}
		size_t j = name_hash(q, e.iid) & (nc - 1);
		while (nn[j].gen)
			j = (j + 1) & (nc - 1);
		nn[j] = e;
	}
	if (drop) {
		tm_buf_fini(&s->npool);
		s->npool = pool;
		s->n_names -= s->n_stale;
		s->n_stale = 0;
		s->pool_dead = 0;
	}
	free(s->names);
	s->names = nn;
	s->cap_names = nc;
}

/* name_put past its first case (no name of the iid in this generation): a
 * new entry, or the sequence's stale one of the iid.  str NULL: a null
 * name (NAME_NULL), nothing in the pool. */
__attribute__((noinline)) void
tm_ps_name_put_slow(struct ps *s, struct seq *q, uint64_t iid, const uint8_t *str, size_t len)
{
	/* a pool mostly of replaced names is compacted (at most once in 8
	 * bytes replaced a slot: the table is walked) */
	bool dead = s->pool_dead * 2 > s->npool.len;
	if ((s->n_names + 1) * 2 > s->cap_names || (dead && s->pool_dead >= s->cap_names * 8))
		names_grow(s, dead);
	size_t m = s->cap_names - 1, j = name_hash(q, iid) & m;
	struct iname *e;
	while ((e = &s->names[j])->gen && (e->iid != iid || e->seq != q->id))
		j = (j + 1) & m;
	if (!e->gen) {
		/* (the pool's buffer allocated by now, for memcmp and memcpy) */
		s->n_names++;
		q->n_names++;
		*e = (struct iname){.iid = iid, .gen = q->gen, .seq = q->id,
				    .off = str ? (uint32_t)s->npool.len : NAME_NULL,
				    .len = (uint32_t)len};
		if (str)
			tm_buf_add(&s->npool, str, len);
		return;
	}
	/* the sequence's stale name of this iid: this generation's now */
	s->n_stale--;
	q->n_names++;
	e->gen = q->gen;
	bool was_null = e->off == NAME_NULL;
	if (was_null ? !str : str && e->len == len && !memcmp(s->npool.data + e->off, str, len))
		return; /* its sample's index too (it depends on the name alone) */
	e->al = 0;
	if (!str) {
		s->pool_dead += e->len;
		e->off = NAME_NULL;
		e->len = 0;
		return;
	}
	if (!was_null && e->len >= len) {
		/* in place, so the pool stays the size of the distinct names */
		memcpy(s->npool.data + e->off, str, len);
		s->pool_dead += e->len - len;
	} else {
		s->pool_dead += e->len; /* 0 if null */
		e->off = (uint32_t)s->npool.len;
		tm_buf_add(&s->npool, str, len);
	}
	e->len = (uint32_t)len;
}


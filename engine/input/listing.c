/* SPDX-License-Identifier: MIT */
/*
 * The listing while it runs (tm_listing, tracemerge.h): archive.c puts each
 * member as its walk finds and sniffs it, a front end's thread copies what
 * is there.  One mutex guards the table; the byte counters are the
 * listing's own atomics (tm_work), read while the open runs and copied when
 * it ends.  Members are appended in walk order; a member changed later (a
 * gzip child's size known at the end of its stream) or members unlisted
 * (trace_processor never registers an entry the container cuts short) bump
 * a generation, and the next snapshot copies the table whole instead of
 * only its new rows.  Names are copied once and kept until tm_listing_free,
 * so a snapshot's borrowed names outlive any later change.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"

struct tm_listing {
	pthread_mutex_t mu;
	struct tm_listing_member *v;
	size_t n, cap;
	char **names; /* every name copied, freed with the listing */
	size_t n_names, cap_names;
	uint64_t gen;     /* bumped by anything but an append */
	uint64_t version; /* bumped by every change */
	uint64_t input_bytes;
	const uint64_t *read_pos, *inflated; /* while the open runs (atomics) */
	uint64_t read_end, inflated_end;     /* once it has ended */
	bool is_final;
};

struct tm_listing *
tm_listing_new(void)
{
	struct tm_listing *l = xcalloc(1, sizeof *l);
	pthread_mutex_init(&l->mu, NULL);
	return l;
}

void
tm_listing_free(struct tm_listing *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n_names; i++)
		free(l->names[i]);
	free(l->names);
	free(l->v);
	pthread_mutex_destroy(&l->mu);
	free(l);
}

void
tm_listing_begin(struct tm_listing *l, uint64_t input_bytes, const uint64_t *read_pos,
		 const uint64_t *inflated)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->input_bytes = input_bytes;
	l->read_pos = read_pos;
	l->inflated = inflated;
	l->version++;
	pthread_mutex_unlock(&l->mu);
}

static const char *
keep_name(struct tm_listing *l, const struct tm_member *m)
{
	if (!m->name)
		return NULL;
	XGROW(l->names, l->cap_names, l->n_names + 1);
	char *c = xmalloc(m->name_len + 1);
	memcpy(c, m->name, m->name_len);
	c[m->name_len] = 0;
	return l->names[l->n_names++] = c;
}

void
tm_listing_put(struct tm_listing *l, size_t i, const struct tm_member *m)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	if (i <= l->n) {
		struct tm_listing_member e = {.name_len = m->name_len,
					      .size = m->size,
					      .format = m->format,
					      .parent = m->parent,
					      .is_hidden = m->is_hidden};
		if (i < l->n) {
			const struct tm_listing_member *o = &l->v[i];
			bool same = (o->name == NULL) == (m->name == NULL) &&
				    o->name_len == m->name_len &&
				    (!m->name || memcmp(o->name, m->name, m->name_len) == 0);
			e.name = same ? o->name : keep_name(l, m);
			l->gen++;
		} else {
			e.name = keep_name(l, m);
			XGROW(l->v, l->cap, l->n + 1);
			l->n++;
		}
		l->v[i] = e;
		l->version++;
	}
	pthread_mutex_unlock(&l->mu);
}

void
tm_listing_truncate(struct tm_listing *l, size_t n)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	if (n < l->n) {
		l->n = n;
		l->gen++;
		l->version++;
	}
	pthread_mutex_unlock(&l->mu);
}

void
tm_listing_end(struct tm_listing *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	if (l->read_pos)
		l->read_end = __atomic_load_n(l->read_pos, __ATOMIC_RELAXED);
	if (l->inflated)
		l->inflated_end = __atomic_load_n(l->inflated, __ATOMIC_RELAXED);
	l->read_pos = l->inflated = NULL;
	l->version++;
	pthread_mutex_unlock(&l->mu);
}

void
tm_listing_finish(struct tm_listing *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->is_final = true;
	l->version++;
	pthread_mutex_unlock(&l->mu);
}

void
tm_listing_snap_init(struct tm_listing_snap *sn)
{
	memset(sn, 0, sizeof *sn);
	sn->gen_ = UINT64_MAX; /* the first snapshot copies the table whole */
}

void
tm_listing_snap_fini(struct tm_listing_snap *sn)
{
	free(sn->members);
	tm_listing_snap_init(sn);
}

bool
tm_listing_snapshot(struct tm_listing *l, struct tm_listing_snap *sn)
{
	pthread_mutex_lock(&l->mu);
	bool changed = sn->version != l->version || sn->gen_ != l->gen;
	size_t from = sn->gen_ == l->gen && sn->n <= l->n ? sn->n : 0;
	if (l->n > sn->cap_) {
		size_t nc = sn->cap_ ? sn->cap_ : 64;
		while (nc < l->n)
			nc *= 2;
		sn->members = xrealloc(sn->members, nc * sizeof *sn->members);
		sn->cap_ = nc;
	}
	if (l->n > from)
		memcpy(sn->members + from, l->v + from, (l->n - from) * sizeof *l->v);
	sn->n = l->n;
	sn->gen_ = l->gen;
	sn->version = l->version;
	uint64_t rd = l->read_pos ? __atomic_load_n(l->read_pos, __ATOMIC_RELAXED) : l->read_end;
	uint64_t inf = l->inflated ? __atomic_load_n(l->inflated, __ATOMIC_RELAXED)
				   : l->inflated_end;
	if (rd > l->input_bytes)
		rd = l->input_bytes; /* (a file grown since its stat) */
	changed |= rd != sn->read_bytes || inf != sn->inflated_bytes ||
		   sn->is_final != l->is_final || sn->input_bytes != l->input_bytes;
	sn->read_bytes = rd;
	sn->inflated_bytes = inf;
	sn->input_bytes = l->input_bytes;
	sn->is_final = l->is_final;
	pthread_mutex_unlock(&l->mu);
	return changed;
}

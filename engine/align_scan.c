/* SPDX-License-Identifier: MIT */
/* Bounded alignment samples collected during the scan (align_scan.h). */
#include "align_scan.h"

#include <stdlib.h>
#include <string.h>

#include "atrace.h"

uint64_t
tm_al_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h ? h : 1;
}

uint64_t
tm_al_id_key(enum al_kind kind, uint64_t id)
{
	uint64_t k = tm_mix64(id ^ ((uint64_t)kind << 60)) | 1; /* never 0 */
	return k;
}

struct tm_align_samples *
tm_al_new(void)
{
	struct tm_align_samples *a = xcalloc(1, sizeof *a);
	return a;
}

void
tm_al_free(struct tm_align_samples *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->cap_names; i++)
		free(a->names[i].name);
	free(a->names);
	free(a->ids);
	free(a);
}

static void
names_grow(struct tm_align_samples *a)
{
	size_t nc = a->cap_names ? a->cap_names * 2 : 4; /* most files have few names */
	struct al_name *nn = xcalloc(nc, sizeof *nn);
	for (size_t i = 0; i < a->cap_names; i++) {
		if (!a->names[i].h)
			continue;
		size_t j = tm_mix64(a->names[i].h) & (nc - 1);
		while (nn[j].h)
			j = (j + 1) & (nc - 1);
		nn[j] = a->names[i];
	}
	free(a->names);
	a->names = nn;
	a->cap_names = nc;
}

static struct al_name *
name_slot(const struct tm_align_samples *a, uint64_t h)
{
	if (!a || !a->cap_names)
		return NULL;
	size_t j = tm_mix64(h) & (a->cap_names - 1);
	while (a->names[j].h) {
		if (a->names[j].h == h)
			return &a->names[j];
		j = (j + 1) & (a->cap_names - 1);
	}
	return NULL;
}

void
tm_al_name(struct tm_align_samples *a, const char *name, size_t n, int64_t ts, uint32_t clock,
	   uint32_t machine, unsigned flags)
{
	if (!name || !n)
		return;
	uint64_t h = tm_al_hash(name, n);
	struct al_name *e = name_slot(a, h);
	if (!e) {
		if (a->n_names >= AL_NAMES) {
			a->names_full = true;
			return;
		}
		if ((a->n_names + 1) * 2 > a->cap_names)
			names_grow(a);
		size_t j = tm_mix64(h) & (a->cap_names - 1);
		while (a->names[j].h)
			j = (j + 1) & (a->cap_names - 1);
		e = &a->names[j];
		e->h = h;
		e->name = xstrndup(name, n);
		e->all_instant = true;
		a->n_names++;
	}
	e->count++;
	e->all_instant &= (flags & AL_INSTANT) != 0;
	if (e->n < AL_OCC)
		e->occ[e->n++] = (struct al_occ){ts, clock, machine};
}

static void
ids_put(struct tm_align_samples *a, const struct al_id *src)
{
	size_t j = tm_mix64(src->key) & (a->cap_ids - 1);
	while (a->ids[j].key && a->ids[j].key != src->key)
		j = (j + 1) & (a->cap_ids - 1);
	if (!a->ids[j].key)
		a->n_ids++;
	a->ids[j] = *src;
}

static struct al_id *
id_slot(const struct tm_align_samples *a, uint64_t key)
{
	if (!a || !a->cap_ids)
		return NULL;
	size_t j = tm_mix64(key) & (a->cap_ids - 1);
	while (a->ids[j].key) {
		if (a->ids[j].key == key)
			return &a->ids[j];
		j = (j + 1) & (a->cap_ids - 1);
	}
	return NULL;
}

void
tm_al_id(struct tm_align_samples *a, enum al_kind kind, uint64_t id, int64_t ts, uint32_t clock,
	 uint32_t machine, unsigned dir)
{
	uint64_t key = tm_al_id_key(kind, id);
	a->n_id_events++;
	if ((key >> 1) & a->id_mask)
		return;
	if (!a->cap_ids) {
		a->cap_ids = 1024;
		a->ids = xcalloc(a->cap_ids, sizeof *a->ids);
	}
	struct al_id *e = id_slot(a, key);
	if (!e) {
		if (a->n_ids + 1 > AL_IDS) {
			/* thin: keep half, by the id's hash (the same in every file) */
			a->id_mask = a->id_mask * 2 + 1;
			struct al_id *old = a->ids;
			size_t oc = a->cap_ids;
			a->ids = xcalloc(oc, sizeof *a->ids);
			a->n_ids = 0;
			for (size_t i = 0; i < oc; i++)
				if (old[i].key && !((old[i].key >> 1) & a->id_mask))
					ids_put(a, &old[i]);
			free(old);
			if ((key >> 1) & a->id_mask)
				return;
		} else if ((a->n_ids + 1) * 2 > a->cap_ids) {
			struct al_id *old = a->ids;
			size_t oc = a->cap_ids;
			a->cap_ids *= 2;
			a->ids = xcalloc(a->cap_ids, sizeof *a->ids);
			a->n_ids = 0;
			for (size_t i = 0; i < oc; i++)
				if (old[i].key)
					ids_put(a, &old[i]);
			free(old);
		}
		struct al_id fresh = {.key = key};
		ids_put(a, &fresh);
		e = id_slot(a, key);
	}
	struct al_occ o = {ts, clock, machine};
	if ((dir & AL_OUT) && !(e->have & AL_OUT)) {
		e->out = o;
		e->have |= AL_OUT;
	}
	if ((dir & AL_IN) && !(e->have & AL_IN)) {
		e->in = o;
		e->have |= AL_IN;
	}
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
		tm_al_id(a, AL_ASYNC, tm_al_hash(p->name, p->name_len) ^ (uint64_t)p->value, ts, clock,
			 machine, p->phase == 'S' ? AL_OUT : AL_IN);
		tm_al_name(a, p->name, p->name_len, ts, clock, machine, 0);
		break;
	default:
		break;
	}
}

void
tm_al_json(struct tm_align_samples *a, char phase, const char *name, size_t nl, bool has_id,
	   uint64_t id, int64_t ts)
{
	switch (phase) {
	case 'i':
	case 'I':
	case 'n':
	case 'R':
		tm_al_name(a, name, nl, ts, 0, 0, AL_INSTANT);
		break;
	case 'B':
	case 'X':
		tm_al_name(a, name, nl, ts, 0, 0, 0);
		break;
	case 's':
	case 'f':
		if (has_id)
			tm_al_id(a, AL_FLOW, id, ts, 0, 0, phase == 's' ? AL_OUT : AL_IN);
		break;
	case 'b':
	case 'e':
	case 'S':
	case 'F':
		if (has_id)
			tm_al_id(a, AL_ASYNC, tm_al_hash(name ? name : "", nl) ^ id, ts, 0, 0,
				 phase == 'b' || phase == 'S' ? AL_OUT : AL_IN);
		if (phase == 'b' || phase == 'S')
			tm_al_name(a, name, nl, ts, 0, 0, 0);
		break;
	default:
		break;
	}
}

const struct al_name *
tm_al_find_name(const struct tm_align_samples *a, uint64_t h)
{
	return name_slot(a, h);
}

const struct al_id *
tm_al_find_id(const struct tm_align_samples *a, uint64_t key)
{
	return id_slot(a, key);
}

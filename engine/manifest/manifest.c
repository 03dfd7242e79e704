/* SPDX-License-Identifier: MIT */
/*
 * Manifest model: lifetime (init, fini, copy), equality and the predicates
 * on a model.  The rest of the manifest module (reading, validation, apply,
 * emission, hints, editing) is in the other manifest_*.c files; see
 * manifest_priv.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_priv.h"

/* ------------------------------------------------------------------ */
/* Model lifetime                                                      */
/* ------------------------------------------------------------------ */

void
tm_mf_index_free(struct mf_index *ix)
{
	if (!ix)
		return;
	tm_strmap_fini(&ix->map);
	free(ix);
}

void
tm_manifest_files_changed(struct tm_manifest *m)
{
	tm_mf_index_free(__atomic_exchange_n(&m->files_ix, NULL, __ATOMIC_ACQ_REL));
}

void
tm_manifest_init(struct tm_manifest *m)
{
	memset(m, 0, sizeof *m);
	m->version = 1;
}

void
tm_mf_clocks_fini(struct tm_manifest_clocks *c)
{
	free(c->machine);
	free(c->sync_file);
	free(c->sync_machine);
	cJSON_Delete(c->extra);
	cJSON_Delete(c->sync_extra);
	memset(c, 0, sizeof *c);
}

void
tm_mf_machines_clear(struct tm_manifest_file *f)
{
	for (size_t i = 0; i < f->n_machines; i++)
		free(f->machines[i].name);
	free(f->machines);
	f->machines = NULL;
	f->n_machines = 0;
	f->has_machines = false;
}

void
tm_mf_file_fini(struct tm_manifest_file *f)
{
	free(f->path);
	free(f->machine_name);
	cJSON_Delete(f->machine_extra);
	tm_mf_machines_clear(f);
	tm_mf_clocks_fini(&f->clocks);
	cJSON_Delete(f->extra);
	memset(f, 0, sizeof *f);
}

void
tm_mf_attr_fini(struct tm_manifest_attr *a)
{
	free(a->key);
	free(a->sval);
}

void
tm_manifest_fini(struct tm_manifest *m)
{
	free(m->tt_file);
	free(m->tt_machine);
	cJSON_Delete(m->tt_extra);
	for (size_t i = 0; i < m->n_files; i++)
		tm_mf_file_fini(&m->files[i]);
	free(m->files);
	for (size_t i = 0; i < m->n_attrs; i++)
		tm_mf_attr_fini(&m->attrs[i]);
	free(m->attrs);
	cJSON_Delete(m->extra);
	cJSON_Delete(m->root_extra);
	tm_manifest_files_changed(m);
	tm_manifest_init(m);
}

static cJSON *
dup_json(const cJSON *j)
{
	cJSON *d;

	if (!j)
		return NULL;
	d = cJSON_Duplicate(j, 1);
	if (!d)
		abort();
	return d;
}

void
tm_manifest_copy(struct tm_manifest *dst, const struct tm_manifest *src)
{
	*dst = *src;
	dst->files_ix = NULL; /* built again on its first look-up */
	dst->tt_file = xstrdup0(src->tt_file);
	dst->tt_machine = xstrdup0(src->tt_machine);
	dst->tt_extra = dup_json(src->tt_extra);
	dst->extra = dup_json(src->extra);
	dst->root_extra = dup_json(src->root_extra);
	dst->files = src->n_files ? xcalloc(src->n_files, sizeof *dst->files) : NULL;
	for (size_t i = 0; i < src->n_files; i++) {
		const struct tm_manifest_file *s = &src->files[i];
		struct tm_manifest_file *d = &dst->files[i];

		*d = *s;
		d->path = s->path_len ? xstrndup(s->path, s->path_len) : xstrdup0(s->path);
		d->machine_name = xstrdup0(s->machine_name);
		d->machine_extra = dup_json(s->machine_extra);
		d->machines = s->n_machines ? xcalloc(s->n_machines, sizeof *d->machines) : NULL;
		for (size_t j = 0; j < s->n_machines; j++) {
			d->machines[j].id = s->machines[j].id;
			d->machines[j].name = xstrdup0(s->machines[j].name);
		}
		d->clocks.machine = xstrdup0(s->clocks.machine);
		d->clocks.sync_file = xstrdup0(s->clocks.sync_file);
		d->clocks.sync_machine = xstrdup0(s->clocks.sync_machine);
		d->clocks.extra = dup_json(s->clocks.extra);
		d->clocks.sync_extra = dup_json(s->clocks.sync_extra);
		d->extra = dup_json(s->extra);
	}
	dst->attrs = src->n_attrs ? xcalloc(src->n_attrs, sizeof *dst->attrs) : NULL;
	for (size_t i = 0; i < src->n_attrs; i++) {
		dst->attrs[i] = src->attrs[i];
		dst->attrs[i].key = xstrdup0(src->attrs[i].key);
		dst->attrs[i].sval = xstrdup0(src->attrs[i].sval);
	}
}

bool
tm_mf_str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

static bool
json_eq(const cJSON *a, const cJSON *b)
{
	if (!a || !b)
		return a == b;
	return cJSON_Compare(a, b, 1);
}

static bool
clocks_eq(const struct tm_manifest_clocks *a, const struct tm_manifest_clocks *b)
{
	return tm_mf_str_eq(a->machine, b->machine) && a->clock == b->clock &&
	       tm_mf_str_eq(a->sync_file, b->sync_file) && tm_mf_str_eq(a->sync_machine, b->sync_machine) &&
	       a->sync_clock == b->sync_clock && a->offset_ns == b->offset_ns &&
	       json_eq(a->extra, b->extra) && json_eq(a->sync_extra, b->sync_extra);
}

static bool
file_eq(const struct tm_manifest_file *a, const struct tm_manifest_file *b)
{
	if (!tm_mf_str_eq(a->path, b->path) || !tm_mf_str_eq(a->machine_name, b->machine_name) ||
	    !json_eq(a->machine_extra, b->machine_extra) || a->has_machines != b->has_machines ||
	    a->n_machines != b->n_machines || a->has_clocks != b->has_clocks ||
	    !json_eq(a->extra, b->extra))
		return false;
	for (size_t i = 0; i < a->n_machines; i++)
		if (a->machines[i].id != b->machines[i].id ||
		    !tm_mf_str_eq(a->machines[i].name, b->machines[i].name))
			return false;
	return !a->has_clocks || clocks_eq(&a->clocks, &b->clocks);
}

bool
tm_manifest_equal(const struct tm_manifest *a, const struct tm_manifest *b)
{
	if (a->version != b->version || a->has_trace_time != b->has_trace_time ||
	    a->has_files != b->has_files || a->n_files != b->n_files ||
	    a->has_attributes != b->has_attributes || a->n_attrs != b->n_attrs ||
	    !json_eq(a->extra, b->extra) || !json_eq(a->root_extra, b->root_extra))
		return false;
	if (a->has_trace_time &&
	    (a->tt_clock != b->tt_clock || !tm_mf_str_eq(a->tt_file, b->tt_file) ||
	     !tm_mf_str_eq(a->tt_machine, b->tt_machine) || !json_eq(a->tt_extra, b->tt_extra)))
		return false;
	for (size_t i = 0; i < a->n_files; i++)
		if (!file_eq(&a->files[i], &b->files[i]))
			return false;
	for (size_t i = 0; i < a->n_attrs; i++) {
		const struct tm_manifest_attr *x = &a->attrs[i], *y = &b->attrs[i];

		if (!tm_mf_str_eq(x->key, y->key) || x->is_int != y->is_int ||
		    (x->is_int ? x->ival != y->ival : !tm_mf_str_eq(x->sval, y->sval)))
			return false;
	}
	return true;
}

bool
tm_manifest_file_is_table(const struct tm_manifest_file *f)
{
	return f->extra && cJSON_GetObjectItemCaseSensitive(f->extra, "__exported_table_schema");
}

bool
tm_manifest_is_trivial(const struct tm_manifest *m)
{
	if (m->version != 1 || m->has_trace_time || m->n_attrs || m->extra || m->root_extra)
		return false;
	for (size_t i = 0; i < m->n_files; i++) {
		const struct tm_manifest_file *f = &m->files[i];

		if (f->machine_name || f->has_machines || f->has_clocks || f->extra ||
		    f->machine_extra)
			return false;
	}
	return true;
}

enum tm_status
tm_mf_err(struct tm_error *err, const char *fmt, ...)
{
	char buf[sizeof err->msg];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return tm_error_set(err, TM_ERR_MANIFEST, "%s", buf);
}

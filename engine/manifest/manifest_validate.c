/* SPDX-License-Identifier: MIT */
/*
 * Manifest validation: tm_manifest_parse reads perfetto_manifest JSON and
 * checks it exactly as trace_processor's reader (src/trace_processor/
 * plugins/perfetto_manifest/perfetto_manifest_reader.cc) does.
 *
 * Validation runs the reader's checks in its order (OnPushDataToSorter:
 * the version, trace_time, ParseFileEntry per files[] entry with
 * ParseClocks, then the attributes, then the apply-time resolution via
 * tm_manifest_apply without an archive).
 * Object members are visited in std::map order where the reader iterates
 * them (attributes: byte order of the keys, so the first bad attribute in
 * that order is the one reported).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_priv.h"

/* ------------------------------------------------------------------ */
/* Validation (OnPushDataToSorter, ParseFileEntry, ParseClocks, ...)    */
/* ------------------------------------------------------------------ */

static enum tm_status
clock_name(const cJSON *v, uint32_t *out, struct tm_error *err)
{
	if (!tm_mj_is_str(v))
		return tm_mf_err(err, PFX "clock name must be a string");
	*out = tm_clock_from_name(v->valuestring);
	if (!*out)
		return tm_mf_err(err,
				 PFX "unknown clock name: %s. Use one of REALTIME, REALTIME_COARSE, "
				"MONOTONIC, MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME.",
				 v->valuestring);
	return TM_OK;
}

static enum tm_status
parse_clocks(const cJSON *c, struct tm_manifest_clocks *out, struct tm_error *err)
{
	static const char *const known[] = {"machine", "clock", "sync_to", "offset_ns", NULL};
	static const char *const sknown[] = {"file", "machine", "clock", NULL};
	const cJSON *v, *st;
	enum tm_status s;

	if ((v = tm_mj_member(c, "machine"))) {
		if (!tm_mj_is_str(v))
			return tm_mf_err(err, PFX "clocks: machine must be a string");
		out->machine = xstrdup(v->valuestring);
	}
	if ((v = tm_mj_member(c, "clock")) && (s = clock_name(v, &out->clock, err)) != TM_OK)
		return s;
	if (!(st = tm_mj_member(c, "sync_to")))
		return tm_mf_err(err, PFX "clocks: a sync_to block is required. Manual clock handling "
					  "relates this file to a clock in another trace, e.g. \"sync_to\": "
					  "{\"file\": \"other.pb\"}.");
	if (!cJSON_IsObject(st))
		return tm_mf_err(err, PFX "clocks: sync_to must be an object");
	if (!tm_mj_is_str(v = tm_mj_member(st, "file")))
		return tm_mf_err(err, PFX "clocks: sync_to.file is required and must be a string");
	out->sync_file = xstrdup(v->valuestring);
	if ((v = tm_mj_member(st, "machine"))) {
		if (!tm_mj_is_str(v))
			return tm_mf_err(err, PFX "clocks: sync_to.machine must be a string");
		out->sync_machine = xstrdup(v->valuestring);
	}
	if ((v = tm_mj_member(st, "clock")) && (s = clock_name(v, &out->sync_clock, err)) != TM_OK)
		return s;
	if ((v = tm_mj_member(c, "offset_ns"))) {
		if (!tm_mj_is_int(v, &out->offset_ns))
			return tm_mf_err(err, PFX "clocks: offset_ns must be an integer");
		if (out->offset_ns == INT64_MIN)
			return tm_mf_err(err, PFX "clocks: offset_ns is out of range");
	}
	out->extra = tm_mj_extras(c, known);
	out->sync_extra = tm_mj_extras(st, sknown);
	return TM_OK;
}

static enum tm_status
check_table(const cJSON *t, struct tm_error *err)
{
	int64_t rows;
	const char *name;
	const cJSON *col;

	if (!cJSON_IsObject(t) || !tm_mj_is_int(tm_mj_member(t, "format"), NULL) ||
	    !tm_mj_is_str(tm_mj_member(t, "name")) || !tm_mj_is_int(tm_mj_member(t, "row_count"), &rows) ||
	    !cJSON_IsArray(tm_mj_member(t, "columns")))
		return tm_mf_err(err, PFX "__exported_table_schema needs an integer format, a string "
					  "name, an integer row_count and a columns array");
	name = tm_mj_member(t, "name")->valuestring;
	if (rows < 0 || rows > (int64_t)UINT32_MAX)
		return tm_mf_err(err, PFX "table '%s': invalid row_count", name);
	cJSON_ArrayForEach(col, tm_mj_member(t, "columns")) {
		if (!cJSON_IsObject(col) || !tm_mj_is_str(tm_mj_member(col, "name")) ||
		    !tm_mj_is_str(tm_mj_member(col, "type")) || !tm_mj_is_str(tm_mj_member(col, "nullability")) ||
		    !tm_mj_is_str(tm_mj_member(col, "sort")) || !tm_mj_is_str(tm_mj_member(col, "duplicates")))
			return tm_mf_err(err, PFX "table '%s': malformed column entry", name);
	}
	return TM_OK;
}

static enum tm_status
parse_file(const cJSON *fe, struct tm_manifest_file *f, struct tm_error *err)
{
	static const char *const known[] = {"path", "machine", "machines", "clocks", NULL};
	static const char *const mknown[] = {"name", NULL};
	const cJSON *v, *mm;
	enum tm_status s;

	if (!cJSON_IsObject(fe) || !tm_mj_is_str(tm_mj_member(fe, "path")))
		return tm_mf_err(err, PFX "files entries must be objects with a string path");
	const cJSON *pv = tm_mj_member(fe, "path");
	size_t plen = tm_mj_str_len(pv);
	f->path = xstrndup(pv->valuestring, plen);
	f->path_len = plen != strlen(f->path) ? plen : 0;
	if ((v = tm_mj_member(fe, "__exported_table_schema"))) {
		static const char *const tknown[] = {"path", NULL};

		if (tm_mj_member(fe, "clocks") || tm_mj_member(fe, "machine") || tm_mj_member(fe, "machines"))
			return tm_mf_err(err,
					 PFX "'%s': an exported table is not a trace, so "
					"__exported_table_schema cannot be combined with "
					"clocks/machine/machines",
					 f->path);
		if ((s = check_table(v, err)) != TM_OK)
			return s;
		f->extra = tm_mj_extras(fe, tknown);
		return TM_OK;
	}
	if ((v = tm_mj_member(fe, "clocks"))) {
		if (!cJSON_IsObject(v))
			return tm_mf_err(err, PFX "clocks must be an object");
		f->has_clocks = true;
		if ((s = parse_clocks(v, &f->clocks, err)) != TM_OK)
			return s;
	}
	if (tm_mj_member(fe, "machine") && tm_mj_member(fe, "machines"))
		return tm_mf_err(err, PFX "machine and machines are mutually exclusive. Use `machine` for "
					  "a single-machine file, or `machines` to remap a multi-machine "
					  "proto's embedded ids; not both.");
	if ((mm = tm_mj_member(fe, "machine"))) {
		if (!cJSON_IsObject(mm) || !tm_mj_is_str(tm_mj_member(mm, "name")))
			return tm_mf_err(err, PFX "machine must be an object with a string name, e.g. "
						  "\"machine\": {\"name\": \"phone\"}.");
		if (!*tm_mj_member(mm, "name")->valuestring)
			return tm_mf_err(err, PFX "machine: name must be non-empty");
		f->machine_name = xstrdup(tm_mj_member(mm, "name")->valuestring);
		f->machine_extra = tm_mj_extras(mm, mknown);
	}
	if ((mm = tm_mj_member(fe, "machines"))) {
		const cJSON *e;
		size_t cap = 0;

		if (!cJSON_IsArray(mm))
			return tm_mf_err(err, PFX "machines must be an array");
		f->has_machines = true;
		cJSON_ArrayForEach(e, mm) {
			int64_t id;

			if (!cJSON_IsObject(e) || !tm_mj_is_num(tm_mj_member(e, "id")) ||
			    !tm_mj_is_str(tm_mj_member(e, "name")))
				return tm_mf_err(err, PFX "machines entries need an integer id and a string "
							  "name, e.g. \"machines\": [{\"id\": 0, \"name\": "
							  "\"phone\"}].");
			id = tm_mj_as_int64(tm_mj_member(e, "id"));
			if (id < 0 || id > (int64_t)UINT32_MAX)
				return tm_mf_err(err, PFX "machines: id must be in [0, 4294967295]");
			if (!*tm_mj_member(e, "name")->valuestring)
				return tm_mf_err(err, PFX "machines: name must be non-empty");
			XGROW(f->machines, cap, f->n_machines + 1);
			f->machines[f->n_machines].id = (uint32_t)id;
			f->machines[f->n_machines].name = xstrdup(tm_mj_member(e, "name")->valuestring);
			f->n_machines++;
		}
	}
	f->extra = tm_mj_extras(fe, known);
	return TM_OK;
}

static int
cmp_member_key(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	return strcmp(x->string, y->string);
}

static enum tm_status
parse_attributes(const cJSON *o, struct tm_manifest *m, struct tm_error *err)
{
	const cJSON **sorted, *c;
	size_t n = 0, i;
	enum tm_status s = TM_OK;

	if (!cJSON_IsObject(o))
		return tm_mf_err(err, PFX "attributes must be an object of string or integer values, "
					  "e.g. \"attributes\": {\"benchmark\": \"startup\"}.");
	m->has_attributes = true;
	n = (size_t)cJSON_GetArraySize(o);
	/* The reader walks std::map order: validate in byte order of keys. */
	sorted = xcalloc(n ? n : 1, sizeof *sorted);
	i = 0;
	cJSON_ArrayForEach(c, o)
		sorted[i++] = c;
	qsort(sorted, n, sizeof *sorted, cmp_member_key);
	for (i = 0; i < n && s == TM_OK; i++) {
		if (!*sorted[i]->string)
			s = tm_mf_err(err, PFX "attributes: keys must be non-empty");
		else if (!tm_mj_is_str(sorted[i]) && !tm_mj_is_int(sorted[i], NULL))
			s = tm_mf_err(err, PFX "attributes: '%s' must be a string or an integer",
				      sorted[i]->string);
	}
	free(sorted);
	if (s != TM_OK)
		return s;
	/* Kept in input order, for emission. */
	m->attrs = n ? xcalloc(n, sizeof *m->attrs) : NULL;
	cJSON_ArrayForEach(c, o) {
		struct tm_manifest_attr *a = &m->attrs[m->n_attrs++];

		a->key = xstrdup(c->string);
		a->is_int = tm_mj_is_int(c, &a->ival);
		if (!a->is_int)
			a->sval = xstrdup(c->valuestring);
	}
	return TM_OK;
}

static enum tm_status
validate(const cJSON *root, struct tm_manifest *m, struct tm_error *err)
{
	static const char *const rknown[] = {"perfetto_manifest", NULL};
	static const char *const known[] = {"version", "trace_time", "files", "attributes", NULL};
	static const char *const tknown[] = {"clock", "file", "machine", NULL};
	const cJSON *meta, *v, *tt, *e;
	enum tm_status s;
	size_t cap = 0;

	if (!cJSON_IsObject(root) || !cJSON_IsObject(meta = tm_mj_member(root, "perfetto_manifest")))
		return tm_mf_err(err, PFX "expected a JSON object with a top-level perfetto_manifest key");
	if (!(v = tm_mj_member(meta, "version")))
		return tm_mf_err(err, PFX "missing required field: version");
	if (!tm_mj_is_int(v, &m->version))
		return tm_mf_err(err, PFX "version must be an integer");
	if (m->version != 1)
		return tm_mf_err(err,
				 PFX "unsupported version: %" PRId64
				". Only version 1 is supported; set \"version\": 1.",
				 m->version);
	if ((tt = tm_mj_member(meta, "trace_time"))) {
		if (!cJSON_IsObject(tt))
			return tm_mf_err(err, PFX "trace_time must be an object");
		if (!(v = tm_mj_member(tt, "clock")))
			return tm_mf_err(err, PFX "trace_time needs a clock");
		if ((s = clock_name(v, &m->tt_clock, err)) != TM_OK)
			return s;
		m->has_trace_time = true;
		if ((v = tm_mj_member(tt, "file"))) {
			if (!tm_mj_is_str(v))
				return tm_mf_err(err, PFX "trace_time: file must be a string");
			m->tt_file = xstrdup(v->valuestring);
		}
		if ((v = tm_mj_member(tt, "machine"))) {
			if (!tm_mj_is_str(v))
				return tm_mf_err(err, PFX "trace_time: machine must be a string");
			m->tt_machine = xstrdup(v->valuestring);
		}
		m->tt_extra = tm_mj_extras(tt, tknown);
	}
	if ((v = tm_mj_member(meta, "files"))) {
		if (!cJSON_IsArray(v))
			return tm_mf_err(err, PFX "files must be an array");
		m->has_files = true;
		cJSON_ArrayForEach(e, v) {
			XGROW(m->files, cap, m->n_files + 1);
			memset(&m->files[m->n_files], 0, sizeof m->files[0]);
			s = parse_file(e, &m->files[m->n_files++], err);
			if (s != TM_OK)
				return s;
		}
	}
	if ((v = tm_mj_member(meta, "attributes")) && (s = parse_attributes(v, m, err)) != TM_OK)
		return s;
	m->extra = tm_mj_extras(meta, known);
	m->root_extra = tm_mj_extras(root, rknown);
	return TM_OK;
}

enum tm_status
tm_manifest_parse_keep(const char *text, size_t len, const char *name, struct tm_manifest *out,
		       struct tm_error *err, bool *apply_stage)
{
	char msg[sizeof err->msg];
	struct tm_manifest_plan plan;
	struct tm_mj_stop stop;
	enum tm_status s;
	cJSON *root;

	tm_manifest_init(out);
	if (err)
		tm_error_clear(err);
	root = tm_mj_parse(text, len, msg, sizeof msg, &stop);
	if (!root) {
		s = tm_error_set(err, TM_ERR_MANIFEST, "%s", msg);
		/* trace_processor's text says nothing about where; ours does */
		if (stop.incomplete)
			tm_error_hint(err,
				      "%s%sthe JSON text ends at byte %zu, before %s: the manifest "
				      "is truncated",
				      name ? name : "", name ? ": " : "", stop.offset,
				      stop.expected ? stop.expected : "the end of the root value");
		return s;
	}
	s = validate(root, out, err);
	bool applying = s == TM_OK;
	if (s == TM_OK) {
		s = tm_manifest_apply(out, NULL, &plan, err);
		tm_manifest_plan_fini(&plan);
	}
	if (s != TM_OK) {
		if (err)
			tm_mf_old_syntax_hint(tm_mj_member(root, "perfetto_manifest"), NULL, err);
		if (applying && apply_stage)
			*apply_stage = true;
		else
			tm_manifest_fini(out);
	}
	cJSON_Delete(root);
	return s;
}

enum tm_status
tm_manifest_parse_named(const char *text, size_t len, const char *name, struct tm_manifest *out,
			struct tm_error *err)
{
	return tm_manifest_parse_keep(text, len, name, out, err, NULL);
}

enum tm_status
tm_manifest_parse(const char *text, size_t len, struct tm_manifest *out, struct tm_error *err)
{
	return tm_manifest_parse_named(text, len, NULL, out, err);
}

/* SPDX-License-Identifier: MIT */
/*
 * Emission: JSON.stringify(v, null, 2) layout in the key order of Perfetto's
 * merge dialog, unknown keys after the known ones in their input order.
 * offset_ns is always written when clocks is (the dialog does the same, and
 * 0 is the reader's default, so nothing changes on a round trip).  The
 * unknown keys of machines[] entries are not kept (the model has no place
 * for them), and a double machines id (7.9) is stored truncated (7), as
 * trace_processor uses it.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_priv.h"

/* ------------------------------------------------------------------ */
/* JSON writer: JSON.stringify(v, null, 2) layout                      */
/* ------------------------------------------------------------------ */

struct jw {
	struct tm_buf *b;
	int depth;
	bool has[MAX_DEPTH + 8]; /* the open scope already has a member */
};

static void
w_open(struct jw *w, char c)
{
	tm_buf_addc(w->b, c);
	w->has[++w->depth] = false;
}

static void
w_nl(struct jw *w)
{
	tm_buf_addc(w->b, '\n');
	for (int i = 0; i < w->depth; i++)
		tm_buf_adds(w->b, "  ");
}

static void
w_close(struct jw *w, char c)
{
	bool had = w->has[w->depth--];

	if (had)
		w_nl(w);
	tm_buf_addc(w->b, c);
}

static void
w_item(struct jw *w)
{
	if (w->has[w->depth])
		tm_buf_addc(w->b, ',');
	w->has[w->depth] = true;
	w_nl(w);
}

static void
w_key(struct jw *w, const char *key)
{
	w_item(w);
	json_str(w->b, key);
	tm_buf_adds(w->b, ": ");
}

static void
w_json(struct jw *w, const cJSON *v)
{
	const cJSON *c;

	if (cJSON_IsRaw(v)) {
		tm_buf_adds(w->b, v->valuestring);
	} else if (cJSON_IsString(v)) {
		json_str(w->b, v->valuestring);
	} else if (cJSON_IsTrue(v)) {
		tm_buf_adds(w->b, "true");
	} else if (cJSON_IsFalse(v)) {
		tm_buf_adds(w->b, "false");
	} else if (cJSON_IsObject(v)) {
		w_open(w, '{');
		cJSON_ArrayForEach(c, v) {
			w_key(w, c->string);
			w_json(w, c);
		}
		w_close(w, '}');
	} else if (cJSON_IsArray(v)) {
		w_open(w, '[');
		cJSON_ArrayForEach(c, v) {
			w_item(w);
			w_json(w, c);
		}
		w_close(w, ']');
	} else {
		tm_buf_adds(w->b, "null");
	}
}

static void
w_extras(struct jw *w, const cJSON *x)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, x) {
		w_key(w, c->string);
		w_json(w, c);
	}
}

static void
w_kstr(struct jw *w, const char *key, const char *val)
{
	w_key(w, key);
	json_str(w->b, val);
}

static void
w_clocks(struct jw *w, const struct tm_manifest_clocks *c)
{
	w_open(w, '{');
	w_key(w, "sync_to");
	w_open(w, '{');
	if (c->sync_file)
		w_kstr(w, "file", c->sync_file);
	if (c->sync_machine)
		w_kstr(w, "machine", c->sync_machine);
	if (c->sync_clock)
		w_kstr(w, "clock", tm_clock_name(c->sync_clock));
	w_extras(w, c->sync_extra);
	w_close(w, '}');
	w_key(w, "offset_ns");
	tm_buf_addf(w->b, "%" PRId64, c->offset_ns);
	if (c->clock)
		w_kstr(w, "clock", tm_clock_name(c->clock));
	if (c->machine)
		w_kstr(w, "machine", c->machine);
	w_extras(w, c->extra);
	w_close(w, '}');
}

static void
w_file(struct jw *w, const struct tm_manifest_file *f)
{
	w_open(w, '{');
	w_key(w, "path");
	tm_escape_json_raw(f->path ? f->path : "", f->path ? tm_mf_path_len(f) : 0, w->b);
	if (f->machine_name) {
		w_key(w, "machine");
		w_open(w, '{');
		w_kstr(w, "name", f->machine_name);
		w_extras(w, f->machine_extra);
		w_close(w, '}');
	} else if (f->has_machines) {
		w_key(w, "machines");
		w_open(w, '[');
		for (size_t i = 0; i < f->n_machines; i++) {
			w_item(w);
			w_open(w, '{');
			w_key(w, "id");
			tm_buf_addf(w->b, "%" PRIu32, f->machines[i].id);
			w_kstr(w, "name", f->machines[i].name ? f->machines[i].name : "");
			w_close(w, '}');
		}
		w_close(w, ']');
	}
	if (f->has_clocks) {
		w_key(w, "clocks");
		w_clocks(w, &f->clocks);
	}
	w_extras(w, f->extra);
	w_close(w, '}');
}

void
tm_manifest_emit(const struct tm_manifest *m, struct tm_buf *out)
{
	struct jw *w = xcalloc(1, sizeof *w);

	w->b = out;
	w_open(w, '{');
	w_key(w, "perfetto_manifest");
	w_open(w, '{');
	w_key(w, "version");
	tm_buf_addf(out, "%" PRId64, m->version);
	if (m->has_trace_time) {
		w_key(w, "trace_time");
		w_open(w, '{');
		w_kstr(w, "clock", tm_clock_name(m->tt_clock));
		if (m->tt_file)
			w_kstr(w, "file", m->tt_file);
		if (m->tt_machine)
			w_kstr(w, "machine", m->tt_machine);
		w_extras(w, m->tt_extra);
		w_close(w, '}');
	}
	if (m->has_files) {
		w_key(w, "files");
		w_open(w, '[');
		for (size_t i = 0; i < m->n_files; i++) {
			w_item(w);
			w_file(w, &m->files[i]);
		}
		w_close(w, ']');
	}
	if (m->has_attributes) {
		w_key(w, "attributes");
		w_open(w, '{');
		for (size_t i = 0; i < m->n_attrs; i++) {
			w_key(w, m->attrs[i].key);
			if (m->attrs[i].is_int)
				tm_buf_addf(out, "%" PRId64, m->attrs[i].ival);
			else
				json_str(out, m->attrs[i].sval ? m->attrs[i].sval : "");
		}
		w_close(w, '}');
	}
	w_extras(w, m->extra);
	w_close(w, '}');
	w_extras(w, m->root_extra);
	w_close(w, '}');
	tm_buf_addc(out, '\n');
	free(w);
}

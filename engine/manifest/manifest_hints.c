/* SPDX-License-Identifier: MIT */
/*
 * Outdated syntax (merging-from-command-line docs): a clocks map of clock
 * names with trace_time_offset_ns, a machines map keyed by id, and
 * trace_time.machine without trace_time.file get trace_processor's error
 * unchanged plus a hint with the valid JSON; tm_manifest_convert_outdated
 * rewrites those parts into the valid form on request.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "manifest_priv.h"

/* ------------------------------------------------------------------ */
/* Outdated syntax: hints with the valid form                          */
/* ------------------------------------------------------------------ */

/* The files[] entry (other than self) that declares machine name. */
static const cJSON *
entry_declaring(const cJSON *files, const cJSON *self, const char *name, bool *via_machines)
{
	const cJSON *e, *c;

	cJSON_ArrayForEach(e, files) {
		const cJSON *mm;

		if (e == self || !tm_mj_is_str(tm_mj_member(e, "path")))
			continue;
		mm = tm_mj_member(tm_mj_member(e, "machine"), "name");
		if (tm_mj_is_str(mm) && strcmp(mm->valuestring, name) == 0) {
			*via_machines = false;
			return e;
		}
		mm = tm_mj_member(e, "machines");
		cJSON_ArrayForEach(c, mm) {
			const cJSON *n = tm_mj_member(c, "name");

			if (tm_mj_is_str(n) && strcmp(n->valuestring, name) == 0) {
				*via_machines = true;
				return e;
			}
		}
	}
	return NULL;
}

static bool
old_clocks(const cJSON *c)
{
	const cJSON *k;

	if (!cJSON_IsObject(c) || tm_mj_member(c, "sync_to"))
		return false;
	cJSON_ArrayForEach(k, c)
		if (cJSON_IsObject(k) &&
		    (tm_mj_member(k, "trace_time_offset_ns") || tm_clock_from_name(k->string)))
			return true;
	return false;
}

/* The input's file the context knows by path, or NULL. */
static const struct tm_convert_file *
ctx_file(const struct tm_convert_ctx *ctx, const char *path)
{
	for (size_t i = 0; ctx && path && i < ctx->n_files; i++)
		if (ctx->files[i].path && strcmp(ctx->files[i].path, path) == 0)
			return &ctx->files[i];
	return NULL;
}

static bool
cf_has_clock(const struct tm_convert_file *f, uint32_t c)
{
	for (size_t i = 0; f && i < f->n_clocks; i++)
		if (f->clocks[i] == c)
			return true;
	return false;
}

/* The base machine of an entry's machines (id 0), else NULL. */
static const char *
base_machine(const cJSON *entry)
{
	const cJSON *k;

	cJSON_ArrayForEach(k, tm_mj_member(entry, "machines")) {
		const cJSON *id = tm_mj_member(k, "id"), *n = tm_mj_member(k, "name");
		bool zero = id ? tm_mj_is_num(id) && strcmp(id->valuestring, "0") == 0
			       : k->string && strcmp(k->string, "0") == 0; /* the old map */
		if (zero && tm_mj_is_str(n))
			return n->valuestring;
	}
	return NULL;
}

static const char *
entry_path(const cJSON *e)
{
	return tm_mj_is_str(tm_mj_member(e, "path")) ? tm_mj_member(e, "path")->valuestring : "";
}

/* What an outdated clocks map converts to, and what of it cannot be said
 * in the valid form (notes).  src: the file's clock (NULL: a PIN, the file
 * is clockless); machine: clocks.machine of a multi-machine file; ref,
 * rclock, rmachine: sync_to (ref NULL: no file can be named, cant says
 * why); off: the offset token; why: why that reference. */
struct old_target {
	const char *src, *machine, *ref, *rclock, *rmachine, *why, *cant;
	const cJSON *off;
	size_t n_clocks;
};

static void
old_clocks_target(const cJSON *meta, const cJSON *entry, const struct tm_convert_ctx *ctx,
		  struct old_target *t, struct tm_buf *notes)
{
	const cJSON *c = tm_mj_member(entry, "clocks"), *files = tm_mj_member(meta, "files");
	const cJSON *tt = tm_mj_member(meta, "trace_time"), *chosen = NULL, *k;
	const cJSON *e, *ttc = tm_mj_member(tt, "clock");
	const char *path = entry_path(entry);
	const struct tm_convert_file *cf = ctx_file(ctx, path);
	bool via = false;

	memset(t, 0, sizeof *t);
	/* the clock: the one the file's timestamps are in, else one it has,
	 * else the first named (with no context: the first) */
	int best = -1;
	cJSON_ArrayForEach(k, c) {
		if (!cJSON_IsObject(k))
			continue;
		t->n_clocks++;
		uint32_t id = tm_clock_from_name(k->string);
		int score = !cf || !id ? 0 : id == cf->trace_clock ? 2 : cf_has_clock(cf, id) ? 1 : 0;
		if (score > best) {
			best = score;
			chosen = k;
		}
	}
	t->src = chosen->string;
	t->off = tm_mj_member(chosen, "trace_time_offset_ns");
	if (cf && cf->clockless) {
		/* a clockless file's timestamps are its own: related to trace
		 * time, they are pinned (the valid form's clocks without clock) */
		t->src = NULL;
	} else if (cf && !cf_has_clock(cf, tm_clock_from_name(chosen->string)) && notes) {
		tm_buf_addf(notes, "%s has no %s clock: its old entry related a clock its events "
				   "never use, and so does the converted one. ",
			    path, chosen->string);
	}
	if (t->n_clocks > 1 && notes) {
		tm_buf_addf(notes, "%s: only one clock per file can be related; %s was converted and ",
			    path, chosen->string);
		bool first = true;
		cJSON_ArrayForEach(k, c) {
			if (!cJSON_IsObject(k) || k == chosen)
				continue;
			const cJSON *o = tm_mj_member(k, "trace_time_offset_ns");
			tm_buf_addf(notes, "%s%s (%s)", first ? "" : ", ", k->string,
				    tm_mj_is_num(o) ? o->valuestring : "no offset");
			first = false;
		}
		tm_buf_adds(notes, " cannot be expressed. ");
	}
	if (t->n_clocks && t->off && !tm_mj_is_num(t->off) && notes)
		tm_buf_addf(notes, "%s: trace_time_offset_ns is not a number; converted as 0. ", path);
	if (tm_mj_member(entry, "machines"))
		t->machine = base_machine(entry);
	/* the reference: whatever owns trace time */
	if (tm_mj_is_str(tm_mj_member(tt, "file"))) {
		t->ref = tm_mj_member(tt, "file")->valuestring;
		if (tm_mj_is_str(tm_mj_member(tt, "machine")))
			t->rmachine = tm_mj_member(tt, "machine")->valuestring;
		t->why = "the trace_time.file, which owns trace time";
	} else if (tm_mj_is_str(tm_mj_member(tt, "machine")) &&
		   (e = entry_declaring(files, NULL, tm_mj_member(tt, "machine")->valuestring, &via))) {
		t->ref = entry_path(e);
		if (via)
			t->rmachine = tm_mj_member(tt, "machine")->valuestring;
		t->why = "the file of trace_time.machine, which owns trace time";
	} else if (ctx && ctx->tt_file) {
		t->ref = ctx->tt_file;
		t->why = "the file that owns trace time in this input (trace_processor's choice "
			 "without trace_time)";
	} else {
		t->why = "the first other file in files[] (trace time's owner could not be inferred; "
			 "use the file whose clock the offset was measured against)";
		cJSON_ArrayForEach(e, files) {
			if (e != entry && *entry_path(e)) {
				t->ref = entry_path(e);
				break;
			}
		}
	}
	if (t->ref && strcmp(t->ref, path) == 0) {
		t->cant = "it owns trace time: an offset between its clock and trace time has no "
			  "other file to relate to";
		t->ref = NULL;
	}
	/* a multi-machine reference: its base machine unless trace_time names one */
	const cJSON *re = NULL;
	cJSON_ArrayForEach(e, files)
		if (t->ref && strcmp(entry_path(e), t->ref) == 0)
			re = e;
	if (t->ref && !t->rmachine && re && tm_mj_member(re, "machines"))
		t->rmachine = base_machine(re);
	/* the reference clock: trace time's; none for a clockless reference
	 * (sync_to without clock: its private timeline) */
	const struct tm_convert_file *rf = ctx_file(ctx, t->ref);
	if (tm_mj_is_str(ttc) && tm_clock_from_name(ttc->valuestring))
		t->rclock = ttc->valuestring;
	else if (rf && rf->clockless)
		t->rclock = NULL;
	else if (ctx && ctx->tt_clock >= TM_CLOCK_REALTIME && ctx->tt_clock <= TM_CLOCK_BOOTTIME &&
		 t->ref && ctx->tt_file && strcmp(t->ref, ctx->tt_file) == 0)
		t->rclock = tm_clock_name(ctx->tt_clock);
	else if (t->src)
		t->rclock = t->src;
	else if (rf && rf->trace_clock)
		t->rclock = tm_clock_name(rf->trace_clock);
	else
		t->rclock = chosen->string;
}

static void
hint_clocks(const cJSON *meta, const cJSON *entry, const struct tm_convert_ctx *ctx,
	    struct tm_buf *h)
{
	struct old_target t;
	const char *ref, *why;
	const cJSON *off;

	old_clocks_target(meta, entry, ctx, &t, NULL);
	ref = t.ref;
	why = t.why;
	off = t.off;
	if (!ref) {
		ref = "OTHER_FILE";
		why = "a placeholder: replace OTHER_FILE with the path of the file to align "
		      "to (it must also be listed in files[])";
	}
	tm_buf_adds(h, "files entry ");
	json_str(h, entry_path(entry));
	tm_buf_adds(h, " uses the outdated `clocks` map of clock names with trace_time_offset_ns "
		       "(older docs). A clocks block is now one relation to a clock in another "
		       "file: \"clocks\": {");
	if (t.src) {
		tm_buf_adds(h, "\"clock\": ");
		json_str(h, t.src);
		tm_buf_adds(h, ", ");
	}
	if (t.machine) {
		tm_buf_adds(h, "\"machine\": ");
		json_str(h, t.machine);
		tm_buf_adds(h, ", ");
	}
	tm_buf_adds(h, "\"sync_to\": {\"file\": ");
	json_str(h, ref);
	if (t.rmachine) {
		tm_buf_adds(h, ", \"machine\": ");
		json_str(h, t.rmachine);
	}
	if (t.rclock) {
		tm_buf_adds(h, ", \"clock\": ");
		json_str(h, t.rclock);
	}
	tm_buf_addf(h, "}, \"offset_ns\": %s}. ", tm_mj_is_num(off) ? off->valuestring : "0");
	tm_buf_adds(h, "The sign is unchanged: trace_time_offset_ns was added to this file's "
		       "timestamps, and offset_ns means reference = this file + offset_ns (a "
		       "positive value moves the file later). sync_to.file is ");
	tm_buf_adds(h, why);
	tm_buf_adds(h, ".");
	if (!t.src)
		tm_buf_adds(h, " The file is clockless: without \"clock\" the relation pins it.");
	if (t.n_clocks > 1)
		tm_buf_adds(h, " Only one clock per file can be related.");
}

static void
hint_machines(const cJSON *entry, struct tm_buf *h)
{
	const cJSON *mm = tm_mj_member(entry, "machines"), *k;
	bool first = true;

	tm_buf_adds(h, "files entry ");
	json_str(h, tm_mj_is_str(tm_mj_member(entry, "path")) ? tm_mj_member(entry, "path")->valuestring : "");
	tm_buf_adds(h, " uses the outdated `machines` map keyed by machine id (older docs); it is "
		       "now an array of {id, name}: \"machines\": [");
	cJSON_ArrayForEach(k, mm) {
		const cJSON *n = tm_mj_member(k, "name");
		const char *d = k->string;
		bool numeric = *d != 0;

		for (const char *q = d; *q; q++)
			if (!isdigit((unsigned char)*q))
				numeric = false;
		if (!first)
			tm_buf_adds(h, ", ");
		first = false;
		tm_buf_adds(h, "{\"id\": ");
		if (numeric)
			tm_buf_adds(h, d);
		else
			json_str(h, d);
		tm_buf_adds(h, ", \"name\": ");
		json_str(h, tm_mj_is_str(n) ? n->valuestring : "NAME");
		tm_buf_adds(h, "}");
	}
	tm_buf_adds(h, "].");
}

static void
hint_trace_time(const cJSON *meta, struct tm_buf *h)
{
	const cJSON *tt = tm_mj_member(meta, "trace_time"), *e;
	const char *mach = tm_mj_member(tt, "machine")->valuestring;
	bool via = false;

	e = entry_declaring(tm_mj_member(meta, "files"), NULL, mach, &via);
	tm_buf_adds(h, "trace_time.machine without trace_time.file is the outdated form (older "
		       "docs); a machine is named through the file that declares it: "
		       "\"trace_time\": {\"clock\": ");
	json_str(h, tm_mj_is_str(tm_mj_member(tt, "clock")) ? tm_mj_member(tt, "clock")->valuestring : "BOOTTIME");
	tm_buf_adds(h, ", \"file\": ");
	json_str(h, e ? tm_mj_member(e, "path")->valuestring : "FILE");
	if (via) {
		tm_buf_adds(h, ", \"machine\": ");
		json_str(h, mach);
	}
	tm_buf_adds(h, "}.");
	if (!e) {
		tm_buf_adds(h, " No files entry declares machine ");
		json_str(h, mach);
		tm_buf_adds(h, "; replace FILE with the path of the file whose clock is the "
			       "timeline.");
	}
}

void
tm_mf_old_syntax_hint(const cJSON *meta, const struct tm_convert_ctx *ctx, struct tm_error *err)
{
	struct tm_buf h[3];
	const cJSON *e, *tt = tm_mj_member(meta, "trace_time");
	int primary;
	struct tm_buf out;

	for (int i = 0; i < 3; i++)
		tm_buf_init(&h[i]);
	cJSON_ArrayForEach(e, tm_mj_member(meta, "files")) {
		if (old_clocks(tm_mj_member(e, "clocks")) && !h[0].len)
			hint_clocks(meta, e, ctx, &h[0]);
		if (cJSON_IsObject(tm_mj_member(e, "machines")) && !h[1].len)
			hint_machines(e, &h[1]);
	}
	if (cJSON_IsObject(tt) && tm_mj_is_str(tm_mj_member(tt, "machine")) && !tm_mj_member(tt, "file"))
		hint_trace_time(meta, &h[2]);
	if (strstr(err->msg, "machines must be an array"))
		primary = 1;
	else if (strstr(err->msg, "trace_time: machine"))
		primary = 2;
	else
		primary = 0;
	tm_buf_init(&out);
	if (h[primary].len)
		tm_buf_adds(&out, h[primary].data);
	for (int i = 0; i < 3; i++) {
		if (i == primary || !h[i].len)
			continue;
		tm_buf_adds(&out, out.len ? " Also: " : "");
		tm_buf_adds(&out, h[i].data);
	}
	if (out.len)
		tm_error_hint(err, "%s", out.data);
	tm_buf_fini(&out);
	for (int i = 0; i < 3; i++)
		tm_buf_fini(&h[i]);
}

/* ------------------------------------------------------------------ */
/* Converting the outdated syntax                                      */
/* ------------------------------------------------------------------ */

static bool
numeric_key(const char *d)
{
	if (!*d)
		return false;
	for (const char *q = d; *q; q++)
		if (!isdigit((unsigned char)*q))
			return false;
	return true;
}

/* tm_mj_member's choice among o's members, writable. */
static cJSON *
member_mut(cJSON *o, const char *key)
{
	const cJSON *c = tm_mj_member(o, key);
	cJSON *k;

	cJSON_ArrayForEach(k, o)
		if (k == c)
			return k;
	return NULL;
}

/* cJSON_Print's tabs (its indentation, and after a key's colon; a tab in
 * a string is printed as \t) as the manifest writer's spaces. */
static void
add_printed(struct tm_buf *out, const char *printed)
{
	bool bol = true;

	for (const char *p = printed; *p; p++) {
		if (*p == '\t') {
			tm_buf_adds(out, bol ? "  " : " ");
			continue;
		}
		bol = *p == '\n';
		tm_buf_addc(out, *p);
	}
}

enum tm_status
tm_manifest_convert_outdated(const char *text, size_t len, const struct tm_convert_ctx *ctx,
			     struct tm_buf *out, struct tm_buf *notes, struct tm_error *err)
{
	char msg[512];
	struct tm_mj_stop stop;
	cJSON *root = tm_mj_parse(text, len, msg, sizeof msg, &stop), *meta, *files, *e, *tt;
	size_t n_changed = 0;
	char *printed;
	struct tm_buf scratch;

	if (!root)
		return tm_error_set(err, TM_ERR_MANIFEST, "%s", msg);
	tm_buf_init(&scratch);
	if (!notes)
		notes = &scratch;
	meta = member_mut(root, "perfetto_manifest");
	files = member_mut(meta, "files");
	/* machines first: the clocks of an entry read its machines' ids */
	cJSON_ArrayForEach(e, files) {
		cJSON *mm = member_mut(e, "machines");
		if (!cJSON_IsObject(mm))
			continue;
		cJSON *arr = cJSON_CreateArray(), *k;
		cJSON_ArrayForEach(k, mm) {
			cJSON *item = cJSON_CreateObject();
			const cJSON *nm = tm_mj_member(k, "name");
			if (numeric_key(k->string)) {
				cJSON_AddItemToObject(item, "id", cJSON_CreateRaw(k->string));
			} else {
				cJSON_AddStringToObject(item, "id", k->string);
				tm_buf_addf(notes, "%s: machine id \"%s\" is not a number and cannot be "
						   "expressed (ids are integers). ",
					    entry_path(e), k->string);
			}
			if (!tm_mj_is_str(nm))
				tm_buf_addf(notes, "%s: machine %s has no name; NAME stands in. ",
					    entry_path(e), k->string);
			cJSON_AddStringToObject(item, "name", tm_mj_is_str(nm) ? nm->valuestring : "NAME");
			cJSON_AddItemToArray(arr, item);
		}
		cJSON_ReplaceItemInObjectCaseSensitive(e, "machines", arr);
		n_changed++;
	}
	/* every entry's target is read from the old trace_time before it changes */
	size_t n_entries = (size_t)cJSON_GetArraySize(files), i = 0;
	struct old_target *tg = xcalloc(n_entries ? n_entries : 1, sizeof *tg);
	cJSON_ArrayForEach(e, files) {
		if (old_clocks(tm_mj_member(e, "clocks")))
			old_clocks_target(meta, e, ctx, &tg[i], notes);
		i++;
	}
	i = 0;
	cJSON_ArrayForEach(e, files) {
		struct old_target *t = &tg[i++];
		if (!old_clocks(tm_mj_member(e, "clocks")))
			continue;
		n_changed++;
		if (!t->ref) {
			tm_buf_addf(notes, "%s's clocks (offset %s) cannot be expressed: %s; left out. ",
				    entry_path(e), tm_mj_is_num(t->off) ? t->off->valuestring : "0",
				    t->cant ? t->cant : "no other file in files[] to relate it to");
			cJSON_DeleteItemFromObjectCaseSensitive(e, "clocks");
			continue;
		}
		if (tm_mj_member(e, "machines") && !t->machine)
			tm_buf_addf(notes, "%s is a multi-machine trace without a machine of id 0: "
					   "which machine its old clocks were on cannot be said; name it "
					   "as clocks.machine. ",
				    entry_path(e));
		cJSON *n = cJSON_CreateObject(), *sync = cJSON_CreateObject();
		if (t->src)
			cJSON_AddStringToObject(n, "clock", t->src);
		if (t->machine)
			cJSON_AddStringToObject(n, "machine", t->machine);
		cJSON_AddStringToObject(sync, "file", t->ref);
		if (t->rmachine)
			cJSON_AddStringToObject(sync, "machine", t->rmachine);
		if (t->rclock)
			cJSON_AddStringToObject(sync, "clock", t->rclock);
		cJSON_AddItemToObject(n, "sync_to", sync);
		cJSON_AddItemToObject(n, "offset_ns",
				      cJSON_CreateRaw(tm_mj_is_num(t->off) ? t->off->valuestring : "0"));
		cJSON_ReplaceItemInObjectCaseSensitive(e, "clocks", n);
	}
	/* a reference must be an entry of files[] (perfetto_manifest_reader.cc
	 * rejects sync_to.file otherwise): the owner of trace time was not
	 * always listed in the old form */
	i = 0;
	for (size_t k = 0; k < n_entries; k++) {
		const char *ref = tg[k].ref;
		bool listed = !ref;
		cJSON_ArrayForEach(e, files)
			listed |= ref && strcmp(entry_path(e), ref) == 0;
		if (!listed) {
			cJSON *ne = cJSON_CreateObject();
			cJSON_AddStringToObject(ne, "path", ref);
			cJSON_AddItemToArray(files, ne);
		}
	}
	free(tg);
	tt = member_mut(meta, "trace_time");
	if (cJSON_IsObject(tt) && tm_mj_is_str(tm_mj_member(tt, "machine")) &&
	    !tm_mj_member(tt, "file")) {
		bool via = false;
		const char *mach = tm_mj_member(tt, "machine")->valuestring;
		const cJSON *d = entry_declaring(files, NULL, mach, &via);
		if (!d) {
			tm_buf_addf(notes, "trace_time.machine \"%s\" is declared by no files entry and "
					   "cannot be expressed (a machine is named through its file); "
					   "left out: trace time is the clock on the first file that "
					   "claims it. ",
				    mach);
			cJSON_DeleteItemFromObjectCaseSensitive(tt, "machine");
		} else {
			cJSON_AddStringToObject(tt, "file", entry_path(d));
			if (!via)
				cJSON_DeleteItemFromObjectCaseSensitive(tt, "machine");
		}
		n_changed++;
	}
	tm_buf_fini(&scratch);
	if (n_changed == 0) {
		cJSON_Delete(root);
		return tm_error_set(err, TM_ERR_INVALID, "nothing in the outdated syntax to convert");
	}
	printed = cJSON_Print(root);
	cJSON_Delete(root);
	if (!printed)
		return tm_error_set(err, TM_ERR_LIMIT, "out of memory");
	add_printed(out, printed);
	tm_buf_addc(out, '\n');
	cJSON_free(printed);
	return TM_OK;
}

void
tm_manifest_outdated_hint(const char *text, size_t len, const struct tm_convert_ctx *ctx,
			  struct tm_error *err)
{
	char msg[512];
	struct tm_mj_stop stop;
	cJSON *root = tm_mj_parse(text, len, msg, sizeof msg, &stop);

	if (!root)
		return;
	err->hint[0] = 0;
	tm_mf_old_syntax_hint(tm_mj_member(root, "perfetto_manifest"), ctx, err);
	cJSON_Delete(root);
}

/* SPDX-License-Identifier: MIT */
/*
 * Outdated syntax (merging-from-command-line docs): a clocks map of clock
 * names with trace_time_offset_ns, a machines map keyed by id, and
 * trace_time.machine without trace_time.file get trace_processor's error
 * unchanged plus a hint with the valid JSON; tm_manifest_convert_outdated
 * rewrites those parts into the valid form on request.
 */
#include <ctype.h>
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

/* What an outdated clocks map converts to: the first clock name (src), the
 * file to relate to (ref, NULL when none can be named) and its clock, the
 * offset token, why that file, and how many clocks the map had. */
struct old_target {
	const char *src, *ref, *rclock, *why;
	const cJSON *off;
	size_t n_clocks;
};

static void
old_clocks_target(const cJSON *meta, const cJSON *entry, struct old_target *t)
{
	const cJSON *c = tm_mj_member(entry, "clocks"), *files = tm_mj_member(meta, "files");
	const cJSON *tt = tm_mj_member(meta, "trace_time"), *first = NULL, *k;
	const cJSON *e;
	bool via = false;

	memset(t, 0, sizeof *t);
	cJSON_ArrayForEach(k, c) {
		if (!cJSON_IsObject(k))
			continue;
		t->n_clocks++;
		if (!first)
			first = k;
	}
	t->src = first->string;
	t->off = tm_mj_member(first, "trace_time_offset_ns");
	if (tm_mj_is_str(tm_mj_member(tt, "file"))) {
		t->ref = tm_mj_member(tt, "file")->valuestring;
		t->why = "the trace_time.file, which owns trace time";
	} else if (tm_mj_is_str(tm_mj_member(tt, "machine")) &&
		   (e = entry_declaring(files, entry, tm_mj_member(tt, "machine")->valuestring, &via))) {
		t->ref = tm_mj_member(e, "path")->valuestring;
		t->why = "the file of trace_time.machine, which owns trace time";
	} else {
		t->why = "the first other file in files[] (trace time's owner could not be inferred; "
			 "use the file whose clock the offset was measured against)";
		cJSON_ArrayForEach(e, files) {
			if (e != entry && tm_mj_is_str(tm_mj_member(e, "path"))) {
				t->ref = tm_mj_member(e, "path")->valuestring;
				break;
			}
		}
	}
	t->rclock = tm_mj_is_str(tm_mj_member(tt, "clock")) &&
			    tm_clock_from_name(tm_mj_member(tt, "clock")->valuestring)
		    ? tm_mj_member(tt, "clock")->valuestring
		    : t->src;
}

static void
hint_clocks(const cJSON *meta, const cJSON *entry, struct tm_buf *h)
{
	struct old_target t;
	const char *ref, *why, *rclock, *src;
	const cJSON *off;
	size_t n_clocks;

	old_clocks_target(meta, entry, &t);
	src = t.src;
	ref = t.ref;
	why = t.why;
	rclock = t.rclock;
	off = t.off;
	n_clocks = t.n_clocks;
	if (!ref) {
		ref = "OTHER_FILE";
		why = "a placeholder: replace OTHER_FILE with the path of the file to align "
		      "to (it must also be listed in files[])";
	}
	tm_buf_adds(h, "files entry ");
	json_str(h, tm_mj_is_str(tm_mj_member(entry, "path")) ? tm_mj_member(entry, "path")->valuestring : "");
	tm_buf_adds(h, " uses the outdated `clocks` map of clock names with trace_time_offset_ns "
		       "(older docs). A clocks block is now one relation to a clock in another "
		       "file: \"clocks\": {\"clock\": ");
	json_str(h, src);
	tm_buf_adds(h, ", \"sync_to\": {\"file\": ");
	json_str(h, ref);
	tm_buf_adds(h, ", \"clock\": ");
	json_str(h, rclock);
	tm_buf_addf(h, "}, \"offset_ns\": %s}. ", tm_mj_is_num(off) ? off->valuestring : "0");
	tm_buf_adds(h, "The sign is unchanged: trace_time_offset_ns was added to this file's "
		       "timestamps, and offset_ns means reference = this file + offset_ns (a "
		       "positive value moves the file later). sync_to.file is ");
	tm_buf_adds(h, why);
	tm_buf_adds(h, ".");
	if (n_clocks > 1)
		tm_buf_adds(h, " Only one clock per file can be related; the first was converted.");
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
tm_mf_old_syntax_hint(const cJSON *meta, struct tm_error *err)
{
	struct tm_buf h[3];
	const cJSON *e, *tt = tm_mj_member(meta, "trace_time");
	int primary;
	struct tm_buf out;

	for (int i = 0; i < 3; i++)
		tm_buf_init(&h[i]);
	cJSON_ArrayForEach(e, tm_mj_member(meta, "files")) {
		if (old_clocks(tm_mj_member(e, "clocks")) && !h[0].len)
			hint_clocks(meta, e, &h[0]);
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

enum tm_status
tm_manifest_convert_outdated(const char *text, size_t len, struct tm_buf *out,
			     struct tm_error *err)
{
	char msg[512];
	struct tm_mj_stop stop;
	cJSON *root = tm_mj_parse(text, len, msg, sizeof msg, &stop), *meta, *files, *e, *tt;
	size_t n_changed = 0;
	char *printed;

	if (!root)
		return tm_error_set(err, TM_ERR_MANIFEST, "%s", msg);
	meta = member_mut(root, "perfetto_manifest");
	files = member_mut(meta, "files");
	cJSON_ArrayForEach(e, files) {
		cJSON *c = member_mut(e, "clocks"), *mm = member_mut(e, "machines");
		if (old_clocks(c)) {
			struct old_target t;
			cJSON *n = cJSON_CreateObject(), *sync = cJSON_CreateObject();
			old_clocks_target(meta, e, &t);
			if (!t.ref) {
				cJSON_Delete(n);
				cJSON_Delete(sync);
				cJSON_Delete(root);
				return tm_error_set(err, TM_ERR_INVALID,
						    "cannot convert: no other file in files[] for %s's "
						    "offset to relate to",
						    tm_mj_is_str(tm_mj_member(e, "path"))
							    ? tm_mj_member(e, "path")->valuestring
							    : "an entry");
			}
			cJSON_AddStringToObject(n, "clock", t.src);
			cJSON_AddStringToObject(sync, "file", t.ref);
			cJSON_AddStringToObject(sync, "clock", t.rclock);
			cJSON_AddItemToObject(n, "sync_to", sync);
			cJSON_AddItemToObject(n, "offset_ns", cJSON_CreateRaw(tm_mj_is_num(t.off)
									? t.off->valuestring
									: "0"));
			cJSON_ReplaceItemInObjectCaseSensitive(e, "clocks", n);
			n_changed++;
		}
		if (cJSON_IsObject(mm)) {
			cJSON *arr = cJSON_CreateArray(), *k;
			cJSON_ArrayForEach(k, mm) {
				cJSON *item = cJSON_CreateObject();
				const cJSON *nm = tm_mj_member(k, "name");
				if (numeric_key(k->string))
					cJSON_AddItemToObject(item, "id", cJSON_CreateRaw(k->string));
				else
					cJSON_AddStringToObject(item, "id", k->string);
				cJSON_AddStringToObject(item, "name",
							tm_mj_is_str(nm) ? nm->valuestring : "NAME");
				cJSON_AddItemToArray(arr, item);
			}
			cJSON_ReplaceItemInObjectCaseSensitive(e, "machines", arr);
			n_changed++;
		}
	}
	tt = member_mut(meta, "trace_time");
	if (cJSON_IsObject(tt) && tm_mj_is_str(tm_mj_member(tt, "machine")) &&
	    !tm_mj_member(tt, "file")) {
		bool via = false;
		const cJSON *d = entry_declaring(files, NULL, tm_mj_member(tt, "machine")->valuestring, &via);
		if (!d) {
			cJSON_Delete(root);
			return tm_error_set(err, TM_ERR_INVALID,
					    "cannot convert: no files entry declares trace_time's machine");
		}
		cJSON_AddStringToObject(tt, "file", tm_mj_member(d, "path")->valuestring);
		if (!via)
			cJSON_DeleteItemFromObjectCaseSensitive(tt, "machine");
		n_changed++;
	}
	if (n_changed == 0) {
		cJSON_Delete(root);
		return tm_error_set(err, TM_ERR_INVALID, "nothing in the outdated syntax to convert");
	}
	printed = cJSON_Print(root);
	cJSON_Delete(root);
	if (!printed)
		return tm_error_set(err, TM_ERR_LIMIT, "out of memory");
	tm_buf_adds(out, printed);
	tm_buf_addc(out, '\n');
	cJSON_free(printed);
	return TM_OK;
}

/* SPDX-License-Identifier: MIT */
/*
 * Outdated syntax (merging-from-command-line docs): a clocks map of clock
 * names with trace_time_offset_ns, a machines map keyed by id, and
 * trace_time.machine without trace_time.file get trace_processor's error
 * unchanged plus a hint with the valid JSON.
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

static void
hint_clocks(const cJSON *meta, const cJSON *entry, struct tm_buf *h)
{
	const cJSON *c = tm_mj_member(entry, "clocks"), *files = tm_mj_member(meta, "files");
	const cJSON *tt = tm_mj_member(meta, "trace_time"), *first = NULL, *k, *off;
	const char *src = NULL, *ref = NULL, *rclock, *why;
	const cJSON *e;
	bool via = false;
	size_t n_clocks = 0;

	cJSON_ArrayForEach(k, c) {
		if (!cJSON_IsObject(k))
			continue;
		n_clocks++;
		if (!first)
			first = k;
	}
	src = first->string;
	off = tm_mj_member(first, "trace_time_offset_ns");
	if (tm_mj_is_str(tm_mj_member(tt, "file"))) {
		ref = tm_mj_member(tt, "file")->valuestring;
		why = "the trace_time.file, which owns trace time";
	} else if (tm_mj_is_str(tm_mj_member(tt, "machine")) &&
		   (e = entry_declaring(files, entry, tm_mj_member(tt, "machine")->valuestring, &via))) {
		ref = tm_mj_member(e, "path")->valuestring;
		why = "the file of trace_time.machine, which owns trace time";
	} else {
		why = "the first other file in files[] (trace time's owner could not be inferred; "
		      "use the file whose clock the offset was measured against)";
		cJSON_ArrayForEach(e, files) {
			if (e != entry && tm_mj_is_str(tm_mj_member(e, "path"))) {
				ref = tm_mj_member(e, "path")->valuestring;
				break;
			}
		}
		if (!ref) {
			ref = "OTHER_FILE";
			why = "a placeholder: replace OTHER_FILE with the path of the file to align "
			      "to (it must also be listed in files[])";
		}
	}
	rclock = tm_mj_is_str(tm_mj_member(tt, "clock")) && tm_clock_from_name(tm_mj_member(tt, "clock")->valuestring)
			 ? tm_mj_member(tt, "clock")->valuestring
			 : src;
	tm_buf_adds(h, "files entry ");
	tm_mf_json_str(h, tm_mj_is_str(tm_mj_member(entry, "path")) ? tm_mj_member(entry, "path")->valuestring : "");
	tm_buf_adds(h, " uses the outdated `clocks` map of clock names with trace_time_offset_ns "
		       "(older docs). A clocks block is now one relation to a clock in another "
		       "file: \"clocks\": {\"clock\": ");
	tm_mf_json_str(h, src);
	tm_buf_adds(h, ", \"sync_to\": {\"file\": ");
	tm_mf_json_str(h, ref);
	tm_buf_adds(h, ", \"clock\": ");
	tm_mf_json_str(h, rclock);
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
	tm_mf_json_str(h, tm_mj_is_str(tm_mj_member(entry, "path")) ? tm_mj_member(entry, "path")->valuestring : "");
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
			tm_mf_json_str(h, d);
		tm_buf_adds(h, ", \"name\": ");
		tm_mf_json_str(h, tm_mj_is_str(n) ? n->valuestring : "NAME");
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
	tm_mf_json_str(h, tm_mj_is_str(tm_mj_member(tt, "clock")) ? tm_mj_member(tt, "clock")->valuestring : "BOOTTIME");
	tm_buf_adds(h, ", \"file\": ");
	tm_mf_json_str(h, e ? tm_mj_member(e, "path")->valuestring : "FILE");
	if (via) {
		tm_buf_adds(h, ", \"machine\": ");
		tm_mf_json_str(h, mach);
	}
	tm_buf_adds(h, "}.");
	if (!e) {
		tm_buf_adds(h, " No files entry declares machine ");
		tm_mf_json_str(h, mach);
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

/* SPDX-License-Identifier: MIT */
/*
 * The report as markdown (ours), for pasting into a bug: the verdict, a
 * table of the files in trace_processor's processing order with their
 * figures, the dropped and missing events by stat, the timeline's owner,
 * the machines and tracemerge's warnings.  The same figures as check's text
 * and --json; every text from the inputs is escaped for the terminal
 * (tm_escape_display) and for markdown (a table cell cannot break).  Also
 * a track's identity as every view prints it (a loose input's label is the
 * session's).
 */
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Text into a markdown table cell or line: display-escaped, then the
 * characters markdown reads (| and the inline marks) backslash-escaped. */
static void
md_text(struct tm_buf *out, const char *s)
{
	struct tm_buf e;
	tm_buf_init(&e);
	tm_escape_display(s ? s : "", s ? strlen(s) : 0, &e, NULL, 0, NULL);
	for (size_t i = 0; i < e.len; i++) {
		char c = e.data[i];
		if (strchr("\\|`*_[]<>#~", c))
			tm_buf_addc(out, '\\');
		tm_buf_addc(out, c);
	}
	tm_buf_fini(&e);
}

static void
md_label(struct tm_buf *out, const struct tm_session *s, const struct tm_report_file *f)
{
	struct tm_buf l;
	tm_buf_init(&l);
	if (f->path)
		tm_buf_adds(&l, f->path);
	else if (s)
		tm_session_member_label(s, f->member, &l);
	md_text(out, l.data ? l.data : "");
	tm_buf_fini(&l);
}

static void
md_machine(struct tm_buf *out, const struct tm_report *r, uint32_t id)
{
	for (size_t i = 0; i < r->n_machines; i++) {
		if (r->machines[i].id != id)
			continue;
		tm_buf_addf(out, "%" PRIu32, id);
		if (r->machines[i].name) {
			tm_buf_adds(out, " ");
			md_text(out, r->machines[i].name);
		}
		return;
	}
	tm_buf_addf(out, "%" PRIu32, id);
}

static void
md_stats(struct tm_buf *out, const char *title, const struct tm_stat *st, size_t n, bool drops_only)
{
	size_t shown = 0;
	for (size_t i = 0; i < n; i++)
		shown += !drops_only || tm_stat_is_drop(st[i].id);
	if (!shown)
		return;
	tm_buf_addf(out, "\n## %s\n\n| Stat | Events |\n|---|---:|\n", title);
	for (size_t i = 0; i < n; i++) {
		if (drops_only && !tm_stat_is_drop(st[i].id))
			continue;
		tm_buf_adds(out, "| ");
		md_text(out, st[i].name);
		tm_buf_addf(out, " | %" PRIu64 " |\n", st[i].value);
	}
}

void
tm_report_track_id(const struct tm_session *s, const struct tm_report *r, uint32_t track,
		   struct tm_buf *out)
{
	if (track >= r->n_tracks) {
		tm_buf_adds(out, "-");
		return;
	}
	const struct tm_report_track *t = &r->tracks[track];
	const char *path = t->file < r->n_files ? r->files[t->file].path : NULL;
	if (!path && t->file < r->n_files) {
		const struct tm_member *m = s ? tm_session_member(s, r->files[t->file].member) : NULL;
		path = m && m->source_path ? tm_path_base(m->source_path) : NULL;
	}
	tm_buf_addf(out, "%s#%" PRIu32, path ? path : "", t->number);
}

void
tm_report_markdown(const struct tm_session *s, const struct tm_report *r, struct tm_buf *out)
{
	struct tm_buf v;
	tm_buf_init(&v);
	tm_report_verdict(r, &v);
	tm_buf_adds(out, "# tracemerge report\n\n**Verdict:** ");
	md_text(out, v.data ? v.data : "");
	tm_buf_adds(out, "\n");
	tm_buf_fini(&v);
	if (r->error_where) {
		tm_buf_adds(out, "\n**Where (tracemerge):** ");
		md_text(out, r->error_where);
		tm_buf_adds(out, "\n");
	}
	if (r->hint) {
		tm_buf_adds(out, "\n**Hint (tracemerge, not trace_processor):** ");
		md_text(out, r->hint);
		tm_buf_adds(out, "\n");
	}
	tm_buf_adds(out, "\n## Files, in trace_processor's processing order\n\n"
			 "| # | File | Format | Machines | Events | Dropped | Missing | First ts (ns) | "
			 "Last ts (ns) |\n|---:|---|---|---|---:|---:|---:|---:|---:|\n");
	size_t *idx, n = tm_report_files_in_order(r, &idx);
	for (size_t k = 0; k < n; k++) {
		const struct tm_report_file *f = &r->files[idx[k]];
		tm_buf_addf(out, "| %zu | ", k + 1);
		md_label(out, s, f);
		tm_buf_adds(out, " | ");
		md_text(out, tm_format_name(f->format));
		tm_buf_adds(out, " | ");
		for (size_t m = 0; m < f->n_machines; m++) {
			if (m)
				tm_buf_adds(out, ", ");
			md_machine(out, r, f->machines[m]);
		}
		if (f->is_untimed)
			tm_buf_adds(out, " | no timeline events | - | - | ");
		else if (f->is_predicted)
			tm_buf_addf(out, " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | ", f->events,
				    f->dropped, f->missing);
		else
			tm_buf_adds(out, " | not predicted | - | - | ");
		if (f->has_ts)
			tm_buf_addf(out, "%" PRId64 " | %" PRId64 " |\n", f->first_ts, f->last_ts);
		else
			tm_buf_adds(out, "- | - |\n");
	}
	free(idx);
	if (r->dropped) {
		tm_buf_adds(out, "\n## Dropped by machine\n\n| Machine | Dropped |\n|---|---:|\n");
		for (size_t i = 0; i < r->n_machines; i++) {
			if (!r->machines[i].dropped)
				continue;
			tm_buf_adds(out, "| ");
			md_machine(out, r, r->machines[i].id);
			tm_buf_addf(out, " | %" PRIu64 " |\n", r->machines[i].dropped);
		}
		md_stats(out, "Dropped by stat", r->stats, r->n_stats, true);
	}
	if (r->missing)
		md_stats(out, "Missing from the merged trace (tracemerge), by stat", r->missing_stats,
			 r->n_missing_stats, false);
	tm_buf_adds(out, "\n## Timeline\n\n");
	md_text(out, tm_clock_name(r->tt_clock));
	if (r->tt_machine >= 0) {
		tm_buf_adds(out, " on machine ");
		md_machine(out, r, (uint32_t)r->tt_machine);
	}
	if (r->tt_file >= 0 && (size_t)r->tt_file < r->n_files) {
		tm_buf_adds(out, ", owned by ");
		md_label(out, s, &r->files[r->tt_file]);
	}
	if (r->tt_why) {
		tm_buf_adds(out, " (tracemerge: ");
		md_text(out, r->tt_why);
		tm_buf_adds(out, ")");
	}
	tm_buf_adds(out, "\n");
	if (r->overlap.text) {
		tm_buf_adds(out, "\n");
		md_text(out, r->overlap.text);
		tm_buf_adds(out, " (tracemerge)\n");
	}
	if (r->n_warnings || !r->is_complete) {
		tm_buf_adds(out, "\n## Warnings (tracemerge)\n\n");
		if (!r->is_complete)
			tm_buf_adds(out, "- some files are in formats whose events tracemerge does not "
					 "predict; their drops are not counted above\n");
		for (size_t i = 0; i < r->n_warnings; i++) {
			tm_buf_adds(out, "- ");
			md_text(out, r->warnings[i]);
			tm_buf_adds(out, "\n");
		}
	}
}

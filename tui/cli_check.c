/* SPDX-License-Identifier: MIT */
/*
 * tracemerge check: the engine's report printed (text or --json, with the
 * per-event list under --events), the proven fixes, the exit status.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracemerge.h"
#include "cli.h"

/* ------------------------------------------------------------------ */
/* check                                                               */
/* ------------------------------------------------------------------ */

/* A stat list as a JSON object of name: value. */
static void
json_stats(struct tm_buf *b, const struct tm_stat *st, size_t n)
{
	tm_buf_addc(b, '{');
	for (size_t i = 0; i < n; i++) {
		if (i)
			tm_buf_addc(b, ',');
		json_str(b, st[i].name);
		tm_buf_addf(b, ":%" PRIu64, st[i].value);
	}
	tm_buf_addc(b, '}');
}

void
check_print_json(FILE *out, struct tm_session *s, const struct tm_manifest *cur, const struct tm_report *r,
		 bool events)
{
	struct tm_buf b;
	tm_buf_init(&b);
	bool first = true;
	tm_buf_addc(&b, '{');
	kv_bool(&b, &first, "ok", r->ok);
	kv_str(&b, &first, "error", r->error);
	kv_bool(&b, &first, "error_is_ours", r->error && r->error_is_ours);
	kv_bool(&b, &first, "error_in_manifest", r->error && r->error_in_manifest);
	kv_str(&b, &first, "error_where", r->error_where);
	kv_str(&b, &first, "hint", r->hint);
	kv_u64(&b, &first, "dropped", true, r->dropped);
	kv_u64(&b, &first, "missing", true, r->missing);
	json_key(&b, &first, "missing_by_stat");
	json_stats(&b, r->missing_stats, r->n_missing_stats);
	kv_bool(&b, &first, "complete", r->is_complete);
	/* ours: whether the files' kept time ranges overlap */
	{
		const struct tm_overlap *ov = &r->overlap;
		bool two = ov->n_files >= 2;
		bool ff = true;
		json_key(&b, &first, "overlap");
		tm_buf_addc(&b, '{');
		kv_u64(&b, &ff, "files", true, ov->n_files);
		json_key(&b, &ff, "overlap");
		tm_buf_adds(&b, two ? (ov->overlap ? "true" : "false") : "null");
		kv_int(&b, &ff, "common_ns", two && ov->overlap, ov->common_ns);
		kv_int(&b, &ff, "gap_ns", two && !ov->overlap, ov->gap_ns);
		kv_str(&b, &ff, "ends_first",
		       two && !ov->overlap ? r->files[ov->ends_first].path : NULL);
		kv_str(&b, &ff, "starts_last",
		       two && !ov->overlap ? r->files[ov->starts_last].path : NULL);
		kv_str(&b, &ff, "text", ov->text);
		tm_buf_addc(&b, '}');
	}
	json_key(&b, &first, "stats");
	json_stats(&b, r->stats, r->n_stats);
	json_key(&b, &first, "trace_time");
	tm_buf_addf(&b, "{\"clock\":");
	json_str(&b, tm_clock_name(r->tt_clock));
	tm_buf_addf(&b, ",\"clock_id\":%" PRIu32 ",\"file\":", r->tt_clock);
	json_str(&b, r->tt_file >= 0 ? r->files[r->tt_file].path : NULL);
	/* the machine's name, and its table id */
	bool has_m = r->tt_machine >= 0 && (size_t)r->tt_machine < r->n_machines;
	tm_buf_adds(&b, ",\"machine\":");
	json_str(&b, has_m ? r->machines[r->tt_machine].name : NULL);
	tm_buf_adds(&b, ",\"machine_id\":");
	if (has_m)
		tm_buf_addf(&b, "%" PRId64, r->tt_machine);
	else
		tm_buf_adds(&b, "null");
	/* false: no file claimed it (trace_processor writes no
	 * trace_time_clock_id; the clock is its initial TRACE_FILE) */
	tm_buf_addf(&b, ",\"claimed\":%s", r->tt_machine >= 0 ? "true" : "false");
	tm_buf_adds(&b, ",\"why\":");
	json_str(&b, r->tt_why);
	tm_buf_addc(&b, '}');
	json_key(&b, &first, "machines");
	tm_buf_addc(&b, '[');
	for (size_t i = 0; i < r->n_machines; i++) {
		tm_buf_addf(&b,
			    "%s{\"id\":%" PRIu32 ",\"raw_id\":%" PRIu64 ",\"label_index\":%" PRIu32
			    ",\"dropped\":%" PRIu64 ",\"name\":",
			    i ? "," : "", r->machines[i].id, r->machines[i].raw_id,
			    r->machines[i].label_index, r->machines[i].dropped);
		json_str(&b, r->machines[i].name);
		tm_buf_addc(&b, '}');
	}
	tm_buf_addc(&b, ']');
	json_key(&b, &first, "metadata");
	tm_buf_addc(&b, '{');
	for (size_t i = 0; i < r->n_meta; i++) {
		if (i)
			tm_buf_addc(&b, ',');
		json_str(&b, r->meta[i].key);
		tm_buf_addc(&b, ':');
		if (r->meta[i].is_int)
			tm_buf_addf(&b, "%" PRId64, r->meta[i].ival);
		else
			json_str(&b, r->meta[i].sval);
	}
	tm_buf_addc(&b, '}');
	json_key(&b, &first, "warnings");
	tm_buf_addc(&b, '[');
	for (size_t i = 0; i < r->n_warnings; i++) {
		if (i)
			tm_buf_addc(&b, ',');
		json_str(&b, r->warnings[i]);
	}
	tm_buf_addc(&b, ']');
	json_key(&b, &first, "files");
	tm_buf_addc(&b, '[');
	for (size_t i = 0; i < r->n_files; i++) {
		const struct tm_report_file *f = &r->files[i];
		bool ff = true;
		tm_buf_adds(&b, i ? ",{" : "{");
		kv_str(&b, &ff, "path", f->path);
		kv_str(&b, &ff, "format", tm_format_name(f->format));
		kv_u64(&b, &ff, "size", f->size != UINT64_MAX, f->size);
		kv_u64(&b, &ff, "order", f->order != UINT32_MAX, f->order);
		kv_bool(&b, &ff, "hidden", f->is_hidden);
		kv_bool(&b, &ff, "predicted", f->is_predicted);
		kv_bool(&b, &ff, "untimed", f->is_untimed);
		json_key(&b, &ff, "machines");
		tm_buf_addc(&b, '[');
		for (size_t k = 0; k < f->n_machines; k++)
			tm_buf_addf(&b, "%s%" PRIu32, k ? "," : "", f->machines[k]);
		tm_buf_addc(&b, ']');
		json_key(&b, &ff, "clocks");
		tm_buf_addc(&b, '[');
		for (size_t k = 0; k < f->n_clocks; k++) {
			if (k)
				tm_buf_addc(&b, ',');
			json_str(&b, tm_clock_name(f->clocks[k]));
		}
		tm_buf_addc(&b, ']');
		/* unpredicted formats: unknown, never 0 */
		bool known = !f->is_trace || f->is_predicted;
		kv_u64(&b, &ff, "events", known, f->events);
		kv_u64(&b, &ff, "dropped", known, f->dropped);
		kv_u64(&b, &ff, "missing", known, f->missing);
		json_key(&b, &ff, "missing_by_stat");
		json_stats(&b, f->missing_stats, f->n_missing_stats);
		kv_int(&b, &ff, "first_ts", f->has_ts, f->first_ts);
		kv_int(&b, &ff, "last_ts", f->has_ts, f->last_ts);
		kv_int(&b, &ff, "first_ts_with_dropped", f->has_all_ts, f->all_first_ts);
		json_key(&b, &ff, "stats");
		json_stats(&b, f->stats, f->n_stats);
		kv_str(&b, &ff, "placement", f->placement);
		tm_buf_addc(&b, '}');
	}
	tm_buf_addc(&b, ']');
	if (events) {
		/* each track's identity once (the workbench's tracks view names
		 * it so), not per event */
		size_t *at = calloc(r->n_tracks + 1, sizeof *at);
		if (!at)
			abort();
		struct tm_buf tid;
		tm_buf_init(&tid);
		for (size_t t = 0; t < r->n_tracks; t++) {
			at[t] = tid.len;
			tm_report_track_id(s, r, (uint32_t)t, &tid);
			tm_buf_addc(&tid, 0);
		}
#define TRACK_ID(t) (tid.data + at[t])
		json_key(&b, &first, "events");
		tm_buf_addc(&b, '[');
		for (size_t i = 0; i < r->n_events; i++) {
			const struct tm_report_event *e = &r->events[i];
			tm_buf_adds(&b, i ? ",{\"file\":" : "{\"file\":");
			json_str(&b, r->files[e->file].path);
			tm_buf_adds(&b, ",\"name\":");
			json_str(&b, e->name);
			tm_buf_addf(&b, ",\"ts\":%" PRId64 ",\"dur\":%" PRId64 ",\"machine\":%" PRIu32,
				    e->ts, e->dur, e->machine);
			char ph[2] = {e->phase, 0};
			tm_buf_adds(&b, ",\"phase\":");
			json_str(&b, e->phase ? ph : NULL);
			tm_buf_addf(&b, ",\"slice\":%s", e->is_slice ? "true" : "false");
			if (e->is_slice) /* its depth on its track (the tracks view's row) */
				tm_buf_addf(&b, ",\"depth\":%u", (unsigned)e->depth);
			double val;
			if (tm_report_event_value(r, i, &val) && val == val && val - val == 0)
				tm_buf_addf(&b, ",\"value\":%.17g", val); /* a counter sample's */
			tm_buf_adds(&b, ",\"dropped\":");
			json_str(&b, tm_report_event_dropped(e));
			/* the track as the workbench's tracks view names it */
			tm_buf_adds(&b, ",\"track\":");
			if (e->track < r->n_tracks) {
				json_str(&b, TRACK_ID(e->track));
				tm_buf_adds(&b, ",\"track_kind\":");
				json_str(&b, tm_track_kind_name(r->tracks[e->track].kind));
			} else {
				tm_buf_adds(&b, "null,\"track_kind\":null");
			}
			tm_buf_addc(&b, '}');
		}
		tm_buf_addc(&b, ']');
		/* the tracks, as trace_processor names them */
		json_key(&b, &first, "tracks");
		tm_buf_addc(&b, '[');
		for (size_t t = 0; t < r->n_tracks; t++) {
			const struct tm_report_track *k = &r->tracks[t];
			bool ff = true;
			tm_buf_adds(&b, t ? ",{" : "{");
			kv_str(&b, &ff, "id", TRACK_ID(t));
			kv_str(&b, &ff, "file", r->files[k->file].path);
			kv_u64(&b, &ff, "machine", true, k->machine);
			kv_str(&b, &ff, "kind", tm_track_kind_name(k->kind));
			kv_int(&b, &ff, "pid", k->pid >= 0, k->pid);
			kv_str(&b, &ff, "process", k->process);
			kv_int(&b, &ff, "tid", k->tid >= 0, k->tid);
			kv_str(&b, &ff, "thread", k->thread);
			kv_str(&b, &ff, "name", k->name);
			kv_u64(&b, &ff, "events", true, k->n_events);
			kv_u64(&b, &ff, "dropped", true, k->n_dropped);
			tm_buf_addc(&b, '}');
		}
		tm_buf_addc(&b, ']');
#undef TRACK_ID
		tm_buf_fini(&tid);
		free(at);
	}
	/* the fixes the text report prints as Fix: lines, each proven */
	json_key(&b, &first, "fixes");
	tm_buf_addc(&b, '[');
	struct tm_fixes fx;
	struct tm_error fe;
	memset(&fx, 0, sizeof fx);
	if (!r->ok && tm_fixes_suggest(s, cur, r, NULL, &fx, &fe) == TM_OK) {
		for (size_t i = 0; i < fx.n; i++) {
			bool f2 = true;
			tm_buf_adds(&b, i ? ",{" : "{");
			kv_str(&b, &f2, "file", fx.v[i].file);
			kv_str(&b, &f2, "what", fx.v[i].what);
			kv_str(&b, &f2, "why", fx.v[i].why);
			kv_str(&b, &f2, "verdict", fx.v[i].verdict);
			kv_bool(&b, &f2, "ok", fx.v[i].ok);
			kv_u64(&b, &f2, "dropped", true, fx.v[i].dropped);
			json_key(&b, &f2, "manifest");
			tm_manifest_emit(&fx.v[i].m, &b);
			tm_buf_addc(&b, '}');
		}
	}
	tm_fixes_fini(&fx);
	tm_buf_addc(&b, ']');
	tm_buf_adds(&b, "}\n");
	out_puts(b.data, out);
	tm_buf_fini(&b);
}

static void
put_machine(FILE *out, const struct tm_report *r, uint32_t id)
{
	const struct tm_report_machine *m = &r->machines[id];
	say_part(out, "machine %" PRIu32, m->id);
	if (m->name)
		say_part(out, " \"%s\"", m->name);
	if (m->raw_id)
		say_part(out, " (raw id %" PRIu64 ")", m->raw_id);
}

/* A file's label, as the engine's reports name it (tm_session_member_label).
 * One at a time: the buffer is reused. */
static const char *
file_label(const struct tm_session *s, const struct tm_report_file *f)
{
	static struct tm_buf lb; /* printed through say(), which escapes */
	tm_buf_reset(&lb);
	tm_session_member_label(s, f->member, &lb);
	return lb.data ? lb.data : "";
}

/* Text report: the verdict in the dialog's words, then drops by file, by
 * machine and by stat, the timeline's owner and why, and what is not
 * predicted.  Lines marked (tracemerge) are ours, not trace_processor's. */
void
check_print_text(FILE *out, const struct tm_session *s, const struct tm_report *r)
{
	struct tm_buf b;
	tm_buf_init(&b);
	tm_report_verdict(r, &b);
	say(out, "%s", b.data);
	tm_buf_fini(&b);
	if (r->error_where)
		say(out, "where (tracemerge): %s", r->error_where);
	if (r->hint)
		say(out, "hint (tracemerge, not trace_processor): %s", r->hint);
	fprintf(out, "%s\n", "\nfiles, in trace_processor's processing order:");
	size_t *order;
	size_t n_order = tm_report_files_in_order(r, &order);
	for (size_t oi = 0; oi < n_order; oi++) {
		const struct tm_report_file *f = &r->files[order[oi]];
		say_part(out, "  %-10s %s", tm_format_name(f->format), file_label(s, f));
		if (f->is_untimed && f->format == TM_FMT_NINJA_LOG)
			fputs(": slices at their own times (nothing of it can be dropped)", out);
		else if (f->is_untimed)
			fputs(": no timeline events (nothing of it can be dropped)", out);
		else if (f->is_predicted)
			say_part(out, ": %" PRIu64 " event%s, %" PRIu64 " dropped, %" PRIu64 " missing",
				 f->events, f->events == 1 ? "" : "s", f->dropped, f->missing);
		else if (tm_format_is_predicted(f->format)) /* scanned: the line below says why */
			fputs(": events not predicted (tracemerge does not model what it holds)", out);
		else
			fputs(": events not predicted (format not scanned by tracemerge)", out);
		for (size_t k = 0; k < f->n_machines; k++) {
			fputs(k ? ", " : ", on ", out);
			put_machine(out, r, f->machines[k]);
		}
		fputc('\n', out);
		for (size_t k = 0; k < f->n_stats; k++)
			say(out, "      %s %" PRIu64, f->stats[k].name, f->stats[k].value);
		if (f->placement)
			say(out, "      (tracemerge) %s", f->placement);
	}
	free(order);
	if (r->dropped) {
		fprintf(out, "%s\n", "dropped by machine:");
		for (size_t i = 0; i < r->n_machines; i++) {
			if (!r->machines[i].dropped)
				continue;
			fputs("  ", out);
			put_machine(out, r, r->machines[i].id);
			say(out, ": %" PRIu64, r->machines[i].dropped);
		}
		fprintf(out, "%s\n", "dropped by stat:");
		for (size_t i = 0; i < r->n_stats; i++)
			if (tm_stat_is_drop(r->stats[i].id))
				say(out, "  %s %" PRIu64, r->stats[i].name, r->stats[i].value);
	}
	if (r->missing) {
		fprintf(out, "%s\n", "missing from the merged trace (tracemerge), by stat:");
		for (size_t i = 0; i < r->n_missing_stats; i++)
			say(out, "  %s %" PRIu64, r->missing_stats[i].name, r->missing_stats[i].value);
	}
	say_part(out, "timeline: %s", tm_clock_name(r->tt_clock));
	if (r->tt_machine >= 0 && (size_t)r->tt_machine < r->n_machines) {
		fputs(" on ", out);
		put_machine(out, r, (uint32_t)r->tt_machine);
	}
	if (r->tt_file >= 0)
		say_part(out, ", owned by %s", file_label(s, &r->files[r->tt_file]));
	fputc('\n', out);
	if (r->tt_why)
		say(out, "  (tracemerge) %s", r->tt_why);
	if (r->overlap.text)
		say(out, "%s (tracemerge): %s", r->overlap.overlap ? "overlap" : "warning",
		    r->overlap.text);
	if (!r->is_complete)
		fputs("note (tracemerge): some files are in formats whose events tracemerge does not "
		      "predict; their drops are not counted above.\n",
		      out);
	for (size_t i = 0; i < r->n_warnings; i++)
		say(out, "warning (tracemerge): %s", r->warnings[i]);
}

/* 0 only for a clean merge: nothing dropped and every file predicted.
 * --strict also fails on tracemerge's own warnings. */
static int
exit_for(const struct tm_report *r, bool strict)
{
	if (r->error)
		return EXIT_BROKEN;
	if (!r->ok)
		return EXIT_DROPS;
	if (strict && r->n_warnings)
		return EXIT_DROPS;
	return 0;
}

/* Fixes the engine proved: each was evaluated and helps (fixes.c). */
void
check_print_fixes(FILE *out, struct tm_session *s, const struct tm_manifest *cur)
{
	struct tm_fixes fx;
	struct tm_error e;
	if (tm_fixes_suggest(s, cur, NULL, NULL, &fx, &e) != TM_OK || !fx.n) {
		if (fx.n == 0)
			tm_fixes_fini(&fx);
		return;
	}
	fprintf(out, "\nFixes (tracemerge, each evaluated before it is offered):\n");
	for (size_t i = 0; i < fx.n && i < 3; i++) {
		char *w = tm_escape_str(fx.v[i].what), *why = tm_escape_str(fx.v[i].why);
		fprintf(out, "  Fix: %s\n    predicted: %s\n    why: %s\n", w, fx.v[i].verdict, why);
		free(w);
		free(why);
	}
	tm_fixes_fini(&fx);
}

int
cmd_check(int argc, char **argv)
{
	struct opts o;
	int rc = parse_opts(argc, argv, &o, false);
	if (rc) {
		free_opts(&o);
		return rc;
	}
	struct tm_session *s = NULL;
	struct tm_manifest m;
	bool have_m;
	struct tm_error merr;
	tm_error_clear(&merr);
	rc = open_all(&o, &s, &m, &have_m, o.events, &merr);
	bool in_manifest = merr.code == TM_ERR_MANIFEST;
	if (rc && merr.code != TM_OK && (in_manifest || o.json)) {
		/* The archive we would write fails to open: as trace_processor
		 * reports it, in the one JSON object or the text verdict; an
		 * input that cannot be read (ours: said on stderr too) is one
		 * JSON object as well. */
		if (o.json) {
			struct tm_buf b, w;
			tm_buf_init(&b);
			tm_buf_init(&w);
			if (in_manifest)
				tm_buf_addf(&w, "Trace parse failure: %s (ERR:tp-parse)", merr.msg);
			else
				tm_buf_adds(&w, merr.msg);
			bool first = true;
			tm_buf_addc(&b, '{');
			kv_bool(&b, &first, "ok", false);
			kv_str(&b, &first, "error", w.data);
			kv_bool(&b, &first, "error_is_ours", !in_manifest);
			kv_bool(&b, &first, "error_in_manifest", in_manifest);
			kv_str(&b, &first, "error_where", in_manifest ? o.manifest_path : NULL);
			kv_str(&b, &first, "hint", merr.hint[0] ? merr.hint : NULL);
			kv_u64(&b, &first, "dropped", true, 0);
			kv_bool(&b, &first, "complete", false);
			tm_buf_adds(&b, ",\"stats\":{},\"machines\":[],\"metadata\":{},\"warnings\":[],"
					"\"files\":[],\"fixes\":[]}\n");
			out_puts(b.data, stdout);
			tm_buf_fini(&b);
			tm_buf_fini(&w);
		} else {
			print_manifest_error(&merr);
		}
	}
	if (rc) {
		if (s)
			tm_manifest_fini(&m);
		tm_session_close(s);
		free_opts(&o);
		return rc;
	}
	struct tm_report *r;
	struct tm_error e;
	if (tm_session_evaluate(s, have_m ? &m : NULL, &r, &e) != TM_OK) {
		say(stderr, "tracemerge: %s", e.msg);
		rc = EXIT_BROKEN;
	} else {
		say_cache_note(s);
		if (o.json) {
			check_print_json(stdout, s, have_m ? &m : tm_session_manifest(s, NULL), r, o.events);
		} else if (o.markdown) {
			struct tm_buf md;
			tm_buf_init(&md);
			tm_report_markdown(s, r, &md);
			out_puts(md.data ? md.data : "", stdout);
			tm_buf_fini(&md);
		} else {
			check_print_text(stdout, s, r);
			if (!r->ok)
				check_print_fixes(stdout, s, have_m ? &m : tm_session_manifest(s, NULL));
		}
		struct tm_pack_check pc;
		tm_pack_check(s, have_m ? &m : NULL, &pc);
		const struct tm_pack_issue *refusal = tm_pack_refusal(&pc);
		if (refusal)
			say(stderr, "note: trace_processor util merge would refuse these inputs: %s",
			    refusal->msg);
		tm_pack_check_fini(&pc);
		rc = exit_for(r, o.strict);
		tm_report_free(r);
	}
	tm_manifest_fini(&m);
	tm_session_close(s);
	free_opts(&o);
	return rc;
}


/* SPDX-License-Identifier: MIT */
/*
 * The workbench's model: the inputs and the engine session (scanned on a
 * background thread), the list rows and their names, the report of the last
 * evaluation and its per-event details, and the messages (the current one
 * and a log).  Every edit builds the next manifest from a copy of the
 * current one, pushes the old one on the undo stack and re-evaluates at once
 * (no debounce): the set of files is wb_model_files.c, undo/redo, the saved
 * copy and recovery wb_model_undo.c, the edits wb_model_edit.c (their
 * shared helpers: wb_model.h).
 * No curses here: the model knows nothing of the screen.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "wb.h"
#include "wb_model.h"

void
model_init(struct wb_model *m)
{
	memset(m, 0, sizeof *m);
	tm_manifest_init(&m->man);
	tm_manifest_init(&m->saved);
	tm_listing_snap_init(&m->open_snap);
	tm_manifest_init(&m->det.man);
	m->next_machine_n = 1;
}

void
model_fini(struct wb_model *m)
{
	close_session(m);
	tm_manifest_fini(&m->det.man);
	model_fini_links(m);
	for (size_t i = 0; i < m->n_paths; i++)
		free(m->paths[i]);
	free(m->paths);
	for (size_t i = 0; i < m->n_extra_machines; i++)
		free(m->extra_machines[i]);
	free(m->extra_machines);
	tm_manifest_fini(&m->man);
	tm_manifest_fini(&m->saved);
	free_paths(m->saved_paths, m->n_saved_paths);
	tm_listing_snap_fini(&m->open_snap);
	stack_fini(&m->undo);
	stack_fini(&m->redo);
	for (size_t i = 0; i < m->n_log; i++)
		free(m->log[i]);
	free(m->man_text);
	free(m->eval_error);
	free(m->open_error);
	free(m->written);
	free(m->demo_dir);
	free(m->baseline);
}

void
model_set_msg(struct wb_model *m, enum wb_role role, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->msg, sizeof m->msg, fmt, ap);
	va_end(ap);
	m->msg_role = role;
	if (!m->msg[0])
		return;
	/* The log keeps the last WB_LOG_MAX messages in full (:messages). */
	if (m->n_log == WB_LOG_MAX) {
		free(m->log[0]);
		memmove(m->log, m->log + 1, (WB_LOG_MAX - 1) * sizeof m->log[0]);
		m->n_log--;
	}
	m->log[m->n_log] = strdup(m->msg);
	if (m->log[m->n_log])
		m->n_log++;
}

/* ---- rows: the members shown in the list ---- */

size_t
model_n_rows(const struct wb_model *m)
{
	size_t n = m->s ? tm_session_n_members(m->s) : 0;

	/* Row 0 of the session is the top-level input: for an archive or a
	 * set of loose files it is the container, not a row of the list. */
	return n > 1 ? n - 1 : n;
}

size_t
model_row_member(const struct wb_model *m, size_t row)
{
	return tm_session_n_members(m->s) > 1 ? row + 1 : row;
}

const struct tm_report_file *
model_row_file(const struct wb_model *m, size_t row)
{
	size_t mb;

	if (!m->rep || !m->s)
		return NULL;
	mb = model_row_member(m, row);
	if (mb >= m->tl.n_file_of || m->tl.file_of[mb] == SIZE_MAX)
		return NULL;
	return &m->rep->files[m->tl.file_of[mb]];
}

const char *
model_member_name(const struct wb_model *m, size_t member)
{
	const struct tm_member *mb = m->s ? tm_session_member(m->s, member) : NULL;

	if (!mb)
		return "";
	if (mb->name)
		return mb->name;
	return mb->source_path ? tm_path_base(mb->source_path) : "";
}

const char *
model_member_label(const struct wb_model *m, size_t member, struct tm_buf *tmp, size_t *len)
{
	const struct tm_member *mb = m->s ? tm_session_member(m->s, member) : NULL;
	const char *name = model_member_name(m, member);

	*len = mb && mb->name ? mb->name_len : strlen(name);
	if (*len || !mb || !mb->name)
		return name;
	/* a member trace_processor names "" (what a lone .gz inflates to):
	 * the engine's label, `"" (inflated a.json.gz)` */
	tm_buf_reset(tmp);
	tm_session_member_label(m->s, member, tmp);
	*len = tmp->len;
	return tmp->len ? tmp->data : name;
}

const char *
model_row_name(const struct wb_model *m, size_t row)
{
	if (!m->s || row >= model_n_rows(m))
		return NULL;
	return model_member_name(m, model_row_member(m, row));
}

size_t
model_row_of(const struct wb_model *m, const char *name)
{
	for (size_t r = 0; name && r < model_n_rows(m); r++)
		if (strcmp(model_row_name(m, r), name) == 0)
			return r;
	return SIZE_MAX;
}

const struct tm_manifest_file *
model_manifest_file(const struct wb_model *m, const char *path)
{
	for (size_t i = 0; path && i < m->man.n_files; i++)
		if (m->man.files[i].path && strcmp(m->man.files[i].path, path) == 0)
			return &m->man.files[i];
	return NULL;
}

bool
model_owns_timeline(const struct wb_model *m, const char *path)
{
	const struct tm_report *r = m->rep;

	if (!r || !path || r->error || r->tt_file < 0 || (size_t)r->tt_file >= r->n_files)
		return false;
	return strcmp(model_member_name(m, r->files[r->tt_file].member), path) == 0;
}

bool
model_ref_follows(const struct wb_model *m, const char *ref)
{
	const struct tm_manifest_file *f = model_manifest_file(m, ref);

	return !f || !f->has_clocks;
}

void
model_offset_effect(const struct wb_model *m, const char *path, int64_t off, const char *ref,
		    char *buf, size_t len)
{
	int64_t neg;

	if (off == 0) {
		snprintf(buf, len, "no shift");
		return;
	}
	/* trace_processor keeps the owner's timestamps: an offset on it moves
	 * the reference (and what follows it) the other way instead. */
	if (ref && model_owns_timeline(m, path) && model_ref_follows(m, ref) &&
	    !__builtin_sub_overflow(0, off, &neg)) {
		struct tm_buf d;
		tm_buf_init(&d);
		tm_format_duration_ns(neg, &d);
		snprintf(buf, len, "%s owns the timeline and stays put; %s moves %s instead", path,
			 ref, d.data ? d.data : "");
		tm_buf_fini(&d);
		return;
	}
	if (ref && model_owns_timeline(m, path)) {
		snprintf(buf, len, "%s owns the timeline and stays put; %s is placed by its own "
				   "clocks entry",
			 path, ref);
		return;
	}
	snprintf(buf, len, "%s", off > 0 ? "moves later" : "moves earlier");
}

/* ---- evaluation ---- */

/* The timeline's range and each file's dropped range before zero, from the
 * report's numbers (the fast path: never waits for per-event details), once
 * per evaluation, not in every frame. */
void
timeline_data(struct wb_model *m)
{
	const struct tm_report *r = m->rep;
	struct wb_tl_data *t = &m->tl;

	free(t->drop);
	free(t->file_of);
	memset(t, 0, sizeof *t);
	t->hi = 1;
	if (!r)
		return;
	for (size_t i = 0; i < r->n_files; i++)
		if (r->files[i].member >= t->n_file_of)
			t->n_file_of = r->files[i].member + 1;
	t->file_of = malloc((t->n_file_of ? t->n_file_of : 1) * sizeof *t->file_of);
	if (!t->file_of)
		abort();
	for (size_t i = 0; i < t->n_file_of; i++)
		t->file_of[i] = SIZE_MAX;
	for (size_t i = r->n_files; i-- > 0;) /* the first file of a member wins */
		t->file_of[r->files[i].member] = i;
	t->lo = INT64_MAX;
	t->hi = INT64_MIN;
	t->drop = calloc(r->n_files + 1, sizeof *t->drop);
	if (!t->drop)
		abort();
	for (size_t i = 0; i < r->n_files; i++) {
		const struct tm_report_file *rf = &r->files[i];
		struct wb_drop_range *d = &t->drop[i];
		if (rf->has_all_ts) {
			t->lo = rf->all_first_ts < t->lo ? rf->all_first_ts : t->lo;
			t->hi = rf->all_last_ts > t->hi ? rf->all_last_ts : t->hi;
			if (rf->all_first_ts < 0)
				*d = (struct wb_drop_range){true, rf->all_first_ts,
							   rf->all_last_ts < 0 ? rf->all_last_ts : 0};
		}
		if (rf->has_ts) {
			t->lo = rf->first_ts < t->lo ? rf->first_ts : t->lo;
			t->hi = rf->last_ts > t->hi ? rf->last_ts : t->hi;
		}
	}
	/* Zero (where events start to be dropped) is on the strip unless it is
	 * further from the events than their own span (wall-clock times). */
	if (t->lo > t->hi) {
		t->lo = 0;
		t->hi = 1;
	} else if (t->lo > 0 && t->lo <= t->hi - t->lo) {
		t->lo = 0;
	} else if (t->lo >= 0 && t->hi == t->lo) {
		t->hi = t->lo + 1;
	}
	if (t->hi <= 0)
		t->hi = 1;
}

static void details_forget(struct wb_model *m);

void
model_evaluate(struct wb_model *m)
{
	struct tm_error err;
	struct tm_report *rep = NULL;

	if (!m->s || !m->scanned)
		return;
	tm_error_clear(&err);
	free(m->eval_error);
	m->eval_error = NULL;
	/* A broken manifest: the archive's own members, as trace_processor
	 * reads them (its error is the verdict). */
	if (tm_session_eval_numbers(m->s, m->man_broken ? NULL : &m->man, &rep, &err) != TM_OK) {
		m->eval_error = strdup(err.msg[0] ? err.msg : tm_status_str(err.code));
		if (rep)
			tm_report_free(rep);
		rep = NULL;
	}
	if (m->rep)
		tm_report_free(m->rep);
	m->rep = rep;
	/* the details shown belonged to the last evaluation: gone; a thread
	 * still computing them stops */
	details_forget(m);
	if (m->det.running)
		__atomic_store_n(&m->det.cancel, true, __ATOMIC_RELAXED);
	timeline_data(m);
	model_fixes_refresh(m);
	model_details_poll(m);
}

/* ---- per-event details, on a thread of their own ---- */

bool
model_details_kept(const struct wb_model *m)
{
	return m->s && tm_session_keeps_events(m->s);
}

static void
details_forget(struct wb_model *m)
{
	struct wb_details *d = &m->det;
	for (size_t i = 0; i < d->n_files; i++)
		for (size_t k = 0; k < d->files[i].n_first; k++)
			free(d->files[i].first[k].name);
	free(d->files);
	d->files = NULL;
	d->n_files = 0;
	tm_view_free(d->view);
	d->view = NULL;
	tm_report_free(d->full);
	d->full = NULL;
	free(d->error);
	d->error = NULL;
	d->ready = false;
}

static void *
details_worker(void *arg)
{
	struct wb_model *m = arg;
	struct wb_details *d = &m->det;
	struct tm_eval_opts o = {.events = true, .dropped_only = !d->run_all, .cancel = &d->cancel};
	struct tm_error err;
	tm_error_clear(&err);
	while (__atomic_load_n(&d->stall, __ATOMIC_ACQUIRE))
		nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
	d->st = tm_session_evaluate_ex(m->s, d->man_none ? NULL : &d->man, &o, &d->out, &err);
	if (d->st == TM_OK && d->run_all && d->out) /* the index too, off the UI thread */
		d->view_out = tm_view_build(d->out);
	if (d->st != TM_OK && d->st != TM_ERR_CANCELLED)
		d->werr = strdup(err.msg[0] ? err.msg : tm_status_str(err.code));
	__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* What the pane shows of r's list (r: the current evaluation's). */
static void
details_take(struct wb_model *m, const struct tm_report *r)
{
	struct wb_details *d = &m->det;
	d->files = calloc(r->n_files + 1, sizeof *d->files);
	if (!d->files)
		abort();
	d->n_files = r->n_files;
	for (size_t i = 0; i < r->n_events; i++) {
		const struct tm_report_event *ev = &r->events[i];
		if (!ev->drop || ev->file >= r->n_files)
			continue;
		struct wb_file_details *f = &d->files[ev->file];
		if (f->n_first < WB_DETAIL_FIRST) {
			struct wb_dropped_event *o = &f->first[f->n_first++];
			o->name = ev->name ? strdup(ev->name) : NULL;
			o->ts = ev->ts;
			o->why = tm_report_event_dropped(ev);
		}
		f->n_dropped++;
	}
	d->ready = true;
}

/* The worker has returned (joined, or it ran inline): what it found. */
static void
details_finish(struct wb_model *m)
{
	struct wb_details *d = &m->det;
	d->running = false;
	d->done = 0;
	char *why = d->werr;
	d->werr = NULL;
	bool current = !d->cancel && m->rep; /* no evaluation since it started */
	if (d->st == TM_ERR_CANCELLED)
		d->n_cancelled++;
	else if (!current)
		d->n_discarded++;
	if (current && d->st == TM_OK && d->out) {
		if (!tm_report_same_numbers(d->out, m->rep)) {
			/* the same rules on the same scans: a bug of ours */
			model_set_msg(m, ROLE_ERROR, "tracemerge: the per-event details disagree "
						     "with the numbers; they are not shown");
			d->ready = true;
			d->error = strdup("they disagree with the numbers (a bug of tracemerge)");
		} else {
			details_take(m, d->out);
			d->n_shown++;
			if (d->run_all) { /* kept for the events and tracks views */
				d->full = d->out;
				d->view = d->view_out;
				if (!++d->view_gen)
					d->view_gen = 1;
				d->out = NULL;
				d->view_out = NULL;
			}
		}
	} else if (current && d->st != TM_ERR_CANCELLED) {
		d->ready = true;
		d->error = why;
		why = NULL;
	}
	free(why);
	tm_view_free(d->view_out);
	d->view_out = NULL;
	tm_report_free(d->out);
	d->out = NULL;
	tm_manifest_fini(&d->man);
	tm_manifest_init(&d->man);
	d->cancel = false;
}

static void
details_join(struct wb_model *m)
{
	pthread_join(m->det.thr, NULL);
	details_finish(m);
}

/* The worker to its end now, on this thread: the started thread joined,
 * else (none could start) run here, once.  A harness stall (:details
 * stall) would wait for a :details go that cannot come: it is over
 * first (the one place besides :details go that ends it). */
static void
details_run_out(struct wb_model *m, bool started)
{
	__atomic_store_n(&m->det.stall, 0, __ATOMIC_RELEASE);
	if (started) {
		details_join(m);
	} else {
		details_worker(m);
		details_finish(m);
	}
}

/* Stop a running thread and wait for it (the session is about to change). */
void
details_stop(struct wb_model *m)
{
	if (m->det.running) {
		__atomic_store_n(&m->det.cancel, true, __ATOMIC_RELAXED);
		details_run_out(m, true);
	}
	details_forget(m);
}

static bool
details_wanted(const struct wb_model *m)
{
	const struct wb_details *d = &m->det;
	return model_details_kept(m) && m->scanned && m->rep && !m->eval_error && !d->ready &&
	       !(d->running && !d->cancel);
}

bool
model_details_poll(struct wb_model *m)
{
	struct wb_details *d = &m->det;
	bool changed = false;
	if (d->running && __atomic_load_n(&d->done, __ATOMIC_ACQUIRE)) {
		details_join(m);
		changed = d->ready;
	}
	if (d->running || d->hold || !details_wanted(m))
		return changed;
	tm_manifest_fini(&d->man);
	tm_manifest_init(&d->man);
	d->man_none = m->man_broken;
	if (!m->man_broken)
		tm_manifest_copy(&d->man, &m->man);
	d->cancel = false;
	d->done = 0;
	d->out = NULL;
	d->run_all = d->want_all;
	d->n_started++;
	if (pthread_create(&d->thr, NULL, details_worker, m) == 0) {
		d->running = true;
	} else {
		details_run_out(m, false);
		changed = true;
	}
	return changed;
}

bool
model_details_busy(const struct wb_model *m)
{
	if (__atomic_load_n(&m->det.stall, __ATOMIC_RELAXED))
		return false; /* the harness's: it waits for :details go */
	return m->det.running || (!m->det.hold && details_wanted(m));
}

const struct wb_file_details *
model_file_details(const struct wb_model *m, size_t file)
{
	if (!m->det.ready || file >= m->det.n_files)
		return NULL;
	return &m->det.files[file];
}

void
model_details_want_all(struct wb_model *m, bool on)
{
	struct wb_details *d = &m->det;
	d->want_all = on;
	/* details in already, of the dropped events only: listed again, all */
	if (on && d->ready && !d->full && !d->error && !d->running) {
		details_forget(m);
		model_details_poll(m);
	}
}

unsigned
model_view_gen(const struct wb_model *m)
{
	return m->det.ready && m->det.view ? m->det.view_gen : 0;
}

const struct tm_view *
model_view(const struct wb_model *m, const struct tm_report **full)
{
	*full = m->det.ready ? m->det.full : NULL;
	return *full ? m->det.view : NULL;
}

void
model_details_hold(struct wb_model *m, bool hold)
{
	m->det.hold = hold;
	if (!hold) {
		__atomic_store_n(&m->det.stall, 0, __ATOMIC_RELEASE);
		model_details_poll(m);
	}
}

void
model_details_stall(struct wb_model *m)
{
	m->det.hold = false;
	__atomic_store_n(&m->det.stall, 1, __ATOMIC_RELEASE);
}

/* ---- what belongs to one evaluation: the proven fixes, the evidence of
 * estimates, a solution not yet applied (wb_align.c makes them) ---- */

void
model_fixes_refresh(struct wb_model *m)
{
	/* forget them: found again when shown (model_fixes_ensure) */
	tm_fixes_fini(&m->fixes);
	for (size_t i = 0; i < m->n_fixes_done; i++)
		free(m->fixes_done[i]);
	free(m->fixes_done);
	m->fixes_done = NULL;
	m->n_fixes_done = 0;
}

void
model_fixes_ensure(struct wb_model *m, const char *path)
{
	struct tm_error err;
	struct tm_fixes got = {0};

	if (!path || !m->s || !m->rep || m->rep->ok || m->man_broken)
		return;
	for (size_t i = 0; i < m->n_fixes_done; i++)
		if (!strcmp(m->fixes_done[i], path))
			return;
	char **d = realloc(m->fixes_done, (m->n_fixes_done + 1) * sizeof *d);
	char *p = strdup(path);
	if (!d || !p)
		abort();
	m->fixes_done = d;
	d[m->n_fixes_done++] = p;
	tm_error_clear(&err);
	if (tm_fixes_suggest(m->s, &m->man, m->rep, path, &got, &err) != TM_OK || !got.n) {
		tm_fixes_fini(&got);
		return;
	}
	struct tm_fix *v = realloc(m->fixes.v, (m->fixes.n + got.n) * sizeof *v);
	if (!v)
		abort();
	memcpy(v + m->fixes.n, got.v, got.n * sizeof *v);
	m->fixes.v = v;
	m->fixes.n += got.n;
	free(got.v); /* the entries are m->fixes' now */
}

void
model_solution_drop(struct wb_model *m)
{
	if (!m->has_solution)
		return;
	tm_solution_fini(&m->solution);
	free(m->solution_diff);
	m->solution_diff = NULL;
	m->has_solution = false;
}

void
model_align_fini(struct wb_model *m)
{
	model_fixes_refresh(m);
	for (size_t i = 0; i < m->n_evidence; i++) {
		free(m->evidence[i].path);
		free(m->evidence[i].text);
	}
	free(m->evidence);
	m->evidence = NULL;
	m->n_evidence = 0;
	model_solution_drop(m);
}

/* ---- background scan ---- */
/* The outdated-syntax hint of a broken manifest (man_text) names only
 * clocks the files have: tm_session_outdated_hint evaluates the session, so
 * it scans.  Never while the background scan runs (two scans of one member
 * at once race: one is lost, and leaks); model_scan_poll gives it then. */
void
outdated_hint(struct wb_model *m)
{
	if (!m->s || !m->man_broken || !m->man_text)
		return;
	if (m->worker_running) {
		m->hint_pending = true;
		return;
	}
	m->hint_pending = false;
	tm_session_outdated_hint(m->s, m->man_text, strlen(m->man_text), &m->man_err);
}

static void *
scan_worker(void *arg)
{
	struct wb_model *m = arg;
	struct tm_error err;
	tm_error_clear(&err);
	/* every member, in parallel as check does (largest first); a member's
	 * error stays in its tm_member.error */
	enum tm_status st = tm_session_scan(m->s, SIZE_MAX, &m->cancel, &err);
	(void)st;
	__atomic_store_n(&m->scan_finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

void
scan_start(struct wb_model *m)
{
	m->cancel = false;
	m->scan_finished = 0;
	m->scan_cancelled = false;
	if (pthread_create(&m->worker, NULL, scan_worker, m) == 0) {
		m->worker_running = true;
	} else {
		scan_worker(m);
		m->scanned = true;
		model_evaluate(m);
	}
}

bool
model_scan_poll(struct wb_model *m)
{
	if (!m->worker_running || !__atomic_load_n(&m->scan_finished, __ATOMIC_ACQUIRE))
		return false;
	pthread_join(m->worker, NULL);
	m->worker_running = false;
	if (m->cancel) {
		m->scan_cancelled = true;
		model_set_msg(m, ROLE_WARNING, "Scan cancelled: numbers are not shown; %s scans again.",
			      model_key(m, REQ_RESCAN));
		return true;
	}
	m->scanned = true;
	if (m->hint_pending)
		outdated_hint(m);
	model_evaluate(m);
	/* ours: where the numbers came from when not from the files */
	struct tm_cache_info ci;
	tm_session_cache_info(m->s, &ci);
	if (ci.note)
		model_set_msg(m, ROLE_WARNING, "%s", ci.note);
	else if (ci.loaded && !m->msg[0])
		model_set_msg(m, ROLE_INFO,
			      "Scan of %zu input%s loaded from the scan cache (unchanged since); "
			      "s reads the files again",
			      ci.loaded, ci.loaded == 1 ? "" : "s");
	return true;
}

void
model_scan_cancel(struct wb_model *m)
{
	if (m->worker_running) {
		__atomic_store_n(&m->cancel, true, __ATOMIC_RELAXED);
		model_set_msg(m, ROLE_WARNING, "Cancelling the scan...");
	}
}

bool
model_is_idle(const struct wb_model *m)
{
	return !m->worker_running && !model_details_busy(m);
}

/* ---- opening inputs ---- */

/* A loose manifest among several inputs goes into the editor, not the TAR. */
static bool
take_loose_manifest(struct wb_model *m, const char *path)
{
	size_t len = 0;
	struct tm_manifest man;
	struct tm_error err;
	bool ok = false;
	char *buf = tm_read_file(path, 1 << 20, true, &len, &err);

	if (!buf)
		return false;
	if (tm_sniff(buf, len) == TM_FMT_MANIFEST) {
		/* a manifest: all of it (the head was for the sniff) */
		free(buf);
		buf = tm_read_file(path, 64u << 20, false, &len, &err);
		if (!buf) {
			model_set_msg(m, ROLE_ERROR, "%s", err.msg);
			return true;
		}
		tm_error_clear(&err);
		if (tm_manifest_parse(buf, len, &man, &err) == TM_OK) {
			tm_manifest_fini(&m->man);
			m->man = man;
		} else {
			/* kept as text, as an archive's: E edits it, C converts
			 * the outdated syntax */
			tm_manifest_fini(&man);
			model_set_msg(m, ROLE_ERROR, "%s: %s", path, err.msg);
			free(m->man_text);
			m->man_text = strndup(buf, len);
			m->man_broken = true;
			m->man_err = err;
		}
		ok = true;
	}
	free(buf);
	return ok;
}

/* Opening lists (and for nested or compressed archives decompresses) on a
 * thread of its own, so that the front end's open_poll (keys, signals) can
 * cancel it through the engine's flag (tm_session_opts.cancel), and draw
 * the members found so far from the engine's listing (m->opening). */
struct open_job {
	const char *const *paths;
	size_t n_paths;
	struct tm_session *s;
	struct tm_session_opts opts;
	struct tm_error err;
	enum tm_status st;
	volatile bool cancel;
	bool done; /* __atomic */
};

static void *
open_thread(void *arg)
{
	struct open_job *j = arg;
	j->st = tm_session_open(&j->s, j->paths, j->n_paths, &j->opts, &j->err);
	__atomic_store_n(&j->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* A session on paths, not yet the model's (NULL with *why on failure;
 * caller frees why). */
struct tm_session *
open_paths(struct wb_model *m, char **paths, size_t n, char **why)
{
	struct open_job j = {.paths = (const char *const *)paths, .n_paths = n};
	uint64_t total = 0;
	pthread_t thr;

	*why = NULL;
	if (n == 0) {
		*why = strdup("no trace files to open");
		return NULL;
	}
	/* Per-event details (for the dropped part of the timeline) only while
	 * they stay small. */
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(paths[i], &st) == 0)
			total += (uint64_t)st.st_size;
	}
	j.opts.keep_events = total < 16u * 1024 * 1024;
	j.opts.cancel = &j.cancel;
	char *cache_dir = m->no_cache ? NULL : tm_cache_default_dir();
	j.opts.cache_dir = cache_dir; /* the session keeps a copy */
	j.opts.cache_refresh = m->cache_refresh;
	j.opts.cache_max_bytes = m->cache_max;
	m->cache_refresh = false;
	tm_error_clear(&j.err);
	struct tm_listing *lst = m->open_poll ? tm_listing_new() : NULL;
	j.opts.listing = lst;
	tm_listing_snap_fini(&m->open_snap);
	m->opening = lst;
	m->open_paths = paths;
	m->open_n_paths = n;
	m->open_gen++;
	if (!m->open_poll || pthread_create(&thr, NULL, open_thread, &j) != 0) {
		open_thread(&j);
	} else {
		while (!__atomic_load_n(&j.done, __ATOMIC_ACQUIRE)) {
			if (!j.cancel && m->open_poll(m->open_poll_ud))
				__atomic_store_n(&j.cancel, true, __ATOMIC_RELAXED);
			else if (j.cancel)
				nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
		}
		pthread_join(thr, NULL);
	}
	/* the snapshot's names are the listing's */
	tm_listing_snap_fini(&m->open_snap);
	m->opening = NULL;
	m->open_paths = NULL;
	m->open_n_paths = 0;
	tm_listing_free(lst);
	free(cache_dir);
	if (j.st != TM_OK) {
		*why = strdup(j.err.msg[0] ? j.err.msg : tm_status_str(j.err.code));
		return NULL;
	}
	return j.s;
}

bool
model_open_refresh(struct wb_model *m)
{
	return m->opening && tm_listing_snapshot(m->opening, &m->open_snap);
}

void
model_open_label(const struct wb_model *m, size_t i, struct tm_buf *out)
{
	const struct tm_listing_member *e = i < m->open_snap.n ? &m->open_snap.members[i] : NULL;

	if (e && e->name && e->name_len) {
		tm_buf_add(out, e->name, e->name_len);
	} else if (e && e->name && e->parent >= 0 && (size_t)e->parent < i) {
		tm_buf_adds(out, "\"\" (inflated ");
		model_open_label(m, (size_t)e->parent, out);
		tm_buf_addc(out, ')');
	} else {
		tm_buf_adds(out, m->open_n_paths == 1 ? tm_path_base(m->open_paths[0]) : "the input");
	}
}

size_t
model_open_rows(const struct wb_model *m)
{
	size_t n = m->open_snap.n;

	return n > 1 ? n - 1 : n;
}

/* s becomes the model's session; its scan starts once the caller has made
 * the manifest fit it. */
void
install_session(struct wb_model *m, struct tm_session *s)
{
	m->s = s;
	m->scanned = false;
	m->scan_cancelled = false;
	/* the name rules depend on the members only: once per opening */
	tm_pack_check(m->s, NULL, &m->pack);
}

/* Open a session on m->paths and start its scan. */
static bool
open_session(struct wb_model *m)
{
	char *why;
	struct tm_session *s = open_paths(m, m->paths, m->n_paths, &why);

	free(m->open_error);
	m->open_error = why;
	if (!s)
		return false;
	install_session(m, s);
	scan_start(m);
	return true;
}

void
model_open(struct wb_model *m, char **paths, size_t n)
{
	const struct tm_manifest *sm;
	const struct tm_error *merr = NULL;

	free(m->open_error);
	m->open_error = NULL;
	m->paths = calloc(n + 1, sizeof *m->paths);
	m->n_paths = 0;
	for (size_t i = 0; i < n; i++) {
		if (n > 1 && take_loose_manifest(m, paths[i]))
			continue;
		m->paths[m->n_paths++] = strdup(paths[i]);
	}
	if (!open_session(m)) {
		model_mark_saved(m);
		return;
	}
	if (m->man_broken && m->man_text) /* a loose manifest's */
		outdated_hint(m);
	sm = tm_session_manifest(m->s, &merr);
	if (sm) {
		tm_manifest_fini(&m->man);
		tm_manifest_copy(&m->man, sm);
	} else if (merr && merr->msg[0]) {
		size_t len = 0;
		const char *text = tm_session_manifest_text(m->s, &len);
		model_set_msg(m, ROLE_ERROR, "The archive's manifest: %s", merr->msg);
		if (text) {
			m->man_broken = true;
			m->man_err = *merr;
			m->man_text = strndup(text, len);
			/* the hint names only clocks the files have */
			outdated_hint(m);
		}
	}
	model_mark_saved(m);
}

/* The row's issue: a hidden name first (the old order of the sentences);
 * util merge names only the second of two equal names, the row shows both. */
static const struct tm_pack_issue *
row_issue(const struct wb_model *m, size_t member, const char *name)
{
	const struct tm_pack_issue *first = NULL;

	for (size_t i = 0; i < m->pack.n; i++) {
		const struct tm_pack_issue *is = &m->pack.issues[i];
		if (is->member == member && is->rule == TM_PACK_HIDDEN)
			return is;
		if (!first && is->member == member)
			first = is;
	}
	for (size_t i = 0; !first && i < m->pack.n; i++) {
		const struct tm_pack_issue *is = &m->pack.issues[i];
		const struct tm_member *o = tm_session_member(m->s, is->member);
		if (is->rule == TM_PACK_DUP_NAME && o && o->name && !strcmp(tm_path_base(o->name), name))
			first = is;
	}
	return first;
}

/* util merge's rules for loose inputs, as the engine's tm_pack_check found
 * them when the files were opened: the member name is the base name; it
 * refuses two inputs with one name, and a name too long for a ustar header;
 * a hidden name is left out of the TAR (trace_processor never reads it).
 * Archives keep their members' names.  The sentences say what to do here. */
char *
model_member_problem(const struct wb_model *m, size_t row)
{
	const struct tm_pack_issue *is;
	const char *name;
	char buf[600];

	if (!m->s || !tm_session_is_loose(m->s) || row >= model_n_rows(m))
		return NULL;
	name = model_row_name(m, row);
	if (!name)
		return NULL;
	is = row_issue(m, model_row_member(m, row), name);
	if (!is)
		return NULL;
	snprintf(buf, sizeof buf, "%s", is->msg);
	switch (is->rule) {
	case TM_PACK_HIDDEN:
		snprintf(buf, sizeof buf,
			 "hidden name: trace_processor never reads a member whose name starts "
			 "with '.', so the TAR would leave it out; rename it (%s)",
			 model_key(m, REQ_RENAME_FILE));
		break;
	case TM_PACK_NAME_TOO_LONG:
		snprintf(buf, sizeof buf,
			 "member name of %zu bytes: a TAR header holds 100 and util merge refuses "
			 "it; rename it (%s)",
			 strlen(name), model_key(m, REQ_RENAME_FILE));
		break;
	case TM_PACK_DUP_NAME:
		for (size_t r = 0; r < model_n_rows(m); r++) {
			const struct tm_member *o = tm_session_member(m->s, model_row_member(m, r));
			if (r == row || strcmp(model_row_name(m, r), name) != 0)
				continue;
			snprintf(buf, sizeof buf,
				 "two inputs are named %s (the other: %s): util merge refuses "
				 "duplicate member names; rename one (%s)",
				 name, o && o->source_path ? o->source_path : "?",
				 model_key(m, REQ_RENAME_FILE));
			break;
		}
		break;
	default: /* an empty name: util merge's own words */
		break;
	}
	return strdup(buf);
}

size_t
model_n_problems(const struct wb_model *m)
{
	size_t n = 0;

	for (size_t r = 0; r < model_n_rows(m); r++) {
		char *p = model_member_problem(m, r);
		n += p != NULL;
		free(p);
	}
	return n;
}


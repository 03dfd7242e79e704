/* SPDX-License-Identifier: MIT */
/*
 * The workbench's model: the inputs and the engine session (scanned on a
 * background thread), the list rows and their names, the manifest being
 * edited with its undo/redo stacks and saved copy (dirty state), the report
 * of the last evaluation, and the messages (the current one and a log).
 * Every edit builds the next manifest from a copy of the current one, pushes
 * the old one on the undo stack and re-evaluates at once (no debounce).
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

static void stack_fini(struct wb_stack *st);
static void stack_clear(struct wb_stack *st);
static void stack_push_set(struct wb_stack *st, const struct tm_manifest *man, char *const *paths,
			   size_t n);
static void free_paths(char **paths, size_t n);
static void close_session(struct wb_model *m);
static void scan_start(struct wb_model *m);
static char *offered_name(struct wb_model *m);
static void free_paths(char **paths, size_t n);
static char **dup_paths(char *const *paths, size_t n);
static bool same_paths(char *const *a, size_t na, char *const *b, size_t nb);

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
static void
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
	free(d->error);
	d->error = NULL;
	d->ready = false;
}

static void *
details_worker(void *arg)
{
	struct wb_model *m = arg;
	struct wb_details *d = &m->det;
	struct tm_eval_opts o = {.events = true, .dropped_only = true, .cancel = &d->cancel};
	struct tm_error err;
	tm_error_clear(&err);
	while (__atomic_load_n(&d->stall, __ATOMIC_ACQUIRE))
		nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
	d->st = tm_session_evaluate_ex(m->s, d->man_none ? NULL : &d->man, &o, &d->out, &err);
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
		}
	} else if (current && d->st != TM_ERR_CANCELLED) {
		d->ready = true;
		d->error = why;
		why = NULL;
	}
	free(why);
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
static void
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
static void
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

static void
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
static struct tm_session *
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
static void
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

/* ---- files managed: add, remove, rename, rescan ---- */

static void
close_session(struct wb_model *m)
{
	details_stop(m);
	if (m->worker_running) {
		__atomic_store_n(&m->cancel, true, __ATOMIC_RELAXED);
		pthread_join(m->worker, NULL);
		m->worker_running = false;
	}
	if (m->rep)
		tm_report_free(m->rep);
	m->rep = NULL;
	timeline_data(m);
	model_align_fini(m); /* fixes and evidence belong to the session */
	tm_pack_check_fini(&m->pack);
	if (m->s)
		tm_session_close(m->s);
	m->s = NULL;
}

/* Loose files can be managed; an archive's members keep its names. */
static bool
can_manage(struct wb_model *m)
{
	if (m->s && !tm_session_is_loose(m->s) && model_n_rows(m) > 1) {
		model_set_msg(m, ROLE_WARNING,
			      "The inputs are one archive: its members are not managed here; open "
			      "the traces as files to add, remove or rename them");
		return false;
	}
	return true;
}

static void
free_paths(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

/* The set of inputs becomes paths (n of them; taken either way): opened
 * first, and only a set that opens replaces the session.  A file gone or an
 * archive broken since must not leave an empty workbench: on failure the
 * old session (scanned, with its edits) stays and the message says why.
 * On success the caller makes the manifest fit and calls reopened(). */
static bool
reopen_step(struct wb_model *m, char **paths, size_t n, const char *what, bool step)
{
	char *why;
	struct tm_session *s = open_paths(m, paths, n, &why);

	if (!s) {
		model_set_msg(m, ROLE_ERROR, "%s: not done, %s; the files are as they were",
			      what, why);
		free(why);
		free_paths(paths, n);
		return false;
	}
	close_session(m);
	/* A file operation is an undo step: the manifest and the set of
	 * inputs before it (undo opens that set again). */
	if (step) {
		stack_push_set(&m->undo, &m->man, m->paths, m->n_paths);
		stack_clear(&m->redo);
	}
	free_paths(m->paths, m->n_paths);
	m->paths = paths;
	m->n_paths = n;
	free(m->open_error);
	m->open_error = NULL;
	install_session(m, s);
	return true;
}

static bool
reopen(struct wb_model *m, char **paths, size_t n, const char *what)
{
	return reopen_step(m, paths, n, what, false);
}

static void
reopened(struct wb_model *m, const char *what)
{
	scan_start(m);
	model_set_msg(m, ROLE_INFO, "%s", what);
}

/* A copy of the inputs, room for extra more (to build the next set). */
static char **
copy_paths(const struct wb_model *m, size_t extra)
{
	char **v = calloc(m->n_paths + extra + 1, sizeof *v);

	if (!v)
		abort();
	for (size_t i = 0; i < m->n_paths; i++)
		if (!(v[i] = strdup(m->paths[i])))
			abort();
	return v;
}

void
model_rescan(struct wb_model *m)
{
	m->cache_refresh = true; /* the files themselves, not a saved scan */
	if (reopen(m, copy_paths(m, 0), m->n_paths, "Scanning again"))
		reopened(m, "Scanning again");
}

bool
model_cache_setting(const char *key, const char *val, bool *no_cache, uint64_t *max,
		    const char **err)
{
	*err = NULL;
	if (strcmp(key, "cache") == 0) {
		bool yes = !strcmp(val, "yes") || !strcmp(val, "true") || !strcmp(val, "1") ||
			   !strcmp(val, "on");
		bool no = !strcmp(val, "no") || !strcmp(val, "false") || !strcmp(val, "0") ||
			  !strcmp(val, "off");
		if (yes || no)
			*no_cache = no;
		else
			*err = "set cache: expected yes or no";
		return true;
	}
	if (strcmp(key, "cache-max-mib") == 0) {
		char *end;
		unsigned long long v = strtoull(val, &end, 10);
		if (*val && !*end && v > 0 && v <= (1ull << 24))
			*max = (uint64_t)v << 20;
		else
			*err = "set cache-max-mib: expected a number of MiB (1 or more)";
		return true;
	}
	return false;
}

void
model_remove_row(struct wb_model *m, size_t row)
{
	const char *name = model_row_name(m, row);
	char *nm, msg[PATH_MAX + 64], **next;
	size_t idx = model_row_member(m, row);
	bool other = false;

	if (!name || !can_manage(m))
		return;
	if (m->n_paths <= 1) {
		model_set_msg(m, ROLE_WARNING, "%s is the only input: nothing would be left", name);
		return;
	}
	nm = strdup(name);
	for (size_t r = 0; r < model_n_rows(m); r++)
		other |= r != row && strcmp(model_row_name(m, r), nm) == 0;
	/* Loose inputs are members 1..n in argument order. */
	idx = idx > 0 ? idx - 1 : 0;
	next = copy_paths(m, 0);
	free(next[idx]);
	memmove(next + idx, next + idx + 1, (m->n_paths - idx) * sizeof *next);
	snprintf(msg, sizeof msg, "Removed %s from the set (the file itself is untouched)", nm);
	if (reopen_step(m, next, m->n_paths - 1, msg, true)) {
		if (!other)
			tm_manifest_rename_file(&m->man, nm, NULL);
		reopened(m, msg);
	}
	free(nm);
}

static bool
name_ok(struct wb_model *m, const char *name, size_t self)
{
	const char *why = NULL;

	if (!*name)
		why = "it is empty";
	else if (strchr(name, '/'))
		why = "a member name here has no '/'";
	else if (name[0] == '.')
		why = "a name starting with '.' is hidden from trace_processor";
	else if (strlen(name) > 100)
		why = "a TAR header holds 100 bytes";
	for (size_t r = 0; !why && r < model_n_rows(m); r++)
		if (r != self && strcmp(model_row_name(m, r), name) == 0)
			why = "another file has that name";
	if (why)
		model_set_msg(m, ROLE_ERROR, "Not renamed to %s: %s", name, why);
	return !why;
}

/* A folder for this renaming's links: link_dir/N, one per renaming, so
 * that a link an undo step may open again is never replaced. */
static bool
link_folder(struct wb_model *m, char *dir, size_t len)
{
	if (!m->link_dir) {
		const char *tmpdir = getenv("TMPDIR");
		char d[PATH_MAX];
		snprintf(d, sizeof d, "%s/tracemerge-names-XXXXXX",
			 tmpdir && *tmpdir ? tmpdir : "/tmp");
		if (!mkdtemp(d)) {
			model_set_msg(m, ROLE_ERROR, "Cannot create a temp dir: %s", strerror(errno));
			return false;
		}
		m->link_dir = strdup(d);
	}
	snprintf(dir, len, "%s/%u", m->link_dir, ++m->link_gen);
	if (mkdir(dir, 0700) != 0) {
		model_set_msg(m, ROLE_ERROR, "Cannot create %s: %s", dir, strerror(errno));
		return false;
	}
	return true;
}

/* A link named name (in dir) to the file src names; *out is its path
 * (caller frees). */
static bool
link_path(struct wb_model *m, const char *dir, const char *src, const char *name, char **out)
{
	char link[PATH_MAX], real[PATH_MAX];

	if (!realpath(src, real)) {
		model_set_msg(m, ROLE_ERROR, "%s: %s", src, strerror(errno));
		return false;
	}
	snprintf(link, sizeof link, "%s/%s", dir, name);
	if (symlink(real, link) != 0) {
		model_set_msg(m, ROLE_ERROR, "Cannot rename: %s: %s", link, strerror(errno));
		return false;
	}
	*out = strdup(link);
	return *out != NULL;
}

/* The member name is the input's base name: the input becomes a link named
 * name (in dir) to the same file; *out is its path (caller frees). */
static bool
link_as(struct wb_model *m, const char *dir, size_t idx, const char *name, char **out)
{
	return link_path(m, dir, m->paths[idx], name, out);
}

/* Loose inputs are members 1..n in argument order (a single input: 0). */
static size_t
row_input(const struct wb_model *m, size_t row)
{
	size_t idx = model_row_member(m, row);
	return idx > 0 && tm_session_n_members(m->s) > 1 ? idx - 1 : 0;
}

/* The manifest follows renames from[i] -> to[i], all at once (a name may
 * move to where another one was). */
static void
rename_in_manifest(struct wb_model *m, char **from, char **to, size_t n)
{
	char tmp[64];

	for (size_t i = 0; i < n; i++) {
		snprintf(tmp, sizeof tmp, "\x01renaming-%zu", i);
		tm_manifest_rename_file(&m->man, from[i], tmp);
		if (m->baseline && !strcmp(m->baseline, from[i])) {
			free(m->baseline);
			m->baseline = strdup(tmp);
		}
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(tmp, sizeof tmp, "\x01renaming-%zu", i);
		tm_manifest_rename_file(&m->man, tmp, to[i]);
		if (m->baseline && !strcmp(m->baseline, tmp)) {
			free(m->baseline);
			m->baseline = strdup(to[i]);
		}
	}
}

void
model_rename_row(struct wb_model *m, size_t row, const char *name)
{
	const char *old = model_row_name(m, row);
	char dir[PATH_MAX], msg[PATH_MAX + 128], *from, *link = NULL;
	size_t idx;
	bool other = false;

	if (!old || !can_manage(m) || !name_ok(m, name, row))
		return;
	if (!strcmp(old, name)) {
		model_set_msg(m, ROLE_DIM, "%s keeps its name", name);
		return;
	}
	idx = row_input(m, row);
	if (!link_folder(m, dir, sizeof dir) || !link_as(m, dir, idx, name, &link))
		return;
	from = strdup(old);
	for (size_t r = 0; r < model_n_rows(m); r++)
		other |= r != row && strcmp(model_row_name(m, r), from) == 0;
	char **next = copy_paths(m, 0);
	free(next[idx]);
	next[idx] = link;
	snprintf(msg, sizeof msg, "Renamed %s to %s in the TAR (the file on disk keeps its name)",
		 from, name);
	if (reopen_step(m, next, m->n_paths, msg, true)) {
		if (!other) {
			char *to = strdup(name);
			rename_in_manifest(m, &from, &to, 1);
			free(to);
		}
		reopened(m, msg);
	}
	free(from);
}

const char *
model_row_renamed_from(const struct wb_model *m, size_t row, char *buf, size_t len)
{
	char real[PATH_MAX];

	if (!m->s || !m->link_dir || !tm_session_is_loose(m->s) || row >= model_n_rows(m))
		return NULL;
	size_t idx = row_input(m, row), n = strlen(m->link_dir);
	if (idx >= m->n_paths || strncmp(m->paths[idx], m->link_dir, n) != 0 ||
	    m->paths[idx][n] != '/' || !realpath(m->paths[idx], real))
		return NULL;
	snprintf(buf, len, "%s", real);
	return buf;
}

const char *
model_key(const struct wb_model *m, enum wb_request r)
{
	return (int)r > REQ_NONE && r < REQ__COUNT && m->keys[r][0] ? m->keys[r] : "?";
}

/* ---- processing order: trace_processor's (priority, name, index) ---- */

/* The rows trace_processor processes, in its order (rows[0..n)): a
 * member's `order` is its rank among the processed members, so each row
 * goes to its place directly. */
static size_t
order_rows(const struct wb_model *m, size_t *rows)
{
	size_t n_m = tm_session_n_members(m->s), n = 0;
	size_t *at = malloc((n_m ? n_m : 1) * sizeof *at);

	if (!at)
		abort();
	for (size_t k = 0; k < n_m; k++)
		at[k] = SIZE_MAX;
	for (size_t r = 0; r < model_n_rows(m); r++) {
		const struct tm_member *mb = tm_session_member(m->s, model_row_member(m, r));
		if (mb && mb->order < n_m)
			at[mb->order] = r;
	}
	for (size_t k = 0; k < n_m; k++)
		if (at[k] != SIZE_MAX)
			rows[n++] = at[k];
	free(at);
	return n;
}

/* A name without the numeric prefix ("07-") an earlier reorder gave it. */
static const char *
unprefixed(const char *name)
{
	size_t d = strspn(name, "0123456789");
	return d > 0 && name[d] == '-' && name[d + 1] ? name + d + 1 : name;
}

static const char *
ordinal_suffix(size_t n)
{
	if (n % 100 >= 11 && n % 100 <= 13)
		return "th";
	return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

void
model_move_row(struct wb_model *m, size_t row, int dir)
{
	const char *name = model_row_name(m, row);
	const struct tm_member *mb;
	size_t n_rows = model_n_rows(m), *rows, n, k = SIZE_MAX;

	if (!name || !m->s)
		return;
	if (!tm_session_is_loose(m->s)) {
		model_set_msg(m, ROLE_WARNING,
			      "%s is a member of %s: trace_processor processes an archive's members "
			      "by (priority, name, index) as stored in it, and the workbench does not "
			      "rewrite an input archive, so their order cannot change here (open the "
			      "traces as files to reorder them)",
			      name, m->n_paths ? m->paths[0] : "the archive");
		return;
	}
	mb = tm_session_member(m->s, model_row_member(m, row));
	if (!mb || mb->order == UINT32_MAX) {
		model_set_msg(m, ROLE_WARNING,
			      "%s is never processed by trace_processor (%s): it has no place in the "
			      "order",
			      name, mb && mb->is_hidden ? "a hidden name" : "not a trace");
		return;
	}
	rows = calloc(n_rows + 1, sizeof *rows);
	if (!rows)
		abort();
	n = order_rows(m, rows);
	for (size_t i = 0; i < n; i++)
		if (rows[i] == row)
			k = i;
	if (k == SIZE_MAX || (dir < 0 && k == 0) || (dir > 0 && k + 1 >= n)) {
		model_set_msg(m, ROLE_DIM, "%s is processed %s already", name,
			      dir < 0 ? "first" : "last");
		free(rows);
		return;
	}
	size_t j = dir < 0 ? k - 1 : k + 1;
	const struct tm_member *nb = tm_session_member(m->s, model_row_member(m, rows[j]));
	if (nb->priority != mb->priority) {
		const struct tm_member *first = dir < 0 ? nb : mb;
		model_set_msg(m, ROLE_WARNING,
			      "%s cannot move %s %s: trace_processor processes by priority before "
			      "name, and a %s file comes before a %s one whatever their names (protos "
			      "first); only files of one kind change places by name",
			      name, dir < 0 ? "before" : "after", model_row_name(m, rows[j]),
			      tm_format_name(first->format),
			      tm_format_name(first == nb ? mb->format : nb->format));
		free(rows);
		return;
	}
	if (!can_manage(m)) {
		free(rows);
		return;
	}
	/* The class: the rows of this priority, in the new order. */
	size_t *cls = calloc(n + 1, sizeof *cls), n_cls = 0, at = 0;
	if (!cls)
		abort();
	for (size_t i = 0; i < n; i++) {
		size_t r = rows[i == k ? j : i == j ? k : i];
		if (tm_session_member(m->s, model_row_member(m, r))->priority == mb->priority)
			cls[n_cls++] = r;
	}
	int width = n_cls >= 100 ? 3 : 2;
	char **from = calloc(n_cls + 1, sizeof *from), **to = calloc(n_cls + 1, sizeof *to);
	size_t *ren_row = calloc(n_cls + 1, sizeof *ren_row), n_ren = 0;
	char buf[PATH_MAX];
	const char *why = NULL;
	if (!from || !to || !ren_row)
		abort();
	for (size_t i = 0; i < n_cls && !why; i++) {
		const char *old = model_row_name(m, cls[i]);
		snprintf(buf, sizeof buf, "%0*zu-%s", width, i + 1, unprefixed(old));
		if (strlen(buf) > 100)
			why = old;
		if (cls[i] == row)
			at = i + 1;
		if (strcmp(buf, old) != 0) {
			ren_row[n_ren] = cls[i];
			from[n_ren] = strdup(old);
			to[n_ren++] = strdup(buf);
		}
	}
	/* A new name another file (of another kind) has already. */
	for (size_t i = 0; i < n_ren && !why; i++)
		for (size_t r = 0; r < n_rows && !why; r++) {
			bool renamed = false;
			for (size_t q = 0; q < n_ren; q++)
				renamed |= ren_row[q] == r;
			if (!renamed && !strcmp(model_row_name(m, r), to[i]))
				why = to[i];
		}
	if (why) {
		model_set_msg(m, ROLE_ERROR,
			      "Not moved: the name order would need %s renamed with a numeric prefix, "
			      "and that name is %s; rename it first (%s)",
			      why, strlen(why) > 90 ? "too long for a TAR header" : "taken",
			      model_key(m, REQ_RENAME_FILE));
		goto out;
	}
	/* Every renamed input becomes a link of its new name, in one folder;
	 * then one reopen (one scan) of the new set. */
	char dir_buf[PATH_MAX];
	if (!link_folder(m, dir_buf, sizeof dir_buf))
		goto out;
	char **next = copy_paths(m, 0);
	for (size_t i = 0; i < n_ren; i++) {
		size_t idx = row_input(m, ren_row[i]);
		char *link;
		if (!link_as(m, dir_buf, idx, to[i], &link)) {
			free_paths(next, m->n_paths);
			goto out;
		}
		free(next[idx]);
		next[idx] = link;
	}
	struct tm_buf b;
	tm_buf_init(&b);
	tm_buf_addf(&b, "Moved %s %s: now #%zu in processing order (%zu%s of %zu %s files). ",
		    unprefixed(name), dir < 0 ? "earlier" : "later", j + 1, at, ordinal_suffix(at),
		    n_cls, tm_format_name(mb->format));
	tm_buf_addf(&b, "trace_processor processes %s files by name, so the TAR's member names "
		    "change:", tm_format_name(mb->format));
	for (size_t i = 0; i < n_ren; i++)
		tm_buf_addf(&b, "%s %s -> %s", i ? "," : "", from[i], to[i]);
	tm_buf_addf(&b, " (the files on disk keep their names; %s undoes)",
		    model_key(m, REQ_UNDO));
	if (reopen_step(m, next, m->n_paths, "Move", true)) {
		rename_in_manifest(m, from, to, n_ren);
		reopened(m, b.data);
	}
	tm_buf_fini(&b);
out:
	free_paths(from, n_ren);
	free_paths(to, n_ren);
	free(ren_row);
	free(cls);
	free(rows);
}

void
model_add_paths(struct wb_model *m, char **paths, size_t n)
{
	size_t added = 0;

	if (!can_manage(m))
		return;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(paths[i], &st) != 0 || !S_ISREG(st.st_mode)) {
			model_set_msg(m, ROLE_ERROR, "%s: %s", paths[i],
				      errno ? strerror(errno) : "not a regular file");
			return;
		}
	}
	char **next = copy_paths(m, n);
	for (size_t i = 0; i < n; i++)
		next[m->n_paths + added++] = strdup(paths[i]);
	char msg[128];
	snprintf(msg, sizeof msg, "Added %zu file%s", added, added == 1 ? "" : "s");
	if (reopen_step(m, next, m->n_paths + added, msg, true))
		reopened(m, msg);
}

void
model_fini_links(struct wb_model *m)
{
	char path[PATH_MAX];

	if (!m->link_dir)
		return;
	for (unsigned g = 1; g <= m->link_gen; g++) {
		snprintf(path, sizeof path, "%s/%u", m->link_dir, g);
		DIR *d = opendir(path);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			char f[PATH_MAX + 260];
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(f, sizeof f, "%s/%s", path, e->d_name);
			unlink(f);
		}
		if (d)
			closedir(d);
		rmdir(path);
	}
	rmdir(m->link_dir);
	free(m->link_dir);
	m->link_dir = NULL;
	m->link_gen = 0;
}

/* ---- the demo's temp dir ---- */

void
model_note_output(struct wb_model *m, const char *path)
{
	char dir[PATH_MAX], real_dir[PATH_MAX], real_demo[PATH_MAX];
	char *slash;
	size_t n;

	if (!m->demo_dir || !path)
		return;
	snprintf(dir, sizeof dir, "%s", path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof dir, ".");
	if (!realpath(dir, real_dir) || !realpath(m->demo_dir, real_demo))
		return;
	n = strlen(real_demo);
	if (strncmp(real_dir, real_demo, n) == 0 && (real_dir[n] == 0 || real_dir[n] == '/'))
		m->demo_output = true;
}

/* ---- undo stack ---- */

static char **
dup_paths(char *const *paths, size_t n)
{
	char **v = calloc(n + 1, sizeof *v);

	if (!v)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!(v[i] = strdup(paths[i])))
			abort();
	return v;
}

/* Push the manifest man and the set of inputs paths (NULL: the model's
 * current set) as one step. */
static void
stack_push_set(struct wb_stack *st, const struct tm_manifest *man, char *const *paths, size_t n)
{
	if (st->n == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 16;
		st->v = realloc(st->v, st->cap * sizeof *st->v);
		if (!st->v)
			abort();
	}
	struct wb_undo *u = &st->v[st->n++];
	tm_manifest_copy(&u->man, man);
	u->paths = dup_paths(paths, n);
	u->n_paths = n;
}

static void
undo_fini(struct wb_undo *u)
{
	tm_manifest_fini(&u->man);
	free_paths(u->paths, u->n_paths);
	u->paths = NULL;
	u->n_paths = 0;
}

static void
stack_fini(struct wb_stack *st)
{
	for (size_t i = 0; i < st->n; i++)
		undo_fini(&st->v[i]);
	free(st->v);
	memset(st, 0, sizeof *st);
}

static void
stack_clear(struct wb_stack *st)
{
	for (size_t i = 0; i < st->n; i++)
		undo_fini(&st->v[i]);
	st->n = 0;
}

void
model_commit(struct wb_model *m, struct tm_manifest *next, const char *what)
{
	if (m->man_broken) {
		tm_manifest_fini(next);
		model_set_msg(m, ROLE_ERROR,
			      "%s: not done; the manifest does not parse and an edit would drop it. "
			      "Fix it first: %s edits its text, %s converts the outdated syntax",
			      what, model_key(m, REQ_EDIT_MANIFEST), model_key(m, REQ_CONVERT_MANIFEST));
		return;
	}
	if (tm_manifest_equal(&m->man, next)) {
		tm_manifest_fini(next);
		model_set_msg(m, ROLE_DIM, "%s: nothing changed", what);
		return;
	}
	stack_push_set(&m->undo, &m->man, m->paths, m->n_paths);
	stack_clear(&m->redo);
	tm_manifest_fini(&m->man);
	m->man = *next;
	model_evaluate(m);
	model_set_msg(m, ROLE_INFO, "%s", what);
}

bool
model_is_dirty(const struct wb_model *m)
{
	/* the manifest, and the set of inputs: added, removed, renamed and
	 * moved files (undoable edits too, lost on quitting unless written) */
	return m->man_text_edited || !tm_manifest_equal(&m->man, &m->saved) ||
	       !same_paths(m->paths, m->n_paths, m->saved_paths, m->n_saved_paths);
}

void
model_mark_saved(struct wb_model *m)
{
	tm_manifest_fini(&m->saved);
	tm_manifest_copy(&m->saved, &m->man);
	free_paths(m->saved_paths, m->n_saved_paths);
	m->saved_paths = dup_paths(m->paths, m->n_paths);
	m->n_saved_paths = m->n_paths;
	m->man_text_edited = false;
}

void
model_manifest_json(const struct wb_model *m, struct tm_buf *out)
{
	if (m->man_broken)
		tm_buf_adds(out, m->man_text ? m->man_text : "");
	else
		tm_manifest_emit(&m->man, out);
}

bool
model_set_manifest_text(struct wb_model *m, const char *text, size_t len, const char *what)
{
	struct tm_manifest man;
	struct tm_error err;

	tm_error_clear(&err);
	if (tm_manifest_parse(text, len, &man, &err) != TM_OK) {
		tm_manifest_fini(&man);
		free(m->man_text);
		m->man_text = strndup(text, len);
		m->man_broken = true;
		m->man_text_edited = true;
		m->man_err = err;
		outdated_hint(m);
		model_set_msg(m, ROLE_ERROR, "%s: still does not parse: %s", what, err.msg);
		return false;
	}
	if (m->man_broken) {
		/* The fixed text replaces the broken one; it is not an undo step
		 * (undo would bring back an empty manifest, not the text). */
		m->man_broken = false;
		m->man_text_edited = true;
		free(m->man_text);
		m->man_text = NULL;
		tm_manifest_fini(&m->man);
		m->man = man;
		model_evaluate(m);
		model_set_msg(m, ROLE_OK, "%s: the manifest parses now", what);
		return true;
	}
	model_commit(m, &man, what);
	return true;
}

static bool
same_paths(char *const *a, size_t na, char *const *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

void
model_undo(struct wb_model *m, bool undo)
{
	struct wb_stack *from = undo ? &m->undo : &m->redo;
	struct wb_stack *to = undo ? &m->redo : &m->undo;

	if (from->n == 0) {
		model_set_msg(m, ROLE_DIM, undo ? "Nothing to undo" : "Nothing to redo");
		return;
	}
	struct wb_undo *u = &from->v[from->n - 1];
	bool files = !same_paths(u->paths, u->n_paths, m->paths, m->n_paths);
	if (files) {
		/* A rename or reorder: the set of inputs it had, opened again
		 * (in one reopen); a set that no longer opens stays undone-able. */
		char **paths = dup_paths(u->paths, u->n_paths);
		char **cur = dup_paths(m->paths, m->n_paths);
		size_t n_cur = m->n_paths;
		if (!reopen(m, paths, u->n_paths, undo ? "Undo" : "Redo")) {
			free_paths(cur, n_cur);
			return;
		}
		stack_push_set(to, &m->man, cur, n_cur);
		free_paths(cur, n_cur);
	} else {
		stack_push_set(to, &m->man, m->paths, m->n_paths);
	}
	tm_manifest_fini(&m->man);
	m->man = u->man;
	free_paths(u->paths, u->n_paths);
	from->n--;
	char msg[128];
	snprintf(msg, sizeof msg, "%s (%zu more)%s", undo ? "Undone" : "Redone", from->n,
		 !files ? ""
		 : undo ? "; the files and their member names are as they were before"
			: "; the files and their member names are as they were after it");
	if (files) {
		reopened(m, msg);
	} else {
		model_evaluate(m);
		model_set_msg(m, ROLE_INFO, "%s", msg);
	}
}

/* ---- edits ---- */

static const struct tm_report_file *
path_file(const struct wb_model *m, const char *path)
{
	size_t row = model_row_of(m, path);

	return row == SIZE_MAX ? NULL : model_row_file(m, row);
}

/* Offsets, references and clocks go through the engine's one rule
 * (tm_offset_apply): the reference and clocks an existing entry names are
 * kept; otherwise a file with clocks of its own RELATEs its trace clock and
 * only a clockless file is PINned, so the edit is valid by construction.
 * The engine also says when the edit changes no predicted number (or
 * leaves an entry that does nothing), and offers a machine of its own when
 * the relation joins two files on one machine.  asked: the edit in words
 * ("offset +5 ms", "clock MONOTONIC"). */
static void
offset_edit(struct wb_model *m, const char *path, const struct tm_offset_spec *spec,
	    const char *what, const char *asked)
{
	struct tm_offset_result r;
	struct tm_error err;
	char msg[512];

	if (!m->s || !path)
		return;
	memset(&r, 0, sizeof r);
	tm_error_clear(&err);
	if (tm_offset_apply(m->s, &m->man, path, spec, &r, &err) != TM_OK || !r.has_m) {
		model_set_msg(m, ROLE_WARNING, "%s: %s", what,
			      err.msg[0] ? err.msg : "An offset needs a reference file");
		tm_offset_result_fini(&r);
		return;
	}
	size_t undo_n = m->undo.n;
	char effect[400];
	char *ref_copy = strdup(r.ref ? r.ref : ""), *path_copy = strdup(path);
	/* (t for the offer and the inert note; the manifest taken is r.m) */
	struct tm_offset_take t = tm_offset_take(&r, false);
	struct tm_manifest next = r.m;
	int64_t off = r.from_here ? r.moved_ns : r.offset_ns;

	r.has_m = false; /* moved into next; model_commit owns it */
	if (r.from_here) {
		/* the entry's offset the move needs, said beside it */
		struct tm_buf d, e;
		tm_buf_init(&d);
		tm_buf_init(&e);
		tm_format_duration_ns(r.moved_ns, &d);
		tm_format_duration_ns(r.offset_ns, &e);
		snprintf(msg, sizeof msg, "%s: %s %s%s%s; its clocks entry: "
					  "%s vs %s%s%s",
			 what, path, r.moved_ns ? "moved " : "stays where it was", r.moved_ns ? d.data : "",
			 r.moved_ns < 0 ? " earlier" : r.moved_ns ? " later" : "",
			 e.data ? e.data : "", ref_copy, r.ref_clock ? ":" : "",
			 r.ref_clock ? tm_clock_name(r.ref_clock) : "");
		tm_buf_fini(&d);
		tm_buf_fini(&e);
	} else {
		snprintf(msg, sizeof msg, "%s: %s %s vs %s", what, path, asked, ref_copy);
	}
	model_commit(m, &next, msg);
	/* The effect comes from the new report: an offset on the file that owns
	 * the timeline moves the reference instead. */
	if (m->undo.n != undo_n) {
		model_offset_effect(m, path_copy, off, ref_copy, effect, sizeof effect);
		/* the offer stands beside an inert note too: on a shared machine
		 * the edit often does nothing until the file has its own */
		char fix[600] = "";
		if (t.offer)
			snprintf(fix, sizeof fix,
				 ". Fix (ours, checked): H puts %s on a machine of its own (\"%s\"): %s",
				 path_copy, r.own_machine, r.own_verdict ? r.own_verdict : "");
		if (t.inert)
			model_set_msg(m, ROLE_WARNING, "%s: changes no predicted number (ours): %s%s",
				      msg, t.inert, fix);
		else if (r.idle)
			model_set_msg(m, ROLE_WARNING, "%s: %s %s leaves a clocks entry that does "
						       "nothing (ours): %s%s",
				      what, path_copy, asked, r.idle, fix);
		else if (off != 0 && model_owns_timeline(m, path_copy))
			model_set_msg(m, ROLE_WARNING, "%s: %s", what, effect);
		else if (t.offer)
			model_set_msg(m, ROLE_WARNING, "%s (%s)%s", msg, effect, fix);
		else if (r.from_here) /* the move says its direction */
			model_set_msg(m, ROLE_INFO, "%s", msg);
		else
			model_set_msg(m, ROLE_INFO, "%s (%s)", msg, effect);
	}
	tm_offset_result_fini(&r);
	free(ref_copy);
	free(path_copy);
}

/* An offset typed (or nudged to) on a file: on one placed automatically it
 * is a move from where the file is shown now (tm_offset_spec.from_here). */
void
model_set_offset(struct wb_model *m, const char *path, int64_t off, const char *what)
{
	struct tm_offset_spec spec;
	struct tm_buf d;
	char asked[128];

	memset(&spec, 0, sizeof spec);
	spec.has_offset = true;
	spec.offset_ns = off;
	spec.from_here = true;
	tm_buf_init(&d);
	tm_format_duration_ns(off, &d);
	snprintf(asked, sizeof asked, "offset %s", d.data ? d.data : "");
	tm_buf_fini(&d);
	offset_edit(m, path, &spec, what, asked);
}

void
model_nudge(struct wb_model *m, const char *path, int64_t delta)
{
	const struct tm_manifest_file *f = model_manifest_file(m, path);
	int64_t off = f && f->has_clocks ? f->clocks.offset_ns : 0, r;

	if (!path)
		return;
	if (__builtin_add_overflow(off, delta, &r)) {
		model_set_msg(m, ROLE_ERROR, "offset out of range");
		return;
	}
	model_set_offset(m, path, r, "Nudged");
}

static bool
str_eq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static void
replace_str(char **p, const char *from, const char *to)
{
	if (*p && strcmp(*p, from) == 0) {
		free(*p);
		*p = to ? strdup(to) : NULL;
	}
}

void
model_rename_machine(struct wb_model *m, const char *from, const char *to, const char *what)
{
	struct tm_manifest next;
	char msg[512];
	bool found = false;

	tm_manifest_copy(&next, &m->man);
	for (size_t i = 0; i < next.n_files; i++) {
		struct tm_manifest_file *f = &next.files[i];
		if (str_eq(f->machine_name, from)) {
			found = true;
			tm_manifest_set_machine(&next, f->path, to);
			f = &next.files[i];
		}
		for (size_t k = 0; k < f->n_machines; k++)
			if (str_eq(f->machines[k].name, from)) {
				found = true;
				replace_str(&f->machines[k].name, from, to ? to : "");
			}
		if (f->has_clocks) {
			replace_str(&f->clocks.machine, from, to);
			replace_str(&f->clocks.sync_machine, from, to);
		}
	}
	replace_str(&next.tt_machine, from, to);
	for (size_t i = 0; i < m->n_extra_machines; i++) {
		if (str_eq(m->extra_machines[i], from)) {
			found = true;
			free(m->extra_machines[i]);
			if (to)
				m->extra_machines[i] = strdup(to);
			else
				m->extra_machines[i] = m->extra_machines[--m->n_extra_machines];
			break;
		}
	}
	if (!found) {
		tm_manifest_fini(&next);
		model_set_msg(m, ROLE_WARNING, "No machine named %s", from);
		return;
	}
	if (to)
		snprintf(msg, sizeof msg, "%s: %s -> %s", what, from, to);
	else
		snprintf(msg, sizeof msg, "%s: %s (its files are now Default)", what, from);
	model_commit(m, &next, msg);
}

static void
add_name(char ***v, size_t *n, const char *nm)
{
	if (!nm || !*nm)
		return;
	for (size_t j = 0; j < *n; j++)
		if (strcmp((*v)[j], nm) == 0)
			return;
	*v = realloc(*v, (*n + 1) * sizeof **v);
	if (!*v)
		abort();
	(*v)[(*n)++] = strdup(nm);
}

size_t
model_machine_names(const struct wb_model *m, char ***out)
{
	char **v = NULL;
	size_t n = 0;

	for (size_t i = 0; i < m->man.n_files; i++) {
		add_name(&v, &n, m->man.files[i].machine_name);
		for (size_t k = 0; k < m->man.files[i].n_machines; k++)
			add_name(&v, &n, m->man.files[i].machines[k].name);
	}
	for (size_t i = 0; i < m->n_extra_machines; i++)
		add_name(&v, &n, m->extra_machines[i]);
	*out = v;
	return n;
}

void
model_free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
model_set_machine(struct wb_model *m, const char *path, const char *name)
{
	struct tm_manifest next;
	char msg[512];
	const struct tm_report_file *rf = path_file(m, path);

	if (rf && rf->n_machines > 1) {
		model_set_msg(m, ROLE_WARNING,
			      "%s carries several machines: name its ids instead (%s)", path,
			      model_key(m, REQ_NAME_IDS));
		return;
	}
	if (name && (!*name || strcmp(name, "Default") == 0))
		name = NULL;
	tm_manifest_copy(&next, &m->man);
	tm_manifest_set_machine(&next, path, name);
	snprintf(msg, sizeof msg, "%s -> machine %s", path, name ? name : "Default");
	model_commit(m, &next, msg);
}

char *
model_add_machine(struct wb_model *m, const char *path)
{
	const struct tm_manifest_file *f;
	char *name;

	if (!path)
		return NULL;
	/* Numbers whose name is taken are skipped (a loaded manifest may use them). */
	name = offered_name(m);
	model_set_machine(m, path, name);
	f = model_manifest_file(m, path);
	if (f && str_eq(f->machine_name, name))
		return name;
	free(name);
	return NULL;
}

/* The machine ids a file carries itself (raw ids below 2^32), from an
 * evaluation without the manifest's machines table for it; sorted. */
static size_t
embedded_ids(struct wb_model *m, const char *path, uint32_t *ids, size_t max)
{
	struct tm_manifest tmp;
	struct tm_manifest_file *f;
	struct tm_report *rep = NULL;
	struct tm_error err;
	size_t n = 0, row = model_row_of(m, path);

	if (!m->s || !m->scanned || row == SIZE_MAX)
		return 0;
	tm_manifest_copy(&tmp, &m->man);
	f = tm_manifest_file_get(&tmp, path, false);
	if (f) {
		for (size_t i = 0; i < f->n_machines; i++)
			free(f->machines[i].name);
		free(f->machines);
		f->machines = NULL;
		f->n_machines = 0;
		f->has_machines = false;
	}
	tm_error_clear(&err);
	if (tm_session_eval_numbers(m->s, &tmp, &rep, &err) == TM_OK && rep) {
		size_t member = model_row_member(m, row);
		for (size_t i = 0; i < rep->n_files; i++) {
			const struct tm_report_file *rf = &rep->files[i];
			if (rf->member != member)
				continue;
			for (size_t j = 0; j < rf->n_machines && n < max; j++)
				for (size_t k = 0; k < rep->n_machines; k++)
					if (rep->machines[k].id == rf->machines[j] &&
					    rep->machines[k].raw_id <= UINT32_MAX)
						ids[n++] = (uint32_t)rep->machines[k].raw_id;
		}
	}
	if (rep)
		tm_report_free(rep);
	tm_manifest_fini(&tmp);
	for (size_t i = 1; i < n; i++) /* insertion sort: a handful of ids */
		for (size_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			uint32_t t = ids[j];
			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	return n;
}

static char *
offered_name(struct wb_model *m)
{
	char name[64], **names;
	size_t n;

	for (;;) {
		bool taken = false;
		snprintf(name, sizeof name, "Machine %u", m->next_machine_n++);
		n = model_machine_names(m, &names);
		for (size_t i = 0; i < n; i++)
			taken |= strcmp(names[i], name) == 0;
		model_free_names(names, n);
		if (!taken)
			return strdup(name);
	}
}

static void
table_set(struct tm_manifest_file *f, uint32_t id, const char *name)
{
	size_t k;

	for (k = 0; k < f->n_machines; k++)
		if (f->machines[k].id == id)
			break;
	if (k == f->n_machines) {
		f->machines = realloc(f->machines, (f->n_machines + 1) * sizeof *f->machines);
		if (!f->machines)
			abort();
		f->machines[k].id = id;
		f->machines[k].name = NULL;
		f->n_machines++;
	}
	free(f->machines[k].name);
	f->machines[k].name = strdup(name);
	f->has_machines = true;
}

void
model_name_id(struct wb_model *m, const char *path, const char *spec)
{
	struct tm_manifest next;
	struct tm_manifest_file *f;
	char *end;
	unsigned long id;
	const char *eq = strchr(spec, '=');
	char msg[512];
	uint32_t ids[256];
	size_t n_ids, o;
	struct tm_buf offered;

	errno = 0;
	id = strtoul(spec, &end, 10);
	if (!eq || end == spec || end != eq || errno || id > UINT32_MAX) {
		model_set_msg(m, ROLE_ERROR, "Expected id=name, e.g. 7=vm");
		return;
	}
	n_ids = embedded_ids(m, path, ids, sizeof ids / sizeof ids[0]);
	tm_manifest_copy(&next, &m->man);
	f = tm_manifest_file_get(&next, path, true);
	table_set(f, (uint32_t)id, eq + 1);
	/* A partial table is what trace_processor would reject ("undeclared
	 * machine id"): the ids it leaves out get offered names, shown and
	 * written alike; i renames them. */
	tm_buf_init(&offered);
	for (size_t i = 0; i < n_ids; i++) {
		bool named = false;
		for (size_t k = 0; k < f->n_machines; k++)
			named |= f->machines[k].id == ids[i];
		if (named)
			continue;
		char *nm = offered_name(m);
		table_set(f, ids[i], nm);
		tm_buf_addf(&offered, "%s%u=%s", offered.len ? ", " : "", ids[i], nm);
		free(nm);
	}
	o = (size_t)snprintf(msg, sizeof msg, "%s: id %lu -> %s", path, id, eq + 1);
	if (offered.len && o < sizeof msg)
		snprintf(msg + o, sizeof msg - o, "; the other ids are named too (%s; %s renames)",
			 offered.data, model_key(m, REQ_NAME_IDS));
	tm_buf_fini(&offered);
	model_commit(m, &next, msg);
}

void
model_align_auto(struct wb_model *m, const char *path)
{
	struct tm_manifest next;
	char msg[300];

	tm_manifest_copy(&next, &m->man);
	tm_manifest_clear_clocks(&next, path);
	snprintf(msg, sizeof msg, "%s: aligned automatically", path);
	model_commit(m, &next, msg);
}

static bool
parse_clock(const char *s, uint32_t *out)
{
	if (!s || !*s || strcmp(s, "PIN") == 0 || strcmp(s, "-") == 0) {
		*out = TM_CLOCK_UNSET;
		return true;
	}
	*out = tm_clock_from_name(s);
	return *out != 0;
}

void
model_set_ref(struct wb_model *m, const char *path, const char *spec)
{
	const struct tm_manifest_file *f = model_manifest_file(m, path);
	char *s = strdup(spec), *at, *colon;
	struct tm_offset_spec sp;
	char asked[300];

	memset(&sp, 0, sizeof sp);
	at = strrchr(s, '@');
	if (at)
		*at++ = 0;
	colon = strrchr(s, ':');
	if (colon)
		*colon++ = 0;
	if (colon && !parse_clock(colon, &sp.ref.clock)) {
		model_set_msg(m, ROLE_ERROR, "Unknown clock %s (REALTIME ... BOOTTIME)", colon);
		free(s);
		return;
	}
	sp.ref.has_clock = colon != NULL;
	sp.ref.file = s;
	sp.ref.machine = at && *at ? at : NULL;
	if (f && f->has_clocks) { /* the file's own clock stays */
		sp.src.has_clock = true;
		sp.src.clock = f->clocks.clock;
		sp.src.is_pin = !f->clocks.clock;
	}
	snprintf(asked, sizeof asked, "related");
	offset_edit(m, path, &sp, "Reference", asked);
	free(s);
}

void
model_set_own_clock(struct wb_model *m, const char *path, const char *name)
{
	const struct tm_manifest_file *f = model_manifest_file(m, path);
	struct tm_offset_spec sp;
	char asked[128];

	memset(&sp, 0, sizeof sp);
	if (!parse_clock(name, &sp.src.clock)) {
		model_set_msg(m, ROLE_ERROR,
			      "Unknown clock %s (REALTIME ... BOOTTIME, empty = PIN)", name);
		return;
	}
	if (!f || !f->has_clocks) {
		model_set_msg(m, ROLE_WARNING, "Set an offset first (%s)", model_key(m, REQ_OFFSET));
		return;
	}
	sp.src.has_clock = true;
	sp.src.is_pin = !sp.src.clock;
	snprintf(asked, sizeof asked, "clock %s",
		 sp.src.clock ? tm_clock_name(sp.src.clock) : "PIN");
	offset_edit(m, path, &sp, "Clock", asked);
}

void
model_set_trace_time(struct wb_model *m, const char *spec)
{
	char *s = strdup(spec), *save = NULL;
	char *clock = strtok_r(s, " \t", &save);
	char *file = strtok_r(NULL, " \t", &save);
	char *machine = strtok_r(NULL, " \t", &save);
	uint32_t c = TM_CLOCK_UNSET;
	struct tm_manifest next;
	char msg[512];

	if (clock && strcmp(clock, "auto") != 0 && !parse_clock(clock, &c)) {
		model_set_msg(m, ROLE_ERROR, "Unknown clock %s (REALTIME ... BOOTTIME, auto)",
			      clock);
		free(s);
		return;
	}
	tm_manifest_copy(&next, &m->man);
	tm_manifest_set_trace_time(&next, c, file, machine);
	if (c)
		snprintf(msg, sizeof msg, "Timeline clock %s%s%s", tm_clock_name(c),
			 file ? " of " : "", file ? file : "");
	else
		snprintf(msg, sizeof msg, "Timeline clock: automatic");
	model_commit(m, &next, msg);
	free(s);
}

void
model_set_attr(struct wb_model *m, const char *spec)
{
	const char *eq = strchr(spec, '=');
	char key[256], *end;
	struct tm_manifest next;
	long long v;

	if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof key) {
		model_set_msg(m, ROLE_ERROR, "Expected key=value");
		return;
	}
	memcpy(key, spec, (size_t)(eq - spec));
	key[eq - spec] = 0;
	tm_manifest_copy(&next, &m->man);
	errno = 0;
	v = strtoll(eq + 1, &end, 10);
	if (!eq[1])
		tm_manifest_remove_attr(&next, key);
	else if (!*end && !errno)
		tm_manifest_set_attr_int(&next, key, v);
	else
		tm_manifest_set_attr_str(&next, key, eq + 1);
	model_commit(m, &next, eq[1] ? "Attribute set" : "Attribute removed");
}

/* The set of inputs a recovery file's inputs file names (NUL-terminated
 * file, member name pairs), as paths: a file under another member name
 * becomes a link of that name.  NULL when there is none or it is the set
 * open now (*n set otherwise). */
static char **
restore_set(struct wb_model *m, const char *side, size_t *n)
{
	size_t len = 0;
	struct tm_error err;
	char *buf = tm_read_file(side, 16u << 20, false, &len, &err);
	char **next = NULL, dir[PATH_MAX] = "";
	bool same = true, bad = false;

	*n = 0;
	if (!buf)
		return NULL;
	for (size_t o = 0; o < len;) {
		const char *real = buf + o;
		size_t rl = strnlen(real, len - o);
		if (o + rl + 1 >= len) {
			bad = true;
			break;
		}
		const char *name = real + rl + 1;
		size_t nl = strnlen(name, len - o - rl - 1);
		o += rl + 1 + nl + 1;
		char *p = NULL;
		if (!strcmp(tm_path_base(real), name))
			p = strdup(real);
		else if ((!*dir && !link_folder(m, dir, sizeof dir)) ||
			 !link_path(m, dir, real, name, &p)) {
			bad = true;
			break;
		}
		next = realloc(next, (*n + 2) * sizeof *next);
		if (!next || !p)
			abort();
		next[(*n)++] = p;
		next[*n] = NULL;
		char a[PATH_MAX], b[PATH_MAX];
		same = same && *n <= m->n_paths && !strcmp(tm_path_base(m->paths[*n - 1]), name) &&
		       realpath(m->paths[*n - 1], a) && realpath(real, b) && !strcmp(a, b);
	}
	free(buf);
	if (bad || (same && *n == m->n_paths)) {
		free_paths(next, *n);
		*n = 0;
		return NULL;
	}
	return next;
}

void
model_recovery_inputs_path(const char *path, char *out, size_t len)
{
	size_t n = strlen(path);
	if (n > 5 && !strcmp(path + n - 5, ".json"))
		n -= 5;
	snprintf(out, len, "%.*s.inputs", (int)n, path);
}

/* A recovery file's manifest, read whole (a 64 KiB buffer once cut big
 * manifests short) and parsed. */
static bool
read_recovery(const char *path, struct tm_manifest *man, struct tm_error *err)
{
	size_t n = 0;
	char *buf = tm_read_file(path, 64u << 20, false, &n, err);

	if (!buf) {
		tm_manifest_init(man);
		return false;
	}
	tm_error_clear(err);
	enum tm_status st = tm_manifest_parse(buf, n, man, err);
	free(buf);
	return st == TM_OK;
}

/* One manifest's files entry against another's (NULL: none). */
static bool
file_same(const struct tm_manifest_file *a, const struct tm_manifest_file *b)
{
	struct tm_manifest x, y;

	if (!a || !b)
		return a == b;
	tm_manifest_init(&x);
	tm_manifest_init(&y);
	x.has_files = y.has_files = true;
	x.n_files = y.n_files = 1;
	x.files = (struct tm_manifest_file *)(uintptr_t)a;
	y.files = (struct tm_manifest_file *)(uintptr_t)b;
	bool eq = tm_manifest_equal(&x, &y);
	x.files = y.files = NULL;
	x.n_files = y.n_files = 0;
	tm_manifest_fini(&x);
	tm_manifest_fini(&y);
	return eq;
}

static const struct tm_manifest_file *
file_entry(const struct tm_manifest *m, const char *path)
{
	for (size_t i = 0; i < m->n_files; i++)
		if (m->files[i].path && !strcmp(m->files[i].path, path))
			return &m->files[i];
	return NULL;
}

static bool
same_str(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

static void
summary_add(struct tm_buf *b, size_t *n, const char *what)
{
	if (*n < 2) {
		char *e = tm_escape_str(what);
		tm_buf_addf(b, "%s%s", b->len ? ", " : "", e);
		free(e);
	}
	(*n)++;
}

char *
model_recovery_summary(const struct wb_model *m, const char *path)
{
	size_t n = 0;
	struct tm_manifest man;
	struct tm_error err;
	struct tm_buf b;

	if (!read_recovery(path, &man, &err)) {
		tm_manifest_fini(&man);
		return NULL;
	}
	tm_buf_init(&b);
	for (size_t i = 0; i < man.n_files; i++)
		if (man.files[i].path && !file_same(&man.files[i], file_entry(&m->man, man.files[i].path)))
			summary_add(&b, &n, man.files[i].path);
	for (size_t i = 0; i < m->man.n_files; i++)
		if (m->man.files[i].path && !file_entry(&man, m->man.files[i].path))
			summary_add(&b, &n, m->man.files[i].path);
	if (man.has_trace_time != m->man.has_trace_time || man.tt_clock != m->man.tt_clock ||
	    !same_str(man.tt_file, m->man.tt_file) || !same_str(man.tt_machine, m->man.tt_machine))
		summary_add(&b, &n, "trace time");
	if (n > 2)
		tm_buf_addf(&b, " +%zu more", n - 2);
	char side[PATH_MAX + 16];
	size_t n_set = 0, n_in = 0;
	model_recovery_inputs_path(path, side, sizeof side);
	char *set = tm_read_file(side, 16u << 20, false, &n_set, &err);
	for (size_t o = 0; set && o < n_set; o += strlen(set + o) + 1)
		n_in++;
	if (set)
		tm_buf_addf(&b, "%s%zu files (%zu now)", b.len ? "; " : "", n_in / 2, m->n_paths);
	free(set);
	if (!b.len)
		tm_buf_adds(&b, tm_manifest_equal(&man, &m->man) ? "no change from now" : "attributes");
	tm_manifest_fini(&man);
	return tm_buf_steal(&b);
}

bool
model_restore(struct wb_model *m, const char *path)
{
	size_t n_set = 0;
	struct tm_manifest man;
	struct tm_error err;
	char side[PATH_MAX + 16];

	if (!read_recovery(path, &man, &err)) {
		tm_manifest_fini(&man);
		model_set_msg(m, ROLE_ERROR, "recovery: %s", err.msg);
		return false;
	}
	/* the files added, renamed and moved too: that set opened again (one
	 * undo step), then its manifest */
	model_recovery_inputs_path(path, side, sizeof side);
	char **set = restore_set(m, side, &n_set);
	const char *what = "Restored the recovered edits (the files added, renamed and moved too)";
	if (set && reopen_step(m, set, n_set, what, true)) {
		tm_manifest_fini(&m->man);
		m->man = man;
		reopened(m, what);
		return true;
	}
	model_commit(m, &man, set ? "Restored the recovered manifest; its set of files did not open"
				  : "Restored the recovered edits");
	return true;
}

/* SPDX-License-Identifier: MIT */
/*
 * Fixes proven before they are offered: for a file that drops events or an
 * edit that makes the import fail, build candidate edits (shift it past
 * zero, the alignment estimate, RELATE instead of PIN, a machine of its
 * own, a relation to the timeline's owner), evaluate each (a replay over
 * the scanned op logs: no trace byte is read), and keep only those that
 * help, best first, each with its predicted verdict.  All of it is ours.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "session.h"

void
tm_fixes_fini(struct tm_fixes *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].file);
		free(f->v[i].what);
		free(f->v[i].why);
		free(f->v[i].verdict);
		tm_manifest_fini(&f->v[i].m);
		tm_report_free(f->v[i].report);
	}
	free(f->v);
	memset(f, 0, sizeof *f);
}

struct cand_ctx {
	struct tm_session *s;
	const struct tm_manifest *cur;
	const struct tm_report *before;
	struct tm_fixes *out;
	size_t cap;
	struct tm_first_traces traces; /* before's */
};

static bool
better(const struct tm_report *after, const struct tm_report *before)
{
	if (after->error)
		return false;
	return before->error || after->dropped < before->dropped;
}

/* Keep m when it helps and is not already offered.  *known: its replay when
 * the caller has it (taken over, *known set to NULL), else m is replayed. */
static void
offer(struct cand_ctx *c, const char *file, const struct tm_manifest *m, struct tm_report **known,
      const char *what, const char *why)
{
	for (size_t i = 0; i < c->out->n; i++)
		if (tm_manifest_equal(&c->out->v[i].m, m))
			return;
	struct tm_report *r = NULL;
	struct tm_error e;
	if (known && *known) {
		r = *known;
		*known = NULL;
	} else if (tm_session_eval_numbers(c->s, m, &r, &e) != TM_OK) {
		return;
	}
	if (better(r, c->before)) {
		XGROW(c->out->v, c->cap, c->out->n + 1);
		struct tm_fix *f = &c->out->v[c->out->n++];
		memset(f, 0, sizeof *f);
		f->file = xstrdup(file);
		f->what = xstrdup(what);
		f->why = xstrdup(why);
		tm_manifest_copy(&f->m, m);
		f->verdict = tm_report_verdict_str(r);
		f->ok = r->ok;
		f->dropped = r->dropped;
		f->report = r; /* tm_solve goes on from it */
		r = NULL;
	}
	tm_report_free(r);
}

static void
what_offset(struct tm_buf *b, const struct tm_offset_result *r)
{
	tm_buf_addf(b, "--offset %s", r->file);
	if (r->clock)
		tm_buf_addf(b, ":%s", tm_clock_name(r->clock));
	tm_buf_addc(b, '=');
	tm_offset_format_ns(r->offset_ns, b);
	tm_buf_addf(b, "@%s", r->ref);
	if (r->ref_clock)
		tm_buf_addf(b, ":%s", tm_clock_name(r->ref_clock));
}

/* One offset edit through the engine's grammar defaults, and with the
 * machine of its own the edit offers. */
static void
try_offset(struct cand_ctx *c, const char *file, const struct tm_offset_spec *sp, const char *why)
{
	struct tm_offset_result r;
	struct tm_error e;
	if (tm_offset_apply_known(c->s, c->cur, c->before, &c->traces, file, sp, &r, &e) != TM_OK)
		return;
	struct tm_offset_take t = tm_offset_take(&r, false);
	struct tm_buf b;
	tm_buf_init(&b);
	what_offset(&b, &r);
	offer(c, file, t.m, t.report, b.data, why);
	if (t.offer) {
		tm_buf_addf(&b, " --machine %s=%s", file, r.own_machine);
		offer(c, file, &r.own_m, &r.own_report, b.data, r.own_why);
	}
	tm_buf_fini(&b);
	tm_offset_result_fini(&r);
}

static int
cmp_fix(const struct tm_fix *a, const struct tm_fix *b)
{
	if (a->ok != b->ok)
		return a->ok ? -1 : 1;
	if (a->dropped != b->dropped)
		return a->dropped < b->dropped ? -1 : 1;
	return 0;
}

static void
fixes_for(struct cand_ctx *c, const struct tm_report_file *rf, const struct tm_align_result *al)
{
	const char *file = rf->path;
	const struct tm_manifest_file *f = tm_manifest_file_find(c->cur, file);
	int64_t cur_off = f && f->has_clocks ? f->clocks.offset_ns : 0;
	struct tm_offset_spec sp;
	char why[512];

	/* the offset its events give */
	for (size_t i = 0; al && i < al->n; i++) {
		const struct tm_align_estimate *e = &al->est[i];
		if (strcmp(e->file, file) || !tm_align_offerable(e))
			continue;
		tm_align_offset_spec(e, &sp);
		snprintf(why, sizeof why, "the %s estimate from events: %s", tm_align_quality_name(e->quality),
			 e->evidence ? e->evidence : "");
		try_offset(c, file, &sp, why);
	}
	/* events before zero: shift the file past it */
	if (rf->has_all_ts && rf->all_first_ts < 0 && rf->all_first_ts != INT64_MIN) {
		memset(&sp, 0, sizeof sp);
		sp.has_offset = !__builtin_add_overflow(cur_off, -rf->all_first_ts, &sp.offset_ns);
		struct tm_buf d;
		tm_buf_init(&d);
		tm_format_duration_ns(-rf->all_first_ts, &d);
		snprintf(why, sizeof why, "its first event lands %s before zero; this moves it to zero",
			 d.data[0] == '+' ? d.data + 1 : d.data);
		tm_buf_fini(&d);
		if (sp.has_offset)
			try_offset(c, file, &sp, why);
	}
	/* the relation as it is, through the file's own clock (a PIN on a file
	 * with clocks of its own becomes a RELATE) */
	memset(&sp, 0, sizeof sp);
	try_offset(c, file, &sp,
		   f && f->has_clocks ? "the same relation, through the clock its timestamps are in"
				      : "relate it to the timeline's owner");
	/* a machine of its own, alone */
	if (!f || (!f->machine_name && !f->n_machines)) {
		struct tm_manifest m;
		char *name = tm_own_machine_name(c->cur, file);
		tm_manifest_copy(&m, c->cur);
		tm_manifest_set_machine(&m, file, name);
		struct tm_buf b;
		tm_buf_init(&b);
		tm_buf_addf(&b, "--machine %s=%s", file, name);
		offer(c, file, &m, NULL, b.data, "a machine of its own: its clocks are not the others'");
		tm_buf_fini(&b);
		tm_manifest_fini(&m);
		free(name);
	}
}

/* tm_fixes_suggest with the replay of cur known (borrowed; NULL: replayed
 * here). */
static enum tm_status
fixes_suggest(struct tm_session *s, const struct tm_manifest *cur, const struct tm_report *known,
	      const char *file, struct tm_fixes *out, struct tm_error *err)
{
	memset(out, 0, sizeof *out);
	struct tm_report *own_before = NULL;
	const struct tm_report *before = known;
	if (!before) {
		enum tm_status st = tm_session_eval_numbers(s, cur, &own_before, err);
		if (st != TM_OK)
			return st;
		before = own_before;
	}
	if (before->ok) {
		tm_report_free(own_before);
		return TM_OK;
	}
	struct tm_manifest empty;
	tm_manifest_init(&empty);
	struct cand_ctx c = {s, cur ? cur : &empty, before, out, 0, {{-1, -1}}};
	tm_first_traces(before, &c.traces);
	struct tm_align_result al;
	struct tm_error e2;
	bool have_al = tm_align_run(s, c.cur, NULL, &al, &e2) == TM_OK;
	for (size_t i = 0; i < before->n_files; i++) {
		const struct tm_report_file *rf = &before->files[i];
		if (!rf->is_trace || !rf->path || (file && strcmp(file, rf->path)))
			continue;
		const struct tm_manifest_file *f = tm_manifest_file_find(c.cur, rf->path);
		/* the files that drop, or, when the import fails, the ones the
		 * manifest configures */
		if (rf->dropped && !(before->error && f && (f->has_clocks || f->machine_name)))
			fixes_for(&c, rf, have_al ? &al : NULL);
	}
	/* the import fails: the files the manifest configures (a file the
	 * failure keeps from being reached is not in the report as a trace) */
	for (size_t i = 0; before->error && i < c.cur->n_files; i++) {
		const struct tm_manifest_file *f = &c.cur->files[i];
		struct tm_report_file rf = {.path = f->path, .is_trace = true};
		if (f->path && (f->has_clocks || f->machine_name) && (!file || !strcmp(file, f->path)))
			fixes_for(&c, &rf, have_al ? &al : NULL);
	}
	if (have_al)
		tm_align_result_fini(&al);
	/* stable (insertion sort over a handful): among equals, the order
	 * they were tried in, the estimate from events first */
	for (size_t i = 1; i < out->n; i++)
		for (size_t j = i; j > 0 && cmp_fix(&out->v[j - 1], &out->v[j]) > 0; j--) {
			struct tm_fix t = out->v[j];
			out->v[j] = out->v[j - 1];
			out->v[j - 1] = t;
		}
	tm_report_free(own_before);
	tm_manifest_fini(&empty);
	return TM_OK;
}

enum tm_status
tm_fixes_suggest(struct tm_session *s, const struct tm_manifest *cur,
		 const struct tm_report *known, const char *file, struct tm_fixes *out,
		 struct tm_error *err)
{
	return fixes_suggest(s, cur, known, file, out, err);
}

/* ---- solve: a whole configuration ---- */

void
tm_solution_fini(struct tm_solution *so)
{
	if (so->has_m)
		tm_manifest_fini(&so->m);
	for (size_t i = 0; i < so->n_steps; i++)
		free(so->steps[i]);
	free(so->steps);
	free(so->verdict);
	free(so->unplaced);
	memset(so, 0, sizeof *so);
}

static void
step(struct tm_solution *so, size_t *cap, const char *a, const char *sep, const char *b,
     const char *end)
{
	XGROW(so->steps, *cap, so->n_steps + 1);
	struct tm_buf t;
	tm_buf_init(&t);
	tm_buf_adds(&t, a);
	tm_buf_adds(&t, sep);
	tm_buf_adds(&t, b);
	tm_buf_adds(&t, end);
	so->steps[so->n_steps++] = tm_buf_steal(&t);
}

/* Worse: fails where it did not, or drops more. */
static bool
worse(const struct tm_report *a, const struct tm_report *b)
{
	if (a->error)
		return !b->error;
	return !b->error && a->dropped > b->dropped;
}

enum tm_status
tm_solve(struct tm_session *s, const struct tm_manifest *cur, struct tm_solution *out,
	 struct tm_error *err)
{
	memset(out, 0, sizeof *out);
	size_t cap = 0;
	out->has_m = true;
	if (cur)
		tm_manifest_copy(&out->m, cur);
	else
		tm_manifest_init(&out->m);
	struct tm_report *r = NULL;
	enum tm_status st = tm_session_eval_numbers(s, &out->m, &r, err);
	if (st != TM_OK)
		goto fail;
	/* 1. the offsets the events give, each kept only if it does not make
	 * things worse (with the machine of its own the edit proves) */
	struct tm_align_result al;
	struct tm_error e2;
	if (tm_align_run(s, &out->m, NULL, &al, &e2) == TM_OK) {
		for (size_t i = 0; i < al.n; i++) {
			const struct tm_align_estimate *e = &al.est[i];
			if (!tm_align_offerable(e))
				continue;
			struct tm_offset_spec sp;
			struct tm_offset_result res;
			tm_align_offset_spec(e, &sp);
			if (tm_offset_apply_known(s, &out->m, r, NULL, e->file, &sp, &res, &e2) != TM_OK)
				continue;
			struct tm_offset_take t = tm_offset_take(&res, true);
			struct tm_report *r2 = *t.report; /* its replay, taken over */
			*t.report = NULL;
			if (r2 && !worse(r2, r)) {
				tm_manifest_fini(&out->m);
				tm_manifest_copy(&out->m, t.m);
				tm_report_free(r);
				r = r2;
				r2 = NULL;
				struct tm_buf w;
				tm_buf_init(&w);
				tm_buf_addf(&w, "%s: the %s estimate, ", e->file, tm_align_quality_name(e->quality));
				tm_format_duration_ns(e->offset_ns, &w);
				step(out, &cap, w.data, " vs ", e->ref, "");
				tm_buf_fini(&w);
				if (t.own)
					step(out, &cap, e->file, ": a machine of its own, ", res.own_machine, "");
			}
			tm_report_free(r2);
			tm_offset_result_fini(&res);
		}
		tm_align_result_fini(&al);
	}
	/* 2. proven fixes, best first, until nothing is left to fix */
	for (unsigned round = 0; !r->ok && round < 16; round++) {
		struct tm_fixes fx;
		if (fixes_suggest(s, &out->m, r, NULL, &fx, &e2) != TM_OK || !fx.n) {
			tm_fixes_fini(&fx);
			break;
		}
		tm_manifest_fini(&out->m);
		tm_manifest_copy(&out->m, &fx.v[0].m);
		step(out, &cap, fx.v[0].what, " (", fx.v[0].why, ")");
		tm_report_free(r);
		r = fx.v[0].report; /* the fix's replay: m is fx.v[0].m */
		fx.v[0].report = NULL;
		tm_fixes_fini(&fx);
	}
	out->ok = r->ok;
	out->verdict = tm_report_verdict_str(r);
	struct tm_buf b;
	if (!r->ok) {
		tm_buf_init(&b);
		for (size_t i = 0; i < r->n_files; i++) {
			const struct tm_report_file *rf = &r->files[i];
			if (!rf->dropped || !rf->path)
				continue;
			tm_buf_addf(&b, "%s%s cannot be placed: %s", b.len ? "; " : "", rf->path,
				    rf->placement ? rf->placement : "no edit tried makes it line up");
		}
		if (!b.len && r->error)
			tm_buf_addf(&b, "no edit tried opens the archive: %s", r->error);
		out->unplaced = tm_buf_steal(&b);
	}
	tm_report_free(r);
	return TM_OK;
fail:
	tm_report_free(r);
	tm_solution_fini(out);
	return st;
}

/* The lines of a text: their starts and lengths (no '\n'). */
struct lines {
	const char **p;
	size_t *len, n;
};

static void
lines_of(const char *t, struct lines *l)
{
	size_t cap = 0;

	l->p = NULL, l->len = NULL, l->n = 0;
	while (*t) {
		const char *nl = strchr(t, '\n');
		size_t n = nl ? (size_t)(nl - t) : strlen(t);
		if (l->n == cap) {
			cap = cap ? 2 * cap : 16;
			l->p = xrealloc(l->p, cap * sizeof *l->p);
			l->len = xrealloc(l->len, cap * sizeof *l->len);
		}
		l->p[l->n] = t, l->len[l->n++] = n;
		t += n + (nl != NULL);
	}
}

static bool
line_eq(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->len[i] == b->len[j] && !memcmp(a->p[i], b->p[j], a->len[i]);
}

static void
put_line(struct tm_buf *out, char mark, const struct lines *l, size_t i)
{
	tm_buf_addf(out, "%c%.*s\n", mark, (int)l->len[i], l->p[i]);
}

/* Beyond this many cells the middle is shown as removed, then added: still
 * a true diff, only not the shortest (manifests differ in a few lines). */
#define DIFF_MAX_CELLS ((size_t)1 << 22)

/* A line diff (tracemerge.h): the common head and tail kept, the longest
 * common subsequence of the lines between. */
void
tm_line_diff(const char *a, const char *b, struct tm_buf *out)
{
	struct lines la, lb;
	size_t head = 0, tail = 0;

	lines_of(a, &la);
	lines_of(b, &lb);
	while (head < la.n && head < lb.n && line_eq(&la, head, &lb, head))
		head++;
	while (tail < la.n - head && tail < lb.n - head &&
	       line_eq(&la, la.n - 1 - tail, &lb, lb.n - 1 - tail))
		tail++;
	for (size_t k = 0; k < head; k++)
		put_line(out, ' ', &la, k);
	size_t na = la.n - head - tail, nb = lb.n - head - tail;
	size_t *L = NULL;
	if (na && nb && (na + 1) <= DIFF_MAX_CELLS / (nb + 1))
		L = xcalloc((na + 1) * (nb + 1), sizeof *L);
#define AT(i, j) L[(i) * (nb + 1) + (j)]
	if (L)
		for (size_t i = na; i-- > 0;)
			for (size_t j = nb; j-- > 0;)
				AT(i, j) = line_eq(&la, head + i, &lb, head + j)
						   ? AT(i + 1, j + 1) + 1
						   : (AT(i + 1, j) > AT(i, j + 1) ? AT(i + 1, j)
										 : AT(i, j + 1));
	size_t i = 0, j = 0;
	while (i < na || j < nb) {
		if (L && i < na && j < nb && line_eq(&la, head + i, &lb, head + j)) {
			put_line(out, ' ', &la, head + i);
			i++, j++;
		} else if (i < na && (!L || j == nb || AT(i + 1, j) >= AT(i, j + 1))) {
			put_line(out, '-', &la, head + i);
			i++;
		} else {
			put_line(out, '+', &lb, head + j);
			j++;
		}
	}
#undef AT
	for (size_t k = la.n - tail; k < la.n; k++)
		put_line(out, ' ', &la, k);
	free(L);
	free(la.p), free(la.len), free(lb.p), free(lb.len);
}


/* SPDX-License-Identifier: MIT */
/*
 * The model's alignment edits (part of the model room, beside wb_model.c):
 * offsets estimated from events, declared event pairs, solve, a machine of
 * its own, and the fixes the engine proved.  Every rule is the engine's
 * (tm_align_run, tm_offset_apply, tm_solve, tm_fixes_suggest); this file
 * turns their results into one undoable edit each and keeps the evidence
 * the details show.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wb.h"

static char *
xstrdup0(const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		abort();
	return d;
}

/* ---- proven fixes (wb_model.c refreshes them after each evaluation) ---- */

const struct tm_fix *
model_fix(const struct wb_model *m, const char *path, size_t k)
{
	for (size_t i = 0; path && i < m->fixes.n; i++)
		if (m->fixes.v[i].file && !strcmp(m->fixes.v[i].file, path) && k-- == 0)
			return &m->fixes.v[i];
	return NULL;
}

void
model_apply_fix(struct wb_model *m, const char *path, size_t k)
{
	model_fixes_ensure(m, path);
	const struct tm_fix *f = model_fix(m, path, k);
	struct tm_manifest next;
	char what[600];

	if (!f) {
		if (k == 0) {
			char why[160];
			if (m->rep && m->rep->ok)
				snprintf(why, sizeof why, "everything lines up");
			else
				snprintf(why, sizeof why, "none of the edits tracemerge tries helps it "
							  "(%s solves the whole set)",
					 model_key(m, REQ_SOLVE));
			model_set_msg(m, ROLE_DIM, "No fix for %s: %s", path ? path : "?", why);
		} else {
			model_set_msg(m, ROLE_WARNING, "%s has no fix %zu", path, k + 1);
		}
		return;
	}
	snprintf(what, sizeof what, "Fix %zu (checked by tracemerge): %s; predicted: %s", k + 1,
		 f->what, f->verdict);
	tm_manifest_copy(&next, &f->m);
	model_commit(m, &next, what);
}

/* ---- evidence of the last estimate, per file ---- */

static void
evidence_set(struct wb_model *m, const char *path, char *text)
{
	for (size_t i = 0; i < m->n_evidence; i++)
		if (!strcmp(m->evidence[i].path, path)) {
			free(m->evidence[i].text);
			m->evidence[i].text = text;
			return;
		}
	struct wb_evidence *v = realloc(m->evidence, (m->n_evidence + 1) * sizeof *v);
	if (!v)
		abort();
	m->evidence = v;
	v[m->n_evidence].path = xstrdup0(path);
	v[m->n_evidence++].text = text;
}

const char *
model_evidence(const struct wb_model *m, const char *path)
{
	for (size_t i = 0; path && i < m->n_evidence; i++)
		if (!strcmp(m->evidence[i].path, path))
			return m->evidence[i].text;
	return NULL;
}

/* ---- estimates and pairs: one edit for all the files ---- */

/* Apply the estimates of res (only path's when path is set) to a copy of
 * the manifest through the engine's offset rule, and commit them as one
 * edit.  Returns how many offsets were set. */
static size_t
apply_estimates(struct wb_model *m, const struct tm_align_result *res, const char *path,
		const char *what)
{
	struct tm_manifest next;
	struct tm_buf note;
	size_t n_set = 0, n_tried = 0;

	tm_manifest_copy(&next, &m->man);
	tm_buf_init(&note);
	for (size_t i = 0; i < res->n; i++) {
		const struct tm_align_estimate *e = &res->est[i];
		struct tm_buf ev;
		if (path && strcmp(e->file, path))
			continue;
		n_tried++;
		tm_buf_init(&ev);
		tm_buf_addf(&ev, "%s (tracemerge) vs %s: ", what, e->ref);
		tm_align_describe(e, &ev);
		if (e->has_offset) {
			struct tm_buf d;
			tm_buf_init(&d);
			tm_align_drift_sentence(e, &d);
			if (d.len)
				tm_buf_addf(&ev, "; %s", d.data);
			tm_buf_fini(&d);
			tm_buf_addf(&ev, ". Pairs used: %s", e->evidence ? e->evidence : "");
		}
		if (tm_align_offerable(e)) {
			struct tm_offset_spec sp;
			struct tm_offset_result r;
			struct tm_error err;
			tm_align_offset_spec(e, &sp);
			tm_error_clear(&err);
			if (tm_offset_apply(m->s, &next, e->file, &sp, &r, &err) == TM_OK && r.has_m) {
				struct tm_offset_take t = tm_offset_take(&r, true);
				tm_manifest_fini(&next);
				tm_manifest_copy(&next, t.m);
				if (r.how)
					tm_buf_addf(&ev, ". %s", r.how);
				if (t.own)
					tm_buf_addf(&ev, ". %s", r.own_why);
				if (t.inert)
					tm_buf_addf(&ev, ". Changes no predicted number: %s", t.inert);
				n_set++;
			} else {
				tm_buf_addf(&ev, ". Not applied: %s", err.msg);
			}
			tm_offset_result_fini(&r);
		} else if (e->quality == TM_ALIGN_CONTRADICTORY) {
			tm_buf_adds(&ev, ". Not applied: the messages admit no single offset");
		} else if (e->quality == TM_ALIGN_WEAK) {
			tm_buf_adds(&ev, ". Not applied: not enough evidence");
		}
		if (!note.len)
			tm_buf_adds(&note, ev.data);
		evidence_set(m, e->file, tm_buf_steal(&ev));
	}
	if (!n_tried) {
		tm_manifest_fini(&next);
		model_set_msg(m, ROLE_WARNING, "%s: %s", what,
			      path ? "the file owns the timeline: the others are estimated against it"
				   : "no other trace file to estimate");
	} else if (!n_set) {
		tm_manifest_fini(&next);
		model_set_msg(m, ROLE_WARNING, "%s: nothing applied. %s", what,
			      note.data ? note.data : "");
	} else {
		char msg[900];
		if (n_set == 1)
			snprintf(msg, sizeof msg, "%s", note.data ? note.data : what);
		else
			snprintf(msg, sizeof msg, "%s: %zu offsets set as one edit (%s undoes; details show "
						  "each file's evidence)",
				 what, n_set, model_key(m, REQ_UNDO));
		model_commit(m, &next, msg);
	}
	tm_buf_fini(&note);
	return n_set;
}

void
model_estimate(struct wb_model *m, const char *path)
{
	struct tm_align_result res;
	struct tm_error err;

	if (!m->s)
		return;
	tm_error_clear(&err);
	if (tm_align_run(m->s, &m->man, NULL, &res, &err) != TM_OK) {
		model_set_msg(m, ROLE_ERROR, "Estimate: %s", err.msg);
		return;
	}
	apply_estimates(m, &res, path, path ? "Estimate" : "Estimate all");
	tm_align_result_fini(&res);
}

void
model_pair(struct wb_model *m, const struct tm_align_pair *p)
{
	struct tm_align_result res;
	struct tm_align_opts o = {p, 1, NULL, 0};
	struct tm_error err;

	if (!m->s)
		return;
	tm_error_clear(&err);
	if (tm_align_run(m->s, &m->man, &o, &res, &err) != TM_OK) {
		model_set_msg(m, ROLE_ERROR, "Pair: %s", err.msg);
		return;
	}
	apply_estimates(m, &res, p->file, "Pair");
	tm_align_result_fini(&res);
}

/* ---- solve ---- */

bool
model_solve(struct wb_model *m)
{
	struct tm_error err;
	struct tm_buf a, b, d;

	model_solve_answer(m, false);
	if (!m->s || m->man_broken)
		return false;
	tm_error_clear(&err);
	if (tm_solve(m->s, &m->man, &m->solution, &err) != TM_OK) {
		model_set_msg(m, ROLE_ERROR, "Solve: %s", err.msg);
		return false;
	}
	m->has_solution = true;
	tm_buf_init(&a);
	tm_buf_init(&b);
	tm_buf_init(&d);
	tm_manifest_emit(&m->man, &a);
	tm_manifest_emit(&m->solution.m, &b);
	tm_line_diff(a.data ? a.data : "", b.data ? b.data : "", &d);
	m->solution_diff = tm_buf_steal(&d);
	tm_buf_fini(&a);
	tm_buf_fini(&b);
	return true;
}

void
model_solve_answer(struct wb_model *m, bool apply)
{
	if (!m->has_solution)
		return;
	if (apply) {
		struct tm_manifest next;
		char what[900];
		snprintf(what, sizeof what, "Solve (tracemerge): %zu edit%s as one; predicted: %s%s%s",
			 m->solution.n_steps, m->solution.n_steps == 1 ? "" : "s",
			 m->solution.verdict ? m->solution.verdict : "",
			 m->solution.unplaced ? " " : "",
			 m->solution.unplaced ? m->solution.unplaced : "");
		tm_manifest_copy(&next, &m->solution.m);
		model_commit(m, &next, what);
	}
	model_solution_drop(m);
}

/* ---- a machine of its own ---- */

void
model_own_machine(struct wb_model *m, const char *path)
{
	const struct tm_manifest_file *f = model_manifest_file(m, path);
	struct tm_error err;
	char what[900];

	if (!m->s || !path)
		return;
	tm_error_clear(&err);
	/* a relation: the engine's offer for it, as it stands */
	if (f && f->has_clocks) {
		struct tm_offset_spec sp;
		struct tm_offset_result r;
		memset(&sp, 0, sizeof sp);
		if (tm_offset_apply(m->s, &m->man, path, &sp, &r, &err) == TM_OK && r.own_machine) {
			if (r.own_helps) {
				struct tm_manifest next;
				snprintf(what, sizeof what, "Own machine \"%s\" for %s (checked by tracemerge): %s "
					 "Predicted: %s",
					 r.own_machine, path, r.own_why ? r.own_why : "",
					 r.own_verdict ? r.own_verdict : "");
				tm_manifest_copy(&next, &r.own_m);
				model_commit(m, &next, what);
			} else {
				model_set_msg(m, ROLE_WARNING,
					      "A machine of its own does not help %s (predicted: %s); not applied",
					      path, r.own_verdict ? r.own_verdict : "?");
			}
			tm_offset_result_fini(&r);
			return;
		}
		tm_offset_result_fini(&r);
	}
	/* no relation joining two files: the proven fix that gives it one */
	char *name = tm_own_machine_name(&m->man, path);
	struct tm_manifest cand;
	tm_manifest_copy(&cand, &m->man);
	tm_manifest_set_machine(&cand, path, name);
	model_fixes_ensure(m, path);
	for (size_t k = 0;; k++) {
		const struct tm_fix *fx = model_fix(m, path, k);
		if (!fx)
			break;
		if (tm_manifest_equal(&fx->m, &cand)) {
			model_apply_fix(m, path, k);
			tm_manifest_fini(&cand);
			free(name);
			return;
		}
	}
	tm_manifest_fini(&cand);
	if (f && (f->machine_name || f->n_machines))
		model_set_msg(m, ROLE_DIM, "%s is on machine %s already; %s adds another, %s picks one",
			      path, f->machine_name ? f->machine_name : "(per id)",
			      model_key(m, REQ_ADD_MACHINE), model_key(m, REQ_MACHINE));
	else
		model_set_msg(m, ROLE_DIM,
			      "A machine of its own (\"%s\") would not help %s: %s", name, path,
			      m->rep && m->rep->ok ? "everything lines up already"
						   : "tracemerge tried it and nothing gets better");
	free(name);
}

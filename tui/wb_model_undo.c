/* SPDX-License-Identifier: MIT */
/*
 * The workbench's model, its history: the undo and redo stacks (each step a
 * manifest and the set of inputs it belongs to), the commit every edit ends
 * in, the saved copy (dirty state), the manifest as JSON text, and the
 * recovery manifests wb_out.c writes: what one changes against now, and
 * restoring one (with its set of inputs).  No curses here.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wb.h"
#include "wb_model.h"

/* ---- undo stack ---- */

char **
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
void
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

void
stack_fini(struct wb_stack *st)
{
	for (size_t i = 0; i < st->n; i++)
		undo_fini(&st->v[i]);
	free(st->v);
	memset(st, 0, sizeof *st);
}

void
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

bool
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

/* SPDX-License-Identifier: MIT */
/*
 * The workbench's model, its set of files: closing and reopening the
 * session on a new set of inputs (add, remove, rename, rescan), member
 * names as links in a folder of our own, trace_processor's processing order
 * (moving a file earlier or later renames members), the demo's temp dir.
 * No curses here.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wb.h"
#include "wb_model.h"

/* ---- files managed: add, remove, rename, rescan ---- */

void
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

void
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
bool
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

bool
reopen(struct wb_model *m, char **paths, size_t n, const char *what)
{
	return reopen_step(m, paths, n, what, false);
}

void
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
bool
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
bool
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


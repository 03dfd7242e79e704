/* SPDX-License-Identifier: MIT */
/*
 * Edits: every request and :command that changes the manifest builds a new
 * manifest value from a copy of the current one, pushes the old one on the
 * undo stack and re-evaluates at once (no debounce).  Machines (assign, add
 * "Machine N", rename everywhere, delete, merge, id names), alignment (auto,
 * offset with units, reference, own clock, nudges), timeline clock/file,
 * attributes, undo/redo, and the dispatch of non-editing requests.
 */
#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wb.h"

void wb_open_line(struct wb *wb, const char *line);

/* ---- undo stack ---- */

static void
stack_push(struct wb_stack *st, const struct tm_manifest *m)
{
	if (st->n == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 16;
		st->v = realloc(st->v, st->cap * sizeof *st->v);
		if (!st->v)
			abort();
	}
	tm_manifest_copy(&st->v[st->n++], m);
}

void
edit_stack_fini(struct wb_stack *st)
{
	for (size_t i = 0; i < st->n; i++)
		tm_manifest_fini(&st->v[i]);
	free(st->v);
	memset(st, 0, sizeof *st);
}

static void
stack_clear(struct wb_stack *st)
{
	for (size_t i = 0; i < st->n; i++)
		tm_manifest_fini(&st->v[i]);
	st->n = 0;
}

void
edit_commit(struct wb *wb, struct tm_manifest *next, const char *what)
{
	if (tm_manifest_equal(&wb->man, next)) {
		tm_manifest_fini(next);
		wb_set_msg(wb, ROLE_DIM, "%s: nothing changed", what);
		return;
	}
	stack_push(&wb->undo, &wb->man);
	stack_clear(&wb->redo);
	tm_manifest_fini(&wb->man);
	wb->man = *next;
	wb_evaluate(wb);
	wb_set_msg(wb, ROLE_INFO, "%s", what);
}

bool
edit_is_dirty(const struct wb *wb)
{
	return !tm_manifest_equal(&wb->man, &wb->saved);
}

static void
undo_redo(struct wb *wb, bool undo)
{
	struct wb_stack *from = undo ? &wb->undo : &wb->redo;
	struct wb_stack *to = undo ? &wb->redo : &wb->undo;

	if (from->n == 0) {
		wb_set_msg(wb, ROLE_DIM, undo ? "Nothing to undo" : "Nothing to redo");
		return;
	}
	stack_push(to, &wb->man);
	tm_manifest_fini(&wb->man);
	wb->man = from->v[--from->n];
	wb_evaluate(wb);
	wb_set_msg(wb, ROLE_INFO, undo ? "Undone (%zu more)" : "Redone (%zu more)", from->n);
}

/* ---- helpers ---- */

static const char *
sel_path(const struct wb *wb)
{
	if (!wb->s || wb_n_rows(wb) == 0)
		return NULL;
	return wb_member_name(wb, wb_row_member(wb, wb->sel));
}

static bool
is_builtin_clock(uint32_t c)
{
	return c >= TM_CLOCK_REALTIME && c <= TM_CLOCK_BOOTTIME;
}

/* The file's sole builtin clock (what the dialog writes), else UNSET (PIN). */
static uint32_t
sole_clock(const struct wb *wb, const char *path)
{
	for (size_t row = 0; path && row < wb_n_rows(wb); row++) {
		const struct tm_report_file *rf = wb_row_file(wb, row);
		if (!rf || strcmp(wb_member_name(wb, rf->member), path) != 0)
			continue;
		if (rf->n_clocks == 1 && is_builtin_clock(rf->clocks[0]))
			return rf->clocks[0];
		return TM_CLOCK_UNSET;
	}
	return TM_CLOCK_UNSET;
}

static const char *
default_ref(const struct wb *wb, const char *path)
{
	if (wb->baseline && strcmp(wb->baseline, path) != 0)
		return wb->baseline;
	for (size_t row = 0; row < wb_n_rows(wb); row++) {
		const char *n = wb_member_name(wb, wb_row_member(wb, row));
		const struct tm_report_file *rf = wb_row_file(wb, row);
		if (rf && !rf->is_trace)
			continue;
		if (strcmp(n, path) != 0)
			return n;
	}
	return NULL;
}

static const struct tm_manifest_file *
cur_file(const struct wb *wb, const char *path)
{
	for (size_t i = 0; path && i < wb->man.n_files; i++)
		if (wb->man.files[i].path && strcmp(wb->man.files[i].path, path) == 0)
			return &wb->man.files[i];
	return NULL;
}

static void
set_offset(struct wb *wb, const char *path, int64_t off, const char *what)
{
	const struct tm_manifest_file *f = cur_file(wb, path);
	struct tm_manifest next;
	const char *ref;
	uint32_t clock, ref_clock;
	const char *ref_machine = NULL;
	char msg[512];
	struct tm_buf d;

	if (f && f->has_clocks && f->clocks.sync_file) {
		ref = f->clocks.sync_file;
		clock = f->clocks.clock;
		ref_clock = f->clocks.sync_clock;
		ref_machine = f->clocks.sync_machine;
	} else {
		ref = default_ref(wb, path);
		clock = sole_clock(wb, path);
		ref_clock = ref ? sole_clock(wb, ref) : TM_CLOCK_UNSET;
	}
	if (!ref) {
		wb_set_msg(wb, ROLE_WARNING,
			   "An offset needs a reference file; this is the only trace.");
		return;
	}
	size_t undo_n = wb->undo.n;
	char effect[400];
	char *ref_copy = strdup(ref), *path_copy = strdup(path);

	tm_manifest_copy(&next, &wb->man);
	tm_manifest_set_clocks(&next, path, clock, ref, ref_clock, ref_machine, off);
	tm_buf_init(&d);
	tm_format_duration_ns(off, &d);
	snprintf(msg, sizeof msg, "%s: %s offset %s vs %s", what, path, d.data ? d.data : "", ref);
	edit_commit(wb, &next, msg);
	/* The effect comes from the new report: an offset on the file that owns
	 * the timeline moves the reference instead. */
	if (wb->undo.n != undo_n) {
		wb_offset_effect(wb, path_copy, off, ref_copy, effect, sizeof effect);
		if (off != 0 && wb_owns_timeline(wb, path_copy))
			wb_set_msg(wb, ROLE_WARNING, "%s: %s", what, effect);
		else
			wb_set_msg(wb, ROLE_INFO, "%s (%s)", msg, effect);
	}
	tm_buf_fini(&d);
	free(ref_copy);
	free(path_copy);
}

static void
nudge(struct wb *wb, int64_t delta)
{
	const char *path = sel_path(wb);
	const struct tm_manifest_file *f = cur_file(wb, path);
	int64_t off = f && f->has_clocks ? f->clocks.offset_ns : 0, r;

	if (!path)
		return;
	if (__builtin_add_overflow(off, delta, &r)) {
		wb_set_msg(wb, ROLE_ERROR, "offset out of range");
		return;
	}
	set_offset(wb, path, r, "Nudged");
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

/* Rename machine from -> to (to NULL: delete) in every place it is named. */
static void
rename_machine(struct wb *wb, const char *from, const char *to, const char *what)
{
	struct tm_manifest next;
	char msg[512];
	bool found = false;

	tm_manifest_copy(&next, &wb->man);
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
	for (size_t i = 0; i < wb->n_extra_machines; i++) {
		if (str_eq(wb->extra_machines[i], from)) {
			found = true;
			free(wb->extra_machines[i]);
			if (to) {
				wb->extra_machines[i] = strdup(to);
			} else {
				wb->extra_machines[i] = wb->extra_machines[--wb->n_extra_machines];
			}
			break;
		}
	}
	if (!found) {
		tm_manifest_fini(&next);
		wb_set_msg(wb, ROLE_WARNING, "No machine named %s", from);
		return;
	}
	if (to)
		snprintf(msg, sizeof msg, "%s: %s -> %s", what, from, to);
	else
		snprintf(msg, sizeof msg, "%s: %s (its files are now Default)", what, from);
	edit_commit(wb, &next, msg);
}

size_t
edit_machine_names(const struct wb *wb, char ***out)
{
	char **v = NULL;
	size_t n = 0;

#define ADD_NAME(nm)                                                                               \
	do {                                                                                       \
		const char *nm_ = (nm);                                                            \
		bool dup_ = false;                                                                 \
		if (!nm_ || !*nm_)                                                                 \
			break;                                                                     \
		for (size_t j_ = 0; j_ < n; j_++)                                                  \
			dup_ |= strcmp(v[j_], nm_) == 0;                                           \
		if (!dup_) {                                                                       \
			v = realloc(v, (n + 1) * sizeof *v);                                       \
			v[n++] = strdup(nm_);                                                      \
		}                                                                                  \
	} while (0)
	for (size_t i = 0; i < wb->man.n_files; i++) {
		ADD_NAME(wb->man.files[i].machine_name);
		for (size_t k = 0; k < wb->man.files[i].n_machines; k++)
			ADD_NAME(wb->man.files[i].machines[k].name);
	}
	for (size_t i = 0; i < wb->n_extra_machines; i++)
		ADD_NAME(wb->extra_machines[i]);
#undef ADD_NAME
	*out = v;
	return n;
}

static void
free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void
set_machine(struct wb *wb, const char *path, const char *name)
{
	struct tm_manifest next;
	char msg[512];
	const struct tm_report_file *rf = wb_row_file(wb, wb->sel);

	if (rf && rf->n_machines > 1) {
		wb_set_msg(wb, ROLE_WARNING,
			   "%s carries several machines: name its ids instead (i)", path);
		return;
	}
	if (name && (!*name || strcmp(name, "Default") == 0))
		name = NULL;
	tm_manifest_copy(&next, &wb->man);
	tm_manifest_set_machine(&next, path, name);
	snprintf(msg, sizeof msg, "%s -> machine %s", path, name ? name : "Default");
	edit_commit(wb, &next, msg);
}

static void
add_machine(struct wb *wb)
{
	const char *path = sel_path(wb);
	char name[64], **names;
	size_t n;

	if (!path)
		return;
	/* Skip numbers whose name is already taken (a loaded manifest may use them). */
	for (;;) {
		bool taken = false;
		snprintf(name, sizeof name, "Machine %u", wb->next_machine_n++);
		n = edit_machine_names(wb, &names);
		for (size_t i = 0; i < n; i++)
			taken |= strcmp(names[i], name) == 0;
		free_names(names, n);
		if (!taken)
			break;
	}
	set_machine(wb, path, name);
	if (str_eq(cur_file(wb, path) ? cur_file(wb, path)->machine_name : NULL, name))
		prompt_open(wb, PROMPT_RENAME_MACHINE, "Rename machine: ", name);
}

static void
name_id(struct wb *wb, const char *path, const char *spec)
{
	struct tm_manifest next;
	struct tm_manifest_file *f;
	char *end;
	unsigned long id;
	const char *eq = strchr(spec, '=');
	char msg[512];

	errno = 0;
	id = strtoul(spec, &end, 10);
	if (!eq || end == spec || end != eq || errno || id > UINT32_MAX) {
		wb_set_msg(wb, ROLE_ERROR, "Expected id=name, e.g. 7=vm");
		return;
	}
	tm_manifest_copy(&next, &wb->man);
	f = tm_manifest_file_get(&next, path, true);
	size_t k;
	for (k = 0; k < f->n_machines; k++)
		if (f->machines[k].id == (uint32_t)id)
			break;
	if (k == f->n_machines) {
		f->machines = realloc(f->machines, (f->n_machines + 1) * sizeof *f->machines);
		f->machines[k].id = (uint32_t)id;
		f->machines[k].name = NULL;
		f->n_machines++;
	}
	free(f->machines[k].name);
	f->machines[k].name = strdup(eq + 1);
	f->has_machines = true;
	snprintf(msg, sizeof msg, "%s: id %lu -> %s", path, id, eq + 1);
	edit_commit(wb, &next, msg);
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

static void
set_ref(struct wb *wb, const char *path, const char *spec)
{
	const struct tm_manifest_file *f = cur_file(wb, path);
	char *s = strdup(spec), *at, *colon;
	uint32_t ref_clock = TM_CLOCK_UNSET;
	struct tm_manifest next;
	char msg[512];

	at = strrchr(s, '@');
	if (at)
		*at++ = 0;
	colon = strrchr(s, ':');
	if (colon)
		*colon++ = 0;
	if (colon && !parse_clock(colon, &ref_clock)) {
		wb_set_msg(wb, ROLE_ERROR, "Unknown clock %s (REALTIME ... BOOTTIME)", colon);
		free(s);
		return;
	}
	if (!colon)
		ref_clock = sole_clock(wb, s);
	tm_manifest_copy(&next, &wb->man);
	tm_manifest_set_clocks(&next, path,
			       f && f->has_clocks ? f->clocks.clock : sole_clock(wb, path), s,
			       ref_clock, at && *at ? at : NULL,
			       f && f->has_clocks ? f->clocks.offset_ns : 0);
	snprintf(msg, sizeof msg, "%s: reference %s", path, spec);
	edit_commit(wb, &next, msg);
	free(s);
}

static void
set_own_clock(struct wb *wb, const char *path, const char *name)
{
	const struct tm_manifest_file *f = cur_file(wb, path);
	uint32_t c;
	struct tm_manifest next;
	char msg[256];

	if (!parse_clock(name, &c)) {
		wb_set_msg(wb, ROLE_ERROR, "Unknown clock %s (REALTIME ... BOOTTIME, empty = PIN)",
			   name);
		return;
	}
	if (!f || !f->has_clocks) {
		wb_set_msg(wb, ROLE_WARNING, "Set an offset first (o)");
		return;
	}
	tm_manifest_copy(&next, &wb->man);
	tm_manifest_set_clocks(&next, path, c, f->clocks.sync_file, f->clocks.sync_clock,
			       f->clocks.sync_machine, f->clocks.offset_ns);
	snprintf(msg, sizeof msg, "%s: clock %s", path, c ? tm_clock_name(c) : "PIN");
	edit_commit(wb, &next, msg);
}

static void
set_trace_time(struct wb *wb, const char *spec)
{
	char *s = strdup(spec), *save = NULL;
	char *clock = strtok_r(s, " \t", &save);
	char *file = strtok_r(NULL, " \t", &save);
	char *machine = strtok_r(NULL, " \t", &save);
	uint32_t c = TM_CLOCK_UNSET;
	struct tm_manifest next;
	char msg[512];

	if (clock && strcmp(clock, "auto") != 0 && !parse_clock(clock, &c)) {
		wb_set_msg(wb, ROLE_ERROR, "Unknown clock %s (REALTIME ... BOOTTIME, auto)", clock);
		free(s);
		return;
	}
	tm_manifest_copy(&next, &wb->man);
	tm_manifest_set_trace_time(&next, c, file, machine);
	if (c)
		snprintf(msg, sizeof msg, "Timeline clock %s%s%s", tm_clock_name(c),
			 file ? " of " : "", file ? file : "");
	else
		snprintf(msg, sizeof msg, "Timeline clock: automatic");
	edit_commit(wb, &next, msg);
	free(s);
}

static void
set_attr(struct wb *wb, const char *spec)
{
	const char *eq = strchr(spec, '=');
	char key[256], *end;
	struct tm_manifest next;
	long long v;

	if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof key) {
		wb_set_msg(wb, ROLE_ERROR, "Expected key=value");
		return;
	}
	memcpy(key, spec, (size_t)(eq - spec));
	key[eq - spec] = 0;
	tm_manifest_copy(&next, &wb->man);
	errno = 0;
	v = strtoll(eq + 1, &end, 10);
	if (!eq[1])
		tm_manifest_remove_attr(&next, key);
	else if (!*end && !errno)
		tm_manifest_set_attr_int(&next, key, v);
	else
		tm_manifest_set_attr_str(&next, key, eq + 1);
	edit_commit(wb, &next, eq[1] ? "Attribute set" : "Attribute removed");
}

static void
select_spec(struct wb *wb, const char *spec)
{
	char *end;
	unsigned long n = strtoul(spec, &end, 10);

	if (*spec && !*end) {
		if (n >= 1 && n <= wb_n_rows(wb))
			wb->sel = n - 1;
		return;
	}
	for (size_t r = 0; r < wb_n_rows(wb); r++)
		if (strcmp(wb_member_name(wb, wb_row_member(wb, r)), spec) == 0)
			wb->sel = r;
}

static void
start_write(struct wb *wb, const char *path)
{
	struct stat st;

	if (!path || !*path)
		path = "merged.tar";
	if (stat(path, &st) == 0) {
		free(wb->pending_write);
		wb->pending_write = strdup(path);
		wb->confirm = CONFIRM_OVERWRITE;
		prompt_open(wb, PROMPT_CONFIRM, "File exists. Overwrite? (y/n) ", "");
		return;
	}
	out_write_tar(wb, path, false);
}

/* ---- prompt results ---- */

void
edit_prompt_done(struct wb *wb, enum wb_prompt_kind kind, const char *line)
{
	const char *path = sel_path(wb);

	if (!line) {
		if (kind == PROMPT_CONFIRM && wb->confirm == CONFIRM_RESTORE)
			wb->confirm = CONFIRM_NONE;
		if (kind == PROMPT_OPEN)
			wb->quit = true;
		wb->confirm = CONFIRM_NONE;
		wb_set_msg(wb, ROLE_DIM, "Cancelled");
		return;
	}
	switch (kind) {
	case PROMPT_COMMAND:
		edit_command(wb, line);
		break;
	case PROMPT_OPEN:
		wb_open_line(wb, line);
		break;
	case PROMPT_MACHINE:
		if (path)
			set_machine(wb, path, line);
		break;
	case PROMPT_RENAME_MACHINE: {
		const struct tm_manifest_file *f = cur_file(wb, path);
		char *from = f && f->machine_name ? strdup(f->machine_name) : NULL;
		if (!from)
			wb_set_msg(wb, ROLE_WARNING, "The file is on Default: nothing to rename");
		else if (!*line || line[strspn(line, " \t")] == 0)
			wb_set_msg(wb, ROLE_WARNING,
				   "An empty name is treated as Default; not renamed");
		else if (strcmp(from, line) != 0)
			rename_machine(wb, from, line, "Renamed machine");
		free(from);
		break;
	}
	case PROMPT_MERGE_MACHINE: {
		const struct tm_manifest_file *f = cur_file(wb, path);
		char *from = f && f->machine_name ? strdup(f->machine_name) : NULL;
		if (from && *line)
			rename_machine(wb, from, line, "Merged machine");
		free(from);
		break;
	}
	case PROMPT_NAME_ID:
		if (path)
			name_id(wb, path, line);
		break;
	case PROMPT_OFFSET: {
		struct tm_error err;
		int64_t off;
		tm_error_clear(&err);
		if (!path)
			break;
		if (tm_parse_duration_ns(line, &off, &err) != TM_OK) {
			wb_set_msg(wb, ROLE_ERROR, "Enter a whole number of nanoseconds for %s's offset (%s)",
				   path, err.msg);
			break;
		}
		set_offset(wb, path, off, "Offset");
		break;
	}
	case PROMPT_REF:
		if (path && *line)
			set_ref(wb, path, line);
		break;
	case PROMPT_CLOCK:
		if (path)
			set_own_clock(wb, path, line);
		break;
	case PROMPT_TRACE_TIME:
		set_trace_time(wb, line);
		break;
	case PROMPT_ATTR:
		set_attr(wb, line);
		break;
	case PROMPT_WRITE:
		start_write(wb, line);
		break;
	case PROMPT_SAVE_MANIFEST:
		out_save_manifest(wb, *line ? line : "perfetto_manifest.json");
		break;
	case PROMPT_CONFIRM: {
		bool yes = line[0] == 'y' || line[0] == 'Y';
		enum wb_confirm c = wb->confirm;
		wb->confirm = CONFIRM_NONE;
		if (c == CONFIRM_QUIT && yes) {
			wb->quit = true;
		} else if (c == CONFIRM_OVERWRITE && yes && wb->pending_write) {
			out_write_tar(wb, wb->pending_write, true);
		} else if (c == CONFIRM_RESTORE) {
			if (yes && wb->recovery_path) {
				FILE *f = fopen(wb->recovery_path, "rb");
				char buf[1 << 16];
				size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
				struct tm_manifest m;
				struct tm_error err;
				if (f)
					fclose(f);
				tm_error_clear(&err);
				if (tm_manifest_parse(buf, n, &m, &err) == TM_OK) {
					edit_commit(wb, &m, "Restored the recovered edits");
				} else {
					tm_manifest_fini(&m);
					wb_set_msg(wb, ROLE_ERROR, "recovery: %s", err.msg);
				}
			}
			if (wb->recovery_path)
				remove(wb->recovery_path);
		} else {
			wb_set_msg(wb, ROLE_DIM, "Cancelled");
		}
		break;
	}
	case PROMPT_NONE:
		break;
	}
}

/* ---- requests ---- */

void
edit_request(struct wb *wb, enum wb_request req)
{
	const char *path = sel_path(wb);
	size_t n = wb_n_rows(wb);
	const struct tm_manifest_file *f = cur_file(wb, path);

	switch (req) {
	case REQ_NONE:
		break;
	case REQ_DOWN:
		if (wb->focus_manifest)
			wb->man_scroll++;
		else if (wb->sel + 1 < n)
			wb->sel++;
		break;
	case REQ_UP:
		if (wb->focus_manifest) {
			if (wb->man_scroll > 0)
				wb->man_scroll--;
		} else if (wb->sel > 0) {
			wb->sel--;
		}
		break;
	case REQ_FIRST:
		wb->sel = 0;
		wb->man_scroll = 0;
		break;
	case REQ_LAST:
		if (n)
			wb->sel = n - 1;
		break;
	case REQ_FOCUS:
		wb->focus_manifest = !wb->focus_manifest;
		break;
	case REQ_DETAILS_DOWN:
		/* A page down; past the end, back to the top.  view_draw keeps
		 * det_lines/det_rows for the last frame. */
		if (wb->det_rows > 0 && wb->det_scroll + (size_t)wb->det_rows < (size_t)wb->det_lines)
			wb->det_scroll += (size_t)wb->det_rows;
		else
			wb->det_scroll = 0;
		wb->det_sel = wb->sel;
		break;
	case REQ_DETAILS_UP:
		wb->det_scroll = wb->det_scroll > (size_t)wb->det_rows
					 ? wb->det_scroll - (size_t)wb->det_rows
					 : 0;
		wb->det_sel = wb->sel;
		break;
	case REQ_MACHINE:
		if (path)
			prompt_open(wb, PROMPT_MACHINE, "Machine (Tab completes; Default clears): ",
				    f && f->machine_name ? f->machine_name : "");
		break;
	case REQ_ADD_MACHINE:
		add_machine(wb);
		break;
	case REQ_RENAME_MACHINE:
		if (f && f->machine_name)
			prompt_open(wb, PROMPT_RENAME_MACHINE, "Rename machine: ", f->machine_name);
		else
			wb_set_msg(wb, ROLE_WARNING, "The file is on Default: nothing to rename");
		break;
	case REQ_DELETE_MACHINE:
		if (f && f->machine_name) {
			char *nm = strdup(f->machine_name);
			rename_machine(wb, nm, NULL, "Deleted machine");
			free(nm);
		} else {
			wb_set_msg(wb, ROLE_WARNING, "The file is on Default: nothing to delete");
		}
		break;
	case REQ_MERGE_MACHINE:
		if (f && f->machine_name)
			prompt_open(wb, PROMPT_MERGE_MACHINE, "Merge into machine: ", "");
		else
			wb_set_msg(wb, ROLE_WARNING, "The file is on Default: nothing to merge");
		break;
	case REQ_NAME_IDS:
		if (path)
			prompt_open(wb, PROMPT_NAME_ID, "Name embedded machine id (id=name): ", "");
		break;
	case REQ_AUTO:
		if (path) {
			struct tm_manifest next;
			char msg[300];
			tm_manifest_copy(&next, &wb->man);
			tm_manifest_clear_clocks(&next, path);
			snprintf(msg, sizeof msg, "%s: aligned automatically", path);
			edit_commit(wb, &next, msg);
		}
		break;
	case REQ_OFFSET:
		if (path) {
			char init[64] = "";
			if (f && f->has_clocks)
				snprintf(init, sizeof init, "%lld", (long long)f->clocks.offset_ns);
			prompt_open(wb, PROMPT_OFFSET, "Offset (ns us ms s; + moves later): ", init);
		}
		break;
	case REQ_REF:
		if (path)
			prompt_open(wb, PROMPT_REF, "Reference FILE[:CLOCK][@MACHINE]: ",
				    f && f->has_clocks && f->clocks.sync_file ? f->clocks.sync_file
									       : "");
		break;
	case REQ_CLOCK:
		if (path)
			prompt_open(wb, PROMPT_CLOCK, "Own clock (REALTIME..BOOTTIME, empty = PIN): ",
				    f && f->has_clocks && f->clocks.clock
					    ? tm_clock_name(f->clocks.clock)
					    : "");
		break;
	case REQ_NUDGE_MS_DOWN:
		nudge(wb, -1000000);
		break;
	case REQ_NUDGE_MS_UP:
		nudge(wb, 1000000);
		break;
	case REQ_NUDGE_S_DOWN:
		nudge(wb, -1000000000);
		break;
	case REQ_NUDGE_S_UP:
		nudge(wb, 1000000000);
		break;
	case REQ_NUDGE_US_DOWN:
		nudge(wb, -1000);
		break;
	case REQ_NUDGE_US_UP:
		nudge(wb, 1000);
		break;
	case REQ_TRACE_TIME:
		prompt_open(wb, PROMPT_TRACE_TIME, "Timeline clock CLOCK [FILE [MACHINE]] or auto: ",
			    wb->man.has_trace_time && wb->man.tt_clock
				    ? tm_clock_name(wb->man.tt_clock)
				    : "");
		break;
	case REQ_BASELINE:
		if (path) {
			free(wb->baseline);
			wb->baseline = strdup(path);
			wb_set_msg(wb, ROLE_INFO, "Baseline: %s (new offsets are relative to it)",
				   path);
		}
		break;
	case REQ_ATTR:
		prompt_open(wb, PROMPT_ATTR, "Attribute key=value: ", "");
		break;
	case REQ_UNDO:
		undo_redo(wb, true);
		break;
	case REQ_REDO:
		undo_redo(wb, false);
		break;
	case REQ_COPY:
		out_copy_manifest(wb);
		break;
	case REQ_SAVE_MANIFEST:
		prompt_open(wb, PROMPT_SAVE_MANIFEST, "Save manifest to: ", "perfetto_manifest.json");
		break;
	case REQ_WRITE:
		if (wb->s)
			prompt_open(wb, PROMPT_WRITE, "Write merged TAR to: ", "merged.tar");
		break;
	case REQ_ZOOM_IN:
		if (wb->zoom < 20)
			wb->zoom++;
		break;
	case REQ_ZOOM_OUT:
		if (wb->zoom > 0)
			wb->zoom--;
		break;
	case REQ_CANCEL_SCAN:
		if (wb->worker_running) {
			wb->cancel = true;
			wb_set_msg(wb, ROLE_WARNING, "Cancelling the scan...");
		}
		break;
	case REQ_HELP:
		wb->help = !wb->help;
		wb->help_scroll = 0;
		break;
	case REQ_PROMPT:
		prompt_open(wb, PROMPT_COMMAND, ":", "");
		break;
	case REQ_REDRAW:
		if (!wb->headless)
			clearok(curscr, TRUE);
		break;
	case REQ_QUIT:
		if (edit_is_dirty(wb)) {
			wb->confirm = CONFIRM_QUIT;
			prompt_open(wb, PROMPT_CONFIRM, "Edits are not written. Quit anyway? (y/n) ",
				    "");
		} else {
			wb->quit = true;
		}
		break;
	case REQ_QUIT_NOW:
		wb->quit = true;
		break;
	case REQ__COUNT:
		break;
	}
}

/* ---- :commands ---- */

static enum wb_prompt_kind
arg_prompt(enum wb_request r)
{
	switch (r) {
	case REQ_MACHINE:
		return PROMPT_MACHINE;
	case REQ_NAME_IDS:
		return PROMPT_NAME_ID;
	case REQ_OFFSET:
		return PROMPT_OFFSET;
	case REQ_REF:
		return PROMPT_REF;
	case REQ_CLOCK:
		return PROMPT_CLOCK;
	case REQ_TRACE_TIME:
		return PROMPT_TRACE_TIME;
	case REQ_ATTR:
		return PROMPT_ATTR;
	case REQ_WRITE:
		return PROMPT_WRITE;
	case REQ_SAVE_MANIFEST:
		return PROMPT_SAVE_MANIFEST;
	default:
		return PROMPT_NONE;
	}
}

void
edit_command(struct wb *wb, const char *line)
{
	char name[64];
	const char *args;
	size_t n = strcspn(line, " \t");
	enum wb_request r;

	while (*line == ' ')
		line++;
	n = strcspn(line, " \t");
	if (n == 0)
		return;
	if (n >= sizeof name)
		n = sizeof name - 1;
	memcpy(name, line, n);
	name[n] = 0;
	args = line + n;
	while (*args == ' ' || *args == '\t')
		args++;

	if (strcmp(name, "dump-screen") == 0) {
		bool roles = strncmp(args, "--roles", 7) == 0 && (args[7] == ' ' || !args[7]);
		if (roles)
			args += strspn(args + 7, " ") + 7;
		view_dump_screen(wb, *args ? args : "screen.txt", roles);
	} else if (strcmp(name, "resize") == 0) {
		int rows = 0, cols = 0;
		if (sscanf(args, "%dx%d", &rows, &cols) == 2 && rows > 0 && cols > 0) {
			resizeterm(rows, cols);
			if (wb->prompt != PROMPT_NONE)
				prompt_feed(wb, KEY_RESIZE);
		}
	} else if (strcmp(name, "raise") == 0) {
		/* Tests: deliver SIGTERM/SIGHUP to ourselves (recovery path). */
		raise(strcmp(args, "HUP") == 0 ? SIGHUP : SIGTERM);
	} else if (strcmp(name, "select") == 0) {
		select_spec(wb, args);
	} else if (strcmp(name, "wait") == 0 || strcmp(name, "idle") == 0) {
		/* Script steps already run only at the idle point. */
	} else if (strcmp(name, "rename-machine") == 0 || strcmp(name, "merge-machine") == 0) {
		char a[256], b[256];
		if (sscanf(args, "%255s %255[^\n]", a, b) == 2)
			rename_machine(wb, a, b,
				       name[0] == 'r' ? "Renamed machine" : "Merged machine");
		else
			wb_set_msg(wb, ROLE_ERROR, "usage: %s FROM TO", name);
	} else if (strcmp(name, "delete-machine") == 0 && *args) {
		rename_machine(wb, args, NULL, "Deleted machine");
	} else if (strcmp(name, "print-on-exit") == 0) {
		wb->print_manifest_on_exit = true;
		wb_set_msg(wb, ROLE_INFO, "The manifest will be printed on exit");
	} else if (strcmp(name, "set") == 0 || strcmp(name, "color") == 0 ||
		   strcmp(name, "bind") == 0 || strcmp(name, "source") == 0 ||
		   strcmp(name, "theme") == 0) {
		char err[256];
		if (!theme_config_line(wb, line, err, sizeof err))
			wb_set_msg(wb, ROLE_ERROR, "%s", err);
	} else if (strcmp(name, "quit") == 0 || strcmp(name, "q") == 0) {
		edit_request(wb, REQ_QUIT);
	} else if ((r = keymap_by_name(name)) != REQ_NONE) {
		enum wb_prompt_kind k = arg_prompt(r);
		if (k != PROMPT_NONE && *args)
			edit_prompt_done(wb, k, args);
		else if (k == PROMPT_TRACE_TIME || k == PROMPT_CLOCK || k == PROMPT_MACHINE)
			edit_prompt_done(wb, k, args); /* empty argument: reset */
		else
			edit_request(wb, r);
	} else {
		wb_set_msg(wb, ROLE_ERROR, "Unknown command: %s", name);
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * The actions that edit the manifest: machines, offsets, references and
 * clocks, nudges, estimates, solve, proven fixes, the pair picker, the
 * trace-time claim, attributes, undo and redo.  Handlers of the one action
 * table (wb_actions.c).
 */
#include <curses.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wb.h"
#include "wb_act.h"

/* ---- machines ---- */

void
act_machine(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);
	const struct tm_manifest_file *f = sel_file(wb);

	if (!path)
		return;
	if (!arg)
		ask(wb, REQ_MACHINE, COMPLETE_MACHINES, "Machine (Tab completes; Default clears): ",
		    f && f->machine_name ? f->machine_name : "");
	else
		model_set_machine(&wb->m, path, arg);
}

void
act_add_machine(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);
	char *name = path ? model_add_machine(&wb->m, path) : NULL;

	(void)arg;
	if (name)
		ask(wb, REQ_RENAME_MACHINE, COMPLETE_MACHINES, "Rename machine: ", name);
	free(name);
}

/* Rename (merge) the selected file's machine to the answer, or, from a
 * :command, FROM TO. */
static void
rename_or_merge(struct wb *wb, const char *arg, enum wb_request req)
{
	bool merge = req == REQ_MERGE_MACHINE;
	const char *what = merge ? "Merged machine" : "Renamed machine";
	const struct tm_manifest_file *f = sel_file(wb);
	char *from = f && f->machine_name ? strdup(f->machine_name) : NULL;

	if (wb->ui.answering) {
		if (!from)
			msg(wb, ROLE_WARNING, "The file is on Default: nothing to rename");
		else if (!merge && !arg[strspn(arg, " \t")])
			msg(wb, ROLE_WARNING, "An empty name is treated as Default; not renamed");
		else if (*arg && strcmp(from, arg) != 0)
			model_rename_machine(&wb->m, from, arg, what);
	} else if (arg && *arg) {
		char a[256], b[256];
		if (sscanf(arg, "%255s %255[^\n]", a, b) == 2)
			model_rename_machine(&wb->m, a, b, what);
		else
			model_set_msg(&wb->m, ROLE_ERROR, "usage: %s FROM TO",
				      keymap_info(req)->name);
	} else if (!from) {
		model_set_msg(&wb->m, ROLE_WARNING, "The file is on Default: nothing to %s",
			      merge ? "merge" : "rename");
	} else if (merge) {
		ask(wb, req, COMPLETE_MACHINES, "Merge into machine: ", "");
	} else {
		ask(wb, req, COMPLETE_MACHINES, "Rename machine: ", from);
	}
	free(from);
}

void
act_rename_machine(struct wb *wb, const char *arg)
{
	rename_or_merge(wb, arg, REQ_RENAME_MACHINE);
}

void
act_merge_machine(struct wb *wb, const char *arg)
{
	rename_or_merge(wb, arg, REQ_MERGE_MACHINE);
}

void
act_delete_machine(struct wb *wb, const char *arg)
{
	const struct tm_manifest_file *f = sel_file(wb);

	if (arg && *arg) {
		model_rename_machine(&wb->m, arg, NULL, "Deleted machine");
	} else if (f && f->machine_name) {
		char *nm = strdup(f->machine_name);
		model_rename_machine(&wb->m, nm, NULL, "Deleted machine");
		free(nm);
	} else {
		msg(wb, ROLE_WARNING, "The file is on Default: nothing to delete");
	}
}

void
act_name_id(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);

	if (!path)
		return;
	if (wants_prompt(wb, arg))
		ask(wb, REQ_NAME_IDS, COMPLETE_WORDS, "Name embedded machine id (id=name): ", "");
	else
		model_name_id(&wb->m, path, arg);
}

/* ---- alignment ---- */

void
act_auto(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);

	(void)arg;
	if (path)
		model_align_auto(&wb->m, path);
}

void
act_offset(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);
	const struct tm_manifest_file *f = sel_file(wb);
	struct tm_error err;
	int64_t off;

	if (!path)
		return;
	if (wants_prompt(wb, arg)) {
		/* the prompt says what the offset is relative to: the entry's
		 * reference, or (placed automatically) where the file is now */
		struct tm_buf init, q;
		tm_buf_init(&init);
		tm_buf_init(&q);
		if (f && f->has_clocks) {
			tm_offset_format_ns(f->clocks.offset_ns, &init);
			tm_buf_addf(&q, "Offset vs %s (ns us ms s; + moves later): ",
				    f->clocks.sync_file ? f->clocks.sync_file : "its reference");
		} else if (!model_owns_timeline(&wb->m, path)) {
			tm_buf_addf(&q, "Move %s from where it is now (ns us ms s; + later): ", path);
		} else {
			tm_buf_adds(&q, "Offset (ns us ms s; + moves later): ");
		}
		ask(wb, REQ_OFFSET, COMPLETE_WORDS, q.data, init.data ? init.data : "");
		tm_buf_fini(&init);
		tm_buf_fini(&q);
		return;
	}
	tm_error_clear(&err);
	if (tm_parse_duration_ns(arg, &off, &err) != TM_OK) {
		model_set_msg(&wb->m, ROLE_ERROR,
			      "Enter an offset for %s such as 12ms or -1.5s (%s)", path,
			      err.msg);
		return;
	}
	model_set_offset(&wb->m, path, off, "Offset");
}

void
act_ref(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);
	const struct tm_manifest_file *f = sel_file(wb);

	if (!path)
		return;
	if (wants_prompt(wb, arg))
		ask(wb, REQ_REF, COMPLETE_REF, "Reference FILE[:CLOCK][@MACHINE]: ",
		    f && f->has_clocks && f->clocks.sync_file ? f->clocks.sync_file : "");
	else if (*arg)
		model_set_ref(&wb->m, path, arg);
}

void
act_clock(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);
	const struct tm_manifest_file *f = sel_file(wb);

	if (!path)
		return;
	if (!arg)
		ask(wb, REQ_CLOCK, COMPLETE_REF, "Own clock (REALTIME..BOOTTIME, empty = PIN): ",
		    f && f->has_clocks && f->clocks.clock ? tm_clock_name(f->clocks.clock) : "");
	else
		model_set_own_clock(&wb->m, path, arg);
}

static void
nudge(struct wb *wb, int64_t delta)
{
	const char *path = sel_trace(wb);

	if (path)
		model_nudge(&wb->m, path, delta);
}

void
act_nudge_ms_down(struct wb *wb, const char *arg)
{
	(void)arg;
	nudge(wb, -1000000);
}

void
act_nudge_ms_up(struct wb *wb, const char *arg)
{
	(void)arg;
	nudge(wb, 1000000);
}

void
act_nudge_s_down(struct wb *wb, const char *arg)
{
	(void)arg;
	nudge(wb, -1000000000);
}

void
act_nudge_s_up(struct wb *wb, const char *arg)
{
	(void)arg;
	nudge(wb, 1000000000);
}

void
act_nudge_us_down(struct wb *wb, const char *arg)
{
	(void)arg;
	nudge(wb, -1000);
}

void
act_nudge_us_up(struct wb *wb, const char *arg)
{
	(void)arg;
	nudge(wb, 1000);
}

/* ---- offsets from events, solve, fixes ---- */

void
act_estimate(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);

	(void)arg;
	if (path)
		model_estimate(&wb->m, path);
}

void
act_estimate_all(struct wb *wb, const char *arg)
{
	(void)arg;
	if (!wb->m.man_broken)
		model_estimate(&wb->m, NULL);
	else
		sel_trace(wb); /* says why not */
}

void
act_fix(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);
	unsigned long k = 1;

	if (!path)
		return;
	if (arg && *arg) {
		char *e;
		k = strtoul(arg, &e, 10);
		if (*e || k == 0) {
			model_set_msg(&wb->m, ROLE_ERROR, "fix: expected a number (1 = the first fix)");
			return;
		}
	}
	model_apply_fix(&wb->m, path, k - 1);
}

void
act_own_machine(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);

	(void)arg;
	if (path)
		model_own_machine(&wb->m, path);
}

void
act_solve(struct wb *wb, const char *arg)
{
	(void)arg;
	if (wb->m.man_broken) {
		sel_trace(wb);
		return;
	}
	if (!model_solve(&wb->m))
		return;
	if (wb->m.solution.n_steps == 0) {
		model_set_msg(&wb->m, wb->m.solution.ok ? ROLE_OK : ROLE_WARNING,
			      "Solve: no edit to propose. %s%s%s", wb->m.solution.verdict,
			      wb->m.solution.unplaced ? " " : "",
			      wb->m.solution.unplaced ? wb->m.solution.unplaced : "");
		model_solve_answer(&wb->m, false);
		return;
	}
	wb->ui.help = true;
	wb->ui.messages = false;
	wb->ui.solve_view = true;
	wb->ui.pane[PANE_HELP].top = 0;
	char q[160];
	snprintf(q, sizeof q, "Apply this configuration as one edit (%s undoes)? (y/n) ",
		 model_key(&wb->m, REQ_UNDO));
	confirm(wb, CONFIRM_SOLVE, q);
}

/* ---- the pair picker ---- */

void
picker_close(struct wb *wb)
{
	struct wb_picker *pk = &wb->ui.picker;

	tm_align_events_fini(&pk->ev);
	free(pk->file);
	free(pk->ref);
	free(pk->a_name);
	free(pk->b_name);
	free(pk->shown);
	memset(pk, 0, sizeof *pk);
	wb->ui.help = false;
}

/* Does hay contain needle, ignoring ASCII case? */
static bool
contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return true;
	return n == 0;
}

const uint32_t *
picker_shown(struct wb_picker *pk, size_t *n)
{
	if (!pk->shown_ok || strcmp(pk->shown_for, pk->filter)) {
		if (pk->cap_shown < pk->ev.n + 1) {
			free(pk->shown);
			pk->cap_shown = pk->ev.n + 1;
			pk->shown = malloc(pk->cap_shown * sizeof *pk->shown);
			if (!pk->shown)
				abort();
		}
		pk->n_shown = 0;
		for (size_t i = 0; i < pk->ev.n; i++)
			if (contains_nocase(pk->ev.v[i].name, pk->filter))
				pk->shown[pk->n_shown++] = (uint32_t)i;
		snprintf(pk->shown_for, sizeof pk->shown_for, "%s", pk->filter);
		pk->shown_ok = true;
		pk->n_filtered++;
	}
	*n = pk->n_shown;
	return pk->shown;
}

static size_t
picker_n_shown(struct wb_picker *pk)
{
	size_t n;
	picker_shown(pk, &n);
	return n;
}

/* The event index of the sel-th shown one, or SIZE_MAX. */
static size_t
picker_event(struct wb_picker *pk)
{
	size_t n;
	const uint32_t *sh = picker_shown(pk, &n);
	return pk->sel < n ? sh[pk->sel] : SIZE_MAX;
}

/* Load the events of the step's file (the reference for step 1). */
static bool
picker_load(struct wb *wb)
{
	struct wb_picker *pk = &wb->ui.picker;
	struct tm_error err;

	tm_align_events_fini(&pk->ev);
	pk->filter[0] = 0;
	pk->sel = 0;
	pk->shown_ok = false; /* other events */
	tm_error_clear(&err);
	if (tm_align_events(wb->m.s, pk->step ? pk->ref : pk->file, &pk->ev, &err) != TM_OK) {
		model_set_msg(&wb->m, ROLE_ERROR, "Pair: %s", err.msg);
		return false;
	}
	return true;
}

/* The next trace file after cur (not file itself), wrapping; NULL if none. */
static const char *
next_ref(struct wb *wb, const char *file, const char *cur)
{
	size_t n = model_n_rows(&wb->m), start = cur ? model_row_of(&wb->m, cur) : SIZE_MAX;

	for (size_t k = 1; k <= n; k++) {
		size_t row = start == SIZE_MAX ? k - 1 : (start + k) % n;
		const char *name = model_row_name(&wb->m, row);
		const struct tm_member *mb = tm_session_member(wb->m.s, model_row_member(&wb->m, row));
		if (name && strcmp(name, file) && text_member_is_trace(mb))
			return name;
	}
	return NULL;
}

static void
picker_pick(struct wb *wb)
{
	struct wb_picker *pk = &wb->ui.picker;
	size_t i = picker_event(pk);

	if (i == SIZE_MAX) {
		model_set_msg(&wb->m, ROLE_WARNING, "Pair: no event matches '%s'", pk->filter);
		return;
	}
	if (pk->step == 0) {
		pk->a_name = strdup(pk->ev.v[i].name);
		pk->a_occ = pk->ev.v[i].occ;
		pk->step = 1;
		picker_load(wb);
		/* the same name in the reference, when it has it, is the likely pick */
		for (size_t j = 0; j < pk->ev.n; j++)
			if (!strcmp(pk->ev.v[j].name, pk->a_name) &&
			    strlen(pk->a_name) < sizeof pk->filter) {
				snprintf(pk->filter, sizeof pk->filter, "%s", pk->a_name);
				break;
			}
		return;
	}
	pk->b_name = strdup(pk->ev.v[i].name);
	pk->b_occ = pk->ev.v[i].occ;
	pk->chosen = true;
	ask(wb, REQ_PAIR, COMPLETE_WORDS,
	    "Same moment: Enter.  Or B = A + d, d = (e.g. 3ms, -250us): ", "");
}

void
picker_key(struct wb *wb, int key)
{
	struct wb_picker *pk = &wb->ui.picker;
	size_t n = picker_n_shown(pk), len = strlen(pk->filter);
	size_t page = pane_rows(&wb->ui.pane[PANE_HELP]) > 4 ? pane_rows(&wb->ui.pane[PANE_HELP]) - 3 : 1;

	if (key == 27 || key == WB_KEY_CTRL('c')) {
		picker_close(wb);
		msg(wb, ROLE_DIM, "Pair: cancelled");
	} else if (key == '\r' || key == '\n' || key == KEY_ENTER) {
		picker_pick(wb);
	} else if (key == KEY_DOWN || key == WB_KEY_CTRL('n')) {
		pk->sel = pk->sel + 1 < n ? pk->sel + 1 : pk->sel;
	} else if (key == KEY_UP || key == WB_KEY_CTRL('p')) {
		pk->sel = pk->sel ? pk->sel - 1 : 0;
	} else if (key == KEY_NPAGE) {
		pk->sel = pk->sel + page < n ? pk->sel + page : (n ? n - 1 : 0);
	} else if (key == KEY_PPAGE) {
		pk->sel = pk->sel > page ? pk->sel - page : 0;
	} else if (key == '\t' && pk->step == 1) {
		const char *r = next_ref(wb, pk->file, pk->ref);
		if (r && strcmp(r, pk->ref)) {
			free(pk->ref);
			pk->ref = strdup(r);
			picker_load(wb);
		}
	} else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
		if (len)
			pk->filter[len - 1] = 0;
		pk->sel = 0;
	} else if (key == WB_KEY_CTRL('u')) {
		pk->filter[0] = 0;
		pk->sel = 0;
	} else if (key >= 32 && key < 256 && key != 127 && len + 1 < sizeof pk->filter) {
		pk->filter[len] = (char)key;
		pk->filter[len + 1] = 0;
		pk->sel = 0;
	}
}

void
act_pair(struct wb *wb, const char *arg)
{
	struct wb_picker *pk = &wb->ui.picker;
	struct tm_align_pair p;
	struct tm_error err;

	if (wb->ui.answering && pk->chosen) {
		/* the picker's answer: d, empty for the same moment */
		int64_t d = 0;
		tm_error_clear(&err);
		if (*arg && tm_parse_duration_ns(arg, &d, &err) != TM_OK) {
			model_set_msg(&wb->m, ROLE_ERROR, "Pair: d: %s", err.msg);
			picker_close(wb);
			return;
		}
		memset(&p, 0, sizeof p);
		p.file = pk->file;
		p.name = pk->a_name;
		p.occ = pk->a_occ;
		p.ref = pk->ref;
		p.ref_name = pk->b_name;
		p.ref_occ = pk->b_occ;
		p.delta_ns = d;
		model_pair(&wb->m, &p);
		picker_close(wb);
		return;
	}
	if (arg && *arg) {
		/* :pair FILE:NAME[#N]=REF:NAME[#N][+D], the batch --pair grammar */
		tm_error_clear(&err);
		if (tm_align_pair_parse(arg, &p, &err) != TM_OK) {
			model_set_msg(&wb->m, ROLE_ERROR, "pair: %s", err.msg);
			return;
		}
		if (wb->m.man_broken)
			sel_trace(wb);
		else
			model_pair(&wb->m, &p);
		tm_align_pair_fini(&p);
		return;
	}
	const char *path = sel_trace(wb);
	if (!path)
		return;
	const char *ref = NULL;
	if (wb->m.rep && wb->m.rep->tt_file >= 0 && (size_t)wb->m.rep->tt_file < wb->m.rep->n_files)
		ref = model_member_name(&wb->m, wb->m.rep->files[wb->m.rep->tt_file].member);
	if (!ref || !strcmp(ref, path))
		ref = next_ref(wb, path, NULL);
	if (!ref) {
		msg(wb, ROLE_WARNING, "Pair: no other trace file to pair with");
		return;
	}
	picker_close(wb);
	pk->file = strdup(path);
	pk->ref = strdup(ref);
	if (!picker_load(wb)) {
		picker_close(wb);
		return;
	}
	pk->on = true;
	wb->ui.help = true;
	wb->ui.messages = false;
	wb->ui.solve_view = false;
}

void
act_trace_time(struct wb *wb, const char *arg)
{
	const struct tm_manifest *man = &wb->m.man;

	if (!arg)
		ask(wb, REQ_TRACE_TIME, COMPLETE_WORDS,
		    "Timeline clock CLOCK [FILE [MACHINE]] or auto: ",
		    man->has_trace_time && man->tt_clock ? tm_clock_name(man->tt_clock) : "");
	else
		model_set_trace_time(&wb->m, arg);
}

void
act_baseline(struct wb *wb, const char *arg)
{
	const char *path = sel_trace(wb);

	(void)arg;
	if (!path)
		return;
	free(wb->m.baseline);
	wb->m.baseline = strdup(path);
	model_set_msg(&wb->m, ROLE_INFO, "Baseline: %s (new offsets are relative to it)", path);
}

void
act_attr(struct wb *wb, const char *arg)
{
	if (wants_prompt(wb, arg))
		ask(wb, REQ_ATTR, COMPLETE_WORDS, "Attribute key=value: ", "");
	else
		model_set_attr(&wb->m, arg);
}

void
act_undo(struct wb *wb, const char *arg)
{
	(void)arg;
	model_undo(&wb->m, true);
}

void
act_redo(struct wb *wb, const char *arg)
{
	(void)arg;
	model_undo(&wb->m, false);
}


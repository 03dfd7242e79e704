/* SPDX-License-Identifier: MIT */
/*
 * The actions that move about and look: moving the selection and scrolling
 * the focused pane, search and filter, zoom and pan of the timeline, and the
 * screen itself (help, messages, prompt, mouse, redraw, quit).  Handlers of
 * the one action table (wb_actions.c).
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

/* ---- moving ---- */

/* The pane with the focus: the file list, the details or the manifest. */
static enum wb_pane_id
focused(const struct wb *wb)
{
	return wb->ui.focus_manifest ? PANE_MANIFEST
	       : wb->ui.focus_details ? PANE_DETAILS
				      : PANE_LIST;
}

void
set_focus(struct wb *wb, enum wb_pane_id id)
{
	wb->ui.focus_manifest = id == PANE_MANIFEST;
	wb->ui.focus_details = id == PANE_DETAILS;
}

/* Move by delta rows in the focused pane: the list's selection, or the
 * details' or manifest's scroll (the details belong to the selected row). */
static void
move_focused(struct wb *wb, long delta)
{
	enum wb_pane_id id = focused(wb);

	if (id == PANE_LIST) {
		pane_move(list_pane(wb), delta);
		return;
	}
	if (id == PANE_DETAILS)
		wb->ui.det_row = sel_row(wb);
	pane_scroll(&wb->ui.pane[id], delta);
}

/* A page: the list's rows; in text, a line less (one line of context). */
static long
page_rows(const struct wb *wb)
{
	size_t rows = pane_rows(&wb->ui.pane[focused(wb)]);

	if (focused(wb) != PANE_LIST && rows > 1)
		rows--;
	return rows > 0 ? (long)rows : 1;
}

void
act_down(struct wb *wb, const char *arg)
{
	(void)arg;
	move_focused(wb, 1);
}

void
act_up(struct wb *wb, const char *arg)
{
	(void)arg;
	move_focused(wb, -1);
}

void
act_page_down(struct wb *wb, const char *arg)
{
	(void)arg;
	move_focused(wb, page_rows(wb));
}

void
act_page_up(struct wb *wb, const char *arg)
{
	(void)arg;
	move_focused(wb, -page_rows(wb));
}

void
act_first(struct wb *wb, const char *arg)
{
	(void)arg;
	if (focused(wb) == PANE_LIST) {
		list_pane(wb)->sel = 0;
		wb->ui.pane[PANE_MANIFEST].top = 0;
	} else {
		move_focused(wb, -(long)(SIZE_MAX / 4));
	}
}

void
act_last(struct wb *wb, const char *arg)
{
	struct pane *p = list_pane(wb);

	(void)arg;
	if (focused(wb) != PANE_LIST)
		move_focused(wb, (long)(SIZE_MAX / 4));
	else if (p->n)
		p->sel = p->n - 1;
}

void
act_enter(struct wb *wb, const char *arg)
{
	(void)arg;
	if (focused(wb) != PANE_LIST) {
		set_focus(wb, PANE_LIST);
	} else if (sel_path(wb)) {
		set_focus(wb, PANE_DETAILS);
		wb->ui.det_row = sel_row(wb);
	}
}

/* Tab: the files and the manifest (from the details, the manifest); Enter
 * goes between the files and the details. */
void
act_focus(struct wb *wb, const char *arg)
{
	(void)arg;
	set_focus(wb, focused(wb) == PANE_MANIFEST ? PANE_LIST : PANE_MANIFEST);
}

void
act_details_down(struct wb *wb, const char *arg)
{
	struct pane *p = &wb->ui.pane[PANE_DETAILS];
	size_t rows = pane_rows(p);

	(void)arg;
	/* A page down; past the end, back to the top. */
	if (rows > 0 && p->top + rows < p->n)
		p->top += rows;
	else
		p->top = 0;
	wb->ui.det_row = sel_row(wb);
}

void
act_details_up(struct wb *wb, const char *arg)
{
	struct pane *p = &wb->ui.pane[PANE_DETAILS];
	size_t rows = pane_rows(p);

	(void)arg;
	p->top = p->top > rows ? p->top - rows : 0;
	wb->ui.det_row = sel_row(wb);
}

/* ---- search and filter ---- */

struct lines {
	char **v;
	size_t n, cap;
};

static void
lines_add(struct lines *l, const char *s, size_t len)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = realloc(l->v, l->cap * sizeof *l->v);
		if (!l->v)
			abort();
	}
	if (!(l->v[l->n++] = strndup(s, len)))
		abort();
}

static void
lines_fini(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* The focused pane's lines as it shows them: the list's file names, the
 * selected file's details wrapped at the pane's width, or the manifest. */
static void
pane_lines(struct wb *wb, enum wb_pane_id id, struct lines *out)
{
	memset(out, 0, sizeof *out);
	if (id == PANE_LIST) {
		struct pane *p = list_pane(wb);
		for (size_t i = 0; i < p->n; i++) {
			const char *name = model_row_name(&wb->m, list_row(&wb->ui, i));
			lines_add(out, name ? name : "", name ? strlen(name) : 0);
		}
	} else if (id == PANE_DETAILS) {
		struct wb_paras ps;
		size_t row = sel_row(wb);
		memset(&ps, 0, sizeof ps);
		if (row == SIZE_MAX)
			return;
		model_fixes_ensure(&wb->m, model_row_name(&wb->m, row));
		text_details(&wb->m, row, &ps, wb->fr.details_name);
		text_wrap(&ps, layout_left_cols(COLS));
		for (size_t i = 0; i < ps.n; i++)
			for (size_t k = 0; k < ps.p[i].n_lines; k++)
				lines_add(out, ps.p[i].text + ps.p[i].start[k], ps.p[i].len[k]);
		text_paras_fini(&ps);
	} else {
		struct tm_buf b;
		tm_buf_init(&b);
		model_manifest_json(&wb->m, &b);
		for (size_t i = 0, e; b.data && i < b.len; i = e + 1) {
			const char *nl = memchr(b.data + i, '\n', b.len - i);
			e = nl ? (size_t)(nl - b.data) : b.len;
			lines_add(out, b.data + i, e - i);
		}
		tm_buf_fini(&b);
	}
}

/* Go to the next (dir 1) or previous (-1) line of the focused pane that
 * holds the search, from the current one (fresh: the current one counts),
 * wrapping around; the message says which match of how many. */
static void
search_run(struct wb *wb, int dir, bool fresh)
{
	static const char *const where[PANE__COUNT] = {
		[PANE_LIST] = "file names", [PANE_DETAILS] = "details", [PANE_MANIFEST] = "manifest"};
	enum wb_pane_id id = focused(wb);
	struct pane *p = id == PANE_LIST ? list_pane(wb) : &wb->ui.pane[id];
	const char *pat = wb->ui.search;
	size_t cur = id == PANE_LIST ? p->sel : p->top, hit = SIZE_MAX, n_match = 0, ord = 0;
	struct lines l;

	wb->ui.search_pane = id;
	pane_lines(wb, id, &l);
	for (size_t i = 0; i < l.n; i++)
		n_match += pane_find(l.v[i], strlen(l.v[i]), pat) != NULL;
	for (size_t k = fresh ? 0 : 1; n_match && k <= l.n; k++) {
		size_t i = (cur + (dir > 0 ? k : l.n * 2 - k)) % l.n;
		if (pane_find(l.v[i], strlen(l.v[i]), pat)) {
			hit = i;
			break;
		}
	}
	if (hit == SIZE_MAX) {
		model_set_msg(&wb->m, ROLE_WARNING, "Not found in the %s: %s", where[id], pat);
		lines_fini(&l);
		return;
	}
	for (size_t i = 0; i <= hit; i++)
		ord += pane_find(l.v[i], strlen(l.v[i]), pat) != NULL;
	if (id == PANE_LIST) {
		p->sel = hit;
	} else {
		p->top = hit;
		if (id == PANE_DETAILS)
			wb->ui.det_row = sel_row(wb);
	}
	model_set_msg(&wb->m, ROLE_INFO, "/%s: match %zu of %zu in the %s%s", pat, ord, n_match,
		      where[id],
		      (dir > 0 ? hit < cur : hit > cur) ? (dir > 0 ? " (wrapped to the top)"
								 : " (wrapped to the end)")
							: "");
	lines_fini(&l);
}

void
act_search(struct wb *wb, const char *arg)
{
	static const char *const label[PANE__COUNT] = {[PANE_LIST] = "Search file names: ",
						       [PANE_DETAILS] = "Search the details: ",
						       [PANE_MANIFEST] = "Search the manifest: "};

	if (wants_prompt(wb, arg)) {
		ask(wb, REQ_SEARCH, COMPLETE_WORDS, label[focused(wb)], "");
		return;
	}
	if (*arg) {
		free(wb->ui.search);
		wb->ui.search = strdup(arg);
	} else if (!wb->ui.search) {
		return; /* nothing typed, nothing to repeat */
	}
	search_run(wb, 1, true);
}

static void
search_again(struct wb *wb, int dir)
{
	char k[32];

	if (wb->ui.search) {
		search_run(wb, dir, false);
		return;
	}
	keymap_key_name(keymap_key_of(REQ_SEARCH), k, sizeof k);
	model_set_msg(&wb->m, ROLE_WARNING, "No search yet: %s searches the focused pane", k);
}

void
act_search_next(struct wb *wb, const char *arg)
{
	(void)arg;
	search_again(wb, 1);
}

void
act_search_prev(struct wb *wb, const char *arg)
{
	(void)arg;
	search_again(wb, -1);
}

void
act_filter(struct wb *wb, const char *arg)
{
	size_t all = model_n_rows(&wb->m);
	struct pane *p;
	char k[32];

	if (wants_prompt(wb, arg)) {
		ask(wb, REQ_FILTER, COMPLETE_WORDS, "Show files whose name contains (empty: all): ",
		    wb->ui.filter ? wb->ui.filter : "");
		return;
	}
	set_filter(wb, arg);
	p = list_pane(wb);
	keymap_key_name(keymap_key_of(REQ_FILTER), k, sizeof k);
	if (!wb->ui.filter)
		model_set_msg(&wb->m, ROLE_INFO, "No filter: all %zu files", all);
	else if (p->n == 0)
		model_set_msg(&wb->m, ROLE_WARNING,
			      "No file name contains \"%s\": %s changes the filter", arg,
			      k[0] ? k : ":filter");
	else
		model_set_msg(&wb->m, ROLE_INFO, "Filter \"%s\": %zu of %zu files", arg, p->n,
			      all);
}

/* N (1-based), a member name, its base name, or its base name without the
 * extension; several matches are named, none is said. */
void
act_select(struct wb *wb, const char *arg)
{
	size_t n_rows = model_n_rows(&wb->m);
	char *end;
	unsigned long n;
	size_t hit = SIZE_MAX, n_hits = 0;
	const char *unfiltered = " (the filter is cleared)";

	if (wants_prompt(wb, arg)) {
		ask(wb, REQ_SELECT, COMPLETE_WORDS, "Select (number or name): ", "");
		return;
	}
	n = strtoul(arg, &end, 10);
	if (*arg && !*end) {
		if (n >= 1 && n <= n_rows) {
			bool cleared = select_row(wb, n - 1);
			model_set_msg(&wb->m, ROLE_INFO, "Selected %lu: %s%s", n, sel_path(wb),
				      cleared ? unfiltered : "");
		} else {
			model_set_msg(&wb->m, ROLE_ERROR, "No file %s: the list has %zu", arg,
				      n_rows);
		}
		return;
	}
	for (int pass = 0; pass < 3 && n_hits == 0; pass++) {
		for (size_t r = 0; r < n_rows; r++) {
			const char *name = model_row_name(&wb->m, r), *base = tm_path_base(name);
			const char *dot = strrchr(base, '.');
			bool match = pass == 0   ? strcmp(name, arg) == 0
				     : pass == 1 ? strcmp(base, arg) == 0
						 : dot && (size_t)(dot - base) == strlen(arg) &&
							   strncmp(base, arg, strlen(arg)) == 0;
			if (match) {
				if (n_hits++ == 0)
					hit = r;
			}
		}
	}
	if (n_hits == 0) {
		model_set_msg(&wb->m, ROLE_ERROR, "No file named %s", arg);
	} else {
		bool cleared = select_row(wb, hit);
		if (n_hits > 1)
			model_set_msg(&wb->m, ROLE_WARNING,
				      "Selected %s, the first of %zu files that match %s%s",
				      sel_path(wb), n_hits, arg, cleared ? unfiltered : "");
		else
			model_set_msg(&wb->m, ROLE_INFO, "Selected %zu: %s%s", hit + 1,
				      sel_path(wb), cleared ? unfiltered : "");
	}
}

/* ---- view ---- */

/* Zooming keeps the selected file in view: the window is centred on it
 * (the layout clamps the window to the range). */
static void
anchor_at_selection(struct wb *wb)
{
	size_t row = list_sel_row(&wb->ui);
	const struct tm_report_file *rf = row == SIZE_MAX ? NULL : model_row_file(&wb->m, row);
	const struct wb_tl_view *v = &wb->fr.tl;
	if (!rf || !rf->has_ts || !(v->full > 0))
		return;
	double mid = ((double)rf->first_ts + (double)rf->last_ts) / 2.0;
	wb->ui.tl_center = (mid - v->lo) / v->full;
}

void
act_zoom_in(struct wb *wb, const char *arg)
{
	(void)arg;
	anchor_at_selection(wb);
	if (wb->ui.zoom < 40)
		wb->ui.zoom++;
}

void
act_zoom_out(struct wb *wb, const char *arg)
{
	(void)arg;
	anchor_at_selection(wb);
	if (wb->ui.zoom > 0)
		wb->ui.zoom--;
}

/* A quarter of the window per step; at 1x there is nowhere to go. */
static void
pan(struct wb *wb, double dir)
{
	const struct wb_tl_view *v = &wb->fr.tl;
	if (wb->ui.zoom == 0 || !(v->full > 0)) {
		model_set_msg(&wb->m, ROLE_INFO, "The whole timeline is in view: zoom in (+) to pan");
		return;
	}
	wb->ui.tl_center = v->center + dir * v->span / v->full / 4.0;
}

/* In the manifest (focused): sideways, half its width a step (the frame
 * clamps it to the longest line). */
static bool
manifest_sideways(struct wb *wb, int dir)
{
	struct pane *p = &wb->ui.pane[PANE_MANIFEST];
	size_t step = p->w > 8 ? (size_t)p->w / 2 : 4;

	if (!wb->ui.focus_manifest)
		return false;
	if (dir < 0)
		p->left = p->left > step ? p->left - step : 0;
	else
		p->left += step;
	return true;
}

void
act_pan_left(struct wb *wb, const char *arg)
{
	(void)arg;
	if (!manifest_sideways(wb, -1))
		pan(wb, -1.0);
}

void
act_pan_right(struct wb *wb, const char *arg)
{
	(void)arg;
	if (!manifest_sideways(wb, 1))
		pan(wb, 1.0);
}

void
act_cancel_scan(struct wb *wb, const char *arg)
{
	(void)arg;
	model_scan_cancel(&wb->m);
}

void
act_help(struct wb *wb, const char *arg)
{
	(void)arg;
	wb->ui.help = !wb->ui.help || wb->ui.messages;
	wb->ui.messages = false;
	wb->ui.pane[PANE_HELP].top = 0;
}

void
act_messages(struct wb *wb, const char *arg)
{
	(void)arg;
	wb->ui.help = !(wb->ui.help && wb->ui.messages);
	wb->ui.messages = wb->ui.help;
	/* The newest at the bottom: start at the end. */
	wb->ui.pane[PANE_HELP].top = SIZE_MAX / 2;
}

void
act_prompt(struct wb *wb, const char *arg)
{
	if (wb->ui.answering)
		actions_command(wb, arg);
	else
		ask(wb, REQ_PROMPT, COMPLETE_COMMANDS, ":", "");
}

void
act_mouse(struct wb *wb, const char *arg)
{
	char k[32];

	(void)arg;
	wb->ui.mouse = !wb->ui.mouse;
	keymap_key_name(keymap_key_of(REQ_MOUSE), k, sizeof k);
	if (wb->ui.mouse)
		model_set_msg(&wb->m, ROLE_INFO,
			      "Mouse on: a click selects, the wheel scrolls; %s: off, to select text",
			      k);
	else
		model_set_msg(&wb->m, ROLE_INFO, "Mouse off: the terminal selects text; %s: mouse on",
			      k);
}

void
act_redraw(struct wb *wb, const char *arg)
{
	(void)arg;
	wb->ui.redraw_all = true;
}

void
act_quit(struct wb *wb, const char *arg)
{
	(void)arg;
	if (model_is_dirty(&wb->m))
		confirm(wb, CONFIRM_QUIT, "Edits are not written. Quit anyway? (y/n) ");
	else
		wb->run.quit = true;
}

void
act_quit_now(struct wb *wb, const char *arg)
{
	(void)arg;
	wb->run.quit = true;
}

/* set, color, bind, source, theme: the config syntax, typed. */
void
act_config(struct wb *wb, const char *arg)
{
	(void)arg;
	(void)wb; /* actions_command passes the whole line to the config parser */
}


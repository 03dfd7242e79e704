/* SPDX-License-Identifier: MIT */
/*
 * Preparing a frame, before view_draw draws it: the paragraphs built and
 * wrapped at the widths the layout gives, the layout computed from what each
 * pane needs, the panes' geometry set and their selection and scroll
 * clamped, the labels and the key hints chosen (the keys needed next, from
 * the action table), the help lines generated from the table, the prompt
 * line copied.  Everything the view reads comes from here or the model.
 */
#include <curses.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wb.h"

/* ---- key hints: the keys needed next ---- */

struct hint {
	enum wb_request req;
	const char *label;
};

/* Shorter labels when "d more" takes room on the line. */
static const char *
hint_short(const struct hint *h)
{
	switch (h->req) {
	case REQ_DOWN:
		return "next";
	case REQ_COPY:
		return "copy";
	case REQ_CLOCK:
		return "clock";
	default:
		return h->label;
	}
}

static void
hint_add(struct tm_buf *b, int max_cols, const struct hint *h, bool *full, bool compact)
{
	const char *label = compact ? hint_short(h) : h->label;
	int key = keymap_key_of(h->req);
	char k[32];
	size_t before = b->len;

	if (*full || !key)
		return;
	keymap_key_name(key, k, sizeof k);
	tm_buf_addf(b, "%s%s %s", b->len ? "  " : "", k, label ? label : keymap_info(h->req)->name);
	if ((int)b->len > max_cols) {
		b->len = before;
		b->data[before] = 0;
		*full = true;
	}
}

static void
choose_hints(struct wb *wb, bool det_more, char *out, size_t len)
{
	static const struct hint drop_sel[] = {
		{REQ_FIX, "fix"},     {REQ_ESTIMATE, "estimate"}, {REQ_SOLVE, "solve"},
		{REQ_PAIR, "pair"},   {REQ_OFFSET, "offset"},     {REQ_UNDO, "undo"},
	};
	static const struct hint drop_other[] = {
		{REQ_DOWN, "next file"}, {REQ_UP, "prev"},   {REQ_SOLVE, "solve"},
		{REQ_ESTIMATE_ALL, "estimate all"}, {REQ_UNDO, "undo"}, {REQ_OFFSET, "offset"},
	};
	static const struct hint ok[] = {
		{REQ_COPY, "copy manifest"}, {REQ_WRITE, "write TAR"}, {REQ_SAVE_MANIFEST, "save"},
		{REQ_FOCUS, "manifest"},     {REQ_MACHINE, "machine"}, {REQ_OFFSET, "offset"},
		{REQ_UNDO, "undo"},
	};
	static const struct hint man[] = {
		{REQ_DOWN, "scroll"},        {REQ_FOCUS, "files"},     {REQ_COPY, "copy"},
		{REQ_SAVE_MANIFEST, "save"}, {REQ_WRITE, "write TAR"}, {REQ_UNDO, "undo"},
	};
	static const struct hint err[] = {
		{REQ_UNDO, "undo"},       {REQ_FIX, "fix"},         {REQ_SOLVE, "solve"},
		{REQ_AUTO, "auto"},       {REQ_OFFSET, "offset"},
		{REQ_CLOCK, "own clock"}, {REQ_MACHINE, "machine"}, {REQ_FOCUS, "manifest"},
	};
	static const struct hint broken[] = {
		{REQ_EDIT_MANIFEST, "edit manifest"}, {REQ_CONVERT_MANIFEST, "convert"},
		{REQ_FOCUS, "manifest"},
	};
	static const struct hint det[] = {
		{REQ_DOWN, "scroll"},  {REQ_PAGE_DOWN, "page"},   {REQ_ENTER, "files"},
		{REQ_FOCUS, "manifest"}, {REQ_OFFSET, "offset"}, {REQ_MACHINE, "machine"},
	};
	static const struct hint help[] = {{REQ_DOWN, "scroll"}, {REQ_QUIT, "close help"}};
	static const struct hint msgs[] = {{REQ_DOWN, "scroll"}, {REQ_QUIT, "close messages"}};
	static const struct hint tail[] = {{REQ_HELP, "help"}, {REQ_QUIT, "quit"}};
	const struct hint *set = ok;
	size_t n_set = sizeof ok / sizeof ok[0];
	const struct tm_report *rep = wb->m.rep;
	size_t sel = list_sel_row(&wb->ui);
	const struct tm_report_file *rf = sel == SIZE_MAX ? NULL : model_row_file(&wb->m, sel);
	struct tm_buf b;
	bool full = false;
	/* room kept for the closing hints as bound ("  ? help  q quit") */
	int reserve = 0;

	tm_buf_init(&b);
	tm_buf_addc(&b, ' '); /* so that each hint counts its "  " */
	for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
		hint_add(&b, INT_MAX, &tail[i], &full, false);
	reserve = (int)b.len - 1;
	b.len = 0;
	b.data[0] = 0;
	full = false;
	if (wb->ui.picker.on) {
		tm_buf_adds(&b, wb->ui.picker.step ? "type to search  Up/Down move  Enter picks  Tab "
						     "another reference  Esc cancels"
						   : "type to search  Up/Down move  Enter picks  Esc "
						     "cancels");
	} else if (wb->ui.solve_view) {
		tm_buf_addf(&b, "y applies (one edit, %s undoes)  n declines",
			    model_key(&wb->m, REQ_UNDO));
	} else if (wb->ui.help) {
		const struct hint *h = wb->ui.messages ? msgs : help;
		for (size_t i = 0; i < sizeof help / sizeof help[0]; i++)
			hint_add(&b, COLS - 1, &h[i], &full, false);
	} else {
		if (wb->m.man_broken) {
			set = broken;
			n_set = sizeof broken / sizeof broken[0];
		} else if (wb->ui.focus_manifest) {
			set = man;
			n_set = sizeof man / sizeof man[0];
		} else if (wb->ui.focus_details) {
			set = det;
			n_set = sizeof det / sizeof det[0];
		} else if (rep && rep->error) {
			set = err;
			n_set = sizeof err / sizeof err[0];
		} else if (rep && rep->dropped && rf && rf->dropped) {
			set = drop_sel;
			n_set = sizeof drop_sel / sizeof drop_sel[0];
		} else if (rep && rep->dropped) {
			set = drop_other;
			n_set = sizeof drop_other / sizeof drop_other[0];
		}
		/* COLS - 1: the bottom-right cell cannot be written. */
		bool more = det_more && !wb->ui.focus_manifest && !wb->ui.focus_details;
		if (more) {
			static const struct hint h_more = {REQ_DETAILS_DOWN, "more"};
			hint_add(&b, COLS - 1 - reserve, &h_more, &full, false);
		}
		for (size_t i = 0; i < n_set; i++)
			hint_add(&b, COLS - 1 - reserve, &set[i], &full, more);
		full = false;
		for (size_t i = 0; i < sizeof tail / sizeof tail[0]; i++)
			hint_add(&b, COLS - 1, &tail[i], &full, false);
	}
	snprintf(out, len, "%s", b.data ? b.data : "");
	tm_buf_fini(&b);
}

/* ---- help: generated from the action table ---- */

static void
help_add1(struct wb_frame *fr, const char *line, size_t len, enum wb_role role)
{
	fr->help = realloc(fr->help, (fr->n_help + 1) * sizeof *fr->help);
	fr->help_role = realloc(fr->help_role, (fr->n_help + 1) * sizeof *fr->help_role);
	if (!fr->help || !fr->help_role)
		abort();
	fr->help[fr->n_help] = strndup(line, len);
	if (!fr->help[fr->n_help])
		abort();
	fr->help_role[fr->n_help++] = role;
}

/* A help line, wrapped at the screen's width (never cut): continuation
 * lines are indented by indent columns (the column its text starts at). */
static void
help_add_indent(struct wb_frame *fr, const char *line, enum wb_role role, int indent)
{
	int w = fr->help_width;
	size_t len = strlen(line), i = 0;
	char pad[64];

	if (indent > w - 24 || indent >= (int)sizeof pad)
		indent = 2;
	memset(pad, ' ', (size_t)indent);
	pad[indent] = 0;
	for (bool first = true; first || i < len; first = false) {
		int avail = w - (first ? 0 : indent), c = 0;
		size_t j = i, brk = 0;
		while (j < len) {
			size_t k = text_utf8_len(line + j, len - j);
			int cw = text_char_cols(line + j, k);
			if (w > 0 && c + cw > avail)
				break;
			if (line[j] == ' ' && j > i)
				brk = j;
			c += cw;
			j += k;
		}
		if (j < len && brk > i)
			j = brk; /* at the last space that fits */
		if (j == i && i < len) /* one character wider than the line */
			j = i + text_utf8_len(line + i, len - i);
		if (first) {
			help_add1(fr, line + i, j - i, role);
		} else {
			struct tm_buf b;
			tm_buf_init(&b);
			tm_buf_adds(&b, pad);
			tm_buf_add(&b, line + i, j - i);
			help_add1(fr, b.data, b.len, role);
			tm_buf_fini(&b);
		}
		i = j;
		while (i < len && line[i] == ' ')
			i++;
	}
}

static void
help_add(struct wb_frame *fr, const char *line, enum wb_role role)
{
	help_add_indent(fr, line, role, 2);
}

static void
help_lines(struct wb_frame *fr, bool ascii)
{
	static const char *const notes[] = {
		"",
		"Offsets accept units: 250ms, -1.5s, 20us, 7ns (plain numbers are ns).",
		"A positive offset moves the file later on the shared timeline.",
		"Ctrl-C cancels a running scan, else quits as q does (asking when edits are",
		"unsaved); in a prompt it cancels the prompt.",
		"Commands (:) take the names above, e.g. :offset 250ms  :machine phone",
		"  :ref FILE[:CLOCK][@MACHINE]  :trace-time CLOCK [FILE [MACHINE]]",
		"  :write PATH  :save-manifest PATH  :select N|NAME  :attr key=value",
		"  :rename-machine OLD NEW  :merge-machine FROM INTO  :delete-machine NAME",
		"  :set print-manifest-on-exit = yes  :color ROLE FG BG  :bind generic KEY REQ",
		"Within a priority class trace_processor processes members in name order:",
		"the first file by name owns the timeline, not the first one added.",
		"Manifest v1 cannot express per-process offsets or clock drift.",
		"Comparing traces from different times: https://github.com/google/perfetto/issues/2780",
	};
	char k1[32], k2[32], buf[512];

	for (size_t i = 0; i < fr->n_help; i++)
		free(fr->help[i]);
	fr->n_help = 0;
	for (int r = REQ_NONE + 1; r < REQ__COUNT; r++) {
		const struct wb_request_info *ri = keymap_info((enum wb_request)r);
		int key = keymap_key_of((enum wb_request)r);
		keymap_key_name(key, k1, sizeof k1);
		k2[0] = 0;
		if (key == ri->key1 && ri->key2)
			keymap_key_name(ri->key2, k2, sizeof k2);
		int at = snprintf(buf, sizeof buf, " %-7s %-7s %-16s ", k1, k2, ri->name);
		snprintf(buf + at, sizeof buf - (size_t)at, "%s", ri->help);
		help_add_indent(fr, buf, ROLE_DEFAULT, at);
	}
	for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++)
		help_add(fr, notes[i], ROLE_DIM);
	/* the timeline's glyphs, as drawn (draw_timeline) */
	help_add(fr, "", ROLE_DIM);
	help_add(fr, "The timeline: a row per file, trace time left to right.", ROLE_DIM);
	help_add(fr, ascii ? "  #  its events (the first to the last kept)   x  events dropped before zero"
			   : "  \xe2\x96\x88  its events (the first to the last kept)   "
			     "\xe2\x96\x91  events dropped before zero",
		 ROLE_DIM);
	help_add(fr, ascii ? "  |  zero (trace time 0)   :  before zero   .  no events"
			   : "  \xe2\x94\x82  zero (trace time 0)   \xe2\x94\x84  before zero   "
			     "\xc2\xb7  no events",
		 ROLE_DIM);
	help_add(fr, ascii ? "  < >  the file is off the window that way   -N  events the file drops"
			   : "  \xe2\x97\x82 \xe2\x96\xb8  the file is off the window that way   "
			     "-N  events the file drops",
		 ROLE_DIM);
}

/* The message log, each message word-wrapped at cols columns, newest last. */
static void
log_lines(struct wb_frame *fr, const struct wb_model *m, int cols)
{
	for (size_t i = 0; i < fr->n_help; i++)
		free(fr->help[i]);
	fr->n_help = 0;
	if (m->n_log == 0)
		help_add(fr, "No messages yet.", ROLE_DIM);
	for (size_t i = 0; i < m->n_log; i++) {
		struct wb_paras ps;
		memset(&ps, 0, sizeof ps);
		tm_buf_adds(text_para_add(&ps, ROLE_DEFAULT), m->log[i]);
		text_wrap(&ps, cols - 1);
		for (size_t k = 0; k < ps.p[0].n_lines; k++) {
			char *line = strndup(ps.p[0].text + ps.p[0].start[k], ps.p[0].len[k]);
			help_add(fr, line, i + 1 == m->n_log ? m->msg_role : ROLE_DEFAULT);
			free(line);
		}
		text_paras_fini(&ps);
	}
}

/* After the messages, the verdict and the owner block in full (the screen
 * may cut them, pointing here). */
static void
log_verdict(struct wb_frame *fr)
{
	const struct wb_paras *sets[] = {&fr->verdict, &fr->owner};

	help_add(fr, "", ROLE_DEFAULT);
	help_add(fr, "The verdict now, in full:", ROLE_DIM);
	for (size_t s = 0; s < 2; s++)
		for (size_t i = 0; i < sets[s]->n; i++) {
			const struct wb_para *p = &sets[s]->p[i];
			for (size_t k = 0; k < p->n_lines; k++) {
				char *line = strndup(p->text + p->start[k], p->len[k]);
				help_add(fr, line, p->role);
				free(line);
			}
		}
}

/* What a cut verdict, owner block or message ends with: the key (as bound
 * now) that shows them in full. */
static void
cut_hint(const struct wb *wb, char *out, size_t len)
{
	int key = keymap_key_of(REQ_MESSAGES);
	char k[32];

	if (key)
		keymap_key_name(key, k, sizeof k);
	else
		snprintf(k, sizeof k, ":%s", keymap_info(REQ_MESSAGES)->name);
	snprintf(out, len, "%s %s: in full", wb->ui.ascii ? "..." : "\xe2\x80\xa6", k);
}

/* ---- the pair picker and the solution, on the help screen ---- */

/* Lines are escaped here (help_escaped): names come from the traces; and
 * wrapped at the screen's width, never cut (an event name, a step or a
 * manifest line can be long). */
static void
help_add_esc(struct wb_frame *fr, const char *line, enum wb_role role)
{
	struct wb_paras ps;
	memset(&ps, 0, sizeof ps);
	tm_buf_adds(text_para_add(&ps, role), line);
	text_wrap(&ps, fr->help_width > 0 ? fr->help_width : 79);
	if (!ps.p[0].n_lines)
		help_add(fr, "", role);
	for (size_t k = 0; k < ps.p[0].n_lines; k++) {
		char *l = strndup(ps.p[0].text + ps.p[0].start[k], ps.p[0].len[k]);
		if (!l)
			abort();
		help_add(fr, l, role);
		free(l);
	}
	text_paras_fini(&ps);
}

/* The picker's lines: a file's events number millions, so only the
 * window around the selection is formatted (every key draws a frame); the
 * help pane shows them from its top. */
static void
picker_lines(struct wb *wb, struct wb_frame *fr)
{
	struct wb_picker *pk = &wb->ui.picker;
	struct pane *help = &wb->ui.pane[PANE_HELP];
	const char *file = pk->step ? pk->ref : pk->file;
	char t[64];
	struct tm_buf line;
	size_t shown = 0;
	size_t rows = (size_t)(LINES - 3 > 1 ? LINES - 3 : 1);
	size_t win = rows > 5 ? rows - 5 : 1; /* the title, search, two notes, a wrap */

	if (pk->sel < pk->top)
		pk->top = pk->sel;
	if (pk->sel >= pk->top + win)
		pk->top = pk->sel - win + 1;
	help->top = 0;

	for (size_t i = 0; i < fr->n_help; i++)
		free(fr->help[i]);
	fr->n_help = 0;
	tm_buf_init(&line);
	if (pk->step)
		tm_buf_addf(&line, "Picked in %s: %s #%u. The same moment in %s is:", pk->file,
			    pk->a_name, pk->a_occ, pk->ref);
	else
		tm_buf_addf(&line, "An event in %s you can also find in another trace:", file);
	help_add_esc(fr, line.data, ROLE_INFO);
	tm_buf_reset(&line);
	tm_buf_addf(&line, "search: %s_", pk->filter);
	help_add_esc(fr, line.data, ROLE_DEFAULT);
	if (pk->top) {
		tm_buf_reset(&line);
		tm_buf_addf(&line, "  (%zu more above)", pk->top);
		help_add_esc(fr, line.data, ROLE_DIM);
	}
	/* only the window's events are looked at: the filter's list is kept */
	size_t n_shown;
	const uint32_t *sh = picker_shown(pk, &n_shown);
	for (shown = pk->top; shown < n_shown && shown < pk->top + win;) {
		const struct tm_align_event *ev = &pk->ev.v[sh[shown]];
		text_fmt_dur(ev->ts, t, sizeof t);
		/* the name in full: a long one wraps */
		tm_buf_reset(&line);
		tm_buf_addf(&line, " %-40s #%-3u %16s  %s%llu in the file", ev->name, ev->occ, t,
			    ev->instant ? "instant, " : "", (unsigned long long)ev->count);
		help_add_esc(fr, line.data, shown == pk->sel ? ROLE_CURSOR : ROLE_DEFAULT);
		shown++;
	}
	shown = n_shown;
	if (shown > pk->top + win) {
		tm_buf_reset(&line);
		tm_buf_addf(&line, "  (%zu more below)", shown - pk->top - win);
		help_add_esc(fr, line.data, ROLE_DIM);
	}
	tm_buf_fini(&line);
	if (!shown)
		help_add_esc(fr, pk->ev.n ? "  (no event name matches the search)"
					  : "  (the scan kept no named event in this file)",
			     ROLE_DIM);
	if (pk->ev.names_full)
		help_add_esc(fr, "  (only the first names the scan kept are listed)", ROLE_DIM);
	snprintf(fr->help_title, sizeof fr->help_title,
		 " Pair, step %d of 2: %s (times on its own clock, %s)", pk->step + 1, file,
		 pk->ev.clock ? tm_clock_name(pk->ev.clock) : "clockless");
}

static void
solution_lines(struct wb *wb, struct wb_frame *fr)
{
	const struct wb_model *m = &wb->m;
	const struct tm_solution *so = &m->solution;
	struct tm_buf line;

	for (size_t i = 0; i < fr->n_help; i++)
		free(fr->help[i]);
	fr->n_help = 0;
	tm_buf_init(&line);
	for (size_t i = 0; i < so->n_steps; i++) {
		tm_buf_reset(&line);
		tm_buf_addf(&line, "  %zu. %s", i + 1, so->steps[i]);
		help_add_esc(fr, line.data, ROLE_DEFAULT);
	}
	help_add_esc(fr, "", ROLE_DEFAULT);
	help_add_esc(fr, "manifest diff (- now, + after; 2 lines of context):", ROLE_HEADER);
	/* the changed lines and two kept lines around each, "..." between */
	const char *d = m->solution_diff ? m->solution_diff : "";
	size_t n_lines = 0, cap = 0;
	const char **ls = NULL;
	for (const char *p = d; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		if (n_lines == cap) {
			cap = cap ? cap * 2 : 64;
			ls = realloc(ls, cap * sizeof *ls);
			if (!ls)
				abort();
		}
		ls[n_lines++] = p;
	}
	bool gap = false;
	for (size_t i = 0; i < n_lines; i++) {
		bool near = false;
		for (size_t j = i >= 2 ? i - 2 : 0; j < n_lines && j <= i + 2 && !near; j++)
			near = ls[j][0] != ' ';
		if (!near) {
			if (!gap)
				help_add_esc(fr, "   ...", ROLE_DIM);
			gap = true;
			continue;
		}
		gap = false;
		const char *nl = strchr(ls[i], '\n');
		char *l = strndup(ls[i], nl ? (size_t)(nl - ls[i]) : strlen(ls[i]));
		if (!l)
			abort();
		help_add_esc(fr, l, l[0] == '+' ? ROLE_OK : l[0] == '-' ? ROLE_ERROR : ROLE_DIM);
		free(l);
	}
	free(ls);
	help_add_esc(fr, "", ROLE_DEFAULT);
	tm_buf_reset(&line);
	tm_buf_addf(&line, "predicted: %s", so->verdict ? so->verdict : "?");
	help_add_esc(fr, line.data, so->ok ? ROLE_OK : ROLE_WARNING);
	tm_buf_fini(&line);
	if (so->unplaced)
		help_add_esc(fr, so->unplaced, ROLE_WARNING);
	snprintf(fr->help_title, sizeof fr->help_title, " Solve (tracemerge): %zu edit%s, %s",
		 so->n_steps, so->n_steps == 1 ? "" : "s",
		 so->ok ? "nothing dropped, nothing fails" : "the best found, not clean");
}

/* ---- the frame ---- */

static void
set_pane(struct pane *p, const struct wb_rect *r)
{
	p->y = r->y;
	p->x = r->x;
	p->h = r->h;
	p->w = r->w;
}

void
frame_fini(struct wb_frame *fr)
{
	text_paras_fini(&fr->verdict);
	text_paras_fini(&fr->owner);
	text_paras_fini(&fr->details);
	tm_buf_fini(&fr->manifest_json);
	free(fr->ord);
	fr->ord = NULL;
	fr->cap_ord = 0;
	for (size_t i = 0; i < fr->n_help; i++)
		free(fr->help[i]);
	free(fr->help);
	free(fr->help_role);
	fr->help = NULL;
	fr->help_role = NULL;
	fr->n_help = 0;
}

/* Display width of a name as drawn (escaped). */
static int
name_cols(const char *s, size_t len)
{
	struct tm_buf b;
	tm_buf_init(&b);
	size_t w = tm_escape_display(s, len, &b, NULL, 0, NULL);
	tm_buf_fini(&b);
	return w > 4096 ? 4096 : (int)w;
}

static int
digits(uint64_t v)
{
	int n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

static int
max_int(int a, int b)
{
	return a > b ? a : b;
}

static int
cmp_order(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The file list's columns from their cells, and each row's place in the
 * processing order (trace_processor's: priority, then name). */
static void
frame_columns(struct wb *wb, int list_w)
{
	struct wb_frame *fr = &wb->fr;
	const struct wb_model *m = &wb->m;
	size_t n = model_n_rows(m);
	struct wb_cols need = {1, 4, 6, 4, 7, 5, 6, 5, 0}; /* the headers */
	/* MISSING beside DROPS when the events missing are not the dropped
	 * count (both figures the engine's, with the same names everywhere) */
	if (m->rep && !tm_report_missing_is_dropped(m->rep))
		need.missing = 7;
	char buf[128];
	struct tm_buf label_buf;

	if (fr->cap_ord < n + 1) {
		fr->cap_ord = n + 1;
		fr->ord = realloc(fr->ord, fr->cap_ord * sizeof *fr->ord);
		if (!fr->ord)
			abort();
	}
	uint64_t(*by)[2] = calloc(n + 1, sizeof *by);
	size_t n_by = 0;
	if (!by)
		abort();
	tm_buf_init(&label_buf);
	for (size_t row = 0; row < n; row++) {
		size_t mi = model_row_member(m, row);
		const struct tm_member *mb = tm_session_member(m->s, mi);
		const struct tm_report_file *rf = model_row_file(m, row);
		const char *name = model_member_name(m, mi);
		fr->ord[row] = 0;
		if (mb && mb->order != UINT32_MAX) {
			by[n_by][0] = mb->order;
			by[n_by++][1] = row;
		}
		size_t label_len;
		const char *label = model_member_label(m, mi, &label_buf, &label_len);
		need.name = max_int(need.name, name_cols(label, label_len));
		text_fmt_size(mb ? mb->size : 0, buf, sizeof buf);
		need.size = max_int(need.size, (int)strlen(buf));
		if (mb)
			need.format = max_int(need.format, (int)strlen(tm_format_short_name(mb->format)));
		if (text_member_is_trace(mb)) {
			const char *mt = text_machine(m, name);
			need.machine = max_int(need.machine, name_cols(mt, strlen(mt)));
			text_align(m, name, buf, sizeof buf);
			need.align = max_int(need.align, (int)strlen(buf));
		}
		if (rf) {
			need.events = max_int(need.events, digits(rf->events));
			need.drops = max_int(need.drops, digits(rf->dropped));
			if (need.missing)
				need.missing = max_int(need.missing, digits(rf->missing));
		}
	}
	qsort(by, n_by, sizeof *by, cmp_order);
	for (size_t k = 0; k < n_by; k++)
		fr->ord[by[k][1]] = k + 1;
	need.order = max_int(1, digits(n_by));
	free(by);
	tm_buf_fini(&label_buf);
	layout_columns(&need, list_w, &fr->cols);
}

/* The timeline's name column, window and rule label. */
static void
frame_timeline(struct wb *wb)
{
	struct wb_frame *fr = &wb->fr;
	const struct wb_model *m = &wb->m;
	int w = fr->lay.timeline.w;
	struct tm_buf label_buf;

	fr->tl_name_w = 14;
	tm_buf_init(&label_buf);
	for (size_t row = 0; row < model_n_rows(m); row++)
		if (text_is_timeline_file(model_row_file(m, row))) {
			size_t len;
			const char *name = model_member_label(m, model_row_member(m, row), &label_buf, &len);
			fr->tl_name_w = max_int(fr->tl_name_w, name_cols(name, len) + 1);
		}
	tm_buf_fini(&label_buf);
	if (fr->tl_name_w > w / 3)
		fr->tl_name_w = max_int(14, w / 3);
	/* bar_w time columns and one for the zero marker */
	fr->tl_bar_w = w - fr->tl_name_w - 8 - 1;
	struct wb_tl_in in = {m->tl.lo, m->tl.hi, wb->ui.zoom, wb->ui.tl_center, fr->tl_bar_w};
	layout_timeline(&in, &fr->tl);
	wb->ui.tl_center = fr->tl.center;
	char d[64], rg[200];
	/* the span to 4 significant digits */
	double sp = fr->tl.span, q = 1.0;
	while (sp / q >= 10000.0)
		q *= 10.0;
	text_fmt_dur((int64_t)(floor(sp / q + 0.5) * q), d, sizeof d);
	bool zero = fr->tl.zero_col >= 0 && fr->tl.zero_col <= fr->tl_bar_w;
	const char *bar = wb->ui.ascii ? "|" : "\xe2\x94\x82";
	char zk[96], pk[96];
	snprintf(zk, sizeof zk, "%s/%s", model_key(m, REQ_ZOOM_IN), model_key(m, REQ_ZOOM_OUT));
	snprintf(pk, sizeof pk, ", %s/%s pan", model_key(m, REQ_PAN_LEFT),
		 model_key(m, REQ_PAN_RIGHT));
	if (wb->ui.zoom == 0 && !text_is_wall_clock(m->rep)) {
		/* the columns give way to "files a-b of n" when the strip scrolls */
		size_t n_tl = 0;
		for (size_t row = 0; row < model_n_rows(m); row++)
			n_tl += text_is_timeline_file(model_row_file(m, row));
		char over[64] = "";
		if (n_tl + 1 <= (size_t)(fr->lay.timeline.h > 0 ? fr->lay.timeline.h : 0))
			snprintf(over, sizeof over, " over %d columns", fr->tl_bar_w);
		snprintf(fr->timeline_label, sizeof fr->timeline_label,
			 "timeline: %s%s, %s = 0, zoom 1x (%s)", d, over, bar, zk);
		return;
	}
	text_fmt_window(m->rep, fr->tl.v0, fr->tl.v0 + fr->tl.span, rg, sizeof rg);
	snprintf(fr->timeline_label, sizeof fr->timeline_label, "timeline: %s%s%s%s, zoom %dx (%s%s)",
		 rg, zero ? ", " : "", zero ? bar : "", zero ? " = 0" : "", 1 << wb->ui.zoom, zk,
		 wb->ui.zoom ? pk : "");
}

/* The manifest pane sideways: its scroll clamped to the longest line, and
 * a label that fits its rule and says how to see lines cut at its edges. */
static void
frame_manifest_label(struct wb *wb)
{
	struct wb_frame *fr = &wb->fr;
	const struct wb_model *m = &wb->m;
	struct pane *man = &wb->ui.pane[PANE_MANIFEST];
	const struct tm_buf *b = &fr->manifest_json;
	int widest = 0, w = man->w, room = man->w - 6;
	bool cut = false, focus = wb->ui.focus_manifest;
	size_t line = 0, rows = pane_rows(man);

	for (size_t i = 0; b->data && i < b->len; line++) {
		size_t e = i;
		while (e < b->len && b->data[e] != '\n')
			e++;
		int lw = name_cols(b->data + i, e - i);
		widest = max_int(widest, lw);
		if (line >= man->top && line < man->top + rows && lw > (int)man->left + w)
			cut = true;
		i = e + 1;
	}
	size_t left_max = widest > w ? (size_t)(widest - w + 2) : 0;
	if (man->left > left_max)
		man->left = left_max;
	cut |= man->left > 0 && man->h > 1;
	if (m->man_broken) {
		snprintf(fr->manifest_label, sizeof fr->manifest_label,
			 "manifest: does not parse, kept as text (%s edit, %s convert)%s",
			 model_key(m, REQ_EDIT_MANIFEST), model_key(m, REQ_CONVERT_MANIFEST),
			 focus ? " [focus]" : "");
		return;
	}
	bool trivial = tm_manifest_is_trivial(&m->man);
	if (man->h <= 1 && !focus) {
		snprintf(fr->manifest_label, sizeof fr->manifest_label,
			 "manifest: %zu lines%s (%s shows it)", fr->manifest_lines,
			 trivial ? ", trivial" : "", model_key(m, REQ_FOCUS));
		return;
	}
	char focus_l[200] = "", focus_s[64] = "", cut_l[200] = "", cut_s[120] = "";
	if (focus) {
		snprintf(focus_l, sizeof focus_l, " [focus: %s/%s scroll, %s back]",
			 model_key(m, REQ_DOWN), model_key(m, REQ_UP), model_key(m, REQ_FOCUS));
		snprintf(focus_s, sizeof focus_s, " [focus]");
	}
	if (cut && focus) {
		snprintf(cut_l, sizeof cut_l, " %s/%s: cut lines", model_key(m, REQ_PAN_LEFT),
			 model_key(m, REQ_PAN_RIGHT));
		snprintf(cut_s, sizeof cut_s, " %s/%s", model_key(m, REQ_PAN_LEFT),
			 model_key(m, REQ_PAN_RIGHT));
	} else if (cut) {
		snprintf(cut_l, sizeof cut_l, " (cut lines: %s, then %s)", model_key(m, REQ_FOCUS),
			 model_key(m, REQ_PAN_RIGHT));
		snprintf(cut_s, sizeof cut_s, " (%s %s: cut lines)", model_key(m, REQ_FOCUS),
			 model_key(m, REQ_PAN_RIGHT));
	}
	const char *triv_l = trivial ? " (trivial: not written to the TAR)" : "";
	const char *triv_s = trivial ? " (trivial: not written)" : "";
	const char *cand[][3] = {
		{focus_l, cut_l, triv_l}, {focus_l, cut_l, triv_s}, {focus_s, cut_l, triv_s},
		{focus_s, cut_l, ""},     {focus_s, cut_s, ""},     {"", cut_s, ""},
	};
	for (size_t k = 0; k < sizeof cand / sizeof cand[0]; k++) {
		snprintf(fr->manifest_label, sizeof fr->manifest_label, "manifest%s%s%s", cand[k][0],
			 cand[k][1], cand[k][2]);
		if ((int)strlen(fr->manifest_label) <= room)
			return;
	}
}

/* Columns [from, from + width) of escaped text e: a marker where the text
 * goes on to the left or right of the window. */
static void
window_cols(const char *e, size_t len, int from, int width, const char *mark, struct tm_buf *out)
{
	size_t i = 0;
	int c = 0, total = 0, used = 0;

	for (size_t k = 0; k < len;) {
		size_t n = text_utf8_len(e + k, len - k);
		total += text_char_cols(e + k, n);
		k += n;
	}
	while (i < len && c < from) {
		size_t n = text_utf8_len(e + i, len - i);
		c += text_char_cols(e + i, n);
		i += n;
	}
	if (from > 0) {
		tm_buf_adds(out, mark);
		used = 1;
		if (i < len) { /* the marker takes the first column shown */
			size_t n = text_utf8_len(e + i, len - i);
			c += text_char_cols(e + i, n);
			i += n;
		}
	}
	bool more = total - from > width;
	while (i < len) {
		size_t n = text_utf8_len(e + i, len - i);
		int w = text_char_cols(e + i, n);
		if (used + w > width - (more ? 1 : 0))
			break;
		tm_buf_add(out, e + i, n);
		used += w;
		i += n;
	}
	if (more)
		tm_buf_adds(out, mark);
}

/* The prompt line within width columns: scrolled sideways so that the
 * cursor stays in view however long the input (a marker where it goes on). */
static void
frame_prompt(struct wb *wb, int width)
{
	struct wb_frame *fr = &wb->fr;
	int cur = 0;
	const char *line = prompt_line(&cur);
	struct tm_buf e, w;

	tm_buf_init(&e);
	tm_buf_init(&w);
	int total = (int)tm_escape_display(line, strlen(line), &e, NULL, 0, NULL);
	int from = layout_hscroll(total, cur, width);
	window_cols(e.data ? e.data : "", e.len, from, width,
		    wb->ui.ascii ? "<" : "\xe2\x80\xa6", &w);
	/* the marker at the right end: ">" in ASCII */
	if (wb->ui.ascii && w.len && total - from > width)
		w.data[w.len - 1] = '>';
	snprintf(fr->prompt, sizeof fr->prompt, "%s", w.data ? w.data : "");
	fr->prompt_cursor = cur - from;
	tm_buf_fini(&e);
	tm_buf_fini(&w);
}

void
frame_prepare(struct wb *wb)
{
	struct wb_frame *fr = &wb->fr;
	const struct wb_model *m = &wb->m;
	struct pane *list = &wb->ui.pane[PANE_LIST], *det = &wb->ui.pane[PANE_DETAILS];
	struct pane *man = &wb->ui.pane[PANE_MANIFEST], *help = &wb->ui.pane[PANE_HELP];
	struct wb_layout_in in;
	size_t n = model_n_rows(m), n_tl = 0;
	int rows = LINES, cols = COLS;

	text_paras_fini(&fr->verdict);
	text_paras_fini(&fr->owner);
	text_paras_fini(&fr->details);
	list_refresh(&wb->ui, m);
	pane_clamp(list);
	size_t sel = list_sel_row(&wb->ui);
	text_verdict(m, &fr->verdict);
	text_owner(m, &fr->owner);
	/* The list's columns first (the list is as wide as the left column):
	 * a name the list or the details' rule cuts shows in full in them. */
	frame_columns(wb, layout_left_cols(cols));
	/* the selected row's label: the details' rule, and whether the list or
	 * the rule cuts it */
	struct tm_buf label;
	size_t label_len = 0;
	tm_buf_init(&label);
	const char *shown = sel == SIZE_MAX ? NULL
					    : model_member_label(m, model_row_member(m, sel), &label,
								 &label_len);
	if (sel != SIZE_MAX) {
		const char *nm = model_row_name(m, sel);
		int nw = nm ? name_cols(shown, label_len) : 0;
		fr->details_name = nw > fr->cols.name || nw > layout_left_cols(cols) - 40;
		model_fixes_ensure(&wb->m, nm); /* the details show its fixes */
		text_details(m, sel, &fr->details, fr->details_name);
	}
	text_wrap(&fr->verdict, cols);
	text_wrap(&fr->owner, cols);
	text_wrap(&fr->details, layout_left_cols(cols));
	for (size_t row = 0; row < n; row++)
		n_tl += text_is_timeline_file(model_row_file(m, row));

	memset(&in, 0, sizeof in);
	in.rows = rows;
	in.cols = cols;
	in.n_list = (int)list->n;
	in.det_lines = fr->details.lines;
	in.n_timeline = (int)n_tl;
	in.verdict_lines = fr->verdict.lines;
	in.owner_lines = fr->owner.lines;
	in.focus_manifest = wb->ui.focus_manifest;
	in.focus_details = wb->ui.focus_details;
	layout_compute(&in, &fr->lay);
	frame_timeline(wb);

	/* The list. */
	set_pane(list, &fr->lay.list);
	pane_clamp(list);

	/* The details: a new row starts at the top. */
	set_pane(det, &fr->lay.details);
	if (wb->ui.det_row != sel) {
		wb->ui.det_row = sel;
		det->top = 0;
	}
	det->has_sel = false;
	det->n = (size_t)fr->details.lines;
	pane_clamp(det);
	bool det_more = det->h > 1 && det->n > pane_rows(det);
	const char *name = shown ? shown : "details";
	if (det_more) {
		char *nm = text_short_name(name, (size_t)(det->w - 40 > 8 ? det->w - 40 : 8));
		size_t first = det->top + 1, last = det->top + pane_rows(det);
		snprintf(fr->details_label, sizeof fr->details_label,
			 "%s  lines %zu-%zu of %zu, %s: more%s", nm, first,
			 last < det->n ? last : det->n, det->n,
			 model_key(m, wb->ui.focus_details ? REQ_PAGE_DOWN : REQ_DETAILS_DOWN),
			 wb->ui.focus_details ? " [focus]" : "");
		free(nm);
	} else {
		char *nm = text_short_name(name, (size_t)(det->w - 20 > 8 ? det->w - 20 : 8));
		snprintf(fr->details_label, sizeof fr->details_label, "%s%s", nm,
			 wb->ui.focus_details ? " [focus]" : "");
		free(nm);
	}
	tm_buf_fini(&label);

	/* The manifest as it would be written. */
	size_t n_lines = 0;
	tm_buf_reset(&fr->manifest_json);
	model_manifest_json(m, &fr->manifest_json);
	for (size_t j = 0; fr->manifest_json.data && j < fr->manifest_json.len; j++)
		n_lines += fr->manifest_json.data[j] == '\n';
	fr->manifest_lines = n_lines;
	set_pane(man, &fr->lay.manifest);
	man->has_sel = false;
	man->n = n_lines;
	pane_clamp(man);
	frame_manifest_label(wb);

	/* Help: rows 1 .. LINES-3 (the message and the key hints below). */
	fr->help_width = cols - 1;
	if (wb->ui.help) {
		if (wb->ui.picker.on) {
			picker_lines(wb, fr);
			fr->help_escaped = true;
		} else if (wb->ui.solve_view && m->has_solution) {
			solution_lines(wb, fr);
			fr->help_escaped = true;
		} else if (wb->ui.messages) {
			log_lines(fr, m, cols);
			log_verdict(fr);
			fr->help_escaped = true;
			snprintf(fr->help_title, sizeof fr->help_title,
				 " tracemerge messages: %zu, the newest last; then the verdict",
				 m->n_log);
		} else {
			help_lines(fr, wb->ui.ascii);
			fr->help_escaped = false;
			snprintf(fr->help_title, sizeof fr->help_title,
				 " tracemerge help: keys and commands");
		}
		help->y = 0;
		help->x = 0;
		help->h = rows - 2;
		help->w = cols;
		help->has_sel = false;
		help->n = fr->n_help;
		pane_clamp(help);
	}
	choose_hints(wb, det_more, fr->hints, sizeof fr->hints);
	cut_hint(wb, fr->cut_hint, sizeof fr->cut_hint);
	if (wb->ui.prompting)
		frame_prompt(wb, cols - 1);
}

/* SPDX-License-Identifier: MIT */
/*
 * Drawing a prepared frame (wb_frame.c made it: layout, panes, wrapped text,
 * labels, hints): title, member list, details of the selected file,
 * timeline strip, manifest, verdict, timeline owner, message or prompt, key
 * hints; or the help screen.  Drawing only reads the workbench; every
 * untrusted string goes through tm_escape_display (put_escaped).
 * view_dump_screen writes the screen back as text for the golden tests.
 */
#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "wb.h"

/* The marks of a cut (never a bare '~'): where text goes on past the
 * right or left edge, or gives way in its middle; ASCII with set ascii. */
static const char *mark_right = "\xe2\x80\xa6", *mark_left = "\xe2\x80\xa6",
		  *mark_mid = "\xe2\x80\xa6";

static void
marks_for(const struct wb *wb)
{
	mark_right = wb->ui.ascii ? ">" : "\xe2\x80\xa6";
	mark_left = wb->ui.ascii ? "<" : "\xe2\x80\xa6";
	mark_mid = wb->ui.ascii ? ".." : "\xe2\x80\xa6";
}

/* Draw escaped text s (already safe) within max_cols; spans in escape role.
 * Text cut short ends with a mark where what is cut shows in full elsewhere
 * (a pane's label or the details say where); without mark, the caller puts
 * its own hint. */
static int
put_text_cut(const char *s, size_t len, const struct tm_span *sp, size_t n_sp, int max_cols,
	     int base_attr, bool mark)
{
	int used = 0;
	size_t i = 0, k = 0;

	while (i < len) {
		size_t n = text_utf8_len(s + i, len - i);
		int w;
		bool in_span;

		if (i + n > len)
			n = len - i;
		w = text_char_cols(s + i, n);
		while (k < n_sp && sp[k].end <= i)
			k++;
		in_span = k < n_sp && sp[k].start <= i && i < sp[k].end;
		/* Leave one column for the truncation marker when more follows. */
		if (used + w > max_cols || (i + n < len && used + w == max_cols && max_cols > 0)) {
			if (mark && used < max_cols) {
				attrset(theme_attr(ROLE_DIM));
				addstr(mark_right);
				used++;
			}
			break;
		}
		attrset(in_span ? theme_attr(ROLE_ESCAPE) : base_attr);
		addnstr(s + i, (int)n);
		used += w;
		i += n;
	}
	attrset(base_attr);
	return used;
}

static int
put_safe(const char *s, size_t len, const struct tm_span *sp, size_t n_sp, int max_cols,
	 int base_attr)
{
	return put_text_cut(s, len, sp, n_sp, max_cols, base_attr, true);
}

static int
text_cols(const char *s, size_t len)
{
	struct tm_buf b;
	size_t w;

	tm_buf_init(&b);
	w = tm_escape_display(s, len, &b, NULL, 0, NULL);
	tm_buf_fini(&b);
	return (int)w;
}

/* Escaped text s within max_cols; when it does not fit, or more follows
 * (more lines of a cut block), it ends with the frame's cut hint (the key
 * that shows it in full) instead of a bare '~'. */
static void
put_or_hint(const struct wb *wb, const char *s, size_t len, int max_cols, int attr, bool more)
{
	const char *hint = wb->fr.cut_hint;
	int hint_w = text_cols(hint, strlen(hint));

	if ((!more && text_cols(s, len) <= max_cols) || max_cols < hint_w + 8) {
		put_safe(s, len, NULL, 0, max_cols, attr);
		return;
	}
	int used = put_text_cut(s, len, NULL, 0, max_cols - hint_w - 1, attr, false);
	attrset(attr);
	for (; used < max_cols - hint_w; used++)
		addch(' ');
	attrset(theme_attr(ROLE_KEY_HINT));
	addstr(hint);
	attrset(attr);
}

/* The search's matches to mark in pane id: while it has the focus and the
 * last search ran there; else NULL. */
static const char *
search_marks(const struct wb *wb, enum wb_pane_id id)
{
	enum wb_pane_id f = wb->ui.focus_manifest  ? PANE_MANIFEST
			    : wb->ui.focus_details ? PANE_DETAILS
						   : PANE_LIST;

	return wb->ui.search && f == id && wb->ui.search_pane == id ? wb->ui.search : NULL;
}

/* Printable text s[0..len) in attr, the search's matches (pat) in the
 * cursor's look. */
static void
put_marked(const char *s, size_t len, int attr, const char *pat)
{
	size_t i = 0, n = pat ? strlen(pat) : 0;

	while (i < len) {
		const char *m = n ? pane_find(s + i, len - i, pat) : NULL;
		size_t plain = m ? (size_t)(m - (s + i)) : len - i;
		attrset(attr);
		addnstr(s + i, (int)plain);
		i += plain;
		if (!m)
			break;
		attrset(theme_attr(ROLE_CURSOR));
		addnstr(s + i, (int)n);
		i += n;
	}
	attrset(attr);
}

static int
put_escaped(const char *s, size_t len, int max_cols, int base_attr)
{
	struct tm_buf b;
	struct tm_span sp[256];
	size_t n_sp = 0;
	int used;

	if (max_cols <= 0)
		return 0;
	tm_buf_init(&b);
	tm_escape_display(s ? s : "", s ? len : 0, &b, sp, 256, &n_sp);
	used = put_safe(b.data ? b.data : "", b.len, sp, n_sp, max_cols, base_attr);
	tm_buf_fini(&b);
	return used;
}

/* A name within max_cols: when it does not fit, its middle gives way
 * ("pixel7-sys…evening-run.json"): names alike differ at their ends; the
 * details show the selected file's name in full. */
static int
put_name(const char *s, size_t len, int max_cols, int base_attr)
{
	struct tm_buf b;
	int used;

	if (max_cols <= 0)
		return 0;
	tm_buf_init(&b);
	tm_escape_display(s ? s : "", s ? len : 0, &b, NULL, 0, NULL);
	const char *e = b.data ? b.data : "";
	if (max_cols < 8 || text_cols(e, b.len) <= max_cols) {
		tm_buf_fini(&b);
		return put_escaped(s, len, max_cols, base_attr);
	}
	int mw = (int)strlen(mark_mid) > 2 ? 1 : (int)strlen(mark_mid);
	int head = (max_cols - mw) * 2 / 5, tail = max_cols - mw - head;
	size_t h = 0, t = b.len;
	for (int c = 0; h < b.len;) {
		size_t k = text_utf8_len(e + h, b.len - h);
		int w = text_char_cols(e + h, k);
		if (c + w > head)
			break;
		c += w;
		h += k;
	}
	/* the tail: the last characters that fit (UTF-8 starts only) */
	for (int c = 0; t > h;) {
		size_t p = t - 1;
		while (p > h && ((unsigned char)e[p] & 0xc0) == 0x80)
			p--;
		int w = text_char_cols(e + p, t - p);
		if (c + w > tail)
			break;
		c += w;
		t = p;
	}
	struct tm_buf cut;
	tm_buf_init(&cut);
	tm_buf_add(&cut, e, h);
	tm_buf_adds(&cut, mark_mid);
	tm_buf_add(&cut, e + t, b.len - t);
	used = put_safe(cut.data, cut.len, NULL, 0, max_cols, base_attr);
	tm_buf_fini(&cut);
	tm_buf_fini(&b);
	return used;
}

/* Trusted (our own) text. */
static int
put_text(const char *s, int max_cols, int attr)
{
	return put_escaped(s, strlen(s), max_cols, attr);
}

static void
fill_to(int y, int x_end, int attr)
{
	int y0, x0;

	getyx(stdscr, y0, x0);
	if (y0 != y)
		return;
	attrset(attr);
	for (int x = x0; x < x_end; x++)
		mvaddch(y, x, ' ');
}

static void
rule(const struct wb *wb, int y, int x0, int x1, const char *label)
{
	int attr = theme_attr(ROLE_HEADER);

	move(y, x0);
	attrset(attr);
	for (int x = x0; x < x1; x++)
		addstr(wb->ui.ascii ? "-" : "\xe2\x94\x80");
	if (label) {
		move(y, x0 + 2);
		put_text(" ", 1, attr);
		int w = put_escaped(label, strlen(label), x1 - x0 - 6, attr);
		(void)w;
		put_text(" ", 1, attr);
	}
}

/* ---- panes ---- */

static void
draw_title(const struct wb *wb)
{
	char buf[256];
	int attr = theme_attr(ROLE_TITLE);
	size_t n = model_n_rows(&wb->m);

	move(0, 0);
	attrset(attr);
	put_text(" tracemerge ", COLS, attr);
	if (wb->m.n_paths == 1)
		put_escaped(wb->m.paths[0], strlen(wb->m.paths[0]), COLS / 2, attr);
	else if (wb->m.n_paths > 1)
		put_text("loose files", COLS / 2, attr);
	if (wb->ui.filter) {
		snprintf(buf, sizeof buf, "  %zu of %zu file%s  filter: ",
			 wb->ui.pane[PANE_LIST].n, n, n == 1 ? "" : "s");
		put_text(buf, COLS, attr);
		put_escaped(wb->ui.filter, strlen(wb->ui.filter), COLS / 4, attr);
		snprintf(buf, sizeof buf, "%s", model_is_dirty(&wb->m) ? "  [modified]" : "");
	} else {
		snprintf(buf, sizeof buf, "  %zu file%s%s", n, n == 1 ? "" : "s",
			 model_is_dirty(&wb->m) ? "  [modified]" : "");
	}
	put_text(buf, COLS, attr);
	fill_to(0, COLS, attr);
}

static void
progress_bar(uint64_t done, uint64_t total, int width, char *buf, size_t len)
{
	int fill = total ? (int)((double)done * width / (double)total) : 0;
	int pct = total ? (int)((double)done * 100.0 / (double)total) : 0;
	size_t o = 0;

	if (fill > width)
		fill = width;
	buf[o++] = '[';
	for (int i = 0; i < width && o + 2 < len; i++)
		buf[o++] = i < fill ? '#' : ' ';
	snprintf(buf + o, len - o, "] %3d%%", pct);
}

static void
draw_list(const struct wb *wb, const struct wb_rect *rc)
{
	const struct pane *p = &wb->ui.pane[PANE_LIST];
	int y0 = rc->y, h = rc->h, x0 = rc->x, w = rc->w;
	size_t n = p->n; /* the lines: the model's rows through the filter */
	const struct wb_cols *cl = &wb->fr.cols; /* widths from the content */
	int name_w = cl->name;
	char buf[256];
	struct tm_buf label_buf;

	/* Nothing may wrap: a wrapped row would land on the next one. */
	scrollok(stdscr, FALSE);
	tm_buf_init(&label_buf);
	attrset(theme_attr(ROLE_HEADER));
	move(y0, x0);
	/* #: the place in trace_processor's processing order (by name) */
	snprintf(buf, sizeof buf, "  %*s %-*s %-*s %*s %-*.*s %-*.*s %*s %*s", cl->order, "#", name_w,
		 "FILE", cl->format, "FORMAT", cl->size, "SIZE", cl->machine, cl->machine, "MACHINE",
		 cl->align, cl->align, "ALIGN", cl->events, "EVENTS", cl->drops, "DROPS");
	if (cl->missing)
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " %*s", cl->missing, "MISSING");
	put_text(buf, w, theme_attr(ROLE_HEADER));
	fill_to(y0, x0 + w, theme_attr(ROLE_HEADER));
	if (n == 0 && wb->ui.filter && h > 1) {
		move(y0 + 1, x0);
		put_text("  (no file name contains the filter)", w,
			 theme_attr(ROLE_DIM));
	}
	for (int r = 0; r + 1 < h; r++) {
		size_t line = p->top + (size_t)r, row = list_row(&wb->ui, line);
		int y = y0 + 1 + r;
		bool cur = line == p->sel;
		bool blur = wb->ui.focus_manifest || wb->ui.focus_details;
		int attr = cur ? theme_attr(blur ? ROLE_CURSOR_BLUR : ROLE_CURSOR)
			       : theme_attr(ROLE_DEFAULT);
		size_t m;
		const struct tm_member *mb;
		const struct tm_report_file *rf;
		const char *name;
		int used;

		if (line >= n)
			break;
		m = model_row_member(&wb->m, row);
		mb = tm_session_member(wb->m.s, m);
		rf = model_row_file(&wb->m, row);
		name = model_member_name(&wb->m, m);
		char *problem = model_member_problem(&wb->m, row);
		move(y, x0);
		attrset(attr);
		addstr(cur ? ">" : " ");
		attrset(problem && !cur ? theme_attr(ROLE_ERROR) : attr);
		addstr(problem ? "!" : " ");
		attrset(attr);
		if (wb->fr.ord && wb->fr.ord[row])
			printw("%*zu ", cl->order, wb->fr.ord[row]);
		else
			printw("%*s ", cl->order, "-");
		size_t label_len;
		const char *label = model_member_label(&wb->m, m, &label_buf, &label_len);
		used = put_name(label, label_len, name_w, problem && !cur ? theme_attr(ROLE_ERROR) : attr);
		attrset(attr);
		free(problem);
		for (; used < name_w; used++)
			addch(' ');
		text_fmt_size(mb ? mb->size : 0, buf, sizeof buf);
		printw(" %-*.*s %*s ", cl->format, cl->format,
		       mb ? tm_format_short_name(mb->format) : "?", cl->size, buf);
		bool trace = text_member_is_trace(mb);
		const char *mt = trace ? text_machine(&wb->m, name) : "-";
		used = put_escaped(mt, strlen(mt), cl->machine, attr);
		for (; used < cl->machine; used++)
			addch(' ');
		int ev = cl->events, dr = cl->drops;
		if (wb->m.worker_running || (!wb->m.scanned && wb->m.s)) {
			struct tm_progress pr;
			memset(&pr, 0, sizeof pr);
			tm_session_progress(wb->m.s, m, &pr);
			int bw = cl->align + ev + dr + 2 - 7 + (cl->missing ? cl->missing + 1 : 0);
			if (pr.is_scanned)
				snprintf(buf, sizeof buf, " scanned");
			else
				progress_bar(pr.done_bytes, pr.total_bytes, bw < 4 ? 4 : bw > 40 ? 40 : bw,
					     buf, sizeof buf);
			printw(" %s", buf);
		} else {
			char al[64] = "-";
			if (trace)
				text_align(&wb->m, name, al, sizeof al);
			printw(" %-*.*s ", cl->align, cl->align, al);
			int mi = cl->missing;
			if (mb && mb->error) {
				attrset(cur ? attr : theme_attr(ROLE_ERROR));
				printw("%*s %*s", ev, "error", dr, "");
			} else if (rf && !rf->is_predicted && wb->m.rep->error && text_is_timeline_file(rf)) {
				/* the import fails before reaching it */
				printw("%*s %*s", ev, "-", dr, "-");
				if (mi)
					printw(" %*s", mi, "-");
			} else if (rf && !rf->is_predicted && text_is_timeline_file(rf)) {
				/* not scanned: unknown, not zero */
				printw("%*s %*s", ev, "?", dr, "?");
				if (mi)
					printw(" %*s", mi, "?");
			} else if (rf && trace) {
				printw("%*llu ", ev, (unsigned long long)rf->events);
				if (rf->dropped && !cur)
					attrset(theme_attr(ROLE_WARNING));
				printw("%*llu", dr, (unsigned long long)rf->dropped);
				if (mi) {
					attrset(rf->missing && !cur ? theme_attr(ROLE_WARNING) : attr);
					printw(" %*llu", mi, (unsigned long long)rf->missing);
				}
			} else {
				printw("%*s %*s", ev, "-", dr, "-");
				if (mi)
					printw(" %*s", mi, "-");
			}
		}
		fill_to(y, x0 + w, attr);
	}
	tm_buf_fini(&label_buf);
}

/* Wrapped paragraphs from line skip on, at most max_lines lines.  When more
 * lines follow, the last one is cut: with the cut hint when wb is given
 * (the verdict: L shows it in full), else with a mark (the details: their
 * label says which lines show and which key shows more). */
static int
draw_paras(const struct wb *wb, const struct wb_paras *ps, int skip, int y, int x0, int w,
	   int max_lines, const char *marks)
{
	int used = 0;
	bool cut = ps->lines - skip > max_lines;

	for (size_t i = 0; i < ps->n && used < max_lines; i++) {
		const struct wb_para *p = &ps->p[i];
		size_t len = p->text ? strlen(p->text) : 0;
		if (skip >= (int)p->n_lines) {
			skip -= (int)p->n_lines;
			continue;
		}
		for (size_t k = (size_t)skip; k < p->n_lines && used < max_lines; k++) {
			move(y + used, x0);
			if (wb && cut && used == max_lines - 1) {
				put_or_hint(wb, p->text + p->start[k], len - p->start[k], w,
					    theme_attr(p->role), true);
			} else if (used == max_lines - 1 && p->start[k] + p->len[k] < len) {
				put_safe(p->text + p->start[k], len - p->start[k], NULL, 0, w,
					 theme_attr(p->role));
			} else {
				put_marked(p->text + p->start[k], p->len[k], theme_attr(p->role),
					   marks);
			}
			used++;
		}
		skip = 0;
	}
	return used;
}

static void
draw_details(const struct wb *wb, const struct wb_rect *r)
{
	const struct pane *p = &wb->ui.pane[PANE_DETAILS];

	rule(wb, r->y, r->x, r->x + r->w, wb->fr.details_label);
	if (r->h > 1)
		draw_paras(NULL, &wb->fr.details, (int)p->top, r->y + 1, r->x, r->w, r->h - 1,
			   search_marks(wb, PANE_DETAILS));
}

static void
draw_timeline(const struct wb *wb, const struct wb_rect *rc)
{
	int y0 = rc->y, h = rc->h, x0 = rc->x, w = rc->w;
	size_t sel = list_sel_row(&wb->ui);
	const struct tm_report *r = wb->m.rep;
	const struct wb_frame *fr = &wb->fr;
	const struct wb_tl_view *v = &fr->tl;
	int name_w = fr->tl_name_w, bar_w = fr->tl_bar_w;
	char label[480];
	size_t n_tl, first = 0, *rows;
	int bars = h - 1;

	if (!r || bar_w < 9 || h < 1) {
		rule(wb, y0, x0, x0 + w, "timeline");
		return;
	}
	rows = calloc(model_n_rows(&wb->m) + 1, sizeof *rows);
	n_tl = text_timeline_rows(&wb->m, rows, model_n_rows(&wb->m));
	/* One bar per file; when they do not fit, scroll to keep the selected
	 * file in view and say how many are off the strip. */
	if (bars < 0)
		bars = 0;
	if ((size_t)bars < n_tl) {
		size_t sel_k = 0;
		for (size_t k = 0; k < n_tl; k++)
			if (rows[k] <= sel)
				sel_k = k;
		if (bars > 0 && sel_k >= (size_t)bars)
			first = sel_k - (size_t)bars + 1;
	}
	size_t shown = n_tl - first < (size_t)bars ? n_tl - first : (size_t)bars;
	int o = snprintf(label, sizeof label, "%s", fr->timeline_label);
	if (shown < n_tl && o > 0 && (size_t)o < sizeof label)
		snprintf(label + o, sizeof label - (size_t)o, ", files %zu-%zu of %zu", first + 1,
			 first + shown, n_tl);
	rule(wb, y0, x0, x0 + w, label);
	/* Zero is a marker column of its own, between the time columns.  Every
	 * cell reads the file's two ranges (kept, dropped before zero), never
	 * its events: the cost is the strip's size. */
	int zero_col = v->zero_col;
	double end = v->v0 + v->span;
	struct tm_buf label_buf;
	tm_buf_init(&label_buf);
	for (size_t k = first; k < first + shown; k++) {
		size_t row = rows[k];
		const struct tm_report_file *rf = model_row_file(&wb->m, row);
		size_t name_len;
		const char *name = model_member_label(&wb->m, rf->member, &label_buf, &name_len);
		size_t fi = (size_t)(rf - r->files);
		const struct wb_drop_range *dr = wb->m.tl.drop ? &wb->m.tl.drop[fi] : NULL;
		bool has_drop_ts = dr && dr->has;
		int y = y0 + 1 + (int)(k - first);
		/* a file whose range is outside the window: an arrow to it */
		bool left = rf->has_ts && (double)rf->last_ts < v->v0;
		bool right = rf->has_ts && (double)rf->first_ts > end;

		move(y, x0);
		int used = put_name(name, name_len, name_w - 1,
				    row == sel ? theme_attr(ROLE_TITLE) : theme_attr(ROLE_DEFAULT));
		attrset(theme_attr(ROLE_DEFAULT));
		for (; used < name_w; used++)
			addch(' ');
		for (int c = 0; c < bar_w; c++) {
			double t0 = v->v0 + v->span * c / bar_w;
			double t1 = v->v0 + v->span * (c + 1) / bar_w;
			bool on = rf->has_ts && (double)rf->last_ts >= t0 &&
				  ((double)rf->first_ts < t1 ||
				   (c == bar_w - 1 && (double)rf->first_ts <= t1));
			bool before = t0 + t1 < 0.0; /* its middle is before zero */
			bool dropped_here = has_drop_ts && before && (double)dr->lo < t1 &&
					    (double)dr->hi >= t0;
			if (c == zero_col) {
				attrset(theme_attr(ROLE_ZERO));
				addstr(wb->ui.ascii ? "|" : "\xe2\x94\x82");
			}
			if (dropped_here) {
				attrset(theme_attr(ROLE_DROPPED));
				addstr(wb->ui.ascii ? "x" : "\xe2\x96\x91");
			} else if (on) {
				attrset(theme_attr(ROLE_BAR));
				addstr(wb->ui.ascii ? "#" : "\xe2\x96\x88");
			} else if ((left && c == 0) || (right && c == bar_w - 1)) {
				attrset(theme_attr(ROLE_BAR));
				addstr(left ? (wb->ui.ascii ? "<" : "\xe2\x97\x82")
					    : (wb->ui.ascii ? ">" : "\xe2\x96\xb8"));
			} else if (before) {
				attrset(theme_attr(ROLE_DIM));
				addstr(wb->ui.ascii ? ":" : "\xe2\x94\x84");
			} else {
				attrset(theme_attr(ROLE_DIM));
				addstr(wb->ui.ascii ? "." : "\xc2\xb7");
			}
		}
		if (zero_col >= bar_w) {
			attrset(theme_attr(ROLE_ZERO));
			addstr(zero_col == bar_w ? (wb->ui.ascii ? "|" : "\xe2\x94\x82") : ">");
		} else if (zero_col < 0) {
			addch(' ');
		}
		if (rf->missing || rf->dropped) {
			/* the events missing from the timeline (the dropped
			 * count is the list's DROPS) */
			attrset(theme_attr(ROLE_WARNING));
			printw(" -%llu", (unsigned long long)(rf->missing ? rf->missing : rf->dropped));
		} else if (!rf->is_predicted) {
			attrset(theme_attr(ROLE_DIM));
			printw(" ?");
		}
	}
	tm_buf_fini(&label_buf);
	free(rows);
	attrset(theme_attr(ROLE_DEFAULT));
}

/* One manifest line from column left on, within w columns: a mark where it
 * goes on to the left or the right (the label says which keys show it). */
static void
manifest_line(const char *s, size_t len, size_t left, int w, const char *marks)
{
	struct tm_buf b;
	struct tm_span sp[64];
	size_t n_sp = 0, i = 0;
	int c = 0, used = 0, total;

	tm_buf_init(&b);
	total = (int)tm_escape_display(s, len, &b, sp, 64, &n_sp);
	const char *e = b.data ? b.data : "";
	if (left > 0 && total > 0) {
		/* the mark takes the first column shown */
		while (i < b.len && c < (int)left + 1) {
			size_t k = text_utf8_len(e + i, b.len - i);
			c += text_char_cols(e + i, k);
			i += k;
		}
		attrset(theme_attr(ROLE_DIM));
		addstr(mark_left);
		used = 1;
	}
	bool more = total - c > w - used;
	size_t j = i;
	int cols = used;
	while (j < b.len) {
		size_t k = text_utf8_len(e + j, b.len - j);
		int cw = text_char_cols(e + j, k);
		if (cols + cw > w - (more ? 1 : 0))
			break;
		cols += cw;
		j += k;
	}
	bool esc = false;
	for (size_t q = 0; q < n_sp; q++)
		esc |= sp[q].end > i && sp[q].start < j;
	if (esc) {
		/* escapes shown in their role (no search marks on such a line) */
		struct tm_span loc[64];
		size_t n_loc = 0;
		for (size_t q = 0; q < n_sp; q++)
			if (sp[q].end > i && sp[q].start < j)
				loc[n_loc++] = (struct tm_span){sp[q].start > i ? sp[q].start - i : 0,
								 sp[q].end - i};
		put_text_cut(e + i, j - i, loc, n_loc, w - used, theme_attr(ROLE_DEFAULT), false);
	} else {
		put_marked(e + i, j - i, theme_attr(ROLE_DEFAULT), marks);
	}
	if (more) {
		attrset(theme_attr(ROLE_DIM));
		addstr(mark_right);
	}
	attrset(theme_attr(ROLE_DEFAULT));
	tm_buf_fini(&b);
}

static void
draw_manifest(const struct wb *wb, const struct wb_rect *rc)
{
	int y0 = rc->y, h = rc->h, x0 = rc->x, w = rc->w;
	const struct pane *p = &wb->ui.pane[PANE_MANIFEST];
	const struct tm_buf b = wb->fr.manifest_json;
	size_t line = 0, i = 0;
	int y = y0 + 1;
	const char *marks = search_marks(wb, PANE_MANIFEST);

	rule(wb, y0, x0, x0 + w, wb->fr.manifest_label);
	while (b.data && i < b.len && y < y0 + h) {
		size_t e = i;
		while (e < b.len && b.data[e] != '\n')
			e++;
		if (line >= p->top) {
			move(y, x0);
			manifest_line(b.data + i, e - i, p->left, w, marks);
			y++;
		}
		line++;
		i = e + 1;
	}
}

static void
draw_msg(const struct wb *wb, int y)
{
	move(y, 0);
	if (wb->ui.prompting) {
		int cur = wb->fr.prompt_cursor;
		attrset(theme_attr(ROLE_STATUS));
		/* escaped and scrolled sideways by the frame */
		put_text_cut(wb->fr.prompt, strlen(wb->fr.prompt), NULL, 0, COLS - 1,
			     theme_attr(ROLE_STATUS), false);
		if (!wb->run.headless) {
			curs_set(1);
			move(y, cur < COLS ? cur : COLS - 1);
		}
		return;
	}
	if (!wb->run.headless)
		curs_set(0);
	/* The whole row: nothing drawn before (help text) may show after it. */
	attrset(theme_attr(ROLE_DEFAULT));
	for (int x = 0; x < COLS; x++)
		mvaddch(y, x, ' ');
	move(y, 0);
	if (text_cols(wb->m.msg, strlen(wb->m.msg)) <= COLS) {
		put_escaped(wb->m.msg, strlen(wb->m.msg), COLS, theme_attr(wb->m.msg_role));
	} else {
		char *e = text_escape_cols(wb->m.msg, 1 << 16);
		put_or_hint(wb, e, strlen(e), COLS, theme_attr(wb->m.msg_role), false);
		free(e);
	}
}

static void
draw_keys(const struct wb *wb, int y)
{
	move(y, 0);
	put_text(wb->fr.hints, COLS, theme_attr(ROLE_KEY_HINT));
	fill_to(y, COLS, theme_attr(ROLE_KEY_HINT));
}

static void
draw_help(const struct wb *wb)
{
	const struct pane *p = &wb->ui.pane[PANE_HELP];
	size_t rows = pane_rows(p);

	move(0, 0);
	put_text(wb->fr.help_title, COLS, theme_attr(ROLE_TITLE));
	fill_to(0, COLS, theme_attr(ROLE_TITLE));
	for (size_t i = 0; i < rows && p->top + i < wb->fr.n_help; i++) {
		const char *line = wb->fr.help[p->top + i];
		int attr = theme_attr(wb->fr.help_role[p->top + i]);
		move(1 + (int)i, 0);
		if (wb->fr.help_escaped)
			put_safe(line, strlen(line), NULL, 0, COLS, attr);
		else
			put_text(line, COLS, attr);
	}
	draw_keys(wb, LINES - 1);
}

void
view_draw(const struct wb *wb)
{
	const struct wb_layout *lay = &wb->fr.lay;
	int rows = LINES, cols = COLS;

	marks_for(wb);
	erase();
	attrset(theme_attr(ROLE_DEFAULT));
	if (lay->too_small) {
		char buf[128];
		snprintf(buf, sizeof buf, "Terminal too small (%dx%d); tracemerge needs %dx%d.",
			 cols, rows, 60, 16);
		int last = wb->ui.prompting ? lay->msg_y : rows;
		/* wrapped at spaces: a word is cut only when longer than a line */
		for (int y = 0, o = 0, len = (int)strlen(buf); o < len && y < last; y++) {
			int n = len - o <= cols ? len - o : cols;
			if (n < len - o && buf[o + n] != ' ')
				for (int k = n; k > 0; k--)
					if (buf[o + k] == ' ') {
						n = k;
						break;
					}
			mvaddnstr(y, 0, buf + o, n);
			for (o += n; o < len && buf[o] == ' '; o++)
				;
		}
		/* An open prompt stays usable: its line, scrolled to the cursor. */
		if (wb->ui.prompting && lay->msg_y >= 0) {
			draw_msg(wb, lay->msg_y);
			if (!wb->run.headless)
				move(lay->msg_y, wb->fr.prompt_cursor < cols ? wb->fr.prompt_cursor
									      : cols - 1);
		}
		wnoutrefresh(stdscr);
		return;
	}
	if (wb->ui.help) {
		draw_help(wb);
		draw_msg(wb, lay->msg_y);
		wnoutrefresh(stdscr);
		return;
	}
	if (wb->ui.browse.on) {
		view_draw_browse(wb);
		draw_msg(wb, LINES - 2);
		wnoutrefresh(stdscr);
		return;
	}
	draw_title(wb);
	draw_list(wb, &lay->list);
	if (lay->details.h > 0)
		draw_details(wb, &lay->details);
	if (lay->timeline.h > 0)
		draw_timeline(wb, &lay->timeline);
	if (lay->manifest.h > 0)
		draw_manifest(wb, &lay->manifest);
	draw_paras(wb, &wb->fr.verdict, 0, lay->verdict_y, 0, cols, lay->verdict_h, NULL);
	if (lay->owner_h > 0)
		draw_paras(wb, &wb->fr.owner, 0, lay->verdict_y + lay->verdict_h, 0, cols, lay->owner_h,
			   NULL);
	draw_msg(wb, lay->msg_y);
	draw_keys(wb, lay->keys_y);
	attrset(theme_attr(ROLE_DEFAULT));
	if (wb->ui.prompting && !wb->run.headless)
		move(lay->msg_y, wb->fr.prompt_cursor < cols ? wb->fr.prompt_cursor : cols - 1);
	wnoutrefresh(stdscr);
}

/* ---- the opening screen ---- */

/* Our own text word-wrapped at cols from row y, at most max_rows rows;
 * returns the rows used. */
static int
put_wrapped(const char *s, int y, int cols, int max_rows, int attr)
{
	int used = 0;
	size_t len = strlen(s);

	while (len && used < max_rows && cols > 0) {
		size_t k = len <= (size_t)cols ? len : (size_t)cols;
		if (k < len) {
			size_t sp = k;
			while (sp > 0 && s[sp] != ' ')
				sp--;
			if (sp > 0)
				k = sp;
		}
		move(y + used, 0);
		put_escaped(s, k, cols, attr);
		used++;
		s += k;
		len -= k;
		while (len && *s == ' ') {
			s++;
			len--;
		}
	}
	return used;
}

/* "reading archive: 37 of ? members, 1.2 GiB of 3.4 GiB read, 5.6 GiB
 * inflated" */
static void
opening_progress(const struct wb *wb, char *buf, size_t len)
{
	const struct tm_listing_snap *sn = &wb->m.open_snap;
	char rd[32], tot[32], inf[32];
	size_t n = model_open_rows(&wb->m);

	text_fmt_size(sn->read_bytes, rd, sizeof rd);
	text_fmt_size(sn->input_bytes, tot, sizeof tot);
	text_fmt_size(sn->inflated_bytes, inf, sizeof inf);
	int o = snprintf(buf, len, "%s archive: %zu of ? member%s, %s of %s read",
			 sn->is_final ? "read the" : "reading", n, n == 1 ? "" : "s", rd, tot);
	if (sn->inflated_bytes && o > 0 && (size_t)o < len)
		snprintf(buf + o, len - (size_t)o, ", %s inflated", inf);
}

void
view_draw_opening(const struct wb *wb)
{
	const struct wb_opening *o = &wb->ui.opening;
	const struct tm_listing_snap *sn = &wb->m.open_snap;
	int rows = LINES, cols = COLS, attr = theme_attr(ROLE_TITLE);
	size_t n = model_open_rows(&wb->m), first = sn->n > 1 ? 1 : 0;
	int h = layout_opening_rows(rows);
	char buf[512];

	marks_for(wb);
	erase();
	scrollok(stdscr, FALSE);
	opening_progress(wb, buf, sizeof buf);
	if (h < 2 || cols < 30) { /* too small for more: the progress alone */
		move(0, 0);
		put_text(buf, cols, theme_attr(ROLE_INFO));
		wnoutrefresh(stdscr);
		return;
	}
	move(0, 0);
	attrset(attr);
	put_text(" tracemerge ", cols, attr);
	if (wb->m.open_n_paths == 1)
		put_escaped(wb->m.open_paths[0], strlen(wb->m.open_paths[0]), cols / 2, attr);
	else
		put_text("loose files", cols / 2, attr);
	snprintf(buf, sizeof buf, "  opening: %zu file%s so far", n, n == 1 ? "" : "s");
	put_text(buf, cols, attr);
	fill_to(0, cols, attr);

	if (o->help) {
		/* each paragraph in parentheses: clang's -Wstring-concatenation
		 * takes a literal split over lines for a missing comma */
		static const char *const help[] = {
			("The archive is being read: its members show as the listing finds them, "
			 "in the archive's own order (a compressed TAR or a ZIP is also scanned "
			 "as it passes)."),
			"",
			("trace_processor numbers and processes the members of each container by "
			 "priority (the manifest first, then protos) and name: that order (the # "
			 "column), the ids, the verdict, the timeline and every edit come when the "
			 "listing ends.  The rows keep their places; the one selected stays "
			 "selected."),
			"",
			("Meanwhile: q, Q or Ctrl-C stop reading and quit; j/k and the arrows, "
			 "PgDn/PgUp, g/G move; ? closes this help; Ctrl-L redraws."),
		};
		int y = 1;
		for (size_t i = 0; i < sizeof help / sizeof help[0] && y < rows - 4; i++)
			y += help[i][0] ? put_wrapped(help[i], y, cols, rows - 4 - y,
						      theme_attr(ROLE_DEFAULT))
					: 1;
	} else {
		int size_w = 10, fmt_w = 9, name_w = cols - 2 - fmt_w - size_w - 2;
		if (name_w < 8)
			name_w = 8;
		snprintf(buf, sizeof buf, "  %-*s %-*s %*s", name_w, "FILE", fmt_w, "FORMAT",
			 size_w, "SIZE");
		move(1, 0);
		put_text(buf, cols, theme_attr(ROLE_HEADER));
		fill_to(1, cols, theme_attr(ROLE_HEADER));
		if (n == 0) {
			move(2, 0);
			put_text("  (no member found yet)", cols, theme_attr(ROLE_DIM));
		}
		struct tm_buf label;
		tm_buf_init(&label);
		for (int r = 0; r < h && o->top + (size_t)r < n; r++) {
			size_t row = o->top + (size_t)r;
			const struct tm_listing_member *e = &sn->members[first + row];
			bool cur = row == o->sel;
			int a = cur ? theme_attr(ROLE_CURSOR)
				    : e->is_hidden ? theme_attr(ROLE_DIM) : theme_attr(ROLE_DEFAULT);
			int y = 2 + r;
			move(y, 0);
			attrset(a);
			addstr(cur ? "> " : "  ");
			tm_buf_reset(&label);
			model_open_label(&wb->m, first + row, &label);
			int used = put_name(label.data ? label.data : "", label.len, name_w, a);
			attrset(a);
			for (; used < name_w; used++)
				addch(' ');
			text_fmt_size(e->size, buf, sizeof buf);
			printw(" %-*.*s %*s", fmt_w, fmt_w,
			       tm_format_short_name(e->format), size_w, buf);
			fill_to(y, cols, a);
		}
		tm_buf_fini(&label);
	}
	opening_progress(wb, buf, sizeof buf);
	move(rows - 4, 0);
	put_text(buf, cols, theme_attr(ROLE_INFO));
	move(rows - 3, 0);
	put_text("Archive order; the processing order (#), ids and verdict come when the listing ends",
		 cols, theme_attr(ROLE_DIM));
	move(rows - 2, 0);
	if (o->note)
		put_text(o->note, cols, theme_attr(ROLE_WARNING));
	const struct wb_model *m = &wb->m;
	snprintf(buf, sizeof buf, " q quit  %s/%s move  %s/%s page  %s/%s first/last  %s help",
		 model_key(m, REQ_DOWN), model_key(m, REQ_UP), model_key(m, REQ_PAGE_DOWN),
		 model_key(m, REQ_PAGE_UP), model_key(m, REQ_FIRST), model_key(m, REQ_LAST),
		 model_key(m, REQ_HELP));
	move(rows - 1, 0);
	put_text(buf, cols, theme_attr(ROLE_KEY_HINT));
	fill_to(rows - 1, cols, theme_attr(ROLE_KEY_HINT));
	attrset(theme_attr(ROLE_DEFAULT));
	wnoutrefresh(stdscr);
}

/* The roles whose attribute is attr ("default" alone when it is the
 * default's): NO_COLOR and themes give several roles one look. */
static void
roles_of(int attr, struct tm_buf *out)
{
	const int mask = (int)A_ATTRIBUTES;
	int n = 0;

	if (attr == 0 || (theme_attr(ROLE_DEFAULT) & mask) == attr) {
		tm_buf_adds(out, "default");
		return;
	}
	for (int r = 0; r < ROLE__COUNT; r++) {
		if ((theme_attr((enum wb_role)r) & mask) != attr)
			continue;
		if (n < 3)
			tm_buf_addf(out, "%s%s", n ? "|" : "", theme_role_name((enum wb_role)r));
		n++;
	}
	if (n > 3)
		tm_buf_addf(out, "|+%d", n - 3);
	if (n == 0)
		tm_buf_addf(out, "attr:%#x", (unsigned)attr);
}

static int
cell_attr(int y, int x)
{
	cchar_t cc;
	attr_t at = 0;
	short pair = 0;
	wchar_t wc[CCHARW_MAX + 1];

	if (mvin_wch(y, x, &cc) == ERR || getcchar(&cc, wc, &at, &pair, NULL) == ERR)
		return 0;
	return (int)(((at & ~(attr_t)A_COLOR) | (attr_t)COLOR_PAIR(pair)) & A_ATTRIBUTES);
}

/* One line per row: "ROW: COL+LEN role ..." runs of the same attribute
 * (a trailing default run left out; with several roles of one look, up to
 * three names and how many more). */
static void
dump_roles(FILE *f)
{
	const int def = theme_attr(ROLE_DEFAULT) & (int)A_ATTRIBUTES;

	fprintf(f, "--- roles\n");
	for (int y = 0; y < LINES; y++) {
		struct tm_buf line;
		int x = 0;
		tm_buf_init(&line);
		while (x < COLS) {
			int a = cell_attr(y, x), x0 = x;
			if (a == 0)
				a = def;
			while (x < COLS && (cell_attr(y, x) == a || (cell_attr(y, x) == 0 && a == def)))
				x++;
			if (x == COLS && a == def)
				break;
			tm_buf_addf(&line, " %d+%d ", x0, x - x0);
			roles_of(a, &line);
		}
		fprintf(f, "%02d:%s\n", y, line.data ? line.data : "");
		tm_buf_fini(&line);
	}
}

bool
view_dump_screen(const struct wb *wb, const char *path, bool roles)
{
	FILE *f = fopen(path, "w");
	wchar_t *line;

	if (!f)
		return false;
	view_draw(wb);
	line = calloc((size_t)COLS + 1, sizeof *line);
	for (int y = 0; y < LINES; y++) {
		char out[8192];
		size_t o = 0;
		mbstate_t st;
		int n = mvinnwstr(y, 0, line, COLS);
		if (n < 0)
			n = 0;
		memset(&st, 0, sizeof st);
		for (int i = 0; i < n && line[i] && o + MB_CUR_MAX + 1 < sizeof out; i++) {
			size_t k = wcrtomb(out + o, line[i], &st);
			if (k == (size_t)-1)
				out[o++] = '?';
			else
				o += k;
		}
		while (o > 0 && out[o - 1] == ' ')
			o--;
		out[o] = 0;
		fprintf(f, "%s\n", out);
	}
	free(line);
	if (roles)
		dump_roles(f);
	fclose(f);
	return true;
}

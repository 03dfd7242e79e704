/* SPDX-License-Identifier: MIT */
/*
 * The layout, a pure function from the screen size and what each pane needs
 * (list rows, wrapped details lines, timeline bars, verdict and owner lines)
 * to rectangles; recomputed from scratch for every frame, so a resize is just
 * the next frame.  And the panes' own operations: a pane owns its geometry
 * (set from the layout), its selection and its scroll (htop's Panel, tig's
 * view ops), and the file list's lines through its filter.  No curses, no
 * state of its own: unit-testable.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "wb.h"

#define MIN_COLS 60
#define MIN_ROWS 16
#define SIDE_COLS 120 /* from here the manifest gets its own column */

static int
min_int(int a, int b)
{
	return a < b ? a : b;
}

static int
max_int(int a, int b)
{
	return a > b ? a : b;
}

int
layout_opening_rows(int rows)
{
	return rows > 6 ? rows - 6 : 0;
}

int
layout_left_cols(int cols)
{
	return cols >= SIDE_COLS ? cols * 3 / 5 : cols;
}

/* "> !" marks, then a space before every column but the first. */
int
layout_columns_extra(void)
{
	return 2 + 7;
}

void
layout_columns(const struct wb_cols *need, int w, struct wb_cols *out)
{
	*out = *need;
	int fixed = layout_columns_extra() + out->order + out->format + out->size + out->events +
		    out->drops + (out->missing ? out->missing + 1 : 0);
	int room = w - fixed; /* for name, machine and align */
	/* Names and machines give way first (in steps), never the numbers. */
	const int steps[][3] = {{24, 12, 10}, {20, 10, 8}, {16, 8, 6}, {12, 7, 5}, {8, 7, 5}};
	for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
		if (out->name + out->machine + out->align <= room)
			break;
		out->name = min_int(need->name, steps[k][0]);
		out->machine = min_int(need->machine, steps[k][1]);
		out->align = min_int(need->align, steps[k][2]);
	}
	if (out->name + out->machine + out->align > room) {
		/* the narrowest screens: names 4, machines and alignments to
		 * 5 in what is left (down to nothing: at 60 columns four
		 * 8-digit numbers leave 7), names the rest */
		out->name = min_int(need->name, 4);
		int l = max_int(room - out->name, 0);
		out->machine = min_int(min_int(need->machine, 5), l);
		out->align = min_int(min_int(need->align, 5), l - out->machine);
		out->name = max_int(out->name, room - out->machine - out->align);
	}
	/* What is left goes to the names (they are cut otherwise), then the
	 * machines, at most what they need; the rest trails. */
	int left = room - out->name - out->machine - out->align;
	if (left > 0) {
		int g = min_int(left, need->name - out->name);
		out->name += g;
		left -= g;
		out->machine += min_int(left, need->machine - out->machine);
	}
	if (out->name < 1)
		out->name = 1;
}

void
layout_timeline(const struct wb_tl_in *in, struct wb_tl_view *out)
{
	double lo = (double)in->lo, hi = (double)in->hi;
	int bar_w = in->bar_w > 1 ? in->bar_w : 1;
	if (hi <= lo)
		hi = lo + 1.0;
	/* A dropped region before zero narrower than a column still gets one,
	 * so it shows at 1x; the range grows to keep its end in view. */
	if (lo < 0 && -lo / (hi - lo) * bar_w < 1.0)
		lo = -(hi + 1.0) / (bar_w - 1 > 0 ? bar_w - 1 : 1) - 1.0;
	double full = hi - lo, span = full;
	for (int z = 0; z < in->zoom; z++)
		span /= 2.0;
	if (span < 1.0)
		span = 1.0;
	if (span > full)
		span = full;
	double half = span / full / 2.0;
	double c = in->center;
	if (!(c >= half)) /* NaN too */
		c = half;
	if (c > 1.0 - half)
		c = 1.0 - half;
	out->center = c;
	out->lo = lo;
	out->full = full;
	out->span = span;
	out->v0 = lo + c * full - span / 2.0;
	if (out->v0 < lo)
		out->v0 = lo;
	double z = (0.0 - out->v0) / span * bar_w;
	out->zero_col = z < -1.0 ? -1 : z > bar_w + 1.0 ? bar_w + 1 : (int)z;
}

/* Two panes sharing rest rows, each wanting need_a and need_b: each gets
 * what it needs when both fit; otherwise neither gets less than half (or
 * what it needs, when less), and what one leaves goes to the other.  The
 * first gets at least min_a. */
static void
fair_split(int rest, int need_a, int need_b, int min_a, int *a, int *b)
{
	if (rest < 0)
		rest = 0;
	if (need_a + need_b <= rest) {
		*a = need_a;
		*b = need_b;
		return;
	}
	int half = rest / 2;
	if (need_a <= half)
		*a = need_a;
	else if (need_b <= rest - half)
		*a = rest - need_b;
	else
		*a = rest - half; /* the first gets the odd row */
	*a = min_int(max_int(*a, min_int(min_a, rest)), rest);
	*b = min_int(need_b, rest - *a);
}

int
layout_hscroll(int total, int cursor, int width)
{
	if (width < 4 || total < width) /* the cursor may sit past the end */
		return 0;
	/* the cursor stays in view, a third of the width from the right edge
	 * once the text is longer than the line; never past the text's end */
	int start = cursor - (width - 1 - width / 3);
	if (start < 0)
		start = 0;
	if (start > total + 1 - width)
		start = total + 1 - width;
	if (cursor - start < 1 && start > 0) /* the left marker column */
		start = cursor - 1;
	return start < 0 ? 0 : start;
}

void
layout_compute(const struct wb_layout_in *in, struct wb_layout *out)
{
	int rows = in->rows, cols = in->cols;

	memset(out, 0, sizeof *out);
	out->msg_y = rows - 2;
	out->keys_y = rows - 1;
	if (rows < MIN_ROWS || cols < MIN_COLS) {
		out->too_small = true;
		return;
	}
	out->side = cols >= SIDE_COLS;
	out->left_cols = layout_left_cols(cols);
	int left_w = out->left_cols, right_x = out->side ? left_w + 1 : cols;

	/* Bottom: verdict, owner and warnings (wrapped, never cut while the
	 * screen has room), message, key hints. */
	int v_h = min_int(max_int(in->verdict_lines, 1), 4);
	int o_h = min_int(in->owner_lines, max_int(1, min_int(4, (rows - 12) / 4)));
	int bottom = v_h + o_h + 2;
	int avail = rows - 1 - bottom;
	if (avail < 8) { /* short screens: the owner block gives way first */
		o_h = max_int(0, o_h - (8 - avail));
		bottom = v_h + o_h + 2;
		avail = rows - 1 - bottom;
	}
	/* Middle: list, details, timeline, manifest, each from what it needs. */
	int n = in->n_list;
	int list_h = 1 + (n < 1 ? 1 : n);
	int list_max = max_int(3, (avail + 2) / 3);
	if (list_h > list_max)
		list_h = list_max;
	int rest = avail - list_h;
	int det_need = 1 + max_int(1, in->det_lines);
	int tl_need = 1 + max_int(1, in->n_timeline);
	int det_h, tl_h, man_h;
	if (out->side) {
		/* The details and the strip share the column fairly (the strip
		 * scrolls with the selection); focused details take more. */
		if (in->focus_details)
			det_h = min_int(det_need, max_int(3, rest - 2));
		else
			fair_split(rest, det_need, tl_need, 3, &det_h, &tl_h);
		tl_h = rest - det_h;
		man_h = 0;
		out->manifest = (struct wb_rect){1, right_x, avail, cols - right_x};
	} else if (in->focus_manifest) {
		/* The manifest takes the room of the details and the strip. */
		det_h = 0;
		tl_h = 0;
		man_h = rest;
	} else if (in->focus_details) {
		/* The details take the room they need; the strip and the
		 * manifest keep what is left. */
		det_h = min_int(det_need, max_int(3, rest - 1));
		tl_h = min_int(tl_need, max_int(0, rest - det_h - 1));
		man_h = rest - det_h - tl_h;
	} else {
		/* a row for the manifest's rule; the rest shared fairly */
		fair_split(rest - 1, det_need, tl_need, 3, &det_h, &tl_h);
		if (tl_h < 2 && rest - det_h >= 2) /* at least one bar */
			tl_h = 2;
		man_h = rest - det_h - tl_h;
		if (man_h < 0) {
			det_h += man_h;
			man_h = 0;
		}
		/* Room left over goes to the details first, then the manifest. */
		if (man_h > 1 && det_h < det_need) {
			int give = min_int(det_need - det_h, man_h - 1);
			det_h += give;
			man_h -= give;
		}
	}
	int y = 1;
	out->list = (struct wb_rect){y, 0, list_h, left_w};
	y += list_h;
	out->details = (struct wb_rect){y, 0, det_h, left_w};
	y += det_h;
	out->timeline = (struct wb_rect){y, 0, tl_h, left_w};
	y += tl_h;
	if (!out->side)
		out->manifest = (struct wb_rect){y, 0, man_h, left_w};
	out->verdict_y = rows - bottom;
	out->verdict_h = v_h;
	out->owner_h = o_h;
}

/* ---- panes ---- */

size_t
pane_rows(const struct pane *p)
{
	return p->h > 1 ? (size_t)(p->h - 1) : 0;
}

void
pane_clamp(struct pane *p)
{
	size_t rows = pane_rows(p);

	if (!p->has_sel) {
		if (rows < 1 || p->n <= rows)
			p->top = 0;
		else if (p->top > p->n - rows)
			p->top = p->n - rows;
		return;
	}
	if (p->n == 0) {
		p->sel = p->top = 0;
		return;
	}
	if (p->sel >= p->n)
		p->sel = p->n - 1;
	if (p->sel < p->top)
		p->top = p->sel;
	if (rows > 0 && p->sel >= p->top + rows)
		p->top = p->sel - (rows - 1);
	/* After a resize to more rows, show as many rows as fit. */
	if (rows > 0 && p->top > 0 && p->top + rows > p->n)
		p->top = p->n > rows ? p->n - rows : 0;
}

void
pane_move(struct pane *p, long delta)
{
	if (delta < 0)
		p->sel = (size_t)-delta > p->sel ? 0 : p->sel - (size_t)-delta;
	else
		p->sel += (size_t)delta;
	if (p->n == 0)
		p->sel = 0;
	else if (p->sel >= p->n)
		p->sel = p->n - 1;
}

void
pane_scroll(struct pane *p, long delta)
{
	if (delta < 0)
		p->top = (size_t)-delta > p->top ? 0 : p->top - (size_t)-delta;
	else
		p->top += (size_t)delta;
}

const char *
pane_find(const char *hay, size_t len, const char *pat)
{
	size_t n = pat ? strlen(pat) : 0;

	if (n == 0 || n > len)
		return n == 0 ? hay : NULL;
	for (size_t i = 0; i + n <= len; i++) {
		size_t k = 0;
		while (k < n && tolower((unsigned char)hay[i + k]) == tolower((unsigned char)pat[k]))
			k++;
		if (k == n)
			return hay + i;
	}
	return NULL;
}

/* ---- the file list through its filter ---- */

size_t
list_row(const struct wb_ui *ui, size_t i)
{
	const struct pane *p = &ui->pane[PANE_LIST];

	if (i >= p->n)
		return SIZE_MAX;
	return ui->shown_on ? ui->shown[i] : i;
}

size_t
list_sel_row(const struct wb_ui *ui)
{
	return list_row(ui, ui->pane[PANE_LIST].sel);
}

void
list_refresh(struct wb_ui *ui, const struct wb_model *m)
{
	struct pane *p = &ui->pane[PANE_LIST];
	size_t n = model_n_rows(m), keep = list_sel_row(ui);

	p->has_sel = true;
	ui->shown_on = false;
	if (!ui->filter) {
		p->n = n;
		if (keep != SIZE_MAX && keep < n)
			p->sel = keep;
		return;
	}
	if (ui->shown_cap < n + 1) {
		ui->shown_cap = n + 1;
		ui->shown = realloc(ui->shown, ui->shown_cap * sizeof *ui->shown);
		if (!ui->shown)
			abort();
	}
	p->n = 0;
	p->sel = 0;
	for (size_t r = 0; r < n; r++) {
		const char *name = model_row_name(m, r);
		if (!name || !pane_find(name, strlen(name), ui->filter))
			continue;
		if (r == keep)
			p->sel = p->n;
		ui->shown[p->n++] = r;
	}
	ui->shown_on = true;
}

bool
list_select_row(struct wb_ui *ui, size_t row)
{
	struct pane *p = &ui->pane[PANE_LIST];

	for (size_t i = 0; i < p->n; i++)
		if (list_row(ui, i) == row) {
			p->sel = i;
			return true;
		}
	return false;
}

/* SPDX-License-Identifier: MIT */
/* The workbench's pure layout functions (tui/wb_layout.c): the file list's
 * columns fit their content and the width; the timeline's window zooms,
 * pans and keeps its ends. */
#include "../../tui/wb_layout.c"

#include "t.h"

/* The list's functions read the model; these tests do not list. */
size_t
model_n_rows(const struct wb_model *m)
{
	(void)m;
	return 0;
}

const char *
model_row_name(const struct wb_model *m, size_t row)
{
	(void)m;
	(void)row;
	return "";
}

static int
total(const struct wb_cols *c)
{
	return layout_columns_extra() + c->order + c->name + c->format + c->size + c->machine +
	       c->align + c->events + c->drops;
}

static void
t_columns_fit(void)
{
	/* 8-digit counts, long names that differ at the end */
	struct wb_cols need = {2, 44, 8, 9, 12, 10, 8, 8}, c;
	int widths[] = {60, 72, 80, 100, 120, 200};
	for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
		layout_columns(&need, widths[i], &c);
		CHECK(total(&c) <= widths[i]);
		CHECK_INT(c.events, 8);
		CHECK_INT(c.drops, 8);
		CHECK_INT(c.order, 2);
		CHECK(c.name >= (widths[i] >= 72 ? 12 : 4));
	}
	/* room enough: everything as needed */
	layout_columns(&need, 200, &c);
	CHECK_INT(c.name, 44);
	CHECK_INT(c.machine, 12);
	/* the left pane at 120 columns (72): names before machines */
	layout_columns(&need, 72, &c);
	CHECK(c.name >= 16);
	/* short content: columns no wider than it */
	struct wb_cols small = {1, 8, 4, 5, 7, 5, 6, 5};
	layout_columns(&small, 120, &c);
	CHECK_INT(c.name, 8);
	CHECK_INT(c.events, 6);
}

static void
t_timeline_window(void)
{
	struct wb_tl_view v;
	struct wb_tl_in in = {0, 1000, 0, 0.5, 100};
	layout_timeline(&in, &v);
	CHECK(v.v0 == 0.0 && v.span == 1000.0);
	CHECK_INT(v.zero_col, 0);
	/* zoomed at 0.9: the window stays inside the range */
	in.zoom = 1;
	in.center = 0.9;
	layout_timeline(&in, &v);
	CHECK(v.span == 500.0 && v.v0 == 500.0);
	CHECK(v.center == 0.75);
	/* panned left from there */
	in.center = v.center - v.span / v.full / 4.0;
	layout_timeline(&in, &v);
	CHECK(v.v0 == 375.0);
	/* zoom out again: the whole range whatever the center */
	in.zoom = 0;
	layout_timeline(&in, &v);
	CHECK(v.v0 == 0.0 && v.span == 1000.0);
	/* a dropped region a hair before zero gets a column, and the end of
	 * the range stays in the window */
	struct wb_tl_in neg = {-1, 1000000, 0, 0.5, 50};
	layout_timeline(&neg, &v);
	CHECK(v.zero_col >= 1);
	CHECK(v.v0 + v.span >= 1000000.0);
	CHECK(v.v0 <= -1.0);
	/* deep zoom: never narrower than a nanosecond */
	struct wb_tl_in deep = {0, 10, 40, 0.5, 80};
	layout_timeline(&deep, &v);
	CHECK(v.span >= 1.0);
}

int
main(void)
{
	RUN(t_columns_fit);
	RUN(t_timeline_window);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* The workbench's pure layout functions (tui/wb_layout.c): the file list's
 * columns fit their content and the width; the timeline's window zooms,
 * pans and keeps its ends.  And wb_text.c's size column. */
#include "../../tui/wb_layout.c"
#include "../../tui/wb_text.c"

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

/* wb_text.c's model readers: not called by the formatters tested here */
const char *
model_member_name(const struct wb_model *m, size_t member)
{
	(void)m;
	(void)member;
	abort();
}

const struct tm_manifest_file *
model_manifest_file(const struct wb_model *m, const char *path)
{
	(void)m;
	(void)path;
	abort();
}

bool
model_ref_follows(const struct wb_model *m, const char *ref)
{
	(void)m;
	(void)ref;
	abort();
}

const char *
model_key(const struct wb_model *m, enum wb_request r)
{
	(void)m;
	(void)r;
	abort();
}

static int
total(const struct wb_cols *c)
{
	return layout_columns_extra() + c->order + c->name + c->format + c->size + c->machine +
	       c->align + c->events + c->drops + (c->missing ? c->missing + 1 : 0);
}

static void
t_columns_fit(void)
{
	/* 8-digit counts, long names that differ at the end */
	struct wb_cols need = {2, 44, 8, 9, 12, 10, 8, 8, 0}, c;
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
	struct wb_cols small = {1, 8, 4, 5, 7, 5, 6, 5, 0};
	layout_columns(&small, 120, &c);
	CHECK_INT(c.name, 8);
	CHECK_INT(c.events, 6);
	/* the MISSING column (events missing that are not the dropped count)
	 * is a number: never cut, the names give way; at 60 columns four
	 * 8-digit numbers leave 7 for the name, machine and alignment: the
	 * name keeps 4, the machine 3, the alignment none */
	need.missing = 8;
	for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
		layout_columns(&need, widths[i], &c);
		CHECK(total(&c) <= widths[i]);
		CHECK_INT(c.missing, 8);
		CHECK_INT(c.drops, 8);
		CHECK(c.name >= 4);
	}
	layout_columns(&need, 60, &c);
	CHECK_INT(c.machine, 3);
	CHECK_INT(c.align, 0);
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

/* Many files at 120x35: the details keep a fair share beside the strip
 * (they had 3 rows while the strip asked for a row per file). */
static void
t_fair_split(void)
{
	struct wb_layout lay;
	struct wb_layout_in in = {.rows = 35, .cols = 120, .n_list = 30, .det_lines = 12,
				  .n_timeline = 30, .verdict_lines = 2, .owner_lines = 2};
	layout_compute(&in, &lay);
	CHECK(lay.side);
	int rest = lay.details.h + lay.timeline.h;
	CHECK(lay.details.h >= rest / 2);
	CHECK(lay.timeline.h >= rest / 2 - 1);
	CHECK_INT(lay.details.y + lay.details.h, lay.timeline.y);
	/* the details need little: the strip takes the rest */
	in.det_lines = 2;
	layout_compute(&in, &lay);
	CHECK_INT(lay.details.h, 3);
	/* 80x24, the manifest below: fair too, and every row used */
	in.rows = 24;
	in.cols = 80;
	in.det_lines = 12;
	layout_compute(&in, &lay);
	CHECK(!lay.side);
	CHECK(lay.details.h >= 4);
	CHECK(lay.timeline.h >= 4);
	CHECK(lay.manifest.h >= 1);
	CHECK_INT(lay.manifest.y + lay.manifest.h, lay.verdict_y);
	/* few files, both fit: each gets what it needs */
	in.rows = 35;
	in.cols = 120;
	in.n_list = 4;
	in.n_timeline = 4;
	in.det_lines = 6;
	layout_compute(&in, &lay);
	CHECK_INT(lay.details.h, 7);
}

/* The prompt line's sideways scroll keeps the cursor in view. */
static void
t_hscroll(void)
{
	CHECK_INT(layout_hscroll(30, 30, 39), 0);
	for (int total = 0; total < 200; total++)
		for (int cur = 0; cur <= total; cur++) {
			int w = 39, s = layout_hscroll(total, cur, w);
			CHECK(s >= 0);
			CHECK(cur - s < w);
			CHECK(s == 0 || cur - s >= 1);
			if (total < w)
				CHECK_INT(s, 0);
		}
	/* typing at the end: the text's end stays at the cursor */
	int s = layout_hscroll(100, 100, 40);
	CHECK(100 - s <= 39 && 100 - s >= 20);
}

/* A size column: an inflated stream's size not known yet is "?", not
 * UINT64_MAX bytes (it showed as "17179869184.0 GiB"). */
static void
t_fmt_size(void)
{
	char buf[32];
	text_fmt_size(UINT64_MAX, buf, sizeof buf);
	CHECK_STR(buf, "?");
	text_fmt_size(1023, buf, sizeof buf);
	CHECK_STR(buf, "1023 B");
	text_fmt_size(256ull << 20, buf, sizeof buf);
	CHECK_STR(buf, "256.0 MiB");
	text_fmt_size(UINT64_MAX - 1, buf, sizeof buf);
	CHECK(strstr(buf, "GiB") != NULL);
}

int
main(void)
{
	RUN(t_fmt_size);
	RUN(t_fair_split);
	RUN(t_hscroll);
	RUN(t_columns_fit);
	RUN(t_timeline_window);
	return 0;
}

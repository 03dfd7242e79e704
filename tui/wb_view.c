/* SPDX-License-Identifier: MIT */
/*
 * Drawing: the layout is recomputed from LINES/COLS on every frame (so a
 * resize is just the next frame), then title, member list, details of the
 * selected file, timeline strip, manifest pane, verdict, timeline owner,
 * message/prompt and key hints.  Every untrusted string goes through
 * tm_escape_display (view_put_escaped); every number comes from the report.
 * view_dump_screen writes the screen back as text for the golden tests.
 */
#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "wb.h"

#define MIN_COLS 60
#define MIN_ROWS 16

/* Columns of one UTF-8 character of already-escaped (printable) text. */
static int
char_cols(const char *p, size_t n)
{
	struct tm_buf b;
	char tmp[8] = "a";
	size_t w;

	if (n == 1)
		return 1;
	memcpy(tmp + 1, p, n);
	tm_buf_init(&b);
	w = tm_escape_display(tmp, n + 1, &b, NULL, 0, NULL);
	tm_buf_fini(&b);
	return w > 0 ? (int)w - 1 : 0;
}

static size_t
utf8_len(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if (c >= 0xF0)
		return 4;
	if (c >= 0xE0)
		return 3;
	return 2;
}

/* Draw escaped text s (already safe) within max_cols; spans in escape role. */
static int
put_safe(const char *s, size_t len, const struct tm_span *sp, size_t n_sp, int max_cols,
	 int base_attr)
{
	int used = 0;
	size_t i = 0, k = 0;

	while (i < len) {
		size_t n = utf8_len((unsigned char)s[i]);
		int w;
		bool in_span;

		if (i + n > len)
			n = len - i;
		w = char_cols(s + i, n);
		while (k < n_sp && sp[k].end <= i)
			k++;
		in_span = k < n_sp && sp[k].start <= i && i < sp[k].end;
		/* Leave one column for the truncation marker when more follows. */
		if (used + w > max_cols || (i + n < len && used + w == max_cols && max_cols > 0)) {
			if (used < max_cols) {
				attrset(theme_attr(ROLE_DIM));
				addch('~');
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

int
view_put_escaped(const char *s, size_t len, int max_cols, int base_attr)
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

char *
view_escape_cols(const char *s, int max_cols)
{
	struct tm_buf b, out;
	size_t i = 0;
	int used = 0;

	tm_buf_init(&b);
	tm_buf_init(&out);
	tm_escape_display(s ? s : "", s ? strlen(s) : 0, &b, NULL, 0, NULL);
	while (b.data && i < b.len) {
		size_t n = utf8_len((unsigned char)b.data[i]);
		int w = char_cols(b.data + i, n);
		if (used + w > max_cols) {
			tm_buf_addc(&out, '~');
			break;
		}
		tm_buf_add(&out, b.data + i, n);
		used += w;
		i += n;
	}
	tm_buf_fini(&b);
	return tm_buf_steal(&out);
}

/* Trusted (our own) text. */
static int
put_text(const char *s, int max_cols, int attr)
{
	return view_put_escaped(s, strlen(s), max_cols, attr);
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
rule(struct wb *wb, int y, int x0, int x1, const char *label)
{
	int attr = theme_attr(ROLE_HEADER);

	move(y, x0);
	attrset(attr);
	for (int x = x0; x < x1; x++)
		addstr(wb->ascii ? "-" : "\xe2\x94\x80");
	if (label) {
		move(y, x0 + 2);
		put_text(" ", 1, attr);
		int w = view_put_escaped(label, strlen(label), x1 - x0 - 6, attr);
		(void)w;
		put_text(" ", 1, attr);
	}
}

static void
fmt_size(uint64_t n, char *buf, size_t len)
{
	if (n < 1024)
		snprintf(buf, len, "%llu B", (unsigned long long)n);
	else if (n < 1024 * 1024)
		snprintf(buf, len, "%.1f KiB", (double)n / 1024.0);
	else if (n < 1024ull * 1024 * 1024)
		snprintf(buf, len, "%.1f MiB", (double)n / (1024.0 * 1024.0));
	else
		snprintf(buf, len, "%.1f GiB", (double)n / (1024.0 * 1024.0 * 1024.0));
}

static void
fmt_dur(int64_t ns, char *buf, size_t len)
{
	struct tm_buf b;

	tm_buf_init(&b);
	tm_format_duration_ns(ns, &b);
	snprintf(buf, len, "%s", b.data ? b.data : "");
	tm_buf_fini(&b);
}

/* The manifest's entry for a path, or NULL (const). */
static const struct tm_manifest_file *
man_file(const struct wb *wb, const char *path)
{
	for (size_t i = 0; path && i < wb->man.n_files; i++)
		if (wb->man.files[i].path && strcmp(wb->man.files[i].path, path) == 0)
			return &wb->man.files[i];
	return NULL;
}

static void
align_text(const struct wb *wb, const char *path, char *buf, size_t len)
{
	const struct tm_manifest_file *f = man_file(wb, path);
	char d[64];

	if (!f || !f->has_clocks) {
		snprintf(buf, len, "auto");
		return;
	}
	fmt_dur(f->clocks.offset_ns, d, sizeof d);
	snprintf(buf, len, "%s", d);
}

static const char *
machine_text(const struct wb *wb, const char *path)
{
	const struct tm_manifest_file *f = man_file(wb, path);

	if (!f)
		return "Default";
	if (f->machine_name)
		return f->machine_name[0] ? f->machine_name : "(unnamed)";
	if (f->has_machines)
		return "(by id)";
	return "Default";
}

/* ---- panes ---- */

static void
draw_title(struct wb *wb)
{
	char buf[256];
	int attr = theme_attr(ROLE_TITLE);
	size_t n = wb_n_rows(wb);

	move(0, 0);
	attrset(attr);
	put_text(" tracemerge ", COLS, attr);
	if (wb->n_paths == 1)
		view_put_escaped(wb->paths[0], strlen(wb->paths[0]), COLS / 2, attr);
	else if (wb->n_paths > 1)
		put_text("loose files", COLS / 2, attr);
	snprintf(buf, sizeof buf, "  %zu file%s%s", n, n == 1 ? "" : "s",
		 edit_is_dirty(wb) ? "  [modified]" : "");
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
draw_list(struct wb *wb, int y0, int h, int x0, int w)
{
	size_t n = wb_n_rows(wb);
	int name_w = w - 59; /* the other columns take 59 */
	char buf[256];

	if (name_w < 8)
		name_w = 8;
	/* Nothing may wrap: a wrapped row would land on the next one. */
	scrollok(stdscr, FALSE);
	attrset(theme_attr(ROLE_HEADER));
	move(y0, x0);
	snprintf(buf, sizeof buf, "  %-*s %-8s %9s %-12s %-10s %7s %5s", name_w, "FILE", "FORMAT",
		 "SIZE", "MACHINE", "ALIGN", "EVENTS", "DROPS");
	put_text(buf, w, theme_attr(ROLE_HEADER));
	fill_to(y0, x0 + w, theme_attr(ROLE_HEADER));
	if (wb->sel >= n && n > 0)
		wb->sel = n - 1;
	if (wb->sel < wb->top)
		wb->top = wb->sel;
	if (h > 1 && wb->sel >= wb->top + (size_t)(h - 1))
		wb->top = wb->sel - (size_t)(h - 2);
	for (int r = 0; r + 1 < h; r++) {
		size_t row = wb->top + (size_t)r;
		int y = y0 + 1 + r;
		bool cur = row == wb->sel;
		int attr = cur ? theme_attr(wb->focus_manifest ? ROLE_CURSOR_BLUR : ROLE_CURSOR)
			       : theme_attr(ROLE_DEFAULT);
		size_t m;
		const struct tm_member *mb;
		const struct tm_report_file *rf;
		const char *name;
		int used;

		if (row >= n)
			break;
		m = wb_row_member(wb, row);
		mb = tm_session_member(wb->s, m);
		rf = wb_row_file(wb, row);
		name = wb_member_name(wb, m);
		move(y, x0);
		attrset(attr);
		addstr(cur ? "> " : "  ");
		used = view_put_escaped(name, mb && mb->name ? mb->name_len : strlen(name), name_w,
					attr);
		for (; used < name_w; used++)
			addch(' ');
		fmt_size(mb ? mb->size : 0, buf, sizeof buf);
		char fmt[16];
		snprintf(fmt, sizeof fmt, "%s",
			 mb ? (mb->format == TM_FMT_PROTO ? "Perfetto" : tm_format_name(mb->format))
			    : "?");
		printw(" %-8.8s %9s ", fmt, buf);
		used = view_put_escaped(machine_text(wb, name), strlen(machine_text(wb, name)), 12,
					attr);
		for (; used < 12; used++)
			addch(' ');
		if (wb->worker_running || (!wb->scanned && wb->s)) {
			struct tm_progress p;
			memset(&p, 0, sizeof p);
			tm_session_progress(wb->s, m, &p);
			if (p.is_scanned)
				snprintf(buf, sizeof buf, " scanned");
			else
				progress_bar(p.done_bytes, p.total_bytes, 12, buf, sizeof buf);
			printw(" %s", buf);
		} else {
			char al[64];
			align_text(wb, name, al, sizeof al);
			printw(" %-10.10s ", al);
			if (mb && mb->error) {
				attrset(cur ? attr : theme_attr(ROLE_ERROR));
				printw("%7s %5s", "error", "");
			} else if (rf && !rf->is_predicted && rf->is_trace) {
				printw("%7s %5s", "n/a", "");
			} else if (rf) {
				printw("%7llu ", (unsigned long long)rf->events);
				if (rf->dropped && !cur)
					attrset(theme_attr(ROLE_WARNING));
				printw("%5llu", (unsigned long long)rf->dropped);
			} else {
				printw("%7s %5s", "-", "-");
			}
		}
		fill_to(y, x0 + w, attr);
	}
}

static int
wrap_text(const char *s, int y, int x0, int w, int max_lines, int attr)
{
	/* Word-wrap our own (trusted, ASCII) text; untrusted parts are escaped. */
	char *e = view_escape_cols(s, 4096);
	size_t len = strlen(e), i = 0;
	int lines = 0;

	while (i < len && lines < max_lines) {
		size_t take = len - i;
		if (take > (size_t)w) {
			take = (size_t)w;
			size_t sp = take;
			while (sp > 0 && e[i + sp] != ' ')
				sp--;
			if (sp > (size_t)w / 3)
				take = sp;
		}
		move(y + lines, x0);
		if (lines == max_lines - 1 && i + take < len) {
			view_put_escaped(e + i, len - i, w, attr);
		} else {
			attrset(attr);
			addnstr(e + i, (int)take);
		}
		i += take;
		while (i < len && e[i] == ' ')
			i++;
		lines++;
	}
	free(e);
	return lines;
}

static void
draw_details(struct wb *wb, int y0, int h, int x0, int w)
{
	size_t n = wb_n_rows(wb);
	const struct tm_report_file *rf;
	const struct tm_member *mb;
	const char *name;
	struct tm_buf b;
	char tmp[128];
	int y = y0 + 1;

	if (n == 0) {
		rule(wb, y0, x0, x0 + w, "details");
		return;
	}
	name = wb_member_name(wb, wb_row_member(wb, wb->sel));
	mb = tm_session_member(wb->s, wb_row_member(wb, wb->sel));
	rf = wb_row_file(wb, wb->sel);
	rule(wb, y0, x0, x0 + w, name);
	tm_buf_init(&b);
	if (mb && mb->error) {
		tm_buf_addf(&b, "error: %s", mb->error);
		move(y, x0);
		view_put_escaped(b.data, b.len, w, theme_attr(ROLE_ERROR));
		y++;
		tm_buf_reset(&b);
	}
	if (rf) {
		tm_buf_adds(&b, "clocks: ");
		for (size_t i = 0; i < rf->n_clocks; i++)
			tm_buf_addf(&b, "%s%s", i ? ", " : "", tm_clock_name(rf->clocks[i]));
		if (rf->n_clocks == 0)
			tm_buf_adds(&b, "none (private clock)");
		if (rf->n_machines > 1 || (rf->n_machines == 1 && rf->machines[0] != 0)) {
			tm_buf_adds(&b, "  machine rows: ");
			for (size_t i = 0; i < rf->n_machines; i++)
				tm_buf_addf(&b, "%s%u", i ? "," : "", rf->machines[i]);
		}
		if (rf->has_ts) {
			char a[64], c[64];
			fmt_dur(rf->first_ts, a, sizeof a);
			fmt_dur(rf->last_ts, c, sizeof c);
			tm_buf_addf(&b, "  range: %s .. %s", a, c);
		}
		if (y < y0 + h) {
			move(y++, x0);
			view_put_escaped(b.data, b.len, w, theme_attr(ROLE_CLOCK));
		}
		tm_buf_reset(&b);
	}
	/* machine, ids, alignment in words */
	{
		const struct tm_manifest_file *f = man_file(wb, name);
		tm_buf_addf(&b, "machine: %s", machine_text(wb, name));
		if (f && f->has_machines) {
			size_t unnamed = 0;
			tm_buf_adds(&b, "  ids:");
			for (size_t i = 0; i < f->n_machines; i++) {
				const char *nm = f->machines[i].name;
				bool blank = !nm || !nm[strspn(nm, " \t")];
				unnamed += blank;
				tm_buf_addf(&b, " %u->%s", f->machines[i].id, blank ? "(unnamed)" : nm);
			}
			size_t total = f->n_machines;
			/* Embedded ids the manifest does not name yet. */
			for (size_t j = 0; rf && wb->rep && j < rf->n_machines; j++) {
				bool named = false;
				uint64_t raw = UINT64_MAX;
				/* report ids are machine-table ids: compare raw ids */
				for (size_t k = 0; k < wb->rep->n_machines; k++)
					if (wb->rep->machines[k].id == rf->machines[j])
						raw = wb->rep->machines[k].raw_id;
				if (raw > UINT32_MAX)
					continue; /* a manifest-named machine, not an embedded id */
				for (size_t i = 0; i < f->n_machines; i++)
					named |= f->machines[i].id == raw;
				if (!named) {
					unnamed++;
					total++;
					tm_buf_addf(&b, " %llu->(unnamed)", (unsigned long long)raw);
				}
			}
			if (unnamed)
				tm_buf_addf(&b, "  (note: %zu of %zu ids unnamed)", unnamed, total);
		} else if (rf && rf->n_machines > 1) {
			tm_buf_adds(&b, "  ids unnamed (press i to name them)");
		}
		if (f && f->has_clocks) {
			fmt_dur(f->clocks.offset_ns, tmp, sizeof tmp);
			tm_buf_addf(&b, "  align: %s%s vs %s", tmp,
				    f->clocks.offset_ns > 0   ? " (moves later)"
				    : f->clocks.offset_ns < 0 ? " (moves earlier)"
							      : "",
				    f->clocks.sync_file ? f->clocks.sync_file : "?");
			if (f->clocks.sync_clock)
				tm_buf_addf(&b, ":%s", tm_clock_name(f->clocks.sync_clock));
			if (f->clocks.sync_machine)
				tm_buf_addf(&b, "@%s", f->clocks.sync_machine);
			tm_buf_addf(&b, " clock %s",
				    f->clocks.clock ? tm_clock_name(f->clocks.clock) : "PIN");
		} else {
			tm_buf_adds(&b, "  align: automatic");
		}
		if (y < y0 + h) {
			move(y++, x0);
			view_put_escaped(b.data, b.len, w, theme_attr(ROLE_MACHINE));
		}
		tm_buf_reset(&b);
	}
	if (rf && rf->placement && y < y0 + h) {
		tm_buf_addf(&b, "placed: %s", rf->placement);
		y += wrap_text(b.data, y, x0, w, y0 + h - y, theme_attr(ROLE_DEFAULT));
		tm_buf_reset(&b);
	} else if (!rf && y < y0 + h) {
		move(y++, x0);
		put_text(wb->worker_running ? "Analyzing..." : "not evaluated", w,
			 theme_attr(ROLE_DIM));
	}
	tm_buf_fini(&b);
}

static void
draw_timeline(struct wb *wb, int y0, int h, int x0, int w)
{
	const struct tm_report *r = wb->rep;
	int64_t lo = 0, hi = 1;
	int name_w = 14, bar_w = w - name_w - 8;
	char label[128], d[64];
	size_t nshow;

	if (!r || bar_w < 10) {
		rule(wb, y0, x0, x0 + w, "timeline");
		return;
	}
	for (size_t i = 0; i < r->n_files; i++) {
		if (!r->files[i].has_ts)
			continue;
		if (r->files[i].first_ts < lo)
			lo = r->files[i].first_ts;
		if (r->files[i].last_ts > hi)
			hi = r->files[i].last_ts;
	}
	for (size_t i = 0; i < r->n_events; i++)
		if (r->events[i].dropped && r->events[i].ts < lo)
			lo = r->events[i].ts;
	double span = (double)(hi - lo);
	for (int z = 0; z < wb->zoom; z++)
		span /= 2.0;
	if (span < 1.0)
		span = 1.0;
	fmt_dur((int64_t)span, d, sizeof d);
	snprintf(label, sizeof label, "timeline: %d column%s = %s  (zoom %dx, +/-)", bar_w,
		 bar_w == 1 ? "" : "s", d, 1 << wb->zoom);
	rule(wb, y0, x0, x0 + w, label);
	nshow = 0;
	int zero_col = (int)((double)(0 - lo) / span * bar_w);
	for (size_t row = 0; row < wb_n_rows(wb) && (int)nshow + 1 < h; row++) {
		const struct tm_report_file *rf = wb_row_file(wb, row);
		const char *name;
		int y = y0 + 1 + (int)nshow;
		int64_t dlo = 0;
		bool has_drop_ts = false;

		if (!rf || !rf->is_trace)
			continue;
		/* Keep the selected file in view when the strip is short. */
		if (wb->sel >= (size_t)(h - 1) && row + (size_t)(h - 1) <= wb->sel)
			continue;
		name = wb_member_name(wb, rf->member);
		move(y, x0);
		int used = view_put_escaped(name, strlen(name), name_w - 1,
					    row == wb->sel ? theme_attr(ROLE_TITLE)
							   : theme_attr(ROLE_DEFAULT));
		for (; used < name_w; used++)
			addch(' ');
		for (size_t i = 0; i < r->n_events; i++) {
			const struct tm_report_event *ev = &r->events[i];
			if (&r->files[ev->file] == rf && ev->dropped && ev->ts < dlo) {
				dlo = ev->ts;
				has_drop_ts = true;
			}
		}
		for (int c = 0; c < bar_w; c++) {
			double t0 = (double)lo + span * c / bar_w;
			double t1 = (double)lo + span * (c + 1) / bar_w;
			bool on = rf->has_ts && (double)rf->last_ts >= t0 &&
				  ((double)rf->first_ts < t1 ||
				   (c == bar_w - 1 && (double)rf->first_ts <= t1));
			bool before = t1 <= 0.0;
			bool dropped_here = has_drop_ts && before && (double)dlo < t1;
			if (c == zero_col) {
				attrset(theme_attr(ROLE_ZERO));
				addstr(wb->ascii ? "|" : "\xe2\x94\x82");
			} else if (dropped_here) {
				attrset(theme_attr(ROLE_DROPPED));
				addstr(wb->ascii ? "x" : "\xe2\x96\x91");
			} else if (on) {
				attrset(theme_attr(ROLE_BAR));
				addstr(wb->ascii ? "#" : "\xe2\x96\x88");
			} else if (before) {
				attrset(theme_attr(ROLE_DIM));
				addstr(wb->ascii ? ":" : "\xe2\x96\x91");
			} else {
				attrset(theme_attr(ROLE_DIM));
				addstr(wb->ascii ? "." : "\xc2\xb7");
			}
		}
		if (rf->dropped) {
			attrset(theme_attr(ROLE_WARNING));
			printw(" -%llu", (unsigned long long)rf->dropped);
		}
		nshow++;
	}
	attrset(theme_attr(ROLE_DEFAULT));
}

static void
draw_manifest(struct wb *wb, int y0, int h, int x0, int w)
{
	struct tm_buf b;
	size_t line = 0, i = 0;
	int y = y0 + 1;
	char label[64];

	tm_buf_init(&b);
	tm_manifest_emit(&wb->man, &b);
	snprintf(label, sizeof label, "manifest%s%s",
		 tm_manifest_is_trivial(&wb->man) ? " (trivial: not written to the TAR)" : "",
		 wb->focus_manifest ? " [focus]" : "");
	rule(wb, y0, x0, x0 + w, label);
	while (b.data && i < b.len && y < y0 + h) {
		size_t e = i;
		while (e < b.len && b.data[e] != '\n')
			e++;
		if (line >= wb->man_scroll) {
			/* Printable ASCII (JSON's own escapes included) is drawn as
			 * is; anything else goes through the one escaping function. */
			int used = 0;
			size_t j = i;
			move(y, x0);
			while (j < e && used < w) {
				size_t k = j;
				if ((unsigned char)b.data[j] >= 0x20 && (unsigned char)b.data[j] < 0x7f) {
					while (k < e && (unsigned char)b.data[k] >= 0x20 &&
					       (unsigned char)b.data[k] < 0x7f)
						k++;
					size_t take = k - j;
					if ((int)take > w - used) {
						take = (size_t)(w - used - 1);
						attrset(theme_attr(ROLE_DEFAULT));
						addnstr(b.data + j, (int)take);
						attrset(theme_attr(ROLE_DIM));
						addch('~');
						used = w;
						break;
					}
					attrset(theme_attr(ROLE_DEFAULT));
					addnstr(b.data + j, (int)take);
					used += (int)take;
				} else {
					while (k < e && !((unsigned char)b.data[k] >= 0x20 &&
							  (unsigned char)b.data[k] < 0x7f))
						k++;
					used += view_put_escaped(b.data + j, k - j, w - used,
								 theme_attr(ROLE_DEFAULT));
				}
				j = k;
			}
			y++;
		}
		line++;
		i = e + 1;
	}
	if (wb->man_scroll > 0 && wb->man_scroll >= line)
		wb->man_scroll = line ? line - 1 : 0;
	tm_buf_fini(&b);
}

static void
draw_verdict(struct wb *wb, int y0, int h)
{
	const struct tm_report *r = wb->rep;
	struct tm_buf b;
	int y = y0;

	tm_buf_init(&b);
	move(y, 0);
	if (wb->open_error && !wb->s) {
		tm_buf_addf(&b, "ERR %s", wb->open_error);
		wrap_text(b.data, y, 0, COLS, h, theme_attr(ROLE_ERROR));
	} else if (wb->worker_running) {
		uint64_t done = 0, total = 0;
		for (size_t i = 0; i < tm_session_n_members(wb->s); i++) {
			struct tm_progress p;
			memset(&p, 0, sizeof p);
			tm_session_progress(wb->s, i, &p);
			done += p.done_bytes;
			total += p.total_bytes;
		}
		tm_buf_addf(&b, "Analyzing traces... (%d%%)  x cancels",
			    total ? (int)((double)done * 100.0 / (double)total) : 0);
		put_text(b.data, COLS, theme_attr(ROLE_INFO));
	} else if (wb->scan_cancelled) {
		put_text("Scan cancelled: no verdict.", COLS, theme_attr(ROLE_WARNING));
	} else if (wb->eval_error) {
		tm_buf_addf(&b, "ERR %s", wb->eval_error);
		wrap_text(b.data, y, 0, COLS, h, theme_attr(ROLE_ERROR));
	} else if (!r) {
		put_text("Checking if the traces line up on the timeline...", COLS,
			 theme_attr(ROLE_INFO));
	} else if (r->error) {
		tm_buf_addf(&b, "ERR Manifest error: %s", r->error);
		y += wrap_text(b.data, y, 0, COLS, r->hint ? 1 : h, theme_attr(ROLE_ERROR));
		if (r->hint && y < y0 + h) {
			tm_buf_reset(&b);
			tm_buf_addf(&b, "    hint (tracemerge, not trace_processor): %s", r->hint);
			wrap_text(b.data, y, 0, COLS, y0 + h - y, theme_attr(ROLE_INFO));
		}
	} else {
		struct tm_buf v;
		tm_buf_init(&v);
		tm_report_verdict(r, &v);
		tm_buf_addf(&b, "%s %s", r->dropped ? "WARN" : (r->ok ? "OK" : "WARN"),
			    v.data ? v.data : "");
		if (!r->is_complete)
			tm_buf_adds(&b, " (some formats are not predicted)");
		wrap_text(b.data, y, 0, COLS, h,
			  theme_attr(r->dropped || !r->ok ? ROLE_WARNING : ROLE_OK));
		tm_buf_fini(&v);
	}
	tm_buf_fini(&b);
}

static void
draw_owner(struct wb *wb, int y)
{
	const struct tm_report *r = wb->rep;
	struct tm_buf b;

	if (!r)
		return;
	tm_buf_init(&b);
	tm_buf_addf(&b, "Timeline: %s", r->tt_clock ? tm_clock_name(r->tt_clock) : "?");
	if (r->tt_file >= 0 && (size_t)r->tt_file < r->n_files)
		tm_buf_addf(&b, " of %s", wb_member_name(wb, r->files[r->tt_file].member));
	if (r->tt_machine >= 0)
		tm_buf_addf(&b, " (machine %lld)", (long long)r->tt_machine);
	if (r->tt_why)
		tm_buf_addf(&b, ": %s", r->tt_why);
	/* Warn when the owner is not the file the user chose as baseline. */
	if (wb->man.tt_file && r->tt_file >= 0 && (size_t)r->tt_file < r->n_files &&
	    strcmp(wb->man.tt_file, wb_member_name(wb, r->files[r->tt_file].member)) != 0)
		tm_buf_addf(&b, "  [note: not %s]", wb->man.tt_file);
	if (wb->baseline && r->tt_file >= 0 && (size_t)r->tt_file < r->n_files &&
	    strcmp(wb->baseline, wb_member_name(wb, r->files[r->tt_file].member)) != 0)
		tm_buf_addf(&b, "  [warning: baseline is %s, but trace_processor's name order gives "
			    "the timeline to %s]",
			    wb->baseline, wb_member_name(wb, r->files[r->tt_file].member));
	for (size_t i = 0; i < r->n_warnings; i++)
		tm_buf_addf(&b, "  | %s", r->warnings[i]);
	move(y, 0);
	view_put_escaped(b.data, b.len, COLS, theme_attr(ROLE_INFO));
	tm_buf_fini(&b);
}

static void
draw_keys(struct wb *wb, int y)
{
	static const enum wb_request hint[] = {REQ_MACHINE, REQ_ADD_MACHINE, REQ_OFFSET, REQ_AUTO,
					       REQ_TRACE_TIME, REQ_UNDO, REQ_COPY, REQ_WRITE,
					       REQ_HELP, REQ_QUIT};
	struct tm_buf b;
	char k[32];

	tm_buf_init(&b);
	if (wb->help) {
		tm_buf_adds(&b, "j/k scroll  q close help");
	} else {
		for (size_t i = 0; i < sizeof hint / sizeof hint[0]; i++) {
			const struct wb_request_info *ri = keymap_info(hint[i]);
			keymap_key_name(ri->key1, k, sizeof k);
			tm_buf_addf(&b, "%s%s %s", i ? "  " : "", k, ri->name);
		}
	}
	move(y, 0);
	put_text(b.data, COLS, theme_attr(ROLE_KEY_HINT));
	fill_to(y, COLS, theme_attr(ROLE_KEY_HINT));
	tm_buf_fini(&b);
}

static void
draw_msg(struct wb *wb, int y)
{
	move(y, 0);
	if (wb->prompt != PROMPT_NONE) {
		int cur = 0;
		const char *line = prompt_line(&cur);
		attrset(theme_attr(ROLE_STATUS));
		int used = view_put_escaped(line, strlen(line), COLS - 1, theme_attr(ROLE_STATUS));
		(void)used;
		if (!wb->headless) {
			curs_set(1);
			move(y, cur < COLS ? cur : COLS - 1);
		}
		return;
	}
	if (!wb->headless)
		curs_set(0);
	view_put_escaped(wb->msg, strlen(wb->msg), COLS, theme_attr(wb->msg_role));
}

static void
draw_help(struct wb *wb)
{
	int y = 1;
	size_t skip = wb->help_scroll;
	char k1[32], k2[32], buf[512];
	static const char *const notes[] = {
		"",
		"Offsets accept units: 250ms, -1.5s, 20us, 7ns (plain numbers are ns).",
		"A positive offset moves the file later on the shared timeline.",
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

	move(0, 0);
	put_text(" tracemerge help: keys and commands", COLS, theme_attr(ROLE_TITLE));
	fill_to(0, COLS, theme_attr(ROLE_TITLE));
	for (int r = REQ_NONE + 1; r < REQ__COUNT && y < LINES - 1; r++) {
		const struct wb_request_info *ri = keymap_info((enum wb_request)r);
		if (skip > 0) {
			skip--;
			continue;
		}
		keymap_key_name(ri->key1, k1, sizeof k1);
		keymap_key_name(ri->key2, k2, sizeof k2);
		snprintf(buf, sizeof buf, " %-7s %-7s %-16s %s", k1, ri->key2 ? k2 : "", ri->name,
			 ri->help);
		move(y++, 0);
		put_text(buf, COLS, theme_attr(ROLE_DEFAULT));
	}
	for (size_t i = 0; i < sizeof notes / sizeof notes[0] && y < LINES - 1; i++) {
		if (skip > 0) {
			skip--;
			continue;
		}
		move(y++, 0);
		put_text(notes[i], COLS, theme_attr(ROLE_DIM));
	}
	draw_keys(wb, LINES - 1);
}

void
view_draw(struct wb *wb)
{
	int rows = LINES, cols = COLS;

	erase();
	attrset(theme_attr(ROLE_DEFAULT));
	if (rows < MIN_ROWS || cols < MIN_COLS) {
		char buf[128];
		snprintf(buf, sizeof buf, "Terminal too small (%dx%d); tracemerge needs %dx%d.",
			 cols, rows, MIN_COLS, MIN_ROWS);
		for (int y = 0, o = 0, len = (int)strlen(buf); o < len && y < rows; y++, o += cols)
			mvaddnstr(y, 0, buf + o, cols);
		wnoutrefresh(stdscr);
		return;
	}
	if (wb->help) {
		draw_help(wb);
		draw_msg(wb, rows - 2);
		wnoutrefresh(stdscr);
		return;
	}
	draw_title(wb);
	size_t n = wb_n_rows(wb);
	int bottom = 5; /* verdict x2, owner, message, keys */
	int avail = rows - 1 - bottom;
	int left_w = cols, right_x = cols;
	bool side = cols >= 120;
	if (side) {
		left_w = cols * 3 / 5;
		right_x = left_w + 1;
	}
	int list_h = 1 + (int)(n < 1 ? 1 : n);
	int max_list = 1 + (avail - 8) / 2;
	if (max_list < 3)
		max_list = 3;
	if (list_h > max_list)
		list_h = max_list;
	int y = 1;
	draw_list(wb, y, list_h, 0, left_w);
	y += list_h;
	int rest = avail - list_h;
	int det_h = 4, tl_h, man_h;
	if (side) {
		tl_h = rest - det_h;
		man_h = 0;
		draw_manifest(wb, 1, avail, right_x, cols - right_x);
	} else {
		tl_h = 1 + (int)(n < 1 ? 1 : n);
		if (tl_h > 4)
			tl_h = 4;
		man_h = rest - det_h - tl_h;
		if (man_h < 2) {
			tl_h = rest - det_h - 2;
			man_h = 2;
		}
	}
	if (det_h > 0)
		draw_details(wb, y, det_h, 0, left_w);
	y += det_h;
	if (tl_h > 0)
		draw_timeline(wb, y, tl_h, 0, left_w);
	y += tl_h > 0 ? tl_h : 0;
	if (man_h > 0)
		draw_manifest(wb, y, man_h, 0, left_w);
	draw_verdict(wb, rows - 5, 2);
	draw_owner(wb, rows - 3);
	draw_msg(wb, rows - 2);
	draw_keys(wb, rows - 1);
	attrset(theme_attr(ROLE_DEFAULT));
	if (wb->prompt != PROMPT_NONE && !wb->headless) {
		int cur = 0;
		prompt_line(&cur);
		move(rows - 2, cur < cols ? cur : cols - 1);
	}
	wnoutrefresh(stdscr);
}

bool
view_dump_screen(struct wb *wb, const char *path)
{
	FILE *f = fopen(path, "w");
	wchar_t *line;

	if (!f) {
		wb_set_msg(wb, ROLE_ERROR, "dump-screen: cannot open %s", path);
		return false;
	}
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
	fclose(f);
	return true;
}

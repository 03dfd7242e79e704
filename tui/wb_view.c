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

static bool is_tl_file(const struct tm_report_file *rf);

/* The FORMAT column's names: at most 8 columns, never cut. */
static const char *
format_short(enum tm_format f)
{
	static const struct {
		enum tm_format f;
		const char *name;
	} tbl[] = {
		{TM_FMT_PROTO, "Perfetto"},          {TM_FMT_ANDROID_LOGCAT, "logcat"},
		{TM_FMT_ANDROID_DUMPSTATE, "dumpstat"}, {TM_FMT_SIMPLEPERF_PROTO, "simplepf"},
		{TM_FMT_ART_METHOD_V2, "art_mth2"},  {TM_FMT_ART_METHOD, "art_mth"},
		{TM_FMT_ART_HPROF, "hprof"},         {TM_FMT_MANIFEST, "manifest"},
		{TM_FMT_INSTRUMENTS_XML, "inst_xml"}, {TM_FMT_NINJA_LOG, "ninja"},
		{TM_FMT_COLLAPSED_STACK, "folded"},  {TM_FMT_PERF_TEXT, "perf_txt"},
	};
	const char *n;

	for (size_t i = 0; i < sizeof tbl / sizeof tbl[0]; i++)
		if (tbl[i].f == f)
			return tbl[i].name;
	n = tm_format_name(f);
	return n && strlen(n) <= 8 ? n : "other";
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
	/* After a resize to more rows, show as many rows as fit. */
	if (h > 1 && wb->top > 0 && wb->top + (size_t)(h - 1) > n)
		wb->top = n > (size_t)(h - 1) ? n - (size_t)(h - 1) : 0;
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
		printw(" %-8.8s %9s ", mb ? format_short(mb->format) : "?", buf);
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
			} else if (rf && !rf->is_predicted && wb->rep->error && is_tl_file(rf)) {
				/* the import fails before reaching it */
				printw("%7s %5s", "-", "-");
			} else if (rf && !rf->is_predicted && is_tl_file(rf)) {
				/* not scanned: unknown, not zero */
				printw("%7s %5s", "?", "?");
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
min_int(int a, int b)
{
	return a < b ? a : b;
}

static int
max_int(int a, int b)
{
	return a > b ? a : b;
}

/* ---- wrapped paragraphs ---- */

/* Word-wrap s (escaped first: untrusted parts included) into lines of w
 * columns.  Draws at (y, x0) when draw is true; at most max_lines lines, the
 * last one cut with '~' when more follows.  Returns the lines used (or, when
 * not drawing, the lines the whole text needs). */
static int
wrap_lines(const char *s, int y, int x0, int w, int skip, int max_lines, int attr, bool draw)
{
	char *e = view_escape_cols(s, 1 << 16);
	size_t len = strlen(e), i = 0;
	int lines = 0;

	if (w < 1)
		w = 1;
	if (skip < 0)
		skip = 0;
	while (i < len && lines < skip + max_lines) {
		/* Columns, not bytes: walk characters until w columns. */
		size_t end = i, last_sp = 0;
		int used = 0;
		while (end < len) {
			size_t n = utf8_len((unsigned char)e[end]);
			int cw;
			if (end + n > len)
				n = len - end;
			cw = char_cols(e + end, n);
			if (used + cw > w)
				break;
			if (e[end] == ' ')
				last_sp = end;
			used += cw;
			end += n;
		}
		size_t take = end - i;
		if (end < len && e[end] != ' ' && last_sp > i && last_sp - i > (size_t)w / 3)
			take = last_sp - i;
		if (draw && lines >= skip) {
			move(y + lines - skip, x0);
			if (lines == skip + max_lines - 1 && i + take < len) {
				view_put_escaped(e + i, len - i, w, attr);
			} else {
				attrset(attr);
				addnstr(e + i, (int)take);
			}
		}
		i += take;
		while (i < len && e[i] == ' ')
			i++;
		lines++;
		if (take == 0)
			break;
	}
	free(e);
	return draw ? (lines > skip ? lines - skip : 0) : lines;
}


#define MAX_PARAS 16
struct paras {
	struct tm_buf b[MAX_PARAS];
	enum wb_role role[MAX_PARAS];
	size_t n;
};

static struct tm_buf *
para_add(struct paras *ps, enum wb_role role)
{
	if (ps->n == MAX_PARAS)
		ps->n--; /* the last one is reused: never more than MAX_PARAS */
	else
		tm_buf_init(&ps->b[ps->n]);
	tm_buf_reset(&ps->b[ps->n]);
	ps->role[ps->n] = role;
	return &ps->b[ps->n++];
}

static void
paras_fini(struct paras *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		tm_buf_fini(&ps->b[i]);
	ps->n = 0;
}

static int
paras_lines(const struct paras *ps, int w)
{
	int n = 0;

	for (size_t i = 0; i < ps->n; i++)
		if (ps->b[i].data)
			n += wrap_lines(ps->b[i].data, 0, 0, w, 0, 1 << 20, 0, false);
	return n;
}

/* Draw the wrapped paragraphs from line skip on, at most max_lines lines. */
static int
paras_draw_from(const struct paras *ps, int skip, int y, int x0, int w, int max_lines)
{
	int used = 0;

	for (size_t i = 0; i < ps->n && used < max_lines; i++) {
		if (!ps->b[i].data)
			continue;
		if (skip > 0) {
			int k = wrap_lines(ps->b[i].data, 0, 0, w, 0, 1 << 20, 0, false);
			if (skip >= k) {
				skip -= k;
				continue;
			}
		}
		used += wrap_lines(ps->b[i].data, y + used, x0, w, skip, max_lines - used,
				   theme_attr(ps->role[i]), true);
		skip = 0;
	}
	return used;
}

static int
paras_draw(const struct paras *ps, int y, int x0, int w, int max_lines)
{
	return paras_draw_from(ps, 0, y, x0, w, max_lines);
}

/* Thousands separators, as the dialog's toLocaleString() shows N. */
static void
fmt_count(uint64_t n, char *buf, size_t len)
{
	char d[32];
	size_t k = (size_t)snprintf(d, sizeof d, "%llu", (unsigned long long)n), o = 0;

	for (size_t i = 0; i < k && o + 2 < len; i++) {
		if (i > 0 && (k - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = 0;
}

static const char *
machine_row_name(const struct wb *wb, uint32_t id)
{
	for (size_t k = 0; wb->rep && k < wb->rep->n_machines; k++)
		if (wb->rep->machines[k].id == id)
			return wb->rep->machines[k].name;
	return NULL;
}

static uint64_t
file_stat(const struct tm_report_file *rf, const char *name)
{
	for (size_t i = 0; rf && i < rf->n_stats; i++)
		if (strcmp(rf->stats[i].name, name) == 0)
			return rf->stats[i].value;
	return 0;
}

static bool
is_drop_stat(const char *n)
{
	return strcmp(n, "clock_sync_unrelatable_clock_domains") == 0 ||
	       strcmp(n, "clock_sync_failure_no_path") == 0 ||
	       strcmp(n, "trace_sorter_negative_timestamp_dropped") == 0;
}

/* A member name cut to about max_len bytes (at a character boundary, '~'
 * marking the cut) for sentences; escaped later when drawn.  Caller frees. */
static char *
short_name(const char *s, size_t max_len)
{
	size_t len = strlen(s), n = 0;
	char *out;

	if (len <= max_len)
		return strdup(s);
	while (n < len) {
		size_t k = utf8_len((unsigned char)s[n]);
		if (n + k > max_len)
			break;
		n += k;
	}
	out = malloc(n + 2);
	if (!out)
		abort();
	memcpy(out, s, n);
	out[n] = '~';
	out[n + 1] = 0;
	return out;
}

/* The selected file's details, one paragraph each (wrapped when drawn). */
static void
details_paras(struct wb *wb, struct paras *ps)
{
	size_t n = wb_n_rows(wb);
	const struct tm_report_file *rf;
	const struct tm_member *mb;
	const struct tm_manifest_file *f;
	const char *name;
	struct tm_buf *b;
	char tmp[64], a[64], c[64];

	if (n == 0)
		return;
	name = wb_member_name(wb, wb_row_member(wb, wb->sel));
	mb = tm_session_member(wb->s, wb_row_member(wb, wb->sel));
	rf = wb_row_file(wb, wb->sel);
	f = man_file(wb, name);
	if (mb && mb->error) {
		b = para_add(ps, ROLE_ERROR);
		tm_buf_addf(b, "error: %s", mb->error);
	}
	if (!rf) {
		b = para_add(ps, ROLE_DIM);
		tm_buf_adds(b, wb->worker_running ? "Analyzing..." : "not evaluated");
		return;
	}
	/* For a file that drops: how many, the cause and the fix, first. */
	if (rf->dropped) {
		uint64_t neg = file_stat(rf, "trace_sorter_negative_timestamp_dropped");
		uint64_t nopath = file_stat(rf, "clock_sync_failure_no_path") +
				  file_stat(rf, "clock_sync_unrelatable_clock_domains");
		const char *sep = " (";
		b = para_add(ps, ROLE_WARNING);
		tm_buf_addf(b, "Drops %llu", (unsigned long long)rf->dropped);
		for (size_t i = 0; i < rf->n_stats; i++) {
			if (!is_drop_stat(rf->stats[i].name))
				continue;
			tm_buf_addf(b, "%s%s %llu", sep, rf->stats[i].name,
				    (unsigned long long)rf->stats[i].value);
			sep = ", ";
		}
		if (sep[0] == ',')
			tm_buf_adds(b, ")");
		if (neg && rf->has_all_ts && rf->all_first_ts < 0) {
			fmt_dur(rf->all_first_ts, a, sizeof a);
			if (f && f->has_clocks && f->clocks.offset_ns < 0) {
				int64_t need;
				fmt_dur(f->clocks.offset_ns, c, sizeof c);
				tm_buf_addf(b, ": the offset %s puts them before zero (from %s).", c,
					    a);
				if (!__builtin_sub_overflow(f->clocks.offset_ns, rf->all_first_ts,
							    &need)) {
					fmt_dur(need, tmp, sizeof tmp);
					tm_buf_addf(b, " Fix: offset %s or more (o), or nudge later "
						       "(] +1ms, } +1s).",
						    tmp);
				}
			} else {
				tm_buf_addf(b, ": they land before zero (from %s). Fix: move it "
					       "later (o, ] or }), or let it own the timeline (b, t).",
					    a);
			}
		} else if (neg) {
			tm_buf_adds(b, ": they land before zero. Fix: move it later (o, ] or }).");
		}
		if (nopath)
			tm_buf_adds(b, "; its clocks have no path to the timeline's clock. Fix: an "
				       "offset against a file on the timeline (o), or its own machine "
				       "(M).");
	}
	if (!rf->dropped && wb->rep && wb->rep->dropped) {
		/* Point at the files that drop (the list's DROPS column). */
		size_t k = 0;
		b = para_add(ps, ROLE_WARNING);
		tm_buf_adds(b, "The drops are in");
		for (size_t i = 0; i < wb->rep->n_files; i++) {
			const struct tm_report_file *o = &wb->rep->files[i];
			if (!o->dropped)
				continue;
			char *nm = short_name(wb_member_name(wb, o->member), 40);
			tm_buf_addf(b, "%s%s (%llu)", k++ ? ", " : " ", nm,
				    (unsigned long long)o->dropped);
			free(nm);
		}
		tm_buf_adds(b, k == 1 ? ": select it (j/k) for the cause and the fix."
				      : ": select one (j/k) for the cause and the fix.");
	}
	/* How it is placed and why (the engine's sentence). */
	b = para_add(ps, ROLE_DEFAULT);
	tm_buf_addf(b, "placed: %s", rf->placement ? rf->placement : "?");
	if (!rf->is_predicted && rf->is_trace &&
	    !(rf->placement && strstr(rf->placement, "not scan"))) {
		b = para_add(ps, ROLE_WARNING);
		tm_buf_addf(b, "format %s is not scanned by tracemerge: its events and drops are "
			       "not predicted (shown as ?).",
			    tm_format_name(rf->format));
	}
	/* Clocks and time range. */
	b = para_add(ps, ROLE_CLOCK);
	tm_buf_adds(b, "clocks: ");
	for (size_t i = 0; i < rf->n_clocks; i++)
		tm_buf_addf(b, "%s%s", i ? ", " : "", tm_clock_name(rf->clocks[i]));
	if (rf->n_clocks == 0)
		tm_buf_adds(b, rf->is_predicted ? "none (private clock)" : "?");
	if (rf->has_ts) {
		fmt_dur(rf->first_ts, a, sizeof a);
		fmt_dur(rf->last_ts, c, sizeof c);
		tm_buf_addf(b, "  range: %s .. %s", a, c);
	}
	if (rf->has_all_ts && (!rf->has_ts || rf->all_first_ts != rf->first_ts ||
			       rf->all_last_ts != rf->last_ts)) {
		fmt_dur(rf->all_first_ts, a, sizeof a);
		fmt_dur(rf->all_last_ts, c, sizeof c);
		tm_buf_addf(b, "%s%s .. %s with dropped", rf->has_ts ? " kept, " : "  range: ", a, c);
	}
	/* Machine: the manifest's choice, the rows it lands on, embedded ids. */
	b = para_add(ps, ROLE_MACHINE);
	tm_buf_addf(b, "machine: %s", machine_text(wb, name));
	if (rf->n_machines > 0) {
		tm_buf_addf(b, "  machine row%s:", rf->n_machines == 1 ? "" : "s");
		for (size_t i = 0; i < rf->n_machines; i++) {
			const char *mn = machine_row_name(wb, rf->machines[i]);
			tm_buf_addf(b, "%s %u", i ? "," : "", rf->machines[i]);
			if (mn)
				tm_buf_addf(b, " (%s)", mn);
		}
	}
	if (f && f->has_machines) {
		size_t unnamed = 0;
		tm_buf_adds(b, "  ids:");
		for (size_t i = 0; i < f->n_machines; i++) {
			const char *nm = f->machines[i].name;
			bool blank = !nm || !nm[strspn(nm, " \t")];
			unnamed += blank;
			tm_buf_addf(b, " %u->%s", f->machines[i].id, blank ? "(unnamed)" : nm);
		}
		size_t total = f->n_machines;
		/* Embedded ids the manifest does not name yet. */
		for (size_t j = 0; wb->rep && j < rf->n_machines; j++) {
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
				tm_buf_addf(b, " %llu->(unnamed)", (unsigned long long)raw);
			}
		}
		if (unnamed)
			tm_buf_addf(b, "  (not written: %zu of %zu ids unnamed)", unnamed, total);
	} else if (rf->n_machines > 1) {
		tm_buf_adds(b, "  embedded ids unnamed (i names them)");
	}
	if (f && f->has_clocks) {
		fmt_dur(f->clocks.offset_ns, tmp, sizeof tmp);
		bool owns = f->clocks.offset_ns != 0 && wb_owns_timeline(wb, name);
		tm_buf_addf(b, "  align: %s%s vs %s", tmp,
			    owns                      ? ""
			    : f->clocks.offset_ns > 0 ? " (moves later)"
			    : f->clocks.offset_ns < 0 ? " (moves earlier)"
						      : "",
			    f->clocks.sync_file ? f->clocks.sync_file : "?");
		if (f->clocks.sync_clock)
			tm_buf_addf(b, ":%s", tm_clock_name(f->clocks.sync_clock));
		if (f->clocks.sync_machine)
			tm_buf_addf(b, "@%s", f->clocks.sync_machine);
		tm_buf_addf(b, ", own clock %s",
			    f->clocks.clock ? tm_clock_name(f->clocks.clock) : "PIN");
		if (owns) {
			char eff[400];
			wb_offset_effect(wb, name, f->clocks.offset_ns, f->clocks.sync_file, eff,
					 sizeof eff);
			tm_buf_addf(b, " (%s)", eff);
		}
	} else {
		tm_buf_adds(b, "  align: automatic");
	}
}

static void
draw_details(struct wb *wb, const struct paras *ps, int y0, int h, int x0, int w)
{
	size_t n = wb_n_rows(wb);
	int lines = paras_lines(ps, w), rows = h - 1;

	/* Cut details scroll (d, PgDown/PgUp); a new row starts at the top. */
	if (wb->det_sel != wb->sel) {
		wb->det_sel = wb->sel;
		wb->det_scroll = 0;
	}
	if (rows < 1 || lines <= rows)
		wb->det_scroll = 0;
	else if (wb->det_scroll > (size_t)(lines - rows))
		wb->det_scroll = (size_t)(lines - rows);
	wb->det_lines = lines;
	wb->det_rows = rows > 0 ? rows : 0;
	wb->det_more = rows > 0 && lines > rows;
	if (wb->det_more) {
		char *nm = n == 0 ? strdup("details")
				  : short_name(wb_member_name(wb, wb_row_member(wb, wb->sel)),
					       (size_t)max_int(8, w - 40));
		char label[512];
		int first = (int)wb->det_scroll + 1, last = min_int(lines, first + rows - 1);
		snprintf(label, sizeof label, "%s  lines %d-%d of %d, d: more", nm, first, last,
			 lines);
		rule(wb, y0, x0, x0 + w, label);
		free(nm);
	} else {
		rule(wb, y0, x0, x0 + w,
		     n == 0 ? "details" : wb_member_name(wb, wb_row_member(wb, wb->sel)));
	}
	if (rows > 0)
		paras_draw_from(ps, (int)wb->det_scroll, y0 + 1, x0, w, rows);
}

/* A trace file gets a bar even when the import stops before reaching it
 * (is_trace is then false): not a container, manifest or hidden member. */
static bool
is_tl_file(const struct tm_report_file *rf)
{
	if (!rf)
		return false;
	if (rf->is_trace)
		return true;
	return !rf->is_hidden && rf->format != TM_FMT_UNKNOWN && rf->format != TM_FMT_MANIFEST &&
	       !tm_format_is_container(rf->format);
}

/* The report's trace files, in list order (the timeline's rows). */
static size_t
timeline_files(const struct wb *wb, size_t *rows, size_t max)
{
	size_t k = 0;

	for (size_t row = 0; row < wb_n_rows(wb) && k < max; row++) {
		if (is_tl_file(wb_row_file(wb, row)))
			rows[k++] = row;
	}
	return k;
}

static size_t
n_timeline_files(const struct wb *wb)
{
	size_t k = 0;

	for (size_t row = 0; row < wb_n_rows(wb); row++) {
		k += is_tl_file(wb_row_file(wb, row));
	}
	return k;
}

static void
draw_timeline(struct wb *wb, int y0, int h, int x0, int w)
{
	const struct tm_report *r = wb->rep;
	int64_t lo = 0, hi = 1;
	int name_w = 14, bar_w = w - name_w - 8;
	char label[160], d[64];
	size_t n_tl, first = 0, *rows;
	int bars = h - 1;

	if (!r || bar_w < 10 || h < 1) {
		rule(wb, y0, x0, x0 + w, "timeline");
		return;
	}
	/* The axis covers every file, the part before zero (dropped) included. */
	for (size_t i = 0; i < r->n_files; i++) {
		const struct tm_report_file *rf = &r->files[i];
		if (rf->has_all_ts) {
			if (rf->all_first_ts < lo)
				lo = rf->all_first_ts;
			if (rf->all_last_ts > hi)
				hi = rf->all_last_ts;
		}
		if (rf->has_ts) {
			if (rf->first_ts < lo)
				lo = rf->first_ts;
			if (rf->last_ts > hi)
				hi = rf->last_ts;
		}
	}
	for (size_t i = 0; i < r->n_events; i++)
		if (r->events[i].dropped && r->events[i].ts < lo)
			lo = r->events[i].ts;
	double span = (double)hi - (double)lo;
	for (int z = 0; z < wb->zoom; z++)
		span /= 2.0;
	if (span < 1.0)
		span = 1.0;
	rows = calloc(wb_n_rows(wb) + 1, sizeof *rows);
	n_tl = timeline_files(wb, rows, wb_n_rows(wb));
	/* One bar per file; when they do not fit, scroll to keep the selected
	 * file in view and say how many are off the strip. */
	if (bars < 0)
		bars = 0;
	if ((size_t)bars < n_tl) {
		size_t sel_k = 0;
		for (size_t k = 0; k < n_tl; k++)
			if (rows[k] <= wb->sel)
				sel_k = k;
		if (bars > 0 && sel_k >= (size_t)bars)
			first = sel_k - (size_t)bars + 1;
	}
	fmt_dur((int64_t)span, d, sizeof d);
	size_t shown = n_tl - first < (size_t)bars ? n_tl - first : (size_t)bars;
	int o = snprintf(label, sizeof label, "timeline: %s over %d columns, %s = 0, zoom %dx (+/-)",
			 d, bar_w - 1, wb->ascii ? "|" : "\xe2\x94\x82", 1 << wb->zoom);
	if (shown < n_tl && o > 0 && (size_t)o < sizeof label)
		snprintf(label + o, sizeof label - (size_t)o, ", files %zu-%zu of %zu", first + 1,
			 first + shown, n_tl);
	rule(wb, y0, x0, x0 + w, label);
	/* Zero is a marker column of its own, between the time columns.  A
	 * dropped region narrower than a column still gets one column before
	 * zero, so it shows at any zoom. */
	bar_w--;
	if (lo < 0 && (double)(0 - lo) / span * bar_w < 1.0)
		lo = -(int64_t)(span / bar_w) - 1;
	int zero_col = (int)((double)(0 - lo) / span * bar_w);
	for (size_t k = first; k < first + shown; k++) {
		size_t row = rows[k];
		const struct tm_report_file *rf = wb_row_file(wb, row);
		const char *name = wb_member_name(wb, rf->member);
		int y = y0 + 1 + (int)(k - first);
		bool has_drop_ts = false;
		int64_t dlo = 0, dhi = 0;

		move(y, x0);
		int used = view_put_escaped(name, strlen(name), name_w - 1,
					    row == wb->sel ? theme_attr(ROLE_TITLE)
							   : theme_attr(ROLE_DEFAULT));
		attrset(theme_attr(ROLE_DEFAULT));
		for (; used < name_w; used++)
			addch(' ');
		/* Where its dropped events would have landed (before zero). */
		if (rf->has_all_ts && rf->all_first_ts < 0) {
			has_drop_ts = true;
			dlo = rf->all_first_ts;
			dhi = rf->all_last_ts < 0 ? rf->all_last_ts : 0;
		}
		for (size_t i = 0; i < r->n_events; i++) {
			const struct tm_report_event *ev = &r->events[i];
			if (&r->files[ev->file] == rf && ev->dropped && ev->ts < 0) {
				if (!has_drop_ts || ev->ts < dlo)
					dlo = ev->ts;
				if (!has_drop_ts || ev->ts > dhi)
					dhi = ev->ts;
				has_drop_ts = true;
			}
		}
		for (int c = 0; c < bar_w; c++) {
			double t0 = (double)lo + span * c / bar_w;
			double t1 = (double)lo + span * (c + 1) / bar_w;
			bool on = rf->has_ts && (double)rf->last_ts >= t0 &&
				  ((double)rf->first_ts < t1 ||
				   (c == bar_w - 1 && (double)rf->first_ts <= t1));
			bool before = t0 + t1 < 0.0; /* its middle is before zero */
			bool dropped_here = has_drop_ts && before && (double)dlo < t1 &&
					    (double)dhi >= t0;
			if (c == zero_col) {
				attrset(theme_attr(ROLE_ZERO));
				addstr(wb->ascii ? "|" : "\xe2\x94\x82");
			}
			if (dropped_here) {
				attrset(theme_attr(ROLE_DROPPED));
				addstr(wb->ascii ? "x" : "\xe2\x96\x91");
			} else if (on) {
				attrset(theme_attr(ROLE_BAR));
				addstr(wb->ascii ? "#" : "\xe2\x96\x88");
			} else if (before) {
				attrset(theme_attr(ROLE_DIM));
				addstr(wb->ascii ? ":" : "\xe2\x94\x84");
			} else {
				attrset(theme_attr(ROLE_DIM));
				addstr(wb->ascii ? "." : "\xc2\xb7");
			}
		}
		if (zero_col >= bar_w) {
			attrset(theme_attr(ROLE_ZERO));
			addstr(zero_col == bar_w ? (wb->ascii ? "|" : "\xe2\x94\x82") : ">");
		} else if (zero_col < 0) {
			addch(' ');
		}
		if (rf->dropped) {
			attrset(theme_attr(ROLE_WARNING));
			printw(" -%llu", (unsigned long long)rf->dropped);
		} else if (!rf->is_predicted) {
			attrset(theme_attr(ROLE_DIM));
			printw(" ?");
		}
	}
	free(rows);
	attrset(theme_attr(ROLE_DEFAULT));
}

static void
draw_manifest(struct wb *wb, int y0, int h, int x0, int w)
{
	struct tm_buf b;
	size_t line = 0, i = 0, n_lines = 0;
	int y = y0 + 1;
	char label[128];

	tm_buf_init(&b);
	tm_manifest_emit(&wb->man, &b);
	for (size_t j = 0; b.data && j < b.len; j++)
		n_lines += b.data[j] == '\n';
	if (h <= 1 && !wb->focus_manifest) {
		snprintf(label, sizeof label, "manifest: %zu lines%s (Tab shows it)", n_lines,
			 tm_manifest_is_trivial(&wb->man) ? ", trivial" : "");
	} else {
		snprintf(label, sizeof label, "manifest%s%s",
			 tm_manifest_is_trivial(&wb->man) ? " (trivial: not written to the TAR)"
							  : "",
			 wb->focus_manifest ? " [focus: j/k scroll, Tab back]" : "");
	}
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

/* The verdict in the dialog's words (OK/WARN/ERR labels as well as colour),
 * the manifest's own errors in trace_processor's words plus our hint. */
static void
verdict_paras(struct wb *wb, struct paras *ps)
{
	const struct tm_report *r = wb->rep;
	struct tm_buf *b;

	if (wb->open_error && !wb->s) {
		b = para_add(ps, ROLE_ERROR);
		tm_buf_addf(b, "ERR %s", wb->open_error);
	} else if (wb->worker_running) {
		uint64_t done = 0, total = 0;
		for (size_t i = 0; i < tm_session_n_members(wb->s); i++) {
			struct tm_progress p;
			memset(&p, 0, sizeof p);
			tm_session_progress(wb->s, i, &p);
			done += p.done_bytes;
			total += p.total_bytes;
		}
		b = para_add(ps, ROLE_INFO);
		tm_buf_addf(b, "Analyzing traces... (%d%%)  x cancels",
			    total ? (int)((double)done * 100.0 / (double)total) : 0);
	} else if (wb->scan_cancelled) {
		b = para_add(ps, ROLE_WARNING);
		tm_buf_adds(b, "Scan cancelled: no verdict.");
	} else if (wb->eval_error) {
		b = para_add(ps, ROLE_ERROR);
		tm_buf_addf(b, "ERR %s", wb->eval_error);
	} else if (!r) {
		b = para_add(ps, ROLE_INFO);
		tm_buf_adds(b, "Checking if the traces line up on the timeline...");
	} else if (r->error) {
		b = para_add(ps, ROLE_ERROR);
		tm_buf_addf(b, "ERR Manifest error: %s", r->error);
		if (r->hint) {
			b = para_add(ps, ROLE_INFO);
			tm_buf_addf(b, "    hint (tracemerge, not trace_processor): %s", r->hint);
		}
	} else if (r->dropped) {
		char cnt[40];
		size_t n_unknown = 0;
		for (size_t i = 0; i < r->n_files; i++)
			n_unknown += r->files[i].is_trace && !r->files[i].is_predicted;
		fmt_count(r->dropped, cnt, sizeof cnt);
		b = para_add(ps, ROLE_WARNING);
		tm_buf_addf(b,
			    "WARN %s event%s would be dropped: they cannot be placed on the shared "
			    "timeline, either because their trace shares no clock with it or because "
			    "an offset moves them before its start. Adjust the alignment, or check "
			    "the manifest.",
			    cnt, r->dropped == 1 ? "" : "s");
		if (n_unknown)
			tm_buf_addf(b, " (%zu file%s not predicted.)", n_unknown,
				    n_unknown == 1 ? "'s events are" : "s' events are");
	} else {
		struct tm_buf v;
		tm_buf_init(&v);
		tm_report_verdict(r, &v);
		b = para_add(ps, r->ok ? ROLE_OK : ROLE_WARNING);
		tm_buf_addf(b, "%s %s", r->ok ? "OK" : "WARN", v.data ? v.data : "");
		tm_buf_fini(&v);
	}
}

/* Who owns the timeline and why, and tracemerge's own warnings (about
 * trace_processor's real order among them), each on its own lines. */
static void
owner_paras(struct wb *wb, struct paras *ps)
{
	const struct tm_report *r = wb->rep;
	const char *owner_full = NULL;
	char *owner = NULL;
	struct tm_buf *b;

	if (!r || r->error || wb->worker_running)
		return;
	if (r->tt_file >= 0 && (size_t)r->tt_file < r->n_files) {
		owner_full = wb_member_name(wb, r->files[r->tt_file].member);
		owner = short_name(owner_full, 60);
	}
	/* An offset on the owner: the user expects that file to move, but
	 * trace_processor's order made it the timeline, so the reference moves
	 * instead.  First: on a short screen it is what must show. */
	for (size_t i = 0; owner && i < wb->man.n_files; i++) {
		const struct tm_manifest_file *mf = &wb->man.files[i];
		int64_t neg;
		char d[64], *ref;
		if (!mf->path || !mf->has_clocks || mf->clocks.offset_ns == 0 ||
		    !mf->clocks.sync_file || strcmp(mf->path, owner_full) != 0 ||
		    !wb_ref_follows(wb, mf->clocks.sync_file) ||
		    __builtin_sub_overflow(0, mf->clocks.offset_ns, &neg))
			continue;
		fmt_dur(neg, d, sizeof d);
		ref = short_name(mf->clocks.sync_file, 60);
		b = para_add(ps, ROLE_WARNING);
		tm_buf_addf(b,
			    "warning (tracemerge): trace_processor's order (priority, then name) "
			    "gives the timeline to %s, so its offset moves %s %s instead",
			    owner, ref, d);
		free(ref);
	}
	b = para_add(ps, ROLE_INFO);
	tm_buf_addf(b, "Timeline: %s", r->tt_clock ? tm_clock_name(r->tt_clock) : "?");
	if (owner)
		tm_buf_addf(b, " of %s", owner);
	if (r->tt_machine >= 0) {
		const char *mn = machine_row_name(wb, (uint32_t)r->tt_machine);
		tm_buf_addf(b, " (machine %lld%s%s)", (long long)r->tt_machine, mn ? " " : "",
			    mn ? mn : "");
	}
	if (r->tt_why)
		tm_buf_addf(b, ": %s", r->tt_why);
	if (wb->man.tt_file && owner && strcmp(wb->man.tt_file, owner_full) != 0) {
		char *tf = short_name(wb->man.tt_file, 60);
		b = para_add(ps, ROLE_WARNING);
		tm_buf_addf(b, "note: trace_time.file is %s, but %s owns the timeline", tf, owner);
		free(tf);
	}
	if (wb->baseline && owner && strcmp(wb->baseline, owner_full) != 0) {
		char *bl = short_name(wb->baseline, 60);
		b = para_add(ps, ROLE_WARNING);
		tm_buf_addf(b,
			    "warning (tracemerge): the baseline is %s, but trace_processor's order "
			    "(priority, then name) gives the timeline to %s; b on a file sets "
			    "trace_time.file",
			    bl, owner);
		free(bl);
	}
	for (size_t i = 0; i < r->n_warnings; i++) {
		b = para_add(ps, ROLE_WARNING);
		tm_buf_addf(b, "warning (tracemerge): %s", r->warnings[i]);
	}
	free(owner);
}

/* ---- key hints: the keys needed next, from the request table ---- */

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
	const struct wb_request_info *ri = keymap_info(h->req);
	const char *label = compact ? hint_short(h) : h->label;
	char k[32];
	size_t before = b->len;

	if (*full || !ri)
		return;
	keymap_key_name(ri->key1, k, sizeof k);
	tm_buf_addf(b, "%s%s %s", b->len ? "  " : "", k, label ? label : ri->name);
	if ((int)b->len > max_cols) {
		b->len = before;
		b->data[before] = 0;
		*full = true;
	}
}

static void
draw_keys(struct wb *wb, int y)
{
	static const struct hint drop_sel[] = {
		{REQ_NUDGE_MS_UP, "+1ms"}, {REQ_NUDGE_S_UP, "+1s"}, {REQ_OFFSET, "offset"},
		{REQ_AUTO, "auto"},        {REQ_UNDO, "undo"},      {REQ_MACHINE, "machine"},
	};
	static const struct hint drop_other[] = {
		{REQ_DOWN, "next file"}, {REQ_UP, "prev"},   {REQ_OFFSET, "offset"},
		{REQ_AUTO, "auto"},      {REQ_UNDO, "undo"}, {REQ_MACHINE, "machine"},
	};
	static const struct hint ok[] = {
		{REQ_COPY, "copy manifest"}, {REQ_WRITE, "write TAR"}, {REQ_SAVE_MANIFEST, "save"},
		{REQ_FOCUS, "manifest"},     {REQ_MACHINE, "machine"}, {REQ_OFFSET, "offset"},
		{REQ_UNDO, "undo"},
	};
	static const struct hint man[] = {
		{REQ_DOWN, "scroll"},     {REQ_FOCUS, "files"},     {REQ_COPY, "copy"},
		{REQ_SAVE_MANIFEST, "save"}, {REQ_WRITE, "write TAR"}, {REQ_UNDO, "undo"},
	};
	static const struct hint err[] = {
		{REQ_UNDO, "undo"}, {REQ_AUTO, "auto"},        {REQ_OFFSET, "offset"},
		{REQ_CLOCK, "own clock"}, {REQ_MACHINE, "machine"}, {REQ_FOCUS, "manifest"},
	};
	static const struct hint tail[] = {{REQ_HELP, "help"}, {REQ_QUIT, "quit"}};
	const struct hint *set = ok;
	size_t n_set = sizeof ok / sizeof ok[0];
	const struct tm_report_file *rf = wb_row_file(wb, wb->sel);
	struct tm_buf b;
	bool full = false;
	int reserve = 16; /* "  ? help  q quit" */

	tm_buf_init(&b);
	if (wb->help) {
		tm_buf_adds(&b, "j/k scroll  q close help");
	} else {
		if (wb->focus_manifest) {
			set = man;
			n_set = sizeof man / sizeof man[0];
		} else if (wb->rep && wb->rep->error) {
			set = err;
			n_set = sizeof err / sizeof err[0];
		} else if (wb->rep && wb->rep->dropped && rf && rf->dropped) {
			set = drop_sel;
			n_set = sizeof drop_sel / sizeof drop_sel[0];
		} else if (wb->rep && wb->rep->dropped) {
			set = drop_other;
			n_set = sizeof drop_other / sizeof drop_other[0];
		}
		/* COLS - 1: the bottom-right cell cannot be written. */
		bool more = wb->det_more && !wb->focus_manifest;
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
	move(y, 0);
	put_text(b.data ? b.data : "", COLS, theme_attr(ROLE_KEY_HINT));
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
	/* The whole row: nothing drawn before (help text) may show after it. */
	attrset(theme_attr(ROLE_DEFAULT));
	for (int x = 0; x < COLS; x++)
		mvaddch(y, x, ' ');
	move(y, 0);
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

	/* Rows 1 .. LINES-3: the message line (LINES-2) and the key hints
	 * (LINES-1) are drawn on their own rows, never over the text. */
	int n_lines = (REQ__COUNT - 1) + (int)(sizeof notes / sizeof notes[0]);
	int room = LINES - 3;
	if (room > 0 && (int)wb->help_scroll > n_lines - room)
		wb->help_scroll = n_lines > room ? (size_t)(n_lines - room) : 0;
	skip = wb->help_scroll;
	move(0, 0);
	put_text(" tracemerge help: keys and commands", COLS, theme_attr(ROLE_TITLE));
	fill_to(0, COLS, theme_attr(ROLE_TITLE));
	for (int r = REQ_NONE + 1; r < REQ__COUNT && y < LINES - 2; r++) {
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
	for (size_t i = 0; i < sizeof notes / sizeof notes[0] && y < LINES - 2; i++) {
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
	wb->det_more = false;
	wb->det_rows = 0;
	if (wb->help) {
		draw_help(wb);
		draw_msg(wb, rows - 2);
		wnoutrefresh(stdscr);
		return;
	}
	draw_title(wb);
	size_t n = wb_n_rows(wb);
	bool side = cols >= 120;
	int left_w = side ? cols * 3 / 5 : cols, right_x = side ? left_w + 1 : cols;
	struct paras verdict = {0}, owner = {0}, det = {0};

	/* Bottom: verdict, owner and warnings (wrapped, never cut while the
	 * screen has room), message, key hints. */
	verdict_paras(wb, &verdict);
	owner_paras(wb, &owner);
	details_paras(wb, &det);
	int v_h = min_int(max_int(paras_lines(&verdict, cols), 1), 4);
	int o_h = min_int(paras_lines(&owner, cols), max_int(1, min_int(4, (rows - 12) / 4)));
	int bottom = v_h + o_h + 2;
	int avail = rows - 1 - bottom;
	if (avail < 8) { /* short screens: the owner block gives way first */
		o_h = max_int(0, o_h - (8 - avail));
		bottom = v_h + o_h + 2;
		avail = rows - 1 - bottom;
	}
	/* Middle: list, details, timeline, manifest, each from what it needs. */
	int list_h = 1 + (int)(n < 1 ? 1 : n);
	int list_max = max_int(3, (avail + 2) / 3);
	if (list_h > list_max)
		list_h = list_max;
	int rest = avail - list_h;
	int det_need = 1 + max_int(1, paras_lines(&det, left_w));
	int tl_need = 1 + max_int(1, (int)n_timeline_files(wb));
	int det_h, tl_h, man_h;
	if (side) {
		det_h = min_int(det_need, max_int(3, rest - tl_need));
		tl_h = rest - det_h;
		man_h = 0;
		draw_manifest(wb, 1, avail, right_x, cols - right_x);
	} else if (wb->focus_manifest) {
		/* The manifest takes the room of the details and the strip. */
		det_h = 0;
		tl_h = 0;
		man_h = rest;
	} else {
		det_h = min_int(det_need, max_int(3, rest - tl_need - 1));
		tl_h = min_int(tl_need, max_int(0, rest - det_h - 1));
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
	draw_list(wb, y, list_h, 0, left_w);
	y += list_h;
	if (det_h > 0)
		draw_details(wb, &det, y, det_h, 0, left_w);
	y += det_h;
	if (tl_h > 0)
		draw_timeline(wb, y, tl_h, 0, left_w);
	y += tl_h;
	if (man_h > 0)
		draw_manifest(wb, y, man_h, 0, left_w);
	y = rows - bottom;
	paras_draw(&verdict, y, 0, cols, v_h);
	if (o_h > 0)
		paras_draw(&owner, y + v_h, 0, cols, o_h);
	paras_fini(&verdict);
	paras_fini(&owner);
	paras_fini(&det);
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
view_dump_screen(struct wb *wb, const char *path, bool roles)
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
	if (roles)
		dump_roles(f);
	fclose(f);
	return true;
}

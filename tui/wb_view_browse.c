/* SPDX-License-Identifier: MIT */
/*
 * Draws the events list and the tracks view (wb_act_browse.c keeps their
 * state): the merged trace's events as the engine's view (tm_view) orders
 * and indexes them.  Reads the workbench, never writes it.  Every name from
 * a trace goes through text_escape_cols before the terminal; every number
 * is one of the report's (--json's), times in exact nanoseconds.
 */
#include <curses.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "wb.h"

/* "12.000450000" seconds: every nanosecond, as --json's ts/1e9. */
void
browse_fmt_ts(int64_t ns, char *buf, size_t len)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	snprintf(buf, len, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "", a / 1000000000u,
		 a % 1000000000u);
}

uint64_t
browse_proc_key(const struct tm_report_track *t)
{
	/* (pids are below 2^32: file and machine above them) */
	return ((uint64_t)t->file << 48 ^ (uint64_t)t->machine << 32) + (uint32_t)t->pid;
}

static bool
proc_folded(const struct wb_browse *b, uint64_t key)
{
	for (size_t i = 0; i < b->n_pfold; i++)
		if (b->pfold[i] == key)
			return true;
	return false;
}

size_t
browse_rows(const struct wb_ui *ui, const struct tm_report *r, const struct tm_view *v,
	    struct wb_trow *out, size_t cap)
{
	size_t n = 0;
	uint32_t *order = malloc((r->n_tracks + 1) * sizeof *order);
	if (!order)
		abort();
	tm_report_tracks_order(r, order);
	uint32_t file = UINT32_MAX;
	const struct tm_report_track *proc = NULL;
	bool pfolded = false;
	for (size_t i = 0; i < r->n_tracks; i++) {
		uint32_t t = order[i];
		const struct tm_report_track *k = &r->tracks[t];
		if (k->file != file) {
			file = k->file;
			proc = NULL;
			if (out && n < cap)
				out[n] = (struct wb_trow){true, false, 0, 0, file, UINT32_MAX};
			n++;
		}
		if (file < ui->browse.n_folded && ui->browse.folded[file])
			continue;
		if (k->pid >= 0 && (!proc || proc->machine != k->machine || proc->pid != k->pid)) {
			proc = k;
			pfolded = proc_folded(&ui->browse, browse_proc_key(k));
			if (out && n < cap)
				out[n] = (struct wb_trow){true, true, 1, 0, file, t};
			n++;
		} else if (k->pid < 0) {
			proc = NULL;
		}
		if (proc && pfolded)
			continue;
		unsigned lanes = v ? tm_view_track_depths(v, t) : 1;
		for (unsigned d = 0; d < lanes; d++) {
			if (out && n < cap)
				out[n] = (struct wb_trow){false, false, (uint8_t)(proc ? 2 : 1), (uint8_t)d,
							  file, t};
			n++;
		}
	}
	free(order);
	return n;
}

const struct wb_trow *
browse_rows_now(const struct wb *wb, const struct tm_report *r, size_t *n, struct wb_trow **tmp)
{
	const struct wb_browse *b = &wb->ui.browse;
	*tmp = NULL;
	if (b->rows && b->rows_gen == model_view_gen(&wb->m)) {
		*n = b->n_rows;
		return b->rows;
	}
	const struct tm_report *vr;
	const struct tm_view *v = model_view(&wb->m, &vr);
	*n = browse_rows(&wb->ui, r, v, NULL, 0);
	*tmp = calloc(*n + 1, sizeof **tmp);
	if (!*tmp)
		abort();
	browse_rows(&wb->ui, r, v, *tmp, *n);
	return *tmp;
}

static void
put_untrusted(const char *s, int max_cols, int attr)
{
	if (max_cols <= 0)
		return;
	char *e = text_escape_cols(s ? s : "", max_cols);
	attrset(attr);
	addstr(e);
	free(e);
}

static void
put_ours(const char *s, int max_cols, int attr)
{
	put_untrusted(s, max_cols, attr); /* our own text, escaped all the same */
}

static void
clear_row(int y, int attr)
{
	attrset(attr);
	move(y, 0);
	for (int x = 0; x < COLS; x++)
		addch(' ');
	move(y, 0);
}

/* A report file's name: its member path, a loose input's base name. */
static const char *
file_name(const struct wb *wb, const struct tm_report *r, uint32_t file)
{
	if (file >= r->n_files)
		return "";
	if (r->files[file].path)
		return r->files[file].path;
	return model_member_name(&wb->m, r->files[file].member);
}

static void
machine_name(const struct tm_report *r, uint32_t id, char *buf, size_t len)
{
	for (size_t i = 0; i < r->n_machines; i++)
		if (r->machines[i].id == id && r->machines[i].name) {
			snprintf(buf, len, "%s", r->machines[i].name);
			return;
		}
	snprintf(buf, len, "%" PRIu32, id);
}

/* The selected event, then the nearest event of the same name in each
 * other file (alignment at a glance), on rows y and y + 1. */
static void
draw_selected(const struct wb *wb, const struct tm_report *r, const struct tm_view *v, int y)
{
	size_t ev = wb->ui.browse.ev;
	clear_row(y, theme_attr(ROLE_STATUS));
	clear_row(y + 1, theme_attr(ROLE_DEFAULT));
	if (ev >= r->n_events) {
		move(y, 0);
		put_ours("No event selected", COLS, theme_attr(ROLE_STATUS));
		return;
	}
	const struct tm_report_event *e = &r->events[ev];
	char ts[40], dur[40] = "", line[512];
	struct tm_buf tid;
	tm_buf_init(&tid);
	tm_report_track_id(wb->m.s, r, e->track, &tid);
	browse_fmt_ts(e->ts, ts, sizeof ts);
	if (e->dur >= 0)
		browse_fmt_ts(e->dur, dur, sizeof dur);
	move(y, 0);
	put_untrusted(e->name ? e->name : "(unnamed)", COLS / 3, theme_attr(ROLE_STATUS) | A_BOLD);
	char wall[96], at[128] = "";
	if (text_fmt_clock(r, e->ts, true, wall, sizeof wall))
		snprintf(at, sizeof at, " (%s)", wall);
	double val;
	char vs[48] = "";
	if (tm_report_event_value(r, ev, &val))
		snprintf(vs, sizeof vs, "  value %.17g", val);
	snprintf(line, sizeof line, "  at %s s%s%s%s%s", ts, at, dur[0] ? "  dur " : "", dur, vs);
	put_ours(line, COLS, theme_attr(ROLE_STATUS));
	/* kept or dropped before the track: the stat is what matters */
	const char *why = tm_report_event_dropped(e);
	snprintf(line, sizeof line, "  %s%s", why ? "DROPPED: " : "kept", why ? why : "");
	put_ours(line, COLS, theme_attr(why ? ROLE_DROPPED : ROLE_STATUS));
	put_ours("  on ", COLS, theme_attr(ROLE_STATUS));
	put_untrusted(tid.data ? tid.data : "-", COLS / 3, theme_attr(ROLE_STATUS));
	if (e->track < r->n_tracks) {
		/* what trace_processor names its track: "(PROCESS PID > TITLE)" */
		tm_buf_reset(&tid);
		tm_buf_adds(&tid, " (");
		tm_report_track_process(r, e->track, &tid);
		if (r->tracks[e->track].pid >= 0)
			tm_buf_adds(&tid, " > ");
		tm_report_track_title(r, e->track, &tid);
		tm_buf_adds(&tid, ")");
		put_untrusted(tid.data, COLS / 2, theme_attr(ROLE_STATUS));
	}
	tm_buf_fini(&tid);
	/* alignment at a glance */
	move(y + 1, 0);
	bool any = false;
	for (uint32_t f = 0; f < r->n_files && e->name; f++) {
		if (f == e->file || !r->files[f].is_trace)
			continue;
		size_t o = tm_view_nearest(v, ev, f);
		if (o == SIZE_MAX)
			continue;
		int x, yy;
		getyx(stdscr, yy, x);
		(void)yy;
		if (x >= COLS - 10)
			break;
		char d[48];
		int64_t delta = r->events[o].ts - e->ts;
		browse_fmt_ts(delta, d, sizeof d);
		put_ours(any ? "   " : "same name: ", COLS - x, theme_attr(ROLE_DIM));
		getyx(stdscr, yy, x);
		put_untrusted(file_name(wb, r, f), (COLS - x) / 2, theme_attr(ROLE_DEFAULT));
		getyx(stdscr, yy, x);
		snprintf(line, sizeof line, " %s%s s", delta >= 0 ? "+" : "", d);
		put_ours(line, COLS - x, theme_attr(ROLE_INFO));
		any = true;
	}
	if (!any) {
		move(y + 1, 0);
		put_ours(e->name ? "same name: no event of this name in another file"
				 : "same name: the event has no name",
			 COLS, theme_attr(ROLE_DIM));
	}
}

/* ---- the events list ---- */

static void
draw_events(const struct wb *wb, const struct tm_report *r, const struct tm_view *v)
{
	const struct wb_browse *b = &wb->ui.browse;
	char line[1024];
	int rows = LINES - 6; /* title, header, ..., selected, same name, msg, keys */
	clear_row(0, theme_attr(ROLE_TITLE));
	snprintf(line, sizeof line, " Events in timeline order: %zu listed, %zu dropped%s%s%s",
		 tm_view_n(v), tm_view_n_dropped(v), b->filter_on ? "; filter: " : "", "", "");
	put_ours(line, COLS, theme_attr(ROLE_TITLE));
	if (b->filter_on) {
		put_untrusted(b->filt_text, COLS / 3, theme_attr(ROLE_TITLE));
		snprintf(line, sizeof line, " (%zu shown)", b->n_shown);
		put_ours(line, COLS, theme_attr(ROLE_TITLE));
	}
	clear_row(1, theme_attr(ROLE_HEADER));
	char zone[48];
	size_t first = b->top < b->n_shown ? tm_view_at(v, b->shown[b->top]) : SIZE_MAX;
	text_clock_zone(r, first < r->n_events ? r->events[first].ts : 0, zone, sizeof zone);
	/* under REALTIME a wider column: month, day and time of day */
	int tw = zone[0] ? 24 : 19, dx = tw - 19;
	char tsh[64];
	snprintf(tsh, sizeof tsh, zone[0] ? "TIME (%s)" : "TS (s)", zone);
	snprintf(line, sizeof line, "%*s %11s  %-2s  %-16s  %-5s %-21s %s", tw, tsh, "DUR (s)", "PH",
		 "FILE", "MACH", "TRACK", "NAME");
	put_ours(line, COLS, theme_attr(ROLE_HEADER));
	for (int i = 0; i < rows; i++) {
		size_t k = b->top + (size_t)i;
		int y = 2 + i;
		clear_row(y, theme_attr(ROLE_DEFAULT));
		if (k >= b->n_shown)
			continue;
		size_t ev = tm_view_at(v, b->shown[k]);
		if (ev >= r->n_events)
			continue;
		const struct tm_report_event *e = &r->events[ev];
		bool sel = ev == b->ev;
		const char *why = tm_report_event_dropped(e);
		int attr = theme_attr(sel ? ROLE_CURSOR : why ? ROLE_DROPPED : ROLE_DEFAULT);
		if (sel)
			clear_row(y, attr);
		char ts[40], dur[40] = "-", mach[64];
		/* under REALTIME the time of day, as the other panes say it
		 * (to the nanosecond; the date in the header) */
		if (!text_fmt_clock(r, e->ts, false, ts, sizeof ts))
			browse_fmt_ts(e->ts, ts, sizeof ts);
		if (e->dur >= 0)
			browse_fmt_ts(e->dur, dur, sizeof dur);
		machine_name(r, e->machine, mach, sizeof mach);
		snprintf(line, sizeof line, "%*s %11s  %c   ", tw, ts, dur, e->phase ? e->phase : '-');
		move(y, 0);
		if (!sel)
			attr = theme_attr(ROLE_DEFAULT);
		int wattr = theme_attr(sel ? ROLE_CURSOR : why ? ROLE_DROPPED : ROLE_DEFAULT);
		put_ours(line, COLS, attr);
		put_untrusted(file_name(wb, r, e->file), 16, attr);
		move(y, 55 + dx);
		put_untrusted(mach, 5, attr);
		move(y, 61 + dx);
		struct tm_buf tid;
		tm_buf_init(&tid);
		tm_report_track_id(wb->m.s, r, e->track, &tid);
		put_untrusted(tid.data ? tid.data : "-", 20, attr);
		tm_buf_fini(&tid);
		move(y, 83 + dx);
		int x, yy;
		getyx(stdscr, yy, x);
		(void)yy;
		if (x < COLS) {
			put_untrusted(e->name ? e->name : "(unnamed)", COLS - x - (why ? 2 : 0), wattr);
			if (why) {
				getyx(stdscr, yy, x);
				snprintf(line, sizeof line, "  %s", why);
				put_ours(line, COLS - x, wattr);
			}
		}
	}
	draw_selected(wb, r, v, LINES - 4);
	/* search matches are found by the list, not marked: n/N move to them */
}

/* ---- the tracks view ---- */

/* A counter value's level on its track's range: '0' to '9'. */
static char
spark_level(double val, double lo, double hi)
{
	if (!(hi > lo))
		return '5';
	/* finite ends can still be infinitely apart (+-1.7e308): f is NaN
	 * then, and only a compared value is cast (a NaN cast is undefined) */
	double f = (val - lo) / (hi - lo) * 9.0 + 0.5;
	int k = f >= 9 ? 9 : f > 0 ? (int)f : 0;
	return (char)('0' + k);
}

#define NAME_W 26

static void
draw_axis(const struct wb *wb, const struct tm_report *r, int y, int x0, int w)
{
	const struct wb_browse *b = &wb->ui.browse;
	char a[48], z[48], line[160];
	clear_row(y, theme_attr(ROLE_HEADER));
	bool wall = text_fmt_clock(r, b->t0, true, a, sizeof a) &&
		    text_fmt_clock(r, b->t0 + b->span, false, z, sizeof z);
	if (!wall) {
		browse_fmt_ts(b->t0, a, sizeof a);
		browse_fmt_ts(b->t0 + b->span, z, sizeof z);
	}
	snprintf(line, sizeof line, wall ? "%s" : "%s s", a);
	int left = (int)strlen(line);
	move(y, 0);
	put_ours("merged timeline", NAME_W - 1, theme_attr(ROLE_HEADER));
	move(y, x0);
	put_ours(line, w, theme_attr(ROLE_HEADER));
	snprintf(line, sizeof line, wall ? "%s" : "%s s", z);
	int len = (int)strlen(line);
	if (w - len > left + 1) { /* the right end's label only where both fit */
		move(y, x0 + w - len);
		put_ours(line, len, theme_attr(ROLE_HEADER));
	}
}

static void
draw_tracks(const struct wb *wb, const struct tm_report *r, const struct tm_view *v)
{
	const struct wb_browse *b = &wb->ui.browse;
	char line[512];
	int x0 = NAME_W, w = COLS - NAME_W;
	int rows = LINES - 6; /* title, axis, ..., selected, same name, msg, keys */
	if (w < 8 || rows < 1)
		return;
	int64_t step = b->span / w + (b->span % w != 0);
	if (step < 1)
		step = 1;
	clear_row(0, theme_attr(ROLE_TITLE));
	size_t n_files = 0;
	for (size_t t = 0; t < r->n_tracks; t++)
		n_files += !t || r->tracks[t].file != r->tracks[t - 1].file;
	char col[40];
	browse_fmt_ts(step, col, sizeof col);
	snprintf(line, sizeof line,
		 " Tracks: %zu in %zu file%s, %zu events (%zu dropped); a column %s s   # slice = in one "
		 "^ instant * counter x dropped : before 0",
		 r->n_tracks, n_files, n_files == 1 ? "" : "s", tm_view_n(v), tm_view_n_dropped(v), col);
	put_ours(line, COLS, theme_attr(ROLE_TITLE));
	draw_axis(wb, r, 1, x0, w);
	size_t n_rows;
	struct wb_trow *tmp;
	const struct wb_trow *all = browse_rows_now(wb, r, &n_rows, &tmp);
	struct tm_view_cell *cells = calloc((size_t)w + 1, sizeof *cells);
	if (!cells)
		abort();
	struct tm_buf lb;
	tm_buf_init(&lb);
	size_t ev_sel = b->ev;
	const struct tm_report_event *se = ev_sel < r->n_events ? &r->events[ev_sel] : NULL;
	int sel_col = se && se->ts >= b->t0 && se->ts < b->t0 + b->span ? (int)((se->ts - b->t0) / step)
									 : -1;
	for (int i = 0; i < rows; i++) {
		size_t k = b->ttop + (size_t)i;
		int y = 2 + i;
		clear_row(y, theme_attr(ROLE_DEFAULT));
		if (k >= n_rows)
			continue;
		const struct wb_trow *row = &all[k];
		bool sel = k == b->trow;
		int nattr = theme_attr(sel ? ROLE_CURSOR : row->header ? ROLE_HEADER : ROLE_DEFAULT);
		move(y, 0);
		if (row->header && !row->proc) {
			bool folded = row->file < b->n_folded && b->folded[row->file];
			put_ours(folded ? "+ " : "- ", 2, nattr);
			put_untrusted(file_name(wb, r, row->file), NAME_W - 3, nattr);
			continue;
		}
		const struct tm_report_track *t = &r->tracks[row->track];
		/* machine > process > thread, as trace_processor names them */
		tm_buf_reset(&lb);
		if (row->proc) {
			tm_buf_adds(&lb, proc_folded(b, browse_proc_key(t)) ? "+ " : "- ");
			tm_report_track_process(r, row->track, &lb);
		} else if (row->lane) {
			/* its slices nested this deep (the last: deeper too) */
			tm_buf_addf(&lb, "  . depth %u%s", row->lane,
				    row->lane + 1u == TM_VIEW_DEPTHS ? "+" : "");
		} else {
			tm_report_track_title(r, row->track, &lb);
		}
		if (row->depth == 1 && !row->lane && r->n_machines > 1) {
			char mach[64];
			machine_name(r, t->machine, mach, sizeof mach);
			tm_buf_addf(&lb, " @%s", mach);
		}
		put_ours(row->depth == 2 ? "    " : "  ", 4, nattr);
		put_untrusted(lb.data ? lb.data : "", NAME_W - 1 - 2 * row->depth, nattr);
		if (row->proc)
			continue;
		tm_view_cells_depth(v, row->track, row->lane, b->t0, step, (size_t)w, cells);
		/* a counter with values: a sparkline of levels 0-9 over its
		 * range, the level held (dim) until its next sample */
		double vlo = 0, vhi = 0;
		bool spark = t->kind == 'c' && !row->lane && tm_view_track_range(v, row->track, &vlo, &vhi);
		for (int c = 0; c < w; c++) {
			const struct tm_view_cell *cl = &cells[c];
			int64_t at = b->t0 + (int64_t)c * step;
			chtype ch = ' ';
			int attr = theme_attr(ROLE_BAR);
			double val;
			size_t held;
			if (cl->dropped) {
				ch = 'x';
				attr = theme_attr(ROLE_DROPPED);
			} else if (spark && cl->n && tm_report_event_value(r, cl->first, &val)) {
				ch = (chtype)spark_level(val, vlo, vhi);
			} else if (spark && !cl->n && (held = tm_view_track_seek(v, row->track, at)) > 0 &&
				   tm_report_event_value(r, tm_view_track_event(v, row->track, held - 1), &val)) {
				ch = (chtype)spark_level(val, vlo, vhi);
				attr = theme_attr(ROLE_DIM);
			} else if (cl->n) {
				char ph = cl->first < r->n_events ? r->events[cl->first].phase : 0;
				ch = t->kind == 'c' || ph == 'C' ? '*'
				     : ph == 'I' || ph == 'i' || ph == 'n' ? '^'
									  : '#';
			} else if (cl->covered) {
				ch = '=';
			} else if (at + step <= 0) {
				ch = ':'; /* before the timeline's zero */
				attr = theme_attr(ROLE_ZERO);
			} else {
				attr = theme_attr(ROLE_DEFAULT);
			}
			if (ch == ' ' && at <= 0 && at + step > 0) {
				ch = '|'; /* zero */
				attr = theme_attr(ROLE_ZERO);
			}
			if (c == sel_col && se && se->track == row->track && tm_view_event_lane(se) == row->lane)
				attr = theme_attr(ROLE_CURSOR);
			mvaddch(y, x0 + c, ch | (chtype)attr);
		}
	}
	free(tmp);
	free(cells);
	tm_buf_fini(&lb);
	draw_selected(wb, r, v, LINES - 4);
	clear_row(LINES - 2, theme_attr(ROLE_DEFAULT));
}

void
view_draw_browse(const struct wb *wb)
{
	const struct tm_report *r;
	const struct tm_view *v = model_view(&wb->m, &r);
	erase();
	if (!v) {
		clear_row(0, theme_attr(ROLE_TITLE));
		put_ours(wb->ui.browse.tracks ? " Tracks" : " Events", COLS, theme_attr(ROLE_TITLE));
		move(2, 0);
		const char *why = !model_details_kept(&wb->m)
			? "The events are not kept for inputs of 16 MiB or more (the scan keeps "
			  "per-event details only under it): `tracemerge check --json --events` lists them."
			: wb->m.eval_error ? "The manifest does not evaluate: no events to show."
			: wb->m.det.error ? wb->m.det.error
					  : "Listing every event (off the screen's thread)...";
		/* word-wrapped (our own text) */
		int y = 2;
		for (const char *p = why; *p && y < LINES - 3; y++) {
			size_t n = strlen(p), w = (size_t)(COLS > 1 ? COLS - 1 : 1);
			if (n > w) {
				n = w;
				while (n > 0 && p[n] != ' ')
					n--;
				if (!n)
					n = w;
			}
			char line[512];
			snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), p);
			move(y, 0);
			put_ours(line, COLS, theme_attr(ROLE_DIM));
			p += n;
			while (*p == ' ')
				p++;
		}
	} else if (wb->ui.browse.tracks) {
		draw_tracks(wb, r, v);
	} else {
		draw_events(wb, r, v);
	}
	clear_row(LINES - 1, theme_attr(ROLE_KEY_HINT));
	put_ours(wb->ui.browse.tracks
			 ? " h/l pan  +/- zoom  0 fit  . zoom to event  j/k track  [ ] event  ! first dropped  d/D next/prev dropped  Space fold  Enter/Tab events  p pair  q close"
			 : " j/k move  / n N search  | filter  ! first dropped  d/D next/prev dropped  Enter tracks  p pair  : command  u undo  q close",
		 COLS, theme_attr(ROLE_KEY_HINT));
}

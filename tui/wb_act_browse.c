/* SPDX-License-Identifier: MIT */
/*
 * The actions of the events list and the tracks view (drawn by
 * wb_view_browse.c): opening them, their keys while they are open (moving,
 * search, filter, the dropped events one key away, pan and zoom, folding),
 * and :report.  Everything they show is the engine's view of the current
 * evaluation (model_view: tm_view over the report's events list); a filter,
 * a search or a jump costs one pass over the list, a frame what is on
 * screen.  Handlers of the one action table (wb_actions.c).
 */
#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wb.h"
#include "wb_act.h"

static int
list_rows(void)
{
	return LINES - 6 > 1 ? LINES - 6 : 1;
}

static int
track_rows(void)
{
	return LINES - 6 > 1 ? LINES - 6 : 1;
}

/* The window over every track's events, dropped ones where they would
 * have landed included, metadata ('M': a Chrome trace's names at ts 0,
 * days before its events) left out; zero in it when it is near. */
static void
fit(struct wb_browse *b, const struct tm_report *r, const struct tm_view *v)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (uint32_t t = 0; t < r->n_tracks; t++) {
		size_t n = tm_view_track_n(v, t), i = 0, j = n;
		while (i < n && r->events[tm_view_track_event(v, t, i)].phase == 'M')
			i++;
		while (j > i && r->events[tm_view_track_event(v, t, j - 1)].phase == 'M')
			j--;
		if (i >= j)
			continue;
		const struct tm_report_event *e0 = &r->events[tm_view_track_event(v, t, i)];
		const struct tm_report_event *e1 = &r->events[tm_view_track_event(v, t, j - 1)];
		int64_t end = e1->dur > 0 && e1->dur < INT64_MAX / 4 ? e1->ts + e1->dur : e1->ts;
		lo = e0->ts < lo ? e0->ts : lo;
		hi = end > hi ? end : hi;
	}
	size_t n = tm_view_n(v);
	if (lo > hi && n) { /* metadata only: the listed events' */
		lo = r->events[tm_view_at(v, 0)].ts;
		hi = r->events[tm_view_at(v, n - 1)].ts;
	}
	if (lo > hi)
		lo = 0, hi = 1;
	hi++;
	if (lo > 0 && lo <= (hi - lo) / 4)
		lo = 0; /* zero on screen: what lands before it shows as such */
	int64_t span = hi - lo;
	b->t0 = lo - span / 50;
	b->span = span + span / 25 + 1;
}

/* The tracks view's rows for the current view and folds (kept, so a frame
 * does not rebuild them). */
static void
rows_rebuild(struct wb *wb, const struct tm_report *r)
{
	struct wb_browse *b = &wb->ui.browse;
	const struct tm_report *vr;
	const struct tm_view *v = model_view(&wb->m, &vr);
	size_t n = browse_rows(&wb->ui, r, v, NULL, 0);
	free(b->rows);
	b->rows = calloc(n + 1, sizeof *b->rows);
	if (!b->rows)
		abort();
	b->n_rows = browse_rows(&wb->ui, r, v, b->rows, n);
	b->rows_gen = model_view_gen(&wb->m);
}

/* The shown lines (positions through the filter) as of the current view;
 * the selection kept, else the first dropped event, else the first. */
void
browse_refresh(struct wb *wb)
{
	struct wb_browse *b = &wb->ui.browse;
	const struct tm_report *r;
	const struct tm_view *v;
	if (!b->on || !(v = model_view(&wb->m, &r)))
		return;
	if (b->shown_gen != model_view_gen(&wb->m)) {
		size_t n = tm_view_n(v);
		b->n_shown = 0;
		if (b->cap_shown < n + 1) {
			b->shown = realloc(b->shown, (n + 1) * sizeof *b->shown);
			if (!b->shown)
				abort();
			b->cap_shown = n + 1;
		}
		for (size_t p = 0; p < n; p++)
			if (!b->filter_on || tm_event_matches(r, tm_view_at(v, p), &b->filt))
				b->shown[b->n_shown++] = (uint32_t)p;
		b->shown_gen = model_view_gen(&wb->m);
		if (b->ev >= r->n_events) /* the first event on the timeline */
			b->ev = n ? tm_view_at(v, 0) : SIZE_MAX;
		if (b->n_folded < r->n_files) {
			b->folded = realloc(b->folded, (r->n_files + 1) * sizeof *b->folded);
			if (!b->folded)
				abort();
			memset(b->folded + b->n_folded, 0, (r->n_files + 1 - b->n_folded) * sizeof *b->folded);
			b->n_folded = r->n_files;
		}
	}
	if (!b->rows || b->rows_gen != model_view_gen(&wb->m))
		rows_rebuild(wb, r);
	if (!b->fitted) {
		fit(b, r, v);
		b->fitted = true;
	}
	/* the selected line shown */
	size_t line = 0;
	if (b->ev < r->n_events) {
		size_t p = tm_view_pos(v, b->ev), lo = 0, hi = b->n_shown;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (b->shown[mid] < p)
				lo = mid + 1;
			else
				hi = mid;
		}
		line = lo;
	}
	size_t rows = (size_t)list_rows();
	if (line < b->top)
		b->top = line;
	else if (line >= b->top + rows)
		b->top = line - rows + 1;
	if (b->top > b->n_shown)
		b->top = 0;
	size_t n_rows = b->n_rows;
	if (b->trow >= n_rows)
		b->trow = n_rows ? n_rows - 1 : 0;
	size_t trs = (size_t)track_rows();
	if (b->trow < b->ttop)
		b->ttop = b->trow;
	else if (b->trow >= b->ttop + trs)
		b->ttop = b->trow - trs + 1;
}

/* The selected line among the shown ones, SIZE_MAX when hidden. */
static size_t
sel_line(const struct wb_browse *b, const struct tm_view *v)
{
	size_t p = tm_view_pos(v, b->ev);
	for (size_t lo = 0, hi = b->n_shown; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->shown[mid] == p)
			return mid;
		if (b->shown[mid] < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

/* The row of track t in the tracks view (its file unfolded first). */
static void
select_track_of(struct wb *wb, const struct tm_report *r, size_t ev)
{
	struct wb_browse *b = &wb->ui.browse;
	const struct tm_report_event *e = &r->events[ev];
	if (e->track >= r->n_tracks)
		return;
	if (e->file < b->n_folded)
		b->folded[e->file] = false;
	uint64_t pk = browse_proc_key(&r->tracks[e->track]);
	for (size_t i = 0; i < b->n_pfold; i++)
		if (b->pfold[i] == pk)
			b->pfold[i] = b->pfold[--b->n_pfold];
	rows_rebuild(wb, r);
	for (size_t k = 0; k < b->n_rows; k++)
		if (!b->rows[k].header && b->rows[k].track == e->track &&
		    b->rows[k].lane == tm_view_event_lane(e))
			b->trow = k;
}

/* The window moved so that ts is inside it (centred when it was not). */
static void
show_time(struct wb_browse *b, int64_t ts, bool centre)
{
	if (centre || ts < b->t0 || ts >= b->t0 + b->span)
		b->t0 = ts - b->span / 2;
}

/* The window centred on the selected event, wide enough for it and its
 * neighbours on its track (the previous and next events), never wider
 * than it was. */
static void
among_neighbours(struct wb_browse *b, const struct tm_report *r, const struct tm_view *v)
{
	const struct tm_report_event *e = &r->events[b->ev];
	int64_t need = e->dur > 0 ? e->dur : 0;
	size_t n = tm_view_track_n(v, e->track), k = tm_view_track_seek(v, e->track, e->ts);
	while (k < n && tm_view_track_event(v, e->track, k) != b->ev)
		k++;
	if (k < n) {
		if (k > 0) {
			int64_t d = e->ts - r->events[tm_view_track_event(v, e->track, k - 1)].ts;
			need = d > need ? d : need;
		}
		if (k + 1 < n) {
			int64_t d = r->events[tm_view_track_event(v, e->track, k + 1)].ts - e->ts;
			need = d > need ? d : need;
		}
	}
	if (!need) { /* alone on its track: its neighbours on the timeline */
		size_t p = tm_view_pos(v, b->ev), nv = tm_view_n(v);
		for (size_t s = 1; s <= 64 && !need; s++) {
			int64_t d0 = p >= s ? e->ts - r->events[tm_view_at(v, p - s)].ts : 0;
			int64_t d1 = p + s < nv ? r->events[tm_view_at(v, p + s)].ts - e->ts : 0;
			need = d0 > d1 ? d0 : d1;
		}
	}
	if (!need)
		need = 1000000; /* 1 ms */
	int64_t span = need > INT64_MAX / 4 ? INT64_MAX / 2 : need * 3 + 1000;
	if (span < b->span)
		b->span = span;
	b->t0 = e->ts - b->span / 2;
}

/* Select event ev (a report index): shown in the list (a filter hiding
 * it is cleared, and said), on its track's row, in the window. */
static void
select_event(struct wb *wb, const struct tm_report *r, const struct tm_view *v, size_t ev)
{
	struct wb_browse *b = &wb->ui.browse;
	b->ev = ev;
	if (sel_line(b, v) == SIZE_MAX && b->filter_on) {
		b->filter_on = false;
		b->shown_gen = 0;
		msg(wb, ROLE_INFO, "The filter hid that event: cleared");
	}
	select_track_of(wb, r, ev);
	show_time(b, r->events[ev].ts, false);
	browse_refresh(wb);
}

static void
jump_dropped(struct wb *wb, int dir, bool first)
{
	const struct tm_report *r;
	const struct tm_view *v = model_view(&wb->m, &r);
	if (!v)
		return;
	size_t from = first || wb->ui.browse.ev >= r->n_events ? SIZE_MAX : tm_view_pos(v, wb->ui.browse.ev);
	if (first)
		dir = 1;
	else if (dir < 0 && from == SIZE_MAX)
		from = tm_view_n(v);
	size_t p = tm_view_dropped_step(v, from, dir);
	if (p == SIZE_MAX) {
		msg(wb, ROLE_DIM, tm_view_n_dropped(v) ? (dir > 0 ? "No dropped event after this one"
								  : "No dropped event before this one")
						       : "No event is dropped");
		return;
	}
	select_event(wb, r, v, tm_view_at(v, p));
	size_t k = 0;
	for (size_t q = tm_view_dropped_step(v, SIZE_MAX, 1); q != SIZE_MAX && q <= p;
	     q = tm_view_dropped_step(v, q, 1))
		k++;
	char text[160];
	snprintf(text, sizeof text, "Dropped event %zu of %zu (%s)", k, tm_view_n_dropped(v),
		 tm_report_event_dropped(&r->events[tm_view_at(v, p)]));
	msg(wb, ROLE_INFO, text);
}

static void
move_lines(struct wb *wb, long delta)
{
	struct wb_browse *b = &wb->ui.browse;
	const struct tm_report *r;
	const struct tm_view *v = model_view(&wb->m, &r);
	if (!v || !b->n_shown)
		return;
	size_t line = sel_line(b, v);
	if (line == SIZE_MAX)
		line = 0;
	long to = (long)line + delta;
	if (to < 0)
		to = 0;
	if (to >= (long)b->n_shown)
		to = (long)b->n_shown - 1;
	b->ev = tm_view_at(v, b->shown[to]);
	show_time(b, r->events[b->ev].ts, false);
	browse_refresh(wb);
}

static void
search_step(struct wb *wb, int dir)
{
	struct wb_browse *b = &wb->ui.browse;
	const struct tm_report *r;
	const struct tm_view *v = model_view(&wb->m, &r);
	if (!v || !b->search[0] || !b->n_shown)
		return;
	struct tm_event_filter f = {b->search, -1, -1, false};
	size_t line = sel_line(b, v), n = b->n_shown;
	if (line == SIZE_MAX)
		line = dir > 0 ? n - 1 : 0;
	for (size_t i = 1; i <= n; i++) {
		size_t k = dir > 0 ? (line + i) % n : (line + n - i % n) % n;
		size_t ev = tm_view_at(v, b->shown[k]);
		if (tm_event_matches(r, ev, &f)) {
			select_event(wb, r, v, ev);
			model_set_msg(&wb->m, ROLE_DIM, "Search: %s%s", b->search,
				      (dir > 0 && k <= line) || (dir < 0 && k >= line) ? " (wrapped)" : "");
			return;
		}
	}
	msg(wb, ROLE_WARNING, "No event of that name");
}

void
act_event_search(struct wb *wb, const char *arg)
{
	if (wants_prompt(wb, arg)) {
		ask(wb, REQ_EVENT_SEARCH, COMPLETE_WORDS, "Search events: ", wb->ui.browse.search);
		return;
	}
	snprintf(wb->ui.browse.search, sizeof wb->ui.browse.search, "%s", arg);
	if (!wb->ui.browse.on)
		act_events(wb, NULL);
	search_step(wb, 1);
}

void
act_event_filter(struct wb *wb, const char *arg)
{
	struct wb_browse *b = &wb->ui.browse;
	if (!arg) {
		ask(wb, REQ_EVENT_FILTER, COMPLETE_WORDS, "Filter events (NAME file=F machine=N dropped): ",
		    b->filter_on ? b->filt_text : "");
		return;
	}
	const struct tm_report *r = NULL;
	const struct tm_view *v = model_view(&wb->m, &r);
	struct tm_event_filter f = {NULL, -1, -1, false};
	char words[256], name[128] = "";
	snprintf(words, sizeof words, "%s", arg);
	for (char *save = NULL, *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (!strcmp(w, "dropped")) {
			f.dropped_only = true;
		} else if (!strncmp(w, "machine=", 8)) {
			char *end;
			long long id = strtoll(w + 8, &end, 10);
			if (*end || id < 0) {
				msg(wb, ROLE_ERROR, "Filter: machine=N takes a machine id (the MACH column)");
				return;
			}
			f.machine = id;
		} else if (!strncmp(w, "file=", 5)) {
			f.file = -2; /* a file name that matches none */
			for (size_t i = 0; r && i < r->n_files; i++)
				if (r->files[i].path && (!strcmp(r->files[i].path, w + 5) ||
							 !strcmp(tm_path_base(r->files[i].path), w + 5)))
					f.file = (int64_t)i;
			if (f.file == -2) {
				msg(wb, ROLE_ERROR, "Filter: no file of that name in the report");
				return;
			}
		} else {
			snprintf(name, sizeof name, "%s", w);
		}
	}
	snprintf(b->filt_name, sizeof b->filt_name, "%s", name);
	f.name = name[0] ? b->filt_name : NULL;
	b->filt = f;
	b->filter_on = f.name || f.file >= 0 || f.machine >= 0 || f.dropped_only;
	snprintf(b->filt_text, sizeof b->filt_text, "%s", arg);
	b->shown_gen = 0;
	if (!b->on)
		act_events(wb, NULL);
	browse_refresh(wb);
	if (v && b->n_shown && sel_line(b, v) == SIZE_MAX)
		b->ev = tm_view_at(v, b->shown[0]);
	browse_refresh(wb);
	msg(wb, ROLE_DIM, b->filter_on ? "Filtered" : "Filter cleared: every event");
}

static void
browse_open(struct wb *wb, bool tracks)
{
	struct wb_browse *b = &wb->ui.browse;
	if (!b->shown) /* the first opening: the first event selected */
		b->ev = SIZE_MAX;
	b->on = true;
	b->tracks = tracks;
	model_details_want_all(&wb->m, true);
	browse_refresh(wb);
}

static void
browse_close(struct wb *wb)
{
	wb->ui.browse.on = false;
	model_details_want_all(&wb->m, false);
}

void
act_events(struct wb *wb, const char *arg)
{
	(void)arg;
	browse_open(wb, false);
}

void
act_tracks(struct wb *wb, const char *arg)
{
	(void)arg;
	browse_open(wb, true);
}

/* The pair picker on the selected event's file, its search the event's
 * name: a pair from there is an offset (wb_act_edit.c act_pair). */
static void
pair_from(struct wb *wb, const struct tm_report *r)
{
	struct wb_browse *b = &wb->ui.browse;
	if (b->ev >= r->n_events)
		return;
	const struct tm_report_event *e = &r->events[b->ev];
	const char *path = e->file < r->n_files ? r->files[e->file].path : NULL;
	size_t row = path ? model_row_of(&wb->m, path) : SIZE_MAX;
	if (row == SIZE_MAX) {
		msg(wb, ROLE_WARNING, "The event's file is not a row of the list");
		return;
	}
	browse_close(wb);
	select_row(wb, row);
	run(wb, REQ_PAIR, NULL);
	if (wb->ui.picker.on && e->name)
		snprintf(wb->ui.picker.filter, sizeof wb->ui.picker.filter, "%s", e->name);
}

static void
zoom(struct wb_browse *b, const struct tm_report *r, int dir)
{
	int64_t at = b->ev < r->n_events ? r->events[b->ev].ts : b->t0 + b->span / 2;
	int64_t span = dir > 0 ? b->span / 2 : b->span > INT64_MAX / 4 ? b->span : b->span * 2;
	if (span < 8)
		span = 8;
	double frac = b->span ? (double)(at - b->t0) / (double)b->span : 0.5;
	if (frac < 0 || frac > 1)
		frac = 0.5;
	b->t0 = at - (int64_t)(frac * (double)span);
	b->span = span;
}

/* The next or previous event on the selected row's track. */
static void
track_step(struct wb *wb, const struct tm_report *r, const struct tm_view *v, int dir)
{
	struct wb_browse *b = &wb->ui.browse;
	uint32_t t = b->trow < b->n_rows && !b->rows[b->trow].header ? b->rows[b->trow].track
								      : UINT32_MAX;
	if (t == UINT32_MAX)
		return;
	size_t k, cnt = tm_view_track_n(v, t);
	bool on = b->ev < r->n_events && r->events[b->ev].track == t;
	int64_t at = on ? r->events[b->ev].ts : b->t0 + b->span / 2;
	k = tm_view_track_seek(v, t, at);
	if (on) /* find the selected one among equal times */
		while (k < cnt && tm_view_track_event(v, t, k) != b->ev)
			k++;
	size_t to = dir > 0 ? (on ? k + 1 : k) : (k ? k - 1 : SIZE_MAX);
	if (to >= cnt)
		return;
	b->ev = tm_view_track_event(v, t, to);
	show_time(b, r->events[b->ev].ts, false);
	browse_refresh(wb);
}

/* The file list's selection follows the selected event's file, so that
 * a :command that acts on the selected file (:offset, :pair, :machine)
 * acts on it. */
static void
follow_file(struct wb *wb)
{
	const struct tm_report *r;
	const struct tm_view *v = model_view(&wb->m, &r);
	size_t ev = wb->ui.browse.ev;
	if (!v || ev >= r->n_events || r->events[ev].file >= r->n_files)
		return;
	const char *path = r->files[r->events[ev].file].path;
	size_t row = path ? model_row_of(&wb->m, path) : SIZE_MAX;
	if (row != SIZE_MAX && row != sel_row(wb))
		select_row(wb, row);
}

static void browse_key1(struct wb *wb, int key);

void
browse_key(struct wb *wb, int key)
{
	browse_key1(wb, key);
	if (wb->ui.browse.on)
		follow_file(wb);
}

static void
browse_key1(struct wb *wb, int key)
{
	struct wb_browse *b = &wb->ui.browse;
	const struct tm_report *r;
	const struct tm_view *v;
	browse_refresh(wb);
	v = model_view(&wb->m, &r);
	switch (key) {
	case 'q':
	case 27:
		browse_close(wb);
		return;
	case ':':
		run(wb, REQ_PROMPT, NULL);
		return;
	case WB_KEY_CTRL('l'):
		run(wb, REQ_REDRAW, NULL);
		return;
	case '\t':
		b->tracks = !b->tracks;
		return;
	}
	/* the requests that work from anywhere, as bound: undo, redo, help,
	 * the messages (the views' own keys above and below come first) */
	enum wb_request rq = keymap_lookup(key);
	if ((key > 255 || !strchr("!dDp/nN|jkgG [].+=-0hl\r", key)) &&
	    (rq == REQ_UNDO || rq == REQ_REDO || rq == REQ_HELP || rq == REQ_MESSAGES)) {
		run(wb, rq, NULL);
		return;
	}
	if (!v)
		return;
	switch (key) {
	case '!':
		jump_dropped(wb, 1, true);
		return;
	case 'd':
		jump_dropped(wb, 1, false);
		return;
	case 'D':
		jump_dropped(wb, -1, false);
		return;
	case 'p':
		pair_from(wb, r);
		return;
	case '/':
		act_event_search(wb, NULL);
		return;
	case 'n':
	case 'N':
		search_step(wb, key == 'n' ? 1 : -1);
		return;
	}
	if (!b->tracks) {
		switch (key) {
		case 'j':
		case KEY_DOWN:
			move_lines(wb, 1);
			break;
		case 'k':
		case KEY_UP:
			move_lines(wb, -1);
			break;
		case ' ':
		case KEY_NPAGE:
			move_lines(wb, list_rows() - 1);
			break;
		case KEY_PPAGE:
			move_lines(wb, -(list_rows() - 1));
			break;
		case 'g':
		case KEY_HOME:
			move_lines(wb, -(long)b->n_shown);
			break;
		case 'G':
		case KEY_END:
			move_lines(wb, (long)b->n_shown);
			break;
		case '|':
			act_event_filter(wb, NULL);
			break;
		case '\r':
			if (b->ev < r->n_events) {
				b->tracks = true;
				select_track_of(wb, r, b->ev);
				among_neighbours(b, r, v);
				browse_refresh(wb);
			}
			break;
		}
		return;
	}
	switch (key) {
	case 'h':
	case KEY_LEFT:
		b->t0 -= b->span / 4 ? b->span / 4 : 1;
		break;
	case 'l':
	case KEY_RIGHT:
		b->t0 += b->span / 4 ? b->span / 4 : 1;
		break;
	case '+':
	case '=':
		zoom(b, r, 1);
		break;
	case '-':
		zoom(b, r, -1);
		break;
	case '0':
		fit(b, r, v);
		break;
	case '.':
		if (b->ev < r->n_events) {
			const struct tm_report_event *e = &r->events[b->ev];
			int64_t d = e->dur > 0 ? e->dur : 1000000; /* an instant: 1 ms */
			b->span = d + d / 2 + 8;
			b->t0 = e->ts - d / 4 - 4;
		}
		break;
	case 'j':
	case KEY_DOWN:
		b->trow++;
		browse_refresh(wb);
		break;
	case 'k':
	case KEY_UP:
		if (b->trow)
			b->trow--;
		break;
	case ']':
		track_step(wb, r, v, 1);
		break;
	case '[':
		track_step(wb, r, v, -1);
		break;
	case ' ': {
		if (b->trow >= b->n_rows)
			break;
		const struct wb_trow *row = &b->rows[b->trow];
		if (row->proc || row->depth == 2) {
			/* a process (its header or one of its tracks) folds */
			uint64_t pk = browse_proc_key(&r->tracks[row->track]);
			size_t i = 0;
			while (i < b->n_pfold && b->pfold[i] != pk)
				i++;
			if (i < b->n_pfold) {
				b->pfold[i] = b->pfold[--b->n_pfold];
			} else {
				if (b->n_pfold == b->cap_pfold) {
					b->cap_pfold = b->cap_pfold ? 2 * b->cap_pfold : 8;
					b->pfold = realloc(b->pfold, b->cap_pfold * sizeof *b->pfold);
					if (!b->pfold)
						abort();
				}
				b->pfold[b->n_pfold++] = pk;
			}
			rows_rebuild(wb, r);
			for (size_t k = 0; k < b->n_rows; k++) /* the selection on its header */
				if (b->rows[k].proc && browse_proc_key(&r->tracks[b->rows[k].track]) == pk)
					b->trow = k;
		} else if (row->file < b->n_folded) {
			uint32_t f = row->file;
			b->folded[f] = !b->folded[f];
			rows_rebuild(wb, r);
			for (size_t k = 0; k < b->n_rows; k++) /* the selection on the file's header */
				if (b->rows[k].header && !b->rows[k].proc && b->rows[k].file == f)
					b->trow = k;
		}
		break;
	}
	case '\r':
		b->tracks = false;
		break;
	}
	browse_refresh(wb);
}

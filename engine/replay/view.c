/* SPDX-License-Identifier: MIT */
/*
 * The merged trace as views (ours, for the front ends): the tracks the
 * report's listed events are on, the events in timeline order, per-track
 * time-ordered indexes with a running end so that a column of a track row is
 * a few binary searches at any zoom, and same-named events across files.
 * Built from a report's events list (what the replay listed from the scans'
 * op logs); never reads trace bytes.
 */
#include "view.h"
#include "tracknames.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- the tracks, as the replay lists events ---- */

static int
kind_rank(char k)
{
	return k == 's' ? 3 : k == 'c' ? 2 : k == 'i' ? 1 : 0;
}

static char
phase_kind(char phase)
{
	switch (phase) {
	case 'B':
	case 'E':
	case 'X':
		return 's';
	case 'C':
		return 'c';
	case 'I':
	case 'i':
	case 'n':
		return 'i';
	default:
		return 'o';
	}
}

static uint64_t
track_hash(uint32_t file, uint32_t machine, uint64_t key)
{
	uint64_t k[2] = {(uint64_t)file << 32 | machine, key};
	return tm_fnv1a(TM_FNV_INIT, k, sizeof k);
}

uint32_t
tm_tracktab_add(struct tm_tracktab *t, uint32_t file, uint32_t machine, uint64_t key, char phase,
		const char *name, bool dropped)
{
	if (phase == 'C') {
		uint64_t c = tm_fnv1a(TM_FNV_INIT, "C", 1);
		c = tm_fnv1a(c, &key, sizeof key);
		key = name ? tm_fnv1a(c, name, strlen(name)) : c;
	}
	uint64_t h = track_hash(file, machine, key);
	size_t id = SIZE_MAX, first;
	if (tm_u64map_get(&t->ix, h, &first))
		for (size_t i = first; i != UINT32_MAX; i = t->next[i]) {
			TM_PROBE();
			const struct tm_report_track *k = &t->v[i];
			if (k->file == file && k->machine == machine && k->key == key) {
				id = i;
				break;
			}
		}
	if (id == SIZE_MAX) {
		id = t->n++;
		XGROW(t->v, t->cap, t->n);
		XGROW(t->next, t->cap_next, t->n);
		if (file >= t->cap_per_file) {
			size_t old = t->cap_per_file;
			XGROW(t->per_file, t->cap_per_file, (size_t)file + 1);
			memset(t->per_file + old, 0, (t->cap_per_file - old) * sizeof *t->per_file);
		}
		t->v[id] = (struct tm_report_track){.file = file, .machine = machine,
						    .number = ++t->per_file[file], .kind = 'o', .key = key,
						    .pid = -1, .tid = -1};
		/* chained: the newest first in the map, the older ones after it */
		t->next[id] = tm_u64map_get(&t->ix, h, &first) ? (uint32_t)first : UINT32_MAX;
		tm_u64map_set(&t->ix, h, id);
	}
	struct tm_report_track *k = &t->v[id];
	char pk = phase_kind(phase);
	if (kind_rank(pk) > kind_rank(k->kind))
		k->kind = pk;
	k->n_events++;
	k->n_dropped += dropped;
	return (uint32_t)id;
}

void
tm_tracktab_name(struct tm_tracktab *t, uint32_t id, const struct tm_oplog *log, uint64_t key,
		 char phase, const char *name)
{
	struct tm_report_track *k = &t->v[id];
	struct tm_tn_names nm;
	tm_tn_resolve(log, key, &nm);
	k->pid = nm.pid == TM_TN_NONE ? -1 : nm.pid;
	k->tid = nm.tid == TM_TN_NONE ? -1 : nm.tid;
	k->name = nm.name;
	k->process = nm.process;
	k->thread = nm.thread;
	/* a counter sample is on the track of its name (tm_tracktab_add):
	 * trace_processor names the counter track so (json_trace_parser.cc
	 * ParseJsonPacket, case 'C'; systrace_parser.cc ParseSystracePoint,
	 * case 'C') */
	if (phase == 'C') {
		/* a process's counter, not its thread's (JSON: the event's
		 * pid; json_trace_parser.cc names it "NAME ARG" per arg, of
		 * which the scan keeps none: the event's name) */
		k->tid = -1;
		k->thread = NULL;
		if (name)
			k->name = name;
	}
}

void
tm_tracktab_fini(struct tm_tracktab *t)
{
	free(t->v);
	free(t->next);
	free(t->per_file);
	tm_u64map_fini(&t->ix);
	memset(t, 0, sizeof *t);
}

const char *
tm_track_kind_name(char kind)
{
	switch (kind) {
	case 's':
		return "slices";
	case 'c':
		return "counter";
	case 'i':
		return "instants";
	default:
		return "events";
	}
}

/* ---- the tracks in a view's order, by name ---- */

static int
cmp_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

/* A track and its file's rank: sorted by (file rank, machine, has pid,
 * pid, has tid, tid, number). */
struct track_ord {
	const struct tm_report_track *t;
	size_t file_rank;
	uint32_t i;
};

static int
cmp_track_ord(const void *pa, const void *pb)
{
	const struct track_ord *a = pa, *b = pb;
	int c = a->file_rank != b->file_rank ? (a->file_rank < b->file_rank ? -1 : 1) : 0;
	if (!c)
		c = cmp_i64(a->t->machine, b->t->machine);
	if (!c)
		c = cmp_i64(a->t->pid >= 0, b->t->pid >= 0);
	if (!c)
		c = cmp_i64(a->t->pid, b->t->pid);
	if (!c)
		c = cmp_i64(a->t->tid >= 0, b->t->tid >= 0);
	if (!c)
		c = cmp_i64(a->t->tid, b->t->tid);
	if (!c)
		c = cmp_i64(a->t->number, b->t->number);
	return c ? c : cmp_i64(a->i, b->i);
}

void
tm_report_tracks_order(const struct tm_report *r, uint32_t *out)
{
	size_t n = r->n_tracks;
	struct track_ord *o = xmalloc((n + 1) * sizeof *o);
	size_t *rank = xmalloc((r->n_files + 1) * sizeof *rank);
	for (size_t f = 0; f < r->n_files; f++)
		rank[f] = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		uint32_t f = r->tracks[i].file;
		size_t fr = SIZE_MAX;
		if (f < r->n_files) {
			if (rank[f] == SIZE_MAX)
				rank[f] = i;
			fr = rank[f];
		}
		o[i] = (struct track_ord){&r->tracks[i], fr, (uint32_t)i};
	}
	qsort(o, n, sizeof *o, cmp_track_ord);
	for (size_t i = 0; i < n; i++)
		out[i] = o[i].i;
	free(o);
	free(rank);
}

void
tm_report_track_title(const struct tm_report *r, uint32_t track, struct tm_buf *out)
{
	if (track >= r->n_tracks) {
		tm_buf_adds(out, "-");
		return;
	}
	const struct tm_report_track *t = &r->tracks[track];
	if (t->tid >= 0 && t->kind != 'c' && (t->thread || !t->name))
		tm_buf_addf(out, "%s %" PRId64, t->thread ? t->thread : "thread", t->tid);
	else if (t->name)
		tm_buf_adds(out, t->name);
	else
		tm_buf_adds(out, tm_track_kind_name(t->kind));
}

void
tm_report_track_process(const struct tm_report *r, uint32_t track, struct tm_buf *out)
{
	if (track >= r->n_tracks || r->tracks[track].pid < 0)
		return;
	const struct tm_report_track *t = &r->tracks[track];
	tm_buf_addf(out, "%s %" PRId64, t->process ? t->process : "process", t->pid);
}

/* ---- the views ---- */

struct tm_view {
	const struct tm_report *r;
	size_t n;
	uint32_t *order;   /* timeline order: event indices */
	uint32_t *pos;     /* event -> its place in order */
	uint32_t *dropped; /* the places of dropped events, ascending */
	size_t n_dropped;
	size_t *tstart;    /* per track: its range in tev (n_tracks + 1) */
	uint32_t *tev;     /* event indices by track, each track's in timeline order */
	int64_t *tend;     /* per tev entry: the latest end of the slices up to it */
	/* the same per lane (track, depth): lane = track * TM_VIEW_DEPTHS + depth */
	size_t *lstart;
	uint32_t *lev;
	int64_t *lend;
	uint8_t *depths;   /* per track: its lanes (tm_view_track_depths) */
	double *vmin, *vmax; /* per track: its counter values' range (vmin > vmax: none) */
	uint32_t *byname;  /* event indices by (name, file, ts) */
};

unsigned
tm_view_event_lane(const struct tm_report_event *e)
{
	return e->is_slice && e->depth < TM_VIEW_DEPTHS ? e->depth
	       : e->is_slice				 ? TM_VIEW_DEPTHS - 1
							 : 0;
}

static int
cmp_name(const char *a, const char *b)
{
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

/* An event by (name, file, ts), then its index: what qsort compares with
 * no context (no global, no lock). */
struct by_name {
	const char *name;
	int64_t ts;
	uint32_t file, i;
};

static int
cmp_byname(const void *a, const void *b)
{
	const struct by_name *x = a, *y = b;
	int c = cmp_name(x->name, y->name);
	if (c)
		return c;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

static int64_t
ev_end(const struct tm_report_event *e)
{
	if (e->is_slice && e->dur > 0 && e->ts <= INT64_MAX - e->dur)
		return e->ts + e->dur;
	return e->ts;
}

/* What a track row draws: every event of the track but the E that ends a
 * slice (the B's duration covers to it; the events list shows it). */
static bool
on_track(const struct tm_report_event *e, size_t n_tracks)
{
	return e->track < n_tracks && e->phase != 'E';
}

struct tm_view *
tm_view_build(const struct tm_report *r)
{
	struct tm_view *v = xcalloc(1, sizeof *v);
	size_t n = r->n_events;
	v->r = r;
	v->n = n;
	v->order = xmalloc((n + 1) * sizeof *v->order);
	v->pos = xmalloc((n + 1) * sizeof *v->pos);
	struct tm_key_ix *t = xmalloc((n + 1) * sizeof *t);
	for (size_t i = 0; i < n; i++)
		t[i] = (struct tm_key_ix){r->events[i].ts, i};
	qsort(t, n, sizeof *t, tm_cmp_key_ix);
	size_t nd = 0;
	for (size_t p = 0; p < n; p++) {
		v->order[p] = (uint32_t)t[p].i;
		v->pos[t[p].i] = (uint32_t)p;
		nd += r->events[t[p].i].drop != 0;
	}
	free(t);
	v->dropped = xmalloc((nd + 1) * sizeof *v->dropped);
	for (size_t p = 0; p < n; p++)
		if (r->events[v->order[p]].drop)
			v->dropped[v->n_dropped++] = (uint32_t)p;
	/* per track, in timeline order: a counting sort of the order */
	size_t nt = r->n_tracks;
	v->tstart = xcalloc(nt + 2, sizeof *v->tstart);
	for (size_t i = 0; i < n; i++)
		if (on_track(&r->events[i], nt))
			v->tstart[r->events[i].track + 1]++;
	for (size_t k = 0; k < nt; k++)
		v->tstart[k + 1] += v->tstart[k];
	size_t *fill = xmalloc((nt + 1) * sizeof *fill);
	memcpy(fill, v->tstart, nt * sizeof *fill);
	v->tev = xmalloc((v->tstart[nt] + 1) * sizeof *v->tev);
	v->tend = xmalloc((v->tstart[nt] + 1) * sizeof *v->tend);
	for (size_t p = 0; p < n; p++) {
		uint32_t e = v->order[p];
		uint32_t k = r->events[e].track;
		if (!on_track(&r->events[e], nt))
			continue;
		size_t at = fill[k]++;
		v->tev[at] = e;
		int64_t end = ev_end(&r->events[e]);
		v->tend[at] = at > v->tstart[k] && v->tend[at - 1] > end ? v->tend[at - 1] : end;
	}
	free(fill);
	/* per lane, the same way */
	size_t nl = nt * TM_VIEW_DEPTHS;
	v->lstart = xcalloc(nl + 2, sizeof *v->lstart);
	v->depths = xcalloc(nt + 1, sizeof *v->depths);
	for (size_t i = 0; i < n; i++)
		if (on_track(&r->events[i], nt)) {
			unsigned d = tm_view_event_lane(&r->events[i]);
			v->lstart[(size_t)r->events[i].track * TM_VIEW_DEPTHS + d + 1]++;
			if (d + 1 > v->depths[r->events[i].track])
				v->depths[r->events[i].track] = (uint8_t)(d + 1);
		}
	for (size_t k = 0; k < nl; k++)
		v->lstart[k + 1] += v->lstart[k];
	fill = xmalloc((nl + 1) * sizeof *fill);
	memcpy(fill, v->lstart, nl * sizeof *fill);
	v->lev = xmalloc((v->lstart[nl] + 1) * sizeof *v->lev);
	v->lend = xmalloc((v->lstart[nl] + 1) * sizeof *v->lend);
	for (size_t p = 0; p < n; p++) {
		uint32_t e = v->order[p];
		if (!on_track(&r->events[e], nt))
			continue;
		size_t l = (size_t)r->events[e].track * TM_VIEW_DEPTHS + tm_view_event_lane(&r->events[e]);
		size_t at = fill[l]++;
		v->lev[at] = e;
		int64_t end = ev_end(&r->events[e]);
		v->lend[at] = at > v->lstart[l] && v->lend[at - 1] > end ? v->lend[at - 1] : end;
	}
	free(fill);
	v->vmin = xmalloc((nt + 1) * sizeof *v->vmin);
	v->vmax = xmalloc((nt + 1) * sizeof *v->vmax);
	for (size_t k = 0; k < nt; k++)
		v->vmin[k] = 1, v->vmax[k] = 0;
	for (size_t i = 0; i < r->n_values; i++) {
		const struct tm_report_value *cv = &r->values[i];
		uint32_t k = cv->ev < n ? r->events[cv->ev].track : TM_NO_TRACK;
		if (k >= nt || cv->v != cv->v)
			continue;
		if (v->vmin[k] > v->vmax[k])
			v->vmin[k] = v->vmax[k] = cv->v;
		else if (cv->v < v->vmin[k])
			v->vmin[k] = cv->v;
		else if (cv->v > v->vmax[k])
			v->vmax[k] = cv->v;
	}
	struct by_name *bn = xmalloc((n + 1) * sizeof *bn);
	for (size_t i = 0; i < n; i++)
		bn[i] = (struct by_name){r->events[i].name, r->events[i].ts, r->events[i].file,
					 (uint32_t)i};
	qsort(bn, n, sizeof *bn, cmp_byname);
	v->byname = xmalloc((n + 1) * sizeof *v->byname);
	for (size_t i = 0; i < n; i++)
		v->byname[i] = bn[i].i;
	free(bn);
	return v;
}

void
tm_view_free(struct tm_view *v)
{
	if (!v)
		return;
	free(v->order);
	free(v->pos);
	free(v->dropped);
	free(v->tstart);
	free(v->tev);
	free(v->tend);
	free(v->lstart);
	free(v->lev);
	free(v->lend);
	free(v->depths);
	free(v->vmin);
	free(v->vmax);
	free(v->byname);
	free(v);
}

size_t
tm_view_n(const struct tm_view *v)
{
	return v->n;
}

size_t
tm_view_at(const struct tm_view *v, size_t pos)
{
	return pos < v->n ? v->order[pos] : SIZE_MAX;
}

size_t
tm_view_pos(const struct tm_view *v, size_t ev)
{
	return ev < v->n ? v->pos[ev] : SIZE_MAX;
}

size_t
tm_view_n_dropped(const struct tm_view *v)
{
	return v->n_dropped;
}

/* The first of a[0..n) (event indices in timeline order) at ts or later. */
static size_t
lower_bound(const struct tm_report *r, const uint32_t *a, size_t n, int64_t ts)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		TM_PROBE();
		size_t mid = lo + (hi - lo) / 2;
		if (r->events[a[mid]].ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t
tm_view_seek(const struct tm_view *v, int64_t ts)
{
	return lower_bound(v->r, v->order, v->n, ts);
}

size_t
tm_view_dropped_step(const struct tm_view *v, size_t pos, int dir)
{
	/* the first dropped place > pos (pos SIZE_MAX: from the start) */
	size_t lo = 0, hi = v->n_dropped;
	if (dir > 0 && pos == SIZE_MAX)
		return v->n_dropped ? v->dropped[0] : SIZE_MAX;
	while (lo < hi) {
		TM_PROBE();
		size_t mid = lo + (hi - lo) / 2;
		if (dir > 0 ? v->dropped[mid] <= pos : v->dropped[mid] < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (dir > 0)
		return lo < v->n_dropped ? v->dropped[lo] : SIZE_MAX;
	return lo > 0 ? v->dropped[lo - 1] : SIZE_MAX;
}

static bool
contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	if (!n)
		return true;
	for (; hay && *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return true;
	return false;
}

bool
tm_event_matches(const struct tm_report *r, size_t ev, const struct tm_event_filter *f)
{
	if (ev >= r->n_events)
		return false;
	const struct tm_report_event *e = &r->events[ev];
	if (f->dropped_only && !e->drop)
		return false;
	if (f->file >= 0 && e->file != (uint64_t)f->file)
		return false;
	if (f->machine >= 0 && e->machine != (uint64_t)f->machine)
		return false;
	if (f->name && *f->name && !contains_nocase(e->name, f->name))
		return false;
	return true;
}

size_t
tm_view_track_n(const struct tm_view *v, uint32_t track)
{
	return track < v->r->n_tracks ? v->tstart[track + 1] - v->tstart[track] : 0;
}

size_t
tm_view_track_event(const struct tm_view *v, uint32_t track, size_t k)
{
	if (k >= tm_view_track_n(v, track))
		return SIZE_MAX;
	return v->tev[v->tstart[track] + k];
}

size_t
tm_view_track_seek(const struct tm_view *v, uint32_t track, int64_t ts)
{
	size_t n = tm_view_track_n(v, track);
	return n ? lower_bound(v->r, v->tev + v->tstart[track], n, ts) : 0;
}

/* The columns of one time-ordered list a[0..n) (end: its running ends). */
static void
cells_of(const struct tm_view *v, const struct tm_report_track *t, const uint32_t *a,
	 const int64_t *end, size_t n, int64_t t0, int64_t step, size_t n_cols,
	 struct tm_view_cell *out)
{
	if (step < 1)
		step = 1;
	size_t k = n ? lower_bound(v->r, a, n, t0) : 0;
	for (size_t c = 0; c < n_cols; c++) {
		struct tm_view_cell *o = &out[c];
		*o = (struct tm_view_cell){0, 0, false, SIZE_MAX};
		int64_t lo = t0 + (int64_t)c * step, hi = lo + step;
		/* a slice begun before the column that lasts into it */
		if (k > 0 && end[k - 1] > lo) {
			o->covered = true;
			/* the latest-starting one still open: few steps back */
			for (size_t j = k, steps = 0; j-- > 0 && steps < 8; steps++) {
				TM_PROBE();
				if (ev_end(&v->r->events[a[j]]) > lo) {
					o->first = a[j];
					break;
				}
			}
		}
		/* the events starting in [lo, hi): up to the next column's start */
		size_t e = n ? lower_bound(v->r, a, n, hi) : 0;
		if (e > k) {
			o->n = e - k;
			o->first = a[k];
			/* dropped among them: the first few looked at, the rest by
			 * the count of dropped on the track being 0 */
			if (t->n_dropped) {
				size_t look = e - k < 16 ? e - k : 16;
				for (size_t j = 0; j < look; j++) {
					TM_PROBE();
					if (v->r->events[a[k + j]].drop) {
						o->dropped++;
						if (!v->r->events[o->first].drop)
							o->first = a[k + j];
					}
				}
			}
		}
		k = e;
	}
}

void
tm_view_cells(const struct tm_view *v, uint32_t track, int64_t t0, int64_t step, size_t n_cols,
	      struct tm_view_cell *out)
{
	size_t n = tm_view_track_n(v, track);
	if (track >= v->r->n_tracks) {
		for (size_t c = 0; c < n_cols; c++)
			out[c] = (struct tm_view_cell){0, 0, false, SIZE_MAX};
		return;
	}
	cells_of(v, &v->r->tracks[track], n ? v->tev + v->tstart[track] : NULL,
		 n ? v->tend + v->tstart[track] : NULL, n, t0, step, n_cols, out);
}

unsigned
tm_view_track_depths(const struct tm_view *v, uint32_t track)
{
	return track < v->r->n_tracks && v->depths[track] ? v->depths[track] : 1;
}

void
tm_view_cells_depth(const struct tm_view *v, uint32_t track, unsigned depth, int64_t t0,
		    int64_t step, size_t n_cols, struct tm_view_cell *out)
{
	if (track >= v->r->n_tracks || depth >= TM_VIEW_DEPTHS) {
		for (size_t c = 0; c < n_cols; c++)
			out[c] = (struct tm_view_cell){0, 0, false, SIZE_MAX};
		return;
	}
	size_t l = (size_t)track * TM_VIEW_DEPTHS + depth, n = v->lstart[l + 1] - v->lstart[l];
	cells_of(v, &v->r->tracks[track], n ? v->lev + v->lstart[l] : NULL,
		 n ? v->lend + v->lstart[l] : NULL, n, t0, step, n_cols, out);
}

size_t
tm_view_nearest(const struct tm_view *v, size_t ev, uint32_t other)
{
	if (ev >= v->n)
		return SIZE_MAX;
	const struct tm_report_event *x = &v->r->events[ev];
	if (!x->name)
		return SIZE_MAX;
	/* the first of (name, other, ts >= x->ts) in byname */
	size_t lo = 0, hi = v->n;
	while (lo < hi) {
		TM_PROBE();
		size_t mid = lo + (hi - lo) / 2;
		const struct tm_report_event *y = &v->r->events[v->byname[mid]];
		int c = cmp_name(y->name, x->name);
		if (!c)
			c = y->file != other ? (y->file < other ? -1 : 1) : (y->ts < x->ts ? -1 : 1);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t best = SIZE_MAX;
	uint64_t best_d = UINT64_MAX;
	for (size_t j = lo > 0 ? lo - 1 : 0; j <= lo && j < v->n; j++) {
		const struct tm_report_event *y = &v->r->events[v->byname[j]];
		if (y->file != other || cmp_name(y->name, x->name))
			continue;
		uint64_t d = y->ts > x->ts ? (uint64_t)y->ts - (uint64_t)x->ts
					   : (uint64_t)x->ts - (uint64_t)y->ts;
		if (d < best_d) {
			best_d = d;
			best = v->byname[j];
		}
	}
	return best;
}

bool
tm_report_event_value(const struct tm_report *r, size_t ev, double *out)
{
	size_t lo = 0, hi = r->n_values;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->values[mid].ev < ev)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < r->n_values && r->values[lo].ev == ev) {
		*out = r->values[lo].v;
		return true;
	}
	return false;
}

bool
tm_view_track_range(const struct tm_view *v, uint32_t track, double *lo, double *hi)
{
	if (track >= v->r->n_tracks || v->vmin[track] > v->vmax[track])
		return false;
	*lo = v->vmin[track];
	*hi = v->vmax[track];
	return true;
}

/* SPDX-License-Identifier: MIT */
/*
 * The import replay's events list (keep_events; replay_priv.h): each event
 * as trace_processor's tables would show it, its slice track, and the
 * sorter's order over the list (sorter/trace_sorter.h, slice_tracker.cc).
 */
#include "replay_priv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PENDING INT64_MIN /* an open slice's dur while slice_tracks runs */

/* The stack of one slice track while slice_tracks runs: event indices. */
struct sstack {
	size_t *v;
	size_t n, cap;
};

/* SliceTracker::MaybeCloseStack (slice_tracker.cc) before a slice starts
 * or ends at ts (new_dur: its duration, PENDING for a B or an E): slices
 * that ended before ts leave the stack; an ended slice with open ones above
 * it, once ts is past its end, ends them there (misplaced_end_event,
 * counted on the ended slice's file).
 * False: a complete slice that starts inside one on the stack and ends
 * after it: JSON's parser puts it on an overflow track of its own
 * (json_trace_parser.cc, slice_spill_overlapping_complete_event); other
 * callers drop it (slice_drop_overlapping_complete_event), which the list
 * does not model: it stays a slice there. */
static bool
close_stack(struct tm_replay *p, struct sstack *st, int64_t ts, int64_t new_dur)
{
	bool open_above = false;
	for (size_t i = st->n; i-- > 0;) {
		struct tm_report_event *e = &p->evs[st->v[i]];
		if (e->dur == PENDING) {
			open_above = true;
			continue;
		}
		/* int64_t arithmetic as SliceTracker's (wrapping: a JSON dur
		 * near INT64_MAX ends before the slice starts) */
		int64_t end = wrap_add(e->ts, e->dur);
		if (open_above) {
			if (ts <= end)
				continue;
			/* MaybeCloseStack counts it per ended slice */
			tm_rp_acc_stat_add(&p->acc[e->file], TM_STAT_MISPLACED_END_EVENT, false, 1);
			for (size_t j = st->n; j-- > i + 1;)
				p->evs[st->v[j]].dur = wrap_sub(end, p->evs[st->v[j]].ts);
			st->n = i;
			open_above = false;
			continue;
		}
		if (end < ts || (end == ts && !(e->dur == 0 && new_dur == 0))) {
			st->n = i; /* the top: everything above it left already */
			continue;
		}
		if (new_dur == PENDING)
			continue;
		if (ts < end && wrap_add(ts, new_dur) > end)
			return false;
	}
	return true;
}

/* One slice track's events (indices into p->evs, in trace-time order) as
 * SliceTracker builds its slices: B begins an open slice, X and instants
 * complete ones (StartSlice), E ends the topmost open slice unless both
 * names are set and differ or the E has a category the B has not (End ->
 * CompleteSliceBegin, MatchingIncompleteSliceIndex), popping it
 * when it is the top (CompleteSliceFinalize). */
static void
track_slices(struct tm_replay *p, struct sstack *st, const size_t *ix, size_t n)
{
	st->n = 0;
	for (size_t k = 0; k < n; k++) {
		struct tm_report_event *o = &p->evs[ix[k]];
		if (o->phase == 'E') {
			if (!close_stack(p, st, o->ts, PENDING))
				continue;
			const char *cat = p->ev_cat[ix[k]];
			for (size_t i = st->n; i-- > 0;) {
				struct tm_report_event *b = &p->evs[st->v[i]];
				const char *bcat = p->ev_cat[st->v[i]];
				if (b->dur != PENDING || (o->name && b->name && strcmp(o->name, b->name)) ||
				    (cat && (!bcat || strcmp(cat, bcat))))
					continue;
				b->dur = o->ts - b->ts;
				if (i == st->n - 1)
					st->n--;
				break;
			}
			continue;
		}
		if (o->phase == 'B')
			o->dur = PENDING;
		if (o->phase == 'X' && o->dur < 0) {
			/* SliceTracker::Scoped: slice_negative_duration, no slice */
			o->is_slice = false;
			tm_rp_acc_stat_add(&p->acc[o->file], TM_STAT_SLICE_NEGATIVE_DURATION, false, 1);
			continue;
		}
		if (!close_stack(p, st, o->ts, o->dur))
			continue; /* a slice of its own track (close_stack) */
		/* its depth: the slices open below it (slice_tracker.cc
		 * StartSlice: depth = the stack's size) */
		o->depth = (uint8_t)(st->n < 255 ? st->n : 255);
		XGROW(st->v, st->cap, st->n + 1);
		st->v[st->n++] = ix[k];
	}
	for (size_t i = 0; i < st->n; i++)
		if (p->evs[st->v[i]].dur == PENDING)
			p->evs[st->v[i]].dur = -1; /* unfinished */
}

/* The sorter's queues (trace_sorter.h: one per stream) and the order it
 * hands their events on.  A queue is (context, kind): struct tm_detail's
 * queue; queues tie in the order they were made, a context's in kind
 * order, contexts in the order their first event was pushed.  Its items
 * are listed events (index < p->n_evs) and the compact_sched events the
 * sorter holds beside them (struct tm_phantom, p->n_evs + their index). */
struct squeue {
	uint64_t key; /* context rank << 8 | kind: the order queues tie in */
	size_t *ev;   /* its items, by ts then push order */
	size_t n, at;
};

static bool
q_before(const int64_t *its, const struct squeue *a, const struct squeue *b)
{
	int64_t ta = its[a->ev[a->at]], tb = its[b->ev[b->at]];
	return ta != tb ? ta < tb : a->key < b->key;
}

static void
q_sift(const int64_t *its, struct squeue **h, size_t n, size_t k)
{
	for (;;) {
		size_t m = k, l = 2 * k + 1, r = l + 1;
		if (l < n && q_before(its, h[l], h[m]))
			m = l;
		if (r < n && q_before(its, h[r], h[m]))
			m = r;
		if (m == k)
			return;
		struct squeue *t = h[k];
		h[k] = h[m];
		h[m] = t;
		k = m;
	}
}

static bool
ev_is_json(const struct tm_replay *p, size_t i)
{
	return p->src->in->members[p->evs[i].file].format == TM_FMT_JSON;
}

/* SlowOperatorLess's key (trace_sorter.h): a JSON E first, then X by longer
 * dur (INT64_MAX - dur, wrapping as it does for a negative dur), then the
 * rest, each tie by push order. */
static int64_t
slow_key(const struct tm_replay *p, size_t i)
{
	if (i >= p->n_evs || !ev_is_json(p, i))
		return INT64_MAX;
	const struct tm_report_event *e = &p->evs[i];
	if (e->phase == 'E')
		return INT64_MIN;
	if (e->phase == 'X') /* (e->dur is still the event's: slice_tracks runs after) */
		return (int64_t)((uint64_t)INT64_MAX - (uint64_t)e->dur);
	return INT64_MAX;
}

struct slow_ix {
	int64_t ts, key;
	size_t i;
};

static int
cmp_slow_ix(const void *a, const void *b)
{
	const struct slow_ix *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* One queue's items (push order) in the order the sorter extracts them:
 * TraceSorter::Queue::Append marks where the pushes broke ts order (a ts
 * below the queue's max_ts, which starts at 0; in slow mode, slow[i], one
 * equal to it too; the first item's index 0 never counts as a mark), and
 * Queue::Sort sorts from the first item at or after the lowest such ts,
 * by SlowOperatorLess when slow_end (slow mode when the sorter extracts,
 * after every file was tokenized), else by (ts, push order).  (A queue's
 * items are all events or all phantoms: push order is index order.) */
static void
queue_sort(const struct tm_replay *p, const int64_t *its, struct squeue *u, const bool *slow,
	   bool slow_end)
{
	int64_t max_ts = 0, sort_min = INT64_MAX;
	size_t sort_start = 0;
	for (size_t j = 0; j < u->n; j++) {
		int64_t ts = its[u->ev[j]];
		if (ts > max_ts || (!slow[u->ev[j]] && ts == max_ts)) {
			max_ts = ts;
		} else if (sort_start == 0) {
			sort_start = j;
			sort_min = ts;
		} else if (ts < sort_min) {
			sort_min = ts;
		}
	}
	if (sort_start == 0)
		return;
	size_t b = 0;
	while (b < sort_start && its[u->ev[b]] < sort_min)
		b++;
	size_t n = u->n - b;
	struct slow_ix *t = xmalloc(n * sizeof *t);
	for (size_t m = 0; m < n; m++) {
		size_t i = u->ev[b + m];
		t[m] = (struct slow_ix){its[i], slow_end ? slow_key(p, i) : 0, i};
	}
	qsort(t, n, sizeof *t, cmp_slow_ix);
	for (size_t m = 0; m < n; m++)
		u->ev[b + m] = t[m].i;
	free(t);
}

/* The queue of item x (k), made on first sight in push order; SIZE_MAX for
 * an event the sorter never held (dropped before it, or not pushed). */
static size_t
item_queue(const struct tm_replay *p, size_t x, struct tm_u64map *ctx, struct tm_u64map *qs,
	   struct squeue **q, size_t *nq, size_t *cap)
{
	uint64_t ck;
	uint8_t kind;
	if (x < p->n_evs) {
		const struct tm_report_event *e = &p->evs[x];
		/* ftrace before tracing started: dropped by the parser, after
		 * the sorter held it (ftrace_parser.cc) */
		if (e->drop && e->drop != TM_STAT_FTRACE_BEFORE_START + 1)
			return SIZE_MAX;
		ck = (uint64_t)e->file << 32 | e->machine;
		kind = p->ev_queue[x];
	} else {
		const struct tm_phantom *f = &p->ph[x - p->n_evs];
		ck = (uint64_t)f->file << 32 | f->row;
		kind = f->queue;
	}
	size_t c, k;
	if (!tm_u64map_get(ctx, ck, &c)) {
		c = ctx->n;
		tm_u64map_set(ctx, ck, c);
	}
	uint64_t qk = (uint64_t)c << 8 | kind;
	if (!tm_u64map_get(qs, qk, &k)) {
		XGROW(*q, *cap, *nq + 1);
		k = (*nq)++;
		(*q)[k] = (struct squeue){qk, NULL, 0, 0};
		tm_u64map_set(qs, qk, k);
	}
	return k;
}

/* rank[i]: the place of listed event i (not dropped) in the order the
 * sorter hands events on (trace_sorter.cc, SortAndExtractEventsUntilAllocId,
 * after every file was tokenized): the queue whose next item is earliest
 * (the first made on a tie) gives every item up to the next item of any
 * other queue, ties included.  The compact_sched events (phantoms, kept
 * when some file has B/E events) take part: they bound those runs.
 * Packets with nothing to show are not in these queues. */
static void
sorter_rank(const struct tm_replay *p, size_t *rank)
{
	struct tm_u64map ctx = {0}, qs = {0};
	struct squeue *q = NULL;
	size_t nq = 0, cap = 0, ne = p->n_evs, N = ne + p->n_ph;
	size_t *qof = xmalloc((N + 1) * sizeof *qof);
	int64_t *its = xmalloc((N + 1) * sizeof *its);
	bool *slow = xmalloc((N + 1) * sizeof *slow), slow_now = false;
	/* in push order: phantom j before event i when j was kept first */
	for (size_t i = 0, j = 0; i < ne || j < p->n_ph;) {
		size_t x = j < p->n_ph && (i == ne || p->ph[j].before <= i) ? ne + j++ : i++;
		qof[x] = item_queue(p, x, &ctx, &qs, &q, &nq, &cap);
		its[x] = x < ne ? p->evs[x].ts : p->ph[x - ne].ts;
		/* The sorter's slow mode (TraceSorter::Stream::Push): from the
		 * first JSON X pushed on, an item at a queue's latest ts
		 * breaks its order too, and a queue that needs sorting is
		 * sorted by SlowOperatorLess. */
		slow_now = slow_now || (x < ne && qof[x] != SIZE_MAX && p->evs[x].phase == 'X' &&
					ev_is_json(p, x));
		slow[x] = slow_now;
		if (qof[x] != SIZE_MAX)
			q[qof[x]].n++;
	}
	size_t *all = xmalloc((N + 1) * sizeof *all), off = 0;
	for (size_t k = 0; k < nq; k++) {
		q[k].ev = all + off;
		off += q[k].n;
		q[k].n = 0;
	}
	for (size_t x = 0; x < N; x++)
		if (qof[x] != SIZE_MAX)
			q[qof[x]].ev[q[qof[x]].n++] = x;
	struct squeue **h = xmalloc((nq + 1) * sizeof *h);
	for (size_t k = 0; k < nq; k++) {
		queue_sort(p, its, &q[k], slow, slow_now);
		h[k] = &q[k];
	}
	free(slow);
	size_t nh = nq, r = 0;
	for (size_t k = nh / 2; k-- > 0;)
		q_sift(its, h, nh, k);
	while (nh) {
		struct squeue *u = h[0];
		h[0] = h[--nh];
		q_sift(its, h, nh, 0);
		int64_t next = nh ? its[h[0]->ev[h[0]->at]] : INT64_MAX;
		do {
			size_t x = u->ev[u->at++];
			if (x < ne)
				rank[x] = r++;
		} while (u->at < u->n && its[u->ev[u->at]] <= next);
		if (u->at < u->n) {
			h[nh++] = u;
			for (size_t k = nh - 1; k > 0 && q_before(its, h[k], h[(k - 1) / 2]); k = (k - 1) / 2) {
				struct squeue *t = h[k];
				h[k] = h[(k - 1) / 2];
				h[(k - 1) / 2] = t;
			}
		}
	}
	free(h);
	free(all);
	free(qof);
	free(its);
	free(q);
	tm_u64map_fini(&ctx);
	tm_u64map_fini(&qs);
}

/* a[n] (event indices) by rank. */
static void
sort_by_rank(const size_t *rank, size_t *a, size_t n)
{
	struct tm_key_ix *t = xmalloc(n * sizeof *t);
	for (size_t k = 0; k < n; k++)
		t[k] = (struct tm_key_ix){(int64_t)rank[a[k]], a[k]};
	qsort(t, n, sizeof *t, tm_cmp_key_ix);
	for (size_t k = 0; k < n; k++)
		a[k] = t[k].i;
	free(t);
}

/* The slices of the events list, per track, in the sorter's order
 * (sorter_rank), through SliceTracker's
 * rules: the durations of B/E pairs, which E closes which B, slices ended
 * by their parent. */
void
tm_rp_slice_tracks(struct tm_replay *p)
{
	size_t nt = p->tracks.n; /* the listed events' tracks (ev_track) */
	if (!nt)
		return;
	size_t *start = xcalloc(nt + 1, sizeof *start);
	for (size_t i = 0; i < p->n_evs; i++)
		if (p->ev_track[i] != UINT32_MAX)
			start[p->ev_track[i] + 1]++;
	for (size_t t = 0; t < nt; t++)
		start[t + 1] += start[t];
	size_t *ix = xmalloc((start[nt] + 1) * sizeof *ix), *fill = xmalloc((nt + 1) * sizeof *fill);
	memcpy(fill, start, nt * sizeof *fill);
	for (size_t i = 0; i < p->n_evs; i++)
		if (p->ev_track[i] != UINT32_MAX)
			ix[fill[p->ev_track[i]]++] = i;
	size_t *rank = xmalloc((p->n_evs + 1) * sizeof *rank);
	sorter_rank(p, rank);
	struct sstack st = {0};
	for (size_t t = 0; t < nt; t++) {
		size_t *a = ix + start[t], n = start[t + 1] - start[t];
		for (size_t k = 1; k < n; k++)
			if (rank[a[k]] < rank[a[k - 1]]) {
				sort_by_rank(rank, a, n);
				break;
			}
		track_slices(p, &st, a, n);
	}
	free(rank);
	free(st.v);
	free(start);
	free(ix);
	free(fill);
}

_Static_assert(TM_STAT__COUNT < 255, "struct tm_report_event's drop holds a stat id + 1");

/* One event of the report's list (with keep_events; with dropped_only the
 * dropped ones only), as trace_processor's tables would show it. */
void
tm_rp_record_event(struct tm_replay *p, size_t file, uint32_t detail, int64_t ts, uint32_t row, int stat)
{
	if (!p->src->keep_events || (stat < 0 && (!detail || p->src->dropped_only)))
		return;
	if (p->n_evs == p->cap_evs) /* the call only to grow: once per event it showed */
		BIG_XGROW(p->evs, p->cap_evs, p->n_evs + 1);
	size_t i = p->n_evs++;
	if (p->cap_ev_track < p->cap_evs) { /* its slice track and queue (slice_tracks) */
		p->ev_track = xrealloc(p->ev_track, p->cap_evs * sizeof *p->ev_track);
		p->ev_queue = xrealloc(p->ev_queue, p->cap_evs * sizeof *p->ev_queue);
		p->ev_cat = xrealloc(p->ev_cat, p->cap_evs * sizeof *p->ev_cat);
		p->cap_ev_track = p->cap_evs;
	}
	p->ev_track[i] = UINT32_MAX;
	p->ev_queue[i] = 0; /* (its detail's queue below, when it has one) */
	p->ev_cat[i] = NULL;
	struct tm_report_event *o = &p->evs[i];
	*o = (struct tm_report_event){.file = (uint32_t)file, .ts = ts, .dur = -1, .machine = row,
				      .track = TM_NO_TRACK};
	if (!detail) { /* an event the scan keeps no detail of (lost: listed unnamed) */
		o->drop = (uint8_t)(stat + 1);
		return;
	}
	const struct tm_oplog *log = &p->src->scans[file]->log;
	const struct tm_detail *d = &log->x->details[detail - 1];
	p->ev_queue[i] = d->queue;
	p->ev_cat[i] = tm_oplog_detail_cat_of(log, d);
	o->name = p->at_eof ? tm_oplog_detail_eof_name(log, d) : tm_oplog_detail_name(log, d);
	o->phase = d->phase;
	if (d->phase == 'C' && (d->flags & TM_DETAIL_VALUE)) {
		double v;
		memcpy(&v, &d->dur, sizeof v);
		XGROW(p->cvals, p->cap_cvals, p->n_cvals + 1);
		p->cvals[p->n_cvals++] = (struct tm_report_value){(uint32_t)i, v};
	}
	o->track = tm_tracktab_add(&p->tracks, o->file, row, d->track, d->phase, o->name, stat >= 0);
	if (p->tracks.v[o->track].n_events == 1)
		tm_tracktab_name(&p->tracks, o->track, log, d->track, d->phase, o->name);
	if (stat >= 0) {
		o->drop = (uint8_t)(stat + 1);
		return;
	}
	switch (d->phase) {
	case 'X':
		o->is_slice = true;
		o->dur = d->dur;
		break;
	case 'I':
	case 'i':
	case 'n':
		o->is_slice = true;
		o->dur = 0;
		break;
	case 'B':
		o->is_slice = true;
		break;
	case 'E':
		break;
	default:
		return;
	}
	/* its slice stack: its track's (file, machine row, track key), a
	 * slice's key being the scan's as is (tm_tracktab_add) */
	p->ev_track[i] = o->track;
}


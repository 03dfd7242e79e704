/* SPDX-License-Identifier: MIT */
/*
 * The import replay: trace_processor's archive import, minus the bytes.
 *
 * Input: the session's members in processing order, each trace member's op
 * log (scan.h), and one manifest.  Output: a tm_report with the error the
 * import fails with (if any), the machine table, trace time, every stat the
 * tokenizers would count, and per-file figures.  Everything here follows
 * trace_processor's sources (docs/semantics.md): forwarding_trace_parser.cc
 * (per-file setup), importers/common/clock_tracker.cc (trackers, the deferred
 * bridge, trace-time claims), sorter/trace_sorter.h (negative drops),
 * perfetto_manifest_reader.cc (manifest apply), proto_trace_reader.cc
 * (machines, what proto tokenization shares between files).
 */
#include "replay_state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MANIFEST_RAW_BASE (UINT64_C(1) << 32)

/* ------------------------------------------------------------------ */
/* machines                                                            */
/* ------------------------------------------------------------------ */

/* The manifest's raw_id_to_table_id (only rows the manifest made). */
static long
row_of_raw(const struct tm_replay *p, uint64_t raw)
{
	size_t row;

	return tm_u64map_get(&p->rr, raw, &row) ? (long)row : -1;
}

static uint32_t
insert_row(struct tm_replay *p, uint64_t raw, const char *name)
{
	XGROW(p->rows, p->cap_rows, p->n_rows + 1);
	p->rows[p->n_rows].raw = raw;
	p->rows[p->n_rows].name = xstrdup0(name);
	return (uint32_t)p->n_rows++;
}

/* A row made by the manifest, recorded in its raw_id_to_table_id. */
static uint32_t
new_row(struct tm_replay *p, uint64_t raw, const char *name)
{
	uint32_t row = insert_row(p, raw, name);
	size_t first;

	if (!tm_u64map_get(&p->rr, raw, &first)) /* the first row of a raw id stays */
		tm_u64map_set(&p->rr, raw, row);
	return row;
}

static long
mc_find(const struct tm_replay *p, uint64_t raw)
{
	size_t row;

	return tm_u64map_get(&p->mc, raw, &row) ? (long)row : -1;
}

static void
mc_add(struct tm_replay *p, uint64_t raw, uint32_t row)
{
	tm_u64map_set(&p->mc, raw, row);
}

/* A file's rows are searched linearly up to this many, then in
 * p->file_rows. */
#define FEW_ROWS 8

static void
note_file_row(struct tm_replay *p, size_t file, uint32_t row)
{
	struct tm_file_acc *a = &p->acc[file];
	const uint32_t *r = tm_acc_rows(a);
	uint64_t key = (uint64_t)file << 32 | row;
	size_t v;
	if (a->n_rows > FEW_ROWS) {
		if (tm_u64map_get(&p->file_rows, key, &v))
			return;
	} else {
		for (size_t i = 0; i < a->n_rows; i++) {
			TM_PROBE();
			if (r[i] == row)
				return;
		}
	}
	if (!a->n_rows) {
		a->row1 = row;
		a->n_rows = 1;
		return;
	}
	/* rows' capacity tm_small_cap(n_rows, 1): the first row in row1, then
	 * 2, doubling (no field for it: one per member) */
	uint32_t n = a->n_rows, cap = tm_small_cap(n, 1), nc = tm_small_cap(n + 1, 1);
	if (nc != cap) {
		a->rows = xrealloc(a->rows, (size_t)nc * sizeof *a->rows);
		if (!cap)
			a->rows[0] = a->row1;
	}
	a->rows[a->n_rows++] = row;
	if (a->n_rows == FEW_ROWS + 1) /* from now on in the map: all of them */
		for (size_t i = 0; i < a->n_rows; i++)
			tm_u64map_set(&p->file_rows, (uint64_t)file << 32 | a->rows[i], 1);
	else if (a->n_rows > FEW_ROWS + 1)
		tm_u64map_set(&p->file_rows, key, 1);
}

/* ForkContextForTrace(file, raw) (trace_processor_context.cc). */
static struct tm_tracker *
fork_ctx(struct tm_replay *p, size_t file, uint64_t raw)
{
	if (p->n_ctxs % TRACKER_BLOCK == 0) {
		XGROW(p->trk_blocks, p->cap_trk_blocks, p->n_trk_blocks + 1);
		p->trk_blocks[p->n_trk_blocks++] = xcalloc(TRACKER_BLOCK, sizeof **p->trk_blocks);
	}
	struct tm_tracker *c = &p->trk_blocks[p->n_trk_blocks - 1][p->n_ctxs % TRACKER_BLOCK];
	c->file = (uint32_t)file;
	long mrow = mc_find(p, raw);
	if (mrow >= 0) {
		c->row = (uint32_t)mrow;
		c->is_primary = false;
	} else {
		/* MachineTracker: reuse the manifest's row, else insert one. */
		long r = row_of_raw(p, raw);
		c->row = r >= 0 ? (uint32_t)r : insert_row(p, raw, NULL);
		c->is_primary = true;
		mc_add(p, raw, c->row);
	}
	p->n_ctxs++;
	p->any_forked = true;
	note_file_row(p, file, c->row);
	return c;
}

/* ------------------------------------------------------------------ */
/* errors and stats                                                    */
/* ------------------------------------------------------------------ */

static void
vfail(struct tm_replay *p, const char *fmt, va_list ap) TM_PRINTF(2, 0);

static void
vfail(struct tm_replay *p, const char *fmt, va_list ap)
{
	if (p->error)
		return;
	struct tm_buf b;
	tm_buf_init(&b);
	char tmp[2048];
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	/* trace_processor_storage_impl.cc: top-level parse errors are wrapped
	 * unless they carry (ERR:fmt). */
	if (strstr(tmp, "(ERR:fmt)"))
		tm_buf_adds(&b, tmp);
	else
		tm_buf_addf(&b, "Trace parse failure: %s (ERR:tp-parse)", tmp);
	p->error = tm_buf_steal(&b);
}

static void
fail(struct tm_replay *p, const char *fmt, ...) TM_PRINTF(2, 3);

static void
fail(struct tm_replay *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(p, fmt, ap);
	va_end(ap);
}

/* fail() for an error the manifest causes (its parse, validation or apply,
 * or a manifest rule a trace breaks), whatever its text quotes: the report
 * says where it comes from (error_in_manifest). */
static void
mfail(struct tm_replay *p, const char *fmt, ...) TM_PRINTF(2, 3);

static void
mfail(struct tm_replay *p, const char *fmt, ...)
{
	if (p->error)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfail(p, fmt, ap);
	va_end(ap);
	p->error_in_manifest = true;
}

/* n more of stat st on a file (struct tm_file_acc: its non-zero stats);
 * missing: its events missing under st (miss_mask) instead. */
static void
acc_stat_add(struct tm_file_acc *a, int st, bool missing, uint64_t n)
{
	uint64_t b = 1ull << st, *mask = missing ? &a->miss_mask : &a->stat_mask;
	size_t k = (size_t)__builtin_popcountll(*mask & (b - 1)) +
		   (missing ? (size_t)__builtin_popcountll(a->stat_mask) : 0);
	if (*mask & b) {
		a->stat_v[k] += n;
		return;
	}
	if (!n)
		return;
	size_t cnt = (size_t)__builtin_popcountll(a->stat_mask) +
		     (size_t)__builtin_popcountll(a->miss_mask);
	a->stat_v = xrealloc(a->stat_v, (cnt + 1) * sizeof *a->stat_v);
	memmove(a->stat_v + k + 1, a->stat_v + k, (cnt - k) * sizeof *a->stat_v);
	a->stat_v[k] = n;
	*mask |= b;
}

/* n more events of a file missing from the merged trace, lost under stat
 * st (tm_stat_loses_events): every place the replay loses an event counts
 * it here, and the events list (record_event) names the same stat. */
static void
missing_add(struct tm_file_acc *a, enum tm_stat_id st, uint64_t n)
{
	acc_stat_add(a, (int)st, true, n);
}

/* Count a stat on the context's file and, for the three drop stats, on its
 * machine row. */
static void
stat_add(struct tm_replay *p, const struct tm_tracker *c, enum tm_stat_id st, uint64_t n)
{
	acc_stat_add(&p->acc[c->file], (int)st, false, n);
	if (tm_stat_is_drop(st)) {
		if (c->row >= p->cap_row_drops) {
			size_t old = p->cap_row_drops;
			XGROW(p->row_drops, p->cap_row_drops, (size_t)c->row + 1);
			memset(p->row_drops + old, 0, (p->cap_row_drops - old) * sizeof *p->row_drops);
		}
		p->row_drops[c->row] += n;
	}
}

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
			acc_stat_add(&p->acc[e->file], TM_STAT_MISPLACED_END_EVENT, false, 1);
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
			acc_stat_add(&p->acc[o->file], TM_STAT_SLICE_NEGATIVE_DURATION, false, 1);
			continue;
		}
		if (!close_stack(p, st, o->ts, o->dur))
			continue; /* a slice of its own track (close_stack) */
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
 * order, contexts in the order their first event was listed. */
struct squeue {
	uint64_t key; /* context rank << 8 | kind: the order queues tie in */
	size_t *ev;   /* its events, by ts then push order */
	size_t n, at;
};

static bool
q_before(const struct tm_replay *p, const struct squeue *a, const struct squeue *b)
{
	int64_t ta = p->evs[a->ev[a->at]].ts, tb = p->evs[b->ev[b->at]].ts;
	return ta != tb ? ta < tb : a->key < b->key;
}

static void
q_sift(const struct tm_replay *p, struct squeue **h, size_t n, size_t k)
{
	for (;;) {
		size_t m = k, l = 2 * k + 1, r = l + 1;
		if (l < n && q_before(p, h[l], h[m]))
			m = l;
		if (r < n && q_before(p, h[r], h[m]))
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
	const struct tm_report_event *e = &p->evs[i];
	if (!ev_is_json(p, i))
		return INT64_MAX;
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

/* One queue's events (push order) in the order the sorter extracts them:
 * TraceSorter::Queue::Append marks where the pushes broke ts order (a ts
 * below the queue's max_ts, which starts at 0; in slow mode, slow[i], one
 * equal to it too; the first event's index 0 never counts as a mark), and
 * Queue::Sort sorts from the first event at or after the lowest such ts,
 * by SlowOperatorLess when slow_end (slow mode when the sorter extracts,
 * after every file was tokenized), else by (ts, push order). */
static void
queue_sort(const struct tm_replay *p, struct squeue *u, const bool *slow, bool slow_end)
{
	int64_t max_ts = 0, sort_min = INT64_MAX;
	size_t sort_start = 0;
	for (size_t j = 0; j < u->n; j++) {
		int64_t ts = p->evs[u->ev[j]].ts;
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
	while (b < sort_start && p->evs[u->ev[b]].ts < sort_min)
		b++;
	size_t n = u->n - b;
	struct slow_ix *t = xmalloc(n * sizeof *t);
	for (size_t m = 0; m < n; m++) {
		size_t i = u->ev[b + m];
		t[m] = (struct slow_ix){p->evs[i].ts, slow_end ? slow_key(p, i) : 0, i};
	}
	qsort(t, n, sizeof *t, cmp_slow_ix);
	for (size_t m = 0; m < n; m++)
		u->ev[b + m] = t[m].i;
	free(t);
}

/* rank[i]: the place of listed event i (not dropped) in the order the
 * sorter hands events on (trace_sorter.cc, SortAndExtractEventsUntilAllocId,
 * after every file was tokenized): the queue whose next event is earliest
 * (the first made on a tie) gives every event up to the next event of any
 * other queue, ties included.  Events the list does not hold (no detail:
 * compact_sched, packets with nothing to show) are not in these queues. */
static void
sorter_rank(const struct tm_replay *p, size_t *rank)
{
	struct tm_u64map ctx = {0}, qs = {0};
	struct squeue *q = NULL;
	size_t nq = 0, cap = 0, n_ctx = 0;
	size_t *qof = xmalloc((p->n_evs + 1) * sizeof *qof);
	for (size_t i = 0; i < p->n_evs; i++) {
		const struct tm_report_event *e = &p->evs[i];
		qof[i] = SIZE_MAX;
		if (e->drop)
			continue;
		size_t c, k;
		uint64_t ck = (uint64_t)e->file << 32 | e->machine;
		if (!tm_u64map_get(&ctx, ck, &c)) {
			c = n_ctx++;
			tm_u64map_set(&ctx, ck, c);
		}
		uint64_t qk = (uint64_t)c << 8 | p->ev_queue[i];
		if (!tm_u64map_get(&qs, qk, &k)) {
			XGROW(q, cap, nq + 1);
			k = nq++;
			q[k] = (struct squeue){qk, NULL, 0, 0};
			tm_u64map_set(&qs, qk, k);
		}
		qof[i] = k;
		q[k].n++;
	}
	size_t *all = xmalloc((p->n_evs + 1) * sizeof *all), off = 0;
	for (size_t k = 0; k < nq; k++) {
		q[k].ev = all + off;
		off += q[k].n;
		q[k].n = 0;
	}
	for (size_t i = 0; i < p->n_evs; i++)
		if (qof[i] != SIZE_MAX)
			q[qof[i]].ev[q[qof[i]].n++] = i;
	/* The sorter's slow mode (TraceSorter::Stream::Push): from the first
	 * JSON X pushed on, an event at a queue's latest ts breaks its order
	 * too, and a queue that needs sorting is sorted by SlowOperatorLess. */
	bool *slow = xmalloc((p->n_evs + 1) * sizeof *slow), slow_now = false;
	for (size_t i = 0; i < p->n_evs; i++) {
		slow_now = slow_now || (qof[i] != SIZE_MAX && p->evs[i].phase == 'X' && ev_is_json(p, i));
		slow[i] = slow_now;
	}
	struct squeue **h = xmalloc((nq + 1) * sizeof *h);
	for (size_t k = 0; k < nq; k++) {
		queue_sort(p, &q[k], slow, slow_now);
		h[k] = &q[k];
	}
	free(slow);
	size_t nh = nq, r = 0;
	for (size_t k = nh / 2; k-- > 0;)
		q_sift(p, h, nh, k);
	while (nh) {
		struct squeue *u = h[0];
		h[0] = h[--nh];
		q_sift(p, h, nh, 0);
		int64_t next = nh ? p->evs[h[0]->ev[h[0]->at]].ts : INT64_MAX;
		do
			rank[u->ev[u->at++]] = r++;
		while (u->at < u->n && p->evs[u->ev[u->at]].ts <= next);
		if (u->at < u->n) {
			h[nh++] = u;
			for (size_t k = nh - 1; k > 0 && q_before(p, h[k], h[(k - 1) / 2]); k = (k - 1) / 2) {
				struct squeue *t = h[k];
				h[k] = h[(k - 1) / 2];
				h[(k - 1) / 2] = t;
			}
		}
	}
	free(h);
	free(all);
	free(qof);
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
static void
slice_tracks(struct tm_replay *p)
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
static void
record_event(struct tm_replay *p, size_t file, uint32_t detail, int64_t ts, uint32_t row, int stat)
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

/* ------------------------------------------------------------------ */
/* trace time and trackers                                             */
/* ------------------------------------------------------------------ */

static bool
try_set_clock(struct tm_replay *p, struct tm_clockid c, int64_t owner)
{
	if (p->tt_owner != NO_OWNER && p->tt_owner != owner)
		return false;
	p->tt = c;
	p->tt_owner = owner;
	p->tt_claimed = true;
	p->tt_clock_meta = c.clock;
	return true;
}

static void
ctx_set_global_clock(struct tm_replay *p, struct tm_tracker *c, struct tm_clockid clk)
{
	if (c->converted)
		return;
	try_set_clock(p, tm_clockid_qualify(clk, c->row, 0), tm_ctx_trace_id(p, c));
}

static void
zero_edge(struct tm_replay *p, struct tm_clockid a, struct tm_clockid b)
{
	struct tm_graph_clock gc[2] = {{a, 0, 1, false}, {b, 0, 1, false}};
	char msg[512];
	(void)tm_graph_add_snapshot(p->g, gc, 2, p->tt, msg, sizeof msg);
}

static void
flush_pending(struct tm_replay *p, struct tm_tracker *c)
{
	if (!c->has_pending)
		return;
	c->has_pending = false;
	struct tm_clockid gt = p->tt;
	struct tm_clockid q = tm_clockid_qualify(tm_ctx_pending(p, c), c->row, tm_ctx_tag(p, c));
	struct tm_clockid k = tm_tracker_bridged_from(p, c);
	if (!tm_clockid_eq(q, k) && !tm_graph_reaches(p->g, q, k))
		zero_edge(p, q, k);
	c->bridge = BR_PATH;
	if (tm_clockid_eq(k, gt) || tm_graph_reaches(p->g, k, gt))
		return;
	struct tm_clockid r = {TM_CLOCK_REALTIME, 0, 0, c->row};
	struct tm_clockid R = {TM_CLOCK_REALTIME, 0, 0, gt.machine};
	if (!tm_clockid_eq(r, R) && tm_graph_reaches(p->g, k, r) && tm_graph_reaches(p->g, R, gt)) {
		if (!tm_graph_reaches(p->g, r, R))
			zero_edge(p, r, R);
		c->bridge = BR_REALTIME;
		return;
	}
	if (k.clock == TM_CLOCK_TRACE_FILE || gt.clock == TM_CLOCK_TRACE_FILE || k.clock == gt.clock) {
		zero_edge(p, k, gt);
		c->bridge = BR_ASSUMED;
		return;
	}
	c->bridge = BR_DECLINED;
	stat_add(p, c, TM_STAT_UNRELATABLE, 1);
}

/* The stat a failed conversion counts (clock_tracker.cc). */
static enum tm_stat_id
why_stat(enum tm_conv_result why)
{
	return why == TM_CONV_UNKNOWN_SOURCE   ? TM_STAT_UNKNOWN_SOURCE
	       : why == TM_CONV_UNKNOWN_TARGET ? TM_STAT_UNKNOWN_TARGET
					       : TM_STAT_NO_PATH;
}

/* An estimate's look at a conversion on its way (struct tm_replay_probe):
 * the value it has at node id, if its path passes there. */
struct via {
	struct tm_clockid id;
	bool passed;
	int64_t val;
};

/* ClockTracker::ToTraceTime on an unqualified clock; v (may be NULL) gets
 * the value on the way at v->id. */
static bool
to_trace_time_via(struct tm_replay *p, struct tm_tracker *c, struct tm_clockid clk, int64_t ts,
		  bool suppress, int64_t *out, enum tm_conv_result *why, struct via *v)
{
	flush_pending(p, c);
	c->converted = true;
	struct tm_clockid q = tm_clockid_qualify(clk, c->row, tm_ctx_tag(p, c));
	enum tm_conv_result res =
		v ? tm_graph_convert_via(p->g, q, ts, p->tt, v->id, false, out, &v->passed, &v->val)
		  : tm_graph_convert(p->g, q, ts, p->tt, false, out);
	if (why)
		*why = res;
	if (res == TM_CONV_OK)
		return true;
	if (!suppress) {
		stat_add(p, c, why_stat(res), 1);
	}
	return false;
}

static bool
to_trace_time(struct tm_replay *p, struct tm_tracker *c, struct tm_clockid clk, int64_t ts, bool suppress,
	      int64_t *out, enum tm_conv_result *why)
{
	return to_trace_time_via(p, c, clk, ts, suppress, out, why, NULL);
}

/* ClockTracker::AddSnapshot.  Returns false on its PIN error ("clock
 * overrides require the trace to use a single clock"). */
static bool
ctx_add_snapshot(struct tm_replay *p, struct tm_tracker *c, const struct tm_op_clock *clk, size_t n, uint32_t seq)
{
	if (c->is_pin)
		return false;
	if (!c->is_primary && tm_ctx_tag(p, c) == 0) {
		c->tagged = true;
		if (c->converted)
			stat_add(p, c, TM_STAT_MIXED_SOURCES, 1);
	}
	struct tm_graph_clock *gc = xmalloc((2 * n + 1) * sizeof *gc);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		struct tm_clockid id = {clk[i].id, 0, 0, 0};
		if (tm_clock_is_seq(clk[i].id)) {
			id.seq = seq;
			id.tf = tm_ctx_trace_id(p, c);
		}
		gc[k++] = (struct tm_graph_clock){tm_clockid_qualify(id, c->row, tm_ctx_tag(p, c)),
						  clk[i].ts, clk[i].unit ? clk[i].unit : 1,
						  clk[i].is_incremental};
	}
	if (!c->is_primary && c->row != p->tt.machine) {
		size_t base = k;
		for (size_t i = 0; i < base; i++)
			if ((gc[i].id.clock == TM_CLOCK_REALTIME ||
			     gc[i].id.clock == TM_CLOCK_REALTIME_COARSE) &&
			    gc[i].id.seq == 0) {
				gc[k] = gc[i];
				gc[k].id = (struct tm_clockid){gc[i].id.clock, 0, 0, c->row};
				k++;
			}
	}
	char msg[512];
	if (!tm_graph_add_snapshot(p->g, gc, k, p->tt, msg, sizeof msg))
		stat_add(p, c, TM_STAT_INVALID_SNAPSHOT, 1);
	free(gc);
	return true;
}

/* ------------------------------------------------------------------ */
/* manifest apply (perfetto_manifest_reader.cc)                      */
/* ------------------------------------------------------------------ */

/* The member's path as a manifest names it: its trace_file name; for a
 * single input evaluated with a manifest we would write, the base name it
 * gets in that TAR. */
static const char *
mpath(const struct tm_replay *p, const struct tm_member *mb, size_t *len)
{
	if (mb->name) {
		*len = mb->name_len;
		return mb->name;
	}
	if (p->is_virtual && mb->parent < 0 && mb->source_path) {
		const char *b = tm_path_base(mb->source_path);
		*len = strlen(b);
		return b;
	}
	return NULL;
}

/* The trace_file rows that exist when the manifest is applied: an archive
 * adds all its members when its own turn comes, before any of them is
 * parsed (tar_trace_reader.cc, zip_trace_reader.cc, TraceFileTracker::AddFile),
 * so these are the rows up to the manifest's last sibling; members of a
 * nested archive or the inflated stream of a gzip'd member come later.  (A
 * manifest we would write is a top-level member of the TAR.) */
static uint32_t
rows_at_manifest(const struct tm_replay *p, uint32_t manifest_tid)
{
	const struct tm_input *in = p->src->in;
	int parent = 0;
	bool top = manifest_tid == VIRTUAL_MANIFEST_TID;
	for (size_t i = 0; !top && i < in->n_members; i++)
		if (in->members[i].trace_file_id == manifest_tid) {
			parent = in->members[i].parent;
			break;
		}
	uint32_t last = 0;
	for (size_t i = 0; i < in->n_members; i++) {
		const struct tm_member *mb = &in->members[i];
		if (mb->trace_file_id != UINT32_MAX && (top ? mb->parent <= 0 : mb->parent == parent) &&
		    mb->trace_file_id > last)
			last = mb->trace_file_id;
	}
	return last;
}

/* find_trace_file_id (perfetto_manifest_reader.cc, ApplyManifest): the
 * first trace_file row of that name among the rows that exist by then. */
static long
tid_of_path(struct tm_replay *p, const char *path, size_t plen)
{
	size_t n = p->src->in->n_members;
	for (size_t i = 0; i < n; i++) {
		const struct tm_member *mb = &p->src->in->members[i];
		size_t len;
		const char *name = mpath(p, mb, &len);
		if (name && mb->trace_file_id <= p->tf_rows && len == plen &&
		    memcmp(name, path, len) == 0)
			return mb->trace_file_id;
	}
	return -1;
}

static bool
find_trace_file(void *ud, const char *path, size_t len, uint32_t *tid)
{
	long t = tid_of_path(ud, path, len);
	if (t < 0)
		return false;
	*tid = (uint32_t)t;
	return true;
}

/* The plan's override edges into the graph, in files[] order; the first
 * that fails (a duplicate clock domain) fails the import. */
static void
add_edges(struct tm_replay *p, const struct tm_manifest_plan *plan)
{
	for (size_t i = 0; i < plan->n_edges && !p->error; i++) {
		const struct tm_manifest_edge *e = &plan->edges[i];
		long sr = row_of_raw(p, (uint64_t)e->source_raw), rr = row_of_raw(p, (uint64_t)e->ref_raw);
		struct tm_clockid src = {e->source_clock, 0, 0, (uint32_t)(sr < 0 ? 0 : sr)};
		struct tm_clockid ref = {e->ref_clock, 0, 0, (uint32_t)(rr < 0 ? 0 : rr)};
		if (e->source_clock == TM_CLOCK_TRACE_FILE)
			src.tf = e->source_tf;
		if (e->ref_clock == TM_CLOCK_TRACE_FILE)
			ref.tf = e->ref_tf;
		struct tm_graph_clock gc[2] = {{src, e->source_ts, 1, false},
					       {ref, e->ref_ts, 1, false}};
		char msg[512];
		if (!tm_graph_add_snapshot(p->g, gc, 2, p->tt, msg, sizeof msg))
			mfail(p, "%s", msg);
	}
}

/* The manifest reader's apply step (manifest.c computes it in
 * trace_processor's order; here it lands on the machine table and the
 * graph): EnsureMachineRow calls, the trace-time claim, override edges. */
static void
apply_manifest(struct tm_replay *p, uint32_t manifest_tid)
{
	const struct tm_manifest *m = p->m;
	struct tm_manifest_archive_ops ops = {find_trace_file, p};
	p->tf_rows = rows_at_manifest(p, manifest_tid);
	struct tm_manifest_plan plan;
	struct tm_error err;
	enum tm_status st = tm_manifest_apply(m, &ops, &plan, &err);
	for (size_t i = 0; i < plan.n_ensure; i++)
		if (row_of_raw(p, (uint64_t)plan.ensure[i].raw_id) < 0)
			new_row(p, (uint64_t)plan.ensure[i].raw_id, plan.ensure[i].name);
	if (st != TM_OK) {
		/* ApplyManifest adds each entry's edge as it goes: an edge of an
		 * entry before the one that failed fails first (add_edges) */
		add_edges(p, &plan);
		if (!p->error && err.hint[0] && !p->hint)
			p->hint = xstrdup(err.hint);
		mfail(p, "%s", err.msg);
		tm_manifest_plan_fini(&plan);
		return;
	}
	for (size_t i = 0; i < m->n_files && i < plan.n_files; i++) {
		const struct tm_manifest_plan_file *pf = &plan.files[i];
		struct tm_entry_state *es = &p->entries[i];
		es->has_machine_id = pf->machine_raw >= 0;
		es->machine_id = (uint64_t)pf->machine_raw;
		if (!m->files[i].has_machines || !pf->remap_raw)
			continue;
		es->remap_id = xcalloc(m->files[i].n_machines + 1, sizeof *es->remap_id);
		es->remap_raw = xcalloc(m->files[i].n_machines + 1, sizeof *es->remap_raw);
		for (size_t k = 0; k < m->files[i].n_machines; k++) {
			size_t first;
			es->remap_id[es->n_remap] = m->files[i].machines[k].id;
			es->remap_raw[es->n_remap] = (uint64_t)pf->remap_raw[k];
			if (!tm_u64map_get(&es->remap_ix, es->remap_id[es->n_remap], &first))
				tm_u64map_set(&es->remap_ix, es->remap_id[es->n_remap], es->n_remap);
			es->n_remap++;
		}
	}
	if (plan.has_trace_time) {
		long row = plan.tt_has_machine ? row_of_raw(p, (uint64_t)plan.tt_raw) : 0;
		try_set_clock(p, (struct tm_clockid){plan.tt_clock, 0, 0, (uint32_t)(row < 0 ? 0 : row)},
			      manifest_tid);
	}
	add_edges(p, &plan);
	tm_manifest_plan_fini(&plan);
}

/* ------------------------------------------------------------------ */
/* per-file replay                                                     */
/* ------------------------------------------------------------------ */

struct reader { /* one embedded machine of a file */
	uint32_t embedded;
	uint64_t raw; /* the raw machine id its context was forked for */
	struct tm_tracker *c;
};

struct fstate {
	size_t file;
	uint32_t tid;
	const struct tm_scan *sc;
	struct tm_tracker *host;
	uint64_t host_raw; /* the raw machine id the host context was forked for */
	struct reader *readers;
	size_t n_readers, cap_readers;
	/* embedded id, raw id -> readers[] index, past FEW_READERS */
	struct tm_u64map reader_ix, raw_ix;
	bool host_used;
	bool adopt_resolved;
	uint32_t adopted; /* embedded id routed to the host reader, 0 none */
	bool has_machine_override, has_clock_override;
	const struct tm_entry_state *es;
	/* deferred packets: iterator states */
	struct tm_oppos *defers; /* deferred packets (or runs): where to re-read them */
	size_t n_defers, cap_defers;
	struct tm_replay_probe *probe; /* what an estimate asks of this file, or NULL */
};

/* A file's readers are searched linearly up to this many, then in its
 * reader_ix. */
#define FEW_READERS 8

/* The index of the first reader of embedded machine id (by_raw: of raw
 * machine id), or -1. */
static long
find_reader(const struct fstate *fs, uint64_t id, bool by_raw)
{
	size_t i;
	if (fs->n_readers > FEW_READERS)
		return tm_u64map_get(by_raw ? &fs->raw_ix : &fs->reader_ix, id, &i) ? (long)i : -1;
	for (i = 0; i < fs->n_readers; i++) {
		TM_PROBE();
		if ((by_raw ? fs->readers[i].raw : fs->readers[i].embedded) == id)
			return (long)i;
	}
	return -1;
}

static void
add_reader(struct fstate *fs, struct reader r)
{
	XGROW(fs->readers, fs->cap_readers, fs->n_readers + 1);
	fs->readers[fs->n_readers++] = r;
	size_t first;
	/* from FEW_READERS + 1 on, all of them in the maps (the first of an id) */
	for (size_t i = fs->n_readers == FEW_READERS + 1 ? 0 : fs->n_readers - 1;
	     fs->n_readers > FEW_READERS && i < fs->n_readers; i++) {
		if (!tm_u64map_get(&fs->reader_ix, fs->readers[i].embedded, &first))
			tm_u64map_set(&fs->reader_ix, fs->readers[i].embedded, i);
		if (!tm_u64map_get(&fs->raw_ix, fs->readers[i].raw, &first))
			tm_u64map_set(&fs->raw_ix, fs->readers[i].raw, i);
	}
}

static struct tm_tracker *
reader_ctx(struct tm_replay *p, struct fstate *fs, uint32_t machine)
{
	if (machine == 0 || machine == fs->adopted)
		return fs->host;
	long i = find_reader(fs, machine, false);
	(void)p;
	return i >= 0 ? fs->readers[i].c : fs->host; /* MACHINE op missing: treat as host */
}

static void
fork_reader(struct tm_replay *p, struct fstate *fs, uint32_t machine)
{
	uint64_t raw = machine;
	if (fs->es && fs->es->n_remap > 0) {
		size_t k;
		raw = tm_u64map_get(&fs->es->remap_ix, machine, &k) ? fs->es->remap_raw[k] : UINT64_MAX;
		if (raw == UINT64_MAX) {
			mfail(p, "perfetto_manifest: machines: trace has a packet from undeclared machine "
				"id %" PRIu32,
			     machine);
			return;
		}
	}
	/* ForkContextForMachineInCurrentTrace -> ForkContextForTrace
	 * (trace_processor_context.cc): contexts are keyed by (trace, raw
	 * machine id), so an embedded id the manifest's `machines` list maps
	 * onto the raw id of the file's base machine (the same name as id 0),
	 * or onto another embedded id's, gets that context back: its clock
	 * tracker (primary or not, its tag, its conversions), not a new one. */
	struct tm_tracker *h = fs->host, *c = raw == fs->host_raw ? h : NULL;
	long ri = c ? -1 : find_reader(fs, raw, true);
	if (ri >= 0)
		c = fs->readers[ri].c;
	if (!c)
		c = fork_ctx(p, fs->file, raw);
	/* ProtoTraceReader::CreateRemoteMachineReader, on the context it got,
	 * new or shared: the parent's default clock if it has one, and a
	 * deferred BOOTTIME sync (replacing one still pending, flushed again
	 * at its next conversion) */
	if (h->has_default) {
		c->has_default = true;
		c->default_clock = h->default_clock;
	}
	c->has_pending = true;
	c->pending_clock = TM_CLOCK_BOOTTIME;
	add_reader(fs, (struct reader){machine, raw, c});
}

static bool
check_single_machine(struct tm_replay *p, struct fstate *fs)
{
	if (fs->has_machine_override) {
		mfail(p, "perfetto_manifest: a `machine` override attributes the file to one machine, "
			"but the file contains packets from multiple machines. Replace `machine` with a "
			"`machines` block that maps each embedded machine_id to a named machine, e.g. "
			"\"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": "
			"\"vm\"}].");
		return false;
	}
	if (fs->has_clock_override) {
		mfail(p, "perfetto_manifest: a `clocks` override applies only to a single-machine "
			"file, but the file contains packets from multiple machines. Remove the "
			"`clocks` override and let the trace's own remote clock snapshots align the "
			"machines; if you need to anchor a specific embedded machine, split it into its "
			"own file and override that.");
		return false;
	}
	return true;
}

/* ProtoTraceReader's machine dispatch (proto_trace_reader.cc:285-305,795-860). */
static void
on_machine(struct tm_replay *p, struct fstate *fs, uint32_t machine)
{
	if (machine == 0) {
		fs->host_used = true;
		return;
	}
	if (!fs->adopt_resolved) {
		fs->adopt_resolved = true;
		if (!check_single_machine(p, fs))
			return;
		struct tm_tracker *h = fs->host;
		bool has_remap = fs->es && fs->es->n_remap > 0;
		if (!fs->host_used && p->rows[h->row].raw == 0 && !has_remap &&
		    mc_find(p, machine) < 0) {
			p->rows[h->row].raw = machine;
			mc_add(p, machine, h->row);
			fs->adopted = machine;
		}
	}
	if (machine == fs->adopted || find_reader(fs, machine, false) >= 0)
		return;
	fork_reader(p, fs, machine);
}

static void
note_all(struct tm_file_acc *a, int64_t lo, int64_t hi)
{
	if (!a->has_all || lo < a->all_first)
		a->all_first = lo;
	if (!a->has_all || hi > a->all_last)
		a->all_last = hi;
	a->has_all = true;
}

static void
keep(struct tm_replay *p, struct fstate *fs, struct tm_tracker *c, int64_t ts, uint32_t detail)
{
	struct tm_file_acc *a = &p->acc[fs->file];
	a->events++;
	record_event(p, fs->file, detail, ts, c->row, -1);
	if (p->untimed) /* no part of the file's range (TM_CONV_UNTIMED) */
		return;
	note_all(a, ts, ts);
	if (!a->has_ts || ts < a->first_ts)
		a->first_ts = ts;
	if (!a->has_ts || ts > a->last_ts)
		a->last_ts = ts;
	a->has_ts = true;
}

static void
push(struct tm_replay *p, struct fstate *fs, struct tm_tracker *c, int64_t ts, uint32_t detail, bool te)
{
	if (ts < 0) {
		/* dropped: where it would have landed, timed or not */
		note_all(&p->acc[fs->file], ts, ts);
		enum tm_stat_id st = te ? TM_STAT_TE_INVALID_TS : TM_STAT_NEG_DROPPED;
		stat_add(p, c, st, 1);
		p->acc[fs->file].events++;
		missing_add(&p->acc[fs->file], st, 1);
		record_event(p, fs->file, detail, ts, c->row, (int)st);
		return;
	}
	keep(p, fs, c, ts, detail);
}

/* tracing_started_ns is kept per (trace file, machine row), the scope of
 * that metadata key (storage/metadata.h: kMachineAndTrace; a context's
 * MetadataTracker::SetMetadata and GetMetadata): one per context. */
static uint64_t
started_key(const struct tm_tracker *c)
{
	return (uint64_t)c->file << 32 | c->row;
}

/* ProtoTraceReader::ParseServiceEvent: tracing_started sets the context's
 * tracing_started_ns to ts (the last one set wins). */
static void
set_started(struct tm_replay *p, const struct tm_tracker *c, int64_t ts)
{
	if (p->started_preset)
		return;
	size_t i;
	if (!tm_u64map_get(&p->started_map, started_key(c), &i)) {
		XGROW(p->started, p->cap_started, p->n_started + 1);
		i = p->n_started++;
		p->started[i] = (struct tm_started){c->file, c->row, 0};
		tm_u64map_set(&p->started_map, started_key(c), i);
	}
	if (p->started[i].ns != ts && c->ftrace_seen)
		p->started_again = true;
	p->started[i].ns = ts;
}

/* The trace time below which the context's ftrace events are dropped:
 * FtraceParser::MaybeOnFirstFtraceEvent reads tracing_started_ns (0 when
 * unset; Config::drop_ftrace_data_before defaults to kTracingStarted) when
 * the sorter hands it the context's first ftrace event, so after every
 * file was tokenized: the last value the context set, wherever it is in
 * the file (tm_replay runs again when one is set after ftrace events of
 * its context were placed). */
static int64_t
started_ns(struct tm_replay *p, struct tm_tracker *c)
{
	size_t i;
	c->ftrace_seen = true;
	return p->n_started && tm_u64map_get(&p->started_map, started_key(c), &i) ? p->started[i].ns : 0;
}

/* An event at trace time ts whose context drops ftrace events below thr
 * (0: none): FtraceParser::ParseFtraceEvent and ParseInlineSchedSwitch /
 * ParseInlineSchedWaking skip it and count
 * ftrace_packet_before_tracing_start (after the sorter, which drops a
 * negative ts first). */
static void
place(struct tm_replay *p, struct fstate *fs, struct tm_tracker *c, int64_t ts, uint32_t detail, bool te,
      int64_t thr)
{
	if (ts >= 0 && ts < thr) {
		note_all(&p->acc[fs->file], ts, ts);
		p->acc[fs->file].events++;
		stat_add(p, c, TM_STAT_FTRACE_BEFORE_START, 1);
		missing_add(&p->acc[fs->file], TM_STAT_FTRACE_BEFORE_START, 1);
		record_event(p, fs->file, detail, ts, c->row, (int)TM_STAT_FTRACE_BEFORE_START);
		return;
	}
	push(p, fs, c, ts, detail, te);
}

static void
drop(struct tm_replay *p, struct fstate *fs, struct tm_tracker *c, enum tm_stat_id st, int64_t raw, uint32_t detail)
{
	p->acc[fs->file].events++;
	missing_add(&p->acc[fs->file], st, 1);
	record_event(p, fs->file, detail, raw, c->row, (int)st);
}

/* Node for a clock spec on a reader: 0 = default (or none: raw). */
static bool
resolve_clock(struct fstate *fs, struct tm_tracker *c, uint32_t clock, uint32_t seq, struct tm_clockid *out)
{
	if (clock == 0) {
		if (!c->has_default)
			return false;
		*out = c->default_clock;
		return true;
	}
	*out = (struct tm_clockid){clock, 0, 0, 0};
	if (tm_clock_is_seq(clock)) {
		out->seq = seq;
		out->tf = fs->tid;
	}
	return true;
}

/* Run one op that is not a PACKET header.  pkt_ts: the packet's converted
 * ts when inside a packet. */
static void run_op(struct tm_replay *p, struct fstate *fs, const struct tm_op *op, bool in_pkt,
		   int64_t pkt_ts);

static void
run_convert(struct tm_replay *p, struct fstate *fs, const struct tm_op *op)
{
	struct tm_tracker *c = reader_ctx(p, fs, op->machine);
	struct tm_clockid clk;
	int64_t v = op->ts; /* no clock: the raw value */
	enum tm_conv_result why;
	if (resolve_clock(fs, c, op->clock, op->seq, &clk) &&
	    !to_trace_time(p, c, clk, op->ts, op->flags & TM_CONV_SUPPRESS, &v, &why)) {
		if (op->flags & TM_CONV_FAIL_FATAL) {
			fail(p, "Failed to convert timestamp to trace time");
			return;
		}
		if (!(op->flags & TM_CONV_FAIL_KEEP_RAW)) {
			if (!(op->flags & TM_CONV_NO_PUSH))
				drop(p, fs, c, why_stat(why), op->ts, op->detail);
			return;
		}
		v = op->ts;
	}
	if (op->flags & TM_CONV_FTRACE) {
		int64_t thr = started_ns(p, c);
		if (v >= 0 && v < thr) { /* not parsed: no systrace_parse_failure either */
			place(p, fs, c, v, op->detail, false, thr);
			return;
		}
	}
	if (op->flags & TM_CONV_NO_PID)
		stat_add(p, c, TM_STAT_STRACE_MISSING_PID, 1);
	p->untimed = op->flags & TM_CONV_UNTIMED;
	if (!(op->flags & TM_CONV_NO_PUSH))
		push(p, fs, c, v, op->detail, op->flags & TM_CONV_NEG_TE_INVALID);
	p->untimed = false;
	if ((op->flags & TM_CONV_ATRACE_FAIL) && v >= 0)
		stat_add(p, c, TM_STAT_SYSTRACE_PARSE_FAILURE, 1);
}

static void
run_snapshot(struct tm_replay *p, struct fstate *fs, const struct tm_op *op)
{
	struct tm_tracker *c = reader_ctx(p, fs, op->machine);
	if (op->flags & TM_SNAP_PACKET) {
		if (c->is_pin) {
			mfail(p, "perfetto_manifest: clock overrides require the trace to use a single "
				"clock");
			return;
		}
		bool has_boot = false, has_tf = false;
		for (uint32_t i = 0; i < op->n; i++) {
			has_boot |= op->clocks[i].id == TM_CLOCK_BOOTTIME;
			has_tf |= op->clocks[i].id == TM_CLOCK_TRACE_FILE;
		}
		uint32_t dflt = op->primary ? op->primary : (has_boot && !has_tf ? TM_CLOCK_BOOTTIME : 0);
		if (dflt) {
			struct tm_clockid d;
			resolve_clock(fs, c, dflt, op->seq, &d);
			c->has_default = true;
			c->default_clock = d;
			ctx_set_global_clock(p, c, d);
		}
	}
	ctx_add_snapshot(p, c, op->clocks, op->n, op->seq);
}

static void
run_remote_sync(struct tm_replay *p, struct fstate *fs, const struct tm_op *op)
{
	/* proto_trace_reader.cc ParseRemoteClockSync: client snapshots are
	 * added on the remote machine; per-clock offsets from consecutive rounds
	 * whose client BOOTTIME readings are < 30 s apart are averaged and added
	 * as an edge to the current trace-time machine. */
	struct tm_tracker *c = reader_ctx(p, fs, op->machine);
	const struct tm_op_clock *ck = op->clocks;
	size_t pos = 0;
	size_t n = op->n;
	const struct tm_op_clock **cl = xcalloc(n ? n : 1, sizeof *cl);
	const struct tm_op_clock **hl = xcalloc(n ? n : 1, sizeof *hl);
	uint32_t *cn = xcalloc(n ? n : 1, sizeof *cn), *hn = xcalloc(n ? n : 1, sizeof *hn);
	for (size_t i = 0; i < n; i++) {
		cl[i] = ck + pos;
		cn[i] = op->counts[2 * i];
		pos += cn[i];
		hl[i] = ck + pos;
		hn[i] = op->counts[2 * i + 1];
		pos += hn[i];
		ctx_add_snapshot(p, c, cl[i], cn[i], op->seq);
	}
	/* clocks present in the rounds, in first-seen order */
	uint32_t ids[16];
	size_t n_ids = 0;
	for (size_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < cn[i] && n_ids < 16; j++) {
			bool seen = false;
			for (size_t k = 0; k < n_ids; k++)
				seen |= ids[k] == cl[i][j].id;
			if (!seen)
				ids[n_ids++] = cl[i][j].id;
		}
	for (size_t k = 0; k < n_ids; k++) {
		uint32_t b = ids[k];
		int64_t sum = 0, cnt = 0, anchor = 0;
		bool have_prev = false;
		int64_t t1c = 0, t1h = 0, boot1 = 0;
		for (size_t i = 0; i < n; i++) {
			int64_t tc = 0, th = 0, boot = 0;
			bool hc = false, hh = false;
			for (uint32_t j = 0; j < cn[i]; j++) {
				if (cl[i][j].id == b) {
					tc = cl[i][j].ts;
					hc = true;
				}
				if (cl[i][j].id == TM_CLOCK_BOOTTIME)
					boot = cl[i][j].ts;
			}
			for (uint32_t j = 0; j < hn[i]; j++)
				if (hl[i][j].id == b) {
					th = hl[i][j].ts;
					hh = true;
				}
			if (!hc || !hh)
				continue;
			if (th != 0)
				anchor = th;
			if (have_prev && boot - boot1 < INT64_C(30000000000)) {
				int64_t o1 = (t1c + tc) / 2 - t1h;
				int64_t o2 = tc - (t1h + th) / 2;
				sum += o1 + o2;
				cnt += 2;
			}
			have_prev = true;
			t1c = tc;
			t1h = th;
			boot1 = boot;
		}
		if (!cnt)
			continue;
		int64_t off = sum / cnt;
		struct tm_graph_clock gc[2] = {
			{{b, 0, 0, p->tt.machine}, anchor, 1, false},
			{{b, 0, 0, c->row}, wrap_add(anchor, off), 1, false}};
		char msg[512];
		(void)tm_graph_add_snapshot(p->g, gc, 2, p->tt, msg, sizeof msg);
	}
	free(cl);
	free(hl);
	free(cn);
	free(hn);
}

static void
run_op(struct tm_replay *p, struct fstate *fs, const struct tm_op *op, bool in_pkt, int64_t pkt_ts)
{
	struct tm_tracker *c;
	switch (op->kind) {
	case TM_OP_MACHINE:
		on_machine(p, fs, op->machine);
		break;
	case TM_OP_SNAPSHOT:
		run_snapshot(p, fs, op);
		break;
	case TM_OP_PUSH:
		c = reader_ctx(p, fs, op->machine);
		push(p, fs, c, in_pkt ? pkt_ts : op->ts, op->detail, op->flags & TM_PUSH_TRACK_EVENT);
		break;
	case TM_OP_PUSH_NOTS:
		p->acc[fs->file].events += op->n;
		break;
	case TM_OP_CONVERT:
		run_convert(p, fs, op);
		break;
	case TM_OP_CONVERT_ARRAY: {
		/* compact_sched: ftrace events (ParseInlineSchedSwitch/Waking) */
		c = reader_ctx(p, fs, op->machine);
		struct tm_clockid clk;
		bool have = resolve_clock(fs, c, op->clock, op->seq, &clk);
		for (uint32_t i = 0; i < op->n; i++) {
			int64_t v = op->tss[i];
			enum tm_conv_result why;
			if (have && !to_trace_time(p, c, clk, op->tss[i], false, &v, &why)) {
				/* the rest of the array is abandoned (one failure) */
				p->acc[fs->file].events += op->n - i;
				missing_add(&p->acc[fs->file], why_stat(why), op->n - i);
				for (uint32_t k = i; k < op->n; k++)
					record_event(p, fs->file, 0, op->tss[k], c->row, (int)why_stat(why));
				break;
			}
			place(p, fs, c, v, 0, false, started_ns(p, c));
		}
		break;
	}
	case TM_OP_SERVICE: {
		c = reader_ctx(p, fs, op->machine);
		struct tm_clockid clk;
		int64_t v, ts = op->ts; /* not converted: the raw value */
		if (resolve_clock(fs, c, op->clock ? op->clock : TM_CLOCK_BOOTTIME, op->seq, &clk) &&
		    to_trace_time(p, c, clk, op->ts, true, &v, NULL))
			ts = v;
		if (op->flags & TM_SVC_TRACING_STARTED)
			set_started(p, c, ts);
		break;
	}
	case TM_OP_REMOTE_SYNC:
		run_remote_sync(p, fs, op);
		break;
	case TM_OP_SYSINFO:
		c = reader_ctx(p, fs, op->machine);
		free(p->rows[c->row].name);
		p->rows[c->row].name = xstrdup(op->text);
		break;
	case TM_OP_STAT:
		c = reader_ctx(p, fs, op->machine);
		stat_add(p, c, (enum tm_stat_id)op->stat, op->n);
		if (tm_stat_loses_events((enum tm_stat_id)op->stat)) {
			/* a scanner's count of events it saw lost (a TrackEvent
			 * whose legacy timestamp is negative) */
			missing_add(&p->acc[fs->file], (enum tm_stat_id)op->stat, op->n);
			for (uint32_t k = 0; k < op->n; k++)
				record_event(p, fs->file, 0, op->ts, c->row, (int)op->stat);
		}
		break;
	case TM_OP_FATAL:
		if (!p->error) {
			struct tm_buf w;
			tm_buf_init(&w);
			tm_member_label(p->src->in, fs->file, &w);
			tm_buf_addf(&w, ", byte %" PRIu64 " (0x%" PRIx64 ")", op->offset, op->offset);
			p->error_where = tm_buf_steal(&w);
		}
		fail(p, "%s", op->text);
		break;
	case TM_OP_PACKET:
	case TM_OP_RUN:
		break; /* handled by the caller */
	}
}

static void
defer_at(struct fstate *fs, const struct tm_oppos *pos)
{
	XGROW(fs->defers, fs->cap_defers, fs->n_defers + 1);
	fs->defers[fs->n_defers++] = *pos;
}

/* A packet whose first conversion failed, deferred to the file's EOF
 * (proto_trace_reader.cc).  Every such packet, alone or a run's element,
 * comes here: its clock's shadow (tm_graph_shadow_step) takes its step, so
 * a later sample on that incremental clock reads the value it would have
 * had; *shadow is that value when the clock is incremental (true). */
static bool
defer_packet(struct tm_replay *p, struct fstate *fs, const struct tm_tracker *c, struct tm_clockid clk,
	     int64_t ts, const struct tm_oppos *pos, int64_t *shadow)
{
	defer_at(fs, pos);
	return tm_graph_shadow_step(p->g, tm_clockid_qualify(clk, c->row, tm_ctx_tag(p, c)), ts,
				    shadow);
}

/* A flagged packet's timestamp for an estimate: the value its conversion
 * to trace time (proto_trace_reader.cc, the packet timestamp through
 * ClockTracker::ToTraceTime) had at the file's trace clock (v, when
 * converted), else, once its conversion has finally failed, a conversion of
 * its own to that clock that changes nothing.  An incremental clock's
 * failed conversions do not accumulate (clock_synchronizer.h), so its value
 * then is the one the clock would have had had they all succeeded, as they
 * will once the file is related (tm_graph_shadow_step, at the first
 * attempt). */
static void
probe_note(struct tm_replay *p, struct fstate *fs, size_t slot, const struct tm_tracker *c,
	   struct tm_clockid clk, int64_t ts, const struct via *v, bool converted)
{
	struct tm_replay_probe *pr = fs->probe;
	if (converted) {
		pr->st[slot] = v->passed ? TM_PROBE_OK : TM_PROBE_AVOIDS;
		pr->val[slot] = v->val;
		return;
	}
	struct tm_clockid q = tm_clockid_qualify(clk, c->row, tm_ctx_tag(p, c));
	int64_t x;
	if (pr->st[slot] == TM_PROBE_PENDING) {
		bool ok = tm_graph_convert_ns(p->g, q, pr->val[slot], v->id, &x) == TM_CONV_OK;
		pr->st[slot] = ok ? TM_PROBE_OK : TM_PROBE_NO_PATH;
		pr->val[slot] = ok ? x : 0;
	} else if (tm_graph_is_incremental(p->g, q))
		pr->st[slot] = TM_PROBE_INCREMENTAL;
	else if (tm_graph_convert(p->g, q, ts, v->id, true, &x) == TM_CONV_OK) {
		pr->st[slot] = TM_PROBE_OK;
		pr->val[slot] = x;
	} else
		pr->st[slot] = TM_PROBE_NO_PATH;
}

/* Run a PACKET op and its payload (the next op->n ops from it).  final: the
 * EOF retry (errors recorded, failure drops the packet). */
static void
run_packet(struct tm_replay *p, struct fstate *fs, struct tm_opiter *it, const struct tm_op *hdr, bool final,
	   const struct tm_oppos *pos)
{
	struct tm_tracker *c = reader_ctx(p, fs, hdr->machine);
	struct tm_op op;
	struct tm_clockid clk = {0, 0, 0, 0};
	int64_t ts = hdr->ts;
	bool have = resolve_clock(fs, c, hdr->clock, hdr->seq, &clk);
	bool ok = true;
	enum tm_stat_id fail_stat = TM_STAT_NO_PATH;
	size_t slot = (hdr->flags & TM_PKT_SAMPLE) && fs->probe
			      ? tm_replay_probe_slot(fs->probe, hdr->offset)
			      : SIZE_MAX;
	struct via via = {{0, 0, 0, 0}, false, 0};
	if (slot != SIZE_MAX) {
		via.id = tm_clockid_qualify((struct tm_clockid){fs->probe->clock, 0, 0, 0}, fs->host->row,
					    tm_ctx_tag(p, fs->host));
		if (!have) {
			fs->probe->st[slot] = TM_PROBE_RAW;
			fs->probe->val[slot] = ts;
		}
	}
	if (hdr->flags & TM_PKT_CHROME) {
		uint32_t rc = have ? clk.clock : 0;
		if (rc == 0 || rc == TM_CLOCK_MONOTONIC) {
			int64_t v;
			if (to_trace_time(p, c, (struct tm_clockid){TM_CLOCK_MONOTONIC, 0, 0, 0}, ts,
					  false, &v, NULL))
				ts = v;
			have = false;
		}
	}
	if (have) {
		int64_t v;
		enum tm_conv_result why;
		if (to_trace_time_via(p, c, clk, ts, !final, &v, &why, slot != SIZE_MAX ? &via : NULL)) {
			if (slot != SIZE_MAX)
				probe_note(p, fs, slot, c, clk, ts, &via, true);
			ts = v;
		} else if (!final) {
			int64_t sh;
			if (defer_packet(p, fs, c, clk, ts, pos, &sh) && slot != SIZE_MAX) {
				fs->probe->st[slot] = TM_PROBE_PENDING;
				fs->probe->val[slot] = sh;
			}
			ok = false;
		} else {
			if (slot != SIZE_MAX)
				probe_note(p, fs, slot, c, clk, ts, &via, false);
			stat_add(p, c, TM_STAT_UNDEFERRABLE, 1);
			fail_stat = why_stat(why);
			ok = false;
		}
	}
	uint32_t n = hdr->n;
	for (uint32_t i = 0; i < n && !p->error; i++) {
		if (!tm_opiter_next(it, &op))
			break;
		if (ok) {
			run_op(p, fs, &op, true, ts);
		} else if (final && (op.kind == TM_OP_PUSH || op.kind == TM_OP_CONVERT)) {
			drop(p, fs, c, fail_stat, hdr->ts, op.detail);
		}
	}
}

/* ------------------------------------------------------------------ */
/* runs: the fast path                                                 */
/* ------------------------------------------------------------------ */

/* Account the pushes of run elements [j, e) at value + off (sorted); vj, ve:
 * the values of elements j and e - 1. */
static void
bulk_push(struct tm_replay *p, struct fstate *fs, const struct tm_tracker *c, const struct tm_run *r, uint32_t j,
	  uint32_t e, int64_t vj, int64_t ve, int64_t off, bool te, int64_t thr)
{
	if (j >= e)
		return;
	struct tm_file_acc *a = &p->acc[fs->file];
	a->events += e - j;
	note_all(a, vj + off, ve + off);
	/* first index with v + off >= 0, i.e. v >= -off; v + INT64_MIN < 0 always */
	int64_t nb[2];
	uint32_t k = off == INT64_MIN ? e : vj + off >= 0 ? j : tm_run_lower_bound(r, j, e, -off, false, nb);
	if (k > j) {
		stat_add(p, c, te ? TM_STAT_TE_INVALID_TS : TM_STAT_NEG_DROPPED, k - j);
		missing_add(a, te ? TM_STAT_TE_INVALID_TS : TM_STAT_NEG_DROPPED, k - j);
	}
	int64_t vk = k == j ? vj : nb[1]; /* element k's value, when k < e */
	if (k < e && vk + off < thr) {
		/* then up to the first with v + off >= thr (place): below
		 * tracing_started_ns; none when thr - off is past every value */
		int64_t x, nb2[2];
		uint32_t k2 = __builtin_sub_overflow(thr, off, &x) ? e
			      : tm_run_lower_bound(r, k, e, x, false, nb2);
		stat_add(p, c, TM_STAT_FTRACE_BEFORE_START, k2 - k);
		missing_add(a, TM_STAT_FTRACE_BEFORE_START, k2 - k);
		k = k2;
		if (k < e)
			vk = nb2[1]; /* k2 > k: element k is below thr */
	}
	if (k < e) {
		int64_t first = vk + off, last = ve + off;
		if (!a->has_ts || first < a->first_ts)
			a->first_ts = first;
		if (!a->has_ts || last > a->last_ts)
			a->last_ts = last;
		a->has_ts = true;
	}
}

/* One element of a run, converted on its own (fallback). */
static void
run_elem_plain(struct tm_replay *p, struct fstate *fs, struct tm_tracker *c, struct tm_clockid clk, int64_t ts,
	       bool is_packet, bool te, int64_t thr, bool final, const struct tm_oppos *pos)
{
	int64_t v;
	enum tm_conv_result why;
	if (to_trace_time(p, c, clk, ts, is_packet && !final, &v, &why)) {
		place(p, fs, c, v, 0, te, thr);
		return;
	}
	if (is_packet && !final) {
		int64_t sh;
		(void)defer_packet(p, fs, c, clk, ts, pos, &sh);
		return;
	}
	if (is_packet)
		stat_add(p, c, TM_STAT_UNDEFERRABLE, 1);
	p->acc[fs->file].events++;
	missing_add(&p->acc[fs->file], why_stat(why), 1);
	record_event(p, fs->file, 0, ts, c->row, (int)why_stat(why));
}

static bool
add_fits(int64_t a, int64_t b)
{
	int64_t r;
	return !__builtin_add_overflow(a, b, &r);
}

static int64_t *
run_values(struct tm_replay *p, const struct tm_run *r)
{
	XGROW(p->vals, p->cap_vals, (size_t)r->n + 1);
	tm_run_decode(r, p->vals);
	return p->vals;
}

/* A RUN op (raw): every element converted as the plain replay would, in
 * bulk.  The path does not depend on the value, so the first conversion
 * decides the fate of all; placement follows the pieces of the path's
 * snapshot floors, and each piece is counted by binary search over the
 * run's sorted values.  No value is decoded except at piece boundaries:
 * the pieces start at element 0, whose conversion is the first piece's
 * (tm_graph_pieces computes as tm_graph_convert does), so a run inside one
 * piece needs only its first and last values, which the log holds in
 * memory also when the run's deltas are spilled (a re-evaluation then reads
 * no spilled run back). */
static void
run_run(struct tm_replay *p, struct fstate *fs, const struct tm_op *op, bool final, const struct tm_oppos *pos)
{
	struct tm_tracker *c = reader_ctx(p, fs, op->machine);
	bool is_packet = op->flags & TM_RUN_PACKET;
	bool te = is_packet && (op->push_flags & TM_PUSH_TRACK_EVENT);
	/* failures recorded: one per element, or one per folded compact_sched
	 * array (its first failure abandons the rest of it) */
	uint32_t n_fail = op->flags & TM_RUN_ARRAY ? op->n_arrays : op->run.n;
	const struct tm_run *r = &op->run;
	uint32_t n = r->n;
	/* ftrace events (an ARRAY run is compact_sched): dropped below thr */
	bool ft = (op->flags & TM_RUN_ARRAY) || (!is_packet && (op->push_flags & TM_CONV_FTRACE));
	int64_t thr = ft ? started_ns(p, c) : 0;
	struct tm_clockid clk;
	if (!resolve_clock(fs, c, op->clock, 0, &clk)) {
		/* no clock: raw values */
		bulk_push(p, fs, c, r, 0, n, tm_run_at(r, 0), r->last, 0, te, thr);
		return;
	}
	if (tm_clock_is_seq(clk.clock)) {
		const int64_t *v = run_values(p, r);
		for (uint32_t i = 0; i < n; i++) {
			struct tm_oppos ep = *pos;
			ep.run_i = i;
			run_elem_plain(p, fs, c, clk, v[i], is_packet, te, thr, final, &ep);
		}
		return;
	}
	int64_t r0 = tm_run_at(r, 0), v0;
	enum tm_conv_result why;
	if (!to_trace_time(p, c, clk, r0, is_packet && !final, &v0, &why)) {
		if (is_packet && !final) {
			/* a global clock: never incremental (clockgraph.c refuses
			 * it), so no shadow to step */
			defer_at(fs, pos);
			return;
		}
		stat_add(p, c, why_stat(why), n_fail - 1);
		if (is_packet)
			stat_add(p, c, TM_STAT_UNDEFERRABLE, n);
		p->acc[fs->file].events += n;
		missing_add(&p->acc[fs->file], why_stat(why), n);
		if (p->src->keep_events) {
			const int64_t *v = run_values(p, r);
			for (uint32_t i = 0; i < n; i++)
				record_event(p, fs->file, 0, v[i], c->row, (int)why_stat(why));
		}
		return;
	}
	if (n == 1) {
		place(p, fs, c, v0, 0, te, thr);
		return;
	}
	struct tm_clockid q = tm_clockid_qualify(clk, c->row, tm_ctx_tag(p, c));
	if (!tm_graph_pieces(p->g, q, p->tt, r0, r->last, &p->pieces, &p->n_pieces, &p->cap_pieces)) {
		place(p, fs, c, v0, 0, te, thr);
		const int64_t *v = run_values(p, r);
		for (uint32_t i = 1; i < n; i++) {
			int64_t x;
			enum tm_conv_result res = tm_graph_convert(p->g, q, v[i], p->tt, false, &x);
			if (res == TM_CONV_OK) {
				place(p, fs, c, x, 0, te, thr);
			} else { /* cannot happen: the path exists */
				p->acc[fs->file].events++;
				missing_add(&p->acc[fs->file], why_stat(res), 1);
			}
		}
		return;
	}
	uint32_t j = 0;
	int64_t vj = r0; /* element j's value */
	const struct tm_piece *p0 = p->pieces;
	if (!p->n_pieces || p0->a > r0 || p0->b < r0 || !add_fits(r0, p0->off) || r0 + p0->off != v0) {
		place(p, fs, c, v0, 0, te, thr); /* not the first piece's: cannot happen */
		j = 1;
		vj = tm_run_at(r, 1);
	}
	/* a piece boundary inside the run: the search decodes the one block
	 * it falls in, and gives the values on both sides */
	for (size_t k = 0; k < p->n_pieces && j < n; k++) {
		const struct tm_piece *pc = &p->pieces[k];
		int64_t nb[2];
		uint32_t e = tm_run_lower_bound(r, j, n, pc->b, true, nb);
		if (e <= j)
			continue;
		int64_t ve = e == n ? r->last : nb[0];
		if (add_fits(vj, pc->off) && add_fits(ve, pc->off)) {
			bulk_push(p, fs, c, r, j, e, vj, ve, pc->off, te, thr);
		} else {
			for (uint32_t i = j; i < e; i++)
				place(p, fs, c, wrap_add(tm_run_at(r, i), pc->off), 0, te, thr);
		}
		j = e;
		if (e < n)
			vj = nb[1];
	}
}

static void
replay_ops(struct tm_replay *p, struct fstate *fs)
{
	struct tm_opiter it;
	tm_opiter_init(&it, tm_scan_log(fs->sc, p->src->keep_events));
	it.raw_runs = !p->src->plain_replay;
	struct tm_op op;
	struct tm_oppos pos;
	volatile bool *cancel = p->src->cancel;
	for (uint32_t n = 0;; n++) {
		tm_opiter_tell(&it, &pos);
		if (cancel && !(n & 4095) && __atomic_load_n(cancel, __ATOMIC_RELAXED)) {
			/* stops every loop of the replay, as a failure does */
			*p->src->cancelled = true;
			if (!p->error)
				p->error = xstrdup("cancelled");
		}
		if (p->error || !tm_opiter_next(&it, &op))
			break;
		if (op.kind == TM_OP_PACKET) {
			struct tm_op hdr = op;
			run_packet(p, fs, &it, &hdr, false, &pos);
		} else if (op.kind == TM_OP_RUN) {
			run_run(p, fs, &op, false, &pos);
		} else {
			run_op(p, fs, &op, false, 0);
		}
	}
	/* EOF: deferred packets, errors recorded, names of then */
	p->at_eof = true;
	for (size_t i = 0; i < fs->n_defers && !p->error; i++) {
		tm_opiter_seek(&it, &fs->defers[i]);
		if (!tm_opiter_next(&it, &op))
			break;
		struct tm_op hdr = op;
		if (op.kind == TM_OP_RUN)
			run_run(p, fs, &hdr, true, &fs->defers[i]);
		else
			run_packet(p, fs, &it, &hdr, true, &fs->defers[i]);
	}
	p->at_eof = false;
	tm_opiter_fini(&it);
}

static void
process_trace(struct tm_replay *p, size_t mi)
{
	const struct tm_member *mb = &p->src->in->members[mi];
	struct fstate fs;
	memset(&fs, 0, sizeof fs);
	fs.file = mi;
	fs.tid = mb->trace_file_id;
	fs.sc = p->src->scans ? p->src->scans[mi] : NULL;
	fs.probe = p->src->probes ? p->src->probes[mi] : NULL;
	const struct tm_manifest_file *e = NULL;
	size_t ei = 0;
	size_t plen;
	const char *path = mpath(p, mb, &plen);
	if (p->m && path)
		e = tm_manifest_entry_by_path(p->m, path, plen, &ei);
	fs.es = e ? &p->entries[ei] : NULL;
	uint64_t base_raw = fs.es && fs.es->has_machine_id ? fs.es->machine_id : 0;
	fs.host = fork_ctx(p, mi, base_raw);
	fs.host_raw = base_raw;
	fs.has_clock_override = e && e->has_clocks && !e->clocks.clock;
	fs.has_machine_override = fs.es && fs.es->has_machine_id && !e->has_machines;
	fs.host->is_pin = fs.has_clock_override;
	p->acc[mi].is_trace = true;
	/* the format's clock (the format table's clock policy) */
	const struct tm_format_row *fr = tm_format_row(mb->format);
	struct tm_clockid tc = {0, 0, 0, 0};
	switch (fr->clock_kind) {
	case TM_FC_FIXED:
	case TM_FC_SNAPSHOTS:
		tc.clock = fr->clock;
		break;
	case TM_FC_FILE:
		tc = (struct tm_clockid){TM_CLOCK_TRACE_FILE, 0, fs.tid, 0};
		break;
	case TM_FC_NONE:
		break;
	}
	if (fr->clock_kind != TM_FC_NONE) {
		if (fr->clock_kind != TM_FC_SNAPSHOTS) {
			fs.host->has_default = true;
			fs.host->default_clock = tc;
			ctx_set_global_clock(p, fs.host, tc);
		}
		fs.host->has_pending = true;
		/* tc is a global clock, TRACE_FILE's tf the host's trace_file id
		 * (tm_ctx_pending derives it) */
		fs.host->pending_clock = tc.clock;
	}
	p->acc[mi].is_predicted = (tm_format_is_predicted(mb->format) && fs.sc && !fs.sc->unpredicted) ||
				  (!tm_format_has_timeline(mb->format) && mb->format != TM_FMT_ARROW);
	if (fs.sc)
		replay_ops(p, &fs);
	free(fs.readers);
	tm_u64map_fini(&fs.reader_ix);
	tm_u64map_fini(&fs.raw_ix);
	free(fs.defers);
}

/* A ZIP read as an Android bugreport (bugreport.c): AndroidBugreportReader
 * forks a context on machine 0 and claims REALTIME in its constructor
 * (android_bugreport_reader.cc); its dumpstate and logcat files are not
 * predicted by tracemerge, its other members are never imported. */
static void
process_bugreport(struct tm_replay *p, size_t z)
{
	if (p->bug[z] == TM_BUG_ABORT) {
		/* not an error trace_processor reports: the process dies */
		if (!p->error)
			p->error = xstrdup("trace_processor aborts: terminate called after throwing an "
					   "instance of 'std::out_of_range' (a member named "
					   "bugreport-*.txt shorter than 23 bytes, where the bugreport "
					   "reader looks for a year: android_bugreport_reader.cc, "
					   "ExtractYearFromBugReportFilename)");
		return;
	}
	if (p->acc[z].is_trace)
		return;
	p->acc[z].is_trace = true;
	struct tm_tracker *c = fork_ctx(p, z, 0);
	ctx_set_global_clock(p, c, (struct tm_clockid){TM_CLOCK_REALTIME, 0, 0, 0});
	if (p->bugreport < 0)
		p->bugreport = (long)z;
}

static void
process_manifest(struct tm_replay *p, size_t mi)
{
	const struct tm_member *mb = &p->src->in->members[mi];
	if (p->any_forked) {
		mfail(p, "perfetto_manifest file must be the first trace file in the input");
		return;
	}
	if (p->manifest_seen) {
		mfail(p, "multiple perfetto_manifest files in archive");
		return;
	}
	p->manifest_seen = true;
	const struct tm_manifest *m = p->m;
	if (!m) {
		/* evaluating the input's own manifest */
		const struct tm_manifest_slot *sl = p->src->manifests[mi];
		if (!sl->is_ok && sl->apply_stage) {
			/* ApplyManifest's checks entry by entry, with the
			 * archive: an earlier entry's file it lacks fails first
			 * (find_trace_file_id), else the same error, with its hint */
			if (sl->err.hint[0])
				p->hint = xstrdup(sl->err.hint);
			p->m = &sl->m;
			p->entries = xcalloc(sl->m.n_files + 1, sizeof *p->entries);
			apply_manifest(p, mb->trace_file_id);
			return;
		}
		if (!sl->is_ok) {
			mfail(p, "%s", sl->err.msg);
			if (sl->err.hint[0])
				p->hint = xstrdup(sl->err.hint);
			return;
		}
		m = &sl->m;
	}
	p->m = m;
	p->entries = xcalloc(m->n_files + 1, sizeof *p->entries);
	apply_manifest(p, mb->trace_file_id);
}

/* An Arrow table export (plugins/trace_export/perfetto_export_reader.cc):
 * it forks no context, so a manifest override on it fails as on a
 * container (forwarding_trace_parser.cc, ForwardingTraceParser::Init); then
 * PerfettoExportTableReader::OnPushDataToSorter fails unless some manifest
 * entry declares an __exported_table_schema.  Whether a declared table
 * restores (its columns against this build's tables, its Arrow bytes, its
 * row count) tracemerge does not check: the member stays "not predicted". */
static void check_container_override(struct tm_replay *p, const struct tm_member *mb);
static void
process_arrow(struct tm_replay *p, size_t mi)
{
	const struct tm_member *mb = &p->src->in->members[mi];
	p->acc[mi].is_trace = true;
	check_container_override(p, mb);
	if (p->error)
		return;
	bool any = false;
	for (size_t i = 0; p->m && i < p->m->n_files && !any; i++)
		any = tm_manifest_file_is_table(&p->m->files[i]);
	if (!any)
		fail(p, "Arrow files can only be loaded from a Perfetto export whose "
			"perfetto_manifest declares each member's __exported_table_schema");
}

static void
check_container_override(struct tm_replay *p, const struct tm_member *mb)
{
	if (!p->m || !mb->name)
		return;
	size_t ei;
	const struct tm_manifest_file *e = tm_manifest_entry_by_path(p->m, mb->name, mb->name_len, &ei);
	if (e && (e->has_clocks || p->entries[ei].has_machine_id))
		mfail(p, "perfetto_manifest: overrides are not supported for trace files which are "
			"themselves archives or perfetto_manifest files: %s",
		     mb->name);
}

/* One pass of the import.  preset (n_preset): tracing_started_ns of each
 * context, final, from an earlier pass; NULL: as the service events set
 * them.  Without preset, when one was set after ftrace events of its
 * context were placed (a service event after the ftrace data of its
 * context in the file), nothing is reported: *again gets the final values
 * and the pass returns false (tm_replay runs again with them). */
static bool
replay_pass(const struct tm_replay_src *src, const struct tm_manifest *m, struct tm_report *r,
	    const struct tm_started *preset, size_t n_preset, struct tm_started **again, size_t *n_again)
{
	struct tm_replay p;
	memset(&p, 0, sizeof p);
	p.src = src;
	p.bugreport = -1;
	tm_bugreport_scan(&p);
	p.r = r;
	p.g = tm_graph_new();
	p.tt = (struct tm_clockid){TM_CLOCK_TRACE_FILE, 0, 0, 0};
	p.tt_owner = NO_OWNER;
	if (preset) {
		p.started_preset = true;
		p.started = xmalloc((n_preset + 1) * sizeof *p.started);
		p.cap_started = n_preset + 1;
		for (size_t i = 0; i < n_preset; i++) {
			p.started[p.n_started] = preset[i];
			tm_u64map_set(&p.started_map, (uint64_t)preset[i].file << 32 | preset[i].row, p.n_started++);
		}
	}
	size_t nm = src->in->n_members;
	p.acc = xcalloc(nm + 1, sizeof *p.acc);
	if (src->keep_events && src->pool)
		p.evs = tm_evpool_take(src->pool, &p.cap_evs);
	if (src->keep_events && !src->dropped_only) {
		/* every event with a detail is listed once: room for all at
		 * once (a fresh buffer's pages are touched as the list is
		 * written, the rest of the reserve never) */
		size_t n = 1;
		for (size_t i = 0; i < nm; i++)
			if (src->scans[i])
				n += src->scans[i]->log.x->n_details;
		if (p.cap_evs < n) /* a pooled mapping grows where it is, its pages kept */
			tm_big_resize((void **)&p.evs, &p.cap_evs, n, sizeof *p.evs, TM_STAGE_MIN);
	}
	/* The scans are done (and the events list above could take one): the
	 * huge pages parked for their buffers (util.c big_reserve) would stay
	 * resident through the replay's peak, 2 MiB each (the 10,000-member
	 * TAR's peak is in the clock graph here and in tm_report_build). */
	tm_big_drop_parked();
	const struct tm_manifest *override = m;
	bool virtual_manifest = override && src->first_manifest == SIZE_MAX;
	if (virtual_manifest) {
		/* The manifest is written first into the TAR we would produce. */
		p.manifest_seen = true;
		p.is_virtual = true;
		p.m = override;
		p.entries = xcalloc(override->n_files + 1, sizeof *p.entries);
		apply_manifest(&p, VIRTUAL_MANIFEST_TID);
	}
	const struct tm_input *in = src->in;
	for (size_t k = 0; k < in->n_proc && !p.error; k++) {
		if (in->fatal && k == in->fatal_after) {
			if (in->fatal_where && !p.error)
				p.error_where = xstrdup(in->fatal_where);
			fail(&p, "%s", in->fatal);
			break;
		}
		size_t mi = in->proc[k];
		const struct tm_member *mb = &in->members[mi];
		long bz = tm_bugreport_of(&p, mi);
		if (bz >= 0) {
			process_bugreport(&p, (size_t)bz);
			continue;
		}
		if (mb->format == TM_FMT_MANIFEST) {
			check_container_override(&p, mb);
			if (!p.error) {
				if (override && p.manifest_seen && p.m == override && mi != src->first_manifest)
					mfail(&p, "multiple perfetto_manifest files in archive");
				else if (override && mi == src->first_manifest) {
					p.manifest_seen = false;
					if (p.any_forked)
						mfail(&p, "perfetto_manifest file must be the first trace "
							 "file in the input");
					else {
						p.manifest_seen = true;
						p.m = override;
						p.entries = xcalloc(override->n_files + 1, sizeof *p.entries);
						apply_manifest(&p, mb->trace_file_id);
					}
				} else
					process_manifest(&p, mi);
			}
			continue;
		}
		if (tm_format_is_container(mb->format)) {
			check_container_override(&p, mb);
			continue;
		}
		if (mb->format == TM_FMT_UNKNOWN) {
			/* ours: which member, and its first bytes are where the
			 * sniffers gave up (trace_processor names none) */
			struct tm_buf w;
			tm_buf_init(&w);
			tm_member_label(in, mi, &w);
			tm_buf_adds(&w, ", byte 0 (no format recognised)");
			p.error_where = tm_buf_steal(&w);
			fail(&p, "Unknown trace type provided (ERR:fmt)");
			break;
		}
		if (mb->format == TM_FMT_NINJA_LOG && mb->parent >= 0) {
			fail(&p, "Ninja traces currently do not support being contained inside other "
				 "trace formats. Please file a bug at "
				 "https://github.com/google/perfetto/issues if this is important to you.");
			break;
		}
		if (mb->format == TM_FMT_ARROW) {
			process_arrow(&p, mi);
			continue;
		}
		process_trace(&p, mi);
	}
	if (!p.error && in->fatal && in->fatal_after >= in->n_proc) {
		if (in->fatal_where)
			p.error_where = xstrdup(in->fatal_where);
		fail(&p, "%s", in->fatal);
	}
	bool rerun = !preset && p.started_again && !(src->cancelled && *src->cancelled);
	if (rerun) {
		tm_graph_free(p.g);
		p.g = NULL;
		free(p.error);
		free(p.error_where);
		free(p.hint);
		*again = p.started;
		*n_again = p.n_started;
		p.started = NULL;
		goto cleanup;
	}
	/* owner file */
	r->tt_file = -1;
	if (p.tt_owner != NO_OWNER)
		for (size_t i = 0; i < nm; i++)
			if (in->members[i].trace_file_id == (uint32_t)p.tt_owner &&
			    !in->members[i].is_hidden) {
				r->tt_file = (int)i;
				break;
			}
	slice_tracks(&p);
	/* the report reads no clock: the graph (a few nodes and series per
	 * member) goes before the report's rows are made */
	tm_graph_free(p.g);
	p.g = NULL;
	tm_report_build(&p);
cleanup:
	for (size_t i = 0; i < p.n_trk_blocks; i++)
		free(p.trk_blocks[i]);
	free(p.trk_blocks);
	for (size_t i = 0; i < p.n_rows; i++)
		free(p.rows[i].name);
	free(p.rows);
	tm_u64map_fini(&p.rr);
	tm_u64map_fini(&p.mc);
	tm_u64map_fini(&p.file_rows);
	if (p.entries && p.m)
		for (size_t i = 0; i < p.m->n_files; i++) {
			free(p.entries[i].remap_id);
			free(p.entries[i].remap_raw);
			tm_u64map_fini(&p.entries[i].remap_ix);
		}
	free(p.entries);
	free(p.bug);
	for (size_t i = 0; i < nm; i++) {
		free(p.acc[i].rows);
		free(p.acc[i].stat_v);
	}
	free(p.acc);
	if (p.evs && src->pool) /* not handed to the report (cancelled) */
		tm_evpool_give(src->pool, p.evs, p.cap_evs);
	else
		tm_events_free(p.evs, p.cap_evs);
	tm_tracktab_fini(&p.tracks);
	free(p.ev_track);
	free(p.ev_queue);
	free(p.ev_cat);
	free(p.pieces);
	free(p.row_drops);
	free(p.vals);
	free(p.started);
	tm_u64map_fini(&p.started_map);
	return !rerun;
}

void
tm_replay(const struct tm_replay_src *src, const struct tm_manifest *m, struct tm_report *r)
{
	struct tm_started *fin = NULL;
	size_t n_fin = 0;
	if (replay_pass(src, m, r, NULL, 0, &fin, &n_fin))
		return;
	/* a second pass places every ftrace event against the final values;
	 * an estimate's probes are read again from the start */
	for (size_t i = 0; src->probes && i < src->in->n_members; i++)
		if (src->probes[i])
			memset(src->probes[i]->st, TM_PROBE_UNSEEN, src->probes[i]->n);
	(void)replay_pass(src, m, r, fin, n_fin, NULL, NULL);
	free(fin);
}

/* SPDX-License-Identifier: MIT */
/*
 * Reports: what a finished import replay (replay.c) found, as a tm_report:
 * per-file figures and placement sentences (ours), the stat totals, the
 * machine table, metadata, trace time and why, the per-event list; and the
 * one-line verdict the front ends print.
 */
#include "replay_state.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	bool is_drop;
} stat_info[] = {
#define TM_X_(id, name, is_drop) {name, is_drop},
	TM_STAT_LIST(TM_X_)
#undef TM_X_
};

const char *
tm_stat_name(enum tm_stat_id id)
{
	return (unsigned)id < TM_STAT__COUNT ? stat_info[id].name : "unknown_stat";
}

bool
tm_stat_is_drop(enum tm_stat_id id)
{
	return (unsigned)id < TM_STAT__COUNT && stat_info[id].is_drop;
}

/* The one list of the stats an event is lost under (tracemerge.h): the
 * clock conversion's three failures (clock_tracker.cc's failure hook: the
 * event is not pushed), the sorter's negative drop (trace_sorter.h
 * PushTracePacket and friends) and a TrackEvent whose timestamp is negative
 * (track_event_tokenizer.cc), an ftrace event before tracing started
 * (ftrace_parser.cc ParseFtraceEvent).  Not undeferrable_packet_loss, counted beside
 * a failure for the same packet, nor unrelatable, once per tracker. */
bool
tm_stat_loses_events(enum tm_stat_id id)
{
	switch (id) {
	case TM_STAT_NO_PATH:
	case TM_STAT_NEG_DROPPED:
	case TM_STAT_UNKNOWN_SOURCE:
	case TM_STAT_UNKNOWN_TARGET:
	case TM_STAT_TE_INVALID_TS:
	case TM_STAT_FTRACE_BEFORE_START:
		return true;
	default:
		return false;
	}
}

/* ftrace_parser.cc ParseFtraceEvent and ParseInlineSchedSwitch/Waking drop
 * ftrace data older than the context's tracing_started_ns whatever else the
 * archive holds (Config::drop_ftrace_data_before defaults to
 * kTracingStarted): a fresh recording has it, and no offset or clock
 * relation of a manifest changes it. */
bool
tm_stat_is_recording_loss(enum tm_stat_id id)
{
	return id == TM_STAT_FTRACE_BEFORE_START;
}

static uint64_t
recording_losses(const struct tm_stat *st, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		if (tm_stat_is_recording_loss(st[i].id))
			v += st[i].value;
	return v;
}

uint64_t
tm_stat_value(const struct tm_stat *stats, size_t n_stats, enum tm_stat_id id)
{
	for (size_t i = 0; i < n_stats; i++)
		if (stats[i].id == id)
			return stats[i].value;
	return 0;
}

static struct tm_stat
stat_of(int st, uint64_t value)
{
	return (struct tm_stat){(enum tm_stat_id)st, tm_stat_name((enum tm_stat_id)st), value};
}

static int
cmp_stat(const void *a, const void *b)
{
	return strcmp(((const struct tm_stat *)a)->name, ((const struct tm_stat *)b)->name);
}

static void
add_meta_int(struct tm_report *r, const char *key, int64_t v)
{
	r->meta = xrealloc(r->meta, (r->n_meta + 1) * sizeof *r->meta);
	r->meta[r->n_meta++] = (struct tm_meta){xstrdup(key), true, v, NULL};
}

static void
add_meta_str(struct tm_report *r, const char *key, const char *v)
{
	r->meta = xrealloc(r->meta, (r->n_meta + 1) * sizeof *r->meta);
	r->meta[r->n_meta++] = (struct tm_meta){xstrdup(key), false, 0, xstrdup(v)};
}

struct tm_evpool {
	pthread_mutex_t mu;
	size_t refs;
	struct tm_report_event *spare;
	size_t cap;
};

struct tm_evpool *
tm_evpool_new(void)
{
	struct tm_evpool *pl = xcalloc(1, sizeof *pl);
	pthread_mutex_init(&pl->mu, NULL);
	pl->refs = 1;
	return pl;
}

struct tm_evpool *
tm_evpool_ref(struct tm_evpool *pl)
{
	pthread_mutex_lock(&pl->mu);
	pl->refs++;
	pthread_mutex_unlock(&pl->mu);
	return pl;
}

void
tm_evpool_unref(struct tm_evpool *pl)
{
	if (!pl)
		return;
	pthread_mutex_lock(&pl->mu);
	bool last = --pl->refs == 0;
	pthread_mutex_unlock(&pl->mu);
	if (!last)
		return;
	pthread_mutex_destroy(&pl->mu);
	tm_events_free(pl->spare, pl->cap);
	free(pl);
}

struct tm_report_event *
tm_evpool_take(struct tm_evpool *pl, size_t *cap)
{
	pthread_mutex_lock(&pl->mu);
	struct tm_report_event *v = pl->spare;
	*cap = pl->cap;
	pl->spare = NULL;
	pl->cap = 0;
	pthread_mutex_unlock(&pl->mu);
	return v;
}

void
tm_evpool_give(struct tm_evpool *pl, struct tm_report_event *v, size_t cap)
{
	pthread_mutex_lock(&pl->mu);
	if (!pl->spare || pl->cap < cap) {
		struct tm_report_event *old = pl->spare;
		size_t old_cap = pl->cap;
		pl->spare = v;
		pl->cap = cap;
		v = old;
		cap = old_cap;
	}
	pthread_mutex_unlock(&pl->mu);
	tm_events_free(v, cap);
}

void
tm_events_free(struct tm_report_event *v, size_t cap)
{
	if (v) /* grown by BIG_XGROW (replay_slices.c tm_rp_record_event): its own free */
		BIG_FREE(v, cap);
}

static const char *
row_label(struct tm_replay *p, uint32_t row, char *buf, size_t cap)
{
	if (row < p->n_rows && p->rows[row].name)
		snprintf(buf, cap, "machine %u \"%.80s\"", row, p->rows[row].name);
	else
		snprintf(buf, cap, "machine %u", row);
	return buf;
}

/* Ours: how a trace file is placed and why, from the bridges its trackers
 * took, its manifest entry and the stats it got.  Drop reasons first: they
 * matter most when the line is cut. */
/* The trackers of each file, in creation order: the trackers of file f are
 * tm_ctx(p, by[start[f]]) .. tm_ctx(p, by[start[f + 1] - 1]) (a counting sort,
 * so a report over many files does not scan every tracker per file). */
struct by_file {
	size_t *start, *by;
};

static void
index_trackers(const struct tm_replay *p, size_t nm, struct by_file *ix)
{
	ix->start = xcalloc(nm + 2, sizeof *ix->start);
	ix->by = xcalloc(p->n_ctxs + 1, sizeof *ix->by);
	for (size_t i = 0; i < p->n_ctxs; i++)
		if (tm_ctx(p, i)->file < nm)
			ix->start[tm_ctx(p, i)->file + 2]++;
	for (size_t f = 2; f < nm + 2; f++)
		ix->start[f] += ix->start[f - 1];
	for (size_t i = 0; i < p->n_ctxs; i++)
		if (tm_ctx(p, i)->file < nm)
			ix->by[ix->start[tm_ctx(p, i)->file + 1]++] = i;
}

static void
placement(struct tm_replay *p, size_t file, const struct by_file *ix, struct tm_buf *b)
{
	const struct tm_file_acc *a = &p->acc[file];
	const struct tm_member *mb = &p->src->in->members[file];
	char m1[128], m2[128];
	const char *sep = "";
#define SEP() (tm_buf_adds(b, sep), sep = "; ")
	if (tm_acc_stat(a, TM_STAT_NEG_DROPPED)) {
		SEP();
		tm_buf_addf(b, "%" PRIu64 " events land before the timeline's zero and are dropped",
			    tm_acc_stat(a, TM_STAT_NEG_DROPPED));
	}
	for (size_t k = ix->start[file]; k < ix->start[file + 1]; k++) {
		const struct tm_tracker *c = tm_ctx(p, ix->by[k]);
		if (c->bridge != BR_DECLINED)
			continue;
		SEP();
		tm_buf_addf(b, "%s on %s cannot be related to the timeline (%s on %s): no snapshot "
			       "path, no REALTIME on both machines, another clock domain; relate it "
			       "with a clocks entry",
			    tm_clock_name(tm_tracker_bridged_from(p, c).clock),
			    row_label(p, c->row, m1, sizeof m1),
			    tm_clock_name(p->tt.clock), row_label(p, p->tt.machine, m2, sizeof m2));
	}
	if (tm_acc_stat(a, TM_STAT_NO_PATH)) {
		SEP();
		tm_buf_addf(b, "%" PRIu64 " conversions find no path to the timeline (dropped)",
			    tm_acc_stat(a, TM_STAT_NO_PATH));
	}
	const struct tm_manifest_file *e = NULL;
	if (p->m && mb->name)
		e = tm_manifest_entry_by_path(p->m, mb->name, mb->name_len, NULL);
	bool shown = false;
	for (size_t k = ix->start[file]; k < ix->start[file + 1]; k++) {
		const struct tm_tracker *c = tm_ctx(p, ix->by[k]);
		if (c->bridge == BR_DECLINED)
			continue;
		const char *how = NULL;
		switch (c->bridge) {
		case BR_NONE:
		case BR_DECLINED:
			break;
		case BR_PATH:
			if (p->tt_owner != NO_OWNER && tm_ctx_trace_id(p, c) == (uint32_t)p->tt_owner &&
			    c->row == p->tt.machine)
				how = tm_clockid_eq(tm_tracker_bridged_from(p, c), p->tt)
					      ? "owns the timeline: its events keep their own timestamps"
					      : "owns the timeline (its clock snapshots chose the clock)";
			else if (e && e->has_clocks)
				how = e->clocks.clock ? "placed by its clocks entry (relates its clock to "
							"the reference)"
						      : "pinned by its clocks entry to the reference";
			else
				how = "placed through a clock path (its own or other files' snapshots)";
			break;
		case BR_REALTIME:
			how = "aligned by REALTIME: its machine and the timeline's are assumed to share "
			      "wall-clock time";
			break;
		case BR_ASSUMED:
			/* the bridge joined the reader's registered clock; a clocks
			 * entry relating another clock (an SDK's MONOTONIC) is what
			 * places the events on it */
			if (e && e->has_clocks && e->clocks.clock &&
			    e->clocks.clock != tm_tracker_bridged_from(p, c).clock)
				how = "placed by its clocks entry (relates its clock to the reference)";
			else
				how = tm_tracker_bridged_from(p, c).clock == TM_CLOCK_TRACE_FILE
					      ? "clockless: assumed to start with the timeline (offset 0)"
					      : "assumed aligned: same clock domain as the timeline, offset 0";
			break;
		}
		if (!how)
			continue;
		SEP();
		if (a->n_rows > 1)
			tm_buf_addf(b, "%s: ", row_label(p, c->row, m1, sizeof m1));
		tm_buf_adds(b, how);
		shown = true;
	}
	if (!shown && !*sep) {
		SEP();
		tm_buf_adds(b, "its timestamps are used as they are (no clock to convert from)");
	}
	if (e && e->has_clocks && !e->clocks.clock && !tm_format_follows_pin(mb->format)) {
		SEP();
		tm_buf_addf(b, "its pin (a clocks entry without clock) does not move a %s file: only "
			       "clockless formats follow a pin",
			    tm_format_name(mb->format));
	}
	if (tm_acc_stat(a, TM_STAT_UNKNOWN_SOURCE)) {
		SEP();
		tm_buf_addf(b, "%" PRIu64 " events use a clock no snapshot mentions and are lost (not "
			       "in the dropped count)",
			    tm_acc_stat(a, TM_STAT_UNKNOWN_SOURCE));
	}
	if (tm_acc_stat(a, TM_STAT_TE_INVALID_TS)) {
		SEP();
		tm_buf_addf(b, "%" PRIu64 " TrackEvents land before zero and are lost "
			       "(track_event_invalid_timestamp, not in the dropped count)",
			    tm_acc_stat(a, TM_STAT_TE_INVALID_TS));
	}
#undef SEP
}

/* f's placement sentence (b), machine rows (a's) and clocks (sc's
 * clocks_seen) in one block of their exact size, f->placement at its start
 * (tm_report_free frees that one): a report row per member, 10,000s in an
 * archive, where three blocks (two of the smallest size, 32 bytes, and the
 * sentence's doubled buffer) took ~208 bytes a file and this one ~96. */
static void
file_block(struct tm_report_file *f, const struct tm_file_acc *a, const struct tm_scan *sc,
	   const struct tm_buf *b)
{
	size_t nc = sc ? (size_t)__builtin_popcountll(sc->clocks_seen[0]) +
				 (size_t)__builtin_popcountll(sc->clocks_seen[1])
		       : 0;
	size_t text = (b->len + 1 + sizeof(uint32_t) - 1) / sizeof(uint32_t) * sizeof(uint32_t);
	char *blk = xmalloc(text + (a->n_rows + nc) * sizeof(uint32_t));
	if (b->len)
		memcpy(blk, b->data, b->len);
	blk[b->len] = '\0';
	f->placement = blk;
	uint32_t *u = (uint32_t *)(void *)(blk + text);
	f->n_machines = a->n_rows;
	if (a->n_rows) {
		f->machines = memcpy(u, tm_acc_rows(a), a->n_rows * sizeof *u);
		u += a->n_rows;
	}
	if (nc) {
		f->clocks = u;
		for (uint32_t c = 0; c < 128; c++)
			if (sc->clocks_seen[c / 64] >> (c % 64) & 1)
				f->clocks[f->n_clocks++] = c;
	}
}

/* A length as a duration without its sign ("75 ms"). */
static void
span_text(int64_t ns, struct tm_buf *b)
{
	struct tm_buf t;
	tm_buf_init(&t);
	tm_format_duration_ns(ns, &t);
	tm_buf_adds(b, t.data[0] == '+' ? t.data + 1 : t.data);
	tm_buf_fini(&t);
}

/* Whether the trace files' kept ranges overlap (struct tm_overlap): the
 * latest start against the earliest end. */
static void
overlap_build(struct tm_report *r, const struct tm_input *in)
{
	struct tm_overlap *o = &r->overlap;
	o->ends_first = o->starts_last = -1;
	for (size_t i = 0; i < r->n_files; i++) {
		const struct tm_report_file *f = &r->files[i];
		if (!f->is_trace || !f->is_predicted || !f->has_ts)
			continue;
		o->n_files++;
		if (o->ends_first < 0 || f->last_ts < r->files[o->ends_first].last_ts)
			o->ends_first = (int)i;
		if (o->starts_last < 0 || f->first_ts > r->files[o->starts_last].first_ts)
			o->starts_last = (int)i;
	}
	if (o->n_files < 2)
		return;
	int64_t end = r->files[o->ends_first].last_ts, start = r->files[o->starts_last].first_ts;
	struct tm_buf b;
	tm_buf_init(&b);
	if (end >= start) {
		o->overlap = true;
		o->common_ns = end - start;
		if (o->common_ns) {
			tm_buf_adds(&b, "the files' time ranges overlap for ");
			span_text(o->common_ns, &b);
		} else {
			tm_buf_adds(&b, "the files' time ranges share one instant");
		}
		if (o->n_files > 2)
			tm_buf_addf(&b, " (all %zu)", o->n_files);
	} else {
		o->gap_ns = start - end;
		tm_buf_adds(&b, "the files' time ranges do not overlap: ");
		tm_member_label(in, r->files[o->ends_first].member, &b);
		tm_buf_adds(&b, " ends ");
		span_text(o->gap_ns, &b);
		tm_buf_adds(&b, " before ");
		tm_member_label(in, r->files[o->starts_last].member, &b);
		tm_buf_adds(&b, " starts");
	}
	tm_buf_adds(&b, ".");
	b.data[0] = (char)(b.data[0] - 'a' + 'A');
	o->text = tm_buf_steal(&b);
}

void
tm_report_build(struct tm_replay *p)
{
	struct tm_report *r = p->r;
	const struct tm_replay_src *s = p->src;
	size_t nm = s->in->n_members;
	uint64_t tot[TM_STAT__COUNT] = {0}, miss[TM_STAT__COUNT] = {0};
	r->files = xcalloc(nm + 1, sizeof *r->files);
	r->n_files = nm;
	r->is_complete = true;
	struct by_file ix;
	index_trackers(p, nm, &ix);
	struct tm_buf pl; /* a file's placement sentence, one buffer for all */
	tm_buf_init(&pl);
	for (size_t i = 0; i < nm; i++) {
		const struct tm_member *mb = &s->in->members[i];
		const struct tm_file_acc *a = &p->acc[i];
		struct tm_report_file *f = &r->files[i];
		f->member = i;
		f->path = mb->name;
		f->format = mb->format;
		f->size = mb->size;
		f->order = mb->order;
		f->is_hidden = mb->is_hidden;
		f->is_trace = a->is_trace;
		f->is_predicted = a->is_predicted;
		f->is_untimed = a->is_trace && a->is_predicted && !tm_format_has_timeline(mb->format);
		if ((a->is_trace && !a->is_predicted) || mb->is_unexpanded)
			r->is_complete = false;
		f->events = a->events;
		f->has_ts = a->has_ts;
		f->first_ts = a->first_ts;
		f->last_ts = a->last_ts;
		f->has_all_ts = a->has_all;
		f->all_first_ts = a->all_first;
		f->all_last_ts = a->all_last;
		/* stat_v holds the non-zero stats in id order, one per bit of
		 * stat_mask, then the missing events by stat (struct
		 * tm_file_acc) */
		size_t ns = (size_t)__builtin_popcountll(a->stat_mask);
		size_t nmiss = (size_t)__builtin_popcountll(a->miss_mask);
		f->stats = ns ? xcalloc(ns, sizeof *f->stats) : NULL;
		f->missing_stats = nmiss ? xcalloc(nmiss, sizeof *f->missing_stats) : NULL;
		for (uint64_t m = a->stat_mask; m; m &= m - 1) {
			int st = __builtin_ctzll(m);
			uint64_t v = a->stat_v[f->n_stats];
			tot[st] += v;
			f->stats[f->n_stats++] = stat_of(st, v);
			if (tm_stat_is_drop((enum tm_stat_id)st))
				f->dropped += v;
		}
		for (uint64_t m = a->miss_mask; m; m &= m - 1) {
			int st = __builtin_ctzll(m);
			uint64_t v = a->stat_v[ns + f->n_missing_stats];
			miss[st] += v;
			f->missing_stats[f->n_missing_stats++] = stat_of(st, v);
			f->missing += v;
		}
		if (f->n_missing_stats > 1)
			qsort(f->missing_stats, f->n_missing_stats, sizeof *f->missing_stats, cmp_stat);
		tm_buf_reset(&pl);
		if (mb->is_unexpanded) {
			tm_buf_adds(&pl, "container nested more than 8 deep: tracemerge does not "
					"expand it (trace_processor does); what it holds is not "
					"predicted");
		} else if (!a->is_trace) {
			tm_buf_adds(&pl, mb->is_hidden ? "hidden: trace_processor skips it"
				    : tm_format_is_container(mb->format) ? "container: its members are listed separately"
				    : mb->format == TM_FMT_MANIFEST ? "the manifest: applied before any trace"
								   : "not processed");
		} else if (tm_format_is_container(mb->format)) {
			tm_buf_adds(&pl, "an Android bugreport: trace_processor reads this ZIP as one "
					"(its bugreport-*.txt and FS/data/misc/logd/logcat* files, on "
					"REALTIME) and imports none of its other members, its manifest "
					"included; tracemerge does not predict a bugreport's events");
		} else if (mb->format == TM_FMT_ARROW) {
			tm_buf_adds(&pl, "arrow: a table of a Perfetto export; tracemerge does not "
					"check that it restores (trace_processor fails the import when "
					"its table, columns or row count do not match)");
		} else if (mb->format == TM_FMT_NINJA_LOG) {
			tm_buf_adds(&pl, "ninja_log: its slices are written at their own times (ms "
					"from the build's start), never converted or sorted: nothing "
					"of it can be dropped, and it claims no trace time");
		} else if (!tm_format_has_timeline(mb->format)) {
			tm_buf_addf(&pl, "%s: no timeline events: nothing of it can be dropped, and it "
					"claims no trace time",
				    tm_format_name(mb->format));
		} else if (!a->is_predicted && s->scans && s->scans[i] && s->scans[i]->unpredicted) {
			tm_buf_addf(&pl, "%s: its events are not predicted: %s", tm_format_name(mb->format),
				    s->scans[i]->warning ? s->scans[i]->warning : "");
		} else if (!a->is_predicted) {
			tm_buf_addf(&pl, "%s: tracemerge does not scan this format; its events are not "
					"predicted",
				    tm_format_name(mb->format));
		} else {
			placement(p, i, &ix, &pl);
		}
		file_block(f, a, s->scans ? s->scans[i] : NULL, &pl);
	}
	tm_buf_fini(&pl);
	free(ix.start);
	free(ix.by);
	r->stats = xcalloc(TM_STAT__COUNT, sizeof *r->stats);
	for (int st = 0; st < TM_STAT__COUNT; st++)
		if (tot[st]) {
			r->stats[r->n_stats++] = stat_of(st, tot[st]);
			if (tm_stat_is_drop((enum tm_stat_id)st))
				r->dropped += tot[st];
		}
	qsort(r->stats, r->n_stats, sizeof *r->stats, cmp_stat);
	r->missing_stats = xcalloc(TM_STAT__COUNT, sizeof *r->missing_stats);
	for (int st = 0; st < TM_STAT__COUNT; st++)
		if (miss[st]) {
			r->missing_stats[r->n_missing_stats++] = stat_of(st, miss[st]);
			r->missing += miss[st];
		}
	qsort(r->missing_stats, r->n_missing_stats, sizeof *r->missing_stats, cmp_stat);
	r->machines = xcalloc(p->n_rows + 1, sizeof *r->machines);
	r->n_machines = p->n_rows;
	uint32_t n_remote = 0;
	for (size_t i = 0; i < p->n_rows; i++) {
		if (p->rows[i].raw != 0)
			n_remote++;
		r->machines[i].label_index = p->rows[i].raw != 0 ? n_remote : 0;
		r->machines[i].id = (uint32_t)i;
		r->machines[i].raw_id = p->rows[i].raw;
		r->machines[i].name = p->rows[i].name;
		r->machines[i].dropped = i < p->cap_row_drops ? p->row_drops[i] : 0;
		p->rows[i].name = NULL;
	}
	if (p->tt_claimed)
		add_meta_int(r, "trace_time_clock_id", p->tt_clock_meta);
	if (p->m && !p->error)
		for (size_t i = 0; i < p->m->n_attrs; i++) {
			char key[600];
			snprintf(key, sizeof key, "manifest_attribute.%s", p->m->attrs[i].key);
			if (p->m->attrs[i].is_int)
				add_meta_int(r, key, p->m->attrs[i].ival);
			else
				add_meta_str(r, key, p->m->attrs[i].sval);
		}
	r->tt_clock = p->tt.clock;
	r->tt_machine = p->tt_claimed ? (int64_t)p->tt.machine : -1;
	struct tm_buf b;
	tm_buf_init(&b);
	if (p->tt_owner == (int64_t)VIRTUAL_MANIFEST_TID) {
		tm_buf_addf(&b, "the manifest's trace_time picks %s", tm_clock_name(p->tt.clock));
	} else if (r->tt_file >= 0) {
		const struct tm_member *mb = &s->in->members[r->tt_file];
		if (mb->format == TM_FMT_MANIFEST)
			tm_buf_addf(&b, "the manifest's trace_time picks %s", tm_clock_name(p->tt.clock));
		else if (mb->format == TM_FMT_PROTO) {
			tm_member_label(s->in, (size_t)r->tt_file, &b);
			tm_buf_adds(&b, " is the first proto, in name order, whose ClockSnapshot "
					"claims trace time (protos are processed before other formats)");
		} else {
			tm_member_label(s->in, (size_t)r->tt_file, &b);
			tm_buf_adds(&b, " is processed first among the files with a clock: its name "
					"sorts first (trace_processor orders members by priority, then "
					"name, not by packing order)");
		}
	} else {
		tm_buf_adds(&b, "no file claims trace time");
	}
	r->tt_why = tm_buf_steal(&b);
	if (s->keep_events && s->scans && !(s->cancelled && *s->cancelled)) {
		/* the list the replay wrote (replay_slices.c tm_rp_record_event) */
		if (!p->evs)
			BIG_XGROW(p->evs, p->cap_evs, 1);
		r->events = p->evs;
		r->n_events = p->n_evs;
		r->cap_events = p->cap_evs;
		r->events_pool = s->pool ? tm_evpool_ref(s->pool) : NULL;
		p->evs = NULL;
		r->tracks = p->tracks.v; /* the replay's table (view.c) */
		r->n_tracks = p->tracks.n;
		p->tracks.v = NULL;
		p->tracks.n = p->tracks.cap = 0;
		r->values = p->cvals;
		r->n_values = p->n_cvals;
		p->cvals = NULL;
		p->n_cvals = p->cap_cvals = 0;
	}
	r->error = p->error;
	r->error_where = p->error_where;
	r->error_in_manifest = p->error_in_manifest;
	r->hint = p->hint;
	if (s->in->warning) {
		r->warnings = xrealloc(r->warnings, (r->n_warnings + 1) * sizeof *r->warnings);
		r->warnings[r->n_warnings++] = xstrdup(s->in->warning);
	}
	/* containers we did not expand (ours): the first, and how many */
	size_t n_unexp = 0, first_unexp = 0;
	for (size_t i = 0; i < nm; i++)
		if (s->in->members[i].is_unexpanded && !n_unexp++)
			first_unexp = i;
	if (n_unexp) {
		struct tm_buf w;
		tm_buf_init(&w);
		tm_member_label(s->in, first_unexp, &w);
		tm_buf_adds(&w, " is nested more than 8 archives deep and not expanded; "
				"trace_processor expands every level, so the events inside are not "
				"predicted and this report is incomplete");
		if (n_unexp > 1)
			tm_buf_addf(&w, " (%zu such containers)", n_unexp);
		r->warnings = xrealloc(r->warnings, (r->n_warnings + 1) * sizeof *r->warnings);
		r->warnings[r->n_warnings++] = tm_buf_steal(&w);
	}
	if (p->bugreport >= 0) {
		struct tm_buf w;
		tm_buf_init(&w);
		tm_member_label(s->in, (size_t)p->bugreport, &w);
		tm_buf_adds(&w, " holds a bugreport-*.txt: trace_processor reads the whole ZIP as an "
				"Android bugreport and ignores every other member in it, a "
				"perfetto_manifest included (zip_trace_reader.cc)");
		r->warnings = xrealloc(r->warnings, (r->n_warnings + 1) * sizeof *r->warnings);
		r->warnings[r->n_warnings++] = tm_buf_steal(&w);
	}
	/* scanners' own notes (ours), e.g. a packet cut off at the end */
	for (size_t i = 0; i < nm; i++) {
		const struct tm_scan *sc = s->scans ? s->scans[i] : NULL;
		if (!sc || !sc->warning)
			continue;
		struct tm_buf w;
		tm_buf_init(&w);
		tm_member_label(s->in, i, &w);
		tm_buf_addf(&w, ": %s", sc->warning);
		r->warnings = xrealloc(r->warnings, (r->n_warnings + 1) * sizeof *r->warnings);
		r->warnings[r->n_warnings++] = tm_buf_steal(&w);
	}
	overlap_build(r, s->in);
	/* Unpredicted formats are never counted as zero drops. */
	r->ok = !r->error && r->dropped == 0 && tm_report_missing_by_merge(r) == 0 && r->is_complete;
}

void
tm_report_free(struct tm_report *r)
{
	if (!r)
		return;
	free(r->error);
	free(r->error_where);
	free(r->hint);
	free(r->tt_why);
	free(r->overlap.text);
	free(r->stats);
	free(r->missing_stats);
	for (size_t i = 0; i < r->n_machines; i++)
		free(r->machines[i].name);
	free(r->machines);
	for (size_t i = 0; i < r->n_meta; i++) {
		free(r->meta[i].key);
		free(r->meta[i].sval);
	}
	free(r->meta);
	for (size_t i = 0; i < r->n_files; i++) {
		free(r->files[i].stats);
		free(r->files[i].missing_stats);
		free(r->files[i].placement); /* and its machines and clocks (file_block) */
	}
	free(r->files);
	free(r->tracks);
	free(r->values);
	if (r->events_pool) {
		tm_evpool_give(r->events_pool, r->events, r->cap_events);
		tm_evpool_unref(r->events_pool);
	} else {
		tm_events_free(r->events, r->cap_events);
	}
	for (size_t i = 0; i < r->n_warnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	free(r);
}

/* True when no predicted number differs between a and b. */
bool
tm_report_same_numbers(const struct tm_report *a, const struct tm_report *b)
{
	if (!tm_same_str(a->error, b->error) || a->dropped != b->dropped ||
	    a->missing != b->missing || a->n_stats != b->n_stats ||
	    a->n_files != b->n_files || a->tt_clock != b->tt_clock || a->tt_file != b->tt_file ||
	    a->n_machines != b->n_machines)
		return false;
	for (size_t i = 0; i < a->n_stats; i++)
		if (strcmp(a->stats[i].name, b->stats[i].name) || a->stats[i].value != b->stats[i].value)
			return false;
	for (size_t i = 0; i < a->n_files; i++) {
		const struct tm_report_file *x = &a->files[i], *y = &b->files[i];
		if (x->events != y->events || x->dropped != y->dropped || x->missing != y->missing ||
		    x->has_ts != y->has_ts ||
		    x->has_all_ts != y->has_all_ts || x->n_machines != y->n_machines)
			return false;
		if (x->has_ts && (x->first_ts != y->first_ts || x->last_ts != y->last_ts))
			return false;
		if (x->has_all_ts &&
		    (x->all_first_ts != y->all_first_ts || x->all_last_ts != y->all_last_ts))
			return false;
	}
	return true;
}

void
tm_missing_sentence(uint64_t dropped, uint64_t missing, const struct tm_stat *st, size_t n,
		    struct tm_buf *out)
{
	if (dropped == 0)
		tm_buf_adds(out, "trace_processor counts no dropped events, but ");
	tm_buf_addf(out, "%" PRIu64 " event%s would be missing from the merged trace (tracemerge):",
		    missing, missing == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++)
		tm_buf_addf(out, "%s%s %" PRIu64, i ? ", " : " ", st[i].name, st[i].value);
	tm_buf_adds(out, ".");
	uint64_t own = recording_losses(st, n);
	if (own) {
		if (own == missing)
			tm_buf_addf(out, " %s", missing == 1 ? "It is" : "They are");
		else
			tm_buf_addf(out, " %" PRIu64 " of them %s", own, own == 1 ? "is" : "are");
		tm_buf_adds(out, " ftrace data recorded before tracing started: trace_processor "
				 "drops it in any import of the file, merged or not, and no alignment "
				 "changes that.");
	}
}

uint64_t
tm_report_missing_by_merge(const struct tm_report *r)
{
	uint64_t own = recording_losses(r->missing_stats, r->n_missing_stats);
	return r->missing > own ? r->missing - own : 0;
}

size_t
tm_report_files_in_order(const struct tm_report *r, size_t **out)
{
	size_t nb = r->n_files + 1, n = 0;
	size_t *start = xcalloc(nb + 1, sizeof *start);
	size_t *idx = xmalloc((r->n_files ? r->n_files : 1) * sizeof *idx);
	for (size_t i = 0; i < r->n_files; i++) {
		const struct tm_report_file *f = &r->files[i];
		if (f->is_trace && f->order < nb)
			start[f->order + 1]++;
	}
	for (size_t k = 0; k < nb; k++)
		start[k + 1] += start[k];
	for (size_t i = 0; i < r->n_files; i++) {
		const struct tm_report_file *f = &r->files[i];
		if (f->is_trace && f->order < nb) {
			idx[start[f->order]++] = i;
			n++;
		}
	}
	free(start);
	*out = idx;
	return n;
}

void
tm_report_missing_sentence(const struct tm_report *r, struct tm_buf *out)
{
	tm_missing_sentence(r->dropped, r->missing, r->missing_stats, r->n_missing_stats, out);
}

/* The events missing are the dropped count itself, stat by stat (every
 * drop a lost event: negative timestamps, no_path failures of one event
 * each): the dropped count's sentence says it all. */
bool
tm_report_missing_is_dropped(const struct tm_report *r)
{
	size_t k = 0;
	for (size_t i = 0; i < r->n_stats; i++) {
		if (!tm_stat_is_drop(r->stats[i].id))
			continue;
		if (k >= r->n_missing_stats || r->missing_stats[k].id != r->stats[i].id ||
		    r->missing_stats[k].value != r->stats[i].value)
			return false;
		k++;
	}
	return k == r->n_missing_stats;
}

void
tm_report_verdict(const struct tm_report *r, struct tm_buf *out)
{
	if (r->error && r->error_is_ours) {
		tm_buf_addf(out, "tracemerge cannot predict this import: %s", r->error);
		return;
	}
	if (r->error) {
		tm_buf_addf(out, "The merged trace would fail to open: %s", r->error);
		return;
	}
	size_t n_unknown = 0;
	for (size_t i = 0; i < r->n_files; i++)
		n_unknown += r->files[i].is_trace && !r->files[i].is_predicted;
	if (r->dropped == 0 && r->missing) {
		tm_report_missing_sentence(r, out);
		if (n_unknown)
			tm_buf_addf(out, " (%zu file%s not predicted.)", n_unknown,
				    n_unknown == 1 ? "'s events are" : "s' events are");
		return;
	}
	if (r->dropped == 0 && n_unknown == 0 && r->is_complete) {
		/* what is known: nothing is lost, and, separately, whether
		 * the files share a span of time (ours) */
		const struct tm_overlap *o = &r->overlap;
		if (!o->text) {
			tm_buf_adds(out, "Nothing dropped: every event lands on the shared timeline.");
		} else if (o->overlap) {
			tm_buf_addf(out, "Nothing dropped; %c%s", o->text[0] - 'A' + 'a', o->text + 1);
		} else {
			tm_buf_addf(out, "Nothing dropped, but %c%s Check how they are aligned.",
				    o->text[0] - 'A' + 'a', o->text + 1);
		}
		return;
	}
	if (r->dropped == 0 && n_unknown == 0) {
		tm_buf_adds(out, "No dropped events predicted, but the report is incomplete: "
				 "tracemerge did not read everything trace_processor reads (see the "
				 "warnings).");
		return;
	}
	if (r->dropped == 0) {
		tm_buf_addf(out,
			    "No dropped events predicted, but the events of %zu file%s are not "
			    "predicted (see %s row).",
			    n_unknown, n_unknown == 1 ? "" : "s", n_unknown == 1 ? "its" : "their");
		return;
	}
	/* trace_processor's count, named as such when the events missing are
	 * not that count */
	bool same = tm_report_missing_is_dropped(r);
	if (same)
		tm_buf_addf(out, "%" PRIu64 " event%s would be dropped:", r->dropped,
			    r->dropped == 1 ? "" : "s");
	else
		tm_buf_addf(out, "trace_processor would report %" PRIu64 " dropped event%s (",
			    r->dropped, r->dropped == 1 ? "" : "s");
	const char *sep = same ? " " : "";
	for (size_t i = 0; i < r->n_stats; i++) {
		if (!tm_stat_is_drop(r->stats[i].id))
			continue;
		tm_buf_addf(out, "%s%s %" PRIu64, sep, r->stats[i].name, r->stats[i].value);
		sep = ", ";
	}
	if (!same) {
		tm_buf_adds(out, "); ");
		tm_report_missing_sentence(r, out);
	} else {
		tm_buf_adds(out, ".");
	}
	if (n_unknown)
		tm_buf_addf(out, " (%zu file%s not predicted.)", n_unknown,
			    n_unknown == 1 ? "'s events are" : "s' events are");
}

char *
tm_report_verdict_str(const struct tm_report *r)
{
	struct tm_buf b;
	tm_buf_init(&b);
	tm_report_verdict(r, &b);
	return tm_buf_steal(&b);
}

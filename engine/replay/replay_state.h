/* SPDX-License-Identifier: MIT */
/* The import replay's state, shared by replay.c (which fills it) and
 * report.c (which turns it into a tm_report).  Internal to those two. */
#ifndef TM_REPLAY_STATE_H
#define TM_REPLAY_STATE_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "replay.h"

#include "clockgraph.h"
#include "manifest_internal.h"
#include "strmap.h"
#include "view.h"

#define NO_OWNER INT64_MIN
/* Owner id of a manifest we would write into the TAR (no member has it:
 * the input's own members keep their ids). */
#define VIRTUAL_MANIFEST_TID 0xFFFFFFFEu

struct tm_rp_row {
	uint64_t raw;
	char *name;
};

/* how a tracker's deferred bridge ended (ours, for the placement sentence) */
enum tm_bridge { BR_NONE, BR_PATH, BR_REALTIME, BR_ASSUMED, BR_DECLINED };

/* One ClockTracker (file x machine context), with the proto reader's
 * default clock.  (The machine's raw id it was forked for is not kept:
 * tm_rp_fork_ctx reads it to find the row, nothing after.) */
struct tm_tracker {
	struct tm_clockid default_clock; /* unqualified */
	uint32_t file; /* report file index (= member index; trace_file ids are u32 too);
			* its trace_file id is tm_ctx_trace_id */
	uint32_t row;
	/* the clock flush_pending bridges from, unqualified (tm_ctx_pending):
	 * a global clock, with the file's trace_file id as tf when it is
	 * TRACE_FILE (process_trace's) */
	uint32_t pending_clock;
	uint8_t bridge; /* enum tm_bridge */
	/* a timestamp was converted through it: all the replay asks of
	 * ClockTracker's count of conversions (clock_tracker.h) is whether
	 * it is past 0 */
	bool converted;
	bool is_primary;
	bool has_default;
	bool has_pending;
	bool is_pin;
	/* its clocks are qualified by its file's trace_file id (tm_ctx_tag;
	 * tm_rp_add_snapshot of a non-primary tracker sets it) */
	bool tagged;
	/* an ftrace event of its context was placed (replay.c, started_ns) */
	bool ftrace_seen;
	/* (one per trace file forked: 10,000s for an archive's members) */
};
_Static_assert(sizeof(void *) != 8 || sizeof(struct tm_tracker) == 36, "struct tm_tracker grew");

struct tm_started {
	uint32_t file, row;
	int64_t ns;
};

struct tm_entry_state { /* a manifest files[] entry, applied */
	bool has_machine_id;
	uint64_t machine_id;
	size_t n_remap;
	uint32_t *remap_id;
	uint64_t *remap_raw;
	struct tm_u64map remap_ix; /* embedded id -> its first k in remap_id */
};

struct tm_file_acc {
	uint64_t events;
	int64_t first_ts, last_ts;
	int64_t all_first, all_last; /* kept or dropped as negative */
	/* the file's non-zero stats, in id order, then its events missing by
	 * the stat of each loss: stat_v holds one value per bit of stat_mask
	 * (bit st for stat st, tm_acc_stat), then one per bit of miss_mask
	 * (bit st for the events lost under st, tm_acc_missing); most files of
	 * an archive of 10,000s count none */
	uint64_t *stat_v;
	uint64_t stat_mask, miss_mask;
	bool has_ts;
	bool has_all;
	bool is_predicted;
	bool is_trace;
	/* the machine rows its events land on: in row1 while rows is NULL
	 * (one row: nearly every file), else rows (tm_acc_rows), whose
	 * capacity is implied by n_rows (replay_machines.c note_file_row) */
	uint32_t *rows;
	uint32_t n_rows;
	uint32_t row1;
	/* (one per member, 10,000s for an archive) */
};
/* (88: the missing counts' own mask took 8 bytes) */
_Static_assert(sizeof(void *) != 8 || sizeof(struct tm_file_acc) == 88, "struct tm_file_acc grew");
_Static_assert(TM_STAT__COUNT <= 64, "tm_file_acc.stat_mask and miss_mask hold every stat");

static inline const uint32_t *
tm_acc_rows(const struct tm_file_acc *a)
{
	return a->rows ? a->rows : &a->row1;
}

/* The file's count of stat st. */
static inline uint64_t
tm_acc_stat(const struct tm_file_acc *a, int st)
{
	uint64_t b = 1ull << st;
	return a->stat_mask & b ? a->stat_v[__builtin_popcountll(a->stat_mask & (b - 1))] : 0;
}

/* The file's events lost under stat st (tm_stat_loses_events). */
static inline uint64_t
tm_acc_missing(const struct tm_file_acc *a, int st)
{
	uint64_t b = 1ull << st;
	return a->miss_mask & b ? a->stat_v[__builtin_popcountll(a->stat_mask) +
					     __builtin_popcountll(a->miss_mask & (b - 1))]
				: 0;
}

/* A compact_sched event the sorter holds (keep_events, when some file has
 * B/E events): not listed, but its queue bounds the runs the sorter hands
 * listed events on in (replay_slices.c sorter_rank). */
struct tm_phantom {
	int64_t ts;
	uint32_t file, row;
	uint32_t before; /* the events listed before it (its push order) */
	uint8_t queue;   /* struct tm_detail queue */
};

struct tm_replay {
	const struct tm_replay_src *src;
	/* the event being pushed has no timestamp of its own (TM_CONV_UNTIMED):
	 * counted, not part of its file's range */
	bool untimed;
	/* the file's deferred packets are run again at its end: a
	 * TrackEvent takes its name of then (TM_DETAIL_EOF) */
	bool at_eof;
	const struct tm_manifest *m;
	struct tm_report *r;
	struct tm_graph *g;
	struct tm_clockid tt;
	int64_t tt_owner;
	bool tt_claimed;
	uint32_t tt_clock_meta;
	struct tm_rp_row *rows;
	size_t n_rows, cap_rows;
	/* raw id -> row, for every raw id that got a row (a hash: a manifest
	 * may name tens of thousands of machines) */
	struct tm_u64map rr;
	/* machine_to_context: raw id at fork time -> row of its per-machine
	 * state.  A fork for a raw id already present shares the row and is not
	 * primary; adoption registers the adopted id too. */
	struct tm_u64map mc;
	/* (file << 32 | row) of every file with more than a few rows
	 * (note_file_row; a proto may carry 100,000s of machine ids) */
	struct tm_u64map file_rows;
	/* the trackers in fork order, TRACKER_BLOCK to a block (one per
	 * member of an archive or more: not one allocation each, and no
	 * pointer array: tm_ctx finds the i-th) */
	size_t n_ctxs;
	struct tm_tracker **trk_blocks;
	size_t n_trk_blocks, cap_trk_blocks;
	bool any_forked;
	/* per member: TM_BUGREPORT_* of a ZIP (bugreport.c), NULL when no ZIP
	 * holds a bugreport-*.txt; bugreport the first ZIP read as an
	 * Android bugreport, or -1 */
	uint8_t *bug;
	long bugreport;
	bool manifest_seen;
	bool is_virtual; /* the manifest is one we would write, not the input's */
	uint32_t tf_rows; /* trace_file ids 0..tf_rows exist when the manifest applies */
	struct tm_entry_state *entries; /* per manifest files[] entry */
	struct tm_file_acc *acc;        /* per member */
	/* the report's events list, written as the events are replayed (with
	 * keep_events; report.c hands it to the report) */
	struct tm_report_event *evs;
	size_t n_evs, cap_evs;
	struct tm_tracktab tracks; /* the listed events' tracks (view.c) */
	struct tm_report_value *cvals; /* the counter samples' values, by event */
	size_t n_cvals, cap_cvals;
	uint32_t *ev_track; /* per listed event: its slice track (a tracks id), UINT32_MAX none */
	uint8_t *ev_queue;  /* per listed event: its sorter queue (struct tm_detail) */
	const char **ev_cat; /* per listed event: its category (JSON "cat"), or NULL */
	bool want_ph;             /* keep the phantoms below */
	struct tm_phantom *ph;
	size_t n_ph, cap_ph;
	size_t cap_ev_track;
	char *error;
	bool error_in_manifest; /* error set by tm_rp_mfail (replay_stats.c) */
	char *error_where;
	char *hint;
	struct tm_piece *pieces; /* scratch for run_run */
	size_t n_pieces, cap_pieces;
	int64_t *vals;
	size_t cap_vals;
	uint64_t *row_drops; /* dropped-count units per machine row */
	size_t cap_row_drops;
	/* tracing_started_ns per (trace file, machine row), the scope of that
	 * metadata key (storage/metadata.h: kMachineAndTrace); started_map:
	 * file << 32 | row -> index.  preset: the values are the final ones,
	 * given by an earlier pass (replay.c, tm_replay); again: one changed
	 * after ftrace events of its context were placed with the old one. */
	struct tm_started *started;
	size_t n_started, cap_started;
	struct tm_u64map started_map;
	bool started_preset, started_again;
	/* the timezone offset log lines are read in (TM_OP_TIMEZONE: the last
	 * one set, in processing order; TraceTimeState::timezone_offset) */
	bool has_tz;
	int64_t tz;
};

#define TRACKER_BLOCK 64u

/* c's file's trace_file id (members are not renumbered during a replay). */
static inline uint32_t
tm_ctx_trace_id(const struct tm_replay *p, const struct tm_tracker *c)
{
	return p->src->in->members[c->file].trace_file_id;
}

/* c's pending clock (struct tm_tracker pending_clock), unqualified. */
static inline struct tm_clockid
tm_ctx_pending(const struct tm_replay *p, const struct tm_tracker *c)
{
	uint32_t tf = c->pending_clock == TM_CLOCK_TRACE_FILE ? tm_ctx_trace_id(p, c) : 0;
	return (struct tm_clockid){c->pending_clock, 0, tf, 0};
}

/* The clock flush_pending bridged from (k there: the format clock on the
 * tracker's machine), read once bridge is set.  Not a field: the pending
 * clock and row are set when the tracker is forked and never change (a
 * proto's host context that an embedded machine shares is pending again,
 * from BOOTTIME, its clock already: fork_reader). */
static inline struct tm_clockid
tm_tracker_bridged_from(const struct tm_replay *p, const struct tm_tracker *c)
{
	return tm_clockid_qualify(tm_ctx_pending(p, c), c->row, 0);
}

/* The tag c qualifies its clocks with (tm_clockid_qualify): 0 until
 * tagged, then its trace_file id. */
static inline uint32_t
tm_ctx_tag(const struct tm_replay *p, const struct tm_tracker *c)
{
	return c->tagged ? tm_ctx_trace_id(p, c) : 0;
}

/* The i-th tracker forked (i < n_ctxs). */
static inline struct tm_tracker *
tm_ctx(const struct tm_replay *p, size_t i)
{
	return &p->trk_blocks[i / TRACKER_BLOCK][i % TRACKER_BLOCK];
}

/* report.c: fill p->r from the finished replay. */
void tm_report_build(struct tm_replay *p);

/* An Android bugreport ZIP (bugreport.c): TM_BUG_NONE, TM_BUG_READ (a
 * bugreport-*.txt member with a year in its name: the ZIP is read as a
 * bugreport) or TM_BUG_ABORT (trace_processor aborts on it). */
enum { TM_BUG_NONE, TM_BUG_READ, TM_BUG_ABORT };
/* p->bug for the input's ZIPs (NULL when none holds a bugreport-*.txt). */
void tm_bugreport_scan(struct tm_replay *p);
/* The bugreport ZIP that is member mi or holds it, or -1. */
long tm_bugreport_of(const struct tm_replay *p, size_t mi);
#endif

/* SPDX-License-Identifier: MIT */
/*
 * The scan's output: a compact, replayable log of everything in one trace
 * file that decides a timestamp, a clock, a machine or an event count.
 *
 * Scanners (scan_proto.c, scan_json.c, scan_systrace.c) resolve everything
 * that depends only on the file's bytes (sequence state, packet defaults,
 * interning, incremental-state validity, compact-sched deltas, JSON ts
 * rounding ...) and append ops in file order.  replay.c then interprets the
 * ops of every file in trace_processor's processing order, against one global
 * clock graph and the manifest being evaluated: machine rows, trace-time
 * claims, conversions, deferrals and the drop stats.  An edit of the manifest
 * replays the logs; no trace byte is read again.
 *
 * Encoding: a byte stream of varints (private to oplog.c); timestamps are
 * zigzag deltas against the previous timestamp of the same log, so an event
 * costs a few bytes.  Append with tm_oplog_*; read with tm_opiter_*.
 *
 * Clock spec of an op: clock 0 means "the reader's default clock" (proto: set
 * by ClockSnapshots, none at first, in which case the value is taken raw; other
 * formats: the format's clock, e.g. the private TRACE_FILE clock for JSON,
 * MONOTONIC for systrace).  seq is the trusted_packet_sequence_id, needed for
 * sequence-scoped clocks 64..127.  machine is the embedded proto machine_id
 * (0 = the file's host; always 0 for non-proto formats).
 */
#ifndef TM_OPLOG_H
#define TM_OPLOG_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "internal.h"
#include "strmap.h"

enum tm_op_kind {
	/* First "data" packet of embedded machine `machine` in this file (for
	 * machine 0: the first packet without synchronization_marker).  Emitted
	 * once per distinct machine, before any other op of that machine.  Drives
	 * machine dispatch: adoption, forks, errors 49/50/51. */
	TM_OP_MACHINE = 1,
	/* Clock snapshot.  clocks[n]; primary = primary_trace_clock (0 unset).
	 * flags TM_SNAP_PACKET: a ClockSnapshot packet (PIN check fatal (48),
	 * default clock + trace-time claim); TM_SNAP_AUX: added through the
	 * tracker only (ftrace clock pair), the PIN error of
	 * ClockTracker::AddSnapshot swallowed. */
	TM_OP_SNAPSHOT,
	/* A proto packet with a timestamp: convert (clock, seq, ts) with errors
	 * suppressed; on failure defer the packet to this file's EOF and retry
	 * with errors recorded (still failing: the failure stat plus
	 * clock_sync_failure_undeferrable_packet_loss, packet dropped).  n = the
	 * number of payload ops that follow and belong to this packet; they run
	 * after the packet converted (at once, or at EOF), with the converted ts
	 * as "packet ts".  flags TM_PKT_CHROME: chrome_events/metadata special
	 * case (if the resolved clock is 0 or MONOTONIC: convert MONOTONIC with
	 * errors recorded, keep raw on failure, no deferral). */
	TM_OP_PACKET,
	/* Push one event at the packet ts (inside a PACKET) or at ts (outside).
	 * Negative ts: trace_sorter_negative_timestamp_dropped, unless flag
	 * TM_PUSH_TRACK_EVENT: then track_event_invalid_timestamp and no push.
	 * detail: 0, or 1 + index into the log's detail table (keep_events). */
	TM_OP_PUSH,
	/* n pushes without a timestamp (ts = latest seen; never negative). */
	TM_OP_PUSH_NOTS,
	/* An independent conversion of (clock, seq, ts) with errors recorded,
	 * then (unless TM_CONV_NO_PUSH) one push at the converted ts.  On
	 * failure: TM_CONV_FAIL_DROP (event lost), TM_CONV_FAIL_KEEP_RAW (pushed
	 * at the raw ts), or TM_CONV_FAIL_FATAL (import fails with "Failed to
	 * convert timestamp to trace time").  flags TM_CONV_SUPPRESS: errors not
	 * recorded.  detail as for PUSH. */
	TM_OP_CONVERT,
	/* compact_sched array: n timestamps (already accumulated from deltas),
	 * each converted with errors recorded and pushed; the first failure
	 * abandons the rest of the array. */
	TM_OP_CONVERT_ARRAY,
	/* service_event: suppressed conversion of (clock, ts), not pushed; counts
	 * as a conversion (flushes the deferred bridge, blocks later claims).
	 * flags: TM_SVC_TRACING_STARTED. */
	TM_OP_SERVICE,
	/* remote_clock_sync on `machine`: n rounds; counts[2*i], counts[2*i+1] =
	 * number of client / host clocks of round i, laid out in clocks[]. */
	TM_OP_REMOTE_SYNC,
	/* SystemInfo.machine_name = text. */
	TM_OP_SYSINFO,
	/* A tokenizer stat that does not depend on the manifest: stat += n. */
	TM_OP_STAT,
	/* The import fails here with text (trace_processor's message, unwrapped). */
	TM_OP_FATAL,
	/* Never appended by scanners: oplog.c folds consecutive events of one
	 * shape into a run when the log has use_runs set.  n elements, tss[]
	 * non-decreasing (a CONVERT or ARRAY run is sorted: its elements are
	 * independent of each other).  flags TM_RUN_PACKET: each element is a PACKET (clock,
	 * seq, ts, packet flags 0, n 1) followed by a PUSH with push_flags and no
	 * detail; TM_RUN_CONVERT: each element is a CONVERT (clock, seq, ts,
	 * conv flags = push_flags, no detail); TM_RUN_ARRAY: the elements of
	 * n_arrays CONVERT_ARRAYs (compact_sched) of one builtin clock, sorted:
	 * a conversion's outcome does not depend on the value (only the result
	 * does), so order and array boundaries matter only for how many
	 * failures are recorded, one per array.  Iterators expand runs back into
	 * those ops (an ARRAY run as n_arrays CONVERT_ARRAYs, all but the last
	 * of one element) unless raw_runs is set (the replay's fast path). */
	TM_OP_RUN,
	/* The timezone offset every later log line is read in (ts, ns): a
	 * proto's SystemInfo.timezone_off_mins (system_probes_parser.cc,
	 * ParseSystemInfo) or a dumpstate's alarm service line
	 * (android_dumpstate_reader.cc): ClockTracker::set_timezone_offset,
	 * one value for the whole import (TraceTimeState), the last one set
	 * wins. */
	TM_OP_TIMEZONE,
};
#define TM_LANES 8u

enum {
	TM_SNAP_PACKET = 1u << 0,
	TM_SNAP_AUX = 1u << 1,
	TM_PKT_CHROME = 1u << 2,
	TM_PUSH_TRACK_EVENT = 1u << 3,
	TM_CONV_FAIL_DROP = 1u << 4,
	TM_CONV_FAIL_KEEP_RAW = 1u << 5,
	TM_CONV_FAIL_FATAL = 1u << 6,
	TM_CONV_NO_PUSH = 1u << 7,
	TM_CONV_SUPPRESS = 1u << 8,
	/* CONVERT: negative result goes to track_event_invalid_timestamp, no push */
	TM_CONV_NEG_TE_INVALID = 1u << 9,
	TM_RUN_PACKET = 1u << 10,
	TM_RUN_CONVERT = 1u << 11,
	TM_RUN_ARRAY = 1u << 12,
	/* CONVERT: an atrace text that does not parse; once pushed (the
	 * parser runs on what leaves the sorter) it counts
	 * systrace_parse_failure. */
	TM_CONV_ATRACE_FAIL = 1u << 13,
	/* RUN, in the encoding only (iterators clear it): the deltas are in
	 * the spill file (see tm_run) */
	TM_RUN_SPILLED = 1u << 14,
	/* PACKET: an alignment sample (align_scan.h) was kept at this packet's
	 * timestamp on a clock or machine the replay converts for an estimate
	 * (struct tm_replay_probe); never folded into a run, so the op keeps
	 * its offset.  No effect on the import. */
	TM_PKT_SAMPLE = 1u << 15,
	/* CONVERT: an ftrace event (FtraceParser::ParseFtraceEvent): once
	 * sorted, dropped below its context's tracing_started_ns, counting
	 * ftrace_packet_before_tracing_start.  (Every CONVERT_ARRAY is
	 * compact_sched, ParseInlineSchedSwitch/Waking: the same rule.) */
	TM_CONV_FTRACE = 1u << 16,
	/* SERVICE: its TracingServiceEvent has tracing_started set
	 * (ProtoTraceReader::ParseServiceEvent: tracing_started_ns = its
	 * converted timestamp, or the raw one when it does not convert) */
	TM_SVC_TRACING_STARTED = 1u << 17,
	/* CONVERT or PUSH: an event without a time of its own (a JSON metadata
	 * event, ph M, pushed at its ts or at 0 without one:
	 * json_trace_tokenizer.cc; a proto packet of no event kind, a
	 * descriptor or Chrome's metadata bundle, at raw ts 0): counted and
	 * placed as any, but no part of its file's time range (ours: a Chrome
	 * trace's metadata at 0 would stretch it over the days since boot and
	 * centre the timeline's zoom where no event is) */
	TM_CONV_UNTIMED = 1u << 18,
	/* CONVERT with TM_CONV_NO_PUSH: an strace line without a pid; once
	 * its conversion succeeds it counts strace_missing_pid
	 * (strace_trace_tokenizer.cc, StraceTraceTokenizer::Parse) */
	TM_CONV_NO_PID = 1u << 19,
	/* CONVERT: a log line's local time: the timezone offset set so far
	 * (TM_OP_TIMEZONE, 0 without one) is subtracted first
	 * (AndroidLogReader::SendToSorter) */
	TM_CONV_LOCAL = 1u << 20,
	/* CONVERT with TM_CONV_LOCAL: a dumpstate log line
	 * (BufferingAndroidLogReader with wait_for_tz): held, in ms, while no
	 * timezone is set; the first line after one is set pushes the held
	 * ones, then itself (AndroidLogReader::ProcessEvent); those still held
	 * at the file's end are never pushed */
	TM_CONV_WAIT_TZ = 1u << 21,
};
/* CONVERT_ARRAY (compact_sched) with keep_events: flags >> this is the
 * sorter queue of its stream (struct tm_detail queue), 0 without. */
#define TM_ARR_QUEUE_SHIFT 24


struct tm_op_clock {
	uint32_t id;
	int64_t ts;
	uint64_t unit; /* unit_multiplier_ns, 0 already mapped to 1 */
	bool is_incremental;
};

/* A category follows the name in the pool (a JSON event's "cat": an E
 * with one closes only a B of that category); NONAME: the name there is
 * an empty placeholder, the event has none. */
#define TM_DETAIL_CAT 1u
#define TM_DETAIL_NONAME 2u
/* A TrackEvent named by an interned iid whose name at the end of its file
 * differs from the one it had where it was read: dur (a TrackEvent has
 * none) holds the pool offset + 1 of that name, 0 for none.  A packet
 * deferred to the end of its file is tokenized again there, against its
 * sequence's incremental state of then (proto_trace_reader.cc
 * OnPushDataToSorter -> TimestampTokenizeAndPushToSorter, which hands the
 * tokenizer state->current_generation()): the iid may be gone (a clear:
 * no name, interned_data_tokenizer_errors) or name another string. */
#define TM_DETAIL_EOF 4u
/* A counter sample's value: dur holds the bits of a double (tracknames.h
 * tm_detail_set_value), the counter's value as trace_processor stores it. */
#define TM_DETAIL_VALUE 8u

/* Per-event details kept only with keep_events (for --events / slices). */
struct tm_detail {
	uint32_t name;  /* offset+1 into the log's string pool, 0 = none */
	char phase;     /* 'B','E','X','I','C','M',... or 0 */
	/* the sorter's queue of its context it goes to, in the order they are
	 * made (proto_trace_reader.cc, the ProtoTraceReader constructor;
	 * proto_importer_module.cc PushToStream): 0 packets and other formats,
	 * 1 TrackEvents, then 2, 3... the ftrace and compact_sched streams of
	 * its reader in the order they were made (scan_proto_pend.c
	 * tm_ps_ftrace_queue; 255 past 252).  Events of one ts
	 * leave the sorter by queue (trace_sorter.cc,
	 * SortAndExtractEventsUntilAllocId). */
	uint8_t queue;
	uint8_t flags;  /* TM_DETAIL_CAT, _NONAME, _EOF, _VALUE (oplog_valid.c checks) */
	uint64_t track; /* slice-stack key: same key = same stack (tid, track uuid) */
	int64_t dur;    /* X events: dur in the event's own units (ns); -1 none
			   (TM_DETAIL_EOF: its name at the end of its file) */
};

/* A RUN's values without decoding them all: a skip entry every
 * TM_RUN_SKIP elements gives the absolute value and the byte offset of that
 * element in the delta stream (tm_run_at, tm_run_lower_bound).
 *
 * Memory: once the runs held in memory by all logs pass
 * tm_oplog_spill_after bytes (an eighth of it for a log in 4 KiB pages,
 * below TM_BIG_MIN bytes), the delta streams of large runs go to one
 * unlinked temporary file of the process (in $TMPDIR, else /tmp) and only
 * their skip tables stay in memory; the readers below fetch the blocks they
 * need with pread.  A spill file that cannot be made or written keeps the
 * runs in memory; one that cannot be read back aborts, as out-of-memory. */
#define TM_RUN_SKIP 256u
struct tm_run {
	const uint8_t *deltas; /* zigzag delta varints; element 0 relative to base;
				  NULL when spilled */
	const uint8_t *skip;   /* n_skip entries of 16 bytes: int64 value, uint64 offset */
	uint32_t n;
	int64_t last;          /* value of element n-1 */
	uint64_t spill_off, spill_len; /* spilled: where the deltas are */
};
extern size_t tm_oplog_spill_after;
/* Test hooks: the writes and reads of spilled deltas so far (all logs), and
 * the holes punched in the spill file (under its lock). */
extern uint64_t tm_oplog_spill_writes, tm_oplog_spill_reads, tm_oplog_spill_punches;
/* Test hook: the values an ARRAY run's lane holds before the run is
 * flushed (oplog.c). */
extern size_t tm_oplog_lane_max;
int64_t tm_run_at(const struct tm_run *r, uint32_t i);
/* All n values into out[n]. */
void tm_run_decode(const struct tm_run *r, int64_t *out);
/* First index e in [lo, hi) whose value is >= x (strict: > x), or hi.
 * nb (may be NULL) gets the values of elements e - 1 and e when
 * lo < e < hi.  Reads at most one block of a spilled run. */
uint32_t tm_run_lower_bound(const struct tm_run *r, uint32_t lo, uint32_t hi, int64_t x, bool strict,
			    int64_t nb[2]);

struct tm_op {
	enum tm_op_kind kind;
	uint32_t machine;
	uint32_t clock;
	uint32_t seq;
	uint32_t flags;
	int64_t ts;
	uint32_t n;
	uint32_t primary;
	uint32_t stat; /* enum tm_stat_id, for TM_OP_STAT */
	uint32_t detail;
	const struct tm_op_clock *clocks; /* SNAPSHOT, REMOTE_SYNC */
	const uint32_t *counts;           /* REMOTE_SYNC: 2 per round */
	const int64_t *tss;               /* CONVERT_ARRAY */
	const char *text;                 /* SYSINFO, FATAL */
	uint32_t push_flags;              /* RUN: flags of each element's PUSH/CONVERT */
	uint32_t n_arrays;                /* RUN with TM_RUN_ARRAY: CONVERT_ARRAYs folded */
	struct tm_run run;                /* RUN (raw): the values */
	uint64_t offset;                  /* byte offset in the member where the op's packet/event starts */
};

/* The appending state of a log (tm_oplog.w).  The inline appenders below
 * read it; everything else is oplog.c's. */
struct tm_oplog_w {
	bool has_held;      /* a PACKET n=1 waiting to see its payload (stage->held) */
	bool run_unsorted;  /* a CONVERT run's staged values need sorting (ARRAY lanes: ln->unsorted) */
	uint32_t pkt_lim;   /* see run_p below */
	/* the open run's key, n = 0 if none: what its TM_OP_RUN head holds
	 * (oplog.c, run_op), not a whole struct tm_op */
	struct tm_run_key {
		uint32_t n;
		uint32_t flags;      /* TM_RUN_PACKET / CONVERT / ARRAY */
		uint32_t machine, clock;
		uint32_t push_flags;
		uint32_t n_arrays;   /* ARRAY: the CONVERT_ARRAYs folded */
		uint64_t offset;     /* the first element's */
	} run;
	/* An open PACKET run is encoded as it grows (oplog.c, pkt_add): its
	 * deltas end at run_p in the log's bytes (past room for the run's
	 * head and skip table, both written when it ends), run_last is its
	 * last value.  tm_oplog_packet_push_i extends it while run.n <
	 * pkt_lim (0: not a machine-0 PACKET run it may extend; else the next
	 * element that needs a skip entry or the run's end) and the run's
	 * clock and push_flags are the packet's. */
	uint8_t *run_p;
	int64_t run_last;
	int64_t *run_ts;    /* an open CONVERT run's values */
	size_t cap_run_ts;
	/* the rest, allocated when first needed (oplog.c) */
	struct tm_oplog_stage *stage;
};
/* The state of a log not being appended to: all zero, never written (read
 * only: an appender that wrote it would fault). */
extern const struct tm_oplog_w tm_oplog_w_none;

/* What few logs use (struct tm_oplog.x): per-event details (keep_events)
 * and the extents of spilled runs.  Its own block from the first such use;
 * every other log points at tm_oplog_x_none (all zero, never written), so
 * readers need no test.  (A session keeps one log per member, 10,000s in an
 * archive: these fields inline were 72 of a member's bytes.) */
struct tm_oplog_x {
	struct tm_detail *details;
	size_t n_details, cap_details;
	struct tm_buf pool; /* NUL-separated strings for details */
	struct tm_spilled {
		uint64_t off, len;
	} *spilled;             /* this log's extents of the spill file */
	size_t n_spilled, cap_spilled;
	/* added to every spilled run's offset: 0, or where a saved scan's
	 * deltas are (tm_oplog_use_source) */
	uint64_t spill_base;
	/* names of tracks, processes and threads (keep_events; tracknames.h),
	 * their names in pool; NULL: none (a block of its own: most logs have
	 * none, and nearly every log of a TAR of 10,000 small members has its
	 * side block for one spilled run: 56 bytes a member kept here) */
	struct tm_tn_tab *tn;
};
/* (a side block for every log of a TAR's 10,000s of members that spills
 * a run: keep it at this size or below) */
_Static_assert(sizeof(void *) != 8 || sizeof(struct tm_oplog_x) <= 88, "struct tm_oplog_x grew");
/* records, and an index by (kind, key) */
struct tm_tn_tab {
	struct tm_tn_rec *v;
	size_t n, cap;
	struct tm_u64map ix;
};
extern const struct tm_oplog_x tm_oplog_x_none;

struct tm_oplog {
	uint8_t *bytes;
	size_t len, cap;
	int64_t last_ts;  /* delta base while appending */
	uint64_t last_off;
	uint64_t n_ops;
	/* Runs (see TM_OP_RUN): off unless use_runs; call tm_oplog_finish
	 * after the last append. */
	bool use_runs;
	/* what only appending uses (struct tm_oplog_w): its own block while a
	 * log is appended to, freed by tm_oplog_finish (a session keeps one
	 * log per member); a finished or new log points at tm_oplog_w_none,
	 * which no appender writes (its open run is empty) */
	struct tm_oplog_w *w;
	uint64_t n_runs, n_run_elems;
	uint64_t mem_run_bytes; /* delta bytes of this log's runs held in memory */
	struct tm_oplog_x *x;   /* details and spilled extents (above) */
};
/* (10,000s of logs in a session: keep it at this size or below) */
_Static_assert(sizeof(struct tm_oplog) <= 96, "struct tm_oplog grew");

/* l->x, its own block (created on first use; for writers). */
struct tm_oplog_x *tm_oplog_x_own(struct tm_oplog *l);

void tm_oplog_init(struct tm_oplog *l);
void tm_oplog_fini(struct tm_oplog *l);
/* Append one op (fields as documented above; unused ones ignored). */
void tm_oplog_add(struct tm_oplog *l, const struct tm_op *op);
/* Flush a pending run; needed once after the last append when use_runs. */
void tm_oplog_finish(struct tm_oplog *l);
/* Convenience appenders for the hot paths. */
void tm_oplog_push(struct tm_oplog *l, uint32_t machine, int64_t ts, uint32_t flags,
		   uint32_t detail, uint64_t offset);
void tm_oplog_convert(struct tm_oplog *l, uint32_t machine, uint32_t clock, uint32_t seq,
		      int64_t ts, uint32_t flags, uint32_t detail, uint64_t offset);
void tm_oplog_packet_push(struct tm_oplog *l, uint32_t machine, uint32_t clock, uint32_t seq, int64_t ts,
			  uint32_t push_flags, uint64_t offset);
/* tm_oplog_packet_push, inline where it only extends the open run (nearly
 * every call on a TrackEvent trace): the element's delta written at once
 * (as encode_deltas would at the run's end).  Everything else (another
 * key, a value going down, a held PACKET, a skip entry due, the run full,
 * the bytes' room) is behind pkt_lim, set by the function.  (The key is
 * compared field by field: a 64-bit key built from the 32-bit push_flags
 * the caller just stored made the compiler load 8 bytes over a 4-byte
 * store, a store-forwarding stall on every packet.) */
#define TM_RUN_MAX 262144u
/* A run element's delta d: zigzag, then a varint at p (one or two bytes
 * nearly always); returns the varint's end.  The op log's one writer of
 * deltas (oplog.c encodes the same way at a run's end). */
static inline uint64_t
tm_ol_zz(int64_t d)
{
	return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

static inline uint8_t *
tm_ol_put_varint(uint8_t *p, uint64_t z)
{
	if (z < 0x80) {
		p[0] = (uint8_t)z;
		return p + 1;
	}
	if (z < 0x4000) {
		p[0] = (uint8_t)(z | 0x80);
		p[1] = (uint8_t)(z >> 7);
		return p + 2;
	}
	while (z >= 0x80) {
		*p++ = (uint8_t)(z | 0x80);
		z >>= 7;
	}
	*p++ = (uint8_t)z;
	return p;
}

/* Sorting a staged run (oplog.c tm_ol_sort): v[0..n) sorted, tmp n values
 * of scratch, sb the stretches' (kept between calls; free sb->st). */
struct tm_ol_stretch {
	size_t at, n;
	uint32_t next; /* the next stretch of its chain (UINT32_MAX: none) */
};
struct tm_ol_sort_buf {
	struct tm_ol_stretch *st;
	size_t cap_st;
};
void tm_ol_sort(int64_t *v, size_t n, int64_t *tmp, struct tm_ol_sort_buf *sb);

/* Whether v[0..n) is in ascending order (ties allowed): one pass, four
 * compares a step and no exit at the first descent (oplog.c add_array; a
 * loop that stopped there took ~9 instructions a value of compact_sched's
 * arrays, which are nearly always in order). */
static inline bool
tm_ol_sorted(const int64_t *v, size_t n)
{
	unsigned bad = 0;
	size_t i = 1;
	for (; i + 4 <= n; i += 4)
		bad |= (unsigned)(v[i] < v[i - 1]) | (unsigned)(v[i + 1] < v[i]) |
		       (unsigned)(v[i + 2] < v[i + 1]) | (unsigned)(v[i + 3] < v[i + 2]);
	for (; i < n; i++)
		bad |= (unsigned)(v[i] < v[i - 1]);
	return !bad;
}

static inline void
tm_oplog_packet_push_i(struct tm_oplog *l, uint32_t machine, uint32_t clock, uint32_t seq,
		       int64_t ts, uint32_t push_flags, uint64_t offset)
{
	struct tm_oplog_w *w = l->w;
	uint32_t n = w->run.n;
	int64_t last = w->run_last;
	if (__builtin_expect(machine == 0 && n < w->pkt_lim &&
				     w->run.clock == clock && w->run.push_flags == push_flags &&
				     ts >= last,
			     1)) {
		w->run_p = tm_ol_put_varint(w->run_p, tm_ol_zz(wrap_sub(ts, last)));
		w->run_last = ts;
		w->run.n = n + 1;
		l->n_ops += 2;
		return;
	}
	tm_oplog_packet_push(l, machine, clock, seq, ts, push_flags, offset);
}
/* tm_oplog_convert, inline where it only extends the open CONVERT run (a
 * JSON or systrace event without details): the same checks, in the same
 * order of effect. */
static inline void
tm_oplog_convert_i(struct tm_oplog *l, uint32_t machine, uint32_t clock, uint32_t seq, int64_t ts,
		   uint32_t flags, uint32_t detail, uint64_t offset)
{
	struct tm_oplog_w *w = l->w;
	struct tm_run_key *r = &w->run;
	if (__builtin_expect(detail == 0 && flags == TM_CONV_FAIL_DROP && r->n && !w->has_held &&
				     r->flags == TM_RUN_CONVERT && r->machine == machine &&
				     r->clock == clock && r->push_flags == flags &&
				     r->n < TM_RUN_MAX && r->n < w->cap_run_ts,
			     1)) {
		l->n_ops++;
		if (ts < w->run_ts[r->n - 1])
			w->run_unsorted = true;
		w->run_ts[r->n++] = ts;
		return;
	}
	tm_oplog_convert(l, machine, clock, seq, ts, flags, detail, offset);
}
void tm_oplog_stat(struct tm_oplog *l, uint32_t machine, enum tm_stat_id stat, uint32_t n);
void tm_oplog_fatal(struct tm_oplog *l, uint32_t machine, const char *text, uint64_t offset);
/* Add a detail; returns the value for tm_op.detail (1 + index). */
uint32_t tm_oplog_detail(struct tm_oplog *l, const char *name, size_t name_len, char phase,
			 uint64_t track, int64_t dur);
/* The same with a category (cat_len 0: none); a name holding a NUL is cut
 * there. */
uint32_t tm_oplog_detail_cat(struct tm_oplog *l, const char *name, size_t name_len,
			     const char *cat, size_t cat_len, char phase, uint64_t track,
			     int64_t dur);
const char *tm_oplog_detail_name(const struct tm_oplog *l, const struct tm_detail *d);
/* Its name when its packet is deferred to the end of its file
 * (TM_DETAIL_EOF), else tm_oplog_detail_name. */
const char *tm_oplog_detail_eof_name(const struct tm_oplog *l, const struct tm_detail *d);
/* Detail id's name at the end of its file is name (len bytes; NULL: none). */
void tm_oplog_detail_set_eof_name(struct tm_oplog *l, uint32_t id, const char *name, size_t len);
/* The detail's category, or NULL. */
const char *tm_oplog_detail_cat_of(const struct tm_oplog *l, const struct tm_detail *d);

struct tm_opiter {
	const struct tm_oplog *log;
	size_t pos;
	int64_t last_ts;
	uint64_t last_off;
	/* scratch for decoded arrays */
	struct tm_op_clock *clocks;
	size_t cap_clocks;
	uint32_t *counts;
	size_t cap_counts;
	int64_t *tss;
	size_t cap_tss;
	struct tm_buf text;
	bool raw_runs; /* yield TM_OP_RUN as is instead of expanding it */
	/* expansion state of the current run */
	struct tm_op run;
	uint32_t run_i;
	bool run_push_next;
	int64_t *run_tss;
	size_t cap_run_tss;
	size_t run_pos;        /* where the open run's RUN op starts */
	size_t run_flags_pos;  /* where the last RUN op's flags are */
	int64_t run_last_ts;
	uint64_t run_last_off;
};

/* A saved iterator position (also inside an expanded run). */
struct tm_oppos {
	size_t pos;
	int64_t last_ts;
	uint64_t last_off;
	uint32_t run_i; /* UINT32_MAX: not inside a run */
};
void tm_opiter_tell(const struct tm_opiter *it, struct tm_oppos *p);
void tm_opiter_seek(struct tm_opiter *it, const struct tm_oppos *p);

void tm_opiter_init(struct tm_opiter *it, const struct tm_oplog *log);
void tm_opiter_fini(struct tm_opiter *it);
/* Decode the next op into *op (arrays borrowed until the next call); false at end. */
bool tm_opiter_next(struct tm_opiter *it, struct tm_op *op);

/* The ops of src (a log without runs, e.g. one with details) appended to
 * dst (initialised, use_runs set) without their details, then finished: the
 * same events folded into runs, for the replay's fast path (the summary of a
 * session that keeps per-event details, session.c). */
void tm_oplog_fold(const struct tm_oplog *src, struct tm_oplog *dst);

/* A log read back whole (saved scans): its large runs go to the spill file
 * as if they had been appended now (same values, same ops). */
void tm_oplog_spill_runs(struct tm_oplog *l);
/* The whole log as one byte stream with every run's deltas inline (the
 * encoding without the spill file), handed to put in pieces. */
void tm_oplog_write_inline(const struct tm_oplog *l, void (*put)(void *ctx, const void *p, size_t n),
			   void *ctx);
/* Saved scans, format 2 (scancache.c): the log split in two streams.  The
 * head is the log's bytes with the deltas of every run of at least
 * TM_SPLIT_MIN delta bytes out of line (the run marked TM_RUN_SPILLED, its
 * offset relative to the first out-of-line byte); the deltas are those
 * runs' deltas, in op order.  Either put may be NULL; returns the length of
 * the deltas. */
#define TM_SPLIT_MIN 1024u
uint64_t tm_oplog_write_split(const struct tm_oplog *l,
			      void (*put_h)(void *ctx, const void *p, size_t n), void *hctx,
			      void (*put_deltas)(void *ctx, const void *p, size_t n), void *dctx);
/* Where tm_oplog_valid_split reads a split log's deltas: get returns the
 * len bytes at off of the deltas stream (valid until the next call), or
 * NULL when they are not there. */
struct tm_oplog_deltas {
	const uint8_t *(*get)(void *ctx, uint64_t off, uint64_t len);
	void *ctx;
};
/* tm_oplog_valid for a head whose spilled runs' deltas come from d (NULL:
 * no spilled run allowed); *inline_deltas (may be NULL) gets the delta
 * bytes of the runs kept in the head. */
bool tm_oplog_valid_split(const struct tm_oplog *l, const struct tm_oplog_deltas *d,
			  uint64_t *inline_deltas, char *why, size_t cap);
/* A read-only file the spilled runs of logs may refer to in place: fd is
 * the caller's no more; returns the source's base; tm_oplog_source_put
 * gives the caller's reference back (closed once no log refers to it). */
uint64_t tm_oplog_source(int fd);
void tm_oplog_source_put(uint64_t base);
/* A validated head read back (its bytes in l->bytes): its spilled runs'
 * deltas are the len bytes at off of the source at base; mem_bytes (from
 * tm_oplog_valid_split) are counted as runs held in memory. */
void tm_oplog_use_source(struct tm_oplog *l, uint64_t base, uint64_t off, uint64_t len,
			 uint64_t mem_bytes);
/* The byte encoding's version: saved scans (scancache.c) written with
 * another are not read.  Bump it with every change of encode_op. */
#define TM_OPLOG_ENCODING 3
/* Whether a finished log's bytes and details are what encode_op could have
 * written: every op decodes within len, kinds, stats and detail references
 * are in range, each run's skip table and last value match its deltas and
 * its values are sorted.  The iterators trust their input; a log read back
 * from disk is checked with this first.  why (cap bytes) says what is wrong. */
bool tm_oplog_valid(const struct tm_oplog *l, char *why, size_t cap);

#endif

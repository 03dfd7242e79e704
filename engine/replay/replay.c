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
 *
 * This file: the per-file replay (readers, placing, ops, runs) and the
 * passes; the parts it calls are named in replay_priv.h.
 */
#include "replay_priv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MANIFEST_RAW_BASE (UINT64_C(1) << 32)

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
	/* dumpstate log lines held for a timezone (TM_CONV_WAIT_TZ) */
	struct tm_op *held;
	size_t n_held, cap_held;
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
			tm_rp_mfail(p, "perfetto_manifest: machines: trace has a packet from undeclared machine "
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
		c = tm_rp_fork_ctx(p, fs->file, raw);
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
		tm_rp_mfail(p, "perfetto_manifest: a `machine` override attributes the file to one machine, "
			"but the file contains packets from multiple machines. Replace `machine` with a "
			"`machines` block that maps each embedded machine_id to a named machine, e.g. "
			"\"machines\": [{\"id\": 0, \"name\": \"phone\"}, {\"id\": 7, \"name\": "
			"\"vm\"}].");
		return false;
	}
	if (fs->has_clock_override) {
		tm_rp_mfail(p, "perfetto_manifest: a `clocks` override applies only to a single-machine "
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
		    tm_rp_mc_find(p, machine) < 0) {
			p->rows[h->row].raw = machine;
			tm_rp_mc_add(p, machine, h->row);
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
	tm_rp_record_event(p, fs->file, detail, ts, c->row, -1);
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
		tm_rp_stat_add(p, c, st, 1);
		p->acc[fs->file].events++;
		tm_rp_missing_add(&p->acc[fs->file], st, 1);
		tm_rp_record_event(p, fs->file, detail, ts, c->row, (int)st);
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
		tm_rp_stat_add(p, c, TM_STAT_FTRACE_BEFORE_START, 1);
		tm_rp_missing_add(&p->acc[fs->file], TM_STAT_FTRACE_BEFORE_START, 1);
		tm_rp_record_event(p, fs->file, detail, ts, c->row, (int)TM_STAT_FTRACE_BEFORE_START);
		return;
	}
	push(p, fs, c, ts, detail, te);
}

static void
drop(struct tm_replay *p, struct fstate *fs, struct tm_tracker *c, enum tm_stat_id st, int64_t raw, uint32_t detail)
{
	p->acc[fs->file].events++;
	tm_rp_missing_add(&p->acc[fs->file], st, 1);
	tm_rp_record_event(p, fs->file, detail, raw, c->row, (int)st);
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

static void run_convert_at(struct tm_replay *p, struct fstate *fs, const struct tm_op *op,
			   int64_t ts);

/* A log line's CONVERT (TM_CONV_LOCAL): AndroidLogReader::ProcessEvent,
 * then SendToSorter at local time - the timezone offset set so far. */
static void
run_convert_local(struct tm_replay *p, struct fstate *fs, const struct tm_op *op)
{
	if (op->flags & TM_CONV_WAIT_TZ) {
		if (!p->has_tz) { /* held in ms (duration_cast: toward zero) */
			XGROW(fs->held, fs->cap_held, fs->n_held + 1);
			fs->held[fs->n_held] = *op;
			fs->held[fs->n_held++].ts = op->ts / 1000000 * 1000000;
			return;
		}
		for (size_t i = 0; i < fs->n_held && !p->error; i++)
			run_convert_at(p, fs, &fs->held[i],
				       (int64_t)((uint64_t)fs->held[i].ts - (uint64_t)p->tz));
		fs->n_held = 0;
	}
	run_convert_at(p, fs, op, (int64_t)((uint64_t)op->ts - (uint64_t)(p->has_tz ? p->tz : 0)));
}

static void
run_convert(struct tm_replay *p, struct fstate *fs, const struct tm_op *op)
{
	if (op->flags & TM_CONV_LOCAL)
		run_convert_local(p, fs, op);
	else
		run_convert_at(p, fs, op, op->ts);
}

/* op at ts (op->ts, or a log line's after its timezone). */
static void
run_convert_at(struct tm_replay *p, struct fstate *fs, const struct tm_op *op, int64_t ts)
{
	struct tm_tracker *c = reader_ctx(p, fs, op->machine);
	struct tm_clockid clk;
	int64_t v = ts; /* no clock: the raw value */
	enum tm_conv_result why;
	if (resolve_clock(fs, c, op->clock, op->seq, &clk) &&
	    !tm_rp_to_trace_time(p, c, clk, ts, op->flags & TM_CONV_SUPPRESS, &v, &why)) {
		if (op->flags & TM_CONV_FAIL_FATAL) {
			tm_rp_fail(p, "Failed to convert timestamp to trace time");
			return;
		}
		if (!(op->flags & TM_CONV_FAIL_KEEP_RAW)) {
			if (!(op->flags & TM_CONV_NO_PUSH))
				drop(p, fs, c, tm_rp_why_stat(why), ts, op->detail);
			return;
		}
		v = ts;
	}
	if (op->flags & TM_CONV_FTRACE) {
		int64_t thr = started_ns(p, c);
		if (v >= 0 && v < thr) { /* not parsed: no systrace_parse_failure either */
			place(p, fs, c, v, op->detail, false, thr);
			return;
		}
	}
	if (op->flags & TM_CONV_NO_PID)
		tm_rp_stat_add(p, c, TM_STAT_STRACE_MISSING_PID, 1);
	p->untimed = op->flags & TM_CONV_UNTIMED;
	if (!(op->flags & TM_CONV_NO_PUSH))
		push(p, fs, c, v, op->detail, op->flags & TM_CONV_NEG_TE_INVALID);
	p->untimed = false;
	if ((op->flags & TM_CONV_ATRACE_FAIL) && v >= 0)
		tm_rp_stat_add(p, c, TM_STAT_SYSTRACE_PARSE_FAILURE, 1);
}

static void
run_snapshot(struct tm_replay *p, struct fstate *fs, const struct tm_op *op)
{
	struct tm_tracker *c = reader_ctx(p, fs, op->machine);
	if (op->flags & TM_SNAP_PACKET) {
		if (c->is_pin) {
			tm_rp_mfail(p, "perfetto_manifest: clock overrides require the trace to use a single "
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
			tm_rp_set_global_clock(p, c, d);
		}
	}
	tm_rp_add_snapshot(p, c, op->clocks, op->n, op->seq);
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
		tm_rp_add_snapshot(p, c, cl[i], cn[i], op->seq);
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
		p->untimed = op->flags & TM_CONV_UNTIMED;
		push(p, fs, c, in_pkt ? pkt_ts : op->ts, op->detail, op->flags & TM_PUSH_TRACK_EVENT);
		p->untimed = false;
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
			if (have && !tm_rp_to_trace_time(p, c, clk, op->tss[i], false, &v, &why)) {
				/* the rest of the array is abandoned (one failure) */
				p->acc[fs->file].events += op->n - i;
				tm_rp_missing_add(&p->acc[fs->file], tm_rp_why_stat(why), op->n - i);
				for (uint32_t k = i; k < op->n; k++)
					tm_rp_record_event(p, fs->file, 0, op->tss[k], c->row, (int)tm_rp_why_stat(why));
				break;
			}
			place(p, fs, c, v, 0, false, started_ns(p, c));
			if (p->want_ph && v >= 0 && op->flags >> TM_ARR_QUEUE_SHIFT) {
				/* held by the sorter (a negative one was dropped) */
				XGROW(p->ph, p->cap_ph, p->n_ph + 1);
				p->ph[p->n_ph++] = (struct tm_phantom){v, (uint32_t)fs->file, c->row,
								       (uint32_t)p->n_evs,
								       (uint8_t)(op->flags >> TM_ARR_QUEUE_SHIFT)};
			}
		}
		break;
	}
	case TM_OP_SERVICE: {
		c = reader_ctx(p, fs, op->machine);
		struct tm_clockid clk;
		int64_t v, ts = op->ts; /* not converted: the raw value */
		if (resolve_clock(fs, c, op->clock ? op->clock : TM_CLOCK_BOOTTIME, op->seq, &clk) &&
		    tm_rp_to_trace_time(p, c, clk, op->ts, true, &v, NULL))
			ts = v;
		if (op->flags & TM_SVC_TRACING_STARTED)
			set_started(p, c, ts);
		break;
	}
	case TM_OP_REMOTE_SYNC:
		run_remote_sync(p, fs, op);
		break;
	case TM_OP_TIMEZONE:
		p->has_tz = true;
		p->tz = op->ts;
		break;
	case TM_OP_SYSINFO:
		c = reader_ctx(p, fs, op->machine);
		free(p->rows[c->row].name);
		p->rows[c->row].name = xstrdup(op->text);
		break;
	case TM_OP_STAT:
		c = reader_ctx(p, fs, op->machine);
		tm_rp_stat_add(p, c, (enum tm_stat_id)op->stat, op->n);
		if (tm_stat_loses_events((enum tm_stat_id)op->stat)) {
			/* a scanner's count of events it saw lost (a TrackEvent
			 * whose legacy timestamp is negative) */
			tm_rp_missing_add(&p->acc[fs->file], (enum tm_stat_id)op->stat, op->n);
			for (uint32_t k = 0; k < op->n; k++)
				tm_rp_record_event(p, fs->file, 0, op->ts, c->row, (int)op->stat);
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
		tm_rp_fail(p, "%s", op->text);
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
			if (tm_rp_to_trace_time(p, c, (struct tm_clockid){TM_CLOCK_MONOTONIC, 0, 0, 0}, ts,
					  false, &v, NULL))
				ts = v;
			have = false;
		}
	}
	if (have) {
		int64_t v;
		enum tm_conv_result why;
		if (tm_rp_to_trace_time_via(p, c, clk, ts, !final, &v, &why, slot != SIZE_MAX ? &via : NULL)) {
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
			tm_rp_stat_add(p, c, TM_STAT_UNDEFERRABLE, 1);
			fail_stat = tm_rp_why_stat(why);
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
		tm_rp_stat_add(p, c, te ? TM_STAT_TE_INVALID_TS : TM_STAT_NEG_DROPPED, k - j);
		tm_rp_missing_add(a, te ? TM_STAT_TE_INVALID_TS : TM_STAT_NEG_DROPPED, k - j);
	}
	int64_t vk = k == j ? vj : nb[1]; /* element k's value, when k < e */
	if (k < e && vk + off < thr) {
		/* then up to the first with v + off >= thr (place): below
		 * tracing_started_ns; none when thr - off is past every value */
		int64_t x, nb2[2];
		uint32_t k2 = __builtin_sub_overflow(thr, off, &x) ? e
			      : tm_run_lower_bound(r, k, e, x, false, nb2);
		tm_rp_stat_add(p, c, TM_STAT_FTRACE_BEFORE_START, k2 - k);
		tm_rp_missing_add(a, TM_STAT_FTRACE_BEFORE_START, k2 - k);
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
	if (tm_rp_to_trace_time(p, c, clk, ts, is_packet && !final, &v, &why)) {
		place(p, fs, c, v, 0, te, thr);
		return;
	}
	if (is_packet && !final) {
		int64_t sh;
		(void)defer_packet(p, fs, c, clk, ts, pos, &sh);
		return;
	}
	if (is_packet)
		tm_rp_stat_add(p, c, TM_STAT_UNDEFERRABLE, 1);
	p->acc[fs->file].events++;
	tm_rp_missing_add(&p->acc[fs->file], tm_rp_why_stat(why), 1);
	tm_rp_record_event(p, fs->file, 0, ts, c->row, (int)tm_rp_why_stat(why));
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
	if (!tm_rp_to_trace_time(p, c, clk, r0, is_packet && !final, &v0, &why)) {
		if (is_packet && !final) {
			/* a global clock: never incremental (clockgraph.c refuses
			 * it), so no shadow to step */
			defer_at(fs, pos);
			return;
		}
		tm_rp_stat_add(p, c, tm_rp_why_stat(why), n_fail - 1);
		if (is_packet)
			tm_rp_stat_add(p, c, TM_STAT_UNDEFERRABLE, n);
		p->acc[fs->file].events += n;
		tm_rp_missing_add(&p->acc[fs->file], tm_rp_why_stat(why), n);
		if (p->src->keep_events) {
			const int64_t *v = run_values(p, r);
			for (uint32_t i = 0; i < n; i++)
				tm_rp_record_event(p, fs->file, 0, v[i], c->row, (int)tm_rp_why_stat(why));
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
				tm_rp_missing_add(&p->acc[fs->file], tm_rp_why_stat(res), 1);
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
	const char *path = tm_rp_mpath(p, mb, &plen);
	if (p->m && path)
		e = tm_manifest_entry_by_path(p->m, path, plen, &ei);
	fs.es = e ? &p->entries[ei] : NULL;
	uint64_t base_raw = fs.es && fs.es->has_machine_id ? fs.es->machine_id : 0;
	fs.host = tm_rp_fork_ctx(p, mi, base_raw);
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
			tm_rp_set_global_clock(p, fs.host, tc);
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
	free(fs.held);
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
	struct tm_tracker *c = tm_rp_fork_ctx(p, z, 0);
	tm_rp_set_global_clock(p, c, (struct tm_clockid){TM_CLOCK_REALTIME, 0, 0, 0});
	if (p->bugreport < 0)
		p->bugreport = (long)z;
}

static void
process_manifest(struct tm_replay *p, size_t mi)
{
	const struct tm_member *mb = &p->src->in->members[mi];
	if (p->any_forked) {
		tm_rp_mfail(p, "perfetto_manifest file must be the first trace file in the input");
		return;
	}
	if (p->manifest_seen) {
		tm_rp_mfail(p, "multiple perfetto_manifest files in archive");
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
			tm_rp_apply_manifest(p, mb->trace_file_id);
			return;
		}
		if (!sl->is_ok) {
			tm_rp_mfail(p, "%s", sl->err.msg);
			if (sl->err.hint[0])
				p->hint = xstrdup(sl->err.hint);
			return;
		}
		m = &sl->m;
	}
	p->m = m;
	p->entries = xcalloc(m->n_files + 1, sizeof *p->entries);
	tm_rp_apply_manifest(p, mb->trace_file_id);
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
		tm_rp_fail(p, "Arrow files can only be loaded from a Perfetto export whose "
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
		tm_rp_mfail(p, "perfetto_manifest: overrides are not supported for trace files which are "
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
			if (src->scans[i]) {
				const struct tm_oplog_x *x = src->scans[i]->log.x;
				n += x->n_details;
				/* the compact_sched events bound the sorter's runs
				 * (struct tm_phantom): kept only where the order of
				 * events of one ts can matter, B/E slices */
				for (size_t d = 0; d < x->n_details && !p.want_ph; d++)
					p.want_ph = x->details[d].phase == 'B' || x->details[d].phase == 'E';
			}
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
		tm_rp_apply_manifest(&p, VIRTUAL_MANIFEST_TID);
	}
	const struct tm_input *in = src->in;
	for (size_t k = 0; k < in->n_proc && !p.error; k++) {
		if (in->fatal && k == in->fatal_after) {
			if (in->fatal_where && !p.error)
				p.error_where = xstrdup(in->fatal_where);
			tm_rp_fail(&p, "%s", in->fatal);
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
					tm_rp_mfail(&p, "multiple perfetto_manifest files in archive");
				else if (override && mi == src->first_manifest) {
					p.manifest_seen = false;
					if (p.any_forked)
						tm_rp_mfail(&p, "perfetto_manifest file must be the first trace "
							 "file in the input");
					else {
						p.manifest_seen = true;
						p.m = override;
						p.entries = xcalloc(override->n_files + 1, sizeof *p.entries);
						tm_rp_apply_manifest(&p, mb->trace_file_id);
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
			tm_rp_fail(&p, "Unknown trace type provided (ERR:fmt)");
			break;
		}
		if (mb->format == TM_FMT_NINJA_LOG && mb->parent >= 0) {
			tm_rp_fail(&p, "Ninja traces currently do not support being contained inside other "
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
		tm_rp_fail(&p, "%s", in->fatal);
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
	tm_rp_slice_tracks(&p);
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
	free(p.cvals);
	free(p.ev_track);
	free(p.ev_queue);
	free(p.ev_cat);
	free(p.ph);
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

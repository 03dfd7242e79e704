/* SPDX-License-Identifier: MIT */
/*
 * The proto scanner's TracePacket (scan_proto_priv.h): its top-level fields
 * (tm_ps_decode_packet), and the packet kinds other than TrackEvent
 * (scan_proto.c) and ftrace (scan_ftrace.c): clock snapshots, remote clock
 * sync, the service's tracing_started, TracePacketDefaults,
 * ThreadDescriptor, StreamingProfilePacket, SystemInfo and statsd atoms.
 * Called by scan_proto.c's general path only.
 */
#include <stdlib.h>
#include <string.h>

#include "scan_proto_priv.h"

static bool
is_handler(uint32_t id)
{
	switch (id) {
	case TP_FTRACE_EVENTS:
	case TP_TRACK_EVENT:
	case TP_SYSTEM_INFO:
	case TP_CHROME_BENCHMARK_METADATA:
	case TP_CHROME_METADATA:
	case TP_STREAMING_PROFILE:
	case TP_CPU_INFO:
	case TP_UI_STATE:
	case TP_STATSD_ATOM:
	case TP_TRACE_UUID:
	case TP_GPU_INFO:
	case TP_INTERRUPT_INFO:
		return true;
	}
	return false;
}

/* Walk a TracePacket's top-level fields.  false: malformed (the fields
 * before the bad one are kept, as with protozero). */
bool
tm_ps_decode_packet(const uint8_t *p, size_t n, struct pkt *k)
{
	const uint8_t *end = p + n, *lim = k->lim;
	while (p < end) {
		uint64_t tag, v = 0;
		const uint8_t *fp = NULL;
		size_t fl = 0;
		p = rd_tag(p, end, lim, &tag);
		if (UNLIKELY(!p))
			return false;
		uint32_t wt = (uint32_t)(tag & 7);
		p = rd_value(p, end, lim, wt, &v, &fp, &fl);
		if (UNLIKELY(!p))
			return false;
		/* The common fields first: they are never handlers. */
		switch (tag) {
		case TAG(TP_TIMESTAMP, WT_VARINT):
			k->has_ts = true;
			k->ts = v;
			continue;
		case TAG(TP_SEQ_ID, WT_VARINT):
			k->has_seq = true;
			k->seq = (uint32_t)v;
			continue;
		case TAG(TP_SEQ_FLAGS, WT_VARINT):
			k->has_flags = true;
			k->flags = (uint32_t)v;
			continue;
		case TAG(TP_TIMESTAMP_CLOCK_ID, WT_VARINT):
			k->has_clock = true;
			k->clock = (uint32_t)v;
			continue;
		default:
			break;
		}
		uint32_t id = (uint32_t)(tag >> 3);
		switch (id) {
		case TP_INCR_STATE_CLEARED:
			if (wt == WT_VARINT)
				k->cleared_legacy = v != 0;
			break;
		case TP_PREV_PACKET_DROPPED:
			if (wt == WT_VARINT)
				k->dropped = (uint32_t)v;
			break;
		case TP_MACHINE_ID:
			if (wt == WT_VARINT)
				k->machine = (uint32_t)v;
			break;
		case TP_CLOCK_SNAPSHOT:
			if (wt == WT_LEN) {
				k->has_snapshot = true;
				k->snapshot = (struct field){id, wt, v, fp, fl};
			}
			break;
		case TP_DEFAULTS:
			if (wt == WT_LEN) {
				k->has_defaults = true;
				k->defaults = (struct field){id, wt, v, fp, fl};
			}
			break;
		case TP_INTERNED_DATA:
			if (wt == WT_LEN) {
				k->has_interned = true;
				k->interned = (struct field){id, wt, v, fp, fl};
			}
			break;
		case TP_REMOTE_CLOCK_SYNC:
			if (wt == WT_LEN) {
				k->has_remote = true;
				k->remote = (struct field){id, wt, v, fp, fl};
			}
			break;
		case TP_SERVICE_EVENT:
			k->has_service = true;
			k->service = (struct field){id, wt, v, fp, wt == WT_LEN ? fl : 0};
			break;
		case TP_EXTENSION_DESCRIPTOR:
			k->has_ext = true;
			break;
		case TP_SYNC_MARKER:
			k->has_sync = true;
			break;
		case TP_COMPRESSED_PACKETS:
			if (wt == WT_LEN) {
				k->has_compressed = true;
				k->compressed = (struct field){id, wt, v, fp, fl};
			}
			break;
		case TP_ZSTD_COMPRESSED_PACKETS:
			if (wt == WT_LEN) {
				k->has_zstd = true;
				k->zstd = (struct field){id, wt, v, fp, fl};
			}
			break;
		case TP_CHROME_EVENTS:
		case TP_CHROME_METADATA:
			k->has_chrome = true;
			break;
		default:
			break;
		}
		if (!k->handler && wt == WT_LEN) {
			if (id == TP_THREAD_DESCRIPTOR && !k->has_td_before) {
				k->has_td_before = true;
				k->td = (struct field){id, wt, v, fp, fl};
			} else if (is_handler(id)) {
				k->handler = id;
				k->hfield = (struct field){id, wt, v, fp, fl};
			}
		}
	}
	return true;
}

/* ClockSnapshot → SNAPSHOT op (or the sequence-clock fatal). */
void
tm_ps_snapshot(struct ps *s, const struct pkt *k)
{
	const uint8_t *p = k->snapshot.p, *end = p + k->snapshot.len;
	struct field f;
	uint32_t primary = 0;
	size_t base = s->n_pclocks;
	while (next_field(&p, end, &f) > 0) {
		if (f.id == CS_PRIMARY_TRACE_CLOCK && f.wt == WT_VARINT) {
			primary = (uint32_t)f.v;
		} else if (f.id == CS_CLOCKS && f.wt == WT_LEN) {
			struct tm_op_clock c = {0, 0, 1, false};
			const uint8_t *q = f.p, *qe = f.p + f.len;
			struct field g;
			while (next_field(&q, qe, &g) > 0) {
				if (g.wt != WT_VARINT)
					continue;
				if (g.id == CLK_ID)
					c.id = (uint32_t)g.v;
				else if (g.id == CLK_TIMESTAMP)
					c.ts = (int64_t)g.v;
				else if (g.id == CLK_IS_INCREMENTAL)
					c.is_incremental = g.v != 0;
				else if (g.id == CLK_UNIT_MULTIPLIER_NS)
					c.unit = g.v ? g.v : 1;
			}
			if (tm_clock_is_seq(c.id) && !k->seq) {
				s->n_pclocks = base;
				tm_ps_emit(s, &(struct tm_op){
						.kind = TM_OP_FATAL, .machine = k->machine,
						.offset = k->off,
						.text = "ClockSnapshot packet is specifying a "
							"sequence-scoped clock id (0) but the "
							"TracePacket sequence_id is zero"});
				return;
			}
			XGROW(s->pclocks, s->cap_pclocks, s->n_pclocks + 1);
			s->pclocks[s->n_pclocks++] = c;
			note_clock(s, c.id);
		}
	}
	struct tm_op op = {.kind = TM_OP_SNAPSHOT, .machine = k->machine, .seq = k->seq,
			   .flags = TM_SNAP_PACKET, .primary = primary,
			   .n = (uint32_t)(s->n_pclocks - base),
			   .clocks = s->n_pclocks > base ? s->pclocks + base : NULL,
			   .offset = k->off};
	s->sc->has_snapshot = true;
	tm_ps_emit(s, &op);
	s->n_pclocks = base;
}

/* RemoteClockSync → REMOTE_SYNC op: per round the client clocks, then the
 * host clocks, each as given (unit 1, not incremental, as TP adds them). */
static void
snap_clocks(struct ps *s, const uint8_t *p, size_t n, uint32_t *count)
{
	*count = 0;
	if (!n)
		return; /* a round without this side: p is NULL (no NULL + 0) */
	const uint8_t *end = p + n;
	struct field f;
	while (next_field(&p, end, &f) > 0) {
		if (f.id != CS_CLOCKS || f.wt != WT_LEN)
			continue;
		struct tm_op_clock c = {0, 0, 1, false};
		const uint8_t *q = f.p, *qe = f.p + f.len;
		struct field g;
		while (next_field(&q, qe, &g) > 0) {
			if (g.wt != WT_VARINT)
				continue;
			if (g.id == CLK_ID)
				c.id = (uint32_t)g.v;
			else if (g.id == CLK_TIMESTAMP)
				c.ts = (int64_t)g.v;
		}
		XGROW(s->pclocks, s->cap_pclocks, s->n_pclocks + 1);
		s->pclocks[s->n_pclocks++] = c;
		(*count)++;
	}
}

/* TracingServiceEvent.tracing_started (ProtoTraceReader::ParseServiceEvent:
 * a true value sets the tracing_started_ns metadata; the last field of a
 * number wins, as the decoder reads it; a malformed field ends the walk). */
bool
tm_ps_service_started(const struct field *svc)
{
	if (!svc->p) /* not length-delimited: no fields to read */
		return false;
	const uint8_t *p = svc->p, *end = p + svc->len;
	struct field f;
	bool started = false;
	while (p && next_field(&p, end, &f) > 0)
		if (f.id == 2 && f.wt == WT_VARINT)
			started = f.v != 0;
	return started;
}

void
tm_ps_remote_sync(struct ps *s, const struct pkt *k)
{
	const uint8_t *p = k->remote.p, *end = p + k->remote.len;
	struct field f;
	uint32_t *counts = NULL;
	size_t n_rounds = 0, cap = 0;
	size_t base = s->n_pclocks;
	while (next_field(&p, end, &f) > 0) {
		if (f.id != RCS_SYNCED_CLOCKS || f.wt != WT_LEN)
			continue;
		struct field client, host;
		memset(&client, 0, sizeof client);
		memset(&host, 0, sizeof host);
		const uint8_t *q = f.p, *qe = f.p + f.len;
		struct field g;
		while (next_field(&q, qe, &g) > 0) {
			if (g.wt == WT_LEN && g.id == RCS_CLIENT_CLOCKS)
				client = g;
			else if (g.wt == WT_LEN && g.id == RCS_HOST_CLOCKS)
				host = g;
		}
		XGROW(counts, cap, 2 * n_rounds + 2);
		snap_clocks(s, client.p, client.len, &counts[2 * n_rounds]);
		snap_clocks(s, host.p, host.len, &counts[2 * n_rounds + 1]);
		n_rounds++;
	}
	struct tm_op op = {.kind = TM_OP_REMOTE_SYNC, .machine = k->machine,
			   .n = (uint32_t)n_rounds, .counts = counts,
			   .clocks = s->n_pclocks > base ? s->pclocks + base : NULL,
			   .offset = k->off};
	tm_ps_emit(s, &op);
	free(counts);
	s->n_pclocks = base;
}

void
tm_ps_defaults(struct seq *q, const struct field *d)
{
	const uint8_t *p = d->p, *end = p + d->len;
	struct field f;
	q->has_defaults = true;
	q->def_clock = 0;
	q->def_has_track = false;
	q->def_track = 0;
	while (next_field(&p, end, &f) > 0) {
		if (f.id == TPD_TIMESTAMP_CLOCK_ID && f.wt == WT_VARINT) {
			q->def_clock = (uint32_t)f.v;
		} else if (f.id == TPD_TRACK_EVENT_DEFAULTS && f.wt == WT_LEN) {
			const uint8_t *r = f.p, *re = f.p + f.len;
			struct field g;
			while (next_field(&r, re, &g) > 0) {
				if (g.id == TED_TRACK_UUID && g.wt == WT_VARINT) {
					q->def_has_track = true;
					q->def_track = g.v;
				}
			}
		}
	}
}

/* StreamingProfilePacket (profile_module.cc TokenizeStreamingProfilePacket):
 * resolved at tokenize time against the sequence's TrackEvent reference
 * timestamp, which every delta advances (saturating).  A negative running
 * value counts streaming_profile_invalid_timestamp and stops the packet; it
 * also poisons later delta-timestamped TrackEvents on the sequence.  The
 * packet time is converted once from MONOTONIC (errors recorded, raw kept);
 * each sample is pushed at that time plus the cumulative deltas.  Here each
 * sample is converted on its own with errors suppressed, which gives the
 * same value unless a clock snapshot falls between two samples. */
void
tm_ps_streaming_profile(struct ps *s, const struct pkt *k, struct seq *q, const struct field *sp)
{
	int64_t packet_ts = q->te_ref_ns;
	if (packet_ts < 0) {
		tm_ps_pend_stat(s, k->machine, k->off, TM_STAT_STREAMING_PROFILE_INVALID_TS);
		return;
	}
	int64_t deltas[64];
	size_t n_deltas = 0, n_stacks = 0;
	const uint8_t *p = sp->p, *end = p + sp->len;
	struct field f;
	bool more = false;
	while (next_field(&p, end, &f) > 0) {
		if (f.id == SPP_CALLSTACK_IID)
			n_stacks += f.wt == WT_LEN ? count_packed(&f) : 1;
		if (f.id == SPP_TIMESTAMP_DELTA_US) {
			if (f.wt == WT_VARINT) {
				if (n_deltas < 64)
					deltas[n_deltas++] = (int64_t)f.v;
				else
					more = true;
			} else if (f.wt == WT_LEN) {
				const uint8_t *dp = f.p, *de = f.p + f.len;
				while (dp < de) {
					uint64_t v = 0;
					unsigned sh = 0;
					while (dp < de && (*dp & 0x80) && sh < 63) {
						v |= (uint64_t)(*dp++ & 0x7f) << sh;
						sh += 7;
					}
					if (dp < de)
						v |= (uint64_t)(*dp++ & 0x7f) << sh;
					if (n_deltas < 64)
						deltas[n_deltas++] = (int64_t)v;
					else
						more = true;
				}
			}
		}
	}
	(void)more;
	struct pend *op = tm_ps_pend_add(s, TM_OP_CONVERT, k->machine, k->off);
	op->clock = 3;
	op->ts = packet_ts;
	op->flags = TM_CONV_FAIL_KEEP_RAW | TM_CONV_NO_PUSH;
	note_clock(s, 3);
	int64_t sample = packet_ts;
	for (size_t i = 0; i < n_deltas; i++) {
		int64_t d = sat_mul_1000(deltas[i]);
		q->te_ref_ns = sat_add(q->te_ref_ns, d);
		if (q->te_ref_ns < 0) {
			tm_ps_pend_stat(s, k->machine, k->off, TM_STAT_STREAMING_PROFILE_INVALID_TS);
			return;
		}
		if (i < n_stacks) {
			sample = sat_add(sample, d);
			struct pend *sop = tm_ps_pend_add(s, TM_OP_CONVERT, k->machine, k->off);
			sop->clock = 3;
			sop->ts = sample;
			sop->flags = TM_CONV_FAIL_KEEP_RAW | TM_CONV_SUPPRESS;
		}
	}
}

void
tm_ps_thread_descriptor(struct seq *q, const struct field *td)
{
	const uint8_t *p = td->p, *end = p + td->len;
	struct field f;
	int64_t ref = 0;
	while (next_field(&p, end, &f) > 0)
		if (f.id == TD_REFERENCE_TIMESTAMP_US && f.wt == WT_VARINT)
			ref = (int64_t)f.v;
	q->te_ref_ns = sat_mul_1000(ref);
	q->te_ts_valid = true;
}


void
tm_ps_sysinfo(struct ps *s, const struct pkt *k, const struct field *si)
{
	const uint8_t *p = si->p, *end = p + si->len;
	struct field f;
	while (next_field(&p, end, &f) > 0) {
		if (f.id == SI_MACHINE_NAME && f.wt == WT_LEN)
			tm_ps_pend_text(s, TM_OP_SYSINFO, k->machine, k->off, (const char *)f.p, f.len);
		/* ParseSystemInfo: set_timezone_offset(timezone_off_mins (int32)
		 * * 60e9), for every log line read after it; a hostile count of
		 * minutes past +-153,722,867 overflows int64: wrapped here, as
		 * the machine's multiply does there, never undefined */
		if (f.id == SI_TIMEZONE_OFF_MINS && f.wt == WT_VARINT)
			tm_ps_pend_add(s, TM_OP_TIMEZONE, k->machine, k->off)->ts = (int64_t)(
				(uint64_t)(int64_t)(int32_t)(uint32_t)f.v * 60000000000u);
	}
}

/* Statsd atoms: one push per atom (at timestamp_nanos[i] raw, else at the
 * packet ts); approximated as pushes at the packet ts. */
void
tm_ps_statsd(struct ps *s, const struct pkt *k, const struct field *sa)
{
	const uint8_t *p = sa->p, *end = p + sa->len;
	struct field f;
	while (next_field(&p, end, &f) > 0)
		if (f.id == SA_ATOM && f.wt == WT_LEN)
			tm_ps_pend_add(s, TM_OP_PUSH, k->machine, k->off);
}


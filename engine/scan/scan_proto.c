/* SPDX-License-Identifier: MIT */
/*
 * Perfetto proto scanner: one streaming pass over a member's bytes with a
 * hand-written wire walker, emitting the op log of oplog.h.
 *
 * It reproduces the tokenizer stage of trace_processor's proto import
 * (proto_trace_tokenizer.h, proto_trace_reader.cc, track_event_tokenizer.cc,
 * ftrace_tokenizer.cc at ec5d16b14b, v58.2): top-level framing, inline
 * compressed_packets, machine dispatch markers, per-(machine, sequence)
 * incremental state, TracePacketDefaults, interned event names, packet
 * timestamp clock resolution, TrackEvent timestamp sources, ftrace bundles
 * (compact sched, the ftrace clock pair, first-bundle conversions).  What
 * depends on other files or on the manifest is left to the replay.
 *
 * The other packet kinds are read by scan_proto_packet.c, ftrace bundles by
 * scan_ftrace.c, the sequences and interned names kept by scan_proto_seq.c
 * (scan_proto_priv.h the state they share); this file frames, dispatches
 * and reads TrackEvent, the hot path.
 *
 * Blocks come from tm_stream_next; a top-level field that straddles blocks
 * is copied into a growable carry buffer, everything else is walked in place.
 *
 * Speed (tools/bench_proto, make bench): packets that lie in the block with
 * a one- or two-byte size are framed inline; TrackEvent packets of the usual
 * shape take fast_packet, which bails out to the general path (before any
 * state change) on anything else, and their TrackEvent plain_te when it has
 * only the plainest fields (do_track_event otherwise); an event of a name
 * whose alignment samples are all taken only counts (al_name_fast); fields
 * are read with rd_tag/rd_value and 8-byte SWAR varints instead of
 * next_field; a packet's single TrackEvent op and ftrace events of packets
 * without a timestamp go straight to the op log, other payload ops through
 * the compact pending list.  Every shortcut emits exactly the ops of the
 * general path (test_scan_proto checks, test_fast_equals_general against
 * tm_scan_ctl.no_fast).
 */
#include "scan_proto_priv.h"
#include "tracknames.h"
#include "align_scan.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_PACKET (256u << 20)       /* one top-level packet, ours */
#define MAX_INFLATED (256u << 20)     /* one compressed_packets, inflated */
#define MAX_RATIO 1024u               /* inflated / compressed */
#define MAX_HEADER 20                 /* kMaxHeaderBytes of the TP tokenizer */

#define MSG_PACKET_CORRUPT                                                                         \
	"Failed to parse proto packet fully; the trace is probably corrupt. (ERR:tp-corrupt)"

/* ------------------------------------------------------------------ */
/* emitting                                                            */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* TracePacket                                                         */
/* ------------------------------------------------------------------ */


static void process_packet(struct ps *s, const uint8_t *p, size_t n, const uint8_t *lim,
			   uint64_t off);
static void process_general(struct ps *s, const uint8_t *p, size_t n, const uint8_t *lim,
			    uint64_t off);

/* One EventName (InternedData.event_names), interned under its first iid
 * field with its first name field, as trace_processor finds them
 * (incremental_state.cc InternMessage, packet_sequence_state_generation.cc
 * DecodeInternedStringValue: FindField, the first of an id); none without
 * an iid (interned_data_tokenizer_errors there).  Without a name field the
 * name is null: the StringView's data() is nullptr and string_pool.h
 * InternString gives Id::Null().  A name that is not a string has its value
 * as data() and size 0 (protozero field.h): null when 0, else empty.  An iid of a length-delimited field is the field's address there,
 * never a name_iid: not interned here.  Fields of a one-byte tag are read in
 * place (lim: the end of the readable buffer, for 8-byte varint loads), any
 * other by next_field; what makes next_field fail ends the walk, as a field
 * that does not parse ends FindField's. */
AINLINE void
event_name_put(struct ps *s, struct seq *q, const uint8_t *b, const uint8_t *e,
	       const uint8_t *lim)
{
	const uint8_t *str = NULL;
	uint64_t iid = 0;
	size_t len = 0;
	bool has_iid = false, iid_ok = false, has_name = false;
	while (b < e && !(has_iid && has_name)) {
		uint64_t v;
		if (*b == TAG(EN_IID, WT_VARINT)) {
			b = get_varint_lim(b + 1, e, lim, &v);
			if (UNLIKELY(!b))
				break;
			if (!has_iid) {
				has_iid = iid_ok = true;
				iid = v;
			}
		} else if (*b == TAG(EN_NAME, WT_LEN)) {
			const uint8_t *c = get_varint_lim(b + 1, e, lim, &v);
			if (UNLIKELY(!c || v > (uint64_t)(e - c)))
				break;
			if (!has_name) {
				has_name = true;
				str = c;
				len = (size_t)v;
			}
			b = c + v;
		} else {
			struct field g;
			if (next_field(&b, e, &g) <= 0)
				break;
			if (g.id == EN_IID && !has_iid) {
				has_iid = true;
				iid_ok = g.wt != WT_LEN;
				iid = g.v;
			} else if (g.id == EN_NAME && !has_name) {
				has_name = true;
				if (g.wt == WT_LEN) {
					str = g.p;
					len = g.len;
				} else if (g.v) {
					str = (const uint8_t *)"";
				}
			}
		}
	}
	if (iid_ok)
		name_put(s, q, iid, str, len);
}

static void
do_interned(struct ps *s, struct seq *q, const struct field *d, const uint8_t *lim)
{
	const uint8_t *p = d->p, *end = p + d->len;
	struct field f;
	while (next_field(&p, end, &f) > 0)
		if (f.id == ID_EVENT_NAMES && f.wt == WT_LEN)
			event_name_put(s, q, f.p, f.p + f.len, lim);
}

/* do_interned for fast_packet: the same names put in the same order.  A
 * field of a one-byte tag is read in place, any other by next_field as
 * do_interned reads it; what makes next_field fail ends the walk here too.
 * As there, only event_names are read (proto_trace_reader.cc
 * ParseInternedData keeps every interned message in the sequence's state
 * for the parsers; of them the scan needs only the event names, for the
 * alignment samples and the per-event detail); the other fields are
 * skipped by their size. */
static __attribute__((noinline)) void
interned_fast(struct ps *s, struct seq *q, const uint8_t *p, size_t len,
	      const uint8_t *lim)
{
	const uint8_t *end = p + len;
	while (p < end) {
		uint8_t t = *p;
		const uint8_t *b;
		uint64_t n;
		if (LIKELY(t >= 8 && t < 0x80 && (t & 7) == WT_LEN)) {
			b = get_varint_lim(p + 1, end, lim, &n);
			if (UNLIKELY(!b || n > (uint64_t)(end - b)))
				return;
			p = b + n;
			if (t != TAG(ID_EVENT_NAMES, WT_LEN))
				continue;
		} else {
			struct field f;
			if (next_field(&p, end, &f) <= 0)
				return;
			if (f.id != ID_EVENT_NAMES || f.wt != WT_LEN)
				continue;
			b = f.p;
			n = f.len;
		}
		/* the usual EventName: an iid and a name of one-byte sizes,
		 * nothing else */
		if (n >= 4 && b[0] == TAG(EN_IID, WT_VARINT) && b[1] < 0x80 &&
		    b[2] == TAG(EN_NAME, WT_LEN) && b[3] < 0x80 && b[3] == n - 4)
			name_put(s, q, b[1], b + 4, b[3]);
		else
			event_name_put(s, q, b, b + n, lim);
	}
}

/* The one payload op of a TrackEvent packet (kind 0: none). */
struct te_op {
	enum tm_op_kind kind; /* TM_OP_PUSH, TM_OP_CONVERT or TM_OP_STAT */
	uint32_t flags, detail, stat;
	int64_t ts;
	/* for the alignment samples (align_scan.h): inline name, type, the
	 * first flow id and whether it terminates */
	const uint8_t *al_name;
	size_t al_name_len;
	struct iname *al_iname; /* or an interned name (valid until the next interned data) */
	uint64_t al_type, al_flow;
	uint8_t al_flow_dir;
};

/* The name of a TrackEvent's alignment sample (al_track_event), as
 * track_event_event_importer.h ParseTrackEventName names its slice: none
 * for a slice's end (it has no name of its own); the interned one when
 * name_iid (else the legacy event's) is not 0, none if that iid is not
 * interned; else the inline name (NULL: none).  Both paths of a TrackEvent
 * (do_track_event, fast_packet's plain_te) take it from here. */
AINLINE void
te_al_name(struct ps *s, struct seq *q, uint64_t type, const uint8_t *name, size_t name_len,
	   uint64_t name_iid, struct te_op *out)
{
	if (type == TE_SLICE_END)
		return;
	out->al_name = name_iid ? NULL : name;
	out->al_name_len = name_iid || !name ? 0 : name_len;
	out->al_iname = name_iid ? name_find(s, q, name_iid) : NULL;
	out->al_type = type;
}

/* A TrackEvent's detail (keep): its name as te_al_name gives it, whose
 * lookup of the iid (al_in) serves here but for a slice's end (a null
 * interned name: off NAME_NULL); its phase as track_event_event_importer.h
 * Import takes it: a counter and a state by their type, any other by
 * ParsePhaseOrType, the legacy event's phase first (any, as a char: 0 or
 * not ASCII is no slice here, a raw event there), then the type's.  Out of
 * line: the fast path's code stays as it was without keep. */
static __attribute__((noinline)) uint32_t
te_detail(struct ps *s, const struct seq *q, uint64_t type, const uint8_t *name, size_t name_len,
	  uint64_t name_iid, const struct iname *al_in, int64_t legacy_phase, bool has_track,
	  uint64_t track)
{
	const char *nm = (const char *)name;
	size_t nl = name ? name_len : 0;
	if (name_iid) {
		const struct iname *in = type != TE_SLICE_END ? al_in : name_find(s, q, name_iid);
		nm = in && in->off != NAME_NULL ? s->npool.data + in->off : NULL;
		nl = in ? in->len : 0;
	}
	char ph = 0;
	if (type == TE_COUNTER)
		ph = 'C';
	else if (type == TE_STATE)
		ph = 0;
	else if (legacy_phase >= 0)
		ph = legacy_phase < 128 ? (char)legacy_phase : 0;
	else if (type == TE_SLICE_BEGIN)
		ph = 'B';
	else if (type == TE_SLICE_END)
		ph = 'E';
	else if (type == TE_INSTANT)
		ph = 'I';
	uint64_t key = has_track ? track : q->def_has_track ? q->def_track : (1ULL << 63) | q->key;
	uint32_t d = tm_oplog_detail(s->log, nm, nm ? nl : 0, ph, key, -1);
	s->log->x->details[d - 1].queue = 1; /* track_event_stream */
	if (name_iid) {
		XGROW(s->eof_names, s->cap_eof_names, s->n_eof_names + 1);
		s->eof_names[s->n_eof_names++] = (struct eof_name){d, q->id, name_iid};
	}
	return d;
}

/* The names the TrackEvents named by an iid take if their packet is
 * deferred to the end of the file (TM_DETAIL_EOF): trace_processor
 * tokenizes a deferred packet again there (proto_trace_reader.cc
 * OnPushDataToSorter), with its sequence's generation of then
 * (TimestampTokenizeAndPushToSorter: state->current_generation()), which
 * TrackEventParser looks the iid up in: cleared since, the slice has no
 * name (interned_data_tokenizer_errors); interned again, the new name. */
static void
eof_names(struct ps *s)
{
	for (size_t i = 0; i < s->n_eof_names; i++) {
		const struct eof_name *en = &s->eof_names[i];
		const struct iname *in = name_find(s, &s->seqs[en->seq], en->iid);
		const char *nm = in && in->off != NAME_NULL ? s->npool.data + in->off : NULL;
		size_t nl = nm ? strnlen(nm, in->len) : 0;
		const char *was = tm_oplog_detail_name(s->log, &s->log->x->details[en->detail - 1]);
		if (nm ? was && strlen(was) == nl && !memcmp(was, nm, nl) : !was)
			continue;
		tm_oplog_detail_set_eof_name(s->log, en->detail, nm, nl);
	}
}

/* TrackEvent tokenization (track_event_tokenizer.cc TokenizeTrackEventPacket). */
AINLINE void
do_track_event(struct ps *s, bool has_seq, bool has_ts, struct seq *q, const uint8_t *p,
	       size_t len, const uint8_t *lim, struct te_op *out)
{
	out->kind = 0;
	if (!has_seq)
		return; /* track_event_missing_sequence_id */
	const uint8_t *end = p + len;
	bool has_delta = false, has_tt_delta = false, has_track = false;
	bool has_counter = false, has_name = false;
	bool has_ic_delta = false;
	int64_t delta = 0, absolute = 0;
	uint64_t type = 0, track = 0, name_iid = 0, legacy_name_iid = 0;
	int64_t legacy_phase = -1; /* -1: none */
	const uint8_t *name = NULL;
	size_t name_len = 0;
	while (p < end) {
		uint64_t tag, v;
		p = rd_tag(p, end, lim, &tag);
		if (UNLIKELY(!p))
			break;
		uint32_t wt = (uint32_t)(tag & 7);
		if (LIKELY(wt == WT_VARINT)) {
			p = get_varint_lim(p, end, lim, &v);
			if (UNLIKELY(!p))
				break;
			/* the common ones by compare, the rest by switch */
			uint64_t id = tag >> 3;
			if (id == TE_TYPE) {
				type = v;
				continue;
			}
			if (id == TE_TRACK_UUID) {
				has_track = true;
				track = v;
				continue;
			}
			if (id == TE_NAME_IID) {
				name_iid = v;
				continue;
			}
			switch (id) {
			case TE_TIMESTAMP_DELTA_US:
				has_delta = true;
				delta = (int64_t)v;
				break;
			case TE_TIMESTAMP_ABSOLUTE_US:
				absolute = (int64_t)v;
				break;
			case TE_COUNTER_VALUE:
				has_counter = true;
				break;
			case TE_THREAD_TIME_DELTA_US:
				has_tt_delta = true;
				break;
			case TE_THREAD_INSTRUCTION_COUNT_DELTA:
				has_ic_delta = true;
				break;
			case TE_NAME: /* as below */
				has_name = true;
				name = v ? (const uint8_t *)"" : NULL;
				name_len = 0;
				break;
			case TE_LEGACY_EVENT: /* the last one, empty (as below) */
				legacy_phase = -1;
				legacy_name_iid = 0;
				break;
			default:
				break;
			}
			continue;
		}
		const uint8_t *fp = NULL;
		size_t fl = 0;
		p = rd_value(p, end, lim, wt, &v, &fp, &fl);
		if (UNLIKELY(!p))
			break;
		switch (tag >> 3) {
		case TE_NAME:
			/* the last field 23 (a typed decoder's); one not a
			 * string has its value as data(), size 0: null when
			 * 0 (string_pool.h InternString), else empty */
			has_name = true;
			name = wt == WT_LEN ? fp : v ? (const uint8_t *)"" : NULL;
			name_len = wt == WT_LEN ? fl : 0;
			break;
		case TE_DOUBLE_COUNTER_VALUE:
			if (wt == WT_FIXED64)
				has_counter = true;
			break;
		case TE_FLOW_IDS:
		case TE_TERMINATING_FLOW_IDS:
			if (wt == WT_FIXED64 && !out->al_flow_dir) {
				out->al_flow = v;
				out->al_flow_dir = (tag >> 3) == TE_FLOW_IDS ? AL_OUT : AL_IN;
			}
			break;
		case TE_THREAD_TIME_DELTA_US:
			has_tt_delta = false; /* not a varint */
			break;
		case TE_THREAD_INSTRUCTION_COUNT_DELTA:
			has_ic_delta = false;
			break;
		case TE_LEGACY_EVENT:
			/* the legacy event is the last field 6
			 * (track_event_event_importer.h takes
			 * event_.legacy_event(): a typed decoder's field
			 * holds its last value); one not a message is an
			 * empty one (data() its value, size 0) */
			legacy_phase = -1;
			legacy_name_iid = 0;
			if (wt == WT_LEN) {
				const uint8_t *r = fp, *re = fp + fl;
				struct field g;
				while (next_field(&r, re, &g) > 0) {
					if (g.id == TE_LEGACY_PHASE && g.wt == WT_VARINT)
						legacy_phase = (uint8_t)g.v; /* a char */
					else if (g.id == TE_LEGACY_NAME_IID && g.wt == WT_VARINT)
						legacy_name_iid = g.v;
				}
			}
			break;
		default:
			break;
		}
	}

	int64_t ts = 0;
	bool conv = false;
	if (has_delta) {
		if (!q->te_ts_valid)
			return; /* track_event_skipped_timestamp_delta_without_valid_state */
		q->te_ref_ns = sat_add(q->te_ref_ns, sat_mul_1000(delta));
		ts = q->te_ref_ns;
		conv = true;
	} else if (absolute) {
		ts = sat_mul_1000(absolute);
		conv = true;
	} else if (!has_ts) {
		return; /* track_event_missing_timestamp */
	}
	if (conv && ts < 0) {
		out->kind = TM_OP_STAT;
		out->stat = TM_STAT_TE_INVALID_TS;
		return;
	}

	if (!name_iid)
		name_iid = legacy_name_iid; /* ParseTrackEventName */

	/* Validation after the legacy conversion. */
	bool ok = true;
	if ((has_tt_delta || has_ic_delta) && !q->te_ts_valid)
		ok = false;
	if (type == TE_COUNTER && ((!has_track && !q->def_has_track) || !has_counter))
		ok = false;
	if (type == TE_STATE && !has_track && !q->def_has_track)
		ok = false;

	if (ok)
		te_al_name(s, q, type, has_name ? name : NULL, name_len, name_iid, out);
	uint32_t detail = 0;
	if (ok && s->keep)
		detail = te_detail(s, q, type, has_name ? name : NULL, name_len, name_iid,
				   out->al_iname, legacy_phase, has_track, track);

	if (conv) {
		/* clock 3 = MONOTONIC */
		out->kind = TM_OP_CONVERT;
		out->ts = ts;
		out->flags = TM_CONV_FAIL_KEEP_RAW | (ok ? 0 : TM_CONV_NO_PUSH);
		out->detail = detail;
		note_clock(s, 3);
		if (ok)
			note_ts(s, ts);
		return;
	}
	if (!ok)
		return;
	out->kind = TM_OP_PUSH;
	out->flags = TM_PUSH_TRACK_EVENT;
	out->detail = detail;
}

static void
do_compressed(struct ps *s, const struct pkt *k)
{
	int codec = k->has_compressed ? 1 : 2;
	if (s->codec && s->codec != codec) {
		tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .machine = 0, .offset = k->off,
					.text = "A trace must not mix compressed_packets and "
						"zstd_compressed_packets (ERR:tp-corrupt)"});
		return;
	}
	s->codec = codec;
	if (codec == 2) {
		s->stop = true;
		s->sc->failed = true;
		tm_error_set(tm_scan_err(s->sc), TM_ERR_UNSUPPORTED,
			     "byte 0x%llx: zstd_compressed_packets are not supported by tracemerge",
			     (unsigned long long)k->off);
		return;
	}
	if (s->depth > 0) {
		/* Inner packets are never decompressed again by TP (its
		 * callback expects plain packets); treat like TP's CHECK. */
		tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = k->off,
					.text = "Failed to decompress compressed_packets "
						"(ERR:tp-corrupt)"});
		return;
	}
	z_stream z;
	tm_inflate_init(&z, 15 + 32); /* out of memory: tm_oom, not this FATAL */
	size_t cap_out = (size_t)k->compressed.len * MAX_RATIO;
	if (cap_out > MAX_INFLATED || cap_out < k->compressed.len)
		cap_out = MAX_INFLATED;
	size_t len = 0;
	z.next_in = (Bytef *)(uintptr_t)k->compressed.p;
	z.avail_in = (uInt)k->compressed.len;
	int zr = Z_OK;
	for (;;) {
		if (len == s->cap_inflated) {
			size_t nc = s->cap_inflated ? s->cap_inflated * 2 : 65536;
			s->inflated = xrealloc(s->inflated, nc);
			s->cap_inflated = nc;
		}
		z.next_out = s->inflated + len;
		z.avail_out = (uInt)(s->cap_inflated - len);
		zr = inflate(&z, Z_NO_FLUSH);
		len = s->cap_inflated - z.avail_out;
		if (zr == Z_STREAM_END)
			break;
		if (zr != Z_OK && zr != Z_BUF_ERROR)
			break;
		if (zr == Z_BUF_ERROR && z.avail_out != 0)
			break; /* input exhausted before the end */
		if (len > cap_out) {
			zr = Z_MEM_ERROR;
			break;
		}
	}
	inflateEnd(&z);
	if (zr != Z_STREAM_END) {
		if (len > cap_out) {
			s->stop = true;
			s->sc->failed = true;
			tm_error_set(tm_scan_err(s->sc), TM_ERR_LIMIT,
				     "byte 0x%llx: compressed_packets inflate beyond %zu bytes",
				     (unsigned long long)k->off, cap_out);
			return;
		}
		tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = k->off,
					.text = "Failed to decompress compressed_packets "
						"(ERR:tp-corrupt)"});
		return;
	}
	/* The inflated buffer is reused: walk a private copy. */
	uint8_t *buf = s->inflated;
	s->inflated = NULL;
	s->cap_inflated = 0;
	const uint8_t *ptr = buf, *end = buf + len;
	s->depth++;
	while (end - ptr > 2 && !s->stop) {
		const uint8_t *outer = ptr;
		if (*ptr != 0x0A) {
			tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = k->off,
						.text = "Expected TracePacket tag (ERR:tp-corrupt)"});
			break;
		}
		uint64_t sz = 0;
		const uint8_t *q = get_varint(ptr + 1, end, &sz);
		if (!q || sz > (uint64_t)(end - q) || q + sz - outer < 2) {
			tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = k->off,
						.text = "Invalid packet size (ERR:tp-corrupt)"});
			break;
		}
		process_packet(s, q, (size_t)sz, end, k->off);
		ptr = q + sz;
	}
	s->depth--;
	if (!s->inflated) {
		s->inflated = buf;
		s->cap_inflated = len ? len : 0;
		if (!len) {
			free(buf);
			s->inflated = NULL;
		}
	} else {
		free(buf);
	}
}

/* The scan's alignment samples, with the scan's name cache (until ps_fini). */
static void
ps_align(struct ps *s)
{
	s->al = tm_scan_align(s->sc);
	s->al->cache = &s->al_cache;
}

/* al_name_fast's lookup (tm_al_name_add: through the scan's name cache,
 * which it may give a full name). */
static bool
al_name_find(struct ps *s, const uint8_t *name, size_t n, int64_t ts, uint32_t clock,
	     uint32_t machine, unsigned flags, uint64_t off)
{
	if (UNLIKELY(!s->al))
		ps_align(s);
	return tm_al_name_add(s->al, (const char *)name, n, ts, clock, machine, flags, off);
}

/* An event name (not NULL; n may be 0: none) for the alignment samples
 * (tm_al_name).  The name of the last event is usually this one's, and once
 * its AL_OCC samples are taken an event of it only counts
 * (tm_al_name_counted): that case needs no lookup. */
AINLINE bool
al_name_fast(struct ps *s, const uint8_t *name, size_t n, int64_t ts, uint32_t clock,
	     uint32_t machine, unsigned flags, uint64_t off)
{
	if (LIKELY(tm_al_name_counted(&s->al_cache, s->al, (const char *)name, n, flags)) || !n)
		return false;
	return al_name_find(s, name, n, ts, clock, machine, flags, off);
}

/* An interned name for the alignment samples: the interned name keeps its
 * sample's index, so an event costs its name_iid lookup and a count. */
static bool
al_iname(struct ps *s, struct iname *in, int64_t ts, uint32_t clock, uint32_t machine,
	 unsigned flags, uint64_t off)
{
	if (UNLIKELY(!s->al))
		ps_align(s);
	if (!in->al) {
		struct al_name *e =
			in->len ? tm_al_name_entry(s->al, s->npool.data + in->off, in->len) : NULL;
		in->al = e ? (uint32_t)(e - s->al->names) + 1 : UINT32_MAX;
	}
	return in->al != UINT32_MAX &&
	       tm_al_name_occ(s->al, &s->al->names[in->al - 1], ts, clock, machine, flags,
				  off);
}

/* Alignment samples of a TrackEvent (align_scan.h): its inline name and its
 * first flow id, at the packet's timestamp (or the legacy one it converts).
 * True when a sample at the packet's timestamp was kept that the replay
 * must convert for an estimate (a clock of its own or another machine):
 * the caller then flags its PACKET op TM_PKT_SAMPLE. */
AINLINE bool
al_track_event(struct ps *s, const struct te_op *te, uint32_t machine, uint32_t clock, int64_t ts,
	       uint64_t off)
{
	if (!te->al_name && !te->al_iname && !te->al_flow_dir)
		return false;
	if (te->kind == TM_OP_CONVERT) {
		clock = 3;
		ts = te->ts;
		off = AL_NO_OFF; /* a conversion of its own, not the packet's */
	} else if (te->kind != TM_OP_PUSH) {
		return false;
	}
	unsigned fl = te->al_type == TE_INSTANT ? AL_INSTANT : 0;
	bool kept = false;
	if (te->al_name)
		kept = al_name_fast(s, te->al_name, te->al_name_len, ts, clock, machine, fl, off);
	else if (te->al_iname)
		kept = al_iname(s, te->al_iname, ts, clock, machine, fl, off);
	if (te->al_flow_dir)
		kept |= tm_al_id(tm_scan_align(s->sc), AL_FLOW, te->al_flow, ts, clock, machine,
				 te->al_flow_dir, off);
	return kept && off != AL_NO_OFF && (clock || machine);
}

AINLINE void
emit_te(struct ps *s, uint32_t machine, uint64_t off, const struct te_op *te)
{
	switch (te->kind) {
	case TM_OP_PUSH:
		s->sc->n_events++;
		tm_oplog_push(s->log, machine, 0, te->flags, te->detail, off);
		break;
	case TM_OP_CONVERT:
		if (!(te->flags & TM_CONV_NO_PUSH))
			s->sc->n_events++;
		tm_oplog_convert(s->log, machine, 3, 0, te->ts, te->flags, te->detail, off);
		break;
	default:
		tm_oplog_add(s->log, &(struct tm_op){.kind = TM_OP_STAT, .machine = machine,
						     .stat = te->stat, .n = 1, .offset = off});
		break;
	}
}

/* A TrackEvent of the plainest kind (most events of a trace): only the
 * fields below, each with its usual one- or two-byte tag, so no timestamp of
 * its own, no flow ids, no counter value; not a counter or state event.  For
 * these do_track_event's result is a PUSH (without keep_events no detail);
 * only the type and the name matter (the alignment samples).  false:
 * anything else, and do_track_event reads it (nothing was changed).  The
 * caller checks what do_track_event needs of the packet for a PUSH: a
 * timestamp and a sequence id. */
struct te_plain {
	uint64_t type, name_iid;
	const uint8_t *name; /* NULL: no name field */
	size_t name_len;
};

AINLINE bool
plain_te(const uint8_t *p, size_t len, const uint8_t *lim, struct te_plain *t)
{
	/* locals, stored in *t once at the end: kept in registers */
	const uint8_t *end = p + len, *name = NULL;
	uint64_t type = 0, name_iid = 0;
	size_t name_len = 0;
	while (p < end) {
		uint8_t tag = *p++;
		uint64_t v;
		/* the two fields of nearly every event before the switch */
		if (LIKELY(tag == TAG(TE_TYPE, WT_VARINT))) {
			p = get_varint_lim(p, end, lim, &type);
			if (UNLIKELY(!p))
				return false;
			continue;
		}
		if (LIKELY(tag == TAG(TE_TRACK_UUID, WT_VARINT))) {
			p = skip_varint_lim(p, end, lim);
			if (UNLIKELY(!p))
				return false;
			continue;
		}
		switch (tag) {
		case TAG(TE_NAME_IID, WT_VARINT):
			p = get_varint_lim(p, end, lim, &name_iid);
			break;
		case TAG(TE_CATEGORY_IIDS, WT_VARINT):
			p = skip_varint_lim(p, end, lim);
			break;
		case TAG(TE_DEBUG_ANNOTATIONS, WT_LEN):
			p = get_varint_lim(p, end, lim, &v);
			if (UNLIKELY(!p || v > (uint64_t)(end - p)))
				return false;
			p += v;
			break;
		case TAG(TE_NAME, WT_LEN) & 0xff: /* 0xba 0x01 */
		case TAG(TE_CATEGORIES, WT_LEN) & 0xff: /* 0xb2 0x01 */
			if (UNLIKELY(p == end || *p != 0x01))
				return false;
			p = get_varint_lim(p + 1, end, lim, &v);
			if (UNLIKELY(!p || v > (uint64_t)(end - p)))
				return false;
			if (tag == (TAG(TE_NAME, WT_LEN) & 0xff)) {
				name = p;
				name_len = (size_t)v;
			}
			p += v;
			break;
		default:
			return false;
		}
		if (UNLIKELY(!p))
			return false;
	}
	t->type = type;
	t->name_iid = name_iid;
	t->name = name;
	t->name_len = name_len;
	return type != TE_COUNTER && type != TE_STATE;
}

/* fast_packet's usual end: a PACKET op of one plain push (flags), logged as
 * the op log's PACKET run element, counted in the scan at its end. */
AINLINE void
fast_push(struct ps *s, uint32_t clock, uint32_t seq, int64_t ts, uint32_t flags, uint64_t off)
{
	flush_nots(s);
	tm_oplog_packet_push_i(s->log, 0, clock, seq, ts, flags, off);
	note_ts(s, ts);
	s->n_fast_ev++;
}

/* The fast path for the packets that make up nearly all of a TrackEvent
 * trace: machine 0 (already seen), only timestamp, trusted_packet_sequence_id,
 * sequence_flags, interned_data (interned_fast) and track_event, each with a
 * one-byte tag, and the trusted uid and pid the service adds (ignored, as
 * the general path does).
 * Anything else, and every case that ends in a stat or a fatal, returns 0
 * before any state changed (the sequence lookup may insert: the general
 * path finds the same entry), and process_packet takes the general path.  Otherwise the
 * same state changes and ops as the general path (test_scan_proto checks
 * both on random packets).  Two copies: without interned (-1 at an
 * interned_data field) and with it, so the packets without interned data
 * (most of a trace, and the hottest loop) pay nothing for it; a packet with
 * it is read again by the second copy (fast_packet). */
AINLINE int
fast_packet_t(struct ps *s, const uint8_t *p, size_t n, const uint8_t *lim, uint64_t off,
	      bool interned)
{
	const uint8_t *end = p + n, *te = NULL, *idata = NULL;
	uint64_t ts = 0, seq = 0, flags = 0, te_len = 0, id_len = 0;
	bool has_ts = false, has_seq = false;
	if (UNLIKELY(!s->fast))
		return 0;
	while (p < end) {
		uint8_t t = *p++;
		uint64_t v;
		if (t == TAG(TP_TIMESTAMP, WT_VARINT)) {
			p = get_varint_wide(p, end, lim, &ts);
			if (UNLIKELY(!p))
				return 0;
			has_ts = true;
			continue;
		}
		p = get_varint_lim(p, end, lim, &v);
		if (UNLIKELY(!p))
			return 0;
		if (t == TAG(TP_SEQ_ID, WT_VARINT)) {
			has_seq = true;
			seq = v;
		} else if (t == TAG(TP_TRACK_EVENT, WT_LEN)) {
			if (v > (uint64_t)(end - p))
				return 0;
			if (!te) {
				te = p;
				te_len = v;
			}
			p += v;
		} else if (t == TAG(TP_SEQ_FLAGS, WT_VARINT)) {
			flags = v;
		} else if (t == TAG(TP_TRUSTED_UID, WT_VARINT)) {
			/* the service's, on every packet; no tokenizer reads it */
		} else if (t == ((TAG(TP_TRUSTED_PID, WT_VARINT) & 0x7f) | 0x80) &&
			   v == TAG(TP_TRUSTED_PID, WT_VARINT) >> 7) {
			/* its tag is 0xf8 0x04 (v: the second byte), then the
			 * value; as trusted_uid */
			p = skip_varint_lim(p, end, lim);
			if (UNLIKELY(!p))
				return 0;
		} else if (t == TAG(TP_INTERNED_DATA, WT_LEN)) {
			if (!interned)
				return -1;
			/* the last one counts, as in tm_ps_decode_packet */
			if (v > (uint64_t)(end - p))
				return 0;
			idata = p;
			id_len = v;
			p += v;
		} else {
			return 0;
		}
	}
	if (!te)
		return 0;
	uint32_t seq32 = (uint32_t)seq, flags32 = (uint32_t)flags;
	bool clear = false;
	struct seq *q;
	if (LIKELY(!(flags32 & 3))) {
		q = get_seq(s, 0, seq32);
	} else {
		if ((flags32 & 2) && !seq32)
			return 0;
		q = get_seq(s, 0, seq32);
		clear = (flags32 & 1) && has_seq;
		if ((flags32 & 2) && !clear && !q->valid)
			return 0;
	}
	uint32_t clock = 0;
	if (has_ts && !clear && q->has_defaults) {
		clock = q->def_clock;
		if (tm_clock_is_seq(clock) && !seq32)
			return 0;
	}

	/* Committed: as process_packet from here. */
	s->n_fast_pk++;
	if (clear)
		seq_clear(s, q);
	if (interned && idata && has_seq && q->valid)
		interned_fast(s, q, idata, (size_t)id_len, lim);
	if (clock)
		note_clock(s, clock);
	struct te_op r;
	bool sampled;
	struct te_plain t;
	if (LIKELY(has_ts && has_seq && !s->keep) && plain_te(te, (size_t)te_len, lim, &t)) {
		/* do_track_event's result for this kind: a te_op of its own
		 * (do_track_event takes r's address) */
		struct te_op rp = {.kind = TM_OP_PUSH, .flags = TM_PUSH_TRACK_EVENT};
		te_al_name(s, q, t.type, t.name, t.name_len, t.name_iid, &rp);
		if (LIKELY(!al_track_event(s, &rp, 0, clock, (int64_t)ts, off))) {
			fast_push(s, clock, seq32, (int64_t)ts, TM_PUSH_TRACK_EVENT, off);
			return 1;
		}
		r = rp;
		sampled = true;
	} else {
		r = (struct te_op){0};
		do_track_event(s, has_seq, has_ts, q, te, (size_t)te_len, lim, &r);
		sampled = (has_ts || r.kind == TM_OP_CONVERT) &&
			  al_track_event(s, &r, 0, clock, (int64_t)ts, off);
	}
	if (has_ts && r.kind == TM_OP_PUSH && !r.detail && !sampled) {
		fast_push(s, clock, seq32, (int64_t)ts, r.flags, off);
		return 1;
	}
	if (has_ts) {
		/* s->pkt_op: a PACKET op kept zero but for these */
		struct tm_op *op = &s->pkt_op;
		op->clock = clock;
		op->seq = seq32;
		op->ts = (int64_t)ts;
		op->n = r.kind ? 1 : 0;
		op->offset = off;
		op->flags = sampled ? TM_PKT_SAMPLE : 0;
		flush_nots(s);
		tm_oplog_add(s->log, op);
		op->flags = 0;
		note_ts(s, (int64_t)ts);
	} else if (r.kind) {
		flush_nots(s);
	}
	if (r.kind)
		emit_te(s, 0, off, &r);
	return 1;
}

AINLINE bool
fast_packet(struct ps *s, const uint8_t *p, size_t n, const uint8_t *lim, uint64_t off)
{
	int r = fast_packet_t(s, p, n, lim, off, false);
	if (UNLIKELY(r < 0))
		r = fast_packet_t(s, p, n, lim, off, true);
	return r > 0;
}

static void
process_packet(struct ps *s, const uint8_t *p, size_t n, const uint8_t *lim, uint64_t off)
{
	if (fast_packet(s, p, n, lim, off))
		return;
	process_general(s, p, n, lim, off);
}

static void
process_general(struct ps *s, const uint8_t *p, size_t n, const uint8_t *lim, uint64_t off)
{
	struct pkt k;
	memset(&k, 0, offsetof(struct pkt, snapshot));
	k.off = off;
	k.lim = lim;
	s->sc->n_packets++;
	bool ok = tm_ps_decode_packet(p, n, &k);
	if (k.has_compressed || k.has_zstd) {
		if (k.has_compressed && k.has_zstd)
			k.has_zstd = false; /* TP prefers compressed_packets */
		do_compressed(s, &k);
		return;
	}
	if (!ok) {
		tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .machine = k.machine, .offset = off,
					.text = MSG_PACKET_CORRUPT});
		return;
	}

	/* Machine dispatch marker. */
	struct machine *m = tm_ps_machine(s, k.machine);
	if (!m->seen && (k.machine != 0 || !k.has_sync)) {
		m->seen = true;
		if (!k.machine)
			s->fast = !s->no_fast;
		tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_MACHINE, .machine = k.machine, .offset = off});
		if (k.machine)
			tm_scan_note_machine(s->sc, k.machine);
	}

	struct seq *q = get_seq(s, k.machine, k.seq);
	if (s->keep)
		tm_proto_names(s->log, p, n, (1ULL << 63) | q->key);
	if (k.cleared_legacy || (k.flags & 1)) {
		if (k.has_seq)
			seq_clear(s, q);
	} else if (k.dropped && k.has_seq) {
		q->valid = false;
		q->te_ts_valid = false;
	}
	if (k.has_defaults && k.has_seq)
		tm_ps_defaults(q, &k.defaults);
	if (k.has_interned && k.has_seq && q->valid)
		do_interned(s, q, &k.interned, k.lim);

	if (k.has_snapshot) {
		tm_ps_snapshot(s, &k);
		return;
	}
	if (k.has_remote) {
		tm_ps_remote_sync(s, &k);
		return;
	}
	if (k.has_service) {
		uint32_t c = k.has_clock ? k.clock : 6;
		note_clock(s, c);
		tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_SERVICE, .machine = k.machine, .clock = c,
					.ts = (int64_t)k.ts, .offset = off,
					.flags = tm_ps_service_started(&k.service) ? TM_SVC_TRACING_STARTED : 0});
		return;
	}
	if (k.has_ext)
		return;
	if (k.flags & 2) {
		if (!k.seq) {
			tm_ps_emit(s, &(struct tm_op){
					.kind = TM_OP_FATAL, .machine = k.machine, .offset = off,
					.text = "TracePacket specified SEQ_NEEDS_INCREMENTAL_STATE "
						"but the TraceWriter's sequence_id is zero (the "
						"service is probably too old)"});
			return;
		}
		if (!q->valid) {
			tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_STAT, .machine = k.machine,
						.stat = TM_STAT_SEQ_NEEDS_INCR_INVALID, .n = 1,
						.offset = off});
			return;
		}
	}

	/* Timestamp clock resolution; 0 = the reader's default clock. */
	uint32_t clock = 0;
	if (k.has_ts) {
		clock = k.clock;
		if (!clock && q->has_defaults)
			clock = q->def_clock;
		if (!k.has_chrome && tm_clock_is_seq(clock) && !k.seq) {
			char msg[200];
			snprintf(msg, sizeof msg,
				 "TracePacket specified a sequence-local clock id (%u) but the "
				 "TraceWriter's sequence_id is zero (the service is probably too "
				 "old)",
				 (unsigned)clock);
			tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .machine = k.machine,
						.offset = off, .text = msg});
			return;
		}
		if (clock)
			note_clock(s, clock);
	}

	/* Payload: module dispatch in wire order. */
	s->n_pend = s->n_pclocks = s->n_ptss = 0;
	bool handled = false;
	struct te_op te = {0};
	bool sampled = false;
	if (k.has_td_before) {
		if (!k.has_seq || !q->valid)
			handled = true; /* thread_descriptor_* stats, no push */
		else
			tm_ps_thread_descriptor(q, &k.td);
	}
	if (!handled && k.handler) {
		handled = true;
		switch (k.handler) {
		case TP_FTRACE_EVENTS:
			tm_ps_ftrace(s, &k, &k.hfield);
			break;
		case TP_TRACK_EVENT:
			do_track_event(s, k.has_seq, k.has_ts, q, k.hfield.p, k.hfield.len, lim, &te);
			if (k.has_ts || te.kind == TM_OP_CONVERT)
				sampled = al_track_event(s, &te, k.machine, clock, (int64_t)k.ts, off);
			break;
		case TP_SYSTEM_INFO:
			tm_ps_sysinfo(s, &k, &k.hfield);
			break;
		case TP_STATSD_ATOM:
			tm_ps_statsd(s, &k, &k.hfield);
			break;
		case TP_STREAMING_PROFILE:
			tm_ps_streaming_profile(s, &k, q, &k.hfield);
			break;
		default:
			break; /* handled at tokenize time, not pushed */
		}
	}
	if (!handled) {
		struct pend *pu = tm_ps_pend_add(s, TM_OP_PUSH, k.machine, off);
		if (k.has_ts && k.ts == 0) /* no event: metadata at 0 (TM_CONV_UNTIMED) */
			pu->flags |= TM_CONV_UNTIMED;
	}

	if (te.kind) {
		/* The packet's only payload op (nothing else is pending): straight
		 * to the log, as pend_flush would. */
		if (k.has_ts) {
			struct tm_op op = {.kind = TM_OP_PACKET, .machine = k.machine, .clock = clock,
					   .seq = k.seq, .ts = (int64_t)k.ts,
					   .flags = (k.has_chrome ? TM_PKT_CHROME : 0) |
						    (sampled ? TM_PKT_SAMPLE : 0),
					   .n = 1, .offset = off};
			tm_ps_emit(s, &op);
			note_ts(s, (int64_t)k.ts);
		} else {
			flush_nots(s);
		}
		emit_te(s, k.machine, off, &te);
		return;
	}
	if (k.has_ts) {
		struct tm_op op = {.kind = TM_OP_PACKET, .machine = k.machine, .clock = clock,
				   .seq = k.seq, .ts = (int64_t)k.ts,
				   .flags = (k.has_chrome ? TM_PKT_CHROME : 0) |
					    (sampled ? TM_PKT_SAMPLE : 0),
				   .n = (uint32_t)s->n_pend, .offset = off};
		tm_ps_emit(s, &op);
		note_ts(s, (int64_t)k.ts);
		tm_ps_pend_flush(s, true);
	} else {
		tm_ps_pend_flush(s, false);
	}
}

/* ------------------------------------------------------------------ */
/* top-level framing                                                   */
/* ------------------------------------------------------------------ */

enum frame { FR_NEED, FR_DONE, FR_FATAL, FR_LIMIT };

/* Frame one top-level field at p[0..avail).  FR_DONE: *used bytes consumed
 * (packet processed or field skipped; *skip = bytes still to skip beyond
 * avail for a large skipped field).  FR_NEED: *need = total bytes needed if
 * known, else 0. */
static enum frame
frame_one(struct ps *s, const uint8_t *p, size_t avail, uint64_t off, size_t *used,
	  uint64_t *skip, size_t *need)
{
	const uint8_t *end = p + avail;
	size_t hdr_avail = avail < MAX_HEADER ? avail : MAX_HEADER;
	const uint8_t *he = p + hdr_avail;
	uint64_t tag, v;
	char msg[160];
	*need = 0;
	*skip = 0;
	const uint8_t *q = get_varint(p, he, &tag);
	if (!q) {
		if (hdr_avail < MAX_HEADER)
			return FR_NEED;
		snprintf(msg, sizeof msg, "Failed to parse tag @ 0x%llx (ERR:tp-corrupt)",
			 (unsigned long long)off);
		tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = off, .text = msg});
		return FR_FATAL;
	}
	if (tag != TAG(TRACE_PACKET, WT_LEN)) {
		switch (tag & 7) {
		case WT_VARINT:
			if (!get_varint(q, he, &v)) {
				if (hdr_avail < MAX_HEADER)
					return FR_NEED;
				snprintf(msg, sizeof msg,
					 "Failed to skip varint @ 0x%llx (ERR:tp-corrupt)",
					 (unsigned long long)off);
				tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = off,
							.text = msg});
				return FR_FATAL;
			}
			*used = (size_t)(get_varint(q, he, &v) - p);
			return FR_DONE;
		case WT_LEN: {
			const uint8_t *r = get_varint(q, he, &v);
			if (!r) {
				if (hdr_avail < MAX_HEADER)
					return FR_NEED;
				snprintf(msg, sizeof msg,
					 "Failed to skip delimited @ 0x%llx (ERR:tp-corrupt)",
					 (unsigned long long)off);
				tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = off,
							.text = msg});
				return FR_FATAL;
			}
			size_t h = (size_t)(r - p);
			if (v > (uint64_t)(end - r)) {
				/* skip without buffering */
				*used = avail;
				*skip = v - (uint64_t)(end - r);
				return FR_DONE;
			}
			*used = h + (size_t)v;
			return FR_DONE;
		}
		case WT_FIXED64:
		case WT_FIXED32: {
			size_t tot = (size_t)(q - p) + ((tag & 7) == WT_FIXED64 ? 8 : 4);
			if (tot > avail) {
				*need = tot;
				return FR_NEED;
			}
			*used = tot;
			return FR_DONE;
		}
		default:
			snprintf(msg, sizeof msg,
				 "Unknown field type @ 0x%llx; the trace is corrupt or was produced "
				 "by a newer version of Perfetto (ERR:tp-corrupt)",
				 (unsigned long long)off);
			tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = off, .text = msg});
			return FR_FATAL;
		}
	}
	const uint8_t *r = get_varint(q, he, &v);
	if (!r) {
		if (hdr_avail < MAX_HEADER)
			return FR_NEED;
		tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = off,
					.text = "Failed to parse TracePacket size (ERR:tp-corrupt)"});
		return FR_FATAL;
	}
	size_t h = (size_t)(r - p);
	if (v == 0) {
		*used = h;
		return FR_DONE;
	}
	if (v > MAX_PACKET) {
		*used = h; /* where it would end: the caller decides (cap or cut off) */
		*skip = v;
		return FR_LIMIT;
	}
	if (v > (uint64_t)(end - r)) {
		*need = h + (size_t)v;
		return FR_NEED;
	}
	process_packet(s, r, (size_t)v, end, off);
	*used = h + (size_t)v;
	return FR_DONE;
}

static void
ps_fini(struct ps *s)
{
	if (s->al)
		s->al->cache = NULL; /* it lives in s */
	tm_al_cache_fini(&s->al_cache);
	free(s->seqs);
	free(s->seq_ix);
	free(s->seq_cache);
	free(s->machines);
	tm_u64map_fini(&s->machine_ix);
	free(s->names);
	tm_buf_fini(&s->npool);
	free(s->pend);
	free(s->pclocks);
	free(s->ptss);
	tm_buf_fini(&s->ptext);
	free(s->inflated);
	free(s->eof_names);
	tm_u64map_fini(&s->ftq);
}

enum tm_status
tm_scan_proto_blocks(tm_block_fn next, void *ctx, struct tm_scan *sc,
		     const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	struct ps s;
	memset(&s, 0, sizeof s);
	s.sc = sc;
	s.log = &sc->log;
	s.ctl = ctl;
	s.keep = ctl && ctl->keep_events;
	s.no_fast = ctl && ctl->no_fast;
	tm_al_cache_init(&s.al_cache, s.no_fast);
	s.pkt_op.kind = TM_OP_PACKET;
	s.ts_min = INT64_MAX;
	s.ts_max = INT64_MIN;
	s.seq_mask = SEQ_CACHE_MIN - 1;
	s.seq_cache = xcalloc(SEQ_CACHE_MIN, sizeof *s.seq_cache);
	tm_buf_init(&s.npool);
	tm_buf_init(&s.ptext);

	struct tm_buf carry;
	tm_buf_init(&carry);
	uint64_t carry_off = 0; /* member offset of carry.data[0] */
	uint64_t skip = 0;
	uint64_t pos = 0; /* member offset of the block start */
	/* a packet over our cap: the rest is only counted, to tell a packet we
	 * cannot hold (the cap) from a member cut off inside it (ignored) */
	bool draining = false;
	uint64_t big_off = 0, big_end = 0, lim_v = 0;
	size_t lim_h = 0; /* the packet's header and size (FR_LIMIT) */
	enum tm_status rc = TM_OK;
	unsigned ticks = 0;

	for (;;) {
		const uint8_t *blk;
		size_t n;
		rc = next(ctx, &blk, &n, err);
		if (rc != TM_OK) {
			sc->failed = true;
			if (err)
				*tm_scan_err(sc) = *err;
			break;
		}
		if (n == 0)
			break; /* EOF: an incomplete trailing field is ignored, as TP does */
		if (ctl && ctl->cancel && __atomic_load_n(ctl->cancel, __ATOMIC_RELAXED)) {
			rc = tm_error_set(err, TM_ERR_CANCELLED, "cancelled");
			break;
		}
		if (ctl && ctl->progress && (++ticks & 15) == 0)
			atomic_store(ctl->progress, pos);
		if (draining) {
			pos += n;
			continue;
		}
		size_t i = 0;
		if (skip) {
			size_t k = skip < n ? (size_t)skip : n;
			skip -= k;
			i = k;
		}
		while (i < n && !s.stop) {
			size_t used, need;
			uint64_t sk;
			enum frame fr;
			if (carry.len) {
				/* Top up the carry: header first, then the body. */
				size_t want = carry.len < MAX_HEADER ? MAX_HEADER - carry.len : 0;
				if (want) {
					size_t k = want < n - i ? want : n - i;
					tm_buf_add(&carry, blk + i, k);
					i += k;
				}
				for (;;) {
					fr = frame_one(&s, (const uint8_t *)carry.data, carry.len,
						       carry_off, &used, &sk, &need);
					if (fr != FR_NEED || !need || i == n)
						break;
					size_t k = need - carry.len;
					if (k > n - i)
						k = n - i;
					tm_buf_add(&carry, blk + i, k);
					i += k;
				}
				if (fr == FR_NEED)
					break; /* next block */
				if (fr == FR_FATAL)
					break;
				if (fr == FR_LIMIT) {
					lim_h = used;
					lim_v = sk;
					goto limit;
				}
				/* Bytes of this block beyond the field go back. */
				size_t extra = carry.len - used;
				i -= extra;
				if (sk) {
					size_t k = sk < n - i ? (size_t)sk : n - i;
					i += k;
					skip = sk - k;
				}
				tm_buf_reset(&carry);
				continue;
			}
			/* Fast framing: packets with a one- or two-byte size that
			 * lie wholly in the block (frame_one's result for them).
			 * Pointers of its own (next() has the addresses of blk
			 * and n: they stay in memory). */
			const uint8_t *b = blk + i, *bend = blk + n, *b0 = blk;
			uint64_t b0_off = pos;
			while (bend - b >= 3) {
				size_t sz, h;
				if (b[0] != 0x0A)
					break;
				if (b[1] < 0x80) {
					sz = b[1];
					h = 2;
				} else if (b[2] < 0x80) {
					sz = (size_t)(b[1] & 0x7f) | (size_t)b[2] << 7;
					h = 3;
				} else {
					break;
				}
				if (!sz || sz > (size_t)(bend - b) - h)
					break;
				const uint8_t *pk = b + h;
				uint64_t off = b0_off + (uint64_t)(b - b0);
				b = pk + sz;
				/* only the general path stops the scan */
				if (!fast_packet(&s, pk, sz, bend, off)) {
					process_general(&s, pk, sz, bend, off);
					if (UNLIKELY(s.stop))
						break;
				}
			}
			i = (size_t)(b - blk);
			if (i >= n || s.stop)
				break;
			fr = frame_one(&s, blk + i, n - i, pos + i, &used, &sk, &need);
			if (fr == FR_DONE) {
				i += used;
				skip = sk;
				continue;
			}
			if (fr == FR_LIMIT) {
				lim_h = used;
				lim_v = sk;
				goto limit;
			}
			if (fr == FR_FATAL)
				break;
			/* FR_NEED: keep the tail */
			carry_off = pos + i;
			tm_buf_add(&carry, blk + i, n - i);
			i = n;
		}
		pos += n;
		if (s.stop)
			break;
		/* A straddling field larger than our cap is refused early. */
		continue;
	limit:
		draining = true;
		big_off = carry.len ? carry_off : pos + i;
		big_end = big_off + lim_h + lim_v < big_off ? UINT64_MAX : big_off + lim_h + lim_v;
		tm_buf_reset(&carry);
		skip = 0;
		pos += n;
	}
	if (draining && rc == TM_OK && pos >= big_end) {
		/* the whole packet is there: more than we hold */
		sc->failed = true;
		rc = tm_error_set(err, TM_ERR_LIMIT,
				  "byte 0x%llx: a trace packet larger than %u MiB is not supported",
				  (unsigned long long)big_off, MAX_PACKET >> 20);
		*tm_scan_err(sc) = *err;
	}
	uint64_t cut_at = carry_off, cut_have = carry.len;
	if (draining) { /* cut off inside it: ignored, like any cut-off packet */
		cut_at = big_off;
		cut_have = pos - big_off;
	}
	flush_nots(&s);
	eof_names(&s);
	sc->n_packets += s.n_fast_pk;
	sc->n_events += s.n_fast_ev;
	if (s.ts_min <= s.ts_max) {
		tm_scan_note_ts(sc, s.ts_min);
		tm_scan_note_ts(sc, s.ts_max);
	}
	/* trace_processor waits for the rest of a cut-off packet and ignores it
	 * at the end; we say so (ours; it changes no number). */
	if (rc == TM_OK && !s.stop && cut_have)
		tm_scan_warn(sc,
			     "byte %llu (0x%llx): the member ends inside a packet (%llu bytes of it "
			     "present); trace_processor ignores the cut-off packet",
			     (unsigned long long)cut_at, (unsigned long long)cut_at,
			     (unsigned long long)cut_have);
	else if (rc == TM_OK && !s.stop && skip)
		tm_scan_warn(sc,
			     "byte %llu (0x%llx): the member ends %llu bytes short of the end of its "
			     "last field; trace_processor ignores the cut-off part",
			     (unsigned long long)pos, (unsigned long long)pos, (unsigned long long)skip);
	if (ctl && ctl->progress)
		atomic_store(ctl->progress, pos);
	tm_buf_fini(&carry);
	ps_fini(&s);
	return rc;
}

static enum tm_status
stream_next(void *ctx, const uint8_t **p, size_t *n, struct tm_error *err)
{
	return tm_stream_next(ctx, p, n, err);
}

enum tm_status
tm_scan_proto(struct tm_stream *st, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
	      struct tm_error *err)
{
	return tm_scan_proto_blocks(stream_next, st, sc, ctl, err);
}

/* The format table's sniffer (util/trace_type.cc, GuessTraceType): a
 * TracePacket's tag (field 1, length-delimited) first. */
bool
tm_sniff_proto(struct tm_sniff_in *in)
{
	return in->n > 0 && in->d[0] == 0x0a;
}

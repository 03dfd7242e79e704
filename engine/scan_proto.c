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
 * Blocks come from tm_stream_next; a top-level field that straddles blocks
 * is copied into a growable carry buffer, everything else is walked in place.
 *
 * Speed (tools/bench_proto, make bench): packets that lie in the block with
 * a one- or two-byte size are framed inline; TrackEvent packets of the usual
 * shape take fast_packet, which bails out to the general path (before any
 * state change) on anything else; fields are read with rd_tag/rd_value and
 * 8-byte SWAR varints instead of next_field; a packet's single TrackEvent op
 * and ftrace events of packets without a timestamp go straight to the op
 * log, other payload ops through the compact pending list.  Every shortcut
 * emits exactly the ops of the general path (test_scan_proto checks).
 */
#include "scan.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_PACKET (256u << 20)       /* one top-level packet, ours */
#define MAX_INFLATED (256u << 20)     /* one compressed_packets, inflated */
#define MAX_RATIO 1024u               /* inflated / compressed */
#define MAX_HEADER 20                 /* kMaxHeaderBytes of the TP tokenizer */
#define MAX_CPU 1024

#define MSG_PACKET_CORRUPT                                                                         \
	"Failed to parse proto packet fully; the trace is probably corrupt. (ERR:tp-corrupt)"

/* ------------------------------------------------------------------ */
/* varints                                                             */
/* ------------------------------------------------------------------ */

/* Decode a varint in [p, end); returns the byte after it, or NULL when the
 * varint does not end before end (or is longer than 10 bytes). */
#define AINLINE static inline __attribute__((always_inline))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The general decoder (and the reference for the fast one below). */
static const uint8_t *
get_varint_slow(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;
	for (unsigned shift = 0; p < end && shift < 70; shift += 7) {
		uint8_t b = *p++;
		r |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 63);
		if (!(b & 0x80)) {
			*v = r;
			return p;
		}
	}
	return NULL;
}

/* Decode a varint in [p, end); returns the byte after it, or NULL when the
 * varint does not end before end (or is longer than 10 bytes).  With 8
 * bytes at hand, varints of up to 8 bytes are decoded without a loop: find
 * the first byte without the continuation bit, mask the bytes after it
 * off, squeeze out the continuation bits. */
AINLINE const uint8_t *
get_varint_lim(const uint8_t *p, const uint8_t *end, const uint8_t *lim, uint64_t *v)
{
	if (LIKELY(p < end && *p < 0x80)) {
		*v = *p;
		return p + 1;
	}
	if (LIKELY(lim - p >= 8 && p < end)) {
		uint64_t x;
		memcpy(&x, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		x = __builtin_bswap64(x);
#endif
		uint64_t stop = ~x & 0x8080808080808080ULL;
		if (LIKELY(stop)) {
			unsigned bits = (unsigned)__builtin_ctzll(stop) + 1; /* 8, 16, .. 64 */
			x &= ((stop & -stop) << 1) - 1; /* bytes up to the last one */
			x &= 0x7f7f7f7f7f7f7f7fULL;
			x = (x & 0x007f007f007f007fULL) | ((x & 0x7f007f007f007f00ULL) >> 1);
			x = (x & 0x00003fff00003fffULL) | ((x & 0x3fff00003fff0000ULL) >> 2);
			x = (x & 0x000000000fffffffULL) | ((x & 0x0fffffff00000000ULL) >> 4);
			if (UNLIKELY(bits / 8 > (unsigned)(end - p)))
				return NULL; /* runs past end */
			*v = x;
			return p + bits / 8;
		}
	}
	return get_varint_slow(p, end, v);
}

/* The same where only [p, end) may be read. */
AINLINE const uint8_t *
get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	return get_varint_lim(p, end, end, v);
}

/* One field of a message: id, wire type, varint value or byte range. */
struct field {
	uint32_t id;
	uint32_t wt;
	uint64_t v;
	const uint8_t *p;
	size_t len;
};

/* Next field of [*pp, end).  1 = field read, 0 = end, -1 = malformed (as
 * protozero's decoder, which then leaves bytes_left). */
static inline int
next_field(const uint8_t **pp, const uint8_t *end, struct field *f)
{
	const uint8_t *p = *pp;
	uint64_t tag;
	f->p = NULL;
	f->len = 0;
	f->v = 0;
	if (p >= end)
		return 0;
	p = get_varint(p, end, &tag);
	if (!p)
		return -1;
	f->id = (uint32_t)(tag >> 3);
	f->wt = (uint32_t)(tag & 7);
	if (f->id == 0 || (tag >> 3) > UINT32_MAX)
		return -1;
	switch (f->wt) {
	case 0:
		p = get_varint(p, end, &f->v);
		if (!p)
			return -1;
		break;
	case 1:
		if (end - p < 8)
			return -1;
		memcpy(&f->v, p, 8);
		f->p = p;
		f->len = 8;
		p += 8;
		break;
	case 2: {
		uint64_t n;
		p = get_varint(p, end, &n);
		if (!p || n > (uint64_t)(end - p))
			return -1;
		f->p = p;
		f->len = (size_t)n;
		f->v = n;
		p += n;
		break;
	}
	case 5: {
		uint32_t x;
		if (end - p < 4)
			return -1;
		memcpy(&x, p, 4);
		f->v = x;
		f->p = p;
		f->len = 4;
		p += 4;
		break;
	}
	default:
		return -1;
	}
	*pp = p;
	return 1;
}

/* The hot walkers (packet, TrackEvent, ftrace event) read fields with these
 * two instead of next_field: the same acceptance rules, but no struct and
 * the tag kept whole (id << 3 | wire type) for one switch.  lim >= end: the
 * end of the readable buffer (varints may load 8 bytes at once up to it).
 * Tag at p < end: NULL when malformed (bad varint, id 0 or > UINT32_MAX). */
AINLINE const uint8_t *
rd_tag(const uint8_t *p, const uint8_t *end, const uint8_t *lim, uint64_t *tag)
{
	if (LIKELY(*p < 0x80)) {
		*tag = *p;
		return *p >= 8 ? p + 1 : NULL;
	}
	if (LIKELY(end - p >= 2 && p[1] < 0x80)) { /* ids 16..2047: never 0 */
		*tag = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		return p + 2;
	}
	p = get_varint_lim(p, end, lim, tag);
	if (!p || (*tag >> 3) == 0 || (*tag >> 3) > UINT32_MAX)
		return NULL;
	return p;
}

/* The value of a field of wire type wt at p: *v = the varint, the fixed
 * value or the length; [*fp, +*fl) the bytes of non-varint fields.  NULL
 * when malformed. */
AINLINE const uint8_t *
rd_value(const uint8_t *p, const uint8_t *end, const uint8_t *lim, uint32_t wt, uint64_t *v,
	 const uint8_t **fp, size_t *fl)
{
	switch (wt) {
	case 0:
		if (LIKELY(p < end && *p < 0x80)) {
			*v = *p;
			return p + 1;
		}
		return get_varint_lim(p, end, lim, v);
	case 2: {
		uint64_t n;
		if (LIKELY(p < end && *p < 0x80)) {
			n = *p++;
		} else {
			p = get_varint_lim(p, end, lim, &n);
			if (!p)
				return NULL;
		}
		if (n > (uint64_t)(end - p))
			return NULL;
		*fp = p;
		*fl = (size_t)n;
		*v = n;
		return p + n;
	}
	case 1:
		if (end - p < 8)
			return NULL;
		memcpy(v, p, 8);
		*fp = p;
		*fl = 8;
		return p + 8;
	case 5: {
		uint32_t x;
		if (end - p < 4)
			return NULL;
		memcpy(&x, p, 4);
		*v = x;
		*fp = p;
		*fl = 4;
		return p + 4;
	}
	default:
		return NULL;
	}
}

static int64_t
sat_mul_1000(int64_t v)
{
	int64_t r;
	if (__builtin_mul_overflow(v, (int64_t)1000, &r))
		return v < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

static int64_t
sat_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

/* ------------------------------------------------------------------ */
/* state                                                               */
/* ------------------------------------------------------------------ */

struct seq {
	uint64_t key; /* machine << 32 | seq id; UINT64_MAX = empty slot */
	bool used;
	bool valid;        /* incremental state valid (starts invalid) */
	bool has_defaults; /* TracePacketDefaults present in this generation */
	bool def_has_track;
	bool te_ts_valid;  /* ThreadDescriptor reference timestamps valid */
	uint32_t def_clock;
	uint64_t def_track;
	int64_t te_ref_ns;
	uint32_t gen;      /* interning generation, bumped on clear */
};

struct machine {
	uint32_t id;
	bool seen;
	bool has_ft_snap;
	int64_t last_ft_snap; /* latest_ftrace_clock_snapshot_ts_ */
	uint8_t first_bundle[MAX_CPU / 8];
};

struct iname {
	uint64_t key; /* hash of (seq slot, gen, iid); 0 = empty */
	uint32_t slot, gen;
	uint64_t iid;
	uint32_t off, len; /* into names pool */
};

/* A pending op: the tm_op fields the scanner sets (tm_op itself is large). */
struct pend {
	enum tm_op_kind kind;
	uint32_t machine, clock, seq, flags, n, primary, stat, detail;
	int64_t ts;
	uint64_t offset;
	size_t arr; /* index into the clocks, tss or text pool */
};

struct ps {
	struct tm_scan *sc;
	struct tm_oplog *log;
	const struct tm_scan_ctl *ctl;
	bool keep;
	bool stop; /* FATAL emitted: the import fails here */

	struct seq *seqs;
	size_t cap_seqs, n_seqs; /* power of two */
	size_t last_seq;         /* slot of the last lookup */

	struct machine *machines;
	size_t n_machines, cap_machines;

	struct iname *names;
	size_t cap_names, n_names;
	struct tm_buf npool;

	/* payload ops of the current packet */
	struct pend *pend;
	size_t n_pend, cap_pend;
	struct tm_op_clock *pclocks;
	size_t n_pclocks, cap_pclocks;
	int64_t *ptss;
	size_t n_ptss, cap_ptss;
	struct tm_buf ptext; /* NUL-separated texts of pending SYSINFO/FATAL */

	uint32_t nots; /* pending merged PUSH_NOTS */
	uint32_t nots_machine;
	uint64_t nots_off;

	int codec; /* 0 none yet, 1 gzip/zlib, 2 zstd */
	uint8_t *inflated;
	size_t cap_inflated;
	uint32_t depth;
	bool no_fast; /* tests: general path only */
	bool m0_seen; /* machine 0's MACHINE op is out */
	/* tm_scan_note_ts, kept here and handed over at the end */
	bool has_ts_seen;
	int64_t ts_min, ts_max;
	/* slot of (machine 0, sequence id) for ids < 64; checked on use */
	uint32_t seq_small[64];
	struct tm_op pkt_op; /* fast_packet's PACKET op: only the fields it sets change */
};

static uint64_t
mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static void
seqs_grow(struct ps *s)
{
	size_t nc = s->cap_seqs ? s->cap_seqs * 2 : 64;
	struct seq *ns = xcalloc(nc, sizeof *ns);
	for (size_t i = 0; i < s->cap_seqs; i++) {
		if (!s->seqs[i].used)
			continue;
		size_t j = mix64(s->seqs[i].key) & (nc - 1);
		while (ns[j].used)
			j = (j + 1) & (nc - 1);
		ns[j] = s->seqs[i];
	}
	free(s->seqs);
	s->seqs = ns;
	s->cap_seqs = nc;
}

static struct seq *get_seq_slow(struct ps *s, uint64_t key, uint32_t *slot);

AINLINE struct seq *
get_seq(struct ps *s, uint32_t machine, uint32_t seq, uint32_t *slot)
{
	uint64_t key = (uint64_t)machine << 32 | seq;
	if (key < 64 && s->cap_seqs) {
		struct seq *q = &s->seqs[s->seq_small[key]];
		if (q->used && q->key == key) {
			if (slot)
				*slot = s->seq_small[key];
			return q;
		}
	}
	return get_seq_slow(s, key, slot);
}

static struct seq *
get_seq_slow(struct ps *s, uint64_t key, uint32_t *slot)
{
	if (s->cap_seqs && s->seqs[s->last_seq].used && s->seqs[s->last_seq].key == key) {
		if (slot)
			*slot = (uint32_t)s->last_seq;
		return &s->seqs[s->last_seq];
	}
	if ((s->n_seqs + 1) * 2 > s->cap_seqs)
		seqs_grow(s);
	size_t j = mix64(key) & (s->cap_seqs - 1);
	while (s->seqs[j].used) {
		if (s->seqs[j].key == key)
			goto out;
		j = (j + 1) & (s->cap_seqs - 1);
	}
	memset(&s->seqs[j], 0, sizeof s->seqs[j]);
	s->seqs[j].used = true;
	s->seqs[j].key = key;
	s->n_seqs++;
out:
	s->last_seq = j;
	if (key < 64)
		s->seq_small[key] = (uint32_t)j;
	if (slot)
		*slot = (uint32_t)j;
	return &s->seqs[j];
}

static struct machine *
get_machine(struct ps *s, uint32_t id)
{
	if (s->n_machines && s->machines[0].id == id)
		return &s->machines[0];
	for (size_t i = 0; i < s->n_machines; i++)
		if (s->machines[i].id == id)
			return &s->machines[i];
	XGROW(s->machines, s->cap_machines, s->n_machines + 1);
	struct machine *m = &s->machines[s->n_machines++];
	memset(m, 0, sizeof *m);
	m->id = id;
	return m;
}

/* Interned names, keyed by the sequence's stable id (machine, seq), its
 * generation and the iid. */
static uint64_t
name_key(uint64_t seqkey, uint32_t gen, uint64_t iid)
{
	uint64_t k = mix64(seqkey ^ mix64(((uint64_t)gen << 1) ^ mix64(iid)));
	return k ? k : 1;
}

static void
names_grow(struct ps *s)
{
	size_t nc = s->cap_names ? s->cap_names * 2 : 256;
	struct iname *nn = xcalloc(nc, sizeof *nn);
	for (size_t i = 0; i < s->cap_names; i++) {
		if (!s->names[i].key)
			continue;
		size_t j = s->names[i].key & (nc - 1);
		while (nn[j].key)
			j = (j + 1) & (nc - 1);
		nn[j] = s->names[i];
	}
	free(s->names);
	s->names = nn;
	s->cap_names = nc;
}

static void
name_put(struct ps *s, const struct seq *q, uint64_t iid, const uint8_t *str, size_t len)
{
	if ((s->n_names + 1) * 2 > s->cap_names)
		names_grow(s);
	uint64_t k = name_key(q->key, q->gen, iid);
	size_t j = k & (s->cap_names - 1);
	while (s->names[j].key && s->names[j].key != k)
		j = (j + 1) & (s->cap_names - 1);
	if (!s->names[j].key)
		s->n_names++;
	s->names[j].key = k;
	s->names[j].iid = iid;
	s->names[j].off = (uint32_t)s->npool.len;
	s->names[j].len = (uint32_t)len;
	tm_buf_add(&s->npool, str, len);
}

static bool
name_get(const struct ps *s, const struct seq *q, uint64_t iid, const char **str, size_t *len)
{
	if (!s->cap_names)
		return false;
	uint64_t k = name_key(q->key, q->gen, iid);
	size_t j = k & (s->cap_names - 1);
	while (s->names[j].key) {
		if (s->names[j].key == k) {
			*str = s->npool.data + s->names[j].off;
			*len = s->names[j].len;
			return true;
		}
		j = (j + 1) & (s->cap_names - 1);
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* emitting                                                            */
/* ------------------------------------------------------------------ */

static void
flush_nots_now(struct ps *s)
{
	struct tm_op op = {.kind = TM_OP_PUSH_NOTS, .machine = s->nots_machine, .n = s->nots,
			   .offset = s->nots_off};
	tm_oplog_add(s->log, &op);
	s->sc->n_events += s->nots;
	s->nots = 0;
}

AINLINE void
flush_nots(struct ps *s)
{
	if (UNLIKELY(s->nots))
		flush_nots_now(s);
}

static void
emit(struct ps *s, const struct tm_op *op)
{
	flush_nots(s);
	tm_oplog_add(s->log, op);
	if (op->kind == TM_OP_FATAL) {
		s->stop = true;
		s->sc->failed = true;
		tm_error_set(&s->sc->err, TM_ERR_FORMAT, "byte 0x%llx: %s",
			     (unsigned long long)op->offset, op->text);
	}
}

static struct pend *
pend_add(struct ps *s, enum tm_op_kind kind, uint32_t machine, uint64_t off)
{
	if (UNLIKELY(s->n_pend == s->cap_pend))
		XGROW(s->pend, s->cap_pend, s->n_pend + 1);
	struct pend *p = &s->pend[s->n_pend++];
	*p = (struct pend){.kind = kind, .machine = machine, .offset = off};
	return p;
}

/* A pending op with a text (copied: fixed up at flush). */
static void
pend_text(struct ps *s, enum tm_op_kind kind, uint32_t machine, uint64_t off, const char *text,
	  size_t len)
{
	pend_add(s, kind, machine, off);
	s->pend[s->n_pend - 1].arr = s->ptext.len;
	tm_buf_add(&s->ptext, text, len);
	tm_buf_addc(&s->ptext, 0);
}

static void
pend_fatal(struct ps *s, uint32_t machine, uint64_t off, const char *text)
{
	pend_text(s, TM_OP_FATAL, machine, off, text, strlen(text));
}

static void
pend_stat(struct ps *s, uint32_t machine, uint64_t off, enum tm_stat_id st)
{
	struct pend *op = pend_add(s, TM_OP_STAT, machine, off);
	op->stat = (uint32_t)st;
	op->n = 1;
}

/* Emit the pending payload ops: after a PACKET (has_ts) or on their own. */
static void
pend_flush(struct ps *s, bool has_ts)
{
	for (size_t i = 0; i < s->n_pend; i++) {
		const struct pend *pd = &s->pend[i];
		if (pd->kind == TM_OP_CONVERT) {
			/* the bulk of ftrace bundles: straight to the appender */
			if (!(pd->flags & TM_CONV_NO_PUSH))
				s->sc->n_events++;
			flush_nots(s);
			tm_oplog_convert(s->log, pd->machine, pd->clock, pd->seq, pd->ts, pd->flags,
					 pd->detail, pd->offset);
			continue;
		}
		struct tm_op op = {.kind = pd->kind, .machine = pd->machine, .clock = pd->clock,
				   .seq = pd->seq, .flags = pd->flags, .ts = pd->ts, .n = pd->n,
				   .primary = pd->primary, .stat = pd->stat, .detail = pd->detail,
				   .offset = pd->offset};
		switch (op.kind) {
		case TM_OP_SNAPSHOT:
			op.clocks = s->pclocks + pd->arr;
			break;
		case TM_OP_SYSINFO:
		case TM_OP_FATAL:
			op.text = s->ptext.data + pd->arr;
			break;
		case TM_OP_CONVERT_ARRAY:
			op.tss = s->ptss + pd->arr;
			s->sc->n_events += op.n;
			break;
		case TM_OP_PUSH:
			if (!has_ts && !op.detail) {
				if (s->nots && s->nots_machine != op.machine)
					flush_nots(s);
				if (!s->nots) {
					s->nots_machine = op.machine;
					s->nots_off = op.offset;
				}
				s->nots++;
				continue;
			}
			if (!has_ts) {
				/* A detailed push without a timestamp: the
				 * op log's PUSH_NOTS carries no detail. */
				op.kind = TM_OP_PUSH_NOTS;
				op.n = 1;
				emit(s, &op);
				s->sc->n_events++;
				continue;
			}
			s->sc->n_events++;
			break;
		default:
			break;
		}
		emit(s, &op);
		if (s->stop)
			break;
	}
	s->n_pend = s->n_pclocks = s->n_ptss = 0;
	tm_buf_reset(&s->ptext);
}

static void
note_clock(struct ps *s, uint32_t c)
{
	tm_scan_note_clock(s->sc, c);
}

/* tm_scan_note_ts, batched (min and max only: the order does not matter). */
AINLINE void
note_ts(struct ps *s, int64_t ts)
{
	if (UNLIKELY(!s->has_ts_seen)) {
		s->has_ts_seen = true;
		s->ts_min = s->ts_max = ts;
	}
	if (ts < s->ts_min)
		s->ts_min = ts;
	if (ts > s->ts_max)
		s->ts_max = ts;
}

/* ------------------------------------------------------------------ */
/* TracePacket                                                         */
/* ------------------------------------------------------------------ */

struct pkt {
	uint64_t off;
	const uint8_t *lim; /* end of the buffer holding the packet */
	uint32_t machine;
	bool has_ts, has_clock, has_seq, has_flags, has_sync, cleared_legacy;
	uint64_t ts;
	uint32_t clock, seq, flags, dropped;
	bool has_snapshot, has_defaults, has_interned, has_remote, has_service, has_ext;
	bool has_compressed, has_zstd, has_chrome;
	bool has_td_before;
	uint32_t handler; /* first module-handled field */
	/* Below: valid only when the matching has_ / handler is set (not
	 * cleared per packet). */
	struct field snapshot, defaults, interned, remote, compressed, zstd;
	struct field hfield, td;
};

enum {
	F_FTRACE = 1,
	F_TRACK_EVENT = 11,
	F_THREAD_DESC = 44,
	F_SYSINFO = 45,
	F_STATSD = 84,
	F_STREAMING_PROFILE = 54,
};

static bool
is_handler(uint32_t id)
{
	switch (id) {
	case 1:   /* ftrace_events */
	case 11:  /* track_event */
	case 45:  /* system_info */
	case 48:  /* chrome_benchmark_metadata */
	case 51:  /* chrome_metadata */
	case 54:  /* streaming_profile_packet */
	case 67:  /* cpu_info */
	case 78:  /* ui_state */
	case 84:  /* statsd_atom */
	case 89:  /* trace_uuid */
	case 128: /* gpu_info */
	case 130: /* interrupt_info */
		return true;
	}
	return false;
}

/* Walk a TracePacket's top-level fields.  false: malformed (the fields
 * before the bad one are kept, as with protozero). */
static bool
decode_packet(const uint8_t *p, size_t n, struct pkt *k)
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
		case 8 << 3 | 0:
			k->has_ts = true;
			k->ts = v;
			continue;
		case 10 << 3 | 0:
			k->has_seq = true;
			k->seq = (uint32_t)v;
			continue;
		case 13 << 3 | 0:
			k->has_flags = true;
			k->flags = (uint32_t)v;
			continue;
		case 58 << 3 | 0:
			k->has_clock = true;
			k->clock = (uint32_t)v;
			continue;
		default:
			break;
		}
		uint32_t id = (uint32_t)(tag >> 3);
		switch (id) {
		case 41:
			if (wt == 0)
				k->cleared_legacy = v != 0;
			break;
		case 42:
			if (wt == 0)
				k->dropped = (uint32_t)v;
			break;
		case 98:
			if (wt == 0)
				k->machine = (uint32_t)v;
			break;
		case 6:
			if (wt == 2) {
				k->has_snapshot = true;
				k->snapshot = (struct field){id, wt, v, fp, fl};
			}
			break;
		case 59:
			if (wt == 2) {
				k->has_defaults = true;
				k->defaults = (struct field){id, wt, v, fp, fl};
			}
			break;
		case 12:
			if (wt == 2) {
				k->has_interned = true;
				k->interned = (struct field){id, wt, v, fp, fl};
			}
			break;
		case 107:
			if (wt == 2) {
				k->has_remote = true;
				k->remote = (struct field){id, wt, v, fp, fl};
			}
			break;
		case 69:
			k->has_service = true;
			break;
		case 72:
			k->has_ext = true;
			break;
		case 36:
			k->has_sync = true;
			break;
		case 50:
			if (wt == 2) {
				k->has_compressed = true;
				k->compressed = (struct field){id, wt, v, fp, fl};
			}
			break;
		case 133:
			if (wt == 2) {
				k->has_zstd = true;
				k->zstd = (struct field){id, wt, v, fp, fl};
			}
			break;
		case 5:
		case 51:
			k->has_chrome = true;
			break;
		default:
			break;
		}
		if (!k->handler && wt == 2) {
			if (id == F_THREAD_DESC && !k->has_td_before) {
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

static void process_packet(struct ps *s, const uint8_t *p, size_t n, const uint8_t *lim,
			   uint64_t off);
static void process_general(struct ps *s, const uint8_t *p, size_t n, const uint8_t *lim,
			    uint64_t off);

/* ClockSnapshot → SNAPSHOT op (or the sequence-clock fatal). */
static void
do_snapshot(struct ps *s, const struct pkt *k)
{
	const uint8_t *p = k->snapshot.p, *end = p + k->snapshot.len;
	struct field f;
	uint32_t primary = 0;
	size_t base = s->n_pclocks;
	while (next_field(&p, end, &f) > 0) {
		if (f.id == 2 && f.wt == 0) {
			primary = (uint32_t)f.v;
		} else if (f.id == 1 && f.wt == 2) {
			struct tm_op_clock c = {0, 0, 1, false};
			const uint8_t *q = f.p, *qe = f.p + f.len;
			struct field g;
			while (next_field(&q, qe, &g) > 0) {
				if (g.wt != 0)
					continue;
				if (g.id == 1)
					c.id = (uint32_t)g.v;
				else if (g.id == 2)
					c.ts = (int64_t)g.v;
				else if (g.id == 3)
					c.is_incremental = g.v != 0;
				else if (g.id == 4)
					c.unit = g.v ? g.v : 1;
			}
			if (c.id >= 64 && c.id <= 127 && !k->seq) {
				s->n_pclocks = base;
				emit(s, &(struct tm_op){
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
	emit(s, &op);
	s->n_pclocks = base;
}

/* RemoteClockSync → REMOTE_SYNC op: per round the client clocks, then the
 * host clocks, each as given (unit 1, not incremental, as TP adds them). */
static void
snap_clocks(struct ps *s, const uint8_t *p, size_t n, uint32_t *count)
{
	const uint8_t *end = p + n;
	struct field f;
	*count = 0;
	while (next_field(&p, end, &f) > 0) {
		if (f.id != 1 || f.wt != 2)
			continue;
		struct tm_op_clock c = {0, 0, 1, false};
		const uint8_t *q = f.p, *qe = f.p + f.len;
		struct field g;
		while (next_field(&q, qe, &g) > 0) {
			if (g.wt != 0)
				continue;
			if (g.id == 1)
				c.id = (uint32_t)g.v;
			else if (g.id == 2)
				c.ts = (int64_t)g.v;
		}
		XGROW(s->pclocks, s->cap_pclocks, s->n_pclocks + 1);
		s->pclocks[s->n_pclocks++] = c;
		(*count)++;
	}
}

static void
do_remote_sync(struct ps *s, const struct pkt *k)
{
	const uint8_t *p = k->remote.p, *end = p + k->remote.len;
	struct field f;
	uint32_t *counts = NULL;
	size_t n_rounds = 0, cap = 0;
	size_t base = s->n_pclocks;
	while (next_field(&p, end, &f) > 0) {
		if (f.id != 1 || f.wt != 2)
			continue;
		struct field client, host;
		memset(&client, 0, sizeof client);
		memset(&host, 0, sizeof host);
		const uint8_t *q = f.p, *qe = f.p + f.len;
		struct field g;
		while (next_field(&q, qe, &g) > 0) {
			if (g.wt == 2 && g.id == 2)
				client = g;
			else if (g.wt == 2 && g.id == 3)
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
	emit(s, &op);
	free(counts);
	s->n_pclocks = base;
}

static void
do_defaults(struct seq *q, const struct field *d)
{
	const uint8_t *p = d->p, *end = p + d->len;
	struct field f;
	q->has_defaults = true;
	q->def_clock = 0;
	q->def_has_track = false;
	q->def_track = 0;
	while (next_field(&p, end, &f) > 0) {
		if (f.id == 58 && f.wt == 0) {
			q->def_clock = (uint32_t)f.v;
		} else if (f.id == 11 && f.wt == 2) {
			const uint8_t *r = f.p, *re = f.p + f.len;
			struct field g;
			while (next_field(&r, re, &g) > 0) {
				if (g.id == 11 && g.wt == 0) {
					q->def_has_track = true;
					q->def_track = g.v;
				}
			}
		}
	}
}

static void
do_interned(struct ps *s, struct seq *q, const struct field *d)
{
	const uint8_t *p = d->p, *end = p + d->len;
	struct field f;
	while (next_field(&p, end, &f) > 0) {
		if (f.id != 2 || f.wt != 2)
			continue; /* event_names */
		const uint8_t *r = f.p, *re = f.p + f.len;
		struct field g;
		uint64_t iid = 0;
		const uint8_t *str = NULL;
		size_t len = 0;
		while (next_field(&r, re, &g) > 0) {
			if (g.id == 1 && g.wt == 0)
				iid = g.v;
			else if (g.id == 2 && g.wt == 2) {
				str = g.p;
				len = g.len;
			}
		}
		if (str)
			name_put(s, q, iid, str, len);
	}
}

/* The one payload op of a TrackEvent packet (kind 0: none). */
struct te_op {
	enum tm_op_kind kind; /* TM_OP_PUSH, TM_OP_CONVERT or TM_OP_STAT */
	uint32_t flags, detail, stat;
	int64_t ts;
};

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
	bool has_counter = false, has_name = false, has_name_iid = false;
	bool has_ic_delta = false;
	int64_t delta = 0, absolute = 0;
	uint64_t type = 0, track = 0, name_iid = 0;
	int64_t legacy_phase = 0;
	const uint8_t *name = NULL;
	size_t name_len = 0;
	while (p < end) {
		uint64_t tag, v;
		p = rd_tag(p, end, lim, &tag);
		if (UNLIKELY(!p))
			break;
		uint32_t wt = (uint32_t)(tag & 7);
		if (LIKELY(wt == 0)) {
			p = get_varint_lim(p, end, lim, &v);
			if (UNLIKELY(!p))
				break;
			/* the common ones by compare, the rest by switch */
			uint64_t id = tag >> 3;
			if (id == 9) {
				type = v;
				continue;
			}
			if (id == 11) {
				has_track = true;
				track = v;
				continue;
			}
			if (id == 10) {
				has_name_iid = true;
				name_iid = v;
				continue;
			}
			switch (id) {
			case 1:
				has_delta = true;
				delta = (int64_t)v;
				break;
			case 16:
				absolute = (int64_t)v;
				break;
			case 30:
				has_counter = true;
				break;
			case 2:
				has_tt_delta = true;
				break;
			case 8:
				has_ic_delta = true;
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
		case 23:
			if (wt == 2) {
				has_name = true;
				name = fp;
				name_len = fl;
			}
			break;
		case 44:
			if (wt == 1)
				has_counter = true;
			break;
		case 2:
			has_tt_delta = false; /* not a varint */
			break;
		case 8:
			has_ic_delta = false;
			break;
		case 6:
			if (wt == 2 && s->keep) {
				const uint8_t *r = fp, *re = fp + fl;
				struct field g;
				while (next_field(&r, re, &g) > 0)
					if (g.id == 2 && g.wt == 0)
						legacy_phase = (int64_t)g.v;
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

	/* Validation after the legacy conversion. */
	bool ok = true;
	if ((has_tt_delta || has_ic_delta) && !q->te_ts_valid)
		ok = false;
	if (type == 4 && ((!has_track && !q->def_has_track) || !has_counter))
		ok = false;
	if (type == 5 && !has_track && !q->def_has_track)
		ok = false;

	uint32_t detail = 0;
	if (ok && s->keep) {
		const char *nm = (const char *)name;
		size_t nl = name_len;
		if (!has_name && has_name_iid && !name_get(s, q, name_iid, &nm, &nl)) {
			nm = NULL;
			nl = 0;
		}
		if (!has_name && !has_name_iid)
			nm = NULL;
		char ph = 0;
		switch (type) {
		case 1: ph = 'B'; break;
		case 2: ph = 'E'; break;
		case 3: ph = 'I'; break;
		case 4: ph = 'C'; break;
		default:
			if (legacy_phase > 0 && legacy_phase < 128)
				ph = (char)legacy_phase;
			break;
		}
		uint64_t key = has_track ? track
			       : q->def_has_track ? q->def_track
						  : (1ULL << 63) | q->key;
		detail = tm_oplog_detail(s->log, nm, nm ? nl : 0, ph, key, -1);
	}

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

static size_t count_packed(const struct field *f);

/* StreamingProfilePacket (profile_module.cc TokenizeStreamingProfilePacket):
 * resolved at tokenize time against the sequence's TrackEvent reference
 * timestamp, which every delta advances (saturating).  A negative running
 * value counts streaming_profile_invalid_timestamp and stops the packet; it
 * also poisons later delta-timestamped TrackEvents on the sequence.  The
 * packet time is converted once from MONOTONIC (errors recorded, raw kept);
 * each sample is pushed at that time plus the cumulative deltas.  Here each
 * sample is converted on its own with errors suppressed, which gives the
 * same value unless a clock snapshot falls between two samples. */
static void
do_streaming_profile(struct ps *s, const struct pkt *k, struct seq *q, const struct field *sp)
{
	int64_t packet_ts = q->te_ref_ns;
	if (packet_ts < 0) {
		pend_stat(s, k->machine, k->off, TM_STAT_STREAMING_PROFILE_INVALID_TS);
		return;
	}
	int64_t deltas[64];
	size_t n_deltas = 0, n_stacks = 0;
	const uint8_t *p = sp->p, *end = p + sp->len;
	struct field f;
	bool more = false;
	while (next_field(&p, end, &f) > 0) {
		if (f.id == 1)
			n_stacks += f.wt == 2 ? count_packed(&f) : 1;
		if (f.id == 2) {
			if (f.wt == 0) {
				if (n_deltas < 64)
					deltas[n_deltas++] = (int64_t)f.v;
				else
					more = true;
			} else if (f.wt == 2) {
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
	struct pend *op = pend_add(s, TM_OP_CONVERT, k->machine, k->off);
	op->clock = 3;
	op->ts = packet_ts;
	op->flags = TM_CONV_FAIL_KEEP_RAW | TM_CONV_NO_PUSH;
	note_clock(s, 3);
	int64_t sample = packet_ts;
	for (size_t i = 0; i < n_deltas; i++) {
		int64_t d = sat_mul_1000(deltas[i]);
		q->te_ref_ns = sat_add(q->te_ref_ns, d);
		if (q->te_ref_ns < 0) {
			pend_stat(s, k->machine, k->off, TM_STAT_STREAMING_PROFILE_INVALID_TS);
			return;
		}
		if (i < n_stacks) {
			sample = sat_add(sample, d);
			struct pend *sop = pend_add(s, TM_OP_CONVERT, k->machine, k->off);
			sop->clock = 3;
			sop->ts = sample;
			sop->flags = TM_CONV_FAIL_KEEP_RAW | TM_CONV_SUPPRESS;
		}
	}
}

static void
do_thread_descriptor(struct seq *q, const struct field *td)
{
	const uint8_t *p = td->p, *end = p + td->len;
	struct field f;
	int64_t ref = 0;
	while (next_field(&p, end, &f) > 0)
		if (f.id == 6 && f.wt == 0)
			ref = (int64_t)f.v;
	q->te_ref_ns = sat_mul_1000(ref);
	q->te_ts_valid = true;
}

/* Packed varint array into *out (count *n); false if malformed. */
static size_t
count_packed(const struct field *f)
{
	if (!f->p)
		return 0;
	size_t c = 0;
	for (size_t i = 0; i < f->len; i++)
		if (!(f->p[i] & 0x80))
			c++;
	return c;
}

static void
compact_array(struct ps *s, const struct pkt *k, uint32_t clock, uint32_t seq,
	      const struct field *ts, const struct field *const *cols, size_t n_cols,
	      const struct field *comm, size_t n_intern)
{
	size_t n = count_packed(ts);
	for (size_t i = 0; i < n_cols; i++) {
		size_t c = count_packed(cols[i]);
		if (c < n)
			n = c;
	}
	size_t c = count_packed(comm);
	if (c < n)
		n = c;
	if (!n)
		return;
	XGROW(s->ptss, s->cap_ptss, s->n_ptss + n);
	size_t base = s->n_ptss;
	const uint8_t *tp = ts->p, *te = ts->p + ts->len;
	const uint8_t *cp = comm->p, *ce = comm->p + comm->len;
	int64_t acc = 0;
	size_t m = 0;
	for (; m < n; m++) {
		uint64_t d = 0, ci = 0;
		tp = get_varint(tp, te, &d);
		cp = get_varint(cp, ce, &ci);
		if (!tp || !cp || ci >= n_intern)
			break;
		acc = wrap_add(acc, (int64_t)d);
		s->ptss[base + m] = acc;
		note_ts(s, acc);
	}
	if (!m)
		return;
	s->n_ptss += m;
	struct pend *op = pend_add(s, TM_OP_CONVERT_ARRAY, k->machine, k->off);
	op->clock = clock;
	op->seq = seq;
	op->n = (uint32_t)m;
	s->pend[s->n_pend - 1].arr = base;
}

static void
do_compact_sched(struct ps *s, const struct pkt *k, uint32_t clock, uint32_t seq,
		 const struct field *cs)
{
	struct field col[13];
	memset(col, 0, sizeof col);
	size_t n_intern = 0;
	const uint8_t *p = cs->p, *end = p + cs->len;
	struct field f;
	while (next_field(&p, end, &f) > 0) {
		if (f.id == 5 && f.wt == 2)
			n_intern++;
		else if (f.id < 13 && f.wt == 2)
			col[f.id] = f;
	}
	const struct field *sw[] = {&col[2], &col[3], &col[4]};
	compact_array(s, k, clock, seq, &col[1], sw, 3, &col[6], n_intern);
	const struct field *wk[] = {&col[8], &col[9], &col[10]};
	compact_array(s, k, clock, seq, &col[7], wk, 3, &col[11], n_intern);
}

/* FtraceEventBundle (ftrace_tokenizer.cc TokenizeFtraceBundle). */
static void
do_ftrace(struct ps *s, const struct pkt *k, const struct field *b)
{
	const uint8_t *p = b->p, *end = p + b->len, *lim = k->lim;
	const uint8_t *events = NULL; /* the first event field */
	struct field compact;
	memset(&compact, 0, sizeof compact);
	bool has_cpu = false, has_clk = false, has_fts = false, has_bts = false;
	bool has_compact = false, has_first = false, has_prev = false, has_last = false;
	uint64_t cpu = 0, clk = 0, prev = 0, last = 0;
	int64_t fts = 0, bts = 0;
	/* Pass 1: the bundle's own fields (they may follow the events). */
	while (p < end) {
		const uint8_t *at = p, *fp = NULL;
		uint64_t tag, v;
		size_t fl = 0;
		p = rd_tag(p, end, lim, &tag);
		if (UNLIKELY(!p))
			break;
		uint32_t wt = (uint32_t)(tag & 7);
		p = rd_value(p, end, lim, wt, &v, &fp, &fl);
		if (UNLIKELY(!p))
			break;
		if (tag == (2 << 3 | 2)) {
			if (!events)
				events = at;
			continue;
		}
		if (wt == 0) {
			switch (tag >> 3) {
			case 1: has_cpu = true; cpu = (uint32_t)v; break; /* uint32 field */
			case 5: has_clk = true; clk = v; break;
			case 6: has_fts = true; fts = (int64_t)v; break;
			case 7: has_bts = true; bts = (int64_t)v; break;
			case 9: has_last = true; last = v; break;
			case 10: has_prev = true; prev = v; break;
			}
		} else if (wt == 2 && tag >> 3 == 4) {
			has_compact = true;
			compact = (struct field){4, 2, v, fp, fl};
		}
	}
	if (!has_cpu) {
		pend_stat(s, k->machine, k->off, TM_STAT_FTRACE_BUNDLE_ERRORS);
		return;
	}
	if ((uint32_t)cpu >= MAX_CPU) {
		char msg[160];
		snprintf(msg, sizeof msg,
			 "CPU %u is greater than maximum allowed of %u. This is likely because "
			 "of trace corruption (ERR:tp-corrupt)",
			 (unsigned)(uint32_t)cpu, (unsigned)MAX_CPU);
		pend_fatal(s, k->machine, k->off, msg);
		return;
	}
	uint32_t clock = 6, seq = 0;
	struct machine *m = get_machine(s, k->machine);
	if (has_clk) {
		switch (clk) {
		case 0: clock = 6; break;
		case 4: clock = 5; break;
		case 2:
		case 3:
			clock = 64;
			seq = k->seq;
			break;
		default:
			pend_fatal(s, k->machine, k->off,
				   "Unable to parse ftrace packets with unknown clock");
			return;
		}
		if (has_fts && has_bts && (!m->has_ft_snap ? fts != 0 : m->last_ft_snap != fts)) {
			XGROW(s->pclocks, s->cap_pclocks, s->n_pclocks + 2);
			size_t base = s->n_pclocks;
			s->pclocks[s->n_pclocks++] = (struct tm_op_clock){clock, fts, 1, false};
			s->pclocks[s->n_pclocks++] = (struct tm_op_clock){6, bts, 1, false};
			struct pend *op = pend_add(s, TM_OP_SNAPSHOT, k->machine, k->off);
			op->flags = TM_SNAP_AUX;
			op->seq = seq;
			op->n = 2;
			s->pend[s->n_pend - 1].arr = base;
			m->has_ft_snap = true;
			m->last_ft_snap = fts;
		}
	}
	note_clock(s, clock);
	if (has_compact)
		do_compact_sched(s, k, clock, seq, &compact);

	/* Pass 2: the events, from the first one (pass 1 stopped where this
	 * one stops).  Without a packet timestamp there is no PACKET op to
	 * count them first: what is pending goes out now and the events
	 * straight after it, in the same order pend_flush would give. */
	bool direct = !k->has_ts && events;
	if (direct && s->n_pend)
		pend_flush(s, false);
	p = events ? events : end;
	while (p < end) {
		const uint8_t *fp = NULL;
		uint64_t tag, v;
		size_t fl = 0;
		p = rd_tag(p, end, lim, &tag);
		if (UNLIKELY(!p))
			break;
		p = rd_value(p, end, lim, (uint32_t)(tag & 7), &v, &fp, &fl);
		if (UNLIKELY(!p))
			break;
		if (tag != (2 << 3 | 2))
			continue;
		const uint8_t *q = fp, *qe = fp + fl;
		bool has_ts = false;
		uint64_t ts = 0;
		uint32_t event_id = 0;
		const uint8_t *buf = NULL;
		size_t buf_len = 0;
		while (q < qe) {
			const uint8_t *gp = NULL;
			uint64_t gtag, gv;
			size_t gl = 0;
			q = rd_tag(q, qe, lim, &gtag);
			if (UNLIKELY(!q))
				break;
			uint32_t gwt = (uint32_t)(gtag & 7);
			q = rd_value(q, qe, lim, gwt, &gv, &gp, &gl);
			if (UNLIKELY(!q))
				break;
			if (gtag == (1 << 3 | 0) && !has_ts) {
				has_ts = true;
				ts = gv;
			} else if (gwt == 2 && !event_id) {
				event_id = (uint32_t)(gtag >> 3);
				if (event_id == 3 && s->keep) {
					const uint8_t *r = gp, *re = gp + gl;
					struct field h;
					while (next_field(&r, re, &h) > 0)
						if (h.id == 2 && h.wt == 2) {
							buf = h.p;
							buf_len = h.len;
						}
				}
			}
		}
		if (!has_ts) {
			if (direct)
				emit(s, &(struct tm_op){.kind = TM_OP_STAT, .machine = k->machine,
							.stat = TM_STAT_FTRACE_BUNDLE_ERRORS, .n = 1,
							.offset = k->off});
			else
				pend_stat(s, k->machine, k->off, TM_STAT_FTRACE_BUNDLE_ERRORS);
			continue;
		}
		if (!event_id)
			continue; /* ftrace_missing_event_id */
		uint32_t detail = 0;
		if (s->keep) {
			const char *nm = event_id == 3 ? "print" : event_id == 4 ? "sched_switch"
										: NULL;
			if (buf) {
				nm = (const char *)buf;
				while (buf_len && (buf[buf_len - 1] == '\n' || buf[buf_len - 1] == 0))
					buf_len--;
			}
			detail = tm_oplog_detail(s->log, nm, nm ? (buf ? buf_len : strlen(nm)) : 0,
						 'I', (1ULL << 62) | cpu, -1);
		}
		note_ts(s, (int64_t)ts);
		if (direct) {
			s->sc->n_events++;
			flush_nots(s);
			tm_oplog_convert(s->log, k->machine, clock, seq, (int64_t)ts, TM_CONV_FAIL_DROP,
					 detail, k->off);
			continue;
		}
		struct pend *op = pend_add(s, TM_OP_CONVERT, k->machine, k->off);
		op->clock = clock;
		op->seq = seq;
		op->ts = (int64_t)ts;
		op->flags = TM_CONV_FAIL_DROP;
		op->detail = detail;
	}

	if (!(m->first_bundle[cpu / 8] & (1u << (cpu % 8)))) {
		m->first_bundle[cpu / 8] |= (uint8_t)(1u << (cpu % 8));
		has_first = has_prev || has_last;
		if (has_first) {
			struct pend *op = pend_add(s, TM_OP_CONVERT, k->machine, k->off);
			op->clock = clock;
			op->seq = seq;
			op->ts = (int64_t)(has_prev ? prev : last);
			op->flags = TM_CONV_FAIL_FATAL | TM_CONV_NO_PUSH;
		}
	}
}

static void
do_sysinfo(struct ps *s, const struct pkt *k, const struct field *si)
{
	const uint8_t *p = si->p, *end = p + si->len;
	struct field f;
	while (next_field(&p, end, &f) > 0)
		if (f.id == 17 && f.wt == 2)
			pend_text(s, TM_OP_SYSINFO, k->machine, k->off, (const char *)f.p, f.len);
}

/* Statsd atoms: one push per atom (at timestamp_nanos[i] raw, else at the
 * packet ts); approximated as pushes at the packet ts. */
static void
do_statsd(struct ps *s, const struct pkt *k, const struct field *sa)
{
	const uint8_t *p = sa->p, *end = p + sa->len;
	struct field f;
	while (next_field(&p, end, &f) > 0)
		if (f.id == 1 && f.wt == 2)
			pend_add(s, TM_OP_PUSH, k->machine, k->off);
}

static void
do_compressed(struct ps *s, const struct pkt *k)
{
	int codec = k->has_compressed ? 1 : 2;
	if (s->codec && s->codec != codec) {
		emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .machine = 0, .offset = k->off,
					.text = "A trace must not mix compressed_packets and "
						"zstd_compressed_packets (ERR:tp-corrupt)"});
		return;
	}
	s->codec = codec;
	if (codec == 2) {
		s->stop = true;
		s->sc->failed = true;
		tm_error_set(&s->sc->err, TM_ERR_UNSUPPORTED,
			     "byte 0x%llx: zstd_compressed_packets are not supported by tracemerge",
			     (unsigned long long)k->off);
		return;
	}
	if (s->depth > 0) {
		/* Inner packets are never decompressed again by TP (its
		 * callback expects plain packets); treat like TP's CHECK. */
		emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = k->off,
					.text = "Failed to decompress compressed_packets "
						"(ERR:tp-corrupt)"});
		return;
	}
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 15 + 32) != Z_OK) {
		emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = k->off,
					.text = "Failed to decompress compressed_packets "
						"(ERR:tp-corrupt)"});
		return;
	}
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
			tm_error_set(&s->sc->err, TM_ERR_LIMIT,
				     "byte 0x%llx: compressed_packets inflate beyond %zu bytes",
				     (unsigned long long)k->off, cap_out);
			return;
		}
		emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = k->off,
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
			emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = k->off,
						.text = "Expected TracePacket tag (ERR:tp-corrupt)"});
			break;
		}
		uint64_t sz = 0;
		const uint8_t *q = get_varint(ptr + 1, end, &sz);
		if (!q || sz > (uint64_t)(end - q) || q + sz - outer < 2) {
			emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = k->off,
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

/* Append a TrackEvent's payload op after its PACKET (or alone, then never
 * a PUSH: a TrackEvent without any timestamp is dropped). */
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

/* The fast path for the packets that make up nearly all of a TrackEvent
 * trace: machine 0 (already seen), only timestamp, trusted_packet_sequence_id,
 * sequence_flags and track_event, each with a one-byte tag.  Anything else,
 * and every case that ends in a stat or a fatal, returns false before any
 * state changed (the sequence lookup may insert: the general path finds the
 * same entry), and process_packet takes the general path.  Otherwise the
 * same state changes and ops as the general path (test_scan_proto checks
 * both on random packets). */
AINLINE bool
fast_packet(struct ps *s, const uint8_t *p, size_t n, const uint8_t *lim, uint64_t off)
{
	const uint8_t *end = p + n, *te = NULL;
	uint64_t ts = 0, seq = 0, flags = 0, te_len = 0;
	bool has_ts = false, has_seq = false;
	if (UNLIKELY(!s->m0_seen || s->no_fast))
		return false;
	while (p < end) {
		uint8_t t = *p++;
		uint64_t v;
		p = get_varint_lim(p, end, lim, &v);
		if (UNLIKELY(!p))
			return false;
		if (t == (8 << 3 | 0)) {
			has_ts = true;
			ts = v;
		} else if (t == (10 << 3 | 0)) {
			has_seq = true;
			seq = v;
		} else if (t == (11 << 3 | 2)) {
			if (v > (uint64_t)(end - p))
				return false;
			if (!te) {
				te = p;
				te_len = v;
			}
			p += v;
		} else if (t == (13 << 3 | 0)) {
			flags = v;
		} else {
			return false;
		}
	}
	if (!te)
		return false;
	uint32_t seq32 = (uint32_t)seq, flags32 = (uint32_t)flags;
	if ((flags32 & 2) && !seq32)
		return false;
	struct seq *q = get_seq(s, 0, seq32, NULL);
	bool clear = (flags32 & 1) && has_seq;
	if ((flags32 & 2) && !clear && !q->valid)
		return false;
	uint32_t clock = 0;
	if (has_ts && !clear && q->has_defaults) {
		clock = q->def_clock;
		if (clock >= 64 && clock <= 127 && !seq32)
			return false;
	}

	/* Committed: as process_packet from here. */
	s->sc->n_packets++;
	if (clear) {
		q->valid = true;
		q->has_defaults = false;
		q->def_clock = 0;
		q->def_has_track = false;
		q->te_ts_valid = false;
		q->gen++;
	}
	if (clock)
		note_clock(s, clock);
	struct te_op r = {0};
	do_track_event(s, has_seq, has_ts, q, te, (size_t)te_len, lim, &r);
	if (has_ts && r.kind == TM_OP_PUSH && !r.detail) {
		flush_nots(s);
		tm_oplog_packet_push(s->log, 0, clock, seq32, (int64_t)ts, r.flags, off);
		note_ts(s, (int64_t)ts);
		s->sc->n_events++;
		return true;
	}
	if (has_ts) {
		/* s->pkt_op: a PACKET op kept zero but for these */
		struct tm_op *op = &s->pkt_op;
		op->clock = clock;
		op->seq = seq32;
		op->ts = (int64_t)ts;
		op->n = r.kind ? 1 : 0;
		op->offset = off;
		flush_nots(s);
		tm_oplog_add(s->log, op);
		note_ts(s, (int64_t)ts);
	} else if (r.kind) {
		flush_nots(s);
	}
	if (r.kind)
		emit_te(s, 0, off, &r);
	return true;
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
	bool ok = decode_packet(p, n, &k);
	if (k.has_compressed || k.has_zstd) {
		if (k.has_compressed && k.has_zstd)
			k.has_zstd = false; /* TP prefers compressed_packets */
		do_compressed(s, &k);
		return;
	}
	if (!ok) {
		emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .machine = k.machine, .offset = off,
					.text = MSG_PACKET_CORRUPT});
		return;
	}

	/* Machine dispatch marker. */
	struct machine *m = get_machine(s, k.machine);
	if (!m->seen && (k.machine != 0 || !k.has_sync)) {
		m->seen = true;
		if (!k.machine)
			s->m0_seen = true;
		emit(s, &(struct tm_op){.kind = TM_OP_MACHINE, .machine = k.machine, .offset = off});
		if (k.machine)
			tm_scan_note_machine(s->sc, k.machine);
	}

	uint32_t slot;
	struct seq *q = get_seq(s, k.machine, k.seq, &slot);
	if (k.cleared_legacy || (k.flags & 1)) {
		if (k.has_seq) {
			q->valid = true;
			q->has_defaults = false;
			q->def_clock = 0;
			q->def_has_track = false;
			q->te_ts_valid = false;
			q->gen++;
		}
	} else if (k.dropped && k.has_seq) {
		q->valid = false;
		q->te_ts_valid = false;
	}
	if (k.has_defaults && k.has_seq)
		do_defaults(q, &k.defaults);
	if (k.has_interned && k.has_seq && q->valid && s->keep)
		do_interned(s, q, &k.interned);

	if (k.has_snapshot) {
		do_snapshot(s, &k);
		return;
	}
	if (k.has_remote) {
		do_remote_sync(s, &k);
		return;
	}
	if (k.has_service) {
		uint32_t c = k.has_clock ? k.clock : 6;
		note_clock(s, c);
		emit(s, &(struct tm_op){.kind = TM_OP_SERVICE, .machine = k.machine, .clock = c,
					.ts = (int64_t)k.ts, .offset = off});
		return;
	}
	if (k.has_ext)
		return;
	if (k.flags & 2) {
		if (!k.seq) {
			emit(s, &(struct tm_op){
					.kind = TM_OP_FATAL, .machine = k.machine, .offset = off,
					.text = "TracePacket specified SEQ_NEEDS_INCREMENTAL_STATE "
						"but the TraceWriter's sequence_id is zero (the "
						"service is probably too old)"});
			return;
		}
		if (!q->valid) {
			emit(s, &(struct tm_op){.kind = TM_OP_STAT, .machine = k.machine,
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
		if (!k.has_chrome && clock >= 64 && clock <= 127 && !k.seq) {
			char msg[200];
			snprintf(msg, sizeof msg,
				 "TracePacket specified a sequence-local clock id (%u) but the "
				 "TraceWriter's sequence_id is zero (the service is probably too "
				 "old)",
				 (unsigned)clock);
			emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .machine = k.machine,
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
	if (k.has_td_before) {
		if (!k.has_seq || !q->valid)
			handled = true; /* thread_descriptor_* stats, no push */
		else
			do_thread_descriptor(q, &k.td);
	}
	if (!handled && k.handler) {
		handled = true;
		switch (k.handler) {
		case F_FTRACE:
			do_ftrace(s, &k, &k.hfield);
			break;
		case F_TRACK_EVENT:
			do_track_event(s, k.has_seq, k.has_ts, q, k.hfield.p, k.hfield.len, lim, &te);
			break;
		case F_SYSINFO:
			do_sysinfo(s, &k, &k.hfield);
			break;
		case F_STATSD:
			do_statsd(s, &k, &k.hfield);
			break;
		case F_STREAMING_PROFILE:
			do_streaming_profile(s, &k, q, &k.hfield);
			break;
		default:
			break; /* handled at tokenize time, not pushed */
		}
	}
	if (!handled)
		pend_add(s, TM_OP_PUSH, k.machine, off);

	if (te.kind) {
		/* The packet's only payload op (nothing else is pending): straight
		 * to the log, as pend_flush would. */
		if (k.has_ts) {
			struct tm_op op = {.kind = TM_OP_PACKET, .machine = k.machine, .clock = clock,
					   .seq = k.seq, .ts = (int64_t)k.ts,
					   .flags = k.has_chrome ? TM_PKT_CHROME : 0, .n = 1,
					   .offset = off};
			emit(s, &op);
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
				   .flags = k.has_chrome ? TM_PKT_CHROME : 0,
				   .n = (uint32_t)s->n_pend, .offset = off};
		emit(s, &op);
		note_ts(s, (int64_t)k.ts);
		pend_flush(s, true);
	} else {
		pend_flush(s, false);
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
		emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = off, .text = msg});
		return FR_FATAL;
	}
	if (tag != 0x0A) {
		switch (tag & 7) {
		case 0:
			if (!get_varint(q, he, &v)) {
				if (hdr_avail < MAX_HEADER)
					return FR_NEED;
				snprintf(msg, sizeof msg,
					 "Failed to skip varint @ 0x%llx (ERR:tp-corrupt)",
					 (unsigned long long)off);
				emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = off,
							.text = msg});
				return FR_FATAL;
			}
			*used = (size_t)(get_varint(q, he, &v) - p);
			return FR_DONE;
		case 2: {
			const uint8_t *r = get_varint(q, he, &v);
			if (!r) {
				if (hdr_avail < MAX_HEADER)
					return FR_NEED;
				snprintf(msg, sizeof msg,
					 "Failed to skip delimited @ 0x%llx (ERR:tp-corrupt)",
					 (unsigned long long)off);
				emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = off,
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
		case 1:
		case 5: {
			size_t tot = (size_t)(q - p) + ((tag & 7) == 1 ? 8 : 4);
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
			emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = off, .text = msg});
			return FR_FATAL;
		}
	}
	const uint8_t *r = get_varint(q, he, &v);
	if (!r) {
		if (hdr_avail < MAX_HEADER)
			return FR_NEED;
		emit(s, &(struct tm_op){.kind = TM_OP_FATAL, .offset = off,
					.text = "Failed to parse TracePacket size (ERR:tp-corrupt)"});
		return FR_FATAL;
	}
	size_t h = (size_t)(r - p);
	if (v == 0) {
		*used = h;
		return FR_DONE;
	}
	if (v > MAX_PACKET)
		return FR_LIMIT;
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
	free(s->seqs);
	free(s->machines);
	free(s->names);
	tm_buf_fini(&s->npool);
	free(s->pend);
	free(s->pclocks);
	free(s->ptss);
	tm_buf_fini(&s->ptext);
	free(s->inflated);
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
	s.pkt_op.kind = TM_OP_PACKET;
	tm_buf_init(&s.npool);
	tm_buf_init(&s.ptext);

	struct tm_buf carry;
	tm_buf_init(&carry);
	uint64_t carry_off = 0; /* member offset of carry.data[0] */
	uint64_t skip = 0;
	uint64_t pos = 0; /* member offset of the block start */
	enum tm_status rc = TM_OK;
	unsigned ticks = 0;

	for (;;) {
		const uint8_t *blk;
		size_t n;
		rc = next(ctx, &blk, &n, err);
		if (rc != TM_OK) {
			sc->failed = true;
			if (err)
				sc->err = *err;
			break;
		}
		if (n == 0)
			break; /* EOF: an incomplete trailing field is ignored, as TP does */
		if (ctl && ctl->cancel && *ctl->cancel) {
			rc = tm_error_set(err, TM_ERR_CANCELLED, "cancelled");
			break;
		}
		if (ctl && ctl->progress && (++ticks & 15) == 0)
			atomic_store(ctl->progress, pos);
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
				if (fr == FR_LIMIT)
					goto limit;
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
			 * lie wholly in the block (frame_one's result for them). */
			while (n - i >= 3) {
				const uint8_t *b = blk + i;
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
				if (!sz || sz > n - i - h)
					break;
				if (!fast_packet(&s, b + h, sz, blk + n, pos + i))
					process_general(&s, b + h, sz, blk + n, pos + i);
				i += h + sz;
				if (UNLIKELY(s.stop))
					break;
			}
			if (i >= n || s.stop)
				break;
			fr = frame_one(&s, blk + i, n - i, pos + i, &used, &sk, &need);
			if (fr == FR_DONE) {
				i += used;
				skip = sk;
				continue;
			}
			if (fr == FR_LIMIT)
				goto limit;
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
		sc->failed = true;
		rc = tm_error_set(err, TM_ERR_LIMIT,
				  "byte 0x%llx: a trace packet larger than %u MiB is not supported",
				  (unsigned long long)(carry.len ? carry_off : pos + i),
				  MAX_PACKET >> 20);
		sc->err = *err;
		break;
	}
	flush_nots(&s);
	if (s.has_ts_seen) {
		tm_scan_note_ts(sc, s.ts_min);
		tm_scan_note_ts(sc, s.ts_max);
	}
	/* trace_processor waits for the rest of a cut-off packet and ignores it
	 * at the end; we say so (ours; it changes no number). */
	if (rc == TM_OK && !s.stop && carry.len)
		tm_scan_warn(sc,
			     "byte %llu (0x%llx): the member ends inside a packet (%zu bytes of it "
			     "present); trace_processor ignores the cut-off packet",
			     (unsigned long long)carry_off, (unsigned long long)carry_off, carry.len);
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

/* SPDX-License-Identifier: MIT */
/*
 * The proto scanner's state, shared by its files: scan_proto.c (framing,
 * the fast path, TrackEvent, the dispatch of a packet), scan_proto_packet.c
 * (a TracePacket's fields, the other packet kinds), scan_ftrace.c
 * (FtraceEventBundle and its compact_sched form), scan_proto_pend.c (the
 * ops they emit) and scan_proto_seq.c (sequences and interned names).
 */
#ifndef TM_SCAN_PROTO_PRIV_H
#define TM_SCAN_PROTO_PRIV_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "align_scan.h"
#include "strmap.h"
#include "proto_wire.h"
#include "scan.h"

#define MAX_CPU 1024 /* kMaxCpus of ftrace_tokenizer.cc */
#define SEQ_CACHE 16384u   /* most cache slots */
#define SEQ_CACHE_MIN 64u  /* first cache slots (a member of few sequences) */

/* ------------------------------------------------------------------ */
/* state                                                               */
/* ------------------------------------------------------------------ */

struct seq {
	uint64_t key; /* machine << 32 | seq id; UINT64_MAX = empty slot */
	uint64_t def_track;
	int64_t te_ref_ns;
	/* its interning generation's stamp: the count ps.n_gens (unique and
	 * never 0; only compared), new on a clear */
	uint64_t gen;
	uint32_t def_clock;
	uint32_t id;       /* its index in ps.seqs (struct iname seq) */
	uint32_t n_names;  /* its interned names of this generation (ps.n_stale) */
	bool valid;        /* incremental state valid (starts invalid) */
	bool has_defaults; /* TracePacketDefaults present in this generation */
	bool def_has_track;
	bool te_ts_valid;  /* ThreadDescriptor reference timestamps valid */
};

struct machine {
	uint32_t id;
	bool seen;
	bool has_ft_snap;
	int64_t last_ft_snap; /* latest_ftrace_clock_snapshot_ts_ */
	uint8_t first_bundle[MAX_CPU / 8];
};

/* An interned event name, found by its generation's stamp and its iid, both
 * compared (name_hash only places it): once its sequence is cleared it is
 * stale, found again only to be reused for the same iid. */
struct iname {
	uint64_t iid;
	uint64_t gen; /* its sequence's gen when interned; 0 = empty */
	uint32_t seq; /* that sequence's id */
	uint32_t al; /* its alignment sample's index + 1 (align_scan.h; 0: not looked up) */
	uint32_t off, len; /* into names pool; off NAME_NULL (len 0): a null name */
};
#define NAME_NULL UINT32_MAX

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

	struct seq *seqs;        /* dense, in first-seen order */
	size_t cap_seqs, n_seqs;
	uint32_t *seq_ix;        /* hash of keys: index + 1, 0 empty */
	size_t cap_ix;           /* power of two */
	size_t last_seq;         /* index of the last lookup */

	struct machine *machines;
	size_t n_machines, cap_machines;
	struct tm_u64map machine_ix; /* id -> machines[] index, past machines[0] */

	struct iname *names;
	size_t cap_names, n_names; /* n_names: the entries in use, n_stale of them stale */
	size_t n_stale;
	size_t pool_dead; /* bytes of npool no entry holds (tm_ps_name_put_slow) */
	uint64_t n_gens; /* generations started (struct seq gen) */
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
	bool fast; /* machine 0's MACHINE op is out, and not no_fast: fast_packet */
	/* tm_scan_note_ts, kept here and handed over at the end (none
	 * while ts_min > ts_max: INT64_MAX and INT64_MIN at the start) */
	int64_t ts_min, ts_max;
	/* fast_packet's packets and its plain PACKET pushes' events: the
	 * scan's counts (tm_scan n_packets, n_events) without a load of
	 * s->sc per packet, added to them at the end */
	uint64_t n_fast_pk, n_fast_ev;
	/* slot of a (machine, sequence id), direct-mapped (SEQ_CACHE entries,
	 * checked on use): traces with thousands of writers hash no more */
	uint32_t *seq_cache;
	uint32_t seq_mask; /* cache slots - 1: grown x4 while sequences > slots / 2 */
	struct tm_op pkt_op; /* fast_packet's PACKET op: only the fields it sets change */
	/* alignment samples of event names (al_name_fast): the samples, and
	 * their name cache (align_scan.h; its full name is never set with
	 * no_fast) */
	struct tm_align_samples *al;
	struct al_name_cache al_cache;
	/* keep: the sorter queues of the ftrace streams (tm_ps_ftrace_queue) */
	struct tm_u64map ftq;
	/* keep: the TrackEvents named by an iid (detail, sequence index,
	 * iid), looked up again at the end (scan_proto.c eof_names) */
	struct eof_name {
		uint32_t detail, seq;
		uint64_t iid;
	} *eof_names;
	size_t n_eof_names, cap_eof_names;
};

/* ------------------------------------------------------------------ */
/* the current packet                                                  */
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
	struct field snapshot, defaults, interned, remote, compressed, zstd, service;
	struct field hfield, td;
};

/* ------------------------------------------------------------------ */
/* emitting (scan_proto_pend.c)                                        */
/* ------------------------------------------------------------------ */

/* Append an op (after the merged PUSH_NOTS); a FATAL stops the scan. */
void tm_ps_emit(struct ps *s, const struct tm_op *op);
void tm_ps_flush_nots_now(struct ps *s);
/* Pending payload ops of the current packet, emitted by tm_ps_pend_flush
 * after its PACKET op (has_ts) or on their own. */
/* keep: the sorter queue (struct tm_detail queue) of machine's stream of
 * kind (TM_FTQ_*) for cpu. */
enum { TM_FTQ_EVENTS, TM_FTQ_SWITCH, TM_FTQ_WAKING };
uint8_t tm_ps_ftrace_queue(struct ps *s, uint32_t machine, int kind, uint32_t cpu);
struct pend *tm_ps_pend_add(struct ps *s, enum tm_op_kind kind, uint32_t machine, uint64_t off);
/* A pending op with a text (copied: fixed up at flush). */
void tm_ps_pend_text(struct ps *s, enum tm_op_kind kind, uint32_t machine, uint64_t off,
		     const char *text, size_t len);
void tm_ps_pend_fatal(struct ps *s, uint32_t machine, uint64_t off, const char *text);
void tm_ps_pend_stat(struct ps *s, uint32_t machine, uint64_t off, enum tm_stat_id st);
void tm_ps_pend_flush(struct ps *s, bool has_ts);
struct machine *tm_ps_machine(struct ps *s, uint32_t id);

AINLINE void
flush_nots(struct ps *s)
{
	if (UNLIKELY(s->nots))
		tm_ps_flush_nots_now(s);
}

static inline void
note_clock(struct ps *s, uint32_t c)
{
	tm_scan_note_clock(s->sc, c);
}

/* tm_scan_note_ts, batched (min and max only: the order does not matter). */
AINLINE void
note_ts(struct ps *s, int64_t ts)
{
	if (ts < s->ts_min)
		s->ts_min = ts;
	if (ts > s->ts_max)
		s->ts_max = ts;
}

/* FtraceEventBundle b of packet k (scan_ftrace.c). */
void tm_ps_ftrace(struct ps *s, const struct pkt *k, const struct field *b);

/* ------------------------------------------------------------------ */
/* a TracePacket's fields, the packet kinds but TrackEvent and ftrace  */
/* (scan_proto_packet.c)                                               */
/* ------------------------------------------------------------------ */

/* A TracePacket's top-level fields; false: malformed. */
bool tm_ps_decode_packet(const uint8_t *p, size_t n, struct pkt *k);
void tm_ps_snapshot(struct ps *s, const struct pkt *k);
bool tm_ps_service_started(const struct field *svc);
void tm_ps_remote_sync(struct ps *s, const struct pkt *k);
void tm_ps_defaults(struct seq *q, const struct field *d);
void tm_ps_streaming_profile(struct ps *s, const struct pkt *k, struct seq *q,
			     const struct field *sp);
void tm_ps_thread_descriptor(struct seq *q, const struct field *td);
void tm_ps_sysinfo(struct ps *s, const struct pkt *k, const struct field *si);
void tm_ps_statsd(struct ps *s, const struct pkt *k, const struct field *sa);

/* ------------------------------------------------------------------ */
/* sequences and interned names (scan_proto_seq.c: the slow paths)     */
/* ------------------------------------------------------------------ */

struct seq *tm_ps_get_seq_slow(struct ps *s, uint64_t key);
void tm_ps_name_put_slow(struct ps *s, struct seq *q, uint64_t iid, const uint8_t *str,
			 size_t len);

static inline int64_t
sat_mul_1000(int64_t v)
{
	int64_t r;
	if (__builtin_mul_overflow(v, (int64_t)1000, &r))
		return v < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

static inline int64_t
sat_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b < 0 ? INT64_MIN : INT64_MAX;
	return r;
}

AINLINE struct seq *
get_seq(struct ps *s, uint32_t machine, uint32_t seq)
{
	uint64_t key = (uint64_t)machine << 32 | seq;
	uint32_t c = s->seq_cache[(seq ^ machine * 0x9e3779b9u) & s->seq_mask];
	if (LIKELY(c < s->n_seqs)) {
		struct seq *q = &s->seqs[c];
		if (LIKELY(q->key == key))
			return q;
	}
	return tm_ps_get_seq_slow(s, key);
}

/* Interned names (struct iname): an open-addressing table over (sequence,
 * iid), the names in a pool.  Of a sequence's names only its generation's
 * are valid (proto_trace_reader.cc HandleIncrementalStateCleared: a cleared
 * sequence starts an empty IncrementalState, incremental_state.cc).  A
 * clear leaves the others in place, stale: the same iid interned again
 * takes its stale entry over, and names_grow drops the rest once they are
 * half the entries.  So the table and the pool hold about the names of the
 * current generations, however often the sequences clear. */
AINLINE uint64_t
name_hash(const struct seq *q, uint64_t iid)
{
	return tm_mix64(iid ^ q->key * 0x9e3779b97f4a7c15ULL);
}

/* SEQ_INCREMENTAL_STATE_CLEARED (or incremental_state_cleared) on a packet
 * with a sequence id: the state valid, the defaults and the descriptor's
 * reference gone, a new generation of interned names
 * (proto_trace_reader.cc HandleIncrementalStateCleared). */
AINLINE void
seq_clear(struct ps *s, struct seq *q)
{
	q->valid = true;
	q->has_defaults = false;
	q->def_clock = 0;
	q->def_has_track = false;
	q->te_ts_valid = false;
	q->gen = ++s->n_gens;
	s->n_stale += q->n_names;
	q->n_names = 0;
}

AINLINE struct iname *
name_find(const struct ps *s, const struct seq *q, uint64_t iid)
{
	if (!s->cap_names)
		return NULL;
	uint64_t g = q->gen;
	size_t m = s->cap_names - 1, j = name_hash(q, iid) & m;
	for (struct iname *e; (e = &s->names[j])->gen; j = (j + 1) & m)
		if (e->gen == g && e->iid == iid)
			return e;
	return NULL;
}

/* Intern a name (event_name_put, interned_fast).  An iid interned again in
 * its generation keeps its first name (incremental_state.cc InternMessage:
 * emplace, which keeps what it finds); that is the usual case (interned
 * data in every packet), without a call. */
AINLINE void
name_put(struct ps *s, struct seq *q, uint64_t iid, const uint8_t *str, size_t len)
{
	if (LIKELY(name_find(s, q, iid) != NULL))
		return;
	tm_ps_name_put_slow(s, q, iid, str, len);
}

#endif

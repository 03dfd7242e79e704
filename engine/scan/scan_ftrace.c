/* SPDX-License-Identifier: MIT */
/*
 * FtraceEventBundle packets for the proto scanner (ftrace_tokenizer.cc
 * TokenizeFtraceBundle and TokenizeFtraceCompactSched at ec5d16b14b, v58.2):
 * the bundle's clock and CPU, the ftrace clock snapshot pair, the first
 * bundle's conversions, per-event timestamps and the compact_sched arrays.
 */
#include "scan_proto_priv.h"
#include "atrace.h"
#include "tracknames.h"

#include <stdio.h>

static void
compact_array(struct ps *s, const struct pkt *k, uint32_t clock, uint32_t seq, uint32_t cpu, int kind,
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
	int64_t acc = 0, lo = INT64_MAX, hi = INT64_MIN;
	int64_t *out = s->ptss + base;
	size_t m = 0;
	if (UNLIKELY(s->no_fast)) {
		/* the general loop (the tests' oracle for the one below) */
		for (; m < n; m++) {
			uint64_t d = 0, ci = 0;
			tp = get_varint(tp, te, &d);
			cp = get_varint(cp, ce, &ci);
			if (!tp || !cp || ci >= n_intern)
				break;
			acc = wrap_add(acc, (int64_t)d);
			out[m] = acc;
			lo = acc < lo ? acc : lo;
			hi = acc > hi ? acc : hi;
		}
	} else {
		/* Both columns hold at least n - m more varint ends
		 * (count_packed), and each varint read takes one: the
		 * counted reader needs no bound for its first two bytes.
		 * The times only go up while no delta is negative and their
		 * sum stays below 2^62: then the first and the last are the
		 * least and the most, else a second pass finds them. */
		uint64_t all = 0;
		for (; m < n; m++) {
			uint64_t d = 0, ci = 0;
			tp = get_varint_counted(tp, te, &d);
			cp = get_varint_counted(cp, ce, &ci);
			if (UNLIKELY(!tp || !cp || ci >= n_intern))
				break;
			acc = wrap_add(acc, (int64_t)d);
			out[m] = acc;
			all |= d;
		}
		if (m && all < (1ULL << 40) && m < (1u << 22)) {
			lo = out[0];
			hi = out[m - 1];
		} else {
			for (size_t i = 0; i < m; i++) {
				lo = out[i] < lo ? out[i] : lo;
				hi = out[i] > hi ? out[i] : hi;
			}
		}
	}
	if (!m)
		return;
	note_ts(s, lo); /* min and max only: the order does not matter */
	note_ts(s, hi);
	s->n_ptss += m;
	struct pend *op = tm_ps_pend_add(s, TM_OP_CONVERT_ARRAY, k->machine, k->off);
	op->clock = clock;
	op->seq = seq;
	op->n = (uint32_t)m;
	if (s->keep) /* its stream's queue, for the events list's sorter */
		op->flags = (uint32_t)tm_ps_ftrace_queue(s, k->machine, kind, cpu) << TM_ARR_QUEUE_SHIFT;
	s->pend[s->n_pend - 1].arr = base;
}

static void
do_compact_sched(struct ps *s, const struct pkt *k, uint32_t clock, uint32_t seq, uint32_t cpu,
		 const struct field *cs)
{
	struct field col[CSC_N_FIELDS];
	memset(col, 0, sizeof col);
	size_t n_intern = 0;
	const uint8_t *p = cs->p, *end = p + cs->len;
	struct field f;
	while (next_field(&p, end, &f) > 0) {
		if (f.id == CSC_INTERN_TABLE && f.wt == WT_LEN)
			n_intern++;
		else if (f.id < CSC_N_FIELDS && f.wt == WT_LEN)
			col[f.id] = f;
	}
	const struct field *sw[] = {&col[CSC_SWITCH_PREV_STATE], &col[CSC_SWITCH_NEXT_PID],
				     &col[CSC_SWITCH_NEXT_PRIO]};
	compact_array(s, k, clock, seq, cpu, TM_FTQ_SWITCH, &col[CSC_SWITCH_TIMESTAMP], sw, 3,
		      &col[CSC_SWITCH_NEXT_COMM_INDEX], n_intern);
	const struct field *wk[] = {&col[CSC_WAKING_PID], &col[CSC_WAKING_TARGET_CPU],
				     &col[CSC_WAKING_PRIO]};
	compact_array(s, k, clock, seq, cpu, TM_FTQ_WAKING, &col[CSC_WAKING_TIMESTAMP], wk, 3,
		      &col[CSC_WAKING_COMM_INDEX], n_intern);
}

/* The atrace point an ftrace event carries (ftrace_parser.cc: ParsePrint,
 * ParseZero, ParseMdssTracingMarkWrite, ParseSdeTracingMarkWrite,
 * ParseSamsungTracingMarkWrite, ParseDpuTracingMarkWrite,
 * ParseG2dTracingMarkWrite, ParseMaliTracingMarkWrite,
 * ParseLwisTracingMarkWrite).  -1: an event of another kind; otherwise an
 * enum tm_atrace_result (the payload decoded as pbzero does: the last
 * occurrence of a field wins, a missing one reads as 0 or ""). */
static int
atrace_of(uint32_t id, const uint8_t *p, size_t n, struct tm_buf *clean, struct tm_atrace_point *pt)
{
	enum { NF = 7 };
	uint64_t v[NF] = {0};
	bool has[NF] = {false};
	const char *str[NF];
	size_t sl[NF] = {0};
	for (size_t i = 0; i < NF; i++)
		str[i] = "";
	switch (id) {
	case FE_PRINT:
	case FE_ZERO:
	case FE_TRACING_MARK_WRITE:
	case FE_SDE_TRACING_MARK_WRITE:
	case FE_SAMSUNG_TRACING_MARK_WRITE:
	case FE_DPU_TRACING_MARK_WRITE:
	case FE_G2D_TRACING_MARK_WRITE:
	case FE_MALI_TRACING_MARK_WRITE:
	case FE_LWIS_TRACING_MARK_WRITE:
		break;
	default:
		return -1;
	}
	const uint8_t *q = p, *e = p + n;
	struct field f;
	while (next_field(&q, e, &f) > 0) {
		if (f.id >= NF)
			continue;
		if (f.wt == WT_VARINT) {
			v[f.id] = f.v;
			has[f.id] = true;
		} else if (f.wt == WT_LEN) {
			str[f.id] = (const char *)f.p;
			sl[f.id] = f.len;
		}
	}
#define I32(k) ((int64_t)(int32_t)v[k])
#define KERNEL(type, begin, nk, tgid, value)                                                       \
	(tm_atrace_kernel((char)(type), (begin) != 0, str[nk], sl[nk], (uint32_t)(tgid), (value), pt) \
		 ? TM_ATRACE_OK                                                                    \
		 : TM_ATRACE_FAILURE)
	switch (id) {
	case FE_PRINT: /* buf = 2 */
		return (int)tm_atrace_parse(str[2], sl[2], clean, pt);
	case FE_ZERO: /* flag 1, name 2, pid 3, value 4 (int64) */
		return tm_atrace_zero((int32_t)v[1], str[2], sl[2], (uint32_t)I32(3), (int64_t)v[4], pt)
			       ? TM_ATRACE_OK
			       : TM_ATRACE_FAILURE;
	case FE_TRACING_MARK_WRITE: /* pid 1, trace_name 2, trace_begin 3 */
		if (!has[3])
			return TM_ATRACE_FAILURE;
		return KERNEL(0, v[3], 2, I32(1), 0);
	case FE_SDE_TRACING_MARK_WRITE: /* pid 1, trace_name 2, trace_type 3, value 4, trace_begin 5 */
		if (!has[3] && !has[5])
			return TM_ATRACE_FAILURE;
		return KERNEL(v[3], v[5], 2, I32(1), I32(4));
	case FE_SAMSUNG_TRACING_MARK_WRITE: /* pid 1, trace_name 2, trace_type 4, value 5 */
		if (!has[4])
			return TM_ATRACE_FAILURE;
		return KERNEL(v[4], 0, 2, I32(1), I32(5));
	case FE_DPU_TRACING_MARK_WRITE: /* pid 1, name 4, type 5, value 6; tgid 0 but for C */
		if (!(uint32_t)v[5])
			return TM_ATRACE_FAILURE;
		return KERNEL(v[5], 0, 4, (char)v[5] == 'C' ? I32(1) : 0, I32(6));
	case FE_G2D_TRACING_MARK_WRITE: /* pid 1, name 4, type 5, value 6 */
		if (!(uint32_t)v[5])
			return TM_ATRACE_FAILURE;
		return KERNEL(v[5], 0, 4, I32(1), I32(6));
	case FE_MALI_TRACING_MARK_WRITE: /* name 1, pid 2, type 3, value 4 */
		if (!(uint32_t)v[3])
			return TM_ATRACE_FAILURE;
		return KERNEL(v[3], 0, 1, I32(2), I32(4));
	default: /* FE_LWIS_TRACING_MARK_WRITE: type 2, pid 3, func_name 4, value 5 (int64) */
		if (!(uint32_t)v[2])
			return TM_ATRACE_FAILURE;
		return KERNEL(v[2], 0, 4, I32(3), (int64_t)v[5]);
	}
#undef KERNEL
#undef I32
}

/* The ftrace event's name, for the events whose field number we know. */
static const char *
event_name(uint32_t id)
{
	switch (id) {
	case FE_PRINT: return "print";
	case FE_SCHED_SWITCH: return "sched_switch";
	case FE_TRACING_MARK_WRITE: return "tracing_mark_write";
	case FE_ZERO: return "zero";
	case FE_SDE_TRACING_MARK_WRITE: return "sde_tracing_mark_write";
	case FE_DPU_TRACING_MARK_WRITE: return "dpu_tracing_mark_write";
	case FE_G2D_TRACING_MARK_WRITE: return "g2d_tracing_mark_write";
	case FE_MALI_TRACING_MARK_WRITE: return "mali_tracing_mark_write";
	case FE_LWIS_TRACING_MARK_WRITE: return "lwis_tracing_mark_write";
	case FE_SAMSUNG_TRACING_MARK_WRITE: return "samsung_tracing_mark_write";
	default: return NULL;
	}
}

/* FtraceEventBundle (ftrace_tokenizer.cc TokenizeFtraceBundle). */
void
tm_ps_ftrace(struct ps *s, const struct pkt *k, const struct field *b)
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
		if (tag == TAG(FB_EVENT, WT_LEN)) {
			if (!events)
				events = at;
			continue;
		}
		if (wt == WT_VARINT) {
			switch (tag >> 3) {
			case FB_CPU: has_cpu = true; cpu = (uint32_t)v; break; /* uint32 field */
			case FB_FTRACE_CLOCK: has_clk = true; clk = v; break;
			case FB_FTRACE_TIMESTAMP: has_fts = true; fts = (int64_t)v; break;
			case FB_BOOT_TIMESTAMP: has_bts = true; bts = (int64_t)v; break;
			case FB_LAST_READ_EVENT_TIMESTAMP: has_last = true; last = v; break;
			case FB_PREVIOUS_BUNDLE_END_TIMESTAMP: has_prev = true; prev = v; break;
			}
		} else if (wt == WT_LEN && tag >> 3 == FB_COMPACT_SCHED) {
			has_compact = true;
			compact = (struct field){FB_COMPACT_SCHED, WT_LEN, v, fp, fl};
		}
	}
	if (!has_cpu) {
		tm_ps_pend_stat(s, k->machine, k->off, TM_STAT_FTRACE_BUNDLE_ERRORS);
		return;
	}
	if ((uint32_t)cpu >= MAX_CPU) {
		char msg[160];
		snprintf(msg, sizeof msg,
			 "CPU %u is greater than maximum allowed of %u. This is likely because "
			 "of trace corruption (ERR:tp-corrupt)",
			 (unsigned)(uint32_t)cpu, (unsigned)MAX_CPU);
		tm_ps_pend_fatal(s, k->machine, k->off, msg);
		return;
	}
	uint32_t clock = 6, seq = 0;
	struct machine *m = tm_ps_machine(s, k->machine);
	if (has_clk) {
		switch (clk) {
		case FTRACE_CLOCK_UNSPECIFIED: clock = 6; break; /* BOOTTIME */
		case FTRACE_CLOCK_MONO_RAW: clock = 5; break;
		case FTRACE_CLOCK_GLOBAL:
		case FTRACE_CLOCK_LOCAL:
			clock = 64;
			seq = k->seq;
			break;
		default:
			tm_ps_pend_fatal(s, k->machine, k->off,
				   "Unable to parse ftrace packets with unknown clock");
			return;
		}
		if (has_fts && has_bts && (!m->has_ft_snap ? fts != 0 : m->last_ft_snap != fts)) {
			XGROW(s->pclocks, s->cap_pclocks, s->n_pclocks + 2);
			size_t base = s->n_pclocks;
			s->pclocks[s->n_pclocks++] = (struct tm_op_clock){clock, fts, 1, false};
			s->pclocks[s->n_pclocks++] = (struct tm_op_clock){6, bts, 1, false};
			struct pend *op = tm_ps_pend_add(s, TM_OP_SNAPSHOT, k->machine, k->off);
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
		do_compact_sched(s, k, clock, seq, (uint32_t)cpu, &compact);

	/* Pass 2: the events, from the first one (pass 1 stopped where this
	 * one stops).  Without a packet timestamp there is no PACKET op to
	 * count them first: what is pending goes out now and the events
	 * straight after it, in the same order pend_flush would give. */
	bool direct = !k->has_ts && events;
	struct tm_buf clean; /* an atrace text without its invalid UTF-8 */
	tm_buf_init(&clean);
	if (direct && s->n_pend)
		tm_ps_pend_flush(s, false);
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
		if (tag != TAG(FB_EVENT, WT_LEN))
			continue;
		const uint8_t *q = fp, *qe = fp + fl;
		bool has_ts = false;
		uint64_t ts = 0, pid = 0;
		uint32_t event_id = 0;
		const uint8_t *payload = NULL;
		size_t payload_len = 0;
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
			if (gtag == TAG(FE_TIMESTAMP, WT_VARINT) && !has_ts) {
				has_ts = true;
				ts = gv;
			} else if (gtag == TAG(FE_PID, WT_VARINT)) {
				pid = gv;
			} else if (gwt == WT_LEN && !event_id) {
				event_id = (uint32_t)(gtag >> 3);
				payload = gp;
				payload_len = gl;
			}
		}
		if (!has_ts) {
			if (direct)
				tm_ps_emit(s, &(struct tm_op){.kind = TM_OP_STAT, .machine = k->machine,
							.stat = TM_STAT_FTRACE_BUNDLE_ERRORS, .n = 1,
							.offset = k->off});
			else
				tm_ps_pend_stat(s, k->machine, k->off, TM_STAT_FTRACE_BUNDLE_ERRORS);
			continue;
		}
		if (!event_id)
			continue; /* ftrace_missing_event_id */
		/* Events that carry atrace text are parsed as the parser will
		 * (SystraceParser): under their name and kind, and a text that
		 * does not parse counts systrace_parse_failure once it is
		 * sorted. */
		struct tm_atrace_point pt;
		int res = atrace_of(event_id, payload, payload_len, &clean, &pt);
		uint32_t flags = TM_CONV_FAIL_DROP | TM_CONV_FTRACE;
		if (res == TM_ATRACE_FAILURE)
			flags |= TM_CONV_ATRACE_FAIL;
		uint32_t detail = 0;
		if (s->keep) {
			struct tm_atrace_event ev = {.name = event_name(event_id),
						      .track = (1ULL << 62) | cpu};
			ev.name_len = ev.name ? strlen(ev.name) : 0;
			if (res == TM_ATRACE_OK) {
				tm_atrace_event(&pt, (uint32_t)pid, &ev);
				tm_tn_atrace(s->log, &ev, (uint32_t)pid, NULL, 0);
			} else {
				tm_tn_cpu(s->log, ev.track, cpu);
			}
			detail = tm_oplog_detail(s->log, ev.name, ev.name_len, ev.phase, ev.track, -1);
			if (res == TM_ATRACE_OK && ev.phase == 'C')
				tm_detail_set_value(s->log, detail, (double)ev.value);
			/* its CPU's ftrace stream (struct tm_detail) */
			s->log->x->details[detail - 1].queue =
				tm_ps_ftrace_queue(s, k->machine, TM_FTQ_EVENTS, (uint32_t)cpu);
		}
		note_ts(s, (int64_t)ts);
		if (direct) {
			s->sc->n_events++;
			flush_nots(s);
			tm_oplog_convert(s->log, k->machine, clock, seq, (int64_t)ts, flags, detail,
					 k->off);
			continue;
		}
		struct pend *op = tm_ps_pend_add(s, TM_OP_CONVERT, k->machine, k->off);
		op->clock = clock;
		op->seq = seq;
		op->ts = (int64_t)ts;
		op->flags = flags;
		op->detail = detail;
	}
	tm_buf_fini(&clean);

	if (!(m->first_bundle[cpu / 8] & (1u << (cpu % 8)))) {
		m->first_bundle[cpu / 8] |= (uint8_t)(1u << (cpu % 8));
		has_first = has_prev || has_last;
		if (has_first) {
			struct pend *op = tm_ps_pend_add(s, TM_OP_CONVERT, k->machine, k->off);
			op->clock = clock;
			op->seq = seq;
			op->ts = (int64_t)(has_prev ? prev : last);
			op->flags = TM_CONV_FAIL_FATAL | TM_CONV_NO_PUSH;
		}
	}
}

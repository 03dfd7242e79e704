/* SPDX-License-Identifier: MIT */
/*
 * The proto scanner's output side (scan_proto_priv.h, "emitting"): ops
 * appended to the op log after the merged pushes without a timestamp,
 * the current packet's pending payload ops, and the machines the scan
 * met.  Shared by scan_proto.c and scan_ftrace.c, which both only call
 * down into it.
 */
#include <string.h>

#include "scan_proto_priv.h"

struct machine *
tm_ps_machine(struct ps *s, uint32_t id)
{
	size_t i;
	if (s->n_machines && s->machines[0].id == id)
		return &s->machines[0];
	if (tm_u64map_get(&s->machine_ix, id, &i))
		return &s->machines[i];
	if (s->n_machines) /* the first is found above: a crafted file may name 100,000s */
		tm_u64map_set(&s->machine_ix, id, s->n_machines);
	XGROW(s->machines, s->cap_machines, s->n_machines + 1);
	struct machine *m = &s->machines[s->n_machines++];
	memset(m, 0, sizeof *m);
	m->id = id;
	return m;
}

void
tm_ps_flush_nots_now(struct ps *s)
{
	struct tm_op op = {.kind = TM_OP_PUSH_NOTS, .machine = s->nots_machine, .n = s->nots,
			   .offset = s->nots_off};
	tm_oplog_add(s->log, &op);
	s->sc->n_events += s->nots;
	s->nots = 0;
}

void
tm_ps_emit(struct ps *s, const struct tm_op *op)
{
	flush_nots(s);
	tm_oplog_add(s->log, op);
	if (op->kind == TM_OP_FATAL) {
		s->stop = true;
		s->sc->failed = true;
		tm_error_set(tm_scan_err(s->sc), TM_ERR_FORMAT, "byte 0x%llx: %s",
			     (unsigned long long)op->offset, op->text);
	}
}

/* The sorter's queues of a reader are made in order: its TracePackets'
 * and TrackEvents' in its constructor (proto_trace_reader.cc: queues 0 and
 * 1 here), then a per-cpu stream of ftrace events, inline sched_switch or
 * sched_waking when the tokenizer first pushes to it, with every cpu of
 * that kind below it not made yet (proto_importer_module.cc PushToStream:
 * streams.resize, a factory call each, TraceSorter::CreateStream).  Queues
 * of one ts leave the sorter in the order they were made. */
uint8_t
tm_ps_ftrace_queue(struct ps *s, uint32_t machine, int kind, uint32_t cpu)
{
	uint64_t mk = (uint64_t)machine << 32, key = mk | (uint64_t)kind << 16 | cpu;
	size_t v, made = 0, next = 0;
	if (tm_u64map_get(&s->ftq, key, &v))
		return (uint8_t)v;
	(void)tm_u64map_get(&s->ftq, mk | 0xffff0000u | (uint32_t)kind, &made);
	(void)tm_u64map_get(&s->ftq, mk | 0xffffffffu, &next);
	for (; made <= cpu; made++, next++)
		tm_u64map_set(&s->ftq, mk | (uint64_t)kind << 16 | made, next < 253 ? 2 + next : 255);
	tm_u64map_set(&s->ftq, mk | 0xffff0000u | (uint32_t)kind, made);
	tm_u64map_set(&s->ftq, mk | 0xffffffffu, next);
	(void)tm_u64map_get(&s->ftq, key, &v);
	return (uint8_t)v;
}

struct pend *
tm_ps_pend_add(struct ps *s, enum tm_op_kind kind, uint32_t machine, uint64_t off)
{
	if (UNLIKELY(s->n_pend == s->cap_pend))
		XGROW(s->pend, s->cap_pend, s->n_pend + 1);
	struct pend *p = &s->pend[s->n_pend++];
	*p = (struct pend){.kind = kind, .machine = machine, .offset = off};
	return p;
}

/* A pending op with a text (copied: fixed up at flush). */
void
tm_ps_pend_text(struct ps *s, enum tm_op_kind kind, uint32_t machine, uint64_t off,
		const char *text, size_t len)
{
	tm_ps_pend_add(s, kind, machine, off);
	s->pend[s->n_pend - 1].arr = s->ptext.len;
	tm_buf_add(&s->ptext, text, len);
	tm_buf_addc(&s->ptext, 0);
}

void
tm_ps_pend_fatal(struct ps *s, uint32_t machine, uint64_t off, const char *text)
{
	tm_ps_pend_text(s, TM_OP_FATAL, machine, off, text, strlen(text));
}

void
tm_ps_pend_stat(struct ps *s, uint32_t machine, uint64_t off, enum tm_stat_id st)
{
	struct pend *op = tm_ps_pend_add(s, TM_OP_STAT, machine, off);
	op->stat = (uint32_t)st;
	op->n = 1;
}

/* Emit the pending payload ops: after a PACKET (has_ts) or on their own. */
void
tm_ps_pend_flush(struct ps *s, bool has_ts)
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
				tm_ps_emit(s, &op);
				s->sc->n_events++;
				continue;
			}
			s->sc->n_events++;
			break;
		default:
			break;
		}
		tm_ps_emit(s, &op);
		if (s->stop)
			break;
	}
	s->n_pend = s->n_pclocks = s->n_ptss = 0;
	tm_buf_reset(&s->ptext);
}

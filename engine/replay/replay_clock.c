/* SPDX-License-Identifier: MIT */
/*
 * The import replay's trace time and trackers (replay_priv.h): the
 * trace-time clock claims, the deferred bridge, conversions to trace time
 * and clock snapshots (importers/common/clock_tracker.cc).
 */
#include "replay_priv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* trace time and trackers                                             */
/* ------------------------------------------------------------------ */

bool
tm_rp_try_set_clock(struct tm_replay *p, struct tm_clockid c, int64_t owner)
{
	if (p->tt_owner != NO_OWNER && p->tt_owner != owner)
		return false;
	p->tt = c;
	p->tt_owner = owner;
	p->tt_claimed = true;
	p->tt_clock_meta = c.clock;
	return true;
}

void
tm_rp_set_global_clock(struct tm_replay *p, struct tm_tracker *c, struct tm_clockid clk)
{
	if (c->converted)
		return;
	tm_rp_try_set_clock(p, tm_clockid_qualify(clk, c->row, 0), tm_ctx_trace_id(p, c));
}

static void
zero_edge(struct tm_replay *p, struct tm_clockid a, struct tm_clockid b)
{
	struct tm_graph_clock gc[2] = {{a, 0, 1, false}, {b, 0, 1, false}};
	char msg[512];
	(void)tm_graph_add_snapshot(p->g, gc, 2, p->tt, msg, sizeof msg);
}

static void
flush_pending(struct tm_replay *p, struct tm_tracker *c)
{
	if (!c->has_pending)
		return;
	c->has_pending = false;
	struct tm_clockid gt = p->tt;
	struct tm_clockid q = tm_clockid_qualify(tm_ctx_pending(p, c), c->row, tm_ctx_tag(p, c));
	struct tm_clockid k = tm_tracker_bridged_from(p, c);
	if (!tm_clockid_eq(q, k) && !tm_graph_reaches(p->g, q, k))
		zero_edge(p, q, k);
	c->bridge = BR_PATH;
	if (tm_clockid_eq(k, gt) || tm_graph_reaches(p->g, k, gt))
		return;
	struct tm_clockid r = {TM_CLOCK_REALTIME, 0, 0, c->row};
	struct tm_clockid R = {TM_CLOCK_REALTIME, 0, 0, gt.machine};
	if (!tm_clockid_eq(r, R) && tm_graph_reaches(p->g, k, r) && tm_graph_reaches(p->g, R, gt)) {
		if (!tm_graph_reaches(p->g, r, R))
			zero_edge(p, r, R);
		c->bridge = BR_REALTIME;
		return;
	}
	if (k.clock == TM_CLOCK_TRACE_FILE || gt.clock == TM_CLOCK_TRACE_FILE || k.clock == gt.clock) {
		zero_edge(p, k, gt);
		c->bridge = BR_ASSUMED;
		return;
	}
	c->bridge = BR_DECLINED;
	tm_rp_stat_add(p, c, TM_STAT_UNRELATABLE, 1);
}

/* The stat a failed conversion counts (clock_tracker.cc). */
enum tm_stat_id
tm_rp_why_stat(enum tm_conv_result why)
{
	return why == TM_CONV_UNKNOWN_SOURCE   ? TM_STAT_UNKNOWN_SOURCE
	       : why == TM_CONV_UNKNOWN_TARGET ? TM_STAT_UNKNOWN_TARGET
					       : TM_STAT_NO_PATH;
}

/* ClockTracker::ToTraceTime on an unqualified clock; v (may be NULL) gets
 * the value on the way at v->id. */
bool
tm_rp_to_trace_time_via(struct tm_replay *p, struct tm_tracker *c, struct tm_clockid clk, int64_t ts,
		  bool suppress, int64_t *out, enum tm_conv_result *why, struct via *v)
{
	flush_pending(p, c);
	c->converted = true;
	struct tm_clockid q = tm_clockid_qualify(clk, c->row, tm_ctx_tag(p, c));
	enum tm_conv_result res =
		v ? tm_graph_convert_via(p->g, q, ts, p->tt, v->id, false, out, &v->passed, &v->val)
		  : tm_graph_convert(p->g, q, ts, p->tt, false, out);
	if (why)
		*why = res;
	if (res == TM_CONV_OK)
		return true;
	if (!suppress) {
		tm_rp_stat_add(p, c, tm_rp_why_stat(res), 1);
	}
	return false;
}

bool
tm_rp_to_trace_time(struct tm_replay *p, struct tm_tracker *c, struct tm_clockid clk, int64_t ts, bool suppress,
	      int64_t *out, enum tm_conv_result *why)
{
	return tm_rp_to_trace_time_via(p, c, clk, ts, suppress, out, why, NULL);
}

/* ClockTracker::AddSnapshot.  Returns false on its PIN error ("clock
 * overrides require the trace to use a single clock"). */
bool
tm_rp_add_snapshot(struct tm_replay *p, struct tm_tracker *c, const struct tm_op_clock *clk, size_t n, uint32_t seq)
{
	if (c->is_pin)
		return false;
	if (!c->is_primary && tm_ctx_tag(p, c) == 0) {
		c->tagged = true;
		if (c->converted)
			tm_rp_stat_add(p, c, TM_STAT_MIXED_SOURCES, 1);
	}
	struct tm_graph_clock *gc = xmalloc((2 * n + 1) * sizeof *gc);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		struct tm_clockid id = {clk[i].id, 0, 0, 0};
		if (tm_clock_is_seq(clk[i].id)) {
			id.seq = seq;
			id.tf = tm_ctx_trace_id(p, c);
		}
		gc[k++] = (struct tm_graph_clock){tm_clockid_qualify(id, c->row, tm_ctx_tag(p, c)),
						  clk[i].ts, clk[i].unit ? clk[i].unit : 1,
						  clk[i].is_incremental};
	}
	if (!c->is_primary && c->row != p->tt.machine) {
		size_t base = k;
		for (size_t i = 0; i < base; i++)
			if ((gc[i].id.clock == TM_CLOCK_REALTIME ||
			     gc[i].id.clock == TM_CLOCK_REALTIME_COARSE) &&
			    gc[i].id.seq == 0) {
				gc[k] = gc[i];
				gc[k].id = (struct tm_clockid){gc[i].id.clock, 0, 0, c->row};
				k++;
			}
	}
	char msg[512];
	if (!tm_graph_add_snapshot(p->g, gc, k, p->tt, msg, sizeof msg))
		tm_rp_stat_add(p, c, TM_STAT_INVALID_SNAPSHOT, 1);
	free(gc);
	return true;
}


/* SPDX-License-Identifier: MIT */
/* The clock a scanned proto's timestamps are on (the trace clock a
 * relation names for it), read from its op log. */
#include "scan.h"

static bool
is_builtin(uint32_t c)
{
	return c >= TM_CLOCK_REALTIME && c <= TM_CLOCK_BOOTTIME;
}

uint32_t
tm_scan_trace_clock(const struct tm_scan *sc)
{
	/* A ClockSnapshot packet makes its primary_trace_clock, else BOOTTIME,
	 * the reader's default clock (proto_trace_reader.cc,
	 * ParseClockSnapshot); the last one wins.  Without one, the packets'
	 * own builtin clocks (TracePacketDefaults.timestamp_clock_id) say it,
	 * a packet on a sequence-scoped clock voting for the builtin clock its
	 * sequence's snapshots define it against (the SDK's clock: MONOTONIC
	 * where it does not use BOOTTIME). */
	uint32_t clock = TM_CLOCK_UNSET;
	uint64_t votes[TM_CLOCK_BOOTTIME + 1] = {0};
	uint32_t seq_base = TM_CLOCK_UNSET;
	struct tm_opiter it;
	struct tm_op op;
	tm_opiter_init(&it, tm_scan_log(sc, false));
	it.raw_runs = true;
	while (tm_opiter_next(&it, &op)) {
		if (op.kind == TM_OP_SNAPSHOT && (op.flags & TM_SNAP_PACKET) && op.machine == 0) {
			bool boot = false, tf = false;
			for (uint32_t i = 0; i < op.n; i++) {
				boot |= op.clocks[i].id == TM_CLOCK_BOOTTIME;
				tf |= op.clocks[i].id == TM_CLOCK_TRACE_FILE;
			}
			if (op.primary)
				clock = op.primary;
			else if (boot && !tf)
				clock = TM_CLOCK_BOOTTIME;
			bool seq = false;
			uint32_t base = TM_CLOCK_UNSET;
			for (uint32_t i = 0; i < op.n; i++) {
				seq |= tm_clock_is_seq(op.clocks[i].id);
				if (!is_builtin(base) && is_builtin(op.clocks[i].id))
					base = op.clocks[i].id;
			}
			if (seq && is_builtin(base))
				seq_base = base;
		} else if ((op.kind == TM_OP_PACKET || op.kind == TM_OP_CONVERT) && is_builtin(op.clock)) {
			votes[op.clock]++;
		} else if (op.kind == TM_OP_PACKET && tm_clock_is_seq(op.clock) &&
			   is_builtin(seq_base)) {
			votes[seq_base]++;
		} else if (op.kind == TM_OP_RUN && !(op.flags & TM_RUN_ARRAY) && is_builtin(op.clock)) {
			votes[op.clock] += op.run.n;
		}
	}
	tm_opiter_fini(&it);
	if (is_builtin(clock))
		return clock;
	uint32_t best = TM_CLOCK_BOOTTIME;
	for (uint32_t c = TM_CLOCK_REALTIME; c <= TM_CLOCK_BOOTTIME; c++)
		if (votes[c] > votes[best])
			best = c;
	return best;
}

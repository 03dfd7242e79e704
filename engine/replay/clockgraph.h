/* SPDX-License-Identifier: MIT */
/*
 * trace_processor's global clock graph, replayed: clock nodes are
 * (clock_id, seq_id, trace_file_id, machine_row) tuples; each snapshot adds
 * a series (keyed by an order-dependent hash of its clock list) and edges
 * between every pair of its clocks (kept as one group per distinct snapshot,
 * not as pairs); conversion follows the path trace_processor's breadth-first
 * search of at most 4 hops finds (the first edge that reaches the target),
 * each hop applying the last snapshot at or before the value (the first one
 * when the value precedes them all).  util/clock_synchronizer.{h,cc}:
 * ClockSynchronizer::AddSnapshot and Convert.
 */
#ifndef TM_CLOCKGRAPH_H
#define TM_CLOCKGRAPH_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "internal.h"

struct tm_clockid {
	uint32_t clock, seq, tf, machine;
};

static inline bool
tm_clockid_eq(struct tm_clockid a, struct tm_clockid b)
{
	return a.clock == b.clock && a.seq == b.seq && a.tf == b.tf && a.machine == b.machine;
}

/* Qualify(c, m, tag): machine = m; trace_file_id = tag when seq and tf are 0. */
static inline struct tm_clockid
tm_clockid_qualify(struct tm_clockid c, uint32_t machine, uint32_t tag)
{
	c.machine = machine;
	if (c.seq == 0 && c.tf == 0)
		c.tf = tag;
	return c;
}

/* "6(seq=0,tf=2,m=0)" style, as trace_processor prints clock ids. */
void tm_clockid_str(struct tm_clockid c, char *buf, size_t cap);

struct tm_graph_clock {
	struct tm_clockid id;
	int64_t ts;
	uint64_t unit;
	bool is_incremental;
};

enum tm_conv_result {
	TM_CONV_OK,
	TM_CONV_UNKNOWN_SOURCE,
	TM_CONV_UNKNOWN_TARGET,
	TM_CONV_NO_PATH,
};

struct tm_graph;
struct tm_graph *tm_graph_new(void);
void tm_graph_free(struct tm_graph *g);

/* AddSnapshot.  tt is the current trace-time clock (for the unit and
 * monotonicity rules).  On error returns false with trace_processor's text
 * in msg; clocks processed before the error keep their series entries. */
bool tm_graph_add_snapshot(struct tm_graph *g, const struct tm_graph_clock *c, size_t n,
			   struct tm_clockid tt, char *msg, size_t msg_cap);
/* The same with a given series key instead of the hash of the clock list
 * (tests: hash collisions). */
bool tm_graph_add_snapshot_hashed(struct tm_graph *g, const struct tm_graph_clock *c, size_t n,
				  uint32_t hash, struct tm_clockid tt, char *msg, size_t msg_cap);
/* Units of work done so far (clocks added, group members and edges looked
 * at): tests check it grows linearly with the input. */
uint64_t tm_graph_work(const struct tm_graph *g);
/* Convert; *out valid on TM_CONV_OK.  Incremental sources accumulate (mutate)
 * only when a path was found, unless probe is true (no mutation). */
enum tm_conv_result tm_graph_convert(struct tm_graph *g, struct tm_clockid src, int64_t ts,
				     struct tm_clockid dst, bool probe, int64_t *out);
/* tm_graph_convert, also giving the value the conversion has at node via
 * when its path passes through it (*passed; the first time it does). */
enum tm_conv_result tm_graph_convert_via(struct tm_graph *g, struct tm_clockid src, int64_t ts,
					 struct tm_clockid dst, struct tm_clockid via, bool probe,
					 int64_t *out, bool *passed, int64_t *at_via);
/* Ours, for estimates: an incremental clock's value as if every
 * conversion from it had succeeded (a snapshot or a successful conversion
 * sets it, as last; a failed one, which leaves last alone, is added here
 * with this call).  False when src is not a known incremental clock. */
bool tm_graph_shadow_step(struct tm_graph *g, struct tm_clockid src, int64_t ts, int64_t *ns);
/* Convert a value already in ns of src (no unit, no incremental step). */
enum tm_conv_result tm_graph_convert_ns(struct tm_graph *g, struct tm_clockid src, int64_t ns,
					struct tm_clockid dst, int64_t *out);
/* c is known and uses incremental encoding. */
bool tm_graph_is_incremental(const struct tm_graph *g, struct tm_clockid c);
bool tm_graph_knows(const struct tm_graph *g, struct tm_clockid c);
/* "a Convert of ts 0 succeeds" without side effects. */
bool tm_graph_reaches(struct tm_graph *g, struct tm_clockid a, struct tm_clockid b);
uint32_t tm_graph_n_snapshots(const struct tm_graph *g);

/* The conversion src -> dst over the whole source range [lo, hi] as pieces:
 * on [a, b] (source values, ascending, covering [lo, hi]) the result is
 * value + off, exactly as tm_graph_convert computes it one value at a time.
 * Only for non-incremental sources with unit 1.  Returns false when there
 * is no path, the source does not qualify, or offsets would overflow
 * (callers then convert one value at a time).  *out is grown as needed;
 * caller frees. */
struct tm_piece {
	int64_t a, b, off;
};
bool tm_graph_pieces(struct tm_graph *g, struct tm_clockid src, struct tm_clockid dst, int64_t lo,
		     int64_t hi, struct tm_piece **out, size_t *n, size_t *cap);

#endif

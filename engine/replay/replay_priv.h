/* SPDX-License-Identifier: MIT */
/*
 * The import replay's private face, owned by replay.c (the per-file
 * replay: readers, placing, ops, runs, the passes), for the parts it calls,
 * bottom to top: replay_machines.c (machine rows, contexts),
 * replay_stats.c (failures, stats), replay_slices.c (the events list's
 * slice tracks, the sorter's order), replay_clock.c (trace time,
 * trackers), replay_manifest.c (the manifest's apply).
 */
#ifndef TM_REPLAY_PRIV_H
#define TM_REPLAY_PRIV_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include <stdarg.h>

#include "replay_state.h"

/* ---- machines (replay_machines.c) ---- */

/* The manifest's raw_id_to_table_id (only rows the manifest made), or -1. */
long tm_rp_row_of_raw(const struct tm_replay *p, uint64_t raw);
uint32_t tm_rp_new_row(struct tm_replay *p, uint64_t raw, const char *name);
long tm_rp_mc_find(const struct tm_replay *p, uint64_t raw);
void tm_rp_mc_add(struct tm_replay *p, uint64_t raw, uint32_t row);
struct tm_tracker *tm_rp_fork_ctx(struct tm_replay *p, size_t file, uint64_t raw);

/* ---- errors and stats (replay_stats.c) ---- */

void tm_rp_fail(struct tm_replay *p, const char *fmt, ...) TM_PRINTF(2, 3);
/* tm_rp_fail for an error the manifest causes (error_in_manifest). */
void tm_rp_mfail(struct tm_replay *p, const char *fmt, ...) TM_PRINTF(2, 3);
/* n more of stat st on a file (missing: of its events missing under st). */
void tm_rp_acc_stat_add(struct tm_file_acc *a, int st, bool missing, uint64_t n);
void tm_rp_missing_add(struct tm_file_acc *a, enum tm_stat_id st, uint64_t n);
void tm_rp_stat_add(struct tm_replay *p, const struct tm_tracker *c, enum tm_stat_id st,
		    uint64_t n);

/* ---- the events list (replay_slices.c) ---- */

void tm_rp_record_event(struct tm_replay *p, size_t file, uint32_t detail, int64_t ts,
			uint32_t row, int stat);
void tm_rp_slice_tracks(struct tm_replay *p);

/* ---- trace time and trackers (replay_clock.c) ---- */

/* An estimate's look at a conversion on its way (struct tm_replay_probe):
 * the value it has at node id, if its path passes there. */
struct via {
	struct tm_clockid id;
	bool passed;
	int64_t val;
};

bool tm_rp_try_set_clock(struct tm_replay *p, struct tm_clockid c, int64_t owner);
void tm_rp_set_global_clock(struct tm_replay *p, struct tm_tracker *c, struct tm_clockid clk);
enum tm_stat_id tm_rp_why_stat(enum tm_conv_result why);
bool tm_rp_to_trace_time_via(struct tm_replay *p, struct tm_tracker *c, struct tm_clockid clk,
			     int64_t ts, bool suppress, int64_t *out, enum tm_conv_result *why,
			     struct via *v);
bool tm_rp_to_trace_time(struct tm_replay *p, struct tm_tracker *c, struct tm_clockid clk,
			 int64_t ts, bool suppress, int64_t *out, enum tm_conv_result *why);
bool tm_rp_add_snapshot(struct tm_replay *p, struct tm_tracker *c, const struct tm_op_clock *clk,
			size_t n, uint32_t seq);

/* ---- manifest apply (replay_manifest.c) ---- */

const char *tm_rp_mpath(const struct tm_replay *p, const struct tm_member *mb, size_t *len);
void tm_rp_apply_manifest(struct tm_replay *p, uint32_t manifest_tid);

#endif

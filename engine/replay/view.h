/* SPDX-License-Identifier: MIT */
/*
 * The tracks of the report's events list, as the replay lists them
 * (replay_slices.c tm_rp_record_event interns each listed event's track; report.c hands
 * the table to the report).  The views over them: view.c.
 */
#ifndef TM_VIEW_H
#define TM_VIEW_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "internal.h"
#include "strmap.h"

struct tm_tracktab {
	struct tm_report_track *v;
	size_t n, cap;
	struct tm_u64map ix;  /* hash of (file, machine, key) -> first id of that hash */
	uint32_t *next;       /* per id: the next id of the same hash, UINT32_MAX none */
	size_t cap_next;
	uint32_t *per_file;   /* per report file: tracks so far (numbers) */
	size_t cap_per_file;
};

/* The id of the track (file, machine, key), added when new; counts the
 * event (phase, dropped) on it.  A counter sample ('C') is on the track of
 * its key and name: trace_processor gives each counter name a track of its
 * own (json_trace_parser.cc, the 'C' case: one track per name), while the
 * scan's key is the emitting thread's. */
uint32_t tm_tracktab_add(struct tm_tracktab *t, uint32_t file, uint32_t machine, uint64_t key,
			 char phase, const char *name, bool dropped);
void tm_tracktab_fini(struct tm_tracktab *t);
struct tm_oplog;
/* Name track id (new) from its file's log: the track key's names
 * (tracknames.h); a counter's track is named by the counter. */
void tm_tracktab_name(struct tm_tracktab *t, uint32_t id, const struct tm_oplog *log, uint64_t key,
		      char phase, const char *name);

#endif

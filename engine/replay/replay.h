/* SPDX-License-Identifier: MIT */
/* The replay stage's face (engine/replay/, above util .. manifest): the
 * clock graph, the import replay and the report read from it.
 * The import replay (replay.c): trace_processor's archive import over what
 * the scans kept, for one manifest.  Its inputs are spelled out here so the
 * replay depends on the opened input, the scans and the manifests only, not
 * on the session that holds them. */
#ifndef TM_REPLAY_H
#define TM_REPLAY_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "input.h"
#include "scan.h"

struct tm_manifest_slot { /* one perfetto_manifest member of the input */
	bool is_ok;
	bool apply_stage; /* not ok in the apply step only: m is the model (tm_manifest_parse_keep) */
	struct tm_manifest m;
	char *text; /* the member's bytes as read (NUL-terminated), NULL if unread */
	size_t text_len;
	struct tm_error err;
};

/* Conversions an estimate asks of the replay (align.c): the timestamps of
 * one file's packets flagged TM_PKT_SAMPLE (oplog.h) whose byte offsets are
 * in off[], as trace_processor converts them, read on the way at the file's
 * trace clock `clock` on the file's own machine (the clock a manifest
 * offset of the file relates).  The replay fills val[] and st[]. */
enum tm_probe_st {
	TM_PROBE_UNSEEN = 0, /* no flagged packet at that offset was replayed */
	TM_PROBE_OK,         /* val: the timestamp in the file's trace clock */
	TM_PROBE_RAW,        /* the reader had no clock: val is the raw value, as the timeline takes it */
	TM_PROBE_AVOIDS,     /* it reaches the timeline without passing the file's clock */
	TM_PROBE_NO_PATH,    /* no clock path to the file's clock */
	TM_PROBE_INCREMENTAL, /* an incremental clock whose conversion failed: no value */
	TM_PROBE_PENDING,    /* (during the replay) deferred; val: its incremental clock's value */
};
struct tm_replay_probe {
	uint32_t clock;
	size_t n;
	uint64_t *off;       /* ascending, distinct */
	int64_t *val;
	uint8_t *st;         /* enum tm_probe_st */
};

/* The slot of the packet at byte offset off in pr, or SIZE_MAX. */
static inline size_t
tm_replay_probe_slot(const struct tm_replay_probe *pr, uint64_t off)
{
	size_t lo = 0, hi = pr->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pr->off[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pr->n && pr->off[lo] == off ? lo : SIZE_MAX;
}

/* A session's spare buffer for reports' events lists: a report's list goes
 * back to it when the report is freed, and the session's next evaluation
 * with events writes into it.  A list of a few hundred thousand events is
 * tens of MB, above glibc's mmap threshold: a fresh one costs a page fault
 * per 4 KiB page touched, often more than writing the list (the workbench
 * computes one per edit).  Shared by the session and its reports, each
 * holding a reference (a report may be freed after its session is closed,
 * on any thread); it keeps one buffer, the largest given back (report.c). */
struct tm_evpool;
struct tm_evpool *tm_evpool_new(void);
struct tm_evpool *tm_evpool_ref(struct tm_evpool *pl);
void tm_evpool_unref(struct tm_evpool *pl);
/* The spare buffer (NULL: none) and its capacity in events; the pool no
 * longer has it. */
struct tm_report_event *tm_evpool_take(struct tm_evpool *pl, size_t *cap);
/* v (cap events) back to the pool, or freed (the pool keeps the larger). */
void tm_evpool_give(struct tm_evpool *pl, struct tm_report_event *v, size_t cap);
/* An events list's buffer grows as a big buffer (internal.h BIG_XGROW:
 * huge pages from 2 MiB on, so a fresh list of tens of MB costs tens of
 * page faults, not thousands); it is freed by its capacity here. */
void tm_events_free(struct tm_report_event *v, size_t cap);

struct tm_replay_src {
	const struct tm_input *in;  /* members, processing order, fatal error */
	struct tm_scan *const *scans; /* per member; NULL entries = not scanned */
	/* per member: NULL except for manifest members */
	struct tm_manifest_slot *const *manifests;
	size_t first_manifest; /* member index of the first manifest, SIZE_MAX */
	bool keep_events;      /* fill the report's per-event list (else the
				* scans' folded logs are replayed: tm_scan_log) */
	bool plain_replay;     /* replay every event one by one (no runs) */
	bool dropped_only;     /* with keep_events: only dropped events listed */
	struct tm_evpool *pool; /* NULL, or where the events list's buffer comes from */
	/* per member: NULL, or the conversions an estimate asks for */
	struct tm_replay_probe *const *probes;
	/* set (by another thread): the replay stops soon, *cancelled set */
	volatile bool *cancel;
	bool *cancelled;
};

/* Replay trace_processor's import for manifest m (NULL = the input's own
 * manifest members) and fill r (zeroed by the caller). */
void tm_replay(const struct tm_replay_src *src, const struct tm_manifest *m, struct tm_report *r);

/* tm_report_verdict as a string (caller frees) (report.c). */
char *tm_report_verdict_str(const struct tm_report *r);

#endif

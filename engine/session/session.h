/* SPDX-License-Identifier: MIT */
/* The session stage's face (engine/session/, above replay; align/ alone
 * is above it): the session, its scan cache, offsets, packing and the
 * files it writes.  The session's private state: session.c and offset.c
 * (which evaluates edits against the session's scans). */
#ifndef TM_SESSION_H
#define TM_SESSION_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "replay.h"
#include "scancache.h"
#include "strmap.h"

/* One input path's members and what happened to its saved scan
 * (session_cache.c). */
struct tm_cache_group {
	size_t path;      /* index into in.paths */
	size_t *members;  /* session member indexes, in member order */
	size_t n;
	uint64_t *list_size; /* each member's size as listed (before its scan) */
	bool have_key, loaded, saved;
	struct tm_file_id key; /* tm_input_file_id: taken before reading */
	bool racy; /* changed within tm_scancache_racy_s of the opening: not saved */
	char *file;       /* the cache file's path */
};

struct tm_session {
	struct tm_input in;
	struct tm_session_opts opts;
	struct tm_scan **scans; /* per member; NULL until scanned / not scannable */
	_Atomic uint64_t *progress;
	_Atomic bool *is_scanned;
	size_t cap_scans; /* room in scans, progress and is_scanned */
	/* per member: NULL except for manifest members (a slot is ~3 KiB) */
	struct tm_manifest_slot **manifests;
	size_t first_manifest;              /* member index of the first manifest, SIZE_MAX */
	/* saved scans (session_cache.c): the cache, one group per input path */
	struct tm_scancache scache;
	struct tm_cache_group *cache;
	size_t n_cache;
	size_t cache_loaded, cache_saved;
	size_t visit_scans; /* members scanned while listing (visit_scan) */
	/* the spare buffer of events lists (only with keep_events) */
	struct tm_evpool *evpool;
	/* member name -> the first non-hidden member of that name (index >= 1;
	 * tm_session_member_by_name), built once the listing is done */
	struct tm_ixmap member_ix;
};

/* The session's saved scans (session_cache.c), in the order session.c
 * calls them.  First of all (before listing): the cache directory opened
 * and checked (ours, not writable by others; else refused with a note);
 * nothing without opts.cache_dir. */
void tm_session_cache_begin(struct tm_session *s);
/* Before listing: whether every input has a saved scan under its current
 * key (a load is then likely; scanning members while listing would be
 * wasted).  A load that fails after all leaves the members to the scan. */
bool tm_session_cache_expected(const struct tm_session *s, const char *const *paths, size_t n);
/* After listing: load the saved scan of every unchanged input (its members
 * are then scanned); nothing without a cache directory. */
void tm_session_cache_open(struct tm_session *s);
/* After scanning: save each input whose members are all scanned (once). */
void tm_session_cache_save(struct tm_session *s);
void tm_session_cache_fini(struct tm_session *s);

/* pack.c: the TAR name tm_merge_write gives member i, NULL when it is not
 * written (has_manifest: a manifest is written and replaces the input's). */
const char *tm_pack_name(const struct tm_session *s, size_t i, bool has_manifest);

/* The first two trace files of a report (indexes into r->files, -1: none),
 * the reference an offset edit falls back to (offset.c). */
struct tm_first_traces {
	long v[2];
};
void tm_first_traces(const struct tm_report *r, struct tm_first_traces *out);

/* tm_offset_apply with the replay of cur already known (borrowed; NULL:
 * replayed here), and its tm_first_traces (NULL: found here), so that
 * callers trying many edits replay each once and pay no walk of the
 * report's files per edit (offset.c). */
enum tm_status tm_offset_apply_known(struct tm_session *s, const struct tm_manifest *cur,
				     const struct tm_report *known,
				     const struct tm_first_traces *traces, const char *file,
				     const struct tm_offset_spec *sp, struct tm_offset_result *out,
				     struct tm_error *err) TM_WUR;

/* tm_session_evaluate with the conversions an estimate asks of the replay
 * (probes: per member, NULL entries or all NULL for none; filled in). */
enum tm_status tm_session_evaluate_probe(struct tm_session *s, const struct tm_manifest *m,
					 struct tm_replay_probe *const *probes,
					 struct tm_report **out, struct tm_error *err) TM_WUR;


/* The numbers are evaluated from runs of same-shape events (oplog.h)
 * except by the reference replay (plain_replay), which reads the ops as
 * the scanner wrote them.  Without details the scan writes the runs
 * itself; with details it writes single events and the finished log is
 * folded beside them (tm_scan_fold does nothing for a log of runs).
 * Inline: session.c and session_cache.c both ask. */
static inline bool
tm_session_wants_runs(const struct tm_session *s)
{
	return !s->opts.plain_replay;
}

/* A finished scan of s: with details kept, its log folded into runs
 * beside them (tm_scan_fold), the numbers' fast path; the reference
 * replay (plain_replay) reads the ops as written. */
static inline void
tm_session_fold_scan(const struct tm_session *s, struct tm_scan *sc)
{
	if (tm_session_wants_runs(s))
		tm_scan_fold(sc);
}


#endif

/* SPDX-License-Identifier: MIT */
/*
 * What a scan keeps to name the merged trace's tracks (with keep_events):
 * per log, a record per track key (the key a detail's track holds: a
 * TrackEvent track uuid, a sequence's thread, a JSON (pid, tid), an atrace
 * thread or async track), per process (pid) and per thread (tid), each with
 * the name the trace gives it.  A few records per track, never per event;
 * their names are in the log's detail pool (struct tm_oplog_x), so a saved
 * scan keeps them with the details (scancache.c).
 *
 * The names are those trace_processor's tables would hold: TrackDescriptor
 * name, ProcessDescriptor process_name (else cmdline[0]),
 * ThreadDescriptor thread_name, ProcessTree's cmdline[0] and thread names
 * (track_event_tokenizer.cc, process_tracker.cc), a JSON M event's
 * process_name / thread_name args.name (json_trace_parser.cc), a systrace
 * line's task-pid (systrace_line_parser.cc: the thread's name).
 */
#ifndef TM_TRACKNAMES_H
#define TM_TRACKNAMES_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "oplog.h"

enum { TM_TN_TRACK = 1, TM_TN_PROCESS, TM_TN_THREAD };
#define TM_TN_NONE INT64_MIN /* a pid or tid not known */

struct tm_tn_rec {
	uint64_t key;     /* TRACK: the detail's track key; PROCESS: pid; THREAD: tid */
	uint64_t parent;  /* TRACK: its parent track's key (TrackDescriptor
			   * parent_uuid), 0 none */
	int64_t pid, tid; /* TM_TN_NONE: not known */
	uint32_t name;    /* offset + 1 into the log's pool, 0 none */
	uint8_t what;     /* TM_TN_* */
	char kind;        /* TRACK: 't' thread, 'p' process, 'a' async, 'c' counter,
			   * 'u' a CPU's, 0 */
};

/* A track key's record, set or completed: pid, tid TM_TN_NONE and name
 * NULL leave what is known; kind 0 too. */
void tm_tn_track(struct tm_oplog *l, uint64_t key, uint64_t parent, int64_t pid, int64_t tid,
		 char kind, const char *name, size_t name_len);
/* A process's or thread's name (the latest wins, as the trackers' names). */
void tm_tn_process(struct tm_oplog *l, int64_t pid, const char *name, size_t name_len);
void tm_tn_thread(struct tm_oplog *l, int64_t pid, int64_t tid, const char *name, size_t name_len);
/* The index of a log read back (scancache.c): records only are saved. */
void tm_tn_reindex(struct tm_oplog_x *x);
/* Whether the records read back are in range of the pool: why says not. */
bool tm_tn_valid(const struct tm_oplog_x *x, char *why, size_t cap);

/* What a track is called, resolved: its own record, then its parents'
 * (for a pid and tid it does not carry), then the process's and thread's
 * names.  Names point into the log's pool (NULL: none). */
struct tm_tn_names {
	int64_t pid, tid;
	const char *name, *process, *thread;
	char kind;
};
void tm_tn_resolve(const struct tm_oplog *l, uint64_t key, struct tm_tn_names *out);

struct tm_atrace_event;
/* An atrace event's track (keep_events): the emitting thread's (pid, its
 * task name when the line gives one), or its process's async or counter
 * track by name (systrace_parser.cc ParseSystracePoint). */
void tm_tn_atrace(struct tm_oplog *l, const struct tm_atrace_event *ev, uint32_t pid,
		  const char *task, size_t task_len);

/* The counter value of the log's detail (1 + index; 0: none). */
void tm_detail_set_value(struct tm_oplog *l, uint32_t detail, double v);

/* A CPU's track (its ftrace events but atrace's): named "cpu N", kind 'u'. */
void tm_tn_cpu(struct tm_oplog *l, uint64_t key, uint32_t cpu);

/* A TracePacket's names (scan_proto_names.c): its TrackDescriptor,
 * ProcessDescriptor, ThreadDescriptor (the track of the sequence's own
 * TrackEvents, seq_track) and ProcessTree. */
void tm_proto_names(struct tm_oplog *l, const uint8_t *p, size_t n, uint64_t seq_track);

#endif

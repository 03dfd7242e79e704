/* SPDX-License-Identifier: MIT */
/*
 * The proto scanner's share of the track names (tracknames.h), with
 * keep_events only: a packet's TrackDescriptor, ProcessDescriptor,
 * ThreadDescriptor and ProcessTree, as trace_processor names tracks,
 * processes and threads from them (track_event_tokenizer.cc
 * TokenizeTrackDescriptorPacket, TokenizeThreadDescriptorPacket,
 * TokenizeProcessDescriptorPacket; system_probes_parser.cc
 * ParseProcessTree: a process's name is cmdline[0], a thread's its name).
 * Per packet of those kinds, never per event.
 */
#include "tracknames.h"
#include "proto_wire.h"

enum { TP_PROCESS_TREE = 2, TP_PROCESS_DESCRIPTOR = 43, TP_TRACK_DESCRIPTOR = 60 };
enum { PD_PID = 1, PD_CMDLINE = 2, PD_PROCESS_NAME = 6 };
enum { TDS_PID = 1, TDS_TID = 2, TDS_THREAD_NAME = 5 };
enum { TRK_UUID = 1, TRK_NAME = 2, TRK_PROCESS = 3, TRK_THREAD = 4, TRK_PARENT_UUID = 5,
       TRK_COUNTER = 8, TRK_STATIC_NAME = 10 };
enum { PT_PROCESSES = 1, PT_THREADS = 2, PTP_PID = 1, PTP_CMDLINE = 3, PTT_TID = 1,
       PTT_NAME = 2, PTT_TGID = 3 };

struct who {
	int64_t pid, tid;
	const uint8_t *name;
	size_t name_len;
};

/* A ProcessDescriptor: its pid and name (process_name, else cmdline[0]). */
static struct who
process_desc(struct tm_oplog *l, const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n;
	struct field f;
	struct who w = {TM_TN_NONE, TM_TN_NONE, NULL, 0};
	const uint8_t *cmd = NULL;
	size_t cmd_len = 0;
	while (next_field(&p, end, &f) > 0) {
		if (f.id == PD_PID && f.wt == WT_VARINT)
			w.pid = (int32_t)f.v;
		else if (f.id == PD_PROCESS_NAME && f.wt == WT_LEN)
			w.name = f.p, w.name_len = f.len;
		else if (f.id == PD_CMDLINE && f.wt == WT_LEN && !cmd)
			cmd = f.p, cmd_len = f.len;
	}
	if (!w.name)
		w.name = cmd, w.name_len = cmd_len;
	if (w.pid != TM_TN_NONE && w.name)
		tm_tn_process(l, w.pid, (const char *)w.name, w.name_len);
	return w;
}

/* A ThreadDescriptor: its pid, tid and thread_name. */
static struct who
thread_desc(struct tm_oplog *l, const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n;
	struct field f;
	struct who w = {TM_TN_NONE, TM_TN_NONE, NULL, 0};
	while (next_field(&p, end, &f) > 0) {
		if (f.id == TDS_PID && f.wt == WT_VARINT)
			w.pid = (int32_t)f.v;
		else if (f.id == TDS_TID && f.wt == WT_VARINT)
			w.tid = (int32_t)f.v;
		else if (f.id == TDS_THREAD_NAME && f.wt == WT_LEN)
			w.name = f.p, w.name_len = f.len;
	}
	if (w.tid != TM_TN_NONE && w.name)
		tm_tn_thread(l, w.pid, w.tid, (const char *)w.name, w.name_len);
	return w;
}

static void
track_desc(struct tm_oplog *l, const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n;
	struct field f;
	uint64_t uuid = 0, parent = 0;
	bool has_uuid = false;
	char kind = 'a';
	struct who w = {TM_TN_NONE, TM_TN_NONE, NULL, 0};
	const uint8_t *name = NULL;
	size_t name_len = 0;
	while (next_field(&p, end, &f) > 0) {
		if (f.id == TRK_UUID && f.wt == WT_VARINT) {
			uuid = f.v;
			has_uuid = true;
		} else if ((f.id == TRK_NAME || f.id == TRK_STATIC_NAME) && f.wt == WT_LEN) {
			name = f.p;
			name_len = f.len;
		} else if (f.id == TRK_PARENT_UUID && f.wt == WT_VARINT) {
			parent = f.v;
		} else if (f.id == TRK_PROCESS && f.wt == WT_LEN) {
			struct who pw = process_desc(l, f.p, f.len);
			w.pid = pw.pid;
			if (kind != 't')
				kind = 'p';
		} else if (f.id == TRK_THREAD && f.wt == WT_LEN) {
			w = thread_desc(l, f.p, f.len);
			kind = 't';
		} else if (f.id == TRK_COUNTER && f.wt == WT_LEN) {
			kind = 'c';
		}
	}
	if (has_uuid)
		tm_tn_track(l, uuid, parent, w.pid, w.tid, kind, (const char *)name, name_len);
}

static void
process_tree(struct tm_oplog *l, const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n;
	struct field f;
	while (next_field(&p, end, &f) > 0) {
		if (f.wt != WT_LEN || (f.id != PT_PROCESSES && f.id != PT_THREADS))
			continue;
		const uint8_t *q = f.p, *qe = f.p + f.len;
		struct field g;
		int64_t id = TM_TN_NONE, tgid = TM_TN_NONE;
		const uint8_t *name = NULL;
		size_t name_len = 0;
		bool proc = f.id == PT_PROCESSES;
		while (next_field(&q, qe, &g) > 0) {
			if (g.id == (proc ? PTP_PID : PTT_TID) && g.wt == WT_VARINT)
				id = (int32_t)g.v;
			else if (!proc && g.id == PTT_TGID && g.wt == WT_VARINT)
				tgid = (int32_t)g.v;
			else if (g.id == (proc ? PTP_CMDLINE : PTT_NAME) && g.wt == WT_LEN && !name)
				name = g.p, name_len = g.len;
		}
		if (id == TM_TN_NONE || !name)
			continue;
		if (proc)
			tm_tn_process(l, id, (const char *)name, name_len);
		else
			tm_tn_thread(l, tgid, id, (const char *)name, name_len);
	}
}

void
tm_proto_names(struct tm_oplog *l, const uint8_t *p, size_t n, uint64_t seq_track)
{
	const uint8_t *end = p + n;
	struct field f;
	while (next_field(&p, end, &f) > 0) {
		if (f.wt != WT_LEN)
			continue;
		switch (f.id) {
		case TP_TRACK_DESCRIPTOR:
			track_desc(l, f.p, f.len);
			break;
		case TP_PROCESS_DESCRIPTOR:
			process_desc(l, f.p, f.len);
			break;
		case TP_THREAD_DESCRIPTOR: {
			/* the sequence's thread: its TrackEvents without a
			 * track (track_event_tokenizer.cc) */
			struct who w = thread_desc(l, f.p, f.len);
			tm_tn_track(l, seq_track, 0, w.pid, w.tid, 't', NULL, 0);
			break;
		}
		case TP_PROCESS_TREE:
			process_tree(l, f.p, f.len);
			break;
		default:
			break;
		}
	}
}

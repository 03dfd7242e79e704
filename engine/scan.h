/* SPDX-License-Identifier: MIT */
/*
 * Scanners: one streaming pass over a member's bytes, appending to an oplog
 * (see oplog.h) and filling a summary.  Memory is bounded by the oplog (a few
 * bytes per event) plus fixed buffers; no scanner holds the member whole.
 */
#ifndef TM_SCAN_H
#define TM_SCAN_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include <stdatomic.h>

#include "archive.h"
#include "oplog.h"

struct tm_scan_ctl {
	bool keep_events;
	volatile bool *cancel;
	_Atomic uint64_t *progress; /* bytes consumed, updated now and then */
};

struct tm_scan {
	struct tm_oplog log;
	enum tm_format format;
	uint64_t n_packets;  /* proto packets / JSON events / systrace lines read */
	uint64_t n_events;   /* ops that push (upper bound of the file's events) */
	/* clocks seen in snapshots or used by events, as a bitmap of ids < 128 */
	uint64_t clocks_seen[2];
	bool has_snapshot;   /* any ClockSnapshot packet (decides PIN error 48) */
	size_t n_embedded;   /* distinct embedded machine ids, in first-seen order */
	uint32_t *embedded;
	size_t cap_embedded;
	bool has_raw_ts;      /* min/max of raw event timestamps, for display */
	int64_t raw_min, raw_max;
	bool failed;          /* the scan stopped with a TM_OP_FATAL or a read error */
	struct tm_error err;  /* ours, with member name and byte offset */
};

void tm_scan_init(struct tm_scan *sc, enum tm_format format);
void tm_scan_fini(struct tm_scan *sc);
void tm_scan_note_machine(struct tm_scan *sc, uint32_t machine);
void tm_scan_note_clock(struct tm_scan *sc, uint32_t clock);
void tm_scan_note_ts(struct tm_scan *sc, int64_t ts);

/* Each returns TM_OK when the member was read to its end (even if the
 * tokenizer hit a trace_processor-fatal error: that is a TM_OP_FATAL op),
 * TM_ERR_CANCELLED, or TM_ERR_IO for a read error (err set). */
enum tm_status tm_scan_proto(struct tm_stream *st, struct tm_scan *sc,
			     const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
enum tm_status tm_scan_json(struct tm_stream *st, struct tm_scan *sc,
			    const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
enum tm_status tm_scan_systrace(struct tm_stream *st, struct tm_scan *sc,
				const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;

#endif

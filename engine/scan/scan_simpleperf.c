/* SPDX-License-Identifier: MIT */
/*
 * simpleperf_proto scanner: `simpleperf report-sample --protobuf` output as
 * trace_processor's SimpleperfProtoTokenizer reads it
 * (importers/simpleperf_proto/simpleperf_proto_tokenizer.cc): "SIMPLEPERF",
 * a LE u16 version that must be 1, then records of a LE u32 size and a
 * Record message (protos/third_party/simpleperf/cmd_report_sample.proto),
 * a size of 0 ending the file.
 *
 * file, meta_info and lost records stay in the tokenizer; every other
 * record is one ToTraceTime(MONOTONIC) push: a sample or context switch at
 * its time (0 without one), a thread record at the last time seen, a
 * record with none of those at 0.  A file that ends before its 0 size
 * fails the import.
 */
#include <stdio.h>
#include <string.h>

#include "formats.h"
#include "scan.h"
#include "proto_wire.h"

enum { SP_HEADER, SP_SIZE, SP_RECORD, SP_DONE };

struct sp {
	struct tm_scan *sc;
	const struct tm_scan_ctl *ctl;
	struct tm_error *err;
	struct tm_buf buf;   /* the unit being assembled */
	int state;
	uint32_t need;       /* bytes of the current unit */
	uint64_t off;        /* where it starts */
	uint64_t total;
	int64_t last_ts;
	enum tm_status status;
	bool stop;
};

static void
sp_fatal(struct sp *sp, const char *text)
{
	tm_oplog_fatal(&sp->sc->log, 0, text, sp->off);
	sp->sc->failed = true;
	sp->stop = true;
}

static void
record(struct sp *sp, const uint8_t *r, size_t n)
{
	const uint8_t *end = r + n, *m;
	size_t ml = 0;
	bool any;
	(void)tm_pb_ld_field(r, end, 3, &ml, &any); /* file */
	if (any)
		return;
	(void)tm_pb_ld_field(r, end, 5, &ml, &any); /* meta_info */
	if (any)
		return;
	(void)tm_pb_ld_field(r, end, 2, &ml, &any); /* lost */
	if (any)
		return;
	int64_t ts = 0;
	const char *name = "record";
	bool has;
	if ((m = tm_pb_ld_field(r, end, 1, &ml, &any)), any) { /* sample */
		uint64_t t = m ? tm_pb_varint_field(m, m + ml, 1, &has) : 0;
		if (m && has) {
			ts = (int64_t)t;
			sp->last_ts = ts;
		}
		name = "sample";
	} else if ((m = tm_pb_ld_field(r, end, 6, &ml, &any)), any) { /* context_switch */
		uint64_t t = m ? tm_pb_varint_field(m, m + ml, 2, &has) : 0;
		if (m && has) {
			ts = (int64_t)t;
			sp->last_ts = ts;
		}
		name = "context_switch";
	} else if ((void)tm_pb_ld_field(r, end, 4, &ml, &any), any) { /* thread */
		ts = sp->last_ts;
		name = "thread";
	}
	struct tm_scan_event ev = {.ts = ts, .name = name, .name_len = strlen(name), .phase = 'P',
				   .align = -1, .dur = -1};
	tm_scan_event(sp->sc, sp->ctl, &ev, sp->off);
}

/* The unit in buf is complete: act on it. */
static void
unit(struct sp *sp)
{
	const uint8_t *b = (const uint8_t *)sp->buf.data;
	switch (sp->state) {
	case SP_HEADER: {
		unsigned v = (unsigned)b[10] | ((unsigned)b[11] << 8);
		if (v != 1) {
			char t[64];
			snprintf(t, sizeof t, "Unsupported simpleperf version: %u", v);
			sp_fatal(sp, t);
			return;
		}
		sp->state = SP_SIZE;
		sp->need = 4;
		break;
	}
	case SP_SIZE: {
		uint32_t size = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) |
				((uint32_t)b[3] << 24);
		if (size == 0) {
			sp->state = SP_DONE;
			return;
		}
		sp->state = SP_RECORD;
		sp->need = size;
		break;
	}
	case SP_RECORD:
		sp->sc->n_packets++;
		record(sp, b, sp->buf.len);
		sp->state = SP_SIZE;
		sp->need = 4;
		break;
	}
}

static void
sp_feed(void *self, const char *p, size_t n)
{
	struct sp *sp = self;
	uint64_t at = sp->total;
	sp->total += n;
	while (n && !sp->stop && sp->state != SP_DONE) {
		size_t want = sp->need - sp->buf.len, k = n < want ? n : want;
		if (!sp->buf.len)
			sp->off = at;
		tm_buf_add(&sp->buf, p, k);
		p += k;
		n -= k;
		at += k;
		if (sp->buf.len == sp->need) {
			unit(sp);
			sp->buf.len = 0;
		}
	}
}

static void
sp_finish(void *self)
{
	struct sp *sp = self;
	if (!sp->stop && sp->state != SP_DONE)
		sp_fatal(sp, "Unexpected end of simpleperf_proto file (ERR:tp-corrupt)");
}

/* The sniffer (simpleperf_proto_tokenizer.cc, SimpleperfProtoImporter::Sniff). */
bool
tm_sniff_simpleperf(struct tm_sniff_in *in)
{
	return tm_sniff_starts(in->d, in->n, "SIMPLEPERF");
}

enum tm_status
tm_scan_simpleperf(struct tm_stream *st, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
		   struct tm_error *err)
{
	struct sp sp;
	memset(&sp, 0, sizeof sp);
	sp.sc = sc;
	sp.ctl = ctl;
	sp.err = err;
	sp.status = TM_OK;
	sp.need = 12;
	tm_buf_init(&sp.buf);
	tm_scan_note_clock(sc, TM_CLOCK_MONOTONIC);
	struct tm_text_scanner ts = {&sp, sp_feed, sp_finish, &sp.status, &sp.total};
	enum tm_status rc = tm_scan_text(st, sc, ctl, err, &ts);
	tm_buf_fini(&sp.buf);
	return rc;
}

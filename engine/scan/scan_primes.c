/* SPDX-License-Identifier: MIT */
/*
 * primes scanner: a Primes trace (protos/third_party/primes/
 * primes_tracing.proto, one Trace message), as trace_processor's
 * PrimesTraceTokenizer reads it at the end of the file
 * (importers/primes/primes_trace_tokenizer.cc, OnPushDataToSorter): without
 * a start_time the import fails; each edge with a trace_start_offset is
 * one ConvertDefaultClockToTraceTime push (the file's private TRACE_FILE
 * clock, which a PIN moves) at start + offset (seconds * 1e9 + nanos
 * each), an edge without one counts primes_malformed_timestamp.
 */
#include <string.h>

#include "formats.h"
#include "scan.h"

struct pr {
	struct tm_scan *sc;
	const struct tm_scan_ctl *ctl;
};

/* ToNanos(seconds (int64), nanos (int32)), wrapping */
static int64_t
to_nanos(const uint8_t *m, size_t n)
{
	bool has;
	uint64_t s = m ? tm_pb_varint_field(m, m + n, 1, &has) : 0;
	uint64_t ns = m ? tm_pb_varint_field(m, m + n, 2, &has) : 0;
	return (int64_t)(s * 1000000000u + (uint64_t)(int64_t)(int32_t)(uint32_t)ns);
}

static void
pr_done(void *self, const uint8_t *d, size_t len)
{
	struct pr *pr = self;
	struct tm_scan *sc = pr->sc;
	const uint8_t *end = d + len;
	size_t sl = 0;
	bool any;
	const uint8_t *st = tm_pb_ld_field(d, end, 4, &sl, &any);
	if (!any) {
		tm_oplog_fatal(&sc->log, 0, "Primes Trace proto did not contain a start time.", len);
		sc->failed = true;
		return;
	}
	int64_t start = to_nanos(st, sl);
	const uint8_t *cur = d, *e;
	size_t el;
	while ((e = tm_pb_next_ld(&cur, end, 7, &el))) {
		size_t ol = 0;
		const uint8_t *off = tm_pb_ld_field(e, e + el, 2, &ol, &any);
		if (!any) {
			tm_oplog_stat(&sc->log, 0, TM_STAT_PRIMES_MALFORMED_TS, 1);
			continue;
		}
		int64_t ts = (int64_t)((uint64_t)start + (uint64_t)to_nanos(off, ol));
		struct tm_scan_event ev = {.ts = ts, .name = "edge", .name_len = 4, .phase = 'P',
					   .align = -1, .dur = -1};
		sc->n_packets++;
		tm_scan_event(sc, pr->ctl, &ev, (uint64_t)(e - d));
	}
}

/* The sniffer (primes_trace_tokenizer.cc, PrimesImporter::Sniff): the
 * first byte is Trace.id's tag, 0x09. */
bool
tm_sniff_primes(struct tm_sniff_in *in)
{
	return in->n > 0 && in->d[0] == 0x09;
}

enum tm_status
tm_scan_primes(struct tm_stream *st, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
	       struct tm_error *err)
{
	struct pr pr = {sc, ctl};
	return tm_scan_whole(st, sc, ctl, err, "primes trace", 0, pr_done, &pr);
}

/* SPDX-License-Identifier: MIT */
/*
 * bench_proto: the proto scanner's hand-written walker versus protobuf-c
 * unpacking, on a generated trace of ~40-byte TrackEvent packets.
 *   bench_proto [packets]     (default 5,000,000)
 * The walker runs with op-log runs on (as tracemerge check) and off; then
 * the same on ftrace bundles (64 events each, n events in all).
 * BENCH_WALKER_ONLY=1 skips protobuf-c; BENCH_RUNS_ONLY=1 skips runs-off;
 * Times are the thread's CPU seconds (best of runs), not wall clock.
 * BENCH_DUMP=FILE also writes the traces (FILE, FILE.ftrace); BENCH_TRACES=te or
 * ftrace walks only that one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scan.h"
#include "trace.pb-c.h"

struct mem {
	const uint8_t *p;
	size_t n, pos;
};

static enum tm_status
mem_next(void *ctx, const uint8_t **p, size_t *n, struct tm_error *err)
{
	(void)err;
	struct mem *m = ctx;
	size_t k = m->n - m->pos;
	if (k > (1u << 20))
		k = 1u << 20;
	*p = m->p + m->pos;
	*n = k;
	m->pos += k;
	return TM_OK;
}

/* CPU time of this thread, not wall time: on a shared box a neighbour's
 * load stretches wall time, hardly the CPU seconds a scan needs. */
static double
now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint8_t *
put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Scan buf three times per op-log mode; print the best.  As tracemerge
 * check scans (session.c: runs on without keep_events), then with the plain
 * op log. */
static int
walk(const char *what, const uint8_t *buf, size_t len, size_t n, const char *unit)
{
	for (int runs = 1; runs >= 0; runs--) {
		double best = 1e9;
		for (int r = 0; r < 3; r++) {
			struct tm_scan sc;
			struct tm_error err;
			struct tm_scan_ctl ctl = {0};
			struct mem m = {buf, len, 0};
			tm_scan_init(&sc, TM_FMT_PROTO);
			sc.log.use_runs = runs;
			double t = now();
			if (tm_scan_proto_blocks(mem_next, &m, &sc, &ctl, &err) != TM_OK)
				return 1;
			tm_oplog_finish(&sc.log);
			t = now() - t;
			if (t < best)
				best = t;
			if (r == 0)
				printf("%s: %llu packets, %llu events, op log %zu bytes%s\n", what,
				       (unsigned long long)sc.n_packets,
				       (unsigned long long)sc.n_events, sc.log.len,
				       runs ? " (runs)" : "");
			tm_scan_fini(&sc);
		}
		printf("%s (scan_proto, ops emitted, runs %s): %.3f CPU s  %.2f GB/CPU-s  "
		       "%.1f M %s/CPU-s\n",
		       what, runs ? "on " : "off", best, (double)len / best / 1e9,
		       (double)n / best / 1e6, unit);
		if (getenv("BENCH_RUNS_ONLY"))
			break;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
	size_t cap = n * 48 + 4096, len = 0;
	uint8_t *buf = malloc(cap);
	uint8_t tmp[256];
	for (size_t i = 0; i < n; i++) {
		Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
		Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
		p.has_timestamp = true;
		p.timestamp = 1000000000ULL + i * 1000;
		p.has_trusted_packet_sequence_id = true;
		p.trusted_packet_sequence_id = 1 + (uint32_t)(i % 4);
		p.has_sequence_flags = true;
		p.sequence_flags = i < 4 ? 1 : 2;
		te.has_type = true;
		te.type = (i & 1) ? 2 : 1;
		te.has_track_uuid = true;
		te.track_uuid = 0x1234567 + i % 4;
		te.has_name_iid = true;
		te.name_iid = 1 + i % 16;
		uint64_t cats[1] = {3};
		te.n_category_iids = 1;
		te.category_iids = cats;
		te.has_counter_value = (i % 7) == 0;
		te.counter_value = 42;
		p.track_event = &te;
		size_t sz = perfetto__protos__trace_packet__pack(&p, tmp);
		buf[len++] = 0x0a;
		buf[len++] = (uint8_t)sz; /* < 128 */
		memcpy(buf + len, tmp, sz);
		len += sz;
	}
	printf("trace: %zu packets, %zu bytes, %.1f B/packet\n", n, len, (double)len / (double)n);
	if (getenv("BENCH_DUMP")) { /* write the trace (for differential checks) */
		FILE *f = fopen(getenv("BENCH_DUMP"), "wb");
		if (!f || fwrite(buf, 1, len, f) != len || fclose(f))
			return 1;
	}

	const char *only = getenv("BENCH_TRACES"); /* "te" or "ftrace"; default both */
	if ((!only || !strcmp(only, "te")) && walk("walker", buf, len, n, "packets"))
		return 1;

	/* ftrace: bundles of 64 sched_switch-sized events on 4 cpus, no packet ts */
	size_t nb = n / 64 ? n / 64 : 1, flen = 0;
	uint8_t *fbuf = malloc(nb * (64 * 40 + 32));
	uint64_t fts = 1000000000;
	for (size_t i = 0; i < nb; i++) {
		uint8_t bundle[64 * 40 + 16], *q = bundle;
		*q++ = 0x08; /* cpu */
		*q++ = (uint8_t)(i % 4);
		for (int e = 0; e < 64; e++) {
			uint8_t ev[40], *r = ev;
			*r++ = 0x08; /* timestamp */
			fts += 1 + (i * 64 + (size_t)e) % 5000;
			r = put_varint(r, fts);
			*r++ = 0x10; /* pid */
			r = put_varint(r, 1000 + (uint64_t)e);
			*r++ = 0x22; /* sched_switch (4) */
			*r++ = 14;
			memcpy(r, "\x0a\x04comm\x10\x05\x2a\x04next", 14);
			r += 14;
			*q++ = 0x12; /* event (2) */
			*q++ = (uint8_t)(r - ev);
			memcpy(q, ev, (size_t)(r - ev));
			q += r - ev;
		}
		size_t bl = (size_t)(q - bundle);
		uint8_t hdr[16], *h = hdr;
		*h++ = 0x0a; /* ftrace_events (1) */
		h = put_varint(h, bl);
		size_t pl = (size_t)(h - hdr) + bl + 2;
		fbuf[flen++] = 0x0a;
		flen = (size_t)(put_varint(fbuf + flen, pl) - fbuf);
		memcpy(fbuf + flen, hdr, (size_t)(h - hdr));
		flen += (size_t)(h - hdr);
		memcpy(fbuf + flen, bundle, bl);
		flen += bl;
		fbuf[flen++] = 0x50; /* trusted_packet_sequence_id */
		fbuf[flen++] = 7;
	}
	printf("ftrace trace: %zu bundles of 64 events, %zu bytes, %.1f B/event\n", nb, flen,
	       (double)flen / (double)(nb * 64));
	if (getenv("BENCH_DUMP")) { /* FILE.ftrace */
		char path[4096];
		snprintf(path, sizeof path, "%s.ftrace", getenv("BENCH_DUMP"));
		FILE *f = fopen(path, "wb");
		if (!f || fwrite(fbuf, 1, flen, f) != flen || fclose(f))
			return 1;
	}
	if ((!only || !strcmp(only, "ftrace")) &&
	    walk("ftrace walker", fbuf, flen, nb * 64, "events"))
		return 1;
	free(fbuf);

	if (getenv("BENCH_WALKER_ONLY"))
		return 0;
	double best = 1e9;
	for (int r = 0; r < 3; r++) {
		double t = now();
		size_t pos = 0, got = 0;
		while (pos < len) {
			size_t sz = buf[pos + 1];
			Perfetto__Protos__TracePacket *p =
				perfetto__protos__trace_packet__unpack(NULL, sz, buf + pos + 2);
			if (p && p->has_timestamp)
				got++;
			perfetto__protos__trace_packet__free_unpacked(p, NULL);
			pos += 2 + sz;
		}
		t = now() - t;
		if (t < best)
			best = t;
		if (got != n)
			return 1;
	}
	printf("protobuf-c unpack per packet:     %.3f CPU s  %.2f GB/CPU-s  "
	       "%.1f M packets/CPU-s\n",
	       best,
	       (double)len / best / 1e9, (double)n / best / 1e6);
	free(buf);
	return 0;
}

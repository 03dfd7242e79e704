/* SPDX-License-Identifier: MIT */
/*
 * Benchmark helper for `make bench`:
 *   bench_tm gen-proto OUT MB     synthetic Perfetto trace: a BOOTTIME/MONOTONIC
 *                                 snapshot, then TrackEvent slices on 4 sequences
 *   bench_tm gen-json OUT MB      Chrome JSON with X events
 *   bench_tm reeval N INPUT...    scan once, then time N evaluations, each after
 *                                 an offset edit, and print the median in µs
 * The generator writes the wire format by hand (fixed seed), so the bytes are
 * the same on every run.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracemerge.h"

static void
put_varint(FILE *f, uint64_t v)
{
	while (v >= 0x80) {
		fputc((int)(v | 0x80), f);
		v >>= 7;
	}
	fputc((int)v, f);
}

static size_t
varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint8_t *
enc_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static void
packet(FILE *f, const uint8_t *body, size_t n)
{
	fputc(0x0a, f);
	put_varint(f, n);
	fwrite(body, 1, n, f);
}

static int
gen_proto(const char *out, uint64_t mb)
{
	FILE *f = fopen(out, "wb");
	if (!f)
		return 1;
	uint8_t b[256], *p;
	/* clock_snapshot {clocks{6, 1e9} clocks{3, 5e8}} */
	uint8_t c1[16], c2[16], *q;
	q = c1;
	*q++ = 0x08;
	q = enc_varint(q, 6);
	*q++ = 0x10;
	q = enc_varint(q, 1000000000);
	size_t n1 = (size_t)(q - c1);
	q = c2;
	*q++ = 0x08;
	q = enc_varint(q, 3);
	*q++ = 0x10;
	q = enc_varint(q, 500000000);
	size_t n2 = (size_t)(q - c2);
	uint8_t snap[64];
	q = snap;
	*q++ = 0x0a;
	*q++ = (uint8_t)n1;
	memcpy(q, c1, n1);
	q += n1;
	*q++ = 0x0a;
	*q++ = (uint8_t)n2;
	memcpy(q, c2, n2);
	q += n2;
	p = b;
	*p++ = 0x32; /* field 6 LD */
	*p++ = (uint8_t)(q - snap);
	memcpy(p, snap, (size_t)(q - snap));
	p += q - snap;
	packet(f, b, (size_t)(p - b));
	uint64_t limit = mb << 20, written = 0, ts = 1000000000;
	uint32_t seq = 1;
	while (written < limit) {
		for (int be = 0; be < 2; be++) {
			uint8_t te[32], *t = te;
			*t++ = 0x48; /* type = 9 */
			*t++ = be ? 2 : 1;
			*t++ = 0x58; /* track_uuid = 11 */
			t = enc_varint(t, 100 + seq);
			if (!be) {
				*t++ = 0xba; /* name = 23 LD: tag (23<<3|2)=186 -> 0xba 0x01 */
				*t++ = 0x01;
				*t++ = 5;
				memcpy(t, "slice", 5);
				t += 5;
			}
			p = b;
			*p++ = 0x40; /* timestamp = 8 */
			p = enc_varint(p, ts);
			*p++ = 0x50; /* trusted_packet_sequence_id = 10 */
			p = enc_varint(p, seq);
			*p++ = 0x5a; /* track_event = 11 LD */
			*p++ = (uint8_t)(t - te);
			memcpy(p, te, (size_t)(t - te));
			p += t - te;
			packet(f, b, (size_t)(p - b));
			written += 1 + varint_len((uint64_t)(p - b)) + (size_t)(p - b);
			ts += 1000;
		}
		seq = seq % 4 + 1;
	}
	return fclose(f) != 0;
}

static int
gen_json(const char *out, uint64_t mb)
{
	FILE *f = fopen(out, "wb");
	if (!f)
		return 1;
	fputs("{\"traceEvents\":[\n", f);
	uint64_t limit = mb << 20, written = 0;
	for (uint64_t i = 0; written < limit; i++) {
		int n = fprintf(f,
				"%s{\"name\":\"work\",\"cat\":\"app\",\"ph\":\"X\",\"ts\":%" PRIu64
				".%03u,\"dur\":12.5,\"pid\":%u,\"tid\":%u,\"args\":{\"i\":%" PRIu64 "}}\n",
				i ? "," : "", 1000 + i * 3, (unsigned)(i % 1000), (unsigned)(1 + i % 7),
				(unsigned)(1 + i % 13), i);
		written += (uint64_t)n;
	}
	fputs("]}\n", f);
	return fclose(f) != 0;
}

static double
now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int
reeval(int n, const char *const *paths, size_t n_paths)
{
	struct tm_session *s;
	struct tm_error e;
	if (tm_session_open(&s, paths, n_paths, NULL, &e) != TM_OK ||
	    tm_session_scan(s, SIZE_MAX, NULL, &e) != TM_OK) {
		fprintf(stderr, "bench_tm: %s\n", e.msg);
		return 1;
	}
	const struct tm_member *m1 = tm_session_member(s, n_paths > 1 ? 1 : 0);
	const struct tm_member *m2 = tm_session_member(s, n_paths > 1 ? 2 : 0);
	double *t = calloc((size_t)n, sizeof *t);
	uint64_t dropped = 0;
	for (int i = 0; i < n; i++) {
		struct tm_manifest m;
		tm_manifest_init(&m);
		if (n_paths > 1 && m1->name && m2 && m2->name) {
			(void)tm_manifest_file_get(&m, m1->name, true);
			tm_manifest_set_machine(&m, m2->name, "other");
			tm_manifest_set_clocks(&m, m2->name, TM_CLOCK_BOOTTIME, m1->name,
					       TM_CLOCK_BOOTTIME, NULL, (int64_t)(i % 7) * 1000000 - 3000000);
		}
		struct tm_report *r;
		double a = now_us();
		if (tm_session_evaluate(s, &m, &r, &e) != TM_OK) {
			fprintf(stderr, "bench_tm: %s\n", e.msg);
			return 1;
		}
		t[i] = now_us() - a;
		if (r->error) {
			fprintf(stderr, "bench_tm: the evaluated manifest fails: %s\n", r->error);
			return 1;
		}
		dropped += r->dropped;
		tm_report_free(r);
		tm_manifest_fini(&m);
	}
	qsort(t, (size_t)n, sizeof *t, cmp_d);
	printf("%.1f %.1f %" PRIu64 "\n", t[n / 2], t[0], dropped);
	free(t);
	tm_session_close(s);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "gen-proto"))
		return gen_proto(argv[2], strtoull(argv[3], NULL, 10));
	if (argc >= 4 && !strcmp(argv[1], "gen-json"))
		return gen_json(argv[2], strtoull(argv[3], NULL, 10));
	if (argc >= 4 && !strcmp(argv[1], "reeval"))
		return reeval(atoi(argv[2]), (const char *const *)argv + 3, (size_t)argc - 3);
	fprintf(stderr, "usage: bench_tm gen-proto|gen-json OUT MB | reeval N INPUT...\n");
	return 64;
}

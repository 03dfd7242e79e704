/* SPDX-License-Identifier: MIT */
/*
 * Benchmark helper for `make bench`:
 *   bench_tm gen-proto OUT MB     synthetic Perfetto trace: a BOOTTIME/MONOTONIC
 *                                 snapshot, then TrackEvent slices on 4 sequences
 *   bench_tm gen-json OUT MB      Chrome JSON with X events
 *   bench_tm gen-chrome OUT MB    Chrome JSON shaped like a DevTools / chrome://tracing
 *                                 export: a bare array, keys in sorted order, long
 *                                 names, "args" objects (nested, with URLs and an
 *                                 escape now and then), X with dur/tdur/tts, B/E,
 *                                 instants, async b/e with id2, counters, M metadata
 *   bench_tm gen-shape SHAPE OUT MB  one proto shape of issue 10's table:
 *                                 te20, te37 (TrackEvent packets of ~20/37 B),
 *                                 interned (interned_data in every packet),
 *                                 seqs (10,000 sequences), ftrace (sched_switch
 *                                 bundles), compact (ftrace compact_sched),
 *                                 unmatched (TrackEvent slices on 8 tracks,
 *                                 one E in three without its B, as a ring
 *                                 buffer that lost the opening Bs leaves them),
 *                                 clears (not one of the table's: 4 sequences,
 *                                 each cleared every 1000 of its packets and
 *                                 the same 500 names interned again, as
 *                                 Chrome's periodic incremental-state clears do)
 *   bench_tm walk FILE            the baseline: a plain varint walker over the
 *                                 top-level packets and their fields (mmap)
 *   bench_tm gen-members DIR N MB N proto traces of MB/N each (DIR/m00000.pftrace...);
 *                                 MB may be KiB with a k suffix (160000k)
 *   bench_tm gen-systrace OUT MB  ftrace text: sched_switch and tracing_mark_write
 *                                 B/E lines from 8 CPUs
 *   bench_tm reeval N INPUT...    scan once, then time N evaluations, each after
 *                                 an offset edit of the second input against
 *                                 the first (on the first's timeline, both
 *                                 signs); prints the median and best wall µs,
 *                                 the report's dropped count summed over the
 *                                 N (the three stats util merge reports: not
 *                                 events dropped otherwise, such as
 *                                 track_event_invalid_timestamp), then the
 *                                 median and best CPU µs of the process (all
 *                                 threads) and the events of all inputs
 *   bench_tm reeval-events N INPUT...  the same with per-event detail kept
 *                                 (keep_events: check --events), each
 *                                 evaluation with its events list
 *   bench_tm reeval-wb N INPUT...  details kept, each evaluation the numbers
 *                                 only: what the workbench does per edit
 *                                 under 16 MiB (its events list follows on
 *                                 a thread of its own)
 *   bench_tm reeval-wb-list N INPUT...  that thread's evaluation: the
 *                                 events list of the dropped events only
 *                                 (dropped for any reason: the third
 *                                 figure, the three stats, may be 0 while
 *                                 the list holds every event the offset put
 *                                 before zero as track_event_invalid_timestamp)
 * The generator writes the wire format by hand (fixed seed), so the bytes are
 * the same on every run.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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
gen_proto_at(const char *out, uint64_t limit, uint64_t ts0)
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
	uint64_t written = 0, ts = ts0;
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
gen_proto(const char *out, uint64_t mb)
{
	return gen_proto_at(out, mb << 20, 1000000000);
}

/* n traces of about total / n bytes each, DIR/m00000.pftrace ..., each
 * starting later than the one before (no two alike). */
static int
gen_members(const char *dir, unsigned n, uint64_t total)
{
	char path[4096];
	uint64_t each = total / (n ? n : 1);
	for (unsigned i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/m%05u.pftrace", dir, i);
		if (gen_proto_at(path, each, 1000000000 + (uint64_t)i * 7777777))
			return 1;
	}
	return 0;
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

/* Chrome JSON as DevTools and chrome://tracing export it (see the usage). */
static int
gen_chrome(const char *out, uint64_t mb)
{
	static const char *const names[] = {
		"ThreadControllerImpl::RunTask", "RenderFrameImpl::didCommitProvisionalLoad",
		"v8.compile", "FunctionCall", "EventDispatch", "UpdateLayoutTree", "Paint",
		"MojoURLLoaderClient::OnReceiveResponse", "V8.GCScavenger",
		"SimpleWatcher::OnHandleReady", "ScheduledAction::execute", "Layout",
	};
	static const char *const cats[] = {
		"toplevel", "devtools.timeline", "v8,devtools.timeline", "blink,loading",
		"disabled-by-default-devtools.timeline", "mojom",
	};
	FILE *f = fopen(out, "wb");
	if (!f)
		return 1;
	uint64_t limit = mb << 20, written = 0, ts = 384726150123ull, x = 88172645463325252ull;
	written += (uint64_t)fprintf(f, "[");
	for (unsigned p = 0; p < 4; p++)
		written += (uint64_t)fprintf(
			f,
			"{\"args\":{\"name\":\"Renderer\"},\"cat\":\"__metadata\",\"name\":\"process_name\","
			"\"ph\":\"M\",\"pid\":%u,\"tid\":0,\"ts\":0},\n"
			"{\"args\":{\"name\":\"CrRendererMain\"},\"cat\":\"__metadata\","
			"\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"ts\":0},\n",
			31000 + p, 31000 + p, 1 + p);
	for (uint64_t i = 0; written < limit; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		unsigned r = (unsigned)(x % 100), pid = 31000 + (unsigned)(x >> 20) % 4,
			 tid = 1 + (unsigned)(x >> 24) % 9;
		const char *nm = names[(x >> 28) % 12], *cat = cats[(x >> 32) % 6];
		unsigned dur = (unsigned)(x >> 36) % 5000, sz = (unsigned)(x >> 40) % 8;
		int n;
		ts += 1 + (x >> 44) % 40;
		if (r < 55)
			n = fprintf(f,
				    "{\"args\":{\"data\":{\"frame\":\"6F1B2C8D%08X\",\"url\":"
				    "\"https:\\/\\/example.com\\/app\\/bundle.%u.js\",\"lineNumber\":%u,"
				    "\"columnNumber\":%u,\"stackTrace\":[%u,%u,%u]%s}},\"cat\":\"%s\","
				    "\"dur\":%u,\"name\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tdur\":%u,"
				    "\"tid\":%u,\"ts\":%" PRIu64 ",\"tts\":%" PRIu64 "},\n",
				    (unsigned)(x >> 8), sz, dur * 7, sz * 13, dur, sz, pid,
				    sz > 5 ? ",\"note\":\"say \\\"hi\\\"\\n\"" : "", cat, dur, nm, pid,
				    dur / 2, tid, ts, ts / 3);
		else if (r < 75)
			n = fprintf(f,
				    "{\"args\":{},\"cat\":\"%s\",\"name\":\"%s\",\"ph\":\"B\",\"pid\":%u,"
				    "\"tid\":%u,\"ts\":%" PRIu64 "},\n"
				    "{\"args\":{},\"cat\":\"%s\",\"name\":\"%s\",\"ph\":\"E\",\"pid\":%u,"
				    "\"tid\":%u,\"ts\":%" PRIu64 "},\n",
				    cat, nm, pid, tid, ts, cat, nm, pid, tid, ts + dur);
		else if (r < 85)
			n = fprintf(f,
				    "{\"args\":{\"data\":{\"type\":\"click\"}},\"cat\":\"%s\",\"name\":"
				    "\"%s\",\"ph\":\"I\",\"pid\":%u,\"s\":\"t\",\"tid\":%u,\"ts\":%" PRIu64
				    ",\"tts\":%" PRIu64 "},\n",
				    cat, nm, pid, tid, ts, ts / 3);
		else if (r < 93)
			n = fprintf(f,
				    "{\"args\":{},\"cat\":\"loading\",\"id2\":{\"local\":\"0x%x\"},"
				    "\"name\":\"%s\",\"ph\":\"%c\",\"pid\":%u,\"scope\":\"blink\","
				    "\"tid\":%u,\"ts\":%" PRIu64 "},\n",
				    (unsigned)(x >> 12) % 64, nm, r & 1 ? 'b' : 'e', pid, tid, ts);
		else
			n = fprintf(f,
				    "{\"args\":{\"jsHeapSizeUsed\":%u.%u,\"documents\":%u},\"cat\":"
				    "\"disabled-by-default-devtools.timeline\",\"name\":\"UpdateCounters\","
				    "\"ph\":\"C\",\"pid\":%u,\"tid\":%u,\"ts\":%" PRIu64 "},\n",
				    dur * 1000, sz, sz, pid, tid, ts);
		written += (uint64_t)n;
	}
	/* a final metadata event closes the array (no trailing comma) */
	fprintf(f, "{\"args\":{\"name\":\"Browser\"},\"cat\":\"__metadata\",\"name\":"
		   "\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"ts\":0}]\n");
	return fclose(f) != 0;
}

/* ---- proto shapes ---- */

struct wbuf {
	uint8_t *p;
	size_t n, cap;
};

static void
w_bytes(struct wbuf *w, const void *d, size_t n)
{
	if (w->n + n > w->cap) {
		w->cap = (w->n + n) * 2 + 256;
		w->p = realloc(w->p, w->cap);
		if (!w->p)
			abort();
	}
	memcpy(w->p + w->n, d, n);
	w->n += n;
}

static void
w_var(struct wbuf *w, uint64_t v)
{
	uint8_t b[10];
	w_bytes(w, b, (size_t)(enc_varint(b, v) - b));
}

static void
w_fv(struct wbuf *w, uint32_t id, uint64_t v)
{
	w_var(w, (uint64_t)id << 3);
	w_var(w, v);
}

static void
w_fl(struct wbuf *w, uint32_t id, const void *d, size_t n)
{
	w_var(w, (uint64_t)id << 3 | 2);
	w_var(w, n);
	w_bytes(w, d, n);
}

static void
w_sub(struct wbuf *w, uint32_t id, struct wbuf *sub)
{
	w_fl(w, id, sub->p, sub->n);
	sub->n = 0;
}

/* xorshift: the same bytes on every run */
static uint64_t rng = 88172645463325252ULL;
static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static int
gen_shape(const char *shape, const char *out, uint64_t mb)
{
	FILE *f = fopen(out, "wb");
	if (!f)
		return 1;
	struct wbuf o = {0}, pk = {0}, te = {0}, sub = {0}, sub2 = {0}, col = {0};
	uint64_t limit = mb << 20, written = 0, ts = 1000000000, i = 0;
	/* one BOOTTIME/MONOTONIC snapshot first */
	w_fv(&sub, 1, 6);
	w_fv(&sub, 2, ts);
	w_sub(&sub2, 1, &sub);
	w_fv(&sub, 1, 3);
	w_fv(&sub, 2, ts / 2);
	w_sub(&sub2, 1, &sub);
	w_sub(&pk, 6, &sub2);
	w_sub(&o, 1, &pk);
	int te20 = !strcmp(shape, "te20"), te37 = !strcmp(shape, "te37");
	int interned = !strcmp(shape, "interned"), seqs = !strcmp(shape, "seqs");
	int ftrace = !strcmp(shape, "ftrace"), compact = !strcmp(shape, "compact");
	int unmatched = !strcmp(shape, "unmatched"), clears = !strcmp(shape, "clears");
	if (!te20 && !te37 && !interned && !seqs && !ftrace && !compact && !unmatched && !clears) {
		fprintf(stderr, "bench_tm: unknown shape %s\n", shape);
		fclose(f);
		return 64;
	}
	static uint8_t seen[10000];
	while (written < limit) {
		if (clears) {
			/* per sequence: a clear with 500 names, then 999 slices */
			uint32_t seq = 1 + (uint32_t)(i % 4), c = (uint32_t)((i / 4) % 1000);
			w_fv(&te, 9, (i / 4) % 2 ? 2 : 1);
			w_fv(&te, 11, 100 + seq);
			w_fv(&te, 10, 1 + (i / 4) % 500);
			w_fv(&pk, 8, ts);
			w_fv(&pk, 10, seq);
			w_fv(&pk, 13, c ? 2 : 1 | 2);
			if (!c) {
				for (unsigned k = 0; k < 500; k++) {
					char nm[32];
					int n = snprintf(nm, sizeof nm, "clears_event_name_%03u", k);
					w_fv(&sub, 1, 1 + k);
					w_fl(&sub, 2, nm, (size_t)n);
					w_sub(&sub2, 2, &sub);
				}
				w_sub(&pk, 12, &sub2);
			}
			w_sub(&pk, 11, &te);
			w_sub(&o, 1, &pk);
			ts += 1000 + rnd(100);
		} else if (unmatched) {
			/* per track: B, E, E (the second E has no B) */
			uint32_t trk = (uint32_t)(i % 8), c = (uint32_t)((i / 8) % 3);
			w_fv(&te, 9, c == 0 ? 1 : 2);
			w_fv(&te, 11, 100 + trk);
			if (c == 0)
				w_fl(&te, 23, "slice", 5);
			w_fv(&pk, 8, ts);
			w_fv(&pk, 10, 1 + trk % 4);
			w_sub(&pk, 11, &te);
			w_sub(&o, 1, &pk);
			ts += 1000 + rnd(100);
		} else if (te20 || te37 || interned || seqs) {
			uint32_t seq = seqs ? 1 + (uint32_t)(i % 10000) : 1 + (uint32_t)(i % 4);
			int be = (int)(i / (seqs ? 10000 : 4)) % 2;
			w_fv(&te, 9, be ? 2 : 1);                 /* type */
			w_fv(&te, 11, 100 + seq % 8);             /* track_uuid */
			if (te37) {
				w_fv(&te, 3, 1 + rnd(8));         /* category_iids */
				w_fv(&te, 10, 1 + rnd(100));      /* name_iid */
				w_fl(&te, 22, "renderer", 8);     /* categories */
				w_fv(&sub, 1, 1 + rnd(20));       /* debug annotation name_iid */
				w_fv(&sub, 4, rnd(100000));       /* int_value */
				w_sub(&te, 4, &sub);
			} else if (interned) {
				w_fv(&te, 10, 1 + i % 64);
			} else if (!be) {
				w_fl(&te, 23, "slice", 5);
			}
			w_fv(&pk, 8, ts);
			w_fv(&pk, 10, seq);
			if (interned || seqs) {
				uint32_t k = seq - 1;
				w_fv(&pk, 13, seen[k] ? 2 : 1 | 2);
				seen[k] = 1;
			}
			if (interned) {
				char nm[32];
				int n = snprintf(nm, sizeof nm, "event_name_%02u", (unsigned)(i % 64));
				w_fv(&sub, 1, 1 + i % 64);
				w_fl(&sub, 2, nm, (size_t)n);
				w_sub(&sub2, 2, &sub);
				n = snprintf(nm, sizeof nm, "category_%02u", (unsigned)(i % 8));
				w_fv(&sub, 1, 1 + i % 8);
				w_fl(&sub, 2, nm, (size_t)n);
				w_sub(&sub2, 1, &sub);
				w_sub(&pk, 12, &sub2);
			}
			w_sub(&pk, 11, &te);
			w_sub(&o, 1, &pk);
			ts += 1000 + rnd(100);
		} else if (ftrace) {
			/* one bundle of 64 sched_switch events on cpu i % 4 */
			w_fv(&sub2, 1, i % 4);
			for (int k = 0; k < 64; k++) {
				w_fl(&sub, 1, "kworker/0:1", 11);
				w_fv(&sub, 2, 100 + rnd(1000));
				w_fv(&sub, 3, 120);
				w_fv(&sub, 4, rnd(3));
				w_fl(&sub, 5, "surfaceflinger", 14);
				w_fv(&sub, 6, 100 + rnd(1000));
				w_fv(&sub, 7, 120);
				w_fv(&te, 1, ts + (uint64_t)k * 2000);
				w_fv(&te, 2, 100 + rnd(1000));
				w_sub(&te, 4, &sub);
				w_sub(&sub2, 2, &te);
			}
			w_sub(&pk, 1, &sub2);
			w_fv(&pk, 10, 1 + i % 4);
			w_sub(&o, 1, &pk);
			if (i % 4 == 3)
				ts += 64 * 2000;
		} else {
			/* compact_sched: 500 switches, 150 wakings on cpu i % 4 */
			for (int part = 0; part < 2; part++) {
				int m = part ? 150 : 500;
				uint64_t at = ts + (i % 4) * 13;
				for (int k = 0; k < m; k++)
					w_var(&col, k ? 1000 + rnd(2000) : at);
				w_sub(&sub, part ? 7 : 1, &col);
				for (int k = 0; k < m; k++)
					w_var(&col, part ? 100 + rnd(3000) : rnd(3));
				w_sub(&sub, part ? 8 : 2, &col);
				for (int k = 0; k < m; k++)
					w_var(&col, part ? rnd(4) : 100 + rnd(3000));
				w_sub(&sub, part ? 9 : 3, &col);
				for (int k = 0; k < m; k++)
					w_var(&col, 100 + rnd(40));
				w_sub(&sub, part ? 10 : 4, &col);
				for (int k = 0; k < m; k++)
					w_var(&col, rnd(16));
				w_sub(&sub, part ? 11 : 6, &col);
			}
			for (int k = 0; k < 16; k++) {
				char nm[24];
				int n = snprintf(nm, sizeof nm, "thread-%d", k);
				w_fl(&sub, 5, nm, (size_t)n);
			}
			w_fv(&sub2, 1, i % 4);
			w_sub(&sub2, 4, &sub);
			w_sub(&pk, 1, &sub2);
			w_fv(&pk, 10, 1 + i % 4);
			w_sub(&o, 1, &pk);
			if (i % 4 == 3)
				ts += 500 * 2000;
		}
		i++;
		if (o.n >= (1u << 20) || written + o.n >= limit) {
			if (fwrite(o.p, 1, o.n, f) != o.n)
				return 1;
			written += o.n;
			o.n = 0;
		}
	}
	free(o.p);
	free(pk.p);
	free(te.p);
	free(sub.p);
	free(sub2.p);
	free(col.p);
	return fclose(f) != 0;
}

/* The baseline walker: every top-level packet, and depth first every field
 * of every message in it (a length-delimited field is walked as a message
 * when it parses as one: packed arrays and strings mostly do not, and cost
 * the attempt), byte-loop varints, nothing recorded but a checksum. */
static const uint8_t *
walk_var(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;
	for (unsigned sh = 0; p < end && sh < 64; sh += 7) {
		uint8_t b = *p++;
		r |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			*v = r;
			return p;
		}
	}
	return NULL;
}

static uint64_t walk_fields, walk_sum;

static bool
walk_msg(const uint8_t *q, const uint8_t *qe, int depth)
{
	while (q < qe) {
		uint64_t ft, v = 0;
		if (!(q = walk_var(q, qe, &ft)) || ft < 8)
			return false;
		walk_fields++;
		switch (ft & 7) {
		case 0:
			q = walk_var(q, qe, &v);
			walk_sum += v;
			break;
		case 2:
			q = walk_var(q, qe, &v);
			if (!q || v > (uint64_t)(qe - q))
				return false;
			if (depth < 5)
				(void)walk_msg(q, q + v, depth + 1);
			q += v;
			break;
		case 1:
			q = qe - q >= 8 ? q + 8 : NULL;
			break;
		case 5:
			q = qe - q >= 4 ? q + 4 : NULL;
			break;
		default:
			return false;
		}
		if (!q)
			return false;
	}
	return true;
}

static int
walk(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		return 1;
	size_t n = (size_t)st.st_size;
	const uint8_t *base = n ? mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
	if (n && base == MAP_FAILED)
		return 1;
	const uint8_t *p = base, *end = base + n;
	uint64_t packets = 0;
	while (p && p < end) {
		uint64_t tag, len;
		if (!(p = walk_var(p, end, &tag)) || !(p = walk_var(p, end, &len)) ||
		    len > (uint64_t)(end - p))
			break;
		const uint8_t *q = p;
		p += len;
		packets++;
		(void)walk_msg(q, p, 1);
	}
	printf("%" PRIu64 " packets %" PRIu64 " fields %" PRIu64 "\n", packets, walk_fields, walk_sum);
	return 0;
}

static int
gen_systrace(const char *out, uint64_t mb)
{
	FILE *f = fopen(out, "wb");
	if (!f)
		return 1;
	fputs("# tracer: nop\n#\n", f);
	uint64_t limit = mb << 20, written = 0;
	for (uint64_t i = 0; written < limit; i++) {
		unsigned pid = 100 + (unsigned)(i % 37), cpu = (unsigned)(i % 8);
		uint64_t us = 1000000 + i * 7;
		int n;
		if (i % 3 == 0)
			n = fprintf(f,
				    "          worker-%u   (  %u) [%03u] d..3 %" PRIu64 ".%06" PRIu64
				    ": sched_switch: prev_comm=worker prev_pid=%u prev_prio=120 "
				    "prev_state=S ==> next_comm=worker next_pid=%u next_prio=120\n",
				    pid, pid, cpu, us / 1000000, us % 1000000, pid, pid + 1);
		else
			n = fprintf(f,
				    "          worker-%u   (  %u) [%03u] ...1 %" PRIu64 ".%06" PRIu64
				    ": tracing_mark_write: %s\n",
				    pid, pid, cpu, us / 1000000, us % 1000000,
				    i % 3 == 1 ? "B|100|work" : "E|100");
		written += (uint64_t)n;
	}
	return fclose(f) != 0;
}

static double
clock_us(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static double
now_us(void)
{
	return clock_us(CLOCK_MONOTONIC);
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The manifest path of an input: a loose file is named by its base name. */
static const char *
manifest_name(const struct tm_member *m)
{
	if (!m || m->name)
		return m ? m->name : NULL;
	const char *p = m->source_path, *sl = p ? strrchr(p, '/') : NULL;
	return sl ? sl + 1 : p;
}

/* The reeval commands: whether the session keeps per-event detail, and
 * what each evaluation asks for. */
static const struct reeval_mode {
	const char *cmd;
	bool keep_events;
	struct tm_eval_opts eo;
} reeval_modes[] = {
	/* no details kept */
	{"reeval", false, {0}},
	/* the events list per edit: check --events */
	{"reeval-events", true, {.events = true}},
	/* the numbers per edit: what the workbench evaluates on an edit (its
	 * events list follows on a thread of its own) */
	{"reeval-wb", true, {0}},
	/* that thread's evaluation: the dropped events listed */
	{"reeval-wb-list", true, {.events = true, .dropped_only = true}},
};

static int
reeval(int n, const struct reeval_mode *md, const char *const *paths, size_t n_paths)
{
	struct tm_session *s;
	struct tm_error e;
	struct tm_session_opts so = {.keep_events = md->keep_events};
	if (n < 1 || n_paths < 1) {
		fprintf(stderr, "bench_tm: reeval N INPUT...\n");
		return 64;
	}
	if (tm_session_open(&s, paths, n_paths, &so, &e) != TM_OK ||
	    tm_session_scan(s, SIZE_MAX, NULL, &e) != TM_OK) {
		fprintf(stderr, "bench_tm: %s\n", e.msg);
		return 1;
	}
	/* the second input moves against the first (member 0 is the loose
	 * inputs' virtual root) */
	const struct tm_member *m1 = tm_session_member(s, n_paths > 1 ? 1 : 0);
	const struct tm_member *m2 = tm_session_member(s, n_paths > 1 ? 2 : 0);
	const char *n1 = manifest_name(m1), *n2 = manifest_name(m2);
	double *t = calloc((size_t)n, sizeof *t), *c = calloc((size_t)n, sizeof *c);
	uint64_t dropped = 0, events = 0;
	/* with details kept (the edits section): the negative offsets put
	 * about half of the second input before zero, so that the events list
	 * has drops to show (its first timestamp and span, from one
	 * evaluation without a manifest first) */
	int64_t base = INT64_C(1000000000);
	if (md->keep_events && n_paths > 1) {
		struct tm_report *r0;
		if (tm_session_evaluate_ex(s, NULL, &(struct tm_eval_opts){0}, &r0, &e) == TM_OK) {
			for (size_t k = 0; k < r0->n_files; k++)
				if (r0->files[k].member == 2 && r0->files[k].has_ts)
					base = r0->files[k].first_ts / 2 + r0->files[k].last_ts / 2;
			tm_report_free(r0);
		}
	}
	for (int i = 0; i < n; i++) {
		struct tm_manifest m;
		tm_manifest_init(&m);
		if (n_paths > 1 && n1 && n2) {
			(void)tm_manifest_file_get(&m, n1, true);
			tm_manifest_set_machine(&m, n2, "other");
			/* both signs: one direction moves part of the second
			 * input before the timeline's zero (drops counted
			 * inside its runs) */
			int64_t off = base + (int64_t)(i % 7) * 100000000;
			tm_manifest_set_clocks(&m, n2, TM_CLOCK_BOOTTIME, n1, TM_CLOCK_BOOTTIME, NULL,
					       i % 2 ? off : -off);
			tm_manifest_set_trace_time(&m, TM_CLOCK_BOOTTIME, n1, NULL);
		}
		struct tm_report *r;
		double a = now_us(), ac = clock_us(CLOCK_PROCESS_CPUTIME_ID);
		if (tm_session_evaluate_ex(s, &m, &md->eo, &r, &e) != TM_OK) {
			fprintf(stderr, "bench_tm: %s\n", e.msg);
			return 1;
		}
		t[i] = now_us() - a;
		c[i] = clock_us(CLOCK_PROCESS_CPUTIME_ID) - ac;
		if (r->error) {
			fprintf(stderr, "bench_tm: the evaluated manifest fails: %s\n", r->error);
			return 1;
		}
		dropped += r->dropped;
		events = 0;
		for (size_t k = 0; k < r->n_files; k++)
			events += r->files[k].events;
		tm_report_free(r);
		tm_manifest_fini(&m);
	}
	qsort(t, (size_t)n, sizeof *t, cmp_d);
	qsort(c, (size_t)n, sizeof *c, cmp_d);
	printf("%.1f %.1f %" PRIu64 " %.1f %.1f %" PRIu64 "\n", t[n / 2], t[0], dropped, c[n / 2], c[0],
	       events);
	free(t);
	free(c);
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
	if (argc >= 4 && !strcmp(argv[1], "gen-chrome"))
		return gen_chrome(argv[2], strtoull(argv[3], NULL, 10));
	if (argc >= 5 && !strcmp(argv[1], "gen-shape"))
		return gen_shape(argv[2], argv[3], strtoull(argv[4], NULL, 10));
	if (argc >= 3 && !strcmp(argv[1], "walk"))
		return walk(argv[2]);
	if (argc >= 5 && !strcmp(argv[1], "gen-members")) {
		/* the total in MiB, or in KiB with a k suffix */
		char *end;
		uint64_t total = strtoull(argv[4], &end, 10);
		return gen_members(argv[2], (unsigned)strtoul(argv[3], NULL, 10),
				   *end == 'k' ? total << 10 : total << 20);
	}
	if (argc >= 4 && !strcmp(argv[1], "gen-systrace"))
		return gen_systrace(argv[2], strtoull(argv[3], NULL, 10));
	for (size_t k = 0; argc >= 4 && k < sizeof reeval_modes / sizeof *reeval_modes; k++)
		if (!strcmp(argv[1], reeval_modes[k].cmd))
			return reeval(atoi(argv[2]), &reeval_modes[k], (const char *const *)argv + 3,
				      (size_t)argc - 3);
	fprintf(stderr, "usage: bench_tm gen-proto|gen-json|gen-chrome|gen-systrace OUT MB | gen-shape SHAPE OUT MB | walk FILE | "
			"reeval|reeval-events|reeval-wb|reeval-wb-list N INPUT...\n");
	return 64;
}

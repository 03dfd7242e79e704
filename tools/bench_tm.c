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
 *   bench_tm view N INPUT...      the workbench's tracks view: details kept,
 *                                 one evaluation listing every event, the
 *                                 engine's view built over it (tm_view_build),
 *                                 then N frames of 40 track rows x 200
 *                                 columns (tm_view_cells) at the whole
 *                                 trace's zoom and zoomed in 100 and 10,000
 *                                 times; prints the build's CPU µs, each
 *                                 zoom's median CPU µs per frame, the events
 *                                 and the tracks
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

/* `perf script` output: samples of 1-8 frames (a perf record -g shape),
 * each header, its frames and the empty line that ends it. */
static int
gen_perf_text(const char *out, uint64_t mb)
{
	static const char *const syms[] = {"do_syscall_64", "vfs_read", "__memcpy_avx_unaligned",
					   "main", "std::vector<int>::push_back", "__libc_start_main",
					   "schedule", "pthread_mutex_lock"};
	FILE *f = fopen(out, "wb");
	if (!f)
		return 1;
	uint64_t limit = mb << 20, written = 0, x = 88172645463325252ull;
	for (uint64_t i = 0; written < limit; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t us = 115540000000ull + i * 250;
		written += (uint64_t)fprintf(f, "app %u/%u [%03u] %" PRIu64 ".%06u:     250000 cpu-clock:\n",
					     (unsigned)(100 + x % 50), (unsigned)(100 + x % 500),
					     (unsigned)(x % 8), us / 1000000, (unsigned)(us % 1000000));
		for (unsigned k = 0; k < 1 + (x >> 20) % 8; k++)
			written += (uint64_t)fprintf(f, "\t%16" PRIx64 " %s+0x%x (/usr/lib/libapp.so)\n",
						     (uint64_t)(0x7f0000000000ull + ((x >> k) & 0xffffff)),
						     syms[(x >> (3 * k)) % 8], (unsigned)((x >> k) % 4096));
		written += (uint64_t)fprintf(f, "\n");
	}
	return fclose(f) != 0;
}

/* A Firefox Profiler (Gecko) profile: one thread, its samples (stack,
 * time ms) and markers as column arrays. */
static int
gen_gecko(const char *out, uint64_t mb)
{
	FILE *f = fopen(out, "wb");
	if (!f)
		return 1;
	/* about half the bytes for samples (a stack entry ~3 bytes, its time
	 * ~13: the stacks take a tenth), the rest for markers (~32 bytes each
	 * over their five arrays): the file comes out near mb MiB */
	uint64_t limit = mb << 20, stacks = limit / 10, written = 0, n = 0;
	written += (uint64_t)fprintf(
		f, "{\"meta\": {\"categories\": [{\"name\": \"Other\", \"color\": \"grey\", "
		   "\"subcategories\": [\"Other\"]}]},\n \"threads\": [{\"name\": \"main\", \"tid\": 100, "
		   "\"pid\": 100, \"stringArray\": [\"f0\", \"f1\", \"Paint\"],\n \"frameTable\": "
		   "{\"func\": [0, 1]}, \"funcTable\": {\"name\": [0, 1]}, \"stackTable\": {\"prefix\": "
		   "[null, 0], \"frame\": [0, 1]},\n \"samples\": {\"stack\": [");
	for (; written < stacks; n++)
		written += (uint64_t)fprintf(f, "%s%u", n ? ", " : "", (unsigned)(n % 2));
	written += (uint64_t)fprintf(f, "],\n \"time\": [");
	for (uint64_t i = 0; i < n; i++)
		written += (uint64_t)fprintf(f, "%s%" PRIu64 ".%03u", i ? ", " : "", 10 + i / 4,
					     (unsigned)(i % 4 * 250));
	written += (uint64_t)fprintf(f, "]},\n \"markers\": {\"name\": [");
	uint64_t m = (limit > written ? limit - written : 0) / 32 + 1;
	for (uint64_t i = 0; i < m; i++)
		fprintf(f, "%s2", i ? ", " : "");
	fputs("], \"startTime\": [", f);
	for (uint64_t i = 0; i < m; i++)
		fprintf(f, "%s%" PRIu64 ".5", i ? ", " : "", 10 + i);
	fputs("], \"endTime\": [", f);
	for (uint64_t i = 0; i < m; i++)
		fprintf(f, "%s%" PRIu64 ".75", i ? ", " : "", 10 + i);
	fputs("], \"phase\": [", f);
	for (uint64_t i = 0; i < m; i++)
		fprintf(f, "%s1", i ? ", " : "");
	fputs("], \"category\": [", f);
	for (uint64_t i = 0; i < m; i++)
		fprintf(f, "%s0", i ? ", " : "");
	fputs("]}}]}\n", f);
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

static int gen_real_shape(const char *shape, const char *out, uint64_t mb);

static int
gen_shape(const char *shape, const char *out, uint64_t mb)
{
	if (!strcmp(shape, "track") || !strcmp(shape, "ftrace-percpu"))
		return gen_real_shape(shape, out, mb);
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

/* ---- realistic shapes (issue 27) ---- */

/* One BOOTTIME/MONOTONIC snapshot packet (the shapes' first). */
static void
w_snapshot(struct wbuf *o, uint64_t ts)
{
	struct wbuf c = {0}, cs = {0}, pk = {0};
	w_fv(&c, 1, 6);
	w_fv(&c, 2, ts);
	w_sub(&cs, 1, &c);
	w_fv(&c, 1, 3);
	w_fv(&c, 2, ts / 2);
	w_sub(&cs, 1, &c);
	w_sub(&pk, 6, &cs);
	w_sub(o, 1, &pk);
	free(c.p);
	free(cs.p);
	free(pk.p);
}

/* o written out once it holds 1 MiB (or anything, when last); *written
 * counts it. */
static int
w_flush(FILE *f, struct wbuf *o, uint64_t *written, bool last)
{
	if (o->n < (1u << 20) && !(last && o->n))
		return 0;
	if (fwrite(o->p, 1, o->n, f) != o->n)
		return 1;
	*written += o->n;
	o->n = 0;
	return 0;
}


/* One TrackEvent packet of the track shape, on sequence k. */
struct tseq {
	uint32_t depth, stack[8];    /* open slices' name iids */
	uint8_t named[2048 / 8];     /* name iids interned since the clear */
	uint8_t cats, annots;        /* categories / annotation names interned */
	bool started;
};

static bool
bit_test_set(uint8_t *bits, uint32_t i)
{
	bool was = bits[i / 8] >> (i % 8) & 1;
	bits[i / 8] |= (uint8_t)(1u << (i % 8));
	return was;
}

/* track: what Chrome and the Perfetto SDK write - 100 thread sequences
 * interleaved, each opened by its clear and a TrackDescriptor, names
 * interned on first use along the way (not up front), nested B/E slices up
 * to 6 deep, one or two debug annotations on most slices (ints, strings,
 * interned names), categories, instants, counters, flows between threads,
 * and a clear of every sequence's incremental state now and then. */
static int
gen_track(FILE *f, uint64_t limit)
{
	enum { NSEQ = 100, NNAME = 2000, NCAT = 24, NANN = 32 };
	static struct tseq sq[NSEQ];
	struct wbuf o = {0}, pk = {0}, te = {0}, sub = {0}, sub2 = {0}, in = {0};
	uint64_t written = 0, ts = 1000000000, flow = 1;
	w_snapshot(&o, ts);
	for (uint64_t i = 0; written < limit; i++) {
		uint32_t k = rnd(NSEQ), seq = 1 + k;
		struct tseq *q = &sq[k];
		char nm[64];
		int n;
		if (!q->started || rnd(200000) == 0) {
			/* a clear: descriptor of the thread's track */
			memset(q, 0, sizeof *q);
			q->started = true;
			w_fv(&pk, 8, ts);
			w_fv(&pk, 10, seq);
			w_fv(&pk, 13, 1);
			w_fv(&sub, 1, 4000 + seq);
			n = snprintf(nm, sizeof nm, "CrRendererMain-%u", seq);
			w_fl(&sub, 2, nm, (size_t)n);
			w_fv(&sub2, 1, 100 + seq % 7);
			w_fv(&sub2, 2, 1000 + seq);
			w_fl(&sub2, 5, nm, (size_t)n);
			w_sub(&sub, 4, &sub2);
			w_fv(&sub, 5, 3000 + seq % 7);
			w_sub(&pk, 60, &sub);
			/* its events on the thread's track by default */
			w_fv(&sub, 11, 4000 + seq);
			w_sub(&sub2, 11, &sub);
			w_sub(&pk, 59, &sub2);
			w_sub(&o, 1, &pk);
		}
		uint32_t r = rnd(100), type;
		uint32_t name = 0;
		if (r < 4)
			type = 4; /* counter */
		else if (r < 12)
			type = 3; /* instant */
		else if (q->depth == 0 || (q->depth < 6 && r < 56))
			type = 1;
		else
			type = 2;
		if (type == 1 || type == 3) {
			/* a few hot names, a long tail */
			name = 1 + (rnd(4) ? rnd(64) : rnd(NNAME));
			if (!bit_test_set(q->named, name)) {
				n = snprintf(nm, sizeof nm, "ThreadControllerImpl::RunTask/%u", name);
				w_fv(&sub, 1, name);
				w_fl(&sub, 2, nm, (size_t)n);
				w_sub(&in, 2, &sub);
			}
		}
		if (type == 1)
			q->stack[q->depth++] = name;
		else if (type == 2)
			q->depth--;
		w_fv(&te, 9, type);
		if (type == 4) {
			w_fv(&te, 11, 5000 + seq % 16);
			w_fv(&te, 30, rnd(1u << 20));
		} else {
			uint32_t cat = 1 + rnd(NCAT);
			if (!(q->cats >> (cat % 8) & 1) && type != 2) {
				q->cats |= (uint8_t)(1u << (cat % 8));
				n = snprintf(nm, sizeof nm, "disabled-by-default-cat%u", cat);
				w_fv(&sub, 1, cat);
				w_fl(&sub, 2, nm, (size_t)n);
				w_sub(&in, 1, &sub);
			}
			if (type != 2) {
				w_fv(&te, 3, cat);
				w_fv(&te, 10, name);
				/* debug annotations: interned names, an int or a string */
				for (uint32_t a = 0, na = rnd(3); a < na; a++) {
					uint32_t an = 1 + rnd(NANN);
					if (!(q->annots >> (an % 8) & 1)) {
						q->annots |= (uint8_t)(1u << (an % 8));
						n = snprintf(nm, sizeof nm, "arg_%u", an);
						w_fv(&sub, 1, an);
						w_fl(&sub, 2, nm, (size_t)n);
						w_sub(&in, 3, &sub);
					}
					w_fv(&sub, 1, an);
					if (rnd(2)) {
						w_fv(&sub, 4, rnd(1000000));
					} else {
						n = snprintf(nm, sizeof nm, "https://example.com/page/%u", rnd(1000));
						w_fl(&sub, 6, nm, (size_t)n);
					}
					w_sub(&te, 4, &sub);
				}
			}
			/* flows: one B in 16 starts one, one in 16 ends one */
			if (type == 1 && rnd(16) == 0) {
				uint8_t b8[8];
				uint64_t id = flow++;
				memcpy(b8, &id, 8);
				w_var(&te, 47u << 3 | 1);
				w_bytes(&te, b8, 8);
			} else if (type == 1 && flow > 8 && rnd(16) == 0) {
				uint8_t b8[8];
				uint64_t id = flow - 1 - rnd(8);
				memcpy(b8, &id, 8);
				w_var(&te, 48u << 3 | 1);
				w_bytes(&te, b8, 8);
			}
		}
		w_fv(&pk, 8, ts);
		w_fv(&pk, 10, seq);
		w_fv(&pk, 13, 2);
		if (in.n)
			w_sub(&pk, 12, &in);
		w_sub(&pk, 11, &te);
		w_sub(&o, 1, &pk);
		ts += 200 + rnd(2000);
		if (w_flush(f, &o, &written, false))
			return 1;
	}
	if (w_flush(f, &o, &written, true))
		return 1;
	free(o.p);
	free(pk.p);
	free(te.p);
	free(sub.p);
	free(sub2.p);
	free(in.p);
	return 0;
}

/* ftrace-percpu: what traced writes from the kernel's per-CPU buffers - in
 * every read cycle one bundle per CPU (8), each covering the same stretch of
 * time, so bundles overlap; each bundle a varying number of mixed events:
 * sched_switch, sched_wakeup, cpu_idle, cpu_frequency, and atrace
 * (tracing_mark_write) prints of B|, E| and C| lines; every bundle says the
 * end of the CPU's previous bundle. */
static int
gen_ftrace_percpu(FILE *f, uint64_t limit)
{
	enum { NCPU = 8 };
	static const char *const comms[] = {"RenderThread", "surfaceflinger", "kworker/u16:3",
					    "binder:1234_2", "HwBinder:600_1", "com.android.systemui",
					    "swapper/0", "android.bg", "mali-cmar-backe", "traced_probes"};
	struct wbuf o = {0}, pk = {0}, ev = {0}, sub = {0}, bun = {0};
	uint64_t written = 0, ts = 1000000000, prev_end[NCPU] = {0};
	w_snapshot(&o, ts);
	while (written < limit) {
		uint64_t span = 5000000 + rnd(5000000); /* a read cycle of 5-10 ms */
		for (uint32_t cpu = 0; cpu < NCPU; cpu++) {
			uint32_t nev = 10 + rnd(cpu < 4 ? 300 : 80);
			/* a CPU's events in order, across its bundles too */
			uint64_t t = ts > prev_end[cpu] ? ts : prev_end[cpu];
			w_fv(&bun, 1, cpu);
			for (uint32_t e = 0; e < nev; e++) {
				t += span / nev / 2 + rnd((uint32_t)(span / nev));
				uint32_t r = rnd(100), pid = 100 + rnd(3000);
				w_fv(&ev, 1, t);
				w_fv(&ev, 2, pid);
				char buf[80];
				int n;
				if (r < 40) { /* sched_switch */
					const char *a = comms[rnd(10)], *b = comms[rnd(10)];
					w_fl(&sub, 1, a, strlen(a));
					w_fv(&sub, 2, pid);
					w_fv(&sub, 3, 120);
					w_fv(&sub, 4, rnd(3));
					w_fl(&sub, 5, b, strlen(b));
					w_fv(&sub, 6, 100 + rnd(3000));
					w_fv(&sub, 7, 100 + rnd(40));
					w_sub(&ev, 4, &sub);
				} else if (r < 62) { /* sched_wakeup (19): comm, pid, prio, success, target_cpu */
					const char *a = comms[rnd(10)];
					w_fl(&sub, 1, a, strlen(a));
					w_fv(&sub, 2, 100 + rnd(3000));
					w_fv(&sub, 3, 120);
					w_fv(&sub, 4, 1);
					w_fv(&sub, 5, rnd(NCPU));
					w_sub(&ev, 19, &sub);
				} else if (r < 70) { /* cpu_idle (13): state, cpu_id */
					w_fv(&sub, 1, rnd(2) ? 4294967295u : rnd(4));
					w_fv(&sub, 2, cpu);
					w_sub(&ev, 13, &sub);
				} else if (r < 74) { /* cpu_frequency (11): state, cpu_id */
					w_fv(&sub, 1, 300000 + rnd(20) * 100000);
					w_fv(&sub, 2, cpu);
					w_sub(&ev, 11, &sub);
				} else { /* print: atrace B|, E|, C| */
					uint32_t a = rnd(10);
					if (a < 4)
						n = snprintf(buf, sizeof buf, "B|%u|Choreographer#doFrame %u\n", pid, rnd(100000));
					else if (a < 8)
						n = snprintf(buf, sizeof buf, "E|%u\n", pid);
					else
						n = snprintf(buf, sizeof buf, "C|%u|aq:pending:%u|%u\n", pid, rnd(4), rnd(8));
					w_fv(&sub, 1, 0xffffffc010a2b3c4ull);
					w_fl(&sub, 2, buf, (size_t)n);
					w_sub(&ev, 3, &sub);
				}
				w_sub(&bun, 2, &ev);
			}
			if (prev_end[cpu])
				w_fv(&bun, 10, prev_end[cpu]);
			prev_end[cpu] = t;
			w_sub(&pk, 1, &bun);
			w_fv(&pk, 10, 1);
			w_sub(&o, 1, &pk);
		}
		ts += span;
		if (w_flush(f, &o, &written, false))
			return 1;
	}
	if (w_flush(f, &o, &written, true))
		return 1;
	free(o.p);
	free(pk.p);
	free(ev.p);
	free(sub.p);
	free(bun.p);
	return 0;
}

static int
gen_real_shape(const char *shape, const char *out, uint64_t mb)
{
	FILE *f = fopen(out, "wb");
	if (!f)
		return 1;
	int rc = !strcmp(shape, "track") ? gen_track(f, mb << 20) : gen_ftrace_percpu(f, mb << 20);
	return fclose(f) != 0 || rc;
}

/* The baseline walker, the honest cost of reading every field once: every
 * top-level packet and every field of it; one level into the messages a
 * scanner must read (TrackEvent, InternedData and each of its entries,
 * ClockSnapshot and its clocks, FtraceEventBundle and each FtraceEvent's own
 * fields, CompactSched with every packed varint decoded); every other
 * length-delimited field (strings, bytes, payloads) skipped by its length,
 * never parsed as a message; byte-loop varints, nothing recorded but a
 * checksum. */
static inline const uint8_t *
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

/* what a length-delimited field is walked as */
enum wk { WK_SKIP, WK_PACKET, WK_FLAT, WK_INTERNED, WK_SNAPSHOT, WK_BUNDLE, WK_COMPACT, WK_PACKED };

static enum wk
walk_kind(enum wk in, uint64_t field)
{
	switch (in) {
	case WK_PACKET:
		return field == 11 ? WK_FLAT : field == 12 ? WK_INTERNED : field == 6 ? WK_SNAPSHOT
		       : field == 1 ? WK_BUNDLE : WK_SKIP;
	case WK_INTERNED:
	case WK_SNAPSHOT:
		return WK_FLAT; /* an entry (iid, name) / a clock (id, timestamp) */
	case WK_BUNDLE:
		return field == 2 ? WK_FLAT : field == 4 ? WK_COMPACT : WK_SKIP;
	case WK_COMPACT:
		return field == 5 ? WK_SKIP : WK_PACKED; /* intern_table: strings */
	default:
		return WK_SKIP;
	}
}

static bool
walk_msg(const uint8_t *q, const uint8_t *qe, enum wk kind)
{
	if (kind == WK_PACKED) {
		uint64_t v;
		while (q < qe) {
			if (!(q = walk_var(q, qe, &v)))
				return false;
			walk_sum += v;
			walk_fields++;
		}
		return true;
	}
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
		case 2: {
			q = walk_var(q, qe, &v);
			if (!q || v > (uint64_t)(qe - q))
				return false;
			enum wk sub = walk_kind(kind, ft >> 3);
			if (sub != WK_SKIP)
				(void)walk_msg(q, q + v, sub);
			q += v;
			break;
		}
		case 1:
			if (qe - q < 8)
				return false;
			walk_sum += q[0];
			q += 8;
			break;
		case 5:
			if (qe - q < 4)
				return false;
			walk_sum += q[0];
			q += 4;
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
	const uint8_t *base = n ? mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0) : NULL;
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
		(void)walk_msg(q, p, WK_PACKET);
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

/* atrace: text in the shape `atrace` (and systrace's capture) writes - the
 * ftrace header with its column legend, task names of every length
 * right-aligned in 16 columns, "(TGID)" or "(-----)", 8 CPUs, irq flags,
 * timestamps at microseconds, and the events of a phone's trace in about
 * their proportions: sched_switch, sched_waking, sched_wakeup, cpu_idle,
 * cpu_frequency, irq_handler_entry/exit, binder_transaction(_received),
 * workqueue_execute_start/end and tracing_mark_write B|/E|/C|/S|/F| lines. */
static int
gen_atrace(const char *out, uint64_t mb)
{
	static const char *const comms[] = {"RenderThread", "surfaceflinger", "kworker/u16:3",
					    "binder:1234_2", "HwBinder:600_1", "ndroid.systemui",
					    "<idle>", "android.bg", "mali-cmar-backe", "traced_probes",
					    "ksoftirqd/2", "rcu_preempt", "Jit thread pool", "HeapTaskDaemon",
					    "crtc_commit:131", "POSIX timer 0"};
	static const char *const slices[] = {"Choreographer#doFrame", "traversal", "draw",
					     "Record View#draw()", "DrawFrame", "queueBuffer",
					     "dequeueBuffer", "binder transaction", "inflate",
					     "Lock contention on a monitor lock (owner tid: 1234)",
					     "onMessageReceived", "handleMessageRefresh"};
	FILE *f = fopen(out, "wb");
	if (!f)
		return 1;
	fputs("# tracer: nop\n#\n# entries-in-buffer/entries-written: 4194304/4194304   #P:8\n#\n"
	      "#                                      _-----=> irqs-off\n"
	      "#                                     / _----=> need-resched\n"
	      "#                                    | / _---=> hardirq/softirq\n"
	      "#                                    || / _--=> preempt-depth\n"
	      "#                                    ||| /     delay\n"
	      "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
	      "#              | |        |      |   ||||       |         |\n",
	      f);
	uint64_t limit = mb << 20, written = 0, us = 8123456789ull;
	while (written < limit) {
		uint32_t c = rnd(16), pid = c == 6 ? 0 : 100 + rnd(30000), tgid = pid - pid % 50;
		uint32_t cpu = rnd(8), r = rnd(1000);
		char tg[16];
		if (c == 6 || rnd(20) == 0)
			snprintf(tg, sizeof tg, "-----");
		else
			snprintf(tg, sizeof tg, "%5u", tgid);
		us += rnd(40);
		int n = fprintf(f, "%16s-%-5u (%s) [%03u] %c%c%c%c %5" PRIu64 ".%06" PRIu64 ": ", comms[c], pid, tg, cpu,
				r < 500 ? 'd' : '.', r % 7 ? '.' : 'N', r % 5 ? '.' : 'h', "0123"[r % 4],
				us / 1000000, us % 1000000);
		if (n < 0)
			return 1;
		written += (uint64_t)n;
		const char *o = comms[rnd(16)], *sl = slices[rnd(12)];
		if (r < 260)
			n = fprintf(f, "sched_switch: prev_comm=%s prev_pid=%u prev_prio=120 prev_state=%s ==> "
				       "next_comm=%s next_pid=%u next_prio=%u\n",
				    comms[c], pid, r % 3 ? "S" : "R+", o, 100 + rnd(30000), 100 + rnd(40));
		else if (r < 380)
			n = fprintf(f, "sched_waking: comm=%s pid=%u prio=%u target_cpu=%03u\n", o,
				    100 + rnd(30000), 100 + rnd(40), rnd(8));
		else if (r < 440)
			n = fprintf(f, "sched_wakeup: comm=%s pid=%u prio=%u target_cpu=%03u\n", o,
				    100 + rnd(30000), 100 + rnd(40), rnd(8));
		else if (r < 520)
			n = fprintf(f, "cpu_idle: state=%u cpu_id=%u\n", rnd(2) ? 4294967295u : rnd(3), cpu);
		else if (r < 540)
			n = fprintf(f, "cpu_frequency: state=%u cpu_id=%u\n", 300000 + rnd(20) * 100000, cpu);
		else if (r < 580)
			n = fprintf(f, "irq_handler_entry: irq=%u name=arch_timer\n", 10 + rnd(200));
		else if (r < 620)
			n = fprintf(f, "irq_handler_exit: irq=%u ret=handled\n", 10 + rnd(200));
		else if (r < 650)
			n = fprintf(f, "binder_transaction: transaction=%u dest_node=%u dest_proc=%u "
				       "dest_thread=%u reply=%u flags=0x%x code=0x%x\n",
				    rnd(1u << 30), rnd(100000), 100 + rnd(30000), rnd(30000), rnd(2),
				    rnd(32), rnd(64));
		else if (r < 670)
			n = fprintf(f, "binder_transaction_received: transaction=%u\n", rnd(1u << 30));
		else if (r < 700)
			n = fprintf(f, "workqueue_execute_start: work struct %016" PRIx64 ": function %s\n",
				    (uint64_t)0xffffff8012345678ull + rnd(1u << 20), "drm_atomic_helper_commit_work");
		else if (r < 720)
			n = fprintf(f, "workqueue_execute_end: work struct %016" PRIx64 "\n",
				    (uint64_t)0xffffff8012345678ull + rnd(1u << 20));
		else if (r < 850)
			n = fprintf(f, "tracing_mark_write: B|%u|%s\n", tgid, sl);
		else if (r < 960)
			n = fprintf(f, "tracing_mark_write: E|%u\n", tgid);
		else if (r < 985)
			n = fprintf(f, "tracing_mark_write: C|%u|%s|%u\n", tgid, "aq:pending:SurfaceView", rnd(4));
		else
			n = fprintf(f, "tracing_mark_write: %c|%u|%s|%u\n", r % 2 ? 'S' : 'F', tgid,
				    "launching: com.example.app", rnd(16));
		if (n < 0)
			return 1;
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

static int
view_bench(int n, const char *const *paths, size_t n_paths)
{
	struct tm_session *s;
	struct tm_error e;
	struct tm_session_opts so = {.keep_events = true};
	struct tm_report *r;
	if (n < 1 || n_paths < 1) {
		fprintf(stderr, "bench_tm: view N INPUT...\n");
		return 64;
	}
	if (tm_session_open(&s, paths, n_paths, &so, &e) != TM_OK ||
	    tm_session_scan(s, SIZE_MAX, NULL, &e) != TM_OK ||
	    tm_session_evaluate_ex(s, NULL, &(struct tm_eval_opts){.events = true}, &r, &e) != TM_OK) {
		fprintf(stderr, "bench_tm: %s\n", e.msg);
		return 1;
	}
	double c0 = clock_us(CLOCK_PROCESS_CPUTIME_ID);
	struct tm_view *v = tm_view_build(r);
	double build = clock_us(CLOCK_PROCESS_CPUTIME_ID) - c0;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t k = 0; k < r->n_files; k++)
		if (r->files[k].has_all_ts) {
			lo = r->files[k].all_first_ts < lo ? r->files[k].all_first_ts : lo;
			hi = r->files[k].all_last_ts > hi ? r->files[k].all_last_ts : hi;
		}
	if (lo > hi)
		lo = 0, hi = 1;
	double med[3];
	double *c = calloc((size_t)n, sizeof *c);
	struct tm_view_cell cells[200];
	uint64_t sink = 0;
	for (int z = 0; z < 3; z++) {
		int64_t span = (hi - lo + 1) / (z == 0 ? 1 : z == 1 ? 100 : 10000) + 1;
		for (int i = 0; i < n; i++) {
			/* a window a little further on each frame (a pan) */
			int64_t t0 = lo + (hi - lo - span > 0 ? (int64_t)((uint64_t)i * 7919 % (uint64_t)(hi - lo - span + 1)) : 0);
			double a = clock_us(CLOCK_PROCESS_CPUTIME_ID);
			for (uint32_t t = 0; t < r->n_tracks && t < 40; t++) {
				tm_view_cells(v, t, t0, span / 200 + 1, 200, cells);
				sink += cells[0].n;
			}
			c[i] = clock_us(CLOCK_PROCESS_CPUTIME_ID) - a;
		}
		qsort(c, (size_t)n, sizeof *c, cmp_d);
		med[z] = c[n / 2];
	}
	printf("%.1f %.1f %.1f %.1f %zu %zu\n", build, med[0], med[1], med[2], r->n_events, r->n_tracks);
	if (sink == UINT64_MAX)
		puts("");
	free(c);
	tm_view_free(v);
	tm_report_free(r);
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
	if (argc >= 4 && !strcmp(argv[1], "gen-atrace"))
		return gen_atrace(argv[2], strtoull(argv[3], NULL, 10));
	if (argc >= 4 && !strcmp(argv[1], "gen-perf-text"))
		return gen_perf_text(argv[2], strtoull(argv[3], NULL, 10));
	if (argc >= 4 && !strcmp(argv[1], "gen-gecko"))
		return gen_gecko(argv[2], strtoull(argv[3], NULL, 10));
	if (argc >= 4 && !strcmp(argv[1], "view"))
		return view_bench(atoi(argv[2]), (const char *const *)argv + 3, (size_t)argc - 3);
	for (size_t k = 0; argc >= 4 && k < sizeof reeval_modes / sizeof *reeval_modes; k++)
		if (!strcmp(argv[1], reeval_modes[k].cmd))
			return reeval(atoi(argv[2]), &reeval_modes[k], (const char *const *)argv + 3,
				      (size_t)argc - 3);
	fprintf(stderr, "usage: bench_tm gen-proto|gen-json|gen-chrome|gen-systrace|gen-atrace|gen-perf-text|gen-gecko OUT MB | gen-shape SHAPE OUT MB | walk FILE | "
			"reeval|reeval-events|reeval-wb|reeval-wb-list|view N INPUT...\n");
	return 64;
}

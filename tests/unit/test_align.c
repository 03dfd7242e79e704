/* SPDX-License-Identifier: MIT */
/* align.c: estimates from samples on clocks the replay converts (the
 * Perfetto SDK's incremental sequence clock 64), and the printed drift. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "t.h"
#include "tracemerge.h"

/* ---- a small proto writer ---- */

struct pb {
	uint8_t b[4096];
	size_t n;
};

static void
vint(struct pb *p, uint64_t v)
{
	do {
		uint8_t x = v & 0x7f;
		v >>= 7;
		p->b[p->n++] = (uint8_t)(x | (v ? 0x80 : 0));
	} while (v);
}

static void
fv(struct pb *p, unsigned field, uint64_t v)
{
	vint(p, field << 3);
	vint(p, v);
}

static void
fl(struct pb *p, unsigned field, const struct pb *in)
{
	vint(p, field << 3 | 2);
	vint(p, in->n);
	memcpy(p->b + p->n, in->b, in->n);
	p->n += in->n;
}

static void
fs(struct pb *p, unsigned field, const char *s)
{
	struct pb t = {.n = strlen(s)};
	memcpy(t.b, s, t.n);
	fl(p, field, &t);
}

static void
clock_entry(struct pb *snap, uint32_t id, uint64_t ts, bool incr)
{
	struct pb c = {.n = 0};
	fv(&c, 1, id);
	fv(&c, 2, ts);
	if (incr)
		fv(&c, 3, 1);
	fl(snap, 1, &c);
}

/* As the SDK writes a sequence: a packet that clears the incremental state
 * with TracePacketDefaults {timestamp_clock_id 64} and a ClockSnapshot
 * {BOOTTIME t0, 64 t0 incremental}; then instants "m1".."m5", their names
 * interned, at t0 + 1 s * k, each packet's timestamp the delta.  fillers:
 * clock 64 is instead the snapshot's primary_trace_clock (the file's
 * default clock), the markers name it themselves, and before each of them
 * four packets with no clock id, 200 ms apart, fold into a run. */
static void
sdk_trace_ex(const char *path, uint64_t t0, uint32_t sdk_clock, bool fillers)
{
	struct pb out = {.n = 0}, pkt = {.n = 0}, snap = {.n = 0}, def = {.n = 0};
	fv(&pkt, 8, 0);
	fv(&pkt, 10, 1);
	fv(&pkt, 13, 1);
	if (!fillers)
		fv(&def, 58, 64);
	fl(&pkt, 59, &def);
	clock_entry(&snap, sdk_clock, t0, false);
	clock_entry(&snap, 64, t0, true);
	if (fillers)
		fv(&snap, 2, 64); /* primary_trace_clock */
	fl(&pkt, 6, &snap);
	fl(&out, 1, &pkt);
	for (unsigned k = 1; k <= 5; k++) {
		struct pb p = {.n = 0}, te = {.n = 0}, in = {.n = 0}, en = {.n = 0};
		char name[8];
		snprintf(name, sizeof name, "m%u", k);
		for (unsigned j = 0; fillers && j < 4; j++) {
			struct pb w = {.n = 0}, wte = {.n = 0};
			fv(&w, 8, 200000000);
			fv(&w, 10, 1);
			fv(&w, 13, 2);
			fv(&wte, 9, 3);
			fv(&wte, 11, 7);
			fs(&wte, 23, "work");
			fl(&w, 11, &wte);
			fl(&out, 1, &w);
		}
		fv(&p, 8, fillers ? 200000000 : 1000000000); /* the delta from the last */
		fv(&p, 10, 1);
		fv(&p, 13, 2);
		if (fillers)
			fv(&p, 58, 64);
		fv(&en, 1, k);
		fs(&en, 2, name);
		fl(&in, 2, &en);
		fl(&p, 12, &in);
		fv(&te, 9, 3); /* TYPE_INSTANT */
		fv(&te, 10, k);
		fv(&te, 11, 7);
		fl(&p, 11, &te);
		fl(&out, 1, &p);
	}
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(out.b, 1, out.n, f) != out.n || fclose(f) != 0)
		abort();
}

static void
sdk_trace(const char *path, uint64_t t0, uint32_t sdk_clock)
{
	sdk_trace_ex(path, t0, sdk_clock, false);
}

/* Before, samples on the sequence-scoped clock were only counted as not
 * usable, so SDK traces gave no estimate; now each is the timestamp the
 * replay converts, read at the file's trace clock. */
static void
t_sdk_sequence_clock(void)
{
	char dir[] = "/tmp/tm_align_XXXXXX", a[64], b[64];
	if (!mkdtemp(dir))
		abort();
	snprintf(a, sizeof a, "%s/a.pftrace", dir);
	snprintf(b, sizeof b, "%s/b.pftrace", dir);
	sdk_trace(a, 5000000000, 6);
	sdk_trace(b, 2000000000, 6); /* b's clock is 3 s behind: offset +3 s */
	const char *in[2] = {a, b};
	struct tm_session *s;
	struct tm_error e;
	CHECK(tm_session_open(&s, in, 2, NULL, &e) == TM_OK);
	struct tm_align_result r;
	CHECK(tm_align_run(s, NULL, NULL, &r, &e) == TM_OK);
	CHECK_INT(r.n, 1);
	if (r.n == 1) {
		const struct tm_align_estimate *x = &r.est[0];
		CHECK_INT(x->n_same, 5);
		CHECK_INT(x->n_unusable, 0);
		CHECK(x->has_offset && x->offset_ns == 3000000000);
		CHECK(x->has_lo && x->has_hi && x->lo_ns == 3000000000 && x->hi_ns == 3000000000);
	}
	/* the events a pair can be picked from carry their converted times */
	struct tm_align_events ev;
	CHECK(tm_align_events(s, "b.pftrace", &ev, &e) == TM_OK);
	CHECK_INT(ev.n, 5);
	CHECK(ev.n == 5 && ev.v[0].ts == 3000000000 && ev.v[4].ts == 7000000000);
	tm_align_events_fini(&ev);
	tm_align_result_fini(&r);
	tm_session_close(s);
	unlink(a);
	unlink(b);
	rmdir(dir);
}

/* The SDK on MONOTONIC (macOS) beside one on BOOTTIME: the file's clock
 * shares nothing with the timeline, every event of it is dropped, and its
 * failed conversions do not accumulate the incremental clock; the estimate
 * takes the values the clock will have once the file is related.  Each
 * case runs on the fast path (runs) and the plain replay (every packet
 * alone): both give the true offset. */
static void
unrelated_clock_case(bool fillers, size_t dropped)
{
	char dir[] = "/tmp/tm_align_XXXXXX", a[64], b[64];
	if (!mkdtemp(dir))
		abort();
	snprintf(a, sizeof a, "%s/a.pftrace", dir);
	snprintf(b, sizeof b, "%s/b.pftrace", dir);
	sdk_trace(a, 5000000000, 6);
	sdk_trace_ex(b, 2000000000, 3, fillers);
	const char *in[2] = {a, b};
	for (int plain = 0; plain < 2; plain++) {
		struct tm_session_opts o = {.plain_replay = plain};
		struct tm_session *s;
		struct tm_error e;
		CHECK(tm_session_open(&s, in, 2, &o, &e) == TM_OK);
		struct tm_report *rep = NULL;
		CHECK(tm_session_evaluate(s, NULL, &rep, &e) == TM_OK);
		CHECK(rep && rep->dropped == dropped);
		tm_report_free(rep);
		struct tm_align_result r;
		CHECK(tm_align_run(s, NULL, NULL, &r, &e) == TM_OK);
		CHECK_INT(r.n, 1);
		if (r.n == 1) {
			CHECK_INT(r.est[0].clock, 3);
			CHECK_INT(r.est[0].n_same, 5);
			CHECK_INT(r.est[0].n_unusable, 0);
			CHECK(r.est[0].has_offset && r.est[0].offset_ns == 3000000000);
		}
		tm_align_result_fini(&r);
		tm_session_close(s);
	}
	unlink(a);
	unlink(b);
	rmdir(dir);
}

static void
t_sdk_unrelated_clock(void)
{
	unrelated_clock_case(false, 5);
}

/* The same with the file's packets on its default clock 64 between the
 * markers: the scan folds them into runs, whose deferred elements step the
 * clock's shadow as a packet replayed alone does (before, the fast path's
 * shadow missed the runs' deltas: 800 ms per marker). */
static void
t_sdk_unrelated_clock_runs(void)
{
	unrelated_clock_case(true, 25);
}

/* A drift that rounds to zero prints 0.000, not -0.000; the estimate keeps
 * the drift as computed (the one drift_ns is), the printers round it. */
static void
t_no_negative_zero_drift(void)
{
	struct tm_align_obs o[3] = {{0, 1, 0}, {30000000000, 1, 0}, {60000000000, 0, 0}};
	struct tm_align_estimate e;
	memset(&e, 0, sizeof e);
	tm_align_solve(o, 3, &e);
	CHECK(e.has_drift);
	CHECK(fabs(e.drift_ppm) < 0.0005);
	CHECK(llround(e.drift_ppm * 1e-6 * (double)e.span_ns) == e.drift_ns);
	struct tm_buf b;
	tm_buf_init(&b);
	tm_align_drift_sentence(&e, &b);
	CHECK(b.data && strncmp(b.data, "drift 0.000 ppm", 15) == 0);
	tm_buf_fini(&b);
	static const struct {
		double ppm;
		const char *want;
	} t[] = {{-0.0, "0.000"}, {-0.0004, "0.000"}, {-1e-12, "0.000"}, {0.0004, "0.000"},
		 {-1.2346, "-1.235"}, {40.00049, "40.000"}, {-25.0006, "-25.001"}};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		tm_buf_init(&b);
		tm_align_ppm_text(t[i].ppm, &b);
		CHECK(b.data && strcmp(b.data, t[i].want) == 0);
		tm_buf_fini(&b);
	}
}

int
main(void)
{
	RUN(t_sdk_sequence_clock);
	RUN(t_sdk_unrelated_clock);
	RUN(t_sdk_unrelated_clock_runs);
	RUN(t_no_negative_zero_drift);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The merged trace's views (view.c): the tracks of the listed events, the
 * timeline order, the dropped events one step away, a track row's columns,
 * same-named events across files.  What a frame costs is counted in probes
 * (the ASan build counts them, internal.h TM_PROBE), never timed: the same
 * window over 100 times the events costs about the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "t.h"

static char dir[64];

/* a.json: n slices "s" (X, 5 us) every 10 us on thread 1, a counter "c"
 * every 10 us, and two slices at negative times (dropped); b.json: the
 * same slices 3 us later on its thread 7. */
static const char *
write_trace(const char *name, size_t n, int64_t shift_us, int tid, bool extras)
{
	static char path[4][128];
	static unsigned k;
	char *p = path[k++ % 4];
	snprintf(p, sizeof path[0], "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (!f)
		return NULL;
	fputs("{\"traceEvents\":[\n", f);
	if (extras) {
		fputs("{\"name\":\"neg1\",\"ph\":\"X\",\"ts\":-20,\"dur\":5,\"pid\":1,\"tid\":1},\n", f);
		fputs("{\"name\":\"neg2\",\"ph\":\"X\",\"ts\":-10,\"dur\":5,\"pid\":1,\"tid\":1},\n", f);
	}
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "{\"name\":\"s\",\"ph\":\"X\",\"ts\":%lld,\"dur\":5,\"pid\":1,\"tid\":%d},\n",
			(long long)(i * 10 + (size_t)shift_us), tid);
		if (extras)
			fprintf(f, "{\"name\":\"c\",\"ph\":\"C\",\"ts\":%lld,\"pid\":1,\"args\":{\"v\":%zu}},\n",
				(long long)(i * 10), i);
	}
	fputs("{\"name\":\"end\",\"ph\":\"i\",\"ts\":0,\"pid\":1,\"tid\":1,\"s\":\"t\"}]}\n", f);
	fclose(f);
	return p;
}

static struct tm_report *
evaluate(const char *a, const char *b, struct tm_session **s)
{
	const char *paths[2] = {a, b};
	struct tm_session_opts o = {.keep_events = true};
	struct tm_error e;
	struct tm_report *r = NULL;
	if (tm_session_open(s, paths, b ? 2 : 1, &o, &e) != TM_OK) {
		FAILF("open: %s", e.msg);
		return NULL;
	}
	struct tm_eval_opts eo = {.events = true};
	if (tm_session_evaluate_ex(*s, NULL, &eo, &r, &e) != TM_OK) {
		/* not scanned yet: tm_session_evaluate scans first */
		if (tm_session_evaluate(*s, NULL, &r, &e) != TM_OK) {
			FAILF("evaluate: %s", e.msg);
			return NULL;
		}
	}
	return r;
}

static size_t
find_track(const struct tm_report *r, uint32_t file, char kind)
{
	for (size_t t = 0; t < r->n_tracks; t++)
		if (r->tracks[t].file == file && r->tracks[t].kind == kind)
			return t;
	return SIZE_MAX;
}

static void
t_tracks_and_order(void)
{
	struct tm_session *s = NULL;
	struct tm_report *r = evaluate(write_trace("a.json", 10, 0, 1, true),
				       write_trace("b.json", 10, 3, 7, false), &s);
	if (!r)
		return;
	/* a: thread 1's slices, the counter; b: thread 7's */
	size_t fa = SIZE_MAX, fb = SIZE_MAX;
	for (size_t i = 0; i < r->n_files; i++)
		if (r->files[i].path && !strcmp(tm_path_base(r->files[i].path), "a.json"))
			fa = i;
		else if (r->files[i].path && !strcmp(tm_path_base(r->files[i].path), "b.json"))
			fb = i;
	CHECK(fa != SIZE_MAX && fb != SIZE_MAX);
	size_t ts = find_track(r, (uint32_t)fa, 's'), tc = find_track(r, (uint32_t)fa, 'c');
	size_t tb = find_track(r, (uint32_t)fb, 's');
	CHECK(ts != SIZE_MAX && tc != SIZE_MAX && tb != SIZE_MAX);
	if (t_failed_)
		goto out;
	CHECK_INT(r->tracks[ts].number, 1);
	CHECK_INT(r->tracks[tb].number, 1);
	CHECK_INT(r->tracks[ts].n_dropped, 2);
	CHECK_INT(r->tracks[tc].n_events, 10);
	struct tm_buf id;
	tm_buf_init(&id);
	tm_report_track_id(s, r, (uint32_t)ts, &id);
	CHECK(id.data && strstr(id.data, "a.json#1"));
	tm_buf_fini(&id);
	CHECK_STR(tm_track_kind_name('c'), "counter");
	/* the counter's values (its first arg, v = 0..9): the sparkline's range */
	{
		struct tm_view *vv = tm_view_build(r);
		double lo = -1, hi = -1, val = -1;
		CHECK(tm_view_track_range(vv, (uint32_t)tc, &lo, &hi));
		CHECK(lo == 0 && hi == 9);
		size_t nv = 0;
		for (size_t i = 0; i < r->n_events; i++)
			if (r->events[i].track == tc && tm_report_event_value(r, i, &val))
				nv++;
		CHECK_INT(nv, 10);
		CHECK(!tm_view_track_range(vv, (uint32_t)ts, &lo, &hi));
		tm_view_free(vv);
	}
	/* every listed event of a named kind is on a track of its file */
	for (size_t i = 0; i < r->n_events; i++)
		if (r->events[i].track != TM_NO_TRACK)
			CHECK_INT(r->tracks[r->events[i].track].file, r->events[i].file);

	struct tm_view *v = tm_view_build(r);
	size_t n = tm_view_n(v);
	CHECK_INT(n, r->n_events);
	for (size_t p = 1; p < n; p++)
		CHECK(r->events[tm_view_at(v, p - 1)].ts <= r->events[tm_view_at(v, p)].ts);
	for (size_t i = 0; i < n; i++)
		CHECK_INT(tm_view_at(v, tm_view_pos(v, i)), i);
	/* the dropped events: neg1 then neg2, one key apart */
	CHECK_INT(tm_view_n_dropped(v), 2);
	size_t d1 = tm_view_dropped_step(v, SIZE_MAX, 1);
	size_t d2 = tm_view_dropped_step(v, d1, 1);
	CHECK(d1 != SIZE_MAX && d2 != SIZE_MAX);
	if (t_failed_)
		goto out_v;
	CHECK_STR(r->events[tm_view_at(v, d1)].name, "neg1");
	CHECK_STR(r->events[tm_view_at(v, d2)].name, "neg2");
	CHECK_INT(tm_view_dropped_step(v, d2, 1), SIZE_MAX);
	CHECK_INT(tm_view_dropped_step(v, d2, -1), d1);
	CHECK_INT(tm_view_dropped_step(v, n, -1), d2);
	/* seek: the first event at 30 us */
	size_t p30 = tm_view_seek(v, 30000);
	CHECK_INT(r->events[tm_view_at(v, p30)].ts, 30000);
	/* a's slices in columns of 5 us from 0: a slice starts in every other
	 * column, the ones between are covered by none (5 us slices end where
	 * the column starts) */
	struct tm_view_cell cells[8];
	tm_view_cells(v, (uint32_t)ts, 0, 5000, 8, cells);
	for (int c = 0; c < 8; c++) {
		CHECK_INT(cells[c].n, c % 2 == 0 ? (c == 0 ? 2 : 1) : 0); /* col 0: s and "end" */
		CHECK(!cells[c].covered);
	}
	/* columns of 1 us: starts at 0, covered for 1..4 */
	tm_view_cells(v, (uint32_t)ts, 0, 1000, 6, cells);
	CHECK(cells[0].n >= 1);
	for (int c = 1; c < 5; c++)
		CHECK(cells[c].covered && !cells[c].n);
	CHECK(!cells[5].covered);
	/* the dropped ones, in their own column */
	tm_view_cells(v, (uint32_t)ts, -20000, 10000, 2, cells);
	CHECK_INT(cells[0].dropped, 1);
	CHECK_INT(cells[1].dropped, 1);
	/* alignment at a glance: a's "s" at 30 us, b's nearest at 33 us */
	size_t e30 = SIZE_MAX;
	for (size_t q = p30; q < n && r->events[tm_view_at(v, q)].ts == 30000; q++)
		if (r->events[tm_view_at(v, q)].file == fa && r->events[tm_view_at(v, q)].name &&
		    !strcmp(r->events[tm_view_at(v, q)].name, "s"))
			e30 = tm_view_at(v, q);
	CHECK(e30 != SIZE_MAX);
	size_t nb = tm_view_nearest(v, e30, (uint32_t)fb);
	CHECK(nb != SIZE_MAX);
	if (nb != SIZE_MAX) {
		CHECK_INT(r->events[nb].ts, 33000);
		CHECK_INT(r->events[nb].file, fb);
	}
	/* the filter */
	struct tm_event_filter f = {"NEG", -1, -1, true};
	size_t m = 0;
	for (size_t i = 0; i < r->n_events; i++)
		m += tm_event_matches(r, i, &f);
	CHECK_INT(m, 2);
	f = (struct tm_event_filter){NULL, (int64_t)fb, -1, false};
	m = 0;
	for (size_t i = 0; i < r->n_events; i++)
		m += tm_event_matches(r, i, &f);
	CHECK_INT(m, 11); /* 10 slices and "end" */
out_v:
	tm_view_free(v);
out:
	tm_report_free(r);
	tm_session_close(s);
}

/* The probes of one frame of 200 columns over every track, at the whole
 * trace's zoom and zoomed in 100 times. */
static uint64_t
frame_work(const struct tm_report *r, const struct tm_view *v, int64_t span)
{
	struct tm_view_cell cells[200];
	uint64_t w0 = tm_work_count();
	for (uint32_t t = 0; t < r->n_tracks; t++)
		tm_view_cells(v, t, 0, span / 200 + 1, 200, cells);
	return tm_work_count() - w0;
}

static void
t_frame_cost(void)
{
	uint64_t w[2][2];
	size_t sizes[2] = {1000, 100000};
	for (int k = 0; k < 2; k++) {
		struct tm_session *s = NULL;
		char name[32];
		snprintf(name, sizeof name, "big%d.json", k);
		struct tm_report *r = evaluate(write_trace(name, sizes[k], 0, 1, true), NULL, &s);
		if (!r)
			return;
		CHECK(r->n_events >= 2 * sizes[k]);
		struct tm_view *v = tm_view_build(r);
		int64_t whole = (int64_t)sizes[k] * 10000;
		w[k][0] = frame_work(r, v, whole);
		w[k][1] = frame_work(r, v, whole / 100);
		tm_view_free(v);
		tm_report_free(r);
		tm_session_close(s);
	}
	/* a column is a few binary searches (log2 of 2 * 10^5 < 18 steps
	 * each) and at most 24 looks: bounded by the columns, whatever the
	 * events; 100 times the events add only a few steps per search */
	for (int k = 0; k < 2; k++)
		for (int z = 0; z < 2; z++)
			if (w[k][z] > 3 * 200 * (2 * 18 + 24)) {
				FAILF("%" PRIu64 " probes for a frame of 3 tracks x 200 columns (%zu events)",
				      w[k][z], sizes[k]);
			}
	CHECK(w[1][0] < 2 * w[0][0] + 3 * 200 * 8);
	CHECK(w[1][1] < 2 * w[0][1] + 3 * 200 * 8);
	printf("# frame probes: 1e3 events %" PRIu64 " / %" PRIu64 ", 1e5 events %" PRIu64 " / %" PRIu64
	       " (whole / zoomed 100x)\n",
	       w[0][0], w[0][1], w[1][0], w[1][1]);
}

/* Tracks named as trace_processor names them: a JSON thread by its M
 * events, its process too; the counter its process's, by its name; the
 * order by process, then thread (tracks of no pid first). */
static void
t_track_names(void)
{
	char p[128];
	snprintf(p, sizeof p, "%s/n.json", dir);
	FILE *f = fopen(p, "w");
	if (!f) {
		FAILF("write %s", p);
		return;
	}
	fputs("{\"traceEvents\":[\n"
	      "{\"name\":\"x\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":9,\"tid\":11},\n"
	      "{\"name\":\"y\",\"ph\":\"X\",\"ts\":2,\"dur\":1,\"pid\":5,\"tid\":6},\n"
	      "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":5,\"args\":{\"name\":\"Browser\"}},\n"
	      "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":5,\"tid\":6,\"args\":{\"name\":\"Main\"}},\n"
	      "{\"name\":\"mem\",\"ph\":\"C\",\"ts\":3,\"pid\":5,\"args\":{\"v\":1}}]}\n",
	      f);
	fclose(f);
	struct tm_session *s = NULL;
	struct tm_report *r = evaluate(p, NULL, &s);
	if (!r)
		return;
	uint32_t *ord = calloc(r->n_tracks + 1, sizeof *ord);
	struct tm_buf b;
	tm_buf_init(&b);
	CHECK(ord != NULL);
	if (!ord)
		goto out;
	tm_report_tracks_order(r, ord);
	/* pid 5 (Browser): its counter (no tid), thread 5 (the M process
	 * event's), thread 6 Main; then pid 9's thread 11 */
	const char *want[][2] = {{"Browser 5", "mem"}, {"Browser 5", "thread 5"},
				 {"Browser 5", "Main 6"}, {"process 9", "thread 11"}};
	CHECK_INT(r->n_tracks, 4);
	for (size_t i = 0; i < r->n_tracks && i < 4; i++) {
		tm_buf_reset(&b);
		tm_report_track_process(r, ord[i], &b);
		CHECK_STR(b.data ? b.data : "", want[i][0]);
		tm_buf_reset(&b);
		tm_report_track_title(r, ord[i], &b);
		CHECK_STR(b.data ? b.data : "", want[i][1]);
	}
out:
	tm_buf_fini(&b);
	free(ord);
	tm_report_free(r);
	tm_session_close(s);
}

/* Nested slices by depth (SliceTracker's): a slice inside another is at
 * depth 1, on its track's second lane; the lanes' columns hold only their
 * depth's slices. */
static void
t_depth_lanes(void)
{
	char p[128];
	snprintf(p, sizeof p, "%s/d.json", dir);
	FILE *f = fopen(p, "w");
	if (!f) {
		FAILF("write %s", p);
		return;
	}
	fputs("{\"traceEvents\":[\n"
	      "{\"name\":\"outer\",\"ph\":\"X\",\"ts\":0,\"dur\":10,\"pid\":1,\"tid\":1},\n"
	      "{\"name\":\"inner\",\"ph\":\"X\",\"ts\":2,\"dur\":2,\"pid\":1,\"tid\":1},\n"
	      "{\"name\":\"after\",\"ph\":\"X\",\"ts\":20,\"dur\":2,\"pid\":1,\"tid\":1}]}\n",
	      f);
	fclose(f);
	struct tm_session *s = NULL;
	struct tm_report *r = evaluate(p, NULL, &s);
	if (!r)
		return;
	struct tm_view *v = tm_view_build(r);
	size_t inner = SIZE_MAX, after = SIZE_MAX;
	for (size_t i = 0; i < r->n_events; i++) {
		if (r->events[i].name && !strcmp(r->events[i].name, "inner"))
			inner = i;
		if (r->events[i].name && !strcmp(r->events[i].name, "after"))
			after = i;
	}
	CHECK(inner != SIZE_MAX && after != SIZE_MAX);
	if (inner == SIZE_MAX || after == SIZE_MAX)
		goto out;
	CHECK_INT(r->events[inner].depth, 1);
	CHECK_INT(r->events[after].depth, 0);
	uint32_t t = r->events[inner].track;
	CHECK_INT(tm_view_track_depths(v, t), 2);
	/* columns of 1 us from 0: lane 0 starts at 0 and 20, lane 1 at 2 */
	struct tm_view_cell c0[25], c1[25];
	tm_view_cells_depth(v, t, 0, 0, 1000, 25, c0);
	tm_view_cells_depth(v, t, 1, 0, 1000, 25, c1);
	CHECK_INT(c0[0].n, 1);
	CHECK_INT(c0[2].n, 0);
	CHECK(c0[2].covered);
	CHECK_INT(c0[20].n, 1);
	CHECK_INT(c1[2].n, 1);
	CHECK(c1[2].first == inner);
	CHECK(!c1[5].covered && !c1[0].n && !c1[20].n);
out:
	tm_view_free(v);
	tm_report_free(r);
	tm_session_close(s);
}

int
main(void)
{
	snprintf(dir, sizeof dir, "/tmp/tm-view-XXXXXX");
	if (!mkdtemp(dir)) {
		printf("FAIL: view: mkdtemp\n");
		return 1;
	}
	RUN(t_tracks_and_order);
	RUN(t_track_names);
	RUN(t_depth_lanes);
	if (tm_work_count() == UINT64_MAX)
		printf("SKIP: t_frame_cost: probes are counted in the ASan build only\n");
	else
		RUN(t_frame_cost);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return 0;
}

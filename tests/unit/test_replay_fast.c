/* The fast replay (runs counted in bulk over snapshot pieces) against the
 * reference replay (every event converted one by one): generated archives
 * with millions of events, several clocks, snapshots with drift, deferred
 * packets, negative drops, machines and manifests; every figure of the two
 * reports must be equal. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracemerge.h"
#include "internal.h"
#include "replay.h"
#include "t.h"

static char dir[256];
/* TM_TEST_SCALE=N divides the generated inputs by N (tests/run.sh: under
 * ThreadSanitizer, where the parallel scan is what is looked at; the ASan
 * build runs them whole). */
static int scale = 1;

/* ---- a tiny protobuf writer ---- */
struct w {
	unsigned char *p;
	size_t n, cap;
};

static void
wb(struct w *w, const void *d, size_t n)
{
	if (w->n + n > w->cap) {
		w->cap = (w->n + n) * 2 + 64;
		w->p = realloc(w->p, w->cap);
		if (!w->p)
			abort();
	}
	memcpy(w->p + w->n, d, n);
	w->n += n;
}

static void
wv(struct w *w, uint64_t v)
{
	unsigned char b[10];
	size_t k = 0;
	while (v >= 0x80) {
		b[k++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b[k++] = (unsigned char)v;
	wb(w, b, k);
}

static void
wfv(struct w *w, uint32_t f, uint64_t v)
{
	wv(w, (uint64_t)f << 3);
	wv(w, v);
}

static void
wfl(struct w *w, uint32_t f, const struct w *sub)
{
	wv(w, (uint64_t)f << 3 | 2);
	wv(w, sub->n);
	wb(w, sub->p, sub->n);
}

static void
packet(struct w *out, struct w *pk)
{
	wfl(out, 1, pk);
	pk->n = 0;
}

static void
snapshot(struct w *out, const uint32_t *ids, const int64_t *ts, int n)
{
	struct w snap = {0}, ck = {0}, pk = {0};
	for (int i = 0; i < n; i++) {
		ck.n = 0;
		wfv(&ck, 1, ids[i]);
		wfv(&ck, 2, (uint64_t)ts[i]);
		wfl(&snap, 1, &ck);
	}
	wfl(&pk, 6, &snap);
	packet(out, &pk);
	free(snap.p);
	free(ck.p);
	free(pk.p);
}

static void
te(struct w *out, int64_t ts, uint32_t seq, uint32_t clock)
{
	struct w ev = {0}, pk = {0};
	wfv(&ev, 9, 3); /* TYPE_INSTANT */
	wfv(&ev, 11, 100 + seq);
	wfv(&pk, 8, (uint64_t)ts);
	if (clock)
		wfv(&pk, 58, clock);
	wfv(&pk, 10, seq);
	wfl(&pk, 11, &ev);
	packet(out, &pk);
	free(ev.p);
	free(pk.p);
}

static void
plain_packet(struct w *out, int64_t ts, uint32_t seq)
{
	struct w pt = {0}, pk = {0};
	wfv(&pt, 3, 1); /* process_tree.collection_end_timestamp: a pushed generic packet */
	wfv(&pk, 8, (uint64_t)ts);
	wfv(&pk, 10, seq);
	wfl(&pk, 2, &pt);
	packet(out, &pk);
	free(pt.p);
	free(pk.p);
}

/* dir/name created (truncated) for writing; its path in path[512] when
 * path is not NULL. */
static FILE *
create_in_dir(const char *name, char *path)
{
	char own[512], *p = path ? path : own;
	snprintf(p, 512, "%s/%s", dir, name);
	FILE *f = fopen(p, "wb");
	if (!f)
		abort();
	return f;
}

static void
save(const char *name, const struct w *w)
{
	FILE *f = create_in_dir(name, NULL);
	if (fwrite(w->p, 1, w->n, f) != w->n)
		abort();
	fclose(f);
}

/* phone: BOOTTIME/MONOTONIC/REALTIME snapshots every 50k events with drift;
 * TrackEvents on the default clock, some on MONOTONIC, some before the
 * first MONOTONIC snapshot (deferred to EOF), a few generic packets. */
static void
gen_phone(int n)
{
	struct w out = {0};
	te(&out, 500, 1, 3); /* MONOTONIC before MONOTONIC is known: deferred */
	int64_t boot = 1000000, mono = 400000, rt = 1700000000000000000;
	for (int i = 0; i < n; i++) {
		if (i % 50000 == 0) {
			uint32_t ids[3] = {6, 3, 1};
			int64_t ts[3] = {boot, mono, rt};
			snapshot(&out, ids, ts, 3);
			mono += 7; /* drift */
		}
		boot += 1000;
		mono += 1000;
		rt += 1000;
		if (i % 97 == 5)
			te(&out, mono, 2, 3);
		else if (i % 1009 == 7)
			plain_packet(&out, boot, 3);
		else
			te(&out, boot, 1 + (uint32_t)(i % 4), 0);
	}
	save("phone.pftrace", &out);
	free(out.p);
}

/* watch: another boot; REALTIME snapshots; events before its first snapshot
 * are taken raw. */
static void
gen_watch(int n)
{
	struct w out = {0};
	for (int i = 0; i < 100; i++)
		te(&out, 1000 + i, 1, 0);
	int64_t boot = 5000000000, rt = 1700000000000500000;
	for (int i = 0; i < n; i++) {
		if (i % 100000 == 0) {
			uint32_t ids[2] = {6, 1};
			int64_t ts[2] = {boot, rt};
			snapshot(&out, ids, ts, 2);
			rt += 3;
		}
		boot += 700;
		rt += 700;
		te(&out, boot, 1, 0);
	}
	save("watch.pftrace", &out);
	free(out.p);
}

/* sched: ftrace compact_sched bundles (the bulk of real Android traces),
 * four CPUs interleaved, 250 switches and 50 wakings per bundle, every other
 * bundle with 20 plain sched_switch events as well; no clock
 * snapshot for the first third (unrelatable under a REALTIME trace time),
 * then BOOTTIME/REALTIME snapshots. */
static void
gen_sched_as(const char *file, int n_bundles, int snap_from, int snap_every, bool plain)
{
	struct w out = {0}, b = {0}, cs = {0}, col = {0}, pk = {0};
	int64_t t = 2000000000, rt = 1700000000100000000;
	for (int i = 0; i < n_bundles; i++) {
		if (i >= snap_from && i % snap_every == 0) {
			uint32_t ids[2] = {6, 1};
			int64_t ts[2] = {t, rt + t};
			snapshot(&out, ids, ts, 2);
		}
		cs.n = 0;
		for (int part = 0; part < 2; part++) {
			int m = part ? 50 : 250;
			int64_t at = t + (i % 4) * 7;
			col.n = 0; /* timestamps: deltas */
			for (int k = 0; k < m; k++) {
				uint64_t d = (uint64_t)(k ? 900 + (k * 37) % 400 : 0);
				wv(&col, k ? d : (uint64_t)at);
			}
			wfl(&cs, part ? 7 : 1, &col);
			for (uint32_t f = part ? 8 : 2; f <= (part ? 10u : 4u); f++) {
				col.n = 0;
				for (int k = 0; k < m; k++)
					wv(&col, (uint64_t)(k % 100));
				wfl(&cs, f, &col);
			}
			col.n = 0;
			for (int k = 0; k < m; k++)
				wv(&col, (uint64_t)(k % 2));
			wfl(&cs, part ? 11 : 6, &col);
		}
		struct w name = {0};
		wb(&name, "swapper", 7);
		wfl(&cs, 5, &name);
		wb(&name, "x", 1);
		wfl(&cs, 5, &name);
		free(name.p);
		b.n = 0;
		wfv(&b, 1, (uint64_t)(i % 4));
		wfl(&b, 4, &cs);
		for (int k = 0; plain && i % 2 == 0 && k < 20; k++) { /* plain events too */
			struct w ev = {0}, sw = {0};
			wfv(&sw, 6, 100);
			wfv(&ev, 1, (uint64_t)(t + (i % 4) * 11 + k * 5000));
			wfl(&ev, 4, &sw);
			wfl(&b, 2, &ev);
			free(ev.p);
			free(sw.p);
		}
		wfl(&pk, 1, &b);
		wfv(&pk, 10, 9);
		packet(&out, &pk);
		if (i % 4 == 3)
			t += 300000;
	}
	save(file, &out);
	free(out.p);
	free(b.p);
	free(cs.p);
	free(col.p);
	free(pk.p);
}

static void
gen_sched(int n_bundles)
{
	gen_sched_as("sched.pftrace", n_bundles, n_bundles / 3, 500, true);
}

static void
gen_json(int n)
{
	FILE *f = create_in_dir("app.json", NULL);
	fputs("{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1}", f);
	for (int i = 0; i < n; i++)
		fprintf(f, ",{\"ph\":\"X\",\"name\":\"w\",\"ts\":%d.%03d,\"dur\":1,\"pid\":1,\"tid\":1}",
			i / 2, (i % 2) * 500);
	fputs("]}\n", f);
	fclose(f);
}

static void
gen_systrace(int n)
{
	FILE *f = create_in_dir("sys.systrace", NULL);
	fputs("# tracer: nop\n", f);
	for (int i = 0; i < n; i++)
		fprintf(f, "  app-100 (  100) [001] ...1  %d.%06d: tracing_mark_write: %s|100%s\n",
			1 + i / 1000000, i % 1000000, i % 2 ? "E" : "B", i % 2 ? "" : "|s");
	fclose(f);
}

static int
parse_m(const char *json, struct tm_manifest *m)
{
	struct tm_error e;
	if (tm_manifest_parse(json, strlen(json), m, &e) != TM_OK) {
		printf("# manifest: %s\n", e.msg);
		return -1;
	}
	return 0;
}

static void
compare(const struct tm_report *a, const struct tm_report *b, const char *what)
{
	CHECK_STR(a->error ? a->error : "", b->error ? b->error : "");
	CHECK_INT(a->dropped, b->dropped);
	CHECK_INT(a->n_stats, b->n_stats);
	for (size_t i = 0; i < a->n_stats && i < b->n_stats; i++) {
		CHECK_STR(a->stats[i].name, b->stats[i].name);
		CHECK_INT(a->stats[i].value, b->stats[i].value);
	}
	CHECK_INT(a->n_machines, b->n_machines);
	CHECK_INT(a->tt_clock, b->tt_clock);
	CHECK_INT(a->tt_file, b->tt_file);
	CHECK_INT(a->n_files, b->n_files);
	for (size_t i = 0; i < a->n_files && i < b->n_files; i++) {
		CHECK_INT(a->files[i].events, b->files[i].events);
		CHECK_INT(a->files[i].dropped, b->files[i].dropped);
		CHECK_INT(a->files[i].has_ts, b->files[i].has_ts);
		CHECK_INT(a->files[i].first_ts, b->files[i].first_ts);
		CHECK_INT(a->files[i].last_ts, b->files[i].last_ts);
		CHECK_INT(a->files[i].has_all_ts, b->files[i].has_all_ts);
		CHECK_INT(a->files[i].all_first_ts, b->files[i].all_first_ts);
		CHECK_INT(a->files[i].all_last_ts, b->files[i].all_last_ts);
		CHECK_INT(a->files[i].n_stats, b->files[i].n_stats);
	}
	if (t_failed_)
		printf("# differs for manifest: %s\n", what);
}

static const char *const manifests[] = {
	NULL,
	"{\"perfetto_manifest\":{\"version\":1,\"files\":[{\"path\":\"phone.pftrace\","
	"\"machine\":{\"name\":\"phone\"}},{\"path\":\"watch.pftrace\",\"machine\":{\"name\":"
	"\"watch\"}}]}}",
	"{\"perfetto_manifest\":{\"version\":1,\"trace_time\":{\"clock\":\"REALTIME\"},\"files\":"
	"[{\"path\":\"phone.pftrace\",\"machine\":{\"name\":\"phone\"}},{\"path\":\"watch.pftrace\","
	"\"machine\":{\"name\":\"watch\"}}]}}",
	"{\"perfetto_manifest\":{\"version\":1,\"files\":[{\"path\":\"phone.pftrace\",\"machine\":"
	"{\"name\":\"phone\"}},{\"path\":\"watch.pftrace\",\"machine\":{\"name\":\"watch\"},"
	"\"clocks\":{\"clock\":\"BOOTTIME\",\"sync_to\":{\"file\":\"phone.pftrace\",\"clock\":"
	"\"BOOTTIME\"},\"offset_ns\":-5000500000}},{\"path\":\"app.json\",\"clocks\":{\"sync_to\":"
	"{\"file\":\"phone.pftrace\",\"clock\":\"BOOTTIME\"},\"offset_ns\":-40000000}}]}}",
	"{\"perfetto_manifest\":{\"version\":1,\"trace_time\":{\"clock\":\"MONOTONIC\"},\"files\":"
	"[{\"path\":\"sys.systrace\",\"machine\":{\"name\":\"m1\"}},{\"path\":\"phone.pftrace\","
	"\"machine\":{\"name\":\"m1\"}},{\"path\":\"app.json\",\"clocks\":{\"sync_to\":{\"file\":"
	"\"sys.systrace\",\"clock\":\"MONOTONIC\"},\"offset_ns\":123456789}}]}}",
	"{\"perfetto_manifest\":{\"version\":1,\"files\":[{\"path\":\"phone.pftrace\"},{\"path\":"
	"\"sys.systrace\",\"clocks\":{\"clock\":\"MONOTONIC\",\"sync_to\":{\"file\":"
	"\"phone.pftrace\",\"clock\":\"BOOTTIME\"},\"offset_ns\":-1500000000}}]}}",
	/* sched on its own machine in REALTIME: its first third cannot convert */
	"{\"perfetto_manifest\":{\"version\":1,\"trace_time\":{\"clock\":\"REALTIME\"},\"files\":"
	"[{\"path\":\"sched.pftrace\",\"machine\":{\"name\":\"tv\"}}]}}",
	/* sched pinned before phone's BOOTTIME: part of it goes negative */
	"{\"perfetto_manifest\":{\"version\":1,\"trace_time\":{\"clock\":\"BOOTTIME\",\"file\":"
	"\"phone.pftrace\"},\"files\":[{\"path\":\"phone.pftrace\"},{\"path\":\"sched.pftrace\","
	"\"machine\":{\"name\":"
	"\"tv\"},\"clocks\":{\"clock\":\"BOOTTIME\",\"sync_to\":{\"file\":\"phone.pftrace\","
	"\"clock\":\"BOOTTIME\"},\"offset_ns\":-2100000000}}]}}",
	/* phone owns the timeline: watch's TrackEvents go negative (not counted),
	 * app.json's first 40 ms are dropped (counted) */
	"{\"perfetto_manifest\":{\"version\":1,\"trace_time\":{\"clock\":\"BOOTTIME\",\"file\":"
	"\"phone.pftrace\"},\"files\":[{\"path\":\"phone.pftrace\",\"machine\":{\"name\":"
	"\"phone\"}},{\"path\":\"watch.pftrace\",\"machine\":{\"name\":\"watch\"},\"clocks\":"
	"{\"clock\":\"BOOTTIME\",\"sync_to\":{\"file\":\"phone.pftrace\",\"clock\":"
	"\"BOOTTIME\"},\"offset_ns\":-5000500000}},{\"path\":\"app.json\",\"clocks\":{\"sync_to\":"
	"{\"file\":\"phone.pftrace\",\"clock\":\"BOOTTIME\"},\"offset_ns\":-40000000}}]}}",
};

static void
fast_equals_reference(void)
{
	char p1[512], p2[512], p3[512], p4[512], p5[512];
	snprintf(p1, sizeof p1, "%s/phone.pftrace", dir);
	snprintf(p2, sizeof p2, "%s/watch.pftrace", dir);
	snprintf(p3, sizeof p3, "%s/app.json", dir);
	snprintf(p4, sizeof p4, "%s/sys.systrace", dir);
	snprintf(p5, sizeof p5, "%s/sched.pftrace", dir);
	const char *paths[5] = {p1, p2, p3, p4, p5};
	struct tm_session *fast, *ref;
	struct tm_session_opts of = {0}, orf = {.plain_replay = true};
	struct tm_error e;
	CHECK(tm_session_open(&fast, paths, 5, &of, &e) == TM_OK);
	CHECK(tm_session_open(&ref, paths, 5, &orf, &e) == TM_OK);
	if (t_failed_)
		return;
	uint64_t total = 0;
	for (size_t k = 0; k < sizeof manifests / sizeof manifests[0]; k++) {
		struct tm_manifest m;
		tm_manifest_init(&m);
		if (manifests[k] && parse_m(manifests[k], &m)) {
			CHECK(!"manifest parses");
			continue;
		}
		struct tm_report *a, *b;
		CHECK(tm_session_evaluate(fast, manifests[k] ? &m : NULL, &a, &e) == TM_OK);
		CHECK(tm_session_evaluate(ref, manifests[k] ? &m : NULL, &b, &e) == TM_OK);
		if (!t_failed_) {
			compare(a, b, manifests[k] ? manifests[k] : "(none)");
			for (size_t i = 0; i < a->n_files; i++)
				total += a->files[i].events;
			total += a->dropped;
		}
		tm_report_free(a);
		tm_report_free(b);
		tm_manifest_fini(&m);
	}
	/* the archives really are large and the manifests really drop events */
	CHECK(total > 6000000 / (uint64_t)scale);
	tm_session_close(fast);
	tm_session_close(ref);
}

/* The evaluations these tests ask for: every event listed, or the dropped
 * ones only (the workbench's list). */
static const struct tm_eval_opts EV_FULL = {.events = true};
static const struct tm_eval_opts EV_DROPPED = {.events = true, .dropped_only = true};

/* tm_session_evaluate_ex with the error left here. */
static enum tm_status
eval(struct tm_session *s, const struct tm_manifest *m, const struct tm_eval_opts *o,
     struct tm_report **r)
{
	struct tm_error e;
	return tm_session_evaluate_ex(s, m, o, r, &e);
}

/* A session that keeps per-event details answers an edit from the
 * numbers' fast path (its scans folded into runs: tm_eval_opts.events
 * false) and computes the events list on request: both must give the same
 * numbers, equal to a session without details, and the events list must
 * add up to them (each file's events and each drop stat, where the file's
 * scanner records a detail for every event).  Small inputs of every shape
 * (the events path is linear and slow under ASan). */
static char small[300];

static void
summary_equals_events(void)
{
	char p[5][600];
	const char *names[5] = {"phone.pftrace", "watch.pftrace", "app.json", "sys.systrace",
				"sched.pftrace"};
	const char *paths[5];
	for (int i = 0; i < 5; i++) {
		snprintf(p[i], sizeof p[i], "%s/%s", small, names[i]);
		paths[i] = p[i];
	}
	struct tm_session *ev, *plain;
	struct tm_session_opts oe = {.keep_events = true}, op = {0};
	struct tm_error e;
	CHECK(tm_session_open(&ev, paths, 5, &oe, &e) == TM_OK);
	CHECK(tm_session_open(&plain, paths, 5, &op, &e) == TM_OK);
	if (t_failed_)
		return;
	CHECK(tm_session_scan(ev, SIZE_MAX, NULL, &e) == TM_OK);
	CHECK(tm_session_keeps_events(ev) && !tm_session_keeps_events(plain));
	uint64_t listed = 0, listed_drops = 0, missing_seen = 0;
	int checked_files = 0;
	for (size_t k = 0; k < sizeof manifests / sizeof manifests[0] && !t_failed_; k++) {
		struct tm_manifest m;
		tm_manifest_init(&m);
		if (manifests[k] && parse_m(manifests[k], &m)) {
			CHECK(!"manifest parses");
			continue;
		}
		const struct tm_manifest *mm = manifests[k] ? &m : NULL;
		struct tm_report *sum = NULL, *full = NULL, *ref = NULL;
		const struct tm_eval_opts fast = {.events = false};
		CHECK(eval(ev, mm, &fast, &sum) == TM_OK);
		CHECK(eval(ev, mm, &EV_FULL, &full) == TM_OK);
		CHECK(tm_session_evaluate(plain, mm, &ref, &e) == TM_OK);
		if (!t_failed_) {
			CHECK_INT(sum->n_events, 0);
			CHECK(full->n_events > 0);
			compare(sum, full, manifests[k] ? manifests[k] : "(none)");
			compare(sum, ref, manifests[k] ? manifests[k] : "(none)");
			CHECK(tm_report_same_numbers(sum, full));
		}
		/* every missing event is listed, under its stat (the events
		 * missing are one figure whichever way it is counted) */
		for (size_t f = 0; !t_failed_ && f < full->n_files; f++) {
			const struct tm_report_file *rf = &full->files[f];
			CHECK_INT(rf->missing, sum->files[f].missing);
			uint64_t all = 0;
			for (size_t j = 0; j < rf->n_missing_stats; j++) {
				uint64_t d = 0;
				for (size_t i = 0; i < full->n_events; i++)
					d += full->events[i].file == f &&
					     full->events[i].drop == rf->missing_stats[j].id + 1;
				CHECK_INT(d, rf->missing_stats[j].value);
				CHECK_INT(sum->files[f].missing_stats[j].value, rf->missing_stats[j].value);
				all += d;
			}
			uint64_t listed_missing = 0;
			for (size_t i = 0; i < full->n_events; i++)
				listed_missing += full->events[i].file == f && full->events[i].drop;
			CHECK_INT(listed_missing, all);
			CHECK_INT(all, rf->missing);
			missing_seen += rf->missing;
		}
		/* the list adds up to the numbers */
		for (size_t f = 0; !t_failed_ && f < full->n_files; f++) {
			const struct tm_report_file *rf = &full->files[f];
			uint64_t n = 0;
			for (size_t i = 0; i < full->n_events; i++)
				n += full->events[i].file == f;
			CHECK(n <= rf->events);
			if (n != rf->events || !n)
				continue; /* its scanner keeps no detail for some events */
			checked_files++;
			listed += n;
			for (size_t j = 0; j < rf->n_stats; j++) {
				uint64_t d = 0;
				for (size_t i = 0; i < full->n_events; i++)
					d += full->events[i].file == f && full->events[i].drop &&
					     !strcmp(tm_report_event_dropped(&full->events[i]),
						     rf->stats[j].name);
				/* one event per negative drop; a clock failure
				 * may count where no event is lost (a snapshot)
				 * or once for a compact_sched array of many (the
				 * events missing, above, count the events) */
				if (rf->stats[j].id == TM_STAT_NEG_DROPPED)
					CHECK_INT(d, rf->stats[j].value);
				listed_drops += d;
			}
		}
		/* dropped only (the workbench's list): the same dropped events */
		struct tm_report *dro = NULL;
		CHECK(eval(ev, mm, &EV_DROPPED, &dro) == TM_OK);
		if (!t_failed_) {
			CHECK(tm_report_same_numbers(dro, full));
			size_t j = 0;
			for (size_t i = 0; i < full->n_events && !t_failed_; i++) {
				if (!full->events[i].drop)
					continue;
				CHECK(j < dro->n_events);
				if (t_failed_)
					break;
				CHECK_INT(dro->events[j].ts, full->events[i].ts);
				CHECK_INT(dro->events[j].file, full->events[i].file);
				CHECK_STR(tm_report_event_dropped(&dro->events[j]),
					  tm_report_event_dropped(&full->events[i]));
				j++;
			}
			CHECK_INT(j, dro->n_events);
		}
		tm_report_free(dro);
		tm_report_free(sum);
		tm_report_free(full);
		tm_report_free(ref);
		tm_manifest_fini(&m);
	}
	/* not vacuous: files were checked event by event, and some dropped */
	CHECK(checked_files >= 10);
	CHECK(listed > 100000 / (uint64_t)scale);
	CHECK(listed_drops > 1000 / (uint64_t)scale);
	CHECK(missing_seen > 1000 / (uint64_t)scale);
	/* a cancelled evaluation returns no report */
	volatile bool stop = true;
	struct tm_report *r = NULL;
	struct tm_eval_opts oc = {.events = true, .cancel = &stop};
	CHECK(eval(ev, NULL, &oc, &r) == TM_ERR_CANCELLED && !r);
	tm_session_close(ev);
	tm_session_close(plain);
}

/* Whether two reports list the same events, field by field. */
static bool
same_events(const struct tm_report *a, const struct tm_report *b)
{
	if (a->n_events != b->n_events)
		return false;
	for (size_t i = 0; i < a->n_events; i++) {
		const struct tm_report_event *x = &a->events[i], *y = &b->events[i];
		if (x->file != y->file || x->ts != y->ts || x->dur != y->dur ||
		    x->machine != y->machine || x->phase != y->phase || x->is_slice != y->is_slice ||
		    !tm_same_str(x->name, y->name) || x->drop != y->drop)
			return false;
	}
	return true;
}

struct lister {
	struct tm_session *s;
	const struct tm_manifest *m;
	struct tm_report *first;
	int n_ok, n_same;
};

/* the workbench's details thread: dropped events listed, one per edit */
static void *
lister_run(void *arg)
{
	struct lister *l = arg;
	for (int i = 0; i < 4; i++) {
		struct tm_report *r;
		if (eval(l->s, l->m, &EV_DROPPED, &r) != TM_OK)
			continue;
		l->n_ok++;
		if (!l->first) {
			l->first = r;
			continue;
		}
		l->n_same += same_events(l->first, r);
		tm_report_free(r);
	}
	return NULL;
}

/* The five small files' session, events kept, scanned, with manifest 3
 * (it drops events) in *m (tm_manifest_fini it); NULL if it did not open. */
static struct tm_session *
small_session_dropping(struct tm_manifest *m)
{
	char p[5][600];
	const char *names[5] = {"phone.pftrace", "watch.pftrace", "app.json", "sys.systrace",
				"sched.pftrace"};
	const char *paths[5];
	for (int i = 0; i < 5; i++) {
		snprintf(p[i], sizeof p[i], "%s/%s", small, names[i]);
		paths[i] = p[i];
	}
	struct tm_session *s;
	struct tm_session_opts oe = {.keep_events = true};
	struct tm_error e;
	tm_manifest_init(m);
	CHECK(tm_session_open(&s, paths, 5, &oe, &e) == TM_OK);
	if (t_failed_)
		return NULL;
	CHECK(tm_session_scan(s, SIZE_MAX, NULL, &e) == TM_OK);
	CHECK(!parse_m(manifests[3], m)); /* drops events */
	return s;
}

/* A session's evaluations write their events lists into the buffer of a
 * list freed before (report.c tm_evpool): the lists are the same whether
 * the buffer is fresh or reused, two reports alive at once never share
 * one, a cancelled evaluation gives it back, evaluations on another thread
 * and reports freed there or after the session is closed are safe (ASan,
 * TSan). */
static void
events_buffer_reused(void)
{
	struct tm_manifest m;
	struct tm_session *s = small_session_dropping(&m);
	if (!s)
		return;
	struct tm_report *r1 = NULL, *r2 = NULL, *r3 = NULL, *d1 = NULL, *d2 = NULL, *c = NULL;
	CHECK(eval(s, &m, &EV_FULL, &r1) == TM_OK);
	CHECK(eval(s, &m, &EV_FULL, &r2) == TM_OK);
	if (t_failed_)
		return;
	CHECK(r1->n_events > 1000 && r1->dropped > 0);
	CHECK(r1->events != r2->events);
	CHECK(same_events(r1, r2));
	const struct tm_report_event *was = r1->events;
	tm_report_free(r1);
	CHECK(eval(s, &m, &EV_FULL, &r3) == TM_OK);
	if (t_failed_)
		return;
	CHECK(r3->events == was); /* the freed list's buffer */
	CHECK(same_events(r2, r3));
	tm_report_free(r3);
	/* the dropped ones only, into the (larger) buffer of a full list */
	CHECK(eval(s, &m, &EV_DROPPED, &d1) == TM_OK);
	if (t_failed_)
		return;
	CHECK(d1->events == was);
	size_t n_dropped = 0;
	for (size_t i = 0; i < r2->n_events; i++)
		n_dropped += r2->events[i].drop != 0;
	CHECK(n_dropped > 0 && d1->n_events == n_dropped);
	/* cancelled: no report, the buffer back for the next */
	volatile bool stop = true;
	struct tm_eval_opts oc = {.events = true, .cancel = &stop};
	tm_report_free(d1);
	CHECK(eval(s, &m, &oc, &c) == TM_ERR_CANCELLED && !c);
	CHECK(eval(s, &m, &EV_DROPPED, &d2) == TM_OK);
	if (t_failed_)
		return;
	CHECK(d2->events == was);
	/* a thread lists the dropped events while this one evaluates and
	 * frees full lists */
	struct lister l = {.s = s, .m = &m};
	pthread_t th;
	CHECK(pthread_create(&th, NULL, lister_run, &l) == 0);
	for (int i = 0; i < 4; i++) {
		struct tm_report *r;
		if (eval(s, &m, &EV_FULL, &r) == TM_OK) {
			CHECK(same_events(r2, r));
			tm_report_free(r);
		}
	}
	pthread_join(th, NULL);
	CHECK_INT(l.n_ok, 4);
	CHECK_INT(l.n_same, 3);
	CHECK(l.first && same_events(l.first, d2));
	tm_report_free(l.first);
	tm_report_free(d2);
	/* a report freed after its session is closed */
	CHECK(eval(s, &m, &EV_FULL, &r1) == TM_OK);
	tm_session_close(s);
	tm_report_free(r1);
	tm_report_free(r2);
	tm_manifest_fini(&m);
}

/* A full events list written into the smaller pooled buffer of a
 * dropped-only list (grown for it where it is): the same list as one
 * written into a fresh buffer. */
static void
events_buffer_grown(void)
{
	struct tm_manifest m;
	struct tm_session *s = small_session_dropping(&m);
	if (!s)
		return;
	struct tm_report *ref = NULL, *d = NULL, *r = NULL;
	CHECK(eval(s, &m, &EV_FULL, &ref) == TM_OK);
	CHECK(eval(s, &m, &EV_DROPPED, &d) == TM_OK);
	if (!t_failed_) {
		CHECK(d->n_events > 0 && d->n_events * 4 < ref->n_events);
		tm_report_free(d); /* its buffer to the pool */
		CHECK(eval(s, &m, &EV_FULL, &r) == TM_OK);
		if (!t_failed_)
			CHECK(same_events(ref, r));
		tm_report_free(r);
	}
	tm_report_free(ref);
	tm_session_close(s);
	tm_manifest_fini(&m);
}

/* The same with every large run's deltas in the spill file (oplog_spill.c), read
 * back block by block by the fast replay (oplog.h declares the hooks). */

static void
fast_equals_reference_spilled(void)
{
	size_t keep = tm_oplog_spill_after;
	tm_oplog_spill_after = 0;
	fast_equals_reference();
	tm_oplog_spill_after = keep;
}

/* Runs inside one snapshot piece (compact_sched only, one snapshot, first;
 * the trace time its own clock, or REALTIME through the snapshot) are
 * counted from the
 * values the log keeps in memory: with every large run spilled, the fast
 * replay reads none back (it read element 1 of each, twice, per edit) and
 * reports what the plain replay does. */
static void
spilled_runs_not_read(void)
{
	size_t keep = tm_oplog_spill_after, keep_lane = tm_oplog_lane_max;
	tm_oplog_spill_after = 0;
	tm_oplog_lane_max = 5000; /* many runs */
	char p1[512];
	snprintf(p1, sizeof p1, "%s/sched1.pftrace", dir);
	const char *paths[1] = {p1};
	struct tm_session *fast = NULL, *ref = NULL;
	struct tm_session_opts of = {0}, orf = {.plain_replay = true};
	struct tm_error e;
	struct tm_report *a, *b;
	uint64_t w0 = __atomic_load_n(&tm_oplog_spill_writes, __ATOMIC_RELAXED);
	CHECK(tm_session_open(&fast, paths, 1, &of, &e) == TM_OK);
	CHECK(tm_session_open(&ref, paths, 1, &orf, &e) == TM_OK);
	/* the first evaluation scans */
	CHECK(!t_failed_ && tm_session_evaluate(fast, NULL, &a, &e) == TM_OK);
	if (!t_failed_)
		tm_report_free(a);
	CHECK(__atomic_load_n(&tm_oplog_spill_writes, __ATOMIC_RELAXED) - w0 > 100 / (uint64_t)scale);
	static const char *const ms[] = {
		NULL,
		"{\"perfetto_manifest\":{\"version\":1,\"trace_time\":{\"clock\":\"REALTIME\"},"
		"\"files\":[{\"path\":\"sched1.pftrace\",\"machine\":{\"name\":\"tv\"}}]}}",
	};
	for (size_t k = 0; k < sizeof ms / sizeof ms[0] && !t_failed_; k++) {
		struct tm_manifest m;
		tm_manifest_init(&m);
		if (ms[k] && parse_m(ms[k], &m)) {
			CHECK(!"manifest parses");
			continue;
		}
		uint64_t r0 = __atomic_load_n(&tm_oplog_spill_reads, __ATOMIC_RELAXED);
		CHECK(tm_session_evaluate(fast, ms[k] ? &m : NULL, &a, &e) == TM_OK);
		CHECK_INT(__atomic_load_n(&tm_oplog_spill_reads, __ATOMIC_RELAXED) - r0, 0);
		CHECK(tm_session_evaluate(ref, ms[k] ? &m : NULL, &b, &e) == TM_OK);
		if (!t_failed_) {
			compare(a, b, ms[k] ? ms[k] : "(none)");
			CHECK(a->n_files == 1 && a->files[0].events > 1000000 / (uint64_t)scale);
		}
		tm_report_free(a);
		tm_report_free(b);
		tm_manifest_fini(&m);
	}
	if (fast)
		tm_session_close(fast);
	if (ref)
		tm_session_close(ref);
	tm_oplog_spill_after = keep;
	tm_oplog_lane_max = keep_lane;
}

/* ARRAY runs flushed whenever a lane would pass 600 values (two or three arrays)
 * (oplog.c tm_oplog_lane_max: uneven lanes flush early instead of
 * widening every slot): the same reports as the plain replay's. */
static void
fast_equals_reference_short_lanes(void)
{
	size_t keep = tm_oplog_lane_max;
	tm_oplog_lane_max = 600;
	fast_equals_reference();
	tm_oplog_lane_max = keep;
}

/* An events list grows by BIG_XGROW (replay_slices.c tm_rp_record_event) and is given back by
 * tm_events_free, also through the pool: every size on the way, the
 * mapped ones (release builds) included, freed by the one that grew it. */
static void
events_free_matches_growth(void)
{
	struct tm_evpool *pl = tm_evpool_new();
	for (size_t want = 1; want <= ((size_t)8 << 20) / sizeof(struct tm_report_event); want *= 3) {
		struct tm_report_event *v = NULL;
		size_t cap = 0;
		BIG_XGROW(v, cap, want);
		memset(&v[want - 1], 0, sizeof *v);
		CHECK(cap >= want);
		tm_events_free(v, cap);
		v = tm_evpool_take(pl, &cap);
		BIG_XGROW(v, cap, want);
		v[want - 1].ts = (int64_t)want;
		tm_evpool_give(pl, v, cap);
	}
	tm_evpool_unref(pl);
}

static void
drops_happen(void)
{
	/* guard against a vacuous comparison: manifests 3, 5, 6, 7 drop events */
	char p1[512], p2[512], p3[512], p4[512], p5[512];
	snprintf(p1, sizeof p1, "%s/phone.pftrace", dir);
	snprintf(p2, sizeof p2, "%s/watch.pftrace", dir);
	snprintf(p3, sizeof p3, "%s/app.json", dir);
	snprintf(p4, sizeof p4, "%s/sys.systrace", dir);
	snprintf(p5, sizeof p5, "%s/sched.pftrace", dir);
	const char *paths[5] = {p1, p2, p3, p4, p5};
	struct tm_session *s;
	struct tm_error e;
	CHECK(tm_session_open(&s, paths, 5, NULL, &e) == TM_OK);
	if (t_failed_)
		return;
	int with_drops = 0;
	for (size_t k = 1; k < sizeof manifests / sizeof manifests[0]; k++) {
		struct tm_manifest m;
		tm_manifest_init(&m);
		if (parse_m(manifests[k], &m))
			continue;
		struct tm_report *r;
		if (tm_session_evaluate(s, &m, &r, &e) == TM_OK) {
			if (r->dropped > 1000)
				with_drops++;
			printf("# manifest %zu: dropped %llu%s%s\n", k, (unsigned long long)r->dropped,
			       r->error ? ", error: " : "", r->error ? r->error : "");
			tm_report_free(r);
		}
		tm_manifest_fini(&m);
	}
	CHECK(with_drops >= 4);
	tm_session_close(s);
}

/* Per-event detail: each E closes the latest open B of its (file, machine,
 * track); Es without a B close nothing.  Ring-buffer traces start with many
 * of those (their Bs were overwritten): 20,000 unmatched Es on two tracks,
 * then nested and interleaved slices.  The pairs are worked out here with a
 * stack per pid and every duration compared (events arrive in line order). */
#define BE_N 60000
static int be_end[BE_N]; /* line of the E closing the B on line i, else -1 */

static void
unmatched_e_pairing(void)
{
	char path[512];
	FILE *f = create_in_dir("be.systrace", path);
	fputs("# tracer: nop\n", f);
	int stack[2][BE_N], depth[2] = {0, 0};
	unsigned rnd = 12345;
	for (int i = 0; i < BE_N; i++) {
		int pid = 100 + (i % 3 == 0);
		int t = pid - 100;
		bool b;
		rnd = rnd * 1103515245u + 12345u;
		if (i < 20000)
			b = false; /* the opening Bs are gone */
		else
			b = depth[t] == 0 || (rnd >> 16) % 5 < 3;
		be_end[i] = -1;
		if (b) {
			stack[t][depth[t]++] = i;
		} else if (depth[t]) {
			be_end[stack[t][--depth[t]]] = i;
		}
		fprintf(f, "  app-%d (  %d) [001] ...1  1.%06d: tracing_mark_write: %s|%d%s\n", pid,
			pid, i, b ? "B" : "E", pid, b ? "|s" : "");
	}
	fclose(f);
	const char *paths[1] = {path};
	struct tm_session *s;
	struct tm_session_opts o = {.keep_events = true};
	struct tm_error e;
	CHECK(tm_session_open(&s, paths, 1, &o, &e) == TM_OK);
	if (t_failed_)
		return;
	struct tm_report *r;
	CHECK(tm_session_evaluate(s, NULL, &r, &e) == TM_OK);
	if (!t_failed_) {
		CHECK_INT(r->n_events, BE_N);
		size_t bad = 0, paired = 0;
		for (size_t i = 0; i < r->n_events && i < BE_N; i++) {
			const struct tm_report_event *ev = &r->events[i];
			if (i && ev->ts <= r->events[i - 1].ts)
				bad++; /* not in line order */
			int64_t want = -1;
			if (ev->phase == 'B' && be_end[i] >= 0)
				want = r->events[be_end[i]].ts - ev->ts;
			if (ev->dur != want && bad++ < 5)
				printf("# line %zu phase %c: dur %lld, want %lld\n", i, ev->phase,
				       (long long)ev->dur, (long long)want);
			paired += want >= 0;
		}
		CHECK_INT(bad, 0);
		CHECK(paired > 10000);
		tm_report_free(r);
	}
	tm_session_close(s);
}

/* A file whose events land on many machine rows: the file's row list
 * (replay.c note_file_row: one row inline, then a block whose capacity
 * doubles at each power of two) must hold every row once, in first-seen
 * order, past each growth (2, 4, 8, 16). */
static void
file_rows_grow(void)
{
	struct w out = {0};
	for (int k = 0; k < 3; k++)
		for (uint32_t m = 1; m <= 17; m++) {
			struct w pt = {0}, pk = {0};
			wfv(&pt, 3, 1);
			wfv(&pk, 8, (uint64_t)(1000 + 100 * k + m));
			wfv(&pk, 10, 1);
			wfl(&pk, 2, &pt);
			wfv(&pk, 98, m); /* TracePacket.machine_id */
			packet(&out, &pk);
			free(pt.p);
			free(pk.p);
		}
	save("machines.pftrace", &out);
	free(out.p);
	char path[512];
	snprintf(path, sizeof path, "%s/machines.pftrace", dir);
	const char *paths[1] = {path};
	struct tm_session *s;
	struct tm_error e;
	CHECK(tm_session_open(&s, paths, 1, NULL, &e) == TM_OK);
	if (t_failed_)
		return;
	struct tm_report *r;
	CHECK(tm_session_evaluate(s, NULL, &r, &e) == TM_OK);
	if (!t_failed_) {
		CHECK_INT(r->n_files, 1);
		if (r->n_files == 1) {
			const struct tm_report_file *f = &r->files[0];
			CHECK_INT(f->n_machines, 17);
			for (size_t i = 0; i < f->n_machines; i++)
				for (size_t j = 0; j < i; j++)
					CHECK(f->machines[i] != f->machines[j]);
			for (size_t i = 1; i < f->n_machines; i++)
				CHECK(f->machines[i] > f->machines[i - 1]); /* first seen */
		}
		tm_report_free(r);
	}
	tm_session_close(s);
}

/* clock_sync_mixed_clock_sources: a second file on the host machine
 * (its tracker not primary) that converted a timestamp before its first
 * ClockSnapshot counts it once, at that snapshot; one whose snapshot comes
 * first does not (replay_clock.c tm_rp_add_snapshot, tm_tracker.converted). */
static uint64_t
mixed_sources(bool event_first)
{
	uint32_t ids[2] = {6, 3}; /* BOOTTIME, MONOTONIC */
	int64_t ts[2] = {1000000, 2000000};
	struct w a = {0}, b = {0};
	snapshot(&a, ids, ts, 2);
	te(&a, 1000100, 1, 0);
	if (event_first)
		te(&b, 1000200, 2, 3); /* MONOTONIC: converted (the default clock is not: raw) */
	snapshot(&b, ids, ts, 2);
	te(&b, 1000300, 2, 0);
	save("mixed_a.pftrace", &a);
	save("mixed_b.pftrace", &b);
	free(a.p);
	free(b.p);
	char pa[512], pb[512];
	snprintf(pa, sizeof pa, "%s/mixed_a.pftrace", dir);
	snprintf(pb, sizeof pb, "%s/mixed_b.pftrace", dir);
	const char *paths[2] = {pa, pb};
	struct tm_session *s;
	struct tm_error e;
	uint64_t v = UINT64_MAX;
	CHECK(tm_session_open(&s, paths, 2, NULL, &e) == TM_OK);
	if (t_failed_)
		return v;
	struct tm_report *r;
	CHECK(tm_session_evaluate(s, NULL, &r, &e) == TM_OK);
	if (!t_failed_) {
		v = tm_stat_value(r->stats, r->n_stats, TM_STAT_MIXED_SOURCES);
		tm_report_free(r);
	}
	tm_session_close(s);
	return v;
}

static void
mixed_sources_after_conversion(void)
{
	CHECK_INT(mixed_sources(true), 1);
	CHECK_INT(mixed_sources(false), 0);
}

int
main(void)
{
	snprintf(dir, sizeof dir, "/tmp/tm-replay-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	if (getenv("TM_TEST_SCALE") && atoi(getenv("TM_TEST_SCALE")) > 1)
		scale = atoi(getenv("TM_TEST_SCALE"));
	gen_phone(1500000 / scale);
	gen_watch(400000 / scale);
	gen_json(300000 / scale);
	gen_systrace(200000 / scale);
	gen_sched(4000 / scale);
	gen_sched_as("sched1.pftrace", 4000 / scale, 0, 1 << 30, false);
	/* the same shapes, small, for the events path */
	char big[256];
	memcpy(big, dir, sizeof big);
	snprintf(small, sizeof small, "%s/small", big);
	if (mkdir(small, 0700) != 0 || strlen(small) >= sizeof dir)
		return 1;
	memcpy(dir, small, strlen(small) + 1);
	gen_phone(60000 / scale);
	gen_watch(20000 / scale);
	gen_json(15000 / scale);
	gen_systrace(10000 / scale);
	gen_sched(200 / scale + 1);
	memcpy(dir, big, sizeof dir);
	RUN(summary_equals_events);
	RUN(events_buffer_reused);
	RUN(events_buffer_grown);
	RUN(events_free_matches_growth);
	RUN(fast_equals_reference);
	RUN(fast_equals_reference_spilled);
	RUN(fast_equals_reference_short_lanes);
	RUN(spilled_runs_not_read);
	RUN(drops_happen);
	RUN(unmatched_e_pairing);
	RUN(file_rows_grow);
	RUN(mixed_sources_after_conversion);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (getenv("TM_TEST_KEEP"))
		printf("# kept %s\n", dir);
	else if (system(cmd) != 0)
		return 1;
	return 0;
}

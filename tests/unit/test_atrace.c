/* SPDX-License-Identifier: MIT */
/* atrace.c: the one parser of trace_marker text (systrace_parser.h
 * ParseSystraceTracePoint) and what each point becomes; the same names,
 * kinds and systrace_parse_failure counts from a systrace text file and
 * from ftrace print / zero / tracing_mark_write events of a proto trace. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "atrace.h"
#include "t.h"

static char *
point_str(const char *text, size_t len)
{
	struct tm_atrace_point p;
	struct tm_buf clean, out;
	tm_buf_init(&clean);
	tm_buf_init(&out);
	enum tm_atrace_result r = tm_atrace_parse(text, len, &clean, &p);
	if (r == TM_ATRACE_FAILURE)
		tm_buf_adds(&out, "FAIL");
	else if (r == TM_ATRACE_UNSUPPORTED)
		tm_buf_adds(&out, "UNSUPPORTED");
	else
		tm_buf_addf(&out, "%c %u [%.*s] %lld [%.*s]", p.phase, p.tgid, (int)p.name_len,
			    p.name ? p.name : "", (long long)p.value, (int)p.track_len,
			    p.track ? p.track : "");
	tm_buf_fini(&clean);
	return tm_buf_steal(&out);
}

#define P(text, want)                                                                              \
	do {                                                                                       \
		char *s_ = point_str(text, sizeof text - 1);                                       \
		CHECK_STR(s_, want);                                                               \
		free(s_);                                                                          \
	} while (0)

/* ParseSystraceTracePoint's cases, each kind and its failures. */
static void
t_parse(void)
{
	P("B|1636|pokeUserActivity", "B 1636 [pokeUserActivity] 0 []");
	P("B|1|a|b|c", "B 1 [a|b|c] 0 []"); /* the name is the rest of the text */
	P("B|1|", "B 1 [[empty slice name]] 0 []");
	P("B|1", "B 1 [[empty slice name]] 0 []");
	P("B|x|name", "FAIL");
	P("B||name", "FAIL");
	P("B|1|name\n\n", "B 1 [name] 0 []"); /* trailing \n and \0 stripped */
	P("B|1|name\0\n", "B 1 [name] 0 []");
	P("E|1636", "E 1636 [] 0 []");
	P("E", "E 0 [] 0 []"); /* Flutter: no tgid */
	P("E|x", "E 0 [] 0 []");
	P("C|1636|wq:monitor|0", "C 1636 [wq:monitor] 0 []");
	P("C|3209|TransfersBytesPendingOnDisk-value|5|Blob",
	  "C 3209 [TransfersBytesPendingOnDisk-value] 5 []");
	P("C|1|ctr|-7", "C 1 [ctr] -7 []");
	P("C|1|ctr|", "FAIL");
	P("C|1|ctr|1.5", "FAIL");
	P("C|1||5", "FAIL");
	P("S|1636|frame_capture|123", "S 1636 [frame_capture] 123 []");
	P("F|1636|frame_capture|456", "F 1636 [frame_capture] 456 []");
	P("S|1636|frame_capture", "FAIL");
	P("F|x|frame_capture|1", "FAIL");
	P("I|4820|instant", "I 4820 [instant] 0 []");
	P("I|4820|", "FAIL");
	P("N|1938|track_name|instant_name", "N 1938 [instant_name] 0 [track_name]");
	P("N|1938|track_name|", "FAIL");
	P("G|1339|track_name|slice_name|789", "G 1339 [slice_name] 789 [track_name]");
	P("G|1339|track_name|slice_name|", "FAIL");
	P("H|6890|track_name|slice_name|135", "H 6890 [] 135 [track_name]");
	P("H|6890|track_name|135", "H 6890 [] 135 [track_name]");
	P("H|6890||135", "FAIL");
	P("trace_event_clock_sync: parent_ts=1.0", "UNSUPPORTED");
	P("some random text", "FAIL");
	P("", "FAIL");
	P("|1|x", "FAIL");
	P("Bxyz|1|name", "B 1 [name] 0 []"); /* the phase is the first char */
	P("B|+5|n", "B 5 [n] 0 []");          /* strtoul's sign and spaces */
	P("B| 5|n", "B 5 [n] 0 []");
	P("B|-1|n", "B 4294967295 [n] 0 []");
	P("I|1|a\0b", "I 1 [a] 0 []"); /* a field ends at a NUL */
	/* invalid UTF-8 is removed before parsing (CheckAsciiAndRemoveInvalidUTF8) */
	P("B|1|a\xff" "b\xc3\xa9", "B 1 [ab\xc3\xa9] 0 []");
	P("I|1|\xed\xa0\x80x", "I 1 [x] 0 []");
	P("I|1|\xf5\x80\x80\x80x", "I 1 [\xf5\x80\x80\x80x] 0 []"); /* its rule, not RFC's */
	P("I|1|\xf4\x90\x80\x80x", "I 1 [x] 0 []");
	P("C|1|n|00000000000000000000000000000000000000042", "C 1 [n] 42 []");
}

static void
t_kernel(void)
{
	struct tm_atrace_point p;
	CHECK(tm_atrace_kernel(0, true, "k", 1, 7, 0, &p) && p.phase == 'B' && p.tgid == 7);
	CHECK(tm_atrace_kernel(0, false, "k", 1, 7, 0, &p) && p.phase == 'E');
	CHECK(tm_atrace_kernel('C', false, "c", 1, 7, -3, &p) && p.phase == 'C' && p.value == -3);
	CHECK(tm_atrace_kernel('I', false, "i", 1, 7, 0, &p) && p.phase == 'I');
	CHECK(!tm_atrace_kernel('S', false, "s", 1, 7, 0, &p));
	CHECK(tm_atrace_zero(1, "z", 1, 3, 0, &p) && p.phase == 'B');
	CHECK(tm_atrace_zero(2, "z", 1, 3, 0, &p) && p.phase == 'E');
	CHECK(tm_atrace_zero(4, "z", 1, 3, 9, &p) && p.phase == 'C' && p.value == 9);
	CHECK(tm_atrace_zero(3, "z", 1, 3, 0, &p) && p.phase == 'B'); /* begin wins */
	CHECK(!tm_atrace_zero(8, "z", 1, 3, 0, &p));
}

static struct tm_atrace_event
ev_of(const char *text, uint32_t pid)
{
	struct tm_atrace_point p;
	struct tm_atrace_event e = {0};
	struct tm_buf clean;
	tm_buf_init(&clean);
	if (tm_atrace_parse(text, strlen(text), &clean, &p) == TM_ATRACE_OK)
		tm_atrace_event(&p, pid, &e);
	tm_buf_fini(&clean);
	return e;
}

/* Which ends close which begins: thread slices by the emitting pid, async
 * slices by (tgid, name, cookie), track slices by (tgid, track, cookie). */
static void
t_event_keys(void)
{
	struct tm_atrace_event b = ev_of("B|1|x", 10), e = ev_of("E|1", 10), e2 = ev_of("E|1", 11);
	CHECK(b.phase == 'B' && e.phase == 'E' && b.track == e.track && b.track != e2.track);
	struct tm_atrace_event s = ev_of("S|1|a|5", 10), f = ev_of("F|1|a|5", 99);
	CHECK(s.phase == 'B' && f.phase == 'E' && s.track == f.track);
	CHECK(ev_of("F|1|a|6", 10).track != s.track);
	CHECK(ev_of("F|2|a|5", 10).track != s.track);
	CHECK(ev_of("F|1|b|5", 10).track != s.track);
	struct tm_atrace_event g = ev_of("G|1|t|n|5", 10), h = ev_of("H|1|t|5", 11);
	CHECK(g.phase == 'B' && h.phase == 'E' && g.track == h.track);
	CHECK(ev_of("H|1|t|n|5", 10).track == g.track);
	CHECK(ev_of("H|1|u|5", 10).track != g.track);
	struct tm_atrace_event n = ev_of("N|1|t|inst", 10);
	CHECK(n.phase == 'I' && n.name_len == 4 && !memcmp(n.name, "inst", 4));
	CHECK(ev_of("I|1|i", 10).phase == 'I');
	struct tm_atrace_event c = ev_of("C|1|ctr|3", 10);
	CHECK(c.phase == 'C' && c.name_len == 3 && ev_of("C|1|ctr|4", 11).track == c.track);
}

/* ---- the same points through the scanners and a replay ---- */

static char dir[64];

static char *
write_file(const char *name, const void *p, size_t n)
{
	char *path = malloc(strlen(dir) + strlen(name) + 2);
	sprintf(path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(p, 1, n, f);
		fclose(f);
	}
	return path;
}

/* "name/phase/dur" of every event, and the file's systrace_parse_failure. */
static char *
evaluate(const char *path, uint64_t *parse_failures)
{
	struct tm_session *s = NULL;
	struct tm_error err = {0};
	struct tm_session_opts o = {.keep_events = true};
	struct tm_buf out;
	tm_buf_init(&out);
	*parse_failures = 0;
	if (tm_session_open(&s, &path, 1, &o, &err) != TM_OK) {
		tm_buf_addf(&out, "open: %s", err.msg);
		return tm_buf_steal(&out);
	}
	struct tm_report *r = NULL;
	if (tm_session_evaluate(s, NULL, &r, &err) != TM_OK) {
		tm_buf_addf(&out, "evaluate: %s", err.msg);
		tm_session_close(s);
		return tm_buf_steal(&out);
	}
	for (size_t i = 0; i < r->n_events; i++) {
		const struct tm_report_event *e = &r->events[i];
		tm_buf_addf(&out, "%s%s/%c/%lld", i ? " " : "", e->name && *e->name ? e->name : "-",
			    e->phase ? e->phase : '-', (long long)e->dur);
	}
	for (size_t f = 0; f < r->n_files; f++)
		*parse_failures += tm_stat_value(r->files[f].stats, r->files[f].n_stats,
						 TM_STAT_SYSTRACE_PARSE_FAILURE);
	tm_report_free(r);
	tm_session_close(s);
	return tm_buf_steal(&out);
}

#define LINE(ts, text) "  app-10 (    1) [000] ...1  " ts ": tracing_mark_write: " text "\n"

static const char *const want_events =
	"outer/B/5000000000 inner/B/1000000000 -/E/-1 -/E/-1 ctr/C/-1 async/B/2000000000 "
	"async/E/-1 inst/I/0 tinst/I/0 tslice/B/2000000000 -/E/-1 tracing_mark_write/-/-1 "
	"tracing_mark_write/-/-1 tracing_mark_write/-/-1";

static void
t_systrace_text(void)
{
	const char txt[] = "# tracer: nop\n#\n"
		LINE("1.0", "B|1|outer")
		LINE("2.0", "B|1|inner")
		LINE("3.0", "E|1")
		LINE("6.0", "E|1")
		LINE("7.0", "C|1|ctr|42")
		LINE("8.0", "S|1|async|7")
		LINE("10.0", "F|1|async|7")
		LINE("11.0", "I|1|inst")
		LINE("12.0", "N|1|track|tinst")
		LINE("13.0", "G|1|track|tslice|9")
		LINE("15.0", "H|1|track|9")
		LINE("16.0", "X|1|garbage")
		LINE("17.0", "B|x|bad tgid")
		LINE("18.0", "trace_event_clock_sync: parent_ts=1");
	char *path = write_file("t.systrace", txt, sizeof txt - 1);
	uint64_t fails;
	char *got = evaluate(path, &fails);
	CHECK_STR(got, want_events);
	CHECK_INT(fails, 2); /* the clock sync line is unsupported, not a failure */
	free(got);
	unlink(path);
	free(path);
}

/* A tiny protobuf writer for the proto trace. */
struct pb {
	uint8_t b[8192];
	size_t n;
};

static void
pb_varint(struct pb *p, uint64_t v)
{
	do {
		p->b[p->n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void
pb_int(struct pb *p, uint32_t field, uint64_t v)
{
	pb_varint(p, (uint64_t)field << 3);
	pb_varint(p, v);
}

static void
pb_bytes(struct pb *p, uint32_t field, const void *d, size_t n)
{
	pb_varint(p, (uint64_t)field << 3 | 2);
	pb_varint(p, n);
	memcpy(p->b + p->n, d, n);
	p->n += n;
}

/* FtraceEvent { timestamp, pid, <field> = payload } */
static void
ft_event(struct pb *bundle, uint64_t ts, uint32_t pid, uint32_t field, const struct pb *payload)
{
	struct pb e = {.n = 0};
	pb_int(&e, 1, ts);
	pb_int(&e, 2, pid);
	pb_bytes(&e, field, payload->b, payload->n);
	pb_bytes(bundle, 2, e.b, e.n);
}

static void
ft_print(struct pb *bundle, uint64_t ts, const char *text)
{
	struct pb pr = {.n = 0};
	pb_bytes(&pr, 2, text, strlen(text)); /* PrintFtraceEvent.buf */
	ft_event(bundle, ts, 10, 3, &pr);
}

/* The same points as ftrace print events in a proto trace give the same
 * events and failures as the text file. */
static void
t_proto_print(void)
{
	static struct pb bundle, pkt, trace;
	memset(&bundle, 0, sizeof bundle);
	memset(&pkt, 0, sizeof pkt);
	memset(&trace, 0, sizeof trace);
	pb_int(&bundle, 1, 0); /* cpu */
	const char *texts[] = {"B|1|outer",  "B|1|inner",      "E|1",
			       "E|1\n",      "C|1|ctr|42",     "S|1|async|7",
			       "F|1|async|7", "I|1|inst",      "N|1|track|tinst",
			       "G|1|track|tslice|9", "H|1|track|9", "X|1|garbage",
			       "B|x|bad tgid", "trace_event_clock_sync: parent_ts=1"};
	const int secs[] = {1, 2, 3, 6, 7, 8, 10, 11, 12, 13, 15, 16, 17, 18};
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
		ft_print(&bundle, (uint64_t)secs[i] * 1000000000u, texts[i]);
	pb_bytes(&pkt, 1, bundle.b, bundle.n); /* TracePacket.ftrace_events */
	pb_int(&pkt, 10, 1);                   /* trusted_packet_sequence_id */
	pb_bytes(&trace, 1, pkt.b, pkt.n);
	char *path = write_file("t.pftrace", trace.b, trace.n);
	uint64_t fails;
	char *got = evaluate(path, &fails);
	const char *want =
		"outer/B/5000000000 inner/B/1000000000 -/E/-1 -/E/-1 ctr/C/-1 async/B/2000000000 "
		"async/E/-1 inst/I/0 tinst/I/0 tslice/B/2000000000 -/E/-1 print/-/-1 print/-/-1 "
		"print/-/-1";
	CHECK_STR(got, want);
	CHECK_INT(fails, 2);
	free(got);
	unlink(path);
	free(path);
}

/* zero and the tracing_mark_write variants (ftrace_parser.cc) */
static void
t_proto_kernel(void)
{
	static struct pb bundle, pkt, trace, x;
	memset(&bundle, 0, sizeof bundle);
	memset(&pkt, 0, sizeof pkt);
	memset(&trace, 0, sizeof trace);
	pb_int(&bundle, 1, 0);
	uint64_t t = 1000;
	/* zero: flag 1 begin / 2 end / 4 counter / 0 failure */
	memset(&x, 0, sizeof x), pb_int(&x, 1, 1), pb_bytes(&x, 2, "zb", 2), pb_int(&x, 3, 5);
	ft_event(&bundle, t++, 10, 331, &x);
	memset(&x, 0, sizeof x), pb_int(&x, 1, 2), pb_int(&x, 3, 5);
	ft_event(&bundle, t++, 10, 331, &x);
	memset(&x, 0, sizeof x), pb_int(&x, 1, 4), pb_bytes(&x, 2, "zc", 2), pb_int(&x, 4, 3);
	ft_event(&bundle, t++, 10, 331, &x);
	memset(&x, 0, sizeof x), pb_int(&x, 1, 0);
	ft_event(&bundle, t++, 10, 331, &x); /* failure */
	/* mdss tracing_mark_write: trace_begin required */
	memset(&x, 0, sizeof x), pb_int(&x, 1, 5), pb_bytes(&x, 2, "mb", 2), pb_int(&x, 3, 1);
	ft_event(&bundle, t++, 10, 80, &x);
	memset(&x, 0, sizeof x), pb_int(&x, 1, 5), pb_bytes(&x, 2, "mb", 2);
	ft_event(&bundle, t++, 10, 80, &x); /* failure: no trace_begin */
	/* sde: trace_type C */
	memset(&x, 0, sizeof x), pb_int(&x, 1, 5), pb_bytes(&x, 2, "sc", 2), pb_int(&x, 3, 'C'),
		pb_int(&x, 4, 8);
	ft_event(&bundle, t++, 10, 333, &x);
	/* g2d I, mali B, lwis with type S (a failure), dpu with no type (a failure) */
	memset(&x, 0, sizeof x), pb_int(&x, 1, 5), pb_bytes(&x, 4, "gi", 2), pb_int(&x, 5, 'I');
	ft_event(&bundle, t++, 10, 349, &x);
	memset(&x, 0, sizeof x), pb_bytes(&x, 1, "mali", 4), pb_int(&x, 2, 5), pb_int(&x, 3, 'B');
	ft_event(&bundle, t++, 10, 350, &x);
	memset(&x, 0, sizeof x), pb_int(&x, 2, 'S'), pb_bytes(&x, 4, "lw", 2);
	ft_event(&bundle, t++, 10, 467, &x);
	memset(&x, 0, sizeof x), pb_bytes(&x, 4, "dp", 2);
	ft_event(&bundle, t++, 10, 348, &x);
	/* samsung: trace_type 4 E */
	memset(&x, 0, sizeof x), pb_int(&x, 1, 5), pb_int(&x, 4, 'E');
	ft_event(&bundle, t++, 10, 484, &x);
	pb_bytes(&pkt, 1, bundle.b, bundle.n);
	pb_int(&pkt, 10, 1);
	pb_bytes(&trace, 1, pkt.b, pkt.n);
	char *path = write_file("k.pftrace", trace.b, trace.n);
	uint64_t fails;
	char *got = evaluate(path, &fails);
	CHECK_STR(got, "zb/B/1 -/E/-1 zc/C/-1 zero/-/-1 mb/B/-1 tracing_mark_write/-/-1 "
		       "sc/C/-1 gi/I/0 mali/B/3 lwis_tracing_mark_write/-/-1 "
		       "dpu_tracing_mark_write/-/-1 -/E/-1");
	CHECK_INT(fails, 4);
	free(got);
	unlink(path);
	free(path);
}

/* The tgid and value fields: the digit fast path gives what strtoul /
 * strtoll give (the tgid cast to uint32_t), and the field is valid exactly
 * when strto* read all of it. */
static void
t_numbers(void)
{
	static const char alpha[] = "0123456789-+ x";
	uint64_t x = 0x2545F4914F6CDD1Dull;
	char f1[48], f2[48], text[160];
	for (int i = 0; i < 100000; i++) {
		char *f[2] = { f1, f2 };
		for (int j = 0; j < 2; j++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			int n = (int)(x % 25);
			for (int k = 0; k < n; k++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				f[j][k] = (x & 3) ? alpha[(x >> 8) % 10]
						  : alpha[(x >> 8) % (sizeof alpha - 1)];
			}
			f[j][n] = 0;
		}
		snprintf(text, sizeof text, "C|%s|ctr|%s", f1, f2);
		struct tm_atrace_point p;
		struct tm_buf clean;
		tm_buf_init(&clean);
		enum tm_atrace_result r = tm_atrace_parse(text, strlen(text), &clean, &p);
		tm_buf_fini(&clean);
		char *e1, *e2;
		unsigned long tg = strtoul(f1, &e1, 10);
		long long v = strtoll(f2, &e2, 10);
		bool ok1 = *f1 && !*e1, ok2 = *f2 && !*e2;
		CHECK_INT(r, ok1 && ok2 ? TM_ATRACE_OK : TM_ATRACE_FAILURE);
		CHECK_INT(p.tgid, ok1 ? (uint32_t)tg : 0);
		if (r == TM_ATRACE_OK)
			CHECK_INT(p.value, v);
		if (t_failed_) {
			CHECK_STR(text, "(differs from strtoul/strtoll)");
			return;
		}
	}
}

int
main(void)
{
	snprintf(dir, sizeof dir, "/tmp/tm_atrace_XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	RUN(t_parse);
	RUN(t_kernel);
	RUN(t_event_keys);
	RUN(t_systrace_text);
	RUN(t_proto_print);
	RUN(t_proto_kernel);
	RUN(t_numbers);
	rmdir(dir);
	return 0;
}

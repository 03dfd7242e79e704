/* SPDX-License-Identifier: MIT */
/* The offset grammar and edits valid by construction (engine/offset.c). */
#include <stdlib.h>
#include <unistd.h>

#include "t.h"
#include "tracemerge.h"

static void
test_parse_full(void)
{
	struct tm_offset_spec sp;
	struct tm_error e;
	CHECK_INT(tm_offset_parse("relay.pftrace:BOOTTIME[vm]=-12ms@phone.pftrace:REALTIME[phone]",
				  &sp, &e),
		  TM_OK);
	CHECK_STR(sp.src.file, "relay.pftrace");
	CHECK_INT(sp.src.clock, TM_CLOCK_BOOTTIME);
	CHECK_STR(sp.src.machine, "vm");
	CHECK_INT(sp.offset_ns, -12000000);
	CHECK_STR(sp.ref.file, "phone.pftrace");
	CHECK_INT(sp.ref.clock, TM_CLOCK_REALTIME);
	CHECK_STR(sp.ref.machine, "phone");
	tm_offset_spec_fini(&sp);
}

static void
test_parse_parts(void)
{
	struct tm_offset_spec sp;
	struct tm_error e;
	/* the workbench's prompt: no file, optional reference */
	CHECK_INT(tm_offset_parse("250us", &sp, &e), TM_OK);
	CHECK(!sp.src.file && !sp.ref.file && sp.has_offset && sp.offset_ns == 250000);
	tm_offset_spec_fini(&sp);
	CHECK_INT(tm_offset_parse("@a.json", &sp, &e), TM_OK);
	CHECK(!sp.has_offset);
	CHECK_STR(sp.ref.file, "a.json");
	CHECK(!sp.ref.has_clock);
	tm_offset_spec_fini(&sp);
	/* a colon that is not a clock stays in the path */
	CHECK_INT(tm_offset_parse("dir:x/a.json:PIN=1@b:c.json", &sp, &e), TM_OK);
	CHECK_STR(sp.src.file, "dir:x/a.json");
	CHECK(sp.src.is_pin && sp.src.has_clock && sp.src.clock == 0);
	CHECK_STR(sp.ref.file, "b:c.json");
	tm_offset_spec_fini(&sp);
	/* errors, with the form as a hint */
	CHECK_INT(tm_offset_parse("a.pb:BOOTIME=1ms", &sp, &e), TM_ERR_INVALID);
	CHECK(strstr(e.msg, "unknown clock 'BOOTIME'") && strstr(e.hint, "[FILE"));
	CHECK_INT(tm_offset_parse("a.pb=1.5ns", &sp, &e), TM_ERR_INVALID);
	CHECK_INT(tm_offset_parse("a.pb=1ms@", &sp, &e), TM_ERR_INVALID);
	CHECK_INT(tm_offset_parse("a.pb[]=1ms", &sp, &e), TM_ERR_INVALID);
	CHECK_INT(tm_offset_parse("a.pb=", &sp, &e), TM_ERR_INVALID);
	CHECK_INT(tm_offset_parse("a.pb=1@b.pb:PIN", &sp, &e), TM_ERR_INVALID);
}

static char dir[] = "/tmp/tm_offset_XXXXXX";
static struct tm_session *sess;

static void
open_demo(void)
{
	char **paths;
	struct tm_error e;
	if (!mkdtemp(dir) || tm_demo_write(dir, &paths, &e) != TM_OK)
		abort();
	/* loose files without the demo's manifest: phone watch relay app */
	const char *in[4] = {paths[1], paths[2], paths[3], paths[4]};
	if (tm_session_open(&sess, in, 4, NULL, &e) != TM_OK)
		abort();
	for (size_t i = 0; paths[i]; i++)
		free(paths[i]);
	free(paths);
}

static void
apply(const char *text, struct tm_manifest *cur, struct tm_offset_result *r)
{
	struct tm_offset_spec sp;
	struct tm_error e;
	CHECK_INT(tm_offset_parse(text, &sp, &e), TM_OK);
	CHECK_INT(tm_offset_apply(sess, cur, NULL, &sp, r, &e), TM_OK);
	tm_offset_spec_fini(&sp);
}

/* issue 7: an offset on a proto with clocks of its own RELATEs its BOOTTIME
 * (no "clock overrides require the trace to use a single clock"); on the
 * phone's machine that is a duplicate clock domain, and its own machine is
 * offered, proven by evaluation. */
static void
test_relate_and_own_machine(void)
{
	struct tm_manifest m;
	struct tm_offset_result r;
	tm_manifest_init(&m);
	CHECK_INT(tm_session_trace_clock(sess, 2), TM_CLOCK_BOOTTIME);
	apply("watch.pftrace=12ms", &m, &r);
	CHECK_INT(r.clock, TM_CLOCK_BOOTTIME);
	CHECK(!r.is_pin);
	CHECK_STR(r.ref, "phone.pftrace"); /* the timeline's owner */
	CHECK_INT(r.ref_clock, TM_CLOCK_BOOTTIME);
	CHECK(strstr(r.verdict, "duplicate clock domain"));
	CHECK_STR(r.own_machine, "watch");
	CHECK(r.own_helps && r.own_ok);
	/* the offer, evaluated again, is what it said */
	struct tm_report *rep;
	struct tm_error e;
	CHECK_INT(tm_session_evaluate(sess, &r.own_m, &rep, &e), TM_OK);
	CHECK(rep->ok && !rep->error);
	tm_report_free(rep);
	/* what a caller takes: the offer when it takes one, never called
	 * inert (inert is said of m alone) */
	free(r.inert);
	r.inert = strdup("said of m");
	struct tm_offset_take t = tm_offset_take(&r, true);
	CHECK(t.offer && t.own && t.m == &r.own_m && t.report == &r.own_report && !t.inert);
	t = tm_offset_take(&r, false);
	CHECK(t.offer && !t.own && t.m == &r.m && t.report == &r.report);
	CHECK(t.inert == r.inert);
	tm_offset_result_fini(&r);
	tm_manifest_fini(&m);
}

static void
test_pin_for_clockless_and_inert(void)
{
	struct tm_manifest m;
	struct tm_offset_result r;
	tm_manifest_init(&m);
	CHECK_INT(tm_session_trace_clock(sess, 4), TM_CLOCK_UNSET);
	apply("app.json=5ms@relay.pftrace:REALTIME_COARSE", &m, &r);
	CHECK(r.is_pin);
	CHECK(r.inert && strstr(r.inert, "not on the timeline's path"));
	struct tm_offset_take t = tm_offset_take(&r, true);
	CHECK(!t.offer && !t.own && t.m == &r.m && t.inert == r.inert);
	tm_offset_result_fini(&r);
	apply("app.json=5ms@phone.pftrace", &m, &r);
	CHECK(r.is_pin && !r.inert);
	CHECK_INT(r.ref_clock, TM_CLOCK_BOOTTIME);
	tm_offset_result_fini(&r);
	/* a PIN asked for on a proto moves nothing (its clock is not TRACE_FILE) */
	apply("relay.pftrace:PIN=0@app.json", &m, &r);
	CHECK(r.is_pin);
	tm_offset_result_fini(&r);
	tm_manifest_fini(&m);
}

/* tm_line_diff: the smallest diff of two manifests, of any length. */
/* Offsets as fixes and align spell them: human units, read back exactly. */
static void
test_format_round_trip(void)
{
	static const struct {
		int64_t ns;
		const char *text;
	} cases[] = {{10000000, "+10ms"},      {1234567, "+1.234567ms"}, {-1500000000, "-1.5s"},
		     {7, "+7ns"},              {0, "0"},               {123456789, "+123.456789ms"},
		     {-2500000000, "-2.5s"},   {1000, "+1us"},           {INT64_MAX, "+9223372036.854775807s"},
		     {INT64_MIN + 1, "-9223372036.854775807s"}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tm_buf b;
		struct tm_error e;
		int64_t back = 0;
		tm_buf_init(&b);
		tm_offset_format_ns(cases[i].ns, &b);
		CHECK(b.data && !strcmp(b.data, cases[i].text));
		CHECK(tm_parse_duration_ns(b.data, &back, &e) == TM_OK);
		CHECK_INT(back, cases[i].ns);
		struct tm_offset_spec sp;
		char arg[128];
		snprintf(arg, sizeof arg, "a.pb:BOOTTIME=%s@b.pb", b.data);
		CHECK(tm_offset_parse(arg, &sp, &e) == TM_OK);
		CHECK(sp.has_offset && sp.offset_ns == cases[i].ns);
		tm_offset_spec_fini(&sp);
		tm_buf_fini(&b);
	}
}

static void
test_line_diff(void)
{
	struct tm_buf b;
	tm_buf_init(&b);
	tm_line_diff("a\nb\nc\n", "a\nx\nc\n", &b);
	CHECK_STR(b.data, " a\n-b\n+x\n c\n");
	tm_buf_fini(&b);

	/* 2,000 lines, one changed near the end: a true and small diff (the old
	 * diff looked at the first 512 lines only and lost the change). */
	struct tm_buf x, y;
	tm_buf_init(&x), tm_buf_init(&y);
	for (int i = 0; i < 2000; i++) {
		tm_buf_addf(&x, "line %d\n", i);
		tm_buf_addf(&y, "line %d\n", i == 1990 ? -1 : i);
	}
	tm_buf_init(&b);
	tm_line_diff(x.data, y.data, &b);
	CHECK(strstr(b.data, "-line 1990\n+line -1\n") != NULL);
	size_t changed = 0;
	for (const char *p = b.data; p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		changed += *p == '-' || *p == '+';
	CHECK_INT(changed, 2);
	tm_buf_fini(&b);

	/* middles too big for the table: everything removed, then added */
	tm_buf_reset(&y);
	for (int i = 0; i < 3000; i++)
		tm_buf_addf(&y, "other %d\n", i);
	tm_buf_init(&b);
	tm_line_diff(x.data, y.data, &b);
	CHECK(strncmp(b.data, "-line 0\n", 8) == 0);
	CHECK(strstr(b.data, "-line 1999\n+other 0\n") != NULL);
	tm_buf_fini(&b), tm_buf_fini(&x), tm_buf_fini(&y);
}

int
main(void)
{
	RUN(test_parse_full);
	RUN(test_parse_parts);
	RUN(test_line_diff);
	RUN(test_format_round_trip);
	open_demo();
	RUN(test_relate_and_own_machine);
	RUN(test_pin_for_clockless_and_inert);
	tm_session_close(sess);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : 1;
}

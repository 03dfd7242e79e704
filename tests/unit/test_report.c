/* SPDX-License-Identifier: MIT */
/* report.c: the public stat list (ids, trace_processor's names, which are
 * drops), stat lookup by id, the verdict's drop line; pack.c: util merge's
 * refusals. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "t.h"

static void
t_stat_list(void)
{
	size_t n_drop = 0;
	for (int i = 0; i < TM_STAT__COUNT; i++) {
		const char *n = tm_stat_name((enum tm_stat_id)i);
		CHECK(n && *n && strcmp(n, "unknown_stat") != 0);
		for (int k = 0; k < i; k++)
			CHECK(strcmp(n, tm_stat_name((enum tm_stat_id)k)) != 0);
		n_drop += tm_stat_is_drop((enum tm_stat_id)i);
	}
	/* the three stats the dropped count sums */
	CHECK_INT(n_drop, 3);
	CHECK(tm_stat_is_drop(TM_STAT_UNRELATABLE));
	CHECK(tm_stat_is_drop(TM_STAT_NO_PATH));
	CHECK(tm_stat_is_drop(TM_STAT_NEG_DROPPED));
	CHECK(!tm_stat_is_drop(TM_STAT_TE_INVALID_TS));
	CHECK_STR(tm_stat_name(TM_STAT_NEG_DROPPED), "trace_sorter_negative_timestamp_dropped");
	CHECK_STR(tm_stat_name(TM_STAT_NO_PATH), "clock_sync_failure_no_path");
	CHECK_STR(tm_stat_name(TM_STAT_UNRELATABLE), "clock_sync_unrelatable_clock_domains");
	CHECK_STR(tm_stat_name(TM_STAT__COUNT), "unknown_stat");
	CHECK(!tm_stat_is_drop(TM_STAT__COUNT));
}

static void
t_stat_value_and_verdict(void)
{
	struct tm_stat st[] = {
		{TM_STAT_NO_PATH, "clock_sync_failure_no_path", 4},
		{TM_STAT_TE_INVALID_TS, "track_event_invalid_timestamp", 9},
		{TM_STAT_NEG_DROPPED, "trace_sorter_negative_timestamp_dropped", 2},
	};
	CHECK_INT(tm_stat_value(st, 3, TM_STAT_NO_PATH), 4);
	CHECK_INT(tm_stat_value(st, 3, TM_STAT_NEG_DROPPED), 2);
	CHECK_INT(tm_stat_value(st, 3, TM_STAT_UNRELATABLE), 0);
	CHECK_INT(tm_stat_value(NULL, 0, TM_STAT_NO_PATH), 0);
	/* the events missing: the dropped count itself, stat by stat */
	struct tm_stat miss[] = {
		{TM_STAT_NO_PATH, "clock_sync_failure_no_path", 4},
		{TM_STAT_NEG_DROPPED, "trace_sorter_negative_timestamp_dropped", 2},
	};
	struct tm_report r = {0};
	r.dropped = 6;
	r.n_stats = 3;
	r.stats = st;
	r.missing = 6;
	r.n_missing_stats = 2;
	r.missing_stats = miss;
	struct tm_buf b;
	tm_buf_init(&b);
	CHECK(tm_report_missing_is_dropped(&r));
	tm_report_verdict(&r, &b);
	/* only drop stats are listed, by the ids the stats carry */
	CHECK_STR(b.data, "6 events would be dropped: clock_sync_failure_no_path 4, "
			  "trace_sorter_negative_timestamp_dropped 2.");
	/* events lost that the dropped count leaves out: both figures, each
	 * named (the demo with trace time MONOTONIC_RAW) */
	struct tm_stat st2[] = {
		{TM_STAT_UNDEFERRABLE, "clock_sync_failure_undeferrable_packet_loss", 49},
		{TM_STAT_UNKNOWN_TARGET, "clock_sync_failure_unknown_target_clock", 49},
		{TM_STAT_UNRELATABLE, "clock_sync_unrelatable_clock_domains", 5},
	};
	struct tm_stat miss2[] = {{TM_STAT_UNKNOWN_TARGET, "clock_sync_failure_unknown_target_clock", 49}};
	r = (struct tm_report){.dropped = 5, .n_stats = 3, .stats = st2, .missing = 49,
			       .n_missing_stats = 1, .missing_stats = miss2};
	CHECK(!tm_report_missing_is_dropped(&r));
	tm_buf_reset(&b);
	tm_report_verdict(&r, &b);
	CHECK_STR(b.data, "trace_processor would report 5 dropped events "
			  "(clock_sync_unrelatable_clock_domains 5); 49 events would be missing from "
			  "the merged trace (tracemerge): clock_sync_failure_unknown_target_clock 49.");
	/* nothing in trace_processor's count, events lost all the same */
	r.dropped = 0;
	r.n_stats = 2;
	tm_buf_reset(&b);
	tm_report_verdict(&r, &b);
	CHECK_STR(b.data, "trace_processor counts no dropped events, but 49 events would be missing "
			  "from the merged trace (tracemerge): clock_sync_failure_unknown_target_clock "
			  "49.");
	tm_buf_fini(&b);
	/* the one list of the stats events are lost under */
	CHECK(tm_stat_loses_events(TM_STAT_NO_PATH) && tm_stat_loses_events(TM_STAT_NEG_DROPPED));
	CHECK(tm_stat_loses_events(TM_STAT_UNKNOWN_TARGET) && tm_stat_loses_events(TM_STAT_UNKNOWN_SOURCE));
	CHECK(tm_stat_loses_events(TM_STAT_TE_INVALID_TS));
	CHECK(!tm_stat_loses_events(TM_STAT_UNRELATABLE) && !tm_stat_loses_events(TM_STAT_UNDEFERRABLE));
}

static char dir[64];

static const char *
put(const char *sub, const char *name)
{
	static char paths[8][512];
	static int k;
	char *p = paths[k++ % 8];
	snprintf(p, 512, "%s/%s", dir, sub);
	mkdir(p, 0700);
	snprintf(p, 512, "%s/%s/%s", dir, sub, name);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs("{\"traceEvents\":[]}", f);
		fclose(f);
	}
	return p;
}

static void
check_inputs(const char *const *paths, size_t n, const char *manifest, enum tm_pack_rule rule,
	     bool has_refusal, const char *want)
{
	struct tm_session *s = NULL;
	struct tm_error e;
	CHECK(tm_session_open(&s, paths, n, NULL, &e) == TM_OK);
	if (!s)
		return;
	struct tm_manifest m;
	tm_manifest_init(&m);
	if (manifest)
		CHECK(tm_manifest_parse(manifest, strlen(manifest), &m, &e) == TM_OK);
	struct tm_pack_check pc;
	tm_pack_check(s, manifest ? &m : NULL, &pc);
	const struct tm_pack_issue *r = tm_pack_refusal(&pc);
	CHECK(has_refusal == (r != NULL));
	bool seen = false;
	for (size_t i = 0; i < pc.n; i++)
		if (pc.issues[i].rule == rule) {
			seen = true;
			CHECK_STR(pc.issues[i].msg, want);
			if (pc.issues[i].member != SIZE_MAX)
				CHECK(tm_pack_issue_of(&pc, pc.issues[i].member) != NULL);
		}
	CHECK(seen);
	tm_pack_check_fini(&pc);
	tm_manifest_fini(&m);
	tm_session_close(s);
}

static void
t_pack_rules(void)
{
	const char *dup[] = {put("d1", "a.json"), put("d2", "a.json")};
	check_inputs(dup, 2, NULL, TM_PACK_DUP_NAME, true,
		     "merge: two input files share the name 'a.json'; archive members must be "
		     "unique. Rename one of the files.");
	char long_name[120];
	memset(long_name, 'x', 100);
	strcpy(long_name + 100, ".json");
	const char *lng[] = {put("d1", "b.json"), put("d3", long_name)};
	char want[256];
	snprintf(want, sizeof want, "Filename too long for TAR format (max 99 chars): %s", long_name);
	check_inputs(lng, 2, NULL, TM_PACK_NAME_TOO_LONG, true, want);
	/* 99 bytes is the longest name util merge writes */
	long_name[94] = 0;
	strcat(long_name, ".json");
	const char *ok99[] = {put("d1", "b.json"), put("d4", long_name)};
	struct tm_session *s = NULL;
	struct tm_error e;
	CHECK(tm_session_open(&s, ok99, 2, NULL, &e) == TM_OK);
	struct tm_pack_check pc;
	tm_pack_check(s, NULL, &pc);
	CHECK_INT(pc.n, 0);
	tm_pack_check_fini(&pc);
	tm_session_close(s);
	const char *hid[] = {put("d1", "b.json"), put("d1", ".c.json")};
	check_inputs(hid, 2, NULL, TM_PACK_HIDDEN, false,
		     "'.c.json' has a hidden name: trace_processor skips it when it opens the "
		     "archive, and tracemerge leaves it out of the merged TAR");
	const char *two[] = {put("d1", "b.json"), put("d2", "a.json")};
	check_inputs(two, 2,
		     "{\"perfetto_manifest\":{\"version\":1,\"files\":[{\"path\":\"b.json\"},"
		     "{\"path\":\"d1/b.json\"}]}}",
		     TM_PACK_MANIFEST_PATH, true,
		     "merge: the manifest names file 'd1/b.json' but no input file has that name. "
		     "Manifest paths must match the input files' base names.");
	/* a single input is named by its base name */
	const char *one[] = {put("d1", "b.json")};
	CHECK(tm_session_open(&s, one, 1, NULL, &e) == TM_OK);
	struct tm_manifest m;
	tm_manifest_init(&m);
	const char *mj = "{\"perfetto_manifest\":{\"version\":1,\"files\":[{\"path\":\"b.json\"}]}}";
	CHECK(tm_manifest_parse(mj, strlen(mj), &m, &e) == TM_OK);
	tm_pack_check(s, &m, &pc);
	CHECK_INT(pc.n, 0);
	tm_pack_check_fini(&pc);
	tm_manifest_fini(&m);
	tm_session_close(s);
}

int
main(void)
{
	RUN(t_stat_list);
	RUN(t_stat_value_and_verdict);
	snprintf(dir, sizeof dir, "/tmp/tm_report_XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	RUN(t_pack_rules);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		return 1;
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* report.c: the public stat list (ids, trace_processor's names, which are
 * drops), stat lookup by id, the verdict's drop line. */
#include <stdlib.h>

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
	struct tm_report r = {0};
	r.dropped = 6;
	r.n_stats = 3;
	r.stats = st;
	struct tm_buf b;
	tm_buf_init(&b);
	tm_report_verdict(&r, &b);
	/* only drop stats are listed, by the ids the stats carry */
	CHECK_STR(b.data, "6 events would be dropped: clock_sync_failure_no_path 4, "
			  "trace_sorter_negative_timestamp_dropped 2.");
	tm_buf_fini(&b);
}

int
main(void)
{
	RUN(t_stat_list);
	RUN(t_stat_value_and_verdict);
	return 0;
}

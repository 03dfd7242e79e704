/* SPDX-License-Identifier: MIT */
/* android_logcat scanner: the lines trace_processor v58.2 kept, their
 * timestamps (android_logs.ts of a full import) and stats, in any blocks;
 * a line without a year in the year of an empty sorter's guess (1970 on
 * the oracle's machine, set here). */
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "scan_helpers.h"

static void
check_blocks(const char *s)
{
	static const size_t blocks[] = {1, 3, 64};
	check_blocks_of(tm_scan_logcat_mem, s, blocks, sizeof blocks / sizeof blocks[0]);
}

#define EXPECT(txt, ops)                                                                           \
	do {                                                                                       \
		char *r_ = scan_str_n(tm_scan_logcat_mem, txt, strlen(txt), 0, 1);                 \
		CHECK_STR(r_, ops);                                                                \
		free(r_);                                                                          \
		check_blocks(txt);                                                                 \
	} while (0)

/* oracle: 6 rows, 97445123456789 97445500000000 97445678000000 (twice)
 * 34916645678000000 1704164645678912000; android_log_num_failed 1 */
static void
test_threadtime(void)
{
	EXPECT("--------- beginning of main\n"
	       "01-02 03:04:05.678  1000  1001 I tag: msg one\n"
	       "2024-01-02 03:04:05.678912  1000  1001 W tag2: msg two\n"
	       "01-02 03:04:05.5  1000  1001 D tag: short frac\n"
	       "01-02 03:04:05.1234567891  1000  1001 D tag: long frac\n"
	       "01-02 03:04:05.678  1000  1001 X tag: weird prio\n"
	       "01-02 03:04:05.678 abc 1001 I tag: bad pid xxxxxxxx\n"
	       "short line\n"
	       "13-40 03:04:05.678  1000  1001 I tag: month 13 day 40\n"
	       "01-02 03:04:05.678  1000  1001 I tag: last no newline",
	       "C97445678000000[L,tag,-1] C1704164645678912000[L,tag2,-1] "
	       "C97445500000000[L,tag,-1] C97445123456789[L,tag,-1] C97445678000000[L,tag,-1] "
	       "S:android_log_num_failed C34916645678000000[L,tag,-1]");
}

/* oracle: 97445678000000 97446000000000 (the uid column, named or not) */
static void
test_bugreport_style(void)
{
	EXPECT("01-02 03:04:05.678 root 1000 1001 I tag: bugreport style\n"
	       "01-02 03:04:06.000 1000 1000 1001 I tag: numeric uid\n",
	       "C97445678000000[L,tag,-1] C97446000000000[L,tag,-1]");
}

/* oracle: android_log_format_invalid 1, one row (the sniffer's line is
 * shorter than 30 bytes: skipped by ParseLine) */
static void
test_format_invalid_until_detected(void)
{
	EXPECT("01-02 03:04:05.678 1 2 I t:x\n"
	       "this line is long enough but no logcat line\n"
	       "01-02 03:04:05.678  1000  1001 I tag: msg one\n",
	       "S:android_log_format_invalid C97445678000000[L,tag,-1]");
}

int
main(void)
{
	tm_logcat_year_override = 1970;
	RUN(test_threadtime);
	RUN(test_bugreport_style);
	RUN(test_format_invalid_until_detected);
	return 0;
}

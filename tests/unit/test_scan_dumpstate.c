/* SPDX-License-Identifier: MIT */
/* android_dumpstate scanner: log lines held until the alarm service's
 * timezone, battery stats items, the failures; in any blocks.  The
 * figures are what trace_processor v58.2 printed for the same text (drops
 * of a tokenize-only run, counter and android_logs rows). */
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "scan_helpers.h"

static void
check_blocks(const char *s)
{
	static const size_t blocks[] = {1, 5, 64};
	check_blocks_of(tm_scan_dumpstate_mem, s, blocks, sizeof blocks / sizeof blocks[0]);
}

#define EXPECT(txt, ops)                                                                           \
	do {                                                                                       \
		char *r_ = scan_str_n(tm_scan_dumpstate_mem, txt, strlen(txt), 0, 1);              \
		CHECK_STR(r_, ops);                                                                \
		free(r_);                                                                          \
		check_blocks(txt);                                                                 \
	} while (0)

#define HDR                                                                                        \
	"========================================================\n"                               \
	"== dumpstate: 2024-01-02 03:04:05\n"                                                     \
	"========================================================\n"
#define LOG                                                                                        \
	"------ SYSTEM LOG (logcat -v threadtime -v printable -v uid -d *:v) ------\n"             \
	"01-02 03:04:05.678  1000  1000  1001 I tag: one\n"                                        \
	"01-02 03:04:06.678  1000  1000  1001 I tag: two\n"                                        \
	"------ 0.356s was the duration of 'SYSTEM LOG' ------\n"
#define ALARM                                                                                      \
	"------ DUMPSYS (/system/bin/dumpsys) ------\nDUMP OF SERVICE alarm:\n"                     \
	"  nowRTC=1704164645000=2024-01-02 04:04:05.000 nowELAPSED=403532\n"                       \
	"-----------------------------------------------------------------\n"

/* Log lines at their local time in year 0 (secs * 1e9 wraps), each
 * waiting for a timezone (w): the replay holds them (oracle: no
 * android_logs row, nothing dropped: tests/cli/formats.sh) */
static void
test_held_forever(void)
{
	EXPECT(HDR LOG, "Cw-6826889533193345152[L,tag,-1] Cw-6826889532193345152[L,tag,-1]");
}

/* The alarm's nowRTC line sets the timezone (+1 h) where it stands; the
 * replay pushes the held two (in ms) and the third at local - 1 h (oracle:
 * 3 trace_sorter_negative_timestamp_dropped: tests/cli/formats.sh) */
static void
test_timezone_then_log(void)
{
	EXPECT(HDR LOG ALARM
	       "------ EVENT LOG (logcat -b events -v threadtime -d *:v) ------\n"
	       "01-02 03:04:07.678  1000  1000  1001 I tag3: three\n",
	       "Cw-6826889533193345152[L,tag,-1] Cw-6826889532193345152[L,tag,-1] "
	       "Z3600000000000 Cw-6826889531193345152[L,tag3,-1]");
}

/* oracle: counters at 1732816430444000000 (2) and ...494000000 */
static void
test_battery_stats(void)
{
	EXPECT(HDR "------ CHECKIN BATTERYSTATS (dumpsys batterystats -c) ------\n"
		   "9,0,i,vers,36,214,AP1A,AP1A\n9,h,0:TIME:1732816430344\n9,h,100,+r,+s\n"
		   "9,h,50,-s\n9,h,0:START\n",
	       "C1732816430444000000[H,+r,-1] C1732816430444000000[H,+s,-1] "
	       "C1732816430494000000[H,-s,-1]");
	EXPECT("9,0,i,vers,36,214,AP1A,AP1A\n9,h,10,+r\n9,h,abc,+r\n",
	       "C10000000[H,+r,-1] F:Failed to convert string to int64_t");
	EXPECT("9,0,i,vers,36\nxx\n", "F:Unexpected start of battery stats checkin line");
}

int
main(void)
{
	RUN(test_held_forever);
	RUN(test_timezone_then_log);
	RUN(test_battery_stats);
	return 0;
}

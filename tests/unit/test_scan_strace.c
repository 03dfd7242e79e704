/* SPDX-License-Identifier: MIT */
/* strace scanner: what trace_processor v58.2 kept of `strace -ttt` lines
 * (slice ts) and the stats it counted, in any blocks. */
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "scan_helpers.h"

static void
check_blocks(const char *s)
{
	static const size_t blocks[] = {1, 4, 64};
	check_blocks_of(tm_scan_strace_mem, s, blocks, sizeof blocks / sizeof blocks[0]);
}

#define EXPECT(txt, ops)                                                                           \
	do {                                                                                       \
		char *r_ = scan_str_n(tm_scan_strace_mem, txt, strlen(txt), 0, 1);                 \
		CHECK_STR(r_, ops);                                                                \
		free(r_);                                                                          \
		check_blocks(txt);                                                                 \
	} while (0)

/* oracle: 1700000052000005000 twice, 1700000052000000000, one negative
 * drop; strace_parse_failure for the banner and the garbage,
 * strace_unsupported_timestamp_format for -tt */
static void
test_lines(void)
{
	EXPECT("1000 1700000052.5 read(3) = 1\n"
	       "1000 1700000052.000005 read(3) = 1\n"
	       "1000 9223372036.999999 x() = 0\n"
	       "1000 1700000052. y() = 0\n"
	       "+++ exited with 0 +++\n"
	       "not strace\n"
	       "1000 14:32:01.123456 close(3) = 0\n"
	       "1000 1.5 last() = 0",
	       "C1700000052000005000[S,read,-1] C1700000052000005000[S,read,-1] "
	       "C-9223372036709552616[S,x,-1] C1700000052000000000[S,y,-1] "
	       "S:strace_parse_failure S:strace_parse_failure "
	       "S:strace_unsupported_timestamp_format");
}

/* oracle: strace_missing_pid 2, the lines with a pid kept */
static void
test_missing_pid(void)
{
	EXPECT("1000 1.000000 a() = 0\n2.000000 b() = 0\n1000 3.000000 c() = 0\n",
	       "C1000000000[S,a,-1] C2000000000 C3000000000[S,c,-1]");
	struct tm_strace_event ev;
	CHECK_INT(tm_strace_parse("2.000000 b() = 0", 16, &ev), TM_ST_SYSCALL);
	CHECK(!ev.has_pid);
	CHECK_INT(tm_strace_parse("123456789 2.5 <... futex resumed> ) = 0", 39, &ev), TM_ST_SYSCALL);
	CHECK(ev.has_pid && ev.pid == 123456789 && ev.ts == 2000005000);
	/* ten digits: the timestamp, not a pid */
	CHECK_INT(tm_strace_parse("1700000000 read(3) = 1", 22, &ev), TM_ST_SYSCALL);
	CHECK(!ev.has_pid && ev.ts == 1700000000000000000);
}

int
main(void)
{
	RUN(test_lines);
	RUN(test_missing_pid);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* perf_text scanner: samples pushed only when complete, the import's
 * failures, the timestamp's double arithmetic; each case as
 * trace_processor v58.2 loaded it (counts of __intrinsic_profiler_sample,
 * its ts and stats), in any blocks. */
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "scan_helpers.h"

static void
check_blocks(const char *s)
{
	static const size_t blocks[] = {1, 2, 7, 64};
	check_blocks_of(tm_scan_perf_text_mem, s, blocks, sizeof blocks / sizeof blocks[0]);
}

#define EXPECT(txt, ops)                                                                           \
	do {                                                                                       \
		char *r_ = scan_str_n(tm_scan_perf_text_mem, txt, strlen(txt), 0, 1);              \
		CHECK_STR(r_, ops);                                                                \
		free(r_);                                                                          \
		check_blocks(txt);                                                                 \
	} while (0)

#define HEAD(t) "prog 123/456 [001] " t ":     250000 cpu-clock:\n"
#define FRAME "\tffffffff81000000 foo+0x10 (/lib/x.so)\n"
#define SAMPLE(t) HEAD(t) FRAME "\n"

/* oracle: 100000001000 and 100500000000 */
static void
test_samples(void)
{
	EXPECT(SAMPLE("100.000001") HEAD("100.500000") FRAME "\t 4000 bar (/bin/y)\n\n",
	       "C100000001000[P,foo,-1] C100500000000[P,foo,-1]");
}

/* oracle: one sample (the second has no closing empty line) */
static void
test_incomplete_sample_not_pushed(void)
{
	EXPECT(SAMPLE("100.000001") HEAD("101.000000") FRAME, "C100000001000[P,foo,-1]");
	/* nor a last line without '\n' */
	EXPECT(SAMPLE("100.000001") "garbage", "C100000001000[P,foo,-1]");
}

/* oracle: perf_text_importer_sample_no_frames 1, two samples */
static void
test_no_frames(void)
{
	EXPECT(SAMPLE("100.000001") HEAD("101.000000") "\n" SAMPLE("102.000000"),
	       "C100000001000[P,foo,-1] S:perf_text_importer_sample_no_frames "
	       "C102000000000[P,foo,-1]");
}

/* oracle: each fails the import with this text */
static void
test_failures(void)
{
	EXPECT(SAMPLE("100.000001") "prog 1 115540.8374:  250000 cpu-clock:\n\tff foo (/x)\n\n",
	       "C100000001000[P,foo,-1] F:Perf text parser: unable to parse sample line (context: "
	       "'prog 1 115540.8374:  250000 cpu-clock:')");
	EXPECT(SAMPLE("100.000001") "\n" SAMPLE("102.000000"),
	       "C100000001000[P,foo,-1] F:Perf text parser: unable to parse sample line "
	       "(context: '')");
	EXPECT(SAMPLE("100.000001") "prog 1 101.000000: x:\n\tffff foo\n\n",
	       "C100000001000[P,foo,-1] F:Perf text parser: unable to find mapping in frame "
	       "(context: 'ffff foo')");
	EXPECT(HEAD("1.000000") "\tnosymbol\n\n",
	       "F:Perf text parser: unable to find symbol in frame (context: 'nosymbol')");
	/* a frame of two tokens is enough (oracle: 2 samples), its symbol
	 * empty */
	EXPECT(SAMPLE("100.000001") "prog 1 101.000000: x:\n\tfoo (/x)\n\n",
	       "C100000001000[P,foo,-1] C101000000000[P,,-1]");
}

/* oracle: 1000, 303057417513000, 12345678999999000, and one
 * trace_sorter_negative_timestamp_dropped (the int64 conversion of
 * 9223372036.854775e9 is out of range) */
static void
test_timestamps(void)
{
	EXPECT(SAMPLE("303057.417513") SAMPLE("0.000001") SAMPLE("9223372036.854775")
		       SAMPLE("12345678.999999"),
	       "C303057417513000[P,foo,-1] C1000[P,foo,-1] C-9223372036854775808[P,foo,-1] "
	       "C12345678999999000[P,foo,-1]");
}

static void
test_sample_line(void)
{
	int64_t ts;
	const char *a = "trace_processor 3962131 303057.417513:          1 cpu_atom/cycles/Pu:";
	CHECK(tm_perf_text_sample_line(a, strlen(a), &ts));
	CHECK_INT(ts, 303057417513000);
	/* simpleperf: tabs after the comm; but the timestamp needs a space
	 * before it (oracle: a tab there is "Unknown trace type") */
	const char *b = "simpleperf\t1234/1235\t[2] 5.000001: 100 cpu-cycles:";
	CHECK(tm_perf_text_sample_line(b, strlen(b), &ts));
	CHECK_INT(ts, 5000001000);
	const char *b2 = "simpleperf\t1234/1235\t[2]\t5.000001: 100 cpu-cycles:";
	CHECK(!tm_perf_text_sample_line(b2, strlen(b2), &ts));
	/* a lone [cpu] has no tid */
	const char *c = "[2] 5.000001:";
	CHECK(!tm_perf_text_sample_line(c, strlen(c), &ts));
	/* strtoul: a sign and a value past 32 bits still parse */
	const char *d = "x -1/99999999999 5.000001:";
	CHECK(tm_perf_text_sample_line(d, strlen(d), &ts));
	const char *e = "x 1/2/3 5.000001:";
	CHECK(!tm_perf_text_sample_line(e, strlen(e), &ts));
	const char *f = "x 12 5.00001:";
	CHECK(!tm_perf_text_sample_line(f, strlen(f), &ts));
	/* the first colon that works: a later one */
	const char *g = "a:b 7 1.000000: x";
	CHECK(tm_perf_text_sample_line(g, strlen(g), &ts));
	CHECK_INT(ts, 1000000000);
}

int
main(void)
{
	RUN(test_samples);
	RUN(test_incomplete_sample_not_pushed);
	RUN(test_no_frames);
	RUN(test_failures);
	RUN(test_timestamps);
	RUN(test_sample_line);
	return 0;
}

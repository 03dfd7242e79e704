/* SPDX-License-Identifier: MIT */
/* tm_sniff: one case per format, detection priorities, and the 128-byte
 * whitespace-stripped window (util/trace_type.cc, GuessTraceType; a run checked against
 * trace_processor). */
#include "formats.h"
#include "internal.h"
#include "t.h"

static enum tm_format
S(const char *s)
{
	return tm_sniff(s, strlen(s));
}

static enum tm_format
SN(const void *p, size_t n)
{
	return tm_sniff(p, n);
}

static void
t_formats(void)
{
	unsigned char tar[600] = {0};
	memcpy(tar + 257, "ustar\0" "00", 8);
	CHECK_INT(SN(tar, sizeof tar), TM_FMT_TAR);
	memcpy(tar + 257, "ustar  \0", 8);
	CHECK_INT(SN(tar, sizeof tar), TM_FMT_TAR);
	CHECK_INT(SN(tar, 263), TM_FMT_UNKNOWN);
	CHECK_INT(S("ARROW1...."), TM_FMT_ARROW);
	CHECK_INT(SN("\x10\x00\x04\x46\x78\x54\x16\x00zz", 10), TM_FMT_FUCHSIA);
	CHECK_INT(S("PERFILE2xxxx"), TM_FMT_PERF);
	CHECK_INT(S("SIMPLEPERFxx"), TM_FMT_SIMPLEPERF_PROTO);
	CHECK_INT(SN("PK\x03\x04zz", 6), TM_FMT_ZIP);
	CHECK_INT(SN("\x1f\x8b\x08", 3), TM_FMT_GZIP);
	CHECK_INT(SN("\x28\xb5\x2f\xfd", 4), TM_FMT_ZSTD);
	CHECK_INT(SN("SLOW\x05\x00", 6), TM_FMT_ART_METHOD_V2);
	CHECK_INT(SN("SLOW\x03\x00", 6), TM_FMT_ART_METHOD);
	CHECK_INT(S("SLOW"), TM_FMT_ART_METHOD);
	CHECK_INT(S("*version\n3\n"), TM_FMT_ART_METHOD);
	CHECK_INT(S("JAVA PROFILE 1.0.3"), TM_FMT_ART_HPROF);
	CHECK_INT(S(" {\n \"perfetto_manifest\": {}}"), TM_FMT_MANIFEST);
	CHECK_INT(S("{\"meta\":{}}"), TM_FMT_GECKO);
	CHECK_INT(S("{ \"libs\":[]}"), TM_FMT_GECKO);
	CHECK_INT(S("{\"traceEvents\":[]}"), TM_FMT_JSON);
	CHECK_INT(S("[{\"ph\":\"X\"}]"), TM_FMT_JSON);
	CHECK_INT(S("[ {\"ph\":\"X\"}]"), TM_FMT_JSON);
	CHECK_INT(S("[1]"), TM_FMT_UNKNOWN);
	CHECK_INT(S("<?xml version=\"1.0\"?>\n<trace-query-result>"), TM_FMT_INSTRUMENTS_XML);
	CHECK_INT(SN("x\nTRACE:\n\x78\x9c", 12), TM_FMT_CTRACE);
	CHECK_INT(S("# ninja log v5\n"), TM_FMT_NINJA_LOG);
	CHECK_INT(S("--------- beginning of main\n"
		    "01-02 03:04:05.678  1000  1001 I tag: msg\n"),
		  TM_FMT_ANDROID_LOGCAT);
	CHECK_INT(S("2024-01-02 03:04:05.678  1000  1001 W tag: msg\n"), TM_FMT_ANDROID_LOGCAT);
	CHECK_INT(S("01-02 03:04:05.678 root 1000 1001 D tag: msg\n"), TM_FMT_ANDROID_LOGCAT);
	CHECK_INT(S("01-02 03:04:05.678  1000  1001 I tag: no newline"), TM_FMT_UNKNOWN);
	CHECK_INT(S("# comment\nmain;foo;bar 10\nmain;baz 3\n"), TM_FMT_COLLAPSED_STACK);
	CHECK_INT(S("main;foo 10\nnot a stack\n"), TM_FMT_UNKNOWN);
	CHECK_INT(S("trace_processor 3962131 303057.417513:          1 cpu_atom/cycles/Pu:\n"),
		  TM_FMT_PERF_TEXT);
	CHECK_INT(S("comm 10/11 [003] 12.000001: cycles:\n"), TM_FMT_PERF_TEXT);
	/* oracle: strtoul takes a sign and a tid past 32 bits; a tab before
	 * the timestamp or a 4-digit fraction is no sample line */
	CHECK_INT(S("x -1/99999999999 5.000001:\n"), TM_FMT_PERF_TEXT);
	CHECK_INT(S("simpleperf\t1/2\t[2]\t5.000001: 1 cycles:\n"), TM_FMT_UNKNOWN);
	CHECK_INT(S("prog 1 115540.8374:  250000 cpu-clock:\n"), TM_FMT_UNKNOWN);
	CHECK_INT(S("1700000000.123456 openat(AT_FDCWD, \"/x\", O_RDONLY) = 3\n"), TM_FMT_STRACE);
	CHECK_INT(S("1234 1700000000.123456 read(3, <unfinished ...>\n"), TM_FMT_STRACE);
	CHECK_INT(S("12:00:00.123456 read(3, \"\", 1) = 0\n"), TM_FMT_UNKNOWN);
	CHECK_INT(S("# tracer: nop\n"), TM_FMT_SYSTRACE);
	CHECK_INT(S("<!DOCTYPE html>"), TM_FMT_SYSTRACE);
	CHECK_INT(S("<HTML>"), TM_FMT_SYSTRACE);
	CHECK_INT(S("cpus=8\n"), TM_FMT_SYSTRACE);
	CHECK_INT(S(" foo"), TM_FMT_SYSTRACE);
	CHECK_INT(S("done\nTRACE:\nxx"), TM_FMT_SYSTRACE);
	/* symbols: packet with field 61 (LD) first */
	CHECK_INT(SN("\x0a\x05\xea\x03\x02\x08\x01", 7), TM_FMT_SYMBOLS);
	CHECK_INT(SN("\x0a\x00\xea\x03", 4), TM_FMT_PROTO);
	/* pprof: string_table (6) + sample_type (1) */
	CHECK_INT(SN("\x32\x03" "abc" "\x32\x03" "def", 10), TM_FMT_PPROF);
	CHECK_INT(SN("\x0a\x02\x08\x01\x0a\x02\x08\x01\x0a\x00", 10), TM_FMT_PROTO);
	CHECK_INT(SN("\x32\x03" "abc" "\x32\x03" "de", 9), TM_FMT_UNKNOWN); /* < 10 bytes */
	CHECK_INT(SN("\x0a\x02\x08\x01", 4), TM_FMT_PROTO);
	CHECK_INT(SN("\x09zzz", 4), TM_FMT_PRIMES);
	CHECK_INT(S("9,0,i,vers,4,..."), TM_FMT_ANDROID_DUMPSTATE);
	CHECK_INT(S("========================================================\n== dumpstate: 2024"),
		  TM_FMT_ANDROID_DUMPSTATE);
	CHECK_INT(S(""), TM_FMT_UNKNOWN);
	CHECK_INT(S("hello"), TM_FMT_UNKNOWN);
	CHECK_INT(tm_sniff(NULL, 0), TM_FMT_UNKNOWN);
}

static void
t_window(void)
{
	char b[400];
	for (int n = 126; n <= 128; n++) {
		memset(b, ' ', (size_t)n);
		strcpy(b + n, "{\"traceEvents\":[]}");
		CHECK_INT(S(b), n == 126 ? TM_FMT_JSON : TM_FMT_SYSTRACE);
	}
	memset(b, '\n', 200);
	strcpy(b + 200, "{\"traceEvents\":[]}");
	CHECK_INT(S(b), TM_FMT_PROTO);
	memset(b, '\t', 200);
	CHECK_INT(S(b), TM_FMT_PRIMES);
	/* the manifest wins over json, json over systrace's leading space */
	CHECK_INT(S("   {\"perfetto_manifest\":{\"version\":1}}"), TM_FMT_MANIFEST);
}

static void
t_tables(void)
{
	CHECK_STR(tm_format_name(TM_FMT_MANIFEST), "perfetto_manifest");
	CHECK_STR(tm_format_name(TM_FMT_PROTO), "proto");
	CHECK_STR(tm_format_name(TM_FMT__COUNT), "unknown");
	CHECK_INT(tm_format_priority(TM_FMT_MANIFEST), -1);
	CHECK_INT(tm_format_priority(TM_FMT_PROTO), 0);
	CHECK_INT(tm_format_priority(TM_FMT_GZIP), 1);
	CHECK_INT(tm_format_priority(TM_FMT_CTRACE), 2);
	CHECK_INT(tm_format_priority(TM_FMT_UNKNOWN), 2);
	CHECK_INT(tm_format_priority(TM_FMT_SYMBOLS), 3);
	CHECK(tm_format_is_container(TM_FMT_CTRACE));
	CHECK(!tm_format_is_container(TM_FMT_JSON));
	CHECK(tm_format_is_predicted(TM_FMT_SYSTRACE));
	CHECK(!tm_format_is_predicted(TM_FMT_NINJA_LOG));
}

/* Whether tm_sniff of b[0..n) answers as its oracle (tm_sniff_no_fast);
 * a difference is printed with the test's name and input number t.  The
 * answer counted in seen[TM_FMT__COUNT + 1]. */
static bool
sniff_same(const unsigned char *b, size_t n, const char *test, int t, int *seen)
{
	tm_sniff_no_fast = false;
	enum tm_format fast = tm_sniff(b, n);
	tm_sniff_no_fast = true;
	enum tm_format slow = tm_sniff(b, n);
	tm_sniff_no_fast = false;
	seen[(size_t)fast <= TM_FMT__COUNT ? (size_t)fast : TM_FMT__COUNT]++;
	if (fast == slow)
		return true;
	fprintf(stderr, "%s: input %d (%zu bytes): fast %d, oracle %d\n", test, t, n, (int)fast,
		(int)slow);
	return false;
}

/* Differential: tm_sniff with its fast substring search and capped
 * whitespace strip answers as the byte-at-a-time oracle (tm_sniff_no_fast)
 * on inputs built of whitespace, the needles the sniffers look for (whole,
 * cut, at the window's edge) and random bytes. */
static void
t_fast_same(void)
{
	static const char *const frag[] = {
		"{\"perfetto_manifest\"", "{\"perfetto_manifes", "{\"meta\"", "{\"libs\"", "{\"",
		"[{\"", "[", "TRACE:\n\x78\x9c", "TRACE:\n\x78", "TRACE:\n", "TRACE:", "# tracer",
		"# trace", "#", "T", "cpus=", " ", "\t", "\n", "\r\n", "\v\f", "<html>", "x"};
	const size_t nf = sizeof frag / sizeof frag[0];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	unsigned char b[320];
	int seen[TM_FMT__COUNT + 1] = {0};
	for (int t = 0; t < 200000 && !t_failed_; t++) {
		size_t n = 0, want;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		want = (size_t)(x % 300);
		if (x >> 60 == 0) { /* pad to just before the window's edge */
			size_t pad = 100 + (size_t)(x >> 40) % 28;
			memset(b, (x >> 32) & 1 ? ' ' : 'a', pad);
			n = pad;
		}
		while (n < want) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			if (x % 4 == 0) {
				b[n++] = (unsigned char)(x >> 24);
			} else {
				const char *f = frag[(x >> 8) % nf];
				size_t l = strlen(f);
				if (f[0] == '[' && f[1] == 0)
					l = 1;
				for (size_t k = 0; k < l && n < sizeof b; k++)
					b[n++] = (unsigned char)f[k];
			}
		}
		if (n > sizeof b)
			n = sizeof b;
		CHECK(sniff_same(b, n, "t_fast_same", t, seen));
	}
	/* not vacuous: the sniffers that use the two paths answered */
	CHECK(seen[TM_FMT_MANIFEST] > 100 && seen[TM_FMT_JSON] > 100 && seen[TM_FMT_GECKO] > 100);
	CHECK(seen[TM_FMT_CTRACE] > 100 && seen[TM_FMT_SYSTRACE] > 100);
}

/* Differential, the pprof walk's TracePacket steps: proto-like inputs
 * (mostly field 1 length-delimited, lengths of 1-3 byte varints, cut,
 * overrunning the end or truncated at it, among pprof's own fields and
 * other wire types) sniff as with tm_sniff_no_fast. */
static void
t_pprof_fast_same(void)
{
	static const uint8_t tags[] = {0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x0a, 0x12, 0x1a, 0x22,
				       0x2a, 0x32, 0x3a, 0x42, 0x5a, 0x6a, 0x68, 0x08, 0x09,
				       0x0d, 0x10, 0x38, 0x0b, 0x00, 0x8a};
	uint64_t x = 0x2545f4914f6cdd1dULL;
	static unsigned char b[4096];
	int seen[TM_FMT__COUNT + 1] = {0};
	for (int t = 0; t < 100000 && !t_failed_; t++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t want = 10 + (size_t)(x % (t % 8 ? 200 : 4000)), n = 0;
		while (n < want && n + 16 < sizeof b) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			uint8_t tag = tags[(x >> 3) % sizeof tags];
			b[n++] = tag;
			if (tag == 0x8a) { /* a two-byte tag: field 17 */
				b[n++] = 0x01;
				tag = 0x0a;
			}
			if ((tag & 7) == 2) {
				uint64_t len = x >> 58 == 0 ? (x >> 20) % 20000 : (x >> 20) % 40;
				if (x % 97 == 0)
					len = 1ull << 40; /* past any end */
				do {
					b[n++] = (uint8_t)((len & 0x7f) | (len >> 7 ? 0x80 : 0));
					len >>= 7;
				} while (len && n < sizeof b);
				for (uint64_t k = 0; k < (x >> 30) % 40 && n < sizeof b - 16; k++)
					b[n++] = (uint8_t)(x >> (k % 56));
			} else if ((tag & 7) == 0) {
				b[n++] = (uint8_t)(x >> 40) | (x % 5 == 0 ? 0x80 : 0);
				if (b[n - 1] & 0x80)
					b[n++] = 0x01;
			} else if ((tag & 7) == 1) {
				for (int k = 0; k < 8; k++)
					b[n++] = (uint8_t)(x >> k);
			} else if ((tag & 7) == 5) {
				for (int k = 0; k < 4; k++)
					b[n++] = (uint8_t)(x >> k);
			}
		}
		if (x % 7 == 0 && n > 1)
			n -= (size_t)(x >> 50) % n; /* cut anywhere */
		CHECK(sniff_same(b, n, "t_pprof_fast_same", t, seen));
	}
	/* not vacuous: pprof found and refused after packets */
	CHECK(seen[TM_FMT_PPROF] > 100 && seen[TM_FMT_PROTO] > 100);
}

int
main(void)
{
	RUN(t_formats);
	RUN(t_window);
	RUN(t_tables);
	RUN(t_fast_same);
	RUN(t_pprof_fast_same);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* Systrace text scanner: a run checked against trace_processor, the line regex,
 * HTML mode, block-boundary independence. */
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "scan_helpers.h"

static void
check_blocks(const char *s)
{
	static const size_t blocks[] = { 1, 3, 7, 200 };
	check_blocks_of(tm_scan_systrace_mem, s, blocks, sizeof blocks / sizeof blocks[0]);
}

#define EXPECT(txt, ops)                                                                           \
	do {                                                                                       \
		char *r_ = scan_str_n(tm_scan_systrace_mem, txt, strlen(txt), 0, 1);               \
		CHECK_STR(r_, ops);                                                                \
		free(r_);                                                                          \
		check_blocks(txt);                                                                 \
	} while (0)

#define HDR "# tracer: nop\n#\n"

/* run 78 */
static void
test_truncation(void)
{
	EXPECT(HDR "  a-1 [000] 1.000403869: foo: x\n"
		   "  a-1 [000] 33.000261327: foo: x\n"
		   "  a-1 [000] 100.0000001239: foo: x\n",
	       "C1000403868[-,foo,-1] C33000261326[-,foo,-1] C100000000123[-,foo,-1]");
}

static void
test_last_line_lost(void)
{
	EXPECT(HDR "  <...>-5 (    5) [001] ...1  10.5: tracing_mark_write: B|5|slice\n"
		   "  <...>-5 (    5) [001] ...1  11.5: tracing_mark_write: E|5",
	       "C10500000000[B,slice,-1]");
	EXPECT(HDR "  <...>-5 (    5) [001] ...1  10.5: tracing_mark_write: B|5|slice\n"
		   "  <...>-5 (    5) [001] ...1  11.5: tracing_mark_write: E|5\n",
	       "C10500000000[B,slice,-1] C11500000000[E,,-1]");
}

static void
test_headers_and_garbage(void)
{
	EXPECT("TRACE:\ncpus=4\n  x-2 [000] 1.5: sched_wakeup: a\n"
	       "garbage\n\n# comment\n",
	       "C1500000000[-,sched_wakeup,-1] S:systrace_parse_failure");
	/* cpus= must be digits only */
	EXPECT("cpus=4x\n  x-2 [000] 1.5: e: a\n", "S:systrace_parse_failure C1500000000[-,e,-1]");
	/* </script> ends the trace even outside HTML */
	EXPECT(HDR "  x-2 [000] 1.5: e: a\n</script>\n  x-2 [000] 2.5: e: a\n",
	       "C1500000000[-,e,-1]");
}

static void
test_regex(void)
{
	struct tm_systrace_line l;
	const char *a = "kworker/u16:1-77    (   77) [004] ....   316.196720: 0: B|77|__scm_call|0";
	CHECK(tm_systrace_tokenize(a, strlen(a), &l));
	CHECK_INT(l.pid, 77);
	CHECK_INT(l.ts, 316196720000);
	CHECK(l.event_len == 1 && l.event[0] == '0');
	CHECK(l.args_len == 17 && !memcmp(l.args, "B|77|__scm_call|0", 17));
	const char *b = "<idle>-0     [000] ...2     0.002188: task_newtask: pid=1 comm=x";
	CHECK(tm_systrace_tokenize(b, strlen(b), &l));
	CHECK_INT(l.pid, 0);
	CHECK_INT(l.ts, 2188000);
	CHECK(l.event_len == 12 && !memcmp(l.event, "task_newtask", 12));
	const char *c = "<idle>-0     [000]  0.002188: task_newtask: pid=1";
	CHECK(tm_systrace_tokenize(c, strlen(c), &l));
	const char *d = "com.google-android-1234 ( 1234) [000] d..3 5.000001: sched_switch: a";
	CHECK(tm_systrace_tokenize(d, strlen(d), &l));
	CHECK_INT(l.pid, 1234);
	const char *e = "Binder:12_3-4567  (-----) [001] .... 7.5: foo:bar: x";
	CHECK(tm_systrace_tokenize(e, strlen(e), &l));
	CHECK_INT(l.pid, 4567);
	CHECK(l.event_len == 7 && !memcmp(l.event, "foo:bar", 7));
	const char *f = "no match here";
	CHECK(!tm_systrace_tokenize(f, strlen(f), &l));
	const char *g = "x-1 [0] 1: e:";
	CHECK(!tm_systrace_tokenize(g, strlen(g), &l));
	/* a long run of spaces does not blow up */
	size_t n = 20000;
	char *sp = malloc(n + 16);
	memcpy(sp, "-1", 2);
	memset(sp + 2, ' ', n);
	memcpy(sp + 2 + n, "x", 2);
	CHECK(!tm_systrace_tokenize(sp, n + 3, &l));
	free(sp);
}

static void
test_points(void)
{
	EXPECT(HDR "  a-9 ( 9) [0] 1.0: tracing_mark_write: S|9|async|42\n"
		   "  a-9 ( 9) [0] 2.0: tracing_mark_write: F|9|async|42\n"
		   "  a-9 ( 9) [0] 3.0: tracing_mark_write: C|9|ctr|7\n"
		   "  a-9 ( 9) [0] 4.0: print: B|9|\n",
	       "C1000000000[B,async,-1] C2000000000[E,async,-1] C3000000000[C,ctr,v=7] "
	       "C4000000000[B,[empty slice name],-1]");
}

/* A NUL ends the line for the regex (it sees a C string) and a '<' may
 * start "</script>": the line finder notes both, before the 16-byte
 * stretch it reads by and in the bytes after the last one. */
static void
test_nul_and_lt(void)
{
#define NL(txt, ops) { txt, sizeof txt - 1, ops } /* sizeof: NULs counted */
	static const struct {
		const char *txt;
		size_t n;
		const char *ops;
	} c[] = {
		/* the NUL cuts "e\0:" to "e": no ':' after the name */
		NL(HDR "  a-1 [000] 1.5: e\0: x\n", "S:systrace_parse_failure"),
		NL(HDR "  a-1 [000] 1.5: eeeeeeeeeeeeeeeeeeeeeeeeee\0: x\n", "S:systrace_parse_failure"),
		/* after the name's ':' a NUL only shortens the args */
		NL(HDR "  a-1 [000] 1.5: e: x\0y\n", "C1500000000[-,e,-1]"),
		NL(HDR "  a-1 [000] 1.5: e: x <b>\n  a-1 [000] 2.5: e: </script\n",
		   "C1500000000[-,e,-1] C2500000000[-,e,-1]"),
		NL(HDR "  a-1 [000] 1.5: e: x\n  a-1 [000] 2.5: e: </script>\n  a-1 [000] 3.5: e: x\n",
		   "C1500000000[-,e,-1]"),
	};
#undef NL
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char *r = scan_str_n(tm_scan_systrace_mem, c[i].txt, c[i].n, 0, 1);
		CHECK_STR(r, c[i].ops);
		free(r);
	}
}

static void
test_html(void)
{
	EXPECT("<!DOCTYPE html>\n<html>\n"
	       "<script class=\"trace-data\" type=\"application/text\">\n"
	       "PROCESS DUMP\nUSER PID PPID VSZ RSS WCHAN PC S NAME COMM\n"
	       "root 1 0 1 1 0 0 S init /init\n</script>\n"
	       "<script class=\"trace-data\" type=\"application/text\">\n"
	       "# tracer: nop\n#           TASK-PID    CPU#  TIMESTAMP  FUNCTION\n"
	       "  a-9 ( 9) [0] 1.0: e: x\n</script>\n  a-9 ( 9) [0] 2.0: e: x\n",
	       "C1000000000[-,e,-1]");
	EXPECT("<html>\n<script class=\"trace-data\" type=\"application/text\">\n"
	       "PROCESS DUMP\nUSER PID PPID VSZ RSS WCHAN PC S NAME COMM\n"
	       "root x 0 1 1 0 0 S init /init\n",
	       "F:Could not parse PROCESS DUMP line");
}

/* The timestamp is strtod's value times 1e9 (SystraceLineTokenizer's
 * std::stod); the fast decimal path must give the same double for every
 * digit split and length, including past its 15-digit limit.  A memo left
 * from a previous line must not make a later line fail. */
static void
test_ts_digits(void)
{
	uint64_t x = 88172645463325252ull;
	char line[128], num[40];
	struct tm_systrace_line l;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int ia = 1 + (int)(x % 10), fb = 1 + (int)((x >> 8) % 12), k = 0;
		uint64_t y = x;
		for (int d = 0; d < ia + 1 + fb; d++) {
			num[k++] = d == ia ? '.' : (char)('0' + y % 10);
			y = y / 10 ? y / 10 : x >> 5;
		}
		num[k] = 0;
		snprintf(line, sizeof line, "  x-7 [001] %s: e: a", num);
		CHECK(tm_systrace_tokenize(line, strlen(line), &l));
		double ns = strtod(num, NULL) * 1e9;
		int64_t want = (ns < 9223372036854775808.0 && ns >= -9223372036854775808.0) ? (int64_t)ns
											   : INT64_MIN;
		if (l.ts != want) {
			CHECK_STR(num, "(timestamp differs from strtod)");
			break;
		}
		if (i % 1000 == 0) {
			const char *bad = "  x-7 [001] 1.5 e: a"; /* no colon: fails */
			CHECK(!tm_systrace_tokenize(bad, strlen(bad), &l));
		}
	}
}

/* ---- differential: the first-path matcher against the backtracking one ---- */

static uint64_t rng_ = 0x9E3779B97F4A7C15ull;

static uint64_t
rnd(uint64_t n)
{
	rng_ ^= rng_ << 13, rng_ ^= rng_ >> 7, rng_ ^= rng_ << 17;
	return n ? rng_ % n : 0;
}

static void
add_run(char *b, size_t *k, size_t cap, const char *alpha, size_t lo, size_t hi)
{
	size_t n = lo + rnd(hi - lo + 1), na = strlen(alpha);
	for (size_t i = 0; i < n && *k < cap; i++)
		b[(*k)++] = alpha[rnd(na)];
}

static void
add_lit(char *b, size_t *k, size_t cap, const char *lit)
{
	for (; *lit && *k < cap; lit++)
		b[(*k)++] = *lit;
}

/* A line of the systrace shape with random variation in every part. */
static size_t
gen_line(char *b, size_t cap)
{
	static const char *names[] = { "worker", "<...>", "kworker/u16:1", "Binder:12_3", "a-b",
				       "x-1-2", "RenderThread", "--", "<idle>", "a b" };
	static const char *flags[] = { "d..3", "....", "...1", "dNh.", "d.h2", "X.a", "abc",
				       "abcde", "....12", ".", "" };
	static const char *events[] = { "sched_switch", "tracing_mark_write", "0", "print",
					"a:b", "e:", ":", "x:y:z", "clk", "" };
	size_t k = 0;
	const char *ws = rnd(4) ? " " : " \t\r\v\f\n";
	add_run(b, &k, cap, " ", 0, 12);
	add_lit(b, &k, cap, names[rnd(10)]);
	if (rnd(8))
		add_lit(b, &k, cap, "-");
	if (rnd(20))
		add_run(b, &k, cap, rnd(10) ? "0123456789" : "0", 1, rnd(30) ? 6 : 70);
	add_run(b, &k, cap, ws, rnd(10) ? 1 : 0, 4);
	if (rnd(3)) {
		if (rnd(8))
			add_lit(b, &k, cap, "(");
		add_run(b, &k, cap, ws, 0, 3);
		int t = (int)rnd(5);
		if (t < 3)
			add_run(b, &k, cap, "0123456789", 1, 5);
		else if (t == 3)
			add_run(b, &k, cap, "-", 1, 5);
		if (rnd(8))
			add_lit(b, &k, cap, ")");
	}
	add_run(b, &k, cap, ws, 0, 2);
	if (rnd(20))
		add_lit(b, &k, cap, "[");
	add_run(b, &k, cap, "0123456789", rnd(20) ? 1 : 0, 3);
	if (rnd(20))
		add_lit(b, &k, cap, "]");
	add_run(b, &k, cap, ws, 0, 3);
	add_lit(b, &k, cap, flags[rnd(11)]);
	add_run(b, &k, cap, ws, 0, 3);
	add_run(b, &k, cap, "0123456789", rnd(20) ? 1 : 0, rnd(10) ? 6 : 20);
	if (rnd(20))
		add_lit(b, &k, cap, ".");
	add_run(b, &k, cap, "0123456789", rnd(20) ? 1 : 0, rnd(10) ? 9 : 20);
	if (rnd(20))
		add_lit(b, &k, cap, ":");
	add_run(b, &k, cap, ws, rnd(20) ? 1 : 0, 3);
	add_lit(b, &k, cap, events[rnd(10)]);
	if (rnd(10))
		add_lit(b, &k, cap, ":");
	add_run(b, &k, cap, " abc|B|E|12:-[]().\t\r", 0, 30);
	/* mutations */
	static const char mut[] = "-0123456789 \t\r()[].:adfX|\n";
	for (int m = rnd(3) ? 0 : 1 + (int)rnd(3); m > 0; m--) {
		size_t at = rnd(k + 1);
		int op = (int)rnd(4);
		char c = op == 3 ? 0 : mut[rnd(sizeof mut - 1)];
		if (op == 0 && k) { /* delete */
			if (at < k)
				memmove(b + at, b + at + 1, k - at - 1), k--;
		} else if (op == 1 && at < k) {
			b[at] = c;
		} else if (k < cap) { /* insert (op 3: a NUL) */
			memmove(b + at + 1, b + at, k - at);
			b[at] = c;
			k++;
		}
	}
	return k;
}

static void
test_first_path_matches_backtracking(void)
{
	char b[512];
	size_t nok = 0;
	for (int i = 0; i < 300000; i++) {
		size_t n = gen_line(b, sizeof b - 1);
		b[n] = 0;
		struct tm_systrace_line a, r;
		memset(&a, 0x55, sizeof a);
		memset(&r, 0x55, sizeof r);
		bool fa = tm_systrace_tokenize(b, n, &a), fr = tm_systrace_tokenize_ref(b, n, &r);
		CHECK(fa == fr);
		if (fa && fr) {
			nok++;
			CHECK_INT(a.pid, r.pid);
			CHECK_INT(a.ts, r.ts);
			CHECK(a.event == r.event && a.event_len == r.event_len);
			CHECK(a.args == r.args && a.args_len == r.args_len);
		}
		if (t_failed_) {
			for (size_t j = 0; j < n; j++)
				if ((unsigned char)b[j] < 32)
					b[j] = '~';
			CHECK_STR(b, "(line where the two matchers differ)");
			return;
		}
	}
	CHECK(nok > 60000); /* many lines match, so the captures are compared */
}

int
main(void)
{
	RUN(test_truncation);
	RUN(test_last_line_lost);
	RUN(test_headers_and_garbage);
	RUN(test_regex);
	RUN(test_ts_digits);
	RUN(test_points);
	RUN(test_html);
	RUN(test_nul_and_lt);
	RUN(test_first_path_matches_backtracking);
	return 0;
}

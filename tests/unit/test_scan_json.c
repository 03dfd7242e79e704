/* SPDX-License-Identifier: MIT */
/* Chrome JSON scanner: trace_processor's tokenizer semantics (runs 73-77 of
 * checked against trace_processor), block-boundary independence, limits, conformance. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "t.h"
#include "align_scan.h"
#include "scan_helpers.h"
#include "json_lex.h"

static char *
js(const char *s)
{
	return scan_str_n(tm_scan_json_mem, s, strlen(s), 0, 0);
}

/* Same ops whatever the block size. */
static void
check_blocks(const char *s)
{
	static const size_t blocks[] = { 1, 2, 3, 7, 64 };
	check_blocks_of(tm_scan_json_mem, s, blocks, sizeof blocks / sizeof blocks[0]);
}

#define EXPECT(json, ops)                                                                          \
	do {                                                                                       \
		char *r_ = js(json);                                                               \
		CHECK_STR(r_, ops);                                                                \
		free(r_);                                                                          \
		check_blocks(json);                                                                \
	} while (0)

static void
ts_one(const char *ts, const char *want)
{
	char buf[256];
	snprintf(buf, sizeof buf, "[{\"ph\":\"X\",\"ts\":%s,\"dur\":1,\"pid\":1,\"tid\":1}]", ts);
	EXPECT(buf, want);
}

/* run 73 */
static void
test_ts_rounding(void)
{
	ts_one("1", "C1000");
	ts_one("1.5", "C1500");
	ts_one("1.0005", "C1001");
	ts_one("1.2345", "C1235");
	ts_one("0.0005", "C1");
	ts_one("0.0015", "C2");
	ts_one("-0.0004", "C0");
	ts_one("2.0", "C2000");
	ts_one("1e3", "C1000000");
	ts_one("\"123\"", "C123000");
	ts_one("\"12.5\"", "C12500");
	ts_one("-1", "C-1000");
	ts_one("\"abc\"", "S:json_tokenizer_failure");
	ts_one("\" 12\"", "S:json_tokenizer_failure");
	ts_one("\"12 \"", "S:json_tokenizer_failure");
	ts_one("null", "S:json_tokenizer_failure");
	ts_one("1E+2", "C100000");
	ts_one("-0", "C0");
}

static void
test_missing_ts(void)
{
	EXPECT("[{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1}]", "C0");
	EXPECT("[{\"ph\":\"X\",\"pid\":1}]", "S:json_tokenizer_failure");
	EXPECT("[{\"ts\":1}]", "S:json_tokenizer_failure");
	EXPECT("[{}]", "");
	EXPECT("[{\"ph\":\"\",\"ts\":1}]", "S:json_tokenizer_failure");
	EXPECT("[{\"ph\":1,\"ts\":1}]", "S:json_tokenizer_failure");
	/* every other phase is pushed once */
	EXPECT("[{\"ph\":\"B\",\"ts\":1},{\"ph\":\"E\",\"ts\":2},{\"ph\":\"i\",\"ts\":3},"
	       "{\"ph\":\"C\",\"ts\":4},{\"ph\":\"b\",\"ts\":5},{\"ph\":\"n\",\"ts\":6}]",
	       "C1000 C2000 C3000 C4000 C5000 C6000");
}

/* run 74 */
static void
test_bad_dur(void)
{
	EXPECT("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":1},{\"ph\":\"X\",\"ts\":2,"
	       "\"dur\":\"x\"},{\"ph\":\"X\",\"ts\":3,\"dur\":1}]}",
	       "C1000 S:json_tokenizer_failure F:JSON trace file is incomplete (ERR:tp-corrupt)");
	EXPECT("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":2,\"tts\":null}]}",
	       "S:json_tokenizer_failure F:JSON trace file is incomplete (ERR:tp-corrupt)");
	EXPECT("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":2,\"tdur\":{}}]}",
	       "S:json_tokenizer_failure F:JSON trace file is incomplete (ERR:tp-corrupt)");
	/* array form: nothing after it is read, but no failure at EOF */
	EXPECT("[{\"ph\":\"X\",\"ts\":1,\"dur\":\"x\"},{\"ph\":\"X\",\"ts\":3,\"dur\":1}]",
	       "S:json_tokenizer_failure");
	/* a numeric string dur is fine */
	EXPECT("[{\"ph\":\"X\",\"ts\":1,\"dur\":\"5\"}]", "C1000");
}

/* run 75 */
static void
test_forms(void)
{
	const char *e1 = "{\"ph\":\"X\",\"ts\":1,\"dur\":1}", *e2 = "{\"ph\":\"X\",\"ts\":2,\"dur\":1}";
	char b[512];
	snprintf(b, sizeof b, "[%s,%s", e1, e2);
	EXPECT(b, "C1000 C2000");
	snprintf(b, sizeof b, "[%s,%s,", e1, e2);
	EXPECT(b, "C1000 C2000");
	snprintf(b, sizeof b, "[%s,%s,]", e1, e2);
	EXPECT(b, "C1000 C2000");
	snprintf(b, sizeof b, "[%s,%s]\n", e1, e2);
	EXPECT(b, "C1000 C2000");
	snprintf(b, sizeof b, "{\"traceEvents\":[%s,%s]", e1, e2);
	EXPECT(b, "C1000 C2000 F:JSON trace file is incomplete (ERR:tp-corrupt)");
	snprintf(b, sizeof b, "{\"traceEvents\":[%s,%s", e1, e2);
	EXPECT(b, "C1000 C2000 F:JSON trace file is incomplete (ERR:tp-corrupt)");
	snprintf(b, sizeof b, "{\"traceEvents\":[%s,%s,]}", e1, e2);
	EXPECT(b, "C1000 C2000");
	/* a partial last event in the array form is silently lost */
	snprintf(b, sizeof b, "[%s,{\"ph\":\"X\",\"ts\":5", e1);
	EXPECT(b, "C1000");
	/* two commas */
	snprintf(b, sizeof b, "[%s,,%s]", e1, e2);
	EXPECT(b, "C1000 F:Failure parsing JSON: Expected '{' or '[' at the start. Got ','");
	/* unknown keys, nested, before and after; two traceEvents keys */
	snprintf(b, sizeof b,
		 "{\"x\":{\"a\":[1,{\"b\":\"]}\"}]},\"traceEvents\":[%s],\"y\":[[]],"
		 "\"metadata\":{\"m\":1},\"traceEvents\":[%s]}",
		 e1, e2);
	EXPECT(b, "C1000 C2000");
	snprintf(b, sizeof b, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[%s]}", e1);
	EXPECT(b, "S:json_display_time_unit C1000");
	EXPECT("{\"displayTimeUnit\":1,\"traceEvents\":[]}", "F:Could not parse displayTimeUnit");
	EXPECT("{\"traceEvents\":{}}", "F:Failure parsing JSON: traceEvents is not an array.");
	EXPECT("{\"x\":[}]}", "F:Failure parsing JSON: error while parsing value for key x");
	EXPECT("{\"traceEvents\":[],,\"y\":1}", "");
	EXPECT("{\"a\":1 x}", "");
	EXPECT("  \n x", "F:Failure parsing JSON: first non-whitespace character is not [ or {");
}

static void
test_event_syntax(void)
{
	EXPECT("[{\"ph\":\"X\",\"ts\":01}]",
	       "F:Failure parsing JSON: Invalid number: leading zero in '01}]'");
	EXPECT("[{\"ph\":\"X\" \"ts\":1}]",
	       "F:Failure parsing JSON: Expected ',' or '}' after value for key 'ph'. Got '\"'");
	EXPECT("[{\"ph\":\"X\",\"ts\":1,}]", "C1000");
	EXPECT("[{\"ph\":\"X\",\"ts\":tru}]",
	       "F:Failure parsing JSON: Invalid token: expected 'true' but got 'tru}'");
	EXPECT("[{\"ph\":\"X\",\"ts\":tr", "");
	EXPECT("[{\"ph\":\"X\",\"ts\":trux}]",
	       "F:Failure parsing JSON: Invalid token: expected 'true' but got 'trux'");
	EXPECT("[{\"ph\":\"X\",\"name\":\"\\uD83D\\uDE00\",\"ts\":1}]",
	       "F:Failure parsing JSON: Invalid escape sequence: \\uD83D (code point 55357 is "
	       "reserved for surrogate pairs)");
	/* unknown escapes vanish, \u is decoded, invalid UTF-8 is just bytes */
	EXPECT("[{\"ph\":\"X\",\"name\":\"a\\qb\\u00e9\xff\xfe\",\"ts\":1}]", "C1000");
	/* escaped quote and braces inside strings */
	EXPECT("[{\"args\":{\"s\":\"}\\\"{\"},\"ph\":\"X\",\"ts\":1}]", "C1000");
	/* integer overflow: parsed as a double, but the iterator's status stays
	 * set and is reported if the event then stops early */
	EXPECT("[{\"ph\":\"X\",\"ts\":1,\"x\":99999999999999999999,\"dur\":\"x\"}]",
	       "S:json_tokenizer_failure F:Failure parsing JSON: Integer overflow parsing "
	       "'99999999999999999999'");
	EXPECT("[{\"ph\":\"X\",\"ts\":1,\"x\":99999999999999999999}]", "C1000");
	/* bad id2 counts a failure, the event is still pushed */
	EXPECT("[{\"ph\":\"b\",\"ts\":1,\"id2\":{\"local\":01}}]", "S:json_tokenizer_failure C1000");
	/* array as an event */
	EXPECT("[[1]]", "F:Failure parsing JSON: Expected '\"' at the start of key. Got '1'");
}

static void
test_details(void)
{
	/* (the length was 93 for these 82 bytes: the scan read past them) */
	const char *j = "[{\"name\":\"a\\\"b\",\"ph\":\"X\",\"ts\":1.5,\"dur\":2.5,\"pid\":1},"
			"{\"name\":\"s\",\"ph\":\"B\",\"ts\":3}]";
	char *r = scan_str_n(tm_scan_json_mem, j, strlen(j), 0, 1);
	CHECK_STR(r, "C1500[X,a\"b,2500] C3000[B,s,-1]");
	free(r);
}

/* run 77 */
static void
test_system_trace_events(void)
{
	const char *j =
		"{\"traceEvents\":[],\"systemTraceEvents\":\"# tracer: nop\\n"
		"  <...>-12 (  12) [000] ...1 100.000200: tracing_mark_write: B|12|work\\n"
		"\\n  <...>-12 (  12) [000] ...1 100.000300: tracing_mark_write: E|12\"}";
	char *r = scan_str_n(tm_scan_json_mem, j, strlen(j), 0, 1);
	/* the last line has no \n: lost */
	CHECK_STR(r, "C100000200000[B,work,-1]");
	free(r);
	check_blocks(j);
	EXPECT("{\"systemTraceEvents\":\"garbage\\n\"}",
	       "F:Not a known systrace event format (line: garbage)");
	EXPECT("{\"systemTraceEvents\":\"a\\x\\n\"}",
	       "F:Failure parsing JSON: encountered fatal error while parsing event inside trace "
	       "event string");
	EXPECT("{\"systemTraceEvents\":\"x-1 [0] 1.5: e: \\n", "C1500000000 F:JSON trace file is "
							       "incomplete (ERR:tp-corrupt)");
}

static void
test_huge_and_deep(void)
{
	/* a 3 MB name and 100k-deep args nesting, fed in small blocks */
	size_t n = 3u << 20;
	char *big = malloc(n + 200);
	size_t o = (size_t)sprintf(big, "[{\"ph\":\"X\",\"ts\":7,\"name\":\"");
	memset(big + o, 'a', n);
	o += n;
	o += (size_t)sprintf(big + o, "\"},{\"ph\":\"X\",\"ts\":8}]");
	char *r = scan_str_n(tm_scan_json_mem, big, o, 4096, 0);
	CHECK_STR(r, "C7000 C8000");
	free(r);
	r = scan_str_n(tm_scan_json_mem, big, o, 1, 0);
	CHECK_STR(r, "C7000 C8000");
	free(r);
	free(big);
	size_t d = 100000;
	char *deep = malloc(2 * d + 100);
	o = (size_t)sprintf(deep, "[{\"ph\":\"X\",\"ts\":1,\"args\":");
	for (size_t i = 0; i < d; i++)
		deep[o++] = '[';
	for (size_t i = 0; i < d; i++)
		deep[o++] = ']';
	o += (size_t)sprintf(deep + o, "}]");
	r = scan_str_n(tm_scan_json_mem, deep, o, 100, 0);
	CHECK_STR(r, "C1000");
	free(r);
	free(deep);
	/* an event that never closes: bounded memory, clear error */
	size_t h = (65u << 20);
	char *inf = malloc(h);
	memcpy(inf, "[{\"a\":\"", 7);
	memset(inf + 7, 'x', h - 7);
	r = scan_str_n(tm_scan_json_mem, inf, h, 1u << 20, 0);
	CHECK(strstr(r, "ERR:") && strstr(r, "larger than 64 MiB"));
	free(r);
	free(inf);
}

static char *
slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct tm_buf b;
	tm_buf_init(&b);
	char tmp[65536];
	size_t k;
	while ((k = fread(tmp, 1, sizeof tmp, f)) > 0)
		tm_buf_add(&b, tmp, k);
	fclose(f);
	*n = b.len;
	return tm_buf_steal(&b);
}

static int n_conf;

static void
conf_one(const char *name, const char *data, size_t n)
{
	enum tm_format f = tm_sniff(data, n);
	if (f != TM_FMT_JSON && f != TM_FMT_SYSTRACE)
		return;
	scan_fn fn = f == TM_FMT_JSON ? tm_scan_json_mem : tm_scan_systrace_mem;
	char *a = scan_str_n(fn, data, n, 0, 1);
	char *b = scan_str_n(fn, data, n, 5, 1);
	CHECK(strncmp(a, "ERR:", 4) != 0);
	if (strcmp(a, b) != 0) {
		fprintf(stderr, "conformance %s: block-size dependent\n", name);
		CHECK_STR(b, a);
	}
	if (strstr(a, "F:"))
		fprintf(stderr, "conformance %s: %s\n", name, strstr(a, "F:"));
	n_conf++;
	free(a);
	free(b);
}

static void
test_conformance(void)
{
	const char *root = T_CORPUS;
	DIR *d = opendir(root);
	if (!d) {
		FAILF("cannot open the conformance corpus %s", root);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[1024];
		size_t n;
		const char *files[] = { "input.json", "input.txt", "input.systrace" };
		for (size_t i = 0; i < 3; i++) {
			snprintf(path, sizeof path, "%s/%s/%s", root, de->d_name, files[i]);
			char *data = slurp(path, &n);
			if (data) {
				conf_one(path, data, n);
				free(data);
			}
		}
		snprintf(path, sizeof path, "%s/%s/input.zip", root, de->d_name);
		struct stat st;
		if (stat(path, &st) == 0) {
			char cmd[2200];
			snprintf(cmd, sizeof cmd, "unzip -Z1 '%s' 2>/dev/null", path);
			FILE *ls = popen(cmd, "r");
			char member[1024];
			while (ls && fgets(member, sizeof member, ls)) {
				member[strcspn(member, "\n")] = 0;
				if (!member[0] || member[strlen(member) - 1] == '/')
					continue;
				snprintf(cmd, sizeof cmd, "unzip -p '%s' '%s' 2>/dev/null", path,
					 member);
				FILE *p = popen(cmd, "r");
				struct tm_buf b;
				tm_buf_init(&b);
				char tmp[65536];
				size_t k;
				while (p && (k = fread(tmp, 1, sizeof tmp, p)) > 0)
					tm_buf_add(&b, tmp, k);
				if (p)
					pclose(p);
				char label[2100];
				snprintf(label, sizeof label, "%s:%s", path, member);
				conf_one(label, b.data ? b.data : "", b.len);
				tm_buf_fini(&b);
			}
			if (ls)
				pclose(ls);
		}
	}
	closedir(d);
	CHECK(n_conf > 0);
}

/* ---- differential tests of the lexer's fast paths ---- */

static uint64_t rs_ = 0x243F6A8885A308D3ull;

static uint64_t
rn(uint64_t n)
{
	rs_ ^= rs_ << 13, rs_ ^= rs_ >> 7, rs_ ^= rs_ << 17;
	return n ? rs_ % n : 0;
}

static void
digits(char *b, size_t *k, size_t lo, size_t hi)
{
	for (size_t n = lo + rn(hi - lo + 1); n; n--)
		b[(*k)++] = (char)('0' + rn(10));
}

/* Numbers: the digits accumulated on the way (8 bytes at a time where 16
 * are left in the window) give what tm_jl_to_int64 and tm_jl_to_double give
 * on the token (the conversion before the fast path), bit for bit, for
 * every length, sign, fraction and exponent. */
static void
test_number_fast_path(void)
{
	static const char *odd[] = { "NaN", "-", "--1", "1.", ".5", "1e", "1e+", "+1", "-0",
				     "-0.0", "0.0e0", "00", "01.5", "Infinity", "1E400", "1e-400",
				     "9223372036854775807", "9223372036854775808",
				     "-9223372036854775808", "-9223372036854775809",
				     "999999999999999999", "1000000000000000000",
				     "0.999999999999999999", "0.9999999999999999999",
				     "123456789012345678.123456789012345678" };
	struct tm_buf msg, sticky;
	tm_buf_init(&msg);
	tm_buf_init(&sticky);
	char b[160];
	for (int i = 0; i < 300000; i++) {
		size_t k = 0;
		if (i < (int)(sizeof odd / sizeof odd[0])) {
			k = strlen(odd[i]);
			memcpy(b, odd[i], k);
		} else {
			if (rn(3) == 0)
				b[k++] = '-';
			if (rn(6) == 0)
				b[k++] = '0';
			else
				digits(b, &k, rn(30) ? 1 : 0, rn(4) ? 8 : 24);
			if (rn(2)) {
				b[k++] = '.';
				digits(b, &k, rn(30) ? 1 : 0, rn(4) ? 8 : 24);
			}
			if (rn(5) == 0) {
				b[k++] = rn(2) ? 'e' : 'E';
				if (rn(2))
					b[k++] = rn(2) ? '-' : '+';
				digits(b, &k, rn(30) ? 1 : 0, 3);
			}
		}
		b[k] = "},:/"[rn(4)]; /* ':' and '/' border the digits */
		/* bytes after the token (digits too), so the 8-bytes-at-a-time
		 * digit runs are taken as well as the byte loop near the end */
		size_t pad = rn(3) ? rn(24) : 0;
		for (size_t j = 1; j <= pad; j++)
			b[k + j] = rn(2) ? (char)('0' + rn(10)) : "\"{}e.,-:/\x80\xb9"[rn(11)];
		b[k + pad + 1] = 0;
		tm_buf_reset(&msg);
		tm_buf_reset(&sticky);
		struct tm_jl lx = { .end = b + k + 1 + pad, .msg = &msg, .sticky = &sticky,
				    .quote_max = 1000 };
		struct tm_jl_value v;
		const char *cur = b;
		enum tm_jl_rc r = tm_jl_number(&lx, &cur, &v);
		if (r != TM_JL_OK)
			continue; /* validation is not what changed */
		CHECK(cur == b + k && v.s == b && v.n == k);
		bool int_like = !memchr(b, '.', k) && !memchr(b, 'e', k) && !memchr(b, 'E', k);
		int64_t wi;
		double wd = 0;
		bool as_int = int_like && tm_jl_to_int64(b, b + k, &wi);
		CHECK(as_int || tm_jl_to_double(b, b + k, &wd));
		CHECK_INT(v.t, as_int ? TM_JL_INT : TM_JL_DBL);
		if (as_int)
			CHECK_INT(v.i, wi);
		else
			CHECK(!memcmp(&v.d, &wd, sizeof wd));
		CHECK(lx.has_sticky == (int_like && !as_int));
		if (t_failed_) {
			b[k] = 0;
			CHECK_STR(b, "(number differs from the two-pass conversion)");
			break;
		}
	}
	tm_buf_fini(&msg);
	tm_buf_fini(&sticky);
}

/* A ts with a fraction: llround(ts * 1000) as CoerceToTs does, for every
 * length and rounding case (halves, negative values, 2^52 and beyond). */
static void
test_ts_llround(void)
{
	static const char *edge[] = { "0.0005", "-0.0005", "0.0015", "-2.5005", "4503599627370.4965",
				      "4503599627370495.5", "-4503599627370495.5",
				      "9007199254740993.5", "0.49999999999999994", "1e-4",
				      "-1.2345e2", "123456789.1234565" };
	char tok[64], json[128], want[64];
	for (int i = 0; i < 100000; i++) {
		if (i < (int)(sizeof edge / sizeof edge[0])) {
			snprintf(tok, sizeof tok, "%s", edge[i]);
		} else {
			size_t k = 0;
			if (rn(3) == 0)
				tok[k++] = '-';
			size_t d0 = k;
			digits(tok, &k, 1, rn(4) ? 6 : 17);
			if (k - d0 > 1 && tok[d0] == '0')
				tok[d0] = '1'; /* no leading zero */
			tok[k++] = '.';
			digits(tok, &k, 1, rn(4) ? 4 : 18);
			tok[k] = 0;
		}
		double d = strtod(tok, NULL);
		/* the value the lexer makes of the token */
		struct tm_buf m;
		tm_buf_init(&m);
		char tb[80];
		snprintf(tb, sizeof tb, "%s,", tok);
		struct tm_jl lx = { .end = tb + strlen(tb), .msg = &m, .quote_max = 100 };
		struct tm_jl_value v;
		const char *c = tb;
		bool ok = tm_jl_number(&lx, &c, &v) == TM_JL_OK && v.t == TM_JL_DBL;
		tm_buf_fini(&m);
		if (!ok)
			continue;
		d = v.d;
		long long w = d == trunc(d) ? (long long)d * 1000 : llround(d * 1000.0);
		if (d == trunc(d) && !(fabs(d) < 9e15))
			continue; /* the integral case is not what changed */
		snprintf(want, sizeof want, "C%lld", w);
		snprintf(json, sizeof json, "[{\"ph\":\"i\",\"ts\":%s,\"pid\":1}]", tok);
		char *r = js(json);
		CHECK_STR(r, want);
		free(r);
		if (t_failed_)
			break;
	}
}

/* ScanString as it was: the next quote not escaped by an odd run of
 * backslashes, then a second search for any backslash. */
static enum tm_jl_rc
scan_string_ref(const char *start, const char *end, const char **s, size_t *n, bool *esc,
		const char **cur)
{
	const char *str = start + 1, *q = str;
	for (;;) {
		size_t bs = 1;
		q = memchr(q, '"', (size_t)(end - q));
		if (!q)
			return TM_JL_INC;
		if (q[-1] != '\\')
			break;
		const char *p;
		for (p = q - 2; p >= str && *p == '\\'; p--)
			bs++;
		if ((bs & 1) == 0)
			break;
		q++;
	}
	*esc = memchr(str, '\\', (size_t)(q - str)) != NULL;
	*s = str;
	*n = (size_t)(q - str);
	*cur = q + 1;
	return TM_JL_OK;
}

static void
test_string_fast_path(void)
{
	static const char alpha[] = "aaaaxu \"\\\"\\/";
	struct tm_buf msg;
	tm_buf_init(&msg);
	char b[128];
	for (int i = 0; i < 300000; i++) {
		size_t n = 1 + rn(rn(8) ? 12 : 80);
		b[0] = '"';
		for (size_t j = 1; j < n; j++)
			b[j] = rn(3) ? 'a' + (char)rn(3) : alpha[rn(sizeof alpha - 1)];
		struct tm_jl lx = { .end = b + n, .msg = &msg, .quote_max = 1000 };
		const char *c1 = b, *c2 = b, *s1 = NULL, *s2 = NULL;
		size_t n1 = 0, n2 = 0;
		bool e1 = false, e2 = false;
		enum tm_jl_rc r1 = tm_jl_scan_string(&lx, &c1, &s1, &n1, &e1);
		enum tm_jl_rc r2 = scan_string_ref(b, b + n, &s2, &n2, &e2, &c2);
		CHECK_INT(r1, r2);
		if (r1 == TM_JL_OK)
			CHECK(s1 == s2 && n1 == n2 && e1 == e2 && c1 == c2);
		if (t_failed_) {
			b[n] = 0;
			CHECK_STR(b, "(string scan differs)");
			break;
		}
	}
	tm_buf_fini(&msg);
}

/* The search for a string's end (16 bytes by SSE2, then a byte at a
 * time) against the byte loop, with the bytes next to '"' and '\\' and
 * high bytes around them. */
static void
test_quote_search(void)
{
	static const char alpha[] = "\"\\!#[]\xa2\xdc\x22\x5c\x01\xff";
	char b[96];
	for (int i = 0; i < 300000; i++) {
		size_t n = rn(rn(4) ? 24 : 90);
		for (size_t j = 0; j < n; j++)
			b[j] = rn(6) ? 'a' + (char)rn(3) : alpha[rn(sizeof alpha - 1)];
		const char *want = b;
		while (want != b + n && *want != '"' && *want != '\\')
			want++;
		CHECK(tm_jl_quote_or_bs(b, b + n) == want);
		if (t_failed_)
			break;
	}
}

/* ScanToEndOfDelimitedBlock as it was: a byte at a time, strings through
 * the reference ScanString. */
static enum tm_jl_rc
scan_block_ref(const char **pcur, const char *end, char open, char close)
{
	const char *cur = *pcur + 1;
	uint32_t bal = 1;
	while (cur != end) {
		char c = *cur;
		if (c == '"') {
			const char *s;
			size_t n;
			bool esc;
			if (scan_string_ref(cur, end, &s, &n, &esc, &cur) != TM_JL_OK)
				return TM_JL_INC;
		} else if (c == open) {
			cur++;
			bal++;
		} else if (c == close) {
			cur++;
			if (--bal == 0) {
				*pcur = cur;
				return TM_JL_OK;
			}
		} else {
			cur++;
		}
	}
	return TM_JL_INC;
}

/* The 16-bytes-at-a-time block scan against the byte loop: every mix of
 * strings, escapes, brackets of both kinds and long runs of plain bytes,
 * with and without backslashes (the pieces that take the byte loop), cut
 * anywhere (the window's end). */
static void
test_block_fast_path(void)
{
	static const char alpha[] = "{}[]\"\\\\\"{}";
	struct tm_buf msg;
	tm_buf_init(&msg);
	char b[256];
	for (int i = 0; i < 300000; i++) {
		size_t n = 1 + rn(rn(4) ? 40 : 250);
		bool obj = rn(2), nobs = rn(3) == 0; /* some with no backslash at all */
		b[0] = obj ? '{' : '[';
		for (size_t j = 1; j < n; j++) {
			b[j] = rn(4) ? 'a' + (char)rn(3) : alpha[rn(sizeof alpha - 1)];
			if (nobs && b[j] == '\\')
				b[j] = '"';
		}
		if (rn(2) && n > 2) /* a closer near the end, so many blocks complete */
			b[n - 1 - rn(2)] = obj ? '}' : ']';
		struct tm_jl lx = { .end = b + n, .msg = &msg, .quote_max = 1000 };
		const char *c1 = b, *c2 = b;
		char open = b[0], close = obj ? '}' : ']';
		enum tm_jl_rc r1 = tm_jl_scan_block(&lx, &c1, open, close);
		enum tm_jl_rc r2 = scan_block_ref(&c2, b + n, open, close);
		CHECK_INT(r1, r2);
		if (r1 == TM_JL_OK)
			CHECK(c1 == c2);
		if (t_failed_) {
			b[n] = 0;
			CHECK_STR(b, "(block scan differs)");
			break;
		}
	}
	tm_buf_fini(&msg);
}

/* Generated traces of every shape (escapes, exponents, huge numbers, CRLF,
 * pretty-printed, truncated): the same ops whatever the block size, so the
 * window that no longer copies whole blocks changes nothing. */
static void
test_generated_blocks(void)
{
	static const char *vals[] = { "1", "1.5", "-0", "1e3", "2.5E-1", "123456789012345678901234",
				      "0.1234567890123456789", "\"12.5\"", "\"x\\\"y\"", "\"\\u0041\"",
				      "null", "true", "{\"a\":[1,2,{\"b\":\"}\"}]}", "[]", "1e400",
				      "\"\\ud800\"", "NaN", "--1" };
	static const char *keys[] = { "ts", "dur", "ph", "name", "pid", "tid", "id", "args",
				      "tts", "cat", "n\\u0061me", "bind_id", "flow_in" };
	static const char *phs[] = { "\"X\"", "\"B\"", "\"E\"", "\"i\"", "\"M\"", "\"P\"", "\"s\"" };
	struct tm_buf j;
	tm_buf_init(&j);
	for (int t = 0; t < 400; t++) {
		tm_buf_reset(&j);
		bool pretty = rn(3) == 0, crlf = rn(4) == 0;
		const char *nl = crlf ? "\r\n" : "\n", *sp = pretty ? " " : "";
		if (rn(2))
			tm_buf_adds(&j, "{\"traceEvents\":[");
		else
			tm_buf_adds(&j, "[");
		int nev = 1 + (int)rn(30);
		for (int e = 0; e < nev; e++) {
			if (e)
				tm_buf_addf(&j, ",%s", pretty ? nl : "");
			tm_buf_addf(&j, "{%s\"ph\":%s%s", sp, sp, phs[rn(7)]);
			tm_buf_addf(&j, ",%s\"ts\":%s%s", sp, sp, vals[rn(rn(4) ? 7 : 18)]);
			for (int f = (int)rn(6); f > 0; f--)
				tm_buf_addf(&j, ",%s\"%s\":%s%s", pretty ? nl : "", keys[rn(13)], sp,
					    vals[rn(rn(3) ? 10 : 18)]);
			tm_buf_addf(&j, "%s}", sp);
		}
		if (rn(4))
			tm_buf_adds(&j, j.data[0] == '{' ? "]}" : "]");
		size_t len = j.len;
		if (rn(5) == 0)
			len = rn(len + 1); /* truncated */
		char *whole = scan_str_n(tm_scan_json_mem, j.data, len, 0, 1);
		size_t blocks[] = { 1, 2, 5, 13, 100, 4097 };
		for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
			char *bk = scan_str_n(tm_scan_json_mem, j.data, len, blocks[i], 1);
			CHECK_STR(bk, whole);
			free(bk);
		}
		free(whole);
		if (t_failed_)
			break;
	}
	tm_buf_fini(&j);
}

/* Scan with the event fields' lean pass (fast_field) or without it. */
static char *
scan_fast(const char *s, size_t n, size_t block, bool no_fast)
{
	struct tm_scan_ctl ctl = { .keep_events = true, .no_fast = no_fast };
	return scan_str_ctl(tm_scan_json_mem, s, n, block, &ctl, 1, true);
}

static const char *ff_strs[] = { "X", "B", "E", "i", "M", "P", "b", "e", "s", "f", "C", "",
				  "work", "0x1f", "12.5", "-3", "a\\\"b", "\\u0058", "\\n",
				  "RenderFrameImpl::didCommitProvisionalLoad" };
static const char *ff_lits[] = { "true", "false", "null", "tru", "nul", "NaN", "-", "01",
				  "1.", "1e", "{\"local\":\"0x1\"}", "{\"a\":[1,{\"b\":\"}\"}]}",
				  "[]", "{}", "[1,2", "{\"x\":\"\\\"}\"}" };
static const char *ff_ws[] = { "", "", "", " ", "\n", "\r\n", "\t " };

/* One generated field value of kind 0 (a string), 1 (a literal, block or
 * bad token) or 2-3 (a number: sign, 0-22 digits, fraction, exponent). */
static void
field_value(struct tm_buf *j, unsigned kind)
{
	switch (kind) {
	case 0:
		tm_buf_addf(j, "\"%s\"", ff_strs[rn(20)]);
		break;
	case 1:
		tm_buf_addf(j, "%s", ff_lits[rn(16)]);
		break;
	default: {
		char b[96];
		size_t n = 0;
		if (rn(4) == 0)
			b[n++] = '-';
		size_t d0 = n;
		switch (rn(4)) { /* lengths around 18 and 19 digits too */
		case 0: digits(b, &n, 17, 20); break;
		case 1: digits(b, &n, 0, 22); break;
		default: digits(b, &n, 1, 6); break;
		}
		if (n - d0 > 1 && b[d0] == '0' && rn(2))
			b[d0] = '1';
		if (n - d0 >= 17 && rn(2))
			b[d0] = '9'; /* past INT64_MAX */
		if (rn(2)) {
			b[n++] = '.';
			digits(b, &n, rn(20) ? 1 : 0, rn(3) ? 4 : 20);
		}
		if (rn(8) == 0) {
			b[n++] = 'e';
			digits(b, &n, 1, 3);
		}
		tm_buf_add(j, b, n);
		break;
	}
	}
}

/* Close the generated trace (or not), cut it (or not), scan it with and
 * without the fast paths in whole or in small blocks: false if they
 * differ (then the input is shown). */
static bool
fast_equals_slow(struct tm_buf *j, const char *what)
{
	if (rn(4))
		tm_buf_adds(j, j->data[0] == '{' ? "]}" : "]");
	size_t len = j->len;
	if (rn(6) == 0)
		len = rn(len + 1);
	size_t block = rn(3) ? 0 : 1 + rn(64);
	char *slow = scan_fast(j->data, len, block, true);
	char *fast = scan_fast(j->data, len, block, false);
	CHECK_STR(fast, slow);
	free(slow);
	free(fast);
	if (t_failed_) {
		tm_buf_addc(j, 0);
		CHECK_STR(j->data, what);
		return false;
	}
	return true;
}

/* The lean field pass against the general one (next_field) on generated
 * events: every key the scanner reads, every value kind (escapes, numbers
 * of every length and form, blocks, literals, bad tokens), whitespace
 * anywhere, cut anywhere: the same ops, names, phases and durations. */
static void
test_field_fast_path(void)
{
	static const char *keys[] = { "ts", "dur", "ph", "name", "pid", "tid", "id", "id2", "args",
				      "tts", "tdur", "cat", "bind_id", "flow_in", "flow_out", "s",
				      "n\\u0061me", "p\\\"h", "", "timestamp" };
	struct tm_buf j;
	tm_buf_init(&j);
	for (int t = 0; t < 6000; t++) {
		tm_buf_reset(&j);
		tm_buf_adds(&j, rn(2) ? "{\"traceEvents\":[" : "[");
		int nev = 1 + (int)rn(12);
		for (int e = 0; e < nev; e++) {
			if (e)
				tm_buf_addf(&j, "%s,%s", ff_ws[rn(7)], ff_ws[rn(7)]);
			tm_buf_addf(&j, "{%s", ff_ws[rn(7)]);
			int nf = (int)rn(10);
			for (int f = 0; f < nf; f++) {
				const char *k = rn(4) ? keys[rn(6)] : keys[rn(20)];
				if (f)
					tm_buf_addf(&j, "%s,%s", ff_ws[rn(7)], ff_ws[rn(7)]);
				tm_buf_addf(&j, "\"%s\"%s:%s", k, ff_ws[rn(7)], ff_ws[rn(7)]);
				field_value(&j, (unsigned)rn(4));
			}
			tm_buf_addf(&j, "%s}", ff_ws[rn(7)]);
		}
		if (!fast_equals_slow(&j, "(lean field pass differs)"))
			break;
	}
	tm_buf_fini(&j);
}

/* parse_event's key guesses (js->keys): events that repeat one key list,
 * but now and then a key that differs from the guess in one byte, is a
 * prefix or an extension of it, is escaped, has whitespace before its ':',
 * is too long to guess (13-15 bytes at the 16-byte edge), is not followed
 * by ':', events with two commas or none between them, a field more or
 * less, more fields than guesses, a value of another kind, events in an
 * array's brackets: the same ops as the general pass. */
static void
test_field_guesses(void)
{
	static const char *keys[] = { "ts", "dur", "ph", "name", "pid", "tid", "id", "args", "cat",
				      "tts", "bind_id", "flow_out", "abcdefghijklm",
				      "abcdefghijklmn", "abcdefghijkl" };
	static const char *near[] = { "t", "tss", "tS", "d", "durr", "nam", "names", "n\\u0061me",
				      "p\\\"h", "", "pi", "pidd", "flow_in", "abcdefghijklmo",
				      "abcdefghijklmno", "bind_i", "flow_ouT", "abcdefghijkLm",
				      "abcdefghijklM", "abcdefgHijklm" };
	struct tm_buf j;
	tm_buf_init(&j);
	for (int t = 0; t < 6000; t++) {
		const char *base[24];
		unsigned kind[24];
		int nb = 1 + (int)rn(rn(4) ? 10 : 22);
		for (int f = 0; f < nb; f++) {
			base[f] = keys[rn(15)];
			kind[f] = (unsigned)rn(4);
		}
		bool ws = rn(3) == 0;
		tm_buf_reset(&j);
		tm_buf_adds(&j, rn(2) ? "{\"traceEvents\":[" : "[");
		int nev = 1 + (int)rn(16);
		for (int e = 0; e < nev; e++) {
			bool arr = rn(16) == 0;
			if (e)
				tm_buf_addf(&j, "%s%s", ws ? ff_ws[rn(7)] : "\n",
					    rn(32) ? "," : rn(2) ? ",," : "");
			tm_buf_addc(&j, arr ? '[' : '{');
			int nf = nb + (rn(8) ? 0 : (int)rn(3) - 1);
			for (int f = 0; f < nf; f++) {
				const char *k = f < nb ? base[f] : keys[rn(15)];
				if (rn(12) == 0)
					k = rn(2) ? near[rn(20)] : keys[rn(15)];
				if (f)
					tm_buf_addf(&j, "%s,%s", ws ? ff_ws[rn(7)] : "",
						    ws ? ff_ws[rn(7)] : "");
				tm_buf_addf(&j, "\"%s\"%s%c%s", k, rn(16) ? "" : " ",
					    rn(64) ? ':' : ";1\"x"[rn(4)], ws ? ff_ws[rn(7)] : "");
				field_value(&j, f < nb && rn(8) ? kind[f] : (unsigned)rn(4));
			}
			tm_buf_addc(&j, arr ? ']' : '}');
		}
		if (!fast_equals_slow(&j, "(key guesses differ)"))
			break;
	}
	tm_buf_fini(&j);
}

/* The alignment samples of a JSON scan (tm_al_json through the scanner's
 * name cache and its full name, struct al_name_cache) against the same
 * scan without its fast paths (no_fast: no full name): names of every
 * phase that samples (instants, slices, async starts) and of those that do
 * not, names repeated past their AL_OCC samples, some only as instants for
 * a while, empty names, names of 1-41 bytes that share their outer bytes or their
 * length, flows and async ids: the same names, counts, instants, kept
 * occurrences and ids. */
static struct tm_align_samples *
scan_align(const char *s, size_t n, bool no_fast, struct tm_scan *sc)
{
	struct tm_error err = { 0 };
	struct tm_scan_ctl ctl = { .no_fast = no_fast };
	tm_scan_init(sc, TM_FMT_JSON);
	enum tm_status rc = tm_scan_json_mem(s, n, 0, sc, &ctl, &err);
	CHECK_INT(rc, TM_OK);
	return sc->align;
}

static void
test_align_full_name(void)
{
	static const char *names[] = { "a", "b", "ab", "ba", "work", "wrok", "slice_01", "slice_10",
				       "RenderFrameImpl:A", "RenderFrameImpl:B",
				       "RenderFrameImpl::didCommitProvisionalLoad",
				       "RenderFrameImpl::didCommitProvisionalLoaD",
				       "RenderFrameImpX::didCommitProvisionalLoad", "0123456789abcdef",
				       "0123456789abcdeF", "" };
	static const char *phases = "XBEiInRbeSFsfMC";
	struct tm_buf j;
	tm_buf_init(&j);
	for (int t = 0; t < 200 && !t_failed_; t++) {
		tm_buf_reset(&j);
		tm_buf_adds(&j, "[");
		int nev = 1 + (int)rn(t % 4 ? 400 : 3000);
		unsigned pool = 1 + (unsigned)rn(16);
		size_t last = rn(pool);
		for (int e = 0; e < nev; e++) {
			/* runs of one name (the full name's case) and changes */
			if (rn(4) == 0)
				last = rn(pool);
			char ph = rn(3) ? "XBi"[rn(3)] : phases[rn(15)];
			if (last % 3 == 0 && 2 * e < nev) /* an instant long after its samples */
				ph = "iInR"[rn(4)];
			tm_buf_addf(&j, "%s{\"ph\":\"%c\",\"ts\":%d,\"pid\":1,\"tid\":%d", e ? "," : "",
				    ph, e * 10 + (int)rn(10), 1 + (int)rn(3));
			if (rn(16))
				tm_buf_addf(&j, ",\"name\":\"%s\"", names[last]);
			if (rn(2))
				tm_buf_addf(&j, ",\"id\":%u", (unsigned)rn(20));
			if (ph == 'X')
				tm_buf_adds(&j, ",\"dur\":5");
			tm_buf_adds(&j, "}");
		}
		tm_buf_adds(&j, "]");
		struct tm_scan a, b;
		const struct tm_align_samples *x = scan_align(j.data, j.len, false, &a);
		const struct tm_align_samples *y = scan_align(j.data, j.len, true, &b);
		CHECK_INT(x != NULL, y != NULL);
		if (x && y)
			CHECK(same_align(x, y));
		tm_scan_fini(&a);
		tm_scan_fini(&b);
	}
	tm_buf_fini(&j);
}

int
main(void)
{
	RUN(test_ts_rounding);
	RUN(test_missing_ts);
	RUN(test_bad_dur);
	RUN(test_forms);
	RUN(test_event_syntax);
	RUN(test_details);
	RUN(test_system_trace_events);
	RUN(test_huge_and_deep);
	RUN(test_conformance);
	RUN(test_number_fast_path);
	RUN(test_ts_llround);
	RUN(test_string_fast_path);
	RUN(test_quote_search);
	RUN(test_block_fast_path);
	RUN(test_generated_blocks);
	RUN(test_field_fast_path);
	RUN(test_field_guesses);
	RUN(test_align_full_name);
	return 0;
}

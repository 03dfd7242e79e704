/* SPDX-License-Identifier: MIT */
/* Minimal unit-test harness: each CHECK prints nothing on success; each TEST
 * prints one "PASS: name" or "FAIL: name: file:line: what" line, read by
 * tests/run.sh. Tests are plain functions registered in main() with RUN(). */
#ifndef TM_TEST_T_H
#define TM_TEST_T_H
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failed_;
static char t_why_[2048];

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c) && !t_failed_) {                                                          \
			t_failed_ = 1;                                                             \
			snprintf(t_why_, sizeof t_why_, "%s:%d: %s", __FILE__, __LINE__, #c);      \
		}                                                                                  \
	} while (0)
#define CHECK_INT(a, b)                                                                            \
	do {                                                                                       \
		long long a_ = (long long)(a), b_ = (long long)(b);                                \
		if (a_ != b_ && !t_failed_) {                                                      \
			t_failed_ = 1;                                                             \
			snprintf(t_why_, sizeof t_why_, "%s:%d: %s == %lld, expected %lld",        \
				 __FILE__, __LINE__, #a, a_, b_);                                  \
		}                                                                                  \
	} while (0)
#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if ((!a_ || !b_ || strcmp(a_, b_) != 0) && !t_failed_) {                           \
			t_failed_ = 1;                                                             \
			snprintf(t_why_, sizeof t_why_, "%s:%d: %s == \"%.900s\", expected \"%.900s\"", \
				 __FILE__, __LINE__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");  \
		}                                                                                  \
	} while (0)
/* FAILF("fmt", ...): fail with a message of one's own. */
#define FAILF(...)                                                                                 \
	do {                                                                                       \
		if (!t_failed_) {                                                                  \
			int o_ = snprintf(t_why_, sizeof t_why_, "%s:%d: ", __FILE__, __LINE__);   \
			t_failed_ = 1;                                                             \
			snprintf(t_why_ + o_, sizeof t_why_ - (size_t)o_, __VA_ARGS__);            \
		}                                                                                  \
	} while (0)
/* A path in the source tree: under $TM_TOP (tests/run.sh sets it), else
 * under the current directory (the top, where make runs the tests). */
static inline const char *
t_src(const char *rel)
{
	static char buf[4][4096];
	static unsigned k;
	const char *top = getenv("TM_TOP");
	char *b = buf[k++ % 4];
	snprintf(b, sizeof buf[0], "%s/%s", top && *top ? top : ".", rel);
	return b;
}
/* The conformance corpus (tests/conformance/cases): a test reading it fails
 * when it is missing, never passes on nothing. */
#define T_CORPUS t_src("tests/conformance/cases")
/* T_ONLY=name runs only that test (while developing). */
#define RUN(fn)                                                                                    \
	do {                                                                                       \
		if (getenv("T_ONLY") && strcmp(getenv("T_ONLY"), #fn) != 0)                        \
			break;                                                                     \
		t_failed_ = 0;                                                                     \
		t_why_[0] = 0;                                                                     \
		fn();                                                                              \
		if (t_failed_)                                                                     \
			printf("FAIL: %s: %s\n", #fn, t_why_);                                     \
		else                                                                               \
			printf("PASS: %s\n", #fn);                                                 \
		fflush(stdout);                                                                    \
	} while (0)
#endif

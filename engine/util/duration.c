/* SPDX-License-Identifier: MIT */
/*
 * Durations: parse and format the offsets the front ends accept and show
 * ("250ms", "-1.5s", "+1.25 ms").
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------------ */
/* Durations                                                           */
/* ------------------------------------------------------------------ */

static const struct {
	const char *unit;
	int exp10;
} units[] = {
	{"ns", 0}, {"us", 3}, {"\xc2\xb5s", 3}, {"\xce\xbcs", 3}, {"ms", 6}, {"s", 9},
};

enum tm_status
tm_parse_duration_ns(const char *s, int64_t *out, struct tm_error *err)
{
	const char *p = s, *ip, *fp = NULL, *u;
	size_t n_int, n_frac = 0, ulen;
	bool neg = false;
	int e10 = -1;
	uint64_t v = 0;

	if (!s)
		return tm_error_set(err, TM_ERR_INVALID, "invalid duration: empty");
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	ip = p;
	while (isdigit((unsigned char)*p))
		p++;
	n_int = (size_t)(p - ip);
	if (*p == '.') {
		fp = ++p;
		while (isdigit((unsigned char)*p))
			p++;
		n_frac = (size_t)(p - fp);
	}
	if (n_int + n_frac == 0)
		return tm_error_set(err, TM_ERR_INVALID,
				    "invalid duration '%s': expected a number with an optional unit "
				    "(ns, us, ms, s), e.g. 250ms or -1.5s",
				    s);
	while (*p == ' ' || *p == '\t')
		p++;
	u = p;
	ulen = strlen(u);
	while (ulen && (u[ulen - 1] == ' ' || u[ulen - 1] == '\t'))
		ulen--;
	if (ulen == 0)
		e10 = 0;
	for (size_t i = 0; e10 < 0 && i < sizeof units / sizeof units[0]; i++)
		if (strlen(units[i].unit) == ulen && memcmp(units[i].unit, u, ulen) == 0)
			e10 = units[i].exp10;
	if (e10 < 0)
		return tm_error_set(err, TM_ERR_INVALID,
				    "invalid duration '%s': unknown unit '%.*s' (use ns, us, ms or s)",
				    s, (int)ulen, u);
	/* value = int.frac * 10^e10, in exact integer arithmetic */
	for (size_t i = 0; i < n_int + (size_t)e10; i++) {
		int d;

		if (i < n_int)
			d = ip[i] - '0';
		else if (i - n_int < n_frac)
			d = fp[i - n_int] - '0';
		else
			d = 0;
		if (v > (UINT64_MAX - (uint64_t)d) / 10)
			return tm_error_set(err, TM_ERR_INVALID,
					    "invalid duration '%s': out of range (at most "
					    "9223372036854775807 ns, about 292 years)",
					    s);
		v = v * 10 + (uint64_t)d;
	}
	for (size_t i = (size_t)e10; i < n_frac; i++)
		if (fp[i] != '0')
			return tm_error_set(err, TM_ERR_INVALID,
					    "invalid duration '%s': fractional nanoseconds are not "
					    "allowed (offsets are whole ns)",
					    s);
	if (v > (uint64_t)INT64_MAX)
		return tm_error_set(err, TM_ERR_INVALID,
				    "invalid duration '%s': out of range (%s9223372036854775807 ns "
				    "is the limit%s)",
				    s, neg ? "-" : "", neg ? "; -2^63 is rejected by trace_processor" : "");
	*out = neg ? -(int64_t)v : (int64_t)v;
	return TM_OK;
}

void
tm_format_duration_ns(int64_t ns, struct tm_buf *out)
{
	static const struct {
		const char *name;
		uint64_t scale;
		int digits;
	} fmt[] = {{"s", 1000000000u, 9}, {"ms", 1000000u, 6}, {"us", 1000u, 3}, {"ns", 1u, 0}};
	uint64_t mag;
	size_t i;

	if (ns == 0) {
		tm_buf_adds(out, "0 ns");
		return;
	}
	mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	for (i = 0; i < 3 && mag < fmt[i].scale; i++)
		;
	tm_buf_addf(out, "%c%" PRIu64, ns < 0 ? '-' : '+', mag / fmt[i].scale);
	if (fmt[i].digits) {
		char frac[16];
		int n = fmt[i].digits;

		snprintf(frac, sizeof frac, "%0*" PRIu64, n, mag % fmt[i].scale);
		while (n > 0 && frac[n - 1] == '0')
			n--;
		if (n)
			tm_buf_addf(out, ".%.*s", n, frac);
	}
	tm_buf_addf(out, " %s", fmt[i].name);
}

/* SPDX-License-Identifier: MIT */
/* The format table (engine/scan/formats.c): one row per format in sniff
 * order, the answers the engine used to give from its own switches, and
 * docs/semantics.md's table of formats printed from the rows. */
#include <string.h>

#include "formats.h"
#include "t.h"

/* Row i is format i, every format has a row with a sniffer (unknown aside). */
static void
t_rows(void)
{
	for (int f = 0; f < TM_FMT__COUNT; f++) {
		const struct tm_format_row *r = tm_format_row((enum tm_format)f);
		CHECK_INT(r->id, f);
		if (f != TM_FMT_UNKNOWN && !r->sniff)
			FAILF("%s has no sniffer", tm_format_name((enum tm_format)f));
		if (r->clock_kind == TM_FC_FIXED || r->clock_kind == TM_FC_SNAPSHOTS)
			CHECK(r->clock != TM_CLOCK_UNSET);
	}
	CHECK(tm_format_row((enum tm_format)TM_FMT__COUNT)->id == TM_FMT_UNKNOWN);
	/* the short names, a column of the table (a list's format column) */
	for (int f = 0; f < TM_FMT__COUNT; f++) {
		const char *sh = tm_format_short_name((enum tm_format)f);
		if (!sh || !*sh || strlen(sh) > 8)
			FAILF("%s: short name \"%s\"", tm_format_name((enum tm_format)f), sh ? sh : "");
	}
	CHECK_STR(tm_format_short_name(TM_FMT_PROTO), "Perfetto");
	CHECK_STR(tm_format_short_name(TM_FMT_JSON), "json");
	CHECK_STR(tm_format_short_name(TM_FMT_ANDROID_DUMPSTATE), "dumpstat");
	CHECK_STR(tm_format_short_name((enum tm_format)TM_FMT__COUNT), "other");
	CHECK(tm_sniff(NULL, 0) == TM_FMT_UNKNOWN);
}

/* What the switches of sniff.c and replay.c answered before the table. */
static void
t_answers(void)
{
	for (int i = 0; i < TM_FMT__COUNT; i++) {
		enum tm_format f = (enum tm_format)i;
		int prio = f == TM_FMT_MANIFEST ? -1
			   : f == TM_FMT_PROTO ? 0
			   : f == TM_FMT_TAR || f == TM_FMT_ZIP || f == TM_FMT_GZIP || f == TM_FMT_ZSTD ? 1
			   : f == TM_FMT_SYMBOLS ? 3
						 : 2;
		CHECK_INT(tm_format_priority(f), prio);
		CHECK_INT(tm_format_is_container(f), f == TM_FMT_TAR || f == TM_FMT_ZIP ||
							 f == TM_FMT_GZIP || f == TM_FMT_ZSTD ||
							 f == TM_FMT_CTRACE);
		CHECK_INT(tm_sniff_prefix_decides(f), f == TM_FMT_TAR || f == TM_FMT_ZIP ||
							  f == TM_FMT_GZIP || f == TM_FMT_ZSTD);
		CHECK_INT(tm_format_is_predicted(f),
			  f == TM_FMT_PROTO || f == TM_FMT_JSON || f == TM_FMT_SYSTRACE ||
				  f == TM_FMT_PERF_TEXT || f == TM_FMT_ANDROID_LOGCAT ||
				  f == TM_FMT_ANDROID_DUMPSTATE || f == TM_FMT_STRACE ||
				  f == TM_FMT_GECKO || f == TM_FMT_SIMPLEPERF_PROTO ||
				  f == TM_FMT_ART_METHOD || f == TM_FMT_ART_METHOD_V2 ||
				  f == TM_FMT_PRIMES || f == TM_FMT_FUCHSIA);
		CHECK_INT(tm_format_has_timeline(f),
			  f != TM_FMT_COLLAPSED_STACK && f != TM_FMT_PPROF && f != TM_FMT_SYMBOLS &&
				  f != TM_FMT_ART_HPROF && f != TM_FMT_ARROW &&
				  f != TM_FMT_NINJA_LOG);
		CHECK_INT(tm_format_follows_pin(f), f == TM_FMT_JSON || f == TM_FMT_GECKO ||
							f == TM_FMT_INSTRUMENTS_XML ||
							f == TM_FMT_PRIMES);
		uint32_t c = TM_CLOCK_UNSET;
		switch (f) {
		case TM_FMT_SYSTRACE: case TM_FMT_PERF: case TM_FMT_SIMPLEPERF_PROTO:
		case TM_FMT_ART_METHOD_V2: case TM_FMT_ART_METHOD: case TM_FMT_PERF_TEXT:
			c = TM_CLOCK_MONOTONIC;
			break;
		case TM_FMT_FUCHSIA:
			c = TM_CLOCK_BOOTTIME;
			break;
		case TM_FMT_ANDROID_LOGCAT: case TM_FMT_STRACE: case TM_FMT_ANDROID_DUMPSTATE:
			c = TM_CLOCK_REALTIME;
			break;
		default:
			break;
		}
		CHECK_INT(tm_format_fixed_clock(f), c);
	}
	CHECK(tm_format_row(TM_FMT_PROTO)->clock_kind == TM_FC_SNAPSHOTS &&
	      tm_format_row(TM_FMT_PROTO)->clock == TM_CLOCK_BOOTTIME);
}

static const char *
clock_text(const struct tm_format_row *r)
{
	switch (r->clock_kind) {
	case TM_FC_FILE:
		return "its own TRACE_FILE clock (a PIN moves it)";
	case TM_FC_SNAPSHOTS:
		return "its ClockSnapshots (BOOTTIME before one)";
	case TM_FC_FIXED:
		return r->clock == TM_CLOCK_MONOTONIC  ? "MONOTONIC"
		       : r->clock == TM_CLOCK_BOOTTIME ? "BOOTTIME"
						       : "REALTIME";
	case TM_FC_NONE:
		break;
	}
	return "-";
}

/* docs/semantics.md holds the table the rows print, line for line. */
static void
t_docs(void)
{
	FILE *fp = fopen(t_src("docs/semantics.md"), "r");
	static char doc[1 << 20];
	size_t n = fp ? fread(doc, 1, sizeof doc - 1, fp) : 0;
	if (fp)
		fclose(fp);
	doc[n] = 0;
	CHECK(n > 0);
	static char want[16384];
	size_t k = (size_t)snprintf(want, sizeof want,
				    "| format | archive priority | events | clock |\n"
				    "|---|---|---|---|\n");
	for (int i = 1; i < TM_FMT__COUNT && k < sizeof want; i++) {
		const struct tm_format_row *r = tm_format_row((enum tm_format)i);
		k += (size_t)snprintf(want + k, sizeof want - k, "| %s | %d | %s | %s |\n",
				      tm_format_name(r->id), r->priority,
				      r->container      ? "a container"
				      : r->priority < 0 ? "the manifest"
				      : r->scan         ? "scanned, predicted"
				      : r->untimed      ? "no timeline: nothing to drop"
							: "named only",
				      clock_text(r));
	}
	if (!strstr(doc, want)) {
		fprintf(stderr, "docs/semantics.md should hold this table:\n%s", want);
		FAILF("docs/semantics.md lacks the format table (printed on stderr)");
	}
}

int
main(void)
{
	RUN(t_rows);
	RUN(t_answers);
	RUN(t_docs);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The format table: one row per format, in trace_processor's sniff order
 * (util/trace_type.cc, GuessTraceType), row i is format i.  How a format
 * is added: formats.h.
 *
 * Priorities: archive_entry.cc, GetPriority (the archive's processing
 * order: manifest -1, proto 0, containers 1, symbols 3, the rest 2).
 * Clocks: forwarding_trace_parser.cc, ForwardingTraceParser::Init (a
 * format's default clock); json_trace_tokenizer.cc and the other clockless
 * readers convert through the file's TRACE_FILE clock; systrace, perf,
 * simpleperf, ART traces and perf_text are on MONOTONIC, fuchsia on
 * BOOTTIME, logcat, strace and dumpstate on REALTIME; protos on their
 * ClockSnapshots (BOOTTIME until one names another).
 */
#include "formats.h"
#include "scan.h"

/* ROW(format, priority, sniffer, scanner, clock policy and clock, flags) */
#define ROW(f, prio, sn, sc, clk, fl)                                                             \
	[TM_FMT_##f] = {TM_FMT_##f, prio, sn, sc, clk, .container = ((fl) & CONT) != 0,             \
			.prefix_decides = ((fl) & PREFIX) != 0, .untimed = ((fl) & UNTIMED) != 0}
#define CONT 1    /* a container */
#define PREFIX 2  /* prefix_decides */
#define UNTIMED 4 /* no timeline */
#define NONE TM_FC_NONE, TM_CLOCK_UNSET
#define FILECLK TM_FC_FILE, TM_CLOCK_UNSET
#define MONO TM_FC_FIXED, TM_CLOCK_MONOTONIC
#define BOOT TM_FC_FIXED, TM_CLOCK_BOOTTIME
#define RT TM_FC_FIXED, TM_CLOCK_REALTIME
#define SNAP TM_FC_SNAPSHOTS, TM_CLOCK_BOOTTIME

static const struct tm_format_row rows[TM_FMT__COUNT] = {
	/*  format            prio sniffer                       scanner            clock    flags */
	ROW(UNKNOWN,             2, NULL,                        NULL,              NONE,    0),
	ROW(TAR,                 1, tm_sniff_tar,                NULL,              NONE,    CONT|PREFIX),
	ROW(ARROW,               2, tm_sniff_arrow,              NULL,              NONE,    UNTIMED),
	ROW(FUCHSIA,             2, tm_sniff_fuchsia,            tm_scan_fuchsia,   BOOT,    0),
	ROW(PERF,                2, tm_sniff_perf,               NULL,              MONO,    0),
	ROW(SIMPLEPERF_PROTO,    2, tm_sniff_simpleperf,         tm_scan_simpleperf, MONO,   0),
	ROW(ZIP,                 1, tm_sniff_zip,                NULL,              NONE,    CONT|PREFIX),
	ROW(GZIP,                1, tm_sniff_gzip,               NULL,              NONE,    CONT|PREFIX),
	ROW(ZSTD,                1, tm_sniff_zstd,               NULL,              NONE,    CONT|PREFIX),
	ROW(ART_METHOD_V2,       2, tm_sniff_art_method_v2,      tm_scan_art,       MONO,    0),
	ROW(ART_METHOD,          2, tm_sniff_art_method,         tm_scan_art,       MONO,    0),
	ROW(ART_HPROF,           2, tm_sniff_art_hprof,          NULL,              NONE,    UNTIMED),
	ROW(MANIFEST,           -1, tm_sniff_manifest,           NULL,              NONE,    0),
	ROW(GECKO,               2, tm_sniff_gecko,              tm_scan_gecko,     FILECLK, 0),
	ROW(JSON,                2, tm_sniff_json,               tm_scan_json,      FILECLK, 0),
	ROW(INSTRUMENTS_XML,     2, tm_sniff_instruments_xml,    NULL,              FILECLK, 0),
	ROW(CTRACE,              2, tm_sniff_ctrace,             NULL,              NONE,    CONT),
	ROW(NINJA_LOG,           2, tm_sniff_ninja_log,          NULL,              NONE,    UNTIMED),
	ROW(ANDROID_LOGCAT,      2, tm_sniff_logcat,             tm_scan_logcat,    RT,      0),
	ROW(COLLAPSED_STACK,     2, tm_sniff_collapsed_stack,    NULL,              NONE,    UNTIMED),
	ROW(PERF_TEXT,           2, tm_sniff_perf_text,          tm_scan_perf_text, MONO,    0),
	ROW(STRACE,              2, tm_sniff_strace,             tm_scan_strace,    RT,      0),
	ROW(SYSTRACE,            2, tm_sniff_systrace,           tm_scan_systrace,  MONO,    0),
	ROW(SYMBOLS,             3, tm_sniff_symbols,            NULL,              NONE,    UNTIMED),
	ROW(PPROF,               2, tm_sniff_pprof,              NULL,              NONE,    UNTIMED),
	ROW(PROTO,               0, tm_sniff_proto,              tm_scan_proto,     SNAP,    0),
	ROW(PRIMES,              2, tm_sniff_primes,             tm_scan_primes,    FILECLK, 0),
	ROW(ANDROID_DUMPSTATE,   2, tm_sniff_android_dumpstate,  tm_scan_dumpstate, RT,      0),
};

static const char *const format_names[] = {
#define TM_X_(id, s, sh) s,
	TM_FORMAT_LIST(TM_X_)
#undef TM_X_
};

static const char *const format_short_names[] = {
#define TM_X_(id, s, sh) sh,
	TM_FORMAT_LIST(TM_X_)
#undef TM_X_
};

const struct tm_format_row *
tm_format_row(enum tm_format f)
{
	return &rows[(unsigned)f < TM_FMT__COUNT ? f : TM_FMT_UNKNOWN];
}

const char *
tm_format_name(enum tm_format f)
{
	if ((unsigned)f >= TM_FMT__COUNT)
		return "unknown";
	return format_names[f];
}

const char *
tm_format_short_name(enum tm_format f)
{
	if ((unsigned)f >= TM_FMT__COUNT)
		return "other";
	return format_short_names[f];
}

int
tm_format_priority(enum tm_format f)
{
	return tm_format_row(f)->priority;
}

bool
tm_format_is_container(enum tm_format f)
{
	return tm_format_row(f)->container;
}

/* Every sniffer that reads past byte 265 runs after these (the table's
 * order), so a longer read cannot change them (archive.c sniffs an input's
 * first TM_SNIFF_PREFIX bytes and stops when this holds). */
bool
tm_sniff_prefix_decides(enum tm_format f)
{
	return tm_format_row(f)->prefix_decides;
}

bool
tm_format_is_predicted(enum tm_format f)
{
	return tm_format_row(f)->scan != NULL;
}

/* collapsed_stack_trace_reader.cc, pprof_trace_reader.cc,
 * art_hprof_parser.cc: tables written at the end of the file, no sorter,
 * no clock (descriptor clock policy none); symbols: a proto reader with no
 * default clock (proto_trace_reader.cc, SymbolsImporter); arrow: tables
 * restored as exported (perfetto_export_reader.cc); ninja_log: slices
 * written straight to storage at their own times (ninja_log_parser.cc,
 * OnPushDataToSorter), clock policy none */
bool
tm_format_has_timeline(enum tm_format f)
{
	return !tm_format_row(f)->untimed;
}

tm_scanner *
tm_format_scanner(enum tm_format f)
{
	return tm_format_row(f)->scan;
}

bool
tm_format_follows_pin(enum tm_format f)
{
	return tm_format_row(f)->clock_kind == TM_FC_FILE;
}

uint32_t
tm_format_fixed_clock(enum tm_format f)
{
	const struct tm_format_row *r = tm_format_row(f);
	return r->clock_kind == TM_FC_FIXED ? r->clock : TM_CLOCK_UNSET;
}

enum tm_format
tm_sniff(const void *data, size_t len)
{
	struct tm_sniff_in in;

	if (!data || len == 0)
		return TM_FMT_UNKNOWN;
	in.d = data;
	in.n = len;
	in.have_s = false;
	for (size_t i = 0; i < TM_FMT__COUNT; i++)
		if (rows[i].sniff && rows[i].sniff(&in))
			return rows[i].id;
	return TM_FMT_UNKNOWN;
}

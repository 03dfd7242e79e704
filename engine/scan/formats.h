/* SPDX-License-Identifier: MIT */
/*
 * The format table (formats.c): one row per format trace_processor knows,
 * in the order its sniffers run (util/trace_type.cc, GuessTraceType), with
 * what the rest of the engine asks of a format.  Sniffing (tm_sniff), `ls`
 * (tm_format_name, tm_format_is_predicted), the archive's processing order
 * (tm_format_priority), the replay's clock (tm_format_clock) and the table
 * of docs/semantics.md (tests/unit/test_formats.c) all read the rows; no
 * other file switches on a format to learn these.
 *
 * Adding a format:
 *   1. Its id, name and short name (at most 8 characters: a list's
 *      column) in TM_FORMAT_LIST (tracemerge.h), at its place in
 *      GuessTraceType's order: the table's rows are in that order and row i
 *      is format i (test_formats checks both).  Saved scans record formats
 *      by number: bump the scan cache's version (scancache.c) with it.
 *   2. One file, engine/scan/scan_NAME.c, with its sniffer
 *      (bool tm_sniff_NAME(struct tm_sniff_in *), declared below) and, when
 *      its events are predicted, its scanner (tm_scanner, declared in
 *      scan.h) writing the op log.  The sniff helpers below are shared; a
 *      format's own parsing stays in its file.  A format that is only named
 *      keeps its sniffer in sniff.c until it gets a scanner; then the
 *      sniffer moves to the format's file.
 *   3. Its row in formats.c: name comes from TM_FORMAT_LIST; priority,
 *      sniffer, scanner (NULL: not scanned, the verdict says its events are
 *      not predicted), clock policy (TM_FC_*, below), container flags.
 *   4. docs/semantics.md's format table: test_formats prints the row it
 *      expects when the page disagrees.
 */
#ifndef TM_FORMATS_H
#define TM_FORMATS_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "internal.h"

struct tm_stream;
struct tm_scan;
struct tm_scan_ctl;

/* Which clock a format's timestamps are on when its file's turn comes
 * (forwarding_trace_parser.cc, ForwardingTraceParser::Init, and each
 * reader's default clock). */
enum tm_format_clock {
	TM_FC_NONE,      /* not imported (containers, manifest, unknown) */
	TM_FC_FILE,      /* clockless: the file's private TRACE_FILE clock,
			  * claims trace time with it; a PIN moves it */
	TM_FC_FIXED,     /* always the row's builtin clock (.clock) */
	TM_FC_SNAPSHOTS, /* its own ClockSnapshots; .clock until one says
			  * otherwise (protos: BOOTTIME) */
};

/* A sniffer's input: the first bytes as trace_processor passes them, and
 * (computed once, on first use, for every sniffer that asks) the first
 * LOOKAHEAD bytes with whitespace removed. */
struct tm_sniff_in {
	const uint8_t *d;
	size_t n;
	uint8_t s[128];
	size_t sn;
	bool have_s;
};

typedef bool tm_sniffer(struct tm_sniff_in *in);
typedef enum tm_status tm_scanner(struct tm_stream *st, struct tm_scan *sc,
				  const struct tm_scan_ctl *ctl, struct tm_error *err);

struct tm_format_row {
	enum tm_format id;
	int priority;             /* archive order (archive_entry.cc, GetPriority) */
	tm_sniffer *sniff;        /* NULL: never sniffed (unknown) */
	tm_scanner *scan;         /* NULL: named, its events not predicted */
	enum tm_format_clock clock_kind;
	uint32_t clock;           /* TM_FC_FIXED, TM_FC_SNAPSHOTS: the builtin clock */
	bool container;           /* its bytes hold other trace files */
	bool untimed;             /* its importer sorts no timestamp: nothing of
				   * it can be dropped, it claims no trace time */
	bool prefix_decides;      /* sniffed before anything reading past byte 265
				   * (the TAR magic's end): TM_SNIFF_PREFIX decides it */
};

/* Row f (f < TM_FMT__COUNT), or the unknown format's row. */
const struct tm_format_row *tm_format_row(enum tm_format f);
/* Files of this format are moved by a pin (a clocks entry without clock):
 * TM_FC_FILE. */
bool tm_format_follows_pin(enum tm_format f);
/* The builtin clock the replay reads a non-proto format's timestamps in
 * (MONOTONIC, BOOTTIME or REALTIME: TM_FC_FIXED); TM_CLOCK_UNSET for
 * clockless formats (the private TRACE_FILE clock, moved only by a pin),
 * protos (their clock comes from their snapshots) and formats not imported. */
uint32_t tm_format_fixed_clock(enum tm_format f);
/* The format's scanner (NULL: not scanned). */
tm_scanner *tm_format_scanner(enum tm_format f);

/* tm_sniff of the first TM_SNIFF_PREFIX bytes of an input gives f, and f is
 * decided by them whatever follows (sniff.c: its tests, and every test
 * before theirs, read the first 265 bytes only). */
#define TM_SNIFF_PREFIX 4096u
bool tm_sniff_prefix_decides(enum tm_format f);
/* Test hook: tm_sniff's substring search, whitespace strip and pprof walk
 * take their general paths (the oracle). */
extern bool tm_sniff_no_fast;

/* ---- sniff helpers (sniff.c) ---- */
#define TM_SNIFF_LOOKAHEAD 128 /* kGuessTraceMaxLookahead */
bool tm_sniff_starts(const uint8_t *d, size_t n, const char *s);
/* s occurs in d[0..n) */
bool tm_sniff_contains(const uint8_t *d, size_t n, const char *s);
/* The whitespace-stripped lookahead (in->s, in->sn), computed once. */
void tm_sniff_strip(struct tm_sniff_in *in);

/* ---- the sniffers, in table order ---- */
/* sniff.c: the formats that are named but not scanned, and the containers */
tm_sniffer tm_sniff_tar, tm_sniff_arrow, tm_sniff_perf, tm_sniff_zip, tm_sniff_gzip,
	tm_sniff_zstd, tm_sniff_art_hprof, tm_sniff_manifest, tm_sniff_instruments_xml,
	tm_sniff_ctrace, tm_sniff_ninja_log, tm_sniff_collapsed_stack, tm_sniff_symbols,
	tm_sniff_pprof;
tm_sniffer tm_sniff_fuchsia;                             /* scan_fuchsia.c */
tm_sniffer tm_sniff_simpleperf;                          /* scan_simpleperf.c */
tm_sniffer tm_sniff_art_method_v2, tm_sniff_art_method;  /* scan_art.c */
tm_sniffer tm_sniff_gecko;                               /* scan_gecko.c */
tm_sniffer tm_sniff_primes;                              /* scan_primes.c */
tm_sniffer tm_sniff_logcat;    /* scan_logcat.c */
tm_sniffer tm_sniff_json;      /* scan_json.c */
tm_sniffer tm_sniff_perf_text; /* scan_perf_text.c */
tm_sniffer tm_sniff_strace;    /* scan_strace.c */
tm_sniffer tm_sniff_systrace;  /* scan_systrace.c */
tm_sniffer tm_sniff_android_dumpstate; /* scan_dumpstate.c */
tm_sniffer tm_sniff_proto;     /* scan_proto.c */

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The scan stage's face (engine/scan/, above util and stream): what a
 * member holds.  The format table (formats.h) names every format and its
 * sniffer and scanner; a scanner makes one streaming pass over a member's
 * bytes, appending to an oplog (see oplog.h) and filling a summary.  Memory is bounded by the oplog (a few
 * bytes per event) plus fixed buffers; no scanner holds the member whole.
 */
#ifndef TM_SCAN_H
#define TM_SCAN_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include <stdatomic.h>

#include "stream.h"
#include "oplog.h"
#include "formats.h"

struct tm_scan_ctl {
	bool keep_events;
	volatile bool *cancel;
	_Atomic uint64_t *progress; /* bytes consumed, updated now and then */
	bool no_fast; /* tests: a scanner's general paths only (differential tests) */
};

struct tm_scan {
	struct tm_oplog log;
	/* With per-event details kept: the same ops folded into runs, without
	 * details (tm_scan_fold), for evaluations that need only the numbers;
	 * NULL otherwise (log has the runs then). */
	struct tm_oplog *sum;
	uint64_t n_packets;  /* proto packets / JSON events / systrace lines read */
	uint64_t n_events;   /* ops that push (upper bound of the file's events) */
	/* clocks seen in snapshots or used by events, as a bitmap of ids < 128 */
	uint64_t clocks_seen[2];
	uint32_t *embedded;  /* distinct embedded machine ids, in first-seen order */
	uint32_t n_embedded, cap_embedded;
	int64_t raw_min, raw_max; /* min/max of raw event timestamps, for display */
	char *warning;        /* ours, not trace_processor's: something odd that does not
			       * change the prediction (e.g. a packet cut off at the end) */
	/* ours, with member name and byte offset: NULL until tm_scan_err (a
	 * tm_error is 2.6 KiB; a session keeps one scan per member) */
	struct tm_error *err;
	struct tm_align_samples *align; /* alignment samples (align_scan.h), lazily */
	enum tm_format format;
	bool has_snapshot;   /* any ClockSnapshot packet (decides the PIN error of
			      * ProtoTraceReader::ParseClockSnapshot) */
	bool has_raw_ts;     /* raw_min/raw_max hold something */
	bool failed;         /* the scan stopped with a TM_OP_FATAL or a read error */
	/* ours: the file holds something whose effect tracemerge does not
	 * model (the warning says what): its events are not predicted */
	bool unpredicted;
	/* (fields ordered without padding: a session keeps one scan per member,
	 * 10,000s in an archive) */
};

void tm_scan_init(struct tm_scan *sc, enum tm_format format);
/* The scan's alignment samples, created on first use. */
struct tm_align_samples *tm_scan_align(struct tm_scan *sc);
void tm_scan_fini(struct tm_scan *sc);
/* sc->sum from sc->log, once, when the log keeps details (no runs). */
void tm_scan_fold(struct tm_scan *sc);
/* The log an evaluation replays: the folded one for numbers only. */
static inline const struct tm_oplog *
tm_scan_log(const struct tm_scan *sc, bool events)
{
	return !events && sc->sum ? sc->sum : &sc->log;
}
/* The scan's error, created (cleared) on first use. */
struct tm_error *tm_scan_err(struct tm_scan *sc);
void tm_scan_note_machine(struct tm_scan *sc, uint32_t machine);
void tm_scan_note_clock(struct tm_scan *sc, uint32_t clock);
/* The raw timestamp range (every text event; inline: once per event). */
static inline void
tm_scan_note_ts(struct tm_scan *sc, int64_t ts)
{
	if (!sc->has_raw_ts || ts < sc->raw_min)
		sc->raw_min = ts;
	if (!sc->has_raw_ts || ts > sc->raw_max)
		sc->raw_max = ts;
	sc->has_raw_ts = true;
}
/* The builtin clock a scanned proto's timestamps are on (scan_clock.c):
 * its last ClockSnapshot's primary clock, else the clock most of its
 * packets use, else BOOTTIME. */
uint32_t tm_scan_trace_clock(const struct tm_scan *sc);
/* Set the scan's warning (the first one is kept). */
void tm_scan_warn(struct tm_scan *sc, const char *fmt, ...) TM_PRINTF(2, 3);

/* Each returns TM_OK when the member was read to its end (even if the
 * tokenizer hit a trace_processor-fatal error: that is a TM_OP_FATAL op),
 * TM_ERR_CANCELLED, or TM_ERR_IO for a read error (err set). */
enum tm_status tm_scan_proto(struct tm_stream *st, struct tm_scan *sc,
			     const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
/* The proto scanner over any block source (tests, benchmarks, the demo
 * check): next() has tm_stream_next's contract.  tm_scan_proto is this
 * over tm_stream_next.  (scan_proto.c) */
typedef enum tm_status (*tm_block_fn)(void *ctx, const uint8_t **p, size_t *n,
				      struct tm_error *err);
enum tm_status tm_scan_proto_blocks(tm_block_fn next, void *ctx, struct tm_scan *sc,
				    const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
enum tm_status tm_scan_json(struct tm_stream *st, struct tm_scan *sc,
			    const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
enum tm_status tm_scan_systrace(struct tm_stream *st, struct tm_scan *sc,
				const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;

/* Feed a member held in memory to a scanner in blocks of `block` bytes
 * (0 = one block), exactly as tm_stream_next would deliver it (tests,
 * benchmarks).  Same results as the stream variants. */
enum tm_status tm_scan_json_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
				const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
enum tm_status tm_scan_systrace_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
				    const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;

/* A text scanner's side of the block loop (scan_text.c): feed() takes each
 * block, finish() the end of the member; *status is the scanner's own error
 * (a limit), which stops the loop; *total the bytes fed (progress). */
struct tm_text_scanner {
	void *self;
	void (*feed)(void *self, const char *p, size_t n);
	void (*finish)(void *self);
	const enum tm_status *status;
	const uint64_t *total;
};
enum tm_status tm_scan_text(struct tm_stream *st, struct tm_scan *sc,
			    const struct tm_scan_ctl *ctl, struct tm_error *err,
			    const struct tm_text_scanner *ts) TM_WUR;
enum tm_status tm_scan_text_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
				const struct tm_scan_ctl *ctl, struct tm_error *err,
				const struct tm_text_scanner *ts) TM_WUR;
/* A member held whole: done(self, bytes, n) at its end.  Past 1 GiB a
 * limit error naming what; past unpredicted_past bytes (0: no such cap)
 * the member is read to its end but not held, and marked not predicted
 * with a warning saying why (a scanner whose parse costs many times the
 * bytes it holds sets it, so memory stays bounded). */
enum tm_status tm_scan_whole(struct tm_stream *st, struct tm_scan *sc,
			     const struct tm_scan_ctl *ctl, struct tm_error *err, const char *what,
			     uint64_t unpredicted_past,
			     void (*done)(void *self, const uint8_t *d, size_t n), void *self) TM_WUR;

/* One event of a scanner that converts each event on its own
 * (scan_event.c): its detail (keep_events), an alignment sample (align: its
 * AL_* flags, or -1 for none; none without a name), its raw time, one
 * CONVERT of ts on the format's clock, dropped when it fails (flags: more
 * TM_CONV_* flags). */
struct tm_scan_event {
	int64_t ts;
	const char *name;
	size_t name_len;
	char phase;
	int align;
	uint32_t flags;
	uint64_t track;
	int64_t dur;
};
void tm_scan_event(struct tm_scan *sc, const struct tm_scan_ctl *ctl, const struct tm_scan_event *ev,
		   uint64_t off);

/* The line loop of the line-oriented scanners (scan_lines.c): line() gets
 * every '\n'-terminated line (without it) and its byte offset; a scanner
 * sets stop to end the member (a fatal error); eof (may be NULL) runs at the
 * end of the member unless stopped.  A last line without '\n' is never
 * handed over (trace_processor's line readers do not parse it). */
struct tm_lines {
	void *self;
	void (*line)(void *self, const char *l, size_t n, uint64_t off);
	void (*eof)(void *self);
	const char *what; /* the format, for the line-length limit's error */
	struct tm_error *err;
	struct tm_buf carry;
	uint64_t carry_off, total;
	enum tm_status status;
	bool stop;
};
void tm_lines_init(struct tm_lines *lr, const char *what, struct tm_error *err);
void tm_lines_fini(struct tm_lines *lr);
/* Over the stream st, or (st NULL) over mem[0..n) in blocks of block bytes. */
enum tm_status tm_scan_lines(struct tm_stream *st, const void *mem, size_t n, size_t block,
			     struct tm_scan *sc, const struct tm_scan_ctl *ctl,
			     struct tm_error *err, struct tm_lines *lr) TM_WUR;

/* strtod of "digits.digits" as trace_processor reads a text timestamp's
 * seconds (scan_systrace.c). */
double tm_dec_seconds(const char *s, size_t n);

/* perf_text (scan_perf_text.c): `perf script` / simpleperf text output;
 * _mem: a member held in memory, in blocks of block bytes (tests). */
enum tm_status tm_scan_perf_text(struct tm_stream *st, struct tm_scan *sc,
				 const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
enum tm_status tm_scan_perf_text_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
				     const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
/* android_logcat (scan_logcat.c): logcat text; _mem as above. */
enum tm_status tm_scan_logcat(struct tm_stream *st, struct tm_scan *sc,
			      const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
enum tm_status tm_scan_logcat_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
				  const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
/* gecko (scan_gecko.c): a Firefox Profiler JSON profile. */
enum tm_status tm_scan_gecko(struct tm_stream *st, struct tm_scan *sc,
			     const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
/* pb_fields.c: in the message [p, end), the last length-delimited field f
 * (NULL if none; *len its size, *any whether f occurs at all, protozero's
 * has_*), and the last varint field f (*has whether there is one). */
const uint8_t *tm_pb_ld_field(const uint8_t *p, const uint8_t *end, uint32_t f, size_t *len,
			      bool *any);
uint64_t tm_pb_varint_field(const uint8_t *p, const uint8_t *end, uint32_t f, bool *has);
/* The next length-delimited field f at or after *cur (NULL at the end or
 * at a malformed field); *cur moves past it. */
const uint8_t *tm_pb_next_ld(const uint8_t **cur, const uint8_t *end, uint32_t f, size_t *len);
/* primes (scan_primes.c). */
enum tm_status tm_scan_primes(struct tm_stream *st, struct tm_scan *sc,
			      const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;

/* fuchsia (scan_fuchsia.c); _mem as above. */
enum tm_status tm_scan_fuchsia(struct tm_stream *st, struct tm_scan *sc,
			       const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
enum tm_status tm_scan_fuchsia_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
				   const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
/* simpleperf_proto (scan_simpleperf.c). */
enum tm_status tm_scan_simpleperf(struct tm_stream *st, struct tm_scan *sc,
				  const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
/* art_method and art_method_v2 (scan_art.c; which one by sc->format). */
enum tm_status tm_scan_art(struct tm_stream *st, struct tm_scan *sc,
			   const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
/* strace (scan_strace.c): `strace -ttt` output; _mem as above. */
enum tm_status tm_scan_strace(struct tm_stream *st, struct tm_scan *sc,
			      const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
enum tm_status tm_scan_strace_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
				  const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
/* strace_trace_tokenizer.cc ParseStraceLine (the sniffer's too). */
enum tm_strace_line { TM_ST_NOT_SYSCALL, TM_ST_UNSUPPORTED_TS, TM_ST_SYSCALL };
struct tm_strace_event {
	int64_t ts; /* ns since the epoch */
	uint32_t pid;
	bool has_pid;
	const char *name; /* the syscall, borrowed from the line */
	size_t name_len;
};
enum tm_strace_line tm_strace_parse(const char *p, size_t n, struct tm_strace_event *ev);

/* android_dumpstate (scan_dumpstate.c): a bugreport's text or a battery
 * stats checkin; _mem as above. */
enum tm_status tm_scan_dumpstate(struct tm_stream *st, struct tm_scan *sc,
				 const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
enum tm_status tm_scan_dumpstate_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
				     const struct tm_scan_ctl *ctl, struct tm_error *err) TM_WUR;
/* AndroidLogReader::ParseLine (scan_logcat.c), shared with the log
 * sections of scan_dumpstate.c: the reader's format (fmt 0 until a line
 * passes DetectFormat) and default year. */
struct tm_logcat {
	int fmt;
	int default_year;
};
struct tm_logcat_event {
	int64_t ts; /* local time read as UTC, ns (wrapping as trace_processor's) */
	const char *tag; /* borrows from the line */
	size_t tag_len;
	uint32_t tid;
	bool guessed_year;
};
enum tm_logcat_line { TM_LC_IGNORED, TM_LC_FORMAT_INVALID, TM_LC_FAILED, TM_LC_OK };
enum tm_logcat_line tm_logcat_parse(struct tm_logcat *r, const char *l, size_t n,
				    struct tm_logcat_event *ev);
/* Its stat (android_log_format_invalid / _num_failed), and one push of a
 * parsed line at ts (REALTIME) with its detail and alignment sample. */
void tm_logcat_stat(struct tm_scan *sc, enum tm_logcat_line what);
void tm_logcat_push(struct tm_scan *sc, const struct tm_scan_ctl *ctl,
		    const struct tm_logcat_event *ev, int64_t ts, uint64_t off, uint32_t flags);
/* The year of a log line without one: trace_processor's GuessYear with an
 * empty sorter (the year of CLOCK_MONOTONIC's seconds); tests set
 * tm_logcat_year_override (0: none). */
int tm_logcat_default_year(void);
extern int tm_logcat_year_override;

/* perf_text_sample_line_parser.cc ParseSampleLine: whether line[0..n) is a
 * sample's first line; *ts (may be NULL) its timestamp in ns. */
bool tm_perf_text_sample_line(const char *line, size_t n, int64_t *ts);

/* trace_processor's systrace line tokenizer (systrace_line_tokenizer.cc),
 * shared by scan_systrace.c and the systemTraceEvents string of scan_json.c.
 * Pointers borrow from the line. */
struct tm_systrace_line {
	int64_t ts;           /* (int64)(seconds * 1e9), truncated */
	uint32_t pid;         /* the task's pid (thread id) */
	const char *task;     /* the task's name (before "-pid", after blanks), the thread's */
	size_t task_len;
	const char *event;    /* event name, e.g. "tracing_mark_write" */
	size_t event_len;
	const char *args;     /* text after the match, trimmed */
	size_t args_len;
};
/* False when the line is "Not a known systrace event format". */
bool tm_systrace_tokenize(const char *line, size_t len, struct tm_systrace_line *out);
/* The same by the backtracking matcher alone (the reference of the tests). */
bool tm_systrace_tokenize_ref(const char *line, size_t len, struct tm_systrace_line *out);
#endif

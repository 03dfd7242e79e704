/* SPDX-License-Identifier: MIT */
/*
 * atrace points: what trace_processor makes of the text userspace writes to
 * the trace_marker ("B|pid|name", "E|pid", "C|pid|name|value", "S|", "F|",
 * "I|", "N|", "G|", "H|") and of the kernel events that mimic it (zero,
 * tracing_mark_write and its sde/samsung/dpu/g2d/mali/lwis variants).
 *
 * One parser for every place such text arrives: systrace text lines
 * (scan_systrace.c), the systemTraceEvents string of Chrome JSON
 * (scan_json.c) and ftrace print events of proto traces (scan_ftrace.c),
 * as trace_processor routes all three through SystraceParser
 * (importers/systrace/systrace_parser.{h,cc}: ParseSystraceTracePoint,
 * ParsePrintEvent, ParseZeroEvent, ParseKernelTracingMarkWrite).
 */
#ifndef TM_ATRACE_H
#define TM_ATRACE_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "internal.h"

enum tm_atrace_result {
	TM_ATRACE_FAILURE,     /* systrace_parse_failure, nothing imported */
	TM_ATRACE_UNSUPPORTED, /* silently ignored (trace_event_clock_sync:) */
	TM_ATRACE_OK,
};

/* SystraceTracePoint.  Pointers borrow from the parsed text (or from the
 * caller's buffer when invalid UTF-8 was removed). */
struct tm_atrace_point {
	char phase; /* B E C S F I N G H */
	uint32_t tgid;
	const char *name; /* B C S F I N G */
	size_t name_len;
	int64_t value; /* C: the value; S F G H: the cookie */
	const char *track; /* N G H: the track name */
	size_t track_len;
};

/* ParsePrintEvent's parse: the text with invalid UTF-8 removed
 * (base::CheckAsciiAndRemoveInvalidUTF8, into *clean when needed), then
 * ParseSystraceTracePoint. */
enum tm_atrace_result tm_atrace_parse(const char *s, size_t len, struct tm_buf *clean,
				      struct tm_atrace_point *out);

struct tm_systrace_line;
/* A systrace line (SystraceLineParser::ParseLine): the args of a
 * tracing_mark_write, "0" or print line through tm_atrace_parse.  False
 * when the line is another event (*res untouched). */
bool tm_atrace_line(const struct tm_systrace_line *l, struct tm_buf *clean,
		    enum tm_atrace_result *res, struct tm_atrace_point *out);

struct tm_align_samples;
struct tm_atrace_event;
/* A systrace line's share of a scan (scan_systrace.c, scan_json.c): the
 * atrace point of a print line, its alignment sample and, when it parses,
 * the event it becomes in *ev (left as the caller set it otherwise).
 * Returns the line's conversion flags: TM_CONV_FAIL_DROP, plus
 * TM_CONV_ATRACE_FAIL when the parse fails. */
uint32_t tm_atrace_line_scan(const struct tm_systrace_line *l, struct tm_buf *clean,
			     struct tm_align_samples *a, struct tm_atrace_event *ev);

/* ParseKernelTracingMarkWrite: type 0 takes begin/end from begin; B, E, C
 * and I are kept; anything else is a parse failure (false). */
bool tm_atrace_kernel(char type, bool begin, const char *name, size_t name_len, uint32_t tgid,
		      int64_t value, struct tm_atrace_point *out);
/* ParseZeroEvent: flag bit 0 begin, bit 1 end, bit 2 counter; none of them
 * is a parse failure (false). */
bool tm_atrace_zero(int32_t flag, const char *name, size_t name_len, uint32_t tgid, int64_t value,
		    struct tm_atrace_point *out);

/* What the point becomes (SystraceParser::ParseSystracePoint), for the
 * event list: phase 'B'/'E' (a thread slice, or an async slice for S/F and
 * G/H), 'I' (an instant slice: I, N) or 'C' (a counter sample); the
 * name it shows under; track: the key that pairs an end with its begin
 * (thread slices by the emitting pid, async slices by tgid, name or track
 * name, and cookie). */
struct tm_atrace_event {
	char phase;
	const char *name;
	size_t name_len;
	uint64_t track;
	/* the track as trace_processor names it (tracknames.h): 't' the
	 * emitting thread's, 'a' a process's async track (tname: the slice's
	 * or the track's name), 'c' a process's counter (tname: the counter);
	 * tgid its process */
	char tkind;
	int64_t value; /* 'C': the counter's value */
	uint32_t tgid;
	const char *tname;
	size_t tname_len;
};
void tm_atrace_event(const struct tm_atrace_point *p, uint32_t pid, struct tm_atrace_event *out);

#endif

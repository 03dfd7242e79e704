/* SPDX-License-Identifier: MIT */
/*
 * Protobuf wire format, the way protozero reads it (protozero/proto_decoder.h,
 * protozero/proto_utils.h): varints, field tags, values; and the field
 * numbers of the Perfetto messages the scanners read (protos/perfetto/trace/
 * trace_packet.proto and the messages it includes).  Shared by the proto
 * scanner (scan_proto.c, scan_ftrace.c) and the sniffer (sniff.c).
 */
#ifndef TM_PROTO_WIRE_H
#define TM_PROTO_WIRE_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

/* ------------------------------------------------------------------ */
/* varints                                                             */
/* ------------------------------------------------------------------ */

/* Decode a varint in [p, end); returns the byte after it, or NULL when the
 * varint does not end before end (or is longer than 10 bytes). */
#define AINLINE static inline __attribute__((always_inline))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The general decoder (and the reference for the fast one below). */
static inline const uint8_t *
get_varint_slow(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;
	for (unsigned shift = 0; p < end && shift < 70; shift += 7) {
		uint8_t b = *p++;
		r |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 63);
		if (!(b & 0x80)) {
			*v = r;
			return p;
		}
	}
	return NULL;
}

/* Whether varint_squeeze gathers the 7-bit groups with one pext (x86-64
 * BMI2, where it is fast: not the microcoded one of AMD before family
 * 0x19); set once at start-up (scan_proto.c), tests may clear it, or set
 * it where the CPU has pext at all (tm_wire_bmi2), fast or not. */
extern bool tm_wire_pext, tm_wire_bmi2;

/* The 8-byte decoder's end: x holds the 8 bytes at p, stop (not 0) their
 * bytes without the continuation bit: mask the bytes after the first of
 * them off, squeeze out the continuation bits.  The byte after the varint,
 * or NULL when it runs past end. */
AINLINE const uint8_t *
varint_squeeze(const uint8_t *p, const uint8_t *end, uint64_t x, uint64_t stop, uint64_t *v)
{
	unsigned bits = (unsigned)__builtin_ctzll(stop) + 1; /* 8, 16, .. 64 */
	x &= ((stop & -stop) << 1) - 1; /* bytes up to the last one */
#if defined(__x86_64__) && defined(__GNUC__)
	if (LIKELY(tm_wire_pext)) {
		uint64_t r;
		__asm__("pextq %2, %1, %0" : "=r"(r) : "r"(x), "r"(0x7f7f7f7f7f7f7f7fULL));
		x = r;
	} else
#endif
	{
		x &= 0x7f7f7f7f7f7f7f7fULL;
		x = (x & 0x007f007f007f007fULL) | ((x & 0x7f007f007f007f00ULL) >> 1);
		x = (x & 0x00003fff00003fffULL) | ((x & 0x3fff00003fff0000ULL) >> 2);
		x = (x & 0x000000000fffffffULL) | ((x & 0x0fffffff00000000ULL) >> 4);
	}
	if (UNLIKELY(bits / 8 > (unsigned)(end - p)))
		return NULL; /* runs past end */
	*v = x;
	return p + bits / 8;
}

/* The 8 bytes at p (lim - p >= 8) and their stop bits: the high bit of
 * each byte without the continuation bit, in the byte order of the value
 * (byte k of the varint is bits 8k..8k+7). */
AINLINE uint64_t
varint_load8(const uint8_t *p, uint64_t *x)
{
	memcpy(x, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	*x = __builtin_bswap64(*x);
#endif
	return ~*x & 0x8080808080808080ULL;
}

/* A varint of any length at p < end: one 8-byte load when lim allows
 * (varints of up to 8 bytes), the plain loop for the rest (9 and 10 bytes,
 * or fewer than 8 bytes readable). */
AINLINE const uint8_t *
get_varint_load8(const uint8_t *p, const uint8_t *end, const uint8_t *lim, uint64_t *v)
{
	if (LIKELY(lim - p >= 8)) {
		uint64_t x, stop = varint_load8(p, &x);
		if (LIKELY(stop))
			return varint_squeeze(p, end, x, stop, v);
	}
	return get_varint_slow(p, end, v);
}

/* Decode a varint in [p, end); returns the byte after it, or NULL when the
 * varint does not end before end (or is longer than 10 bytes).  With 8
 * bytes at hand (up to lim), varints of up to 8 bytes are decoded without
 * a loop (varint_squeeze). */
AINLINE const uint8_t *
get_varint_lim(const uint8_t *p, const uint8_t *end, const uint8_t *lim, uint64_t *v)
{
	if (LIKELY(p < end && *p < 0x80)) {
		*v = *p;
		return p + 1;
	}
	if (LIKELY(end - p >= 2 && p[1] < 0x80)) {
		*v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		return p + 2;
	}
	if (UNLIKELY(p >= end))
		return NULL;
	return get_varint_load8(p, end, lim, v);
}

/* get_varint_lim for values that rarely fit in two bytes (timestamps): the
 * 8-byte decoder first. */
AINLINE const uint8_t *
get_varint_wide(const uint8_t *p, const uint8_t *end, const uint8_t *lim, uint64_t *v)
{
	if (UNLIKELY(p >= end))
		return NULL;
	return get_varint_load8(p, end, lim, v);
}

/* get_varint_lim without the value: the byte after the varint, or NULL
 * where get_varint_lim gives NULL. */
AINLINE const uint8_t *
skip_varint_lim(const uint8_t *p, const uint8_t *end, const uint8_t *lim)
{
	if (LIKELY(p < end && *p < 0x80))
		return p + 1;
	if (LIKELY(lim - p >= 8 && p < end)) {
		uint64_t x, stop = varint_load8(p, &x);
		if (LIKELY(stop)) {
			unsigned k = ((unsigned)__builtin_ctzll(stop) + 1) / 8;
			return k > (unsigned)(end - p) ? NULL : p + k;
		}
	}
	uint64_t v;
	return get_varint_slow(p, end, &v);
}

/* get_varint for a varint known to end before end (a byte of [p, end)
 * without the continuation bit counted for it, as count_packed counts):
 * one and two bytes are read without a bound check, longer ones by
 * get_varint (NULL past 10 bytes, as there). */
AINLINE const uint8_t *
get_varint_counted(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	if (LIKELY(p[0] < 0x80)) {
		*v = p[0];
		return p + 1;
	}
	if (LIKELY(p[1] < 0x80)) {
		*v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		return p + 2;
	}
	return get_varint_lim(p, end, end, v);
}

/* The same where only [p, end) may be read. */
AINLINE const uint8_t *
get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	return get_varint_lim(p, end, end, v);
}

/* One field of a message: id, wire type, varint value or byte range. */
struct field {
	uint32_t id;
	uint32_t wt;
	uint64_t v;
	const uint8_t *p;
	size_t len;
};

/* Next field of [*pp, end).  1 = field read, 0 = end, -1 = malformed (as
 * protozero's decoder, which then leaves bytes_left). */
static inline int
next_field(const uint8_t **pp, const uint8_t *end, struct field *f)
{
	const uint8_t *p = *pp;
	uint64_t tag;
	f->p = NULL;
	f->len = 0;
	f->v = 0;
	if (p >= end)
		return 0;
	p = get_varint(p, end, &tag);
	if (!p)
		return -1;
	/* the id cast to 32 bits, as protozero proto_decoder.cc
	 * ParseOneField takes it (an id above kMaxId is a field skipped
	 * there, unknown to every caller here) */
	f->id = (uint32_t)(tag >> 3);
	f->wt = (uint32_t)(tag & 7);
	if (f->id == 0)
		return -1;
	switch (f->wt) {
	case 0:
		p = get_varint(p, end, &f->v);
		if (!p)
			return -1;
		break;
	case 1:
		if (end - p < 8)
			return -1;
		memcpy(&f->v, p, 8);
		f->p = p;
		f->len = 8;
		p += 8;
		break;
	case 2: {
		uint64_t n;
		p = get_varint(p, end, &n);
		if (!p || n > (uint64_t)(end - p))
			return -1;
		f->p = p;
		f->len = (size_t)n;
		f->v = n;
		p += n;
		break;
	}
	case 5: {
		uint32_t x;
		if (end - p < 4)
			return -1;
		memcpy(&x, p, 4);
		f->v = x;
		f->p = p;
		f->len = 4;
		p += 4;
		break;
	}
	default:
		return -1;
	}
	*pp = p;
	return 1;
}

/* The hot walkers (packet, TrackEvent, ftrace event) read fields with these
 * two instead of next_field: the same acceptance rules, but no struct and
 * the tag kept whole (id << 3 | wire type) for one switch.  lim >= end: the
 * end of the readable buffer (varints may load 8 bytes at once up to it).
 * Tag at p < end: NULL when malformed (bad varint, id 0 in its low 32
 * bits); an id of more is cast to 32 bits, as next_field takes it (the
 * tag's low 35 bits). */
AINLINE const uint8_t *
rd_tag(const uint8_t *p, const uint8_t *end, const uint8_t *lim, uint64_t *tag)
{
	if (LIKELY(*p < 0x80)) {
		*tag = *p;
		return *p >= 8 ? p + 1 : NULL;
	}
	if (LIKELY(end - p >= 2 && p[1] < 0x80)) { /* ids 16..2047: never 0 */
		*tag = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		return p + 2;
	}
	p = get_varint_lim(p, end, lim, tag);
	if (!p || !(*tag & 0x7fffffff8ULL))
		return NULL;
	*tag &= 0x7ffffffffULL;
	return p;
}

/* The value of a field of wire type wt at p: *v = the varint, the fixed
 * value or the length; [*fp, +*fl) the bytes of non-varint fields.  NULL
 * when malformed. */
AINLINE const uint8_t *
rd_value(const uint8_t *p, const uint8_t *end, const uint8_t *lim, uint32_t wt, uint64_t *v,
	 const uint8_t **fp, size_t *fl)
{
	switch (wt) {
	case 0:
		if (LIKELY(p < end && *p < 0x80)) {
			*v = *p;
			return p + 1;
		}
		return get_varint_lim(p, end, lim, v);
	case 2: {
		uint64_t n;
		if (LIKELY(p < end && *p < 0x80)) {
			n = *p++;
		} else {
			p = get_varint_lim(p, end, lim, &n);
			if (!p)
				return NULL;
		}
		if (n > (uint64_t)(end - p))
			return NULL;
		*fp = p;
		*fl = (size_t)n;
		*v = n;
		return p + n;
	}
	case 1:
		if (end - p < 8)
			return NULL;
		memcpy(v, p, 8);
		*fp = p;
		*fl = 8;
		return p + 8;
	case 5: {
		uint32_t x;
		if (end - p < 4)
			return NULL;
		memcpy(&x, p, 4);
		*v = x;
		*fp = p;
		*fl = 4;
		return p + 4;
	}
	default:
		return NULL;
	}
}

/* The number of varints in a packed field (its bytes without the
 * continuation bit). */
static inline size_t
count_packed(const struct field *f)
{
	if (!f->p)
		return 0;
	/* a varint ends at each byte without the continuation bit: count
	 * them 16 bytes at a time where SSE2 is, then 8 (the high bits
	 * summed by one multiply), then one */
	size_t c = 0, i = 0, n = f->len;
#if defined(__SSE2__) && defined(__x86_64__)
	/* 16 bytes at a time: each lane counts its bytes with the bit (a
	 * compare with zero is -1 for them), psadbw sums the lanes every
	 * 255 blocks (before a lane can wrap) */
	while (n - i >= 16) {
		size_t blocks = (n - i) / 16;
		if (blocks > 255)
			blocks = 255;
		__m128i acc = _mm_setzero_si128();
		for (size_t b = 0; b < blocks; b++, i += 16) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(f->p + i));
			acc = _mm_sub_epi8(acc, _mm_cmplt_epi8(x, _mm_setzero_si128()));
		}
		__m128i sum = _mm_sad_epu8(acc, _mm_setzero_si128());
		size_t more = (size_t)_mm_cvtsi128_si64(sum) + (size_t)_mm_extract_epi16(sum, 4);
		c += blocks * 16 - more;
	}
#endif
	for (; i + 8 <= n; i += 8) {
		uint64_t x;
		memcpy(&x, f->p + i, 8);
		x = (~x >> 7) & 0x0101010101010101ULL;
		c += (size_t)((x * 0x0101010101010101ULL) >> 56);
	}
	for (; i < n; i++)
		if (!(f->p[i] & 0x80))
			c++;
	return c;
}

/* ------------------------------------------------------------------ */
/* field numbers                                                       */
/* ------------------------------------------------------------------ */

/* Trace (trace.proto) */
enum { TRACE_PACKET = 1 };

/* TracePacket (trace_packet.proto) */
enum {
	TP_FTRACE_EVENTS = 1,
	TP_TRUSTED_UID = 3,
	TP_CHROME_EVENTS = 5,
	TP_CLOCK_SNAPSHOT = 6,
	TP_TIMESTAMP = 8,
	TP_SEQ_ID = 10, /* trusted_packet_sequence_id */
	TP_TRACK_EVENT = 11,
	TP_INTERNED_DATA = 12,
	TP_SEQ_FLAGS = 13,
	TP_SYNC_MARKER = 36,
	TP_INCR_STATE_CLEARED = 41,
	TP_PREV_PACKET_DROPPED = 42,
	TP_THREAD_DESCRIPTOR = 44,
	TP_SYSTEM_INFO = 45,
	TP_CHROME_BENCHMARK_METADATA = 48,
	TP_COMPRESSED_PACKETS = 50,
	TP_CHROME_METADATA = 51,
	TP_STREAMING_PROFILE = 54,
	TP_TIMESTAMP_CLOCK_ID = 58,
	TP_DEFAULTS = 59,
	TP_CPU_INFO = 67,
	TP_SERVICE_EVENT = 69,
	TP_EXTENSION_DESCRIPTOR = 72,
	TP_UI_STATE = 78,
	TP_TRUSTED_PID = 79,
	TP_STATSD_ATOM = 84,
	TP_TRACE_UUID = 89,
	TP_MACHINE_ID = 98,
	TP_REMOTE_CLOCK_SYNC = 107,
	TP_GPU_INFO = 128,
	TP_INTERRUPT_INFO = 130,
	TP_ZSTD_COMPRESSED_PACKETS = 133,
};

/* TracePacket.sequence_flags bits */
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };

/* ClockSnapshot, ClockSnapshot.Clock, RemoteClockSync(.SyncedClocks) */
enum { CS_CLOCKS = 1, CS_PRIMARY_TRACE_CLOCK = 2 };
enum { CLK_ID = 1, CLK_TIMESTAMP = 2, CLK_IS_INCREMENTAL = 3, CLK_UNIT_MULTIPLIER_NS = 4 };
enum { RCS_SYNCED_CLOCKS = 1, RCS_CLIENT_CLOCKS = 2, RCS_HOST_CLOCKS = 3 };

/* TracePacketDefaults, TrackEventDefaults */
enum { TPD_TIMESTAMP_CLOCK_ID = 58, TPD_TRACK_EVENT_DEFAULTS = 11, TED_TRACK_UUID = 11 };

/* InternedData, EventName */
enum { ID_EVENT_NAMES = 2, EN_IID = 1, EN_NAME = 2 };

/* TrackEvent, TrackEvent.LegacyEvent */
enum {
	TE_TIMESTAMP_DELTA_US = 1,
	TE_THREAD_TIME_DELTA_US = 2,
	TE_CATEGORY_IIDS = 3,
	TE_DEBUG_ANNOTATIONS = 4,
	TE_LEGACY_EVENT = 6,
	TE_THREAD_INSTRUCTION_COUNT_DELTA = 8,
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK_UUID = 11,
	TE_TIMESTAMP_ABSOLUTE_US = 16,
	TE_CATEGORIES = 22,
	TE_NAME = 23,
	TE_COUNTER_VALUE = 30,
	TE_DOUBLE_COUNTER_VALUE = 44,
	TE_FLOW_IDS = 47,
	TE_TERMINATING_FLOW_IDS = 48,
	TE_LEGACY_NAME_IID = 1,
	TE_LEGACY_PHASE = 2,
};

/* TrackEvent.Type */
enum { TE_SLICE_BEGIN = 1, TE_SLICE_END = 2, TE_INSTANT = 3, TE_COUNTER = 4, TE_STATE = 5 };

/* ThreadDescriptor, StreamingProfilePacket, SystemInfo, StatsdAtom */
enum { TD_REFERENCE_TIMESTAMP_US = 6 };
enum { SPP_CALLSTACK_IID = 1, SPP_TIMESTAMP_DELTA_US = 2 };
enum { SI_TIMEZONE_OFF_MINS = 7, SI_MACHINE_NAME = 17 };
enum { SA_ATOM = 1 };

/* FtraceEventBundle (ftrace_event_bundle.proto) */
enum {
	FB_CPU = 1,
	FB_EVENT = 2,
	FB_COMPACT_SCHED = 4,
	FB_FTRACE_CLOCK = 5,
	FB_FTRACE_TIMESTAMP = 6,
	FB_BOOT_TIMESTAMP = 7,
	FB_LAST_READ_EVENT_TIMESTAMP = 9,
	FB_PREVIOUS_BUNDLE_END_TIMESTAMP = 10,
};

/* FtraceClock */
enum { FTRACE_CLOCK_UNSPECIFIED = 0, FTRACE_CLOCK_GLOBAL = 2, FTRACE_CLOCK_LOCAL = 3,
       FTRACE_CLOCK_MONO_RAW = 4 };

/* FtraceEvent (ftrace_event.proto): its metadata and the events that
 * carry atrace points (ftrace.proto PrintFtraceEvent, systrace.proto
 * ZeroFtraceEvent, the *TracingMarkWriteFtraceEvent of mdss, sde, dpu,
 * g2d, mali, lwis and samsung.proto). */
enum {
	FE_TIMESTAMP = 1,
	FE_PID = 2,
	FE_PRINT = 3,
	FE_SCHED_SWITCH = 4,
	FE_TRACING_MARK_WRITE = 80,
	FE_ZERO = 331,
	FE_SDE_TRACING_MARK_WRITE = 333,
	FE_DPU_TRACING_MARK_WRITE = 348,
	FE_G2D_TRACING_MARK_WRITE = 349,
	FE_MALI_TRACING_MARK_WRITE = 350,
	FE_LWIS_TRACING_MARK_WRITE = 467,
	FE_SAMSUNG_TRACING_MARK_WRITE = 484,
};
enum { PRINT_BUF = 2 };

/* FtraceEventBundle.CompactSched */
enum {
	CSC_SWITCH_TIMESTAMP = 1,
	CSC_SWITCH_PREV_STATE = 2,
	CSC_SWITCH_NEXT_PID = 3,
	CSC_SWITCH_NEXT_PRIO = 4,
	CSC_INTERN_TABLE = 5,
	CSC_SWITCH_NEXT_COMM_INDEX = 6,
	CSC_WAKING_TIMESTAMP = 7,
	CSC_WAKING_PID = 8,
	CSC_WAKING_TARGET_CPU = 9,
	CSC_WAKING_PRIO = 10,
	CSC_WAKING_COMM_INDEX = 11,
	CSC_N_FIELDS = 13,
};

/* Wire types; a whole tag is id << 3 | wire type. */
enum { WT_VARINT = 0, WT_FIXED64 = 1, WT_LEN = 2, WT_FIXED32 = 5 };
#define TAG(id, wt) ((uint64_t)(id) << 3 | (wt))

#endif

/* SPDX-License-Identifier: MIT */
/*
 * fuchsia scanner: a Fuchsia trace (FXT) as trace_processor's
 * FuchsiaTraceTokenizer reads it (importers/fuchsia/
 * fuchsia_trace_tokenizer.cc, Parse and ParseRecord): 64-bit words, each
 * record a header word (type in bits 0-3, size in words in bits 4-15) and
 * its body.  A record of size 0 fails the import; a record cut off at the
 * end of the file is never parsed.
 *
 * Every event record and every scheduler record (legacy context switch,
 * context switch, thread wakeup) is one ConvertDefaultClockToTraceTime
 * push (BOOTTIME: the descriptor's kBoottime policy) at
 * TicksToNs(ticks, the current provider's ticks_per_second)
 * (fuchsia_trace_utils.cc): 1e9 until the provider's initialization
 * record says otherwise, a provider info record starting a new provider
 * (RegisterProvider) with its own string table.  A timestamp that does not
 * fit in a non-negative int64 (or a rate of 0) counts
 * fuchsia_timestamp_overflow and is not pushed; a record too short for
 * what its header says counts fuchsia_record_read_error, a string
 * reference missing from the provider's table fuchsia_invalid_string_ref,
 * and a record with no current provider (a provider section naming an
 * unknown one) fuchsia_invalid_event: none of them pushed.
 *
 * Blob records of the Perfetto type hold Perfetto packets that the
 * tokenizer hands to an embedded ProtoTraceReader after each chunk it is
 * given: where they fall among the file's records depends on how the bytes
 * reach it, so a file with any is not predicted (ours: the scan says so).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "scan.h"
#include "align_scan.h"
#include "strmap.h"

enum { FX_HEADER, FX_RECORD };

struct fx_provider {
	uint64_t ticks_per_second;
};

struct fx {
	struct tm_scan *sc;
	const struct tm_scan_ctl *ctl;
	struct tm_buf buf;    /* the record being assembled */
	int state;
	uint32_t need;
	uint64_t off, total;
	enum tm_status status;
	bool stop;
	/* providers: RegisterProvider makes a new one each time; by id the
	 * latest (SIZE_MAX: an id a provider section named before any info,
	 * providers_[id] holding nullptr) */
	struct fx_provider *prov;
	size_t n_prov, cap_prov;
	struct tm_u64map prov_ix; /* provider id -> index into prov */
	size_t cur;               /* SIZE_MAX: current_provider_ is nullptr */
	/* string tables: (provider index << 16 | string index) -> 1 + the
	 * interned string's index in strs */
	struct tm_u64map str_ix;
	struct tm_strmap interned;
	char **strs;
	size_t *str_len;
	size_t n_strs, cap_strs;
};

/* A record's words (fuchsia_trace_utils.cc, RecordCursor): a read past the
 * end fails, and moves the cursor on all the same (ReadWords). */
struct cur {
	const uint8_t *d;
	size_t words, at;
};

static bool
rd_words(struct cur *c, size_t n, const uint8_t **out)
{
	size_t at = c->at;
	c->at += n;
	if (at > c->words || n > c->words - at)
		return false;
	if (out)
		*out = c->d + at * 8;
	return true;
}

static uint64_t
le64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v; /* (little-endian hosts only, as trace_processor's reinterpret_cast) */
}

static bool
rd_u64(struct cur *c, uint64_t *v)
{
	const uint8_t *p;
	if (!rd_words(c, 1, &p))
		return false;
	if (v)
		*v = le64(p);
	return true;
}

/* ReadInlineString: len = ref & 0x7fff, padded to words. */
static bool
rd_str(struct cur *c, uint32_t ref, const char **s, size_t *n)
{
	size_t len = ref & 0x7fff;
	const uint8_t *p;
	if (!rd_words(c, (len + 7) / 8, &p))
		return false;
	if (s) {
		*s = (const char *)p;
		*n = len;
	}
	return true;
}

static inline uint64_t
field(uint64_t h, unsigned lo, unsigned hi)
{
	return (h >> lo) & ((hi - lo == 63) ? ~0ull : ((1ull << (hi - lo + 1)) - 1));
}

/* IsInlineString / IsInlineThread */
static inline bool
str_inline(uint32_t ref)
{
	return (ref & 0x8000) || ref == 0;
}

/* TicksToNs: -1 when it does not fit in a non-negative int64 or the rate
 * is 0. */
static int64_t
ticks_to_ns(uint64_t ticks, uint64_t tps)
{
	uint64_t hi = ticks >> 32, lo = ticks & 0xffffffffu, nps = 1000000000u;
	if (tps == 0)
		return -1;
	uint64_t mul = (nps << 32) / tps;
	uint64_t rhi = hi * mul;
	if (hi != 0 && rhi / hi != mul)
		return -1;
	uint64_t rlo = lo * nps / tps;
	int64_t r = (int64_t)(rhi + rlo);
	return r < 0 ? -1 : r;
}

static void
fx_stat(struct fx *fx, enum tm_stat_id st)
{
	tm_oplog_stat(&fx->sc->log, 0, st, 1);
}

static void
register_provider(struct fx *fx, uint64_t id)
{
	XGROW(fx->prov, fx->cap_prov, fx->n_prov + 1);
	fx->prov[fx->n_prov].ticks_per_second = 1000000000u;
	tm_u64map_set(&fx->prov_ix, id, fx->n_prov);
	fx->cur = fx->n_prov++;
}

/* current_provider_->GetString(ref): false when it is not in the table. */
static bool
get_string(struct fx *fx, uint32_t ref, const char **s, size_t *n)
{
	size_t v;
	if (!tm_u64map_get(&fx->str_ix, ((uint64_t)fx->cur << 16) | ref, &v))
		return false;
	*s = fx->strs[v];
	*n = fx->str_len[v];
	return true;
}

static void
set_string(struct fx *fx, uint32_t index, const char *s, size_t n)
{
	bool added;
	struct tm_strmap_slot *sl = tm_strmap_put(&fx->interned, s, n, fx->n_strs, &added);
	if (added) {
		XGROW(fx->strs, fx->cap_strs, fx->n_strs + 1);
		fx->str_len = xrealloc(fx->str_len, fx->cap_strs * sizeof *fx->str_len);
		char *k = xmalloc(n + 1);
		memcpy(k, s, n);
		k[n] = 0;
		fx->strs[fx->n_strs] = k;
		fx->str_len[fx->n_strs] = n;
		sl->key = k; /* the map borrows the copy, not the record */
		fx->n_strs++;
	}
	tm_u64map_set(&fx->str_ix, ((uint64_t)fx->cur << 16) | index, sl->val);
}

/* A string reference as the tokenizer takes it: an inline one read from
 * the record (fuchsia_record_read_error when it is cut off), a table one
 * looked up (fuchsia_invalid_string_ref when missing); false after either
 * stat.  *s and *n (may be NULL) the string. */
static bool
string_ref(struct fx *fx, struct cur *c, uint32_t ref, const char **s, size_t *n)
{
	const char *ls;
	size_t ln;
	if (str_inline(ref) ? !rd_str(c, ref, s, n) : !get_string(fx, ref, s ? s : &ls, n ? n : &ln)) {
		fx_stat(fx, str_inline(ref) ? TM_STAT_FUCHSIA_READ_ERROR
					    : TM_STAT_FUCHSIA_INVALID_STRING_REF);
		return false;
	}
	return true;
}

/* The tokenizer's insert_args: each argument's name and string value that
 * refer to the string table must be in it. */
static bool
skip_args(struct fx *fx, struct cur *c, uint32_t n_args)
{
	for (uint32_t i = 0; i < n_args; i++) {
		size_t base = c->at;
		uint64_t h;
		if (!rd_u64(c, &h)) {
			fx_stat(fx, TM_STAT_FUCHSIA_READ_ERROR);
			return false;
		}
		uint32_t type = (uint32_t)field(h, 0, 3), words = (uint32_t)field(h, 4, 15);
		if (!string_ref(fx, c, (uint32_t)field(h, 16, 31), NULL, NULL))
			return false;
		if (type == 6 && !string_ref(fx, c, (uint32_t)field(h, 32, 47), NULL, NULL))
			return false; /* kString */
		c->at = base + words;
	}
	return true;
}

/* FuchsiaTraceParser::ParseArgs as the kernel-object thread record uses
 * it: true unless a read fails; *bad when an argument named "process" is
 * not a koid (fuchsia_invalid_event_arg_type). */
static bool
thread_args(struct fx *fx, struct cur *c, uint32_t n_args, bool *bad)
{
	for (uint32_t i = 0; i < n_args; i++) {
		size_t base = c->at;
		uint64_t h;
		const char *s = NULL;
		size_t n = 0;
		if (!rd_u64(c, &h))
			return false;
		uint32_t type = (uint32_t)field(h, 0, 3), words = (uint32_t)field(h, 4, 15);
		uint32_t name = (uint32_t)field(h, 16, 31);
		if (str_inline(name)) {
			if (!rd_str(c, name, &s, &n))
				return false;
		} else if (!get_string(fx, name, &s, &n)) {
			fx_stat(fx, TM_STAT_FUCHSIA_INVALID_STRING_REF);
			s = NULL;
		}
		switch (type) {
		case 3: case 4: case 5: case 7: case 8: /* int64 uint64 double pointer koid */
			if (!rd_u64(c, NULL))
				return false;
			break;
		case 6: {
			uint32_t v = (uint32_t)field(h, 32, 47);
			const char *vs;
			size_t vn;
			if (str_inline(v)) {
				if (!rd_str(c, v, NULL, NULL))
					return false;
			} else if (!get_string(fx, v, &vs, &vn)) {
				fx_stat(fx, TM_STAT_FUCHSIA_INVALID_STRING_REF);
			}
			break;
		}
		default:
			break;
		}
		if (s && n == 7 && !memcmp(s, "process", 7) && type != 8)
			*bad = true;
		c->at = base + words;
	}
	return true;
}

static void
push(struct fx *fx, int64_t ts, const char *name, size_t n, char phase)
{
	struct tm_scan_event ev = {.ts = ts, .name = name, .name_len = n, .phase = phase,
				   .align = phase == 'i' ? AL_INSTANT : 0, .dur = -1};
	tm_scan_event(fx->sc, fx->ctl, &ev, fx->off);
}

static void
event_record(struct fx *fx, struct cur *c, uint64_t h)
{
	uint32_t etype = (uint32_t)field(h, 16, 19), n_args = (uint32_t)field(h, 20, 23);
	uint32_t thread = (uint32_t)field(h, 24, 31), cat = (uint32_t)field(h, 32, 47);
	uint32_t name = (uint32_t)field(h, 48, 63);
	uint64_t ticks;
	const char *ns = NULL;
	size_t nn = 0;
	if (!rd_u64(c, &ticks)) {
		fx_stat(fx, TM_STAT_FUCHSIA_READ_ERROR);
		return;
	}
	int64_t ts = ticks_to_ns(ticks, fx->prov[fx->cur].ticks_per_second);
	if (ts < 0) {
		fx_stat(fx, TM_STAT_FUCHSIA_TS_OVERFLOW);
		return;
	}
	if (thread == 0 && !rd_words(c, 2, NULL)) {
		fx_stat(fx, TM_STAT_FUCHSIA_READ_ERROR);
		return;
	}
	if (!string_ref(fx, c, cat, NULL, NULL) || !string_ref(fx, c, name, &ns, &nn) ||
	    !skip_args(fx, c, n_args))
		return;
	/* event type 0: an instant (fuchsia_trace_parser.cc); the others
	 * (counters, durations, async, flows) listed as events */
	push(fx, ts, ns ? ns : "", nn, etype == 0 ? 'i' : 'P');
}

static void
sched_record(struct fx *fx, struct cur *c, uint64_t h)
{
	uint32_t et = (uint32_t)field(h, 60, 63);
	uint64_t ticks;
	if (et > 2)
		return; /* unknown scheduler event: skipped */
	if (!rd_u64(c, &ticks)) {
		fx_stat(fx, TM_STAT_FUCHSIA_READ_ERROR);
		return;
	}
	int64_t ts = ticks_to_ns(ticks, fx->prov[fx->cur].ticks_per_second);
	if (ts < 0) {
		fx_stat(fx, TM_STAT_FUCHSIA_TS_OVERFLOW);
		return;
	}
	if (et == 0) { /* legacy context switch: threads inline when ref 0 */
		uint32_t out = (uint32_t)field(h, 28, 35), in = (uint32_t)field(h, 36, 43);
		if ((out == 0 && !rd_words(c, 2, NULL)) || (in == 0 && !rd_words(c, 2, NULL))) {
			fx_stat(fx, TM_STAT_FUCHSIA_READ_ERROR);
			return;
		}
	} else {
		/* context switch: outgoing and incoming tid; wakeup: the tid */
		if (!rd_u64(c, NULL) || (et == 1 && !rd_u64(c, NULL))) {
			fx_stat(fx, TM_STAT_FUCHSIA_READ_ERROR);
			return;
		}
		if (!skip_args(fx, c, (uint32_t)field(h, 16, 19)))
			return;
	}
	push(fx, ts, et == 2 ? "thread wakeup" : "context switch", et == 2 ? 13 : 14, 'P');
}

static void
kernel_object(struct fx *fx, struct cur *c, uint64_t h)
{
	uint32_t type = (uint32_t)field(h, 16, 23);
	if (!rd_u64(c, NULL)) {
		fx_stat(fx, TM_STAT_FUCHSIA_READ_ERROR);
		return;
	}
	if (!string_ref(fx, c, (uint32_t)field(h, 24, 39), NULL, NULL))
		return;
	if (type != 2) /* ZX_OBJ_TYPE_THREAD */
		return;
	bool bad = false;
	if (!thread_args(fx, c, (uint32_t)field(h, 40, 43), &bad))
		fx_stat(fx, TM_STAT_FUCHSIA_READ_ERROR);
	else if (bad)
		fx_stat(fx, TM_STAT_FUCHSIA_INVALID_ARG_TYPE);
}

static void
record(struct fx *fx, const uint8_t *d, size_t words)
{
	struct cur c = {d, words, 1};
	uint64_t h = le64(d);
	uint32_t type = (uint32_t)field(h, 0, 3);
	fx->sc->n_packets++;
	if (type != 0 && fx->cur == SIZE_MAX) {
		fx_stat(fx, TM_STAT_FUCHSIA_INVALID_EVENT);
		return;
	}
	switch (type) {
	case 0: { /* metadata */
		uint32_t mt = (uint32_t)field(h, 16, 19);
		uint64_t id = field(h, 20, 51);
		if (mt == 1) { /* provider info */
			if (!rd_str(&c, (uint32_t)field(h, 52, 59), NULL, NULL)) {
				fx_stat(fx, TM_STAT_FUCHSIA_READ_ERROR);
				return;
			}
			register_provider(fx, id);
		} else if (mt == 2) { /* provider section */
			size_t v;
			if (tm_u64map_get(&fx->prov_ix, id, &v)) {
				fx->cur = v;
			} else {
				tm_u64map_set(&fx->prov_ix, id, SIZE_MAX);
				fx->cur = SIZE_MAX;
			}
		}
		break;
	}
	case 1: { /* initialization */
		uint64_t tps;
		if (!rd_u64(&c, &tps))
			fx_stat(fx, TM_STAT_FUCHSIA_READ_ERROR);
		else
			fx->prov[fx->cur].ticks_per_second = tps;
		break;
	}
	case 2: { /* string */
		uint32_t index = (uint32_t)field(h, 16, 30);
		const char *s;
		size_t n;
		if (index == 0)
			break;
		if (!rd_str(&c, (uint32_t)field(h, 32, 46), &s, &n))
			fx_stat(fx, TM_STAT_FUCHSIA_READ_ERROR);
		else
			set_string(fx, index, s, n);
		break;
	}
	case 3: /* thread: its koids are read, never checked against events */
		if (field(h, 16, 23) != 0 && !rd_words(&c, 2, NULL))
			fx_stat(fx, TM_STAT_FUCHSIA_READ_ERROR);
		break;
	case 4:
		event_record(fx, &c, h);
		break;
	case 5: { /* blob: the Perfetto ones are fed to a ProtoTraceReader */
		if (field(h, 48, 55) != 3)
			break;
		uint32_t name = (uint32_t)field(h, 16, 31);
		size_t size = (size_t)field(h, 32, 46);
		if (str_inline(name) && !rd_str(&c, name, NULL, NULL)) {
			fx_stat(fx, TM_STAT_FUCHSIA_READ_ERROR);
			break;
		}
		if (c.at > c.words || (size + 7) / 8 > c.words - c.at) {
			fx_stat(fx, TM_STAT_FUCHSIA_READ_ERROR);
			break;
		}
		c.at += (size + 7) / 8;
		if (size && !fx->sc->unpredicted) {
			fx->sc->unpredicted = true;
			tm_scan_warn(fx->sc, "a blob of Perfetto packets at byte %ju, which "
				     "trace_processor imports between the records at its read "
				     "boundaries (not modelled by tracemerge)",
				     (uintmax_t)fx->off);
		}
		break;
	}
	case 7:
		kernel_object(fx, &c, h);
		break;
	case 8:
		sched_record(fx, &c, h);
		break;
	default:
		break;
	}
}

static void
fx_feed(void *self, const char *p, size_t n)
{
	struct fx *fx = self;
	uint64_t at = fx->total;
	fx->total += n;
	while (n && !fx->stop) {
		size_t want = fx->need - fx->buf.len, k = n < want ? n : want;
		if (!fx->buf.len)
			fx->off = at;
		tm_buf_add(&fx->buf, p, k);
		p += k;
		n -= k;
		at += k;
		if (fx->buf.len < fx->need)
			continue;
		if (fx->state == FX_HEADER) {
			uint32_t words = (uint32_t)field(le64((const uint8_t *)fx->buf.data), 4, 15);
			if (words == 0) {
				tm_oplog_fatal(&fx->sc->log, 0, "Unexpected record of size 0", fx->off);
				fx->sc->failed = true;
				fx->stop = true;
				return;
			}
			fx->need = words * 8;
			fx->state = FX_RECORD;
			if (fx->buf.len < fx->need)
				continue;
		}
		record(fx, (const uint8_t *)fx->buf.data, fx->need / 8);
		fx->buf.len = 0;
		fx->need = 8;
		fx->state = FX_HEADER;
	}
}

static void
fx_finish(void *self)
{
	(void)self; /* a record cut off at the end stays in leftover_bytes_ */
}

/* The sniffer (fuchsia_trace_tokenizer.cc, FuchsiaImporter::Sniff): the
 * magic number record. */
bool
tm_sniff_fuchsia(struct tm_sniff_in *in)
{
	static const uint8_t magic[8] = {0x10, 0x00, 0x04, 0x46, 0x78, 0x54, 0x16, 0x00};
	return in->n >= 8 && memcmp(in->d, magic, 8) == 0;
}

static enum tm_status
scan(struct tm_stream *st, const void *mem, size_t n, size_t block, struct tm_scan *sc,
     const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	struct fx fx;
	memset(&fx, 0, sizeof fx);
	fx.sc = sc;
	fx.ctl = ctl;
	fx.status = TM_OK;
	fx.need = 8;
	fx.state = FX_HEADER;
	tm_buf_init(&fx.buf);
	register_provider(&fx, 0); /* the constructor's RegisterProvider(0, "") */
	tm_scan_note_clock(sc, TM_CLOCK_BOOTTIME);
	struct tm_text_scanner ts = {&fx, fx_feed, fx_finish, &fx.status, &fx.total};
	enum tm_status rc = st ? tm_scan_text(st, sc, ctl, err, &ts)
			       : tm_scan_text_mem(mem, n, block, sc, ctl, err, &ts);
	tm_buf_fini(&fx.buf);
	for (size_t i = 0; i < fx.n_strs; i++)
		free(fx.strs[i]);
	free(fx.strs);
	free(fx.str_len);
	free(fx.prov);
	tm_strmap_fini(&fx.interned);
	tm_u64map_fini(&fx.prov_ix);
	tm_u64map_fini(&fx.str_ix);
	return rc;
}

enum tm_status
tm_scan_fuchsia(struct tm_stream *st, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
		struct tm_error *err)
{
	return scan(st, NULL, 0, 0, sc, ctl, err);
}

enum tm_status
tm_scan_fuchsia_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
		    const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	return scan(NULL, p, n, block, sc, ctl, err);
}

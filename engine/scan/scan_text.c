/* SPDX-License-Identifier: MIT */
/*
 * The block loop of the text scanners (scan_json.c, scan_systrace.c): one
 * driver over a stream or a member held in memory, with cancellation,
 * progress and the scanner's own limit errors; and the members read whole
 * at their end, as trace_processor reads them (gecko, ART, primes).
 */
#include <string.h>

#include "scan.h"

static enum tm_status
stream_next(void *ctx, const uint8_t **p, size_t *n, struct tm_error *err)
{
	return tm_stream_next(ctx, p, n, err);
}

struct mem_blocks {
	const uint8_t *p;
	size_t n, block, off;
};

static enum tm_status
mem_next(void *ctx, const uint8_t **p, size_t *n, struct tm_error *err)
{
	struct mem_blocks *m = ctx;
	(void)err;
	size_t k = m->n - m->off < m->block ? m->n - m->off : m->block;
	*p = k ? m->p + m->off : m->p; /* (no NULL + 0 for an empty buffer) */
	*n = k;
	m->off += k;
	return TM_OK;
}

static enum tm_status
drive(tm_block_fn next, void *ctx, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
      struct tm_error *err, const struct tm_text_scanner *ts)
{
	enum tm_status rc = TM_OK;
	for (;;) {
		const uint8_t *p;
		size_t n;
		if (ctl && ctl->cancel && __atomic_load_n(ctl->cancel, __ATOMIC_RELAXED)) {
			rc = tm_error_set(err, TM_ERR_CANCELLED, "cancelled");
			break;
		}
		rc = next(ctx, &p, &n, err);
		if (rc != TM_OK) {
			sc->failed = true;
			break;
		}
		if (!n) {
			ts->finish(ts->self);
			break;
		}
		ts->feed(ts->self, (const char *)p, n);
		if (ctl && ctl->progress)
			atomic_store(ctl->progress, *ts->total);
		if (*ts->status != TM_OK)
			break;
	}
	if (rc == TM_OK && *ts->status != TM_OK) {
		rc = *ts->status;
		sc->failed = true;
	}
	if (rc != TM_OK && err)
		*tm_scan_err(sc) = *err;
	return rc;
}

enum tm_status
tm_scan_text(struct tm_stream *st, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
	     struct tm_error *err, const struct tm_text_scanner *ts)
{
	return drive(stream_next, st, sc, ctl, err, ts);
}

enum tm_status
tm_scan_text_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
		 const struct tm_scan_ctl *ctl, struct tm_error *err,
		 const struct tm_text_scanner *ts)
{
	struct mem_blocks m = { p, n, block ? block : (n ? n : 1), 0 };
	return drive(mem_next, &m, sc, ctl, err, ts);
}

/* ---- a member held whole (tm_scan_whole) ---- */

#define WHOLE_MAX (1024u * 1024u * 1024u)

struct whole {
	struct tm_buf buf;
	uint64_t total;
	uint64_t past;   /* not predicted past this many bytes (0: no cap) */
	bool over;       /* past it: no longer held */
	struct tm_scan *sc;
	enum tm_status status;
	struct tm_error *err;
	const char *what;
	void (*done)(void *self, const uint8_t *d, size_t n);
	void *self;
};

static void
whole_feed(void *self, const char *p, size_t n)
{
	struct whole *w = self;
	w->total += n;
	if (w->status != TM_OK || w->over)
		return;
	if (w->past && w->total > w->past) {
		w->over = true;
		tm_buf_fini(&w->buf);
		tm_buf_init(&w->buf);
		return;
	}
	if (w->buf.len + n > WHOLE_MAX) {
		w->status = tm_error_set(w->err, TM_ERR_LIMIT, "%s larger than 1 GiB", w->what);
		return;
	}
	tm_buf_add(&w->buf, p, n);
}

static void
whole_finish(void *self)
{
	struct whole *w = self;
	if (w->status != TM_OK)
		return;
	if (w->over) {
		w->sc->unpredicted = true;
		tm_scan_warn(w->sc, "a %s of %ju bytes: tracemerge parses it whole, at many times "
			     "its size in memory, and does not predict one over %ju MiB",
			     w->what, (uintmax_t)w->total, (uintmax_t)(w->past >> 20));
		return;
	}
	w->done(w->self, (const uint8_t *)(w->buf.data ? w->buf.data : ""), w->buf.len);
}

enum tm_status
tm_scan_whole(struct tm_stream *st, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
	      struct tm_error *err, const char *what, uint64_t unpredicted_past,
	      void (*done)(void *self, const uint8_t *d, size_t n), void *self)
{
	struct whole w = {.status = TM_OK, .err = err, .what = what, .done = done, .self = self,
			  .past = unpredicted_past, .sc = sc};
	tm_buf_init(&w.buf);
	struct tm_text_scanner ts = {&w, whole_feed, whole_finish, &w.status, &w.total};
	enum tm_status rc = tm_scan_text(st, sc, ctl, err, &ts);
	tm_buf_fini(&w.buf);
	return rc;
}

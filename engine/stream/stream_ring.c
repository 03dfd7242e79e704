/* SPDX-License-Identifier: MIT */
/*
 * The ring a gzip/ctrace/zstd stream's producer (V) and its reader share
 * (stream_priv.h; the model is described in stream_inflate.c): room and
 * hand-overs, the failure found and kept, the queue of compressed blocks
 * for the re-decompression, the speculative ring.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream_priv.h"

const uint8_t *
tm_st_find_trace_marker(const uint8_t *p, size_t n)
{
	static const char m[] = "TRACE:\n";
	for (size_t i = 0; i + 7 <= n; i++)
		if (p[i] == 'T' && memcmp(p + i, m, 7) == 0)
			return p + i + 7;
	return NULL;
}

/* Producer, mu held: wait until V may run ahead or the stream is being
 * closed (stop); the bytes it may still produce. */
size_t
tm_st_ring_room(struct tm_stream *st)
{
	while (st->r_head - st->r_free == st->r_cap && !st->stop) {
		st->p_wait = true;
		pthread_cond_wait(&st->cv_p, &st->mu);
		st->p_wait = false;
	}
	return st->r_cap - (size_t)(st->r_head - st->r_free);
}

/* Ring mode, mu held: the bytes V holds in the ring (produced, not given
 * back by the reader).  The reader and V wake each other only once half
 * the ring is free (next_gzip) or filled (v_wrote), or V is a step from
 * full, not at every block: on two cores each wake-up was a context
 * switch.  No deadlock: V waits for room only
 * when the ring holds more than s_cap - r_step, having woken the reader
 * (it signals then); the reader waits for bytes only while it has less
 * than a block, i.e. less than s_cap - r_step (ring_init): V is not
 * waiting then, and V wakes it before it could wait. */
size_t
tm_st_spec_fill(const struct tm_stream *st)
{
	uint64_t base = st->r_free > st->spec_from ? st->r_free : st->spec_from;
	return (size_t)(st->r_head - base);
}

/* Producer in ring mode, mu held: wait until the ring has room for o
 * bytes (always whole steps: V asks the decompressor for the same amounts
 * as without speculation, so its failure is met at the same byte); where to
 * write them (the scratch once the reader is done or the stream closes). */
uint8_t *
tm_st_spec_room(struct tm_stream *st, size_t o)
{
	for (;;) {
		if (st->stop || st->s_drain)
			return st->vs;
		uint64_t base = st->r_free > st->spec_from ? st->r_free : st->spec_from;
		if (st->s_cap - (size_t)(st->r_head - base) >= o)
			return st->hb + (size_t)((st->r_head - st->spec_from) % st->s_cap);
		st->p_wait = true;
		pthread_cond_wait(&st->cv_p, &st->mu);
		st->p_wait = false;
	}
}

/* Hand over everything produced (eof: the clean end of the stream). */
void
tm_st_gz_release(struct tm_stream *st, bool eof)
{
	pthread_mutex_lock(&st->mu);
	st->inflated = st->r_head;
	st->r_ready = st->r_head;
	if (eof)
		st->eof = true;
	if (st->prov_need && !st->h_first && st->r_ready >= st->prov_need) {
		st->h_first = st->r_ready;
		st->h_first_eof = eof;
	}
	if (st->c_wait)
		pthread_cond_signal(&st->cv_c);
	pthread_mutex_unlock(&st->mu);
}

/* V failed with ISA-L inflating (zinflate.h): where zlib alone fails, as
 * trace_processor's GzipDecompressor does - the file inflated again from
 * the stream's first byte (the TRACE: marker cut as V cut it) up to the
 * failure: its output and compressed offsets and its text.  The decoders
 * agree on every byte before a failure but stop a few bytes apart in bad
 * or cut data.  Kept as ISA-L found it when zlib ends elsewhere than in
 * the chunk being collected (past a hand-over, or cleanly). */
static void
gz_zlib_failure(struct tm_stream *st, uint64_t handed, uint64_t *at, uint64_t *in_at,
		const char **tp)
{
	enum { IB = 1u << 20, OB = 1u << 18 };
	z_stream z;
	tm_inflate_init(&z, 15 + 32);
	uint8_t *ib = xmalloc(IB), *ob = xmalloc(OB);
	uint64_t pos = 0, out = 0, mend = 0;
	bool first = true, boundary = true, ok = false;
	const char *why = NULL;
	for (;;) {
		if (!z.avail_in) {
			size_t want = st->z_len - pos < IB ? (size_t)(st->z_len - pos) : IB;
			if (first && st->first_len && want > st->first_len)
				want = st->first_len; /* V's first raw chunk */
			ssize_t n = want ? pread(st->zfd, ib, want, (off_t)(st->z_base + pos)) : 0;
			if (n < 0)
				break;
			const uint8_t *in = ib;
			size_t len = (size_t)n;
			pos += len;
			if (first && len) {
				first = false;
				const uint8_t *m = st->strip ? tm_st_find_trace_marker(in, len) : NULL;
				if (m) {
					len -= (size_t)(m - in);
					in = m;
				}
			}
			if (!n) {
				if (!boundary) {
					why = "Compressed stream incomplete, trace is likely corrupt "
					      "(ERR:tp-corrupt)";
					ok = true;
				}
				break; /* else: a clean end */
			}
			z.next_in = (Bytef *)(uintptr_t)in;
			z.avail_in = (uInt)len;
		}
		z.next_out = ob;
		z.avail_out = OB;
		boundary = false;
		int r = inflate(&z, Z_NO_FLUSH);
		out += OB - z.avail_out;
		if (r == Z_STREAM_END) {
			boundary = true;
			mend = out;
			inflateReset(&z);
		} else if (r != Z_OK && r != Z_BUF_ERROR) {
			why = "Failed to decompress trace chunk (ERR:tp-corrupt)";
			ok = true;
			break;
		}
	}
	uint64_t consumed = pos - z.avail_in;
	inflateEnd(&z);
	free(ib);
	free(ob);
	if (!ok || mend > handed || out < handed || out - handed >= TP_BLOB)
		return;
	*at = out;
	*in_at = consumed;
	*tp = why;
}

/* Decompression failed: drop the chunk being collected; the failure is
 * reported once the handed-over bytes are delivered. */
void
tm_st_gz_fail(struct tm_stream *st, const char *tp, const char *why)
{
	struct tm_error e;
	tm_error_clear(&e);
	pthread_mutex_lock(&st->mu);
	uint64_t handed = st->r_ready;
	pthread_mutex_unlock(&st->mu);
	uint64_t at = st->r_head, in_at = st->rd.off - st->z.avail_in;
	if (st->zx && !why)
		gz_zlib_failure(st, handed, &at, &in_at, &tp);
	size_t dropped = (size_t)(at - handed);
	enum tm_status fs = tm_error_set(
		&e, TM_ERR_FORMAT,
		"%s: byte 0x%" PRIx64 " (compressed byte 0x%" PRIx64 "): %s%s%s%s; the "
		"%zu bytes decompressed since the last hand-over (byte 0x%" PRIx64
		") never reach the parser",
		st->label, at, in_at, tp, why ? " (libarchive: " : "",
		why ? why : "", why ? ")" : "", dropped, handed);
	snprintf(e.tp, sizeof e.tp, "%s", tp);
	pthread_mutex_lock(&st->mu);
	st->inflated = at; /* (as zlib alone has it: gz_zlib_failure) */
	st->eof = true;
	st->failed = true;
	st->fs = fs;
	free(st->ferr);
	st->ferr = tm_st_err_copy(&e);
	if (st->c_wait)
		pthread_cond_signal(&st->cv_c);
	pthread_mutex_unlock(&st->mu);
}

/* V: queue a block read from the parent for P (parents that are streams). */
void
tm_st_q_push(struct tm_stream *st, const uint8_t *p, size_t n)
{
	if (st->spec_on) {
		pthread_mutex_lock(&st->mu);
		bool done = st->p_done;
		pthread_mutex_unlock(&st->mu);
		if (done)
			return; /* the reader reads the ring now */
	}
	struct qblk *b = xmalloc(sizeof *b + n);
	b->next = NULL;
	b->n = n;
	memcpy(b->d, p, n);
	pthread_mutex_lock(&st->mu);
	if (st->q_tail)
		st->q_tail->next = b;
	else
		st->q_head = b;
	st->q_tail = b;
	pthread_mutex_unlock(&st->mu);
}

/* K_QUEUE: the next block V queued (n = 0 when none: P never needs one V
 * has not read). */
enum tm_status
tm_st_next_queue(struct tm_stream *q, const uint8_t **p, size_t *n, struct tm_error *err)
{
	(void)err; /* (the queue has no error of its own) */
	struct tm_stream *o = q->qown;
	free(q->qcur);
	pthread_mutex_lock(&o->mu);
	struct qblk *b = o->q_head;
	if (b) {
		o->q_head = b->next;
		if (!o->q_head)
			o->q_tail = NULL;
	}
	pthread_mutex_unlock(&o->mu);
	q->qcur = b;
	*p = b ? b->d : NULL;
	*n = b ? b->n : 0;
	q->pos += *n;
	return TM_OK;
}

/* V: the parent's next block once rd is used up (queued for P). */
enum tm_status
tm_st_v_fill(struct tm_stream *st, struct tm_error *err)
{
	if (st->rd.n)
		return TM_OK;
	enum tm_status s = tm_stream_next(st->rd.st, &st->rd.p, &st->rd.n, err);
	if (s == TM_OK && st->rd.n && st->q_on)
		tm_st_q_push(st, st->rd.p, st->rd.n);
	return s;
}

/* The start of the chunk V collects (the last hand-over: V enters gz_fill
 * there, or where a provisional prime paused it). */
uint64_t
tm_st_ring_chunk_start(struct tm_stream *st)
{
	if (!st->vs)
		st->vs = xmalloc(st->r_step);
	return st->r_ready;
}


/* How much V decodes next in the chunk that began at chunk0: hands the
 * chunk over when it is full, or when `clean_end` (the input ended at a
 * boundary); otherwise sets *out (bounded by the chunk, how far V may run
 * ahead and r_step).  RING_STOPPED: the stream is being closed (err set). */
enum ring_step
tm_st_ring_window(struct tm_stream *st, uint64_t chunk0, bool clean_end, size_t *out, uint8_t **dst,
	    struct tm_error *err)
{
	const struct tm_stream_end *k = st->known;
	if (k && st->r_head >= k->handed) {
		/* the known end: fail as the refuted read did (the bytes
		 * since the hand-over at k->handed are not decompressed again) */
		pthread_mutex_lock(&st->mu);
		st->r_ready = k->handed;
		st->inflated = k->inflated;
		st->eof = st->failed = true;
		st->fs = k->fs;
		free(st->ferr);
		st->ferr = tm_st_err_copy(&k->err);
		if (st->c_wait)
			pthread_cond_signal(&st->cv_c);
		pthread_mutex_unlock(&st->mu);
		return RING_HANDED;
	}
	size_t room = (size_t)(chunk0 + TP_BLOB - st->r_head);
	if (room == 0) {
		tm_st_gz_release(st, false); /* a full chunk */
		return RING_HANDED;
	}
	if (clean_end) {
		tm_st_gz_release(st, true); /* the clean end: hand over the rest */
		return RING_HANDED;
	}
	if (st->pause_at && st->r_head >= st->pause_at)
		return RING_HANDED; /* (a pause: nothing handed over) */
	size_t o = room;
	if (o > st->r_step)
		o = st->r_step;
	if (k && o > k->handed - st->r_head)
		o = (size_t)(k->handed - st->r_head);
	if (st->pause_at && o > st->pause_at - st->r_head)
		o = (size_t)(st->pause_at - st->r_head); /* (pauses there exactly) */
	pthread_mutex_lock(&st->mu);
	st->inflated = st->r_head;
	if (st->spec_on) {
		*dst = tm_st_spec_room(st, o);
	} else {
		size_t free_b = tm_st_ring_room(st);
		if (o > free_b)
			o = free_b;
		*dst = st->vs;
	}
	bool stop = st->stop;
	pthread_mutex_unlock(&st->mu);
	if (stop) {
		tm_error_set(err, TM_ERR_CANCELLED, "%s: stream closed", st->label);
		return RING_STOPPED;
	}
	*out = o;
	return RING_WRITE;
}

/* V wrote got bytes at dst (from ring_window) and counted them in r_head:
 * in ring mode, move what ran past the ring's end to its start and let the
 * reader have them. */
void
tm_st_v_wrote(struct tm_stream *st, const uint8_t *dst, size_t got)
{
	if (!st->spec_on || dst == st->vs || !got)
		return;
	size_t i = (size_t)(dst - st->hb);
	if (i + got > st->s_cap)
		memcpy(st->hb, st->hb + st->s_cap, i + got - st->s_cap);
	pthread_mutex_lock(&st->mu);
	st->s_head = st->r_head;
	if (st->c_wait) {
		size_t fill = tm_st_spec_fill(st);
		if (fill >= st->s_cap / 2 || st->s_cap - fill < st->r_step)
			pthread_cond_signal(&st->cv_c);
	}
	pthread_mutex_unlock(&st->mu);
}


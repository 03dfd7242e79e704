/* SPDX-License-Identifier: MIT */
/*
 * Inflating streams (stream_priv.h): gzip and ctrace under
 * trace_processor's hand-over model (described below), zstd under the same
 * model (its decompression in stream_zstd.c), and ZIP deflate members.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream_priv.h"

static enum tm_status next_inflate(struct tm_stream *st, const uint8_t **p, size_t *n,
				   struct tm_error *err);
static enum tm_status next_gzip(struct tm_stream *st, const uint8_t **p, size_t *n,
				struct tm_error *err);

/* P's compressed bytes (see "gzip / ctrace" below): a window of the same
 * file when the parent is one (read again from the page cache), else the
 * queue of the blocks V reads. */
static void
redo_init(struct tm_stream *st)
{
	struct tm_stream *par = st->rd.st;
	int fd = par->kind == K_FILE && par->fd >= 0 ? fcntl(par->fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (fd >= 0) {
		struct tm_stream *f = tm_st_new(K_FILE, par->label);
		f->work = par->work;
		f->fd = fd;
		f->base = par->base + par->pos;
		f->size = par->size - par->pos;
		st->psrc = f;
	} else {
		struct tm_stream *q = tm_st_new(K_QUEUE, st->label);
		q->qown = st;
		q->next = tm_st_next_queue;
		st->q_on = true;
		st->psrc = q;
	}
	st->prd.st = st->psrc;
	st->pfirst = true;
	st->vio = (struct la_io){.st = st, .rd = &st->rd, .enq = st->q_on};
	st->pio = (struct la_io){.st = st, .rd = &st->prd};
}

/* The hand-over state of a gzip/ctrace/zstd stream (see below). */
static void
ring_init(struct tm_stream *st)
{
	struct tm_gz_tune t = tm_gz_tune;
	st->r_block = t.block ? t.block : BLOCK;
	st->r_step = t.step ? t.step : STEP;
	st->r_cap = TP_BLOB + PRIME_MAX + (t.slack ? t.slack - 1 : RING_SLACK);
	st->sync = t.no_thread;
	st->no_spec = t.no_spec;
	st->s_cap = t.spec_ring ? t.spec_ring : SPEC_RING;
	/* (room for a step while the reader waits for a whole block) */
	if (st->s_cap < st->r_step + st->r_block)
		st->s_cap = st->r_step + st->r_block;
	if (pthread_mutex_init(&st->mu, NULL) || pthread_cond_init(&st->cv_p, NULL) ||
	    pthread_cond_init(&st->cv_c, NULL))
		abort();
	st->mu_init = true;
	redo_init(st);
}

struct tm_stream *
tm_stream_inflate(struct tm_stream *parent, const char *label, bool raw, bool strip_trace,
		  const char *zip_name, uint64_t zip_csize)
{
	struct tm_stream *st = tm_st_new(K_INFLATE, label);
	st->rd.st = parent;
	st->work = parent->work;
	st->next = raw ? next_inflate : next_gzip;
	st->raw = raw;
	st->strip = strip_trace;
	st->first = true;
	st->boundary = true;
	st->zip_name = zip_name ? xstrdup(zip_name) : NULL;
	st->zip_csize = zip_csize;
	st->zres = -1;
	/* gzip: ISA-L where a failure can be found again by zlib (the parent
	 * is a file, read again from the page cache), else zlib alone */
	if (!raw && parent->kind == K_FILE && parent->fd >= 0)
		st->zfd = fcntl(parent->fd, F_DUPFD_CLOEXEC, 0);
	if (st->zfd >= 0) {
		tm_zx_init(&st->z, &st->zx, 15 + 32);
		st->z_base = parent->base + parent->pos;
		st->z_len = parent->size - parent->pos;
		if (!st->zx) { /* zlib alone */
			close(st->zfd);
			st->zfd = -1;
		}
	} else {
		tm_inflate_init(&st->z, raw ? -15 : 15 + 32);
	}
	st->z_init = true;
	if (!raw)
		ring_init(st);
	return st;
}

/* zstd goes through libarchive's filter layer (one explicit filter, raw
 * format) under the hand-over model of gzip streams: one decompression
 * pass serves the listing (tm_stream_gz_prime) and the scan, on a producer
 * thread of its own. */
struct tm_stream *
tm_stream_unzstd(struct tm_stream *parent, const char *label)
{
	struct tm_stream *st = tm_st_new(K_INFLATE, label);
	st->rd.st = parent;
	st->work = parent->work;
	st->next = next_gzip;
	st->zst = true;
	st->first = true;
	st->boundary = true;
	ring_init(st);
	return st;
}

static enum tm_status
next_inflate(struct tm_stream *st, const uint8_t **p, size_t *n, struct tm_error *err)
{
	enum tm_status s;
	if (!st->buf)
		st->buf = tm_st_buf_take();
	*n = 0;
	if (st->eof && st->zres == 3) { /* bad data after the block delivered */
		st->zres = 2;
		return tm_error_set(err, TM_ERR_FORMAT,
				    "%s: Zip decompression error (2) on %s (c=%" PRIu64
				    ", u=?) (ERR:tp-corrupt)",
				    st->label, st->zip_name ? st->zip_name : "", st->zip_csize);
	}
	if (st->eof)
		return TM_OK;
	st->z.next_out = st->buf;
	st->z.avail_out = BLOCK;
	for (;;) {
		if (st->z.avail_in == 0) {
			/* Hand the consumed input back to the reader. */
			if ((s = tm_rd_fill(&st->rd, err)) != TM_OK)
				return s;
			if (!st->rd.n) {
				size_t got = BLOCK - st->z.avail_out;
				if (got) /* deliver what we have first */
					break;
				if (st->boundary && !st->raw) {
					st->eof = true;
					return TM_OK;
				}
				st->eof = true;
				if (st->raw) {
					st->zres = 1;
					return tm_error_set(
						err, TM_ERR_FORMAT,
						"%s: Zip decompression error (3) on %s (c=%" PRIu64
						", u=?) (ERR:tp-corrupt): deflate data ends early",
						st->label, st->zip_name ? st->zip_name : "",
						st->zip_csize);
				}
				return tm_st_fail(st, err, TM_ERR_FORMAT, st->pos,
					    "Compressed stream incomplete, trace is likely corrupt "
					    "(ERR:tp-corrupt)");
			}
			const uint8_t *in = st->rd.p;
			size_t len = st->rd.n;
			if (st->first) {
				st->first = false;
				/* gzip only: cut everything up to and including
				 * "TRACE:\n" in the first raw chunk (decompressing_trace_reader.cc). */
				const uint8_t *m = st->strip ? tm_st_find_trace_marker(in, len) : NULL;
				if (m) {
					len -= (size_t)(m - in);
					in = m;
				}
			}
			st->z.next_in = (Bytef *)(uintptr_t)in;
			st->z.avail_in = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
			st->rd.off += (uint64_t)(in - st->rd.p) + st->z.avail_in;
			st->rd.n -= (size_t)(in - st->rd.p) + st->z.avail_in;
			st->rd.p = in + st->z.avail_in;
		}
		if (st->z.avail_out == 0)
			break;
		st->boundary = false;
		int r = tm_zx_inflate(&st->z, st->zx);
		if (r == Z_STREAM_END) {
			st->boundary = true;
			if (st->raw) {
				st->eof = true;
				st->zres = 0;
				break;
			}
			tm_zx_reset(&st->z, st->zx);
			/* trace_processor hands a member's output to the parser at
			 * its end, before it decodes what follows (which may fail). */
			if (st->z.avail_out < BLOCK)
				break;
			continue;
		}
		if (r == Z_BUF_ERROR)
			continue; /* needs more input (or output: checked above) */
		if (r != Z_OK) {
			st->eof = true;
			if (st->raw && st->z.avail_out < BLOCK) {
				/* deliver what was inflated before the bad data,
				 * then the error (the next call) */
				st->zres = 3;
				break;
			}
			if (st->raw) {
				st->zres = 2;
				return tm_error_set(err, TM_ERR_FORMAT,
						    "%s: Zip decompression error (2) on %s (c=%" PRIu64
						    ", u=?) (ERR:tp-corrupt)",
						    st->label, st->zip_name ? st->zip_name : "",
						    st->zip_csize);
			}
			return tm_st_fail(st, err, TM_ERR_FORMAT, st->pos,
				    "Failed to decompress trace chunk (ERR:tp-corrupt)");
		}
	}
	*p = st->buf;
	*n = BLOCK - st->z.avail_out;
	st->pos += *n;
	if (st->zcrc)
		st->crc = tm_crc32(st->crc, st->buf, *n);
	if (*n)
		__atomic_fetch_add(&tm_inflated_bytes, (uint64_t)*n, __ATOMIC_RELAXED);
	if (st->boundary)
		st->member_end = st->pos;
	return tm_work_charge(st->work, *n, st->label, err);
}

void
tm_stream_zip_fast(struct tm_stream *st)
{
	if (st->kind != K_INFLATE || !st->raw || st->pos || st->z.total_in)
		return;
	tm_zx_end(&st->z, &st->zx);
	tm_zx_init_fast(&st->z, &st->zx, -15, true);
}

bool
tm_stream_zip_was_fast(const struct tm_stream *st)
{
	return st->zx != NULL;
}

void
tm_stream_zip_crc(struct tm_stream *st)
{
	st->zcrc = true;
	st->crc = 0;
}

int
tm_stream_zip_result(const struct tm_stream *st, uint32_t *crc, uint64_t *consumed)
{
	*crc = st->crc;
	*consumed = st->rd.off - st->z.avail_in;
	return st->zres == 3 ? 2 : st->zres;
}

uint64_t
tm_stream_member_end(const struct tm_stream *st)
{
	if (!st->mu_init)
		return st->member_end;
	struct tm_stream *m = (struct tm_stream *)(uintptr_t)st; /* the lock only */
	pthread_mutex_lock(&m->mu);
	uint64_t v = st->member_end;
	pthread_mutex_unlock(&m->mu);
	return v;
}

/* ---- gzip / ctrace: trace_processor's hand-over model ---- */

/*
 * trace_processor hands over 32 MiB chunks, member ends and the clean end;
 * a failure drops the chunk being collected.  Holding that chunk until it
 * is known good cost 32 MiB per stream; instead every byte is decompressed
 * twice, and nothing is held:
 *
 * Producer (V, gz_fill / zs_fill): decompresses into a scratch buffer only
 * to verify, one hand-over chunk per call; a hand-over (chunk full, gzip
 * member end, clean end of input) moves r_ready up to r_head.  On a
 * decompression failure r_ready stays where it is: the chunk being
 * collected is never delivered.  V runs on a thread of its own, started by
 * the first tm_stream_next, never by tm_stream_gz_prime: the listing primes
 * synchronously, and nothing runs ahead of what archive.c reads back from
 * the stream (failure, inflated bytes) until the scan reads on.  V is the
 * only one that reads the parent stream and touches z, rd, first, boundary,
 * vio and r_head; it stays at most r_cap bytes ahead of what the consumer
 * gave back (the 32 MiB chunk, the 1 MiB tm_stream_gz_prime may add, 3 MiB
 * of read-ahead), waiting on cv_p, and looks at stop once per step (at
 * most r_step bytes of output).
 *
 * Consumer (next_gzip): decompresses [pos, r_ready) again (P: pz or pio,
 * from psrc, the same compressed bytes: the file read again, or the queue
 * of blocks V read from a parent that is a stream) into ob and delivers it
 * in blocks of at most r_block bytes; a block stays valid until the next
 * call, which gives it back (r_free = pos).  P only ever decompresses what
 * V verified, so it cannot meet the failure.  The consumer waits on cv_c
 * while nothing is ready; once the ready bytes are delivered it reports
 * how V ended: cleanly, with trace_processor's failure (ferr), or with our
 * own error from the parent (perr, in the order V met it).
 *
 * The cost: a second decompression on the consumer's core (beside the
 * scan, while V runs on the other); the queue holds the compressed bytes
 * of at most r_cap bytes of output when the parent is not a file.
 *
 * No deadlock: when both would wait, r_free == pos == r_ready, so V is
 * ahead by the chunk being collected only (at most TP_BLOB < r_cap bytes).
 * Closing sets stop on the stream and its parents (V may be waiting for its
 * parent's consumer side) and joins.  With sync (test hook, or
 * pthread_create failing) the consumer runs gz_fill itself, as the stream
 * did before it had a thread.
 *
 * Speculation (tm_stream_gz_speculate, for a scan that can start over):
 * the second decompression sat on the scan's critical path.  When V's
 * thread starts (spec_begin, at the reader's first tm_stream_next), V
 * decompresses from spec_from (its position: the primed chunk's end, or 0)
 * into the ring hb and publishes s_head after each step; the reader
 * decompresses [pos, spec_from) again as above (P), then reads the ring up
 * to s_head (next_spec), verified or not.  V asks for whole steps only
 * (spec_room waits for room for one), so it meets a failure at the same
 * byte, with the same words, as without speculation.  Once V has failed,
 * the reader gets bytes up to r_ready and the failure, as before, if it
 * is not past r_ready; if it is, it has read bytes trace_processor never
 * parses: refuted (tm_stream_refuted), and the scan starts over without
 * speculation.  A reader that stops early asks tm_stream_refuted too,
 * which lets V verify on (s_drain: into vs) up to the chunk holding what
 * was read.  No deadlock: V waits for room only while the reader has not
 * given back what it read, and the reader waits only when it has read
 * everything V wrote (s_head == pos: the ring is empty).
 */

/* Producer: inflate until the chunk being collected is handed over
 * (TP_BLOB bytes, the end of a gzip member, or the clean end of the input),
 * the stream ends, or decompression fails.  Appends after the ready bytes
 * (r_head == r_ready on entry).  Returns our own errors only: the parent's,
 * or TM_ERR_CANCELLED once the stream is being closed. */

static enum tm_status
gz_fill(struct tm_stream *st, struct tm_error *err)
{
	enum tm_status s;
	if (st->zst)
		return tm_st_zs_fill(st, err);
	uint64_t chunk0 = tm_st_ring_chunk_start(st);
	bool in_end = false;
	for (;;) {
		if (st->z.avail_in == 0 && !in_end) {
			if ((s = tm_st_v_fill(st, err)) != TM_OK)
				return s; /* ours (an I/O error): the stream stops here */
			in_end = !st->rd.n;
		}
		if (st->z.avail_in == 0 && !in_end) {
			const uint8_t *in = st->rd.p;
			size_t len = st->rd.n;
			if (st->first) {
				st->first = false;
				st->first_len = len;
				/* cut everything up to and including "TRACE:\n" in the
				 * first raw chunk (decompressing_trace_reader.cc). */
				const uint8_t *m = st->strip ? tm_st_find_trace_marker(in, len) : NULL;
				if (m) {
					len -= (size_t)(m - in);
					in = m;
				}
			}
			st->z.next_in = (Bytef *)(uintptr_t)in;
			st->z.avail_in = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
			st->rd.off += (uint64_t)(in - st->rd.p) + st->z.avail_in;
			st->rd.n -= (size_t)(in - st->rd.p) + st->z.avail_in;
			st->rd.p = in + st->z.avail_in;
		}
		size_t out;
		uint8_t *dst;
		enum ring_step w = tm_st_ring_window(st, chunk0, in_end && st->boundary, &out, &dst, err);
		if (w != RING_WRITE)
			return w == RING_HANDED ? TM_OK : TM_ERR_CANCELLED;
		st->z.next_out = dst;
		st->z.avail_out = (uInt)out;
		st->boundary = false;
		int r = tm_zx_inflate(&st->z, st->zx);
		size_t got = out - st->z.avail_out;
		st->r_head += got;
		tm_st_v_wrote(st, dst, got);
		if (got)
			__atomic_fetch_add(&tm_inflated_bytes, (uint64_t)got, __ATOMIC_RELAXED);
		if ((s = tm_work_charge(st->work, got, st->label, err)) != TM_OK)
			return s; /* ours: cancelled, or the listing's cap */
		if (r == Z_STREAM_END) {
			st->boundary = true;
			tm_zx_reset(&st->z, st->zx);
			pthread_mutex_lock(&st->mu);
			st->member_end = st->r_head;
			pthread_mutex_unlock(&st->mu);
			/* trace_processor hands a member's output to the parser at
			 * its end, before it decodes what follows (which may fail). */
			if (st->r_head > chunk0) {
				tm_st_gz_release(st, false);
				return TM_OK;
			}
			continue;
		}
		if (r == Z_BUF_ERROR && in_end) {
			/* no progress and no more input */
			tm_st_gz_fail(st,
				"Compressed stream incomplete, trace is likely corrupt (ERR:tp-corrupt)",
				NULL);
			return TM_OK;
		}
		if (r == Z_OK || r == Z_BUF_ERROR)
			continue; /* more input or more room (checked above) */
		tm_st_gz_fail(st, "Failed to decompress trace chunk (ERR:tp-corrupt)", NULL);
		return TM_OK;
	}
}

/* The producer thread: chunk after chunk until the stream ends, fails, or
 * is closed. */
static void *
gz_thread(void *arg)
{
	struct tm_stream *st = arg;
	struct tm_error e;
	for (;;) {
		tm_error_clear(&e);
		enum tm_status s = gz_fill(st, &e);
		pthread_mutex_lock(&st->mu);
		/* (a failure set its own count: gz_fail, or at a known end as
		 * much as the refuted read decompressed) */
		if (!st->failed)
			st->inflated = st->r_head;
		bool end = st->eof || st->failed || st->stop || s != TM_OK;
		if (s != TM_OK && !st->stop) {
			st->ps = s;
			free(st->perr);
			st->perr = tm_st_err_copy(&e);
		}
		if (end && st->c_wait)
			pthread_cond_signal(&st->cv_c);
		pthread_mutex_unlock(&st->mu);
		if (end)
			return NULL;
	}
}


/* P went where V did not: a bug of ours, never trace_processor's verdict. */
static enum tm_status
redo_diverged(struct tm_stream *st, struct tm_error *err)
{
	return tm_error_set(err, TM_ERR_INVALID,
			    "%s: byte 0x%" PRIx64 ": decompressing again gave other bytes than "
			    "the first time",
			    st->label, st->ob_end);
}

/* P: decompress the next want handed-over bytes to ob at ob_end (room
 * checked by the caller). */
static enum tm_status
p_fill(struct tm_stream *st, size_t want, struct tm_error *err)
{
	enum tm_status s;
	uint8_t *dst = st->ob + (st->ob_end - st->ob_org);
	if (st->zst) {
		struct la_io *io = &st->pio;
		if (!io->open && want) {
			int r0 = tm_st_la_start(io);
			if (r0 == 1)
				io->end = true;
			else if (r0 != 0)
				goto fail;
		}
		while (want) {
			ssize_t r = io->end ? 0 : tm_st_zs_read(io, dst, want);
			if (r <= 0)
				goto fail;
			dst += r;
			want -= (size_t)r;
			st->ob_end += (uint64_t)r;
		}
		return TM_OK;
	fail:
		if (io->ps != TM_OK) { /* ours: reading the file again failed */
			*err = *io->perr;
			return io->ps;
		}
		return redo_diverged(st, err);
	}
	if (!st->pz_init) {
		tm_zx_init(&st->pz, &st->pzx, 15 + 32);
		/* V checked every member's CRC-32 and size: P skips the check
		 * value (kept across inflateReset) */
		tm_zx_nocheck(&st->pz, st->pzx);
		st->pz_init = true;
	}
	z_stream *z = &st->pz;
	z->next_out = dst;
	z->avail_out = (uInt)want;
	while (z->avail_out) {
		if (z->avail_in == 0) {
			if ((s = tm_rd_fill(&st->prd, err)) != TM_OK)
				return s;
			if (!st->prd.n)
				return redo_diverged(st, err);
			const uint8_t *in = st->prd.p;
			size_t len = st->prd.n;
			if (st->pfirst) { /* as V did (gz_fill) */
				st->pfirst = false;
				const uint8_t *m = st->strip ? tm_st_find_trace_marker(in, len) : NULL;
				if (m) {
					len -= (size_t)(m - in);
					in = m;
				}
			}
			z->next_in = (Bytef *)(uintptr_t)in;
			z->avail_in = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
			st->prd.n -= (size_t)(in - st->prd.p) + z->avail_in;
			st->prd.p = in + z->avail_in;
		}
		int r = tm_zx_inflate(z, st->pzx);
		if (r == Z_STREAM_END)
			tm_zx_reset(z, st->pzx);
		else if (r != Z_OK && r != Z_BUF_ERROR)
			return redo_diverged(st, err);
	}
	st->ob_end += want;
	return TM_OK;
}

/* P: have at least min(want, ready - pos) bytes from pos in ob.  ob holds
 * a block or two (a cache-sized piece at a time), 1 MiB only while the
 * primed bytes are in it. */
static enum tm_status
p_have(struct tm_stream *st, uint64_t ready, size_t want, struct tm_error *err)
{
	size_t base = 2 * (st->r_block > BLOCK ? st->r_block : BLOCK);
	if (st->ob_end == st->pos) {
		st->ob_org = st->ob_end = st->pos; /* empty: from ob[0] again */
		if (st->ob_cap > base) { /* the primed bytes are delivered */
			free(st->ob);
			st->ob = NULL;
		}
	}
	if (!st->ob) {
		st->ob_cap = base;
		st->ob = xmalloc(st->ob_cap);
	}
	uint64_t have = st->ob_end - st->pos, need = ready - st->pos;
	if (need > want)
		need = want;
	if (have >= need)
		return TM_OK;
	if (need > st->ob_cap) { /* tm_stream_gz_prime: up to PRIME_MAX */
		uint8_t *nb = xmalloc((size_t)need);
		memcpy(nb, st->ob + (st->pos - st->ob_org), (size_t)have);
		free(st->ob);
		st->ob = nb;
		st->ob_cap = (size_t)need;
		st->ob_org = st->pos;
	}
	if (st->pos + need > st->ob_org + st->ob_cap) {
		memmove(st->ob, st->ob + (st->pos - st->ob_org), (size_t)have);
		st->ob_org = st->pos;
	}
	return p_fill(st, (size_t)(need - have), err);
}

/* The reader has every byte the stream delivers (mu held; released
 * here): how it ended, trace_processor's failure (none when quiet), our
 * own error (the parent's), or cleanly.  (V never sets eof with an error
 * of ours: the order of the last two does not matter.) */
static enum tm_status
end_result(struct tm_stream *st, struct tm_error *err)
{
	enum tm_status s = TM_OK;
	if (st->failed) {
		if (!st->quiet_fail) {
			*err = *st->ferr;
			s = st->fs;
		}
	} else if (st->ps != TM_OK) {
		*err = *st->perr;
		s = st->ps;
	}
	pthread_mutex_unlock(&st->mu);
	return s;
}

/* Start V's thread in ring mode (mu held; nothing runs ahead yet): the
 * bytes from spec_from on come from the ring. */
static void
spec_begin(struct tm_stream *st)
{
	/* (a provisional prime left [0, r_head) in ob, not handed over) */
	if (st->sync || st->thr_on || st->eof || st->failed || st->ps != TM_OK ||
	    (st->r_ready != st->r_head && !st->prov))
		return;
	st->spec_on = true;
	st->spec_from = st->s_head = st->r_head;
	if (!st->vs)
		st->vs = xmalloc(st->r_step);
	/* (a step may run past the end; huge pages: V writes all of it, a
	 * page fault per 2 MiB instead of per 4 KiB) */
	tm_big_resize((void **)&st->hb, &st->hb_cap, st->s_cap + st->r_step, 1, TM_STAGE_MIN);
	if ((st->wk = tm_st_wk_start(gz_thread, st)) != NULL) {
		st->thr_on = true;
	} else {
		st->spec_on = false;
		st->sync = true; /* inflate here, as without threads */
	}
}

/* The reader in ring mode (mu held; released here): deliver what V has
 * decompressed, verified or not, up to a failure's last hand-over once V
 * has failed; a reader already past that hand-over is refuted. */
static enum tm_status
next_spec(struct tm_stream *st, const uint8_t **p, size_t *n, struct tm_error *err)
{
	if (!st->p_done) { /* P is done: the queue is not needed any more */
		st->p_done = true;
		while (st->q_head) {
			struct qblk *b = st->q_head;
			st->q_head = b->next;
			free(b);
		}
		st->q_tail = NULL;
	}
	uint64_t lim;
	for (;;) {
		if (st->stop || st->ps == TM_ERR_CANCELLED) {
			if (st->stop)
				tm_error_set(err, TM_ERR_CANCELLED, "%s: stream closed", st->label);
			else
				*err = *st->perr;
			pthread_mutex_unlock(&st->mu);
			return TM_ERR_CANCELLED;
		}
		bool ended = st->failed || st->ps != TM_OK;
		lim = ended ? st->r_ready : st->s_head;
		/* blocks end where the verified reader's do (multiples of
		 * r_block): a scan that stops early has read as far */
		uint64_t edge = st->pos - st->pos % st->r_block + st->r_block;
		if (st->pos < lim && (lim >= edge || ended || st->eof))
			break;
		if (st->pos < lim) {
			st->c_wait = true;
			pthread_cond_wait(&st->cv_c, &st->mu);
			st->c_wait = false;
			continue;
		}
		if (st->pos > lim) {
			st->refuted = true;
			pthread_mutex_unlock(&st->mu);
			return tm_error_set(err, TM_ERR_INVALID,
					    "%s: byte 0x%" PRIx64 ": read past byte 0x%" PRIx64
					    ", where the decompression's last hand-over was; "
					    "to be read again",
					    st->label, st->pos, lim);
		}
		if (st->failed || st->ps != TM_OK || st->eof)
			return end_result(st, err);
		st->c_wait = true;
		pthread_cond_wait(&st->cv_c, &st->mu);
		st->c_wait = false;
	}
	pthread_mutex_unlock(&st->mu);
	if (st->ob) { /* P's buffer: not needed any more */
		free(st->ob);
		st->ob = NULL;
		st->ob_cap = 0;
	}
	size_t i = (size_t)((st->pos - st->spec_from) % st->s_cap);
	uint64_t k = lim - st->pos;
	if (k > st->r_block - st->pos % st->r_block)
		k = st->r_block - st->pos % st->r_block;
	if (k > st->s_cap - i)
		k = st->s_cap - i;
	*p = st->hb + i;
	*n = (size_t)k;
	st->pos += k;
	return TM_OK;
}

static enum tm_status
next_gzip(struct tm_stream *st, const uint8_t **p, size_t *n, struct tm_error *err)
{
	enum tm_status s;
	*n = 0;
	pthread_mutex_lock(&st->mu);
	st->r_free = st->pos; /* the block handed out last is given back */
	if (st->p_wait && (!st->spec_on || tm_st_spec_fill(st) <= st->s_cap / 2))
		pthread_cond_signal(&st->cv_p);
	if (st->spec && !st->spec_on)
		spec_begin(st);
	if (st->spec_on && st->pos >= st->spec_from)
		return next_spec(st, p, n, err);
	/* (speculating, the bytes before spec_from were decompressed by V
	 * without a failure: they need no hand-over) */
	for (;;) {
		if (st->stop) {
			pthread_mutex_unlock(&st->mu);
			return tm_error_set(err, TM_ERR_CANCELLED, "%s: stream closed", st->label);
		}
		if (st->r_ready != st->pos || st->spec_on)
			break;
		if (st->failed || st->ps != TM_OK || st->eof)
			return end_result(st, err);
		if (!st->thr_on && !st->sync) {
			if ((st->wk = tm_st_wk_start(gz_thread, st)) != NULL)
				st->thr_on = true;
			else
				st->sync = true; /* inflate here, as without threads */
		}
		if (st->sync) {
			pthread_mutex_unlock(&st->mu);
			if ((s = gz_fill(st, err)) != TM_OK)
				return s;
			pthread_mutex_lock(&st->mu);
			continue;
		}
		st->c_wait = true;
		pthread_cond_wait(&st->cv_c, &st->mu);
		st->c_wait = false;
	}
	uint64_t ready = st->spec_on ? st->spec_from : st->r_ready; /* (the ring has the rest) */
	pthread_mutex_unlock(&st->mu);
	/* decompress again in pieces of a block or more (cache-sized) */
	if ((s = p_have(st, ready, st->r_block > BLOCK ? st->r_block : BLOCK, err)) != TM_OK)
		return s;
	/* (ob may hold more than is handed over: a provisional prime's) */
	uint64_t k = st->ob_end - st->pos;
	if (k > ready - st->pos)
		k = ready - st->pos;
	if (k > st->r_block)
		k = st->r_block;
	*p = st->ob + (st->pos - st->ob_org);
	*n = (size_t)k;
	st->pos += k;
	return TM_OK;
}

/* The consumer, mu held, for more handed-over bytes: waits for V's thread
 * once, or (none started) runs V here (gz_fill, mu released meanwhile).
 * gz_fill's status (TM_OK after a wait). */
static enum tm_status
wait_or_fill(struct tm_stream *st, struct tm_error *err)
{
	if (st->thr_on) {
		st->c_wait = true;
		pthread_cond_wait(&st->cv_c, &st->mu);
		st->c_wait = false;
		return TM_OK;
	}
	pthread_mutex_unlock(&st->mu);
	enum tm_status s = gz_fill(st, err);
	pthread_mutex_lock(&st->mu);
	return s;
}

/* tm_stream_gz_prime, or with pause (tm_stream_gz_peek) provisional
 * once V has decompressed want bytes without a hand-over (*prov). */
static enum tm_status
prime(struct tm_stream *st, size_t want, bool pause, const uint8_t **p, size_t *n, bool *done,
      bool *prov, struct tm_error *err)
{
	enum tm_status s = TM_OK;
	if (want > PRIME_MAX)
		want = PRIME_MAX;
	pthread_mutex_lock(&st->mu);
	st->r_free = st->pos;
	/* (only a stream nothing has been read from, and V not started) */
	pause = pause && st->pos == 0 && !st->thr_on && !st->sync && !st->no_spec && !st->known;
	if (pause) /* (V's thread not started; cleared below) */
		st->pause_at = want;
	bool paused = false;
	/* (the usual case: nothing runs ahead of the listing, V fills here) */
	while (st->r_ready - st->pos < want && !st->eof && st->ps == TM_OK && !st->stop &&
	       !paused) {
		if ((s = wait_or_fill(st, err)) != TM_OK)
			break;
		paused = pause && st->r_head >= st->pause_at && !st->eof;
	}
	if (pause)
		st->pause_at = 0;
	paused = paused && s == TM_OK && st->ps == TM_OK && !st->stop &&
		 st->r_ready - st->pos < want;
	if (s == TM_OK && st->ps != TM_OK) {
		*err = *st->perr;
		s = st->ps;
	}
	/* provisional: the sniff reads what V decompressed (P again: it
	 * cannot fail where V did not), all of it kept in ob for the reader */
	uint64_t ready = paused ? st->r_head : st->r_ready;
	if (paused) {
		st->prov = true;
		st->prov_need = want;
	}
	*done = st->eof;
	*prov = paused;
	pthread_mutex_unlock(&st->mu);
	if (s == TM_OK && ready > st->pos)
		s = p_have(st, ready, paused ? (size_t)(ready - st->pos) : want, err);
	uint64_t lim = ready - st->pos < want ? ready - st->pos : want;
	*p = st->ob ? st->ob + (st->pos - st->ob_org) : NULL;
	*n = st->ob ? (size_t)(st->ob_end - st->pos < lim ? st->ob_end - st->pos : lim) : 0;
	return s;
}

enum tm_status
tm_stream_gz_prime(struct tm_stream *st, size_t want, const uint8_t **p, size_t *n, bool *done,
		   struct tm_error *err)
{
	bool prov;
	return prime(st, want, false, p, n, done, &prov, err);
}

enum tm_status
tm_stream_gz_peek(struct tm_stream *st, size_t want, const uint8_t **p, size_t *n, bool *done,
		  bool *prov, struct tm_error *err)
{
	return prime(st, want, true, p, n, done, prov, err);
}

bool
tm_stream_gz_verified(struct tm_stream *st, uint64_t *handed, bool *clean)
{
	struct tm_error e;
	pthread_mutex_lock(&st->mu);
	st->s_drain = true; /* the reader is done: V verifies into its scratch */
	if (st->p_wait)
		pthread_cond_signal(&st->cv_p);
	while (st->r_ready < st->prov_need && !st->eof && st->ps == TM_OK && !st->stop) {
		tm_error_clear(&e);
		if (wait_or_fill(st, &e) != TM_OK)
			break;
	}
	bool ok = st->h_first != 0;
	*handed = st->h_first;
	*clean = st->h_first_eof;
	pthread_mutex_unlock(&st->mu);
	return ok;
}

uint64_t
tm_stream_gz_ready(const struct tm_stream *st)
{
	struct tm_stream *m = (struct tm_stream *)(uintptr_t)st; /* the lock only */
	pthread_mutex_lock(&m->mu);
	uint64_t v = st->r_ready;
	pthread_mutex_unlock(&m->mu);
	return v;
}

bool
tm_stream_gz_failure(const struct tm_stream *st, struct tm_error *err)
{
	if (st->kind != K_INFLATE || !st->mu_init)
		return false;
	struct tm_stream *m = (struct tm_stream *)(uintptr_t)st; /* the lock only */
	pthread_mutex_lock(&m->mu);
	bool f = st->failed;
	if (f)
		*err = *st->ferr;
	pthread_mutex_unlock(&m->mu);
	return f;
}

void
tm_stream_gz_speculate(struct tm_stream *st)
{
	if (st->kind == K_INFLATE && st->mu_init && !st->no_spec && st->pos == 0)
		st->spec = true; /* the consumer's */
}

void
tm_stream_gz_known(struct tm_stream *st, const struct tm_stream_end *end)
{
	if (st->kind != K_INFLATE || !st->mu_init || st->pos != 0 || !end->known)
		return;
	st->spec = true;
	free(st->known);
	st->known = xmalloc(sizeof *st->known);
	*st->known = *end;
}

/* The refuted stream's end (mu held). */
static void
refuted_end(struct tm_stream *st, struct tm_stream_end *end)
{
	if (!end)
		return;
	memset(end, 0, sizeof *end);
	end->known = st->failed && st->ps == TM_OK && st->ferr;
	if (!end->known)
		return;
	end->handed = st->r_ready;
	end->inflated = st->inflated;
	end->fs = st->fs;
	end->err = *st->ferr;
}

bool
tm_stream_refuted(struct tm_stream *st, struct tm_stream_end *end)
{
	if (st->kind != K_INFLATE || !st->spec_on)
		return false;
	if (st->refuted) {
		__atomic_fetch_add(&tm_spec_refuted, 1, __ATOMIC_RELAXED);
		pthread_mutex_lock(&st->mu);
		refuted_end(st, end);
		pthread_mutex_unlock(&st->mu);
		return true;
	}
	pthread_mutex_lock(&st->mu);
	/* V verifies on to the chunk holding what was delivered, the ring no
	 * longer read */
	st->s_drain = true;
	if (st->p_wait)
		pthread_cond_signal(&st->cv_p);
	uint64_t need = st->pos > st->prov_need ? st->pos : st->prov_need;
	while (st->r_ready < need && !st->failed && !st->eof && st->ps == TM_OK && !st->stop) {
		st->c_wait = true;
		pthread_cond_wait(&st->cv_c, &st->mu);
		st->c_wait = false;
	}
	st->refuted = st->pos > st->r_ready;
	if (st->refuted)
		refuted_end(st, end);
	pthread_mutex_unlock(&st->mu);
	if (st->refuted)
		__atomic_fetch_add(&tm_spec_refuted, 1, __ATOMIC_RELAXED);
	return st->refuted;
}

void
tm_stream_gz_quiet(struct tm_stream *st)
{
	st->quiet_fail = true; /* the consumer's */
}

uint64_t
tm_stream_inflated(const struct tm_stream *st)
{
	if (!st->mu_init)
		return 0;
	struct tm_stream *m = (struct tm_stream *)(uintptr_t)st; /* the lock only */
	pthread_mutex_lock(&m->mu);
	uint64_t v = st->inflated;
	pthread_mutex_unlock(&m->mu);
	return v;
}

bool
tm_stream_is_gzip(const struct tm_stream *st)
{
	return st->kind == K_INFLATE && !st->raw;
}


/* SPDX-License-Identifier: MIT */
/*
 * Member byte streams: a file window (pread), a window over a parent stream
 * (a TAR member or stored ZIP member inside a compressed container), an
 * inflating stream over a parent (gzip/ctrace children, deflated ZIP
 * members), and a zstd stream over a parent.  Everything is read block by
 * block; no stream ever holds a whole member.  archive.c describes each
 * member with a struct loc and builds the chain of streams from it.
 *
 * zstd goes through libarchive's filter layer: archive_read_append_filter
 * (ZSTD, one explicit filter so libarchive does not bid again on its own
 * output and unwrap a .zst.zst in one go), the raw and empty formats,
 * archive_read_open with a callback that hands over the parent stream's
 * blocks, and archive_read_data into the same hand-over ring as gzip (one
 * pass for listing and scan, a producer thread beside the scan).  Its errors are mapped to trace_processor's texts ("Truncated zstd
 * input" -> "Compressed stream incomplete ...", others -> "Failed to
 * decompress trace chunk"); libarchive's words and our offsets stay in the
 * message.  A libarchive built without libzstd (support_filter_zstd !=
 * ARCHIVE_OK: it would fork "zstd -d") gives a clear error instead.
 *
 * gzip, ctrace and ZIP deflate stay on zlib directly, by measurement and for
 * fidelity: libarchive's gzip filter was ~10 % faster here only because it
 * skips what trace_processor's zlib checks (the CRC-32 and size trailer,
 * garbage after the last member, a truncated next member header: all
 * errors in trace_processor, all silently accepted by libarchive), and it
 * has no zlib (RFC 1950) mode for ctrace.
 *
 * gzip/ctrace streams hand out exactly what trace_processor's
 * DecompressingTraceReader hands its inner parser: output is collected in a
 * chunk of up to 32 MiB and released only when the chunk is full, a gzip
 * member ends or the input ends cleanly.  When decompression fails, the
 * bytes of the chunk being collected are dropped (trace_processor never
 * parses them) and, after the released bytes, tm_stream_next fails with
 * err->tp set to trace_processor's text.  So one inflate pass serves both
 * the listing (tm_stream_gz_prime: the first chunks, for the sniff) and the
 * scan, which reads on from the same stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <archive.h>

#include "input.h"
#include "archive_priv.h"

#define BLOCK (256u * 1024u)
/* trace_processor's hand-over chunk (decompressing_trace_reader.cc). */
#define TP_BLOB (32u << 20)
/* Handed-over bytes tm_stream_gz_prime may keep ahead of the reader. */
#define PRIME_MAX (1u << 20)
/* gzip/ctrace ring: the hold-back chunk, the primed bytes and this much
 * read-ahead for the producer thread. */
#define RING_SLACK (3u << 20)
/* Output per inflate call of the producer (how often it looks at stop and
 * at the ring's free space). */
#define STEP (1u << 20)

uint64_t tm_inflated_bytes; /* test hook: all decompressed output produced */
struct tm_gz_tune tm_gz_tune; /* test hook: zeros = the defaults */

enum kind { K_FILE, K_RANGE, K_INFLATE, K_AHEAD };

struct tm_stream {
	enum kind kind;
	char *label; /* "<archive>: <member>" for error messages */
	struct tm_work *work; /* the input's listing budget and cancel flag */
	uint64_t pos;
	uint64_t size; /* UINT64_MAX when unknown */
	uint8_t *buf;
	/* K_FILE */
	int fd;
	uint64_t base;
	/* K_RANGE, K_INFLATE */
	struct tm_rd rd;
	struct tm_rd *shared; /* K_RANGE borrowing its container's reader */
	uint8_t *pre;         /* K_RANGE: its first pre_n bytes, already read */
	size_t pre_n;
	/* K_INFLATE */
	z_stream z;
	bool z_init, raw, strip, first, boundary, eof;
	uint64_t member_end; /* output offset of the last gzip member's end */
	/* gzip/ctrace (!raw): the hand-over ring (see "gzip / ctrace" below).
	 * Offsets are absolute output offsets; byte x lives at
	 * hb[(x - r_org) % r_cap].  [r_free, pos) is the block the consumer
	 * borrowed, [pos, r_ready) handed over and not yet delivered,
	 * [r_ready, r_head) the chunk being collected. */
	uint8_t *hb;
	size_t r_cap, r_block, r_step;
	uint64_t r_org, r_free, r_ready;
	uint64_t r_head;     /* producer's: output produced (== inflated) */
	bool quiet_fail;     /* consumer's: report the failure as the end */
	bool sync;           /* no producer thread: the consumer inflates */
	/* shared, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv_p, cv_c; /* producer waits for room, consumer for data */
	bool mu_init, thr_on, p_wait, c_wait, stop;
	pthread_t thr;
	uint64_t inflated;   /* output produced so far */
	bool failed;         /* decompression failed; ferr after the ready bytes */
	enum tm_status fs;
	struct tm_error *ferr; /* (allocated when needed: a stream per member) */
	enum tm_status ps;   /* producer thread: our own error (the parent's) */
	struct tm_error *perr;
	bool zcrc;          /* raw ZIP: keep the CRC-32 of the output */
	uint32_t crc;
	int zres;           /* raw ZIP: -1 running, 0 deflate end, 1 input ended, 2 bad
			     * data (3: reported after the block being delivered) */
	char *zip_name;     /* raw ZIP: TP's error names the entry */
	uint64_t zip_csize; /* raw ZIP: compressed size */
	/* zstd (K_INFLATE, zst): libarchive's filter layer over rd (raw
	 * format), producing into the same hand-over ring as gzip */
	bool zst;
	struct archive *la;
	bool la_open, la_end;
	enum tm_status la_ps;   /* the parent's error, seen by the read callback */
	struct tm_error *la_perr;
};

void
tm_stream_set_work(struct tm_stream *st, struct tm_work *w)
{
	st->work = w;
}

enum tm_status
tm_work_charge(struct tm_work *w, uint64_t n, const char *label, struct tm_error *err)
{
	if (!w)
		return TM_OK;
	volatile bool *c = __atomic_load_n(&w->cancel, __ATOMIC_ACQUIRE);
	if (c && *c)
		return tm_error_set(err, TM_ERR_CANCELLED, "%s: opening cancelled", label);
	uint64_t budget = __atomic_load_n(&w->budget, __ATOMIC_RELAXED);
	uint64_t b = __atomic_add_fetch(&w->bytes, n, __ATOMIC_RELAXED);
	if (n && b > budget)
		return tm_error_set(err, TM_ERR_LIMIT,
				    "%s: listing stopped after decompressing %" PRIu64
				    " bytes: more than the listing's cap of %s (nested archives "
				    "that expand like a decompression bomb?)",
				    label, b - n, w->cap);
	return TM_OK;
}

static enum tm_status
fail(struct tm_stream *st, struct tm_error *err, enum tm_status code, uint64_t off,
     const char *what)
{
	return tm_error_set(err, code, "%s: byte 0x%" PRIx64 ": %s", st->label, off, what);
}

/* A stream's error kept for later (the rare case: off the struct). */
static struct tm_error *
err_copy(const struct tm_error *e)
{
	struct tm_error *c = xmalloc(sizeof *c);
	*c = *e;
	return c;
}

static struct tm_stream *
new_stream(enum kind k, const char *label)
{
	struct tm_stream *st = xcalloc(1, sizeof *st);
	st->kind = k;
	st->label = xstrdup(label);
	st->fd = -1;
	st->size = UINT64_MAX;
	return st;
}

enum tm_status
tm_stream_file(const char *path, const char *label, uint64_t off, uint64_t len,
	       struct tm_stream **out, struct tm_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tm_error_sys(err, errno, "%s", path);
	struct tm_stream *st = new_stream(K_FILE, label);
	st->fd = fd;
	st->base = off;
	st->size = len;
	*out = st;
	return TM_OK;
}

struct tm_stream *
tm_stream_range(struct tm_stream *parent, const char *label, uint64_t len)
{
	/* A window of a file window is just a smaller file window. */
	if (parent->kind == K_FILE) {
		struct tm_stream *st = new_stream(K_FILE, label);
		st->work = parent->work;
		st->fd = parent->fd;
		parent->fd = -1;
		st->base = parent->base + parent->pos;
		/* The walkers only register members that lie inside their
		 * container, so the window never runs past the parent's. */
		st->size = len;
		tm_stream_close(parent);
		return st;
	}
	struct tm_stream *st = new_stream(K_RANGE, label);
	st->rd.st = parent;
	st->work = parent->work;
	st->size = len;
	return st;
}

struct tm_stream *
tm_stream_borrow(struct tm_rd *rd, const char *label, uint64_t len)
{
	struct tm_stream *st = new_stream(K_RANGE, label);
	st->shared = rd;
	st->work = rd->st->work;
	st->size = len;
	return st;
}

struct tm_stream *
tm_stream_borrow_after(struct tm_rd *rd, const char *label, const void *head, size_t head_n,
		       uint64_t len)
{
	struct tm_stream *st = tm_stream_borrow(rd, label, len);
	if (head_n > len)
		head_n = (size_t)len;
	st->pre = xmalloc(head_n ? head_n : 1);
	memcpy(st->pre, head, head_n);
	st->pre_n = head_n;
	return st;
}

/* The reader a window reads its parent through. */
static struct tm_rd *
win_rd(struct tm_stream *st)
{
	return st->shared ? st->shared : &st->rd;
}

/* The hand-over ring of a gzip/ctrace/zstd stream (see below). */
static void
ring_init(struct tm_stream *st)
{
	struct tm_gz_tune t = tm_gz_tune;
	st->r_block = t.block ? t.block : BLOCK;
	st->r_step = t.step ? t.step : STEP;
	st->r_cap = TP_BLOB + PRIME_MAX + (t.slack ? t.slack - 1 : RING_SLACK);
	st->sync = t.no_thread;
	if (pthread_mutex_init(&st->mu, NULL) || pthread_cond_init(&st->cv_p, NULL) ||
	    pthread_cond_init(&st->cv_c, NULL))
		abort();
	st->mu_init = true;
}

struct tm_stream *
tm_stream_inflate(struct tm_stream *parent, const char *label, bool raw, bool strip_trace,
		  const char *zip_name, uint64_t zip_csize)
{
	struct tm_stream *st = new_stream(K_INFLATE, label);
	st->rd.st = parent;
	st->work = parent->work;
	st->raw = raw;
	st->strip = strip_trace;
	st->first = true;
	st->boundary = true;
	st->zip_name = zip_name ? xstrdup(zip_name) : NULL;
	st->zip_csize = zip_csize;
	st->zres = -1;
	tm_inflate_init(&st->z, raw ? -15 : 15 + 32);
	st->z_init = true;
	if (!raw)
		ring_init(st);
	return st;
}

bool
tm_zstd_available(void)
{
	/* ARCHIVE_WARN means "no libzstd, would run an external zstd -d":
	 * not what we want (a process per member, its own error texts). */
	struct archive *a = archive_read_new();
	if (!a)
		abort();
	int r = archive_read_support_filter_zstd(a);
	archive_read_free(a);
	return r == ARCHIVE_OK;
}

/* zstd goes through libarchive's filter layer (one explicit filter, raw
 * format) into the hand-over ring that gzip streams use: one decompression
 * pass serves the listing (tm_stream_gz_prime) and the scan, on a producer
 * thread of its own. */
struct tm_stream *
tm_stream_unzstd(struct tm_stream *parent, const char *label)
{
	struct tm_stream *st = new_stream(K_INFLATE, label);
	st->rd.st = parent;
	st->work = parent->work;
	st->zst = true;
	st->first = true;
	st->boundary = true;
	ring_init(st);
	return st;
}

/* Ask every producer thread of st's chain to stop: the one of st and those
 * of its parents, which st's producer may be waiting on.  Only the pointer
 * to the parent is read across threads, and it never changes. */
static void
stop_chain(struct tm_stream *st)
{
	for (struct tm_stream *s = st; s; s = s->rd.st) {
		if (!s->mu_init)
			continue;
		pthread_mutex_lock(&s->mu);
		s->stop = true;
		pthread_cond_broadcast(&s->cv_p);
		pthread_cond_broadcast(&s->cv_c);
		pthread_mutex_unlock(&s->mu);
	}
}

void
tm_stream_close(struct tm_stream *st)
{
	if (!st)
		return;
	if (st->mu_init) {
		stop_chain(st);
		/* thr_on is set only by st's consumer: the caller */
		if (st->thr_on)
			pthread_join(st->thr, NULL);
		pthread_cond_destroy(&st->cv_c);
		pthread_cond_destroy(&st->cv_p);
		pthread_mutex_destroy(&st->mu);
	}
	if (st->fd >= 0)
		close(st->fd);
	if (st->rd.st)
		tm_stream_close(st->rd.st);
	if (st->z_init)
		inflateEnd(&st->z);
	if (st->la)
		archive_read_free(st->la);
	free(st->buf);
	free(st->pre);
	free(st->hb);
	free(st->label);
	free(st->zip_name);
	free(st->ferr);
	free(st->perr);
	free(st->la_perr);
	free(st);
}

uint64_t
tm_stream_offset(const struct tm_stream *st)
{
	return st->pos;
}

uint64_t
tm_stream_size(const struct tm_stream *st)
{
	return st->size;
}

/* ---- byte reader over a stream (leftover of the last block) ---- */

enum tm_status
tm_rd_fill(struct tm_rd *rd, struct tm_error *err)
{
	if (rd->n)
		return TM_OK;
	return tm_stream_next(rd->st, &rd->p, &rd->n, err);
}

enum tm_status
tm_rd_read(struct tm_rd *rd, void *dst, size_t want, size_t *got, struct tm_error *err)
{
	size_t done = 0;
	enum tm_status s;
	while (done < want) {
		if ((s = tm_rd_fill(rd, err)) != TM_OK)
			return s;
		if (!rd->n)
			break;
		size_t k = want - done < rd->n ? want - done : rd->n;
		memcpy((uint8_t *)dst + done, rd->p, k);
		rd->p += k;
		rd->n -= k;
		rd->off += k;
		done += k;
	}
	*got = done;
	return TM_OK;
}

static enum tm_status stream_skip(struct tm_stream *st, uint64_t want, uint64_t *got,
				  struct tm_error *err);

enum tm_status
tm_rd_skip(struct tm_rd *rd, uint64_t want, uint64_t *got, struct tm_error *err)
{
	uint64_t done = 0;
	enum tm_status s;
	while (done < want) {
		if (!rd->n && (rd->st->kind == K_FILE || rd->st->kind == K_RANGE)) {
			/* Windows skip without reading. */
			uint64_t k;
			if ((s = stream_skip(rd->st, want - done, &k, err)) != TM_OK)
				return s;
			rd->off += k;
			done += k;
			break;
		}
		if ((s = tm_rd_fill(rd, err)) != TM_OK)
			return s;
		if (!rd->n)
			break;
		size_t k = want - done < rd->n ? (size_t)(want - done) : rd->n;
		rd->p += k;
		rd->n -= k;
		rd->off += k;
		done += k;
	}
	*got = done;
	return TM_OK;
}

/* Skip within a window (K_FILE or K_RANGE); short at the window's end. */
static enum tm_status
stream_skip(struct tm_stream *st, uint64_t want, uint64_t *got, struct tm_error *err)
{
	uint64_t left = st->size - st->pos;
	uint64_t w = want < left ? want : left, k, h = 0;
	if (st->kind == K_FILE) {
		st->pos += w;
		*got = w;
		return TM_OK;
	}
	if (st->pos < st->pre_n) { /* the head read before the window */
		h = st->pre_n - st->pos < w ? st->pre_n - st->pos : w;
		st->pos += h;
		w -= h;
	}
	enum tm_status s = tm_rd_skip(win_rd(st), w, &k, err);
	if (s != TM_OK)
		return s;
	st->pos += k;
	*got = h + k;
	if (k < w)
		return fail(st, err, TM_ERR_FORMAT, st->pos,
			    "unexpected end of data (member runs past the end of its container)");
	return TM_OK;
}

/* ---- next ---- */

static enum tm_status
next_file(struct tm_stream *st, const uint8_t **p, size_t *n, struct tm_error *err)
{
	uint64_t left = st->size - st->pos;
	if (!left) {
		*n = 0;
		return TM_OK;
	}
	if (!st->buf)
		st->buf = xmalloc(BLOCK);
	size_t want = left < BLOCK ? (size_t)left : BLOCK;
	size_t have = 0;
	while (have < want) {
		ssize_t r = pread(st->fd, st->buf + have, want - have,
				  (off_t)(st->base + st->pos + have));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			tm_error_sys(err, e, "%s: byte 0x%" PRIx64, st->label, st->pos + have);
			return TM_ERR_IO;
		}
		if (r == 0)
			break;
		have += (size_t)r;
	}
	if (have == 0)
		return fail(st, err, TM_ERR_FORMAT, st->pos,
			    "unexpected end of file (member runs past the end of the archive)");
	*p = st->buf;
	*n = have;
	st->pos += have;
	return tm_work_charge(st->work, 0, st->label, err); /* the cancel flag */
}

static enum tm_status
next_range(struct tm_stream *st, const uint8_t **p, size_t *n, struct tm_error *err)
{
	uint64_t left = st->size - st->pos;
	enum tm_status s;
	if (!left) {
		*n = 0;
		return TM_OK;
	}
	if (st->pos < st->pre_n) { /* the head read before the window */
		*p = st->pre + st->pos;
		*n = st->pre_n - (size_t)st->pos;
		st->pos = st->pre_n;
		return TM_OK;
	}
	struct tm_rd *rd = win_rd(st);
	if ((s = tm_rd_fill(rd, err)) != TM_OK)
		return s;
	if (!rd->n)
		return fail(st, err, TM_ERR_FORMAT, st->pos,
			    "unexpected end of data (member runs past the end of its container)");
	size_t k = left < rd->n ? (size_t)left : rd->n;
	*p = rd->p;
	*n = k;
	rd->p += k;
	rd->n -= k;
	rd->off += k;
	st->pos += k;
	return TM_OK;
}

static const uint8_t *
find_trace_marker(const uint8_t *p, size_t n)
{
	static const char m[] = "TRACE:\n";
	for (size_t i = 0; i + 7 <= n; i++)
		if (p[i] == 'T' && memcmp(p + i, m, 7) == 0)
			return p + i + 7;
	return NULL;
}

static enum tm_status
next_inflate(struct tm_stream *st, const uint8_t **p, size_t *n, struct tm_error *err)
{
	enum tm_status s;
	if (!st->buf)
		st->buf = xmalloc(BLOCK);
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
				return fail(st, err, TM_ERR_FORMAT, st->pos,
					    "Compressed stream incomplete, trace is likely corrupt "
					    "(ERR:tp-corrupt)");
			}
			const uint8_t *in = st->rd.p;
			size_t len = st->rd.n;
			if (st->first) {
				st->first = false;
				/* gzip only: cut everything up to and including
				 * "TRACE:\n" in the first raw chunk (decompressing_trace_reader.cc). */
				const uint8_t *m = st->strip ? find_trace_marker(in, len) : NULL;
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
		int r = inflate(&st->z, Z_NO_FLUSH);
		if (r == Z_STREAM_END) {
			st->boundary = true;
			if (st->raw) {
				st->eof = true;
				st->zres = 0;
				break;
			}
			inflateReset(&st->z);
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
			return fail(st, err, TM_ERR_FORMAT, st->pos,
				    "Failed to decompress trace chunk (ERR:tp-corrupt)");
		}
	}
	*p = st->buf;
	*n = BLOCK - st->z.avail_out;
	st->pos += *n;
	if (st->zcrc)
		st->crc = (uint32_t)crc32(st->crc, st->buf, (uInt)*n);
	if (*n)
		__atomic_fetch_add(&tm_inflated_bytes, (uint64_t)*n, __ATOMIC_RELAXED);
	if (st->boundary)
		st->member_end = st->pos;
	return tm_work_charge(st->work, *n, st->label, err);
}

void
tm_stream_zip_crc(struct tm_stream *st)
{
	st->zcrc = true;
	st->crc = (uint32_t)crc32(0, NULL, 0);
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
 * The output goes through one ring of r_cap bytes (the 32 MiB chunk, the
 * 1 MiB tm_stream_gz_prime may add, 3 MiB of read-ahead; pages are touched
 * as used): it is the hold-back buffer and the queue between the producer
 * and the consumer at once, so the read-ahead costs 3 MiB, not a second
 * chunk.
 *
 * Producer (gz_fill): inflates at r_head, one hand-over chunk per call; a
 * hand-over (chunk full, gzip member end, clean end of input) moves r_ready
 * up to r_head.  On a decompression failure r_ready stays where it is: the
 * chunk being collected is never delivered.  The producer runs on a thread
 * of its own, started by the first tm_stream_next, never by
 * tm_stream_gz_prime: the listing primes synchronously, and nothing runs
 * ahead of what archive.c reads back from the stream (failure, inflated
 * bytes) until the scan reads on.  The producer is the only one that reads
 * the parent stream and touches z, rd, first, boundary and r_head; it waits
 * on cv_p while the ring is full, and looks at stop once per step (at most
 * r_step bytes of output).
 *
 * Consumer (next_gzip): delivers [pos, r_ready) in blocks of at most
 * r_block bytes (split where the ring wraps); a block stays valid until the
 * next call, which gives it back (r_free = pos).  It waits on cv_c while
 * nothing is ready; once the ready bytes are delivered it reports how the
 * producer ended: cleanly, with trace_processor's failure (ferr), or with
 * our own error from the parent (perr, in the order the producer met it).
 *
 * No deadlock: when both would wait, r_free == pos == r_ready, so the ring
 * holds only the chunk being collected (at most TP_BLOB < r_cap bytes).
 * Closing sets stop on the stream and its parents (a producer may be
 * waiting for its parent's ring) and joins.  With sync (test hook, or
 * pthread_create failing) the consumer runs gz_fill itself, as the stream
 * did before it had a thread.
 */

/* Producer, mu held: wait until the ring has room or the stream is being
 * closed (stop); the free bytes. */
static size_t
ring_room(struct tm_stream *st)
{
	while (st->r_head - st->r_free == st->r_cap && !st->stop) {
		st->p_wait = true;
		pthread_cond_wait(&st->cv_p, &st->mu);
		st->p_wait = false;
	}
	return st->r_cap - (size_t)(st->r_head - st->r_free);
}

static size_t
ridx(const struct tm_stream *st, uint64_t x)
{
	return (size_t)((x - st->r_org) % st->r_cap);
}

/* Hand over everything produced (eof: the clean end of the stream). */
static void
gz_release(struct tm_stream *st, bool eof)
{
	pthread_mutex_lock(&st->mu);
	st->inflated = st->r_head;
	st->r_ready = st->r_head;
	if (eof)
		st->eof = true;
	if (st->c_wait)
		pthread_cond_signal(&st->cv_c);
	pthread_mutex_unlock(&st->mu);
}

/* Decompression failed: drop the chunk being collected; the failure is
 * reported once the handed-over bytes are delivered. */
static void
gz_fail(struct tm_stream *st, const char *tp, const char *why)
{
	struct tm_error e;
	tm_error_clear(&e);
	pthread_mutex_lock(&st->mu);
	size_t dropped = (size_t)(st->r_head - st->r_ready);
	uint64_t handed = st->r_ready;
	pthread_mutex_unlock(&st->mu);
	enum tm_status fs = tm_error_set(
		&e, TM_ERR_FORMAT,
		"%s: byte 0x%" PRIx64 " (compressed byte 0x%" PRIx64 "): %s%s%s%s; the "
		"%zu bytes decompressed since the last hand-over (byte 0x%" PRIx64
		") never reach the parser",
		st->label, st->r_head, st->rd.off - st->z.avail_in, tp, why ? " (libarchive: " : "",
		why ? why : "", why ? ")" : "", dropped, handed);
	snprintf(e.tp, sizeof e.tp, "%s", tp);
	pthread_mutex_lock(&st->mu);
	st->inflated = st->r_head;
	st->eof = true;
	st->failed = true;
	st->fs = fs;
	free(st->ferr);
	st->ferr = err_copy(&e);
	if (st->c_wait)
		pthread_cond_signal(&st->cv_c);
	pthread_mutex_unlock(&st->mu);
}

/* The producers' ring (gz_fill for zlib, zs_fill for zstd).  A chunk
 * starts at the current head; an empty ring starts again at hb[0] so few
 * pages are touched. */
static uint64_t
ring_chunk_start(struct tm_stream *st)
{
	if (!st->hb)
		st->hb = xmalloc(st->r_cap); /* pages are touched as used */
	pthread_mutex_lock(&st->mu);
	if (st->r_free == st->r_head)
		st->r_org = st->r_head;
	pthread_mutex_unlock(&st->mu);
	return st->r_head;
}

enum ring_step { RING_WRITE, RING_HANDED, RING_STOPPED };

/* Where the decoder writes next in the chunk that began at chunk0: hands
 * the chunk over when it is full, or when `clean_end` (the input ended at
 * a boundary); otherwise sets *i and *out to the writable span (bounded by
 * free ring space, the wrap and r_step).  RING_STOPPED: the stream is
 * being closed (err set). */
static enum ring_step
ring_window(struct tm_stream *st, uint64_t chunk0, bool clean_end, size_t *i, size_t *out,
	    struct tm_error *err)
{
	size_t room = (size_t)(chunk0 + TP_BLOB - st->r_head);
	if (room == 0) {
		gz_release(st, false); /* a full chunk */
		return RING_HANDED;
	}
	if (clean_end) {
		gz_release(st, true); /* the clean end: hand over the rest */
		return RING_HANDED;
	}
	pthread_mutex_lock(&st->mu);
	st->inflated = st->r_head;
	size_t free_b = ring_room(st);
	bool stop = st->stop;
	pthread_mutex_unlock(&st->mu);
	if (stop) {
		tm_error_set(err, TM_ERR_CANCELLED, "%s: stream closed", st->label);
		return RING_STOPPED;
	}
	size_t o = room;
	*i = ridx(st, st->r_head);
	if (o > free_b)
		o = free_b;
	if (o > st->r_cap - *i)
		o = st->r_cap - *i; /* up to where the ring wraps */
	if (o > st->r_step)
		o = st->r_step;
	*out = o;
	return RING_WRITE;
}

/* Producer: inflate until the chunk being collected is handed over
 * (TP_BLOB bytes, the end of a gzip member, or the clean end of the input),
 * the stream ends, or decompression fails.  Appends after the ready bytes
 * (r_head == r_ready on entry).  Returns our own errors only: the parent's,
 * or TM_ERR_CANCELLED once the stream is being closed. */
static enum tm_status zs_fill(struct tm_stream *st, struct tm_error *err);

static enum tm_status
gz_fill(struct tm_stream *st, struct tm_error *err)
{
	enum tm_status s;
	if (st->zst)
		return zs_fill(st, err);
	uint64_t chunk0 = ring_chunk_start(st);
	bool in_end = false;
	for (;;) {
		if (st->z.avail_in == 0 && !in_end) {
			if ((s = tm_rd_fill(&st->rd, err)) != TM_OK)
				return s; /* ours (an I/O error): the stream stops here */
			in_end = !st->rd.n;
		}
		if (st->z.avail_in == 0 && !in_end) {
			const uint8_t *in = st->rd.p;
			size_t len = st->rd.n;
			if (st->first) {
				st->first = false;
				/* cut everything up to and including "TRACE:\n" in the
				 * first raw chunk (decompressing_trace_reader.cc). */
				const uint8_t *m = st->strip ? find_trace_marker(in, len) : NULL;
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
		/* room in the ring (never short without a thread: see above) */
		size_t i, out;
		enum ring_step w = ring_window(st, chunk0, in_end && st->boundary, &i, &out, err);
		if (w != RING_WRITE)
			return w == RING_HANDED ? TM_OK : TM_ERR_CANCELLED;
		st->z.next_out = st->hb + i;
		st->z.avail_out = (uInt)out;
		st->boundary = false;
		int r = inflate(&st->z, Z_NO_FLUSH);
		size_t got = out - st->z.avail_out;
		st->r_head += got;
		if (got)
			__atomic_fetch_add(&tm_inflated_bytes, (uint64_t)got, __ATOMIC_RELAXED);
		if ((s = tm_work_charge(st->work, got, st->label, err)) != TM_OK)
			return s; /* ours: cancelled, or the listing's cap */
		if (r == Z_STREAM_END) {
			st->boundary = true;
			inflateReset(&st->z);
			pthread_mutex_lock(&st->mu);
			st->member_end = st->r_head;
			pthread_mutex_unlock(&st->mu);
			/* trace_processor hands a member's output to the parser at
			 * its end, before it decodes what follows (which may fail). */
			if (st->r_head > chunk0) {
				gz_release(st, false);
				return TM_OK;
			}
			continue;
		}
		if (r == Z_BUF_ERROR && in_end) {
			/* no progress and no more input */
			gz_fail(st,
				"Compressed stream incomplete, trace is likely corrupt (ERR:tp-corrupt)",
				NULL);
			return TM_OK;
		}
		if (r == Z_OK || r == Z_BUF_ERROR)
			continue; /* more input or more room (checked above) */
		gz_fail(st, "Failed to decompress trace chunk (ERR:tp-corrupt)", NULL);
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
		st->inflated = st->r_head;
		bool end = st->eof || st->failed || st->stop || s != TM_OK;
		if (s != TM_OK && !st->stop) {
			st->ps = s;
			free(st->perr);
			st->perr = err_copy(&e);
		}
		if (end && st->c_wait)
			pthread_cond_signal(&st->cv_c);
		pthread_mutex_unlock(&st->mu);
		if (end)
			return NULL;
	}
}

static enum tm_status
next_gzip(struct tm_stream *st, const uint8_t **p, size_t *n, struct tm_error *err)
{
	enum tm_status s;
	*n = 0;
	pthread_mutex_lock(&st->mu);
	st->r_free = st->pos; /* the block handed out last is given back */
	if (st->p_wait)
		pthread_cond_signal(&st->cv_p);
	for (;;) {
		if (st->stop) {
			pthread_mutex_unlock(&st->mu);
			return tm_error_set(err, TM_ERR_CANCELLED, "%s: stream closed", st->label);
		}
		if (st->r_ready != st->pos)
			break;
		if (st->failed) {
			bool quiet = st->quiet_fail;
			if (!quiet)
				*err = *st->ferr;
			s = st->fs;
			pthread_mutex_unlock(&st->mu);
			return quiet ? TM_OK : s;
		}
		if (st->eof) {
			pthread_mutex_unlock(&st->mu);
			return TM_OK;
		}
		if (st->ps != TM_OK) {
			*err = *st->perr;
			s = st->ps;
			pthread_mutex_unlock(&st->mu);
			return s;
		}
		if (!st->thr_on && !st->sync) {
			if (pthread_create(&st->thr, NULL, gz_thread, st) == 0)
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
	size_t i = ridx(st, st->pos);
	uint64_t k = st->r_ready - st->pos;
	if (k > st->r_block)
		k = st->r_block;
	if (k > st->r_cap - i)
		k = st->r_cap - i;
	*p = st->hb + i;
	pthread_mutex_unlock(&st->mu);
	*n = (size_t)k;
	st->pos += k;
	return TM_OK;
}

enum tm_status
tm_stream_gz_prime(struct tm_stream *st, size_t want, const uint8_t **p, size_t *n, bool *done,
		   struct tm_error *err)
{
	enum tm_status s = TM_OK;
	if (want > PRIME_MAX)
		want = PRIME_MAX;
	pthread_mutex_lock(&st->mu);
	st->r_free = st->pos;
	while (st->r_ready - st->pos < want && !st->eof && st->ps == TM_OK && !st->stop) {
		if (st->thr_on) {
			st->c_wait = true;
			pthread_cond_wait(&st->cv_c, &st->mu);
			st->c_wait = false;
			continue;
		}
		/* the usual case: nothing runs ahead of the listing */
		pthread_mutex_unlock(&st->mu);
		s = gz_fill(st, err);
		pthread_mutex_lock(&st->mu);
		if (s != TM_OK)
			break;
	}
	if (s == TM_OK && st->ps != TM_OK) {
		*err = *st->perr;
		s = st->ps;
	}
	size_t i = st->hb ? ridx(st, st->pos) : 0;
	uint64_t k = st->r_ready - st->pos;
	if (k > st->r_cap - i) /* only if read from before: not contiguous */
		k = st->r_cap - i;
	*p = st->hb ? st->hb + i : NULL;
	*n = (size_t)k;
	*done = st->eof;
	pthread_mutex_unlock(&st->mu);
	return s;
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


/* ---- read-ahead: the parent decompresses on a thread of its own ----
 *
 * A producer thread (started by the first tm_stream_next) reads the
 * parent's blocks and copies them into a ring of AHEAD_RING bytes; the
 * consumer borrows contiguous pieces of it.  Bytes, offsets and the
 * parent's error (after every byte before it) are those of the parent read
 * directly; only the work moves to another core.  Closing stops and joins
 * the producer (stop_chain), as for gzip. */
#define AHEAD_RING (2u << 20)

static void *
ahead_thread(void *arg)
{
	struct tm_stream *st = arg;
	for (;;) {
		const uint8_t *p;
		size_t n;
		struct tm_error e;
		tm_error_clear(&e);
		enum tm_status s = tm_stream_next(st->rd.st, &p, &n, &e);
		if (s != TM_OK || n == 0) {
			pthread_mutex_lock(&st->mu);
			if (s != TM_OK) {
				st->ps = s;
				free(st->perr);
				st->perr = err_copy(&e);
			}
			st->eof = true;
			pthread_cond_signal(&st->cv_c);
			pthread_mutex_unlock(&st->mu);
			return NULL;
		}
		while (n) {
			pthread_mutex_lock(&st->mu);
			size_t free_b = ring_room(st);
			bool stop = st->stop;
			pthread_mutex_unlock(&st->mu);
			if (stop)
				return NULL;
			size_t i = (size_t)(st->r_head % st->r_cap), k = n;
			if (k > free_b)
				k = free_b;
			if (k > st->r_cap - i)
				k = st->r_cap - i;
			memcpy(st->hb + i, p, k);
			p += k;
			n -= k;
			pthread_mutex_lock(&st->mu);
			st->r_head += k;
			if (st->c_wait)
				pthread_cond_signal(&st->cv_c);
			pthread_mutex_unlock(&st->mu);
		}
	}
}

struct tm_stream *
tm_stream_ahead(struct tm_stream *parent, const char *label)
{
	struct tm_stream *st = new_stream(K_AHEAD, label);
	st->rd.st = parent;
	st->work = parent->work;
	st->size = parent->size;
	st->r_cap = AHEAD_RING;
	if (pthread_mutex_init(&st->mu, NULL) || pthread_cond_init(&st->cv_p, NULL) ||
	    pthread_cond_init(&st->cv_c, NULL))
		abort();
	st->mu_init = true;
	return st;
}

static enum tm_status
next_ahead(struct tm_stream *st, const uint8_t **p, size_t *n, struct tm_error *err)
{
	*n = 0;
	if (st->sync) { /* no thread: read the parent here */
		enum tm_status s = tm_stream_next(st->rd.st, p, n, err);
		if (s == TM_OK)
			st->pos += *n;
		return s;
	}
	pthread_mutex_lock(&st->mu);
	st->r_free = st->pos; /* the piece handed out last is given back */
	if (st->p_wait)
		pthread_cond_signal(&st->cv_p);
	while (st->r_head == st->pos) {
		if (st->eof) {
			enum tm_status s = st->ps;
			if (s != TM_OK)
				*err = *st->perr;
			pthread_mutex_unlock(&st->mu);
			return s;
		}
		if (!st->thr_on) {
			if (!st->hb)
				st->hb = xmalloc(st->r_cap); /* pages are touched as used */
			if (pthread_create(&st->thr, NULL, ahead_thread, st) == 0) {
				st->thr_on = true;
			} else {
				st->sync = true;
				pthread_mutex_unlock(&st->mu);
				return next_ahead(st, p, n, err);
			}
		}
		st->c_wait = true;
		pthread_cond_wait(&st->cv_c, &st->mu);
		st->c_wait = false;
	}
	size_t i = (size_t)(st->pos % st->r_cap);
	uint64_t k = st->r_head - st->pos;
	if (k > BLOCK)
		k = BLOCK;
	if (k > st->r_cap - i)
		k = st->r_cap - i;
	*p = st->hb + i;
	pthread_mutex_unlock(&st->mu);
	*n = (size_t)k;
	st->pos += k;
	return TM_OK;
}

/* ---- libarchive filter layer (zstd) ---- */

/* libarchive's read callback: hand over the parent's blocks as they are
 * (valid until the next callback, which is all libarchive asks). */
static la_ssize_t
la_read(struct archive *a, void *ud, const void **buf)
{
	struct tm_stream *st = ud;
	const uint8_t *p;
	size_t n;
	if (st->rd.n) {
		p = st->rd.p;
		n = st->rd.n;
	} else {
		struct tm_error e;
		tm_error_clear(&e);
		enum tm_status s = tm_stream_next(st->rd.st, &p, &n, &e);
		if (s != TM_OK) {
			free(st->la_perr);
			st->la_perr = err_copy(&e);
			st->la_ps = s;
			archive_set_error(a, EIO, "read error in the compressed data");
			return ARCHIVE_FATAL;
		}
	}
	st->rd.p = n ? p + n : p; /* p may be NULL at the end (no NULL + 0) */
	st->rd.n = 0;
	st->rd.off += n;
	*buf = p;
	return (la_ssize_t)n;
}

/* Open libarchive's zstd filter over the parent.  0: ready, 1: the stream
 * decompresses to nothing, -1: it failed (la_ps set when the parent's read
 * failed: ours; otherwise libarchive's error string says why), -2: no zstd
 * in this libarchive. */
static int
la_start(struct tm_stream *st)
{
	st->la_open = true;
	st->la = archive_read_new();
	if (!st->la)
		abort();
	/* One explicit filter, no bidding: libarchive would otherwise keep
	 * bidding on its own output and unwrap a .zst.zst or .gz.zst in one
	 * go, where trace_processor sees one level per container. */
	if (!tm_zstd_available() || archive_read_append_filter(st->la, ARCHIVE_FILTER_ZSTD) !=
					    ARCHIVE_OK)
		return -2;
	/* raw: the filter's output is the member; empty: a stream that
	 * decompresses to nothing. */
	if (archive_read_support_format_raw(st->la) != ARCHIVE_OK ||
	    archive_read_support_format_empty(st->la) != ARCHIVE_OK)
		abort();
	/* Format bidding decodes the first block.  When the filter fails
	 * there, the empty format wins the bid and open succeeds; the error
	 * string (cleared again by next_header) is the only trace of it. */
	if (archive_read_open(st->la, st, NULL, la_read, NULL) != ARCHIVE_OK ||
	    archive_error_string(st->la) || st->la_ps != TM_OK)
		return -1;
	struct archive_entry *e;
	int r = archive_read_next_header(st->la, &e);
	if (r == ARCHIVE_EOF)
		return 1;
	return r == ARCHIVE_OK ? 0 : -1;
}

/* Producer of a zstd stream, as gz_fill: decompress until the chunk being
 * collected is handed over (TP_BLOB bytes or the clean end of the input),
 * or decompression fails.  zstd frame ends are not visible through
 * libarchive: only the 32 MiB hand-overs and the end count.  libarchive's
 * failure becomes trace_processor's text (decompressing_trace_reader.cc):
 * "Truncated zstd input" -> "Compressed stream incomplete ...", anything
 * else -> "Failed to decompress trace chunk"; libarchive's words stay in
 * our message. */
static enum tm_status
zs_fill(struct tm_stream *st, struct tm_error *err)
{
	uint64_t chunk0 = ring_chunk_start(st);
	int r0 = 0;
	if (!st->la_open) {
		r0 = la_start(st);
		if (r0 == -2)
			return tm_error_set(err, TM_ERR_UNSUPPORTED,
					    "%s: zstd decompression is unavailable: this libarchive "
					    "was built without it",
					    st->label);
		if (r0 == 1) {
			st->la_end = true; /* decompresses to nothing */
			r0 = 0;
		}
	}
	for (;;) {
		la_ssize_t r = 0;
		if (r0 == 0) {
			size_t i, out;
			enum ring_step w = ring_window(st, chunk0, st->la_end, &i, &out, err);
			if (w != RING_WRITE)
				return w == RING_HANDED ? TM_OK : TM_ERR_CANCELLED;
			r = archive_read_data(st->la, st->hb + i, out);
		}
		if (r0 < 0 || r < 0) {
			if (st->la_ps != TM_OK) { /* ours: the parent's read failed */
				*err = *st->la_perr;
				return st->la_ps;
			}
			const char *m = archive_error_string(st->la);
			if (!m)
				m = "unknown libarchive error";
			/* "Truncated zstd input" */
			gz_fail(st,
				strstr(m, "runcated") ? "Compressed stream incomplete, trace is "
							"likely corrupt (ERR:tp-corrupt)"
						      : "Failed to decompress trace chunk (ERR:tp-corrupt)",
				m);
			return TM_OK;
		}
		if (r == 0) {
			st->la_end = true;
			continue;
		}
		st->r_head += (uint64_t)r;
		__atomic_fetch_add(&tm_inflated_bytes, (uint64_t)r, __ATOMIC_RELAXED);
		enum tm_status s = tm_work_charge(st->work, (uint64_t)r, st->label, err);
		if (s != TM_OK)
			return s; /* ours: cancelled, or the listing's cap */
	}
}

enum tm_status
tm_stream_next(struct tm_stream *st, const uint8_t **p, size_t *n, struct tm_error *err)
{
	switch (st->kind) {
	case K_FILE:
		return next_file(st, p, n, err);
	case K_RANGE:
		return next_range(st, p, n, err);
	case K_INFLATE:
		return st->raw ? next_inflate(st, p, n, err) : next_gzip(st, p, n, err);
	case K_AHEAD:
		return next_ahead(st, p, n, err);
	}
	return TM_ERR_INVALID;
}

enum tm_status
tm_stream_window(struct tm_stream *parent, uint64_t off, uint64_t len, const char *label,
		 struct tm_stream **out, struct tm_error *err)
{
	uint64_t got;
	enum tm_status s;
	if (parent->kind == K_FILE) {
		if (off > parent->size - parent->pos) {
			tm_stream_close(parent);
			return tm_error_set(err, TM_ERR_FORMAT, "%s: window past the end", label);
		}
		parent->pos += off;
		*out = tm_stream_range(parent, label, len);
		return TM_OK;
	}
	struct tm_stream *st = new_stream(K_RANGE, label);
	st->rd.st = parent;
	st->work = parent->work;
	st->size = len;
	if ((s = tm_rd_skip(&st->rd, off, &got, err)) != TM_OK) {
		tm_stream_close(st);
		return s;
	}
	if (got < off) {
		tm_stream_close(st);
		return tm_error_set(err, TM_ERR_FORMAT, "%s: byte 0x%" PRIx64 ": container ends early",
				    label, got);
	}
	*out = st;
	return TM_OK;
}

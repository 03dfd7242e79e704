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
 * blocks, and archive_read_data under the same hand-over model as gzip (one
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
 *
 * This file: the stream and its windows (file, range, borrowed), the read
 * buffer, the byte reader (tm_rd), the producer threads, the dispatch.
 * stream_priv.h is the struct the parts share: stream_ring.c (the ring a
 * producer and its reader share), stream_zstd.c (libarchive's filter
 * layer), stream_inflate.c (gzip, ctrace, ZIP deflate: the hand-over
 * model), stream_ahead.c (read-ahead); each sets the next function of the
 * streams it makes, so calls go one way, up to down.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "stream_priv.h"

/* A file's remainder of at most TAIL bytes past a block is read with it, in
 * one pread (a TAR's 262 KiB member: one read, not 256 KiB and then 6 KB);
 * the read buffer has room for it (BUF_N). */
#define TAIL (16u * 1024u)
#define BUF_N (BLOCK + TAIL)
size_t tm_stream_tail = TAIL;
/* A byte reader (tm_rd) that skipped FAR_SKIP bytes or more of a file past
 * its block (the TAR walk past a member's body) reads FAR_READ bytes next: a
 * header and the next member's sniff, not a block it would mostly skip (the
 * listing read a TAR of 1,000 members of 256 KiB whole, 256 KiB per header).
 * The read after that is a whole block again.  8 KiB: on this 2-core guest
 * a pread costs about as much as copying 8 KiB of page cache, and every
 * fresh page of a block's buffer faults (~15 us each); a walk past members
 * of 16 KiB read 17 MB to list 1,000 of them.  tm_stream_short_read asks
 * for the short read at the start of a walk.  A test sets SIZE_MAX: whole
 * blocks only (the oracle). */
#define FAR_SKIP (8u * 1024u)
#define FAR_READ (4u * 1024u)
size_t tm_stream_far_skip = FAR_SKIP;

uint64_t tm_inflated_bytes; /* test hook: all decompressed output produced */
struct tm_gz_tune tm_gz_tune; /* test hook: zeros = the defaults */
uint64_t tm_spec_refuted; /* test hook: speculative reads refuted */

static pthread_mutex_t wk_mu = PTHREAD_MUTEX_INITIALIZER;
static struct worker *wk_idle;

static void *
wk_main(void *p)
{
	struct worker *w = p;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->fn)
			pthread_cond_wait(&w->cv, &w->mu);
		void *(*fn)(void *) = w->fn;
		void *arg = w->arg;
		pthread_mutex_unlock(&w->mu);
		fn(arg);
		pthread_mutex_lock(&w->mu);
		w->fn = NULL;
		w->done = true;
		pthread_cond_broadcast(&w->cv);
	}
	return NULL;
}

/* Run fn(arg) on an idle thread or a new one; NULL if none can start. */
struct worker *
tm_st_wk_start(void *(*fn)(void *), void *arg)
{
	pthread_mutex_lock(&wk_mu);
	struct worker *w = wk_idle;
	if (w)
		wk_idle = w->next;
	pthread_mutex_unlock(&wk_mu);
	if (!w) {
		w = xcalloc(1, sizeof *w);
		pthread_attr_t at;
		pthread_t t;
		if (pthread_mutex_init(&w->mu, NULL) || pthread_cond_init(&w->cv, NULL) ||
		    pthread_attr_init(&at))
			abort();
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		int r = pthread_create(&t, &at, wk_main, w);
		pthread_attr_destroy(&at);
		if (r) {
			pthread_cond_destroy(&w->cv);
			pthread_mutex_destroy(&w->mu);
			free(w);
			return NULL;
		}
	}
	pthread_mutex_lock(&w->mu);
	w->done = false;
	w->next = NULL;
	w->arg = arg;
	w->fn = fn;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return w;
}

/* Wait until w's job has returned (as pthread_join would); w goes idle. */
static void
wk_join(struct worker *w)
{
	pthread_mutex_lock(&w->mu);
	while (!w->done)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
	pthread_mutex_lock(&wk_mu);
	w->next = wk_idle;
	wk_idle = w;
	pthread_mutex_unlock(&wk_mu);
}

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
	if (c && __atomic_load_n(c, __ATOMIC_RELAXED))
		return tm_error_set(err, TM_ERR_CANCELLED, "%s: opening cancelled", label);
	if (n && w->shown)
		__atomic_fetch_add(w->shown, n, __ATOMIC_RELAXED);
	uint64_t budget = __atomic_load_n(&w->budget, __ATOMIC_RELAXED);
	uint64_t b = __atomic_add_fetch(&w->bytes, n, __ATOMIC_RELAXED);
	/* The error names the cap, not the total: an input's streams charge
	 * from threads of their own (each gzip/zstd stream's producer runs up
	 * to its ring ahead of its reader), so the total when one crosses the
	 * cap, and the size of that charge, depend on how the threads
	 * interleaved (the same nested ZIP stopped at 1094221891 bytes in one
	 * run, 1094484035 in the next).  The cap is what is exact.  label is
	 * the stream whose charge crossed it. */
	if (n && b > budget)
		return tm_error_set(err, TM_ERR_LIMIT,
				    "%s: listing stopped: the decompressed bytes pass the listing's "
				    "cap of %s (nested archives that expand like a decompression "
				    "bomb?)",
				    label, w->cap);
	return TM_OK;
}

enum tm_status
tm_st_fail(struct tm_stream *st, struct tm_error *err, enum tm_status code, uint64_t off,
     const char *what)
{
	return tm_error_set(err, code, "%s: byte 0x%" PRIx64 ": %s", st->label, off, what);
}

/* A stream's error kept for later (the rare case: off the struct). */
struct tm_error *
tm_st_err_copy(const struct tm_error *e)
{
	struct tm_error *c = xmalloc(sizeof *c);
	*c = *e;
	return c;
}

struct tm_stream *
tm_st_new(enum kind k, const char *label)
{
	struct tm_stream *st = xcalloc(1, sizeof *st);
	st->kind = k;
	st->label = xstrdup(label);
	st->fd = -1;
	st->zfd = -1;
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
	struct tm_stream *st = tm_st_new(K_FILE, label);
	st->fd = fd;
	st->base = off;
	st->size = len;
	*out = st;
	return TM_OK;
}

struct tm_stream *
tm_stream_file_fd(int fd, const char *label, uint64_t len)
{
	struct tm_stream *st = tm_st_new(K_FILE, label);
	st->fd = fd;
	st->size = len;
	return st;
}

struct tm_stream *
tm_stream_file_lent(int fd, const char *label, uint64_t len)
{
	struct tm_stream *st = tm_st_new(K_FILE, label);
	st->fd = fd;
	st->fd_lent = true;
	st->size = len;
	return st;
}

struct tm_stream *
tm_stream_range(struct tm_stream *parent, const char *label, uint64_t len)
{
	/* A window of a file window is just a smaller file window. */
	if (parent->kind == K_FILE) {
		struct tm_stream *st = tm_st_new(K_FILE, label);
		st->work = parent->work;
		st->fd = parent->fd;
		st->fd_lent = parent->fd_lent;
		parent->fd = -1;
		st->base = parent->base + parent->pos;
		/* The walkers only register members that lie inside their
		 * container, so the window never runs past the parent's. */
		st->size = len;
		tm_stream_close(parent);
		return st;
	}
	struct tm_stream *st = tm_st_new(K_RANGE, label);
	st->rd.st = parent;
	st->work = parent->work;
	st->size = len;
	return st;
}

struct tm_stream *
tm_stream_borrow(struct tm_rd *rd, const char *label, uint64_t len)
{
	struct tm_stream *st = tm_st_new(K_RANGE, label);
	st->shared = rd;
	st->work = rd->st->work;
	st->size = len;
	return st;
}

struct tm_stream *
tm_stream_borrow_rest(struct tm_rd *rd, const char *label)
{
	struct tm_stream *st = tm_stream_borrow(rd, label, UINT64_MAX);
	st->to_end = true;
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

/* ---- the read buffer ---- */

/* One spare read buffer for the whole process: a stream's close parks its
 * buffer here, the next stream to read takes it.  A plain file's check opens
 * a stream for the sniff and another for the scan, a TAR one per member:
 * without the spare, each malloc(BUF_N) is a fresh mmap whose 64 pages all
 * fault again (~10 us each here).  Parked by tm_slot_give (util.c; else
 * freed), so two streams open at once never share one.  Under ASan a parked buffer is poisoned: a
 * read through a closed stream's last block still trips it. */
static void *spare_buf;
static uint64_t buf_allocs; /* buffers malloc'd (tm_stream_buf_allocs) */

#ifdef TM_ASAN
#include <sanitizer/asan_interface.h>
#define BUF_PARK(b) ASAN_POISON_MEMORY_REGION((b), BUF_N)
#define BUF_TAKE(b) ASAN_UNPOISON_MEMORY_REGION((b), BUF_N)
#else
#define BUF_PARK(b) ((void)(b))
#define BUF_TAKE(b) ((void)(b))
#endif

uint8_t *
tm_st_buf_take(void)
{
	uint8_t *b = tm_slot_take(&spare_buf, 1);
	if (b) {
		BUF_TAKE(b);
		return b;
	}
	if (__atomic_fetch_add(&buf_allocs, 1, __ATOMIC_RELAXED) == 0) {
		/* glibc serves BUF_N from a fresh mmap, and the free of an
		 * mmapped chunk raises its mmap threshold to that chunk's size
		 * (malloc.c, __libc_free).  With the spare kept for good none
		 * would be freed, and every BUF_N after it, the buffer of a
		 * stream open beside another (a member's beside its archive's;
		 * no other block of 128-272 KiB is malloc'd there), would be a
		 * fresh mmap faulted anew; from the heap it lands on pages
		 * already faulted.  Without this: 361 -> 390 trapped faults on
		 * a 256 MiB TAR of 100 members (perf stat -r 5).  So free one
		 * first, as every stream used to. */
		free(xmalloc(BUF_N));
	}
	return xmalloc(BUF_N);
}

static void
buf_give(uint8_t *b)
{
	if (!b)
		return;
	BUF_PARK(b);
	if (!tm_slot_give(&spare_buf, 1, b)) {
		BUF_TAKE(b);
		free(b);
	}
}

uint64_t
tm_stream_buf_allocs(void)
{
	return __atomic_load_n(&buf_allocs, __ATOMIC_RELAXED);
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
			wk_join(st->wk);
		pthread_cond_destroy(&st->cv_c);
		pthread_cond_destroy(&st->cv_p);
		pthread_mutex_destroy(&st->mu);
	}
	if (st->fd >= 0 && !st->fd_lent)
		close(st->fd);
	if (st->rd.st)
		tm_stream_close(st->rd.st);
	if (st->z_init)
		tm_zx_end(&st->z, &st->zx);
	if (st->zfd >= 0)
		close(st->zfd);
	if (st->la_free)
		st->la_free(st); /* libarchive's (stream_zstd.c) */
	tm_stream_close(st->psrc); /* (a queue reader first: it holds a block) */
	while (st->q_head) {
		struct qblk *b = st->q_head;
		st->q_head = b->next;
		free(b);
	}
	free(st->qcur);
	if (st->pz_init)
		tm_zx_end(&st->pz, &st->pzx);
	buf_give(st->buf);
	free(st->pre);
	tm_big_free(st->hb, st->hb_cap, 1); /* (a cap of 0: free) */
	free(st->vs);
	free(st->ob);
	free(st->label);
	free(st->zip_name);
	free(st->ferr);
	free(st->perr);
	free(st->known);
	free(st->vio.perr);
	free(st->pio.perr);
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

void
tm_stream_short_read(struct tm_stream *st)
{
	if (st->kind == K_FILE && tm_stream_far_skip != SIZE_MAX)
		st->far_skip = true;
}

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
			if (want >= tm_stream_far_skip)
				tm_stream_short_read(rd->st);
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
	if (k < w && !st->to_end)
		return tm_st_fail(st, err, TM_ERR_FORMAT, st->pos,
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
		st->buf = tm_st_buf_take();
	size_t tail = tm_stream_tail < TAIL ? tm_stream_tail : TAIL;
	size_t want = left <= BLOCK + tail ? (size_t)left : BLOCK;
	if (st->far_skip && want > FAR_READ)
		want = FAR_READ;
	st->far_skip = false;
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
		return tm_st_fail(st, err, TM_ERR_FORMAT, st->pos,
			    "unexpected end of file (member runs past the end of the archive)");
	*p = st->buf;
	*n = have;
	st->pos += have;
	if (st->work) { /* the listing's progress: the furthest byte read */
		uint64_t at = st->base + st->pos;
		uint64_t was = __atomic_load_n(&st->work->read_pos, __ATOMIC_RELAXED);
		while (was < at && !__atomic_compare_exchange_n(&st->work->read_pos, &was, at, true,
								__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
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
	if (!rd->n && st->to_end) { /* the parent's end is ours */
		*n = 0;
		return TM_OK;
	}
	if (!rd->n)
		return tm_st_fail(st, err, TM_ERR_FORMAT, st->pos,
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


enum tm_status
tm_stream_next(struct tm_stream *st, const uint8_t **p, size_t *n, struct tm_error *err)
{
	switch (st->kind) {
	case K_FILE:
		return next_file(st, p, n, err);
	case K_RANGE:
		return next_range(st, p, n, err);
	case K_INFLATE:
	case K_AHEAD:
	case K_QUEUE:
		return st->next(st, p, n, err); /* set by the kind's constructor */
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
	struct tm_stream *st = tm_st_new(K_RANGE, label);
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

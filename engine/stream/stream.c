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
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include <archive.h>

#include "zinflate.h"

/* libarchive is loaded on first use (dlopen), not linked: only zstd
 * members need it, and linked, the dynamic loader mapped and relocated its
 * whole chain (libxml2, ICU, libstdc++, nettle, lzma, ...) on every run,
 * ~5 ms of CPU a process.  Every call below goes through la_fn, filled by
 * la_load before the first archive_read_new (tm_zstd_missing). */
static struct {
	__typeof__(archive_read_new) *read_new;
	__typeof__(archive_read_free) *read_free;
	__typeof__(archive_read_support_filter_zstd) *read_support_filter_zstd;
	__typeof__(archive_read_append_filter) *read_append_filter;
	__typeof__(archive_read_support_format_raw) *read_support_format_raw;
	__typeof__(archive_read_support_format_empty) *read_support_format_empty;
	__typeof__(archive_read_open) *read_open;
	__typeof__(archive_read_next_header) *read_next_header;
	__typeof__(archive_read_data) *read_data;
	__typeof__(archive_error_string) *error_string;
	__typeof__(archive_set_error) *set_error;
	const char *missing; /* NULL: loaded, with zstd */
} la_fn;
static pthread_once_t la_once = PTHREAD_ONCE_INIT;

#define archive_read_new la_fn.read_new
#define archive_read_free la_fn.read_free
#define archive_read_support_filter_zstd la_fn.read_support_filter_zstd
#define archive_read_append_filter la_fn.read_append_filter
#define archive_read_support_format_raw la_fn.read_support_format_raw
#define archive_read_support_format_empty la_fn.read_support_format_empty
#define archive_read_open la_fn.read_open
#define archive_read_next_header la_fn.read_next_header
#define archive_read_data la_fn.read_data
#define archive_error_string la_fn.error_string
#define archive_set_error la_fn.set_error

static void
la_load(void)
{
	la_fn.missing = "libarchive (libarchive.so.13) could not be loaded";
	/* the soname of libarchive 3 (Debian's libarchive13), then the
	 * development link */
	void *h = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		h = dlopen("libarchive.so", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
#define LA_SYM(f)                                                                                  \
	if (!(*(void **)&la_fn.f = dlsym(h, "archive_" #f)))                                      \
		return;
	LA_SYM(read_new)
	LA_SYM(read_free)
	LA_SYM(read_support_filter_zstd)
	LA_SYM(read_append_filter)
	LA_SYM(read_support_format_raw)
	LA_SYM(read_support_format_empty)
	LA_SYM(read_open)
	LA_SYM(read_next_header)
	LA_SYM(read_data)
	LA_SYM(error_string)
	LA_SYM(set_error)
#undef LA_SYM
	/* ARCHIVE_WARN means "no libzstd, would run an external zstd -d":
	 * not what we want (a process per member, its own error texts). */
	struct archive *a = archive_read_new();
	if (!a)
		abort();
	int r = archive_read_support_filter_zstd(a);
	archive_read_free(a);
	la_fn.missing = r == ARCHIVE_OK ? NULL : "this libarchive was built without libzstd";
}

#include "stream.h"
#include "archive_priv.h"

#define BLOCK (256u * 1024u)
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
/* trace_processor's hand-over chunk (decompressing_trace_reader.cc). */
#define TP_BLOB (32u << 20)
/* Handed-over bytes tm_stream_gz_prime may keep ahead of the reader. */
#define PRIME_MAX (1u << 20)
/* How far a gzip/ctrace/zstd producer may run ahead of the reader: the chunk
 * being verified, the primed bytes and this much read-ahead. */
#define RING_SLACK (3u << 20)
/* Output per inflate call of the producer (how often it looks at stop and
 * at how far it may run ahead). */
#define STEP (256u << 10)
/* Speculative reading (see "speculation" below): the ring the producer
 * decompresses into and the reader reads from. */
#define SPEC_RING (2u << 20)

uint64_t tm_inflated_bytes; /* test hook: all decompressed output produced */
struct tm_gz_tune tm_gz_tune; /* test hook: zeros = the defaults */
uint64_t tm_spec_refuted; /* test hook: speculative reads refuted */

enum kind { K_FILE, K_RANGE, K_INFLATE, K_AHEAD, K_QUEUE };

/* One block of compressed input queued for the re-decompression. */
struct qblk {
	struct qblk *next;
	size_t n;
	uint8_t d[];
};

struct tm_stream {
	enum kind kind;
	char *label; /* "<archive>: <member>" for error messages */
	struct tm_work *work; /* the input's listing budget and cancel flag */
	uint64_t pos;
	uint64_t size; /* UINT64_MAX when unknown */
	uint8_t *buf;
	/* K_FILE */
	int fd;
	bool fd_lent; /* fd is the caller's (tm_stream_file_lent): not closed here */
	uint64_t base;
	bool far_skip; /* the last move was a skip of >= FAR_SKIP: the next read is short */
	/* K_RANGE, K_INFLATE */
	struct tm_rd rd;
	struct tm_rd *shared; /* K_RANGE borrowing its container's reader */
	bool to_end;          /* K_RANGE: ends where its parent does (tm_stream_borrow_rest) */
	uint8_t *pre;         /* K_RANGE: its first pre_n bytes, already read */
	size_t pre_n;
	/* K_INFLATE */
	z_stream z;
	struct tm_zx *zx; /* ISA-L beside z (zinflate.h), NULL: zlib alone */
	/* gzip with ISA-L: the parent file's bytes from the stream's start
	 * (a failure is found again by zlib: gz_zlib_failure) and the size of
	 * the first raw chunk (the TRACE: marker is looked for in it) */
	int zfd;
	uint64_t z_base, z_len;
	size_t first_len;
	bool z_init, raw, strip, first, boundary, eof;
	uint64_t member_end; /* output offset of the last gzip member's end */
	/* gzip/ctrace/zstd (!raw): verified hand-overs (see "gzip / ctrace"
	 * below).  Offsets are absolute output offsets.  The producer (V)
	 * decompresses into the scratch vs only to learn where trace_processor
	 * hands over and fails: [r_ready, r_head) is the chunk being verified,
	 * [pos, r_ready) handed over and not yet delivered, [r_free, pos) the
	 * block the consumer borrowed.  The consumer decompresses the handed
	 * bytes again (P: pz / pio from psrc) into ob, which holds output
	 * offsets [ob_org, ob_end). */
	uint8_t *hb;          /* K_AHEAD: its ring */
	size_t hb_cap;        /* hb is a big buffer of hb_cap bytes (0: malloc) */
	uint8_t *vs;          /* V's scratch output (r_step bytes) */
	size_t r_cap, r_block, r_step;
	uint64_t r_free, r_ready;
	uint64_t r_head;     /* producer's: output produced (== inflated) */
	uint8_t *ob;
	size_t ob_cap;
	uint64_t ob_org, ob_end;
	struct tm_stream *psrc; /* P's compressed bytes: a file window or the queue */
	struct tm_rd prd;
	z_stream pz;
	struct tm_zx *pzx;
	bool pz_init, pfirst;
	/* the queue (psrc of a parent that is not a file): V copies every
	 * block it reads from the parent; P takes them in order (under mu) */
	bool q_on;
	struct qblk *q_head, *q_tail;
	struct tm_stream *qown; /* K_QUEUE: the stream whose queue it reads */
	struct qblk *qcur;      /* K_QUEUE: the block handed out last */
	bool quiet_fail;     /* consumer's: report the failure as the end */
	/* speculation (see below): from spec_from on, V decompresses into the
	 * ring hb (s_cap bytes + r_step of overflow) and the reader reads it
	 * up to s_head before V has verified it */
	bool spec, no_spec;  /* asked for (tm_stream_gz_speculate) / test hook: never */
	bool spec_on;        /* ring mode: set when the producer thread starts */
	bool refuted;        /* the reader went past a failure's last hand-over */
	size_t s_cap;
	uint64_t spec_from;
	/* under mu */
	uint64_t s_head;     /* bytes in the ring up to here (V publishes) */
	bool p_done;         /* the reader is past spec_from: no queue needed */
	bool s_drain;        /* the reader is done: V may overwrite the ring */
	/* the end known from a refuted read of the same bytes
	 * (tm_stream_gz_known, NULL when not): V stops at known->handed and
	 * fails as known->err */
	struct tm_stream_end *known;
	bool sync;           /* no producer thread: the consumer inflates */
	/* a provisional prime (tm_stream_gz_peek): V pauses at pause_at
	 * (sync, the caller's thread; non-zero only inside prime()) before
	 * the chunk is handed over; the
	 * sniff's bytes [0, prov_need) are not verified yet.  h_first: the
	 * first hand-over at or past prov_need (0: none yet), h_first_eof:
	 * it was the clean end. */
	uint64_t pause_at, prov_need, h_first;
	bool prov, h_first_eof;
	/* shared, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv_p, cv_c; /* producer waits for room, consumer for data */
	bool mu_init, thr_on, p_wait, c_wait, stop;
	struct worker *wk;    /* the producer's thread (thr_on) */
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
	 * format): V's (vio) and P's (pio, over prd) */
	bool zst;
	struct la_io {
		struct tm_stream *st;
		struct tm_rd *rd;
		bool enq; /* V: queue the blocks read */
		struct archive *la;
		bool open, end;
		enum tm_status ps; /* the parent's error, seen by the read callback */
		struct tm_error *perr;
	} vio, pio;
};

/* ---- producer threads, kept for reuse ----
 *
 * A stream's producer (gzip/zstd verification, ZIP read-ahead) runs one
 * job on a thread that then waits, idle, for the next stream's: an archive
 * of 1,000s of deflated or gzipped members starts a thread per member no
 * more.  There are never more threads than producers running at once; idle
 * ones wait on their condition variable until the process ends. */
struct worker {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	void *(*fn)(void *); /* the job; NULL while idle */
	void *arg;
	bool done;           /* the job returned */
	struct worker *next; /* idle list */
};

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
static struct worker *
wk_start(void *(*fn)(void *), void *arg)
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
	struct tm_stream *st = new_stream(K_FILE, label);
	st->fd = fd;
	st->base = off;
	st->size = len;
	*out = st;
	return TM_OK;
}

struct tm_stream *
tm_stream_file_fd(int fd, const char *label, uint64_t len)
{
	struct tm_stream *st = new_stream(K_FILE, label);
	st->fd = fd;
	st->size = len;
	return st;
}

struct tm_stream *
tm_stream_file_lent(int fd, const char *label, uint64_t len)
{
	struct tm_stream *st = new_stream(K_FILE, label);
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
		struct tm_stream *st = new_stream(K_FILE, label);
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

/* P's compressed bytes (see "gzip / ctrace" below): a window of the same
 * file when the parent is one (read again from the page cache), else the
 * queue of the blocks V reads. */
static void
redo_init(struct tm_stream *st)
{
	struct tm_stream *par = st->rd.st;
	int fd = par->kind == K_FILE && par->fd >= 0 ? fcntl(par->fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (fd >= 0) {
		struct tm_stream *f = new_stream(K_FILE, par->label);
		f->work = par->work;
		f->fd = fd;
		f->base = par->base + par->pos;
		f->size = par->size - par->pos;
		st->psrc = f;
	} else {
		struct tm_stream *q = new_stream(K_QUEUE, st->label);
		q->qown = st;
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

const char *
tm_zstd_missing(void)
{
	pthread_once(&la_once, la_load);
	return la_fn.missing;
}

bool
tm_zstd_available(void)
{
	return !tm_zstd_missing();
}

/* zstd goes through libarchive's filter layer (one explicit filter, raw
 * format) under the hand-over model of gzip streams: one decompression
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

static uint8_t *
buf_take(void)
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
	if (st->vio.la)
		archive_read_free(st->vio.la);
	if (st->pio.la)
		archive_read_free(st->pio.la);
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
		st->buf = buf_take();
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
		return fail(st, err, TM_ERR_FORMAT, st->pos,
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
		st->buf = buf_take();
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
			return fail(st, err, TM_ERR_FORMAT, st->pos,
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

/* Producer, mu held: wait until V may run ahead or the stream is being
 * closed (stop); the bytes it may still produce. */
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

/* Ring mode, mu held: the bytes V holds in the ring (produced, not given
 * back by the reader).  The reader and V wake each other only once half
 * the ring is free (next_gzip) or filled (v_wrote), or V is a step from
 * full, not at every block: on two cores each wake-up was a context
 * switch.  No deadlock: V waits for room only
 * when the ring holds more than s_cap - r_step, having woken the reader
 * (it signals then); the reader waits for bytes only while it has less
 * than a block, i.e. less than s_cap - r_step (ring_init): V is not
 * waiting then, and V wakes it before it could wait. */
static size_t
spec_fill(const struct tm_stream *st)
{
	uint64_t base = st->r_free > st->spec_from ? st->r_free : st->spec_from;
	return (size_t)(st->r_head - base);
}

/* Producer in ring mode, mu held: wait until the ring has room for o
 * bytes (always whole steps: V asks the decompressor for the same amounts
 * as without speculation, so its failure is met at the same byte); where to
 * write them (the scratch once the reader is done or the stream closes). */
static uint8_t *
spec_room(struct tm_stream *st, size_t o)
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
static void
gz_release(struct tm_stream *st, bool eof)
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
				const uint8_t *m = st->strip ? find_trace_marker(in, len) : NULL;
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
static void
gz_fail(struct tm_stream *st, const char *tp, const char *why)
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
	st->ferr = err_copy(&e);
	if (st->c_wait)
		pthread_cond_signal(&st->cv_c);
	pthread_mutex_unlock(&st->mu);
}

/* V: queue a block read from the parent for P (parents that are streams). */
static void
q_push(struct tm_stream *st, const uint8_t *p, size_t n)
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
static enum tm_status
next_queue(struct tm_stream *q, const uint8_t **p, size_t *n)
{
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
static enum tm_status
v_fill(struct tm_stream *st, struct tm_error *err)
{
	if (st->rd.n)
		return TM_OK;
	enum tm_status s = tm_stream_next(st->rd.st, &st->rd.p, &st->rd.n, err);
	if (s == TM_OK && st->rd.n && st->q_on)
		q_push(st, st->rd.p, st->rd.n);
	return s;
}

/* The start of the chunk V collects (the last hand-over: V enters gz_fill
 * there, or where a provisional prime paused it). */
static uint64_t
ring_chunk_start(struct tm_stream *st)
{
	if (!st->vs)
		st->vs = xmalloc(st->r_step);
	return st->r_ready;
}

/* RING_HANDED also stands for a pause (pause_at): gz_fill returns, the
 * chunk not handed over, and goes on from there when called again. */
enum ring_step { RING_WRITE, RING_HANDED, RING_STOPPED };

/* How much V decodes next in the chunk that began at chunk0: hands the
 * chunk over when it is full, or when `clean_end` (the input ended at a
 * boundary); otherwise sets *out (bounded by the chunk, how far V may run
 * ahead and r_step).  RING_STOPPED: the stream is being closed (err set). */
static enum ring_step
ring_window(struct tm_stream *st, uint64_t chunk0, bool clean_end, size_t *out, uint8_t **dst,
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
		st->ferr = err_copy(&k->err);
		if (st->c_wait)
			pthread_cond_signal(&st->cv_c);
		pthread_mutex_unlock(&st->mu);
		return RING_HANDED;
	}
	size_t room = (size_t)(chunk0 + TP_BLOB - st->r_head);
	if (room == 0) {
		gz_release(st, false); /* a full chunk */
		return RING_HANDED;
	}
	if (clean_end) {
		gz_release(st, true); /* the clean end: hand over the rest */
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
		*dst = spec_room(st, o);
	} else {
		size_t free_b = ring_room(st);
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
static void
v_wrote(struct tm_stream *st, const uint8_t *dst, size_t got)
{
	if (!st->spec_on || dst == st->vs || !got)
		return;
	size_t i = (size_t)(dst - st->hb);
	if (i + got > st->s_cap)
		memcpy(st->hb, st->hb + st->s_cap, i + got - st->s_cap);
	pthread_mutex_lock(&st->mu);
	st->s_head = st->r_head;
	if (st->c_wait) {
		size_t fill = spec_fill(st);
		if (fill >= st->s_cap / 2 || st->s_cap - fill < st->r_step)
			pthread_cond_signal(&st->cv_c);
	}
	pthread_mutex_unlock(&st->mu);
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
			if ((s = v_fill(st, err)) != TM_OK)
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
		size_t out;
		uint8_t *dst;
		enum ring_step w = ring_window(st, chunk0, in_end && st->boundary, &out, &dst, err);
		if (w != RING_WRITE)
			return w == RING_HANDED ? TM_OK : TM_ERR_CANCELLED;
		st->z.next_out = dst;
		st->z.avail_out = (uInt)out;
		st->boundary = false;
		int r = tm_zx_inflate(&st->z, st->zx);
		size_t got = out - st->z.avail_out;
		st->r_head += got;
		v_wrote(st, dst, got);
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
		/* (a failure set its own count: gz_fail, or at a known end as
		 * much as the refuted read decompressed) */
		if (!st->failed)
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

static int la_start(struct la_io *io);

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
			int r0 = la_start(io);
			if (r0 == 1)
				io->end = true;
			else if (r0 != 0)
				goto fail;
		}
		while (want) {
			la_ssize_t r = io->end ? 0 : archive_read_data(io->la, dst, want);
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
				const uint8_t *m = st->strip ? find_trace_marker(in, len) : NULL;
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
	if ((st->wk = wk_start(gz_thread, st)) != NULL) {
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
	if (st->p_wait && (!st->spec_on || spec_fill(st) <= st->s_cap / 2))
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
			if ((st->wk = wk_start(gz_thread, st)) != NULL)
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
			if ((st->wk = wk_start(ahead_thread, st)) != NULL) {
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

/* libarchive's read callback: hand over the blocks of io->rd's stream as
 * they are (valid until the next callback, which is all libarchive asks);
 * V's are queued for P when P reads a queue. */
static la_ssize_t
la_read(struct archive *a, void *ud, const void **buf)
{
	struct la_io *io = ud;
	struct tm_rd *rd = io->rd;
	const uint8_t *p;
	size_t n;
	if (rd->n) {
		p = rd->p;
		n = rd->n;
	} else {
		struct tm_error e;
		tm_error_clear(&e);
		enum tm_status s = tm_stream_next(rd->st, &p, &n, &e);
		if (s != TM_OK) {
			free(io->perr);
			io->perr = err_copy(&e);
			io->ps = s;
			archive_set_error(a, EIO, "read error in the compressed data");
			return ARCHIVE_FATAL;
		}
		if (n && io->enq)
			q_push(io->st, p, n);
	}
	rd->p = n ? p + n : p; /* p may be NULL at the end (no NULL + 0) */
	rd->n = 0;
	rd->off += n;
	*buf = p;
	return (la_ssize_t)n;
}

/* Open libarchive's zstd filter over io's bytes.  0: ready, 1: the stream
 * decompresses to nothing, -1: it failed (io->ps set when the parent's read
 * failed: ours; otherwise libarchive's error string says why), -2: no zstd
 * in this libarchive. */
static int
la_start(struct la_io *io)
{
	if (tm_zstd_missing())
		return -2; /* (not open: every call says so again) */
	io->open = true;
	io->la = archive_read_new();
	if (!io->la)
		abort();
	/* One explicit filter, no bidding: libarchive would otherwise keep
	 * bidding on its own output and unwrap a .zst.zst or .gz.zst in one
	 * go, where trace_processor sees one level per container. */
	if (archive_read_append_filter(io->la, ARCHIVE_FILTER_ZSTD) != ARCHIVE_OK)
		return -2;
	/* raw: the filter's output is the member; empty: a stream that
	 * decompresses to nothing. */
	if (archive_read_support_format_raw(io->la) != ARCHIVE_OK ||
	    archive_read_support_format_empty(io->la) != ARCHIVE_OK)
		abort();
	/* Format bidding decodes the first block.  When the filter fails
	 * there, the empty format wins the bid and open succeeds; the error
	 * string (cleared again by next_header) is the only trace of it. */
	if (archive_read_open(io->la, io, NULL, la_read, NULL) != ARCHIVE_OK ||
	    archive_error_string(io->la) || io->ps != TM_OK)
		return -1;
	struct archive_entry *e;
	int r = archive_read_next_header(io->la, &e);
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
	struct la_io *io = &st->vio;
	uint64_t chunk0 = ring_chunk_start(st);
	int r0 = 0;
	if (!io->open) {
		r0 = la_start(io);
		if (r0 == -2)
			return tm_error_set(err, TM_ERR_UNSUPPORTED,
					    "%s: zstd decompression is unavailable: %s", st->label,
					    tm_zstd_missing() ? tm_zstd_missing()
							      : "libarchive refused the zstd filter");
		if (r0 == 1) {
			io->end = true; /* decompresses to nothing */
			r0 = 0;
		}
	}
	for (;;) {
		la_ssize_t r = 0;
		uint8_t *dst = NULL;
		if (r0 == 0) {
			size_t out;
			enum ring_step w = ring_window(st, chunk0, io->end, &out, &dst, err);
			if (w != RING_WRITE)
				return w == RING_HANDED ? TM_OK : TM_ERR_CANCELLED;
			r = archive_read_data(io->la, dst, out);
		}
		if (r0 < 0 || r < 0) {
			if (io->ps != TM_OK) { /* ours: the parent's read failed */
				*err = *io->perr;
				return io->ps;
			}
			const char *m = archive_error_string(io->la);
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
			io->end = true;
			continue;
		}
		st->r_head += (uint64_t)r;
		v_wrote(st, dst, (size_t)r);
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
	case K_QUEUE:
		return next_queue(st, p, n);
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

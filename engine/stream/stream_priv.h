/* SPDX-License-Identifier: MIT */
/*
 * The member byte stream's private face (stream.h the public one), owned
 * by stream.c: the struct and what its parts share.  Calls go one way:
 * stream_ahead.c, stream_inflate.c -> stream_zstd.c -> stream_ring.c ->
 * stream.c; stream.c reaches the kinds above it through st->next and
 * st->la_free only.
 */
#ifndef TM_STREAM_PRIV_H
#define TM_STREAM_PRIV_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <zlib.h>

#include "zinflate.h"
#include "stream.h"
#include "archive_priv.h"

struct archive;

#define BLOCK (256u * 1024u)
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

enum kind { K_FILE, K_RANGE, K_INFLATE, K_AHEAD, K_QUEUE };

/* One block of compressed input queued for the re-decompression. */
struct qblk {
	struct qblk *next;
	size_t n;
	uint8_t d[];
};

struct tm_stream {
	enum kind kind;
	/* the next block of a stream of kind K_INFLATE, K_AHEAD or K_QUEUE
	 * (tm_stream_next; file and range windows are read by stream.c) */
	enum tm_status (*next)(struct tm_stream *st, const uint8_t **p, size_t *n,
			       struct tm_error *err);
	void (*la_free)(struct tm_stream *st); /* zstd: frees vio.la, pio.la */
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

/* RING_HANDED also stands for a pause (pause_at): gz_fill returns, the
 * chunk not handed over, and goes on from there when called again. */
enum ring_step { RING_WRITE, RING_HANDED, RING_STOPPED };

/* ---- stream.c ---- */

struct tm_stream *tm_st_new(enum kind k, const char *label);
enum tm_status tm_st_fail(struct tm_stream *st, struct tm_error *err, enum tm_status code,
			  uint64_t off, const char *what);
/* A stream's error kept for later (the rare case: off the struct). */
struct tm_error *tm_st_err_copy(const struct tm_error *e);
/* A read buffer of BLOCK + tail bytes (the spare one when parked). */
uint8_t *tm_st_buf_take(void);
/* Run fn(arg) on an idle thread or a new one; NULL if none can start. */
struct worker *tm_st_wk_start(void *(*fn)(void *), void *arg);

/* ---- the ring (stream_ring.c) ---- */

const uint8_t *tm_st_find_trace_marker(const uint8_t *p, size_t n);
size_t tm_st_ring_room(struct tm_stream *st);
size_t tm_st_spec_fill(const struct tm_stream *st);
uint8_t *tm_st_spec_room(struct tm_stream *st, size_t o);
void tm_st_gz_release(struct tm_stream *st, bool eof);
void tm_st_gz_fail(struct tm_stream *st, const char *tp, const char *why);
void tm_st_q_push(struct tm_stream *st, const uint8_t *p, size_t n);
enum tm_status tm_st_next_queue(struct tm_stream *q, const uint8_t **p, size_t *n,
				struct tm_error *err);
enum tm_status tm_st_v_fill(struct tm_stream *st, struct tm_error *err);
uint64_t tm_st_ring_chunk_start(struct tm_stream *st);
enum ring_step tm_st_ring_window(struct tm_stream *st, uint64_t chunk0, bool clean_end,
				 size_t *out, uint8_t **dst, struct tm_error *err);
void tm_st_v_wrote(struct tm_stream *st, const uint8_t *dst, size_t got);

/* ---- zstd (stream_zstd.c) ---- */

/* io's libarchive reader opened (0), at once at its end (1), or failed. */
int tm_st_la_start(struct la_io *io);
/* V's step of a zstd stream (gz_fill's). */
enum tm_status tm_st_zs_fill(struct tm_stream *st, struct tm_error *err);
/* P: up to want bytes of io's output (archive_read_data). */
ssize_t tm_st_zs_read(struct la_io *io, uint8_t *dst, size_t want);

#endif

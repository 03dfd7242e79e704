/* SPDX-License-Identifier: MIT */
/* Stream constructors and the byte reader shared by archive.c (the member
 * walkers) and stream.c.  Internal to those two files. */
#ifndef TM_ARCHIVE_PRIV_H
#define TM_ARCHIVE_PRIV_H

#include "stream.h"

/* Work done on an input's streams while it is being listed: decompressed
 * bytes counted against a budget (a nested decompression bomb stops at a
 * named cap instead of inflating for hours), and the caller's cancel flag
 * (tm_session_opts.cancel), looked at on every block.  Streams created by
 * archive.c carry a pointer to their input's; children inherit it. */
struct tm_work {
	volatile bool *cancel; /* NULL: none (read with __atomic loads) */
	uint64_t budget;       /* most decompressed bytes (UINT64_MAX: none) */
	uint64_t bytes;        /* decompressed so far (atomic) */
	uint64_t read_pos;     /* furthest byte of an input file read (atomic) */
	uint64_t *shown;       /* every charge also counted here (atomic; NULL: none):
				* the listing's "inflated" figure, never taken back */
	char cap[96];          /* the budget's name, for the error */
};

/* Charge n decompressed bytes (n may be 0: only the cancel flag is
 * looked at).  TM_ERR_CANCELLED or TM_ERR_LIMIT name label. */
enum tm_status tm_work_charge(struct tm_work *w, uint64_t n, const char *label,
			      struct tm_error *err) TM_WUR;
void tm_stream_set_work(struct tm_stream *st, struct tm_work *w);

/* Reads a stream byte-exactly: the unconsumed rest of the last block. */
struct tm_rd {
	struct tm_stream *st;
	const uint8_t *p;
	size_t n;
	uint64_t off; /* bytes consumed from st */
};

enum tm_status tm_rd_fill(struct tm_rd *rd, struct tm_error *err) TM_WUR;
/* Copy up to want bytes; *got < want only at end of stream. */
enum tm_status tm_rd_read(struct tm_rd *rd, void *dst, size_t want, size_t *got,
			  struct tm_error *err) TM_WUR;
enum tm_status tm_rd_skip(struct tm_rd *rd, uint64_t want, uint64_t *got,
			  struct tm_error *err) TM_WUR;

/* The next read of a file stream (and only that one) is a short one of
 * a header's size (stream.c FAR_READ), as after a far skip: a walk that
 * reads a header and skips what follows. */
void tm_stream_short_read(struct tm_stream *st);
/* The skip after which a file stream's next read is short (stream.c
 * FAR_SKIP; a test sets SIZE_MAX: whole blocks only, no short reads). */
extern size_t tm_stream_far_skip;
/* [off, off+len) of a file. */
enum tm_status tm_stream_file(const char *path, const char *label, uint64_t off, uint64_t len,
			      struct tm_stream **out, struct tm_error *err) TM_WUR;
/* [0, len) of the file open on fd, which the stream owns (closed with it). */
struct tm_stream *tm_stream_file_fd(int fd, const char *label, uint64_t len);
/* [0, len) of the file open on fd, which stays the caller's (lent: not
 * closed with the stream or its windows; it must outlive them). */
struct tm_stream *tm_stream_file_lent(int fd, const char *label, uint64_t len);
/* The next len bytes of parent (positioned at the window's start); takes
 * ownership of parent. */
struct tm_stream *tm_stream_range(struct tm_stream *parent, const char *label, uint64_t len);
/* The next len bytes read through rd (borrowed: rd and its stream stay the
 * caller's and must outlive the window; what the window consumes is gone
 * from rd). */
struct tm_stream *tm_stream_borrow(struct tm_rd *rd, const char *label, uint64_t len);
/* The rest of rd's stream (a window ending where the stream ends). */
struct tm_stream *tm_stream_borrow_rest(struct tm_rd *rd, const char *label);
/* The same for a member whose first head_n bytes were already read from
 * rd (copied here): the window delivers them first, then the rest. */
struct tm_stream *tm_stream_borrow_after(struct tm_rd *rd, const char *label, const void *head,
					 size_t head_n, uint64_t len);
/* Inflate parent (owned): raw deflate (ZIP) or gzip/zlib with concatenated
 * members; strip_trace cuts through "TRACE:\n" in the first raw block. */
struct tm_stream *tm_stream_inflate(struct tm_stream *parent, const char *label, bool raw,
				    bool strip_trace, const char *zip_name, uint64_t zip_csize);
/* A raw (ZIP) inflate stream not yet read: ISA-L inflates it (zinflate.h).
 * Only for an entry zlib inflated cleanly, or where a failure is redone
 * with zlib (tm_stream_zip_was_fast: ISA-L was used). */
void tm_stream_zip_fast(struct tm_stream *st);
bool tm_stream_zip_was_fast(const struct tm_stream *st);

/* Raw (ZIP) inflate streams: keep the CRC-32 of the output (before the
 * first read); once the stream has ended or failed (read by the thread
 * that reads it, or after that thread is joined), how it ended: 0 at the
 * deflate stream's end, 1 input ended first, 2 bad deflate data (-1: not
 * ended), the CRC-32 so far and the input bytes used. */
void tm_stream_zip_crc(struct tm_stream *st);
int tm_stream_zip_result(const struct tm_stream *st, uint32_t *crc, uint64_t *consumed);

/* Output offset where the last complete gzip member ended (tm_stream_inflate
 * streams; 0 for others). */
uint64_t tm_stream_member_end(const struct tm_stream *st);

/* gzip/ctrace streams (tm_stream_inflate, !raw) deliver only what
 * trace_processor hands its inner parser: whole 32 MiB chunks, each gzip
 * member's output at its end, the rest at the clean end of input.  When
 * decompression fails the chunk being collected is dropped and, after the
 * handed-over bytes, tm_stream_next fails with err->tp = trace_processor's
 * text ("Compressed stream incomplete, trace is likely corrupt
 * (ERR:tp-corrupt)" or "Failed to decompress trace chunk (ERR:tp-corrupt)").
 *
 * tm_stream_gz_prime: on a stream nothing has been read from yet, inflate
 * until at least want (<= 1 MiB) bytes are handed over or the stream is
 * complete (*done: ended or failed); *p, *n = the first handed-over bytes
 * from offset 0 (up to want; tm_stream_gz_ready says how many are handed
 * over), which tm_stream_next still delivers afterwards.  Costs at most one
 * chunk beyond want.  Returns only our own errors (I/O); a decompression
 * failure shows in tm_stream_gz_failure. */
enum tm_status tm_stream_gz_prime(struct tm_stream *st, size_t want, const uint8_t **p,
				  size_t *n, bool *done, struct tm_error *err) TM_WUR;
/* tm_stream_gz_prime, provisional: should want bytes decompress without a
 * hand-over, it stops there (*prov): *p, *n are the first want bytes, not
 * known to be handed over.  Then either tm_stream_gz_prime (goes on
 * verifying: the same as if it had been called first) or speculation
 * (tm_stream_gz_speculate) from byte 0; once the reader is done and
 * tm_stream_refuted asked, tm_stream_gz_verified verifies on to the first
 * hand-over at or past want and says whether there is one (*handed; *clean:
 * it was the clean end), i.e. whether tm_stream_gz_prime would have
 * stopped at a hand-over past want rather than at a failure before it.
 * (A stream nothing was read from and not known: else as tm_stream_gz_prime.) */
enum tm_status tm_stream_gz_peek(struct tm_stream *st, size_t want, const uint8_t **p,
				 size_t *n, bool *done, bool *prov, struct tm_error *err) TM_WUR;
bool tm_stream_gz_verified(struct tm_stream *st, uint64_t *handed, bool *clean);
/* Output handed over so far (the offset up to which tm_stream_next will
 * deliver). */
uint64_t tm_stream_gz_ready(const struct tm_stream *st);
/* The decompression failure met so far (err filled, tp set), if any. */
bool tm_stream_gz_failure(const struct tm_stream *st, struct tm_error *err);
/* Speculation, for a reader that can read the stream again from its start
 * (a scan of a whole member): asked for before the first tm_stream_next (a
 * primed stream is fine).  The producer then decompresses once, into a
 * small ring that the reader reads as it fills, before the chunk it belongs
 * to is known to be handed over; the primed chunk is decompressed again as
 * before.  Should the stream fail after all, the reader gets the bytes up
 * to the last hand-over and trace_processor's failure as without
 * speculation if it is not past that hand-over yet; if it is, it has read
 * bytes trace_processor never parses: tm_stream_next fails (not
 * trace_processor's error) and tm_stream_gz_refuted says so.  Once the
 * reader is done, tm_stream_refuted (input.h) says whether what it read is
 * to be read again. */
void tm_stream_gz_speculate(struct tm_stream *st);
/* Speculate, knowing how the stream ends (end->known, from
 * tm_stream_refuted on the same bytes): the producer stops at end->handed
 * and the stream fails there as it did (inflated: end->inflated). */
void tm_stream_gz_known(struct tm_stream *st, const struct tm_stream_end *end);
/* Test hook: how many times tm_stream_refuted said true (relaxed atomic). */
extern uint64_t tm_spec_refuted;
/* Report a decompression failure as the end of the stream (for the
 * container walks, which learn it from tm_stream_gz_failure). */
void tm_stream_gz_quiet(struct tm_stream *st);
/* Decompressed bytes produced so far (gzip/ctrace/zstd streams). */
uint64_t tm_stream_inflated(const struct tm_stream *st);
bool tm_stream_is_gzip(const struct tm_stream *st);
/* Test hook: decompressed bytes produced by all gzip/ctrace/zstd streams and
 * ZIP inflates of the process (relaxed atomic counter). */
extern uint64_t tm_inflated_bytes;

/* gzip/ctrace streams verify on a producer thread of their own (started by
 * the first tm_stream_next; tm_stream_gz_prime inflates on the caller's
 * thread) where trace_processor hands over and fails, at most 32 MiB +
 * 1 MiB + 3 MiB of output ahead of the reader, keeping none of it; the
 * reader decompresses the handed-over bytes again (stream.c), or, when
 * speculating, reads the producer's 2 MiB ring past the primed chunk
 * (tm_stream_gz_speculate).  Delivered
 * bytes, hand-overs, failures and offsets are those of the sequential
 * stream; a parent stream is read by its child's producer only;
 * tm_stream_close stops and joins it (and those of the parents) promptly.
 *
 * Test hook: read when a stream is created; zeros are the defaults. */
struct tm_gz_tune {
	size_t block;   /* most bytes per tm_stream_next (256 KiB) */
	size_t step;    /* most output per inflate call (256 KiB) */
	size_t slack;   /* read-ahead + 1: lead = 33 MiB + slack - 1 (3 MiB) */
	bool no_thread; /* inflate on the consumer's thread (the sequential stream) */
	bool no_spec;   /* tm_stream_gz_speculate does nothing */
	size_t spec_ring; /* its ring (2 MiB; at least step) */
};
extern struct tm_gz_tune tm_gz_tune;
/* How far past a block a file stream reads its remainder in the same pread
 * (stream.c TAIL; a test sets 0 to compare with whole blocks only). */
extern size_t tm_stream_tail;
/* Decompress parent (owned), a zstd stream with any number of frames, through
 * libarchive's zstd filter.  A gzip-like stream: the same hand-over ring,
 * producer thread and tm_stream_gz_* calls (zstd frame ends are not visible
 * through libarchive, so only 32 MiB chunks and the end hand over).  Errors
 * carry trace_processor's texts. */
struct tm_stream *tm_stream_unzstd(struct tm_stream *parent, const char *label);
/* parent (owned) read ahead by a thread of its own (2 MiB ring): the same
 * bytes, offsets and errors, the parent's work on another core. */
struct tm_stream *tm_stream_ahead(struct tm_stream *parent, const char *label);
/* libarchive can decode zstd in-process (loaded, built with libzstd);
 * tm_zstd_missing: NULL, or why not. */
bool tm_zstd_available(void);
const char *tm_zstd_missing(void);

/* Skip off bytes of parent, then a window of len (takes parent). */
enum tm_status tm_stream_window(struct tm_stream *parent, uint64_t off, uint64_t len,
				const char *label, struct tm_stream **out, struct tm_error *err) TM_WUR;

#endif

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
 * blocks, and archive_read_data_block, whose blocks we pass on without a
 * copy.  Its errors are mapped to trace_processor's texts ("Truncated zstd
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

uint64_t tm_inflated_bytes; /* test hook: all gzip/ctrace output produced */

enum kind { K_FILE, K_RANGE, K_INFLATE, K_LA };

struct tm_stream {
	enum kind kind;
	char *label; /* "<archive>: <member>" for error messages */
	uint64_t pos;
	uint64_t size; /* UINT64_MAX when unknown */
	uint8_t *buf;
	/* K_FILE */
	int fd;
	uint64_t base;
	/* K_RANGE, K_INFLATE */
	struct tm_rd rd;
	/* K_INFLATE */
	z_stream z;
	bool z_init, raw, strip, first, boundary, eof;
	uint64_t member_end; /* output offset of the last gzip member's end */
	/* gzip/ctrace (!raw): the hand-over buffer.  [hb_out, hb_ready) is
	 * handed over and not yet delivered; [hb_ready, hb_len) is the chunk
	 * being collected (only inside gz_fill). */
	uint8_t *hb;
	size_t hb_out, hb_ready, hb_len;
	uint64_t inflated;   /* output produced so far */
	bool failed;         /* decompression failed; ferr after the ready bytes */
	bool quiet_fail;     /* report the failure as the end of the stream */
	enum tm_status fs;
	struct tm_error ferr;
	char *zip_name;     /* raw ZIP: TP's error names the entry */
	uint64_t zip_csize; /* raw ZIP: compressed size */
	/* K_LA: libarchive's filter layer over rd (raw format) */
	struct archive *la;
	int la_filter;          /* ARCHIVE_FILTER_ZSTD or ARCHIVE_FILTER_GZIP */
	bool la_open;
	enum tm_status la_ps;   /* the parent's error, seen by the read callback */
	struct tm_error la_perr;
};

static enum tm_status
fail(struct tm_stream *st, struct tm_error *err, enum tm_status code, uint64_t off,
     const char *what)
{
	return tm_error_set(err, code, "%s: byte 0x%" PRIx64 ": %s", st->label, off, what);
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
	st->size = len;
	return st;
}

struct tm_stream *
tm_stream_inflate(struct tm_stream *parent, const char *label, bool raw, bool strip_trace,
		  const char *zip_name, uint64_t zip_csize)
{
	struct tm_stream *st = new_stream(K_INFLATE, label);
	st->rd.st = parent;
	st->raw = raw;
	st->strip = strip_trace;
	st->first = true;
	st->boundary = true;
	st->zip_name = zip_name ? xstrdup(zip_name) : NULL;
	st->zip_csize = zip_csize;
	if (inflateInit2(&st->z, raw ? -15 : 15 + 32) != Z_OK)
		abort(); /* only fails on out-of-memory */
	st->z_init = true;
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

/* Through libarchive's filter layer: one explicit filter, raw format.  strip
 * (gzip framing only) would cut through "TRACE:\n" like tm_stream_inflate;
 * gzip stays on zlib (see the top comment), so only zstd uses this now. */
static struct tm_stream *
stream_la(struct tm_stream *parent, const char *label, int filter, bool strip)
{
	struct tm_stream *st = new_stream(K_LA, label);
	st->rd.st = parent;
	st->la_filter = filter;
	st->strip = strip;
	st->first = true;
	return st;
}

struct tm_stream *
tm_stream_unzstd(struct tm_stream *parent, const char *label)
{
	return stream_la(parent, label, ARCHIVE_FILTER_ZSTD, false);
}


void
tm_stream_close(struct tm_stream *st)
{
	if (!st)
		return;
	if (st->fd >= 0)
		close(st->fd);
	if (st->rd.st)
		tm_stream_close(st->rd.st);
	if (st->z_init)
		inflateEnd(&st->z);
	if (st->la)
		archive_read_free(st->la);
	free(st->buf);
	free(st->hb);
	free(st->label);
	free(st->zip_name);
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
	uint64_t w = want < left ? want : left, k;
	if (st->kind == K_FILE) {
		st->pos += w;
		*got = w;
		return TM_OK;
	}
	enum tm_status s = tm_rd_skip(&st->rd, w, &k, err);
	if (s != TM_OK)
		return s;
	st->pos += k;
	*got = k;
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
	return TM_OK;
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
	if ((s = tm_rd_fill(&st->rd, err)) != TM_OK)
		return s;
	if (!st->rd.n)
		return fail(st, err, TM_ERR_FORMAT, st->pos,
			    "unexpected end of data (member runs past the end of its container)");
	size_t k = left < st->rd.n ? (size_t)left : st->rd.n;
	*p = st->rd.p;
	*n = k;
	st->rd.p += k;
	st->rd.n -= k;
	st->rd.off += k;
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
				if (st->raw)
					return tm_error_set(
						err, TM_ERR_FORMAT,
						"%s: Zip decompression error (3) on %s (c=%" PRIu64
						", u=?) (ERR:tp-corrupt): deflate data ends early",
						st->label, st->zip_name ? st->zip_name : "",
						st->zip_csize);
				return fail(st, err, TM_ERR_FORMAT, st->pos,
					    "Compressed stream incomplete, trace is likely corrupt "
					    "(ERR:tp-corrupt)");
			}
			const uint8_t *in = st->rd.p;
			size_t len = st->rd.n;
			if (st->first) {
				st->first = false;
				/* gzip only: cut everything up to and including
				 * "TRACE:\n" in the first raw chunk (§1.6). */
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
			if (st->raw)
				return tm_error_set(err, TM_ERR_FORMAT,
						    "%s: Zip decompression error (2) on %s (c=%" PRIu64
						    ", u=?) (ERR:tp-corrupt)",
						    st->label, st->zip_name ? st->zip_name : "",
						    st->zip_csize);
			return fail(st, err, TM_ERR_FORMAT, st->pos,
				    "Failed to decompress trace chunk (ERR:tp-corrupt)");
		}
	}
	*p = st->buf;
	*n = BLOCK - st->z.avail_out;
	st->pos += *n;
	if (st->boundary)
		st->member_end = st->pos;
	return TM_OK;
}

uint64_t
tm_stream_member_end(const struct tm_stream *st)
{
	return st->member_end;
}

/* ---- gzip / ctrace: trace_processor's hand-over model ---- */

/* Decompression failed: drop the chunk being collected; the failure is
 * reported once the handed-over bytes are delivered. */
static void
gz_fail(struct tm_stream *st, const char *tp)
{
	size_t dropped = st->hb_len - st->hb_ready;
	uint64_t handed = st->pos + (st->hb_ready - st->hb_out);
	st->hb_len = st->hb_ready;
	st->eof = true;
	st->failed = true;
	st->fs = tm_error_set(&st->ferr, TM_ERR_FORMAT,
			      "%s: byte 0x%" PRIx64 " (compressed byte 0x%" PRIx64 "): %s; the "
			      "%zu bytes decompressed since the last hand-over (byte 0x%" PRIx64
			      ") never reach the parser",
			      st->label, st->inflated, st->rd.off - st->z.avail_in, tp, dropped,
			      handed);
	snprintf(st->ferr.tp, sizeof st->ferr.tp, "%s", tp);
}

/* Inflate until the chunk being collected is handed over (TP_BLOB bytes,
 * the end of a gzip member, or the clean end of the input), the stream
 * ends, or decompression fails.  Appends after the ready bytes. */
static enum tm_status
gz_fill(struct tm_stream *st, struct tm_error *err)
{
	enum tm_status s;
	if (st->hb_out == st->hb_ready)
		st->hb_out = st->hb_ready = st->hb_len = 0;
	if (!st->hb)
		st->hb = xmalloc(TP_BLOB + PRIME_MAX); /* pages are touched as used */
	size_t chunk0 = st->hb_len;
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
				 * first raw chunk (§1.6). */
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
		size_t room = chunk0 + TP_BLOB - st->hb_len;
		if (room == 0) {
			st->hb_ready = st->hb_len; /* a full chunk */
			return TM_OK;
		}
		if (in_end && st->boundary) {
			st->eof = true; /* the clean end: hand over the rest */
			st->hb_ready = st->hb_len;
			return TM_OK;
		}
		st->z.next_out = st->hb + st->hb_len;
		st->z.avail_out = (uInt)room;
		st->boundary = false;
		int r = inflate(&st->z, Z_NO_FLUSH);
		size_t got = room - st->z.avail_out;
		st->hb_len += got;
		st->inflated += got;
		if (got)
			__atomic_fetch_add(&tm_inflated_bytes, (uint64_t)got, __ATOMIC_RELAXED);
		if (r == Z_STREAM_END) {
			st->boundary = true;
			inflateReset(&st->z);
			st->member_end = st->inflated;
			/* trace_processor hands a member's output to the parser at
			 * its end, before it decodes what follows (which may fail). */
			if (st->hb_len > chunk0) {
				st->hb_ready = st->hb_len;
				return TM_OK;
			}
			continue;
		}
		if (r == Z_BUF_ERROR && in_end) {
			/* no progress and no more input */
			gz_fail(st, "Compressed stream incomplete, trace is likely corrupt "
				    "(ERR:tp-corrupt)");
			return TM_OK;
		}
		if (r == Z_OK || r == Z_BUF_ERROR)
			continue; /* more input or more room (checked above) */
		gz_fail(st, "Failed to decompress trace chunk (ERR:tp-corrupt)");
		return TM_OK;
	}
}

static enum tm_status
next_gzip(struct tm_stream *st, const uint8_t **p, size_t *n, struct tm_error *err)
{
	enum tm_status s;
	*n = 0;
	while (st->hb_out == st->hb_ready) {
		if (st->failed) {
			if (st->quiet_fail)
				return TM_OK;
			*err = st->ferr;
			return st->fs;
		}
		if (st->eof)
			return TM_OK;
		if ((s = gz_fill(st, err)) != TM_OK)
			return s;
	}
	size_t k = st->hb_ready - st->hb_out;
	if (k > BLOCK)
		k = BLOCK;
	*p = st->hb + st->hb_out;
	*n = k;
	st->hb_out += k;
	st->pos += k;
	return TM_OK;
}

enum tm_status
tm_stream_gz_prime(struct tm_stream *st, size_t want, const uint8_t **p, size_t *n, bool *done,
		   struct tm_error *err)
{
	enum tm_status s;
	if (want > PRIME_MAX)
		want = PRIME_MAX;
	while (st->hb_ready - st->hb_out < want && !st->eof) {
		if ((s = gz_fill(st, err)) != TM_OK)
			return s;
	}
	*p = st->hb ? st->hb + st->hb_out : NULL;
	*n = st->hb_ready - st->hb_out;
	*done = st->eof;
	return TM_OK;
}

bool
tm_stream_gz_failure(const struct tm_stream *st, struct tm_error *err)
{
	if (st->kind != K_INFLATE || !st->failed)
		return false;
	*err = st->ferr;
	return true;
}

void
tm_stream_gz_quiet(struct tm_stream *st)
{
	st->quiet_fail = true;
}

uint64_t
tm_stream_inflated(const struct tm_stream *st)
{
	return st->inflated;
}

bool
tm_stream_is_gzip(const struct tm_stream *st)
{
	return st->kind == K_INFLATE && !st->raw;
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
		enum tm_status s = tm_stream_next(st->rd.st, &p, &n, &st->la_perr);
		if (s != TM_OK) {
			st->la_ps = s;
			archive_set_error(a, EIO, "read error in the compressed data");
			return ARCHIVE_FATAL;
		}
	}
	if (st->first && n) {
		st->first = false;
		/* gzip only: cut through "TRACE:\n" in the first raw chunk. */
		const uint8_t *m = st->strip ? find_trace_marker(p, n) : NULL;
		if (m) {
			st->rd.off += (uint64_t)(m - p);
			n -= (size_t)(m - p);
			p = m;
		}
	}
	st->rd.p = p + n;
	st->rd.n = 0;
	st->rd.off += n;
	*buf = p;
	return (la_ssize_t)n;
}

/* Map libarchive's failure to trace_processor's text (engine-semantics
 * §1.6); libarchive's own words and the offsets stay in our message. */
static enum tm_status
la_fail(struct tm_stream *st, struct tm_error *err)
{
	st->eof = true;
	if (st->la_ps != TM_OK) {
		*err = st->la_perr;
		return st->la_ps;
	}
	const char *m = st->la ? archive_error_string(st->la) : NULL;
	if (!m)
		m = "unknown libarchive error";
	/* "Truncated zstd input" (zstd), "truncated gzip input" (gzip) */
	bool trunc = strstr(m, "runcated") != NULL;
	return tm_error_set(err, TM_ERR_FORMAT,
			    "%s: byte 0x%" PRIx64 " (0x%" PRIx64 " compressed): %s (libarchive: %s)",
			    st->label, st->pos, st->rd.off,
			    trunc ? "Compressed stream incomplete, trace is likely corrupt "
				    "(ERR:tp-corrupt)"
				  : "Failed to decompress trace chunk (ERR:tp-corrupt)",
			    m);
}

static enum tm_status
la_start(struct tm_stream *st, struct tm_error *err)
{
	st->la_open = true;
	st->la = archive_read_new();
	if (!st->la)
		abort();
	/* One explicit filter, no bidding: libarchive would otherwise keep
	 * bidding on its own output and unwrap a .zst.zst or .gz.zst in one
	 * go, where trace_processor sees one level per container. */
	if ((st->la_filter == ARCHIVE_FILTER_ZSTD && !tm_zstd_available()) ||
	    archive_read_append_filter(st->la, st->la_filter) != ARCHIVE_OK) {
		st->eof = true;
		return tm_error_set(err, TM_ERR_UNSUPPORTED,
				    "%s: %s decompression is unavailable: this libarchive was "
				    "built without it",
				    st->label, st->la_filter == ARCHIVE_FILTER_ZSTD ? "zstd" : "gzip");
	}
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
		return la_fail(st, err);
	struct archive_entry *e;
	int r = archive_read_next_header(st->la, &e);
	if (r == ARCHIVE_EOF) {
		st->eof = true; /* decompresses to nothing */
		return TM_OK;
	}
	if (r != ARCHIVE_OK)
		return la_fail(st, err);
	return TM_OK;
}

static enum tm_status
next_la(struct tm_stream *st, const uint8_t **p, size_t *n, struct tm_error *err)
{
	enum tm_status s;
	*n = 0;
	if (!st->la_open && (s = la_start(st, err)) != TM_OK)
		return s;
	while (!st->eof) {
		const void *buf;
		size_t len;
		la_int64_t off;
		int r = archive_read_data_block(st->la, &buf, &len, &off);
		if (r == ARCHIVE_EOF) {
			st->eof = true;
			break;
		}
		if (r != ARCHIVE_OK)
			return la_fail(st, err);
		if (!len)
			continue;
		*p = buf;
		*n = len;
		st->pos += len;
		break;
	}
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
		return st->raw ? next_inflate(st, p, n, err) : next_gzip(st, p, n, err);
	case K_LA:
		return next_la(st, p, n, err);
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

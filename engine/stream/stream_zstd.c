/* SPDX-License-Identifier: MIT */
/*
 * zstd through libarchive's filter layer (stream_priv.h), loaded on first
 * use: the read callback over the parent, the reader opened, and V's step;
 * under the hand-over model of stream_inflate.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>

#include "stream_priv.h"

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
			io->perr = tm_st_err_copy(&e);
			io->ps = s;
			archive_set_error(a, EIO, "read error in the compressed data");
			return ARCHIVE_FATAL;
		}
		if (n && io->enq)
			tm_st_q_push(io->st, p, n);
	}
	rd->p = n ? p + n : p; /* p may be NULL at the end (no NULL + 0) */
	rd->n = 0;
	rd->off += n;
	*buf = p;
	return (la_ssize_t)n;
}

/* tm_stream_close's: the stream's libarchive readers. */
static void
la_free(struct tm_stream *st)
{
	if (st->vio.la)
		archive_read_free(st->vio.la);
	if (st->pio.la)
		archive_read_free(st->pio.la);
}

ssize_t
tm_st_zs_read(struct la_io *io, uint8_t *dst, size_t want)
{
	return archive_read_data(io->la, dst, want);
}

/* Open libarchive's zstd filter over io's bytes.  0: ready, 1: the stream
 * decompresses to nothing, -1: it failed (io->ps set when the parent's read
 * failed: ours; otherwise libarchive's error string says why), -2: no zstd
 * in this libarchive. */
int
tm_st_la_start(struct la_io *io)
{
	if (tm_zstd_missing())
		return -2; /* (not open: every call says so again) */
	io->open = true;
	io->la = archive_read_new();
	if (!io->la)
		abort();
	io->st->la_free = la_free;
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
enum tm_status
tm_st_zs_fill(struct tm_stream *st, struct tm_error *err)
{
	struct la_io *io = &st->vio;
	uint64_t chunk0 = tm_st_ring_chunk_start(st);
	int r0 = 0;
	if (!io->open) {
		r0 = tm_st_la_start(io);
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
			enum ring_step w = tm_st_ring_window(st, chunk0, io->end, &out, &dst, err);
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
			tm_st_gz_fail(st,
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
		tm_st_v_wrote(st, dst, (size_t)r);
		__atomic_fetch_add(&tm_inflated_bytes, (uint64_t)r, __ATOMIC_RELAXED);
		enum tm_status s = tm_work_charge(st->work, (uint64_t)r, st->label, err);
		if (s != TM_OK)
			return s; /* ours: cancelled, or the listing's cap */
	}
}


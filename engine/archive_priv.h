/* SPDX-License-Identifier: MIT */
/* Stream constructors and the byte reader shared by archive.c (the member
 * walkers) and stream.c.  Internal to those two files. */
#ifndef TM_ARCHIVE_PRIV_H
#define TM_ARCHIVE_PRIV_H

#include "input.h"

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

/* [off, off+len) of a file. */
enum tm_status tm_stream_file(const char *path, const char *label, uint64_t off, uint64_t len,
			      struct tm_stream **out, struct tm_error *err) TM_WUR;
/* The next len bytes of parent (positioned at the window's start); takes
 * ownership of parent. */
struct tm_stream *tm_stream_range(struct tm_stream *parent, const char *label, uint64_t len);
/* Inflate parent (owned): raw deflate (ZIP) or gzip/zlib with concatenated
 * members; strip_trace cuts through "TRACE:\n" in the first raw block. */
struct tm_stream *tm_stream_inflate(struct tm_stream *parent, const char *label, bool raw,
				    bool strip_trace, const char *zip_name, uint64_t zip_csize);

/* Output offset where the last complete gzip member ended (tm_stream_inflate
 * streams; 0 for others). */
uint64_t tm_stream_member_end(const struct tm_stream *st);
/* Decompress parent (owned), a zstd stream with any number of frames, through
 * libarchive's zstd filter.  Errors carry trace_processor's texts. */
struct tm_stream *tm_stream_unzstd(struct tm_stream *parent, const char *label);
/* libarchive can decode zstd in-process (built with libzstd). */
bool tm_zstd_available(void);

/* Skip off bytes of parent, then a window of len (takes parent). */
enum tm_status tm_stream_window(struct tm_stream *parent, uint64_t off, uint64_t len,
				const char *label, struct tm_stream **out, struct tm_error *err) TM_WUR;

/* tar_write.c: one ustar header (exposed for its unit test). */
enum tm_status tm_tar_header(uint8_t h[512], const char *name, uint64_t size, int64_t mtime,
			     struct tm_error *err) TM_WUR;

#endif

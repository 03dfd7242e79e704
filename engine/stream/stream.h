/* SPDX-License-Identifier: MIT */
/*
 * The stream stage's face: a member's bytes, read block by block
 * (stream.c: file windows, nested windows, inflate, zstd, read-ahead;
 * zinflate.c), never the whole member in memory.  The input stage opens
 * them (input.h, tm_stream_open); scanners read them.  The constructors
 * the archive walkers use: archive_priv.h.  Internal to the engine.
 */
#ifndef TM_STREAM_H
#define TM_STREAM_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "internal.h"

struct tm_stream;
/* How a refuted stream failed: known = trace_processor's failure after
 * handed bytes (then the member can be read again without verifying). */
struct tm_stream_end {
	bool known;
	uint64_t handed, inflated;
	enum tm_status fs;
	struct tm_error err;
};
/* end (may be NULL) is filled when it returns true. */
bool tm_stream_refuted(struct tm_stream *st, struct tm_stream_end *end);
/* Borrow the next block of bytes: *p, *n valid until the next call; *n == 0
 * at end of member.  Errors name the member and the byte offset. */
enum tm_status tm_stream_next(struct tm_stream *st, const uint8_t **p, size_t *n,
			      struct tm_error *err) TM_WUR;
/* Bytes delivered so far (offset of the next block). */
uint64_t tm_stream_offset(const struct tm_stream *st);
/* Total bytes if known (UINT64_MAX if not, e.g. inflating). */
uint64_t tm_stream_size(const struct tm_stream *st);
void tm_stream_close(struct tm_stream *st);
/* Read buffers malloc'd so far by this process: a closed stream's buffer
 * is kept for the next stream to open, so this counts only the buffers of
 * streams open at the same time (a test hook). */
uint64_t tm_stream_buf_allocs(void);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Inflate with zlib's interface and zlib's verdicts, ISA-L's speed.
 *
 * tm_zx_* drive one z_stream (the caller's: next_in, avail_in, next_out,
 * avail_out stay its interface) and return zlib's codes for
 * inflate(Z_NO_FLUSH).  Built with ISA-L (TM_HAVE_ISAL) the deflate data
 * is inflated by isal_inflate; zlib still reads every gzip and zlib header
 * (so a header is accepted or refused exactly as zlib does, the garbage
 * after a last gzip member included) and ISA-L verifies the trailer's
 * check value and size.  A zlib header with a window under 32 KiB, or a
 * header zlib leaves mid-byte, is inflated by zlib to its end.  Raw deflate
 * (ZIP members) goes to ISA-L only when asked (tm_zx_init_fast): its
 * failures must be redone with zlib (see tm_zx_init_fast).
 */
#ifndef TM_ZINFLATE_H
#define TM_ZINFLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

struct tm_zx;

/* inflateInit2 (tm_inflate_init) with WINDOW_BITS -15 (raw deflate) or
 * 15 + 32 (gzip or zlib); *x is the ISA-L side (NULL: zlib alone). */
void tm_zx_init(z_stream *z, struct tm_zx **x, int window_bits);
/* The same; raw_fast: raw deflate (-15) by ISA-L too (zlib decides a
 * failure otherwise: redo one with zlib alone). */
void tm_zx_init_fast(z_stream *z, struct tm_zx **x, int window_bits, bool raw_fast);
/* inflate(z, Z_NO_FLUSH) */
int tm_zx_inflate(z_stream *z, struct tm_zx *x);
/* inflateReset: the next gzip member */
void tm_zx_reset(z_stream *z, struct tm_zx *x);
/* inflateValidate(z, 0): the check values need not be verified */
void tm_zx_nocheck(z_stream *z, struct tm_zx *x);
void tm_zx_end(z_stream *z, struct tm_zx **x);

/* zlib's crc32 (crc 0 to start), by ISA-L where built in. */
uint32_t tm_crc32(uint32_t crc, const void *p, size_t n);

/* Test hook: true = every new stream on zlib alone. */
extern bool tm_zx_zlib_only;
/* Whether ISA-L is built in. */
bool tm_zx_have_isal(void);

#endif

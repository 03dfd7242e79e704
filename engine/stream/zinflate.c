/* SPDX-License-Identifier: MIT */
/*
 * Inflate: zlib's verdicts, ISA-L's speed (see zinflate.h).
 *
 * trace_processor inflates with zlib (util/gzip_utils.cc, GzipDecompressor:
 * inflateInit2 with 32 + MAX_WBITS, inflate(Z_NO_FLUSH) until
 * Z_STREAM_END; zip_reader.cc the same with -MAX_WBITS).  What it accepts
 * and refuses is zlib's, so zlib keeps every decision a header makes:
 * per member, zlib reads the header alone (inflate(Z_BLOCK) stops right
 * after it, at the first block, nothing of the deflate data read), then
 * isal_inflate takes the deflate data and the trailer (ISAL_GZIP_NO_HDR_VER
 * / ISAL_ZLIB_NO_HDR_VER: the CRC-32 and size, or the Adler-32, verified as
 * zlib does).  Deflate data is valid or not by RFC 1951 for both; a
 * failure is Z_DATA_ERROR for both (the callers never read zlib's msg).
 */
#include "zinflate.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifdef TM_HAVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#endif

bool tm_zx_zlib_only;

uint32_t
tm_crc32(uint32_t crc, const void *p, size_t n)
{
#ifdef TM_HAVE_ISAL
	/* zlib's crc32, chained the same way (the pre- and post-inversion
	 * inside), by carry-less multiplication */
	if (!tm_zx_zlib_only)
		return crc32_gzip_refl(crc, p, n);
#endif
	return (uint32_t)crc32_z(crc, p, n);
}

#ifdef TM_HAVE_ISAL

/* TRACEMERGE_INFLATE=zlib: zlib alone (to compare), read once for the
 * process, not by every stream's init (a getenv per ZIP member of an
 * archive of thousands) */
static bool env_zlib_only;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void
env_read(void)
{
	const char *e = getenv("TRACEMERGE_INFLATE");
	env_zlib_only = e && !strcmp(e, "zlib");
}

enum phase {
	PH_HEAD,  /* zlib reads the member's header */
	PH_BODY,  /* ISA-L inflates the deflate data and checks the trailer */
	PH_END,   /* the member ended (Z_STREAM_END given) */
	PH_BAD,   /* failed: Z_DATA_ERROR from now on */
	PH_ZLIB,  /* zlib to the member's end (a header ISA-L is not given) */
};

struct tm_zx {
	struct inflate_state is;
	gz_header head;
	bool raw;
	enum phase ph;
	int first;  /* the member's first byte (a zlib header's CMF), -1 none yet */
};

bool
tm_zx_have_isal(void)
{
	return true;
}

static void
head_watch(z_stream *z, struct tm_zx *x)
{
	memset(&x->head, 0, sizeof x->head);
	if (inflateGetHeader(z, &x->head) != Z_OK)
		abort();
	x->first = -1;
}

static void
body_start(struct tm_zx *x, bool gzip)
{
	isal_inflate_init(&x->is);
	x->is.crc_flag = x->raw ? ISAL_DEFLATE : gzip ? ISAL_GZIP_NO_HDR_VER : ISAL_ZLIB_NO_HDR_VER;
	x->is.hist_bits = 15;
	x->ph = PH_BODY;
}

void
tm_zx_init_fast(z_stream *z, struct tm_zx **xp, int window_bits, bool raw_fast)
{
	tm_inflate_init(z, window_bits);
	*xp = NULL;
	/* Raw deflate (ZIP members) only when asked: ZipFile::Decompress
	 * fails an entry whole, but the listing shows how much of it inflated
	 * and sniffs that, and the two decoders stop a few bytes apart in
	 * corrupt data, so the caller redoes a failure with zlib (archive.c
	 * zip_visit) or asks only for an entry zlib inflated cleanly (a gzip
	 * stream hands over whole members only: no difference) */
	if (tm_zx_zlib_only || (window_bits != 15 + 32 && !(window_bits == -15 && raw_fast)))
		return;
	pthread_once(&env_once, env_read);
	if (env_zlib_only)
		return;
	struct tm_zx *x = xmalloc(sizeof *x);
	memset(x, 0, sizeof *x);
	x->raw = window_bits < 0;
	if (x->raw) {
		body_start(x, false);
	} else {
		x->ph = PH_HEAD;
		head_watch(z, x);
	}
	*xp = x;
}

static int
body(z_stream *z, struct tm_zx *x)
{
	struct inflate_state *s = &x->is;
	s->next_in = (uint8_t *)(uintptr_t)z->next_in;
	s->avail_in = z->avail_in;
	s->next_out = z->next_out;
	s->avail_out = z->avail_out;
	uint32_t in0 = s->avail_in, out0 = s->avail_out;
	int r = isal_inflate(s);
	z->next_in = s->next_in;
	z->avail_in = s->avail_in;
	z->next_out = s->next_out;
	z->avail_out = s->avail_out;
	z->total_in += in0 - s->avail_in;
	z->total_out += out0 - s->avail_out;
	if (r < 0) {
		x->ph = PH_BAD;
		return Z_DATA_ERROR;
	}
	if (s->block_state == ISAL_BLOCK_FINISH) {
		x->ph = PH_END;
		return Z_STREAM_END;
	}
	return s->avail_in != in0 || s->avail_out != out0 ? Z_OK : Z_BUF_ERROR;
}

int
tm_zx_inflate(z_stream *z, struct tm_zx *x)
{
	if (!x)
		return inflate(z, Z_NO_FLUSH);
	switch (x->ph) {
	case PH_BODY:
		return body(z, x);
	case PH_END:
		return Z_STREAM_END;
	case PH_BAD:
		return Z_DATA_ERROR;
	case PH_ZLIB:
		return inflate(z, Z_NO_FLUSH);
	case PH_HEAD:
		break;
	}
	if (x->first < 0 && z->avail_in)
		x->first = z->next_in[0];
	uInt in0 = z->avail_in;
	/* Z_BLOCK: zlib stops at the first block's start, right after the
	 * header; nothing is written */
	int r = inflate(z, Z_BLOCK);
	if (r != Z_OK && r != Z_BUF_ERROR) {
		x->ph = r == Z_STREAM_END ? PH_END : PH_ZLIB;
		return r;
	}
	bool at_block = (z->data_type & 128) != 0 && (z->data_type & 63) == 0;
	if (!x->head.done || !at_block)
		return in0 != z->avail_in ? Z_OK : Z_BUF_ERROR; /* the header goes on */
	if (x->head.done < 0 && (x->first < 0 || (x->first >> 4) != 7)) {
		/* a zlib header with a smaller window: zlib to the end */
		x->ph = PH_ZLIB;
		return inflate(z, Z_NO_FLUSH);
	}
	body_start(x, x->head.done > 0);
	if (!z->avail_in)
		return Z_OK; /* the header was progress */
	r = body(z, x);
	return r == Z_BUF_ERROR ? Z_OK : r;
}

void
tm_zx_init(z_stream *z, struct tm_zx **xp, int window_bits)
{
	tm_zx_init_fast(z, xp, window_bits, false);
}

void
tm_zx_reset(z_stream *z, struct tm_zx *x)
{
	if (inflateReset(z) != Z_OK)
		abort();
	if (!x)
		return;
	if (x->raw) {
		body_start(x, false);
	} else {
		x->ph = PH_HEAD;
		head_watch(z, x);
	}
}

void
tm_zx_nocheck(z_stream *z, struct tm_zx *x)
{
	/* ISA-L's check costs little: it stays (the bytes were verified once,
	 * so it cannot fail) */
	(void)x;
	if (inflateValidate(z, 0) != Z_OK)
		abort();
}

void
tm_zx_end(z_stream *z, struct tm_zx **xp)
{
	inflateEnd(z);
	free(*xp);
	*xp = NULL;
}

#else /* zlib alone */

struct tm_zx {
	int unused;
};

bool
tm_zx_have_isal(void)
{
	return false;
}

void
tm_zx_init_fast(z_stream *z, struct tm_zx **xp, int window_bits, bool raw_fast)
{
	(void)raw_fast;
	tm_inflate_init(z, window_bits);
	*xp = NULL;
}

void
tm_zx_init(z_stream *z, struct tm_zx **xp, int window_bits)
{
	tm_zx_init_fast(z, xp, window_bits, false);
}

int
tm_zx_inflate(z_stream *z, struct tm_zx *x)
{
	(void)x;
	return inflate(z, Z_NO_FLUSH);
}

void
tm_zx_reset(z_stream *z, struct tm_zx *x)
{
	(void)x;
	if (inflateReset(z) != Z_OK)
		abort();
}

void
tm_zx_nocheck(z_stream *z, struct tm_zx *x)
{
	(void)x;
	if (inflateValidate(z, 0) != Z_OK)
		abort();
}

void
tm_zx_end(z_stream *z, struct tm_zx **xp)
{
	inflateEnd(z);
	*xp = NULL;
}

#endif

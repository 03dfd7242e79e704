/* SPDX-License-Identifier: MIT */
/* Inflate (engine/stream/zinflate.c): ISA-L and zlib alone give the same bytes and
 * the same failures, with the same offsets, for gzip (one member, several,
 * zlib format, header fields, garbage after the last member) and ZIP deflate
 * members, whole, truncated anywhere, with bits flipped, with a bad trailer;
 * through the member streams the scan reads (each run once with ISA-L, once
 * with zlib alone, compared). */
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include "archive_priv.h"
#include "input.h"
#include "t.h"
#include "zinflate.h"

static char dir[] = "/tmp/tm_zinflate_XXXXXX";
static uint64_t rs = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd(uint32_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)(rs % n);
}

/* Trace-like bytes: compressible, with matches near and far. */
static uint8_t *
payload(size_t n)
{
	uint8_t *p = malloc(n);
	for (size_t i = 0; i < n; i++) {
		if (i > 40000 && rnd(8) == 0) { /* a run copied from far back */
			size_t from = i - 1 - rnd(32000), k = 4 + rnd(60);
			for (; k-- && i < n; i++)
				p[i] = p[from++];
			i--;
		} else {
			p[i] = (uint8_t)(rnd(4) ? 'a' + rnd(6) : rnd(256));
		}
	}
	return p;
}

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void
put(struct buf *b, const void *d, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

/* Compress d with window bits wb (31 gzip, 15 zlib, -15 raw), level lv; a
 * gzip header with a name, an extra field and a header CRC when hdr. */
static void
deflate_to(struct buf *b, const uint8_t *d, size_t n, int wb, int lv, bool hdr)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, lv, Z_DEFLATED, wb, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	gz_header h;
	if (hdr) {
		memset(&h, 0, sizeof h);
		static Bytef hn[] = "member.pftrace", hx[] = "XYab";
		h.name = hn;
		h.extra = hx;
		h.extra_len = 4;
		h.hcrc = 1;
		deflateSetHeader(&z, &h);
	}
	uint8_t out[65536];
	z.next_in = (Bytef *)(uintptr_t)d;
	z.avail_in = (uInt)n;
	int r;
	do {
		z.next_out = out;
		z.avail_out = sizeof out;
		r = deflate(&z, Z_FINISH);
		put(b, out, sizeof out - z.avail_out);
	} while (r == Z_OK);
	deflateEnd(&z);
}

static void
le16(struct buf *b, uint32_t v)
{
	uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
	put(b, x, 2);
}

static void
le32(struct buf *b, uint32_t v)
{
	le16(b, v & 0xffff);
	le16(b, v >> 16);
}

/* A ZIP of one deflated member "t.json"-less name "m.pftrace". */
static void
zip_of(struct buf *z, const uint8_t *d, size_t n, int lv)
{
	struct buf c = {0};
	deflate_to(&c, d, n, -15, lv, false);
	uint32_t crc = (uint32_t)crc32(0, d, (uInt)n);
	static const char nm[] = "m.pftrace";
	le32(z, 0x04034b50);
	le16(z, 20), le16(z, 0), le16(z, 8), le16(z, 0), le16(z, 0x21);
	le32(z, crc), le32(z, (uint32_t)c.n), le32(z, (uint32_t)n);
	le16(z, sizeof nm - 1), le16(z, 0);
	put(z, nm, sizeof nm - 1);
	size_t cd = z->n + c.n;
	put(z, c.p, c.n);
	le32(z, 0x02014b50);
	le16(z, 20), le16(z, 20), le16(z, 0), le16(z, 8), le16(z, 0), le16(z, 0x21);
	le32(z, crc), le32(z, (uint32_t)c.n), le32(z, (uint32_t)n);
	le16(z, sizeof nm - 1), le16(z, 0), le16(z, 0), le16(z, 0), le16(z, 0);
	le32(z, 0), le32(z, 0);
	put(z, nm, sizeof nm - 1);
	size_t cdn = z->n - cd;
	le32(z, 0x06054b50);
	le16(z, 0), le16(z, 0), le16(z, 1), le16(z, 1);
	le32(z, (uint32_t)cdn), le32(z, (uint32_t)cd), le16(z, 0);
	free(c.p);
}

/* The visitor of a listing that scans as it goes (tm_input_open_visit):
 * each member's bytes hashed, a dropped member said. */
static enum tm_status
v_member(void *ud, size_t mi, struct tm_stream *st, struct tm_error *err)
{
	struct buf *o = ud;
	uint64_t n = 0;
	uint32_t a = 1;
	enum tm_status t;
	for (;;) {
		const uint8_t *q;
		size_t m;
		if ((t = tm_stream_next(st, &q, &m, err)) != TM_OK || !m)
			break;
		a = (uint32_t)adler32(a, q, (uInt)m);
		n += m;
	}
	tm_stream_close(st);
	char line[2048];
	int k = snprintf(line, sizeof line, "visited %zu: %" PRIu64 " bytes adler %08x status %d %s\n",
			 mi, n, a, (int)t, t == TM_OK ? "" : err->msg);
	put(o, line, (size_t)k);
	return TM_OK;
}

static void
v_drop(void *ud, size_t mi)
{
	char line[64];
	int k = snprintf(line, sizeof line, "dropped %zu\n", mi);
	put(ud, line, (size_t)k);
}

/* What the scan would see of file f: every member's bytes (hashed), how
 * each stream ended and its message; the input's own failure. */
static char *
seen(const char *path)
{
	struct buf o = {0};
	struct tm_input in;
	struct tm_error err;
	const char *p[1] = {path};
	char line[2048];
	tm_error_clear(&err);
	enum tm_status s = tm_input_open(&in, p, 1, &err);
	int k = snprintf(line, sizeof line, "open %d %s\n", (int)s, s == TM_OK ? "" : err.msg);
	put(&o, line, (size_t)k);
	for (size_t mi = 0; s == TM_OK && mi < in.n_members; mi++) {
		const struct tm_member *mb = &in.members[mi];
		k = snprintf(line, sizeof line, "listed %zu: size %" PRIu64 " format %d\n", mi, mb->size,
			     (int)mb->format);
		put(&o, line, (size_t)k);
		struct tm_stream *st;
		tm_error_clear(&err);
		enum tm_status t = tm_stream_open(&in, mi, &st, &err);
		uint64_t n = 0;
		uint32_t a = 1;
		while (t == TM_OK) {
			const uint8_t *q;
			size_t m;
			if ((t = tm_stream_next(st, &q, &m, &err)) != TM_OK || !m)
				break;
			a = (uint32_t)adler32(a, q, (uInt)m);
			n += m;
		}
		if (st && t != TM_ERR_CANCELLED)
			tm_stream_close(st);
		k = snprintf(line, sizeof line, "member %zu: %" PRIu64 " bytes adler %08x status %d %s\n",
			     mi, n, a, (int)t, t == TM_OK ? "" : err.msg);
		put(&o, line, (size_t)k);
	}
	if (s == TM_OK)
		tm_input_close(&in);
	/* listed while scanned (as a session lists: ZIP entries inflated once) */
	struct tm_visit v = {v_member, v_drop, &o};
	tm_error_clear(&err);
	s = tm_input_open_visit(&in, p, 1, NULL, 0, &v, NULL, &err);
	k = snprintf(line, sizeof line, "visit-open %d %s\n", (int)s, s == TM_OK ? "" : err.msg);
	put(&o, line, (size_t)k);
	for (size_t mi = 0; s == TM_OK && mi < in.n_members; mi++) {
		const struct tm_member *mb = &in.members[mi];
		k = snprintf(line, sizeof line, "visit-listed %zu: size %" PRIu64 " format %d %s\n", mi,
			     mb->size, (int)mb->format, mb->error ? mb->error : "");
		put(&o, line, (size_t)k);
	}
	if (s == TM_OK)
		tm_input_close(&in);
	put(&o, "", 1);
	return (char *)o.p;
}

static void
write_file(const char *path, const uint8_t *d, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, d, n) != (ssize_t)n)
		abort();
	close(fd);
}

static int cases, differ;

/* The file of bytes d, read once with ISA-L, once with zlib alone. */
static void
same(const char *name, const uint8_t *d, size_t n)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	write_file(path, d, n);
	tm_zx_zlib_only = false;
	char *a = seen(path);
	tm_zx_zlib_only = true;
	char *b = seen(path);
	tm_zx_zlib_only = false;
	if (getenv("ZX_KEEP") && strcmp(a, b) != 0) {
		char keep[300];
		snprintf(keep, sizeof keep, "%s/%s", getenv("ZX_KEEP"), name);
		write_file(keep, d, n);
	}
	cases++;
	if (strcmp(a, b) != 0) {
		differ++;
		if (getenv("ZX_LIST"))
			fprintf(stderr, "differ: %s\n", name);
		FAILF("%s (%zu bytes): ISA-L:\n%s\nzlib:\n%s", name, n, a, b);
	}
	free(a);
	free(b);
	unlink(path);
}

/* Whole, truncated at a spread of points (the header's bytes, the first
 * block, the trailer's each), bits flipped, garbage and a bad trailer. */
static void
mangle(const char *kind, const struct buf *z, bool trailer)
{
	char name[64];
	uint8_t *c = malloc(z->n + 64);
	snprintf(name, sizeof name, "%s.whole", kind);
	same(name, z->p, z->n);
	for (size_t cut = 0; cut < z->n; cut += cut < 40 ? 1 : z->n - cut > 40 ? 1 + rnd((uint32_t)(z->n / 23)) : 1) {
		snprintf(name, sizeof name, "%s.cut%zu", kind, cut);
		same(name, z->p, cut);
	}
	for (int i = 0; i < 60; i++) {
		memcpy(c, z->p, z->n);
		size_t at = i < 20 ? rnd(64) : rnd((uint32_t)z->n);
		c[at] ^= (uint8_t)(1u << rnd(8));
		snprintf(name, sizeof name, "%s.flip%zu", kind, at);
		same(name, c, z->n);
	}
	if (trailer) {
		memcpy(c, z->p, z->n);
		c[z->n - 5] ^= 0x10; /* the CRC-32 / Adler-32 */
		snprintf(name, sizeof name, "%s.crc", kind);
		same(name, c, z->n);
		memcpy(c, z->p, z->n);
		c[z->n - 1] ^= 0x01; /* ISIZE (gzip) */
		snprintf(name, sizeof name, "%s.size", kind);
		same(name, c, z->n);
	}
	for (int g = 1; g <= 20; g += 6) {
		memcpy(c, z->p, z->n);
		for (int k = 0; k < g; k++)
			c[z->n + (size_t)k] = (uint8_t)(k ? rnd(256) : 0x1f);
		snprintf(name, sizeof name, "%s.garbage%d", kind, g);
		same(name, c, z->n + (size_t)g);
	}
	free(c);
}

static void
t_gzip_members(void)
{
	size_t n = 700000;
	uint8_t *d = payload(n);
	struct buf z = {0};
	deflate_to(&z, d, n, 31, 6, false);
	mangle("one.gz", &z, true);
	z.n = 0;
	deflate_to(&z, d, n / 3, 31, 1, true); /* header fields, a header CRC */
	deflate_to(&z, d + n / 3, n / 3, 31, 9, false);
	deflate_to(&z, d, 0, 31, 6, false); /* an empty member */
	deflate_to(&z, d + 2 * (n / 3), n - 2 * (n / 3), 31, 0, false); /* stored */
	mangle("multi.gz", &z, true);
	free(z.p);
	free(d);
}

/* A ctrace-like zlib stream: .gz by name, zlib by its header. */
static void
t_zlib_format(void)
{
	size_t n = 300000;
	uint8_t *d = payload(n);
	struct buf z = {0};
	deflate_to(&z, d, n, 15, 6, false);
	mangle("zlib.gz", &z, true);
	z.n = 0;
	deflate_to(&z, d, n, 12, 6, false); /* a 4 KiB window: zlib to the end */
	mangle("zlib12.gz", &z, true);
	free(z.p);
	free(d);
}

static void
t_zip_deflate(void)
{
	size_t n = 500000;
	uint8_t *d = payload(n);
	struct buf z = {0};
	zip_of(&z, d, n, 6);
	mangle("one.zip", &z, false);
	free(z.p);
	free(d);
}

/* The same with the producer's steps small: many calls, short outputs
 * (ISA-L's own output buffering), and on the consumer's thread. */
static void
t_small_steps(void)
{
	size_t n = 200000;
	uint8_t *d = payload(n);
	struct buf z = {0};
	deflate_to(&z, d, n / 2, 31, 6, false);
	deflate_to(&z, d + n / 2, n - n / 2, 31, 6, false);
	tm_gz_tune.step = 1000;
	tm_gz_tune.block = 777;
	mangle("small.gz", &z, true);
	tm_gz_tune.no_thread = true;
	mangle("sync.gz", &z, true);
	z.n = 0;
	zip_of(&z, d, n, 9);
	mangle("small.zip", &z, false);
	memset(&tm_gz_tune, 0, sizeof tm_gz_tune);
	free(z.p);
	free(d);
}

/* Straight through tm_zx_*: output windows of every size, the bytes and
 * the end the same as zlib's. */
static void
t_api(void)
{
	size_t n = 400000;
	uint8_t *d = payload(n), *o = malloc(n + 1);
	struct buf z = {0};
	deflate_to(&z, d, n, 31, 6, false);
	for (int pass = 0; pass < 2; pass++) {
		tm_zx_zlib_only = pass;
		z_stream s;
		struct tm_zx *x;
		tm_zx_init(&s, &x, 15 + 32);
		CHECK(pass || tm_zx_have_isal() == (x != NULL));
		size_t at = 0, got = 0;
		int r = Z_OK;
		while (r == Z_OK || r == Z_BUF_ERROR) {
			if (!s.avail_in && at < z.n) {
				size_t k = 1 + rnd(5000);
				k = k > z.n - at ? z.n - at : k;
				s.next_in = z.p + at;
				s.avail_in = (uInt)k;
				at += k;
			} else if (!s.avail_in && r == Z_BUF_ERROR) {
				break;
			}
			size_t room = 1 + rnd(3000);
			room = room > n + 1 - got ? n + 1 - got : room;
			s.next_out = o + got;
			s.avail_out = (uInt)room;
			r = tm_zx_inflate(&s, x);
			got += room - s.avail_out;
		}
		CHECK_INT(r, Z_STREAM_END);
		CHECK_INT(got, n);
		CHECK(memcmp(o, d, n) == 0);
		tm_zx_end(&s, &x);
	}
	tm_zx_zlib_only = false;
	free(z.p);
	free(o);
	free(d);
}

/* tm_crc32 is zlib's crc32, chained across pieces of any size. */
static void
t_crc(void)
{
	size_t n = 100000;
	uint8_t *d = payload(n);
	for (int k = 0; k < 50; k++) {
		size_t at = 0;
		uint32_t a = 0, b = 0;
		while (at < n) {
			size_t len = rnd(k < 25 ? 64 : 9000);
			len = len > n - at ? n - at : len;
			a = tm_crc32(a, d + at, len);
			b = (uint32_t)crc32(b, d + at, (uInt)len);
			at += len;
		}
		CHECK_INT(a, b);
	}
	CHECK_INT(tm_crc32(0, d, 0), 0);
	free(d);
}

int
main(void)
{
	if (!mkdtemp(dir))
		return 1;
	RUN(t_api);
	RUN(t_crc);
	RUN(t_gzip_members);
	RUN(t_zlib_format);
	RUN(t_zip_deflate);
	RUN(t_small_steps);
	rmdir(dir);
	printf("# %d inputs compared, %d differ; ISA-L %s\n", cases, differ,
	       tm_zx_have_isal() ? "built in" : "not built in (zlib alone)");
	return 0;
}

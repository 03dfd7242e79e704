/* SPDX-License-Identifier: MIT */
/*
 * The format of a saved scan (scancache_ser.h): the payload's checksum,
 * the one serializer for both directions, and the structures it writes
 * (a scan, its op log and alignment samples, a member's record).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scancache_ser.h"
#include "tracknames.h"

/* ---- the checksum ---- */

/* A 64-bit hash of the payload, four 64-bit lanes of multiply-rotate rounds
 * over 32-byte stripes (in the manner of xxHash64): several bytes a cycle,
 * where crc32 was the largest cost of a reopen.  Not a defence against a
 * writer who means harm (the file is the user's own, and every structure is
 * checked anyway): against damage. */
#define H1 0x9e3779b185ebca87ull
#define H2 0xc2b2ae3d27d4eb4full
#define H3 0x165667b19e3779f9ull

static inline uint64_t
rotl64(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

static inline uint64_t
ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8); /* host order: a file is read by the build that wrote it */
	return v;
}

static inline uint64_t
h_round(uint64_t a, uint64_t w)
{
	return rotl64(a + w * H2, 31) * H1;
}

void
tm_sc_h_init(struct hash *h)
{
	*h = (struct hash){{H1 + H2, H2, 0, (uint64_t)0 - H1}, {0}, 0, 0};
}

static void
h_stripes(struct hash *h, const uint8_t *p, size_t n)
{
	uint64_t a = h->v[0], b = h->v[1], c = h->v[2], d = h->v[3];
	for (; n >= 32; n -= 32, p += 32) {
		a = h_round(a, ld64(p));
		b = h_round(b, ld64(p + 8));
		c = h_round(c, ld64(p + 16));
		d = h_round(d, ld64(p + 24));
	}
	h->v[0] = a;
	h->v[1] = b;
	h->v[2] = c;
	h->v[3] = d;
}

static void
h_add(struct hash *h, const void *vp, size_t n)
{
	const uint8_t *p = vp;
	if (n == 0) /* vp may be NULL then; memcpy must not see it */
		return;
	h->total += n;
	if (h->nt) {
		size_t k = n < 32 - h->nt ? n : 32 - h->nt;
		memcpy(h->tail + h->nt, p, k);
		h->nt += k;
		p += k;
		n -= k;
		if (h->nt < 32)
			return;
		h_stripes(h, h->tail, 32);
		h->nt = 0;
	}
	size_t m = n & ~(size_t)31;
	h_stripes(h, p, m);
	memcpy(h->tail, p + m, n - m);
	h->nt = n - m;
}

uint64_t
tm_sc_h_final(const struct hash *h)
{
	uint64_t x = rotl64(h->v[0], 1) + rotl64(h->v[1], 7) + rotl64(h->v[2], 12) +
		     rotl64(h->v[3], 18);
	for (int i = 0; i < 4; i++)
		x = (x ^ h_round(0, h->v[i])) * H1 + H3;
	x += h->total;
	size_t i = 0;
	for (; i + 8 <= h->nt; i += 8)
		x = rotl64(x ^ h_round(0, ld64(h->tail + i)), 27) * H1 + H3;
	for (; i < h->nt; i++)
		x = rotl64(x ^ h->tail[i] * H3, 11) * H1;
	x ^= x >> 33;
	x *= H2;
	x ^= x >> 29;
	x *= H3;
	return x ^ x >> 32;
}

uint64_t
tm_scancache_hash(const void *p, size_t n)
{
	struct hash h;
	tm_sc_h_init(&h);
	h_add(&h, p, n);
	return tm_sc_h_final(&h);
}

/* ---- one serializer for both directions ---- */

/* Reading goes through one buffer, hashed in pieces as it is refilled
 * (rd_hash): no copy of the file is held; a log's out-of-line deltas are
 * checked as they pass and stay in the file (tm_oplog_use_source).
 * Writing gathers in a buffer too (wr_flush). */
/* Read and written through 64 KiB: a fresh 1 MiB buffer faulted in 256
 * pages on every load, a quarter of a warm load's page faults for a 3 MB
 * file (the kernel's copy costs the same through either). */
size_t tm_scancache_io_buf = 64u << 10;

/* The bytes taken since the last call hashed: in pieces as large as the
 * buffer allows, not per value taken (h_add's calls cost more than its
 * rounds for 8-byte values). */
void
tm_sc_rd_hash(struct ser *z)
{
	h_add(&z->h, z->buf + z->hpos, z->pos - z->hpos);
	z->hpos = z->pos;
}

/* The hash started again: what was taken before is not hashed. */
void
tm_sc_rd_hash_restart(struct ser *z)
{
	tm_sc_h_init(&z->h);
	z->hpos = z->pos;
}

/* The next n bytes of the file in buf (contiguous), not yet taken; false
 * when the file ends first. */
static bool
rd_fill(struct ser *z, size_t n)
{
	if (z->end - z->pos >= n)
		return true;
	if (z->pos) {
		tm_sc_rd_hash(z);
		memmove(z->buf, z->buf + z->pos, z->end - z->pos);
		z->end -= z->pos;
		z->pos = z->hpos = 0;
	}
	if (n > z->cap) {
		z->buf = xrealloc(z->buf, n);
		z->cap = n;
	}
	while (z->end < n) {
		ssize_t k = read(z->fd, z->buf + z->end, z->cap - z->end);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			z->rerr = true;
			return false;
		}
		z->end += (size_t)k;
	}
	return true;
}

/* Past n payload bytes in the buffer (hashed later: rd_hash). */
static inline void
rd_adv(struct ser *z, size_t n)
{
	z->pos += n;
	z->at += n;
	z->left -= n;
}

/* Take n payload bytes (hashed later: rd_hash), NULL past the end of the
 * payload. */
const uint8_t *
tm_sc_rd_take(struct ser *z, size_t n)
{
	if (n > z->left || !rd_fill(z, n))
		return NULL;
	const uint8_t *p = z->buf + z->pos;
	rd_adv(z, n);
	return p;
}

/* Reading, the next n payload bytes when they are in the buffer already
 * (the fast paths: no refill, no error to set), else NULL; rd_adv takes
 * them. */
static inline const uint8_t *
rd_here(const struct ser *z, size_t n)
{
	return !z->wr && !z->bad && z->left >= n && z->end - z->pos >= n ? z->buf + z->pos : NULL;
}

/* A u64 as saved: little-endian (ser_u64_bytes). */
static inline uint64_t
rd_le64(const uint8_t *p)
{
	uint64_t v = ld64(p);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* Writing: p[0..n) hashed and written, a failure kept for the end. */
static void
wr_out(struct ser *z, const void *p, size_t n)
{
	h_add(&z->h, p, n);
	const uint8_t *b = p;
	while (n && !z->werr) {
		ssize_t k = write(z->wfd, b, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			z->werr = true;
			break;
		}
		b += k;
		n -= (size_t)k;
		z->wrote += (uint64_t)k;
	}
}

/* The bytes gathered in buf, in one piece (a call of each per value cost
 * more than the value). */
void
tm_sc_wr_flush(struct ser *z)
{
	wr_out(z, z->buf, z->end);
	z->end = 0;
}

static void
ser_raw(struct ser *z, void *p, size_t n)
{
	if (z->wr) {
		if (!n) /* p may be NULL then */
			return;
		if (n > z->cap - z->end) {
			tm_sc_wr_flush(z);
			if (n > z->cap) { /* a large blob: as it is */
				wr_out(z, p, n);
				return;
			}
		}
		memcpy(z->buf + z->end, p, n);
		z->end += n;
		return;
	}
	/* large blobs straight into place, through the buffer in pieces */
	uint8_t *o = p;
	size_t done = 0;
	while (!z->bad && done < n) {
		size_t k = n - done < tm_scancache_io_buf ? n - done : tm_scancache_io_buf;
		const uint8_t *q = tm_sc_rd_take(z, k);
		if (!q)
			break;
		memcpy(o + done, q, k);
		done += k;
	}
	if (done < n) { /* what is left is still hashed (tm_scancache_load) */
		if (!z->bad)
			z->bad = "file cut off";
		memset(p, 0, n);
	}
}

/* reading: the deltas of the log being read, in order (tm_oplog_deltas) */
static const uint8_t *
rd_deltas(void *ctx, uint64_t off, uint64_t len)
{
	struct ser *z = ctx;
	if (z->bad || off != z->d_done || len > z->dl->len - z->d_done || len > SIZE_MAX / 2)
		return NULL;
	const uint8_t *p = tm_sc_rd_take(z, (size_t)len);
	if (p)
		z->d_done += len;
	return p;
}

/* the general way (writing, or a value across a refill) */
static __attribute__((noinline)) void
ser_u64_bytes(struct ser *z, uint64_t *v)
{
	uint8_t b[8];
	if (z->wr)
		for (int i = 0; i < 8; i++)
			b[i] = (uint8_t)(*v >> (8 * i));
	ser_raw(z, b, 8);
	if (!z->wr) {
		*v = 0;
		for (int i = 0; i < 8; i++)
			*v |= (uint64_t)b[i] << (8 * i);
	}
}

/* in place in the buffer when it has the value or room for it (most
 * values), inline */
inline void
tm_sc_ser_u64(struct ser *z, uint64_t *v)
{
	if (z->wr && z->cap - z->end >= 8) {
		uint64_t x = *v;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
		x = __builtin_bswap64(x); /* stored little-endian, as ser_u64_bytes */
#endif
		memcpy(z->buf + z->end, &x, 8);
		z->end += 8;
		return;
	}
	const uint8_t *p = rd_here(z, 8);
	if (p) {
		*v = rd_le64(p);
		rd_adv(z, 8);
		return;
	}
	ser_u64_bytes(z, v);
}

static inline void
ser_i64(struct ser *z, int64_t *v)
{
	uint64_t u = (uint64_t)*v;
	tm_sc_ser_u64(z, &u);
	*v = (int64_t)u;
}

/* A value that must be at most max on reading. */
static inline uint64_t
ser_max(struct ser *z, uint64_t v, uint64_t max, const char *what)
{
	tm_sc_ser_u64(z, &v);
	if (!z->wr && v > max) {
		if (!z->bad)
			z->bad = what;
		v = 0;
	}
	return v;
}

static inline void
ser_u32(struct ser *z, uint32_t *v)
{
	*v = (uint32_t)ser_max(z, *v, UINT32_MAX, "value out of range");
}

static inline void
ser_bool(struct ser *z, bool *v)
{
	*v = ser_max(z, *v, 1, "flag out of range") != 0;
}

/* An array of n elements of elem bytes (n stored first); reading
 * allocates n * elem + 1 zeroed bytes (never more than the file holds). */
void
tm_sc_ser_blob(struct ser *z, void **p, size_t *n, size_t elem)
{
	size_t cnt = (size_t)ser_max(z, *n, z->wr ? UINT64_MAX : z->left / elem, "count larger than the file");
	if (!z->wr) {
		*p = cnt ? xcalloc(cnt * elem + 1, 1) : NULL;
		*n = cnt;
	}
	if (cnt)
		ser_raw(z, *p, cnt * elem);
}

/* A string or NULL; a string read back has no NUL inside. */
void
tm_sc_ser_str(struct ser *z, char **s)
{
	bool has = *s != NULL;
	ser_bool(z, &has);
	if (!has) {
		if (!z->wr)
			*s = NULL;
		return;
	}
	size_t n = z->wr ? strlen(*s) : 0;
	void *p = *s;
	tm_sc_ser_blob(z, &p, &n, 1);
	if (!z->wr) {
		*s = p ? p : xstrdup("");
		if (strlen(*s) != n && !z->bad)
			z->bad = "string with a NUL inside";
	}
}

/* A string in a char[cap] field. */
static void
ser_fixstr(struct ser *z, char *buf, size_t cap)
{
	uint64_t n = ser_max(z, z->wr ? strlen(buf) : 0, cap - 1, "string too long");
	if (!z->wr)
		memset(buf, 0, cap);
	ser_raw(z, buf, (size_t)n);
	if (!z->wr && strlen(buf) != n && !z->bad)
		z->bad = "string with a NUL inside";
}

/* ---- the structures ---- */

static void
ser_error(struct ser *z, struct tm_error *e)
{
	e->code = (enum tm_status)ser_max(z, e->code, TM_ERR_CANCELLED, "unknown status");
	int64_t en = e->sys_errno;
	ser_i64(z, &en);
	e->sys_errno = (int)en;
	ser_fixstr(z, e->msg, sizeof e->msg);
	ser_fixstr(z, e->hint, sizeof e->hint);
	ser_fixstr(z, e->tp, sizeof e->tp);
}

static void
ser_detail(struct ser *z, struct tm_detail *d)
{
	uint32_t ph = (uint8_t)d->phase | (uint32_t)d->queue << 8 | (uint32_t)d->flags << 16;
	ser_u32(z, &d->name);
	ser_u32(z, &ph);
	d->phase = (char)(ph & 0xff);
	d->queue = (uint8_t)(ph >> 8);
	d->flags = (uint8_t)(ph >> 16);
	tm_sc_ser_u64(z, &d->track);
	ser_i64(z, &d->dur);
}

static void
ser_tn(struct ser *z, struct tm_tn_rec *r)
{
	uint32_t wk = r->what | (uint32_t)(uint8_t)r->kind << 8;
	tm_sc_ser_u64(z, &r->key);
	tm_sc_ser_u64(z, &r->parent);
	ser_i64(z, &r->pid);
	ser_i64(z, &r->tid);
	ser_u32(z, &r->name);
	ser_u32(z, &wk);
	r->what = (uint8_t)(wk & 0xff);
	r->kind = (char)(wk >> 8 & 0xff);
}

static void
count_put(void *ctx, const void *p, size_t n)
{
	(void)p;
	*(size_t *)ctx += n;
}

static void
ser_put(void *ctx, const void *p, size_t n)
{
	ser_raw(ctx, (void *)(uintptr_t)p, n);
}

/* A log: its counters, details and pool, then its head and its
 * out-of-line deltas (tm_oplog_write_split).  Reading checks the head with
 * the deltas as they pass (tm_oplog_valid_split), before anything uses it;
 * the deltas stay in the file. */
static void
ser_oplog(struct ser *z, struct tm_oplog *l)
{
	tm_sc_ser_u64(z, &l->n_ops);
	ser_i64(z, &l->last_ts);
	tm_sc_ser_u64(z, &l->last_off);
	ser_bool(z, &l->use_runs);
	tm_sc_ser_u64(z, &l->n_runs);
	tm_sc_ser_u64(z, &l->n_run_elems);
	/* details, each field by field (min 28 bytes on disk) */
	const struct tm_oplog_x *lx = l->x;
	size_t nd = (size_t)ser_max(z, lx->n_details, z->wr ? UINT64_MAX : z->left / 28,
				    "count larger than the file");
	struct tm_detail *det = z->wr ? lx->details : nd ? xcalloc(nd, sizeof *det) : NULL;
	for (size_t i = 0; i < nd && !z->bad; i++)
		ser_detail(z, &det[i]);
	void *pool = lx->pool.data;
	size_t pool_len = lx->pool.len;
	tm_sc_ser_blob(z, &pool, &pool_len, 1);
	/* the names of its tracks (tracknames.h), each field by field (min 48
	 * bytes on disk) */
	size_t nt = (size_t)ser_max(z, lx->tn ? lx->tn->n : 0, z->wr ? UINT64_MAX : z->left / 48,
				    "count larger than the file");
	struct tm_tn_rec *tn = z->wr ? (lx->tn ? lx->tn->v : NULL) : nt ? xcalloc(nt, sizeof *tn) : NULL;
	for (size_t i = 0; i < nt && !z->bad; i++)
		ser_tn(z, &tn[i]);
	if (!z->wr && (det || pool || tn)) { /* the side block only when used (oplog.h) */
		struct tm_oplog_x *x = tm_oplog_x_own(l);
		x->details = det;
		x->n_details = x->cap_details = nd;
		x->pool.data = pool;
		x->pool.len = pool_len;
		x->pool.cap = pool ? pool_len + 1 : 0;
		if (tn) {
			x->tn = xcalloc(1, sizeof *x->tn);
			x->tn->v = tn;
			x->tn->n = x->tn->cap = nt;
		}
		if (!z->bad && !tm_tn_valid(x, z->why, sizeof z->why))
			z->bad = z->why;
		tm_tn_reindex(x);
	}
	if (z->wr) {
		size_t hl = 0;
		uint64_t dl = tm_oplog_write_split(l, count_put, &hl, NULL, NULL);
		tm_sc_ser_u64(z, &(uint64_t){hl});
		tm_oplog_write_split(l, ser_put, z, NULL, NULL);
		tm_sc_ser_u64(z, &dl);
		tm_oplog_write_split(l, NULL, NULL, ser_put, z);
		return;
	}
	/* the bytes as a big buffer (internal.h: a heap block of TM_MAP_MIN
	 * bytes or more would be taken for a mapping) */
	size_t len = (size_t)ser_max(z, 0, z->left, "count larger than the file");
	if (len) {
		tm_big_resize((void **)&l->bytes, &l->cap, len, 1, TM_BIG_MIN);
		ser_raw(z, l->bytes, len);
	}
	l->len = len;
	z->dl->len = ser_max(z, 0, z->left, "count larger than the file");
	z->dl->off = z->at;
	z->d_done = 0;
	if (z->bad)
		return;
	struct tm_oplog_deltas d = {rd_deltas, z};
	if (!tm_oplog_valid_split(l, &d, &z->dl->mem, z->why, sizeof z->why))
		z->bad = z->why;
	else if (z->d_done != z->dl->len)
		z->bad = "deltas no run refers to";
}

/* an occurrence the general way (writing, across a refill, damage) */
static __attribute__((noinline)) void
ser_occ_slow(struct ser *z, struct al_occ *o)
{
	ser_i64(z, &o->ts);
	ser_u32(z, &o->clock);
	ser_u32(z, &o->machine);
	tm_sc_ser_u64(z, &o->off);
}

/* Reading, with the four values in the buffer (most occurrences): taken at
 * once, not four times through ser_u64's tests (a third of a warm load's
 * own instructions for 1,000 members); a clock or machine out of range
 * goes the general way, which says so. */
static inline void
ser_occ(struct ser *z, struct al_occ *o)
{
	const uint8_t *p = rd_here(z, 32);
	if (p) {
		uint64_t clock = rd_le64(p + 8), machine = rd_le64(p + 16);
		if (clock <= UINT32_MAX && machine <= UINT32_MAX) {
			*o = (struct al_occ){(int64_t)rd_le64(p), (uint32_t)clock, (uint32_t)machine,
					     rd_le64(p + 24)};
			rd_adv(z, 32);
			return;
		}
	}
	ser_occ_slow(z, o);
}

static void
ser_align(struct ser *z, struct tm_align_samples **ap)
{
	bool has = *ap != NULL;
	ser_bool(z, &has);
	if (!has)
		return;
	if (!z->wr)
		*ap = tm_al_new();
	struct tm_align_samples *a = *ap;
	/* the arrays in first-seen order; the indexes are rebuilt on reading */
	a->n_names = (size_t)ser_max(z, a->n_names, AL_NAMES, "too many alignment names");
	ser_bool(z, &a->names_full);
	a->n_ids = (size_t)ser_max(z, a->n_ids, AL_IDS, "too many alignment ids");
	tm_sc_ser_u64(z, &a->id_mask);
	tm_sc_ser_u64(z, &a->n_id_events);
	if (!z->wr) {
		if (z->bad)
			a->n_names = a->n_ids = 0;
		a->names = a->n_names ? xcalloc(a->n_names, sizeof *a->names) : NULL;
		a->ids = a->n_ids ? xcalloc(a->n_ids, sizeof *a->ids) : NULL;
		a->cap_names = a->n_names;
		a->cap_ids = a->n_ids;
	}
	for (size_t i = 0; i < a->n_names; i++) {
		struct al_name *e = &a->names[i];
		void *nm = e->name;
		tm_sc_ser_blob(z, &nm, &e->len, 1);
		e->name = nm;
		tm_sc_ser_u64(z, &e->h);
		tm_sc_ser_u64(z, &e->count);
		ser_bool(z, &e->all_instant);
		/* the occurrences unpacked (tm_al_occs), as format 4 wrote them */
		struct al_occ occ[AL_OCC];
		uint32_t n = z->wr ? tm_al_occs(e, occ) : 0;
		n = (uint32_t)ser_max(z, n, AL_OCC, "alignment occurrences");
		uint32_t kept = 0; /* (reading: those read before anything went bad) */
		for (uint32_t k = 0; k < n; k++) {
			ser_occ(z, &occ[k]);
			kept += !z->bad;
		}
		if (z->wr)
			continue;
		/* each written against the one before it, the bytes stored at once */
		tm_al_name_keep_all(e, occ, kept);
		bool added = e->name && e->h && !z->bad && tm_al_name_index(a, i);
		if (!added && !z->bad)
			z->bad = "alignment name empty or twice";
	}
	for (size_t i = 0; i < a->n_ids; i++) {
		struct al_id *e = &a->ids[i];
		void *id = e->ident;
		tm_sc_ser_blob(z, &id, &e->ident_len, 1);
		e->ident = id;
		tm_sc_ser_u64(z, &e->key);
		uint32_t have = e->have;
		ser_u32(z, &have);
		e->have = (uint8_t)have;
		ser_occ(z, &e->out);
		ser_occ(z, &e->in);
		if (z->wr)
			continue;
		bool added = false;
		if (e->ident && e->key && have <= (AL_OUT | AL_IN))
			tm_strmap_put(&a->id_ix, e->ident, e->ident_len, i, &added);
		if (!added && !z->bad)
			z->bad = "alignment id";
	}
}

static void
ser_scan(struct ser *z, struct tm_scan *sc)
{
	sc->format = (enum tm_format)ser_max(z, sc->format, TM_FMT__COUNT - 1, "unknown format");
	tm_sc_ser_u64(z, &sc->n_packets);
	tm_sc_ser_u64(z, &sc->n_events);
	tm_sc_ser_u64(z, &sc->clocks_seen[0]);
	tm_sc_ser_u64(z, &sc->clocks_seen[1]);
	ser_bool(z, &sc->has_snapshot);
	ser_bool(z, &sc->unpredicted);
	size_t ne = sc->n_embedded;
	void *emb = sc->embedded;
	tm_sc_ser_blob(z, &emb, &ne, sizeof(uint32_t));
	if (!z->wr) {
		if (ne > UINT32_MAX) {
			if (!z->bad)
				z->bad = "too many embedded machines";
			free(emb);
			emb = NULL;
			ne = 0;
		}
		sc->embedded = emb;
		sc->n_embedded = sc->cap_embedded = (uint32_t)ne;
	}
	ser_bool(z, &sc->has_raw_ts);
	ser_i64(z, &sc->raw_min);
	ser_i64(z, &sc->raw_max);
	tm_sc_ser_str(z, &sc->warning);
	ser_bool(z, &sc->failed);
	/* the scan's error exists only when it has one (tm_scan_err); most
	 * have none, saved as ser_error's five zeros: read past them without
	 * clearing a struct tm_error (2.5 KB) twice over */
	static const uint8_t no_error[40];
	const uint8_t *p = rd_here(z, 40);
	if (p && !memcmp(p, no_error, 40)) {
		rd_adv(z, 40);
	} else {
		struct tm_error e0 = {0}, *se = sc->err ? sc->err : &e0;
		ser_error(z, se);
		if (!z->wr && !sc->err && (e0.code || e0.msg[0] || e0.tp[0]))
			*tm_scan_err(sc) = e0;
	}
	ser_align(z, &sc->align);
	ser_oplog(z, &sc->log);
}

void
tm_sc_ser_member(struct ser *z, struct member_rec *r)
{
	ser_bool(z, &r->has_scan);
	tm_sc_ser_u64(z, &r->size);
	tm_sc_ser_str(z, &r->error);
	if (!r->has_scan)
		return;
	if (!z->wr) {
		r->scan = xcalloc(1, sizeof *r->scan);
		tm_scan_init(r->scan, TM_FMT_UNKNOWN);
	}
	z->dl = &r->deltas;
	ser_scan(z, r->scan);
}


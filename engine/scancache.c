/* SPDX-License-Identifier: MIT */
/*
 * Saved scans: what tm_session_scan kept for each input (its members' op
 * logs, summaries and alignment samples, and what the scan learned about
 * each member), written to a cache directory so that reopening an unchanged
 * input loads it instead of reading the trace again (as ncdu reuses an
 * exported scan).
 *
 * One file per input path: NAME.tmscan, NAME a hash of the key.  The key is
 * the path as given (error texts name it), the file's device, inode, size,
 * mtime and ctime, the session options that change what a scan keeps, and
 * this build (version, cache format, op log encoding, the executable's
 * identity).  The whole key is stored and compared again on load.
 *
 * Layout: a 32-byte header (magic, format, encoding, payload length, CRC-32
 * of the payload), then the payload that ser_* below writes and reads: the
 * same functions do both, so the format is written down once.  Loading
 * checks the header, the key, the listing of the input's members, the CRC,
 * and then every structure the replay trusts (tm_oplog_valid, the alignment
 * tables, counts and ranges); any failure ignores the file with a note and
 * the input is scanned as usual.  Files not owned by the user or writable by
 * others are not read.  Writing goes to a temp file in the directory, renamed
 * over the name when complete (no fsync: see save_group); afterwards the
 * least recently used files are removed until the directory is within its
 * cap.
 */
#include "scancache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "align_scan.h"
#include "scan.h"
#include "session.h"

/* Bump with every change of the ser_* functions below. */
#define CACHE_FORMAT 1u
#define CACHE_MAGIC "TMSCAN\032\n"
#define HEADER_BYTES 32u
#define CACHE_EXT ".tmscan"
/* A file changed this recently when it was opened is not saved: a second
 * change within the same timestamp tick (coarse on Linux, 2 s on FAT)
 * would leave size, mtime and ctime as they were (git's "racy" entries). */
int tm_scancache_racy_s = 2;

/* ---- the input's identity ---- */



static bool
key_of(const char *path, struct tm_cache_key *k)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	*k = (struct tm_cache_key){(uint64_t)st.st_dev,	   (uint64_t)st.st_ino,
				(uint64_t)st.st_size,	   (int64_t)st.st_mtim.tv_sec,
				(int64_t)st.st_mtim.tv_nsec, (int64_t)st.st_ctim.tv_sec,
				(int64_t)st.st_ctim.tv_nsec};
	return true;
}

/* This build: a saved scan is read only by the build that wrote it. */
static void
build_id(struct tm_buf *b)
{
	struct stat st;
	tm_buf_addf(b, "tracemerge %s cache %u oplog %u", TM_VERSION, CACHE_FORMAT,
		    TM_OPLOG_ENCODING);
	if (stat("/proc/self/exe", &st) == 0)
		tm_buf_addf(b, " exe %ju:%ju:%jd:%jd.%09ld", (uintmax_t)st.st_dev,
			    (uintmax_t)st.st_ino, (intmax_t)st.st_size, (intmax_t)st.st_mtim.tv_sec,
			    (long)st.st_mtim.tv_nsec);
}

/* ---- one serializer for both directions ---- */

struct ser {
	bool wr;
	FILE *f;
	uLong crc;
	uint64_t left;   /* reading: payload bytes not yet read */
	const char *bad; /* reading: the first problem found */
	bool werr;       /* writing: a write failed */
};

static void
crc_add(struct ser *z, const void *p, size_t n)
{
	const Bytef *b = p;
	while (n) {
		uInt k = n > (1u << 30) ? 1u << 30 : (uInt)n;
		z->crc = crc32(z->crc, b, k);
		b += k;
		n -= k;
	}
}

static void
ser_raw(struct ser *z, void *p, size_t n)
{
	if (z->wr) {
		if (n && fwrite(p, 1, n, z->f) != n)
			z->werr = true;
		crc_add(z, p, n);
		return;
	}
	if (z->bad || n > z->left || (n && fread(p, 1, n, z->f) != n)) {
		if (!z->bad)
			z->bad = "file cut off";
		z->left = 0;
		memset(p, 0, n);
		return;
	}
	z->left -= n;
	crc_add(z, p, n);
}

static void
ser_u64(struct ser *z, uint64_t *v)
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

static void
ser_i64(struct ser *z, int64_t *v)
{
	uint64_t u = (uint64_t)*v;
	ser_u64(z, &u);
	*v = (int64_t)u;
}

/* A value that must be at most max on reading. */
static uint64_t
ser_max(struct ser *z, uint64_t v, uint64_t max, const char *what)
{
	ser_u64(z, &v);
	if (!z->wr && v > max) {
		if (!z->bad)
			z->bad = what;
		v = 0;
	}
	return v;
}

static void
ser_u32(struct ser *z, uint32_t *v)
{
	*v = (uint32_t)ser_max(z, *v, UINT32_MAX, "value out of range");
}

static void
ser_bool(struct ser *z, bool *v)
{
	*v = ser_max(z, *v, 1, "flag out of range") != 0;
}

/* An array of n elements of elem bytes (n stored first); reading
 * allocates n * elem + 1 zeroed bytes (never more than the file holds). */
static void
ser_blob(struct ser *z, void **p, size_t *n, size_t elem)
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
static void
ser_str(struct ser *z, char **s)
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
	ser_blob(z, &p, &n, 1);
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
	uint32_t ph = (uint8_t)d->phase;
	ser_u32(z, &d->name);
	ser_u32(z, &ph);
	d->phase = (char)ph;
	ser_u64(z, &d->track);
	ser_i64(z, &d->dur);
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

static void
ser_oplog(struct ser *z, struct tm_oplog *l)
{
	void *bytes = NULL;
	if (z->wr) {
		/* the bytes with spilled runs' deltas inline (oplog.h): the
		 * length first, then the stream */
		size_t len = 0;
		tm_oplog_write_inline(l, count_put, &len);
		ser_u64(z, &(uint64_t){len});
		tm_oplog_write_inline(l, ser_put, z);
	} else {
		size_t len = 0;
		ser_blob(z, &bytes, &len, 1);
		l->len = len;
	}
	ser_u64(z, &l->n_ops);
	ser_i64(z, &l->last_ts);
	ser_u64(z, &l->last_off);
	ser_bool(z, &l->use_runs);
	ser_u64(z, &l->n_runs);
	ser_u64(z, &l->n_run_elems);
	/* details, each field by field (min 28 bytes on disk) */
	size_t nd = (size_t)ser_max(z, l->n_details, z->wr ? UINT64_MAX : z->left / 28,
				    "count larger than the file");
	if (!z->wr) {
		l->bytes = bytes;
		l->cap = l->len;
		l->details = nd ? xcalloc(nd, sizeof *l->details) : NULL;
		l->n_details = l->cap_details = nd;
	}
	for (size_t i = 0; i < nd && !z->bad; i++)
		ser_detail(z, &l->details[i]);
	void *pool = l->pool.data;
	ser_blob(z, &pool, &l->pool.len, 1);
	if (!z->wr) {
		l->pool.data = pool;
		l->pool.cap = pool ? l->pool.len + 1 : 0;
	}
}

static void
ser_occ(struct ser *z, struct al_occ *o)
{
	ser_i64(z, &o->ts);
	ser_u32(z, &o->clock);
	ser_u32(z, &o->machine);
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
	ser_u64(z, &a->id_mask);
	ser_u64(z, &a->n_id_events);
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
		ser_blob(z, &nm, &e->len, 1);
		e->name = nm;
		ser_u64(z, &e->h);
		ser_u64(z, &e->count);
		ser_bool(z, &e->all_instant);
		e->n = (uint32_t)ser_max(z, e->n, AL_OCC, "alignment occurrences");
		if (!z->wr) { /* occurrences are allocated as they are kept */
			e->cap = e->n;
			e->occ = e->n ? xcalloc(e->n, sizeof *e->occ) : NULL;
		}
		for (uint32_t k = 0; k < e->n; k++)
			ser_occ(z, &e->occ[k]);
		if (z->wr)
			continue;
		bool added = false;
		if (e->name && e->h)
			tm_strmap_put(&a->name_ix, e->name, e->len, i, &added);
		if (!added && !z->bad)
			z->bad = "alignment name empty or twice";
	}
	for (size_t i = 0; i < a->n_ids; i++) {
		struct al_id *e = &a->ids[i];
		void *id = e->ident;
		ser_blob(z, &id, &e->ident_len, 1);
		e->ident = id;
		ser_u64(z, &e->key);
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
	ser_u64(z, &sc->n_packets);
	ser_u64(z, &sc->n_events);
	ser_u64(z, &sc->clocks_seen[0]);
	ser_u64(z, &sc->clocks_seen[1]);
	ser_bool(z, &sc->has_snapshot);
	size_t ne = sc->n_embedded;
	void *emb = sc->embedded;
	ser_blob(z, &emb, &ne, sizeof(uint32_t));
	if (!z->wr) {
		sc->embedded = emb;
		sc->n_embedded = sc->cap_embedded = ne;
	}
	ser_bool(z, &sc->has_raw_ts);
	ser_i64(z, &sc->raw_min);
	ser_i64(z, &sc->raw_max);
	ser_str(z, &sc->warning);
	ser_bool(z, &sc->failed);
	/* the scan's error exists only when it has one (tm_scan_err) */
	struct tm_error e0 = {0}, *se = sc->err ? sc->err : &e0;
	ser_error(z, se);
	if (!z->wr && !sc->err && (e0.code || e0.msg[0] || e0.tp[0]))
		*tm_scan_err(sc) = e0;
	ser_align(z, &sc->align);
	ser_oplog(z, &sc->log);
}

/* The listing of a member, as this session sees it: a saved scan is used
 * only when the input lists exactly the same way. */
static void
ser_listing(struct ser *z, struct tm_session *s, struct tm_cache_group *g, size_t k)
{
	const struct tm_member *mb = &s->in.members[g->members[k]];
	uint64_t v[7] = {mb->name_len, mb->format, mb->stored_size, g->list_size[k], mb->is_hidden,
			 mb->index, mb->is_unexpanded};
	/* the parent as an index into the group, or UINT64_MAX */
	uint64_t parent = UINT64_MAX;
	if (mb->parent >= 0) { /* g->members ascends (groups_make): a binary search */
		size_t lo = 0, hi = g->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (g->members[mid] < (size_t)mb->parent)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < g->n && g->members[lo] == (size_t)mb->parent)
			parent = lo;
	}
	uint64_t w[7];
	memcpy(w, v, sizeof w);
	for (int i = 0; i < 7; i++)
		ser_u64(z, &w[i]);
	uint64_t pw = parent;
	ser_u64(z, &pw);
	size_t nl = mb->name_len;
	void *name = z->wr ? mb->name : NULL;
	ser_blob(z, &name, &nl, 1);
	if (z->wr)
		return;
	bool same = !memcmp(v, w, sizeof v) && pw == parent && nl == mb->name_len &&
		    (!nl || !memcmp(name, mb->name, nl));
	free(name);
	if (!same && !z->bad)
		z->bad = "listing"; /* not damage: the input lists differently */
}

struct member_rec {
	bool has_scan;
	uint64_t size;
	char *error;
	struct tm_scan *scan;
};

static void
ser_member(struct ser *z, struct member_rec *r)
{
	ser_bool(z, &r->has_scan);
	ser_u64(z, &r->size);
	ser_str(z, &r->error);
	if (!r->has_scan)
		return;
	if (!z->wr) {
		r->scan = xcalloc(1, sizeof *r->scan);
		tm_scan_init(r->scan, TM_FMT_UNKNOWN);
	}
	ser_scan(z, r->scan);
}

/* The key as stored: build, path, options, identity. */
static void
ser_key(struct ser *z, struct tm_session *s, struct tm_cache_group *g, bool *same)
{
	struct tm_buf b;
	tm_buf_init(&b);
	build_id(&b);
	uint64_t flags = (uint64_t)s->opts.keep_events | (uint64_t)s->opts.plain_replay << 1 |
			 (uint64_t)s->in.is_loose << 2;
	char *bid = b.data, *path = s->in.paths[g->path];
	char *rb = NULL, *rp = NULL;
	ser_str(z, z->wr ? &bid : &rb);
	ser_str(z, z->wr ? &path : &rp);
	uint64_t k[8] = {flags,
			 g->key.dev,
			 g->key.ino,
			 g->key.size,
			 (uint64_t)g->key.mtime_s,
			 (uint64_t)g->key.mtime_ns,
			 (uint64_t)g->key.ctime_s,
			 (uint64_t)g->key.ctime_ns};
	uint64_t r[8];
	memcpy(r, k, sizeof r);
	for (int i = 0; i < 8; i++)
		ser_u64(z, &r[i]);
	if (!z->wr)
		*same = !z->bad && rb && rp && !strcmp(rb, bid) && !strcmp(rp, path) &&
			!memcmp(k, r, sizeof k);
	free(rb);
	free(rp);
	tm_buf_fini(&b);
}

/* ---- groups: one per input path ---- */

static void
note(struct tm_session *s, const char *fmt, ...) TM_PRINTF(2, 3);
static void
note(struct tm_session *s, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	free(s->cache_note);
	s->cache_note = xstrdup(buf);
}

/* Each member's input: the loose file it is (or is inside of), or the one
 * input. */
static size_t
input_of(const struct tm_session *s, size_t i)
{
	if (!s->in.is_loose)
		return 0;
	size_t j = i;
	while (j > 0 && s->in.members[j].parent > 0)
		j = (size_t)s->in.members[j].parent;
	return j > 0 ? j - 1 : SIZE_MAX; /* loose inputs are members 1..n */
}

static void
file_name(const char *dir, const struct tm_session *s, const struct tm_cache_group *g,
	  struct tm_buf *out)
{
	struct tm_buf b;
	tm_buf_init(&b);
	build_id(&b);
	tm_buf_addf(&b, "|%s|%d%d%d|%ju:%ju:%ju:%jd.%jd:%jd.%jd", s->in.paths[g->path],
		    s->opts.keep_events, s->opts.plain_replay, s->in.is_loose, (uintmax_t)g->key.dev,
		    (uintmax_t)g->key.ino, (uintmax_t)g->key.size, (intmax_t)g->key.mtime_s,
		    (intmax_t)g->key.mtime_ns, (intmax_t)g->key.ctime_s, (intmax_t)g->key.ctime_ns);
	uint64_t h = tm_mix64(tm_fnv1a(TM_FNV_INIT, b.data, b.len));
	tm_buf_addf(out, "%s/%016" PRIx64 CACHE_EXT, dir, h);
	tm_buf_fini(&b);
}

static void
groups_make(struct tm_session *s)
{
	size_t np = s->in.n_paths;
	s->cache = xcalloc(np, sizeof *s->cache);
	s->n_cache = np;
	/* Count, then fill: growing by one member at a time is quadratic in
	 * members where realloc moves the block (100,000 members of a TAR). */
	size_t *in_of = xcalloc(s->in.n_members ? s->in.n_members : 1, sizeof *in_of);
	for (size_t i = 0; i < s->in.n_members; i++) {
		in_of[i] = input_of(s, i);
		if (in_of[i] < np)
			s->cache[in_of[i]].n++;
	}
	for (size_t k = 0; k < np; k++) {
		struct tm_cache_group *g = &s->cache[k];
		if (g->n) {
			g->members = xcalloc(g->n, sizeof *g->members);
			g->list_size = xcalloc(g->n, sizeof *g->list_size);
		}
		g->n = 0;
	}
	for (size_t i = 0; i < s->in.n_members; i++) {
		if (in_of[i] >= np)
			continue;
		struct tm_cache_group *g = &s->cache[in_of[i]];
		g->list_size[g->n] = s->in.members[i].size;
		g->members[g->n++] = i;
	}
	free(in_of);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	for (size_t k = 0; k < np; k++) {
		struct tm_cache_group *g = &s->cache[k];
		g->path = k;
		g->have_key = g->n && key_of(s->in.paths[k], &g->key);
		g->racy = g->key.mtime_s >= (int64_t)now.tv_sec - tm_scancache_racy_s ||
			  g->key.ctime_s >= (int64_t)now.tv_sec - tm_scancache_racy_s;
		if (g->have_key) {
			struct tm_buf b;
			tm_buf_init(&b);
			file_name(s->opts.cache_dir, s, g, &b);
			g->file = tm_buf_steal(&b);
		}
	}
}

/* Not ours or writable by others: not trusted. */
static bool
trusted(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() && !(st->st_mode & 022);
}

static void
header(uint8_t h[HEADER_BYTES], uint64_t payload, uint32_t crc)
{
	memset(h, 0, HEADER_BYTES);
	memcpy(h, CACHE_MAGIC, 8);
	uint32_t v[2] = {CACHE_FORMAT, TM_OPLOG_ENCODING};
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++)
			h[8 + 4 * i + j] = (uint8_t)(v[i] >> (8 * j));
	for (int j = 0; j < 8; j++)
		h[16 + j] = (uint8_t)(payload >> (8 * j));
	for (int j = 0; j < 4; j++)
		h[24 + j] = (uint8_t)(crc >> (8 * j));
}

/* Load group g; false (with a note when the file was damaged) otherwise. */
static bool
load_group(struct tm_session *s, struct tm_cache_group *g)
{
	int fd = open(g->file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false; /* nothing saved: a plain miss */
	struct stat st;
	FILE *f = fstat(fd, &st) == 0 && trusted(&st) ? fdopen(fd, "rb") : NULL;
	if (!f) {
		close(fd);
		note(s, "scan cache: %s is not a private regular file: not used", g->file);
		return false;
	}
	uint8_t h[HEADER_BYTES], want[HEADER_BYTES];
	char why[256] = "";
	struct ser z = {.wr = false, .f = f, .crc = crc32(0, NULL, 0)};
	const char *bad = NULL;
	if (fread(h, 1, HEADER_BYTES, f) != HEADER_BYTES || memcmp(h, CACHE_MAGIC, 8) != 0) {
		bad = "not a saved scan";
	} else {
		uint64_t payload = 0;
		uint32_t crc = 0;
		for (int j = 0; j < 8; j++)
			payload |= (uint64_t)h[16 + j] << (8 * j);
		for (int j = 0; j < 4; j++)
			crc |= (uint32_t)h[24 + j] << (8 * j);
		header(want, payload, crc);
		if (memcmp(h, want, HEADER_BYTES) != 0) {
			fclose(f);
			return false; /* another format or encoding: a miss, overwritten */
		}
		if (payload != (uint64_t)st.st_size - HEADER_BYTES)
			bad = "length does not match the header";
		z.left = payload;
		z.crc = crc32(0, NULL, 0);
		bool same = false;
		if (!bad)
			ser_key(&z, s, g, &same);
		if (!bad && !same) {
			fclose(f);
			return false; /* another input under the same name */
		}
		struct member_rec *rec = xcalloc(g->n + 1, sizeof *rec);
		uint64_t n = 0;
		if (!bad)
			ser_u64(&z, &n);
		if (!bad && n != g->n && !z.bad)
			z.bad = "listing";
		for (size_t k = 0; !bad && k < g->n && !z.bad; k++)
			ser_listing(&z, s, g, k);
		for (size_t k = 0; !bad && k < g->n && !z.bad; k++)
			ser_member(&z, &rec[k]);
		if (!bad && !z.bad && z.left)
			z.bad = "bytes after the end";
		if (!bad && !z.bad && (uint32_t)z.crc != crc)
			z.bad = "checksum mismatch";
		bad = bad ? bad : z.bad;
		/* what the replay trusts, checked before anything is used */
		for (size_t k = 0; !bad && k < g->n; k++) {
			const struct tm_member *mb = &s->in.members[g->members[k]];
			struct tm_scan *sc = rec[k].scan;
			if (sc && sc->format != mb->format)
				bad = "a scan of another format";
			else if (sc && !tm_oplog_valid(&sc->log, why, sizeof why))
				bad = why;
		}
		bool listing = bad && !strcmp(bad, "listing");
		if (!bad) {
			for (size_t k = 0; k < g->n; k++) {
				size_t i = g->members[k];
				struct tm_member *mb = &s->in.members[i];
				mb->size = rec[k].size;
				free(mb->error);
				mb->error = rec[k].error;
				if (s->scans[i]) { /* scanned while listing (a tar.gz) */
					tm_scan_fini(s->scans[i]);
					free(s->scans[i]);
				}
				s->scans[i] = rec[k].scan;
				if (s->scans[i]) /* its memory as a fresh scan's */
					tm_oplog_spill_runs(&s->scans[i]->log);
				atomic_store(&s->progress[i], mb->size != UINT64_MAX ? mb->size : 0);
				atomic_store(&s->is_scanned[i], true);
			}
		} else {
			for (size_t k = 0; k < g->n; k++) {
				free(rec[k].error);
				if (rec[k].scan) {
					tm_scan_fini(rec[k].scan);
					free(rec[k].scan);
				}
			}
		}
		free(rec);
		if (listing) {
			fclose(f);
			return false; /* the input lists differently: a miss */
		}
	}
	fclose(f);
	if (bad) {
		note(s, "scan cache: %s: %s: ignored, the input is scanned again", g->file, bad);
		return false;
	}
	/* used: the newest file for eviction */
	(void)utimensat(AT_FDCWD, g->file, NULL, 0);
	return true;
}

static enum tm_status
make_dir(const char *dir, struct tm_error *err)
{
	char *p = xstrdup(dir);
	for (char *q = p + 1; *q; q++)
		if (*q == '/') {
			*q = 0;
			(void)mkdir(p, 0700);
			*q = '/';
		}
	free(p);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return tm_error_sys(err, errno, "%s", dir);
	return TM_OK;
}

struct entry {
	char *path;
	int64_t t;
	uint64_t size;
};

static int
cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

/* Remove the least recently used entries until the directory holds at most
 * cap bytes of them; temp files left by a crash go after a day. */
static void
evict(const char *dir, uint64_t cap)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct entry *v = NULL;
	size_t n = 0, vcap = 0;
	uint64_t total = 0;
	int64_t now = (int64_t)time(NULL);
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		bool ours = l > strlen(CACHE_EXT) && !strcmp(de->d_name + l - strlen(CACHE_EXT), CACHE_EXT);
		bool tmp = !strncmp(de->d_name, ".tmp-", 5);
		if (!ours && !tmp)
			continue;
		struct tm_buf b;
		tm_buf_init(&b);
		tm_buf_addf(&b, "%s/%s", dir, de->d_name);
		struct stat st;
		if (lstat(b.data, &st) != 0 || !S_ISREG(st.st_mode)) {
			tm_buf_fini(&b);
			continue;
		}
		if (tmp) {
			if (now - (int64_t)st.st_mtime > 86400)
				(void)unlink(b.data);
			tm_buf_fini(&b);
			continue;
		}
		XGROW(v, vcap, n + 1);
		v[n++] = (struct entry){tm_buf_steal(&b), (int64_t)st.st_mtim.tv_sec * 1000000000 +
							    st.st_mtim.tv_nsec,
					(uint64_t)st.st_size};
		total += (uint64_t)st.st_size;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, cmp_entry);
	for (size_t i = 0; i < n; i++) {
		if (total > cap && unlink(v[i].path) == 0)
			total -= v[i].size;
		free(v[i].path);
	}
	free(v);
}

static void
save_group(struct tm_session *s, struct tm_cache_group *g, uint64_t cap)
{
	struct tm_error e;
	tm_error_clear(&e);
	if (make_dir(s->opts.cache_dir, &e) != TM_OK) {
		note(s, "scan cache: cannot create %s", e.msg);
		return;
	}
	struct tm_buf tb;
	tm_buf_init(&tb);
	tm_buf_addf(&tb, "%s/.tmp-XXXXXX", s->opts.cache_dir);
	char *tmp = tm_buf_steal(&tb);
	int fd = mkstemp(tmp);
	FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
	if (!f) {
		note(s, "scan cache: cannot write in %s: %s", s->opts.cache_dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		if (fd >= 0)
			unlink(tmp);
		free(tmp);
		return;
	}
	uint8_t h[HEADER_BYTES];
	header(h, 0, 0);
	struct ser z = {.wr = true, .f = f, .crc = crc32(0, NULL, 0)};
	z.werr = fwrite(h, 1, HEADER_BYTES, f) != HEADER_BYTES;
	bool same;
	ser_key(&z, s, g, &same);
	uint64_t n = g->n;
	ser_u64(&z, &n);
	for (size_t k = 0; k < g->n; k++)
		ser_listing(&z, s, g, k);
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->members[k];
		struct member_rec r = {s->scans[i] != NULL, s->in.members[i].size,
				       s->in.members[i].error, s->scans[i]};
		ser_member(&z, &r);
	}
	long end = ftell(f);
	uint64_t payload = end > (long)HEADER_BYTES ? (uint64_t)end - HEADER_BYTES : 0;
	header(h, payload, (uint32_t)z.crc);
	/* No fsync: the rename is atomic for readers, and what a crash could
	 * leave (a short or zeroed file) fails the length or checksum test and
	 * is scanned again; a cache is not worth a disk flush on every scan. */
	bool ok = !z.werr && end >= 0 && (uint64_t)end <= cap && fseek(f, 0, SEEK_SET) == 0 &&
		  fwrite(h, 1, HEADER_BYTES, f) == HEADER_BYTES && fflush(f) == 0;
	int werr = errno;
	if (fclose(f) != 0)
		ok = false;
	/* the input must not have changed while it was scanned */
	struct tm_cache_key now;
	bool same_input = key_of(s->in.paths[g->path], &now) && !memcmp(&now, &g->key, sizeof now);
	if (ok && same_input && rename(tmp, g->file) == 0) {
		g->saved = true;
		s->cache_saved++;
	} else {
		unlink(tmp);
		if (same_input && end >= 0 && (uint64_t)end > cap)
			note(s, "scan cache: the scan of %s (%jd bytes) is larger than the cache's cap",
			     s->in.paths[g->path], (intmax_t)end);
		else if (same_input && !ok)
			note(s, "scan cache: cannot write %s: %s", g->file, strerror(werr));
	}
	free(tmp);
	evict(s->opts.cache_dir, cap);
}

/* ---- the session's entry points ---- */

void
tm_scancache_open(struct tm_session *s)
{
	if (!s->opts.cache_dir || !*s->opts.cache_dir) {
		s->opts.cache_dir = NULL;
		return;
	}
	s->opts.cache_dir = xstrdup(s->opts.cache_dir); /* the caller's may go */
	groups_make(s);
	for (size_t k = 0; k < s->n_cache; k++) {
		struct tm_cache_group *g = &s->cache[k];
		if (g->have_key && !s->opts.cache_refresh && load_group(s, g)) {
			g->loaded = true;
			s->cache_loaded++;
		}
	}
}

void
tm_scancache_save(struct tm_session *s)
{
	uint64_t cap = s->opts.cache_max_bytes ? s->opts.cache_max_bytes : TM_CACHE_MAX_DEFAULT;
	for (size_t k = 0; k < s->n_cache; k++) {
		struct tm_cache_group *g = &s->cache[k];
		if (!g->have_key || g->loaded || g->saved || g->racy)
			continue;
		bool done = true, io = false;
		for (size_t j = 0; j < g->n; j++) {
			size_t i = g->members[j];
			done &= atomic_load(&s->is_scanned[i]);
			/* a read error may not happen again: not saved */
			io |= s->scans[i] && s->scans[i]->failed && s->scans[i]->err &&
			      s->scans[i]->err->code == TM_ERR_IO;
		}
		if (io)
			g->saved = true;
		else if (done)
			save_group(s, g, cap);
	}
}

void
tm_scancache_fini(struct tm_session *s)
{
	for (size_t k = 0; k < s->n_cache; k++) {
		free(s->cache[k].members);
		free(s->cache[k].list_size);
		free(s->cache[k].file);
	}
	free(s->cache);
	free(s->cache_note);
	free((void *)(uintptr_t)s->opts.cache_dir);
}

void
tm_session_cache_info(const struct tm_session *s, struct tm_cache_info *out)
{
	out->loaded = s->cache_loaded;
	out->saved = s->cache_saved;
	out->note = s->cache_note;
}

char *
tm_cache_default_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME");
	struct tm_buf b;
	tm_buf_init(&b);
	if (x && x[0] == '/') {
		tm_buf_addf(&b, "%s/tracemerge", x);
	} else {
		const char *home = getenv("HOME");
		if (!home || home[0] != '/')
			return NULL;
		tm_buf_addf(&b, "%s/.cache/tracemerge", home);
	}
	return tm_buf_steal(&b);
}

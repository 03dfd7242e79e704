/* SPDX-License-Identifier: MIT */
/* The listing while it runs (tm_listing): snapshots taken by one thread
 * while another publishes are consistent (every member whole, no torn row,
 * counters only growing), the last one equals the session's member table,
 * and a hostile publisher (updates in place, unlisting) never leaves a
 * snapshot with a row that was not published.  Run under TSan too
 * (build/tsan/tests/test_listing). */
#include <pthread.h>
#include <stdarg.h>
#include <zlib.h>

#include "t.h"
#include "tarfix.h"
#include "input.h"
#include "archive_priv.h"

#define N_SYN 20000u

static void
syn_name(size_t i, char *buf, size_t len)
{
	snprintf(buf, len, "dir/m%06zu.%s", i, i % 2 ? "pftrace" : "json");
}

struct syn {
	struct tm_listing *l;
	uint64_t read_pos, inflated; /* atomics, as tm_work's */
};

/* The producer: every member appended with its size unknown every 7th
 * time (then set in place), and every 1000 members the last 5 unlisted
 * and published again (what a cut-short ZIP entry does). */
static void *
syn_producer(void *arg)
{
	struct syn *y = arg;
	char name[64];
	tm_listing_begin(y->l, 1000000, &y->read_pos, &y->inflated);
	for (size_t i = 0; i < N_SYN; i++) {
		syn_name(i, name, sizeof name);
		struct tm_member m = {.name = name, .name_len = strlen(name), .size = i * 3,
				      .format = i % 2 ? TM_FMT_PROTO : TM_FMT_JSON,
				      .parent = i ? 0 : -1};
		if (i % 7 == 0) {
			m.size = UINT64_MAX;
			tm_listing_put(y->l, i, &m);
			m.size = i * 3;
		}
		tm_listing_put(y->l, i, &m);
		if (i % 1000 == 999) {
			tm_listing_truncate(y->l, i - 4);
			for (size_t k = i - 4; k <= i; k++) {
				syn_name(k, name, sizeof name);
				struct tm_member r = {.name = name, .name_len = strlen(name),
						      .size = k * 3,
						      .format = k % 2 ? TM_FMT_PROTO : TM_FMT_JSON,
						      .parent = k ? 0 : -1};
				tm_listing_put(y->l, k, &r);
			}
		}
		__atomic_add_fetch(&y->read_pos, 50, __ATOMIC_RELAXED);
		__atomic_add_fetch(&y->inflated, 100, __ATOMIC_RELAXED);
	}
	tm_listing_end(y->l);
	tm_listing_finish(y->l);
	return NULL;
}

/* Every row of sn is one the producer published whole. */
static bool
syn_consistent(const struct tm_listing_snap *sn, char *why, size_t len)
{
	char name[64];
	for (size_t i = 0; i < sn->n; i++) {
		const struct tm_listing_member *e = &sn->members[i];
		syn_name(i, name, sizeof name);
		if (!e->name || e->name_len != strlen(name) || memcmp(e->name, name, e->name_len) ||
		    (e->size != i * 3 && !(i % 7 == 0 && e->size == UINT64_MAX)) ||
		    e->format != (i % 2 ? TM_FMT_PROTO : TM_FMT_JSON) || e->parent != (i ? 0 : -1) ||
		    e->is_hidden) {
			snprintf(why, len, "row %zu of %zu: %.40s size %" PRIu64, i, sn->n,
				 e->name ? e->name : "(null)", e->size);
			return false;
		}
	}
	return true;
}

static void
t_snapshot_while_publishing(void)
{
	struct syn y = {.l = tm_listing_new()};
	struct tm_listing_snap sn, other;
	tm_listing_snap_init(&sn);
	tm_listing_snap_init(&other);
	pthread_t thr;
	CHECK_INT(pthread_create(&thr, NULL, syn_producer, &y), 0);
	uint64_t last_rd = 0, last_inf = 0;
	size_t snaps = 0, max_n = 0;
	char why[256] = "";
	bool ok = true;
	for (;;) {
		tm_listing_snapshot(y.l, &sn);
		snaps++;
		if (ok && !syn_consistent(&sn, why, sizeof why))
			ok = false;
		if (sn.read_bytes < last_rd || sn.inflated_bytes < last_inf ||
		    sn.read_bytes > sn.input_bytes) {
			ok = false;
			snprintf(why, sizeof why, "counters went back or past the input");
		}
		last_rd = sn.read_bytes;
		last_inf = sn.inflated_bytes;
		if (sn.n > max_n)
			max_n = sn.n;
		/* a second snapshot, brought up to date less often */
		if (snaps % 5 == 0) {
			tm_listing_snapshot(y.l, &other);
			if (ok && !syn_consistent(&other, why, sizeof why))
				ok = false;
		}
		if (sn.is_final)
			break;
	}
	pthread_join(thr, NULL);
	if (!ok)
		printf("# %s\n", why);
	CHECK(ok);
	/* once final: everything, and no change without a change */
	CHECK_INT(sn.n, N_SYN);
	CHECK(syn_consistent(&sn, why, sizeof why));
	for (size_t i = 0; i < sn.n; i++)
		CHECK_INT(sn.members[i].size, i * 3);
	CHECK_INT(sn.read_bytes, N_SYN * 50);
	CHECK_INT(sn.inflated_bytes, N_SYN * 100);
	CHECK_INT(sn.input_bytes, 1000000);
	uint64_t v = sn.version;
	CHECK(!tm_listing_snapshot(y.l, &sn));
	CHECK_INT(sn.version, v);
	tm_listing_snapshot(y.l, &other);
	CHECK_INT(other.n, N_SYN);
	CHECK(syn_consistent(&other, why, sizeof why));
	printf("# %zu snapshots, largest %zu rows before the end\n", snaps, max_n);
	tm_listing_snap_fini(&sn);
	tm_listing_snap_fini(&other);
	tm_listing_free(y.l);
}

/* ---- a real open: a tar.gz, scanned while listing ---- */

static const char J[] = "{\"traceEvents\":[{\"name\":\"e\",\"ph\":\"X\",\"ts\":10,\"dur\":5,"
			"\"pid\":1,\"tid\":1}]}\n";

static const char *
write_tgz(const char *name, size_t members)
{
	struct fx f = {0};
	char nm[64];
	for (size_t i = 0; i < members; i++) {
		/* physical order the reverse of name order: rows move at the end */
		snprintf(nm, sizeof nm, "t%04zu.json", members - i);
		fx_file(&f, nm, J, sizeof J - 1);
	}
	fx_hdr(&f, ".hidden", NULL, 3, '0', 0);
	fx_add(&f, "abc", 3);
	fx_zero(&f, 509);
	fx_end(&f);
	uLong cap = compressBound((uLong)f.n) + 64;
	unsigned char *z = malloc(cap);
	z_stream zs = {0};
	deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	zs.next_in = f.d;
	zs.avail_in = (uInt)f.n;
	zs.next_out = z;
	zs.avail_out = (uInt)cap;
	CHECK_INT(deflate(&zs, Z_FINISH), Z_STREAM_END);
	size_t zn = zs.total_out;
	deflateEnd(&zs);
	const char *p = fx_write(name, z, zn);
	free(z);
	free(f.d);
	return p;
}

struct opener {
	const char *path;
	struct tm_session_opts opts;
	struct tm_session *s;
	enum tm_status st;
	struct tm_error err;
};

static void *
opener_run(void *arg)
{
	struct opener *o = arg;
	o->st = tm_session_open(&o->s, &o->path, 1, &o->opts, &o->err);
	return NULL;
}

static void
t_session_publishes(void)
{
	struct opener o = {.path = write_tgz("l.tar.gz", 3000)};
	struct tm_listing *l = tm_listing_new();
	o.opts.listing = l;
	struct tm_listing_snap sn;
	tm_listing_snap_init(&sn);
	pthread_t thr;
	CHECK_INT(pthread_create(&thr, NULL, opener_run, &o), 0);
	size_t partial = 0; /* snapshots taken with some members but not all */
	bool ok = true;
	for (;;) {
		tm_listing_snapshot(l, &sn);
		if (sn.n > 2 && sn.n < 3003 && !sn.is_final)
			partial++;
		for (size_t i = 0; i < sn.n; i++) {
			const struct tm_listing_member *e = &sn.members[i];
			if (i >= 2 && !e->is_hidden &&
			    (e->format != TM_FMT_JSON || e->size != sizeof J - 1 || e->parent != 1))
				ok = false;
		}
		if (sn.is_final)
			break;
	}
	pthread_join(thr, NULL);
	CHECK(ok);
	CHECK_INT(o.st, TM_OK);
	printf("# %zu partial snapshots\n", partial);
	/* the final snapshot is the session's table, in index order */
	size_t n = tm_session_n_members(o.s);
	CHECK_INT(sn.n, n);
	CHECK_INT(n, 2 + 3000 + 1); /* gzip, its stream, the TAR's members */
	for (size_t i = 0; i < n && i < sn.n; i++) {
		const struct tm_member *m = tm_session_member(o.s, i);
		const struct tm_listing_member *e = &sn.members[i];
		CHECK((m->name == NULL) == (e->name == NULL));
		if (m->name && e->name)
			CHECK_STR(e->name, m->name);
		CHECK_INT(e->format, m->format);
		CHECK_INT(e->size, m->size);
		CHECK_INT(e->parent, m->parent);
		CHECK_INT(e->is_hidden, m->is_hidden);
	}
	CHECK_INT(sn.members[1].format, TM_FMT_TAR); /* the inflated stream */
	CHECK_STR(sn.members[2].name, "t3000.json");
	CHECK(sn.members[n - 1].is_hidden);
	CHECK_INT(sn.input_bytes, sn.read_bytes);
	CHECK(sn.inflated_bytes > 3000 * 512);
	tm_session_close(o.s);
	tm_listing_snap_fini(&sn);
	tm_listing_free(l);
}

/* A loose .json.gz of 4 gzip members (the first hand-over at the end of
 * the first, 1.5 MiB: past the 1 MiB sniff) is scanned while it is listed
 * (archive.c walk_gzip_visit): the listing's "inflated" figure counts the
 * bytes that scan decompressed, not only the sniff's and the first
 * hand-over's. */
static void
t_gz_scan_shown(void)
{
	enum { PIECES = 4, PIECE = 3u << 19 };
	size_t n = PIECES * PIECE;
	char *text = malloc(n);
	static const char head[] = "{\"traceEvents\":[\n";
	size_t o = sizeof head - 1;
	memcpy(text, head, o);
	for (unsigned i = 0; o + 200 < n; i++)
		o += (size_t)snprintf(text + o, n - o,
				      "{\"name\":\"e\",\"ph\":\"X\",\"ts\":%u,\"dur\":5,"
				      "\"pid\":1,\"tid\":%u},\n",
				      1000 + i, i % 7);
	o += (size_t)snprintf(text + o, n - o, "{\"name\":\"z\",\"ph\":\"i\",\"ts\":1}]}");
	memset(text + o, ' ', n - o); /* (JSON whitespace to the end) */
	uLong cap = PIECES * (compressBound(PIECE) + 64);
	unsigned char *z = malloc(cap);
	size_t zn = 0;
	for (size_t k = 0; k < PIECES; k++) {
		z_stream zs = {0};
		deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
		zs.next_in = (unsigned char *)text + k * PIECE;
		zs.avail_in = PIECE;
		zs.next_out = z + zn;
		zs.avail_out = (uInt)(cap - zn);
		CHECK_INT(deflate(&zs, Z_FINISH), Z_STREAM_END);
		zn += zs.total_out;
		deflateEnd(&zs);
	}
	struct opener o2 = {.path = fx_write("shown.json.gz", z, zn)};
	free(z);
	free(text);
	struct tm_listing *l = tm_listing_new();
	o2.opts.listing = l;
	opener_run(&o2);
	CHECK_INT(o2.st, TM_OK);
	struct tm_listing_snap sn;
	tm_listing_snap_init(&sn);
	tm_listing_snapshot(l, &sn);
	CHECK(sn.is_final);
	CHECK_INT(sn.inflated_bytes, n);
	if (o2.st == TM_OK) {
		CHECK_INT(tm_session_member(o2.s, 1)->size, n);
		CHECK_INT(tm_session_member(o2.s, 1)->format, TM_FMT_JSON);
		tm_session_close(o2.s);
	}
	tm_listing_snap_fini(&sn);
	tm_listing_free(l);
}

/* Open paths with a listing read by this thread meanwhile: every snapshot
 * a prefix-consistent table (rows whole), the last one the session's
 * member table (name, format, size, parent, hidden), in index order. */
static void
same_as_session(const char *const *paths, size_t n_paths, size_t want_members)
{
	struct opener o = {.path = paths[0]};
	struct tm_listing *l = tm_listing_new();
	struct tm_session_opts opts = {.listing = l};
	struct tm_listing_snap sn;
	tm_listing_snap_init(&sn);
	struct tm_session *s = NULL;
	struct tm_error err;
	if (n_paths == 1) {
		o.opts = opts;
		pthread_t thr;
		CHECK_INT(pthread_create(&thr, NULL, opener_run, &o), 0);
		do
			tm_listing_snapshot(l, &sn);
		while (!sn.is_final);
		pthread_join(thr, NULL);
		CHECK_INT(o.st, TM_OK);
		s = o.s;
	} else {
		CHECK_INT(tm_session_open(&s, paths, n_paths, &opts, &err), TM_OK);
		tm_listing_snapshot(l, &sn);
		CHECK(sn.is_final);
	}
	if (!s) {
		tm_listing_free(l);
		return;
	}
	size_t n = tm_session_n_members(s);
	CHECK_INT(n, want_members);
	CHECK_INT(sn.n, n);
	for (size_t i = 0; i < n && i < sn.n; i++) {
		const struct tm_member *m = tm_session_member(s, i);
		const struct tm_listing_member *e = &sn.members[i];
		CHECK((m->name == NULL) == (e->name == NULL));
		if (m->name && e->name)
			CHECK_STR(e->name, m->name);
		CHECK_INT(e->format, m->format);
		CHECK_INT(e->size, m->size);
		CHECK_INT(e->parent, m->parent);
		CHECK_INT(e->is_hidden, m->is_hidden);
	}
	tm_session_close(s);
	tm_listing_snap_fini(&sn);
	tm_listing_free(l);
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void
sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		abort();
}

/* Every container form publishes what it lists: plain TAR, ZIP deflated
 * (listed and scanned in one inflate) and stored, a lone .gz, tar.zst,
 * several loose files. */
static void
t_every_form(void)
{
	struct fx f = {0};
	char nm[64], tar[600], dir[600], p[600];
	for (int i = 0; i < 40; i++) {
		snprintf(nm, sizeof nm, "d/t%02d.json", 40 - i);
		fx_file(&f, nm, J, sizeof J - 1);
	}
	fx_end(&f);
	snprintf(tar, sizeof tar, "%s", fx_write("f.tar", f.d, f.n)); /* (fx_path: one buffer) */
	free(f.d);
	const char *one = tar;
	same_as_session(&one, 1, 41);
	/* the same members as files, zipped by Info-ZIP (sizes in the local
	 * headers: the deflated ones are inflated once, listed and scanned) */
	snprintf(dir, sizeof dir, "%s", fx_path("z"));
	sh("mkdir -p '%s' && tar -xf '%s' -C '%s'", dir, tar, dir);
	sh("cd '%s' && zip -q -r -X -D ../fd.zip d && zip -q -r -0 -X -D ../fs.zip d"
	   " && gzip -nc <d/t01.json >../one.json.gz", dir);
	one = p;
	snprintf(p, sizeof p, "%s", fx_path("fd.zip"));
	same_as_session(&one, 1, 41);
	snprintf(p, sizeof p, "%s", fx_path("fs.zip"));
	same_as_session(&one, 1, 41);
	snprintf(p, sizeof p, "%s", fx_path("one.json.gz"));
	same_as_session(&one, 1, 2);
	if (tm_zstd_available() && system("command -v zstd >/dev/null 2>&1") == 0) {
		sh("cd '%s' && zstd -q -f ../f.tar -o ../f.tar.zst", dir);
		snprintf(p, sizeof p, "%s", fx_path("f.tar.zst"));
		same_as_session(&one, 1, 42);
	}
	char l1[700], l2[700];
	snprintf(l1, sizeof l1, "%s/d/t01.json", dir);
	snprintf(l2, sizeof l2, "%s/d/t02.json", dir);
	const char *loose[] = {l1, l2, tar};
	same_as_session(loose, 3, 4 + 40);
}

/* A failed or cancelled open marks the listing final too. */
static void
t_final_on_failure(void)
{
	struct tm_listing *l = tm_listing_new();
	struct tm_listing_snap sn;
	tm_listing_snap_init(&sn);
	volatile bool cancel = true;
	struct tm_session_opts opts = {.listing = l, .cancel = &cancel};
	struct tm_session *s = NULL;
	struct tm_error err;
	const char *p = write_tgz("c.tar.gz", 10);
	CHECK_INT(tm_session_open(&s, &p, 1, &opts, &err), TM_ERR_CANCELLED);
	tm_listing_snapshot(l, &sn);
	CHECK(sn.is_final);
	const char *missing = fx_path("no-such-file");
	struct tm_listing *l2 = tm_listing_new();
	opts = (struct tm_session_opts){.listing = l2};
	CHECK(tm_session_open(&s, &missing, 1, &opts, &err) != TM_OK);
	tm_listing_snap_fini(&sn); /* (another listing: a fresh snapshot) */
	tm_listing_snapshot(l2, &sn);
	CHECK(sn.is_final);
	CHECK_INT(sn.n, 0);
	tm_listing_snap_fini(&sn);
	tm_listing_free(l);
	tm_listing_free(l2);
}

/* ---- a stream's read buffer (stream.c buf_take / buf_give) ---- */

#define BUF_N ((size_t)300 * 1024 + 123) /* a 256 KiB block and a tail */

static uint8_t
buf_byte(size_t i)
{
	return (uint8_t)(i * 131u + (i >> 13));
}

static const char *
buf_file(void)
{
	static char path[600];
	if (!path[0]) {
		uint8_t *d = malloc(BUF_N);
		for (size_t i = 0; i < BUF_N; i++)
			d[i] = buf_byte(i);
		snprintf(path, sizeof path, "%s", fx_write("buf.bin", d, BUF_N));
		free(d);
	}
	return path;
}

/* The next block of st, checked byte for byte at its offset; the block's
 * address in *at (NULL at the end). */
static bool
buf_next(struct tm_stream *st, const uint8_t **at)
{
	struct tm_error err;
	uint64_t off = tm_stream_offset(st);
	const uint8_t *p = NULL;
	size_t n = 0;
	if (tm_stream_next(st, &p, &n, &err) != TM_OK)
		return false;
	*at = n ? p : NULL;
	for (size_t i = 0; i < n; i++)
		if (p[i] != buf_byte((size_t)off + i))
			return false;
	return true;
}

static struct tm_stream *
buf_open(void)
{
	struct tm_stream *st = NULL;
	struct tm_error err;
	if (tm_stream_file(buf_file(), "buf.bin", 0, BUF_N, &st, &err) != TM_OK)
		return NULL;
	return st;
}

/* One stream after another reads into the same buffer (its pages faulted
 * once per process); two streams open at once each read into their own. */
static void
t_stream_buf_reused(void)
{
	const uint8_t *a = NULL, *b = NULL, *c = NULL, *q = NULL;
	struct tm_stream *sa = buf_open();
	CHECK(sa && buf_next(sa, &a) && a);
	tm_stream_close(sa); /* the spare slot now holds a buffer */
	uint64_t n0 = tm_stream_buf_allocs();
	struct tm_stream *sb = buf_open();
	CHECK(sb && buf_next(sb, &b) && b);
	CHECK_INT(tm_stream_buf_allocs(), n0); /* taken, not malloc'd */
	struct tm_stream *sc = buf_open();
	CHECK(sc && buf_next(sc, &c) && c);
	CHECK_INT(tm_stream_buf_allocs(), n0 + 1); /* b's is in use */
	CHECK(c != b);
	/* interleaved to the end: neither stream's bytes are the other's */
	bool ok = true;
	while (ok && (b || c)) {
		if (b)
			ok = buf_next(sb, &b);
		if (ok && c)
			ok = buf_next(sc, &c);
	}
	CHECK(ok);
	tm_stream_close(sb);
	tm_stream_close(sc); /* one parked, the other freed */
	struct tm_stream *sd = buf_open();
	CHECK(sd && buf_next(sd, &q) && q);
	CHECK_INT(tm_stream_buf_allocs(), n0 + 1);
	tm_stream_close(sd);
}

static void *
buf_worker(void *arg)
{
	bool *ok = arg;
	for (int k = 0; k < 40 && *ok; k++) {
		struct tm_stream *st = buf_open();
		const uint8_t *p = NULL;
		*ok = st && buf_next(st, &p) && p;
		while (*ok && p)
			*ok = buf_next(st, &p);
		tm_stream_close(st);
	}
	return NULL;
}

/* Streams opened and closed on three threads at once (under TSan: the spare
 * slot is handed over without a race) each read their own bytes. */
static void
t_stream_buf_threads(void)
{
	buf_file();
	pthread_t thr[3];
	bool ok[3] = {true, true, true};
	for (int i = 0; i < 3; i++)
		CHECK_INT(pthread_create(&thr[i], NULL, buf_worker, &ok[i]), 0);
	for (int i = 0; i < 3; i++)
		pthread_join(thr[i], NULL);
	CHECK(ok[0] && ok[1] && ok[2]);
}

int
main(void)
{
	RUN(t_snapshot_while_publishing);
	RUN(t_session_publishes);
	RUN(t_final_on_failure);
	RUN(t_every_form);
	RUN(t_gz_scan_shown);
	RUN(t_stream_buf_reused);
	RUN(t_stream_buf_threads);
	fx_cleanup();
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * A member's stream (input_priv.h): the input files opened and identified,
 * a member's bytes opened as a chain of streams (struct loc), the members
 * of a container read in order, the top-level sniff, and a gzip/zstd
 * child read to its end (gz_settle) as trace_processor decompresses it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "zinflate.h"
#include "input_priv.h"

/* ---- streams ---- */

bool
tm_file_id_of(const struct stat *st, struct tm_file_id *id)
{
	if (!S_ISREG(st->st_mode))
		return false;
	*id = (struct tm_file_id){(uint64_t)st->st_dev,	     (uint64_t)st->st_ino,
				  (uint64_t)st->st_size,	     (int64_t)st->st_mtim.tv_sec,
				  (int64_t)st->st_mtim.tv_nsec, (int64_t)st->st_ctim.tv_sec,
				  (int64_t)st->st_ctim.tv_nsec};
	return true;
}

/* A regular file opened O_NONBLOCK (so that a FIFO put in its place
 * cannot hang the open) read as any other. */
void
tm_ar_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && (fl & O_NONBLOCK))
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

/* fd's file as it is now. */
bool
tm_ar_id_of(int fd, struct tm_file_id *id)
{
	struct stat st;
	return fstat(fd, &st) == 0 && tm_file_id_of(&st, id);
}

/* Input path i opened again to read it (a member, a window, the sniff):
 * the file there now must be the one open_input found, unchanged, or the
 * input is marked moved (what was read is not what its identity names: a
 * saved scan of it is neither used nor written, scancache.c). */
enum tm_status
tm_ar_open_path(const struct tm_input *in, size_t i, int *fd, struct tm_error *err)
{
	*fd = open(in->paths[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (*fd < 0)
		return tm_error_sys(err, errno, "%s", in->paths[i]);
	struct tm_file_id now;
	if (!tm_ar_id_of(*fd, &now) || memcmp(&now, &P(in)->ids[i], sizeof now))
		__atomic_store_n(&P(in)->id_state[i], ID_MOVED, __ATOMIC_RELAXED);
	else
		tm_ar_blocking(*fd);
	return TM_OK;
}

/* The first open of an input's descriptor (open_parent): one thread at a
 * time, so a thread that comes second uses the first one's descriptor
 * instead of opening its own (which fails near the descriptor limit). */
static pthread_mutex_t fds_mu = PTHREAD_MUTEX_INITIALIZER;

bool
tm_ar_lend(struct tm_input *in, size_t path, int fd)
{
	/* and only while descriptors are plentiful: under a low limit
	 * (ulimit -n) the inputs' own opens would use them up before the
	 * scans' (cli/hostile.sh, EMFILE is ours) */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 ||
	    (rl.rlim_cur != RLIM_INFINITY && (rlim_t)fd >= rl.rlim_cur / 4))
		return false;
	bool kept = false;
	pthread_mutex_lock(&fds_mu);
	int *slot = &P(in)->fds[path];
	if (__atomic_load_n(slot, __ATOMIC_ACQUIRE) < 0 && P(in)->n_fds < LENT_FDS) {
		P(in)->n_fds++;
		__atomic_store_n(slot, fd, __ATOMIC_RELEASE);
		kept = true;
	}
	pthread_mutex_unlock(&fds_mu);
	return kept;
}

/* open_member of member i as the parent of one being opened: a file is
 * read through the input's descriptor of it (struct priv, fds), opened
 * once whichever thread comes first, while fewer than LENT_FDS are. */
static enum tm_status
open_parent(const struct tm_input *in, size_t i, struct tm_stream **out, struct tm_error *err)
{
	const struct loc *l = &P(in)->locs[i];
	if (l->kind != L_FILE)
		return tm_ar_open_member(in, i, out, err);
	int *slot = &P(in)->fds[l->path_idx];
	int fd = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (fd < 0) {
		pthread_mutex_lock(&fds_mu);
		fd = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		unsigned *n_fds = &P(in)->n_fds;
		if (fd < 0 && *n_fds >= LENT_FDS) {
			pthread_mutex_unlock(&fds_mu);
			return tm_ar_open_member(in, i, out, err);
		}
		if (fd < 0) {
			enum tm_status st = tm_ar_open_path(in, l->path_idx, &fd, err);
			if (st != TM_OK) {
				pthread_mutex_unlock(&fds_mu);
				return st;
			}
			(*n_fds)++;
			__atomic_store_n(slot, fd, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&fds_mu);
	}
	char *lab = tm_ar_label(in, i);
	*out = tm_stream_file_lent(fd, lab, in->members[i].stored_size);
	free(lab);
	tm_stream_set_work(*out, &P(in)->work);
	return TM_OK;
}

enum tm_status
tm_ar_open_member(const struct tm_input *in, size_t i, struct tm_stream **out, struct tm_error *err)
{
	const struct tm_member *m = &in->members[i];
	const struct loc *l = &P(in)->locs[i];
	struct tm_stream *ps = NULL, *st;
	enum tm_status s;
	char *lab = tm_ar_label(in, i);

	switch (l->kind) {
	case L_FILE: {
		/* the input's own descriptor when it has one (tm_ar_lend) */
		int fd = __atomic_load_n(&P(in)->fds[l->path_idx], __ATOMIC_ACQUIRE);
		s = TM_OK;
		if (fd >= 0)
			*out = tm_stream_file_lent(fd, lab, m->stored_size);
		else if ((s = tm_ar_open_path(in, l->path_idx, &fd, err)) == TM_OK)
			*out = tm_stream_file_fd(fd, lab, m->stored_size);
		break;
	}
	case L_VIRTUAL:
		s = tm_error_set(err, TM_ERR_UNSUPPORTED,
				 "%s: the loose files' archive is virtual; open its members", lab);
		break;
	case L_RANGE:
	case L_ZIP:
		if ((s = open_parent(in, (size_t)m->parent, &ps, err)) != TM_OK)
			break;
		if ((s = tm_stream_window(ps, l->off, l->len, lab, &st, err)) != TM_OK)
			break;
		if (l->kind == L_ZIP && l->method == 8) {
			/* inflated beside the reader */
			st = tm_stream_inflate(st, lab, true, false, m->name, l->len);
			if (l->deflate_ok)
				tm_stream_zip_fast(st);
			st = tm_stream_ahead(st, lab);
		}
		*out = st;
		break;
	case L_INFLATE:
	case L_ZSTD:
		/* The first open takes the stream the listing primed.  Both
		 * decompress on a producer thread beside the reader. */
		*out = lc_take_parked(&P(in)->locs[i]);
		if (!*out) {
			if ((s = open_parent(in, (size_t)m->parent, &ps, err)) != TM_OK)
				break;
			*out = l->kind == L_ZSTD ? tm_stream_unzstd(ps, lab)
						 : tm_stream_inflate(ps, lab, false, true, NULL, 0);
		}
		if (lc(l)->limit != UINT64_MAX) /* what trace_processor hands over */
			*out = tm_stream_range(*out, lab, lc(l)->limit);
		s = TM_OK;
		break;
	default:
		s = tm_error_set(err, TM_ERR_INVALID, "%s: bad member", lab);
	}
	free(lab);
	if (s == TM_OK)
		tm_stream_set_work(*out, &P(in)->work); /* (children inherit it) */
	return s;
}

enum tm_status
tm_stream_open(const struct tm_input *in, size_t member, struct tm_stream **out,
	       struct tm_error *err)
{
	if (!in || member >= in->n_members || !out)
		return tm_error_set(err, TM_ERR_INVALID, "no member %zu", member);
	*out = NULL;
	return tm_ar_open_member(in, member, out, err);
}

/* Open member i to be read speculatively (known: NULL) or up to a known
 * end.  (A member with a limit: its failure is known, and the stream is a
 * window.) */
static enum tm_status
open_spec(const struct tm_input *in, size_t member, const struct tm_stream_end *known,
	  struct tm_stream **out, struct tm_error *err)
{
	enum tm_status s = tm_stream_open(in, member, out, err);
	const struct loc *l = s == TM_OK ? &P(in)->locs[member] : NULL;
	if (l && (l->kind == L_INFLATE || l->kind == L_ZSTD) && lc(l)->limit == UINT64_MAX) {
		if (known)
			tm_stream_gz_known(*out, known);
		else
			tm_stream_gz_speculate(*out);
	}
	return s;
}

enum tm_status
tm_stream_open_scan(const struct tm_input *in, size_t member, struct tm_stream **out,
		    struct tm_error *err)
{
	return open_spec(in, member, NULL, out, err);
}

enum tm_status
tm_stream_open_known(const struct tm_input *in, size_t member, const struct tm_stream_end *end,
		     struct tm_stream **out, struct tm_error *err)
{
	return open_spec(in, member, end, out, err);
}

enum tm_status
tm_stream_open_raw(const struct tm_input *in, size_t member, struct tm_stream **out,
		   struct tm_error *err)
{
	return tm_stream_open(in, member, out, err);
}

/* ---- one pass over a container's members ---- */

/* Can member i's bytes be reached without decompressing what comes before
 * them? */
bool
tm_ar_direct(const struct tm_input *in, size_t i)
{
	const struct loc *l = &P(in)->locs[i];
	switch (l->kind) {
	case L_FILE:
		return true;
	case L_RANGE:
		return tm_ar_direct(in, (size_t)in->members[i].parent);
	case L_ZIP:
		return l->method == 0 && tm_ar_direct(in, (size_t)in->members[i].parent);
	default:
		return false;
	}
}

size_t
tm_input_seq_parent(const struct tm_input *in, size_t i)
{
	if (i >= in->n_members || in->members[i].parent < 0)
		return SIZE_MAX;
	const struct loc *l = &P(in)->locs[i];
	size_t c = (size_t)in->members[i].parent;
	if ((l->kind != L_RANGE && l->kind != L_ZIP) || tm_ar_direct(in, c))
		return SIZE_MAX;
	return c;
}

uint64_t
tm_seq_offset(const struct tm_input *in, size_t i)
{
	return P(in)->locs[i].off;
}

struct tm_seq {
	const struct tm_input *in;
	size_t c;
	struct tm_stream *st;
	struct tm_rd rd;
};

enum tm_status
tm_seq_open(const struct tm_input *in, size_t c, struct tm_seq **out, struct tm_error *err)
{
	struct tm_stream *st;
	enum tm_status s = tm_ar_open_member(in, c, &st, err);
	if (s != TM_OK)
		return s;
	struct tm_seq *q = xcalloc(1, sizeof *q);
	q->in = in;
	q->c = c;
	q->st = st;
	q->rd.st = st;
	*out = q;
	return TM_OK;
}

enum tm_status
tm_seq_member(struct tm_seq *q, size_t i, struct tm_stream **out, struct tm_error *err)
{
	const struct tm_input *in = q->in;
	const struct loc *l = &P(in)->locs[i];
	if (in->members[i].parent != (int)q->c || l->off < q->rd.off)
		return tm_error_set(err, TM_ERR_INVALID, "member %zu is not ahead in its container",
				    i);
	uint64_t got;
	enum tm_status s = tm_rd_skip(&q->rd, l->off - q->rd.off, &got, err);
	if (s != TM_OK)
		return s;
	if (q->rd.off != l->off)
		return tm_error_set(err, TM_ERR_FORMAT, "member %zu: container ends early", i);
	char *lab = tm_ar_label(in, i);
	struct tm_stream *w = tm_stream_borrow(&q->rd, lab, l->len);
	if (l->kind == L_ZIP && l->method == 8) {
		w = tm_stream_inflate(w, lab, true, false, in->members[i].name, l->len);
		if (l->deflate_ok)
			tm_stream_zip_fast(w);
		w = tm_stream_ahead(w, lab);
	}
	free(lab);
	*out = w;
	return TM_OK;
}

void
tm_seq_close(struct tm_seq *q)
{
	if (!q)
		return;
	tm_stream_close(q->st);
	free(q);
}

/* Read up to cap bytes from the start of a member. */
enum tm_status
tm_ar_read_head(const struct tm_input *in, size_t i, size_t cap, uint8_t *buf, size_t *got,
	  struct tm_error *err)
{
	struct tm_stream *st;
	enum tm_status s = tm_ar_open_member(in, i, &st, err);
	if (s != TM_OK)
		return s;
	struct tm_rd rd = {.st = st};
	s = tm_rd_read(&rd, buf, cap, got, err);
	tm_stream_close(st);
	return s;
}

/* n bytes at off of fd into p; false on an error or an early end. */
static bool
pread_all(int fd, uint8_t *p, size_t n, uint64_t off)
{
	for (size_t done = 0; done < n;) {
		ssize_t r = pread(fd, p + done, n - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		done += (size_t)r;
	}
	return true;
}

/* sniff_top read straight from the file into *buf: no stream, whose
 * fresh block buffer (68 pages at ~15 us a fault here) was most of a warm
 * check's listing of a plain file.  false on anything unusual (an error,
 * a file shorter than it was): the stream reads it again and says what. */
static bool
sniff_top_direct(const struct tm_input *in, uint8_t **buf, size_t *bcap, enum tm_format *f)
{
	uint64_t size = in->members[0].stored_size;
	size_t want = size < SNIFF_CAP ? (size_t)size : SNIFF_CAP;
	size_t pre = want < TM_SNIFF_PREFIX ? want : TM_SNIFF_PREFIX;
	int lent = __atomic_load_n(&P(in)->fds[0], __ATOMIC_ACQUIRE), fd = lent;
	if (fd < 0 && tm_ar_open_path(in, 0, &fd, NULL) != TM_OK)
		return false;
	BIG_XGROW(*buf, *bcap, TM_SNIFF_PREFIX);
	bool ok = pread_all(fd, *buf, pre, 0);
	if (ok) {
		*f = tm_sniff(*buf, pre);
		if (pre < want && !tm_sniff_prefix_decides(*f)) {
			BIG_XGROW(*buf, *bcap, SNIFF_CAP);
			ok = pread_all(fd, *buf + pre, want - pre, pre);
			*f = tm_sniff(*buf, want);
		}
	}
	if (fd != lent)
		close(fd);
	return ok;
}

/* *f: tm_sniff of the input's first SNIFF_CAP bytes, read straight from
 * the file (sniff_top_direct); on anything unusual the stream reads them
 * again and says what went wrong, all SNIFF_CAP at once (what
 * tm_sniff_prefix_decides decides is the same format from them). */
enum tm_status
tm_ar_sniff_top(struct tm_input *in, uint8_t **buf, size_t *bcap, enum tm_format *f,
	  struct tm_error *err)
{
	if (sniff_top_direct(in, buf, bcap, f))
		return TM_OK;
	size_t got = 0;
	/* a staging array (internal.h): 1 MiB of fresh 4 KiB pages faulted
	 * one by one was ~2 ms of every check */
	BIG_XGROW(*buf, *bcap, SNIFF_CAP);
	enum tm_status s = tm_ar_read_head(in, 0, SNIFF_CAP, *buf, &got, err);
	if (s == TM_OK)
		*f = tm_sniff(*buf, got);
	return s;
}

/* The listing's outcome for gzip child mi of ci, whose stream st has
 * delivered total bytes (UINT64_MAX: not read to the end). */
void
tm_ar_gz_record(struct tm_input *in, size_t ci, size_t mi, struct tm_stream *st, uint64_t total)
{
	struct tm_error e2;
	if (tm_stream_gz_failure(st, &e2)) {
		lc_w(&P(in)->locs[ci])->fatal_late = true;
		tm_ar_set_cfatal(in, ci, e2.tp,
			   "after %" PRIu64 " decompressed bytes (%" PRIu64
			   " handed to the inner parser): %s",
			   tm_stream_inflated(st), total, e2.msg);
		free(in->members[mi].error); /* (walk's "nested more than 8 deep") */
		in->members[mi].error = xstrdup(e2.msg);
		/* The inner parser sees only what was handed over. */
		lc_w(&P(in)->locs[mi])->limit = total;
	}
	in->members[mi].size = in->members[mi].stored_size = total;
	tm_ar_publish(in, mi);
}

/* Read st to its end (or trace_processor's failure); our own errors (I/O)
 * are returned. */
enum tm_status
tm_ar_gz_drain(struct tm_stream *st, struct tm_error *err)
{
	struct tm_error e2;
	for (;;) {
		const uint8_t *p;
		size_t n;
		tm_error_clear(&e2);
		enum tm_status s = tm_stream_next(st, &p, &n, &e2);
		if (s != TM_OK && !e2.tp[0]) {
			*err = e2;
			return s;
		}
		if (s != TM_OK || !n)
			return TM_OK;
	}
}

/* A container walk over gzip child mi is over (st: the stream it read
 * through, or NULL if it never started): inflate the rest and record the
 * size and trace_processor's error, as trace_processor decompresses the
 * whole stream whatever its inner reader did. */
enum tm_status
tm_ar_gz_settle(struct tm_input *in, size_t mi, struct tm_stream *st, struct tm_error *err)
{
	struct loc *lo = &P(in)->locs[mi];
	if ((lo->kind != L_INFLATE && lo->kind != L_ZSTD) || !lc(lo)->gz_walk)
		return TM_OK;
	lc_w(lo)->gz_walk = false;
	struct tm_stream *own = NULL;
	if (!st)
		st = own = lc_take_parked(lo);
	if (!st)
		return TM_OK;
	enum tm_status s = tm_ar_gz_drain(st, err);
	if (s == TM_OK)
		tm_ar_gz_record(in, (size_t)in->members[mi].parent, mi, st, tm_stream_offset(st));
	tm_stream_close(own);
	return s;
}

/* Container mi (gzip/zstd child) read through st by its walk: st read on
 * to its end (as gz_settle would) and *stands: whether walk_gzip's sniff
 * of it stands, i.e. it was verified, or it was provisional (locs[mi].prov,
 * cleared here) and the stream reached a hand-over past the sniff's bytes
 * (tm_stream_gz_verified).  Our own error reading on is returned (*stands
 * set all the same). */
enum tm_status
tm_ar_gz_prov_drain(struct tm_input *in, size_t mi, struct tm_stream *st, bool *stands,
	      struct tm_error *err)
{
	struct loc_c *l = lc_w(&P(in)->locs[mi]);
	enum tm_status s = tm_ar_gz_drain(st, err);
	uint64_t h;
	bool clean;
	*stands = !l->prov || tm_stream_gz_verified(st, &h, &clean);
	l->prov = false;
	return s;
}


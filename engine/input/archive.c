/* SPDX-License-Identifier: MIT */
/*
 * Inputs and the member table (importers/archive/: tar_trace_reader.cc,
 * zip_trace_reader.cc, archive_entry.cc; docs/semantics.md).
 *
 * One path: a TAR, ZIP, gzip or zstd (tar.gz is gzip -> "" -> tar), or a
 * plain trace.  Several paths: the TAR `trace_processor util merge` would
 * write (member 0 a virtual "tar", members = base names in argument order).
 *
 * The TAR walker follows tar_trace_reader.cc rule by rule; the ZIP walker
 * reads local headers in physical order like util/zip_reader.cc.  Both are
 * ours, not libarchive's readers: trace_processor ignores PAX headers
 * (libarchive applies them), aborts on zero-size links, and its error texts
 * carry byte offsets of its own header walk; its ZIP streaming checks (data
 * descriptors, version, flags) need the raw header fields.  libarchive is
 * used where it serves: zstd decompression (stream.c); gzip stays on zlib
 * (stream.c says why).
 *
 * Listing reads: TAR headers and each member's first 512 bytes (windows over
 * files are skipped without reading); ZIP containers are read (and
 * decompressed) once in full: trace_file ids of ZIP entries depend on the
 * CRC/decompression outcome of the entries before them (registration stops
 * at the first failure).
 *
 * gzip/zstd: trace_processor hands the inner parser 32 MiB blobs and each
 * complete gzip member / zstd frame; on a decompression error the rest is
 * never parsed.  The walk records how much was handed over; the child's
 * size, sniff and stream are cut there, and nothing nested in it reaches its
 * own end of input (the outer error comes first).  zstd frame ends are not
 * visible through libarchive, so there only the 32 MiB hand-overs count.
 *
 * gzip/ctrace/zstd take one decompression pass (walk_gzip): their streams
 * deliver only what trace_processor hands over (stream.c), the listing
 * inflates the first chunk(s) for the sniff, and then
 *  - an inner trace (proto, JSON, systrace) is streamed by its scan, which
 *    takes over the listing's stream.  Until that scan, the child's size and
 *    stored_size are UINT64_MAX (unknown) and a decompression failure past
 *    the first chunk is unknown: in->fatal stays NULL; the scan's
 *    tm_stream_next fails with err->tp set and the session adds
 *    trace_processor's FATAL after the member's events (where
 *    trace_processor fails: the gzip container has that one child), and
 *    sets the size to what the stream delivered.  A failure inside the
 *    first chunk, and any stream whose whole output fits the first chunk,
 *    is known at open as before (size, in->fatal, the child never started
 *    when nothing was handed over).
 *  - an inner TAR/ZIP is walked through that same stream; the rest of the
 *    stream is inflated after the walk (gz_settle) for the size and the
 *    error.  Everything is known at open.
 *  - other inner formats (not scanned, or gzip/zstd again) are inflated to
 *    the end at open: everything is known at open.
 *
 * Limits (hostile input): nesting depth 8 (real archives nest 2-3 deep),
 * 1,000,000 members (more than any trace archive; each costs a table row),
 * GNU long names of 1 MiB (PATH_MAX is 4 KiB), sniff buffers of 1 MiB.
 *
 * This file: the walk over nested containers (gzip, ctrace and zstd
 * children, a TAR inside them) and the input's open and close; the parts
 * it calls (table, order, streams, TAR, ZIP) are named in input_priv.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "zinflate.h"
#include "input_priv.h"

/* ---- table ---- */

static enum tm_status walk(struct tm_input *in, size_t ci, int depth, struct tm_error *err);
static enum tm_status walk_gzip_primed(struct tm_input *in, size_t ci, size_t mi,
				       struct tm_stream *st, const uint8_t *p, size_t n, bool done,
				       struct tm_error *err);
static enum tm_status walk_tar(struct tm_input *in, size_t ci, struct tm_error *err);
static enum tm_status walk_compressed(struct tm_input *in, size_t ci, struct tm_error *err);

/* Container ci's own members listed (not theirs: walk recurses), as its
 * format says (nothing for a format that is not a container). */
static enum tm_status
walk_as(struct tm_input *in, size_t ci, struct tm_error *err)
{
	switch (in->members[ci].format) {
	case TM_FMT_TAR:
		return walk_tar(in, ci, err);
	case TM_FMT_ZIP:
		return tm_ar_walk_zip(in, ci, err);
	default:
		return tm_format_is_container(in->members[ci].format) ? walk_compressed(in, ci, err)
								     : TM_OK;
	}
}

/* gzip/zstd child mi listed again, verified first: its provisional sniff
 * (walk_gzip, a TAR) read bytes never handed over.  Not walked. */
static enum tm_status
relist_gz_only(struct tm_input *in, size_t mi, struct tm_error *err)
{
	struct tm_stream *st;
	const uint8_t *p;
	size_t n;
	bool done;
	struct loc_c *l = lc_w(&P(in)->locs[mi]);
	l->gz_walk = false;
	__atomic_store_n(&P(in)->work.bytes, l->prov_bytes0, __ATOMIC_RELAXED);
	enum tm_status s = tm_ar_open_member(in, mi, &st, err);
	if (s != TM_OK)
		return s;
	if ((s = tm_stream_gz_prime(st, SNIFF_CAP, &p, &n, &done, err)) != TM_OK) {
		tm_stream_close(st);
		return s;
	}
	return walk_gzip_primed(in, (size_t)in->members[mi].parent, mi, st, p, n, done, err);
}

/* relist_gz_only, then walked as what it is now. */
static enum tm_status
relist_gz(struct tm_input *in, size_t mi, struct tm_error *err)
{
	enum tm_status s = relist_gz_only(in, mi, err);
	return s != TM_OK ? s : walk_as(in, mi, err);
}

/* A TAR inside gzip/zstd (the stream the listing parked for the walk) is
 * read speculatively (tm_stream_gz_speculate): decompressed once, read
 * before trace_processor's hand-over is known.  Should the stream fail
 * after the walk read past the last hand-over, everything the walk did is
 * undone (members listed and scanned, the container's error, the bytes
 * charged to the listing's cap) and the TAR walked again, verified first;
 * if walk_gzip's sniff of it was provisional and the stream failed before
 * a hand-over past it, listed again verified first (relist_gz). */
static enum tm_status
walk_tar(struct tm_input *in, size_t ci, struct tm_error *err)
{
	struct priv *pv = P(in);
	bool spec = (pv->locs[ci].kind == L_INFLATE || pv->locs[ci].kind == L_ZSTD) &&
		    lc(&pv->locs[ci])->gz_walk && lc(&pv->locs[ci])->parked;
	struct tm_stream_end end = {0};
	for (int pass = 0;; pass++) {
		struct tm_stream *st;
		enum tm_status s = tm_ar_open_member(in, ci, &st, err);
		if (s != TM_OK)
			return s;
		if (spec && pass == 0)
			tm_stream_gz_speculate(st);
		else if (spec)
			tm_stream_gz_quiet(st); /* as walk_gzip parked it */
		if (spec && pass == 1 && end.known)
			tm_stream_gz_known(st, &end);
		size_t first = in->n_members, vis_end = 0;
		uint64_t bytes0 = __atomic_load_n(&pv->work.bytes, __ATOMIC_RELAXED);
		tm_stream_short_read(st); /* a header first, not a block */
		s = tm_ar_tar_entries(in, ci, st, &vis_end, err);
		if (spec && pass == 0 && s != TM_ERR_CANCELLED) {
			/* read on to the end (gz_settle would; our own error
			 * is gz_settle's to report): did the walk read past a
			 * failure's last hand-over?  Does a provisional sniff
			 * stand? */
			struct tm_error e2;
			tm_error_clear(&e2);
			bool stands;
			(void)tm_ar_gz_prov_drain(in, ci, st, &stands, &e2);
			bool refuted = tm_stream_refuted(st, &end);
			if (refuted || !stands) {
				tm_stream_close(st);
				for (size_t i = first; i < vis_end; i++)
					pv->visit->drop(pv->visit->ud, i);
				tm_ar_unlist_from(in, first);
				tm_ar_clear_cfatal(in, ci);
				__atomic_store_n(&pv->work.bytes, bytes0, __ATOMIC_RELAXED);
				tm_error_clear(err);
				if (stands)
					continue;
				return relist_gz(in, ci, err);
			}
		}
		enum tm_status s2 = tm_ar_gz_settle(in, ci, st, err);
		if (s == TM_OK)
			s = s2;
		tm_stream_close(st);
		return s;
	}
}

/* ---- gzip / ctrace / zstd ---- */

/* trace_processor's DecompressingTraceReader collects output in a 32 MiB
 * buffer and hands it to the inner parser when the buffer is full or a gzip
 * member / zstd frame ends.  Output still in the buffer when decompression
 * fails is never parsed (decompressing_trace_reader.cc:96-145). */
#define TP_BLOB (32ull << 20)

static enum tm_status walk_gzip_visit(struct tm_input *in, size_t ci, size_t mi,
				      struct tm_stream *st, enum tm_format f, uint64_t bytes0,
				      struct tm_error *err);

/* Keep st, gzip/zstd child mi's stream with nothing read from it yet, for
 * its scan (open_member takes it), if the caps on parked streams allow
 * (the inflated bytes it holds counted): false if not (st still ours). */
static bool
park(struct tm_input *in, size_t mi, struct tm_stream *st)
{
	struct priv *pv = P(in);
	uint64_t held = tm_stream_inflated(st);
	if (pv->n_parked >= PARK_MAX_STREAMS || pv->parked_bytes + held > PARK_MAX_BYTES)
		return false;
	lc_w(&pv->locs[mi])->parked = st;
	pv->n_parked++;
	pv->parked_bytes += held;
	return true;
}

/* Listing bytes left before the cap that let a provisional sniff
 * (walk_gzip_visit) stand for the verified one: more than the verified
 * prime charges (a 32 MiB chunk and the sniff's 1 MiB). */
#define PROV_MIN_LEFT (64ull << 20)

/* gzip / ctrace, in one inflate pass (decompressing_trace_reader.cc).  The listing
 * inflates only until the sniff has its bytes: the first hand-over chunk(s),
 * at least 1 MiB of handed-over output or the whole stream if shorter.  When
 * that reached the end (or the failure) of the stream, everything is known
 * as before.  Otherwise:
 *  - a trace format we scan: the child's size stays UINT64_MAX ("unknown
 *    until scanned"); the primed stream is parked for the scan, which reads
 *    on from it (the session sets the size from what the stream delivered,
 *    and a decompression failure comes out of tm_stream_next with err->tp:
 *    a FATAL after the member's events, where trace_processor fails);
 *  - a container (tar.gz, zip.gz, ...): the stream is parked for the
 *    container's walk, which reads through it; a decompression failure
 *    ends it there (what the inner reader was handed) and gz_settle
 *    inflates what the walk left and records the size and the error;
 *  - a format nobody scans: the rest is inflated now (its size and
 *    trace_processor's error are part of the listing).
 * With PROV_MIN_LEFT under the listing's cap the sniff does not wait for
 * the first hand-over (tm_stream_gz_peek, provisional): a scanned format
 * is scanned at once (walk_gzip_visit), a TAR walked (walk_tar; walk at
 * MAX_DEPTH), each checking afterwards that the stream reached a
 * hand-over past the sniff's bytes, else listing it again verified first. */
static enum tm_status
walk_gzip(struct tm_input *in, size_t ci, size_t mi, struct tm_error *err)
{
	struct tm_stream *st;
	const uint8_t *p;
	size_t n;
	bool done, prov = false;
	struct priv *pv = P(in);
	enum tm_status s = tm_ar_open_member(in, mi, &st, err);
	if (s != TM_OK)
		return s;
	/* The sniff need not wait for the first hand-over: a scanned format
	 * is scanned now (walk_gzip_visit, with a visitor), a TAR walked
	 * (walk_tar), both checking it afterwards. */
	uint64_t bytes0 = __atomic_load_n(&pv->work.bytes, __ATOMIC_RELAXED);
	uint64_t budget = __atomic_load_n(&pv->work.budget, __ATOMIC_RELAXED);
	bool peek = budget > bytes0 && budget - bytes0 >= PROV_MIN_LEFT;
	s = peek ? tm_stream_gz_peek(st, SNIFF_CAP, &p, &n, &done, &prov, err)
		 : tm_stream_gz_prime(st, SNIFF_CAP, &p, &n, &done, err);
	if (s != TM_OK) {
		tm_stream_close(st);
		return s;
	}
	if (prov) {
		enum tm_format f = tm_sniff(p, n < SNIFF_CAP ? n : SNIFF_CAP);
		if (pv->visit && tm_format_is_predicted(f) && !tm_format_is_container(f) &&
		    !in->members[mi].is_hidden)
			return walk_gzip_visit(in, ci, mi, st, f, bytes0, err);
		if (f == TM_FMT_TAR) { /* walk_tar reads it speculatively, checks it */
			s = walk_gzip_primed(in, ci, mi, st, p, n, done, err);
			lc_w(&pv->locs[mi])->prov = true;
			lc_w(&pv->locs[mi])->prov_bytes0 = bytes0;
			return s;
		}
		/* verified first after all, as always */
		if ((s = tm_stream_gz_prime(st, SNIFF_CAP, &p, &n, &done, err)) != TM_OK) {
			tm_stream_close(st);
			return s;
		}
	}
	return walk_gzip_primed(in, ci, mi, st, p, n, done, err);
}

/* A gzip/zstd member whose sniff read bytes not yet known to be handed
 * over (tm_stream_gz_peek), in a format the visitor scans: scanned now,
 * as it is decompressed, once (trace_processor's decompressing_trace_reader.cc
 * hands the same bytes to its inner parser).  The listing is what the
 * verified prime would have given if the stream reaches a hand-over past
 * the sniff's bytes (tm_stream_gz_verified); then the member stands as
 * listed and scanned (its size known if that hand-over was the end, as the
 * verified prime would have found).  If not, the sniff read bytes
 * trace_processor never parses: the scan is dropped, and the member listed
 * again, verified first.  A scan refuted after such a hand-over is dropped
 * and the member parked to be read again up to the known failure. */
static enum tm_status
walk_gzip_visit(struct tm_input *in, size_t ci, size_t mi, struct tm_stream *st,
		enum tm_format f, uint64_t bytes0, struct tm_error *err)
{
	struct priv *pv = P(in);
	const struct tm_visit *v = pv->visit;
	struct tm_member *m = &in->members[mi];
	tm_ar_set_format(m, f);
	tm_ar_gz_record(in, ci, mi, st, UINT64_MAX); /* (no failure yet) */
	/* the scan's decompression is not the listing's (its cap is lifted
	 * once the listing ends, and the verified prime charged the first
	 * chunk only: charged below), only shown as inflated */
	tm_stream_set_work(st, &pv->scan_work);
	tm_stream_gz_speculate(st);
	char *lab = tm_ar_label(in, mi);
	struct tm_rd rd = {.st = st};
	struct tm_stream *w = tm_stream_borrow_rest(&rd, lab);
	free(lab);
	enum tm_status s = v->member(v->ud, mi, w, err);
	if (s != TM_OK) {
		tm_stream_close(st);
		return s;
	}
	struct tm_stream_end end = {0};
	bool refuted = tm_stream_refuted(st, &end);
	uint64_t handed;
	bool clean;
	bool stands = tm_stream_gz_verified(st, &handed, &clean);
	tm_stream_close(st);
	if (stands)
		__atomic_store_n(&pv->work.bytes, bytes0 + handed, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&pv->work.bytes, bytes0, __ATOMIC_RELAXED);
	if (stands && !refuted) {
		if (clean) { /* the verified prime saw the whole stream */
			m->size = m->stored_size = handed;
			tm_ar_publish(in, mi);
		}
		return TM_OK;
	}
	v->drop(v->ud, mi);
	free(m->error);
	m->error = NULL;
	m->size = m->stored_size = UINT64_MAX;
	if ((s = tm_ar_open_member(in, mi, &st, err)) != TM_OK)
		return s;
	if (stands) {
		/* listed right; the scan reads it again (session.c) up to the
		 * failure the refuted read found */
		if (end.known)
			tm_stream_gz_known(st, &end);
		if (!park(in, mi, st))
			tm_stream_close(st);
		tm_ar_publish(in, mi);
		return TM_OK;
	}
	const uint8_t *p;
	size_t n;
	bool done;
	if ((s = tm_stream_gz_prime(st, SNIFF_CAP, &p, &n, &done, err)) != TM_OK) {
		tm_stream_close(st);
		return s;
	}
	return walk_gzip_primed(in, ci, mi, st, p, n, done, err);
}

/* walk_gzip once the listing's prime is verified. */
static enum tm_status
walk_gzip_primed(struct tm_input *in, size_t ci, size_t mi, struct tm_stream *st,
		 const uint8_t *p, size_t n, bool done, struct tm_error *err)
{
	enum tm_status s;
	enum tm_format f = tm_sniff(p, n < SNIFF_CAP ? n : SNIFF_CAP);
	struct priv *pv = P(in);
	tm_ar_set_format(&in->members[mi], f);
	if (f == TM_FMT_TAR || f == TM_FMT_ZIP) {
		in->members[mi].size = in->members[mi].stored_size = UINT64_MAX;
		tm_ar_publish(in, mi);
		tm_stream_gz_quiet(st);
		lc_w(&pv->locs[mi])->parked = st;
		lc_w(&pv->locs[mi])->gz_walk = true;
		return TM_OK;
	}
	uint64_t total = UINT64_MAX;
	if (done) {
		total = tm_stream_gz_ready(st); /* all that will ever be handed over */
	} else if (!tm_format_is_predicted(f) || tm_format_is_container(f)) {
		/* (a gzip/zstd stream inside: its walk opens its own) */
		if ((s = tm_ar_gz_drain(st, err)) != TM_OK) {
			tm_stream_close(st);
			return s;
		}
		total = tm_stream_offset(st);
	}
	tm_ar_gz_record(in, ci, mi, st, total);
	if (tm_stream_offset(st) != 0 || tm_format_is_container(f) || !park(in, mi, st))
		tm_stream_close(st);
	return TM_OK;
}

static enum tm_status
walk_compressed(struct tm_input *in, size_t ci, struct tm_error *err)
{
	enum tm_format f = in->members[ci].format;
	size_t mi = tm_ar_add_member(in, (int)ci, "", 0, f == TM_FMT_ZSTD ? L_ZSTD : L_INFLATE);
	if (f == TM_FMT_ZSTD && tm_zstd_missing()) {
		/* Our limitation, not trace_processor's (it decodes zstd). */
		struct tm_member *m = &in->members[mi];
		struct tm_buf b;
		tm_buf_init(&b);
		tm_buf_addf(&b, "zstd decompression is unavailable: %s", tm_zstd_missing());
		m->error = tm_buf_steal(&b);
		m->size = m->stored_size = 0;
		tm_ar_set_format(m, TM_FMT_UNKNOWN);
		tm_ar_publish(in, mi);
		return TM_OK;
	}
	return walk_gzip(in, ci, mi, err);
}

static enum tm_status
walk(struct tm_input *in, size_t ci, int depth, struct tm_error *err)
{
	enum tm_format f = in->members[ci].format;
	size_t first = in->n_members;
	enum tm_status s;

	if (!tm_format_is_container(f))
		return TM_OK;
	if (depth >= MAX_DEPTH) {
		struct loc_c *l = lc_w(&P(in)->locs[ci]);
		struct tm_stream *st = NULL;
		if (l->prov) {
			/* walk_gzip's sniff (a TAR) was provisional: it stands if
			 * the stream reaches a hand-over past it (as in walk_tar) */
			st = lc_take_parked(&P(in)->locs[ci]);
			bool stands = true;
			if (st && (s = tm_ar_gz_prov_drain(in, ci, st, &stands, err)) != TM_OK) {
				tm_stream_close(st);
				return s;
			}
			l->prov = false; /* (cleared there too) */
			if (!stands) {
				tm_stream_close(st);
				st = NULL;
				if ((s = relist_gz_only(in, ci, err)) != TM_OK)
					return s;
				if (!tm_format_is_container(in->members[ci].format))
					return TM_OK;
			}
		}
		/* trace_processor's readers recurse without a limit (each
		 * container's members go to a new ForwardingTraceParser); we
		 * stop here and say the prediction is incomplete. */
		in->members[ci].error = xstrdup("archives nested more than 8 deep are not expanded");
		in->members[ci].is_unexpanded = true;
		s = tm_ar_gz_settle(in, ci, st, err);
		tm_stream_close(st);
		return s;
	}
	if ((s = walk_as(in, ci, err)) != TM_OK)
		return s;
	size_t last = in->n_members;
	for (size_t i = first; i < last; i++) {
		if (in->members[i].parent != (int)ci || in->members[i].is_hidden)
			continue;
		if ((s = walk(in, i, depth + 1, err)) != TM_OK)
			return s;
	}
	return TM_OK;
}

/* ---- open / close ---- */

/* Input path i opened before any of its bytes are read: its identity
 * (device, inode, size, mtime, ctime) from that descriptor, and the time
 * just before, which is what a saved scan of it is keyed on (scancache.c:
 * a tar.gz's members are scanned while it is listed, so a key taken after
 * the listing could name a newer file than the one read).  Not blocking
 * (a FIFO given as input is refused, not waited on).  Closed again: the
 * opens that read it (open_path) check that they find the same file, and
 * one descriptor per input held from here would run into the descriptor
 * limit where opening them one at a time does not. */
static enum tm_status
open_input(struct tm_input *in, size_t i, uint64_t *size, struct tm_error *err)
{
	const char *path = in->paths[i];
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return tm_error_sys(err, errno, "%s", path);
	struct priv *pv = P(in);
	if (!tm_ar_id_of(fd, &pv->ids[i])) {
		close(fd);
		return tm_error_set(err, TM_ERR_INVALID, "%s: not a regular file", path);
	}
	pv->id_taken_s[i] = (int64_t)t0.tv_sec;
	pv->id_state[i] = ID_TAKEN;
	*size = pv->ids[i].size;
	/* kept, under the cap, for the reads that follow (the sniff, the
	 * members): an open and a close of the same file per read otherwise */
	tm_ar_blocking(fd);
	if (!tm_ar_lend(in, i, fd))
		close(fd);
	return TM_OK;
}

bool
tm_input_file_id(const struct tm_input *in, size_t i, struct tm_file_id *id, int64_t *taken_s)
{
	if (i >= in->n_paths || !P(in)->id_state[i])
		return false;
	*id = P(in)->ids[i];
	*taken_s = P(in)->id_taken_s[i];
	return true;
}

bool
tm_input_unchanged(const struct tm_input *in, size_t i)
{
	const struct priv *pv = P(in);
	struct tm_file_id now;
	if (i >= in->n_paths ||
	    __atomic_load_n(&pv->id_state[i], __ATOMIC_RELAXED) != ID_TAKEN)
		return false;
	int fd = __atomic_load_n(&pv->fds[i], __ATOMIC_ACQUIRE);
	if (fd >= 0 && (!tm_ar_id_of(fd, &now) || memcmp(&now, &pv->ids[i], sizeof now)))
		return false;
	/* the path too: a file read by path later must be this one */
	struct stat st;
	return stat(in->paths[i], &st) == 0 && tm_file_id_of(&st, &now) &&
	       !memcmp(&now, &pv->ids[i], sizeof now);
}

enum tm_status
tm_input_open(struct tm_input *in, const char *const *paths, size_t n_paths,
	      struct tm_error *err)
{
	return tm_input_open_ctl(in, paths, n_paths, NULL, 0, err);
}

/* The listing's decompression cap: real archives expand a few times (deflate
 * tops out near 1032x on one level), a nested bomb by its ratio at every
 * level. */
#define LIST_BUDGET_BASE (1ull << 30)
#define LIST_BUDGET_RATIO 1024u

enum tm_status
tm_input_open_ctl(struct tm_input *in, const char *const *paths, size_t n_paths,
		  volatile bool *cancel, uint64_t budget, struct tm_error *err)
{
	return tm_input_open_visit(in, paths, n_paths, cancel, budget, NULL, NULL, err);
}

enum tm_status
tm_input_open_visit(struct tm_input *in, const char *const *paths, size_t n_paths,
		    volatile bool *cancel, uint64_t budget, const struct tm_visit *visit,
		    struct tm_listing *pub, struct tm_error *err)
{
	enum tm_status s;
	uint8_t *buf = NULL;
	size_t got, bcap = 0;

	memset(in, 0, sizeof *in);
	if (!paths || n_paths == 0)
		return tm_error_set(err, TM_ERR_INVALID, "no input files");
	in->priv = xcalloc(1, sizeof(struct priv));
	struct tm_work *w = &P(in)->work;
	P(in)->visit = visit;
	w->cancel = cancel;
	uint64_t in_bytes = 0;
	{
		struct stat sb;
		for (size_t i = 0; i < n_paths; i++)
			if (stat(paths[i], &sb) == 0 && sb.st_size > 0)
				in_bytes += (uint64_t)sb.st_size;
	}
	P(in)->pub = pub;
	w->shown = P(in)->scan_work.shown = &P(in)->shown;
	P(in)->scan_work.budget = UINT64_MAX;
	tm_listing_begin(pub, in_bytes, &w->read_pos, &P(in)->shown);
	if (budget) {
		w->budget = budget;
		snprintf(w->cap, sizeof w->cap, "%" PRIu64 " bytes", budget);
	} else {
		uint64_t total = in_bytes;
		w->budget = LIST_BUDGET_BASE + (total > (UINT64_MAX - LIST_BUDGET_BASE) / LIST_BUDGET_RATIO
							? UINT64_MAX - LIST_BUDGET_BASE
							: total * LIST_BUDGET_RATIO);
		snprintf(w->cap, sizeof w->cap,
			 "%" PRIu64 " bytes (1 GiB + %ux the input's %" PRIu64 " bytes)", w->budget,
			 LIST_BUDGET_RATIO, total);
	}
	in->paths = xcalloc(n_paths, sizeof *in->paths);
	P(in)->fds = xmalloc(n_paths * sizeof *P(in)->fds);
	P(in)->ids = xcalloc(n_paths, sizeof *P(in)->ids);
	P(in)->id_taken_s = xcalloc(n_paths, sizeof *P(in)->id_taken_s);
	P(in)->id_state = xcalloc(n_paths, 1);
	for (size_t i = 0; i < n_paths; i++) {
		in->paths[i] = xstrdup(paths[i]);
		P(in)->fds[i] = -1;
	}
	in->n_paths = n_paths;
	in->fatal_after = SIZE_MAX;

	if (n_paths == 1) {
		uint64_t size;
		if ((s = open_input(in, 0, &size, err)) != TM_OK)
			goto fail;
		size_t mi = tm_ar_add_member(in, -1, NULL, 0, L_FILE);
		in->members[mi].source_path = in->paths[0];
		in->members[mi].size = in->members[mi].stored_size = size;
		enum tm_format f = TM_FMT_UNKNOWN;
		if ((s = tm_ar_sniff_top(in, &buf, &bcap, &f, err)) != TM_OK)
			goto fail;
		tm_ar_set_format(&in->members[0], f);
		tm_ar_publish(in, 0);
	} else {
		in->is_loose = true;
		size_t mi = tm_ar_add_member(in, -1, NULL, 0, L_VIRTUAL);
		tm_ar_set_format(&in->members[mi], TM_FMT_TAR);
		uint64_t tar = 1024;
		BIG_XGROW(buf, bcap, TAR_SNIFF);
		for (size_t i = 0; i < n_paths; i++) {
			uint64_t size;
			if ((s = open_input(in, i, &size, err)) != TM_OK)
				goto fail;
			const char *bn = tm_path_base(paths[i]);
			size_t k = tm_ar_add_member(in, 0, bn, strlen(bn), L_FILE);
			struct tm_member *m = &in->members[k];
			m->source_path = in->paths[i];
			m->size = m->stored_size = size;
			m->index = i;
			m->is_hidden = tm_ar_is_hidden(m->name, m->name_len);
			P(in)->locs[k].path_idx = i;
			tar += 512 + (size + 511) / 512 * 512;
			if (!m->is_hidden) {
				if ((s = tm_ar_read_head(in, k, TAR_SNIFF, buf, &got, err)) != TM_OK)
					goto fail;
				tm_ar_set_format(&in->members[k], tm_sniff(buf, got));
			}
			tm_ar_publish(in, k);
		}
		in->members[0].size = in->members[0].stored_size = (tar + 10239) / 10240 * 10240;
		tm_ar_publish(in, 0);
	}
	BIG_FREE(buf, bcap);
	buf = NULL;
	bcap = 0;

	/* Expand containers: the top level, or each loose file. */
	if (in->is_loose) {
		size_t n = in->n_members;
		for (size_t i = 1; i < n; i++)
			if (!in->members[i].is_hidden && (s = walk(in, i, 1, err)) != TM_OK)
				goto fail;
	} else if ((s = walk(in, 0, 0, err)) != TM_OK) {
		goto fail;
	}

	/* trace_file ids and processing order. */
	struct priv *pv = P(in);
	in->members[0].trace_file_id = pv->next_id++;
	tm_ar_start(in, 0);
	tm_ar_process(in, 0);
	if (!in->fatal)
		in->fatal_after = SIZE_MAX;
	/* The cap and the caller's flag are the listing's; scans have their
	 * own cancel flag (streams opened later still point here). */
	__atomic_store_n(&w->budget, UINT64_MAX, __ATOMIC_RELAXED);
	__atomic_store_n(&w->cancel, NULL, __ATOMIC_RELEASE);
	P(in)->visit = NULL;
	tm_listing_end(pub);
	P(in)->pub = NULL;
	return TM_OK;
fail:
	BIG_FREE(buf, bcap);
	tm_listing_end(pub);
	tm_input_close(in);
	return s;
}

void
tm_input_close(struct tm_input *in)
{
	if (!in)
		return;
	struct priv *pv = in->priv;
	for (size_t i = 0; i < in->n_members; i++) {
		free(in->members[i].name);
		free(in->members[i].error);
		if (pv) {
			lc_free(&pv->locs[i]);
		}
	}
	free(in->members);
	for (size_t i = 0; i < in->n_paths; i++) {
		free(in->paths[i]);
		if (pv && pv->fds && pv->fds[i] >= 0)
			close(pv->fds[i]);
	}
	free(in->paths);
	free(in->proc);
	free(in->fatal);
	free(in->warning);
	free(in->fatal_where);
	if (pv) {
		free(pv->locs);
		free(pv->fds);
		free(pv->ids);
		free(pv->id_taken_s);
		free(pv->id_state);
	}
	free(pv);
	memset(in, 0, sizeof *in);
}

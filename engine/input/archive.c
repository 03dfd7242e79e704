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

#include "formats.h"
#include "input.h"
#include "zinflate.h"
#include "archive_priv.h"

#define MAX_DEPTH 8
#define MAX_MEMBERS 1000000u
#define MAX_LONG_NAME (1u << 20)
#define SNIFF_CAP (1u << 20) /* top level, ZIP members, inflated streams */
#define TAR_SNIFF 512u

enum loc_kind { L_FILE, L_VIRTUAL, L_RANGE, L_ZIP, L_INFLATE, L_ZSTD };

/* What only containers and gzip/zstd members use: its own block (struct
 * loc.c), NULL for plain members (most of an archive's 10,000s). */
struct loc_c {
	/* containers: the walk's outcome */
	char *cfatal;    /* trace_processor's text */
	char *cwhere;    /* ours */
	size_t reg_limit; /* children registered before cfatal (SIZE_MAX all) */
	uint64_t limit;   /* L_INFLATE / L_ZSTD: bytes the inner parser is handed */
	/* L_INFLATE: the stream the listing primed (nothing read from it yet),
	 * handed to the first tm_stream_open so that the scan does not inflate
	 * the first chunk again. */
	struct tm_stream *parked;
	/* its sniff was provisional (tm_stream_gz_peek): walk_tar checks it
	 * (prov_bytes0: the listing's charged bytes before it) */
	uint64_t prov_bytes0;
	bool prov;
	bool fatal_late;  /* cfatal raised after the children were processed */
	bool fatal_eof;   /* cfatal raised only at the container's end of input */
	/* L_INFLATE holding a container: parked in quiet mode for the
	 * container walk, which reads through it; gz_settle finishes it. */
	bool gz_walk;
};

/* A plain member's struct loc_c (nothing is written to it). */
static const struct loc_c loc_c_none = { .reg_limit = SIZE_MAX, .limit = UINT64_MAX };

struct loc {
	enum loc_kind kind;
	int16_t method;  /* L_ZIP: 0 stored, 8 deflate */
	bool deflate_ok; /* L_ZIP deflate: the listing inflated it without a
			  * failure (ISA-L may read it again: zinflate.h) */
	size_t path_idx; /* L_FILE */
	uint64_t off;    /* L_RANGE / L_ZIP: data offset in the parent's stream */
	uint64_t len;    /* L_RANGE: size; L_ZIP: compressed size */
	/* NULL until written (lc_w), from the listing's thread only; always
	 * there for L_INFLATE / L_ZSTD, whose parked stream a scan takes */
	struct loc_c *c;
	/* (one per member, 10,000s in an archive) */
};
_Static_assert(sizeof(struct loc) <= 40, "struct loc: one per member");

/* l's container fields to read. */
static inline const struct loc_c *
lc(const struct loc *l)
{
	return l->c ? l->c : &loc_c_none;
}

/* l's container fields to write (the listing's thread). */
static struct loc_c *
lc_w(struct loc *l)
{
	if (!l->c) {
		l->c = xmalloc(sizeof *l->c);
		*l->c = loc_c_none;
	}
	return l->c;
}

/* l's parked stream, taken (NULL if none). */
static struct tm_stream *
lc_take_parked(struct loc *l)
{
	return l->c ? __atomic_exchange_n(&l->c->parked, NULL, __ATOMIC_ACQ_REL) : NULL;
}

static void
lc_free(struct loc *l)
{
	if (!l->c)
		return;
	free(l->c->cfatal);
	free(l->c->cwhere);
	tm_stream_close(l->c->parked);
	free(l->c);
	l->c = NULL;
}

struct priv {
	struct loc *locs;
	size_t cap;
	uint32_t next_id;
	uint32_t next_order;
	size_t proc_cap;
	bool stop;
	uint64_t parked_bytes; /* inflated bytes held by parked streams */
	size_t n_parked;
	struct tm_work work; /* every stream's: listing budget, cancel flag */
	/* a scan while listing (walk_gzip_visit): no cap, no cancel flag; its
	 * bytes shown as inflated (shown: every byte the listing inflated) */
	struct tm_work scan_work;
	uint64_t shown;
	const struct tm_visit *visit; /* scan while listing (tm_input_open_visit) */
	struct tm_listing *pub;       /* members published as found (NULL: none) */
	size_t n_pub;                 /* members put there so far */
	/* per input path: a descriptor of it as the container of members
	 * read (open_parent; -1 until the first), lent to their streams:
	 * an open and a close per member were ~10% of the CPU a TAR of
	 * 1,000 members of 256 KiB cost beyond one member.  At most
	 * LENT_FDS are open (n_fds, under fds_mu): past them (many archives on one
	 * command line) a member opens its archive itself, as it did before,
	 * so that a descriptor limit is not reached by the inputs' count */
	int *fds;
	unsigned n_fds;
	/* per input path: its identity, from the descriptor the open took
	 * before any byte of it was read (open_input), when it was taken, and
	 * whether an open since found another file or another version there
	 * (open_path; set by any thread) */
	struct tm_file_id *ids;
	int64_t *id_taken_s;
	unsigned char *id_state; /* ID_* */
};
enum { ID_NONE, ID_TAKEN, ID_MOVED };
#define LENT_FDS 16u

/* Parked streams hold their primed bytes (up to 1 MiB), two decoders and a
 * descriptor (or, over a parent that is not a file, the compressed bytes of
 * their first chunk); the caps still count the decompressed bytes of that
 * chunk.  Beyond them a stream is closed and its scan inflates it afresh. */
#define PARK_MAX_BYTES (160ull << 20)
#define PARK_MAX_STREAMS 16u

/* ---- table ---- */

static struct priv *
P(const struct tm_input *in)
{
	return in->priv;
}

static size_t
add_member(struct tm_input *in, int parent, const char *name, size_t name_len,
	   enum loc_kind kind)
{
	struct priv *pv = P(in);
	size_t cap = pv->cap;
	XGROW(in->members, cap, in->n_members + 1);
	XGROW(pv->locs, pv->cap, in->n_members + 1);
	size_t i = in->n_members++;
	struct tm_member *m = &in->members[i];
	memset(m, 0, sizeof *m);
	memset(&pv->locs[i], 0, sizeof pv->locs[i]);
	pv->locs[i].kind = kind;
	if (kind == L_INFLATE || kind == L_ZSTD)
		lc_w(&pv->locs[i]); /* before any scan reads it */
	if (name) {
		m->name = xmalloc(name_len + 1);
		memcpy(m->name, name, name_len);
		m->name[name_len] = 0;
		m->name_len = name_len;
	}
	m->parent = parent;
	m->trace_file_id = UINT32_MAX;
	m->order = UINT32_MAX;
	m->source_path = parent >= 0 ? in->members[parent].source_path : NULL;
	return i;
}

/* Unregister the members listed last, from `from` on (trace_processor never
 * registered them); a scan while listing may have given them an error. */
static void
unlist_from(struct tm_input *in, size_t from)
{
	struct priv *pv = P(in);
	for (size_t i = from; i < in->n_members; i++) {
		free(in->members[i].name);
		free(in->members[i].error);
		lc_free(&pv->locs[i]);
	}
	in->n_members = from;
	if (pv->pub && pv->n_pub > from) {
		tm_listing_truncate(pv->pub, from);
		pv->n_pub = from;
	}
}

/* Publish member mi as it stands now (tm_session_opts.listing), and any
 * listed before it that were not yet. */
static void
publish(struct tm_input *in, size_t mi)
{
	struct priv *pv = P(in);
	if (!pv->pub || mi >= in->n_members)
		return;
	for (; pv->n_pub < mi; pv->n_pub++)
		tm_listing_put(pv->pub, pv->n_pub, &in->members[pv->n_pub]);
	tm_listing_put(pv->pub, mi, &in->members[mi]);
	if (pv->n_pub == mi)
		pv->n_pub++;
}

static void
set_format(struct tm_member *m, enum tm_format f)
{
	m->format = f;
	m->priority = tm_format_priority(f);
}

/* Hidden rule (archive_entry.cc): a non-empty component starting with '.'
 * other than "." and "..". */
static bool
is_hidden(const char *p, size_t n)
{
	size_t s = 0;
	while (s <= n) {
		size_t e = s;
		while (e < n && p[e] != '/')
			e++;
		if (e > s && p[s] == '.') {
			bool dot = e - s == 1, dotdot = e - s == 2 && p[s + 1] == '.';
			if (!dot && !dotdot)
				return true;
		}
		if (e >= n)
			break;
		s = e + 1;
	}
	return false;
}

static const char *
disp(const struct tm_member *m)
{
	if (!m->name)
		return "(top level)";
	return m->name_len ? m->name : "(decompressed)";
}

/* "<archive>: <member>: <nested member>" for errors. */
static char *
label(const struct tm_input *in, size_t i)
{
	struct tm_buf b;
	size_t chain[MAX_DEPTH * 2 + 4], n = 0;
	tm_buf_init(&b);
	for (int j = (int)i; j >= 0 && n < sizeof chain / sizeof chain[0];
	     j = in->members[j].parent)
		chain[n++] = (size_t)j;
	const struct tm_member *m = &in->members[i];
	tm_buf_adds(&b, m->source_path ? m->source_path : "(input)");
	while (n--) {
		const struct tm_member *c = &in->members[chain[n]];
		if (chain[n] == 0 && !c->name)
			continue;
		if (in->is_loose && c->parent == 0) {
			continue; /* source_path already names the loose file */
		}
		tm_buf_adds(&b, ": ");
		tm_buf_adds(&b, disp(c));
	}
	return tm_buf_steal(&b);
}

char *
tm_input_label(const struct tm_input *in, size_t member)
{
	return label(in, member);
}

static void
set_cfatal(struct tm_input *in, size_t ci, const char *tp, const char *fmt, ...)
	TM_PRINTF(4, 5);

/* Ours, not trace_processor's: something it accepts silently that the
 * user should know (the first one is kept). */
static void
input_warn(struct tm_input *in, size_t ci, uint64_t off, const char *fmt, ...) TM_PRINTF(4, 5);

static void
input_warn(struct tm_input *in, size_t ci, uint64_t off, const char *fmt, ...)
{
	if (in->warning)
		return;
	char tmp[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	struct tm_buf b;
	char *where = label(in, ci);
	tm_buf_init(&b);
	tm_buf_addf(&b, "%s: byte %" PRIu64 " (0x%" PRIx64 "): %s; trace_processor drops the "
			"incomplete entry without an error",
		    where, off, off, tmp);
	free(where);
	in->warning = tm_buf_steal(&b);
}

static void
set_cfatal(struct tm_input *in, size_t ci, const char *tp, const char *fmt, ...)
{
	struct loc_c *l = lc_w(&P(in)->locs[ci]);
	if (l->cfatal)
		return;
	l->cfatal = xstrdup(tp);
	/* TarTraceReader notices a short archive only at its end of input. */
	l->fatal_eof = strncmp(tp, "Premature end of TAR file", 25) == 0;
	struct tm_buf b;
	va_list ap;
	char tmp[1024];
	tm_buf_init(&b);
	char *lab = label(in, ci);
	tm_buf_adds(&b, lab);
	free(lab);
	tm_buf_adds(&b, ": ");
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	tm_buf_adds(&b, tmp);
	l->cwhere = tm_buf_steal(&b);
}

/* set_cfatal undone: a walk to be done again. */
static void
clear_cfatal(struct tm_input *in, size_t ci)
{
	struct loc *lo = &P(in)->locs[ci];
	if (!lo->c)
		return;
	struct loc_c *l = lo->c;
	free(l->cfatal);
	free(l->cwhere);
	l->cfatal = l->cwhere = NULL;
	l->fatal_eof = false;
}

/* ---- streams ---- */

static enum tm_status open_member(const struct tm_input *in, size_t i, struct tm_stream **out,
				  struct tm_error *err);

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
static void
blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && (fl & O_NONBLOCK))
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

/* fd's file as it is now. */
static bool
id_of(int fd, struct tm_file_id *id)
{
	struct stat st;
	return fstat(fd, &st) == 0 && tm_file_id_of(&st, id);
}

/* Input path i opened again to read it (a member, a window, the sniff):
 * the file there now must be the one open_input found, unchanged, or the
 * input is marked moved (what was read is not what its identity names: a
 * saved scan of it is neither used nor written, scancache.c). */
static enum tm_status
open_path(const struct tm_input *in, size_t i, int *fd, struct tm_error *err)
{
	*fd = open(in->paths[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (*fd < 0)
		return tm_error_sys(err, errno, "%s", in->paths[i]);
	struct tm_file_id now;
	if (!id_of(*fd, &now) || memcmp(&now, &P(in)->ids[i], sizeof now))
		__atomic_store_n(&P(in)->id_state[i], ID_MOVED, __ATOMIC_RELAXED);
	else
		blocking(*fd);
	return TM_OK;
}

/* The first open of an input's descriptor (open_parent): one thread at a
 * time, so a thread that comes second uses the first one's descriptor
 * instead of opening its own (which fails near the descriptor limit). */
static pthread_mutex_t fds_mu = PTHREAD_MUTEX_INITIALIZER;

/* open_member of member i as the parent of one being opened: a file is
 * read through the input's descriptor of it (struct priv, fds), opened
 * once whichever thread comes first, while fewer than LENT_FDS are. */
static enum tm_status
open_parent(const struct tm_input *in, size_t i, struct tm_stream **out, struct tm_error *err)
{
	const struct loc *l = &P(in)->locs[i];
	if (l->kind != L_FILE)
		return open_member(in, i, out, err);
	int *slot = &P(in)->fds[l->path_idx];
	int fd = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (fd < 0) {
		pthread_mutex_lock(&fds_mu);
		fd = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		unsigned *n_fds = &P(in)->n_fds;
		if (fd < 0 && *n_fds >= LENT_FDS) {
			pthread_mutex_unlock(&fds_mu);
			return open_member(in, i, out, err);
		}
		if (fd < 0) {
			enum tm_status st = open_path(in, l->path_idx, &fd, err);
			if (st != TM_OK) {
				pthread_mutex_unlock(&fds_mu);
				return st;
			}
			(*n_fds)++;
			__atomic_store_n(slot, fd, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&fds_mu);
	}
	char *lab = label(in, i);
	*out = tm_stream_file_lent(fd, lab, in->members[i].stored_size);
	free(lab);
	tm_stream_set_work(*out, &P(in)->work);
	return TM_OK;
}

static enum tm_status
open_member(const struct tm_input *in, size_t i, struct tm_stream **out, struct tm_error *err)
{
	const struct tm_member *m = &in->members[i];
	const struct loc *l = &P(in)->locs[i];
	struct tm_stream *ps = NULL, *st;
	enum tm_status s;
	char *lab = label(in, i);

	switch (l->kind) {
	case L_FILE: {
		int fd;
		if ((s = open_path(in, l->path_idx, &fd, err)) == TM_OK)
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
	return open_member(in, member, out, err);
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
static bool
direct(const struct tm_input *in, size_t i)
{
	const struct loc *l = &P(in)->locs[i];
	switch (l->kind) {
	case L_FILE:
		return true;
	case L_RANGE:
		return direct(in, (size_t)in->members[i].parent);
	case L_ZIP:
		return l->method == 0 && direct(in, (size_t)in->members[i].parent);
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
	if ((l->kind != L_RANGE && l->kind != L_ZIP) || direct(in, c))
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
	enum tm_status s = open_member(in, c, &st, err);
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
	char *lab = label(in, i);
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
static enum tm_status
read_head(const struct tm_input *in, size_t i, size_t cap, uint8_t *buf, size_t *got,
	  struct tm_error *err)
{
	struct tm_stream *st;
	enum tm_status s = open_member(in, i, &st, err);
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
	int fd;
	if (open_path(in, 0, &fd, NULL) != TM_OK)
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
	close(fd);
	return ok;
}

/* *f: tm_sniff of the input's first SNIFF_CAP bytes, read straight from
 * the file (sniff_top_direct); on anything unusual the stream reads them
 * again and says what went wrong, all SNIFF_CAP at once (what
 * tm_sniff_prefix_decides decides is the same format from them). */
static enum tm_status
sniff_top(struct tm_input *in, uint8_t **buf, size_t *bcap, enum tm_format *f,
	  struct tm_error *err)
{
	if (sniff_top_direct(in, buf, bcap, f))
		return TM_OK;
	size_t got = 0;
	/* a staging array (internal.h): 1 MiB of fresh 4 KiB pages faulted
	 * one by one was ~2 ms of every check */
	BIG_XGROW(*buf, *bcap, SNIFF_CAP);
	enum tm_status s = read_head(in, 0, SNIFF_CAP, *buf, &got, err);
	if (s == TM_OK)
		*f = tm_sniff(*buf, got);
	return s;
}

/* ---- TAR ---- */

/* ExtractUint64 of the 12-byte size field; NULL or the error text. */
static const char *
tar_size(const uint8_t *f, uint64_t *out)
{
	if (f[0] == 0)
		return "Size field is empty or zero.";
	if (f[0] & 0x80) {
		if (f[0] & 0x40)
			return "Negative size in base-256 encoding is not supported.";
		size_t start = 1;
		while (start < 12 && f[start] == 0)
			start++;
		if (12 - start > 8)
			return "Base-256 value exceeds uint64_t range.";
		uint64_t v = 0;
		for (size_t i = start; i < 12; i++)
			v = (v << 8) | f[i];
		*out = v;
		return NULL;
	}
	size_t i = 0;
	uint64_t v = 0;
	while (i < 12 && f[i] == ' ')
		i++;
	for (; i < 12 && f[i] != 0 && f[i] != ' '; i++) {
		if (f[i] < '0' || f[i] > '7')
			return "Invalid octal digit in size field.";
		v = (v << 3) + (uint64_t)(f[i] - '0');
	}
	*out = v;
	return NULL;
}

static size_t
field_len(const uint8_t *p, size_t n)
{
	const uint8_t *z = memchr(p, 0, n);
	return z ? (size_t)(z - p) : n;
}

static enum tm_status walk(struct tm_input *in, size_t ci, int depth, struct tm_error *err);
static enum tm_status gz_drain(struct tm_stream *st, struct tm_error *err);
static enum tm_status gz_prov_drain(struct tm_input *in, size_t mi, struct tm_stream *st,
				    bool *stands, struct tm_error *err);
static enum tm_status gz_settle(struct tm_input *in, size_t mi, struct tm_stream *st,
				struct tm_error *err);

static bool
too_many(struct tm_input *in, struct tm_error *err, enum tm_status *s)
{
	if (in->n_members < MAX_MEMBERS)
		return false;
	*s = tm_error_set(err, TM_ERR_LIMIT, "more than %u archive members", MAX_MEMBERS);
	return true;
}

/* TAR member mi of ci (SIZE_MAX: a metadata entry), whose first hn bytes
 * were read into head: hand it to the visitor (tm_input_open_visit) when ci
 * is read front to back, through a window over rd that the visitor reads
 * as far as it likes (*visited: it did). */
static enum tm_status
visit_member(struct tm_input *in, size_t ci, size_t mi, struct tm_rd *rd, const uint8_t *head,
	     size_t hn, uint64_t size, bool *visited, struct tm_error *err)
{
	const struct tm_visit *v = P(in)->visit;
	*visited = false;
	if (!v || mi == SIZE_MAX || in->members[mi].is_hidden ||
	    !tm_format_is_predicted(in->members[mi].format) || direct(in, ci))
		return TM_OK;
	char *lab = label(in, mi);
	struct tm_stream *w = tm_stream_borrow_after(rd, lab, head, hn, size);
	free(lab);
	*visited = true;
	return v->member(v->ud, mi, w, err);
}

/* The entries of TAR ci read from st (walk_tar); *vis_end: past the last
 * member handed to the visitor. */
static enum tm_status
tar_entries(struct tm_input *in, size_t ci, struct tm_stream *st, size_t *vis_end,
	    struct tm_error *err)
{
	enum tm_status s;
	struct tm_rd rd = {.st = st};
	uint8_t h[512];
	int zeros = 0;
	bool pending_meta = false; /* a zero-size entry of another type */
	uint8_t pending_type = 0;
	char *long_name = NULL;
	size_t long_len = 0;
	uint64_t index = 0;

	for (;;) {
		uint64_t hoff = rd.off;
		size_t got;
		if ((s = tm_rd_read(&rd, h, 512, &got, err)) != TM_OK)
			goto out;
		if (pending_meta && got > 0) {
			set_cfatal(in, ci,
				   "trace_processor aborts (PERFETTO_CHECK failure) on this archive",
				   "byte 0x%" PRIx64 ": a zero-size TAR entry of type 0x%02x (link, "
				   "symlink, FIFO, ...) makes trace_processor crash when it reads "
				   "the next header; it cannot open this archive",
				   hoff - 512, pending_type);
			goto out;
		}
		if (got < 512) {
			set_cfatal(in, ci, "Premature end of TAR file (ERR:tp-corrupt)",
				   "byte 0x%" PRIx64 ": input ends before the two zero blocks "
				   "that end a TAR",
				   hoff + got);
			goto out;
		}
		bool gnu = memcmp(h + 257, "ustar  \0", 8) == 0;
		bool ustar = !gnu && memcmp(h + 257, "ustar\0", 6) == 0;
		if (!gnu && !ustar) {
			bool allz = true;
			for (size_t i = 0; i < 512 && allz; i++)
				allz = h[i] == 0;
			if (!allz) {
				set_cfatal(in, ci, "Invalid magic value",
					   "byte 0x%" PRIx64 ": not a TAR header (no ustar magic) "
					   "and not a zero block",
					   hoff);
				goto out;
			}
			if (++zeros == 2)
				break; /* anything after the end is ignored */
			continue;
		}
		uint8_t type = h[156];
		if (type == '5')
			continue; /* directory: no content consumed, state kept */
		zeros = 0;
		if (ustar && (h[263] != '0' || h[264] != '0')) {
			char t[64];
			snprintf(t, sizeof t, "Invalid version: %c%c", h[263], h[264]);
			set_cfatal(in, ci, t, "byte 0x%" PRIx64 ": ustar version must be \"00\"",
				   hoff + 263);
			goto out;
		}
		uint64_t size = 0;
		const char *se = tar_size(h + 124, &size);
		if (se) {
			char t[128];
			snprintf(t, sizeof t, "Failed to parse size field: %s", se);
			set_cfatal(in, ci, t, "byte 0x%" PRIx64 ": bad size field", hoff + 124);
			goto out;
		}
		char *name;
		size_t nlen;
		if (long_name) {
			name = long_name;
			nlen = long_len;
			long_name = NULL;
		} else {
			size_t pl = field_len(h + 345, 155), nl = field_len(h, 100);
			name = xmalloc(pl + 1 + nl + 1);
			nlen = 0;
			if (pl) {
				memcpy(name, h + 345, pl);
				name[pl] = '/';
				nlen = pl + 1;
			}
			memcpy(name + nlen, h, nl);
			nlen += nl;
			name[nlen] = 0;
		}
		bool content = type == '0' || type == 0 || type == 'L' || type == 'x' || type == 'g';
		if (!content) {
			free(name);
			if (size != 0) {
				char t[64];
				snprintf(t, sizeof t, "Unsupported file type: 0x%02x", type);
				set_cfatal(in, ci, t,
					   "byte 0x%" PRIx64 ": TAR entry type '%c' with content",
					   hoff + 156, type >= 0x20 && type < 0x7f ? type : '?');
				goto out;
			}
			pending_meta = true;
			pending_type = type;
			continue;
		}
		uint64_t pad = (512 - size % 512) % 512;
		uint64_t doff = rd.off;
		if (size > UINT64_MAX - 512 || doff + size + pad < doff) {
			free(name);
			set_cfatal(in, ci, "Premature end of TAR file (ERR:tp-corrupt)",
				   "byte 0x%" PRIx64 ": size field too large", hoff + 124);
			goto out;
		}
		if (type == 'L') {
			free(name);
			if (size > MAX_LONG_NAME) {
				s = tm_error_set(err, TM_ERR_LIMIT,
						 "%s: byte 0x%" PRIx64
						 ": GNU long name of %" PRIu64 " bytes (limit %u)",
						 in->members[ci].source_path, hoff, size, MAX_LONG_NAME);
				goto out;
			}
			long_name = xmalloc((size_t)size + 1);
			if ((s = tm_rd_read(&rd, long_name, (size_t)size, &got, err)) != TM_OK)
				goto out;
			long_name[size] = 0;
			long_len = (size_t)size;
			uint64_t k;
			if (got == size && (s = tm_rd_skip(&rd, pad, &k, err)) != TM_OK)
				goto out;
			if (got < size || k < pad) {
				set_cfatal(in, ci, "Premature end of TAR file (ERR:tp-corrupt)",
					   "byte 0x%" PRIx64 ": GNU long name runs past the end",
					   doff);
				goto out;
			}
			continue;
		}
		size_t mi = SIZE_MAX;
		uint8_t head[TAR_SNIFF];
		size_t hn = 0;
		uint64_t seen = 0; /* bytes of the member read past the head */
		if (type != 'x' && type != 'g') {
			if (too_many(in, err, &s)) {
				free(name);
				goto out;
			}
			mi = add_member(in, (int)ci, name, nlen, L_RANGE);
			struct tm_member *m = &in->members[mi];
			m->is_hidden = is_hidden(name, nlen);
			m->size = m->stored_size = size;
			m->index = index++;
			P(in)->locs[mi].off = doff;
			P(in)->locs[mi].len = size;
			if (!m->is_hidden) {
				if ((s = tm_rd_read(&rd, head, size < TAR_SNIFF ? (size_t)size : TAR_SNIFF,
						    &hn, err)) != TM_OK) {
					free(name);
					goto out;
				}
				set_format(m, tm_sniff(head, hn));
			}
			publish(in, mi);
		}
		free(name);
		bool visited = false;
		if ((s = visit_member(in, ci, mi, &rd, head, hn, size, &visited, err)) != TM_OK)
			goto out;
		if (visited) {
			seen = rd.off - doff - hn;
			if (mi + 1 > *vis_end)
				*vis_end = mi + 1;
		}
		uint64_t k = 0;
		if ((s = tm_rd_skip(&rd, size - hn - seen + pad, &k, err)) != TM_OK)
			goto out;
		if (hn + seen + k < size + pad) {
			/* The entry was never complete: trace_processor waits for
			 * the rest and never registers it. */
			if (mi != SIZE_MAX) {
				if (visited)
					P(in)->visit->drop(P(in)->visit->ud, mi);
				unlist_from(in, mi);
				index--;
			}
			set_cfatal(in, ci, "Premature end of TAR file (ERR:tp-corrupt)",
				   "byte 0x%" PRIx64 ": member data (%" PRIu64
				   " bytes and padding) runs past the end",
				   doff, size);
			goto out;
		}
	}
out:
	free(long_name);
	return s;
}

static enum tm_status walk_gzip_primed(struct tm_input *in, size_t ci, size_t mi,
				       struct tm_stream *st, const uint8_t *p, size_t n, bool done,
				       struct tm_error *err);
static enum tm_status walk_zip(struct tm_input *in, size_t ci, struct tm_error *err);
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
		return walk_zip(in, ci, err);
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
	enum tm_status s = open_member(in, mi, &st, err);
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
		enum tm_status s = open_member(in, ci, &st, err);
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
		s = tar_entries(in, ci, st, &vis_end, err);
		if (spec && pass == 0 && s != TM_ERR_CANCELLED) {
			/* read on to the end (gz_settle would; our own error
			 * is gz_settle's to report): did the walk read past a
			 * failure's last hand-over?  Does a provisional sniff
			 * stand? */
			struct tm_error e2;
			tm_error_clear(&e2);
			bool stands;
			(void)gz_prov_drain(in, ci, st, &stands, &e2);
			bool refuted = tm_stream_refuted(st, &end);
			if (refuted || !stands) {
				tm_stream_close(st);
				for (size_t i = first; i < vis_end; i++)
					pv->visit->drop(pv->visit->ud, i);
				unlist_from(in, first);
				clear_cfatal(in, ci);
				__atomic_store_n(&pv->work.bytes, bytes0, __ATOMIC_RELAXED);
				tm_error_clear(err);
				if (stands)
					continue;
				return relist_gz(in, ci, err);
			}
		}
		enum tm_status s2 = gz_settle(in, ci, st, err);
		if (s == TM_OK)
			s = s2;
		tm_stream_close(st);
		return s;
	}
}

/* ---- ZIP ---- */

static uint16_t
le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}

static uint64_t
le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | ((uint64_t)le32(p + 4) << 32);
}

struct zent {
	size_t mi;
	char *err;    /* trace_processor's decompression-time error */
	bool handed;  /* given to the visitor while listing (zip_visit) */
};

/* Copy of what the sniffer gets, capped. */
static void
capture(uint8_t *dst, size_t *dn, const uint8_t *p, size_t n)
{
	if (*dn >= SNIFF_CAP)
		return;
	size_t k = SNIFF_CAP - *dn < n ? SNIFF_CAP - *dn : n;
	memcpy(dst + *dn, p, k);
	*dn += k;
}

/* Inflate raw deflate from rd.  bounded: at most csize input bytes.
 * *consumed = input bytes used up to the end of the deflate stream.
 * Returns 0 ok (stream end), 1 input ended first, 2 data error. */
static int
zip_inflate(struct tm_rd *rd, bool bounded, uint64_t csize, uint64_t *consumed,
	    uint64_t *out_n, uint32_t *crc, uint8_t *sn, size_t *snn, struct tm_work *w,
	    const char *lab, struct tm_error *err, enum tm_status *s)
{
	z_stream z;
	uint8_t out[65536];
	int res = 1;
	tm_inflate_init(&z, -15);
	*consumed = 0;
	*out_n = 0;
	*crc = 0;
	*s = TM_OK;
	for (;;) {
		if ((*s = tm_rd_fill(rd, err)) != TM_OK)
			break;
		size_t avail = rd->n;
		if (bounded && avail > csize - *consumed)
			avail = (size_t)(csize - *consumed);
		if (!avail)
			break;
		z.next_in = (Bytef *)(uintptr_t)rd->p;
		z.avail_in = (uInt)(avail > UINT32_MAX ? UINT32_MAX : avail);
		uInt given = z.avail_in;
		int r = Z_OK;
		while (z.avail_in && r == Z_OK) {
			z.next_out = out;
			z.avail_out = sizeof out;
			r = inflate(&z, Z_NO_FLUSH);
			size_t prod = sizeof out - z.avail_out;
			*crc = tm_crc32(*crc, out, prod);
			*out_n += prod;
			__atomic_fetch_add(&tm_inflated_bytes, (uint64_t)prod, __ATOMIC_RELAXED);
			capture(sn, snn, out, prod);
			if ((*s = tm_work_charge(w, prod, lab, err)) != TM_OK) {
				inflateEnd(&z);
				return 1;
			}
			if (r == Z_BUF_ERROR && prod == 0)
				break;
			if (r == Z_BUF_ERROR)
				r = Z_OK;
		}
		size_t used = given - z.avail_in;
		rd->p += used;
		rd->n -= used;
		rd->off += used;
		*consumed += used;
		if (r == Z_STREAM_END) {
			/* drain any output still pending */
			res = 0;
			break;
		}
		if (r != Z_OK && r != Z_BUF_ERROR) {
			res = 2;
			break;
		}
	}
	inflateEnd(&z);
	return res;
}

/* An entry ISA-L failed to inflate, inflated again by zlib from its first
 * byte: how much inflated, its CRC-32, its sniff and how it ended are
 * zlib's, as ZipFile::Decompress's (zip_visit). */
static enum tm_status
zip_redo(struct tm_input *in, size_t mi, uint64_t doff, uint64_t csize, uint8_t *sn,
	 size_t *snn, int *zr, uint64_t *outn, uint32_t *crc, struct tm_error *err)
{
	struct tm_stream *win = NULL;
	char *lab = label(in, mi);
	size_t ci = (size_t)in->members[mi].parent;
	int fd = -1;
	/* the container's file, opened again (its own descriptor: the
	 * listing's are the walker's) */
	enum tm_status s = open_path(in, P(in)->locs[ci].path_idx, &fd, err);
	if (s == TM_OK)
		s = tm_stream_window(tm_stream_file_fd(fd, lab, in->members[ci].stored_size), doff,
				     csize, lab, &win, err);
	if (s == TM_OK) {
		struct tm_rd r = {.st = win};
		uint64_t consumed;
		*snn = 0;
		*zr = zip_inflate(&r, true, csize, &consumed, outn, crc, sn, snn, &P(in)->work, lab,
				  err, &s);
		tm_stream_close(win); /* (and the file: the window took it) */
	}
	free(lab);
	return s;
}

/* A deflated ZIP entry of csize bytes at rd, registered early as member mi
 * (its sniff is set here): inflated once, on a thread beside the reader,
 * for the listing (sniff head, CRC-32, size) and for the visitor's scan,
 * which reads it as the listing goes (tm_input_open_visit).  Out: how the
 * deflate data ended (*zr as zip_inflate), the output's size and CRC, and
 * the entry's input bytes taken from rd (*taken; csize unless the
 * container ends first).  *visited: the visitor scanned it; the caller
 * drops that scan if the entry turns out not to be what the scan read. */
static enum tm_status
zip_visit(struct tm_input *in, size_t mi, struct tm_rd *rd, uint64_t csize, uint64_t usize,
	  uint8_t *sn, size_t *snn, int *zr, uint64_t *outn, uint32_t *crc, uint64_t *taken,
	  bool *visited, struct tm_error *err)
{
	const struct tm_visit *v = P(in)->visit;
	struct tm_member *m = &in->members[mi];
	char *lab = label(in, mi);
	uint64_t doff = rd->off;
	struct tm_stream *w = tm_stream_borrow(rd, lab, csize);
	struct tm_stream *z = tm_stream_inflate(w, lab, true, false, m->name, csize);
	/* ISA-L where the entry can be read again (a ZIP file): a failure is
	 * redone with zlib (zip_redo; the decoders stop apart in bad data) */
	if (P(in)->locs[m->parent].kind == L_FILE)
		tm_stream_zip_fast(z);
	bool fast = tm_stream_zip_was_fast(z);
	tm_stream_zip_crc(z);
	struct tm_stream *a = tm_stream_ahead(z, lab);
	struct tm_rd ard = {.st = a};
	struct tm_error e;
	tm_error_clear(&e);
	enum tm_status s = TM_OK;
	*snn = 0;
	while (*snn < SNIFF_CAP) { /* (what was inflated before a failure counts) */
		if ((s = tm_rd_fill(&ard, &e)) != TM_OK || !ard.n)
			break;
		size_t k = SNIFF_CAP - *snn < ard.n ? SNIFF_CAP - *snn : ard.n;
		memcpy(sn + *snn, ard.p, k);
		*snn += k;
		ard.p += k;
		ard.n -= k;
		ard.off += k;
	}
	*visited = false;
	if (s == TM_OK && !m->is_hidden) {
		set_format(m, tm_sniff(sn, *snn));
		publish(in, mi);
		if (tm_format_is_predicted(m->format) && usize > 0) {
			struct tm_stream *vw = tm_stream_borrow_after(&ard, lab, sn, *snn, usize);
			*visited = true;
			if ((s = v->member(v->ud, mi, vw, err)) != TM_OK) {
				tm_stream_close(a);
				free(lab);
				return s;
			}
		}
	}
	uint64_t got;
	if (s == TM_OK)
		s = tm_rd_skip(&ard, UINT64_MAX, &got, &e);
	*outn = ard.off;
	uint64_t used;
	*zr = tm_stream_zip_result(z, crc, &used);
	*taken = tm_stream_offset(w);
	tm_stream_close(a); /* (joins the inflating thread first) */
	free(lab);
	if (*zr < 0 && !(s != TM_OK && e.code == TM_ERR_FORMAT && *taken < csize)) {
		*err = e; /* ours: cancelled, the listing's cap, I/O */
		return s != TM_OK ? s : tm_error_set(err, TM_ERR_INVALID, "%s: inflate", m->name);
	}
	/* the rest of the entry after the deflate data (short: the container
	 * ends inside the entry; the caller sees *taken < csize) */
	if (*zr < 0)
		*zr = 1;
	uint64_t k;
	if ((s = tm_rd_skip(rd, csize - *taken, &k, err)) != TM_OK)
		return s;
	*taken += k;
	if (fast && *zr != 0 && *taken == csize)
		return zip_redo(in, mi, doff, csize, sn, snn, zr, outn, crc, err);
	return TM_OK;
}

static enum tm_status
walk_zip(struct tm_input *in, size_t ci, struct tm_error *err)
{
	struct tm_stream *st;
	enum tm_status s = open_member(in, ci, &st, err);
	if (s != TM_OK)
		return s;
	struct tm_rd rd = {.st = st};
	uint8_t *sn = xmalloc(SNIFF_CAP);
	struct zent *ents = NULL;
	size_t n_ents = 0, ecap = 0;
	size_t first_member = in->n_members;
	bool header_error = false;
	char t[1024];
	char *lab = label(in, ci);

	for (uint64_t index = 0;; index++) {
		uint8_t h[30];
		size_t got;
		uint64_t hoff = rd.off;
		if ((s = tm_rd_read(&rd, h, 30, &got, err)) != TM_OK)
			goto out;
		if (got < 30) {
			if (got)
				input_warn(in, ci, hoff, "the archive ends inside a ZIP entry header");
			break; /* truncated: trace_processor drops a partial entry */
		}
		uint32_t sig = le32(h);
		if (sig == 0x02014b50)
			break; /* central directory: the rest is ignored */
		uint64_t at = hoff + 30;
		if (sig != 0x04034b50) {
			snprintf(t, sizeof t,
				 "Invalid signature found at offset 0x%" PRIx64
				 ". Actual=0x%x, expected=0x%x",
				 at, sig, 0x04034b50u);
			set_cfatal(in, ci, t, "byte 0x%" PRIx64 ": not a ZIP local header", hoff);
			header_error = true;
			goto out;
		}
		uint16_t version = le16(h + 4), flags = le16(h + 6), method = le16(h + 8);
		uint32_t crc = le32(h + 14);
		uint64_t csize = le32(h + 18), usize = le32(h + 22);
		uint16_t fnl = le16(h + 26), exl = le16(h + 28);
		uint16_t known = 1u | 2u | 4u | 8u | (1u << 11);
		if (version > 45 || (flags & 1) || (flags & ~known)) {
			snprintf(t, sizeof t,
				 "Unsupported zip features at offset 0x%" PRIx64
				 ". version=%x, flags=%x",
				 at, version, flags);
			set_cfatal(in, ci, t,
				   "byte 0x%" PRIx64 ": entry needs zip version %u.%u or flags %#x "
				   "(encryption, bzip2, LZMA, ...)",
				   hoff, version / 10, version % 10, flags);
			header_error = true;
			goto out;
		}
		if (method != 0 && method != 8) {
			snprintf(t, sizeof t,
				 "Unsupported compression type at offset 0x%" PRIx64
				 ". type=%x. Only deflate and no compression are supported.",
				 at, method);
			set_cfatal(in, ci, t, "byte 0x%" PRIx64 ": compression method %u", hoff,
				   method);
			header_error = true;
			goto out;
		}
		if ((flags & 8) && method != 8) {
			snprintf(t, sizeof t,
				 "Unsupported compression type at offset 0x%" PRIx64
				 ". type=%x. Only deflate supported for ZIPs compressed in a "
				 "streaming fashion.",
				 at, method);
			set_cfatal(in, ci, t,
				   "byte 0x%" PRIx64 ": stored entry with a data descriptor", hoff);
			header_error = true;
			goto out;
		}
		char *name = xmalloc((size_t)fnl + 1);
		if ((s = tm_rd_read(&rd, name, fnl, &got, err)) != TM_OK || got < fnl) {
			if (s == TM_OK)
				input_warn(in, ci, hoff, "the archive ends inside a ZIP entry's name");
			free(name);
			goto out;
		}
		name[fnl] = 0;
		uint8_t ex[65536];
		bool zip64 = false;
		if ((s = tm_rd_read(&rd, ex, exl, &got, err)) != TM_OK || got < exl) {
			if (s == TM_OK)
				input_warn(in, ci, hoff,
					   "the archive ends inside the extra field of ZIP entry '%s'",
					   name);
			free(name);
			goto out;
		}
		for (size_t p = 0; p + 4 <= exl;) {
			uint16_t id = le16(ex + p), sz = le16(ex + p + 2);
			p += 4;
			if (exl - p < sz)
				break;
			if (id == 1) {
				size_t f = p, fe = p + sz;
				zip64 = true;
				if (usize == 0xffffffffu) {
					if (fe - f < 8) {
						snprintf(t, sizeof t,
							 "Malformed ZIP at offset 0x%" PRIx64
							 ". Zip64 extra field is too short to hold the "
							 "uncompressed size.",
							 rd.off);
						set_cfatal(in, ci, t, "byte 0x%" PRIx64 ": zip64 field",
							   rd.off);
						header_error = true;
						free(name);
						goto out;
					}
					usize = le64(ex + f);
					f += 8;
				}
				if (csize == 0xffffffffu) {
					if (fe - f < 8) {
						snprintf(t, sizeof t,
							 "Malformed ZIP at offset 0x%" PRIx64
							 ". Zip64 extra field is too short to hold the "
							 "compressed size.",
							 rd.off);
						set_cfatal(in, ci, t, "byte 0x%" PRIx64 ": zip64 field",
							   rd.off);
						header_error = true;
						free(name);
						goto out;
					}
					csize = le64(ex + f);
				}
			}
			p += sz;
		}
		uint64_t doff = rd.off;
		size_t snn = 0;
		size_t pre = SIZE_MAX; /* registered early (zip_visit) */
		bool handed = false;   /* and given to the visitor */
		uint64_t outn = 0, consumed = 0;
		uint32_t acrc = 0;
		bool hidden = is_hidden(name, fnl);
		int zr = 0;
		if (flags & 8) {
			zr = zip_inflate(&rd, false, 0, &consumed, &outn, &acrc, sn, &snn,
					 &P(in)->work, lab, err, &s);
			if (s != TM_OK) {
				free(name);
				goto out;
			}
			if (zr == 2) {
				snprintf(t, sizeof t,
					 "Failed decompressing stream in ZIP file at offset 0x%" PRIx64,
					 doff);
				set_cfatal(in, ci, t, "byte 0x%" PRIx64 ": bad deflate data in %s",
					   doff, name);
				header_error = true;
				free(name);
				goto out;
			}
			if (zr == 1) {
				input_warn(in, ci, hoff, "the archive ends inside ZIP entry '%s'", name);
				free(name);
				break; /* truncated: the entry is never complete */
			}
			uint8_t dd[24];
			size_t dsz = zip64 ? 24 : 16;
			if ((s = tm_rd_read(&rd, dd, dsz, &got, err)) != TM_OK || got < dsz) {
				if (s == TM_OK)
					input_warn(in, ci, hoff,
						   "the archive ends inside the data descriptor of ZIP "
						   "entry '%s'",
						   name);
				free(name);
				goto out;
			}
			if (le32(dd) != 0x08074b50) {
				snprintf(t, sizeof t,
					 "Invalid signature found at offset 0x%" PRIx64
					 ". Actual=0x%x, expected=0x%x",
					 rd.off, le32(dd), 0x08074b50u);
				set_cfatal(in, ci, t,
					   "byte 0x%" PRIx64 ": data descriptor without signature",
					   rd.off - dsz);
				header_error = true;
				free(name);
				goto out;
			}
			crc = le32(dd + 4);
			csize = zip64 ? le64(dd + 8) : le32(dd + 8);
			usize = zip64 ? le64(dd + 16) : le32(dd + 12);
			if (csize != consumed) {
				set_cfatal(in, ci,
					   "trace_processor aborts (PERFETTO_CHECK failure) on this "
					   "archive",
					   "byte 0x%" PRIx64 ": %s: data descriptor says %" PRIu64
					   " compressed bytes, the deflate stream has %" PRIu64,
					   doff, name, csize, consumed);
				header_error = true;
				free(name);
				goto out;
			}
		} else if (method == 8 && P(in)->visit && !hidden) {
			/* inflated once, for the listing and the scan together */
			if (too_many(in, err, &s)) {
				free(name);
				goto out;
			}
			pre = add_member(in, (int)ci, name, fnl, L_ZIP);
			bool visited = false;
			uint64_t taken = 0;
			s = zip_visit(in, pre, &rd, csize, usize, sn, &snn, &zr, &outn, &acrc, &taken,
				      &visited, err);
			handed = visited;
			if (visited && (s != TM_OK || taken < csize || zr != 0 || outn != usize))
				P(in)->visit->drop(P(in)->visit->ud, pre); /* scanned afresh */
			if (s != TM_OK || taken < csize) {
				unlist_from(in, pre);
				if (s == TM_OK)
					input_warn(in, ci, hoff, "the archive ends inside ZIP entry '%s'",
						   name);
				free(name);
				if (s != TM_OK)
					goto out;
				break;
			}
		} else if (method == 8) {
			zr = zip_inflate(&rd, true, csize, &consumed, &outn, &acrc, sn, &snn,
					 &P(in)->work, lab, err, &s);
			if (s != TM_OK) {
				free(name);
				goto out;
			}
			uint64_t k;
			if (consumed < csize) {
				if ((s = tm_rd_skip(&rd, csize - consumed, &k, err)) != TM_OK) {
					free(name);
					goto out;
				}
				if (k < csize - consumed) {
					input_warn(in, ci, hoff, "the archive ends inside ZIP entry '%s'",
						   name);
					free(name);
					break;
				}
			}
		} else {
			if (csize != usize) {
				set_cfatal(in, ci,
					   "trace_processor aborts (PERFETTO_CHECK failure) on this "
					   "archive",
					   "byte 0x%" PRIx64 ": stored entry %s with compressed size "
					   "%" PRIu64 " != uncompressed size %" PRIu64,
					   hoff, name, csize, usize);
				header_error = true;
				free(name);
				goto out;
			}
			acrc = 0;
			uint64_t left = csize;
			bool trunc = false;
			while (left) {
				if ((s = tm_rd_fill(&rd, err)) != TM_OK) {
					free(name);
					goto out;
				}
				if (!rd.n) {
					trunc = true;
					break;
				}
				size_t k = left < rd.n ? (size_t)left : rd.n;
				if (!hidden) {
					acrc = tm_crc32(acrc, rd.p, k);
					capture(sn, &snn, rd.p, k);
				}
				rd.p += k;
				rd.n -= k;
				rd.off += k;
				left -= k;
			}
			if (trunc) {
				input_warn(in, ci, hoff, "the archive ends inside ZIP entry '%s'", name);
				free(name);
				break;
			}
			outn = csize;
		}
		size_t mi = pre;
		if (mi == SIZE_MAX) {
			if (too_many(in, err, &s)) {
				free(name);
				goto out;
			}
			mi = add_member(in, (int)ci, name, fnl, L_ZIP);
		}
		struct tm_member *m = &in->members[mi];
		struct loc *l = &P(in)->locs[mi];
		m->is_hidden = hidden;
		m->index = index;
		m->stored_size = csize;
		l->off = doff;
		l->len = csize;
		l->method = (int16_t)method;
		l->deflate_ok = false;
		XGROW(ents, ecap, n_ents + 1);
		ents[n_ents].mi = mi;
		ents[n_ents].err = NULL;
		ents[n_ents].handed = handed;
		/* What ZipFile::Decompress hands over. */
		if (method == 8 && usize == 0) {
			m->size = 0;
			snn = 0;
			l->method = 0;
			l->len = 0;
		} else if (method == 8) {
			if (zr != 0 || outn > usize) {
				snprintf(t, sizeof t,
					 "Zip decompression error (%d) on %s (c=%" PRIu64 ", u=%" PRIu64
					 ") (ERR:tp-corrupt)",
					 zr == 2 ? 2 : zr == 1 ? 3 : 0, name, csize, usize);
				ents[n_ents].err = xstrdup(t);
			} else if (acrc != crc) {
				snprintf(t, sizeof t,
					 "Zip CRC32 failure on %s (actual: %x, expected: %x) "
					 "(ERR:tp-corrupt)",
					 name, acrc, crc);
				ents[n_ents].err = xstrdup(t);
			}
			l->deflate_ok = !ents[n_ents].err;
			m->size = outn;
		} else {
			if (acrc != crc) {
				snprintf(t, sizeof t,
					 "Zip CRC32 failure on %s (actual: %x, expected: %x) "
					 "(ERR:tp-corrupt)",
					 name, acrc, crc);
				ents[n_ents].err = xstrdup(t);
			}
			m->size = csize;
		}
		n_ents++;
		if (!hidden)
			set_format(m, tm_sniff(sn, snn));
		publish(in, mi);
		free(name);
	}
out:
	if (header_error) {
		/* ZipReader failed while parsing: nothing was registered. */
		for (size_t e = 0; e < n_ents; e++)
			if (ents[e].handed)
				P(in)->visit->drop(P(in)->visit->ud, ents[e].mi);
		unlist_from(in, first_member);
	} else if (s == TM_OK) {
		/* Registration decompresses each non-hidden entry in order; the
		 * first failure stops it (that entry is already registered). */
		size_t reg = 0;
		for (size_t e = 0; e < n_ents; e++) {
			if (in->members[ents[e].mi].is_hidden)
				continue;
			reg++;
			if (ents[e].err) {
				lc_w(&P(in)->locs[ci])->reg_limit = reg;
				set_cfatal(in, ci, ents[e].err, "%s: bad compressed data",
					   disp(&in->members[ents[e].mi]));
				/* ZipTraceReader decompresses at its end of input */
				lc_w(&P(in)->locs[ci])->fatal_eof = true;
				break;
			}
		}
	}
	for (size_t e = 0; e < n_ents; e++)
		free(ents[e].err);
	free(ents);
	free(sn);
	free(lab);
	{
		enum tm_status s2 = gz_settle(in, ci, st, err);
		if (s == TM_OK)
			s = s2;
	}
	tm_stream_close(st);
	return s;
}

/* ---- gzip / ctrace / zstd ---- */

/* trace_processor's DecompressingTraceReader collects output in a 32 MiB
 * buffer and hands it to the inner parser when the buffer is full or a gzip
 * member / zstd frame ends.  Output still in the buffer when decompression
 * fails is never parsed (decompressing_trace_reader.cc:96-145). */
#define TP_BLOB (32ull << 20)

/* The listing's outcome for gzip child mi of ci, whose stream st has
 * delivered total bytes (UINT64_MAX: not read to the end). */
static void
gz_record(struct tm_input *in, size_t ci, size_t mi, struct tm_stream *st, uint64_t total)
{
	struct tm_error e2;
	if (tm_stream_gz_failure(st, &e2)) {
		lc_w(&P(in)->locs[ci])->fatal_late = true;
		set_cfatal(in, ci, e2.tp,
			   "after %" PRIu64 " decompressed bytes (%" PRIu64
			   " handed to the inner parser): %s",
			   tm_stream_inflated(st), total, e2.msg);
		free(in->members[mi].error); /* (walk's "nested more than 8 deep") */
		in->members[mi].error = xstrdup(e2.msg);
		/* The inner parser sees only what was handed over. */
		lc_w(&P(in)->locs[mi])->limit = total;
	}
	in->members[mi].size = in->members[mi].stored_size = total;
	publish(in, mi);
}

/* Read st to its end (or trace_processor's failure); our own errors (I/O)
 * are returned. */
static enum tm_status
gz_drain(struct tm_stream *st, struct tm_error *err)
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
static enum tm_status
gz_settle(struct tm_input *in, size_t mi, struct tm_stream *st, struct tm_error *err)
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
	enum tm_status s = gz_drain(st, err);
	if (s == TM_OK)
		gz_record(in, (size_t)in->members[mi].parent, mi, st, tm_stream_offset(st));
	tm_stream_close(own);
	return s;
}

/* Container mi (gzip/zstd child) read through st by its walk: st read on
 * to its end (as gz_settle would) and *stands: whether walk_gzip's sniff
 * of it stands, i.e. it was verified, or it was provisional (locs[mi].prov,
 * cleared here) and the stream reached a hand-over past the sniff's bytes
 * (tm_stream_gz_verified).  Our own error reading on is returned (*stands
 * set all the same). */
static enum tm_status
gz_prov_drain(struct tm_input *in, size_t mi, struct tm_stream *st, bool *stands,
	      struct tm_error *err)
{
	struct loc_c *l = lc_w(&P(in)->locs[mi]);
	enum tm_status s = gz_drain(st, err);
	uint64_t h;
	bool clean;
	*stands = !l->prov || tm_stream_gz_verified(st, &h, &clean);
	l->prov = false;
	return s;
}

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
	enum tm_status s = open_member(in, mi, &st, err);
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
	set_format(m, f);
	gz_record(in, ci, mi, st, UINT64_MAX); /* (no failure yet) */
	/* the scan's decompression is not the listing's (its cap is lifted
	 * once the listing ends, and the verified prime charged the first
	 * chunk only: charged below), only shown as inflated */
	tm_stream_set_work(st, &pv->scan_work);
	tm_stream_gz_speculate(st);
	char *lab = label(in, mi);
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
			publish(in, mi);
		}
		return TM_OK;
	}
	v->drop(v->ud, mi);
	free(m->error);
	m->error = NULL;
	m->size = m->stored_size = UINT64_MAX;
	if ((s = open_member(in, mi, &st, err)) != TM_OK)
		return s;
	if (stands) {
		/* listed right; the scan reads it again (session.c) up to the
		 * failure the refuted read found */
		if (end.known)
			tm_stream_gz_known(st, &end);
		if (!park(in, mi, st))
			tm_stream_close(st);
		publish(in, mi);
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
	set_format(&in->members[mi], f);
	if (f == TM_FMT_TAR || f == TM_FMT_ZIP) {
		in->members[mi].size = in->members[mi].stored_size = UINT64_MAX;
		publish(in, mi);
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
		if ((s = gz_drain(st, err)) != TM_OK) {
			tm_stream_close(st);
			return s;
		}
		total = tm_stream_offset(st);
	}
	gz_record(in, ci, mi, st, total);
	if (tm_stream_offset(st) != 0 || tm_format_is_container(f) || !park(in, mi, st))
		tm_stream_close(st);
	return TM_OK;
}

static enum tm_status
walk_compressed(struct tm_input *in, size_t ci, struct tm_error *err)
{
	enum tm_format f = in->members[ci].format;
	size_t mi = add_member(in, (int)ci, "", 0, f == TM_FMT_ZSTD ? L_ZSTD : L_INFLATE);
	if (f == TM_FMT_ZSTD && tm_zstd_missing()) {
		/* Our limitation, not trace_processor's (it decodes zstd). */
		struct tm_member *m = &in->members[mi];
		struct tm_buf b;
		tm_buf_init(&b);
		tm_buf_addf(&b, "zstd decompression is unavailable: %s", tm_zstd_missing());
		m->error = tm_buf_steal(&b);
		m->size = m->stored_size = 0;
		set_format(m, TM_FMT_UNKNOWN);
		publish(in, mi);
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
			if (st && (s = gz_prov_drain(in, ci, st, &stands, err)) != TM_OK) {
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
		s = gz_settle(in, ci, st, err);
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

/* ---- ids and processing order ---- */

static int
entry_cmp(const struct tm_member *a, const struct tm_member *b)
{
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c = memcmp(a->name, b->name, n);
	if (c)
		return c;
	if (a->name_len != b->name_len)
		return a->name_len < b->name_len ? -1 : 1;
	if (a->index != b->index)
		return a->index < b->index ? -1 : 1;
	return 0;
}

static int
entry_cmp_p(const void *a, const void *b)
{
	return entry_cmp(*(const struct tm_member *const *)a, *(const struct tm_member *const *)b);
}

static void
start(struct tm_input *in, size_t i)
{
	struct priv *pv = P(in);
	in->members[i].order = pv->next_order++;
	XGROW(in->proc, pv->proc_cap, in->n_proc + 1);
	in->proc[in->n_proc++] = i;
}

static void
fail_at(struct tm_input *in, size_t ci)
{
	struct priv *pv = P(in);
	pv->stop = true;
	if (in->fatal)
		return;
	in->fatal = xstrdup(lc(&pv->locs[ci])->cfatal);
	in->fatal_where = xstrdup0(lc(&pv->locs[ci])->cwhere);
	in->fatal_after = in->n_proc;
}

static bool
is_compressed(enum tm_format f)
{
	return f == TM_FMT_GZIP || f == TM_FMT_CTRACE || f == TM_FMT_ZSTD;
}

/* Container ci has just started: register its children (ids in physical
 * order), then process them in (priority, name, index) order. */
static void
process(struct tm_input *in, size_t ci)
{
	struct priv *pv = P(in);
	const struct loc *lo = &pv->locs[ci];
	size_t *kids = NULL, nk = 0, kcap = 0;

	if (!tm_format_is_container(in->members[ci].format))
		return;
	for (size_t i = 0; i < in->n_members; i++) {
		struct tm_member *m = &in->members[i];
		if (m->parent != (int)ci || m->is_hidden)
			continue;
		if (nk >= lc(lo)->reg_limit)
			break;
		m->trace_file_id = pv->next_id++;
		XGROW(kids, kcap, nk + 1);
		kids[nk++] = i;
	}
	/* Inside a gzip/zstd stream that fails, the inner container never
	 * reaches its end of input: the outer error comes first, and the
	 * inner one only if raised while parsing (a bad TAR header). */
	int pa = in->members[ci].parent;
	if (pa >= 0 && is_compressed(in->members[pa].format) && lc(&pv->locs[pa])->cfatal &&
	    (!lc(lo)->cfatal || lc(lo)->fatal_eof || lc(lo)->fatal_late)) {
		fail_at(in, (size_t)pa);
		free(kids);
		return;
	}
	if (lc(lo)->cfatal && !lc(lo)->fatal_late) {
		fail_at(in, ci);
		free(kids);
		return;
	}
	/* (priority, name, index) is a total order (index is unique within a
	 * container), so any sort gives the ArchiveEntry order; an insertion
	 * sort was quadratic on archives packed in reverse name order. */
	const struct tm_member **by = xmalloc((nk ? nk : 1) * sizeof *by);
	for (size_t a = 0; a < nk; a++)
		by[a] = &in->members[kids[a]];
	qsort(by, nk, sizeof *by, entry_cmp_p);
	for (size_t a = 0; a < nk; a++)
		kids[a] = (size_t)(by[a] - in->members);
	free(by);
	for (size_t k = 0; k < nk && !pv->stop; k++) {
		struct tm_member *m = &in->members[kids[k]];
		if (is_compressed(in->members[ci].format) && m->size == 0 &&
		    (!m->error || lc(lo)->cfatal))
			continue; /* nothing handed over: the parser never starts */
		start(in, kids[k]);
		process(in, kids[k]);
	}
	if (lc(lo)->cfatal && lc(lo)->fatal_late && !pv->stop)
		fail_at(in, ci);
	free(kids);
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
	if (!id_of(fd, &pv->ids[i])) {
		close(fd);
		return tm_error_set(err, TM_ERR_INVALID, "%s: not a regular file", path);
	}
	pv->id_taken_s[i] = (int64_t)t0.tv_sec;
	pv->id_state[i] = ID_TAKEN;
	*size = pv->ids[i].size;
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
	if (fd >= 0 && (!id_of(fd, &now) || memcmp(&now, &pv->ids[i], sizeof now)))
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
		size_t mi = add_member(in, -1, NULL, 0, L_FILE);
		in->members[mi].source_path = in->paths[0];
		in->members[mi].size = in->members[mi].stored_size = size;
		enum tm_format f = TM_FMT_UNKNOWN;
		if ((s = sniff_top(in, &buf, &bcap, &f, err)) != TM_OK)
			goto fail;
		set_format(&in->members[0], f);
		publish(in, 0);
	} else {
		in->is_loose = true;
		size_t mi = add_member(in, -1, NULL, 0, L_VIRTUAL);
		set_format(&in->members[mi], TM_FMT_TAR);
		uint64_t tar = 1024;
		BIG_XGROW(buf, bcap, TAR_SNIFF);
		for (size_t i = 0; i < n_paths; i++) {
			uint64_t size;
			if ((s = open_input(in, i, &size, err)) != TM_OK)
				goto fail;
			const char *bn = tm_path_base(paths[i]);
			size_t k = add_member(in, 0, bn, strlen(bn), L_FILE);
			struct tm_member *m = &in->members[k];
			m->source_path = in->paths[i];
			m->size = m->stored_size = size;
			m->index = i;
			m->is_hidden = is_hidden(m->name, m->name_len);
			P(in)->locs[k].path_idx = i;
			tar += 512 + (size + 511) / 512 * 512;
			if (!m->is_hidden) {
				if ((s = read_head(in, k, TAR_SNIFF, buf, &got, err)) != TM_OK)
					goto fail;
				set_format(&in->members[k], tm_sniff(buf, got));
			}
			publish(in, k);
		}
		in->members[0].size = in->members[0].stored_size = (tar + 10239) / 10240 * 10240;
		publish(in, 0);
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
	start(in, 0);
	process(in, 0);
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

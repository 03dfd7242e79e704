/* SPDX-License-Identifier: MIT */
/*
 * The input stage's private face (input.h the public one), owned by
 * archive.c (the walk over nested containers, open and close): where each
 * member's bytes are (struct loc), the walk's state (struct priv), and the
 * parts archive.c calls, bottom to top: archive_table.c (the member
 * table), archive_order.c (processing order), archive_stream.c (a member's
 * stream), archive_tar.c (TAR headers), archive_zip.c (ZIP).
 */
#ifndef TM_INPUT_PRIV_H
#define TM_INPUT_PRIV_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include <stdint.h>
#include <stdlib.h>

#include "formats.h"
#include "input.h"
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
static inline struct loc_c *
lc_w(struct loc *l)
{
	if (!l->c) {
		l->c = xmalloc(sizeof *l->c);
		*l->c = loc_c_none;
	}
	return l->c;
}

/* l's parked stream, taken (NULL if none). */
static inline struct tm_stream *
lc_take_parked(struct loc *l)
{
	return l->c ? __atomic_exchange_n(&l->c->parked, NULL, __ATOMIC_ACQ_REL) : NULL;
}

static inline void
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
	 * read (the one open_input took its identity from, tm_ar_lend, or
	 * open_parent's; -1 until then), lent to their streams and the sniff:
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

static inline struct priv *
P(const struct tm_input *in)
{
	return in->priv;
}

/* ---- the member table (archive_table.c) ---- */
size_t tm_ar_add_member(struct tm_input *in, int parent, const char *name, size_t name_len, enum loc_kind kind);
void tm_ar_clear_cfatal(struct tm_input *in, size_t ci);
const char *tm_ar_disp(const struct tm_member *m);
void tm_ar_input_warn(struct tm_input *in, size_t ci, uint64_t off, const char *fmt, ...)
	TM_PRINTF(4, 5);
bool tm_ar_is_hidden(const char *p, size_t n);
char *tm_ar_label(const struct tm_input *in, size_t i);
void tm_ar_publish(struct tm_input *in, size_t mi);
void tm_ar_set_cfatal(struct tm_input *in, size_t ci, const char *tp, const char *fmt, ...)
	TM_PRINTF(4, 5);
void tm_ar_set_format(struct tm_member *m, enum tm_format f);
bool tm_ar_too_many(struct tm_input *in, struct tm_error *err, enum tm_status *s);
void tm_ar_unlist_from(struct tm_input *in, size_t from);

/* ---- a member's stream (archive_stream.c) ---- */
void tm_ar_blocking(int fd);
/* fd, input path's descriptor opened to take its identity, kept as the
 * one its members are read through (struct priv fds) while fewer than
 * LENT_FDS are kept and fd is below a quarter of the descriptor limit;
 * false: not kept (the caller closes it). */
bool tm_ar_lend(struct tm_input *in, size_t path, int fd);
bool tm_ar_direct(const struct tm_input *in, size_t i);
enum tm_status tm_ar_gz_drain(struct tm_stream *st, struct tm_error *err);
enum tm_status tm_ar_gz_prov_drain(struct tm_input *in, size_t mi, struct tm_stream *st, bool *stands, struct tm_error *err);
void tm_ar_gz_record(struct tm_input *in, size_t ci, size_t mi, struct tm_stream *st, uint64_t total);
enum tm_status tm_ar_gz_settle(struct tm_input *in, size_t mi, struct tm_stream *st, struct tm_error *err);
bool tm_ar_id_of(int fd, struct tm_file_id *id);
enum tm_status tm_ar_open_member(const struct tm_input *in, size_t i, struct tm_stream **out, struct tm_error *err);
enum tm_status tm_ar_open_path(const struct tm_input *in, size_t i, int *fd, struct tm_error *err);
enum tm_status tm_ar_read_head(const struct tm_input *in, size_t i, size_t cap, uint8_t *buf, size_t *got, struct tm_error *err);
enum tm_status tm_ar_sniff_top(struct tm_input *in, uint8_t **buf, size_t *bcap, enum tm_format *f, struct tm_error *err);

/* ---- processing order (archive_order.c) ---- */
void tm_ar_process(struct tm_input *in, size_t ci);
void tm_ar_start(struct tm_input *in, size_t i);

/* ---- TAR (archive_tar.c) ---- */
enum tm_status tm_ar_tar_entries(struct tm_input *in, size_t ci, struct tm_stream *st, size_t *vis_end, struct tm_error *err);

/* ---- ZIP (archive_zip.c) ---- */
enum tm_status tm_ar_walk_zip(struct tm_input *in, size_t ci, struct tm_error *err);

#endif

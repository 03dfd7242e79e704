/* SPDX-License-Identifier: MIT */
/*
 * The input stage's face (engine/input/, above util, stream and scan).
 * Inputs and members (archive.c, listing.c, label.c) and how a member's
 * stream is opened; the streams themselves: stream.h.  Internal to the engine.
 *
 * tm_input_open() builds the member table exactly as trace_processor's
 * trace_file table would hold it: index 0 is the top-level input; TAR and
 * ZIP members get ids 1..N in physical order; hidden members are listed but
 * get no id; a gzip/zstd member gets one child (name "", the inner stream);
 * nested archives are expanded recursively, their members numbered when the
 * container's turn comes, as trace_processor does (forwarding_trace_parser.cc).
 * processing order follows (priority, name, index) within each container,
 * each container's members processed at the container's place.
 *
 * Streams: tm_stream_open() gives the (decompressed) bytes of one member,
 * read block by block; never the whole member in memory.
 */
#ifndef TM_INPUT_H
#define TM_INPUT_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include <sys/types.h>

#include "internal.h"
#include "stream.h"

struct tm_input {
	struct tm_member *members; /* [0] = top level */
	size_t n_members;
	bool is_loose;   /* several loose files: a virtual TAR (util merge) */
	char **paths;    /* input paths as given */
	size_t n_paths;
	/* Processing sequence: member indexes in the order trace_processor
	 * processes them (containers included, hidden excluded). */
	size_t *proc;
	size_t n_proc;
	/* A fatal error of the container walk (e.g. "Premature end of TAR file
	 * (ERR:tp-corrupt)") that trace_processor would hit once it reaches
	 * member index fatal_at in processing order (SIZE_MAX: at the start).
	 * NULL when the archive is sound.  Text is trace_processor's (unwrapped). */
	char *fatal;
	size_t fatal_after; /* members in proc[] processed before the failure */
	char *fatal_where;  /* ours: "file: byte 0x...: what" */
	char *warning;      /* ours: something trace_processor accepts silently */
	void *priv;         /* archive.c's private locator data */
};

/* Open inputs (see tm_session_open).  Fills in every member field. */
enum tm_status tm_input_open(struct tm_input *in, const char *const *paths, size_t n_paths,
			     struct tm_error *err) TM_WUR;
/* The same, with the caller's cancel flag (looked at on every block read
 * while listing: TM_ERR_CANCELLED) and a cap on the bytes the listing may
 * decompress (0: 1 GiB + 1024x the inputs' size; TM_ERR_LIMIT names it). */
enum tm_status tm_input_open_ctl(struct tm_input *in, const char *const *paths, size_t n_paths,
				 volatile bool *cancel, uint64_t budget,
				 struct tm_error *err) TM_WUR;
/* The same, scanning as it lists: members of containers read front to back
 * (tm_input_seq_parent != SIZE_MAX; a TAR inside gzip, zstd or deflate)
 * whose sniffed format is predicted are handed to visit->member while the
 * walk reads past them, so that the container is decompressed once for the
 * listing and the scan together.  member() takes the stream (it closes it;
 * it may leave bytes unread) and returns TM_OK or a status that stops the
 * listing (TM_ERR_CANCELLED) with its reason in err.  drop() says a member handed over was not
 * registered after all (its data runs past the end of the container).
 * pub (may be NULL): where the members are published as they are found. */
struct tm_stream;
struct tm_visit {
	enum tm_status (*member)(void *ud, size_t member, struct tm_stream *st, struct tm_error *err);
	void (*drop)(void *ud, size_t member);
	void *ud;
};
enum tm_status tm_input_open_visit(struct tm_input *in, const char *const *paths, size_t n_paths,
				   volatile bool *cancel, uint64_t budget,
				   const struct tm_visit *visit, struct tm_listing *pub,
				   struct tm_error *err) TM_WUR;
void tm_input_close(struct tm_input *in);

/* A file's identity: what a saved scan of it is keyed on (scancache.c). */
struct tm_file_id {
	uint64_t dev, ino, size;
	int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
};
/* A regular file's identity from its stat; false for anything else. */
struct stat;
bool tm_file_id_of(const struct stat *st, struct tm_file_id *id);
/* Input path i's identity, taken from the descriptor the open read it
 * through before reading any of it, and the time (seconds) just before
 * that; false when it has none (the open failed). */
bool tm_input_file_id(const struct tm_input *in, size_t i, struct tm_file_id *id,
		      int64_t *taken_s);
/* Whether every byte read of input path i so far was of the file its
 * identity names, unchanged: each open of the path since found that file
 * (dev, inode, size, mtime, ctime), and the path and its descriptor still
 * do now.  A change after it was read changes its ctime. */
bool tm_input_unchanged(const struct tm_input *in, size_t i);

/* The producer's side of a tm_listing (listing.c): archive.c begins it
 * with the inputs' size and its two byte counters (atomics, read until
 * tm_listing_end copies them), puts member i (i <= the members put so far:
 * appended, or changed in place) once it is sniffed, and unlists members
 * from n on; the session marks it final when tm_session_open returns.
 * Each is a no-op on a NULL listing. */
void tm_listing_begin(struct tm_listing *l, uint64_t input_bytes, const uint64_t *read_pos,
		      const uint64_t *inflated);
void tm_listing_put(struct tm_listing *l, size_t i, const struct tm_member *m);
void tm_listing_truncate(struct tm_listing *l, size_t n);
void tm_listing_end(struct tm_listing *l);
void tm_listing_finish(struct tm_listing *l);
/* "<archive>: <member>: <nested member>", as stream errors name a member
 * (caller frees). */
char *tm_input_label(const struct tm_input *in, size_t member);

struct tm_stream;
/* Open member i's bytes (for a gzip member's child: the inflated stream). */
enum tm_status tm_stream_open(const struct tm_input *in, size_t member, struct tm_stream **out,
			      struct tm_error *err) TM_WUR;
/* The same for a reader that reads the member from its start and can read it
 * again: a gzip/zstd member's bytes may come before the decompression has
 * verified that trace_processor is handed them (decompressed once instead
 * of twice).  Once done reading (ended, failed or stopped; not cancelled),
 * ask tm_stream_refuted: true (rare: the stream failed before the end of
 * what was read) means discard what was read and read the member again
 * with tm_stream_open.  Waits until the answer is known. */
enum tm_status tm_stream_open_scan(const struct tm_input *in, size_t member,
				   struct tm_stream **out, struct tm_error *err) TM_WUR;
/* Read the member again after tm_stream_refuted gave end (known): the
 * bytes up to end->handed, decompressed once and not verified again, then
 * end's failure, exactly what tm_stream_open would deliver. */
enum tm_status tm_stream_open_known(const struct tm_input *in, size_t member,
				    const struct tm_stream_end *end, struct tm_stream **out,
				    struct tm_error *err) TM_WUR;
/* Members of a container whose bytes can only be read front to back (a TAR
 * inside gzip or zstd, anything inside a deflated ZIP member): opening each
 * on its own decompresses everything before it again, quadratic in the
 * members.  tm_input_seq_parent gives such a member's container (SIZE_MAX
 * when the member can be opened directly at no extra cost); a tm_seq reads
 * the container once, and tm_seq_member opens its members in increasing
 * data offset (the previous member's stream closed first), each exactly as
 * tm_stream_open would.  Any error: fall back to tm_stream_open. */
size_t tm_input_seq_parent(const struct tm_input *in, size_t member);
struct tm_seq;
enum tm_status tm_seq_open(const struct tm_input *in, size_t container, struct tm_seq **out,
			   struct tm_error *err) TM_WUR;
/* The data offset of member in its container's stream (the sort key). */
uint64_t tm_seq_offset(const struct tm_input *in, size_t member);
enum tm_status tm_seq_member(struct tm_seq *q, size_t member, struct tm_stream **out,
			     struct tm_error *err) TM_WUR;
void tm_seq_close(struct tm_seq *q);

/* Raw (stored) bytes of a member as they sit in the archive, for the TAR
 * writer: for a loose file or TAR member, the member bytes; for a ZIP member,
 * the decompressed bytes. */
enum tm_status tm_stream_open_raw(const struct tm_input *in, size_t member, struct tm_stream **out,
				  struct tm_error *err) TM_WUR;

/* An output file being written (output.c): tm_out_open checks path under
 * o's rules (tm_output_check), removes stale temp files beside it and opens
 * the locked temp file (fd); tm_out_commit gives it the replaced file's
 * mode, fsyncs and renames it over path; tm_out_abort removes it. */
struct tm_out_file {
	int fd;
	int dfd;      /* the paths are relative to it (AT_FDCWD: as given) */
	bool no_sync; /* no fsync of the file or its directory (tm_out_open_at) */
	char *tmp, *path; /* path: a symlink's target when out_path is one */
	bool replaces;
	bool create_only; /* absent when opened, no replace: never rename over */
	mode_t mode;
	uid_t uid;
	gid_t gid;
};
enum tm_status tm_out_open(struct tm_out_file *f, const char *path, struct tm_output *o,
			   struct tm_error *err) TM_WUR;
/* tm_out_open for a file the program keeps for itself in the directory
 * dfd it opened and checked (the scan cache): name relative to it, a
 * private file (o->private_file whatever o says; o may be NULL); no_sync
 * leaves out the fsyncs, for state a crash may lose (what a crash leaves
 * must then be refused by its reader). */
enum tm_status tm_out_open_at(struct tm_out_file *f, int dfd, const char *name,
			      struct tm_output *o, bool no_sync, struct tm_error *err) TM_WUR;
enum tm_status tm_out_commit(struct tm_out_file *f, struct tm_error *err) TM_WUR;
void tm_out_abort(struct tm_out_file *f);
/* Test hook: called by tm_out_open with the path it will write, after
 * checking it (a test swaps a symlink there). */
extern void (*tm_out_checked_hook)(const char *path);

/* ustar writer (tar_write.c), out_path under o's rules (tm_output). */
struct tm_tar_writer;
enum tm_status tm_tar_begin(struct tm_tar_writer **out, const char *out_path,
			    struct tm_output *o, bool reproducible, int64_t mtime,
			    struct tm_error *err) TM_WUR;
/* Add one member of exactly size bytes; data supplied by successive
 * tm_tar_write calls. */
enum tm_status tm_tar_add(struct tm_tar_writer *w, const char *name, uint64_t size,
			  struct tm_error *err) TM_WUR;
enum tm_status tm_tar_write(struct tm_tar_writer *w, const void *p, size_t n,
			    struct tm_error *err) TM_WUR;
/* Finish: end blocks, then tm_out_commit.  On error or abort the
 * temp file is removed and out_path untouched. */
enum tm_status tm_tar_commit(struct tm_tar_writer *w, struct tm_error *err) TM_WUR;
void tm_tar_abort(struct tm_tar_writer *w);
/* One ustar header (exposed for the unit test). */
enum tm_status tm_tar_header(uint8_t h[512], const char *name, uint64_t size, int64_t mtime,
			     struct tm_error *err) TM_WUR;

/* A member's name for explanations, appended to out: its path, the input's
 * base name, or for an inflated stream (trace_processor names it "")
 * '"" (inflated NAME)' with its container's name, for an archive entry
 * with an empty name '"" (an entry with no name in NAME)'. */
void tm_member_label(const struct tm_input *in, size_t member, struct tm_buf *out);

#endif

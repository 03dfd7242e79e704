/* SPDX-License-Identifier: MIT */
/*
 * tracemerge engine: the one public header.
 *
 * The engine predicts what Perfetto's trace_processor does when it opens a
 * multi-file archive: member order, formats, machines, where every event
 * lands on the merged timeline, which events are dropped and why, and the
 * error the import fails with.  It never prints, never exits and never
 * touches the terminal; front ends (tui/) call only what is declared here.
 *
 * Call order:
 *   tm_session_open()      list members (cheap; reads headers and sniffs)
 *   tm_session_scan()      one streaming pass per member (may run in a worker
 *                          thread; only tm_session_progress() may be called
 *                          concurrently with it)
 *   tm_session_evaluate()  replay trace_processor's import over what the scan
 *                          kept, for one manifest; cheap, call on every edit
 *   tm_merge_write()       write the merged TAR
 *   tm_session_close()
 *
 * Ownership: pointers returned by the _get and _member functions are borrowed and
 * valid until the owner is freed or closed.  Everything a caller must free
 * says so.  Out-of-memory aborts (xmalloc); data errors are returned.
 */
#ifndef TM_TRACEMERGE_H
#define TM_TRACEMERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TM_VERSION "0.1.0"

#if defined(__GNUC__)
#define TM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TM_WUR __attribute__((warn_unused_result))
#else
#define TM_PRINTF(a, b)
#define TM_WUR
#endif

/* ------------------------------------------------------------------ */
/* Status and errors                                                   */
/* ------------------------------------------------------------------ */

#define TM_STATUS_LIST(X)                                                                          \
	X(TM_OK, "ok")                                                                             \
	X(TM_ERR_IO, "input/output error")                                                         \
	X(TM_ERR_FORMAT, "malformed input")                                                        \
	X(TM_ERR_LIMIT, "input exceeds a limit")                                                   \
	X(TM_ERR_UNSUPPORTED, "unsupported input")                                                 \
	X(TM_ERR_INVALID, "invalid argument")                                                      \
	X(TM_ERR_MANIFEST, "manifest error")                                                       \
	X(TM_ERR_CANCELLED, "cancelled")                                                           \
	X(TM_ERR_EXISTS, "file exists")

enum tm_status {
#define TM_X_(id, s) id,
	TM_STATUS_LIST(TM_X_)
#undef TM_X_
};

/* An error: msg is the full text.  For TM_ERR_MANIFEST it is exactly the text
 * trace_processor fails with (e.g. "perfetto_manifest: version must be an
 * integer"); hint, when non-empty, is ours (never trace_processor's) and says
 * how to fix it, e.g. the valid form of an outdated manifest syntax. */
struct tm_error {
	enum tm_status code;
	int sys_errno;
	char msg[1024];
	char hint[1024];
	/* Set by readers when trace_processor's import would fail at the same
	 * point: its own text (e.g. "Compressed stream incomplete, trace is
	 * likely corrupt (ERR:tp-corrupt)"); empty otherwise. */
	char tp[512];
};

const char *tm_status_str(enum tm_status s);
void tm_error_clear(struct tm_error *err);
/* Out of memory ends the program (abort()).  Before that the engine calls
 * the hook, if set, with the size it failed to allocate (SIZE_MAX when the
 * size itself overflowed), so the front end can say what ran out.  The hook
 * must only use async-signal-safe calls (write(2)). */
void tm_set_oom_hook(void (*hook)(size_t bytes));

/* ------------------------------------------------------------------ */
/* Growable byte buffer (owns its bytes)                               */
/* ------------------------------------------------------------------ */

struct tm_buf {
	char *data; /* NUL-terminated when non-NULL */
	size_t len;
	size_t cap;
};

void tm_buf_init(struct tm_buf *b);
void tm_buf_fini(struct tm_buf *b);
void tm_buf_reset(struct tm_buf *b);
void tm_buf_add(struct tm_buf *b, const void *p, size_t n);
void tm_buf_adds(struct tm_buf *b, const char *s);
void tm_buf_addc(struct tm_buf *b, char c);
void tm_buf_addf(struct tm_buf *b, const char *fmt, ...) TM_PRINTF(2, 3);
/* Caller owns the returned string (free()); the buffer is left empty. */
char *tm_buf_steal(struct tm_buf *b);

/* The engine's string hash (64-bit FNV-1a), for names the front end derives
 * from data (e.g. a file name per set of inputs): h = tm_hash_bytes(
 * TM_HASH_INIT, p, n), chained for several fields.  Stable across versions. */
#define TM_HASH_INIT 1469598103934665603ull
uint64_t tm_hash_bytes(uint64_t h, const void *p, size_t n);

/* The last component of a path (what util merge names a member): borrowed
 * from path. */
const char *tm_path_base(const char *path);

/* ------------------------------------------------------------------ */
/* Escaping untrusted text for display (the one function for it)      */
/* ------------------------------------------------------------------ */

/* Appends s[0..len) to out with every byte that could reach a terminal
 * unsafely escaped: tab/newline/CR as \t \n \r, other C0 and DEL as \xNN,
 * C1 controls, bidi controls and non-printing code points as \uXXXX,
 * invalid UTF-8 as \xNN, and a backslash as \\.  Returns the display width
 * (columns) of what was appended.  When spans is non-NULL, the byte offsets
 * [start,end) in out of each escape are recorded so a TUI can draw them in
 * the "escape" role (at most max_spans; the rest are not recorded). */
struct tm_span {
	size_t start, end;
};
size_t tm_escape_display(const char *s, size_t len, struct tm_buf *out, struct tm_span *spans,
			 size_t max_spans, size_t *n_spans);
/* Convenience: escaped copy of a NUL-terminated string; caller frees. */
char *tm_escape_str(const char *s);
/* The one UTF-8 decoder's verdict: length (1-4) of the strictly valid
 * sequence at p[0..n) (no overlongs, surrogates or code points above
 * U+10FFFF), 0 when invalid or cut off. */
size_t tm_utf8_len(const char *p, size_t n);
/* Appends s[0..len) to out as a JSON string literal (quotes included):
 * valid UTF-8 (an invalid byte becomes \ufffd), C0 and DEL, C1 controls,
 * bidi controls and the other code points tm_escape_display hides as \u
 * escapes (a JSON reader gets the same code points back). */
void tm_escape_json(const char *s, size_t len, struct tm_buf *out);
/* The same for a finished JSON document (e.g. an emitted manifest): its
 * ASCII is kept as is; C1, bidi and other hidden code points become \u
 * escapes and invalid UTF-8 \ufffd, so it is safe to print to a terminal
 * and still the same JSON value for valid UTF-8. */
void tm_escape_json_doc(const char *json, size_t len, struct tm_buf *out);
/* s itself when it is at most max bytes long; otherwise its head and tail
 * joined by U+2026 in buf (at most max bytes, cut at UTF-8 character
 * boundaries; cap >= max + 1).  For names quoted in messages, so a huge
 * name cannot push the reason out of a bounded message. */
const char *tm_shorten(const char *s, size_t max, char *buf, size_t cap);

/* ------------------------------------------------------------------ */
/* Clocks                                                              */
/* ------------------------------------------------------------------ */

enum tm_clock {
	TM_CLOCK_UNSET = 0,
	TM_CLOCK_REALTIME = 1,
	TM_CLOCK_REALTIME_COARSE = 2,
	TM_CLOCK_MONOTONIC = 3,
	TM_CLOCK_MONOTONIC_COARSE = 4,
	TM_CLOCK_MONOTONIC_RAW = 5,
	TM_CLOCK_BOOTTIME = 6,
	TM_CLOCK_TSC = 9,
	TM_CLOCK_PERF = 10,
	TM_CLOCK_TRACE_FILE = 11,
};

/* "BOOTTIME" etc. for 1-6 and 9-11; "clock64" style for others (static). */
const char *tm_clock_name(uint32_t id);
/* Manifest clock names (REALTIME..BOOTTIME, case-sensitive); 0 if unknown. */
uint32_t tm_clock_from_name(const char *name);

/* ------------------------------------------------------------------ */
/* Manifest model                                                      */
/* ------------------------------------------------------------------ */

struct cJSON; /* unknown fields are kept as cJSON trees; never needed by callers */

struct tm_manifest_machine { /* one "machines" entry */
	uint32_t id;
	char *name;
};

struct tm_manifest_clocks {
	char *machine;       /* clocks.machine, or NULL */
	uint32_t clock;      /* clocks.clock; TM_CLOCK_UNSET = PIN (clockless file) */
	char *sync_file;     /* sync_to.file (required) */
	char *sync_machine;  /* sync_to.machine, or NULL */
	uint32_t sync_clock; /* sync_to.clock; UNSET = the ref file's private clock */
	int64_t offset_ns;   /* ref = source + offset_ns */
	struct cJSON *extra; /* unknown keys of "clocks" */
	struct cJSON *sync_extra; /* unknown keys of "sync_to" */
};

struct tm_manifest_file {
	char *path;
	size_t path_len; /* path's bytes when they hold a NUL (an escaped "\u0000":
			  * trace_processor's std::string keeps it, and a GNU tar long
			  * name ends in one), else 0: strlen(path) */
	char *machine_name; /* "machine": {"name": ...}, or NULL */
	struct cJSON *machine_extra;
	bool has_machines; /* "machines" present (possibly empty) */
	size_t n_machines;
	struct tm_manifest_machine *machines;
	bool has_clocks;
	struct tm_manifest_clocks clocks;
	struct cJSON *extra; /* unknown keys of the entry, __exported_table_schema included */
};

struct tm_manifest_attr {
	char *key;
	bool is_int;
	int64_t ival;
	char *sval;
};

struct tm_manifest {
	int64_t version;
	bool has_trace_time;
	uint32_t tt_clock;
	char *tt_file;    /* or NULL */
	char *tt_machine; /* or NULL */
	struct cJSON *tt_extra;
	bool has_files;
	size_t n_files;
	struct tm_manifest_file *files;
	bool has_attributes;
	size_t n_attrs;
	struct tm_manifest_attr *attrs;
	struct cJSON *extra;      /* unknown keys inside "perfetto_manifest" */
	struct cJSON *root_extra; /* unknown keys beside "perfetto_manifest" */
	/* the engine's: an index of files[].path that tm_manifest_file_find
	 * builds, never copied; change files only through the functions below
	 * (they drop it), or call tm_manifest_files_changed */
	void *files_ix;
};

void tm_manifest_init(struct tm_manifest *m); /* version 1, nothing else */
void tm_manifest_fini(struct tm_manifest *m);
void tm_manifest_copy(struct tm_manifest *dst, const struct tm_manifest *src); /* deep; dst uninitialised */
bool tm_manifest_equal(const struct tm_manifest *a, const struct tm_manifest *b);

/* Parse and validate text as trace_processor's manifest reader does, with its
 * exact error text in err->msg (TM_ERR_MANIFEST) and, for the outdated syntax
 * of older docs, a hint with the valid form in err->hint.  Checks that need
 * the archive (member names, trace content) are made by tm_session_evaluate.
 * On error *out is left initialised and empty. */
enum tm_status tm_manifest_parse(const char *text, size_t len, struct tm_manifest *out,
				 struct tm_error *err) TM_WUR;

struct tm_session;
/* What the input says of its files, for the outdated syntax's conversion
 * and hints (tm_session_convert_outdated fills it from the scans). */
struct tm_convert_file {
	const char *path;
	bool clockless;       /* no clock of its own (JSON...): related, it is pinned */
	uint32_t trace_clock; /* the clock its timestamps are in */
	size_t n_clocks;
	const uint32_t *clocks;
};
struct tm_convert_ctx {
	size_t n_files;
	const struct tm_convert_file *files;
	const char *tt_file; /* the file owning trace time without a trace_time block */
	uint32_t tt_clock;
};
/* Rewrite the outdated syntax of older docs (a clocks map of clock names
 * with trace_time_offset_ns, a machines map keyed by id, trace_time.machine
 * without trace_time.file) into the valid form, meaning what it meant: the
 * clocks relate the file to whatever owns trace time (trace_time's file
 * and machine, else ctx's owner), through the clock its timestamps are in
 * (a PIN for a clockless file); other parts are kept.  What cannot be
 * expressed is left out and said in notes (may be NULL), one sentence
 * each.  ctx may be NULL (nothing known of the files).  The result is
 * JSON text in out, indented by two spaces; TM_ERR_INVALID when nothing
 * applies. */
enum tm_status tm_manifest_convert_outdated(const char *text, size_t len,
					    const struct tm_convert_ctx *ctx, struct tm_buf *out,
					    struct tm_buf *notes, struct tm_error *err) TM_WUR;
/* err's hint for the outdated syntax in text again, naming only what ctx
 * says the files have (nothing changes when text does not parse as JSON). */
void tm_manifest_outdated_hint(const char *text, size_t len, const struct tm_convert_ctx *ctx,
			       struct tm_error *err);
/* The two above with what the session's scans say of its files (their
 * clocks, which are clockless, who owns trace time without a trace_time
 * block).  The conversion also parses and evaluates its result: an error
 * (TM_ERR_MANIFEST) when trace_processor would still reject it, out kept. */
enum tm_status tm_session_convert_outdated(struct tm_session *s, const char *text, size_t len,
					   struct tm_buf *out, struct tm_buf *notes,
					   struct tm_error *err) TM_WUR;
void tm_session_outdated_hint(struct tm_session *s, const char *text, size_t len,
			      struct tm_error *err);

/* Canonical JSON: 2-space indentation, the key order of Perfetto's dialog
 * (version, trace_time, files, attributes; path, machine/machines, clocks;
 * sync_to, offset_ns, clock; file, machine, clock), unknown keys after the
 * known ones, newline at the end.  Byte-stable: parse(emit(m)) == m. */
void tm_manifest_emit(const struct tm_manifest *m, struct tm_buf *out);

/* True when the manifest configures nothing (version only): the dialog and
 * `util merge` then omit it from the TAR. */
bool tm_manifest_is_trivial(const struct tm_manifest *m);

/* Editing helpers (used by the CLI config options and the workbench). */
/* Returns the entry for path, appending an empty one when create is true
 * (else NULL when absent).  Borrowed; invalidated by the next append. */
/* Say that m's files (paths, count or array) were changed other than by
 * the functions here: drops the index tm_manifest_file_find keeps. */
void tm_manifest_files_changed(struct tm_manifest *m);
struct tm_manifest_file *tm_manifest_file_get(struct tm_manifest *m, const char *path,
					      bool create);
/* The first entry whose path is exactly path (as trace_processor's reader
 * matches), or NULL; m or path NULL: NULL. */
/* The same for a path of len bytes (a member name may hold a NUL). */
const struct tm_manifest_file *tm_manifest_file_find_n(const struct tm_manifest *m,
						       const char *path, size_t len);
const struct tm_manifest_file *tm_manifest_file_find(const struct tm_manifest *m,
						     const char *path);
void tm_manifest_set_machine(struct tm_manifest *m, const char *path, const char *name);
/* name NULL or "" removes the entry's machine. */
void tm_manifest_set_clocks(struct tm_manifest *m, const char *path, uint32_t clock,
			    const char *ref_file, uint32_t ref_clock, const char *ref_machine,
			    int64_t offset_ns);
void tm_manifest_clear_clocks(struct tm_manifest *m, const char *path);
void tm_manifest_set_trace_time(struct tm_manifest *m, uint32_t clock, const char *file,
				const char *machine); /* clock UNSET removes it */
void tm_manifest_set_attr_str(struct tm_manifest *m, const char *key, const char *val);
void tm_manifest_set_attr_int(struct tm_manifest *m, const char *key, int64_t val);
void tm_manifest_remove_attr(struct tm_manifest *m, const char *key);
/* A file renamed (every path, sync_to.file and trace_time.file naming it),
 * or, with to NULL, removed: its entry and the offsets related to it go. */
void tm_manifest_rename_file(struct tm_manifest *m, const char *from, const char *to);

/* Parse an offset with an optional unit: "250ms", "-1.5s", "500", "20us",
 * "7ns" (plain numbers are ns).  Result in integer ns; fractional ns, values
 * outside int64 and INT64_MIN are rejected (TM_ERR_INVALID with a message). */
enum tm_status tm_parse_duration_ns(const char *s, int64_t *out, struct tm_error *err) TM_WUR;
/* Human-readable duration: "+250 ms", "-1.5 s", "+7 ns" (exact when possible). */
void tm_format_duration_ns(int64_t ns, struct tm_buf *out);

/* ------------------------------------------------------------------ */
/* Formats and archive members                                         */
/* ------------------------------------------------------------------ */

/* trace_processor's trace types, by detection priority.  tm_format_name()
 * gives its trace_type names (proto, json, systrace, perfetto_manifest, ...),
 * tm_format_short_name() a name of at most 8 characters for a list's
 * column ("Perfetto", "json", "logcat", ...). */
#define TM_FORMAT_LIST(X)                                                                          \
	X(TM_FMT_UNKNOWN, "unknown", "unknown")                                                    \
	X(TM_FMT_TAR, "tar", "tar")                                                                \
	X(TM_FMT_ARROW, "arrow", "arrow")                                                          \
	X(TM_FMT_FUCHSIA, "fuchsia", "fuchsia")                                                    \
	X(TM_FMT_PERF, "perf", "perf")                                                             \
	X(TM_FMT_SIMPLEPERF_PROTO, "simpleperf_proto", "simplepf")                                 \
	X(TM_FMT_ZIP, "zip", "zip")                                                                \
	X(TM_FMT_GZIP, "gzip", "gzip")                                                             \
	X(TM_FMT_ZSTD, "zstd", "zstd")                                                             \
	X(TM_FMT_ART_METHOD_V2, "art_method_v2", "art_mth2")                                       \
	X(TM_FMT_ART_METHOD, "art_method", "art_mth")                                              \
	X(TM_FMT_ART_HPROF, "art_hprof", "hprof")                                                  \
	X(TM_FMT_MANIFEST, "perfetto_manifest", "manifest")                                        \
	X(TM_FMT_GECKO, "gecko", "gecko")                                                          \
	X(TM_FMT_JSON, "json", "json")                                                             \
	X(TM_FMT_INSTRUMENTS_XML, "instruments_xml", "inst_xml")                                   \
	X(TM_FMT_CTRACE, "ctrace", "ctrace")                                                       \
	X(TM_FMT_NINJA_LOG, "ninja_log", "ninja")                                                  \
	X(TM_FMT_ANDROID_LOGCAT, "android_logcat", "logcat")                                       \
	X(TM_FMT_COLLAPSED_STACK, "collapsed_stack", "folded")                                     \
	X(TM_FMT_PERF_TEXT, "perf_text", "perf_txt")                                               \
	X(TM_FMT_STRACE, "strace", "strace")                                                       \
	X(TM_FMT_SYSTRACE, "systrace", "systrace")                                                 \
	X(TM_FMT_SYMBOLS, "symbols", "symbols")                                                    \
	X(TM_FMT_PPROF, "pprof", "pprof")                                                          \
	X(TM_FMT_PROTO, "proto", "Perfetto")                                                       \
	X(TM_FMT_PRIMES, "primes", "primes")                                                       \
	X(TM_FMT_ANDROID_DUMPSTATE, "android_dumpstate", "dumpstat")

enum tm_format {
#define TM_X_(id, s, sh) id,
	TM_FORMAT_LIST(TM_X_)
#undef TM_X_
	TM_FMT__COUNT
};

const char *tm_format_name(enum tm_format f);
const char *tm_format_short_name(enum tm_format f); /* at most 8 characters */
/* trace_processor's archive priority: manifest -1, proto 0, containers 1,
 * symbols 3, everything else 2. */
int tm_format_priority(enum tm_format f);
bool tm_format_is_container(enum tm_format f); /* tar zip gzip zstd ctrace */
/* Formats whose events the engine scans and predicts (proto, json, systrace,
 * perf_text).
 * For every other format the verdict says its events are not predicted. */
bool tm_format_is_predicted(enum tm_format f);
/* False for the formats whose importer sorts no timestamp (collapsed_stack,
 * pprof, symbols, art_hprof, arrow, and ninja_log, whose slices are written
 * at their own times): nothing of them can be dropped, and they claim no
 * trace time. */
bool tm_format_has_timeline(enum tm_format f);

/* Sniff a format from the first bytes of a file, with trace_processor's
 * rules (at most 128 bytes looked at by most sniffers; pass what TP would:
 * a TAR member's first min(512,size) bytes, a whole ZIP member). */
enum tm_format tm_sniff(const void *data, size_t len);

/* One row of trace_processor's trace_file table, plus what we know.
 * (Fields ordered without padding: an archive lists 10,000s of members.) */
struct tm_member {
	char *name;       /* member path (NUL-terminated); NULL for the top-level input */
	size_t name_len;  /* bytes in name; may include a GNU long-name trailing NUL */
	uint64_t size;    /* size as trace_file.size shows it after a successful import;
			   * UINT64_MAX while unknown (an inflated stream not yet scanned) */
	uint64_t stored_size; /* bytes in the archive (compressed size for ZIP deflate) */
	const char *source_path; /* the file on disk holding it (archive or loose file) */
	uint64_t index;   /* position in the archive (entry index), for the sort key */
	char *error;      /* set when this member cannot be read: "where: what" */
	enum tm_format format;
	int priority;     /* tm_format_priority(format) */
	int parent;       /* index of the containing member, -1 for top level */
	uint32_t trace_file_id; /* trace_file.id (0 = the top-level input); UINT32_MAX if hidden */
	uint32_t order;   /* trace_file.processing_order; UINT32_MAX if never processed */
	bool is_hidden;   /* a path component starts with '.' (never registered) */
	bool is_unexpanded; /* a container nested deeper than tracemerge expands
			     * (trace_processor has no limit): its members are
			     * not listed, the report is incomplete */
};
_Static_assert(sizeof(void *) != 8 || sizeof(struct tm_member) == 80, "struct tm_member grew");

/* ------------------------------------------------------------------ */
/* Session                                                             */
/* ------------------------------------------------------------------ */

struct tm_session;

struct tm_session_opts {
	bool keep_events; /* keep names and per-event details for the report's events list */
	bool plain_replay; /* the reference path: replay every event one by one
			    * instead of in runs (results are identical; slower) */
	/* Opening: set *cancel to true from any thread (or a signal handler) to
	 * stop tm_session_open with TM_ERR_CANCELLED; it is looked at on every
	 * block the listing reads or decompresses.  NULL: not cancellable. */
	volatile bool *cancel;
	/* Most bytes the listing may decompress (nested archives are listed by
	 * decompressing them): 0 = 1 GiB + 1024 bytes per input byte.  Beyond
	 * it tm_session_open fails with TM_ERR_LIMIT naming the cap. */
	uint64_t list_budget;
	/* Saved scans: a directory (created 0700; tm_cache_default_dir) where
	 * the scan of each input is kept, keyed on its path as given, device,
	 * inode, size, mtime and ctime and on this build, so that reopening an
	 * unchanged input loads its scan instead of reading it again.  NULL:
	 * no cache.  Files beyond cache_max_bytes (0: TM_CACHE_MAX_DEFAULT) are
	 * removed, least recently used first. */
	const char *cache_dir;
	uint64_t cache_max_bytes;
	bool cache_refresh; /* load nothing; save what this session scans */
	/* Where tm_session_open publishes what it has listed so far (NULL:
	 * nowhere); see tm_listing_new. */
	struct tm_listing *listing;
};
#define TM_CACHE_MAX_DEFAULT (1024ull << 20)

/* Open inputs: one archive (TAR, ZIP, tar.gz, a single gzip'd trace) or one
 * trace file, opened as trace_processor opens that file; or several trace
 * files, treated as the TAR `util merge` would pack them (member name = base
 * name, in argument order).  Lists and sniffs members; does not scan.
 * A manifest member is parsed here (see tm_session_manifest). */
enum tm_status tm_session_open(struct tm_session **out, const char *const *paths, size_t n_paths,
			       const struct tm_session_opts *opts, struct tm_error *err) TM_WUR;
void tm_session_close(struct tm_session *s);

/* The listing while it runs, for a front end that draws before a large
 * compressed container is fully inflated: create a listing, pass it in
 * tm_session_opts.listing to tm_session_open (on a thread of its own), and
 * read it meanwhile from any thread with tm_listing_snapshot.  The open
 * publishes each member once the walk has found and sniffed it, the bytes
 * read so far, and marks the listing final when it returns (opened, failed
 * or cancelled).  A snapshot is consistent: every member in it is whole.
 * It is the archive's physical order, without trace_file ids or
 * processing order: those are decided at the end (trace_processor orders
 * each container's members by priority, then name); a front end that
 * lists rows in processing order must expect them to move then. */
struct tm_listing;
struct tm_listing *tm_listing_new(void);
/* Only once no tm_session_open uses it any more. */
void tm_listing_free(struct tm_listing *l);

struct tm_listing_member {
	const char *name; /* borrowed from the listing until tm_listing_free;
			   * NULL for the top-level input */
	size_t name_len;
	uint64_t size;    /* UINT64_MAX: not known yet (an inflated stream) */
	enum tm_format format;
	int parent;       /* index of the containing member, -1 for top level */
	bool is_hidden;
};
struct tm_listing_snap {
	size_t n;
	struct tm_listing_member *members; /* in walk (physical) order */
	uint64_t read_bytes;     /* furthest byte of the input files read so far */
	uint64_t input_bytes;    /* the input files' size */
	uint64_t inflated_bytes; /* bytes decompressed so far */
	bool is_final;           /* tm_session_open has returned */
	uint64_t version;        /* differs whenever the members or is_final do */
	/* private: the snapshot is brought up to date in place */
	size_t cap_;
	uint64_t gen_;
};
void tm_listing_snap_init(struct tm_listing_snap *sn);
/* Bring sn up to date with l (copies only what changed); true when it did
 * change. */
bool tm_listing_snapshot(struct tm_listing *l, struct tm_listing_snap *sn);
void tm_listing_snap_fini(struct tm_listing_snap *sn);

/* True when the input is several loose files (a TAR to be written). */
bool tm_session_is_loose(const struct tm_session *s);
size_t tm_session_n_members(const struct tm_session *s);
/* Index 0 is the top-level input (the archive itself, or the single trace). */
const struct tm_member *tm_session_member(const struct tm_session *s, size_t i);
/* A member as reports name it, appended to out: its name; an inflated
 * stream (trace_processor names it "") as "" (inflated <its container>), a
 * TAR or ZIP entry named "" as "" (an entry with no name in <container>);
 * the single input as its base name. */
void tm_session_member_label(const struct tm_session *s, size_t i, struct tm_buf *out);
/* The member a user names (CLI arguments, offsets, pairs): the first one in
 * index order that is not hidden and whose whole name is name; -1 if none. */
long tm_session_member_by_name(const struct tm_session *s, const char *name);

/* The manifest found in the input, or NULL when there is none or it did not
 * parse; *err_out (borrowed, may be NULL) receives the parse error if any. */
const struct tm_manifest *tm_session_manifest(const struct tm_session *s,
					      const struct tm_error **err_out);
/* The bytes of that manifest member as read, parsed or not (borrowed until
 * tm_session_close; NUL-terminated; *len excludes the NUL), or NULL. */
const char *tm_session_manifest_text(const struct tm_session *s, size_t *len);
/* The archive-level failure found while listing (e.g. "Premature end of TAR
 * file (ERR:tp-corrupt)"): trace_processor's text, or NULL when the listing
 * found none (a failure inside a compressed stream shows only when it is
 * scanned, in the report).  *where (may be NULL) gets ours: "file: byte
 * 0x...: what", or NULL.  Borrowed. */
const char *tm_session_fatal(const struct tm_session *s, const char **where);

/* Scan one member (or every member with SIZE_MAX).  Safe to call from one
 * worker thread while the caller polls tm_session_progress(); set *cancel to
 * true from any thread to stop (TM_ERR_CANCELLED).  A member that fails to
 * read keeps its error in tm_member.error and its scan stops there, as
 * trace_processor's import would; other members are still scanned. */
enum tm_status tm_session_scan(struct tm_session *s, size_t member, volatile bool *cancel,
			       struct tm_error *err) TM_WUR;

/* What the scan cache did for this session: inputs whose scan was loaded
 * (reopened unchanged) and saved, and the last problem met (a damaged file
 * ignored, a write that failed; ours, borrowed), or NULL. */
struct tm_cache_info {
	size_t loaded, saved;
	const char *note;
};
void tm_session_cache_info(const struct tm_session *s, struct tm_cache_info *out);
/* $XDG_CACHE_HOME/tracemerge, else $HOME/.cache/tracemerge (caller frees),
 * NULL when neither is an absolute path. */
char *tm_cache_default_dir(void);

struct tm_progress {
	uint64_t done_bytes;
	uint64_t total_bytes;
	bool is_scanned;
};
void tm_session_progress(const struct tm_session *s, size_t member, struct tm_progress *p);

/* ------------------------------------------------------------------ */
/* Evaluation: the verdict for one manifest                            */
/* ------------------------------------------------------------------ */

/* Every stat tracemerge predicts: its id, trace_processor's name for it (the
 * stats table, src/trace_processor/storage/stats.h) and whether it is one of
 * the three summed into the dropped count (the UI's import dialog and
 * `trace_processor util merge` report that sum).  Front ends look stats up by
 * id, never by comparing names.
 *
 * Not predicted: interned_data_tokenizer_errors.  trace_processor counts it
 * for an interned message without an iid and for every interned lookup that
 * misses, of any kind (incremental_state.cc InternMessage and
 * GetInternedMessageView: categories, debug annotation names, source
 * locations, frames... in every parser); the scan reads event names alone.
 * Nor are interned_data_missing_sequence_id and
 * interned_data_skipped_incremental_state_invalid (proto_trace_reader.cc
 * ParseInternedData), which the scan could count.
 *
 * ftrace_packet_before_tracing_start is counted by the parser, after the
 * sorter (ftrace_parser.cc): a full import counts it, a tokenize-only dry
 * run does not; its events are missing from the merged trace.
 *
 * slice_negative_duration (SliceTracker::Scoped: a complete event of
 * negative duration makes no slice) and misplaced_end_event
 * (SliceTracker::MaybeCloseStack: a slice ended with open slices above it,
 * which end with it) are counted where the slices are built, by the events
 * list (keep_events without dropped_only: `check --events`, the
 * workbench): a report without that list has neither.  An E that closes
 * nothing counts no stat (SliceTracker::CompleteSliceBegin bails out). */
#define TM_STAT_LIST(X)                                                                            \
	X(TM_STAT_UNRELATABLE, "clock_sync_unrelatable_clock_domains", true)                       \
	X(TM_STAT_NO_PATH, "clock_sync_failure_no_path", true)                                     \
	X(TM_STAT_NEG_DROPPED, "trace_sorter_negative_timestamp_dropped", true)                    \
	X(TM_STAT_UNKNOWN_SOURCE, "clock_sync_failure_unknown_source_clock", false)                \
	X(TM_STAT_UNKNOWN_TARGET, "clock_sync_failure_unknown_target_clock", false)                \
	X(TM_STAT_UNDEFERRABLE, "clock_sync_failure_undeferrable_packet_loss", false)              \
	X(TM_STAT_MIXED_SOURCES, "clock_sync_mixed_clock_sources", false)                          \
	X(TM_STAT_INVALID_SNAPSHOT, "invalid_clock_snapshots", false)                              \
	X(TM_STAT_TE_INVALID_TS, "track_event_invalid_timestamp", false)                           \
	X(TM_STAT_STREAMING_PROFILE_INVALID_TS, "streaming_profile_invalid_timestamp", false)      \
	X(TM_STAT_JSON_TOKENIZER_FAILURE, "json_tokenizer_failure", false)                         \
	X(TM_STAT_JSON_DISPLAY_TIME_UNIT, "json_display_time_unit", false)                         \
	X(TM_STAT_SYSTRACE_PARSE_FAILURE, "systrace_parse_failure", false)                         \
	X(TM_STAT_SEQ_NEEDS_INCR_INVALID, "packet_skipped_seq_needs_incremental_state_invalid", false) \
	X(TM_STAT_FTRACE_BUNDLE_ERRORS, "ftrace_bundle_tokenizer_errors", false)                   \
	X(TM_STAT_TE_TOKENIZER_ERRORS, "track_event_tokenizer_errors", false)                      \
	X(TM_STAT_PROTO_TOKENIZER_ERRORS, "proto_tokenizer_errors", false)                         \
	X(TM_STAT_FTRACE_CPU_ENTRIES_BEGIN, "ftrace_cpu_entries_begin", false)                     \
	X(TM_STAT_FTRACE_BEFORE_START, "ftrace_packet_before_tracing_start", false)                \
	X(TM_STAT_PERF_TEXT_NO_FRAMES, "perf_text_importer_sample_no_frames", false)               \
	X(TM_STAT_ANDROID_LOG_NUM_FAILED, "android_log_num_failed", false)                         \
	X(TM_STAT_ANDROID_LOG_FORMAT_INVALID, "android_log_format_invalid", false)                 \
	X(TM_STAT_STRACE_PARSE_FAILURE, "strace_parse_failure", false)                             \
	X(TM_STAT_STRACE_UNSUPPORTED_TS, "strace_unsupported_timestamp_format", false)             \
	X(TM_STAT_STRACE_MISSING_PID, "strace_missing_pid", false)                                 \
	X(TM_STAT_PRIMES_MALFORMED_TS, "primes_malformed_timestamp", false)                        \
	X(TM_STAT_SLICE_NEGATIVE_DURATION, "slice_negative_duration", false)                       \
	X(TM_STAT_MISPLACED_END_EVENT, "misplaced_end_event", false)                               \
	X(TM_STAT_FUCHSIA_TS_OVERFLOW, "fuchsia_timestamp_overflow", false)                        \
	X(TM_STAT_FUCHSIA_READ_ERROR, "fuchsia_record_read_error", false)                          \
	X(TM_STAT_FUCHSIA_INVALID_EVENT, "fuchsia_invalid_event", false)                           \
	X(TM_STAT_FUCHSIA_INVALID_STRING_REF, "fuchsia_invalid_string_ref", false)                 \
	X(TM_STAT_FUCHSIA_INVALID_ARG_TYPE, "fuchsia_invalid_event_arg_type", false)

enum tm_stat_id {
#define TM_X_(id, name, is_drop) id,
	TM_STAT_LIST(TM_X_)
#undef TM_X_
	TM_STAT__COUNT
};
/* trace_processor's name ("unknown_stat" out of range; static). */
const char *tm_stat_name(enum tm_stat_id id);
/* True for the three stats summed into the dropped count. */
bool tm_stat_is_drop(enum tm_stat_id id);
/* True for the stats an event can be lost under: the one list of them
 * (report.c).  Every event the import does not keep (its conversion to
 * trace time fails, or it lands before zero) is counted once, under the
 * stat of its loss, in the report's missing figures: a second figure beside
 * trace_processor's dropped count, ours, which that count leaves out (an
 * unknown_target failure loses an event the dialog never counts).  A stat
 * of this list that a scanner counts on its own (a TM_OP_STAT op) counts
 * one missing event per unit. */
bool tm_stat_loses_events(enum tm_stat_id id);
/* True for the stats of that list that no merge causes or mends: the
 * recording's own losses, which trace_processor counts in any import of the
 * file, alone or merged (ftrace_packet_before_tracing_start).  Their events
 * are missing from the merged trace all the same (they stay in the missing
 * figures), but they do not make a report not ok (tm_report_missing_by_merge). */
bool tm_stat_is_recording_loss(enum tm_stat_id id);

struct tm_stat {
	enum tm_stat_id id;
	const char *name; /* trace_processor's stat name (static) */
	uint64_t value;
};
/* The value of stat id in a report's (or a report file's) list, 0 if absent. */
uint64_t tm_stat_value(const struct tm_stat *stats, size_t n_stats, enum tm_stat_id id);

struct tm_report_machine {
	uint32_t id;     /* machine.id */
	uint64_t raw_id; /* machine.raw_id (manifest names from 2^32) */
	char *name;      /* NULL when unnamed */
	uint32_t label_index; /* machine.label_index: 0 for raw_id 0, else the
			       * running count of rows with a non-zero raw_id */
	uint64_t dropped;     /* this machine's share of the dropped count */
};

struct tm_report_file {
	size_t member;     /* index into the session's members */
	const char *path;  /* borrowed from the member; NULL for the top level */
	enum tm_format format;
	uint64_t size;
	uint32_t order;
	bool is_hidden;
	bool is_predicted; /* false: format not scanned; its events are not predicted */
	bool is_trace;     /* a trace file (not a container, manifest or hidden) */
	bool is_untimed;   /* a format without a timeline (tm_format_has_timeline):
			    * predicted, with no events to drop */
	size_t n_machines;
	uint32_t *machines; /* machine table ids its events land on */
	size_t n_clocks;
	uint32_t *clocks;   /* builtin/seq clock ids seen in its snapshots or events */
	uint64_t events;    /* events pushed or dropped (trace_processor's pushes) */
	uint64_t dropped;   /* this file's share of the dialog's dropped count */
	/* ours: its events missing from the merged trace (tm_stat_loses_events),
	 * in all and by the stat of each loss (value: the events lost under it) */
	uint64_t missing;
	size_t n_missing_stats;
	struct tm_stat *missing_stats;
	bool has_ts;
	int64_t first_ts, last_ts; /* trace-time range of kept events */
	bool has_all_ts;
	int64_t all_first_ts, all_last_ts; /* the same, counting events dropped as
					    * negative (where they would have landed) */
	size_t n_stats;
	struct tm_stat *stats; /* non-zero stats attributed to this file */
	char *placement;   /* ours: how it is placed and why, one sentence (its
			    * block holds machines and clocks too) */
};

struct tm_report_event { /* only with keep_events (40 bytes: the list of a
			   * large input is tens of MB, written once per edit) */
	const char *name;
	int64_t ts;      /* trace time */
	int64_t dur;     /* -1 unknown/unfinished; only for slices */
	uint32_t file;   /* index into report files */
	uint32_t machine;
	char phase;      /* 'B','E','X','I','C',... or 0 */
	bool is_slice;   /* a slice as trace_processor's slice table would hold it */
	uint8_t drop;    /* 0, or the enum tm_stat_id that dropped it + 1 */
	uint8_t depth;   /* a slice's depth on its track (SliceTracker's: the
			  * slices open below it), 255 at most; else 0 */
	uint32_t track;  /* index into report tracks, TM_NO_TRACK: none (no detail kept) */
};
#define TM_NO_TRACK UINT32_MAX
_Static_assert(sizeof(void *) != 8 || sizeof(struct tm_report_event) == 40,
	       "struct tm_report_event grew");

/* A track of the merged trace (with keep_events): the events of one file on
 * one machine that share the scan's slice-stack key (a thread's stack, a
 * TrackEvent track uuid, an async or counter track: what trace_processor
 * puts on one track).  Numbered within its file in the order its first event
 * was imported, so the number stays while edits move the file. */
struct tm_report_track {
	uint32_t file;    /* index into report files */
	uint32_t machine; /* machine table id */
	uint32_t number;  /* 1-based within its file */
	char kind;        /* 's' slices, 'c' counter, 'i' instants, 'o' other events */
	uint64_t key;     /* the scan's slice-stack key */
	uint64_t n_events, n_dropped; /* of the report's list */
	/* What trace_processor names it (the scan's track names,
	 * tracknames.h): its process and thread ids (-1: none, or not a
	 * number), the track's own name (a TrackDescriptor's, an async or
	 * counter track's), its process's and thread's names; NULL: none.
	 * Raw texts from the trace: a front end escapes them. */
	int64_t pid, tid;
	const char *name, *process, *thread;
};

/* The name of the stat that dropped e, or NULL: kept. */
static inline const char *
tm_report_event_dropped(const struct tm_report_event *e)
{
	return e->drop ? tm_stat_name((enum tm_stat_id)(e->drop - 1)) : NULL;
}

struct tm_meta {
	char *key;
	bool is_int;
	int64_t ival;
	char *sval;
};

/* Ours: whether the trace files' time ranges (their kept events, in trace
 * time) overlap.  Nothing dropped says every event lands on the timeline,
 * not that the files were recorded together: files placed 10 days apart
 * drop nothing and share no moment. */
struct tm_overlap {
	size_t n_files;     /* trace files with kept events */
	bool overlap;       /* n_files >= 2 and all their ranges share a span */
	int64_t common_ns;  /* that span's length (overlap) */
	int64_t gap_ns;     /* !overlap: from the end of the file that ends
			     * first to the start of the one that starts last */
	int ends_first, starts_last; /* their report file indexes (-1: none) */
	char *text;         /* one sentence, or NULL when n_files < 2 */
};

struct tm_report {
	bool ok;          /* no manifest/content error and nothing dropped */
	char *error;      /* the text trace_processor's import fails with, or NULL */
	char *error_where; /* ours: the member and byte offset where it fails, or NULL */
	bool error_is_ours; /* error is tracemerge's own (a limit of ours, a read
			     * failure), not trace_processor's: not a prediction */
	bool error_in_manifest; /* error comes from the manifest (its parse, validation
				 * or apply, or a manifest rule a trace breaks), not
				 * from a trace's bytes, whatever its text quotes */
	char *hint;       /* ours: how to fix error, or NULL */
	uint64_t dropped; /* sum of the three stats the dialog and util merge report */
	/* ours: the events missing from the merged trace, in all and by the stat
	 * of each loss, sorted by name (tm_stat_loses_events; the files' sum) */
	uint64_t missing;
	size_t n_missing_stats;
	struct tm_stat *missing_stats;
	size_t n_stats;
	struct tm_stat *stats; /* every non-zero stat, summed over files, sorted by name */
	uint32_t tt_clock;     /* trace-time clock id */
	int tt_file;           /* index into files of the owner, -1 if none */
	int64_t tt_machine;    /* machine table id of the trace-time clock, -1 if none */
	char *tt_why;          /* ours: why that file owns the timeline */
	size_t n_machines;
	struct tm_report_machine *machines;
	size_t n_meta;
	struct tm_meta *meta;
	size_t n_files;
	struct tm_report_file *files;
	size_t n_events;
	struct tm_report_event *events;
	size_t n_tracks; /* the tracks the listed events are on (struct tm_report_event.track) */
	struct tm_report_track *tracks;
	/* the counter samples' values the scan kept, by event index
	 * ascending (tm_report_event_value) */
	size_t n_values;
	struct tm_report_value {
		uint32_t ev;
		double v;
	} *values;
	/* the engine's: the buffer of events (its room) and the session's
	 * spare-buffer pool tm_report_free gives it back to */
	size_t cap_events;
	struct tm_evpool *events_pool;
	bool is_complete;      /* every trace file's format is predicted */
	struct tm_overlap overlap; /* ours, beside the figures */
	size_t n_warnings;
	char **warnings;       /* ours: beyond trace_processor, never changes a number */
};

/* Evaluate manifest m (NULL: the input's own manifest, if any) against the
 * scanned members.  Members not yet scanned are scanned first (blocking).
 * With keep_events the report has the per-event list (tm_eval_opts.events).
 * Caller frees *out with tm_report_free. */
enum tm_status tm_session_evaluate(struct tm_session *s, const struct tm_manifest *m,
				   struct tm_report **out, struct tm_error *err) TM_WUR;
void tm_report_free(struct tm_report *r);

/* What one evaluation computes (tm_session_evaluate_ex). */
struct tm_eval_opts {
	/* The per-event list (report.events), in a session opened with
	 * keep_events: every event replayed one by one, linear in the events
	 * (~70 ms of CPU at 16 MiB; a session's later lists reuse the buffer
	 * of a freed one).  false: the numbers only (no events list),
	 * replayed over runs of events, in well under a frame at any size;
	 * every count, stat, range and the verdict are the same as with
	 * events (the same rules: test_replay_fast's summary_equals_events). */
	bool events;
	/* With events: list only the dropped events (what the workbench
	 * shows; kept events are most of a list and of its cost). */
	bool dropped_only;
	/* Set by another thread: the evaluation stops soon and returns
	 * TM_ERR_CANCELLED (no report). */
	volatile bool *cancel;
};
/* Evaluate manifest m as tm_session_evaluate does, but without scanning:
 * every member must be scanned already (TM_ERR_INVALID otherwise).  It
 * reads the session and changes nothing in it, so once scanned, an
 * evaluation with events may run on a thread of its own beside the
 * evaluations of the session's own thread (no rescan, close or other
 * change of the session meanwhile). */
enum tm_status tm_session_evaluate_ex(struct tm_session *s, const struct tm_manifest *m,
				      const struct tm_eval_opts *o, struct tm_report **out,
				      struct tm_error *err) TM_WUR;
/* tm_session_evaluate without the per-event list even when the session
 * keeps it: the numbers only, over the folded logs (what an edit and the
 * engine's own searches need: fixes, offsets, alignment). */
enum tm_status tm_session_eval_numbers(struct tm_session *s, const struct tm_manifest *m,
				       struct tm_report **out, struct tm_error *err) TM_WUR;
/* Whether the session keeps per-event details (tm_session_opts.keep_events). */
bool tm_session_keeps_events(const struct tm_session *s);

/* The verdict line: "N events would be dropped: ..." in the dialog's words
 * (with the events missing beside them when they differ), or, when nothing
 * is lost, "Nothing dropped" and whether the files' time ranges overlap
 * (tm_overlap; "Nothing dropped, but ... do not overlap" when they do not),
 * written into out. */
void tm_report_verdict(const struct tm_report *r, struct tm_buf *out);
/* The missing figure in words, as every view says it: "N events would be
 * missing from the merged trace (tracemerge): stat N, ..." (ours). */
void tm_report_missing_sentence(const struct tm_report *r, struct tm_buf *out);
/* The same of any figures (a file's: its dropped share, missing and
 * missing_stats), prefixed "trace_processor counts no dropped events, but "
 * when dropped is 0. */
void tm_missing_sentence(uint64_t dropped, uint64_t missing, const struct tm_stat *st, size_t n,
			 struct tm_buf *out);
/* True when the events missing are exactly the dropped count, stat by stat
 * (negative timestamps, no_path failures of one event each): then the
 * dropped count says it all and views need not show both. */
bool tm_report_missing_is_dropped(const struct tm_report *r);
/* The events missing from the merged trace that the merge loses: missing
 * less the recording's own losses (tm_stat_is_recording_loss).  A report is
 * ok only when this, the dropped count and the errors are nothing. */
uint64_t tm_report_missing_by_merge(const struct tm_report *r);
/* The report's trace files (is_trace) in processing order: their indexes
 * into r->files in *out (malloc'd; the caller frees it), their count
 * returned.  One pass (orders are distinct and below n_files + 1). */
size_t tm_report_files_in_order(const struct tm_report *r, size_t **out);
/* Ours: the report as markdown (the verdict, a table of the files in
 * processing order with their figures, drops and losses by stat, the
 * timeline's owner, warnings), for pasting into a bug: check --format md and
 * the workbench's :report.  Texts from the inputs are escaped for the
 * terminal and for markdown (report_md.c). */
void tm_report_markdown(const struct tm_session *s, const struct tm_report *r, struct tm_buf *out);

/* ------------------------------------------------------------------ */
/* The merged trace as views: the events in timeline order, per-track  */
/* indexes for drawing at any zoom (view.c)                            */
/* ------------------------------------------------------------------ */

/* Built once per evaluation from a report with its full events list
 * (tm_eval_opts.events, not dropped_only), which must outlive it; never
 * reads trace bytes.  Every query costs a few binary searches (counted by
 * TM_COUNT_WORK probes): what a frame costs depends on what is on screen,
 * not on the trace. */
/* "slices", "counter", "instants" or "events". */
const char *tm_track_kind_name(char kind);
/* A counter sample's value (a JSON C event's first numeric arg, an atrace
 * C's), false when the scan kept none. */
bool tm_report_event_value(const struct tm_report *r, size_t ev, double *out);
/* A track's identity as every view prints it: "FILE#N" (FILE the member's
 * path as the report has it, a loose input's base name; raw: a front end
 * escapes it), "-" for none (report_md.c). */
void tm_report_track_id(const struct tm_session *s, const struct tm_report *r, uint32_t track,
			struct tm_buf *out);
/* The report's tracks in the order a tracks view lists them: by file (in
 * the order their first tracks come), then machine, then the tracks of no
 * process by number, then each process by pid, its own tracks (no tid)
 * before its threads' by tid, then number.  n_tracks indexes into out. */
void tm_report_tracks_order(const struct tm_report *r, uint32_t *out);
/* What a track is called as trace_processor names it (raw: a front end
 * escapes it): a thread's track "THREAD TID" ("thread TID" unnamed), else
 * its own name, else its kind ("slices", ...). */
void tm_report_track_title(const struct tm_report *r, uint32_t track, struct tm_buf *out);
/* Its process, "PROCESS PID" ("process PID" unnamed); nothing when the
 * track has no process. */
void tm_report_track_process(const struct tm_report *r, uint32_t track, struct tm_buf *out);
struct tm_view;
struct tm_view *tm_view_build(const struct tm_report *r);
void tm_view_free(struct tm_view *v);
/* Listed events in timeline order: ts, then the order they were imported. */
size_t tm_view_n(const struct tm_view *v);
size_t tm_view_at(const struct tm_view *v, size_t pos);  /* event index at pos */
size_t tm_view_pos(const struct tm_view *v, size_t ev);  /* pos of event ev */
size_t tm_view_seek(const struct tm_view *v, int64_t ts); /* first pos with ts >= ts */
/* The next (dir > 0) or previous (dir < 0) dropped event's pos strictly
 * after/before pos (pos SIZE_MAX with dir > 0: the first), or SIZE_MAX. */
size_t tm_view_dropped_step(const struct tm_view *v, size_t pos, int dir);
size_t tm_view_n_dropped(const struct tm_view *v);
/* The events list's filter: every set field must match. */
struct tm_event_filter {
	const char *name;  /* substring of the name, ASCII case-insensitive; NULL any */
	int64_t file;      /* report file index, -1 any */
	int64_t machine;   /* machine table id, -1 any */
	bool dropped_only;
};
bool tm_event_matches(const struct tm_report *r, size_t ev, const struct tm_event_filter *f);
/* What one column of a track row holds: the events that start in
 * [t, t + step), and whether a slice that started earlier covers t. */
struct tm_view_cell {
	uint64_t n;        /* events starting in the column */
	uint64_t dropped;  /* of them, dropped */
	bool covered;      /* a slice begun before the column lasts into it */
	size_t first;      /* the first starting event (SIZE_MAX none), else the
			    * covering slice's (when covered) */
};
void tm_view_cells(const struct tm_view *v, uint32_t track, int64_t t0, int64_t step, size_t n_cols,
		   struct tm_view_cell *out);
/* Events of track in [t0, t1): the first one's index in the track's
 * time-ordered list and how many (tm_view_track_event reads them). */
size_t tm_view_track_n(const struct tm_view *v, uint32_t track);
size_t tm_view_track_seek(const struct tm_view *v, uint32_t track, int64_t ts);
size_t tm_view_track_event(const struct tm_view *v, uint32_t track, size_t k);
/* Nested slices: a track's events by depth (lanes), deeper ones than
 * TM_VIEW_DEPTHS - 1 on the last lane.  The lanes a track has (1 + its
 * deepest slice's depth, capped), and one lane's columns as
 * tm_view_cells gives the whole track's. */
#define TM_VIEW_DEPTHS 8u
/* The lane an event is drawn on: its slice depth, capped; 0 if no slice. */
unsigned tm_view_event_lane(const struct tm_report_event *e);
unsigned tm_view_track_depths(const struct tm_view *v, uint32_t track);
void tm_view_cells_depth(const struct tm_view *v, uint32_t track, unsigned depth, int64_t t0,
			 int64_t step, size_t n_cols, struct tm_view_cell *out);
/* A counter track's values' range (a sparkline's scale), false: none. */
bool tm_view_track_range(const struct tm_view *v, uint32_t track, double *lo, double *hi);
/* Alignment at a glance: the event of file other with ev's name nearest to
 * ev's time on the merged timeline (kept or dropped), or SIZE_MAX. */
size_t tm_view_nearest(const struct tm_view *v, size_t ev, uint32_t other);

/* ------------------------------------------------------------------ */
/* Offsets: one grammar, edits valid by construction (offset.c)        */
/* ------------------------------------------------------------------ */

/* The one offset grammar (batch --offset, the workbench prompts, align):
 *   [FILE[:CLOCK][[MACHINE]]=][OFFSET][@REF[:CLOCK][[MACHINE]]]
 * FILE's CLOCK is clocks.clock (a clock name, or PIN for a clockless file),
 * its [MACHINE] clocks.machine; REF's are sync_to.clock and sync_to.machine.
 * OFFSET as tm_parse_duration_ns (ref = file + offset).  Left out, each part
 * is chosen by tm_offset_apply.  Example: relay.pftrace[vm]=12ms@phone.pftrace */
struct tm_offset_side {
	char *file;    /* NULL: not named */
	bool has_clock;
	bool is_pin;   /* "PIN" named (source only) */
	uint32_t clock;
	char *machine; /* NULL: not named */
};
struct tm_offset_spec {
	struct tm_offset_side src, ref;
	bool has_offset;
	int64_t offset_ns;
	/* ours (the workbench's o and nudges): on a file with no clocks entry
	 * that is placed now (and does not own the timeline), offset_ns is a
	 * move from where it is placed: the entry's offset is the one that
	 * lands its events offset_ns later than now (tm_offset_result.moved). */
	bool from_here;
};
enum tm_status tm_offset_parse(const char *text, struct tm_offset_spec *out,
			       struct tm_error *err) TM_WUR;
void tm_offset_spec_fini(struct tm_offset_spec *sp);
/* An offset as the grammar above spells it, in the largest unit that keeps
 * it exact ("+10ms", "-1.234567ms", "+7ns", "0"): tm_parse_duration_ns
 * reads it back to the same nanoseconds. */
void tm_offset_format_ns(int64_t ns, struct tm_buf *b);

/* The clock member's timestamps are in, from what the scan saw (scans it if
 * needed): the proto's default clock (ClockSnapshot primary, else BOOTTIME),
 * the format's clock otherwise; TM_CLOCK_UNSET for clockless (TRACE_FILE)
 * formats, whose offsets are PINs. */
uint32_t tm_session_trace_clock(struct tm_session *s, size_t member);

/* True when no predicted number (error, drops, stats, every file's range,
 * machines, timeline owner) differs between two reports. */
bool tm_report_same_numbers(const struct tm_report *a, const struct tm_report *b);

struct tm_offset_result {
	bool has_m;
	struct tm_manifest m; /* cur with the edit */
	char *file, *ref;
	uint32_t clock, ref_clock; /* clocks.clock (UNSET = PIN), sync_to.clock */
	bool is_pin;
	int64_t offset_ns;
	/* from_here taken: the file's first event moved by moved_ns (what was
	 * asked, unless the clock path is not a plain shift) */
	bool from_here;
	int64_t moved_ns;
	char *how;     /* ours: the mode chosen and why, one sentence */
	char *verdict; /* the predicted verdict with m */
	char *inert;   /* ours: non-NULL when m changes no predicted number: why */
	char *idle;    /* ours: when not inert but the file's entry in m does
			* nothing (m's numbers equal those without the entry): why */
	/* The offer when the relation joins two files on one machine: put the
	 * file on a machine of its own (own_machine), own_m with it applied,
	 * own_verdict its predicted verdict, own_helps whether it is better
	 * than m (the offer is only made when true). */
	char *own_machine;
	char *own_why;
	struct tm_manifest own_m;
	char *own_verdict;
	bool own_ok, own_helps;
	/* The replays behind verdict and own_verdict (NULL when not made), for
	 * a caller that goes on with m or own_m; freed by the fini. */
	struct tm_report *report, *own_report;
};
/* Apply spec to cur (file: the file when the spec names none) and evaluate
 * the result.  Defaults: the reference kept from the entry, else the
 * timeline's owner, else the first other trace file; the file's clock kept,
 * else tm_session_trace_clock (RELATE; PIN only for clockless files); the
 * reference's clock from its scan.  Free with tm_offset_result_fini. */
enum tm_status tm_offset_apply(struct tm_session *s, const struct tm_manifest *cur,
			       const char *file, const struct tm_offset_spec *spec,
			       struct tm_offset_result *out, struct tm_error *err) TM_WUR;
void tm_offset_result_fini(struct tm_offset_result *r);
/* What a caller takes from r, its rules in one place.  offer: r offers a
 * machine of its own (made, and proven better than m).  take_own: the
 * caller takes that offer when made (the estimates, the fixes), else the
 * edit as asked (--offset, the workbench's o).  m: own_m when taken, else
 * r->m; report: its replay's slot in r (may hold NULL), for a caller that
 * takes the replay over.  inert: why m changes no predicted number, or
 * NULL; never said with own_m, which helps (r->inert is said of r->m). */
struct tm_offset_take {
	const struct tm_manifest *m;
	struct tm_report **report;
	const char *inert;
	bool own, offer;
};
struct tm_offset_take tm_offset_take(struct tm_offset_result *r, bool take_own);
/* The name of a machine of its own for path (the offer above, the fixes):
 * its base name without the extension, unique among m's machine names.
 * Caller frees. */
char *tm_own_machine_name(const struct tm_manifest *m, const char *path);

/* ------------------------------------------------------------------ */
/* Alignment: offsets from events (align.c)                            */
/* ------------------------------------------------------------------ */

/* "FILE:NAME[#N]=REF:NAME[#N][+D|-D]": the Nth (1-based, default 1)
 * event NAME in FILE happened at the same moment as the Nth REF:NAME, or D
 * before it.  N counts in time order among the first 128 occurrences of
 * the name the scan keeps (align_scan.h AL_OCC). */
struct tm_align_pair {
	char *file, *name, *ref, *ref_name;
	uint32_t occ, ref_occ;
	int64_t delta_ns; /* REF event = FILE event + delta */
};
enum tm_status tm_align_pair_parse(const char *text, struct tm_align_pair *out,
				   struct tm_error *err) TM_WUR;
void tm_align_pair_fini(struct tm_align_pair *p);

struct tm_align_opts {
	const struct tm_align_pair *pairs; /* declared pairs */
	size_t n_pairs;
	/* user name pairs "SEND=RECV": a SEND event in one file is received as
	 * the RECV event of the same occurrence in the other (one-way messages) */
	const char *const *msgs;
	size_t n_msgs;
};

enum tm_align_quality {
	TM_ALIGN_NONE = 0,     /* nothing in common with the reference */
	TM_ALIGN_DECLARED,     /* from declared pairs (exact by declaration) */
	TM_ALIGN_ACCURATE,     /* messages both ways: guaranteed bounds */
	TM_ALIGN_APPROXIMATE,  /* events both files saw "at once" (shared names, ids) */
	TM_ALIGN_ONE_SIDED,    /* messages one way only: one bound */
	TM_ALIGN_CONTRADICTORY, /* the messages admit no offset (nor linear drift) */
	TM_ALIGN_EXACT,        /* every pair gives the same offset: zero-width bounds */
	TM_ALIGN_WEAK          /* "not enough evidence": what both files carry could be
				* chance (too few independent names, ids or messages, pairs
				* that disagree, a shift far beyond the traces' lengths);
				* the offset is shown, never offered (tm_align_offerable) */
};
const char *tm_align_quality_name(enum tm_align_quality q);

struct tm_align_estimate {
	char *file, *ref;
	uint32_t clock, ref_clock; /* the clocks the offset relates (UNSET: PIN) */
	enum tm_align_quality quality;
	bool has_offset;
	int64_t offset_ns;         /* ref = file + offset, at mid_ts */
	int64_t mid_ts;            /* file time (own clock) the offset fits */
	bool has_lo, has_hi;
	int64_t lo_ns, hi_ns;      /* bounds on the offset at mid_ts */
	bool has_drift;
	double drift_ppm;          /* ref clock rate - file clock rate, parts per million */
	int64_t span_ns;           /* file time the pairs cover */
	int64_t drift_ns;          /* drift_ppm over span_ns: what one offset cannot hold */
	size_t n_to_ref, n_from_ref, n_same, n_declared; /* the evidence, by kind */
	size_t n_unusable;         /* samples not used: another machine or clock (evidence says) */
	size_t n_names;            /* distinct names behind n_same (independent evidence) */
	char *weak;                /* TM_ALIGN_WEAK: why the evidence is not enough (ours) */
	char *evidence;            /* ours: one sentence */
};

struct tm_align_result {
	size_t n;
	struct tm_align_estimate *est; /* one per trace file but the reference */
	char *timeline_ref;            /* the reference (timeline owner) */
};
/* Estimate offsets for every trace file against the timeline's owner under
 * cur (files named by declared pairs: against their pair's reference), from
 * what the scan kept; never reads trace bytes. */
enum tm_status tm_align_run(struct tm_session *s, const struct tm_manifest *cur,
			    const struct tm_align_opts *o, struct tm_align_result *out,
			    struct tm_error *err) TM_WUR;
void tm_align_result_fini(struct tm_align_result *r);
/* Whether an estimate may be offered as an edit (z, Z, S, fixes, align
 * --apply/--solve): it has an offset, and it is neither contradictory nor
 * "not enough evidence".  The one rule every front end asks. */
bool tm_align_offerable(const struct tm_align_estimate *e);
/* The estimate as an offset edit for tm_offset_apply (strings borrowed from
 * e: do not tm_offset_spec_fini it). */
void tm_align_offset_spec(const struct tm_align_estimate *e, struct tm_offset_spec *sp);

/* The estimate in words (ours), as `align` prints it: "+10 ms [accurate]
 * bounds +9 ms .. +11 ms", and the drift sentence (nothing without drift). */
void tm_align_describe(const struct tm_align_estimate *e, struct tm_buf *b);
void tm_align_drift_sentence(const struct tm_align_estimate *e, struct tm_buf *b);
/* A drift in ppm as every printer shows it: to 0.001, and one that rounds
 * to zero as 0.000, not -0.000. */
void tm_align_ppm_text(double ppm, struct tm_buf *b);

/* The events of file a pair can name (FILE:NAME#OCC), from what the scan
 * kept (scans it if needed): each kept occurrence with its time on the
 * file's own trace clock, sorted by time.  names_full: the scan kept only
 * the first AL_NAMES names. */
struct tm_align_event {
	char *name;
	uint32_t occ;    /* 1-based, as tm_align_pair's #N */
	int64_t ts;      /* on clock */
	uint64_t count;  /* occurrences of the name in the file */
	bool instant;
};
struct tm_align_events {
	size_t n;
	struct tm_align_event *v;
	uint32_t clock; /* the file's trace clock (UNSET: its own, clockless) */
	bool names_full;
};
enum tm_status tm_align_events(struct tm_session *s, const char *file, struct tm_align_events *out,
			       struct tm_error *err) TM_WUR;
void tm_align_events_fini(struct tm_align_events *ev);

/* The estimator itself (tests): pairs (t_i, d_i) where d = ref time - file
 * time; kind 1 = a message file->ref (offset <= d), 2 = ref->file
 * (offset >= d), 0 = the same moment.  Fills quality, offset, bounds, drift. */
struct tm_align_obs {
	int64_t t, d;
	int kind;
};
void tm_align_solve(const struct tm_align_obs *obs, size_t n, struct tm_align_estimate *e);

/* Fixes, proven before they are offered (fixes.c): each candidate edit is
 * evaluated, and only those after which the import does not fail and fewer
 * events are dropped are returned, best first (nothing dropped first). */
struct tm_fix {
	char *file;          /* the file it is for */
	char *what;          /* ours: the edit as CONFIG options (--offset/--machine) */
	char *why;           /* ours: one sentence */
	struct tm_manifest m; /* the manifest with the fix applied */
	char *verdict;       /* the predicted verdict with m */
	bool ok;             /* nothing dropped, nothing fails */
	uint64_t dropped;
	struct tm_report *report; /* the replay of m (freed by tm_fixes_fini) */
};
struct tm_fixes {
	size_t n;
	struct tm_fix *v;
};
/* For file (NULL: every file that drops events, or that the manifest
 * configures when the import fails) under cur.  known: the report of cur
 * the caller already has (NULL: evaluated here). */
enum tm_status tm_fixes_suggest(struct tm_session *s, const struct tm_manifest *cur,
				const struct tm_report *known, const char *file, struct tm_fixes *out, struct tm_error *err) TM_WUR;
void tm_fixes_fini(struct tm_fixes *f);

/* Solve: a whole configuration from cur under which nothing is dropped and
 * nothing fails: the offsets the events give (each kept only if it does not
 * make the prediction worse, with a machine of its own where the edit proves
 * one), then proven fixes, best first.  steps say what was done (ours);
 * unplaced, when !ok, names the files that still drop and why. */
struct tm_solution {
	bool has_m;
	struct tm_manifest m;
	size_t n_steps;
	char **steps;
	char *verdict;
	bool ok;
	char *unplaced;
};
enum tm_status tm_solve(struct tm_session *s, const struct tm_manifest *cur,
			struct tm_solution *out, struct tm_error *err) TM_WUR;
void tm_solution_fini(struct tm_solution *so);
/* A line diff of two texts (a manifest before and after): each line of the
 * result starts with '-' (removed), '+' (added) or ' ' (kept). */
void tm_line_diff(const char *a, const char *b, struct tm_buf *out);

/* ------------------------------------------------------------------ */
/* Writing the merged TAR                                              */
/* ------------------------------------------------------------------ */

struct tm_write_opts {
	bool reproducible; /* mtime 0, uid/gid 0, owner names empty */
	bool replace;      /* out_path may be replaced (tm_output: asked, or --force) */
	unsigned *n_stale; /* out, when set: stale temp files removed (tm_output) */
	int64_t mtime;     /* used when not reproducible; 0 = now */
	volatile bool *cancel;
	void (*progress)(void *ud, uint64_t done, uint64_t total);
	void *progress_ud;
};

/* The checks `trace_processor util merge` makes before it writes a byte
 * (src/trace_processor/shell/util_subcommand.cc: RunMerge and
 * CheckManifestPaths; util/tar_writer.cc: ValidateFilename), on the members
 * tm_merge_write would write, plus one note of ours.  Cheap (no scan): call
 * it as soon as a session is opened and after every manifest edit, so every
 * front end shows the same verdict on a file's row.  For an archive input
 * (which util merge cannot repack) only the manifest-path rule applies. */
enum tm_pack_rule {
	TM_PACK_DUP_NAME,      /* two inputs share a base name (RunMerge) */
	TM_PACK_NAME_EMPTY,    /* an input's base name is empty (ValidateFilename) */
	TM_PACK_NAME_TOO_LONG, /* a base name longer than 99 bytes (ValidateFilename) */
	TM_PACK_MANIFEST_PATH, /* a files[].path names no input (CheckManifestPaths) */
	TM_PACK_HIDDEN,        /* ours: a hidden name; the import skips it, and
				* tm_merge_write leaves it out */
};
struct tm_pack_issue {
	enum tm_pack_rule rule;
	bool is_ours;  /* a tracemerge note; util merge would write the archive */
	size_t member; /* the session member concerned, SIZE_MAX for a manifest entry */
	size_t entry;  /* the manifest files[] index (TM_PACK_MANIFEST_PATH), else SIZE_MAX */
	char *msg;     /* util merge's own text (with its "merge: " prefix), or ours */
};
struct tm_pack_check {
	size_t n;
	struct tm_pack_issue *issues; /* in util merge's order: names, then the manifest */
};
/* m: the manifest that would be written (NULL: none). */
void tm_pack_check(const struct tm_session *s, const struct tm_manifest *m,
		   struct tm_pack_check *out);
void tm_pack_check_fini(struct tm_pack_check *c);
/* util merge's refusal: its first issue that is not ours, or NULL. */
const struct tm_pack_issue *tm_pack_refusal(const struct tm_pack_check *c);
/* The first issue about member i (NULL: none), for its row. */
const struct tm_pack_issue *tm_pack_issue_of(const struct tm_pack_check *c, size_t member);

/* Write out_path as a ustar TAR: the manifest first as perfetto_manifest.json
 * (omitted when m is NULL or trivial), then every trace file streamed from its
 * source (loose files by base name; an archive's non-hidden regular members by
 * their names).  out_path under tm_output's rules, the session's inputs
 * never written over.  Errors name the file and the offset. */
enum tm_status tm_merge_write(struct tm_session *s, const struct tm_manifest *m,
			      const char *out_path, const struct tm_write_opts *opts,
			      struct tm_error *err) TM_WUR;

/* The one rule for every file tracemerge writes (engine/output.c): the
 * merged TAR, a saved or solved manifest, a recovery file.
 *  - Never one of inputs (the same device and inode: also through symlinks,
 *    "../" paths and hard links), never a directory, device, FIFO or socket
 *    (e.g. a link to /proc/self/fd/1): TM_ERR_INVALID, whatever replace says.
 *  - An existing regular file only with replace set (the user was asked, or
 *    gave --force): TM_ERR_EXISTS otherwise.  A symlink to a regular file is
 *    written through (the link stays), resolved once: the file checked is
 *    the file written.  Private state never follows one: the link itself
 *    is replaced.
 *  - Atomic: a hidden temp file beside it (".NAME.tmp-XXXXXX", locked while
 *    it is written), fsync, rename, directory fsync; on failure the path is
 *    untouched and err says why (errno in sys_errno).
 *  - A new file gets 0666 less the umask (0600 with private_file); a
 *    replaced file keeps its mode, and its owner where allowed.
 *  - Temp files of that naming beside it that no writer holds (a write
 *    killed by SIGKILL or a file size limit) are removed; n_stale counts
 *    them, for the front end to say so. */
struct tm_output {
	const char *const *inputs; /* the session's trace inputs */
	size_t n_inputs;
	bool replace;      /* an existing regular file may be replaced */
	bool private_file; /* 0600 whatever the umask, no symlink followed (recovery files) */
	unsigned n_stale;  /* out: stale temp files removed (added to) */
};
/* TM_OK when path may be written under o's rules (NULL: no inputs, no
 * replacing); the refusal otherwise.  The front ends ask with this first
 * (TM_ERR_EXISTS: "replace it?"), then write with replace set. */
enum tm_status tm_output_check(const char *path, const struct tm_output *o,
			       struct tm_error *err) TM_WUR;
/* Write data to path under o's rules (tm_output_check first). */
enum tm_status tm_write_atomic(const char *path, const void *data, size_t len,
			       struct tm_output *o, struct tm_error *err) TM_WUR;
/* The one whole-file reader (manifests, recovery files, the editor's
 * result): path's bytes, NUL-terminated, *len set; the caller frees.  A file
 * longer than max fails with TM_ERR_LIMIT naming the path, unless head is
 * set: then its first max bytes are returned (for sniffing).  Pipes and
 * FIFOs are read to their end too.  NULL with err set on failure. */
char *tm_read_file(const char *path, size_t max, bool head, size_t *len, struct tm_error *err);

/* ------------------------------------------------------------------ */
/* Demo                                                                */
/* ------------------------------------------------------------------ */

/* Write the built-in demo traces into dir (created if needed); *paths_out
 * receives a NULL-terminated array of file paths (caller frees each and the
 * array). */
enum tm_status tm_demo_write(const char *dir, char ***paths_out, struct tm_error *err) TM_WUR;

#ifdef __cplusplus
}
#endif
#endif

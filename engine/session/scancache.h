/* SPDX-License-Identifier: MIT */
/* Saved scans (scancache.c): an input file's scan kept on disk, written and
 * read as a struct tm_scanfile, which the session fills from its members
 * and folds back into them (session_cache.c).  The cache knows files,
 * listings and scans, not the session. */
#ifndef TM_SCANCACHE_H
#define TM_SCANCACHE_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "input.h"
#include "internal.h"
#include "scan.h"

/* A cache directory, opened and checked once. */
struct tm_scancache {
	char *dir;  /* NULL: no cache (none asked, or the directory was refused) */
	int dfd;    /* the directory, checked; -1: not open */
	char *note; /* the last thing to say about the cache, NULL: nothing */
};

/* What a saved scan depends on beside the file: the options that change
 * what a scan keeps, and whether the input was one of several. */
struct tm_scankey {
	struct tm_file_id id; /* tm_input_file_id: taken before reading */
	bool keep_events, plain_replay, loose;
};

/* One member of an input file: its listing, compared on loading (a saved
 * scan stands only for the same listing), and what its scan found. */
struct tm_scanfile_member {
	const struct tm_member *mb; /* the listing as it is now */
	uint64_t list_size;         /* mb's size as listed (before its scan) */
	uint64_t parent;            /* its parent's index in the file, UINT64_MAX: none */
	bool top;                   /* a loose input itself: name and index are the argument's */
	/* the outcome: what is saved, or what a load read (owned by the caller
	 * once loaded; the scan's log reads its runs from the cache file) */
	uint64_t size;
	char *error;
	struct tm_scan *scan; /* NULL: none */
};

/* One input file's saved scan: what the cache writes and reads. */
struct tm_scanfile {
	const struct tm_input *in; /* the input, asked whether it changed meanwhile */
	size_t path;               /* the input path's index in it */
	struct tm_scankey key;
	const char *file; /* the cache file (tm_scancache_file) */
	size_t n;
	struct tm_scanfile_member *m; /* in member order */
};

/* dir's cache opened (dir NULL or empty: none); a directory that is not the
 * user's or that others may write is refused, with a note. */
void tm_scancache_open(struct tm_scancache *c, const char *dir);
void tm_scancache_close(struct tm_scancache *c);
/* The cache file of key (the caller frees). */
char *tm_scancache_file(const struct tm_scancache *c, const struct tm_scankey *key);
/* Whether path has a saved scan under its identity now (header and key
 * only: what tm_scancache_load checks first). */
bool tm_scancache_has(const struct tm_scancache *c, const char *path,
		      const struct tm_scankey *key);
/* f's saved scan read into f->m[].size, error and scan (true), after every
 * check of it; false when there is none that stands for f's listing (a
 * damaged one ignored with a note). */
bool tm_scancache_load(struct tm_scancache *c, struct tm_scanfile *f);
/* f written to its cache file (true), then the least recently used files
 * removed until the directory holds at most cap bytes; not written when
 * the input changed meanwhile (tm_input_unchanged), nor when larger than
 * cap (with a note). */
bool tm_scancache_save(struct tm_scancache *c, const struct tm_scanfile *f, uint64_t cap);
/* Seconds within which a change makes an input "racy" (not saved); tests
 * set it negative to save files they just wrote. */
extern int tm_scancache_racy_s;
/* The bytes of a saved scan read or written at a time (64 KiB; a longer
 * value read grows the buffer); tests set it small to go through every
 * refill and flush of it. */
extern size_t tm_scancache_io_buf;
/* A test's hook (NULL but in tests): called with 0 once the inputs are
 * listed (a tar.gz's members scanned while listing), before any saved
 * scan is loaded, and with 1 before the session's scans are saved, so that
 * a test can change an input at either point. */
extern void (*tm_scancache_test_hook)(int stage);
/* The checksum of a saved scan's payload (its header's bytes 24-31). */
uint64_t tm_scancache_hash(const void *p, size_t n);

#endif

/* SPDX-License-Identifier: MIT */
/* Saved scans (scancache.c): the session's scans kept on disk per input. */
#ifndef TM_SCANCACHE_H
#define TM_SCANCACHE_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "input.h"
#include "internal.h"

struct tm_session;

/* One input: its members and what happened to its saved scan. */
struct tm_cache_group {
	size_t path;      /* index into in.paths */
	size_t *members;  /* session member indexes, in member order */
	size_t n;
	uint64_t *list_size; /* each member's size as listed (before its scan) */
	bool have_key, loaded, saved;
	struct tm_file_id key; /* tm_input_file_id: taken before reading */
	bool racy; /* changed within tm_scancache_racy_s of the opening: not saved */
	char *file;       /* the cache file's path */
};

/* First of all (before listing): the cache directory opened and checked
 * (ours, not writable by others; else refused with a note); does nothing
 * without opts.cache_dir. */
void tm_scancache_begin(struct tm_session *s);
/* After listing: load the saved scan of every unchanged input (its members
 * are then scanned); does nothing without a cache directory. */
void tm_scancache_open(struct tm_session *s);
/* Before listing: whether every input has a saved scan under its current
 * key (a load is then likely; scanning members while listing would be
 * wasted).  A load that fails after all leaves the members to the scan. */
bool tm_scancache_expected(const struct tm_session *s, const char *const *paths, size_t n);
/* After scanning: save each input whose members are all scanned (once). */
void tm_scancache_save(struct tm_session *s);
void tm_scancache_fini(struct tm_session *s);
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

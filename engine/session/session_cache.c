/* SPDX-License-Identifier: MIT */
/*
 * The session's saved scans (session.h): its members grouped by input
 * file, each group handed to the scan cache as one struct tm_scanfile
 * (scancache.h) to load or save, and what a load read back folded into the
 * session's members and scans.  The cache knows files, listings and
 * scans; this file knows the session.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "scancache.h"
#include "session.h"

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

/* What s's saved scans depend on beside the file. */
static struct tm_scankey
key_of_session(const struct tm_session *s, bool loose)
{
	return (struct tm_scankey){.keep_events = s->opts.keep_events,
				   .plain_replay = s->opts.plain_replay,
				   .loose = loose};
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
	for (size_t k = 0; k < np; k++) {
		struct tm_cache_group *g = &s->cache[k];
		g->path = k;
		int64_t taken = 0;
		g->have_key = g->n && tm_input_file_id(&s->in, k, &g->key, &taken);
		/* against the time the key was taken: a change after it within
		 * the same tick would not show */
		g->racy = g->key.mtime_s >= taken - tm_scancache_racy_s ||
			  g->key.ctime_s >= taken - tm_scancache_racy_s;
		if (g->have_key) {
			struct tm_scankey key = key_of_session(s, s->in.is_loose);
			key.id = g->key;
			g->file = tm_scancache_file(&s->scache, &key);
		}
	}
}

/* Group g as the cache sees it: its members' listing (and, saving, what
 * their scans found); free f->m. */
static void
scanfile_of(const struct tm_session *s, const struct tm_cache_group *g, struct tm_scanfile *f)
{
	*f = (struct tm_scanfile){.in = &s->in, .path = g->path,
				  .key = key_of_session(s, s->in.is_loose), .file = g->file,
				  .n = g->n, .m = xcalloc(g->n + 1, sizeof *f->m)};
	f->key.id = g->key;
	for (size_t k = 0; k < g->n; k++) {
		const struct tm_member *mb = &s->in.members[g->members[k]];
		struct tm_scanfile_member *m = &f->m[k];
		m->mb = mb;
		m->list_size = g->list_size[k];
		/* a loose input's name and position are the argument's */
		m->top = s->in.is_loose && mb->parent == 0;
		/* the parent as an index into the group, or UINT64_MAX */
		m->parent = UINT64_MAX;
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
				m->parent = lo;
		}
	}
}

/* What a load read back (f) put in place of g's members' scans. */
static void
use_loaded(struct tm_session *s, const struct tm_cache_group *g, const struct tm_scanfile *f)
{
	for (size_t k = 0; k < g->n; k++) {
		size_t i = g->members[k];
		struct tm_member *mb = &s->in.members[i];
		mb->size = f->m[k].size;
		free(mb->error);
		mb->error = f->m[k].error;
		if (s->scans[i]) { /* scanned while listing (a tar.gz) */
			tm_scan_fini(s->scans[i]);
			free(s->scans[i]);
		}
		s->scans[i] = f->m[k].scan;
		if (s->scans[i])
			tm_session_fold_scan(s, s->scans[i]);
		atomic_store(&s->progress[i], mb->size != UINT64_MAX ? mb->size : 0);
		atomic_store(&s->is_scanned[i], true);
	}
}

void
tm_session_cache_begin(struct tm_session *s)
{
	tm_scancache_open(&s->scache, s->opts.cache_dir);
	s->opts.cache_dir = NULL; /* the caller's: s->scache.dir from here on */
}

bool
tm_session_cache_expected(const struct tm_session *s, const char *const *paths, size_t n)
{
	if (!s->scache.dir || s->scache.dfd < 0 || s->opts.cache_refresh || !n)
		return false;
	struct tm_scankey key = key_of_session(s, n > 1);
	for (size_t i = 0; i < n; i++)
		if (!tm_scancache_has(&s->scache, paths[i], &key))
			return false;
	return true;
}

void
tm_session_cache_open(struct tm_session *s)
{
	if (tm_scancache_test_hook)
		tm_scancache_test_hook(0);
	if (!s->scache.dir)
		return;
	groups_make(s);
	for (size_t k = 0; k < s->n_cache; k++) {
		struct tm_cache_group *g = &s->cache[k];
		/* the listing read the file the key names, unchanged: else a
		 * saved scan of it could stand for other bytes */
		if (!g->have_key || s->opts.cache_refresh || !tm_input_unchanged(&s->in, k))
			continue;
		struct tm_scanfile f;
		scanfile_of(s, g, &f);
		if (tm_scancache_load(&s->scache, &f)) {
			use_loaded(s, g, &f);
			g->loaded = true;
			s->cache_loaded++;
		}
		free(f.m);
	}
}

void
tm_session_cache_save(struct tm_session *s)
{
	uint64_t cap = s->opts.cache_max_bytes ? s->opts.cache_max_bytes : TM_CACHE_MAX_DEFAULT;
	if (tm_scancache_test_hook)
		tm_scancache_test_hook(1);
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
		if (io) {
			g->saved = true;
			continue;
		}
		if (!done)
			continue;
		struct tm_scanfile f;
		scanfile_of(s, g, &f);
		for (size_t j = 0; j < g->n; j++) {
			size_t i = g->members[j];
			f.m[j].size = s->in.members[i].size;
			f.m[j].error = s->in.members[i].error;
			f.m[j].scan = s->scans[i];
		}
		if (tm_scancache_save(&s->scache, &f, cap)) {
			g->saved = true;
			s->cache_saved++;
		}
		free(f.m);
	}
}

void
tm_session_cache_fini(struct tm_session *s)
{
	for (size_t k = 0; k < s->n_cache; k++) {
		free(s->cache[k].members);
		free(s->cache[k].list_size);
		free(s->cache[k].file);
	}
	free(s->cache);
	s->cache = NULL;
	s->n_cache = 0;
	tm_scancache_close(&s->scache);
}

void
tm_session_cache_info(const struct tm_session *s, struct tm_cache_info *out)
{
	out->loaded = s->cache_loaded;
	out->saved = s->cache_saved;
	out->note = s->scache.note;
}

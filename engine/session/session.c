/* SPDX-License-Identifier: MIT */
/*
 * Sessions: open inputs (archive.c), parse manifest members, scan each trace
 * member once (scan_*.c), evaluate manifests by replaying the import over
 * what the scans kept (replay.c, report.c), and write the merged TAR.
 */
#include "session.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manifest_internal.h"
#include "replay_state.h"
#include "oplog.h"
#include "align_scan.h"

/* A manifest is buffered whole by trace_processor too; ours are tiny.  The
 * cap keeps a hostile "manifest" member from eating memory. */
#define MAX_MANIFEST_BYTES (16u << 20)

static void
read_manifest(struct tm_session *s, size_t i)
{
	struct tm_manifest_slot *sl = s->manifests[i] = xcalloc(1, sizeof *sl);
	struct tm_stream *st = NULL;
	struct tm_buf b;
	tm_buf_init(&b);
	tm_manifest_init(&sl->m);
	if (tm_stream_open(&s->in, i, &st, &sl->err) != TM_OK)
		goto out;
	for (;;) {
		const uint8_t *p;
		size_t n;
		if (tm_stream_next(st, &p, &n, &sl->err) != TM_OK)
			goto out;
		if (!n)
			break;
		if (b.len + n > MAX_MANIFEST_BYTES) {
			tm_error_set(&sl->err, TM_ERR_LIMIT, "%s: manifest larger than %u MiB",
				     s->in.members[i].name ? s->in.members[i].name : "input",
				     MAX_MANIFEST_BYTES >> 20);
			goto out;
		}
		tm_buf_add(&b, p, n);
	}
	tm_manifest_fini(&sl->m);
	sl->apply_stage = false;
	sl->is_ok = tm_manifest_parse_keep(b.data ? b.data : "", b.len, s->in.members[i].name,
					   &sl->m, &sl->err, &sl->apply_stage) == TM_OK;
	sl->text_len = b.len;
	tm_buf_addc(&b, 0); /* NUL-terminated for front ends; not counted */
	sl->text = tm_buf_steal(&b);
out:
	tm_stream_close(st);
	tm_buf_fini(&b);
}

/* Room for n members in the per-member scan arrays (new entries zero). */
static void
scans_grow(struct tm_session *s, size_t n)
{
	if (n <= s->cap_scans)
		return;
	/* doubled while members come one at a time (visit_scan), else
	 * exactly n: a listed archive asks once for all its members, and
	 * the new entries are zeroed (touched) up to the capacity */
	size_t nc = s->cap_scans ? s->cap_scans * 2 : 16;
	if (nc < n)
		nc = n;
	s->scans = xrealloc(s->scans, nc * sizeof *s->scans);
	s->progress = xrealloc((void *)(uintptr_t)s->progress, nc * sizeof *s->progress);
	s->is_scanned = xrealloc((void *)(uintptr_t)s->is_scanned, nc * sizeof *s->is_scanned);
	size_t k = nc - s->cap_scans;
	memset(s->scans + s->cap_scans, 0, k * sizeof *s->scans);
	memset((void *)(uintptr_t)(s->progress + s->cap_scans), 0, k * sizeof *s->progress);
	memset((void *)(uintptr_t)(s->is_scanned + s->cap_scans), 0, k * sizeof *s->is_scanned);
	s->cap_scans = nc;
}

static enum tm_status scan_stream(struct tm_session *s, size_t i, struct tm_stream *stm,
				  volatile bool *cancel, bool *rerr, struct tm_error *err);

/* Scanning while listing (tm_input_open_visit): a member of a TAR inside
 * gzip/zstd/deflate, read by its scan as the listing walks past it, so the
 * container is decompressed once instead of once to list it and once more
 * to scan it. */
static enum tm_status
visit_scan(void *ud, size_t i, struct tm_stream *st, struct tm_error *err)
{
	struct tm_session *s = ud;
	s->visit_scans++;
	scans_grow(s, i + 1);
	return scan_stream(s, i, st, s->opts.cancel, NULL, err);
}

static void
visit_drop(void *ud, size_t i)
{
	struct tm_session *s = ud;
	if (s->scans[i]) {
		tm_scan_fini(s->scans[i]);
		free(s->scans[i]);
		s->scans[i] = NULL;
	}
	atomic_store(&s->is_scanned[i], false);
	atomic_store(&s->progress[i], 0);
}

static bool is_scannable(const struct tm_member *mb);

/* member_ix's names: the members' own (ctx: the session). */
static const char *
member_name_of(const void *ctx, size_t i, size_t *len)
{
	const struct tm_member *mb = &((const struct tm_session *)ctx)->in.members[i];
	*len = mb->name_len;
	return mb->name;
}

enum tm_status
tm_session_open(struct tm_session **out, const char *const *paths, size_t n_paths,
		const struct tm_session_opts *opts, struct tm_error *err)
{
	*out = NULL;
	if (n_paths == 0) {
		tm_listing_finish(opts ? opts->listing : NULL);
		return tm_error_set(err, TM_ERR_INVALID, "no input files");
	}
	struct tm_session *s = xcalloc(1, sizeof *s);
	if (opts)
		s->opts = *opts;
	tm_session_cache_begin(s);
	/* no scanning while listing what a saved scan will replace */
	struct tm_visit v = {visit_scan, visit_drop, s};
	enum tm_status st = tm_input_open_visit(&s->in, paths, n_paths, s->opts.cancel,
						s->opts.list_budget,
						tm_session_cache_expected(s, paths, n_paths) ? NULL : &v,
						s->opts.listing, err);
	if (st != TM_OK) {
		tm_listing_finish(s->opts.listing);
		for (size_t i = 0; i < s->cap_scans; i++)
			if (s->scans[i]) {
				tm_scan_fini(s->scans[i]);
				free(s->scans[i]);
			}
		free(s->scans);
		free((void *)(uintptr_t)s->progress);
		free((void *)(uintptr_t)s->is_scanned);
		tm_session_cache_fini(s);
		free(s);
		return st;
	}
	size_t n = s->in.n_members;
	scans_grow(s, n + 1);
	/* Scanned while listing but never processed (after a fatal error of
	 * the container): trace_processor never parses it. */
	for (size_t i = 0; i < n; i++)
		if (s->scans[i] && !is_scannable(&s->in.members[i])) {
			if (s->scans[i]->failed) { /* the error was the scan's */
				free(s->in.members[i].error);
				s->in.members[i].error = NULL;
			}
			visit_drop(s, i);
			atomic_store(&s->is_scanned[i], true);
		}
	s->manifests = xcalloc(n, sizeof *s->manifests);
	s->first_manifest = SIZE_MAX;
	for (size_t k = 0; k < s->in.n_proc; k++) {
		size_t i = s->in.proc[k];
		if (s->in.members[i].format != TM_FMT_MANIFEST)
			continue;
		read_manifest(s, i);
		if (s->first_manifest == SIZE_MAX)
			s->first_manifest = i;
	}
	s->member_ix.name_of = member_name_of;
	s->member_ix.ctx = s;
	for (size_t i = 1; i < n; i++) {
		const struct tm_member *mb = &s->in.members[i];
		/* the whole name only: a GNU long name may hold a NUL, and a
		 * name looked up is a C string */
		if (mb->name && !mb->is_hidden && strlen(mb->name) == mb->name_len)
			tm_ixmap_put(&s->member_ix, mb->name, mb->name_len, i, NULL);
	}
	tm_session_cache_open(s);
	if (s->opts.keep_events)
		s->evpool = tm_evpool_new();
	tm_listing_finish(s->opts.listing);
	s->opts.listing = NULL; /* the caller's: not used after the open */
	*out = s;
	return TM_OK;
}

void
tm_session_close(struct tm_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->in.n_members; i++) {
		if (s->scans[i]) {
			tm_scan_fini(s->scans[i]);
			free(s->scans[i]);
		}
		if (s->manifests[i]) {
			tm_manifest_fini(&s->manifests[i]->m);
			free(s->manifests[i]->text);
			free(s->manifests[i]);
		}
	}
	free(s->scans);
	free((void *)(uintptr_t)s->progress);
	free((void *)(uintptr_t)s->is_scanned);
	free(s->manifests);
	tm_ixmap_fini(&s->member_ix);
	tm_session_cache_fini(s);
	tm_input_close(&s->in);
	tm_evpool_unref(s->evpool);
	free(s);
}

bool
tm_session_is_loose(const struct tm_session *s)
{
	return s->in.is_loose;
}

size_t
tm_session_n_members(const struct tm_session *s)
{
	return s->in.n_members;
}

const struct tm_member *
tm_session_member(const struct tm_session *s, size_t i)
{
	return i < s->in.n_members ? &s->in.members[i] : NULL;
}

void
tm_session_member_label(const struct tm_session *s, size_t i, struct tm_buf *out)
{
	if (i < s->in.n_members)
		tm_member_label(&s->in, i, out);
}

long
tm_session_member_by_name(const struct tm_session *s, const char *name)
{
	size_t i;

	if (!name || !tm_ixmap_get(&s->member_ix, name, strlen(name), &i))
		return -1;
	return (long)i;
}

const char *
tm_session_fatal(const struct tm_session *s, const char **where)
{
	if (where)
		*where = s->in.fatal ? s->in.fatal_where : NULL;
	return s->in.fatal;
}

const struct tm_manifest *
tm_session_manifest(const struct tm_session *s, const struct tm_error **err_out)
{
	if (err_out)
		*err_out = NULL;
	if (s->first_manifest == SIZE_MAX)
		return NULL;
	const struct tm_manifest_slot *sl = s->manifests[s->first_manifest];
	if (!sl->is_ok) {
		if (err_out)
			*err_out = &sl->err;
		return NULL;
	}
	return &sl->m;
}

static bool
is_scannable(const struct tm_member *mb)
{
	return !mb->is_hidden && mb->order != UINT32_MAX && tm_format_is_predicted(mb->format);
}

/* Scan member i from stm (opened here when NULL; closed here).  *rerr:
 * whether the member's stream failed with our own (read) error. */
static enum tm_status
scan_stream(struct tm_session *s, size_t i, struct tm_stream *stm, volatile bool *cancel,
	    bool *rerr, struct tm_error *err)
{
	struct tm_member *mb = &s->in.members[i];
	struct tm_scan *sc;
	struct tm_scan_ctl ctl = {.keep_events = s->opts.keep_events, .cancel = cancel,
				   .progress = &s->progress[i]};
	struct tm_error e;
	enum tm_status st;
	uint64_t delivered;
	bool own = !stm;
	struct tm_stream_end end = {0};
	for (int pass = 0;; pass++) {
		sc = xcalloc(1, sizeof *sc);
		tm_scan_init(sc, mb->format);
		sc->log.use_runs = tm_session_wants_runs(s) && !s->opts.keep_events;
		tm_error_clear(&e);
		/* the first pass reads a gzip/zstd member as it is decompressed,
		 * before it is known to be handed over (tm_stream_open_scan) */
		st = !own ? TM_OK
		     : pass == 0 ? tm_stream_open_scan(&s->in, i, &stm, &e)
		     : end.known ? tm_stream_open_known(&s->in, i, &end, &stm, &e)
				 : tm_stream_open(&s->in, i, &stm, &e);
		tm_scanner *scan = tm_format_scanner(mb->format);
		if (st == TM_OK && scan)
			st = scan(stm, sc, &ctl, &e);
		delivered = stm ? tm_stream_offset(stm) : 0;
		bool again = own && pass == 0 && stm && st != TM_ERR_CANCELLED &&
			     tm_stream_refuted(stm, &end);
		tm_stream_close(stm);
		stm = NULL;
		if (!again)
			break;
		/* The stream failed before the end of what was scanned: bytes
		 * trace_processor never parses were read.  Again, up to the
		 * failure's last hand-over (or verified first). */
		tm_scan_fini(sc);
		free(sc);
		atomic_store(&s->progress[i], 0);
	}
	if (st != TM_OK && st != TM_ERR_CANCELLED && e.tp[0]) {
		/* trace_processor fails here too: after this member's events, with
		 * its own text (our context stays in the member's error). */
		tm_oplog_fatal(&sc->log, 0, e.tp, delivered);
		free(mb->error);
		mb->error = xstrdup(e.msg);
		st = TM_OK;
	}
	tm_oplog_finish(&sc->log);
	tm_al_trim(sc->align);
	if (st == TM_OK)
		tm_session_fold_scan(s, sc);
	if (mb->size == UINT64_MAX && st == TM_OK)
		mb->size = delivered; /* learned by streaming it */
	if (st == TM_ERR_CANCELLED) {
		tm_scan_fini(sc);
		free(sc);
		return tm_error_set(err, TM_ERR_CANCELLED, "scan cancelled");
	}
	if (rerr)
		*rerr = st != TM_OK;
	if (st != TM_OK) {
		/* A read error: the member ends here; record ours. */
		sc->failed = true;
		*tm_scan_err(sc) = e;
	}
	if (sc->failed) {
		/* Scanners' own limits say only "byte 0x...": name the file and
		 * member as stream errors do. */
		struct tm_error *se = tm_scan_err(sc);
		char *lb = tm_input_label(&s->in, i);
		if (strncmp(se->msg, lb, strlen(lb)) != 0)
			tm_error_wrap(se, "%s", lb);
		free(lb);
		free(mb->error);
		mb->error = xstrdup(se->msg);
	}
	s->scans[i] = sc;
	atomic_store(&s->is_scanned[i], true);
	return TM_OK;
}

static enum tm_status
scan_one(struct tm_session *s, size_t i, volatile bool *cancel, struct tm_error *err);

/* Members of container c that are read front to back (tm_input_seq_parent):
 * scanned in one pass through the container, in data order, instead of
 * each decompressing everything before it again.  Should the shared pass
 * fail (a read error, or the container's stream ends early) the members
 * not yet scanned are opened one by one, exactly as before. */
static enum tm_status
scan_seq(struct tm_session *s, size_t c, volatile bool *cancel, struct tm_error *err)
{
	size_t *m = NULL, n = 0, cap = 0;
	for (size_t i = 0; i < s->in.n_members; i++)
		if (tm_input_seq_parent(&s->in, i) == c && !atomic_load(&s->is_scanned[i])) {
			if (!is_scannable(&s->in.members[i])) {
				atomic_store(&s->is_scanned[i], true);
				continue;
			}
			XGROW(m, cap, n + 1);
			m[n++] = i;
		}
	/* data order (insertion sort on mostly sorted input: physical order) */
	for (size_t a = 1; a < n; a++) {
		size_t v = m[a], b = a;
		uint64_t o = tm_seq_offset(&s->in, v);
		while (b > 0 && tm_seq_offset(&s->in, m[b - 1]) > o) {
			m[b] = m[b - 1];
			b--;
		}
		m[b] = v;
	}
	struct tm_seq *q = NULL;
	struct tm_error e;
	tm_error_clear(&e);
	bool shared = n > 1 && tm_seq_open(&s->in, c, &q, &e) == TM_OK;
	enum tm_status st = TM_OK;
	for (size_t k = 0; k < n && st == TM_OK; k++) {
		struct tm_stream *w = NULL;
		bool rerr = false;
		if (shared && tm_seq_member(q, m[k], &w, &e) != TM_OK)
			shared = false;
		if (!shared) {
			st = scan_one(s, m[k], cancel, err);
			continue;
		}
		st = scan_stream(s, m[k], w, cancel, &rerr, err);
		if (rerr) {
			/* the shared pass may be what failed: this member and
			 * the rest again on their own streams */
			shared = false;
			struct tm_scan *sc = s->scans[m[k]];
			s->scans[m[k]] = NULL;
			if (sc) {
				tm_scan_fini(sc);
				free(sc);
			}
			free(s->in.members[m[k]].error);
			s->in.members[m[k]].error = NULL;
			atomic_store(&s->is_scanned[m[k]], false);
			atomic_store(&s->progress[m[k]], 0);
			k--;
		}
	}
	tm_seq_close(q);
	free(m);
	return st;
}

static enum tm_status
scan_one(struct tm_session *s, size_t i, volatile bool *cancel, struct tm_error *err)
{
	struct tm_member *mb = &s->in.members[i];
	if (atomic_load(&s->is_scanned[i]))
		return TM_OK;
	if (!is_scannable(mb)) {
		atomic_store(&s->is_scanned[i], true);
		return TM_OK;
	}
	return scan_stream(s, i, NULL, cancel, NULL, err);
}

/* Scan member i, or, for a member read front to back, every member of its
 * container in one pass. */
static enum tm_status
scan_task(struct tm_session *s, size_t i, volatile bool *cancel, struct tm_error *err)
{
	size_t c = tm_input_seq_parent(&s->in, i);
	if (c != SIZE_MAX && !atomic_load(&s->is_scanned[i]) && is_scannable(&s->in.members[i]))
		return scan_seq(s, c, cancel, err);
	return scan_one(s, i, cancel, err);
}

/* Scanning every member: members are independent (each has its own
 * stream, scan and summary), so up to MAX_SCAN_THREADS of them are scanned
 * at once, largest first. */
#define MAX_SCAN_THREADS 4

struct pool {
	struct tm_session *s;
	size_t *todo;
	size_t n_todo;
	_Atomic size_t next;
	volatile bool *cancel;
	_Atomic int status; /* first non-OK status */
};

static void *
pool_worker(void *arg)
{
	struct pool *pl = arg;
	for (;;) {
		size_t k = atomic_fetch_add(&pl->next, 1);
		if (k >= pl->n_todo || atomic_load(&pl->status) != TM_OK)
			break;
		struct tm_error e;
		enum tm_status st = scan_task(pl->s, pl->todo[k], pl->cancel, &e);
		if (st != TM_OK) {
			int ok = TM_OK;
			atomic_compare_exchange_strong(&pl->status, &ok, (int)st);
		}
	}
	return NULL;
}

struct sized {
	uint64_t key; /* size + 1, 0 unknown */
	size_t member;
};

static int
cmp_sized(const void *a, const void *b)
{
	const struct sized *x = a, *y = b;
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->member < y->member ? -1 : x->member > y->member;
}

enum tm_status
tm_session_scan(struct tm_session *s, size_t member, volatile bool *cancel, struct tm_error *err)
{
	if (member != SIZE_MAX)
		return member < s->in.n_members ? scan_task(s, member, cancel, err)
						: tm_error_set(err, TM_ERR_INVALID, "no member %zu", member);
	struct pool pl = {.s = s, .cancel = cancel};
	pl.todo = xcalloc(s->in.n_members + 1, sizeof *pl.todo);
	/* one task per container read front to back (its first member) */
	bool *seq_seen = xcalloc(s->in.n_members + 1, sizeof *seq_seen);
	for (size_t i = 0; i < s->in.n_members; i++) {
		if (atomic_load(&s->is_scanned[i]))
			continue;
		size_t c = tm_input_seq_parent(&s->in, i);
		if (c != SIZE_MAX && is_scannable(&s->in.members[i])) {
			if (seq_seen[c])
				continue;
			seq_seen[c] = true;
		}
		pl.todo[pl.n_todo++] = i;
	}
	free(seq_seen);
	/* largest first, so one big member does not start last; unknown sizes
	 * last; ties in member order */
	struct sized *by = xcalloc(pl.n_todo + 1, sizeof *by);
	for (size_t k = 0; k < pl.n_todo; k++) {
		uint64_t z = s->in.members[pl.todo[k]].stored_size;
		by[k] = (struct sized){z == UINT64_MAX ? 0 : z + 1, pl.todo[k]};
	}
	qsort(by, pl.n_todo, sizeof *by, cmp_sized);
	for (size_t k = 0; k < pl.n_todo; k++)
		pl.todo[k] = by[k].member;
	free(by);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n_thr = ncpu > 1 ? (size_t)ncpu : 1;
	if (n_thr > MAX_SCAN_THREADS)
		n_thr = MAX_SCAN_THREADS;
	if (n_thr > pl.n_todo)
		n_thr = pl.n_todo ? pl.n_todo : 1;
	pthread_t thr[MAX_SCAN_THREADS];
	size_t started = 0;
	for (size_t t = 1; t < n_thr; t++)
		if (pthread_create(&thr[started], NULL, pool_worker, &pl) == 0)
			started++;
	pool_worker(&pl);
	for (size_t t = 0; t < started; t++)
		pthread_join(thr[t], NULL);
	free(pl.todo);
	int st = atomic_load(&pl.status);
	if (st == TM_ERR_CANCELLED)
		return tm_error_set(err, TM_ERR_CANCELLED, "scan cancelled");
	if (st == TM_OK && !(cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED)))
		tm_session_cache_save(s);
	return (enum tm_status)st;
}

void
tm_session_progress(const struct tm_session *s, size_t member, struct tm_progress *p)
{
	memset(p, 0, sizeof *p);
	if (member >= s->in.n_members)
		return;
	p->done_bytes = atomic_load(&s->progress[member]);
	p->total_bytes = s->in.members[member].size;
	p->is_scanned = atomic_load(&s->is_scanned[member]);
}

bool
tm_session_keeps_events(const struct tm_session *s)
{
	return s->opts.keep_events;
}

static enum tm_status evaluate(struct tm_session *s, const struct tm_manifest *m,
			       const struct tm_eval_opts *o, struct tm_replay_probe *const *probes,
			       struct tm_report **out, struct tm_error *err);

/* Every member scanned (blocking), then evaluate. */
static enum tm_status
scan_evaluate(struct tm_session *s, const struct tm_manifest *m, const struct tm_eval_opts *o,
	      struct tm_replay_probe *const *probes, struct tm_report **out, struct tm_error *err)
{
	*out = NULL;
	enum tm_status st = tm_session_scan(s, SIZE_MAX, NULL, err);
	if (st != TM_OK)
		return st;
	return evaluate(s, m, o, probes, out, err);
}

enum tm_status
tm_session_evaluate(struct tm_session *s, const struct tm_manifest *m, struct tm_report **out,
		    struct tm_error *err)
{
	return scan_evaluate(s, m, &(struct tm_eval_opts){.events = s->opts.keep_events}, NULL, out,
			     err);
}

/* The estimates' probes need the numbers' replay only (the folded logs). */
enum tm_status
tm_session_evaluate_probe(struct tm_session *s, const struct tm_manifest *m,
			  struct tm_replay_probe *const *probes, struct tm_report **out,
			  struct tm_error *err)
{
	return scan_evaluate(s, m, &(struct tm_eval_opts){0}, probes, out, err);
}

enum tm_status
tm_session_eval_numbers(struct tm_session *s, const struct tm_manifest *m, struct tm_report **out,
			struct tm_error *err)
{
	return tm_session_evaluate_probe(s, m, NULL, out, err);
}

enum tm_status
tm_session_evaluate_ex(struct tm_session *s, const struct tm_manifest *m,
		       const struct tm_eval_opts *o, struct tm_report **out, struct tm_error *err)
{
	return evaluate(s, m, o, NULL, out, err);
}

static enum tm_status
evaluate(struct tm_session *s, const struct tm_manifest *m, const struct tm_eval_opts *o,
	 struct tm_replay_probe *const *probes, struct tm_report **out, struct tm_error *err)
{
	*out = NULL;
	for (size_t i = 0; i < s->in.n_members; i++)
		if (!atomic_load(&s->is_scanned[i]))
			return tm_error_set(err, TM_ERR_INVALID, "member %zu is not scanned yet", i);
	struct tm_report *r = xcalloc(1, sizeof *r);
	r->tt_file = -1;
	r->tt_machine = -1;
	bool cancelled = false;
	struct tm_replay_src src = {.in = &s->in,
				    .scans = s->scans,
				    .manifests = s->manifests,
				    .first_manifest = s->first_manifest,
				    .keep_events = s->opts.keep_events && o && o->events,
				    .plain_replay = s->opts.plain_replay,
				    .dropped_only = o && o->dropped_only,
				    .pool = s->evpool,
				    .probes = probes,
				    .cancel = o ? o->cancel : NULL,
				    .cancelled = &cancelled};
	tm_replay(&src, m, r);
	if (cancelled) {
		tm_report_free(r);
		return tm_error_set(err, TM_ERR_CANCELLED, "evaluation cancelled");
	}
	/* The input's own manifest in the outdated syntax: its hint names only
	 * what the files have (their clocks, who owns trace time). */
	if (!m && r->hint && s->first_manifest != SIZE_MAX &&
	    !s->manifests[s->first_manifest]->is_ok) {
		const struct tm_manifest_slot *sl = s->manifests[s->first_manifest];
		struct tm_error e = sl->err;
		tm_session_outdated_hint(s, sl->text ? sl->text : "", sl->text_len, &e);
		if (e.hint[0]) {
			free(r->hint);
			r->hint = xstrdup(e.hint);
		}
	}
	/* A read error of ours (not trace_processor's) in a member that the
	 * replay reached is reported too. */
	for (size_t i = 0; i < s->in.n_members && !r->error; i++)
		if (s->scans[i] && s->scans[i]->failed && !r->error) {
			const struct tm_error *se = tm_scan_err(s->scans[i]);
			r->error = xstrdup(se->msg);
			r->error_is_ours = true;
			r->ok = false;
			r->is_complete = false; /* the member is not read to its end */
			if (!r->hint && se->code == TM_ERR_LIMIT)
				r->hint = xstrdup("this is a limit of tracemerge, not of "
						  "trace_processor, which reads on: the events past "
						  "it are not predicted");
		}
	*out = r;
	return TM_OK;
}

/* ------------------------------------------------------------------ */
/* merge                                                               */
/* ------------------------------------------------------------------ */

const char *
tm_session_manifest_text(const struct tm_session *s, size_t *len)
{
	const struct tm_manifest_slot *sl;

	*len = 0;
	if (s->first_manifest == SIZE_MAX)
		return NULL;
	sl = s->manifests[s->first_manifest];
	*len = sl->text_len;
	return sl->text;
}

enum tm_status
tm_merge_write(struct tm_session *s, const struct tm_manifest *m, const char *out_path,
	       const struct tm_write_opts *opts, struct tm_error *err)
{
	struct tm_write_opts o = {0};
	if (opts)
		o = *opts;
	struct tm_tar_writer *w = NULL;
	struct tm_output out = {.inputs = (const char *const *)s->in.paths,
				.n_inputs = s->in.n_paths,
				.replace = o.replace};
	enum tm_status st = tm_tar_begin(&w, out_path, &out, o.reproducible, o.mtime, err);
	if (o.n_stale)
		*o.n_stale = out.n_stale;
	if (st != TM_OK)
		return st;
	struct tm_buf js;
	tm_buf_init(&js);
	uint64_t total = 0, done = 0;
	/* progress counts the bytes copied: the top-level members' bytes */
	for (size_t i = 1; i < s->in.n_members; i++) {
		const struct tm_member *mb = &s->in.members[i];
		if (mb->parent == 0)
			total += mb->size != UINT64_MAX ? mb->size
				 : mb->stored_size != UINT64_MAX ? mb->stored_size : 0;
	}
	if (!s->in.is_loose && s->in.n_members == 1)
		total = s->in.members[0].size;
	if (m && !tm_manifest_is_trivial(m)) {
		tm_manifest_emit(m, &js);
		st = tm_tar_add(w, "perfetto_manifest.json", js.len, err);
		if (st == TM_OK)
			st = tm_tar_write(w, js.data, js.len, err);
	}
	/* Members to copy, under the names tm_pack_name gives them. */
	for (size_t i = 0; i < s->in.n_members && st == TM_OK; i++) {
		const struct tm_member *mb = &s->in.members[i];
		const char *name = tm_pack_name(s, i, m != NULL);
		if (!name)
			continue;
		struct tm_stream *stm = NULL;
		st = tm_stream_open_raw(&s->in, i, &stm, err);
		if (st != TM_OK)
			break;
		uint64_t size = mb->size;
		st = tm_tar_add(w, name, size, err);
		uint64_t wrote = 0;
		while (st == TM_OK) {
			const uint8_t *p;
			size_t n;
			st = tm_stream_next(stm, &p, &n, err);
			if (st != TM_OK || n == 0)
				break;
			if (o.cancel && __atomic_load_n(o.cancel, __ATOMIC_RELAXED)) {
				st = tm_error_set(err, TM_ERR_CANCELLED, "write cancelled");
				break;
			}
			st = tm_tar_write(w, p, n, err);
			wrote += n;
			done += n;
			if (o.progress)
				o.progress(o.progress_ud, done, total);
		}
		tm_stream_close(stm);
		if (st == TM_OK && wrote != size) {
			char sh[201];
			st = tm_error_set(err, TM_ERR_IO, "%s: read %" PRIu64 " bytes, expected %" PRIu64,
					  tm_shorten(name, 200, sh, sizeof sh), wrote, size);
		}
	}
	tm_buf_fini(&js);
	if (st == TM_OK && o.cancel && __atomic_load_n(o.cancel, __ATOMIC_RELAXED))
		st = tm_error_set(err, TM_ERR_CANCELLED, "write cancelled");
	if (st != TM_OK) {
		tm_tar_abort(w);
		return st;
	}
	return tm_tar_commit(w, err);
}

/* ---- the outdated manifest syntax, with what the scans say ---- */

/* ctx from a replay of no manifest at all (what the old syntax's "trace
 * time" was without a trace_time block: the first file that claims it). */
struct convert_ctx {
	struct tm_convert_ctx ctx;
	struct tm_convert_file *files;
	uint32_t *trace_clocks;
	struct tm_report *r;
};

static void
convert_ctx_init(struct tm_session *s, struct convert_ctx *c)
{
	struct tm_manifest none;
	struct tm_error e;

	memset(c, 0, sizeof *c);
	tm_manifest_init(&none);
	tm_error_clear(&e);
	if (tm_session_eval_numbers(s, &none, &c->r, &e) != TM_OK)
		c->r = NULL;
	tm_manifest_fini(&none);
	if (!c->r)
		return;
	c->files = xcalloc(c->r->n_files ? c->r->n_files : 1, sizeof *c->files);
	for (size_t i = 0; i < c->r->n_files; i++) {
		const struct tm_report_file *rf = &c->r->files[i];
		if (!rf->is_trace || !rf->path)
			continue;
		struct tm_convert_file *f = &c->files[c->ctx.n_files++];
		f->path = rf->path;
		f->trace_clock = tm_session_trace_clock(s, rf->member);
		f->clockless = f->trace_clock == TM_CLOCK_UNSET;
		f->n_clocks = rf->n_clocks;
		f->clocks = rf->clocks;
	}
	c->ctx.files = c->files;
	if (c->r->tt_file >= 0) {
		c->ctx.tt_file = c->r->files[c->r->tt_file].path;
		c->ctx.tt_clock = c->r->tt_clock;
	}
}

static void
convert_ctx_fini(struct convert_ctx *c)
{
	free(c->files);
	tm_report_free(c->r);
}

enum tm_status
tm_session_convert_outdated(struct tm_session *s, const char *text, size_t len,
			    struct tm_buf *out, struct tm_buf *notes, struct tm_error *err)
{
	struct convert_ctx c;
	convert_ctx_init(s, &c);
	enum tm_status st = tm_manifest_convert_outdated(text, len, c.r ? &c.ctx : NULL, out, notes,
							 err);
	convert_ctx_fini(&c);
	if (st != TM_OK)
		return st;
	/* the result must parse and open: said here, not found later */
	struct tm_manifest m;
	struct tm_report *r = NULL;
	st = tm_manifest_parse(out->data ? out->data : "", out->len, &m, err);
	if (st == TM_OK && tm_session_eval_numbers(s, &m, &r, err) == TM_OK && r->error &&
	    r->error_in_manifest)
		st = tm_error_set(err, TM_ERR_MANIFEST, "%s", r->error);
	tm_report_free(r);
	tm_manifest_fini(&m);
	return st;
}

void
tm_session_outdated_hint(struct tm_session *s, const char *text, size_t len, struct tm_error *err)
{
	struct convert_ctx c;
	convert_ctx_init(s, &c);
	if (c.r)
		tm_manifest_outdated_hint(text, len, &c.ctx, err);
	convert_ctx_fini(&c);
}

uint32_t
tm_session_trace_clock(struct tm_session *s, size_t member)
{
	if (member >= s->in.n_members)
		return TM_CLOCK_UNSET;
	/* formats other than proto: the clock the replay gives them (the
	 * private TRACE_FILE clock of clockless formats is UNSET: a PIN) */
	if (s->in.members[member].format != TM_FMT_PROTO)
		return tm_format_fixed_clock(s->in.members[member].format);
	struct tm_error e;
	if (tm_session_scan(s, member, NULL, &e) != TM_OK || !s->scans[member])
		return TM_CLOCK_BOOTTIME;
	return tm_scan_trace_clock(s->scans[member]);
}

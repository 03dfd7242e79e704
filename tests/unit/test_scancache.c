/* SPDX-License-Identifier: MIT */
/* Saved scans (engine/scancache.c): a reopened input gives exactly the scan a
 * fresh one gives; damaged, hostile, changed or foreign files are never used;
 * the directory stays within its cap. */
#define _GNU_SOURCE /* memmem */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "align_scan.h"
#include "scan_helpers.h"
#include "scancache.h"
#include "session.h"
#include "t.h"
#include "tarfix.h"

static char dir[64];  /* inputs */
static char cdir[96]; /* the cache */

static void
write_file(const char *path, const char *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, n, f) != n) {
		perror(path);
		exit(1);
	}
	fclose(f);
}

static void
empty_cache(void)
{
	char cmd[160];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", cdir);
	if (system(cmd) != 0)
		exit(1);
}

static struct tm_session *
open_s(const char *const *paths, size_t n, bool keep_events, uint64_t cap)
{
	struct tm_session_opts o = {.keep_events = keep_events, .cache_dir = cdir,
				    .cache_max_bytes = cap};
	struct tm_session *s = NULL;
	struct tm_error e;
	if (tm_session_open(&s, paths, n, &o, &e) != TM_OK)
		return NULL;
	struct tm_report *r = NULL;
	if (tm_session_evaluate(s, NULL, &r, &e) == TM_OK)
		tm_report_free(r);
	return s;
}

/* The verdict, every number and every member's error, as one text. */
static char *
render(struct tm_session *s)
{
	struct tm_report *r = NULL;
	struct tm_error e;
	struct tm_buf b;
	tm_buf_init(&b);
	if (tm_session_evaluate(s, NULL, &r, &e) != TM_OK)
		return tm_buf_steal(&b);
	tm_report_verdict(r, &b);
	tm_buf_addf(&b, "|%s|%" PRIu64, r->error ? r->error : "", r->dropped);
	for (size_t i = 0; i < r->n_stats; i++)
		tm_buf_addf(&b, "|%s=%" PRIu64, r->stats[i].name, r->stats[i].value);
	for (size_t i = 0; i < r->n_files; i++) {
		const struct tm_report_file *f = &r->files[i];
		tm_buf_addf(&b, "|%s %" PRIu64 " %" PRIu64 " %" PRId64 " %" PRId64 " %s",
			    f->path ? f->path : "", f->events, f->dropped, f->first_ts, f->last_ts,
			    f->placement ? f->placement : "");
	}
	for (size_t i = 0; i < r->n_events; i++)
		tm_buf_addf(&b, "|%s@%" PRId64, r->events[i].name ? r->events[i].name : "",
			    r->events[i].ts);
	for (size_t i = 0; i < tm_session_n_members(s); i++) {
		const struct tm_member *m = tm_session_member(s, i);
		tm_buf_addf(&b, "|%" PRIu64 ":%s", m->size, m->error ? m->error : "");
	}
	tm_report_free(r);
	return tm_buf_steal(&b);
}

/* paths' saved scan is not loaded, and the scan's report is a session's
 * without a cache. */
static void
not_loaded_as_fresh(const char *const *one)
{
	struct tm_session *s = open_s(one, 1, false, 0);
	struct tm_cache_info ci;
	tm_session_cache_info(s, &ci);
	CHECK_INT(ci.loaded, 0);
	char *got = render(s);
	tm_session_close(s);
	struct tm_session_opts o = {0};
	struct tm_error e;
	CHECK_INT(tm_session_open(&s, one, 1, &o, &e), TM_OK);
	char *want = render(s);
	tm_session_close(s);
	CHECK_STR(got, want);
	free(got);
	free(want);
}

/* Open twice: the second loads every input, and scans, members and report
 * are the same as the first (fresh) one's. */
static void
roundtrip(const char *const *paths, size_t n, bool keep_events)
{
	empty_cache();
	struct tm_session *a = open_s(paths, n, keep_events, 0);
	CHECK(a != NULL);
	if (!a)
		return;
	struct tm_cache_info ia, ib;
	tm_session_cache_info(a, &ia);
	CHECK_INT(ia.loaded, 0);
	CHECK_INT(ia.saved, n);
	CHECK(ia.note == NULL);
	struct tm_session *b = open_s(paths, n, keep_events, 0);
	CHECK(b != NULL);
	if (!b) {
		tm_session_close(a);
		return;
	}
	tm_session_cache_info(b, &ib);
	CHECK_INT(ib.loaded, n);
	CHECK_INT(ib.saved, 0);
	CHECK(ib.note == NULL);
	CHECK_INT(tm_session_n_members(a), tm_session_n_members(b));
	for (size_t i = 0; i < tm_session_n_members(a); i++)
		CHECK(same_scan(a->scans[i], b->scans[i]));
	char *ra = render(a), *rb = render(b);
	CHECK_STR(rb, ra);
	free(ra);
	free(rb);
	tm_session_close(a);
	tm_session_close(b);
}

static char *demo[16];
static size_t n_demo;
static char big_path[128], json_path[128], sys_path[128], tar_path[128], bad_path[128];

static void
t_roundtrip_demo(void)
{
	roundtrip((const char *const *)demo, n_demo, false);
	roundtrip((const char *const *)demo, n_demo, true);
}

static void
t_roundtrip_formats(void)
{
	const char *one[1] = {json_path};
	roundtrip(one, 1, false);
	roundtrip(one, 1, true);
	one[0] = sys_path;
	roundtrip(one, 1, false);
	roundtrip(one, 1, true);
	one[0] = bad_path; /* a scan that fails: its error is kept too */
	roundtrip(one, 1, false);
	const char *mix[3] = {json_path, sys_path, demo[0]};
	roundtrip(mix, 3, false);
}

static void
t_roundtrip_tar(void)
{
	const char *one[1] = {tar_path};
	roundtrip(one, 1, false);
	roundtrip(one, 1, true);
}

/* Runs whose deltas went to the spill file are saved inline. */
static void
t_roundtrip_spilled(void)
{
	size_t keep = tm_oplog_spill_after;
	tm_oplog_spill_after = 0;
	const char *mix[3] = {big_path, sys_path, tar_path};
	struct tm_session *s;
	struct tm_error e;
	CHECK_INT(tm_session_open(&s, mix, 1, NULL, &e), TM_OK);
	CHECK_INT(tm_session_scan(s, SIZE_MAX, NULL, &e), TM_OK);
	CHECK(s->scans[0] && s->scans[0]->log.x->n_spilled > 0);
	tm_session_close(s);
	roundtrip(mix, 3, false);
	tm_oplog_spill_after = keep;
}

/* A reopened scan's large runs stay in the saved file: the log in memory is
 * its head only, its deltas read from the file when the replay needs them
 * (the same report), and nothing goes through the spill file. */
static void
t_deltas_stay_in_file(void)
{
	const char *one[1] = {big_path};
	roundtrip(one, 1, false);
	empty_cache();
	tm_session_close(open_s(one, 1, false, 0));
	struct tm_session *b = open_s(one, 1, false, 0);
	struct tm_cache_info ci;
	tm_session_cache_info(b, &ci);
	CHECK_INT(ci.loaded, 1);
	const struct tm_oplog *l = &b->scans[0]->log;
	struct tm_buf in;
	tm_buf_init(&in);
	tm_oplog_write_inline(l, scan_buf_put, &in);
	if (l->len >= in.len || l->x->n_spilled != 1)
		fprintf(stderr, "log %zu bytes in memory of %zu, %zu extents\n", l->len, in.len,
			l->x->n_spilled);
	CHECK(l->len + 2048 < in.len);
	CHECK_INT(l->x->n_spilled, 1);
	tm_buf_fini(&in);
	tm_session_close(b);
}

static char *
only_file(void)
{
	DIR *d = opendir(cdir);
	struct dirent *de;
	char *p = NULL;
	while (d && (de = readdir(d)))
		if (strstr(de->d_name, ".tmscan")) {
			free(p);
			p = malloc(strlen(cdir) + strlen(de->d_name) + 2);
			sprintf(p, "%s/%s", cdir, de->d_name);
		}
	if (d)
		closedir(d);
	return p;
}

static char *
slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = malloc(*n + 1);
	if (fread(p, 1, *n, f) != *n)
		*n = 0;
	fclose(f);
	return p;
}

/* A tar.gz is scanned while it is listed (one inflate for both); when a
 * saved scan replaces it on reopening, those scans are not made at all. */
static void
t_targz_not_scanned_twice(void)
{
	char gz[160];
	snprintf(gz, sizeof gz, "%s/demo.tar.gz", dir);
	size_t n = 0;
	char *tar = slurp(tar_path, &n);
	gzFile f = gzopen(gz, "wb");
	CHECK(tar && f && gzwrite(f, tar, (unsigned)n) == (int)n);
	if (f)
		gzclose(f);
	free(tar);
	struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}}; /* not racy */
	utimensat(AT_FDCWD, gz, old, 0);
	const char *one[1] = {gz};
	roundtrip(one, 1, false);
	empty_cache();
	struct tm_session *a = open_s(one, 1, false, 0);
	CHECK(a && a->visit_scans > 0);
	struct tm_session *b = open_s(one, 1, false, 0);
	struct tm_cache_info ci;
	tm_session_cache_info(b, &ci);
	CHECK_INT(ci.loaded, 1);
	CHECK_INT(b->visit_scans, 0);
	char *ra = render(a), *rb = render(b);
	CHECK_STR(rb, ra);
	free(ra);
	free(rb);
	tm_session_close(b);
	/* a saved scan that turns out damaged: the members are scanned after
	 * the listing instead, with the same report */
	char *file = only_file();
	size_t fn = 0;
	char *good = file ? slurp(file, &fn) : NULL;
	CHECK(good && fn > 64);
	if (good && fn > 64) {
		good[fn - 3] ^= 0x5a;
		write_file(file, good, fn);
		chmod(file, 0600);
		b = open_s(one, 1, false, 0);
		tm_session_cache_info(b, &ci);
		CHECK_INT(ci.loaded, 0);
		CHECK_INT(b->visit_scans, 0);
		ra = render(a);
		rb = render(b);
		CHECK_STR(rb, ra);
		free(ra);
		free(rb);
		tm_session_close(b);
	}
	free(good);
	free(file);
	tm_session_close(a);
}

/* Reopen with the saved file replaced by data: nothing is loaded unless it
 * is the same scan; returns the note. */
static char *
reopen_with(const char *const *paths, const char *file, const char *data, size_t n,
	    const char *want)
{
	write_file(file, data, n);
	chmod(file, 0600);
	struct tm_session *s = open_s(paths, 1, false, 0);
	struct tm_cache_info ci;
	tm_session_cache_info(s, &ci);
	CHECK_INT(ci.loaded, 0);
	char *r = render(s);
	CHECK_STR(r, want);
	free(r);
	char *note = ci.note ? strdup(ci.note) : NULL;
	tm_session_close(s);
	return note;
}

static void
t_damaged(void)
{
	const char *one[1] = {json_path};
	empty_cache();
	struct tm_session *s = open_s(one, 1, false, 0);
	char *want = render(s);
	tm_session_close(s);
	char *file = only_file();
	size_t n = 0;
	char *good = slurp(file, &n);
	CHECK(good && n > 64);
	if (!good || n <= 64)
		return;
	/* the header's bytes, then a spread of the rest, flipped in turn */
	size_t noted = 0, tried = 0;
	for (size_t i = 0; i < n; i += i < 40 ? 1 : 1 + n / 120) {
		tried++;
		good[i] ^= 0x5a;
		char *note = reopen_with(one, file, good, n, want);
		noted += note != NULL;
		if (i >= 32 && (!note || !strstr(note, "checksum mismatch"))) {
			/* past the header: the key or listing read back different
			 * (a miss), or the checksum */
			CHECK(!note || strstr(note, "ignored"));
		}
		free(note);
		good[i] ^= 0x5a;
	}
	CHECK(noted > tried / 2);
	/* cut off anywhere */
	for (size_t i = 0; i < n; i += 1 + n / 40) {
		char *note = reopen_with(one, file, good, i, want);
		free(note);
	}
	/* written by others: not read */
	write_file(file, good, n);
	chmod(file, 0666);
	s = open_s(one, 1, false, 0);
	struct tm_cache_info ci;
	tm_session_cache_info(s, &ci);
	CHECK_INT(ci.loaded, 0);
	CHECK(ci.note && strstr(ci.note, "not a private regular file"));
	tm_session_close(s);
	free(good);
	free(file);
	free(want);
}

/* Saved and read through a buffer of a few bytes: every value and blob
 * crosses a flush or a refill, and the checksum (hashed in pieces as the
 * buffer is flushed or refilled) still covers every byte of the payload,
 * once: the scans load, the same, and damage is still found. */
static void
t_small_buffer(void)
{
	size_t keep = tm_scancache_io_buf;
	tm_scancache_io_buf = 61;
	const char *mix[4] = {big_path, json_path, sys_path, tar_path};
	roundtrip(mix, 4, false);
	roundtrip((const char *const *)demo, n_demo, true);
	t_damaged();
	tm_scancache_io_buf = keep;
}

/* A file with a valid checksum but a structure the replay cannot trust
 * (written by the real serializer from a damaged scan): never loaded. */
static void
hostile(void (*damage)(struct tm_scan *), const char *why)
{
	const char *one[1] = {json_path};
	empty_cache();
	struct tm_session *s = open_s(one, 1, false, 0);
	char *want = render(s);
	/* the scan, damaged, saved again */
	size_t k = 0;
	while (k < tm_session_n_members(s) && !s->scans[k])
		k++;
	CHECK(k < tm_session_n_members(s));
	if (k == tm_session_n_members(s))
		return;
	damage(s->scans[k]);
	s->cache[0].saved = false;
	tm_session_cache_save(s);
	tm_session_close(s);
	s = open_s(one, 1, false, 0);
	struct tm_cache_info ci;
	tm_session_cache_info(s, &ci);
	if (ci.loaded || !ci.note || !strstr(ci.note, why))
		fprintf(stderr, "hostile %s: loaded %zu note %s\n", why, ci.loaded, ci.note);
	CHECK_INT(ci.loaded, 0);
	CHECK(ci.note && strstr(ci.note, why));
	char *got = render(s);
	CHECK_STR(got, want);
	free(got);
	free(want);
	tm_session_close(s);
}

/* The same through the file: its op log patched in place and the
 * checksum made right again (what a hostile writer could do). */
static void
hostile_file(size_t at_end, unsigned char val, bool or, const char *why)
{
	const char *one[1] = {json_path};
	empty_cache();
	struct tm_session *s = open_s(one, 1, false, 0);
	char *want = render(s);
	struct tm_buf log;
	tm_buf_init(&log);
	tm_oplog_write_split(&s->scans[0]->log, scan_buf_put, &log, NULL, NULL); /* as saved */
	tm_session_close(s);
	char *file = only_file();
	size_t n = 0;
	unsigned char *f = (unsigned char *)slurp(file, &n);
	unsigned char *at = f && log.len ? memmem(f, n, log.data, log.len) : NULL;
	CHECK(at != NULL);
	if (at) {
		size_t k = at_end ? log.len - at_end : 0;
		at[k] = or ? at[k] | val : val;
		uint64_t sum = tm_scancache_hash(f + 32, n - 32);
		for (int j = 0; j < 8; j++)
			f[24 + j] = (unsigned char)(sum >> (8 * j));
		write_file(file, (char *)f, n);
		s = open_s(one, 1, false, 0);
		struct tm_cache_info ci;
		tm_session_cache_info(s, &ci);
		CHECK_INT(ci.loaded, 0);
		CHECK(ci.note && strstr(ci.note, why));
		char *got = render(s);
		CHECK_STR(got, want);
		free(got);
		tm_session_close(s);
	}
	free(f);
	free(file);
	free(want);
	tm_buf_fini(&log);
}

static void
bad_stat(struct tm_scan *sc)
{
	tm_oplog_stat(&sc->log, 0, (enum tm_stat_id)TM_STAT__COUNT, 1);
}

static void
bad_detail(struct tm_scan *sc)
{
	tm_oplog_push(&sc->log, 0, 5, 0, 99, 0);
}

static void
bad_align(struct tm_scan *sc)
{
	/* a name twice: the index cannot hold it */
	struct tm_align_samples *a = sc->align;
	if (!a)
		sc->align = a = tm_al_new();
	tm_al_name(a, "x1", 2, 1, 0, 0, 0);
	tm_al_name(a, "x2", 2, 1, 0, 0, 0);
	memcpy(a->names[a->n_names - 1].name, "x1", 2);
}

static void
bad_format(struct tm_scan *sc)
{
	sc->format = TM_FMT_SYSTRACE;
}

/* A saved occurrence's clock beyond 32 bits (the file patched, its
 * checksum made right): refused as out of range (ser_occ's one-step read
 * leaves it to the general one, which says so). */
static void
hostile_occ(const char *path)
{
	const char *one[1] = {path};
	empty_cache();
	struct tm_session *s = open_s(one, 1, false, 0);
	char *want = render(s);
	unsigned char pat[32] = {0};
	bool have = false;
	for (size_t k = 0; k < tm_session_n_members(s) && !have; k++) {
		const struct tm_align_samples *a = s->scans[k] ? s->scans[k]->align : NULL;
		struct al_occ occ[AL_OCC];
		if (!a || !a->n_names || !tm_al_occs(&a->names[0], occ))
			continue;
		uint64_t v[4] = {(uint64_t)occ[0].ts, occ[0].clock, occ[0].machine, occ[0].off};
		for (int i = 0; i < 32; i++)
			pat[i] = (unsigned char)(v[i / 8] >> (8 * (i % 8)));
		have = true;
	}
	tm_session_close(s);
	CHECK(have);
	char *file = only_file();
	size_t n = 0;
	unsigned char *f = (unsigned char *)slurp(file, &n);
	unsigned char *at = f && have ? memmem(f, n, pat, 32) : NULL;
	CHECK(at != NULL);
	if (at) {
		at[12] = 1; /* the clock's fifth byte */
		uint64_t sum = tm_scancache_hash(f + 32, n - 32);
		for (int j = 0; j < 8; j++)
			f[24 + j] = (unsigned char)(sum >> (8 * j));
		write_file(file, (char *)f, n);
		s = open_s(one, 1, false, 0);
		struct tm_cache_info ci;
		tm_session_cache_info(s, &ci);
		CHECK_INT(ci.loaded, 0);
		CHECK(ci.note && strstr(ci.note, "value out of range"));
		char *got = render(s);
		CHECK_STR(got, want);
		free(got);
		tm_session_close(s);
	}
	free(f);
	free(file);
	free(want);
}

static void
t_hostile(void)
{
	hostile_file(0, 0x7f, false, "unknown op kind");
	hostile_file(1, 0x80, true, "op cut off"); /* a varint running off the end */
	hostile(bad_stat, "unknown stat");
	hostile(bad_detail, "detail reference");
	hostile(bad_align, "alignment");
	hostile(bad_format, "another format");
	hostile_occ(json_path);
}

/* A log with every op kind, runs beyond one skip block included. */
static void
make_log(struct tm_oplog *l)
{
	tm_oplog_init(l);
	l->use_runs = true;
	struct tm_op_clock ck[2] = {{6, 100, 1, false}, {3, 50, 1, false}};
	struct tm_op snap = {.kind = TM_OP_SNAPSHOT, .flags = TM_SNAP_PACKET, .n = 2, .clocks = ck};
	tm_oplog_add(l, &snap);
	struct tm_op mach = {.kind = TM_OP_MACHINE, .machine = 3};
	tm_oplog_add(l, &mach);
	for (int i = 0; i < 700; i++)
		tm_oplog_packet_push(l, 0, 6, 0, 1000 + i * 3, 0, (uint64_t)i * 20);
	for (int i = 0; i < 600; i++)
		tm_oplog_convert(l, 0, 3, 0, 5000 - i, TM_CONV_FAIL_DROP, 0, 20000 + (uint64_t)i);
	int64_t arr[5] = {10, 20, 30, 40, 50};
	for (int i = 0; i < 300; i++) {
		struct tm_op a = {.kind = TM_OP_CONVERT_ARRAY, .clock = 6, .n = 5, .tss = arr,
				  .flags = TM_CONV_FAIL_DROP};
		tm_oplog_add(l, &a);
	}
	uint32_t counts[2] = {1, 1};
	struct tm_op rs = {.kind = TM_OP_REMOTE_SYNC, .n = 1, .counts = counts, .clocks = ck};
	tm_oplog_add(l, &rs);
	struct tm_op sys = {.kind = TM_OP_SYSINFO, .text = "box"};
	tm_oplog_add(l, &sys);
	struct tm_op nots = {.kind = TM_OP_PUSH_NOTS, .n = 4};
	tm_oplog_add(l, &nots);
	struct tm_op svc = {.kind = TM_OP_SERVICE, .clock = 6, .ts = 77};
	tm_oplog_add(l, &svc);
	uint32_t d = tm_oplog_detail(l, "ev", 2, 'B', 1, -1);
	tm_oplog_push(l, 0, 9, 0, d, 1);
	d = tm_oplog_detail_cat(l, NULL, 0, "cat", 3, 'E', 1, -1);
	tm_oplog_push(l, 0, 10, 0, d, 1);
	tm_oplog_stat(l, 0, TM_STAT_JSON_TOKENIZER_FAILURE, 2);
	tm_oplog_fatal(l, 0, "boom", 5);
	tm_oplog_finish(l);
}

/* Decode everything a replay could: ASan sees any read out of bounds. */
static uint64_t
walk(const struct tm_oplog *l, bool raw)
{
	struct tm_opiter it;
	struct tm_op op;
	uint64_t sum = 0;
	tm_opiter_init(&it, l);
	it.raw_runs = raw;
	while (tm_opiter_next(&it, &op)) {
		sum += (uint64_t)op.ts + op.kind;
		if (raw && op.kind == TM_OP_RUN) {
			for (uint32_t i = 0; i < op.run.n; i++)
				sum += (uint64_t)tm_run_at(&op.run, i);
			sum += tm_run_lower_bound(&op.run, 0, op.run.n, 1000, false, NULL);
		}
	}
	tm_opiter_fini(&it);
	return sum;
}

static void
t_oplog_valid(void)
{
	struct tm_oplog l;
	make_log(&l);
	char why[256];
	CHECK(l.n_runs >= 3);
	CHECK(tm_oplog_valid(&l, why, sizeof why));
	uint64_t want_raw = walk(&l, true), want = walk(&l, false);
	/* random damage: rejected, or decodable without a read out of bounds */
	uint8_t *orig = malloc(l.len);
	memcpy(orig, l.bytes, l.len);
	size_t len = l.len, accepted = 0;
	srand(7);
	for (int round = 0; round < 3000; round++) {
		memcpy(l.bytes, orig, len);
		l.len = len;
		int edits = 1 + rand() % 3;
		for (int e = 0; e < edits; e++) {
			size_t at = (size_t)rand() % len;
			switch (rand() % 3) {
			case 0:
				l.bytes[at] ^= (uint8_t)(1u << (rand() % 8));
				break;
			case 1:
				l.bytes[at] = (uint8_t)rand();
				break;
			default:
				l.len = at; /* cut off */
				break;
			}
		}
		if (tm_oplog_valid(&l, why, sizeof why)) {
			accepted++;
			(void)walk(&l, true);
			(void)walk(&l, false);
		}
	}
	CHECK(accepted < 3000);
	memcpy(l.bytes, orig, len);
	l.len = len;
	CHECK(walk(&l, true) == want_raw && walk(&l, false) == want);
	free(orig);
	tm_oplog_fini(&l);
}

/* Whatever tm_oplog_valid accepts decodes to sorted runs whose skip tables
 * agree with their deltas: damage to long runs of one- and two-byte
 * deltas (what its eight-bytes-at-a-time path reads) is found. */
static bool
runs_sound(const struct tm_oplog *l)
{
	struct tm_opiter it;
	struct tm_op op;
	bool ok = true;
	tm_opiter_init(&it, l);
	it.raw_runs = true;
	while (ok && tm_opiter_next(&it, &op)) {
		if (op.kind != TM_OP_RUN)
			continue;
		int64_t *v = malloc(((size_t)op.run.n + 1) * sizeof *v);
		tm_run_decode(&op.run, v);
		for (uint32_t i = 1; ok && i < op.run.n; i++)
			ok = v[i - 1] <= v[i];
		for (uint32_t i = 0; ok && i < op.run.n; i += 97)
			ok = tm_run_at(&op.run, i) == v[i];
		ok = ok && op.run.last == v[op.run.n - 1];
		free(v);
	}
	tm_opiter_fini(&it);
	return ok;
}

/* One long log of n packets (deltas of 1-2 bytes, or of 3-8 bytes when
 * wide), then single-byte damage: what is accepted must be sound. */
static void
long_runs(int n, bool wide)
{
	struct tm_oplog l;
	tm_oplog_init(&l);
	l.use_runs = true;
	srand(11);
	int64_t ts = 1000;
	for (int i = 0; i < n; i++) {
		if (wide) /* 3 bytes, 4 now and then, 6 and 8 rarely */
			ts += (1 << 14) + rand() % (1 << 20) + (i % 7 == 0 ? 1 << 22 : 0) +
			      (i % 997 == 0 ? (int64_t)1 << 36 : 0) + (i % 4001 == 0 ? (int64_t)1 << 50 : 0);
		else
			ts += i % 5000 < 2500 ? rand() % 60 : 64 + rand() % 8000; /* 1 byte, then 2 */
		if (!wide && i % 3001 == 0)
			ts += 1 << 20; /* a 3-byte delta now and then */
		tm_oplog_packet_push(&l, 0, 6, 0, ts, 0, (uint64_t)i * 20);
	}
	tm_oplog_finish(&l);
	char why[256];
	CHECK(tm_oplog_valid(&l, why, sizeof why));
	CHECK(runs_sound(&l));
	uint8_t *orig = malloc(l.len);
	memcpy(orig, l.bytes, l.len);
	size_t len = l.len, accepted = 0;
	for (int round = 0; round < 3000; round++) {
		memcpy(l.bytes, orig, len);
		size_t at = (size_t)rand() % len;
		if (round % 2)
			l.bytes[at] ^= (uint8_t)(1u << (rand() % 8));
		else
			l.bytes[at] = (uint8_t)rand();
		if (l.bytes[at] == orig[at] || !tm_oplog_valid(&l, why, sizeof why))
			continue;
		accepted++;
		if (!runs_sound(&l))
			fprintf(stderr, "accepted an unsound log: byte %zu\n", at);
		CHECK(runs_sound(&l));
	}
	CHECK(accepted < 300);
	memcpy(l.bytes, orig, len);
	free(orig);
	tm_oplog_fini(&l);
}

/* Long runs, and short ones (a small member's: its last blocks end near
 * the log's end), of narrow and wide deltas. */
static void
t_oplog_valid_long_runs(void)
{
	long_runs(20000, false);
	long_runs(20000, true);
	long_runs(700, false);
	long_runs(700, true);
}

/* A changed input is scanned again; its new scan replaces the old. */
static void
t_changed(void)
{
	char p[160];
	snprintf(p, sizeof p, "%s/change.json", dir);
	const char *one[1] = {p};
	write_file(p, "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1}]}", 55);
	empty_cache();
	struct tm_session *s = open_s(one, 1, false, 0);
	tm_session_close(s);
	write_file(p, "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":7,\"dur\":1}]}", 55);
	/* same size; within one timestamp tick the times could be the same
	 * (what the racy rule below is for): a distinct mtime */
	struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
	utimensat(AT_FDCWD, p, ts, 0);
	not_loaded_as_fresh(one);
	struct tm_cache_info ci;
	struct tm_error e;
	/* a file changed just now is not saved (its timestamps may not show
	 * the next change) */
	int racy = tm_scancache_racy_s;
	tm_scancache_racy_s = 2;
	empty_cache();
	s = open_s(one, 1, false, 0);
	tm_session_cache_info(s, &ci);
	CHECK_INT(ci.saved, 0);
	tm_session_close(s);
	tm_scancache_racy_s = racy;
	/* a refresh loads nothing and saves anew */
	s = open_s(one, 1, false, 0);
	tm_session_close(s);
	struct tm_session_opts r = {.cache_dir = cdir, .cache_refresh = true};
	CHECK_INT(tm_session_open(&s, one, 1, &r, &e), TM_OK);
	struct tm_report *rep;
	CHECK_INT(tm_session_evaluate(s, NULL, &rep, &e), TM_OK);
	tm_report_free(rep);
	tm_session_cache_info(s, &ci);
	CHECK_INT(ci.loaded, 0);
	CHECK_INT(ci.saved, 1);
	tm_session_close(s);
}

/* A TAR member's bytes changed in place, its headers and size as they
 * were and the TAR's mtime put back (only ctime tells): the saved scan is
 * not used, whether the change is inside the member or in the bytes its
 * sniff reads; members of 20 KB, so that the listing reads headers and
 * sniff bytes only (stream.c FAR_SKIP), not their bodies. */
static void
t_changed_tar_member(void)
{
	struct tm_buf j;
	tm_buf_init(&j);
	tm_buf_adds(&j, "{\"traceEvents\":[");
	for (int i = 0; i < 300; i++)
		tm_buf_addf(&j, "%s{\"ph\":\"X\",\"name\":\"e\",\"ts\":%06d,\"dur\":1,\"pid\":1,"
			    "\"tid\":1}",
			    i ? "," : "", 1000 + 10 * i);
	tm_buf_adds(&j, "]}");
	struct fx t = {0};
	fx_file(&t, "a.json", j.data, j.len);
	fx_file(&t, "b.json", j.data, j.len);
	fx_file(&t, "c.json", j.data, j.len);
	fx_end(&t);
	char p[160];
	snprintf(p, sizeof p, "%s/members.tar", dir);
	const char *one[1] = {p};
	/* b.json's first byte (its sniff) and one of its timestamps */
	size_t b0 = 512 + (j.len + 511) / 512 * 512 + 512;
	char *ts = strstr((char *)t.d + b0, "\"ts\":001500");
	CHECK(ts != NULL && j.len > 16384);
	for (int c = 0; c < 2 && ts; c++) {
		write_file(p, (const char *)t.d, t.n);
		empty_cache();
		struct tm_session *s = open_s(one, 1, false, 0);
		struct tm_cache_info ci;
		tm_session_cache_info(s, &ci);
		CHECK_INT(ci.saved, 1);
		tm_session_close(s);
		s = open_s(one, 1, false, 0); /* unchanged: loaded */
		tm_session_cache_info(s, &ci);
		CHECK_INT(ci.loaded, 1);
		tm_session_close(s);
		struct stat st0;
		CHECK(stat(p, &st0) == 0);
		usleep(20000); /* a later timestamp tick for ctime */
		int fd = open(p, O_WRONLY);
		if (c == 0)
			CHECK(pwrite(fd, "\"ts\":009999", 12, (off_t)(ts - (char *)t.d)) == 12);
		else
			CHECK(pwrite(fd, "x", 1, (off_t)b0) == 1);
		close(fd);
		struct timespec tv[2] = {st0.st_atim, st0.st_mtim};
		utimensat(AT_FDCWD, p, tv, 0);
		not_loaded_as_fresh(one);
	}
	free(t.d);
	tm_buf_fini(&j);
}

/* What the test hook does (tm_scancache_test_hook): at a stage, put
 * bytes at a path (in place, or a new file renamed over it), or point a
 * link elsewhere. */
static struct {
	int stage;
	const char *path;
	const char *data;
	size_t n;
	bool by_rename;
	const char *link_to;
	int done;
} change;

static void
change_hook(int stage)
{
	if (stage != change.stage || !change.path)
		return;
	change.done++;
	usleep(20000); /* a later timestamp tick for ctime */
	if (change.link_to) {
		char tmp[200];
		snprintf(tmp, sizeof tmp, "%s.new", change.path);
		CHECK(symlink(change.link_to, tmp) == 0 && rename(tmp, change.path) == 0);
	} else if (change.by_rename) {
		char tmp[200];
		snprintf(tmp, sizeof tmp, "%s.new", change.path);
		write_file(tmp, change.data, change.n);
		CHECK(rename(tmp, change.path) == 0);
	} else {
		write_file(change.path, change.data, change.n);
	}
	/* the old times put back: only ctime (or the inode) tells */
	struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
	utimensat(AT_FDCWD, change.path, old, 0);
}

/* A tar.gz of one JSON member whose one event is at ts (6 digits), stored
 * (deflate level 0): the same size and listing whatever ts is. */
static char *
targz_bytes(int ts, size_t *n)
{
	char j[128];
	int jl = snprintf(j, sizeof j,
			  "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":%06d,"
			  "\"dur\":1,\"pid\":1,\"tid\":1}]}",
			  ts);
	struct fx t = {0};
	fx_file(&t, "a.json", j, (size_t)jl);
	fx_end(&t);
	char p[160];
	snprintf(p, sizeof p, "%s/gz.tmp", dir);
	gzFile f = gzopen(p, "wb0");
	CHECK(f && gzwrite(f, t.d, (unsigned)t.n) == (int)t.n);
	if (f)
		gzclose(f);
	free(t.d);
	char *d = slurp(p, n);
	unlink(p);
	return d;
}

/* Input one changed as change says: its report is a fresh session's of
 * the new bytes (no saved scan of the old ones stands for them), nothing
 * is saved under a key that could name them, and the next session (no
 * change) gives the fresh report too. */
static size_t
changed_midway(const char *const *one, const char *before, size_t nb)
{
	write_file(change.path, before, nb);
	struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
	utimensat(AT_FDCWD, change.path, old, 0);
	empty_cache();
	change.done = 0;
	tm_scancache_test_hook = change_hook;
	struct tm_session *s = open_s(one, 1, false, 0);
	tm_scancache_test_hook = NULL;
	CHECK_INT(change.done, 1);
	CHECK(s != NULL);
	if (!s)
		return 0;
	struct tm_cache_info ci;
	tm_session_cache_info(s, &ci);
	CHECK_INT(ci.saved, 0);
	size_t visited = s->visit_scans;
	tm_session_close(s);
	not_loaded_as_fresh(one);
	return visited;
}

/* Issue 26: the key is taken from the descriptor before the input is read,
 * and a scan is saved only when every read was of that file unchanged.
 * A tar.gz's member is scanned while it is listed; the file rewritten (in
 * place, or renamed over) after the listing, before the key used to be
 * taken, had the old bytes' scan saved under the new file's key: every
 * later session loaded the old first_ts. */
static void
t_changed_while_listed(void)
{
	char p[160];
	snprintf(p, sizeof p, "%s/race.tar.gz", dir);
	const char *one[1] = {p};
	size_t na = 0, nb = 0;
	char *a = targz_bytes(111111, &na), *b = targz_bytes(999999, &nb);
	CHECK(a && b && na == nb);
	for (int by_rename = 0; by_rename < 2 && a && b; by_rename++) {
		change = (__typeof__(change)){0, p, b, nb, by_rename, NULL, 0};
		/* the member was scanned while listing */
		CHECK(changed_midway(one, a, na) > 0);
	}
	/* changed after the scan, before the save */
	change = (__typeof__(change)){1, p, b, nb, false, NULL, 0};
	changed_midway(one, a, na);
	free(a);
	free(b);
	memset(&change, 0, sizeof change);
}

/* A link that leads elsewhere while the input is scanned, and back before
 * the save: what was scanned was not the file the key names. */
static void
t_link_moved_while_scanned(void)
{
	char p[160], ta[160], tb[160];
	snprintf(p, sizeof p, "%s/link.json", dir);
	snprintf(ta, sizeof ta, "%s/link_a.json", dir);
	snprintf(tb, sizeof tb, "%s/link_b.json", dir);
	const char *j1 = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1}]}";
	const char *j2 = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":7,\"dur\":1}]}";
	write_file(ta, j1, strlen(j1));
	write_file(tb, j2, strlen(j2));
	struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
	utimensat(AT_FDCWD, ta, old, 0);
	utimensat(AT_FDCWD, tb, old, 0);
	unlink(p);
	CHECK(symlink(ta, p) == 0);
	const char *one[1] = {p};
	empty_cache();
	/* to b after the listing, back to a before the save (two hooks) */
	change = (__typeof__(change)){0, p, NULL, 0, false, tb, 0};
	tm_scancache_test_hook = change_hook;
	struct tm_session *s = open_s(one, 1, false, 0);
	CHECK_INT(change.done, 1);
	tm_scancache_test_hook = NULL;
	if (s) {
		change.stage = 1;
		change.link_to = ta;
		s->cache[0].saved = false;
		tm_scancache_test_hook = change_hook;
		tm_session_cache_save(s);
		tm_scancache_test_hook = NULL;
		CHECK_INT(change.done, 2);
		tm_session_close(s);
	}
	memset(&change, 0, sizeof change);
	not_loaded_as_fresh(one);
}

static uint64_t
dir_bytes(size_t *files)
{
	DIR *d = opendir(cdir);
	struct dirent *de;
	uint64_t total = 0;
	*files = 0;
	while (d && (de = readdir(d))) {
		char p[512];
		struct stat st;
		snprintf(p, sizeof p, "%s/%s", cdir, de->d_name);
		if (strstr(de->d_name, ".tmscan") && stat(p, &st) == 0) {
			total += (uint64_t)st.st_size;
			(*files)++;
		}
	}
	if (d)
		closedir(d);
	return total;
}

static void
t_evict(void)
{
	empty_cache();
	/* each input alone, under a cap that holds about two of them */
	size_t files;
	const char *one[1] = {json_path};
	struct tm_session *s = open_s(one, 1, false, 0);
	tm_session_close(s);
	uint64_t one_size = dir_bytes(&files);
	uint64_t cap = one_size * 5 / 2;
	const char *order[4] = {json_path, sys_path, demo[0], demo[1]};
	for (int i = 0; i < 4; i++) {
		const char *p[1] = {order[i]};
		s = open_s(p, 1, false, cap);
		tm_session_close(s);
		CHECK(dir_bytes(&files) <= cap);
	}
	CHECK(files >= 1);
	/* the newest is kept */
	const char *last[1] = {demo[1]};
	s = open_s(last, 1, false, cap);
	struct tm_cache_info ci;
	tm_session_cache_info(s, &ci);
	CHECK_INT(ci.loaded, 1);
	tm_session_close(s);
	/* larger than the cap: not written, said */
	empty_cache();
	s = open_s(one, 1, false, 16);
	tm_session_cache_info(s, &ci);
	CHECK_INT(ci.saved, 0);
	CHECK(ci.note && strstr(ci.note, "larger than the cache's cap"));
	tm_session_close(s);
}

/* A session on one that must not load (or hang on) what is in the cache
 * directory: it says why (note has want), loads and saves nothing, and
 * gives a fresh session's report.  An alarm ends a session that hangs. */
static void
refused(const char *const *one, const char *want, size_t saved)
{
	alarm(60);
	struct tm_session *s = open_s(one, 1, false, 0);
	alarm(0);
	CHECK(s != NULL);
	if (!s)
		return;
	struct tm_cache_info ci;
	tm_session_cache_info(s, &ci);
	if (!ci.note || !strstr(ci.note, want))
		fprintf(stderr, "refused: note %s\n", ci.note ? ci.note : "(none)");
	CHECK(ci.note && strstr(ci.note, want));
	CHECK_INT(ci.loaded, 0);
	CHECK_INT(ci.saved, saved);
	char *got = render(s);
	tm_session_close(s);
	struct tm_session_opts o = {0};
	struct tm_error e;
	CHECK_INT(tm_session_open(&s, one, 1, &o, &e), TM_OK);
	char *fresh = render(s);
	tm_session_close(s);
	CHECK_STR(got, fresh);
	free(got);
	free(fresh);
}

/* Issue 26: a FIFO under a saved scan's name (planted while the directory
 * was open to others) hung the session: the cache file was opened
 * blocking, before its type was looked at. */
static void
t_fifo_planted(void)
{
	const char *one[1] = {json_path};
	empty_cache();
	tm_session_close(open_s(one, 1, false, 0));
	char *file = only_file();
	CHECK(file != NULL);
	if (!file)
		return;
	CHECK(unlink(file) == 0 && mkfifo(file, 0600) == 0);
	/* the FIFO is replaced by the new scan */
	refused(one, "not a private regular file", 1);
	struct stat st;
	CHECK(lstat(file, &st) == 0 && S_ISREG(st.st_mode));
	free(file);
}

/* What output.c's hook saw written (tm_out_checked_hook). */
static char *hooked;

static void
out_hook(const char *path)
{
	free(hooked);
	hooked = strdup(path);
}

/* Issue 23: a saved scan is written under output.c's one rule
 * (tm_out_open_at: private, a locked temp file beside it, renamed), not
 * by a writer of the cache's own; a temp file of that naming that no
 * writer holds is removed by the next save. */
static void
t_written_by_output_rule(void)
{
	const char *one[1] = {json_path};
	empty_cache();
	tm_session_close(open_s(one, 1, false, 0));
	char *file = only_file();
	CHECK(file != NULL);
	if (!file)
		return;
	const char *base = strrchr(file, '/') + 1;
	char stale[512];
	snprintf(stale, sizeof stale, "%s/.%s.tmp-AbC123", cdir, base);
	write_file(stale, "x", 1);
	CHECK(unlink(file) == 0);
	tm_out_checked_hook = out_hook;
	tm_session_close(open_s(one, 1, false, 0));
	tm_out_checked_hook = NULL;
	CHECK(hooked && !strcmp(hooked, base));
	struct stat st;
	CHECK(stat(file, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
	CHECK(access(stale, F_OK) != 0); /* the stale temp file removed */
	free(hooked);
	hooked = NULL;
	free(file);
}

/* Issue 26: the directory is refused when others may write to it or it
 * is not the user's (they could plant a file under a predictable name):
 * nothing read or written there, a note says so. */
static void
t_dir_refused(void)
{
	const char *one[1] = {json_path};
	empty_cache();
	tm_session_close(open_s(one, 1, false, 0));
	char *file = only_file();
	struct stat st0, st;
	CHECK(file && stat(file, &st0) == 0);
	usleep(20000);
	CHECK(chmod(cdir, 0777) == 0);
	refused(one, "can be written by others", 0);
	CHECK(chmod(cdir, 0770) == 0);
	refused(one, "can be written by others", 0);
	/* nothing read (a load touches the file) nor written */
	size_t files = 0;
	(void)dir_bytes(&files);
	CHECK_INT(files, 1);
	CHECK(file && stat(file, &st) == 0 &&
	      st.st_mtim.tv_nsec == st0.st_mtim.tv_nsec && st.st_mtim.tv_sec == st0.st_mtim.tv_sec);
	/* a FIFO there is not opened at all */
	if (file) {
		CHECK(unlink(file) == 0 && mkfifo(file, 0600) == 0);
		refused(one, "can be written by others", 0);
	}
	CHECK(chmod(cdir, 0700) == 0);
	/* another user's (testable as root): refused even at 0700 */
	if (geteuid() == 0) {
		CHECK(chown(cdir, 65534, 65534) == 0);
		refused(one, "belongs to another user", 0);
		CHECK(chown(cdir, 0, 0) == 0);
	} else {
		printf("SKIP: t_dir_refused: another user's directory: not root\n");
	}
	/* the sticky /tmp itself, as a cache directory */
	struct tm_session_opts o = {.cache_dir = "/tmp"};
	struct tm_session *s = NULL;
	struct tm_error e;
	CHECK_INT(tm_session_open(&s, one, 1, &o, &e), TM_OK);
	struct tm_cache_info ci;
	tm_session_cache_info(s, &ci);
	CHECK(ci.note && strstr(ci.note, "/tmp ") && strstr(ci.note, "not used"));
	tm_session_close(s);
	free(file);
}

int
main(void)
{
	tm_scancache_racy_s = -1000000; /* the inputs are written just before */
	snprintf(dir, sizeof dir, "/tmp/tm_scancache_XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(cdir, sizeof cdir, "%s/cache/tracemerge", dir);
	char **paths = NULL;
	struct tm_error e;
	if (tm_demo_write(dir, &paths, &e) != TM_OK)
		return 1;
	for (size_t i = 0; paths[i] && n_demo < 15; i++)
		if (!strstr(paths[i], "manifest"))
			demo[n_demo++] = paths[i];
		else
			free(paths[i]);
	free(paths);
	/* JSON with slices, flows and async events (alignment samples) */
	struct tm_buf b;
	tm_buf_init(&b);
	tm_buf_adds(&b, "{\"traceEvents\":[");
	for (int i = 0; i < 600; i++)
		tm_buf_addf(&b, "%s{\"ph\":\"%s\",\"name\":\"n%d\",\"ts\":%d,\"dur\":2,\"pid\":1,"
				"\"tid\":%d,\"id\":%d}",
			    i ? "," : "", i % 3 == 0 ? "X" : i % 3 == 1 ? "s" : "f", i % 40, 10 + i, i % 4,
			    i % 50);
	tm_buf_adds(&b, "]}");
	snprintf(json_path, sizeof json_path, "%s/gen.json", dir);
	write_file(json_path, b.data, b.len);
	tm_buf_reset(&b);
	tm_buf_adds(&b, "{\"traceEvents\":[");
	for (int i = 0; i < 5000; i++)
		tm_buf_addf(&b, "%s{\"ph\":\"X\",\"name\":\"b\",\"ts\":%d,\"dur\":1,\"pid\":1,\"tid\":1}",
			    i ? "," : "", 1000 * i + i % 7);
	tm_buf_adds(&b, "]}");
	snprintf(big_path, sizeof big_path, "%s/big.json", dir);
	write_file(big_path, b.data, b.len);
	tm_buf_reset(&b);
	tm_buf_adds(&b, "# tracer: nop\n#\n");
	for (int i = 0; i < 400; i++)
		tm_buf_addf(&b, "  <...>-5 (    5) [001] ...1  %d.%06d: tracing_mark_write: %s|5|s%d\n",
			    10 + i / 100, (i % 100) * 1000, i % 2 ? "E" : "B", i % 7);
	snprintf(sys_path, sizeof sys_path, "%s/gen.systrace", dir);
	write_file(sys_path, b.data, b.len);
	tm_buf_reset(&b);
	tm_buf_adds(&b, "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":1},");
	snprintf(bad_path, sizeof bad_path, "%s/cut.json", dir);
	write_file(bad_path, b.data, b.len);
	tm_buf_fini(&b);
	/* a TAR with several members (the demo merged) */
	snprintf(tar_path, sizeof tar_path, "%s/demo.tar", dir);
	struct tm_session *s = NULL;
	if (tm_session_open(&s, (const char *const *)demo, n_demo, NULL, &e) != TM_OK ||
	    tm_merge_write(s, NULL, tar_path, NULL, &e) != TM_OK)
		return 1;
	tm_session_close(s);

	RUN(t_roundtrip_demo);
	RUN(t_roundtrip_formats);
	RUN(t_roundtrip_tar);
	RUN(t_roundtrip_spilled);
	RUN(t_deltas_stay_in_file);
	RUN(t_targz_not_scanned_twice);
	RUN(t_damaged);
	RUN(t_small_buffer);
	RUN(t_hostile);
	RUN(t_oplog_valid);
	RUN(t_oplog_valid_long_runs);
	RUN(t_changed);
	RUN(t_changed_tar_member);
	RUN(t_changed_while_listed);
	RUN(t_link_moved_while_scanned);
	RUN(t_fifo_planted);
	RUN(t_written_by_output_rule);
	RUN(t_dir_refused);
	RUN(t_evict);
	for (size_t i = 0; i < n_demo; i++)
		free(demo[i]);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) != 0;
}

/* SPDX-License-Identifier: MIT */
/* A saved scan (engine/session/scancache.c) as a hostile writer could leave it:
 * [b] payload, where b picks one of the fixed inputs ((b & 0x3f) % N_CASES: a
 * JSON, a proto, a TAR, a tar.gz, two loose files), whether
 * the session keeps events (b & 0x80) and a 61-byte read buffer (b & 0x40,
 * every refill path).  The harness writes the file the cache would look
 * for: the header, the key this process saves under (build, path, options,
 * identity: a mutated key is only a miss) and the payload, re-signed (the
 * header's length and checksum made right), then opens a session on the
 * input with the cache and evaluates it.  Beyond "no crash, no leak, no
 * hang": a file that is not loaded leaves the session exactly as a fresh
 * one (the report, every number, every member's error, as text).
 * Seeds: run once with TM_FUZZ_SEED_DIR=DIR (make fuzz does), it writes
 * each case's saved payload there. */
#include "fuzz_common.h"

#include <dirent.h>
#include <inttypes.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "scancache.h"
#include "session.h"

enum { N_CASES = 5, HEADER = 32 };

struct fcase {
	const char *paths[2];
	size_t n;
	bool keep;
	char cdir[160];
	char *file;        /* the saved scan's path */
	uint8_t head[HEADER];
	uint8_t *key;      /* the payload's key part, as saved */
	size_t key_len;
	char *fresh;       /* the report without a cache */
};

static char dir[64];
static char *demo[16];
static size_t n_demo;
static char tar_path[128], targz_path[128];
static struct fcase cases[N_CASES][2];

/* The verdict, every number and every member's error, as one text. */
static char *
render(struct tm_session *s)
{
	struct tm_report *r = NULL;
	struct tm_error e;
	struct tm_buf b;
	tm_buf_init(&b);
	if (tm_session_evaluate(s, NULL, &r, &e) != TM_OK) {
		tm_buf_addf(&b, "error %s", e.msg);
		return tm_buf_steal(&b);
	}
	tm_report_verdict(r, &b);
	tm_buf_addf(&b, "|%s|%" PRIu64, r->error ? r->error : "", r->dropped);
	for (size_t i = 0; i < r->n_stats; i++)
		tm_buf_addf(&b, "|%s=%" PRIu64, r->stats[i].name, r->stats[i].value);
	for (size_t i = 0; i < r->n_files; i++) {
		const struct tm_report_file *f = &r->files[i];
		FUZZ_CHECK(f->member < tm_session_n_members(s));
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

static struct tm_session *
open_c(const struct fcase *c, const char *cdir)
{
	struct tm_session_opts o = {.keep_events = c->keep, .cache_dir = cdir};
	struct tm_session *s = NULL;
	struct tm_error e;
	FUZZ_CHECK(tm_session_open(&s, c->paths, c->n, &o, &e) == TM_OK);
	return s;
}

static char *
slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	FUZZ_CHECK(f != NULL);
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = malloc(*n + 1);
	FUZZ_CHECK(fread(p, 1, *n, f) == *n);
	fclose(f);
	return p;
}

static uint64_t
le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* The one saved scan of the first input (the group of path 0) in cdir. */
static char *
saved_file(const char *cdir, const struct fcase *c)
{
	DIR *d = opendir(cdir);
	FUZZ_CHECK(d != NULL);
	struct dirent *de;
	char *found = NULL;
	while ((de = readdir(d))) {
		if (!strstr(de->d_name, ".tmscan"))
			continue;
		struct tm_buf b;
		tm_buf_init(&b);
		tm_buf_addf(&b, "%s/%s", cdir, de->d_name);
		size_t n;
		char *f = slurp(b.data, &n);
		/* the key: build id (flag, length, bytes), path (the same) */
		FUZZ_CHECK(n > HEADER + 32);
		uint64_t bl = le64((uint8_t *)f + HEADER + 8);
		uint64_t pl = le64((uint8_t *)f + HEADER + 24 + bl);
		bool mine = pl == strlen(c->paths[0]) &&
			    !memcmp(f + HEADER + 32 + bl, c->paths[0], pl);
		free(f);
		if (mine)
			found = tm_buf_steal(&b);
		else
			tm_buf_fini(&b);
	}
	closedir(d);
	FUZZ_CHECK(found != NULL);
	return found;
}

static void
write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	FUZZ_CHECK(f && fwrite(p, 1, n, f) == n);
	fclose(f);
}

static void
make_case(struct fcase *c, int k, bool keep)
{
	c->keep = keep;
	switch (k) {
	case 0: c->paths[0] = demo[0]; c->n = 1; break;
	case 1: c->paths[0] = demo[1]; c->n = 1; break;
	case 2: c->paths[0] = tar_path; c->n = 1; break;
	case 3: c->paths[0] = targz_path; c->n = 1; break;
	default: c->paths[0] = demo[2]; c->paths[1] = demo[0]; c->n = 2; break;
	}
	snprintf(c->cdir, sizeof c->cdir, "%s/cache%d%d", dir, k, keep);
	struct tm_session *s = open_c(c, c->cdir);
	char *a = render(s);
	struct tm_cache_info ci;
	tm_session_cache_info(s, &ci);
	FUZZ_CHECK(ci.saved == c->n);
	tm_session_close(s);
	c->file = saved_file(c->cdir, c);
	size_t n;
	uint8_t *f = (uint8_t *)slurp(c->file, &n);
	memcpy(c->head, f, HEADER);
	uint64_t bl = le64(f + HEADER + 8);
	uint64_t pl = le64(f + HEADER + 24 + bl);
	c->key_len = 32 + bl + pl + 8 * 8;
	c->key = malloc(c->key_len);
	memcpy(c->key, f + HEADER, c->key_len);
	/* a seed: the payload after the key, as saved */
	const char *seeds = getenv("TM_FUZZ_SEED_DIR");
	if (seeds) {
		struct tm_buf p;
		tm_buf_init(&p);
		tm_buf_addf(&p, "%s/valid-%d%d", seeds, k, keep);
		uint8_t *seed = malloc(n - HEADER - c->key_len + 1);
		seed[0] = (uint8_t)(k | (keep ? 0x80 : 0));
		memcpy(seed + 1, f + HEADER + c->key_len, n - HEADER - c->key_len);
		write_file(p.data, seed, n - HEADER - c->key_len + 1);
		free(seed);
		tm_buf_fini(&p);
	}
	free(f);
	/* without the cache; loaded back, the same */
	struct tm_session_opts o = {.keep_events = keep};
	struct tm_error e;
	FUZZ_CHECK(tm_session_open(&s, c->paths, c->n, &o, &e) == TM_OK);
	c->fresh = render(s);
	tm_session_close(s);
	FUZZ_CHECK(!strcmp(a, c->fresh));
	free(a);
	s = open_c(c, c->cdir);
	tm_session_cache_info(s, &ci);
	FUZZ_CHECK(ci.loaded == c->n);
	a = render(s);
	FUZZ_CHECK(!strcmp(a, c->fresh));
	free(a);
	tm_session_close(s);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	tm_scancache_racy_s = -1000000; /* the inputs are written just now */
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/tmfuzzc-XXXXXX", t && strlen(t) < 40 ? t : "/tmp");
	FUZZ_CHECK(mkdtemp(dir) != NULL);
	char **paths = NULL;
	struct tm_error e;
	FUZZ_CHECK(tm_demo_write(dir, &paths, &e) == TM_OK);
	for (size_t i = 0; paths[i]; i++)
		if (!strstr(paths[i], "manifest") && n_demo < 16)
			demo[n_demo++] = paths[i];
		else
			free(paths[i]);
	free(paths);
	FUZZ_CHECK(n_demo >= 3);
	snprintf(tar_path, sizeof tar_path, "%s/demo.tar", dir);
	struct tm_session *s = NULL;
	FUZZ_CHECK(tm_session_open(&s, (const char *const *)demo, n_demo, NULL, &e) == TM_OK);
	FUZZ_CHECK(tm_merge_write(s, NULL, tar_path, NULL, &e) == TM_OK);
	tm_session_close(s);
	size_t n;
	char *tar = slurp(tar_path, &n);
	snprintf(targz_path, sizeof targz_path, "%s/demo.tar.gz", dir);
	gzFile gz = gzopen(targz_path, "wb");
	FUZZ_CHECK(gz && gzwrite(gz, tar, (unsigned)n) == (int)n);
	gzclose(gz);
	free(tar);
	for (int k = 0; k < N_CASES; k++)
		for (int keep = 0; keep < 2; keep++)
			make_case(&cases[k][keep], k, keep);
	return 0;
}

static void
cleanup(void) __attribute__((destructor));
static void
cleanup(void)
{
	if (!dir[0])
		return;
	char cmd[96];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	for (int k = 0; k < N_CASES; k++)
		for (int keep = 0; keep < 2; keep++) {
			free(cases[k][keep].file);
			free(cases[k][keep].key);
			free(cases[k][keep].fresh);
		}
	for (size_t i = 0; i < n_demo; i++)
		free(demo[i]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const struct fcase *c = &cases[(data[0] & 0x3f) % N_CASES][data[0] >> 7];
	size_t pay = c->key_len + size - 1;
	uint8_t *f = malloc(HEADER + pay);
	memcpy(f, c->head, 16);
	memcpy(f + HEADER, c->key, c->key_len);
	memcpy(f + HEADER + c->key_len, data + 1, size - 1);
	uint64_t sum = tm_scancache_hash(f + HEADER, pay);
	for (int j = 0; j < 8; j++) {
		f[16 + j] = (uint8_t)((uint64_t)pay >> (8 * j));
		f[24 + j] = (uint8_t)(sum >> (8 * j));
	}
	write_file(c->file, f, HEADER + pay);
	free(f);
	size_t io = tm_scancache_io_buf;
	if (data[0] & 0x40)
		tm_scancache_io_buf = 61;
	struct tm_session *s = open_c(c, c->cdir);
	tm_scancache_io_buf = io;
	struct tm_cache_info ci;
	tm_session_cache_info(s, &ci);
	char *got = render(s);
	if (ci.loaded < c->n) { /* (the loose case's second file is valid) */
		if (strcmp(got, c->fresh)) {
			fprintf(stderr, "not loaded (%s), yet not a fresh session's report:\n"
					"  got   %s\n  fresh %s\n",
				ci.note ? ci.note : "no note", got, c->fresh);
			abort();
		}
	}
	free(got);
	tm_session_close(s);
	return 0;
}

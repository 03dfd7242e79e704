/* SPDX-License-Identifier: MIT */
/*
 * Every per-member or per-packet lookup keyed by a value the input controls
 * is a hash or an index (issue 26): each table below is given 10^5 distinct
 * keys, and the work of its lookups is bounded by a count of probes (the
 * ASan build counts every probe of such a table, internal.h TM_PROBE),
 * never by time.  A linear search counts about n^2 / 2 = 5 * 10^9 here; a
 * hash about n.  Other builds do not count: SKIP there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "session.h"
#include "t.h"
#include "tarfix.h"

#define N 100000
/* probes allowed per key looked up (a hash at load 1/2: about 1.5) */
#define PER_KEY 8

static uint64_t t0_;
#define WORK_BEGIN() (t0_ = tm_work_count())
#define WORK() (tm_work_count() - t0_)
#define CHECK_WORK(keys)                                                                           \
	do {                                                                                       \
		uint64_t w_ = WORK(), max_ = (uint64_t)(keys) * PER_KEY;                            \
		if (w_ > max_ && !t_failed_) {                                                     \
			t_failed_ = 1;                                                             \
			snprintf(t_why_, sizeof t_why_,                                            \
				 "%s:%d: %" PRIu64 " probes for %" PRIu64 " keys (at most %" PRIu64 \
				 ": a linear search?)",                                            \
				 __FILE__, __LINE__, w_, (uint64_t)(keys), max_);                  \
		}                                                                                  \
	} while (0)

/* A TAR of N empty members m0 .. m<N-1>. */
static const char *
many_members_tar(void)
{
	static char path[600];
	if (path[0])
		return path;
	struct fx t = {0};
	char name[32];
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof name, "m%d", i);
		fx_file(&t, name, "", 0);
	}
	fx_end(&t);
	snprintf(path, sizeof path, "%s", fx_write("many.tar", t.d, t.n));
	free(t.d);
	return path;
}

static struct tm_session *
open1(const char *path)
{
	struct tm_session *s = NULL;
	struct tm_error e = {0};
	if (tm_session_open(&s, &path, 1, NULL, &e) != TM_OK) {
		snprintf(t_why_, sizeof t_why_, "open %s: %s", path, e.msg);
		t_failed_ = 1;
		return NULL;
	}
	return s;
}

/* A manifest naming m0 .. m<n-1>, each on a machine of its own. */
static void
many_files_manifest(struct tm_manifest *m, int n)
{
	struct tm_buf b;
	struct tm_error e = {0};
	tm_buf_init(&b);
	tm_buf_adds(&b, "{\"perfetto_manifest\": {\"version\": 1, \"files\": [");
	for (int i = 0; i < n; i++)
		tm_buf_addf(&b, "%s{\"path\": \"m%d\", \"machine\": {\"name\": \"h%d\"}}",
			    i ? ", " : "", i, i);
	tm_buf_adds(&b, "]}}");
	if (tm_manifest_parse(b.data, b.len, m, &e) != TM_OK && !t_failed_) {
		t_failed_ = 1;
		snprintf(t_why_, sizeof t_why_, "parse: %s", e.msg);
	}
	tm_buf_fini(&b);
}

/* session.c tm_session_member_by_name: every member by its name. */
static void
t_member_by_name(void)
{
	struct tm_session *s = open1(many_members_tar());
	if (!s)
		return;
	CHECK_INT(tm_session_n_members(s), N + 1);
	char name[32];
	WORK_BEGIN();
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof name, "m%d", i);
		CHECK_INT(tm_session_member_by_name(s, name), i + 1);
	}
	CHECK_INT(tm_session_member_by_name(s, "m"), -1);
	CHECK_WORK(N);
	/* the index is 8 bytes a slot, at load 1/4 to 1/2: at most 32 bytes a
	 * member (a tm_strmap's slots took 32 bytes each, 64-128 a member:
	 * check's RSS on a TAR of 10,000 members, make bench) */
	CHECK(s->member_ix.cap * sizeof *s->member_ix.slots <= (size_t)32 * N);
	CHECK(s->member_ix.n == N);
	tm_session_close(s);
}

/* manifest_edit.c tm_manifest_file_find: each file found, in a copy too;
 * files added one at a time (as edits add them) found as they come. */
static void
t_manifest_file_find(void)
{
	struct tm_manifest m, c;
	char path[32];
	many_files_manifest(&m, N);
	CHECK_INT(m.n_files, N);
	WORK_BEGIN();
	tm_manifest_copy(&c, &m);
	for (int i = 0; i < N; i++) {
		snprintf(path, sizeof path, "m%d", i);
		const struct tm_manifest_file *f = tm_manifest_file_find(&c, path);
		CHECK(f && f == &c.files[i]);
	}
	CHECK(tm_manifest_file_find(&m, "nope") == NULL);
	for (int i = 0; i < 100; i++) {
		snprintf(path, sizeof path, "new%d", i);
		tm_manifest_set_machine(&c, path, "x");
		CHECK(tm_manifest_file_find(&c, path) == &c.files[N + i]);
	}
	CHECK_WORK(3 * N);
	/* renamed: found under the new name only */
	tm_manifest_rename_file(&c, "m7", "seven");
	CHECK(tm_manifest_file_find(&c, "m7") == NULL);
	CHECK(tm_manifest_file_find(&c, "seven") == &c.files[7]);
	tm_manifest_fini(&c);
	tm_manifest_fini(&m);
}

/* pack.c tm_pack_check: every manifest path looked up among the
 * members' names (one path missing, reported). */
static void
t_pack_check_paths(void)
{
	struct tm_session *s = open1(many_members_tar());
	if (!s)
		return;
	struct tm_manifest m;
	many_files_manifest(&m, N);
	tm_manifest_set_machine(&m, "absent", "x");
	struct tm_pack_check pc;
	WORK_BEGIN();
	tm_pack_check(s, &m, &pc);
	CHECK_WORK(2 * N);
	CHECK_INT(pc.n, 1);
	if (pc.n)
		CHECK(strstr(pc.issues[0].msg, "names file 'absent'") != NULL);
	tm_pack_check_fini(&pc);
	tm_manifest_fini(&m);
	tm_session_close(s);
}

/* pack.c tm_pack_check: loose files, two of one base name (20,000 of
 * them: creating and opening 10^5 files takes half a minute here; the
 * names' table is the one t_pack_check_paths gives 10^5 names). */
static void
t_pack_check_loose_names(void)
{
	enum { NL = 20000 };
	const char **paths = calloc(NL + 1, sizeof *paths);
	char name[64];
	for (int i = 0; i < NL; i++) {
		snprintf(name, sizeof name, "l%d.json", i);
		paths[i] = strdup(fx_write(name, "{\"traceEvents\":[]}", 18));
	}
	/* the same base name in a directory */
	snprintf(name, sizeof name, "%s", fx_path("sub"));
	if (mkdir(name, 0700) != 0)
		abort();
	paths[NL] = strdup(fx_write("sub/l5.json", "{\"traceEvents\":[]}", 18));
	struct tm_session *s = NULL;
	struct tm_error e = {0};
	CHECK_INT(tm_session_open(&s, paths, NL + 1, NULL, &e), TM_OK);
	if (s) {
		struct tm_pack_check pc;
		WORK_BEGIN();
		tm_pack_check(s, NULL, &pc);
		CHECK_WORK(NL);
		CHECK_INT(pc.n, 1);
		if (pc.n)
			CHECK(strstr(pc.issues[0].msg, "share the name 'l5.json'") != NULL);
		tm_pack_check_fini(&pc);
		tm_session_close(s);
	}
	for (int i = 0; i <= NL; i++)
		free((void *)(uintptr_t)paths[i]);
	free(paths);
}

/* fixes.c, offset.c: the issue's shape, a manifest of 0.4 N files against
 * the TAR of N empty members (the import fails, each configured file is
 * tried: member by name, file in the manifest, the report's trace files). */
static void
t_fixes_many_files(void)
{
	struct tm_session *s = open1(many_members_tar());
	if (!s)
		return;
	struct tm_manifest m;
	many_files_manifest(&m, N * 2 / 5);
	struct tm_report *r = NULL;
	struct tm_error e = {0};
	CHECK_INT(tm_session_evaluate(s, &m, &r, &e), TM_OK);
	if (r) {
		CHECK(r->error != NULL);
		struct tm_fixes fx;
		WORK_BEGIN();
		CHECK_INT(tm_fixes_suggest(s, &m, r, NULL, &fx, &e), TM_OK);
		CHECK_WORK(N + N * 2 / 5);
		tm_fixes_fini(&fx);
		tm_report_free(r);
	}
	tm_manifest_fini(&m);
	tm_session_close(s);
}

static void
varint(struct fx *f, uint64_t v)
{
	unsigned char b[10];
	size_t n = 0;
	do {
		b[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			b[n] |= 0x80;
		n++;
	} while (v);
	fx_add(f, b, n);
}

/* A proto of N packets, packet i from embedded machine i + 1. */
static const char *
many_machines_proto(void)
{
	static char path[600];
	if (path[0])
		return path;
	struct fx t = {0};
	for (uint64_t i = 0; i < N; i++) {
		struct fx p = {0};
		varint(&p, 8 << 3); /* timestamp */
		varint(&p, 1000 + i);
		varint(&p, 98 << 3); /* machine_id */
		varint(&p, i + 1);
		varint(&p, 10 << 3); /* trusted_packet_sequence_id */
		varint(&p, 1);
		varint(&t, 1 << 3 | 2);
		varint(&t, p.n);
		fx_add(&t, p.d, p.n);
		free(p.d);
	}
	snprintf(path, sizeof path, "%s", fx_write("ids.pftrace", t.d, t.n));
	free(t.d);
	return path;
}

/* scan_proto.c tm_ps_machine, scan_summary.c tm_scan_note_machine,
 * replay.c (machine_to_context, a file's readers and rows): N machine ids
 * in one file. */
static void
t_proto_machine_ids(void)
{
	struct tm_session *s = open1(many_machines_proto());
	if (!s)
		return;
	struct tm_report *r = NULL;
	struct tm_error e = {0};
	WORK_BEGIN();
	CHECK_INT(tm_session_evaluate(s, NULL, &r, &e), TM_OK);
	CHECK_WORK(5 * N); /* each id in 5 tables, some twice */
	if (r) {
		CHECK(r->error == NULL);
		CHECK_INT(r->n_files, 1);
		if (r->n_files)
			CHECK_INT(r->files[0].events, N);
		CHECK_INT(r->n_machines, N);
		tm_report_free(r);
	}
	tm_session_close(s);
}

/* replay.c: a manifest's machines[] of N ids for that file, each packet's
 * id mapped through it. */
static void
t_manifest_machines_remap(void)
{
	struct tm_session *s = open1(many_machines_proto());
	if (!s)
		return;
	struct tm_buf b;
	tm_buf_init(&b);
	tm_buf_adds(&b, "{\"perfetto_manifest\": {\"version\": 1, \"files\": [{\"path\": "
			"\"ids.pftrace\", \"machines\": [");
	for (int i = 0; i < N; i++)
		tm_buf_addf(&b, "%s{\"id\": %d, \"name\": \"n%d\"}", i ? ", " : "", i + 1, i);
	tm_buf_adds(&b, "]}]}}");
	struct tm_manifest m;
	struct tm_error e = {0};
	CHECK_INT(tm_manifest_parse(b.data, b.len, &m, &e), TM_OK);
	tm_buf_fini(&b);
	struct tm_report *r = NULL;
	WORK_BEGIN();
	CHECK_INT(tm_session_evaluate(s, &m, &r, &e), TM_OK);
	CHECK_WORK(10 * N); /* the manifest's apply, then each id in 7 tables */
	if (r) {
		CHECK(r->error == NULL);
		if (r->n_files)
			CHECK_INT(r->files[0].events, N);
		tm_report_free(r);
	}
	tm_manifest_fini(&m);
	tm_session_close(s);
}

#define RUN_COUNTED(fn)                                                                            \
	do {                                                                                       \
		if (tm_work_count() == UINT64_MAX)                                                 \
			printf("SKIP: %s: probes are counted in the ASan build only\n", #fn);      \
		else                                                                               \
			RUN(fn);                                                                   \
	} while (0)

int
main(void)
{
	RUN_COUNTED(t_member_by_name);
	RUN_COUNTED(t_manifest_file_find);
	RUN_COUNTED(t_pack_check_paths);
	RUN_COUNTED(t_pack_check_loose_names);
	RUN_COUNTED(t_fixes_many_files);
	RUN_COUNTED(t_proto_machine_ids);
	RUN_COUNTED(t_manifest_machines_remap);
	fx_cleanup();
	return 0;
}

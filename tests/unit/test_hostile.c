/* SPDX-License-Identifier: MIT */
/*
 * Hostile inputs at the engine's API: no silent wrong answer.
 *  - archives nested deeper than tracemerge expands: trace_processor reads
 *    every level, so the report is incomplete, not ok, and says why;
 *  - ZIPs cut anywhere inside an entry: trace_processor drops the partial
 *    entry without a word; we predict that and warn (ours);
 *  - our own caps (a JSON token over 64 MiB, a packet over 256 MiB) name the
 *    archive and the member, and are not passed off as trace_processor's;
 *  - zlib running out of memory (gzip input, a ZIP member, compressed_packets)
 *    is the engine's out of memory (the hook says so, then abort), never
 *    trace_processor's "Failed to decompress".
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "input.h"
#include "t.h"
#include "tarfix.h"

static const char EV[] = "{\"traceEvents\":[{\"ph\":\"i\",\"ts\":5,\"pid\":1,\"tid\":1,"
			 "\"name\":\"x\",\"s\":\"g\"}]}\n";

static struct tm_report *
evaluate(const char *path, struct tm_session **sp)
{
	const char *pp[1] = {path};
	struct tm_error e = {0};
	*sp = NULL;
	if (tm_session_open(sp, pp, 1, NULL, &e) != TM_OK) {
		snprintf(t_why_, sizeof t_why_, "open: %s", e.msg);
		t_failed_ = 1;
		return NULL;
	}
	struct tm_report *r = NULL;
	if (tm_session_evaluate(*sp, NULL, &r, &e) != TM_OK) {
		snprintf(t_why_, sizeof t_why_, "evaluate: %s", e.msg);
		t_failed_ = 1;
	}
	return r;
}

static const char *
verdict(const struct tm_report *r)
{
	static char v[2048];
	struct tm_buf b;
	tm_buf_init(&b);
	tm_report_verdict(r, &b);
	snprintf(v, sizeof v, "%s", b.data);
	tm_buf_fini(&b);
	return v;
}

static uint64_t
events_of(const struct tm_report *r, const struct tm_session *s, const char *name)
{
	for (size_t i = 0; i < r->n_files; i++) {
		const struct tm_member *m = tm_session_member(s, r->files[i].member);
		if (m->name && strcmp(m->name, name) == 0)
			return r->files[i].events;
	}
	return UINT64_MAX;
}

/* d.json inside `levels` TARs: l1.tar holds d.json, l2.tar holds l1.tar... */
static const char *
nested_tar(int levels)
{
	struct fx cur = {0};
	fx_add(&cur, EV, sizeof EV - 1);
	char name[32] = "d.json";
	for (int l = 1; l <= levels; l++) {
		struct fx t = {0};
		fx_file(&t, name, cur.d, cur.n);
		fx_end(&t);
		free(cur.d);
		cur = t;
		snprintf(name, sizeof name, "l%d.tar", l);
	}
	static char path[600];
	snprintf(path, sizeof path, "%s", fx_write(name, cur.d, cur.n));
	free(cur.d);
	return path;
}

/* The top level and 8 nested TARs are expanded; the 9th level
 * (l1.tar, depth 8) is not.  It was reported ok and complete with no
 * warning, its event silently missing. */
static void
t_nested_deeper_than_8_is_incomplete(void)
{
	struct tm_session *s;
	struct tm_report *r = evaluate(nested_tar(9), &s);
	if (!r)
		return;
	CHECK(!r->ok);
	CHECK(!r->is_complete);
	CHECK(r->error == NULL);
	CHECK(strncmp(verdict(r), "Nothing dropped", 15) != 0);
	CHECK(strstr(verdict(r), "incomplete") != NULL);
	CHECK_INT(r->n_warnings, 1);
	if (r->n_warnings)
		CHECK(strstr(r->warnings[0], "l1.tar is nested more than 8 archives deep") != NULL);
	bool found = false;
	for (size_t i = 0; i < tm_session_n_members(s); i++) {
		const struct tm_member *m = tm_session_member(s, i);
		if (m->name && strcmp(m->name, "l1.tar") == 0) {
			found = true;
			CHECK(m->is_unexpanded);
			CHECK(strstr(r->files[i].placement, "not predicted") != NULL);
		}
	}
	CHECK(found);
	tm_report_free(r);
	tm_session_close(s);
}

/* 8 levels: everything expanded, the event counted, a clean verdict. */
static void
t_nested_8_is_expanded(void)
{
	struct tm_session *s;
	struct tm_report *r = evaluate(nested_tar(8), &s);
	if (!r)
		return;
	CHECK(r->ok);
	CHECK(r->is_complete);
	CHECK_INT(r->n_warnings, 0);
	CHECK_INT(events_of(r, s, "d.json"), 1);
	CHECK_STR(verdict(r), "Nothing dropped: every event lands on the shared timeline.");
	tm_report_free(r);
	tm_session_close(s);
}

static void
le16(struct fx *f, unsigned v)
{
	unsigned char b[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
	fx_add(f, b, 2);
}

static void
le32(struct fx *f, unsigned long v)
{
	unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 24)};
	fx_add(f, b, 4);
}

/* One local header + data (stored, or deflate with a data descriptor),
 * with an extra field, as zip_reader.cc reads them. */
static void
zip_entry(struct fx *f, const char *name, const char *data, bool dfl)
{
	size_t n = strlen(data);
	unsigned long crc = crc32(0, (const Bytef *)data, (uInt)n);
	unsigned char z[4096];
	size_t zn = n;
	if (dfl) {
		z_stream s;
		memset(&s, 0, sizeof s);
		deflateInit2(&s, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
		s.next_in = (Bytef *)(uintptr_t)data;
		s.avail_in = (uInt)n;
		s.next_out = z;
		s.avail_out = sizeof z;
		deflate(&s, Z_FINISH);
		zn = sizeof z - s.avail_out;
		deflateEnd(&s);
	}
	le32(f, 0x04034b50);
	le16(f, 20);
	le16(f, dfl ? 8 : 0); /* flags: data descriptor */
	le16(f, dfl ? 8 : 0);
	le16(f, 0);
	le16(f, 0);
	le32(f, dfl ? 0 : crc);
	le32(f, dfl ? 0 : zn);
	le32(f, dfl ? 0 : n);
	le16(f, (unsigned)strlen(name));
	le16(f, 9);
	fx_add(f, name, strlen(name));
	le16(f, 0x5455); /* extended timestamp */
	le16(f, 5);
	fx_add(f, "\1\0\0\0\0", 5);
	fx_add(f, dfl ? (const char *)z : data, zn);
	if (dfl) {
		le32(f, 0x08074b50);
		le32(f, crc);
		le32(f, zn);
		le32(f, n);
	}
}

/* A ZIP cut at every byte: wherever the cut falls inside an entry (header,
 * name, extra field, data, data descriptor), trace_processor drops that
 * entry silently (ZipReader waits for bytes that never come); we predict
 * that and say so.  Cuts in the name and in the extra field were silent. */
static void
t_zip_truncated_anywhere_warns(void)
{
	for (int deflate = 0; deflate < 2; deflate++) {
		struct fx z = {0};
		zip_entry(&z, "a.json", EV, deflate);
		size_t end_a = z.n;
		zip_entry(&z, "b.json", EV, deflate);
		size_t end_b = z.n;
		for (size_t cut = 4; cut < end_b && !t_failed_; cut++) { /* 4: the magic */
			if (cut == end_a)
				continue; /* a clean end after a.json */
			struct tm_input in;
			struct tm_error e = {0};
			const char *p[1] = {fx_write("cut.zip", z.d, cut)};
			CHECK_INT(tm_input_open(&in, p, 1, &e), TM_OK);
			size_t want = cut < end_a ? 1 : 2; /* the top level, a.json */
			CHECK_INT(in.n_members, want);
			CHECK(in.fatal == NULL);
			CHECK(in.warning != NULL);
			if (in.warning)
				CHECK(strstr(in.warning, "trace_processor drops the incomplete entry") !=
				      NULL);
			if (t_failed_)
				snprintf(t_why_ + strlen(t_why_), sizeof t_why_ - strlen(t_why_),
					 " (deflate %d, cut at %zu)", deflate, cut);
			tm_input_close(&in);
		}
		free(z.d);
	}
}

/* A cap of ours inside a tar.gz named only "byte 0x10". */
static void
t_cap_errors_name_file_and_member(void)
{
	/* a JSON token over 64 MiB in b.json, inside a TAR */
	size_t big = (64u << 20) + 4096;
	char *j = malloc(big + 64);
	size_t n = (size_t)snprintf(j, 64, "{\"traceEvents\":[{\"name\":\"");
	memset(j + n, 'a', big - n);
	n = big;
	n += (size_t)snprintf(j + n, 64, "\"}]}\n");
	struct fx t = {0};
	fx_file(&t, "a.json", EV, sizeof EV - 1);
	fx_file(&t, "b.json", j, n);
	fx_end(&t);
	free(j);
	const char *path = fx_write("caps.tar", t.d, t.n);
	free(t.d);
	struct tm_session *s;
	struct tm_report *r = evaluate(path, &s);
	if (r) {
		char want[700];
		snprintf(want, sizeof want, "%s: b.json: byte 0x10: JSON token or event larger than 64 MiB",
			 path);
		CHECK_STR(r->error, want);
		CHECK(r->error_is_ours);
		CHECK(!r->is_complete);
		CHECK(r->hint && strstr(r->hint, "not of trace_processor"));
		CHECK(strncmp(verdict(r), "tracemerge cannot predict this import: ", 39) == 0);
		tm_report_free(r);
		tm_session_close(s);
	}
	/* a packet that claims 300 MiB, as the second member, cut off after 4
	 * bytes: the member ends inside it, which trace_processor ignores (as
	 * any cut-off packet); our cap is not named (it was) */
	unsigned char pk[16] = {0x0a};
	size_t k = 1;
	for (unsigned long long v = 300ull << 20; v; v >>= 7)
		pk[k++] = (unsigned char)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
	struct fx t2 = {0};
	fx_file(&t2, "a.json", EV, sizeof EV - 1);
	fx_file(&t2, "big.pftrace", pk, k + 4);
	fx_end(&t2);
	path = fx_write("caps2.tar", t2.d, t2.n);
	free(t2.d);
	r = evaluate(path, &s);
	if (r) {
		CHECK(r->error == NULL);
		CHECK_INT(r->n_warnings, 1);
		if (r->n_warnings)
			CHECK_STR(r->warnings[0], "big.pftrace: byte 0 (0x0): the member ends inside a "
						  "packet (10 bytes of it present); trace_processor "
						  "ignores the cut-off packet");
		tm_report_free(r);
		tm_session_close(s);
	}
	/* the whole packet there (a sparse file): our cap, named */
	size_t h = 1;
	unsigned long long want_len = (256ull << 20) + 10;
	for (unsigned long long v = want_len; v; v >>= 7)
		pk[h++] = (unsigned char)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
	path = fx_write("huge.pftrace", pk, h);
	CHECK_INT(truncate(path, (off_t)(h + want_len)), 0);
	r = evaluate(path, &s);
	if (r) {
		char want[700];
		snprintf(want, sizeof want,
			 "%s: byte 0x0: a trace packet larger than 256 MiB is not supported", path);
		CHECK_STR(r->error, want);
		CHECK(r->error_is_ours);
		tm_report_free(r);
		tm_session_close(s);
	}
}

/* ---- zlib's own allocations ---- */

static int oom_fd = -1;

static void
oom_said(size_t bytes)
{
	char m[64];
	int n = snprintf(m, sizeof m, "oom %zu\n", bytes);
	if (write(oom_fd, m, (size_t)n) < 0)
		_exit(3);
}

/* Evaluate path in a child whose nth zlib allocation fails.  Returns what
 * the child said through the OOM hook ("" if nothing), *sig the signal that
 * ended it (0: it exited, *verdict_out its verdict). */
static const char *
zalloc_fail_run(const char *path, unsigned long nth, int *sig, char *vout, size_t vcap)
{
	static char said[256];
	int pipes[2], vp[2];
	said[0] = 0;
	*sig = -1;
	vout[0] = 0;
	if (pipe(pipes) != 0 || pipe(vp) != 0)
		return said;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit no_core = {0, 0};
		setrlimit(RLIMIT_CORE, &no_core);
		signal(SIGABRT, SIG_DFL);
		close(pipes[0]);
		close(vp[0]);
		oom_fd = pipes[1];
		tm_set_oom_hook(oom_said);
		tm_zalloc_fail_nth = nth;
		struct tm_session *s;
		struct tm_report *r = evaluate(path, &s);
		const char *v = r ? verdict(r) : t_why_;
		if (write(vp[1], v, strlen(v)) < 0)
			_exit(3);
		_exit(0);
	}
	close(pipes[1]);
	close(vp[1]);
	size_t n = 0;
	ssize_t k;
	while (n + 1 < sizeof said && (k = read(pipes[0], said + n, sizeof said - 1 - n)) > 0)
		n += (size_t)k;
	said[n] = 0;
	n = 0;
	while (n + 1 < vcap && (k = read(vp[0], vout + n, vcap - 1 - n)) > 0)
		n += (size_t)k;
	vout[n] = 0;
	close(pipes[0]);
	close(vp[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	*sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	return said;
}

static void
zalloc_fail_check(const char *what, const char *path)
{
	/* 1: inflateInit2's state; 2: the window, at the first inflate() */
	for (unsigned long nth = 1; nth <= 2 && !t_failed_; nth++) {
		int sig;
		char v[600];
		const char *said = zalloc_fail_run(path, nth, &sig, v, sizeof v);
		if (sig != SIGABRT || strncmp(said, "oom ", 4) != 0 || strtoull(said + 4, NULL, 10) == 0) {
			t_failed_ = 1;
			snprintf(t_why_, sizeof t_why_,
				 "%s, zlib allocation %lu fails: signal %d, hook said \"%.40s\", "
				 "verdict \"%.300s\"", what, nth, sig, said, v);
		}
	}
}

static size_t
put_varint(unsigned char *p, unsigned long long v)
{
	size_t k = 0;
	do {
		p[k++] = (unsigned char)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return k;
}

static void
t_zlib_out_of_memory_is_ours(void)
{
	/* Inputs that inflate to more than one output block, so that zlib
	 * allocates its window too (the second allocation). */
	enum { N_EV = 20000 };
	struct fx js = {0};
	fx_add(&js, "{\"traceEvents\":[", 16);
	for (int i = 0; i < N_EV; i++) {
		char ev[128];
		int n = snprintf(ev, sizeof ev, "%s{\"ph\":\"i\",\"ts\":%d,\"pid\":1,\"tid\":1,\"name\":\"x\",\"s\":\"g\"}",
				 i ? "," : "", i);
		fx_add(&js, ev, (size_t)n);
	}
	fx_add(&js, "]}\n", 3);

	/* a gzip'd JSON trace */
	uLong cap = compressBound(js.n) + 64;
	unsigned char *gz = malloc(cap);
	z_stream z;
	memset(&z, 0, sizeof z);
	CHECK(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
	z.next_in = (Bytef *)js.d;
	z.avail_in = (uInt)js.n;
	z.next_out = gz;
	z.avail_out = (uInt)cap;
	CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
	size_t gzn = cap - z.avail_out;
	deflateEnd(&z);
	zalloc_fail_check("gzip input", fx_write("oom.json.gz", gz, gzn));
	free(gz);

	/* a ZIP with that JSON deflated, written by zip(1) if there is one */
	fx_write("oom-member.json", js.d, js.n);
	free(js.d);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "cd '%s' && zip -q -9 oom.zip oom-member.json 2>/dev/null", fx_dir);
	if (system(cmd) == 0)
		zalloc_fail_check("ZIP member", fx_path("oom.zip"));

	/* a proto trace whose one packet is compressed_packets (field 50)
	 * holding N_EV packets with a timestamp each */
	struct fx inner = {0};
	for (int i = 0; i < N_EV; i++)
		fx_add(&inner, "\x0a\x02\x40\x05", 4);
	uLongf zn = compressBound(inner.n);
	unsigned char *zb = malloc(zn), *pt = malloc(zn + 32);
	CHECK(compress(zb, &zn, inner.d, inner.n) == Z_OK);
	free(inner.d);
	unsigned char field[16];
	size_t fl = 2 + put_varint(field + 2, zn);
	field[0] = 0x92; /* field 50, length-delimited */
	field[1] = 0x03;
	size_t k = 0;
	pt[k++] = 0x0a;
	k += put_varint(pt + k, fl + zn);
	memcpy(pt + k, field, fl);
	k += fl;
	memcpy(pt + k, zb, zn);
	k += zn;
	const char *pf = fx_write("oom.pftrace", pt, k);
	free(zb);
	free(pt);
	zalloc_fail_check("compressed_packets", pf);

	/* the same trace, no failure injected: no word from the hook, no
	 * "Failed to decompress" */
	int sig;
	char v[600];
	const char *said = zalloc_fail_run(fx_path("oom.pftrace"), 0, &sig, v, sizeof v);
	CHECK_INT(sig, 0);
	CHECK_STR(said, "");
	CHECK(strstr(v, "Failed to decompress") == NULL);
}

int
main(void)
{
	RUN(t_nested_deeper_than_8_is_incomplete);
	RUN(t_nested_8_is_expanded);
	RUN(t_zip_truncated_anywhere_warns);
	RUN(t_cap_errors_name_file_and_member);
	RUN(t_zlib_out_of_memory_is_ours);
	fx_cleanup();
	return 0;
}

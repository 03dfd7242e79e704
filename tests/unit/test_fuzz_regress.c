/* SPDX-License-Identifier: MIT */
/*
 * Fuzz regressions and hand-written hostile inputs, under the normal ASan
 * build.  Every file in tests/fuzz/regress/ (found from $TM_TOP, else the
 * current directory) is fed to the entry point its name starts with
 * (fuzz_manifest-, fuzz_scan_proto-, fuzz_scan_json-, fuzz_scan_systrace-,
 * fuzz_input-, fuzz_escape-), with the same framing and checks as the
 * libFuzzer target of that name.  Inputs named open-<target>-... reproduce
 * bugs not fixed yet (in files the fuzzing owner may not edit): they print
 * SKIP and are not run.  The hostile cases must each end with an error or a
 * result: no crash, no hang, no memory blow-up.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "scan.h"
#include "scan_helpers.h"
#include "t.h"
#include "tarfix.h"

/* ------------------------------------------------------------------ */
/* helpers                                                              */
/* ------------------------------------------------------------------ */

static unsigned char *
slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	struct fx b = {0};
	unsigned char tmp[65536];
	size_t k;
	if (!fp)
		return NULL;
	while ((k = fread(tmp, 1, sizeof tmp, fp)) > 0)
		fx_add(&b, tmp, k);
	fclose(fp);
	*n = b.n;
	if (!b.d)
		b.d = malloc(1);
	return b.d;
}

/* A session over one file: open, evaluate with the input's own manifest,
 * free.  Returns the status of the first failing step (TM_OK if none); a
 * returned error must have a message. */
static enum tm_status
run_session(const char *path, bool keep, char *msg, size_t msg_len)
{
	const char *paths[1] = {path};
	struct tm_session *s = NULL;
	struct tm_error err = {0};
	struct tm_session_opts opts = {.keep_events = keep};
	enum tm_status rc = tm_session_open(&s, paths, 1, &opts, &err);
	if (rc == TM_OK) {
		struct tm_report *r = NULL;
		rc = tm_session_evaluate(s, NULL, &r, &err);
		if (rc == TM_OK) {
			CHECK(r != NULL);
			if (r && r->error)
				snprintf(msg, msg_len, "%s", r->error);
			tm_report_free(r);
		}
		tm_session_close(s);
	}
	if (rc != TM_OK) {
		CHECK(err.msg[0] != 0);
		snprintf(msg, msg_len, "%s", err.msg);
	}
	if (getenv("TM_REGRESS_VERBOSE")) /* what each hostile input ends with */
		printf("  %s: %s: %s\n", strrchr(path, '/') ? strrchr(path, '/') + 1 : path,
		       tm_status_str(rc), msg[0] ? msg : "(no error)");
	return rc;
}

/* The same outcome and the same scan (scan_helpers.h), each log finished
 * as a session finishes it. */
static bool
same_outcome(struct tm_scan *a, enum tm_status ra, struct tm_scan *b, enum tm_status rb)
{
	tm_oplog_finish(&a->log);
	tm_oplog_finish(&b->log);
	return ra == rb && same_scan(a, b);
}

/* ------------------------------------------------------------------ */
/* entry points, as the fuzz targets drive them                         */
/* ------------------------------------------------------------------ */

static void
one_manifest(const unsigned char *d, size_t n)
{
	struct tm_manifest m1, m2;
	struct tm_error err = {0};
	if (tm_manifest_parse((const char *)d, n, &m1, &err) != TM_OK) {
		CHECK(err.msg[0] != 0);
		tm_manifest_fini(&m1);
		return;
	}
	struct tm_buf e1, e2;
	tm_buf_init(&e1);
	tm_buf_init(&e2);
	tm_manifest_emit(&m1, &e1);
	bool ok = tm_manifest_parse(e1.data, e1.len, &m2, &err) == TM_OK;
	CHECK(ok);
	if (ok) {
		tm_manifest_emit(&m2, &e2);
		CHECK(e1.len == e2.len && !memcmp(e1.data, e2.data, e1.len));
		CHECK(tm_manifest_equal(&m1, &m2));
	}
	tm_manifest_fini(&m2);
	tm_manifest_fini(&m1);
	tm_buf_fini(&e1);
	tm_buf_fini(&e2);
}

struct feed {
	const uint8_t *p;
	size_t n, off;
	const uint8_t *sizes;
	size_t n_sizes, k, mul;
};

static enum tm_status
next_block(void *ctx, const uint8_t **p, size_t *n, struct tm_error *err)
{
	struct feed *f = ctx;
	(void)err;
	size_t want = f->n - f->off;
	if (f->n_sizes) {
		size_t s = ((size_t)f->sizes[f->k++ % f->n_sizes] + 1) * f->mul;
		if (s < want)
			want = s;
	} else if (f->mul && want > 1) {
		want = 1;
	}
	*p = f->p + f->off;
	*n = want;
	f->off += want;
	return TM_OK;
}

/* [h] [h&7 size bytes] trace (see tests/fuzz/fuzz_scan_proto.c) */
static void
one_scan_proto(const unsigned char *d, size_t n)
{
	if (n < 1 || n < 1 + (size_t)(d[0] & 7))
		return;
	size_t ns = d[0] & 7;
	struct tm_scan_ctl ctl = {.keep_events = (d[0] & 8) != 0};
	struct feed whole = {.p = d + 1 + ns, .n = n - 1 - ns};
	struct feed split = {.p = d + 1 + ns, .n = n - 1 - ns, .sizes = d + 1, .n_sizes = ns,
			     .mul = (d[0] & 16) ? 61 : 1};
	struct tm_scan a, b;
	struct tm_error ea = {0}, eb = {0};
	tm_scan_init(&a, TM_FMT_PROTO);
	tm_scan_init(&b, TM_FMT_PROTO);
	enum tm_status ra = tm_scan_proto_blocks(next_block, &whole, &a, &ctl, &ea);
	enum tm_status rb = tm_scan_proto_blocks(next_block, &split, &b, &ctl, &eb);
	CHECK(same_outcome(&a, ra, &b, rb));
	tm_scan_fini(&a);
	tm_scan_fini(&b);
}

/* [h0 h1] text (see tests/fuzz/fuzz_scan_json.c) */
static void
one_scan_text(const unsigned char *d, size_t n, bool json)
{
	if (n < 2)
		return;
	size_t block = ((size_t)d[0] | ((size_t)(d[1] & 0x7f) << 8)) % 4099 + 1;
	struct tm_scan_ctl ctl = {.keep_events = (d[1] & 0x80) != 0};
	size_t blocks[3] = {0, block, 1};
	struct tm_scan sc[3];
	enum tm_status rc[3];
	int runs = n - 2 <= 4096 ? 3 : 2;
	for (int i = 0; i < runs; i++) {
		struct tm_error err = {0};
		tm_scan_init(&sc[i], json ? TM_FMT_JSON : TM_FMT_SYSTRACE);
		rc[i] = json ? tm_scan_json_mem(d + 2, n - 2, blocks[i], &sc[i], &ctl, &err)
			     : tm_scan_systrace_mem(d + 2, n - 2, blocks[i], &sc[i], &ctl, &err);
	}
	for (int i = 1; i < runs; i++)
		CHECK(same_outcome(&sc[0], rc[0], &sc[i], rc[i]));
	for (int i = 0; i < runs; i++)
		tm_scan_fini(&sc[i]);
}

static void
one_input(const unsigned char *d, size_t n)
{
	char msg[1024] = "";
	const char *p = fx_write("regress.input", d, n);
	(void)run_session(p, n & 1, msg, sizeof msg);
}

static void
one_escape(const unsigned char *d, size_t n)
{
	struct tm_buf out;
	tm_buf_init(&out);
	size_t cols = tm_escape_display((const char *)d, n, &out, NULL, 0, NULL);
	CHECK(out.data && strlen(out.data) == out.len);
	CHECK(cols <= 4 * n && cols <= out.len);
	for (size_t i = 0; i < out.len; i++)
		CHECK((unsigned char)out.data[i] >= 0x20 && out.data[i] != 0x7f);
	tm_buf_fini(&out);
}

/* ------------------------------------------------------------------ */
/* replay tests/fuzz/regress/                                           */
/* ------------------------------------------------------------------ */

static const struct {
	const char *prefix;
	int kind;
} targets[] = {
	{"fuzz_manifest-", 0}, {"fuzz_scan_proto-", 1}, {"fuzz_scan_json-", 2},
	{"fuzz_scan_systrace-", 3}, {"fuzz_input-", 4}, {"fuzz_escape-", 5},
};

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
regress_dir(void)
{
	char dir[4096];
	const char *top = getenv("TM_TOP");
	snprintf(dir, sizeof dir, "%s/tests/fuzz/regress", top && *top ? top : ".");
	DIR *dp = opendir(dir);
	if (!dp) {
		printf("FAIL: regress: cannot open %s\n", dir);
		return;
	}
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(dp)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof *names);
		names[n++] = strdup(de->d_name);
	}
	closedir(dp);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	for (size_t i = 0; i < n; i++) {
		const char *nm = names[i];
		bool is_open = !strncmp(nm, "open-", 5);
		const char *base = is_open ? nm + 5 : nm;
		int kind = -1;
		for (size_t k = 0; k < sizeof targets / sizeof targets[0]; k++)
			if (!strncmp(base, targets[k].prefix, strlen(targets[k].prefix)))
				kind = targets[k].kind;
		if (!strncmp(base, "fuzz_scancache-", 15))
			continue; /* (test_fuzz_scancache: it needs the target's set-up) */
		if (kind < 0) {
			printf("FAIL: regress %s: name matches no fuzz target\n", nm);
			continue;
		}
		if (is_open) {
			printf("SKIP: regress %s: open bug, see tests/fuzz/README.md\n", nm);
			continue;
		}
		char path[8192];
		size_t len = 0;
		snprintf(path, sizeof path, "%s/%s", dir, nm);
		unsigned char *d = slurp(path, &len);
		t_failed_ = 0;
		t_why_[0] = 0;
		if (!d) {
			printf("FAIL: regress %s: cannot read\n", nm);
			continue;
		}
		switch (kind) {
		case 0: one_manifest(d, len); break;
		case 1: one_scan_proto(d, len); break;
		case 2: one_scan_text(d, len, true); break;
		case 3: one_scan_text(d, len, false); break;
		case 4: one_input(d, len); break;
		default: one_escape(d, len); break;
		}
		free(d);
		if (t_failed_)
			printf("FAIL: regress %s: %s\n", nm, t_why_);
		else
			printf("PASS: regress %s\n", nm);
		fflush(stdout);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* ------------------------------------------------------------------ */
/* hand-written hostile inputs                                          */
/* ------------------------------------------------------------------ */

static long
maxrss_mib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024; /* KiB on Linux */
}

/* 1 GiB of zeros, gzip'd with zlib (about 1 MiB), opened as a single
 * gzip'd trace and as a TAR member of it: evaluate must stream or cap, not
 * hold the inflated bytes. */
static void
gzip_bomb(void)
{
	const char *path = fx_path("bomb.gz");
	FILE *fp = fopen(path, "wb");
	CHECK(fp != NULL);
	if (!fp)
		return;
	z_stream z;
	memset(&z, 0, sizeof z);
	CHECK(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) == Z_OK);
	static unsigned char zeros[1 << 20], out[1 << 16];
	for (int i = 0; i <= 1024; i++) {
		z.next_in = zeros;
		z.avail_in = i < 1024 ? sizeof zeros : 0;
		do {
			z.next_out = out;
			z.avail_out = sizeof out;
			int rc = deflate(&z, i < 1024 ? Z_NO_FLUSH : Z_FINISH);
			CHECK(rc != Z_STREAM_ERROR);
			fwrite(out, 1, sizeof out - z.avail_out, fp);
		} while (z.avail_out == 0);
	}
	deflateEnd(&z);
	fclose(fp);
	long before = maxrss_mib();
	char msg[1024] = "";
	(void)run_session(path, false, msg, sizeof msg);
	long after = maxrss_mib();
	if (after >= 512)
		printf("  gzip bomb: maxrss %ld MiB (before %ld)\n", after, before);
	CHECK(after < 512);
}

/* Same bomb, but the inflated stream starts like a proto trace whose first
 * packet claims 1 GiB (a scanner must not buffer a packet that big). */
static void
gzip_bomb_proto(void)
{
	const char *path = fx_path("bomb.pb.gz");
	gzFile g = gzopen(path, "wb9");
	CHECK(g != NULL);
	if (!g)
		return;
	unsigned char hdr[6] = {0x0a, 0x80, 0x80, 0x80, 0x80, 0x04}; /* field 1, len 2^30 */
	gzwrite(g, hdr, sizeof hdr);
	static unsigned char zeros[1 << 20];
	for (int i = 0; i < 1024; i++)
		gzwrite(g, zeros, sizeof zeros);
	gzclose(g);
	char msg[1024] = "";
	(void)run_session(path, false, msg, sizeof msg);
	long after = maxrss_mib();
	if (after >= 512)
		printf("  proto gzip bomb: maxrss %ld MiB\n", after);
	CHECK(after < 512);
}

/* A gzip'd systrace whose first line never ends (1 GiB): the scanner must
 * cap the line (64 MiB), not buffer the member. */
static void
gzip_bomb_systrace(void)
{
	const char *path = fx_path("bomb.systrace.gz");
	gzFile g = gzopen(path, "wb9");
	CHECK(g != NULL);
	if (!g)
		return;
	gzputs(g, "# tracer: nop ");
	static unsigned char as[1 << 20];
	memset(as, 'a', sizeof as);
	for (int i = 0; i < 1024; i++)
		gzwrite(g, as, sizeof as);
	gzclose(g);
	char msg[1024] = "";
	(void)run_session(path, false, msg, sizeof msg);
	long after = maxrss_mib();
	if (after >= 512)
		printf("  systrace gzip bomb: maxrss %ld MiB\n", after);
	CHECK(after < 512);
}

static void
fx_hdr_b256(struct fx *f, const char *name, const unsigned char size[12])
{
	unsigned char h[512] = {0};
	snprintf((char *)h, 100, "%s", name);
	memcpy(h + 100, "0000644", 8);
	memcpy(h + 124, size, 12);
	h[156] = '0';
	memcpy(h + 257, "ustar\0" "00", 8);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	fx_add(f, h, 512);
}

/* TAR headers whose size field claims 8 EiB (base-256: 2^63, and 2^63-1),
 * and 8 GiB in octal, followed by a few bytes: an error naming the member
 * and offset, or a result; never an allocation of the claim. */
static void
tar_huge_size(void)
{
	unsigned char s63[12] = {0x80, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0};
	unsigned char s63m1[12] = {0x80, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	unsigned char smax[12];
	memset(smax, 0xff, sizeof smax); /* base-256 negative (-1) */
	const unsigned char *sizes[3] = {s63, s63m1, smax};
	for (int i = 0; i < 4; i++) {
		struct fx f = {0};
		if (i < 3)
			fx_hdr_b256(&f, "a.pb", sizes[i]);
		else
			fx_hdr(&f, "a.pb", NULL, 077777777777ull, '0', 0);
		unsigned char pkt[4] = {0x0a, 0x02, 0x40, 0x01};
		fx_add(&f, pkt, sizeof pkt);
		fx_zero(&f, 508);
		fx_file(&f, "b.json", "[]", 2);
		fx_end(&f);
		const char *p = fx_write("huge.tar", f.d, f.n);
		char msg[1024] = "";
		(void)run_session(p, false, msg, sizeof msg);
		free(f.d);
	}
}

static void
le16(struct fx *f, unsigned v)
{
	unsigned char b[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
	fx_add(f, b, 2);
}

static void
le32(struct fx *f, uint32_t v)
{
	unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
			      (unsigned char)(v >> 24)};
	fx_add(f, b, 4);
}

/* A ZIP whose member claims a 4 GiB - 1 (and, with a zip64 extra field,
 * 2^63) uncompressed size over a tiny deflate stream. */
static void
zip_huge_size(void)
{
	for (int zip64 = 0; zip64 < 2; zip64++) {
		unsigned char raw[64];
		const char *text = "{\"traceEvents\":[]}";
		z_stream z;
		memset(&z, 0, sizeof z);
		deflateInit2(&z, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY);
		z.next_in = (unsigned char *)(uintptr_t)text;
		z.avail_in = (unsigned)strlen(text);
		z.next_out = raw;
		z.avail_out = sizeof raw;
		deflate(&z, Z_FINISH);
		uint32_t clen = (uint32_t)(sizeof raw - z.avail_out);
		deflateEnd(&z);
		uint32_t crc = (uint32_t)crc32(0, (const unsigned char *)text, (unsigned)strlen(text));
		const char *name = "a.json";
		unsigned nlen = (unsigned)strlen(name);
		unsigned char x64[20] = {0x01, 0x00, 16, 0x00, 0, 0, 0, 0, 0, 0, 0, 0x80};
		memcpy(x64 + 12, &clen, 4); /* compressed size, little-endian host */
		struct fx f = {0};
		for (int central = 0; central < 2; central++) {
			if (central)
				le32(&f, 0x02014b50), le16(&f, 45);
			else
				le32(&f, 0x04034b50);
			le16(&f, 45), le16(&f, 0), le16(&f, 8), le16(&f, 0), le16(&f, 0);
			le32(&f, crc);
			le32(&f, zip64 ? 0xffffffffu : clen);
			le32(&f, 0xffffffffu);
			le16(&f, nlen), le16(&f, zip64 ? 20 : 0);
			if (central) {
				le16(&f, 0), le16(&f, 0), le16(&f, 0);
				le32(&f, 0), le32(&f, 0);
			}
			fx_add(&f, name, nlen);
			if (zip64)
				fx_add(&f, x64, sizeof x64);
			if (!central)
				fx_add(&f, raw, clen);
		}
		size_t cd_len = 46 + nlen + (zip64 ? 20u : 0u);
		size_t cd_off = f.n - cd_len;
		le32(&f, 0x06054b50), le16(&f, 0), le16(&f, 0), le16(&f, 1), le16(&f, 1);
		le32(&f, (uint32_t)cd_len), le32(&f, (uint32_t)cd_off), le16(&f, 0);
		const char *p = fx_write("huge.zip", f.d, f.n);
		char msg[1024] = "";
		(void)run_session(p, false, msg, sizeof msg);
		free(f.d);
	}
}

/* A proto packet whose length varint is 2^63 (and 2^64-1): scanned from
 * memory in one block and byte by byte, and as a file. */
static void
proto_len_2_63(void)
{
	static const unsigned char t63[] = {0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					    0x80, 0x80, 0x80, 0x01, 0x40, 0x01};
	static const unsigned char tmax[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					     0xff, 0xff, 0xff, 0x01, 0x40, 0x01};
	static const unsigned char t11[] = {0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
					    0x80, 0x80, 0x80, 0x80, 0x01};
	const unsigned char *ts[3] = {t63, tmax, t11};
	size_t lens[3] = {sizeof t63, sizeof tmax, sizeof t11};
	for (int i = 0; i < 3; i++) {
		unsigned char framed[32];
		framed[0] = 0;
		memcpy(framed + 1, ts[i], lens[i]);
		one_scan_proto(framed, lens[i] + 1);
		framed[0] = 0x01;
		framed[1] = 0;
		memcpy(framed + 2, ts[i], lens[i]);
		one_scan_proto(framed, lens[i] + 2);
		char msg[1024] = "";
		(void)run_session(fx_write("len.pb", ts[i], lens[i]), false, msg, sizeof msg);
	}
}

static void
repeat(struct fx *f, const char *s, size_t times)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < times; i++)
		fx_add(f, s, n);
}

/* JSON nested 10^6 deep: inside an event's args, as an event, and around the
 * top level; scanned in memory and as a file. */
static void
json_deep(void)
{
	for (int form = 0; form < 3; form++) {
		struct fx f = {0};
		const size_t depth = 1000000;
		if (form == 0) {
			repeat(&f, "{\"traceEvents\":[{\"ph\":\"i\",\"ts\":1,\"args\":", 1);
			repeat(&f, "{\"a\":[", depth / 2);
			repeat(&f, "]}", depth / 2);
			repeat(&f, "}]}", 1);
		} else if (form == 1) {
			repeat(&f, "[", depth + 1);
			repeat(&f, "]", depth + 1);
		} else {
			repeat(&f, "{\"x\":", depth); /* unterminated */
		}
		for (size_t block = 0; block <= 4096; block += 4096) {
			struct tm_scan sc;
			struct tm_error err = {0};
			tm_scan_init(&sc, TM_FMT_JSON);
			enum tm_status rc = tm_scan_json_mem(f.d, f.n, block, &sc, NULL, &err);
			CHECK(rc == TM_OK || err.msg[0] != 0);
			tm_scan_fini(&sc);
		}
		char msg[1024] = "";
		(void)run_session(fx_write("deep.json", f.d, f.n), false, msg, sizeof msg);
		free(f.d);
	}
}

/* A manifest nested 10^5 deep (in an unknown key, which is kept as a cJSON
 * tree, and in a known one): a parse error, not a stack overflow. */
static void
manifest_deep(void)
{
	for (int form = 0; form < 2; form++) {
		struct fx f = {0};
		const size_t depth = 100000;
		repeat(&f, "{\"perfetto_manifest\":{\"version\":1,", 1);
		repeat(&f, form ? "\"files\":" : "\"zz\":", 1);
		repeat(&f, "[", depth);
		repeat(&f, "]", depth);
		repeat(&f, "}}", 1);
		struct tm_manifest m;
		struct tm_error err = {0};
		enum tm_status rc = tm_manifest_parse((const char *)f.d, f.n, &m, &err);
		CHECK(rc == TM_OK || err.msg[0] != 0);
		tm_manifest_fini(&m);
		free(f.d);
	}
}

int
main(void)
{
	RUN(gzip_bomb); /* first: ru_maxrss is the process's peak */
	RUN(gzip_bomb_proto);
	RUN(gzip_bomb_systrace);
	regress_dir();
	RUN(tar_huge_size);
	RUN(zip_huge_size);
	RUN(proto_len_2_63);
	RUN(json_deep);
	RUN(manifest_deep);
	fx_cleanup();
	return 0;
}

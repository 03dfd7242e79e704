/* SPDX-License-Identifier: MIT */
/* TAR writer: read back with GNU tar, bsdtar and our own reader, byte-
 * identical extraction, 255-byte names via the prefix field, base-256 sizes
 * (header encoder only), atomic behaviour. */
#include <dirent.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "input.h"
#include "t.h"
#include "tarfix.h"

static struct tm_error err;

static char long_name[256];

static int
count_tmp(void)
{
	DIR *d = opendir(fx_dir);
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".tmp-"))
			n++;
	closedir(d);
	return n;
}

static void
t_roundtrip(void)
{
	char in0[600], out[600];
	snprintf(in0, sizeof in0, "%s", fx_write("seed", "x", 1));
	snprintf(out, sizeof out, "%s", fx_path("out.tar"));
	/* 155 bytes of directories, '/', 99 of name = 255 */
	memset(long_name, 'd', 155);
	long_name[60] = '/';
	long_name[155] = '/';
	memset(long_name + 156, 'f', 99);
	long_name[255] = 0;
	static char big[70000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (char)('a' + i % 26);
	struct tm_tar_writer *w;
	const char *ins[1] = {in0};
	CHECK_INT(tm_tar_begin(&w, out, &(struct tm_output){ins, 1, false, false, 0}, true, 0, &err), TM_OK);
	CHECK_INT(tm_tar_add(w, "perfetto_manifest.json", 26, &err), TM_OK);
	CHECK_INT(tm_tar_write(w, "{\"perfetto_manifest\":{}}\n\n", 26, &err), TM_OK);
	CHECK_INT(tm_tar_add(w, long_name, sizeof big, &err), TM_OK);
	CHECK_INT(tm_tar_write(w, big, 1000, &err), TM_OK);
	CHECK_INT(tm_tar_write(w, big + 1000, sizeof big - 1000, &err), TM_OK);
	CHECK_INT(tm_tar_add(w, "empty", 0, &err), TM_OK);
	CHECK_INT(tm_tar_commit(w, &err), TM_OK);
	CHECK_INT(count_tmp(), 0);
	struct stat sb;
	CHECK(stat(out, &sb) == 0 && sb.st_size % 10240 == 0);

	char cmd[2048];
	snprintf(cmd, sizeof cmd, "tar -tvf '%s' >/dev/null 2>&1", out);
	CHECK_INT(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "bsdtar -tvf '%s' >/dev/null 2>&1", out);
	CHECK_INT(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "tar -tf '%s' | grep -qx '%s'", out, long_name);
	CHECK_INT(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "bsdtar -tf '%s' | grep -qx '%s'", out, long_name);
	CHECK_INT(system(cmd), 0);
	const char *bigp = fx_write("big.expected", big, sizeof big);
	snprintf(cmd, sizeof cmd, "tar -xOf '%s' '%s' | cmp -s - '%s'", out, long_name, bigp);
	CHECK_INT(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "bsdtar -xOf '%s' '%s' | cmp -s - '%s'", out, long_name, bigp);
	CHECK_INT(system(cmd), 0);

	/* our reader */
	struct tm_input in;
	const char *p[1] = {out};
	CHECK_INT(tm_input_open(&in, p, 1, &err), TM_OK);
	CHECK(in.fatal == NULL);
	CHECK_INT(in.n_members, 4);
	CHECK_INT(in.members[1].format, TM_FMT_MANIFEST);
	CHECK_STR(in.members[2].name, long_name);
	CHECK_INT(in.members[2].size, sizeof big);
	struct tm_stream *st;
	const uint8_t *q;
	size_t n, tot = 0;
	CHECK_INT(tm_stream_open(&in, 2, &st, &err), TM_OK);
	int same = 1;
	do {
		CHECK_INT(tm_stream_next(st, &q, &n, &err), TM_OK);
		if (n && memcmp(q, big + tot, n) != 0)
			same = 0;
		tot += n;
	} while (n);
	CHECK(same);
	CHECK_INT(tot, sizeof big);
	tm_stream_close(st);
	tm_input_close(&in);
}

static void
t_header(void)
{
	uint8_t h[512];
	CHECK_INT(tm_tar_header(h, "a.json", 8ull << 30, 0, &err), TM_OK);
	CHECK_INT(h[124], 0x80);
	uint64_t v = 0;
	for (int i = 128; i < 136; i++)
		v = (v << 8) | h[i];
	CHECK(v == 8ull << 30);
	CHECK_INT(tm_tar_header(h, "a.json", (8ull << 30) - 1, 0, &err), TM_OK);
	CHECK(memcmp(h + 124, "77777777777", 12) == 0);
	CHECK(memcmp(h + 257, "ustar\0" "00", 8) == 0);
	CHECK(memcmp(h + 100, "0000644", 8) == 0);
	/* checksum */
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += (i >= 148 && i < 156) ? ' ' : h[i];
	char cs[8];
	snprintf(cs, sizeof cs, "%06o", sum);
	CHECK(memcmp(h + 148, cs, 7) == 0 && h[155] == ' ');
	/* names that cannot be split */
	char nm[300];
	memset(nm, 'x', 101);
	nm[101] = 0;
	CHECK_INT(tm_tar_header(h, nm, 1, 0, &err), TM_ERR_INVALID);
	memset(nm, 'x', 256);
	nm[100] = '/';
	nm[256] = 0;
	CHECK_INT(tm_tar_header(h, nm, 1, 0, &err), TM_ERR_INVALID);
	/* exactly 100 bytes: no NUL needed */
	memset(nm, 'y', 100);
	nm[100] = 0;
	CHECK_INT(tm_tar_header(h, nm, 1, 0, &err), TM_OK);
	CHECK(memcmp(h, nm, 100) == 0 && h[345] == 0);
	/* base-256 size read back by our TAR reader */
	struct fx f = {0};
	CHECK_INT(tm_tar_header(h, "b.json", 19, 0, &err), TM_OK);
	memset(h + 124, 0, 12);
	h[124] = 0x80;
	h[135] = 19;
	fx_add(&f, h, 512);
	fx_add(&f, "{\"traceEvents\":[]}\n", 19);
	fx_zero(&f, 512 - 19 + 1024);
	struct tm_input in;
	const char *p[1] = {fx_write("b256.tar", f.d, f.n)};
	CHECK_INT(tm_input_open(&in, p, 1, &err), TM_OK);
	CHECK_INT(in.members[1].size, 19);
	tm_input_close(&in);
	free(f.d);
}

static void
t_atomic(void)
{
	const char *a = fx_write("input.json", "{}", 2);
	char ap[600], lnk[600];
	snprintf(ap, sizeof ap, "%s", a);
	struct tm_tar_writer *w;
	const char *ins[1] = {ap};
	CHECK_INT(tm_tar_begin(&w, ap, &(struct tm_output){ins, 1, false, false, 0}, true, 0, &err), TM_ERR_INVALID);
	/* same inode under another name */
	snprintf(lnk, sizeof lnk, "%s", fx_path("hardlink.tar"));
	CHECK(link(ap, lnk) == 0);
	CHECK_INT(tm_tar_begin(&w, lnk, &(struct tm_output){ins, 1, false, false, 0}, true, 0, &err), TM_ERR_INVALID);
	/* abort leaves nothing */
	char out[600];
	snprintf(out, sizeof out, "%s", fx_path("aborted.tar"));
	CHECK_INT(tm_tar_begin(&w, out, &(struct tm_output){ins, 1, false, false, 0}, false, 12345, &err), TM_OK);
	CHECK_INT(tm_tar_add(w, "x", 10, &err), TM_OK);
	CHECK_INT(count_tmp(), 1);
	tm_tar_abort(w);
	CHECK_INT(count_tmp(), 0);
	struct stat sb;
	CHECK(stat(out, &sb) != 0);
	/* a short member fails the commit and removes the temp file */
	CHECK_INT(tm_tar_begin(&w, out, &(struct tm_output){ins, 1, false, false, 0}, false, 12345, &err), TM_OK);
	CHECK_INT(tm_tar_add(w, "x", 10, &err), TM_OK);
	CHECK_INT(tm_tar_write(w, "abc", 3, &err), TM_OK);
	CHECK(tm_tar_write(w, "0123456789", 10, &err) != TM_OK);
	CHECK(tm_tar_commit(w, &err) != TM_OK);
	CHECK_INT(count_tmp(), 0);
	CHECK(stat(out, &sb) != 0);
	/* a name that cannot be written */
	char nm[300];
	memset(nm, 'q', 200);
	nm[200] = 0;
	CHECK_INT(tm_tar_begin(&w, out, &(struct tm_output){ins, 1, false, false, 0}, false, 0, &err), TM_OK);
	CHECK_INT(tm_tar_add(w, nm, 1, &err), TM_ERR_INVALID);
	tm_tar_abort(w);
	CHECK_INT(count_tmp(), 0);
}

/* Outputs that are not regular files are refused, never replaced; a huge
 * member name is shortened in the error so the reason survives. */
static void
t_special_outputs(void)
{
	char fifo[600], lnk[600], reg[600], dir[600];
	snprintf(fifo, sizeof fifo, "%s", fx_path("fifo.tar"));
	CHECK(mkfifo(fifo, 0600) == 0);
	snprintf(lnk, sizeof lnk, "%s", fx_path("null.tar"));
	CHECK(symlink("/dev/null", lnk) == 0);
	snprintf(dir, sizeof dir, "%s", fx_path("adir"));
	CHECK(mkdir(dir, 0700) == 0);
	snprintf(reg, sizeof reg, "%s", fx_path("reg.json"));
	const char *ins[1] = {"/nonexistent-input"};
	struct tm_tar_writer *w = NULL;
	struct stat sb;
	CHECK_INT(tm_tar_begin(&w, fifo, &(struct tm_output){ins, 1, false, false, 0}, true, 0, &err), TM_ERR_INVALID);
	CHECK(strstr(err.msg, "is a FIFO: refusing to replace it") != NULL);
	CHECK(stat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode));
	CHECK_INT(tm_tar_begin(&w, lnk, &(struct tm_output){ins, 1, false, false, 0}, true, 0, &err), TM_ERR_INVALID);
	CHECK(strstr(err.msg, "character device") != NULL);
	CHECK(lstat(lnk, &sb) == 0 && S_ISLNK(sb.st_mode));
	struct tm_output any = {.replace = true};
	CHECK_INT(tm_write_atomic(fifo, "{}", 2, &any, &err), TM_ERR_INVALID);
	CHECK_INT(tm_write_atomic(lnk, "{}", 2, &any, &err), TM_ERR_INVALID);
	CHECK_INT(tm_write_atomic(dir, "{}", 2, &any, &err), TM_ERR_INVALID);
	CHECK(strstr(err.msg, "is a directory") != NULL);
	CHECK_INT(count_tmp(), 0);
	/* absent: private state 0600; an existing file only when replacing */
	struct tm_output priv = {.private_file = true};
	CHECK_INT(tm_write_atomic(reg, "{}", 2, &priv, &err), TM_OK);
	CHECK(stat(reg, &sb) == 0 && (sb.st_mode & 0777) == 0600 && sb.st_size == 2);
	CHECK_INT(tm_write_atomic(reg, "{\"a\":1}", 7, NULL, &err), TM_ERR_EXISTS);
	CHECK(stat(reg, &sb) == 0 && sb.st_size == 2);
	CHECK_INT(tm_write_atomic(reg, "{\"a\":1}", 7, &any, &err), TM_OK);
	CHECK(stat(reg, &sb) == 0 && (sb.st_mode & 0777) == 0600 && sb.st_size == 7);
	CHECK_INT(tm_output_check(reg, &any, &err), TM_OK);
	CHECK_INT(tm_output_check(reg, NULL, &err), TM_ERR_EXISTS);
	/* cannot create: the error says so, nothing left behind */
	char nodir[700];
	snprintf(nodir, sizeof nodir, "%s/x.json", reg);
	CHECK_INT(tm_write_atomic(nodir, "{}", 2, NULL, &err), TM_ERR_IO);
	CHECK(strstr(err.msg, "Not a directory") != NULL);
	CHECK_INT(count_tmp(), 0);
	/* a 1 MiB name: shortened in the error, the reason kept */
	static char big[1 << 20];
	memset(big, 'A', sizeof big - 1);
	uint8_t h[512];
	CHECK_INT(tm_tar_header(h, big, 1, 0, &err), TM_ERR_INVALID);
	CHECK(strstr(err.msg, "does not fit a ustar header") != NULL);
	CHECK(strstr(err.msg, "A\xe2\x80\xa6" "A") != NULL);
}

/* The one whole-file reader: whole files, a cap that fails loudly (the
 * recovery reader cut at 64 KiB silently), a head for sniffing, errors
 * naming the path. */
static void
t_read_file(void)
{
	static char big[200000];
	memset(big, 'x', sizeof big);
	const char *p = fx_write("big.txt", big, sizeof big);
	struct tm_error e;
	size_t n = 0;
	char *d = tm_read_file(p, 1u << 20, false, &n, &e);
	CHECK(d != NULL);
	CHECK_INT(n, sizeof big);
	CHECK(d && d[n] == 0 && memcmp(d, big, n) == 0);
	free(d);
	tm_error_clear(&e);
	CHECK(tm_read_file(p, 65536, false, &n, &e) == NULL);
	CHECK_INT(e.code, TM_ERR_LIMIT);
	CHECK(strstr(e.msg, "big.txt: larger than 65536 bytes") != NULL);
	d = tm_read_file(p, 100, true, &n, &e);
	CHECK_INT(n, 100);
	free(d);
	d = tm_read_file(fx_write("empty.txt", "", 0), 10, false, &n, &e);
	CHECK(d && n == 0 && d[0] == 0);
	free(d);
	tm_error_clear(&e);
	CHECK(tm_read_file(fx_path("missing.txt"), 10, false, &n, &e) == NULL);
	CHECK(strstr(e.msg, "missing.txt: No such file or directory") != NULL);
}

/* The one rule for every output (tm_output): an input is never written
 * over, by any name; permissions follow the umask for a new file and the
 * old file for a replaced one; a symlink is written through; stale temp
 * files of ours are removed, a locked one (a write under way) is not. */
static void
t_output_rule(void)
{
	char in[600], up[700], lnk[600], out[600], tgt[600], stale[700], busy[700], other[700];
	snprintf(in, sizeof in, "%s", fx_write("trace.json", "{\"traceEvents\":[]}", 17));
	snprintf(up, sizeof up, "%s/../%s/trace.json", fx_dir, strrchr(fx_dir, '/') + 1);
	snprintf(lnk, sizeof lnk, "%s", fx_path("via-link.json"));
	CHECK(symlink(in, lnk) == 0);
	const char *ins[1] = {in};
	struct tm_output o = {.inputs = ins, .n_inputs = 1, .replace = true};
	struct stat sb;
	CHECK_INT(tm_write_atomic(up, "{}", 2, &o, &err), TM_ERR_INVALID);
	CHECK(strstr(err.msg, "input is never written over") != NULL);
	CHECK_INT(tm_write_atomic(lnk, "{}", 2, &o, &err), TM_ERR_INVALID);
	CHECK(stat(in, &sb) == 0 && sb.st_size == 17);
	CHECK_INT(count_tmp(), 0);

	/* new files: 0666 less the umask */
	mode_t old = umask(077);
	snprintf(out, sizeof out, "%s", fx_path("new077.json"));
	CHECK_INT(tm_write_atomic(out, "{}", 2, &o, &err), TM_OK);
	CHECK(stat(out, &sb) == 0 && (sb.st_mode & 0777) == 0600);
	umask(022);
	snprintf(out, sizeof out, "%s", fx_path("new022.json"));
	CHECK_INT(tm_write_atomic(out, "{}", 2, &o, &err), TM_OK);
	CHECK(stat(out, &sb) == 0 && (sb.st_mode & 0777) == 0644);
	/* replaced files keep their mode, whatever the umask */
	CHECK(chmod(out, 0640) == 0);
	CHECK_INT(tm_write_atomic(out, "{\"x\":1}", 7, &o, &err), TM_OK);
	CHECK(stat(out, &sb) == 0 && (sb.st_mode & 0777) == 0640 && sb.st_size == 7);
	struct tm_tar_writer *w;
	CHECK(chmod(out, 0600) == 0);
	CHECK_INT(tm_tar_begin(&w, out, &o, true, 0, &err), TM_OK);
	CHECK_INT(tm_tar_commit(w, &err), TM_OK);
	CHECK(stat(out, &sb) == 0 && (sb.st_mode & 0777) == 0600 && sb.st_size == 10240);
	umask(old);

	/* a symlink to a file that is not an input: the file is written */
	snprintf(tgt, sizeof tgt, "%s", fx_write("target.json", "old", 3));
	snprintf(lnk, sizeof lnk, "%s", fx_path("to-target.json"));
	CHECK(symlink(tgt, lnk) == 0);
	CHECK_INT(tm_write_atomic(lnk, "{}", 2, &o, &err), TM_OK);
	CHECK(lstat(lnk, &sb) == 0 && S_ISLNK(sb.st_mode));
	CHECK(stat(tgt, &sb) == 0 && sb.st_size == 2);

	/* stale temp files: ours and unlocked removed, counted */
	snprintf(out, sizeof out, "%s", fx_path("m.tar"));
	snprintf(stale, sizeof stale, "%s/.m.tar.tmp-Ab12cD", fx_dir);
	snprintf(busy, sizeof busy, "%s/.m.tar.tmp-zzzzzz", fx_dir);
	snprintf(other, sizeof other, "%s/.m.tar.tmp-short", fx_dir);
	int fs = open(stale, O_WRONLY | O_CREAT, 0600), fb = open(busy, O_WRONLY | O_CREAT, 0600),
	    fo = open(other, O_WRONLY | O_CREAT, 0600);
	CHECK(fs >= 0 && fb >= 0 && fo >= 0);
	close(fs);
	close(fo);
	CHECK(flock(fb, LOCK_EX) == 0); /* a writer at work */
	o.n_stale = 0;
	CHECK_INT(tm_write_atomic(out, "{}", 2, &o, &err), TM_OK);
	CHECK_INT((int)o.n_stale, 1);
	CHECK(stat(stale, &sb) != 0);
	CHECK(stat(busy, &sb) == 0);
	CHECK(stat(other, &sb) == 0);
	close(fb);
	unlink(busy);
	unlink(other);
	CHECK_INT(count_tmp(), 0);
}

/* A path absent when the write began is only created: a file that appears
 * there before the commit (another program, another session: a merge runs
 * for minutes) is kept, and the write fails TM_ERR_EXISTS, unless replace
 * was given. */
static void
t_appeared_meanwhile(void)
{
	char out[600];
	struct stat sb;
	struct tm_tar_writer *w;
	struct tm_output keep = {.replace = false}, force = {.replace = true};
	snprintf(out, sizeof out, "%s", fx_path("appears.tar"));
	CHECK_INT(tm_tar_begin(&w, out, &keep, true, 0, &err), TM_OK);
	fx_write("appears.tar", "theirs", 6);
	CHECK_INT(tm_tar_commit(w, &err), TM_ERR_EXISTS);
	CHECK(strstr(err.msg, "appeared while being written") != NULL);
	CHECK(stat(out, &sb) == 0 && sb.st_size == 6);
	CHECK_INT(count_tmp(), 0);
	CHECK_INT(tm_write_atomic(out, "{}", 2, &keep, &err), TM_ERR_EXISTS);
	/* replace given: what is there is replaced */
	CHECK(unlink(out) == 0);
	CHECK_INT(tm_tar_begin(&w, out, &force, true, 0, &err), TM_OK);
	fx_write("appears.tar", "theirs", 6);
	CHECK_INT(tm_tar_commit(w, &err), TM_OK);
	CHECK(stat(out, &sb) == 0 && sb.st_size == 10240);
	/* nothing appeared: created as before */
	CHECK(unlink(out) == 0);
	CHECK_INT(tm_tar_begin(&w, out, &keep, true, 0, &err), TM_OK);
	CHECK_INT(tm_tar_commit(w, &err), TM_OK);
	CHECK(stat(out, &sb) == 0 && sb.st_size == 10240);
	CHECK_INT(count_tmp(), 0);
}

/* Two writers of one path at once: each cleans stale temp files beside it
 * before its own, and must never take the other's temp file between its
 * close and its rename (it is locked until renamed). */
static const char *race_path;
static int race_fail;

static void *
race_writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1500; i++) {
		struct tm_output o = {.replace = true};
		struct tm_error e;
		if (tm_write_atomic(race_path, "{}", 2, &o, &e) != TM_OK)
			__atomic_add_fetch(&race_fail, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void
t_two_writers(void)
{
	char out[600];
	pthread_t a, b;
	snprintf(out, sizeof out, "%s", fx_path("race.json"));
	race_path = out;
	CHECK(pthread_create(&a, NULL, race_writer, NULL) == 0);
	CHECK(pthread_create(&b, NULL, race_writer, NULL) == 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	CHECK_INT(race_fail, 0);
	CHECK_INT(count_tmp(), 0);
}

/* The file checked is the file written: a symlink swapped to an input
 * between the check and the write (tm_out_checked_hook) changes nothing,
 * the target resolved before the check is written.  Private state
 * (recovery files) never follows a symlink: the link is replaced, the
 * file it named kept. */
static char swap_link[600], swap_to[600];

static void
swap_hook(const char *path)
{
	(void)path;
	unlink(swap_link);
	CHECK(symlink(swap_to, swap_link) == 0);
}

static void
t_output_resolved_once(void)
{
	char in[600], tgt[600], victim[600], rec[600];
	struct stat sb;
	snprintf(in, sizeof in, "%s", fx_write("swap-in.json", "{\"traceEvents\":[]}", 17));
	snprintf(tgt, sizeof tgt, "%s", fx_write("swap-tgt.json", "old", 3));
	snprintf(swap_link, sizeof swap_link, "%s", fx_path("swap-link.json"));
	snprintf(swap_to, sizeof swap_to, "%s", in);
	CHECK(symlink(tgt, swap_link) == 0);
	const char *ins[1] = {in};
	struct tm_output o = {.inputs = ins, .n_inputs = 1, .replace = true};
	tm_out_checked_hook = swap_hook;
	CHECK_INT(tm_write_atomic(swap_link, "{}", 2, &o, &err), TM_OK);
	tm_out_checked_hook = NULL;
	CHECK(stat(in, &sb) == 0 && sb.st_size == 17);
	CHECK(stat(tgt, &sb) == 0 && sb.st_size == 2);
	CHECK_INT(tm_output_check(swap_link, &o, &err), TM_ERR_INVALID);
	CHECK(strstr(err.msg, "input is never written over") != NULL);

	/* private state: the link is replaced, never followed */
	snprintf(victim, sizeof victim, "%s", fx_write("victim.json", "mine", 4));
	CHECK(chmod(victim, 0644) == 0);
	snprintf(rec, sizeof rec, "%s", fx_path("recovery-x.json"));
	CHECK(symlink(victim, rec) == 0);
	struct tm_output priv = {.replace = true, .private_file = true};
	CHECK_INT(tm_output_check(rec, &priv, &err), TM_OK);
	CHECK_INT(tm_write_atomic(rec, "{\"r\":1}", 7, &priv, &err), TM_OK);
	CHECK(stat(victim, &sb) == 0 && sb.st_size == 4 && (sb.st_mode & 0777) == 0644);
	CHECK(lstat(rec, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 7 &&
	      (sb.st_mode & 0777) == 0600);
	/* a link to an input, a FIFO or /dev/null in its place: replaced too */
	unlink(rec);
	CHECK(symlink("/dev/null", rec) == 0);
	CHECK_INT(tm_write_atomic(rec, "{}", 2, &priv, &err), TM_OK);
	CHECK(lstat(rec, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 2);
	CHECK_INT(count_tmp(), 0);
}

int
main(void)
{
	RUN(t_roundtrip);
	RUN(t_read_file);
	RUN(t_header);
	RUN(t_atomic);
	RUN(t_special_outputs);
	RUN(t_output_rule);
	RUN(t_output_resolved_once);
	RUN(t_two_writers);
	RUN(t_appeared_meanwhile);
	fx_cleanup();
	return 0;
}

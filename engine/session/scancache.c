/* SPDX-License-Identifier: MIT */
/*
 * Saved scans: what tm_session_scan kept for each input (its members' op
 * logs, summaries and alignment samples, and what the scan learned about
 * each member), written to a cache directory so that reopening an unchanged
 * input loads it instead of reading the trace again (as ncdu reuses an
 * exported scan).
 *
 * One file per input file: NAME.tmscan, NAME a hash of the key.  The key is
 * the file's device, inode, size, mtime and ctime (of the file a link leads
 * to: not the path as given, so that the workbench's renamed inputs, links
 * in a new folder, load their scans), taken from the descriptor the input
 * was opened with before any of it was read (tm_input_file_id: a tar.gz's
 * members are scanned while it is listed), and a scan is saved or loaded
 * only while every read of the input was of that file, unchanged
 * (tm_input_unchanged), the session options that change what
 * a scan keeps, and this build (version, cache format, op log encoding, the
 * executable's identity).  The whole key is stored and compared again on
 * load, with the path as given: a scan saved under another path is used
 * only when no text in it could name that path (member errors, scan errors:
 * tm_input_label), and a loose input's own name and argument position are
 * not part of its listing (its scan does not depend on them; nested names
 * come from the container, a gzip stream's is empty).
 *
 * Layout: a 32-byte header (magic, format, encoding, payload length, a
 * 64-bit hash of the payload), then the payload that scancache_ser.c writes
 * and reads: the same functions do both, so the format is written down once.
 * Loading reads the file once, front to back through one buffer: the
 * header, the key, the listing of the input's members, every structure the
 * replay trusts (tm_oplog_valid_split, the alignment tables, counts and
 * ranges) and the hash; any failure ignores the file with a note and the
 * input is scanned as usual.  An op log's large runs are saved out of line
 * (tm_oplog_write_split) and stay in the file after loading: the session
 * keeps the file open and the replay reads them from it as it reads a
 * fresh scan's spilled runs, so a reopen holds no copy of them in memory
 * and writes nothing.  Files not owned by the user or writable by
 * others are not read, nor anything that is not a regular file (opened
 * without blocking: a FIFO planted there must not hang the session).  The
 * directory is opened once and refused, with a note, when it is not the
 * user's or others can write to it (names are predictable: another local
 * user could plant or swap files in it); every file is then opened
 * relative to it.  Writing goes to a temp file in the directory, renamed
 * over the name when complete (no fsync: see tm_scancache_save); afterwards the
 * least recently used files are removed until the directory is within its
 * cap.
 *
 * The cache reads and writes a struct tm_scanfile, one input file's scan
 * (scancache.h); the session fills it from its members and folds what a
 * load read back into them (session_cache.c).  This file: the cache files
 * and the directory; scancache_ser.c is the format (the checksum, the
 * serializer).  Writing goes through output.c's one rule
 * (tm_out_open_at).
 */
#include "scancache_ser.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "align_scan.h"
#include "scan.h"

/* Bump with every change of what scancache_ser.c or the ser_* functions
 * below write (11: ftrace details' queue numbered in creation order,
 * compact_sched kept for the sorter's runs). */
#define CACHE_FORMAT 11u
#define CACHE_MAGIC "TMSCAN\032\n"
#define HEADER_BYTES 32u
#define CACHE_EXT ".tmscan"
/* A file changed this recently when it was opened is not saved: a second
 * change within the same timestamp tick (coarse on Linux, 2 s on FAT)
 * would leave size, mtime and ctime as they were (git's "racy" entries). */
int tm_scancache_racy_s = 2;

/* ---- the input's identity ---- */



/* A guess before the listing (tm_scancache_has): the path's file now. */
static bool
key_of(const char *path, struct tm_file_id *k)
{
	struct stat st;
	return stat(path, &st) == 0 && tm_file_id_of(&st, k);
}

/* This build: a saved scan is read only by the build that wrote it. */
static void
build_id(struct tm_buf *b)
{
	struct stat st;
	tm_buf_addf(b, "tracemerge %s cache %u oplog %u", TM_VERSION, CACHE_FORMAT,
		    TM_OPLOG_ENCODING);
	if (stat("/proc/self/exe", &st) == 0)
		tm_buf_addf(b, " exe %ju:%ju:%jd:%jd.%09ld", (uintmax_t)st.st_dev,
			    (uintmax_t)st.st_ino, (intmax_t)st.st_size, (intmax_t)st.st_mtim.tv_sec,
			    (long)st.st_mtim.tv_nsec);
}

/* The listing of member k, as the input lists it now: a saved scan is
 * used only when the input lists exactly the same way. */
static void
ser_listing(struct ser *z, const struct tm_scanfile *f, size_t k)
{
	const struct tm_scanfile_member *fm = &f->m[k];
	const struct tm_member *mb = fm->mb;
	/* a loose input's name and position are the argument's, not the file's */
	bool top = fm->top;
	uint64_t v[7] = {top ? 0 : mb->name_len, mb->format, mb->stored_size, fm->list_size,
			 mb->is_hidden, top ? 0 : mb->index, mb->is_unexpanded};
	/* the parent as an index into the file's members, or UINT64_MAX */
	uint64_t parent = fm->parent;
	uint64_t w[7];
	memcpy(w, v, sizeof w);
	for (int i = 0; i < 7; i++)
		tm_sc_ser_u64(z, &w[i]);
	uint64_t pw = parent;
	tm_sc_ser_u64(z, &pw);
	size_t nl = top ? 0 : mb->name_len;
	void *name = z->wr && !top ? mb->name : NULL;
	tm_sc_ser_blob(z, &name, &nl, 1);
	if (z->wr)
		return;
	bool same = !memcmp(v, w, sizeof v) && pw == parent && nl == (top ? 0 : mb->name_len) &&
		    (!nl || !memcmp(name, mb->name, nl));
	free(name);
	if (!same && !z->bad)
		z->bad = "listing"; /* not damage: the input lists differently */
}

/* The key as stored: build, path, options, identity; *same when all but
 * the path match, *same_path when the path does too. */
static void
ser_key(struct ser *z, const char *path_c, const struct tm_scankey *key, bool *same,
	bool *same_path)
{
	struct tm_buf b;
	tm_buf_init(&b);
	build_id(&b);
	uint64_t flags = (uint64_t)key->keep_events | (uint64_t)key->plain_replay << 1 |
			 (uint64_t)key->loose << 2;
	const struct tm_file_id *id = &key->id;
	char *bid = b.data, *path = (char *)(uintptr_t)path_c;
	char *rb = NULL, *rp = NULL;
	tm_sc_ser_str(z, z->wr ? &bid : &rb);
	tm_sc_ser_str(z, z->wr ? &path : &rp);
	uint64_t k[8] = {flags,
			 id->dev,
			 id->ino,
			 id->size,
			 (uint64_t)id->mtime_s,
			 (uint64_t)id->mtime_ns,
			 (uint64_t)id->ctime_s,
			 (uint64_t)id->ctime_ns};
	uint64_t r[8];
	memcpy(r, k, sizeof r);
	for (int i = 0; i < 8; i++)
		tm_sc_ser_u64(z, &r[i]);
	if (!z->wr) {
		*same = !z->bad && rb && rp && !strcmp(rb, bid) && !memcmp(k, r, sizeof k);
		*same_path = *same && !strcmp(rp, path);
	}
	free(rb);
	free(rp);
	tm_buf_fini(&b);
}

/* ---- the files ---- */

static void
note(struct tm_scancache *c, const char *fmt, ...) TM_PRINTF(2, 3);
static void
note(struct tm_scancache *c, const char *fmt, ...)
{
	struct tm_buf b;
	va_list ap;
	tm_buf_init(&b);
	va_start(ap, fmt);
	tm_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	free(c->note);
	c->note = tm_buf_steal(&b);
}

char *
tm_scancache_file(const struct tm_scancache *c, const struct tm_scankey *key)
{
	const struct tm_file_id *k = &key->id;
	struct tm_buf b, out;
	tm_buf_init(&b);
	tm_buf_init(&out);
	build_id(&b);
	tm_buf_addf(&b, "|%d%d%d|%ju:%ju:%ju:%jd.%jd:%jd.%jd", key->keep_events,
		    key->plain_replay, key->loose, (uintmax_t)k->dev, (uintmax_t)k->ino,
		    (uintmax_t)k->size, (intmax_t)k->mtime_s, (intmax_t)k->mtime_ns,
		    (intmax_t)k->ctime_s, (intmax_t)k->ctime_ns);
	uint64_t h = tm_mix64(tm_fnv1a(TM_FNV_INIT, b.data, b.len));
	tm_buf_addf(&out, "%s/%016" PRIx64 CACHE_EXT, c->dir ? c->dir : ".", h);
	tm_buf_fini(&b);
	return tm_buf_steal(&out);
}

/* Not ours or writable by others: not trusted. */
static bool
trusted(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() && !(st->st_mode & 022);
}

/* The name of a cache file (a path in the directory) within it. */
static const char *
base_of(const char *file)
{
	const char *b = strrchr(file, '/');
	return b ? b + 1 : file;
}

/* A cache file opened to read it, relative to the checked directory, not
 * through a link and without blocking (a FIFO opens at once and fails
 * trusted()); -1 when there is none. */
static int
open_entry(int dfd, const char *file)
{
	if (dfd < 0)
		return -1;
	return openat(dfd, base_of(file), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
}

static void
header(uint8_t h[HEADER_BYTES], uint64_t payload, uint64_t sum)
{
	memset(h, 0, HEADER_BYTES);
	memcpy(h, CACHE_MAGIC, 8);
	uint32_t v[2] = {CACHE_FORMAT, TM_OPLOG_ENCODING};
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++)
			h[8 + 4 * i + j] = (uint8_t)(v[i] >> (8 * j));
	for (int j = 0; j < 8; j++)
		h[16 + j] = (uint8_t)(payload >> (8 * j));
	for (int j = 0; j < 8; j++)
		h[24 + j] = (uint8_t)(sum >> (8 * j));
}

/* The members' scans read back (member_rec) into f, their logs' deltas
 * left in the file: it stays open as their source (tm_oplog_source). */
static void
use_records(struct tm_scanfile *f, struct member_rec *rec, int fd)
{
	uint64_t base = 0;
	for (size_t k = 0; k < f->n && !base; k++)
		if (rec[k].scan && rec[k].deltas.len)
			base = tm_oplog_source(fd); /* the file's, from now on */
	if (!base)
		close(fd);
	for (size_t k = 0; k < f->n; k++) {
		struct tm_scanfile_member *m = &f->m[k];
		m->size = rec[k].size;
		m->error = rec[k].error;
		m->scan = rec[k].scan;
		if (m->scan) /* the deltas stay in the file */
			tm_oplog_use_source(&m->scan->log, base, rec[k].deltas.off,
					    rec[k].deltas.len, rec[k].deltas.mem);
	}
	if (base)
		tm_oplog_source_put(base);
}

bool
tm_scancache_load(struct tm_scancache *c, struct tm_scanfile *f)
{
	int fd = open_entry(c->dfd, f->file);
	if (fd < 0)
		return false; /* nothing saved: a plain miss */
	struct stat st;
	if (fstat(fd, &st) != 0 || !trusted(&st)) {
		close(fd);
		note(c, "scan cache: %s is not a private regular file: not used", f->file);
		return false;
	}
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	size_t rb = tm_scancache_io_buf;
	struct ser z = {.wr = false, .fd = fd, .buf = xmalloc(rb), .cap = rb,
			.left = HEADER_BYTES};
	tm_sc_h_init(&z.h);
	uint8_t h[HEADER_BYTES], want[HEADER_BYTES];
	const uint8_t *hp = tm_sc_rd_take(&z, HEADER_BYTES);
	const char *bad = NULL;
	bool miss = false; /* another format, input or listing: no note */
	bool same_path = false;
	struct member_rec *rec = NULL;
	uint64_t sum = 0;
	if (!hp || memcmp(hp, CACHE_MAGIC, 8) != 0) {
		bad = "not a saved scan";
	} else {
		memcpy(h, hp, HEADER_BYTES);
		uint64_t payload = 0;
		for (int j = 0; j < 8; j++)
			payload |= (uint64_t)h[16 + j] << (8 * j);
		for (int j = 0; j < 8; j++)
			sum |= (uint64_t)h[24 + j] << (8 * j);
		header(want, payload, sum);
		miss = memcmp(h, want, HEADER_BYTES) != 0; /* overwritten later */
		if (!miss && payload != (uint64_t)st.st_size - HEADER_BYTES)
			bad = "length does not match the header";
	}
	if (!bad && !miss) {
		uint64_t payload = (uint64_t)st.st_size - HEADER_BYTES;
		z.left = payload;
		tm_sc_rd_hash_restart(&z); /* the header is not hashed */
		bool same = false;
		ser_key(&z, f->in->paths[f->path], &f->key, &same, &same_path);
		miss = !z.bad && !same; /* another input under the same name */
		rec = xcalloc(f->n + 1, sizeof *rec);
		uint64_t n = 0;
		if (!miss)
			tm_sc_ser_u64(&z, &n);
		if (!miss && n != f->n && !z.bad)
			z.bad = "listing";
		for (size_t k = 0; !miss && k < f->n && !z.bad; k++)
			ser_listing(&z, f, k);
		/* not damage: the input lists differently */
		miss = miss || (z.bad && !strcmp(z.bad, "listing"));
		for (size_t k = 0; !miss && k < f->n && !z.bad; k++)
			tm_sc_ser_member(&z, &rec[k]);
		if (!miss && !z.bad && z.left)
			z.bad = "bytes after the end";
		/* the checksum over what is left, so that damage is called
		 * damage whatever part of it was found first */
		while (!miss && z.left && tm_sc_rd_take(&z, z.left < rb ? (size_t)z.left : rb))
			;
		tm_sc_rd_hash(&z);
		if (!miss && (z.rerr || z.left || tm_sc_h_final(&z.h) != sum))
			bad = z.rerr || z.left ? "file cut off" : "checksum mismatch";
		bad = miss ? NULL : bad ? bad : z.bad;
		/* what the replay trusts, checked before anything is used (the
		 * op logs were checked as they were read) */
		for (size_t k = 0; !miss && !bad && k < f->n; k++) {
			const struct tm_member *mb = f->m[k].mb;
			struct tm_scan *sc = rec[k].scan;
			if (sc && sc->format != mb->format)
				bad = "a scan of another format";
		}
		/* saved under another path: its texts could name that path */
		for (size_t k = 0; !miss && !bad && !same_path && k < f->n; k++) {
			const struct tm_error *e = rec[k].scan ? rec[k].scan->err : NULL;
			if (rec[k].error || (e && (e->msg[0] || e->hint[0] || e->tp[0])))
				miss = true;
		}
	}
	free(z.buf);
	if (!bad && !miss) {
		/* used: the newest file for eviction */
		(void)futimens(fd, NULL);
		use_records(f, rec, fd); /* fd is theirs */
		free(rec);
		return true;
	}
	close(fd);
	for (size_t k = 0; rec && k < f->n; k++) {
		free(rec[k].error);
		if (rec[k].scan) {
			tm_scan_fini(rec[k].scan);
			free(rec[k].scan);
		}
	}
	free(rec);
	if (bad)
		note(c, "scan cache: %s: %s: ignored, the input is scanned again", f->file, bad);
	return false;
}

static enum tm_status make_dir(const char *dir, struct tm_error *err);

/* No cache for the rest of the session (the directory was refused). */
static void
cache_off(struct tm_scancache *c)
{
	free(c->dir);
	c->dir = NULL;
}

/* The cache directory open (made first when create) as c->dfd, -1
 * when there is none.  Refused with a note when it is not the user's or
 * others may write to it: they could plant a file under a name we will
 * open (names are a hash of what they can know) or a FIFO, or swap our
 * files; a file's own owner and mode (trusted) are checked again. */
static int
dir_fd(struct tm_scancache *c, bool create)
{
	if (c->dfd >= 0 || !c->dir)
		return c->dfd;
	const char *dir = c->dir;
	if (create) {
		struct tm_error e;
		tm_error_clear(&e);
		if (make_dir(dir, &e) != TM_OK) {
			note(c, "scan cache: cannot create %s", e.msg);
			cache_off(c);
			return -1;
		}
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		if (errno != ENOENT || create)
			note(c, "scan cache: cannot open %s: %s", dir, strerror(errno));
		if (errno != ENOENT)
			cache_off(c);
		return -1;
	}
	struct stat st;
	const char *why = NULL;
	if (fstat(fd, &st) != 0)
		why = "cannot be examined";
	else if (st.st_uid != geteuid())
		why = "belongs to another user";
	else if (st.st_mode & 022)
		why = "can be written by others";
	if (why) {
		note(c, "scan cache: %s %s (owner %ju, mode %03o): not used, inputs are read as if "
			"--no-cache were given",
		     dir, why, (uintmax_t)st.st_uid, (unsigned)(st.st_mode & 07777));
		close(fd);
		cache_off(c);
		return -1;
	}
	c->dfd = fd;
	return fd;
}

static enum tm_status
make_dir(const char *dir, struct tm_error *err)
{
	char *p = xstrdup(dir);
	for (char *q = p + 1; *q; q++)
		if (*q == '/') {
			*q = 0;
			(void)mkdir(p, 0700);
			*q = '/';
		}
	free(p);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return tm_error_sys(err, errno, "%s", dir);
	return TM_OK;
}

struct entry {
	char *name;
	int64_t t;
	uint64_t size;
};

static int
cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return x->t < y->t ? -1 : x->t > y->t;
}

/* Remove the least recently used entries until the directory holds at most
 * cap bytes of them; temp files left by a crash go after a day. */
static void
evict(int dfd, uint64_t cap)
{
	/* its own open of the directory: a dup would share the offset */
	int rfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = rfd >= 0 ? fdopendir(rfd) : NULL;
	if (!d) {
		if (rfd >= 0)
			close(rfd);
		return;
	}
	struct entry *v = NULL;
	size_t n = 0, vcap = 0;
	uint64_t total = 0;
	int64_t now = (int64_t)time(NULL);
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		bool ours = l > strlen(CACHE_EXT) && !strcmp(de->d_name + l - strlen(CACHE_EXT), CACHE_EXT);
		/* output.c's temp files (".NAME.tmp-XXXXXX"), and those of the
		 * cache's own writer before it (".tmp-XXXXXXXXXXXX") */
		bool tmp = de->d_name[0] == '.' && strstr(de->d_name, ".tmp-");
		if (!ours && !tmp)
			continue;
		struct stat st;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (tmp) {
			if (now - (int64_t)st.st_mtime > 86400)
				(void)unlinkat(dfd, de->d_name, 0);
			continue;
		}
		XGROW(v, vcap, n + 1);
		v[n++] = (struct entry){xstrdup(de->d_name), (int64_t)st.st_mtim.tv_sec * 1000000000 +
								 st.st_mtim.tv_nsec,
					(uint64_t)st.st_size};
		total += (uint64_t)st.st_size;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, cmp_entry);
	for (size_t i = 0; i < n; i++) {
		if (total > cap && unlinkat(dfd, v[i].name, 0) == 0)
			total -= v[i].size;
		free(v[i].name);
	}
	free(v);
}

bool
tm_scancache_save(struct tm_scancache *c, const struct tm_scanfile *f, uint64_t cap)
{
	int dfd = dir_fd(c, true);
	if (dfd < 0)
		return false; /* (said) */
	/* output.c's rule, without its fsyncs: the rename is atomic for
	 * readers, and what a crash could leave (a short or zeroed file)
	 * fails the length or checksum test and is scanned again; a cache is
	 * not worth a disk flush on every scan. */
	struct tm_out_file of;
	struct tm_output o = {.replace = true, .private_file = true};
	struct tm_error e;
	tm_error_clear(&e);
	/* A FIFO or socket under the name (a load refused it: not ours) makes
	 * way for the new file, as the rename over it always did; output.c
	 * never writes over one. */
	struct stat st;
	if (fstatat(dfd, base_of(f->file), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		(void)unlinkat(dfd, base_of(f->file), 0);
	if (tm_out_open_at(&of, dfd, base_of(f->file), &o, true, &e) != TM_OK) {
		note(c, "scan cache: cannot write in %s: %s", c->dir, e.msg);
		return false;
	}
	uint8_t h[HEADER_BYTES];
	header(h, 0, 0);
	struct ser z = {.wr = true, .wfd = of.fd, .buf = xmalloc(tm_scancache_io_buf),
			.cap = tm_scancache_io_buf};
	tm_sc_h_init(&z.h);
	memcpy(z.buf, h, HEADER_BYTES); /* written with the payload, not hashed */
	z.end = HEADER_BYTES;
	tm_sc_wr_flush(&z);
	tm_sc_h_init(&z.h);
	bool same, same_path;
	ser_key(&z, f->in->paths[f->path], &f->key, &same, &same_path);
	uint64_t n = f->n;
	tm_sc_ser_u64(&z, &n);
	for (size_t k = 0; k < f->n; k++)
		ser_listing(&z, f, k);
	for (size_t k = 0; k < f->n; k++) {
		const struct tm_scanfile_member *m = &f->m[k];
		struct member_rec r = {m->scan != NULL, m->size, m->error, m->scan, {0, 0, 0}};
		tm_sc_ser_member(&z, &r);
	}
	tm_sc_wr_flush(&z);
	free(z.buf);
	uint64_t end = z.wrote;
	uint64_t payload = end > HEADER_BYTES ? end - HEADER_BYTES : 0;
	header(h, payload, tm_sc_h_final(&z.h));
	bool ok = !z.werr && end <= cap && pwrite(of.fd, h, HEADER_BYTES, 0) == HEADER_BYTES;
	int werr = errno;
	/* every read of the input was of the file the key names, unchanged
	 * (whatever was scanned while listing, and since) */
	bool same_input = tm_input_unchanged(f->in, f->path);
	bool saved = false;
	if (ok && same_input) {
		saved = tm_out_commit(&of, &e) == TM_OK;
		if (!saved)
			note(c, "scan cache: cannot write %s: %s", f->file, e.msg);
	} else {
		tm_out_abort(&of);
		if (same_input && end > cap)
			note(c, "scan cache: the scan of %s (%jd bytes) is larger than the cache's cap",
			     f->in->paths[f->path], (intmax_t)end);
		else if (same_input && !ok)
			note(c, "scan cache: cannot write %s: %s", f->file, strerror(werr));
	}
	evict(dfd, cap);
	return saved;
}

/* ---- the cache's entry points ---- */

bool
tm_scancache_has(const struct tm_scancache *c, const char *path, const struct tm_scankey *want)
{
	struct tm_scankey key = *want;
	if (!c->dir || c->dfd < 0 || !key_of(path, &key.id))
		return false;
	char *file = tm_scancache_file(c, &key);
	int fd = open_entry(c->dfd, file);
	free(file);
	struct stat st;
	if (fd < 0)
		return false;
	bool same = false, same_path = false;
	if (fstat(fd, &st) == 0 && trusted(&st) && (uint64_t)st.st_size >= HEADER_BYTES) {
		struct ser z = {.wr = false, .fd = fd, .buf = xmalloc(4096), .cap = 4096,
				.left = HEADER_BYTES};
		tm_sc_h_init(&z.h);
		const uint8_t *hp = tm_sc_rd_take(&z, HEADER_BYTES);
		uint8_t want_h[HEADER_BYTES];
		uint64_t payload = (uint64_t)st.st_size - HEADER_BYTES, sum = 0;
		for (int j = 0; hp && j < 8; j++)
			sum |= (uint64_t)hp[24 + j] << (8 * j);
		header(want_h, payload, sum);
		if (hp && !memcmp(hp, want_h, HEADER_BYTES)) {
			z.left = payload;
			ser_key(&z, path, &key, &same, &same_path);
		}
		free(z.buf);
	}
	close(fd);
	return same;
}

void
tm_scancache_open(struct tm_scancache *c, const char *dir)
{
	memset(c, 0, sizeof *c);
	c->dfd = -1;
	if (!dir || !*dir)
		return;
	c->dir = xstrdup(dir); /* the caller's may go */
	(void)dir_fd(c, false);
}

void (*tm_scancache_test_hook)(int stage);

void
tm_scancache_close(struct tm_scancache *c)
{
	free(c->note);
	free(c->dir);
	if (c->dfd >= 0)
		close(c->dfd);
	memset(c, 0, sizeof *c);
	c->dfd = -1;
}

char *
tm_cache_default_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME");
	struct tm_buf b;
	tm_buf_init(&b);
	if (x && x[0] == '/') {
		tm_buf_addf(&b, "%s/tracemerge", x);
	} else {
		const char *home = getenv("HOME");
		if (!home || home[0] != '/')
			return NULL;
		tm_buf_addf(&b, "%s/.cache/tracemerge", home);
	}
	return tm_buf_steal(&b);
}

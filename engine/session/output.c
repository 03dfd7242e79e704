/* SPDX-License-Identifier: MIT */
/*
 * The one rule for every file tracemerge writes (the merged TAR, a saved or
 * solved manifest, a recovery file): tm_output_check says whether a path
 * may be written, tm_out_open / tm_out_commit write it.
 *
 *  - never one of the session's inputs (same device and inode: through
 *    symlinks, "../" paths and hard links), never a directory, device, FIFO
 *    or socket, whatever the caller allows;
 *  - an existing regular file only when the caller says the user agreed
 *    (TM_ERR_EXISTS otherwise: the workbench asks, batch wants --force); a
 *    symlink to one is written through, the link stays, resolved once so
 *    that the file checked is the file written; private state (recovery
 *    files) never follows a symlink: the link itself is replaced;
 *  - atomic: a hidden temp file beside it (".NAME.tmp-XXXXXX", locked with
 *    flock while it is written), fsync, rename, directory fsync; on any
 *    failure the path is untouched and the temp file removed;
 *  - a path that was absent when checked is still only created, never
 *    replaced: a file that appears there while a long write runs (another
 *    program, another session) is kept and the write fails with
 *    TM_ERR_EXISTS, unless the caller said replace;
 *  - permissions: a new file gets 0666 less the umask (0600 for private
 *    state), a replaced file keeps its mode (and its owner where allowed);
 *  - temp files of the same naming that no writer holds any more (a write
 *    killed by SIGKILL or a file size limit) are removed on the next write
 *    to that path, and counted for the front end to say so.
 *
 * tm_out_open_at is the same rule for a file the program keeps for itself
 * in a directory it opened and checked (the scan cache): private, relative
 * to that directory's descriptor, and, for state that can be rebuilt,
 * without the fsyncs.
 */
#define _GNU_SOURCE /* renameat2, RENAME_NOREPLACE */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "input.h"

#define TMP_TAG ".tmp-"
#define TMP_RAND 6

static const char *
kind_of(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
			     : "not a regular file";
}

/* Test hook: called by tm_out_open between the check and the write. */
void (*tm_out_checked_hook)(const char *path);

/* The path that is checked and written (one resolution, so the file
 * checked is the file written): a symlink's target, resolved once, or,
 * for private state (nofollow), the path itself: a symlink there is
 * replaced by the rename, never followed. */
static char *
out_resolve(const char *path, bool nofollow)
{
	struct stat ls;
	char real[PATH_MAX];
	if (!nofollow && lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode) && realpath(path, real))
		return xstrdup(real);
	return xstrdup(path);
}

/* The rule on real (out_resolve's answer), said of path as the user typed
 * it.  stat follows only a link that appeared since the resolution or one
 * that leads nowhere (absent: created).  *st: what the stat found, when
 * *found (the writer needs no stat of its own). */
static enum tm_status
check_real(int dfd, const char *path, const char *real, bool nofollow, const struct tm_output *o,
	   struct stat *st_out, bool *found, struct tm_error *err)
{
	struct stat is, *st = st_out;
	*found = fstatat(dfd, real, st, nofollow ? AT_SYMLINK_NOFOLLOW : 0) == 0;
	if (!*found)
		return TM_OK; /* absent; creating it beside will say why if it cannot */
	if (!S_ISREG(st->st_mode) && !(nofollow && S_ISLNK(st->st_mode)))
		return tm_error_set(err, TM_ERR_INVALID,
				    "%s is %s: refusing to replace it (write to a regular file)", path,
				    kind_of(st->st_mode));
	for (size_t i = 0; o && i < o->n_inputs; i++)
		if (o->inputs[i] && stat(o->inputs[i], &is) == 0 && is.st_dev == st->st_dev &&
		    is.st_ino == st->st_ino)
			return tm_error_set(err, TM_ERR_INVALID,
					    "an input is never written over: %s%s%s", path,
					    strcmp(path, o->inputs[i]) ? " is " : "",
					    strcmp(path, o->inputs[i]) ? o->inputs[i] : "");
	if (!o || !o->replace)
		return tm_error_set(err, TM_ERR_EXISTS, "%s exists", path);
	return TM_OK;
}

/* path resolved once (*real, the caller frees; NULL on a refusal) and
 * checked: tm_output_check's answer, and tm_out_open's first step (the
 * file checked is the file written), with what the check's stat found. */
static enum tm_status
resolve_check(int dfd, const char *path, const struct tm_output *o, char **real,
	      struct stat *st, bool *found, struct tm_error *err)
{
	*real = NULL;
	*found = false;
	if (!path || !*path)
		return tm_error_set(err, TM_ERR_INVALID, "no output path");
	bool nofollow = o && o->private_file;
	*real = out_resolve(path, nofollow);
	enum tm_status s = check_real(dfd, path, *real, nofollow, o, st, found, err);
	if (s != TM_OK) {
		free(*real);
		*real = NULL;
	}
	return s;
}

/* Whether path may be written; the file a symlink names is the one
 * compared and (tm_out_open) written, private state's path itself. */
enum tm_status
tm_output_check(const char *path, const struct tm_output *o, struct tm_error *err)
{
	char *real;
	struct stat st;
	bool found;
	enum tm_status s = resolve_check(AT_FDCWD, path, o, &real, &st, &found, err);
	free(real);
	return s;
}

/* "dir/" of path (with its slash), or "" for the current directory. */
static size_t
dir_len(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? (size_t)(slash - path) + 1 : 0;
}

static bool
is_tmp_name(const char *name, const char *base)
{
	size_t bl = strlen(base), tl = strlen(TMP_TAG);
	if (name[0] != '.' || strncmp(name + 1, base, bl) != 0 ||
	    strncmp(name + 1 + bl, TMP_TAG, tl) != 0)
		return false;
	const char *r = name + 1 + bl + tl;
	for (size_t i = 0; i < TMP_RAND; i++)
		if (!((r[i] >= 'a' && r[i] <= 'z') || (r[i] >= 'A' && r[i] <= 'Z') ||
		      (r[i] >= '0' && r[i] <= '9')))
			return false;
	return r[TMP_RAND] == 0;
}

/* Remove ".BASE.tmp-XXXXXX" files beside path that are ours (regular,
 * owned by us) and that no writer holds locked: what a write killed
 * before its cleanup left.  Returns how many. */
static unsigned
clean_stale(int at, const char *path)
{
	size_t dl = dir_len(path);
	char *dir = dl ? xstrndup(path, dl) : xstrdup(".");
	const char *base = path + dl;
	unsigned n = 0;
	int dfd = openat(at, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		free(dir);
		return 0;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!is_tmp_name(e->d_name, base))
			continue;
		int fd = openat(dfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		struct stat st, now;
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    fstatat(dfd, e->d_name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
		    now.st_ino == st.st_ino && now.st_dev == st.st_dev &&
		    unlinkat(dfd, e->d_name, 0) == 0)
			n++;
		close(fd);
	}
	closedir(d);
	free(dir);
	return n;
}

/* A hidden temp file beside path, created with mode (less the umask) and
 * locked; *tmp_out its name. */
static int
temp_beside(int dfd, const char *path, mode_t mode, char **tmp_out)
{
	static const char al[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static unsigned counter;
	size_t dl = dir_len(path);
	for (int attempt = 0; attempt < 100; attempt++) {
		unsigned char r[TMP_RAND];
		if (getentropy(r, sizeof r) != 0) {
			uint64_t x = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^
				     (uint64_t)time(NULL) ^
				     ((uint64_t)__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) << 20);
			for (size_t i = 0; i < sizeof r; i++, x >>= 8)
				r[i] = (unsigned char)x;
		}
		struct tm_buf b;
		tm_buf_init(&b);
		tm_buf_add(&b, path, dl);
		tm_buf_adds(&b, ".");
		tm_buf_adds(&b, path + dl);
		tm_buf_adds(&b, TMP_TAG);
		for (size_t i = 0; i < TMP_RAND; i++)
			tm_buf_add(&b, &al[r[i] % (sizeof al - 1)], 1);
		char *tmp = tm_buf_steal(&b);
		int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0) {
			int e = errno;
			free(tmp);
			if (e == EEXIST)
				continue;
			errno = e;
			return -1;
		}
		/* Locked from here on: a stale-temp cleaner leaves it alone.  One
		 * that unlinked it before the lock was taken: start again. */
		struct stat a, c;
		if (flock(fd, LOCK_EX) != 0 || fstat(fd, &a) != 0 ||
		    fstatat(dfd, tmp, &c, AT_SYMLINK_NOFOLLOW) != 0 ||
		    a.st_ino != c.st_ino || a.st_dev != c.st_dev) {
			close(fd);
			free(tmp);
			continue;
		}
		*tmp_out = tmp;
		return fd;
	}
	errno = EEXIST;
	return -1;
}

/* tm_out_open, tm_out_open_at: path relative to dfd (AT_FDCWD: as given). */
static enum tm_status
out_open(struct tm_out_file *f, int dfd, const char *path, struct tm_output *o, bool no_sync,
	 struct tm_error *err)
{
	memset(f, 0, sizeof *f);
	f->fd = -1;
	f->dfd = dfd;
	f->no_sync = no_sync;
	/* Resolved once, then checked and written: resolving after the check
	 * would write wherever a symlink pointed by then (an input).  The
	 * check's stat is the one the write goes by. */
	bool nofollow = o && o->private_file;
	struct stat ls, st;
	bool found;
	enum tm_status s = resolve_check(dfd, path, o, &f->path, &st, &found, err);
	if (s != TM_OK)
		return s;
	if (tm_out_checked_hook)
		tm_out_checked_hook(f->path);
	/* a symlink in private state's place is replaced as a new file */
	f->replaces = found && !S_ISLNK(st.st_mode);
	/* absent now and not ours to replace: create it, never replace what
	 * appears there meanwhile (tm_out_commit); a link that leads nowhere
	 * is there (stat, following it, did not find it: lstat does) */
	f->create_only = !(o && o->replace) && !found &&
			 (nofollow || fstatat(dfd, f->path, &ls, AT_SYMLINK_NOFOLLOW) != 0);
	if (f->replaces) {
		f->mode = st.st_mode & 07777;
		f->uid = st.st_uid;
		f->gid = st.st_gid;
	}
	if (o)
		o->n_stale += clean_stale(dfd, f->path);
	/* private state and a file being replaced start 0600 (the replaced
	 * file's own mode comes at the end); a new file 0666 less the umask */
	f->fd = temp_beside(dfd, f->path, nofollow || f->replaces ? 0600 : 0666, &f->tmp);
	if (f->fd < 0) {
		s = tm_error_sys(err, errno, "%s: cannot create a temp file beside it", path);
		free(f->path);
		f->path = NULL;
		return s;
	}
	return TM_OK;
}

enum tm_status
tm_out_open(struct tm_out_file *f, const char *path, struct tm_output *o, struct tm_error *err)
{
	return out_open(f, AT_FDCWD, path, o, false, err);
}

enum tm_status
tm_out_open_at(struct tm_out_file *f, int dfd, const char *name, struct tm_output *o,
	       bool no_sync, struct tm_error *err)
{
	struct tm_output po = o ? *o : (struct tm_output){0};
	po.private_file = true;
	enum tm_status s = out_open(f, dfd, name, &po, no_sync, err);
	if (o)
		o->n_stale = po.n_stale;
	return s;
}

/* rename(from, to) unless to exists: EEXIST then, to untouched.  Where the
 * filesystem cannot say (no RENAME_NOREPLACE, no hard links), a plain
 * rename. */
static int
rename_create(int dfd, const char *from, const char *to)
{
	if (renameat2(dfd, from, dfd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
		return -1;
	if (linkat(dfd, from, dfd, to, 0) == 0) {
		(void)unlinkat(dfd, from, 0);
		return 0;
	}
	if (errno == EEXIST)
		return -1;
	return renameat(dfd, from, dfd, to);
}

/* fsync the directory holding path, so a rename into it is durable. */
static void
sync_dir_of(int at, const char *path)
{
	size_t dl = dir_len(path);
	char *dir = dl ? xstrndup(path, dl) : xstrdup(".");
	int dfd = openat(at, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
}

static void
out_free(struct tm_out_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	free(f->tmp);
	free(f->path);
	f->tmp = f->path = NULL;
}

enum tm_status
tm_out_commit(struct tm_out_file *f, struct tm_error *err)
{
	int e = 0;
	const char *what = "fsync";
	if (f->replaces) {
		/* the replaced file's mode and, where allowed, its owner */
		struct stat st;
		if (fstat(f->fd, &st) == 0 && (st.st_uid != f->uid || st.st_gid != f->gid) &&
		    fchown(f->fd, f->uid, f->gid) != 0) {
			/* not allowed (another user's file): ours, with its mode */
		}
		if (fchmod(f->fd, f->mode) != 0) {
			e = errno;
			what = "chmod";
		}
	}
	if (!e && !f->no_sync && fsync(f->fd) != 0)
		e = errno;
	/* Renamed while the descriptor, and so its lock, is held: closed
	 * first, the temp file would be unlocked for a moment, and a
	 * stale-temp cleaner of another write to this path could remove it
	 * before the rename.  fsync has made the bytes durable already. */
	if (!e && (f->create_only ? rename_create(f->dfd, f->tmp, f->path)
				  : renameat(f->dfd, f->tmp, f->dfd, f->path)) != 0) {
		e = errno;
		what = "rename";
	}
	(void)close(f->fd); /* after fsync (and the rename): nothing left to report */
	f->fd = -1;
	if (e == EEXIST && f->create_only) {
		enum tm_status s = tm_error_set(err, TM_ERR_EXISTS,
						"%s exists (it appeared while being written: kept, "
						"nothing written)",
						f->path);
		tm_out_abort(f);
		return s;
	}
	if (e) {
		enum tm_status s = tm_error_sys(err, e, "%s: %s of %s", f->path, what, f->tmp);
		tm_out_abort(f);
		return s;
	}
	if (!f->no_sync)
		sync_dir_of(f->dfd, f->path);
	out_free(f);
	return TM_OK;
}

void
tm_out_abort(struct tm_out_file *f)
{
	if (f->tmp)
		unlinkat(f->dfd, f->tmp, 0);
	out_free(f);
}

enum tm_status
tm_write_atomic(const char *path, const void *data, size_t len, struct tm_output *o,
		struct tm_error *err)
{
	struct tm_out_file f;
	enum tm_status s = tm_out_open(&f, path, o, err);
	if (s != TM_OK)
		return s;
	const uint8_t *p = data;
	while (len) {
		ssize_t r = write(f.fd, p, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			s = tm_error_sys(err, r < 0 ? errno : EIO, "%s: cannot write it", path);
			tm_out_abort(&f);
			return s;
		}
		p += r;
		len -= (size_t)r;
	}
	return tm_out_commit(&f, err);
}

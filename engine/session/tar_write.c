/* SPDX-License-Identifier: MIT */
/*
 * ustar writer for the merged archive.  POSIX ustar only ("ustar\0" "00"):
 * trace_processor ignores PAX headers, so a name that does not fit the
 * name/prefix fields is an error rather than a PAX record.  Sizes of 8 GiB
 * and more use the base-256 size encoding trace_processor reads.
 *
 * The file itself is written under the one rule for every output
 * (output.c: never an input or a special file, atomic, the user's
 * permissions); on any error or abort out_path is untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "input.h"

#define RECORD 10240u
/* A member name quoted in an error is shortened to this many bytes, so the
 * reason after it always fits the message. */
#define NAME_IN_MSG 200

struct tm_tar_writer {
	struct tm_out_file f;
	int fd; /* f.fd */
	char *out;
	bool reproducible;
	int64_t mtime;
	uint64_t left;    /* bytes still owed to the current member */
	uint64_t pad;     /* padding after it */
	uint64_t total;   /* bytes written */
	char *cur;        /* current member name, for errors */
};

static void
octal(uint8_t *f, size_t width, uint64_t v) /* width-1 digits and a NUL */
{
	f[width - 1] = 0;
	for (size_t i = width - 1; i > 0; i--) {
		f[i - 1] = (uint8_t)('0' + (v & 7));
		v >>= 3;
	}
}

enum tm_status
tm_tar_header(uint8_t h[512], const char *name, uint64_t size, int64_t mtime,
	      struct tm_error *err)
{
	size_t len = strlen(name);
	memset(h, 0, 512);
	if (len == 0)
		return tm_error_set(err, TM_ERR_INVALID, "empty member name");
	if (len <= 100) {
		memcpy(h, name, len);
	} else {
		/* prefix (<= 155) "/" name (1..100): try each '/' */
		size_t cut = SIZE_MAX;
		for (size_t i = 0; i < len && i <= 155; i++)
			if (name[i] == '/' && len - i - 1 <= 100 && len - i - 1 > 0)
				cut = i;
		if (cut == SIZE_MAX || cut == 0) {
			char sh[NAME_IN_MSG + 1];
			return tm_error_set(err, TM_ERR_INVALID,
					    "%s: member name of %zu bytes does not fit a ustar header "
					    "(at most 155 bytes of directories, '/', 100 bytes of name; "
					    "trace_processor ignores PAX long names)",
					    tm_shorten(name, NAME_IN_MSG, sh, sizeof sh), len);
		}
		memcpy(h + 345, name, cut);
		memcpy(h, name + cut + 1, len - cut - 1);
	}
	memcpy(h + 100, "0000644", 8);
	memcpy(h + 108, "0000000", 8);
	memcpy(h + 116, "0000000", 8);
	if (size < (1ull << 33)) {
		octal(h + 124, 12, size);
	} else {
		h[124] = 0x80;
		for (int i = 0; i < 8; i++)
			h[135 - i] = (uint8_t)(size >> (8 * i));
	}
	octal(h + 136, 12, mtime > 0 && (uint64_t)mtime < (1ull << 33) ? (uint64_t)mtime : 0);
	h[156] = '0';
	memcpy(h + 257, "ustar\0" "00", 8);
	memcpy(h + 329, "0000000", 8);
	memcpy(h + 337, "0000000", 8);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++)
		sum += h[i];
	octal(h + 148, 7, sum);
	h[155] = ' ';
	return TM_OK;
}

static enum tm_status
put(struct tm_tar_writer *w, const void *p, size_t n, struct tm_error *err)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t r = write(w->fd, b, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return tm_error_sys(err, errno, "%s: writing byte 0x%" PRIx64, w->out, w->total);
		}
		b += r;
		n -= (size_t)r;
		w->total += (uint64_t)r;
	}
	return TM_OK;
}

static enum tm_status
zeros(struct tm_tar_writer *w, uint64_t n, struct tm_error *err)
{
	static const uint8_t z[512];
	enum tm_status s;
	while (n) {
		size_t k = n < 512 ? (size_t)n : 512;
		if ((s = put(w, z, k, err)) != TM_OK)
			return s;
		n -= k;
	}
	return TM_OK;
}

char *
tm_read_file(const char *path, size_t max, bool head, size_t *len, struct tm_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		tm_error_sys(err, errno, "%s", path);
		return NULL;
	}
	struct tm_buf b;
	tm_buf_init(&b);
	for (;;) {
		char tmp[16384];
		size_t want = sizeof tmp;
		if (head && max - b.len < want)
			want = max - b.len;
		if (!want)
			break;
		ssize_t n = read(fd, tmp, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			tm_error_sys(err, errno, "%s", path);
			close(fd);
			tm_buf_fini(&b);
			return NULL;
		}
		if (n == 0)
			break;
		if ((size_t)n > max - b.len) {
			tm_error_set(err, TM_ERR_LIMIT, "%s: larger than %zu bytes", path, max);
			close(fd);
			tm_buf_fini(&b);
			return NULL;
		}
		tm_buf_add(&b, tmp, (size_t)n);
	}
	close(fd);
	*len = b.len;
	return tm_buf_steal(&b);
}

enum tm_status
tm_tar_begin(struct tm_tar_writer **out, const char *out_path, struct tm_output *o,
	     bool reproducible, int64_t mtime, struct tm_error *err)
{
	*out = NULL;
	struct tm_tar_writer *w = xcalloc(1, sizeof *w);
	enum tm_status s = tm_out_open(&w->f, out_path, o, err);
	if (s != TM_OK) {
		free(w);
		return s;
	}
	w->fd = w->f.fd;
	w->out = xstrdup(out_path);
	w->reproducible = reproducible;
	w->mtime = reproducible ? 0 : mtime ? mtime : (int64_t)time(NULL);
	*out = w;
	return TM_OK;
}

static enum tm_status
finish_member(struct tm_tar_writer *w, struct tm_error *err)
{
	char sh[NAME_IN_MSG + 1];
	if (w->left)
		return tm_error_set(err, TM_ERR_INVALID,
				    "%s: member %s: %" PRIu64 " bytes missing", w->out,
				    tm_shorten(w->cur ? w->cur : "", NAME_IN_MSG, sh, sizeof sh), w->left);
	enum tm_status s = zeros(w, w->pad, err);
	w->pad = 0;
	return s;
}

enum tm_status
tm_tar_add(struct tm_tar_writer *w, const char *name, uint64_t size, struct tm_error *err)
{
	uint8_t h[512];
	enum tm_status s;
	if ((s = finish_member(w, err)) != TM_OK)
		return s;
	if ((s = tm_tar_header(h, name, size, w->mtime, err)) != TM_OK)
		return s;
	if ((s = put(w, h, 512, err)) != TM_OK)
		return s;
	free(w->cur);
	w->cur = xstrdup(name);
	w->left = size;
	w->pad = (512 - size % 512) % 512;
	return TM_OK;
}

enum tm_status
tm_tar_write(struct tm_tar_writer *w, const void *p, size_t n, struct tm_error *err)
{
	char sh[NAME_IN_MSG + 1];
	if (n > w->left)
		return tm_error_set(err, TM_ERR_INVALID,
				    "%s: member %s: more data than its declared size", w->out,
				    tm_shorten(w->cur ? w->cur : "", NAME_IN_MSG, sh, sizeof sh));
	w->left -= n;
	return put(w, p, n, err);
}

static void
writer_free(struct tm_tar_writer *w)
{
	free(w->out);
	free(w->cur);
	free(w);
}

enum tm_status
tm_tar_commit(struct tm_tar_writer *w, struct tm_error *err)
{
	enum tm_status s;
	if ((s = finish_member(w, err)) == TM_OK && (s = zeros(w, 1024, err)) == TM_OK &&
	    (s = zeros(w, (RECORD - w->total % RECORD) % RECORD, err)) == TM_OK)
		s = tm_out_commit(&w->f, err);
	else
		tm_out_abort(&w->f);
	writer_free(w);
	return s;
}

void
tm_tar_abort(struct tm_tar_writer *w)
{
	if (!w)
		return;
	tm_out_abort(&w->f);
	writer_free(w);
}

/* SPDX-License-Identifier: MIT */
/*
 * TAR headers (input_priv.h): tar_trace_reader.cc rule by rule, the
 * entries of one TAR registered as members.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "zinflate.h"
#include "input_priv.h"

/* ---- TAR ---- */

/* ExtractUint64 of the 12-byte size field; NULL or the error text. */
static const char *
tar_size(const uint8_t *f, uint64_t *out)
{
	if (f[0] == 0)
		return "Size field is empty or zero.";
	if (f[0] & 0x80) {
		if (f[0] & 0x40)
			return "Negative size in base-256 encoding is not supported.";
		size_t start = 1;
		while (start < 12 && f[start] == 0)
			start++;
		if (12 - start > 8)
			return "Base-256 value exceeds uint64_t range.";
		uint64_t v = 0;
		for (size_t i = start; i < 12; i++)
			v = (v << 8) | f[i];
		*out = v;
		return NULL;
	}
	size_t i = 0;
	uint64_t v = 0;
	while (i < 12 && f[i] == ' ')
		i++;
	for (; i < 12 && f[i] != 0 && f[i] != ' '; i++) {
		if (f[i] < '0' || f[i] > '7')
			return "Invalid octal digit in size field.";
		v = (v << 3) + (uint64_t)(f[i] - '0');
	}
	*out = v;
	return NULL;
}

static size_t
field_len(const uint8_t *p, size_t n)
{
	const uint8_t *z = memchr(p, 0, n);
	return z ? (size_t)(z - p) : n;
}

/* TAR member mi of ci (SIZE_MAX: a metadata entry), whose first hn bytes
 * were read into head: hand it to the visitor (tm_input_open_visit) when ci
 * is read front to back, through a window over rd that the visitor reads
 * as far as it likes (*visited: it did). */
static enum tm_status
visit_member(struct tm_input *in, size_t ci, size_t mi, struct tm_rd *rd, const uint8_t *head,
	     size_t hn, uint64_t size, bool *visited, struct tm_error *err)
{
	const struct tm_visit *v = P(in)->visit;
	*visited = false;
	if (!v || mi == SIZE_MAX || in->members[mi].is_hidden ||
	    !tm_format_is_predicted(in->members[mi].format) || tm_ar_direct(in, ci))
		return TM_OK;
	char *lab = tm_ar_label(in, mi);
	struct tm_stream *w = tm_stream_borrow_after(rd, lab, head, hn, size);
	free(lab);
	*visited = true;
	return v->member(v->ud, mi, w, err);
}

/* The entries of TAR ci read from st (walk_tar); *vis_end: past the last
 * member handed to the visitor. */
enum tm_status
tm_ar_tar_entries(struct tm_input *in, size_t ci, struct tm_stream *st, size_t *vis_end,
	    struct tm_error *err)
{
	enum tm_status s;
	struct tm_rd rd = {.st = st};
	uint8_t h[512];
	int zeros = 0;
	bool pending_meta = false; /* a zero-size entry of another type */
	uint8_t pending_type = 0;
	char *long_name = NULL;
	size_t long_len = 0;
	uint64_t index = 0;

	for (;;) {
		uint64_t hoff = rd.off;
		size_t got;
		if ((s = tm_rd_read(&rd, h, 512, &got, err)) != TM_OK)
			goto out;
		if (pending_meta && got > 0) {
			tm_ar_set_cfatal(in, ci,
				   "trace_processor aborts (PERFETTO_CHECK failure) on this archive",
				   "byte 0x%" PRIx64 ": a zero-size TAR entry of type 0x%02x (link, "
				   "symlink, FIFO, ...) makes trace_processor crash when it reads "
				   "the next header; it cannot open this archive",
				   hoff - 512, pending_type);
			goto out;
		}
		if (got < 512) {
			tm_ar_set_cfatal(in, ci, "Premature end of TAR file (ERR:tp-corrupt)",
				   "byte 0x%" PRIx64 ": input ends before the two zero blocks "
				   "that end a TAR",
				   hoff + got);
			goto out;
		}
		bool gnu = memcmp(h + 257, "ustar  \0", 8) == 0;
		bool ustar = !gnu && memcmp(h + 257, "ustar\0", 6) == 0;
		if (!gnu && !ustar) {
			bool allz = true;
			for (size_t i = 0; i < 512 && allz; i++)
				allz = h[i] == 0;
			if (!allz) {
				tm_ar_set_cfatal(in, ci, "Invalid magic value",
					   "byte 0x%" PRIx64 ": not a TAR header (no ustar magic) "
					   "and not a zero block",
					   hoff);
				goto out;
			}
			if (++zeros == 2)
				break; /* anything after the end is ignored */
			continue;
		}
		uint8_t type = h[156];
		if (type == '5')
			continue; /* directory: no content consumed, state kept */
		zeros = 0;
		if (ustar && (h[263] != '0' || h[264] != '0')) {
			char t[64];
			snprintf(t, sizeof t, "Invalid version: %c%c", h[263], h[264]);
			tm_ar_set_cfatal(in, ci, t, "byte 0x%" PRIx64 ": ustar version must be \"00\"",
				   hoff + 263);
			goto out;
		}
		uint64_t size = 0;
		const char *se = tar_size(h + 124, &size);
		if (se) {
			char t[128];
			snprintf(t, sizeof t, "Failed to parse size field: %s", se);
			tm_ar_set_cfatal(in, ci, t, "byte 0x%" PRIx64 ": bad size field", hoff + 124);
			goto out;
		}
		char *name;
		size_t nlen;
		if (long_name) {
			name = long_name;
			nlen = long_len;
			long_name = NULL;
		} else {
			size_t pl = field_len(h + 345, 155), nl = field_len(h, 100);
			name = xmalloc(pl + 1 + nl + 1);
			nlen = 0;
			if (pl) {
				memcpy(name, h + 345, pl);
				name[pl] = '/';
				nlen = pl + 1;
			}
			memcpy(name + nlen, h, nl);
			nlen += nl;
			name[nlen] = 0;
		}
		bool content = type == '0' || type == 0 || type == 'L' || type == 'x' || type == 'g';
		if (!content) {
			free(name);
			if (size != 0) {
				char t[64];
				snprintf(t, sizeof t, "Unsupported file type: 0x%02x", type);
				tm_ar_set_cfatal(in, ci, t,
					   "byte 0x%" PRIx64 ": TAR entry type '%c' with content",
					   hoff + 156, type >= 0x20 && type < 0x7f ? type : '?');
				goto out;
			}
			pending_meta = true;
			pending_type = type;
			continue;
		}
		uint64_t pad = (512 - size % 512) % 512;
		uint64_t doff = rd.off;
		if (size > UINT64_MAX - 512 || doff + size + pad < doff) {
			free(name);
			tm_ar_set_cfatal(in, ci, "Premature end of TAR file (ERR:tp-corrupt)",
				   "byte 0x%" PRIx64 ": size field too large", hoff + 124);
			goto out;
		}
		if (type == 'L') {
			free(name);
			if (size > MAX_LONG_NAME) {
				s = tm_error_set(err, TM_ERR_LIMIT,
						 "%s: byte 0x%" PRIx64
						 ": GNU long name of %" PRIu64 " bytes (limit %u)",
						 in->members[ci].source_path, hoff, size, MAX_LONG_NAME);
				goto out;
			}
			long_name = xmalloc((size_t)size + 1);
			if ((s = tm_rd_read(&rd, long_name, (size_t)size, &got, err)) != TM_OK)
				goto out;
			long_name[size] = 0;
			long_len = (size_t)size;
			uint64_t k;
			if (got == size && (s = tm_rd_skip(&rd, pad, &k, err)) != TM_OK)
				goto out;
			if (got < size || k < pad) {
				tm_ar_set_cfatal(in, ci, "Premature end of TAR file (ERR:tp-corrupt)",
					   "byte 0x%" PRIx64 ": GNU long name runs past the end",
					   doff);
				goto out;
			}
			continue;
		}
		size_t mi = SIZE_MAX;
		uint8_t head[TAR_SNIFF];
		size_t hn = 0;
		uint64_t seen = 0; /* bytes of the member read past the head */
		if (type != 'x' && type != 'g') {
			if (tm_ar_too_many(in, err, &s)) {
				free(name);
				goto out;
			}
			mi = tm_ar_add_member(in, (int)ci, name, nlen, L_RANGE);
			struct tm_member *m = &in->members[mi];
			m->is_hidden = tm_ar_is_hidden(name, nlen);
			m->size = m->stored_size = size;
			m->index = index++;
			P(in)->locs[mi].off = doff;
			P(in)->locs[mi].len = size;
			if (!m->is_hidden) {
				if ((s = tm_rd_read(&rd, head, size < TAR_SNIFF ? (size_t)size : TAR_SNIFF,
						    &hn, err)) != TM_OK) {
					free(name);
					goto out;
				}
				tm_ar_set_format(m, tm_sniff(head, hn));
			}
			tm_ar_publish(in, mi);
		}
		free(name);
		bool visited = false;
		if ((s = visit_member(in, ci, mi, &rd, head, hn, size, &visited, err)) != TM_OK)
			goto out;
		if (visited) {
			seen = rd.off - doff - hn;
			if (mi + 1 > *vis_end)
				*vis_end = mi + 1;
		}
		uint64_t k = 0;
		if ((s = tm_rd_skip(&rd, size - hn - seen + pad, &k, err)) != TM_OK)
			goto out;
		if (hn + seen + k < size + pad) {
			/* The entry was never complete: trace_processor waits for
			 * the rest and never registers it. */
			if (mi != SIZE_MAX) {
				if (visited)
					P(in)->visit->drop(P(in)->visit->ud, mi);
				tm_ar_unlist_from(in, mi);
				index--;
			}
			tm_ar_set_cfatal(in, ci, "Premature end of TAR file (ERR:tp-corrupt)",
				   "byte 0x%" PRIx64 ": member data (%" PRIu64
				   " bytes and padding) runs past the end",
				   doff, size);
			goto out;
		}
	}
out:
	free(long_name);
	return s;
}


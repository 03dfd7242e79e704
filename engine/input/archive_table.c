/* SPDX-License-Identifier: MIT */
/*
 * The member table (input_priv.h): members added, unlisted and published
 * as the walk finds them, their labels, the hidden rule, a container's
 * fatal error and our warnings (archive_entry.cc, archive_reader.cc).
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

size_t
tm_ar_add_member(struct tm_input *in, int parent, const char *name, size_t name_len,
	   enum loc_kind kind)
{
	struct priv *pv = P(in);
	size_t cap = pv->cap;
	XGROW(in->members, cap, in->n_members + 1);
	XGROW(pv->locs, pv->cap, in->n_members + 1);
	size_t i = in->n_members++;
	struct tm_member *m = &in->members[i];
	memset(m, 0, sizeof *m);
	memset(&pv->locs[i], 0, sizeof pv->locs[i]);
	pv->locs[i].kind = kind;
	if (kind == L_INFLATE || kind == L_ZSTD)
		lc_w(&pv->locs[i]); /* before any scan reads it */
	if (name) {
		m->name = xmalloc(name_len + 1);
		memcpy(m->name, name, name_len);
		m->name[name_len] = 0;
		m->name_len = name_len;
	}
	m->parent = parent;
	m->trace_file_id = UINT32_MAX;
	m->order = UINT32_MAX;
	m->source_path = parent >= 0 ? in->members[parent].source_path : NULL;
	return i;
}

/* Unregister the members listed last, from `from` on (trace_processor never
 * registered them); a scan while listing may have given them an error. */
void
tm_ar_unlist_from(struct tm_input *in, size_t from)
{
	struct priv *pv = P(in);
	for (size_t i = from; i < in->n_members; i++) {
		free(in->members[i].name);
		free(in->members[i].error);
		lc_free(&pv->locs[i]);
	}
	in->n_members = from;
	if (pv->pub && pv->n_pub > from) {
		tm_listing_truncate(pv->pub, from);
		pv->n_pub = from;
	}
}

/* Publish member mi as it stands now (tm_session_opts.listing), and any
 * listed before it that were not yet. */
void
tm_ar_publish(struct tm_input *in, size_t mi)
{
	struct priv *pv = P(in);
	if (!pv->pub || mi >= in->n_members)
		return;
	for (; pv->n_pub < mi; pv->n_pub++)
		tm_listing_put(pv->pub, pv->n_pub, &in->members[pv->n_pub]);
	tm_listing_put(pv->pub, mi, &in->members[mi]);
	if (pv->n_pub == mi)
		pv->n_pub++;
}

void
tm_ar_set_format(struct tm_member *m, enum tm_format f)
{
	m->format = f;
	m->priority = tm_format_priority(f);
}

/* Hidden rule (archive_entry.cc): a non-empty component starting with '.'
 * other than "." and "..". */
bool
tm_ar_is_hidden(const char *p, size_t n)
{
	size_t s = 0;
	while (s <= n) {
		size_t e = s;
		while (e < n && p[e] != '/')
			e++;
		if (e > s && p[s] == '.') {
			bool dot = e - s == 1, dotdot = e - s == 2 && p[s + 1] == '.';
			if (!dot && !dotdot)
				return true;
		}
		if (e >= n)
			break;
		s = e + 1;
	}
	return false;
}

const char *
tm_ar_disp(const struct tm_member *m)
{
	if (!m->name)
		return "(top level)";
	return m->name_len ? m->name : "(decompressed)";
}

/* "<archive>: <member>: <nested member>" for errors. */
char *
tm_ar_label(const struct tm_input *in, size_t i)
{
	struct tm_buf b;
	size_t chain[MAX_DEPTH * 2 + 4], n = 0;
	tm_buf_init(&b);
	for (int j = (int)i; j >= 0 && n < sizeof chain / sizeof chain[0];
	     j = in->members[j].parent)
		chain[n++] = (size_t)j;
	const struct tm_member *m = &in->members[i];
	tm_buf_adds(&b, m->source_path ? m->source_path : "(input)");
	while (n--) {
		const struct tm_member *c = &in->members[chain[n]];
		if (chain[n] == 0 && !c->name)
			continue;
		if (in->is_loose && c->parent == 0) {
			continue; /* source_path already names the loose file */
		}
		tm_buf_adds(&b, ": ");
		tm_buf_adds(&b, tm_ar_disp(c));
	}
	return tm_buf_steal(&b);
}

char *
tm_input_label(const struct tm_input *in, size_t member)
{
	return tm_ar_label(in, member);
}

/* Ours, not trace_processor's: something it accepts silently that the
 * user should know (the first one is kept). */
void
tm_ar_input_warn(struct tm_input *in, size_t ci, uint64_t off, const char *fmt, ...)
{
	if (in->warning)
		return;
	char tmp[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	struct tm_buf b;
	char *where = tm_ar_label(in, ci);
	tm_buf_init(&b);
	tm_buf_addf(&b, "%s: byte %" PRIu64 " (0x%" PRIx64 "): %s; trace_processor drops the "
			"incomplete entry without an error",
		    where, off, off, tmp);
	free(where);
	in->warning = tm_buf_steal(&b);
}

void
tm_ar_set_cfatal(struct tm_input *in, size_t ci, const char *tp, const char *fmt, ...)
{
	struct loc_c *l = lc_w(&P(in)->locs[ci]);
	if (l->cfatal)
		return;
	l->cfatal = xstrdup(tp);
	/* TarTraceReader notices a short archive only at its end of input. */
	l->fatal_eof = strncmp(tp, "Premature end of TAR file", 25) == 0;
	struct tm_buf b;
	va_list ap;
	char tmp[1024];
	tm_buf_init(&b);
	char *lab = tm_ar_label(in, ci);
	tm_buf_adds(&b, lab);
	free(lab);
	tm_buf_adds(&b, ": ");
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	tm_buf_adds(&b, tmp);
	l->cwhere = tm_buf_steal(&b);
}

/* set_cfatal undone: a walk to be done again. */
void
tm_ar_clear_cfatal(struct tm_input *in, size_t ci)
{
	struct loc *lo = &P(in)->locs[ci];
	if (!lo->c)
		return;
	struct loc_c *l = lo->c;
	free(l->cfatal);
	free(l->cwhere);
	l->cfatal = l->cwhere = NULL;
	l->fatal_eof = false;
}

bool
tm_ar_too_many(struct tm_input *in, struct tm_error *err, enum tm_status *s)
{
	if (in->n_members < MAX_MEMBERS)
		return false;
	*s = tm_error_set(err, TM_ERR_LIMIT, "more than %u archive members", MAX_MEMBERS);
	return true;
}


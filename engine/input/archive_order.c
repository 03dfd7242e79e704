/* SPDX-License-Identifier: MIT */
/*
 * The processing order (input_priv.h): trace_file ids and the order in
 * which trace_processor imports a container's children
 * (archive_reader.cc: priority, name, index).
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

/* ---- ids and processing order ---- */

static int
entry_cmp(const struct tm_member *a, const struct tm_member *b)
{
	if (a->priority != b->priority)
		return a->priority < b->priority ? -1 : 1;
	size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c = memcmp(a->name, b->name, n);
	if (c)
		return c;
	if (a->name_len != b->name_len)
		return a->name_len < b->name_len ? -1 : 1;
	if (a->index != b->index)
		return a->index < b->index ? -1 : 1;
	return 0;
}

static int
entry_cmp_p(const void *a, const void *b)
{
	return entry_cmp(*(const struct tm_member *const *)a, *(const struct tm_member *const *)b);
}

void
tm_ar_start(struct tm_input *in, size_t i)
{
	struct priv *pv = P(in);
	in->members[i].order = pv->next_order++;
	XGROW(in->proc, pv->proc_cap, in->n_proc + 1);
	in->proc[in->n_proc++] = i;
}

static void
fail_at(struct tm_input *in, size_t ci)
{
	struct priv *pv = P(in);
	pv->stop = true;
	if (in->fatal)
		return;
	in->fatal = xstrdup(lc(&pv->locs[ci])->cfatal);
	in->fatal_where = xstrdup0(lc(&pv->locs[ci])->cwhere);
	in->fatal_after = in->n_proc;
}

static bool
is_compressed(enum tm_format f)
{
	return f == TM_FMT_GZIP || f == TM_FMT_CTRACE || f == TM_FMT_ZSTD;
}

/* Container ci has just started: register its children (ids in physical
 * order), then process them in (priority, name, index) order. */
void
tm_ar_process(struct tm_input *in, size_t ci)
{
	struct priv *pv = P(in);
	const struct loc *lo = &pv->locs[ci];
	size_t *kids = NULL, nk = 0, kcap = 0;

	if (!tm_format_is_container(in->members[ci].format))
		return;
	for (size_t i = 0; i < in->n_members; i++) {
		struct tm_member *m = &in->members[i];
		if (m->parent != (int)ci || m->is_hidden)
			continue;
		if (nk >= lc(lo)->reg_limit)
			break;
		m->trace_file_id = pv->next_id++;
		XGROW(kids, kcap, nk + 1);
		kids[nk++] = i;
	}
	/* Inside a gzip/zstd stream that fails, the inner container never
	 * reaches its end of input: the outer error comes first, and the
	 * inner one only if raised while parsing (a bad TAR header). */
	int pa = in->members[ci].parent;
	if (pa >= 0 && is_compressed(in->members[pa].format) && lc(&pv->locs[pa])->cfatal &&
	    (!lc(lo)->cfatal || lc(lo)->fatal_eof || lc(lo)->fatal_late)) {
		fail_at(in, (size_t)pa);
		free(kids);
		return;
	}
	if (lc(lo)->cfatal && !lc(lo)->fatal_late) {
		fail_at(in, ci);
		free(kids);
		return;
	}
	/* (priority, name, index) is a total order (index is unique within a
	 * container), so any sort gives the ArchiveEntry order; an insertion
	 * sort was quadratic on archives packed in reverse name order. */
	const struct tm_member **by = xmalloc((nk ? nk : 1) * sizeof *by);
	for (size_t a = 0; a < nk; a++)
		by[a] = &in->members[kids[a]];
	qsort(by, nk, sizeof *by, entry_cmp_p);
	for (size_t a = 0; a < nk; a++)
		kids[a] = (size_t)(by[a] - in->members);
	free(by);
	for (size_t k = 0; k < nk && !pv->stop; k++) {
		struct tm_member *m = &in->members[kids[k]];
		if (is_compressed(in->members[ci].format) && m->size == 0 &&
		    (!m->error || lc(lo)->cfatal))
			continue; /* nothing handed over: the parser never starts */
		tm_ar_start(in, kids[k]);
		tm_ar_process(in, kids[k]);
	}
	if (lc(lo)->cfatal && lc(lo)->fatal_late && !pv->stop)
		fail_at(in, ci);
	free(kids);
}


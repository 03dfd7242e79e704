/* SPDX-License-Identifier: MIT */
/*
 * The import replay's failures (trace_processor's wrapped parse error, the
 * manifest's) and stats counted per file and machine row (replay_priv.h).
 */
#include "replay_priv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* errors and stats                                                    */
/* ------------------------------------------------------------------ */

static void
vfail(struct tm_replay *p, const char *fmt, va_list ap) TM_PRINTF(2, 0);

static void
vfail(struct tm_replay *p, const char *fmt, va_list ap)
{
	if (p->error)
		return;
	struct tm_buf b;
	tm_buf_init(&b);
	char tmp[2048];
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	/* trace_processor_storage_impl.cc: top-level parse errors are wrapped
	 * unless they carry (ERR:fmt). */
	if (strstr(tmp, "(ERR:fmt)"))
		tm_buf_adds(&b, tmp);
	else
		tm_buf_addf(&b, "Trace parse failure: %s (ERR:tp-parse)", tmp);
	p->error = tm_buf_steal(&b);
}

void
tm_rp_fail(struct tm_replay *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(p, fmt, ap);
	va_end(ap);
}

/* tm_rp_fail() for an error the manifest causes (its parse, validation or apply,
 * or a manifest rule a trace breaks), whatever its text quotes: the report
 * says where it comes from (error_in_manifest). */
void
tm_rp_mfail(struct tm_replay *p, const char *fmt, ...)
{
	if (p->error)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfail(p, fmt, ap);
	va_end(ap);
	p->error_in_manifest = true;
}

/* n more of stat st on a file (struct tm_file_acc: its non-zero stats);
 * missing: its events missing under st (miss_mask) instead. */
void
tm_rp_acc_stat_add(struct tm_file_acc *a, int st, bool missing, uint64_t n)
{
	uint64_t b = 1ull << st, *mask = missing ? &a->miss_mask : &a->stat_mask;
	size_t k = (size_t)__builtin_popcountll(*mask & (b - 1)) +
		   (missing ? (size_t)__builtin_popcountll(a->stat_mask) : 0);
	if (*mask & b) {
		a->stat_v[k] += n;
		return;
	}
	if (!n)
		return;
	size_t cnt = (size_t)__builtin_popcountll(a->stat_mask) +
		     (size_t)__builtin_popcountll(a->miss_mask);
	a->stat_v = xrealloc(a->stat_v, (cnt + 1) * sizeof *a->stat_v);
	memmove(a->stat_v + k + 1, a->stat_v + k, (cnt - k) * sizeof *a->stat_v);
	a->stat_v[k] = n;
	*mask |= b;
}

/* n more events of a file missing from the merged trace, lost under stat
 * st (tm_stat_loses_events): every place the replay loses an event counts
 * it here, and the events list (tm_rp_record_event) names the same stat. */
void
tm_rp_missing_add(struct tm_file_acc *a, enum tm_stat_id st, uint64_t n)
{
	tm_rp_acc_stat_add(a, (int)st, true, n);
}

/* Count a stat on the context's file and, for the three drop stats, on its
 * machine row. */
void
tm_rp_stat_add(struct tm_replay *p, const struct tm_tracker *c, enum tm_stat_id st, uint64_t n)
{
	tm_rp_acc_stat_add(&p->acc[c->file], (int)st, false, n);
	if (tm_stat_is_drop(st)) {
		if (c->row >= p->cap_row_drops) {
			size_t old = p->cap_row_drops;
			XGROW(p->row_drops, p->cap_row_drops, (size_t)c->row + 1);
			memset(p->row_drops + old, 0, (p->cap_row_drops - old) * sizeof *p->row_drops);
		}
		p->row_drops[c->row] += n;
	}
}


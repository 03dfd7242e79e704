/* SPDX-License-Identifier: MIT */
/* Shared by the scanner tests: run a scanner over a buffer and render its
 * ops as one line of text ("C1000 S:stat F:text"), the same in any blocks
 * (test_scan_json.c, test_scan_systrace.c); compare two scans field by
 * field (same_scan: test_scancache.c, test_scan_proto.c,
 * test_fuzz_regress.c), and two alignment samples (same_align:
 * test_align_scan.c, test_scan_json.c). */
#ifndef TM_TEST_SCAN_HELPERS_H
#define TM_TEST_SCAN_HELPERS_H
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "align_scan.h"
#include "scan.h"
#include "t.h"

typedef enum tm_status (*scan_fn)(const void *, size_t, size_t, struct tm_scan *,
				  const struct tm_scan_ctl *, struct tm_error *);

static inline void
render_ops(const struct tm_scan *sc, struct tm_buf *out, int with_details)
{
	struct tm_opiter it;
	struct tm_op op;
	tm_opiter_init(&it, &sc->log);
	while (tm_opiter_next(&it, &op)) {
		if (out->len)
			tm_buf_addc(out, ' ');
		switch (op.kind) {
		case TM_OP_CONVERT:
			tm_buf_addf(out, "C%s%lld", op.flags & TM_CONV_WAIT_TZ ? "w" : "", (long long)op.ts);
			if (with_details && op.detail) {
				const struct tm_detail *d = &sc->log.x->details[op.detail - 1];
				const char *nm = tm_oplog_detail_name(&sc->log, d);
				if (d->flags & TM_DETAIL_VALUE) { /* a counter's value */
					double v;
					memcpy(&v, &d->dur, sizeof v);
					tm_buf_addf(out, "[%c,%s,v=%g]", d->phase ? d->phase : '-',
						    nm ? nm : "", v);
				} else {
					tm_buf_addf(out, "[%c,%s,%lld]", d->phase ? d->phase : '-',
						    nm ? nm : "", (long long)d->dur);
				}
			}
			break;
		case TM_OP_STAT:
			tm_buf_addf(out, "S:%s", tm_stat_name((enum tm_stat_id)op.stat));
			break;
		case TM_OP_FATAL:
			tm_buf_addf(out, "F:%s", op.text);
			break;
		case TM_OP_TIMEZONE:
			tm_buf_addf(out, "Z%lld", (long long)op.ts);
			break;
		default:
			tm_buf_addf(out, "?%d", (int)op.kind);
			break;
		}
	}
	tm_opiter_fini(&it);
}

/* Scan s with the given block size and ctl; returns a malloc'd rendering
 * (with_packets: " n=N packets" appended, whatever the outcome). */
static inline char *
scan_str_ctl(scan_fn fn, const char *s, size_t n, size_t block, const struct tm_scan_ctl *ctl,
	     int details, bool with_packets)
{
	struct tm_scan sc;
	struct tm_error err = { 0 };
	tm_scan_init(&sc, TM_FMT_JSON);
	enum tm_status rc = fn(s, n, block, &sc, ctl, &err);
	struct tm_buf b;
	tm_buf_init(&b);
	if (rc != TM_OK)
		tm_buf_addf(&b, "ERR:%s", err.msg);
	else
		render_ops(&sc, &b, details);
	if (with_packets)
		tm_buf_addf(&b, " n=%llu", (unsigned long long)sc.n_packets);
	tm_scan_fini(&sc);
	return tm_buf_steal(&b);
}

/* Scan s with the given block size; returns a malloc'd rendering. */
static inline char *
scan_str_n(scan_fn fn, const char *s, size_t n, size_t block, int details)
{
	struct tm_scan_ctl ctl = { .keep_events = details != 0 };
	return scan_str_ctl(fn, s, n, block, &ctl, details, false);
}

/* Same ops (with details) whatever the block size: s scanned whole, then
 * in each of blocks[0..n). */
static inline void
check_blocks_of(scan_fn fn, const char *s, const size_t *blocks, size_t n)
{
	char *whole = scan_str_n(fn, s, strlen(s), 0, 1);
	for (size_t i = 0; i < n; i++) {
		char *b = scan_str_n(fn, s, strlen(s), blocks[i], 1);
		CHECK_STR(b, whole);
		free(b);
	}
	free(whole);
}

static inline void
scan_buf_put(void *ctx, const void *p, size_t n)
{
	tm_buf_add(ctx, p, n);
}

/* The log's bytes with spilled runs inline (what is saved). */
static inline bool
same_log_bytes(const struct tm_oplog *x, const struct tm_oplog *y)
{
	struct tm_buf a, b;
	tm_buf_init(&a);
	tm_buf_init(&b);
	tm_oplog_write_inline(x, scan_buf_put, &a);
	tm_oplog_write_inline(y, scan_buf_put, &b);
	bool same = a.len == b.len && (!a.len || !memcmp(a.data, b.data, a.len));
	tm_buf_fini(&a);
	tm_buf_fini(&b);
	return same;
}

/* Every field of two alignment samples, compared (each one's names and
 * ids found in the other where the first keeps them). */
static inline bool
same_align(const struct tm_align_samples *p, const struct tm_align_samples *q)
{
	bool same = p->n_names == q->n_names && p->n_ids == q->n_ids && p->id_mask == q->id_mask &&
		    p->n_id_events == q->n_id_events && p->names_full == q->names_full;
	for (size_t i = 0; same && i < p->n_names; i++)
		same = p->names[i].h == q->names[i].h && p->names[i].count == q->names[i].count &&
		       p->names[i].n == q->names[i].n && p->names[i].len == q->names[i].len &&
		       p->names[i].all_instant == q->names[i].all_instant &&
		       p->names[i].occ_len == q->names[i].occ_len &&
		       (!p->names[i].occ_len || !memcmp(p->names[i].occ, q->names[i].occ, p->names[i].occ_len)) &&
		       !memcmp(p->names[i].name, q->names[i].name, p->names[i].len) &&
		       tm_al_find_name(q, p->names[i].name, p->names[i].len) == &q->names[i];
	for (size_t i = 0; same && i < p->n_ids; i++)
		same = p->ids[i].key == q->ids[i].key && p->ids[i].have == q->ids[i].have &&
		       p->ids[i].ident_len == q->ids[i].ident_len &&
		       (!p->ids[i].ident_len || !memcmp(p->ids[i].ident, q->ids[i].ident, p->ids[i].ident_len)) &&
		       !memcmp(&p->ids[i].out, &q->ids[i].out, sizeof p->ids[i].out) &&
		       !memcmp(&p->ids[i].in, &q->ids[i].in, sizeof p->ids[i].in) &&
		       tm_al_find_id(q, &p->ids[i]) == &q->ids[i];
	return same;
}

/* Every field a scan keeps, compared. */
static inline bool
same_scan(const struct tm_scan *a, const struct tm_scan *b)
{
	if (!a || !b)
		return a == b;
	const struct tm_oplog *x = &a->log, *y = &b->log;
	bool same = a->format == b->format && a->n_packets == b->n_packets &&
		    a->n_events == b->n_events && !memcmp(a->clocks_seen, b->clocks_seen, 16) &&
		    a->has_snapshot == b->has_snapshot && a->n_embedded == b->n_embedded &&
		    (!a->n_embedded || !memcmp(a->embedded, b->embedded, a->n_embedded * 4)) &&
		    a->has_raw_ts == b->has_raw_ts && a->raw_min == b->raw_min &&
		    a->raw_max == b->raw_max && !a->warning == !b->warning &&
		    (!a->warning || !strcmp(a->warning, b->warning)) && a->failed == b->failed &&
		    !a->err == !b->err &&
		    (!a->err || (!strcmp(a->err->msg, b->err->msg) && !strcmp(a->err->tp, b->err->tp))) &&
		    same_log_bytes(x, y) &&
		    x->n_ops == y->n_ops && x->x->n_details == y->x->n_details &&
		    x->x->pool.len == y->x->pool.len &&
		    (!x->x->pool.len || !memcmp(x->x->pool.data, y->x->pool.data, x->x->pool.len)) &&
		    !a->align == !b->align;
	for (size_t i = 0; same && i < x->x->n_details; i++)
		same = x->x->details[i].name == y->x->details[i].name &&
		       x->x->details[i].phase == y->x->details[i].phase &&
		       x->x->details[i].track == y->x->details[i].track &&
		       x->x->details[i].dur == y->x->details[i].dur;
	return same && (!a->align || same_align(a->align, b->align));
}
#endif

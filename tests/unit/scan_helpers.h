/* SPDX-License-Identifier: MIT */
/* Shared by test_scan_json.c and test_scan_systrace.c: run a scanner over a
 * buffer and render its ops as one line of text ("C1000 S:stat F:text"). */
#ifndef TM_TEST_SCAN_HELPERS_H
#define TM_TEST_SCAN_HELPERS_H
#include <stdlib.h>

#include "scan.h"

typedef enum tm_status (*scan_fn)(const void *, size_t, size_t, struct tm_scan *,
				  const struct tm_scan_ctl *, struct tm_error *);

static void
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
			tm_buf_addf(out, "C%lld", (long long)op.ts);
			if (with_details && op.detail) {
				const struct tm_detail *d = &sc->log.details[op.detail - 1];
				const char *nm = tm_oplog_detail_name(&sc->log, d);
				tm_buf_addf(out, "[%c,%s,%lld]", d->phase ? d->phase : '-',
					    nm ? nm : "", (long long)d->dur);
			}
			break;
		case TM_OP_STAT:
			tm_buf_addf(out, "S:%s", tm_stat_name((enum tm_stat_id)op.stat));
			break;
		case TM_OP_FATAL:
			tm_buf_addf(out, "F:%s", op.text);
			break;
		default:
			tm_buf_addf(out, "?%d", (int)op.kind);
			break;
		}
	}
	tm_opiter_fini(&it);
}

/* Scan s with the given block size; returns a malloc'd rendering. */
static char *
scan_str_n(scan_fn fn, const char *s, size_t n, size_t block, int details)
{
	struct tm_scan sc;
	struct tm_error err = { 0 };
	struct tm_scan_ctl ctl = { .keep_events = details != 0 };
	tm_scan_init(&sc, TM_FMT_JSON);
	enum tm_status rc = fn(s, n, block, &sc, &ctl, &err);
	struct tm_buf b;
	tm_buf_init(&b);
	if (rc != TM_OK)
		tm_buf_addf(&b, "ERR:%s", err.msg);
	else
		render_ops(&sc, &b, details);
	tm_scan_fini(&sc);
	return tm_buf_steal(&b);
}
#endif

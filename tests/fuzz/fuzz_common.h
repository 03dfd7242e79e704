/* SPDX-License-Identifier: MIT */
/* Shared by the libFuzzer targets: a checked abort that names the property
 * that broke, and a block splitter driven by the first input bytes. */
#ifndef TM_FUZZ_COMMON_H
#define TM_FUZZ_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(c)                                                                              \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #c);   \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef TM_SCAN_H
/* Two scans of the same bytes with different block splittings must agree on
 * everything: status, error text, ops (offsets included), details, summary. */
static void
scans_must_match(const struct tm_scan *a, enum tm_status ra, const struct tm_error *ea,
		 const struct tm_scan *b, enum tm_status rb, const struct tm_error *eb,
		 size_t block)
{
	const char *what = NULL;
	if (ra != rb)
		what = "status";
	else if (ra != TM_OK && strcmp(ea->msg, eb->msg) != 0)
		what = "error text";
	else if (a->log.len != b->log.len ||
		 (a->log.len && memcmp(a->log.bytes, b->log.bytes, a->log.len)))
		what = "ops";
	else if (a->log.n_ops != b->log.n_ops)
		what = "n_ops";
	else if (a->log.x->n_details != b->log.x->n_details ||
		 (a->log.x->n_details && memcmp(a->log.x->details, b->log.x->details,
					     a->log.x->n_details * sizeof *a->log.x->details)))
		what = "details";
	else if (a->log.x->pool.len != b->log.x->pool.len ||
		 (a->log.x->pool.len && memcmp(a->log.x->pool.data, b->log.x->pool.data, a->log.x->pool.len)))
		what = "detail strings";
	else if (a->n_packets != b->n_packets || a->n_events != b->n_events)
		what = "packet/event counts";
	else if (memcmp(a->clocks_seen, b->clocks_seen, sizeof a->clocks_seen) ||
		 a->has_snapshot != b->has_snapshot)
		what = "clocks";
	else if (a->n_embedded != b->n_embedded ||
		 (a->n_embedded && memcmp(a->embedded, b->embedded, a->n_embedded * sizeof *a->embedded)))
		what = "embedded machines";
	else if (a->has_raw_ts != b->has_raw_ts ||
		 (a->has_raw_ts && (a->raw_min != b->raw_min || a->raw_max != b->raw_max)))
		what = "raw ts range";
	else if (a->failed != b->failed)
		what = "failed";
	else if (a->failed && strcmp(a->err ? a->err->msg : "", b->err ? b->err->msg : "") != 0)
		what = "scan error text";
	if (what) {
		fprintf(stderr, "block splitting changes the %s (block %zu)\n", what, block);
		fprintf(stderr, "  whole: rc=%d ops=%zu bytes n_ops=%llu err=%s\n", (int)ra, a->log.len,
			(unsigned long long)a->log.n_ops, ra ? ea->msg : "");
		fprintf(stderr, "  split: rc=%d ops=%zu bytes n_ops=%llu err=%s\n", (int)rb, b->log.len,
			(unsigned long long)b->log.n_ops, rb ? eb->msg : "");
		abort();
	}
}

/* A scan's op log must decode to its end: as many ops as it counts. */
static inline void
fuzz_log_decodes_whole(const struct tm_oplog *log)
{
	struct tm_opiter it;
	struct tm_op op;
	uint64_t k = 0;
	tm_opiter_init(&it, log);
	while (tm_opiter_next(&it, &op))
		k++;
	tm_opiter_fini(&it);
	FUZZ_CHECK(k == log->n_ops);
}

/* A text scanner's target (fuzz_scan_json, fuzz_scan_systrace): the bytes
 * scanned once as one block and once in blocks of a size taken from the
 * first two input bytes (and byte by byte for small inputs); all must give
 * the same ops.  Input: [h0 h1] text...; h1&0x80: keep_events. */
typedef enum tm_status (*fuzz_text_scan_fn)(const void *p, size_t n, size_t block,
					   struct tm_scan *sc, const struct tm_scan_ctl *ctl,
					   struct tm_error *err);

static inline void
fuzz_text_run(fuzz_text_scan_fn scan, enum tm_format fmt, const uint8_t *p, size_t n, size_t block,
	      bool keep, struct tm_scan *sc, enum tm_status *rc, struct tm_error *err)
{
	struct tm_scan_ctl ctl = {.keep_events = keep};
	memset(err, 0, sizeof *err);
	tm_scan_init(sc, fmt);
	*rc = scan(p, n, block, sc, &ctl, err);
}

static inline int
fuzz_text_scanner(fuzz_text_scan_fn scan, enum tm_format fmt, const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t block = ((size_t)data[0] | ((size_t)(data[1] & 0x7f) << 8)) % 4099 + 1;
	bool keep = (data[1] & 0x80) != 0;
	const uint8_t *p = data + 2;
	size_t n = size - 2;
	struct tm_scan a, b;
	struct tm_error ea, eb;
	enum tm_status ra, rb;

	fuzz_text_run(scan, fmt, p, n, 0, keep, &a, &ra, &ea);
	fuzz_text_run(scan, fmt, p, n, block, keep, &b, &rb, &eb);
	scans_must_match(&a, ra, &ea, &b, rb, &eb, block);
	tm_scan_fini(&b);
	if (n <= 4096) {
		fuzz_text_run(scan, fmt, p, n, 1, keep, &b, &rb, &eb);
		scans_must_match(&a, ra, &ea, &b, rb, &eb, 1);
		tm_scan_fini(&b);
	}
	fuzz_log_decodes_whole(&a.log);
	tm_scan_fini(&a);
	return 0;
}
#endif
#endif

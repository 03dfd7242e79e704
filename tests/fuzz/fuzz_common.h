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
	else if (a->log.n_details != b->log.n_details ||
		 (a->log.n_details && memcmp(a->log.details, b->log.details,
					     a->log.n_details * sizeof *a->log.details)))
		what = "details";
	else if (a->log.pool.len != b->log.pool.len ||
		 (a->log.pool.len && memcmp(a->log.pool.data, b->log.pool.data, a->log.pool.len)))
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
#endif
#endif

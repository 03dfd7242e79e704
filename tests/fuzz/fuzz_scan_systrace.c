/* SPDX-License-Identifier: MIT */
/* bytes -> tm_scan_systrace_mem, once as one block and once in blocks of a size
 * taken from the first two input bytes (and byte by byte for small inputs);
 * all must give the same ops.  Input: [h0 h1] text...; h1&0x80: keep_events. */
#include "scan.h"

#include "fuzz_common.h"

static void
run(const uint8_t *p, size_t n, size_t block, bool keep, struct tm_scan *sc, enum tm_status *rc,
    struct tm_error *err)
{
	struct tm_scan_ctl ctl = {.keep_events = keep};
	memset(err, 0, sizeof *err);
	tm_scan_init(sc, TM_FMT_SYSTRACE);
	*rc = tm_scan_systrace_mem(p, n, block, sc, &ctl, err);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
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

	run(p, n, 0, keep, &a, &ra, &ea);
	run(p, n, block, keep, &b, &rb, &eb);
	scans_must_match(&a, ra, &ea, &b, rb, &eb, block);
	tm_scan_fini(&b);
	if (n <= 4096) {
		run(p, n, 1, keep, &b, &rb, &eb);
		scans_must_match(&a, ra, &ea, &b, rb, &eb, 1);
		tm_scan_fini(&b);
	}
	struct tm_opiter it;
	struct tm_op op;
	uint64_t k = 0;
	tm_opiter_init(&it, &a.log);
	while (tm_opiter_next(&it, &op))
		k++;
	tm_opiter_fini(&it);
	FUZZ_CHECK(k == a.log.n_ops);
	tm_scan_fini(&a);
	return 0;
}

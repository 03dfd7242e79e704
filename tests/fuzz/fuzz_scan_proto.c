/* SPDX-License-Identifier: MIT */
/* bytes -> tm_scan_proto_blocks, once as one block and once split into blocks
 * whose sizes come from the first input bytes; both must give the same ops.
 * Every block is copied into its own exact-size allocation and freed at the
 * next call, so a scanner that reads past a block or keeps a borrowed pointer
 * across next() trips ASan.
 * Input: [h] [h&7 size bytes] trace...; h&8: keep_events; h&16: sizes x 61. */
#include "scan.h"

#include "fuzz_common.h"

struct feed {
	const uint8_t *p;
	size_t n, off;
	const uint8_t *sizes;
	size_t n_sizes, k, mul;
	uint8_t *blk;
};

static enum tm_status
next_block(void *ctx, const uint8_t **p, size_t *n, struct tm_error *err)
{
	struct feed *f = ctx;
	(void)err;
	free(f->blk);
	f->blk = NULL;
	size_t want = f->n - f->off;
	if (f->n_sizes) {
		size_t s = ((size_t)f->sizes[f->k++ % f->n_sizes] + 1) * f->mul;
		if (s < want)
			want = s;
	} else if (f->mul) {
		if (want > 1)
			want = 1;
	}
	*n = want;
	if (!want) {
		*p = NULL;
		return TM_OK;
	}
	f->blk = malloc(want);
	memcpy(f->blk, f->p + f->off, want);
	f->off += want;
	*p = f->blk;
	return TM_OK;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t h = data[0];
	size_t ns = h & 7;
	if (size < 1 + ns)
		return 0;
	const uint8_t *trace = data + 1 + ns;
	size_t n = size - 1 - ns;
	struct tm_scan_ctl ctl = {.keep_events = (h & 8) != 0};

	struct feed whole = {.p = trace, .n = n};
	struct feed split = {.p = trace, .n = n, .sizes = data + 1, .n_sizes = ns,
			     .mul = (h & 16) ? 61 : 1};
	struct tm_scan a, b;
	struct tm_error ea = {0}, eb = {0};
	tm_scan_init(&a, TM_FMT_PROTO);
	tm_scan_init(&b, TM_FMT_PROTO);
	enum tm_status ra = tm_scan_proto_blocks(next_block, &whole, &a, &ctl, &ea);
	enum tm_status rb = tm_scan_proto_blocks(next_block, &split, &b, &ctl, &eb);
	free(whole.blk);
	free(split.blk);
	scans_must_match(&a, ra, &ea, &b, rb, &eb, ns ? (size_t)data[1] + 1 : 1);
	fuzz_log_decodes_whole(&a.log);
	tm_scan_fini(&a);
	tm_scan_fini(&b);
	return 0;
}

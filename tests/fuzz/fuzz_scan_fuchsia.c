/* SPDX-License-Identifier: MIT */
/* bytes -> tm_scan_fuchsia_mem, once as one block and once in blocks of a
 * size taken from the first two input bytes (and byte by byte for small
 * inputs); all must give the same ops (fuzz_text_scanner, fuzz_common.h).
 * Input: [h0 h1] FXT records...; h1&0x80: keep_events. */
#include "scan.h"

#include "fuzz_common.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_text_scanner(tm_scan_fuchsia_mem, TM_FMT_FUCHSIA, data, size);
}

/* SPDX-License-Identifier: MIT */
/* bytes -> tm_manifest_parse; when valid: emit, re-parse, emit again must be
 * byte-identical, the two models tm_manifest_equal, and a deep copy equal. */
#include "fuzz_common.h"

#include "tracemerge.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tm_manifest m1, m2, m3;
	struct tm_error err = {0};
	struct tm_buf e1, e2;

	if (tm_manifest_parse((const char *)data, size, &m1, &err) != TM_OK) {
		FUZZ_CHECK(err.code != TM_OK);
		FUZZ_CHECK(memchr(err.msg, 0, sizeof err.msg) != NULL);
		tm_manifest_fini(&m1); /* left initialised and empty */
		return 0;
	}
	tm_buf_init(&e1);
	tm_buf_init(&e2);
	tm_manifest_emit(&m1, &e1);
	FUZZ_CHECK(e1.data && e1.len > 0 && e1.data[e1.len - 1] == '\n');
	if (tm_manifest_parse(e1.data, e1.len, &m2, &err) != TM_OK) {
		fprintf(stderr, "re-parse of emitted manifest failed: %s\n%s", err.msg, e1.data);
		abort();
	}
	tm_manifest_emit(&m2, &e2);
	if (e1.len != e2.len || memcmp(e1.data, e2.data, e1.len) != 0) {
		fprintf(stderr, "emit not stable:\n--- first\n%s--- second\n%s", e1.data, e2.data);
		abort();
	}
	FUZZ_CHECK(tm_manifest_equal(&m1, &m2));
	FUZZ_CHECK(tm_manifest_equal(&m2, &m1));
	tm_manifest_copy(&m3, &m1);
	FUZZ_CHECK(tm_manifest_equal(&m3, &m1));
	(void)tm_manifest_is_trivial(&m1);
	tm_manifest_fini(&m3);
	tm_manifest_fini(&m2);
	tm_manifest_fini(&m1);
	tm_buf_fini(&e1);
	tm_buf_fini(&e2);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* bytes written to a temp file -> tm_session_open, tm_session_evaluate with
 * the input's own manifest, tm_report_free, tm_session_close.  Covers
 * TAR/ZIP/gzip walking, sniffing, streams, every scanner and the replay.
 * Errors must name something (non-empty msg); a report must be consistent. */
#include "fuzz_common.h"

#include <unistd.h>

#include "tracemerge.h"

static char path[64];
static int fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *dir = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/tmfuzz-XXXXXX", dir && strlen(dir) < 40 ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		abort();
	}
	return 0;
}

static void
cleanup(void) __attribute__((destructor));
static void
cleanup(void)
{
	if (fd >= 0)
		unlink(path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	const char *paths[1] = {path};
	struct tm_session *s = NULL;
	struct tm_error err = {0};
	struct tm_session_opts opts = {.keep_events = size & 1};
	if (tm_session_open(&s, paths, 1, &opts, &err) != TM_OK) {
		FUZZ_CHECK(s == NULL && err.msg[0]);
		return 0;
	}
	size_t nm = tm_session_n_members(s);
	FUZZ_CHECK(nm >= 1);
	for (size_t i = 0; i < nm; i++) {
		const struct tm_member *mb = tm_session_member(s, i);
		FUZZ_CHECK(mb->parent < (int)i);
		FUZZ_CHECK(!mb->name || strlen(mb->name) <= mb->name_len);
	}
	const struct tm_error *merr = NULL;
	(void)tm_session_manifest(s, &merr);
	struct tm_report *r = NULL;
	memset(&err, 0, sizeof err);
	if (tm_session_evaluate(s, NULL, &r, &err) == TM_OK) {
		FUZZ_CHECK(r != NULL);
		FUZZ_CHECK(!r->ok || !r->error);
		for (size_t i = 0; i < r->n_files; i++)
			FUZZ_CHECK(r->files[i].member < nm);
		FUZZ_CHECK(r->tt_file < (int)r->n_files);
		struct tm_buf v;
		tm_buf_init(&v);
		tm_report_verdict(r, &v);
		tm_buf_fini(&v);
		tm_report_free(r);
	} else {
		FUZZ_CHECK(err.msg[0]);
	}
	tm_session_close(s);
	return 0;
}

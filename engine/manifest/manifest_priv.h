/* SPDX-License-Identifier: MIT */
/*
 * Private to the manifest module (manifest*.c): the pieces its files share.
 * The module is split by job: util/json_dom.c reads the JSON into a DOM,
 * manifest.c owns the model's lifetime, manifest_validate.c runs the
 * reader's checks (tm_manifest_parse), manifest_apply.c the apply plan,
 * manifest_emit.c the writer, manifest_hints.c the outdated-syntax hints,
 * manifest_edit.c the edit helpers; clock names and durations live in
 * clock_names.c and duration.c.
 */
#ifndef TM_MANIFEST_PRIV_H
#define TM_MANIFEST_PRIV_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header: front ends include only tracemerge.h"
#endif

#include <cJSON.h>

#include <string.h>

#include "internal.h"
#include "json_dom.h"
#include "manifest_internal.h"
#include "strmap.h"

#define PFX "perfetto_manifest: "
/* manifest.c */
bool tm_mf_str_eq(const char *a, const char *b); /* NULL-aware */
void tm_mf_clocks_fini(struct tm_manifest_clocks *c);
void tm_mf_file_fini(struct tm_manifest_file *f);
void tm_mf_machines_clear(struct tm_manifest_file *f);
void tm_mf_attr_fini(struct tm_manifest_attr *a);

/* manifest_validate.c: sets a TM_ERR_MANIFEST error, returns its status. */
enum tm_status tm_mf_err(struct tm_error *err, const char *fmt, ...) TM_PRINTF(2, 3);

/* s as a JSON string literal (the writer, hints): tm_escape_json_raw. */
static inline void
json_str(struct tm_buf *b, const char *s)
{
	tm_escape_json_raw(s, strlen(s), b);
}

/* files[].path's bytes (tm_manifest_file.path_len). */
static inline size_t
tm_mf_path_len(const struct tm_manifest_file *f)
{
	return f->path_len ? f->path_len : strlen(f->path);
}

/* manifest_hints.c: appends the outdated-syntax hint for meta (the
 * perfetto_manifest object) to err, if any applies; ctx (may be NULL):
 * what the input's files are, so the hint names only clocks they have. */
void tm_mf_old_syntax_hint(const cJSON *meta, const struct tm_convert_ctx *ctx,
			   struct tm_error *err);

/* The index of files[].path: each path to its first entry, for the array
 * and count it was built on (a manifest changed behind the functions here
 * is searched linearly, never answered from a stale index). */
struct mf_index {
	const struct tm_manifest_file *files;
	size_t n;
	struct tm_strmap map;
};

/* Frees an index (NULL: nothing); manifest.c. */
void tm_mf_index_free(struct mf_index *ix);

#endif

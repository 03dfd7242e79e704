/* SPDX-License-Identifier: MIT */
/* trace_processor's JSON reader as a DOM (json_dom.c): the manifest's
 * reader and the gecko scanner's. */
#ifndef TM_JSON_DOM_H
#define TM_JSON_DOM_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include <cJSON.h>

#include "internal.h"

/* Nesting limit of the reader (ours: trace_processor recurses without one). */
#define MAX_DEPTH 1000

/* Where the reader stopped on an error (ours: trace_processor says only
 * "Failed to parse object: " when the text ends early). */
struct tm_mj_stop {
	bool incomplete;      /* the text ended before the root value did */
	size_t offset;        /* where it ended */
	const char *expected; /* what was expected there (a static string) */
};

/* json_dom.c: json::Parse with trace_processor's grammar into a cJSON
 * tree whose numbers are raw nodes holding their exact token.  Returns the
 * root, or NULL with trace_processor's error text in msg and *stop set. */
cJSON *tm_mj_parse(const char *text, size_t len, char *msg, size_t msg_size,
		   struct tm_mj_stop *stop);
/* json::Dom accessors on that tree. */
const cJSON *tm_mj_member(const cJSON *o, const char *key);
bool tm_mj_is_str(const cJSON *v);
/* A string node's bytes: more than strlen when it holds an escaped NUL. */
size_t tm_mj_str_len(const cJSON *v);
bool tm_mj_is_num(const cJSON *v);
bool tm_mj_is_int(const cJSON *v, int64_t *out); /* IsIntegral; out may be NULL */
int64_t tm_mj_as_int64(const cJSON *v);
/* The members of o not in known (NULL-terminated), copied; NULL if none. */
cJSON *tm_mj_extras(const cJSON *o, const char *const *known);

#endif

/* SPDX-License-Identifier: MIT */
/* Session internals shared by session.c (open, scan, report) and replay.c
 * (the import replay). */
#ifndef TM_SESSION_H
#define TM_SESSION_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "scan.h"

struct tm_manifest_slot { /* one perfetto_manifest member of the input */
	bool is_ok;
	struct tm_manifest m;
	struct tm_error err;
};

struct tm_session {
	struct tm_input in;
	struct tm_session_opts opts;
	struct tm_scan **scans; /* per member; NULL until scanned / not scannable */
	_Atomic uint64_t *progress;
	_Atomic bool *is_scanned;
	struct tm_manifest_slot *manifests; /* per member; only for manifest members */
	size_t first_manifest;              /* member index of the first manifest, SIZE_MAX */
};

/* Replay trace_processor's import for manifest m (NULL = the input's own
 * manifest members) and fill r (zeroed by the caller). */
void tm_replay(struct tm_session *s, const struct tm_manifest *m, struct tm_report *r);

#endif

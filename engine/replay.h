/* SPDX-License-Identifier: MIT */
/* The import replay (replay.c): trace_processor's archive import over what
 * the scans kept, for one manifest.  Its inputs are spelled out here so the
 * replay depends on the opened input, the scans and the manifests only, not
 * on the session that holds them. */
#ifndef TM_REPLAY_H
#define TM_REPLAY_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "scan.h"

struct tm_manifest_slot { /* one perfetto_manifest member of the input */
	bool is_ok;
	struct tm_manifest m;
	char *text; /* the member's bytes as read (NUL-terminated), NULL if unread */
	size_t text_len;
	struct tm_error err;
};

struct tm_replay_src {
	const struct tm_input *in;  /* members, processing order, fatal error */
	struct tm_scan *const *scans; /* per member; NULL entries = not scanned */
	/* per member: NULL except for manifest members */
	struct tm_manifest_slot *const *manifests;
	size_t first_manifest; /* member index of the first manifest, SIZE_MAX */
	bool keep_events;      /* fill the report's per-event list */
	bool plain_replay;     /* replay every event one by one (no runs) */
};

/* Replay trace_processor's import for manifest m (NULL = the input's own
 * manifest members) and fill r (zeroed by the caller). */
void tm_replay(const struct tm_replay_src *src, const struct tm_manifest *m, struct tm_report *r);

/* The builtin clock the replay reads a non-proto format's timestamps in
 * (MONOTONIC, BOOTTIME or REALTIME); TM_CLOCK_UNSET for clockless formats
 * (the private TRACE_FILE clock, moved only by a pin), protos (their clock
 * comes from their snapshots) and formats not imported. */
uint32_t tm_format_fixed_clock(enum tm_format f);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The manifest stage's face (engine/manifest/, above util; the model's
 * public part is tracemerge.h, its files' shared part manifest_priv.h).
 * Manifest model, engine-internal part: the apply step of trace_processor's
 * perfetto_manifest reader (PerfettoManifestReader::OnPushDataToSorter after
 * the parse, then ApplyManifest), for the replay engine.
 *
 * tm_manifest_parse() already runs the checks that need only the manifest.
 * tm_manifest_apply() replays, in trace_processor's order, everything that
 * runs once the manifest has been parsed:
 *   37  table member declared but absent        (needs the archive)
 *   38-41  trace_time file/machine resolution
 *   per clocks entry, in files[] order:
 *     42/43 source machine, 39-41 sync_to resolution,
 *     44 trace_file lookup of a PIN source / a clock-less sync_to (archive)
 * and records what ApplyManifest does to the machine table and the clock
 * graph.  Use it on every manifest that is evaluated (an edited model never
 * went through tm_manifest_parse).  With ops NULL the archive checks (37,
 * 44) are skipped and trace_file ids are UINT32_MAX: this is what
 * tm_manifest_parse uses, so a parse may report 42 for a later entry where
 * trace_processor, seeing the archive, would first fail with 44.
 */
#ifndef TM_MANIFEST_INTERNAL_H
#define TM_MANIFEST_INTERNAL_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header: front ends include only tracemerge.h"
#endif

#include "tracemerge.h"

/* First raw machine id handed to manifest names (trace_manifest_state.h). */
#define TM_MANIFEST_FIRST_MACHINE_ID ((int64_t)1 << 32)

struct tm_manifest_archive_ops {
	/* trace_file.id of the first trace_file row whose name equals path, len
	 * bytes (as
	 * trace_processor's IterateRows lookup); false when there is none. */
	bool (*find_trace_file)(void *ud, const char *path, size_t len, uint32_t *tid);
	void *ud;
};

/* One EnsureMachineRow(raw) call, in call order: the engine looks raw up in
 * its raw->row map and allocates the next row when absent.  name is set
 * (borrowed from the manifest) for the name allocations of step 1, which
 * also name the row. */
struct tm_manifest_ensure {
	int64_t raw_id;
	const char *name;
};

struct tm_manifest_plan_file { /* parallel to m->files */
	int64_t machine_raw;      /* entry.machine_id, -1 when unset */
	const char *machine_name; /* entry.machine_name after the embedded-0 rule; borrowed */
	int64_t *remap_raw;       /* parallel to machines[]: raw id of each name.  For a
				   * repeated embedded id the FIRST entry is the one in
				   * machine_remap (FlatHashMap::Insert keeps it) */
	bool is_table;            /* carries __exported_table_schema */
};

/* One override edge: AddSnapshot([{source, source_ts}, {ref, ref_ts}]). */
struct tm_manifest_edge {
	size_t file;           /* index into m->files */
	int64_t source_raw, ref_raw;
	uint32_t source_clock; /* builtin id, or TM_CLOCK_TRACE_FILE (PIN) */
	uint32_t source_tf;    /* trace_file id when source_clock is TRACE_FILE */
	uint32_t ref_clock;    /* builtin id, or TM_CLOCK_TRACE_FILE (sync_to.clock omitted) */
	uint32_t ref_tf;
	int64_t source_ts, ref_ts; /* max(-offset,0), max(offset,0) */
};

struct tm_manifest_plan {
	size_t n_ensure;
	struct tm_manifest_ensure *ensure;
	size_t n_files;
	struct tm_manifest_plan_file *files;
	bool has_trace_time;   /* trace_time given: claim (tt_clock, row of tt_raw) */
	uint32_t tt_clock;
	bool tt_has_machine;   /* file/machine given: ClockId::Machine(row(tt_raw), clock);
				* else ClockId::Machine(clock) (row 0) */
	int64_t tt_raw;
	size_t n_edges;
	struct tm_manifest_edge *edges;
};

/* Fills *plan (always initialised, even on error: then it holds what was
 * done before the failing step).  Error texts are trace_processor's. */
enum tm_status tm_manifest_apply(const struct tm_manifest *m,
				 const struct tm_manifest_archive_ops *ops,
				 struct tm_manifest_plan *plan, struct tm_error *err) TM_WUR;
void tm_manifest_plan_fini(struct tm_manifest_plan *plan);

/* tm_manifest_parse of the member or file name (NULL: unnamed), which an
 * error's hint (ours) names. */
enum tm_status tm_manifest_parse_named(const char *text, size_t len, const char *name,
				       struct tm_manifest *out, struct tm_error *err) TM_WUR;
/* The same, but when only the apply step failed (the checks of ApplyManifest
 * that run entry by entry: machines, sync_to references) *apply_stage is
 * set and out keeps the model: applied with the archive (ops), the entry
 * trace_processor fails on first may be an earlier one, whose file the
 * archive lacks. */
enum tm_status tm_manifest_parse_keep(const char *text, size_t len, const char *name,
				      struct tm_manifest *out, struct tm_error *err,
				      bool *apply_stage) TM_WUR;

/* The entry is an exported table (__exported_table_schema), not a trace. */
bool tm_manifest_file_is_table(const struct tm_manifest_file *f);

/* files[] entry for a member path: the first exact match (as the reader). */
const struct tm_manifest_file *tm_manifest_entry_by_path(const struct tm_manifest *m,
							 const char *path, size_t len, size_t *idx);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The import replay's manifest apply (replay_priv.h): machines, edges and
 * trace-time claims as perfetto_manifest_reader.cc applies them.
 */
#include "replay_priv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* manifest apply (perfetto_manifest_reader.cc)                      */
/* ------------------------------------------------------------------ */

/* The member's path as a manifest names it: its trace_file name; for a
 * single input evaluated with a manifest we would write, the base name it
 * gets in that TAR. */
const char *
tm_rp_mpath(const struct tm_replay *p, const struct tm_member *mb, size_t *len)
{
	if (mb->name) {
		*len = mb->name_len;
		return mb->name;
	}
	if (p->is_virtual && mb->parent < 0 && mb->source_path) {
		const char *b = tm_path_base(mb->source_path);
		*len = strlen(b);
		return b;
	}
	return NULL;
}

/* The trace_file rows that exist when the manifest is applied: an archive
 * adds all its members when its own turn comes, before any of them is
 * parsed (tar_trace_reader.cc, zip_trace_reader.cc, TraceFileTracker::AddFile),
 * so these are the rows up to the manifest's last sibling; members of a
 * nested archive or the inflated stream of a gzip'd member come later.  (A
 * manifest we would write is a top-level member of the TAR.) */
static uint32_t
rows_at_manifest(const struct tm_replay *p, uint32_t manifest_tid)
{
	const struct tm_input *in = p->src->in;
	int parent = 0;
	bool top = manifest_tid == VIRTUAL_MANIFEST_TID;
	for (size_t i = 0; !top && i < in->n_members; i++)
		if (in->members[i].trace_file_id == manifest_tid) {
			parent = in->members[i].parent;
			break;
		}
	uint32_t last = 0;
	for (size_t i = 0; i < in->n_members; i++) {
		const struct tm_member *mb = &in->members[i];
		if (mb->trace_file_id != UINT32_MAX && (top ? mb->parent <= 0 : mb->parent == parent) &&
		    mb->trace_file_id > last)
			last = mb->trace_file_id;
	}
	return last;
}

/* find_trace_file_id (perfetto_manifest_reader.cc, ApplyManifest): the
 * first trace_file row of that name among the rows that exist by then. */
static long
tid_of_path(struct tm_replay *p, const char *path, size_t plen)
{
	size_t n = p->src->in->n_members;
	for (size_t i = 0; i < n; i++) {
		const struct tm_member *mb = &p->src->in->members[i];
		size_t len;
		const char *name = tm_rp_mpath(p, mb, &len);
		if (name && mb->trace_file_id <= p->tf_rows && len == plen &&
		    memcmp(name, path, len) == 0)
			return mb->trace_file_id;
	}
	return -1;
}

static bool
find_trace_file(void *ud, const char *path, size_t len, uint32_t *tid)
{
	long t = tid_of_path(ud, path, len);
	if (t < 0)
		return false;
	*tid = (uint32_t)t;
	return true;
}

/* The plan's override edges into the graph, in files[] order; the first
 * that fails (a duplicate clock domain) fails the import. */
static void
add_edges(struct tm_replay *p, const struct tm_manifest_plan *plan)
{
	for (size_t i = 0; i < plan->n_edges && !p->error; i++) {
		const struct tm_manifest_edge *e = &plan->edges[i];
		long sr = tm_rp_row_of_raw(p, (uint64_t)e->source_raw), rr = tm_rp_row_of_raw(p, (uint64_t)e->ref_raw);
		struct tm_clockid src = {e->source_clock, 0, 0, (uint32_t)(sr < 0 ? 0 : sr)};
		struct tm_clockid ref = {e->ref_clock, 0, 0, (uint32_t)(rr < 0 ? 0 : rr)};
		if (e->source_clock == TM_CLOCK_TRACE_FILE)
			src.tf = e->source_tf;
		if (e->ref_clock == TM_CLOCK_TRACE_FILE)
			ref.tf = e->ref_tf;
		struct tm_graph_clock gc[2] = {{src, e->source_ts, 1, false},
					       {ref, e->ref_ts, 1, false}};
		char msg[512];
		if (!tm_graph_add_snapshot(p->g, gc, 2, p->tt, msg, sizeof msg))
			tm_rp_mfail(p, "%s", msg);
	}
}

/* The manifest reader's apply step (manifest.c computes it in
 * trace_processor's order; here it lands on the machine table and the
 * graph): EnsureMachineRow calls, the trace-time claim, override edges. */
void
tm_rp_apply_manifest(struct tm_replay *p, uint32_t manifest_tid)
{
	const struct tm_manifest *m = p->m;
	struct tm_manifest_archive_ops ops = {find_trace_file, p};
	p->tf_rows = rows_at_manifest(p, manifest_tid);
	struct tm_manifest_plan plan;
	struct tm_error err;
	enum tm_status st = tm_manifest_apply(m, &ops, &plan, &err);
	for (size_t i = 0; i < plan.n_ensure; i++)
		if (tm_rp_row_of_raw(p, (uint64_t)plan.ensure[i].raw_id) < 0)
			tm_rp_new_row(p, (uint64_t)plan.ensure[i].raw_id, plan.ensure[i].name);
	if (st != TM_OK) {
		/* ApplyManifest adds each entry's edge as it goes: an edge of an
		 * entry before the one that failed fails first (add_edges) */
		add_edges(p, &plan);
		if (!p->error && err.hint[0] && !p->hint)
			p->hint = xstrdup(err.hint);
		tm_rp_mfail(p, "%s", err.msg);
		tm_manifest_plan_fini(&plan);
		return;
	}
	for (size_t i = 0; i < m->n_files && i < plan.n_files; i++) {
		const struct tm_manifest_plan_file *pf = &plan.files[i];
		struct tm_entry_state *es = &p->entries[i];
		es->has_machine_id = pf->machine_raw >= 0;
		es->machine_id = (uint64_t)pf->machine_raw;
		if (!m->files[i].has_machines || !pf->remap_raw)
			continue;
		es->remap_id = xcalloc(m->files[i].n_machines + 1, sizeof *es->remap_id);
		es->remap_raw = xcalloc(m->files[i].n_machines + 1, sizeof *es->remap_raw);
		for (size_t k = 0; k < m->files[i].n_machines; k++) {
			size_t first;
			es->remap_id[es->n_remap] = m->files[i].machines[k].id;
			es->remap_raw[es->n_remap] = (uint64_t)pf->remap_raw[k];
			if (!tm_u64map_get(&es->remap_ix, es->remap_id[es->n_remap], &first))
				tm_u64map_set(&es->remap_ix, es->remap_id[es->n_remap], es->n_remap);
			es->n_remap++;
		}
	}
	if (plan.has_trace_time) {
		long row = plan.tt_has_machine ? tm_rp_row_of_raw(p, (uint64_t)plan.tt_raw) : 0;
		tm_rp_try_set_clock(p, (struct tm_clockid){plan.tt_clock, 0, 0, (uint32_t)(row < 0 ? 0 : row)},
			      manifest_tid);
	}
	add_edges(p, &plan);
	tm_manifest_plan_fini(&plan);
}


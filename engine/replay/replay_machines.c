/* SPDX-License-Identifier: MIT */
/*
 * The import replay's machine table (replay_priv.h): rows by raw machine
 * id, the manifest's raw ids, and a context (tracker) forked per file and
 * machine (forwarding_trace_parser.cc, proto_trace_reader.cc).
 */
#include "replay_priv.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* machines                                                            */
/* ------------------------------------------------------------------ */

/* The manifest's raw_id_to_table_id (only rows the manifest made). */
long
tm_rp_row_of_raw(const struct tm_replay *p, uint64_t raw)
{
	size_t row;

	return tm_u64map_get(&p->rr, raw, &row) ? (long)row : -1;
}

static uint32_t
insert_row(struct tm_replay *p, uint64_t raw, const char *name)
{
	XGROW(p->rows, p->cap_rows, p->n_rows + 1);
	p->rows[p->n_rows].raw = raw;
	p->rows[p->n_rows].name = xstrdup0(name);
	return (uint32_t)p->n_rows++;
}

/* A row made by the manifest, recorded in its raw_id_to_table_id. */
uint32_t
tm_rp_new_row(struct tm_replay *p, uint64_t raw, const char *name)
{
	uint32_t row = insert_row(p, raw, name);
	size_t first;

	if (!tm_u64map_get(&p->rr, raw, &first)) /* the first row of a raw id stays */
		tm_u64map_set(&p->rr, raw, row);
	return row;
}

long
tm_rp_mc_find(const struct tm_replay *p, uint64_t raw)
{
	size_t row;

	return tm_u64map_get(&p->mc, raw, &row) ? (long)row : -1;
}

void
tm_rp_mc_add(struct tm_replay *p, uint64_t raw, uint32_t row)
{
	tm_u64map_set(&p->mc, raw, row);
}

/* A file's rows are searched linearly up to this many, then in
 * p->file_rows. */
#define FEW_ROWS 8

static void
note_file_row(struct tm_replay *p, size_t file, uint32_t row)
{
	struct tm_file_acc *a = &p->acc[file];
	const uint32_t *r = tm_acc_rows(a);
	uint64_t key = (uint64_t)file << 32 | row;
	size_t v;
	if (a->n_rows > FEW_ROWS) {
		if (tm_u64map_get(&p->file_rows, key, &v))
			return;
	} else {
		for (size_t i = 0; i < a->n_rows; i++) {
			TM_PROBE();
			if (r[i] == row)
				return;
		}
	}
	if (!a->n_rows) {
		a->row1 = row;
		a->n_rows = 1;
		return;
	}
	/* rows' capacity tm_small_cap(n_rows, 1): the first row in row1, then
	 * 2, doubling (no field for it: one per member) */
	uint32_t n = a->n_rows, cap = tm_small_cap(n, 1), nc = tm_small_cap(n + 1, 1);
	if (nc != cap) {
		a->rows = xrealloc(a->rows, (size_t)nc * sizeof *a->rows);
		if (!cap)
			a->rows[0] = a->row1;
	}
	a->rows[a->n_rows++] = row;
	if (a->n_rows == FEW_ROWS + 1) /* from now on in the map: all of them */
		for (size_t i = 0; i < a->n_rows; i++)
			tm_u64map_set(&p->file_rows, (uint64_t)file << 32 | a->rows[i], 1);
	else if (a->n_rows > FEW_ROWS + 1)
		tm_u64map_set(&p->file_rows, key, 1);
}

/* ForkContextForTrace(file, raw) (trace_processor_context.cc). */
struct tm_tracker *
tm_rp_fork_ctx(struct tm_replay *p, size_t file, uint64_t raw)
{
	if (p->n_ctxs % TRACKER_BLOCK == 0) {
		XGROW(p->trk_blocks, p->cap_trk_blocks, p->n_trk_blocks + 1);
		p->trk_blocks[p->n_trk_blocks++] = xcalloc(TRACKER_BLOCK, sizeof **p->trk_blocks);
	}
	struct tm_tracker *c = &p->trk_blocks[p->n_trk_blocks - 1][p->n_ctxs % TRACKER_BLOCK];
	c->file = (uint32_t)file;
	long mrow = tm_rp_mc_find(p, raw);
	if (mrow >= 0) {
		c->row = (uint32_t)mrow;
		c->is_primary = false;
	} else {
		/* MachineTracker: reuse the manifest's row, else insert one. */
		long r = tm_rp_row_of_raw(p, raw);
		c->row = r >= 0 ? (uint32_t)r : insert_row(p, raw, NULL);
		c->is_primary = true;
		tm_rp_mc_add(p, raw, c->row);
	}
	p->n_ctxs++;
	p->any_forked = true;
	note_file_row(p, file, c->row);
	return c;
}


/* SPDX-License-Identifier: MIT */
/*
 * Manifest apply plan (ApplyManifest in perfetto_manifest_reader.cc); see
 * manifest_internal.h for what it records and in which order it checks.
 */
#include <stdlib.h>
#include <string.h>

#include "manifest_priv.h"
#include "strmap.h"

/* ------------------------------------------------------------------ */
/* Apply (ApplyManifest), also the replay engine's entry               */
/* ------------------------------------------------------------------ */

/* The lookups of one apply, by hash so that a manifest with tens of
 * thousands of names, files or machines applies in linear time. */
struct names {
	struct tm_strmap raw;   /* machine name -> raw id (step 1's allocation) */
	size_t n;               /* names allocated */
	struct tm_strmap *decl; /* per entry, built on first use: its machine names */
};

static int64_t
name_raw(const struct names *nm, const char *name)
{
	const struct tm_strmap_slot *s = tm_strmap_get(&nm->raw, name, strlen(name));

	return s ? (int64_t)s->val : -1;
}

static void
names_fini(struct names *nm, size_t n_files)
{
	tm_strmap_fini(&nm->raw);
	for (size_t i = 0; nm->decl && i < n_files; i++)
		tm_strmap_fini(&nm->decl[i]);
	free(nm->decl);
}

static void
ensure(struct tm_manifest_plan *p, size_t *cap, int64_t raw, const char *name)
{
	XGROW(p->ensure, *cap, p->n_ensure + 1);
	p->ensure[p->n_ensure].raw_id = raw;
	p->ensure[p->n_ensure].name = name;
	p->n_ensure++;
}

/* The first entry whose path is path, all its bytes: a path holding a NUL
 * ("a\u0000b") is not "a" (TraceManifestState::FindEntry,
 * types/trace_manifest_state.h: std::string ==, the first in files[]). */
static const struct tm_manifest_file *
find_entry(const struct tm_manifest *m, const char *path, size_t *idx)
{
	return tm_manifest_entry_by_path(m, path, strlen(path), idx);
}

static bool
declares(const struct tm_manifest_plan *p, const struct tm_manifest *m, struct names *nm,
	 size_t idx, const char *name)
{
	const struct tm_manifest_file *f = &m->files[idx];

	if (p->files[idx].machine_name && strcmp(p->files[idx].machine_name, name) == 0)
		return true;
	if (!f->n_machines)
		return false;
	if (!nm->decl)
		nm->decl = xcalloc(m->n_files, sizeof *nm->decl);
	if (!nm->decl[idx].cap)
		for (size_t i = 0; i < f->n_machines; i++)
			tm_strmap_put(&nm->decl[idx], f->machines[i].name,
				      strlen(f->machines[i].name), i, NULL);
	return tm_strmap_get(&nm->decl[idx], name, strlen(name)) != NULL;
}

static enum tm_status
resolve_ref(const struct tm_manifest *m, const struct tm_manifest_plan *p, struct names *nm, const char *flabel, const char *mlabel, const char *file,
	    const char *machine, int64_t fallback, int64_t *out, struct tm_error *err)
{
	size_t idx;

	if (machine && !file)
		return tm_mf_err(err,
				 PFX "%s '%s' needs %s too: a machine name alone is ambiguous because "
				"embedded machine ids are scoped to their trace.",
				 mlabel, machine, flabel);
	if (!file) {
		*out = fallback;
		return TM_OK;
	}
	if (!find_entry(m, file, &idx))
		return tm_mf_err(err,
				 PFX "%s names unknown file '%s'. It must match the `path` of an entry "
				"in the `files` array.",
				 flabel, file);
	if (!machine) {
		if (m->files[idx].n_machines)
			return tm_mf_err(err,
					 PFX "%s '%s' is a multi-machine trace; also name the machine "
					"with %s.",
					 flabel, file, mlabel);
		*out = p->files[idx].machine_raw >= 0 ? p->files[idx].machine_raw : 0;
		return TM_OK;
	}
	if (!declares(p, m, nm, idx, machine))
		return tm_mf_err(err, PFX "%s '%s' is not a machine declared by file '%s'.", mlabel,
				 machine, file);
	*out = name_raw(nm, machine);
	return TM_OK;
}

static enum tm_status
find_tf(const struct tm_manifest_archive_ops *ops, const char *path, size_t len, uint32_t *tid,
	struct tm_error *err)
{
	*tid = UINT32_MAX;
	if (!ops)
		return TM_OK;
	if (!ops->find_trace_file(ops->ud, path, len, tid))
		return tm_mf_err(err,
				 PFX "clocks: could not resolve file '%s'. It must match the `path` of "
				"an entry in the `files` array.",
				 path);
	return TM_OK;
}

enum tm_status
tm_manifest_apply(const struct tm_manifest *m, const struct tm_manifest_archive_ops *ops,
		  struct tm_manifest_plan *p, struct tm_error *err)
{
	struct names nm = {0};
	size_t ecap = 0, gcap = 0;
	enum tm_status s = TM_OK;
	uint32_t tid;

	memset(p, 0, sizeof *p);
	p->n_files = m->n_files;
	p->files = m->n_files ? xcalloc(m->n_files, sizeof *p->files) : NULL;
	for (size_t i = 0; i < m->n_files; i++) {
		p->files[i].machine_raw = -1;
		p->files[i].is_table = tm_manifest_file_is_table(&m->files[i]);
	}
	/* 37: declared tables must be members (checked before ApplyManifest). */
	for (size_t i = 0; ops && i < m->n_files; i++)
		if (p->files[i].is_table && !ops->find_trace_file(ops->ud, m->files[i].path,
								      tm_mf_path_len(&m->files[i]), &tid))
			return tm_mf_err(err,
					 PFX "table member '%s' is declared but not present in the "
					"archive",
					 m->files[i].path);

	/* Step 1: one raw id per distinct name, in files[] order. */
	for (size_t i = 0; i < m->n_files; i++) {
		const struct tm_manifest_file *f = &m->files[i];
		const char *names[1] = {f->machine_name};

		if (f->has_machines)
			p->files[i].remap_raw = xcalloc(f->n_machines ? f->n_machines : 1,
							sizeof(int64_t));
		for (size_t j = 0; j < 1 + f->n_machines; j++) {
			const char *n = j == 0 ? names[0] : f->machines[j - 1].name;
			int64_t raw;

			if (!n)
				continue;
			raw = name_raw(&nm, n);
			if (raw < 0) {
				raw = TM_MANIFEST_FIRST_MACHINE_ID + (int64_t)nm.n++;
				tm_strmap_put(&nm.raw, n, strlen(n), (size_t)raw, NULL);
				ensure(p, &ecap, raw, n);
			}
			if (j == 0) {
				p->files[i].machine_raw = raw;
				p->files[i].machine_name = n;
				continue;
			}
			p->files[i].remap_raw[j - 1] = raw;
			if (f->machines[j - 1].id == 0) {
				p->files[i].machine_raw = raw;
				p->files[i].machine_name = n;
			}
		}
	}

	/* Step 2: trace_time. */
	if (m->has_trace_time && m->tt_clock) {
		p->has_trace_time = true;
		p->tt_clock = m->tt_clock;
		if (m->tt_file || m->tt_machine) {
			s = resolve_ref(m, p, &nm, "trace_time: file", "trace_time: machine",
					m->tt_file, m->tt_machine, 0, &p->tt_raw, err);
			if (s != TM_OK)
				goto out;
			p->tt_has_machine = true;
			ensure(p, &ecap, p->tt_raw, NULL);
		}
	}

	/* Step 3: override edges, in files[] order. */
	for (size_t i = 0; i < m->n_files; i++) {
		const struct tm_manifest_file *f = &m->files[i];
		const struct tm_manifest_clocks *c = &f->clocks;
		struct tm_manifest_edge ed = {0};

		if (!f->has_clocks || !c->sync_file || p->files[i].is_table)
			continue;
		ed.file = i;
		if (!c->machine) {
			if (f->n_machines) {
				s = tm_mf_err(err,
					      PFX "clocks: file '%s' is a multi-machine trace; name which "
						  "machine the clock is on with clocks: machine.",
					      f->path);
				goto out;
			}
			ed.source_raw = p->files[i].machine_raw >= 0 ? p->files[i].machine_raw : 0;
		} else if (!declares(p, m, &nm, i, c->machine)) {
			s = tm_mf_err(err, PFX "clocks: machine '%s' is not a machine declared by file '%s'.",
				      c->machine, f->path);
			goto out;
		} else {
			ed.source_raw = name_raw(&nm, c->machine);
		}
		s = resolve_ref(m, p, &nm, "clocks: sync_to.file", "clocks: sync_to.machine",
				c->sync_file, c->sync_machine, ed.source_raw, &ed.ref_raw, err);
		if (s != TM_OK)
			goto out;
		ensure(p, &ecap, ed.source_raw, NULL);
		ensure(p, &ecap, ed.ref_raw, NULL);
		if (c->clock) {
			ed.source_clock = c->clock;
		} else {
			ed.source_clock = TM_CLOCK_TRACE_FILE;
			if ((s = find_tf(ops, f->path, tm_mf_path_len(f), &ed.source_tf, err)) != TM_OK)
				goto out;
		}
		if (c->sync_clock) {
			ed.ref_clock = c->sync_clock;
		} else {
			ed.ref_clock = TM_CLOCK_TRACE_FILE;
			if ((s = find_tf(ops, c->sync_file, strlen(c->sync_file), &ed.ref_tf, err)) != TM_OK)
				goto out;
		}
		ed.source_ts = c->offset_ns < 0 ? wrap_sub(0, c->offset_ns) : 0;
		ed.ref_ts = c->offset_ns > 0 ? c->offset_ns : 0;
		XGROW(p->edges, gcap, p->n_edges + 1);
		p->edges[p->n_edges++] = ed;
		/* An edge from a clock to itself (a file synced to its own
		 * private clock, or the same clock on the same machine): the
		 * graph refuses it ("duplicate clock domain"), and ApplyManifest
		 * adds each entry's edge before it resolves the next entry's, so
		 * that is the import's error, whatever later entries hold (the
		 * replay adds the edge; a parse without the archive stops here). */
		if (ed.source_raw == ed.ref_raw && ed.source_clock == ed.ref_clock &&
		    (ed.source_clock != TM_CLOCK_TRACE_FILE ||
		     (tm_mf_path_len(f) == strlen(c->sync_file) &&
		      memcmp(f->path, c->sync_file, tm_mf_path_len(f)) == 0)))
			break;
	}
out:
	names_fini(&nm, m->n_files);
	return s;
}

void
tm_manifest_plan_fini(struct tm_manifest_plan *p)
{
	for (size_t i = 0; i < p->n_files; i++)
		free(p->files[i].remap_raw);
	free(p->files);
	free(p->ensure);
	free(p->edges);
	memset(p, 0, sizeof *p);
}

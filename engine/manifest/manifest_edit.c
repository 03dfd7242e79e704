/* SPDX-License-Identifier: MIT */
/*
 * Manifest edit helpers (the workbench and `manifest` command change a model
 * through these): set or clear a file's machine and clocks, trace_time and
 * attributes, keeping the model one that trace_processor would accept.
 */
#include <stdlib.h>
#include <string.h>

#include "manifest_priv.h"
#include "strmap.h"

/* ------------------------------------------------------------------ */
/* Editing helpers                                                     */
/* ------------------------------------------------------------------ */

/* Fewer files than this are searched linearly (the common manifest). */
#define MF_INDEX_MIN 16

/* Built on the first look-up, by whichever thread looks first: a const
 * manifest may be read by several at once (the winner's index is kept). */
static const struct mf_index *
mf_index(const struct tm_manifest *m)
{
	struct mf_index *ix = __atomic_load_n(&m->files_ix, __ATOMIC_ACQUIRE);
	if (ix)
		return ix;
	ix = xcalloc(1, sizeof *ix);
	ix->files = m->files;
	ix->n = m->n_files;
	for (size_t i = 0; i < m->n_files; i++)
		if (m->files[i].path)
			tm_strmap_put(&ix->map, m->files[i].path, tm_mf_path_len(&m->files[i]), i,
				      NULL);
	void *expected = NULL;
	void **slot = (void **)(uintptr_t)&m->files_ix;
	if (__atomic_compare_exchange_n(slot, &expected, ix, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return ix;
	tm_mf_index_free(ix);
	return expected;
}

/* Paths are compared with their lengths, as trace_processor's
 * std::string == does (FindEntry, the trace_file name lookups): a path
 * that ends in an escaped NUL names a GNU tar long name, which keeps its
 * NUL (tar_trace_reader.cc, TYPE_FLAG_GNU_LONG_NAME). */
const struct tm_manifest_file *
tm_manifest_file_find_n(const struct tm_manifest *m, const char *path, size_t len)
{
	if (!m || !path)
		return NULL;
	if (m->n_files >= MF_INDEX_MIN) {
		const struct mf_index *ix = mf_index(m);
		if (ix->files == m->files && ix->n == m->n_files) {
			const struct tm_strmap_slot *sl = tm_strmap_get(&ix->map, path, len);
			return sl ? &m->files[sl->val] : NULL;
		}
	}
	for (size_t i = 0; i < m->n_files; i++) {
		TM_PROBE();
		const struct tm_manifest_file *f = &m->files[i];
		if (f->path && tm_mf_path_len(f) == len && memcmp(f->path, path, len) == 0)
			return f;
	}
	return NULL;
}

const struct tm_manifest_file *
tm_manifest_file_find(const struct tm_manifest *m, const char *path)
{
	return path ? tm_manifest_file_find_n(m, path, strlen(path)) : NULL;
}

struct tm_manifest_file *
tm_manifest_file_get(struct tm_manifest *m, const char *path, bool create)
{
	struct tm_manifest_file *f;
	const struct tm_manifest_file *found = tm_manifest_file_find(m, path);

	if (found)
		return &m->files[found - m->files];
	if (!create)
		return NULL;
	struct mf_index *ix = m->files_ix;
	if (ix && (ix->files != m->files || ix->n != m->n_files)) {
		tm_manifest_files_changed(m);
		ix = NULL;
	}
	m->files = xrealloc(m->files, (m->n_files + 1) * sizeof *m->files);
	f = &m->files[m->n_files++];
	memset(f, 0, sizeof *f);
	f->path = xstrdup(path);
	m->has_files = true;
	if (ix) { /* the index follows (a manifest built one file at a time) */
		tm_strmap_put(&ix->map, f->path, strlen(f->path), m->n_files - 1, NULL);
		ix->files = m->files;
		ix->n = m->n_files;
	}
	return f;
}

void
tm_manifest_set_machine(struct tm_manifest *m, const char *path, const char *name)
{
	struct tm_manifest_file *f = tm_manifest_file_get(m, path, name && *name);

	if (!f)
		return;
	free(f->machine_name);
	f->machine_name = NULL;
	if (!name || !*name) {
		cJSON_Delete(f->machine_extra);
		f->machine_extra = NULL;
		return;
	}
	f->machine_name = xstrdup(name);
	tm_mf_machines_clear(f); /* machine and machines are mutually exclusive */
}

void
tm_manifest_set_clocks(struct tm_manifest *m, const char *path, uint32_t clock,
		       const char *ref_file, uint32_t ref_clock, const char *ref_machine,
		       int64_t offset_ns)
{
	/* trace_processor resolves sync_to.file against files[], so the
	 * reference gets an entry of its own (the dialog lists every file once
	 * any has config).  First, as appending moves the array. */
	if (ref_file && *ref_file)
		(void)tm_manifest_file_get(m, ref_file, true);
	struct tm_manifest_file *f = tm_manifest_file_get(m, path, true);
	struct tm_manifest_clocks *c = &f->clocks;

	if (!f->has_clocks)
		memset(c, 0, sizeof *c);
	f->has_clocks = true;
	c->clock = clock;
	free(c->sync_file);
	c->sync_file = xstrdup(ref_file ? ref_file : "");
	free(c->sync_machine);
	c->sync_machine = xstrdup0(ref_machine && *ref_machine ? ref_machine : NULL);
	c->sync_clock = ref_clock;
	c->offset_ns = offset_ns;
}

void
tm_manifest_clear_clocks(struct tm_manifest *m, const char *path)
{
	struct tm_manifest_file *f = tm_manifest_file_get(m, path, false);

	if (!f || !f->has_clocks)
		return;
	tm_mf_clocks_fini(&f->clocks);
	f->has_clocks = false;
}

void
tm_manifest_set_trace_time(struct tm_manifest *m, uint32_t clock, const char *file,
			   const char *machine)
{
	free(m->tt_file);
	free(m->tt_machine);
	m->tt_file = m->tt_machine = NULL;
	if (clock == TM_CLOCK_UNSET) {
		cJSON_Delete(m->tt_extra);
		m->tt_extra = NULL;
		m->has_trace_time = false;
		m->tt_clock = 0;
		return;
	}
	m->has_trace_time = true;
	m->tt_clock = clock;
	if (file && *file) /* trace_time.file must name a files[] entry too */
		(void)tm_manifest_file_get(m, file, true);
	m->tt_file = xstrdup0(file && *file ? file : NULL);
	m->tt_machine = xstrdup0(machine && *machine ? machine : NULL);
}

static struct tm_manifest_attr *
attr_slot(struct tm_manifest *m, const char *key)
{
	struct tm_manifest_attr *a;

	for (size_t i = 0; i < m->n_attrs; i++)
		if (strcmp(m->attrs[i].key, key) == 0)
			return &m->attrs[i];
	m->attrs = xrealloc(m->attrs, (m->n_attrs + 1) * sizeof *m->attrs);
	a = &m->attrs[m->n_attrs++];
	memset(a, 0, sizeof *a);
	a->key = xstrdup(key);
	m->has_attributes = true;
	return a;
}

void
tm_manifest_set_attr_str(struct tm_manifest *m, const char *key, const char *val)
{
	struct tm_manifest_attr *a = attr_slot(m, key);

	free(a->sval);
	a->is_int = false;
	a->ival = 0;
	a->sval = xstrdup(val ? val : "");
}

void
tm_manifest_set_attr_int(struct tm_manifest *m, const char *key, int64_t val)
{
	struct tm_manifest_attr *a = attr_slot(m, key);

	free(a->sval);
	a->sval = NULL;
	a->is_int = true;
	a->ival = val;
}

void
tm_manifest_remove_attr(struct tm_manifest *m, const char *key)
{
	for (size_t i = 0; i < m->n_attrs; i++) {
		if (strcmp(m->attrs[i].key, key) != 0)
			continue;
		tm_mf_attr_fini(&m->attrs[i]);
		memmove(&m->attrs[i], &m->attrs[i + 1], (m->n_attrs - i - 1) * sizeof *m->attrs);
		m->n_attrs--;
		break;
	}
	if (m->n_attrs == 0) {
		free(m->attrs);
		m->attrs = NULL;
		m->has_attributes = false;
	}
}

void
tm_manifest_rename_file(struct tm_manifest *m, const char *from, const char *to)
{
	tm_manifest_files_changed(m);
	for (size_t i = 0; i < m->n_files; i++) {
		struct tm_manifest_file *f = &m->files[i];
		char **refs[] = {&f->path, f->has_clocks ? &f->clocks.sync_file : NULL};
		for (size_t k = 0; k < sizeof refs / sizeof refs[0]; k++)
			if (refs[k] && tm_mf_str_eq(*refs[k], from)) {
				free(*refs[k]);
				*refs[k] = to ? xstrdup(to) : NULL;
			}
	}
	if (tm_mf_str_eq(m->tt_file, from)) {
		free(m->tt_file);
		m->tt_file = to ? xstrdup(to) : NULL;
	}
	if (to)
		return;
	/* Removed: its entry goes, and so do offsets related to it. */
	for (size_t i = 0; i < m->n_files;) {
		struct tm_manifest_file *f = &m->files[i];
		if (f->has_clocks && !f->clocks.sync_file)
			tm_manifest_clear_clocks(m, f->path);
		if (!f->path) {
			tm_mf_file_fini(f);
			memmove(f, f + 1, (m->n_files - i - 1) * sizeof *f);
			m->n_files--;
			continue;
		}
		i++;
	}
}

const struct tm_manifest_file *
tm_manifest_entry_by_path(const struct tm_manifest *m, const char *path, size_t len, size_t *idx)
{
	const struct tm_manifest_file *f = tm_manifest_file_find_n(m, path, len);

	if (f && idx)
		*idx = (size_t)(f - m->files);
	return f;
}

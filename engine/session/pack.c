/* SPDX-License-Identifier: MIT */
/*
 * Packing rules: what `trace_processor util merge` refuses before it writes
 * (src/trace_processor/shell/util_subcommand.cc, RunMerge and
 * CheckManifestPaths; src/trace_processor/util/tar_writer.cc,
 * ValidateFilename), checked on the names tm_merge_write would use, and the
 * names tm_merge_write itself gives members.  Texts are util merge's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "strmap.h"

/* The TAR name member i is written under by tm_merge_write, or NULL when it
 * is not written: loose files by base name; an archive's non-hidden
 * top-level members by their names (a manifest member is replaced by the
 * manifest written, if any); a single trace input by its base name. */
const char *
tm_pack_name(const struct tm_session *s, size_t i, bool has_manifest)
{
	const struct tm_input *in = &s->in;
	if (i >= in->n_members)
		return NULL;
	const struct tm_member *mb = &in->members[i];
	enum tm_format top = in->members[0].format;
	if (in->is_loose || top == TM_FMT_TAR || top == TM_FMT_ZIP) {
		if (i == 0 || mb->parent != 0 || mb->is_hidden)
			return NULL;
		if (has_manifest && mb->format == TM_FMT_MANIFEST)
			return NULL;
		return mb->name;
	}
	return i == 0 ? tm_path_base(in->paths[0]) : NULL;
}

static void
add(struct tm_pack_check *c, enum tm_pack_rule rule, bool ours, size_t member, size_t entry,
    const char *fmt, ...) TM_PRINTF(6, 7);

static void
add(struct tm_pack_check *c, enum tm_pack_rule rule, bool ours, size_t member, size_t entry,
    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *msg = xmalloc(n > 0 ? (size_t)n + 1 : 1);
	va_start(ap, fmt);
	vsnprintf(msg, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
	va_end(ap);
	if (!(c->n & (c->n - 1))) /* room for twice as many at each power of two */
		c->issues = xrealloc(c->issues, (c->n ? 2 * c->n : 1) * sizeof *c->issues);
	c->issues[c->n++] = (struct tm_pack_issue){rule, ours, member, entry, msg};
}

/* The input names util merge would key on: loose files' and a single
 * input's base names, an archive's top-level member names.  Hidden names
 * are inputs too (util merge writes them). */
static const char *
input_name(const struct tm_session *s, size_t i)
{
	const struct tm_input *in = &s->in;
	const struct tm_member *mb = &in->members[i];
	if (in->n_members == 1)
		return i == 0 && mb->source_path ? tm_path_base(mb->source_path) : NULL;
	return i > 0 && mb->parent == 0 ? mb->name : NULL;
}

/* input_name as a tm_ixmap reads it (ctx: the session). */
static const char *
input_name_of(const void *ctx, size_t i, size_t *len)
{
	const char *name = input_name(ctx, i);
	*len = name ? strlen(name) : 0;
	return name;
}

void
tm_pack_check(const struct tm_session *s, const struct tm_manifest *m, struct tm_pack_check *out)
{
	memset(out, 0, sizeof *out);
	const struct tm_input *in = &s->in;
	/* the input names, each to its first member: one look-up per name and
	 * per manifest path (compared as C strings, as util merge's are) */
	struct tm_ixmap names = {.name_of = input_name_of, .ctx = s};
	/* util merge packs files: its name rules apply to loose files and to a
	 * single trace input, not to an archive's members */
	bool files = in->is_loose || in->n_members == 1;
	/* (nothing to look up without a manifest in an archive's members) */
	for (size_t i = 0; (files || m) && i < in->n_members; i++) {
		const char *name = input_name(s, i);
		if (!name)
			continue;
		bool added = tm_ixmap_put(&names, name, strlen(name), i, NULL);
		if (!files)
			continue;
		if (!added)
			add(out, TM_PACK_DUP_NAME, false, i, SIZE_MAX,
			    "merge: two input files share the name '%s'; archive members must be "
			    "unique. Rename one of the files.",
			    name);
		else if (!*name)
			add(out, TM_PACK_NAME_EMPTY, false, i, SIZE_MAX, "Filename cannot be empty");
		else if (strlen(name) > 99)
			add(out, TM_PACK_NAME_TOO_LONG, false, i, SIZE_MAX,
			    "Filename too long for TAR format (max 99 chars): %s", name);
	}
	for (size_t i = 0; m && i < m->n_files; i++) {
		const char *path = m->files[i].path;
		size_t k;
		if (path && !tm_ixmap_get(&names, path, strlen(path), &k))
			add(out, TM_PACK_MANIFEST_PATH, false, SIZE_MAX, i,
			    "merge: the manifest names file '%s' but no input file has that name. "
			    "Manifest paths must match the input files' base names.",
			    path);
	}
	tm_ixmap_fini(&names);
	for (size_t i = 1; i < in->n_members; i++) {
		const struct tm_member *mb = &in->members[i];
		if (mb->parent == 0 && mb->is_hidden && mb->name)
			add(out, TM_PACK_HIDDEN, true, i, SIZE_MAX,
			    "'%s' has a hidden name: trace_processor skips it when it opens the "
			    "archive, and tracemerge leaves it out of the merged TAR",
			    mb->name);
	}
}

void
tm_pack_check_fini(struct tm_pack_check *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->issues[i].msg);
	free(c->issues);
	memset(c, 0, sizeof *c);
}

const struct tm_pack_issue *
tm_pack_refusal(const struct tm_pack_check *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (!c->issues[i].is_ours)
			return &c->issues[i];
	return NULL;
}

const struct tm_pack_issue *
tm_pack_issue_of(const struct tm_pack_check *c, size_t member)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->issues[i].member == member)
			return &c->issues[i];
	return NULL;
}

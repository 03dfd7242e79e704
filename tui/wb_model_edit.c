/* SPDX-License-Identifier: MIT */
/*
 * The workbench's model, its edits: offsets, references and own clocks,
 * nudges, machines (assign, add, rename, merge, name embedded ids), the
 * trace-time claim and attributes.  Each builds the next manifest from a
 * copy of the current one and ends in model_commit (wb_model_undo.c).
 * No curses here.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "wb.h"
#include "wb_model.h"

/* ---- edits ---- */

static const struct tm_report_file *
path_file(const struct wb_model *m, const char *path)
{
	size_t row = model_row_of(m, path);

	return row == SIZE_MAX ? NULL : model_row_file(m, row);
}

/* Offsets, references and clocks go through the engine's one rule
 * (tm_offset_apply): the reference and clocks an existing entry names are
 * kept; otherwise a file with clocks of its own RELATEs its trace clock and
 * only a clockless file is PINned, so the edit is valid by construction.
 * The engine also says when the edit changes no predicted number (or
 * leaves an entry that does nothing), and offers a machine of its own when
 * the relation joins two files on one machine.  asked: the edit in words
 * ("offset +5 ms", "clock MONOTONIC"). */
static void
offset_edit(struct wb_model *m, const char *path, const struct tm_offset_spec *spec,
	    const char *what, const char *asked)
{
	struct tm_offset_result r;
	struct tm_error err;
	char msg[512];

	if (!m->s || !path)
		return;
	memset(&r, 0, sizeof r);
	tm_error_clear(&err);
	if (tm_offset_apply(m->s, &m->man, path, spec, &r, &err) != TM_OK || !r.has_m) {
		model_set_msg(m, ROLE_WARNING, "%s: %s", what,
			      err.msg[0] ? err.msg : "An offset needs a reference file");
		tm_offset_result_fini(&r);
		return;
	}
	size_t undo_n = m->undo.n;
	char effect[400];
	char *ref_copy = strdup(r.ref ? r.ref : ""), *path_copy = strdup(path);
	/* (t for the offer and the inert note; the manifest taken is r.m) */
	struct tm_offset_take t = tm_offset_take(&r, false);
	struct tm_manifest next = r.m;
	int64_t off = r.from_here ? r.moved_ns : r.offset_ns;

	r.has_m = false; /* moved into next; model_commit owns it */
	if (r.from_here) {
		/* the entry's offset the move needs, said beside it */
		struct tm_buf d, e;
		tm_buf_init(&d);
		tm_buf_init(&e);
		tm_format_duration_ns(r.moved_ns, &d);
		tm_format_duration_ns(r.offset_ns, &e);
		snprintf(msg, sizeof msg, "%s: %s %s%s%s; its clocks entry: "
					  "%s vs %s%s%s",
			 what, path, r.moved_ns ? "moved " : "stays where it was", r.moved_ns ? d.data : "",
			 r.moved_ns < 0 ? " earlier" : r.moved_ns ? " later" : "",
			 e.data ? e.data : "", ref_copy, r.ref_clock ? ":" : "",
			 r.ref_clock ? tm_clock_name(r.ref_clock) : "");
		tm_buf_fini(&d);
		tm_buf_fini(&e);
	} else {
		snprintf(msg, sizeof msg, "%s: %s %s vs %s", what, path, asked, ref_copy);
	}
	model_commit(m, &next, msg);
	/* The effect comes from the new report: an offset on the file that owns
	 * the timeline moves the reference instead. */
	if (m->undo.n != undo_n) {
		model_offset_effect(m, path_copy, off, ref_copy, effect, sizeof effect);
		/* the offer stands beside an inert note too: on a shared machine
		 * the edit often does nothing until the file has its own */
		char fix[600] = "";
		if (t.offer)
			snprintf(fix, sizeof fix,
				 ". Fix (ours, checked): H puts %s on a machine of its own (\"%s\"): %s",
				 path_copy, r.own_machine, r.own_verdict ? r.own_verdict : "");
		if (t.inert)
			model_set_msg(m, ROLE_WARNING, "%s: changes no predicted number (ours): %s%s",
				      msg, t.inert, fix);
		else if (r.idle)
			model_set_msg(m, ROLE_WARNING, "%s: %s %s leaves a clocks entry that does "
						       "nothing (ours): %s%s",
				      what, path_copy, asked, r.idle, fix);
		else if (off != 0 && model_owns_timeline(m, path_copy))
			model_set_msg(m, ROLE_WARNING, "%s: %s", what, effect);
		else if (t.offer)
			model_set_msg(m, ROLE_WARNING, "%s (%s)%s", msg, effect, fix);
		else if (r.from_here) /* the move says its direction */
			model_set_msg(m, ROLE_INFO, "%s", msg);
		else
			model_set_msg(m, ROLE_INFO, "%s (%s)", msg, effect);
	}
	tm_offset_result_fini(&r);
	free(ref_copy);
	free(path_copy);
}

/* An offset typed (or nudged to) on a file: on one placed automatically it
 * is a move from where the file is shown now (tm_offset_spec.from_here). */
void
model_set_offset(struct wb_model *m, const char *path, int64_t off, const char *what)
{
	struct tm_offset_spec spec;
	struct tm_buf d;
	char asked[128];

	memset(&spec, 0, sizeof spec);
	spec.has_offset = true;
	spec.offset_ns = off;
	spec.from_here = true;
	tm_buf_init(&d);
	tm_format_duration_ns(off, &d);
	snprintf(asked, sizeof asked, "offset %s", d.data ? d.data : "");
	tm_buf_fini(&d);
	offset_edit(m, path, &spec, what, asked);
}

void
model_nudge(struct wb_model *m, const char *path, int64_t delta)
{
	const struct tm_manifest_file *f = model_manifest_file(m, path);
	int64_t off = f && f->has_clocks ? f->clocks.offset_ns : 0, r;

	if (!path)
		return;
	if (__builtin_add_overflow(off, delta, &r)) {
		model_set_msg(m, ROLE_ERROR, "offset out of range");
		return;
	}
	model_set_offset(m, path, r, "Nudged");
}

static bool
str_eq(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static void
replace_str(char **p, const char *from, const char *to)
{
	if (*p && strcmp(*p, from) == 0) {
		free(*p);
		*p = to ? strdup(to) : NULL;
	}
}

void
model_rename_machine(struct wb_model *m, const char *from, const char *to, const char *what)
{
	struct tm_manifest next;
	char msg[512];
	bool found = false;

	tm_manifest_copy(&next, &m->man);
	for (size_t i = 0; i < next.n_files; i++) {
		struct tm_manifest_file *f = &next.files[i];
		if (str_eq(f->machine_name, from)) {
			found = true;
			tm_manifest_set_machine(&next, f->path, to);
			f = &next.files[i];
		}
		for (size_t k = 0; k < f->n_machines; k++)
			if (str_eq(f->machines[k].name, from)) {
				found = true;
				replace_str(&f->machines[k].name, from, to ? to : "");
			}
		if (f->has_clocks) {
			replace_str(&f->clocks.machine, from, to);
			replace_str(&f->clocks.sync_machine, from, to);
		}
	}
	replace_str(&next.tt_machine, from, to);
	for (size_t i = 0; i < m->n_extra_machines; i++) {
		if (str_eq(m->extra_machines[i], from)) {
			found = true;
			free(m->extra_machines[i]);
			if (to)
				m->extra_machines[i] = strdup(to);
			else
				m->extra_machines[i] = m->extra_machines[--m->n_extra_machines];
			break;
		}
	}
	if (!found) {
		tm_manifest_fini(&next);
		model_set_msg(m, ROLE_WARNING, "No machine named %s", from);
		return;
	}
	if (to)
		snprintf(msg, sizeof msg, "%s: %s -> %s", what, from, to);
	else
		snprintf(msg, sizeof msg, "%s: %s (its files are now Default)", what, from);
	model_commit(m, &next, msg);
}

static void
add_name(char ***v, size_t *n, const char *nm)
{
	if (!nm || !*nm)
		return;
	for (size_t j = 0; j < *n; j++)
		if (strcmp((*v)[j], nm) == 0)
			return;
	*v = realloc(*v, (*n + 1) * sizeof **v);
	if (!*v)
		abort();
	(*v)[(*n)++] = strdup(nm);
}

size_t
model_machine_names(const struct wb_model *m, char ***out)
{
	char **v = NULL;
	size_t n = 0;

	for (size_t i = 0; i < m->man.n_files; i++) {
		add_name(&v, &n, m->man.files[i].machine_name);
		for (size_t k = 0; k < m->man.files[i].n_machines; k++)
			add_name(&v, &n, m->man.files[i].machines[k].name);
	}
	for (size_t i = 0; i < m->n_extra_machines; i++)
		add_name(&v, &n, m->extra_machines[i]);
	*out = v;
	return n;
}

void
model_free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
model_set_machine(struct wb_model *m, const char *path, const char *name)
{
	struct tm_manifest next;
	char msg[512];
	const struct tm_report_file *rf = path_file(m, path);

	if (rf && rf->n_machines > 1) {
		model_set_msg(m, ROLE_WARNING,
			      "%s carries several machines: name its ids instead (%s)", path,
			      model_key(m, REQ_NAME_IDS));
		return;
	}
	if (name && (!*name || strcmp(name, "Default") == 0))
		name = NULL;
	tm_manifest_copy(&next, &m->man);
	tm_manifest_set_machine(&next, path, name);
	snprintf(msg, sizeof msg, "%s -> machine %s", path, name ? name : "Default");
	model_commit(m, &next, msg);
}

char *
model_add_machine(struct wb_model *m, const char *path)
{
	const struct tm_manifest_file *f;
	char *name;

	if (!path)
		return NULL;
	/* Numbers whose name is taken are skipped (a loaded manifest may use them). */
	name = offered_name(m);
	model_set_machine(m, path, name);
	f = model_manifest_file(m, path);
	if (f && str_eq(f->machine_name, name))
		return name;
	free(name);
	return NULL;
}

/* The machine ids a file carries itself (raw ids below 2^32), from an
 * evaluation without the manifest's machines table for it; sorted. */
static size_t
embedded_ids(struct wb_model *m, const char *path, uint32_t *ids, size_t max)
{
	struct tm_manifest tmp;
	struct tm_manifest_file *f;
	struct tm_report *rep = NULL;
	struct tm_error err;
	size_t n = 0, row = model_row_of(m, path);

	if (!m->s || !m->scanned || row == SIZE_MAX)
		return 0;
	tm_manifest_copy(&tmp, &m->man);
	f = tm_manifest_file_get(&tmp, path, false);
	if (f) {
		for (size_t i = 0; i < f->n_machines; i++)
			free(f->machines[i].name);
		free(f->machines);
		f->machines = NULL;
		f->n_machines = 0;
		f->has_machines = false;
	}
	tm_error_clear(&err);
	if (tm_session_eval_numbers(m->s, &tmp, &rep, &err) == TM_OK && rep) {
		size_t member = model_row_member(m, row);
		for (size_t i = 0; i < rep->n_files; i++) {
			const struct tm_report_file *rf = &rep->files[i];
			if (rf->member != member)
				continue;
			for (size_t j = 0; j < rf->n_machines && n < max; j++)
				for (size_t k = 0; k < rep->n_machines; k++)
					if (rep->machines[k].id == rf->machines[j] &&
					    rep->machines[k].raw_id <= UINT32_MAX)
						ids[n++] = (uint32_t)rep->machines[k].raw_id;
		}
	}
	if (rep)
		tm_report_free(rep);
	tm_manifest_fini(&tmp);
	for (size_t i = 1; i < n; i++) /* insertion sort: a handful of ids */
		for (size_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			uint32_t t = ids[j];
			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	return n;
}

char *
offered_name(struct wb_model *m)
{
	char name[64], **names;
	size_t n;

	for (;;) {
		bool taken = false;
		snprintf(name, sizeof name, "Machine %u", m->next_machine_n++);
		n = model_machine_names(m, &names);
		for (size_t i = 0; i < n; i++)
			taken |= strcmp(names[i], name) == 0;
		model_free_names(names, n);
		if (!taken)
			return strdup(name);
	}
}

static void
table_set(struct tm_manifest_file *f, uint32_t id, const char *name)
{
	size_t k;

	for (k = 0; k < f->n_machines; k++)
		if (f->machines[k].id == id)
			break;
	if (k == f->n_machines) {
		f->machines = realloc(f->machines, (f->n_machines + 1) * sizeof *f->machines);
		if (!f->machines)
			abort();
		f->machines[k].id = id;
		f->machines[k].name = NULL;
		f->n_machines++;
	}
	free(f->machines[k].name);
	f->machines[k].name = strdup(name);
	f->has_machines = true;
}

void
model_name_id(struct wb_model *m, const char *path, const char *spec)
{
	struct tm_manifest next;
	struct tm_manifest_file *f;
	char *end;
	unsigned long id;
	const char *eq = strchr(spec, '=');
	char msg[512];
	uint32_t ids[256];
	size_t n_ids, o;
	struct tm_buf offered;

	errno = 0;
	id = strtoul(spec, &end, 10);
	if (!eq || end == spec || end != eq || errno || id > UINT32_MAX) {
		model_set_msg(m, ROLE_ERROR, "Expected id=name, e.g. 7=vm");
		return;
	}
	n_ids = embedded_ids(m, path, ids, sizeof ids / sizeof ids[0]);
	tm_manifest_copy(&next, &m->man);
	f = tm_manifest_file_get(&next, path, true);
	table_set(f, (uint32_t)id, eq + 1);
	/* A partial table is what trace_processor would reject ("undeclared
	 * machine id"): the ids it leaves out get offered names, shown and
	 * written alike; i renames them. */
	tm_buf_init(&offered);
	for (size_t i = 0; i < n_ids; i++) {
		bool named = false;
		for (size_t k = 0; k < f->n_machines; k++)
			named |= f->machines[k].id == ids[i];
		if (named)
			continue;
		char *nm = offered_name(m);
		table_set(f, ids[i], nm);
		tm_buf_addf(&offered, "%s%u=%s", offered.len ? ", " : "", ids[i], nm);
		free(nm);
	}
	o = (size_t)snprintf(msg, sizeof msg, "%s: id %lu -> %s", path, id, eq + 1);
	if (offered.len && o < sizeof msg)
		snprintf(msg + o, sizeof msg - o, "; the other ids are named too (%s; %s renames)",
			 offered.data, model_key(m, REQ_NAME_IDS));
	tm_buf_fini(&offered);
	model_commit(m, &next, msg);
}

void
model_align_auto(struct wb_model *m, const char *path)
{
	struct tm_manifest next;
	char msg[300];

	tm_manifest_copy(&next, &m->man);
	tm_manifest_clear_clocks(&next, path);
	snprintf(msg, sizeof msg, "%s: aligned automatically", path);
	model_commit(m, &next, msg);
}

static bool
parse_clock(const char *s, uint32_t *out)
{
	if (!s || !*s || strcmp(s, "PIN") == 0 || strcmp(s, "-") == 0) {
		*out = TM_CLOCK_UNSET;
		return true;
	}
	*out = tm_clock_from_name(s);
	return *out != 0;
}

void
model_set_ref(struct wb_model *m, const char *path, const char *spec)
{
	const struct tm_manifest_file *f = model_manifest_file(m, path);
	char *s = strdup(spec), *at, *colon;
	struct tm_offset_spec sp;
	char asked[300];

	memset(&sp, 0, sizeof sp);
	at = strrchr(s, '@');
	if (at)
		*at++ = 0;
	colon = strrchr(s, ':');
	if (colon)
		*colon++ = 0;
	if (colon && !parse_clock(colon, &sp.ref.clock)) {
		model_set_msg(m, ROLE_ERROR, "Unknown clock %s (REALTIME ... BOOTTIME)", colon);
		free(s);
		return;
	}
	sp.ref.has_clock = colon != NULL;
	sp.ref.file = s;
	sp.ref.machine = at && *at ? at : NULL;
	if (f && f->has_clocks) { /* the file's own clock stays */
		sp.src.has_clock = true;
		sp.src.clock = f->clocks.clock;
		sp.src.is_pin = !f->clocks.clock;
	}
	snprintf(asked, sizeof asked, "related");
	offset_edit(m, path, &sp, "Reference", asked);
	free(s);
}

void
model_set_own_clock(struct wb_model *m, const char *path, const char *name)
{
	const struct tm_manifest_file *f = model_manifest_file(m, path);
	struct tm_offset_spec sp;
	char asked[128];

	memset(&sp, 0, sizeof sp);
	if (!parse_clock(name, &sp.src.clock)) {
		model_set_msg(m, ROLE_ERROR,
			      "Unknown clock %s (REALTIME ... BOOTTIME, empty = PIN)", name);
		return;
	}
	if (!f || !f->has_clocks) {
		model_set_msg(m, ROLE_WARNING, "Set an offset first (%s)", model_key(m, REQ_OFFSET));
		return;
	}
	sp.src.has_clock = true;
	sp.src.is_pin = !sp.src.clock;
	snprintf(asked, sizeof asked, "clock %s",
		 sp.src.clock ? tm_clock_name(sp.src.clock) : "PIN");
	offset_edit(m, path, &sp, "Clock", asked);
}

void
model_set_trace_time(struct wb_model *m, const char *spec)
{
	char *s = strdup(spec), *save = NULL;
	char *clock = strtok_r(s, " \t", &save);
	char *file = strtok_r(NULL, " \t", &save);
	char *machine = strtok_r(NULL, " \t", &save);
	uint32_t c = TM_CLOCK_UNSET;
	struct tm_manifest next;
	char msg[512];

	if (clock && strcmp(clock, "auto") != 0 && !parse_clock(clock, &c)) {
		model_set_msg(m, ROLE_ERROR, "Unknown clock %s (REALTIME ... BOOTTIME, auto)",
			      clock);
		free(s);
		return;
	}
	tm_manifest_copy(&next, &m->man);
	tm_manifest_set_trace_time(&next, c, file, machine);
	if (c)
		snprintf(msg, sizeof msg, "Timeline clock %s%s%s", tm_clock_name(c),
			 file ? " of " : "", file ? file : "");
	else
		snprintf(msg, sizeof msg, "Timeline clock: automatic");
	model_commit(m, &next, msg);
	free(s);
}

void
model_set_attr(struct wb_model *m, const char *spec)
{
	const char *eq = strchr(spec, '=');
	char key[256], *end;
	struct tm_manifest next;
	long long v;

	if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof key) {
		model_set_msg(m, ROLE_ERROR, "Expected key=value");
		return;
	}
	memcpy(key, spec, (size_t)(eq - spec));
	key[eq - spec] = 0;
	tm_manifest_copy(&next, &m->man);
	errno = 0;
	v = strtoll(eq + 1, &end, 10);
	if (!eq[1])
		tm_manifest_remove_attr(&next, key);
	else if (!*end && !errno)
		tm_manifest_set_attr_int(&next, key, v);
	else
		tm_manifest_set_attr_str(&next, key, eq + 1);
	model_commit(m, &next, eq[1] ? "Attribute set" : "Attribute removed");
}

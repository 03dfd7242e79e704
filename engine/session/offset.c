/* SPDX-License-Identifier: MIT */
/*
 * Offsets: the one grammar for an offset (batch --offset, workbench prompts,
 * `tracemerge align`) and edits that are valid by construction.
 *
 * A file with clocks of its own is RELATEd through the clock its timestamps
 * are in (clocks.clock), never PINned: a PIN flags the file so that its
 * ClockSnapshots fail the import (proto_trace_reader.cc, TokenizePacket's
 * clock_snapshot case) and it moves only formats whose clock is the private
 * TRACE_FILE clock (forwarding_trace_parser.cc, the trace clock policy).
 * After the edit the engine evaluates both manifests and says when no
 * predicted number changed, and why; and when the relation puts two clocks
 * of one machine against each other, what giving the file its own machine
 * would predict.  Everything said here is ours, never trace_processor's.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "oplog.h"
#include "replay.h"
#include "session.h"

/* ---- grammar ---- */

static void
side_fini(struct tm_offset_side *d)
{
	free(d->file);
	free(d->machine);
	memset(d, 0, sizeof *d);
}

void
tm_offset_spec_fini(struct tm_offset_spec *sp)
{
	side_fini(&sp->src);
	side_fini(&sp->ref);
	memset(sp, 0, sizeof *sp);
}

/* SIDE := PATH [":" CLOCK] ["[" MACHINE "]"]; s[0..n). */
static enum tm_status
parse_side(const char *s, size_t n, bool is_ref, struct tm_offset_side *out, struct tm_error *err)
{
	memset(out, 0, sizeof *out);
	if (n && s[n - 1] == ']') {
		size_t k = n - 1;
		while (k > 0 && s[k - 1] != '[')
			k--;
		if (k == 0)
			return tm_error_set(err, TM_ERR_INVALID, "'%.*s': ']' without '['", (int)n, s);
		if (k == n - 1)
			return tm_error_set(err, TM_ERR_INVALID, "'%.*s': empty machine name in []",
					    (int)n, s);
		out->machine = xstrndup(s + k, n - 1 - k);
		n = k - 1;
	}
	for (size_t k = n; k > 0; k--) {
		if (s[k - 1] != ':')
			continue;
		char *c = xstrndup(s + k, n - k);
		uint32_t id = tm_clock_from_name(c);
		bool pin = !is_ref && !strcmp(c, "PIN");
		bool clockish = id || pin;
		if (!clockish && *c) {
			/* an upper-case word after ':' was meant as a clock */
			bool upper = true;
			for (const char *q = c; *q; q++)
				upper &= isupper((unsigned char)*q) || *q == '_';
			if (upper) {
				tm_error_set(err, TM_ERR_INVALID,
					     "unknown clock '%s' (use REALTIME, REALTIME_COARSE, "
					     "MONOTONIC, MONOTONIC_COARSE, MONOTONIC_RAW or BOOTTIME%s)",
					     c, is_ref ? "" : ", or PIN for a clockless file");
				free(c);
				return TM_ERR_INVALID;
			}
		}
		free(c);
		if (clockish) {
			out->clock = id;
			out->is_pin = pin;
			out->has_clock = true;
			n = k - 1;
		}
		break;
	}
	if (n == 0 && (out->has_clock || out->machine))
		return tm_error_set(err, TM_ERR_INVALID, "a clock or machine needs a file before it");
	out->file = n ? xstrndup(s, n) : NULL;
	return TM_OK;
}

void
tm_offset_format_ns(int64_t ns, struct tm_buf *b)
{
	if (!ns) {
		tm_buf_addc(b, '0'); /* the same in every unit */
		return;
	}
	struct tm_buf t;
	tm_buf_init(&t);
	tm_format_duration_ns(ns, &t); /* exact digits, then " unit" */
	for (size_t i = 0; i < t.len; i++)
		if (t.data[i] != ' ')
			tm_buf_addc(b, t.data[i]);
	tm_buf_fini(&t);
}

enum tm_status
tm_offset_parse(const char *text, struct tm_offset_spec *out, struct tm_error *err)
{
	memset(out, 0, sizeof *out);
	const char *eq = NULL;
	int depth = 0;
	for (const char *p = text; *p; p++) {
		depth += *p == '[' ? 1 : *p == ']' ? -1 : 0;
		if (*p == '=' && depth == 0) {
			eq = p;
			break;
		}
	}
	const char *val = text;
	enum tm_status st = TM_OK;
	if (eq) {
		if (eq == text) {
			st = tm_error_set(err, TM_ERR_INVALID, "'%s': no file before '='", text);
			goto fail;
		}
		st = parse_side(text, (size_t)(eq - text), false, &out->src, err);
		if (st != TM_OK)
			goto fail;
		val = eq + 1;
	}
	const char *at = strchr(val, '@');
	size_t vlen = at ? (size_t)(at - val) : strlen(val);
	while (vlen && isspace((unsigned char)*val)) {
		val++;
		vlen--;
	}
	while (vlen && isspace((unsigned char)val[vlen - 1]))
		vlen--;
	if (vlen) {
		char *v = xstrndup(val, vlen);
		st = tm_parse_duration_ns(v, &out->offset_ns, err);
		free(v);
		if (st != TM_OK)
			goto fail;
		out->has_offset = true;
	}
	if (at) {
		if (!at[1]) {
			st = tm_error_set(err, TM_ERR_INVALID, "'%s': no reference file after '@'", text);
			goto fail;
		}
		st = parse_side(at + 1, strlen(at + 1), true, &out->ref, err);
		if (st != TM_OK)
			goto fail;
	}
	if (!out->has_offset && !at && !(out->src.has_clock || out->src.machine)) {
		st = tm_error_set(err, TM_ERR_INVALID, "'%s': expected an offset (e.g. 12ms) or @REF",
				  text);
		goto fail;
	}
	return TM_OK;
fail:
	tm_error_hint(err, "the form is [FILE[:CLOCK][[MACHINE]]=]OFFSET[@REF[:CLOCK][[MACHINE]]], "
			   "e.g. watch.pftrace=12ms@phone.pftrace:BOOTTIME");
	tm_offset_spec_fini(out);
	return st;
}

/* ---- the edit ---- */

/* The machine of embedded id 0 in an entry's machines[] (else the first). */
static const char *
machines_default(const struct tm_manifest_file *f)
{
	if (!f || !f->n_machines)
		return NULL;
	for (size_t i = 0; i < f->n_machines; i++)
		if (f->machines[i].id == 0)
			return f->machines[i].name;
	return f->machines[0].name;
}

/* The machine name a file's events land on for the relation's purpose. */
static const char *
machine_of(const struct tm_manifest *m, const char *path, const char *clocks_machine)
{
	const struct tm_manifest_file *f = tm_manifest_file_find(m, path);
	if (clocks_machine)
		return clocks_machine;
	if (!f)
		return NULL;
	return f->machine_name ? f->machine_name : machines_default(f);
}

static int
report_file(const struct tm_report *r, size_t member)
{
	for (size_t i = 0; r && i < r->n_files; i++)
		if (r->files[i].member == member)
			return (int)i;
	return -1;
}

/* Whether report file fi (-1: unknown) has clock among its clocks (UNSET,
 * a PIN: true). */
static bool
file_has_clock(const struct tm_report *r, int fi, uint32_t clock)
{
	if (fi < 0 || !clock)
		return true;
	for (size_t i = 0; i < r->files[fi].n_clocks; i++)
		if (r->files[fi].clocks[i] == clock)
			return true;
	return false;
}

void
tm_offset_result_fini(struct tm_offset_result *r)
{
	if (r->has_m)
		tm_manifest_fini(&r->m);
	if (r->own_machine)
		tm_manifest_fini(&r->own_m);
	free(r->file);
	free(r->ref);
	free(r->how);
	free(r->inert);
	free(r->idle);
	free(r->own_machine);
	free(r->own_why);
	free(r->verdict);
	free(r->own_verdict);
	tm_report_free(r->report);
	tm_report_free(r->own_report);
	memset(r, 0, sizeof *r);
}

struct tm_offset_take
tm_offset_take(struct tm_offset_result *r, bool take_own)
{
	struct tm_offset_take t;
	t.offer = r->own_machine && r->own_helps;
	t.own = take_own && t.offer;
	t.m = t.own ? &r->own_m : &r->m;
	t.report = t.own ? &r->own_report : &r->report;
	t.inert = t.own ? NULL : r->inert;
	return t;
}

/* A machine name for the file: its base name without the extension, made
 * unique among the manifest's machine names (tracemerge.h). */
char *
tm_own_machine_name(const struct tm_manifest *m, const char *path)
{
	const char *base = tm_path_base(path);
	const char *dot = strrchr(base, '.');
	size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	char *name = xstrndup(base, n);
	for (unsigned k = 2;; k++) {
		bool taken = false;
		for (size_t i = 0; i < m->n_files && !taken; i++) {
			const struct tm_manifest_file *f = &m->files[i];
			taken = f->machine_name && !strcmp(f->machine_name, name);
			for (size_t j = 0; j < f->n_machines && !taken; j++)
				taken = !strcmp(f->machines[j].name, name);
		}
		if (!taken)
			return name;
		struct tm_buf b;
		tm_buf_init(&b);
		tm_buf_addf(&b, "%.*s-%u", (int)n, base, k);
		free(name);
		name = tm_buf_steal(&b);
	}
}

static char *
xfmt(const char *fmt, ...) TM_PRINTF(1, 2);
static char *
xfmt(const char *fmt, ...)
{
	va_list ap, ap2;
	va_start(ap, fmt);
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = xmalloc(n > 0 ? (size_t)n + 1 : 1);
	vsnprintf(s, n > 0 ? (size_t)n + 1 : 1, fmt, ap2);
	va_end(ap2);
	return s;
}

enum tm_status
tm_offset_apply(struct tm_session *s, const struct tm_manifest *cur, const char *file,
		const struct tm_offset_spec *sp, struct tm_offset_result *out, struct tm_error *err)
{
	return tm_offset_apply_known(s, cur, NULL, NULL, file, sp, out, err);
}

void
tm_first_traces(const struct tm_report *r, struct tm_first_traces *out)
{
	size_t k = 0;
	out->v[0] = out->v[1] = -1;
	for (size_t i = 0; k < 2 && i < r->n_files; i++) {
		TM_PROBE();
		if (r->files[i].is_trace && r->files[i].path)
			out->v[k++] = (long)i;
	}
}

enum tm_status
tm_offset_apply_known(struct tm_session *s, const struct tm_manifest *cur,
		      const struct tm_report *known, const struct tm_first_traces *traces,
		      const char *file, const struct tm_offset_spec *sp,
		      struct tm_offset_result *out, struct tm_error *err)
{
	memset(out, 0, sizeof *out);
	const char *path = sp->src.file ? sp->src.file : file;
	if (!path || !*path)
		return tm_error_set(err, TM_ERR_INVALID, "an offset needs a file (FILE=OFFSET)");
	ssize_t mi = tm_session_member_by_name(s, path);
	if (mi < 0)
		return tm_error_set(err, TM_ERR_INVALID, "'%s' is not a file of the input", path);
	if (tm_format_is_container(s->in.members[mi].format) ||
	    s->in.members[mi].format == TM_FMT_MANIFEST)
		return tm_error_set(err, TM_ERR_INVALID,
				    "'%s' is not a trace file: trace_processor takes no offset on it",
				    path);
	/* before: the caller's replay of cur, else one of our own */
	struct tm_report *own_before = NULL;
	const struct tm_report *before = known;
	enum tm_status st = TM_OK;
	if (!before) {
		st = tm_session_eval_numbers(s, cur, &own_before, err);
		if (st != TM_OK)
			return st;
		before = own_before;
	}

	const struct tm_manifest_file *f = tm_manifest_file_find(cur, path);
	const struct tm_manifest_clocks *old = f && f->has_clocks ? &f->clocks : NULL;

	/* reference: named, else kept, else the timeline's owner, else the first
	 * other trace file */
	const char *ref = sp->ref.file;
	if (!ref && old && old->sync_file && *old->sync_file)
		ref = old->sync_file;
	if (!ref && before->tt_file >= 0 && before->files[before->tt_file].path &&
	    strcmp(before->files[before->tt_file].path, path))
		ref = before->files[before->tt_file].path;
	struct tm_first_traces ft;
	if (!traces) {
		tm_first_traces(before, &ft);
		traces = &ft;
	}
	for (size_t k = 0; !ref && k < 2 && traces->v[k] >= 0; k++)
		if (strcmp(before->files[traces->v[k]].path, path))
			ref = before->files[traces->v[k]].path;
	/* both named like path: on from the second (a name twice in the input) */
	for (size_t i = traces->v[1] >= 0 ? (size_t)traces->v[1] + 1 : before->n_files;
	     !ref && i < before->n_files; i++) {
		TM_PROBE();
		if (before->files[i].is_trace && before->files[i].path &&
		    strcmp(before->files[i].path, path))
			ref = before->files[i].path;
	}
	if (!ref) {
		tm_report_free(own_before);
		return tm_error_set(err, TM_ERR_INVALID,
				    "%s: no other trace file to relate it to; name one with @REF", path);
	}
	if (!strcmp(ref, path)) {
		tm_report_free(own_before);
		return tm_error_set(err, TM_ERR_INVALID, "%s cannot be related to itself", path);
	}
	ssize_t ri = tm_session_member_by_name(s, ref);
	if (ri < 0) {
		/* ours: a reference outside the input relates the file to no
		 * events at all (a typo, in practice) */
		tm_report_free(own_before);
		return tm_error_set(err, TM_ERR_INVALID, "'%s' is not a file of the input", ref);
	}

	/* the file's clock: named, else kept, else the one its timestamps are in */
	uint32_t own = tm_session_trace_clock(s, (size_t)mi);
	uint32_t clock;
	const char *how;
	if (sp->src.has_clock) {
		clock = sp->src.clock;
		how = sp->src.is_pin ? "PIN, as asked" : "RELATE through the clock asked for";
	} else if (old && sp->ref.file == NULL && (old->clock || !own)) {
		clock = old->clock;
		how = clock ? "RELATE through the clock already set" : "PIN, as already set";
	} else {
		clock = own;
		how = own ? "RELATE through the clock its timestamps are in (a PIN would make "
			    "its own clocks an error)"
			  : "PIN: the file has no clock of its own";
	}
	uint32_t ref_clock;
	if (sp->ref.has_clock)
		ref_clock = sp->ref.clock;
	else if (old && !sp->ref.file)
		ref_clock = old->sync_clock;
	else
		ref_clock = ri >= 0 ? tm_session_trace_clock(s, (size_t)ri) : TM_CLOCK_UNSET;

	const char *src_machine = sp->src.machine;
	if (!src_machine && old)
		src_machine = old->machine;
	if (!src_machine && f && f->n_machines)
		src_machine = machines_default(f);
	const char *ref_machine = sp->ref.machine;
	if (!ref_machine && old && !sp->ref.file)
		ref_machine = old->sync_machine;
	const struct tm_manifest_file *rf = tm_manifest_file_find(cur, ref);
	if (!ref_machine && rf && rf->n_machines)
		ref_machine = machines_default(rf);
	int64_t offset = sp->has_offset ? sp->offset_ns : old ? old->offset_ns : 0;

	out->has_m = true;
	tm_manifest_copy(&out->m, cur);
	tm_manifest_set_clocks(&out->m, path, clock, ref, ref_clock, ref_machine, offset);
	struct tm_manifest_file *nf = tm_manifest_file_get(&out->m, path, false);
	free(nf->clocks.machine);
	nf->clocks.machine = xstrdup0(src_machine);
	out->file = xstrdup(path);
	out->ref = xstrdup(ref);
	out->clock = clock;
	out->ref_clock = ref_clock;
	out->offset_ns = offset;
	out->is_pin = clock == TM_CLOCK_UNSET;
	out->how = xfmt("%s: %s%s%s vs %s%s%s: %s", path, clock ? "clock " : "",
			clock ? tm_clock_name(clock) : "PIN", "", ref, ref_clock ? ":" : "",
			ref_clock ? tm_clock_name(ref_clock) : "", how);

	struct tm_report *after = NULL;
	st = tm_session_eval_numbers(s, &out->m, &after, err);
	/* from_here: where the file lands is linear in the entry's offset (its
	 * edge adds offset_ns on the way to trace time: clock_tracker.cc,
	 * ClockTracker::AddSnapshot's edge, ClockSynchronizer::Convert), so
	 * one probe at the offset asked for gives the entry's offset that
	 * moves it from where it is by that much; a second evaluation checks
	 * it and one more corrects a path that is not a plain shift. */
	int fb = report_file(before, (size_t)mi);
	if (st == TM_OK && sp->from_here && sp->has_offset && !old && fb >= 0 &&
	    before->files[fb].has_all_ts && before->tt_file != fb) {
		int64_t want, b0 = before->files[fb].all_first_ts;
		bool ovf = __builtin_add_overflow(b0, sp->offset_ns, &want);
		for (int round = 0; round < 2 && st == TM_OK && !ovf; round++) {
			int fa = report_file(after, (size_t)mi);
			if (fa < 0 || !after->files[fa].has_all_ts ||
			    after->files[fa].all_first_ts == want)
				break;
			int64_t next;
			if (__builtin_sub_overflow(want, after->files[fa].all_first_ts, &next) ||
			    __builtin_add_overflow(offset, next, &next))
				break;
			offset = next;
			nf = tm_manifest_file_get(&out->m, path, false);
			nf->clocks.offset_ns = offset;
			tm_report_free(after);
			after = NULL;
			st = tm_session_eval_numbers(s, &out->m, &after, err);
		}
		int fa = st == TM_OK ? report_file(after, (size_t)mi) : -1;
		if (fa >= 0 && after->files[fa].has_all_ts &&
		    !__builtin_sub_overflow(after->files[fa].all_first_ts, b0, &out->moved_ns)) {
			out->from_here = true;
			out->offset_ns = offset;
		}
	}
	if (st != TM_OK) {
		tm_report_free(own_before);
		tm_report_free(after);
		tm_offset_result_fini(out);
		return st;
	}
	out->verdict = tm_report_verdict_str(after);

	/* Two files on one machine related by their real clocks: the relation
	 * either joins one clock to itself (duplicate clock domain, from
	 * clock_synchronizer.cc AddSnapshot) or fights their snapshots. */
	bool same_machine = clock && ref_clock &&
			    tm_same_str(machine_of(&out->m, path, src_machine),
				     machine_of(&out->m, ref, ref_machine));
	if (same_machine || (after->error && strstr(after->error, "duplicate clock domain"))) {
		out->own_machine = tm_own_machine_name(&out->m, path);
		tm_manifest_copy(&out->own_m, &out->m);
		if (f && f->n_machines) {
			/* multi-machine: a machines[] entry names its machines already */
			free(out->own_machine);
			out->own_machine = NULL;
			tm_manifest_fini(&out->own_m);
		} else {
			tm_manifest_set_machine(&out->own_m, path, out->own_machine);
			struct tm_manifest_file *of = tm_manifest_file_get(&out->own_m, path, false);
			free(of->clocks.machine);
			of->clocks.machine = NULL;
			struct tm_report *own_r = NULL;
			struct tm_error e2;
			if (tm_session_eval_numbers(s, &out->own_m, &own_r, &e2) == TM_OK) {
				out->own_verdict = tm_report_verdict_str(own_r);
				out->own_ok = own_r->ok;
				out->own_helps = !own_r->error && (after->error || own_r->dropped < after->dropped ||
								   own_r->ok);
				out->own_report = own_r;
			}
			out->own_why = xfmt(
				"%s and %s are on one machine, where %s is one clock: relating %s to %s "
				"there %s. On a machine of its own (\"%s\") the offset relates two "
				"machines' clocks.",
				path, ref, tm_clock_name(clock), tm_clock_name(clock),
				tm_clock_name(ref_clock),
				clock == ref_clock ? "joins the clock to itself"
						   : "contradicts the files' own clock snapshots",
				out->own_machine);
		}
	}

	if (tm_report_same_numbers(before, after)) {
		int fi = report_file(after, (size_t)mi);
		int ri2 = ri >= 0 ? report_file(after, (size_t)ri) : -1;
		bool has_clock = file_has_clock(after, fi, clock);
		bool ref_has_clock = file_has_clock(after, ri2, ref_clock);
		if (after->error)
			/* the same failure with and without the relation: no other
			 * reason below would be true */
			out->inert = xfmt("the merged trace fails to open with or without it (%s)",
					  after->error);
		else if (out->is_pin && !tm_format_follows_pin(s->in.members[mi].format))
			out->inert = xfmt("a PIN moves only clockless files (JSON); %s stays on its "
					  "own clock",
					  path);
		else if (out->from_here && out->moved_ns == 0 && sp->offset_ns == 0)
			out->inert = xfmt("a move of 0 leaves %s where it is", path);
		else if (!has_clock)
			out->inert = xfmt("%s has no %s clock: the relation hangs off a clock its "
					  "events never use",
					  path, tm_clock_name(clock));
		else if (fi >= 0 && after->tt_file == fi)
			out->inert = xfmt("%s owns the timeline: the relation can only move %s, and "
					  "nothing reaches %s through it",
					  path, ref, ref);
		else if (!ref_has_clock)
			out->inert = xfmt("the reference is not on the timeline's path: %s has no %s "
					  "clock, so the relation hangs off a clock nothing uses",
					  ref, tm_clock_name(ref_clock));
		else if (offset == 0)
			out->inert = xfmt("offset 0: %s already lines up with %s this way", path, ref);
		else
			out->inert = xfmt("the reference is not on the timeline's path: the timeline "
					  "reaches %s through a shorter clock path first "
					  "(trace_processor takes the first path it finds)",
					  path);
	}
	/* An entry that was in effect, edited into one that does nothing: the
	 * numbers changed, but only back to the file's placement without it. */
	if (!out->inert && old && !after->error) {
		struct tm_manifest none;
		struct tm_report *bare = NULL;
		struct tm_error e2;
		tm_error_clear(&e2);
		tm_manifest_copy(&none, &out->m);
		tm_manifest_clear_clocks(&none, path);
		if (tm_session_eval_numbers(s, &none, &bare, &e2) == TM_OK &&
		    tm_report_same_numbers(bare, after)) {
			if (!file_has_clock(after, report_file(after, (size_t)mi), clock))
				out->idle = xfmt("%s has no %s clock: the relation hangs off a clock its "
						 "events never use, and %s is placed as with no clocks "
						 "entry",
						 path, tm_clock_name(clock), path);
			else
				out->idle = xfmt("%s is placed as with no clocks entry: the timeline "
						 "reaches it through another clock path first",
						 path);
		}
		tm_report_free(bare);
		tm_manifest_fini(&none);
	}
	tm_report_free(own_before);
	out->report = after;
	return TM_OK;
}

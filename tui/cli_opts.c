/* SPDX-License-Identifier: MIT */
/*
 * The batch commands' options: parsing, CONFIG (--machine, --offset,
 * --trace-time) applied to a manifest, where -o may write (the engine's one
 * output rule), opening the inputs and the manifest.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracemerge.h"
#include "workbench.h"
#include "cli.h"

/* ------------------------------------------------------------------ */
/* options                                                             */
/* ------------------------------------------------------------------ */

int
parse_opts(int argc, char **argv, struct opts *o, bool allow_out)
{
	memset(o, 0, sizeof *o);
	o->inputs = calloc((size_t)argc + 1, sizeof *o->inputs);
	o->cfg = calloc((size_t)argc + 1, sizeof *o->cfg);
	if (!o->inputs || !o->cfg)
		abort();
	bool dashdash = false;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
#define NEEDVAL()                                                                                  \
	do {                                                                                       \
		if (i + 1 >= argc)                                                                 \
			return usage("option needs a value");                                      \
		val = argv[++i];                                                                   \
	} while (0)
		if (dashdash || a[0] != '-' || !a[1]) {
			o->inputs[o->n_inputs++] = a;
		} else if (!strcmp(a, "--")) {
			dashdash = true;
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (!strcmp(a, "--format")) {
			NEEDVAL();
			if (!strcmp(val, "json"))
				o->json = true;
			else if (!strcmp(val, "md") || !strcmp(val, "markdown"))
				o->markdown = true;
			else if (strcmp(val, "text"))
				return usage("--format takes text, json or md");
		} else if (!strcmp(a, "--events")) {
			o->events = true;
		} else if (!strcmp(a, "--strict")) {
			o->strict = true;
		} else if (!strcmp(a, "--no-validate")) {
			o->no_validate = true;
		} else if (!strcmp(a, "--no-cache")) {
			o->no_cache = true;
		} else if (!strcmp(a, "--reproducible")) {
			o->reproducible = true;
		} else if (!strcmp(a, "--manifest")) {
			NEEDVAL();
			o->manifest_path = val;
		} else if (allow_out && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
			NEEDVAL();
			o->out = val;
		} else if (allow_out && !strcmp(a, "--force")) {
			o->force = true;
		} else if (!strcmp(a, "--machine") || !strcmp(a, "--offset") ||
			   !strcmp(a, "--trace-time")) {
			char k = a[2] == 'm' ? 'm' : a[3] == 'f' ? 'o' : 't';
			NEEDVAL();
			o->cfg[o->n_cfg++] = (struct cfg){k, val};
		} else {
			say(stderr, "tracemerge: unknown option %s", a);
			return usage(NULL);
		}
#undef NEEDVAL
	}
	if (o->n_inputs == 0)
		return usage("no input files");
	return 0;
}

void
free_opts(struct opts *o)
{
	free(o->inputs);
	free(o->cfg);
}

void
print_manifest_error(const struct tm_error *e)
{
	say(stderr, "%s", e->msg);
	if (e->hint[0])
		say(stderr, "hint (tracemerge, not trace_processor): %s", e->hint);
}

/* The one rule for output files (tm_output): the inputs never written
 * over, nor a special file; an existing file only with --force.  Asked
 * before any work, so that a refusal costs nothing; 0 or the exit status. */
int
out_refused(const struct opts *o, const char *path, bool force)
{
	struct tm_output out = {.inputs = o->inputs, .n_inputs = o->n_inputs, .replace = force};
	struct tm_error e;
	tm_error_clear(&e);
	if (tm_output_check(path, &out, &e) == TM_OK)
		return 0;
	say(stderr, "tracemerge: %s%s", e.msg,
	    e.code == TM_ERR_EXISTS ? " (--force replaces it; never an input)" : "");
	return e.code == TM_ERR_EXISTS ? EXIT_USAGE : EXIT_BROKEN;
}

void
say_stale(const char *path, unsigned n)
{
	if (n)
		say(stderr, "tracemerge: removed %u stale temp file%s beside %s (left by an "
			    "interrupted write)", n, n == 1 ? "" : "s", path);
}

/* Write a manifest (align -o) under the rule; 0 or the exit status. */
int
write_out(const struct opts *o, const char *path, bool force, const struct tm_buf *b)
{
	struct tm_output out = {.inputs = o->inputs, .n_inputs = o->n_inputs, .replace = force};
	struct tm_error e;
	tm_error_clear(&e);
	enum tm_status st = tm_write_atomic(path, b->data ? b->data : "", b->len, &out, &e);
	say_stale(path, out.n_stale);
	if (st == TM_OK)
		return 0;
	say(stderr, "tracemerge: %s", e.msg);
	return st == TM_ERR_EXISTS ? EXIT_USAGE : EXIT_BROKEN;
}

/* --offset: the engine's offset grammar and defaults (RELATE for files with
 * clocks of their own); says when the edit changes nothing, and offers a
 * machine of its own when the relation joins two files on one machine. */
static int
apply_offset(const char *arg, struct tm_session *s, struct tm_manifest *m)
{
	struct tm_offset_spec sp;
	struct tm_offset_result res;
	struct tm_error e;
	tm_error_clear(&e);
	if (tm_offset_parse(arg, &sp, &e) != TM_OK) {
		say(stderr, "tracemerge: --offset %s: %s", arg, e.msg);
		if (e.hint[0])
			say(stderr, "tracemerge: %s", e.hint);
		return EXIT_USAGE;
	}
	if (!sp.src.file) {
		tm_offset_spec_fini(&sp);
		return usage("--offset takes FILE[:CLOCK][[MACHINE]]=OFFSET[@REF[:CLOCK][[MACHINE]]]");
	}
	if (tm_offset_apply(s, m, NULL, &sp, &res, &e) != TM_OK) {
		say(stderr, "tracemerge: --offset %s: %s", arg, e.msg);
		tm_offset_spec_fini(&sp);
		return EXIT_USAGE;
	}
	struct tm_offset_take t = tm_offset_take(&res, false);
	tm_manifest_fini(m);
	tm_manifest_copy(m, t.m);
	if (t.inert)
		say(stderr, "tracemerge: note (ours): --offset %s changes no predicted number: %s",
			arg, t.inert);
	if (t.offer) {
		say(stderr, "tracemerge: note (ours): %s", res.own_why);
		say(stderr, "  Fix: --machine %s=%s (predicted: %s)", res.file, res.own_machine,
		    res.own_verdict ? res.own_verdict : "");
	}
	tm_offset_result_fini(&res);
	tm_offset_spec_fini(&sp);
	return 0;
}

static int
apply_cfg(const struct opts *o, struct tm_session *s, struct tm_manifest *m)
{
	for (size_t i = 0; i < o->n_cfg; i++) {
		char *a = strdup(o->cfg[i].arg);
		if (!a)
			abort();
		int rc = 0;
		if (o->cfg[i].kind == 'm') {
			char *eq = strrchr(a, '=');
			if (!eq || eq == a)
				rc = usage("--machine takes PATH=NAME");
			else {
				*eq = 0;
				tm_manifest_set_machine(m, a, eq + 1);
			}
		} else if (o->cfg[i].kind == 't') {
			char *at = strchr(a, '@');
			if (at)
				*at = 0;
			uint32_t c = tm_clock_from_name(a);
			if (!c) {
				say(stderr, "tracemerge: unknown clock '%s' (use REALTIME, "
						"REALTIME_COARSE, MONOTONIC, MONOTONIC_COARSE, "
						"MONOTONIC_RAW or BOOTTIME)",
					a);
				rc = EXIT_USAGE;
			} else
				tm_manifest_set_trace_time(m, c, at ? at + 1 : NULL, NULL);
		} else {
			rc = apply_offset(o->cfg[i].arg, s, m);
		}
		free(a);
		if (rc)
			return rc;
	}
	return 0;
}

/* What the scan cache met (a damaged saved scan ignored, a write that
 * failed), once per session: ours, on stderr. */
void
say_cache_note(const struct tm_session *s)
{
	struct tm_cache_info ci;
	static const char *said;
	tm_session_cache_info(s, &ci);
	if (ci.note && ci.note != said)
		say(stderr, "tracemerge: %s", ci.note);
	said = ci.note;
}

/* Open the inputs and build the manifest the options describe.  *have_m is
 * false when neither --manifest nor config options nor an archive manifest
 * are present (evaluate the input exactly as it is). */
int
open_all(const struct opts *o, struct tm_session **s, struct tm_manifest *m, bool *have_m,
	 bool keep_events, struct tm_error *merr)
{
	struct tm_error e;
	struct tm_session_opts so = {.keep_events = keep_events};
	bool no_cache = o->no_cache;
	workbench_cache_settings(&no_cache, &so.cache_max_bytes);
	char *cache_dir = no_cache ? NULL : tm_cache_default_dir();
	so.cache_dir = cache_dir;
	tm_error_clear(&e);
	enum tm_status ost = tm_session_open(s, o->inputs, o->n_inputs, &so, &e);
	free(cache_dir);
	if (ost != TM_OK) {
		say(stderr, "tracemerge: %s", e.msg);
		if (merr)
			*merr = e;
		return EXIT_BROKEN;
	}
	say_cache_note(*s);
	tm_manifest_init(m);
	*have_m = false;
	if (o->manifest_path) {
		size_t len;
		char *txt = tm_read_file(o->manifest_path, 64u << 20, false, &len, &e);
		if (!txt) {
			say(stderr, "tracemerge: cannot read the manifest file: %s", e.msg);
			return EXIT_BROKEN;
		}
		tm_manifest_fini(m);
		enum tm_status st = tm_manifest_parse(txt, len, m, &e);
		if (st != TM_OK && *s) /* the hint names only what the files have */
			tm_session_outdated_hint(*s, txt, len, &e);
		free(txt);
		if (st != TM_OK) {
			if (merr)
				*merr = e;
			else
				print_manifest_error(&e);
			return EXIT_BROKEN;
		}
		*have_m = true;
	} else if (o->n_cfg) {
		const struct tm_manifest *am = tm_session_manifest(*s, NULL);
		if (am) {
			tm_manifest_fini(m);
			tm_manifest_copy(m, am);
		}
	}
	if (o->n_cfg) {
		int rc = apply_cfg(o, *s, m);
		if (rc)
			return rc;
		*have_m = true;
	}
	return 0;
}


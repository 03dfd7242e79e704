/* SPDX-License-Identifier: MIT */
/*
 * tracemerge manifest and tracemerge merge: the manifest printed, the
 * merged TAR written (util merge's rules, signals cancel cleanly).
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
#include "cli.h"

/* ------------------------------------------------------------------ */
/* manifest                                                            */
/* ------------------------------------------------------------------ */

/* util merge's refusal for these inputs and manifest (the engine's packing
 * rules), printed as cmd's error; 0 when it would pack them. */
static int
check_pack(const char *cmd, const struct tm_session *s, const struct tm_manifest *m)
{
	struct tm_pack_check pc;
	tm_pack_check(s, m, &pc);
	const struct tm_pack_issue *refusal = tm_pack_refusal(&pc);
	if (refusal) {
		const char *msg = refusal->msg;
		if (!strncmp(msg, "merge: ", 7))
			msg += 7;
		say(stderr, "%s: %s", cmd, msg);
	}
	tm_pack_check_fini(&pc);
	return refusal ? EXIT_BROKEN : 0;
}

int
cmd_manifest(int argc, char **argv)
{
	struct opts o;
	int rc = parse_opts(argc, argv, &o, false);
	if (rc) {
		free_opts(&o);
		return rc;
	}
	struct tm_session *s = NULL;
	struct tm_manifest m;
	bool have_m;
	rc = open_all(&o, &s, &m, &have_m, false, NULL);
	if (!rc && !have_m) {
		const struct tm_error *pe;
		const struct tm_manifest *am = tm_session_manifest(s, &pe);
		if (pe) {
			print_manifest_error(pe);
			rc = EXIT_BROKEN;
		} else if (am) {
			tm_manifest_fini(&m);
			tm_manifest_copy(&m, am);
		}
	}
	if (!rc)
		rc = check_pack("manifest", s, &m);
	if (!rc) {
		/* Errors that need the archive (the replay's), e.g. unresolvable files. */
		struct tm_report *r;
		struct tm_error e;
		if (tm_session_evaluate(s, &m, &r, &e) == TM_OK) {
			if (r->error && r->error_in_manifest) {
				say(stderr, "%s", r->error);
				rc = EXIT_BROKEN;
			}
			tm_report_free(r);
		}
	}
	if (!rc) {
		struct tm_buf b, safe;
		tm_buf_init(&b);
		tm_buf_init(&safe);
		tm_manifest_emit(&m, &b);
		/* C1 and bidi controls in its strings as \u escapes */
		tm_escape_json_doc(b.data ? b.data : "", b.len, &safe);
		out_puts(safe.data, stdout);
		tm_buf_fini(&safe);
		tm_buf_fini(&b);
	}
	if (s)
		tm_manifest_fini(&m);
	tm_session_close(s);
	free_opts(&o);
	return rc;
}

/* ------------------------------------------------------------------ */
/* merge                                                               */
/* ------------------------------------------------------------------ */

/* SIGINT, SIGTERM and SIGHUP while the archive is written cancel the write
 * (tm_merge_write removes its temp file); the signal is then re-raised. */
static volatile bool merge_cancel;
static volatile sig_atomic_t merge_signal;
static const int merge_sigs[3] = {SIGINT, SIGTERM, SIGHUP};

static void
on_merge_signal(int sig)
{
	merge_signal = sig;
	merge_cancel = true;
}

static void
catch_merge_signals(struct sigaction old[3])
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_merge_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (int i = 0; i < 3; i++) {
		sigaction(merge_sigs[i], NULL, &old[i]);
		if (old[i].sa_handler != SIG_IGN) /* nohup: stay ignored */
			sigaction(merge_sigs[i], &sa, NULL);
	}
}

static void
restore_signals(const struct sigaction old[3])
{
	for (int i = 0; i < 3; i++)
		sigaction(merge_sigs[i], &old[i], NULL);
}

int
cmd_merge(int argc, char **argv)
{
	struct opts o;
	int rc = parse_opts(argc, argv, &o, true);
	if (rc) {
		free_opts(&o);
		return rc;
	}
	if (!o.out) {
		free_opts(&o);
		say(stderr, "merge: an output path is required (-o FILE).");
		return EXIT_USAGE;
	}
	rc = out_refused(&o, o.out, o.force);
	if (rc) {
		free_opts(&o);
		return rc;
	}
	struct tm_session *s = NULL;
	struct tm_manifest m;
	bool have_m;
	rc = open_all(&o, &s, &m, &have_m, false, NULL);
	if (!rc)
		rc = check_pack("merge", s, have_m ? &m : NULL);
	if (!rc) {
		unsigned n_stale = 0;
		struct tm_write_opts wo = {.reproducible = o.reproducible,
					   .cancel = &merge_cancel,
					   .replace = o.force,
					   .n_stale = &n_stale};
		struct tm_error e;
		struct sigaction old_sa[3];
		catch_merge_signals(old_sa);
		enum tm_status st = tm_merge_write(s, have_m ? &m : NULL, o.out, &wo, &e);
		restore_signals(old_sa);
		say_stale(o.out, n_stale);
		if (merge_signal) {
			/* the temp file is gone (tm_merge_write aborted on the
			 * cancel), or the archive was complete and renamed */
			say(stderr, "tracemerge: %s by signal %d; %s",
			    st == TM_OK ? "finished writing but interrupted" : "interrupted",
			    (int)merge_signal, st == TM_OK ? o.out : "nothing was written");
			fflush(stdout);
			signal(merge_signal, SIG_DFL);
			raise(merge_signal);
		}
		if (st != TM_OK) {
			say(stderr, "tracemerge: %s", e.msg);
			rc = st == TM_ERR_EXISTS ? EXIT_USAGE : EXIT_BROKEN;
		} else {
			size_t nt = o.n_inputs;
			enum tm_format top = tm_session_member(s, 0)->format;
			if (!tm_session_is_loose(s) && (top == TM_FMT_TAR || top == TM_FMT_ZIP)) {
				nt = 0; /* the archive's members written (manifest aside) */
				for (size_t i = 1; i < tm_session_n_members(s); i++) {
					const struct tm_member *mb = tm_session_member(s, i);
					nt += mb->parent == 0 && !mb->is_hidden &&
					      !(have_m && mb->format == TM_FMT_MANIFEST);
				}
			}
			say(stdout, "Wrote %s (%zu trace%s%s).", o.out, nt, nt == 1 ? "" : "s",
			       have_m && !tm_manifest_is_trivial(&m) ? " plus manifest" : "");
			fflush(stdout);
		}
	}
	if (!rc && !o.no_validate) {
		/* Validate what was written, opened as trace_processor opens it
		 * (its manifest inside): not the input, which can differ (a
		 * symlink member the copy drops, hidden members). */
		struct tm_report *r = NULL;
		struct tm_error e;
		struct tm_session *ws = NULL;
		const char *wp[1] = {o.out};
		tm_error_clear(&e);
		if (tm_session_open(&ws, wp, 1, NULL, &e) != TM_OK ||
		    tm_session_evaluate(ws, NULL, &r, &e) != TM_OK) {
			say(stderr, "tracemerge: validating %s: %s", o.out, e.msg);
			rc = EXIT_BROKEN;
		} else {
			if (r->error) {
				say(stderr, "%s", r->error);
				rc = EXIT_BROKEN;
			} else if (r->ok) { /* no error here: ok is the rest of it */
				struct tm_buf v;
				tm_buf_init(&v);
				tm_report_verdict(r, &v);
				say(stdout, "Validation: %s", v.data);
				tm_buf_fini(&v);
			} else if (r->dropped == 0 && tm_report_missing_by_merge(r) == 0) {
				say(stderr, "Validation: no predicted event is dropped, but the "
					    "prediction is incomplete (see below).");
				if (o.strict)
					rc = EXIT_DROPS;
			} else {
				/* the verdict's figures, each named as check names it */
				struct tm_buf v;
				tm_buf_init(&v);
				tm_report_verdict(r, &v);
				say(stderr, "%s when this archive is opened: %s They cannot be placed on "
					    "the shared timeline. Adjust the clocks in the manifest.",
				    o.strict ? "merge: events would be lost" : "Warning: events would be lost",
				    v.data);
				tm_buf_fini(&v);
				if (o.strict)
					rc = EXIT_DROPS;
			}
			if (!r->is_complete)
				say(stderr, "note (tracemerge): some files are in formats whose "
						"events tracemerge does not predict, or nested "
						"deeper than it expands.");
			for (size_t i = 0; i < r->n_warnings; i++)
				say(stderr, "warning (tracemerge): %s", r->warnings[i]);
			tm_report_free(r);
		}
		tm_session_close(ws);
	}
	if (s)
		tm_manifest_fini(&m);
	tm_session_close(s);
	free_opts(&o);
	return rc;
}


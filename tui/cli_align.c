/* SPDX-License-Identifier: MIT */
/*
 * tracemerge align: offsets estimated from events both traces saw, pairs
 * and messages given, --apply and --solve.
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
/* align                                                               */
/* ------------------------------------------------------------------ */

/* The estimate as --offset would write it (the engine's grammar). */
static void
offset_arg(struct tm_buf *b, const struct tm_align_estimate *e)
{
	tm_buf_addf(b, "%s", e->file);
	if (e->clock)
		tm_buf_addf(b, ":%s", tm_clock_name(e->clock));
	tm_buf_addc(b, '=');
	tm_offset_format_ns(e->offset_ns, b);
	tm_buf_addf(b, "@%s", e->ref);
	if (e->ref_clock)
		tm_buf_addf(b, ":%s", tm_clock_name(e->ref_clock));
}

static void
align_json(const struct tm_align_result *res, const char *verdict)
{
	struct tm_buf b;
	tm_buf_init(&b);
	bool first = true;
	tm_buf_addc(&b, '{');
	kv_str(&b, &first, "reference", res->timeline_ref);
	json_key(&b, &first, "estimates");
	tm_buf_addc(&b, '[');
	for (size_t i = 0; i < res->n; i++) {
		const struct tm_align_estimate *e = &res->est[i];
		bool f2 = true;
		tm_buf_adds(&b, i ? ",{" : "{");
		kv_str(&b, &f2, "file", e->file);
		kv_str(&b, &f2, "ref", e->ref);
		kv_str(&b, &f2, "clock", e->clock ? tm_clock_name(e->clock) : NULL);
		kv_str(&b, &f2, "ref_clock", e->ref_clock ? tm_clock_name(e->ref_clock) : NULL);
		kv_str(&b, &f2, "quality", tm_align_quality_name(e->quality));
		kv_int(&b, &f2, "offset_ns", e->has_offset, e->offset_ns);
		kv_int(&b, &f2, "at_ts", e->has_offset, e->mid_ts);
		kv_int(&b, &f2, "lo_ns", e->has_lo, e->lo_ns);
		kv_int(&b, &f2, "hi_ns", e->has_hi, e->hi_ns);
		json_key(&b, &f2, "drift_ppm");
		if (e->has_drift)
			tm_align_ppm_text(e->drift_ppm, &b);
		else
			tm_buf_adds(&b, "null");
		kv_int(&b, &f2, "drift_ns", e->has_drift, e->drift_ns);
		kv_int(&b, &f2, "span_ns", e->has_offset, e->span_ns);
		kv_u64(&b, &f2, "messages_to_ref", true, e->n_to_ref);
		kv_u64(&b, &f2, "messages_from_ref", true, e->n_from_ref);
		kv_u64(&b, &f2, "same_moment", true, e->n_same);
		kv_u64(&b, &f2, "declared", true, e->n_declared);
		kv_u64(&b, &f2, "unusable_samples", true, e->n_unusable);
		kv_str(&b, &f2, "evidence", e->evidence);
		kv_u64(&b, &f2, "same_moment_names", true, e->n_names);
		kv_bool(&b, &f2, "offerable", tm_align_offerable(e));
		kv_str(&b, &f2, "not_enough_evidence", e->weak);
		tm_buf_addc(&b, '}');
	}
	tm_buf_addc(&b, ']');
	if (verdict)
		kv_str(&b, &first, "verdict", verdict);
	tm_buf_adds(&b, "}\n");
	out_puts(b.data, stdout);
	tm_buf_fini(&b);
}

static void
align_text(FILE *f, const struct tm_align_result *res)
{
	char *r = tm_escape_str(res->timeline_ref);
	fprintf(f, "reference: %s (owns the timeline)\n", r);
	free(r);
	for (size_t i = 0; i < res->n; i++) {
		const struct tm_align_estimate *e = &res->est[i];
		char *fn = tm_escape_str(e->file), *rn = tm_escape_str(e->ref);
		char *ev = tm_escape_str(e->evidence);
		fprintf(f, "%s vs %s: ", fn, rn);
		struct tm_buf w;
		tm_buf_init(&w);
		tm_align_describe(e, &w);
		char *wd = tm_escape_str(w.data);
		fprintf(f, "%s\n", wd);
		free(wd);
		if (!e->has_offset) {
			tm_buf_fini(&w);
			free(fn), free(rn), free(ev);
			continue;
		}
		tm_buf_reset(&w);
		tm_align_drift_sentence(e, &w);
		if (w.len)
			fprintf(f, "  %s\n", w.data);
		tm_buf_fini(&w);
		fprintf(f, "  evidence: %s\n", ev);
		if (e->quality == TM_ALIGN_WEAK) { /* shown, never offered */
			free(fn), free(rn), free(ev);
			continue;
		}
		struct tm_buf b;
		tm_buf_init(&b);
		offset_arg(&b, e);
		char *oa = tm_escape_str(b.data);
		fprintf(f, "  --offset %s\n", oa);
		free(oa);
		tm_buf_fini(&b);
		free(fn), free(rn), free(ev);
	}
}

/* Write the estimates into m, through the engine's offset edit; a relation
 * between two files on one machine takes the machine of its own the engine
 * proved to help. */
static int
align_apply(struct tm_session *s, struct tm_manifest *m, const struct tm_align_result *res)
{
	for (size_t i = 0; i < res->n; i++) {
		const struct tm_align_estimate *e = &res->est[i];
		if (!tm_align_offerable(e))
			continue;
		struct tm_offset_spec sp;
		struct tm_offset_result r;
		struct tm_error err;
		tm_align_offset_spec(e, &sp);
		if (tm_offset_apply(s, m, NULL, &sp, &r, &err) != TM_OK) {
			say(stderr, "tracemerge: align: %s", err.msg);
			return EXIT_BROKEN;
		}
		struct tm_offset_take t = tm_offset_take(&r, true);
		tm_manifest_fini(m);
		tm_manifest_copy(m, t.m);
		if (t.own)
			say(stderr, "tracemerge: note (ours): %s", r.own_why);
		tm_offset_result_fini(&r);
	}
	return 0;
}

/* --solve: the engine's whole configuration, as a manifest diff. */
static int
align_solve(struct tm_session *s, struct tm_manifest *m, const struct opts *o,
	    const char *out_path, bool force)
{
	struct tm_solution so;
	struct tm_error e;
	if (tm_solve(s, m, &so, &e) != TM_OK) {
		fprintf(stderr, "tracemerge: align --solve: %s\n", e.msg);
		return EXIT_BROKEN;
	}
	struct tm_buf a, b;
	tm_buf_init(&a);
	tm_buf_init(&b);
	tm_manifest_emit(m, &a);
	tm_manifest_emit(&so.m, &b);
	printf("solve (tracemerge): %zu edit%s\n", so.n_steps, so.n_steps == 1 ? "" : "s");
	for (size_t i = 0; i < so.n_steps; i++) {
		char *t = tm_escape_str(so.steps[i]);
		printf("  %s\n", t);
		free(t);
	}
	printf("manifest diff:\n");
	struct tm_buf d;
	tm_buf_init(&d);
	tm_line_diff(a.data ? a.data : "", b.data ? b.data : "", &d);
	out_puts(d.data ? d.data : "", stdout);
	tm_buf_fini(&d);
	printf("predicted: %s\n", so.verdict);
	if (!so.ok && so.unplaced) {
		char *t = tm_escape_str(so.unplaced);
		printf("%s\n", t);
		free(t);
	}
	int rc = so.ok ? 0 : EXIT_DROPS;
	if (out_path) {
		int wrc = write_out(o, out_path, force, &b);
		rc = wrc ? wrc : rc;
	}
	tm_buf_fini(&a);
	tm_buf_fini(&b);
	tm_solution_fini(&so);
	return rc;
}

int
cmd_align(int argc, char **argv)
{
	struct tm_align_pair *pairs = calloc((size_t)argc + 1, sizeof *pairs);
	const char **msgs = calloc((size_t)argc + 1, sizeof *msgs);
	char **rest = calloc((size_t)argc + 1, sizeof *rest);
	size_t n_pairs = 0, n_msgs = 0;
	int n_rest = 0, rc = 0;
	bool apply = false, solve = false, force = false;
	const char *out_path = NULL;
	if (!pairs || !msgs || !rest)
		abort();
	for (int i = 0; i < argc && !rc; i++) {
		struct tm_error e;
		if (!strcmp(argv[i], "--pair") || !strcmp(argv[i], "--msg") || !strcmp(argv[i], "-o")) {
			if (i + 1 >= argc) {
				rc = usage("option needs a value");
				break;
			}
			if (argv[i][2] == 'p') {
				if (tm_align_pair_parse(argv[i + 1], &pairs[n_pairs], &e) != TM_OK) {
					say(stderr, "tracemerge: --pair %s", e.msg);
					say(stderr, "tracemerge: %s", e.hint);
					rc = EXIT_USAGE;
				} else {
					n_pairs++;
				}
			} else if (argv[i][1] == 'o') {
				out_path = argv[i + 1];
			} else if (!strchr(argv[i + 1], '=')) {
				rc = usage("--msg takes SEND=RECV (event names)");
			} else {
				msgs[n_msgs++] = argv[i + 1];
			}
			i++;
		} else if (!strcmp(argv[i], "--apply")) {
			apply = true;
		} else if (!strcmp(argv[i], "--solve")) {
			solve = true;
		} else if (!strcmp(argv[i], "--force")) {
			force = true;
		} else {
			rest[n_rest++] = argv[i];
		}
	}
	struct opts o;
	if (!rc)
		rc = parse_opts(n_rest, rest, &o, false);
	else
		memset(&o, 0, sizeof o);
	struct tm_session *s = NULL;
	struct tm_manifest m;
	bool have_m = false, m_init = false;
	if (!rc && out_path && (apply || solve))
		rc = out_refused(&o, out_path, force);
	if (!rc) {
		rc = open_all(&o, &s, &m, &have_m, false, NULL);
		m_init = s != NULL;
	}
	if (!rc && !have_m) {
		const struct tm_manifest *am = tm_session_manifest(s, NULL);
		if (am) {
			tm_manifest_fini(&m);
			tm_manifest_copy(&m, am);
		}
	}
	struct tm_align_result res = {0};
	struct tm_error e;
	if (!rc) {
		struct tm_align_opts ao = {pairs, n_pairs, msgs, n_msgs};
		if (tm_align_run(s, &m, &ao, &res, &e) != TM_OK) {
			say(stderr, "tracemerge: align: %s", e.msg);
			rc = e.code == TM_ERR_INVALID ? EXIT_USAGE : EXIT_BROKEN;
		}
	}
	if (!rc && solve) {
		rc = align_solve(s, &m, &o, out_path, force);
		tm_align_result_fini(&res);
		goto done;
	}
	char *verdict = NULL;
	if (!rc && apply) {
		rc = align_apply(s, &m, &res);
		struct tm_report *r;
		if (!rc && tm_session_evaluate(s, &m, &r, &e) == TM_OK) {
			struct tm_buf b;
			tm_buf_init(&b);
			tm_report_verdict(r, &b);
			verdict = tm_buf_steal(&b);
			rc = r->error ? EXIT_BROKEN : r->dropped ? EXIT_DROPS : 0;
			tm_report_free(r);
		}
	}
	if (res.timeline_ref) {
		if (o.json)
			align_json(&res, verdict);
		else
			align_text(apply ? stderr : stdout, &res);
	}
	if (apply && res.timeline_ref && (rc == 0 || rc == EXIT_DROPS || rc == EXIT_BROKEN)) {
		struct tm_buf b;
		tm_buf_init(&b);
		tm_manifest_emit(&m, &b);
		if (out_path) {
			int wrc = write_out(&o, out_path, force, &b);
			rc = wrc ? wrc : rc;
		} else if (!o.json) {
			struct tm_buf safe;
			tm_buf_init(&safe);
			tm_escape_json_doc(b.data ? b.data : "", b.len, &safe);
			out_puts(safe.data, stdout);
			tm_buf_fini(&safe);
		}
		tm_buf_fini(&b);
		if (verdict)
			say(stderr, "predicted with the estimates applied: %s", verdict);
	}
	free(verdict);
	tm_align_result_fini(&res);
done:
	if (m_init)
		tm_manifest_fini(&m);
	tm_session_close(s);
	if (o.inputs)
		free_opts(&o);
	for (size_t i = 0; i < n_pairs; i++)
		tm_align_pair_fini(&pairs[i]);
	free(pairs);
	free(msgs);
	free(rest);
	return rc;
}

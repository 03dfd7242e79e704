/* SPDX-License-Identifier: MIT */
/*
 * tracemerge: subcommand dispatch and the batch commands (ls, check,
 * manifest, merge).  Everything else opens the workbench (workbench.h).
 * The batch commands are the engine's report printed; they compute nothing
 * themselves.  Exit status: 0 clean, 1 events would be dropped, 2 the
 * archive would fail to open or an input is unreadable, 64 usage.
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

#define EXIT_DROPS 1
#define EXIT_BROKEN 2
#define EXIT_USAGE 64

static const char usage_text[] =
	"usage: tracemerge [FILE...|ARCHIVE]           open the workbench\n"
	"       tracemerge demo                         open the built-in demo\n"
	"       tracemerge ls [--json] INPUT...\n"
	"       tracemerge check [--json] [--events] [--manifest FILE] [--strict] [--no-cache] [CONFIG] INPUT...\n"
	"       tracemerge manifest [--manifest FILE] [CONFIG] INPUT...\n"
	"       tracemerge merge -o OUT.tar [--force] [--manifest FILE] [--strict] [--no-validate]\n"
	"                        [--reproducible] [CONFIG] INPUT...\n"
	"       tracemerge align [--json] [--pair FILE:NAME[#N]=REF:NAME[#N][+D]] [--msg SEND=RECV]\n"
	"                        [--apply|--solve [-o MANIFEST [--force]]] [--manifest FILE] [CONFIG] INPUT...\n"
	"CONFIG: --machine PATH=NAME  --offset PATH[:CLOCK][[MACHINE]]=OFFSET[@REF[:CLOCK][[MACHINE]]]\n"
	"        --trace-time CLOCK[@FILE]\n";

/* ------------------------------------------------------------------ */
/* output helpers                                                      */
/* ------------------------------------------------------------------ */

/*
 * Every line the batch commands print goes through say()/say_part(): the
 * formatted text, literals and untrusted values alike, passes through
 * tm_escape_display (the one escaping function), so a member name, a JSON
 * key or a manifest value quoted in trace_processor's error text cannot
 * reach the terminal raw.  The texts themselves stay exact in the report;
 * only their display is escaped.  JSON output goes through tm_escape_json.
 */
static void say_v(FILE *f, bool nl, const char *fmt, va_list ap) TM_PRINTF(3, 0);

/* The reason the first write to stdout failed: stdio keeps only a flag, and
 * a write that goes past its buffer fails long before the final flush. */
static int stdout_errno;

static void
out_puts(const char *s, FILE *f)
{
	if (fputs(s, f) == EOF && f == stdout && !stdout_errno)
		stdout_errno = errno;
}

static void
say_v(FILE *f, bool nl, const char *fmt, va_list ap)
{
	/* One formatting pass for a line that fits the stack buffer (a TAR's
	 * check prints three or four a member); a longer one is formatted
	 * again into the heap. */
	char stack[512], *raw = stack;
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(stack, sizeof stack, fmt, ap);
	if (n >= (int)sizeof stack) {
		raw = malloc((size_t)n + 1);
		if (!raw)
			abort();
		vsnprintf(raw, (size_t)n + 1, fmt, ap2);
	}
	va_end(ap2);
	static struct tm_buf b; /* reused: only the main thread prints */
	tm_buf_reset(&b);
	tm_escape_display(raw, n > 0 ? (size_t)n : 0, &b, NULL, 0, NULL);
	if (nl)
		tm_buf_addc(&b, '\n');
	out_puts(b.data, f);
	if (raw != stack)
		free(raw);
}

/* One line (a newline is appended). */
static void say(FILE *f, const char *fmt, ...) TM_PRINTF(2, 3);
static void
say(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say_v(f, true, fmt, ap);
	va_end(ap);
}

/* Part of a line. */
static void say_part(FILE *f, const char *fmt, ...) TM_PRINTF(2, 3);
static void
say_part(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say_v(f, false, fmt, ap);
	va_end(ap);
}

/* A JSON string: always valid UTF-8, control, C1 and bidi characters
 * escaped (tm_escape_json). */
static void
json_str(struct tm_buf *o, const char *s)
{
	if (!s)
		tm_buf_adds(o, "null");
	else
		tm_escape_json(s, strlen(s), o);
}

static int
usage(const char *msg)
{
	if (msg)
		say(stderr, "tracemerge: %s", msg);
	fputs(usage_text, stderr);
	return EXIT_USAGE;
}

static void
json_key(struct tm_buf *o, bool *first, const char *k)
{
	if (!*first)
		tm_buf_addc(o, ',');
	*first = false;
	json_str(o, k);
	tm_buf_addc(o, ':');
}

static void
kv_str(struct tm_buf *o, bool *first, const char *k, const char *v)
{
	json_key(o, first, k);
	json_str(o, v);
}

static void
kv_bool(struct tm_buf *o, bool *first, const char *k, bool v)
{
	json_key(o, first, k);
	tm_buf_adds(o, v ? "true" : "false");
}

/* an integer, or null when !has */
static void
kv_int(struct tm_buf *o, bool *first, const char *k, bool has, int64_t v)
{
	json_key(o, first, k);
	if (has)
		tm_buf_addf(o, "%" PRId64, v);
	else
		tm_buf_adds(o, "null");
}

static void
kv_u64(struct tm_buf *o, bool *first, const char *k, bool has, uint64_t v)
{
	json_key(o, first, k);
	if (has)
		tm_buf_addf(o, "%" PRIu64, v);
	else
		tm_buf_adds(o, "null");
}

/* ------------------------------------------------------------------ */
/* options                                                             */
/* ------------------------------------------------------------------ */

struct opts {
	bool json, events, strict, no_validate, reproducible;
	bool force; /* -o may replace an existing regular file (never an input) */
	const char *manifest_path;
	const char *out;
	bool no_cache; /* --no-cache: scan the inputs, neither load nor save a saved scan */
	const char **inputs;
	size_t n_inputs;
	/* config edits, applied in order */
	struct cfg {
		char kind; /* 'm' machine, 'o' offset, 't' trace-time */
		const char *arg;
	} *cfg;
	size_t n_cfg;
};

static int
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

static void
free_opts(struct opts *o)
{
	free(o->inputs);
	free(o->cfg);
}

static void
print_manifest_error(const struct tm_error *e)
{
	say(stderr, "%s", e->msg);
	if (e->hint[0])
		say(stderr, "hint (tracemerge, not trace_processor): %s", e->hint);
}

/* The one rule for output files (tm_output): the inputs never written
 * over, nor a special file; an existing file only with --force.  Asked
 * before any work, so that a refusal costs nothing; 0 or the exit status. */
static int
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

static void
say_stale(const char *path, unsigned n)
{
	if (n)
		say(stderr, "tracemerge: removed %u stale temp file%s beside %s (left by an "
			    "interrupted write)", n, n == 1 ? "" : "s", path);
}

/* Write a manifest (align -o) under the rule; 0 or the exit status. */
static int
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
static void
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
static int
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

/* ------------------------------------------------------------------ */
/* ls                                                                  */
/* ------------------------------------------------------------------ */

static int
cmd_ls(int argc, char **argv)
{
	struct opts o;
	int rc = parse_opts(argc, argv, &o, false);
	if (rc) {
		free_opts(&o);
		return rc;
	}
	struct tm_session *s;
	struct tm_error e;
	if (tm_session_open(&s, o.inputs, o.n_inputs, NULL, &e) != TM_OK) {
		say(stderr, "tracemerge: %s", e.msg);
		free_opts(&o);
		return EXIT_BROKEN;
	}
	size_t n = tm_session_n_members(s);
	if (o.json) {
		struct tm_buf b;
		tm_buf_init(&b);
		tm_buf_adds(&b, "{\"members\":[");
		for (size_t i = 0; i < n; i++) {
			const struct tm_member *m = tm_session_member(s, i);
			bool first = true;
			tm_buf_adds(&b, i ? ",{" : "{");
			kv_str(&b, &first, "name", m->name);
			kv_str(&b, &first, "trace_type", tm_format_name(m->format));
			kv_u64(&b, &first, "size", m->size != UINT64_MAX, m->size);
			kv_u64(&b, &first, "stored_size", m->stored_size != UINT64_MAX, m->stored_size);
			kv_u64(&b, &first, "id", m->trace_file_id != UINT32_MAX, m->trace_file_id);
			kv_u64(&b, &first, "processing_order", m->order != UINT32_MAX, m->order);
			kv_int(&b, &first, "priority", true, m->priority);
			kv_bool(&b, &first, "hidden", m->is_hidden);
			kv_bool(&b, &first, "container", tm_format_is_container(m->format));
			kv_int(&b, &first, "parent", true, m->parent);
			kv_str(&b, &first, "error", m->error);
			tm_buf_addc(&b, '}');
		}
		const char *fw, *ft = tm_session_fatal(s, &fw);
		tm_buf_adds(&b, "],\"error\":");
		json_str(&b, ft);
		tm_buf_adds(&b, ",\"error_where\":");
		json_str(&b, fw);
		tm_buf_adds(&b, "}\n");
		out_puts(b.data, stdout);
		tm_buf_fini(&b);
	} else {
		say(stdout, "%5s %4s %-18s %12s  %s", "ORDER", "ID", "FORMAT", "SIZE", "NAME");
		for (size_t i = 0; i < n; i++) {
			const struct tm_member *m = tm_session_member(s, i);
			char ord[16] = "-", id[16] = "-";
			if (m->order != UINT32_MAX)
				snprintf(ord, sizeof ord, "%" PRIu32, m->order);
			if (m->trace_file_id != UINT32_MAX)
				snprintf(id, sizeof id, "%" PRIu32, m->trace_file_id);
			char sz[24] = "?"; /* unknown until the stream is read */
			if (m->size != UINT64_MAX)
				snprintf(sz, sizeof sz, "%" PRIu64, m->size);
			say_part(stdout, "%5s %4s %-18s %12s  ", ord, id, tm_format_name(m->format), sz);
			if (m->name) { /* "" as the engine labels it */
				struct tm_buf lb;
				tm_buf_init(&lb);
				tm_session_member_label(s, i, &lb);
				say_part(stdout, "%s", lb.data);
				tm_buf_fini(&lb);
			} else {
				fputs("(input)", stdout);
			}
			if (m->is_hidden)
				fputs("  [hidden: skipped by trace_processor]", stdout);
			if (m->error)
				say_part(stdout, "  [error: %s]", m->error);
			putchar('\n');
		}
	}
	/* the listing itself fails in trace_processor: say so, exit 2 */
	const char *where, *fatal = tm_session_fatal(s, &where);
	size_t n_err = 0;
	for (size_t i = 0; i < n; i++)
		n_err += tm_session_member(s, i)->error != NULL;
	if (fatal) {
		say(stderr, "tracemerge: the archive would fail to open: %s", fatal);
		if (where)
			say(stderr, "where (tracemerge): %s", where);
		rc = EXIT_BROKEN;
	} else if (n_err) {
		/* a member that cannot be read is not a clean listing: exit 2
		 * as check does, which says what it means for the import */
		say(stderr, "tracemerge: %zu member%s cannot be read as listed ([error: ...]); "
			    "`tracemerge check` says what it means for the import",
		    n_err, n_err == 1 ? "" : "s");
		rc = EXIT_BROKEN;
	}
	tm_session_close(s);
	free_opts(&o);
	return rc;
}

/* ------------------------------------------------------------------ */
/* check                                                               */
/* ------------------------------------------------------------------ */

/* A stat list as a JSON object of name: value. */
static void
json_stats(struct tm_buf *b, const struct tm_stat *st, size_t n)
{
	tm_buf_addc(b, '{');
	for (size_t i = 0; i < n; i++) {
		if (i)
			tm_buf_addc(b, ',');
		json_str(b, st[i].name);
		tm_buf_addf(b, ":%" PRIu64, st[i].value);
	}
	tm_buf_addc(b, '}');
}

static void
print_check_json(struct tm_session *s, const struct tm_manifest *cur, const struct tm_report *r,
		 bool events)
{
	struct tm_buf b;
	tm_buf_init(&b);
	bool first = true;
	tm_buf_addc(&b, '{');
	kv_bool(&b, &first, "ok", r->ok);
	kv_str(&b, &first, "error", r->error);
	kv_bool(&b, &first, "error_is_ours", r->error && r->error_is_ours);
	kv_bool(&b, &first, "error_in_manifest", r->error && r->error_in_manifest);
	kv_str(&b, &first, "error_where", r->error_where);
	kv_str(&b, &first, "hint", r->hint);
	kv_u64(&b, &first, "dropped", true, r->dropped);
	kv_u64(&b, &first, "missing", true, r->missing);
	json_key(&b, &first, "missing_by_stat");
	json_stats(&b, r->missing_stats, r->n_missing_stats);
	kv_bool(&b, &first, "complete", r->is_complete);
	/* ours: whether the files' kept time ranges overlap */
	{
		const struct tm_overlap *ov = &r->overlap;
		bool two = ov->n_files >= 2;
		bool ff = true;
		json_key(&b, &first, "overlap");
		tm_buf_addc(&b, '{');
		kv_u64(&b, &ff, "files", true, ov->n_files);
		json_key(&b, &ff, "overlap");
		tm_buf_adds(&b, two ? (ov->overlap ? "true" : "false") : "null");
		kv_int(&b, &ff, "common_ns", two && ov->overlap, ov->common_ns);
		kv_int(&b, &ff, "gap_ns", two && !ov->overlap, ov->gap_ns);
		kv_str(&b, &ff, "ends_first",
		       two && !ov->overlap ? r->files[ov->ends_first].path : NULL);
		kv_str(&b, &ff, "starts_last",
		       two && !ov->overlap ? r->files[ov->starts_last].path : NULL);
		kv_str(&b, &ff, "text", ov->text);
		tm_buf_addc(&b, '}');
	}
	json_key(&b, &first, "stats");
	json_stats(&b, r->stats, r->n_stats);
	json_key(&b, &first, "trace_time");
	tm_buf_addf(&b, "{\"clock\":");
	json_str(&b, tm_clock_name(r->tt_clock));
	tm_buf_addf(&b, ",\"clock_id\":%" PRIu32 ",\"file\":", r->tt_clock);
	json_str(&b, r->tt_file >= 0 ? r->files[r->tt_file].path : NULL);
	/* the machine's name, and its table id */
	bool has_m = r->tt_machine >= 0 && (size_t)r->tt_machine < r->n_machines;
	tm_buf_adds(&b, ",\"machine\":");
	json_str(&b, has_m ? r->machines[r->tt_machine].name : NULL);
	tm_buf_adds(&b, ",\"machine_id\":");
	if (has_m)
		tm_buf_addf(&b, "%" PRId64, r->tt_machine);
	else
		tm_buf_adds(&b, "null");
	tm_buf_adds(&b, ",\"why\":");
	json_str(&b, r->tt_why);
	tm_buf_addc(&b, '}');
	json_key(&b, &first, "machines");
	tm_buf_addc(&b, '[');
	for (size_t i = 0; i < r->n_machines; i++) {
		tm_buf_addf(&b,
			    "%s{\"id\":%" PRIu32 ",\"raw_id\":%" PRIu64 ",\"label_index\":%" PRIu32
			    ",\"dropped\":%" PRIu64 ",\"name\":",
			    i ? "," : "", r->machines[i].id, r->machines[i].raw_id,
			    r->machines[i].label_index, r->machines[i].dropped);
		json_str(&b, r->machines[i].name);
		tm_buf_addc(&b, '}');
	}
	tm_buf_addc(&b, ']');
	json_key(&b, &first, "metadata");
	tm_buf_addc(&b, '{');
	for (size_t i = 0; i < r->n_meta; i++) {
		if (i)
			tm_buf_addc(&b, ',');
		json_str(&b, r->meta[i].key);
		tm_buf_addc(&b, ':');
		if (r->meta[i].is_int)
			tm_buf_addf(&b, "%" PRId64, r->meta[i].ival);
		else
			json_str(&b, r->meta[i].sval);
	}
	tm_buf_addc(&b, '}');
	json_key(&b, &first, "warnings");
	tm_buf_addc(&b, '[');
	for (size_t i = 0; i < r->n_warnings; i++) {
		if (i)
			tm_buf_addc(&b, ',');
		json_str(&b, r->warnings[i]);
	}
	tm_buf_addc(&b, ']');
	json_key(&b, &first, "files");
	tm_buf_addc(&b, '[');
	for (size_t i = 0; i < r->n_files; i++) {
		const struct tm_report_file *f = &r->files[i];
		bool ff = true;
		tm_buf_adds(&b, i ? ",{" : "{");
		kv_str(&b, &ff, "path", f->path);
		kv_str(&b, &ff, "format", tm_format_name(f->format));
		kv_u64(&b, &ff, "size", f->size != UINT64_MAX, f->size);
		kv_u64(&b, &ff, "order", f->order != UINT32_MAX, f->order);
		kv_bool(&b, &ff, "hidden", f->is_hidden);
		kv_bool(&b, &ff, "predicted", f->is_predicted);
		json_key(&b, &ff, "machines");
		tm_buf_addc(&b, '[');
		for (size_t k = 0; k < f->n_machines; k++)
			tm_buf_addf(&b, "%s%" PRIu32, k ? "," : "", f->machines[k]);
		tm_buf_addc(&b, ']');
		json_key(&b, &ff, "clocks");
		tm_buf_addc(&b, '[');
		for (size_t k = 0; k < f->n_clocks; k++) {
			if (k)
				tm_buf_addc(&b, ',');
			json_str(&b, tm_clock_name(f->clocks[k]));
		}
		tm_buf_addc(&b, ']');
		/* unpredicted formats: unknown, never 0 */
		bool known = !f->is_trace || f->is_predicted;
		kv_u64(&b, &ff, "events", known, f->events);
		kv_u64(&b, &ff, "dropped", known, f->dropped);
		kv_u64(&b, &ff, "missing", known, f->missing);
		json_key(&b, &ff, "missing_by_stat");
		json_stats(&b, f->missing_stats, f->n_missing_stats);
		kv_int(&b, &ff, "first_ts", f->has_ts, f->first_ts);
		kv_int(&b, &ff, "last_ts", f->has_ts, f->last_ts);
		kv_int(&b, &ff, "first_ts_with_dropped", f->has_all_ts, f->all_first_ts);
		json_key(&b, &ff, "stats");
		json_stats(&b, f->stats, f->n_stats);
		kv_str(&b, &ff, "placement", f->placement);
		tm_buf_addc(&b, '}');
	}
	tm_buf_addc(&b, ']');
	if (events) {
		json_key(&b, &first, "events");
		tm_buf_addc(&b, '[');
		for (size_t i = 0; i < r->n_events; i++) {
			const struct tm_report_event *e = &r->events[i];
			tm_buf_adds(&b, i ? ",{\"file\":" : "{\"file\":");
			json_str(&b, r->files[e->file].path);
			tm_buf_adds(&b, ",\"name\":");
			json_str(&b, e->name);
			tm_buf_addf(&b, ",\"ts\":%" PRId64 ",\"dur\":%" PRId64 ",\"machine\":%" PRIu32,
				    e->ts, e->dur, e->machine);
			char ph[2] = {e->phase, 0};
			tm_buf_adds(&b, ",\"phase\":");
			json_str(&b, e->phase ? ph : NULL);
			tm_buf_addf(&b, ",\"slice\":%s,\"dropped\":", e->is_slice ? "true" : "false");
			json_str(&b, tm_report_event_dropped(e));
			tm_buf_addc(&b, '}');
		}
		tm_buf_addc(&b, ']');
	}
	/* the fixes the text report prints as Fix: lines, each proven */
	json_key(&b, &first, "fixes");
	tm_buf_addc(&b, '[');
	struct tm_fixes fx;
	struct tm_error fe;
	memset(&fx, 0, sizeof fx);
	if (!r->ok && tm_fixes_suggest(s, cur, r, NULL, &fx, &fe) == TM_OK) {
		for (size_t i = 0; i < fx.n; i++) {
			bool f2 = true;
			tm_buf_adds(&b, i ? ",{" : "{");
			kv_str(&b, &f2, "file", fx.v[i].file);
			kv_str(&b, &f2, "what", fx.v[i].what);
			kv_str(&b, &f2, "why", fx.v[i].why);
			kv_str(&b, &f2, "verdict", fx.v[i].verdict);
			kv_bool(&b, &f2, "ok", fx.v[i].ok);
			kv_u64(&b, &f2, "dropped", true, fx.v[i].dropped);
			json_key(&b, &f2, "manifest");
			tm_manifest_emit(&fx.v[i].m, &b);
			tm_buf_addc(&b, '}');
		}
	}
	tm_fixes_fini(&fx);
	tm_buf_addc(&b, ']');
	tm_buf_adds(&b, "}\n");
	out_puts(b.data, stdout);
	tm_buf_fini(&b);
}

static void
put_machine(const struct tm_report *r, uint32_t id)
{
	const struct tm_report_machine *m = &r->machines[id];
	say_part(stdout, "machine %" PRIu32, m->id);
	if (m->name)
		say_part(stdout, " \"%s\"", m->name);
	if (m->raw_id)
		say_part(stdout, " (raw id %" PRIu64 ")", m->raw_id);
}

/* A file's label, as the engine's reports name it (tm_session_member_label).
 * One at a time: the buffer is reused. */
static const char *
file_label(const struct tm_session *s, const struct tm_report_file *f)
{
	static struct tm_buf lb; /* printed through say(), which escapes */
	tm_buf_reset(&lb);
	tm_session_member_label(s, f->member, &lb);
	return lb.data ? lb.data : "";
}

/* The trace files that trace_processor processes, in its processing order:
 * a counting sort over the orders (linear in the files; ties keep report
 * order).  Returns the count; *out is the caller's to free. */
static size_t
files_in_order(const struct tm_report *r, size_t **out)
{
	size_t nb = r->n_files + 1, n = 0;
	size_t *start = calloc(nb + 1, sizeof *start);
	size_t *idx = malloc((r->n_files ? r->n_files : 1) * sizeof *idx);
	if (!start || !idx)
		abort();
	for (size_t i = 0; i < r->n_files; i++) {
		const struct tm_report_file *f = &r->files[i];
		if (f->is_trace && f->order < nb)
			start[f->order + 1]++;
	}
	for (size_t k = 0; k < nb; k++)
		start[k + 1] += start[k];
	for (size_t i = 0; i < r->n_files; i++) {
		const struct tm_report_file *f = &r->files[i];
		if (f->is_trace && f->order < nb) {
			idx[start[f->order]++] = i;
			n++;
		}
	}
	free(start);
	*out = idx;
	return n;
}

/* Text report: the verdict in the dialog's words, then drops by file, by
 * machine and by stat, the timeline's owner and why, and what is not
 * predicted.  Lines marked (tracemerge) are ours, not trace_processor's. */
static void
print_check_text(const struct tm_session *s, const struct tm_report *r)
{
	struct tm_buf b;
	tm_buf_init(&b);
	tm_report_verdict(r, &b);
	say(stdout, "%s", b.data);
	tm_buf_fini(&b);
	if (r->error_where)
		say(stdout, "where (tracemerge): %s", r->error_where);
	if (r->hint)
		say(stdout, "hint (tracemerge, not trace_processor): %s", r->hint);
	puts("\nfiles, in trace_processor's processing order:");
	size_t *order;
	size_t n_order = files_in_order(r, &order);
	for (size_t oi = 0; oi < n_order; oi++) {
		const struct tm_report_file *f = &r->files[order[oi]];
		say_part(stdout, "  %-10s %s", tm_format_name(f->format), file_label(s, f));
		if (f->is_predicted)
			say_part(stdout, ": %" PRIu64 " event%s, %" PRIu64 " dropped, %" PRIu64 " missing",
				 f->events, f->events == 1 ? "" : "s", f->dropped, f->missing);
		else
			fputs(": events not predicted (format not scanned by tracemerge)", stdout);
		for (size_t k = 0; k < f->n_machines; k++) {
			fputs(k ? ", " : ", on ", stdout);
			put_machine(r, f->machines[k]);
		}
		putchar('\n');
		for (size_t k = 0; k < f->n_stats; k++)
			say(stdout, "      %s %" PRIu64, f->stats[k].name, f->stats[k].value);
		if (f->placement)
			say(stdout, "      (tracemerge) %s", f->placement);
	}
	free(order);
	if (r->dropped) {
		puts("dropped by machine:");
		for (size_t i = 0; i < r->n_machines; i++) {
			if (!r->machines[i].dropped)
				continue;
			fputs("  ", stdout);
			put_machine(r, r->machines[i].id);
			say(stdout, ": %" PRIu64, r->machines[i].dropped);
		}
		puts("dropped by stat:");
		for (size_t i = 0; i < r->n_stats; i++)
			if (tm_stat_is_drop(r->stats[i].id))
				say(stdout, "  %s %" PRIu64, r->stats[i].name, r->stats[i].value);
	}
	if (r->missing) {
		puts("missing from the merged trace (tracemerge), by stat:");
		for (size_t i = 0; i < r->n_missing_stats; i++)
			say(stdout, "  %s %" PRIu64, r->missing_stats[i].name, r->missing_stats[i].value);
	}
	say_part(stdout, "timeline: %s", tm_clock_name(r->tt_clock));
	if (r->tt_machine >= 0 && (size_t)r->tt_machine < r->n_machines) {
		fputs(" on ", stdout);
		put_machine(r, (uint32_t)r->tt_machine);
	}
	if (r->tt_file >= 0)
		say_part(stdout, ", owned by %s", file_label(s, &r->files[r->tt_file]));
	putchar('\n');
	if (r->tt_why)
		say(stdout, "  (tracemerge) %s", r->tt_why);
	if (r->overlap.text)
		say(stdout, "%s (tracemerge): %s", r->overlap.overlap ? "overlap" : "warning",
		    r->overlap.text);
	if (!r->is_complete)
		puts("note (tracemerge): some files are in formats whose events tracemerge does not "
		     "predict; their drops are not counted above.");
	for (size_t i = 0; i < r->n_warnings; i++)
		say(stdout, "warning (tracemerge): %s", r->warnings[i]);
}

/* 0 only for a clean merge: nothing dropped and every file predicted.
 * --strict also fails on tracemerge's own warnings. */
static int
exit_for(const struct tm_report *r, bool strict)
{
	if (r->error)
		return EXIT_BROKEN;
	if (!r->ok)
		return EXIT_DROPS;
	if (strict && r->n_warnings)
		return EXIT_DROPS;
	return 0;
}

/* Fixes the engine proved: each was evaluated and helps (fixes.c). */
static void
print_fixes(struct tm_session *s, const struct tm_manifest *cur)
{
	struct tm_fixes fx;
	struct tm_error e;
	if (tm_fixes_suggest(s, cur, NULL, NULL, &fx, &e) != TM_OK || !fx.n) {
		if (fx.n == 0)
			tm_fixes_fini(&fx);
		return;
	}
	printf("\nFixes (tracemerge, each evaluated before it is offered):\n");
	for (size_t i = 0; i < fx.n && i < 3; i++) {
		char *w = tm_escape_str(fx.v[i].what), *why = tm_escape_str(fx.v[i].why);
		printf("  Fix: %s\n    predicted: %s\n    why: %s\n", w, fx.v[i].verdict, why);
		free(w);
		free(why);
	}
	tm_fixes_fini(&fx);
}

static int
cmd_check(int argc, char **argv)
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
	struct tm_error merr;
	tm_error_clear(&merr);
	rc = open_all(&o, &s, &m, &have_m, o.events, &merr);
	bool in_manifest = merr.code == TM_ERR_MANIFEST;
	if (rc && merr.code != TM_OK && (in_manifest || o.json)) {
		/* The archive we would write fails to open: as trace_processor
		 * reports it, in the one JSON object or the text verdict; an
		 * input that cannot be read (ours: said on stderr too) is one
		 * JSON object as well. */
		if (o.json) {
			struct tm_buf b, w;
			tm_buf_init(&b);
			tm_buf_init(&w);
			if (in_manifest)
				tm_buf_addf(&w, "Trace parse failure: %s (ERR:tp-parse)", merr.msg);
			else
				tm_buf_adds(&w, merr.msg);
			bool first = true;
			tm_buf_addc(&b, '{');
			kv_bool(&b, &first, "ok", false);
			kv_str(&b, &first, "error", w.data);
			kv_bool(&b, &first, "error_is_ours", !in_manifest);
			kv_bool(&b, &first, "error_in_manifest", in_manifest);
			kv_str(&b, &first, "error_where", in_manifest ? o.manifest_path : NULL);
			kv_str(&b, &first, "hint", merr.hint[0] ? merr.hint : NULL);
			kv_u64(&b, &first, "dropped", true, 0);
			kv_bool(&b, &first, "complete", false);
			tm_buf_adds(&b, ",\"stats\":{},\"machines\":[],\"metadata\":{},\"warnings\":[],"
					"\"files\":[],\"fixes\":[]}\n");
			out_puts(b.data, stdout);
			tm_buf_fini(&b);
			tm_buf_fini(&w);
		} else {
			print_manifest_error(&merr);
		}
	}
	if (rc) {
		if (s)
			tm_manifest_fini(&m);
		tm_session_close(s);
		free_opts(&o);
		return rc;
	}
	struct tm_report *r;
	struct tm_error e;
	if (tm_session_evaluate(s, have_m ? &m : NULL, &r, &e) != TM_OK) {
		say(stderr, "tracemerge: %s", e.msg);
		rc = EXIT_BROKEN;
	} else {
		say_cache_note(s);
		if (o.json) {
			print_check_json(s, have_m ? &m : tm_session_manifest(s, NULL), r, o.events);
		} else {
			print_check_text(s, r);
			if (!r->ok)
				print_fixes(s, have_m ? &m : tm_session_manifest(s, NULL));
		}
		struct tm_pack_check pc;
		tm_pack_check(s, have_m ? &m : NULL, &pc);
		const struct tm_pack_issue *refusal = tm_pack_refusal(&pc);
		if (refusal)
			say(stderr, "note: trace_processor util merge would refuse these inputs: %s",
			    refusal->msg);
		tm_pack_check_fini(&pc);
		rc = exit_for(r, o.strict);
		tm_report_free(r);
	}
	tm_manifest_fini(&m);
	tm_session_close(s);
	free_opts(&o);
	return rc;
}

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

static int
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

static int
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

static int
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

/* A report that could not be written is a failure, never exit 0 with a
 * truncated report: stdio's error flag is sticky, so checking it after the
 * final flush and close covers every write before them. */
static int
finish_stdout(int rc)
{
	errno = 0;
	bool bad = fflush(stdout) != 0;
	int e = errno;
	bad |= ferror(stdout) != 0;
	errno = 0;
	if (fclose(stdout) != 0 && !bad) {
		bad = true;
		e = errno;
	}
	if (!bad)
		return rc;
	if (stdout_errno)
		e = stdout_errno;
	say(stderr, "tracemerge: cannot write to standard output: %s",
	    e ? strerror(e) : "write error");
	return rc > EXIT_DROPS ? rc : EXIT_BROKEN;
}

/* Last words on out of memory (the engine aborts after this): what ran out,
 * with write(2) only, since malloc is what failed. */
static void
say_oom(size_t bytes)
{
	char msg[128], num[32];
	size_t n = 0, k = 0;
	const char *a = "tracemerge: out of memory (could not allocate ";
	const char *b = bytes == SIZE_MAX ? "a block whose size overflows" : NULL;

	for (; a[k]; k++)
		msg[n++] = a[k];
	if (b) {
		for (k = 0; b[k]; k++)
			msg[n++] = b[k];
	} else {
		size_t v = bytes, d = 0;
		do
			num[d++] = (char)('0' + v % 10);
		while ((v /= 10) && d < sizeof num);
		while (d)
			msg[n++] = num[--d];
		for (k = 0; " bytes"[k]; k++)
			msg[n++] = " bytes"[k];
	}
	msg[n++] = ')';
	msg[n++] = '\n';
	ssize_t w = write(2, msg, n);
	(void)w;
}

int
main(int argc, char **argv)
{
	tm_set_oom_hook(say_oom);
	/* A file size limit (ulimit -f) makes write() fail with EFBIG: the
	 * writer removes its temp file and says so, instead of a silent
	 * death by SIGXFSZ that leaves the temp file behind. */
	signal(SIGXFSZ, SIG_IGN);
	if (argc >= 2) {
		const char *c = argv[1];
		if (!strcmp(c, "ls"))
			return finish_stdout(cmd_ls(argc - 2, argv + 2));
		if (!strcmp(c, "check"))
			return finish_stdout(cmd_check(argc - 2, argv + 2));
		if (!strcmp(c, "manifest"))
			return finish_stdout(cmd_manifest(argc - 2, argv + 2));
		if (!strcmp(c, "merge"))
			return finish_stdout(cmd_merge(argc - 2, argv + 2));
		if (!strcmp(c, "align"))
			return finish_stdout(cmd_align(argc - 2, argv + 2));
		if (!strcmp(c, "demo")) {
			/* "--demo" plus any workbench options that follow */
			argv[1] = (char *)(uintptr_t) "--demo";
			return workbench_main(argc - 1, argv + 1);
		}
		if (!strcmp(c, "--version") || !strcmp(c, "version")) {
			say(stdout, "tracemerge %s", TM_VERSION);
			return 0;
		}
		if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
			fputs(usage_text, stdout);
			return 0;
		}
	}
	/* Not a terminal (a pipe, CI, ssh without -t) and only paths given:
	 * the check report and its status instead of curses drawn into a pipe. */
	if (argc >= 2 && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) &&
	    !(getenv("TM_HEADLESS") && strcmp(getenv("TM_HEADLESS"), "0") != 0) &&
	    !getenv("TM_SCRIPT")) {
		bool paths_only = true;
		for (int i = 1; i < argc; i++)
			paths_only &= argv[i][0] != '-' || !strcmp(argv[i], "--no-cache");
		if (paths_only) {
			fprintf(stderr, "tracemerge: not a terminal: the check report follows "
					"(the workbench needs a terminal)\n");
			return cmd_check(argc - 1, argv + 1);
		}
	}
	return workbench_main(argc - 1, argv + 1);
}

/* SPDX-License-Identifier: MIT */
/*
 * tracemerge ls: the members of the inputs, as trace_processor would see
 * them (text or --json).
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
/* ls                                                                  */
/* ------------------------------------------------------------------ */

int
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


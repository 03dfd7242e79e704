/* SPDX-License-Identifier: MIT */
/*
 * Text for the panes, built from the model and measured, never drawn: the
 * selected file's details, the verdict, the timeline owner and tracemerge's
 * warnings as paragraphs with a role each, wrapped at a width into line
 * spans (columns, not bytes) of already-escaped text; and the small
 * formatters the list and the timeline share.  Untrusted strings are escaped
 * here with tm_escape_display before they reach any line.
 */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>

#include "wb.h"

/* Columns of one UTF-8 character of already-escaped (printable) text. */
int
text_char_cols(const char *p, size_t n)
{
	struct tm_buf b;
	char tmp[8] = "a";
	size_t w;

	if (n == 1)
		return 1;
	memcpy(tmp + 1, p, n);
	tm_buf_init(&b);
	w = tm_escape_display(tmp, n + 1, &b, NULL, 0, NULL);
	tm_buf_fini(&b);
	return w > 0 ? (int)w - 1 : 0;
}

size_t
text_utf8_len(const char *p, size_t n)
{
	size_t k = tm_utf8_len(p, n);
	return k ? k : 1;
}

char *
text_escape_cols(const char *s, int max_cols)
{
	struct tm_buf b, out;
	size_t i = 0;
	int used = 0;

	tm_buf_init(&b);
	tm_buf_init(&out);
	tm_escape_display(s ? s : "", s ? strlen(s) : 0, &b, NULL, 0, NULL);
	while (b.data && i < b.len) {
		size_t n = text_utf8_len(b.data + i, b.len - i);
		int w = text_char_cols(b.data + i, n);
		if (used + w > max_cols) {
			tm_buf_adds(&out, "...");
			break;
		}
		tm_buf_add(&out, b.data + i, n);
		used += w;
		i += n;
	}
	tm_buf_fini(&b);
	return tm_buf_steal(&out);
}

/* n bytes for a column; UINT64_MAX is a size not known yet (an inflated
 * stream not scanned to its end: tm_member.size) */
void
text_fmt_size(uint64_t n, char *buf, size_t len)
{
	if (n == UINT64_MAX)
		snprintf(buf, len, "?");
	else if (n < 1024)
		snprintf(buf, len, "%llu B", (unsigned long long)n);
	else if (n < 1024 * 1024)
		snprintf(buf, len, "%.1f KiB", (double)n / 1024.0);
	else if (n < 1024ull * 1024 * 1024)
		snprintf(buf, len, "%.1f MiB", (double)n / (1024.0 * 1024.0));
	else
		snprintf(buf, len, "%.1f GiB", (double)n / (1024.0 * 1024.0 * 1024.0));
}

void
text_fmt_dur(int64_t ns, char *buf, size_t len)
{
	struct tm_buf b;

	tm_buf_init(&b);
	tm_format_duration_ns(ns, &b);
	snprintf(buf, len, "%s", b.data ? b.data : "");
	tm_buf_fini(&b);
}

bool
text_is_wall_clock(const struct tm_report *r)
{
	return r && (r->tt_clock == TM_CLOCK_REALTIME || r->tt_clock == TM_CLOCK_REALTIME_COARSE);
}

/* A trace time: under REALTIME the wall-clock date and time of day (local
 * time, the zone named), else the offset from zero ("+40 ms").  with_date
 * false leaves the date out (the second end of a range on the same day). */
static void
fmt_ts(const struct tm_report *r, int64_t ns, bool with_date, char *buf, size_t len)
{
	if (!text_is_wall_clock(r) || ns < 0) {
		text_fmt_dur(ns, buf, len);
		return;
	}
	time_t sec = (time_t)(ns / 1000000000);
	long frac = (long)(ns % 1000000000);
	struct tm tmv;
	char d[64], z[16], f[16] = "";
	if (!localtime_r(&sec, &tmv)) {
		text_fmt_dur(ns, buf, len);
		return;
	}
	strftime(d, sizeof d, with_date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tmv);
	strftime(z, sizeof z, "%Z", &tmv);
	if (frac % 1000000 == 0 && frac)
		snprintf(f, sizeof f, ".%03ld", frac / 1000000);
	else if (frac % 1000 == 0 && frac)
		snprintf(f, sizeof f, ".%06ld", frac / 1000);
	else if (frac)
		snprintf(f, sizeof f, ".%09ld", frac);
	snprintf(buf, len, "%s%s%s%s", d, f, z[0] ? " " : "", z);
}

bool
text_fmt_clock(const struct tm_report *r, int64_t ns, bool with_date, char *buf, size_t len)
{
	if (!text_is_wall_clock(r) || ns < 0)
		return false;
	time_t sec = (time_t)(ns / 1000000000);
	struct tm tmv;
	char d[64], z[16];
	if (!localtime_r(&sec, &tmv))
		return false;
	strftime(d, sizeof d, with_date ? "%Y-%m-%d %H:%M:%S" : "%m-%d %H:%M:%S", &tmv);
	strftime(z, sizeof z, "%Z", &tmv);
	snprintf(buf, len, "%s.%09ld%s%s", d, (long)(ns % 1000000000), with_date && z[0] ? " " : "",
		 with_date ? z : "");
	return true;
}

void
text_clock_zone(const struct tm_report *r, int64_t ns, char *buf, size_t len)
{
	time_t sec = (time_t)((ns > 0 ? ns : 0) / 1000000000);
	struct tm tmv;
	buf[0] = 0;
	if (text_is_wall_clock(r) && localtime_r(&sec, &tmv))
		strftime(buf, len, "%Z", &tmv);
}

void
text_fmt_range(const struct tm_report *r, int64_t a, int64_t b, char *buf, size_t len)
{
	char x[96], y[96];
	bool wall = text_is_wall_clock(r) && a >= 0 && b >= 0;
	if (wall) {
		/* the date once when both ends are on the same day; the zone
		 * once, at the end */
		time_t sa = (time_t)(a / 1000000000), sb = (time_t)(b / 1000000000);
		struct tm ta, tb;
		bool same_day = localtime_r(&sa, &ta) && localtime_r(&sb, &tb) &&
				ta.tm_year == tb.tm_year && ta.tm_yday == tb.tm_yday;
		fmt_ts(r, a, true, x, sizeof x);
		char *zone = strrchr(x, ' ');
		if (zone && zone > strchr(x, ' '))
			*zone = 0; /* the zone once, after the second end */
		fmt_ts(r, b, !same_day, y, sizeof y);
	} else {
		fmt_ts(r, a, true, x, sizeof x);
		fmt_ts(r, b, true, y, sizeof y);
	}
	snprintf(buf, len, "%s .. %s", x, y);
}

/* Decimals that resolve res in a value counted in unit. */
static int
decimals(double unit, double res)
{
	int d = 0;
	while (d < 9 && unit > res * 1.0000001) {
		unit /= 10.0;
		d++;
	}
	return d;
}

void
text_fmt_window(const struct tm_report *r, double a, double b, char *buf, size_t len)
{
	double res = (b - a) / 100.0; /* about a column of a wide strip */
	if (res < 1.0)
		res = 1.0;
	if (text_is_wall_clock(r) && a >= 0.0) {
		char x[96], y[96], z[16];
		time_t sa = (time_t)(a / 1e9), sb = (time_t)(b / 1e9);
		struct tm ta, tb;
		if (localtime_r(&sa, &ta) && localtime_r(&sb, &tb)) {
			int d = decimals(1e9, res);
			bool same_day = ta.tm_year == tb.tm_year && ta.tm_yday == tb.tm_yday;
			strftime(x, sizeof x, "%Y-%m-%d %H:%M:%S", &ta);
			strftime(y, sizeof y, same_day ? "%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &tb);
			strftime(z, sizeof z, "%Z", &tb);
			double fa = (a - (double)sa * 1e9) / 1e9, fb = (b - (double)sb * 1e9) / 1e9;
			char pa[16] = "", pb[16] = "";
			if (d) {
				snprintf(pa, sizeof pa, "%.*f", d, fa < 0.9999999995 ? fa : 0.9999999995);
				snprintf(pb, sizeof pb, "%.*f", d, fb < 0.9999999995 ? fb : 0.9999999995);
			}
			snprintf(buf, len, "%s%s .. %s%s %s", x, d ? pa + 1 : "", y, d ? pb + 1 : "", z);
			return;
		}
	}
	double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
	double unit = m >= 1e9 ? 1e9 : m >= 1e6 ? 1e6 : m >= 1e3 ? 1e3 : 1.0;
	const char *u = unit == 1e9 ? "s" : unit == 1e6 ? "ms" : unit == 1e3 ? "us" : "ns";
	int d = decimals(unit, res);
	snprintf(buf, len, "%+.*f .. %+.*f %s", d, a / unit, d, b / unit, u);
}

void
text_align(const struct wb_model *m, const char *path, char *buf, size_t len)
{
	const struct tm_manifest_file *f = model_manifest_file(m, path);
	char d[64];

	if (!f || !f->has_clocks) {
		snprintf(buf, len, "auto");
		return;
	}
	text_fmt_dur(f->clocks.offset_ns, d, sizeof d);
	snprintf(buf, len, "%s", d);
}

const char *
text_machine(const struct wb_model *m, const char *path)
{
	const struct tm_manifest_file *f = model_manifest_file(m, path);

	if (!f)
		return "Default";
	if (f->machine_name)
		return f->machine_name[0] ? f->machine_name : "(unnamed)";
	if (f->has_machines)
		return "(by id)";
	return "Default";
}

/* A trace file gets a bar even when the import stops before reaching it
 * (is_trace is then false): not a container, manifest or hidden member. */
bool
text_is_timeline_file(const struct tm_report_file *rf)
{
	if (!rf)
		return false;
	if (rf->is_trace)
		return true;
	return !rf->is_hidden && rf->format != TM_FMT_UNKNOWN && rf->format != TM_FMT_MANIFEST &&
	       !tm_format_is_container(rf->format);
}

/* The report's trace files, in list order (the timeline's rows). */
size_t
text_timeline_rows(const struct wb_model *m, size_t *rows, size_t max)
{
	size_t k = 0;

	for (size_t row = 0; row < model_n_rows(m) && k < max; row++) {
		if (text_is_timeline_file(model_row_file(m, row)))
			rows[k++] = row;
	}
	return k;
}

bool
text_member_is_trace(const struct tm_member *mb)
{
	return mb && mb->format != TM_FMT_MANIFEST && !mb->is_hidden &&
	       !tm_format_is_container(mb->format);
}

/* Thousands separators, as the dialog's toLocaleString() shows N. */
static void
fmt_count(uint64_t n, char *buf, size_t len)
{
	char d[32];
	size_t k = (size_t)snprintf(d, sizeof d, "%llu", (unsigned long long)n), o = 0;

	for (size_t i = 0; i < k && o + 2 < len; i++) {
		if (i > 0 && (k - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = 0;
}

static const char *
machine_row_name(const struct wb_model *m, uint32_t id)
{
	for (size_t k = 0; m->rep && k < m->rep->n_machines; k++)
		if (m->rep->machines[k].id == id)
			return m->rep->machines[k].name;
	return NULL;
}

/* A member name cut to about max_len bytes (at a character boundary, "..."
 * marking the cut; the list and the details show it in full) for
 * sentences; escaped later when drawn.  Caller frees. */
char *
text_short_name(const char *s, size_t max_len)
{
	size_t len = strlen(s), n = 0;
	char *out;

	if (len <= max_len)
		return strdup(s);
	while (n < len) {
		size_t k = text_utf8_len(s + n, len - n);
		if (n + k > max_len)
			break;
		n += k;
	}
	out = malloc(n + 4);
	if (!out)
		abort();
	memcpy(out, s, n);
	memcpy(out + n, "...", 4);
	return out;
}

/* The details of list row row, one paragraph each (wrapped when drawn). */
/* Which events of report file fi are dropped (the per-event details:
 * computed after the numbers, on a thread of their own; until they are in,
 * the paragraph says so, never what the last edit's were). */
static void
text_dropped_events(const struct wb_model *m, size_t fi, struct wb_paras *ps)
{
	const struct wb_file_details *fd = model_file_details(m, fi);
	struct tm_buf *b;
	char a[64];

	if (!m->det.ready) {
		b = text_para_add(ps, ROLE_DIM);
		tm_buf_adds(b, "Missing events: computing details...");
		return;
	}
	if (m->det.error || !fd) {
		b = text_para_add(ps, ROLE_DIM);
		tm_buf_addf(b, "Missing events: not available (%s).",
			    m->det.error ? m->det.error : "no details");
		return;
	}
	b = text_para_add(ps, ROLE_DEFAULT);
	if (!fd->n_dropped) {
		tm_buf_adds(b, "Missing events: none listed (its scanner keeps no per-event "
			       "details for what is counted).");
		return;
	}
	/* the engine's figure (each missing event is listed: the two agree) */
	tm_buf_addf(b, "Missing events (%llu):", (unsigned long long)m->rep->files[fi].missing);
	for (size_t k = 0; k < fd->n_first; k++) {
		const struct wb_dropped_event *e = &fd->first[k];
		char *nm = text_short_name(e->name ? e->name : "(no name)", 40);
		bool neg = !strcmp(e->why, tm_stat_name(TM_STAT_NEG_DROPPED));
		bool trace_time = neg || !strcmp(e->why, tm_stat_name(TM_STAT_TE_INVALID_TS));
		if (trace_time) {
			text_fmt_dur(e->ts, a, sizeof a);
			tm_buf_addf(b, "%s %s at %s", k ? "," : "", nm, a);
		} else { /* not converted: the file's own timestamp */
			tm_buf_addf(b, "%s %s, raw ts %lld", k ? "," : "", nm, (long long)e->ts);
		}
		/* the reason after each run of events that share it */
		bool more = k + 1 < fd->n_first;
		if (!more || strcmp(fd->first[k + 1].why, e->why))
			tm_buf_addf(b, " (%s)", neg ? "before zero" : e->why);
		free(nm);
	}
	if (fd->n_dropped > fd->n_first)
		tm_buf_addf(b, ", and %llu more", (unsigned long long)(fd->n_dropped - fd->n_first));
	tm_buf_adds(b, ".");
}

void
text_details(const struct wb_model *m, size_t row, struct wb_paras *ps, bool full_name)
{
	size_t n = model_n_rows(m);
	const struct tm_report_file *rf;
	const struct tm_member *mb;
	const struct tm_manifest_file *f;
	const char *name;
	struct tm_buf *b;
	char tmp[64], a[160], c[64];

	if (n == 0)
		return;
	name = model_member_name(m, model_row_member(m, row));
	mb = tm_session_member(m->s, model_row_member(m, row));
	rf = model_row_file(m, row);
	f = model_manifest_file(m, name);
	if (full_name) {
		b = text_para_add(ps, ROLE_DEFAULT);
		tm_buf_addf(b, "name: %s", name);
	}
	if (mb && mb->error) {
		b = text_para_add(ps, ROLE_ERROR);
		tm_buf_addf(b, "error: %s", mb->error);
	}
	char *problem = model_member_problem(m, row);
	if (problem) {
		b = text_para_add(ps, ROLE_ERROR);
		tm_buf_addf(b, "cannot be written as it is: %s", problem);
		free(problem);
	}
	if (!rf) {
		b = text_para_add(ps, ROLE_DIM);
		tm_buf_adds(b, m->worker_running ? "Analyzing..." : "not evaluated");
		return;
	}
	/* For a file that drops: how many, the cause and the fix, first. */
	if (rf->dropped || rf->missing) {
		uint64_t neg = tm_stat_value(rf->stats, rf->n_stats, TM_STAT_NEG_DROPPED);
		uint64_t nopath = tm_stat_value(rf->stats, rf->n_stats, TM_STAT_NO_PATH) +
				  tm_stat_value(rf->stats, rf->n_stats, TM_STAT_UNRELATABLE);
		bool same = tm_report_missing_is_dropped(m->rep);
		const char *sep = same ? " (" : " (trace_processor's count: ";
		b = text_para_add(ps, ROLE_WARNING);
		if (rf->dropped)
			tm_buf_addf(b, "Drops %llu", (unsigned long long)rf->dropped);
		for (size_t i = 0; rf->dropped && i < rf->n_stats; i++) {
			if (!tm_stat_is_drop(rf->stats[i].id))
				continue;
			tm_buf_addf(b, "%s%s %llu", sep, rf->stats[i].name,
				    (unsigned long long)rf->stats[i].value);
			sep = ", ";
		}
		if (sep[0] == ',')
			tm_buf_adds(b, ")");
		if (neg && rf->has_all_ts && rf->all_first_ts < 0) {
			text_fmt_dur(rf->all_first_ts, a, sizeof a);
			if (f && f->has_clocks && f->clocks.offset_ns < 0) {
				text_fmt_dur(f->clocks.offset_ns, c, sizeof c);
				tm_buf_addf(b, ": the offset %s puts them before zero (from %s).", c,
					    a);
			} else {
				tm_buf_addf(b, ": they land before zero (from %s).", a);
			}
		} else if (neg) {
			tm_buf_adds(b, ": they land before zero.");
		}
		if (nopath)
			tm_buf_adds(b, "; its clocks have no path to the timeline's clock.");
		if (!same) {
			/* the events missing, beside trace_processor's count */
			tm_buf_adds(b, rf->dropped ? " " : "");
			tm_missing_sentence(rf->dropped, rf->missing, rf->missing_stats,
					    rf->n_missing_stats, b);
		}
	}
	/* The fixes the engine proved (each evaluated: its verdict is what
	 * check predicts after it); f applies the first, :fix N another. */
	for (size_t k = 0;; k++) {
		const struct tm_fix *fx = model_fix(m, name, k);
		if (!fx)
			break;
		b = text_para_add(ps, fx->ok ? ROLE_OK : ROLE_INFO);
		if (k == 0)
			tm_buf_addf(b, "Fix (%s; checked by tracemerge): %s -> %s (%s)",
				    model_key(m, REQ_FIX), fx->what, fx->verdict, fx->why);
		else
			tm_buf_addf(b, "Fix %zu (:fix %zu): %s -> %s (%s)", k + 1, k + 1, fx->what,
				    fx->verdict, fx->why);
	}
	if (rf->dropped && !model_fix(m, name, 0)) {
		b = text_para_add(ps, ROLE_DIM);
		tm_buf_addf(b, "No single edit tracemerge tries makes it better (%s solves the whole "
			       "set; %s pairs events by hand).",
			    model_key(m, REQ_SOLVE), model_key(m, REQ_PAIR));
	}
	if ((rf->dropped || rf->missing) && model_details_kept(m))
		text_dropped_events(m, (size_t)(rf - m->rep->files), ps);
	const char *ev = model_evidence(m, name);
	if (ev) {
		b = text_para_add(ps, ROLE_INFO);
		tm_buf_adds(b, ev);
	}
	if (!rf->dropped && m->rep && m->rep->dropped) {
		/* Point at the files that drop (the list's DROPS column). */
		size_t k = 0;
		b = text_para_add(ps, ROLE_WARNING);
		tm_buf_adds(b, "The drops are in");
		for (size_t i = 0; i < m->rep->n_files; i++) {
			const struct tm_report_file *o = &m->rep->files[i];
			if (!o->dropped)
				continue;
			char *nm = text_short_name(model_member_name(m, o->member), 40);
			tm_buf_addf(b, "%s%s (%llu)", k++ ? ", " : " ", nm,
				    (unsigned long long)o->dropped);
			free(nm);
		}
		tm_buf_addf(b, ": select %s (%s/%s) for the cause and the fix.", k == 1 ? "it" : "one",
			    model_key(m, REQ_DOWN), model_key(m, REQ_UP));
	}
	/* How it is placed and why (the engine's sentence). */
	b = text_para_add(ps, ROLE_DEFAULT);
	tm_buf_addf(b, "placed: %s", rf->placement ? rf->placement : "?");
	if (!rf->is_predicted && rf->is_trace &&
	    !(rf->placement && (strstr(rf->placement, "not scan") ||
				strstr(rf->placement, "not predicted")))) {
		b = text_para_add(ps, ROLE_WARNING);
		tm_buf_addf(b, "format %s is not scanned by tracemerge: its events and drops are "
			       "not predicted (shown as ?).",
			    tm_format_name(rf->format));
	}
	/* Clocks and time range. */
	b = text_para_add(ps, ROLE_CLOCK);
	tm_buf_adds(b, "clocks: ");
	for (size_t i = 0; i < rf->n_clocks; i++)
		tm_buf_addf(b, "%s%s", i ? ", " : "", tm_clock_name(rf->clocks[i]));
	if (rf->n_clocks == 0)
		tm_buf_adds(b, rf->is_predicted ? "none (private clock)" : "?");
	if (rf->has_ts) {
		text_fmt_range(m->rep, rf->first_ts, rf->last_ts, a, sizeof a);
		tm_buf_addf(b, "  range: %s", a);
	}
	if (rf->has_all_ts && (!rf->has_ts || rf->all_first_ts != rf->first_ts ||
			       rf->all_last_ts != rf->last_ts)) {
		text_fmt_range(m->rep, rf->all_first_ts, rf->all_last_ts, a, sizeof a);
		tm_buf_addf(b, "%s%s with dropped", rf->has_ts ? " kept, " : "  range: ", a);
	}
	/* Order: trace_processor's, by name (#, the list's first column). */
	if (mb && mb->order != UINT32_MAX && text_member_is_trace(mb)) {
		size_t before = 0, rows = 0;
		for (size_t r = 0; r < n; r++) {
			const struct tm_member *o = tm_session_member(m->s, model_row_member(m, r));
			if (!o || o->order == UINT32_MAX)
				continue;
			rows++;
			before += o->order < mb->order;
		}
		b = text_para_add(ps, ROLE_DIM);
		tm_buf_addf(b, "order: #%zu of %zu (trace_processor's: protos first, then by name, "
			       "not as given; ",
			    before + 1, rows);
		if (tm_session_is_loose(m->s))
			tm_buf_addf(b, "%s/%s move it, %s renames)", model_key(m, REQ_MOVE_EARLIER),
				    model_key(m, REQ_MOVE_LATER), model_key(m, REQ_RENAME_FILE));
		else
			tm_buf_adds(b, "the archive's names as stored: not changed here)");
		char from[4096];
		if (model_row_renamed_from(m, row, from, sizeof from))
			tm_buf_addf(b, "  member name set here, not the file's (%s, which keeps its "
				       "name): the order above follows it; %s undoes",
				    from, model_key(m, REQ_UNDO));
	}
	/* Machine: the manifest's choice, the rows it lands on, embedded ids. */
	b = text_para_add(ps, ROLE_MACHINE);
	tm_buf_addf(b, "machine: %s", text_machine(m, name));
	if (rf->n_machines > 0) {
		tm_buf_addf(b, "  machine row%s:", rf->n_machines == 1 ? "" : "s");
		for (size_t i = 0; i < rf->n_machines; i++) {
			const char *mn = machine_row_name(m, rf->machines[i]);
			tm_buf_addf(b, "%s %u", i ? "," : "", rf->machines[i]);
			if (mn)
				tm_buf_addf(b, " (%s)", mn);
		}
	}
	if (f && f->has_machines) {
		size_t unnamed = 0;
		tm_buf_adds(b, "  ids:");
		for (size_t i = 0; i < f->n_machines; i++) {
			const char *nm = f->machines[i].name;
			bool blank = !nm || !nm[strspn(nm, " \t")];
			unnamed += blank;
			tm_buf_addf(b, " %u->%s", f->machines[i].id, blank ? "(unnamed)" : nm);
		}
		size_t total = f->n_machines;
		/* Embedded ids the manifest does not name yet. */
		for (size_t j = 0; m->rep && j < rf->n_machines; j++) {
			bool named = false;
			uint64_t raw = UINT64_MAX;
			/* report ids are machine-table ids: compare raw ids */
			for (size_t k = 0; k < m->rep->n_machines; k++)
				if (m->rep->machines[k].id == rf->machines[j])
					raw = m->rep->machines[k].raw_id;
			if (raw > UINT32_MAX)
				continue; /* a manifest-named machine, not an embedded id */
			for (size_t i = 0; i < f->n_machines; i++)
				named |= f->machines[i].id == raw;
			if (!named) {
				unnamed++;
				total++;
				tm_buf_addf(b, " %llu->(unnamed)", (unsigned long long)raw);
			}
		}
		if (unnamed)
			tm_buf_addf(b, "  (%zu of %zu ids unnamed: the table is written as shown; %s "
				       "names an id)",
				    unnamed, total, model_key(m, REQ_NAME_IDS));
	} else if (rf->n_machines > 1) {
		tm_buf_addf(b, "  embedded ids unnamed (%s names them)", model_key(m, REQ_NAME_IDS));
	}
	if (f && f->has_clocks) {
		text_fmt_dur(f->clocks.offset_ns, tmp, sizeof tmp);
		bool owns = f->clocks.offset_ns != 0 && model_owns_timeline(m, name);
		tm_buf_addf(b, "  align: %s%s vs %s", tmp,
			    owns                      ? ""
			    : f->clocks.offset_ns > 0 ? " (moves later)"
			    : f->clocks.offset_ns < 0 ? " (moves earlier)"
						      : "",
			    f->clocks.sync_file ? f->clocks.sync_file : "?");
		if (f->clocks.sync_clock)
			tm_buf_addf(b, ":%s", tm_clock_name(f->clocks.sync_clock));
		if (f->clocks.sync_machine)
			tm_buf_addf(b, "@%s", f->clocks.sync_machine);
		tm_buf_addf(b, ", own clock %s",
			    f->clocks.clock ? tm_clock_name(f->clocks.clock) : "PIN");
		if (owns) {
			char eff[400];
			model_offset_effect(m, name, f->clocks.offset_ns, f->clocks.sync_file, eff,
					 sizeof eff);
			tm_buf_addf(b, " (%s)", eff);
		}
	} else {
		tm_buf_adds(b, "  align: automatic");
	}
}

/* The verdict in the dialog's words (OK/WARN/ERR labels as well as colour),
 * the manifest's own errors in trace_processor's words plus our hint. */
void
text_verdict(const struct wb_model *m, struct wb_paras *ps)
{
	const struct tm_report *r = m->rep;
	struct tm_buf *b;

	if (m->open_error && !m->s) {
		b = text_para_add(ps, ROLE_ERROR);
		tm_buf_addf(b, "ERR %s", m->open_error);
	} else if (m->worker_running) {
		uint64_t done = 0, total = 0;
		for (size_t i = 0; i < tm_session_n_members(m->s); i++) {
			struct tm_progress p;
			memset(&p, 0, sizeof p);
			tm_session_progress(m->s, i, &p);
			done += p.done_bytes;
			total += p.total_bytes;
		}
		b = text_para_add(ps, ROLE_INFO);
		tm_buf_addf(b, "Analyzing traces... (%d%%)  %s cancels",
			    total ? (int)((double)done * 100.0 / (double)total) : 0,
			    model_key(m, REQ_CANCEL_SCAN));
	} else if (m->scan_cancelled) {
		b = text_para_add(ps, ROLE_WARNING);
		tm_buf_addf(b, "Scan cancelled: no verdict (%s scans again).", model_key(m, REQ_RESCAN));
	} else if (m->eval_error) {
		b = text_para_add(ps, ROLE_ERROR);
		tm_buf_addf(b, "ERR %s", m->eval_error);
	} else if (!r) {
		b = text_para_add(ps, ROLE_INFO);
		tm_buf_adds(b, "Checking if the traces line up on the timeline...");
	} else if (r->error) {
		b = text_para_add(ps, ROLE_ERROR);
		tm_buf_addf(b, "ERR %s%s",
			    r->error_is_ours	    ? "tracemerge cannot predict this import: "
			    : r->error_in_manifest ? "Manifest error: "
						    : "",
			    r->error);
		/* trace_processor's text names no file: name the ones it cannot
		 * read (ours). */
		for (size_t row = 0; row < model_n_rows(m); row++) {
			const struct tm_member *mb = tm_session_member(m->s, model_row_member(m, row));
			if (!mb || mb->is_hidden || mb->format != TM_FMT_UNKNOWN)
				continue;
			b = text_para_add(ps, ROLE_INFO);
			tm_buf_addf(b, "    tracemerge: %s is no trace format trace_processor knows; %s "
				       "removes it from the set",
				    model_row_name(m, row), model_key(m, REQ_REMOVE_FILE));
		}
		if (r->hint) {
			b = text_para_add(ps, ROLE_INFO);
			tm_buf_addf(b, "    hint (tracemerge, not trace_processor): %s", r->hint);
		}
	} else if ((r->dropped || tm_report_missing_by_merge(r)) && !tm_report_missing_is_dropped(r)) {
		/* the two figures differ: trace_processor's and the events
		 * missing, each named (the engine's sentence) */
		struct tm_buf v;
		tm_buf_init(&v);
		tm_report_verdict(r, &v);
		b = text_para_add(ps, ROLE_WARNING);
		tm_buf_addf(b, "WARN %s Their trace shares no clock with the shared timeline, or an "
			       "offset moves them before its start: adjust the alignment, or check "
			       "the manifest.",
			    v.data ? v.data : "");
		tm_buf_fini(&v);
	} else if (r->dropped) {
		char cnt[40];
		size_t n_unknown = 0;
		for (size_t i = 0; i < r->n_files; i++)
			n_unknown += r->files[i].is_trace && !r->files[i].is_predicted;
		fmt_count(r->dropped, cnt, sizeof cnt);
		b = text_para_add(ps, ROLE_WARNING);
		tm_buf_addf(b,
			    "WARN %s event%s would be dropped: they cannot be placed on the shared "
			    "timeline, either because their trace shares no clock with it or because "
			    "an offset moves them before its start. Adjust the alignment, or check "
			    "the manifest.",
			    cnt, r->dropped == 1 ? "" : "s");
		if (n_unknown)
			tm_buf_addf(b, " (%zu file%s not predicted.)", n_unknown,
				    n_unknown == 1 ? "'s events are" : "s' events are");
		if (r->overlap.text && !r->overlap.overlap)
			tm_buf_addf(b, " %s", r->overlap.text);
	} else {
		struct tm_buf v;
		tm_buf_init(&v);
		tm_report_verdict(r, &v);
		/* nothing dropped, but files that share no moment: a warning */
		bool ok = r->ok && (r->overlap.n_files < 2 || r->overlap.overlap);
		b = text_para_add(ps, ok ? ROLE_OK : ROLE_WARNING);
		tm_buf_addf(b, "%s %s", ok ? "OK" : "WARN", v.data ? v.data : "");
		tm_buf_fini(&v);
	}
}

/* Who owns the timeline and why, and tracemerge's own warnings (about
 * trace_processor's real order among them), each on its own lines. */
void
text_owner(const struct wb_model *m, struct wb_paras *ps)
{
	const struct tm_report *r = m->rep;
	const char *owner_full = NULL;
	char *owner = NULL;
	struct tm_buf *b;

	if (!r || r->error || m->worker_running)
		return;
	if (r->tt_file >= 0 && (size_t)r->tt_file < r->n_files) {
		owner_full = model_member_name(m, r->files[r->tt_file].member);
		owner = text_short_name(owner_full, 60);
	}
	/* An offset on the owner: the user expects that file to move, but
	 * trace_processor's order made it the timeline, so the reference moves
	 * instead.  First: on a short screen it is what must show. */
	for (size_t i = 0; owner && i < m->man.n_files; i++) {
		const struct tm_manifest_file *mf = &m->man.files[i];
		int64_t neg;
		char d[64], *ref;
		if (!mf->path || !mf->has_clocks || mf->clocks.offset_ns == 0 ||
		    !mf->clocks.sync_file || strcmp(mf->path, owner_full) != 0 ||
		    !model_ref_follows(m, mf->clocks.sync_file) ||
		    __builtin_sub_overflow(0, mf->clocks.offset_ns, &neg))
			continue;
		text_fmt_dur(neg, d, sizeof d);
		ref = text_short_name(mf->clocks.sync_file, 60);
		b = text_para_add(ps, ROLE_WARNING);
		tm_buf_addf(b,
			    "warning (tracemerge): trace_processor's order (priority, then name) "
			    "gives the timeline to %s, so its offset moves %s %s instead",
			    owner, ref, d);
		free(ref);
	}
	b = text_para_add(ps, ROLE_INFO);
	tm_buf_addf(b, "Timeline: %s", r->tt_clock ? tm_clock_name(r->tt_clock) : "?");
	if (owner)
		tm_buf_addf(b, " of %s", owner);
	if (r->tt_machine >= 0) {
		const char *mn = machine_row_name(m, (uint32_t)r->tt_machine);
		tm_buf_addf(b, " (machine %lld%s%s)", (long long)r->tt_machine, mn ? " " : "",
			    mn ? mn : "");
	}
	if (r->tt_why)
		tm_buf_addf(b, ": %s", r->tt_why);
	if (m->man.tt_file && owner && strcmp(m->man.tt_file, owner_full) != 0) {
		char *tf = text_short_name(m->man.tt_file, 60);
		b = text_para_add(ps, ROLE_WARNING);
		tm_buf_addf(b, "note: trace_time.file is %s, but %s owns the timeline", tf, owner);
		free(tf);
	}
	if (m->baseline && owner && strcmp(m->baseline, owner_full) != 0) {
		char *bl = text_short_name(m->baseline, 60);
		b = text_para_add(ps, ROLE_WARNING);
		tm_buf_addf(b,
			    "warning (tracemerge): the baseline is %s, but trace_processor's order "
			    "(priority, then name) gives the timeline to %s; b on a file sets "
			    "trace_time.file",
			    bl, owner);
		free(bl);
	}
	for (size_t i = 0; i < r->n_warnings; i++) {
		b = text_para_add(ps, ROLE_WARNING);
		tm_buf_addf(b, "warning (tracemerge): %s", r->warnings[i]);
	}
	free(owner);
}


/* ---- paragraphs and wrapping ---- */

struct tm_buf *
text_para_add(struct wb_paras *ps, enum wb_role role)
{
	struct wb_para *p;

	if (ps->n == WB_MAX_PARAS) {
		ps->n--; /* the last one is reused: never more than WB_MAX_PARAS */
		p = &ps->p[ps->n];
		free(p->text);
		free(p->start);
		free(p->len);
		tm_buf_fini(&ps->raw[ps->n]);
	}
	p = &ps->p[ps->n];
	memset(p, 0, sizeof *p);
	p->role = role;
	tm_buf_init(&ps->raw[ps->n]);
	return &ps->raw[ps->n++];
}

void
text_paras_fini(struct wb_paras *ps)
{
	for (size_t i = 0; i < ps->n; i++) {
		free(ps->p[i].text);
		free(ps->p[i].start);
		free(ps->p[i].len);
		tm_buf_fini(&ps->raw[i]);
	}
	memset(ps, 0, sizeof *ps);
}

/* Word-wrap one escaped paragraph into lines of w columns (columns, not
 * bytes); a word longer than a third of the line is cut, not moved. */
static void
wrap_para(struct wb_para *p, int w)
{
	const char *e = p->text;
	size_t len = strlen(e), i = 0, cap = 0;

	free(p->start);
	free(p->len);
	p->start = p->len = NULL;
	p->n_lines = 0;
	if (w < 1)
		w = 1;
	while (i < len) {
		size_t end = i, last_sp = 0;
		int used = 0;
		while (end < len) {
			size_t n = text_utf8_len(e + end, len - end);
			int cw;
			if (end + n > len)
				n = len - end;
			cw = text_char_cols(e + end, n);
			if (used + cw > w)
				break;
			if (e[end] == ' ')
				last_sp = end;
			used += cw;
			end += n;
		}
		size_t take = end - i;
		if (end < len && e[end] != ' ' && last_sp > i && last_sp - i > (size_t)w / 3)
			take = last_sp - i;
		if (p->n_lines == cap) {
			cap = cap ? cap * 2 : 8;
			p->start = realloc(p->start, cap * sizeof *p->start);
			p->len = realloc(p->len, cap * sizeof *p->len);
			if (!p->start || !p->len)
				abort();
		}
		p->start[p->n_lines] = i;
		p->len[p->n_lines] = take;
		p->n_lines++;
		i += take;
		while (i < len && e[i] == ' ')
			i++;
		if (take == 0)
			break;
	}
}

void
text_wrap(struct wb_paras *ps, int w)
{
	ps->width = w;
	ps->lines = 0;
	for (size_t i = 0; i < ps->n; i++) {
		struct wb_para *p = &ps->p[i];
		free(p->text);
		p->text = text_escape_cols(ps->raw[i].data ? ps->raw[i].data : "", 1 << 16);
		wrap_para(p, w);
		ps->lines += (int)p->n_lines;
	}
}

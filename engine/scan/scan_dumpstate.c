/* SPDX-License-Identifier: MIT */
/*
 * android_dumpstate scanner: a bugreport's text file or a standalone
 * battery-stats checkin, as trace_processor's AndroidDumpstateReader reads
 * it (importers/android_bugreport/android_dumpstate_reader.cc, ParseLine).
 *
 * Only two parts push events, both on REALTIME:
 *  - battery stats (android_battery_stats_reader.cc, ParseLine): one push
 *    per item of a "9,h,<delta ms>,..." line at the running ms x 1e6; a
 *    line of that section not starting "9" or a number that does not parse
 *    fails the import;
 *  - the SYSTEM / EVENT / RADIO LOG sections: logcat lines read with
 *    year 0 (BufferingAndroidLogReader(context, 0, wait_for_tz)) and held
 *    until a timezone is known (AndroidLogReader::ProcessEvent), kept in
 *    ms; the next log line after one is set pushes them all, then itself,
 *    at local - offset.  EndOfStream is empty: lines still held at the
 *    end are never pushed.  Year 0 makes secs * 1e9 wrap far below zero:
 *    such lines are dropped as negative.
 * The timezone is the import's one (ClockTracker::set_timezone_offset): the
 * alarm service's nowRTC line sets it (TM_OP_TIMEZONE, for this file and
 * every later one), an earlier proto's SystemInfo may have set it before;
 * the replay holds and pushes the lines (TM_CONV_WAIT_TZ).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scan.h"

enum ds_section { DS_OTHER, DS_DUMPSYS, DS_LOG, DS_BATTERY };

struct ds {
	struct tm_lines lr;
	struct tm_scan *sc;
	const struct tm_scan_ctl *ctl;
	enum ds_section section;
	bool has_service, is_alarm;
	bool has_tz;        /* this file set one (its alarm line) */
	uint64_t n_before_tz; /* its log lines before that */
	struct tm_logcat log;
	int64_t bs_ms;      /* battery stats' running time, ms */
};

static bool
starts(const char *l, size_t n, const char *s)
{
	size_t k = strlen(s);
	return n >= k && !memcmp(l, s, k);
}

static bool
ends(const char *l, size_t n, const char *s)
{
	size_t k = strlen(s);
	return n >= k && !memcmp(l + n - k, s, k);
}

static bool
has(const char *l, size_t n, const char *s)
{
	size_t k = strlen(s);
	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(l + i, s, k))
			return true;
	return false;
}

/* base::StringViewToInt64 / ToInt32 (from_chars after one leading '+'). */
static bool
to_i64(const char *p, size_t n, int64_t lo, int64_t hi, int64_t *out)
{
	size_t i = 0;
	if (n && p[0] == '+')
		i++;
	bool neg = i < n && p[i] == '-';
	i += neg;
	if (i >= n)
		return false;
	uint64_t v = 0, lim = neg ? (uint64_t)(-(lo + 1)) + 1u : (uint64_t)hi;
	for (; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		uint64_t d = (uint64_t)(p[i] - '0');
		if (v > (lim - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

/* base::StringViewSplitter with empty tokens skipped: the next token of
 * [*p, *p + *n), "" at the end. */
static void
next_tok(const char **p, size_t *n, char sep, const char **t, size_t *tn)
{
	while (*n && **p == sep) {
		(*p)++;
		(*n)--;
	}
	const char *e = memchr(*p, sep, *n);
	size_t k = e ? (size_t)(e - *p) : *n;
	*t = *p;
	*tn = k;
	*p += k;
	*n -= k;
}

static void
ds_fatal(struct ds *ds, const char *text, uint64_t off)
{
	tm_oplog_fatal(&ds->sc->log, 0, text, off);
	ds->sc->failed = true;
	ds->lr.stop = true;
}

static void
push_at(struct ds *ds, int64_t ts, const char *name, size_t nl, char phase, uint32_t tid,
	uint64_t off)
{
	struct tm_scan_event ev = {.ts = ts, .name = name, .name_len = nl, .phase = phase,
				   .align = -1, .track = tid, .dur = -1};
	tm_scan_event(ds->sc, ds->ctl, &ev, off);
}

/* AndroidBatteryStatsReader::ParseLine */
static void
battery(struct ds *ds, const char *l, size_t n, uint64_t off)
{
	const char *t;
	size_t tn;
	int64_t v;
	next_tok(&l, &n, ',', &t, &tn);
	if (tn != 1 || t[0] != '9') {
		ds_fatal(ds, "Unexpected start of battery stats checkin line", off);
		return;
	}
	next_tok(&l, &n, ',', &t, &tn);
	if (tn == 3 && !memcmp(t, "hsp", 3)) {
		next_tok(&l, &n, ',', &t, &tn);
		if (!to_i64(t, tn, INT64_MIN, INT64_MAX, &v))
			ds_fatal(ds, "Failed to convert string to int64_t", off);
	} else if (tn == 1 && t[0] == 'h') {
		next_tok(&l, &n, ',', &t, &tn);
		for (size_t i = 0; i + 6 <= tn; i++)
			if (!memcmp(t + i, ":TIME:", 6)) {
				if (!to_i64(t + i + 6, tn - i - 6, INT64_MIN, INT64_MAX, &ds->bs_ms))
					ds_fatal(ds, "Failed to convert string to int64_t", off);
				return;
			}
		if (has(t, tn, ":START") || has(t, tn, ":SHUTDOWN"))
			return;
		if (!to_i64(t, tn, INT64_MIN, INT64_MAX, &v)) {
			ds_fatal(ds, "Failed to convert string to int64_t", off);
			return;
		}
		ds->bs_ms = (int64_t)((uint64_t)ds->bs_ms + (uint64_t)v);
		for (next_tok(&l, &n, ',', &t, &tn); tn; next_tok(&l, &n, ',', &t, &tn))
			push_at(ds, (int64_t)((uint64_t)ds->bs_ms * 1000000u), t, tn, 'H', 0, off);
	} else if (tn == 1 && t[0] == '0') {
		next_tok(&l, &n, ',', &t, &tn);
		if (tn != 1 || t[0] != 'i')
			return;
		next_tok(&l, &n, ',', &t, &tn);
		if (tn != 4 || memcmp(t, "vers", 4))
			return;
		next_tok(&l, &n, ',', &t, &tn);
		if (!to_i64(t, tn, INT64_MIN, INT64_MAX, &v))
			ds_fatal(ds, "Failed to convert string to int64_t", off);
	}
}

/* MaybeSetTzOffsetFromAlarmService:
 * "  nowRTC=1629844744041=2021-08-24 23:39:04.041 nowELAPSED=403532" */
static void
alarm(struct ds *ds, const char *l, size_t n, uint64_t off)
{
	if (!starts(l, n, "  nowRTC="))
		return;
	size_t end = SIZE_MAX;
	for (size_t i = 0; i + 12 <= n; i++)
		if (!memcmp(l + i, " nowELAPSED=", 12)) {
			end = i;
			break;
		}
	if (end == SIZE_MAX)
		return;
	const char *p = l, *t, *rtc, *dt;
	size_t k = end, tn, rtcn, dtn;
	int64_t rtc_ms, f[6], ms;
	next_tok(&p, &k, '=', &t, &tn); /* "  nowRTC" */
	next_tok(&p, &k, '=', &rtc, &rtcn);
	if (!to_i64(rtc, rtcn, INT64_MIN, INT64_MAX, &rtc_ms))
		return;
	next_tok(&p, &k, '=', &dt, &dtn);
	const char *date_time, *ms_part, *date, *time_s;
	size_t dtl, msl, datel, timel;
	next_tok(&dt, &dtn, '.', &date_time, &dtl);
	next_tok(&dt, &dtn, '.', &ms_part, &msl);
	next_tok(&date_time, &dtl, ' ', &date, &datel);
	next_tok(&date_time, &dtl, ' ', &time_s, &timel);
	for (int i = 0; i < 3; i++) {
		next_tok(&date, &datel, '-', &t, &tn);
		if (!to_i64(t, tn, INT32_MIN, INT32_MAX, &f[i]))
			return;
	}
	for (int i = 3; i < 6; i++) {
		next_tok(&time_s, &timel, ':', &t, &tn);
		if (!to_i64(t, tn, INT32_MIN, INT32_MAX, &f[i]))
			return;
	}
	struct tm tms;
	memset(&tms, 0, sizeof tms);
	tms.tm_year = (int)((uint32_t)f[0] - 1900u);
	tms.tm_mon = (int)((uint32_t)f[1] - 1u);
	tms.tm_mday = (int)f[2];
	tms.tm_hour = (int)f[3];
	tms.tm_min = (int)f[4];
	tms.tm_sec = (int)f[5];
	uint64_t local_ms = (uint64_t)(int64_t)timegm(&tms) * 1000u;
	if (!to_i64(ms_part, msl, INT64_MIN, INT64_MAX, &ms))
		return;
	local_ms += (uint64_t)ms;
	struct tm_op op = {.kind = TM_OP_TIMEZONE, .ts = (int64_t)((local_ms - (uint64_t)rtc_ms) * 1000000u),
			   .offset = off};
	tm_oplog_add(&ds->sc->log, &op);
	ds->has_tz = true;
}

/* AndroidLogReader::ProcessEvent with wait_for_tz, then SendToSorter. */
static void
log_line(struct ds *ds, const char *l, size_t n, uint64_t off)
{
	struct tm_logcat_event ev;
	enum tm_logcat_line what = tm_logcat_parse(&ds->log, l, n, &ev);
	if (what == TM_LC_IGNORED)
		return;
	if (what != TM_LC_OK) {
		tm_logcat_stat(ds->sc, what);
		return;
	}
	ds->n_before_tz += !ds->has_tz;
	tm_logcat_push(ds->sc, ds->ctl, &ev, ev.ts, off, TM_CONV_WAIT_TZ);
}

static void
ds_line(void *self, const char *l, size_t n, uint64_t off)
{
	struct ds *ds = self;
	ds->sc->n_packets++;
	if (starts(l, n, "------ ") && ends(l, n, " ------")) {
		const char *sec = l + 7;
		size_t sn = n - 7;
		if (sn >= 7)
			sn -= 7; /* (shorter: substr(0, npos), all of it) */
		ds->has_service = ds->is_alarm = false;
		if (!has(sec, sn, "was the duration of")) {
			/* an end marker leaves the section as it was */
			ds->section = DS_OTHER;
			if (starts(sec, sn, "DUMPSYS"))
				ds->section = DS_DUMPSYS;
			else if (starts(sec, sn, "SYSTEM LOG") || starts(sec, sn, "EVENT LOG") ||
				 starts(sec, sn, "RADIO LOG"))
				ds->section = DS_LOG;
			else if (starts(sec, sn, "CHECKIN BATTERYSTATS"))
				ds->section = DS_BATTERY;
		}
		return;
	}
	if (ds->section == DS_DUMPSYS && starts(l, n, "--------- ") &&
	    has(l, n, "was the duration of dumpsys")) {
		ds->has_service = ds->is_alarm = false;
		return;
	}
	if (ds->section == DS_DUMPSYS && !ds->has_service &&
	    starts(l, n, "----------------------------------------------"))
		return;
	if (starts(l, n, "9,0,i,vers,"))
		ds->section = DS_BATTERY;
	if (ds->section == DS_DUMPSYS && starts(l, n, "DUMP OF SERVICE")) {
		size_t sp = n;
		while (sp > 0 && l[sp - 1] != ' ')
			sp--;
		size_t sl = n - sp ? n - sp - 1 : 0; /* its last byte (':') dropped */
		ds->has_service = sl > 0;
		ds->is_alarm = sl == 5 && !memcmp(l + sp, "alarm", 5);
	} else if (ds->section == DS_DUMPSYS && ds->is_alarm) {
		alarm(ds, l, n, off);
	} else if (ds->section == DS_LOG) {
		log_line(ds, l, n, off);
	} else if (ds->section == DS_BATTERY) {
		battery(ds, l, n, off);
	}
}

static void
ds_eof(void *self)
{
	struct ds *ds = self;
	if (ds->n_before_tz)
		tm_scan_warn(ds->sc,
			     "%llu log line%s before any timezone of this file: trace_processor "
			     "holds a dumpstate's log lines until a timezone is set (the alarm "
			     "service's nowRTC line, or an earlier proto's SystemInfo) and never "
			     "pushes those still held at the end",
			     (unsigned long long)ds->n_before_tz, ds->n_before_tz == 1 ? "" : "s");
}

static enum tm_status
scan(struct tm_stream *st, const void *mem, size_t n, size_t block, struct tm_scan *sc,
     const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	struct ds ds;
	memset(&ds, 0, sizeof ds);
	tm_lines_init(&ds.lr, "android_dumpstate", err);
	ds.lr.self = &ds;
	ds.lr.line = ds_line;
	ds.lr.eof = ds_eof;
	ds.sc = sc;
	ds.ctl = ctl;
	ds.log.default_year = 0; /* BufferingAndroidLogReader(context, 0, true) */
	tm_scan_note_clock(sc, TM_CLOCK_REALTIME);
	enum tm_status rc = tm_scan_lines(st, mem, n, block, sc, ctl, err, &ds.lr);
	tm_lines_fini(&ds.lr);
	return rc;
}

enum tm_status
tm_scan_dumpstate(struct tm_stream *st, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
		  struct tm_error *err)
{
	return scan(st, NULL, 0, 0, sc, ctl, err);
}

enum tm_status
tm_scan_dumpstate_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
		      const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	return scan(NULL, p, n, block, sc, ctl, err);
}

/* The format table's sniffer (util/trace_type.cc, GuessTraceType): a
 * battery stats checkin or a bugreport's dumpstate header. */
bool
tm_sniff_android_dumpstate(struct tm_sniff_in *in)
{
	return tm_sniff_starts(in->d, in->n, "9,0,i,vers,") ||
	       tm_sniff_starts(in->d, in->n,
			       "========================================================\n== dumpstate: ");
}

/* SPDX-License-Identifier: MIT */
/*
 * android_logcat scanner: `adb logcat` text (threadtime, with or without a
 * year, or bugreport style with a uid column) as trace_processor's
 * AndroidLogReader reads it (importers/android_bugreport/android_log_reader.cc,
 * AndroidLogReader::ParseLine; the format from android_log_event.cc,
 * AndroidLogEvent::DetectFormat, on the first line long enough).
 *
 * Each parsed line is one push at ToTraceTime(REALTIME, local time read as
 * UTC - the timezone offset) (SendToSorter).  A line with no year takes the
 * reader's default year, GuessYear at its construction: with nothing pushed
 * yet (always so in a dry run, whose sorter keeps nothing) the year of
 * base::GetWallTimeS(), which on Linux is CLOCK_MONOTONIC (include/perfetto/
 * base/time.h): the year of the machine's uptime, 1970 unless it has been up
 * for a year.  The timezone offset is the one set when the line is read
 * (ClockTracker::timezone_offset, 0 without one): by an earlier proto's
 * SystemInfo or dumpstate (TM_OP_TIMEZONE), applied by the replay.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "formats.h"
#include "scan.h"
#include "align_scan.h"

enum { LC_UNKNOWN, LC_PERSISTENT, LC_BUGREPORT };

struct lc {
	struct tm_lines lr;
	struct tm_scan *sc;
	const struct tm_scan_ctl *ctl;
	struct tm_logcat r;
	uint64_t n_guessed;
};

/* DetectFormat: SplitString(line, " ") (empty pieces dropped). */
static int
detect(const char *l, size_t n)
{
	const char *p[6];
	size_t len[6], cnt = 0;
	for (size_t i = 0; i < n;) {
		while (i < n && l[i] == ' ')
			i++;
		if (i == n)
			break;
		size_t s = i;
		while (i < n && l[i] != ' ')
			i++;
		if (cnt < 6) {
			p[cnt] = l + s;
			len[cnt] = i - s;
		}
		cnt++;
	}
	if (cnt < 5)
		return LC_UNKNOWN;
	bool mmdd = len[0] == 5 && p[0][2] == '-';
	bool ymd = len[0] == 10 && p[0][4] == '-' && p[0][7] == '-';
	if (!mmdd && !ymd)
		return LC_UNKNOWN;
	if (len[1] < 10 || p[1][2] != ':' || p[1][5] != ':' || p[1][8] != '.')
		return LC_UNKNOWN;
	if (len[4] == 1 && p[4][0] >= 'A' && p[4][0] <= 'Z')
		return LC_PERSISTENT;
	if (cnt > 5 && len[5] == 1 && p[5][0] >= 'A' && p[5][0] <= 'Z')
		return LC_BUGREPORT;
	return LC_UNKNOWN;
}

/* ReadNumAndAdvance: digits up to the first sep, past every sep of that
 * run; false (the token still skipped) with a non-digit in it, false and
 * nothing skipped without a sep.  scale: a fraction at that resolution.
 * int arithmetic, wrapping as the C++ does on its machines. */
static bool
read_num(const char **it, size_t *n, char sep, int scale, int *out)
{
	uint32_t num = 0;
	bool found = false, invalid = false;
	size_t next = 0;
	for (size_t i = 0; i < *n; i++) {
		char c = (*it)[i];
		if (c == sep) {
			next = i + 1;
			found = true;
			continue;
		}
		if (found)
			break;
		if (c >= '0' && c <= '9') {
			uint32_t d = (uint32_t)(c - '0');
			if (!scale) {
				num = num * 10u + d;
			} else {
				scale /= 10;
				num += d * (uint32_t)scale;
			}
			continue;
		}
		invalid = true;
	}
	if (!found)
		return false;
	*it += next;
	*n -= next;
	if (invalid)
		return false;
	*out = (int)num;
	return true;
}

enum tm_logcat_line
tm_logcat_parse(struct tm_logcat *r, const char *l, size_t n, struct tm_logcat_event *ev)
{
	if (n < 30 || (l[0] == '-' && l[1] == '-' && l[2] == '-'))
		return TM_LC_IGNORED; /* "--------- beginning of main" and the like */
	if (r->fmt == LC_UNKNOWN) {
		r->fmt = detect(l, n);
		if (r->fmt == LC_UNKNOWN)
			return TM_LC_FORMAT_INVALID;
	}
	const char *it = l;
	size_t k = n;
	int yom = 0, year = 0, month = 0, day = 0, hour = 0, min = 0, sec = 0, ns = 0, pid = 0,
	    tid = 0, uid;
	bool has_year = false, ok_month, ok_day;
	bool ok_yom = read_num(&it, &k, '-', 0, &yom);
	if (ok_yom && yom >= 1969) {
		has_year = true;
		year = yom;
		ok_month = read_num(&it, &k, '-', 0, &month);
		ok_day = read_num(&it, &k, ' ', 0, &day);
	} else {
		ok_month = ok_yom;
		month = yom;
		ok_day = read_num(&it, &k, ' ', 0, &day);
	}
	bool ok = ok_month & ok_day;
	ok &= read_num(&it, &k, ':', 0, &hour);
	ok &= read_num(&it, &k, ':', 0, &min);
	ok &= read_num(&it, &k, '.', 0, &sec);
	ok &= read_num(&it, &k, ' ', 1000 * 1000 * 1000, &ns);
	if (r->fmt == LC_BUGREPORT)
		(void)read_num(&it, &k, ' ', 0, &uid); /* the uid column */
	ok &= read_num(&it, &k, ' ', 0, &pid);
	ok &= read_num(&it, &k, ' ', 0, &tid);
	if (!ok || k < 4 || it[1] != ' ')
		return TM_LC_FAILED;
	/* the tag: up to the first ": " after the priority, trailing spaces
	 * trimmed */
	const char *tag = it + 2;
	size_t rest = k - 2, tag_len = 0;
	for (size_t i = 0; i + 1 < rest; i++)
		if (tag[i] == ':' && tag[i + 1] == ' ') {
			tag_len = i;
			break;
		}
	while (tag_len && tag[tag_len - 1] == ' ')
		tag_len--;
	ev->guessed_year = !has_year;
	if (!has_year)
		year = r->default_year;
	/* base::MkTime: timegm of the fields as given (normalised) */
	struct tm tms;
	memset(&tms, 0, sizeof tms);
	tms.tm_year = (int)((uint32_t)year - 1900u);
	tms.tm_mon = (int)((uint32_t)month - 1u);
	tms.tm_mday = day;
	tms.tm_hour = hour;
	tms.tm_min = min;
	tms.tm_sec = sec;
	int64_t secs = (int64_t)timegm(&tms);
	/* secs * 1000000000ll + ns, wrapping (year 0 of a dumpstate's log
	 * sections overflows it) */
	ev->ts = (int64_t)((uint64_t)secs * 1000000000u + (uint64_t)(int64_t)ns);
	ev->tag = tag;
	ev->tag_len = tag_len;
	ev->tid = (uint32_t)tid;
	return TM_LC_OK;
}

/* One pushed log line of a scan (this scanner's and scan_dumpstate.c's):
 * at its local time, the replay subtracting the timezone offset set by
 * then (TM_CONV_LOCAL; flags: TM_CONV_WAIT_TZ or 0). */
void
tm_logcat_push(struct tm_scan *sc, const struct tm_scan_ctl *ctl, const struct tm_logcat_event *ev,
	       int64_t ts, uint64_t off, uint32_t flags)
{
	struct tm_scan_event e = {.ts = ts, .name = ev->tag, .name_len = ev->tag_len, .phase = 'L',
				  .align = AL_INSTANT, .flags = TM_CONV_LOCAL | flags,
				  .track = ev->tid, .dur = -1};
	tm_scan_event(sc, ctl, &e, off);
}

/* The stat of a line that was not pushed, if any. */
void
tm_logcat_stat(struct tm_scan *sc, enum tm_logcat_line what)
{
	if (what == TM_LC_FORMAT_INVALID)
		tm_oplog_stat(&sc->log, 0, TM_STAT_ANDROID_LOG_FORMAT_INVALID, 1);
	else if (what == TM_LC_FAILED)
		tm_oplog_stat(&sc->log, 0, TM_STAT_ANDROID_LOG_NUM_FAILED, 1);
}

static void
lc_line(void *self, const char *l, size_t n, uint64_t off)
{
	struct lc *lc = self;
	struct tm_logcat_event ev;
	enum tm_logcat_line what = tm_logcat_parse(&lc->r, l, n, &ev);
	if (what == TM_LC_IGNORED)
		return;
	lc->sc->n_packets++;
	if (what != TM_LC_OK) {
		tm_logcat_stat(lc->sc, what);
		return;
	}
	lc->n_guessed += ev.guessed_year;
	/* SendToSorter: minus the timezone offset set by then (the replay's) */
	tm_logcat_push(lc->sc, lc->ctl, &ev, ev.ts, off, 0);
}

static void
lc_eof(void *self)
{
	struct lc *lc = self;
	if (lc->n_guessed)
		tm_scan_warn(lc->sc,
			     "%llu log line%s carry no year: trace_processor's dry run (the merge "
			     "dialog, util merge) reads them in %d, the year of its machine's "
			     "monotonic clock (GuessYear, base::GetWallTimeS), as predicted here; a "
			     "full import after files whose events reach REALTIME takes the year of "
			     "their latest event instead, so lines dropped here can survive it",
			     (unsigned long long)lc->n_guessed, lc->n_guessed == 1 ? "" : "s",
			     lc->r.default_year);
}

/* GuessYear with an empty sorter: gmtime of base::GetWallTimeS(), which is
 * CLOCK_MONOTONIC on Linux. */
int
tm_logcat_default_year(void)
{
	struct timespec now;
	struct tm t;
	if (clock_gettime(CLOCK_MONOTONIC, &now) != 0)
		return 1970;
	time_t s = now.tv_sec;
	if (!gmtime_r(&s, &t))
		return 1970;
	return t.tm_year + 1900;
}

static enum tm_status
scan(struct tm_stream *st, const void *mem, size_t n, size_t block, struct tm_scan *sc,
     const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	struct lc lc;
	memset(&lc, 0, sizeof lc);
	tm_lines_init(&lc.lr, "android_logcat", err);
	lc.lr.self = &lc;
	lc.lr.line = lc_line;
	lc.lr.eof = lc_eof;
	lc.sc = sc;
	lc.ctl = ctl;
	lc.r.default_year = tm_logcat_year_override ? tm_logcat_year_override
						    : tm_logcat_default_year();
	tm_scan_note_clock(sc, TM_CLOCK_REALTIME);
	enum tm_status rc = tm_scan_lines(st, mem, n, block, sc, ctl, err, &lc.lr);
	tm_lines_fini(&lc.lr);
	return rc;
}

int tm_logcat_year_override;

enum tm_status
tm_scan_logcat(struct tm_stream *st, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
	       struct tm_error *err)
{
	return scan(st, NULL, 0, 0, sc, ctl, err);
}

enum tm_status
tm_scan_logcat_mem(const void *p, size_t n, size_t block, struct tm_scan *sc,
		   const struct tm_scan_ctl *ctl, struct tm_error *err)
{
	return scan(NULL, p, n, block, sc, ctl, err);
}

/* The format table's sniffer (util/trace_type.cc, GuessTraceType, with
 * android_log_event.cc's DetectFormat): within the first 4096 bytes, the
 * first '\n'-terminated line that is not a "--------- beginning of"
 * marker is a logcat line in either format. */
bool
tm_sniff_logcat(struct tm_sniff_in *in)
{
	size_t n = in->n < 4096 ? in->n : 4096;
	const char *d = (const char *)in->d;
	size_t s = 0;
	for (size_t i = 0; i < n; i++) {
		if (d[i] != '\n')
			continue;
		const char *line = d + s;
		size_t len = i - s;
		s = i + 1;
		if (len >= 8 && memcmp(line, "--------", 8) == 0)
			continue;
		return detect(line, len) != LC_UNKNOWN;
	}
	return false;
}

/* SPDX-License-Identifier: MIT */
/*
 * Offsets from events: pairs of events that two traces both saw (shared
 * instant names, flow and async ids, user-named send/receive pairs, declared
 * pairs), turned into an offset with bounds, a quality and the drift.
 *
 * One-way messages use the convex-hull method of Duda et al. (1987), as
 * Poirier, Roy and Dagenais (2010) apply it to traces: with the reference's
 * clock modelled as ref = file + a + b*(t - mid), a message file->ref
 * received at ref time r after being sent at file time t says
 * a + b*(t - mid) <= r - t (its latency is not negative), and one ref->file
 * says the opposite.  The feasible (a, b) form a convex polygon, found here
 * by clipping a box with one half-plane per message; its extent is the
 * bound on the offset, its b range the drift.  Everything is computed from
 * the samples the scan kept (align_scan.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "align_scan.h"
#include "internal.h"
#include "session.h"

const char *
tm_align_quality_name(enum tm_align_quality q)
{
	switch (q) {
	case TM_ALIGN_DECLARED: return "declared";
	case TM_ALIGN_ACCURATE: return "accurate";
	case TM_ALIGN_APPROXIMATE: return "approximate";
	case TM_ALIGN_ONE_SIDED: return "one-sided";
	case TM_ALIGN_CONTRADICTORY: return "contradictory";
	case TM_ALIGN_EXACT: return "exact";
	case TM_ALIGN_WEAK: return "not enough evidence";
	default: return "none";
	}
}

bool
tm_align_offerable(const struct tm_align_estimate *e)
{
	return e->has_offset && e->quality != TM_ALIGN_CONTRADICTORY && e->quality != TM_ALIGN_WEAK;
}

/* Names every trace of its producer carries, whatever it recorded: Chrome's
 * metadata and tracing-started markers, Perfetto's and the JSON format's
 * process and thread names.  Two traces that both have them share nothing
 * (ours: the one list). */
static bool
generic_name(const char *s, size_t n)
{
	static const char *const names[] = {
		"TracingStartedInBrowser", "TracingStartedInPage", "TracingSessionIdForWorker",
		"TracingStartedInProcess", "tracing_started",	"process_name",
		"process_labels",	   "process_sort_index",   "process_uptime_seconds",
		"thread_name",		   "thread_sort_index",	   "num_cpus",
		"trace_buffer_overflowed", "Screenshot",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strlen(names[i]) == n && !memcmp(names[i], s, n))
			return true;
	return false;
}

/* ---- the estimator ---- */

struct pt {
	double a, b;
};

#define MAX_DRIFT 1e-3 /* 1000 ppm: beyond any crystal */
#define BOX_A 1e17

/* Keep the part of poly where ka*a + kb*b <= c (Sutherland-Hodgman). */
static size_t
clip(struct pt *in, size_t n, double ka, double kb, double c, struct pt *out)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		struct pt p = in[i], q = in[(i + 1) % n];
		double fp = ka * p.a + kb * p.b - c, fq = ka * q.a + kb * q.b - c;
		if (fp <= 0)
			out[m++] = p;
		if ((fp < 0 && fq > 0) || (fp > 0 && fq < 0)) {
			double t = fp / (fp - fq);
			out[m++] = (struct pt){p.a + t * (q.a - p.a), p.b + t * (q.b - p.b)};
		}
	}
	return m;
}

/* The a range of the polygon on the line b = bv. */
static bool
a_range(const struct pt *v, size_t n, double bv, double *lo, double *hi)
{
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		struct pt p = v[i], q = v[(i + 1) % n];
		double x;
		if ((p.b - bv) * (q.b - bv) > 0)
			continue;
		if (p.b == q.b)
			x = p.a;
		else
			x = p.a + (bv - p.b) / (q.b - p.b) * (q.a - p.a);
		if (!any || x < *lo)
			*lo = x;
		if (!any || x > *hi)
			*hi = x;
		any = true;
		if (p.b == q.b) {
			if (q.a < *lo)
				*lo = q.a;
			if (q.a > *hi)
				*hi = q.a;
		}
	}
	return any;
}

static int64_t
to_ns(double x)
{
	if (x >= 9.2e18)
		return INT64_MAX;
	if (x <= -9.2e18)
		return INT64_MIN + 1;
	return (int64_t)llround(x);
}

void
tm_align_solve(const struct tm_align_obs *obs, size_t n, struct tm_align_estimate *e)
{
	e->quality = TM_ALIGN_NONE;
	e->has_offset = e->has_lo = e->has_hi = e->has_drift = false;
	e->n_to_ref = e->n_from_ref = e->n_same = 0;
	if (!n)
		return;
	int64_t tmin = obs[0].t, tmax = obs[0].t, d0 = obs[0].d;
	for (size_t i = 0; i < n; i++) {
		tmin = obs[i].t < tmin ? obs[i].t : tmin;
		tmax = obs[i].t > tmax ? obs[i].t : tmax;
		if (obs[i].kind == 1)
			e->n_to_ref++;
		else if (obs[i].kind == 2)
			e->n_from_ref++;
		else
			e->n_same++;
	}
	int64_t mid = tmin + (int64_t)(((uint64_t)tmax - (uint64_t)tmin) / 2);
	e->mid_ts = mid;
	e->span_ns = wrap_sub(tmax, tmin);
	double span = (double)e->span_ns;
#define U(i) ((double)wrap_sub(obs[i].t, mid))
#define Y(i) ((double)wrap_sub(obs[i].d, d0))
	double a = 0, b = 0, lo = 0, hi = 0;

	if (e->n_same) {
		/* the same moments give the estimate: least squares, the residual
		 * spread as bounds */
		double su = 0, sy = 0, suu = 0, suy = 0, k = 0;
		for (size_t i = 0; i < n; i++) {
			if (obs[i].kind)
				continue;
			su += U(i);
			sy += Y(i);
			suu += U(i) * U(i);
			suy += U(i) * Y(i);
			k++;
		}
		double den = k * suu - su * su;
		if (k >= 3 && span > 0 && den > 0) {
			b = (k * suy - su * sy) / den;
			e->has_drift = true;
		}
		a = (sy - b * su) / k;
		bool first = true;
		for (size_t i = 0; i < n; i++) {
			if (obs[i].kind)
				continue;
			double r = Y(i) - b * U(i);
			if (first || r < lo)
				lo = r;
			if (first || r > hi)
				hi = r;
			first = false;
		}
		e->has_lo = e->has_hi = true;
		e->quality = TM_ALIGN_APPROXIMATE;
		/* messages at the same drift bound it: a file->ref message's
		 * latency is not negative (offset <= its y), nor a ref->file one's
		 * (offset >= its y); the tighter bounds win, and an estimate
		 * outside what the messages allow is contradictory */
		double mlo = -HUGE_VAL, mhi = HUGE_VAL;
		for (size_t i = 0; i < n; i++) {
			double r = Y(i) - b * U(i);
			if (obs[i].kind == 1)
				mhi = fmin(mhi, r);
			else if (obs[i].kind == 2)
				mlo = fmax(mlo, r);
		}
		double tlo = fmax(lo, mlo), thi = fmin(hi, mhi);
		if (tlo > thi && tlo - thi < 1.0) /* the same nanosecond, rounded apart */
			tlo = thi = (tlo + thi) / 2;
		if (tlo > thi) {
			e->quality = TM_ALIGN_CONTRADICTORY;
			e->has_lo = mlo > -HUGE_VAL;
			e->has_hi = mhi < HUGE_VAL;
			lo = e->has_lo ? mlo : lo;
			hi = e->has_hi ? mhi : hi;
		} else {
			lo = tlo;
			hi = thi;
			a = fmin(fmax(a, lo), hi);
			if (e->n_to_ref && e->n_from_ref)
				e->quality = TM_ALIGN_ACCURATE;
		}
	} else if (e->n_to_ref && e->n_from_ref) {
		/* both directions: the feasible polygon */
		double bmax = span > 0 ? MAX_DRIFT : 0;
		size_t cap = 2 * n + 8, m = 4;
		struct pt *p = xmalloc(cap * sizeof *p), *q = xmalloc(cap * sizeof *q);
		p[0] = (struct pt){-BOX_A, -bmax};
		p[1] = (struct pt){BOX_A, -bmax};
		p[2] = (struct pt){BOX_A, bmax};
		p[3] = (struct pt){-BOX_A, bmax};
		if (bmax == 0)
			m = 2; /* a segment on b = 0 */
		for (size_t i = 0; i < n && m; i++) {
			if (obs[i].kind == 1)
				m = clip(p, m, 1, U(i), Y(i), q);
			else if (obs[i].kind == 2)
				m = clip(p, m, -1, -U(i), -Y(i), q);
			else
				continue;
			struct pt *t = p;
			p = q;
			q = t;
		}
		if (m) {
			double pbmin = p[0].b, pbmax = p[0].b, amin = p[0].a, amax = p[0].a;
			for (size_t i = 0; i < m; i++) {
				pbmin = fmin(pbmin, p[i].b);
				pbmax = fmax(pbmax, p[i].b);
				amin = fmin(amin, p[i].a);
				amax = fmax(amax, p[i].a);
			}
			bool drift_known = span > 0 && pbmax < bmax * 0.999 && pbmin > -bmax * 0.999;
			b = drift_known ? (pbmin + pbmax) / 2 : (pbmin <= 0 && pbmax >= 0) ? 0
											  : (pbmin + pbmax) / 2;
			double alo = amin, ahi = amax;
			if (!a_range(p, m, b, &alo, &ahi)) {
				alo = amin;
				ahi = amax;
			}
			a = (alo + ahi) / 2;
			lo = amin;
			hi = amax;
			e->quality = TM_ALIGN_ACCURATE;
			e->has_lo = e->has_hi = true;
			e->has_drift = drift_known;
		} else {
			/* no line fits: report where a constant offset breaks */
			double maxlo = -HUGE_VAL, minhi = HUGE_VAL;
			for (size_t i = 0; i < n; i++) {
				if (obs[i].kind == 1)
					minhi = fmin(minhi, Y(i));
				else if (obs[i].kind == 2)
					maxlo = fmax(maxlo, Y(i));
			}
			a = (maxlo + minhi) / 2;
			lo = maxlo;
			hi = minhi;
			e->has_lo = e->has_hi = true;
			e->quality = TM_ALIGN_CONTRADICTORY;
		}
		free(p);
		free(q);
	} else {
		/* one direction only: one bound, the smallest latency is the estimate */
		bool up = e->n_to_ref > 0;
		bool first = true;
		for (size_t i = 0; i < n; i++) {
			double y = Y(i);
			if (first || (up ? y < a : y > a))
				a = y;
			first = false;
		}
		lo = hi = a;
		e->has_hi = up;
		e->has_lo = !up;
		e->quality = TM_ALIGN_ONE_SIDED;
	}
#undef U
#undef Y
	e->has_offset = true;
	e->offset_ns = wrap_add(d0, to_ns(a));
	e->lo_ns = wrap_add(d0, to_ns(lo));
	e->hi_ns = wrap_add(d0, to_ns(hi));
	e->drift_ppm = b * 1e6; /* as computed: the printers round (tm_align_ppm_text) */
	e->drift_ns = to_ns(b * span);
	/* every pair says the same offset: not an approximation */
	if ((e->quality == TM_ALIGN_APPROXIMATE || e->quality == TM_ALIGN_ACCURATE) && e->has_lo &&
	    e->has_hi && e->lo_ns == e->hi_ns)
		e->quality = TM_ALIGN_EXACT;
}

/* ---- pairs and the run ---- */

void
tm_align_pair_fini(struct tm_align_pair *p)
{
	free(p->file);
	free(p->name);
	free(p->ref);
	free(p->ref_name);
	memset(p, 0, sizeof *p);
}

/* FILE:NAME[#N] */
static bool
parse_event(const char *s, size_t n, char **file, char **name, uint32_t *occ)
{
	const char *c = memchr(s, ':', n);
	if (!c || c == s || c + 1 == s + n)
		return false;
	const char *h = NULL;
	for (const char *q = s + n; q > c + 1; q--)
		if (q[-1] == '#') {
			h = q - 1;
			break;
		}
	*occ = 1;
	size_t nend = n;
	if (h) {
		char *e;
		unsigned long v = strtoul(h + 1, &e, 10);
		if (e == s + n && h + 1 < s + n && v >= 1 && v <= UINT32_MAX) {
			*occ = (uint32_t)v;
			nend = (size_t)(h - s);
		}
	}
	*file = xstrndup(s, (size_t)(c - s));
	*name = xstrndup(c + 1, nend - (size_t)(c + 1 - s));
	return **name != 0;
}

enum tm_status
tm_align_pair_parse(const char *text, struct tm_align_pair *out, struct tm_error *err)
{
	memset(out, 0, sizeof *out);
	const char *eq = strchr(text, '=');
	if (!eq)
		goto bad;
	if (!parse_event(text, (size_t)(eq - text), &out->file, &out->name, &out->occ))
		goto bad;
	const char *r = eq + 1;
	size_t rn = strlen(r);
	/* an optional +D / -D at the end (a duration with a unit) */
	for (size_t k = rn; k > 0; k--) {
		if (r[k - 1] != '+' && r[k - 1] != '-')
			continue;
		struct tm_error e2;
		int64_t d;
		if (k - 1 > 0 && r[k - 2] != '#' && tm_parse_duration_ns(r + k - 1, &d, &e2) == TM_OK) {
			out->delta_ns = d;
			rn = k - 1;
		}
		break;
	}
	if (!parse_event(r, rn, &out->ref, &out->ref_name, &out->ref_occ))
		goto bad;
	return TM_OK;
bad:
	tm_align_pair_fini(out);
	tm_error_set(err, TM_ERR_INVALID, "'%s': expected FILE:NAME[#N]=REF:NAME[#N][+D]", text);
	tm_error_hint(err, "N counts occurrences from 1, in time order (among the first %u of a "
			   "name); D is a duration the REF event comes after the FILE event, e.g. "
			   "a.pb:tap=b.json:tap#2+3ms",
		      AL_OCC);
	return TM_ERR_INVALID;
}

void
tm_align_result_fini(struct tm_align_result *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->est[i].file);
		free(r->est[i].ref);
		free(r->est[i].evidence);
		free(r->est[i].weak);
	}
	free(r->est);
	free(r->timeline_ref);
	memset(r, 0, sizeof *r);
}

static ssize_t
member_of(const struct tm_session *s, const char *name)
{
	return (ssize_t)tm_session_member_by_name(s, name);
}

struct side {
	const struct tm_align_samples *a;
	uint32_t clock; /* its trace clock (0: clockless) */
	const struct tm_replay_probe *pr; /* the replay's conversions of its samples, or NULL */
};

/* A sample needs the replay's conversion: it is on another clock than the
 * reader's default and the file's trace clock, or on another machine. */
static bool
needs_probe(uint32_t trace_clock, const struct al_occ *o)
{
	return o->machine != 0 || (o->clock != 0 && o->clock != trace_clock);
}

/* What the replay said of a sample's packet (enum tm_probe_st). */
static int
probe_st(const struct side *sd, const struct al_occ *o, int64_t *ts)
{
	size_t i = sd->pr && o->off != AL_NO_OFF ? tm_replay_probe_slot(sd->pr, o->off) : SIZE_MAX;
	if (i == SIZE_MAX)
		return TM_PROBE_UNSEEN;
	if (ts)
		*ts = sd->pr->val[i];
	return sd->pr->st[i];
}

/* The sample's time in the file's trace clock (*ts): as the scan saw it
 * when it is in that clock (the reader's default or that clock itself, on
 * the file's own machine), else as the replay converted its packet's
 * timestamp on the way to the timeline (a sequence-scoped clock through
 * its sequence's ClockSnapshots, another machine through the clock graph).
 * TM_PROBE_OK or TM_PROBE_RAW when it has one (sample_usable), else the
 * replay's word why not. */
static int
sample_st(const struct side *sd, const struct al_occ *o, int64_t *ts)
{
	if (!needs_probe(sd->clock, o)) {
		*ts = o->ts;
		return TM_PROBE_OK;
	}
	return probe_st(sd, o, ts);
}

static inline bool
sample_usable(int st)
{
	return st == TM_PROBE_OK || st == TM_PROBE_RAW;
}

static bool
sample_ts(const struct side *sd, const struct al_occ *o, int64_t *ts)
{
	return sample_usable(sample_st(sd, o, ts));
}

/* fn(ctx, o) for each sample a (may be NULL) kept: every name's
 * occurrences, then each id's start and end. */
static void
al_each_occ(const struct tm_align_samples *a, void (*fn)(void *ctx, const struct al_occ *o), void *ctx)
{
	struct al_occ occ[AL_OCC];
	for (size_t i = 0; a && i < a->n_names; i++)
		for (uint32_t k = 0, n = tm_al_occs(&a->names[i], occ); k < n; k++)
			fn(ctx, &occ[k]);
	for (size_t i = 0; a && i < a->n_ids; i++) {
		const struct al_id *x = &a->ids[i];
		if (x->have & AL_OUT)
			fn(ctx, &x->out);
		if (x->have & AL_IN)
			fn(ctx, &x->in);
	}
}

/* Why a file's samples are not used, counted over what the scan kept, by
 * where they are (another machine of the file, a sequence-scoped clock
 * (64..127), another clock) and the replay's word on their conversion. */
struct why_count {
	size_t n;
	uint32_t id; /* a machine or clock seen */
	int st;      /* the reason of the last one */
};

struct why_ctx {
	const struct side *sd;
	struct why_count w[3]; /* another machine, a sequence-scoped clock, another clock */
};

static void
why_one(void *ctx, const struct al_occ *o)
{
	const struct side *sd = ((struct why_ctx *)ctx)->sd;
	struct why_count *w = ((struct why_ctx *)ctx)->w;
	int64_t ts;
	int st = sample_st(sd, o, &ts);
	if (sample_usable(st))
		return;
	struct why_count *c = o->machine ? &w[0] : tm_clock_is_seq(o->clock) ? &w[1] : &w[2];
	c->n++;
	c->id = o->machine ? o->machine : o->clock;
	c->st = st;
}

static const char *
why_words(int st)
{
	switch (st) {
	case TM_PROBE_AVOIDS:
		return "their conversion reaches the timeline without passing its trace clock, so "
		       "its offset would not move them";
	case TM_PROBE_NO_PATH:
		return "no clock snapshot relates them to its trace clock";
	case TM_PROBE_INCREMENTAL:
		return "an incremental clock whose events do not convert to the timeline";
	default:
		return "their timestamps are not converted for an estimate";
	}
}

static void
why_unusable(const struct side *sd, const char *file, struct tm_buf *b, size_t *n_out)
{
	struct why_ctx c = {sd, {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}};
	al_each_occ(sd->a, why_one, &c);
	const struct why_count *w = c.w;
	if (w[0].n)
		tm_buf_addf(b, "; %zu sample%s of %s on its machine %u not used (%s)", w[0].n,
			    w[0].n == 1 ? "" : "s", file, w[0].id, why_words(w[0].st));
	if (w[1].n)
		tm_buf_addf(b, "; %zu sample%s of %s on sequence-scoped clock %u not used (%s)", w[1].n,
			    w[1].n == 1 ? "" : "s", file, w[1].id, why_words(w[1].st));
	if (w[2].n)
		tm_buf_addf(b, "; %zu sample%s of %s in clock %s, not its trace clock %s, not used (%s)",
			    w[2].n, w[2].n == 1 ? "" : "s", file, tm_clock_name(w[2].id),
			    sd->clock ? tm_clock_name(sd->clock) : "(none)", why_words(w[2].st));
	*n_out += w[0].n + w[1].n + w[2].n;
}

/* ---- the replay's conversions of the samples ---- */

struct probes {
	struct tm_replay_probe **v; /* per member */
	size_t n;
	/* per member: its trace clock, once asked (a walk of its log) */
	struct probe_clock {
		uint32_t clock;
		bool known;
	} *clock;
};

static uint32_t
probes_clock(struct tm_session *s, struct probes *P, size_t m)
{
	struct probe_clock *c = &P->clock[m];
	if (!c->known) {
		c->clock = tm_session_trace_clock(s, m);
		c->known = true;
	}
	return c->clock;
}

static int
cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return (a > b) - (a < b);
}

struct want_ctx {
	uint32_t clock; /* the file's trace clock */
	uint64_t *off;  /* the packets to convert */
	size_t n, cap;
};

static void
probe_want(void *ctx, const struct al_occ *o)
{
	struct want_ctx *c = ctx;
	if (o->off == AL_NO_OFF || !needs_probe(c->clock, o))
		return;
	XGROW(c->off, c->cap, c->n + 1);
	c->off[c->n++] = o->off;
}

/* Ask the replay for the samples of member m (only: one member) or of all
 * (m == SIZE_MAX) that need a conversion. */
static void
probes_build(struct tm_session *s, size_t only, struct probes *P)
{
	P->n = s->in.n_members;
	P->v = xcalloc(P->n + 1, sizeof *P->v);
	P->clock = xcalloc(P->n + 1, sizeof *P->clock);
	for (size_t m = 0; m < P->n; m++) {
		if ((only != SIZE_MAX && m != only) || !s->scans[m] || !s->scans[m]->align ||
		    s->in.members[m].format != TM_FMT_PROTO)
			continue;
		uint32_t clock = probes_clock(s, P, m);
		struct want_ctx c = {clock, NULL, 0, 0};
		al_each_occ(s->scans[m]->align, probe_want, &c);
		uint64_t *off = c.off;
		size_t n = c.n;
		if (!n)
			continue;
		qsort(off, n, sizeof *off, cmp_u64);
		size_t k = 1;
		for (size_t i = 1; i < n; i++)
			if (off[i] != off[k - 1])
				off[k++] = off[i];
		struct tm_replay_probe *pr = xcalloc(1, sizeof *pr);
		pr->clock = clock;
		pr->n = k;
		pr->off = off;
		pr->val = xcalloc(k, sizeof *pr->val);
		pr->st = xcalloc(k, sizeof *pr->st);
		P->v[m] = pr;
	}
}

static void
probes_free(struct probes *P)
{
	for (size_t m = 0; m < P->n; m++)
		if (P->v[m]) {
			free(P->v[m]->off);
			free(P->v[m]->val);
			free(P->v[m]->st);
			free(P->v[m]);
		}
	free(P->v);
	free(P->clock);
	memset(P, 0, sizeof *P);
}

struct obsv {
	struct tm_align_obs *v;
	size_t n, cap;
};

static void
obs_add(struct obsv *o, int64_t t, int64_t d, int kind)
{
	XGROW(o->v, o->cap, o->n + 1);
	o->v[o->n++] = (struct tm_align_obs){t, d, kind};
}

static void
collect(const struct side *f, const struct side *r, const struct tm_align_opts *o,
	struct obsv *ov, size_t *n_names, size_t *n_distinct, size_t *n_generic, size_t *n_ids,
	size_t *n_msgs)
{
	int64_t x0, y0;
	/* user send->recv pairs */
	for (size_t k = 0; o && k < o->n_msgs; k++) {
		const char *eq = strchr(o->msgs[k], '=');
		if (!eq)
			continue;
		size_t sl = (size_t)(eq - o->msgs[k]);
		for (int dir = 1; dir <= 2; dir++) {
			const struct al_name *snd = tm_al_find_name(dir == 1 ? f->a : r->a, o->msgs[k], sl);
			const struct al_name *rcv =
				tm_al_find_name(dir == 1 ? r->a : f->a, eq + 1, strlen(eq + 1));
			if (!snd || !rcv)
				continue;
			struct al_occ so_v[AL_OCC], ro_v[AL_OCC];
			tm_al_occs(snd, so_v);
			tm_al_occs(rcv, ro_v);
			for (uint32_t i = 0; i < snd->n && i < rcv->n && i < AL_MATCH; i++) {
				const struct al_occ *so = &so_v[i], *ro = &ro_v[i];
				if (dir == 1 && sample_ts(f, so, &x0) && sample_ts(r, ro, &y0)) {
					obs_add(ov, x0, wrap_sub(y0, x0), 1);
					(*n_msgs)++;
				} else if (dir == 2 && sample_ts(r, so, &y0) && sample_ts(f, ro, &x0)) {
					obs_add(ov, x0, wrap_sub(y0, x0), 2);
					(*n_msgs)++;
				}
			}
		}
	}
	/* flow and async ids */
	for (size_t i = 0; f->a && i < f->a->n_ids; i++) {
		const struct al_id *x = &f->a->ids[i];
		const struct al_id *y = tm_al_find_id(r->a, x);
		if (!y)
			continue;
		if ((x->have & AL_OUT) && (y->have & AL_IN) && sample_ts(f, &x->out, &x0) &&
		    sample_ts(r, &y->in, &y0)) {
			obs_add(ov, x0, wrap_sub(y0, x0), 1);
			(*n_ids)++;
		} else if ((y->have & AL_OUT) && (x->have & AL_IN) && sample_ts(r, &y->out, &y0) &&
			   sample_ts(f, &x->in, &x0)) {
			obs_add(ov, x0, wrap_sub(y0, x0), 2);
			(*n_ids)++;
		}
	}
	/* instants both files saw equally often */
	for (size_t i = 0; f->a && i < f->a->n_names; i++) {
		const struct al_name *x = &f->a->names[i];
		if (!x->all_instant || x->count > AL_MATCH)
			continue;
		const struct al_name *y = tm_al_find_name(r->a, x->name, x->len);
		if (!y || !y->all_instant || y->count != x->count)
			continue;
		if (generic_name(x->name, x->len)) {
			(*n_generic)++;
			continue;
		}
		struct al_occ xo[AL_OCC], yo[AL_OCC];
		tm_al_occs(x, xo);
		tm_al_occs(y, yo);
		bool used = false;
		for (uint32_t k = 0; k < x->n; k++)
			if (sample_ts(f, &xo[k], &x0) && sample_ts(r, &yo[k], &y0)) {
				obs_add(ov, x0, wrap_sub(y0, x0), 0);
				(*n_names)++;
				used = true;
			}
		*n_distinct += used;
	}
}

/* A file's kept time range, in trace time (0 when it has none). */
static int64_t
range_len(const struct tm_report_file *f)
{
	return f->has_ts ? wrap_sub(f->last_ts, f->first_ts) : 0;
}

/* Ours: whether the evidence behind e can be told from chance.  Two traces
 * that share one name, one id or one message agree on an offset whatever
 * it is; two independent matches that agree on it rarely do by chance.  So:
 * at least two independent pieces (distinct names both saw, flow/async
 * ids, send/receive pairs); the shared instants, when they are all there
 * is, agree with each other (their residual spread after the drift within
 * 10 ms and 1% of the span they cover); and a shift far beyond both
 * traces' lengths (100 times) needs a third piece. */
static void
judge(struct tm_align_estimate *e, size_t n_ids, size_t n_msgs, int64_t len_file, int64_t len_ref)
{
	if (!e->has_offset || e->quality == TM_ALIGN_CONTRADICTORY)
		return;
	size_t pieces = e->n_names + n_ids + n_msgs;
	struct tm_buf b;
	tm_buf_init(&b);
	int64_t spread = e->has_lo && e->has_hi ? wrap_sub(e->hi_ns, e->lo_ns) : 0;
	int64_t tol = 10000000 + e->span_ns / 100;
	uint64_t shift = e->offset_ns < 0 ? (uint64_t)0 - (uint64_t)e->offset_ns : (uint64_t)e->offset_ns;
	uint64_t len = (uint64_t)(len_file > len_ref ? len_file : len_ref);
	if (len < 1000000)
		len = 1000000; /* 1 ms at least */
	if (pieces < 2) {
		tm_buf_addf(&b, "one match (%zu name%s both saw, %zu flow/async id%s, %zu send/receive "
				"pair%s) agrees with any offset",
			    e->n_names, e->n_names == 1 ? "" : "s", n_ids, n_ids == 1 ? "" : "s", n_msgs,
			    n_msgs == 1 ? "" : "s");
	} else if (e->quality == TM_ALIGN_APPROXIMATE && spread > tol) {
		tm_buf_adds(&b, "the shared instants disagree: their offsets spread over ");
		tm_format_duration_ns(spread, &b);
	} else if (shift / 100 > len && pieces < 3) {
		tm_buf_adds(&b, "a shift of ");
		tm_format_duration_ns(e->offset_ns, &b);
		tm_buf_addf(&b, " (%" PRIu64 " times the longer trace) rests on %zu matches", shift / len,
			    pieces);
	}
	if (b.len) {
		e->quality = TM_ALIGN_WEAK;
		e->weak = tm_buf_steal(&b);
	}
	tm_buf_fini(&b);
}

/* Occurrence occ (from 1, in time order) of name in a, copied to *buf;
 * NULL if none.  *count: how many the file has (0: the name is not there). */
static const struct al_occ *
nth(const struct tm_align_samples *a, const char *name, uint32_t occ, struct al_occ *buf,
    uint64_t *count)
{
	const struct al_name *x = tm_al_find_name(a, name, strlen(name));
	*count = x ? x->count : 0;
	if (!x || occ < 1 || occ > x->n)
		return NULL;
	struct al_occ all[AL_OCC];
	tm_al_occs_by_time(x, all);
	*buf = all[occ - 1];
	return buf;
}

enum tm_status
tm_align_run(struct tm_session *s, const struct tm_manifest *cur, const struct tm_align_opts *o,
	     struct tm_align_result *out, struct tm_error *err)
{
	memset(out, 0, sizeof *out);
	struct tm_report *rep = NULL;
	enum tm_status st = tm_session_scan(s, SIZE_MAX, NULL, err);
	if (st != TM_OK)
		return st;
	struct probes P;
	probes_build(s, SIZE_MAX, &P);
	st = tm_session_evaluate_probe(s, cur, P.v, &rep, err);
	if (st != TM_OK) {
		probes_free(&P);
		return st;
	}
	const char *owner = NULL;
	if (rep->tt_file >= 0)
		owner = rep->files[rep->tt_file].path;
	for (size_t i = 0; !owner && i < rep->n_files; i++)
		if (rep->files[i].is_trace && rep->files[i].path)
			owner = rep->files[i].path;
	if (!owner) {
		tm_report_free(rep);
		probes_free(&P);
		return tm_error_set(err, TM_ERR_INVALID, "no trace file to align against");
	}
	out->timeline_ref = xstrdup(owner);
	/* declared pairs first: they must name files of the input */
	for (size_t k = 0; o && k < o->n_pairs; k++) {
		const struct tm_align_pair *p = &o->pairs[k];
		const char *bad = member_of(s, p->file) < 0 ? p->file
				  : member_of(s, p->ref) < 0 ? p->ref
							     : NULL;
		if (bad) {
			tm_report_free(rep);
			probes_free(&P);
			return tm_error_set(err, TM_ERR_INVALID, "--pair: '%s' is not a file of the input",
					    bad);
		}
	}
	out->est = xcalloc(rep->n_files, sizeof *out->est);
	for (size_t i = 0; i < rep->n_files; i++) {
		const struct tm_report_file *rf = &rep->files[i];
		if (!rf->is_trace || !rf->path || !strcmp(rf->path, owner))
			continue;
		const char *ref = owner;
		for (size_t k = 0; o && k < o->n_pairs; k++)
			if (!strcmp(o->pairs[k].file, rf->path))
				ref = o->pairs[k].ref;
		ssize_t fm = (ssize_t)rf->member, rm = member_of(s, ref);
		struct tm_align_estimate *e = &out->est[out->n++];
		e->file = xstrdup(rf->path);
		e->ref = xstrdup(ref);
		e->clock = probes_clock(s, &P, (size_t)fm);
		e->ref_clock = rm >= 0 ? probes_clock(s, &P, (size_t)rm) : 0;
		struct side fs = {s->scans[fm] ? s->scans[fm]->align : NULL, e->clock, P.v[fm]};
		struct side rs = {rm >= 0 && s->scans[rm] ? s->scans[rm]->align : NULL, e->ref_clock,
				  rm >= 0 ? P.v[rm] : NULL};
		struct obsv ov = {0};
		size_t n_names = 0, n_distinct = 0, n_generic = 0, n_ids = 0, n_msgs = 0, n_decl = 0;
		for (size_t k = 0; o && k < o->n_pairs; k++) {
			const struct tm_align_pair *p = &o->pairs[k];
			if (strcmp(p->file, rf->path) || strcmp(p->ref, ref))
				continue;
			struct al_occ xb, yb;
			uint64_t xn, yn;
			const struct al_occ *x = nth(fs.a, p->name, p->occ, &xb, &xn);
			const struct al_occ *y = nth(rs.a, p->ref_name, p->ref_occ, &yb, &yn);
			int64_t xt = 0, yt = 0;
			bool xc = x && sample_ts(&fs, x, &xt), yc = y && sample_ts(&rs, y, &yt);
			if (!xc || !yc) {
				const struct side *bs = !xc ? &fs : &rs;
				const struct al_occ *bo = !xc ? x : y;
				tm_report_free(rep);
				probes_free(&P);
				free(ov.v);
				if (bo)
					return tm_error_set(err, TM_ERR_INVALID,
							    "--pair: occurrence %u of '%s' in %s has no "
							    "time in its trace clock (%s)",
							    !xc ? p->occ : p->ref_occ,
							    !xc ? p->name : p->ref_name,
							    !xc ? p->file : p->ref,
							    why_words(probe_st(bs, bo, NULL)));
				uint32_t want = !x ? p->occ : p->ref_occ;
				uint64_t has = !x ? xn : yn;
				if (want <= has) /* past what the scan keeps (ours: its budget) */
					return tm_error_set(err, TM_ERR_INVALID,
							    "--pair: occurrence %u of '%s' in %s: the file has %llu, "
							    "but tracemerge keeps the times of the first %u only",
							    want, !x ? p->name : p->ref_name,
							    !x ? p->file : p->ref, (unsigned long long)has,
							    AL_OCC);
				return tm_error_set(err, TM_ERR_INVALID,
						    "--pair: no occurrence %u of '%s' in %s (it has %llu)",
						    want, !x ? p->name : p->ref_name,
						    !x ? p->file : p->ref, (unsigned long long)has);
			}
			obs_add(&ov, xt, wrap_sub(wrap_sub(yt, xt), p->delta_ns), 0);
			n_decl++;
		}
		if (!n_decl && fs.a && rs.a)
			collect(&fs, &rs, o, &ov, &n_names, &n_distinct, &n_generic, &n_ids, &n_msgs);
		tm_align_solve(ov.v, ov.n, e);
		e->n_names = n_distinct;
		if (n_decl) {
			e->quality = TM_ALIGN_DECLARED;
			e->n_declared = n_decl;
			e->n_same = 0;
		} else {
			judge(e, n_ids, n_msgs, range_len(rf), rm >= 0 ? range_len(&rep->files[rm]) : 0);
		}
		struct tm_buf b;
		tm_buf_init(&b);
		if (!ov.n)
			tm_buf_addf(&b, "no event, flow or async id that both %s and %s carry", rf->path,
				    ref);
		else if (n_decl)
			tm_buf_addf(&b, "%zu declared pair%s", n_decl, n_decl == 1 ? "" : "s");
		else
			tm_buf_addf(&b,
				    "%zu message%s %s -> %s and %zu back (%zu flow/async ids, %zu named "
				    "send/receive pairs), %zu instant%s both saw",
				    e->n_to_ref, e->n_to_ref == 1 ? "" : "s", rf->path, ref, e->n_from_ref,
				    n_ids, n_msgs, e->n_same, e->n_same == 1 ? "" : "s");
		if (!n_decl && e->n_same)
			tm_buf_addf(&b, " (%zu name%s)", n_distinct, n_distinct == 1 ? "" : "s");
		if (n_generic)
			tm_buf_addf(&b, "; %zu name%s both saw that every trace of its producer has (not "
					"evidence)",
				    n_generic, n_generic == 1 ? "" : "s");
		why_unusable(&fs, rf->path, &b, &e->n_unusable);
		why_unusable(&rs, ref, &b, &e->n_unusable);
		e->evidence = tm_buf_steal(&b);
		free(ov.v);
	}
	tm_report_free(rep);
	probes_free(&P);
	return TM_OK;
}

void
tm_align_offset_spec(const struct tm_align_estimate *e, struct tm_offset_spec *sp)
{
	memset(sp, 0, sizeof *sp);
	sp->src.file = e->file;
	sp->has_offset = true;
	sp->offset_ns = e->offset_ns;
	sp->ref.file = e->ref;
	sp->ref.has_clock = true;
	sp->ref.clock = e->ref_clock;
	sp->src.has_clock = true;
	sp->src.clock = e->clock;
	sp->src.is_pin = !e->clock;
}

/* ---- words (ours): the CLI and the workbench print the same ---- */

void
tm_align_describe(const struct tm_align_estimate *e, struct tm_buf *b)
{
	if (!e->has_offset) {
		tm_buf_addf(b, "no estimate (not enough evidence): %s", e->evidence ? e->evidence : "");
		return;
	}
	if (e->quality == TM_ALIGN_WEAK) {
		tm_buf_addf(b, "not enough evidence: %s; not offered (it would be ",
			    e->weak ? e->weak : "");
		tm_format_duration_ns(e->offset_ns, b);
		tm_buf_adds(b, ")");
		return;
	}
	tm_format_duration_ns(e->offset_ns, b);
	tm_buf_addf(b, " [%s]", tm_align_quality_name(e->quality));
	if (e->quality == TM_ALIGN_CONTRADICTORY) {
		tm_buf_adds(b, e->n_same ? " the shared instants say so, but the messages allow"
					 : " messages ask for");
		if (e->has_lo) {
			tm_buf_adds(b, " at least ");
			tm_format_duration_ns(e->lo_ns, b);
		}
		if (e->has_lo && e->has_hi)
			tm_buf_adds(b, " and");
		if (e->has_hi) {
			tm_buf_adds(b, " at most ");
			tm_format_duration_ns(e->hi_ns, b);
		}
	} else if (e->has_lo && e->has_hi) {
		tm_buf_adds(b, " bounds ");
		tm_format_duration_ns(e->lo_ns, b);
		tm_buf_adds(b, " .. ");
		tm_format_duration_ns(e->hi_ns, b);
	} else if (e->has_hi || e->has_lo) {
		tm_buf_adds(b, e->has_hi ? " at most " : " at least ");
		tm_format_duration_ns(e->has_hi ? e->hi_ns : e->lo_ns, b);
		tm_buf_adds(b, " (messages one way only: the latency is unknown)");
	}
}

void
tm_align_ppm_text(double ppm, struct tm_buf *b)
{
	double r = round(ppm * 1e3) / 1e3;
	tm_buf_addf(b, "%.3f", r == 0 ? 0.0 : r); /* r == 0 holds for -0 too */
}

void
tm_align_drift_sentence(const struct tm_align_estimate *e, struct tm_buf *b)
{
	if (!e->has_drift)
		return;
	tm_buf_adds(b, "drift ");
	tm_align_ppm_text(e->drift_ppm, b);
	tm_buf_adds(b, " ppm: the clocks drift by ");
	tm_format_duration_ns(e->drift_ns, b);
	tm_buf_adds(b, " over ");
	tm_format_duration_ns(e->span_ns, b);
	tm_buf_adds(b, "; the offset fits the middle (a manifest holds one offset)");
}

/* ---- the events a pair can be picked from ---- */

static int
cmp_event(const void *pa, const void *pb)
{
	const struct tm_align_event *a = pa, *b = pb;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	int c = strcmp(a->name, b->name);
	return c ? c : (a->occ > b->occ) - (a->occ < b->occ);
}

enum tm_status
tm_align_events(struct tm_session *s, const char *file, struct tm_align_events *out,
		struct tm_error *err)
{
	memset(out, 0, sizeof *out);
	ssize_t m = member_of(s, file);
	if (m < 0)
		return tm_error_set(err, TM_ERR_INVALID, "'%s' is not a file of the input",
				    file ? file : "");
	enum tm_status st = tm_session_scan(s, (size_t)m, NULL, err);
	if (st != TM_OK)
		return st;
	/* samples on other clocks or machines: their times as the replay
	 * converts them (under the input's own manifest) */
	struct probes P;
	probes_build(s, (size_t)m, &P);
	struct side sd = {s->scans[m] ? s->scans[m]->align : NULL, probes_clock(s, &P, (size_t)m),
			  NULL};
	if (P.v[m]) {
		struct tm_report *rep = NULL;
		st = tm_session_evaluate_probe(s, NULL, P.v, &rep, err);
		if (st != TM_OK) {
			probes_free(&P);
			return st;
		}
		tm_report_free(rep);
		sd.pr = P.v[m];
	}
	size_t cap = 0;
	for (size_t i = 0; sd.a && i < sd.a->cap_names; i++) {
		const struct al_name *x = &sd.a->names[i];
		if (!x->h)
			continue;
		struct al_occ occ[AL_OCC];
		tm_al_occs_by_time(x, occ); /* #N in time order, as --pair reads it */
		for (uint32_t k = 0; k < x->n; k++) {
			int64_t ts;
			if (!sample_ts(&sd, &occ[k], &ts))
				continue;
			XGROW(out->v, cap, out->n + 1);
			struct tm_align_event *ev = &out->v[out->n++];
			ev->name = xstrdup(x->name);
			ev->occ = k + 1;
			ev->ts = ts;
			ev->count = x->count;
			ev->instant = x->all_instant;
		}
	}
	probes_free(&P);
	out->clock = sd.clock;
	out->names_full = sd.a && sd.a->names_full;
	if (out->n > 1)
		qsort(out->v, out->n, sizeof *out->v, cmp_event);
	return TM_OK;
}

void
tm_align_events_fini(struct tm_align_events *ev)
{
	for (size_t i = 0; i < ev->n; i++)
		free(ev->v[i].name);
	free(ev->v);
	memset(ev, 0, sizeof *ev);
}

/* SPDX-License-Identifier: MIT */
/*
 * gecko scanner: a Firefox Profiler (or simpleperf-to-gecko) JSON profile,
 * as trace_processor's GeckoTraceTokenizer reads it
 * (importers/gecko/gecko_trace_tokenizer.cc).  The file is buffered and
 * parsed at its end (OnPushDataToSorter), as there; a syntax error fails
 * the import.  Only meta.categories, shared and threads are read
 * (meta.startTime and sub-process profiles are ignored).
 *
 * Per thread: its samples (preprocessed arrays or the legacy schema/data
 * tables), then its markers (preprocessed arrays), each converted with
 * ConvertDefaultClockToTraceTime (the file's private TRACE_FILE clock, so
 * a PIN moves it) at (int64)(ms * 1000 * 1000); a sample is kept only if its
 * stack resolves to a callsite, a marker only if its name resolves to a
 * string.  Before the first pushed sample of a thread, and again before its
 * first pushed marker, a ThreadMetadata event is pushed at the same
 * timestamp: two pushes, two negative drops.
 *
 * What is not matched: duplicate keys (trace_processor's ForEachField sees
 * every occurrence, appending or replacing per field; the tree here keeps
 * the last), and numbers past 2^32 read as uint32 (cast as x86 does, not
 * checked against the oracle).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "scan.h"
#include "align_scan.h"

/* ours: the JSON tree of a gecko profile costs about 40 bytes of memory a
 * byte of input (a 256 MiB profile peaks past 10 GB), so a bigger one is
 * read to its end, not held, and not predicted (tm_scan_whole). */
#define GECKO_PREDICTED_MAX (64ull << 20)
#include "json_dom.h"

/* A number of the tree as SimpleJsonParser gives it: int64 or double. */
static bool
num(const cJSON *v, double *d, bool *is_int, int64_t *i)
{
	if (!tm_mj_is_num(v))
		return false;
	if (tm_mj_is_int(v, i)) {
		*is_int = true;
		*d = (double)*i;
		return true;
	}
	*is_int = false;
	*d = strtod(v->valuestring, NULL);
	return true;
}

/* GetUint32 */
static bool
get_u32(const cJSON *v, uint32_t *out)
{
	double d;
	bool is_int;
	int64_t i;
	if (!num(v, &d, &is_int, &i))
		return false;
	if (is_int) {
		if (i < 0)
			return false;
		*out = (uint32_t)i;
		return true;
	}
	if (!(d >= 0))
		return false;
	*out = d < 9223372036854775808.0 ? (uint32_t)(uint64_t)(int64_t)d : 0;
	return true;
}

/* GetDouble */
static bool
get_double(const cJSON *v, double *out)
{
	bool is_int;
	int64_t i;
	return num(v, out, &is_int, &i);
}

/* The x86 (int64) of a double: INT64_MIN out of range. */
static int64_t
trunc_i64(double d)
{
	if (!(d > -9223372036854775808.0 && d < 9223372036854775808.0))
		return INT64_MIN;
	return (int64_t)d;
}

/* Collect*Array: the elements of the wanted type, the others skipped. */
static uint32_t *
collect_u32(const cJSON *a, size_t *n)
{
	size_t cap = (size_t)cJSON_GetArraySize(a), k = 0;
	uint32_t *v = xcalloc(cap + 1, sizeof *v);
	for (const cJSON *e = a->child; e; e = e->next)
		if (get_u32(e, &v[k]))
			k++;
	*n = k;
	return v;
}

static double *
collect_double(const cJSON *a, size_t *n)
{
	size_t cap = (size_t)cJSON_GetArraySize(a), k = 0;
	double *v = xcalloc(cap + 1, sizeof *v);
	for (const cJSON *e = a->child; e; e = e->next)
		if (get_double(e, &v[k]))
			k++;
	*n = k;
	return v;
}

/* A legacy table: {"schema": {key: index}, "data": [[...], ...]} */
struct table {
	const cJSON *schema, *data;
};

static bool
schema_index(const struct table *t, const char *key, uint32_t *out)
{
	if (!t->schema)
		return false;
	for (const cJSON *e = t->schema->child; e; e = e->next)
		if (e->string && !strcmp(e->string, key)) {
			/* ParseSchema: GetUint32().value_or(0) */
			if (!get_u32(e, out))
				*out = 0;
			return true;
		}
	return false;
}

/* A row's cell as ParseDataArray keeps it: uint32, double or nothing. */
enum cell { C_NONE, C_U32, C_DOUBLE };
static enum cell
cell(const cJSON *row, uint32_t idx, uint32_t *u, double *d)
{
	const cJSON *e = cJSON_GetArrayItem(row, (int)idx);
	if (!e || cJSON_IsNull(e))
		return C_NONE;
	if (get_u32(e, u))
		return C_U32;
	if (get_double(e, d))
		return C_DOUBLE;
	return C_NONE;
}

static size_t
rows(const cJSON *data)
{
	size_t n = 0;
	for (const cJSON *e = data ? data->child : NULL; e; e = e->next)
		n += cJSON_IsArray(e); /* ParseDataArray skips what is no array */
	return n;
}

struct thread {
	const cJSON *o;
	const char *name;
	size_t n_strings;
	bool is_pre;
	struct table frame_t, stack_t, samples_t;
	const cJSON *func, *func_names, *prefix, *frame, *s_stack, *s_time;
	const cJSON *m_name, *m_start, *m_end, *m_phase, *m_cat;
};

static const cJSON *
field(const cJSON *o, const char *key, bool want_obj)
{
	const cJSON *v = tm_mj_member(o, key);
	if (!v)
		return NULL;
	return (want_obj ? cJSON_IsObject(v) : cJSON_IsArray(v)) ? v : NULL;
}

static void
read_thread(const cJSON *o, struct thread *t)
{
	memset(t, 0, sizeof *t);
	t->o = o;
	const cJSON *v = tm_mj_member(o, "name");
	t->name = tm_mj_is_str(v) ? v->valuestring : "";
	const cJSON *st = field(o, "stringTable", false), *sa = field(o, "stringArray", false);
	if (sa)
		t->is_pre = true;
	/* the later key of the two in the object wins (both assign strings) */
	const cJSON *strs = NULL;
	for (const cJSON *e = o->child; e; e = e->next)
		if ((e == st || e == sa))
			strs = e;
	for (const cJSON *e = strs ? strs->child : NULL; e; e = e->next)
		t->n_strings += tm_mj_is_str(e);
	const cJSON *ft = field(o, "frameTable", true);
	if (ft) {
		t->frame_t.schema = field(ft, "schema", true);
		t->frame_t.data = field(ft, "data", false);
		if ((t->func = field(ft, "func", false)))
			t->is_pre = true;
	}
	const cJSON *fu = field(o, "funcTable", true);
	if (fu)
		t->func_names = field(fu, "name", false);
	const cJSON *sk = field(o, "stackTable", true);
	if (sk) {
		t->stack_t.schema = field(sk, "schema", true);
		t->stack_t.data = field(sk, "data", false);
		if ((t->prefix = field(sk, "prefix", false)))
			t->is_pre = true;
		t->frame = field(sk, "frame", false);
	}
	const cJSON *sm = field(o, "samples", true);
	if (sm) {
		t->samples_t.schema = field(sm, "schema", true);
		t->samples_t.data = field(sm, "data", false);
		if ((t->s_stack = field(sm, "stack", false)))
			t->is_pre = true;
		t->s_time = field(sm, "time", false);
	}
	const cJSON *mk = field(o, "markers", true);
	if (mk) {
		t->m_name = field(mk, "name", false);
		t->m_start = field(mk, "startTime", false);
		t->m_end = field(mk, "endTime", false);
		t->m_phase = field(mk, "phase", false);
		t->m_cat = field(mk, "category", false);
	}
}

/* ProcessLegacyFramesAndStacks / ProcessPreprocessedFramesAndStacks: how
 * many callsites (the only thing a sample's fate depends on). */
static size_t
callsites(const struct thread *t, size_t n_strings)
{
	size_t n_frames = 0, n_cs = 0;
	if (t->is_pre) {
		size_t nf = 0, nn = 0, np = 0, nfr = 0;
		uint32_t *fi = t->func ? collect_u32(t->func, &nf) : NULL;
		uint32_t *fn = t->func_names ? collect_u32(t->func_names, &nn) : NULL;
		for (size_t i = 0; i < nf; i++)
			n_frames += fi[i] < nn && fn[fi[i]] < n_strings;
		/* prefixes: every element (null or not a uint32 still counts) */
		for (const cJSON *e = t->prefix ? t->prefix->child : NULL; e; e = e->next)
			np++;
		uint32_t *fr = t->frame ? collect_u32(t->frame, &nfr) : NULL;
		for (size_t i = 0; i < np && i < nfr; i++)
			n_cs += fr[i] < n_frames;
		free(fi);
		free(fn);
		free(fr);
		return n_cs;
	}
	uint32_t loc, pre, fra, u;
	double d;
	if (!schema_index(&t->frame_t, "location", &loc) || !schema_index(&t->stack_t, "prefix", &pre) ||
	    !schema_index(&t->stack_t, "frame", &fra))
		return 0;
	for (const cJSON *r = t->frame_t.data ? t->frame_t.data->child : NULL; r; r = r->next) {
		if (!cJSON_IsArray(r) || loc >= (uint32_t)cJSON_GetArraySize(r))
			continue;
		n_frames += cell(r, loc, &u, &d) == C_U32 && u < n_strings;
	}
	for (const cJSON *r = t->stack_t.data ? t->stack_t.data->child : NULL; r; r = r->next) {
		uint32_t sz = cJSON_IsArray(r) ? (uint32_t)cJSON_GetArraySize(r) : 0;
		if (!cJSON_IsArray(r) || pre >= sz || fra >= sz)
			continue;
		n_cs += cell(r, fra, &u, &d) == C_U32 && u < n_frames;
	}
	return n_cs;
}

struct gk {
	struct tm_scan *sc;
	const struct tm_scan_ctl *ctl;
};

/* One pushed event (and, the first time of its list, the thread's
 * metadata before it at the same time). */
static void
push(struct gk *g, int64_t ts, bool *meta, const char *name, char phase, int64_t dur,
     uint64_t track)
{
	struct tm_scan *sc = g->sc;
	bool keep = g->ctl && g->ctl->keep_events;
	if (!*meta) {
		/* converted once there: the metadata shares the event's result */
		*meta = true;
		uint32_t md = keep ? tm_oplog_detail(&sc->log, "thread metadata", 15, 'M', track, -1) : 0;
		sc->n_events++;
		tm_oplog_convert(&sc->log, 0, 0, 0, ts, TM_CONV_FAIL_DROP | TM_CONV_SUPPRESS, md, 0);
	}
	struct tm_scan_event ev = {.ts = ts, .name = name, .name_len = strlen(name), .phase = phase,
				   .align = phase == 'P' ? -1 : phase == 'i' ? AL_INSTANT : 0,
				   .track = track, .dur = dur};
	tm_scan_event(sc, g->ctl, &ev, 0);
}

static void
samples(struct gk *g, const struct thread *t, size_t n_cs, bool pre, uint64_t track)
{
	bool meta = false;
	if (pre) {
		size_t nt = 0;
		double *tm = t->s_time ? collect_double(t->s_time, &nt) : NULL;
		size_t i = 0;
		for (const cJSON *e = t->s_stack ? t->s_stack->child : NULL; e && i < nt;
		     e = e->next, i++) {
			uint32_t s;
			/* ParseOptionalUint32Array: null or not a uint32: no value */
			if (cJSON_IsNull(e) || !get_u32(e, &s) || s >= n_cs)
				continue;
			push(g, trunc_i64(tm[i] * 1000 * 1000), &meta, t->name, 'P', -1, track);
		}
		free(tm);
		return;
	}
	uint32_t si, ti;
	if (!schema_index(&t->samples_t, "stack", &si) || !schema_index(&t->samples_t, "time", &ti))
		return;
	for (const cJSON *r = t->samples_t.data ? t->samples_t.data->child : NULL; r; r = r->next) {
		uint32_t sz = cJSON_IsArray(r) ? (uint32_t)cJSON_GetArraySize(r) : 0;
		if (!cJSON_IsArray(r) || si >= sz || ti >= sz)
			continue;
		uint32_t s, u;
		double d = 0, tv = 0;
		if (cell(r, si, &s, &d) != C_U32 || s >= n_cs)
			continue;
		enum cell c = cell(r, ti, &u, &d);
		tv = c == C_DOUBLE ? d : c == C_U32 ? (double)u : 0;
		push(g, trunc_i64(tv * 1000 * 1000), &meta, t->name, 'P', -1, track);
	}
}

static void
markers(struct gk *g, const struct thread *t, const cJSON *strs, size_t n_strings, uint64_t track)
{
	size_t nn = 0, ns = 0, ne = 0, np = 0, nc = 0;
	uint32_t *nm = t->m_name ? collect_u32(t->m_name, &nn) : NULL;
	double *st = t->m_start ? collect_double(t->m_start, &ns) : NULL;
	double *en = t->m_end ? collect_double(t->m_end, &ne) : NULL;
	uint32_t *ph = t->m_phase ? collect_u32(t->m_phase, &np) : NULL;
	uint32_t *ca = t->m_cat ? collect_u32(t->m_cat, &nc) : NULL;
	size_t n = nn;
	n = ns < n ? ns : n;
	n = ne < n ? ne : n;
	n = np < n ? np : n;
	n = nc < n ? nc : n;
	bool meta = false;
	for (size_t i = 0; i < n; i++) {
		if (nm[i] >= n_strings)
			continue;
		/* the nm[i]-th string of the list (only strings were kept) */
		const char *name = "";
		size_t k = 0;
		for (const cJSON *e = strs ? strs->child : NULL; e; e = e->next)
			if (tm_mj_is_str(e) && k++ == nm[i]) {
				name = e->valuestring;
				break;
			}
		uint8_t phase = (uint8_t)ph[i];
		double ms = phase == 3 ? en[i] : st[i]; /* kIntervalEnd: endTime */
		int64_t dur = phase == 1 ? trunc_i64((en[i] - st[i]) * 1000 * 1000) : 0;
		char p = phase == 0 ? 'i' : phase == 1 ? 'X' : phase == 2 ? 'B' : phase == 3 ? 'E' : 'i';
		push(g, trunc_i64(ms * 1000 * 1000), &meta, name, p, dur < 0 ? 0 : dur, track);
	}
	free(nm);
	free(st);
	free(en);
	free(ph);
	free(ca);
}

static const cJSON *
strings_of(const cJSON *o)
{
	const cJSON *st = field(o, "stringTable", false), *sa = field(o, "stringArray", false), *s = NULL;
	for (const cJSON *e = o->child; e; e = e->next)
		if (e == st || e == sa)
			s = e;
	return s;
}

static void
gk_done(void *self, const uint8_t *d, size_t len)
{
	struct gk *g = self;
	char msg[512];
	struct tm_mj_stop stop;
	cJSON *root = tm_mj_parse((const char *)d, len, msg, sizeof msg, &stop);
	if (!root || !cJSON_IsObject(root)) {
		struct tm_buf t;
		tm_buf_init(&t);
		tm_buf_addf(&t, "Syntactic error while parsing Gecko trace: %s; please use an external "
				"JSON tool (e.g. jq) to understand the source of the error.",
			    root ? "Expected an object" : msg);
		tm_oplog_fatal(&g->sc->log, 0, t.data, len);
		tm_buf_fini(&t);
		g->sc->failed = true;
		cJSON_Delete(root);
		return;
	}
	const cJSON *sh = field(root, "shared", true), *threads = field(root, "threads", false);
	struct thread shared;
	bool shared_frames = false, shared_pre = false;
	size_t shared_cs = 0;
	const cJSON *shared_strs = NULL;
	if (sh) {
		read_thread(sh, &shared);
		shared_strs = strings_of(sh);
		size_t nf = 0;
		if (shared.func)
			free(collect_u32(shared.func, &nf));
		shared_frames = nf > 0 || rows(shared.frame_t.data) > 0;
		shared_pre = shared.is_pre;
		if (shared_frames)
			shared_cs = callsites(&shared, shared.n_strings);
	}
	uint64_t track = 0;
	for (const cJSON *to = threads ? threads->child : NULL; to; to = to->next) {
		if (!cJSON_IsObject(to))
			continue;
		struct thread t;
		read_thread(to, &t);
		track++;
		const cJSON *strs = strings_of(to);
		size_t n_strings = t.n_strings;
		if (!(t.n_strings || !sh)) {
			strs = shared_strs;
			n_strings = shared.n_strings;
		}
		if (shared_frames)
			samples(g, &t, shared_cs, t.is_pre || shared_pre, track);
		else
			samples(g, &t, callsites(&t, n_strings), t.is_pre, track);
		markers(g, &t, strs, n_strings, track);
	}
	cJSON_Delete(root);
}

/* The sniffer (gecko_trace_tokenizer.cc, GeckoImporter::Sniff): the
 * whitespace-stripped lookahead starts {"meta" or {"libs". */
bool
tm_sniff_gecko(struct tm_sniff_in *in)
{
	tm_sniff_strip(in);
	return tm_sniff_starts(in->s, in->sn, "{\"meta\"") || tm_sniff_starts(in->s, in->sn, "{\"libs\"");
}

enum tm_status
tm_scan_gecko(struct tm_stream *st, struct tm_scan *sc, const struct tm_scan_ctl *ctl,
	      struct tm_error *err)
{
	struct gk g = {sc, ctl};
	return tm_scan_whole(st, sc, ctl, err, "gecko profile", GECKO_PREDICTED_MAX, gk_done, &g);
}

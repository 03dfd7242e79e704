#ifndef TM_CLOCKGRAPH_REF_H
#define TM_CLOCKGRAPH_REF_H
/* SPDX-License-Identifier: MIT */
/*
 * The clock graph as it was before the group representation (commit
 * 12161a2's engine/clockgraph.c, symbols renamed ref_*): every pair of a
 * snapshot's clocks stored as two edges, conversion a breadth-first search
 * over them exactly as trace_processor's ClockSynchronizer::FindPath walks
 * its std::set<ClockGraphEdge>.  Quadratic, kept only as the reference the
 * differential test in test_clockgraph.c compares engine/clockgraph.c with.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct series {
	uint32_t hash;
	size_t n, cap;
	uint32_t *ids;
	int64_t *ts;
};

struct edge {
	uint32_t dst; /* node index */
	uint32_t hash;
};

struct node {
	struct tm_clockid id;
	uint64_t unit;
	bool is_incremental;
	bool is_nonmono;
	int64_t last_ns;
	struct series *series;
	size_t n_series, cap_series;
	struct edge *edges; /* sorted by (dst clock id, hash) */
	size_t n_edges, cap_edges;
};

struct ref_graph {
	struct node *nodes;
	size_t n_nodes, cap_nodes;
	/* open addressing: index+1, 0 empty */
	uint32_t *slots;
	size_t n_slots;
	uint32_t next_snapshot;
	/* BFS scratch */
	struct qent {
		uint32_t node, parent, hash, depth;
	} *queue;
	size_t cap_queue;
};

static void
ref_clockid_str(struct tm_clockid c, char *buf, size_t cap)
{
	if (c.seq == 0 && c.tf == 0 && c.machine == 0)
		snprintf(buf, cap, "%" PRIu32, c.clock);
	else
		snprintf(buf, cap, "%" PRIu32 "(seq=%" PRIu32 ",tf=%" PRIu32 ",m=%" PRIu32 ")", c.clock,
			 c.seq, c.tf, c.machine);
}

static int
cmp_id(struct tm_clockid a, struct tm_clockid b)
{
	if (a.clock != b.clock)
		return a.clock < b.clock ? -1 : 1;
	if (a.seq != b.seq)
		return a.seq < b.seq ? -1 : 1;
	if (a.tf != b.tf)
		return a.tf < b.tf ? -1 : 1;
	if (a.machine != b.machine)
		return a.machine < b.machine ? -1 : 1;
	return 0;
}

static uint64_t
fmix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static size_t
slot_of(struct tm_clockid c, size_t n_slots)
{
	uint64_t h = fmix64(((uint64_t)c.clock << 32 | c.seq) ^ fmix64((uint64_t)c.tf << 32 | c.machine));
	return (size_t)(h & (n_slots - 1));
}

static struct ref_graph *
ref_graph_new(void)
{
	struct ref_graph *g = xcalloc(1, sizeof *g);
	g->n_slots = 64;
	g->slots = xcalloc(g->n_slots, sizeof *g->slots);
	return g;
}

static void
ref_graph_free(struct ref_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n_nodes; i++) {
		struct node *nd = &g->nodes[i];
		for (size_t j = 0; j < nd->n_series; j++) {
			free(nd->series[j].ids);
			free(nd->series[j].ts);
		}
		free(nd->series);
		free(nd->edges);
	}
	free(g->nodes);
	free(g->slots);
	free(g->queue);
	free(g);
}

static long
find_node(const struct ref_graph *g, struct tm_clockid c)
{
	size_t mask = g->n_slots - 1;
	for (size_t s = slot_of(c, g->n_slots);; s = (s + 1) & mask) {
		uint32_t v = g->slots[s];
		if (!v)
			return -1;
		if (tm_clockid_eq(g->nodes[v - 1].id, c))
			return (long)(v - 1);
	}
}

static void
rehash(struct ref_graph *g)
{
	free(g->slots);
	g->n_slots *= 2;
	g->slots = xcalloc(g->n_slots, sizeof *g->slots);
	for (size_t i = 0; i < g->n_nodes; i++) {
		size_t s = slot_of(g->nodes[i].id, g->n_slots);
		while (g->slots[s])
			s = (s + 1) & (g->n_slots - 1);
		g->slots[s] = (uint32_t)i + 1;
	}
}

static uint32_t
get_node(struct ref_graph *g, struct tm_clockid c)
{
	long i = find_node(g, c);
	if (i >= 0)
		return (uint32_t)i;
	if ((g->n_nodes + 1) * 2 > g->n_slots)
		rehash(g);
	XGROW(g->nodes, g->cap_nodes, g->n_nodes + 1);
	struct node *nd = &g->nodes[g->n_nodes];
	memset(nd, 0, sizeof *nd);
	nd->id = c;
	size_t s = slot_of(c, g->n_slots);
	while (g->slots[s])
		s = (s + 1) & (g->n_slots - 1);
	g->slots[s] = (uint32_t)g->n_nodes + 1;
	return (uint32_t)g->n_nodes++;
}

static bool
ref_graph_knows(const struct ref_graph *g, struct tm_clockid c)
{
	return find_node(g, c) >= 0;
}

static uint32_t
ref_graph_n_snapshots(const struct ref_graph *g)
{
	return g->next_snapshot;
}

static struct series *
get_series(struct node *nd, uint32_t hash, bool create)
{
	for (size_t i = 0; i < nd->n_series; i++)
		if (nd->series[i].hash == hash)
			return &nd->series[i];
	if (!create)
		return NULL;
	XGROW(nd->series, nd->cap_series, nd->n_series + 1);
	struct series *s = &nd->series[nd->n_series++];
	memset(s, 0, sizeof *s);
	s->hash = hash;
	return s;
}

static void
add_edge(struct ref_graph *g, uint32_t src, uint32_t dst, uint32_t hash)
{
	struct node *nd = &g->nodes[src];
	struct tm_clockid did = g->nodes[dst].id;
	size_t lo = 0, hi = nd->n_edges;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct edge *e = &nd->edges[mid];
		int c = cmp_id(g->nodes[e->dst].id, did);
		if (c < 0 || (c == 0 && e->hash < hash))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nd->n_edges && nd->edges[lo].dst == dst && nd->edges[lo].hash == hash)
		return; /* a set: already there */
	XGROW(nd->edges, nd->cap_edges, nd->n_edges + 1);
	memmove(&nd->edges[lo + 1], &nd->edges[lo], (nd->n_edges - lo) * sizeof *nd->edges);
	nd->edges[lo].dst = dst;
	nd->edges[lo].hash = hash;
	nd->n_edges++;
}

static uint32_t
snapshot_hash(const struct tm_graph_clock *c, size_t n)
{
	/* base::MurmurHashCombiner over each ClockId's four fields. */
	uint64_t h = 0xe17a1465ULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t f[4] = {c[i].id.clock, c[i].id.seq, c[i].id.tf, c[i].id.machine};
		for (int k = 0; k < 4; k++)
			h ^= fmix64(f[k]) + 0x9e3779b9ULL + (h << 6) + (h >> 2);
	}
	return (uint32_t)h;
}

static bool
ref_graph_add_snapshot_hashed(struct ref_graph *g, const struct tm_graph_clock *c, size_t n,
			      uint32_t hash, struct tm_clockid tt, char *msg, size_t msg_cap)
{
	uint32_t snap = g->next_snapshot++;
	char idb[96];
	uint32_t *idx = xmalloc((n ? n : 1) * sizeof *idx);
	bool ok = true;
	for (size_t i = 0; i < n && ok; i++) {
		uint32_t ni = get_node(g, c[i].id);
		idx[i] = ni;
		struct node *nd = &g->nodes[ni];
		ref_clockid_str(c[i].id, idb, sizeof idb);
		if (nd->n_series == 0) {
			if (c[i].is_incremental && c[i].id.seq == 0) {
				snprintf(msg, msg_cap,
					 "Clock sync error: the global clock with id=%s cannot use "
					 "incremental encoding; this is only supported for "
					 "sequence-scoped clocks.",
					 idb);
				ok = false;
				break;
			}
			nd->unit = c[i].unit;
			nd->is_incremental = c[i].is_incremental;
		} else if (nd->unit != c[i].unit || nd->is_incremental != c[i].is_incremental) {
			snprintf(msg, msg_cap,
				 "Clock sync error: the clock domain with id=%s (unit=%" PRId64
				 ", incremental=%d), was previously registered with different "
				 "properties (unit=%" PRId64 ", incremental=%d).",
				 idb, (int64_t)c[i].unit, c[i].is_incremental, (int64_t)nd->unit,
				 nd->is_incremental);
			ok = false;
			break;
		}
		if (tm_clockid_eq(c[i].id, tt) && nd->unit != 1) {
			snprintf(msg, msg_cap,
				 "Clock sync error: the trace clock (id=%s) must always use "
				 "nanoseconds as unit multiplier.",
				 idb);
			ok = false;
			break;
		}
		int64_t ts_ns = wrap_mul(c[i].ts, (int64_t)nd->unit);
		nd->last_ns = ts_ns;
		struct series *s = get_series(nd, hash, true);
		if (s->n && s->ids[s->n - 1] == snap) {
			snprintf(msg, msg_cap,
				 "Clock sync error: duplicate clock domain with id=%s at snapshot %" PRIu32
				 ".",
				 idb, snap);
			ok = false;
			break;
		}
		if (s->n && ts_ns < s->ts[s->n - 1]) {
			if (tm_clockid_eq(c[i].id, tt)) {
				snprintf(msg, msg_cap,
					 "Clock sync error: the trace clock (id=%s) is not monotonic at "
					 "snapshot %" PRIu32 ". %" PRId64 " not >= %" PRId64 ".",
					 idb, snap, ts_ns, s->ts[s->n - 1]);
				ok = false;
				break;
			}
			nd->is_nonmono = true;
			nd->n_edges = 0;
		}
		if (s->n == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 4;
			s->ids = xrealloc(s->ids, s->cap * sizeof *s->ids);
			s->ts = xrealloc(s->ts, s->cap * sizeof *s->ts);
		}
		s->ids[s->n] = snap;
		s->ts[s->n] = ts_ns;
		s->n++;
	}
	if (ok) {
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++) {
				if (!g->nodes[idx[i]].is_nonmono)
					add_edge(g, idx[i], idx[j], hash);
				if (!g->nodes[idx[j]].is_nonmono)
					add_edge(g, idx[j], idx[i], hash);
			}
	}
	free(idx);
	return ok;
}

static bool
ref_graph_add_snapshot(struct ref_graph *g, const struct tm_graph_clock *c, size_t n,
		       struct tm_clockid tt, char *msg, size_t msg_cap)
{
	return ref_graph_add_snapshot_hashed(g, c, n, snapshot_hash(c, n), tt, msg, msg_cap);
}

/* BFS as FindPath: returns the queue index of the path's last entry + the
 * final edge through *last_hash, or -1. */
static long
find_path(struct ref_graph *g, uint32_t src, uint32_t dst, uint32_t *last_hash)
{
	size_t head = 0, tail = 0;
	XGROW(g->queue, g->cap_queue, 1);
	g->queue[tail++] = (struct qent){src, UINT32_MAX, 0, 0};
	while (head < tail) {
		struct qent cur = g->queue[head];
		size_t cur_i = head++;
		if (cur.depth >= 4)
			continue;
		const struct node *nd = &g->nodes[cur.node];
		for (size_t e = 0; e < nd->n_edges; e++) {
			if (nd->edges[e].dst == dst) {
				*last_hash = nd->edges[e].hash;
				return (long)cur_i;
			}
			/* Paths of 4 edges are never expanded, so don't queue them. */
			if (cur.depth + 1 >= 4)
				continue;
			XGROW(g->queue, g->cap_queue, tail + 1);
			nd = &g->nodes[cur.node];
			g->queue[tail++] =
				(struct qent){nd->edges[e].dst, (uint32_t)cur_i, nd->edges[e].hash,
					      cur.depth + 1};
		}
	}
	return -1;
}

static int64_t
hop(const struct node *a, const struct node *b, uint32_t hash, int64_t ns)
{
	const struct series *sa = NULL, *sb = NULL;
	for (size_t i = 0; i < a->n_series; i++)
		if (a->series[i].hash == hash)
			sa = &a->series[i];
	for (size_t i = 0; i < b->n_series; i++)
		if (b->series[i].hash == hash)
			sb = &b->series[i];
	if (!sa || !sb || !sa->n)
		return ns;
	/* upper_bound then step back: last ts <= ns, else the first. */
	size_t lo = 0, hi = sa->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sa->ts[mid] <= ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t k = lo ? lo - 1 : 0;
	uint32_t snap = sa->ids[k];
	lo = 0, hi = sb->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sb->ids[mid] < snap)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == sb->n || sb->ids[lo] != snap)
		return ns;
	return wrap_add(ns, wrap_sub(sb->ts[lo], sa->ts[k]));
}

static enum tm_conv_result
ref_graph_convert(struct ref_graph *g, struct tm_clockid src, int64_t ts, struct tm_clockid dst,
		 bool probe, int64_t *out)
{
	if (tm_clockid_eq(src, dst)) {
		*out = ts;
		return TM_CONV_OK;
	}
	long si = find_node(g, src), di = find_node(g, dst);
	if (si < 0)
		return TM_CONV_UNKNOWN_SOURCE;
	if (di < 0)
		return TM_CONV_UNKNOWN_TARGET;
	uint32_t last_hash = 0;
	long qi = find_path(g, (uint32_t)si, (uint32_t)di, &last_hash);
	if (qi < 0)
		return TM_CONV_NO_PATH;
	/* Rebuild the path: nodes n0..nk, hashes h1..hk. */
	uint32_t nodes[6], hashes[6];
	int len = 0;
	nodes[0] = (uint32_t)di;
	hashes[0] = last_hash;
	len = 1;
	for (long q = qi; q >= 0 && g->queue[q].parent != UINT32_MAX; q = g->queue[q].parent) {
		nodes[len] = g->queue[q].node;
		hashes[len] = g->queue[q].hash;
		len++;
	}
	nodes[len] = (uint32_t)si; /* path runs nodes[len] -> ... -> nodes[0] */
	struct node *sn = &g->nodes[si];
	int64_t ns = wrap_mul(ts, (int64_t)sn->unit);
	if (sn->is_incremental) {
		ns = wrap_add(sn->last_ns, ns);
		if (!probe)
			sn->last_ns = ns;
	}
	for (int i = len; i >= 1; i--)
		ns = hop(&g->nodes[nodes[i]], &g->nodes[nodes[i - 1]], hashes[i - 1], ns);
	*out = ns;
	return TM_CONV_OK;
}

static bool
ref_graph_reaches(struct ref_graph *g, struct tm_clockid a, struct tm_clockid b)
{
	int64_t v;
	return ref_graph_convert(g, a, 0, b, true, &v) == TM_CONV_OK;
}

static const struct series *
series_of(const struct node *nd, uint32_t hash)
{
	for (size_t i = 0; i < nd->n_series; i++)
		if (nd->series[i].hash == hash)
			return &nd->series[i];
	return NULL;
}

static void
piece_push(struct tm_piece **out, size_t *n, size_t *cap, int64_t a, int64_t b, int64_t off)
{
	if (*n && (*out)[*n - 1].off == off && (*out)[*n - 1].b + 1 == a) {
		(*out)[*n - 1].b = b; /* merge equal neighbours */
		return;
	}
	XGROW(*out, *cap, *n + 1);
	(*out)[(*n)++] = (struct tm_piece){a, b, off};
}

static bool
ref_graph_pieces(struct ref_graph *g, struct tm_clockid src, struct tm_clockid dst, int64_t lo,
		int64_t hi, struct tm_piece **out, size_t *n, size_t *cap)
{
	*n = 0;
	if (tm_clockid_eq(src, dst)) {
		piece_push(out, n, cap, lo, hi, 0);
		return true;
	}
	long si = find_node(g, src), di = find_node(g, dst);
	if (si < 0 || di < 0)
		return false;
	if (g->nodes[si].is_incremental || g->nodes[si].unit != 1)
		return false;
	uint32_t last_hash = 0;
	long qi = find_path(g, (uint32_t)si, (uint32_t)di, &last_hash);
	if (qi < 0)
		return false;
	uint32_t nodes[6], hashes[6];
	int len = 1;
	nodes[0] = (uint32_t)di;
	hashes[0] = last_hash;
	for (long q = qi; q >= 0 && g->queue[q].parent != UINT32_MAX; q = g->queue[q].parent) {
		nodes[len] = g->queue[q].node;
		hashes[len] = g->queue[q].hash;
		len++;
	}
	nodes[len] = (uint32_t)si;
	struct tm_piece *cur = NULL, *nxt = NULL;
	size_t n_cur = 0, cap_cur = 0, n_nxt = 0, cap_nxt = 0;
	piece_push(&cur, &n_cur, &cap_cur, lo, hi, 0);
	bool ok = true;
	for (int h = len; h >= 1 && ok; h--) {
		const struct series *sa = series_of(&g->nodes[nodes[h]], hashes[h - 1]);
		const struct series *sb = series_of(&g->nodes[nodes[h - 1]], hashes[h - 1]);
		n_nxt = 0;
		for (size_t i = 0; i < n_cur && ok; i++) {
			int64_t start = cur[i].a, o = cur[i].off;
			if (!sa || !sb || !sa->n) {
				piece_push(&nxt, &n_nxt, &cap_nxt, cur[i].a, cur[i].b, o);
				continue;
			}
			for (;;) {
				int64_t ns;
				if (__builtin_add_overflow(start, o, &ns)) {
					ok = false;
					break;
				}
				size_t l = 0, r = sa->n;
				while (l < r) {
					size_t mid = (l + r) / 2;
					if (sa->ts[mid] <= ns)
						l = mid + 1;
					else
						r = mid;
				}
				size_t k = l ? l - 1 : 0;
				int64_t end = cur[i].b;
				if (l < sa->n) {
					int64_t lim;
					if (__builtin_sub_overflow(sa->ts[l], o, &lim)) {
						ok = false;
						break;
					}
					if (lim - 1 < end)
						end = lim - 1;
				}
				/* translation of this hop for snapshot k */
				size_t bl = 0, br = sb->n;
				uint32_t snap = sa->ids[k];
				while (bl < br) {
					size_t mid = (bl + br) / 2;
					if (sb->ids[mid] < snap)
						bl = mid + 1;
					else
						br = mid;
				}
				int64_t tr = 0;
				if (bl < sb->n && sb->ids[bl] == snap &&
				    __builtin_sub_overflow(sb->ts[bl], sa->ts[k], &tr)) {
					ok = false;
					break;
				}
				if (!(bl < sb->n && sb->ids[bl] == snap))
					tr = 0;
				int64_t no;
				if (__builtin_add_overflow(o, tr, &no)) {
					ok = false;
					break;
				}
				piece_push(&nxt, &n_nxt, &cap_nxt, start, end, no);
				if (end >= cur[i].b)
					break;
				start = end + 1;
			}
		}
		struct tm_piece *t = cur;
		size_t tc = cap_cur;
		cur = nxt;
		n_cur = n_nxt;
		cap_cur = cap_nxt;
		nxt = t;
		cap_nxt = tc;
	}
	if (ok) {
		for (size_t i = 0; i < n_cur; i++)
			piece_push(out, n, cap, cur[i].a, cur[i].b, cur[i].off);
	}
	free(cur);
	free(nxt);
	return ok;
}

#endif

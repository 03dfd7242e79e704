/* SPDX-License-Identifier: MIT */
/*
 * Replay of trace_processor's ClockSynchronizer (util/clock_synchronizer.cc):
 * snapshots, series keyed by a 32-bit order-dependent hash, non-monotonic
 * sources, and the 4-hop breadth-first conversion.
 *
 * AddSnapshot there stores an edge (a, b, hash) for every ordered pair of a
 * snapshot's clocks (unless a is non-monotonic), N^2 edges for N clocks.
 * Only FindPath reads them, so this keeps what decides its answer: the
 * groups (one per distinct (hash, clock set) of a snapshot that succeeded)
 * and the non-monotonic flags.  (a, b, h) is an edge exactly when a is
 * monotonic and a group with hash h holds both: an edge is added only by a
 * successful snapshot, and a clock that turns non-monotonic loses every
 * outgoing edge for good (the erase in AddSnapshot, and no later inserts).
 *
 * FindPath is a FIFO breadth-first search with no visited set that expands
 * each clock's edges in (dst ClockId, hash) order and returns at the first
 * edge into the target, at most 4 edges.  Its answer is therefore the
 * shortest walk, and among the walks of that length the one whose edge
 * sequence is first in that order, ending in the smallest-hash edge into the
 * target.  find_path computes the same walk from layered reachability over
 * the groups (forward from the source, backward from the clocks that have
 * an edge into the target, then a greedy pick), in time linear in the groups
 * it touches.  The path cache of ClockSynchronizer is replaced by one keyed
 * on (source, target) that lives until the edge set changes; both return
 * what the search returns.
 */
#include "clockgraph.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The graph's small arrays (a series' values and snapshot ids, a group's
 * members, a node's groups; an archive of 10,000 members holds ~4 series
 * of one snapshot per member) keep their first elements in place, in the
 * owner's union small, and move to a heap block past that room.  The
 * capacity alone says where they are: in place while cap <= room (cap 0:
 * no more asked for yet), never a pointer into the owner, which moves with
 * the owner's array.  Node groups and series grow one element at a time:
 * their capacity is tm_small_cap of their count, not stored. */
union small {
	void *heap;
	uint32_t u32[2];
	int64_t i64[1];
};

#define SMALL_ROOM(type) ((uint32_t)(sizeof(union small) / sizeof(type)))

/* A small array of n elements: in place while n <= room (its tm_small_cap is
 * 0 then), else on the heap. */
static inline const void *
small_get(const union small *a, uint32_t n, uint32_t room)
{
	return n <= room ? (const void *)a : a->heap;
}

static inline void *
small_mut(union small *a, uint32_t n, uint32_t room)
{
	return n <= room ? (void *)a : a->heap;
}

/* a's n elements of elem bytes moved from capacity cap to nc (> room). */
static void
small_grow(union small *a, uint32_t n, uint32_t cap, uint32_t nc, uint32_t room, size_t elem)
{
	if (cap > room) {
		a->heap = xrealloc(a->heap, (size_t)nc * elem);
		return;
	}
	void *b = xmalloc((size_t)nc * elem);
	memcpy(b, a, (size_t)n * elem);
	a->heap = b;
}

static void
small_free(union small *a, uint32_t n, uint32_t room)
{
	if (n > room)
		free(a->heap);
}

struct series {
	uint32_t node, hash;
	uint32_t n;
	uint32_t id0; /* the snapshot id while in place */
	/* the snapshots' values (ns) and ids, in snapshot order: a small array
	 * of capacity tm_small_cap(n, SERIES_ROOM), the first value in place (its
	 * id in id0), past that one block of the values then the ids
	 * (series_ids) */
	union small ts;
};

#define SERIES_ROOM SMALL_ROOM(int64_t)

/* (LP64) ~4 series per member of an archive: 10,000s */
_Static_assert(sizeof(void *) != 8 || sizeof(struct series) == 24, "struct series grew");

static inline const int64_t *
series_ts(const struct series *s)
{
	return small_get(&s->ts, s->n, SERIES_ROOM);
}

static inline const uint32_t *
series_ids(const struct series *s)
{
	uint32_t cap = tm_small_cap(s->n, SERIES_ROOM);
	return cap ? (const uint32_t *)((const int64_t *)s->ts.heap + cap) : &s->id0;
}

/* Snapshot snap's value ns appended to se: in place, or in the block,
 * grown (its ids moved after the values) when full. */
static void
series_push(struct series *se, int64_t ns, uint32_t snap)
{
	uint32_t n = se->n, cap = tm_small_cap(n, SERIES_ROOM), nc = tm_small_cap(n + 1, SERIES_ROOM);
	se->n = n + 1;
	if (!nc) {
		se->ts.i64[0] = ns;
		se->id0 = snap;
		return;
	}
	char *b;
	if (nc == cap) {
		b = se->ts.heap;
	} else if (cap) {
		b = xrealloc(se->ts.heap, (size_t)nc * (sizeof ns + sizeof snap));
		memmove(b + (size_t)nc * sizeof ns, b + (size_t)cap * sizeof ns, n * sizeof snap);
	} else {
		b = xmalloc((size_t)nc * (sizeof ns + sizeof snap));
		memcpy(b, se->ts.i64, n * sizeof ns);
		memcpy(b + (size_t)nc * sizeof ns, &se->id0, n * sizeof snap);
	}
	se->ts.heap = b;
	memcpy(b + (size_t)n * sizeof ns, &ns, sizeof ns);
	memcpy(b + (size_t)nc * sizeof ns + (size_t)n * sizeof snap, &snap, sizeof snap);
}

struct group {
	uint32_t hash;
	uint32_t n;
	/* node indices, sorted by ClockId: a small array of capacity n (most
	 * snapshots relate two clocks: in place) */
	union small m;
	uint32_t stamp;      /* search scratch: layer stamp */
	uint32_t first;      /* the marked member seen at that stamp, GROUP_MULTI
			      * when more than one */
};
#define GROUP_MULTI UINT32_MAX /* (no node has that index) */

/* (LP64) ~2 groups per member of an archive: 10,000s */
_Static_assert(sizeof(void *) != 8 || sizeof(struct group) == 24, "struct group grew");

/* A clock's unit and last value (ClockDomain::unit_multiplier_ns and
 * last_timestamp_ns), kept apart for the few clocks that need them: those
 * with a unit other than 1 or incremental (the last value is read only for
 * those). */
struct xclock {
	uint64_t unit;
	int64_t last_ns;
	/* ours: last_ns as if every conversion from this incremental clock
	 * had succeeded (tm_graph_shadow_step) */
	int64_t shadow_ns;
};

struct node {
	struct tm_clockid id;
	/* group indices, in creation order: a small array (node_groups) of
	 * capacity tm_small_cap(n_groups, IDX_ROOM), not stored (a graph holds a few
	 * nodes per member: 40 bytes, not 72) */
	union small gs;
	uint32_t n_groups;
	/* search scratch: bit k of fwd (bwd) set when in forward layer k
	 * (backward set k) of the search whose gen is mgen; a node of an older
	 * search is in none (a graph holds a few nodes per member: 10,000s) */
	uint32_t mgen;
	/* its struct xclock in the graph's xs + 1; 0: none, then the unit is 1
	 * when unit_one is set, else 0 (not set yet) and it is not incremental */
	uint32_t xi;
	uint8_t fwd, bwd;
	bool is_incremental : 1;
	bool is_nonmono : 1;
	bool unit_one : 1;
	bool has_series : 1; /* a series of it was made (its first snapshot) */
};

/* (LP64) a node per clock of every member: 10,000s in an archive */
_Static_assert(sizeof(void *) != 8 || sizeof(struct node) == 40, "struct node grew");

struct path {
	int len;            /* edges */
	uint32_t nodes[5];  /* nodes[0] = source, nodes[len] = target */
	uint32_t hashes[4]; /* hashes[i]: edge nodes[i] -> nodes[i+1] */
};

#define PATH_CACHE 64

#define IDX_ROOM SMALL_ROOM(uint32_t)

static inline const uint32_t *
group_members(const struct group *gr)
{
	return small_get(&gr->m, gr->n, IDX_ROOM);
}

static inline const uint32_t *
node_groups(const struct node *nd)
{
	return small_get(&nd->gs, nd->n_groups, IDX_ROOM);
}

struct tm_graph {
	struct node *nodes;
	size_t n_nodes, cap_nodes;
	/* clock id -> node: open addressing, index+1, 0 empty */
	uint32_t *slots;
	size_t n_slots;
	uint32_t next_snapshot;
	struct group *groups;
	size_t n_groups, cap_groups;
	/* hash -> group + 1, every group (those of one hash found in turn) */
	uint32_t *gslots;
	size_t n_gslots;
	struct series *series;
	size_t n_series, cap_series;
	/* (node, hash) -> series index + 1 */
	uint32_t *sslots;
	size_t n_sslots;
	/* bumped whenever the edge set changes; cached paths carry it */
	uint64_t epoch;
	struct cached_path {
		uint64_t epoch; /* 0: empty */
		uint32_t src, dst;
		bool found;
		struct path path;
	} cache[PATH_CACHE];
	/* search scratch */
	uint32_t gen, stamp;
	uint32_t *layer[4];
	size_t n_layer[4], cap_layer[4];
	uint32_t *back[4];
	size_t n_back[4], cap_back[4];
	uint32_t *touched;
	size_t n_touched, cap_touched;
	uint64_t work;
	/* the nodes' struct xclock (node.xi) */
	struct xclock *xs;
	size_t n_xs, cap_xs;
};

static inline uint64_t
node_unit(const struct tm_graph *g, const struct node *nd)
{
	return nd->xi ? g->xs[nd->xi - 1].unit : nd->unit_one;
}

/* nd's xclock (nd is incremental or has a unit other than 1). */
static inline struct xclock *
node_x(struct tm_graph *g, const struct node *nd)
{
	return &g->xs[nd->xi - 1];
}

/* nd's unit and incremental flag set (the first snapshot of the clock);
 * an xclock is made for it unless the unit is 1 and it is not
 * incremental. */
static void
node_set_unit(struct tm_graph *g, struct node *nd, uint64_t unit, bool incremental)
{
	nd->is_incremental = incremental;
	if (!nd->xi && unit == 1 && !incremental) {
		nd->unit_one = true;
		return;
	}
	if (!nd->xi) {
		XGROW(g->xs, g->cap_xs, g->n_xs + 1);
		g->xs[g->n_xs] = (struct xclock){0, 0, 0};
		if (g->n_xs >= UINT32_MAX - 1)
			tm_oom(SIZE_MAX);
		nd->xi = (uint32_t)++g->n_xs;
	}
	node_x(g, nd)->unit = unit;
}

void
tm_clockid_str(struct tm_clockid c, char *buf, size_t cap)
{
	if (c.seq == 0 && c.tf == 0 && c.machine == 0)
		snprintf(buf, cap, "%" PRIu32, c.clock);
	else
		snprintf(buf, cap, "%" PRIu32 "(seq=%" PRIu32 ",tf=%" PRIu32 ",m=%" PRIu32 ")", c.clock,
			 c.seq, c.tf, c.machine);
}

/* ClockId::operator< (util/clock_synchronizer.h): the order of the edge set. */
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

/* The three tables (slots, sslots, gslots) grow past 3/4 full: linear
 * probing stays short there, and an archive of 10,000s of members has as
 * many nodes, series and groups. */
static inline bool
over_load(size_t n, size_t n_slots)
{
	return n * 4 > n_slots * 3;
}

static size_t
slot_of(struct tm_clockid c, size_t n_slots)
{
	uint64_t h = tm_mix64(((uint64_t)c.clock << 32 | c.seq) ^ tm_mix64((uint64_t)c.tf << 32 | c.machine));
	return (size_t)(h & (n_slots - 1));
}

struct tm_graph *
tm_graph_new(void)
{
	struct tm_graph *g = xcalloc(1, sizeof *g);
	g->n_slots = g->n_gslots = g->n_sslots = 64;
	g->slots = xcalloc(g->n_slots, sizeof *g->slots);
	g->gslots = xcalloc(g->n_gslots, sizeof *g->gslots);
	g->sslots = xcalloc(g->n_sslots, sizeof *g->sslots);
	g->epoch = 1;
	return g;
}

void
tm_graph_free(struct tm_graph *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n_nodes; i++)
		small_free(&g->nodes[i].gs, g->nodes[i].n_groups, IDX_ROOM);
	for (size_t i = 0; i < g->n_groups; i++)
		small_free(&g->groups[i].m, g->groups[i].n, IDX_ROOM);
	for (size_t i = 0; i < g->n_series; i++)
		small_free(&g->series[i].ts, g->series[i].n, SERIES_ROOM);
	for (int k = 0; k < 4; k++) {
		free(g->layer[k]);
		free(g->back[k]);
	}
	free(g->touched);
	free(g->xs);
	free(g->nodes);
	free(g->slots);
	free(g->groups);
	free(g->gslots);
	free(g->series);
	free(g->sslots);
	free(g);
}

uint64_t
tm_graph_work(const struct tm_graph *g)
{
	return g->work;
}

static long
find_node(const struct tm_graph *g, struct tm_clockid c)
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
rehash(struct tm_graph *g)
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
get_node(struct tm_graph *g, struct tm_clockid c)
{
	long i = find_node(g, c);
	if (i >= 0)
		return (uint32_t)i;
	if (over_load(g->n_nodes + 1, g->n_slots))
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

bool
tm_graph_knows(const struct tm_graph *g, struct tm_clockid c)
{
	return find_node(g, c) >= 0;
}

uint32_t
tm_graph_n_snapshots(const struct tm_graph *g)
{
	return g->next_snapshot;
}

/* ------------------------------------------------------------------ */
/* series: ClockDomain::snapshots, one per (clock, hash)               */
/* ------------------------------------------------------------------ */

static size_t
sslot_of(uint32_t node, uint32_t hash, size_t n)
{
	return (size_t)(tm_mix64((uint64_t)node << 32 | hash) & (n - 1));
}

static struct series *
series_of(const struct tm_graph *g, uint32_t node, uint32_t hash)
{
	size_t mask = g->n_sslots - 1;
	for (size_t s = sslot_of(node, hash, g->n_sslots);; s = (s + 1) & mask) {
		uint32_t v = g->sslots[s];
		if (!v)
			return NULL;
		struct series *se = &g->series[v - 1];
		if (se->node == node && se->hash == hash)
			return se;
	}
}

static struct series *
get_series(struct tm_graph *g, uint32_t node, uint32_t hash)
{
	struct series *se = series_of(g, node, hash);
	if (se)
		return se;
	if (over_load(g->n_series + 1, g->n_sslots)) {
		free(g->sslots);
		g->n_sslots *= 2;
		g->sslots = xcalloc(g->n_sslots, sizeof *g->sslots);
		for (size_t i = 0; i < g->n_series; i++) {
			size_t s = sslot_of(g->series[i].node, g->series[i].hash, g->n_sslots);
			while (g->sslots[s])
				s = (s + 1) & (g->n_sslots - 1);
			g->sslots[s] = (uint32_t)i + 1;
		}
	}
	XGROW(g->series, g->cap_series, g->n_series + 1);
	se = &g->series[g->n_series];
	memset(se, 0, sizeof *se);
	se->node = node;
	se->hash = hash;
	size_t s = sslot_of(node, hash, g->n_sslots);
	while (g->sslots[s])
		s = (s + 1) & (g->n_sslots - 1);
	g->sslots[s] = (uint32_t)g->n_series + 1;
	g->n_series++;
	g->nodes[node].has_series = true;
	return se;
}

/* ------------------------------------------------------------------ */
/* groups: the edge set of successful snapshots                        */
/* ------------------------------------------------------------------ */

struct keyed {
	struct tm_clockid id;
	uint32_t node;
};

static int
cmp_keyed(const void *a, const void *b)
{
	return cmp_id(((const struct keyed *)a)->id, ((const struct keyed *)b)->id);
}

static size_t
gslot_of(uint32_t hash, size_t n)
{
	return (size_t)(tm_mix64(hash) & (n - 1));
}

/* Is node (ClockId id) in group gr?  Members are sorted by ClockId. */
static bool
group_has(const struct tm_graph *g, const struct group *gr, struct tm_clockid id)
{
	size_t lo = 0, hi = gr->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = cmp_id(g->nodes[group_members(gr)[mid]].id, id);
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static void
gtable_put(struct tm_graph *g, uint32_t gi)
{
	size_t s = gslot_of(g->groups[gi].hash, g->n_gslots);
	while (g->gslots[s])
		s = (s + 1) & (g->n_gslots - 1);
	g->gslots[s] = gi + 1;
}

/* The edges of a successful snapshot: a group for (hash, clock set), unless
 * an identical one exists (the edge set is a set). */
static void
add_group(struct tm_graph *g, uint32_t hash, const uint32_t *idx, size_t n)
{
	if (n < 2)
		return; /* no pairs, no edges */
	struct keyed *k = xmalloc(n * sizeof *k);
	for (size_t i = 0; i < n; i++)
		k[i] = (struct keyed){g->nodes[idx[i]].id, idx[i]};
	qsort(k, n, sizeof *k, cmp_keyed);
	uint32_t *m = xmalloc(n * sizeof *m);
	for (size_t i = 0; i < n; i++)
		m[i] = k[i].node;
	free(k);
	g->work += n;
	/* the groups of this hash (a clock list's hash meets another's
	 * rarely: most have one) */
	for (size_t s = gslot_of(hash, g->n_gslots); g->gslots[s]; s = (s + 1) & (g->n_gslots - 1)) {
		const struct group *gr = &g->groups[g->gslots[s] - 1];
		if (gr->hash != hash)
			continue;
		g->work++;
		if (gr->n == n && memcmp(group_members(gr), m, n * sizeof *m) == 0) {
			free(m);
			return;
		}
	}
	XGROW(g->groups, g->cap_groups, g->n_groups + 1);
	uint32_t gi = (uint32_t)g->n_groups++;
	struct group *gr = &g->groups[gi];
	memset(gr, 0, sizeof *gr);
	gr->hash = hash;
	gr->n = (uint32_t)n;
	if (gr->n > IDX_ROOM) {
		gr->m.heap = m; /* the block, of capacity n, is the group's */
	} else {
		memcpy(gr->m.u32, m, n * sizeof *m);
		free(m);
	}
	m = NULL;
	if (over_load(g->n_groups, g->n_gslots)) {
		free(g->gslots);
		g->n_gslots *= 2;
		g->gslots = xcalloc(g->n_gslots, sizeof *g->gslots);
		for (uint32_t i = 0; i <= gi; i++)
			gtable_put(g, i);
	} else {
		gtable_put(g, gi);
	}
	const uint32_t *mem = group_members(gr);
	for (size_t i = 0; i < n; i++) {
		struct node *nd = &g->nodes[mem[i]];
		uint32_t cap = tm_small_cap(nd->n_groups, IDX_ROOM);
		uint32_t nc = tm_small_cap(nd->n_groups + 1, IDX_ROOM);
		if (nc != cap)
			small_grow(&nd->gs, nd->n_groups, cap, nc, IDX_ROOM, sizeof gi);
		uint32_t at = nd->n_groups++;
		((uint32_t *)small_mut(&nd->gs, at + 1, IDX_ROOM))[at] = gi;
	}
	g->epoch++;
}

static uint32_t
snapshot_hash(const struct tm_graph_clock *c, size_t n)
{
	/* base::MurmurHashCombiner over each ClockId's four fields. */
	uint64_t h = 0xe17a1465ULL;
	for (size_t i = 0; i < n; i++) {
		uint32_t f[4] = {c[i].id.clock, c[i].id.seq, c[i].id.tf, c[i].id.machine};
		for (int k = 0; k < 4; k++)
			h ^= tm_mix64(f[k]) + 0x9e3779b9ULL + (h << 6) + (h >> 2);
	}
	return (uint32_t)h;
}

bool
tm_graph_add_snapshot(struct tm_graph *g, const struct tm_graph_clock *c, size_t n,
		      struct tm_clockid tt, char *msg, size_t msg_cap)
{
	return tm_graph_add_snapshot_hashed(g, c, n, snapshot_hash(c, n), tt, msg, msg_cap);
}

/* c's id in buf (tm_clockid_str), returned: formatted only when an error
 * text names it (every clock of every snapshot: ~6 k instructions a member
 * of a TAR, when it was formatted up front). */
static const char *
id_text(struct tm_clockid c, char *buf)
{
	tm_clockid_str(c, buf, 96);
	return buf;
}

bool
tm_graph_add_snapshot_hashed(struct tm_graph *g, const struct tm_graph_clock *c, size_t n,
			     uint32_t hash, struct tm_clockid tt, char *msg, size_t msg_cap)
{
	uint32_t snap = g->next_snapshot++;
	char idb[96]; /* a clock's id, formatted for an error text only */
	uint32_t *idx = xmalloc((n ? n : 1) * sizeof *idx);
	bool ok = true;
	g->work += n;
	for (size_t i = 0; i < n && ok; i++) {
		uint32_t ni = get_node(g, c[i].id);
		idx[i] = ni;
		struct node *nd = &g->nodes[ni];
		if (!nd->has_series) {
			if (c[i].is_incremental && c[i].id.seq == 0) {
				snprintf(msg, msg_cap,
					 "Clock sync error: the global clock with id=%s cannot use "
					 "incremental encoding; this is only supported for "
					 "sequence-scoped clocks.",
					 id_text(c[i].id, idb));
				ok = false;
				break;
			}
			node_set_unit(g, nd, c[i].unit, c[i].is_incremental);
		} else if (node_unit(g, nd) != c[i].unit || nd->is_incremental != c[i].is_incremental) {
			snprintf(msg, msg_cap,
				 "Clock sync error: the clock domain with id=%s (unit=%" PRId64
				 ", incremental=%d), was previously registered with different "
				 "properties (unit=%" PRId64 ", incremental=%d).",
				 id_text(c[i].id, idb), (int64_t)c[i].unit, c[i].is_incremental,
				 (int64_t)node_unit(g, nd), nd->is_incremental);
			ok = false;
			break;
		}
		if (tm_clockid_eq(c[i].id, tt) && node_unit(g, nd) != 1) {
			snprintf(msg, msg_cap,
				 "Clock sync error: the trace clock (id=%s) must always use "
				 "nanoseconds as unit multiplier.",
				 id_text(c[i].id, idb));
			ok = false;
			break;
		}
		int64_t ts_ns = wrap_mul(c[i].ts, (int64_t)node_unit(g, nd));
		if (nd->xi) /* (else the clock is not incremental: never read) */
			node_x(g, nd)->last_ns = node_x(g, nd)->shadow_ns = ts_ns;
		struct series *s = get_series(g, ni, hash);
		const int64_t *sts = series_ts(s);
		if (s->n && series_ids(s)[s->n - 1] == snap) {
			snprintf(msg, msg_cap,
				 "Clock sync error: duplicate clock domain with id=%s at snapshot %" PRIu32
				 ".",
				 id_text(c[i].id, idb), snap);
			ok = false;
			break;
		}
		if (s->n && ts_ns < sts[s->n - 1]) {
			if (tm_clockid_eq(c[i].id, tt)) {
				snprintf(msg, msg_cap,
					 "Clock sync error: the trace clock (id=%s) is not monotonic at "
					 "snapshot %" PRIu32 ". %" PRId64 " not >= %" PRId64 ".",
					 id_text(c[i].id, idb), snap, ts_ns, sts[s->n - 1]);
				ok = false;
				break;
			}
			/* every edge leaving it is erased, none is added later */
			if (!nd->is_nonmono) {
				nd->is_nonmono = true;
				g->epoch++;
			}
		}
		series_push(s, ts_ns, snap);
	}
	if (ok)
		add_group(g, hash, idx, n);
	free(idx);
	return ok;
}

/* ------------------------------------------------------------------ */
/* FindPath                                                            */
/* ------------------------------------------------------------------ */

static uint32_t
next_stamp(struct tm_graph *g)
{
	if (++g->stamp == 0) {
		for (size_t i = 0; i < g->n_groups; i++)
			g->groups[i].stamp = 0;
		g->stamp = 1;
	}
	return g->stamp;
}

static void
mark_group(struct group *gr, uint32_t st, uint32_t who, struct tm_graph *g)
{
	if (gr->stamp != st) {
		gr->stamp = st;
		gr->first = who;
		XGROW(g->touched, g->cap_touched, g->n_touched + 1);
		g->touched[g->n_touched++] = (uint32_t)(gr - g->groups);
	} else {
		gr->first = GROUP_MULTI; /* who differs: a node is in a group once */
	}
}

/* The smallest hash of an edge x -> t (x monotonic), if any. */
static bool
edge_hash(struct tm_graph *g, uint32_t x, uint32_t t, uint32_t *hash)
{
	const struct node *a = &g->nodes[x], *b = &g->nodes[t];
	const struct node *few = a->n_groups <= b->n_groups ? a : b;
	struct tm_clockid other = few == a ? b->id : a->id;
	bool found = false;
	for (size_t i = 0; i < few->n_groups; i++) {
		const struct group *gr = &g->groups[node_groups(few)[i]];
		g->work++;
		if ((!found || gr->hash < *hash) && group_has(g, gr, other)) {
			*hash = gr->hash;
			found = true;
		}
	}
	return found;
}

static void
push_u32(uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
	XGROW(*v, *cap, *n + 1);
	(*v)[(*n)++] = x;
}

/* A node's search marks (struct node mgen/fwd/bwd). */
static inline bool
in_fwd(const struct tm_graph *g, const struct node *nd, int k)
{
	return nd->mgen == g->gen && (nd->fwd >> k & 1);
}

static inline bool
in_bwd(const struct tm_graph *g, const struct node *nd, int k)
{
	return nd->mgen == g->gen && (nd->bwd >> k & 1);
}

static inline void
mark_now(const struct tm_graph *g, struct node *nd)
{
	if (nd->mgen != g->gen) {
		nd->mgen = g->gen;
		nd->fwd = nd->bwd = 0;
	}
}

static inline void
mark_fwd(const struct tm_graph *g, struct node *nd, int k)
{
	mark_now(g, nd);
	nd->fwd |= (uint8_t)(1u << k);
}

static inline void
mark_bwd(const struct tm_graph *g, struct node *nd, int k)
{
	mark_now(g, nd);
	nd->bwd |= (uint8_t)(1u << k);
}

/* layer[d+1]: every clock one edge away from a monotonic clock of layer[d]. */
static void
expand(struct tm_graph *g, int d)
{
	uint32_t st = next_stamp(g);
	g->n_touched = 0;
	for (size_t i = 0; i < g->n_layer[d]; i++) {
		uint32_t x = g->layer[d][i];
		const struct node *nd = &g->nodes[x];
		if (nd->is_nonmono)
			continue;
		for (size_t j = 0; j < nd->n_groups; j++) {
			g->work++;
			mark_group(&g->groups[node_groups(nd)[j]], st, x, g);
		}
	}
	g->n_layer[d + 1] = 0;
	for (size_t i = 0; i < g->n_touched; i++) {
		const struct group *gr = &g->groups[g->touched[i]];
		for (size_t j = 0; j < gr->n; j++) {
			uint32_t y = group_members(gr)[j];
			g->work++;
			if (y == gr->first || in_fwd(g, &g->nodes[y], d + 1))
				continue;
			mark_fwd(g, &g->nodes[y], d + 1);
			push_u32(&g->layer[d + 1], &g->n_layer[d + 1], &g->cap_layer[d + 1], y);
		}
	}
}

/* back[k]: the monotonic clocks of layer[k] with an edge into back[k+1]. */
static void
narrow(struct tm_graph *g, int k)
{
	uint32_t st = next_stamp(g);
	g->n_touched = 0;
	for (size_t i = 0; i < g->n_back[k + 1]; i++) {
		uint32_t b = g->back[k + 1][i];
		const struct node *nd = &g->nodes[b];
		for (size_t j = 0; j < nd->n_groups; j++) {
			g->work++;
			mark_group(&g->groups[node_groups(nd)[j]], st, b, g);
		}
	}
	g->n_back[k] = 0;
	for (size_t i = 0; i < g->n_layer[k]; i++) {
		uint32_t a = g->layer[k][i];
		struct node *nd = &g->nodes[a];
		if (nd->is_nonmono)
			continue;
		for (size_t j = 0; j < nd->n_groups; j++) {
			const struct group *gr = &g->groups[node_groups(nd)[j]];
			g->work++;
			if (gr->stamp == st && gr->first != a) {
				mark_bwd(g, nd, k);
				push_u32(&g->back[k], &g->n_back[k], &g->cap_back[k], a);
				break;
			}
		}
	}
}

/* The first edge (dst ClockId, hash) from cur into back[k]. */
static void
first_edge(struct tm_graph *g, uint32_t cur, int k, uint32_t *dst, uint32_t *hash)
{
	const struct node *nd = &g->nodes[cur];
	uint32_t best = UINT32_MAX, best_hash = 0;
	for (size_t j = 0; j < nd->n_groups; j++) {
		const struct group *gr = &g->groups[node_groups(nd)[j]];
		for (size_t i = 0; i < gr->n; i++) {
			uint32_t y = group_members(gr)[i];
			g->work++;
			if (best != UINT32_MAX && cmp_id(g->nodes[y].id, g->nodes[best].id) > 0)
				break; /* sorted: nothing earlier in this group */
			if (y == cur || !in_bwd(g, &g->nodes[y], k))
				continue;
			if (y != best) {
				best = y;
				best_hash = gr->hash;
			} else if (gr->hash < best_hash) {
				best_hash = gr->hash;
			}
			break;
		}
	}
	*dst = best;
	*hash = best_hash;
}

static bool
search(struct tm_graph *g, uint32_t src, uint32_t dst, struct path *out)
{
	if (++g->gen == 0) {
		for (size_t i = 0; i < g->n_nodes; i++)
			g->nodes[i].mgen = 0;
		g->gen = 1;
	}
	g->n_layer[0] = 0;
	push_u32(&g->layer[0], &g->n_layer[0], &g->cap_layer[0], src);
	mark_fwd(g, &g->nodes[src], 0);
	int depth = -1;
	for (int d = 0; d < 4 && depth < 0; d++) {
		g->n_back[d] = 0;
		for (size_t i = 0; i < g->n_layer[d]; i++) {
			uint32_t x = g->layer[d][i], h;
			if (!g->nodes[x].is_nonmono && edge_hash(g, x, dst, &h)) {
				mark_bwd(g, &g->nodes[x], d);
				push_u32(&g->back[d], &g->n_back[d], &g->cap_back[d], x);
			}
		}
		if (g->n_back[d])
			depth = d;
		else if (d < 3)
			expand(g, d);
	}
	if (depth < 0)
		return false;
	for (int k = depth - 1; k >= 0; k--)
		narrow(g, k);
	out->len = depth + 1;
	out->nodes[0] = src;
	for (int k = 0; k < depth; k++)
		first_edge(g, out->nodes[k], k + 1, &out->nodes[k + 1], &out->hashes[k]);
	(void)edge_hash(g, out->nodes[depth], dst, &out->hashes[depth]);
	out->nodes[depth + 1] = dst;
	return true;
}

static bool
find_path(struct tm_graph *g, uint32_t src, uint32_t dst, struct path *out)
{
	struct cached_path *c = &g->cache[(tm_mix64((uint64_t)src << 32 | dst)) % PATH_CACHE];
	if (c->epoch != g->epoch || c->src != src || c->dst != dst) {
		c->epoch = g->epoch;
		c->src = src;
		c->dst = dst;
		c->found = search(g, src, dst, &c->path);
	}
	*out = c->path;
	return c->found;
}

/* ------------------------------------------------------------------ */
/* conversion                                                          */
/* ------------------------------------------------------------------ */

/* The first of a series' n snapshot values ts[] after ns (n: none is);
 * the one a hop uses is the one before it, else the first (upper_bound
 * then a step back, as ClockSynchronizer::ConvertSlowpath,
 * util/clock_synchronizer.h). */
static inline size_t
ts_after(const int64_t *ts, size_t n, int64_t ns)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ts[mid] <= ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether snapshot snap is among a series' n ascending ids[], and where
 * (*at: lower_bound there). */
static inline bool
snap_in(const uint32_t *ids, size_t n, uint32_t snap, size_t *at)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ids[mid] < snap)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < n && ids[lo] == snap;
}

static int64_t
hop(const struct tm_graph *g, uint32_t a, uint32_t b, uint32_t hash, int64_t ns)
{
	const struct series *sa = series_of(g, a, hash), *sb = series_of(g, b, hash);
	if (!sa || !sb || !sa->n)
		return ns;
	const int64_t *ats = series_ts(sa), *bts = series_ts(sb);
	size_t l = ts_after(ats, sa->n, ns), k = l ? l - 1 : 0;
	size_t j;
	if (!snap_in(series_ids(sb), sb->n, series_ids(sa)[k], &j))
		return ns;
	return wrap_add(ns, wrap_sub(bts[j], ats[k]));
}

/* The path from src to dst (both known): TM_CONV_OK and *si set, or why not. */
static enum tm_conv_result
route(struct tm_graph *g, struct tm_clockid src, struct tm_clockid dst, long *si, struct path *pa)
{
	long di;
	*si = find_node(g, src);
	di = find_node(g, dst);
	if (*si < 0)
		return TM_CONV_UNKNOWN_SOURCE;
	if (di < 0)
		return TM_CONV_UNKNOWN_TARGET;
	if (!find_path(g, (uint32_t)*si, (uint32_t)di, pa))
		return TM_CONV_NO_PATH;
	return TM_CONV_OK;
}

/* ns (in the path's source clock) along the path's hops; with via >= 0,
 * the value at node via the first time the path passes it (*passed). */
static inline int64_t
walk(const struct tm_graph *g, const struct path *pa, int64_t ns, long via, bool *passed,
     int64_t *at_via)
{
	if (via >= 0 && pa->nodes[0] == (uint32_t)via) {
		*passed = true;
		*at_via = ns;
	}
	for (int i = 0; i < pa->len; i++) {
		ns = hop(g, pa->nodes[i], pa->nodes[i + 1], pa->hashes[i], ns);
		if (via >= 0 && pa->nodes[i + 1] == (uint32_t)via && !*passed) {
			*passed = true;
			*at_via = ns;
		}
	}
	return ns;
}

/* Convert, and the value at node via (-1: none) if the path passes it. */
static enum tm_conv_result
convert(struct tm_graph *g, struct tm_clockid src, int64_t ts, struct tm_clockid dst, long via,
	bool probe, int64_t *out, bool *passed, int64_t *at_via)
{
	if (tm_clockid_eq(src, dst)) {
		*out = ts;
		if (via >= 0 && find_node(g, src) == via) {
			*passed = true;
			*at_via = ts;
		}
		return TM_CONV_OK;
	}
	long si;
	struct path pa;
	enum tm_conv_result r = route(g, src, dst, &si, &pa);
	if (r != TM_CONV_OK)
		return r;
	struct node *sn = &g->nodes[si];
	int64_t ns = wrap_mul(ts, (int64_t)node_unit(g, sn));
	if (sn->is_incremental) {
		struct xclock *x = node_x(g, sn);
		ns = wrap_add(x->last_ns, ns);
		if (!probe)
			x->last_ns = x->shadow_ns = ns;
	}
	*out = walk(g, &pa, ns, via, passed, at_via);
	return TM_CONV_OK;
}

enum tm_conv_result
tm_graph_convert(struct tm_graph *g, struct tm_clockid src, int64_t ts, struct tm_clockid dst,
		 bool probe, int64_t *out)
{
	return convert(g, src, ts, dst, -1, probe, out, NULL, NULL);
}

enum tm_conv_result
tm_graph_convert_via(struct tm_graph *g, struct tm_clockid src, int64_t ts, struct tm_clockid dst,
		     struct tm_clockid via, bool probe, int64_t *out, bool *passed, int64_t *at_via)
{
	*passed = false;
	return convert(g, src, ts, dst, find_node(g, via), probe, out, passed, at_via);
}

bool
tm_graph_shadow_step(struct tm_graph *g, struct tm_clockid src, int64_t ts, int64_t *ns)
{
	long i = find_node(g, src);
	if (i < 0 || !g->nodes[i].is_incremental)
		return false;
	struct node *sn = &g->nodes[i];
	struct xclock *x = node_x(g, sn);
	x->shadow_ns = wrap_add(x->shadow_ns, wrap_mul(ts, (int64_t)x->unit));
	*ns = x->shadow_ns;
	return true;
}

enum tm_conv_result
tm_graph_convert_ns(struct tm_graph *g, struct tm_clockid src, int64_t ns, struct tm_clockid dst,
		    int64_t *out)
{
	if (tm_clockid_eq(src, dst)) {
		*out = ns;
		return TM_CONV_OK;
	}
	long si;
	struct path pa;
	enum tm_conv_result r = route(g, src, dst, &si, &pa);
	if (r != TM_CONV_OK)
		return r;
	*out = walk(g, &pa, ns, -1, NULL, NULL);
	return TM_CONV_OK;
}

bool
tm_graph_is_incremental(const struct tm_graph *g, struct tm_clockid c)
{
	long i = find_node(g, c);
	return i >= 0 && g->nodes[i].is_incremental;
}

bool
tm_graph_reaches(struct tm_graph *g, struct tm_clockid a, struct tm_clockid b)
{
	int64_t v;
	return tm_graph_convert(g, a, 0, b, true, &v) == TM_CONV_OK;
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

bool
tm_graph_pieces(struct tm_graph *g, struct tm_clockid src, struct tm_clockid dst, int64_t lo,
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
	if (g->nodes[si].is_incremental || node_unit(g, &g->nodes[si]) != 1)
		return false;
	struct path pa;
	if (!find_path(g, (uint32_t)si, (uint32_t)di, &pa))
		return false;
	struct tm_piece *cur = NULL, *nxt = NULL;
	size_t n_cur = 0, cap_cur = 0, n_nxt = 0, cap_nxt = 0;
	piece_push(&cur, &n_cur, &cap_cur, lo, hi, 0);
	bool ok = true;
	for (int h = 0; h < pa.len && ok; h++) {
		const struct series *sa = series_of(g, pa.nodes[h], pa.hashes[h]);
		const struct series *sb = series_of(g, pa.nodes[h + 1], pa.hashes[h]);
		const int64_t *ats = sa ? series_ts(sa) : NULL, *bts = sb ? series_ts(sb) : NULL;
		const uint32_t *aids = sa ? series_ids(sa) : NULL, *bids = sb ? series_ids(sb) : NULL;
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
				size_t l = ts_after(ats, sa->n, ns), k = l ? l - 1 : 0;
				int64_t end = cur[i].b;
				if (l < sa->n) {
					int64_t lim;
					if (__builtin_sub_overflow(ats[l], o, &lim)) {
						ok = false;
						break;
					}
					if (lim - 1 < end)
						end = lim - 1;
				}
				/* translation of this hop for snapshot k (hop()) */
				size_t j;
				int64_t tr = 0;
				if (snap_in(bids, sb->n, aids[k], &j) &&
				    __builtin_sub_overflow(bts[j], ats[k], &tr)) {
					ok = false;
					break;
				}
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

/* SPDX-License-Identifier: MIT */
/*
 * The names of a log's tracks, processes and threads (tracknames.h).
 */
#include "tracknames.h"
#include "atrace.h"

#include <stdio.h>
#include <string.h>

static uint64_t
ix_key(uint8_t what, uint64_t key)
{
	return tm_mix64(key ^ (uint64_t)what * 0x9e3779b97f4a7c15ULL);
}

static const struct tm_tn_rec *
find(const struct tm_oplog_x *x, uint8_t what, uint64_t key)
{
	const struct tm_tn_tab *t = x->tn;
	size_t i;
	if (!t || !t->n || !tm_u64map_get(&t->ix, ix_key(what, key), &i) || i >= t->n)
		return NULL;
	const struct tm_tn_rec *r = &t->v[i];
	return r->what == what && r->key == key ? r : NULL;
}

/* The record of (what, key), added empty when new. */
static struct tm_tn_rec *
get(struct tm_oplog_x *x, uint8_t what, uint64_t key)
{
	const struct tm_tn_rec *r = find(x, what, key);
	if (!x->tn)
		x->tn = xcalloc(1, sizeof *x->tn);
	struct tm_tn_tab *t = x->tn;
	if (r)
		return &t->v[r - t->v];
	XGROW(t->v, t->cap, t->n + 1);
	struct tm_tn_rec *n = &t->v[t->n];
	*n = (struct tm_tn_rec){.key = key, .pid = TM_TN_NONE, .tid = TM_TN_NONE, .what = what};
	tm_u64map_set(&t->ix, ix_key(what, key), t->n++);
	return n;
}

static void
set_name(struct tm_oplog_x *x, struct tm_tn_rec *r, const char *name, size_t len)
{
	if (!name)
		return;
	len = strnlen(name, len);
	/* the same name again (every event of a JSON thread): no new copy */
	if (r->name && r->name <= x->pool.len && !strncmp(x->pool.data + r->name - 1, name, len) &&
	    x->pool.data[r->name - 1 + len] == 0)
		return;
	r->name = (uint32_t)x->pool.len + 1;
	tm_buf_add(&x->pool, name, len);
	tm_buf_addc(&x->pool, 0);
}

void
tm_tn_track(struct tm_oplog *l, uint64_t key, uint64_t parent, int64_t pid, int64_t tid, char kind,
	    const char *name, size_t name_len)
{
	struct tm_oplog_x *x = tm_oplog_x_own(l);
	struct tm_tn_rec *r = get(x, TM_TN_TRACK, key);
	if (parent)
		r->parent = parent;
	if (pid != TM_TN_NONE)
		r->pid = pid;
	if (tid != TM_TN_NONE)
		r->tid = tid;
	if (kind)
		r->kind = kind;
	set_name(x, r, name, name_len);
}

void
tm_tn_process(struct tm_oplog *l, int64_t pid, const char *name, size_t name_len)
{
	struct tm_oplog_x *x = tm_oplog_x_own(l);
	struct tm_tn_rec *r = get(x, TM_TN_PROCESS, (uint64_t)pid);
	r->pid = pid;
	set_name(x, r, name, name_len);
}

void
tm_tn_thread(struct tm_oplog *l, int64_t pid, int64_t tid, const char *name, size_t name_len)
{
	struct tm_oplog_x *x = tm_oplog_x_own(l);
	struct tm_tn_rec *r = get(x, TM_TN_THREAD, (uint64_t)tid);
	if (pid != TM_TN_NONE)
		r->pid = pid;
	r->tid = tid;
	set_name(x, r, name, name_len);
}

void
tm_tn_reindex(struct tm_oplog_x *x)
{
	struct tm_tn_tab *t = x->tn;
	if (!t)
		return;
	tm_u64map_fini(&t->ix);
	for (size_t i = 0; i < t->n; i++)
		tm_u64map_set(&t->ix, ix_key(t->v[i].what, t->v[i].key), i);
}

bool
tm_tn_valid(const struct tm_oplog_x *x, char *why, size_t cap)
{
	for (size_t i = 0; x->tn && i < x->tn->n; i++) {
		const struct tm_tn_rec *r = &x->tn->v[i];
		if (r->what < TM_TN_TRACK || r->what > TM_TN_THREAD) {
			snprintf(why, cap, "track name %zu: unknown kind", i);
			return false;
		}
		if (r->name && (r->name > x->pool.len ||
				!memchr(x->pool.data + r->name - 1, 0, x->pool.len - (r->name - 1)))) {
			snprintf(why, cap, "track name %zu: name out of the pool", i);
			return false;
		}
	}
	return true;
}

static const char *
name_of(const struct tm_oplog_x *x, const struct tm_tn_rec *r)
{
	return r && r->name ? x->pool.data + r->name - 1 : NULL;
}

void
tm_tn_resolve(const struct tm_oplog *l, uint64_t key, struct tm_tn_names *out)
{
	const struct tm_oplog_x *x = l->x;
	*out = (struct tm_tn_names){.pid = TM_TN_NONE, .tid = TM_TN_NONE};
	const struct tm_tn_rec *r = find(x, TM_TN_TRACK, key);
	if (!r)
		return;
	out->name = name_of(x, r);
	out->kind = r->kind;
	/* a pid or tid the track does not carry: its parents' (a few hops:
	 * a descriptor's chain is short, a cycle is not followed forever) */
	for (int hop = 0; r && hop < 8; hop++) {
		if (out->pid == TM_TN_NONE)
			out->pid = r->pid;
		if (out->tid == TM_TN_NONE)
			out->tid = r->tid;
		if (!out->kind)
			out->kind = r->kind;
		r = r->parent ? find(x, TM_TN_TRACK, r->parent) : NULL;
	}
	if (out->tid != TM_TN_NONE) {
		const struct tm_tn_rec *t = find(x, TM_TN_THREAD, (uint64_t)out->tid);
		out->thread = name_of(x, t);
		if (t && out->pid == TM_TN_NONE)
			out->pid = t->pid;
	}
	if (out->pid != TM_TN_NONE)
		out->process = name_of(x, find(x, TM_TN_PROCESS, (uint64_t)out->pid));
	/* a thread track named by its descriptor: that is the thread's name */
	if (!out->thread && out->kind == 't')
		out->thread = out->name;
}

void
tm_tn_atrace(struct tm_oplog *l, const struct tm_atrace_event *ev, uint32_t pid, const char *task,
	     size_t task_len)
{
	while (task_len && (*task == ' ' || *task == '\t'))
		task++, task_len--;
	if (task && task_len)
		tm_tn_thread(l, TM_TN_NONE, pid, task, task_len);
	if (!ev->phase || !ev->tkind)
		return;
	if (ev->tkind == 't') /* the thread, in its tgid's process when given
			       * (systrace_parser.cc: UpdateThread(pid, tgid)) */
		tm_tn_track(l, ev->track, 0, ev->tgid ? (int64_t)ev->tgid : TM_TN_NONE, pid, 't', NULL,
			    0);
	else
		tm_tn_track(l, ev->track, 0, ev->tgid, TM_TN_NONE, ev->tkind, ev->tname,
			    ev->tname ? ev->tname_len : 0);
}

void
tm_tn_cpu(struct tm_oplog *l, uint64_t key, uint32_t cpu)
{
	struct tm_oplog_x *x = tm_oplog_x_own(l);
	const struct tm_tn_rec *r = find(x, TM_TN_TRACK, key);
	if (r && r->name)
		return; /* every event of the CPU: named once */
	char nm[32];
	int n = snprintf(nm, sizeof nm, "cpu %u", (unsigned)cpu);
	tm_tn_track(l, key, 0, TM_TN_NONE, TM_TN_NONE, 'u', nm, (size_t)n);
}

void
tm_detail_set_value(struct tm_oplog *l, uint32_t detail, double v)
{
	if (!detail || detail > l->x->n_details)
		return;
	struct tm_detail *d = &l->x->details[detail - 1];
	memcpy(&d->dur, &v, sizeof v);
	d->flags |= TM_DETAIL_VALUE;
}

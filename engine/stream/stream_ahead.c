/* SPDX-License-Identifier: MIT */
/*
 * Read-ahead streams (stream_priv.h): the parent read on a producer thread.
 */
#include <stdlib.h>
#include <string.h>

#include "stream_priv.h"

static enum tm_status next_ahead(struct tm_stream *st, const uint8_t **p, size_t *n,
				 struct tm_error *err);

/* ---- read-ahead: the parent decompresses on a thread of its own ----
 *
 * A producer thread (started by the first tm_stream_next) reads the
 * parent's blocks and copies them into a ring of AHEAD_RING bytes; the
 * consumer borrows contiguous pieces of it.  Bytes, offsets and the
 * parent's error (after every byte before it) are those of the parent read
 * directly; only the work moves to another core.  Closing stops and joins
 * the producer (stop_chain), as for gzip. */
#define AHEAD_RING (2u << 20)

static void *
ahead_thread(void *arg)
{
	struct tm_stream *st = arg;
	for (;;) {
		const uint8_t *p;
		size_t n;
		struct tm_error e;
		tm_error_clear(&e);
		enum tm_status s = tm_stream_next(st->rd.st, &p, &n, &e);
		if (s != TM_OK || n == 0) {
			pthread_mutex_lock(&st->mu);
			if (s != TM_OK) {
				st->ps = s;
				free(st->perr);
				st->perr = tm_st_err_copy(&e);
			}
			st->eof = true;
			pthread_cond_signal(&st->cv_c);
			pthread_mutex_unlock(&st->mu);
			return NULL;
		}
		while (n) {
			pthread_mutex_lock(&st->mu);
			size_t free_b = tm_st_ring_room(st);
			bool stop = st->stop;
			pthread_mutex_unlock(&st->mu);
			if (stop)
				return NULL;
			size_t i = (size_t)(st->r_head % st->r_cap), k = n;
			if (k > free_b)
				k = free_b;
			if (k > st->r_cap - i)
				k = st->r_cap - i;
			memcpy(st->hb + i, p, k);
			p += k;
			n -= k;
			pthread_mutex_lock(&st->mu);
			st->r_head += k;
			if (st->c_wait)
				pthread_cond_signal(&st->cv_c);
			pthread_mutex_unlock(&st->mu);
		}
	}
}

struct tm_stream *
tm_stream_ahead(struct tm_stream *parent, const char *label)
{
	struct tm_stream *st = tm_st_new(K_AHEAD, label);
	st->next = next_ahead;
	st->rd.st = parent;
	st->work = parent->work;
	st->size = parent->size;
	st->r_cap = AHEAD_RING;
	if (pthread_mutex_init(&st->mu, NULL) || pthread_cond_init(&st->cv_p, NULL) ||
	    pthread_cond_init(&st->cv_c, NULL))
		abort();
	st->mu_init = true;
	return st;
}

static enum tm_status
next_ahead(struct tm_stream *st, const uint8_t **p, size_t *n, struct tm_error *err)
{
	*n = 0;
	if (st->sync) { /* no thread: read the parent here */
		enum tm_status s = tm_stream_next(st->rd.st, p, n, err);
		if (s == TM_OK)
			st->pos += *n;
		return s;
	}
	pthread_mutex_lock(&st->mu);
	st->r_free = st->pos; /* the piece handed out last is given back */
	if (st->p_wait)
		pthread_cond_signal(&st->cv_p);
	while (st->r_head == st->pos) {
		if (st->eof) {
			enum tm_status s = st->ps;
			if (s != TM_OK)
				*err = *st->perr;
			pthread_mutex_unlock(&st->mu);
			return s;
		}
		if (!st->thr_on) {
			if (!st->hb)
				st->hb = xmalloc(st->r_cap); /* pages are touched as used */
			if ((st->wk = tm_st_wk_start(ahead_thread, st)) != NULL) {
				st->thr_on = true;
			} else {
				st->sync = true;
				pthread_mutex_unlock(&st->mu);
				return next_ahead(st, p, n, err);
			}
		}
		st->c_wait = true;
		pthread_cond_wait(&st->cv_c, &st->mu);
		st->c_wait = false;
	}
	size_t i = (size_t)(st->pos % st->r_cap);
	uint64_t k = st->r_head - st->pos;
	if (k > BLOCK)
		k = BLOCK;
	if (k > st->r_cap - i)
		k = st->r_cap - i;
	*p = st->hb + i;
	pthread_mutex_unlock(&st->mu);
	*n = (size_t)k;
	st->pos += k;
	return TM_OK;
}


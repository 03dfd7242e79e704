/* SPDX-License-Identifier: MIT */
/*
 * The op log's spill file (oplog.h, tm_run; oplog_priv.h): run deltas
 * moved out of memory to one unlinked temporary file shared by every log,
 * and the sources, read-only files (a saved scan's) whose bytes runs refer
 * to in place.  Below the rest of the op log: it calls none of it.
 */
#define _GNU_SOURCE /* O_TMPFILE, fallocate */
#include "oplog_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the spill file (oplog.h, tm_run) ---- */

size_t tm_oplog_spill_after = 8u << 20;

static pthread_mutex_t sp_mu = PTHREAD_MUTEX_INITIALIZER;
static int sp_fd = -1;     /* -2: none can be made */
static uint64_t sp_end;    /* bytes handed out */
static uint64_t sp_live;   /* bytes not yet given back */
/* Bytes given back but not yet punched out of the file: extents given
 * back next to each other are punched together from SP_HOLE_MIN bytes on
 * (or all at once by the truncation when nothing is live): a punch per
 * extent was a syscall per spilled member when a session closed. */
static uint64_t sp_hole_off, sp_hole_len;
#define SP_HOLE_MIN ((uint64_t)1 << 20)
static uint64_t sp_mem;    /* run deltas held in memory by all logs (atomic) */

static int
sp_open(void)
{
	const char *d = getenv("TMPDIR");
	if (!d || !*d)
		d = "/tmp";
	int fd = open(d, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		char path[4096];
		snprintf(path, sizeof path, "%s/tracemerge-spill-XXXXXX", d);
		fd = mkstemp(path);
		if (fd >= 0)
			unlink(path);
	}
	return fd >= 0 ? fd : -2;
}

/* Whether n more bytes of run deltas of l should leave memory: past
 * tm_oplog_spill_after bytes held by all logs, or past an eighth of it
 * for a log below TM_BIG_MIN bytes (in 4 KiB pages, not huge ones: each
 * page it keeps is a fault, ~10 us here, where writing the page out is a
 * share of one pwrite; 312 members of a 1,000-member TAR kept 27 KB
 * each, 2,000 of its 2,800 faults beyond one member's).  sp_fd and sp_mem
 * are read without sp_mu (a run's decision needs no lock): sp_mem changes
 * only by atomic adds, sp_fd by an atomic store under sp_mu. */
bool
tm_ol_sp_wanted(const struct tm_oplog *l, size_t n)
{
	size_t lim = l->cap >= TM_BIG_MIN ? tm_oplog_spill_after : tm_oplog_spill_after / 8;
	return __atomic_load_n(&sp_fd, __ATOMIC_RELAXED) != -2 &&
	       __atomic_load_n(&sp_mem, __ATOMIC_RELAXED) + n > lim;
}

void
tm_ol_sp_mem_add(int64_t n)
{
	__atomic_fetch_add(&sp_mem, (uint64_t)n, __ATOMIC_RELAXED);
}

/* n delta bytes of l's runs kept in memory: counted for the log (given
 * back by tm_oplog_fini) and for the spill budget */
void
tm_ol_mem_keep(struct tm_oplog *l, uint64_t n)
{
	l->mem_run_bytes += n;
	tm_ol_sp_mem_add((int64_t)n);
}

/* A write to the spill file of more than SP_PIECE bytes ends at a
 * multiple of SP_PIECE in the file (one of SP_PIECE or less cannot make a
 * folio larger than itself: written whole).  The page cache gives a buffered write folios as large as the write and
 * its offset allow; here (a guest whose free memory goes back to its
 * host) folios of 256 KiB and up were fresh memory each time: te20 1 GiB
 * wrote 97 MB of runs in 512 KiB writes at ~670 us each, a fifth of the
 * check's CPU.  96 MiB written to a fresh file in 512 KiB writes took
 * 61-133 ms of CPU, in 128 KiB writes 13-14 ms. */
#define SP_PIECE ((uint64_t)128 << 10)

/* All of p[0..n) at off, written or read; false on an error. */
static bool
sp_io(int fd, bool wr, uint8_t *p, size_t n, uint64_t off)
{
	size_t done = 0;
	while (done < n) {
		uint64_t at = off + done;
		size_t w = n - done, piece = (size_t)(SP_PIECE - (at & (SP_PIECE - 1)));
		if (wr && w > SP_PIECE)
			w = piece;
		ssize_t k = wr ? pwrite(fd, p + done, w, (off_t)at) : pread(fd, p + done, w, (off_t)at);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		done += (size_t)k;
	}
	return true;
}

uint64_t tm_oplog_spill_writes, tm_oplog_spill_reads, tm_oplog_spill_punches;

/* Write p[0..n) to a fresh extent; false (nothing kept) on failure. */
bool
tm_ol_sp_write(const uint8_t *p, size_t n, uint64_t *off)
{
	pthread_mutex_lock(&sp_mu);
	if (sp_fd == -1)
		__atomic_store_n(&sp_fd, sp_open(), __ATOMIC_RELAXED);
	int fd = sp_fd;
	uint64_t at = sp_end;
	if (fd >= 0) {
		sp_end += n;
		sp_live += n;
	}
	pthread_mutex_unlock(&sp_mu);
	if (fd < 0)
		return false;
	if (!sp_io(fd, true, (uint8_t *)(uintptr_t)p, n, at)) {
		pthread_mutex_lock(&sp_mu);
		sp_live -= n;
		pthread_mutex_unlock(&sp_mu);
		return false;
	}
	__atomic_add_fetch(&tm_oplog_spill_writes, 1, __ATOMIC_RELAXED);
	*off = at;
	return true;
}

/* Sources: read-only files whose bytes spilled runs refer to in place (a
 * saved scan's deltas, scancache.c).  Offsets from SRC_BASE(k) on are byte
 * off - SRC_BASE(k) of source k; below SRC_BASE(0), the spill file's.  A
 * source is closed when its registration and every extent logs hold of it
 * are given back. */
#define SRC_SHIFT 48
#define SRC_BASE(k) (((uint64_t)(k) + 1) << SRC_SHIFT)
static struct sp_src {
	int fd;
	uint64_t refs;
} *sp_srcs;
static size_t n_srcs, cap_srcs;

uint64_t
tm_oplog_source(int fd)
{
	pthread_mutex_lock(&sp_mu);
	size_t k = 0;
	while (k < n_srcs && sp_srcs[k].refs)
		k++;
	if (k == n_srcs) {
		XGROW(sp_srcs, cap_srcs, n_srcs + 1);
		n_srcs++;
	}
	sp_srcs[k] = (struct sp_src){fd, 1};
	pthread_mutex_unlock(&sp_mu);
	return SRC_BASE(k);
}

/* One reference of the source at base given back (sp_mu held). */
static void
src_put_locked(uint64_t base)
{
	size_t k = (size_t)(base >> SRC_SHIFT) - 1;
	if (k < n_srcs && sp_srcs[k].refs && !--sp_srcs[k].refs) {
		close(sp_srcs[k].fd);
		sp_srcs[k].fd = -1;
	}
}

void
tm_ol_src_ref(uint64_t base)
{
	pthread_mutex_lock(&sp_mu);
	sp_srcs[(size_t)(base >> SRC_SHIFT) - 1].refs++;
	pthread_mutex_unlock(&sp_mu);
}

void
tm_oplog_source_put(uint64_t base)
{
	pthread_mutex_lock(&sp_mu);
	src_put_locked(base);
	pthread_mutex_unlock(&sp_mu);
}

/* Read back what tm_ol_sp_write wrote, or a source's bytes; losing it is losing
 * memory. */
void
tm_ol_sp_read(uint64_t off, uint8_t *p, size_t n)
{
	__atomic_add_fetch(&tm_oplog_spill_reads, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&sp_mu);
	int fd = sp_fd;
	if (off >= SRC_BASE(0)) {
		size_t k = (size_t)(off >> SRC_SHIFT) - 1;
		fd = k < n_srcs ? sp_srcs[k].fd : -1;
		off &= ((uint64_t)1 << SRC_SHIFT) - 1;
	}
	pthread_mutex_unlock(&sp_mu);
	if (fd < 0 || !sp_io(fd, false, p, n, off))
		tm_oom(n);
}

/* The bytes given back and not yet punched out, punched (sp_mu held). */
static void
sp_punch(void)
{
	if (sp_hole_len) {
		(void)fallocate(sp_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				(off_t)sp_hole_off, (off_t)sp_hole_len);
		tm_oplog_spill_punches++;
	}
	sp_hole_len = 0;
}

void
tm_ol_sp_free(uint64_t off, uint64_t n)
{
	pthread_mutex_lock(&sp_mu);
	if (off >= SRC_BASE(0)) {
		src_put_locked(off & ~(((uint64_t)1 << SRC_SHIFT) - 1));
		pthread_mutex_unlock(&sp_mu);
		return;
	}
	sp_live -= n;
	if (sp_hole_len && off == sp_hole_off + sp_hole_len) {
		sp_hole_len += n;
	} else if (sp_hole_len && off + n == sp_hole_off) {
		sp_hole_off = off;
		sp_hole_len += n;
	} else {
		sp_punch();
		sp_hole_off = off;
		sp_hole_len = n;
	}
	if (!sp_live) {
		if (ftruncate(sp_fd, 0) == 0) {
			sp_end = 0;
			sp_hole_len = 0;
		}
	}
	if (sp_hole_len >= SP_HOLE_MIN)
		sp_punch();
	pthread_mutex_unlock(&sp_mu);
}


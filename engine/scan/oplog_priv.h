/* SPDX-License-Identifier: MIT */
/*
 * The op log's private face, shared by its files and owned by oplog.c (the
 * log's lifetime, encoding, details): oplog_spill.c (the spill file, at the
 * bottom), oplog_decode.c (the iterator), oplog_save.c (runs spilled and
 * written for the scan cache), oplog_valid.c (a log read back, checked).
 */
#ifndef TM_OPLOG_PRIV_H
#define TM_OPLOG_PRIV_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include "oplog.h"
#include "proto_wire.h"

static inline int64_t
tm_ol_unzz(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* The most bytes a block of TM_RUN_SKIP deltas takes. */
#define BLOCK_MAX (TM_RUN_SKIP * 10u)

/* ---- the spill file (oplog_spill.c) ---- */

/* Whether n more bytes of run deltas of l should leave memory. */
bool tm_ol_sp_wanted(const struct tm_oplog *l, size_t n);
/* The run-delta bytes all logs hold in memory, changed by n. */
void tm_ol_sp_mem_add(int64_t n);
/* n delta bytes of l's runs kept in memory (given back by tm_oplog_fini). */
void tm_ol_mem_keep(struct tm_oplog *l, uint64_t n);
/* Write p[0..n) to a fresh extent at *off; false (nothing kept) on failure. */
bool tm_ol_sp_write(const uint8_t *p, size_t n, uint64_t *off);
/* Read n bytes at off (the spill file's or a source's). */
void tm_ol_sp_read(uint64_t off, uint8_t *p, size_t n);
/* Give back an extent of n bytes at off. */
void tm_ol_sp_free(uint64_t off, uint64_t n);
/* One more reference to the source of base (tm_oplog_source). */
void tm_ol_src_ref(uint64_t base);

/* ---- oplog.c ---- */

/* An extent of l's runs spilled (given back by tm_oplog_fini). */
void tm_ol_note_spilled(struct tm_oplog *l, uint64_t off, uint64_t len);
/* A detail's category in x's pool; SIZE_MAX: none. */
size_t tm_ol_cat_offset(const struct tm_oplog_x *x, const struct tm_detail *d);

#endif

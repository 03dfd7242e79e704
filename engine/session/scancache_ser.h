/* SPDX-License-Identifier: MIT */
/*
 * The format of a saved scan (scancache_ser.c), for scancache.c: the
 * checksum, the serializer's state, a member's record and the calls the
 * cache files are read and written with.  Bump scancache.c's CACHE_FORMAT
 * with every change of what the ser functions write.
 */
#ifndef TM_SCANCACHE_SER_H
#define TM_SCANCACHE_SER_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header"
#endif

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "align_scan.h"
#include "scan.h"
#include "scancache.h"

struct hash {
	uint64_t v[4];
	uint8_t tail[32];
	size_t nt;
	uint64_t total;
};

/* Where a log's out-of-line deltas are in the file (reading). */
struct deltas_at {
	uint64_t off, len, mem;
};

struct ser {
	bool wr;
	int wfd;         /* writing, through buf[0..end) (wr_flush) */
	uint64_t wrote;  /* writing: bytes written to wfd */
	struct hash h;
	uint64_t left;   /* reading: payload bytes not yet read */
	const char *bad; /* reading: the first problem found */
	bool werr;       /* writing: a write failed */
	/* reading */
	int fd;
	uint8_t *buf;
	size_t cap, pos, end; /* buf[pos..end): read, not yet taken */
	size_t hpos;          /* buf[hpos..pos): taken, not yet hashed */
	uint64_t at;          /* the file offset of buf[pos] */
	bool rerr;            /* a read failed or the file ended early */
	struct deltas_at *dl; /* the log being read */
	uint64_t d_done;      /* its deltas checked so far */
	char why[256];
};

struct member_rec {
	bool has_scan;
	uint64_t size;
	char *error;
	struct tm_scan *scan;
	struct deltas_at deltas; /* reading */
};

void tm_sc_h_init(struct hash *h);
uint64_t tm_sc_h_final(const struct hash *h);
void tm_sc_rd_hash(struct ser *z);
void tm_sc_rd_hash_restart(struct ser *z);
const uint8_t *tm_sc_rd_take(struct ser *z, size_t n);
void tm_sc_ser_blob(struct ser *z, void **p, size_t *n, size_t elem);
void tm_sc_ser_member(struct ser *z, struct member_rec *r);
void tm_sc_ser_str(struct ser *z, char **s);
void tm_sc_ser_u64(struct ser *z, uint64_t *v);
void tm_sc_wr_flush(struct ser *z);

#endif

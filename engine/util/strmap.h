/* SPDX-License-Identifier: MIT */
/*
 * Small open-addressing hash maps for the engine's lookups by name or id
 * (manifest names and paths, machine ids), so that work on inputs with tens
 * of thousands of entries stays linear.  Keys of a tm_strmap are borrowed:
 * they must outlive the map (or be replaced through the slot).
 */
#ifndef TM_STRMAP_H
#define TM_STRMAP_H
#ifndef TM_ENGINE_INTERNAL
#error "engine-internal header: front ends include only tracemerge.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tm_strmap_slot {
	const char *key; /* NULL: empty */
	size_t len;
	uint64_t hash;
	size_t val;
};

struct tm_strmap {
	size_t n, cap; /* cap: 0 or a power of two */
	struct tm_strmap_slot *slots;
};

void tm_strmap_fini(struct tm_strmap *m); /* a zeroed map is empty and valid */
/* The slot of key, or NULL. */
struct tm_strmap_slot *tm_strmap_get(const struct tm_strmap *m, const char *key, size_t len);
/* The slot of key; added with val when absent (*added says which). */
struct tm_strmap_slot *tm_strmap_put(struct tm_strmap *m, const char *key, size_t len, size_t val,
				     bool *added);

/* Names to the indices of the entries that hold them, the names kept by
 * their owner (a member list): 8 bytes a slot (the index + 1 and the high
 * half of the name's hash) where a tm_strmap takes 32, a tenth of a
 * member's share of check's memory on a TAR of 10,000 members.  A look-up
 * compares the name of each slot whose hash half matches, read through
 * name_of (set before the first put).  Indices below UINT32_MAX. */
struct tm_ixmap {
	size_t n, cap; /* cap: 0 or a power of two */
	uint64_t *slots; /* 0: empty */
	const char *(*name_of)(const void *ctx, size_t ix, size_t *len);
	const void *ctx;
};

void tm_ixmap_fini(struct tm_ixmap *m); /* the map emptied; name_of and ctx kept */
/* The index of key's entry in *ix, or false. */
bool tm_ixmap_get(const struct tm_ixmap *m, const char *key, size_t len, size_t *ix);
/* Adds key as ix's name unless it is there: then false, its index in *had
 * (when had is not NULL). */
bool tm_ixmap_put(struct tm_ixmap *m, const char *key, size_t len, size_t ix, size_t *had);

struct tm_u64map {
	size_t n, cap;
	uint64_t *keys;
	size_t *vals;
	uint8_t *used;
};

void tm_u64map_fini(struct tm_u64map *m);
/* The value of key, or false. */
bool tm_u64map_get(const struct tm_u64map *m, uint64_t key, size_t *val);
/* Sets key to val (added or replaced). */
void tm_u64map_set(struct tm_u64map *m, uint64_t key, size_t val);

#endif

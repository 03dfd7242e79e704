/* SPDX-License-Identifier: MIT */
/*
 * Field lookups over one protobuf message, as protozero's decoders see it
 * (the last occurrence of a field wins; a malformed field ends the walk):
 * the scanners of the formats that are small protobuf messages
 * (scan_simpleperf.c, scan_primes.c).
 */
#include "scan.h"
#include "proto_wire.h"

/* One field at *p: its number, wire type and value (a varint's value, or
 * a length-delimited field's bytes); *p moves past it.  False at the end
 * or at a malformed field. */
static bool
pb_next(const uint8_t **p, const uint8_t *end, uint32_t *fn, uint32_t *wt, uint64_t *v,
	   const uint8_t **data)
{
	uint64_t tag;
	const uint8_t *q;
	if (*p >= end || !(q = get_varint(*p, end, &tag)))
		return false;
	*fn = (uint32_t)(tag >> 3);
	*wt = (uint32_t)(tag & 7);
	if (*wt == 0) {
		if (!(q = get_varint(q, end, v)))
			return false;
	} else if (*wt == 1 || *wt == 5) {
		size_t k = *wt == 1 ? 8 : 4;
		if ((size_t)(end - q) < k)
			return false;
		q += k;
	} else if (*wt == 2) {
		if (!(q = get_varint(q, end, v)) || (uint64_t)(end - q) < *v)
			return false;
		*data = q;
		q += *v;
	} else {
		return false;
	}
	*p = q;
	return true;
}

const uint8_t *
tm_pb_ld_field(const uint8_t *p, const uint8_t *end, uint32_t f, size_t *len, bool *any)
{
	const uint8_t *found = NULL, *data = NULL;
	uint32_t fn, wt;
	uint64_t v;
	*any = false;
	while (pb_next(&p, end, &fn, &wt, &v, &data)) {
		if (fn != f)
			continue;
		*any = true; /* has_*: the field occurs, whatever its wire type */
		if (wt == 2) {
			found = data;
			*len = (size_t)v;
		}
	}
	return found;
}

uint64_t
tm_pb_varint_field(const uint8_t *p, const uint8_t *end, uint32_t f, bool *has)
{
	const uint8_t *data;
	uint32_t fn, wt;
	uint64_t v, out = 0;
	*has = false;
	while (pb_next(&p, end, &fn, &wt, &v, &data))
		if (fn == f && wt == 0) {
			out = v;
			*has = true;
		}
	return out;
}

const uint8_t *
tm_pb_next_ld(const uint8_t **cur, const uint8_t *end, uint32_t f, size_t *len)
{
	const uint8_t *data;
	uint32_t fn, wt;
	uint64_t v;
	while (pb_next(cur, end, &fn, &wt, &v, &data))
		if (fn == f && wt == 2) {
			*len = (size_t)v;
			return data;
		}
	*cur = end;
	return NULL;
}

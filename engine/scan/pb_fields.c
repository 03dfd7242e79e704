/* SPDX-License-Identifier: MIT */
/*
 * Two field lookups over one protobuf message, as protozero's decoders see
 * it (the last occurrence of a field wins; a malformed field ends the
 * walk): the scanners of the formats that are small protobuf messages
 * (scan_simpleperf.c, scan_primes.c).
 */
#include "scan.h"
#include "proto_wire.h"

/* The last occurrence of length-delimited field f of msg, or NULL; *any:
 * whether f occurs at all (protozero's has_*).  A malformed field ends the
 * walk (the decoder stops there). */
const uint8_t *
tm_pb_ld_field(const uint8_t *p, const uint8_t *end, uint32_t f, size_t *len, bool *any)
{
	const uint8_t *found = NULL;
	*any = false;
	while (p < end) {
		uint64_t tag, v;
		const uint8_t *q = get_varint(p, end, &tag);
		if (!q)
			break;
		uint32_t wt = (uint32_t)(tag & 7), fn = (uint32_t)(tag >> 3);
		if (wt == 0) {
			if (!(q = get_varint(q, end, &v)))
				break;
		} else if (wt == 1) {
			if (end - q < 8)
				break;
			q += 8;
		} else if (wt == 5) {
			if (end - q < 4)
				break;
			q += 4;
		} else if (wt == 2) {
			if (!(q = get_varint(q, end, &v)) || (uint64_t)(end - q) < v)
				break;
			if (fn == f) {
				found = q;
				*len = (size_t)v;
				*any = true;
			}
			q += v;
		} else {
			break;
		}
		if (fn == f)
			*any = true;
		p = q;
	}
	return found;
}

/* The last varint field f of msg (*has false when absent). */
uint64_t
tm_pb_varint_field(const uint8_t *p, const uint8_t *end, uint32_t f, bool *has)
{
	uint64_t out = 0;
	*has = false;
	while (p < end) {
		uint64_t tag, v;
		const uint8_t *q = get_varint(p, end, &tag);
		if (!q)
			break;
		uint32_t wt = (uint32_t)(tag & 7), fn = (uint32_t)(tag >> 3);
		if (wt == 0) {
			if (!(q = get_varint(q, end, &v)))
				break;
			if (fn == f) {
				out = v;
				*has = true;
			}
		} else if (wt == 1) {
			if (end - q < 8)
				break;
			q += 8;
		} else if (wt == 5) {
			if (end - q < 4)
				break;
			q += 4;
		} else if (wt == 2) {
			if (!(q = get_varint(q, end, &v)) || (uint64_t)(end - q) < v)
				break;
			q += v;
		} else {
			break;
		}
		p = q;
	}
	return out;
}


const uint8_t *
tm_pb_next_ld(const uint8_t **cur, const uint8_t *end, uint32_t f, size_t *len)
{
	const uint8_t *p = *cur;
	while (p < end) {
		uint64_t tag, v;
		const uint8_t *q = get_varint(p, end, &tag);
		if (!q)
			break;
		uint32_t wt = (uint32_t)(tag & 7), fn = (uint32_t)(tag >> 3);
		if (wt == 0) {
			if (!(q = get_varint(q, end, &v)))
				break;
		} else if (wt == 1) {
			if (end - q < 8)
				break;
			q += 8;
		} else if (wt == 5) {
			if (end - q < 4)
				break;
			q += 4;
		} else if (wt == 2) {
			if (!(q = get_varint(q, end, &v)) || (uint64_t)(end - q) < v)
				break;
			if (fn == f) {
				*cur = q + v;
				*len = (size_t)v;
				return q;
			}
			q += v;
		} else {
			break;
		}
		p = q;
	}
	*cur = end;
	return NULL;
}

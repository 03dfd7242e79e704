/* SPDX-License-Identifier: MIT */
/*
 * Field lookups over one protobuf message, as protozero's decoders see it
 * (the last occurrence of a field wins; a malformed field, or one of id 0,
 * ends the walk: proto_decoder.cc, ParseOneField): the scanners of the
 * formats that are small protobuf messages (scan_simpleperf.c,
 * scan_primes.c).  One field walk, util's next_field.
 */
#include "scan.h"
#include "proto_wire.h"

const uint8_t *
tm_pb_ld_field(const uint8_t *p, const uint8_t *end, uint32_t f, size_t *len, bool *any)
{
	const uint8_t *found = NULL;
	struct field fl;
	*any = false;
	while (next_field(&p, end, &fl) > 0) {
		if (fl.id != f)
			continue;
		*any = true; /* has_*: the field occurs, whatever its wire type */
		if (fl.wt == 2) {
			found = fl.p;
			*len = fl.len;
		}
	}
	return found;
}

uint64_t
tm_pb_varint_field(const uint8_t *p, const uint8_t *end, uint32_t f, bool *has)
{
	struct field fl;
	uint64_t out = 0;
	*has = false;
	while (next_field(&p, end, &fl) > 0)
		if (fl.id == f && fl.wt == 0) {
			out = fl.v;
			*has = true;
		}
	return out;
}

const uint8_t *
tm_pb_next_ld(const uint8_t **cur, const uint8_t *end, uint32_t f, size_t *len)
{
	struct field fl;
	while (next_field(cur, end, &fl) > 0)
		if (fl.id == f && fl.wt == 2) {
			*len = fl.len;
			return fl.p;
		}
	*cur = end;
	return NULL;
}

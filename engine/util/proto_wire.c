/* SPDX-License-Identifier: MIT */
/* The varint decoder's choice of instructions (proto_wire.h): found once,
 * at start-up, for every reader of the wire (the proto scanner, the op
 * log, the sniffers). */
#include "internal.h"
#include "proto_wire.h"

bool tm_wire_pext, tm_wire_bmi2;

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
/* tm_wire_bmi2: BMI2 (cpuid 7.0 ebx bit 8); tm_wire_pext: BMI2 on Intel or
 * on AMD from family 0x19 (Zen 3; before it pext is microcoded, slower
 * than the shifts). */
__attribute__((constructor)) static void
wire_pext_init(void)
{
	unsigned a = 0, b = 0, c = 0, d = 0, max = 0;
	if (!__get_cpuid(0, &max, &b, &c, &d) || max < 7)
		return;
	bool intel = b == 0x756e6547, amd = b == 0x68747541; /* "Genu", "Auth" */
	__get_cpuid(1, &a, &b, &c, &d);
	unsigned family = (a >> 8) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	__cpuid_count(7, 0, a, b, c, d);
	tm_wire_bmi2 = b >> 8 & 1;
	tm_wire_pext = tm_wire_bmi2 && (intel || (amd && family >= 0x19));
}
#endif

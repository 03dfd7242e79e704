/* SPDX-License-Identifier: MIT */
/*
 * Clock names: the builtin clocks a manifest may name (BuiltinClock in
 * protos/perfetto/common/builtin_clock.proto) and display names for others.
 */
#include <string.h>

#include "internal.h"

/* ------------------------------------------------------------------ */
/* Clock names                                                         */
/* ------------------------------------------------------------------ */

static const char *const manifest_clocks[] = {
	NULL, "REALTIME", "REALTIME_COARSE", "MONOTONIC", "MONOTONIC_COARSE", "MONOTONIC_RAW",
	"BOOTTIME",
};

/* Reentrant: every name is a string literal; ids 0..127 (builtin and
 * sequence-scoped clocks) get "clockN", anything above "custom". */
static const char *const generic_clocks[128] = {
	"clock0", "clock1", "clock2", "clock3", "clock4", "clock5", "clock6", "clock7", "clock8",
	"clock9", "clock10", "clock11", "clock12", "clock13", "clock14", "clock15", "clock16",
	"clock17", "clock18", "clock19", "clock20", "clock21", "clock22", "clock23", "clock24",
	"clock25", "clock26", "clock27", "clock28", "clock29", "clock30", "clock31", "clock32",
	"clock33", "clock34", "clock35", "clock36", "clock37", "clock38", "clock39", "clock40",
	"clock41", "clock42", "clock43", "clock44", "clock45", "clock46", "clock47", "clock48",
	"clock49", "clock50", "clock51", "clock52", "clock53", "clock54", "clock55", "clock56",
	"clock57", "clock58", "clock59", "clock60", "clock61", "clock62", "clock63", "clock64",
	"clock65", "clock66", "clock67", "clock68", "clock69", "clock70", "clock71", "clock72",
	"clock73", "clock74", "clock75", "clock76", "clock77", "clock78", "clock79", "clock80",
	"clock81", "clock82", "clock83", "clock84", "clock85", "clock86", "clock87", "clock88",
	"clock89", "clock90", "clock91", "clock92", "clock93", "clock94", "clock95", "clock96",
	"clock97", "clock98", "clock99", "clock100", "clock101", "clock102", "clock103",
	"clock104", "clock105", "clock106", "clock107", "clock108", "clock109", "clock110",
	"clock111", "clock112", "clock113", "clock114", "clock115", "clock116", "clock117",
	"clock118", "clock119", "clock120", "clock121", "clock122", "clock123", "clock124",
	"clock125", "clock126", "clock127",
};

const char *
tm_clock_name(uint32_t id)
{
	if (id >= 1 && id <= 6)
		return manifest_clocks[id];
	switch (id) {
	case TM_CLOCK_TSC: return "TSC";
	case TM_CLOCK_PERF: return "PERF";
	case TM_CLOCK_TRACE_FILE: return "TRACE_FILE";
	default: break;
	}
	return id < 128 ? generic_clocks[id] : "custom";
}

uint32_t
tm_clock_from_name(const char *name)
{
	if (!name)
		return TM_CLOCK_UNSET;
	for (uint32_t i = 1; i <= 6; i++)
		if (strcmp(name, manifest_clocks[i]) == 0)
			return i;
	return TM_CLOCK_UNSET;
}

/* SPDX-License-Identifier: MIT */
/*
 * The ZIP that trace_processor reads as an Android bugreport
 * (importers/archive/zip_trace_reader.cc, ZipTraceReader::OnPushDataToSorter;
 * importers/android_bugreport/android_bugreport_reader.cc,
 * IsAndroidBugReport): when a member named bugreport-*.txt has a year at
 * name.size() - 23 ("...-2022-06-24-16-24-37.txt"), the whole ZIP is a
 * bugreport: its other members, a perfetto_manifest among them, are never
 * imported as traces.  The first such name in the ZIP's order decides; one
 * shorter than 23 bytes makes substr throw std::out_of_range, which aborts
 * trace_processor.
 */
#include <stdlib.h>
#include <string.h>

#include "replay_state.h"

/* base::StringToInt32 of 4 bytes (strtol, base 10, the whole C string). */
static bool
year_parses(const char *s)
{
	char buf[5];
	memcpy(buf, s, 4);
	buf[4] = '\0';
	char *end;
	if (!buf[0])
		return false;
	(void)strtol(buf, &end, 10);
	return end != buf && *end == '\0';
}

void
tm_bugreport_scan(struct tm_replay *p)
{
	const struct tm_input *in = p->src->in;
	uint8_t *decided = NULL;
	for (size_t i = 0; i < in->n_members; i++) {
		const struct tm_member *mb = &in->members[i];
		if (mb->parent < 0 || in->members[mb->parent].format != TM_FMT_ZIP || !mb->name)
			continue;
		size_t n = strlen(mb->name);
		if (n < 14 || strncmp(mb->name, "bugreport-", 10) || strcmp(mb->name + n - 4, ".txt"))
			continue;
		if (!decided) {
			decided = xcalloc(in->n_members, 1);
			p->bug = xcalloc(in->n_members, 1);
		}
		size_t z = (size_t)mb->parent;
		if (decided[z])
			continue;
		if (n < 23) {
			p->bug[z] = TM_BUG_ABORT;
			decided[z] = 1;
		} else if (year_parses(mb->name + n - 23)) {
			p->bug[z] = TM_BUG_READ;
			decided[z] = 1;
		}
	}
	free(decided);
}

long
tm_bugreport_of(const struct tm_replay *p, size_t mi)
{
	if (!p->bug)
		return -1;
	const struct tm_input *in = p->src->in;
	for (long z = (long)mi; z >= 0; z = in->members[z].parent)
		if (p->bug[z] != TM_BUG_NONE)
			return z;
	return -1;
}

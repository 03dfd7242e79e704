/* SPDX-License-Identifier: MIT */
/* A member's name for explanations (input.h, tm_member_label). */
#include "input.h"

void
tm_member_label(const struct tm_input *in, size_t member, struct tm_buf *out)
{
	const struct tm_member *mb = &in->members[member];
	if (mb->name && mb->name[0]) {
		tm_buf_adds(out, mb->name);
	} else if (mb->name && mb->parent >= 0 && (size_t)mb->parent < member) {
		/* both named "" in trace_file: a gzip/zstd member's inflated
		 * stream, and a TAR or ZIP entry whose name is empty (ours) */
		enum tm_format pf = in->members[mb->parent].format;
		bool inflated = pf == TM_FMT_GZIP || pf == TM_FMT_ZSTD;
		tm_buf_adds(out, inflated ? "\"\" (inflated " : "\"\" (an entry with no name in ");
		tm_member_label(in, (size_t)mb->parent, out);
		tm_buf_addc(out, ')');
	} else {
		tm_buf_adds(out, mb->source_path ? tm_path_base(mb->source_path) : "the input");
	}
}

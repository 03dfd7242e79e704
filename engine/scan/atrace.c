/* SPDX-License-Identifier: MIT */
/*
 * atrace points (atrace.h): trace_processor's SystraceParser
 * (importers/systrace/systrace_parser.{h,cc}) for the three scanners that
 * meet trace_marker text or its kernel look-alikes.
 */
#include "atrace.h"
#include "align_scan.h"
#include "oplog.h"
#include "scan.h"

#include <stdlib.h>
#include <string.h>

/* base::CheckAsciiAndRemoveInvalidUTF8 (src/base/string_utils.cc): true when
 * the text is ASCII; otherwise *out gets the text without the bytes of
 * invalid sequences.  Its own rule, not a strict decoder's: any lead byte
 * 0xF0-0xF7 starts a 4-byte sequence (only F0 and F4 are range-checked). */
static bool
ascii_or_clean(const char *s, size_t len, struct tm_buf *out)
{
	size_t i = 0;
	while (i < len && !((unsigned char)s[i] & 0x80))
		i++;
	if (i == len)
		return true;
	tm_buf_reset(out);
	tm_buf_add(out, s, i);
	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		size_t n = (c & 0x80) == 0 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
			 : (c & 0xF8) == 0xF0 ? 4 : 0;
		bool ok = n != 0;
		if (!n || i + n > len) {
			ok = false;
			n = 1;
		} else if (n == 2) {
			ok = c >= 0xC2;
		} else if (n >= 3) {
			unsigned char b2 = (unsigned char)s[i + 1];
			ok = !(c == 0xE0 && b2 < 0xA0) && !(c == 0xED && b2 >= 0xA0) &&
			     !(c == 0xF0 && b2 < 0x90) && !(c == 0xF4 && b2 > 0x8F);
		}
		for (size_t j = 1; ok && j < n; j++)
			ok = ((unsigned char)s[i + j] & 0xC0) == 0x80;
		if (ok)
			tm_buf_add(out, s + i, n);
		i += n;
	}
	return false;
}

/* base::StringToUInt32 / StringToInt64 over a field (which holds no NUL):
 * strtoul / strtoll, valid when the field is not empty and all of it was
 * read. */
static bool
to_num(const char *s, size_t n, bool is_signed, int64_t *v)
{
	if (!n)
		return false;
	/* plain digits that cannot overflow: what strtoul / strtoll give */
	if (n <= 18) {
		size_t i = is_signed && s[0] == '-';
		uint64_t x = 0;
		for (size_t j = i; j < n && x != UINT64_MAX; j++)
			x = s[j] >= '0' && s[j] <= '9' ? x * 10 + (uint64_t)(s[j] - '0') : UINT64_MAX;
		if (x != UINT64_MAX && n > i) {
			*v = is_signed ? (i ? -(int64_t)x : (int64_t)x) : (int64_t)(uint32_t)x;
			return true;
		}
	}
	char small[32];
	char *buf = n < sizeof small ? small : xmalloc(n + 1);
	memcpy(buf, s, n);
	buf[n] = 0;
	char *end;
	if (is_signed)
		*v = (int64_t)strtoll(buf, &end, 10);
	else
		*v = (int64_t)(uint32_t)strtoul(buf, &end, 10);
	bool ok = !*end;
	if (buf != small)
		free(buf);
	return ok;
}

struct fields {
	const char *s;
	size_t len, off;
};

/* read_next_field: up to the next '|', NUL or the end; eats the separator. */
static const char *
next_field(struct fields *f, size_t *n)
{
	size_t start = f->off;
	while (f->off < f->len && f->s[f->off] != '|' && f->s[f->off] != 0)
		f->off++;
	const char *p = f->s + (start < f->len ? start : f->len);
	*n = f->off > start ? f->off - start : 0;
	f->off++;
	return p;
}

enum tm_atrace_result
tm_atrace_parse(const char *s, size_t len, struct tm_buf *clean, struct tm_atrace_point *out)
{
	memset(out, 0, sizeof *out);
	if (!ascii_or_clean(s, len, clean)) {
		s = clean->data ? clean->data : "";
		len = clean->len;
	}
	while (len && (s[len - 1] == '\n' || s[len - 1] == 0))
		len--;
	struct fields f = {s, len, 0};
	size_t n0, n1, n2, n3, n4;
	const char *f0 = next_field(&f, &n0);
	if (!n0)
		return TM_ATRACE_FAILURE;
	out->phase = f0[0];
	const char *f1 = next_field(&f, &n1);
	int64_t v;
	bool has_tgid = to_num(f1, n1, false, &v);
	out->tgid = has_tgid ? (uint32_t)v : 0;
	const char *f2, *f3, *f4;
	switch (out->phase) {
	case 'B':
		if (!has_tgid)
			return TM_ATRACE_FAILURE;
		if (f.off >= len) {
			out->name = "[empty slice name]";
			out->name_len = 18;
		} else {
			out->name = s + f.off;
			out->name_len = len - f.off;
		}
		return TM_ATRACE_OK;
	case 'E': /* the tgid may be missing (Flutter writes just "E") */
		return TM_ATRACE_OK;
	case 'S':
	case 'F':
	case 'C':
		f2 = next_field(&f, &n2);
		f3 = next_field(&f, &n3);
		if (!has_tgid || !n2 || !to_num(f3, n3, true, &out->value))
			return TM_ATRACE_FAILURE;
		out->name = f2;
		out->name_len = n2;
		return TM_ATRACE_OK;
	case 'I':
		f2 = next_field(&f, &n2);
		if (!has_tgid || !n2)
			return TM_ATRACE_FAILURE;
		out->name = f2;
		out->name_len = n2;
		return TM_ATRACE_OK;
	case 'N':
	case 'G': /* track name, name, and for G a cookie */
		f2 = next_field(&f, &n2);
		f3 = next_field(&f, &n3);
		if (!has_tgid || !n2 || !n3)
			return TM_ATRACE_FAILURE;
		if (out->phase == 'G') {
			f4 = next_field(&f, &n4);
			if (!to_num(f4, n4, true, &out->value))
				return TM_ATRACE_FAILURE;
		}
		out->track = f2;
		out->track_len = n2;
		out->name = f3;
		out->name_len = n3;
		return TM_ATRACE_OK;
	case 'H':
		f2 = next_field(&f, &n2);
		f3 = next_field(&f, &n3);
		f4 = next_field(&f, &n4);
		if (!has_tgid || !n2 || !to_num(n4 ? f4 : f3, n4 ? n4 : n3, true, &out->value))
			return TM_ATRACE_FAILURE;
		out->track = f2;
		out->track_len = n2;
		return TM_ATRACE_OK;
	default:
		if (len >= 23 && !memcmp(s, "trace_event_clock_sync:", 23))
			return TM_ATRACE_UNSUPPORTED;
		return TM_ATRACE_FAILURE;
	}
}

bool
tm_atrace_line(const struct tm_systrace_line *l, struct tm_buf *clean, enum tm_atrace_result *res,
	       struct tm_atrace_point *out)
{
	if (!((l->event_len == 18 && !memcmp(l->event, "tracing_mark_write", 18)) ||
	      (l->event_len == 1 && l->event[0] == '0') ||
	      (l->event_len == 5 && !memcmp(l->event, "print", 5))))
		return false;
	/* ParseLine hands over args_str.c_str(): the text up to a NUL. */
	*res = tm_atrace_parse(l->args, strnlen(l->args, l->args_len), clean, out);
	return true;
}

uint32_t
tm_atrace_line_scan(const struct tm_systrace_line *l, struct tm_buf *clean,
		    struct tm_align_samples *a, struct tm_atrace_event *ev)
{
	enum tm_atrace_result res;
	struct tm_atrace_point pt;
	if (!tm_atrace_line(l, clean, &res, &pt))
		return TM_CONV_FAIL_DROP;
	if (res == TM_ATRACE_FAILURE)
		return TM_CONV_FAIL_DROP | TM_CONV_ATRACE_FAIL;
	if (res == TM_ATRACE_OK) {
		tm_al_atrace(a, &pt, l->ts, 0, 0);
		tm_atrace_event(&pt, l->pid, ev);
	}
	return TM_CONV_FAIL_DROP;
}

bool
tm_atrace_kernel(char type, bool begin, const char *name, size_t name_len, uint32_t tgid,
		 int64_t value, struct tm_atrace_point *out)
{
	memset(out, 0, sizeof *out);
	if (type == 0)
		out->phase = begin ? 'B' : 'E';
	else if (type == 'B' || type == 'E' || type == 'C' || type == 'I')
		out->phase = type;
	else
		return false;
	out->name = name;
	out->name_len = name_len;
	out->tgid = tgid;
	out->value = value;
	return true;
}

bool
tm_atrace_zero(int32_t flag, const char *name, size_t name_len, uint32_t tgid, int64_t value,
	       struct tm_atrace_point *out)
{
	char type = (flag & 1) ? 'B' : (flag & 2) ? 'E' : (flag & 4) ? 'C' : 0;
	return type && tm_atrace_kernel(type, false, name, name_len, tgid, value, out);
}

static uint64_t
key(char kind, uint32_t id, const char *s, size_t n, const int64_t *cookie)
{
	uint64_t h = tm_fnv1a(TM_FNV_INIT, &kind, 1);
	h = tm_fnv1a(h, &id, sizeof id);
	h = tm_fnv1a(h, s, n);
	if (cookie)
		h = tm_fnv1a(h, cookie, sizeof *cookie);
	return h;
}

void
tm_atrace_event(const struct tm_atrace_point *p, uint32_t pid, struct tm_atrace_event *out)
{
	out->name = p->name;
	out->name_len = p->name_len;
	out->tgid = p->tgid;
	out->tkind = 'a';
	out->tname = p->name;
	out->tname_len = p->name_len;
	switch (p->phase) {
	case 'B':
	case 'E':
	case 'I': /* the emitting thread's track */
		out->phase = p->phase;
		out->track = key('t', pid, NULL, 0, NULL);
		out->tkind = 't';
		if (p->phase == 'E')
			out->name = NULL, out->name_len = 0;
		break;
	case 'S':
	case 'F': /* atrace_async_slice: (process, name), then the cookie */
		out->phase = p->phase == 'S' ? 'B' : 'E';
		out->track = key('a', p->tgid, p->name, p->name_len, &p->value);
		break;
	case 'G':
	case 'H': /* atrace_async_slice_for_track: (process, track name) + cookie */
		out->phase = p->phase == 'G' ? 'B' : 'E';
		out->track = key('g', p->tgid, p->track, p->track_len, &p->value);
		out->tname = p->track;
		out->tname_len = p->track_len;
		break;
	case 'N':
		out->phase = 'I';
		out->track = key('n', p->tgid, p->track, p->track_len, NULL);
		out->tname = p->track;
		out->tname_len = p->track_len;
		break;
	case 'C':
		/* Also kill_one_process, which adds a "mem.lmk" instant beside
		 * its counter sample when the value is not 0. */
		out->phase = 'C';
		out->tkind = 'c';
		out->value = p->value;
		out->track = key('c', p->tgid, p->name, p->name_len, NULL);
		break;
	default:
		out->phase = 0;
		out->track = 0;
		out->tkind = 0;
		break;
	}
}

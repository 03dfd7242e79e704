/* SPDX-License-Identifier: MIT */
/*
 * The line loop of the line-oriented text scanners (perf_text, strace, ...):
 * every '\n'-terminated line of a member handed to a callback with its byte
 * offset, a partial line carried across blocks.  trace_processor's line
 * readers (util/trace_blob_view_reader.h MaybeFindAndRead('\n'), as
 * plugins/perf_text/perf_text_trace_tokenizer.cc and
 * plugins/strace/strace_trace_tokenizer.cc use it) parse only what ends
 * with '\n': a last line without one is never looked at, so finish() drops
 * the carry.
 */
#include <inttypes.h>
#include <string.h>

#include "scan.h"

#define MAX_LINE (64u * 1024u * 1024u)

/* Lines of [p, p+n) at offset off; returns the bytes consumed. */
static size_t
lines(struct tm_lines *lr, const char *p, size_t n, uint64_t off)
{
	size_t i = 0;
	while (i < n && !lr->stop) {
		const char *nl = memchr(p + i, '\n', n - i);
		if (!nl)
			break;
		size_t e = (size_t)(nl - p);
		lr->line(lr->self, p + i, e - i, off + i);
		i = e + 1;
	}
	return lr->stop ? n : i;
}

static void
feed(void *self, const char *p, size_t n)
{
	struct tm_lines *lr = self;
	uint64_t off = lr->total;
	lr->total += n;
	if (lr->stop || lr->status != TM_OK)
		return;
	if (lr->carry.len) {
		const char *nl = memchr(p, '\n', n);
		size_t k = nl ? (size_t)(nl - p) + 1 : n;
		tm_buf_add(&lr->carry, p, k);
		p += k;
		n -= k;
		off += k;
		if (!nl)
			goto cap;
		(void)lines(lr, lr->carry.data, lr->carry.len, lr->carry_off);
		lr->carry.len = 0;
	}
	size_t used = lines(lr, p, n, off);
	if (used < n && !lr->stop) {
		tm_buf_add(&lr->carry, p + used, n - used);
		lr->carry_off = off + used;
	}
cap:
	if (lr->carry.len > MAX_LINE && !lr->stop) {
		lr->status = tm_error_set(lr->err, TM_ERR_LIMIT,
					  "byte 0x%" PRIx64 ": %s line longer than 64 MiB",
					  lr->carry_off, lr->what);
		lr->stop = true;
	}
}

static void
finish(void *self)
{
	struct tm_lines *lr = self;
	if (lr->eof && !lr->stop)
		lr->eof(lr->self);
}

void
tm_lines_init(struct tm_lines *lr, const char *what, struct tm_error *err)
{
	memset(lr, 0, sizeof *lr);
	lr->what = what;
	lr->err = err;
	lr->status = TM_OK;
	tm_buf_init(&lr->carry);
}

void
tm_lines_fini(struct tm_lines *lr)
{
	tm_buf_fini(&lr->carry);
}

enum tm_status
tm_scan_lines(struct tm_stream *st, const void *mem, size_t n, size_t block, struct tm_scan *sc,
	      const struct tm_scan_ctl *ctl, struct tm_error *err, struct tm_lines *lr)
{
	struct tm_text_scanner ts = {lr, feed, finish, &lr->status, &lr->total};
	if (st)
		return tm_scan_text(st, sc, ctl, err, &ts);
	return tm_scan_text_mem(mem, n, block, sc, ctl, err, &ts);
}

/* SPDX-License-Identifier: MIT */
/*
 * A log's runs saved: their deltas spilled out of memory once the log is
 * finished (tm_oplog_spill_runs), the log written for the scan cache
 * (inline or with the deltas apart), and a loaded log's deltas left in the
 * cache file (tm_oplog_use_source).  Reads the log with oplog_decode.c.
 */
#include "oplog_priv.h"

#include <stdlib.h>
#include <string.h>

void
tm_oplog_spill_runs(struct tm_oplog *l)
{
	struct tm_opiter it;
	tm_opiter_init(&it, l);
	it.raw_runs = true;
	struct tm_op op;
	struct tm_buf out;
	tm_buf_init(&out);
	size_t from = 0; /* bytes not yet copied */
	bool any = false;
	for (;;) {
		if (!tm_opiter_next(&it, &op))
			break;
		if (op.kind != TM_OP_RUN || !op.run.deltas)
			continue;
		uint32_t n_skip = (op.n + TM_RUN_SKIP - 1) / TM_RUN_SKIP;
		size_t skip_end = (size_t)(op.run.skip - l->bytes) + (size_t)n_skip * 16;
		size_t dlen = it.pos - skip_end;
		uint64_t off;
		if (dlen < 1024 || !tm_ol_sp_wanted(l, dlen) || !tm_ol_sp_write(l->bytes + skip_end, dlen, &off)) {
			tm_ol_mem_keep(l, dlen);
			continue;
		}
		any = true;
		tm_ol_note_spilled(l, off, dlen);
		/* the op up to its flags, the flags with the bit, the rest up to
		 * the deltas, then where they are */
		size_t fp = it.run_flags_pos;
		tm_buf_add(&out, l->bytes + from, fp - from);
		uint8_t f[10];
		size_t nf = 0;
		for (uint64_t x = op.flags | TM_RUN_SPILLED;; x >>= 7) {
			f[nf++] = (uint8_t)(x >= 0x80 ? (x & 0x7f) | 0x80 : x);
			if (x < 0x80)
				break;
		}
		tm_buf_add(&out, f, nf);
		const uint8_t *after = l->bytes + fp;
		while (*after++ & 0x80)
			;
		tm_buf_add(&out, after, skip_end - (size_t)(after - l->bytes));
		for (int k = 0; k < 2; k++) {
			uint64_t v = k ? dlen : off;
			nf = 0;
			for (;; v >>= 7) {
				f[nf++] = (uint8_t)(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
				if (v < 0x80)
					break;
			}
			tm_buf_add(&out, f, nf);
		}
		from = it.pos;
	}
	tm_opiter_fini(&it);
	if (any) {
		tm_buf_add(&out, l->bytes + from, l->len - from);
		BIG_FREE(l->bytes, l->cap);
		/* a heap block becomes a big buffer through the resize */
		l->len = l->cap = 0;
		l->bytes = NULL;
		tm_big_resize((void **)&l->bytes, &l->cap, out.len, 1, TM_BIG_MIN);
		memcpy(l->bytes, out.data, out.len);
		l->len = out.len;
	}
	tm_buf_fini(&out);
}

void
tm_oplog_write_inline(const struct tm_oplog *l, void (*put)(void *ctx, const void *p, size_t n), void *ctx)
{
	struct tm_opiter it;
	tm_opiter_init(&it, l);
	it.raw_runs = true;
	struct tm_op op;
	size_t from = 0; /* bytes not yet handed out */
	for (;;) {
		if (!tm_opiter_next(&it, &op))
			break;
		if (op.kind != TM_OP_RUN || op.run.deltas)
			continue;
		/* a spilled run: its flags without the bit, its deltas in place
		 * of the spill reference */
		size_t fp = it.run_flags_pos;
		put(ctx, l->bytes + from, fp - from);
		uint8_t f[10];
		size_t nf = 0;
		for (uint64_t x = op.flags; ; x >>= 7) {
			f[nf++] = (uint8_t)(x >= 0x80 ? (x & 0x7f) | 0x80 : x);
			if (x < 0x80)
				break;
		}
		put(ctx, f, nf);
		const uint8_t *after = l->bytes + fp;
		while (*after++ & 0x80)
			;
		uint32_t n_skip = (op.n + TM_RUN_SKIP - 1) / TM_RUN_SKIP;
		size_t skip_end = (size_t)(op.run.skip - l->bytes) + (size_t)n_skip * 16;
		put(ctx, after, skip_end - (size_t)(after - l->bytes));
		uint8_t *buf = xmalloc(op.run.spill_len + 1);
		tm_ol_sp_read(op.run.spill_off, buf, op.run.spill_len);
		put(ctx, buf, op.run.spill_len);
		free(buf);
		from = it.pos;
	}
	put(ctx, l->bytes + from, l->len - from);
	tm_opiter_fini(&it);
}

static void
put_varint(void (*put)(void *ctx, const void *p, size_t n), void *ctx, uint64_t v)
{
	uint8_t f[10];
	size_t nf = 0;
	for (;; v >>= 7) {
		f[nf++] = (uint8_t)(v >= 0x80 ? (v & 0x7f) | 0x80 : v);
		if (v < 0x80)
			break;
	}
	put(ctx, f, nf);
}

uint64_t
tm_oplog_write_split(const struct tm_oplog *l, void (*put_h)(void *ctx, const void *p, size_t n),
		     void *hctx, void (*put_deltas)(void *ctx, const void *p, size_t n), void *dctx)
{
	struct tm_opiter it;
	tm_opiter_init(&it, l);
	it.raw_runs = true;
	struct tm_op op;
	size_t from = 0;  /* bytes not yet handed out */
	uint64_t doff = 0; /* out-of-line delta bytes so far */
	uint8_t *buf = NULL;
	while (tm_opiter_next(&it, &op)) {
		if (op.kind != TM_OP_RUN)
			continue;
		uint32_t n_skip = (op.n + TM_RUN_SKIP - 1) / TM_RUN_SKIP;
		size_t skip_end = (size_t)(op.run.skip - l->bytes) + (size_t)n_skip * 16;
		uint64_t dlen = op.run.deltas ? it.pos - skip_end : op.run.spill_len;
		bool out = dlen >= TM_SPLIT_MIN;
		if (op.run.deltas && !out)
			continue; /* inline, and stays so */
		/* up to its flags, the flags, the rest up to the deltas */
		size_t fp = it.run_flags_pos;
		const uint8_t *after = l->bytes + fp;
		while (*after++ & 0x80)
			;
		if (put_h) {
			put_h(hctx, l->bytes + from, fp - from);
			put_varint(put_h, hctx, op.flags | (out ? TM_RUN_SPILLED : 0));
			put_h(hctx, after, skip_end - (size_t)(after - l->bytes));
		}
		const uint8_t *d = op.run.deltas;
		if (!d && (put_deltas || (!out && put_h))) {
			free(buf);
			buf = xmalloc(op.run.spill_len + 1);
			tm_ol_sp_read(op.run.spill_off, buf, op.run.spill_len);
			d = buf;
		}
		if (out) {
			if (put_h) {
				put_varint(put_h, hctx, doff);
				put_varint(put_h, hctx, dlen);
			}
			if (put_deltas)
				put_deltas(dctx, d, dlen);
			doff += dlen;
		} else if (put_h) {
			put_h(hctx, d, dlen);
		}
		from = it.pos;
	}
	if (put_h)
		put_h(hctx, l->bytes + from, l->len - from);
	free(buf);
	tm_opiter_fini(&it);
	return doff;
}

void
tm_oplog_use_source(struct tm_oplog *l, uint64_t base, uint64_t off, uint64_t len,
		    uint64_t mem_bytes)
{
	if (l->x->spill_base != base + off)
		tm_oplog_x_own(l)->spill_base = base + off;
	if (len) {
		tm_ol_src_ref(base);
		tm_ol_note_spilled(l, base + off, len);
	}
	tm_ol_mem_keep(l, mem_bytes);
}


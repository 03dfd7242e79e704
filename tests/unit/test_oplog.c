/* Round trip of every op kind through the byte encoding. */
#include "oplog.h"
#include "t.h"

static void
roundtrip_all_kinds(void)
{
	struct tm_oplog l;
	tm_oplog_init(&l);
	struct tm_op_clock ck[3] = {{6, 1000, 1, false}, {1, -5, 10, false}, {64, 7, 1, true}};
	uint32_t counts[2] = {1, 2};
	int64_t tss[3] = {5, 4, INT64_MAX};
	struct tm_op ops[] = {
		{.kind = TM_OP_MACHINE, .machine = 7, .offset = 10},
		{.kind = TM_OP_SNAPSHOT, .machine = 7, .seq = 3, .flags = TM_SNAP_PACKET, .primary = 6,
		 .n = 3, .clocks = ck, .offset = 20},
		{.kind = TM_OP_PACKET, .clock = 6, .seq = 1, .ts = -3, .n = 1, .offset = 30},
		{.kind = TM_OP_PUSH, .flags = TM_PUSH_TRACK_EVENT, .ts = 99, .detail = 1, .offset = 30},
		{.kind = TM_OP_PUSH_NOTS, .n = 12, .offset = 40},
		{.kind = TM_OP_CONVERT, .ts = INT64_MIN, .flags = TM_CONV_FAIL_DROP, .offset = 5},
		{.kind = TM_OP_CONVERT_ARRAY, .machine = 1, .clock = 6, .n = 3, .tss = tss, .offset = 50},
		{.kind = TM_OP_SERVICE, .clock = 6, .ts = 150, .offset = 60},
		{.kind = TM_OP_REMOTE_SYNC, .machine = 7, .n = 1, .counts = counts, .clocks = ck,
		 .offset = 70},
		{.kind = TM_OP_SYSINFO, .text = "phone", .offset = 80},
		{.kind = TM_OP_STAT, .stat = TM_STAT_JSON_TOKENIZER_FAILURE, .n = 2, .offset = 80},
		{.kind = TM_OP_FATAL, .text = "boom", .offset = 90},
	};
	size_t n = sizeof ops / sizeof ops[0];
	for (size_t i = 0; i < n; i++)
		tm_oplog_add(&l, &ops[i]);
	struct tm_opiter it;
	tm_opiter_init(&it, &l);
	struct tm_op op;
	for (size_t i = 0; i < n; i++) {
		CHECK(tm_opiter_next(&it, &op));
		CHECK_INT(op.kind, ops[i].kind);
		CHECK_INT(op.machine, ops[i].machine);
		CHECK_INT(op.offset, ops[i].offset);
		CHECK_INT(op.n, ops[i].n);
		switch (op.kind) {
		case TM_OP_SNAPSHOT:
			CHECK_INT(op.seq, 3);
			CHECK_INT(op.primary, 6);
			CHECK_INT(op.clocks[1].ts, -5);
			CHECK_INT(op.clocks[1].unit, 10);
			CHECK(op.clocks[2].is_incremental);
			break;
		case TM_OP_PACKET:
		case TM_OP_PUSH:
		case TM_OP_CONVERT:
		case TM_OP_SERVICE:
			CHECK_INT(op.ts, ops[i].ts);
			CHECK_INT(op.clock, ops[i].clock);
			CHECK_INT(op.flags, ops[i].flags);
			CHECK_INT(op.detail, ops[i].detail);
			break;
		case TM_OP_CONVERT_ARRAY:
			CHECK_INT(op.tss[2], INT64_MAX);
			CHECK_INT(op.tss[1], 4);
			break;
		case TM_OP_REMOTE_SYNC:
			CHECK_INT(op.counts[1], 2);
			CHECK_INT(op.clocks[2].id, 64);
			break;
		case TM_OP_SYSINFO:
		case TM_OP_FATAL:
			CHECK_STR(op.text, ops[i].text);
			break;
		case TM_OP_STAT:
			CHECK_INT(op.stat, TM_STAT_JSON_TOKENIZER_FAILURE);
			break;
		default:
			break;
		}
	}
	CHECK(!tm_opiter_next(&it, &op));
	tm_opiter_fini(&it);
	tm_oplog_fini(&l);
}

static void
compact_events_are_small(void)
{
	struct tm_oplog l;
	tm_oplog_init(&l);
	for (int i = 0; i < 1000; i++)
		tm_oplog_convert(&l, 0, 0, 0, 1000000 + i * 1000, TM_CONV_FAIL_DROP, 0, (uint64_t)i * 60);
	CHECK(l.len <= 1000 * 7);
	tm_oplog_fini(&l);
}

static void
details_keep_names(void)
{
	struct tm_oplog l;
	tm_oplog_init(&l);
	uint32_t a = tm_oplog_detail(&l, "alpha", 5, 'B', 7, -1);
	uint32_t b = tm_oplog_detail(&l, NULL, 0, 'E', 7, -1);
	CHECK_INT(a, 1);
	CHECK_INT(b, 2);
	CHECK_STR(tm_oplog_detail_name(&l, &l.details[0]), "alpha");
	CHECK(tm_oplog_detail_name(&l, &l.details[1]) == NULL);
	tm_oplog_fini(&l);
}

/* The one-call appender gives the same bytes as PACKET + PUSH appends, with
 * runs on and off; runs fold and expand back to the same ops. */
static void
packet_push_same_bytes(void)
{
	for (int runs = 0; runs < 2; runs++) {
		struct tm_oplog a, b;
		tm_oplog_init(&a);
		tm_oplog_init(&b);
		a.use_runs = b.use_runs = runs;
		int64_t ts[] = {5, 9, 9, 12, 3, 4, 100};
		uint32_t clocks[] = {0, 0, 0, 6, 6, 6, 64};
		for (int i = 0; i < 7; i++) {
			uint32_t fl = i == 2 ? 0 : TM_PUSH_TRACK_EVENT;
			struct tm_op op = {.kind = TM_OP_PACKET, .clock = clocks[i], .seq = 3,
					   .ts = ts[i], .n = 1, .offset = (uint64_t)i * 10};
			tm_oplog_add(&a, &op);
			tm_oplog_push(&a, 0, 0, fl, 0, (uint64_t)i * 10);
			tm_oplog_packet_push(&b, 0, clocks[i], 3, ts[i], fl, (uint64_t)i * 10);
		}
		tm_oplog_finish(&a);
		tm_oplog_finish(&b);
		CHECK_INT(a.len, b.len);
		CHECK(a.len == b.len && memcmp(a.bytes, b.bytes, a.len) == 0);
		/* expanded, the ops are the plain sequence again */
		struct tm_opiter it;
		struct tm_op op;
		tm_opiter_init(&it, &b);
		int n_pkt = 0, n_push = 0;
		int64_t last = -1;
		while (tm_opiter_next(&it, &op)) {
			if (op.kind == TM_OP_PACKET) {
				CHECK_INT(op.ts, ts[n_pkt]);
				CHECK_INT(op.clock, clocks[n_pkt]);
				n_pkt++;
				last = op.ts;
			} else if (op.kind == TM_OP_PUSH) {
				CHECK_INT(op.flags, n_push == 2 ? 0 : TM_PUSH_TRACK_EVENT);
				n_push++;
			}
		}
		(void)last;
		CHECK_INT(n_pkt, 7);
		CHECK_INT(n_push, 7);
		if (runs)
			CHECK(b.n_runs >= 1);
		tm_opiter_fini(&it);
		tm_oplog_fini(&a);
		tm_oplog_fini(&b);
	}
}

int
main(void)
{
	RUN(roundtrip_all_kinds);
	RUN(compact_events_are_small);
	RUN(details_keep_names);
	RUN(packet_push_same_bytes);
	return 0;
}

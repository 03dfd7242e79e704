/* SPDX-License-Identifier: MIT */
/* Proto scanner: traces built with protobuf-c in memory, scanned with
 * several block sizes, checked op by op through tm_opiter. */
#include "scan.h"
#include "t.h"
#include "align_scan.h"
#include "proto_wire.h"
#include "scan_helpers.h"
#include "trace.pb-c.h"

#include <dirent.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdlib.h>
#include <zlib.h>

typedef Perfetto__Protos__TracePacket Pkt;
typedef Perfetto__Protos__ClockSnapshot Snap;
typedef Perfetto__Protos__ClockSnapshot__Clock Clk;
typedef Perfetto__Protos__TrackEvent TE;

struct tb {
	uint8_t *d;
	size_t n, cap;
};

static void
tb_add(struct tb *b, const void *p, size_t n)
{
	if (!n)
		return;
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->d = realloc(b->d, b->cap);
	}
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void
tb_varint(struct tb *b, uint64_t v)
{
	uint8_t x[10];
	size_t n = 0;
	do {
		x[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			x[n] |= 0x80;
		n++;
	} while (v);
	tb_add(b, x, n);
}

static void
tb_pkt(struct tb *b, const Pkt *p)
{
	size_t n = perfetto__protos__trace_packet__get_packed_size(p);
	uint8_t *buf = malloc(n + 1);
	perfetto__protos__trace_packet__pack(p, buf);
	tb_add(b, "\x0a", 1);
	tb_varint(b, n);
	tb_add(b, buf, n);
	free(buf);
}

/* block source over memory */
struct mem {
	const uint8_t *p;
	size_t n, pos, bs;
};

static enum tm_status
mem_next(void *ctx, const uint8_t **p, size_t *n, struct tm_error *err)
{
	(void)err;
	struct mem *m = ctx;
	size_t k = m->n - m->pos;
	if (k > m->bs)
		k = m->bs;
	*p = m->p + m->pos;
	*n = k;
	m->pos += k;
	return TM_OK;
}

static char ops_buf[65536];

/* Scan and render the op log as one string. */
static const char *
scan_ops(const void *d, size_t n, size_t bs, bool keep, struct tm_scan *out)
{
	struct tm_scan sc;
	struct tm_error err;
	tm_error_clear(&err);
	tm_scan_init(&sc, TM_FMT_PROTO);
	struct mem m = {d, n, 0, bs};
	struct tm_scan_ctl ctl = {.keep_events = keep};
	enum tm_status rc = tm_scan_proto_blocks(mem_next, &m, &sc, &ctl, &err);
	struct tm_opiter it;
	struct tm_op op;
	size_t w = 0;
	ops_buf[0] = 0;
	if (rc != TM_OK)
		w += (size_t)snprintf(ops_buf + w, sizeof ops_buf - w, "RC %d|", (int)rc);
	tm_opiter_init(&it, &sc.log);
	while (tm_opiter_next(&it, &op) && w < sizeof ops_buf - 512) {
		char *o = ops_buf + w;
		size_t r = sizeof ops_buf - w;
		int k = 0;
		switch (op.kind) {
		case TM_OP_MACHINE:
			k = snprintf(o, r, "MACHINE %u", op.machine);
			break;
		case TM_OP_SNAPSHOT:
			k = snprintf(o, r, "SNAP m%u s%u f%u p%u", op.machine, op.seq, op.flags,
				     op.primary);
			for (uint32_t i = 0; i < op.n; i++)
				k += snprintf(o + k, r - (size_t)k, " %u:%lld%s%s", op.clocks[i].id,
					      (long long)op.clocks[i].ts,
					      op.clocks[i].unit != 1 ? "u" : "",
					      op.clocks[i].is_incremental ? "i" : "");
			break;
		case TM_OP_PACKET:
			k = snprintf(o, r, "PKT m%u c%u s%u %lld n%u%s", op.machine, op.clock, op.seq,
				     (long long)op.ts, op.n, op.flags & TM_PKT_CHROME ? " chrome" : "");
			break;
		case TM_OP_PUSH:
			k = snprintf(o, r, "PUSH%s", op.flags & TM_PUSH_TRACK_EVENT ? " te" : "");
			if (op.detail) {
				const struct tm_detail *dt = &sc.log.x->details[op.detail - 1];
				const char *nm = tm_oplog_detail_name(&sc.log, dt);
				/* a null name as ~, an empty one as '' */
				k += snprintf(o + k, r - (size_t)k, " %s%s%s %c %llu", nm ? "'" : "",
					      nm ? nm : "~", nm ? "'" : "",
					      dt->phase ? dt->phase : '-',
					      (unsigned long long)dt->track);
			}
			break;
		case TM_OP_PUSH_NOTS:
			k = snprintf(o, r, "NOTS %u", op.n);
			break;
		case TM_OP_CONVERT:
			k = snprintf(o, r, "CONV c%u s%u %lld f%u", op.clock, op.seq, (long long)op.ts,
				     op.flags);
			break;
		case TM_OP_CONVERT_ARRAY:
			k = snprintf(o, r, "ARR c%u s%u", op.clock, op.seq);
			for (uint32_t i = 0; i < op.n; i++)
				k += snprintf(o + k, r - (size_t)k, " %lld", (long long)op.tss[i]);
			break;
		case TM_OP_SERVICE:
			k = snprintf(o, r, "SERVICE c%u %lld", op.clock, (long long)op.ts);
			break;
		case TM_OP_REMOTE_SYNC: {
			k = snprintf(o, r, "RSYNC m%u", op.machine);
			size_t c = 0;
			for (uint32_t i = 0; i < 2 * op.n; i++) {
				k += snprintf(o + k, r - (size_t)k, " [");
				for (uint32_t j = 0; j < op.counts[i]; j++, c++)
					k += snprintf(o + k, r - (size_t)k, "%s%u:%lld", j ? " " : "",
						      op.clocks[c].id, (long long)op.clocks[c].ts);
				k += snprintf(o + k, r - (size_t)k, "]");
			}
			break;
		}
		case TM_OP_SYSINFO:
			k = snprintf(o, r, "SYSINFO m%u %s", op.machine, op.text);
			break;
		case TM_OP_TIMEZONE:
			k = snprintf(o, r, "TZ m%u %lld", op.machine, (long long)op.ts);
			break;
		case TM_OP_STAT:
			k = snprintf(o, r, "STAT %s %u", tm_stat_name(op.stat), op.n);
			break;
		case TM_OP_FATAL:
			k = snprintf(o, r, "FATAL @%llu %s", (unsigned long long)op.offset, op.text);
			break;
		case TM_OP_RUN: /* never yielded: runs are off in scanner tests */
			break;
		}
		w += (size_t)k;
		ops_buf[w++] = '|';
		ops_buf[w] = 0;
	}
	if (w && ops_buf[w - 1] == '|')
		ops_buf[--w] = 0;
	tm_opiter_fini(&it);
	if (out)
		*out = sc;
	else
		tm_scan_fini(&sc);
	return ops_buf;
}

/* Scan with several block sizes; every one must give the same ops. */
static const char *
scan_all(struct tb *b, bool keep)
{
	static char first[65536];
	static const size_t sizes[] = {1, 7, 64, 1 << 20};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		const char *s = scan_ops(b->d, b->n, sizes[i], keep, NULL);
		if (i == 0)
			snprintf(first, sizeof first, "%s", s);
		else
			CHECK_STR(s, first);
	}
	return first;
}

static Pkt
pkt(void)
{
	Pkt p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	return p;
}

static void
set_ts(Pkt *p, uint64_t ts)
{
	p->has_timestamp = true;
	p->timestamp = ts;
}

static void
set_seq(Pkt *p, uint32_t seq, uint32_t flags)
{
	p->has_trusted_packet_sequence_id = true;
	p->trusted_packet_sequence_id = seq;
	if (flags) {
		p->has_sequence_flags = true;
		p->sequence_flags = flags;
	}
}

static void
add_snapshot(struct tb *b, uint32_t machine, uint32_t c1, uint64_t t1, uint32_t c2, uint64_t t2,
	     uint32_t primary)
{
	Pkt p = pkt();
	Snap s = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Clk a = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT, c = a;
	Clk *cl[2] = {&a, &c};
	a.has_clock_id = a.has_timestamp = true;
	a.clock_id = c1;
	a.timestamp = t1;
	c.has_clock_id = c.has_timestamp = true;
	c.clock_id = c2;
	c.timestamp = t2;
	s.n_clocks = 2;
	s.clocks = cl;
	if (primary) {
		s.has_primary_trace_clock = true;
		s.primary_trace_clock = primary;
	}
	p.clock_snapshot = &s;
	if (machine) {
		p.has_machine_id = true;
		p.machine_id = machine;
	}
	set_seq(&p, 1, 0);
	tb_pkt(b, &p);
}

static void
test_snapshot_and_packets(void)
{
	struct tb b = {0};
	add_snapshot(&b, 0, 6, 1000, 1, 5000, 0);
	Pkt p = pkt();
	set_ts(&p, 2000);
	Perfetto__Protos__ProcessTree pt = PERFETTO__PROTOS__PROCESS_TREE__INIT;
	p.process_tree = &pt;
	tb_pkt(&b, &p);
	p = pkt();
	p.process_tree = &pt; /* no ts: pushed at latest */
	tb_pkt(&b, &p);
	tb_pkt(&b, &p);
	p = pkt();
	set_ts(&p, 3000);
	p.has_timestamp_clock_id = true;
	p.timestamp_clock_id = 1;
	tb_pkt(&b, &p);
	CHECK_STR(scan_all(&b, false),
		  "MACHINE 0|SNAP m0 s1 f1 p0 6:1000 1:5000|PKT m0 c0 s0 2000 n1|PUSH|NOTS 2|"
		  "PKT m0 c1 s0 3000 n1|PUSH");
	free(b.d);
}

static void
test_sequence_flags(void)
{
	struct tb b = {0};
	Pkt p = pkt();
	set_ts(&p, 10);
	set_seq(&p, 1, 2); /* NEEDS on a never-cleared sequence: skipped */
	tb_pkt(&b, &p);
	p = pkt();
	set_ts(&p, 20);
	set_seq(&p, 1, 1); /* CLEARED */
	tb_pkt(&b, &p);
	p = pkt();
	set_ts(&p, 30);
	set_seq(&p, 1, 2); /* kept */
	tb_pkt(&b, &p);
	p = pkt();
	set_ts(&p, 40);
	set_seq(&p, 1, 0);
	p.has_previous_packet_dropped = true;
	p.previous_packet_dropped = 1;
	tb_pkt(&b, &p);
	p = pkt();
	set_ts(&p, 50);
	set_seq(&p, 1, 2); /* skipped again */
	tb_pkt(&b, &p);
	p = pkt();
	set_ts(&p, 60);
	p.has_sequence_flags = true;
	p.sequence_flags = 2; /* NEEDS with seq 0: fatal */
	tb_pkt(&b, &p);
	const char *s = scan_all(&b, false);
	CHECK_STR(s, "MACHINE 0|STAT packet_skipped_seq_needs_incremental_state_invalid 1|"
		     "PKT m0 c0 s1 20 n1|PUSH|PKT m0 c0 s1 30 n1|PUSH|PKT m0 c0 s1 40 n1|PUSH|"
		     "STAT packet_skipped_seq_needs_incremental_state_invalid 1|"
		     "FATAL @41 TracePacket specified SEQ_NEEDS_INCREMENTAL_STATE but the "
		     "TraceWriter's sequence_id is zero (the service is probably too old)");
	free(b.d);
}

static void
test_defaults_reset_on_clear(void)
{
	struct tb b = {0};
	Pkt p = pkt();
	Perfetto__Protos__TracePacketDefaults d = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
	d.has_timestamp_clock_id = true;
	d.timestamp_clock_id = 3;
	p.trace_packet_defaults = &d;
	set_seq(&p, 5, 1);
	tb_pkt(&b, &p);
	p = pkt();
	set_ts(&p, 5000);
	set_seq(&p, 5, 0);
	tb_pkt(&b, &p);
	p = pkt();
	set_ts(&p, 6000);
	set_seq(&p, 5, 1); /* clear: defaults gone */
	tb_pkt(&b, &p);
	p = pkt();
	set_ts(&p, 7000);
	set_seq(&p, 5, 0);
	p.has_timestamp_clock_id = true;
	p.timestamp_clock_id = 64; /* sequence clock */
	tb_pkt(&b, &p);
	CHECK_STR(scan_all(&b, false), "MACHINE 0|NOTS 1|PKT m0 c3 s5 5000 n1|PUSH|"
				       "PKT m0 c0 s5 6000 n1|PUSH|PKT m0 c64 s5 7000 n1|PUSH");
	free(b.d);
}

static void
add_te(struct tb *b, uint32_t seq, uint32_t flags, uint64_t ts, int type, const char *name,
       uint64_t name_iid, uint64_t track)
{
	Pkt p = pkt();
	TE te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	if (ts)
		set_ts(&p, ts);
	set_seq(&p, seq, flags);
	if (type) {
		te.has_type = true;
		te.type = type;
	}
	te.name = (char *)(uintptr_t)name;
	if (name_iid) {
		te.has_name_iid = true;
		te.name_iid = name_iid;
	}
	if (track) {
		te.has_track_uuid = true;
		te.track_uuid = track;
	}
	p.track_event = &te;
	tb_pkt(b, &p);
}

static void
add_interned(struct tb *b, uint32_t seq, uint32_t flags, uint64_t iid, const char *name)
{
	Pkt p = pkt();
	Perfetto__Protos__InternedData id = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	Perfetto__Protos__EventName en = PERFETTO__PROTOS__EVENT_NAME__INIT;
	Perfetto__Protos__EventName *ens[1] = {&en};
	en.has_iid = true;
	en.iid = iid;
	en.name = (char *)(uintptr_t)name;
	id.n_event_names = 1;
	id.event_names = ens;
	p.interned_data = &id;
	set_seq(&p, seq, flags);
	tb_pkt(b, &p);
}

static void
test_interned_names(void)
{
	struct tb b = {0};
	add_interned(&b, 1, 1, 7, "draw");
	add_te(&b, 1, 2, 100, 1, NULL, 7, 42);
	add_te(&b, 1, 2, 200, 2, NULL, 0, 42);
	add_te(&b, 1, 2, 300, 3, "inline", 0, 0);
	add_te(&b, 1, 1, 400, 3, NULL, 7, 0); /* cleared: iid 7 gone */
	CHECK_STR(scan_all(&b, true),
		  "MACHINE 0|NOTS 1|PKT m0 c0 s1 100 n1|PUSH te 'draw' B 42|"
		  "PKT m0 c0 s1 200 n1|PUSH te ~ E 42|"
		  "PKT m0 c0 s1 300 n1|PUSH te 'inline' I 9223372036854775809|"
		  "PKT m0 c0 s1 400 n1|PUSH te ~ I 9223372036854775809");
	free(b.d);
}

static void
test_te_legacy_and_negative(void)
{
	struct tb b = {0};
	Pkt p = pkt();
	TE te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	set_seq(&p, 1, 1);
	te.has_timestamp_absolute_us = true;
	te.timestamp_absolute_us = 5;
	te.has_type = true;
	te.type = 3;
	p.track_event = &te;
	tb_pkt(&b, &p);
	te.timestamp_absolute_us = -5;
	tb_pkt(&b, &p);
	/* delta without a ThreadDescriptor: skipped */
	te.has_timestamp_absolute_us = false;
	te.has_timestamp_delta_us = true;
	te.timestamp_delta_us = 3;
	tb_pkt(&b, &p);
	Pkt q = pkt();
	set_seq(&q, 1, 0);
	Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	td.has_reference_timestamp_us = true;
	td.reference_timestamp_us = 1000;
	q.thread_descriptor = &td;
	tb_pkt(&b, &q);
	p.has_sequence_flags = false;
	tb_pkt(&b, &p);
	tb_pkt(&b, &p);
	/* counter without a value is dropped after the conversion */
	te.type = 4;
	te.has_track_uuid = true;
	te.track_uuid = 9;
	tb_pkt(&b, &p);
	CHECK_STR(scan_all(&b, false),
		  "MACHINE 0|CONV c3 s0 5000 f32|STAT track_event_invalid_timestamp 1|NOTS 1|"
		  "CONV c3 s0 1003000 f32|CONV c3 s0 1006000 f32|CONV c3 s0 1009000 f160");
	free(b.d);
}

static void
test_machines(void)
{
	struct tb b = {0};
	Pkt p = pkt();
	p.synchronization_marker.len = 4;
	p.synchronization_marker.data = (uint8_t *)(uintptr_t)"sync";
	p.has_synchronization_marker = true;
	tb_pkt(&b, &p);
	add_snapshot(&b, 7, 6, 100, 1, 200, 0);
	add_te(&b, 1, 1, 150, 3, "x", 0, 0);
	p = pkt();
	p.has_machine_id = true;
	p.machine_id = 8;
	set_ts(&p, 99);
	tb_pkt(&b, &p);
	struct tm_scan sc;
	const char *s = scan_ops(b.d, b.n, 1 << 20, false, &sc);
	CHECK_STR(s, "NOTS 1|MACHINE 7|SNAP m7 s1 f1 p0 6:100 1:200|MACHINE 0|"
		     "PKT m0 c0 s1 150 n1|PUSH te|MACHINE 8|PKT m8 c0 s0 99 n1|PUSH");
	CHECK_INT(sc.n_embedded, 2);
	CHECK_INT(sc.embedded[0], 7);
	CHECK(sc.has_snapshot);
	tm_scan_fini(&sc);
	free(b.d);
}

static void
test_ftrace(void)
{
	struct tb b = {0};
	Pkt p = pkt();
	Perfetto__Protos__FtraceEventBundle fb = PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__INIT;
	Perfetto__Protos__FtraceEventBundle__CompactSched cs =
		PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__COMPACT_SCHED__INIT;
	uint64_t sts[3] = {100, 10, 5};
	int64_t pst[3] = {0, 0, 0};
	int32_t pid[3] = {1, 2, 3}, prio[3] = {120, 120, 120};
	uint32_t comm[3] = {0, 0, 1};
	char *intern[1] = {(char *)(uintptr_t)"swapper"};
	cs.n_switch_timestamp = 3;
	cs.switch_timestamp = sts;
	cs.n_switch_prev_state = 3;
	cs.switch_prev_state = pst;
	cs.n_switch_next_pid = 3;
	cs.switch_next_pid = pid;
	cs.n_switch_next_prio = 3;
	cs.switch_next_prio = prio;
	cs.n_switch_next_comm_index = 3;
	cs.switch_next_comm_index = comm; /* third index out of range: stops */
	cs.n_intern_table = 1;
	cs.intern_table = intern;
	uint64_t wts[2] = {50, 50};
	cs.n_waking_timestamp = 2;
	cs.waking_timestamp = wts;
	cs.n_waking_pid = 2;
	cs.waking_pid = pid;
	cs.n_waking_target_cpu = 2;
	cs.waking_target_cpu = pid;
	cs.n_waking_prio = 2;
	cs.waking_prio = prio;
	cs.n_waking_comm_index = 2;
	cs.waking_comm_index = comm;
	fb.compact_sched = &cs;
	fb.has_cpu = true;
	fb.cpu = 2;
	fb.has_ftrace_clock = true;
	fb.ftrace_clock = PERFETTO__PROTOS__FTRACE_CLOCK__FTRACE_CLOCK_GLOBAL;
	fb.has_ftrace_timestamp = fb.has_boot_timestamp = true;
	fb.ftrace_timestamp = 5000;
	fb.boot_timestamp = 105000;
	fb.has_previous_bundle_end_timestamp = true;
	fb.previous_bundle_end_timestamp = 4000;
	Perfetto__Protos__FtraceEvent ev = PERFETTO__PROTOS__FTRACE_EVENT__INIT;
	Perfetto__Protos__PrintFtraceEvent pr = PERFETTO__PROTOS__PRINT_FTRACE_EVENT__INIT;
	Perfetto__Protos__FtraceEvent *evs[1] = {&ev};
	pr.buf = (char *)(uintptr_t)"hello\n";
	ev.has_timestamp = true;
	ev.timestamp = 6000;
	ev.print = &pr;
	fb.n_event = 1;
	fb.event = evs;
	p.ftrace_events = &fb;
	set_seq(&p, 3, 0);
	tb_pkt(&b, &p);
	tb_pkt(&b, &p); /* same pair: no second snapshot; not first bundle */
	fb.cpu = 1024;
	tb_pkt(&b, &p);
	const char *s = scan_all(&b, false);
	/* "hello" is no atrace point: f16 | TM_CONV_ATRACE_FAIL (8192) |
	 * TM_CONV_FTRACE (65536): an ftrace event, dropped below
	 * tracing_started_ns once sorted */
	CHECK_STR(s, "MACHINE 0|SNAP m0 s3 f2 p0 64:5000 6:105000|ARR c64 s3 100 110|"
		     "ARR c64 s3 50 100|CONV c64 s3 6000 f73744|CONV c64 s3 4000 f192|"
		     "ARR c64 s3 100 110|ARR c64 s3 50 100|CONV c64 s3 6000 f73744|"
		     "FATAL @182 CPU 1024 is greater than maximum allowed of 1024. This is likely "
		     "because of trace corruption (ERR:tp-corrupt)");
	/* unknown clock, missing cpu */
	free(b.d);
	memset(&b, 0, sizeof b);
	fb.cpu = 0;
	fb.has_cpu = false;
	tb_pkt(&b, &p);
	fb.has_cpu = true;
	fb.ftrace_clock = PERFETTO__PROTOS__FTRACE_CLOCK__FTRACE_CLOCK_UNKNOWN;
	tb_pkt(&b, &p);
	s = scan_all(&b, false);
	CHECK_STR(s, "MACHINE 0|STAT ftrace_bundle_tokenizer_errors 1|"
		     "FATAL @89 Unable to parse ftrace packets with unknown clock");
	free(b.d);
}

static void
test_remote_sync_and_sysinfo(void)
{
	struct tb b = {0};
	Pkt p = pkt();
	Perfetto__Protos__RemoteClockSync rs = PERFETTO__PROTOS__REMOTE_CLOCK_SYNC__INIT;
	Perfetto__Protos__RemoteClockSync__SyncedClocks r1 =
		PERFETTO__PROTOS__REMOTE_CLOCK_SYNC__SYNCED_CLOCKS__INIT, r2 = r1;
	Perfetto__Protos__RemoteClockSync__SyncedClocks *rr[2] = {&r1, &r2};
	Snap c1 = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT, h1 = c1, c2 = c1, h2 = c1;
	Clk k[4];
	Clk *kp[4];
	uint64_t v[4] = {5000, 1000, 5200, 1300};
	Snap *sn[4] = {&c1, &h1, &c2, &h2};
	for (int i = 0; i < 4; i++) {
		Clk z = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT;
		k[i] = z;
		k[i].has_clock_id = k[i].has_timestamp = true;
		k[i].clock_id = 6;
		k[i].timestamp = v[i];
		kp[i] = &k[i];
		sn[i]->n_clocks = 1;
		sn[i]->clocks = &kp[i];
	}
	r1.client_clocks = &c1;
	r1.host_clocks = &h1;
	r2.client_clocks = &c2;
	r2.host_clocks = &h2;
	rs.n_synced_clocks = 2;
	rs.synced_clocks = rr;
	p.remote_clock_sync = &rs;
	p.has_machine_id = true;
	p.machine_id = 7;
	tb_pkt(&b, &p);
	p = pkt();
	Perfetto__Protos__SystemInfo si = PERFETTO__PROTOS__SYSTEM_INFO__INIT;
	si.machine_name = (char *)(uintptr_t)"phone";
	p.system_info = &si;
	tb_pkt(&b, &p);
	p = pkt();
	p.has_service_event = true;
	p.service_event.len = 2;
	p.service_event.data = (uint8_t *)(uintptr_t)"\x08\x01";
	set_ts(&p, 777);
	tb_pkt(&b, &p);
	CHECK_STR(scan_all(&b, false), "MACHINE 7|RSYNC m7 [6:5000] [6:1000] [6:5200] [6:1300]|"
				       "MACHINE 0|SYSINFO m0 phone|SERVICE c6 777");
	free(b.d);
}

static void
test_compressed(void)
{
	struct tb inner = {0};
	add_snapshot(&inner, 0, 6, 10, 3, 20, 0);
	Pkt p = pkt();
	set_ts(&p, 55);
	tb_pkt(&inner, &p);
	uLongf zn = compressBound(inner.n);
	uint8_t *z = malloc(zn);
	CHECK(compress(z, &zn, inner.d, inner.n) == Z_OK);
	struct tb b = {0};
	p = pkt();
	p.has_compressed_packets = true;
	p.compressed_packets.data = z;
	p.compressed_packets.len = zn;
	tb_pkt(&b, &p);
	tb_pkt(&b, &p);
	CHECK_STR(scan_all(&b, false), "MACHINE 0|SNAP m0 s1 f1 p0 6:10 3:20|PKT m0 c0 s0 55 n1|"
				       "PUSH|SNAP m0 s1 f1 p0 6:10 3:20|PKT m0 c0 s0 55 n1|PUSH");
	/* garbage */
	free(b.d);
	memset(&b, 0, sizeof b);
	p.compressed_packets.len = 5;
	tb_pkt(&b, &p);
	CHECK_STR(scan_all(&b, false),
		  "FATAL @0 Failed to decompress compressed_packets (ERR:tp-corrupt)");
	free(b.d);
	free(z);
	free(inner.d);
}

static void
test_corrupt(void)
{
	struct tb b = {0};
	Pkt p = pkt();
	set_ts(&p, 5);
	tb_pkt(&b, &p);
	/* a packet whose inner field overruns the packet */
	tb_add(&b, "\x0a\x03\x40\x80\x80", 5);
	CHECK_STR(scan_all(&b, false),
		  "MACHINE 0|PKT m0 c0 s0 5 n1|PUSH|FATAL @4 Failed to parse proto packet fully; "
		  "the trace is probably corrupt. (ERR:tp-corrupt)");
	free(b.d);
	/* bad wire type at top level */
	memset(&b, 0, sizeof b);
	tb_pkt(&b, &p);
	tb_add(&b, "\x0b\x00", 2);
	CHECK_STR(scan_all(&b, false),
		  "MACHINE 0|PKT m0 c0 s0 5 n1|PUSH|FATAL @4 Unknown field type @ 0x4; the trace is "
		  "corrupt or was produced by a newer version of Perfetto (ERR:tp-corrupt)");
	free(b.d);
	/* a truncated final packet is silently ignored (TP waits for more) */
	memset(&b, 0, sizeof b);
	tb_pkt(&b, &p);
	tb_add(&b, "\x0a\x10\x40\x01", 4);
	CHECK_STR(scan_all(&b, false), "MACHINE 0|PKT m0 c0 s0 5 n1|PUSH");
	free(b.d);
	/* other top-level fields are skipped, including large ones */
	memset(&b, 0, sizeof b);
	tb_add(&b, "\x10\x05\x1d\x01\x02\x03\x04", 7);
	tb_add(&b, "\x12\x90\x4e", 3);
	for (int i = 0; i < 10000; i++)
		tb_add(&b, "\x0a", 1);
	tb_pkt(&b, &p);
	CHECK_STR(scan_all(&b, false), "MACHINE 0|PKT m0 c0 s0 5 n1|PUSH");
	free(b.d);
}

/* Every conformance input.pb must scan with no error. */
static void
test_conformance_inputs(void)
{
	const char *root = T_CORPUS;
	DIR *d = opendir(root);
	if (!d) {
		FAILF("cannot open the conformance corpus %s", root);
		return;
	}
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d))) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s/input.pb", root, e->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		struct tb b = {0};
		char buf[65536];
		size_t k;
		while ((k = fread(buf, 1, sizeof buf, f)) > 0)
			tb_add(&b, buf, k);
		fclose(f);
		struct tm_scan sc;
		const char *s = scan_ops(b.d, b.n, 4096, true, &sc);
		if (sc.failed || strncmp(s, "RC", 2) == 0) {
			CHECK_STR(e->d_name, s);
		}
		tm_scan_fini(&sc);
		free(b.d);
		n++;
	}
	closedir(d);
	CHECK(n > 0);
}

/* The walker's fast path (TrackEvent packets of one-byte-tag fields) and its
 * general path give the same ops and summary.  Each random trace is written
 * twice with the same bytes per packet: A carries 3 filler bytes inside the
 * TrackEvent (an ignored category_iids varint; the fast path takes A's
 * packets), B carries them as an unknown packet field 99 (only the general
 * path takes packets with it). */
static uint64_t fp_rng = 0x9e3779b97f4a7c15ULL;

static uint32_t
fp_rand(uint32_t n)
{
	fp_rng ^= fp_rng << 13;
	fp_rng ^= fp_rng >> 7;
	fp_rng ^= fp_rng << 17;
	return (uint32_t)(fp_rng % n);
}

static void
fp_varint_field(struct tb *b, const char *tag, size_t tag_len, uint64_t v)
{
	tb_add(b, tag, tag_len);
	tb_varint(b, v);
}

static uint64_t
fp_value(void)
{
	switch (fp_rand(5)) {
	case 0: return fp_rand(4);
	case 1: return 1000000000ULL + fp_rand(1000000);
	case 2: return (uint64_t)-(int64_t)fp_rand(100);
	case 3: return 200 + fp_rand(50);
	default: return (uint64_t)fp_rand(1u << 30) << 20;
	}
}

static void
fp_trace(struct tb *a, struct tb *b)
{
	int n = 1 + (int)fp_rand(40);
	for (int i = 0; i < n; i++) {
		struct tb te = {0}, pk = {0};
		if (fp_rand(12) == 0) {
			/* state changes both paths see: defaults, interned names,
			 * a thread descriptor */
			fp_varint_field(&pk, "\x50", 1, fp_rand(3));
			struct tb d = {0};
			switch (fp_rand(3)) {
			case 0:
				fp_varint_field(&d, "\xd0\x03", 2, fp_rand(2) ? 6 : 64 + fp_rand(2));
				tb_add(&pk, "\xda\x03", 2); /* 59 */
				break;
			case 1:
				tb_add(&d, "\x12\x05\x08", 3);
				tb_varint(&d, 1 + fp_rand(3));
				tb_add(&d, "\x12\x01n", 3);
				tb_add(&pk, "\x62", 1); /* 12 */
				break;
			default:
				fp_varint_field(&d, "\x30", 1, fp_rand(1000));
				tb_add(&pk, "\xe2\x02", 2); /* 44 */
				break;
			}
			tb_varint(&pk, d.n);
			tb_add(&pk, d.d, d.n);
			free(d.d);
			tb_add(a, "\x0a", 1);
			tb_varint(a, pk.n);
			tb_add(a, pk.d, pk.n);
			tb_add(b, "\x0a", 1);
			tb_varint(b, pk.n);
			tb_add(b, pk.d, pk.n);
			free(pk.d);
			continue;
		}
		int nf = (int)fp_rand(6);
		for (int f = 0; f < nf; f++) {
			switch (fp_rand(10)) {
			case 0: case 1: fp_varint_field(&te, "\x48", 1, fp_rand(6)); break;
			case 2: case 3: fp_varint_field(&te, "\x58", 1, fp_value()); break;
			case 4: fp_varint_field(&te, "\x50", 1, 1 + fp_rand(3)); break;
			case 5: tb_add(&te, "\xba\x01\x01s", 4); break;
			case 6: fp_varint_field(&te, "\x08", 1, fp_value()); break;
			case 7: fp_varint_field(&te, "\x80\x01", 2, fp_value()); break;
			case 8: fp_varint_field(&te, "\xf0\x01", 2, fp_rand(9)); break;
			default: fp_varint_field(&te, fp_rand(2) ? "\x10" : "\x40", 1, fp_rand(9)); break;
			}
		}
		/* packet fields in random order; the track_event twice at times */
		int order[5] = {0, 1, 2, 3, fp_rand(6) == 0 ? 3 : -1};
		for (int k = 3; k > 0; k--) {
			int j = (int)fp_rand((uint32_t)k + 1), t = order[k];
			order[k] = order[j];
			order[j] = t;
		}
		struct tb pa = {0}, pb = {0};
		for (int k = 0; k < 5; k++) {
			struct tb head = {0};
			switch (order[k]) {
			case 0:
				if (fp_rand(6))
					fp_varint_field(&head, "\x40", 1, fp_value());
				break;
			case 1:
				if (fp_rand(8))
					fp_varint_field(&head, "\x50", 1, fp_rand(4));
				break;
			case 2:
				if (fp_rand(3))
					fp_varint_field(&head, "\x68", 1, fp_rand(4));
				break;
			case 3:
				tb_add(&pa, "\x5a", 1);
				tb_varint(&pa, te.n + 3);
				tb_add(&pa, te.d, te.n);
				tb_add(&pa, "\x18\x80\x01", 3);
				tb_add(&pb, "\x5a", 1);
				tb_varint(&pb, te.n);
				tb_add(&pb, te.d, te.n);
				tb_add(&pb, "\x98\x06\x01", 3); /* 99 */
				break;
			default:
				break;
			}
			tb_add(&pa, head.d, head.n);
			tb_add(&pb, head.d, head.n);
			free(head.d);
		}
		CHECK_INT(pa.n, pb.n);
		tb_add(a, "\x0a", 1);
		tb_varint(a, pa.n);
		tb_add(a, pa.d, pa.n);
		tb_add(b, "\x0a", 1);
		tb_varint(b, pb.n);
		tb_add(b, pb.d, pb.n);
		free(pa.d);
		free(pb.d);
		free(te.d);
	}
}

static void
test_fast_path_agrees(void)
{
	static char ops_a[65536];
	for (int round = 0; round < 400; round++) {
		struct tb a = {0}, b = {0};
		fp_trace(&a, &b);
		CHECK_INT(a.n, b.n);
		for (int keep = 0; keep < 2; keep++) {
			for (size_t bs = 7; bs <= (1u << 20); bs = bs == 7 ? 1u << 20 : bs * 2) {
				struct tm_scan sa, sb;
				snprintf(ops_a, sizeof ops_a, "%s", scan_ops(a.d, a.n, bs, keep, &sa));
				const char *ob = scan_ops(b.d, b.n, bs, keep, &sb);
				CHECK_STR(ops_a, ob);
				CHECK_INT(sa.n_packets, sb.n_packets);
				CHECK_INT(sa.n_events, sb.n_events);
				CHECK_INT(sa.has_raw_ts, sb.has_raw_ts);
				CHECK_INT(sa.raw_min, sb.raw_min);
				CHECK_INT(sa.raw_max, sb.raw_max);
				CHECK_INT(sa.clocks_seen[0], sb.clocks_seen[0]);
				CHECK_INT(sa.clocks_seen[1], sb.clocks_seen[1]);
				CHECK_INT(sa.failed, sb.failed);
				CHECK_INT(sa.log.x->n_details, sb.log.x->n_details);
				tm_scan_fini(&sa);
				tm_scan_fini(&sb);
			}
		}
		free(a.d);
		free(b.d);
	}
}

/* The scanner's alignment name samples (found through its small cache of
 * names) equal tm_al_name called for every named event in order: names of
 * every length around the cache's 8- and 16-byte compares, names that share
 * their outer bytes, more names than the cache has slots and than the table
 * holds (AL_NAMES). */
static void
al_pick_name(char *nm, size_t *len, uint32_t k)
{
	static const char fill[] = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ";
	size_t n = 1 + k % 40;
	for (size_t i = 0; i < n; i++)
		nm[i] = fill[(i * 7 + k / 40) % (sizeof fill - 1)];
	if (n > 2)
		nm[n / 2] = (char)('a' + (k / 40) % 26); /* same ends, other middle */
	*len = n;
}

static void
test_align_names_agree(void)
{
	for (int round = 0; round < 6; round++) {
		uint32_t distinct = round < 3 ? 40u + 300u * (uint32_t)round : AL_NAMES + 300u;
		int n_ev = round < 3 ? 3000 : 12000;
		struct tb b = {0};
		struct tm_align_samples *ref = tm_al_new();
		int64_t ts = 1000;
		for (int i = 0; i < n_ev; i++) {
			uint32_t k = i < (int)distinct ? (uint32_t)i : fp_rand(distinct);
			char nm[64];
			size_t nl;
			al_pick_name(nm, &nl, k);
			bool instant = fp_rand(4) == 0;
			struct tb te = {0}, pk = {0};
			fp_varint_field(&te, "\x48", 1, instant ? 3 : 1);
			fp_varint_field(&te, "\x58", 1, 100 + fp_rand(3));
			tb_add(&te, "\xba\x01", 2);
			tb_varint(&te, nl);
			tb_add(&te, nm, nl);
			ts += fp_rand(1000);
			fp_varint_field(&pk, "\x40", 1, (uint64_t)ts);
			fp_varint_field(&pk, "\x50", 1, 1);
			tb_add(&pk, "\x5a", 1);
			tb_varint(&pk, te.n);
			tb_add(&pk, te.d, te.n);
			tb_add(&b, "\x0a", 1);
			tb_varint(&b, pk.n);
			tb_add(&b, pk.d, pk.n);
			tm_al_name(ref, nm, nl, ts, 0, 0, instant ? AL_INSTANT : 0);
			free(te.d);
			free(pk.d);
		}
		struct tm_scan sc;
		(void)scan_ops(b.d, b.n, round % 2 ? 4096 : 1u << 20, round % 3 == 0, &sc);
		const struct tm_align_samples *got = sc.align;
		CHECK(got != NULL);
		if (got) {
			CHECK_INT(got->n_names, ref->n_names);
			CHECK_INT(got->names_full, ref->names_full);
			for (size_t i = 0; i < ref->n_names && i < got->n_names; i++) {
				const struct al_name *x = &got->names[i], *y = &ref->names[i];
				CHECK_INT(x->len, y->len);
				CHECK(x->len == y->len && memcmp(x->name, y->name, y->len) == 0);
				CHECK_INT(x->count, y->count);
				CHECK_INT(x->all_instant, y->all_instant);
				CHECK_INT(x->n, y->n);
				/* the same times and clocks (off: the packet's offset, the scan's own) */
				struct al_occ xo[AL_OCC], yo[AL_OCC];
				tm_al_occs(x, xo);
				tm_al_occs(y, yo);
				for (uint32_t k = 0; x->n == y->n && k < y->n; k++)
					CHECK(xo[k].ts == yo[k].ts && xo[k].clock == yo[k].clock &&
					      xo[k].machine == yo[k].machine);
			}
		}
		tm_scan_fini(&sc);
		tm_al_free(ref);
		free(b.d);
	}
}

/* The scanner's fast paths against its general path on the same bytes
 * (tm_scan_ctl.no_fast): the op log byte for byte (offsets and sample flags
 * included, with and without runs and details), the scan's summary and its
 * alignment samples.  The packets mix TrackEvents of the plain fields (type,
 * track, name, name_iid, categories, debug annotations) with ones only the
 * general path reads (own timestamps, counters, flows, legacy events,
 * unknown, odd and malformed fields), names that stay instants long after
 * their samples are taken, names that share their outer bytes, interned
 * names, defaults and descriptors. */
static const char *const pt_names[] = {
	"", "s", "ab", "abc", "slice", "abcdefgh", "abcdefghi", "abcdefghijklmnop",
	"abcdefghijklmnopq", "abcdefghXjklmnopq", "abcdefghijklmnopqrstuvwxyz0123456789",
	"abcdefghijklmnopqrsXuvwxyz0123456789", "slicf", "tlice",
};
#define PT_NAMES (sizeof pt_names / sizeof pt_names[0])

static void
pt_len_field(struct tb *b, const char *tag, size_t tag_len, const void *d, size_t n)
{
	tb_add(b, tag, tag_len);
	tb_varint(b, n);
	tb_add(b, d, n);
}

/* The names a trace uses most: often two that share their outer bytes. */
static uint32_t pt_hot[3];

static void
pt_pick_hot(void)
{
	static const uint32_t pairs[][2] = {{8, 9}, {10, 11}, {4, 12}, {4, 13}, {7, 8}};
	const uint32_t *pr = pairs[fp_rand(5)];
	pt_hot[0] = pr[0];
	pt_hot[1] = fp_rand(2) ? pr[1] : fp_rand(PT_NAMES);
	pt_hot[2] = fp_rand(PT_NAMES);
}

static void
pt_te(struct tb *te, uint32_t *last_name)
{
	/* the names of odd index are instants but for one event in a hundred,
	 * so that one comes after their samples are taken */
	if (fp_rand(2)) {
		/* the usual event: its type by its name, its track, its name */
		if (fp_rand(8) == 0)
			*last_name = pt_hot[fp_rand(3)];
		bool inst = (*last_name & 1) ? fp_rand(100) != 0 : fp_rand(100) == 0;
		fp_varint_field(te, "\x48", 1, inst ? 3 : 1 + fp_rand(2));
		fp_varint_field(te, "\x58", 1, 100 + fp_rand(3));
		const char *nm = pt_names[*last_name];
		pt_len_field(te, "\xba\x01", 2, nm, strlen(nm));
		return;
	}
	int nf = (int)fp_rand(7);
	for (int f = 0; f < nf; f++) {
		uint32_t c = fp_rand(fp_rand(6) == 0 ? 24 : 9);
		switch (c) {
		case 0: case 1: {
			static const uint64_t types[] = {1, 2, 3, 1, 2, 3, 0, 4, 5, 6, 1ULL << 40};
			fp_varint_field(te, "\x48", 1, types[fp_rand(11)]);
			break;
		}
		case 2: fp_varint_field(te, "\x58", 1, fp_value()); break;
		case 3: fp_varint_field(te, "\x50", 1, 1 + fp_rand(5)); break;
		case 4: fp_varint_field(te, "\x18", 1, fp_rand(300)); break;
		case 5: case 6: {
			/* a name of even index (the odd ones stay instants) */
			const char *nm = pt_names[2 * fp_rand(PT_NAMES / 2)];
			pt_len_field(te, "\xba\x01", 2, nm, strlen(nm));
			break;
		}
		case 7: pt_len_field(te, "\xb2\x01", 2, "cat,other", 3 + fp_rand(7)); break;
		case 8: pt_len_field(te, "\x22", 1, "\x08\x05\x20\x81\x01", 1 + fp_rand(5)); break;
		/* what plain_te leaves to do_track_event */
		case 9: fp_varint_field(te, "\x08", 1, fp_rand(5000)); break;
		case 10: fp_varint_field(te, "\x80\x01", 2, fp_value()); break;
		case 11: fp_varint_field(te, "\xf0\x01", 2, fp_rand(9)); break;
		case 12: tb_add(te, "\xf9\x02\x01\x02\x03\x04\x05\x06\x07\x08", 10); break;
		case 13: tb_add(te, "\x81\x03\x01\x02\x03\x04\x05\x06\x07\x08", 10); break;
		case 14: pt_len_field(te, "\x32", 1, "\x10\x49", 2); break;
		case 15: fp_varint_field(te, "\x10", 1, fp_rand(9)); break;
		case 16: fp_varint_field(te, "\xc8\x05", 2, fp_rand(9)); break;
		case 17: pt_len_field(te, "\xba\x81\x00", 3, "odd", 3); break; /* a long name tag */
		case 18: tb_add(te, "\x00\x01", 2); break;                      /* id 0 */
		case 19: tb_add(te, "\xba\x01\x7f", 3); break;                  /* past the end */
		case 20: tb_add(te, "\x22\x40", 2); break;                      /* past the end */
		case 21: tb_add(te, "\x48\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11); break;
		case 22: tb_add(te, "\xba", 1); break;                          /* cut tag */
		default: tb_add(te, "\x58\x80", 2); break;                      /* cut varint */
		}
	}
}

static void
pt_packet(struct tb *b, const struct tb *pk)
{
	tb_add(b, "\x0a", 1);
	tb_varint(b, pk->n);
	tb_add(b, pk->d, pk->n);
}

static void
pt_trace(struct tb *b)
{
	int n = 50 + (int)fp_rand(600);
	pt_pick_hot();
	uint32_t last_name = pt_hot[0];
	uint64_t ts = 1000000;
	for (int i = 0; i < n; i++) {
		struct tb pk = {0}, d = {0}, e = {0};
		uint32_t seq = 1 + fp_rand(3);
		switch (fp_rand(40)) {
		case 0: case 1: /* interned names (a cleared state at times) */
			fp_varint_field(&pk, "\x50", 1, seq);
			if (fp_rand(2))
				fp_varint_field(&pk, "\x68", 1, 1);
			for (uint32_t k = 1 + fp_rand(4); k > 0; k--) {
				const char *nm = pt_names[fp_rand(PT_NAMES)];
				fp_varint_field(&e, "\x08", 1, 1 + fp_rand(5));
				pt_len_field(&e, "\x12", 1, nm, strlen(nm));
				pt_len_field(&d, "\x12", 1, e.d, e.n);
				e.n = 0;
			}
			pt_len_field(&pk, "\x62", 1, d.d, d.n);
			break;
		case 2: /* defaults: a clock of the sequence's own at times */
			fp_varint_field(&pk, "\x50", 1, seq);
			fp_varint_field(&d, "\xd0\x03", 2, fp_rand(2) ? 6 : 64 + fp_rand(2));
			pt_len_field(&pk, "\xda\x03", 2, d.d, d.n);
			break;
		case 3: /* a thread descriptor */
			fp_varint_field(&pk, "\x50", 1, seq);
			fp_varint_field(&d, "\x30", 1, fp_rand(1000));
			pt_len_field(&pk, "\xe2\x02", 2, d.d, d.n);
			break;
		default: {
			struct tb te = {0};
			pt_te(&te, &last_name);
			ts += fp_rand(10) == 0 ? (uint64_t)-(int64_t)fp_rand(500) : fp_rand(3000);
			int order = (int)fp_rand(3);
			/* the service's trusted uid and pid (at times field
			 * 127, whose tag starts with the pid's byte) */
			if (fp_rand(3) == 0)
				fp_varint_field(&pk, "\x18", 1, 1000 + fp_rand(100000));
			if (fp_rand(3) == 0)
				fp_varint_field(&pk, fp_rand(8) ? "\xf8\x04" : "\xf8\x07", 2,
						fp_rand(70000));
			for (int k = 0; k < 4; k++) {
				int f = (k + order) % 4;
				if (f == 0 && fp_rand(20))
					fp_varint_field(&pk, "\x40", 1, ts);
				else if (f == 1 && fp_rand(20))
					fp_varint_field(&pk, "\x50", 1, seq);
				else if (f == 2 && fp_rand(15) == 0)
					fp_varint_field(&pk, "\x68", 1, fp_rand(4));
				else if (f == 3)
					pt_len_field(&pk, "\x5a", 1, te.d, te.n);
			}
			free(te.d);
			break;
		}
		}
		pt_packet(b, &pk);
		free(pk.d);
		free(d.d);
		free(e.d);
	}
}

static void
scan_log(const struct tb *b, size_t bs, bool keep, bool runs, bool no_fast, struct tm_scan *sc,
	 enum tm_status *rc)
{
	struct tm_error err;
	tm_error_clear(&err);
	tm_scan_init(sc, TM_FMT_PROTO);
	sc->log.use_runs = runs;
	struct mem m = {b->d, b->n, 0, bs};
	struct tm_scan_ctl ctl = {.keep_events = keep, .no_fast = no_fast};
	*rc = tm_scan_proto_blocks(mem_next, &m, sc, &ctl, &err);
	tm_oplog_finish(&sc->log);
}

/* f: the fast path's scan of b (the caller finishes it), checked against
 * the general path (no_fast) on the same blocks; returns f's status. */
static enum tm_status
fast_same(const struct tb *b, size_t bs, bool keep, bool runs, struct tm_scan *f)
{
	struct tm_scan g;
	enum tm_status rf, rg;
	scan_log(b, bs, keep, runs, false, f, &rf);
	scan_log(b, bs, keep, runs, true, &g, &rg);
	CHECK_INT(rf, rg);
	CHECK_INT(f->log.len, g.log.len);
	CHECK(same_scan(f, &g));
	tm_scan_fini(&g);
	return rf;
}

/* fast_same without and with the events kept, the scans let go. */
static void
fast_same_both(const struct tb *b, size_t bs)
{
	for (int keep = 0; keep < 2; keep++) {
		struct tm_scan f;
		fast_same(b, bs, keep, false, &f);
		tm_scan_fini(&f);
	}
}

static void
test_fast_equals_general(void)
{
	size_t plain = 0;
	for (int round = 0; round < 300 && !t_failed_; round++) {
		struct tb b = {0};
		pt_trace(&b);
		for (int mode = 0; mode < 4; mode++) {
			bool keep = mode & 1, runs = (mode & 2) && !keep;
			size_t bs = round % 3 == 0 ? 7 : round % 3 == 1 ? 4096 : 1u << 20;
			struct tm_scan f;
			enum tm_status rf = fast_same(&b, bs, keep, runs, &f);
			if (bs > 7) {
				/* blocks of 1 byte: every packet framed by
				 * frame_one from the carry, none by the fast
				 * framing loop */
				struct tm_scan o;
				enum tm_status ro;
				scan_log(&b, 1, keep, runs, false, &o, &ro);
				CHECK_INT(rf, ro);
				CHECK(same_scan(&f, &o));
				tm_scan_fini(&o);
			}
			if (f.align)
				for (size_t i = 0; i < f.align->n_names; i++)
					plain += f.align->names[i].count > AL_OCC;
			tm_scan_fini(&f);
		}
		free(b.d);
	}
	/* names past their samples: the memo's case (12 of these traces'
	 * names pass AL_OCC = 128) */
	CHECK(plain >= 10);
}

/* Interned names in the packets of their events (fast_packet's interned
 * copy, interned_fast) against the general path (no_fast), as in
 * test_fast_equals_general: interned data before or after the TrackEvent,
 * twice in a packet, with sequence flags of every kind (a cleared state, a
 * needed one, none), without a sequence id, after a lost packet; entries of
 * every shape: iid and name in either order or twice, either missing,
 * categories and other interned fields, tags of two bytes, wrong wire types,
 * non-minimal varints, long names, malformed entries and fields. */
static void
it_entry(struct tb *d)
{
	struct tb e = {0};
	const char *nm = pt_names[fp_rand(PT_NAMES)];
	uint64_t iid = 1 + fp_rand(6);
	switch (fp_rand(24)) {
	case 0: /* name first */
		pt_len_field(&e, "\x12", 1, nm, strlen(nm));
		fp_varint_field(&e, "\x08", 1, iid);
		break;
	case 1: /* iid and name twice */
		fp_varint_field(&e, "\x08", 1, 1 + fp_rand(6));
		pt_len_field(&e, "\x12", 1, "first", 5);
		fp_varint_field(&e, "\x08", 1, iid);
		pt_len_field(&e, "\x12", 1, nm, strlen(nm));
		break;
	case 2: /* no name */
		fp_varint_field(&e, "\x08", 1, iid);
		break;
	case 3: /* no iid (0) */
		pt_len_field(&e, "\x12", 1, nm, strlen(nm));
		break;
	case 4: /* an iid, a fixed64 iid (ignored), a field of a two-byte tag */
		fp_varint_field(&e, "\x08", 1, iid);
		tb_add(&e, "\x09\x01\x02\x03\x04\x05\x06\x07\x08", 9);
		pt_len_field(&e, "\x12", 1, nm, strlen(nm));
		pt_len_field(&e, "\x8a\x01", 2, "xy", 2);
		break;
	case 5: /* a non-minimal iid, a name field of a non-minimal tag */
		tb_add(&e, "\x08\x83\x00", 3);
		pt_len_field(&e, "\x92\x00", 2, nm, strlen(nm));
		break;
	case 6: { /* a long name */
		char big[300];
		size_t n = 100 + fp_rand(200);
		for (size_t i = 0; i < n; i++)
			big[i] = (char)('a' + (i * 7 + iid) % 26);
		fp_varint_field(&e, "\x08", 1, iid);
		pt_len_field(&e, "\x12", 1, big, n);
		break;
	}
	case 7: /* the name runs past the entry */
		fp_varint_field(&e, "\x08", 1, iid);
		tb_add(&e, "\x12\x09" "ab", 4);
		break;
	case 8: /* a cut iid, then nothing */
		tb_add(&e, "\x08\x80", 2);
		break;
	case 9: /* field id 0: the entry ends there */
		fp_varint_field(&e, "\x08", 1, iid);
		tb_add(&e, "\x02\x01z", 3);
		pt_len_field(&e, "\x12", 1, nm, strlen(nm));
		break;
	case 11: /* an iid of two bytes, the second the name's tag */
		fp_varint_field(&e, "\x08", 1, 2304 + fp_rand(3));
		pt_len_field(&e, "\x12", 1, nm, strlen(nm));
		break;
	case 10: /* a name of a wrong wire type, then the real one */
		fp_varint_field(&e, "\x10", 1, 5);
		fp_varint_field(&e, "\x08", 1, iid);
		pt_len_field(&e, "\x12", 1, nm, strlen(nm));
		break;
	default:
		fp_varint_field(&e, "\x08", 1, iid);
		pt_len_field(&e, "\x12", 1, nm, strlen(nm));
		break;
	}
	switch (fp_rand(18)) {
	case 0: pt_len_field(d, "\x0a", 1, e.d, e.n); break;      /* event_categories */
	case 1: pt_len_field(d, "\x1a", 1, e.d, e.n); break;      /* debug_annotation_names */
	case 2: pt_len_field(d, "\xa2\x01", 2, e.d, e.n); break; /* field 20 */
	case 3: pt_len_field(d, "\x92\x00", 2, e.d, e.n); break; /* event_names, long tag */
	case 4: fp_varint_field(d, "\x10", 1, 7); break;         /* event_names, a varint */
	case 5: fp_varint_field(d, "\x18", 1, 300); break;
	case 6: /* event_names, a fixed64 whose bytes would read as an entry */
		tb_add(d, "\x11\x08\x02\x12\x03" "abc" "\x18", 9);
		break;
	case 7: tb_add(d, "\x02\x01z", 3); break; /* field id 0: no more entries */
	default: pt_len_field(d, "\x12", 1, e.d, e.n); break;     /* event_names */
	}
	free(e.d);
}

static void
it_trace(struct tb *b)
{
	int n = 50 + (int)fp_rand(400);
	uint64_t ts = 1000000;
	for (int i = 0; i < n; i++) {
		struct tb pk = {0}, te = {0}, d = {0};
		uint32_t seq = 1 + fp_rand(3);
		uint32_t ne = fp_rand(5) ? 1 + fp_rand(3) : 0;
		for (uint32_t k = 0; k < ne; k++)
			it_entry(&d);
		if (fp_rand(30) == 0) {
			/* a malformed last field: its size past the end, or a cut tag */
			if (fp_rand(2))
				tb_add(&d, "\x12\x7f\x08\x03\x12\x01z", 7);
			else
				tb_add(&d, "\x80", 1);
		}
		/* the event: mostly of an interned name */
		uint32_t type = 1 + fp_rand(3);
		fp_varint_field(&te, "\x48", 1, type);
		fp_varint_field(&te, "\x58", 1, 100 + fp_rand(3));
		if (fp_rand(8) == 0)
			pt_len_field(&te, "\xba\x01", 2, "inl", 3);
		else if (fp_rand(10))
			fp_varint_field(&te, "\x50", 1, fp_rand(12) ? 1 + fp_rand(7) : 2304 + fp_rand(3));
		if (fp_rand(12) == 0)
			fp_varint_field(&te, "\x08", 1, fp_rand(5000)); /* do_track_event's */
		ts += fp_rand(3000);
		uint32_t flags = fp_rand(8);
		int order = (int)fp_rand(5), twice = fp_rand(20) == 0;
		for (int k = 0; k < 5; k++) {
			switch ((k + order) % 5) {
			case 0:
				if (fp_rand(25))
					fp_varint_field(&pk, "\x40", 1, ts);
				break;
			case 1:
				if (fp_rand(25))
					fp_varint_field(&pk, "\x50", 1, seq);
				break;
			case 2:
				/* none, 1 cleared, 2 needed, 3 both; mostly needed */
				if (flags < 6)
					fp_varint_field(&pk, "\x68", 1, flags < 3 ? 2 : flags - 3);
				if (fp_rand(60) == 0)
					fp_varint_field(&pk, "\xd0\x02", 2, 1); /* a lost packet */
				break;
			case 3:
				if (twice) {
					/* the first of two: the last one counts */
					struct tb d2 = {0};
					it_entry(&d2);
					pt_len_field(&pk, "\x62", 1, d2.d, d2.n);
					free(d2.d);
				}
				if (ne || fp_rand(4))
					pt_len_field(&pk, "\x62", 1, d.d, d.n);
				break;
			default:
				pt_len_field(&pk, "\x5a", 1, te.d, te.n);
				break;
			}
		}
		pt_packet(b, &pk);
		free(pk.d);
		free(te.d);
		free(d.d);
	}
}

static void
test_interned_fast_equals_general(void)
{
	for (int round = 0; round < 300 && !t_failed_; round++) {
		struct tb b = {0};
		it_trace(&b);
		for (int mode = 0; mode < 4; mode++) {
			bool keep = mode & 1, runs = (mode & 2) && !keep;
			size_t bs = round % 3 == 0 ? 7 : round % 3 == 1 ? 4096 : 1u << 20;
			struct tm_scan f;
			fast_same(&b, bs, keep, runs, &f);
			tm_scan_fini(&f);
		}
		free(b.d);
	}
}

/* Two sequences' names whose keys were one 64-bit hash in 273fdb8's table
 * (tm_mix64(salt ^ iid), the salt a mix of the sequence and generation):
 * sequence 2's iid chosen so, its name replaced sequence 1's and the event
 * of sequence 1 took it.  Names are found by (generation, iid) now. */
static uint64_t
old_salt(uint64_t seqkey, uint32_t gen)
{
	return tm_mix64(seqkey ^ tm_mix64((uint64_t)gen ^ 0x9e3779b97f4a7c15ULL));
}

static void
test_interned_names_exact(void)
{
	uint64_t other = 1 ^ old_salt(1, 1) ^ old_salt(2, 1);
	struct tb b = {0};
	add_interned(&b, 1, 1, 1, "alpha");
	add_interned(&b, 2, 1, other, "beta");
	add_te(&b, 1, 2, 100, 3, NULL, 1, 42);
	add_te(&b, 2, 2, 200, 3, NULL, other, 42);
	CHECK_STR(scan_all(&b, true), "MACHINE 0|NOTS 2|PKT m0 c0 s1 100 n1|PUSH te 'alpha' I 42|"
				      "PKT m0 c0 s2 200 n1|PUSH te 'beta' I 42");
	struct tm_scan sc;
	scan_ops(b.d, b.n, 1 << 20, false, &sc);
	CHECK(sc.align && sc.align->n_names == 2);
	for (size_t i = 0; sc.align && i < sc.align->n_names; i++)
		CHECK_INT(sc.align->names[i].count, 1);
	tm_scan_fini(&sc);
	free(b.d);
}

/* The names of the op dump's TrackEvent pushes with a detail, in order, as
 * "'name'|" or "~|" (a null name) each. */
static void
te_names(const char *ops, char *got, size_t cap)
{
	size_t g = 0;
	got[0] = 0;
	for (const char *p = ops; (p = strstr(p, "PUSH te ")) && g < cap;) {
		p += 8;
		if (*p == '~') {
			g += (size_t)snprintf(got + g, cap - g, "~|");
			p++;
			continue;
		}
		if (*p != '\'')
			continue;
		const char *e = strchr(p + 1, '\'');
		if (!e)
			break;
		g += (size_t)snprintf(got + g, cap - g, "%.*s|", (int)(e - p + 1), p);
		p = e + 1;
	}
}

/* A TrackEvent's name as track_event_event_importer.h ParseTrackEventName
 * gives it: its name_iid, else its legacy event's, when not 0 (none if not
 * interned, whatever inline name it has); else its inline name.  Each
 * event's detail (keep) and the alignment samples' counts. */
static void
np_te(struct tb *b, uint64_t ts, const char *name, bool has_iid, uint64_t iid, uint64_t legacy)
{
	struct tb pk = {0}, te = {0}, le = {0};
	fp_varint_field(&te, "\x48", 1, 3); /* instant */
	fp_varint_field(&te, "\x58", 1, 42);
	if (name)
		pt_len_field(&te, "\xba\x01", 2, name, strlen(name));
	if (has_iid)
		fp_varint_field(&te, "\x50", 1, iid);
	if (legacy) {
		fp_varint_field(&le, "\x08", 1, legacy); /* LegacyEvent name_iid */
		pt_len_field(&te, "\x32", 1, le.d, le.n);
	}
	fp_varint_field(&pk, "\x40", 1, ts);
	fp_varint_field(&pk, "\x50", 1, 1);
	pt_len_field(&pk, "\x5a", 1, te.d, te.n);
	pt_packet(b, &pk);
	free(pk.d);
	free(te.d);
	free(le.d);
}

/* An event of the type named "inline" with the bytes x (legacy_event
 * fields) after. */
static void
np_te_typed(struct tb *b, uint64_t ts, uint64_t type, const char *x, size_t n)
{
	struct tb pk = {0}, te = {0};
	fp_varint_field(&te, "\x48", 1, type);
	fp_varint_field(&te, "\x58", 1, 42);
	pt_len_field(&te, "\xba\x01", 2, "inline", 6);
	tb_add(&te, x, n);
	fp_varint_field(&pk, "\x40", 1, ts);
	fp_varint_field(&pk, "\x50", 1, 1);
	pt_len_field(&pk, "\x5a", 1, te.d, te.n);
	pt_packet(b, &pk);
	free(pk.d);
	free(te.d);
}

#define np_te_raw(b, ts, x, n) np_te_typed(b, ts, 3, x, n)

static void
test_te_name_priority(void)
{
	struct tb b = {0};
	add_interned(&b, 1, 1, 7, "draw");
	np_te(&b, 100, "inline", true, 7, 0);   /* draw */
	np_te(&b, 200, "inline", true, 9, 0);   /* none: 9 not interned */
	np_te(&b, 300, "inline", true, 0, 0);   /* inline */
	np_te(&b, 400, NULL, true, 0, 0);       /* none */
	np_te(&b, 500, NULL, false, 0, 7);      /* draw, the legacy iid */
	np_te(&b, 600, "inline", false, 0, 7);  /* draw */
	np_te(&b, 700, NULL, true, 9, 7);       /* none: the event's iid */
	np_te(&b, 800, "inline", true, 0, 7);   /* draw: iid 0 is none */
	/* the legacy event is the last legacy_event field (a typed decoder's
	 * field holds its last value); one not a message is an empty one */
	np_te_raw(&b, 900, "\x32\x02\x08\x07" "\x32\x02\x10\x49", 8); /* inline */
	np_te_raw(&b, 901, "\x32\x02\x08\x07" "\x30\x01", 6);         /* inline */
	np_te_raw(&b, 902, "\x32\x02\x08\x07" "\x35\0\0\0\0", 9);      /* inline */
	np_te_raw(&b, 903, "\x32\x02\x08\x09" "\x32\x02\x08\x07", 8); /* draw */
	np_te_raw(&b, 904, "\x32\x02\x08\x07" "\x32\x00", 6);         /* inline */
	np_te_raw(&b, 905, "\x32\x00" "\x32\x02\x08\x07", 6);         /* draw */
	const char *ops = scan_all(&b, true);
	char got[512];
	te_names(ops, got, sizeof got);
	CHECK_STR(got, "'draw'|~|'inline'|~|'draw'|'draw'|~|'draw'|"
		       "'inline'|'inline'|'inline'|'draw'|'inline'|'draw'|");
	/* the samples alike with and without the details (keep: one lookup
	 * of the iid for both) */
	for (int keep = 0; keep < 2; keep++) {
		struct tm_scan sc;
		scan_ops(b.d, b.n, 1 << 20, keep, &sc);
		CHECK(sc.align && sc.align->n_names == 2);
		for (size_t i = 0; sc.align && i < sc.align->n_names; i++)
			CHECK_INT(sc.align->names[i].count,
				  sc.align->names[i].len == 4 ? 6 : 5);
		tm_scan_fini(&sc);
	}
	fast_same_both(&b, 7);
	free(b.d);
}

/* A TrackEvent's phase in its detail as track_event_event_importer.h
 * Import takes it: a counter's or a state's by its type, any other's by
 * ParsePhaseOrType, its legacy event's phase when it has one (even 0: no
 * slice), as a char (its low byte), else its type's. */
static void
test_te_phase(void)
{
	struct tb b = {0};
	np_te_typed(&b, 100, 1, "\x32\x02\x10\x49", 4);     /* begin, legacy I */
	np_te_typed(&b, 200, 1, "\x32\x02\x10\x00", 4);     /* begin, legacy 0 */
	np_te_typed(&b, 300, 2, "\x32\x03\x10\xc5\x02", 5); /* end, legacy 0x145 */
	np_te_typed(&b, 400, 3, "\x32\x02\x10\x42", 4);     /* instant, legacy B */
	np_te_typed(&b, 500, 0, "\x32\x02\x10\x58", 4);     /* legacy X */
	np_te_typed(&b, 600, 1, "\x32\x00", 2);               /* begin */
	np_te_typed(&b, 700, 1, "\x32\x02\x10\x49\x30\x00", 6); /* begin: empty last */
	np_te_typed(&b, 800, 4, "\x32\x02\x10\x42\xf0\x01\x05", 7); /* counter */
	np_te_typed(&b, 900, 5, "\x32\x02\x10\x42", 4);     /* state */
	const char *ops = scan_all(&b, true);
	char got[1024];
	size_t g = 0;
	for (const char *p = ops; (p = strstr(p, "PUSH te '"));) {
		p = strchr(p + 9, '\'') + 2;
		g += (size_t)snprintf(got + g, sizeof got - g, "%c", *p);
	}
	CHECK_STR(got, "I-EBXBBC-");
	fast_same_both(&b, 7);
	free(b.d);
}

/* A TrackEvent's inline name is its last field 23 of any wire type
 * (TypedProtoDecoder keeps the last; track_event_event_importer.h
 * ParseTrackEventName interns event_.name() when has_name()): one not a
 * string has its value as data(), size 0, so null when 0 (string_pool.h
 * InternString), else empty. */
static void
test_te_inline_name_fields(void)
{
	struct tb b = {0};
	np_te_typed(&b, 100, 3, "\xb8\x01\x00", 3);                 /* null */
	np_te_typed(&b, 200, 3, "\xb8\x01\x05", 3);                 /* empty */
	np_te_typed(&b, 300, 3, "\xbd\x01\0\0\0\0", 6);           /* null */
	np_te_typed(&b, 400, 3, "\xb9\x01\x01\0\0\0\0\0\0\0", 10); /* empty */
	np_te_typed(&b, 500, 3, "\xb8\x01\x00\xba\x01\x01y", 7);   /* y */
	const char *ops = scan_all(&b, true);
	char got[512];
	te_names(ops, got, sizeof got);
	CHECK_STR(got, "~|''|~|''|'y'|");
	fast_same_both(&b, 7);
	free(b.d);
}

/* EventNames as trace_processor interns them (incremental_state.cc
 * InternMessage, packet_sequence_state_generation.cc
 * DecodeInternedStringValue): under the first iid field, of any wire type
 * but a string; with the first name field, empty when it is not a string;
 * not without an iid; an iid given again in its generation keeps its first
 * name, a cleared sequence's iid takes the new one.  Each event's detail,
 * on the fast and the general path. */
static void
en_packet(struct tb *b, bool clear, const char *entry, size_t n)
{
	struct tb pk = {0}, d = {0};
	pt_len_field(&d, "\x12", 1, entry, n);
	fp_varint_field(&pk, "\x50", 1, 1);
	if (clear)
		fp_varint_field(&pk, "\x68", 1, 1);
	pt_len_field(&pk, "\x62", 1, d.d, d.n);
	pt_packet(b, &pk);
	free(pk.d);
	free(d.d);
}

static void
test_event_name_fields(void)
{
	struct tb b = {0};
	en_packet(&b, true, "\x08\x03\x12\x05" "first", 9);
	en_packet(&b, false, "\x08\x03\x12\x06" "second", 10);       /* iid 3 kept */
	en_packet(&b, false, "\x08\x05\x08\x06\x12\x03" "two", 9);   /* iid 5, not 6 */
	en_packet(&b, false, "\x08\x08\x12\x01" "a\x12\x01" "b", 9); /* 'a' */
	en_packet(&b, false, "\x08\x04", 2);                          /* iid 4, null */
	en_packet(&b, false, "\x08\x04\x12\x04" "late", 8);          /* iid 4 kept: null */
	en_packet(&b, false, "\x09\x0a\0\0\0\0\0\0\0\x12\x05" "fixed", 16); /* iid 10 */
	en_packet(&b, false, "\x10\x05\x08\x0c\x12\x04" "real", 10); /* iid 12, empty */
	en_packet(&b, false, "\x12\x05" "noiid", 7);                 /* none */
	en_packet(&b, false, "\x0a\x01z\x08\x0e\x12\x03" "str", 10); /* none: iid a string */
	/* a name that is not a string: its value as data(), size 0
	 * (protozero field.h), so null when 0 (string_pool.h InternString) */
	en_packet(&b, false, "\x08\x10\x10\x00\x12\x01" "n", 7);   /* iid 16, null */
	en_packet(&b, false, "\x08\x11\x15\0\0\0\0", 7);          /* iid 17, null */
	en_packet(&b, false, "\x08\x12\x11\x01\0\0\0\0\0\0\0", 11); /* iid 18, empty */
	en_packet(&b, false, "\x08\x13\x12\x00", 4);                 /* iid 19, empty */
	uint64_t iids[] = {3, 5, 6, 8, 4, 10, 12, 14, 16, 17, 18, 19};
	for (size_t i = 0; i < 12; i++)
		np_te(&b, 100 + i, NULL, true, iids[i], 0);
	/* cleared: a stale name becomes null, a null one a name, again */
	en_packet(&b, true, "\x08\x03", 2);
	en_packet(&b, false, "\x08\x04\x12\x03" "now", 7);
	np_te(&b, 200, NULL, true, 3, 0);
	np_te(&b, 201, NULL, true, 4, 0);
	en_packet(&b, true, "\x08\x03\x12\x05" "third", 9);
	en_packet(&b, false, "\x08\x04\x10\x00", 4);
	np_te(&b, 300, NULL, true, 3, 0);
	np_te(&b, 301, NULL, true, 4, 0);
	const char *ops = scan_all(&b, true);
	char got[512];
	te_names(ops, got, sizeof got);
	CHECK_STR(got, "'first'|'two'|~|'a'|~|'fixed'|''|~|~|~|''|''|~|'now'|'third'|~|");
	fast_same_both(&b, 7);
	free(b.d);
}

/* A sequence that clears before every packet and interns its iid again
 * with a longer name each time (up to 100 bytes, then from 1 again):
 * tm_ps_name_put_slow's replaced names fill the pool, names_grow compacts it.
 * Each event's name, and another sequence's name kept through it all. */
static void
test_interned_pool_compacted(void)
{
	struct tb b = {0};
	char want[65536], nm[128];
	size_t w = 0;
	add_interned(&b, 2, 1, 1, "other");
	for (int i = 0; i < 400; i++) {
		size_t k = 1 + (size_t)i % 100;
		for (size_t j = 0; j < k; j++)
			nm[j] = (char)('a' + (i + (int)j) % 26);
		nm[k] = 0;
		bool null = i % 9 == 4; /* now and then a null name (no name field) */
		add_interned(&b, 1, 1, 1, null ? NULL : nm);
		np_te(&b, 100 + (uint64_t)i, NULL, true, 1, 0);
		if (null)
			w += (size_t)snprintf(want + w, sizeof want - w, "~|");
		else
			w += (size_t)snprintf(want + w, sizeof want - w, "'%s'|", nm);
		if (i % 50 == 0) {
			add_te(&b, 2, 0, 100 + (uint64_t)i, 3, NULL, 1, 42);
			w += (size_t)snprintf(want + w, sizeof want - w, "'other'|");
		}
	}
	const char *ops = scan_ops(b.d, b.n, 4096, true, NULL);
	static char got[65536];
	te_names(ops, got, sizeof got);
	CHECK_STR(got, want);
	fast_same_both(&b, 4096);
	free(b.d);
}

/* The names of many generations against a model of their meaning
 * (incremental_state.cc: a sequence's names are its current generation's;
 * a clear starts an empty one, a lost packet keeps them but interns no
 * more until the next clear; within a generation the first name given
 * for an iid stays, InternMessage): sequences that clear often,
 * interning the same iids again (tm_ps_name_put_slow's reuse of a stale entry) or
 * new ones (names_grow's dropping of stale ones), names of every length
 * (in place or not), events of names of this generation, an earlier one,
 * none.  Each event's name (keep: its detail) and every name's count of
 * alignment samples must be the model's, on the fast and general paths. */
#define NG_SEQS 4
#define NG_IIDS 12
static const char *const ng_names[] = {"", "a", "bb", "draw", "layout_tree", "paint",
				       "v8.compile_and_run_long_name", "x", "commit",
				       "raster_task", "gc"};
#define NG_NAMES (sizeof ng_names / sizeof ng_names[0])

struct ng_seq {
	bool valid;
	uint64_t base; /* the generation's iids: base + 1..NG_IIDS */
	int name[NG_IIDS]; /* index into ng_names, -1: none */
};

static void
test_interned_generations(void)
{
	for (int round = 0; round < 60 && !t_failed_; round++) {
		struct tb b = {0};
		struct ng_seq sq[NG_SEQS];
		memset(sq, 0, sizeof sq);
		for (size_t k = 0; k < NG_SEQS; k++)
			for (int j = 0; j < NG_IIDS; j++)
				sq[k].name[j] = -1;
		char want[65536];
		size_t w = 0;
		uint64_t count[NG_NAMES] = {0};
		uint64_t ts = 1000;
		int n_pk = 100 + (int)fp_rand(600);
		for (int i = 0; i < n_pk; i++) {
			uint32_t k = fp_rand(NG_SEQS);
			struct ng_seq *q = &sq[k];
			struct tb pk = {0}, d = {0}, te = {0};
			bool clear = fp_rand(6) == 0, lost = !clear && fp_rand(40) == 0;
			if (clear) {
				q->valid = true;
				/* the same iids again, or new ones */
				q->base = fp_rand(2) ? 0 : fp_rand(3) ? 1000 + fp_rand(1u << 30)
								 : (uint64_t)-(int64_t)(100 + fp_rand(1000));
				for (int j = 0; j < NG_IIDS; j++)
					q->name[j] = -1;
			} else if (lost) {
				q->valid = false;
			}
			uint32_t ne = fp_rand(3) ? fp_rand(4) : 0;
			for (uint32_t e = 0; e < ne; e++) {
				struct tb en = {0};
				/* nm NG_NAMES: a null name, without a name
				 * field or of a name 0 not a string */
				uint32_t j = fp_rand(NG_IIDS), nm = fp_rand(NG_NAMES + 1);
				fp_varint_field(&en, "\x08", 1, q->base + 1 + j);
				if (nm < NG_NAMES)
					pt_len_field(&en, "\x12", 1, ng_names[nm],
						     strlen(ng_names[nm]));
				else if (fp_rand(2))
					fp_varint_field(&en, "\x10", 1, 0);
				pt_len_field(&d, "\x12", 1, en.d, en.n);
				free(en.d);
				if (q->valid && q->name[j] < 0)
					q->name[j] = (int)nm;
			}
			/* an instant of an iid of this generation, mostly */
			uint32_t j = fp_rand(NG_IIDS);
			bool none = fp_rand(8) == 0;
			uint64_t iid = none ? 5000000000ULL + fp_rand(5) : q->base + 1 + j;
			int nm = none ? -1 : q->name[j];
			fp_varint_field(&te, "\x48", 1, 3);
			fp_varint_field(&te, "\x58", 1, 42);
			fp_varint_field(&te, "\x50", 1, iid);
			ts += 1 + fp_rand(1000);
			fp_varint_field(&pk, "\x40", 1, ts);
			fp_varint_field(&pk, "\x50", 1, 1 + k);
			if (clear)
				fp_varint_field(&pk, "\x68", 1, 1);
			if (lost)
				fp_varint_field(&pk, "\xd0\x02", 2, 1);
			if (ne)
				pt_len_field(&pk, "\x62", 1, d.d, d.n);
			pt_len_field(&pk, "\x5a", 1, te.d, te.n);
			pt_packet(&b, &pk);
			free(pk.d);
			free(d.d);
			free(te.d);
			if (nm >= 0 && nm < (int)NG_NAMES)
				w += (size_t)snprintf(want + w, sizeof want - w, "'%s'|",
						      ng_names[nm]);
			else
				w += (size_t)snprintf(want + w, sizeof want - w, "~|");
			if (nm > 0 && nm < (int)NG_NAMES)
				count[nm]++;
		}
		/* each event's name, from its detail */
		char got[65536];
		const char *ops = scan_ops(b.d, b.n, round % 2 ? 7 : 1u << 20, true, NULL);
		te_names(ops, got, sizeof got);
		CHECK_STR(got, want);
		/* the alignment samples' counts */
		struct tm_scan sc;
		scan_ops(b.d, b.n, 4096, false, &sc);
		size_t n_named = 0;
		for (size_t i = 1; i < NG_NAMES; i++)
			n_named += count[i] > 0;
		CHECK_INT(sc.align ? sc.align->n_names : 0, n_named);
		for (size_t i = 0; sc.align && i < sc.align->n_names; i++) {
			const struct al_name *a = &sc.align->names[i];
			size_t x = 1;
			while (x < NG_NAMES && (strlen(ng_names[x]) != a->len ||
						memcmp(ng_names[x], a->name, a->len)))
				x++;
			CHECK(x < NG_NAMES);
			if (x < NG_NAMES)
				CHECK_INT(a->count, count[x]);
		}
		tm_scan_fini(&sc);
		for (int mode = 0; mode < 2; mode++) {
			struct tm_scan f;
			fast_same(&b, 4096, mode, false, &f);
			tm_scan_fini(&f);
		}
		free(b.d);
	}
}

/* compact_sched bundles: the scanner's event loop (compact_array) against
 * its general loop (no_fast) on the same bytes, as test_fast_equals_general
 * (op log, summary, least and most timestamps).  Columns of unequal
 * lengths, deltas of one to ten bytes (negative ones, sums past 2^62 that
 * wrap, large ones that leave the first and last times the extremes no
 * more), varints of eleven bytes, a varint cut at a column's end, comm
 * indices past the intern table, missing columns. */
static void
cs_varint_raw(struct tb *c, uint32_t kind)
{
	switch (kind) {
	case 0: tb_add(c, "\x81\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 11); break;
	case 1: tb_varint(c, (uint64_t)-(int64_t)(1 + fp_rand(100000))); break;
	case 2: tb_varint(c, (uint64_t)1 << 61); break;
	case 3: tb_varint(c, (uint64_t)fp_rand(1000) << 40); break;
	case 4: tb_add(c, "\x85\x00", 2); break; /* non-minimal */
	default: tb_varint(c, (uint64_t)fp_rand(1u << 30) << fp_rand(30)); break;
	}
}

/* the kind of a bundle's odd varints: one of cs_varint_raw's (2: deltas
 * whose sum wraps), or 7: any */
static uint32_t cs_kind;

static void
cs_column(struct tb *cs, uint32_t id, uint32_t n, bool times, uint32_t n_intern, uint32_t odd)
{
	struct tb c = {0};
	if (fp_rand(25) == 0)
		return; /* missing */
	uint32_t len = fp_rand(6) == 0 ? fp_rand(n + 2) : n;
	for (uint32_t i = 0; i < len; i++) {
		if (odd && fp_rand(odd) == 0)
			cs_varint_raw(&c, cs_kind < 7 ? cs_kind : fp_rand(7));
		else if (times)
			tb_varint(&c, fp_rand(8) ? 1000 + fp_rand(2000) : fp_rand(200));
		else
			tb_varint(&c, fp_rand(40) ? fp_rand(n_intern ? n_intern : 1) : n_intern);
	}
	if (fp_rand(30) == 0)
		tb_add(&c, "\x80", 1); /* cut at the end */
	char tag = (char)(id << 3 | 2);
	pt_len_field(cs, &tag, 1, c.d, c.n);
	free(c.d);
}

static void
cs_trace(struct tb *b)
{
	int n_pk = 1 + (int)fp_rand(12);
	for (int i = 0; i < n_pk; i++) {
		struct tb cs = {0}, fb = {0}, pk = {0};
		uint32_t n = fp_rand(5) ? 1 + fp_rand(600) : fp_rand(3);
		uint32_t n_intern = fp_rand(5);
		uint32_t odd = fp_rand(3) ? 0 : 1 + fp_rand(50);
		cs_kind = fp_rand(10);
		for (uint32_t k = 0; k < n_intern; k++)
			pt_len_field(&cs, "\x2a", 1, "comm", 4); /* intern_table */
		for (int part = 0; part < 2; part++) {
			uint32_t m = part ? n / 3 : n;
			cs_column(&cs, part ? 7 : 1, m, true, n_intern, odd);
			for (uint32_t c = 0; c < 3; c++)
				cs_column(&cs, part ? 8 + c : 2 + c, m, false, 1000, 0);
			cs_column(&cs, part ? 11 : 6, m, false, n_intern, odd ? 1000 : 0);
		}
		fp_varint_field(&fb, "\x08", 1, fp_rand(4)); /* cpu */
		pt_len_field(&fb, "\x22", 1, cs.d, cs.n);   /* compact_sched */
		pt_len_field(&pk, "\x0a", 1, fb.d, fb.n);   /* ftrace_events */
		fp_varint_field(&pk, "\x50", 1, 1 + fp_rand(2));
		pt_packet(b, &pk);
		free(cs.d);
		free(fb.d);
		free(pk.d);
	}
}

static void
test_compact_fast_equals_general(void)
{
	for (int round = 0; round < 400 && !t_failed_; round++) {
		struct tb b = {0};
		cs_trace(&b);
		for (int mode = 0; mode < 2; mode++) {
			size_t bs = round % 3 == 0 ? 7 : round % 3 == 1 ? 4096 : 1u << 20;
			struct tm_scan f;
			fast_same(&b, bs, false, mode, &f);
			tm_scan_fini(&f);
		}
		free(b.d);
	}
}

/* A long trace for PACKET runs: TrackEvent packets on four sequences,
 * their timestamps going up by deltas of one to nine bytes, now and then
 * down, now and then on another clock (timestamp_clock_id MONOTONIC), a
 * sequence clock or between other packets; quiet stretches long enough to
 * pass TM_RUN_MAX. */
static void
pl_trace(struct tb *b, uint32_t n, bool quiet)
{
	uint64_t ts = 1000000;
	for (uint32_t i = 0; i < n; i++) {
		struct tb pk = {0}, te = {0}, d = {0};
		uint32_t seq = 1 + fp_rand(4), r = quiet && (i / 100000) % 4 != 3 ? 999 : fp_rand(1000);
		switch (fp_rand(8)) {
		case 0: ts += fp_rand(60); break;
		case 1: ts += (uint64_t)1 << (7 + fp_rand(30)); break;
		default: ts += 500 + fp_rand(4000); break;
		}
		if (r < 20)
			ts -= fp_rand(10000);
		if (r == 20) {
			/* defaults with a sequence clock, then an event on it */
			fp_varint_field(&pk, "\x50", 1, seq);
			fp_varint_field(&d, "\xd0\x03", 2, 64);
			pt_len_field(&pk, "\xda\x03", 2, d.d, d.n);
			pt_packet(b, &pk);
			pk.n = 0;
		}
		if (r == 21) {
			/* a thread descriptor between the events */
			fp_varint_field(&pk, "\x50", 1, seq);
			fp_varint_field(&d, "\x30", 1, fp_rand(1000));
			pt_len_field(&pk, "\xe2\x02", 2, d.d, d.n);
			pt_packet(b, &pk);
			pk.n = 0;
		}
		fp_varint_field(&te, "\x48", 1, 1 + (i & 1));
		fp_varint_field(&te, "\x58", 1, 100 + seq);
		if (!(i & 1))
			pt_len_field(&te, "\xba\x01", 2, "slice", 5);
		fp_varint_field(&pk, "\x40", 1, ts);
		fp_varint_field(&pk, "\x50", 1, seq);
		if (r == 22 || r == 23)
			fp_varint_field(&pk, "\xd0\x03", 2, 3); /* timestamp_clock_id */
		pt_len_field(&pk, "\x5a", 1, te.d, te.n);
		pt_packet(b, &pk);
		free(pk.d);
		free(te.d);
		free(d.d);
	}
}

/* The proto scanner's op logs with PACKET runs encoded as they grow
 * (tm_oplog_packet_push_i) must be the bytes the encoding before pkt_add
 * wrote (values staged, encoded at the run's end; this test's oracle until
 * it was removed): over 80 generated traces (TrackEvent with every kind of
 * packet between, long plain stretches past TM_RUN_MAX), one FNV-1a hash
 * of all their bytes and their summed lengths, ops and runs, as both wrote
 * them.  A change of the encoding or of what the scanner logs changes
 * them: TM_TEST_PRINT=1 prints the new ones. */
static void
test_pkt_runs_stored_bytes(void)
{
	static const uint64_t want[5] = {0xcba5446f6f8f1a8bULL, 37774620, 5465546, 11922, 1378223};
	uint64_t h = 0xcbf29ce484222325ULL, len = 0, n_ops = 0, n_runs = 0, n_elems = 0;
	size_t keep = tm_oplog_spill_after;
	tm_oplog_spill_after = SIZE_MAX; /* the bytes in the log */
	uint64_t rng = fp_rng;
	fp_rng = 0x2545f4914f6cdd1dULL; /* the same traces whatever ran before */
	for (int round = 0; round < 80 && !t_failed_; round++) {
		struct tb b = {0};
		if (round < 60)
			pt_trace(&b);
		else
			pl_trace(&b, round < 76 ? 20000 : 600000, round >= 70);
		size_t bs = round % 2 ? 4096 : 1u << 20;
		struct tm_scan f;
		enum tm_status rf;
		scan_log(&b, bs, false, true, false, &f, &rf);
		CHECK_INT(rf, TM_OK);
		CHECK(round < 76 || f.log.n_runs >= 3);
		for (size_t i = 0; i < f.log.len; i++)
			h = (h ^ f.log.bytes[i]) * 0x100000001b3ULL;
		len += f.log.len;
		n_ops += f.log.n_ops;
		n_runs += f.log.n_runs;
		n_elems += f.log.n_run_elems;
		tm_scan_fini(&f);
		free(b.d);
	}
	tm_oplog_spill_after = keep;
	fp_rng = rng;
	if (getenv("TM_TEST_PRINT"))
		printf("0x%016" PRIx64 "ULL, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 "\n", h, len,
		       n_ops, n_runs, n_elems);
	CHECK(h == want[0]);
	CHECK_INT(len, want[1]);
	CHECK_INT(n_ops, want[2]);
	CHECK_INT(n_runs, want[3]);
	CHECK_INT(n_elems, want[4]);
}

/* count_packed (16, 8 and 1 byte at a time) counts the bytes without the
 * continuation bit, as the plain loop: every length to past two of its
 * 255-block sums, every alignment, bytes of the bit never, always, or at
 * random. */
static void
test_count_packed(void)
{
	static uint8_t buf[16 * 255 * 2 + 64];
	size_t lens[] = {16 * 255 - 1, 16 * 255, 16 * 255 + 1, 16 * 255 * 2 + 15,
			 16 * 255 * 2 + 33};
	for (int mode = 0; mode < 4; mode++) {
		for (size_t i = 0; i < sizeof buf; i++) {
			uint8_t b = (uint8_t)fp_rand(128);
			buf[i] = mode == 0 ? b : mode == 1 ? (uint8_t)(b | 0x80)
				 : mode == 2 && fp_rand(2) ? (uint8_t)(b | 0x80) : b;
			if (mode == 3 && fp_rand(50) == 0)
				buf[i] |= 0x80;
		}
		for (size_t k = 0; k < 700 + sizeof lens / sizeof lens[0]; k++) {
			size_t len = k < 700 ? k : lens[k - 700];
			for (size_t at = 0; at < 16 && !t_failed_; at += k < 700 ? 1 : 5) {
				struct field f = {.id = 1, .wt = WT_LEN, .p = buf + at, .len = len};
				size_t want = 0;
				for (size_t i = 0; i < len; i++)
					want += !(buf[at + i] & 0x80);
				CHECK_INT(count_packed(&f), want);
			}
		}
	}
	struct field none = {.id = 1, .wt = WT_LEN};
	CHECK_INT(count_packed(&none), 0);
}

/* The varint readers of proto_wire.h agree with the plain loop: the 8-byte
 * decoders (get_varint_lim, get_varint_wide) on value and end,
 * skip_varint_lim on the end, for every length of varint, every cut (end)
 * and every readable limit (lim); with the shifts and, where this CPU has
 * one (tm_wire_bmi2: fast or not, the same answers), with pext. */
static void
test_varint_readers(void)
{
	uint8_t buf[32];
	bool hw_pext = tm_wire_pext;
	for (int round = 0; round < 40000 && !t_failed_; round++) {
		tm_wire_pext = round % 2 && tm_wire_bmi2;
		for (size_t i = 0; i < sizeof buf; i++)
			buf[i] = (uint8_t)(fp_rand(3) ? 0x80 | fp_rand(128) : fp_rand(256));
		size_t vlen = fp_rand(13);
		for (size_t i = 0; i < vlen && i < 12; i++)
			buf[i] |= 0x80;
		buf[vlen] &= 0x7f;
		size_t n_end = fp_rand(14), n_lim = n_end + fp_rand(10);
		const uint8_t *p = buf, *end = buf + n_end, *lim = buf + n_lim;
		uint64_t a = 0, b = 0;
		const uint8_t *ra = get_varint_slow(p, end, &a);
		const uint8_t *rb = get_varint_lim(p, end, lim, &b);
		CHECK(ra == rb);
		if (ra && rb)
			CHECK(a == b);
		CHECK(skip_varint_lim(p, end, lim) == ra);
		uint64_t c = 0;
		CHECK(get_varint_wide(p, end, lim, &c) == ra);
		if (ra)
			CHECK(c == a);
	}
	tm_wire_pext = hw_pext;
}

/* A tag's id is its varint >> 3 cast to 32 bits (protozero
 * proto_decoder.cc ParseOneField): an id of 2^32 + 8 is field 8 (the
 * packet's timestamp), one whose low 32 bits are above kMaxId (2^24 - 1)
 * a field skipped, the walk going on; only low bits of 0 end it. */
static void
test_tag_id_truncated(void)
{
	struct tb b = {0};
	for (int k = 0; k < 3; k++) {
		struct tb pk = {0}, te = {0};
		fp_varint_field(&te, "\x48", 1, 3);
		fp_varint_field(&te, "\x58", 1, 42);
		if (k == 2) /* id 2^32 + 23: the name */
			pt_len_field(&te, "\xba\x81\x80\x80\x80\x01", 6, "x", 1);
		fp_varint_field(&pk, "\x40", 1, 100);
		if (k == 0) /* id 2^32 + 8: the timestamp */
			fp_varint_field(&pk, "\xc0\x80\x80\x80\x80\x01", 6, 500);
		else if (k == 1) /* id 2^32 + 2^25: skipped */
			fp_varint_field(&pk, "\x80\x80\x80\x80\x81\x01", 6, 7);
		fp_varint_field(&pk, "\x50", 1, 1);
		pt_len_field(&pk, "\x5a", 1, te.d, te.n);
		pt_packet(&b, &pk);
		free(pk.d);
		free(te.d);
	}
	CHECK_STR(scan_all(&b, true), "MACHINE 0|PKT m0 c0 s1 500 n1|PUSH te ~ I 42|"
				      "PKT m0 c0 s1 100 n1|PUSH te ~ I 42|"
				      "PKT m0 c0 s1 100 n1|PUSH te 'x' I 42");
	fast_same_both(&b, 7);
	free(b.d);
}

static void
slurp(const char *path, struct tb *b)
{
	FILE *f = fopen(path, "rb");
	char buf[65536];
	size_t k;
	CHECK(f != NULL);
	if (!f)
		return;
	while ((k = fread(buf, 1, sizeof buf, f)) > 0)
		tb_add(b, buf, k);
	fclose(f);
}

/* The demo writes five files (manifest first); its protos scan cleanly. */
static void
test_demo(void)
{
	char dir[] = "/tmp/tm_demo_XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char **paths = NULL;
	struct tm_error err;
	CHECK_INT(tm_demo_write(dir, &paths, &err), TM_OK);
	if (!paths)
		return;
	size_t n = 0;
	while (paths[n])
		n++;
	CHECK_INT(n, 5);
	CHECK(strstr(paths[0], "perfetto_manifest.json") != NULL);
	for (size_t i = 0; i < n; i++) {
		if (strstr(paths[i], ".pftrace")) {
			struct tb b = {0};
			struct tm_scan sc;
			slurp(paths[i], &b);
			const char *s = scan_ops(b.d, b.n, 1000, true, &sc);
			CHECK(!sc.failed);
			CHECK(strstr(s, "FATAL") == NULL);
			CHECK(strstr(s, "STAT") == NULL);
			if (strstr(paths[i], "relay"))
				CHECK_INT(sc.n_embedded, 2);
			if (strstr(paths[i], "phone"))
				CHECK(strstr(s, "'Choreographer#doFrame' B 1001") != NULL);
			tm_scan_fini(&sc);
			free(b.d);
		}
		unlink(paths[i]);
		free(paths[i]);
	}
	free(paths);
	rmdir(dir);
}

int
main(void)
{
	RUN(test_snapshot_and_packets);
	RUN(test_sequence_flags);
	RUN(test_defaults_reset_on_clear);
	RUN(test_interned_names);
	RUN(test_te_legacy_and_negative);
	RUN(test_machines);
	RUN(test_ftrace);
	RUN(test_remote_sync_and_sysinfo);
	RUN(test_compressed);
	RUN(test_corrupt);
	RUN(test_fast_path_agrees);
	RUN(test_align_names_agree);
	RUN(test_fast_equals_general);
	RUN(test_interned_fast_equals_general);
	RUN(test_interned_names_exact);
	RUN(test_te_name_priority);
	RUN(test_te_phase);
	RUN(test_te_inline_name_fields);
	RUN(test_tag_id_truncated);
	RUN(test_event_name_fields);
	RUN(test_interned_pool_compacted);
	RUN(test_interned_generations);
	RUN(test_compact_fast_equals_general);
	RUN(test_pkt_runs_stored_bytes);
	RUN(test_varint_readers);
	RUN(test_count_packed);
	RUN(test_conformance_inputs);
	RUN(test_demo);
	return 0;
}

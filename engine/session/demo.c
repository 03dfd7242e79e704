/* SPDX-License-Identifier: MIT */
/*
 * The built-in demo (tm_demo_write): four traces and a manifest, written
 * with protobuf-c at run time.
 *
 * The story a newcomer sees on the first screen:
 *
 *   phone.pftrace  A phone that just booted: BOOTTIME 10..100 ms, two
 *                  ClockSnapshots {BOOTTIME, REALTIME, MONOTONIC}, TrackEvent
 *                  slices on two sequences (main thread with interned names,
 *                  RenderThread with inline names), SystemInfo "phone".  It
 *                  sorts first among the protos, so its BOOTTIME becomes
 *                  trace time.
 *   watch.pftrace  A watch that booted 800 s earlier: BOOTTIME ~800 s, with
 *                  REALTIME snapshots.  Its events happened at the same wall
 *                  time as the phone's.  On its own machine ("watch" in the
 *                  manifest) the REALTIME rendezvous lines it up with the
 *                  phone; put on the phone's machine instead (delete its
 *                  `machine` entry: the real choice) it is joined by a zero
 *                  BOOTTIME edge and lands 800 s late.
 *   relay.pftrace  A multi-machine proto: host packets plus embedded
 *                  machine_id 7 and 8, each with its own snapshots.  Machine 7
 *                  has REALTIME and aligns by rendezvous; machine 8 has only
 *                  {BOOTTIME, MONOTONIC}, is "assumed aligned" and lands at its
 *                  raw BOOTTIME.
 *   app.json       A clockless Chrome JSON app log: two M events without ts
 *                  (placed at 0) and X events at 5, 20, 40 ms.
 *                  Its clock is the phone's BOOTTIME minus 10 ms, which no file
 *                  says: align finds it from what both traces saw, the "tap"
 *                  instant (app 30 ms, phone 40 ms) and the request flow
 *                  (flow v2 bind_id 0xfeed1 out of loadFeed at 20 ms, ending
 *                  in the phone's handleRequest at 30.5 ms: at most +10.5 ms).
 *   perfetto_manifest.json
 *                  Names the machines and PINs app.json to the phone's BOOTTIME
 *                  with offset_ns -10000000: a sign slip.  The two M events and
 *                  the 5 ms X event land below 0 and are dropped (3 events);
 *                  moving them to zero (+0) stops the drops, but only the
 *                  estimate (+10 ms) puts the app where it ran.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.pb-c.h"

typedef Perfetto__Protos__TracePacket Pkt;
typedef Perfetto__Protos__ClockSnapshot__Clock Clk;

#define R0 1700000000000000000LL /* REALTIME at the phone's boot */

struct out {
	uint8_t *d;
	size_t n, cap;
};

static void
out_add(struct out *o, const void *p, size_t n)
{
	if (o->n + n > o->cap) {
		size_t nc = o->cap ? o->cap : 4096;
		while (nc < o->n + n)
			nc *= 2;
		o->d = xrealloc(o->d, nc);
		o->cap = nc;
	}
	memcpy(o->d + o->n, p, n);
	o->n += n;
}

static void
out_pkt(struct out *o, const Pkt *p)
{
	uint8_t hdr[11];
	size_t sz = perfetto__protos__trace_packet__get_packed_size(p), h = 0, v = sz;
	hdr[h++] = 0x0a;
	do {
		hdr[h] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			hdr[h] |= 0x80;
		h++;
	} while (v);
	out_add(o, hdr, h);
	uint8_t *buf = xmalloc(sz);
	perfetto__protos__trace_packet__pack(p, buf);
	out_add(o, buf, sz);
	free(buf);
}

static void
snapshot(struct out *o, uint32_t machine, const uint32_t *ids, const int64_t *ts, size_t n)
{
	Pkt p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ClockSnapshot s = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Clk c[4];
	Clk *cp[4];
	for (size_t i = 0; i < n && i < 4; i++) {
		Clk z = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT;
		c[i] = z;
		c[i].has_clock_id = c[i].has_timestamp = true;
		c[i].clock_id = ids[i];
		c[i].timestamp = (uint64_t)ts[i];
		cp[i] = &c[i];
	}
	s.n_clocks = n;
	s.clocks = cp;
	p.clock_snapshot = &s;
	p.has_trusted_packet_sequence_id = true;
	p.trusted_packet_sequence_id = 1000 + machine;
	if (machine) {
		p.has_machine_id = true;
		p.machine_id = machine;
	}
	out_pkt(o, &p);
}

static void
sysinfo(struct out *o, const char *name)
{
	Pkt p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__SystemInfo si = PERFETTO__PROTOS__SYSTEM_INFO__INIT;
	si.machine_name = (char *)(uintptr_t)name;
	p.system_info = &si;
	out_pkt(o, &p);
}

static void
track(struct out *o, uint32_t machine, uint32_t seq, uint64_t uuid, const char *name)
{
	Pkt p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	td.has_uuid = true;
	td.uuid = uuid;
	td.name = (char *)(uintptr_t)name;
	p.track_descriptor = &td;
	p.has_trusted_packet_sequence_id = true;
	p.trusted_packet_sequence_id = seq;
	p.has_sequence_flags = true;
	p.sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
	if (machine) {
		p.has_machine_id = true;
		p.machine_id = machine;
	}
	out_pkt(o, &p);
}

static void
intern(struct out *o, uint32_t seq, uint64_t iid, const char *name)
{
	Pkt p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__InternedData id = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	Perfetto__Protos__EventName en = PERFETTO__PROTOS__EVENT_NAME__INIT;
	Perfetto__Protos__EventName *ens[1] = {&en};
	en.has_iid = true;
	en.iid = iid;
	en.name = (char *)(uintptr_t)name;
	id.n_event_names = 1;
	id.event_names = ens;
	p.interned_data = &id;
	p.has_trusted_packet_sequence_id = true;
	p.trusted_packet_sequence_id = seq;
	out_pkt(o, &p);
}

/* A TrackEvent slice begin/end pair (or an instant when dur < 0); its
 * begin ends the flow end_flow (terminating_flow_ids) when not 0. */
static void
slice_flow(struct out *o, uint32_t machine, uint32_t seq, uint64_t uuid, int64_t ts, int64_t dur,
	   const char *name, uint64_t name_iid, uint64_t end_flow)
{
	for (int end = 0; end < (dur < 0 ? 1 : 2); end++) {
		Pkt p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
		Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
		te.has_type = true;
		te.type = dur < 0 ? PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT
			  : end   ? PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END
				  : PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
		te.has_track_uuid = true;
		te.track_uuid = uuid;
		if (!end) {
			if (name_iid) {
				te.has_name_iid = true;
				te.name_iid = name_iid;
			} else {
				te.name = (char *)(uintptr_t)name;
			}
		}
		if (!end && end_flow) {
			te.n_terminating_flow_ids = 1;
			te.terminating_flow_ids = &end_flow;
		}
		p.track_event = &te;
		p.has_timestamp = true;
		p.timestamp = (uint64_t)(ts + (end ? dur : 0));
		p.has_trusted_packet_sequence_id = true;
		p.trusted_packet_sequence_id = seq;
		p.has_sequence_flags = true;
		p.sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
		if (machine) {
			p.has_machine_id = true;
			p.machine_id = machine;
		}
		out_pkt(o, &p);
	}
}

static void
slice(struct out *o, uint32_t machine, uint32_t seq, uint64_t uuid, int64_t ts, int64_t dur,
      const char *name, uint64_t name_iid)
{
	slice_flow(o, machine, seq, uuid, ts, dur, name, name_iid, 0);
}

static void
build_phone(struct out *o)
{
	static const uint32_t ids[] = {6, 1, 3};
	int64_t t0[] = {10000000, R0 + 10000000, 9000000};
	snapshot(o, 0, ids, t0, 3);
	sysinfo(o, "phone");
	track(o, 0, 1, 1001, "main");
	track(o, 0, 2, 1002, "RenderThread");
	intern(o, 1, 1, "Choreographer#doFrame");
	intern(o, 1, 2, "inflate");
	for (int f = 0; f < 5; f++) {
		int64_t t = 12000000 + f * 16000000LL;
		slice(o, 0, 1, 1001, t, 6000000, NULL, 1);
		slice(o, 0, 1, 1001, t + 1000000, 2000000, NULL, 2);
		slice(o, 0, 2, 1002, t + 6500000, 5000000, "DrawFrame", 0);
	}
	/* what the app saw too (app.json): the tap, and its request arriving */
	track(o, 0, 3, 1003, "binder");
	slice(o, 0, 3, 1003, 40000000, -1, "tap", 0);
	slice_flow(o, 0, 3, 1003, 30500000, 1000000, "handleRequest", 0, 0xfeed1);
	int64_t t1[] = {100000000, R0 + 100000000, 99000000};
	snapshot(o, 0, ids, t1, 3);
}

static void
build_watch(struct out *o)
{
	static const uint32_t ids[] = {6, 1};
	const int64_t boot = 800000000000LL; /* the watch booted 800 s earlier */
	int64_t t0[] = {boot + 10000000, R0 + 10000000};
	snapshot(o, 0, ids, t0, 2);
	track(o, 0, 1, 2001, "watch main");
	for (int i = 0; i < 4; i++)
		slice(o, 0, 1, 2001, boot + 20000000 + i * 20000000LL, 4000000, "HeartRateSample",
		      0);
	int64_t t1[] = {boot + 100000000, R0 + 100000000};
	snapshot(o, 0, ids, t1, 2);
}

static void
build_relay(struct out *o)
{
	/* host: booted 5 s before the phone */
	static const uint32_t hb[] = {6, 1};
	int64_t h0[] = {5010000000LL, R0 + 10000000};
	snapshot(o, 0, hb, h0, 2);
	sysinfo(o, "relay");
	track(o, 0, 1, 3001, "relay main");
	slice(o, 0, 1, 3001, 5030000000LL, 10000000, "forward", 0);
	/* machine 7: REALTIME, booted 2 s before the phone */
	int64_t m7[] = {2010000000LL, R0 + 10000000};
	snapshot(o, 7, hb, m7, 2);
	track(o, 7, 1, 7001, "sensor-a");
	slice(o, 7, 1, 7001, 2040000000LL, 3000000, "read_imu", 0);
	slice(o, 7, 1, 7001, 2060000000LL, 3000000, "read_imu", 0);
	/* machine 8: no REALTIME, so it is assumed aligned on BOOTTIME */
	static const uint32_t bm[] = {6, 3};
	int64_t m8[] = {3000000000LL, 2999000000LL};
	snapshot(o, 8, bm, m8, 2);
	track(o, 8, 1, 8001, "sensor-b");
	slice(o, 8, 1, 8001, 3050000000LL, 2000000, "read_baro", 0);
}

static const char app_json[] =
	"{\"traceEvents\":[\n"
	"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":4242,\"args\":{\"name\":\"com.example.app\"}},\n"
	"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":4242,\"tid\":1,\"args\":{\"name\":\"ui\"}},\n"
	"{\"ph\":\"X\",\"name\":\"onCreate\",\"pid\":4242,\"tid\":1,\"ts\":5000,\"dur\":3000},\n"
	"{\"ph\":\"X\",\"name\":\"loadFeed\",\"pid\":4242,\"tid\":1,\"ts\":20000,\"dur\":12000,"
	"\"bind_id\":\"0xfeed1\",\"flow_out\":true},\n"
	"{\"ph\":\"i\",\"name\":\"tap\",\"pid\":4242,\"tid\":1,\"ts\":30000,\"s\":\"t\"},\n"
	"{\"ph\":\"X\",\"name\":\"renderFeed\",\"pid\":4242,\"tid\":1,\"ts\":40000,\"dur\":8000}\n"
	"]}\n";

static const char manifest_json[] =
	"{\n"
	"  \"perfetto_manifest\": {\n"
	"    \"version\": 1,\n"
	"    \"files\": [\n"
	"      {\"path\": \"phone.pftrace\", \"machine\": {\"name\": \"phone\"}},\n"
	"      {\"path\": \"watch.pftrace\", \"machine\": {\"name\": \"watch\"}},\n"
	"      {\"path\": \"relay.pftrace\", \"machines\": [\n"
	"        {\"id\": 0, \"name\": \"relay\"},\n"
	"        {\"id\": 7, \"name\": \"sensor-a\"},\n"
	"        {\"id\": 8, \"name\": \"sensor-b\"}]},\n"
	"      {\"path\": \"app.json\", \"machine\": {\"name\": \"phone\"},\n"
	"       \"clocks\": {\"sync_to\": {\"file\": \"phone.pftrace\", \"clock\": \"BOOTTIME\"},\n"
	"                  \"offset_ns\": -10000000}}\n"
	"    ]\n"
	"  }\n"
	"}\n";

static enum tm_status
write_atomic(const char *dir, const char *name, const void *p, size_t n, char **path_out,
	     struct tm_error *err)
{
	size_t len = strlen(dir) + strlen(name) + 32;
	char *path = xmalloc(len), *tmp = xmalloc(len);
	snprintf(path, len, "%s/%s", dir, name);
	snprintf(tmp, len, "%s/.%s.tmp%ld", dir, name, (long)getpid());
	FILE *f = fopen(tmp, "wb");
	if (!f) {
		enum tm_status rc = tm_error_sys(err, errno, "%s", tmp);
		free(path);
		free(tmp);
		return rc;
	}
	bool ok = fwrite(p, 1, n, f) == n;
	ok = fflush(f) == 0 && ok;
	ok = fsync(fileno(f)) == 0 && ok;
	int e = errno;
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, path) != 0) {
		if (ok)
			e = errno;
		unlink(tmp);
		enum tm_status rc = tm_error_sys(err, e, "%s", path);
		free(path);
		free(tmp);
		return rc;
	}
	free(tmp);
	*path_out = path;
	return TM_OK;
}

enum tm_status
tm_demo_write(const char *dir, char ***paths_out, struct tm_error *err)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return tm_error_sys(err, errno, "%s", dir);
	char **paths = xcalloc(6, sizeof *paths);
	size_t np = 0;
	enum tm_status rc;
	struct out o = {0};

	rc = write_atomic(dir, "perfetto_manifest.json", manifest_json, sizeof manifest_json - 1,
			  &paths[np], err);
	if (rc != TM_OK)
		goto fail;
	np++;
	build_phone(&o);
	rc = write_atomic(dir, "phone.pftrace", o.d, o.n, &paths[np], err);
	if (rc != TM_OK)
		goto fail;
	np++;
	o.n = 0;
	build_watch(&o);
	rc = write_atomic(dir, "watch.pftrace", o.d, o.n, &paths[np], err);
	if (rc != TM_OK)
		goto fail;
	np++;
	o.n = 0;
	build_relay(&o);
	rc = write_atomic(dir, "relay.pftrace", o.d, o.n, &paths[np], err);
	if (rc != TM_OK)
		goto fail;
	np++;
	rc = write_atomic(dir, "app.json", app_json, sizeof app_json - 1, &paths[np], err);
	if (rc != TM_OK)
		goto fail;
	np++;
	free(o.d);
	*paths_out = paths;
	return TM_OK;
fail:
	free(o.d);
	for (size_t i = 0; i < np; i++)
		free(paths[i]);
	free(paths);
	*paths_out = NULL;
	return rc;
}

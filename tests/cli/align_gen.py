#!/usr/bin/env python3
"""Two-device traces with a known offset, drift and message latency.

usage: align_gen.py DIR KIND OFFSET_NS DRIFT_PPM SEED [MODE]
KIND: json (Chrome JSON flows s/f, async b/e, instants), proto (TrackEvent
flow_ids / terminating_flow_ids, a BOOTTIME ClockSnapshot), systrace
(tracing_mark_write S/F async markers).  MODE: both (messages both ways),
oneway (file -> ref only), contra (impossible latencies), instants;
for proto, interned (names by name_iid as the Perfetto SDK writes them, and a
marker instant both devices log at every tenth message), interned-skew (the
reference logs those markers 5 ms late: the messages contradict them),
seqclock (the file's events on its sequence-scoped clock 64), seqclock-nosnap
(the same without the ClockSnapshot that relates clock 64: nothing converts),
sdk (both devices write as the Perfetto SDK does: per-sequence ClockSnapshot
of BOOTTIME and the incremental clock 64, TracePacketDefaults clock 64,
packet timestamps as deltas, interned names, a reset of the incremental
state half way, the same sequence ids in both files), sdk-mono (the same,
the file's SDK on MONOTONIC, as on macOS: its clock shares nothing with the
reference's BOOTTIME, so its events are dropped), sdk-runs (sdk-mono on
one sequence whose ClockSnapshot names clock 64 its primary_trace_clock, so
that clock is the file's default clock; between the messages and markers,
written on clock 64, filler events with no clock id at even steps: the scan
folds them into runs), ref-machine (the
reference's markers live on its embedded machine 7, whose BOOTTIME is
3 s behind its host's, related by a remote_clock_sync), file-machine (the
file's markers live on its machine 7: they follow the timeline's machine).
The reference (its name sorts first, so it owns the timeline) reads
ref = file * (1 + drift) + offset.  Prints the true offset at the middle of
the file's message times: truth = offset + drift * mid.
"""
import json, os, random, struct, sys

d, kind, off, ppm, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
mode = sys.argv[6] if len(sys.argv) > 6 else "both"
rnd = random.Random(seed)
k = ppm * 1e-6
def to_ref(t): return int(round(t * (1 + k) + off))
N = 200
base = 5_000_000_000  # file time of the first message
span = 60_000_000_000
msgs = []  # (id, dir, file_ts, ref_ts): dir 1 file->ref, 2 ref->file
times = []
for i in range(N):
    t = base + i * span // N + rnd.randrange(1000)
    lat = 20_000 + rnd.randrange(400_000)  # 20..420 us
    if mode == "contra":
        lat = -2_000_000  # both ways: no offset fits
    dirn = 1 if (mode in ("oneway",) or i % 2 == 0) else 2
    if dirn == 1:
        msgs.append((1000 + i, 1, t, to_ref(t + lat)))
        times.append(t)
    else:  # sent by the ref at file time t, received at t + lat
        msgs.append((1000 + i, 2, t + lat, to_ref(t)))
        times.append(t + lat)
mid = min(times) + (max(times) - min(times)) // 2
os.makedirs(d, exist_ok=True)

def us(ns): return "%d.%03d" % (ns // 1000, ns % 1000)

if kind == "json":
    fe, re_ = [], []
    for (i, dr, ft, rt) in msgs:
        if mode == "instants":
            fe.append('{"ph":"i","name":"mark%d","pid":1,"tid":1,"ts":%s,"s":"g"}' % (i, us(ft)))
            re_.append('{"ph":"i","name":"mark%d","pid":2,"tid":2,"ts":%s,"s":"g"}' % (i, us(to_ref(ft))))
            continue
        if i % 3 == 0:  # async: begin on the sender, end on the receiver
            b, e = ('{"ph":"b","cat":"rpc","name":"call","id":%d,"pid":%d,"tid":1,"ts":%s}',
                    '{"ph":"e","cat":"rpc","name":"call","id":%d,"pid":%d,"tid":1,"ts":%s}')
        else:
            b, e = ('{"ph":"s","cat":"ipc","name":"msg","id":%d,"pid":%d,"tid":1,"ts":%s}',
                    '{"ph":"f","bp":"e","cat":"ipc","name":"msg","id":%d,"pid":%d,"tid":1,"ts":%s}')
        if dr == 1:
            fe.append(b % (i, 1, us(ft))); re_.append(e % (i, 2, us(rt)))
        else:
            re_.append(b % (i, 2, us(rt))); fe.append(e % (i, 1, us(ft)))
    for name, ev in (("a_ref.json", re_), ("b_file.json", fe)):
        with open(os.path.join(d, name), "w") as f:
            f.write('{"traceEvents":[' + ",\n".join(ev) + "]}\n")
elif kind == "proto" and mode in ("sdk", "sdk-mono", "sdk-runs", "ref-machine", "file-machine"):
    def vint(v):
        out = b""
        while True:
            b7 = v & 0x7F; v >>= 7
            if v: out += bytes([b7 | 0x80])
            else: return out + bytes([b7])
    def fld(n, wt, payload): return vint(n << 3 | wt) + payload
    def lendel(n, data): return fld(n, 2, vint(len(data)) + data)
    def packet(body): return lendel(1, body)
    def clock(cid, ts, incr=False):
        return lendel(1, fld(1, 0, vint(cid)) + fld(2, 0, vint(ts)) + (fld(3, 0, vint(1)) if incr else b""))
    class Seq:  # one SDK TraceWriter: incremental clock 64, interned names
        def __init__(self, sid, out, machine=0, absolute=False):
            self.sid, self.out, self.machine, self.last, self.names = sid, out, machine, None, {}
            self.absolute = absolute  # or: absolute timestamps on the reader's clock, inline names
            self.runs = mode == "sdk-runs" and out is fp  # clock 64 the default; fillers fold into runs
        def common(self):
            return fld(10, 0, vint(self.sid)) + (fld(98, 0, vint(self.machine)) if self.machine else b"")
        def reset(self, t0):  # SEQ_INCREMENTAL_STATE_CLEARED, defaults, snapshot {BOOTTIME, 64 incremental}
            self.last, self.names = t0, {}
            sdk_clock = 3 if mode in ("sdk-mono", "sdk-runs") and self.out is fp else 6  # the SDK on MONOTONIC
            primary = fld(2, 0, vint(64)) if self.runs else b""
            snap = lendel(6, clock(sdk_clock, t0) + clock(64, t0, True) + primary)
            dflt = lendel(59, b"" if self.runs else fld(58, 0, vint(64)))
            self.out.append(packet(fld(8, 0, vint(0)) + self.common() + fld(13, 0, vint(1)) +
                                   dflt + snap))
        def fillers(self, t, n=8):  # n events on the default clock at even steps before t
            step = (t - self.last) // (n + 1)
            for _ in range(n):
                self.last += step
                self.out.append(packet(fld(8, 0, vint(step)) + self.common() + fld(13, 0, vint(2)) +
                                       lendel(11, fld(9, 0, vint(3)) + fld(11, 0, vint(7)) + lendel(23, b"work"))))
        def event(self, t, name, flow=None, term=None, instant=False):
            body = fld(9, 0, vint(3 if instant else 1)) + fld(11, 0, vint(7))
            if self.absolute:
                self.out.append(packet(fld(8, 0, vint(t)) + self.common() + lendel(11, body + lendel(23, name.encode()))))
                return
            if self.last is None:
                self.reset(t - 1000)
            assert t >= self.last
            extra = fld(58, 0, vint(64)) if self.runs else b""
            if self.runs:
                self.fillers(t)
            if name not in self.names:
                self.names[name] = len(self.names) + 1
                extra += lendel(12, lendel(2, fld(1, 0, vint(self.names[name])) + lendel(2, name.encode())))
            body += fld(10, 0, vint(self.names[name]))
            if flow is not None: body += fld(47, 1, struct.pack("<Q", flow))
            if term is not None: body += fld(48, 1, struct.pack("<Q", term))
            d, self.last = t - self.last, t
            self.out.append(packet(fld(8, 0, vint(d)) + self.common() + fld(13, 0, vint(2)) + extra +
                                   lendel(11, body)))
    def boot_snap(out, t, machine=0, seq=99):
        out.append(packet(lendel(6, clock(6, t)) + fld(10, 0, vint(seq)) +
                          (fld(98, 0, vint(machine)) if machine else b"")))
    M7 = 3_000_000_000 - 1000  # machine 7's BOOTTIME = its host's - M7 (as the sync below says)
    def remote_sync(out, host_t):  # two rounds: offset (t1c+t2c)/2-t1h = t2c-(t1h+t2h)/2 = -M7
        c1, h1, c2, h2 = host_t - M7 - 1000, host_t, host_t - M7 + 1000, host_t + 2000
        rounds = b""
        for c, h in ((c1, h1), (c2, h2)):
            rounds += lendel(1, lendel(2, clock(6, c)) + lendel(3, clock(6, h)))
        out.append(packet(fld(10, 0, vint(77)) + fld(98, 0, vint(7)) + lendel(107, rounds)))
    fp, rp = [], []
    if mode.startswith("sdk"):
        fs = {q: Seq(q, fp) for q in (1, 2, 3)}
        if mode == "sdk-runs":  # one sequence: its clock 64 is the default clock of every packet
            fs = {q: fs[1] for q in (1, 2, 3)}
        rs = {q: Seq(q, rp) for q in (1, 2, 3)}
        for (i, dr, ft, rt) in msgs:
            if i == 1000 + N // 2:  # the SDK clears its incremental state now and then
                fs[1].reset(ft - 500); rs[1].reset(rt - 500)
            if dr == 1:
                fs[1].event(ft, "send", flow=i); rs[2].event(rt, "recv", term=i)
            else:
                rs[1].event(rt, "send", flow=i); fs[2].event(ft, "recv", term=i)
            if i % 10 == 0:
                t = ft + 1000
                fs[3].event(t, "mark%d" % i, instant=True); rs[3].event(to_ref(t), "mark%d" % i, instant=True)
    else:
        # both hosts: a BOOTTIME snapshot; the markers of one of them on its
        # machine 7 (on the reader's default clock, BOOTTIME: a snapshot
        # there would move the timeline onto machine 7), related to its host
        # by a remote_clock_sync
        first = base - 1_000_000
        boot_snap(fp, first); boot_snap(rp, to_ref(first))
        on_ref = mode == "ref-machine"
        mp = rp if on_ref else fp
        remote_sync(mp, (to_ref(first) if on_ref else first) + 20)
        m7 = Seq(5, mp, machine=7, absolute=True)
        other = Seq(2, fp if on_ref else rp, absolute=True)
        for (i, dr, ft, rt) in msgs:
            if i % 10 == 0:
                t = ft + 1000
                if on_ref:
                    other.event(t, "mark%d" % i, instant=True); m7.event(to_ref(t) - M7, "mark%d" % i, instant=True)
                else:
                    m7.event(t - M7, "mark%d" % i, instant=True); other.event(to_ref(t), "mark%d" % i, instant=True)
    for name, ps in (("a_ref.pftrace", rp), ("b_file.pftrace", fp)):
        with open(os.path.join(d, name), "wb") as f:
            f.write(b"".join(ps))
elif kind == "proto":
    def vint(v):
        out = b""
        while True:
            b7 = v & 0x7F; v >>= 7
            if v: out += bytes([b7 | 0x80])
            else: return out + bytes([b7])
    def fld(n, wt, payload):
        return vint(n << 3 | wt) + payload
    def lendel(n, data): return fld(n, 2, vint(len(data)) + data)
    def packet(body): return lendel(1, body)
    def snap(boot, real):
        c1 = lendel(1, fld(1, 0, vint(6)) + fld(2, 0, vint(boot)))
        c2 = lendel(1, fld(1, 0, vint(1)) + fld(2, 0, vint(real)))
        return packet(lendel(6, c1 + c2) + fld(10, 0, vint(99)))
    interned = {}  # per writer (id of its list): name -> iid, as the SDK interns
    def te(ts, name, flow=None, term=None, ps=None):
        body = fld(9, 0, vint(3)) + fld(11, 0, vint(7))
        extra = b""
        if not mode.startswith("interned"):
            body += lendel(23, name.encode())
        else:  # name_iid; interned_data (event_names) where a name is first used
            names = interned.setdefault(id(ps), {})
            first = not names
            if name not in names:
                names[name] = len(names) + 1
                extra += lendel(12, lendel(2, fld(1, 0, vint(names[name])) + lendel(2, name.encode())))
            body += fld(10, 0, vint(names[name]))
            extra += fld(13, 0, vint(3 if first else 2))
        if flow is not None: body += fld(47, 1, struct.pack("<Q", flow))
        if term is not None: body += fld(48, 1, struct.pack("<Q", term))
        if mode.startswith("seqclock") and ps is fp:  # the file's events on its sequence's clock 64
            extra += fld(58, 0, vint(64))
        return packet(fld(8, 0, vint(ts)) + fld(10, 0, vint(1)) + extra + lendel(11, body))
    # each device: BOOTTIME ClockSnapshot (REALTIME deliberately unrelated)
    fp, rp = [snap(1000, 10**18)], [snap(1000, 2 * 10**18)]
    if mode == "seqclock":  # clock 64 of sequence 1 reads BOOTTIME (seqclock-nosnap: nothing says)
        fp.append(packet(lendel(6, lendel(1, fld(1, 0, vint(64)) + fld(2, 0, vint(1000))) +
                                lendel(1, fld(1, 0, vint(6)) + fld(2, 0, vint(1000)))) + fld(10, 0, vint(1))))
    for (i, dr, ft, rt) in msgs:
        if dr == 1:
            fp.append(te(ft, "send", flow=i, ps=fp)); rp.append(te(rt, "recv", term=i, ps=rp))
        else:
            rp.append(te(rt, "send", flow=i, ps=rp)); fp.append(te(ft, "recv", term=i, ps=fp))
        if mode.startswith("interned") and i % 10 == 0:  # a marker both devices log at one moment
            t = ft + 1000
            skew = 5_000_000 if mode == "interned-skew" else 0  # markers 5 ms late on the ref
            fp.append(te(t, "mark%d" % i, ps=fp)); rp.append(te(to_ref(t) + skew, "mark%d" % i, ps=rp))
    for name, ps in (("a_ref.pftrace", rp), ("b_file.pftrace", fp)):
        with open(os.path.join(d, name), "wb") as f:
            f.write(b"".join(ps))
elif kind == "systrace":
    def line(ts, what):
        return "  app-1     (    1) [000] ...1 %d.%06d: tracing_mark_write: %s\n" % (ts // 10**9, (ts % 10**9) // 1000, what)
    fl, rl = [], []
    for (i, dr, ft, rt) in msgs:
        # systrace has microsecond resolution: round like the writer
        if dr == 1:
            fl.append((ft, "S|1|req|%d" % i)); rl.append((rt, "F|2|req|%d" % i))
        else:
            rl.append((rt, "S|2|req|%d" % i)); fl.append((ft, "F|1|req|%d" % i))
    for name, ls in (("a_ref.txt", rl), ("b_file.txt", fl)):
        with open(os.path.join(d, name), "w") as f:
            f.write("# tracer: nop\n#\n")
            for ts, w in sorted(ls):
                f.write(line(ts, w))
print(int(round(off + k * mid)))

#!/usr/bin/env bash
# Protos checked against trace_processor v58.2 (the figures below are what
# it printed for the same bytes): machines that share a context, ftrace
# before tracing started, and the minimal disagreements tools/difftest.py
# found.  Each builds the archive with Python, runs `tracemerge check
# --json --events` and compares the stats, machines and surviving slices.
set -u
TM=${TM_BIN:-build/asan/tracemerge}
t=$(mktemp -d)
# KEEP=1 keeps the archives (to show them to trace_processor)
if [ -n "${KEEP:-}" ]; then echo "archives kept in $t" >&2; else trap 'rm -rf "$t"' EXIT; fi
python3 - "$TM" "$t" "$(dirname "$0")/../../tools" <<'PY'
import io, json, os, subprocess, sys, tarfile

tm, tmp = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from difftest import vint, fv, fl  # the protobuf writer (no trace_processor needed)

def packet(*fields): return fl(1, b"".join(fields))
def snap(clocks): return fl(6, b"".join(fl(1, fv(1, c) + fv(2, ts)) for c, ts in clocks))
def te(ts, name, seq=1, machine=None, clock=None):
    f = fv(8, ts) + fv(10, seq) + fl(11, fv(9, 3) + fl(23, name))
    if clock is not None: f += fv(58, clock)
    if machine is not None: f += fv(98, machine)
    return packet(f)
def msnap(clocks, seq, machine=None):
    return packet(fv(10, seq), snap(clocks), fv(98, machine) if machine is not None else b"")
def started(ts, seq=1, machine=None):
    return packet(fv(8, ts), fv(10, seq), fl(69, fv(2, 1)), fv(98, machine) if machine is not None else b"")
def ftrace(cpu, events, seq=1, machine=None, compact=()):
    """events: (ts, text) print events; compact: sched_switch timestamps (absolute)"""
    body = fv(1, cpu)
    for ts, text in events:
        body += fl(2, fv(1, ts) + fv(2, 10) + fl(3, fl(2, text)))
    if compact:
        deltas, prev = [], 0
        for ts in compact:
            deltas.append(ts - prev)
            prev = ts
        n = len(compact)
        body += fl(4, fl(1, b"".join(vint(d) for d in deltas)) + fl(2, vint(0) * n) + fl(3, vint(1) * n)
                   + fl(4, vint(120) * n) + fl(5, "comm") + fl(6, vint(0) * n))
    return packet(fl(1, body), fv(10, seq), fv(98, machine) if machine is not None else b"")

def tar(name, members):
    path = os.path.join(tmp, name)
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tf:
        for n, data in members:
            b = data.encode() if isinstance(data, str) else data
            ti = tarfile.TarInfo(n)
            ti.size, ti.mode, ti.mtime = len(b), 0o644, 0
            tf.addfile(ti, io.BytesIO(b))
    return path

def man(files):
    return json.dumps({"perfetto_manifest": {"version": 1, "files": files}})

def check(path):
    p = subprocess.run([tm, "check", "--no-cache", "--json", "--events", path], capture_output=True)
    return json.loads(p.stdout)

def result(name, ok, why=""):
    print(("PASS: " if ok else "FAIL: ") + name + ("" if ok else ": " + why))

def agrees(name, r, stats, machines, slices, missing=None):
    """stats: trace_processor's non-zero error/data-loss stats; machines:
    [(raw_id, name)]; slices: sorted [(ts, name)] it kept; missing:
    {name: stat} of the events it did not keep, as --events marks them"""
    got_stats = {k: v for k, v in r["stats"].items() if v}
    got_m = [(m["raw_id"], m["name"]) for m in r["machines"]]
    got_s = sorted((e["ts"], e["name"]) for e in r.get("events", []) if e["slice"] and not e["dropped"])
    got_miss = {e["name"]: e["dropped"] for e in r.get("events", []) if e["dropped"]}
    ok = (r["error"] is None and got_stats == stats and got_m == machines and got_s == slices
          and (missing is None or got_miss == missing))
    result(name, ok, json.dumps({"stats": got_stats, "machines": got_m, "slices": got_s, "missing": got_miss}))

# Rule: contexts are keyed by (trace, raw machine id); an embedded machine
# the manifest names like id 0 shares the host's context and clock tracker.
def shared(name7, name8=None):
    d = msnap([(6, 1000), (3, 500)], 1) + te(2000, "host_a")
    d += msnap([(6, 1100), (1, 70)], 2, 7) + te(3000, "m7_a", 2, 7)
    d += te(900, "m7_mono", 2, 7, clock=3) + te(90, "m7_real", 2, 7, clock=1)
    ms = [{"id": 0, "name": "phone"}, {"id": 7, "name": name7}]
    if name8:
        d += te(900, "m8_mono", 3, 8, clock=3) + te(90, "m8_real", 3, 8, clock=1)
        ms.append({"id": 8, "name": name8})
    d += te(4000, "host_b")
    return tar("shared_%s_%s.tar" % (name7, name8), [("perfetto_manifest.json", man([{"path": "a.pb", "machines": ms}])), ("a.pb", d)])

agrees("machines: id 7 named like id 0 shares the host's clocks", check(shared("phone")),
       {}, [(4294967296, "phone")],
       [(1120, "m7_real"), (1400, "m7_mono"), (2000, "host_a"), (3000, "m7_a"), (4000, "host_b")])
agrees("machines: id 7 named apart forks its own context", check(shared("vm")),
       {"clock_sync_failure_no_path": 1, "clock_sync_failure_undeferrable_packet_loss": 2,
        "clock_sync_failure_unknown_source_clock": 1},
       [(4294967296, "phone"), (4294967297, "vm")],
       [(1120, "m7_real"), (2000, "host_a"), (3000, "m7_a")],
       {"m7_mono": "clock_sync_failure_unknown_source_clock", "host_b": "clock_sync_failure_no_path"})
agrees("machines: ids 7 and 8 named alike share one context", check(shared("vm", "vm")),
       {"clock_sync_failure_no_path": 1, "clock_sync_failure_undeferrable_packet_loss": 3,
        "clock_sync_failure_unknown_source_clock": 2},
       [(4294967296, "phone"), (4294967297, "vm")],
       [(1120, "m7_real"), (1120, "m8_real"), (2000, "host_a"), (3000, "m7_a")],
       {"m7_mono": "clock_sync_failure_unknown_source_clock", "m8_mono": "clock_sync_failure_unknown_source_clock",
        "host_b": "clock_sync_failure_no_path"})
# Rule: ftrace data before tracing started is dropped in the full import
# (FtraceParser, ftrace_packet_before_tracing_start), per context: per file
# and per machine, the last tracing_started of the context wins wherever it
# is in the file.  Each is checked with and without --events (the replay
# over folded runs and the one event by event).
def stats_only(path, events):
    args = [tm, "check", "--no-cache", "--json"] + (["--events"] if events else []) + [path]
    return json.loads(subprocess.run(args, capture_output=True).stdout)

def ftrace_case(name, members, stats, slices, missing=None):
    path = tar(name + ".tar", members)
    agrees("ftrace: " + name, check(path), stats, [(0, None)] if "m7" not in name else [(0, None), (7, None)],
           slices, missing)
    r = stats_only(path, False)
    got = {k: v for k, v in r["stats"].items() if v}
    result("ftrace: " + name + " (folded runs)", got == stats, json.dumps(got))

early = [(4000, "B|10|early"), (4100, "E|10"), (6000, "B|10|late"), (6100, "E|10")]
ftrace_case("started first", [("a.pb", msnap([(6, 1000), (3, 500)], 1) + started(5000)
                               + ftrace(0, early, compact=[4500, 10000]) + te(3000, "te_early"))],
            {"ftrace_packet_before_tracing_start": 3}, [(3000, "te_early"), (6000, "late")],
            {"early": "ftrace_packet_before_tracing_start", None: "ftrace_packet_before_tracing_start"})
# Ours: events lost before tracing started are missing from the merged trace
# (said so), but no merge causes or mends them: check exits 0, the report is
# ok, merge --strict writes without a warning.
sf = os.path.join(tmp, "started first.tar")
p = subprocess.run([tm, "check", "--no-cache", sf], capture_output=True, text=True)
pj = json.loads(subprocess.run([tm, "check", "--no-cache", "--json", sf], capture_output=True).stdout)
pm = subprocess.run([tm, "merge", "--strict", "--force", "-o", os.path.join(tmp, "sf-out.tar"), sf],
                    capture_output=True, text=True)
result("ftrace before tracing started: ok, exit 0, said as the recording's own",
       p.returncode == 0 and pj["ok"] is True and pj["missing"] == 3
       and "recorded before tracing started" in p.stdout and pm.returncode == 0
       and "Adjust the clocks" not in pm.stderr,
       "rc=%d ok=%s merge rc=%d %s" % (p.returncode, pj["ok"], pm.returncode, (p.stdout + pm.stderr)[:300]))
ftrace_case("started after the data", [("a.pb", ftrace(0, [(4000, "I|10|p1")], compact=[4000]) + started(5000))],
            {"ftrace_packet_before_tracing_start": 2}, [])
pa, pb = ftrace(0, [(4000, "I|10|pa")]), ftrace(0, [(4000, "I|10|pb")])
ftrace_case("each file its own", [("a.pb", pa + started(5000)), ("b.pb", pb + started(5000))],
            {"ftrace_packet_before_tracing_start": 2}, [])
ftrace_case("not another file's (b)", [("a.pb", pa), ("b.pb", started(5000) + pb)],
            {"ftrace_packet_before_tracing_start": 1}, [(4000, "pa")])
ftrace_case("not another file's (a)", [("a.pb", started(5000) + pa), ("b.pb", pb)],
            {"ftrace_packet_before_tracing_start": 1}, [(4000, "pb")])
ftrace_case("a text that does not parse, below and above",
            [("a.pb", started(5000) + ftrace(0, [(4000, "bogus"), (6000, "bogus2")]))],
            {"ftrace_packet_before_tracing_start": 1, "systrace_parse_failure": 1}, [])
ftrace_case("compact_sched across the threshold",
            [("a.pb", msnap([(6, 1000), (3, 500)], 1) + ftrace(0, [], compact=[1000 + 37 * i for i in range(300)])
              + ftrace(1, [(ts, "I|10|x%d" % ts) for ts in range(1000, 12000, 500)]) + started(6000))],
            {"ftrace_packet_before_tracing_start": 146}, [(ts, "x%d" % ts) for ts in range(6000, 12000, 500)])
ftrace_case("m7 has its own context",
            [("a.pb", started(5000) + ftrace(0, [(4000, "I|10|h4000")]) + started(3000, 2, 7)
              + ftrace(0, [(2000, "I|10|m2000"), (4000, "I|10|m4000")], 3, 7))],
            {"ftrace_packet_before_tracing_start": 2}, [(4000, "m4000")])
ftrace_case("the last tracing_started wins",
            [("a.pb", started(5000) + ftrace(0, [(4000, "I|10|p4000"), (2500, "I|10|p2500")]) + started(3000))],
            {"ftrace_packet_before_tracing_start": 1}, [(4000, "p4000")])
ftrace_case("a service event that does not convert keeps its raw value",
            [("a.pb", msnap([(6, 1000), (1, 100000)], 1) + packet(fv(8, 5000), fv(58, 3), fv(10, 1), fl(69, fv(2, 1)))
              + ftrace(0, [(4000, "I|10|p4000"), (6000, "I|10|p6000")]))],
            {"ftrace_packet_before_tracing_start": 1}, [(6000, "p6000")])
# Rule: an E closes the topmost open B unless both have names that differ
# (SliceTracker::End, MatchingIncompleteSliceIndex); the open slices above
# one closed below the top end with it at the next event after
# (MaybeCloseStack).  Durations as trace_processor's slice table has them.
def durs(name, path, want, stats=None):
    """stats: trace_processor's non-zero error/data-loss stats, when given"""
    r = check(path)
    got = sorted((e["ts"], e["dur"], e["name"]) for e in r.get("events", []) if e["slice"] and not e["dropped"])
    got_st = {k: v for k, v in r["stats"].items() if v}
    ok = got == want and (stats is None or got_st == stats)
    result("slices: " + name, ok, json.dumps(got) + " " + json.dumps(got_st))

def jev(ph, ts, name=None):
    e = {"ph": ph, "ts": ts, "pid": 1, "tid": 1}
    if name is not None:
        e["name"] = name
    return e

durs("a JSON E named apart closes nothing",
     tar("jname.tar", [("b1.json", json.dumps({"traceEvents": [jev("B", 2018, "b1._j5"), jev("E", 3018, "b1._j6")]}))]),
     [(2018000, -1, "b1._j5")], {})
durs("a TrackEvent end named apart closes nothing",
     tar("tename.tar", [("b1.pb", packet(fv(8, 200230), fv(10, 1), fl(11, fv(9, 1) + fl(23, "b1._m0_8")))
                         + packet(fv(8, 305540), fv(10, 1), fl(11, fv(9, 2) + fl(23, "b1._m0_19"))))]),
     [(200230, -1, "b1._m0_8")])
durs("an E closes the B of its name below the top; the one above ends with it",
     tar("jcut.tar", [("a.json", json.dumps({"traceEvents": [
         jev("B", 1, "a"), jev("B", 2, "b"), jev("E", 3, "a"), jev("E", 4), jev("B", 5, "c"), jev("E", 6, "zz")]}))]),
     [(1000, 2000, "a"), (2000, 1000, "b"), (5000, -1, "c")])
durs("a B inside a complete slice ends with it at the next event after",
     tar("xparent.tar", [("a.json", json.dumps({"traceEvents": [
         jev("X", 10, "x0") | {"dur": 5}, jev("B", 11, "b1"), jev("X", 1026, "x8") | {"dur": 5}]}))]),
     [(10000, 5000, "x0"), (11000, 4000, "b1"), (1026000, 5000, "x8")])
durs("nesting, a partial overlap (JSON spills it), instants at one ts, a B before an X",
     tar("xnest.tar", [("a.json", json.dumps({"traceEvents": [
         jev("X", 10, "p") | {"dur": 10}, jev("X", 15, "over") | {"dur": 10}, jev("X", 12, "in") | {"dur": 2},
         jev("i", 20, "inst"), jev("i", 20, "inst2"), jev("X", 30, "late") | {"dur": 1}, jev("B", 29, "early_b")]}))]),
     [(10000, 10000, "p"), (12000, 2000, "in"), (15000, 10000, "over"), (20000, 0, "inst"), (20000, 0, "inst2"),
      (29000, -1, "early_b"), (30000, 1000, "late")])

# Rule: the sorter merges its queues (a queue per CPU, made in CPU order:
# PushToStream): the queue whose next event is earliest gives every event
# up to the next event of another queue, ties included; on a tie of heads,
# the queue made first.
durs("ftrace at one ts: the queue made first goes first (B on cpu 1, E on cpu 2)",
     tar("cpuq1.tar", [("c2.pb", ftrace(2, [(1020, "B|10|ft0_1"), (1030, "I|10|fi1"), (1040, "E|10")], 2)
                        + ftrace(1, [(1030, "bogus"), (1040, "B|10|ft0_2")], 1))]),
     [(1020, -1, "ft0_1"), (1030, 0, "fi1"), (1040, 0, "ft0_2")])
durs("ftrace at one ts: a queue gives every event up to the next queue's, ties included",
     tar("cpuq2.tar", [("d3.pb", ftrace(2, [(1254320, "E|10"), (1254330, "B|10|ft0_13")], 2)
                        + ftrace(1, [(1254330, "E|10")], 2))]),
     [(1254330, 0, "ft0_13")])
durs("ftrace at one ts: the queue with the earlier head goes on through the tie",
     tar("cpuq3.tar", [("a0.pb", ftrace(1, [(51120, "B|10|ft0_3"), (51130, "B|10|ft0_3"), (51140, "I|10|fi3")])
                        + ftrace(0, [(51130, "B|10|ft0_4"), (51140, "bogus"), (51150, "E|10")]))]),
     [(51120, -1, "ft0_3"), (51130, -1, "ft0_3"), (51130, 20, "ft0_4"), (51140, 0, "fi3")])

# Rule: ApplyManifest adds each entry's edge before it resolves the next
# entry: a file synced to its own clock fails the import there, before a
# later entry's unknown file.
man_self = man([{"path": "b1.json", "clocks": {"sync_to": {"file": "b1.json"}, "offset_ns": 1000}},
                {"path": "d3.json", "clocks": {"sync_to": {"file": "c2.pb"}, "offset_ns": 0}}])
jx = json.dumps({"traceEvents": [{"ph": "X", "name": "x", "ts": 1, "dur": 1, "pid": 1, "tid": 1}]})
r = check(tar("selfsync.tar", [("perfetto_manifest.json", man_self), ("b1.json", jx), ("d3.json", jx)]))
want = "Trace parse failure: Clock sync error: duplicate clock domain with id=11(seq=0,tf=2,m=0) at snapshot 0. (ERR:tp-parse)"
result("manifest: a self-synced entry fails before a later unknown file", r["error"] == want, str(r["error"]))

# A complete slice whose end does not fit in int64_t: SliceTracker's
# start + dur wraps, so it has ended before the B that follows (depth 0 there).
durs("a dur near INT64_MAX: its end wraps, as SliceTracker's does",
     tar("xwrap.tar", [("a.json", json.dumps({"traceEvents": [
         jev("X", 1000, "big") | {"dur": 9223372036854000}, jev("X", 2000, "big2") | {"dur": 9223372036854000},
         jev("B", 3000, "b"), jev("E", 4000)]}))]),
     [(1000000, 9223372036854000000, "big"), (2000000, 9223372036854000000, "big2"), (3000000, 1000000, "b")])
# Rule: the sorter's compact_sched queues (inline sched_switch, one per
# cpu, made before the bundle's ftrace event queues: ftrace_tokenizer.cc
# TokenizeFtraceBundle, proto_importer_module.cc PushToStream) bound the runs
# it hands events on in (SortAndExtractEventsUntilAllocId): the E at 161220
# on cpu 0 leaves before the B at 161220 on cpu 2 (difftest seed 100322;
# without cpu 2's compact_sched the B leaves first and the E closes it).
from difftest import build_archive
def ftq(compact):
    pk = [{"seq": 2, "machine": 7, "k": "ftrace", "cpu": 2, "events": [[161210, "bogus"], [161220, "B|10|ft7_9"]]},
          {"seq": 2, "machine": 7, "k": "ftrace", "cpu": 0, "events": [[161220, "E|10"]], "compact": [161220],
           "ts": 161220}]
    if compact:
        pk[0]["compact"] = compact
    path = os.path.join(tmp, "ftq.zip")
    open(path, "wb").write(build_archive("zip", [{"kind": "proto", "name": "a0.pb", "packets": pk}]))
    return path
durs("compact_sched queues bound the sorter's runs", ftq([161210, 161217, 161224, 161231]),
     [(161220, -1, "ft7_9")])
durs("compact_sched queues: one entry before", ftq([161210]), [(161220, 0, "ft7_9")])
durs("compact_sched queues: none on cpu 2", ftq(None), [(161220, 0, "ft7_9")])
# Rule: a packet deferred to the end of its file (its clock unrelated
# until a later snapshot) is tokenized again there, against its sequence's
# interned names of then (proto_trace_reader.cc OnPushDataToSorter,
# TimestampTokenizeAndPushToSorter: state->current_generation()): cleared
# since, its slice has no name; interned again, the new one.
def iev(ts, clock, flags, iid=None, name=None, intern=()):
    body = fv(9, 3) + (fv(10, iid) if iid is not None else b"") + (fl(23, name) if name else b"")
    return packet(fv(8, ts), fv(10, 1), fl(11, body), fv(58, clock), fv(13, flags),
                  fl(12, b"".join(fl(2, fv(1, i) + fl(2, n)) for i, n in intern)) if intern else b"")
def deferred(last):
    return (iev(1000, 1, 1, iid=1, intern=[(1, "first")]) + iev(2000, 6, 2, iid=1) + last
            + packet(fv(10, 2), snap([(6, 0), (1, 100)])))
durs("a deferred TrackEvent: its iid cleared by the end of the file",
     tar("defclr.tar", [("a.pftrace", deferred(iev(3000, 6, 1, name="x")))]),
     [(900, 0, None), (2000, 0, "first"), (3000, 0, "x")])
durs("a deferred TrackEvent: its iid interned again by the end of the file",
     tar("defre.tar", [("a.pftrace", deferred(iev(3000, 6, 1, name="x", intern=[(1, "second")])))]),
     [(900, 0, "second"), (2000, 0, "first"), (3000, 0, "x")])
durs("a deferred TrackEvent: its iid unchanged",
     tar("defsame.tar", [("a.pftrace", deferred(b""))]),
     [(900, 0, "first"), (2000, 0, "first")])
# Rule: once a JSON X was pushed, the sorter runs in slow mode
# (TraceSorter::Stream::Push): an event at a queue's latest ts breaks its
# order, and the queue is sorted by SlowOperatorLess (trace_sorter.h): at
# one ts a JSON E first, then X by longer dur, then the rest.  Here the E
# at 30 closes b before c begins (without the X: c, then the E closing it).
durs("JSON ties once an X was pushed: the E first",
     tar("jslow.tar", [("a.json", json.dumps({"traceEvents": [
         jev("X", 5, "x") | {"dur": 10}, jev("B", 20, "b"), jev("B", 30, "c"), jev("E", 30), jev("E", 40)]}))]),
     [(5000, 10000, "x"), (20000, 10000, "b"), (30000, 10000, "c")])
durs("JSON ties without an X: push order",
     tar("jfast.tar", [("a.json", json.dumps({"traceEvents": [
         jev("B", 20, "b"), jev("B", 30, "c"), jev("E", 30), jev("E", 40)]}))]),
     [(20000, 20000, "b"), (30000, 0, "c")])
# Rule: an X of negative duration makes no slice (SliceTracker::Scoped,
# counting slice_negative_duration) and leaves the stack alone; an E that
# closes nothing counts no stat (SliceTracker::CompleteSliceBegin).
durs("a JSON X of negative dur makes no slice",
     tar("jneg.tar", [("a.json", json.dumps({"traceEvents": [
         jev("X", 10, "neg") | {"dur": -5}, jev("B", 12, "b"), jev("E", 20), jev("E", 25)]}))]),
     [(12000, 8000, "b")], {"slice_negative_duration": 1})
# Rule: an E with a category closes only a B of that category
# (SliceTracker::MatchingIncompleteSliceIndex): b1 ends at 20, b2 stays
# open above it and the E at 30 ends it where b1 ended (misplaced_end_event).
durs("a JSON E with a category closes only a B of it",
     tar("jcat.tar", [("a.json", json.dumps({"traceEvents": [
         jev("B", 10, "b1") | {"cat": "c1"}, jev("B", 12, "b2"), jev("E", 20) | {"cat": "c1"}, jev("E", 30)]}))]),
     [(10000, 10000, "b1"), (12000, 8000, "b2")], {"misplaced_end_event": 1})
# Rule: ApplyManifest resolves each entry's references in files[] order,
# looking a clock-less sync_to's file up in the archive as it goes: an
# entry whose reference the archive lacks fails before a later entry's
# reference to a file the manifest does not declare.
man_ghost = man([{"path": "a.json", "clocks": {"sync_to": {"file": "ghost.json"}, "offset_ns": 5}},
                 {"path": "ghost.json"},
                 {"path": "b.json", "clocks": {"sync_to": {"file": "unknown.json", "clock": "BOOTTIME"}, "offset_ns": 5}}])
r = check(tar("ghost.tar", [("perfetto_manifest.json", man_ghost), ("a.json", jx), ("b.json", jx)]))
want = ("Trace parse failure: perfetto_manifest: clocks: could not resolve file 'ghost.json'. It must match "
        "the `path` of an entry in the `files` array. (ERR:tp-parse)")
result("manifest: a reference the archive lacks fails before a later unknown file", r["error"] == want, str(r["error"]))
# Rule: a reference names a files[] entry by all its bytes
# (TraceManifestState::FindEntry: std::string ==): "a.json" is not an entry
# "a.json\u0000x", whatever the archive holds.
for what, head in (("clocks: sync_to.file", '"files": [{"path": "a.json\\u0000x"}, {"path": "b.json", '
                    '"clocks": {"sync_to": {"file": "a.json", "clock": "BOOTTIME"}, "offset_ns": 5}}]'),
                   ("trace_time: file", '"trace_time": {"clock": "BOOTTIME", "file": "a.json"}, '
                    '"files": [{"path": "a.json\\u0000x"}, {"path": "b.json"}]')):
    text = '{"perfetto_manifest": {"version": 1, %s}}' % head
    r = check(tar("nul.tar", [("perfetto_manifest.json", text), ("a.json", jx), ("b.json", jx)]))
    want = ("Trace parse failure: perfetto_manifest: %s names unknown file 'a.json'. It must match the "
            "`path` of an entry in the `files` array. (ERR:tp-parse)" % what)
    result("manifest: %s 'a.json' is not the entry 'a.json\\u0000x'" % what, r["error"] == want, str(r["error"]))
PY

#!/usr/bin/env bash
# The formats beyond proto, JSON and systrace, each case checked against
# trace_processor v58.2 (the figures are what it printed for the same
# bytes: the load error, the drop stats of a tokenize-only run, metadata
# trace_time_clock_id, and the timestamps of the surviving events).  Each
# builds the input with Python, runs `tracemerge check --json --events` and
# compares.  KEEP=1 keeps the inputs (to show them to trace_processor).
set -u
TM=${TM_BIN:-build/asan/tracemerge}
t=$(mktemp -d)
if [ -n "${KEEP:-}" ]; then echo "inputs kept in $t" >&2; else trap 'rm -rf "$t"' EXIT; fi
python3 - "$TM" "$t" "$(dirname "$0")/../../tools" <<'PY'
import io, json, os, subprocess, sys, tarfile

tm, tmp = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])
from difftest import enc_packet  # the protobuf writer (no trace_processor needed)

def tar(name, members):
    path = os.path.join(tmp, name)
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tf:
        for n, data in members:
            b = data.encode() if isinstance(data, str) else data
            ti = tarfile.TarInfo(n)
            ti.size, ti.mode, ti.mtime = len(b), 0o644, 0
            tf.addfile(ti, io.BytesIO(b))
    return path

def loose(name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    return path

def proto(packets): return b"".join(enc_packet(p) for p in packets)

def man(files, trace_time=None):
    m = {"version": 1, "files": files}
    if trace_time:
        m["trace_time"] = trace_time
    return json.dumps({"perfetto_manifest": m})

def relate(path, clock, ref, ref_clock, off):
    sync = {"file": ref}
    if ref_clock:
        sync["clock"] = ref_clock
    return {"path": path, "clocks": {"clock": clock, "sync_to": sync, "offset_ns": off}}

DROP = ("clock_sync_unrelatable_clock_domains", "clock_sync_failure_no_path",
        "trace_sorter_negative_timestamp_dropped")

def check(name, path, error=None, stats=None, tt=None, kept=None, fmt=None, machines=None,
          untimed=()):
    """error: the load error's text, as trace_processor printed it; stats: every nonzero stat
    tracemerge predicts, as trace_processor printed it; tt: metadata
    trace_time_clock_id ("none": not written); kept: surviving timestamps of
    the events named so (name -> sorted list); fmt: (member, format);
    machines: the machine table as (raw_id, name) by id; untimed: the
    members that have no timeline (predicted, nothing to drop)."""
    p = subprocess.run([tm, "check", "--json", "--events", path], capture_output=True)
    try:
        r = json.loads(p.stdout)
    except ValueError:
        print("FAIL: %s: no JSON (status %d): %s" % (name, p.returncode, p.stderr[-300:]))
        return
    why = []
    err = r.get("error")
    if error is not None:
        if err != error:
            why.append("error %r, expected %r" % (err, error))
    else:
        if err:
            why.append("error %r" % err)
        got = {k: v for k, v in r.get("stats", {}).items() if v}
        if got != (stats or {}):
            why.append("stats %r, expected %r" % (got, stats or {}))
        want_drop = sum(v for k, v in (stats or {}).items() if k in DROP)
        if r.get("dropped") != want_drop:
            why.append("dropped %r, expected %r" % (r.get("dropped"), want_drop))
        ttc = r.get("trace_time") or {}
        got_tt = ttc.get("clock_id") if ttc.get("claimed") else "none"
        if tt is not None and got_tt != tt:
            why.append("trace time %r, expected %r" % (got_tt, tt))
        for ev, tss in (kept or {}).items():
            got_ts = sorted(e["ts"] for e in r.get("events", [])
                            if e.get("name") == ev and not e.get("dropped"))
            if got_ts != tss:
                why.append("%s at %r, expected %r" % (ev, got_ts, tss))
        if machines is not None:
            got_m = [(m["raw_id"], m["name"]) for m in r.get("machines", [])]
            if got_m != machines:
                why.append("machines %r, expected %r" % (got_m, machines))
        for member in untimed:
            fs = [x for x in r.get("files", []) if x.get("path") == member]
            if not fs or not fs[0].get("untimed") or not fs[0].get("predicted"):
                why.append("%s not predicted as untimed: %r" % (member, fs))
    for member, f in ([fmt] if fmt else []):
        got_f = [x.get("format") for x in r.get("files", []) if x.get("path") == member]
        if got_f != [f]:
            why.append("%s is %r, expected %r" % (member, got_f, f))
    print(("PASS: " if not why else "FAIL: ") + name + ("" if not why else ": " + "; ".join(why)))

# ------------------------------------------------------------ perf_text
def sample(t, frames=("\tffffffff81000000 foo+0x10 (/lib/x.so)\n",)):
    return "prog 123/456 [001] %s:     250000 cpu-clock:\n" % t + "".join(frames) + "\n"

perf = sample("1.000000") + sample("2.000000") + sample("3.000000")
pb_boot = proto([{"k": "snap", "ts": 10**9, "clocks": [(6, 10**9), (1, 5 * 10**9)]},
                 {"k": "te", "ts": 10**9, "seq": 1, "type": 3, "name": "a"}])
pb_both = proto([{"k": "snap", "ts": 10**9, "clocks": [(6, 10**9), (3, 5 * 10**8)]},
                 {"k": "te", "ts": 10**9, "seq": 1, "type": 3, "name": "a"}])

check("perf_text: alone, claims MONOTONIC", loose("p.txt", perf), stats={}, tt=3,
      kept={"foo": [10**9, 2 * 10**9, 3 * 10**9]})
check("perf_text: a 4-digit fraction fails the whole import",
      tar("p4.tar", [("perf.txt", sample("1.000000") + sample("115540.8374")), ("trace.pb", pb_both)]),
      error="Trace parse failure: Perf text parser: unable to parse sample line (context: "
            "'prog 123/456 [001] 115540.8374:     250000 cpu-clock:') (ERR:tp-parse)")
check("perf_text: a second empty line fails the import",
      loose("p2.txt", sample("1.000000") + "\n" + sample("2.000000")),
      error="Trace parse failure: Perf text parser: unable to parse sample line (context: '') (ERR:tp-parse)")
check("perf_text: a frame without a mapping fails the import",
      loose("p3.txt", sample("1.000000", ("\tffff foo\n",))),
      error="Trace parse failure: Perf text parser: unable to find mapping in frame (context: 'ffff foo') "
            "(ERR:tp-parse)")
check("perf_text: a sample without frames is counted, not pushed",
      loose("p5.txt", sample("1.000000") + sample("2.000000", ()) + sample("3.000000")),
      stats={"perf_text_importer_sample_no_frames": 1}, tt=3, kept={"foo": [10**9, 3 * 10**9]})
check("perf_text: the last sample without its empty line is lost",
      loose("p6.txt", sample("1.000000") + sample("2.000000")[:-1]), stats={}, tt=3,
      kept={"foo": [10**9]})
check("perf_text: seconds past int64 ns are dropped as negative",
      loose("p7.txt", sample("303057.417513") + sample("9223372036.854775")),
      stats={"trace_sorter_negative_timestamp_dropped": 1}, kept={"foo": [303057417513000]})
check("perf_text: beside a proto without MONOTONIC, unrelatable",
      tar("p8.tar", [("perf.txt", perf), ("trace.pb", pb_boot)]),
      stats={"clock_sync_unrelatable_clock_domains": 1,
             "clock_sync_failure_unknown_source_clock": 3}, tt=6, kept={"foo": []})
check("perf_text: beside a proto with MONOTONIC, placed by its snapshot",
      tar("p9.tar", [("perf.txt", perf), ("trace.pb", pb_both)]), stats={}, tt=6,
      kept={"foo": [1500000000, 2500000000, 3500000000]})
check("perf_text: -k mono related -1.5 s to a BOOTTIME proto: one dropped",
      tar("p10.tar", [("m.json", man([{"path": "trace.pb"},
                                      relate("perf.txt", "MONOTONIC", "trace.pb", "BOOTTIME", -1500000000)])),
                      ("perf.txt", perf), ("trace.pb", pb_boot)]),
      stats={"trace_sorter_negative_timestamp_dropped": 1}, tt=6,
      kept={"foo": [500000000, 1500000000]})
check("perf_text: related +0.5 s: none dropped",
      tar("p11.tar", [("m.json", man([{"path": "trace.pb"},
                                      relate("perf.txt", "MONOTONIC", "trace.pb", "BOOTTIME", 500000000)])),
                      ("perf.txt", perf), ("trace.pb", pb_boot)]),
      stats={}, tt=6, kept={"foo": [1500000000, 2500000000, 3500000000]})
check("perf_text: a proto's own MONOTONIC snapshot wins over the relation",
      tar("p12.tar", [("m.json", man([{"path": "trace.pb"},
                                      relate("perf.txt", "MONOTONIC", "trace.pb", "BOOTTIME", -1500000000)])),
                      ("perf.txt", perf), ("trace.pb", pb_both)]),
      stats={}, tt=6, kept={"foo": [1500000000, 2500000000, 3500000000]})
check("perf_text: a PIN leaves it on MONOTONIC",
      tar("p13.tar", [("m.json", man([{"path": "trace.pb"},
                                      {"path": "perf.txt", "clocks": {"sync_to": {"file": "trace.pb", "clock": "BOOTTIME"},
                                                                      "offset_ns": -1500000000}}])),
                      ("perf.txt", perf), ("trace.pb", pb_boot)]),
      stats={"clock_sync_unrelatable_clock_domains": 1,
             "clock_sync_failure_unknown_source_clock": 3}, tt=6)
check("perf_text: before a JSON file, the JSON claims trace time (name order)",
      tar("p14.tar", [("perf.txt", perf),
                      ("a.json", '{"traceEvents":[{"ph":"i","name":"x","ts":5,"pid":1,"tid":1,"s":"t"}]}')]),
      stats={}, tt=11, kept={"foo": [10**9, 2 * 10**9, 3 * 10**9]})
# ------------------------------------------------- formats without a timeline
import struct
col = "main;foo;bar 10\nmain;baz 3\n"
pprof = (b"\x0a\x04\x08\x01\x10\x02" + b"\x12\x02\x10\x05"   # sample_type, sample
         + b"\x32\x00" + b"\x32\x03cpu" + b"\x32\x02ns")            # string_table
sym = bytes([0x0a, 14, 0xea, 0x03, 11, 0x0a, 9]) + b"/lib/x.so"
hprof = b"JAVA PROFILE 1.0.3\0" + struct.pack(">III", 4, 0x18d, 0x12345678)
arrow = b"ARROW1\0\0" + b"\0" * 64
js = '{"traceEvents":[{"ph":"i","name":"x","ts":5,"pid":1,"tid":1,"s":"t"}]}'
for n, data, f in (("c.txt", col, "collapsed_stack"), ("p.pprof", pprof, "pprof"),
                   ("s.sym", sym, "symbols"), ("h.hprof", hprof, "art_hprof")):
    check("%s: alone, claims no trace time, nothing to drop" % f,
          tar("u_" + f + ".tar", [(n, data)]), stats={}, tt="none", machines=[(0, None)],
          untimed=(n,), fmt=(n, f))
    check("%s: beside JSON, the JSON claims" % f, tar("uj_" + f + ".tar", [(n, data), ("z.json", js)]),
          stats={}, tt=11, untimed=(n,), kept={"x": [5000]})
check("collapsed_stack: a manifest machine gives it its own row",
      tar("u_m.tar", [("m.json", man([{"path": "a.txt", "machine": {"name": "m2"}}, {"path": "b.json"}])),
                      ("a.txt", col), ("b.json", js)]),
      stats={}, tt=11, machines=[(4294967296, "m2"), (0, None)], untimed=("a.txt",))
check("arrow: without a manifest schema the import fails", tar("a1.tar", [("a.arrow", arrow), ("b.json", js)]),
      error="Trace parse failure: Arrow files can only be loaded from a Perfetto export whose "
            "perfetto_manifest declares each member's __exported_table_schema (ERR:tp-parse)")
for what, entry in (("machine", {"path": "a.arrow", "machine": {"name": "m2"}}),
                    ("clocks", {"path": "a.arrow", "clocks": {"sync_to": {"file": "b.json"}, "offset_ns": 5}})):
    check("arrow: a manifest %s entry on it fails the import" % what,
          tar("a_%s.tar" % what, [("m.json", man([entry, {"path": "b.json"}])), ("a.arrow", arrow), ("b.json", js)]),
          error="Trace parse failure: perfetto_manifest: overrides are not supported for trace files which "
                "are themselves archives or perfetto_manifest files: a.arrow (ERR:tp-parse)")
# ------------------------------------------------------------ android_logcat
import time
year = time.gmtime(time.clock_gettime(time.CLOCK_MONOTONIC)).tm_year  # GuessYear's, empty sorter
import calendar
def rt(y, mo, d, h, mi, se, ns=0): return calendar.timegm((y, mo, d, h, mi, se, 0, 0, 0)) * 10**9 + ns
pb_rt = proto([{"k": "snap", "ts": 10**9, "clocks": [(6, 10**9), (1, 1704164645 * 10**9)]},
               {"k": "te", "ts": 10**9, "seq": 1, "type": 3, "name": "a"}])
log_y = "2024-01-02 03:04:04.000  1000  1001 I tag: before\n2024-01-02 03:04:06.000  1000  1001 I tag: after\n"
log_n = "01-02 03:04:04.000  1000  1001 I tag: before\n01-02 03:04:06.000  1000  1001 I tag: after\n"
check("android_logcat: alone, claims REALTIME; a line without a year in GuessYear's",
      loose("l1.txt", "--------- beginning of main\n" + log_n + "2024-01-02 03:04:05.678912  1000  1001 W t2: y\n"
            "01-02 03:04:05.678 abc 1001 I tag: bad pid xxxxxxxx\n01-02 03:04:05.678  1000  1001 I tag: no newline"),
      stats={"android_log_num_failed": 1}, tt=1,
      kept={"tag": [rt(year, 1, 2, 3, 4, 4), rt(year, 1, 2, 3, 4, 6)], "t2": [1704164645678912000]})
check("android_logcat: beside a proto's REALTIME snapshot, placed by it",
      tar("l2.tar", [("log.txt", log_y), ("trace.pb", pb_rt)]), stats={}, tt=6,
      kept={"tag": [0, 2000000000]})
if year < 2024:
    check("android_logcat: year-less lines in a dry run land before the proto's boot: dropped",
          tar("l3.tar", [("log.txt", log_n), ("trace.pb", pb_rt)]),
          stats={"trace_sorter_negative_timestamp_dropped": 2}, tt=6)
check("android_logcat: beside a proto without REALTIME, unrelatable",
      tar("l4.tar", [("log.txt", "2024-01-02 03:04:04.000  1000  1001 I tag: x\n"),
                     ("trace.pb", proto([{"k": "snap", "ts": 10**9, "clocks": [(6, 10**9), (3, 10**9)]}]))]),
      stats={"clock_sync_unrelatable_clock_domains": 1, "clock_sync_failure_unknown_source_clock": 1}, tt=6)
# ------------------------------------------------- a ZIP read as a bugreport
import zipfile
def zipf(name, members):
    path = os.path.join(tmp, name)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, data in members:
            zf.writestr(zipfile.ZipInfo(n, (1980, 1, 1, 0, 0, 0)), data)
    return path
dump = ("========================================================\n== dumpstate: 2024-01-02 03:04:05\n"
        "========================================================\n")
brname = "bugreport-product-TP1A.220623.001-2022-06-24-16-24-37.txt"
check("bugreport ZIP: read as a bugreport, claims REALTIME, its JSON and proto ignored",
      zipf("b1.zip", [(brname, dump), ("a.json", js), ("trace.pb", pb_rt)]), stats={}, tt=1,
      kept={"x": [], "a": []})
check("bugreport ZIP: a name without a year there is no bugreport",
      zipf("b2.zip", [(brname.replace("2022", "abcd"), dump), ("a.json", js)]), stats={}, tt=11,
      kept={"x": [5000]})
check("bugreport ZIP: a TAR has no such rule", tar("b3.tar", [(brname, dump), ("a.json", js)]),
      stats={}, tt=11, kept={"x": [5000]})
check("bugreport ZIP: a name shorter than 23 bytes aborts trace_processor",
      zipf("b4.zip", [("bugreport-notes.txt", "hi\n"), ("a.json", js)]),
      error="trace_processor aborts: terminate called after throwing an instance of 'std::out_of_range' "
            "(a member named bugreport-*.txt shorter than 23 bytes, where the bugreport reader looks for "
            "a year: android_bugreport_reader.cc, ExtractYearFromBugReportFilename)")
# ------------------------------------------------------------ android_dumpstate
DHDR = ("========================================================\n== dumpstate: 2024-01-02 03:04:05\n"
        "========================================================\n")
DLOG = ("------ SYSTEM LOG (logcat -v threadtime -v printable -v uid -d *:v) ------\n"
        "01-02 03:04:05.678  1000  1000  1001 I tag: one\n01-02 03:04:06.678  1000  1000  1001 I tag: two\n"
        "------ 0.356s was the duration of 'SYSTEM LOG' ------\n")
DALARM = ("------ DUMPSYS (/system/bin/dumpsys) ------\nDUMP OF SERVICE alarm:\n"
          "  nowRTC=1704164645000=2024-01-02 04:04:05.000 nowELAPSED=403532\n"
          "---------------------------------------------------------------------------\n")
DLOG2 = ("------ EVENT LOG (logcat -b events -v threadtime -v printable -v uid -d *:v) ------\n"
         "01-02 03:04:07.678  1000  1000  1001 I tag3: three\n")
check("android_dumpstate: log lines held for a timezone that never comes: none pushed",
      loose("d1.txt", DHDR + DLOG), stats={}, tt=1, kept={"tag": []})
check("android_dumpstate: the alarm's timezone, then a log line: all pushed in year 0, dropped",
      loose("d2.txt", DHDR + DLOG + DALARM + DLOG2), stats={"trace_sorter_negative_timestamp_dropped": 3}, tt=1)
check("android_dumpstate: the timezone first: each line dropped at once",
      loose("d3.txt", DHDR + DALARM + DLOG), stats={"trace_sorter_negative_timestamp_dropped": 2}, tt=1)
check("android_dumpstate: battery stats, one push per history item",
      loose("d4.txt", DHDR + "------ CHECKIN BATTERYSTATS (dumpsys batterystats -c) ------\n9,0,i,vers,36,214,AP1A,AP1A\n"
            "9,h,0:TIME:1732816430344\n9,h,100,+r,+s\n9,h,50,-s\n9,h,0:START\n"),
      stats={}, tt=1, kept={"+r": [1732816430444000000], "+s": [1732816430444000000], "-s": [1732816430494000000]})
check("android_dumpstate: a battery line not starting 9 fails the import",
      loose("d5.txt", "9,0,i,vers,36,214,AP1A,AP1A\n9,h,0:TIME:1732816430344\n9,h,100,+r,+s\nxx\n"),
      error="Trace parse failure: Unexpected start of battery stats checkin line (ERR:tp-parse)")
check("android_dumpstate: a delta that is no number fails the import",
      loose("d6.txt", "9,0,i,vers,36,214,AP1A,AP1A\n9,h,10,+r\n9,h,abc,+r\n"),
      error="Trace parse failure: Failed to convert string to int64_t (ERR:tp-parse)")
# Perfetto's test_android_dumpstate_standalone_battery_stats_checkin input
# (tests_dumpstate.py, EXAMPLE_CHECKIN): ScreenState at 1732816430344000000
CHECKIN = """9,0,i,vers,36,214,AP1A.240305.019.A1,AP2A.240805.005.S4
9,hsp,0,10216,"com.android.chrome"
9,hsp,1,1001,"*telephony-radio*"
9,hsp,2,10238,"*alarm*"
9,hsp,3,1002,"*telephony-radio*"
9,h,0:RESET:TIME:1732816430344
9,h,0,Bl=100,Bs=d,Bh=g,Bp=n,Bt=251,Bv=4395,Bcc=4263,Mrc=0,Wrc=0,+r,+w,+s,+Wr,+S,+BP,Pcn=lte,Pss=3,+W,Wss=4,Wsp=compl,+Chtp,Gss=none,nrs=1,Etp=0
9,h,10,+w=1
9,h,10,-w=1
9,h,10,+w=1
9,h,10,+w=2
9,h,10,-w=1
9,h,10,-w=2
9,h,10,+w=1
9,h,10,+w=3
9,h,10,-w=1
9,h,10,-w=3
"""
check("android_dumpstate: Perfetto's battery stats checkin", loose("d7.txt", CHECKIN), stats={}, tt=1,
      kept={"Bs=d": [1732816430344000000], "+w=3": [1732816430424000000]})
# ------------------------------------------------------------ strace
# Perfetto's own strace inputs (test/trace_processor/diff_tests/parser/strace/*.strace),
# with what trace_processor v58.2 printed for them
STRACE = {
    'basic.strace': '1000 1700000052.321000 openat(AT_FDCWD, "/etc/passwd", O_RDONLY) = 3\n1000 1700000052.321100 read(3, "root:x:0:0"..., 1024) = 312\n1000 1700000052.321200 close(3)                = 0\n1000 1700000052.321300 openat(AT_FDCWD, "/nope", O_RDONLY) = -1 ENOENT (No such file or directory)\n--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED} ---\n1234 1700000052.321400 write(1, "hi", 2) = 2\n+++ exited with 0 +++\nthis line is not valid strace output and should be skipped\n',
    'missing_pid.strace': '1000 1700000052.321000 openat(AT_FDCWD, "/etc/passwd", O_RDONLY) = 3\n1700000052.321100 read(3, "root:x:0:0"..., 1024) = 312\n1700000052.321200 close(3)                = 0\n1000 1700000052.321300 write(1, "hi", 2) = 2\n',
    'resumed_then_unfinished.strace': '1000 1700000052.321000 epoll_wait(4, <unfinished ...>\n1000 1700000052.321500 <... epoll_wait resumed> {}, 64, 100 <unfinished ...>\n1000 1700000052.322000 <... epoll_wait resumed> {}, 64, 100) = 1\n',
    'unfinished_resumed.strace': '1000 1700000052.321000 futex(0x7f, FUTEX_WAIT, 2, NULL <unfinished ...>\n1000 1700000052.321500 <... futex resumed> )  = 0\n1000 1700000052.321600 write(1, "done", 4)    = 4\n',
    'unsupported_timestamp.strace': '1000 1700000052.321000 openat(AT_FDCWD, "/etc/passwd", O_RDONLY) = 3\n1000 14:32:01 read(3, "root:x:0:0"..., 1024) = 312\n1000 14:32:01.123456 close(3)                = 0\n1000 1700000052.321100 write(1, "hi", 2) = 2\n',
}
T0 = 1700000052321000000
check("strace: basic (-f lines, signals, exit, garbage)", loose("basic.strace", STRACE["basic.strace"]),
      stats={"strace_parse_failure": 3}, tt=1,
      kept={"openat": [T0, T0 + 300000], "read": [T0 + 100000], "close": [T0 + 200000], "write": [T0 + 400000]})
check("strace: lines without a pid converted, not kept", loose("missing_pid.strace", STRACE["missing_pid.strace"]),
      stats={"strace_missing_pid": 2}, tt=1, kept={"read": [], "close": [], "write": [T0 + 300000]})
check("strace: -t/-tt timestamps", loose("unsupported_timestamp.strace", STRACE["unsupported_timestamp.strace"]),
      stats={"strace_unsupported_timestamp_format": 2}, tt=1, kept={"write": [T0 + 100000]})
check("strace: unfinished then resumed", loose("unfinished_resumed.strace", STRACE["unfinished_resumed.strace"]),
      stats={}, tt=1, kept={"futex": [T0, T0 + 500000], "write": [T0 + 600000]})
check("strace: the fraction is whole microseconds; past int64 wraps negative",
      loose("st1.txt", "1000 1700000052.5 read(3) = 1\n1000 1700000052.000005 read(3) = 1\n"
            "1000 9223372036.999999 x() = 0\n1000 1700000052. y() = 0\n"),
      stats={"trace_sorter_negative_timestamp_dropped": 1}, tt=1,
      kept={"read": [1700000052000005000, 1700000052000005000], "y": [1700000052000000000]})
check("strace: beside a proto without REALTIME: unrelatable, no strace_missing_pid",
      tar("st2.tar", [("a.strace", "1000 1700000052.5 read(3) = 1\n1700000052.6 read(3) = 1\n"),
                      ("trace.pb", proto([{"k": "snap", "ts": 10**9, "clocks": [(6, 10**9), (3, 10**9)]}]))]),
      stats={"clock_sync_unrelatable_clock_domains": 1, "clock_sync_failure_unknown_source_clock": 2}, tt=6)
# ------------------------------------------------------------ gecko
# Perfetto's test_gecko_markers input (parser/gecko/tests.py): slices at 10, 20, 30 ms
GMARK = """{"meta": {"categories": [{"name": "Other", "color": "grey", "subcategories": ["Other"]},
 {"name": "DOM", "color": "blue", "subcategories": ["Other"]}]},
 "threads": [{"name": "main", "tid": 100, "pid": 100, "stringArray": ["Click", "Boot", "DOMEvent"],
  "frameTable": {"func": []}, "funcTable": {"name": []}, "stackTable": {"prefix": [], "frame": []},
  "samples": {"stack": [], "time": []},
  "markers": {"name": [0, 1, 2, 2], "startTime": [10.0, 20.0, 30.0, 0.0], "endTime": [10.0, 25.0, 0.0, 35.0],
   "phase": [0, 1, 2, 3], "category": [0, 0, 1, 1], "data": [{"flow": 7}, null, {"target": "btn"}, null],
   "length": 4}}]}"""
check("gecko: Perfetto's markers, claims its TRACE_FILE clock", loose("g1.json", GMARK), stats={}, tt=11,
      kept={"Click": [10000000], "Boot": [20000000], "DOMEvent": [30000000, 35000000]})
gpre = {"meta": {}, "threads": [{"name": "t", "tid": 1, "pid": 1, "stringArray": ["f0", "f1"],
  "frameTable": {"func": [0, 1]}, "funcTable": {"name": [0, 1]}, "stackTable": {"prefix": [None, 0], "frame": [0, 1]},
  "samples": {"stack": [0, 1, None, 5, 1], "time": [-1.5, 2.0, 3.0, 4.0, 0.0000004]},
  "markers": {"name": [0, 9], "startTime": [-3.0, 1.0], "endTime": [-2.0, 1.0], "phase": [1, 0], "category": [0, 0]}}]}
check("gecko: samples and markers, each list's thread metadata dropped with its first event",
      loose("g2.json", json.dumps(gpre)), stats={"trace_sorter_negative_timestamp_dropped": 4}, tt=11,
      kept={"t": [0, 2000000]})
gleg = {"meta": {}, "threads": [{"name": "t", "tid": 1, "pid": 1, "stringTable": ["a", "b"],
  "frameTable": {"schema": {"location": 0}, "data": [[0], [1], [7]]},
  "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[None, 0], [0, 1], [1, 2]]},
  "samples": {"schema": {"stack": 0, "time": 1}, "data": [[0, 5], [1, 6.5], [2, 7], [0, -1]]}}]}
check("gecko: legacy tables (6.5 read as the uint32 6)", loose("g3.json", json.dumps(gleg)),
      stats={"trace_sorter_negative_timestamp_dropped": 1}, tt=11, kept={"t": [5000000, 6000000]})
check("gecko: a PIN moves it (-2.5 ms: 6 dropped)",
      tar("g5.tar", [("m.json", man([{"path": "a.json"}, {"path": "g.json", "clocks": {"sync_to": {"file": "a.json"},
                                                                                          "offset_ns": -2500000}}])),
                     ("g.json", json.dumps(gpre)), ("a.json", js)]),
      stats={"trace_sorter_negative_timestamp_dropped": 6}, tt=11, kept={"x": [5000], "t": []})
# ours: a profile over 64 MiB is not held (its JSON tree would take ~40x its size): not predicted
gbig = loose("gbig.json", GMARK[:-1] + " " * (64 << 20) + "}")
p = subprocess.run([tm, "check", "--no-cache", "--json", gbig], capture_output=True)
fs = [f for f in json.loads(p.stdout).get("files", []) if f.get("format") == "gecko"]
ok = fs and fs[0].get("predicted") is False and "over 64 MiB" in (fs[0].get("placement") or "")
print(("PASS: " if ok else "FAIL: ") + "gecko: over 64 MiB, not held and not predicted, and says why"
      + ("" if ok else ": %r" % (fs or p.stdout[:500])))
t = subprocess.run([tm, "check", "--no-cache", gbig], capture_output=True, text=True).stdout
ok = "gecko" in t and "format not scanned" not in t and "does not model" in t
print(("PASS: " if ok else "FAIL: ") + "gecko: over 64 MiB, the text says scanned but not predicted"
      + ("" if ok else ": %r" % t[:600]))
os.remove(gbig)
# ------------------------------------------------------------ simpleperf_proto
import struct
from difftest import fl as pfl, fv as pfv
def sprec(body): return struct.pack("<I", len(body)) + body
SPH = b"SIMPLEPERF" + struct.pack("<H", 1)
sp_ok = (SPH + sprec(pfl(3, pfv(1, 0) + pfl(2, "/x"))) + sprec(pfl(4, pfv(1, 7) + pfv(2, 7) + pfl(3, "main")))
         + sprec(pfl(1, pfv(1, 1000) + pfv(2, 7))) + sprec(pfl(6, pfv(1, 1) + pfv(2, 2000) + pfv(3, 7)))
         + sprec(pfl(4, pfv(1, 7) + pfv(2, 7))) + sprec(pfl(1, pfv(2, 7))) + struct.pack("<I", 0))
check("simpleperf_proto: claims MONOTONIC; thread records at the last time, a sample without one at 0",
      loose("sp1.pb", sp_ok), stats={}, tt=3,
      kept={"thread": [0, 2000], "sample": [0, 1000], "context_switch": [2000]})
check("simpleperf_proto: related -1500 ns: the three before 1500 dropped",
      tar("sp4.tar", [("m.json", man([{"path": "a.json"}, relate("p.pb", "MONOTONIC", "a.json", None, -1500)])),
                      ("p.pb", sp_ok), ("a.json", js)]),
      stats={"trace_sorter_negative_timestamp_dropped": 3}, tt=11)
check("simpleperf_proto: a file without its end marker fails the import",
      loose("sp2.pb", SPH + sprec(pfl(1, pfv(1, 1000)))),
      error="Trace parse failure: Unexpected end of simpleperf_proto file (ERR:tp-corrupt) (ERR:tp-parse)")
check("simpleperf_proto: version 2 fails the import",
      loose("sp3.pb", b"SIMPLEPERF" + struct.pack("<HI", 2, 0)),
      error="Trace parse failure: Unsupported simpleperf version: 2 (ERR:tp-parse)")
# ------------------------------------------------------------ ninja_log
NINJA = "# ninja log v5\n0\t100\t0\tobj/a.o\tdeadbeef\n50\t250\t0\tobj/b.o\tcafe\nbad line\n"
check("ninja_log: alone, slices at their own times, no claim, nothing to drop",
      loose("n.ninja_log", NINJA), stats={}, tt="none", machines=[(0, None)], untimed=(None,))
check("ninja_log: inside an archive the import fails",
      tar("nt.tar", [("b.ninja_log", NINJA), ("a.json", '{"traceEvents":[]}')]),
      error="Trace parse failure: Ninja traces currently do not support being contained inside other trace "
            "formats. Please file a bug at https://github.com/google/perfetto/issues if this is important to "
            "you. (ERR:tp-parse)")
# ------------------------------------------------------------ art_method (v1)
def ahdr(version, start, recsize=0):
    return struct.pack("<IHHQH", 0x574f4c53, version, 32, start, recsize) + b"\0" * 14
def arec(tid, mid, action, delta): return struct.pack("<HII", tid, mid | action, delta)
ART_NS = ("*version\n2\nclock=wall\n*threads\n1\tmain\n*methods\n0x10\tcom/a/B\tfoo\t()V\tB.java\n"
          "0x20\tcom/a/C\tbar\t()V\tC.java\n*end\n").encode() + ahdr(2, 1000000) + arec(1, 0x10, 0, 5) \
    + arec(1, 0x20, 0, 7) + arec(1, 0x20, 1, 9) + arec(1, 0x10, 1, 12)
def ameth(line): b = line.encode(); return struct.pack("<HBH", 0, 1, len(b)) + b
def athr(tid, name): b = name.encode(); return struct.pack("<HBHH", 0, 2, tid, len(b)) + b
ASUMM = b"*version\n3\ndata-file-overflow=false\nclock=wall\nelapsed-time-usec=1\n*threads\n1\tmain\n*methods\n*end\n"
def asummary(x): return struct.pack("<HBI", 0, 3, len(x)) + x
ART_ST = (ahdr(0xF2, 2000000) + ameth("0x10\tcom/a/B\tfoo\t()V\tB.java") + athr(1, "main")
          + arec(1, 0x10, 0, 5) + arec(1, 0x10, 1, 8) + asummary(ASUMM))
check("art_method: non-streaming, (start + delta) * 1000 on MONOTONIC", loose("a1.trace", ART_NS), stats={}, tt=3,
      kept={"method": [1000005000, 1000007000, 1000009000, 1000012000]})
check("art_method: non-streaming ending inside a record fails the import", loose("a2.trace", ART_NS + b"\x01"),
      error="Trace parse failure: ART Method trace: trace is incomplete (ERR:tp-corrupt) (ERR:tp-parse)")
check("art_method: streaming, read at its summary", loose("a3.trace", ART_ST), stats={}, tt=3,
      kept={"method": [2000005000, 2000008000]})
check("art_method: streaming without its summary fails the import", loose("a4.trace", ART_ST[:-10]),
      error="Trace parse failure: ART Method trace: trace is incomplete (ERR:tp-corrupt) (ERR:tp-parse)")
check("art_method: thread-cpu clock fails the import",
      loose("a5.trace", ahdr(0xF2, 2000000) + arec(1, 0x10, 0, 5) + asummary(ASUMM.replace(b"clock=wall", b"clock=thread-cpu"))),
      error="Trace parse failure: ART method tracing: thread-cpu clock is *not* supported. Use wall or dual "
            "clocks (ERR:tp-parse)")
check("art_method: v3 with clock=dual reads the wall delta",
      loose("a6.trace", "*version\n3\nclock=dual\n*threads\n1\tmain\n*methods\n0x10\tcom/a/B\tfoo\t()V\tB.java\n*end\n".encode()
            + ahdr(3, 1000, 14) + struct.pack("<HIII", 1, 0x10, 100, 3) + struct.pack("<HIII", 1, 0x11, 200, 4)),
      stats={}, tt=3, kept={"method": [1003000, 1004000]})
check("art_method: related before the JSON's zero: 2 dropped",
      tar("a7.tar", [("m.json", man([{"path": "a.json"}, relate("m.trace", "MONOTONIC", "a.json", None, -1000008000)])),
                     ("m.trace", ART_NS), ("a.json", js)]),
      stats={"trace_sorter_negative_timestamp_dropped": 2}, tt=11)
# ------------------------------------------------------------ art_method_v2
def sleb(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if (v == 0 and not (b & 0x40)) or (v == -1 and (b & 0x40)):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)
def v2hdr(version, start, freq=0):
    return struct.pack("<IHQQQ", 0x574f4c53, version, start, 0, freq) + b"\0" * 2
def v2thread(tid, name): b = name.encode(); return bytes([0]) + struct.pack("<IH", tid, len(b)) + b
def v2method(mid, line): b = line.encode(); return bytes([1]) + struct.pack("<QH", mid, len(b)) + b
def v2entries(tid, recs, dual=False):
    body, prev_ta, prev_m = b"", 0, 0
    for action, t, mid in recs:
        ta = (t << 2) | action
        body += sleb(ta - prev_ta)
        prev_ta = ta
        if dual:
            body += sleb(0)
        if action == 0:
            body += sleb(mid - prev_m)
            prev_m = mid
    return (bytes([2]) + struct.pack("<I", tid) + struct.pack("<I", len(recs))[:3]
            + struct.pack("<I", len(body)) + body)
V2SUMM = bytes([3, 0]) + b"*version\n5\nclock=wall\n*end\n"
V2 = (v2hdr(0x04, 1000) + v2thread(7, "main") + v2method(0x10, "com/a/B\tfoo\t()V\tB.java\t3")
      + v2entries(7, [(0, 100, 0x10), (1, 250, 0)]) + V2SUMM)
check("art_method_v2: header start + delta, MONOTONIC", loose("v1.trace", V2), stats={}, tt=3,
      kept={"method": [1100, 1250]}, fmt=(None, "art_method_v2"))
check("art_method_v2: dual clock, TSC at 2 GHz (start unscaled)",
      loose("v2.trace", v2hdr(0x05, 1000, 2000000000) + v2thread(7, "main")
            + v2entries(7, [(0, 100, 0x10), (1, 250, 0)], dual=True) + V2SUMM),
      stats={}, tt=3, kept={"method": [1050, 1125]})
check("art_method_v2: no *end fails the import", loose("v3.trace", V2[:-5]),
      error="Trace parse failure: ART Method trace: trace is incomplete (ERR:tp-corrupt) (ERR:tp-parse)")
check("art_method_v2: entries of an unknown thread fail the import",
      loose("v4.trace", v2hdr(0x04, 1000) + v2entries(9, [(0, 1, 1)]) + V2SUMM),
      error="Trace parse failure: ART Method V2 trace: trace entries encountered for unknown thread 9 (ERR:tp-parse)")
# ------------------------------------------- the timezone of log lines
tz_te = {"k": "te", "ts": 10**9, "seq": 1, "type": 3, "name": "pa"}
def pb_tz(*extra): return proto([pb_rt_snap, tz_te] + list(extra))
pb_rt_snap = {"k": "snap", "ts": 10**9, "clocks": [(6, 10**9), (1, 1704164645 * 10**9)]}
tzlog = "2024-01-02 03:04:04.000  1000  1001 I tag: before\n2024-01-02 04:04:06.000  1000  1001 I tag: after\n"
check("timezone: a proto's SystemInfo +60 min moves the logcat lines an hour earlier",
      tar("z1.tar", [("log.txt", tzlog), ("trace.pb", pb_tz({"k": "sysinfo", "tz": 60}))]),
      stats={"trace_sorter_negative_timestamp_dropped": 1}, tt=6, kept={"tag": [2000000000]})
check("timezone: -60 min, an hour later",
      tar("z2.tar", [("log.txt", tzlog), ("trace.pb", pb_tz({"k": "sysinfo", "tz": -60}))]),
      stats={}, tt=6, kept={"tag": [3600000000000, 7202000000000]})
check("timezone: the proto processed last sets it (+120 after +60)",
      tar("z3.tar", [("log.txt", tzlog), ("a.pb", pb_tz({"k": "sysinfo", "tz": 60})),
                     ("b.pb", proto([{"k": "sysinfo", "tz": 120}]))]),
      stats={"trace_sorter_negative_timestamp_dropped": 2}, tt=6, kept={"tag": []})
check("timezone: the last SystemInfo of one proto",
      tar("z5.tar", [("log.txt", tzlog), ("trace.pb", pb_tz({"k": "sysinfo", "tz": 120}, {"k": "sysinfo", "tz": 60}))]),
      stats={"trace_sorter_negative_timestamp_dropped": 1}, tt=6, kept={"tag": [2000000000]})
check("timezone: a SystemInfo in a packet with a timestamp",
      tar("z11.tar", [("log.txt", tzlog), ("trace.pb", pb_tz({"k": "sysinfo", "tz": 60, "ts": 2 * 10**9}))]),
      stats={"trace_sorter_negative_timestamp_dropped": 1}, tt=6, kept={"tag": [2000000000]})
check("timezone: a dumpstate after it pushes its log lines at once (year 0: dropped)",
      tar("z7.tar", [("d.txt", DHDR + DLOG.replace(" tag:", " dtag:")),
                     ("trace.pb", pb_tz({"k": "sysinfo", "tz": 60}))]),
      stats={"trace_sorter_negative_timestamp_dropped": 2}, tt=6, kept={"dtag": []})
tzalarm = DALARM.replace("04:04:05.000", "05:04:05.000")
check("timezone: a dumpstate's alarm (+2 h) moves a logcat processed after it",
      tar("z8.tar", [("a.txt", DHDR + tzalarm), ("b.txt", tzlog), ("trace.pb", pb_tz())]),
      stats={"trace_sorter_negative_timestamp_dropped": 2}, tt=6, kept={"tag": []})
# a hostile count of minutes: int32 min * 60e9 past int64, wrapped (never undefined)
check("timezone: INT32_MIN minutes wrap as the machine's multiply does",
      tar("z12.tar", [("log.txt", tzlog), ("trace.pb", pb_tz({"k": "sysinfo", "tz": -2**31}))]),
      stats={"trace_sorter_negative_timestamp_dropped": 2}, tt=6, kept={"tag": []})
check("timezone: not a logcat processed before it",
      tar("z9.tar", [("a.txt", tzlog), ("b.txt", DHDR + tzalarm), ("trace.pb", pb_tz())]),
      stats={}, tt=6, kept={"tag": [0, 3602000000000]})
# ------------------------------------------------------------ fuchsia
import fxt_gen as fx
FXH = fx.MAGIC
check("fuchsia: alone, claims BOOTTIME; 1000 ticks/s; an overflow counted, not pushed",
      loose("f1.fxt", FXH + fx.init(1000) + fx.complete(5, 7, "a") + fx.event(3, "b") + fx.event(2**62, "ovf")
            + fx.complete(9, 10, "c")),
      stats={"fuchsia_timestamp_overflow": 1}, tt=6,
      kept={"a": [5000000], "b": [3000000], "c": [9000000], "ovf": []}, fmt=(None, "fuchsia"))
check("fuchsia: a new provider resets the rate, a section switches back",
      loose("f2.fxt", FXH + fx.init(1000) + fx.event(5, "a") + fx.provider_info(7, "p7") + fx.event(5, "b")
            + fx.init(10) + fx.event(5, "c") + fx.provider_section(0) + fx.event(6, "d")
            + fx.provider_section(7) + fx.event(1, "e")),
      stats={}, tt=6, kept={"a": [5000000], "b": [5], "c": [500000000], "d": [6000000], "e": [100000000]})
check("fuchsia: string table references, missing ones counted",
      loose("f3.fxt", FXH + fx.string(1, "nm") + fx.string(2, "ct") + fx.event(5, 1, cat=2) + fx.event(6, 3)
            + fx.event(7, "x", cat=4) + fx.event(8, "y")),
      stats={"fuchsia_invalid_string_ref": 2}, tt=6, kept={"nm": [5], "x": [], "y": [8]})
check("fuchsia: a section of an unknown provider: invalid events until its info",
      loose("f4.fxt", FXH + fx.provider_section(5) + fx.event(5, "a") + fx.init(5) + fx.string(1, "s")
            + fx.provider_info(5, "p") + fx.event(6, "b")),
      stats={"fuchsia_invalid_event": 3}, tt=6, kept={"a": [], "b": [6]})
check("fuchsia: a record shorter than its contents: a read error",
      loose("f5.fxt", FXH + fx.event(5, "abcdefghij", size=3)[:24] + fx.event(6, "ok")),
      stats={"fuchsia_record_read_error": 1}, tt=6, kept={"abcdefghij": [], "ok": [6]})
check("fuchsia: a record of size 0 fails the import",
      loose("f6.fxt", FXH + fx.event(5, "a") + struct.pack("<Q", 4) + fx.event(6, "b")),
      error="Trace parse failure: Unexpected record of size 0 (ERR:tp-parse)")
check("fuchsia: a record cut off at the end is never parsed",
      loose("f7.fxt", FXH + fx.event(5, "a") + fx.event(6, "b")[:-3]), stats={}, tt=6, kept={"a": [5], "b": []})
check("fuchsia: a zero rate: every timestamp overflows",
      loose("f9.fxt", FXH + fx.init(0) + fx.event(5, "a") + fx.switch(5, 1, 2)),
      stats={"fuchsia_timestamp_overflow": 2}, tt=6, kept={"a": []})
check("fuchsia: a kernel thread whose process is not a koid",
      loose("f10.fxt", FXH + fx._rec(7, struct.pack("<Q", 5) + struct.pack("<Q", 0x8007 << 16 | 1 | (2 << 4))
                                     + b"process\0", (2 << 16) | (1 << 40)) + fx.event(5, "a")),
      stats={"fuchsia_invalid_event_arg_type": 1}, tt=6, kept={"a": [5]})
check("fuchsia: an argument's name missing from the string table",
      loose("f12.fxt", FXH + fx.event(5, "a", n_args=1, args=struct.pack("<Q", 1 | (1 << 4) | (9 << 16)))
            + fx.event(6, "b", n_args=1, args=struct.pack("<Q", 1 | (2 << 4) | (0x8003 << 16)) + b"abc\0\0\0\0\0")),
      stats={"fuchsia_invalid_string_ref": 1}, tt=6, kept={"a": [], "b": [6]})
fxt = FXH + fx.event(10**9, "a") + fx.event(2 * 10**9, "b") + fx.event(3 * 10**9, "c")
pb_fboot = proto([{"k": "snap", "ts": 10**9, "clocks": [(6, 10**9), (1, 5 * 10**9)]},
                  {"k": "te", "ts": 10**9, "seq": 1, "type": 3, "name": "pa"}])
pb_mono = proto([{"k": "snap", "ts": 10**9, "clocks": [(3, 10**9), (1, 5 * 10**9)], "primary": 3},
                 {"k": "te", "ts": 10**9, "seq": 1, "type": 3, "name": "pa", "clock": 3}])
check("fuchsia: beside a BOOTTIME proto, on its clock", tar("ft1.tar", [("f.fxt", fxt), ("trace.pb", pb_fboot)]),
      stats={}, tt=6, kept={"a": [10**9], "b": [2 * 10**9], "c": [3 * 10**9]})
check("fuchsia: beside a proto on MONOTONIC only, unrelatable",
      tar("ft2.tar", [("f.fxt", fxt), ("trace.pb", pb_mono)]),
      stats={"clock_sync_unrelatable_clock_domains": 2, "clock_sync_failure_unknown_source_clock": 3}, tt=3,
      kept={"a": []})
fxm = relate("f.fxt", "BOOTTIME", "trace.pb", "BOOTTIME", -1500000000)
fxm["machine"] = {"name": "m2"}
# (trace_processor's parser puts the slices at their raw ticks: 2e9 and 3e9; the events list shows
# the converted times)
check("fuchsia: on its own machine related -1.5 s to the proto's BOOTTIME: one dropped",
      tar("ft3.tar", [("m.json", man([{"path": "trace.pb"}, fxm])), ("f.fxt", fxt), ("trace.pb", pb_fboot)]),
      stats={"trace_sorter_negative_timestamp_dropped": 1}, tt=6, kept={"a": []})
fxm = relate("f.fxt", "BOOTTIME", "trace.pb", "REALTIME", -1500000000 - 4 * 10**9)
fxm["machine"] = {"name": "m2"}
check("fuchsia: related to the proto's REALTIME, all three before zero",
      tar("ft4.tar", [("m.json", man([{"path": "trace.pb"}, fxm])), ("f.fxt", fxt), ("trace.pb", pb_fboot)]),
      stats={"trace_sorter_negative_timestamp_dropped": 3}, tt=6)
check("fuchsia: a PIN leaves it on BOOTTIME",
      tar("ft5.tar", [("m.json", man([{"path": "trace.pb"}, {"path": "f.fxt", "clocks": {
          "sync_to": {"file": "trace.pb"}, "offset_ns": -1500000000}}])), ("f.fxt", fxt), ("trace.pb", pb_fboot)]),
      stats={}, tt=6, kept={"a": [10**9], "b": [2 * 10**9], "c": [3 * 10**9]})
check("fuchsia: first by name, it claims BOOTTIME before a JSON",
      tar("ft6.tar", [("a.fxt", fxt), ("b.json", js)]), stats={}, tt=6, kept={"a": [10**9], "x": [5000]})
p = subprocess.run([tm, "check", "--json", loose("f11.fxt", FXH + fx.event(5, "a") + fx.blob(pb_fboot))],
                   capture_output=True)
fs = [f for f in json.loads(p.stdout).get("files", []) if f.get("format") == "fuchsia"]
print(("PASS: " if fs and not fs[0].get("predicted") else "FAIL: ")
      + "fuchsia: a Perfetto blob: not predicted, and says why" + ("" if fs and not fs[0].get("predicted") else ": %r" % fs))
# ------------------------------------------------------------ primes
def pdur(sec, ns): return pfv(1, sec) + pfv(2, ns & 0xffffffffffffffff)
def pedge(i, off=None):
    b = pfv(1, i)
    if off is not None:
        b += pfl(2, pdur(*off))
    return pfl(7, b)
PRIMES = (b"\x09" + struct.pack("<Q", 42) + pfl(4, pdur(100, 5)) + pedge(1, (0, 1000)) + pedge(2)
          + pedge(3, (1, -500)))
check("primes: edges at start + offset, one without an offset counted",
      loose("pr1.pb", PRIMES), stats={"primes_malformed_timestamp": 1}, tt=11,
      kept={"edge": [100000001005, 100999999505]})
check("primes: no start_time fails the import", loose("pr2.pb", b"\x09" + struct.pack("<Q", 42) + pedge(1, (0, 1))),
      error="Trace parse failure: Primes Trace proto did not contain a start time. (ERR:tp-parse)")
def pfv_s(n, x): return pfv(n, x & 0xFFFFFFFFFFFFFFFF)
PRH = b"\x09" + struct.pack("<Q", 42)
PST = pfl(4, pfv(1, 1) + pfv(2, 0))
def pneg(extra=b""): return pfl(7, pfv(1, 1) + extra + pfl(2, pfv_s(1, -2) + pfv(2, 0)))
check("primes: a field of id 0 ends protozero's walk: no start_time after it",
      loose("pr4.pb", PRH + b"\x00\x00" + PST + pneg()),
      error="Trace parse failure: Primes Trace proto did not contain a start time. (ERR:tp-parse)")
check("primes: ... nor edges after it", loose("pr5.pb", PRH + PST + b"\x00\x00" + pneg()), stats={}, tt=11)
check("primes: ... nor an edge's offset after it", loose("pr6.pb", PRH + PST + pneg(b"\x00\x00")),
      stats={"primes_malformed_timestamp": 1}, tt=11)
check("primes: the edge before zero without it", loose("pr7.pb", PRH + PST + pneg()),
      stats={"trace_sorter_negative_timestamp_dropped": 1}, tt=11)
check("primes: a PIN moves it (one edge before zero)",
      tar("pr3.tar", [("m.json", man([{"path": "a.json"}, {"path": "p.pb", "clocks": {"sync_to": {"file": "a.json"},
                                                                                          "offset_ns": -100000001006}}])),
                      ("p.pb", PRIMES), ("a.json", js)]),
      stats={"primes_malformed_timestamp": 1, "trace_sorter_negative_timestamp_dropped": 1}, tt=11)
PY

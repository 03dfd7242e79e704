#!/usr/bin/env bash
# Runs that were checked against trace_processor
# v58.2 and need only text formats: each builds the archive with Python's
# tarfile (as upstream's harness does), runs `tracemerge check --json
# --events` and compares with what trace_processor printed.
set -u
TM=${TM_BIN:-build/asan/tracemerge}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
python3 - "$TM" "$t" <<'PY'
import io, json, os, subprocess, sys, tarfile

tm, tmp = sys.argv[1], sys.argv[2]

def tar(name, members):
    path = os.path.join(tmp, name)
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tf:
        for n, data in members:
            b = data.encode() if isinstance(data, str) else data
            ti = tarfile.TarInfo(n)
            ti.size, ti.mode, ti.mtime = len(b), 0o644, 0
            tf.addfile(ti, io.BytesIO(b))
    return path

def check(path):
    p = subprocess.run([tm, "check", "--json", "--events", path], capture_output=True)
    return json.loads(p.stdout)

def man(files, trace_time=None):
    m = {"version": 1, "files": files}
    if trace_time:
        m["trace_time"] = trace_time
    return json.dumps({"perfetto_manifest": m})

def js(*events):
    return json.dumps({"traceEvents": list(events)})

def x(name, ts):
    return {"ph": "X", "name": name, "ts": ts, "dur": 1, "pid": 1, "tid": 1}

def meta(name):
    return {"ph": "M", "name": name, "pid": 1, "tid": 1, "args": {"name": "p"}}

def slices(r):
    return {e["name"]: e["ts"] for e in r.get("events", []) if e["slice"] and not e["dropped"]}

def result(name, ok, why=""):
    print(("PASS: " if ok else "FAIL: ") + name + ("" if ok else ": " + why))

# run 1: render baseline, gpu PIN'd +500000 ns: gpu sorts first and owns the
# timeline, render moves 500 us earlier, 3 dropped (two M without ts, one X)
render = js(meta("process_name"), meta("thread_name"), x("r100", 100), x("r500", 500), x("r2000", 2000))
gpu = js(x("g50", 50), x("g3000", 3000))
pin = [{"path": "render_process.json"},
       {"path": "gpu_process.json", "clocks": {"sync_to": {"file": "render_process.json"}, "offset_ns": 500000}}]
r = check(tar("run1.tar", [("perfetto_manifest.json", man(pin)), ("render_process.json", render), ("gpu_process.json", gpu)]))
order = sorted((f["order"], f["path"]) for f in r["files"] if f["order"] is not None)
s = slices(r)
result("run 1: positive offset drops 3 when the baseline sorts second",
       r["dropped"] == 3 and r["stats"].get("trace_sorter_negative_timestamp_dropped") == 3
       and [p for _, p in order][1:] == ["perfetto_manifest.json", "gpu_process.json", "render_process.json"]
       and s.get("g50") == 50000 and s.get("r500") == 0 and s.get("r2000") == 1500000,
       json.dumps({"dropped": r["dropped"], "order": order, "slices": s}))

# run 2: the same with the baseline named a_render.json: nothing dropped, gpu +500 us
pin2 = [{"path": "a_render.json"},
        {"path": "gpu_process.json", "clocks": {"sync_to": {"file": "a_render.json"}, "offset_ns": 500000}}]
r = check(tar("run2.tar", [("perfetto_manifest.json", man(pin2)), ("a_render.json", render), ("gpu_process.json", gpu)]))
s = slices(r)
result("run 2: the same offset drops nothing when the baseline sorts first",
       r["dropped"] == 0 and s.get("g50") == 550000 and s.get("g3000") == 3500000, json.dumps(s))

# run 3: b PIN'd to a with -500000, b's only event at 200 us: 1 dropped
r = check(tar("run3.tar", [("m.json", man([{"path": "a.json"}, {"path": "b.json", "clocks": {"sync_to": {"file": "a.json"}, "offset_ns": -500000}}])),
                           ("a.json", js(x("a1", 10))), ("b.json", js(x("b1", 200)))]))
result("run 3: a negative offset drops the events it moves below zero",
       r["dropped"] == 1 and "b1" not in slices(r), json.dumps({"dropped": r["dropped"]}))

# run 4: a, b PIN'd +1 s to c, c: a and b stay, c lands at 1 s and -0.5 s
ev = lambda n: js(x(n + "_early", 500000), x(n + "_late", 2000000))
r = check(tar("run4.tar", [("m.json", man([{"path": "a.json"}, {"path": "b.json", "clocks": {"sync_to": {"file": "c.json"}, "offset_ns": 1000000000}}, {"path": "c.json"}])),
                           ("a.json", ev("a")), ("b.json", ev("b")), ("c.json", ev("c"))]))
s = slices(r)
result("run 4: bridge edges accumulate in processing order",
       r["dropped"] == 1 and s.get("a_early") == 500000000 and s.get("b_early") == 500000000
       and s.get("c_late") == 1000000000 and "c_early" not in s, json.dumps({"dropped": r["dropped"], "slices": s}))

# run 41: trace_time BOOTTIME and a 4-line systrace file: 1 counted, all lines lost
sys4 = "# tracer: nop\n" + "".join("  app-1 (    1) [000] ...1  %d.000000: tracing_mark_write: %s|1%s\n" % (i + 1, "B" if i % 2 == 0 else "E", "|s%d" % i if i % 2 == 0 else "") for i in range(4))
r = check(tar("run41.tar", [("m.json", man([], {"clock": "BOOTTIME"})), ("a.systrace", sys4)]))
result("run 41: a declined bridge counts once, its lines fail as unknown source",
       r["dropped"] == 1 and r["stats"].get("clock_sync_unrelatable_clock_domains") == 1
       and r["stats"].get("clock_sync_failure_unknown_source_clock") == 4 and not slices(r),
       json.dumps(r["stats"]))
r = check(tar("run41b.tar", [("m.json", man([], {"clock": "BOOTTIME"})), ("a.systrace", sys4), ("b.systrace", sys4)]))
result("run 41: two such files count 2", r["dropped"] == 2, json.dumps(r["stats"]))

# run 40: systrace PIN'd +1 s to a JSON file keeps its raw timestamps;
# the same entry as RELATE with clock MONOTONIC moves it +1 s
sys2 = "# tracer: nop\n  app-1 (    1) [000] ...1  5.000000: tracing_mark_write: B|1|sys\n  app-1 (    1) [000] ...1  6.000000: tracing_mark_write: E|1\n"
j = js(x("j", 1))
r = check(tar("run40a.tar", [("m.json", man([{"path": "a.json"}, {"path": "s.systrace", "clocks": {"sync_to": {"file": "a.json"}, "offset_ns": 1000000000}}])), ("a.json", j), ("s.systrace", sys2)]))
pinned = slices(r).get("sys")
r = check(tar("run40b.tar", [("m.json", man([{"path": "a.json"}, {"path": "s.systrace", "clocks": {"clock": "MONOTONIC", "sync_to": {"file": "a.json"}, "offset_ns": 1000000000}}])), ("a.json", j), ("s.systrace", sys2)]))
related = slices(r).get("sys")
result("run 40: a pin does not move systrace, a RELATE does",
       pinned is not None and related is not None and related - pinned == 1000000000,
       json.dumps({"pinned": pinned, "related": related}))

# run 5: packing order b, a, B, a: processing order B, a, a, b
r = check(tar("run5.tar", [("b.json", j), ("a.json", j), ("B.json", j), ("a.json", j)]))
order = [f["path"] for f in sorted((f for f in r["files"] if f["order"]), key=lambda f: f["order"])]
result("run 5: name order beats packing order", order == ["B.json", "a.json", "a.json", "b.json"], json.dumps(order))

# run 6: hidden members are never registered; ../y sorts before ./x
r = check(tar("run6.tar", [("._x.json", j), ("__MACOSX/._y.json", j), ("a/.git/b.json", j), ("./x.json", j), ("../y.json", j), (".DS_Store", j)]))
order = [f["path"] for f in sorted((f for f in r["files"] if f["order"]), key=lambda f: f["order"])]
result("run 6: hidden rule and dot paths", order == ["../y.json", "./x.json"], json.dumps(order))

# run 20: README.txt sorts before b.json and fails the import unwrapped
r = check(tar("run20.tar", [("README.txt", "hello\n"), ("b.json", j)]))
result("run 20: an unknown member fails the import", r["error"] == "Unknown trace type provided (ERR:fmt)", str(r["error"]))

# run 31: two manifests
r = check(tar("run31.tar", [("m1.json", man([])), ("m2.json", man([])), ("a.json", j)]))
result("run 31: two manifests", r["error"] and "multiple perfetto_manifest files in archive" in r["error"], str(r["error"]))
PY

#!/usr/bin/env python3
"""Differential tester: random multi-file archives through trace_processor
and tracemerge, compared observable by observable; a disagreeing scenario is
shrunk to a minimal one.

    tools/difftest.py [-n N] [--seed S] [--out DIR] [--tp PATH] [--tm PATH] [--jobs J]
    tools/difftest.py --replay DIR/case-*.json     (run saved scenarios again)

Not part of `make test`: it needs trace_processor_shell (v58.2), taken from
--tp, $TRACE_PROCESSOR_SHELL, or ../shared/oracle/trace_processor_shell.

A scenario is a JSON description: a container (TAR or ZIP), members (protos
with clock snapshots, several machines, sequences with incremental state,
ftrace bundles with print events and compact_sched, service events; Chrome
JSON with categories, X events of negative duration and B/E/X at one ts;
systrace text), each maybe gzip'd or inside a nested archive, and a
manifest (none, valid, outdated syntax, broken).  The bytes are built from
the description, so shrinking edits the description: members, packets,
events and manifest entries are removed one at a time while the scenario
still disagrees on the same observable.

Compared, per scenario: the load error (whether the import fails, and its
message), the dropped total (the sum of the three stats the merge dialog and
`util merge` count), each of those three stats,
ftrace_packet_before_tracing_start and the slice tracker's
slice_negative_duration and misplaced_end_event, the trace-time clock, the machine table
(id, raw id, name) and the surviving slices (ts, dur, name).

Prints one line per disagreement (with the minimal scenario's file) and a
summary: "difftest: N of M scenarios agree" with the figure per observable.
"""
import argparse
import copy
import csv
import gzip
import io
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
THREE = ("clock_sync_unrelatable_clock_domains", "clock_sync_failure_no_path",
         "trace_sorter_negative_timestamp_dropped")
STATS = THREE + ("ftrace_packet_before_tracing_start", "slice_negative_duration", "misplaced_end_event")
OBSERVABLES = ("load_error", "dropped_total") + STATS + ("trace_time_clock", "machines", "slices")

# ---------------------------------------------------------------- protobuf


def vint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b, v = v & 0x7f, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def fv(n, v):
    return vint(n << 3) + vint(v)


def fl(n, data):
    data = data.encode() if isinstance(data, str) else data
    return vint(n << 3 | 2) + vint(len(data)) + data


def enc_packet(pk):
    """One TracePacket from its description (a dict)."""
    f = b""
    k = pk["k"]
    if "ts" in pk:
        f += fv(8, pk["ts"])
    if "clock" in pk:
        f += fv(58, pk["clock"])
    if "seq" in pk:
        f += fv(10, pk["seq"])
    if pk.get("flags"):
        f += fv(13, pk["flags"])
    if pk.get("machine"):
        f += fv(98, pk["machine"])
    if k == "snap":
        body = b"".join(fl(1, fv(1, c) + fv(2, t)) for c, t in pk["clocks"])
        if pk.get("primary"):
            body += fv(2, pk["primary"])
        f += fl(6, body)
    elif k == "te":
        body = fv(9, pk["type"])
        if "iid" in pk:
            body += fv(10, pk["iid"])
        elif pk.get("name") is not None:
            body += fl(23, pk["name"])
        f += fl(11, body)
        if "intern" in pk:  # interned EventName {iid, name}
            f += fl(12, fl(2, fv(1, pk["intern"][0]) + fl(2, pk["intern"][1])))
    elif k == "svc":
        body = b""
        if pk.get("started"):
            body += fv(2, 1)
        if pk.get("flushed"):
            body += fv(3, 1)
        f += fl(69, body)
    elif k == "ftrace":
        body = fv(1, pk["cpu"])
        for ts, text in pk.get("events", []):
            body += fl(2, fv(1, ts) + fv(2, 10) + fl(3, fl(2, text)))
        cs = pk.get("compact")
        if cs:
            deltas, prev = [], 0
            for ts in cs:
                deltas.append(ts - prev)
                prev = ts
            n = len(cs)
            body += fl(4, fl(1, b"".join(vint(d) for d in deltas)) + fl(2, vint(0) * n)
                       + fl(3, vint(1) * n) + fl(4, vint(120) * n) + fl(5, "comm")
                       + fl(6, vint(0) * n))
        if "fclock" in pk:
            body += fv(5, pk["fclock"])
        f += fl(1, body)
    elif k == "remote":
        rounds = b""
        for client, host in pk["rounds"]:
            cl = b"".join(fl(1, fv(1, c) + fv(2, t)) for c, t in client)
            hl = b"".join(fl(1, fv(1, c) + fv(2, t)) for c, t in host)
            rounds += fl(1, fl(2, cl) + fl(3, hl))
        f += fl(107, rounds)
    elif k == "sysinfo":
        body = fl(17, pk["name"]) if pk.get("name") is not None else b""
        if "tz" in pk:  # timezone_off_mins (int32: a negative one as 10 bytes)
            body += fv(7, pk["tz"] & 0xFFFFFFFFFFFFFFFF)
        f += fl(45, body)
    return fl(1, f)


# ---------------------------------------------------------------- members


def build_member(m):
    kind = m["kind"]
    if kind == "proto":
        data = b"".join(enc_packet(p) for p in m["packets"])
    elif kind == "json":
        evs = []
        for e in m["events"]:
            d = {"ph": e["ph"], "name": e["name"], "ts": e["ts"], "pid": 1, "tid": e.get("tid", 1)}
            if "cat" in e:
                d["cat"] = e["cat"]
            if e["ph"] == "X":
                d["dur"] = e["dur"]
            if e["ph"] == "i":
                d["s"] = "t"
            evs.append(d)
        doc = {"traceEvents": evs}
        if m.get("unit"):
            doc["displayTimeUnit"] = m["unit"]
        data = json.dumps(doc).encode()
    elif kind == "systrace":
        lines = ["# tracer: nop\n"]
        for ts, text in m["lines"]:
            lines.append("  app-10 (   10) [000] ...1 %d.%06d: tracing_mark_write: %s\n"
                         % (ts // 1000000, ts % 1000000, text))
        data = "".join(lines).encode()
    elif kind == "manifest":
        data = m["text"].encode()
    elif kind in ("tar", "zip"):
        data = build_archive(kind, m["members"])
    else:
        raise ValueError(kind)
    if m.get("gz"):
        data = gzip.compress(data, mtime=0)
    return data


def build_archive(kind, members):
    bio = io.BytesIO()
    if kind == "tar":
        with tarfile.open(fileobj=bio, mode="w", format=tarfile.USTAR_FORMAT) as tf:
            for m in members:
                b = build_member(m)
                ti = tarfile.TarInfo(m["name"])
                ti.size, ti.mode, ti.mtime = len(b), 0o644, 0
                tf.addfile(ti, io.BytesIO(b))
    else:
        with zipfile.ZipFile(bio, "w", zipfile.ZIP_DEFLATED) as zf:
            for m in members:
                zi = zipfile.ZipInfo(m["name"], (1980, 1, 1, 0, 0, 0))
                zi.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(zi, build_member(m))
    return bio.getvalue()


# ---------------------------------------------------------------- generator

CLOCKS = [1, 3, 6]  # REALTIME, MONOTONIC, BOOTTIME
CLOCK_NAMES = {1: "REALTIME", 3: "MONOTONIC", 4: "MONOTONIC_COARSE", 5: "MONOTONIC_RAW", 6: "BOOTTIME"}


def gen_proto(rnd, name):
    """Packets of one proto: machines 0 and maybe 7/8, sequences, snapshots,
    track events (instants, B/E), incremental state, ftrace, service events."""
    machines = [0] + ([7] if rnd.random() < 0.3 else []) + ([8] if rnd.random() < 0.1 else [])
    pk = []
    base = rnd.choice([0, 1000, 10 ** 6, 10 ** 9, 5 * 10 ** 9])
    offs = {c: rnd.choice([0, 0, 500, -500, 10 ** 6, 3 * 10 ** 9]) for c in CLOCKS}
    seqn = 1
    for mach in machines:
        mbase = base + (rnd.choice([0, 7000, -3000]) if mach else 0)
        seqs = [seqn + i for i in range(rnd.choice([1, 1, 2]))]
        seqn += len(seqs)
        t = mbase
        nsnap = rnd.choice([0, 1, 1, 1, 2])
        snaps_at = sorted(rnd.randrange(0, 40) for _ in range(nsnap))
        steps = rnd.randrange(4, 25)
        incr_ok = {}
        for step in range(steps):
            t += rnd.choice([10, 100, 1000, 50000])
            seq = rnd.choice(seqs)
            if snaps_at and step >= snaps_at[0]:
                snaps_at.pop(0)
                cl = rnd.sample(CLOCKS, rnd.choice([2, 2, 3]))
                if 6 not in cl and rnd.random() < 0.7:
                    cl[0] = 6
                p = {"k": "snap", "seq": seq, "clocks": [[c, max(0, t + offs[c])] for c in cl]}
                if rnd.random() < 0.2:
                    p["primary"] = rnd.choice(cl)
                if mach:
                    p["machine"] = mach
                pk.append(p)
                continue
            r = rnd.random()
            p = {"seq": seq}
            if mach:
                p["machine"] = mach
            if r < 0.45:
                p.update(k="te", ts=t, type=rnd.choice([1, 2, 3, 3]), name="%s_%s%d_%d" % (name[:3], "m", mach, step))
                if rnd.random() < 0.15:
                    p["clock"] = rnd.choice([1, 3, 6, 64])
                if rnd.random() < 0.15:  # interned name, incremental state
                    if seq not in incr_ok or rnd.random() < 0.3:
                        p["flags"] = 1 | 2
                        incr_ok[seq] = True
                    else:
                        p["flags"] = 2
                    p["intern"] = [step + 1, p["name"]]
                    p["iid"] = step + 1
                elif rnd.random() < 0.05:
                    p["flags"] = 2  # needs incremental state, never cleared
            elif r < 0.6:
                evs = []
                for i in range(rnd.randrange(0, 4)):
                    evs.append([t + i * 10, rnd.choice(["B|10|ft%d_%d" % (mach, step), "E|10", "I|10|fi%d" % step, "bogus"])])
                p.update(k="ftrace", cpu=rnd.randrange(0, 3), events=evs)
                if rnd.random() < 0.4:
                    n = rnd.randrange(1, 40)
                    p["compact"] = [t + i * 7 for i in range(n)]
                if rnd.random() < 0.5:
                    p["ts"] = t
            elif r < 0.7:
                p.update(k="svc", ts=t + rnd.choice([0, 0, 1500, -1500, 3 * 10 ** 4]), started=rnd.random() < 0.8)
                if rnd.random() < 0.1:
                    p["clock"] = rnd.choice([1, 3])
            elif r < 0.75 and mach:
                c1 = t + rnd.randrange(0, 1000)
                p.update(k="remote", rounds=[[[[6, c1]], [[6, c1 + 5000]]], [[[6, c1 + 100]], [[6, c1 + 5100]]]])
            elif r < 0.78:
                p.update(k="sysinfo", name=rnd.choice(["phone", "vm", "host"]))
            else:
                p.update(k="te", ts=t, type=3, name="%s_t%d_%d" % (name[:3], mach, step))
            pk.append(p)
    rnd.shuffle(pk) if rnd.random() < 0.1 else None
    return {"kind": "proto", "name": name, "packets": pk}, machines


def gen_json(rnd, name):
    """Slices of one thread: X (a negative dur now and then), B/E pairs, instants;
    often several at one ts (the sorter's ties), and categories, which an E
    matches against its B."""
    evs = []
    t = rnd.choice([0, 5, 1000, 10 ** 6])
    cats = rnd.random() < 0.5
    ties = rnd.random() < 0.5
    for i in range(rnd.randrange(1, 12)):
        t += rnd.choice([0, 0, 1, 10]) if ties else rnd.choice([1, 10, 1000])
        ph = rnd.choice(["X", "X", "B", "E", "i"])
        e = {"ph": ph, "name": "%s_j%d" % (name[:3], i), "ts": t,
             "dur": rnd.choice([1, 5, 100, 0, -5]) if ties else rnd.choice([1, 5, 100])}
        if cats and rnd.random() < 0.7:
            e["cat"] = rnd.choice(["c1", "c2"])
        evs.append(e)
    m = {"kind": "json", "name": name, "events": evs}
    if rnd.random() < 0.1:
        m["unit"] = rnd.choice(["ns", "ms"])
    return m


def gen_systrace(rnd, name):
    lines = []
    t = rnd.choice([1, 5000, 10 ** 6]) * 1000
    for i in range(rnd.randrange(1, 10)):
        t += rnd.choice([1000, 5000])
        lines.append([t, rnd.choice(["B|10|%s_s%d" % (name[:3], i), "E|10", "C|10|ctr|%d" % i])])
    return {"kind": "systrace", "name": name, "lines": lines}


def gen_manifest(rnd, traces):
    """traces: [(name, kind, machines)] of top-level plain members."""
    style = rnd.choices(["valid", "outdated", "broken"], [0.75, 0.1, 0.15])[0]
    files = []
    names = ["phone", "vm", "host"]
    for name, kind, machines in traces:
        if rnd.random() < 0.3:
            continue
        e = {"path": name}
        r = rnd.random()
        if kind == "proto" and len(machines) > 1 and r < 0.5:
            e["machines"] = [{"id": mid, "name": rnd.choice(names)} for mid in machines]
        elif r < 0.35:
            e["machine"] = {"name": rnd.choice(names)}
        if rnd.random() < 0.3 and traces:
            ref = rnd.choice(traces)[0]
            cl = {"sync_to": {"file": ref}, "offset_ns": rnd.choice([0, 1000, -1000, 10 ** 9])}
            if rnd.random() < 0.5:
                cl["clock"] = rnd.choice(["BOOTTIME", "MONOTONIC", "REALTIME"])
            e["clocks"] = cl
        files.append(e)
    man = {"version": 1, "files": files}
    if rnd.random() < 0.3:
        tt = {"clock": rnd.choice(["BOOTTIME", "MONOTONIC", "REALTIME", "MONOTONIC_RAW"])}
        if rnd.random() < 0.3 and files:
            tt["file"] = rnd.choice(files)["path"]
        man["trace_time"] = tt
    if style == "outdated" and files:  # the syntax the docs had before (manifest_hints.c)
        e = rnd.choice(files)
        how = rnd.choice(["clocks", "machines", "trace_time"])
        if how == "clocks":
            e["clocks"] = {rnd.choice(["BOOTTIME", "MONOTONIC"]): {"trace_time_offset_ns": rnd.choice([0, 1000, -5])}}
        elif how == "machines":
            e.pop("machine", None)
            e["machines"] = {"0": {"name": "phone"}, "7": {"name": "vm"}}
        else:
            e["machine"] = {"name": "phone"}
            man["trace_time"] = {"clock": "BOOTTIME", "machine": "phone"}
    text = json.dumps({"perfetto_manifest": man})
    if style == "broken":
        text = rnd.choice([text[: len(text) // 2], text.replace('"version": 1', '"version": "x"'),
                           text.replace('"files"', '"filez"'), json.dumps({"perfetto_manifest": {"files": 3}})])
    return {"kind": "manifest", "name": rnd.choice(["perfetto_manifest.json", "m.json"]), "text": text}


def generate(seed):
    rnd = random.Random(seed)
    members, traces = [], []
    for i in range(rnd.choice([1, 2, 2, 3, 3, 4])):
        kind = rnd.choices(["proto", "json", "systrace"], [0.6, 0.25, 0.15])[0]
        name = "%s%d.%s" % ("abcdef"[i], i, {"proto": "pb", "json": "json", "systrace": "txt"}[kind])
        if kind == "proto":
            m, machines = gen_proto(rnd, name)
        elif kind == "json":
            m, machines = gen_json(rnd, name), [0]
        else:
            m, machines = gen_systrace(rnd, name), [0]
        if rnd.random() < 0.1:
            m["gz"] = True
            m["name"] += ".gz"
        traces.append((m["name"], kind, machines))
        members.append(m)
    if len(members) > 1 and rnd.random() < 0.1:  # nest the last one
        inner = members.pop()
        nk = rnd.choice(["tar", "zip"])
        members.append({"kind": nk, "name": "inner.%s" % nk, "members": [inner], "gz": False})
    if rnd.random() < 0.5:
        members.insert(0, gen_manifest(rnd, [t for t in traces if not t[0].endswith(".gz")]))
    return {"seed": seed, "container": rnd.choice(["tar", "tar", "zip"]), "members": members}


# ---------------------------------------------------------------- running

QUERY = """select 'S', name, value from stats where value > 0 and idx is null;
select 'M', id, raw_id, name from machine order by id;
select 'T', ts, dur, name from slice order by ts, dur, name;
select 'C', int_value from metadata where name = 'trace_time_clock_id';
"""


def run_tp(tp, path, qpath):
    p = subprocess.run([tp, "-q", qpath, path], capture_output=True, timeout=300)
    err = p.stderr.decode("utf-8", "replace")
    out = p.stdout.decode("utf-8", "replace")
    o = {"load_error": None, "stats": {}, "machines": [], "slices": [], "clock": None}
    if p.returncode != 0:
        msg = None
        for line in err.splitlines():
            if "Trace parse failure" in line or "(ERR:" in line:
                msg = line[line.find("Trace parse failure"):] if "Trace parse failure" in line else line
                break
        o["load_error"] = msg or "failed (rc=%d)" % p.returncode
        return o
    for row in csv.reader(io.StringIO(out)):
        if not row:
            continue
        tag = row[0]
        if tag == "S":
            o["stats"][row[1]] = o["stats"].get(row[1], 0) + int(row[2])  # a row per context
        elif tag == "M":
            o["machines"].append((int(row[1]), None if row[2] == "[NULL]" else int(row[2]),
                                  None if row[3] == "[NULL]" else row[3]))
        elif tag == "T":
            o["slices"].append((int(row[1]), int(row[2]), None if row[3] == "[NULL]" else row[3]))
        elif tag == "C":
            o["clock"] = None if row[1] == "[NULL]" else int(row[1])
    return o


def run_tm(tm, path):
    p = subprocess.run([tm, "check", "--no-cache", "--json", "--events", path], capture_output=True,
                       timeout=300)
    try:
        r = json.loads(p.stdout)
    except ValueError:
        return {"load_error": "tracemerge printed no report (rc=%d): %s"
                % (p.returncode, p.stderr.decode("utf-8", "replace")[-200:]),
                "stats": {}, "machines": [], "slices": [], "clock": None, "dropped": None}
    o = {"load_error": r["error"], "stats": {k: v for k, v in r["stats"].items() if v},
         "machines": [(m["id"], m["raw_id"], m["name"]) for m in r["machines"]],
         "slices": sorted((e["ts"], e["dur"], e["name"]) for e in r.get("events", [])
                          if e["slice"] and not e["dropped"]),
         "clock": (r.get("metadata") or {}).get("trace_time_clock_id"), "dropped": r["dropped"]}
    return o


def norm_err(e):
    if e is None:
        return None
    e = e.strip()
    if e.startswith("failed to read trace file (path: "):  # the shell's own wrapping
        e = e[e.find("): ") + 3:]
    for pre in ("Trace parse failure: ",):
        if e.startswith(pre):
            e = e[len(pre):]
    if e.endswith(" (ERR:tp-parse)"):
        e = e[: -len(" (ERR:tp-parse)")]
    return e


def compare(t, m):
    """The observables that differ (a list of names)."""
    bad = []
    if (t["load_error"] is None) != (m["load_error"] is None) or \
            norm_err(t["load_error"]) != norm_err(m["load_error"]):
        return ["load_error"]
    if t["load_error"] is not None:
        return []
    tsum = sum(t["stats"].get(s, 0) for s in THREE)
    if tsum != m["dropped"]:
        bad.append("dropped_total")
    for s in STATS:
        if t["stats"].get(s, 0) != m["stats"].get(s, 0):
            bad.append(s)
    if t["clock"] != m["clock"]:
        bad.append("trace_time_clock")
    if t["machines"] != m["machines"]:
        bad.append("machines")
    if sorted(t["slices"]) != sorted(m["slices"]):
        bad.append("slices")
    return bad


class Runner:
    def __init__(self, tp, tm, tmp):
        self.tp, self.tm, self.tmp = tp, tm, tmp
        self.q = os.path.join(tmp, "q.sql")
        with open(self.q, "w") as f:
            f.write(QUERY)
        self.k = 0

    def run(self, sc):
        self.k += 1
        ext = sc["container"]
        path = os.path.join(self.tmp, "s%d.%s" % (self.k % 4, ext))
        with open(path, "wb") as f:
            f.write(build_archive(ext, sc["members"]))
        t = run_tp(self.tp, path, self.q)
        m = run_tm(self.tm, path)
        return compare(t, m), t, m


# ---------------------------------------------------------------- shrinking


def candidates(sc):
    """Smaller scenarios, largest cuts first."""
    def members_of(lst, path):
        for i, m in enumerate(lst):
            yield path + [i], m
            if m["kind"] in ("tar", "zip"):
                yield from members_of(m["members"], path + [i, "members"])

    def get(sc, path):
        o = sc["members"]
        for k in path:
            o = o[k]
        return o

    for path, m in list(members_of(sc["members"], [])):
        c = copy.deepcopy(sc)
        parent = c["members"]
        for k in path[:-1]:
            parent = parent[k]
        del parent[path[-1]]
        yield c
    for path, m in list(members_of(sc["members"], [])):
        for key in ("packets", "events", "lines"):
            if key not in m:
                continue
            n = len(m[key])
            chunk = n // 2
            while chunk >= 1:
                for s in range(0, n, chunk):
                    c = copy.deepcopy(sc)
                    cm = get(c, path)
                    del cm[key][s:s + chunk]
                    yield c
                chunk //= 2
        if m.get("gz"):
            c = copy.deepcopy(sc)
            get(c, path)["gz"] = False
            yield c
        if m["kind"] == "proto":
            for i, p in enumerate(m["packets"]):
                for key in ("compact", "events"):
                    if p.get(key) and len(p[key]) > 1:
                        c = copy.deepcopy(sc)
                        get(c, path)["packets"][i][key] = p[key][:1]
                        yield c
        if m["kind"] == "manifest":
            try:
                doc = json.loads(m["text"])
                files = doc["perfetto_manifest"]["files"]
            except (ValueError, KeyError, TypeError):
                continue
            for i in range(len(files) if isinstance(files, list) else 0):
                d = copy.deepcopy(doc)
                del d["perfetto_manifest"]["files"][i]
                c = copy.deepcopy(sc)
                get(c, path)["text"] = json.dumps(d)
                yield c
            if "trace_time" in doc["perfetto_manifest"]:
                d = copy.deepcopy(doc)
                del d["perfetto_manifest"]["trace_time"]
                c = copy.deepcopy(sc)
                get(c, path)["text"] = json.dumps(d)
                yield c


def shrink(runner, sc, what, budget=400):
    """Greedy: keep any smaller scenario that still disagrees on `what`."""
    cur = sc
    improved = True
    while improved and budget > 0:
        improved = False
        for c in candidates(cur):
            budget -= 1
            if budget <= 0:
                break
            bad, _, _ = runner.run(c)
            if what in bad:
                cur = c
                improved = True
                break
    return cur


# ---------------------------------------------------------------- main


def default_tp():
    """../shared/oracle beside the repository (or beside a lane's clone)."""
    for up in ("..", os.path.join("..", "..")):
        p = os.path.join(TOP, up, "shared", "oracle", "trace_processor_shell")
        if os.access(p, os.X_OK):
            return os.path.normpath(p)
    return "trace_processor_shell"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=100, help="scenarios (default 100)")
    ap.add_argument("--seed", type=int, default=1, help="first seed (scenario i has seed S+i)")
    ap.add_argument("--out", default=None, help="where minimal disagreements are saved")
    ap.add_argument("--tp", default=os.environ.get("TRACE_PROCESSOR_SHELL", default_tp()))
    ap.add_argument("--tm", default=os.path.join(TOP, "build", "tracemerge"))
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--replay", nargs="*", help="saved scenarios to run again")
    ap.add_argument("-v", action="store_true", help="print both sides of a disagreement")
    a = ap.parse_args()
    if not os.access(a.tp, os.X_OK):
        sys.exit("difftest: no trace_processor_shell at %s (--tp or $TRACE_PROCESSOR_SHELL)" % a.tp)
    tmp = tempfile.mkdtemp(prefix="difftest.")
    runner = Runner(a.tp, a.tm, tmp)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    if a.replay is not None:
        scs = [json.load(open(f)) for f in a.replay]
    else:
        scs = (generate(a.seed + i) for i in range(a.n))
    total = agree = 0
    per = {o: [0, 0] for o in OBSERVABLES}  # agree, compared
    for sc in scs:
        total += 1
        try:
            bad, t, m = runner.run(sc)
        except subprocess.TimeoutExpired:
            print("seed %s: timed out" % sc.get("seed"))
            continue
        loaded = t["load_error"] is None and m["load_error"] is None
        for o in OBSERVABLES:
            if o == "load_error" or loaded:
                per[o][1] += 1
                per[o][0] += o not in bad
        if not bad:
            agree += 1
            continue
        small = sc if a.no_shrink or a.replay is not None else shrink(runner, sc, bad[0])
        _, t2, m2 = runner.run(small)
        where = ""
        if a.out:
            where = os.path.join(a.out, "case-%s-%s.json" % (sc.get("seed"), bad[0]))
            with open(where, "w") as f:
                json.dump(small, f, indent=1)
            with open(where[:-5] + "." + small["container"], "wb") as f:
                f.write(build_archive(small["container"], small["members"]))
        print("seed %s: differs on %s%s" % (sc.get("seed"), ", ".join(bad), " -> " + where if where else ""))
        if a.v:
            print("  trace_processor:", json.dumps(t2, default=str)[:2000])
            print("  tracemerge:     ", json.dumps(m2, default=str)[:2000])
        sys.stdout.flush()
    parts = ", ".join("%s %d/%d" % (o, v[0], v[1]) for o, v in per.items())
    print("difftest: %d of %d scenarios agree (%s)" % (agree, total, parts))
    subprocess.run(["rm", "-rf", tmp])
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the seed corpora of the fuzz targets into OUT/<target>/.

Seeds: the conformance inputs (tests/conformance/cases/*/input.*), their
members (extracted from the ZIPs and TARs), the regression inputs of
tests/fuzz/regress/, and a few small generated files (gzip, tar.gz, nested,
truncated).  Scanner targets get the framing their harness expects (split
header bytes in front of the member).  Usage: seed.py TOP OUT
"""
import glob, gzip, hashlib, io, json, os, sys, tarfile, zipfile

top, out = sys.argv[1], sys.argv[2]
targets = ["fuzz_manifest", "fuzz_scan_proto", "fuzz_scan_json", "fuzz_scan_systrace",
           "fuzz_input", "fuzz_escape", "fuzz_scan_fuchsia"]
for t in targets:
    os.makedirs(os.path.join(out, t), exist_ok=True)

def put(t, data):
    h = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(out, t, h), "wb") as f:
        f.write(data)

def kind(name, data):
    n = name.lower()
    if n.endswith(".json") and b'"perfetto_manifest"' in data[:4096]:
        return "manifest"
    if n.endswith(".json"):
        return "json"
    if n.endswith((".systrace", ".txt", ".ctrace")):
        return "systrace"
    if n.endswith((".pb", ".pftrace", ".perfetto-trace")):
        return "proto"
    return None

def member(name, data):
    k = kind(name, data)
    if k == "manifest":
        put("fuzz_manifest", data)
        put("fuzz_escape", data[:256])
    elif k == "json":
        put("fuzz_scan_json", b"\x00\x00" + data)
        put("fuzz_scan_json", b"\x06\x80" + data)
    elif k == "systrace":
        put("fuzz_scan_systrace", b"\x00\x00" + data)
        put("fuzz_scan_systrace", b"\x0f\x80" + data)
    elif k == "proto":
        put("fuzz_scan_proto", b"\x00" + data)
        put("fuzz_scan_proto", b"\x0b\x10\x03\x07" + data)
    put("fuzz_escape", name.encode())

traces = []
for f in sorted(glob.glob(os.path.join(top, "tests/conformance/cases/*/input.*"))):
    data = open(f, "rb").read()
    put("fuzz_input", data)
    if f.endswith(".zip"):
        z = zipfile.ZipFile(f)
        for i in z.infolist():
            b = z.read(i)
            member(i.filename, b)
            traces.append((i.filename, b))
            if i.filename.endswith(".gz"):
                member(i.filename[:-3], gzip.decompress(b))
    elif f.endswith(".tar"):
        t = tarfile.open(f)
        for i in t.getmembers():
            if i.isfile():
                b = t.extractfile(i).read()
                member(i.name, b)
                traces.append((i.name, b))
    else:
        member(os.path.basename(f), data)
        traces.append((os.path.basename(f), data))

for f in sorted(glob.glob(os.path.join(top, "tests/fuzz/regress/*"))):
    base = os.path.basename(f)
    for t in targets:
        if base.startswith(t + "-") or base.startswith("open-" + t + "-"):
            put(t, open(f, "rb").read())

# Fuchsia records (tools/fxt_gen.py): every record kind the scanner reads.
sys.path.insert(0, os.path.join(top, "tools"))
import fxt_gen as fx
fxt = (fx.MAGIC + fx.init(1000) + fx.string(1, "nm") + fx.thread(1, 5, 6) + fx.event(5, 1, thread=1)
       + fx.complete(7, 9, "c") + fx.event(8, "a", n_args=1,
                                          args=fx.struct.pack("<Q", 6 | (2 << 4) | (0x8003 << 16) | (0x8002 << 32))
                                          + b"abc\0\0\0\0\0" + b"xy\0\0\0\0\0\0")
       + fx.provider_info(3, "p") + fx.provider_section(0) + fx.switch(9, 1, 2) + fx.wakeup(10, 3)
       + fx.legacy_switch(11) + fx.kernel_process(4, "proc") + fx.blob(b"\x0a\x00")
       + fx.provider_section(9) + fx.event(12, "z"))
for h in (b"\x00\x00", b"\x07\x80", b"\x00\x80"):
    put("fuzz_scan_fuchsia", h + fxt)
    put("fuzz_scan_fuchsia", h + fxt[:len(fxt) // 2 + 3])

# Small generated inputs for fuzz_input: containers around the smallest traces.
small = sorted(traces, key=lambda nb: len(nb[1]))[:6]
for name, b in small:
    put("fuzz_input", b)
    put("fuzz_input", gzip.compress(b, mtime=0))
    put("fuzz_input", b[: len(b) // 2])
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w:gz", format=tarfile.USTAR_FORMAT) as t:
        ti = tarfile.TarInfo(os.path.basename(name)); ti.size = len(b)
        t.addfile(ti, io.BytesIO(b))
    put("fuzz_input", bio.getvalue())
bio = io.BytesIO()
with zipfile.ZipFile(bio, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("perfetto_manifest.json", json.dumps({"perfetto_manifest": {"version": 1}}))
    for name, b in small[:3]:
        z.writestr(os.path.basename(name), b)
    inner = io.BytesIO()
    with tarfile.open(fileobj=inner, mode="w", format=tarfile.GNU_FORMAT) as t:
        ti = tarfile.TarInfo("n/" + "L" * 120 + ".json"); b = b'{"traceEvents":[]}'; ti.size = len(b)
        t.addfile(ti, io.BytesIO(b))
    z.writestr("inner.tar", inner.getvalue())
put("fuzz_input", bio.getvalue())
put("fuzz_input", b'{"traceEvents":[{"ph":"X","ts":1,"dur":2,"pid":1,"tid":1,"name":"a"}]}')
put("fuzz_input", b"# tracer: nop\n  a-1 [000] .... 1.000000: tracing_mark_write: B|1|x\n")

# Manifests.
for m in [
    {"perfetto_manifest": {"version": 1}},
    {"perfetto_manifest": {"version": 1, "trace_time": {"clock": "BOOTTIME", "file": "a.pb"},
                           "files": [{"path": "a.pb", "machine": {"name": "m1"},
                                      "clocks": {"clock": "MONOTONIC", "sync_to": {"file": "b.pb", "clock": "BOOTTIME"},
                                                 "offset_ns": -5}},
                                     {"path": "b.pb", "machines": [{"id": 0, "name": "x"}, {"id": 7}]}],
                           "attributes": {"k": "v", "n": 3}, "zz": [1, {"q": None}]}, "other": True},
]:
    put("fuzz_manifest", json.dumps(m).encode())
    put("fuzz_manifest", json.dumps(m, indent=2).encode())

for s in [b"plain", "naïve 漢字 🎉".encode(), b"\x1b[31mred\x07\x00", "\u202eevil\u2066".encode(),
          b"\xc2\x9b\xff\xfe\xed\xa0\x80\xf4\x90\x80\x80", "e\u0301\u200d".encode(), b"back\\slash\t\n\r"]:
    put("fuzz_escape", s)

put("fuzz_scan_systrace", b"\x00\x00" + b"TRACE:\n# tracer: nop\n  <idle>-0 (-----) [001] d..1 12.345678: sched_switch: x\n"
    b"  a-12 [000] ...1 1.5: tracing_mark_write: C|12|ctr|5\n")
put("fuzz_scan_json", b"\x00\x00" + b'[{"ph":"B","ts":1.5,"pid":1,"tid":2,"name":"n"},{"ph":"E","ts":3}]')
put("fuzz_scan_json", b"\x00\x00" + b'{"displayTimeUnit":"ns","systemTraceEvents":"  a-1 [000] .... 1.0: tracing_mark_write: B|1|x\\n","traceEvents":[]}')

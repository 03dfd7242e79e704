#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A TAR of one Perfetto trace and one member of each of four other formats
(perf_text, fuchsia, android_logcat, strace), with a manifest relating the
perf script output -1.5 s to the trace's BOOTTIME: the mixed-formats golden
(tests/tui/scripts/mixed-formats.script).  Usage: mixed_gen.py TOOLS OUT.tar"""
import io, json, sys, tarfile
sys.path.insert(0, sys.argv[1])
from difftest import enc_packet
import fxt_gen as fx

pb = b"".join(enc_packet(p) for p in [
    {"k": "snap", "ts": 10**9, "clocks": [(6, 10**9), (1, 1704164645 * 10**9)]},
    {"k": "te", "ts": 10**9, "seq": 1, "type": 3, "name": "boot"},
    {"k": "te", "ts": 4 * 10**9, "seq": 1, "type": 3, "name": "late"}])
perf = "".join("prog 123/456 [001] %d.000000:     250000 cpu-clock:\n"
               "\tffffffff81000000 work+0x10 (/lib/x.so)\n\n" % s for s in (1, 2, 3))
fxt = fx.MAGIC + fx.event(2 * 10**9, "fx_a") + fx.event(3 * 10**9, "fx_b")
log = ("2024-01-02 03:04:04.500  1000  1001 I early: before boot\n"
       "2024-01-02 03:04:06.000  1000  1001 I later: after boot\n")
st = "123 1704164646.000002 read(3, \"\", 1) = 0\n"
man = {"perfetto_manifest": {"version": 1, "files": [
    {"path": "trace.pb"},
    {"path": "perf.txt", "clocks": {"clock": "MONOTONIC", "sync_to": {"file": "trace.pb", "clock": "BOOTTIME"},
                                    "offset_ns": -1500000000}}]}}
with tarfile.open(sys.argv[2], "w", format=tarfile.USTAR_FORMAT) as t:
    for n, d in (("manifest.json", json.dumps(man)), ("trace.pb", pb), ("perf.txt", perf),
                 ("app.fxt", fxt), ("logcat.txt", log), ("app.strace", st)):
        b = d.encode() if isinstance(d, str) else d
        ti = tarfile.TarInfo(n)
        ti.size, ti.mode, ti.mtime = len(b), 0o644, 0
        t.addfile(ti, io.BytesIO(b))

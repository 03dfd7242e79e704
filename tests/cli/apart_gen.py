#!/usr/bin/env python3
"""Two Chrome JSON traces recorded years apart (issue 25): the same
metadata (process and thread names) and a TracingStartedInBrowser marker,
as every Chrome trace has, and no event in common.  Nothing ties them in
time: their ranges do not overlap, and no estimate may come from what every
trace of the producer has.  Usage: apart_gen.py DIR"""
import json
import os
import sys


def trace(path, t0, names):
    ev = [
        {"name": "process_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "Browser"}},
        {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "CrBrowserMain"}},
        {"name": "TracingStartedInBrowser", "ph": "I", "s": "t", "ts": t0, "pid": 1, "tid": 1},
    ]
    for i, n in enumerate(names):
        ev.append({"name": n, "ph": "X", "ts": t0 + 1000 * (i + 1), "dur": 500, "pid": 1, "tid": 1})
    with open(path, "w") as f:
        json.dump({"traceEvents": ev}, f)


d = sys.argv[1]
os.makedirs(d, exist_ok=True)
# microseconds since boot, 885525.65 s apart
trace(os.path.join(d, "old.json"), 12_000_000_000, ["LayoutView", "PaintFrame", "V8.GC"])
trace(os.path.join(d, "new.json"), 897_525_650_000, ["NavigationRequest", "ParseHTML", "CommitLoad"])

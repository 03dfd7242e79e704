#!/usr/bin/env python3
"""run1.py REPS CMD...: run CMD REPS times (stdout/stderr discarded) and print
"WALL CPU RSS RC": the best wall seconds, the best user+sys CPU seconds (of
the child and its threads), the largest peak RSS in MiB and the last exit
status.  CPU time is what a loaded box disturbs least."""
import os
import subprocess
import sys
import time

reps = int(sys.argv[1])
cmd = sys.argv[2:]
wall = cpu = float("inf")
rss = 0.0
rc = 0
for _ in range(reps):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = min(wall, time.monotonic() - t0)
    cpu = min(cpu, ru.ru_utime + ru.ru_stime)
    rss = max(rss, ru.ru_maxrss / 1024.0)
    rc = os.waitstatus_to_exitcode(status)
print("%.3f %.3f %.1f %d" % (wall, cpu, rss, rc))

#!/usr/bin/env python3
"""pair.py REPS 'CMD_A' 'CMD_B': run A and B in turn (A B A B ..., after one
warm-up of each), REPS times each, outputs discarded, and print
"CPU_A CPU_B WALL_A WALL_B PEAK_A RATIO": the median user+sys CPU seconds
and median wall seconds of each, A's largest peak RSS in MiB (each child's
own, from wait4), and the median of the pairwise CPU ratios A/B (pairing
keeps the ratio meaningful when the box's speed drifts)."""
import os
import shlex
import subprocess
import sys
import time


def run(cmd):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, ru = os.wait4(p.pid, 0)
    return ru.ru_utime + ru.ru_stime, time.monotonic() - t0, ru.ru_maxrss / 1024.0


reps = int(sys.argv[1])
a, b = shlex.split(sys.argv[2]), shlex.split(sys.argv[3])
run(a)
run(b)
ra, rb = [], []
for _ in range(reps):
    ra.append(run(a))
    rb.append(run(b))


def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


ratios = [x[0] / y[0] for x, y in zip(ra, rb) if y[0] > 0]
print("%.3f %.3f %.3f %.3f %.1f %.2f" % (
    med([x[0] for x in ra]), med([x[0] for x in rb]), med([x[1] for x in ra]),
    med([x[1] for x in rb]), max(x[2] for x in ra), med(ratios) if ratios else 0.0))

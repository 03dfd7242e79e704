#!/usr/bin/env python3
"""Write a TAR of N proto traces (issue "Many members"): member i is
m<i>.pftrace, about KIB KiB: one ClockSnapshot (BOOTTIME, MONOTONIC) on its
own sequence, then TrackEvent instants on BOOTTIME until the size is reached.
Every member is a separate trace_file on machine 0, so each forks a context,
adds a snapshot and bridges its clocks to the shared trace time.

usage: gen_members.py OUT.tar N [KIB]   (KIB default 16)
"""
import sys
import tarfile
import io


def varint(x):
    b = bytearray()
    while True:
        c = x & 0x7F
        x >>= 7
        if x:
            b.append(c | 0x80)
        else:
            b.append(c)
            return bytes(b)


def field(num, wt, val):
    key = varint(num << 3 | wt)
    if wt == 2:
        return key + varint(len(val)) + val
    return key + varint(val)


def member(i, kib):
    seq = 1
    base = 1_000_000_000 + i * 1000
    clocks = field(1, 2, field(1, 0, 6) + field(2, 0, base))
    clocks += field(1, 2, field(1, 0, 3) + field(2, 0, base - 500))
    out = bytearray(field(1, 2, field(10, 0, seq) + field(6, 2, clocks)))
    ts = base + 10
    while len(out) < kib * 1024:
        te = field(9, 0, 3) + field(23, 2, b"ev")  # type INSTANT, name
        out += field(1, 2, field(8, 0, ts) + field(10, 0, seq) + field(11, 2, te))
        ts += 7
    return bytes(out)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, n = sys.argv[1], int(sys.argv[2])
    kib = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    with tarfile.open(out, "w", format=tarfile.USTAR_FORMAT) as t:
        for i in range(n):
            data = member(i, kib)
            ti = tarfile.TarInfo("m%05d.pftrace" % i)
            ti.size = len(data)
            ti.mtime = 0
            t.addfile(ti, io.BytesIO(data))


if __name__ == "__main__":
    main()

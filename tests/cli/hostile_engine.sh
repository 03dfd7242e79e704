#!/usr/bin/env bash
# Hostile inputs the engine must answer in time proportional to their size,
# completely or with a clear error (the shapes are built here): huge clock snapshots, deep nesting, truncated archives, caps.
set -u
TM=${TM_BIN:-build/asan/tracemerge}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS: $1"; }
no() { echo "FAIL: $1: $2"; }

# Proto writer for the clock shapes: a ClockSnapshot per sequence, then one
# TrackEvent at BOOTTIME 1000 + seq.
gen_clocks() { # out n_seqs n_clocks
	python3 - "$@" <<'PY'
import sys
out, n_seqs, n_clocks = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def v(x):
    b = bytearray()
    while True:
        c = x & 0x7f; x >>= 7
        if x: b.append(c | 0x80)
        else: b.append(c); return bytes(b)
def f(num, wt, payload):
    k = v(num << 3 | wt)
    return k + (v(len(payload)) + payload if wt == 2 else v(payload))
data = bytearray()
for seq in range(1, n_seqs + 1):
    clocks = f(1, 2, f(1, 0, 6) + f(2, 0, 999 + seq))
    for i in range(n_clocks):
        clocks += f(1, 2, f(1, 0, 64 + i) + f(2, 0, seq - 1 + 7 * i))
    data += f(1, 2, f(10, 0, seq) + f(6, 2, clocks))
data += f(1, 2, f(8, 0, 1000) + f(10, 0, 1) + f(11, 2, f(9, 0, 3) + f(23, 2, b"x")))
open(out, "wb").write(data)
PY
}

# One snapshot of 16,001 clocks: trace_processor's edge set has 256 M pairs.
gen_clocks "$t/snap16k.pftrace" 1 16000
o=$("$TM" check --json "$t/snap16k.pftrace" 2>&1); rc=$?
[ $rc = 0 ] && echo "$o" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["ok"] and d["files"][0]["events"] == 1, d' 2>/dev/null \
	&& ok "one snapshot of 16,001 clocks" || no "one snapshot of 16,001 clocks" "rc=$rc $(echo "$o" | head -c 400)"
# 1,000 sequences x 100 clocks (64 sequence-scoped, 36 global custom ones)
gen_clocks "$t/seq1000.pftrace" 1000 100
o=$("$TM" check --json "$t/seq1000.pftrace" 2>&1); rc=$?
[ $rc = 0 ] && echo "$o" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["ok"] and d["files"][0]["events"] == 1, d' 2>/dev/null \
	&& ok "1,000 snapshots of 101 clocks" || no "1,000 snapshots of 101 clocks" "rc=$rc $(echo "$o" | head -c 400)"

# Many tiny members: memory stays a few KB per member (each scan's alignment
# name table started at 64 slots of half a KB: 100,000 members took 4 GB and
# minutes).  Peak RSS of the release build over 20,000 one-event JSON
# members, per member, against a bound with a wide margin (43 KB before).
REL=${TM_BIN_REL:-build/rel/tracemerge}
if [ -x /usr/bin/time ] && [ -x "$REL" ]; then
	python3 - "$t/many.tar" <<'PY'
import io, sys, tarfile
ev = b'{"traceEvents":[{"ph":"i","ts":5,"pid":1,"tid":1,"name":"x","s":"g"}]}'
with tarfile.open(sys.argv[1], "w", format=tarfile.USTAR_FORMAT) as tf:
    for i in range(20000):
        ti = tarfile.TarInfo("m%06d.json" % i)
        ti.size = len(ev)
        tf.addfile(ti, io.BytesIO(ev))
PY
	/usr/bin/time -f '%M' -o "$t/rss" "$REL" check --json "$t/many.tar" >"$t/o" 2>/dev/null; rc=$?
	kb=$(tail -n 1 "$t/rss")
	if [ $rc = 0 ] && [ "$kb" -lt $((20000 * 24)) ]; then ok "20,000 members: bounded memory per member"
	else no "20,000 members: bounded memory per member" "rc=$rc, peak RSS ${kb} KB ($((kb / 20000)) KB per member)"; fi
else
	echo "SKIP: 20,000 members: bounded memory per member: no /usr/bin/time or release build"
fi

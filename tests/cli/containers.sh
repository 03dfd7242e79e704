#!/usr/bin/env bash
# Containers under load: a nested decompression bomb stops at the listing's
# named cap (bounded by the bytes decompressed, not by time), and the
# workbench gives up opening it on SIGTERM / SIGHUP.  Uses the release
# binary where the work is large (TM_BIN_REL); the harness's timeout is the
# outer guard (before the cap, listing this took hours).
set -u
TM=${TM_BIN_REL:-${TM_BIN:-build/rel/tracemerge}}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS: $1"; }
no() { echo "FAIL: $1: $2"; }

# ZIPs of 4 deflated ZIPs, 4 levels over one 16 MiB leaf of zeros: 4 GiB
# behind 4 KB (42.zip's shape, smaller).
(
	cd "$t" && set -e
	Z='bsdtar -c --format zip --options zip:compression=deflate -f'
	head -c 16777216 /dev/zero >z.pftrace
	$Z l0.zip z.pftrace
	for l in 1 2 3 4; do
		for i in 0 1 2 3; do cp l$((l - 1)).zip c$i.zip; done
		$Z l$l.zip c0.zip c1.zip c2.zip c3.zip
	done
	mv l4.zip bomb.zip
	rm -f z.pftrace
) || { no "bomb fixture" "bsdtar failed"; exit 0; }

out=$(timeout 300 "$TM" ls "$t/bomb.zip" 2>&1); rc=$?
if [ "$rc" -eq 2 ] && echo "$out" | grep -q "listing stopped: the decompressed bytes pass the listing's cap of [0-9]* bytes (1 GiB + 1024x the input's"; then
	ok "nested bomb stops at the listing cap"
else
	no "nested bomb stops at the listing cap" "rc=$rc: $(echo "$out" | head -c 300)"
fi

# The workbench opens on a thread of its own; SIGTERM / SIGHUP cancel it.
for sig in TERM HUP; do
	HOME="$t" "$TM" --headless "$t/bomb.zip" >/dev/null 2>&1 &
	pid=$!
	# wait (bounded) until the opening thread exists: signals are installed
	for _ in $(seq 1 500); do
		n=$(ls /proc/$pid/task 2>/dev/null | wc -l)
		[ "$n" -ge 2 ] && break
		sleep 0.01
	done
	kill -$sig $pid 2>/dev/null
	wait $pid; rc=$?
	want=$((128 + $(kill -l $sig)))
	[ "$rc" -eq "$want" ] && ok "workbench: SIG$sig while opening" || no "workbench: SIG$sig while opening" "exit $rc, want $want"
done

# Many members: what check keeps per member stays small.  Peak RSS of 4,000
# against 500 members of 4 KiB (same shape), per added member; it was
# ~48 KiB when every scan held a 35 KiB alignment table, a 2.6 KiB error and
# every session member a 2.7 KiB manifest slot.  Memory, not time: the slope
# is the same on a loaded box.
peak_kib() { # file [check option...]: the check's peak RSS in KiB
	python3 - "$TM" "$@" <<'PY'
import os, subprocess, sys
p = subprocess.Popen([sys.argv[1], "check"] + sys.argv[3:] + [sys.argv[2]],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, st, ru = os.wait4(p.pid, 0)
print(ru.ru_maxrss if os.waitstatus_to_exitcode(st) in (0, 1) else -1)
PY
}
gm=${TM_TOP:-.}/tests/bench/gen_members.py
if python3 "$gm" "$t/m500.tar" 500 4 && python3 "$gm" "$t/m4k.tar" 4000 4; then
	a=$(peak_kib "$t/m500.tar") b=$(peak_kib "$t/m4k.tar")
	per=$(( (b - a) * 1024 / 3500 ))
	if [ "$a" -gt 0 ] && [ "$b" -gt 0 ] && [ "$per" -le 8192 ]; then
		ok "many members: $per bytes of peak RSS per member (<= 8192)"
	else
		no "many members: bytes of peak RSS per member" "$per (500: $a KiB, 4000: $b KiB)"
	fi
	rm -f "$t/m500.tar" "$t/m4k.tar"
else
	no "many members fixture" "gen_members.py failed"
fi

# Compressed containers hold no hand-over chunk: a .tar.gz / .tar.zst of
# 24 MiB of proto (a few MiB compressed) stays within the budget (5% of the
# input + 32 MiB) and within 8 MiB of the plain TAR's peak RSS.  It was the
# plain TAR's + 24 MiB (36 at 32 MiB and beyond) while every gzip/zstd
# stream kept trace_processor's 32 MiB chunk until it was handed over.
gen=$(dirname "$TM")/tools/bench_tm
if [ -x "$gen" ] && "$gen" gen-shape te20 "$t/c.pftrace" 24 >/dev/null &&
	(cd "$t" && tar -cf c.tar c.pftrace) && gzip -c "$t/c.tar" >"$t/c.tar.gz" &&
	zstd -q -c "$t/c.tar" >"$t/c.tar.zst"; then
	rm -f "$t/c.pftrace"
	plain=$(peak_kib "$t/c.tar" --no-cache)
	for k in tar.gz tar.zst; do
		kib=$(peak_kib "$t/c.$k" --no-cache)
		size=$(stat -c %s "$t/c.$k")
		budget=$(( size / 20 / 1024 + 32 * 1024 ))
		if [ "$plain" -gt 0 ] && [ "$kib" -gt 0 ] && [ "$kib" -le "$budget" ] &&
			[ "$kib" -le $((plain + 8192)) ]; then
			ok "$k of 24 MiB: peak RSS $kib KiB (budget $budget, plain TAR $plain)"
		else
			no "$k of 24 MiB: peak RSS" "$kib KiB (budget $budget KiB, plain TAR $plain + 8192)"
		fi
	done
	rm -f "$t"/c.*
else
	no "compressed containers fixture" "bench_tm, gzip or zstd failed"
fi

# Many container inputs on one command line open within a small descriptor
# limit: a member is read through its archive's descriptor, and not every
# archive's stays open until the end (150 one-member TARs, ulimit -n 64).
(
	cd "$t" && set -e
	mkdir many && cd many
	echo '[{"ph":"i","name":"x","ts":1,"pid":1,"tid":1}]' >t.json
	for i in $(seq 1 150); do tar cf a$i.tar t.json; done
	rm t.json
) || no "many TARs fixture" "tar failed"
out=$( (ulimit -n 64; exec "$TM" check --no-cache "$t"/many/a*.tar) 2>&1); rc=$?
if [ "$rc" -eq 0 ] && echo "$out" | grep -q "^Nothing dropped"; then
	ok "150 TAR inputs under ulimit -n 64"
else
	no "150 TAR inputs under ulimit -n 64" "rc=$rc: $(echo "$out" | head -c 300 | tr "\n" " ")"
fi
rm -rf "$t/many"

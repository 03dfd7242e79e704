#!/usr/bin/env bash
# Tracks named as trace_processor names them (issue 28): check --json
# --events lists each track with its process and thread (ids and names)
# from a proto's TrackDescriptor / ProcessDescriptor / ThreadDescriptor /
# ProcessTree, a JSON trace's M process_name / thread_name events and a
# systrace line's task-pid; counters and async tracks by their names.  The
# names are kept by the scan: the same from a saved scan.
set -u
TM=${TM_BIN:-build/asan/tracemerge}
case $TM in /*) ;; *) TM=$PWD/$TM ;; esac
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS: $1"; }
no() { echo "FAIL: $1: $2"; }
export HOME="$t" XDG_CACHE_HOME="$t/cache"

printf '%s\n' '{"traceEvents":[' \
	'{"name":"process_name","ph":"M","pid":7,"args":{"name":"Browser \u001b[31m"}},' \
	'{"name":"thread_name","ph":"M","pid":7,"tid":8,"args":{"name":"CrBrowserMain"}},' \
	'{"name":"a","ph":"X","ts":10,"dur":5,"pid":7,"tid":8},' \
	'{"name":"b","ph":"X","ts":11,"dur":5,"pid":7,"tid":9},' \
	'{"name":"mem","ph":"C","ts":12,"pid":7,"args":{"v":1}}]}' >"$t/a.json"
printf '%s\n' '# tracer: nop' '#' '#           TASK-PID     CPU#  TIMESTAMP  FUNCTION' \
	'   RenderThread-21  [001] .... 100.000100: tracing_mark_write: B|20|draw' \
	'   RenderThread-21  [001] .... 100.000200: tracing_mark_write: E|20' \
	'   surfaceflinger-30  [000] .... 100.000300: tracing_mark_write: C|30|fps|60' \
	'   surfaceflinger-30  [000] .... 100.000400: tracing_mark_write: S|30|load|5' >"$t/s.systrace"
python3 - "$t/p.pftrace" <<'PY'
import sys
def vint(v):
    out = b""
    while True:
        b = v & 0x7f; v >>= 7
        if v: out += bytes([b | 0x80])
        else: return out + bytes([b])
def fld(n, wt, payload): return vint(n << 3 | wt) + payload
def ld(n, data): return fld(n, 2, vint(len(data)) + data)
def vi(n, v): return fld(n, 0, vint(v))
def packet(body): return ld(1, body)
seq = vi(10, 1)
out = b""
# a process and its thread by TrackDescriptors; a named track of the process
out += packet(seq + ld(60, vi(1, 100) + ld(3, vi(1, 40) + ld(6, b"com.app"))))
out += packet(seq + ld(60, vi(1, 101) + vi(5, 100) + ld(4, vi(1, 40) + vi(2, 41) + ld(5, b"worker"))))
out += packet(seq + ld(60, vi(1, 102) + vi(5, 100) + ld(2, b"Network")))
# a sequence's own thread (ThreadDescriptor), its process by ProcessTree
seq2 = vi(10, 2)
out += packet(vi(10, 3) + ld(2, ld(1, vi(1, 50) + ld(3, b"/system/bin/daemon"))))
out += packet(seq2 + vi(13, 1) + ld(44, vi(1, 50) + vi(2, 52) + ld(5, b"daemon-io")))
def te(s, ts, typ, name, uuid=None):
    body = vi(9, typ) + ld(23, name)
    if uuid is not None: body += vi(11, uuid)
    return packet(s + vi(8, ts) + ld(11, body))
out += te(seq, 1000, 1, b"work", 101) + te(seq, 2000, 2, b"", 101)
out += te(seq, 1500, 3, b"fetch", 102)
out += te(seq2, 1200, 3, b"io")
open(sys.argv[1], "wb").write(out)
PY
# files changed within the last 2 s are not saved (scancache.c): let them age
sleep 3
export TM_CONFIG=/dev/null
expect() { # the tracks of a file: "id|pid|process|tid|thread|name|kind" lines
	python3 -c '
import json, sys
rep = json.load(sys.stdin)
for k in rep["tracks"]:
    print("|".join("" if k[f] is None else str(k[f]) for f in ("id", "pid", "process", "tid", "thread", "name", "kind")))'
}
for run in scan cache; do
	got=$("$TM" check --json --events "$t/a.json" "$t/s.systrace" "$t/p.pftrace" 2>"$t/err" | expect)
	# the saved scans (counter values, names) load back: no cache note
	if grep -q "scan cache" "$t/err"; then
		no "track names ($run): the saved scans load" "$(cat "$t/err")"
	fi
	line() { echo "$got" | grep -F "$1" | head -1; }
	bad=""
	[ "$(line 'a.json#2|')" = $'a.json#2|7|Browser \e[31m|8|CrBrowserMain||slices' ] || bad="$bad json thread: $(line 'a.json#2|');"
	[ "$(line 'a.json#3|')" = $'a.json#3|7|Browser \e[31m|9|||slices' ] || bad="$bad json unnamed thread: $(line 'a.json#3|');"
	echo "$got" | grep -q '|mem|counter$' || bad="$bad json counter;"
	echo "$got" | grep -q '^s.systrace#[0-9]*|20||21|RenderThread||slices$' || bad="$bad systrace thread;"
	echo "$got" | grep -q '^s.systrace#[0-9]*|30||||fps|counter$' || bad="$bad systrace counter;"
	echo "$got" | grep -q '^s.systrace#[0-9]*|30||||load|slices$' || bad="$bad systrace async;"
	echo "$got" | grep -q '^p.pftrace#[0-9]*|40|com.app|41|worker||slices$' || bad="$bad proto thread track;"
	echo "$got" | grep -q '^p.pftrace#[0-9]*|40|com.app|||Network|' || bad="$bad proto named track;"
	echo "$got" | grep -q '^p.pftrace#[0-9]*|50|/system/bin/daemon|52|daemon-io||' || bad="$bad proto sequence thread;"
	[ -z "$bad" ] && ok "track names ($run)" || no "track names ($run)" "$bad $(echo "$got" | tr '\n' ' ')"
	if [ $run = scan ] && ! ls "$t/cache/tracemerge" 2>/dev/null | grep -q .; then
		no "track names: a saved scan" "none in $t/cache"
	fi
done
exit 0

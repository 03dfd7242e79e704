#!/usr/bin/env bash
# TUI golden screen dumps: each scripts/<case>.script runs the workbench
# headless (TM_HEADLESS=1, newterm on /dev/null) and every ":dump-screen"
# it makes is compared with golden/<case>[-N].screen.  One "PASS: name" or
# "FAIL: name: why" line per case.  TM_UPDATE_GOLDEN=1 rewrites the goldens.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BIN=${TM_BIN:-$top/build/asan/tracemerge}
if [ ! -x "$BIN" ]; then echo "FAIL: tui-golden: no binary at $BIN"; exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LC_ALL=C.UTF-8 TZ=UTC HOME="$work/home" XDG_CONFIG_HOME="$work/config" \
	XDG_STATE_HOME="$work/state" XDG_DATA_HOME="$work/data" TM_CONFIG=$here/nocache.rc \
	INPUTRC=/dev/null ESCDELAY=25 TERM=xterm-256color TM_HEADLESS=1
unset NO_COLOR TMUX STY TM_SCRIPT
mkdir -p "$HOME"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:exitcode=99}

# Hostile member names, packed as a TAR (GNU long names for the 4 KiB one).
make_hostile() {
	python3 - "$1" <<'PY'
import io, sys, tarfile
out = sys.argv[1]
names = [b"esc\x1b[31mred.json", b"bell\x07.json", b"new\nline.json", b"c1\xc2\x9bx.json",
         b"rlo\xe2\x80\xaetxt.json", b"bad\xff\xfeutf8.json", b"L" * 4096 + b".json"]
body = b'{"traceEvents":[{"name":"e","ph":"X","ts":10,"dur":5,"pid":1,"tid":1}]}\n'
with tarfile.open(out, "w", format=tarfile.GNU_FORMAT, encoding="utf-8", errors="surrogateescape") as t:
    for n in names:
        ti = tarfile.TarInfo(n.decode("utf-8", "surrogateescape"))
        ti.size = len(body); ti.mtime = 0
        t.addfile(ti, io.BytesIO(body))
PY
}

run_case() { # name: runs scripts/name.script with args from its first "#args:" line
	local name=$1 script="$here/scripts/$1.script" dir="$work/$1"
	mkdir -p "$dir"
	local args rows cols envs
	args=$(sed -n 's/^#args: *//p' "$script" | head -1)
	envs=$(sed -n 's/^#env: *//p' "$script" | head -1) # e.g. NO_COLOR=1
	rows=$(sed -n 's/^#size: *\([0-9]*\)x.*/\1/p' "$script" | head -1)
	cols=$(sed -n 's/^#size: *[0-9]*x\([0-9]*\).*/\1/p' "$script" | head -1)
	# The script dumps into $DUMP-N.screen; rewrite the placeholder.
	sed "s|@DUMP@|$dir/dump|g; s|@WORK@|$dir|g; s|@ARCH@|$work/arch|g" "$script" >"$dir/script"
	args=${args//@WORK@/$dir}
	args=${args//@HOSTILE@/$work/hostile.tar}
	args=${args//@MANY30@/$(echo "$work"/many30/*.json)}
	args=${args//@MANY@/$work/many}
	args=${args//@NAMES@/$work/names}
	args=${args//@WIDE@/$work/wide}
	args=${args//@TOP@/$top}
	args=${args//@UNPREDICTED@/$work/unpredicted}
	args=${args//@OWNER@/$work/owner}
	args=${args//@SDKMONO@/$work/sdkmono}
	args=${args//@ARCH@/$work/arch}
	args=${args//@DEMO@/$work/demo}
	args=${args//@APART@/$work/apart}
	args=${args//@MIXED@/$work/mixed}
	args=${args//@COUNTER@/$work/counter}
	# The demo's files go under the case's own dir (a .check may read them).
	mkdir -p "$dir/tmp"
	(cd "$dir" && env $envs TMPDIR="$dir/tmp" LINES=${rows:-24} COLUMNS=${cols:-80} timeout 60 "$BIN" $args \
		--script "$dir/script" >"$dir/stdout" 2>"$dir/stderr")
	local rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL: $name: exit status $rc: $(head -c 300 "$dir/stderr" | tr '\n' ' ')"
		return
	fi
	local n=0 bad=""
	for d in "$dir"/dump-*.screen; do
		[ -f "$d" ] || continue
		n=$((n + 1))
		local g="$here/golden/$name-$(basename "$d" .screen | sed 's/^dump-//').screen"
		# Temp-dir paths vary per run.
		sed -i "s|$dir/tmp/tracemerge-demo-[A-Za-z0-9]*|@DEMO@|g; s|$work|@WORK@|g; s|/tmp/tracemerge-demo-[A-Za-z0-9]*|@DEMO@|g" "$d"
		if [ "${TM_UPDATE_GOLDEN:-0}" = 1 ]; then
			cp "$d" "$g"
		elif [ ! -f "$g" ]; then
			bad="$bad missing golden $(basename "$g");"
		elif ! diff -u "$g" "$d" >"$dir/diff" 2>&1; then
			bad="$bad $(basename "$g") differs: $(grep '^[-+][^-+]' "$dir/diff" | head -4 | tr '\n' ' ');"
		fi
	done
	if [ -f "$here/scripts/$name.check" ]; then
		local why
		if ! why=$(cd "$dir" && DIR="$dir" BIN="$BIN" bash "$here/scripts/$name.check" 2>&1); then
			bad="$bad check: $why;"
		fi
	fi
	if [ $n -eq 0 ]; then bad="$bad no screen dumped;"; fi
	if [ -n "$bad" ]; then echo "FAIL: $name:$bad"; else echo "PASS: $name"; fi
}

# More files than the timeline has rows (t01..t14), and a format tracemerge
# does not scan (android_logcat): its events are "?" and the verdict says so.
make_many() {
	local i
	# 3,000 distinct event names in one file (the pair picker's window)
	mkdir -p "$work/names"
	python3 -c 'import json; print(json.dumps({"traceEvents": [{"name": "ev%04d" % i, "ph": "X", "ts": 10 * i, "dur": 5, "pid": 1, "tid": 1} for i in range(3000)]}))' \
		>"$work/names/a.json"
	cp "$work/names/a.json" "$work/names/b.json"
	mkdir -p "$work/many" "$work/unpredicted"
	for i in $(seq 1 14); do
		printf '{"traceEvents":[{"name":"e","ph":"X","ts":%d,"dur":5,"pid":1,"tid":1}]}\n' \
			$((i * 1000)) >"$work/many/t$(printf %02d "$i").json"
	done
	# a fuchsia file with a Perfetto blob record: scanned, not predicted
	python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import fxt_gen as f; sys.stdout.buffer.write(f.MAGIC + f.event(5, "a") + f.blob(b"\x0a\x00"))' "$top/tools" \
		>"$work/unpredicted/app.fxt"
	cp "$work/many/t01.json" "$work/unpredicted/t01.json"
	# a counter sampled over a slice, one whose range overflows a double
	# (+-1.7e308), and a systrace file's counter (the tracks view's sparkline)
	mkdir -p "$work/counter"
	python3 -c 'import json; print(json.dumps({"traceEvents": [{"name": "mem", "ph": "C", "ts": 100 * i, "pid": 7, "args": {"v": [1, 5, 10, 3, 7, 0][i]}} for i in range(6)] + [{"name": "huge", "ph": "C", "ts": 100 * i, "pid": 7, "args": {"v": [1.7e308, -1.7e308, 0][i]}} for i in range(3)] + [{"name": "process_name", "ph": "M", "pid": 7, "args": {"name": "Browser"}}, {"name": "load", "ph": "X", "ts": 0, "dur": 550, "pid": 7, "tid": 8}]}))' \
		>"$work/counter/c.json"
	# Two clockless JSON files: a.json owns the timeline by name (a < z).
	mkdir -p "$work/owner"
	printf '{"traceEvents":[{"ph":"X","name":"a","ts":100,"dur":1,"pid":1,"tid":1},{"ph":"X","name":"b","ts":5000,"dur":1,"pid":1,"tid":1}]}\n' \
		>"$work/owner/a.json"
	cp "$work/owner/a.json" "$work/owner/z.json"
	# Long names alike but at their ends, given out of name order (the #
	# column: trace_processor's order is the names').
	mkdir -p "$work/wide"
	for n in pixel7-system_server-boot-trace-2023-11-14-morning-run pixel7-system_server-boot-trace-2023-11-14-evening-run zz-watch; do
		printf '{"traceEvents":[{"name":"e","ph":"X","ts":%d,"dur":5,"pid":1,"tid":1}]}\n' \
			"${#n}000" >"$work/wide/$n.json"
	done
	# 30 files of one kind, names alike (the layout with many files).
	mkdir -p "$work/many30"
	for i in $(seq 1 30); do
		printf '{"traceEvents":[{"name":"e","ph":"X","ts":%d,"dur":5,"pid":1,"tid":1}]}\n' \
			$((i * 1000)) >"$work/many30/capture-$(printf %02d "$i").json"
	done
	# Two Perfetto SDK traces, one on MONOTONIC (as on macOS), 2.5 s apart:
	# every event of b_file is dropped (tests/cli/align_gen.py sdk-mono).
	python3 "$top/tests/cli/align_gen.py" "$work/sdkmono" proto -2500000000 0 7 sdk-mono >/dev/null
	# Two Chrome traces years apart, only metadata and a marker in common.
	python3 "$top/tests/cli/apart_gen.py" "$work/apart"
	# One archive of a Perfetto trace, perf_text, fuchsia, logcat and strace.
	mkdir -p "$work/mixed"
	python3 "$top/tests/tui/mixed_gen.py" "$top/tools" "$work/mixed/mixed.tar"
	# Files a case removes from under the workbench (../gone/ from its dir).
	mkdir -p "$work/gone"
	cp "$work"/many/t0[1-3].json "$work/gone/"
}

# Archives with a manifest member: a valid one (ok.tar) and one in the
# outdated syntax of older docs (old.tar); loose inputs whose member names
# util merge refuses (dup/: two phone.json, a hidden file, a 121-byte
# name) and a random binary file.
make_archives() {
	python3 - "$work/arch" <<'PY'
import io, os, sys, tarfile, random
d = sys.argv[1]
os.makedirs(d + "/dup/x", exist_ok=True); os.makedirs(d + "/dup/y", exist_ok=True)
ev = lambda ts: ('{"traceEvents":[{"name":"e","ph":"X","ts":%d,"dur":5,"pid":1,"tid":1}]}\n' % ts).encode()
ok = b'{"perfetto_manifest": {"version": 1, "files": [{"path": "a.json", "machine": {"name": "left"}}]}}\n'
old = (b'{"perfetto_manifest": {"version": 1, "files": [{"path": "a.json", "machine": {"name": "left"}},\n'
       b' {"path": "b.json", "clocks": {"BOOTTIME": {"trace_time_offset_ns": 5000000}}}]}}\n')
for name, man in (("ok.tar", ok), ("old.tar", old)):
    with tarfile.open(os.path.join(d, name), "w", format=tarfile.USTAR_FORMAT) as t:
        for n, body in (("a.json", ev(100)), ("b.json", ev(200)), ("perfetto_manifest.json", man)):
            ti = tarfile.TarInfo(n); ti.size = len(body); ti.mtime = 0
            t.addfile(ti, io.BytesIO(body))
# the same outdated manifest loose beside its traces
os.makedirs(d + "/loose", exist_ok=True)
for n, body in (("a.json", ev(100)), ("b.json", ev(200)), ("old.json", old)):
    open(d + "/loose/" + n, "wb").write(body)
open(d + "/dup/x/phone.json", "wb").write(ev(100))
open(d + "/dup/y/phone.json", "wb").write(ev(300))
open(d + "/dup/.hidden.json", "wb").write(ev(400))
open(d + "/dup/" + "L" * 116 + ".json", "wb").write(ev(500))
# A lone gzip: trace_processor names what it inflates to "" (the row shows
# the engine's label for it, not an empty name).
import gzip
open(d + "/lone.json.gz", "wb").write(gzip.compress(ev(600), mtime=0))
ed = d + "/editor.sh"
open(ed, "w").write('#!/bin/sh\n# An $EDITOR for the tests: replaces the outdated clocks map.\n'
    'sed -i \'s/"clocks": {"BOOTTIME": {"trace_time_offset_ns": 5000000}}/"clocks": {"clock": "BOOTTIME", "sync_to": {"file": "a.json", "clock": "BOOTTIME"}, "offset_ns": 7}/\' "$1"\n')
os.chmod(ed, 0o755)
random.seed(7)
open(d + "/dup/random.bin", "wb").write(bytes(random.randrange(256) for _ in range(4096)))
PY
}

# The demo's files on disk (for cases that open some of them without the
# demo's manifest).
make_demo() {
	mkdir -p "$work/demotmp"
	: >"$work/empty.script"
	TMPDIR="$work/demotmp" TM_KEEP_DEMO=1 "$BIN" --demo --script "$work/empty.script" >/dev/null 2>&1
	mv "$work"/demotmp/tracemerge-demo-* "$work/demo"
}

make_demo
make_hostile "$work/hostile.tar" 2>/dev/null || echo "SKIP: hostile-tar: python3 missing"
make_archives || echo "SKIP: archives: python3 missing"
make_many
# ONLY="case1 case2" runs just those cases.
for s in "$here"/scripts/*.script; do
	c=$(basename "$s" .script)
	case " ${ONLY:-$c} " in *" $c "*) run_case "$c" ;; esac
done

#!/usr/bin/env bash
# SIGTERM saves the edits to $XDG_STATE_HOME/tracemerge/recovery-<hash>.json
# (atomically); the next start on the same inputs offers to restore them.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BIN=${TM_BIN:-$top/build/asan/tracemerge}
[ -x "$BIN" ] || { echo "FAIL: recovery: no binary"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LC_ALL=C.UTF-8 HOME="$work" XDG_STATE_HOME="$work/state" XDG_CONFIG_HOME="$work/c" \
	XDG_DATA_HOME="$work/d" TM_CONFIG=/dev/null INPUTRC=/dev/null TM_HEADLESS=1 LINES=24 COLUMNS=80 \
	TMPDIR="$work"
unset TM_SCRIPT NO_COLOR TMUX
mkdir -p "$work/in"
# Fixed inputs (the demo's temp dir would change the hash): write the demo
# once, and keep its dir (TM_KEEP_DEMO: the demo removes it on exit otherwise).
printf ':quit-now\n' >"$work/s0"
TM_KEEP_DEMO=1 "$BIN" --demo --script "$work/s0" >/dev/null 2>&1
demo=$(ls -d "$work"/tracemerge-demo-* | head -1)
files=$(ls "$demo"/*.pftrace "$demo"/*.json | sort)
printf ':select app.json\n:offset -50ms\n:raise TERM\n' >"$work/s1"
"$BIN" --script "$work/s1" $files >/dev/null 2>"$work/err1"; rc=$?
rec=$(ls "$work"/state/tracemerge/recovery-*.json 2>/dev/null | head -1)
if [ "$rc" -ne 143 ]; then echo "FAIL: recovery-sigterm: exit status $rc, expected 143"
elif [ -z "$rec" ] || ! grep -q '"offset_ns": -50000000' "$rec"; then echo "FAIL: recovery-sigterm: no recovery manifest with the edit"
else echo "PASS: recovery-sigterm"; fi
printf 'y\n:dump-screen %s/after.screen\n:quit-now\n' "$work" >"$work/s2"
"$BIN" --script "$work/s2" $files >/dev/null 2>"$work/err2"
if grep -q -- '-50 ms' "$work/after.screen" 2>/dev/null && [ ! -e "$rec" ]; then echo "PASS: recovery-restore"
else echo "FAIL: recovery-restore: edit not restored or recovery file left: $(grep -m1 app.json "$work/after.screen" 2>/dev/null)"; fi

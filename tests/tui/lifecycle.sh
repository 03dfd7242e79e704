#!/usr/bin/env bash
# The workbench's lifecycle outside the golden screens:
#  - stdin at EOF / not a terminal: a prompt exit like SIGHUP (status 129,
#    the recovery manifest saved when edits are unsaved), never a busy loop;
#  - `tracemerge demo` removes its temp dir on exit, unless a TAR or a
#    manifest was written into it (then it is kept and the exit says where);
#    the write prompt's Tab completes the demo dir's name.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BIN=${TM_BIN:-$top/build/asan/tracemerge}
[ -x "$BIN" ] || { echo "FAIL: lifecycle: no binary at $BIN"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LC_ALL=C.UTF-8 TZ=UTC HOME="$work/home" XDG_CONFIG_HOME="$work/c" XDG_STATE_HOME="$work/state" \
	XDG_DATA_HOME="$work/d" TM_CONFIG=$here/nocache.rc INPUTRC=/dev/null ESCDELAY=25 TERM=xterm-256color \
	LINES=24 COLUMNS=80
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:exitcode=99}
unset TM_SCRIPT TM_HEADLESS TM_KEEP_DEMO NO_COLOR TMUX STY
mkdir -p "$HOME"
TIMEFORMAT='%R %U %S'

# cpu_ok "real user sys": used under 3 s of CPU (a loop spinning on EOF burns
# the whole 10 s timeout; a hang is caught by the timeout's status). No bound on
# wall time: the machines running the tests are shared.
cpu_ok() {
	awk -v t="$1" 'BEGIN { split(t, a, " "); exit !(a[2] + a[3] < 3) }'
}

# 1. stdin is /dev/null (EOF at once), not a terminal, no script.
t1="$work/t1"; mkdir -p "$t1"
tm=$( { time (cd "$t1" && TMPDIR="$t1" timeout 10 "$BIN" --demo </dev/null >"$t1/out" 2>"$t1/err"; echo $? >"$t1/rc"); } 2>&1 )
rc=$(cat "$t1/rc")
if [ "$rc" = 124 ]; then echo "FAIL: eof-no-spin: still running after 10 s (time $tm)"
elif [ "$rc" != 129 ]; then echo "FAIL: eof-no-spin: exit status $rc, expected 129: $(head -c 300 "$t1/err")"
elif ! cpu_ok "$tm"; then echo "FAIL: eof-no-spin: real/user/sys $tm"
elif ! grep -q 'terminal is gone' "$t1/err"; then echo "FAIL: eof-no-spin: no exit message: $(head -c 300 "$t1/err")"
else echo "PASS: eof-no-spin"; fi
if ls -d "$t1"/tracemerge-demo-* >/dev/null 2>&1; then echo "FAIL: demo-cleanup-eof: demo dir left behind"
else echo "PASS: demo-cleanup-eof"; fi

# 2. edits, then stdin at EOF: saved like SIGHUP.
t2="$work/t2"; mkdir -p "$t2"
printf ':select app.json\n:offset -5ms\n' >"$t2/s"
tm=$( { time (cd "$t2" && TMPDIR="$t2" timeout 10 "$BIN" --demo --script "$t2/s" </dev/null >"$t2/out" 2>"$t2/err"; echo $? >"$t2/rc"); } 2>&1 )
rc=$(cat "$t2/rc")
rec=$(ls "$XDG_STATE_HOME"/tracemerge/recovery-*.json 2>/dev/null | head -1)
if [ "$rc" != 129 ]; then echo "FAIL: eof-saves-recovery: exit status $rc: $(head -c 300 "$t2/err")"
elif ! cpu_ok "$tm"; then echo "FAIL: eof-saves-recovery: real/user/sys $tm"
elif [ -z "$rec" ] || ! grep -q '"offset_ns": -5000000' "$rec"; then echo "FAIL: eof-saves-recovery: no recovery manifest with the edit"
elif ! grep -q 'edits saved to' "$t2/err"; then echo "FAIL: eof-saves-recovery: exit does not say where"
else echo "PASS: eof-saves-recovery"; fi
rm -rf "$XDG_STATE_HOME"

# 3. a plain demo session removes its dir; output outside it changes nothing.
t3="$work/t3"; mkdir -p "$t3"
printf 'e\n<C-u>%s/m.json<Enter>\n:quit-now\n' "$t3" >"$t3/s"
(cd "$t3" && TMPDIR="$t3" TM_HEADLESS=1 timeout 30 "$BIN" --demo --script "$t3/s" >"$t3/out" 2>"$t3/err")
rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: demo-cleanup: exit status $rc: $(head -c 300 "$t3/err")"
elif ls -d "$t3"/tracemerge-demo-* >/dev/null 2>&1; then echo "FAIL: demo-cleanup: demo dir left behind"
elif [ ! -s "$t3/m.json" ]; then echo "FAIL: demo-cleanup: manifest not saved"
elif grep -q 'kept in' "$t3/out" "$t3/err"; then echo "FAIL: demo-cleanup: says the dir is kept"
else echo "PASS: demo-cleanup"; fi

# 4. a TAR written into the demo dir (named by Tab completion): kept, and said.
t4="$work/t4"; mkdir -p "$t4"
printf 'w\n<C-u>tracemerge-demo-<Tab>out.tar<Enter>\n:quit-now\n' >"$t4/s"
(cd "$t4" && TMPDIR="$t4" TM_HEADLESS=1 timeout 30 "$BIN" --demo --script "$t4/s" >"$t4/out" 2>"$t4/err")
rc=$?
demo=$(ls -d "$t4"/tracemerge-demo-* 2>/dev/null | head -1)
if [ $rc -ne 0 ]; then echo "FAIL: demo-keep-output: exit status $rc: $(head -c 300 "$t4/err")"
elif [ -z "$demo" ] || [ ! -s "$demo/out.tar" ]; then echo "FAIL: demo-keep-output: no TAR in a kept demo dir: $(ls "$t4")"
elif ! grep -qF "kept in $demo (you wrote output there)" "$t4/out"; then echo "FAIL: demo-keep-output: exit does not say where: $(tail -2 "$t4/out")"
elif [ ! -s "$demo/app.json" ]; then echo "FAIL: demo-keep-output: the demo's inputs were removed"
else echo "PASS: demo-keep-output"; fi

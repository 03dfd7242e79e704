#!/usr/bin/env bash
# The workbench reacts promptly to q and to signals:
#  - while an archive is being opened (a 42.zip-style nested ZIP whose full
#    listing stops at the decompression cap only after a GiB): SIGTERM and
#    SIGHUP (headless), q and Ctrl-C (tmux) end it before the listing
#    finishes (its cap error never shows);
#  - with 100,000 members: loading, q (headless :quit-now, and tmux) and
#    SIGTERM (tmux).
# No wall-clock bound: a CPU-time limit (ulimit -t, far above what each
# takes) is the hang guard, a generous timeout the backstop; "before it
# finished" is the listing's cap error never appearing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
TM=${TM_BIN:-$top/build/asan/tracemerge}
case $TM in /*) ;; *) TM=$PWD/$TM;; esac
[ -x "$TM" ] || { echo "FAIL: hostile_quit: no binary at $TM"; exit 0; }
H=$here/hostile
t=$(mktemp -d)
sock="tmq-$$-$RANDOM"
T() { tmux -L "$sock" -f /dev/null "$@"; }
have_tmux=0
command -v tmux >/dev/null 2>&1 && have_tmux=1
cleanup() {
	[ $have_tmux = 1 ] && T kill-server >/dev/null 2>&1
	rm -rf "$t"
}
trap cleanup EXIT
ok() { echo "PASS: $1"; }
no() { echo "FAIL: $1: $2"; }
export LC_ALL=C.UTF-8 TZ=UTC HOME="$t/home" XDG_CONFIG_HOME="$t/c" XDG_STATE_HOME="$t/state" \
	XDG_DATA_HOME="$t/d" XDG_CACHE_HOME="$t/cache" TM_CONFIG=$top/tests/tui/nocache.rc INPUTRC=/dev/null \
	ESCDELAY=25 TMPDIR="$t"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
unset TM_SCRIPT NO_COLOR TMUX STY
mkdir -p "$HOME"
CPU_GUARD=120 # CPU seconds: each case below takes a few (ASan build, 100,000 members)
cap_msg='listing stopped: the decompressed bytes pass'

child_of() { # pid: its child running the workbench (bounded wait)
	local i c
	for i in $(seq 1 500); do
		c=$(pgrep -P "$1" -n 2>/dev/null)
		[ -n "$c" ] && [ "$(readlink "/proc/$c/exe" 2>/dev/null)" = "$(readlink -f "$TM")" ] &&
			{ echo "$c"; return 0; }
		sleep 0.02
	done
	return 1
}
cpu_ticks() { # pid: user + system clock ticks so far
	awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
# wait_busy pid: until the workbench is opening (its open thread exists and
# it has used some CPU), bounded; false if it ended first
wait_busy() {
	local i
	for i in $(seq 1 3000); do
		[ -d "/proc/$1" ] || return 1
		if [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -ge 2 ] && [ "$(cpu_ticks "$1")" -ge 10 ]; then
			return 0
		fi
		sleep 0.02
	done
	return 1
}

# 100,000 empty members in a tar.gz (hostile reproducer D1's shape)
python3 - "$t/many.tar.gz" <<'PY'
import gzip, io, sys, tarfile
with gzip.open(sys.argv[1], "wb", compresslevel=1) as gz:
    with tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for i in range(100000):
            tf.addfile(tarfile.TarInfo("m%06d.json" % i), io.BytesIO(b""))
PY
bomb=$H/nested_zip_r42.zip

# 1. headless: SIGTERM / SIGHUP while the nested ZIP is being opened
printf ':quit-now\n' >"$t/quit"
for sig in TERM HUP; do
	(ulimit -t $CPU_GUARD; exec env TM_HEADLESS=1 LINES=24 COLUMNS=100 timeout -s KILL 600 \
		"$TM" --script "$t/quit" "$bomb" >"$t/o1" 2>"$t/e1") &
	pid=$!
	# the workbench itself, under timeout (wait_busy needs its threads)
	wpid=$(child_of $pid)
	if [ -z "$wpid" ] || ! wait_busy "$wpid"; then
		wait $pid
		no "workbench: SIG$sig while opening a nested ZIP" "never saw it opening: $(head -c 300 "$t/e1")"
		continue
	fi
	kill -s $sig "$wpid"
	wait $pid; rc=$?
	want=$((128 + $(kill -l $sig)))
	if [ $rc = $want ] && ! grep -q "$cap_msg" "$t/o1" "$t/e1"; then
		ok "workbench: SIG$sig while opening a nested ZIP"
	else
		no "workbench: SIG$sig while opening a nested ZIP" "exit $rc (want $want): $(head -c 300 "$t/e1")"
	fi
done

# 2. headless: 100,000 members load and quit (the file list's report lookup
#    was a loop over the files per row: minutes of CPU before the first frame)
printf ':dump-screen %s/many.screen\n:quit-now\n' "$t" >"$t/s2"
(ulimit -t $CPU_GUARD; exec env TM_HEADLESS=1 LINES=24 COLUMNS=100 timeout -s KILL 900 \
	"$TM" --script "$t/s2" "$t/many.tar.gz" >/dev/null 2>"$t/e2"); rc=$?
if [ $rc = 0 ] && grep -q '100001 files' "$t/many.screen" 2>/dev/null; then
	ok "workbench: 100,000 members load and quit"
else
	no "workbench: 100,000 members load and quit" "exit $rc (137/152: the CPU guard or the timeout): $(head -c 200 "$t/e2")"
fi

# 3. a real terminal (tmux): q and Ctrl-C while opening; q and SIGTERM with
#    100,000 members on the screen
if [ $have_tmux = 0 ]; then
	for n in "q while opening" "Ctrl-C while opening" "q with 100,000 members" "SIGTERM with 100,000 members"; do
		echo "SKIP: workbench (tmux): $n: tmux not installed"
	done
	exit 0
fi
start() { # session input
	rm -f "$t/$1.rc"
	T new-session -d -s "$1" -x 100 -y 30 \
		"ulimit -t $CPU_GUARD; TERM=xterm-256color timeout --foreground -s KILL 900 $TM $2 2>$t/$1.err; echo \$? >$t/$1.rc; sleep 600"
}
wb_pid() { # session: the workbench's pid (the pane's shell runs timeout, timeout runs it)
	local i sh to
	for i in $(seq 1 500); do
		sh=$(T display -p -t "$1" '#{pane_pid}' 2>/dev/null)
		to=$(pgrep -P "${sh:-0}" -n 2>/dev/null)
		[ -n "$to" ] && child_of "$to" && return 0
		sleep 0.02
	done
	return 1
}
wait_rc() { # session: its exit status once it ended (bounded: 900 s)
	local i
	for i in $(seq 1 9000); do
		[ -s "$t/$1.rc" ] && { cat "$t/$1.rc"; return 0; }
		sleep 0.1
	done
	echo none
}
wait_screen() { # session text: the screen shows text (bounded: 900 s)
	local i
	for i in $(seq 1 9000); do
		T capture-pane -p -t "$1" 2>/dev/null | grep -qF -- "$2" && return 0
		[ -s "$t/$1.rc" ] && return 1
		sleep 0.1
	done
	return 1
}

for key in q C-c; do
	s=open-$key
	start "$s" "$bomb"
	p=$(wb_pid "$s")
	if [ -z "$p" ] || ! wait_busy "$p"; then
		no "workbench (tmux): $key while opening" "never saw it opening: $(head -c 300 "$t/$s.err" 2>/dev/null)"
		continue
	fi
	T send-keys -t "$s" "$key"
	rc=$(wait_rc "$s")
	if [ "$rc" = 0 ] && ! grep -q "$cap_msg" "$t/$s.err"; then
		ok "workbench (tmux): $key while opening"
	else
		no "workbench (tmux): $key while opening" "exit $rc: $(head -c 300 "$t/$s.err")"
	fi
done

for how in q TERM; do
	s=many-$how
	start "$s" "$t/many.tar.gz"
	p=$(wb_pid "$s")
	if [ -z "$p" ] || ! wait_screen "$s" "100001 files"; then
		no "workbench (tmux): $how with 100,000 members" "never loaded: exit $(cat "$t/$s.rc" 2>/dev/null) $(head -c 200 "$t/$s.err")"
		continue
	fi
	if [ $how = q ]; then T send-keys -t "$s" q; want=0; else kill -TERM "$p"; want=143; fi
	rc=$(wait_rc "$s")
	if [ "$rc" = $want ]; then ok "workbench (tmux): $how with 100,000 members"
	else no "workbench (tmux): $how with 100,000 members" "exit $rc, want $want: $(head -c 200 "$t/$s.err")"; fi
done

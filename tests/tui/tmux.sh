#!/usr/bin/env bash
# Real-terminal smoke tests through tmux: start and quit, resize, prompt
# editing with arrow keys, OSC 52 reaching tmux's paste buffer, NO_COLOR,
# a resize while a prompt is open, the mouse off (the terminal keeps it)
# and on (a click the terminal reports selects a row).
# Prints "SKIP: ..." (never PASS) when tmux is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BIN=${TM_BIN:-$top/build/asan/tracemerge}
names="tmux-start-quit tmux-f1-f10 tmux-resize tmux-prompt-edit tmux-osc52 tmux-osc52-external tmux-copy-fails-says-why tmux-no-color tmux-resize-prompt tmux-mouse-off tmux-mouse-click tmux-prompt-scroll"
if ! command -v tmux >/dev/null 2>&1; then
	for n in $names; do echo "SKIP: $n: tmux not installed"; done
	exit 0
fi
if [ ! -x "$BIN" ]; then echo "FAIL: tmux: no binary at $BIN"; exit 0; fi
work=$(mktemp -d)
sock="tm-$$-$RANDOM"
T() { tmux -L "$sock" -f /dev/null "$@"; }
# The killed sessions' workbenches may still be removing their demo dirs.
trap 'T kill-server >/dev/null 2>&1; for i in 1 2 3 4 5 6 7 8 9 10; do rm -rf "$work" 2>/dev/null && break; sleep 0.2; done' EXIT
envs="LC_ALL=C.UTF-8 TZ=UTC TMPDIR=$work HOME=$work XDG_CONFIG_HOME=$work/c XDG_STATE_HOME=$work/s XDG_DATA_HOME=$work/d TM_CONFIG=$here/nocache.rc INPUTRC=/dev/null ESCDELAY=25 ASAN_OPTIONS=detect_leaks=0:log_path=$work/asan"

wait_for() { # session text [seconds]
	local i
	for i in $(seq 1 $((${3:-10} * 10))); do
		T capture-pane -p -t "$1" 2>/dev/null | grep -qF -- "$2" && return 0
		sleep 0.1
	done
	return 1
}
wait_line2() { # session text [seconds]: the screen's second line shows text
	local i
	for i in $(seq 1 $((${3:-10} * 10))); do
		T capture-pane -p -t "$1" 2>/dev/null | head -2 | tail -1 | grep -qF -- "$2" && return 0
		sleep 0.1
	done
	return 1
}
start() { # session extra-env
	T new-session -d -s "$1" -x 80 -y 24 "cd $work && env $envs $2 $BIN --demo; echo EXITED:\$?; sleep 30"
	T set-option -t "$1" remain-on-exit on >/dev/null 2>&1
}

# 1. start and quit
start s1 ""
if wait_for s1 "phone.pftrace" 15; then
	T send-keys -t s1 q
	if wait_for s1 "EXITED:0" 10; then echo "PASS: tmux-start-quit"
	else echo "FAIL: tmux-start-quit: did not exit: $(T capture-pane -p -t s1 | tail -3 | tr '\n' ' ')"; fi
else
	echo "FAIL: tmux-start-quit: screen never showed the demo files"
fi

# 1b. F1 opens the help, F10 quits (function keys through terminfo)
start s1b ""
if wait_for s1b "phone.pftrace" 15; then
	T send-keys -t s1b F1
	if wait_for s1b "tracemerge help" 5; then
		T send-keys -t s1b Escape
		sleep 0.3
		T send-keys -t s1b F10
		if wait_for s1b "EXITED:0" 10; then echo "PASS: tmux-f1-f10"
		else echo "FAIL: tmux-f1-f10: F10 did not quit: $(T capture-pane -p -t s1b | tail -2 | tr '\n' ' ')"; fi
	else
		echo "FAIL: tmux-f1-f10: F1 showed no help"
	fi
else
	echo "FAIL: tmux-f1-f10: did not start"
fi

# 2. resize
start s2 ""
if wait_for s2 "phone.pftrace" 15; then
	T resize-window -t s2 -x 130 -y 30 >/dev/null 2>&1
	# the side pane's header is on line 2 once the 130-column layout is drawn
	if wait_line2 s2 "manifest" 10; then
		T resize-window -t s2 -x 40 -y 10 >/dev/null 2>&1
		if wait_for s2 "Terminal too small" 5; then echo "PASS: tmux-resize"
		else echo "FAIL: tmux-resize: no too-small notice at 40x10"; fi
	else
		echo "FAIL: tmux-resize: no side manifest pane at 130 columns"
	fi
else
	echo "FAIL: tmux-resize: did not start"
fi

# 3. prompt editing with arrows, Home, BackSpace
start s3 ""
if wait_for s3 "phone.pftrace" 15; then
	T send-keys -t s3 j o C-u '2' 'x' '5' 'm' 's' Left Left Left BSpace Home Delete End Enter
	if wait_for s3 "+5 ms" 5; then echo "PASS: tmux-prompt-edit"
	else echo "FAIL: tmux-prompt-edit: $(T capture-pane -p -t s3 | tail -3 | tr '\n' ' ')"; fi
else
	echo "FAIL: tmux-prompt-edit: did not start"
fi

# 4. OSC 52 reaches tmux's buffer
T set-option -g set-clipboard on >/dev/null 2>&1
start s4 ""
if wait_for s4 "phone.pftrace" 15; then
	T send-keys -t s4 c
	ok=0
	for i in $(seq 1 30); do
		if T show-buffer 2>/dev/null | grep -q perfetto_manifest; then ok=1; break; fi
		sleep 0.1
	done
	if [ $ok = 1 ] && wait_for s4 "Copied" 3; then echo "PASS: tmux-osc52"
	else echo "FAIL: tmux-osc52: buffer: $(T show-buffer 2>&1 | head -c 100)"; fi
else
	echo "FAIL: tmux-osc52: did not start"
fi

# 4b. set-clipboard external (tmux's default): tmux ignores a program's
# OSC 52, so the copy goes through tmux load-buffer and arrives (before:
# "Not copied (why: :messages)").
T set-option -g set-clipboard external >/dev/null 2>&1
T delete-buffer >/dev/null 2>&1
start s4b ""
if wait_for s4b "phone.pftrace" 15; then
	T send-keys -t s4b c
	if wait_for s4b "load-buffer" 5 && T show-buffer 2>/dev/null | grep -q perfetto_manifest; then
		echo "PASS: tmux-osc52-external"
	else
		echo "FAIL: tmux-osc52-external: $(T capture-pane -p -t s4b | tail -2 | tr '\n' ' ') buffer: $(T show-buffer 2>&1 | head -c 80)"
	fi
else
	echo "FAIL: tmux-osc52-external: did not start"
fi
# 4c. when load-buffer fails too (a tmux that refuses it), the prompt says
# why and the fix, and offers the manifest on exit.
mkdir -p "$work/faketmux"
printf '#!/bin/sh
case "$1" in show-options) echo external;; *) exit 1;; esac
' >"$work/faketmux/tmux"
chmod +x "$work/faketmux/tmux"
start s4c "PATH=$work/faketmux:$PATH"
if wait_for s4c "phone.pftrace" 15; then
	T send-keys -t s4c c
	if wait_for s4c "set-clipboard on. Print the manifest" 5; then
		T send-keys -t s4c y
		if wait_for s4c "printed on exit" 5; then
			T send-keys -t s4c q
			if wait_for s4c "EXITED:0" 10 && T capture-pane -p -S -50 -t s4c | grep -q '"perfetto_manifest"'; then
				echo "PASS: tmux-copy-fails-says-why"
			else
				echo "FAIL: tmux-copy-fails-says-why: no manifest printed on exit: $(T capture-pane -p -t s4c | tail -4 | tr '\n' ' ')"
			fi
		else
			echo "FAIL: tmux-copy-fails-says-why: y did not set print-on-exit: $(T capture-pane -p -t s4c | tail -2 | tr '\n' ' ')"
		fi
	else
		echo "FAIL: tmux-copy-fails-says-why: $(T capture-pane -p -t s4c | tail -2 | tr '\n' ' ')"
	fi
else
	echo "FAIL: tmux-copy-fails-says-why: did not start"
fi
T set-option -g set-clipboard on >/dev/null 2>&1

# 5. NO_COLOR: no colour SGR in the pane
start s5 "NO_COLOR=1"
if wait_for s5 "phone.pftrace" 15; then
	if T capture-pane -e -p -t s5 | grep -qE $'\e\\[[0-9;]*(3[0-7]|4[0-7]|38;5|48;5)[;m]'; then
		echo "FAIL: tmux-no-color: colour escape sequences present"
	else
		echo "PASS: tmux-no-color"
	fi
else
	echo "FAIL: tmux-no-color: did not start"
fi

# 6. resize while a prompt is open: the prompt and its text survive every
# size (too small included) and the answer still applies; no crash.
start s6 ""
if wait_for s6 "phone.pftrace" 15; then
	T send-keys -t s6 G o C-u 1 2
	if wait_for s6 "Offset vs phone.pftrace (ns" 5; then
		ok=1
		for size in "120 35" "60 16" "40 10" "100 30" "80 24"; do
			T resize-window -t s6 -x ${size% *} -y ${size#* } >/dev/null 2>&1
			sleep 0.3
			if [ "$size" = "40 10" ]; then
				wait_for s6 "Terminal too small" 5 || { ok=0; why="no too-small notice"; }
			else
				wait_for s6 "(ns us ms s; + moves later): 12" 5 || { ok=0; why="prompt lost at $size"; }
			fi
		done
		T send-keys -t s6 m s Enter
		if [ $ok = 1 ] && wait_for s6 "+12 ms" 5 && ! ls "$work"/asan* >/dev/null 2>&1; then
			echo "PASS: tmux-resize-prompt"
		else
			echo "FAIL: tmux-resize-prompt: ${why:-answer not applied}: $(T capture-pane -p -t s6 | tail -2 | tr '\n' ' ')"
		fi
	else
		echo "FAIL: tmux-resize-prompt: no offset prompt"
	fi
else
	echo "FAIL: tmux-resize-prompt: did not start"
fi

# 6b. a prompt longer than its line scrolls sideways and keeps the cursor in
# view, at 40 columns too (the too-small screen keeps the prompt usable):
# the end of a long answer shows, the cursor is on the line, Home goes back
# to the label.
start s6b ""
if wait_for s6b "phone.pftrace" 15; then
	T send-keys -t s6b G o C-u
	if wait_for s6b "Offset vs phone.pftrace (ns" 5; then
		T resize-window -t s6b -x 40 -y 12 >/dev/null 2>&1
		sleep 0.3
		T send-keys -t s6b -l "0000000000000000000000000000000000000000000000000000012"
		T send-keys -t s6b m s
		ok=1
		wait_for s6b "0000012ms" 5 || { ok=0; why="the end of the input is not shown"; }
		cx=$(T display-message -p -t s6b '#{cursor_x}')
		line=$(T capture-pane -p -t s6b | grep -F "0000012ms")
		case "$line" in *"Offset"*) ok=0; why="not scrolled: $line" ;; esac
		[ "${cx:-99}" -lt 40 ] || { ok=0; why="cursor at column $cx of 40"; }
		T send-keys -t s6b Home
		# the label is wider than the line: the cursor at the input's start shows
		# its end and the first digits
		wait_for s6b "moves later): 000" 5 || { ok=0; why="Home did not scroll back"; }
		cx2=$(T display-message -p -t s6b '#{cursor_x}')
		[ "${cx2:-99}" -lt 40 ] || { ok=0; why="cursor at column $cx2 after Home"; }
		T send-keys -t s6b End Enter
		T resize-window -t s6b -x 80 -y 24 >/dev/null 2>&1
		if [ $ok = 1 ] && ! ls "$work"/asan* >/dev/null 2>&1; then echo "PASS: tmux-prompt-scroll"
		else echo "FAIL: tmux-prompt-scroll: ${why:-asan report}: $(T capture-pane -p -t s6b | tail -3 | tr '\n' ' ')"; fi
	else
		echo "FAIL: tmux-prompt-scroll: no offset prompt"
	fi
else
	echo "FAIL: tmux-prompt-scroll: did not start"
fi

# 7. the mouse: off by default, so the terminal keeps it for selecting text
# (the program asks for no mouse reports); F9 asks for them, F9 again stops.
mouse_flag() { T display-message -p -t "$1" '#{mouse_any_flag}#{mouse_standard_flag}#{mouse_button_flag}'; }
start s7 ""
if wait_for s7 "phone.pftrace" 15; then
	off1=$(mouse_flag s7)
	T send-keys -t s7 F9
	wait_for s7 "Mouse on" 5
	on=$(mouse_flag s7)
	T send-keys -t s7 F9
	wait_for s7 "Mouse off" 5
	off2=$(mouse_flag s7)
	if [ "$off1" = 000 ] && [ "$on" != 000 ] && [ "$off2" = 000 ]; then echo "PASS: tmux-mouse-off"
	else echo "FAIL: tmux-mouse-off: mouse flags off/on/off: $off1/$on/$off2"; fi
else
	echo "FAIL: tmux-mouse-off: did not start"
fi

# 8. with the mouse on, a left click the terminal reports (X10 encoding, as
# tmux sends it to a TERM=screen program) on relay.pftrace's row selects
# it, and the wheel moves the selection.
echo "set mouse = yes" >"$work/mouse.conf"
start s8 "TM_CONFIG=$work/mouse.conf"
. "$here/x10.bash"
if wait_for s8 "phone.pftrace" 15; then
	# relay.pftrace is the list's third file: screen row 5 (1-based)
	T send-keys -t s8 -l "$(x10 0 6 5)$(x10 3 6 5)"
	if wait_for s8 "> 2 relay.pftrace" 5 && wait_for s8 "── relay.pftrace" 5; then
		T send-keys -t s8 -l "$(x10 64 6 5)"
		if wait_for s8 "> 1 phone.pftrace" 5; then echo "PASS: tmux-mouse-click"
		else echo "FAIL: tmux-mouse-click: the wheel did not move the selection: $(T capture-pane -p -t s8 | head -6 | tr '\n' ' ')"; fi
	else
		echo "FAIL: tmux-mouse-click: the click did not select relay.pftrace: $(T capture-pane -p -t s8 | head -6 | tr '\n' ' ')"
	fi
else
	echo "FAIL: tmux-mouse-click: did not start"
fi

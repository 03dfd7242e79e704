#!/usr/bin/env bash
# The workbench never destroys a file and never loses work:
#  - e (save manifest) and w (write TAR) never write over an input (by its
#    name, "../" or a symlink), and ask before replacing any other file;
#  - a replaced file keeps its mode.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BIN=${TM_BIN:-$top/build/asan/tracemerge}
[ -x "$BIN" ] || { echo "FAIL: outputs: no binary at $BIN"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LC_ALL=C.UTF-8 TZ=UTC HOME="$work/home" XDG_CONFIG_HOME="$work/c" XDG_STATE_HOME="$work/state" \
	XDG_DATA_HOME="$work/d" TM_CONFIG=$here/nocache.rc INPUTRC=/dev/null TM_HEADLESS=1 LINES=24 COLUMNS=80 \
	TMPDIR="$work"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:exitcode=99}
unset TM_SCRIPT NO_COLOR TMUX STY TM_KEEP_DEMO
mkdir -p "$HOME"
printf ':quit-now\n' >"$work/s0"
TM_KEEP_DEMO=1 "$BIN" --demo --script "$work/s0" >/dev/null 2>&1
mv "$(ls -d "$work"/tracemerge-demo-* | head -1)" "$work/demo"
rm -f "$work/demo/perfetto_manifest.json"
d="$work/demo"
files="$d/phone.pftrace $d/watch.pftrace $d/relay.pftrace $d/app.json"
# Without the manifest app.json is placed automatically and shown 5 ms after
# phone.pftrace's start: ':offset -50ms' moves it from where it is shown
# (cef39b1), so its clocks entry is -45 ms (-70ms: -65 ms).
sum=$(md5sum "$d/app.json")
ln -s "$d/app.json" "$work/link.json"
mkdir -p "$work/cwd"
run() { # name, script lines...: runs the workbench on the demo's files
	local name=$1
	shift
	printf '%s\n' "$@" >"$work/$name.s"
	# shellcheck disable=SC2086
	(cd "$work/cwd" && timeout 60 "$BIN" --script "$work/$name.s" $files >"$work/$name.out" 2>"$work/$name.err")
}

# 1. e and w onto an input, by any name: refused, the trace untouched.
for key in e w; do
	for p in "$d/app.json" "$work/cwd/../demo/app.json" "$work/link.json"; do
		run "in-$key" ':select app.json' ':offset -50ms' "$key" "<C-u>$p<Enter>" \
			":dump-screen $work/in-$key.screen" ':quit-now'
		if [ "$(md5sum "$d/app.json")" = "$sum" ] && grep -q 'input is never written over' "$work/in-$key.screen" &&
			! grep -q 'Overwrite' "$work/in-$key.screen" && [ -L "$work/link.json" ]; then
			echo "PASS: $key-onto-input $(basename "$(dirname "$p")")/$(basename "$p")"
		else
			echo "FAIL: $key-onto-input $p: $(grep -e 'input' -e Wrote -e Over "$work/in-$key.screen" | head -2)"
		fi
	done
done

# 2. e onto another existing file: asked; n keeps it, y replaces it (its
#    mode kept).
printf 'mine' >"$work/m.json"
chmod 640 "$work/m.json"
run ask-n ':select app.json' ':offset -50ms' e "<C-u>$work/m.json<Enter>" \
	":dump-screen $work/ask.screen" n ":dump-screen $work/ask-n.screen" ':quit-now'
if grep -q 'm.json exists. Replace it (its mode kept)? (y/n)' "$work/ask.screen" && [ "$(cat "$work/m.json")" = mine ]; then
	echo "PASS: save-manifest-asks"
else
	echo "FAIL: save-manifest-asks: $(tail -3 "$work/ask.screen" 2>/dev/null) [$(cat "$work/m.json")]"
fi
run ask-y ':select app.json' ':offset -50ms' e "<C-u>$work/m.json<Enter>" y \
	":dump-screen $work/ask-y.screen" ':quit-now'
if grep -q '"offset_ns": -45000000' "$work/m.json" && [ "$(stat -c %a "$work/m.json")" = 640 ]; then
	echo "PASS: save-manifest-replaces-after-yes"
else
	echo "FAIL: save-manifest-replaces-after-yes: $(stat -c %a "$work/m.json") $(head -c 100 "$work/m.json")"
fi

# 3. SIGINT and SIGQUIT save the unsaved edits like SIGTERM and SIGHUP (an
#    external signal: ncurses' own SIGINT handler exited 1, nothing saved).
#    The script is a FIFO held open, so the session waits for its next line.
for sig in INT QUIT; do
	st="$work/state-$sig"
	rm -f "$work/fifo"; mkfifo "$work/fifo"
	(cd "$work/cwd" && XDG_STATE_HOME="$st" timeout 60 "$BIN" --script "$work/fifo" $files \
		>/dev/null 2>"$work/sig-$sig.err"; echo $? >"$work/sig-$sig.rc") &
	exec 7>"$work/fifo"
	printf ':select app.json\n:offset -50ms\n:dump-screen %s/sig-%s.screen\n' "$work" "$sig" >&7
	for _ in $(seq 200); do [ -s "$work/sig-$sig.screen" ] && break; sleep 0.05; done
	pid=$(pgrep -n -f -- "--script $work/fifo")
	kill -s "$sig" "$pid"
	wait $! 2>/dev/null
	exec 7>&-
	rc=$(cat "$work/sig-$sig.rc")
	rec=$(ls "$st"/tracemerge/recovery-*.json 2>/dev/null | head -1)
	want=$((128 + $(kill -l "$sig")))
	if [ "$rc" = "$want" ] && [ -n "$rec" ] && grep -q '"offset_ns": -45000000' "$rec" &&
		grep -q 'edits saved to' "$work/sig-$sig.err"; then echo "PASS: sig$sig-saves-recovery"
	else echo "FAIL: sig$sig-saves-recovery: rc=$rc (want $want) rec=[$rec] $(head -c 200 "$work/sig-$sig.err")"; fi
done

# 4. Ctrl-C in the main view quits as q does: at once when nothing is
#    unsaved, after the question otherwise.
run ctrlc-clean '<C-c>' ":dump-screen $work/ctrlc-not-reached.screen"
rc=$?
[ $rc = 0 ] && [ ! -e "$work/ctrlc-not-reached.screen" ] && echo "PASS: ctrl-c-quits" ||
	echo "FAIL: ctrl-c-quits: rc=$rc"
run ctrlc-dirty ':select app.json' ':offset -50ms' '<C-c>' ":dump-screen $work/ctrlc.screen" y
rc=$?
grep -q 'Edits are not written. Quit anyway? (y/n)' "$work/ctrlc.screen" && [ $rc = 0 ] &&
	echo "PASS: ctrl-c-asks-when-unsaved" || echo "FAIL: ctrl-c-asks-when-unsaved: rc=$rc $(tail -2 "$work/ctrlc.screen")"

# 5. adding (O), renaming (F2) and moving files are unsaved edits: the
#    title says [modified] and q asks; undone, the session is clean again.
printf '{"traceEvents":[{"name":"x","ph":"i","ts":5,"pid":1,"tid":1,"s":"t"}]}' >"$work/extra.json"
for edit in "O|O|<C-u>$work/extra.json<Enter>" "F2|:select relay.pftrace|:rename-file zz.pftrace" \
	"move|:select watch.pftrace|:move-earlier"; do
	name=${edit%%|*}
	keys=${edit#*|}
	first=${keys%%|*}
	keys=${keys#*|}
	run "dirty-$name" "$first" "$keys" ":dump-screen $work/dirty-$name.screen" q \
		":dump-screen $work/dirty-$name-q.screen" n u ":dump-screen $work/dirty-$name-u.screen" ':quit-now'
	if head -1 "$work/dirty-$name.screen" | grep -q '\[modified\]' &&
		grep -q 'Edits are not written. Quit anyway? (y/n)' "$work/dirty-$name-q.screen" &&
		! head -1 "$work/dirty-$name-u.screen" | grep -q '\[modified\]'; then
		echo "PASS: $name-marks-modified"
	else
		echo "FAIL: $name-marks-modified: [$(head -1 "$work/dirty-$name.screen")] [$(tail -3 "$work/dirty-$name-q.screen" | head -1)] [$(head -1 "$work/dirty-$name-u.screen")]"
	fi
done

# 6. One recovery file per session.  A is hung up while B, on the same
#    inputs, is open and clean; B quits: A's file stays (B removed it).
#    Then C, also hung up: two files, each with its own edits.
st="$work/state-rec"
export XDG_STATE_HOME="$st"
rm -f "$work/fifo"; mkfifo "$work/fifo"
(cd "$work/cwd" && timeout 60 "$BIN" --script "$work/fifo" $files >/dev/null 2>&1) &
exec 7>"$work/fifo"
printf ':dump-screen %s/b-open.screen\n' "$work" >&7
for _ in $(seq 200); do [ -s "$work/b-open.screen" ] && break; sleep 0.05; done
run rec-a ':select app.json' ':offset -50ms' ':raise HUP'
printf ':quit-now\n' >&7
exec 7>&-
wait $!
n=$(ls "$st"/tracemerge/recovery-*.json 2>/dev/null | wc -l)
[ "$n" = 1 ] && grep -q '"offset_ns": -45000000' "$st"/tracemerge/recovery-*.json &&
	echo "PASS: recovery-not-removed-by-another-session" ||
	echo "FAIL: recovery-not-removed-by-another-session: $n files: $(ls "$st/tracemerge" 2>&1)"
sleep 1 # a newer file by its time
run rec-c '<Esc>' ':select app.json' ':offset -70ms' ':raise HUP'
n=$(ls "$st"/tracemerge/recovery-*.json 2>/dev/null | wc -l)
if [ "$n" = 2 ] && grep -l '"offset_ns": -45000000' "$st"/tracemerge/recovery-*.json >/dev/null &&
	grep -l '"offset_ns": -65000000' "$st"/tracemerge/recovery-*.json >/dev/null; then
	echo "PASS: recovery-one-file-per-session"
else
	echo "FAIL: recovery-one-file-per-session: $n files $(cat "$work/rec-c.err" | head -c 200)"
fi

# 7. The next start offers them all, newest first, with their time and
#    what they change; Esc keeps one for later, y restores the next; at
#    exit only the restored file is removed.
run rec-d ":dump-screen $work/offer-1.screen" '<Esc>' ":dump-screen $work/offer-2.screen" y \
	":dump-screen $work/offer-3.screen" ':quit-now'
if grep -q 'Restore edits of [0-9-]* [0-9:]* (1/2: phone.pftrace, app.json)? y/n/Esc' "$work/offer-1.screen" &&
	grep -q '(2/2: phone.pftrace, app.json)' "$work/offer-2.screen" && grep -q -- '-45 ms' "$work/offer-3.screen" &&
	[ "$(ls "$st"/tracemerge/recovery-*.json | wc -l)" = 1 ] &&
	grep -q '"offset_ns": -65000000' "$st"/tracemerge/recovery-*.json; then
	echo "PASS: recovery-all-offered-newest-first"
else
	echo "FAIL: recovery-all-offered-newest-first: [$(grep -m1 Restore "$work/offer-1.screen")] [$(grep -m1 Restore "$work/offer-2.screen")] $(ls "$st/tracemerge")"
fi
# n discards it
run rec-e n ':quit-now'
[ -z "$(ls -A "$st/tracemerge")" ] && echo "PASS: recovery-n-discards" ||
	echo "FAIL: recovery-n-discards: $(ls "$st/tracemerge")"

# 8. Files added, renamed and moved are recovered too.
run rec-f O "<C-u>$work/extra.json<Enter>" ':select relay.pftrace' ':rename-file zz.pftrace' ':raise HUP'
run rec-g ":dump-screen $work/offer-g.screen" y ":dump-screen $work/rec-g.screen" ':quit-now'
if grep -q 'zz.pftrace' "$work/rec-g.screen" && grep -q 'extra.json' "$work/rec-g.screen" &&
	grep -q '5 files (4 now)' "$work/offer-g.screen" &&
	[ -z "$(ls -A "$st/tracemerge")" ]; then
	echo "PASS: recovery-restores-file-set"
else
	echo "FAIL: recovery-restores-file-set: [$(grep -m1 Restore "$work/offer-g.screen")] $(head -8 "$work/rec-g.screen" | tail -5 | tr '\n' ' ') [$(ls -A "$st/tracemerge")]"
fi

# 9. No HOME and no XDG_STATE_HOME: each session's own file in the current
#    directory, never one shared ./tracemerge-recovery.json.
mkdir -p "$work/nohome"
for off in -50ms -70ms; do
	# (the second is offered the first's file: Esc keeps it)
	printf '<Esc>\n:select app.json\n:offset %s\n:raise HUP\n' "$off" >"$work/nohome.s"
	# shellcheck disable=SC2086
	(cd "$work/nohome" && env -u HOME -u XDG_STATE_HOME timeout 60 "$BIN" --script "$work/nohome.s" $files \
		>/dev/null 2>"$work/nohome.err")
done
n=$(ls "$work/nohome"/tracemerge-recovery-*.json 2>/dev/null | wc -l)
[ "$n" = 2 ] && [ ! -e "$work/nohome/tracemerge-recovery.json" ] && echo "PASS: recovery-no-home-own-file" ||
	echo "FAIL: recovery-no-home-own-file: $(ls -A "$work/nohome") $(head -c 200 "$work/nohome.err")"

# 10. w after a write that was killed: the temp file it left beside the
#     output is removed, and the message says so.
: >"$work/cwd/.m.tar.tmp-AbCdEf"
run stale-w w '<C-u>m.tar<Enter>' ":dump-screen $work/stale-w.screen" ':quit-now'
if [ -s "$work/cwd/m.tar" ] && [ ! -e "$work/cwd/.m.tar.tmp-AbCdEf" ] &&
	grep -q 'Wrote m.tar.*; removed 1 stale temp file' "$work/stale-w.screen"; then
	echo "PASS: w-removes-stale-temp"
else
	echo "FAIL: w-removes-stale-temp: $(ls -A "$work/cwd") $(grep -m1 Wrote "$work/stale-w.screen")"
fi

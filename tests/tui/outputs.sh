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
if grep -q 'File exists. Overwrite? (y/n)' "$work/ask.screen" && [ "$(cat "$work/m.json")" = mine ]; then
	echo "PASS: save-manifest-asks"
else
	echo "FAIL: save-manifest-asks: $(tail -3 "$work/ask.screen" 2>/dev/null) [$(cat "$work/m.json")]"
fi
run ask-y ':select app.json' ':offset -50ms' e "<C-u>$work/m.json<Enter>" y \
	":dump-screen $work/ask-y.screen" ':quit-now'
if grep -q '"offset_ns": -50000000' "$work/m.json" && [ "$(stat -c %a "$work/m.json")" = 640 ]; then
	echo "PASS: save-manifest-replaces-after-yes"
else
	echo "FAIL: save-manifest-replaces-after-yes: $(stat -c %a "$work/m.json") $(head -c 100 "$work/m.json")"
fi

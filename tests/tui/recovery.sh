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
	XDG_DATA_HOME="$work/d" TM_CONFIG=$here/nocache.rc INPUTRC=/dev/null TM_HEADLESS=1 LINES=24 COLUMNS=80 \
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

# The recovery file is private (0600), and "saved" is said only when it was.
printf ':select app.json\n:offset -50ms\n:raise TERM\n' >"$work/s3"
rm -rf "$work/state"
"$BIN" --script "$work/s3" $files >/dev/null 2>"$work/err3"
rec=$(ls "$work"/state/tracemerge/recovery-*.json 2>/dev/null | head -1)
if [ -n "$rec" ] && [ "$(stat -c %a "$rec")" = 600 ]; then echo "PASS: recovery-mode-0600"
else echo "FAIL: recovery-mode-0600: $(stat -c %a "$rec" 2>&1)"; fi
rm -rf "$work/state"

# The state directory cannot take the file: a file where the directory
# should be, or a read-only directory. The edits go to the current
# directory, and the message says where.
for kind in file readonly; do
	cwd="$work/cwd-$kind"; mkdir -p "$cwd"; rm -rf "$work/state"
	if [ "$kind" = file ]; then mkdir -p "$work/state"; : >"$work/state/tracemerge"
	else mkdir -p "$work/state/tracemerge"; chmod 555 "$work/state/tracemerge"; fi
	(cd "$cwd" && "$BIN" --script "$work/s3" $files >/dev/null 2>"$work/err-$kind")
	saved=$(ls "$cwd"/tracemerge-recovery-*.json 2>/dev/null | head -1)
	if [ "$(id -u)" = 0 ] && [ "$kind" = readonly ]; then
		# root writes into a read-only directory: the first place works
		if grep -q "edits saved to $work/state/tracemerge/" "$work/err-$kind"; then echo "PASS: recovery-$kind"
		else echo "FAIL: recovery-$kind: $(head -c 300 "$work/err-$kind")"; fi
	elif [ -n "$saved" ] && grep -q '"offset_ns": -50000000' "$saved" &&
		grep -q "edits saved to tracemerge-recovery-" "$work/err-$kind"; then echo "PASS: recovery-$kind"
	else echo "FAIL: recovery-$kind: $(head -c 300 "$work/err-$kind")"; fi
	chmod -R u+w "$work/state" 2>/dev/null
done
rm -rf "$work/state"

# Nowhere to write (no HOME, no XDG_STATE_HOME, an unwritable current
# directory: as root, a directory on /proc): the manifest is printed instead
# of a false "saved".
(cd /proc && env -u HOME -u XDG_STATE_HOME "$BIN" --script "$work/s3" $files >/dev/null 2>"$work/err5")
if grep -q 'could not save the edits' "$work/err5" && grep -q '"offset_ns": -50000000' "$work/err5" &&
	! grep -q 'edits saved' "$work/err5"; then echo "PASS: recovery-nowhere"
else echo "FAIL: recovery-nowhere: $(head -c 300 "$work/err5")"; fi

# Saving the manifest (e) onto a FIFO is refused, not replaced by a file.
mkfifo "$work/fifo"
printf 'e\n<C-u>%s/fifo<Enter>\n:dump-screen %s/fifo.screen\n:quit-now\n' "$work" "$work" >"$work/s6"
"$BIN" --script "$work/s6" $files >/dev/null 2>"$work/err6"
if [ -p "$work/fifo" ] && grep -qi 'not a regular file\|refus' "$work/fifo.screen" 2>/dev/null; then echo "PASS: save-manifest-fifo"
else echo "FAIL: save-manifest-fifo: $(ls -l "$work/fifo"; grep -i fifo "$work/fifo.screen" 2>/dev/null | head -2)"; fi

# A recovery manifest larger than 64 KiB is restored whole (it was read into a
# 64 KiB buffer: cut short, a parse error, the edits lost).
printf ':select app.json\n:offset -50ms\n:raise TERM\n' >"$work/s7"
rm -rf "$work/state"
"$BIN" --script "$work/s7" $files >/dev/null 2>"$work/err7"
rec=$(ls "$work"/state/tracemerge/recovery-*.json 2>/dev/null | head -1)
if [ -n "$rec" ] && python3 - "$rec" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["perfetto_manifest"]["attributes"] = {"pad%d" % i: "v" * 100 for i in range(1000)}
json.dump(d, open(p, "w"), indent=2)
PY
then
	size=$(stat -c %s "$rec")
	printf 'y\n:dump-screen %s/big.screen\n:quit-now\n' "$work" >"$work/s8"
	"$BIN" --script "$work/s8" $files >/dev/null 2>"$work/err8"
	if [ "$size" -gt 65536 ] && grep -q -- '-50 ms' "$work/big.screen" 2>/dev/null &&
		! grep -q 'recovery:' "$work/big.screen"; then echo "PASS: recovery-big-manifest"
	else echo "FAIL: recovery-big-manifest: $size bytes: $(grep -m2 -e 'recovery' -e app.json "$work/big.screen" 2>/dev/null | tr '\n' ' ')"; fi
else
	echo "FAIL: recovery-big-manifest: no recovery file to enlarge"
fi

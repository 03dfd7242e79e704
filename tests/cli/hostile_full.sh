#!/usr/bin/env bash
# A full disk: every write is checked, nothing says "saved" or "wrote" that
# was not, and what was there before is left as it was.
#  - the workbench's recovery file on a full state directory: it falls back
#    to the current directory and says so; with that full too, it prints the
#    manifest and says why it could not save;
#  - the workbench's manifest save (e) onto a full disk: an error, the old
#    file kept;
#  - merge -o onto a full disk: an error, no temp file left;
#  - check, ls and manifest with stdout a file on a full disk: non-zero exit.
# The full disk is a tiny tmpfs, filled up, in a private mount namespace
# (unshare -m as root, unshare -Urm otherwise); SKIP when neither works.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
TM=${TM_BIN:-$top/build/asan/tracemerge}
case $TM in /*) ;; *) TM=$PWD/$TM;; esac
[ -x "$TM" ] || { echo "FAIL: hostile_full: no binary at $TM"; exit 0; }

if [ -z "${TM_FULL_NS:-}" ]; then
	for u in "unshare -m --propagation private" "unshare -Urm --propagation private"; do
		# shellcheck disable=SC2086
		if $u sh -c 'd=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d" && umount "$d" && rmdir "$d"' \
			2>/dev/null; then
			# shellcheck disable=SC2086
			TM_FULL_NS=1 TM_BIN=$TM exec $u bash "$0" "$@"
		fi
	done
	echo "SKIP: hostile_full: cannot mount a tmpfs in a private mount namespace (unshare -m / -Urm)"
	exit 0
fi

t=$(mktemp -d)
full=$t/full
cleanup() { umount "$full" 2>/dev/null; rm -rf "$t"; }
trap cleanup EXIT
ok() { echo "PASS: $1"; }
no() { echo "FAIL: $1: $2"; }
export LC_ALL=C.UTF-8 TZ=UTC HOME="$t/home" XDG_CONFIG_HOME="$t/c" XDG_DATA_HOME="$t/d" \
	XDG_CACHE_HOME="$t/cache" TM_CONFIG=$top/tests/tui/nocache.rc INPUTRC=/dev/null TM_HEADLESS=1 \
	LINES=24 COLUMNS=100 TMPDIR="$t"
unset TM_SCRIPT NO_COLOR TMUX
mkdir -p "$HOME" "$t/cwd"

# fill_up: a fresh 64 KiB tmpfs on $full with $full/state/tracemerge and
# $full/old.json ("old") in it, then every free byte taken.
fill_up() {
	umount "$full" 2>/dev/null
	mkdir -p "$full"
	mount -t tmpfs -o size=64k,mode=0755 tmpfs "$full" || return 1
	mkdir -p "$full/state/tracemerge" "$full/cwd"
	printf old >"$full/old.json"
	dd if=/dev/zero of="$full/fill" bs=4k 2>/dev/null
	# the last partial page, if any
	dd if=/dev/zero of="$full/fill2" bs=1 2>/dev/null
	! printf x >"$full/probe" 2>/dev/null || ! [ -s "$full/probe" ]
}
no_temp_left() { # dir: no hidden temp file of ours
	! ls -A "$1" | grep -q '\.tmp-'
}

fill_up || { echo "SKIP: hostile_full: cannot fill a tmpfs"; exit 0; }
rm -f "$full/probe"

# The demo's files, written once outside the full disk (fixed paths: the
# recovery file's name hashes them).
printf ':quit-now\n' >"$t/s0"
TM_KEEP_DEMO=1 "$TM" --demo --script "$t/s0" >/dev/null 2>&1
demo=$(ls -d "$t"/tracemerge-demo-* | head -1)
# shellcheck disable=SC2012
files=$(ls "$demo"/*.pftrace "$demo"/*.json | sort)
printf ':select app.json\n:offset -50ms\n:raise TERM\n' >"$t/edit"

# 1. the state directory is full: the edits go to the current directory,
#    and the message says so; nothing half-written is left in the state dir.
fill_up
# shellcheck disable=SC2086
(cd "$t/cwd" && XDG_STATE_HOME="$full/state" "$TM" --script "$t/edit" $files >/dev/null 2>"$t/err1"); rc=$?
saved=$(ls "$t/cwd"/tracemerge-recovery-*.json 2>/dev/null | head -1)
left=$(ls -A "$full/state/tracemerge")
if [ $rc = 143 ] && [ -n "$saved" ] && grep -q '"offset_ns": -50000000' "$saved" &&
	grep -q "^tracemerge: edits saved to tracemerge-recovery-" "$t/err1" &&
	! grep -q "edits saved to $full" "$t/err1" && [ -z "$left" ]; then
	ok "recovery: full state directory falls back to the current directory"
else
	no "recovery: full state directory falls back to the current directory" \
		"rc=$rc saved=$saved left in state dir: [$left] $(head -c 300 "$t/err1")"
fi

# 2. the state directory and the current directory both full: no "saved",
#    the reason (ENOSPC) and the manifest itself on stderr.
fill_up
# shellcheck disable=SC2086
(cd "$full/cwd" && XDG_STATE_HOME="$full/state" "$TM" --script "$t/edit" $files >/dev/null 2>"$t/err2"); rc=$?
left="$(ls -A "$full/state/tracemerge")$(ls -A "$full/cwd")"
if [ $rc = 143 ] && ! grep -q 'edits saved' "$t/err2" &&
	grep -q 'could not save the edits (.*No space left on device' "$t/err2" &&
	grep -q '"offset_ns": -50000000' "$t/err2" && [ -z "$left" ]; then
	ok "recovery: nowhere to save on a full disk prints the manifest"
else
	no "recovery: nowhere to save on a full disk prints the manifest" "rc=$rc left: [$left] $(head -c 300 "$t/err2")"
fi

# 3. the manifest save (e) onto a full disk: an error on the screen, the old
#    file as it was, no "Wrote".
fill_up
# (Esc first: the recovery file 1. left in the current directory is offered)
printf '<Esc>\ne\n<C-u>%s/old.json<Enter>\ny\n:dump-screen %s/e.screen\n:quit-now\n' "$full" "$t" >"$t/s3"
# shellcheck disable=SC2086
(cd "$t/cwd" && XDG_STATE_HOME="$t/state" "$TM" --script "$t/s3" $files >/dev/null 2>"$t/err3"); rc=$?
if [ "$(cat "$full/old.json")" = old ] && grep -q 'No space left on device' "$t/e.screen" 2>/dev/null &&
	! grep -q 'Wrote' "$t/e.screen" && no_temp_left "$full"; then
	ok "save manifest (e) on a full disk: an error, the old file kept"
else
	no "save manifest (e) on a full disk: an error, the old file kept" \
		"rc=$rc old.json=[$(head -c 20 "$full/old.json")] $(grep -e '^ERR' -e '^OK' "$t/e.screen" 2>/dev/null | head -2)"
fi

# 4. merge -o onto a full disk: non-zero, the reason, no temp file left,
#    the old file as it was.
fill_up
# shellcheck disable=SC2086
"$TM" merge --force -o "$full/old.json" $files >"$t/o4" 2>&1; rc=$?
if [ $rc != 0 ] && grep -q 'No space left on device' "$t/o4" && [ "$(cat "$full/old.json")" = old ] &&
	no_temp_left "$full"; then
	ok "merge -o on a full disk fails, nothing left"
else
	no "merge -o on a full disk fails, nothing left" "rc=$rc $(head -c 300 "$t/o4") $(ls -A "$full")"
fi

# 5. the reports with stdout a file on the full disk: non-zero, said.
fill_up
: >"$full/report" 2>/dev/null
for cmd in "ls" "ls --json" "check" "check --json" "manifest"; do
	# shellcheck disable=SC2086
	"$TM" $cmd $files >"$full/report" 2>"$t/e5"; rc=$?
	if [ $rc = 2 ] && grep -q "cannot write to standard output: No space left on device" "$t/e5"; then
		ok "$cmd to a file on a full disk fails"
	else
		no "$cmd to a file on a full disk fails" "rc=$rc $(head -c 300 "$t/e5")"
	fi
done

#!/usr/bin/env bash
# The one rule for every path the batch commands write (merge -o, align
# --apply/--solve -o; engine/session/output.c): never an input (by any name: "../",
# a symlink, a hard link), never replaced without --force, the umask for new
# files and the old mode for replaced ones, stale temp files of a killed
# write removed (and said), a file size limit a message rather than a silent
# SIGXFSZ death.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
TM=${TM_BIN:-$top/build/asan/tracemerge}
case $TM in /*) ;; *) TM=$PWD/$TM;; esac
[ -x "$TM" ] || { echo "FAIL: outputs: no binary at $TM"; exit 0; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
export LC_ALL=C.UTF-8 HOME="$t/home" XDG_CACHE_HOME="$t/cache" TMPDIR="$t"
ok() { echo "PASS: $1"; }
no() { echo "FAIL: $1: $2"; }
tmps() { ls -A "$1" | grep '\.tmp-' ; }

printf ':quit-now\n' >"$t/s0"
TM_KEEP_DEMO=1 TM_HEADLESS=1 "$TM" --demo --script "$t/s0" >/dev/null 2>&1
mv "$(ls -d "$t"/tracemerge-demo-* | head -1)" "$t/demo"
rm -f "$t/demo/perfetto_manifest.json"
cd "$t/demo" || exit 1
ins="phone.pftrace watch.pftrace relay.pftrace app.json"
sum=$(md5sum app.json)

# 1. an input, by its name, through "../", a symlink and a hard link:
#    refused before any work, even with --force, the trace untouched.
ln -s app.json link.json
ln app.json hard.json
for out in app.json ../demo/app.json link.json hard.json; do
	for force in "" --force; do
		# shellcheck disable=SC2086
		o=$("$TM" align --solve $force -o "$out" $ins 2>&1); rc=$?
		if [ $rc = 2 ] && echo "$o" | grep -q 'input is never written over' && [ "$(md5sum app.json)" = "$sum" ] &&
			[ -L link.json ] && [ -z "$(tmps .)" ]; then ok "align --solve $force -o $out refused"
		else no "align --solve $force -o $out refused" "rc=$rc $o"; fi
	done
	# shellcheck disable=SC2086
	o=$("$TM" merge --force -o "$out" $ins 2>&1); rc=$?
	[ $rc = 2 ] && echo "$o" | grep -q 'input is never written over' && [ "$(md5sum app.json)" = "$sum" ] &&
		ok "merge -o $out refused" || no "merge -o $out refused" "rc=$rc $o"
done
rm -f link.json hard.json

# 2. an existing file: refused without --force (exit 64, untouched),
#    replaced with it; for merge and align alike.
printf 'mine' >"$t/keep.tar"
# shellcheck disable=SC2086
o=$("$TM" merge -o "$t/keep.tar" $ins 2>&1); rc=$?
[ $rc = 64 ] && [ "$(cat "$t/keep.tar")" = mine ] && echo "$o" | grep -q 'exists (--force replaces it' &&
	ok "merge -o over a file needs --force" || no "merge -o over a file needs --force" "rc=$rc $o"
# shellcheck disable=SC2086
o=$("$TM" merge --force -o "$t/keep.tar" $ins 2>&1); rc=$?
[ $rc = 0 ] && [ "$(stat -c %s "$t/keep.tar")" -gt 4 ] && ok "merge --force -o replaces it" ||
	no "merge --force -o replaces it" "rc=$rc $o"
printf 'mine' >"$t/keep.json"
# shellcheck disable=SC2086
o=$("$TM" align --solve -o "$t/keep.json" $ins 2>&1); rc=$?
[ $rc = 64 ] && [ "$(cat "$t/keep.json")" = mine ] && ok "align --solve -o over a file needs --force" ||
	no "align --solve -o over a file needs --force" "rc=$rc $o"
# shellcheck disable=SC2086
o=$("$TM" align --apply --force -o "$t/keep.json" $ins 2>&1); rc=$?
grep -q perfetto_manifest "$t/keep.json" && ok "align --apply --force -o replaces it" ||
	no "align --apply --force -o replaces it" "rc=$rc $o"

# 3. permissions: the umask for a new file, the old mode for a replaced one.
# shellcheck disable=SC2086
(umask 077; "$TM" merge -o "$t/new.tar" $ins >/dev/null 2>&1; "$TM" align --solve -o "$t/new.json" $ins >/dev/null 2>&1)
[ "$(stat -c %a "$t/new.tar") $(stat -c %a "$t/new.json")" = "600 600" ] && ok "umask 077: new outputs 0600" ||
	no "umask 077: new outputs 0600" "$(stat -c '%a %n' "$t/new.tar" "$t/new.json" 2>&1)"
chmod 600 "$t/keep.tar"; chmod 640 "$t/keep.json"
# shellcheck disable=SC2086
(umask 022; "$TM" merge --force -o "$t/keep.tar" $ins >/dev/null 2>&1; "$TM" align --solve --force -o "$t/keep.json" $ins >/dev/null 2>&1)
[ "$(stat -c %a "$t/keep.tar") $(stat -c %a "$t/keep.json")" = "600 640" ] && ok "a replaced output keeps its mode" ||
	no "a replaced output keeps its mode" "$(stat -c '%a %n' "$t/keep.tar" "$t/keep.json")"

# 4. a write killed by SIGKILL leaves its hidden temp file; the next write
#    to that path removes it and says so (a sparse 2 GiB input keeps the
#    first one writing until the temp file shows).
mkdir -p "$t/k"
truncate -s 2G "$t/big.bin"
"$TM" merge --no-validate -o "$t/k/m.tar" "$t/big.bin" app.json >/dev/null 2>&1 &
p=$!
disown $p
for _ in $(seq 400); do
	[ -n "$(tmps "$t/k")" ] && break
	sleep 0.05
done
kill -KILL $p 2>/dev/null
for _ in $(seq 400); do
	kill -0 $p 2>/dev/null || break
	sleep 0.05
done
left=$(tmps "$t/k")
# shellcheck disable=SC2086
o=$("$TM" merge -o "$t/k/m.tar" $ins 2>&1); rc=$?
if [ -n "$left" ] && [ $rc = 0 ] && [ -z "$(tmps "$t/k")" ] &&
	echo "$o" | grep -q 'removed 1 stale temp file beside .*/k/m.tar (left by an interrupted write)'; then
	ok "a killed merge's temp file is removed by the next, and said"
else
	no "a killed merge's temp file is removed by the next, and said" "left [$left] rc=$rc now [$(tmps "$t/k")] $o"
fi
# a temp file that is not of our naming, or another's output, stays
: >"$t/k/.other.tar.tmp-abcdef"; : >"$t/k/.m.tar.tmp-x"
# shellcheck disable=SC2086
"$TM" merge --force -o "$t/k/m.tar" $ins >/dev/null 2>&1
[ -e "$t/k/.other.tar.tmp-abcdef" ] && [ -e "$t/k/.m.tar.tmp-x" ] && ok "only our own stale temp files are removed" ||
	no "only our own stale temp files are removed" "$(ls -A "$t/k")"

# 5. a file size limit: a message and exit 2, no temp file, no SIGXFSZ.
mkdir -p "$t/f"
o=$( (ulimit -f 200; "$TM" merge --no-validate -o "$t/f/m.tar" "$t/big.bin" app.json) 2>&1); rc=$?
if [ $rc = 2 ] && echo "$o" | grep -q 'f/m.tar: writing byte .*File too large' && [ -z "$(ls -A "$t/f")" ]; then
	ok "merge under ulimit -f: a message, no temp file"
else
	no "merge under ulimit -f: a message, no temp file" "rc=$rc [$(ls -A "$t/f")] $o"
fi
rm -f "$t/big.bin"

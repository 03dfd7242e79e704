#!/usr/bin/env bash
# The workbench's command-line side: batch messages that name their own
# command, and the workbench run without a terminal.
set -u
TM=${TM_BIN:-build/asan/tracemerge}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS: $1"; }
no() { echo "FAIL: $1: $2"; }
export HOME="$t" XDG_CONFIG_HOME="$t/c" XDG_STATE_HOME="$t/s" XDG_DATA_HOME="$t/d" TM_CONFIG=/dev/null
unset TM_HEADLESS TM_SCRIPT

printf '{"traceEvents":[{"name":"e","ph":"X","ts":10,"dur":5,"pid":1,"tid":1}]}\n' >"$t/a.json"
cp "$t/a.json" "$t/b.json"

# `manifest` reports a bad --machine path as itself, not as `merge:`
o=$("$TM" manifest --machine nope.json=x "$t/a.json" "$t/b.json" 2>&1); rc=$?
[ $rc = 2 ] && echo "$o" | grep -q "^manifest: the manifest names file 'nope.json'" &&
	ok "manifest names itself" || no "manifest names itself" "rc=$rc $o"
o=$("$TM" merge -o "$t/o.tar" --machine nope.json=x "$t/a.json" "$t/b.json" 2>&1); rc=$?
[ $rc = 2 ] && echo "$o" | grep -q "^merge: the manifest names file 'nope.json'" &&
	ok "merge names itself" || no "merge names itself" "rc=$rc $o"

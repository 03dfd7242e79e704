#!/usr/bin/env bash
# check --format md: the report as a markdown table for a bug (issue 28),
# the same figures as --json, every name escaped for the terminal and for
# markdown (a | in a name cannot split a table cell); --events gives each
# event the track the workbench's tracks view shows it on.
set -u
TM=${TM_BIN:-build/asan/tracemerge}
case $TM in /*) ;; *) TM=$PWD/$TM ;; esac
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS: $1"; }
no() { echo "FAIL: $1: $2"; }
export HOME="$t" XDG_CACHE_HOME="$t/cache"

# two files, one with a hostile name and an event before zero (dropped)
bad=$'p|ipe`tick\e[31m.json'
printf '{"traceEvents":[{"name":"a","ph":"X","ts":10,"dur":5,"pid":1,"tid":1},{"name":"c","ph":"C","ts":12,"pid":1,"args":{"v":1}}]}\n' >"$t/a.json"
printf '{"traceEvents":[{"name":"a","ph":"X","ts":-10,"dur":5,"pid":2,"tid":3},{"name":"a","ph":"X","ts":20,"dur":5,"pid":2,"tid":3}]}\n' >"$t/$bad"

md=$("$TM" check --format md "$t/a.json" "$t/$bad" 2>/dev/null); rc=$?
"$TM" check "$t/a.json" "$t/$bad" >/dev/null 2>&1; rc_text=$?
json=$("$TM" check --json --events "$t/a.json" "$t/$bad" 2>/dev/null)
[ $rc = $rc_text ] && ok "md: the exit status of check" || no "md: the exit status of check" "$rc vs $rc_text"
echo "$md" | grep -q '^| # | File | Format |' && echo "$md" | grep -q '^|---:|' &&
	ok "md: a files table" || no "md: a files table" "$(echo "$md" | head -8)"
if printf '%s' "$md" | grep -q $'\e'; then no "md: no raw escape" "ESC in output"; else ok "md: no raw escape"; fi
# every table row has the header's number of cells: the | in the name is \|
rows=$(echo "$md" | sed -n '/^| # | File/,/^$/p' | grep '^|' | sed 's/\\|//g' | awk -F'|' '{print NF}' | sort -u)
[ "$rows" = "11" ] && ok "md: a | in a name stays in its cell" || no "md: a | in a name stays in its cell" "cells: $rows"
# the figures are --json's
python3 - "$json" "$md" <<'PY' && ok "md: the figures of --json" || no "md: the figures of --json" "see above"
import json, sys
rep = json.loads(sys.argv[1]); md = sys.argv[2]
dropped = rep["dropped"]
assert ("%d event" % dropped) in md and "would be dropped" in md or dropped == 0, md
for f in rep["files"]:
    if not f["predicted"] or f["path"] is None:
        continue
    cells = "| %d | %d | %d |" % (f["events"], f["dropped"], f["missing"])
    assert cells in md, (cells, md)
PY
# --events: each event on a track "FILE#N" with its kind; the counter has
# a track of its own
python3 - "$json" <<'PY' && ok "events: track identity" || no "events: track identity" "see above"
import json, sys
rep = json.loads(sys.argv[1])
tr = {}
for e in rep["events"]:
    assert e["track"] is not None and "#" in e["track"], e
    assert e["track"].split("#")[0] == e["file"], e
    tr.setdefault(e["track"], set()).add(e["track_kind"])
assert "a.json#1" in tr and tr["a.json#1"] == {"slices"}, tr
assert "a.json#2" in tr and tr["a.json#2"] == {"counter"}, tr
PY
"$TM" check --format nope "$t/a.json" >/dev/null 2>&1
[ $? = 64 ] && ok "md: an unknown format is a usage error" || no "md: an unknown format is a usage error" "status $?"

#!/usr/bin/env bash
# A saved scan never changes an answer: for every conformance case
# (tests/conformance/cases/*/input.*) and every hostile input
# (tests/cli/hostile/), `check --json` (and `check --json --events` on a
# third of them) with a cold cache (the scan saved),
# a warm one (the scan loaded) and --no-cache prints the same bytes and
# exits the same (issue 26).  The inputs are copied and left to age past
# the racy window (a file changed within 2 s is not saved), and the test
# counts how many warm runs really loaded a saved scan, so that it cannot
# pass by saving nothing.
set -u
TM=${TM_BIN:-build/asan/tracemerge}
TM=$(cd "$(dirname "$TM")" && pwd)/$(basename "$TM")
top=$(cd "$(dirname "$0")/../.." && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS: $1"; }
no() { echo "FAIL: $1: $2"; }
export XDG_CACHE_HOME="$t/cache" TM_CONFIG=/dev/null HOME="$t/home" XDG_CONFIG_HOME="$t/config"
C="$t/cache/tracemerge"
mkdir -p "$t/in" "$t/home"
n=0
for f in "$top"/tests/conformance/cases/*/input.* "$top"/tests/cli/hostile/*; do
	case $f in *.md) continue ;; esac
	[ -f "$f" ] || continue
	c=${f%/*}
	c=${c##*/}
	case $f in */tests/cli/hostile/*) c=hostile ;; esac
	mkdir -p "$t/in/$c"
	cp "$f" "$t/in/$c/"
	n=$((n + 1))
done
# older than the racy window (mtime and ctime)
sleep 3

bad=0 loaded=0 runs=0 k=0
stamp() { stat -c %Y.%y "$C"/*.tmscan 2>/dev/null | sort | md5sum; }
for f in "$t"/in/*/*; do
	# --events (a saved scan of its own, with the events' details) on
	# every third input: the whole set twice over is ~2x the time
	k=$((k + 1))
	evs=("")
	[ $((k % 3)) = 0 ] && evs+=(--events)
	for ev in "${evs[@]}"; do
		rm -rf "$C"
		"$TM" check --json $ev "$f" >"$t/a" 2>/dev/null
		ra=$?
		s1=$(stamp)
		"$TM" check --json $ev "$f" >"$t/b" 2>/dev/null
		rb=$?
		s2=$(stamp)
		"$TM" check --json --no-cache $ev "$f" >"$t/c" 2>/dev/null
		rc=$?
		runs=$((runs + 1))
		[ "$s1" != "$s2" ] && loaded=$((loaded + 1))
		if [ $ra != $rb ] || [ $ra != $rc ] || ! cmp -s "$t/a" "$t/b" || ! cmp -s "$t/a" "$t/c"; then
			bad=$((bad + 1))
			no "cold, warm and --no-cache agree: ${f#"$t"/in/} $ev" \
				"exit $ra/$rb/$rc $(diff "$t/a" "$t/b" | head -4) $(diff "$t/a" "$t/c" | head -4)"
		fi
	done
done
[ "$bad" = 0 ] && ok "cold, warm and --no-cache check --json agree on $n inputs ($runs runs, --events on every third)"
# most inputs are scanned and saved; those refused before a scan (the
# archive fails to open) have nothing to load
[ "$loaded" -ge $((runs * 3 / 4)) ] && ok "the warm runs loaded saved scans ($loaded of $runs)" ||
	no "the warm runs loaded saved scans" "only $loaded of $runs"

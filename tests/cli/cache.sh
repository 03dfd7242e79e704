#!/usr/bin/env bash
# The scan cache end to end: a reopened input gives byte-identical
# `check --json` output (demo, generated proto/JSON/systrace, a TAR of several
# members); a damaged saved scan is ignored with a message; --no-cache and
# `set cache = no` neither read nor write it.
set -u
TM=${TM_BIN:-build/asan/tracemerge}
TM=$(cd "$(dirname "$TM")" && pwd)/$(basename "$TM")
GEN="$(dirname "$TM")/tools/bench_tm"
[ -x "$GEN" ] || GEN="$(dirname "${TM_BIN_REL:-$TM}")/tools/bench_tm"
if [ ! -x "$GEN" ]; then
	echo "SKIP: the scan cache: no tools/bench_tm beside $TM to generate inputs"
	exit 0
fi
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS: $1"; }
no() { echo "FAIL: $1: $2"; }
export XDG_CACHE_HOME="$t/cache" TM_CONFIG=/dev/null HOME="$t/home" XDG_CONFIG_HOME="$t/config"
C="$t/cache/tracemerge"

mkdir -p "$t/demotmp" "$t/home"
: >"$t/empty.script"
TMPDIR="$t/demotmp" TM_KEEP_DEMO=1 TM_HEADLESS=1 "$TM" --demo --script "$t/empty.script" >/dev/null 2>&1
mv "$t"/demotmp/tracemerge-demo-* "$t/demo"
"$GEN" gen-proto "$t/gen.pftrace" 2 >/dev/null
"$GEN" gen-json "$t/gen.json" 1 >/dev/null
"$GEN" gen-systrace "$t/gen.systrace" 1 >/dev/null
"$TM" merge -o "$t/several.tar" --reproducible "$t"/demo/*.pftrace "$t/demo/app.json" "$t/gen.json" >/dev/null 2>&1
# Files changed within the last 2 s are not saved (their timestamps could
# hide a second change): let them age.
sleep 3

stamp() { stat -c %y "$C"/*.tmscan 2>/dev/null | sort | md5sum; }

# name, inputs...: fresh, then reopened (loaded: the files are touched), then
# without the cache: the same bytes every time
same3() {
	local name=$1
	shift
	rm -rf "$C"
	"$TM" check --json "$@" >"$t/a.json" 2>"$t/a.err"
	local n
	n=$(ls "$C"/*.tmscan 2>/dev/null | wc -l)
	local s1
	s1=$(stamp)
	"$TM" check --json "$@" >"$t/b.json" 2>"$t/b.err"
	local s2
	s2=$(stamp)
	"$TM" check --json --no-cache "$@" >"$t/c.json" 2>"$t/c.err"
	if [ "$n" -ge 1 ] && [ "$s1" != "$s2" ] && cmp -s "$t/a.json" "$t/b.json" &&
		cmp -s "$t/a.json" "$t/c.json" && [ ! -s "$t/b.err" ]; then
		ok "$name: reopened from the cache, byte-identical"
	else
		no "$name: reopened from the cache, byte-identical" \
			"saved=$n loaded=$([ "$s1" != "$s2" ] && echo yes || echo no) $(diff "$t/a.json" "$t/b.json" | head -5) $(head -c 300 "$t/b.err")"
	fi
}

same3 "demo" "$t"/demo/*
same3 "proto" "$t/gen.pftrace"
same3 "json" "$t/gen.json"
same3 "systrace" "$t/gen.systrace"
same3 "tar of several members" "$t/several.tar"
same3 "loose set" "$t/gen.pftrace" "$t/gen.json" "$t/gen.systrace"

# The workbench's rename/reorder reopens each file as a link with another
# name in a new folder: the saved scan of the file it leads to is loaded
# (no second saved file) and the report differs only in the names.
rm -rf "$C"
mkdir -p "$t/ln"
ln -sf "$t/gen.pftrace" "$t/ln/renamed.pftrace"
ln -sf "$t/gen.json" "$t/ln/other.json"
"$TM" check --json "$t/gen.pftrace" "$t/gen.json" >"$t/a.json" 2>"$t/a.err"
n1=$(ls "$C"/*.tmscan 2>/dev/null | wc -l)
s1=$(stamp)
"$TM" check --json "$t/ln/renamed.pftrace" "$t/ln/other.json" >"$t/b.json" 2>"$t/b.err"
n2=$(ls "$C"/*.tmscan 2>/dev/null | wc -l)
s2=$(stamp)
if [ "$n1" = 2 ] && [ "$n2" = 2 ] && [ "$s1" != "$s2" ] && [ ! -s "$t/b.err" ] &&
	sed 's/renamed\.pftrace/gen.pftrace/g; s/other\.json/gen.json/g' "$t/b.json" | cmp -s - "$t/a.json"; then
	ok "a renamed input (a link elsewhere) loads its saved scan"
else
	no "a renamed input (a link elsewhere) loads its saved scan" \
		"saved=$n1 then $n2 loaded=$([ "$s1" != "$s2" ] && echo yes || echo no) $(head -c 300 "$t/b.err")"
fi
"$TM" check --json "$t/ln/other.json" "$t/ln/renamed.pftrace" >"$t/b.json" 2>"$t/b.err"
"$TM" check --json --no-cache "$t/ln/other.json" "$t/ln/renamed.pftrace" >"$t/c.json" 2>&1
n3=$(ls "$C"/*.tmscan 2>/dev/null | wc -l)
[ "$n3" = 2 ] && cmp -s "$t/b.json" "$t/c.json" && [ ! -s "$t/b.err" ] &&
	ok "a reordered set loads its saved scans" ||
	no "a reordered set loads its saved scans" "saved=$n3 $(diff "$t/b.json" "$t/c.json" | head -3)"
# a saved scan whose texts name its path is not used under another path
head -c 3000 "$t/gen.json" | gzip -n | head -c 200 >"$t/cut.json.gz"
ln -sf "$t/cut.json.gz" "$t/ln/cut2.json.gz"
touch -d '-1 min' "$t/cut.json.gz"
sleep 3
rm -rf "$C"
"$TM" check --json "$t/gen.pftrace" "$t/cut.json.gz" >/dev/null 2>&1
had=$(cat "$C"/*.tmscan 2>/dev/null | grep -ac "cut\.json\.gz: (decompressed)")
"$TM" check --json "$t/gen.pftrace" "$t/ln/cut2.json.gz" >"$t/b.json" 2>&1
"$TM" check --json --no-cache "$t/gen.pftrace" "$t/ln/cut2.json.gz" >"$t/c.json" 2>&1
has=$(cat "$C"/*.tmscan 2>/dev/null | grep -ac "cut2\.json\.gz: (decompressed)")
[ "$had" -ge 1 ] && [ "$has" -ge 1 ] && cmp -s "$t/b.json" "$t/c.json" &&
	ok "a saved scan naming its path is scanned again under another" ||
	no "a saved scan naming its path is scanned again under another" "had=$had has=$has"

# damage: one byte in the middle of the saved scan
rm -rf "$C"
"$TM" check --json "$t/gen.pftrace" >"$t/a.json" 2>/dev/null
f=$(ls "$C"/*.tmscan)
sz=$(stat -c %s "$f")
printf '\xff' | dd of="$f" bs=1 seek=$((sz / 2)) conv=notrunc 2>/dev/null
"$TM" check --json "$t/gen.pftrace" >"$t/b.json" 2>"$t/b.err"
if cmp -s "$t/a.json" "$t/b.json" && grep -q "checksum mismatch: ignored" "$t/b.err"; then
	ok "a damaged saved scan is ignored with a message"
else
	no "a damaged saved scan is ignored with a message" "$(head -c 300 "$t/b.err")"
fi
"$TM" check --json "$t/gen.pftrace" >"$t/c.json" 2>"$t/c.err"
cmp -s "$t/a.json" "$t/c.json" && [ ! -s "$t/c.err" ] && ok "the damaged file is replaced" ||
	no "the damaged file is replaced" "$(head -c 300 "$t/c.err")"

# garbage under the right name
printf 'TMSCAN\032\nrubbish' >"$f"
"$TM" check --json "$t/gen.pftrace" >"$t/b.json" 2>"$t/b.err"
cmp -s "$t/a.json" "$t/b.json" && grep -q "ignored" "$t/b.err" && ok "garbage is ignored" ||
	no "garbage is ignored" "$(head -c 300 "$t/b.err")"

# off: neither read nor written
rm -rf "$C"
"$TM" check --json --no-cache "$t/gen.json" >/dev/null 2>&1
[ ! -e "$C" ] && ok "--no-cache writes nothing" || no "--no-cache writes nothing" "$(ls "$C")"
printf 'set cache = no\n' >"$t/off.rc"
TM_CONFIG="$t/off.rc" "$TM" check --json "$t/gen.json" >/dev/null 2>&1
[ ! -e "$C" ] && ok "set cache = no writes nothing" || no "set cache = no writes nothing" "$(ls "$C")"
# not a terminal: `tracemerge --no-cache FILE` is check too
"$TM" --no-cache "$t/gen.json" </dev/null >"$t/p.out" 2>&1
grep -q "not a terminal" "$t/p.out" && [ ! -e "$C" ] && ok "--no-cache without a terminal" ||
	no "--no-cache without a terminal" "$(head -c 300 "$t/p.out")"

# the cap: files beyond it go, oldest first
printf 'set cache-max-mib = 1\n' >"$t/cap.rc"
for x in gen.pftrace gen.json gen.systrace; do
	TM_CONFIG="$t/cap.rc" "$TM" check --json "$t/$x" >/dev/null 2>&1
done
total=$(cat "$C"/*.tmscan 2>/dev/null | wc -c)
[ "$total" -le 1048576 ] && ok "the cache stays within its cap" || no "the cache stays within its cap" "$total bytes"

# the workbench says where its numbers came from
rm -rf "$C"
printf ':dump-screen %s\n' "$t/wb1.screen" >"$t/wb.script"
printf ':dump-screen %s\n' "$t/wb2.screen" >"$t/wb2.script"
(cd "$t" && TM_HEADLESS=1 LINES=24 COLUMNS=100 timeout 60 "$TM" --script "$t/wb.script" "$t/gen.json" >/dev/null 2>&1)
(cd "$t" && TM_HEADLESS=1 LINES=24 COLUMNS=100 timeout 60 "$TM" --script "$t/wb2.script" "$t/gen.json" >/dev/null 2>&1)
if ! grep -q "scan cache" "$t/wb1.screen" 2>/dev/null && grep -q "loaded from the scan cache" "$t/wb2.screen" 2>/dev/null; then
	ok "the workbench says a scan came from the cache"
else
	no "the workbench says a scan came from the cache" "$(cat "$t/wb2.screen" 2>/dev/null | tail -3)"
fi

# Issue 26: a FIFO under a saved scan's name hung check and the workbench
# (opened blocking); a directory others can write to, or another user's,
# is refused with a note (names are predictable: a planted file or FIFO).
rm -rf "$C"
"$TM" check --json "$t/gen.json" >"$t/a.json" 2>/dev/null
f=$(ls "$C"/*.tmscan)
rm -f "$f" && mkfifo "$f"
timeout -k 5 60 "$TM" check --json "$t/gen.json" >"$t/b.json" 2>"$t/b.err"
rc=$?
[ "$rc" -lt 124 ] && cmp -s "$t/a.json" "$t/b.json" && grep -q "not a private regular file" "$t/b.err" &&
	ok "a FIFO in the cache: check does not hang, says so" ||
	no "a FIFO in the cache: check does not hang, says so" "rc=$rc $(head -c 300 "$t/b.err")"
# (the workbench keeps events: a saved scan of its own)
rm -rf "$C"
(cd "$t" && TM_HEADLESS=1 LINES=24 COLUMNS=160 timeout -k 5 60 "$TM" --script "$t/wb.script" "$t/gen.json" >/dev/null 2>&1)
f=$(ls "$C"/*.tmscan)
rm -f "$f" && mkfifo "$f"
(cd "$t" && TM_HEADLESS=1 LINES=24 COLUMNS=160 timeout -k 5 60 "$TM" --script "$t/wb.script" "$t/gen.json" >/dev/null 2>&1)
rc=$?
[ "$rc" -lt 124 ] && grep -q "not a private regular file" "$t/wb1.screen" 2>/dev/null &&
	ok "a FIFO in the cache: the workbench does not hang, says so" ||
	no "a FIFO in the cache: the workbench does not hang, says so" "rc=$rc $(tail -3 "$t/wb1.screen" 2>/dev/null)"
rm -rf "$C"
"$TM" check --json "$t/gen.json" >"$t/a.json" 2>/dev/null
f=$(ls "$C"/*.tmscan)
s1=$(stamp)
chmod 0777 "$C"
sleep 0.05
"$TM" check --json "$t/gen.json" >"$t/b.json" 2>"$t/b.err"
"$TM" check --json "$t/gen.pftrace" >/dev/null 2>&1
s2=$(stamp)
n=$(ls "$C" | wc -l)
[ "$s1" = "$s2" ] && [ "$n" = 1 ] && cmp -s "$t/a.json" "$t/b.json" &&
	grep -q "can be written by others (owner [0-9]*, mode 777): not used" "$t/b.err" &&
	ok "a cache directory others can write to: refused, said" ||
	no "a cache directory others can write to: refused, said" "files=$n $(head -c 300 "$t/b.err")"
rm -f "$f" && mkfifo "$f"
timeout -k 5 60 "$TM" check --json "$t/gen.json" >"$t/b.json" 2>"$t/b.err"
rc=$?
[ "$rc" -lt 124 ] && cmp -s "$t/a.json" "$t/b.json" && [ -p "$f" ] &&
	ok "a FIFO planted in a cache directory others can write to: not opened" ||
	no "a FIFO planted in a cache directory others can write to: not opened" "rc=$rc $(head -c 300 "$t/b.err")"
(cd "$t" && TM_HEADLESS=1 LINES=24 COLUMNS=160 timeout -k 5 60 "$TM" --script "$t/wb.script" "$t/gen.json" >/dev/null 2>&1)
rc=$?
[ "$rc" -lt 124 ] && grep -q "can be written by others" "$t/wb1.screen" 2>/dev/null &&
	ok "the workbench says the cache directory is refused" ||
	no "the workbench says the cache directory is refused" "rc=$rc $(tail -3 "$t/wb1.screen" 2>/dev/null)"
rm -rf "$C"
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$C" && chmod 0700 "$C" && chown nobody "$C"
	"$TM" check --json "$t/gen.json" >"$t/b.json" 2>"$t/b.err"
	n=$(ls "$C" | wc -l)
	[ "$n" = 0 ] && cmp -s "$t/a.json" "$t/b.json" && grep -q "belongs to another user" "$t/b.err" &&
		ok "another user's cache directory: refused, said" ||
		no "another user's cache directory: refused, said" "files=$n $(head -c 300 "$t/b.err")"
else
	echo "SKIP: another user's cache directory: needs root (chown)"
fi

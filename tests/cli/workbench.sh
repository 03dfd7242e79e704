#!/usr/bin/env bash
# The workbench's command-line side: batch messages that name their own
# command, and the workbench run without a terminal.
set -u
TM=${TM_BIN:-build/asan/tracemerge}
case $TM in /*) ;; *) TM=$PWD/$TM ;; esac
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS: $1"; }
no() { echo "FAIL: $1: $2"; }
export HOME="$t" XDG_CONFIG_HOME="$t/c" XDG_STATE_HOME="$t/s" XDG_DATA_HOME="$t/d" TM_CONFIG="$(cd "$(dirname "$0")/../tui" && pwd)/nocache.rc"
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

# The man page's key list is the action table's (regenerate with
# tracemerge --keys-mdoc), and every action is in the help screen.
top=$(cd "$(dirname "$0")/../.." && pwd)
gen=$("$TM" --keys-mdoc)
man=$(sed -n '/^\.\\" BEGIN KEYS/,/^\.\\" END KEYS/p' "$top/man/tracemerge.1" | sed '1d;$d')
[ -n "$gen" ] && [ "$gen" = "$man" ] && ok "man page keys = action table" ||
	no "man page keys = action table" "$(diff <(echo "$gen") <(echo "$man") | head -5)"
printf '?\n:dump-screen %s\n' "$t/help.screen" >"$t/help.script"
(cd "$t" && TM_HEADLESS=1 TERM=xterm-256color LINES=120 COLUMNS=120 timeout 60 "$TM" --demo --script "$t/help.script" >/dev/null 2>&1)
missing=""
for a in $(echo "$gen" | sed -n 's/^\.It Cm :\([a-z-]*\).*/\1/p'); do
	grep -q " $a " "$t/help.screen" 2>/dev/null || missing="$missing $a"
done
n=$(echo "$gen" | grep -c '^\.It Cm :')
[ -s "$t/help.screen" ] && [ -z "$missing" ] && [ "$n" -gt 40 ] && ok "every action ($n) in help" ||
	no "every action in help" "missing:$missing"

# Not a terminal: the check report and its status (before: curses into a
# pipe, exit 129).
o=$("$TM" "$t/a.json" "$t/b.json" </dev/null 2>"$t/nt.err"); rc=$?
c=$("$TM" check "$t/a.json" "$t/b.json" 2>/dev/null); crc=$?
[ $rc = $crc ] && [ "$o" = "$c" ] && [ -n "$o" ] && grep -q 'not a terminal' "$t/nt.err" &&
	ok "not a terminal: check report" || no "not a terminal: check report" "rc=$rc/$crc $(echo "$o" | head -2)"

# A decimal-comma locale changes neither what the workbench reads nor what
# it shows: a systrace timestamp of more than 16 characters goes through
# strtod (before: "+12345 s", the fraction lost). The locale is compiled
# here from glibc's sources; without them the check is skipped.
if command -v localedef >/dev/null && [ -e /usr/share/i18n/locales/de_DE ] && mkdir -p "$t/loc" &&
	localedef -i de_DE -f UTF-8 "$t/loc/de_DE.UTF-8" >/dev/null 2>&1; then
	printf '# tracer: nop\n  app-1 (    1) [000] ...1  12345.123456789012: tracing_mark_write: B|1|a\n  app-1 (    1) [000] ...1  12346.523456789012: tracing_mark_write: E|1\n' >"$t/l.systrace"
	for loc in C.UTF-8 de_DE.UTF-8; do
		printf ':dump-screen %s\n:quit-now\n' "$t/l-$loc.screen" >"$t/l-$loc.script"
		(cd "$t" && LOCPATH="$t/loc" LC_ALL=$loc TM_HEADLESS=1 TERM=xterm-256color LINES=40 COLUMNS=120 \
			timeout 60 "$TM" --script "$t/l-$loc.script" l.systrace >/dev/null 2>&1)
	done
	grep -q 'range: +12345.123456789 s' "$t/l-C.UTF-8.screen" 2>/dev/null &&
		diff -q "$t/l-C.UTF-8.screen" "$t/l-de_DE.UTF-8.screen" >/dev/null &&
		ok "decimal-comma locale: same screen" ||
		no "decimal-comma locale: same screen" "$(diff "$t/l-C.UTF-8.screen" "$t/l-de_DE.UTF-8.screen" | head -4)"
else
	echo "SKIP: decimal-comma locale: no glibc locale sources to compile de_DE"
fi

#!/usr/bin/env bash
# Replay tests/fuzz/regress/ through the libFuzzer targets that clang built
# with its ASan + UBSan (make fuzz-build, build/fuzz/): clang's UBSan flags
# what gcc's does not (NULL + 0), so make test runs both this and the gcc
# replay (tests/unit/test_fuzz_regress.c).  Each input runs once through the
# target its name starts with, with no UBSan suppressions; open-* inputs are
# known open bugs and print SKIP.
# Usage: tests/fuzz/regress.sh [FUZZ_BUILD_DIR]   (prints PASS/FAIL/SKIP lines)
set -u
FZ=${1:-build/fuzz}
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
if ! [ -x "$FZ/fuzz_input" ]; then
	echo "SKIP: clang fuzz replay: no clang fuzz build in $FZ (clang missing?)"
	exit 0
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for f in tests/fuzz/regress/*; do
	b=${f##*/}
	t=${b#open-}
	t=${t%%-*}
	case $b in open-*)
		echo "SKIP: clang/$b: open bug"
		continue
		;;
	esac
	if ! [ -x "$FZ/$t" ]; then
		echo "FAIL: clang/$b: no target $t"
		continue
	fi
	if ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		"$FZ/$t" -timeout=10 -rss_limit_mb=2048 "$f" >"$log" 2>&1; then
		echo "PASS: clang/$b"
	else
		echo "FAIL: clang/$b: $(grep -m1 -E 'ERROR|runtime error|property|splitting|timeout' "$log")"
	fi
done

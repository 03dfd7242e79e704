#!/usr/bin/env bash
# Run every test and print one summary line: "N passed, N failed, N skipped".
# Usage: tests/run.sh BUILD_SAN_DIR BUILD_REL_DIR
# Each test program or script prints lines "PASS: name", "FAIL: name: why" or
# "SKIP: name: why"; a program that dies without printing counts as one failure.
set -u
SAN=${1:-build/asan}
REL=${2:-build/rel}
TSAN=${3:-}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export TM_BIN="$top/$SAN/tracemerge" TM_BIN_REL="$top/$REL/tracemerge" TM_TOP="$top"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LC_ALL=C.UTF-8 TZ=UTC
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
pass=0 fail=0 skip=0

run_one() { # label cmd...
	local label=$1; shift
	local out="$log/out" rc
	timeout 600 "$@" >"$out" 2>"$log/err"; rc=$?
	local p f s
	p=$(grep -c '^PASS: ' "$out"); f=$(grep -c '^FAIL: ' "$out"); s=$(grep -c '^SKIP: ' "$out")
	grep '^FAIL: ' "$out" | sed "s|^|[$label] |"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "[$label] FAIL: exited with status $rc"; f=1
		tail -n 20 "$log/err" | sed "s|^|[$label]   |"
	elif [ "$rc" -ne 0 ]; then
		tail -n 10 "$log/err" | sed "s|^|[$label]   |"
	fi
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	printf '%-28s %4d passed %3d failed %3d skipped\n' "$label" "$p" "$f" "$s"
}

for t in "$SAN"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "unit/$(basename "$t")" "$t"
done
for t in tests/cli/*.sh tests/tui/*.sh; do
	[ -f "$t" ] || continue
	run_one "$(basename "$(dirname "$t")")/$(basename "$t" .sh)" bash "$t"
done
run_one "conformance" python3 tests/conformance/run.py "$TM_BIN"
if [ -n "$TSAN" ] && [ -x "$TSAN/tests/test_replay_fast" ]; then
	# the parallel member scan under ThreadSanitizer
	TSAN_OPTIONS=halt_on_error=1:exitcode=66 run_one "tsan/test_replay_fast" "$TSAN/tests/test_replay_fast"
	TSAN_OPTIONS=halt_on_error=1:exitcode=66 TM_BIN="$top/$TSAN/tracemerge" run_one "tsan/cli" bash tests/cli/batch.sh
fi
run_one "layers+man" bash tests/static.sh "$SAN"

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

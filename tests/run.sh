#!/usr/bin/env bash
# Run every test and print one summary line: "N passed, N failed, N skipped".
# Usage: tests/run.sh BUILD_SAN_DIR BUILD_REL_DIR [BUILD_TSAN_DIR]
# Each test program or script prints lines "PASS: name", "FAIL: name: why" or
# "SKIP: name: why"; a program that dies without printing counts as one failure.
# Independent programs run TEST_JOBS at a time (default 2: this box's cores);
# results are printed in a fixed order, each with its elapsed seconds (for
# finding where the time goes; nothing asserts on it).
set -u
SAN=${1:-build/asan}
REL=${2:-build/rel}
TSAN=${3:-}
J=${TEST_JOBS:-2}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export TM_BIN="$top/$SAN/tracemerge" TM_BIN_REL="$top/$REL/tracemerge" TM_TOP="$top"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export LC_ALL=C.UTF-8 TZ=UTC
t_start=$(date +%s)
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
# python3 behind a version manager's shim (pyenv) costs a shell and the
# manager on every start: the tests call the interpreter it resolves to.
py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -n "$py" ] && [ -x "$py" ] && [ "$py" != "$(command -v python3)" ]; then
	mkdir -p "$log/bin" && ln -s "$py" "$log/bin/python3" && export PATH="$log/bin:$PATH"
fi
# The suite's saved scans stay in its own dir, never in the user's cache.
export XDG_CACHE_HOME="$log/cache"
pass=0 fail=0 skip=0 sum_s=0 sum_cpu=0
n=0
labels=()

start_one() { # label cmd...: runs in the background, at most J at a time
	local i=$n
	labels[i]=$1
	n=$((n + 1))
	shift
	while [ "$(jobs -rp | wc -l)" -ge "$J" ]; do wait -n; done
	(
		s0=$(date +%s%N)
		timeout 600 "$@" >"$log/$i.out" 2>"$log/$i.err"
		echo $? >"$log/$i.rc"
		echo $((($(date +%s%N) - s0) / 1000000)) >"$log/$i.ms"
		# the children's user and system CPU seconds
		times >"$log/$i.times"
	) &
}

report_one() { # index
	local i=$1 out="$log/$1.out" label=${labels[$1]} rc p f s
	rc=$(cat "$log/$i.rc" 2>/dev/null || echo 125)
	p=$(grep -c '^PASS: ' "$out"); f=$(grep -c '^FAIL: ' "$out"); s=$(grep -c '^SKIP: ' "$out")
	grep '^FAIL: ' "$out" | sed "s|^|[$label] |"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "[$label] FAIL: exited with status $rc"; f=1
		tail -n 20 "$log/$i.err" | sed "s|^|[$label]   |"
	elif [ "$rc" -ne 0 ]; then
		tail -n 10 "$log/$i.err" | sed "s|^|[$label]   |"
	fi
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	local sec cpu
	sec=$(awk "BEGIN{print $(cat "$log/$i.ms" 2>/dev/null || echo 0)/1000}")
	cpu=$(tail -n 1 "$log/$i.times" 2>/dev/null |
		awk '{ for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); c += a[1] * 60 + a[2] } } END { print c + 0 }')
	printf '%-28s %4d passed %3d failed %3d skipped %6.1f s (CPU %6.1f s)\n' "$label" "$p" "$f" "$s" "$sec" "$cpu"
	sum_s=$(awk "BEGIN{print $sum_s + $sec}"); sum_cpu=$(awk "BEGIN{print $sum_cpu + $cpu}")
}

# Every program, then started the longest first (the ones named in LONG, in
# that order, measured on a 2-core box; then the rest as listed), so that the
# pool ends together.
LONG="tui/run_golden unit/test_archive cli/hostile tsan/test_replay_fast unit/test_replay_fast
      unit/test_fuzz_regress cli/align conformance cli/manifest_scale cli/containers"
jl=() jc=()
add() { # label cmd...
	jl+=("$1")
	shift
	jc+=("$(printf '%q ' "$@")")
}
for t in "$SAN"/tests/test_*; do
	[ -x "$t" ] && add "unit/$(basename "$t")" "$t"
done
add "conformance" python3 tests/conformance/run.py "$TM_BIN"
for t in tests/cli/*.sh tests/tui/*.sh; do
	[ -f "$t" ] && add "$(basename "$(dirname "$t")")/$(basename "$t" .sh)" bash "$t"
done
if [ -n "$TSAN" ] && [ -x "$TSAN/tests/test_replay_fast" ]; then
	# the parallel member scan under ThreadSanitizer (the inputs a quarter
	# of the size: the ASan run above compares them whole)
	add "tsan/test_replay_fast" env TSAN_OPTIONS=halt_on_error=1:exitcode=66 TM_TEST_SCALE=4 \
		"$TSAN/tests/test_replay_fast"
	# the listing published while it runs, read by another thread
	[ -x "$TSAN/tests/test_listing" ] &&
		add "tsan/test_listing" env TSAN_OPTIONS=halt_on_error=1:exitcode=66 "$TSAN/tests/test_listing"
	add "tsan/cli" env TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
		TM_BIN="$top/$TSAN/tracemerge" bash tests/cli/batch.sh
	# the workbench's per-event details thread (started, superseded, held;
	# events-edit: every event listed and the view built there, an edit
	# superseding it)
	add "tsan/tui" env TSAN_OPTIONS=halt_on_error=1:exitcode=66 TM_BIN="$top/$TSAN/tracemerge" \
		ONLY="details-computing offset-drops keys-enter details-scroll events-edit" bash tests/tui/run_golden.sh
fi
# the fuzz regressions under clang's ASan + UBSan (SKIP without clang)
add "fuzz/clang-regress" bash tests/fuzz/regress.sh "$(dirname "$SAN")/fuzz"
add "layers+man" bash tests/static.sh "$SAN"
for l in $LONG; do
	for k in "${!jl[@]}"; do
		[ "${jl[k]}" = "$l" ] && eval "start_one \"\${jl[k]}\" ${jc[k]}" && unset 'jl[k]'
	done
done
for k in "${!jl[@]}"; do
	eval "start_one \"\${jl[k]}\" ${jc[k]}"
done
wait
for ((i = 0; i < n; i++)); do report_one "$i"; done

printf 'the programs took %.0f s in all (%.0f s of CPU); the run %d s with %d at a time\n' \
	"$sum_s" "$sum_cpu" $(($(date +%s) - t_start)) "$J"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]

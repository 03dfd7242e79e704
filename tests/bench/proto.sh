#!/usr/bin/env bash
# make bench, proto shapes (issue 10's table): for each shape and size, `check`
# against two baselines in the same run - cat (the page-cache ceiling) and
# bench_tm walk (a plain varint walker over every message) - as ratios of CPU
# time (user+sys) with wall time beside them, peak RSS against the budget
# (5% of the input + 32 MiB), and the re-evaluation time of one offset edit.
#   tests/bench/proto.sh [BUILD_DIR]
#   BENCH_MB (default 256) or BENCH_PROTO_SIZES="64 256 1024 2048" (MiB);
#   BENCH_SHAPES="te20 te37 interned seqs ftrace compact"; BENCH_REPS (default 3).
# Uses farm-bench (pairs A/B runs, medians) when installed, else getrusage.
set -u
B=${1:-build/rel}
TM=$B/tracemerge
GEN=$B/tools/bench_tm
SIZES=${BENCH_PROTO_SIZES:-${BENCH_MB:-256}}
SHAPES=${BENCH_SHAPES:-te20 te37 interned seqs ftrace compact}
REPS=${BENCH_REPS:-3}
out=tests/bench/out
mkdir -p "$out"
[ -x "$TM" ] && [ -x "$GEN" ] || { echo "proto bench: build $TM and $GEN first"; exit 1; }

# vs A_CMD B_CMD: prints "cpuA cpuB wallA wallB peakA" (medians, seconds, MiB)
vs() {
	if command -v farm-bench >/dev/null; then
		farm-bench -n "$REPS" --timeout 3600 --vs "$2" -- $1 2>&1 | awk '
			/^A cpu s/ {ca=$4} /^B cpu s/ {cb=$4} /^A wall s/ {wa=$4} /^B wall s/ {wb=$4}
			/^A peak MiB/ {pa=$4} END {print ca, cb, wa, wb, pa}'
	else
		python3 - "$REPS" "$1" "$2" <<'PY'
import resource, subprocess, sys, time, shlex
reps = int(sys.argv[1])
def run(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    subprocess.run(shlex.split(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    w = time.monotonic() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, w, r1.ru_maxrss / 1024)
a = [run(sys.argv[2]) for _ in range(reps)]
b = [run(sys.argv[3]) for _ in range(reps)]
med = lambda xs: sorted(xs)[len(xs) // 2]
print(med([x[0] for x in a]), med([x[0] for x in b]), med([x[1] for x in a]),
      med([x[1] for x in b]), max(x[2] for x in a))
PY
	fi
}

echo "proto shapes: load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $(nproc) cpus"
"$GEN" gen-proto "$out/ref.pftrace" 8 || exit 1
printf '%-9s %6s %9s %9s %8s %8s %9s %9s %10s %10s\n' shape MiB 'B/packet' 'GB/s cpu' 'cpu/cat' 'cpu/walk' 'wall/cat' 'RSS MiB' 'budget MiB' 'edit us'
for mb in $SIZES; do
	for shape in $SHAPES; do
		f="$out/$shape-$mb.pftrace"
		[ -s "$f" ] || "$GEN" gen-shape "$shape" "$f" "$mb" || exit 1
		size=$(stat -c %s "$f")
		packets=$("$GEN" walk "$f" | cut -d' ' -f1)
		cat "$f" >/dev/null
		read -r c_chk c_cat w_chk w_cat peak < <(vs "$TM check $f" "cat $f")
		read -r c_chk2 c_walk _ _ _ < <(vs "$TM check $f" "$GEN walk $f")
		read -r e_med _ _ < <("$GEN" reeval 11 "$out/ref.pftrace" "$f")
		python3 - "$shape" "$size" "$packets" "$c_chk" "$c_cat" "$w_chk" "$w_cat" "$peak" \
			"$c_chk2" "$c_walk" "$e_med" <<'PY'
import sys
shape, size, packets = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
c_chk, c_cat, w_chk, w_cat, peak, c_chk2, c_walk, e = map(float, sys.argv[4:])
r = lambda a, b: "%.1fx" % (a / b) if b > 0 else "n/a"
budget = size * 0.05 / 2**20 + 32
print("%-9s %6.0f %9.1f %9.2f %8s %8s %9s %9.1f %10.1f %10.0f%s" % (
    shape, size / 2**20, size / max(packets, 1), size / c_chk / 1e9 if c_chk else 0,
    r(c_chk, c_cat), r(c_chk2, c_walk), r(w_chk, w_cat), peak, budget, e,
    "" if peak <= budget else "  (over budget)"))
PY
	done
done
echo "targets: cpu/walk <= 2x, cpu/cat <= 6x, TrackEvent >= 1.3 GB/s, RSS within budget, edit < 16000 us"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at end"
